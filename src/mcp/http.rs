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

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use super::McpServer;

/// The path the MCP endpoint is served at.
pub const PATH: &str = "/mcp";

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
}

impl std::fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token itself.
        f.debug_struct("HttpOptions")
            .field("listen", &self.listen)
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field("allow_remote", &self.allow_remote)
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
}

/// Whether `addr` may be served with these options.
pub fn check_bind(addr: SocketAddr, options: &HttpOptions) -> Result<(), RefusedBind> {
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
        if !addr.ip().is_loopback() {
            // Reached by whatever name the network gives it; the token guards it.
            config = config.disable_allowed_hosts();
        }
        let service = StreamableHttpService::new(
            move || Ok(server.for_new_client()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        let digest = options.token.as_deref().map(|t| Arc::new(digest(t)));
        let app = axum::Router::new()
            .nest_service(PATH, service)
            .layer(axum::middleware::from_fn(limit_body))
            .layer(axum::middleware::from_fn_with_state(digest, authorize));
        let stop = cancel.clone();
        // Answers go out as small server-sent events; without TCP_NODELAY each would
        // wait on the client's delayed ACK (40 ms on Linux).
        let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let task = tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async move { stop.cancelled().await })
                .await
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
            let answer = super::stdio::oversized_answer(
                &super::stdio::Oversized { id: None, bytes },
                MAX_BODY_BYTES,
            );
            (StatusCode::PAYLOAD_TOO_LARGE, axum::Json(answer)).into_response()
        }
        _ => next.run(request).await,
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
    let body =
        crate::error::ToolError::new(crate::error::ErrorCode::Unauthorized, reason.to_string())
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
