//! A server many clients share: what one client may take of it. Each test here is an
//! attack that once brought the headless HTTP server down or made it hold on to work,
//! run against the built binary.

mod support;

use std::time::{Duration, Instant};

use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

use support::mcp_http::{Headless, connect};

/// `GET /health` of the server at `mcp_url`.
async fn health(mcp_url: &str) -> Value {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::get(mcp_url.replace("/mcp", "/health"))
        .await
        .expect("GET /health")
        .json()
        .await
        .expect("JSON")
}

/// Asks `/health` until `ok` holds of its answer, for at most `within`.
async fn health_until(mcp_url: &str, within: Duration, ok: impl Fn(&Value) -> bool) -> Value {
    let until = Instant::now() + within;
    loop {
        let h = health(mcp_url).await;
        if ok(&h) || Instant::now() > until {
            return h;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The names of a process's threads.
fn thread_names(pid: u32) -> Vec<String> {
    let mut names = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).expect("/proc") {
        let comm = task.expect("task").path().join("comm");
        if let Ok(name) = std::fs::read_to_string(comm) {
            names.push(name.trim().to_string());
        }
    }
    names
}

/// CPU time a process has used, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    // After the command name in parentheses: state is field 3, utime 14, stime 15.
    let rest = &stat[stat.rfind(')').expect("comm") + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

/// Eight sessions each ask for 256 hashing threads. The process hashes on one pool of
/// a thread per core, every search runs on it in turn, and when the sessions end their
/// searches end with them: no thread hashes on, and the CPU falls quiet.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn searches_share_one_pool_of_threads_and_end_with_their_sessions() {
    let server = Headless::start(&["--paused"], &[]).await;
    let pid = server.child.id().expect("pid");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    // A search that cannot succeed: it runs until it is stopped.
    let args = json!({"action_type": "struct_build_complete", "entity_id": "5-1",
        "block_start": 10, "age": 1, "difficulty": 700, "threads": 256,
        "max_iterations": 1_000_000_000_000u64});
    let mut clients = Vec::new();
    let mut calls = Vec::new();
    for _ in 0..8 {
        let client = connect(&server.url, None).await.expect("connect");
        let peer = client.peer().clone();
        let args = args.as_object().unwrap().clone();
        calls.push(tokio::spawn(async move {
            peer.call_tool(
                CallToolRequestParams::new("structs_calculate_proof_of_work").with_arguments(args),
            )
            .await
        }));
        clients.push(client);
    }
    // Every call is hashing once its first progress has gone out; give them a moment.
    let hashing = || -> Vec<String> {
        thread_names(pid)
            .into_iter()
            .filter(|n| n.starts_with("pow-"))
            .collect()
    };
    let until = Instant::now() + Duration::from_secs(20);
    while hashing().is_empty() && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    // The pool's threads hash, and there are no others.
    let threads = hashing();
    assert!(
        !threads.is_empty() && threads.len() <= cores,
        "{} hashing threads on {cores} cores",
        threads.len()
    );
    let all = thread_names(pid).len();
    assert!(
        all <= cores + 24,
        "{all} threads in the server with 8 searches running"
    );
    let h = health_until(&server.url, Duration::from_secs(20), |h| {
        h["proof_of_work"]["searches"] == 8
    })
    .await;
    assert_eq!(h["proof_of_work"]["searches"], 8, "{h}");
    assert_eq!(h["proof_of_work"]["threads"], cores, "{h}");

    // The clients go away (each session is deleted) without waiting for an answer.
    for client in clients {
        let _ = client.cancel().await;
    }
    // Quiet within seconds: less than a tenth of a core over a second.
    let ticks_per_second = 100;
    let until = Instant::now() + Duration::from_secs(15);
    let mut used;
    loop {
        let before = cpu_ticks(pid);
        tokio::time::sleep(Duration::from_secs(1)).await;
        used = cpu_ticks(pid) - before;
        if used * 10 < ticks_per_second || Instant::now() > until {
            break;
        }
    }
    assert!(
        used * 10 < ticks_per_second,
        "{used} ticks of CPU a second, 15 s after every session ended"
    );
    let h = health(&server.url).await;
    assert_eq!(
        (
            &h["proof_of_work"]["searches"],
            &h["proof_of_work"]["hashing"]
        ),
        (&json!(0), &json!(0)),
        "{h}"
    );
    for call in calls {
        call.abort();
    }
    assert!(server.stop().await.success());
}

/// An `initialize` over plain HTTP, its answer read whole (so no stream stays open).
async fn initialize(url: &str) -> (reqwest::StatusCode, reqwest::header::HeaderMap, String) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let r = reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "limits", "version": "1"}}})
            .to_string(),
        )
        .send()
        .await
        .expect("POST initialize");
    let status = r.status();
    let headers = r.headers().clone();
    let body = r.text().await.expect("body");
    (status, headers, body)
}

