//! `proxy --upstream URL`: the server's end of a session spoken as MCP's streamable
//! HTTP, so that the pumps, the broker and the tap see the same line streams as they
//! do with a child over stdio.
//!
//! Each line the session sends the server is POSTed as it is, with the session id and
//! protocol version the server gave and the upstream token, if any. A 2026-07-28
//! request also carries the revision's headers: the ones its host sent (behind the
//! HTTP face), else the ones its body says ([`super::headers`]). What comes back
//! (a JSON body, or the events of a server-sent event stream) is written back as lines,
//! one message per line: a message is passed byte for byte unless it spans several
//! lines, when it is written again on one. Once the session is initialized, a GET
//! stream carries what the server sends outside any request.
//!
//! A request is never left without an answer: when the server cannot be reached,
//! answers with an HTTP error that is not the request's own JSON-RPC answer, or ends its
//! stream before answering, the request gets a JSON-RPC error (`-32000`) whose data is
//! the project's error object (`API_UNAVAILABLE`, or `API_ERROR` for an HTTP error),
//! saying what happened.
//!
//! When the host closes its end, the calls in flight get [`super::STOP_DEADLINE`] to be
//! answered; then the server's session is ended with a `DELETE`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

/// The header that carries the session id.
const SESSION: &str = "mcp-session-id";
/// The header that carries the negotiated protocol version.
const VERSION: &str = "mcp-protocol-version";

/// The longest a message the session waits on (its `initialize`, a notification, a
/// response to the server) may take to be taken.
const INLINE_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a lost GET stream waits before it is opened again.
const LISTEN_AGAIN: Duration = Duration::from_secs(1);

/// An HTTP MCP server the proxy passes a session to.
#[derive(Clone)]
pub struct Upstream {
    url: String,
    /// The URL as it is shown: its password, if any, replaced ([`crate::guard::redact_url`]).
    shown: String,
    token: Option<String>,
    http: reqwest::Client,
    /// The headers the HTTP face's host sent with each request, sent on as they came
    /// ([`super::headers`]); `None` behind a stdio face.
    notes: Option<Arc<super::headers::HostHeaders>>,
    /// A session log answering in the server's place (`serve-recording`).
    recorded: Option<Arc<super::recorded::Recording>>,
}

impl Upstream {
    /// The server at `url` (its MCP endpoint), sent `Authorization: Bearer TOKEN` when
    /// `token` is given.
    ///
    /// # Errors
    ///
    /// When `url` is not an http or https URL.
    pub fn new(url: &str, token: Option<String>) -> anyhow::Result<Upstream> {
        let shown = crate::guard::redact_url(url);
        let parsed = reqwest::Url::parse(url)
            .map_err(|e| anyhow::anyhow!("--upstream {shown:?} is not a URL: {e}"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            anyhow::bail!("--upstream {shown:?} is not an http or https URL");
        }
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| anyhow::anyhow!("cannot make an HTTP client: {e}"))?;
        Ok(Upstream {
            url: url.to_string(),
            shown,
            token,
            http,
            notes: None,
            recorded: None,
        })
    }

    /// A recording answering in a server's place: each session passed to it is served
    /// from the log ([`super::recorded`]).
    pub fn recording(recording: Arc<super::recorded::Recording>) -> Upstream {
        let _ = rustls::crypto::ring::default_provider().install_default();
        Upstream {
            url: String::new(),
            shown: recording.shown().to_string(),
            token: None,
            http: reqwest::Client::new(),
            notes: None,
            recorded: Some(recording),
        }
    }

    /// The same server, sending each request with the headers its host sent, as noted
    /// in `notes`.
    pub(super) fn with_notes(mut self, notes: Arc<super::headers::HostHeaders>) -> Upstream {
        self.notes = Some(notes);
        self
    }

