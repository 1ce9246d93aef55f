//! A session log read as it is written: its lines folded into calls, each with its
//! state now (running with its progress, answered, failed, cancelled), for the Live
//! tab and `structs-console watch`. The lines come from a control endpoint's feed or
//! from a log file followed as it grows ([`follow_file`]).
//!
//! Memory is bounded: the newest [`LIVE_KEPT`] calls are kept, and a call's answer is
//! kept whole only up to [`ANSWER_KEPT`] bytes.

use std::collections::{HashMap, VecDeque};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::time::Duration;

use serde_json::{Value, json};

use super::{Entry, Kind};

/// The calls kept; older ones are let go as new ones come.
pub const LIVE_KEPT: usize = 10_000;

/// The largest answer kept whole; a larger one is kept as its size and its start.
pub const ANSWER_KEPT: usize = 256 * 1024;

/// The error code a cancelled call answers with.
const CANCELLED: &str = "TOOL_CANCELLED";

/// Where a call is.
#[derive(Debug, Clone, PartialEq)]
pub enum Status {
    /// Sent, not answered yet.
    Running,
    /// Answered with a result.
    Answered,
    /// Answered with an error: its code (or the JSON-RPC error's number).
    Failed(String),
    /// Cancelled by the client.
    Cancelled,
}

impl Status {
    /// A word for the list.
    pub fn word(&self) -> &str {
        match self {
            Status::Running => "running",
            Status::Answered => "ok",
            Status::Failed(code) => code,
            Status::Cancelled => "cancelled",
        }
    }
}

/// The progress a running call last reported.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

/// One tool call as seen so far.
#[derive(Debug, Clone)]
pub struct LiveCall {
    /// The session's number, from 1, in the order sessions were first seen.
    pub session: usize,
    /// The call's number in its session, as recorded.
    pub call: u64,
    /// The tool called, or for another request its label (`prompts/get next`).
    pub tool: String,
    /// The tool's arguments, or another request's params.
    pub arguments: Value,
    /// A request other than a tool call: its method.
    pub method: Option<String>,
    /// When it was sent (the log's timestamp).
    pub ts: String,
    pub status: Status,
    pub progress: Option<Progress>,
    pub duration_ms: Option<f64>,
    /// The answer's size as JSON, in bytes.
    pub size: Option<usize>,
    /// The answer (its result or its error object); a large one is cut, see
    /// [`ANSWER_KEPT`].
    pub answer: Option<Value>,
    /// Held at a breakpoint now.
    pub held: Option<Hold>,
    /// What gave the answer when the server did not (a fault rule, a breakpoint).
    pub injected: Option<String>,
    /// How the last hold of it ended (`continued`, `edited, continued`, …).
    pub released: Option<String>,
    /// The rounds of input it went through (what the server asked and what the agent
    /// answered) and the statuses of the task it became, oldest first (`round` and
    /// `task` lines of a version 2 log).
    pub rounds: Vec<Value>,
    /// The trace its request was recorded in, or that the agent's `_meta` named.
    pub trace_id: Option<String>,
}

/// A live call as the filter language sees it ([`super::filter`]): its words are its
/// tool, its status, its arguments and its answer, in any case when the word is all
/// lowercase.
impl super::filter::Subject for LiveCall {
    fn tool(&self) -> &str {
        &self.tool
    }
    fn method(&self) -> &str {
        self.method.as_deref().unwrap_or("tools/call")
    }
    fn status(&self) -> super::filter::Status {
        use super::filter::Status as S;
        match self.status {
            Status::Running => S::Unanswered,
            Status::Answered => S::Ok,
            Status::Failed(_) | Status::Cancelled => S::Error,
        }
    }
    fn injected(&self) -> bool {
        self.injected.is_some()
    }
    fn held(&self) -> bool {
        self.held.is_some()
    }
    fn code(&self) -> Option<&str> {
        match &self.status {
            Status::Failed(code) => Some(code),
            Status::Cancelled => Some("TOOL_CANCELLED"),
            _ => None,
        }
    }
    fn duration_ms(&self) -> Option<f64> {
        self.duration_ms
    }
    fn bytes(&self) -> Option<u64> {
        self.size.map(|n| n as u64)
    }
    fn rounds(&self) -> u32 {
        self.rounds
            .iter()
            .filter(|r| r.get("round").is_some())
            .count() as u32
    }
    fn declined(&self) -> u32 {
        self.rounds
            .iter()
            .filter(|r| r.get("round").is_some())
            .filter(|r| super::calls::answered_no(r.get("inputResponses").filter(|v| !v.is_null())))
            .count() as u32
    }
    fn holds(&self, _i: usize, word: &str) -> bool {
        let exact = word.chars().any(char::is_uppercase);
        let found = |text: &str| {
            if exact {
                text.contains(word)
            } else {
                text.to_lowercase().contains(word)
            }
        };
        found(&self.tool)
            || found(self.status.word())
            || found(&self.arguments.to_string())
            || self.answer.as_ref().is_some_and(|a| found(&a.to_string()))
    }
}

