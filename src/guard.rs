//! Who an HTTP face lets in: one set of rules for MCP over HTTP (`--headless --http`,
//! [`crate::mcp::server::http`]) and `serve-rest` ([`crate::rest::server`]). Each face renders a
//! [`Refusal`] in its own error shape; the rules themselves are stated here once.
//!
//! - **Binding** ([`check_bind`]): a loopback address needs nothing more; any other needs
//!   the face's allow-remote flag and a bearer token of at least [`MIN_TOKEN_LEN`]
//!   characters. A token with white space or control characters is refused everywhere.
//! - **Token** ([`Guard::token`]): with a token, every request must carry
//!   `Authorization: Bearer TOKEN`; it is compared in constant time over SHA-256 digests
//!   (so its length leaks nothing either) and never logged. A refusal says which header
//!   to send and where the token comes from. Its status is the face's:
//!   `serve-rest` answers 401 with `WWW-Authenticate`, as a node's gateway does
//!   ([`Refusal::respond`]); MCP over HTTP answers 400 with no challenge, because an MCP
//!   host takes a 401 for a server that wants OAuth, which a static token cannot give
//!   (see [`crate::mcp::server::http`]).
//! - **Host** ([`Guard::host`]): bound to loopback, a request must name a loopback host
//!   (`localhost`, `127.0.0.1`, `[::1]`, any port), or it is 403: a name an attacker
//!   points at 127.0.0.1 (DNS rebinding) is not one. Bound beyond loopback, the server is
//!   reached by whatever name the network gives it, and the token guards it.
//! - **Origin** ([`Guard::origin`]): a request carrying an `Origin` (a browser's) must come
//!   from the server's own host ([`Origins`]), or it is 403. No `Origin` passes.
//! - **Body type** ([`body_type`]): a body is JSON only (`application/json`, parameters
//!   aside), or it is 415: a web page can send `text/plain` or a form to any address
//!   without asking first (a "simple request"), but not JSON.

use std::net::SocketAddr;
use std::sync::Arc;

use crate::context::Principal;
use crate::throttle::{Every, WARN_EVERY};

use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

/// The shortest bearer token accepted.
pub const MIN_TOKEN_LEN: usize = 16;

/// The environment variable a token may come from (so it stays out of `ps`).
pub const TOKEN_ENV: &str = "STRUCTS_CONSOLE_AUTH_TOKEN";

/// The host names a loopback server answers to (rmcp's `Host` check has the same).
pub const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// What a face's refusals to bind name: the flag that lets it bind beyond loopback, and
/// what anyone who reaches it could do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exposure {
    pub flag: &'static str,
    pub could: &'static str,
}

/// Whom a face lets in, from the command line.
#[derive(Clone, Default)]
pub struct Access {
    /// The bearer token every request must carry, if any.
    pub token: Option<String>,
    /// Whether a non-loopback address may be bound (with a token).
    pub allow_remote: bool,
}

impl std::fmt::Debug for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token itself.
        f.debug_struct("Access")
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field("allow_remote", &self.allow_remote)
            .finish()
    }
}

impl Access {
    /// Whether `addr` may be served with this access ([`check_bind`]).
    pub fn check_bind(&self, addr: SocketAddr, exposure: Exposure) -> Result<(), RefusedBind> {
        check_bind(addr, self.token.as_deref(), self.allow_remote, exposure)
    }
}

/// Why a face would not start.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RefusedBind {
    #[error(
        "{0} is not a loopback address: anyone on the network could {could}. Pass {flag} \
         and a bearer token (--auth-token or {TOKEN_ENV}) to serve it, or listen on \
         127.0.0.1",
        could = .1.could,
        flag = .1.flag
    )]
    NotLoopback(SocketAddr, Exposure),
    #[error(
        "{flag} needs a bearer token (--auth-token or {TOKEN_ENV}): without one, anyone \
         who reaches {0} could {could}",
        could = .1.could,
        flag = .1.flag
    )]
    NoToken(SocketAddr, Exposure),
    #[error("the bearer token is {0} characters; use at least {MIN_TOKEN_LEN}")]
    ShortToken(usize),
    #[error(
        "the bearer token has {0} at character {1} (often a newline left by the file it \
         was read from); clients send a token without it, so every request would be \
         refused: remove it"
    )]
    TokenSpace(&'static str, usize),
}

