//! Two runs compared (`structs-console diff A B`): the calls aligned by sequence, as a
//! text diff aligns lines, with what each pair did; and a table per tool of calls,
//! errors, bytes and time, A against B.
//!
//! Two calls are the same step when they have the same method, tool and arguments
//! (keys in any order). The alignment is Myers' (the `similar` crate), given a second at
//! most before it settles for a coarser one, so two logs of 100,000 calls that share
//! little still compare at once. A pair of the same step that ended differently (ok
//! against an error, or another error) is marked changed.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::calls::CallRecord;

/// What the alignment says of a pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// The same step, ended the same way.
    Same,
    /// The same step, ended differently.
    Changed,
    /// Only in A.
    Removed,
    /// Only in B.
    Added,
}

impl Op {
    /// `=`, `~`, `-`, `+`.
    pub fn mark(self) -> char {
        match self {
            Op::Same => '=',
            Op::Changed => '~',
            Op::Removed => '-',
            Op::Added => '+',
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Op::Same => "same",
            Op::Changed => "changed",
            Op::Removed => "removed",
            Op::Added => "added",
        }
    }
}

/// One row of the alignment: indexes into the two runs' calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pair {
    pub op: Op,
    pub a: Option<usize>,
    pub b: Option<usize>,
}

/// A side's figures for one tool (or all).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Figures {
    pub calls: u64,
    pub errors: u64,
    pub bytes: u64,
    pub time_ms: f64,
}

impl Figures {
    pub(crate) fn add(&mut self, c: &CallRecord) {
        self.calls += 1;
        self.errors += u64::from(c.outcome.is_error());
        self.bytes += c.bytes;
        self.time_ms += c.duration_ms.unwrap_or(0.0);
    }

    fn to_json(self) -> Value {
        json!({"calls": self.calls, "errors": self.errors, "bytes": self.bytes,
               "time_ms": (self.time_ms * 1e3).round() / 1e3})
    }
}

/// Two runs compared.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub pairs: Vec<Pair>,
    /// Per tool, by name: A's figures and B's.
    pub tools: BTreeMap<String, (Figures, Figures)>,
    pub total: (Figures, Figures),
}

impl Comparison {
    /// How many pairs each op has: same, changed, removed, added.
    pub fn counts(&self) -> [usize; 4] {
        let mut n = [0; 4];
        for p in &self.pairs {
            n[p.op as usize] += 1;
        }
        n
    }

    /// Whether the runs made the same steps and each ended the same way.
    pub fn same(&self) -> bool {
        self.pairs.iter().all(|p| p.op == Op::Same)
    }
}

/// A step's identity: method, tool and arguments with their keys in order.
fn key(c: &CallRecord) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    c.method.hash(&mut h);
    c.tool.hash(&mut h);
    crate::json::canonical(&c.arguments)
        .to_string()
        .hash(&mut h);
    h.finish()
}

/// How long the alignment may look for the least edit before it settles.
const DEADLINE: Duration = Duration::from_secs(1);

