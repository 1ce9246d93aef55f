//! Session logs: every MCP exchange of a server as JSON Lines (`--record FILE`), and a
//! streaming reader for them.
//!
//! One line per request, per response and per notification, each a JSON object:
//!
//! ```text
//! {"v":1,"ts":"…","session":"s-…","seq":1,"type":"request","call":1,"tool":"structs_query_entity","arguments":{…},"source":"sim","block_height":120000}
//! {"v":1,"ts":"…","session":"s-…","seq":2,"type":"response","call":1,"tool":"structs_query_entity","duration_ms":1.2,"result":{…},"source":"sim","block_height":120000}
//! {"v":1,"ts":"…","session":"s-…","seq":3,"type":"notification","method":"notifications/progress","params":{…}}
//! ```
//!
//! A failed call's response has `error` (the tool's error object) instead of `result`.
//!
//! Version 2 adds one kind of line, `round`: a 2026-07-28 server asked for input before
//! it would answer the call (`input_required`), and the client sent the call again with
//! its answers. The call keeps its number across the rounds; each round's line holds
//! what was asked and what was answered (`null` when the client never sent the call
//! again):
//!
//! ```text
//! {"v":2,…,"type":"round","call":1,"tool":"confirm_delete","round":1,"input_requests":{…},"input_responses":{…}}
//! ```
//!
//! A call a server ran as a task (the Tasks extension) is one call too: `task` lines
//! between its request and its response say the task's id and each status it went
//! through, and the response is the task's result:
//!
//! ```text
//! {"v":2,…,"type":"task","call":2,"tool":"structs_plan_execute","task_id":"9f1c…","status":"working"}
//! ```
//!
//! Version 1 logs read as before: they have no `round` lines. A request line the tap
//! writes also keeps the `_meta` the host sent with the call (`meta`).
//!
//! Version 4 records every request a tap sees, not only tool calls: a request other
//! than `tools/call` has its `method` and its `params` (without `_meta`, secrets
//! redacted), and `tool` names what it is about for a reader that shows one name
//! (`prompts/get next`, `resources/read structs://docs/overview`, `tools/list`). Its
//! response holds the JSON-RPC result, or the JSON-RPC error object. A replay checks
//! tool calls and counts the rest:
//!
//! ```text
//! {"v":4,…,"type":"request","call":3,"method":"prompts/get","tool":"prompts/get next","params":{"name":"next","arguments":{"player_id":"1-1"}}}
//! ```
//!
//! Version 5 keeps, on a tap's response to a tool call, what the host got beyond the
//! value (`wire`: another content block, `resultType`, `_meta`), so that the answer can
//! be given again byte for byte ([`wire`]); a result of the usual shape has none.
//!
//! Writing: the file is opened for appending, so several servers (and runs) can share
//! one log. Each line goes out in one write of the whole line and its newline, under a
//! lock. A server that died mid-line leaves a torn last line; the next writer starts on
//! a fresh line, so the torn one stays on its own. A log that cannot be written (a full
//! disk) is counted and logged, and never fails the call it records.
//!
//! Reading: [`LogReader`] streams a log line by line and never holds more than one
//! line; lines that do not parse are reported as [`Problem`]s beside the entries,
//! never fatal.

pub mod call;
pub mod calls;
pub mod compare;
pub mod diff;
mod entry;
pub mod expect;
pub mod feed;
pub mod filter;
pub mod index;
pub mod live;
pub mod redact;
pub mod replay;
pub mod report;
pub mod shapes;
pub mod wire;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::source::SourceInfo;
pub use call::{Recorded, call_recorded, run_recorded};
pub use entry::{Entry, Kind, LogReader, Problem};
pub use feed::Feed;
pub use redact::{RedactConfig, Redaction};

/// The log format's version, in every line (2: `round` lines; 3: answers in the
/// chain's own shapes, `entity::records`; 4: requests other than tool calls; 5: a tool
/// call's whole result as the host got it, [`wire`]).
pub const VERSION: u64 = 5;

/// The first version whose answers are in the chain's own shapes: an older line's
/// answer is read through [`shapes`] before it is compared.
pub const SHAPES_VERSION: u64 = 3;

/// Appends one session's exchanges to a session log.
pub struct Recorder {
    log: Arc<LogFile>,
    session: String,
    seq: AtomicU64,
    calls: AtomicU64,
}

