//! The 2026-07-28 revision over HTTP, beside the session revisions on the same
//! server: raw requests, so that what is checked is the wire itself (the status, the
//! frames of the stream, the `_meta` of each notification).

mod support;

use serde_json::{Value, json};
use support::mcp_http::Headless;

const V2026: &str = "2026-07-28";

/// A client for plain HTTP (reqwest asks for a TLS provider all the same).
fn http() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

/// The `_meta` every 2026-07-28 request carries, with `extra` keys added.
fn meta(extra: Value) -> Value {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": V2026,
        "io.modelcontextprotocol/clientInfo": {"name": "stateless-test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    if let (Some(m), Value::Object(extra)) = (meta.as_object_mut(), extra) {
        m.extend(extra);
    }
    meta
}

/// The name header a method carries (SEP-2243).
fn name_of(method: &str, params: &Value) -> Option<String> {
    let key = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" => "uri",
        "tasks/get" | "tasks/update" | "tasks/cancel" => "taskId",
        _ => return None,
    };
    params[key].as_str().map(String::from)
}

/// Posts one stateless request and reads its answer: the status and every message of
/// the body (one JSON body, or each `data:` of a stream).
async fn post(url: &str, method: &str, mut params: Value, extra_meta: Value) -> (u16, Vec<Value>) {
    params["_meta"] = meta(extra_meta);
    let mut request = http()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", V2026)
        .header("mcp-method", method);
    if let Some(name) = name_of(method, &params) {
        request = request.header("mcp-name", name);
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let response = request
        .json(&body)
        .send()
        .await
        .expect("the server answers");
    let status = response.status().as_u16();
    let text = response.text().await.expect("a body");
    (status, frames(&text))
}

fn frames(text: &str) -> Vec<Value> {
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return vec![v];
    }
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str(d.trim()).ok())
        .collect()
}

/// A stateless `resources/read` of `uri`.
async fn read(url: &str, uri: &str) -> (u16, Vec<Value>) {
    post(url, "resources/read", json!({"uri": uri}), json!({})).await
}

/// A stateless `tools/call` of `tool` with `arguments`.
async fn call(url: &str, tool: &str, arguments: Value) -> (u16, Vec<Value>) {
    post(
        url,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
        json!({}),
    )
    .await
}