/// Aligns `a` with `b` and sums each side per tool.
pub fn compare(a: &[CallRecord], b: &[CallRecord]) -> Comparison {
    let (ka, kb): (Vec<u64>, Vec<u64>) = std::thread::scope(|s| {
        let ka = s.spawn(|| a.iter().map(key).collect());
        let kb: Vec<u64> = b.iter().map(key).collect();
        (ka.join().unwrap_or_default(), kb)
    });
    let ops = similar::capture_diff_slices_deadline(
        similar::Algorithm::Myers,
        &ka,
        &kb,
        Some(Instant::now() + DEADLINE),
    );
    let mut pairs = Vec::with_capacity(a.len().max(b.len()));
    for op in ops {
        match op {
            similar::DiffOp::Equal {
                old_index,
                new_index,
                len,
            } => pairs.extend((0..len).map(|i| {
                let (x, y) = (old_index + i, new_index + i);
                let op = if a[x].outcome == b[y].outcome {
                    Op::Same
                } else {
                    Op::Changed
                };
                Pair {
                    op,
                    a: Some(x),
                    b: Some(y),
                }
            })),
            similar::DiffOp::Delete {
                old_index, old_len, ..
            } => pairs.extend((old_index..old_index + old_len).map(removed)),
            similar::DiffOp::Insert {
                new_index, new_len, ..
            } => pairs.extend((new_index..new_index + new_len).map(added)),
            similar::DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                pairs.extend((old_index..old_index + old_len).map(removed));
                pairs.extend((new_index..new_index + new_len).map(added));
            }
        }
    }
    let mut tools: BTreeMap<String, (Figures, Figures)> = BTreeMap::new();
    let mut total = (Figures::default(), Figures::default());
    for c in a {
        tools.entry(c.tool.clone()).or_default().0.add(c);
        total.0.add(c);
    }
    for c in b {
        tools.entry(c.tool.clone()).or_default().1.add(c);
        total.1.add(c);
    }
    Comparison {
        pairs,
        tools,
        total,
    }
}

fn removed(i: usize) -> Pair {
    Pair {
        op: Op::Removed,
        a: Some(i),
        b: None,
    }
}

fn added(i: usize) -> Pair {
    Pair {
        op: Op::Added,
        a: None,
        b: Some(i),
    }
}

/// A call as `diff --json` gives it.
#[derive(serde::Serialize)]
struct CallOut<'a> {
    call: u64,
    line: u64,
    method: &'a str,
    tool: &'a str,
    arguments: &'a Value,
    outcome: String,
    code: Option<&'a str>,
    bytes: u64,
    duration_ms: Option<f64>,
}

impl<'a> CallOut<'a> {
    fn of(c: &'a CallRecord) -> CallOut<'a> {
        CallOut {
            call: c.call,
            line: c.line,
            method: &c.method,
            tool: &c.tool,
            arguments: &c.arguments,
            outcome: c.outcome.label(),
            code: c.outcome.code(),
            bytes: c.bytes,
            duration_ms: c.duration_ms,
        }
    }
}

/// A pair as `diff --json` gives it.
#[derive(serde::Serialize)]
struct PairOut<'a> {
    op: &'static str,
    a: Option<CallOut<'a>>,
    b: Option<CallOut<'a>>,
}

/// Writes the comparison as `diff --json` prints it, one JSON object: both logs, the
/// counts, the per-tool table and every pair, streamed (no whole copy is built).
///
/// # Errors
///
/// When `out` cannot be written.
pub fn write_json(
    cmp: &Comparison,
    a: (&str, &[CallRecord]),
    b: (&str, &[CallRecord]),
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let [same, changed, removed, added] = cmp.counts();
    let head = json!({
        "a": {"log": a.0, "calls": a.1.len()},
        "b": {"log": b.0, "calls": b.1.len()},
        "same": cmp.same(),
        "counts": {"same": same, "changed": changed, "removed": removed, "added": added},
        "tools": cmp.tools.iter().map(|(tool, (fa, fb))| json!({
            "tool": tool, "a": fa.to_json(), "b": fb.to_json(),
        })).collect::<Vec<_>>(),
        "total": {"a": cmp.total.0.to_json(), "b": cmp.total.1.to_json()},
    })
    .to_string();
    // The head without its closing brace, then the pairs.
    out.write_all(&head.as_bytes()[..head.len() - 1])?;
    out.write_all(b",\"pairs\":[")?;
    for (i, p) in cmp.pairs.iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        let pair = PairOut {
            op: p.op.name(),
            a: p.a.map(|i| CallOut::of(&a.1[i])),
            b: p.b.map(|i| CallOut::of(&b.1[i])),
        };
        serde_json::to_writer(&mut *out, &pair)?;
    }
    out.write_all(b"]}\n")
}

