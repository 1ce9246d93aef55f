//! `proxy --upstream URL --http ADDR`: the proxy as a streamable HTTP server, so that
//! hosts that speak HTTP (and several agents at once) can be tapped.
//!
//! Each host session (its `initialize`) gets a session of its own through the proxy:
//! its own connection to the upstream server ([`super::Upstream`]), its own session in
//! the log and the live feed (so the Live tab tells agents apart as `#1`, `#2`, …), and
//! its own broker, on the board every session shares (breakpoints and fault rules
//! apply to all of them; a held call is named by a number unique across them).
//!
//! Messages pass as they come, as in the stdio proxy. What differs from the upstream
//! server is only the HTTP around them: the session id is the proxy's own, and a POST
//! that holds requests is always answered with a server-sent event stream, which
//! carries their answers and what the server sends about them (progress for their
//! tokens), then ends. Messages the server sends outside any request go to the
//! session's GET stream, or, when none is open, to an open POST stream, or wait (at
//! most [`WAITING_MAX`]) for a stream to open.
//!
//! A stateless host (2026-07-28: no `initialize`, no session id, its version in each
//! request's `_meta`) has no session to pass. Each of its requests gets a passage of its
//! own ([`Hub::passage`]): a link upstream and pumps that end with the request's stream,
//! so that whatever the server sends on that stream (log messages, a listen stream's
//! notifications) comes back on it alone. Every stateless request is recorded in one
//! session of the log, beside the others, so that a call sent again with its answers
//! or a task polled from another request is the same call. The revision's headers
//! (`Mcp-Method`, `Mcp-Name`, `MCP-Protocol-Version`) go upstream as the host sent them,
//! and into the log with the call ([`super::headers`]).
//!
//! Who may connect is the rule of `--headless --http` ([`crate::guard`]): loopback
//! unless `--allow-remote` with a token; `Host` and `Origin` checked; the token, when
//! set, on every request. Sessions are capped and end when idle, as `--http`'s do.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::io::DuplexStream;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::broker::Board;
use super::headers::HostHeaders;
use super::{Options, PIPE_BYTES, Tap, Upstream, serve_commands, start};
use crate::error::{ErrorCode, ToolError};
use crate::guard::Guard;
use crate::mcp::wire::http::{EXPOSURE, HttpOptions, MAX_BODY_BYTES, PATH};
use crate::record::Recorder;

/// Messages kept for a session while it has no stream open to send them on.
pub const WAITING_MAX: usize = 1_000;

/// How often an open stream carries a comment, so that idle connections stay up.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// The header that carries the session id.
const SESSION: &str = "mcp-session-id";

/// Serves hosts over streamable HTTP at `options.listen`, passing each session to
/// `upstream`, until a signal.
///
/// # Errors
///
/// When the address cannot be bound, or may not be without a token.
pub async fn serve_http(
    options: &HttpOptions,
    upstream: Upstream,
    proxy: Options,
    bound: impl FnOnce(std::net::SocketAddr),
) -> anyhow::Result<()> {
    let addr = tokio::net::lookup_host(&options.listen)
        .await
        .map_err(|e| anyhow::anyhow!("--http {}: {e}", options.listen))?
        .next()
        .ok_or_else(|| anyhow::anyhow!("--http {}: no address", options.listen))?;
    crate::guard::check_bind(
        addr,
        options.token.as_deref(),
        options.allow_remote,
        EXPOSURE,
    )?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))?;
    let addr = listener.local_addr()?;
    let board = Board::new(proxy.feed, proxy.faults);
    serve_commands(board.clone(), proxy.commands);
    let hub = Arc::new(Hub {
        upstream,
        board,
        recorder: proxy.recorder,
        hold_timeout: proxy.hold_timeout,
        max_sessions: options.sessions.max,
        idle: options.sessions.idle,
        sessions: Mutex::new(HashMap::new()),
        stateless: std::sync::OnceLock::new(),
    });
    let stop = CancellationToken::new();
    {
        let (hub, stop) = (hub.clone(), stop.clone());
        tokio::spawn(async move {
            let every = (hub.idle / 4).clamp(Duration::from_millis(100), Duration::from_secs(5));
            loop {
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = tokio::time::sleep(every) => hub.sweep().await,
                }
            }
        });
    }
    let guard = Guard::new(addr, options.token.as_deref());
    let app = axum::Router::new()
        .route(PATH, axum::routing::post(post).get(get).delete(delete))
        .with_state(hub.clone())
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(axum::middleware::from_fn(
            crate::mcp::wire::http::limit_body,
        ))
        .layer(axum::middleware::from_fn_with_state(
            guard,
            crate::mcp::wire::http::check_request,
        ));
    tracing::info!(%addr, path = PATH, upstream = hub.upstream.shown(), "proxying MCP over HTTP");
    bound(addr);
    let serving = tokio::spawn(crate::mcp::wire::listen::serve(
        listener,
        app,
        options.connections,
        stop.clone(),
    ));
    super::stop_signal().await;
    stop.cancel();
    let ending: Vec<Arc<HostSession>> = hub.lock().drain().map(|(_, s)| s).collect();
    for session in ending {
        session.close().await;
    }
    // The stateless hosts' calls still in rounds or running as tasks end in the log.
    if let Some(tap) = hub.stateless.get() {
        tap.session_ended();
    }
    let _ = tokio::time::timeout(super::STOP_DEADLINE, serving).await;
    Ok(())
}

