//! What the two HTTP faces that speak MCP share (the server's `--http` and the
//! proxy's `--http`): the endpoint's path, the options a face listens with and whom
//! it lets in, the body's size limit, and a refusal as a JSON-RPC error body.

use std::net::SocketAddr;
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

pub use super::listen::ListenLimits;
use crate::error::{ErrorCode, ToolError};
use crate::guard::{Check, Exposure, Guard, Refusal, RefusedBind};
use crate::throttle::{Every, WARN_EVERY};

/// The path the MCP endpoint is served at.
pub const PATH: &str = "/mcp";

/// What a refusal to bind names: this face's flag, and what it would expose.
pub const EXPOSURE: Exposure = Exposure {
    flag: "--http-allow-remote",
    could: "call the tools",
};

/// The largest request body accepted: the same limit as one message over stdio.
pub const MAX_BODY_BYTES: usize = super::MAX_MESSAGE_BYTES;

/// How the HTTP face listens and whom it lets in.
#[derive(Clone, Default)]
pub struct HttpOptions {
    pub listen: String,
    /// The bearer token every request must carry, if any.
    pub token: Option<String>,
    /// Whether a non-loopback address may be bound (with a token).
    pub allow_remote: bool,
    /// The callers' own tokens (`--caller-tokens`): name and token of each.
    pub callers: Vec<(String, String)>,
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
            .field("callers", &self.callers.len())
            .field("sessions", &self.sessions)
            .field("connections", &self.connections)
            .finish()
    }
}

/// Whether `addr` may be served with these options ([`crate::guard::check_bind`]).
pub fn check_bind(addr: SocketAddr, options: &HttpOptions) -> Result<(), RefusedBind> {
    // The callers' tokens guard a remote bind as the server's own does (each was
    // checked as the file was read).
    let token = options
        .token
        .as_deref()
        .or(options.callers.first().map(|(_, t)| t.as_str()));
    crate::guard::check_bind(addr, token, options.allow_remote, EXPOSURE)
}

/// How many sessions, and for how long idle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionLimits {
    /// Sessions open at once.
    pub max: usize,
    /// A session with nothing in flight and no stream open for this long is ended.
    pub idle: Duration,
}

impl SessionLimits {
    pub const DEFAULT_MAX: usize = 1_000;
    pub const DEFAULT_IDLE: Duration = Duration::from_secs(120);
}

impl Default for SessionLimits {
    fn default() -> Self {
        SessionLimits {
            max: Self::DEFAULT_MAX,
            idle: Self::DEFAULT_IDLE,
        }
    }
}

/// Refuses a body whose declared length is over [`MAX_BODY_BYTES`] before reading it,
/// with the same JSON-RPC error as an oversized message on stdio. A chunked body with
/// no length is cut by rmcp at the same limit, with a plain-text 413.
pub async fn limit_body(request: Request, next: Next) -> Response {
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<usize>().ok());
    match declared {
        Some(bytes) if bytes > MAX_BODY_BYTES => {
            static OVER: Every = Every::new(WARN_EVERY);
            if let Some(unlogged) = OVER.ready() {
                tracing::warn!(
                    bytes,
                    limit = MAX_BODY_BYTES,
                    unlogged_since_last = unlogged,
                    "refused an HTTP request over the size limit (logged at most once in 10 s)"
                );
            }
            let answer = super::too_large_answer(None, Some(bytes), MAX_BODY_BYTES);
            (StatusCode::PAYLOAD_TOO_LARGE, json_body(&answer)).into_response()
        }
        _ => next.run(request).await,
    }
}

/// A JSON-RPC error body (id `null`) with `status`, its data the error object.
pub fn refusal(status: StatusCode, code: rmcp::model::ErrorCode, error: ToolError) -> Response {
    let answer = rmcp::model::ServerJsonRpcMessage::error(super::rpc_error(code, &error), None);
    (status, json_body(&answer)).into_response()
}

/// A JSON-RPC message as a body; an error with no id gets `"id": null`, which rmcp
/// leaves out. JSON-RPC 2.0 asks for the member, and the official Python SDK reads an
/// error body without it as no JSON-RPC error at all: it reports "Server returned an
/// error response" in place of the error's message.
pub fn json_body(answer: &rmcp::model::ServerJsonRpcMessage) -> axum::Json<serde_json::Value> {
    let mut body = serde_json::to_value(answer).unwrap_or_default();
    if let Some(fields) = body.as_object_mut()
        && fields.contains_key("error")
    {
        fields.entry("id").or_insert(serde_json::Value::Null);
    }
    axum::Json(body)
}

/// Host, Origin and token ([`Guard::check`]) on every request but `/health`.
pub async fn check_request(
    State(guard): State<Guard>,
    mut request: Request,
    next: Next,
) -> Response {
    match guard.check(request.uri(), request.headers()) {
        Ok(principal) => {
            // Who sent it rides with it to the server's handlers
            // ([`crate::context::caller`]).
            request.extensions_mut().insert(principal);
            next.run(request).await
        }
        Err(refused) => refuse(refused),
    }
}

/// A refusal in this face's shape: a JSON-RPC `-32600` error (id `null`) whose data is
/// the error object on the header at fault. The token's is 400 with no challenge (see
/// the module's notes); the others keep the guard's status.
pub fn refuse(refused: Refusal) -> Response {
    let code = match refused.check {
        Check::BodyType => ErrorCode::ValidationInvalidValue,
        _ => ErrorCode::Unauthorized,
    };
    let error = ToolError::field(code, refused.field, refused.reason.clone())
        .with_message(refused.message());
    let status = match refused.check {
        Check::Token => StatusCode::BAD_REQUEST,
        _ => refused.status,
    };
    refusal(status, rmcp::model::ErrorCode::INVALID_REQUEST, error)
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
    fn binds_name_this_faces_flag() {
        let any: SocketAddr = "0.0.0.0:8080".parse().unwrap();
        let refused = check_bind(any, &options(None, false)).unwrap_err();
        assert_eq!(refused, RefusedBind::NotLoopback(any, EXPOSURE));
        let text = refused.to_string();
        assert!(text.contains("--http-allow-remote"), "{text}");
        assert!(text.contains("call the tools"), "{text}");
        assert_eq!(
            check_bind(any, &options(Some("0123456789abcdef"), true)),
            Ok(())
        );
    }

    #[test]
    fn options_never_print_the_token() {
        let text = format!("{:?}", options(Some("secret-secret-secret"), true));
        assert!(!text.contains("secret"), "{text}");
        assert!(text.contains("<set>"), "{text}");
    }
}