/// Whether `token` can be a bearer token: long enough, with no white space or control
/// character (which a client would never send).
pub fn check_token(token: &str) -> Result<(), RefusedBind> {
    if let Some((at, c)) = token
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
    if token.chars().count() < MIN_TOKEN_LEN {
        return Err(RefusedBind::ShortToken(token.chars().count()));
    }
    Ok(())
}

/// Whether `addr` may be served with this token and flag; `exposure` words the refusal.
pub fn check_bind(
    addr: SocketAddr,
    token: Option<&str>,
    allow_remote: bool,
    exposure: Exposure,
) -> Result<(), RefusedBind> {
    if let Some(token) = token {
        check_token(token)?;
    }
    if addr.ip().is_loopback() {
        return Ok(());
    }
    if !allow_remote {
        return Err(RefusedBind::NotLoopback(addr, exposure));
    }
    if token.is_none() {
        return Err(RefusedBind::NoToken(addr, exposure));
    }
    Ok(())
}

/// Which check refused a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    Host,
    Origin,
    Token,
    BodyType,
}

/// A request refused: its status, the header at fault and why. Each face writes it in
/// its own error shape; [`Refusal::respond`] adds what every face sends with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub check: Check,
    pub status: StatusCode,
    /// The request header at fault (`Host`, `Origin`, `Authorization`, `Content-Type`).
    pub field: &'static str,
    pub reason: String,
}

impl Refusal {
    /// The error message: the status in words, then the reason (the token's refusal is
    /// its reason alone, as MCP has always said it).
    pub fn message(&self) -> String {
        match self.check {
            Check::Token => self.reason.clone(),
            Check::Host | Check::Origin => format!("forbidden: {}", self.reason),
            Check::BodyType => format!("unsupported media type: {}", self.reason),
        }
    }

    /// `body` with the refusal's status, and `WWW-Authenticate` on the token's (a 401
    /// carries a challenge): `serve-rest`'s answer. MCP over HTTP writes its own, with
    /// no challenge (see the module's notes).
    pub fn respond(&self, body: impl IntoResponse) -> Response {
        let mut response = (self.status, body).into_response();
        if self.check == Check::Token {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"structs-console\""),
            );
        }
        response
    }
}

/// Which `Host` a request may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hosts {
    /// Bound to loopback: one of [`LOOPBACK_HOSTS`], any port.
    Loopback,
    /// Bound beyond loopback (with a token): any.
    Any,
}

/// Which `Origin` a request may carry (when it carries one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origins {
    /// Bound to loopback: an origin on a loopback host name (`localhost`, `127.0.0.1`,
    /// `[::1]`; any scheme of http and https, any port), the names the `Host` check lets
    /// in.
    Loopback,
    /// Bound beyond loopback (with a token): an origin on the host the request was sent
    /// to, as its `Host` header names it (any port).
    SameHost,
}

/// The checks of every request to a face bound at one address.
#[derive(Clone)]
pub struct Guard {
    token: Option<Arc<[u8; 32]>>,
    /// The callers' own tokens (`--caller-tokens`), each a digest with its caller.
    callers: Arc<Vec<([u8; 32], Principal)>>,
    hosts: Hosts,
    origins: Origins,
}

impl std::fmt::Debug for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guard")
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field("hosts", &self.hosts)
            .field("origins", &self.origins)
            .finish()
    }
}

impl Guard {
    /// The checks for a face bound at `addr` (after [`check_bind`] passed), asking for
    /// `token` when there is one.
    pub fn new(addr: SocketAddr, token: Option<&str>) -> Guard {
        let loopback = addr.ip().is_loopback();
        Guard {
            token: token.map(|t| Arc::new(digest(t))),
            callers: Arc::default(),
            hosts: if loopback {
                Hosts::Loopback
            } else {
                Hosts::Any
            },
            origins: if loopback {
                Origins::Loopback
            } else {
                Origins::SameHost
            },
        }
    }