/// The sessions of the proxy's HTTP face.
struct Hub {
    upstream: Upstream,
    board: Arc<Board>,
    recorder: Option<Arc<Recorder>>,
    hold_timeout: Duration,
    max_sessions: usize,
    idle: Duration,
    sessions: Mutex<HashMap<String, Arc<HostSession>>>,
    /// The tap every stateless host's request is recorded beside (one session in the
    /// log), made at the first.
    stateless: std::sync::OnceLock<Arc<Tap>>,
}

impl Hub {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<HostSession>>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn find(&self, headers: &HeaderMap) -> Result<(String, Arc<HostSession>), Refused> {
        let id = headers
            .get(SESSION)
            .and_then(|v| v.to_str().ok())
            .ok_or(Refused::NoSession)?;
        match self.lock().get(id) {
            Some(s) => Ok((id.to_string(), s.clone())),
            None => Err(Refused::UnknownSession),
        }
    }

    /// A new session: its own link upstream, pumps, broker and log session.
    fn open(self: &Arc<Self>) -> Result<(String, Arc<HostSession>), Refused> {
        // The count and the insert under one lock, so that the cap holds.
        let mut sessions = self.lock();
        if sessions.len() >= self.max_sessions {
            return Err(Refused::Full(self.max_sessions));
        }
        let id = crate::random::hex128();
        let recorder = self.recorder.as_ref().map(|r| Arc::new(r.new_session()));
        let notes = Arc::new(HostHeaders::default());
        let tap = Arc::new(
            Tap::new(recorder, format!("{} (over HTTP)", self.upstream.shown()))
                .with_headers(notes.clone()),
        );
        let (session, output) = self.link(tap, notes, false);
        sessions.insert(id.clone(), session.clone());
        drop(sessions);
        let (hub, routed, key) = (Arc::downgrade(self), session.clone(), id.clone());
        tokio::spawn(async move {
            routed.route_all(output).await;
            // The server's side ended: so does the session, and its streams.
            if let Some(hub) = hub.upgrade() {
                hub.lock().remove(&key);
            }
            routed.routes().streams.clear();
        });
        Ok((id, session))
    }

