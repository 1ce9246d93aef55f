//! Traces and metrics by OpenTelemetry, read back by software nobody on the team wrote:
//! an OTLP receiver decoding with the official protobuf definitions
//! (tests/otel/receiver.py), Arize Phoenix, and an agent instrumented by Traceloop's
//! MCP instrumentation (tests/otel/agent.py). The server, `client` and the tap send
//! spans by the MCP conventions; a call explains itself in child spans; the trace
//! context in `_meta` makes the agent's span the parent; an unreachable collector
//! costs no call anything.

mod support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::agent::{Agent, BIN, until};
use support::otel::{self, Collector, descends, named, names};

/// The agent's span, as a W3C `traceparent` the requests carry.
const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT: &str = "00f067aa0ba902b7";

fn traceparent() -> String {
    format!("00-{TRACE}-{PARENT}-01")
}

/// The `_meta` of a 2026-07-28 request, with the agent's trace context.
fn meta_2026() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "otel-test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
        "traceparent": traceparent(),
    })
}

/// The attribute `key` of `span`.
fn attr<'a>(span: &'a Value, key: &str) -> &'a Value {
    &span["attributes"][key]
}

/// Asks `agent` for `message` and waits for the answer with its id.
fn ask(agent: &mut Agent, message: Value) -> Value {
    let id = message["id"].clone();
    agent.send(message);
    until(&agent.out, "an answer", |v| v["id"] == id)
        .pop()
        .unwrap_or_default()
}

fn server_args(collector: &Collector) -> Vec<String> {
    [
        "--headless",
        "--log-level",
        "warn",
        "--otlp",
        &collector.url,
    ]
    .iter()
    .map(|s| (*s).to_string())
    .collect()
}

#[test]
fn stdio_requests_are_server_spans_by_the_conventions_under_the_agents_parent() {
    let Some(python) = otel::python() else { return };
    let dir = otel::scratch("stdio");
    let collector = Collector::start(&python, &dir);
    let log = dir.join("session.jsonl");
    let mut args = server_args(&collector);
    args.extend(["--record".to_string(), log.display().to_string()]);
    // A world whose list of players is too big for one answer.
    args.extend(["--world-size".to_string(), "200".to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (mut agent, _err) = Agent::start_stateless(&args, &dir);
    let init = ask(
        &mut agent,
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "otel-test", "version": "1"}}}),
    );
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    agent.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let call = |id: u64, tool: &str, args: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": tool, "arguments": args, "_meta": {"traceparent": traceparent()}}})
    };
    let ok = ask(
        &mut agent,
        call(1, "structs_query_player", json!({"player_id": "1-1"})),
    );
    assert_eq!(ok["result"]["isError"], json!(false), "{ok}");
    let failed = ask(
        &mut agent,
        call(2, "structs_query_player", json!({"player_id": "1-999"})),
    );
    assert_eq!(failed["result"]["isError"], json!(true), "{failed}");
    let unknown = ask(&mut agent, call(3, "no_such_tool", json!({})));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    let prompt = ask(
        &mut agent,
        json!({"jsonrpc": "2.0", "id": 4, "method": "prompts/get",
               "params": {"name": "brief", "arguments": {"entity_id": "1-1"}}}),
    );
    assert!(prompt["result"]["messages"].is_array(), "{prompt}");
    let read = ask(
        &mut agent,
        json!({"jsonrpc": "2.0", "id": 5, "method": "resources/read",
               "params": {"uri": "structs://docs/overview"}}),
    );
    assert!(read["result"]["contents"].is_array(), "{read}");
    // A result over the limit goes to the handle store, whose size is a metric.
    let big = ask(
        &mut agent,
        call(6, "structs_list_players", json!({"page_size": 100})),
    );
    assert!(
        big["result"]["structuredContent"]["result_handle"].is_string(),
        "{big}"
    );
    assert!(agent.finish().success());

    // Spans leave at exit at the latest.
    let spans = collector.spans_when("the five requests' spans", |s| {
        s.iter().filter(|s| s["kind"] == "SERVER").count() >= 6
    });
    let servers: Vec<&Value> = spans.iter().filter(|s| s["kind"] == "SERVER").collect();
    for s in &servers {
        assert_eq!(attr(s, "network.transport"), "pipe", "{s}");
        assert_eq!(attr(s, "mcp.protocol.version"), "2025-11-25", "{s}");
        assert!(
            attr(s, "mcp.session.id").is_null(),
            "stdio has no session id: {s}"
        );
        assert_eq!(s["resource"]["service.name"], "structs-console");
    }
    let init = named(&spans, "initialize");
    assert_eq!(attr(init, "jsonrpc.request.id"), "0");
    // The calls carried the agent's context: each is its child, in its trace.
    let calls: Vec<&&Value> = servers
        .iter()
        .filter(|s| s["name"] == "tools/call structs_query_player")
        .collect();
    assert_eq!(calls.len(), 2, "{:?}", names(&spans));
    for c in &calls {
        assert_eq!(
            (c["trace_id"].as_str(), c["parent_span_id"].as_str()),
            (Some(TRACE), Some(PARENT))
        );
        assert_eq!(attr(c, "mcp.method.name"), "tools/call");
        assert_eq!(attr(c, "gen_ai.tool.name"), "structs_query_player");
        assert_eq!(attr(c, "gen_ai.operation.name"), "execute_tool");
    }
    let by_id = |id: &str| {
        servers
            .iter()
            .find(|s| attr(s, "jsonrpc.request.id") == id)
            .unwrap_or_else(|| panic!("no span of request {id}"))
    };
    assert_eq!(by_id("1")["status"], "UNSET");
    assert!(attr(by_id("1"), "error.type").is_null());
    assert_eq!(attr(by_id("2"), "error.type"), "tool_error");
    assert_eq!(by_id("2")["status"], "ERROR");
    assert_eq!(by_id("3")["name"], "tools/call no_such_tool");
    assert_eq!(attr(by_id("3"), "error.type"), "-32602");
    assert_eq!(attr(by_id("3"), "rpc.response.status_code"), "-32602");
    assert_eq!(by_id("4")["name"], "prompts/get brief");
    assert_eq!(attr(by_id("4"), "gen_ai.prompt.name"), "brief");
    assert_eq!(by_id("5")["name"], "resources/read");
    assert_eq!(
        attr(by_id("5"), "mcp.resource.uri"),
        "structs://docs/overview"
    );
    // The session log's lines of a call name its trace and the span they were written in.
    let lines: Vec<Value> = std::fs::read_to_string(&log)
        .expect("the session log")
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let recorded: Vec<&Value> = lines
        .iter()
        .filter(|l| l["call"] == 1 && (l["type"] == "request" || l["type"] == "response"))
        .collect();
    assert_eq!(recorded.len(), 2, "{lines:#?}");
    let call_spans: Vec<&Value> = spans.iter().filter(|s| s["trace_id"] == TRACE).collect();
    for line in recorded {
        assert_eq!(line["trace_id"], TRACE, "{line}");
        assert!(
            call_spans.iter().any(|s| s["span_id"] == line["span_id"]),
            "the line's span was exported: {line}"
        );
    }
    // The tool's run is a child of its call.
    let run = spans
        .iter()
        .find(|s| {
            s["name"] == "run structs_query_player" && s["parent_span_id"] == by_id("1")["span_id"]
        })
        .unwrap_or_else(|| panic!("no run span under call 1: {:?}", names(&spans)));
    assert_eq!(run["kind"], "INTERNAL");

    // The duration metric, with the same attributes.
    let deadline = Instant::now() + Duration::from_secs(20);
    let points = loop {
        let points: Vec<Value> = collector
            .metrics()
            .into_iter()
            .filter(|m| m["name"] == "mcp.server.operation.duration")
            .collect();
        if points.iter().any(|p| attr(p, "error.type") == "tool_error") || Instant::now() > deadline
        {
            break points;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let failed = points
        .iter()
        .find(|p| attr(p, "error.type") == "tool_error")
        .unwrap_or_else(|| panic!("no point of the failed call: {points:#?}"));
    assert_eq!(failed["type"], "histogram");
    assert_eq!(failed["unit"], "s");
    assert_eq!(attr(failed, "gen_ai.tool.name"), "structs_query_player");
    assert_eq!(attr(failed, "network.transport"), "pipe");
    assert!(failed["count"].as_u64() >= Some(1));
    assert_eq!(failed["bounds"][0], 0.01);
    // A stdio connection is one session, its length sent at its end.
    let all = collector.metrics();
    let session = all
        .iter()
        .find(|m| m["name"] == "mcp.server.session.duration")
        .unwrap_or_else(|| panic!("no session duration: {all:#?}"));
    assert_eq!(attr(session, "network.transport"), "pipe");
    assert_eq!(session["count"], 1, "{session}");
    // What the handle store holds: the big result's JSON, at least.
    let held = all
        .iter()
        .find(|m| m["name"] == "structs.store.bytes")
        .unwrap_or_else(|| panic!("no store size: {all:#?}"));
    assert_eq!(attr(held, "structs.store"), "memory");
    assert!(held["value"].as_f64() > Some(25_000.0), "{held}");
}

/// Posts one JSON-RPC request to `url` and returns the answer (the JSON body, or the
/// `data:` frame with an id), with the headers a 2026-07-28 request carries.
fn post(url: &str, body: &Value, session: Option<&str>) -> (Value, Option<String>) {
    let method = body["method"].as_str().unwrap_or_default();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::blocking::Client::new();
    let mut request = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-method", method);
    let version = body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]
        .as_str()
        .unwrap_or("2025-11-25");
    request = request.header("mcp-protocol-version", version);
    if let Some(name) = body["params"]["name"].as_str() {
        request = request.header("mcp-name", name);
    }
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    let response = request.json(body).send().expect("the server answers");
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let text = response.text().unwrap_or_default();
    let answer = serde_json::from_str(&text).ok().unwrap_or_else(|| {
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .find(|v| v.get("id").is_some())
            .unwrap_or_default()
    });
    (answer, session)
}

