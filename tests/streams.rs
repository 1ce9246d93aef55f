//! `subscriptions/listen` streams, bounded: a filter names at most the cap, a caller
//! and the server hold at most so many streams, a quiet stream ends, streams never
//! take requests' room, and `/health` answers whatever the load. Raw 2026-07-28
//! requests over HTTP, against the built binary.

mod support;

use std::time::Duration;

use serde_json::{Value, json};
use support::mcp_http::Headless;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const V2026: &str = "2026-07-28";

fn http() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": V2026,
        "io.modelcontextprotocol/clientInfo": {"name": "streams-test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

/// Opens a listen stream following `uris`, as the caller `token` names (none:
/// anonymous); the response, its body still streaming.
async fn listen(url: &str, token: Option<&str>, uris: &[String]) -> reqwest::Response {
    let params = json!({"notifications": {"resourceSubscriptions": uris}, "_meta": meta()});
    let mut request = http()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", V2026)
        .header("mcp-method", "subscriptions/listen");
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    request
        .json(
            &json!({"jsonrpc": "2.0", "id": "l", "method": "subscriptions/listen",
                      "params": params}),
        )
        .send()
        .await
        .expect("an answer")
}

/// A listen request whose method is written `subscriptions\/listen` (an escaped
/// slash, the same string to a JSON reader).
async fn listen_escaped(url: &str, token: &str) -> reqwest::Response {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":"e","method":"subscriptions\/listen","params":{{"_meta":{},"notifications":{{"resourceSubscriptions":["structs://entities/1-1"]}}}}}}"#,
        meta()
    );
    http()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", V2026)
        .header("mcp-method", "subscriptions/listen")
        .bearer_auth(token)
        .body(body)
        .send()
        .await
        .expect("an answer")
}

/// Reads a stream until its text holds `until`, or `within` passes: the text.
async fn read_until(response: &mut reqwest::Response, until: &str, within: Duration) -> String {
    let mut text = String::new();
    let deadline = tokio::time::Instant::now() + within;
    while let Ok(Ok(Some(chunk))) = tokio::time::timeout_at(deadline, response.chunk()).await {
        text.push_str(&String::from_utf8_lossy(&chunk));
        if text.contains(until) {
            break;
        }
    }
    text
}

fn entities(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| format!("structs://entities/1-{i}"))
        .collect()
}

/// A stateless `tools/call`; its status.
async fn call_status(url: &str) -> u16 {
    let params = json!({"name": "structs_query_block_height", "arguments": {}, "_meta": meta()});
    http()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", V2026)
        .header("mcp-method", "tools/call")
        .header("mcp-name", "structs_query_block_height")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}))
        .send()
        .await
        .map_or(0, |r| r.status().as_u16())
}

async fn health(base: &str) -> (u16, Value) {
    let response = http()
        .get(format!("{base}/health"))
        .send()
        .await
        .expect("health answers");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or_default())
}

