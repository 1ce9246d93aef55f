//! The one filter language of recorded and watched calls: `diff`, `check`, `watch
//! --filter`, and the Live and Replay tabs (after `/`).
//!
//! A filter is terms separated by spaces; a call matches when it matches every term. A
//! term with `-` before it matches the calls it would not. Values with spaces are quoted
//! (`text:"not found"`), and a comma gives choices (`tool:a,b`).
//!
//! | term | matches |
//! |---|---|
//! | `tool:GLOB` | the tool (or for another request its name, `prompts/get next`); `*` any run, `?` one character |
//! | `method:GLOB` | the request's method (`tools/call`, `prompts/get`, …) |
//! | `status:ok` / `error` / `unanswered` / `injected` / `held` | how the call ended; `injected`: answered by a rule or a breakpoint; `held`: held at a breakpoint now (the Live tab) |
//! | `code:CODE` | an error's code (`NOT_FOUND`, `-32602`) |
//! | `dur>200ms`, `dur<=1s`, `dur=5ms` | the duration (`us`, `ms`, `s`, `m`; a bare number is ms) |
//! | `bytes>10k`, `bytes<2mb` | the answer's size (`k`/`kb` = 1,000, `m`/`mb` = 1,000,000) |
//! | `rounds>0`, `declined>0` | rounds of input, and those answered no |
//! | `text:WORD`, or a bare `WORD` | the call's lines hold the word (any case when it is all lowercase) |

use super::calls::{CallRecord, Outcome};

/// A comparison of a number.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cmp {
    Lt,
    Le,
    Eq,
    Ge,
    Gt,
}

impl Cmp {
    fn holds(self, value: f64, limit: f64) -> bool {
        match self {
            Cmp::Lt => value < limit,
            Cmp::Le => value <= limit,
            Cmp::Eq => (value - limit).abs() < 1e-9,
            Cmp::Ge => value >= limit,
            Cmp::Gt => value > limit,
        }
    }
}

/// How a call ended, as `status:` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Ok,
    Error,
    Unanswered,
    Injected,
    /// Held at a breakpoint now.
    Held,
}

/// One test of a term.
#[derive(Debug, Clone, PartialEq)]
pub enum Test {
    Tool(Vec<String>),
    Method(Vec<String>),
    Status(Vec<Status>),
    Code(Vec<String>),
    Duration(Cmp, f64),
    Bytes(Cmp, f64),
    Rounds(Cmp, f64),
    Declined(Cmp, f64),
    /// The index of the word in [`Filter::needles`].
    Text(usize),
}

/// A term: a test, maybe negated.
#[derive(Debug, Clone, PartialEq)]
pub struct Term {
    pub not: bool,
    pub test: Test,
}

/// A parsed filter. The empty filter matches every call.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Filter {
    pub terms: Vec<Term>,
    /// The words of its `text:` terms, for a reader to look for.
    pub needles: Vec<String>,
    source: String,
}

/// What a filter asks of a call: the run's [`CallRecord`], or a tab's row.
pub trait Subject {
    fn tool(&self) -> &str;
    fn method(&self) -> &str;
    fn status(&self) -> Status;
    fn injected(&self) -> bool;
    /// Held at a breakpoint now (a call of a live feed).
    fn held(&self) -> bool {
        false
    }
    fn code(&self) -> Option<&str>;
    fn duration_ms(&self) -> Option<f64>;
    fn bytes(&self) -> Option<u64>;
    fn rounds(&self) -> u32;
    fn declined(&self) -> u32;
    /// Whether the call's lines hold needle `i`, `word`.
    fn holds(&self, i: usize, word: &str) -> bool;
}

impl Subject for CallRecord {
    fn tool(&self) -> &str {
        &self.tool
    }
    fn method(&self) -> &str {
        &self.method
    }
    fn status(&self) -> Status {
        match self.outcome {
            Outcome::Ok => Status::Ok,
            Outcome::Error(_) => Status::Error,
            Outcome::Unanswered => Status::Unanswered,
        }
    }
    fn injected(&self) -> bool {
        self.injected.is_some()
    }
    fn code(&self) -> Option<&str> {
        self.outcome.code()
    }
    fn duration_ms(&self) -> Option<f64> {
        self.duration_ms
    }
    fn bytes(&self) -> Option<u64> {
        Some(self.bytes)
    }
    fn rounds(&self) -> u32 {
        self.rounds
    }
    fn declined(&self) -> u32 {
        self.declined
    }
    fn holds(&self, i: usize, _word: &str) -> bool {
        i < 64 && self.text & (1 << i) != 0
    }
}

