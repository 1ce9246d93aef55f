//! Expectations of a run (`structs-console check FILE --expect EXPECT.toml`): limits on
//! calls, errors, durations and bytes; tools that must or must not be called; argument
//! patterns; order; confirmations answered no; and rules in the filter language. Each
//! gives a [`Verdict`], and the run passes when every one holds.
//!
//! ```toml
//! [calls]
//! max = 200                                  # calls in all (and `min`)
//! tools = { "structs_query_*" = { max = 50 } }
//!
//! [errors]
//! max = 2
//! codes = { "NOT_FOUND" = { max = 1 }, "-32602" = { max = 0 } }
//!
//! [duration]                                 # over the answered calls
//! p50 = "200ms"
//! p95 = "1s"
//! max = "5s"
//!
//! [bytes]
//! total = "2mb"                              # all answers together
//! call = "25k"                               # any one answer
//!
//! [tools]
//! required = ["structs_query_player"]
//! forbidden = ["structs_action_attack*"]
//!
//! [[arguments]]                              # each call of the tool, at the pointer
//! tool = "structs_query_player"
//! pointer = "/player_id"
//! matches = "^1-[0-9]+$"
//!
//! [[order]]                                  # no `then` before the first `first`
//! first = "structs_query_player"
//! then = "structs_action_*"
//!
//! [confirmations]
//! declined = 0                               # rounds answered no, at most
//!
//! [[rule]]                                   # calls the filter matches, at most (or least)
//! name = "no slow queries"
//! filter = "tool:structs_query_* dur>500ms"
//! max = 0
//! ```

use std::collections::BTreeMap;

use serde::Deserialize;

use super::calls::{CallRecord, Run};
use super::filter::{self, Filter, glob};
use crate::text::escape_markup as xml;

