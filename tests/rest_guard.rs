//! Who `serve-rest` lets in, the same rules as MCP over HTTP: loopback unless
//! `--allow-remote` with a bearer token, the token on every request when one is set,
//! `Host` and `Origin` checked against DNS rebinding, and a body only as
//! `application/json` (so a web page cannot post a transaction as a "simple request").
//! Each refusal is a node's error body (`{"code", "message", "details"}`).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use structs_console::rest::server::RestServer;
use structs_console::source::sim::{BlockClock, SimSource, WorldConfig};

const TOKEN_ENV: &str = "STRUCTS_CONSOLE_AUTH_TOKEN";

struct Node {
    sim: Arc<SimSource>,
    server: RestServer,
}

async fn node() -> Node {
    let config = WorldConfig::demo();
    let sim = Arc::new(SimSource::new(
        config,
        BlockClock::paused(config.genesis_height),
    ));
    let server = RestServer::start("127.0.0.1:0", sim.clone()).await.unwrap();
    Node { sim, server }
}

/// What a server answered to a request written by hand.
#[derive(Debug)]
struct Reply {
    status: u16,
    /// The response's header lines, lower-cased.
    headers: String,
    body: Value,
}

/// Sends `method path` with exactly these header lines (a `Host` among them, or none)
/// and `body`, over one connection, and reads the whole answer.
async fn raw(addr: SocketAddr, method: &str, path: &str, headers: &[&str], body: &[u8]) -> Reply {
    let mut head = format!("{method} {path} HTTP/1.1\r\n");
    for h in headers {
        head.push_str(h);
        head.push_str("\r\n");
    }
    if !body.is_empty() {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    head.push_str("Connection: close\r\n\r\n");
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    tcp.write_all(head.as_bytes()).await.unwrap();
    tcp.write_all(body).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), tcp.read_to_end(&mut answer))
        .await
        .expect("an answer in time")
        .unwrap();
    let text = String::from_utf8_lossy(&answer);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    Reply {
        status,
        headers: head.to_ascii_lowercase(),
        body: serde_json::from_str(body).unwrap_or(Value::Null),
    }
}

/// A node's error body, with the gRPC code `code`, whose message says `says`.
fn assert_node_error(reply: &Reply, code: u64, says: &str) {
    assert!(
        reply.headers.contains("content-type: application/json"),
        "{reply:?}"
    );
    assert_eq!(reply.body["code"], code, "{reply:?}");
    assert_eq!(reply.body["details"], json!([]), "{reply:?}");
    let message = reply.body["message"].as_str().unwrap_or_default();
    assert!(message.contains(says), "{says:?} in {reply:?}");
}

fn online_struct(sim: &SimSource) -> (String, usize) {
    sim.with_world(|w| {
        let i = w
            .structs
            .iter()
            .position(|s| s.online)
            .expect("an online struct");
        (format!("5-{}", i + 1), i)
    })
}

/// The broadcast body that turns struct `id` off: unsigned, as the sim takes it.
fn deactivate(id: &str) -> Vec<u8> {
    let tx = json!({"body": {"messages": [
        {"@type": "/structs.structs.MsgStructDeactivate", "structId": id}
    ]}});
    let tx_bytes = base64::engine::general_purpose::STANDARD.encode(tx.to_string());
    json!({"tx_bytes": tx_bytes, "mode": "BROADCAST_MODE_SYNC"})
        .to_string()
        .into_bytes()
}

const TXS: &str = "/cosmos/tx/v1beta1/txs";