impl Filter {
    /// Parses `text`.
    ///
    /// # Errors
    ///
    /// A message naming the term that does not read and what would.
    pub fn parse(text: &str) -> Result<Filter, String> {
        let mut filter = Filter {
            source: text.trim().to_string(),
            ..Filter::default()
        };
        for word in split(text)? {
            let (not, body) = match word.strip_prefix('-') {
                Some(rest) if !rest.is_empty() => (true, rest.to_string()),
                _ => (false, word.clone()),
            };
            let test = filter.test(&body).map_err(|e| format!("{word:?}: {e}"))?;
            filter.terms.push(Term { not, test });
        }
        Ok(filter)
    }

    /// The filter as it was written.
    pub fn source(&self) -> &str {
        &self.source
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// Whether `call` matches every term.
    pub fn matches(&self, call: &impl Subject) -> bool {
        self.terms.iter().all(|t| self.term(t, call) != t.not)
    }

    fn term(&self, term: &Term, call: &impl Subject) -> bool {
        let number =
            |cmp: Cmp, limit: f64, value: Option<f64>| value.is_some_and(|v| cmp.holds(v, limit));
        match &term.test {
            Test::Tool(globs) => globs.iter().any(|g| glob(g, call.tool())),
            Test::Method(globs) => globs.iter().any(|g| glob(g, call.method())),
            Test::Status(wanted) => wanted.iter().any(|s| match s {
                Status::Injected => call.injected(),
                Status::Held => call.held(),
                s => *s == call.status(),
            }),
            Test::Code(codes) => call
                .code()
                .is_some_and(|c| codes.iter().any(|w| w.eq_ignore_ascii_case(c))),
            Test::Duration(cmp, ms) => number(*cmp, *ms, call.duration_ms()),
            Test::Bytes(cmp, n) => number(*cmp, *n, call.bytes().map(|b| b as f64)),
            Test::Rounds(cmp, n) => number(*cmp, *n, Some(f64::from(call.rounds()))),
            Test::Declined(cmp, n) => number(*cmp, *n, Some(f64::from(call.declined()))),
            Test::Text(i) => self.needles.get(*i).is_some_and(|w| call.holds(*i, w)),
        }
    }

    fn test(&mut self, body: &str) -> Result<Test, String> {
        if let Some((key, value)) = body.split_once(':') {
            let choices = || -> Result<Vec<String>, String> {
                let v: Vec<String> = value
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect();
                if v.is_empty() {
                    return Err(format!("{key}: wants a value"));
                }
                Ok(v)
            };
            return match key {
                "tool" => Ok(Test::Tool(choices()?)),
                "method" => Ok(Test::Method(choices()?)),
                "code" => Ok(Test::Code(choices()?)),
                "status" => choices()?
                    .iter()
                    .map(|s| status(s))
                    .collect::<Result<_, _>>()
                    .map(Test::Status),
                "text" => self.needle(value),
                _ => Err(format!(
                    "no key {key:?}: use tool:, method:, status:, code: or text:"
                )),
            };
        }
        let at = body.find(['<', '>', '=']);
        let Some(at) = at.filter(|&at| at > 0) else {
            return self.needle(body);
        };
        let (key, rest) = body.split_at(at);
        let (cmp, value) = if let Some(v) = rest.strip_prefix("<=") {
            (Cmp::Le, v)
        } else if let Some(v) = rest.strip_prefix(">=") {
            (Cmp::Ge, v)
        } else if let Some(v) = rest.strip_prefix('<') {
            (Cmp::Lt, v)
        } else if let Some(v) = rest.strip_prefix('>') {
            (Cmp::Gt, v)
        } else {
            (Cmp::Eq, &rest[1..])
        };
        match key {
            "dur" | "duration" => Ok(Test::Duration(cmp, duration_ms(value)?)),
            "bytes" | "size" => Ok(Test::Bytes(cmp, bytes(value)?)),
            "rounds" => Ok(Test::Rounds(cmp, count(value)?)),
            "declined" => Ok(Test::Declined(cmp, count(value)?)),
            _ => Err(format!(
                "no number {key:?}: use dur, bytes, rounds or declined"
            )),
        }
    }

    /// Numbers this filter's words as they are in `all` (a list holding each of them,
    /// which several filters read by one reader share).
    pub fn rebase(&mut self, all: &[String]) {
        let at = |word: &String| all.iter().position(|w| w == word).unwrap_or(usize::MAX);
        for t in &mut self.terms {
            if let Test::Text(i) = &mut t.test {
                *i = at(&self.needles[*i]);
            }
        }
        self.needles = all.to_vec();
    }

    fn needle(&mut self, word: &str) -> Result<Test, String> {
        if word.is_empty() {
            return Err("text: wants a word".into());
        }
        if let Some(i) = self.needles.iter().position(|n| n == word) {
            return Ok(Test::Text(i));
        }
        if self.needles.len() >= super::calls::MAX_NEEDLES {
            return Err(format!(
                "at most {} words to look for",
                super::calls::MAX_NEEDLES
            ));
        }
        self.needles.push(word.to_string());
        Ok(Test::Text(self.needles.len() - 1))
    }
}

/// The words of `text`, split at spaces outside double quotes (which are taken away).
fn split(text: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in text.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            c if c.is_whitespace() && !quoted => {
                if any {
                    words.push(std::mem::take(&mut word));
                }
                any = false;
            }
            c => {
                word.push(c);
                any = true;
            }
        }
    }
    if quoted {
        return Err("a quote is not closed".into());
    }
    if any {
        words.push(word);
    }
    Ok(words)
}

