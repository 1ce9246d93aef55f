//! Text cut, padded, wrapped and grouped to fit a number of columns, and the mark of
//! a selected row.

/// The mark in front of the selected row of a list or tree. The tree's closed and open
/// nodes use `▸` and `▾`, so the selection needs a shape of its own.
pub(crate) const SELECTED_MARK: &str = "› ";

/// `text` cut to `width` columns, ending with `…` when cut.
pub(crate) fn fit(text: &str, width: usize) -> String {
    if ratatui::text::Span::raw(text).width() <= width {
        return text.to_string();
    }
    // Cut by columns, not characters: a wide character takes two.
    let room = width.saturating_sub(1);
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = ratatui::text::Span::raw(c.to_string()).width();
        if used + w > room {
            break;
        }
        used += w;
        out.push(c);
    }
    out.push('…');
    out
}

/// `spans` cut to `width` columns: the span the edge falls in ends with `…`, and those
/// after it are left out.
pub(crate) fn fit_spans(
    spans: Vec<ratatui::text::Span<'_>>,
    width: usize,
) -> Vec<ratatui::text::Span<'_>> {
    let total: usize = spans.iter().map(ratatui::text::Span::width).sum();
    if total <= width {
        return spans;
    }
    let mut out = Vec::new();
    let mut left = width;
    for span in spans {
        let w = span.width();
        if w < left {
            left -= w;
            out.push(span);
            continue;
        }
        out.push(ratatui::text::Span::styled(
            fit(&span.content, left),
            span.style,
        ));
        break;
    }
    out
}

/// How many rows `text` takes wrapped at word edges to `width` columns (a word wider
/// than a row is broken), as a `Paragraph` wrapping without trimming draws it.
pub(crate) fn wrapped_lines(text: &str, width: usize) -> usize {
    let mut lines = 1;
    let mut used = 0;
    for word in text.split_inclusive(' ') {
        let w = ratatui::text::Span::raw(word).width();
        let fits = ratatui::text::Span::raw(word.trim_end()).width();
        if used > 0 && used + fits > width {
            lines += 1;
            used = 0;
        }
        if w > width {
            lines += (used + w - 1) / width;
            used = (used + w) % width;
        } else {
            used += w;
        }
    }
    lines
}

/// `text` in lines of at most `width` columns, broken between words (a word longer
/// than a line is cut).
pub(crate) fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let w = ratatui::text::Line::from(word).width();
        let now = ratatui::text::Line::from(line.as_str()).width();
        if !line.is_empty() && now + 1 + w > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
        while ratatui::text::Line::from(line.as_str()).width() > width {
            let cut: String = line.chars().take(width).collect();
            let rest: String = line.chars().skip(width).collect();
            lines.push(cut);
            line = rest;
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// [`fit`], padded with spaces to `width` columns.
pub(crate) fn fit_pad(text: &str, width: usize) -> String {
    let cut = fit(text, width);
    let used = ratatui::text::Span::raw(cut.as_str()).width();
    format!("{cut}{}", " ".repeat(width.saturating_sub(used)))
}

/// `12345` as `12,345`.
pub(crate) fn grouped(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