/// The open log, shared by the sessions written to it: a file, a live feed, or both.
struct LogFile {
    path: Option<PathBuf>,
    file: Option<Mutex<Sink>>,
    feed: Option<Feed>,
    failed_writes: AtomicU64,
    /// What no line holds ([`redact`]).
    redaction: Arc<Redaction>,
}

/// The file, and whether a write to it has failed since the last one that worked.
struct Sink {
    file: std::fs::File,
    failing: bool,
}

/// A session id unique to this process and moment.
fn new_session_id() -> String {
    static OPENED: AtomicU64 = AtomicU64::new(0);
    format!(
        "s-{}-{}-{}",
        chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ"),
        std::process::id(),
        OPENED.fetch_add(1, Ordering::Relaxed) + 1
    )
}

impl Recorder {
    /// Opens (or creates) `path` for appending. When the log ends in a torn line (a
    /// writer died mid-line), a newline is written first so the next entry starts clean.
    pub fn open(path: &Path) -> std::io::Result<Recorder> {
        Recorder::to(Some(path), None)
    }

    /// A recorder writing to `path` (as [`Recorder::open`]), to `feed`, or to both, with
    /// the standard redaction rules.
    pub fn to(path: Option<&Path>, feed: Option<Feed>) -> std::io::Result<Recorder> {
        Recorder::redacting(path, feed, Redaction::standard())
    }

    /// As [`Recorder::to`], hiding what `redaction` finds in each line before it is
    /// written.
    pub fn redacting(
        path: Option<&Path>,
        feed: Option<Feed>,
        redaction: Arc<Redaction>,
    ) -> std::io::Result<Recorder> {
        let file = match path {
            Some(path) => {
                // Made readable by its user alone, as the feed that carries the same
                // lines is; a log that is there already keeps its mode.
                let mut file = {
                    use std::os::unix::fs::OpenOptionsExt;
                    std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .read(true)
                        .mode(0o600)
                        .open(path)?
                };
                if ends_torn(&mut file)? {
                    file.write_all(b"\n")?;
                }
                Some(Mutex::new(Sink {
                    file,
                    failing: false,
                }))
            }
            None => None,
        };
        Ok(Recorder {
            log: Arc::new(LogFile {
                path: path.map(Path::to_path_buf),
                file,
                feed,
                failed_writes: AtomicU64::new(0),
                redaction,
            }),
            session: new_session_id(),
            seq: AtomicU64::new(0),
            calls: AtomicU64::new(0),
        })
    }

    /// A recorder writing to the session log at `path`, to a live `feed`, or both,
    /// hiding what `redaction` finds; none when neither is asked for.
    ///
    /// # Errors
    ///
    /// When the log cannot be opened (the message names `--record` and the file).
    pub fn maybe(
        path: Option<&Path>,
        feed: Option<Feed>,
        redaction: Arc<Redaction>,
    ) -> anyhow::Result<Option<Arc<Recorder>>> {
        if path.is_none() && feed.is_none() {
            return Ok(None);
        }
        Recorder::redacting(path, feed, redaction)
            .map(|r| Some(Arc::new(r)))
            .map_err(|e| {
                let path = path.map(|p| p.display().to_string()).unwrap_or_default();
                anyhow::anyhow!("--record: cannot open {path}: {e}")
            })
    }

    /// A recorder for another session (another client of an HTTP server) writing to
    /// the same log, with its own session id and numbering.
    pub fn new_session(&self) -> Recorder {
        Recorder {
            log: self.log.clone(),
            session: new_session_id(),
            seq: AtomicU64::new(0),
            calls: AtomicU64::new(0),
        }
    }

    /// The log file, when there is one.
    pub fn path(&self) -> Option<&Path> {
        self.log.path.as_deref()
    }

    /// The live feed, when there is one.
    pub fn feed(&self) -> Option<&Feed> {
        self.log.feed.as_ref()
    }

    /// True when a line written now goes somewhere: to the log file, or to a feed
    /// someone watches. A busy proxy skips the work of a line nobody would read.
    pub fn wanted(&self) -> bool {
        self.log.file.is_some() || self.log.feed.as_ref().is_some_and(|f| f.watchers() > 0)
    }

    /// This server's session id, in every line it writes.
    pub fn session(&self) -> &str {
        &self.session
    }