    /// Lets in each of `callers` (name, token) by its own token too, as that caller.
    pub fn with_callers(mut self, callers: &[(String, String)]) -> Guard {
        self.callers = Arc::new(
            callers
                .iter()
                .map(|(name, token)| (digest(token), Principal::named(name)))
                .collect(),
        );
        self
    }

    /// Whether any token is asked for.
    fn asks_token(&self) -> bool {
        self.token.is_some() || !self.callers.is_empty()
    }

    /// Who a request that passed [`Guard::check`] comes from
    /// ([`crate::context::caller`]): the operator for the server's token, a named
    /// caller for one of the callers' tokens; on a server that asks for no token, a
    /// caller told apart by the token it sends anyway, or anonymous.
    pub fn principal(&self, headers: &HeaderMap) -> Principal {
        self.identify(headers).unwrap_or_else(Principal::anonymous)
    }

    /// The caller a request's token names; `None` on a server that asks for a token,
    /// when the request carries none or one it does not know. Every token is compared,
    /// in constant time, so the time taken says nothing of which matched.
    fn identify(&self, headers: &HeaderMap) -> Option<Principal> {
        let given = bearer(headers);
        if !self.asks_token() {
            return Some(given.map_or_else(Principal::anonymous, |g| Principal::keyed(&g)));
        }
        let given = digest(&given?);
        let mut found = self
            .token
            .as_ref()
            .filter(|t| same(&given, t))
            .map(|_| Principal::operator());
        for (token, caller) in self.callers.iter() {
            if same(&given, token) && found.is_none() {
                found = Some(caller.clone());
            }
        }
        found
    }

    pub fn hosts(&self) -> Hosts {
        self.hosts
    }

    pub fn origins(&self) -> Origins {
        self.origins
    }

    /// Host, then Origin, then the token: the order both faces check a request in. A
    /// request let in is its caller's ([`Guard::principal`]).
    pub fn check(&self, uri: &Uri, headers: &HeaderMap) -> Result<Principal, Refusal> {
        self.host(uri, headers)?;
        self.origin(headers)?;
        self.token(headers)
    }

    /// Refuses a `Host` that is not this server's ([`Hosts`]): 403. A request with no
    /// `Host` header is read by the authority of its URI (HTTP/2, absolute form).
    pub fn host(&self, uri: &Uri, headers: &HeaderMap) -> Result<(), Refusal> {
        if self.hosts == Hosts::Any {
            return Ok(());
        }
        let named = match headers.get(header::HOST) {
            Some(h) => Some(String::from_utf8_lossy(h.as_bytes()).into_owned()),
            None => uri.authority().map(|a| a.as_str().to_string()),
        };
        let host = named
            .as_deref()
            .and_then(|h| axum::http::uri::Authority::try_from(h).ok())
            .map(|a| a.host().trim_matches(['[', ']']).to_ascii_lowercase());
        if host.is_some_and(|h| LOOPBACK_HOSTS.contains(&h.as_str())) {
            return Ok(());
        }
        let given = match &named {
            Some(n) => format!(
                "the Host {} is not this server's",
                crate::error::echo(&serde_json::json!(n))
            ),
            None => "the request names no Host".to_string(),
        };
        static HOST: Every = Every::new(WARN_EVERY);
        if let Some(unlogged) = HOST.ready() {
            tracing::warn!(host = %crate::error::echo(&serde_json::json!(named)), unlogged_since_last = unlogged, "refused an HTTP request for a foreign Host (possible DNS rebinding; logged at most once in 10 s)");
        }
        Err(Refusal {
            check: Check::Host,
            status: StatusCode::FORBIDDEN,
            field: "Host",
            reason: format!(
                "{given}: bound to loopback, it answers to localhost, 127.0.0.1 or [::1] \
                 (against DNS rebinding)"
            ),
        })
    }

