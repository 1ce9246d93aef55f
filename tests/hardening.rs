//! Hostile input and the limits that protect the server: every registered tool called
//! with a corpus of bad arguments, each answered with a result or a structured error,
//! never a panic or a hang; per-client caps on long work.

mod support;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use structs_console::Core;
use structs_console::context::{CallContext, ClientWork, MAX_POW_PER_CLIENT, Work};
use structs_console::error::ErrorCode;
use structs_console::source::sim::{BlockClock, SimSource, WorldConfig};
use structs_console::{clock::WallClock, core::MAX_ARGUMENT_BYTES};

/// The largest answer the core may give (the handle envelope's limit).
const LIMIT: usize = 25_600;

fn core() -> Core {
    structs_console::assembly::build_with_clock(
        Arc::new(SimSource::new(
            WorldConfig::demo(),
            BlockClock::paused(WorldConfig::DEFAULT_HEIGHT),
        )),
        WallClock::System,
    )
}

/// Values no argument should be able to break the server with.
fn hostile_values() -> Vec<(&'static str, Value)> {
    let mut nested = json!("deep");
    for _ in 0..30 {
        nested = json!([nested]);
    }
    let mut nested_object = json!(1);
    for _ in 0..30 {
        nested_object = json!({ "a": nested_object });
    }
    vec![
        ("null", Value::Null),
        ("true", json!(true)),
        ("zero", json!(0)),
        ("minus one", json!(-1)),
        ("i64 min", json!(i64::MIN)),
        ("u64 max", json!(u64::MAX)),
        ("huge float", json!(1e308)),
        ("tiny float", json!(-1e-308)),
        ("fraction", json!(0.5)),
        ("empty string", json!("")),
        ("long string", json!("x".repeat(200_000))),
        ("unicode", json!("💥\u{0}\u{202e}ünï\u{feff}ℵ")),
        ("path escape", json!("../../../../etc/passwd")),
        ("absolute path", json!("/etc/shadow")),
        ("template", json!("${step[0].data[0].id}")),
        ("shell", json!("$(rm -rf /); `id`")),
        ("negative id", json!("-1-1")),
        ("id overflow", json!("1-18446744073709551616")),
        ("unknown kind", json!("99-1")),
        ("empty array", json!([])),
        ("array of nulls", json!([null, null, null])),
        ("empty object", json!({})),
        ("nested arrays", nested),
        ("nested objects", nested_object),
        ("numbers as strings", json!("1e999")),
    ]
}

/// An id of every kind code, for arguments that name entities.
fn ids_of_every_kind() -> Vec<(&'static str, Value)> {
    const NAMES: [&str; 12] = [
        "id 0-1", "id 1-1", "id 2-1", "id 3-1", "id 4-1", "id 5-1", "id 6-1", "id 7-1", "id 8-1",
        "id 9-1", "id 10-1", "id 11-1",
    ];
    (0..12)
        .map(|k| (NAMES[k], json!(format!("{k}-1"))))
        .chain([
            ("id 1-0", json!("1-0")),
            ("id 5-999999999", json!("5-999999999")),
        ])
        .collect()
}

/// A plausible value for a required property, so that the hostile one set beside it
/// gets past "missing field" to the tool itself.
fn plausible(prop: &Value) -> Value {
    if let Some(v) = prop.get("default") {
        return v.clone();
    }
    if let Some(first) = prop
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    match prop.get("type").and_then(Value::as_str) {
        Some("integer") | Some("number") => json!(1),
        Some("boolean") => json!(false),
        Some("array") => json!([]),
        Some("object") => json!({}),
        _ => json!("1-1"),
    }
}

