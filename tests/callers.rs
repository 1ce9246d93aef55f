//! Strangers sharing one stateless server: each caller (its bearer token) lists, reads
//! and stops its own tasks and results only, the operator's token sees them all, a
//! confirmation is spent once, and one caller's searches and tasks are capped apart
//! from the others'. Raw 2026-07-28 requests over HTTP, against the built binary.

mod support;

use std::time::Duration;

use serde_json::{Value, json};
use support::mcp_http::Headless;

const V2026: &str = "2026-07-28";
const OPERATOR: &str = "operator-token-0123456789";
const ALICE: &str = "alice-token-0123456789";
const BOB: &str = "bob-token-0123456789abc";

fn http() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

/// One caller of a server: its URL and the bearer token it sends, if any.
#[derive(Clone)]
struct Caller {
    url: String,
    token: Option<&'static str>,
}

impl Caller {
    fn new(url: &str, token: Option<&'static str>) -> Caller {
        Caller {
            url: url.to_string(),
            token,
        }
    }

    /// One stateless request; its status and its answer (the message with an id).
    async fn post(&self, method: &str, mut params: Value, capabilities: Value) -> (u16, Value) {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": V2026,
            "io.modelcontextprotocol/clientInfo": {"name": "callers-test", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": capabilities,
        });
        let mut request = http()
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", V2026)
            .header("mcp-method", method);
        let name = match method {
            "tools/call" => params["name"].as_str(),
            "resources/read" => params["uri"].as_str(),
            _ => params["taskId"].as_str(),
        };
        if let Some(name) = name {
            request = request.header("mcp-name", name);
        }
        if let Some(token) = self.token {
            request = request.bearer_auth(token);
        }
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let response = request.json(&body).send().await.expect("an answer");
        let status = response.status().as_u16();
        let text = response.text().await.expect("a body");
        let answer = serde_json::from_str::<Value>(&text)
            .ok()
            .or_else(|| {
                text.lines()
                    .filter_map(|l| l.strip_prefix("data:"))
                    .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
                    .find(|m| m.get("id").is_some())
            })
            .unwrap_or_else(|| panic!("no answer in {text}"));
        (status, answer)
    }

    async fn call(&self, tool: &str, arguments: Value) -> Value {
        let params = json!({"name": tool, "arguments": arguments});
        self.post("tools/call", params, json!({})).await.1
    }

    /// A tool's structured answer.
    async fn ok(&self, tool: &str, arguments: Value) -> Value {
        let answer = self.call(tool, arguments).await;
        assert_eq!(answer["result"]["isError"], false, "{answer:#}");
        answer["result"]["structuredContent"].clone()
    }

    /// A proof-of-work search that runs until it is cancelled, started as a task.
    async fn start_search(&self) -> String {
        let params = json!({"name": "structs_calculate_proof_of_work", "arguments": {
            "action_type": "struct_build_complete", "entity_id": "5-1",
            "difficulty": 100_000_000, "block_start": 1, "age": 1,
            "max_iterations": 1_000_000_000_000u64}});
        let (_, answer) = self.post("tools/call", params, tasks()).await;
        answer["result"]["taskId"]
            .as_str()
            .unwrap_or_else(|| panic!("no task: {answer:#}"))
            .to_string()
    }

    async fn task(&self, method: &str, id: &str) -> Value {
        self.post(method, json!({"taskId": id}), tasks()).await.1
    }

    /// Polls `tasks/get` until the task leaves `working`.
    async fn settle(&self, id: &str) -> Value {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            let task = self.task("tasks/get", id).await["result"].clone();
            if task["status"] != "working" {
                return task;
            }
            assert!(std::time::Instant::now() < deadline, "{task:#}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    async fn listed_tasks(&self) -> Vec<String> {
        let listed = self.ok("structs_task_list", json!({})).await;
        listed["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["task_id"].as_str().unwrap().to_string())
            .collect()
    }

    async fn listed_handles(&self) -> Vec<String> {
        let listed = self
            .ok("structs_handle_list", json!({"scope": "all"}))
            .await;
        listed["handles"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["handle"].as_str().unwrap().to_string())
            .collect()
    }
}

fn tasks() -> Value {
    json!({"extensions": {"io.modelcontextprotocol/tasks": {}}})
}

/// A file removed when dropped.
struct TempFile(std::path::PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A callers file naming alice and bob, kept while the test runs.
fn callers_file() -> (TempFile, String) {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("callers-{}-{n}", std::process::id()));
    std::fs::write(
        &path,
        format!("# name token\nalice {ALICE}\nbob   {BOB}   # the other one\n"),
    )
    .unwrap();
    let shown = path.to_str().unwrap().to_string();
    (TempFile(path), shown)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_caller_lists_reads_and_stops_its_own_only_and_the_operator_all() {
    let (_dir, file) = callers_file();
    let server = Headless::start(
        &[
            "--paused",
            "--world-size",
            "200",
            "--caller-tokens",
            &file,
            "--auth-token",
            OPERATOR,
        ],
        &[],
    )
    .await;
    let alice = Caller::new(&server.url, Some(ALICE));
    let bob = Caller::new(&server.url, Some(BOB));
    let operator = Caller::new(&server.url, Some(OPERATOR));

    // No token, or one no caller has: refused as before.
    let (status, _) = Caller::new(&server.url, None)
        .post("tools/list", json!({}), json!({}))
        .await;
    assert_eq!(status, 400);
    let (status, _) = Caller::new(&server.url, Some("someone-elses-token-xyz"))
        .post("tools/list", json!({}), json!({}))
        .await;
    assert_eq!(status, 400);

    // Alice's task: bob neither lists, reads, cancels nor follows it.
    let id = alice.start_search().await;
    assert!(alice.listed_tasks().await.contains(&id));
    let listed = alice.ok("structs_task_list", json!({})).await;
    assert_eq!(listed["tasks"][0]["owner"], "caller:alice", "{listed:#}");
    assert!(!bob.listed_tasks().await.contains(&id));
    for method in ["tasks/get", "tasks/cancel", "tasks/update"] {
        let answer = bob.task(method, &id).await;
        assert_eq!(answer["error"]["code"], -32602, "{method}: {answer:#}");
        // Said as of a task never made: nothing tells bob it exists.
        let never = bob.task(method, "0123456789abcdef0123456789abcdef").await;
        let said = |a: &Value| {
            a["error"]["message"]
                .as_str()
                .unwrap()
                .replace(&id, "ID")
                .replace("0123456789abcdef0123456789abcdef", "ID")
        };
        assert_eq!(said(&answer), said(&never), "{method}");
    }
    let refused = bob
        .call("structs_task_cancel", json!({"task_id": id}))
        .await;
    assert_eq!(
        refused["result"]["structuredContent"]["error"]["code"], "RESOURCE_NOT_FOUND",
        "{refused:#}"
    );
    assert_eq!(
        alice.task("tasks/get", &id).await["result"]["status"],
        "working"
    );

    // The operator sees every caller's.
    assert!(operator.listed_tasks().await.contains(&id));
    assert_eq!(
        operator.task("tasks/get", &id).await["result"]["status"],
        "working"
    );

    // Alice stops her own, by either path: no confirmation asked by either.
    let answer = alice.task("tasks/cancel", &id).await;
    assert!(answer.get("error").is_none(), "{answer:#}");
    assert_eq!(alice.settle(&id).await["status"], "cancelled");

    // A result too large for one answer is kept under a handle: alice's own.
    let big = alice
        .ok(
            "structs_list_entities",
            json!({"entity_type": "player", "page_size": 100}),
        )
        .await;
    let handle = big["result_handle"]
        .as_str()
        .unwrap_or_else(|| panic!("no handle: {big:#}"))
        .to_string();
    assert!(alice.listed_handles().await.contains(&handle));
    assert!(!bob.listed_handles().await.contains(&handle));
    assert!(operator.listed_handles().await.contains(&handle));
    let fetched = alice
        .ok("structs_handle_fetch", json!({"handle": handle}))
        .await;
    assert_eq!(fetched["handle"], handle.as_str());
    let refused = bob
        .call("structs_handle_fetch", json!({"handle": handle}))
        .await;
    assert_eq!(
        refused["result"]["structuredContent"]["error"]["code"], "RESOURCE_NOT_FOUND",
        "{refused:#}"
    );
    let uri = format!("structs://handles/{handle}");
    let (_, read) = bob
        .post("resources/read", json!({"uri": uri}), json!({}))
        .await;
    assert!(read["error"].is_object(), "{read:#}");
    let (_, read) = alice
        .post("resources/read", json!({"uri": uri}), json!({}))
        .await;
    assert!(
        read["result"]["contents"][0]["text"].is_string(),
        "{read:#}"
    );
    let (_, listed) = bob.post("resources/list", json!({}), json!({})).await;
    assert!(!listed.to_string().contains(&handle), "{listed:#}");
    let (_, listed) = alice.post("resources/list", json!({}), json!({})).await;
    assert!(listed.to_string().contains(&handle), "{listed:#}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_loopback_without_tokens_a_caller_is_told_apart_by_the_token_it_sends() {
    let server = Headless::start(&["--paused"], &[]).await;
    let one = Caller::new(&server.url, Some("a-secret-of-the-first-client"));
    let other = Caller::new(&server.url, Some("a-secret-of-the-second-client"));
    let anonymous = Caller::new(&server.url, None);
    let id = one.start_search().await;
    assert!(one.listed_tasks().await.contains(&id));
    let listed = one.ok("structs_task_list", json!({})).await;
    let owner = listed["tasks"][0]["owner"].as_str().unwrap();
    assert!(owner.starts_with("key:"), "{owner}");
    assert!(
        !owner.contains("secret"),
        "a digest names it, never the token"
    );
    assert!(!other.listed_tasks().await.contains(&id));
    assert!(!anonymous.listed_tasks().await.contains(&id));
    assert_eq!(
        anonymous.task("tasks/cancel", &id).await["error"]["code"],
        -32602
    );
    // Anonymous callers are one caller: what one makes, the next sees.
    let theirs = anonymous.start_search().await;
    assert!(anonymous.listed_tasks().await.contains(&theirs));
    assert!(!one.listed_tasks().await.contains(&theirs));
    one.task("tasks/cancel", &id).await;
    anonymous.task("tasks/cancel", &theirs).await;
    assert_eq!(one.settle(&id).await["status"], "cancelled");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_callers_searches_are_capped_whatever_requests_carry_them() {
    let (_dir, file) = callers_file();
    let server = Headless::start(&["--paused", "--caller-tokens", &file], &[]).await;
    let alice = Caller::new(&server.url, Some(ALICE));
    let bob = Caller::new(&server.url, Some(BOB));
    let limit = structs_console::context::MAX_POW_PER_CLIENT;
    let mut started = Vec::new();
    for _ in 0..limit {
        started.push(alice.start_search().await);
    }
    // Her next search, in a request of its own, finds her at her limit.
    let over = alice.start_search().await;
    let ended = alice.settle(&over).await;
    assert_eq!(ended["status"], "completed", "{ended:#}");
    let error = &ended["result"]["structuredContent"]["error"];
    assert_eq!(error["code"], "RATE_LIMIT_EXCEEDED", "{ended:#}");
    assert_eq!(error["details"]["limit"], limit, "{ended:#}");
    // Bob's is his own.
    let his = bob.start_search().await;
    assert_eq!(
        bob.task("tasks/get", &his).await["result"]["status"],
        "working"
    );
    for id in &started {
        alice.task("tasks/cancel", id).await;
    }
    bob.task("tasks/cancel", &his).await;
    for id in &started {
        assert_eq!(alice.settle(id).await["status"], "cancelled");
    }
    server.stop().await;
}

/// The first online struct of the demo world.
async fn online_struct(caller: &Caller) -> String {
    let listed = caller
        .ok(
            "structs_list_entities",
            json!({"entity_type": "struct", "page_size": 30}),
        )
        .await;
    for s in listed["structs"].as_array().unwrap() {
        let id = s["Struct"]["id"].as_str().unwrap().to_string();
        let one = caller
            .ok("structs_query_struct", json!({"struct_id": id}))
            .await;
        if one["struct"]["structAttributes"]["isOnline"] == true {
            return id;
        }
    }
    panic!("no online struct in the demo world")
}

/// A call that deactivates struct `id`, with the confirmation's state and answer.
fn deactivate(id: &str, state: Option<&str>) -> Value {
    let mut call = json!({"name": "structs_action_submit_transaction", "arguments": {
        "transaction": {"body": {"messages": [
            {"@type": "/structs.structs.MsgStructDeactivate", "structId": id}]}}}});
    if let Some(state) = state {
        call["requestState"] = json!(state);
        call["inputResponses"] =
            json!({"confirm": {"action": "accept", "content": {"confirm": true}}});
    }
    call
}

fn elicits() -> Value {
    json!({"elicitation": {}})
}

/// What a confirmed call came to: `Ok` when it ran, else the JSON-RPC error code.
fn outcome(answer: &Value) -> Result<(), i64> {
    match answer["error"]["code"].as_i64() {
        Some(code) => Err(code),
        None => {
            assert_eq!(answer["result"]["resultType"], "complete", "{answer:#}");
            Ok(())
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_confirmation_is_spent_once_across_servers_and_concurrent_uses() {
    let Some(redis) = support::redis::RedisServer::start() else {
        return;
    };
    let (_dir, file) = callers_file();
    let store = redis.url();
    let args = [
        "--paused",
        "--confirm-actions",
        "--caller-tokens",
        &file,
        "--handle-store",
        store.as_str(),
    ];
    let key = [(
        "STRUCTS_CONSOLE_STATE_KEY",
        "a-key-both-servers-share-0123456789",
    )];
    let a = Headless::start(&args, &key).await;
    let b = Headless::start(&args, &key).await;
    let alice_a = Caller::new(&a.url, Some(ALICE));
    let alice_b = Caller::new(&b.url, Some(ALICE));
    let bob_a = Caller::new(&a.url, Some(BOB));
    let id = online_struct(&alice_a).await;

    let ask = |caller: Caller, id: String| async move {
        let (_, asked) = caller
            .post("tools/call", deactivate(&id, None), elicits())
            .await;
        assert_eq!(asked["result"]["resultType"], "input_required", "{asked:#}");
        asked["result"]["requestState"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let answer = |caller: Caller, id: String, state: String| async move {
        caller
            .post("tools/call", deactivate(&id, Some(&state)), elicits())
            .await
            .1
    };

    // Alice's state is hers: bob's "yes" with it is refused.
    let state = ask(alice_a.clone(), id.clone()).await;
    let stolen = answer(bob_a.clone(), id.clone(), state.clone()).await;
    assert_eq!(outcome(&stolen), Err(-32602), "{stolen:#}");

    // Three uses at once, on two servers: exactly one runs.
    let uses = [alice_a.clone(), alice_b.clone(), alice_a.clone()]
        .map(|c| tokio::spawn(answer(c, id.clone(), state.clone())));
    let mut outcomes = Vec::new();
    for used in uses {
        let answered = used.await.unwrap();
        outcomes.push(outcome(&answered));
        if outcome(&answered).is_err() {
            let message = answered["error"]["message"].as_str().unwrap();
            assert!(message.contains("spent once"), "{message}");
        }
    }
    outcomes.sort();
    assert_eq!(outcomes, [Ok(()), Err(-32602), Err(-32602)], "{outcomes:?}");

    // Sent again later, to either server: refused, saying why.
    for caller in [alice_a.clone(), alice_b.clone()] {
        let again = answer(caller, id.clone(), state.clone()).await;
        assert_eq!(outcome(&again), Err(-32602), "{again:#}");
        assert_eq!(again["error"]["data"]["requestState"], "spent", "{again:#}");
    }
    // A new question gets a new state, good once.
    let fresh = ask(alice_b.clone(), id.clone()).await;
    assert_ne!(fresh, state);
    let ran = answer(alice_b.clone(), id.clone(), fresh).await;
    assert_eq!(outcome(&ran), Ok(()), "{ran:#}");
    a.stop().await;
    b.stop().await;
}
