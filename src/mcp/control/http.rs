//! The control endpoint over loopback HTTP (`--control http://127.0.0.1:PORT`), for
//! where a Unix socket will not do (a watcher in a container, or one that speaks TCP).
//!
//! A watcher opens it with one request, upgraded to the socket's own line protocol on
//! the same connection:
//!
//! ```text
//! GET /control HTTP/1.1
//! Host: 127.0.0.1:PORT
//! Authorization: Bearer TOKEN
//! Connection: Upgrade
//! Upgrade: structs-control/1
//! ```
//!
//! answered `101 Switching Protocols`, after which the connection carries what the
//! socket carries: the hello, the session log as it is written, commands and their
//! answers. Anything else is refused with a status and a JSON body
//! `{"type":"refused","reason":…}`: a wrong path (404), a `Host` that is not loopback
//! (403, against DNS rebinding), any `Origin` (403: browsers may not watch), a missing
//! or wrong token (401), a request that does not upgrade (426).
//!
//! It listens on loopback only. Its token is [`TOKEN_ENV`] when set, else made at
//! random; either way it is written to a file only its user can read, beside the
//! sockets ([`token_file`]), where `structs-console watch URL` finds it.

use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

use super::{
    Control, Endpoint, WATCHERS_MAX, default_dir, endpoint_dirs, is_private, private_dir,
    serve_watcher,
};
use crate::record::Feed;

/// The environment variable that sets the token (else one is made).
pub const TOKEN_ENV: &str = "STRUCTS_CONSOLE_CONTROL_TOKEN";

/// The protocol the request upgrades to.
pub const UPGRADE: &str = "structs-control/1";

/// The path watchers ask for.
pub const PATH: &str = "/control";

/// The longest request head read.
const HEAD_MAX: usize = 8 * 1024;

/// How long a request's head may take to arrive.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);

/// Connections that have not yet sent a whole request head (so are not yet known to
/// hold the token) kept at once; at the cap, the one that has waited longest is
/// closed to make room for the new one, so idle connections cannot lock a watcher
/// out or use up the process's files.
pub const UNCHECKED_MAX: usize = 32;

/// The connections not yet checked, oldest first, each with what closes it.
#[derive(Default)]
struct Unchecked {
    next: u64,
    open: std::collections::VecDeque<(u64, tokio_util::sync::CancellationToken)>,
}

impl Unchecked {
    /// Counts a new connection in, closing the oldest at the cap: its number, and
    /// what says it is to close.
    fn admit(&mut self) -> (u64, tokio_util::sync::CancellationToken) {
        if self.open.len() >= UNCHECKED_MAX
            && let Some((_, oldest)) = self.open.pop_front()
        {
            oldest.cancel();
        }
        self.next += 1;
        let close = tokio_util::sync::CancellationToken::new();
        self.open.push_back((self.next, close.clone()));
        (self.next, close)
    }

    fn checked(&mut self, n: u64) {
        self.open.retain(|(m, _)| *m != n);
    }
}

/// True when `what` names an endpoint by URL rather than a socket or a file: any
/// `scheme://`, so that `https://…` is refused as a URL this endpoint does not
/// speak, not looked for as a file.
pub fn is_url(what: &Path) -> bool {
    what.to_str().is_some_and(|s| {
        s.split_once("://").is_some_and(|(scheme, _)| {
            !scheme.is_empty()
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        })
    })
}

/// The folder where the token is kept is not one only this user can open: the
/// endpoint is not served (a proxy serves its agent without it, as without a
/// socket).
#[derive(Debug)]
pub struct NoTokenFolder(pub String);

impl std::fmt::Display for NoTokenFolder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NoTokenFolder {}

/// The loopback address in `url` (`http://127.0.0.1:PORT[/control]`).
fn address(url: &str) -> anyhow::Result<SocketAddr> {
    let parsed =
        reqwest::Url::parse(url).map_err(|e| anyhow::anyhow!("{url:?} is not a URL: {e}"))?;
    if parsed.scheme() != "http" {
        anyhow::bail!(
            "{url:?}: a control endpoint speaks plain http on loopback (http://127.0.0.1:PORT), not {}",
            parsed.scheme()
        );
    }
    let host = parsed.host_str().unwrap_or("").trim_matches(['[', ']']);
    let ip: Option<IpAddr> = if host == "localhost" {
        Some(IpAddr::from([127, 0, 0, 1]))
    } else {
        host.parse().ok()
    };
    let Some(ip) = ip.filter(IpAddr::is_loopback) else {
        anyhow::bail!("{url:?}: a control endpoint over HTTP listens on loopback only");
    };
    let port = parsed
        .port()
        .ok_or_else(|| anyhow::anyhow!("{url:?}: give the port"))?;
    Ok(SocketAddr::new(ip, port))
}

/// Where this process keeps the token of its endpoint on `port`.
pub fn token_file(port: u16) -> PathBuf {
    default_dir().join(format!("control-{port}.token"))
}