/// A call held at a breakpoint of the proxy.
#[derive(Debug, Clone, PartialEq)]
pub struct Hold {
    /// The hold's number, which the commands that release it name.
    pub id: u64,
    /// `request` (not sent to the server yet) or `response` (not given to the agent).
    pub way: String,
    /// The server's answer, for a held response: the whole tool result (`content`,
    /// `structuredContent`, `isError`), the shape an answer given in its place has.
    pub answer: Option<Value>,
    /// The tool's input schema, when the proxy saw it listed.
    pub schema: Option<Value>,
    /// The tool's output schema, when the proxy saw one listed: what a result given in
    /// the answer's place must fit.
    pub output_schema: Option<Value>,
    pub timeout_ms: u64,
    /// For a call sent again with its answers (a round held): what the server asked
    /// (`input_requests`, `null` when the proxy did not see it) and the answers the
    /// agent gives (`input_responses`), which an edit changes.
    pub round: Option<Value>,
}

/// Every call seen, and what the feed said about itself.
#[derive(Debug, Default)]
pub struct Live {
    calls: VecDeque<LiveCall>,
    /// Calls let go from the front: a call's index is its place plus this.
    dropped: usize,
    /// (session, call) → index, for the answers.
    open: HashMap<(usize, u64), usize>,
    /// (session, progress token as JSON) → index, for progress.
    tokens: HashMap<(usize, String), usize>,
    sessions: Vec<String>,
    /// What the feed is: the hello line of a control endpoint.
    pub about: Option<Value>,
    /// The breakpoints set on the proxy now: `(rule, on, what it matches)`.
    pub breakpoints: Vec<(u64, String, String)>,
    /// Answers to the commands this watcher sent, not yet shown: `(ok, what)`.
    pub answers: Vec<(bool, String)>,
    /// Handles fetched through the watched server for this watcher, not yet shown: the
    /// handle, and its page or why there is none.
    pub fetched: Vec<(String, Result<Value, String>)>,
    /// Lines that were not log entries.
    pub bad_lines: u64,
    /// Lines the feed said this watcher missed (it fell behind).
    pub missed: u64,
    pub notifications: u64,
}

impl Live {
    pub fn new() -> Live {
        Live::default()
    }

    /// Reads one line of a log or a feed. False when it was not a log entry.
    pub fn line(&mut self, line: &[u8]) -> bool {
        let text = line.trim_ascii();
        if text.is_empty() {
            return true;
        }
        let Ok(value) = serde_json::from_slice::<Value>(text) else {
            self.bad_lines += 1;
            return false;
        };
        if self.feed_message(&value) {
            return true;
        }
        match serde_json::from_value::<Entry>(value) {
            Ok(entry) => {
                self.apply(entry);
                true
            }
            Err(_) => {
                self.bad_lines += 1;
                false
            }
        }
    }