/// The cap on sessions: the one past it is refused with a JSON-RPC error and
/// Retry-After; a session left idle ends and frees its place; a client that keeps its
/// stream open is not idle however long it waits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_past_the_cap_are_refused_and_idle_ones_end() {
    let server = Headless::start(
        &[
            "--paused",
            "--http-max-sessions",
            "3",
            "--http-session-idle",
            "2",
        ],
        &[],
    )
    .await;
    // A client with its stream of server messages open, and two that read and go.
    let streaming = connect(&server.url, None).await.expect("connect");
    for _ in 0..2 {
        let (status, headers, _) = initialize(&server.url).await;
        assert_eq!(status, 200);
        assert!(headers.contains_key("mcp-session-id"));
    }
    let (status, headers, body) = initialize(&server.url).await;
    assert_eq!(status, 503, "{body}");
    let retry: u64 = headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=2).contains(&retry), "Retry-After {retry}");
    let answer: Value = serde_json::from_str(&body).expect("a JSON body");
    assert_eq!(answer["jsonrpc"], "2.0");
    assert_eq!(answer["error"]["code"], -32000);
    let error = &answer["error"]["data"]["error"];
    assert_eq!(error["code"], "RESOURCE_UNAVAILABLE", "{answer}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("at most 3 MCP sessions"),
        "{answer}"
    );
    assert_eq!(health(&server.url).await["sessions"], 3);

    // The two idle sessions end; the streaming client's stays.
    let h = health_until(&server.url, Duration::from_secs(10), |h| h["sessions"] == 1).await;
    assert_eq!(h["sessions"], 1, "{h}");
    let (status, _, body) = initialize(&server.url).await;
    assert_eq!(status, 200, "a place freed: {body}");
    let answer = streaming
        .peer()
        .call_tool(
            CallToolRequestParams::new("structs_query_block_height")
                .with_arguments(serde_json::Map::new()),
        )
        .await
        .expect("the client that kept its stream open still has its session");
    assert_ne!(answer.is_error, Some(true));
    let _ = streaming.cancel().await;
    assert!(server.stop().await.success());
}

/// A connection that opens and never sends a whole request: many of them at once
/// (past the cap) neither lock out a client nor stop the server from ending in time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_connections_neither_lock_out_clients_nor_hold_up_shutdown() {
    use tokio::io::AsyncWriteExt;
    let server = Headless::start(&["--paused", "--http-max-connections", "40"], &[]).await;
    let addr = server
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string();
    // Twice the cap, each sending the start of a request and then nothing.
    let mut slow = Vec::new();
    for _ in 0..80 {
        let mut tcp = tokio::net::TcpStream::connect(&addr)
            .await
            .expect("connect");
        tcp.write_all(b"POST /mcp HTTP/1.1\r\nHost: loc")
            .await
            .expect("write");
        slow.push(tcp);
    }
    // A client still gets in, and promptly.
    let started = Instant::now();
    let (status, _, body) = initialize(&server.url).await;
    assert_eq!(status, 200, "{body}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "a new client waited {:?}",
        started.elapsed()
    );
    // A client with its stream of server messages open: a request that never ends.
    let streaming = connect(&server.url, None).await.expect("connect");

    // SIGTERM with the slow connections still open: the server ends within its
    // deadline (5 s) and a margin.
    let pid = server.child.id().expect("pid");
    let at = Instant::now();
    let _ = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status();
    let mut child = server.child;
    let status = tokio::time::timeout(Duration::from_secs(9), child.wait())
        .await
        .expect("the server ends within its shutdown deadline")
        .expect("wait");
    assert!(status.success(), "{status:?}");
    assert!(at.elapsed() < Duration::from_secs(8), "{:?}", at.elapsed());
    drop((slow, streaming));
}

