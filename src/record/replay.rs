//! `structs-console replay FILE --check`: a recorded session run again against a core,
//! each call's fresh answer compared with the recorded one, so a recording becomes a
//! regression test.
//!
//! The log is streamed. A request is kept until its response line arrives; the call is
//! then made again with the recorded arguments, in the order the responses were
//! recorded (the order the original calls finished), and the fresh result or error is
//! diffed with the recorded one, volatile fields left out ([`super::diff::Ignore`]).
//! Each recorded session is replayed as its own client ([`Replayer`]).

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use tracing::Instrument as _;

use super::diff::{Change, Ignore};
use super::shapes::{Compared, ShapeChange, compare};
use super::{Kind, LogReader, Problem};
use crate::context::subscriptions::Subscriptions;
use crate::context::{CallContext, ClientHandles};
use crate::core::Core;
use crate::record::Recorded;

/// Differences kept per call (all are counted).
pub const CHANGES_KEPT: usize = 50;

/// One call whose fresh answer differs from the recorded one.
#[derive(Debug, Clone, PartialEq)]
pub struct CallDiff {
    pub session: String,
    pub call: u64,
    /// The response's line in the log.
    pub line: u64,
    pub tool: String,
    pub changes: Vec<Change>,
    pub total: usize,
}

/// What a check found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// Calls run again.
    pub calls: u64,
    pub same: u64,
    pub different: Vec<CallDiff>,
    /// Requests with no response in the log (the server stopped first).
    pub unanswered: u64,
    /// Responses whose request is not in the log.
    pub orphans: u64,
    /// Calls not run again because their log line holds no secret they were sent
    /// with (a signed transaction, a credential): `(tool, the arguments left out)`.
    pub redacted: Vec<(String, Vec<String>)>,
    /// Calls not run again because the answer recorded was not the server's (a fault
    /// injected, a breakpoint's answer): `(tool, what was injected)`.
    pub injected: Vec<(String, String)>,
    pub notifications: u64,
    /// Rounds of input the recorded calls went through (`round` lines).
    pub rounds: u64,
    pub problems: Vec<Problem>,
    /// Log entries read (requests, responses, notifications): none means the file is
    /// no session log (empty, or something else), and there was nothing to check.
    pub entries: u64,
    /// The changes of shape recorded answers were read through (an older recording),
    /// each with how many calls showed it.
    pub shape: std::collections::BTreeMap<ShapeChange, u64>,
    /// Calls whose recorded answer was read through a change of shape.
    pub shaped_calls: u64,
    /// Requests other than tool calls (a tap records every request, log version 4),
    /// counted by method: a replay checks tool calls only.
    pub other: std::collections::BTreeMap<String, u64>,
}

impl Report {
    /// True when the file held log entries and every call gave the recorded answer.
    pub fn passed(&self) -> bool {
        self.entries > 0 && self.different.is_empty()
    }
}

/// Why a recorded call is not run again: what the log cannot give it, or an answer
/// that was not the server's to compare with. `replay --check` and the Replay tab
/// decide it here, so they agree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotRerun {
    /// The request's line holds no value for these arguments (secrets it was sent with).
    Redacted(Vec<String>),
    /// The agent got an answer the proxy gave instead of the server: what gave it.
    Injected(String),
    /// Not a tool call (a prompt got, a resource read, a list): its method.
    NotATool(String),
}

impl NotRerun {
    /// The verdict for a call from its request's redacted arguments and its
    /// response's `injected` note.
    pub fn of(redacted: &[String], injected: Option<&str>) -> Option<NotRerun> {
        if !redacted.is_empty() {
            return Some(NotRerun::Redacted(redacted.to_vec()));
        }
        injected.map(|what| NotRerun::Injected(what.to_string()))
    }

    /// Why, in a few words, after "not run again: ".
    pub fn reason(&self) -> String {
        match self {
            NotRerun::Redacted(args) => {
                format!("the log does not hold its {}", args.join(", "))
            }
            NotRerun::Injected(what) => {
                format!("the agent got an injected answer ({what}), not the server's")
            }
            NotRerun::NotATool(method) => {
                format!("it is a {method} request, and a replay checks tool calls")
            }
        }
    }
}