    /// Lines that could not be written (by every session of the log).
    pub fn failed_writes(&self) -> u64 {
        self.log.failed_writes.load(Ordering::Relaxed)
    }

    /// Records a tool call's request; the number returned pairs it with its response.
    pub fn request(&self, tool: &str, arguments: &Value, source: &SourceInfo) -> u64 {
        self.request_tracked(tool, arguments, None, source)
    }

    /// As [`Recorder::request`], with the progress token the client gave the call (so
    /// that a reader can tie `notifications/progress` to it).
    pub fn request_tracked(
        &self,
        tool: &str,
        arguments: &Value,
        progress_token: Option<&Value>,
        source: &SourceInfo,
    ) -> u64 {
        self.request_with_meta(tool, arguments, progress_token, None, None, source)
    }

    /// As [`Recorder::request_tracked`], keeping the `_meta` the client sent with the
    /// call (its protocol version, its capabilities, its log level; a 2026-07-28 client
    /// sends them on every request), secrets redacted as in the arguments; and the
    /// revision's HTTP headers it came with (`Mcp-Method`, `Mcp-Name`,
    /// `MCP-Protocol-Version`), when it came over HTTP.
    pub fn request_with_meta(
        &self,
        tool: &str,
        arguments: &Value,
        progress_token: Option<&Value>,
        meta: Option<&Value>,
        headers: Option<&Value>,
        source: &SourceInfo,
    ) -> u64 {
        let call = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        let mut line = self.head("request");
        line.insert("call".into(), json!(call));
        line.insert("tool".into(), json!(tool));
        let mut arguments = arguments.clone();
        let mut hidden = Vec::new();
        self.log.redaction.apply(&mut arguments, "", &mut hidden);
        line.insert("arguments".into(), arguments);
        if !hidden.is_empty() {
            line.insert("redacted".into(), json!(hidden));
        }
        if let Some(token) = progress_token {
            line.insert("progress_token".into(), token.clone());
        }
        self.keep_meta_and_headers(&mut line, meta, headers);
        stamp_source(&mut line, source);
        self.write(line);
        call
    }

    /// Records a request other than a tool call (a prompt got, a resource read, a
    /// list, a completion): its method, a label for it (`prompts/get next`), and its
    /// params without `_meta`, secrets redacted. The number returned pairs it with
    /// its response, which holds the JSON-RPC result or error object.
    pub fn request_other(
        &self,
        method: &str,
        label: &str,
        params: &Value,
        meta: Option<&Value>,
        headers: Option<&Value>,
        source: &SourceInfo,
    ) -> u64 {
        let call = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        let mut line = self.head("request");
        line.insert("call".into(), json!(call));
        line.insert("method".into(), json!(method));
        line.insert("tool".into(), json!(label));
        let mut params = params.clone();
        if let Some(object) = params.as_object_mut() {
            object.remove("_meta");
        }
        let mut hidden = Vec::new();
        self.log.redaction.apply(&mut params, "", &mut hidden);
        line.insert("params".into(), params);
        if !hidden.is_empty() {
            line.insert("redacted".into(), json!(hidden));
        }
        self.keep_meta_and_headers(&mut line, meta, headers);
        stamp_source(&mut line, source);
        self.write(line);
        call
    }

    /// Records a tool call's response: its result, or its error object.
    pub fn response(
        &self,
        call: u64,
        tool: &str,
        outcome: Result<&Value, &Value>,
        took: Duration,
        source: &SourceInfo,
    ) {
        self.response_injected(call, tool, outcome, took, source, None);
    }

    /// As [`Recorder::response`], for an answer the agent got from a fault rule or a
    /// breakpoint rather than from the server: `injected` says what was done.
    pub fn response_injected(
        &self,
        call: u64,
        tool: &str,
        outcome: Result<&Value, &Value>,
        took: Duration,
        source: &SourceInfo,
        injected: Option<&str>,
    ) {
        self.response_whole(call, tool, outcome, None, took, source, injected);
    }