/// A transaction posted as `text/plain` (what a web page may send without asking), as a
/// form, or with no `Content-Type`, is refused with 415 and changes nothing; the same
/// body as `application/json` is broadcast.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transaction_not_sent_as_json_is_refused_and_changes_nothing() {
    let node = node().await;
    let addr = node.server.addr;
    let (id, index) = online_struct(&node.sim);
    let entity = format!("/structs/struct/{id}");
    let host = format!("Host: {addr}");
    let before = raw(addr, "GET", &entity, &[&host], b"").await;
    assert_eq!(before.status, 200, "{before:?}");
    for content_type in [
        Some("text/plain"),
        Some("text/plain;charset=UTF-8"),
        Some("application/x-www-form-urlencoded"),
        Some("multipart/form-data; boundary=x"),
        Some("application/jsonx"),
        None,
    ] {
        let mut headers = vec![host.clone()];
        if let Some(t) = content_type {
            headers.push(format!("Content-Type: {t}"));
        }
        let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
        let reply = raw(addr, "POST", TXS, &headers, &deactivate(&id)).await;
        assert_eq!(reply.status, 415, "{content_type:?}: {reply:?}");
        assert_node_error(&reply, 3, "application/json");
        let after = raw(addr, "GET", &entity, &[&host], b"").await;
        assert_eq!(
            after.body, before.body,
            "{content_type:?} changed the world"
        );
        assert!(node.sim.with_world(|w| w.structs[index].online));
    }
    // As JSON (a parameter aside), the broadcast goes through and the struct goes off.
    let reply = raw(
        addr,
        "POST",
        TXS,
        &[&host, "Content-Type: application/json; charset=utf-8"],
        &deactivate(&id),
    )
    .await;
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.body["tx_response"]["code"], 0, "{reply:?}");
    assert!(!node.sim.with_world(|w| w.structs[index].online));
    node.server.stop().await;
}

/// A request from a web page on another site carries its `Origin`: 403. None, or a
/// loopback one, passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_origin_is_refused() {
    let node = node().await;
    let addr = node.server.addr;
    let host = format!("Host: {addr}");
    let (id, index) = online_struct(&node.sim);
    for origin in [
        "http://evil.example",
        "https://evil.example:8443",
        "http://127.0.0.1.evil.example",
        "null",
        "file://",
    ] {
        let o = format!("Origin: {origin}");
        let reply = raw(addr, "GET", "/blockheight", &[&host, &o], b"").await;
        assert_eq!(reply.status, 403, "{origin}: {reply:?}");
        assert_node_error(&reply, 7, "Origin");
        let reply = raw(
            addr,
            "POST",
            TXS,
            &[&host, &o, "Content-Type: application/json"],
            &deactivate(&id),
        )
        .await;
        assert_eq!(reply.status, 403, "{origin}: {reply:?}");
        assert!(node.sim.with_world(|w| w.structs[index].online));
    }
    for origin in [
        "http://localhost:3000",
        "http://127.0.0.1",
        "https://[::1]:9",
    ] {
        let o = format!("Origin: {origin}");
        let reply = raw(addr, "GET", "/blockheight", &[&host, &o], b"").await;
        assert_eq!(reply.status, 200, "{origin}: {reply:?}");
    }
    let reply = raw(addr, "GET", "/blockheight", &[&host], b"").await;
    assert_eq!(reply.status, 200, "{reply:?}");
    node.server.stop().await;
}

/// Bound to loopback, a request for another host name (a name an attacker pointed at
/// 127.0.0.1: DNS rebinding) is refused; the loopback names pass.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_that_is_not_this_server_is_refused() {
    let node = node().await;
    let addr = node.server.addr;
    let port = addr.port();
    let (id, index) = online_struct(&node.sim);
    for host in [
        format!("evil.example:{port}"),
        "evil.example".to_string(),
        format!("192.168.1.9:{port}"),
        format!("localhost.evil.example:{port}"),
    ] {
        let h = format!("Host: {host}");
        let reply = raw(addr, "GET", "/blockheight", &[&h], b"").await;
        assert!(
            reply.status == 403 || reply.status == 421,
            "{host}: {reply:?}"
        );
        assert_node_error(&reply, 7, "Host");
        let reply = raw(
            addr,
            "POST",
            TXS,
            &[&h, "Content-Type: application/json"],
            &deactivate(&id),
        )
        .await;
        assert!(reply.status == 403 || reply.status == 421, "{reply:?}");
        assert!(node.sim.with_world(|w| w.structs[index].online));
    }
    for host in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("LOCALHOST:{port}"),
        format!("[::1]:{port}"),
        "localhost".to_string(),
    ] {
        let h = format!("Host: {host}");
        let reply = raw(addr, "GET", "/blockheight", &[&h], b"").await;
        assert_eq!(reply.status, 200, "{host}: {reply:?}");
    }
    node.server.stop().await;
}