/// Runs recorded calls again, each recorded session as its own client: its own
/// subscriptions and handle list, as it had on the server. A result handle the log
/// recorded is replaced, in the arguments of later calls, by the handle
/// the fresh run made for the same call (in any session), so `structs_handle_fetch` of a recorded handle
/// reads the fresh result.
pub struct Replayer {
    calls: Recorded,
    /// The recorded answers of the call about to run again ([`Replayer::give_answers`]).
    answers: Vec<Value>,
    /// The span the call about to run again was recorded in ([`Replayer::link_next`]).
    recorded_in: Option<String>,
    sessions: HashMap<String, Client>,
    /// Recorded handle → the fresh run's handle (across sessions: a client may fetch
    /// a handle another one made).
    renamed: HashMap<String, String>,
}

#[derive(Default)]
struct Client {
    subscriptions: Arc<Subscriptions>,
    handles: Arc<ClientHandles>,
}

impl Replayer {
    /// Calls go through `calls`, recorded there when it records.
    pub fn new(calls: Recorded) -> Replayer {
        Replayer {
            calls,
            answers: Vec::new(),
            recorded_in: None,
            sessions: HashMap::new(),
            renamed: HashMap::new(),
        }
    }

    /// What the recorded agent answered in the rounds of the next call run again: that
    /// call carries them ([`CallContext::with_answers`]), so that a server asking the
    /// same gets the same, and no other call can take them.
    pub fn give_answers(&mut self, answers: Vec<Value>) {
        self.answers = answers;
    }

    /// The span the next call run again was recorded in (a `traceparent`, from its
    /// line's `trace_id` and `span_id`): with traces on, the call runs in a new span
    /// (`replay {tool}`) linked to it.
    pub fn link_next(&mut self, recorded_in: Option<String>) {
        self.recorded_in = recorded_in;
    }

    /// Calls `tool` with the recorded `args` as `session` did; `recorded` is the
    /// recorded answer (to pair its handles with the fresh ones). The answer is the
    /// result or the wire error object.
    pub async fn call(
        &mut self,
        session: &str,
        tool: &str,
        mut args: Value,
        recorded: Option<&Value>,
    ) -> Value {
        let client = self.sessions.entry(session.to_string()).or_default();
        rename(&mut args, &self.renamed);
        if let Some(recorded) = recorded {
            give_measured(tool, &mut args, recorded);
        }
        let ctx = CallContext::new()
            .with_subscriptions(client.subscriptions.clone())
            .with_handles(client.handles.clone())
            .with_answers(std::mem::take(&mut self.answers))
            .following_tasks();
        let span = tracing::info_span!(
            target: crate::context::trace::TARGET, "replay",
            otel.name = %format_args!("replay {tool}"), gen_ai.tool.name = tool
        );
        if let Some(recorded_in) = self.recorded_in.take() {
            span.in_scope(|| crate::context::trace::link_current(&recorded_in));
        }
        let fresh = self
            .calls
            .call_wire(tool, args, ctx)
            .instrument(span)
            .await
            .unwrap_or_else(|e| e);
        if let Some(recorded) = recorded {
            let (mut old, mut new) = (Vec::new(), Vec::new());
            handles_in(recorded, &mut old);
            handles_in(&fresh, &mut new);
            for (o, n) in old.into_iter().zip(new) {
                if o != n {
                    self.renamed.insert(o, n);
                }
            }
        }
        fresh
    }
}

/// Inputs a tool measures on the machine when the caller does not give them, with
/// the answer field that reports what it measured: (tool, answer field, argument).
/// A replay gives the tool the recorded measurement, so everything computed from it
/// (expected times, when to start) is computed again exactly.
const MEASURED: &[(&str, &str, &str)] =
    &[("structs_calculate_pow_schedule", "hashrate", "hashrate")];

fn give_measured(tool: &str, args: &mut Value, recorded: &Value) {
    // A search on several threads finds whichever valid nonce a thread reaches first.
    // The replay starts one thread at the recorded nonce, so the same world gives the
    // same proof at once, and a changed world a different one.
    if tool == "structs_calculate_proof_of_work"
        && let (Some(obj), Some(nonce)) = (args.as_object_mut(), recorded.get("nonce"))
        && nonce.is_u64()
        && !obj.contains_key("start_nonce")
    {
        obj.insert("start_nonce".into(), nonce.clone());
        obj.insert("threads".into(), Value::from(1));
    }
    for &(t, field, arg) in MEASURED {
        if t != tool {
            continue;
        }
        if let (Some(obj), Some(v)) = (args.as_object_mut(), recorded.get(field))
            && v.is_number()
            && !obj.contains_key(arg)
        {
            obj.insert(arg.to_string(), v.clone());
        }
    }
}