    /// A message of the live feed's own (its greeting, what it missed, holds,
    /// breakpoints, a command's answer): folded in, true. False for a log entry.
    fn feed_message(&mut self, value: &Value) -> bool {
        match value["type"].as_str() {
            Some("hello") => {
                self.about = Some(value.clone());
                return true;
            }
            Some("lagged") => {
                self.missed += value["missed"].as_u64().unwrap_or(0);
                return true;
            }
            Some("held" | "released") => {
                self.hold_event(value);
                return true;
            }
            Some("dropped") => {
                // The server answered, and a fault rule kept the answer from the agent,
                // which is still waiting.
                let session = self.session_number(value["session"].as_str().unwrap_or(""));
                if let Some(index) = value["call"]
                    .as_u64()
                    .and_then(|call| self.open.get(&(session, call)).copied())
                    && let Some(call) = self.get_mut(index)
                {
                    call.injected = value["how"].as_str().map(str::to_string);
                }
                return true;
            }
            Some("breakpoints") => {
                self.breakpoints = value["rules"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|r| {
                        (
                            r["rule"].as_u64().unwrap_or(0),
                            r["on"].as_str().unwrap_or("").to_string(),
                            r["match"].as_str().unwrap_or("").to_string(),
                        )
                    })
                    .collect();
                return true;
            }
            Some("ack" | "refused") if value["cmd"] == "fetch" => {
                let handle = value["handle"].as_str().unwrap_or("").to_string();
                let outcome = if value["type"] == "ack" {
                    Ok(value["result"].clone())
                } else {
                    Err(value["reason"]
                        .as_str()
                        .unwrap_or("no reason given")
                        .to_string())
                };
                self.fetched.push((handle, outcome));
                return true;
            }
            Some("ack") => {
                let what = match value["cmd"].as_str().unwrap_or("") {
                    "break" => format!("breakpoint {} set", value["rule"]),
                    "unbreak" => "breakpoint cleared".to_string(),
                    "fault" => format!("fault rule {} added", value["rule"]),
                    "unfault" => format!(
                        "{} fault rule(s) removed, {} left",
                        value["removed"], value["left"]
                    ),
                    cmd => format!("{cmd}: done"),
                };
                self.answers.push((true, what));
                return true;
            }
            Some("refused") => {
                self.answers.push((
                    false,
                    format!(
                        "{} refused: {}",
                        value["cmd"].as_str().unwrap_or("the command"),
                        value["reason"].as_str().unwrap_or("no reason given")
                    ),
                ));
                return true;
            }
            _ => {}
        }
        false
    }

    /// Folds one entry in.
    pub fn apply(&mut self, entry: Entry) {
        let session = self.session_number(&entry.session);
        match entry.kind {
            Kind::Request => self.request(session, entry),
            Kind::Response => self.response(session, &entry),
            Kind::Task => self.task(session, &entry),
            Kind::Round => self.round(session, &entry),
            Kind::Notification => self.notification(session, entry),
        }
    }

    /// A request: a new running call, the newest kept.
    fn request(&mut self, session: usize, entry: Entry) {
        let call = entry.call.unwrap_or(0);
        let index = self.dropped + self.calls.len();
        if let Some(token) = &entry.progress_token {
            self.tokens.insert((session, token.to_string()), index);
        }
        self.open.insert((session, call), index);
        let method = entry.other_method().map(str::to_string);
        let trace_id = entry.trace();
        self.calls.push_back(LiveCall {
            session,
            call,
            tool: entry.tool.unwrap_or_default(),
            arguments: entry
                .arguments
                .or(entry.params)
                .unwrap_or_else(|| json!({})),
            method,
            ts: entry.ts,
            status: Status::Running,
            progress: None,
            duration_ms: None,
            size: None,
            answer: None,
            held: None,
            injected: None,
            released: None,
            rounds: Vec::new(),
            trace_id,
        });
        if self.calls.len() > LIVE_KEPT {
            self.let_go();
        }
    }

    /// A response: its call answered, failed or cancelled, with the answer kept (cut
    /// when large).
    fn response(&mut self, session: usize, entry: &Entry) {
        let Some(index) = self.open.remove(&(session, entry.call.unwrap_or(0))) else {
            return;
        };
        self.tokens.retain(|_, i| *i != index);
        let Some(call) = self.get_mut(index) else {
            return;
        };
        call.duration_ms = entry.duration_ms;
        call.held = None;
        call.injected = entry.injected.clone();
        let answer = entry.result.clone().or_else(|| entry.error.clone());
        call.status = match &entry.error {
            None => Status::Answered,
            Some(error) => match error_code(error) {
                code if code == CANCELLED => Status::Cancelled,
                code => Status::Failed(code),
            },
        };
        if let Some(answer) = answer {
            let bytes = serde_json::to_vec(&answer).map_or(0, |b| b.len());
            call.size = Some(bytes);
            call.answer = Some(if bytes <= ANSWER_KEPT {
                answer
            } else {
                json!({ "kept": format!("{bytes} bytes, over the {ANSWER_KEPT} kept") })
            });
        }
    }