    /// The URL as it may be shown: with any password replaced.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// Passes a session: reads the lines of `input` (what the host sends), and writes
    /// to `output` what the server answers, until `input` ends and the calls in flight
    /// are answered (or [`super::STOP_DEADLINE`] has passed). `output` is shut when done.
    ///
    /// True when it ended because the server no longer knows the session (it answered
    /// 404): the host must start again, as if its server had restarted.
    pub async fn run<R, W>(self, input: R, output: W) -> bool
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        if let Some(recording) = self.recorded {
            return recording.run(input, output).await;
        }
        let (tx, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();
        let writer = tokio::spawn(async move {
            let mut output = output;
            while let Some(bytes) = rx.recv().await {
                if output.write_all(&bytes).await.is_err() || output.flush().await.is_err() {
                    break;
                }
            }
            let _ = output.shutdown().await;
        });
        let link = Arc::new(Link {
            up: self,
            session: Mutex::new(None),
            version: Mutex::new(None),
            out: tx,
            gone: tokio_util::sync::CancellationToken::new(),
        });
        let mut lines = BufReader::new(input);
        let mut line = Vec::new();
        let mut calls = JoinSet::new();
        let mut listening: Option<tokio::task::JoinHandle<()>> = None;
        loop {
            line.clear();
            tokio::select! {
                read = lines.read_until(b'\n', &mut line) => match read {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                },
                () = link.gone.cancelled() => break,
            }
            let body = line.trim_ascii();
            if body.is_empty() {
                continue;
            }
            let message: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
            let id = message.get("id").filter(|id| !id.is_null()).cloned();
            let method = message["method"].as_str();
            // The revision's headers: the host's where it sent them, else the body's.
            let headers = id
                .as_ref()
                .zip(link.up.notes.as_ref())
                .and_then(|(id, notes)| notes.take(&id.to_string()))
                .and_then(|v| match v {
                    Value::Object(h) => Some(h),
                    _ => None,
                })
                .unwrap_or_else(|| super::headers::from_body(&message));
            match (method, id) {
                // Its answer names the session every later message carries.
                (Some("initialize"), Some(id)) => {
                    link.clone()
                        .post(body.to_vec(), headers, Some(id), true)
                        .await
                }
                (Some(_), Some(id)) => {
                    calls.spawn(link.clone().post(body.to_vec(), headers, Some(id), false));
                }
                _ => {
                    link.clone().post(body.to_vec(), headers, None, true).await;
                    if method == Some("notifications/initialized") && listening.is_none() {
                        listening = Some(tokio::spawn(link.clone().listen()));
                    }
                }
            }
            while calls.try_join_next().is_some() {}
        }
        let _ = tokio::time::timeout(super::STOP_DEADLINE, async {
            while calls.join_next().await.is_some() {}
        })
        .await;
        calls.abort_all();
        if let Some(task) = listening {
            task.abort();
        }
        let gone = link.gone.is_cancelled();
        if !gone {
            link.end().await;
        }
        drop(link);
        while calls.join_next().await.is_some() {}
        let _ = writer.await;
        gone
    }
}

/// One session with the server.
struct Link {
    up: Upstream,
    session: Mutex<Option<String>>,
    version: Mutex<Option<String>>,
    /// Lines for the session's host (through the proxy's pump).
    out: mpsc::UnboundedSender<Vec<u8>>,
    /// Cancelled when the server no longer knows the session.
    gone: tokio_util::sync::CancellationToken,
}

impl Link {
    fn headers(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        self.headers_but(request, false)
    }

    /// [`Link::headers`], leaving out the session's protocol version when the request
    /// says its own.
    fn headers_but(
        &self,
        mut request: reqwest::RequestBuilder,
        own_version: bool,
    ) -> reqwest::RequestBuilder {
        if let Some(token) = &self.up.token {
            request = request.header(AUTHORIZATION, format!("Bearer {token}"));
        }
        if let Some(session) = self
            .session
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
        {
            request = request.header(SESSION, session);
        }
        if let Some(version) = (!own_version)
            .then(|| {
                self.version
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .clone()
            })
            .flatten()
        {
            request = request.header(VERSION, version);
        }
        request
    }