    /// As [`Recorder::response_injected`], with what the host got beyond the value
    /// (`wire`, [`wire::shrink`]).
    #[allow(clippy::too_many_arguments)]
    pub fn response_whole(
        &self,
        call: u64,
        tool: &str,
        outcome: Result<&Value, &Value>,
        wire: Option<Value>,
        took: Duration,
        source: &SourceInfo,
        injected: Option<&str>,
    ) {
        let mut line = self.head("response");
        if let Some(what) = injected {
            line.insert("injected".into(), json!(what));
        }
        line.insert("call".into(), json!(call));
        line.insert("tool".into(), json!(tool));
        line.insert(
            "duration_ms".into(),
            json!((took.as_secs_f64() * 1e6).round() / 1e3),
        );
        let rules = &self.log.redaction;
        let mut hidden = Vec::new();
        match outcome {
            Ok(v) => {
                let mut v = v.clone();
                rules.apply_answer(&mut v, "result", &mut hidden);
                line.insert("result".into(), v)
            }
            Err(e) => {
                let mut e = e.clone();
                rules.apply_answer(&mut e, "error", &mut hidden);
                line.insert("error".into(), e)
            }
        };
        if let Some(mut wire) = wire {
            rules.apply_answer(&mut wire, "wire", &mut hidden);
            line.insert("wire".into(), wire);
        }
        if !hidden.is_empty() {
            line.insert("redacted".into(), json!(hidden));
        }
        stamp_source(&mut line, source);
        self.write(line);
    }

    /// Records one round of input a call went through: what the server asked
    /// (`input_requests`) and what the client answered when it sent the call again
    /// (`None` when it never did).
    pub fn round(
        &self,
        call: u64,
        tool: &str,
        round: u64,
        input_requests: &Value,
        input_responses: Option<&Value>,
    ) {
        let mut line = self.head("round");
        line.insert("call".into(), json!(call));
        line.insert("tool".into(), json!(tool));
        line.insert("round".into(), json!(round));
        let rules = &self.log.redaction;
        line.insert(
            "input_requests".into(),
            rules.applied_answer(input_requests),
        );
        let mut answered = input_responses.cloned().unwrap_or(Value::Null);
        rules.apply(&mut answered, "", &mut Vec::new());
        line.insert("input_responses".into(), answered);
        self.write(line);
    }

    /// Records what a call's task said of itself (the Tasks extension): its id and its
    /// status, as the server made it or as the client polled it, each time it changed.
    ///
    /// `message` is the task's `statusMessage` (a search's progress while it works):
    /// a new message is a line of its own too.
    pub fn task(&self, call: u64, tool: &str, task_id: &str, status: &str, message: Option<&str>) {
        let mut line = self.head("task");
        line.insert("call".into(), json!(call));
        line.insert("tool".into(), json!(tool));
        line.insert("task_id".into(), json!(task_id));
        line.insert("status".into(), json!(status));
        if let Some(message) = message {
            let shown = self.log.redaction.text(message);
            line.insert(
                "status_message".into(),
                json!(shown.as_deref().unwrap_or(message)),
            );
        }
        self.write(line);
    }

    /// Records a notification the server sent (`notifications/progress`,
    /// `notifications/resources/updated`, ...).
    pub fn notification(&self, method: &str, params: Value) {
        let mut line = self.head("notification");
        line.insert("method".into(), json!(method));
        line.insert("params".into(), self.log.redaction.applied_answer(&params));
        self.write(line);
    }

    fn head(&self, kind: &str) -> Map<String, Value> {
        let mut line = Map::new();
        line.insert("v".into(), json!(VERSION));
        line.insert(
            "ts".into(),
            json!(chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true)),
        );
        line.insert("session".into(), json!(self.session));
        line.insert(
            "seq".into(),
            json!(self.seq.fetch_add(1, Ordering::Relaxed) + 1),
        );
        line.insert("type".into(), json!(kind));
        // The trace and span it was written in, when traces are exported.
        if let Some((trace_id, span_id)) = crate::context::trace::current_ids() {
            line.insert("trace_id".into(), json!(trace_id));
            line.insert("span_id".into(), json!(span_id));
        }
        line
    }

    fn write(&self, line: Map<String, Value>) {
        let mut bytes = match serde_json::to_vec(&Value::Object(line)) {
            Ok(b) => b,
            Err(e) => {
                self.failed(&e.to_string());
                return;
            }
        };
        bytes.push(b'\n');
        if let Some(feed) = &self.log.feed {
            feed.publish(&bytes);
        }
        let Some(file) = &self.log.file else {
            return;
        };
        let mut sink = file.lock().unwrap_or_else(|e| e.into_inner());
        // A write that failed part way (a full disk) left part of a line: end it, so
        // that it reads as one torn line and the entries after it stay whole.
        if sink.failing && ends_torn(&mut sink.file).unwrap_or(false) {
            bytes.insert(0, b'\n');
        }
        match sink.file.write_all(&bytes) {
            Ok(()) => sink.failing = false,
            Err(e) => {
                sink.failing = true;
                drop(sink);
                self.failed(&e.to_string());
            }
        }
    }

    fn failed(&self, why: &str) {
        let n = self.log.failed_writes.fetch_add(1, Ordering::Relaxed) + 1;
        // Once, then every 100th: a full disk should not flood the log either.
        if n == 1 || n.is_multiple_of(100) {
            let path = self.path().map(Path::display);
            tracing::error!(path = ?path, failed = n, "cannot write the session log: {why}");
        }
    }
}