/// A server the test started: killed when dropped (a failed test leaves none behind).
struct Running(std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The binary the HTTP server runs: `STRUCTS_RELEASE_BIN` when given (the release
/// build, as a user runs it), else the test's own.
fn server_bin() -> String {
    std::env::var("STRUCTS_RELEASE_BIN").unwrap_or_else(|_| BIN.to_string())
}

/// The headless server over HTTP with traces on, its URL, and the process.
fn http_server(otlp: &str, more: &[&str]) -> (Running, String) {
    let mut child = Command::new(server_bin())
        .args(["--headless", "--http", "127.0.0.1:0", "--log-level", "warn"])
        .args(["--otlp", otlp])
        .args(more)
        .env_remove("STRUCTS_CONSOLE_AUTH_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the HTTP server");
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().expect("stdout")),
        &mut line,
    )
    .expect("its address");
    let url = line
        .trim()
        .strip_prefix("serving MCP over HTTP at ")
        .unwrap_or_else(|| panic!("unexpected {line:?}"))
        .to_string();
    (Running(child), url)
}

/// Stops a server as Ctrl-C does, so that it sends what it holds.
fn interrupt(mut server: Running) {
    let child = &mut server.0;
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().ok().flatten().is_none() {
        assert!(Instant::now() < deadline, "the server did not stop");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn over_http_a_session_call_names_its_session_and_a_stateless_one_never_does() {
    let Some(python) = otel::python() else { return };
    let dir = otel::scratch("http");
    let collector = Collector::start(&python, &dir);
    let (server, url) = http_server(&collector.url, &[]);
    // 2025-11-25: a session.
    let (init, session) = post(
        &url,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "otel-test", "version": "1"}}}),
        None,
    );
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
    let session = session.expect("a session id");
    post(
        &url,
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        Some(&session),
    );
    let (called, _) = post(
        &url,
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "structs_query_player", "arguments": {"player_id": "1-2"},
            "_meta": {"traceparent": traceparent()}}}),
        Some(&session),
    );
    assert_eq!(called["result"]["isError"], false, "{called}");
    // 2026-07-28: stateless.
    let (stateless, _) = post(
        &url,
        &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "structs_query_player", "arguments": {"player_id": "1-3"},
            "_meta": meta_2026()}}),
        None,
    );
    assert_eq!(stateless["result"]["isError"], false, "{stateless}");
    interrupt(server);
    let spans = collector.spans_when("both calls", |s| {
        s.iter()
            .filter(|s| s["name"] == "tools/call structs_query_player")
            .count()
            >= 2
    });
    let calls: Vec<&Value> = spans
        .iter()
        .filter(|s| s["name"] == "tools/call structs_query_player")
        .collect();
    let of = |version: &str| {
        calls
            .iter()
            .find(|s| attr(s, "mcp.protocol.version") == version)
            .unwrap_or_else(|| panic!("no {version} call among {calls:#?}"))
    };
    let old = of("2025-11-25");
    assert_eq!(attr(old, "mcp.session.id"), session.as_str());
    assert_eq!(attr(old, "network.transport"), "tcp");
    assert_eq!(old["kind"], "SERVER");
    let new = of("2026-07-28");
    assert!(attr(new, "mcp.session.id").is_null(), "{new}");
    assert_eq!(attr(new, "network.transport"), "tcp");
    for c in [old, new] {
        assert_eq!(
            (c["trace_id"].as_str(), c["parent_span_id"].as_str()),
            (Some(TRACE), Some(PARENT))
        );
    }
}