/// The `result_handle` values in a result, in document order.
fn handles_in(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                match (k.as_str(), v) {
                    ("result_handle", Value::String(h)) => out.push(h.clone()),
                    _ => handles_in(v, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| handles_in(v, out)),
        _ => {}
    }
}

/// Every string equal to a renamed handle becomes the new one.
fn rename(v: &mut Value, renamed: &HashMap<String, String>) {
    if renamed.is_empty() {
        return;
    }
    match v {
        Value::String(s) => {
            if let Some(new) = renamed.get(s.as_str()) {
                *s = new.clone();
            }
        }
        Value::Object(map) => map.values_mut().for_each(|v| rename(v, renamed)),
        Value::Array(items) => items.iter_mut().for_each(|v| rename(v, renamed)),
        _ => {}
    }
}

impl Report {
    /// One call run again (call `call` of `session`, its response at `line`): counted
    /// the same, or kept as a difference, and the changes of shape it was read through
    /// counted apart.
    fn tally(&mut self, compared: Compared, session: String, call: u64, line: u64, tool: String) {
        self.calls += 1;
        for change in &compared.shape {
            *self.shape.entry(change).or_default() += 1;
        }
        self.shaped_calls += u64::from(!compared.shape.is_empty());
        if compared.total == 0 {
            self.same += 1;
        } else {
            self.different.push(CallDiff {
                session,
                call,
                line,
                tool,
                changes: compared.changes,
                total: compared.total,
            });
        }
    }
}

/// Runs every call of the log at `path` again on `core` and compares. Each call runs
/// with what its agent answered to the input its server asked for (the
/// `input_responses` of its `round` lines, in order), so that a server asking the same
/// gets the same.
pub async fn check(core: &Core, path: &Path, ignore: &Ignore) -> std::io::Result<Report> {
    let mut replayer = Replayer::new(Recorded::new(core.clone(), None));
    let mut report = Report::default();
    // Requests waiting for their response, by (session, call).
    let mut waiting: HashMap<(String, u64), (String, Value, Vec<String>)> = HashMap::new();
    // What each waiting call's agent answered in its rounds.
    let mut answered: HashMap<(String, u64), Vec<Value>> = HashMap::new();
    // Requests other than tool calls: counted, their responses passed over.
    let mut others: std::collections::HashSet<(String, u64)> = std::collections::HashSet::new();
    let mut reader = LogReader::open(path)?;
    while let Some(item) = reader.next() {
        let entry = match item? {
            Ok(e) => e,
            Err(p) => {
                report.problems.push(p);
                continue;
            }
        };
        report.entries += 1;
        match entry.kind {
            Kind::Notification => report.notifications += 1,
            // The call runs again and follows its task to its end itself.
            Kind::Task => {}
            Kind::Round => {
                report.rounds += 1;
                if let (Some(call), Some(given)) = (entry.call, entry.input_responses)
                    && !given.is_null()
                {
                    answered
                        .entry((entry.session, call))
                        .or_default()
                        .push(given);
                }
            }
            Kind::Request => {
                if let Some(method) = entry.other_method() {
                    *report.other.entry(method.to_string()).or_default() += 1;
                    if let Some(call) = entry.call {
                        others.insert((entry.session.clone(), call));
                    }
                    continue;
                }
                if let (Some(call), Some(tool)) = (entry.call, entry.tool) {
                    let args = entry.arguments.unwrap_or(Value::Null);
                    waiting.insert((entry.session, call), (tool, args, entry.redacted));
                }
            }
            Kind::Response => {
                let Some(call) = entry.call else { continue };
                if others.remove(&(entry.session.clone(), call)) {
                    continue;
                }
                let Some((tool, args, redacted)) = waiting.remove(&(entry.session.clone(), call))
                else {
                    report.orphans += 1;
                    continue;
                };
                match NotRerun::of(&redacted, entry.injected.as_deref()) {
                    Some(NotRerun::Redacted(args)) => {
                        report.redacted.push((tool, args));
                        continue;
                    }
                    Some(NotRerun::Injected(what)) => {
                        report.injected.push((tool, what));
                        continue;
                    }
                    // Other requests were passed over at their request line.
                    Some(NotRerun::NotATool(_)) => continue,
                    None => {}
                }
                let recorded = entry.answer();
                replayer.give_answers(
                    answered
                        .remove(&(entry.session.clone(), call))
                        .unwrap_or_default(),
                );
                // The response's line names the span the call was answered in.
                replayer.link_next(entry.recorded_span());
                let fresh = replayer
                    .call(&entry.session, &tool, args, Some(&recorded))
                    .await;
                let older = entry.v < super::SHAPES_VERSION;
                let compared = compare(&recorded, &fresh, ignore, CHANGES_KEPT, older);
                report.tally(compared, entry.session, call, reader.line(), tool);
            }
        }
    }
    report.unanswered = waiting.len() as u64;
    Ok(report)
}