    /// Writes a message for the host; true when it is the answer to `id`.
    fn relay(&self, message: &[u8], id: Option<&Value>) -> bool {
        let text = message.trim_ascii();
        if text.is_empty() {
            return false;
        }
        let parsed: Option<Value> = serde_json::from_slice(text).ok();
        let mut line = match (&parsed, text.contains(&b'\n')) {
            (Some(v), true) => v.to_string().into_bytes(),
            (None, true) => text
                .iter()
                .map(|b| if *b == b'\n' { b' ' } else { *b })
                .collect(),
            (_, false) => text.to_vec(),
        };
        line.push(b'\n');
        let _ = self.out.send(line);
        let Some(v) = parsed else { return false };
        if let Some(version) = v["result"]["protocolVersion"].as_str()
            && v["result"].get("serverInfo").is_some()
        {
            *self.version.lock().unwrap_or_else(|e| e.into_inner()) = Some(version.to_string());
        }
        id.is_some_and(|id| {
            v.get("id") == Some(id) && (v.get("result").is_some() || v.get("error").is_some())
        })
    }

    /// An answer to `id` saying the server did not give one.
    fn fail(&self, id: &Value, code: &str, message: String) {
        tracing::warn!(upstream = %self.up.shown, "{message}");
        let answer = json!({"jsonrpc": "2.0", "id": id, "error": {
            "code": -32000,
            "message": message,
            "data": {"error": {"code": code, "message": message}},
        }});
        let mut line = answer.to_string().into_bytes();
        line.push(b'\n');
        let _ = self.out.send(line);
    }

