//! One line of a session log ([`Entry`]), what a line that is not one is ([`Problem`]),
//! and the streaming reader ([`LogReader`]).

use std::io::BufRead;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

/// What a line of a log is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Request,
    Response,
    Notification,
    /// A round of input a call went through (version 2).
    Round,
    /// A status of the task a call became (version 2).
    Task,
}

/// One line of a session log.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Entry {
    #[serde(default)]
    pub v: u64,
    #[serde(default)]
    pub ts: String,
    #[serde(default)]
    pub session: String,
    #[serde(default)]
    pub seq: u64,
    #[serde(rename = "type")]
    pub kind: Kind,
    #[serde(default)]
    pub call: Option<u64>,
    #[serde(default)]
    pub tool: Option<String>,
    #[serde(default)]
    pub arguments: Option<Value>,
    #[serde(default)]
    pub result: Option<Value>,
    #[serde(default)]
    pub error: Option<Value>,
    #[serde(default)]
    pub duration_ms: Option<f64>,
    #[serde(default)]
    pub source: Option<String>,
    #[serde(default)]
    pub block_height: Option<u64>,
    #[serde(default)]
    pub method: Option<String>,
    #[serde(default)]
    pub params: Option<Value>,
    /// The progress token the client gave a request, when it asked for progress.
    #[serde(default)]
    pub progress_token: Option<Value>,
    /// The `_meta` the client sent with a request, as the tap saw it.
    #[serde(default)]
    pub meta: Option<Value>,
    /// The revision's HTTP headers a request came with (`Mcp-Method`, `Mcp-Name`,
    /// `MCP-Protocol-Version`), as the tap's HTTP face saw them.
    #[serde(default)]
    pub headers: Option<Value>,
    /// The arguments a request's line holds without their values (secrets), by path.
    #[serde(default)]
    pub redacted: Vec<String>,
    /// On a response the agent did not get from the server: what gave it instead (a
    /// fault rule, a breakpoint).
    #[serde(default)]
    pub injected: Option<String>,
    /// On a round: its number in the call, from 1.
    #[serde(default)]
    pub round: Option<u64>,
    /// On a round: what the server asked (`inputRequests`).
    #[serde(default)]
    pub input_requests: Option<Value>,
    /// On a round: what the client answered (`inputResponses`), `null` when it did not.
    #[serde(default)]
    pub input_responses: Option<Value>,
    /// On a task line: the task's id.
    #[serde(default)]
    pub task_id: Option<String>,
    /// On a task line: its status (`working`, `input_required`, `completed`, …).
    #[serde(default)]
    pub status: Option<String>,
    /// On a task line: what the task said of itself (`statusMessage`), when it said.
    #[serde(default)]
    pub status_message: Option<String>,
    /// The trace the line was written in, when traces were exported (32 hex digits).
    #[serde(default)]
    pub trace_id: Option<String>,
    /// The span the line was written in (16 hex digits).
    #[serde(default)]
    pub span_id: Option<String>,
    /// On a tap's response to a tool call: what the host got beyond the value
    /// (version 5, [`wire`]).
    #[serde(default)]
    pub wire: Option<Value>,
}

impl Entry {
    /// The span the line was written in, as a `traceparent`, when it names one.
    pub fn recorded_span(&self) -> Option<String> {
        let (trace, span) = (self.trace_id.as_ref()?, self.span_id.as_ref()?);
        Some(format!("00-{trace}-{span}-01"))
    }

    /// The trace of a request's line: the one it was written in, else the one its
    /// `_meta` names (`traceparent`, as an agent sent it).
    pub fn trace(&self) -> Option<String> {
        self.trace_id.clone().or_else(|| {
            let parent = self.meta.as_ref()?["traceparent"].as_str()?;
            let sc = crate::context::trace::parse_traceparent(parent)?;
            Some(sc.trace_id().to_string())
        })
    }

    /// A request for something other than a tool call (version 4): its method.
    pub fn other_method(&self) -> Option<&str> {
        self.method
            .as_deref()
            .filter(|m| self.kind == Kind::Request && *m != "tools/call")
    }

    /// A response's answer: its result, or its error object (`null` for other lines).
    pub fn answer(&self) -> Value {
        self.result
            .clone()
            .or_else(|| self.error.clone())
            .unwrap_or(Value::Null)
    }
}

/// A line of a log that is not an entry. Reported, never fatal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// The last line has no newline and does not parse: a writer died mid-line.
    TornLastLine { line: u64, bytes: usize },
    /// A line in the middle that does not parse (a torn line that later writes
    /// followed, or something else).
    BadLine {
        line: u64,
        bytes: usize,
        error: String,
    },
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Problem::TornLastLine { line, bytes } => write!(
                f,
                "line {line}: the last line is torn ({bytes} bytes, no newline): a writer stopped mid-line; the entries before it are whole"
            ),
            Problem::BadLine { line, bytes, error } => {
                write!(f, "line {line} ({bytes} bytes) is not a log entry: {error}")
            }
        }
    }
}

/// Streams a log's entries, one line at a time.
pub struct LogReader<R> {
    input: R,
    line: u64,
    buf: Vec<u8>,
    /// Bytes read so far (for progress on large logs).
    pub offset: u64,
}

impl LogReader<std::io::BufReader<std::fs::File>> {
    pub fn open(path: &Path) -> std::io::Result<Self> {
        let file = std::fs::File::open(path)?;
        Ok(LogReader::new(std::io::BufReader::with_capacity(
            1 << 16,
            file,
        )))
    }
}

impl<R: BufRead> LogReader<R> {
    pub fn new(input: R) -> LogReader<R> {
        LogReader {
            input,
            line: 0,
            buf: Vec::new(),
            offset: 0,
        }
    }

    /// The number of the line read last (from 1).
    pub fn line(&self) -> u64 {
        self.line
    }
}

impl<R: BufRead> Iterator for LogReader<R> {
    type Item = std::io::Result<Result<Entry, Problem>>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            self.buf.clear();
            let n = match self.input.read_until(b'\n', &mut self.buf) {
                Ok(0) => return None,
                Ok(n) => n,
                Err(e) => return Some(Err(e)),
            };
            self.offset += n as u64;
            self.line += 1;
            let whole = self.buf.last() == Some(&b'\n');
            let text = self.buf.trim_ascii();
            if text.is_empty() {
                continue;
            }
            return Some(Ok(match serde_json::from_slice::<Entry>(text) {
                Ok(entry) => Ok(entry),
                Err(_) if !whole => Err(Problem::TornLastLine {
                    line: self.line,
                    bytes: text.len(),
                }),
                Err(e) => Err(Problem::BadLine {
                    line: self.line,
                    bytes: text.len(),
                    error: e.to_string(),
                }),
            }));
        }
    }
}