/// A value in one line, cut to `max` characters.
pub(crate) fn short(v: &Option<Value>, max: usize) -> String {
    let text = v.as_ref().map_or_else(|| "—".to_string(), Value::to_string);
    if text.chars().count() <= max {
        text
    } else {
        format!("{}…", text.chars().take(max).collect::<String>())
    }
}

/// One call that answered differently: where it is, then its changes.
fn write_difference(out: &mut String, d: &CallDiff) {
    use std::fmt::Write as _;
    let _ = writeln!(
        out,
        "\ncall {} {} (line {}, session {}): {} difference{}",
        d.call,
        d.tool,
        d.line,
        d.session,
        d.total,
        if d.total == 1 { "" } else { "s" }
    );
    for c in &d.changes {
        let path = if c.path.is_empty() {
            "(the whole answer)"
        } else {
            &c.path
        };
        let _ = writeln!(
            out,
            "  {} {path}: {} → {}",
            c.kind.mark(),
            short(&c.before, 60),
            short(&c.after, 60)
        );
    }
    if d.total > d.changes.len() {
        let _ = writeln!(out, "  … and {} more", d.total - d.changes.len());
    }
}

/// The report as text: the totals, then each differing call with its changes.
pub fn render(report: &Report, log: &Path, source: &str) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    if report.entries == 0 {
        let _ = writeln!(
            out,
            "nothing to check: {} holds no session log entries{}",
            log.display(),
            match report.problems.len() {
                0 => String::new(),
                n => format!(" ({n} line{} that are not)", if n == 1 { "" } else { "s" }),
            }
        );
        for p in report.problems.iter().take(5) {
            let _ = writeln!(out, "  log: {p}");
        }
        return out;
    }
    let _ = writeln!(
        out,
        "replayed {} call{} from {} on {source}",
        report.calls,
        if report.calls == 1 { "" } else { "s" },
        log.display()
    );
    let _ = writeln!(
        out,
        "  {} the same, {} different, {} without a response, {} response{} without a request, {} notification{} (not replayed)",
        report.same,
        report.different.len(),
        report.unanswered,
        report.orphans,
        if report.orphans == 1 { "" } else { "s" },
        report.notifications,
        if report.notifications == 1 { "" } else { "s" },
    );
    if !report.shape.is_empty() {
        let calls = report.shaped_calls;
        let _ = writeln!(
            out,
            "  recorded in older chain shapes ({calls} call{} read in today's; not differences):",
            if calls == 1 { "" } else { "s" }
        );
        for change in report.shape.keys() {
            let _ = writeln!(out, "    {change}");
        }
    }
    if report.rounds > 0 {
        let _ = writeln!(
            out,
            "  {} round{} of input the server asked for, answered as the agent answered",
            report.rounds,
            if report.rounds == 1 { "" } else { "s" }
        );
    }
    if !report.other.is_empty() {
        let n: u64 = report.other.values().sum();
        let methods: Vec<String> = report
            .other
            .iter()
            .map(|(method, count)| format!("{method} {count}"))
            .collect();
        let _ = writeln!(
            out,
            "  {n} request{} other than tool calls, not checked (a replay checks tool calls): {}",
            if n == 1 { "" } else { "s" },
            methods.join(", ")
        );
    }
    for (tool, hidden) in &report.redacted {
        let _ = writeln!(
            out,
            "  not run again: a {tool} call, whose {} the log does not hold",
            hidden.join(", ")
        );
    }
    for (tool, what) in &report.injected {
        let _ = writeln!(
            out,
            "  not run again: a {tool} call the agent got an injected answer to ({what})"
        );
    }
    for p in &report.problems {
        let _ = writeln!(out, "  log: {p}");
    }
    for d in &report.different {
        write_difference(&mut out, d);
    }
    out
}