/// The token file of the endpoint on `port`, wherever a watcher finds it (see
/// [`endpoint_dirs`]); this process's own default when there is none.
fn find_token_file(port: u16) -> PathBuf {
    let name = format!("control-{port}.token");
    endpoint_dirs()
        .into_iter()
        .filter(|d| is_private(d))
        .map(|d| d.join(&name))
        .find(|f| f.is_file())
        .unwrap_or_else(|| token_file(port))
}

/// Serves `feed` over HTTP at `url`; the endpoint's path is its token file (removed
/// with it). Call inside a tokio runtime.
pub(super) fn serve(
    url: &str,
    feed: Feed,
    hello: Arc<[u8]>,
    commands: Option<mpsc::UnboundedSender<Control>>,
) -> anyhow::Result<(Endpoint, String)> {
    let addr = address(url)?;
    let token = match std::env::var(TOKEN_ENV) {
        Ok(t) => {
            crate::guard::check_token(&t).map_err(|e| anyhow::anyhow!("{TOKEN_ENV}: {e}"))?;
            t
        }
        Err(_) => crate::random::hex128(),
    };
    let listener = std::net::TcpListener::bind(addr)
        .map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))?;
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;
    let listener = tokio::net::TcpListener::from_std(listener)?;
    private_dir(&default_dir()).map_err(|e| anyhow::Error::new(NoTokenFolder(e.to_string())))?;
    let file = token_file(addr.port());
    let _ = std::fs::remove_file(&file);
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&file)
        .and_then(|mut f| writeln!(f, "{token}"))
        .map_err(|e| anyhow::anyhow!("cannot keep the token in {}: {e}", file.display()))?;
    let token: Arc<str> = Arc::from(token);
    let unchecked = Arc::new(std::sync::Mutex::new(Unchecked::default()));
    let task = tokio::spawn(async move {
        let mut watchers = 0u64;
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            };
            let _ = stream.set_nodelay(true);
            watchers += 1;
            let (n, close) = unchecked.lock().unwrap_or_else(|e| e.into_inner()).admit();
            let (feed, hello, commands, token, unchecked) = (
                feed.clone(),
                hello.clone(),
                commands.clone(),
                token.clone(),
                unchecked.clone(),
            );
            tokio::spawn(async move {
                let mut stream = stream;
                let head = tokio::select! {
                    head = tokio::time::timeout(HEAD_TIMEOUT, read_head(&mut stream)) => head,
                    () = close.cancelled() => return,
                };
                unchecked
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .checked(n);
                let Ok(Ok(head)) = head else { return };
                if let Err((status, reason)) = check(&head, &token) {
                    let body = json!({"type": "refused", "reason": reason}).to_string();
                    let extra = if status == 426 {
                        format!("Upgrade: {UPGRADE}\r\n")
                    } else {
                        String::new()
                    };
                    let answer = format!(
                        "HTTP/1.1 {status} {}\r\nContent-Type: application/json\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        reason_phrase(status),
                        body.len()
                    );
                    let _ = stream.write_all(answer.as_bytes()).await;
                    return;
                }
                let switched = format!(
                    "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: {UPGRADE}\r\n\r\n"
                );
                if stream.write_all(switched.as_bytes()).await.is_err() {
                    return;
                }
                let refused = feed.watchers() >= WATCHERS_MAX;
                serve_watcher(
                    stream.into_split(),
                    feed,
                    hello,
                    refused,
                    watchers,
                    commands,
                )
                .await;
            });
        }
    });
    let url = format!("http://{addr}");
    Ok((Endpoint { path: file, task }, url))
}

fn reason_phrase(status: u16) -> &'static str {
    match status {
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        426 => "Upgrade Required",
        _ => "Bad Request",
    }
}

/// Reads a request head, to its blank line.
async fn read_head(stream: &mut tokio::net::TcpStream) -> std::io::Result<String> {
    let mut head = Vec::with_capacity(512);
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() >= HEAD_MAX || stream.read(&mut byte).await? == 0 {
            return Err(std::io::ErrorKind::InvalidData.into());
        }
        head.push(byte[0]);
    }
    Ok(String::from_utf8_lossy(&head).into_owned())
}

/// The value of header `name` in `head`.
fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().skip(1).find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.trim().eq_ignore_ascii_case(name).then(|| value.trim())
    })
}

