//! The proxy in front of an HTTP server (`proxy --upstream URL`), for a host on stdio
//! and for hosts over HTTP (`--http ADDR`): the official conformance suite's server
//! scenarios give the same results through it as direct, for our server and for the
//! MCP reference server; several agents through one proxy are told apart by session,
//! in the log and the live feed, and a breakpoint holds whichever session's call it
//! matches; a server that cannot be reached is an answer, not a hang.

mod support;

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use support::agent::{Agent, BIN, Watcher, lines_of, runtime_dir, until};
use support::daemon::free_port;
use support::mcp_http::{Headless, connect};
use support::peers::Peers;

/// A proxy serving hosts over HTTP, killed when dropped.
struct HttpProxy {
    child: Child,
    url: String,
    /// Kept so that its pipe is read.
    _stderr: Receiver<String>,
}

impl HttpProxy {
    fn start(upstream: &str, extra: &[&str], runtime_dir: &Path) -> HttpProxy {
        let mut child = Command::new(BIN)
            .args(["proxy", "--upstream", upstream, "--http", "127.0.0.1:0"])
            .args(["--log-level", "warn"])
            .args(extra)
            .env("XDG_RUNTIME_DIR", runtime_dir)
            .env("TMPDIR", runtime_dir)
            .env_remove("STRUCTS_CONSOLE_AUTH_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the proxy");
        let stdout = lines_of(child.stdout.take().unwrap());
        let stderr = lines_of(child.stderr.take().unwrap());
        let line = stdout
            .recv_timeout(Duration::from_secs(30))
            .expect("the proxy says where it listens");
        let url = line
            .strip_prefix("proxying MCP over HTTP at ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_string();
        HttpProxy {
            child,
            url,
            _stderr: stderr,
        }
    }
}

impl Drop for HttpProxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The reference server over streamable HTTP, killed when dropped.
struct Everything {
    child: Child,
    url: String,
}

impl Everything {
    fn start(peers: &Peers) -> Everything {
        let port = free_port();
        let mut child = peers
            .command(&peers.everything())
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start server-everything");
        let said = lines_of(child.stderr.take().unwrap());
        let start = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "server-everything did not listen: {:?}",
                said.try_iter().collect::<Vec<_>>()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Everything {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

impl Drop for Everything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn text(out: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Every check of every scenario the suite ran against `url`: (scenario, check id)
/// → status.
fn conformance(peers: &Peers, url: &str, name: &str) -> BTreeMap<(String, String), String> {
    let dir = std::env::temp_dir().join(format!(
        "structs-conformance-proxy-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let out = peers
        .command(&peers.conformance())
        .args(["server", "--url", url, "-o"])
        .arg(&dir)
        .output()
        .expect("run the conformance suite");
    let mut checks = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{e}: {}", text(&out))) {
        let path = entry.unwrap().path();
        let Some(rest) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix("server-"))
        else {
            continue;
        };
        // The folder ends in a timestamp that starts at the year.
        let scenario = rest.find("-20").map_or(rest, |at| &rest[..at]).to_string();
        let found: Vec<Value> = std::fs::read_to_string(path.join("checks.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default();
        for (i, check) in found.iter().enumerate() {
            let id = check["id"]
                .as_str()
                .map_or_else(|| format!("#{i}"), str::to_string);
            checks.insert(
                (scenario.clone(), id),
                check["status"].as_str().unwrap_or("?").to_string(),
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(checks.len() >= 25, "too few checks ran: {}", text(&out));
    checks
}

/// Direct and through the proxy, check for check. The one difference allowed is the
/// proxy's own guard: hosts reach the proxy, so its DNS-rebinding check is the one
/// that answers, and it passes even where the server behind it does not.
fn same_results(
    direct: &BTreeMap<(String, String), String>,
    proxied: &BTreeMap<(String, String), String>,
) {
    assert_eq!(
        direct.keys().collect::<Vec<_>>(),
        proxied.keys().collect::<Vec<_>>(),
        "the same checks ran"
    );
    for (key, status) in direct {
        let through = &proxied[key];
        if key.0 == "dns-rebinding-protection" {
            assert_eq!(through, "SUCCESS", "{key:?}: the proxy's guard answers");
        } else {
            assert_eq!(
                status, through,
                "{key:?}: direct {status}, proxied {through}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_conformance_suites_server_scenarios_give_the_same_results_through_the_proxy() {
    let Some(peers) = Peers::find() else { return };
    let dir = runtime_dir("proxy-conformance");
    // Our own server.
    let server = Headless::start(&["--paused"], &[]).await;
    let proxy = HttpProxy::start(&server.url, &["--no-control"], &dir);
    let (url, proxy_url) = (server.url.clone(), proxy.url.clone());
    let peers = tokio::task::spawn_blocking(move || {
        let direct = conformance(&peers, &url, "ours-direct");
        let proxied = conformance(&peers, &proxy_url, "ours-proxied");
        same_results(&direct, &proxied);
        for scenario in [
            "server-initialize",
            "tools-list",
            "server-sse-multiple-streams",
        ] {
            assert!(
                proxied
                    .iter()
                    .any(|((s, _), status)| s == scenario && status == "SUCCESS"),
                "{scenario} passes through the proxy: {proxied:#?}"
            );
        }
        peers
    })
    .await
    .unwrap();
    drop(proxy);
    server.stop().await;

    // The reference server, which has the suite's tools: calls, errors and
    // subscriptions pass through as they are.
    tokio::task::spawn_blocking(move || {
        let everything = Everything::start(&peers);
        let proxy = HttpProxy::start(&everything.url, &["--no-control"], &dir);
        let direct = conformance(&peers, &everything.url, "everything-direct");
        let proxied = conformance(&peers, &proxy.url, "everything-proxied");
        same_results(&direct, &proxied);
        let passed = |s: &str| {
            proxied
                .iter()
                .any(|((name, _), status)| name == s && status == "SUCCESS")
        };
        assert!(passed("tools-call-simple-text"), "{proxied:#?}");
        assert!(passed("resources-subscribe"), "{proxied:#?}");
        let _ = std::fs::remove_dir_all(&dir);
    })
    .await
    .unwrap();
}

fn log_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn query(tool: &str, args: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(tool.to_string()).with_arguments(args.as_object().unwrap().clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_agents_through_one_proxy_are_told_apart_by_session() {
    let dir = runtime_dir("proxy-sessions");
    let log = dir.join("agents.jsonl");
    let socket: PathBuf = dir.join("proxy.sock");
    let server = Headless::start(&["--paused"], &[]).await;
    let proxy = HttpProxy::start(
        &server.url,
        &[
            "--record",
            log.to_str().unwrap(),
            "--control",
            socket.to_str().unwrap(),
            "--hold-timeout",
            "30",
        ],
        &dir,
    );
    let first = connect(&proxy.url, None).await.expect("the first agent");
    let second = connect(&proxy.url, None).await.expect("the second agent");
    let got = first
        .call_tool(query("structs_query_entity", json!({"id": "1-1"})))
        .await
        .expect("the first agent's call");
    assert_eq!(
        got.structured_content.unwrap()["entity"]["Player"]["id"],
        "1-1"
    );
    second
        .call_tool(query("structs_query_entity", json!({"id": "2-1"})))
        .await
        .expect("the second agent's call");

    // A breakpoint holds the second agent's call; the first goes on meanwhile.
    let socket_path = socket.clone();
    let watcher = tokio::task::spawn_blocking(move || {
        let mut watcher = Watcher::attach(&socket_path);
        let ack = watcher.command(json!({"cmd": "break", "tool": "structs_query_planet"}));
        assert_eq!(ack["type"], "ack", "{ack}");
        watcher
    })
    .await
    .unwrap();
    let planet = tokio::spawn(async move {
        let answer = second
            .call_tool(query("structs_query_planet", json!({"planet_id": "2-1"})))
            .await;
        (second, answer)
    });
    let (mut watcher, event) = tokio::task::spawn_blocking(move || {
        let event = until(&watcher.lines, "the held call", |v| v["type"] == "held")
            .pop()
            .unwrap();
        (watcher, event)
    })
    .await
    .unwrap();
    let got = first
        .call_tool(query("structs_query_entity", json!({"id": "4-1"})))
        .await
        .expect("the first agent is not held");
    assert_eq!(got.is_error, Some(false));
    assert!(!planet.is_finished(), "the second agent's call is held");
    let hold = event["hold"].as_u64().unwrap();
    let ack = tokio::task::spawn_blocking(move || {
        watcher.command(json!({"cmd": "continue", "hold": hold}))
    })
    .await
    .unwrap();
    assert_eq!(ack["type"], "ack", "{ack}");
    let (second, answer) = tokio::time::timeout(Duration::from_secs(10), planet)
        .await
        .expect("the held call goes on")
        .unwrap();
    let answer = answer.expect("the planet call is answered");
    assert_eq!(
        answer.structured_content.unwrap()["planet"]["Planet"]["id"],
        "2-1"
    );
    let _ = first.cancel().await;
    let _ = second.cancel().await;

    // The log keeps each agent's calls under its own session.
    let start = Instant::now();
    let by_session = loop {
        let mut by_session: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let lines = log_lines(&log);
        // The tool calls' answers (each host's handshake is in the log too).
        let others: std::collections::HashSet<(String, u64)> = lines
            .iter()
            .filter(|l| l["type"] == "request" && !l["method"].is_null())
            .filter_map(|l| Some((l["session"].as_str()?.to_string(), l["call"].as_u64()?)))
            .collect();
        for line in lines {
            let key = (
                line["session"].as_str().unwrap_or_default().to_string(),
                line["call"].as_u64().unwrap_or(0),
            );
            if line["type"] == "response" && !others.contains(&key) {
                by_session
                    .entry(line["session"].as_str().unwrap().to_string())
                    .or_default()
                    .push(line["tool"].as_str().unwrap().to_string());
            }
        }
        if by_session.values().map(Vec::len).sum::<usize>() >= 4
            || start.elapsed() > Duration::from_secs(10)
        {
            break by_session;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let mut tools: Vec<Vec<String>> = by_session.into_values().collect();
    tools.sort();
    assert_eq!(
        tools,
        [
            vec!["structs_query_entity", "structs_query_entity"],
            vec!["structs_query_entity", "structs_query_planet"],
        ],
        "two sessions, each with its own calls"
    );
    assert_eq!(
        event["session"],
        log_lines(&log)
            .iter()
            .find(|l| l["tool"] == "structs_query_planet")
            .unwrap()["session"]
    );
    drop(proxy);
    server.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_on_stdio_reaches_an_http_server_and_an_unreachable_one_is_an_answer() {
    let dir = runtime_dir("proxy-upstream");
    let log = dir.join("up.jsonl");
    let server = Headless::start(&["--paused"], &[]).await;
    let url = server.url.clone();
    let (dir2, log2) = (dir.clone(), log.clone());
    tokio::task::spawn_blocking(move || {
        let (mut agent, _stderr) = Agent::start(
            &[
                "proxy",
                "--no-control",
                "--record",
                log2.to_str().unwrap(),
                "--upstream",
                &url,
            ],
            &dir2,
        );
        agent.call(1, "structs_query_entity", json!({"id": "1-1"}), None);
        let got = until(&agent.out, "the answer", |v| v["id"] == 1)
            .pop()
            .unwrap();
        assert_eq!(
            got["result"]["structuredContent"]["entity"]["Player"]["id"],
            "1-1"
        );
        // Not JSON: the server's own answer comes back, as over stdio.
        agent.send(json!({"jsonrpc": "2.0", "id": 2, "method": "no/such/method"}));
        let got = until(&agent.out, "the error", |v| v["id"] == 2)
            .pop()
            .unwrap();
        assert_eq!(got["error"]["code"], -32601, "{got}");
        assert!(agent.finish().success());
        let lines = log_lines(&log2);
        assert!(
            lines
                .iter()
                .any(|l| l["type"] == "response" && l["tool"] == "structs_query_entity"),
            "{lines:#?}"
        );
    })
    .await
    .unwrap();
    server.stop().await;

    // Nothing listens there: the handshake itself is answered with the reason.
    let port = free_port();
    // Its password is never shown: not to the agent, not on stderr, not in the log.
    let nowhere = format!("http://agent:s3cretPASS@127.0.0.1:{port}/mcp");
    let shown = format!("http://agent:***@127.0.0.1:{port}/mcp");
    let socket = dir.join("nowhere.sock");
    let mut child = Command::new(BIN)
        .args(["proxy", "--upstream", &nowhere, "--control"])
        .arg(&socket)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = lines_of(child.stderr.take().unwrap());
    let out = lines_of(child.stdout.take().unwrap());
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}})
    )
    .unwrap();
    let got = until(&out, "the refusal", |v| v["id"] == 7).pop().unwrap();
    assert_eq!(got["error"]["code"], -32000, "{got}");
    assert_eq!(got["error"]["data"]["error"]["code"], "API_UNAVAILABLE");
    let said = got["error"]["message"].as_str().unwrap();
    assert!(said.contains(&shown) && said.contains("refused"), "{said}");
    assert!(!got.to_string().contains("s3cretPASS"), "{got}");
    // The live feed's hello names the server, without its password.
    let mut hello = String::new();
    std::io::BufReader::new(std::os::unix::net::UnixStream::connect(&socket).unwrap())
        .read_line(&mut hello)
        .unwrap();
    assert!(hello.contains(&shown), "{hello}");
    assert!(!hello.contains("s3cretPASS"), "{hello}");
    drop(stdin);
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the proxy exits when its host does"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let said: Vec<String> = stderr.try_iter().collect();
    assert!(!said.iter().any(|l| l.contains("s3cretPASS")), "{said:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_http_face_answers_what_is_not_a_session_and_ends_one_on_delete() {
    let dir = runtime_dir("proxy-face");
    let server = Headless::start(&["--paused"], &[]).await;
    let proxy = HttpProxy::start(&server.url, &["--no-control"], &dir);
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::new();
    let post = |body: &str, session: Option<&str>| {
        let mut request = http
            .post(&proxy.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_string());
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.send()
    };
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    // A body not said to be JSON is what a web page can post anywhere: 415.
    let initialize = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"page","version":"1"}}}"#;
    for content_type in [
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        None,
    ] {
        let mut request = http
            .post(&proxy.url)
            .header("accept", "application/json, text/event-stream")
            .body(initialize);
        if let Some(t) = content_type {
            request = request.header("content-type", t);
        }
        let refused = request.send().await.unwrap();
        assert_eq!(refused.status(), 415, "{content_type:?}");
        assert!(refused.headers().get("mcp-session-id").is_none());
        let body: Value = refused.json().await.unwrap();
        assert_eq!(body["error"]["code"], -32600, "{body}");
    }
    let refused = post(ping, None).await.unwrap();
    assert_eq!(refused.status(), 400);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32600, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Mcp-Session-Id")
    );
    let refused = post(ping, Some("no-such-session")).await.unwrap();
    assert_eq!(refused.status(), 404);
    let refused = post("{not json", None).await.unwrap();
    assert_eq!(refused.status(), 400);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32700, "{body}");

    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}})
    .to_string();
    let opened = post(&init, None).await.unwrap();
    assert_eq!(opened.status(), 200);
    assert_eq!(opened.headers()["content-type"], "text/event-stream");
    let session = opened.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_string();
    assert_eq!(session.len(), 32, "{session}");
    let events = opened.text().await.unwrap();
    let answer: Value = serde_json::from_str(
        events
            .lines()
            .find_map(|l| l.strip_prefix("data: "))
            .expect("an event with the answer"),
    )
    .unwrap();
    assert_eq!(answer["id"], 0);
    assert_eq!(answer["result"]["serverInfo"]["name"], "structs-console");
    let accepted = post(
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        Some(&session),
    )
    .await
    .unwrap();
    assert_eq!(accepted.status(), 202);
    let pinged = post(ping, Some(&session))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        pinged.contains(r#"data: {"jsonrpc":"2.0","id":1,"result":{}}"#),
        "{pinged}"
    );

    // A batch (no longer MCP) is refused by the proxy itself, at once.
    let batch =
        r#"[{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","id":6,"method":"ping"}]"#;
    let refused = post(batch, Some(&session)).await.unwrap();
    assert_eq!(refused.status(), 400);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32600, "{body}");
    // An initialize that is a notification opens no session.
    let refused = post(r#"{"jsonrpc":"2.0","method":"initialize"}"#, None)
        .await
        .unwrap();
    assert_eq!(refused.status(), 400);

    let ended = http
        .delete(&proxy.url)
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(ended.status(), 204);
    let gone = post(ping, Some(&session)).await.unwrap();
    assert_eq!(gone.status(), 404);
    drop(proxy);
    server.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--http` without `--upstream`, and a remote address without a token, are refused
/// at start, saying why.
#[test]
fn a_proxy_that_cannot_serve_as_asked_says_why() {
    let out = Command::new(BIN)
        .args(["proxy", "--http", "127.0.0.1:0", "--", "true"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(text(&out).contains("--upstream"), "{}", text(&out));
    let out = Command::new(BIN)
        .args([
            "proxy",
            "--no-control",
            "--upstream",
            "http://127.0.0.1:1/mcp",
            "--http",
            "0.0.0.0:0",
            "--http-allow-remote",
        ])
        .env_remove("STRUCTS_CONSOLE_AUTH_TOKEN")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(text(&out).contains("token"), "{}", text(&out));
    let out = Command::new(BIN)
        .args(["proxy", "--no-control", "--upstream", "ftp://example/mcp"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        text(&out).contains("not an http or https URL"),
        "{}",
        text(&out)
    );
}

/// An answer over the proxy's line limit (16 MB) reaches an HTTP host whole, as one
/// event, and its request is answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_over_sixteen_megabytes_reaches_an_http_host_whole() {
    let dir = runtime_dir("proxy-big");
    let faults = dir.join("faults.json");
    std::fs::write(
        &faults,
        json!({"rules": [{"tool": "structs_query_block_height", "oversize": 17_000_000}]})
            .to_string(),
    )
    .unwrap();
    let server = Headless::start(&["--paused"], &[]).await;
    let proxy = HttpProxy::start(
        &server.url,
        &["--no-control", "--faults", faults.to_str().unwrap()],
        &dir,
    );
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::new();
    let post = |body: Value, session: Option<&str>| {
        let mut request = http
            .post(&proxy.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_string());
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.send()
    };
    let opened = post(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        None,
    )
    .await
    .unwrap();
    let session = opened.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_string();
    opened.text().await.unwrap();
    post(
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        Some(&session),
    )
    .await
    .unwrap();
    let events = post(
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "structs_query_block_height", "arguments": {}}}),
        Some(&session),
    )
    .await
    .unwrap()
    .text()
    .await
    .unwrap();
    let data: Vec<&str> = events
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .collect();
    assert_eq!(data.len(), 1, "one event, not pieces");
    assert!(data[0].len() > 16_500_000, "{}", data[0].len());
    let answer: Value = serde_json::from_str(data[0]).expect("whole JSON");
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["result"]["structuredContent"]["paused"], true);
    drop(proxy);
    server.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// When the server behind forgets the session (it restarted), a stdio host's call is
/// answered saying so, and the proxy ends, as its server would have.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_forgets_the_session_ends_the_proxy_saying_why() {
    let dir = runtime_dir("proxy-forgot");
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let server = Headless::start(&["--paused", "--http", &addr], &[]).await;
    let url = server.url.clone();
    let (agent, stderr, dir2) = tokio::task::spawn_blocking(move || {
        let (mut agent, stderr) =
            Agent::start(&["proxy", "--no-control", "--upstream", &url], &dir);
        agent.call(1, "structs_query_block_height", json!({}), None);
        until(&agent.out, "the answer", |v| v["id"] == 1);
        (agent, stderr, dir)
    })
    .await
    .unwrap();
    server.stop().await;
    let again = Headless::start(&["--paused", "--http", &addr], &[]).await;
    tokio::task::spawn_blocking(move || {
        let mut agent = agent;
        agent.call(2, "structs_query_block_height", json!({}), None);
        // The proxy learns it either from the call's own POST, and answers it saying
        // so, or first from its event stream reconnecting, and then ends at once, as a
        // server whose session is gone would: the host's pipe closes, and the proxy
        // says why on stderr.
        let answer = loop {
            match agent.out.recv_timeout(Duration::from_secs(10)) {
                Ok(line) => {
                    let v: Value = serde_json::from_str(&line).unwrap();
                    if v["id"] == 2 {
                        break Some(v);
                    }
                }
                Err(RecvTimeoutError::Disconnected) => break None,
                Err(RecvTimeoutError::Timeout) => panic!("call 2 neither answered nor ended"),
            }
        };
        match answer {
            Some(got) => {
                let said = got["error"]["message"].as_str().unwrap_or("");
                assert!(said.contains("no longer knows this session"), "{got}");
            }
            None => {
                let mut said = Vec::new();
                while let Ok(line) = stderr.recv_timeout(Duration::from_secs(5)) {
                    let found = line.contains("no longer knows this session");
                    said.push(line);
                    if found {
                        break;
                    }
                }
                assert!(
                    said.iter()
                        .any(|l| l.contains("no longer knows this session")),
                    "{said:?}"
                );
            }
        }
        let start = Instant::now();
        let status = loop {
            if let Some(status) = agent.child.try_wait().unwrap() {
                break status;
            }
            assert!(start.elapsed() < Duration::from_secs(10), "the proxy ends");
            std::thread::sleep(Duration::from_millis(20));
        };
        assert_eq!(status.code(), Some(1));
        let _ = std::fs::remove_dir_all(&dir2);
    })
    .await
    .unwrap();
    again.stop().await;
}

/// A server that answers every POST with an event stream whose one event never ends:
/// the proxy answers the host's request saying so, and its memory stays bounded.
#[test]
fn an_upstream_event_that_never_ends_is_answered_and_costs_no_memory() {
    use std::io::{Read, Write};
    let dir = runtime_dir("proxy-endless");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            std::thread::spawn(move || {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                    head.push(byte[0]);
                }
                let text = String::from_utf8_lossy(&head).to_lowercase();
                if !text.starts_with("post") {
                    let _ = stream
                        .write_all(b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n\r\n");
                    return;
                }
                let _ = stream.write_all(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nmcp-session-id: s1\r\n\r\ndata: ",
                );
                // 40 MB with no newline, then nothing: the event never ends.
                let block = vec![b'x'; 1 << 20];
                for _ in 0..40 {
                    if stream.write_all(&block).is_err() {
                        return;
                    }
                }
                std::thread::sleep(Duration::from_secs(30));
            });
        }
    });
    let (agent, _stderr) = Agent::start(&["proxy", "--no-control", "--upstream", &url], &dir);
    let pid = agent.child.id();
    let said = agent.handshake["error"]["message"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(said.contains("over 16 MB"), "{}", agent.handshake);
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let peak_kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    assert!(peak_kb < 150 * 1024, "peak {peak_kb} kB");
    let _ = std::fs::remove_dir_all(&dir);
}