    /// Refuses an origin [`origin_allowed`] does not allow: 403.
    pub fn origin(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        if origin_allowed(self.origins, headers) {
            return Ok(());
        }
        let origin = headers
            .get(header::ORIGIN)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .unwrap_or_default();
        let origin = crate::error::echo(&serde_json::json!(origin));
        static ORIGIN: Every = Every::new(WARN_EVERY);
        if let Some(unlogged) = ORIGIN.ready() {
            tracing::warn!(%origin, unlogged_since_last = unlogged, "refused an HTTP request from a foreign Origin (logged at most once in 10 s)");
        }
        let allowed = match self.origins {
            Origins::Loopback => "an origin on localhost, 127.0.0.1 or [::1]",
            Origins::SameHost => "an origin on the host the request is sent to",
        };
        Err(Refusal {
            check: Check::Origin,
            status: StatusCode::FORBIDDEN,
            field: "Origin",
            reason: format!(
                "the Origin {origin} is not allowed here: this server takes requests with \
                 no Origin or {allowed} (against DNS rebinding)"
            ),
        })
    }

    /// With a token, refuses a request that does not carry it: 401 (a face may answer
    /// it with another status; see the module's notes).
    pub fn token(&self, headers: &HeaderMap) -> Result<Principal, Refusal> {
        if let Some(caller) = self.identify(headers) {
            return Ok(caller);
        }
        let (logged, reason) = match bearer(headers) {
            None => (
                "no bearer token",
                "this server needs `Authorization: Bearer TOKEN` on every request",
            ),
            Some(_) => (
                "a bearer token that is not this server's",
                "the bearer token is not this server's: send `Authorization: Bearer TOKEN`",
            ),
        };
        static TOKEN: Every = Every::new(WARN_EVERY);
        if let Some(unlogged) = TOKEN.ready() {
            tracing::warn!(
                unlogged_since_last = unlogged,
                "refused an HTTP request with {logged} (logged at most once in 10 s)"
            );
        }
        // Said so that whoever configures the client knows what to change: the header,
        // and where its token comes from.
        let reason = if self.callers.is_empty() {
            format!(
                "{reason}, with the token this server was started with (--auth-token or \
                 {TOKEN_ENV}); set that header in the client's configuration"
            )
        } else {
            format!(
                "{reason}, with the token its operator gave this caller (a line of its \
                 --caller-tokens file); set that header in the client's configuration"
            )
        };
        Err(Refusal {
            check: Check::Token,
            status: StatusCode::UNAUTHORIZED,
            field: "Authorization",
            reason,
        })
    }
}

/// The token of a request's `Authorization: Bearer TOKEN`, if it carries one.
fn bearer(headers: &HeaderMap) -> Option<String> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, token) = v.trim().split_once(' ')?;
            scheme
                .eq_ignore_ascii_case("bearer")
                .then(|| token.trim().to_string())
        })
        .filter(|t| !t.is_empty())
}

/// The longest caller name a callers file may give.
pub const CALLER_NAME_MAX: usize = 64;

/// Reads a callers file (`--caller-tokens`): one caller a line, its name then its token,
/// parted by white space; blank lines and lines from `#` on are skipped. A name is
/// letters, digits, `_`, `-` and `.`, at most [`CALLER_NAME_MAX`]; a token is one
/// [`check_token`] takes. Names and tokens are each given once.
///
/// # Errors
///
/// The first line that breaks a rule, by its number.
pub fn read_callers(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut callers: Vec<(String, String)> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let at = |e: String| format!("line {}: {e}", n + 1);
        let mut words = line.split_whitespace();
        let (Some(name), Some(token), None) = (words.next(), words.next(), words.next()) else {
            return Err(at("give a caller's name, then its token".into()));
        };
        let name_ok = name.len() <= CALLER_NAME_MAX
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
        if !name_ok {
            return Err(at(format!(
                "the name {name:?} is not 1-{CALLER_NAME_MAX} letters, digits, _ - or ."
            )));
        }
        check_token(token).map_err(|e| at(e.to_string()))?;
        if callers.iter().any(|(n, _)| n == name) {
            return Err(at(format!("the caller {name:?} is named twice")));
        }
        if callers.iter().any(|(_, t)| t == token) {
            return Err(at(
                "this token is given twice; each caller needs its own".into()
            ));
        }
        callers.push((name.to_string(), token.to_string()));
    }
    if callers.is_empty() {
        return Err("it names no caller".into());
    }
    Ok(callers)
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