    /// The open call an entry of `session` belongs to, by its call number.
    fn open_call(&mut self, session: usize, entry: &Entry) -> Option<&mut LiveCall> {
        let index = self
            .open
            .get(&(session, entry.call.unwrap_or(0)))
            .copied()?;
        self.get_mut(index)
    }

    /// A task status of an open call: added to its rounds.
    fn task(&mut self, session: usize, entry: &Entry) {
        let Some(call) = self.open_call(session, entry) else {
            return;
        };
        // What a working task says of itself is its progress.
        if entry.status.as_deref() == Some("working")
            && let Some(said) = &entry.status_message
        {
            call.progress = Some(Progress {
                progress: call.progress.as_ref().map_or(0.0, |p| p.progress),
                total: None,
                message: Some(said.clone()),
            });
        }
        call.rounds.push(json!({
            "at": entry.ts,
            "task": entry.task_id,
            "status": entry.status,
            "statusMessage": entry.status_message,
        }));
    }

    /// A round of input of an open call: added to its rounds.
    fn round(&mut self, session: usize, entry: &Entry) {
        if let Some(call) = self.open_call(session, entry) {
            call.rounds.push(json!({
                "at": entry.ts,
                "round": entry.round,
                "inputRequests": entry.input_requests,
                "inputResponses": entry.input_responses,
            }));
        }
    }

    /// A notification, counted; a progress notification is the progress of the running
    /// call whose token it names.
    fn notification(&mut self, session: usize, entry: Entry) {
        self.notifications += 1;
        if entry.method.as_deref() != Some("notifications/progress") {
            return;
        }
        let params = entry.params.unwrap_or(Value::Null);
        let Some(index) = self
            .tokens
            .get(&(session, params["progressToken"].to_string()))
            .copied()
        else {
            return;
        };
        if let Some(call) = self.get_mut(index)
            && call.status == Status::Running
        {
            call.progress = Some(Progress {
                progress: params["progress"].as_f64().unwrap_or(0.0),
                total: params["total"].as_f64(),
                message: params["message"].as_str().map(str::to_string),
            });
        }
    }

    fn hold_event(&mut self, value: &Value) {
        let session = self.session_number(value["session"].as_str().unwrap_or(""));
        let Some(call) = value["call"].as_u64() else {
            return;
        };
        let Some(index) = self.open.get(&(session, call)).copied().or_else(|| {
            // A held response: its call is no longer open only once answered.
            self.calls
                .iter()
                .position(|c| c.session == session && c.call == call)
                .map(|i| i + self.dropped)
        }) else {
            return;
        };
        let Some(c) = self.get_mut(index) else {
            return;
        };
        if value["type"] == "held" {
            c.held = Some(Hold {
                id: value["hold"].as_u64().unwrap_or(0),
                way: value["way"].as_str().unwrap_or("request").to_string(),
                answer: value.get("answer").cloned().filter(|a| !a.is_null()),
                schema: value.get("schema").cloned(),
                output_schema: value.get("output_schema").cloned(),
                timeout_ms: value["timeout_ms"].as_u64().unwrap_or(0),
                round: value.get("round").cloned().filter(|r| !r.is_null()),
            });
        } else {
            c.held = None;
            c.released = value["how"].as_str().map(str::to_string);
            if let Some(args) = value.get("arguments") {
                c.arguments = args.clone();
            }
        }
    }

    /// The calls held now, oldest first.
    pub fn held(&self) -> impl Iterator<Item = &LiveCall> {
        self.calls.iter().filter(|c| c.held.is_some())
    }

    /// The calls kept, oldest first.
    pub fn calls(&self) -> &VecDeque<LiveCall> {
        &self.calls
    }

    /// The session ids, in the order their numbers were given (number 1 first).
    pub fn sessions(&self) -> &[String] {
        &self.sessions
    }

