//! The HTTP listener under the MCP endpoint: connections bounded in number and in time.
//!
//! - A connection must send a request's headers within [`ListenLimits::header_timeout`]
//!   of opening (or of its last answer, on a kept-alive connection), or it is closed
//!   (a connection counts as busy from the moment its headers are whole).
//! - At most [`ListenLimits::max_connections`] at once carry requests. A connection
//!   carrying a stream (a session's `GET`, a `subscriptions/listen`) does not count:
//!   streams are bounded by the server apart ([`crate::mcp::server::listen`]), so they
//!   never take requests' room. At the cap a new connection takes the place of the
//!   connection that has waited longest without a request in flight: one that has not
//!   sent a whole request yet if there is one, else a kept-alive one at rest. A slow or
//!   silent client cannot lock out a new one, and clients between their calls keep
//!   their connections.
//! - When every connection is busy, a new one is still served [`HEALTH_PATH`] (up to
//!   [`HEALTH_ROOM`] such at once), so a load balancer asking whether the server is up
//!   hears it is; any other request on it is answered 503, and it is closed. Past that
//!   room a new connection is answered 503 and closed at once.
//! - On stop, the listener stops accepting, asks every connection to finish its request
//!   and close, and after [`ListenLimits::shutdown_deadline`] ends what is left.
//!
//! A request body that stops half-way is cut off by the server's message check (`mcp::server::http`).

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use hyper_util::rt::TokioIo;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::error::{ErrorCode, ToolError};
use crate::throttle::{Every, WARN_EVERY};

/// Where monitors and load balancers ask whether a server is up.
pub const HEALTH_PATH: &str = "/health";

/// Connections beyond the cap served `/health` only, at once.
pub const HEALTH_ROOM: usize = 16;

/// How many connections, and how long each may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListenLimits {
    /// Connections open at once.
    pub max_connections: usize,
    /// The longest a connection may take to send a request's headers.
    pub header_timeout: Duration,
    /// The longest a stop waits for requests in flight.
    pub shutdown_deadline: Duration,
}

impl ListenLimits {
    pub const DEFAULT_MAX_CONNECTIONS: usize = 1_024;
    pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
    pub const DEFAULT_SHUTDOWN_DEADLINE: Duration = Duration::from_secs(5);
}

impl Default for ListenLimits {
    fn default() -> Self {
        ListenLimits {
            max_connections: Self::DEFAULT_MAX_CONNECTIONS,
            header_timeout: Self::DEFAULT_HEADER_TIMEOUT,
            shutdown_deadline: Self::DEFAULT_SHUTDOWN_DEADLINE,
        }
    }
}

/// One connection as the listener sees it.
struct Conn {
    /// Requests in flight (an answer counts until its body is sent whole).
    busy: Arc<AtomicUsize>,
    /// When it last had nothing in flight (opened, or its last answer sent), in
    /// milliseconds since the listener started.
    rest_since: Arc<AtomicU64>,
    /// Whether a whole request has come on it: a client that has sent none yet is the
    /// first to make room for a new connection.
    served: Arc<AtomicBool>,
    /// Streams in flight on it: while it carries one it does not count at the cap.
    streaming: Arc<AtomicUsize>,
    /// Let in past the cap: it is served `/health` only.
    health_only: bool,
    abort: tokio::task::AbortHandle,
}

impl Conn {
    /// Whether it counts against the cap: it carries requests, not a stream.
    fn counts(&self) -> bool {
        !self.health_only && self.streaming.load(Ordering::Acquire) == 0
    }
}

#[derive(Default)]
struct Conns {
    next: u64,
    open: HashMap<u64, Conn>,
}

/// Keeps `guard` until the response's body has been sent whole (or dropped): a stream
/// of server messages lasts as long as the client reads it. A body of known length
/// goes at once, and `guard` ends with this call.
pub fn hold_until_sent<G: Send + Unpin + 'static>(
    response: axum::response::Response,
    guard: G,
) -> axum::response::Response {
    let (parts, body) = response.into_parts();
    if http_body::Body::size_hint(&body).exact().is_some() {
        return axum::response::Response::from_parts(parts, body);
    }
    let held = Held {
        body,
        _guard: guard,
    };
    axum::response::Response::from_parts(parts, axum::body::Body::new(held))
}

/// A response body that keeps a guard alive while it is read. Frames, the end of the
/// stream and the size hint pass through as they are, so the server writes the last
/// chunk and the end together, as it would without the guard.
struct Held<G> {
    body: axum::body::Body,
    _guard: G,
}

