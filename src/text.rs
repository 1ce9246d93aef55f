//! Text helpers shared by every layer.

/// `text` made safe inside XML or HTML, text or a quoted attribute: the five markup
/// characters as entities, and the control characters XML 1.0 does not allow left out.
pub fn escape_markup(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => s.push_str("&amp;"),
            '<' => s.push_str("&lt;"),
            '>' => s.push_str("&gt;"),
            '"' => s.push_str("&quot;"),
            '\'' => s.push_str("&#39;"),
            c if (c as u32) < 0x20 && !matches!(c, '\n' | '\r' | '\t') => {}
            c => s.push(c),
        }
    }
    s
}

/// Levenshtein distance between two names (for "did you mean").
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

/// A span of seconds as a person reads it: "under a second", "about 40 s",
/// "about 12 min", "about 3.5 h", "about 9 days", "about 4 years", and past a
/// million years "more than 10^N years", since nobody can wait that long and the
/// exact digits mean nothing. Not finite or negative reads as "forever".
pub fn duration_words(secs: f64) -> String {
    const MINUTE: f64 = 60.0;
    const HOUR: f64 = 3_600.0;
    const DAY: f64 = 86_400.0;
    const YEAR: f64 = 365.25 * DAY;
    if !secs.is_finite() || secs < 0.0 {
        return "forever".into();
    }
    // Two significant figures below ten, whole numbers above.
    fn amount(x: f64) -> String {
        if x < 10.0 {
            let r = (x * 10.0).round() / 10.0;
            if r.fract() == 0.0 {
                format!("{r:.0}")
            } else {
                format!("{r:.1}")
            }
        } else {
            format!("{:.0}", x.round())
        }
    }
    let plural = |x: f64, one: &str, many: &str| {
        let a = amount(x);
        if a == "1" {
            format!("about 1 {one}")
        } else {
            format!("about {a} {many}")
        }
    };
    if secs < 1.0 {
        "under a second".into()
    } else if secs < 90.0 {
        format!("about {} s", amount(secs))
    } else if secs < 90.0 * MINUTE {
        format!("about {} min", amount(secs / MINUTE))
    } else if secs < 48.0 * HOUR {
        format!("about {} h", amount(secs / HOUR))
    } else if secs < 2.0 * YEAR {
        plural(secs / DAY, "day", "days")
    } else if secs < 1e6 * YEAR {
        plural(secs / YEAR, "year", "years")
    } else {
        format!(
            "more than 10^{} years",
            (secs / YEAR).log10().floor() as i64
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_words_at_every_scale() {
        assert_eq!(duration_words(0.2), "under a second");
        assert_eq!(duration_words(42.4), "about 42 s");
        assert_eq!(duration_words(5.0), "about 5 s");
        assert_eq!(duration_words(600.0), "about 10 min");
        assert_eq!(duration_words(27.0 * 3600.0), "about 27 h");
        assert_eq!(duration_words(3.5 * 3600.0), "about 3.5 h");
        assert_eq!(duration_words(9.0 * 86_400.0), "about 9 days");
        assert_eq!(duration_words(4.0 * 365.25 * 86_400.0), "about 4 years");
        assert_eq!(
            duration_words(2_002_846_712_596_479_972_684_059_492_224_462_252_126_826_406_473_557_047_601_290_310_320_128.0),
            "more than 10^61 years"
        );
        assert_eq!(duration_words(f64::INFINITY), "forever");
        assert_eq!(duration_words(f64::NAN), "forever");
    }

    #[test]
    fn edit_distance_counts_single_character_edits() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("same", "same"), 0);
    }
}