    /// How many calls are in each state: running, answered, failed, cancelled.
    pub fn counts(&self) -> [usize; 4] {
        let mut counts = [0; 4];
        for call in &self.calls {
            counts[match call.status {
                Status::Running => 0,
                Status::Answered => 1,
                Status::Failed(_) => 2,
                Status::Cancelled => 3,
            }] += 1;
        }
        counts
    }

    fn session_number(&mut self, id: &str) -> usize {
        match self.sessions.iter().position(|s| s == id) {
            Some(at) => at + 1,
            None => {
                self.sessions.push(id.to_string());
                self.sessions.len()
            }
        }
    }

    fn get_mut(&mut self, index: usize) -> Option<&mut LiveCall> {
        self.calls.get_mut(index.checked_sub(self.dropped)?)
    }

    fn let_go(&mut self) {
        if let Some(old) = self.calls.pop_front() {
            let index = self.dropped;
            self.dropped += 1;
            self.open.remove(&(old.session, old.call));
            self.tokens.retain(|_, i| *i != index);
        }
    }
}

/// An error object's code: the project's `error.code`, else a JSON-RPC error's
/// number, else `error`.
fn error_code(error: &Value) -> String {
    let inner = error.get("error").unwrap_or(error);
    match &inner["code"] {
        Value::String(code) => code.clone(),
        Value::Number(n) => format!("JSON-RPC {n}"),
        _ => "error".to_string(),
    }
}

/// What a follower or a watcher hands on.
#[derive(Debug)]
pub enum Fed {
    /// A whole line, its newline cut.
    Line(Vec<u8>),
    /// The feed ended, and why.
    Ended(String),
}

/// How often a followed file is looked at again when nothing new is in it.
const FOLLOW_POLL: Duration = Duration::from_millis(100);

