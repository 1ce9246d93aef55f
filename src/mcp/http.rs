//! MCP over streamable HTTP (`--headless --http ADDR`): rmcp's streamable HTTP service
//! under axum at `/mcp`, each client in its own session with its own [`McpServer`]
//! (subscriptions, handle list, log session).
//!
//! Who may connect:
//! - A loopback address needs nothing more; a token, when given, is still required.
//! - Any other address needs `--http-allow-remote` and a bearer token of at least
//!   [`MIN_TOKEN_LEN`] characters: the server refuses to start otherwise.
//! - With a token, every request must carry `Authorization: Bearer TOKEN`; the token is
//!   compared in constant time (over SHA-256 digests, so its length leaks nothing
//!   either) and never logged. A refusal is a 401 with the error object of every tool.
//! - Bound to loopback, rmcp's `Host` check refuses other host names (DNS rebinding).
//! - A request whose `Origin` is not this server's host gets 403 (the 2025-11-25
//!   transport's DNS-rebinding rule; see [`Origins`]). No `Origin` (a client that is not
//!   a browser) passes.
//!
//! What a POST holds is checked before rmcp reads it ([`super::strict::check`]): a body
//! that is not JSON is 400 with `-32700`, one that is not a request 400 with `-32600`, a
//! request whose params do not fit its method 200 with `-32602` under its id; a wrong
//! `Content-Type` is 415 with `-32600`. Each of these bodies is a JSON-RPC error whose
//! data is the project's error object. Ending a session (`DELETE`) answers 204.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use super::McpServer;
pub use super::listen::ListenLimits;
pub use super::sessions::SessionLimits;
use super::sessions::{self, Tracker};
use super::strict::{self, Verdict};
use crate::error::{ErrorCode, ToolError};

/// The path the MCP endpoint is served at.
pub const PATH: &str = "/mcp";

/// How long a completed answer is kept for a client resuming its stream.
const COMPLETED_CACHE: Duration = Duration::from_secs(10);

/// The longest a request's body may take to arrive, from its headers.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a new session waits for its `initialize`.
const INIT_TIMEOUT: Duration = Duration::from_secs(10);

/// The shortest bearer token accepted.
pub const MIN_TOKEN_LEN: usize = 16;

/// The environment variable a token may come from (so it stays out of `ps`).
pub const TOKEN_ENV: &str = "STRUCTS_CONSOLE_AUTH_TOKEN";

/// The largest request body accepted: the same limit as one message over stdio.
pub const MAX_BODY_BYTES: usize = super::stdio::MAX_MESSAGE_BYTES;

/// How the HTTP face listens and whom it lets in.
#[derive(Clone, Default)]
pub struct HttpOptions {
    pub listen: String,
    /// The bearer token every request must carry, if any.
    pub token: Option<String>,
    /// Whether a non-loopback address may be bound (with a token).
    pub allow_remote: bool,
    /// How many sessions at once, and how long one may idle.
    pub sessions: SessionLimits,
    /// How many connections at once, and how long each may take.
    pub connections: ListenLimits,
}

impl std::fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token itself.
        f.debug_struct("HttpOptions")
            .field("listen", &self.listen)
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field("allow_remote", &self.allow_remote)
            .field("sessions", &self.sessions)
            .field("connections", &self.connections)
            .finish()
    }
}

/// Why the HTTP face would not start.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RefusedBind {
    #[error(
        "{0} is not a loopback address: anyone on the network could call the tools. \
         Pass --http-allow-remote and a bearer token (--auth-token or {TOKEN_ENV}) to \
         serve it, or listen on 127.0.0.1"
    )]
    NotLoopback(SocketAddr),
    #[error(
        "--http-allow-remote needs a bearer token (--auth-token or {TOKEN_ENV}): without \
         one, anyone who reaches {0} could call the tools"
    )]
    NoToken(SocketAddr),
    #[error("the bearer token is {0} characters; use at least {MIN_TOKEN_LEN}")]
    ShortToken(usize),
    #[error(
        "the bearer token has {0} at character {1} (often a newline left by the file it \
         was read from); clients send a token without it, so every request would be \
         refused: remove it"
    )]
    TokenSpace(&'static str, usize),
}