#[test]
fn client_sends_its_span_in_meta_and_the_server_span_is_its_child() {
    let Some(python) = otel::python() else { return };
    let dir = otel::scratch("client");
    let collector = Collector::start(&python, &dir);
    let (server, url) = http_server(&collector.url, &[]);
    let out = Command::new(BIN)
        .args(["client", "--connect", &url, "--otlp", &collector.url])
        // A 2025-11-25 session, whose length each side measures.
        .args(["--protocol-version", "2025-11-25"])
        .args([
            "call",
            "structs_query_player",
            "--args",
            r#"{"player_id": "1-1"}"#,
        ])
        .env_remove("STRUCTS_CONSOLE_AUTH_TOKEN")
        .output()
        .expect("run client");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    interrupt(server);
    let spans = collector.spans_when("the client's call and the server's", |s| {
        s.iter()
            .any(|s| s["kind"] == "CLIENT" && s["name"] == "tools/call structs_query_player")
            && s.iter()
                .any(|s| s["kind"] == "SERVER" && s["name"] == "tools/call structs_query_player")
    });
    let client = spans
        .iter()
        .find(|s| s["kind"] == "CLIENT" && s["name"] == "tools/call structs_query_player")
        .unwrap();
    let server = spans
        .iter()
        .find(|s| s["kind"] == "SERVER" && s["name"] == "tools/call structs_query_player")
        .unwrap();
    assert_eq!(server["trace_id"], client["trace_id"]);
    assert_eq!(server["parent_span_id"], client["span_id"]);
    assert_eq!(attr(client, "network.transport"), "tcp");
    assert_eq!(attr(client, "gen_ai.tool.name"), "structs_query_player");
    assert!(attr(client, "jsonrpc.request.id").is_string());
    // The client's duration metric, sent as it exited.
    let point = collector
        .metrics()
        .into_iter()
        .find(|m| {
            m["name"] == "mcp.client.operation.duration"
                && attr(m, "gen_ai.tool.name") == "structs_query_player"
        })
        .unwrap_or_else(|| panic!("no client duration: {:#?}", collector.metrics()));
    assert_eq!(point["type"], "histogram");
    assert!(point["count"].as_u64() >= Some(1));
    // The session's length, from the client as it closed and from the server as the
    // client ended it.
    let all = collector.metrics();
    for name in ["mcp.client.session.duration", "mcp.server.session.duration"] {
        let session = all
            .iter()
            .find(|m| m["name"] == name)
            .unwrap_or_else(|| panic!("no {name}: {all:#?}"));
        assert_eq!(session["type"], "histogram");
        assert_eq!(attr(session, "network.transport"), "tcp", "{session}");
        assert_eq!(session["count"], 1, "{session}");
    }
}