    /// POSTs one message and passes on what comes back; a request (`id`) is answered
    /// whatever happens.
    async fn post(
        self: Arc<Self>,
        body: Vec<u8>,
        headers: serde_json::Map<String, Value>,
        id: Option<Value>,
        inline: bool,
    ) {
        let batch = body.first() == Some(&b'[');
        let request = self.request(body, &headers, inline);
        let mut response = match request.send().await {
            Ok(r) => r,
            Err(e) => {
                let message = format!(
                    "cannot reach the upstream server {}: {}",
                    self.up.shown,
                    with_causes(&e.without_url())
                );
                match &id {
                    Some(id) => self.fail(id, "API_UNAVAILABLE", message),
                    None => tracing::warn!("{message}"),
                }
                return;
            }
        };
        if let Some(session) = response
            .headers()
            .get(SESSION)
            .and_then(|v| v.to_str().ok())
        {
            *self.session.lock().unwrap_or_else(|e| e.into_inner()) = Some(session.to_string());
        }
        let status = response.status();
        let events = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("text/event-stream"));
        let answered = if status.is_success() && events {
            self.relay_events(&mut response, id.as_ref()).await
        } else {
            match body_within(&mut response, MESSAGE_MAX).await {
                Ok(bytes) if status.is_success() => self.relay(&bytes, id.as_ref()),
                Ok(bytes) => self.refused(status, &bytes, id.as_ref(), batch),
                Err(said) => {
                    tracing::warn!(upstream = %self.up.shown, "{said}");
                    if let Some(id) = &id {
                        self.fail(
                            id,
                            "API_ERROR",
                            format!("the upstream server's answer {said}; it was not passed on"),
                        );
                    }
                    return;
                }
            }
        };
        if let Some(id) = &id
            && !answered
        {
            self.fail(
                id,
                "API_UNAVAILABLE",
                format!(
                    "the upstream server {} ended its answer without answering (HTTP {status})",
                    self.up.shown
                ),
            );
        }
    }

    /// The POST of one message: the session's headers (its protocol version left out
    /// when the request says its own), the revision's headers the request carries, and
    /// [`INLINE_TIMEOUT`] for a message the session waits on.
    fn request(
        &self,
        body: Vec<u8>,
        headers: &serde_json::Map<String, Value>,
        inline: bool,
    ) -> reqwest::RequestBuilder {
        let own_version = headers.contains_key(super::headers::NAMES[2]);
        let mut request = self
            .headers_but(self.up.http.post(&self.up.url), own_version)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream");
        for (name, value) in headers {
            if let Some(value) = value.as_str() {
                // The request's own version over the session's.
                request = request.header(name.as_str(), value);
            }
        }
        let mut request = request.body(body);
        if inline {
            // The session's next message waits for this one: a stalled server must
            // not stall it for ever. (A call takes as long as it takes.)
            request = request.timeout(INLINE_TIMEOUT);
        }
        request
    }

    /// Passes on the messages of an event stream as they come, until it ends or breaks;
    /// true when `id` was answered (by one of them, or saying an event went past
    /// [`MESSAGE_MAX`]).
    async fn relay_events(&self, response: &mut reqwest::Response, id: Option<&Value>) -> bool {
        let mut answered = false;
        let mut sse = Sse::default();
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    for message in sse.feed(&chunk) {
                        answered |= self.relay(&message, id);
                    }
                    if sse.overlong {
                        // An event that does not end within the limit: the stream
                        // is dropped, and the request answered saying why.
                        tracing::warn!(upstream = %self.up.shown, limit_bytes = MESSAGE_MAX, "the upstream server sent an event over the limit; its stream was closed");
                        if let (false, Some(id)) = (answered, id) {
                            self.fail(id, "API_ERROR", format!(
                                "the upstream server sent an event over {} MB; it was not passed on",
                                MESSAGE_MAX >> 20
                            ));
                            answered = true;
                        }
                        break;
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    tracing::warn!(upstream = %self.up.shown, "the upstream server's stream broke: {}", e.without_url());
                    break;
                }
            }
        }
        answered
    }

    /// The body of an HTTP error: passed on when it is the request's own answer, else
    /// the request answered with what the server said (the session ending when the
    /// server no longer knows it); true when `id` was answered.
    fn refused(
        &self,
        status: reqwest::StatusCode,
        bytes: &[u8],
        id: Option<&Value>,
        batch: bool,
    ) -> bool {
        let v: Value = serde_json::from_slice(bytes).unwrap_or(Value::Null);
        if id.is_some() && v.get("id") == id {
            return self.relay(bytes, id);
        }
        if let Some(id) = id {
            let said = v["error"]["message"]
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| String::from_utf8_lossy(bytes).trim().to_string());
            let message = if self.lost(status) {
                format!(
                    "the upstream server no longer knows this session (HTTP 404): {said}; the session ends"
                )
            } else {
                format!("the upstream server answered HTTP {status}: {said}")
            };
            self.fail(id, "API_ERROR", message);
            return true;
        }
        // A batch refused: the host gets the error, as a server on stdio answers one.
        // A notification or a response gets no answer.
        if batch && v.get("jsonrpc").is_some() && v.get("error").is_some() {
            self.relay(bytes, None);
        }
        self.lost(status);
        tracing::warn!(upstream = %self.up.shown, %status, "the upstream server refused a message");
        false
    }

    /// True (and the session ends) when `status` says the server no longer knows the
    /// session it gave.
    fn lost(&self, status: reqwest::StatusCode) -> bool {
        let gone = status == reqwest::StatusCode::NOT_FOUND
            && self
                .session
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .is_some();
        if gone {
            tracing::warn!(upstream = %self.up.shown, "the upstream server no longer knows this session: it ends, and the host must start again");
            self.gone.cancel();
        }
        gone
    }

    /// The GET stream of what the server sends outside requests, opened again when
    /// it breaks, until the server says it has none (405) or the session is gone.
    async fn listen(self: Arc<Self>) {
        loop {
            let request = self
                .headers(self.up.http.get(&self.up.url))
                .header(ACCEPT, "text/event-stream");
            match request.send().await {
                Ok(mut response) if response.status().is_success() => {
                    let mut sse = Sse::default();
                    while let Ok(Some(chunk)) = response.chunk().await {
                        for message in sse.feed(&chunk) {
                            self.relay(&message, None);
                        }
                        if sse.overlong {
                            tracing::warn!(upstream = %self.up.shown, limit_bytes = MESSAGE_MAX, "the upstream server's stream sent an event over the limit; the stream is opened again");
                            break;
                        }
                    }
                }
                Ok(response) => {
                    let status = response.status();
                    if status != reqwest::StatusCode::METHOD_NOT_ALLOWED {
                        tracing::warn!(upstream = %self.up.shown, %status, "the upstream server has no stream for this session");
                    }
                    return;
                }
                Err(_) => {}
            }
            tokio::time::sleep(LISTEN_AGAIN).await;
        }
    }

    /// Ends the server's session.
    async fn end(&self) {
        if self
            .session
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_none()
        {
            return;
        }
        let request = self.headers(self.up.http.delete(&self.up.url));
        let _ = tokio::time::timeout(Duration::from_secs(2), request.send()).await;
    }
}