    /// A host's way to the upstream server: its own link upstream (sending the
    /// headers in `notes`), the pumps through `tap` and the board, and the host's end
    /// of it, with the stream of what comes back for the host.
    fn link(
        &self,
        tap: Arc<Tap>,
        notes: Arc<HostHeaders>,
        one_shot: bool,
    ) -> (Arc<HostSession>, DuplexStream) {
        tap.spans().over_tcp();
        let (input, host_in) = tokio::io::duplex(PIPE_BYTES);
        let (host_out, output) = tokio::io::duplex(PIPE_BYTES);
        let (server_in, upstream_reads) = tokio::io::duplex(PIPE_BYTES);
        let (upstream_writes, server_out) = tokio::io::duplex(PIPE_BYTES);
        tokio::spawn(
            self.upstream
                .clone()
                .with_notes(notes.clone())
                .run(upstream_reads, upstream_writes),
        );
        let running = start(
            (host_in, host_out),
            (server_out, server_in),
            &self.board,
            tap,
            self.hold_timeout,
        );
        tokio::spawn(running.finish(None));
        let session = Arc::new(HostSession {
            input: tokio::sync::Mutex::new(Some(input)),
            routes: Mutex::new(Routes::default()),
            last: Mutex::new(Instant::now()),
            notes,
            one_shot,
        });
        (session, output)
    }

    /// A passage for one request of a stateless (2026-07-28) host, which has no
    /// session: its own link upstream and pumps, which end with the request's stream,
    /// so that what the server sends on the request's stream (its log messages, a
    /// listen stream's notifications) comes back on it alone. Its calls are recorded
    /// beside every other stateless request's, one session in the log, so that a
    /// retry with answers or a task's poll is the same call.
    fn passage(self: &Arc<Self>, notes: Arc<HostHeaders>) -> Arc<HostSession> {
        let root = self.stateless.get_or_init(|| {
            let recorder = self.recorder.as_ref().map(|r| Arc::new(r.new_session()));
            Arc::new(Tap::new(
                recorder,
                format!("{} (stateless hosts over HTTP)", self.upstream.shown()),
            ))
        });
        let tap = Arc::new(root.beside(notes.clone()));
        let (session, output) = self.link(tap, notes, true);
        let routed = session.clone();
        tokio::spawn(async move { routed.route_all(output).await });
        session
    }

    /// Ends the sessions idle for longer than allowed.
    async fn sweep(&self) {
        let idle: Vec<Arc<HostSession>> = {
            let mut sessions = self.lock();
            let ids: Vec<String> = sessions
                .iter()
                .filter(|(_, s)| s.routes().streams.is_empty() && s.idle_for() >= self.idle)
                .map(|(id, _)| id.clone())
                .collect();
            ids.iter().filter_map(|id| sessions.remove(id)).collect()
        };
        for session in idle {
            tracing::info!("ended a proxied HTTP session idle for {:?}", self.idle);
            session.close().await;
        }
    }
}

/// Why a request finds no session.
enum Refused {
    NoSession,
    UnknownSession,
    /// At the most sessions.
    Full(usize),
}

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        match self {
            Refused::NoSession => rpc_refusal(
                StatusCode::BAD_REQUEST,
                -32600,
                ErrorCode::ValidationMissingField,
                "no Mcp-Session-Id header: send initialize first, then its session id with every request",
            ),
            Refused::UnknownSession => rpc_refusal(
                StatusCode::NOT_FOUND,
                -32600,
                ErrorCode::ResourceNotFound,
                "no such session (it ended, or the proxy was restarted): initialize again",
            ),
            Refused::Full(max) => {
                let mut refused = rpc_refusal(
                    StatusCode::SERVICE_UNAVAILABLE,
                    -32000,
                    ErrorCode::ResourceUnavailable,
                    &format!("the proxy has {max} sessions open, its most: try again later"),
                );
                refused
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
                refused
            }
        }
    }
}

/// One host's session.
struct HostSession {
    /// Where the host's messages go in (to the session's pump); `None` once closed.
    input: tokio::sync::Mutex<Option<DuplexStream>>,
    routes: Mutex<Routes>,
    last: Mutex<Instant>,
    /// The headers each request of the host came with, for the tap and the link.
    notes: Arc<HostHeaders>,
    /// A stateless host's passage for one request ([`Hub::passage`]): it closes when
    /// the request's stream ends.
    one_shot: bool,
}