/// Runs tests/otel/agent.py against `how` (`stdio COMMAND…` or `http URL`), its spans
/// to `collector`; returns the trace id and its turn's span id.
fn instrumented_agent(python: &Path, collector: &Collector, how: &[&str]) -> (String, String) {
    let out = Command::new(python)
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/otel/agent.py"))
        .arg(&collector.url)
        .args(how)
        .env_remove("STRUCTS_CONSOLE_AUTH_TOKEN")
        .output()
        .expect("run the instrumented agent");
    assert!(
        out.status.success(),
        "the agent failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said: Value = serde_json::from_slice(&out.stdout).expect("the agent's JSON");
    assert_eq!(said["is_error"], false);
    (
        said["trace_id"].as_str().unwrap_or_default().to_string(),
        said["span_id"].as_str().unwrap_or_default().to_string(),
    )
}

/// The agent's tool span (Traceloop's `{tool}.tool`) and the server's call span, in one
/// trace, the second under the first.
fn assert_one_trace(spans: &[Value], trace: &str) -> Vec<Value> {
    let ours: Vec<Value> = spans
        .iter()
        .filter(|s| s["trace_id"] == trace)
        .cloned()
        .collect();
    let tool = named(&ours, "structs_query_player.tool");
    assert_eq!(tool["resource"]["service.name"], "python-agent");
    let server = ours
        .iter()
        .find(|s| s["kind"] == "SERVER" && s["name"] == "tools/call structs_query_player")
        .unwrap_or_else(|| panic!("no server span in the agent's trace: {:?}", names(&ours)));
    assert_eq!(server["resource"]["service.name"], "structs-console");
    assert!(
        descends(&ours, server, tool),
        "the server's span is not under the agent's tool span: {ours:#?}"
    );
    ours
}

#[test]
fn an_agent_instrumented_by_traceloop_is_the_parent_directly_and_through_the_tap() {
    let Some(python) = otel::python() else { return };
    let dir = otel::scratch("traceloop");
    let collector = Collector::start(&python, &dir);
    // Directly over stdio.
    let (trace, _) = instrumented_agent(
        &python,
        &collector,
        &[
            "stdio",
            BIN,
            "--headless",
            "--log-level",
            "warn",
            "--otlp",
            &collector.url,
        ],
    );
    let spans = collector.spans_when("the agent's and the server's spans", |s| {
        s.iter().filter(|s| s["trace_id"] == trace.as_str()).count() >= 3
            && s.iter()
                .any(|s| s["trace_id"] == trace.as_str() && s["kind"] == "SERVER")
    });
    assert_one_trace(&spans, &trace);

    // Through the tap: its CLIENT span passes the agent's context on unchanged, so the
    // server's span is still under the agent's, and the tap's is beside it.
    let (trace, _) = instrumented_agent(
        &python,
        &collector,
        &[
            "stdio",
            BIN,
            "proxy",
            "--otlp",
            &collector.url,
            "--",
            BIN,
            "--headless",
            "--log-level",
            "warn",
            "--otlp",
            &collector.url,
        ],
    );
    let spans = collector.spans_when("the tap's spans", |s| {
        s.iter()
            .any(|s| s["trace_id"] == trace.as_str() && s["kind"] == "CLIENT")
            && s.iter().any(|s| {
                s["trace_id"] == trace.as_str()
                    && s["kind"] == "SERVER"
                    && s["name"] == "tools/call structs_query_player"
            })
    });
    let ours = assert_one_trace(&spans, &trace);
    let tap = ours
        .iter()
        .find(|s| s["kind"] == "CLIENT" && s["name"] == "tools/call structs_query_player")
        .unwrap_or_else(|| panic!("no tap span: {:?}", names(&ours)));
    let tool = named(&ours, "structs_query_player.tool");
    assert!(
        descends(&ours, tap, tool),
        "the tap's span is under the agent's"
    );
    assert_eq!(attr(tap, "network.transport"), "pipe");
}

#[test]
fn the_tap_writes_its_own_context_where_the_host_sent_none() {
    let Some(python) = otel::python() else { return };
    let dir = otel::scratch("tap");
    let collector = Collector::start(&python, &dir);
    let args = [
        "proxy",
        "--otlp",
        &collector.url,
        "--",
        BIN,
        "--headless",
        "--log-level",
        "warn",
        "--otlp",
        &collector.url,
    ];
    let (mut agent, _err) = Agent::start(&args, &dir);
    let answer = ask(
        &mut agent,
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "structs_query_player", "arguments": {"player_id": "1-1"}}}),
    );
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert!(agent.finish().success());
    let spans = collector.spans_when("the tap's span and the server's", |s| {
        s.iter()
            .any(|s| s["kind"] == "CLIENT" && s["name"] == "tools/call structs_query_player")
            && s.iter()
                .any(|s| s["kind"] == "SERVER" && s["name"] == "tools/call structs_query_player")
    });
    let tap = spans
        .iter()
        .find(|s| s["kind"] == "CLIENT" && s["name"] == "tools/call structs_query_player")
        .unwrap();
    let server = spans
        .iter()
        .find(|s| s["kind"] == "SERVER" && s["name"] == "tools/call structs_query_player")
        .unwrap();
    assert_eq!(
        server["parent_span_id"], tap["span_id"],
        "the tap's span is the parent"
    );
    assert_eq!(server["trace_id"], tap["trace_id"]);
}

#[test]
fn an_unreachable_collector_never_fails_a_call_and_is_said_once() {
    // A port nothing listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let dir = otel::scratch("unreachable");
    let (mut agent, err) = Agent::start(&["--headless", "--otlp", &url], &dir);
    for id in 1..=200u64 {
        let answer = ask(
            &mut agent,
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
                "name": "structs_query_player", "arguments": {"player_id": "1-1"}}}),
        );
        assert_eq!(answer["result"]["isError"], false, "call {id}: {answer}");
    }
    assert!(agent.finish().success());
    let lines: Vec<String> = err.try_iter().collect();
    let said = lines
        .iter()
        .filter(|l| l.contains("traces cannot be sent"))
        .count();
    assert_eq!(said, 1, "said once: {lines:#?}");
    let total = lines
        .iter()
        .find(|l| l.contains("telemetry dropped in all"))
        .unwrap_or_else(|| panic!("no total: {lines:#?}"));
    // 200 calls and the handshake, each a server span and a run span at least.
    let spans: u64 = total
        .split("spans=")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count in {total}"));
    assert!(spans >= 401, "{total}");
}

/// `serve-rest` on a free port: the embedded world over the chain's REST paths.
fn serve_rest() -> (Running, String) {
    let mut child = Command::new(BIN)
        .args([
            "serve-rest",
            "--listen",
            "127.0.0.1:0",
            "--paused",
            "--log-level",
            "warn",
        ])
        .env_remove("STRUCTS_CONSOLE_AUTH_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start serve-rest");
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().expect("stdout")),
        &mut line,
    )
    .expect("its address");
    let url = line
        .trim()
        .rsplit(' ')
        .next()
        .unwrap_or_default()
        .to_string();
    assert!(url.starts_with("http://127.0.0.1:"), "{line:?}");
    (Running(child), url)
}

/// A Phoenix span's parent, and its id.
/// Spans as an indented tree, children under their parent in start order, each with
/// its kind and a few attributes.
fn tree(spans: &[Value]) -> String {
    fn walk(spans: &[Value], of: &str, depth: usize, out: &mut String) {
        let mut children: Vec<&Value> = spans.iter().filter(|s| parent(s) == of).collect();
        children.sort_by_key(|s| s["start_time"].as_str().unwrap_or_default().to_string());
        for s in children {
            let attrs = &s["attributes"];
            let notes: Vec<String> = [
                "gen_ai.tool.name",
                "url.full",
                "db.operation.name",
                "structs.reference.id",
                "structs.pow.backend",
            ]
            .iter()
            .filter_map(|k| attrs.get(*k).map(|v| format!("{k}={v}")))
            .collect();
            out.push_str(&format!(
                "{}{} [{}] {}\n",
                "  ".repeat(depth),
                s["name"].as_str().unwrap_or("?"),
                s["span_kind"].as_str().unwrap_or("?"),
                notes.join(" ")
            ));
            walk(spans, id(s), depth + 1, out);
        }
    }
    let ids: Vec<&str> = spans.iter().map(id).collect();
    let mut out = String::new();
    let mut roots: Vec<&str> = spans
        .iter()
        .map(parent)
        .filter(|p| !ids.contains(p))
        .collect();
    roots.sort_unstable();
    roots.dedup();
    for root in roots {
        walk(spans, root, 0, &mut out);
    }
    out
}