/// Whether `addr` may be served with these options.
pub fn check_bind(addr: SocketAddr, options: &HttpOptions) -> Result<(), RefusedBind> {
    if let Some(token) = &options.token
        && let Some((at, c)) = token
            .chars()
            .enumerate()
            .find(|(_, c)| c.is_whitespace() || c.is_control())
    {
        let what = if c.is_whitespace() {
            "white space"
        } else {
            "a control character"
        };
        return Err(RefusedBind::TokenSpace(what, at + 1));
    }
    if let Some(token) = &options.token
        && token.chars().count() < MIN_TOKEN_LEN
    {
        return Err(RefusedBind::ShortToken(token.chars().count()));
    }
    if addr.ip().is_loopback() {
        return Ok(());
    }
    if !options.allow_remote {
        return Err(RefusedBind::NotLoopback(addr));
    }
    if options.token.is_none() {
        return Err(RefusedBind::NoToken(addr));
    }
    Ok(())
}

/// A running HTTP face.
pub struct HttpServer {
    addr: SocketAddr,
    cancel: CancellationToken,
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
            .with_sse_keep_alive(Some(Duration::from_secs(15)));
        let origins = if addr.ip().is_loopback() {
            Origins::Loopback
        } else {
            // Reached by whatever name the network gives it; the token guards it.
            config = config.disable_allowed_hosts();
            Origins::SameHost
        };
        let mut manager = LocalSessionManager::default();
        // Idle sessions are ended by the tracker, which counts an open stream as use;
        // rmcp's own timer would end a client waiting on its stream for updates.
        manager.session_config.keep_alive = None;
        // Answers kept for a client resuming a stream: a few seconds, so that a busy
        // session does not hold a minute of them.
        manager.session_config.completed_cache_ttl = COMPLETED_CACHE;
        manager.session_config.init_timeout = Some(INIT_TIMEOUT);
        let sessions = Arc::new(manager);
        let tracker = Tracker::new(options.sessions);
        let health = Health {
            core: server.core().clone(),
            sessions: sessions.clone(),
        };
        {
            let (tracker, sessions, stop) = (tracker.clone(), sessions.clone(), cancel.clone());
            tokio::spawn(async move {
                let every = tracker.sweep_every();
                loop {
                    tokio::select! {
                        _ = stop.cancelled() => return,
                        _ = tokio::time::sleep(every) => tracker.sweep(&sessions).await,
                    }
                }
            });
        }
        let service =
            StreamableHttpService::new(move || Ok(server.for_new_client()), sessions, config);
        let digest = options.token.as_deref().map(|t| Arc::new(digest(t)));
        let app = axum::Router::new()
            .nest_service(PATH, service)
            .layer(axum::middleware::from_fn(check_message))
            .layer(axum::middleware::from_fn_with_state(
                tracker,
                sessions::track,
            ))
            .layer(axum::middleware::from_fn(limit_body))
            .layer(axum::middleware::from_fn_with_state(digest, authorize))
            .layer(axum::middleware::from_fn_with_state(origins, check_origin))
            // Added after the layers, so that it needs no token: it says nothing of the
            // game's players.
            .route(
                HEALTH_PATH,
                axum::routing::get(health_status).with_state(health),
            );
        let stop = cancel.clone();
        let limits = options.connections;
        let task = tokio::spawn(async move {
            super::listen::serve(listener, app, limits, stop).await;
            Ok(())
        });
        tracing::info!(%addr, path = PATH, auth = options.token.is_some(), "serving MCP over HTTP");
        Ok(HttpServer { addr, cancel, task })
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
}

/// Where monitors and load balancers ask whether the server is up.
pub const HEALTH_PATH: &str = "/health";