fn status(s: &str) -> Result<Status, String> {
    match s {
        "ok" => Ok(Status::Ok),
        "error" | "err" | "failed" => Ok(Status::Error),
        "unanswered" | "pending" => Ok(Status::Unanswered),
        "injected" => Ok(Status::Injected),
        "held" => Ok(Status::Held),
        _ => Err(format!(
            "no status {s:?}: use ok, error, unanswered, injected or held"
        )),
    }
}

/// A number and its unit's suffix.
fn number_and_unit(text: &str) -> Result<(f64, String), String> {
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let n: f64 = text[..end]
        .parse()
        .map_err(|_| format!("{text:?} is not a number"))?;
    Ok((n, text[end..].to_ascii_lowercase()))
}

/// A duration in milliseconds: `200ms`, `1.5s`, `300us`, `2m`, `200` (ms).
pub fn duration_ms(text: &str) -> Result<f64, String> {
    let (n, unit) = number_and_unit(text)?;
    let scale = match unit.as_str() {
        "" | "ms" => 1.0,
        "us" | "µs" => 1e-3,
        "s" => 1e3,
        "m" | "min" => 60e3,
        _ => return Err(format!("{text:?}: a duration's unit is us, ms, s or m")),
    };
    Ok(n * scale)
}

/// A size in bytes: `10k`, `2mb`, `512`, `1.5kb`.
pub fn bytes(text: &str) -> Result<f64, String> {
    let (n, unit) = number_and_unit(text)?;
    let scale = match unit.as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "m" | "mb" => 1e6,
        "g" | "gb" => 1e9,
        _ => return Err(format!("{text:?}: a size's unit is b, k, m or g")),
    };
    Ok(n * scale)
}

fn count(text: &str) -> Result<f64, String> {
    text.parse::<u32>()
        .map(f64::from)
        .map_err(|_| format!("{text:?} is not a count"))
}