/// The most of a value [`redacted_text`] keeps (a span attribute, not a log).
pub const CONTENT_TEXT_MAX: usize = 8 * 1024;

/// `v` as compact JSON with its secrets redacted as a log line's are, cut to
/// [`CONTENT_TEXT_MAX`] bytes (at a character's edge, with `…` after): what a span may
/// carry of a call's arguments or result.
pub fn redacted_text(v: &Value) -> String {
    let mut text = Redaction::standard().applied(v).to_string();
    if text.len() > CONTENT_TEXT_MAX {
        let mut end = CONTENT_TEXT_MAX;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

/// A request line keeps the `_meta` the client sent (secrets redacted) and the HTTP
/// headers it came with, when there are any.
impl Recorder {
    fn keep_meta_and_headers(
        &self,
        line: &mut Map<String, Value>,
        meta: Option<&Value>,
        headers: Option<&Value>,
    ) {
        let rules = &self.log.redaction;
        if let Some(meta) = meta.filter(|m| m.is_object()) {
            line.insert("meta".into(), rules.applied(meta));
        }
        if let Some(headers) = headers.filter(|h| h.as_object().is_some_and(|o| !o.is_empty())) {
            line.insert("headers".into(), rules.applied(headers));
        }
    }
}

fn stamp_source(line: &mut Map<String, Value>, source: &SourceInfo) {
    line.insert("source".into(), json!(source.name));
    // A source with no chain (a tap's) states no height rather than a false 0.
    if let Some(height) = source.known_height() {
        line.insert("block_height".into(), json!(height));
    }
}

/// True when the file is not empty and its last byte is not a newline.
fn ends_torn(file: &mut std::fs::File) -> std::io::Result<bool> {
    use std::io::{Read, Seek, SeekFrom};
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(false);
    }
    file.seek(SeekFrom::Start(len - 1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    Ok(last[0] != b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info() -> SourceInfo {
        SourceInfo {
            name: "sim",
            description: String::new(),
            block_height: 120_000,
            paused: true,
        }
    }

    fn temp(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("structs-record-{}-{name}", std::process::id()));
        let _ = std::fs::remove_file(&dir);
        dir
    }

    fn read(path: &Path) -> (Vec<Entry>, Vec<Problem>) {
        let mut entries = Vec::new();
        let mut problems = Vec::new();
        for item in LogReader::open(path).unwrap() {
            match item.unwrap() {
                Ok(e) => entries.push(e),
                Err(p) => problems.push(p),
            }
        }
        (entries, problems)
    }

    #[test]
    fn a_new_log_is_readable_by_its_user_alone() {
        use std::os::unix::fs::PermissionsExt;
        let path = temp("private");
        let _ = std::fs::remove_file(&path);
        // (The process's umask is left as it is: other tests make files meanwhile. The
        // mode asked for is below any umask's.)
        drop(Recorder::open(&path).unwrap());
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn requests_responses_and_notifications_read_back() {
        let path = temp("roundtrip");
        let r = Recorder::open(&path).unwrap();
        let call = r.request("structs_query_entity", &json!({"id": "1-1"}), &info());
        r.notification("notifications/progress", json!({"progress": 1}));
        r.response(
            call,
            "structs_query_entity",
            Ok(&json!({"id": "1-1"})),
            Duration::from_micros(1500),
            &info(),
        );
        let call2 = r.request("structs_query_entity", &json!({"id": "1-0"}), &info());
        r.response(
            call2,
            "structs_query_entity",
            Err(&json!({"error": {"code": "VALIDATION_INVALID_FORMAT"}})),
            Duration::ZERO,
            &info(),
        );
        let (entries, problems) = read(&path);
        assert!(problems.is_empty());
        let kinds: Vec<Kind> = entries.iter().map(|e| e.kind).collect();
        assert_eq!(
            kinds,
            [
                Kind::Request,
                Kind::Notification,
                Kind::Response,
                Kind::Request,
                Kind::Response
            ]
        );
        assert_eq!(
            entries.iter().map(|e| e.seq).collect::<Vec<_>>(),
            [1, 2, 3, 4, 5]
        );
        assert_eq!(entries[2].call, Some(call));
        assert_eq!(entries[2].duration_ms, Some(1.5));
        assert_eq!(entries[2].result, Some(json!({"id": "1-1"})));
        assert_eq!(
            entries[4].error.as_ref().unwrap()["error"]["code"],
            "VALIDATION_INVALID_FORMAT"
        );
        assert_eq!(entries[0].block_height, Some(120_000));
        assert!(
            entries
                .iter()
                .all(|e| e.session == r.session() && e.v == VERSION)
        );
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn a_source_with_no_chain_states_no_block_height() {
        let path = temp("no-height");
        let r = Recorder::open(&path).unwrap();
        let tap = SourceInfo {
            name: "proxy",
            description: "a tap".into(),
            block_height: 0,
            paused: false,
        };
        let call = r.request("add", &json!({"a": 1}), &tap);
        r.response(call, "add", Ok(&json!({"sum": 2})), Duration::ZERO, &tap);
        let (entries, problems) = read(&path);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(entries.len(), 2);
        assert!(entries.iter().all(|e| e.block_height.is_none()));
        assert!(
            !std::fs::read_to_string(&path)
                .unwrap()
                .contains("block_height")
        );
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn secrets_never_reach_the_log() {
        let path = temp("secrets");
        let r = Recorder::open(&path).unwrap();
        let tx = "0a8f".repeat(100);
        let call = r.request(
            "structs_action_submit_transaction",
            &json!({"tx_bytes": tx, "nested": [{"Password": "hunter2"}], "mode": "sync"}),
            &info(),
        );
        r.response(
            call,
            "structs_action_submit_transaction",
            Ok(&json!({"txhash": "AB"})),
            Duration::ZERO,
            &info(),
        );
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("0a8f"), "{text}");
        assert!(!text.contains("hunter2"), "{text}");
        let (entries, _) = read(&path);
        let args = entries[0].arguments.as_ref().unwrap();
        assert_eq!(args["tx_bytes"], "[redacted: 400 bytes]");
        assert_eq!(args["mode"], "sync");
        assert_eq!(entries[0].redacted, ["tx_bytes", "nested.0.Password"]);

        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn a_torn_last_line_is_reported_and_the_next_writer_starts_clean() {
        let path = temp("torn");
        {
            let r = Recorder::open(&path).unwrap();
            r.request("structs_list_players", &json!({}), &info());
        }
        // A writer that died mid-line.
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(br#"{"v":1,"type":"resp"#)
            .unwrap();
        let (entries, problems) = read(&path);
        assert_eq!(entries.len(), 1);
        assert_eq!(problems, [Problem::TornLastLine { line: 2, bytes: 19 }]);
        // The next run appends on a fresh line: its entries are whole, the torn one
        // stays a bad line of its own.
        let r = Recorder::open(&path).unwrap();
        r.request("structs_list_players", &json!({"page_size": 5}), &info());
        let (entries, problems) = read(&path);
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[1].arguments, Some(json!({"page_size": 5})));
        assert!(
            matches!(problems[..], [Problem::BadLine { line: 2, .. }]),
            "{problems:?}"
        );
        assert_ne!(entries[0].session, entries[1].session);
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn a_log_that_cannot_be_written_is_counted_not_fatal() {
        let full = Path::new("/dev/full");
        if !full.exists() {
            return;
        }
        let r = Recorder::open(full).unwrap();
        let call = r.request("structs_list_players", &json!({}), &info());
        r.response(
            call,
            "structs_list_players",
            Ok(&json!({})),
            Duration::ZERO,
            &info(),
        );
        assert_eq!(r.failed_writes(), 2);
    }
}