fn parent(span: &Value) -> &str {
    span["parent_id"].as_str().unwrap_or_default()
}

fn id(span: &Value) -> &str {
    span["context"]["span_id"].as_str().unwrap_or_default()
}

fn children<'a>(spans: &'a [Value], of: &Value, name: &str) -> Vec<&'a Value> {
    spans
        .iter()
        .filter(|s| parent(s) == id(of) && s["name"] == name)
        .collect()
}

fn only<'a>(spans: &'a [Value], of: &Value, name: &str) -> &'a Value {
    let found = children(spans, of, name);
    assert!(
        !found.is_empty(),
        "no {name:?} under {:?}: {:?}",
        of["name"],
        spans
            .iter()
            .map(|s| (s["name"].clone(), parent(s).to_string()))
            .collect::<Vec<_>>()
    );
    found[0]
}

#[test]
fn phoenix_shows_a_call_with_references_from_a_node_and_a_proof_of_work_task_as_trees() {
    let Some(python) = otel::phoenix_python() else {
        return;
    };
    let dir = otel::scratch("phoenix");
    let phoenix = otel::Phoenix::start(&python, &dir);
    let (rest, node) = serve_rest();
    let (server, url) = http_server(&phoenix.url, &["--source", "rest", "--endpoint", &node]);
    // A query whose references are read from the node.
    let call_trace = "0af7651916cd43dd8448eb211c80319c";
    let mut meta = meta_2026();
    meta["traceparent"] = json!(format!("00-{call_trace}-b7ad6b7169203331-01"));
    let (queried, _) = post(
        &url,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "structs_query_player",
            "arguments": {"player_id": "1-1", "include_references": true},
            "_meta": meta}}),
        None,
    );
    assert_eq!(queried["result"]["isError"], false, "{queried}");
    // A proof of work, as a task (the client declares the extension).
    let task_trace = "1bf7651916cd43dd8448eb211c80319d";
    let mut meta = meta_2026();
    meta["traceparent"] = json!(format!("00-{task_trace}-c7ad6b7169203332-01"));
    meta["io.modelcontextprotocol/clientCapabilities"] =
        json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    let (created, _) = post(
        &url,
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "structs_calculate_proof_of_work",
            "arguments": {"action_type": "struct_build_complete", "entity_id": "5-1",
                          "difficulty": 700, "block_start": 1, "age": 600},
            "_meta": meta.clone()}}),
        None,
    );
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let task = created["result"]["taskId"].as_str().unwrap().to_string();
    // Polls of their own traces (each linked to the call that made the task).
    let mut poll_meta = meta.clone();
    poll_meta.as_object_mut().unwrap().remove("traceparent");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (got, _) = post(
            &url,
            &json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/get",
                    "params": {"taskId": task, "_meta": poll_meta.clone()}}),
            None,
        );
        if got["result"]["status"] == "completed" {
            break;
        }
        assert!(Instant::now() < deadline, "the task did not end: {got}");
        std::thread::sleep(Duration::from_millis(200));
    }
    interrupt(server);
    drop(rest);

    // The query: server span → run → references → each fetch → its GET to the node.
    // Phoenix takes spans in as they are exported: the server's span of the call ends
    // (and comes) after those of the work under it.
    let spans = phoenix.trace_when(call_trace, |s| {
        s.iter().filter(|s| s["name"] == "GET").count() >= 2
            && s.iter()
                .any(|s| s["name"] == "tools/call structs_query_player")
    });
    // As Phoenix holds it (`--nocapture` shows it).
    println!("trace {call_trace} in Phoenix:\n{}", tree(&spans));
    let call = spans
        .iter()
        .find(|s| s["name"] == "tools/call structs_query_player")
        .unwrap_or_else(|| panic!("no call span: {spans:#?}"));
    assert_eq!(
        parent(call),
        "b7ad6b7169203331",
        "the agent's span is the parent"
    );
    let attrs = &call["attributes"];
    assert_eq!(attrs["mcp.method.name"], "tools/call");
    assert_eq!(attrs["mcp.protocol.version"], "2026-07-28");
    assert_eq!(attrs["gen_ai.tool.name"], "structs_query_player");
    assert_eq!(attrs["network.transport"], "tcp");
    let run = only(&spans, call, "run structs_query_player");
    // The tool's own read of the player, from the node.
    let read = only(&spans, run, "GET");
    assert_eq!(read["attributes"]["http.request.method"], "GET");
    assert_eq!(read["attributes"]["http.response.status_code"], 200);
    assert!(
        read["attributes"]["url.full"]
            .as_str()
            .unwrap_or_default()
            .starts_with(&node),
        "{read:#}"
    );
    let references = only(&spans, run, "references");
    assert!(references["attributes"]["structs.references.count"].as_i64() >= Some(1));
    let fetches = children(&spans, references, "reference fetch");
    assert!(!fetches.is_empty());
    for fetch in fetches {
        let get = only(&spans, fetch, "GET");
        assert_eq!(get["attributes"]["server.address"], "127.0.0.1");
    }

    // Over gRPC too (OTEL_EXPORTER_OTLP_PROTOCOL=grpc), to Phoenix's gRPC receiver.
    if cfg!(feature = "otlp-grpc") {
        let grpc_trace = "2cf7651916cd43dd8448eb211c80319e";
        let mut agent = Command::new(BIN)
            .args(["--headless", "--log-level", "warn", "--otlp", &phoenix.grpc])
            .env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("a server sending over gRPC");
        {
            use std::io::Write as _;
            let mut stdin = agent.stdin.take().unwrap();
            for message in [
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": {"name": "otel-test", "version": "1"}}}),
                json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                    "name": "structs_query_player", "arguments": {"player_id": "1-1"},
                    "_meta": {"traceparent": format!("00-{grpc_trace}-d7ad6b7169203333-01")}}}),
            ] {
                writeln!(stdin, "{message}").unwrap();
            }
            // The answers, then the end of input.
            let mut lines =
                std::io::BufRead::lines(std::io::BufReader::new(agent.stdout.take().unwrap()));
            let answered = lines.any(|l| l.is_ok_and(|l| l.contains("\"id\":1")));
            assert!(answered, "the call over stdio is answered");
        }
        assert!(agent.wait().unwrap().success());
        let spans = phoenix.trace_when(grpc_trace, |s| !s.is_empty());
        assert_eq!(
            spans[0]["name"], "tools/call structs_query_player",
            "{spans:#?}"
        );
    }

    // The task: the call that made it → the task's work → its run → the search.
    let spans = phoenix.trace_when(task_trace, |s| s.iter().any(|s| s["name"] == "pow search"));
    let call = spans
        .iter()
        .find(|s| s["name"] == "tools/call structs_calculate_proof_of_work")
        .unwrap_or_else(|| panic!("no call span: {spans:#?}"));
    let work = only(&spans, call, "task structs_calculate_proof_of_work");
    let run = only(&spans, work, "run structs_calculate_proof_of_work");
    let search = only(&spans, run, "pow search");
    let a = &search["attributes"];
    assert_eq!(a["structs.pow.outcome"], "found", "{search:#}");
    assert!(a["structs.pow.hashes"].as_i64() > Some(0), "{search:#}");
    assert!(
        a["structs.pow.hash_rate"].as_f64() > Some(0.0),
        "{search:#}"
    );
    assert!(a["structs.pow.backend"].is_string(), "{search:#}");
    assert!(a["structs.pow.difficulty"].as_i64() > Some(0), "{search:#}");
}

