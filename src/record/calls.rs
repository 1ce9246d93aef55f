//! A session log read as a run of calls: each call's tool, arguments, outcome, size,
//! time, rounds and task updates, for comparing two runs ([`super::compare`]), checking
//! one against expectations ([`super::expect`]) and filtering ([`super::filter`]).
//!
//! The log is streamed once and each line parsed only as far as these need: a result is
//! skipped, not built, so a 100,000-call log of 170 MB reads in well under a second. A
//! call's size is its response line's (the answer as the log holds it, redacted). A
//! line that does not parse is counted beside the calls, as the log's other readers do.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;

use super::{Kind, Problem};

/// How a call ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Answered with a result.
    Ok,
    /// Answered with an error: its code (a tool's, `NOT_FOUND`; or JSON-RPC's, `-32602`).
    Error(String),
    /// No answer in the log (the session ended first, or the log was cut).
    Unanswered,
}

impl Outcome {
    pub fn is_error(&self) -> bool {
        matches!(self, Outcome::Error(_))
    }

    /// `ok`, `error NOT_FOUND`, `unanswered`.
    pub fn label(&self) -> String {
        match self {
            Outcome::Ok => "ok".into(),
            Outcome::Error(code) => format!("error {code}"),
            Outcome::Unanswered => "unanswered".into(),
        }
    }

    /// The error's code, for an error.
    pub fn code(&self) -> Option<&str> {
        match self {
            Outcome::Error(code) => Some(code),
            _ => None,
        }
    }
}

/// One call of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct CallRecord {
    /// Index into [`Run::sessions`].
    pub session: u32,
    /// The call's number in its session.
    pub call: u64,
    /// The request's line number, from 1.
    pub line: u64,
    /// `tools/call`, or the request's own method (`prompts/get`, …).
    pub method: String,
    /// The tool, or for another request what the log names it (`prompts/get next`).
    pub tool: String,
    /// A tool call's arguments, or another request's params (`null` when none).
    pub arguments: Value,
    /// Milliseconds from the log's first request to this one, when its time reads.
    pub at_ms: Option<f64>,
    pub duration_ms: Option<f64>,
    /// The response line's size in bytes (0 unanswered).
    pub bytes: u64,
    pub outcome: Outcome,
    /// Rounds of input the call went through (2026-07-28 `input_required`).
    pub rounds: u32,
    /// Of those, the rounds answered no: a form declined or cancelled, a confirmation
    /// answered `false`, or never answered.
    pub declined: u32,
    /// Status lines of the task the call became.
    pub task_updates: u32,
    /// What gave the answer instead of the server (a fault rule, a breakpoint).
    pub injected: Option<String>,
    /// Which of the reader's text needles the call's lines hold (bit `i` for needle `i`).
    pub text: u64,
}

impl CallRecord {
    /// The call's arguments as one line of JSON.
    pub fn arguments_text(&self) -> String {
        if self.arguments.is_null() {
            String::new()
        } else {
            self.arguments.to_string()
        }
    }
}

/// A log's calls, in the order their requests were written.
#[derive(Debug, Default)]
pub struct Run {
    pub calls: Vec<CallRecord>,
    pub sessions: Vec<String>,
    pub notifications: u64,
    /// Lines that do not parse (the first few of them kept).
    pub problems: Vec<Problem>,
    pub problem_count: u64,
}

/// The most text needles a reader looks for (one bit each).
pub const MAX_NEEDLES: usize = 64;

/// What is looked for in each line: a needle in lowercase is looked for in any case
/// (smart case, as ripgrep's), one with a capital exactly.
struct Needles(Vec<regex::bytes::Regex>);

impl Needles {
    fn new(needles: &[String]) -> Needles {
        Needles(
            needles
                .iter()
                .take(MAX_NEEDLES)
                .map(|n| {
                    let exact = n.chars().any(char::is_uppercase);
                    let pattern = regex::escape(n);
                    regex::bytes::RegexBuilder::new(&pattern)
                        .case_insensitive(!exact)
                        .unicode(false)
                        .build()
                        .unwrap_or_else(|_| regex::bytes::Regex::new("$^").expect("a pattern"))
                })
                .collect(),
        )
    }