/// The comparison as one JSON value ([`write_json`]'s).
pub fn to_json(cmp: &Comparison, a: (&str, &[CallRecord]), b: (&str, &[CallRecord])) -> Value {
    let mut bytes = Vec::new();
    let _ = write_json(cmp, a, b, &mut bytes);
    serde_json::from_slice(&bytes).unwrap_or(Value::Null)
}

/// A size for people: `812 B`, `12.4 KB`, `3.1 MB`.
pub fn size(bytes: u64) -> String {
    match bytes {
        b if b < 1_000 => format!("{b} B"),
        b if b < 1_000_000 => format!("{:.1} KB", b as f64 / 1e3),
        b => format!("{:.1} MB", b as f64 / 1e6),
    }
}

/// A duration for people: `0.4 ms`, `215 ms`, `3.20 s`.
pub fn millis(ms: f64) -> String {
    if ms < 10.0 {
        format!("{ms:.1} ms")
    } else if ms < 1_000.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{:.2} s", ms / 1e3)
    }
}

/// What a side of a pair did: `ok 1.2 KB 3.1 ms`.
pub fn did(c: &CallRecord) -> String {
    let took = c.duration_ms.map(millis).unwrap_or_else(|| "-".into());
    format!("{} {} {}", c.outcome.label(), size(c.bytes), took)
}

/// Cuts `text` to `width` characters, with `…` when cut.
fn cut(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut s: String = text.chars().take(width.saturating_sub(1)).collect();
    s.push('…');
    s
}

/// The comparison as `diff` prints it: the pairs that differ with `context` pairs
/// around them (every pair when `context` is `None`), then the table per tool.
pub fn render(
    cmp: &Comparison,
    a: (&str, &[CallRecord]),
    b: (&str, &[CallRecord]),
    context: Option<usize>,
) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let [same, changed, removed, added] = cmp.counts();
    let _ = writeln!(out, "--- {} ({} calls)", a.0, a.1.len());
    let _ = writeln!(out, "+++ {} ({} calls)", b.0, b.1.len());
    let _ = writeln!(
        out,
        "{same} same, {changed} changed, {removed} only in A, {added} only in B\n"
    );
    let shown = shown(cmp, context);
    let mut last: Option<usize> = None;
    for (i, p) in cmp.pairs.iter().enumerate() {
        if !shown[i] {
            continue;
        }
        if last.is_some_and(|l| l + 1 != i) || (last.is_none() && i > 0) {
            let _ = writeln!(out, "  …");
        }
        last = Some(i);
        let c =
            p.a.map(|i| &a.1[i])
                .or(p.b.map(|i| &b.1[i]))
                .expect("a side");
        let num = |i: Option<usize>, calls: &[CallRecord]| {
            i.map_or_else(String::new, |i| calls[i].call.to_string())
        };
        let row = format!(
            "{} {:>5} {:>5}  {:<30} {:<34} {:<26} {}",
            p.op.mark(),
            num(p.a, a.1),
            num(p.b, b.1),
            cut(&c.tool, 30),
            cut(&c.arguments_text(), 34),
            p.a.map_or_else(String::new, |i| did(&a.1[i])),
            p.b.map_or_else(String::new, |i| did(&b.1[i])),
        );
        let _ = writeln!(out, "{}", row.trim_end());
    }
    if cmp.pairs.iter().all(|p| p.op == Op::Same) {
        let _ = writeln!(out, "  (every call the same)");
    }
    out.push('\n');
    out.push_str(&table(cmp));
    out
}

/// Which pairs to print: those not the same, and `context` around each.
fn shown(cmp: &Comparison, context: Option<usize>) -> Vec<bool> {
    let n = cmp.pairs.len();
    let Some(context) = context else {
        return vec![true; n];
    };
    let mut shown = vec![false; n];
    for (i, p) in cmp.pairs.iter().enumerate() {
        if p.op != Op::Same {
            for s in &mut shown[i.saturating_sub(context)..(i + context + 1).min(n)] {
                *s = true;
            }
        }
    }
    shown
}