#[test]
fn two_servers_behind_haproxy_write_one_trace_and_a_poll_links_to_its_task() {
    let Some(python) = otel::python() else { return };
    let dir = otel::scratch("cluster");
    let collector = Collector::start(&python, &dir);
    let port: u16 = collector
        .url
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("the collector's port");
    let setup = support::cluster::Setup {
        servers: 2,
        balanced: true,
        otlp: Some(port),
        ..support::cluster::Setup::default()
    };
    let Some(mut cluster) = support::cluster::Cluster::start_with(setup) else {
        return;
    };
    let url = cluster.url();
    // One agent turn, its calls spread over both servers by the balancer.
    for n in 1..=6u64 {
        let (answer, _) = post(
            &url,
            &json!({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {
                "name": "structs_query_player", "arguments": {"player_id": format!("1-{n}")},
                "_meta": meta_2026()}}),
            None,
        );
        assert_eq!(answer["result"]["isError"], false, "{answer}");
    }
    // A task, made on one server and polled through the balancer.
    let mut tasks = meta_2026();
    tasks["io.modelcontextprotocol/clientCapabilities"] =
        json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    let (created, _) = post(
        &url,
        &json!({"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {
            "name": "structs_calculate_proof_of_work",
            "arguments": {"action_type": "struct_build_complete", "entity_id": "5-1",
                          "difficulty": 700, "block_start": 1, "age": 600},
            "_meta": tasks.clone()}}),
        None,
    );
    let task = created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no task: {created}"))
        .to_string();
    tasks.as_object_mut().unwrap().remove("traceparent");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (got, _) = post(
            &url,
            &json!({"jsonrpc": "2.0", "id": 11, "method": "tasks/get",
                    "params": {"taskId": task, "_meta": tasks.clone()}}),
            None,
        );
        if got["result"]["status"] == "completed" {
            break;
        }
        assert!(Instant::now() < deadline, "the task did not end: {got}");
        std::thread::sleep(Duration::from_millis(200));
    }
    for i in 0..2 {
        cluster.stop(i);
    }
    let spans = collector.spans_when("both servers' spans and the polls", |s| {
        s.iter().any(|s| s["name"] == "tasks/get")
            && s.iter()
                .filter(|s| s["name"] == "tools/call structs_query_player")
                .count()
                >= 6
    });
    let calls: Vec<&Value> = spans
        .iter()
        .filter(|s| s["name"] == "tools/call structs_query_player")
        .collect();
    let mut servers: Vec<&str> = calls
        .iter()
        .map(|c| {
            c["resource"]["service.instance.id"]
                .as_str()
                .unwrap_or_default()
        })
        .collect();
    servers.sort_unstable();
    servers.dedup();
    assert_eq!(servers, ["server0", "server1"], "both servers answered");
    for c in &calls {
        assert_eq!(
            (c["trace_id"].as_str(), c["parent_span_id"].as_str()),
            (Some(TRACE), Some(PARENT))
        );
    }
    // Each call read the node: a GET under it, by the HTTP client conventions.
    let gets = spans
        .iter()
        .filter(|s| s["name"] == "GET" && s["trace_id"] == TRACE && s["kind"] == "CLIENT")
        .count();
    assert!(gets >= 6, "{:?}", names(&spans));
    // The task's record went to Redis, by the database conventions.
    let made = spans
        .iter()
        .find(|s| s["name"] == "tools/call structs_calculate_proof_of_work")
        .expect("the call that made the task");
    let made_trace = made["trace_id"].as_str().unwrap();
    let put = spans
        .iter()
        .find(|s| s["name"] == "put records" && s["trace_id"] == made_trace)
        .unwrap_or_else(|| panic!("no record written: {:?}", names(&spans)));
    assert_eq!(put["kind"], "CLIENT");
    assert_eq!(attr(put, "db.system.name"), "redis");
    assert_eq!(attr(put, "db.operation.name"), "put");
    assert_eq!(attr(put, "server.address"), "127.0.0.1");
    // The search's rate and the tasks running, as the servers sent them at their end.
    let deadline = Instant::now() + Duration::from_secs(20);
    let metrics = loop {
        let m = collector.metrics();
        let has = |name: &str| m.iter().any(|p| p["name"] == name);
        if (has("structs.pow.hash_rate") && has("structs.tasks.running"))
            || Instant::now() > deadline
        {
            break m;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let rate = metrics
        .iter()
        .find(|p| p["name"] == "structs.pow.hash_rate")
        .unwrap_or_else(|| panic!("no hash rate: {metrics:#?}"));
    assert!(rate["value"].as_f64() > Some(0.0), "{rate}");
    assert!(attr(rate, "structs.pow.backend").is_string());
    let running: Vec<&Value> = metrics
        .iter()
        .filter(|p| p["name"] == "structs.tasks.running")
        .collect();
    assert!(!running.is_empty(), "{metrics:#?}");
    assert!(
        running.iter().all(|p| p["value"] == 0),
        "the task ended: {running:#?}"
    );
    // Every poll is a trace of its own, linked to the call that made the task.
    let polls: Vec<&Value> = spans.iter().filter(|s| s["name"] == "tasks/get").collect();
    for poll in polls {
        assert_ne!(poll["trace_id"], made["trace_id"]);
        assert_eq!(poll["links"][0]["trace_id"], made["trace_id"], "{poll:#}");
        assert_eq!(poll["links"][0]["span_id"], made["span_id"], "{poll:#}");
    }
}

#[test]
fn replay_connect_runs_a_recorded_call_under_a_new_span_linked_to_the_recorded_one() {
    let Some(python) = otel::python() else { return };
    let dir = otel::scratch("replay");
    let collector = Collector::start(&python, &dir);
    let log = dir.join("recorded.jsonl");
    let mut args = server_args(&collector);
    args.extend([
        "--paused".to_string(),
        "--record".to_string(),
        log.display().to_string(),
    ]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (mut agent, _err) = Agent::start(&args, &dir);
    let answer = ask(
        &mut agent,
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "structs_query_player", "arguments": {"player_id": "1-1"},
            "_meta": {"traceparent": traceparent()}}}),
    );
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert!(agent.finish().success());
    let recorded: Value = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|l| l["type"] == "response" && l["tool"] == "structs_query_player")
        .expect("the recorded answer");
    assert_eq!(recorded["trace_id"], TRACE);
    // Run again on a server of its own, traced too.
    let server = format!(
        "{BIN} --headless --paused --log-level warn --otlp {}",
        collector.url
    );
    let out = Command::new(BIN)
        .args([
            "replay",
            &log.display().to_string(),
            "--check",
            "--connect",
            &server,
        ])
        .args(["--otlp", &collector.url, "--log-level", "warn"])
        .output()
        .expect("run replay --check");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let spans = collector.spans_when("the replayed call", |s| {
        s.iter().any(|s| s["name"] == "replay structs_query_player")
            && s.iter()
                .filter(|s| s["name"] == "tools/call structs_query_player")
                .count()
                >= 3
    });
    let replay = named(&spans, "replay structs_query_player");
    assert_ne!(replay["trace_id"], TRACE, "a new trace");
    assert_eq!(replay["links"][0]["trace_id"], TRACE, "{replay:#}");
    assert_eq!(
        replay["links"][0]["span_id"], recorded["span_id"],
        "{replay:#}"
    );
    // Its call to the server, and the server's span, are in the new trace under it.
    let trace = replay["trace_id"].as_str().unwrap();
    let ours: Vec<Value> = spans
        .iter()
        .filter(|s| s["trace_id"] == trace)
        .cloned()
        .collect();
    let client = ours
        .iter()
        .find(|s| s["kind"] == "CLIENT" && s["name"] == "tools/call structs_query_player")
        .unwrap_or_else(|| panic!("no client span: {:?}", names(&ours)));
    let served = ours
        .iter()
        .find(|s| s["kind"] == "SERVER" && s["name"] == "tools/call structs_query_player")
        .unwrap_or_else(|| panic!("no server span: {:?}", names(&ours)));
    assert!(descends(&ours, client, replay));
    assert_eq!(served["parent_span_id"], client["span_id"]);
}