    fn hits(&self, line: &[u8]) -> u64 {
        let mut bits = 0;
        for (i, n) in self.0.iter().enumerate() {
            if n.is_match(line) {
                bits |= 1 << i;
            }
        }
        bits
    }
}

/// A line, parsed as far as a run needs.
#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type")]
    kind: Kind,
    #[serde(default, borrow)]
    session: Cow<'a, str>,
    #[serde(default)]
    call: Option<u64>,
    #[serde(default, borrow)]
    tool: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    method: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    ts: Cow<'a, str>,
    #[serde(default)]
    duration_ms: Option<f64>,
    #[serde(default)]
    arguments: Option<Value>,
    #[serde(default)]
    params: Option<Value>,
    #[serde(default)]
    result: Option<IgnoredAny>,
    #[serde(default)]
    error: Option<Value>,
    #[serde(default)]
    injected: Option<String>,
    #[serde(default)]
    input_responses: Option<Value>,
}

/// Reads the log at `path` as a run, noting in each call which of `needles` its lines
/// hold (for a filter's `text:`).
///
/// # Errors
///
/// When the file cannot be opened or read.
pub fn read(path: &Path, needles: &[String]) -> std::io::Result<Run> {
    let file = std::fs::File::open(path)?;
    read_from(std::io::BufReader::with_capacity(1 << 20, file), needles)
}

/// As [`read`], from any reader.
///
/// # Errors
///
/// When `input` cannot be read.
pub fn read_from(mut input: impl BufRead, needles: &[String]) -> std::io::Result<Run> {
    let needles = Needles::new(needles);
    let mut reader = Reader::default();
    let mut buf = Vec::new();
    let mut line = 0;
    loop {
        buf.clear();
        if input.read_until(b'\n', &mut buf)? == 0 {
            break;
        }
        line += 1;
        reader.line(&buf, line, &needles);
    }
    Ok(reader.run)
}

#[derive(Default)]
struct Reader {
    run: Run,
    sessions: HashMap<String, u32>,
    /// (session, call) → the call's row.
    open: HashMap<(u32, u64), usize>,
    first: Option<chrono::DateTime<chrono::FixedOffset>>,
    /// Following a feed: calls are kept only while open ([`Reader::live`]) and handed
    /// out when they end ([`Reader::ended`]), not gathered in [`Run::calls`].
    follow: bool,
    live: HashMap<(u32, u64), CallRecord>,
    ended: Vec<CallRecord>,
}

/// A call's place: its session's number and its number in it.
type CallKey = (u32, u64);

impl Reader {
    /// Takes in line `number`; returns the call it belongs to, if any.
    fn line(&mut self, buf: &[u8], number: u64, needles: &Needles) -> Option<CallKey> {
        let text = buf.trim_ascii();
        if text.is_empty() {
            return None;
        }
        let parsed = match serde_json::from_slice::<Line>(text) {
            Ok(parsed) => parsed,
            Err(e) => {
                let problem = if buf.last() == Some(&b'\n') {
                    Problem::BadLine {
                        line: number,
                        bytes: text.len(),
                        error: e.to_string(),
                    }
                } else {
                    Problem::TornLastLine {
                        line: number,
                        bytes: text.len(),
                    }
                };
                self.run.problem_count += 1;
                if self.run.problems.len() < 100 {
                    self.run.problems.push(problem);
                }
                return None;
            }
        };
        let session = self.session(&parsed.session);
        let hits = if needles.0.is_empty() {
            0
        } else {
            needles.hits(text)
        };
        if parsed.kind == Kind::Request {
            return Some(self.request(parsed, session, number, hits));
        }
        if parsed.kind == Kind::Notification {
            self.run.notifications += 1;
            return None;
        }
        let key = (session, parsed.call?);
        let call = if self.follow {
            self.live.get_mut(&key)?
        } else {
            let row = *self.open.get(&key)?;
            &mut self.run.calls[row]
        };
        call.text |= hits;
        match parsed.kind {
            Kind::Round => {
                call.rounds += 1;
                if answered_no(parsed.input_responses.as_ref()) {
                    call.declined += 1;
                }
            }
            Kind::Task => call.task_updates += 1,
            _ => {
                call.duration_ms = parsed.duration_ms;
                call.bytes = text.len() as u64;
                call.injected = parsed.injected;
                call.outcome = match (&parsed.error, &parsed.result) {
                    (Some(error), _) => Outcome::Error(code_of(error)),
                    _ => Outcome::Ok,
                };
                self.open.remove(&key);
                if let Some(done) = self.live.remove(&key) {
                    self.ended.push(done);
                }
            }
        }
        Some(key)
    }