fn base_of(url: &str) -> String {
    url.trim_end_matches("/mcp").to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_filter_names_at_most_the_cap_and_is_refused_before_it_is_acknowledged() {
    let server = Headless::start(&["--paused"], &[]).await;
    let cap = structs_console::mcp::server::strict::MAX_LISTEN_URIS;
    let mut at_cap = listen(&server.url, None, &entities(cap)).await;
    assert_eq!(at_cap.status(), 200);
    let text = read_until(
        &mut at_cap,
        "resourceSubscriptions",
        Duration::from_secs(10),
    )
    .await;
    assert!(
        text.contains("notifications/subscriptions/acknowledged"),
        "{text}"
    );
    drop(at_cap);
    let over = listen(&server.url, None, &entities(cap + 1)).await;
    assert_eq!(over.status(), 200);
    let answer: Value = over.json().await.unwrap();
    assert_eq!(answer["error"]["code"], -32602, "{answer:#}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains(&format!("at most {cap}")), "{message}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_holds_at_most_its_share_of_streams_and_a_quiet_one_ends() {
    let server = Headless::start(&["--paused", "--http-listen-idle", "2"], &[]).await;
    let base = base_of(&server.url);
    let per = structs_console::mcp::server::listen::MAX_STREAMS_PER_CALLER;
    let one = entities(1);
    let mut open = Vec::new();
    for i in 0..per {
        // One names its method with an escaped slash: the same method to a JSON reader,
        // and it takes its place as any other.
        let mut stream = if i == 0 {
            listen_escaped(&server.url, "the-first-callers-key").await
        } else {
            listen(&server.url, Some("the-first-callers-key"), &one).await
        };
        assert_eq!(stream.status(), 200);
        let said = read_until(&mut stream, "acknowledged", Duration::from_secs(10)).await;
        assert!(said.contains("acknowledged"), "{said}");
        open.push(stream);
    }
    let refused = listen(&server.url, Some("the-first-callers-key"), &one).await;
    assert_eq!(refused.status(), 429);
    assert_eq!(refused.headers()["retry-after"], "1");
    let answer: Value = refused.json().await.unwrap();
    assert_eq!(
        answer["error"]["data"]["error"]["code"], "RATE_LIMIT_EXCEEDED",
        "{answer:#}"
    );
    // Another caller's is its own.
    let mut theirs = listen(&server.url, Some("the-second-callers-key"), &one).await;
    assert_eq!(theirs.status(), 200);
    let (_, h) = health(&base).await;
    assert_eq!(h["streams"], per + 1, "{h:#}");
    // Nothing to say for the idle time: the stream ends with its final result.
    let text = read_until(&mut theirs, "\"result\"", Duration::from_secs(10)).await;
    assert!(text.contains("\"result\""), "{text}");
    drop(open);
    drop(theirs);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let (_, h) = health(&base).await;
        if h["streams"] == 0 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{h:#}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_take_no_requests_room_and_health_answers_whatever_the_load() {
    let max = 4;
    let server = Headless::start(
        &["--paused", "--http-max-connections", &max.to_string()],
        &[],
    )
    .await;
    let base = base_of(&server.url);
    // As many streams as connections, from callers of their own: requests still pass.
    let mut streams = Vec::new();
    for i in 0..max + 2 {
        let token = format!("a-caller-of-its-own-{i}");
        let mut stream = listen(&server.url, Some(&token), &entities(1)).await;
        assert_eq!(stream.status(), 200);
        read_until(&mut stream, "acknowledged", Duration::from_secs(10)).await;
        streams.push(stream);
    }
    assert_eq!(call_status(&server.url).await, 200);

    // Every connection busy: requests whose bodies have not come (each busy until its
    // body's deadline). Each asks to be told when its body is wanted, so the test knows
    // the server is reading it: then it is busy. Each names subscriptions/listen in its
    // header: a header alone does not make a connection a stream's.
    let addr = server
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp");
    let mut held = Vec::new();
    for _ in 0..max {
        let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        tcp.write_all(
            format!(
                "POST /mcp HTTP/1.1\r\nHost: {addr}\r\ncontent-type: application/json\r\n\
                 mcp-method: subscriptions/listen\r\nexpect: 100-continue\r\n\
                 content-length: 100\r\n\r\n"
            )
            .as_bytes(),
        )
        .await
        .unwrap();
        let mut said = [0u8; 64];
        let n = tokio::time::timeout(Duration::from_secs(10), tcp.read(&mut said))
            .await
            .expect("the server asks for the body")
            .unwrap();
        let said = String::from_utf8_lossy(&said[..n]).to_string();
        assert!(said.starts_with("HTTP/1.1 100"), "{said}");
        held.push(tcp);
    }
    // A request on a new connection hears the server is busy; /health is still served.
    assert_eq!(call_status(&server.url).await, 503);
    let (status, h) = health(&base).await;
    assert_eq!(status, 200, "{h:#}");
    assert_eq!(h["status"], "ok");
    assert_eq!(h["streams"], max + 2);
    // A raw /health on a connection past the cap: served, then the connection closed.
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    tcp.write_all(format!("GET /health HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut answer = String::new();
    tokio::time::timeout(Duration::from_secs(5), tcp.read_to_string(&mut answer))
        .await
        .expect("the connection is closed after the answer")
        .unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    drop(held);
    drop(streams);
    server.stop().await;
}