#[test]
fn an_event_a_call_causes_is_published_to_nats_in_the_calls_trace() {
    let Some(python) = otel::python() else { return };
    let Some(nats) = support::nats::NatsServer::start() else {
        return;
    };
    let dir = otel::scratch("nats");
    let collector = Collector::start(&python, &dir);
    let mut args = server_args(&collector);
    args.extend([
        "--paused".to_string(),
        "--publish-events".to_string(),
        nats.url(),
    ]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (mut agent, _err) = Agent::start(&args, &dir);
    let built = ask(
        &mut agent,
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "structs_action_build_struct",
            "arguments": {"player_id": "1-2", "struct_type": 14, "location_type": "planet"},
            "_meta": {"traceparent": traceparent()}}}),
    );
    assert_eq!(built["result"]["isError"], false, "{built}");
    // The publisher sends at its own pace: a moment before the server goes.
    std::thread::sleep(Duration::from_millis(500));
    assert!(agent.finish().success());
    let spans = collector.spans_when("the publish span", |s| {
        s.iter().any(|s| s["kind"] == "PRODUCER")
    });
    let call = spans
        .iter()
        .find(|s| s["name"] == "tools/call structs_action_build_struct")
        .expect("the call's span");
    let publish = spans.iter().find(|s| s["kind"] == "PRODUCER").unwrap();
    assert_eq!(
        publish["trace_id"], TRACE,
        "in the agent's trace: {publish:#}"
    );
    assert!(
        descends(&spans, publish, call),
        "under the call: {publish:#}"
    );
    assert_eq!(attr(publish, "messaging.system"), "nats");
    let subject = attr(publish, "messaging.destination.name")
        .as_str()
        .unwrap_or_default();
    assert!(subject.starts_with("structs."), "{subject}");
    assert_eq!(publish["name"], format!("publish {subject}"));
}