/// A limit on a count.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Limit {
    pub max: Option<u64>,
    pub min: Option<u64>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Calls {
    pub max: Option<u64>,
    pub min: Option<u64>,
    /// Per tool glob.
    #[serde(default)]
    pub tools: BTreeMap<String, Limit>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Errors {
    pub max: Option<u64>,
    /// Per error code.
    #[serde(default)]
    pub codes: BTreeMap<String, Limit>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Durations {
    pub p50: Option<String>,
    pub p95: Option<String>,
    pub max: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Bytes {
    pub total: Option<String>,
    pub call: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Tools {
    #[serde(default)]
    pub required: Vec<String>,
    #[serde(default)]
    pub forbidden: Vec<String>,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Argument {
    pub tool: String,
    /// A JSON Pointer into the arguments (`/player_id`).
    pub pointer: String,
    /// A regular expression the value (a string, or a number's digits) must match.
    pub matches: String,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Order {
    pub first: String,
    pub then: String,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Confirmations {
    pub declined: Option<u64>,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    pub name: Option<String>,
    pub filter: String,
    pub max: Option<u64>,
    pub min: Option<u64>,
}

/// An expectations file.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Expectations {
    #[serde(default)]
    pub calls: Calls,
    #[serde(default)]
    pub errors: Errors,
    #[serde(default)]
    pub duration: Durations,
    #[serde(default)]
    pub bytes: Bytes,
    #[serde(default)]
    pub tools: Tools,
    #[serde(default)]
    pub arguments: Vec<Argument>,
    #[serde(default)]
    pub order: Vec<Order>,
    #[serde(default)]
    pub confirmations: Confirmations,
    #[serde(default, rename = "rule")]
    pub rules: Vec<Rule>,
}

/// What one expectation found.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// Where it is in the file: `calls.max`, `tools.forbidden`, `rule "no slow"`.
    pub name: String,
    pub passed: bool,
    /// What was found, against what was expected.
    pub message: String,
    /// The calls that broke it (their log line numbers), a few at most.
    pub lines: Vec<u64>,
}

/// Lines named per broken expectation, at most.
const LINES_NAMED: usize = 5;

impl Expectations {
    /// Reads an expectations file's text, checking every pattern, duration and size.
    ///
    /// # Errors
    ///
    /// What does not read, and where.
    pub fn parse(text: &str) -> Result<(Expectations, Vec<Filter>), String> {
        let e: Expectations = toml::from_str(text).map_err(|e| e.to_string())?;
        for d in [&e.duration.p50, &e.duration.p95, &e.duration.max]
            .into_iter()
            .flatten()
        {
            filter::duration_ms(d).map_err(|m| format!("[duration]: {m}"))?;
        }
        for b in [&e.bytes.total, &e.bytes.call].into_iter().flatten() {
            filter::bytes(b).map_err(|m| format!("[bytes]: {m}"))?;
        }
        for a in &e.arguments {
            regex::Regex::new(&a.matches)
                .map_err(|m| format!("[[arguments]] of {}: {m}", a.tool))?;
            if !(a.pointer.is_empty() || a.pointer.starts_with('/')) {
                return Err(format!(
                    "[[arguments]] of {}: the pointer {:?} starts with /",
                    a.tool, a.pointer
                ));
            }
        }
        let mut filters = e
            .rules
            .iter()
            .map(|r| Filter::parse(&r.filter).map_err(|m| format!("[[rule]] {:?}: {m}", r.filter)))
            .collect::<Result<Vec<_>, _>>()?;
        let mut all: Vec<String> = Vec::new();
        for f in &filters {
            for n in &f.needles {
                if !all.contains(n) {
                    all.push(n.clone());
                }
            }
        }
        if all.len() > super::calls::MAX_NEEDLES {
            return Err(format!(
                "the rules look for {} words; at most {} in all",
                all.len(),
                super::calls::MAX_NEEDLES
            ));
        }
        for f in &mut filters {
            f.rebase(&all);
        }
        Ok((e, filters))
    }

    /// The words the rules' filters look for, for the run's reader.
    pub fn needles(filters: &[Filter]) -> Vec<String> {
        filters
            .first()
            .map(|f| f.needles.clone())
            .unwrap_or_default()
    }

    /// Checks `run` (`filters`: the rules', as [`Self::parse`] gave them).
    pub fn check(&self, run: &Run, filters: &[Filter]) -> Vec<Verdict> {
        let calls = &run.calls;
        let mut out = Vec::new();
        let all: Vec<&CallRecord> = calls.iter().collect();
        limit(
            &mut out,
            "calls",
            &self.calls.max,
            &self.calls.min,
            &all,
            "calls",
        );
        for (pattern, l) in &self.calls.tools {
            let of: Vec<&CallRecord> = calls.iter().filter(|c| glob(pattern, &c.tool)).collect();
            let name = format!("calls.tools.{pattern:?}");
            limit(
                &mut out,
                &name,
                &l.max,
                &l.min,
                &of,
                &format!("calls of {pattern}"),
            );
        }
        let errors: Vec<&CallRecord> = calls.iter().filter(|c| c.outcome.is_error()).collect();
        limit(
            &mut out,
            "errors",
            &self.errors.max,
            &None,
            &errors,
            "errors",
        );
        for (code, l) in &self.errors.codes {
            let of: Vec<&CallRecord> = errors
                .iter()
                .copied()
                .filter(|c| {
                    c.outcome
                        .code()
                        .is_some_and(|k| k.eq_ignore_ascii_case(code))
                })
                .collect();
            let name = format!("errors.codes.{code:?}");
            limit(
                &mut out,
                &name,
                &l.max,
                &l.min,
                &of,
                &format!("{code} errors"),
            );
        }
        self.durations(&mut out, calls);
        self.sizes(&mut out, calls);
        self.tools(&mut out, calls);
        for a in &self.arguments {
            out.push(argument(a, calls));
        }
        for o in &self.order {
            out.push(order(o, calls));
        }
        if let Some(max) = self.confirmations.declined {
            let no: Vec<&CallRecord> = calls.iter().filter(|c| c.declined > 0).collect();
            let n: u64 = no.iter().map(|c| u64::from(c.declined)).sum();
            out.push(Verdict {
                name: "confirmations.declined".into(),
                passed: n <= max,
                message: format!("rounds answered no: {n}, at most {max} expected"),
                lines: lines(&no),
            });
        }
        for (r, f) in self.rules.iter().zip(filters) {
            let of: Vec<&CallRecord> = calls.iter().filter(|c| f.matches(*c)).collect();
            let name = format!("rule {:?}", r.name.as_deref().unwrap_or(&r.filter));
            let what = format!("calls matching {:?}", r.filter);
            limit(&mut out, &name, &r.max, &r.min, &of, &what);
        }
        out
    }

    fn durations(&self, out: &mut Vec<Verdict>, calls: &[CallRecord]) {
        let mut took: Vec<(f64, u64)> = calls
            .iter()
            .filter_map(|c| c.duration_ms.map(|d| (d, c.line)))
            .collect();
        took.sort_by(|x, y| x.0.total_cmp(&y.0));
        let at = |q: f64| -> Option<f64> {
            let last = took.len().checked_sub(1)?;
            Some(took[((last as f64) * q).round() as usize].0)
        };
        let d = &self.duration;
        for (name, text, q) in [
            ("p50", &d.p50, 0.5),
            ("p95", &d.p95, 0.95),
            ("max", &d.max, 1.0),
        ] {
            let Some(text) = text else { continue };
            let limit = filter::duration_ms(text).unwrap_or(f64::INFINITY);
            let found = at(q).unwrap_or(0.0);
            let over: Vec<u64> = took
                .iter()
                .rev()
                .take_while(|(d, _)| *d > limit)
                .map(|(_, l)| *l)
                .take(LINES_NAMED)
                .collect();
            out.push(Verdict {
                name: format!("duration.{name}"),
                passed: found <= limit,
                message: format!(
                    "{name} {}, at most {} expected",
                    super::compare::millis(found),
                    super::compare::millis(limit)
                ),
                lines: if found <= limit { Vec::new() } else { over },
            });
        }
    }

    fn sizes(&self, out: &mut Vec<Verdict>, calls: &[CallRecord]) {
        if let Some(text) = &self.bytes.total {
            let limit = filter::bytes(text).unwrap_or(f64::INFINITY);
            let total: u64 = calls.iter().map(|c| c.bytes).sum();
            out.push(Verdict {
                name: "bytes.total".into(),
                passed: total as f64 <= limit,
                message: format!(
                    "{} in all, at most {} expected",
                    super::compare::size(total),
                    super::compare::size(limit as u64)
                ),
                lines: Vec::new(),
            });
        }
        if let Some(text) = &self.bytes.call {
            let limit = filter::bytes(text).unwrap_or(f64::INFINITY);
            let over: Vec<&CallRecord> = calls.iter().filter(|c| c.bytes as f64 > limit).collect();
            let biggest = calls.iter().map(|c| c.bytes).max().unwrap_or(0);
            out.push(Verdict {
                name: "bytes.call".into(),
                passed: over.is_empty(),
                message: format!(
                    "answers over {}: {} (the biggest {})",
                    super::compare::size(limit as u64),
                    over.len(),
                    super::compare::size(biggest)
                ),
                lines: lines(&over),
            });
        }
    }

    fn tools(&self, out: &mut Vec<Verdict>, calls: &[CallRecord]) {
        for pattern in &self.tools.required {
            let n = calls.iter().filter(|c| glob(pattern, &c.tool)).count();
            out.push(Verdict {
                name: format!("tools.required {pattern:?}"),
                passed: n > 0,
                message: format!("calls of {pattern}: {n}, at least 1 expected"),
                lines: Vec::new(),
            });
        }
        for pattern in &self.tools.forbidden {
            let of: Vec<&CallRecord> = calls.iter().filter(|c| glob(pattern, &c.tool)).collect();
            out.push(Verdict {
                name: format!("tools.forbidden {pattern:?}"),
                passed: of.is_empty(),
                message: format!("calls of {pattern}: {}, none expected", of.len()),
                lines: lines(&of),
            });
        }
    }
}

/// The line numbers of `calls`, a few at most.
fn lines(calls: &[&CallRecord]) -> Vec<u64> {
    calls.iter().take(LINES_NAMED).map(|c| c.line).collect()
}

/// A count's verdict against `max` and `min` (none when neither is set).
fn limit(
    out: &mut Vec<Verdict>,
    name: &str,
    max: &Option<u64>,
    min: &Option<u64>,
    of: &[&CallRecord],
    what: &str,
) {
    let n = of.len() as u64;
    if let Some(max) = max {
        out.push(Verdict {
            name: format!("{name}.max"),
            passed: n <= *max,
            message: format!("{what}: {n}, at most {max} expected"),
            lines: if n <= *max {
                Vec::new()
            } else {
                lines(&of[*max as usize..])
            },
        });
    }
    if let Some(min) = min {
        out.push(Verdict {
            name: format!("{name}.min"),
            passed: n >= *min,
            message: format!("{what}: {n}, at least {min} expected"),
            lines: Vec::new(),
        });
    }
}

fn argument(a: &Argument, calls: &[CallRecord]) -> Verdict {
    let pattern =
        regex::Regex::new(&a.matches).unwrap_or_else(|_| regex::Regex::new("").expect("empty"));
    let broke: Vec<&CallRecord> = calls
        .iter()
        .filter(|c| glob(&a.tool, &c.tool))
        .filter(|c| {
            let text = match c.arguments.pointer(&a.pointer) {
                Some(serde_json::Value::String(s)) => s.clone(),
                Some(v) => v.to_string(),
                None => return true,
            };
            !pattern.is_match(&text)
        })
        .collect();
    Verdict {
        name: format!("arguments {}{}", a.tool, a.pointer),
        passed: broke.is_empty(),
        message: match broke.first() {
            None => format!(
                "every {} call's {} matches {}",
                a.tool, a.pointer, a.matches
            ),
            Some(c) => format!(
                "{} calls whose {} does not match {} (the first: {})",
                broke.len(),
                a.pointer,
                a.matches,
                c.arguments
                    .pointer(&a.pointer)
                    .map_or_else(|| "absent".to_string(), |v| v.to_string())
            ),
        },
        lines: lines(&broke),
    }
}

fn order(o: &Order, calls: &[CallRecord]) -> Verdict {
    let first = calls
        .iter()
        .position(|c| glob(&o.first, &c.tool))
        .unwrap_or(calls.len());
    let early: Vec<&CallRecord> = calls[..first]
        .iter()
        .filter(|c| glob(&o.then, &c.tool))
        .collect();
    Verdict {
        name: format!("order {} before {}", o.first, o.then),
        passed: early.is_empty(),
        message: match early.first() {
            None => format!("no {} before {}", o.then, o.first),
            Some(c) => format!(
                "{} called before any {} (calls: {})",
                c.tool,
                o.first,
                early.len()
            ),
        },
        lines: lines(&early),
    }
}

/// The verdicts as `check` prints them: each broken one, then the count.
pub fn render(verdicts: &[Verdict], log: &str) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let broken: Vec<&Verdict> = verdicts.iter().filter(|v| !v.passed).collect();
    for v in verdicts {
        let mark = if v.passed { "ok  " } else { "FAIL" };
        let _ = write!(out, "{mark} {}: {}", v.name, v.message);
        if !v.lines.is_empty() {
            let lines: Vec<String> = v.lines.iter().map(u64::to_string).collect();
            let _ = write!(out, " (log lines {})", lines.join(", "));
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "\n{log}: {} of {} expectations held{}",
        verdicts.len() - broken.len(),
        verdicts.len(),
        if broken.is_empty() { "" } else { "; broken:" }
    );
    for v in broken {
        let _ = writeln!(out, "  {}", v.name);
    }
    out
}

/// The verdicts as JUnit XML, one test case each, a broken one with its `<failure>`:
/// the report GitHub, GitLab and Jenkins show.
pub fn junit(verdicts: &[Verdict], log: &str, timestamp: &str) -> String {
    use std::fmt::Write as _;
    let failures = verdicts.iter().filter(|v| !v.passed).count();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"structs-console check\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" time=\"0\">",
        verdicts.len()
    );
    let _ = writeln!(
        out,
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"0\" time=\"0\" timestamp=\"{}\" hostname=\"localhost\" id=\"0\" package=\"structs-console\">",
        xml(log),
        verdicts.len(),
        xml(timestamp)
    );
    out.push_str("    <properties/>\n");
    for v in verdicts {
        let _ = write!(
            out,
            "    <testcase name=\"{}\" classname=\"expectations\" time=\"0\"",
            xml(&v.name)
        );
        if v.passed {
            out.push_str("/>\n");
            continue;
        }
        let lines: Vec<String> = v.lines.iter().map(u64::to_string).collect();
        let _ = writeln!(
            out,
            ">\n      <failure message=\"{}\" type=\"expectation\">{}{}</failure>\n    </testcase>",
            xml(&v.message),
            xml(&v.message),
            if lines.is_empty() {
                String::new()
            } else {
                xml(&format!("\nlog lines {}", lines.join(", ")))
            }
        );
    }
    out.push_str("    <system-out/>\n    <system-err/>\n  </testsuite>\n</testsuites>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::calls::read_from;

    fn line(call: u64, ms: u64, tool: &str, args: &str, answer: &str) -> String {
        format!(
            "{{\"v\":4,\"ts\":\"2026-12-01T10:00:{:02}.000Z\",\"session\":\"s\",\"type\":\"request\",\"call\":{call},\"tool\":\"{tool}\",\"arguments\":{args}}}\n\
             {{\"v\":4,\"ts\":\"2026-12-01T10:00:{:02}.000Z\",\"session\":\"s\",\"type\":\"response\",\"call\":{call},\"tool\":\"{tool}\",\"duration_ms\":{ms},{answer}}}\n",
            call, call
        )
    }

    fn run() -> Run {
        let log = [
            line(
                1,
                10,
                "structs_action_attack",
                r#"{"target":"5-1"}"#,
                r#""result":{}"#,
            ),
            line(
                2,
                20,
                "structs_query_player",
                r#"{"player_id":"1-1"}"#,
                r#""result":{}"#,
            ),
            line(
                3,
                900,
                "structs_query_player",
                r#"{"player_id":"x"}"#,
                r#""error":{"error":{"code":"NOT_FOUND"}}"#,
            ),
        ]
        .concat();
        read_from(log.as_bytes(), &[]).unwrap()
    }

    fn check(toml: &str) -> Vec<Verdict> {
        let (e, filters) = Expectations::parse(toml).unwrap();
        e.check(&run(), &filters)
    }

    fn broken(toml: &str) -> Vec<String> {
        check(toml)
            .into_iter()
            .filter(|v| !v.passed)
            .map(|v| v.name)
            .collect()
    }

    #[test]
    fn limits_on_calls_errors_durations_and_bytes() {
        assert_eq!(broken("[calls]\nmax = 3\nmin = 1"), Vec::<String>::new());
        assert_eq!(broken("[calls]\nmax = 2"), ["calls.max"]);
        let v = check("[calls]\nmax = 2");
        assert_eq!(v[0].lines, [5], "the call past the limit");
        assert_eq!(
            broken("[calls.tools]\n\"structs_query_*\" = { max = 1 }"),
            ["calls.tools.\"structs_query_*\".max"]
        );
        assert_eq!(broken("[errors]\nmax = 0"), ["errors.max"]);
        assert_eq!(
            broken("[errors.codes]\nNOT_FOUND = { max = 1 }\n\"-32602\" = { max = 0 }"),
            Vec::<String>::new()
        );
        assert_eq!(
            broken("[duration]\np50 = \"20ms\"\nmax = \"500ms\""),
            ["duration.max"]
        );
        assert_eq!(broken("[duration]\np50 = \"19ms\""), ["duration.p50"]);
        assert_eq!(
            broken("[bytes]\ncall = \"100\"\ntotal = \"1mb\""),
            ["bytes.call"]
        );
    }

    #[test]
    fn tools_arguments_order_and_rules() {
        assert_eq!(
            broken(
                "[tools]\nrequired = [\"structs_query_*\", \"structs_plan_*\"]\nforbidden = [\"structs_action_*\"]"
            ),
            [
                "tools.required \"structs_plan_*\"",
                "tools.forbidden \"structs_action_*\""
            ]
        );
        let v = check(
            "[[arguments]]\ntool = \"structs_query_player\"\npointer = \"/player_id\"\nmatches = \"^1-[0-9]+$\"",
        );
        assert!(!v[0].passed);
        assert!(v[0].message.contains("\"x\""), "{}", v[0].message);
        assert_eq!(v[0].lines, [5]);
        let v = check("[[order]]\nfirst = \"structs_query_player\"\nthen = \"structs_action_*\"");
        assert!(!v[0].passed, "the attack came first");
        assert_eq!(v[0].lines, [1]);
        assert_eq!(
            broken(
                "[[rule]]\nname = \"no slow queries\"\nfilter = \"tool:structs_query_* dur>500ms\"\nmax = 0"
            ),
            ["rule \"no slow queries\".max"]
        );
        assert_eq!(
            broken("[confirmations]\ndeclined = 0"),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_file_that_does_not_read_says_where() {
        let e = Expectations::parse("[calls]\nmaximum = 3").unwrap_err();
        assert!(e.contains("maximum"), "{e}");
        let e = Expectations::parse("[duration]\np50 = \"fast\"").unwrap_err();
        assert!(e.contains("[duration]"), "{e}");
        let e = Expectations::parse("[[rule]]\nfilter = \"colour:red\"").unwrap_err();
        assert!(e.contains("colour"), "{e}");
        let e =
            Expectations::parse("[[arguments]]\ntool = \"t\"\npointer = \"/a\"\nmatches = \"(\"")
                .unwrap_err();
        assert!(e.contains("[[arguments]]"), "{e}");
    }

    #[test]
    fn junit_names_each_expectation_and_each_failure() {
        let v = check("[calls]\nmax = 2\n[errors]\nmax = 5");
        let x = junit(&v, "a<b>.jsonl", "2026-12-01T10:00:00");
        assert!(x.contains("tests=\"2\" failures=\"1\""), "{x}");
        assert!(x.contains("name=\"a&lt;b&gt;.jsonl\""), "{x}");
        assert!(
            x.contains("<testcase name=\"errors.max\" classname=\"expectations\" time=\"0\"/>"),
            "{x}"
        );
        assert!(
            x.contains("<failure message=\"calls: 3, at most 2 expected\""),
            "{x}"
        );
        let text = render(&v, "a.jsonl");
        assert!(
            text.contains("FAIL calls.max: calls: 3, at most 2 expected (log lines 5)"),
            "{text}"
        );
        assert!(text.contains("1 of 2 expectations held; broken:"), "{text}");
    }
}