/// The table per tool: calls, errors, bytes and time, A against B.
pub fn table(cmp: &Comparison) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<32} {:>13} {:>11} {:>21} {:>21}",
        "tool", "calls A→B", "errors A→B", "bytes A→B", "time A→B"
    );
    let row = |out: &mut String, name: &str, (fa, fb): (Figures, Figures)| {
        let _ = writeln!(
            out,
            "{:<32} {:>13} {:>11} {:>21} {:>21}",
            cut(name, 32),
            format!("{}→{}", fa.calls, fb.calls),
            format!("{}→{}", fa.errors, fb.errors),
            format!("{}→{}", size(fa.bytes), size(fb.bytes)),
            format!("{}→{}", millis(fa.time_ms), millis(fb.time_ms)),
        );
    };
    for (tool, figures) in &cmp.tools {
        row(&mut out, tool, *figures);
    }
    row(&mut out, "all", cmp.total);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::calls::Outcome;

    fn c(call: u64, tool: &str, args: Value, outcome: Outcome) -> CallRecord {
        CallRecord {
            session: 0,
            call,
            line: call,
            method: "tools/call".into(),
            tool: tool.into(),
            arguments: args,
            at_ms: None,
            duration_ms: Some(2.0),
            bytes: 100,
            outcome,
            rounds: 0,
            declined: 0,
            task_updates: 0,
            injected: None,
            text: 0,
        }
    }

    #[test]
    fn one_step_changed_is_one_removal_and_one_addition_among_the_same() {
        let a = vec![
            c(1, "q", json!({"id": "1-1", "depth": 1}), Outcome::Ok),
            c(2, "q", json!({"id": "1-2"}), Outcome::Ok),
            c(3, "p", json!({"id": "2-1"}), Outcome::Ok),
            c(4, "q", json!({"id": "1-3"}), Outcome::Ok),
        ];
        let b = vec![
            // The same arguments, in another order.
            c(1, "q", json!({"depth": 1, "id": "1-1"}), Outcome::Ok),
            c(2, "q", json!({"id": "1-2"}), Outcome::Ok),
            c(
                3,
                "p",
                json!({"id": "2-9"}),
                Outcome::Error("NOT_FOUND".into()),
            ),
            c(4, "q", json!({"id": "1-3"}), Outcome::Error("RATE".into())),
            c(5, "x", json!({}), Outcome::Ok),
        ];
        let cmp = compare(&a, &b);
        let ops: Vec<char> = cmp.pairs.iter().map(|p| p.op.mark()).collect();
        assert_eq!(ops, ['=', '=', '-', '+', '~', '+']);
        assert_eq!(cmp.counts(), [2, 1, 1, 2]);
        assert!(!cmp.same());
        assert_eq!(cmp.tools["q"].0.calls, 3);
        assert_eq!(cmp.tools["q"].1.errors, 1);
        assert_eq!(cmp.tools["x"].0.calls, 0);
        assert_eq!(cmp.total.1.calls, 5);
        assert_eq!(cmp.total.1.bytes, 500);
        let text = render(&cmp, ("A", &a), ("B", &b), Some(0));
        assert!(
            text.contains("2 same, 1 changed, 1 only in A, 2 only in B"),
            "{text}"
        );
        assert!(text.contains(r#"{"id":"2-9"}"#), "{text}");
        assert!(!text.contains(r#"{"id":"1-2"}"#), "no context: {text}");
        assert!(text.contains("error RATE"), "{text}");
        let json = to_json(&cmp, ("A", &a), ("B", &b));
        assert_eq!(json["counts"]["added"], 2);
        assert_eq!(json["pairs"][3]["b"]["arguments"]["id"], "2-9");
        assert_eq!(json["pairs"][3]["a"], Value::Null);
    }

    #[test]
    fn the_same_run_twice_is_the_same() {
        let a = vec![c(1, "q", json!({}), Outcome::Ok)];
        let cmp = compare(&a, &a.clone());
        assert!(cmp.same());
        assert!(render(&cmp, ("A", &a), ("A", &a), Some(2)).contains("every call the same"));
    }
}