/// Whether the request says its body is JSON (`application/json`, parameters aside).
pub fn says_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            let essence = v.split_once(';').map_or(v, |(e, _)| e);
            essence.trim().eq_ignore_ascii_case("application/json")
        })
}

/// Whether a request has (or may have) a body: every POST, PUT and PATCH, and any other
/// request that declares one (a length over 0, or a transfer encoding).
fn has_body(method: &Method, headers: &HeaderMap) -> bool {
    if matches!(*method, Method::POST | Method::PUT | Method::PATCH) {
        return true;
    }
    headers.contains_key(header::TRANSFER_ENCODING)
        || headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim() != "0")
}

/// Refuses a request with a body that is not said to be JSON: 415. A `text/plain` or
/// form body, or one with no `Content-Type`, is what a web page can send anywhere.
pub fn body_type(method: &Method, headers: &HeaderMap) -> Result<(), Refusal> {
    if !has_body(method, headers) || says_json(headers) {
        return Ok(());
    }
    let given = headers
        .get(header::CONTENT_TYPE)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    Err(Refusal {
        check: Check::BodyType,
        status: StatusCode::UNSUPPORTED_MEDIA_TYPE,
        field: "Content-Type",
        reason: format!(
            "a body is sent as application/json, not {}",
            given.map_or("without a Content-Type".into(), |g| crate::error::echo(
                &serde_json::json!(g)
            ))
        ),
    })
}