/// The argument sets to try on a tool: whole-argument garbage, then each property in
/// turn set to each hostile value (ids of every kind for properties that name
/// entities), with the required properties filled plausibly.
fn cases_for(schema: &Value) -> Vec<(String, Value)> {
    let mut cases = vec![
        ("arguments: an array".to_string(), json!([1, 2])),
        ("arguments: a string".to_string(), json!("structs")),
        ("arguments: a number".to_string(), json!(7)),
        (
            "arguments: unknown field".to_string(),
            json!({"no_such_argument": 1}),
        ),
        (
            "arguments: over the size limit".to_string(),
            json!({"blob": "y".repeat(MAX_ARGUMENT_BYTES + 1)}),
        ),
    ];
    let props = schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let required: Vec<String> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    let base: Map<String, Value> = required
        .iter()
        .filter_map(|name| props.get(name).map(|p| (name.clone(), plausible(p))))
        .collect();
    for (name, _prop) in &props {
        let mut values = hostile_values();
        if name.ends_with("id") || name.ends_with("_ids") || name.contains("entity") {
            values.extend(ids_of_every_kind());
        }
        for (label, value) in values {
            let mut args = base.clone();
            args.insert(name.clone(), value);
            cases.push((format!("{name}: {label}"), Value::Object(args)));
        }
    }
    cases
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_survives_hostile_arguments() {
    let core = core();
    let tools: Vec<(&'static str, Value)> = core
        .tools()
        .map(|t| (t.name, t.input_schema.clone()))
        .collect();
    let mut survived: BTreeMap<&str, usize> = BTreeMap::new();
    let mut panics = Vec::new();
    for (tool, schema) in &tools {
        for (label, args) in cases_for(schema) {
            let ctx = CallContext::new();
            let call = core.call_with(tool, args, ctx.clone());
            let answer = match tokio::time::timeout(Duration::from_secs(10), call).await {
                Ok(answer) => answer,
                Err(_) => {
                    // Long work is allowed if it stops when asked to.
                    ctx.cancel();
                    panic!("{tool} with {label}: no answer within 10 s");
                }
            };
            match answer {
                Ok(v) => {
                    let size = serde_json::to_vec(&v).unwrap().len();
                    assert!(size <= LIMIT, "{tool} with {label}: {size} bytes");
                }
                Err(e) => {
                    let wire = e.to_json("t");
                    assert!(wire["error"]["code"].is_string(), "{tool} with {label}");
                    // An error is an answer too: within the limit, its echoes cut.
                    let size = serde_json::to_vec(&wire).unwrap().len();
                    assert!(size <= LIMIT, "{tool} with {label}: a {size}-byte error");
                    assert!(
                        e.message.chars().count() <= 2_100,
                        "{tool} with {label}: a message of {} characters",
                        e.message.chars().count()
                    );
                    assert!(!e.message.is_empty(), "{tool} with {label}");
                    // The core turns a panic into this code with "failed unexpectedly".
                    if e.code == ErrorCode::ToolExecutionFailed
                        && e.message.contains("failed unexpectedly")
                    {
                        panics.push(format!("{tool} with {label}: {}", e.message));
                    }
                }
            }
            *survived.entry(tool).or_default() += 1;
        }
    }
    assert!(panics.is_empty(), "tools panicked:\n{}", panics.join("\n"));
    // The server still answers afterwards.
    let v = core
        .call("structs_validate_entity_id", json!({"id": "1-1"}))
        .await
        .unwrap();
    assert_eq!(v["valid"], true);
    let total: usize = survived.values().sum();
    println!("hostile cases survived, by tool ({total} in all):");
    for (tool, n) in &survived {
        println!("  {tool:<48} {n}");
    }
    assert_eq!(survived.len(), tools.len());
    assert!(survived.values().all(|n| *n >= 5));
}

/// A proof-of-work call that waits for a difficulty the paused clock never brings, so
/// it holds its slot without hashing.
fn waiting_pow() -> Value {
    json!({"action_type": "struct_build_complete", "entity_id": "5-1",
           "block_start": WorldConfig::DEFAULT_HEIGHT, "wait_for_difficulty": 2})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_may_run_only_so_many_proof_of_work_searches_at_once() {
    let core = core();
    let work = Arc::new(ClientWork::default());
    let mut running = Vec::new();
    for _ in 0..MAX_POW_PER_CLIENT {
        let ctx = CallContext::new().with_work(work.clone());
        let call = tokio::spawn({
            let (core, ctx) = (core.clone(), ctx.clone());
            async move {
                core.call_with("structs_calculate_proof_of_work", waiting_pow(), ctx)
                    .await
            }
        });
        running.push((ctx, call));
    }
    let until = tokio::time::Instant::now() + Duration::from_secs(10);
    while work.running(Work::ProofOfWork) < MAX_POW_PER_CLIENT {
        assert!(
            tokio::time::Instant::now() < until,
            "the searches never started"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // One more from the same client is refused, saying why.
    let e = core
        .call_with(
            "structs_calculate_proof_of_work",
            waiting_pow(),
            CallContext::new().with_work(work.clone()),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::RateLimitExceeded);
    assert_eq!(e.extra["limit"], MAX_POW_PER_CLIENT);
    assert_eq!(e.extra["work"], "proof_of_work");
    assert!(
        e.message.contains("proof-of-work searches"),
        "{}",
        e.message
    );
    // Another client is not held back by this one.
    let other = CallContext::new().with_work(Arc::new(ClientWork::default()));
    let theirs = tokio::spawn({
        let (core, other) = (core.clone(), other.clone());
        async move {
            core.call_with("structs_calculate_proof_of_work", waiting_pow(), other)
                .await
        }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        !theirs.is_finished(),
        "the other client's search was refused"
    );
    other.cancel();
    assert_eq!(
        theirs.await.unwrap().unwrap_err().code,
        ErrorCode::ToolCancelled
    );
    // A search that ends gives its slot back.
    let (ctx, call) = running.pop().unwrap();
    ctx.cancel();
    assert_eq!(
        call.await.unwrap().unwrap_err().code,
        ErrorCode::ToolCancelled
    );
    assert_eq!(work.running(Work::ProofOfWork), MAX_POW_PER_CLIENT - 1);
    for (ctx, call) in running {
        ctx.cancel();
        let _ = call.await;
    }
    assert_eq!(work.running(Work::ProofOfWork), 0);
}

#[tokio::test]
async fn a_client_may_run_only_so_many_plans_at_once() {
    let core = core();
    let work = Arc::new(ClientWork::default());
    let held: Vec<_> = (0..Work::Plan.limit())
        .map(|_| work.start(Work::Plan).unwrap())
        .collect();
    let plan = json!({"steps": [{"id": "h", "tool": "structs_query_block_height", "params": {}}]});
    let ctx = CallContext::new().with_work(work.clone());
    let e = core
        .call_with("structs_plan_execute", plan.clone(), ctx.clone())
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::RateLimitExceeded);
    assert_eq!(e.extra["work"], "plan");
    let e = core
        .call_with(
            "structs_workflow_execute",
            json!({"workflow": "query-and-monitor-planet", "inputs": {"planet_id": "2-1"}}),
            ctx.clone(),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::RateLimitExceeded, "{e}");
    drop(held);
    let v = core
        .call_with("structs_plan_execute", plan, ctx)
        .await
        .unwrap();
    assert_eq!(v["steps"][0]["status"], "succeeded", "{v:#}");
    assert_eq!(work.running(Work::Plan), 0);
}

/// A fresh path in the temporary directory, for one test's files.
fn scratch(name: &str) -> std::path::PathBuf {
    let path =
        std::env::temp_dir().join(format!("structs-hardening-{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

/// The headless binary over stdio with `args`, its logs at debug level in `log`.
async fn headless_stdio(
    args: &[&str],
    log: &std::path::Path,
) -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
    use rmcp::ServiceExt;
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_structs-console"));
    cmd.args([
        "--headless",
        "--paused",
        "--log-level",
        "debug",
        "--log-file",
    ])
    .arg(log)
    .args(args);
    let transport = rmcp::transport::TokioChildProcess::new(cmd).expect("spawn the server");
    ().serve(transport).await.expect("initialize")
}

/// The headless binary over stdio with its three streams piped to the test, which
/// speaks JSON-RPC to it byte by byte.
fn headless_pipes() -> tokio::process::Child {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_structs-console"))
        .args(["--headless", "--paused", "--log-level", "warn"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn the server")
}

async fn call(
    client: &rmcp::service::RunningService<rmcp::RoleClient, ()>,
    tool: &'static str,
    args: Value,
) -> rmcp::model::CallToolResult {
    let Value::Object(arguments) = args else {
        panic!("arguments must be an object")
    };
    client
        .call_tool(rmcp::model::CallToolRequestParams::new(tool).with_arguments(arguments))
        .await
        .expect("the server answers")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_log_on_a_full_disk_is_reported_and_the_server_keeps_serving() {
    let full = std::path::Path::new("/dev/full");
    assert!(full.exists(), "/dev/full simulates a full disk");
    let log = scratch("full-disk.log");
    // tx_bytes that must never reach a log, whatever the level.
    let secret = "U0VDUkVULXR4LWJ5dGVzLW5ldmVyLWxvZ2dlZA==";
    let client = headless_stdio(&["--record", "/dev/full"], &log).await;
    for _ in 0..3 {
        let r = call(&client, "structs_validate_entity_id", json!({"id": "1-1"})).await;
        assert_ne!(r.is_error, Some(true));
        assert_eq!(r.structured_content.unwrap()["valid"], true);
    }
    let r = call(
        &client,
        "structs_action_submit_transaction",
        json!({"tx_bytes": secret}),
    )
    .await;
    // Answered (the sim's answer to bytes it cannot apply), whatever it says.
    assert!(r.structured_content.is_some());
    client.cancel().await.unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.contains("cannot write the session log"),
        "the failure is reported:\n{text}"
    );
    assert_eq!(
        text.matches("cannot write the session log").count(),
        1,
        "once, not for every line"
    );
    assert!(!text.contains(secret), "tx bytes were logged:\n{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_never_reach_the_logs_even_at_trace_level() {
    use support::mcp_http;
    let log = scratch("tokens.log");
    let token = "the-real-token-0123456789";
    let wrong = "a-wrong-token-9876543210";
    let log_arg = log.to_str().unwrap();
    let server = mcp_http::Headless::start(
        &["--paused", "--log-level", "trace", "--log-file", log_arg],
        &[("STRUCTS_CONSOLE_AUTH_TOKEN", token)],
    )
    .await;
    let client = mcp_http::connect(&server.url, Some(token)).await.unwrap();
    let v = client
        .call_tool(
            rmcp::model::CallToolRequestParams::new("structs_validate_entity_id")
                .with_arguments(json!({"id": "2-1"}).as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    assert_eq!(v.structured_content.unwrap()["valid"], true);
    assert!(mcp_http::connect(&server.url, Some(wrong)).await.is_err());
    client.cancel().await.unwrap();
    server.stop().await;
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("refused an HTTP request"), "{text}");
    assert!(!text.contains(token), "the token was logged");
    assert!(!text.contains(wrong), "a wrong token was logged");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arbitrary_bytes_on_stdin_never_crash_the_headless_server() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let handshake = concat!(
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "\n"
    );
    let mut lcg: u64 = 7;
    let noise: Vec<u8> = (0..50_000)
        .map(|_| {
            lcg = lcg.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (lcg >> 56) as u8
        })
        .collect();
    let inputs: Vec<(&str, Vec<u8>)> = vec![
        ("noise before the handshake", noise.clone()),
        ("noise after it", [handshake.as_bytes(), &noise].concat()),
        (
            "a 5 MB line",
            [handshake.as_bytes(), "[".repeat(5 << 20).as_bytes(), b"\n"].concat(),
        ),
        (
            "wrong shapes",
            [
                handshake.as_bytes(),
                br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[]}
{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}
{"jsonrpc":"1.0","id":2,"method":"tools/call","params":{"name":7}}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"structs_query_entity","arguments":"1-1"}}
{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"structs://handles/../../etc/passwd"}}
{"jsonrpc":"2.0","id":5,"method":"no/such/method"}
"#,
            ]
            .concat(),
        ),
    ];
    for (label, bytes) in inputs {
        let mut child = headless_pipes();
        let mut stdin = child.stdin.take().unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let drain = tokio::spawn(async move {
            let mut out = Vec::new();
            let _ = stdout.read_to_end(&mut out).await;
            out
        });
        let errors = tokio::spawn(async move {
            let mut err = String::new();
            let _ = stderr.read_to_string(&mut err).await;
            err
        });
        // The server may close its input early; a broken pipe here is an answer too.
        let _ = stdin.write_all(&bytes).await;
        drop(stdin);
        let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
            .await
            .unwrap_or_else(|_| panic!("{label}: the server did not end after its input closed"))
            .unwrap();
        let err = errors.await.unwrap();
        let out = drain.await.unwrap();
        assert!(!err.contains("panicked"), "{label}: {err}");
        assert!(status.code().is_some(), "{label}: killed by a signal");
        // Whatever came in, everything that goes out is a JSON-RPC message, one a line.
        let answers: Vec<Value> = String::from_utf8(out)
            .unwrap_or_else(|e| panic!("{label}: output is not UTF-8: {e}"))
            .lines()
            .map(|line| {
                serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("{label}: {e}: a line out is not JSON: {line}"))
            })
            .collect();
        assert!(
            answers.iter().all(|a| a["jsonrpc"] == "2.0"),
            "{label}: {answers:?}"
        );
        if label == "wrong shapes" {
            // Each request is answered under its id with the error it calls for; the
            // one whose id cannot be read, under null.
            for (id, code) in [
                (json!(1), -32602),
                (Value::Null, -32600),
                (json!(2), -32600),
                (json!(3), -32602),
                (json!(5), -32601),
            ] {
                let answer = answers
                    .iter()
                    .find(|a| a["id"] == id)
                    .unwrap_or_else(|| panic!("{label}: id {id} unanswered: {answers:?}"));
                assert_eq!(answer["error"]["code"], code, "{label}: id {id}: {answer}");
            }
            let answer = answers.iter().find(|a| a["id"] == 4).unwrap();
            assert!(answer.get("error").is_some(), "{label}: id 4: {answer}");
        }
    }
}

/// A message over the size limit on stdio is dropped unread and answered with an error
/// naming the limit, under the request's own id; the next request is served as usual.
#[tokio::test]
async fn an_oversized_stdio_message_is_answered_with_the_limit_and_the_next_one_served() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let limit = structs_console::mcp::wire::MAX_MESSAGE_BYTES;
    let mut child = headless_pipes();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut stderr = child.stderr.take().unwrap();
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"structs_validate_entity_id","arguments":{{"id":"{}"}}}}}}"#,
        "1".repeat(limit)
    );
    let input = [
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        &big,
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"structs_validate_entity_id","arguments":{"id":"1-1"}}}"#,
    ]
    .join("\n")
        + "\n";
    stdin.write_all(input.as_bytes()).await.unwrap();
    let mut answers = std::collections::BTreeMap::new();
    while answers.len() < 3 {
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .expect("the server answers every request")
            .unwrap()
            .expect("the server is still running");
        let v: Value = serde_json::from_str(&line).unwrap();
        if let Some(id) = v["id"].as_i64() {
            answers.insert(id, v);
        }
    }
    let refused = &answers[&5]["error"];
    assert_eq!(refused["code"], -32600, "{refused}");
    let error = &refused["data"]["error"];
    assert_eq!(error["code"], "VALIDATION_OUT_OF_RANGE", "{error}");
    assert_eq!(error["details"]["limit_bytes"], limit);
    assert_eq!(error["details"]["bytes"], big.len());
    let message = refused["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("{limit}-byte limit")),
        "{message}"
    );
    let served = &answers[&6]["result"]["structuredContent"];
    assert_eq!(served["valid"], true, "{}", answers[&6]);
    drop(stdin);
    let status = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .expect("the server ends when its input closes")
        .unwrap();
    assert!(status.success(), "{status}");
    let mut err = String::new();
    tokio::io::AsyncReadExt::read_to_string(&mut stderr, &mut err)
        .await
        .unwrap();
    assert!(err.contains("over the size limit"), "{err}");
}

