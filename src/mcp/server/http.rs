//! MCP over streamable HTTP (`--headless --http ADDR`): rmcp's streamable HTTP service
//! under axum at `/mcp`, each client in its own session with its own [`McpServer`]
//! (subscriptions, handle list, log session).
//!
//! Who may connect is [`crate::guard`]'s rule, the same as `serve-rest`'s:
//! - A loopback address needs nothing more; a token, when given, is still required.
//! - Any other address needs `--http-allow-remote` and a bearer token of at least
//!   [`MIN_TOKEN_LEN`] characters: the server refuses to start otherwise.
//! - With a token, every request must carry `Authorization: Bearer TOKEN`; the token is
//!   compared in constant time and never logged. A request without it, or with another,
//!   gets 400, not 401, and no `WWW-Authenticate`: a client that can do OAuth (Claude
//!   Code; the official TypeScript SDK given an auth provider) takes a 401 for a server
//!   that wants OAuth and starts its discovery, which cannot succeed against a static
//!   token, so the user sees an OAuth failure and not its cause. Answered 400 with a
//!   JSON-RPC error, the official SDKs report the error's message, which names the
//!   header to configure.
//! - Bound to loopback, a request for another host name gets 403 (DNS rebinding); rmcp's
//!   own `Host` check, with the same names, stays behind it.
//! - A request whose `Origin` is not this server's host gets 403 (the 2025-11-25
//!   transport's DNS-rebinding rule; see [`Origins`]). No `Origin` (a client that is not
//!   a browser) passes.
//!
//! The `Host`, `Origin` and token refusals are JSON-RPC `-32600` errors (id `null`) whose
//! data is the `UNAUTHORIZED` error object on the header's field.
//!
//! What a POST holds is checked before rmcp reads it ([`super::strict::check`]): a body
//! that is not JSON is 400 with `-32700`, one that is not a request 400 with `-32600`, a
//! request whose params do not fit its method 200 with `-32602` under its id; a wrong
//! `Content-Type` is 415 with `-32600`. Each of these bodies is a JSON-RPC error whose
//! data is the project's error object. Ending a session (`DELETE`) answers 204.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::Request;
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::McpServer;
use super::sessions::{self, Tracker};
use super::strict;
use crate::error::{ErrorCode, ToolError};
use crate::guard::Guard;
pub use crate::guard::{MIN_TOKEN_LEN, Origins, RefusedBind, TOKEN_ENV, origin_allowed};
use crate::mcp::wire::http::{
    HttpOptions, MAX_BODY_BYTES, PATH, check_bind, check_request, json_body, limit_body, refusal,
    refuse,
};
use crate::throttle::{Every, WARN_EVERY};

/// How long a completed answer is kept for a client resuming its stream.
const COMPLETED_CACHE: Duration = Duration::from_secs(10);

/// The longest a request's body may take to arrive, from its headers.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a new session waits for its `initialize`.
const INIT_TIMEOUT: Duration = Duration::from_secs(10);