    fn session(&mut self, name: &str) -> u32 {
        if let Some(&n) = self.sessions.get(name) {
            return n;
        }
        let n = self.run.sessions.len() as u32;
        self.sessions.insert(name.to_string(), n);
        self.run.sessions.push(name.to_string());
        n
    }

    fn request(&mut self, parsed: Line<'_>, session: u32, number: u64, hits: u64) -> CallKey {
        let at = chrono::DateTime::parse_from_rfc3339(&parsed.ts).ok();
        if self.first.is_none() {
            self.first = at;
        }
        let at_ms = match (at, self.first) {
            (Some(at), Some(first)) => {
                Some((at - first).num_microseconds().unwrap_or(0) as f64 / 1e3)
            }
            _ => None,
        };
        let method = parsed
            .method
            .map_or_else(|| "tools/call".to_string(), Cow::into_owned);
        let call = parsed.call.unwrap_or(0);
        let record = CallRecord {
            session,
            call,
            line: number,
            tool: parsed.tool.map_or_else(|| method.clone(), Cow::into_owned),
            method,
            arguments: parsed.arguments.or(parsed.params).unwrap_or(Value::Null),
            at_ms,
            duration_ms: None,
            bytes: 0,
            outcome: Outcome::Unanswered,
            rounds: 0,
            declined: 0,
            task_updates: 0,
            injected: None,
            text: hits,
        };
        let key = (session, call);
        if self.follow {
            self.live.insert(key, record);
        } else {
            self.open.insert(key, self.run.calls.len());
            self.run.calls.push(record);
        }
        key
    }
}

/// The most calls a [`Follower`] holds waiting for their responses; past it, the oldest
/// is given out unanswered.
pub const MAX_HELD: usize = 10_000;

/// What a [`Follower`] gives out.
#[derive(Debug, Clone, PartialEq)]
pub enum Followed {
    /// A call that ended (or was given up waiting), with its lines as they came.
    Call(Box<CallRecord>, Vec<Vec<u8>>),
    /// A line of no call: a notification, or the feed's own (`hello`, `lagged`).
    Other(Vec<u8>),
}

/// A feed's lines folded into calls as they come (`watch --filter`, `check --follow`):
/// a call's lines are held until its response, then given out with its record.
pub struct Follower {
    reader: Reader,
    needles: Needles,
    lines: HashMap<CallKey, Vec<Vec<u8>>>,
    /// Calls held, oldest first.
    order: std::collections::VecDeque<CallKey>,
    number: u64,
}

impl Follower {
    /// A follower noting which of `needles` each call's lines hold.
    pub fn new(needles: &[String]) -> Follower {
        Follower {
            reader: Reader {
                follow: true,
                ..Reader::default()
            },
            needles: Needles::new(needles),
            lines: HashMap::new(),
            order: std::collections::VecDeque::new(),
            number: 0,
        }
    }