/// Whether `given` is `expected`, compared in constant time (over their digests).
pub fn tokens_match(given: &str, expected: &str) -> bool {
    same(&digest(given), &digest(expected))
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

#[cfg(test)]
mod tests {
    use super::*;

    const FACE: Exposure = Exposure {
        flag: "--some-allow-remote",
        could: "do things",
    };

    #[test]
    fn binds_that_need_a_flag_and_a_token() {
        let local: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let local6: SocketAddr = "[::1]:0".parse().unwrap();
        let any: SocketAddr = "0.0.0.0:8080".parse().unwrap();
        let token = Some("0123456789abcdef");
        assert_eq!(check_bind(local, None, false, FACE), Ok(()));
        assert_eq!(check_bind(local6, None, false, FACE), Ok(()));
        assert_eq!(
            check_bind(any, None, false, FACE),
            Err(RefusedBind::NotLoopback(any, FACE))
        );
        // A token alone is not enough: the flag says the exposure is meant.
        assert_eq!(
            check_bind(any, token, false, FACE),
            Err(RefusedBind::NotLoopback(any, FACE))
        );
        assert_eq!(
            check_bind(any, None, true, FACE),
            Err(RefusedBind::NoToken(any, FACE))
        );
        assert_eq!(check_bind(any, token, true, FACE), Ok(()));
        assert_eq!(
            check_bind(any, Some("short"), true, FACE),
            Err(RefusedBind::ShortToken(5))
        );
        assert_eq!(
            check_bind(local, Some("short"), false, FACE),
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
                check_bind(local, Some(bad), false, FACE),
                Err(RefusedBind::TokenSpace(what, at)),
                "{bad:?}"
            );
        }
        // The refusal names the face's flag and what it would expose.
        let text = RefusedBind::NotLoopback(any, FACE).to_string();
        assert!(text.contains("--some-allow-remote"), "{text}");
        assert!(text.contains("could do things"), "{text}");
        let text = RefusedBind::NoToken(any, FACE).to_string();
        assert!(
            text.starts_with("--some-allow-remote needs a bearer token"),
            "{text}"
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
    fn access_never_prints_the_token() {
        let access = Access {
            token: Some("secret-secret-secret".into()),
            allow_remote: true,
        };
        let text = format!("{access:?}");
        assert!(!text.contains("secret"), "{text}");
        assert!(text.contains("<set>"), "{text}");
        let guard = Guard::new("127.0.0.1:1".parse().unwrap(), Some("secret-secret-secret"));
        assert!(!format!("{guard:?}").contains("secret"));
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn hosts_on_loopback_are_loopback_names() {
        let loopback = Guard::new("127.0.0.1:1317".parse().unwrap(), None);
        let remote = Guard::new("0.0.0.0:1317".parse().unwrap(), Some("0123456789abcdef"));
        let path: Uri = "/blockheight".parse().unwrap();
        for host in [
            "127.0.0.1:1317",
            "localhost",
            "LocalHost:9",
            "[::1]:1317",
            "[::1]",
        ] {
            assert_eq!(loopback.host(&path, &headers(&[("host", host)])), Ok(()));
        }
        for host in [
            "evil.example",
            "evil.example:1317",
            "localhost.evil.example",
            "127.0.0.2:1317",
            "",
        ] {
            let refused = loopback
                .host(&path, &headers(&[("host", host)]))
                .unwrap_err();
            assert_eq!(refused.status, StatusCode::FORBIDDEN, "{host}");
            assert_eq!(refused.field, "Host");
            assert!(refused.message().starts_with("forbidden: "), "{refused:?}");
            assert!(remote.host(&path, &headers(&[("host", host)])).is_ok());
        }
        // No Host: the URI's authority, when it has one.
        assert!(loopback.host(&path, &HeaderMap::new()).is_err());
        let absolute: Uri = "http://localhost:1317/blockheight".parse().unwrap();
        assert!(loopback.host(&absolute, &HeaderMap::new()).is_ok());
    }

    #[test]
    fn the_token_is_asked_for_and_compared() {
        let guard = Guard::new("127.0.0.1:1".parse().unwrap(), Some("0123456789abcdef"));
        assert!(
            Guard::new("127.0.0.1:1".parse().unwrap(), None)
                .token(&HeaderMap::new())
                .is_ok()
        );
        for (auth, says) in [
            (None, "needs `Authorization: Bearer TOKEN`"),
            (Some("Basic 0123456789abcdef"), "needs `Authorization"),
            (Some("Bearer 0123456789abcdeF"), "not this server's"),
        ] {
            let h = auth.map_or_else(HeaderMap::new, |a| headers(&[("authorization", a)]));
            let refused = guard.token(&h).unwrap_err();
            assert_eq!(refused.status, StatusCode::UNAUTHORIZED);
            assert_eq!(refused.field, "Authorization");
            assert!(refused.message().contains(says), "{refused:?}");
            // Whatever the mistake, the header to set and where its token comes from.
            assert!(
                refused.message().contains("`Authorization: Bearer TOKEN`")
                    && refused
                        .message()
                        .contains("--auth-token or STRUCTS_CONSOLE_AUTH_TOKEN"),
                "{refused:?}"
            );
            let response = refused.respond("x");
            assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
            assert_eq!(
                response.headers()[header::WWW_AUTHENTICATE],
                "Bearer realm=\"structs-console\""
            );
        }
        let h = headers(&[("authorization", "bearer  0123456789abcdef ")]);
        assert_eq!(guard.token(&h).map(|_| ()), Ok(()));
    }

    #[test]
    fn bodies_are_json_only() {
        let json = headers(&[("content-type", "application/json; charset=utf-8")]);
        assert_eq!(body_type(&Method::POST, &json), Ok(()));
        assert_eq!(body_type(&Method::GET, &HeaderMap::new()), Ok(()));
        for h in [
            headers(&[("content-type", "text/plain")]),
            headers(&[("content-type", "application/x-www-form-urlencoded")]),
            headers(&[("content-type", "multipart/form-data; boundary=x")]),
            headers(&[("content-type", "application/jsonp")]),
            HeaderMap::new(),
        ] {
            let refused = body_type(&Method::POST, &h).unwrap_err();
            assert_eq!(refused.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
            assert!(refused.reason.contains("application/json"), "{refused:?}");
        }
        // Any method with a body.
        let plain = headers(&[("content-type", "text/plain"), ("content-length", "4")]);
        assert!(body_type(&Method::GET, &plain).is_err());
        assert!(
            body_type(
                &Method::DELETE,
                &headers(&[("transfer-encoding", "chunked")])
            )
            .is_err()
        );
        assert!(body_type(&Method::GET, &headers(&[("content-length", "0")])).is_ok());
    }
}

/// `url` as it may be shown (in errors, logs, the live feed): a password in it is
/// replaced by `***`, so that `http://user:PASS@host/` never leaves the process. Text
/// that is not a URL is shown as it is.
pub fn redact_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("***"));
            parsed.to_string()
        }
        _ => url.to_string(),
    }
}

