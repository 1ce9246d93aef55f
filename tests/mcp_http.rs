//! MCP over streamable HTTP, end to end: the built binary serving `--headless --http`,
//! several rmcp clients at once, the bearer token, the binds it refuses, and a session
//! recorded over HTTP replayed with `replay --check`.

mod support;

use std::collections::HashSet;

use serde_json::{Value, json};

use structs_console::record::{Kind, LogReader};
use support::mcp::call;
use support::mcp_http::{Headless, connect};

fn temp(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("structs-http-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn replay(log: &std::path::Path, extra: &[&str]) -> (i32, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_structs-console"))
        .args(["replay", "--check", "--paused", "--log-level", "warn"])
        .arg(log)
        .args(extra)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// Two clients at once: each has its own session, subscriptions and handle list; the
/// log keeps their sessions apart; replaying it on the same world finds no difference
/// and on another world finds them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_have_their_own_sessions_and_the_recording_replays() {
    let dir = temp("sessions");
    let log = dir.join("session.jsonl");
    let log_arg = log.to_str().unwrap();
    let server = Headless::start(
        &["--paused", "--world-size", "200", "--record", log_arg],
        &[],
    )
    .await;
    assert!(
        server.url.starts_with("http://127.0.0.1:"),
        "{}",
        server.url
    );
    assert!(server.url.ends_with("/mcp"), "{}", server.url);

    let a = connect(&server.url, None).await.expect("client a");
    let b = connect(&server.url, None).await.expect("client b");
    let info = a.peer_info().expect("server info");
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("structs-console")
    );
    assert_eq!(
        a.list_all_tools().await.unwrap().len(),
        b.list_all_tools().await.unwrap().len()
    );

    // a makes a handle; only a lists it. b can still fetch it when given it.
    let (page, failed) = call(&a, "structs_list_players", json!({"page_size": 100})).await;
    assert!(!failed, "{page}");
    assert_eq!(page["status"], "partial");
    let handle = page["result_handle"].as_str().unwrap().to_string();
    let (mine, _) = call(&a, "structs_handle_list", json!({})).await;
    assert_eq!(mine["total"], 1, "{mine}");
    assert_eq!(mine["scope"], "this client");
    assert_eq!(mine["handles"][0]["handle"], handle.as_str());
    let (theirs, _) = call(&b, "structs_handle_list", json!({})).await;
    assert_eq!(theirs["total"], 0, "{theirs}");
    let resources: HashSet<String> = b
        .list_all_resources()
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.uri.clone())
        .collect();
    // Resources are the store's namespace: every live handle is listed there, and
    // scope "all" lists them too.
    assert!(resources.contains(&format!("structs://handles/{handle}")));
    let (all, _) = call(&b, "structs_handle_list", json!({"scope": "all"})).await;
    assert_eq!(all["total"], 1, "{all}");
    assert_eq!(all["scope"], "all");
    let (fetched, failed) = call(&b, "structs_handle_fetch", json!({"handle": handle})).await;
    assert!(!failed, "{fetched}");
    assert_eq!(fetched["page_info"]["current_page"], 1);

    // Subscriptions are per client too.
    let (sub, failed) = call(
        &b,
        "structs_subscription_subscribe",
        json!({"entity_type": "player", "entity_id": "1-3"}),
    )
    .await;
    assert!(!failed, "{sub}");
    let (b_subs, _) = call(&b, "structs_subscription_list", json!({})).await;
    let (a_subs, _) = call(&a, "structs_subscription_list", json!({})).await;
    assert_eq!(
        b_subs["subscriptions"].as_array().map(Vec::len),
        Some(1),
        "{b_subs}"
    );
    assert_eq!(
        a_subs["subscriptions"].as_array().map(Vec::len),
        Some(0),
        "{a_subs}"
    );

    // Calls in flight from both at once.
    let (ra, rb) = tokio::join!(
        call(&a, "structs_query_player", json!({"player_id": "1-1"})),
        call(&b, "structs_query_player", json!({"player_id": "1-2"}))
    );
    assert_eq!(ra.0["player"]["Player"]["id"], "1-1");
    assert_eq!(rb.0["player"]["Player"]["id"], "1-2");
    let (bad, failed) = call(&a, "structs_query_player", json!({"player_id": "2-1"})).await;
    assert!(failed);
    assert_eq!(bad["error"]["code"], "VALIDATION_WRONG_ENTITY_TYPE");

    a.cancel().await.unwrap();
    b.cancel().await.unwrap();
    let status = server.stop().await;
    assert!(status.success(), "{status:?}");

    // The log: both sessions, each call's request and response within its session.
    let mut sessions: HashSet<String> = HashSet::new();
    let mut requests = 0;
    let mut responses = 0;
    for item in LogReader::open(&log).unwrap() {
        let entry = item.unwrap().expect("every line is an entry");
        sessions.insert(entry.session.clone());
        match entry.kind {
            Kind::Request => requests += 1,
            Kind::Response => responses += 1,
            Kind::Notification | Kind::Round | Kind::Task => {}
        }
    }
    assert_eq!(sessions.len(), 2, "{sessions:?}");
    assert_eq!((requests, responses), (11, 11));

    // Replayed on the same world: the same answers.
    let (code, text) = replay(&log, &["--world-size", "200"]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("11 the same, 0 different"), "{text}");
    // On another world: the players differ, and the check fails.
    let (code, text) = replay(&log, &["--world-size", "200", "--seed", "7"]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("structs_query_player"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// With a token, every request needs it: none and a wrong one get 400 (not 401, which
/// MCP hosts take as a call to start OAuth) with no `WWW-Authenticate`, and a JSON-RPC
/// error (id `null`) whose message says which header to set; the right one works, for
/// rmcp's client as for a raw request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_without_the_token_are_refused() {
    let token = "correct-horse-battery-staple";
    let server = Headless::start(&["--paused"], &[("STRUCTS_CONSOLE_AUTH_TOKEN", token)]).await;
    let init = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "0"}}
    });
    // reqwest needs a crypto provider, which `connect` would install: this test builds
    // its client first (run alone, it panicked).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::new();
    let post = |auth: Option<String>| {
        let mut req = http
            .post(&server.url)
            .header("accept", "application/json, text/event-stream")
            .json(&init);
        if let Some(a) = auth {
            req = req.header("authorization", a);
        }
        req.send()
    };
    for (auth, reason) in [
        (None, "needs `Authorization: Bearer TOKEN`"),
        (
            Some("Bearer wrong-token-wrong-token".to_string()),
            "not this server's",
        ),
        (
            Some(format!("Basic {token}")),
            "needs `Authorization: Bearer TOKEN`",
        ),
        (Some(format!("Bearer {token}x")), "not this server's"),
    ] {
        let resp = post(auth.clone()).await.unwrap();
        assert_eq!(resp.status(), 400, "{auth:?}");
        assert!(
            !resp.headers().contains_key("www-authenticate"),
            "no challenge, which would start OAuth: {auth:?}"
        );
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["jsonrpc"], "2.0", "{body}");
        assert!(
            body.as_object().unwrap().contains_key("id") && body["id"].is_null(),
            "JSON-RPC 2.0's `\"id\": null`: {body}"
        );
        assert_eq!(body["error"]["code"], -32600, "{body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains(reason), "{auth:?}: {message}");
        // What to configure, whichever the mistake.
        assert!(
            message.contains("`Authorization: Bearer TOKEN`")
                && message.contains("--auth-token or STRUCTS_CONSOLE_AUTH_TOKEN"),
            "{message}"
        );
        assert!(!message.contains(token), "the token is never echoed");
        let error = &body["error"]["data"]["error"];
        assert_eq!(error["code"], "UNAUTHORIZED", "{body}");
        assert_eq!(error["message"], message, "{body}");
        assert_eq!(error["details"]["field"], "Authorization", "{body}");
    }
    // A GET (the event stream) is guarded too.
    let resp = http.get(&server.url).send().await.unwrap();
    assert_eq!(resp.status(), 400);
    assert!(!resp.headers().contains_key("www-authenticate"));

    // rmcp's client without the token cannot initialize, and says why; with it, it can.
    let Err(refused) = connect(&server.url, None).await else {
        panic!("initialized without the token");
    };
    assert!(
        refused.to_string().contains("Authorization: Bearer TOKEN"),
        "{refused}"
    );
    let Err(refused) = connect(&server.url, Some("not-the-token-at-all")).await else {
        panic!("initialized with a wrong token");
    };
    assert!(
        refused.to_string().contains("not this server's"),
        "{refused}"
    );
    let client = connect(&server.url, Some(token))
        .await
        .expect("with the token");
    let (player, failed) = call(&client, "structs_query_player", json!({"player_id": "1-1"})).await;
    assert!(!failed);
    assert_eq!(player["player"]["Player"]["id"], "1-1");
    // The right token in a raw request gets past the check to MCP itself.
    let resp = post(Some(format!("bearer {token}"))).await.unwrap();
    assert_eq!(resp.status(), 200);
    client.cancel().await.unwrap();
    assert!(server.stop().await.success());
}