impl<G: Unpin> http_body::Body for Held<G> {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        std::pin::Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// A poisoned map is still a map of connections.
fn lock(c: &Mutex<Conns>) -> MutexGuard<'_, Conns> {
    c.lock().unwrap_or_else(|e| e.into_inner())
}

/// Counts a request in flight until dropped (its answer's body sent or given up).
struct InFlight {
    busy: Arc<AtomicUsize>,
    rest_since: Arc<AtomicU64>,
    epoch: Instant,
}

/// A connection's count of the streams it carries, in each of its requests'
/// extensions: the server marks a request as a stream once it has given it a stream's
/// place ([`StreamMark::begin`]), so a header alone never takes a connection out of the
/// requests' count.
#[derive(Clone)]
pub struct StreamMark(Arc<AtomicUsize>);

/// A connection counted as streaming while this lives.
pub struct Streaming(Arc<AtomicUsize>);

impl StreamMark {
    /// The connection carries a stream until the guard is dropped (its body ended).
    pub fn begin(&self) -> Streaming {
        self.0.fetch_add(1, Ordering::AcqRel);
        Streaming(self.0.clone())
    }
}

impl Drop for Streaming {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.rest_since
            .store(self.epoch.elapsed().as_millis() as u64, Ordering::Relaxed);
        self.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Serves `app` on `listener` within `limits` until `stop` is cancelled.
pub async fn serve(
    listener: TcpListener,
    app: axum::Router,
    limits: ListenLimits,
    stop: CancellationToken,
) {
    let limits = ListenLimits {
        max_connections: connection_room(limits.max_connections),
        ..limits
    };
    let epoch = Instant::now();
    let conns: Arc<Mutex<Conns>> = Arc::default();
    let reaper = tokio::spawn(reap(conns.clone(), limits, epoch, stop.clone()));
    loop {
        let accepted = tokio::select! {
            _ = stop.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let tcp = match accepted {
            Ok((tcp, _)) => tcp,
            Err(e) => {
                not_accepted(&e).await;
                continue;
            }
        };
        // Answers go out as small server-sent events; without TCP_NODELAY each would
        // wait on the client's delayed ACK (40 ms on Linux).
        let _ = tcp.set_nodelay(true);
        let (id, health_only) = match admit(&conns, limits.max_connections) {
            Admit::Serve(id) => (id, None),
            Admit::HealthOnly(id) => (id, Some(limits.max_connections)),
            Admit::Refuse => {
                tokio::spawn(refuse(tcp, limits.max_connections));
                continue;
            }
        };
        let conn = Conn::serve(tcp, &app, epoch, &stop, health_only);
        lock(&conns).open.insert(id, conn);
    }
    end_connections(&conns, limits.shutdown_deadline).await;
    reaper.abort();
}

/// Closes connections that have sent no request for too long, until `stop`.
async fn reap(
    conns: Arc<Mutex<Conns>>,
    limits: ListenLimits,
    epoch: Instant,
    stop: CancellationToken,
) {
    let every = (limits.header_timeout / 4).max(Duration::from_millis(50));
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(every) => {}
        }
        let now = epoch.elapsed().as_millis() as u64;
        let limit = limits.header_timeout.as_millis() as u64;
        lock(&conns).open.retain(|_, c| {
            let resting = c.busy.load(Ordering::Acquire) == 0
                && now.saturating_sub(c.rest_since.load(Ordering::Relaxed)) >= limit;
            if resting {
                c.abort.abort();
            }
            !resting
        });
    }
}