/// Reads the log at `path` from its start, then follows it as it grows (as `tail -f`):
/// each whole line goes to `out`. A file cut shorter (truncated or replaced) is read
/// again from its start. Stops when `stop` is set or `out` is dropped.
///
/// # Errors
///
/// When the file cannot be opened.
pub fn follow_file(
    path: &Path,
    out: Sender<Fed>,
    stop: Arc<AtomicBool>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    let file = std::fs::File::open(path)?;
    let path: PathBuf = path.to_path_buf();
    std::thread::Builder::new()
        .name("follow-log".into())
        .spawn(move || {
            let mut reader = std::io::BufReader::with_capacity(1 << 16, file);
            let mut read: u64 = 0;
            let mut line = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                match reader.read_until(b'\n', &mut line) {
                    Ok(0) => {
                        // At the end: wait for more, and start again if it shrank.
                        std::thread::sleep(FOLLOW_POLL);
                        let len = std::fs::metadata(&path).map_or(read, |m| m.len());
                        if len < read {
                            match std::fs::File::open(&path) {
                                Ok(file) => reader = std::io::BufReader::new(file),
                                Err(e) => {
                                    let _ =
                                        out.send(Fed::Ended(format!("{}: {e}", path.display())));
                                    return;
                                }
                            }
                            read = 0;
                            line.clear();
                        }
                    }
                    Ok(n) => {
                        read += n as u64;
                        if line.last() == Some(&b'\n') {
                            line.pop();
                            if out.send(Fed::Line(std::mem::take(&mut line))).is_err() {
                                return;
                            }
                        }
                    }
                    Err(e) => {
                        let _ = out.send(Fed::Ended(format!("{}: {e}", path.display())));
                        return;
                    }
                }
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Recorder;
    use crate::source::SourceInfo;

    fn info() -> SourceInfo {
        SourceInfo {
            name: "sim",
            description: String::new(),
            block_height: 1,
            paused: true,
        }
    }

    fn lines_of(feed: &crate::record::Feed) -> Vec<Vec<u8>> {
        feed.watch().0.iter().map(|l| l.to_vec()).collect()
    }

    #[test]
    fn calls_go_from_running_with_progress_to_their_answers() {
        let feed = crate::record::Feed::new();
        let a = Recorder::to(None, Some(feed.clone())).unwrap();
        let b = a.new_session();
        let token = json!("tok-1");
        let one = a.request_tracked("slow", &json!({"n": 1}), Some(&token), &info());
        let two = b.request("fails", &json!({}), &info());
        a.notification(
            "notifications/progress",
            json!({"progressToken": "tok-1", "progress": 3, "total": 10, "message": "hashing"}),
        );
        let mut live = Live::new();
        for line in lines_of(&feed) {
            assert!(live.line(&line));
        }
        assert_eq!(live.sessions().len(), 2);
        let calls = live.calls();
        assert_eq!(calls[0].status, Status::Running);
        assert_eq!(
            calls[0].progress,
            Some(Progress {
                progress: 3.0,
                total: Some(10.0),
                message: Some("hashing".into())
            })
        );
        assert_eq!((calls[0].session, calls[1].session), (1, 2));

        let error = json!({"error": {"code": "RATE_LIMIT_EXCEEDED", "message": "slow down"}});
        b.response(two, "fails", Err(&error), Duration::from_millis(2), &info());
        a.response(
            one,
            "slow",
            Ok(&json!({"done": true})),
            Duration::from_millis(5),
            &info(),
        );
        let mut live = Live::new();
        for line in lines_of(&feed) {
            live.line(&line);
        }
        let calls = live.calls();
        assert_eq!(calls[0].status, Status::Answered);
        assert_eq!(calls[0].size, Some(br#"{"done":true}"#.len()));
        assert_eq!(calls[0].duration_ms, Some(5.0));
        assert_eq!(
            calls[1].status,
            Status::Failed("RATE_LIMIT_EXCEEDED".into())
        );
        assert_eq!(live.counts(), [0, 1, 1, 0]);
    }

    #[test]
    fn a_cancelled_call_and_lines_that_are_not_entries() {
        let mut live = Live::new();
        live.line(br#"{"type":"hello","server":"proxy"}"#);
        live.line(
            br#"{"v":1,"session":"s","seq":1,"type":"request","call":1,"tool":"t","arguments":{}}"#,
        );
        live.line(br#"{"v":1,"session":"s","seq":2,"type":"response","call":1,"tool":"t","error":{"error":{"code":"TOOL_CANCELLED","message":"x"}}}"#);
        assert!(!live.line(b"not json"));
        assert!(!live.line(br#"{"type":"nonsense"}"#));
        live.line(br#"{"type":"lagged","missed":7}"#);
        assert_eq!(live.calls()[0].status, Status::Cancelled);
        assert_eq!(live.bad_lines, 2);
        assert_eq!(live.missed, 7);
        assert_eq!(live.about.as_ref().unwrap()["server"], "proxy");
    }

    #[test]
    fn only_the_newest_calls_are_kept_and_late_answers_to_dropped_ones_are_ignored() {
        let mut live = Live::new();
        for call in 1..=(LIVE_KEPT as u64 + 3) {
            live.line(
                format!(r#"{{"session":"s","type":"request","call":{call},"tool":"t"}}"#)
                    .as_bytes(),
            );
        }
        assert_eq!(live.calls().len(), LIVE_KEPT);
        assert_eq!(live.calls()[0].call, 4);
        live.line(br#"{"session":"s","type":"response","call":1,"tool":"t","result":{}}"#);
        live.line(br#"{"session":"s","type":"response","call":4,"tool":"t","result":{}}"#);
        assert_eq!(live.calls()[0].status, Status::Answered);
        assert_eq!(live.counts()[1], 1);
    }

    #[test]
    fn a_followed_file_is_read_as_it_grows() {
        let path = std::env::temp_dir().join(format!("structs-follow-{}", std::process::id()));
        std::fs::write(&path, b"one\ntw").unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let handle = follow_file(&path, tx, stop.clone()).unwrap();
        let next = || match rx.recv_timeout(Duration::from_secs(5)).unwrap() {
            Fed::Line(l) => String::from_utf8(l).unwrap(),
            Fed::Ended(why) => panic!("ended: {why}"),
        };
        assert_eq!(next(), "one");
        {
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(&path)
                .unwrap();
            f.write_all(b"o\nthree\n").unwrap();
        }
        assert_eq!(next(), "two");
        assert_eq!(next(), "three");
        // Cut shorter: read again from the start.
        std::fs::write(&path, b"new\n").unwrap();
        assert_eq!(next(), "new");
        stop.store(true, Ordering::Relaxed);
        handle.join().unwrap();
        let _ = std::fs::remove_file(&path);
    }
}