fn refused(args: &[&str], token: Option<&str>) -> String {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_structs-console"));
    cmd.args(["--headless", "--paused", "--log-level", "warn"])
        .args(args)
        .env_remove("STRUCTS_CONSOLE_AUTH_TOKEN")
        .stdin(std::process::Stdio::null());
    if let Some(t) = token {
        cmd.env("STRUCTS_CONSOLE_AUTH_TOKEN", t);
    }
    let out = cmd.output().unwrap();
    assert!(!out.status.success(), "{args:?} must not start");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A non-loopback address needs the flag and a token; a short token is refused.
#[test]
fn binds_beyond_loopback_need_a_flag_and_a_token() {
    let err = refused(&["--http", "0.0.0.0:0"], None);
    assert!(err.contains("not a loopback address"), "{err}");
    assert!(err.contains("--http-allow-remote"), "{err}");
    let err = refused(&["--http", "0.0.0.0:0", "--http-allow-remote"], None);
    assert!(err.contains("needs a bearer token"), "{err}");
    let err = refused(&["--http", "127.0.0.1:0"], Some("short"));
    assert!(err.contains("at least 16"), "{err}");
    assert!(!err.contains("short\""), "{err}");
    // A token read from a file with its newline: clients trim it, so it could never match.
    let err = refused(
        &["--http", "127.0.0.1:0"],
        Some("s3cret-token-0123456789\n"),
    );
    assert!(err.contains("white space at character 24"), "{err}");
    assert!(!err.contains("s3cret"), "the token is never echoed: {err}");
    // --http is a headless option.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_structs-console"))
        .args(["--http", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
}

/// With the flag and a token, a non-loopback bind serves, and still asks for the token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_bind_with_a_token_serves() {
    let token = "0123456789abcdef0123";
    let mut server = Headless::start(
        &["--paused", "--http", "0.0.0.0:0", "--http-allow-remote"],
        &[("STRUCTS_CONSOLE_AUTH_TOKEN", token)],
    )
    .await;
    // It printed the address it bound; reach it over loopback.
    let port = server
        .url
        .rsplit(':')
        .next()
        .unwrap()
        .trim_end_matches("/mcp");
    server.url = format!("http://127.0.0.1:{port}/mcp");
    assert!(connect(&server.url, None).await.is_err());
    let client = connect(&server.url, Some(token))
        .await
        .expect("with the token");
    assert!(!client.list_all_tools().await.unwrap().is_empty());
    client.cancel().await.unwrap();
    assert!(server.stop().await.success());
}

/// `/health` answers without the token, with no player data, and counts sessions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_answers_without_the_token_and_counts_sessions() {
    let token = "0123456789abcdef0123";
    let server = Headless::start(&["--paused"], &[("STRUCTS_CONSOLE_AUTH_TOKEN", token)]).await;
    let health_url = server.url.replace("/mcp", "/health");
    let _ = rustls::crypto::ring::default_provider().install_default();
    let get = || async {
        let r = reqwest::get(&health_url).await.expect("GET /health");
        assert_eq!(r.status(), 200);
        r.json::<serde_json::Value>().await.expect("JSON")
    };
    let before = get().await;
    assert_eq!(before["status"], "ok");
    assert_eq!(before["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(before["source"], "sim");
    assert_eq!(before["block_height"], 120_000);
    assert_eq!(before["paused"], true);
    assert_eq!(before["sessions"], 0);
    assert_eq!(before["streams"], 0);
    let keys: Vec<&String> = before.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "status",
            "version",
            "source",
            "block_height",
            "paused",
            "sessions",
            "streams",
            "proof_of_work"
        ],
        "nothing more: no player data"
    );
    let pow = before["proof_of_work"].as_object().unwrap();
    assert_eq!(
        pow.keys().collect::<Vec<_>>(),
        ["engine", "threads", "hashing", "searches"]
    );
    // No search has run: the engine is chosen at the first.
    assert_eq!(pow["engine"], "cpu");
    assert!(pow["threads"].as_u64().unwrap() >= 1);
    // The MCP endpoint still wants the token.
    assert!(connect(&server.url, None).await.is_err());
    let client = connect(&server.url, Some(token))
        .await
        .expect("with the token");
    assert_eq!(get().await["sessions"], 1);
    client.cancel().await.unwrap();
    assert!(server.stop().await.success());
}

/// `--pow-backend gpu`: the server hashes on the GPU wgpu prefers (lavapipe in CI), and
/// both the proof's `kernel` and `/health`'s engine name the adapter. The proof is one
/// the chain accepts. Where there is no GPU at all (not CI), both say the CPU.
#[cfg(feature = "gpu")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_on_the_gpu_names_the_adapter_in_proofs_and_health() {
    let gpu = structs_console::pow::gpu::Gpu::open().map(|g| format!("gpu: {}", g.describe()));
    let server = Headless::start(&["--paused", "--pow-backend", "gpu"], &[]).await;
    let client = connect(&server.url, None).await.expect("connect");
    // Difficulty 5 (age 480 of a range of 700): about a million hashes, past the
    // smallest batches, so the layout's own kernel runs too.
    let (proof, failed) = call(
        &client,
        "structs_calculate_proof_of_work",
        json!({"action_type": "struct_build_complete", "entity_id": "5-1",
               "difficulty": 700, "block_start": 1, "age": 480,
               "max_iterations": 100_000_000u64}),
    )
    .await;
    assert!(!failed, "{proof:#}");
    assert_eq!(proof["difficulty"], 5, "{proof:#}");
    let input = proof["input"].as_str().unwrap();
    let check = structs_console::pow::check(input, proof["hash"].as_str().unwrap(), 5);
    assert!(check.valid(), "{check:?}");
    let _ = rustls::crypto::ring::default_provider().install_default();
    let health: Value = reqwest::get(server.url.replace("/mcp", "/health"))
        .await
        .expect("GET /health")
        .json()
        .await
        .expect("JSON");
    let engine = &health["proof_of_work"]["engine"];
    match gpu {
        Ok(adapter) => {
            assert_eq!(proof["kernel"], adapter, "{proof:#}");
            assert_eq!(engine, &adapter);
        }
        Err(why) => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI installs lavapipe: {why}"
            );
            assert_eq!(engine, "cpu");
            assert!(!proof["kernel"].as_str().unwrap().starts_with("gpu"));
        }
    }
    client.cancel().await.unwrap();
    assert!(server.stop().await.success());
}