#[test]
fn content_goes_on_the_span_only_when_asked_and_with_its_secrets_hidden() {
    let Some(python) = otel::python() else { return };
    let dir = otel::scratch("content");
    let collector = Collector::start(&python, &dir);
    let secret = "c2VjcmV0LXNpZ25lZC10cmFuc2FjdGlvbg==";
    for content in [false, true] {
        let mut args = server_args(&collector);
        if content {
            args.push("--otlp-content".to_string());
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (mut agent, _err) = Agent::start(&args, &dir);
        // A transaction's bytes are a secret a log never holds; the broadcast fails.
        let answer = ask(
            &mut agent,
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                "name": "structs_query_player",
                "arguments": {"player_id": "1-1", "tx_bytes": secret},
                "_meta": {"traceparent": traceparent()}}}),
        );
        assert!(
            answer.get("result").is_some() || answer.get("error").is_some(),
            "{answer}"
        );
        assert!(agent.finish().success());
    }
    let spans = collector.spans_when("both runs' calls", |s| {
        s.iter()
            .filter(|s| s["name"] == "tools/call structs_query_player")
            .count()
            >= 2
    });
    let calls: Vec<&Value> = spans
        .iter()
        .filter(|s| s["name"] == "tools/call structs_query_player")
        .collect();
    let (with, without): (Vec<&Value>, Vec<&Value>) = calls
        .iter()
        .partition(|s| attr(s, "gen_ai.tool.call.arguments").is_string());
    assert_eq!((with.len(), without.len()), (1, 1), "{calls:#?}");
    assert!(attr(without[0], "gen_ai.tool.call.result").is_null());
    let arguments = attr(with[0], "gen_ai.tool.call.arguments")
        .as_str()
        .unwrap();
    assert!(arguments.contains("\"player_id\":\"1-1\""), "{arguments}");
    assert!(arguments.contains("[redacted"), "{arguments}");
    assert!(!arguments.contains(secret), "{arguments}");
    assert!(attr(with[0], "gen_ai.tool.call.result").is_string());
}

#[test]
fn an_input_round_is_linked_to_the_call_that_asked() {
    let Some(python) = otel::python() else { return };
    let dir = otel::scratch("rounds");
    let collector = Collector::start(&python, &dir);
    let (server, url) = http_server(&collector.url, &["--paused", "--confirm-actions"]);
    let deactivate = json!({"name": "structs_action_submit_transaction", "arguments": {
        "transaction": {"body": {"messages": [
            {"@type": "/structs.structs.MsgStructDeactivate", "structId": "5-1"}]}}}});
    let mut meta = meta_2026();
    meta["io.modelcontextprotocol/clientCapabilities"] = json!({"elicitation": {}});
    let mut params = deactivate.clone();
    params["_meta"] = meta.clone();
    let (asked, _) = post(
        &url,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}),
        None,
    );
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    // The answer comes in a request of its own trace: no.
    let mut params = deactivate;
    meta.as_object_mut().unwrap().remove("traceparent");
    params["_meta"] = meta;
    params["requestState"] = asked["result"]["requestState"].clone();
    params["inputResponses"] = json!({"confirm": {"action": "decline"}});
    let (declined, _) = post(
        &url,
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}),
        None,
    );
    assert_eq!(declined["result"]["isError"], true, "{declined}");
    interrupt(server);
    let spans = collector.spans_when("both rounds", |s| {
        s.iter()
            .filter(|s| s["name"] == "tools/call structs_action_submit_transaction")
            .count()
            >= 2
    });
    let calls: Vec<&Value> = spans
        .iter()
        .filter(|s| s["name"] == "tools/call structs_action_submit_transaction")
        .collect();
    let first = calls
        .iter()
        .find(|s| s["trace_id"] == TRACE)
        .expect("the asking call");
    let second = calls
        .iter()
        .find(|s| s["trace_id"] != TRACE)
        .expect("the answering call");
    assert_eq!(second["links"][0]["trace_id"], TRACE, "{second:#}");
    assert_eq!(
        second["links"][0]["span_id"], first["span_id"],
        "{second:#}"
    );
    // Each round's decision is a span of its own.
    let decisions: Vec<&Value> = spans.iter().filter(|s| s["name"] == "confirm").collect();
    let said: Vec<&Value> = decisions
        .iter()
        .map(|d| attr(d, "structs.confirm.decision"))
        .collect();
    assert!(
        said.contains(&&json!("asked")) && said.contains(&&json!("refused")),
        "{said:?}"
    );
}

#[test]
fn each_plan_step_is_a_span_with_its_tool_call_under_it() {
    let Some(python) = otel::python() else { return };
    let dir = otel::scratch("plan");
    let collector = Collector::start(&python, &dir);
    let args = server_args(&collector);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (mut agent, _err) = Agent::start(&args, &dir);
    let plan = json!({"steps": [
        {"id": "players", "tool": "structs_list_players", "params": {"page_size": 2}},
        {"tool": "structs_query_player",
         "params": {"player_id": "${steps.players.data.players[0].Player.id}"}}
    ]});
    let answer = ask(
        &mut agent,
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "structs_plan_execute", "arguments": plan,
            "_meta": {"traceparent": traceparent()}}}),
    );
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert!(agent.finish().success());
    let spans = collector.spans_when("the plan's steps", |s| {
        s.iter()
            .filter(|s| {
                s["name"]
                    .as_str()
                    .is_some_and(|n| n.starts_with("plan step"))
            })
            .count()
            >= 2
    });
    let call = named(&spans, "tools/call structs_plan_execute");
    for (step, tool) in [(0, "structs_list_players"), (1, "structs_query_player")] {
        let span = named(&spans, &format!("plan step {step} {tool}"));
        assert_eq!(span["trace_id"], TRACE);
        assert!(
            descends(&spans, span, call),
            "step {step} is under the call"
        );
        let run = spans
            .iter()
            .find(|s| {
                s["name"] == format!("execute_tool {tool}")
                    && s["parent_span_id"] == span["span_id"]
            })
            .unwrap_or_else(|| panic!("no tool call under step {step}: {:?}", names(&spans)));
        assert_eq!(attr(run, "gen_ai.operation.name"), "execute_tool");
        assert_eq!(attr(run, "gen_ai.tool.name"), tool);
    }
}