    /// Takes in one line (without its newline); returns what it completed.
    pub fn push(&mut self, line: &[u8]) -> Vec<Followed> {
        self.number += 1;
        let Some(key) = self.reader.line(line, self.number, &self.needles) else {
            return vec![Followed::Other(line.to_vec())];
        };
        let held = self.lines.entry(key).or_insert_with(|| {
            self.order.push_back(key);
            Vec::new()
        });
        held.push(line.to_vec());
        let mut out = Vec::new();
        for call in std::mem::take(&mut self.reader.ended) {
            let key = (call.session, call.call);
            let lines = self.lines.remove(&key).unwrap_or_default();
            self.order.retain(|k| *k != key);
            out.push(Followed::Call(Box::new(call), lines));
        }
        while self.lines.len() > MAX_HELD {
            let Some(oldest) = self.order.pop_front() else {
                break;
            };
            let lines = self.lines.remove(&oldest).unwrap_or_default();
            if let Some(call) = self.reader.live.remove(&oldest) {
                out.push(Followed::Call(Box::new(call), lines));
            }
        }
        out
    }
}

/// An error object's code: a tool's (`{"error": {"code": "NOT_FOUND"}}`) or JSON-RPC's
/// (`{"error": {"code": -32602}}`); `ERROR` when it names none.
pub fn code_of(error: &Value) -> String {
    let inner = error.get("error").unwrap_or(error);
    match inner.get("code") {
        Some(Value::String(code)) => code.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => "ERROR".into(),
    }
}