/// A request whose body stops half-way is answered 408, not waited on for ever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_stops_half_way_is_answered() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let server = Headless::start(&["--paused"], &[]).await;
    let addr = server
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string();
    let mut tcp = tokio::net::TcpStream::connect(&addr)
        .await
        .expect("connect");
    tcp.write_all(
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\ncontent-type: application/json\r\n\
             accept: application/json, text/event-stream\r\ncontent-length: 100\r\n\r\n{{\"jsonrpc\""
        )
        .as_bytes(),
    )
    .await
    .expect("write");
    let at = Instant::now();
    let mut buf = vec![0u8; 8192];
    let n = tokio::time::timeout(Duration::from_secs(20), tcp.read(&mut buf))
        .await
        .expect("an answer within 20 s")
        .expect("read");
    let answer = String::from_utf8_lossy(&buf[..n]).to_string();
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("\"TOOL_TIMEOUT\""), "{answer}");
    assert!(at.elapsed() >= Duration::from_secs(5), "{:?}", at.elapsed());
    assert!(server.stop().await.success());
}

/// A warning that a client can make the server repeat is logged once in a while, with
/// how many times it was not: 300 refused sessions write one line, not 300.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeated_warning_is_logged_once_with_its_count() {
    use tokio::io::AsyncBufReadExt;
    let log = std::env::temp_dir().join(format!("structs-limits-{}.log", std::process::id()));
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_structs-console"))
        .args([
            "--headless",
            "--paused",
            "--http",
            "127.0.0.1:0",
            "--http-max-sessions",
            "1",
        ])
        .env_remove("STRUCTS_CONSOLE_AUTH_TOKEN")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::fs::File::create(&log).expect("log file"))
        .kill_on_drop(true)
        .spawn()
        .expect("spawn");
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
        .await
        .expect("listening")
        .expect("read")
        .expect("a line");
    let url = line
        .strip_prefix("serving MCP over HTTP at ")
        .expect("where it listens")
        .to_string();
    let (status, _, _) = initialize(&url).await;
    assert_eq!(status, 200);
    for _ in 0..300 {
        let (status, _, _) = initialize(&url).await;
        assert_eq!(status, 503);
    }
    child.kill().await.expect("kill");
    let text = std::fs::read_to_string(&log).expect("read the log");
    let full: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("the server is full"))
        .collect();
    assert_eq!(full.len(), 1, "{full:#?}");
    let _ = std::fs::remove_file(&log);
}

/// `--http-drain`: on SIGTERM `/health` answers 503 "draining" at once, so that a load
/// balancer takes the server out, while requests are still served; the server stops
/// when the grace period ends, not before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_draining_server_says_so_on_health_and_still_serves_until_it_stops() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let server = Headless::start(&["--paused", "--http-drain", "2"], &[]).await;
    let health_url = server.url.replace("/mcp", "/health");
    let before = reqwest::get(&health_url).await.expect("GET /health");
    assert_eq!(before.status(), 200);
    let pid = server.child.id().expect("pid");
    let at = Instant::now();
    let _ = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status();
    // Draining: 503, and the status says why.
    let mut seen = None;
    while at.elapsed() < Duration::from_secs(1) {
        let r = reqwest::get(&health_url).await.expect("GET /health");
        if r.status() == 503 {
            seen = Some(r.json::<Value>().await.expect("JSON"));
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let seen = seen.expect("/health answered 503 within a second of SIGTERM");
    assert_eq!(seen["status"], "draining", "{seen}");
    // A client is still served while the server drains.
    let (status, _, body) = initialize(&server.url).await;
    assert_eq!(status, 200, "{body}");
    assert!(at.elapsed() < Duration::from_secs(2), "{:?}", at.elapsed());
    let mut child = server.child;
    let status = tokio::time::timeout(Duration::from_secs(9), child.wait())
        .await
        .expect("the server ends after its drain")
        .expect("wait");
    assert!(status.success(), "{status:?}");
    assert!(
        at.elapsed() >= Duration::from_secs(2),
        "stopped before its 2 s drain: {:?}",
        at.elapsed()
    );
}