/// The answer among the frames (the message with an id).
fn answer(frames: &[Value]) -> &Value {
    frames
        .iter()
        .find(|f| f.get("id").is_some())
        .unwrap_or_else(|| panic!("no answer in {frames:#?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_server_speaks_both_eras() {
    let server = Headless::start(&["--paused"], &[]).await;
    let url = server.url.clone();

    let (status, f) = post(&url, "server/discover", json!({}), json!({})).await;
    assert_eq!(status, 200);
    let discover = &answer(&f)["result"];
    let versions = discover["supportedVersions"].as_array().unwrap();
    for v in ["2025-11-25", V2026] {
        assert!(versions.contains(&json!(v)), "{discover:#}");
    }
    assert_eq!(
        discover["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "structs-console"
    );
    assert!(
        discover["instructions"]
            .as_str()
            .unwrap()
            .contains("Structs")
    );

    // A stateless call: resultType on the answer, and no session.
    let (status, f) = call(&url, "structs_validate_entity_id", json!({"id": "1-1"})).await;
    assert_eq!(status, 200);
    let result = &answer(&f)["result"];
    assert_eq!(result["resultType"], "complete", "{result:#}");
    assert_eq!(result["structuredContent"]["valid"], true);

    // A session client still gets initialize, its version and its session.
    let response = http()
        .post(&url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "session-test", "version": "1"}}}),
        )
        .send()
        .await
        .unwrap();
    let session = response
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_string());
    let f = frames(&response.text().await.unwrap());
    assert_eq!(answer(&f)["result"]["protocolVersion"], "2025-11-25");
    let session = session.expect("a session id");
    // And the methods 2026-07-28 removed still work in it.
    let set_level = http()
        .post(&url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .json(
            &json!({"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel",
                      "params": {"level": "info"}}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(set_level.status().as_u16(), 200);
    let f = frames(&set_level.text().await.unwrap());
    assert_eq!(answer(&f)["result"], json!({}), "{f:#?}");

    // In a stateless request they are 404 and -32601, with the way forward.
    for (method, params) in [
        ("logging/setLevel", json!({"level": "info"})),
        (
            "resources/subscribe",
            json!({"uri": "structs://entities/1-1"}),
        ),
        ("initialize", json!({})),
    ] {
        let (status, f) = post(&url, method, params, json!({})).await;
        assert_eq!(status, 404, "{method}: {f:#?}");
        let error = &answer(&f)["error"];
        assert_eq!(error["code"], -32601, "{method}: {error:#}");
        assert_eq!(answer(&f)["id"], 1);
    }

    // _meta without clientCapabilities is -32602 and HTTP 400.
    let response = http()
        .post(&url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", V2026)
        .header("mcp-method", "tools/list")
        .json(
            &json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {
            "_meta": {"io.modelcontextprotocol/protocolVersion": V2026}}}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 400);
    let f = frames(&response.text().await.unwrap());
    assert_eq!(answer(&f)["error"]["code"], -32602, "{f:#?}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn caching_hints_say_what_changes_and_how_often() {
    let server = Headless::start(&["--paused"], &[]).await;
    let url = server.url.clone();
    let hints = |f: &[Value]| {
        let r = &answer(f)["result"];
        (
            r["ttlMs"].as_u64(),
            r["cacheScope"].as_str().map(String::from),
        )
    };
    for (method, expected, why) in [
        ("tools/list", (3_600_000, "public"), "the catalog is fixed"),
        (
            "resources/templates/list",
            (3_600_000, "public"),
            "so are the templates",
        ),
        ("resources/list", (0, "private"), "handles come and go"),
        ("prompts/list", (0, "private"), "docs can sync"),
    ] {
        let (_, f) = post(&url, method, json!({}), json!({})).await;
        let wanted = (Some(expected.0), Some(expected.1.to_string()));
        assert_eq!(hints(&f), wanted, "{method}: {why}");
    }
    let (_, f) = read(&url, "structs://entities/1-1").await;
    let (ttl, scope) = hints(&f);
    assert_eq!(scope.as_deref(), Some("public"));
    let block_ms = (structs_console::pow::schedule::BLOCK_SECONDS * 1000.0) as u64;
    assert_eq!(ttl, Some(block_ms), "an entity moves with the blocks");

    // A missing resource: -32602 with data.uri (SEP-2164), beside the project's error.
    let (_, f) = read(&url, "structs://entities/1-999").await;
    let error = &answer(&f)["error"];
    assert_eq!(error["code"], -32602, "{error:#}");
    assert_eq!(error["data"]["uri"], "structs://entities/1-999");
    assert_eq!(error["data"]["error"]["code"], "RESOURCE_NOT_FOUND");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_session_owned_a_stateless_request_gets_its_own_way() {
    let server = Headless::start(&["--paused"], &[]).await;
    let url = server.url.clone();
    let call = |tool: &'static str, args: Value, extra: Value| {
        let url = url.clone();
        async move {
            let (_, f) = post(
                &url,
                "tools/call",
                json!({"name": tool, "arguments": args}),
                extra,
            )
            .await;
            f
        }
    };
    // The subscription tools say where subscriptions went.
    let f = call(
        "structs_subscription_subscribe",
        json!({"entity_type": "player", "entity_id": "1-1"}),
        json!({}),
    )
    .await;
    let result = &answer(&f)["result"];
    assert_eq!(result["isError"], true, "{result:#}");
    let error = &result["structuredContent"]["error"];
    assert_eq!(error["code"], "VALIDATION_REQUIREMENTS_NOT_MET");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("subscriptions/listen")
    );

    // The handle list is the store's.
    let f = call("structs_handle_list", json!({}), json!({})).await;
    assert_eq!(answer(&f)["result"]["structuredContent"]["scope"], "all");

    // Log messages come only when the request asks, on its own stream, before its answer.
    let prove = json!({"action_type": "struct_build_complete", "entity_id": "5-1",
                       "difficulty": 700, "block_start": 1, "age": 600});
    let quiet = call("structs_calculate_proof_of_work", prove.clone(), json!({})).await;
    assert!(
        quiet.iter().all(|f| f["method"] != "notifications/message"),
        "{quiet:#?}"
    );
    let chatty = call(
        "structs_calculate_proof_of_work",
        prove,
        json!({"io.modelcontextprotocol/logLevel": "info"}),
    )
    .await;
    let logged = chatty
        .iter()
        .position(|f| f["method"] == "notifications/message")
        .unwrap_or_else(|| panic!("no log message: {chatty:#?}"));
    let answered = chatty.iter().position(|f| f.get("id").is_some()).unwrap();
    assert!(logged < answered, "{chatty:#?}");
    assert_eq!(chatty[answered]["result"]["isError"], false);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_stream_carries_the_updates_of_the_entities_it_names() {
    let server = Headless::start(&["--paused"], &[]).await;
    let url = server.url.clone();
    let id = online_struct(&url).await;
    let uri = format!("structs://entities/{id}");

    // Open the stream, naming the struct and an entity that is not one.
    let listen = {
        let url = url.clone();
        let uri = uri.clone();
        tokio::spawn(async move {
            let mut params = json!({"notifications": {
                "resourceSubscriptions": [uri, "structs://handles/x"],
                "toolsListChanged": true}});
            params["_meta"] = meta(json!({}));
            let response = http()
                .post(&url)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", V2026)
                .header("mcp-method", "subscriptions/listen")
                .json(&json!({"jsonrpc": "2.0", "id": "listen-1",
                              "method": "subscriptions/listen", "params": params}))
                .send()
                .await
                .unwrap();
            let mut response = response;
            let mut text = String::new();
            let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
            while let Ok(Ok(Some(chunk))) =
                tokio::time::timeout_at(deadline, response.chunk()).await
            {
                text.push_str(&String::from_utf8_lossy(&chunk));
                if text.contains("notifications/resources/updated") {
                    break;
                }
            }
            frames(&text)
        })
    };
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let (_, f) = post(
        &url,
        "tools/call",
        json!({"name": "structs_action_submit_transaction", "arguments": {"transaction": {"body": {
            "messages": [{"@type": "/structs.structs.MsgStructDeactivate", "structId": id}]}}}}),
        json!({}),
    )
    .await;
    assert_eq!(answer(&f)["result"]["isError"], false, "{f:#?}");
    let stream = listen.await.unwrap();
    let ack = &stream[0];
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{stream:#?}"
    );
    // Only what this server serves is acknowledged: the entity, not the handle, and no
    // tool list changes (the catalog is fixed).
    let accepted = &ack["params"]["notifications"];
    assert_eq!(accepted["resourceSubscriptions"], json!([uri]), "{ack:#}");
    assert!(accepted.get("toolsListChanged").is_none(), "{ack:#}");
    let update = stream
        .iter()
        .find(|f| f["method"] == "notifications/resources/updated")
        .unwrap_or_else(|| panic!("no update: {stream:#?}"));
    assert_eq!(update["params"]["uri"], uri);
    assert_eq!(
        update["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "listen-1"
    );
    server.stop().await;
}

/// `_meta` keys declaring the Tasks extension.
fn with_tasks() -> Value {
    json!({"io.modelcontextprotocol/clientCapabilities": {
        "extensions": {"io.modelcontextprotocol/tasks": {}}}})
}

/// Polls `tasks/get` until the task leaves `working`, at the interval it asks for.
async fn settle(url: &str, id: &str) -> Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let (status, f) = post(url, "tasks/get", json!({"taskId": id}), with_tasks()).await;
        assert_eq!(status, 200, "{f:#?}");
        let task = answer(&f)["result"].clone();
        if task["status"] != "working" {
            return task;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "still working: {task:#}"
        );
        let wait = task["pollIntervalMs"].as_u64().unwrap_or(500);
        tokio::time::sleep(std::time::Duration::from_millis(wait)).await;
    }
}

/// Opens a `subscriptions/listen` stream with `notifications` and reads it until its
/// text holds `until` (or 15 s pass): its frames.
async fn listen_until(
    url: &str,
    notifications: Value,
    extra_meta: Value,
    until: &str,
) -> Vec<Value> {
    let params = json!({"notifications": notifications, "_meta": meta(extra_meta)});
    let mut response = http()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", V2026)
        .header("mcp-method", "subscriptions/listen")
        .json(&json!({"jsonrpc": "2.0", "id": "listen-tasks",
                      "method": "subscriptions/listen", "params": params}))
        .send()
        .await
        .unwrap();
    let mut text = String::new();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(15);
    while let Ok(Ok(Some(chunk))) = tokio::time::timeout_at(deadline, response.chunk()).await {
        text.push_str(&String::from_utf8_lossy(&chunk));
        if text.contains(until) {
            break;
        }
    }
    frames(&text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_stream_carries_the_status_of_the_tasks_it_names() {
    let server = Headless::start(&["--paused"], &[]).await;
    let url = server.url.clone();
    let hard = json!({"name": "structs_calculate_proof_of_work", "arguments": {
        "action_type": "struct_build_complete", "entity_id": "5-1",
        "difficulty": 100_000_000, "block_start": 1, "age": 1,
        "max_iterations": 1_000_000_000_000u64}});
    let (_, f) = post(&url, "tools/call", hard, with_tasks()).await;
    let id = answer(&f)["result"]["taskId"].as_str().unwrap().to_string();

    // A client that does not declare the extension is refused task notifications.
    let refused = listen_until(&url, json!({"taskIds": [id]}), json!({}), "\"error\"").await;
    let error = refused
        .iter()
        .find(|f| f.get("error").is_some())
        .unwrap_or_else(|| panic!("no error: {refused:#?}"));
    assert_eq!(error["error"]["code"], -32021, "{error:#}");

    // One that does hears the task's status at once, and again when it changes; an id
    // the store does not know is not followed.
    let listen = {
        let (url, id) = (url.clone(), id.clone());
        tokio::spawn(async move {
            listen_until(
                &url,
                json!({"taskIds": [id, "ffff0000"]}),
                with_tasks(),
                "\"cancelled\"",
            )
            .await
        })
    };
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let (status, _) = post(&url, "tasks/cancel", json!({"taskId": id}), with_tasks()).await;
    assert_eq!(status, 200);
    let stream = listen.await.unwrap();
    assert_eq!(
        stream[0]["method"], "notifications/subscriptions/acknowledged",
        "{stream:#?}"
    );
    // Each new status message (the search's progress while it works) is told too;
    // the statuses, in order, are working then cancelled.
    let mut said: Vec<(&str, &str)> = stream
        .iter()
        .filter(|f| f["method"] == "notifications/tasks")
        .map(|f| {
            assert_eq!(
                f["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "listen-tasks",
                "{f:#}"
            );
            (
                f["params"]["taskId"].as_str().unwrap(),
                f["params"]["status"].as_str().unwrap(),
            )
        })
        .collect();
    said.dedup();
    assert_eq!(
        said,
        [(id.as_str(), "working"), (id.as_str(), "cancelled")],
        "{stream:#?}"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_work_is_a_task_for_a_client_that_declares_the_extension() {
    let server = Headless::start(&["--paused"], &[]).await;
    let url = server.url.clone();
    let (_, f) = post(&url, "server/discover", json!({}), json!({})).await;
    let extensions = &answer(&f)["result"]["capabilities"]["extensions"];
    assert!(
        extensions.get("io.modelcontextprotocol/tasks").is_some(),
        "{extensions:#}"
    );

    // A quick search, as a task: created, then completed with the proof in its result.
    let quick = json!({"name": "structs_calculate_proof_of_work", "arguments": {
        "action_type": "struct_build_complete", "entity_id": "5-1",
        "difficulty": 700, "block_start": 1, "age": 600}});
    let (status, f) = post(&url, "tools/call", quick.clone(), with_tasks()).await;
    assert_eq!(status, 200);
    let created = &answer(&f)["result"];
    assert_eq!(created["resultType"], "task", "{created:#}");
    let task = created;
    assert_eq!(task["status"], "working", "{created:#}");
    assert_eq!(task["pollIntervalMs"], 500);
    assert_eq!(task["ttlMs"], 600_000);
    let id = task["taskId"].as_str().unwrap().to_string();
    let done = settle(&url, &id).await;
    assert_eq!(done["status"], "completed", "{done:#}");
    let proof = &done["result"]["structuredContent"];
    assert_eq!(proof["valid"], true, "{done:#}");
    assert!(
        proof["nonce"].is_number() || proof["nonce"].is_string(),
        "{done:#}"
    );
    // Cancelling an ended task changes nothing.
    let (status, f) = post(&url, "tasks/cancel", json!({"taskId": id}), with_tasks()).await;
    assert_eq!(status, 200);
    assert!(answer(&f).get("result").is_some(), "{f:#?}");
    assert_eq!(settle(&url, &id).await["status"], "completed");

    // A client that does not declare the extension gets the answer itself.
    let (_, f) = post(&url, "tools/call", quick, json!({})).await;
    let direct = &answer(&f)["result"];
    assert_eq!(direct["resultType"], "complete", "{direct:#}");
    assert_eq!(direct["structuredContent"]["valid"], true);
    // ...and the task methods are refused it: -32021, HTTP 400.
    let (status, f) = post(&url, "tasks/get", json!({"taskId": id}), json!({})).await;
    assert_eq!(status, 400, "{f:#?}");
    assert_eq!(answer(&f)["error"]["code"], -32021);

    // A search too hard to end, cancelled: it stops, and says so.
    let hard = json!({"name": "structs_calculate_proof_of_work", "arguments": {
        "action_type": "struct_build_complete", "entity_id": "5-1",
        "difficulty": 100_000_000, "block_start": 1, "age": 1,
        "max_iterations": 1_000_000_000_000u64}});
    let (_, f) = post(&url, "tools/call", hard, with_tasks()).await;
    let id = answer(&f)["result"]["taskId"].as_str().unwrap().to_string();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let (status, f) = post(&url, "tasks/get", json!({"taskId": id}), with_tasks()).await;
    assert_eq!(
        (status, answer(&f)["result"]["status"].clone()),
        (200, json!("working"))
    );
    // While it works, its status message is the search's progress: iterations, rate
    // and best (written at the task's heartbeat, every second).
    let mut said = String::new();
    for _ in 0..30 {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        let (_, f) = post(&url, "tasks/get", json!({"taskId": id}), with_tasks()).await;
        said = answer(&f)["result"]["statusMessage"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if said.contains("iterations") {
            break;
        }
    }
    assert!(
        said.contains(" of 1000000000000 iterations, ") && said.contains(" MH/s, best "),
        "{said}"
    );
    let (status, _) = post(&url, "tasks/cancel", json!({"taskId": id}), with_tasks()).await;
    assert_eq!(status, 200);
    assert_eq!(settle(&url, &id).await["status"], "cancelled");

    // Its Mcp-Name may be left out (taken from the body), but not contradict it.
    for (name, status) in [(None, 200), (Some("another-task"), 400)] {
        let mut request = http()
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", V2026)
            .header("mcp-method", "tasks/get");
        if let Some(name) = name {
            request = request.header("mcp-name", name);
        }
        let mut params = json!({"taskId": id});
        params["_meta"] = meta(with_tasks());
        let response = request
            .json(&json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/get", "params": params}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), status, "Mcp-Name {name:?}");
    }

    // A task nobody made: -32602.
    for method in ["tasks/get", "tasks/cancel"] {
        let (_, f) = post(
            &url,
            method,
            json!({"taskId": "no-such-task"}),
            with_tasks(),
        )
        .await;
        assert_eq!(answer(&f)["error"]["code"], -32602, "{method}: {f:#?}");
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_docs_folders_skills_are_served_as_skills_and_files() {
    let docs = support::docs::TempDocs::copy_of("skills-docs");
    let server = Headless::start(&["--paused", "--docs", docs.root().to_str().unwrap()], &[]).await;
    let url = server.url.clone();
    let (_, f) = post(&url, "server/discover", json!({}), json!({})).await;
    let skills =
        &answer(&f)["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/skills"];
    assert_eq!(skills["directoryRead"], true, "{f:#?}");

    let (_, f) = post(&url, "skills/list", json!({}), json!({})).await;
    let listed = answer(&f)["result"]["skills"].as_array().unwrap().clone();
    assert_eq!(listed.len(), 1, "{listed:#?}");
    let skill = &listed[0];
    let uri = "skill://structs-scouting/SKILL.md";
    assert_eq!(skill["uri"], uri);
    assert_eq!(skill["frontmatter"]["name"], "structs-scouting");
    assert_eq!(
        skill["frontmatter"]["level"], "core",
        "every field, as written"
    );
    let files = skill["resources"].as_array().unwrap();
    assert_eq!(files.len(), 2, "{skill:#}");

    // Each file reads back as the manifest says: its size and its digest.
    for file in files {
        let file_uri = file["uri"].as_str().unwrap();
        let (_, f) = read(&url, file_uri).await;
        let text = answer(&f)["result"]["contents"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{f:#?}"))
            .to_string();
        assert_eq!(file["size"], text.len(), "{file_uri}");
        let digest = {
            use sha2::Digest;
            let hash = sha2::Sha256::digest(text.as_bytes());
            format!(
                "sha256:{}",
                hash.iter().map(|b| format!("{b:02x}")).collect::<String>()
            )
        };
        assert_eq!(file["digest"], digest, "{file_uri}");
    }
    let on_disk = docs.read("skills/structs-scouting/SKILL.md");
    let (_, f) = read(&url, uri).await;
    assert_eq!(
        answer(&f)["result"]["contents"][0]["text"],
        on_disk.as_str()
    );

    let (_, f) = post(&url, "skills/get", json!({"uri": uri}), json!({})).await;
    assert_eq!(answer(&f)["result"]["skill"], *skill);
    let (_, f) = post(
        &url,
        "skills/get",
        json!({"uri": "skill://nothing-here/SKILL.md"}),
        json!({}),
    )
    .await;
    assert_eq!(answer(&f)["error"]["code"], -32602, "{f:#?}");

    // A folder lists its files and its folders.
    let (_, f) = post(
        &url,
        "resources/directory/read",
        json!({"uri": "skill://structs-scouting/"}),
        json!({}),
    )
    .await;
    let children = answer(&f)["result"]["resources"]
        .as_array()
        .unwrap()
        .clone();
    let shown: Vec<(String, Option<String>)> = children
        .iter()
        .map(|c| {
            (
                c["uri"].as_str().unwrap().to_string(),
                c["mimeType"].as_str().map(String::from),
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            (
                "skill://structs-scouting/SKILL.md".to_string(),
                Some("text/markdown".into())
            ),
            (
                "skill://structs-scouting/reference/".to_string(),
                Some("inode/directory".into())
            ),
        ]
    );
    let (_, f) = post(
        &url,
        "resources/directory/read",
        json!({"uri": uri}),
        json!({}),
    )
    .await;
    assert_eq!(
        answer(&f)["error"]["code"],
        -32602,
        "a file is no folder: {f:#?}"
    );
    // A folder comes whole: a cursor is one the server never gave, as for every list.
    let (_, f) = post(
        &url,
        "resources/directory/read",
        json!({"uri": "skill://structs-scouting/", "cursor": "bogus"}),
        json!({}),
    )
    .await;
    assert_eq!(answer(&f)["error"]["code"], -32602, "{f:#?}");
    assert!(
        answer(&f)["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("cursor")),
        "{f:#?}"
    );

    // The prompt that stands for the skill stays, for hosts without the extension.
    let (_, f) = post(&url, "prompts/list", json!({}), json!({})).await;
    let prompts: Vec<String> = answer(&f)["result"]["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect();
    assert!(
        prompts.iter().any(|p| p.contains("scouting")),
        "{prompts:?}"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_sharing_a_redis_answer_for_each_others_tasks() {
    let Some(redis) = support::redis::RedisServer::start() else {
        return;
    };
    let store = redis.url();
    let args = [
        "--paused",
        "--world-size",
        "200",
        "--handle-store",
        store.as_str(),
    ];
    let a = Headless::start(&args, &[]).await;
    let b = Headless::start(&args, &[]).await;

    // Started on one, finished and read through the other.
    let quick = json!({"name": "structs_calculate_proof_of_work", "arguments": {
        "action_type": "struct_build_complete", "entity_id": "5-1",
        "difficulty": 700, "block_start": 1, "age": 600}});
    let (_, f) = post(&a.url, "tools/call", quick, with_tasks()).await;
    let id = answer(&f)["result"]["taskId"].as_str().unwrap().to_string();
    let done = settle(&b.url, &id).await;
    assert_eq!(done["status"], "completed", "{done:#}");
    assert_eq!(done["result"]["structuredContent"]["valid"], true);

    // Started on one, cancelled through the other: the one doing the work stops.
    let hard = json!({"name": "structs_calculate_proof_of_work", "arguments": {
        "action_type": "struct_build_complete", "entity_id": "5-1",
        "difficulty": 100_000_000, "block_start": 1, "age": 1,
        "max_iterations": 1_000_000_000_000u64}});
    let (_, f) = post(&a.url, "tools/call", hard, with_tasks()).await;
    let id = answer(&f)["result"]["taskId"].as_str().unwrap().to_string();
    let (_, f) = post(&b.url, "tasks/get", json!({"taskId": id}), with_tasks()).await;
    assert_eq!(answer(&f)["result"]["status"], "working");
    let (status, _) = post(&b.url, "tasks/cancel", json!({"taskId": id}), with_tasks()).await;
    assert_eq!(status, 200);
    assert_eq!(settle(&a.url, &id).await["status"], "cancelled");

    // A server that dies mid-task: its task is reported failed, with the reason, not
    // left working for ever.
    let hard = json!({"name": "structs_calculate_proof_of_work", "arguments": {
        "action_type": "struct_build_complete", "entity_id": "5-1",
        "difficulty": 100_000_000, "block_start": 1, "age": 1,
        "max_iterations": 1_000_000_000_000u64}});
    let (_, f) = post(&a.url, "tools/call", hard, with_tasks()).await;
    let id = answer(&f)["result"]["taskId"].as_str().unwrap().to_string();
    // The catalog's task list on the other server shows all three, newest first, as
    // the console's PoW tab does.
    let (_, f) = call(
        &b.url,
        "structs_task_list",
        json!({"tools": ["structs_calculate_proof_of_work"]}),
    )
    .await;
    let listed = &answer(&f)["result"]["structuredContent"];
    let statuses: Vec<&str> = listed["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["status"].as_str().unwrap())
        .collect();
    assert_eq!(
        statuses,
        ["working", "cancelled", "completed"],
        "{listed:#}"
    );
    assert_eq!(listed["tasks"][0]["task_id"], id.as_str());
    assert_eq!(listed["store"], "redis");
    let mut a = a;
    a.child.kill().await.unwrap();
    let deadline = std::time::Instant::now()
        + structs_console::mcp::server::tasks::STALE_AFTER
        + std::time::Duration::from_secs(10);
    let failed = loop {
        let (_, f) = post(&b.url, "tasks/get", json!({"taskId": id}), with_tasks()).await;
        let task = answer(&f)["result"].clone();
        if task["status"] != "working" {
            break task;
        }
        assert!(std::time::Instant::now() < deadline, "{task:#}");
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    };
    assert_eq!(failed["status"], "failed", "{failed:#}");
    assert!(
        failed["statusMessage"]
            .as_str()
            .unwrap()
            .contains("stopped"),
        "{failed:#}"
    );
    b.stop().await;
}

/// The first online struct of the demo world, read with stateless calls.
async fn online_struct(url: &str) -> String {
    let (_, f) = call(
        url,
        "structs_list_entities",
        json!({"entity_type": "struct", "page_size": 30}),
    )
    .await;
    let listed = answer(&f)["result"]["structuredContent"]["structs"].clone();
    for s in listed.as_array().unwrap_or_else(|| panic!("{f:#?}")) {
        let id = s["Struct"]["id"].as_str().unwrap().to_string();
        let (_, f) = call(url, "structs_query_struct", json!({"struct_id": id})).await;
        if answer(&f)["result"]["structuredContent"]["struct"]["structAttributes"]["isOnline"]
            == true
        {
            return id;
        }
    }
    panic!("no online struct in the demo world")
}

fn deactivate(id: &str) -> Value {
    json!({"name": "structs_action_submit_transaction", "arguments": {"transaction": {"body": {
        "messages": [{"@type": "/structs.structs.MsgStructDeactivate", "structId": id}]}}}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_confirm_actions_a_person_confirms_what_destroys_or_spends() {
    let server = Headless::start(&["--paused", "--confirm-actions"], &[]).await;
    let url = server.url.clone();
    let elicits = json!({"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}});
    let id = online_struct(&url).await;

    // What only reads is never asked about.
    let (_, f) = post(
        &url,
        "tools/call",
        json!({"name": "structs_query_struct", "arguments": {"struct_id": id}}),
        elicits.clone(),
    )
    .await;
    assert_eq!(answer(&f)["result"]["resultType"], "complete");

    // A client that cannot be asked is told what it lacks.
    let (status, f) = post(&url, "tools/call", deactivate(&id), json!({})).await;
    assert_eq!(status, 400, "{f:#?}");
    let error = &answer(&f)["error"];
    assert_eq!(error["code"], -32021, "{error:#}");
    assert!(
        error["data"]["requiredCapabilities"]["elicitation"].is_object(),
        "{error:#}"
    );

    // One that can is asked: one form, and a state to send back.
    let (status, f) = post(&url, "tools/call", deactivate(&id), elicits.clone()).await;
    assert_eq!(status, 200);
    let asked = answer(&f)["result"].clone();
    assert_eq!(asked["resultType"], "input_required", "{asked:#}");
    let question = &asked["inputRequests"]["confirm"];
    assert_eq!(question["method"], "elicitation/create", "{asked:#}");
    assert_eq!(question["params"]["mode"], "form");
    assert!(
        question["params"]["message"]
            .as_str()
            .unwrap()
            .contains(&id)
    );
    let state = asked["requestState"].as_str().unwrap().to_string();

    let retry = |state: &str, responses: Value, call: Value| {
        let mut call = call;
        call["requestState"] = json!(state);
        if !responses.is_null() {
            call["inputResponses"] = responses;
        }
        let (url, elicits) = (url.clone(), elicits.clone());
        async move { post(&url, "tools/call", call, elicits).await }
    };
    let yes = json!({"confirm": {"action": "accept", "content": {"confirm": true}}});

    // A state altered, or sent back for other arguments, is refused.
    let mut tampered = state.clone().into_bytes();
    let last = tampered.len() - 1;
    tampered[last] = if tampered[last] == b'A' { b'B' } else { b'A' };
    let (_, f) = retry(
        &String::from_utf8(tampered).unwrap(),
        yes.clone(),
        deactivate(&id),
    )
    .await;
    assert_eq!(answer(&f)["error"]["code"], -32602, "{f:#?}");
    let (_, f) = retry(&state, yes.clone(), deactivate("5-99999")).await;
    assert_eq!(
        answer(&f)["error"]["code"],
        -32602,
        "bound to its arguments: {f:#?}"
    );

    // Sent back without the answer, the question is asked again.
    let (_, f) = retry(&state, Value::Null, deactivate(&id)).await;
    assert_eq!(
        answer(&f)["result"]["resultType"],
        "input_required",
        "{f:#?}"
    );

    // A no is honoured: the struct stays online.
    let no = json!({"confirm": {"action": "decline"}});
    let (_, f) = retry(&state, no, deactivate(&id)).await;
    let refused = &answer(&f)["result"];
    assert_eq!(refused["isError"], true, "{refused:#}");
    assert_eq!(
        refused["structuredContent"]["error"]["code"],
        "TOOL_CANCELLED"
    );
    assert_eq!(online_struct(&url).await, id, "nothing ran");

    // A yes runs it.
    let (_, f) = retry(&state, yes, deactivate(&id)).await;
    let done = &answer(&f)["result"];
    assert_eq!(done["resultType"], "complete", "{done:#}");
    assert_eq!(done["isError"], false, "{done:#}");
    let (_, f) = call(&url, "structs_query_struct", json!({"struct_id": id})).await;
    assert_eq!(
        answer(&f)["result"]["structuredContent"]["struct"]["structAttributes"]["isOnline"],
        false
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompts_missing_choice_is_asked_for_with_the_values_it_may_take() {
    let server = Headless::start(&["--paused"], &[]).await;
    let url = server.url.clone();
    let elicits = json!({"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}});

    // A client that cannot be asked is told what is missing, as before.
    let build = json!({"name": "plan-build", "arguments": {"planet_id": "2-1"}});
    let (_, f) = post(&url, "prompts/get", build.clone(), json!({})).await;
    let error = &answer(&f)["error"];
    assert_eq!(error["code"], -32602, "{f:#?}");
    assert!(error["message"].as_str().unwrap().contains("struct_type"));

    // One that can is shown the struct types to choose from.
    let (_, f) = post(&url, "prompts/get", build.clone(), elicits.clone()).await;
    let asked = answer(&f)["result"].clone();
    assert_eq!(asked["resultType"], "input_required", "{asked:#}");
    let form = &asked["inputRequests"]["choose"]["params"]["requestedSchema"];
    let values = form["properties"]["struct_type"]["enum"]
        .as_array()
        .unwrap()
        .clone();
    assert!(values.len() >= 10, "the struct types: {form:#}");
    assert_eq!(
        form["required"],
        json!(["struct_type"]),
        "planet_id was given"
    );
    let chosen = values[0].as_str().unwrap().to_string();

    let state = asked["requestState"].as_str().unwrap();
    let mut retry = build.clone();
    retry["requestState"] = json!(state);
    retry["inputResponses"] =
        json!({"choose": {"action": "accept", "content": {"struct_type": chosen}}});
    let (_, f) = post(&url, "prompts/get", retry, elicits.clone()).await;
    let got = answer(&f)["result"].clone();
    assert_eq!(got["resultType"], "complete", "{f:#?}");
    assert!(
        got["messages"].as_array().is_some_and(|m| !m.is_empty()),
        "{got:#}"
    );

    // A person who does not choose: the prompt is refused, saying what it needs.
    let mut retry = build;
    retry["requestState"] = json!(state);
    retry["inputResponses"] = json!({"choose": {"action": "decline"}});
    let (_, f) = post(&url, "prompts/get", retry, elicits).await;
    assert_eq!(answer(&f)["error"]["code"], -32602, "{f:#?}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_guard_and_the_limits_hold_for_stateless_requests_too() {
    let token = "stateless-test-token-0123456789";
    let server = Headless::start(&["--paused"], &[("STRUCTS_CONSOLE_AUTH_TOKEN", token)]).await;
    let url = server.url.clone();
    let body = |method: &str| {
        let mut params = json!({});
        params["_meta"] = meta(json!({}));
        json!({"jsonrpc": "2.0", "id": 5, "method": method, "params": params})
    };
    let request = || {
        http()
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", V2026)
            .header("mcp-method", "tools/list")
    };
    // No token: 400, the UNAUTHORIZED object, as for a session's request.
    let response = request().json(&body("tools/list")).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 400);
    let f = frames(&response.text().await.unwrap());
    assert_eq!(
        f[0]["error"]["data"]["error"]["code"], "UNAUTHORIZED",
        "{f:#?}"
    );
    // A foreign Host: 403.
    let response = request()
        .header("authorization", format!("Bearer {token}"))
        .header("host", "evil.example.com")
        .json(&body("tools/list"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 403);
    // Not JSON: -32700, 400.
    let response = request()
        .header("authorization", format!("Bearer {token}"))
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 400);
    let f = frames(&response.text().await.unwrap());
    assert_eq!(f[0]["error"]["code"], -32700, "{f:#?}");
    // With the token, served.
    let response = request()
        .header("authorization", format!("Bearer {token}"))
        .json(&body("tools/list"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let f = frames(&response.text().await.unwrap());
    assert!(
        answer(&f)["result"]["tools"]
            .as_array()
            .is_some_and(|t| t.len() > 40)
    );
    server.stop().await;
}

/// Over stdio, the task ids of a listen request are read off its line: the stream
/// carries the task's status as over HTTP.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_stdio_a_listen_stream_carries_task_statuses_too() {
    use structs_console::mcp::server::{McpServer, stdio};
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    let (core, _) = support::sim::paused_core(structs_console::source::sim::WorldConfig::demo());
    let server = McpServer::new(
        core,
        std::sync::Arc::new(structs_console::docs::Docs::embedded()),
    );
    let (client, server_end) = tokio::io::duplex(1 << 20);
    let (read, write) = tokio::io::split(server_end);
    tokio::spawn(stdio::serve(server, read, write, 1 << 20));
    let (read, mut write) = tokio::io::split(client);
    let mut lines = BufReader::new(read).lines();
    let mut send = async |message: Value| {
        let mut line = serde_json::to_vec(&message).unwrap();
        line.push(b'\n');
        write.write_all(&line).await.unwrap();
    };
    let with = |mut params: Value| {
        params["_meta"] = meta(with_tasks());
        params
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": with(json!({
        "name": "structs_calculate_proof_of_work", "arguments": {
            "action_type": "struct_build_complete", "entity_id": "5-1",
            "difficulty": 100_000_000, "block_start": 1, "age": 1,
            "max_iterations": 1_000_000_000_000u64}}))}),
    )
    .await;
    let created: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    let id = created["result"]["taskId"].as_str().unwrap().to_string();
    send(
        json!({"jsonrpc": "2.0", "id": "l", "method": "subscriptions/listen",
                "params": with(json!({"notifications": {"taskIds": [id]}}))}),
    )
    .await;
    let mut said = Vec::new();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(15);
    while let Ok(Ok(Some(line))) = tokio::time::timeout_at(deadline, lines.next_line()).await {
        let frame: Value = serde_json::from_str(&line).unwrap();
        if frame["method"] != "notifications/tasks" {
            continue;
        }
        assert_eq!(
            frame["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
            "l"
        );
        let status = frame["params"]["status"].as_str().unwrap().to_string();
        let ended = status != "working";
        said.push(status);
        if said.len() == 1 {
            send(json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/cancel",
                        "params": with(json!({"taskId": id}))}))
            .await;
        }
        if ended {
            break;
        }
    }
    // A working task may say its progress more than once before it ends.
    said.dedup();
    assert_eq!(said, ["working", "cancelled"]);
}