/// Where the session's messages for the host go.
#[derive(Default)]
struct Routes {
    /// Open streams (POST answers and the GET stream), by number.
    streams: BTreeMap<u64, mpsc::UnboundedSender<Vec<u8>>>,
    next: u64,
    /// A request's id (as JSON text) → the stream its answer goes on.
    by_id: HashMap<String, u64>,
    /// A progress token (as JSON text) → the stream of the request that gave it.
    by_token: HashMap<String, u64>,
    /// The GET stream.
    listener: Option<u64>,
    /// Messages with no stream to go on yet.
    waiting: VecDeque<Vec<u8>>,
}

impl HostSession {
    fn routes(&self) -> std::sync::MutexGuard<'_, Routes> {
        self.routes.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn touch(&self) {
        *self.last.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }

    fn idle_for(&self) -> Duration {
        self.last
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .elapsed()
    }

    /// Closes the host's side: the session's pump ends, and with it the link upstream
    /// (which ends the server's session).
    async fn close(self: &Arc<Self>) {
        // A send stuck on a stalled session holds the input; the close then happens
        // when it lets go, and whoever asked does not wait for it.
        let session = self.clone();
        tokio::spawn(async move {
            if let Some(mut input) = session.input.lock().await.take() {
                let _ = input.shutdown().await;
            }
        });
    }

    /// Writes a host's message into the session; false when it is closed.
    async fn send(&self, line: &[u8]) -> bool {
        let mut input = self.input.lock().await;
        let Some(w) = input.as_mut() else {
            return false;
        };
        w.write_all(line).await.is_ok() && w.flush().await.is_ok()
    }

    /// A new stream for the answers to `ids`, and the progress of `tokens`.
    fn open_stream(
        self: &Arc<Self>,
        ids: &[String],
        tokens: &[String],
        listener: bool,
    ) -> StreamGuard {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut routes = self.routes();
        let n = routes.next;
        routes.next += 1;
        for id in ids {
            routes.by_id.insert(id.clone(), n);
        }
        for token in tokens {
            routes.by_token.insert(token.clone(), n);
        }
        if listener {
            routes.listener = Some(n);
            // What waited for a stream goes first.
            for line in routes.waiting.drain(..) {
                let _ = tx.send(line);
            }
        }
        routes.streams.insert(n, tx);
        StreamGuard {
            session: self.clone(),
            n,
            rx,
        }
    }

    /// Sends each message the session has for the host on its stream, until the
    /// session's side ends.
    async fn route_all(&self, output: DuplexStream) {
        use tokio::io::AsyncBufReadExt;
        // Whole lines, however long: a message is never cut into events.
        let mut output = tokio::io::BufReader::with_capacity(64 * 1024, output);
        loop {
            let mut line = Vec::new();
            match output.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => return,
                Ok(_) => self.route(line),
            }
        }
    }

    fn route(&self, line: Vec<u8>) {
        let parsed: Value = serde_json::from_slice(&line).unwrap_or(Value::Null);
        // A batch (from a stdio-minded server) goes where its first message goes.
        let message = match &parsed {
            Value::Array(items) => items.first().unwrap_or(&Value::Null),
            one => one,
        };
        let mut routes = self.routes();
        let id = message.get("id").filter(|id| !id.is_null());
        let own = match (message.get("method").and_then(Value::as_str), id) {
            (None, Some(id)) => routes.by_id.remove(&id.to_string()),
            (Some("notifications/progress"), None) => routes
                .by_token
                .get(&message["params"]["progressToken"].to_string())
                .copied(),
            _ => None,
        };
        let target = own
            .filter(|n| routes.streams.contains_key(n))
            .or(routes.listener.filter(|n| routes.streams.contains_key(n)))
            .or_else(|| routes.streams.keys().next_back().copied());
        let line = match target {
            None => line,
            Some(n) => match routes.streams[&n].send(line) {
                Ok(()) => return,
                // Its stream went away meanwhile: the message waits for another.
                Err(mpsc::error::SendError(line)) => line,
            },
        };
        if routes.waiting.len() >= WAITING_MAX {
            routes.waiting.pop_front();
            tracing::warn!(
                kept = WAITING_MAX,
                "a proxied session had no stream open for the server's messages: the oldest was dropped"
            );
        }
        routes.waiting.push_back(line);
    }
}

