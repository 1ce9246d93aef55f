//! Strict protocol answers: every message the server cannot take gets the JSON-RPC error
//! it calls for (-32700 unreadable, -32600 not a request, -32601 no such method, -32602
//! bad params), under the request's id when one can be read, on stdio and over HTTP,
//! and the session goes on serving. Over HTTP also: the `Origin` check and the answer
//! to a session's DELETE.

mod support;

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

/// How long an answer may take before the test says it never came.
const WAIT: Duration = Duration::from_secs(15);

const PROTOCOL: &str = "2025-11-25";

fn init_line() -> String {
    json!({"jsonrpc": "2.0", "id": "init", "method": "initialize",
           "params": {"protocolVersion": PROTOCOL, "capabilities": {},
                      "clientInfo": {"name": "strict", "version": "0"}}})
    .to_string()
}

const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// A request line with `id`, `method` and `params` as raw JSON text (so the text may be
/// anything, valid or not).
fn request(id: &str, method: &str, params: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#)
}

/// `[[[…"x"…]]]`, `depth` arrays deep.
fn nested(depth: usize) -> String {
    format!("{}\"x\"{}", "[".repeat(depth), "]".repeat(depth))
}

/// What one bad message must be answered with: its JSON-RPC code, the id the answer
/// goes under (`Value::Null` for none), and words the message must hold.
struct Case {
    what: &'static str,
    line: Vec<u8>,
    code: i64,
    id: Value,
    says: &'static str,
}

fn case(
    what: &'static str,
    line: impl Into<Vec<u8>>,
    code: i64,
    id: Value,
    says: &'static str,
) -> Case {
    Case {
        what,
        line: line.into(),
        code,
        id,
        says,
    }
}

/// Messages that are not JSON: -32700, under the id when the text before the fault holds
/// one at its top level.
fn unparsable() -> Vec<Case> {
    vec![
        case(
            "bad syntax, no id",
            "{not json at all",
            -32700,
            Value::Null,
            "not JSON",
        ),
        case(
            "cut short after its id",
            r#"{"jsonrpc":"2.0","id":11,"method":"tools/list""#,
            -32700,
            json!(11),
            "not JSON",
        ),
        case(
            "a string id before a syntax error",
            r#"{"jsonrpc":"2.0","id":"eleven","method":"tools/list",}"#,
            -32700,
            json!("eleven"),
            "not JSON",
        ),
        case(
            "nested deeper than the parser goes",
            request(
                "12",
                "tools/call",
                &format!(
                    r#"{{"name":"structs_validate_entity_id","arguments":{{"id":{}}}}}"#,
                    nested(200)
                ),
            ),
            -32700,
            json!(12),
            "recursion limit",
        ),
        case(
            "a number beyond a double",
            request(
                "13",
                "tools/call",
                r#"{"name":"structs_calculate_power","arguments":{"grams":1e400}}"#,
            ),
            -32700,
            json!(13),
            "number out of range",
        ),
        case(
            "invalid UTF-8 in a string",
            [
                br#"{"jsonrpc":"2.0","id":14,"method":"ping","params":{"_meta":{"x":""#.as_slice(),
                b"\xff\xfe",
                br#""}}}"#,
            ]
            .concat(),
            -32700,
            json!(14),
            "UTF-8",
        ),
        case(
            "invalid UTF-8, no id",
            b"\xff\xfe\x00garbage".to_vec(),
            -32700,
            Value::Null,
            "UTF-8",
        ),
    ]
}