/// Whether `name` matches `pattern`, where `*` is any run of characters and `?` one.
pub fn glob(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ni));
            pi += 1;
        } else if let Some((sp, sn)) = star {
            pi = sp + 1;
            ni = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(tool: &str, outcome: Outcome, ms: f64, bytes: u64) -> CallRecord {
        CallRecord {
            session: 0,
            call: 1,
            line: 1,
            method: "tools/call".into(),
            tool: tool.into(),
            arguments: json!({}),
            at_ms: Some(0.0),
            duration_ms: Some(ms),
            bytes,
            outcome,
            rounds: 0,
            declined: 0,
            task_updates: 0,
            injected: None,
            text: 0,
        }
    }

    #[test]
    fn globs_match_runs_and_single_characters() {
        assert!(glob("structs_query_*", "structs_query_player"));
        assert!(glob("*player", "structs_query_player"));
        assert!(glob("s?ructs_*_p*r", "structs_query_player"));
        assert!(glob("*", ""));
        assert!(!glob("structs_action_*", "structs_query_player"));
        assert!(!glob("structs_query", "structs_query_player"));
        assert!(glob("a*b*c", "aXXbYYbZc"));
        assert!(!glob("a*b*c", "aXXbYY"));
    }

    #[test]
    fn every_term_must_match_and_a_dash_turns_one_round() {
        let f = Filter::parse("tool:structs_query_* status:error dur>200ms bytes>10k").unwrap();
        let slow_error = call(
            "structs_query_player",
            Outcome::Error("NOT_FOUND".into()),
            250.0,
            20_000,
        );
        assert!(f.matches(&slow_error));
        let fast = call(
            "structs_query_player",
            Outcome::Error("NOT_FOUND".into()),
            150.0,
            20_000,
        );
        assert!(!f.matches(&fast));
        let small = call(
            "structs_query_player",
            Outcome::Error("NOT_FOUND".into()),
            250.0,
            9_999,
        );
        assert!(!f.matches(&small));
        let not_query = Filter::parse("-tool:structs_query_*").unwrap();
        assert!(!not_query.matches(&slow_error));
        assert!(not_query.matches(&call("structs_action_attack", Outcome::Ok, 1.0, 1)));
        let codes = Filter::parse("code:not_found,-32602").unwrap();
        assert!(codes.matches(&slow_error));
        assert!(!codes.matches(&call("x", Outcome::Ok, 1.0, 1)));
        assert!(Filter::parse("").unwrap().matches(&fast));
        let tools = Filter::parse("tool:a,b").unwrap();
        assert!(tools.matches(&call("b", Outcome::Ok, 1.0, 1)));
        assert!(!tools.matches(&call("c", Outcome::Ok, 1.0, 1)));
    }

    #[test]
    fn words_are_needles_a_reader_marks_and_quotes_keep_spaces() {
        let f = Filter::parse(r#"text:"not found" Alice -text:bob"#).unwrap();
        assert_eq!(f.needles, ["not found", "Alice", "bob"]);
        let mut c = call("x", Outcome::Ok, 1.0, 1);
        c.text = 0b011;
        assert!(f.matches(&c));
        c.text = 0b111;
        assert!(!f.matches(&c));
    }

    #[test]
    fn units_read_as_people_write_them() {
        assert_eq!(duration_ms("200ms").unwrap(), 200.0);
        assert_eq!(duration_ms("1.5s").unwrap(), 1500.0);
        assert_eq!(duration_ms("300us").unwrap(), 0.3);
        assert_eq!(duration_ms("2m").unwrap(), 120_000.0);
        assert_eq!(duration_ms("7").unwrap(), 7.0);
        assert_eq!(bytes("10k").unwrap(), 10_000.0);
        assert_eq!(bytes("2MB").unwrap(), 2_000_000.0);
        let f = Filter::parse("dur<=5ms rounds>0 declined=1").unwrap();
        let mut c = call("x", Outcome::Ok, 5.0, 1);
        assert!(!f.matches(&c));
        c.rounds = 2;
        c.declined = 1;
        assert!(f.matches(&c));
    }

    #[test]
    fn a_term_that_does_not_read_is_named_with_what_would() {
        let e = Filter::parse("tool:x colour:red").unwrap_err();
        assert!(e.contains("\"colour:red\"") && e.contains("tool:"), "{e}");
        let e = Filter::parse("dur>fast").unwrap_err();
        assert!(e.contains("not a number"), "{e}");
        let e = Filter::parse("dur>5h").unwrap_err();
        assert!(e.contains("us, ms, s or m"), "{e}");
        let e = Filter::parse("status:weird").unwrap_err();
        assert!(e.contains("ok, error"), "{e}");
        let e = Filter::parse("speed>5").unwrap_err();
        assert!(e.contains("dur, bytes"), "{e}");
        assert!(Filter::parse("text:\"open").unwrap_err().contains("quote"));
        assert!(Filter::parse("tool:").is_err());
    }
}