/// Whether a round's answers say no: never answered, a form declined or cancelled, or a
/// field of the form answered `false` (a confirmation refused).
pub fn answered_no(responses: Option<&Value>) -> bool {
    let Some(Value::Object(answers)) = responses else {
        return true;
    };
    answers.values().any(|a| {
        let action = a["action"]
            .as_str()
            .or_else(|| a["result"]["action"].as_str());
        let content = a.get("content").or_else(|| a["result"].get("content"));
        matches!(action, Some("decline" | "cancel"))
            || content
                .and_then(Value::as_object)
                .is_some_and(|c| c.values().any(|v| v == &Value::Bool(false)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = r#"{"v":4,"ts":"2026-12-01T10:00:00.000Z","session":"s1","seq":1,"type":"request","call":1,"tool":"structs_query_player","arguments":{"player_id":"1-1"}}
{"v":4,"ts":"2026-12-01T10:00:00.250Z","session":"s1","seq":2,"type":"request","call":2,"tool":"confirm_delete","arguments":{"id":"5-1"}}
{"v":4,"ts":"2026-12-01T10:00:00.300Z","session":"s1","seq":3,"type":"response","call":1,"tool":"structs_query_player","duration_ms":300.5,"result":{"Player":{"id":"1-1","name":"Alice"}}}
{"v":4,"ts":"2026-12-01T10:00:00.400Z","session":"s1","seq":4,"type":"round","call":2,"tool":"confirm_delete","round":1,"input_requests":{},"input_responses":{"confirm":{"action":"accept","content":{"confirm":false}}}}
{"v":4,"ts":"2026-12-01T10:00:00.500Z","session":"s1","seq":5,"type":"response","call":2,"tool":"confirm_delete","duration_ms":250,"error":{"error":{"code":"TOOL_CANCELLED","message":"no"}}}
{"v":4,"ts":"2026-12-01T10:00:01.000Z","session":"s2","seq":1,"type":"request","call":1,"method":"prompts/get","tool":"prompts/get next","params":{"name":"next"}}
{"v":4,"ts":"2026-12-01T10:00:01.010Z","session":"s2","seq":2,"type":"response","call":1,"tool":"prompts/get next","duration_ms":10,"error":{"error":{"code":-32602,"message":"unknown"}}}
{"v":4,"ts":"2026-12-01T10:00:02.000Z","session":"s2","seq":3,"type":"request","call":2,"tool":"structs_query_planet","arguments":{"planet_id":"2-1"}}
{"v":4,"ts":"2026-12-01T10:00:02.000Z","session":"s2","seq":4,"type":"notification","method":"notifications/progress","params":{}}
{"v":4,"ts":"#;

    #[test]
    fn a_log_reads_as_its_calls_with_outcomes_rounds_and_what_was_cut() {
        let run = read_from(
            LOG.as_bytes(),
            &["alice".into(), "Alice".into(), "ALICE".into()],
        )
        .unwrap();
        assert_eq!(run.calls.len(), 4);
        assert_eq!(run.sessions, ["s1", "s2"]);
        assert_eq!(run.notifications, 1);
        assert_eq!(run.problem_count, 1, "the torn last line");
        let [query, confirm, prompt, planet] = &run.calls[..] else {
            unreachable!()
        };
        assert_eq!(query.outcome, Outcome::Ok);
        assert_eq!(query.duration_ms, Some(300.5));
        assert_eq!(query.at_ms, Some(0.0));
        assert_eq!(query.arguments_text(), r#"{"player_id":"1-1"}"#);
        assert!(query.bytes > 100);
        // Smart case: `alice` in any case, `Alice` exactly, `ALICE` exactly (absent).
        assert_eq!(query.text, 0b011);
        assert_eq!(confirm.at_ms, Some(250.0));
        assert_eq!(confirm.outcome, Outcome::Error("TOOL_CANCELLED".into()));
        assert_eq!((confirm.rounds, confirm.declined), (1, 1));
        assert_eq!(prompt.method, "prompts/get");
        assert_eq!(prompt.tool, "prompts/get next");
        assert_eq!(prompt.arguments["name"], "next");
        assert_eq!(prompt.outcome.code(), Some("-32602"));
        assert_eq!((prompt.session, prompt.call), (1, 1));
        assert_eq!(planet.outcome, Outcome::Unanswered);
        assert_eq!(planet.bytes, 0);
    }

    #[test]
    fn a_follower_gives_each_call_out_with_its_lines_when_it_ends() {
        let mut f = Follower::new(&["alice".into()]);
        let mut out = Vec::new();
        for line in LOG.lines() {
            out.extend(f.push(line.as_bytes()));
        }
        let calls: Vec<(&CallRecord, usize)> = out
            .iter()
            .filter_map(|o| match o {
                Followed::Call(c, lines) => Some((&**c, lines.len())),
                Followed::Other(_) => None,
            })
            .collect();
        // The query ended first (its response came before the confirmation's).
        assert_eq!(calls.len(), 3, "{out:?}");
        assert_eq!(
            (calls[0].0.tool.as_str(), calls[0].1),
            ("structs_query_player", 2)
        );
        assert_eq!(calls[0].0.text, 1);
        assert_eq!(
            (calls[1].0.tool.as_str(), calls[1].1),
            ("confirm_delete", 3)
        );
        assert_eq!(calls[1].0.declined, 1);
        assert_eq!(calls[2].0.outcome.code(), Some("-32602"));
        // The notification and the torn line pass as lines of no call.
        let others = out
            .iter()
            .filter(|o| matches!(o, Followed::Other(_)))
            .count();
        assert_eq!(others, 2);
    }

    #[test]
    fn a_round_says_no_when_declined_cancelled_refused_or_never_answered() {
        let no = |v: Value| answered_no(Some(&v));
        assert!(answered_no(None));
        assert!(no(serde_json::json!({"a": {"action": "decline"}})));
        assert!(no(
            serde_json::json!({"a": {"result": {"action": "cancel"}}})
        ));
        assert!(no(
            serde_json::json!({"a": {"action": "accept", "content": {"confirm": false}}})
        ));
        assert!(!no(
            serde_json::json!({"a": {"action": "accept", "content": {"confirm": true}}})
        ));
        assert!(!no(serde_json::json!({"roots": {"result": {"roots": []}}})));
    }
}