/// A connection that could not be accepted: out of file descriptors, most often. Says
/// so (at most once in 10 s) and waits for some to close.
async fn not_accepted(e: &std::io::Error) {
    static ACCEPT: Every = Every::new(WARN_EVERY);
    if let Some(unlogged) = ACCEPT.ready() {
        tracing::warn!(%e, unlogged_since_last = unlogged, "could not accept an HTTP connection (logged at most once in 10 s)");
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
}

/// What a new connection may do.
enum Admit {
    /// Be served, with this number.
    Serve(u64),
    /// Every connection is busy: be served `/health` only, with this number.
    HealthOnly(u64),
    /// Be answered 503 and closed.
    Refuse,
}

/// Whether a new connection is served, room made for it at the cap (connections
/// carrying streams aside); past the cap, whether it is served `/health`.
fn admit(conns: &Mutex<Conns>, max_connections: usize) -> Admit {
    let mut c = lock(conns);
    c.open.retain(|_, conn| !conn.abort.is_finished());
    let counted = c.open.values().filter(|conn| conn.counts()).count();
    if counted < max_connections || make_room(&mut c) {
        c.next += 1;
        return Admit::Serve(c.next);
    }
    let health = c.open.values().filter(|conn| conn.health_only).count();
    if health < HEALTH_ROOM {
        c.next += 1;
        return Admit::HealthOnly(c.next);
    }
    Admit::Refuse
}

/// Whether a request asks for a session's stream of server messages: a `GET` that
/// accepts server-sent events (it carries no body, so no work rides with it).
fn wants_session_stream<B>(request: &hyper::Request<B>) -> bool {
    request.method() == hyper::Method::GET
        && request
            .headers()
            .get(hyper::header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("text/event-stream"))
}

/// Whether an answer is a stream of server-sent events.
fn is_event_stream(response: &axum::response::Response) -> bool {
    response
        .headers()
        .get(hyper::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"))
}

/// The connection closes once this answer is sent.
fn close_after(response: &mut axum::response::Response) {
    response.headers_mut().insert(
        hyper::header::CONNECTION,
        hyper::header::HeaderValue::from_static("close"),
    );
}

/// The error every connection past the cap hears (as [`refuse`] writes it).
fn busy_error(max: usize) -> ToolError {
    ToolError::new(
        ErrorCode::ResourceUnavailable,
        format!(
            "this server holds at most {max} connections and every one is busy; try again shortly"
        ),
    )
    .with_extra("max_connections", serde_json::Value::from(max))
    .with_extra("retry_after_ms", serde_json::Value::from(1000))
}

/// The body every connection past the cap hears: a JSON-RPC `-32000` error (id
/// `null`) whose data is [`busy_error`]'s object.
fn busy_body(max: usize) -> String {
    let answer = rmcp::model::ServerJsonRpcMessage::error(
        super::rpc_error(rmcp::model::ErrorCode(-32000), &busy_error(max)),
        None,
    );
    let mut body = serde_json::to_value(&answer).unwrap_or_default();
    if let Some(fields) = body.as_object_mut() {
        fields.entry("id").or_insert(serde_json::Value::Null);
    }
    body.to_string()
}

/// 503 to a request other than `/health` on a connection past the cap; it is closed.
fn busy_answer(max: usize) -> axum::response::Response {
    use axum::response::IntoResponse;
    let mut response = (
        axum::http::StatusCode::SERVICE_UNAVAILABLE,
        [
            (hyper::header::CONTENT_TYPE, "application/json"),
            (hyper::header::RETRY_AFTER, "1"),
        ],
        busy_body(max),
    )
        .into_response();
    close_after(&mut response);
    response
}

impl Conn {
    /// Serves `app` on a connection, on a task of its own, counting its requests in
    /// flight; when `stop` is cancelled it finishes the request in flight and closes.
    fn serve(
        tcp: tokio::net::TcpStream,
        app: &axum::Router,
        epoch: Instant,
        stop: &CancellationToken,
        health_only: Option<usize>,
    ) -> Conn {
        let busy = Arc::new(AtomicUsize::new(0));
        let rest_since = Arc::new(AtomicU64::new(epoch.elapsed().as_millis() as u64));
        let served = Arc::new(AtomicBool::new(false));
        let streaming = Arc::new(AtomicUsize::new(0));
        let service = {
            let (busy, rest_since, served) = (busy.clone(), rest_since.clone(), served.clone());
            let streaming = streaming.clone();
            let app = app.clone();
            hyper::service::service_fn(move |mut request: hyper::Request<hyper::body::Incoming>| {
                busy.fetch_add(1, Ordering::AcqRel);
                served.store(true, Ordering::Relaxed);
                let mark = StreamMark(streaming.clone());
                request.extensions_mut().insert(mark.clone());
                let session_stream = wants_session_stream(&request);
                let flight = InFlight {
                    busy: busy.clone(),
                    rest_since: rest_since.clone(),
                    epoch,
                };
                let mut app = app.clone();
                async move {
                    if let Some(max) = health_only
                        && request.uri().path() != HEALTH_PATH
                    {
                        drop(flight);
                        return Ok::<_, Infallible>(busy_answer(max));
                    }
                    let mut response =
                        tower_service::Service::call(&mut app, request.map(axum::body::Body::new))
                            .await
                            .unwrap_or_else(|e: Infallible| match e {});
                    if health_only.is_some() {
                        close_after(&mut response);
                    }
                    // A session's stream of server messages, once it is one, counts as a
                    // stream: a GET holds no request's work.
                    let streaming =
                        (session_stream && is_event_stream(&response)).then(|| mark.begin());
                    // A stream (server-sent events) is in flight until it ends.
                    Ok::<_, Infallible>(hold_until_sent(response, (flight, streaming)))
                }
            })
        };
        let conn_stop = stop.clone();
        let task = tokio::spawn(async move {
            // No hyper timer: arming one for every request's head costs each call, and
            // the reaper already closes a connection whose headers are late.
            let conn = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(tcp), service);
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => return,
                _ = conn_stop.cancelled() => {}
            }
            // Stopping: finish the request in flight, then close.
            conn.as_mut().graceful_shutdown();
            let _ = conn.await;
        });
        Conn {
            busy,
            rest_since,
            served,
            streaming,
            health_only: health_only.is_some(),
            abort: task.abort_handle(),
        }
    }
}