/// What `/health` reads: the core's source and the open sessions.
#[derive(Clone)]
struct Health {
    core: crate::core::Core,
    sessions: Arc<LocalSessionManager>,
}

/// `GET /health`: a shallow status with no token and no player data: the version, the
/// source, its block height and whether its clock is paused, the sessions open, and the
/// proof-of-work pool: its threads, those hashing now and the searches running.
async fn health_status(
    axum::extract::State(h): axum::extract::State<Health>,
) -> axum::Json<serde_json::Value> {
    let status = h.core.status();
    let sessions = h.sessions.sessions.read().await.len();
    let pow = crate::pow::pool::Pool::global().stats();
    axum::Json(serde_json::json!({
        "status": "ok",
        "version": env!("CARGO_PKG_VERSION"),
        "source": status.name,
        "block_height": status.block_height,
        "paused": status.paused,
        "sessions": sessions,
        "proof_of_work": {
            "threads": pow.size,
            "hashing": pow.busy,
            "searches": pow.searches,
        },
    }))
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// Equal in time that does not depend on where the bytes differ.
fn same(a: &[u8; 32], b: &[u8; 32]) -> bool {
    let mut diff = 0u8;
    for (x, y) in a.iter().zip(b) {
        diff |= x ^ y;
    }
    std::hint::black_box(diff) == 0
}

/// Refuses a body whose declared length is over [`MAX_BODY_BYTES`] before reading it,
/// with the same JSON-RPC error as an oversized message on stdio. A chunked body with
/// no length is cut by rmcp at the same limit, with a plain-text 413.
async fn limit_body(request: Request, next: Next) -> Response {
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<usize>().ok());
    match declared {
        Some(bytes) if bytes > MAX_BODY_BYTES => {
            tracing::warn!(
                bytes,
                limit = MAX_BODY_BYTES,
                "refused an HTTP request over the size limit"
            );
            let answer = super::stdio::too_large_answer(None, Some(bytes), MAX_BODY_BYTES);
            (StatusCode::PAYLOAD_TOO_LARGE, axum::Json(answer)).into_response()
        }
        _ => next.run(request).await,
    }
}

/// The host names a loopback server answers to, as rmcp's `Host` check has them.
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// Which `Origin` a request may carry (when it carries one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origins {
    /// Bound to loopback: an origin on a loopback host name (`localhost`, `127.0.0.1`,
    /// `[::1]`; any scheme of http and https, any port), the names rmcp's `Host` check
    /// lets in.
    Loopback,
    /// Bound beyond loopback (with a token): an origin on the host the request was sent
    /// to, as its `Host` header names it (any port).
    SameHost,
}

/// The host of an origin (`scheme://host[:port]`, http or https), lower-cased and
/// without brackets; `None` for anything else (`null`, `file://`, a path).
fn origin_host(origin: &str) -> Option<String> {
    let origin = origin.trim().to_ascii_lowercase();
    let (scheme, rest) = origin.split_once("://")?;
    if !matches!(scheme, "http" | "https") || rest.is_empty() || rest.contains(['/', '?', '#', '@'])
    {
        return None;
    }
    let authority = axum::http::uri::Authority::try_from(rest).ok()?;
    Some(authority.host().trim_matches(['[', ']']).to_string())
}

/// Whether a request with these headers may come from its `Origin`.
pub fn origin_allowed(origins: Origins, headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return true;
    };
    let Some(host) = origin.to_str().ok().and_then(origin_host) else {
        return false;
    };
    match origins {
        Origins::Loopback => LOOPBACK_HOSTS.contains(&host.as_str()),
        Origins::SameHost => headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .and_then(|h| axum::http::uri::Authority::try_from(h).ok())
            .is_some_and(|a| {
                a.host()
                    .trim_matches(['[', ']'])
                    .eq_ignore_ascii_case(&host)
            }),
    }
}

/// A JSON-RPC error body (id `null`) with `status`, its data the error object.
pub(super) fn refusal(
    status: StatusCode,
    code: rmcp::model::ErrorCode,
    error: ToolError,
) -> Response {
    let answer = rmcp::model::ServerJsonRpcMessage::error(strict::rpc_error(code, &error), None);
    (status, axum::Json(answer)).into_response()
}