/// A running HTTP face.
pub struct HttpServer {
    addr: SocketAddr,
    cancel: CancellationToken,
    /// Cancelled when the server starts draining ([`Drain`]).
    draining: CancellationToken,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl HttpServer {
    /// Binds and starts serving; `server` is the first client's server, and every new
    /// session gets [`McpServer::for_new_client`] of it.
    pub async fn start(server: McpServer, options: &HttpOptions) -> anyhow::Result<HttpServer> {
        let addr = tokio::net::lookup_host(&options.listen)
            .await
            .map_err(|e| anyhow::anyhow!("--http {}: {e}", options.listen))?
            .next()
            .ok_or_else(|| anyhow::anyhow!("--http {}: no address", options.listen))?;
        check_bind(addr, options)?;
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))?;
        let addr = listener.local_addr()?;
        let cancel = CancellationToken::new();
        let mut config = StreamableHttpServerConfig::default()
            .with_cancellation_token(cancel.child_token())
            .with_max_request_body_bytes(MAX_BODY_BYTES)
            // A stateless request answered in one message gets it as plain JSON; one
            // whose answer comes after notifications (progress, its log) gets a stream.
            // Sessions keep their streams whatever this says.
            .with_json_response(true)
            .with_sse_keep_alive(Some(Duration::from_secs(15)));
        let guard = Guard::new(addr, options.token.as_deref()).with_callers(&options.callers);
        config = match guard.hosts() {
            // The guard checks first and answers in JSON; rmcp's check stays behind it.
            crate::guard::Hosts::Loopback => {
                config.with_allowed_hosts(crate::guard::LOOPBACK_HOSTS)
            }
            // Reached by whatever name the network gives it; the token guards it.
            crate::guard::Hosts::Any => config.disable_allowed_hosts(),
        };
        let mut manager = LocalSessionManager::default();
        // Idle sessions are ended by the tracker, which counts an open stream as use;
        // rmcp's own timer would end a client waiting on its stream for updates.
        manager.session_config.keep_alive = None;
        // Answers kept for a client resuming a stream: a few seconds, so that a busy
        // session does not hold a minute of them.
        manager.session_config.completed_cache_ttl = COMPLETED_CACHE;
        manager.session_config.init_timeout = Some(INIT_TIMEOUT);
        let sessions = Arc::new(super::polling::Resumable::new(manager));
        let tracker = Tracker::new(options.sessions);
        let draining = CancellationToken::new();
        let streams: Arc<super::listen::Streams> = Arc::default();
        let health = Health {
            core: server.core().clone(),
            sessions: sessions.clone(),
            streams: streams.clone(),
            draining: draining.clone(),
        };
        {
            let (tracker, sessions, stop) = (tracker.clone(), sessions.clone(), cancel.clone());
            tokio::spawn(async move {
                let every = tracker.sweep_every();
                loop {
                    tokio::select! {
                        _ = stop.cancelled() => return,
                        _ = tokio::time::sleep(every) => tracker.sweep(sessions.local()).await,
                    }
                }
            });
        }
        let server = server.serving_http().with_polling(sessions.clone());
        let service = StreamableHttpService::new(
            move || {
                Ok(super::traced::Traced::new(
                    server.for_new_client(),
                    crate::mcp::wire::span::Transport::Tcp,
                ))
            },
            sessions,
            config,
        );
        let app = axum::Router::new()
            .nest_service(PATH, service)
            .layer(axum::middleware::from_fn_with_state(streams, check_message))
            .layer(axum::middleware::from_fn_with_state(
                tracker,
                sessions::track,
            ))
            .layer(axum::middleware::from_fn(limit_body))
            .layer(axum::middleware::from_fn_with_state(guard, check_request))
            // Added after the layers, so that it needs no token: it says nothing of the
            // game's players.
            .route(
                HEALTH_PATH,
                axum::routing::get(health_status).with_state(health),
            );
        let stop = cancel.clone();
        let limits = options.connections;
        let task = tokio::spawn(async move {
            crate::mcp::wire::listen::serve(listener, app, limits, stop).await;
            Ok(())
        });
        tracing::info!(%addr, path = PATH, auth = options.token.is_some(), "serving MCP over HTTP");
        Ok(HttpServer {
            addr,
            cancel,
            draining,
            task,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The MCP endpoint's URL.
    pub fn url(&self) -> String {
        format!("http://{}{PATH}", self.addr)
    }

    /// Ends every session and stops listening.
    pub async fn stop(self) {
        self.cancel.cancel();
        let _ = tokio::time::timeout(Duration::from_secs(5), self.task).await;
    }

    /// Serves until the listener fails or [`HttpServer::stop`] is called elsewhere.
    pub async fn wait(self) -> anyhow::Result<()> {
        match self.task.await {
            Ok(result) => Ok(result?),
            Err(e) => Err(anyhow::anyhow!("the HTTP server stopped: {e}")),
        }
    }

    /// A handle that stops the server (for a signal handler).
    pub fn stopper(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// A handle that drains the server, then stops it (for a signal handler).
    pub fn drainer(&self) -> Drain {
        Drain {
            draining: self.draining.clone(),
            stop: self.cancel.clone(),
        }
    }
}

/// Takes a server out of a load balancer's rotation before it stops: `/health` answers
/// 503 "draining" at once, every request is still served for the grace period, and
/// then the server stops as [`HttpServer::stop`] does.
pub struct Drain {
    draining: CancellationToken,
    stop: CancellationToken,
}

impl Drain {
    /// Drains for `grace`, then stops.
    pub async fn drain(self, grace: Duration) {
        self.draining.cancel();
        if !grace.is_zero() {
            tracing::info!(
                seconds = grace.as_secs_f64(),
                "draining: /health answers 503 while requests are still served"
            );
            tokio::select! {
                () = tokio::time::sleep(grace) => {}
                () = self.stop.cancelled() => {}
            }
        }
        self.stop.cancel();
    }
}

/// Where monitors and load balancers ask whether the server is up; answered whatever
/// the load ([`crate::mcp::wire::listen`]).
pub use crate::mcp::wire::listen::HEALTH_PATH;

/// What `/health` reads: the core's source and the open sessions.
#[derive(Clone)]
struct Health {
    core: crate::core::Core,
    sessions: Arc<super::polling::Resumable>,
    streams: Arc<super::listen::Streams>,
    draining: CancellationToken,
}

/// `GET /health`: a shallow status with no token and no player data: the version, the
/// source, its block height and whether its clock is paused, the sessions and listen
/// streams open, and the
/// proof-of-work pool: its threads, those hashing now and the searches running. While
/// the server drains ([`Drain`]) the status is `draining` and the answer 503, so that a
/// load balancer sends nothing new here.
async fn health_status(
    axum::extract::State(h): axum::extract::State<Health>,
) -> (axum::http::StatusCode, axum::Json<serde_json::Value>) {
    let draining = h.draining.is_cancelled();
    let status = h.core.status();
    let sessions = h.sessions.local().sessions.read().await.len();
    let pow = crate::pow::backend::global().stats();
    let code = if draining {
        axum::http::StatusCode::SERVICE_UNAVAILABLE
    } else {
        axum::http::StatusCode::OK
    };
    let body = axum::Json(serde_json::json!({
        "status": if draining { "draining" } else { "ok" },
        "version": env!("CARGO_PKG_VERSION"),
        "source": status.name,
        "block_height": status.block_height,
        "paused": status.paused,
        "sessions": sessions,
        "streams": h.streams.open(),
        "proof_of_work": {
            "engine": structs_pow::backend::engine(),
            "threads": pow.size,
            "hashing": pow.busy,
            "searches": pow.searches,
        },
    }));
    (code, body)
}

/// A `tasks/get`, `tasks/update` or `tasks/cancel` without its `Mcp-Name` header gets
/// one from the body's `taskId`. The header is there for what sits between client and
/// server (SEP-2243); the official Python SDK sends it only for the methods it knows to
/// name something (`tools/call`, `prompts/get`, `resources/read`), and this server
/// reads the id from the body anyway. One that is sent is still checked against it.
fn task_name_header(headers: &mut axum::http::HeaderMap, body: &[u8]) {
    const NAME: &str = "mcp-name";
    // A 2026-07-28 request names its method in `Mcp-Method`: the body is read only for
    // a task method's request that left its name out.
    let task_method = headers
        .get("mcp-method")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|m| m.starts_with("tasks/"));
    if !task_method || headers.contains_key(NAME) {
        return;
    }
    let Ok(message) = serde_json::from_slice::<serde_json::Value>(body) else {
        return;
    };
    let method = message["method"].as_str().unwrap_or_default();
    if !matches!(method, "tasks/get" | "tasks/update" | "tasks/cancel") {
        return;
    }
    if let Some(id) = message["params"]["taskId"].as_str()
        && let Ok(value) = axum::http::HeaderValue::from_str(id)
    {
        headers.insert(NAME, value);
    }
}

/// The answer to a body that did not arrive within [`BODY_TIMEOUT`]: 408, and the
/// connection closed.
fn late_body() -> Response {
    static LATE: Every = Every::new(WARN_EVERY);
    if let Some(unlogged) = LATE.ready() {
        tracing::warn!(
            timeout_secs = BODY_TIMEOUT.as_secs(),
            unlogged_since_last = unlogged,
            "refused an HTTP request whose body did not arrive in time (logged at most once in 10 s)"
        );
    }
    let error = ToolError::new(
        ErrorCode::ToolTimeout,
        format!(
            "the request body did not arrive within {} s; send it whole",
            BODY_TIMEOUT.as_secs()
        ),
    );
    let mut response = refusal(
        StatusCode::REQUEST_TIMEOUT,
        rmcp::model::ErrorCode::INVALID_REQUEST,
        error,
    );
    response.headers_mut().insert(
        header::CONNECTION,
        axum::http::HeaderValue::from_static("close"),
    );
    response
}

/// A request's body, read whole within [`BODY_TIMEOUT`] and [`MAX_BODY_BYTES`]; or
/// the answer refusing it.
async fn read_body(body: axum::body::Body) -> Result<Vec<u8>, Response> {
    let mut bytes = Vec::new();
    let mut stream = body.into_data_stream();
    let deadline = tokio::time::Instant::now() + BODY_TIMEOUT;
    loop {
        let Ok(next_chunk) =
            tokio::time::timeout_at(deadline, futures_util::StreamExt::next(&mut stream)).await
        else {
            return Err(late_body());
        };
        let Some(chunk) = next_chunk else {
            return Ok(bytes);
        };
        let Ok(chunk) = chunk else {
            let error = ToolError::new(
                ErrorCode::ValidationInvalidFormat,
                "the request body could not be read to its end",
            );
            return Err(refusal(
                StatusCode::BAD_REQUEST,
                rmcp::model::ErrorCode::INVALID_REQUEST,
                error,
            ));
        };
        if bytes.len() + chunk.len() > MAX_BODY_BYTES {
            static OVER: Every = Every::new(WARN_EVERY);
            if let Some(unlogged) = OVER.ready() {
                tracing::warn!(
                    limit = MAX_BODY_BYTES,
                    unlogged_since_last = unlogged,
                    "refused an HTTP request over the size limit (logged at most once in 10 s)"
                );
            }
            let answer = crate::mcp::wire::too_large_answer(None, None, MAX_BODY_BYTES);
            return Err((StatusCode::PAYLOAD_TOO_LARGE, json_body(&answer)).into_response());
        }
        bytes.extend_from_slice(&chunk);
    }
}

/// The place a listen request's stream takes, of its caller's and the server's
/// ([`super::listen::Streams`]), and the mark that takes its connection out of the
/// requests' count while it streams; `None` for any other request; why there is no
/// room.
fn stream_slot(
    streams: &Arc<super::listen::Streams>,
    parts: &axum::http::request::Parts,
    listen: bool,
) -> Result<Option<StreamHeld>, super::listen::NoRoom> {
    if !listen {
        return Ok(None);
    }
    let caller = parts
        .extensions
        .get::<crate::context::Principal>()
        .cloned()
        .unwrap_or_else(crate::context::Principal::anonymous);
    let slot = streams.take(&caller)?;
    let streaming = parts
        .extensions
        .get::<crate::mcp::wire::listen::StreamMark>()
        .map(crate::mcp::wire::listen::StreamMark::begin);
    Ok(Some((slot, streaming)))
}

/// What a listen stream holds while its body is sent: its place, and its connection's
/// mark as streaming.
type StreamHeld = (
    super::listen::StreamSlot,
    Option<crate::mcp::wire::listen::Streaming>,
);

/// A listen stream refused for want of room: 429 when its caller has its most open, 503
/// when the server has.
fn no_stream(no_room: super::listen::NoRoom) -> Response {
    static FULL: Every = Every::new(WARN_EVERY);
    let (status, error) = match no_room {
        super::listen::NoRoom::Caller(e) => (StatusCode::TOO_MANY_REQUESTS, e),
        super::listen::NoRoom::Server(e) => (StatusCode::SERVICE_UNAVAILABLE, e),
    };
    if let Some(unlogged) = FULL.ready() {
        tracing::warn!(
            status = status.as_u16(),
            unlogged_since_last = unlogged,
            "refused a subscriptions/listen stream: {} (logged at most once in 10 s)",
            error.message
        );
    }
    let mut response = refusal(status, rmcp::model::ErrorCode(-32000), error);
    response.headers_mut().insert(
        header::RETRY_AFTER,
        axum::http::HeaderValue::from_static("1"),
    );
    response
}

/// The strict check of a POST's message, before rmcp reads it (and before its own
/// checks of the headers); and 204 for a DELETE rmcp answers 202 (clients take 200 or
/// 204 for a session ended).
async fn check_message(
    axum::extract::State(streams): axum::extract::State<Arc<super::listen::Streams>>,
    request: Request,
    next: Next,
) -> Response {
    if !request.uri().path().starts_with(PATH) {
        return next.run(request).await;
    }
    match *request.method() {
        Method::POST => {}
        Method::DELETE => {
            let mut response = next.run(request).await;
            if response.status() == StatusCode::ACCEPTED {
                *response.status_mut() = StatusCode::NO_CONTENT;
            }
            return response;
        }
        _ => return next.run(request).await,
    }
    if let Err(refused) = crate::guard::body_type(request.method(), request.headers()) {
        return refuse(refused);
    }
    let (parts, body) = request.into_parts();
    let mut bytes = match read_body(body).await {
        Ok(bytes) => bytes,
        Err(refused) => return refused,
    };
    match strict::parse(&bytes) {
        Ok(message) => {
            let listen = matches!(
                &message,
                rmcp::model::JsonRpcMessage::Request(r)
                    if matches!(r.request, rmcp::model::ClientRequest::SubscriptionsListenRequest(_))
            );
            // rmcp reads the body as it is; a byte-order mark it would refuse.
            if bytes.starts_with(b"\xEF\xBB\xBF") {
                bytes.drain(..3);
            }
            let mut parts = parts;
            task_name_header(&mut parts.headers, &bytes);
            // rmcp does not keep a listen request's task ids: they ride in the
            // request's extensions to the stream's handler.
            if let Some((_, tasks)) = super::listen::task_ids_of(&bytes) {
                parts.extensions.insert(super::listen::ListenTaskIds(tasks));
            }
            // A listen stream takes a place of its caller's and the server's, held
            // until its body ends; without one it is refused before it is acknowledged.
            let slot = match stream_slot(&streams, &parts, listen) {
                Ok(slot) => slot,
                Err(no_room) => return no_stream(no_room),
            };
            let response = next
                .run(Request::from_parts(parts, axum::body::Body::from(bytes)))
                .await;
            match slot {
                Some(slot) => crate::mcp::wire::listen::hold_until_sent(response, slot),
                None => response,
            }
        }
        Err(r) => {
            r.log("http");
            let status = StatusCode::from_u16(r.http_status()).unwrap_or(StatusCode::BAD_REQUEST);
            (status, json_body(&r.answer())).into_response()
        }
    }
}
