//! Session logs end to end: a headless server started with `--record`, a scripted MCP
//! session over stdio, and the log read back with the streaming reader: every call's
//! request and response paired, errors and notifications recorded, runs appended.

mod support;

use std::time::Duration;

use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::json;

use structs_console::record::{Entry, Kind, LogReader, Problem};
use support::mcp::{Updates, call};

async fn server(log: &std::path::Path) -> RunningService<RoleClient, Updates> {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_structs-console"));
    cmd.args(["--headless", "--paused", "--log-level", "warn", "--record"])
        .arg(log);
    Updates::default()
        .serve(TokioChildProcess::new(cmd).unwrap())
        .await
        .unwrap()
}

fn read(path: &std::path::Path) -> (Vec<Entry>, Vec<Problem>) {
    let (mut entries, mut problems) = (Vec::new(), Vec::new());
    for item in LogReader::open(path).unwrap() {
        match item.unwrap() {
            Ok(e) => entries.push(e),
            Err(p) => problems.push(p),
        }
    }
    (entries, problems)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_session_reads_back_call_by_call() {
    let dir = std::env::temp_dir().join(format!("structs-record-e2e-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("session.jsonl");
    let _ = std::fs::remove_file(&log);

    let client = server(&log).await;
    let mut answers = Vec::new();
    for (tool, args) in [
        ("structs_query_entity", json!({"id": "1-1"})),
        ("structs_list_players", json!({"page_size": 3})),
        ("structs_query_entity", json!({"id": "1-999"})),
        ("structs_validate_entity_id", json!({"id": "not an id"})),
    ] {
        answers.push((tool, args.clone(), call(&client, tool, args).await));
    }
    // A subscription and a change: the resource update is recorded as a notification.
    // 5-4, an Ore Refinery of the demo world, is online.
    let online = call(&client, "structs_query_struct", json!({"struct_id": "5-4"}))
        .await
        .0;
    let s = online["struct"].clone();
    assert_eq!(s["structAttributes"]["isOnline"], true);
    let (sid, owner) = (
        s["Struct"]["id"].as_str().unwrap(),
        s["Struct"]["owner"].as_str().unwrap(),
    );
    call(
        &client,
        "structs_subscription_subscribe",
        json!({"entity_type": "player", "entity_id": owner}),
    )
    .await;
    call(
        &client,
        "structs_action_submit_transaction",
        json!({"transaction": {"messages": [
        {"@type": "/structs.structs.MsgStructDeactivate", "structId": sid}]}}),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    client.cancel().await.unwrap();

    let (entries, problems) = read(&log);
    assert!(problems.is_empty(), "{problems:?}");
    let requests: Vec<&Entry> = entries.iter().filter(|e| e.kind == Kind::Request).collect();
    let responses: Vec<&Entry> = entries
        .iter()
        .filter(|e| e.kind == Kind::Response)
        .collect();
    assert_eq!(requests.len(), 7);
    assert_eq!(responses.len(), 7);
    for (i, (tool, args, (answer, failed))) in answers.iter().enumerate() {
        let req = requests[i];
        assert_eq!(req.tool.as_deref(), Some(*tool));
        assert_eq!(req.arguments.as_ref(), Some(args));
        assert_eq!(
            (req.source.as_deref(), req.block_height),
            (Some("sim"), Some(120_000))
        );
        let resp = responses
            .iter()
            .find(|r| r.call == req.call)
            .expect("a response per request");
        assert!(resp.seq > req.seq);
        assert!(resp.duration_ms.is_some());
        if *failed {
            assert_eq!(
                resp.error.as_ref().map(|e| &e["error"]),
                Some(&answer["error"]),
                "{tool}"
            );
            assert!(resp.result.is_none());
        } else {
            assert_eq!(resp.result.as_ref(), Some(answer), "{tool}");
        }
    }
    let updates: Vec<&Entry> = entries
        .iter()
        .filter(|e| e.method.as_deref() == Some("notifications/resources/updated"))
        .collect();
    assert_eq!(updates.len(), 1, "{entries:?}");
    assert_eq!(
        updates[0].params.as_ref().unwrap()["uri"],
        format!("structs://entities/{owner}")
    );
    // seq counts every line of the session, in order.
    let seqs: Vec<u64> = entries.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (1..=entries.len() as u64).collect::<Vec<_>>());

    // A second run appends its own session to the same log.
    let client = server(&log).await;
    call(&client, "structs_query_entity", json!({"id": "2-1"})).await;
    client.cancel().await.unwrap();
    let (all, problems) = read(&log);
    assert!(problems.is_empty());
    assert_eq!(all.len(), entries.len() + 2);
    assert_ne!(all.last().unwrap().session, entries[0].session);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn record_needs_a_writable_file() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_structs-console"))
        .args(["--headless", "--record", "/nonexistent-dir/x.jsonl"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--record: cannot open /nonexistent-dir/x.jsonl"),
        "{err}"
    );
}

fn replay(log: &std::path::Path, extra: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_structs-console"))
        .arg("replay")
        .arg(log)
        .args(extra)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_session_replays_the_same_until_the_world_changes() {
    let dir = std::env::temp_dir().join(format!("structs-replay-e2e-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("session.jsonl");
    let _ = std::fs::remove_file(&log);
    let client = server(&log).await;
    call(&client, "structs_query_entity", json!({"id": "1-1"})).await;
    call(&client, "structs_list_players", json!({"page_size": 100})).await; // a handle
    call(&client, "structs_query_entity", json!({"id": "1-999"})).await;
    let online = call(&client, "structs_query_struct", json!({"struct_id": "5-4"}))
        .await
        .0;
    assert_eq!(online["struct"]["structAttributes"]["isOnline"], true);
    let sid = "5-4".to_string();
    call(
        &client,
        "structs_action_submit_transaction",
        json!({"transaction": {"messages": [
        {"@type": "/structs.structs.MsgStructDeactivate", "structId": sid}]}}),
    )
    .await;
    call(&client, "structs_query_entity", json!({"id": sid})).await;
    client.cancel().await.unwrap();

    // The same world: every answer the same.
    let (code, out, err) = replay(&log, &["--check", "--paused"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("replayed 6 calls"), "{out}");
    assert!(out.contains("6 the same, 0 different"), "{out}");

    // Another world: the differences are listed by call and path, and the exit says so.
    let (code, out, _) = replay(&log, &["--check", "--paused", "--seed", "7"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("different"), "{out}");
    assert!(out.contains("call 1 structs_query_entity"), "{out}");
    assert!(out.contains("~ /entity/Player/"), "{out}");

    // A torn last line is reported, not fatal.
    use std::io::Write as _;
    std::fs::OpenOptions::new()
        .append(true)
        .open(&log)
        .unwrap()
        .write_all(br#"{"v":1,"ts":"2026-"#)
        .unwrap();
    let (code, out, _) = replay(&log, &["--check", "--paused"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("the last line is torn"), "{out}");

    // Without --check the log opens in the console, which needs a terminal: without
    // one it says so and points to --check. A log that is not there is named.
    let (code, _, err) = replay(&log, &[]);
    assert_eq!(code, 2);
    assert!(err.contains("interactive terminal"), "{err}");
    assert!(err.contains("--check"), "{err}");
    let (code, _, err) = replay(&dir.join("missing.jsonl"), &[]);
    assert_eq!(code, 1);
    assert!(err.contains("cannot open the session log"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_call_whose_secret_the_log_does_not_hold_is_not_run_again() {
    let dir = std::env::temp_dir().join(format!("structs-redacted-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("secret.jsonl");
    let _ = std::fs::remove_file(&log);
    let info = structs_console::source::SourceInfo {
        name: "sim",
        description: String::new(),
        block_height: 120_000,
        paused: true,
    };
    let r = structs_console::record::Recorder::open(&log).unwrap();
    let tool = "structs_action_submit_transaction";
    let call = r.request(tool, &json!({"tx_bytes": "CpABCo0B"}), &info);
    r.response(
        call,
        tool,
        Ok(&json!({"txhash": "AB"})),
        Duration::ZERO,
        &info,
    );
    drop(r);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(!text.contains("CpABCo0B"), "{text}");
    let (code, out, err) = replay(&log, &["--check", "--paused"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("replayed 0 calls"), "{out}");
    assert!(
        out.contains("not run again: a structs_action_submit_transaction call, whose tx_bytes the log does not hold"),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