/// An error and what caused it, on one line (reqwest's own message names no cause).
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let said = c.to_string();
        if !text.contains(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        cause = c.source();
    }
    text
}

/// The most bytes one message from the upstream server may take: an event's data,
/// or a JSON body (the proxy's own line limit).
pub const MESSAGE_MAX: usize = crate::mcp::wire::PEER_LINE_MAX;

/// A response's body, read whole unless it goes past `max` bytes (then why not).
async fn body_within(response: &mut reqwest::Response, max: usize) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                if body.len() + chunk.len() > max {
                    return Err(format!("went past {} MB", max >> 20));
                }
                body.extend_from_slice(&chunk);
            }
            Ok(None) => return Ok(body),
            Err(e) => return Err(format!("broke off: {}", with_causes(&e.without_url()))),
        }
    }
}

/// Reads a server-sent event stream as it comes: the data of each event. An event
/// (or a line) that goes past [`MESSAGE_MAX`] sets `overlong`, and nothing more is
/// kept of it.
#[derive(Default)]
struct Sse {
    line: Vec<u8>,
    data: Vec<u8>,
    has_data: bool,
    overlong: bool,
}

impl Sse {
    fn feed(&mut self, mut chunk: &[u8]) -> Vec<Vec<u8>> {
        let mut events = Vec::new();
        while !chunk.is_empty() && !self.overlong {
            let Some(at) = chunk.iter().position(|b| *b == b'\n') else {
                if self.line.len() + self.data.len() + chunk.len() > MESSAGE_MAX {
                    self.overlong = true;
                    self.line = Vec::new();
                    self.data = Vec::new();
                } else {
                    self.line.extend_from_slice(chunk);
                }
                break;
            };
            if self.line.len() + self.data.len() + at > MESSAGE_MAX {
                self.overlong = true;
                self.line = Vec::new();
                self.data = Vec::new();
                break;
            }
            self.line.extend_from_slice(&chunk[..at]);
            chunk = &chunk[at + 1..];
            let line = std::mem::take(&mut self.line);
            let line = line.strip_suffix(b"\r").unwrap_or(&line);
            if line.is_empty() {
                // A priming event (an id, no data) carries no message.
                if self.has_data && !self.data.is_empty() {
                    events.push(std::mem::take(&mut self.data));
                }
                self.has_data = false;
                self.data.clear();
            } else if let Some(value) = line.strip_prefix(b"data:") {
                if self.has_data {
                    self.data.push(b'\n');
                }
                self.data
                    .extend_from_slice(value.strip_prefix(b" ").unwrap_or(value));
                self.has_data = true;
            }
        }
        events
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_read_across_chunks_and_comments_and_ids_are_skipped() {
        let mut sse = Sse::default();
        assert!(
            sse.feed(b": keep-alive\n\nid: 1\nretry: 3000\ndata:\n\n")
                .is_empty()
        );
        assert!(sse.feed(b"event: message\ndata: {\"a\"").is_empty());
        assert_eq!(sse.feed(b":1}\r\n\r\n"), [b"{\"a\":1}".to_vec()]);
        assert_eq!(
            sse.feed(b"data: {\"b\":\ndata: 2}\n\ndata: 3\n\n"),
            [b"{\"b\":\n2}".to_vec(), b"3".to_vec()]
        );
    }

    #[test]
    fn an_event_that_goes_past_the_limit_is_let_go() {
        // A line that never ends.
        let mut sse = Sse::default();
        let block = vec![b'x'; 1 << 20];
        assert!(sse.feed(b"data: ").is_empty());
        for _ in 0..=(MESSAGE_MAX >> 20) {
            assert!(sse.feed(&block).is_empty());
        }
        assert!(sse.overlong);
        assert!(
            sse.line.capacity() + sse.data.capacity() < 1 << 20,
            "let go"
        );
        // An event of many lines, each short, that together go past it.
        let mut sse = Sse::default();
        let mut line = b"data: ".to_vec();
        line.extend_from_slice(&block);
        line.push(b'\n');
        for _ in 0..=(MESSAGE_MAX >> 20) {
            sse.feed(&line);
        }
        assert!(sse.overlong);
    }
}