/// Refuses a request from an origin [`origin_allowed`] does not allow: 403.
async fn check_origin(State(origins): State<Origins>, request: Request, next: Next) -> Response {
    if origin_allowed(origins, request.headers()) {
        return next.run(request).await;
    }
    let origin = request
        .headers()
        .get(header::ORIGIN)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .unwrap_or_default();
    tracing::warn!(origin = %crate::error::echo(&serde_json::json!(origin)), "refused an HTTP request from a foreign Origin");
    let allowed = match origins {
        Origins::Loopback => "an origin on localhost, 127.0.0.1 or [::1]",
        Origins::SameHost => "an origin on the host the request is sent to",
    };
    let error = ToolError::field(
        ErrorCode::Unauthorized,
        "Origin",
        format!(
            "the Origin {} is not allowed here: this server takes requests with no Origin \
             or {allowed} (against DNS rebinding)",
            crate::error::echo(&serde_json::json!(origin))
        ),
    );
    let message = format!("forbidden: {}", error.reason.as_deref().unwrap_or_default());
    refusal(
        StatusCode::FORBIDDEN,
        rmcp::model::ErrorCode::INVALID_REQUEST,
        error.with_message(message),
    )
}

/// Whether the request says its body is JSON (`application/json`, parameters aside).
fn says_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            let essence = v.split_once(';').map_or(v, |(e, _)| e);
            essence.trim().eq_ignore_ascii_case("application/json")
        })
}

/// The strict check of a POST's message, before rmcp reads it (and before its own
/// checks of the headers); and 204 for a DELETE rmcp answers 202 (clients take 200 or
/// 204 for a session ended).
async fn check_message(request: Request, next: Next) -> Response {
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
    if !says_json(request.headers()) {
        let given = request
            .headers()
            .get(header::CONTENT_TYPE)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        let error = ToolError::field(
            ErrorCode::ValidationInvalidValue,
            "Content-Type",
            format!(
                "a message is sent as application/json, not {}",
                given.map_or("without a Content-Type".into(), |g| crate::error::echo(
                    &serde_json::json!(g)
                ))
            ),
        );
        let message = format!(
            "unsupported media type: {}",
            error.reason.as_deref().unwrap_or_default()
        );
        return refusal(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            rmcp::model::ErrorCode::INVALID_REQUEST,
            error.with_message(message),
        );
    }
    let (parts, body) = request.into_parts();
    let mut bytes = Vec::new();
    let mut stream = body.into_data_stream();
    let deadline = tokio::time::Instant::now() + BODY_TIMEOUT;
    loop {
        let Ok(next_chunk) =
            tokio::time::timeout_at(deadline, futures_util::StreamExt::next(&mut stream)).await
        else {
            tracing::warn!(
                timeout_secs = BODY_TIMEOUT.as_secs(),
                "refused an HTTP request whose body did not arrive in time"
            );
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
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            return response;
        };
        let Some(chunk) = next_chunk else { break };
        let Ok(chunk) = chunk else {
            let error = ToolError::new(
                ErrorCode::ValidationInvalidFormat,
                "the request body could not be read to its end",
            );
            return refusal(
                StatusCode::BAD_REQUEST,
                rmcp::model::ErrorCode::INVALID_REQUEST,
                error,
            );
        };
        if bytes.len() + chunk.len() > MAX_BODY_BYTES {
            tracing::warn!(
                limit = MAX_BODY_BYTES,
                "refused an HTTP request over the size limit"
            );
            let answer = super::stdio::too_large_answer(None, None, MAX_BODY_BYTES);
            return (StatusCode::PAYLOAD_TOO_LARGE, axum::Json(answer)).into_response();
        }
        bytes.extend_from_slice(&chunk);
    }
    match strict::check(&bytes) {
        Verdict::Pass => {
            // rmcp reads the body as it is; a byte-order mark it would refuse.
            if bytes.starts_with(b"\xEF\xBB\xBF") {
                bytes.drain(..3);
            }
            next.run(Request::from_parts(parts, axum::body::Body::from(bytes)))
                .await
        }
        Verdict::Refuse(r) => {
            r.log("http");
            let status = StatusCode::from_u16(r.http_status()).unwrap_or(StatusCode::BAD_REQUEST);
            (status, axum::Json(r.answer())).into_response()
        }
    }
}