/// Whether the request may watch: `Err((status, reason))` when not.
fn check(head: &str, token: &str) -> Result<(), (u16, String)> {
    let mut first = head.lines().next().unwrap_or("").split_whitespace();
    let (method, path) = (first.next().unwrap_or(""), first.next().unwrap_or(""));
    if method != "GET" || path != PATH {
        return Err((404, format!("watchers ask for GET {PATH}")));
    }
    let host = header(head, "host").unwrap_or("");
    let name = host
        .rsplit_once(':')
        .map_or(host, |(name, _)| name)
        .trim_matches(['[', ']']);
    let loopback = name == "localhost" || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback());
    if !loopback {
        return Err((
            403,
            format!(
                "the Host {host:?} is not this endpoint's loopback address (against DNS rebinding)"
            ),
        ));
    }
    if header(head, "origin").is_some() {
        return Err((
            403,
            "a request with an Origin (a browser's) may not watch".into(),
        ));
    }
    let given = header(head, "authorization")
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, t)| t.trim());
    match given {
        Some(t) if crate::guard::tokens_match(t, token) => {}
        Some(_) => return Err((401, "the bearer token is not this endpoint's".into())),
        None => {
            return Err((
                401,
                format!(
                    "send `Authorization: Bearer TOKEN` (the token is in the endpoint's token file, or {TOKEN_ENV})"
                ),
            ));
        }
    }
    let upgrade = header(head, "upgrade").unwrap_or("");
    if !upgrade.eq_ignore_ascii_case(UPGRADE) {
        return Err((426, format!("upgrade the connection to {UPGRADE}")));
    }
    Ok(())
}

/// Connects to the endpoint at `url` as a watcher: the token from [`TOKEN_ENV`], else
/// from its token file. The stream returned speaks the socket's line protocol.
///
/// # Errors
///
/// When nothing answers, no token is found, or the endpoint refuses (its reason).
pub fn connect(url: &str) -> anyhow::Result<std::net::TcpStream> {
    let addr = address(url)?;
    let token = match std::env::var(TOKEN_ENV) {
        Ok(t) => t,
        Err(_) => {
            let file = find_token_file(addr.port());
            std::fs::read_to_string(&file)
                .map(|t| t.trim().to_string())
                .map_err(|e| {
                    anyhow::anyhow!(
                        "no token for {url}: set {TOKEN_ENV}, or watch as the user who started it (its token is kept in {}: {e})",
                        file.display()
                    )
                })?
        }
    };
    let mut stream = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(5))
        .map_err(|e| anyhow::anyhow!("nothing answers at {url}: {e}"))?;
    stream.set_read_timeout(Some(HEAD_TIMEOUT))?;
    write!(
        stream,
        "GET {PATH} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nConnection: Upgrade\r\nUpgrade: {UPGRADE}\r\n\r\n"
    )?;
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() >= HEAD_MAX || stream.read(&mut byte)? == 0 {
            anyhow::bail!("{url} is not a control endpoint: its answer ended early");
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let status = head.split_whitespace().nth(1).unwrap_or("");
    if status == "101" {
        return Ok(stream);
    }
    let mut body = String::new();
    let _ = stream.read_to_string(&mut body);
    let reason = serde_json::from_str::<serde_json::Value>(&body)
        .ok()
        .and_then(|v| v["reason"].as_str().map(str::to_string))
        .unwrap_or(body);
    anyhow::bail!("{url} refused to be watched (HTTP {status}): {reason}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(lines: &[&str]) -> String {
        format!("{}\r\n\r\n", lines.join("\r\n"))
    }

    #[test]
    fn only_a_loopback_upgrade_with_the_token_and_no_origin_may_watch() {
        let good = [
            "GET /control HTTP/1.1",
            "Host: 127.0.0.1:9",
            "Authorization: Bearer 0123456789abcdef",
            "Connection: Upgrade",
            "Upgrade: structs-control/1",
        ];
        let t = "0123456789abcdef";
        assert_eq!(check(&head(&good), t), Ok(()));
        let with = |i: usize, line: &str| {
            let mut lines = good.to_vec();
            lines[i] = line;
            check(&head(&lines), t).unwrap_err().0
        };
        assert_eq!(with(0, "GET /other HTTP/1.1"), 404);
        assert_eq!(with(1, "Host: evil.example:9"), 403);
        assert_eq!(with(1, "Host: 10.0.0.1:9"), 403);
        assert!(
            check(
                &head(&[&good[..1], &["Host: 127.0.0.2:9"], &good[2..]].concat()),
                t
            )
            .is_ok()
        );
        assert!(
            check(
                &head(&[&good[..1], &["Host: [::1]:9"], &good[2..]].concat()),
                t
            )
            .is_ok()
        );
        assert_eq!(with(2, "Authorization: Bearer not-the-token-at-all"), 401);
        assert_eq!(with(2, "X-Nothing: 1"), 401);
        assert_eq!(with(4, "Upgrade: websocket"), 426);
        let mut browser = good.to_vec();
        browser.push("Origin: http://127.0.0.1:9");
        assert_eq!(check(&head(&browser), t).unwrap_err().0, 403);
    }

    #[test]
    fn an_address_that_is_not_loopback_is_refused() {
        assert!(address("http://127.0.0.1:0").is_ok());
        assert!(address("http://localhost:7000/control").is_ok());
        assert!(address("http://[::1]:7000").is_ok());
        let far = address("http://0.0.0.0:7000").unwrap_err().to_string();
        assert!(far.contains("loopback only"), "{far}");
        assert!(address("http://example.com:7000").is_err());
        assert!(address("https://127.0.0.1:7000").is_err());
    }
}