/// `text` with the password of `url`, if it has one, replaced wherever it appears (as
/// a library's error message may quote the URL whole).
pub fn redact_in(text: &str, url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(parsed) => match parsed.password().filter(|p| !p.is_empty()) {
            Some(password) => text.replace(password, "***"),
            None => text.to_string(),
        },
        Err(_) => text.to_string(),
    }
}

#[cfg(test)]
mod redact_tests {
    #[test]
    fn a_password_in_a_url_is_never_shown() {
        let shown = super::redact_url("http://agent:s3cret-PASS@127.0.0.1:9/mcp?x=1");
        assert_eq!(shown, "http://agent:***@127.0.0.1:9/mcp?x=1");
        assert_eq!(
            super::redact_url("http://127.0.0.1:9/mcp"),
            "http://127.0.0.1:9/mcp"
        );
        assert_eq!(super::redact_url("python3 server.py"), "python3 server.py");
        let said = "error sending request for url (http://agent:s3cret@h/): refused";
        assert_eq!(
            super::redact_in(said, "http://agent:s3cret@h/"),
            "error sending request for url (http://agent:***@h/): refused"
        );
    }
}

#[cfg(test)]
mod caller_tests {
    use super::*;

    fn bearing(token: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::AUTHORIZATION,
            HeaderValue::from_str(&format!("Bearer {token}")).unwrap(),
        );
        headers
    }

    #[test]
    fn each_token_is_its_caller_and_the_servers_own_the_operators() {
        let callers = read_callers(
            "# the callers\nalice alice-token-0123456789\n\nbob bob-token-0123456789 # two\n",
        )
        .unwrap();
        assert_eq!(callers.len(), 2);
        let guard = Guard::new("127.0.0.1:1".parse().unwrap(), Some("operator-0123456789"))
            .with_callers(&callers);
        let none = HeaderMap::new();
        for token in [
            "alice-token-0123456789",
            "bob-token-0123456789",
            "operator-0123456789",
        ] {
            assert!(guard.token(&bearing(token)).is_ok(), "{token}");
        }
        let refused = guard.token(&bearing("carol-token-0123456789")).unwrap_err();
        assert!(
            refused.reason.contains("--caller-tokens"),
            "{}",
            refused.reason
        );
        assert!(guard.token(&none).is_err());
        assert_eq!(
            guard.principal(&bearing("alice-token-0123456789")),
            Principal::named("alice")
        );
        assert_eq!(
            guard.principal(&bearing("bob-token-0123456789")),
            Principal::named("bob")
        );
        let operator = guard.principal(&bearing("operator-0123456789"));
        assert!(operator.is_operator());

        // A callers file alone asks for a token too.
        let callers_only = Guard::new("127.0.0.1:1".parse().unwrap(), None).with_callers(&callers);
        assert!(callers_only.token(&none).is_err());
        assert!(callers_only.token(&bearing("operator-0123456789")).is_err());

        // A server that asks for none tells callers apart by the token they send.
        let open = Guard::new("127.0.0.1:1".parse().unwrap(), None);
        assert!(open.token(&bearing("anything-at-all")).is_ok());
        assert_eq!(
            open.principal(&bearing("my-own-secret")),
            Principal::keyed("my-own-secret")
        );
        assert_eq!(open.principal(&none), Principal::anonymous());
    }

    #[test]
    fn a_callers_file_that_breaks_a_rule_is_refused_by_line() {
        let refused = |text: &str| read_callers(text).unwrap_err();
        assert!(refused("").contains("no caller"));
        assert!(refused("alice\n").starts_with("line 1:"));
        assert!(refused("alice a b c\n").starts_with("line 1:"));
        assert!(refused("# c\nalice short\n").starts_with("line 2:"));
        assert!(refused("al/ice alice-token-0123456789\n").contains("is not"));
        let twice = "alice alice-token-0123456789\nalice other-token-0123456789\n";
        assert!(refused(twice).contains("named twice"));
        let shared = "alice alice-token-0123456789\nbob alice-token-0123456789\n";
        assert!(refused(shared).contains("given twice"));
    }
}