/// The token check, on every request when a token is set.
async fn authorize(
    State(expected): State<Option<Arc<[u8; 32]>>>,
    request: Request,
    next: Next,
) -> Response {
    let Some(expected) = expected else {
        return next.run(request).await;
    };
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, token) = v.trim().split_once(' ')?;
            scheme
                .eq_ignore_ascii_case("bearer")
                .then(|| token.trim().to_string())
        });
    let reason = match given {
        None => "this server needs `Authorization: Bearer TOKEN` on every request",
        Some(token) if same(&digest(&token), &expected) => return next.run(request).await,
        Some(_) => "the bearer token is not this server's",
    };
    tracing::warn!(path = %request.uri().path(), "refused an HTTP request: {reason}");
    let body = ToolError::new(ErrorCode::Unauthorized, reason.to_string())
        .to_json(&chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true));
    let mut response = (StatusCode::UNAUTHORIZED, axum::Json(body)).into_response();
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"structs-console\""),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(token: Option<&str>, allow_remote: bool) -> HttpOptions {
        HttpOptions {
            listen: String::new(),
            token: token.map(str::to_string),
            allow_remote,
            ..HttpOptions::default()
        }
    }

    #[test]
    fn binds_that_need_a_flag_and_a_token() {
        let local: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let local6: SocketAddr = "[::1]:0".parse().unwrap();
        let any: SocketAddr = "0.0.0.0:8080".parse().unwrap();
        let token = "0123456789abcdef";
        assert_eq!(check_bind(local, &options(None, false)), Ok(()));
        assert_eq!(check_bind(local6, &options(None, false)), Ok(()));
        assert_eq!(
            check_bind(any, &options(None, false)),
            Err(RefusedBind::NotLoopback(any))
        );
        // A token alone is not enough: the flag says the exposure is meant.
        assert_eq!(
            check_bind(any, &options(Some(token), false)),
            Err(RefusedBind::NotLoopback(any))
        );
        assert_eq!(
            check_bind(any, &options(None, true)),
            Err(RefusedBind::NoToken(any))
        );
        assert_eq!(check_bind(any, &options(Some(token), true)), Ok(()));
        assert_eq!(
            check_bind(any, &options(Some("short"), true)),
            Err(RefusedBind::ShortToken(5))
        );
        assert_eq!(
            check_bind(local, &options(Some("short"), false)),
            Err(RefusedBind::ShortToken(5))
        );
        // A token a client could never send as it is.
        for (bad, what, at) in [
            ("s3cret-token-0123456789\n", "white space", 24),
            (" s3cret-token-0123456789", "white space", 1),
            ("s3cret-token 0123456789", "white space", 13),
            ("s3cret-token-\u{7}0123456789", "a control character", 14),
        ] {
            assert_eq!(
                check_bind(local, &options(Some(bad), false)),
                Err(RefusedBind::TokenSpace(what, at)),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn tokens_compare_by_digest() {
        let a = digest("0123456789abcdef");
        assert!(same(&a, &digest("0123456789abcdef")));
        assert!(!same(&a, &digest("0123456789abcdeF")));
        assert!(!same(&a, &digest("0123456789abcdef0")));
        assert!(!same(&a, &digest("")));
    }

    #[test]
    fn options_never_print_the_token() {
        let text = format!("{:?}", options(Some("secret-secret-secret"), true));
        assert!(!text.contains("secret"), "{text}");
        assert!(text.contains("<set>"), "{text}");
    }
}