/// Stopping: the connections were told by the token; waits for them, then ends those
/// still open at the deadline.
async fn end_connections(conns: &Mutex<Conns>, shutdown_deadline: Duration) {
    let deadline = Instant::now() + shutdown_deadline;
    loop {
        let left = {
            let mut c = lock(conns);
            c.open.retain(|_, conn| !conn.abort.is_finished());
            c.open.len()
        };
        if left == 0 {
            break;
        }
        if Instant::now() >= deadline {
            tracing::warn!(
                connections = left,
                deadline_secs = shutdown_deadline.as_secs_f64(),
                "ended connections still open at the shutdown deadline"
            );
            for conn in lock(conns).open.values() {
                conn.abort.abort();
            }
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// File descriptors kept for everything but connections (logs, docs, Redis, NATS).
const FD_RESERVE: u64 = 128;

/// The connections that fit under this process's open-file limit with
/// [`FD_RESERVE`] to spare, at most `wanted`. The soft limit is raised to the hard one
/// first, as far as the system lets it.
pub fn connection_room(wanted: usize) -> usize {
    #[cfg(unix)]
    {
        let mut r = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes the struct it is given, and nothing else.
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } != 0 {
            return wanted;
        }
        let hard = r.rlim_max.min(1 << 20);
        if r.rlim_cur < hard {
            let raised = libc::rlimit {
                rlim_cur: hard,
                rlim_max: r.rlim_max,
            };
            // SAFETY: setrlimit reads the struct it is given; failing leaves the limit.
            if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
                r.rlim_cur = hard;
            }
        }
        let room = r.rlim_cur.saturating_sub(FD_RESERVE).max(16);
        let room = usize::try_from(room).unwrap_or(usize::MAX);
        if room < wanted {
            tracing::warn!(
                wanted,
                room,
                "the open-file limit leaves room for fewer HTTP connections than asked"
            );
        }
        wanted.min(room)
    }
    #[cfg(not(unix))]
    wanted
}

/// Closes the connection that has rested longest with nothing in flight, first among
/// those that have not sent a whole request yet (a kept-alive client between calls
/// goes only when there is no such one). False when every connection is busy.
fn make_room(c: &mut Conns) -> bool {
    let longest = c
        .open
        .iter()
        .filter(|(_, conn)| conn.busy.load(Ordering::Acquire) == 0)
        .min_by_key(|(_, conn)| {
            (
                conn.served.load(Ordering::Relaxed),
                conn.rest_since.load(Ordering::Relaxed),
            )
        })
        .map(|(id, _)| *id);
    match longest {
        Some(id) => {
            if let Some(conn) = c.open.remove(&id) {
                conn.abort.abort();
            }
            true
        }
        None => false,
    }
}

/// 503 to a connection there is no room for, then closed.
async fn refuse(mut tcp: tokio::net::TcpStream, max: usize) {
    static BUSY: Every = Every::new(WARN_EVERY);
    if let Some(unlogged) = BUSY.ready() {
        tracing::warn!(
            max,
            unlogged_since_last = unlogged,
            "refused a connection: every one is busy (logged at most once in 10 s)"
        );
    }
    let body = busy_body(max);
    let head = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
         retry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    let _ = tokio::time::timeout(Duration::from_secs(2), async {
        tcp.write_all(head.as_bytes()).await?;
        tcp.write_all(body.as_bytes()).await?;
        tcp.shutdown().await
    })
    .await;
}