/// An open stream; when it is dropped (ended, or its client went away) its routes go.
struct StreamGuard {
    session: Arc<HostSession>,
    n: u64,
    rx: mpsc::UnboundedReceiver<Vec<u8>>,
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        let mut routes = self.session.routes();
        let n = self.n;
        routes.streams.remove(&n);
        routes.by_id.retain(|_, s| *s != n);
        routes.by_token.retain(|_, s| *s != n);
        if routes.listener == Some(n) {
            routes.listener = None;
        }
        drop(routes);
        if self.session.one_shot {
            // A stateless request's passage ends with its stream: the link upstream
            // closes, and what the server still sends has no one to go to.
            let session = self.session.clone();
            tokio::spawn(async move { session.close().await });
            return;
        }
        // What came for this stream after its last answer (or after its host went
        // away) goes on another stream, or waits for one.
        self.rx.close();
        while let Ok(line) = self.rx.try_recv() {
            self.session.route(line);
        }
        self.session.touch();
    }
}

/// The events of a stream: each message as one event, a comment now and then, and the
/// end once the answers to `ids` (when any) have gone.
fn event_stream(guard: StreamGuard, ids: Vec<String>) -> Body {
    let remaining: HashSet<String> = ids.into_iter().collect();
    let listener = remaining.is_empty();
    let state = (guard, remaining, false);
    let stream = futures_util::stream::unfold(
        state,
        move |(mut guard, mut remaining, done)| async move {
            if done {
                return None;
            }
            let next = tokio::select! {
                got = guard.rx.recv() => got,
                () = tokio::time::sleep(KEEP_ALIVE) => {
                    return Some((Ok::<_, Infallible>(Bytes::from_static(b": keep-alive\n\n")), (guard, remaining, false)));
                }
            };
            let line = next?;
            let mut ended = false;
            if !listener && let Ok(parsed) = serde_json::from_slice::<Value>(&line) {
                let messages = match &parsed {
                    Value::Array(items) => items.as_slice(),
                    one => std::slice::from_ref(one),
                };
                for m in messages {
                    if m.get("method").is_none()
                        && let Some(id) = m.get("id")
                    {
                        remaining.remove(&id.to_string());
                    }
                }
                ended = remaining.is_empty();
            }
            let text = line.strip_suffix(b"\n").unwrap_or(&line);
            let mut event = Vec::with_capacity(text.len() + 24);
            event.extend_from_slice(b"event: message\ndata: ");
            event.extend_from_slice(text);
            event.extend_from_slice(b"\n\n");
            Some((Ok(Bytes::from(event)), (guard, remaining, ended)))
        },
    );
    Body::from_stream(stream)
}

/// A JSON-RPC error body (id `null`) whose data is the project's error object, as the
/// server's own HTTP face answers.
fn rpc_refusal(status: StatusCode, code: i32, project: ErrorCode, message: &str) -> Response {
    crate::mcp::wire::http::refusal(
        status,
        rmcp::model::ErrorCode(code),
        ToolError::new(project, message),
    )
}