/// The server itself refuses a non-loopback address, before binding it or on a
/// listener bound there, naming the flag that would allow it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_refuses_an_address_beyond_loopback() {
    let sim = node().await.sim;
    let refused = RestServer::start("0.0.0.0:0", sim.clone())
        .await
        .err()
        .expect("0.0.0.0 is refused")
        .to_string();
    assert!(refused.contains("not a loopback address"), "{refused}");
    assert!(refused.contains("--allow-remote"), "{refused}");
    let listener = tokio::net::TcpListener::bind("0.0.0.0:0").await.unwrap();
    let refused = RestServer::on(listener, sim.clone())
        .await
        .err()
        .expect("a listener on 0.0.0.0 is refused")
        .to_string();
    assert!(refused.contains("--allow-remote"), "{refused}");
}

/// With `allow_remote` and a token, the same address serves; either alone does not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn access_with_the_flag_and_a_token_serves_beyond_loopback() {
    use structs_console::guard::{Access, RefusedBind};
    let sim = node().await.sim;
    let token = Some("0123456789abcdef".to_string());
    for (access, why) in [
        (
            Access {
                token: token.clone(),
                allow_remote: false,
            },
            "not a loopback address",
        ),
        (
            Access {
                token: None,
                allow_remote: true,
            },
            "needs a bearer token",
        ),
    ] {
        let e = RestServer::start_with("0.0.0.0:0", sim.clone(), &access)
            .await
            .err()
            .expect("refused");
        assert!(e.downcast_ref::<RefusedBind>().is_some(), "{e}");
        assert!(e.to_string().contains(why), "{e}");
    }
    let access = Access {
        token,
        allow_remote: true,
    };
    let server = RestServer::start_with("0.0.0.0:0", sim, &access)
        .await
        .unwrap();
    assert!(server.addr.ip().is_unspecified());
    server.stop().await;
}