/// Sends `head` then `body` on a fresh connection to the HTTP server and reads the
/// answer until the server closes or 10 s pass: (status, body text). The server may
/// answer and stop reading before the whole body is sent; that is not an error here.
async fn raw_http(url: &str, head: &str, body: &[u8]) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let host = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_string();
    let stream = tokio::net::TcpStream::connect(&host).await.unwrap();
    let (mut read, mut write) = stream.into_split();
    let head = head.replace("HOST", &host);
    let body = body.to_vec();
    let writer = tokio::spawn(async move {
        let _ = write.write_all(head.as_bytes()).await;
        let _ = write.write_all(&body).await;
        write
    });
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), async {
        let mut buf = vec![0; 65536];
        loop {
            match read.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => answer.extend_from_slice(&buf[..n]),
            }
            if let Some(at) = answer.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&answer[..at]).to_lowercase();
                let len = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse::<usize>().ok());
                if len.is_some_and(|len| answer.len() >= at + 4 + len) {
                    break;
                }
            }
        }
    })
    .await;
    writer.abort();
    let text = String::from_utf8_lossy(&answer).to_string();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no HTTP status in {text:?}"));
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("");
    (status, body.to_string())
}

/// Over HTTP the same limit holds: a declared length over it is refused before the body
/// is read, with the JSON-RPC error stdio gives; a chunked body is cut at the limit.
#[tokio::test]
async fn an_oversized_http_body_is_refused_and_the_server_keeps_serving() {
    let limit = structs_console::mcp::wire::MAX_MESSAGE_BYTES;
    let server = support::mcp_http::Headless::start(&["--paused"], &[]).await;
    let path = "/mcp";
    let body = vec![b'['; limit + 1];
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: HOST\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let (status, text) = raw_http(&server.url, &head, &body).await;
    assert_eq!(status, 413, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(v["error"]["code"], -32600, "{v}");
    let error = &v["error"]["data"]["error"];
    assert_eq!(error["code"], "VALIDATION_OUT_OF_RANGE", "{v}");
    assert_eq!(error["details"]["bytes"], limit + 1);
    assert_eq!(error["details"]["limit_bytes"], limit);

    let mut chunked = Vec::new();
    for _ in 0..5 {
        chunked.extend_from_slice(format!("{:x}\r\n", 1 << 20).as_bytes());
        chunked.extend(std::iter::repeat_n(b'[', 1 << 20));
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: HOST\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    );
    let (status, text) = raw_http(&server.url, &head, &chunked).await;
    assert_eq!(status, 413, "{text}");
    assert!(text.contains(&limit.to_string()), "{text}");

    let client = support::mcp_http::connect(&server.url, None).await.unwrap();
    let v = client
        .call_tool(
            rmcp::model::CallToolRequestParams::new("structs_validate_entity_id")
                .with_arguments(json!({"id": "1-1"}).as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    assert_eq!(v.structured_content.unwrap()["valid"], true);
    client.cancel().await.unwrap();
    server.stop().await;
}

/// A session log that stops growing part way (a file-size limit, `ulimit -f`: writes fail
/// with EFBIG, as on a disk that fills up): the server keeps answering and says so once;
/// every entry written before the limit is whole and in order, the one cut short is a
/// single torn line, and once the log can grow again (the limit raised, as when space is
/// freed) the entries after it are whole too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_log_that_hits_a_size_limit_keeps_what_it_wrote() {
    use rmcp::ServiceExt;
    let log = scratch("fsize.log");
    let record = scratch("fsize.jsonl");
    let mut cmd = tokio::process::Command::new("bash");
    cmd.args(["-c", r#"ulimit -S -f 16 && exec "$0" "$@""#])
        .arg(env!("CARGO_BIN_EXE_structs-console"))
        .args([
            "--headless",
            "--paused",
            "--log-level",
            "info",
            "--log-file",
        ])
        .arg(&log)
        .arg("--record")
        .arg(&record);
    let transport = rmcp::transport::TokioChildProcess::new(cmd).expect("spawn the server");
    let pid = transport.id().expect("the server's pid");
    let client = ().serve(transport).await.expect("initialize");
    for page in 0..40 {
        let r = call(&client, "structs_list_players", json!({"page_size": 5})).await;
        assert_ne!(r.is_error, Some(true), "call {page}: {r:?}");
        let players = r.structured_content.unwrap()["players"].clone();
        assert_eq!(players.as_array().unwrap().len(), 5);
    }
    let full = std::fs::metadata(&record).unwrap().len();
    assert!(full <= 16 * 1024 && full > 1024, "{full} bytes");
    // Room again: the limit is lifted while the server runs.
    let lifted = std::process::Command::new("prlimit")
        .args(["--pid", &pid.to_string(), "--fsize=unlimited"])
        .status()
        .expect("prlimit (util-linux)");
    assert!(lifted.success());
    for _ in 0..3 {
        let r = call(&client, "structs_validate_entity_id", json!({"id": "1-1"})).await;
        assert_eq!(r.structured_content.unwrap()["valid"], true);
    }
    client.cancel().await.unwrap();

    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("cannot write the session log"), "{text}");
    assert!(text.contains("File too large"), "{text}");
    let bytes = std::fs::read(&record).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.split('\n').collect();
    let (last, lines) = lines.split_last().unwrap();
    assert_eq!(*last, "", "the log ends with a whole entry");
    let parsed: Vec<Option<Value>> = lines.iter().map(|l| serde_json::from_str(l).ok()).collect();
    let torn: Vec<usize> = (0..parsed.len()).filter(|&i| parsed[i].is_none()).collect();
    assert_eq!(torn.len(), 1, "one torn line: {torn:?}");
    let seq = |v: &Option<Value>| v.as_ref().unwrap()["seq"].as_u64().unwrap();
    let before: Vec<u64> = parsed[..torn[0]].iter().map(seq).collect();
    let after: Vec<u64> = parsed[torn[0] + 1..].iter().map(seq).collect();
    assert!(before.len() >= 4, "{before:?}");
    assert_eq!(before, (1..=before.len() as u64).collect::<Vec<_>>());
    // The three calls after the limit was lifted: a request and a response each.
    assert_eq!(after.len(), 6, "{after:?}");
    assert!(after.windows(2).all(|w| w[0] + 1 == w[1]), "{after:?}");
    assert!(after[0] > *before.last().unwrap() + 1, "{after:?}");
    let tools: Vec<&str> = parsed[torn[0] + 1..]
        .iter()
        .map(|v| v.as_ref().unwrap()["tool"].as_str().unwrap())
        .collect();
    assert!(
        tools.iter().all(|t| *t == "structs_validate_entity_id"),
        "{tools:?}"
    );
}