/// JSON that is not a JSON-RPC request: -32600.
fn not_requests() -> Vec<Case> {
    vec![
        case("a batch", "[1,2,3]", -32600, Value::Null, "batch"),
        case("a bare string", r#""ping""#, -32600, Value::Null, "object"),
        case(
            "the wrong jsonrpc version",
            r#"{"jsonrpc":"1.0","id":21,"method":"ping"}"#,
            -32600,
            json!(21),
            "jsonrpc",
        ),
        case(
            "an id that is an object",
            r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
            -32600,
            Value::Null,
            "id",
        ),
        case(
            "no method",
            r#"{"jsonrpc":"2.0","id":22}"#,
            -32600,
            json!(22),
            "method",
        ),
        case(
            "a method that is not a string",
            r#"{"jsonrpc":"2.0","id":23,"method":7}"#,
            -32600,
            json!(23),
            "method",
        ),
        case(
            "a method named twice (the headers' check and the dispatch could differ)",
            r#"{"jsonrpc":"2.0","id":24,"method":"tools/list","method":"tools/call","params":{"name":"structs_query_player","arguments":{"player_id":"1-1"}}}"#,
            -32600,
            json!(24),
            "twice",
        ),
    ]
}

/// Known methods whose params do not fit: -32602 under the id, saying what is wrong.
fn bad_params() -> Vec<Case> {
    vec![
        case(
            "tools/call with {}",
            request("31", "tools/call", "{}"),
            -32602,
            json!(31),
            "name",
        ),
        case(
            "tools/call without params",
            r#"{"jsonrpc":"2.0","id":32,"method":"tools/call"}"#,
            -32602,
            json!(32),
            "name",
        ),
        case(
            "tools/call with arguments as an array",
            request(
                "33",
                "tools/call",
                r#"{"name":"structs_query_entity","arguments":[]}"#,
            ),
            -32602,
            json!(33),
            "arguments",
        ),
        case(
            "tools/call with arguments as a string",
            request(
                "34",
                "tools/call",
                r#"{"name":"structs_query_entity","arguments":"1-1"}"#,
            ),
            -32602,
            json!(34),
            "arguments",
        ),
        case(
            "tools/call with a numeric name",
            request("35", "tools/call", r#"{"name":7}"#),
            -32602,
            json!(35),
            "name",
        ),
        case(
            "tools/call with params as an array",
            request("36", "tools/call", "[]"),
            -32602,
            json!(36),
            "params",
        ),
        case(
            "tools/call with params as a string",
            request("\"s37\"", "tools/call", r#""structs_query_entity""#),
            -32602,
            json!("s37"),
            "params",
        ),
        case(
            "resources/read with {}",
            request("38", "resources/read", "{}"),
            -32602,
            json!(38),
            "uri",
        ),
        case(
            "resources/read with a numeric uri",
            request("39", "resources/read", r#"{"uri":7}"#),
            -32602,
            json!(39),
            "uri",
        ),
        case(
            "resources/read with params as an array",
            request("40", "resources/read", r#"["structs://entities/1-1"]"#),
            -32602,
            json!(40),
            "params",
        ),
        case(
            "resources/subscribe with {}",
            request("41", "resources/subscribe", "{}"),
            -32602,
            json!(41),
            "uri",
        ),
        case(
            "resources/unsubscribe with a numeric uri",
            request("42", "resources/unsubscribe", r#"{"uri":1}"#),
            -32602,
            json!(42),
            "uri",
        ),
        case(
            "prompts/get with {}",
            request("43", "prompts/get", "{}"),
            -32602,
            json!(43),
            "name",
        ),
        case(
            "completion/complete with {}",
            request("44", "completion/complete", "{}"),
            -32602,
            json!(44),
            "completion/complete",
        ),
        case(
            "logging/setLevel to no level",
            request("45", "logging/setLevel", r#"{"level":"loudest"}"#),
            -32602,
            json!(45),
            "logging/setLevel",
        ),
        case(
            "tools/list with params as an array",
            request("46", "tools/list", "[]"),
            -32602,
            json!(46),
            "params",
        ),
        case(
            "ping with params as a number",
            request("47", "ping", "5"),
            -32602,
            json!(47),
            "params",
        ),
    ]
}

/// Methods the server does not have stay -32601, whatever their params.
fn unknown_methods() -> Vec<Case> {
    vec![
        case(
            "an unknown method",
            request("51", "no/such/method", "{}"),
            -32601,
            json!(51),
            "",
        ),
        case(
            "an unknown method with params as an array",
            request("52", "no/such/method", "[1]"),
            -32601,
            json!(52),
            "no/such/method",
        ),
    ]
}

fn check_answer(case: &Case, answer: &Value) {
    let what = case.what;
    assert_eq!(answer["jsonrpc"], "2.0", "{what}: {answer}");
    assert_eq!(answer["id"], case.id, "{what}: the id: {answer}");
    assert_eq!(
        answer["error"]["code"], case.code,
        "{what}: the code: {answer}"
    );
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(case.says),
        "{what}: the message should say {:?}: {answer}",
        case.says
    );
    assert!(answer.get("result").is_none(), "{what}: {answer}");
}

// ---------------------------------------------------------------------------------------
// stdio

/// The headless server over stdio, spoken to a line at a time.
struct Stdio {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    pings: u64,
}

impl Stdio {
    async fn start() -> Stdio {
        let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_structs-console"))
            .args(["--headless", "--paused", "--log-level", "warn"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn the server");
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut s = Stdio {
            child,
            stdin,
            lines,
            pings: 0,
        };
        s.send(init_line().as_bytes()).await;
        let answer = s.next().await;
        assert_eq!(answer["id"], "init", "{answer}");
        s.send(INITIALIZED.as_bytes()).await;
        s
    }

    async fn send(&mut self, line: &[u8]) {
        self.stdin.write_all(line).await.unwrap();
        self.stdin.write_all(b"\n").await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(WAIT, self.lines.next_line())
            .await
            .expect("an answer within 15 s")
            .expect("read stdout")
            .expect("the server is still running");
        serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("{e}: a line out is not JSON: {line}"))
    }

    /// Sends `line`, then a ping, and returns every answer but the ping's, once the
    /// ping's and `want` others have come (the answer to a refused line may come before
    /// or after the ping's).
    async fn exchange(&mut self, line: &[u8], want: usize) -> Vec<Value> {
        self.pings += 1;
        let ping = format!("ping-{}", self.pings);
        self.send(line).await;
        self.send(
            json!({"jsonrpc": "2.0", "id": ping, "method": "ping"})
                .to_string()
                .as_bytes(),
        )
        .await;
        let mut others = Vec::new();
        let mut ponged = false;
        while !(ponged && others.len() >= want) {
            let answer = self.next().await;
            if answer["id"] == ping.as_str() {
                assert_eq!(answer["result"], json!({}), "the ping: {answer}");
                ponged = true;
            } else {
                others.push(answer);
            }
        }
        others
    }

    /// Sends each case's line and checks its one answer.
    async fn check(&mut self, cases: &[Case]) {
        for case in cases {
            eprintln!("case: {}", case.what);
            let answers = self.exchange(&case.line, 1).await;
            assert_eq!(answers.len(), 1, "{}: {answers:?}", case.what);
            check_answer(case, &answers[0]);
        }
    }

    /// A tool call after the bad lines is served as usual.
    async fn still_serves(&mut self) {
        let answers = self
            .exchange(
                request(
                    "\"after\"",
                    "tools/call",
                    r#"{"name":"structs_validate_entity_id","arguments":{"id":"1-1"}}"#,
                )
                .as_bytes(),
                1,
            )
            .await;
        assert_eq!(answers[0]["id"], "after", "{answers:?}");
        assert_eq!(
            answers[0]["result"]["structuredContent"]["valid"], true,
            "{answers:?}"
        );
    }

    /// Closes the input and returns what the server wrote to stderr.
    async fn finish(mut self) -> String {
        let mut stderr = self.child.stderr.take().unwrap();
        drop(self.stdin);
        let status = tokio::time::timeout(WAIT, self.child.wait())
            .await
            .expect("the server ends when its input closes")
            .unwrap();
        assert!(status.success(), "{status}");
        let mut err = String::new();
        stderr.read_to_string(&mut err).await.unwrap();
        assert!(!err.contains("panicked"), "{err}");
        err
    }
}

#[tokio::test]
async fn stdio_unparsable_lines_get_parse_errors_and_the_session_goes_on() {
    let mut s = Stdio::start().await;
    s.check(&unparsable()).await;
    s.still_serves().await;
    s.finish().await;
}

#[tokio::test]
async fn stdio_json_that_is_not_a_request_gets_invalid_request() {
    let mut s = Stdio::start().await;
    s.check(&not_requests()).await;
    s.still_serves().await;
    s.finish().await;
}

#[tokio::test]
async fn stdio_known_methods_with_bad_params_get_invalid_params() {
    let mut s = Stdio::start().await;
    s.check(&bad_params()).await;
    s.still_serves().await;
    s.finish().await;
}

#[tokio::test]
async fn stdio_unknown_methods_stay_method_not_found() {
    let mut s = Stdio::start().await;
    s.check(&unknown_methods()).await;
    s.finish().await;
}

/// A notification is never answered, even one that cannot be read; the session goes on.
#[tokio::test]
async fn stdio_an_unreadable_notification_gets_no_answer() {
    let mut s = Stdio::start().await;
    for line in [
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":5}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":[]}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/whatever"}"#,
    ] {
        let answers = s.exchange(line.as_bytes(), 0).await;
        assert!(answers.is_empty(), "{line}: {answers:?}");
    }
    // Nothing came late either.
    let answers = s.exchange(b"", 0).await;
    assert!(answers.is_empty(), "{answers:?}");
    s.still_serves().await;
    s.finish().await;
}

/// A flood of bad lines is answered line by line but logged once a kind.
#[tokio::test]
async fn stdio_a_flood_of_bad_lines_is_logged_once() {
    let mut s = Stdio::start().await;
    for i in 0..50 {
        let answers = s.exchange(format!("{{bad json {i}").as_bytes(), 1).await;
        assert_eq!(answers[0]["error"]["code"], -32700, "{answers:?}");
        let answers = s
            .exchange(request(&i.to_string(), "tools/call", "[]").as_bytes(), 1)
            .await;
        assert_eq!(answers[0]["error"]["code"], -32602, "{answers:?}");
    }
    s.still_serves().await;
    let err = s.finish().await;
    assert_eq!(
        err.matches("refused a message that is not JSON").count(),
        1,
        "{err}"
    );
    assert_eq!(
        err.matches("refused a request whose params do not fit its method")
            .count(),
        1,
        "{err}"
    );
}

/// `arguments: null` is taken as no arguments (the schema says an optional object; a
/// null is what many clients send for one left out).
#[tokio::test]
async fn stdio_null_arguments_are_no_arguments() {
    let mut s = Stdio::start().await;
    let answers = s
        .exchange(
            request(
                "60",
                "tools/call",
                r#"{"name":"structs_query_block_height","arguments":null}"#,
            )
            .as_bytes(),
            1,
        )
        .await;
    let result = &answers[0]["result"];
    assert_eq!(result["isError"], false, "{answers:?}");
    assert!(
        result["structuredContent"]["height"].is_u64(),
        "{answers:?}"
    );
    // A tool that needs arguments says which one is missing, as a tool error.
    let answers = s
        .exchange(
            request(
                "61",
                "tools/call",
                r#"{"name":"structs_query_player","arguments":null}"#,
            )
            .as_bytes(),
            1,
        )
        .await;
    let result = &answers[0]["result"];
    assert_eq!(result["isError"], true, "{answers:?}");
    assert_eq!(
        result["structuredContent"]["error"]["code"], "VALIDATION_MISSING_FIELD",
        "{answers:?}"
    );
    s.finish().await;
}

fn check_unknown_tool(answer: &Value, id: Value) {
    assert_eq!(answer["id"], id, "{answer}");
    let error = &answer["error"];
    assert_eq!(error["code"], -32602, "{answer}");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("structs_query_playr"), "{message}");
    assert!(message.contains("did you mean"), "{message}");
    assert!(message.contains("structs_query_player"), "{message}");
    let data = &error["data"]["error"];
    assert_eq!(data["code"], "TOOL_NOT_FOUND", "{answer}");
    assert_eq!(data["details"]["field"], "name", "{answer}");
    assert!(
        data["details"]["suggestions"]
            .as_array()
            .unwrap()
            .contains(&json!("structs_query_player")),
        "{answer}"
    );
}

/// An unknown tool is a protocol error (-32602, as the 2025-11-25 spec has it), with
/// the nearest names in its message and data.
#[tokio::test]
async fn stdio_an_unknown_tool_is_invalid_params_with_suggestions() {
    let mut s = Stdio::start().await;
    let answers = s
        .exchange(
            request(
                "70",
                "tools/call",
                r#"{"name":"structs_query_playr","arguments":{}}"#,
            )
            .as_bytes(),
            1,
        )
        .await;
    check_unknown_tool(&answers[0], json!(70));
    s.still_serves().await;
    s.finish().await;
}

/// The lists come whole: any cursor is one the server never gave, so -32602.
#[tokio::test]
async fn stdio_a_cursor_the_server_never_gave_is_invalid_params() {
    let mut s = Stdio::start().await;
    for (i, method) in [
        "tools/list",
        "resources/list",
        "resources/templates/list",
        "prompts/list",
    ]
    .into_iter()
    .enumerate()
    {
        let id = 80 + i as i64;
        let answers = s
            .exchange(
                request(&id.to_string(), method, r#"{"cursor":"bogus"}"#).as_bytes(),
                1,
            )
            .await;
        let answer = &answers[0];
        assert_eq!(answer["id"], id, "{method}: {answer}");
        assert_eq!(answer["error"]["code"], -32602, "{method}: {answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("cursor"),
            "{method}: {answer}"
        );
        // Without one, the list.
        let answers = s
            .exchange(request(&(id + 10).to_string(), method, "{}").as_bytes(), 1)
            .await;
        assert!(answers[0]["result"].is_object(), "{method}: {answers:?}");
    }
    s.finish().await;
}

// ---------------------------------------------------------------------------------------
// HTTP

/// An HTTP answer: status, content type, body.
struct Reply {
    status: u16,
    content_type: String,
    /// The `Mcp-Session-Id` header.
    session: Option<String>,
    body: Vec<u8>,
}

impl Reply {
    /// The JSON-RPC message in the body: the JSON itself, or an event stream's first
    /// message.
    fn json(&self) -> Value {
        let text = String::from_utf8_lossy(&self.body);
        if self.content_type.starts_with("text/event-stream") {
            for line in text.lines() {
                if let Some(data) = line.strip_prefix("data:")
                    && let Ok(v) = serde_json::from_str::<Value>(data.trim())
                {
                    return v;
                }
            }
            panic!("no message in the event stream {text:?}");
        }
        serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{e}: the body is not JSON ({}): {text:?}", self.status))
    }
}

/// One client's session with the HTTP server, spoken to with raw requests.
struct Http {
    url: String,
    client: reqwest::Client,
    session: Option<String>,
}

impl Http {
    fn new(url: &str) -> Http {
        let _ = rustls::crypto::ring::default_provider().install_default();
        Http {
            url: url.to_string(),
            client: reqwest::Client::new(),
            session: None,
        }
    }

    async fn post_with(&self, body: &[u8], headers: &[(&str, &str)]) -> Reply {
        let mut req = self
            .client
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .body(body.to_vec());
        if !headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
        {
            req = req.header("content-type", "application/json");
        }
        if let Some(s) = &self.session {
            req = req
                .header("mcp-session-id", s)
                .header("mcp-protocol-version", PROTOCOL);
        }
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        send(req).await
    }

    async fn post(&self, body: &[u8]) -> Reply {
        self.post_with(body, &[]).await
    }

    /// initialize and notifications/initialized: a session to send requests in.
    async fn open(url: &str) -> Http {
        let mut h = Http::new(url);
        let init = h.post(init_line().as_bytes()).await;
        assert_eq!(init.status, 200, "{}", String::from_utf8_lossy(&init.body));
        assert_eq!(init.json()["id"], "init");
        h.session = Some(init.session.expect("a session id"));
        let done = h.post(INITIALIZED.as_bytes()).await;
        assert_eq!(done.status, 202);
        h
    }

    /// Posts each case's message and checks its answer and its HTTP status.
    async fn check(&self, cases: &[Case], status: u16) {
        for case in cases {
            let reply = self.post(&case.line).await;
            assert_eq!(
                reply.status,
                status,
                "{}: {}",
                case.what,
                String::from_utf8_lossy(&reply.body)
            );
            assert!(
                reply.content_type.starts_with("application/json")
                    || reply.content_type.starts_with("text/event-stream"),
                "{}: content type {:?}",
                case.what,
                reply.content_type
            );
            check_answer(case, &reply.json());
        }
    }

    async fn still_serves(&self) {
        let reply = self
            .post(
                request(
                    "\"after\"",
                    "tools/call",
                    r#"{"name":"structs_validate_entity_id","arguments":{"id":"1-1"}}"#,
                )
                .as_bytes(),
            )
            .await;
        assert_eq!(reply.status, 200);
        let answer = reply.json();
        assert_eq!(
            answer["result"]["structuredContent"]["valid"], true,
            "{answer}"
        );
    }
}

async fn send(req: reqwest::RequestBuilder) -> Reply {
    let resp = tokio::time::timeout(WAIT, req.send())
        .await
        .expect("an HTTP answer within 15 s")
        .expect("the request is sent");
    let status = resp.status().as_u16();
    let content_type = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let session = resp
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let body = tokio::time::timeout(WAIT, resp.bytes())
        .await
        .expect("the whole body within 15 s")
        .unwrap_or_default()
        .to_vec();
    Reply {
        status,
        content_type,
        session,
        body,
    }
}

async fn http_server() -> support::mcp_http::Headless {
    support::mcp_http::Headless::start(&["--paused"], &[]).await
}

/// Unparsable JSON is HTTP 400 with a -32700 body (it was 415 with plain text).
#[tokio::test]
async fn http_unparsable_bodies_are_400_with_parse_errors() {
    let server = http_server().await;
    let h = Http::open(&server.url).await;
    h.check(&unparsable(), 400).await;
    // Before a session too.
    Http::new(&server.url).check(&unparsable()[..1], 400).await;
    h.still_serves().await;
    server.stop().await;
}

#[tokio::test]
async fn http_json_that_is_not_a_request_is_400_with_invalid_request() {
    let server = http_server().await;
    let h = Http::open(&server.url).await;
    h.check(&not_requests(), 400).await;
    h.still_serves().await;
    server.stop().await;
}

/// A request whose params do not fit is answered, under its id, with 200 and -32602.
#[tokio::test]
async fn http_known_methods_with_bad_params_get_invalid_params() {
    let server = http_server().await;
    let h = Http::open(&server.url).await;
    h.check(&bad_params(), 200).await;
    h.check(&unknown_methods(), 200).await;
    h.still_serves().await;
    server.stop().await;
}

/// A wrong Content-Type is 415, with a JSON-RPC error body.
#[tokio::test]
async fn http_a_wrong_content_type_is_415_with_a_json_rpc_body() {
    let server = http_server().await;
    let h = Http::open(&server.url).await;
    for content_type in ["text/plain", "application/x-www-form-urlencoded"] {
        let reply = h
            .post_with(
                request("90", "ping", "{}").as_bytes(),
                &[("content-type", content_type)],
            )
            .await;
        assert_eq!(reply.status, 415, "{content_type}");
        assert!(reply.content_type.starts_with("application/json"));
        let answer = reply.json();
        assert_eq!(answer["error"]["code"], -32600, "{answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("application/json"),
            "{answer}"
        );
    }
    h.still_serves().await;
    server.stop().await;
}

/// An unknown tool and a bogus cursor, through rmcp's own client.
#[tokio::test]
async fn http_an_unknown_tool_and_a_bogus_cursor_are_invalid_params() {
    let server = http_server().await;
    let h = Http::open(&server.url).await;
    let reply = h
        .post(request("71", "tools/call", r#"{"name":"structs_query_playr"}"#).as_bytes())
        .await;
    assert_eq!(reply.status, 200);
    check_unknown_tool(&reply.json(), json!(71));

    let client = support::mcp_http::connect(&server.url, None).await.unwrap();
    let refused = client
        .list_tools(Some(
            rmcp::model::PaginatedRequestParams::default().with_cursor(Some("bogus".into())),
        ))
        .await
        .unwrap_err();
    match refused {
        rmcp::service::ServiceError::McpError(e) => {
            assert_eq!(e.code.0, -32602, "{e:?}");
            assert!(e.message.contains("cursor"), "{e:?}");
        }
        other => panic!("{other:?}"),
    }
    let refused = client
        .call_tool(rmcp::model::CallToolRequestParams::new(
            "structs_query_playr",
        ))
        .await
        .unwrap_err();
    match refused {
        rmcp::service::ServiceError::McpError(e) => {
            assert_eq!(e.code.0, -32602, "{e:?}");
            assert_eq!(e.data.unwrap()["error"]["code"], "TOOL_NOT_FOUND");
        }
        other => panic!("{other:?}"),
    }
    assert!(!client.list_all_tools().await.unwrap().is_empty());
    client.cancel().await.unwrap();
    server.stop().await;
}

/// An `Origin` that is not this server's host is refused with 403 and a JSON-RPC body;
/// none, or a loopback one, passes.
#[tokio::test]
async fn http_a_foreign_origin_is_forbidden() {
    let server = http_server().await;
    let h = Http::new(&server.url);
    for origin in [
        "http://evil.example",
        "https://evil.example:8443",
        "http://127.0.0.1.evil.example",
        "null",
        "file://",
        "not an origin",
    ] {
        let reply = h
            .post_with(init_line().as_bytes(), &[("origin", origin)])
            .await;
        assert_eq!(reply.status, 403, "{origin}");
        let answer = reply.json();
        assert_eq!(answer["error"]["code"], -32600, "{origin}: {answer}");
        // `"id": null` written out, as JSON-RPC 2.0 asks: the Python SDK reads an error
        // without it as no JSON-RPC error, and loses the message.
        assert_eq!(answer.get("id"), Some(&Value::Null), "{origin}: {answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("Origin"),
            "{origin}: {answer}"
        );
        assert_eq!(
            answer["error"]["data"]["error"]["details"]["field"],
            "Origin"
        );
    }
    // The event stream is guarded too.
    let reply = send(
        h.client
            .get(&h.url)
            .header("accept", "text/event-stream")
            .header("origin", "http://evil.example"),
    )
    .await;
    assert_eq!(reply.status, 403);
    for origin in [
        "http://localhost:3000",
        "http://127.0.0.1",
        "https://[::1]:9",
        "HTTP://LOCALHOST",
    ] {
        let reply = h
            .post_with(init_line().as_bytes(), &[("origin", origin)])
            .await;
        assert_eq!(reply.status, 200, "{origin}");
        assert_eq!(reply.json()["id"], "init", "{origin}");
    }
    server.stop().await;
}

/// Bound to loopback, a `Host` that is not a loopback name (DNS rebinding) is refused
/// with 403 and a JSON-RPC body, as a foreign `Origin` is; the loopback names pass.
#[tokio::test]
async fn http_a_foreign_host_is_forbidden() {
    let server = http_server().await;
    let h = Http::new(&server.url);
    let port = server
        .url
        .rsplit(':')
        .next()
        .unwrap()
        .trim_end_matches("/mcp");
    for host in [
        format!("evil.example:{port}"),
        "evil.example".to_string(),
        format!("localhost.evil.example:{port}"),
    ] {
        let reply = h
            .post_with(init_line().as_bytes(), &[("host", host.as_str())])
            .await;
        assert_eq!(reply.status, 403, "{host}");
        let answer = reply.json();
        assert_eq!(answer["error"]["code"], -32600, "{host}: {answer}");
        assert_eq!(answer["id"], Value::Null, "{host}: {answer}");
        assert_eq!(
            answer["error"]["data"]["error"]["details"]["field"], "Host",
            "{host}: {answer}"
        );
    }
    for host in [format!("localhost:{port}"), format!("[::1]:{port}")] {
        let reply = h
            .post_with(init_line().as_bytes(), &[("host", host.as_str())])
            .await;
        assert_eq!(reply.status, 200, "{host}");
        assert_eq!(reply.json()["id"], "init", "{host}");
    }
    server.stop().await;
}

/// Ending a session answers 200 or 204 (the Python SDK takes nothing else), and the
/// session is gone after.
#[tokio::test]
async fn http_deleting_a_session_answers_no_content() {
    let server = http_server().await;
    let h = Http::open(&server.url).await;
    let session = h.session.clone().unwrap();
    let reply = send(
        h.client
            .delete(&h.url)
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", PROTOCOL),
    )
    .await;
    assert!(
        reply.status == 200 || reply.status == 204,
        "{}",
        reply.status
    );
    assert!(reply.body.is_empty() || reply.status == 200);
    let after = h.post(request("1", "ping", "{}").as_bytes()).await;
    assert_eq!(after.status, 404);
    server.stop().await;
}