/// Runs `structs-console serve-rest ARGS` with the token `token` in the environment (or
/// none) and expects it not to start: its stderr.
fn refused(args: &[&str], token: Option<&str>) -> String {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_structs-console"));
    cmd.args(["serve-rest", "--paused", "--log-level", "warn"])
        .args(args)
        .env_remove(TOKEN_ENV)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    if let Some(t) = token {
        cmd.env(TOKEN_ENV, t);
    }
    let mut child = cmd.spawn().unwrap();
    let until = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            panic!("serve-rest {args:?} started, and must not");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    assert!(!out.status.success(), "{args:?} must not start");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A non-loopback address needs `--allow-remote` and a token; a short token, or one
/// with white space, is refused even on loopback. Each says why, never the token.
#[test]
fn binds_beyond_loopback_need_the_flag_and_a_token() {
    let err = refused(&["--listen", "0.0.0.0:0"], None);
    assert!(err.contains("not a loopback address"), "{err}");
    assert!(err.contains("--allow-remote"), "{err}");
    assert!(!err.contains("--http-allow-remote"), "{err}");
    // A token alone is not enough: the flag says the exposure is meant.
    let err = refused(&["--listen", "0.0.0.0:0"], Some("0123456789abcdef"));
    assert!(err.contains("--allow-remote"), "{err}");
    let err = refused(&["--listen", "0.0.0.0:0", "--allow-remote"], None);
    assert!(err.contains("needs a bearer token"), "{err}");
    let err = refused(&["--listen", "127.0.0.1:0"], Some("short"));
    assert!(err.contains("at least 16"), "{err}");
    let err = refused(
        &["--listen", "127.0.0.1:0"],
        Some("s3cret-token-0123456789\n"),
    );
    assert!(err.contains("white space at character 24"), "{err}");
    assert!(!err.contains("s3cret"), "the token is never echoed: {err}");
}

/// A `serve-rest` child: the URL it printed, killed on drop.
struct Served {
    child: tokio::process::Child,
    url: String,
}

async fn serve(args: &[&str], envs: &[(&str, &str)]) -> Served {
    use tokio::io::AsyncBufReadExt;
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_structs-console"));
    cmd.args(["serve-rest", "--paused", "--log-level", "warn"])
        .args(args)
        .env_remove(TOKEN_ENV)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .expect("serve-rest prints its address")
        .unwrap()
        .expect("a line");
    let url = line.rsplit(' ').next().unwrap().to_string();
    Served { child, url }
}

/// With a token, a request without it, or with another, gets 401 (with
/// `WWW-Authenticate` and a node's error body); with it, 200.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_token_every_request_needs_it() {
    let token = "correct-horse-battery-staple";
    let mut served = serve(&["--listen", "127.0.0.1:0"], &[(TOKEN_ENV, token)]).await;
    let addr: SocketAddr = served.url.trim_start_matches("http://").parse().unwrap();
    let host = format!("Host: {addr}");
    for (auth, says) in [
        (None, "Authorization: Bearer"),
        (
            Some("Bearer wrong-token-wrong-token".to_string()),
            "not this server's",
        ),
        (Some(format!("Basic {token}")), "Authorization: Bearer"),
        (Some(format!("Bearer {token}x")), "not this server's"),
    ] {
        let mut headers = vec![host.clone()];
        if let Some(a) = &auth {
            headers.push(format!("Authorization: {a}"));
        }
        let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
        let reply = raw(addr, "GET", "/blockheight", &headers, b"").await;
        assert_eq!(reply.status, 401, "{auth:?}: {reply:?}");
        assert!(
            reply
                .headers
                .contains("www-authenticate: bearer realm=\"structs-console\""),
            "{reply:?}"
        );
        assert_node_error(&reply, 16, says);
        assert!(!reply.body.to_string().contains(token), "never echoed");
        let mut posted = headers.clone();
        posted.push("Content-Type: application/json");
        let reply = raw(addr, "POST", TXS, &posted, &deactivate("5-1")).await;
        assert_eq!(reply.status, 401, "{auth:?}: {reply:?}");
    }
    let bearer = format!("Authorization: Bearer {token}");
    let reply = raw(addr, "GET", "/blockheight", &[&host, &bearer], b"").await;
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(reply.body["blockHeight"].is_string(), "{reply:?}");
    // Any case of the scheme, as for MCP over HTTP; the flag after the subcommand too.
    let bearer = format!("Authorization: bearer {token}");
    let reply = raw(addr, "GET", "/structs/player/1-1", &[&host, &bearer], b"").await;
    assert_eq!(reply.status, 200, "{reply:?}");
    served.child.kill().await.unwrap();

    let mut served = serve(&["--listen", "127.0.0.1:0", "--auth-token", token], &[]).await;
    let addr: SocketAddr = served.url.trim_start_matches("http://").parse().unwrap();
    let host = format!("Host: {addr}");
    let reply = raw(addr, "GET", "/blockheight", &[&host], b"").await;
    assert_eq!(reply.status, 401, "{reply:?}");
    let bearer = format!("Authorization: Bearer {token}");
    let reply = raw(addr, "GET", "/blockheight", &[&host, &bearer], b"").await;
    assert_eq!(reply.status, 200, "{reply:?}");
    served.child.kill().await.unwrap();
}

/// With the flag and a token, a non-loopback bind serves, and still asks for the token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_bind_with_a_token_serves() {
    let token = "0123456789abcdef0123";
    let mut served = serve(
        &["--listen", "0.0.0.0:0", "--allow-remote"],
        &[(TOKEN_ENV, token)],
    )
    .await;
    let port: u16 = served.url.rsplit(':').next().unwrap().parse().unwrap();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    // Reached by whatever name the network gives it: the token guards it.
    for host in [
        format!("Host: 127.0.0.1:{port}"),
        "Host: node.example".into(),
    ] {
        let reply = raw(addr, "GET", "/blockheight", &[&host], b"").await;
        assert_eq!(reply.status, 401, "{reply:?}");
        let bearer = format!("Authorization: Bearer {token}");
        let reply = raw(addr, "GET", "/blockheight", &[&host, &bearer], b"").await;
        assert_eq!(reply.status, 200, "{reply:?}");
    }
    served.child.kill().await.unwrap();
}