fn sse_response(body: Body, session: Option<&str>) -> Response {
    let mut response = (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response();
    if let Some(id) = session.and_then(|s| HeaderValue::from_str(s).ok()) {
        response.headers_mut().insert(SESSION, id);
    }
    response
}

/// A host's message: into its session, and a stream of the answers back.
async fn post(State(hub): State<Arc<Hub>>, headers: HeaderMap, body: Bytes) -> Response {
    // A body not said to be JSON (text/plain, a form, none said) is what a web page
    // can post anywhere: 415, as the server's own face answers, and it goes nowhere.
    if let Err(refused) = crate::guard::body_type(&axum::http::Method::POST, &headers) {
        return crate::mcp::wire::http::refuse(refused);
    }
    let text = body.trim_ascii();
    let Ok(message) = serde_json::from_slice::<Value>(text) else {
        return rpc_refusal(
            StatusCode::BAD_REQUEST,
            -32700,
            ErrorCode::ValidationInvalidFormat,
            "the body is not JSON: a POST carries one JSON-RPC message",
        );
    };
    let messages: &[Value] = match &message {
        Value::Array(items) => items,
        one => std::slice::from_ref(one),
    };
    if messages.is_empty() || messages.iter().any(|m| !m.is_object()) {
        return rpc_refusal(
            StatusCode::BAD_REQUEST,
            -32600,
            ErrorCode::ValidationInvalidValue,
            "a POST carries JSON-RPC messages (objects)",
        );
    }
    if message.is_array() {
        return rpc_refusal(
            StatusCode::BAD_REQUEST,
            -32600,
            ErrorCode::ValidationInvalidValue,
            "a POST carries one JSON-RPC message: batches are not part of MCP since 2025-06-18",
        );
    }
    let initialize = messages
        .iter()
        .any(|m| m["method"] == "initialize" && m.get("id").is_some_and(|id| !id.is_null()));
    let mut ids = Vec::new();
    let mut tokens = Vec::new();
    for m in messages {
        if m.get("method").is_some()
            && let Some(id) = m.get("id").filter(|id| !id.is_null())
        {
            ids.push(id.to_string());
            if let Some(token) = m["params"]["_meta"].get("progressToken") {
                tokens.push(token.to_string());
            }
        }
    }
    // A stateless host (2026-07-28) sends no session id and no initialize: each of its
    // requests has a passage of its own.
    let stateless = !initialize && headers.get(SESSION).is_none() && is_stateless(&message);
    let (id, session) = match if stateless {
        let notes = Arc::new(HostHeaders::default());
        Ok((String::new(), hub.passage(notes)))
    } else if initialize {
        hub.open()
    } else {
        hub.find(&headers)
    } {
        Ok(found) => found,
        Err(refused) => return refused.into_response(),
    };
    session.touch();
    for id in &ids {
        session.notes.note(id, &headers);
    }
    let stream = (!ids.is_empty()).then(|| session.open_stream(&ids, &tokens, false));
    // One message per line: a body on several lines is written again on one.
    let mut line = if text.contains(&b'\n') {
        message.to_string().into_bytes()
    } else {
        text.to_vec()
    };
    line.push(b'\n');
    let sent = session.send(&line).await;
    if stateless && stream.is_none() {
        // A notification: nothing comes back for it.
        session.close().await;
    }
    if !sent {
        hub.lock().remove(&id);
        return rpc_refusal(
            StatusCode::NOT_FOUND,
            -32600,
            ErrorCode::ResourceNotFound,
            "the session has ended: initialize again",
        );
    }
    match stream {
        Some(stream) => sse_response(event_stream(stream, ids), initialize.then_some(&id)),
        None => StatusCode::ACCEPTED.into_response(),
    }
}

/// Whether a message is of the stateless revision: its `_meta` names a protocol
/// version (2026-07-28 sends it on every request), or it asks `server/discover`.
fn is_stateless(message: &Value) -> bool {
    message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"].is_string()
        || message["method"] == "server/discover"
}

/// The session's stream of what the server sends outside requests.
async fn get(State(hub): State<Arc<Hub>>, headers: HeaderMap) -> Response {
    let wants_events = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.contains("text/event-stream"));
    if !wants_events {
        return rpc_refusal(
            StatusCode::NOT_ACCEPTABLE,
            -32600,
            ErrorCode::ValidationInvalidValue,
            "a GET opens an event stream: accept text/event-stream",
        );
    }
    let session = match hub.find(&headers) {
        Ok((_, s)) => s,
        Err(refused) => return refused.into_response(),
    };
    session.touch();
    let stream = session.open_stream(&[], &[], true);
    sse_response(event_stream(stream, Vec::new()), None)
}

/// Ends a session.
async fn delete(State(hub): State<Arc<Hub>>, headers: HeaderMap) -> Response {
    let (id, session) = match hub.find(&headers) {
        Ok(found) => found,
        Err(refused) => return refused.into_response(),
    };
    hub.lock().remove(&id);
    session.close().await;
    StatusCode::NO_CONTENT.into_response()
}
