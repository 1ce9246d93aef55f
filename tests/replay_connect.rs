//! `replay FILE --check --connect TARGET`: a session recorded through the tap in front
//! of any MCP server runs again against that server, so the recording is a regression
//! test of the server. Checked against a server written with the official Python SDK
//! (the same server passes, a deliberate change to it is caught) and against the
//! project's own server in both protocol eras.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use support::peers::Peers;

const BIN: &str = env!("CARGO_BIN_EXE_structs-console");

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("structs-replay-connect-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    path
}

/// One call of `structs-console client`, made through the tap in front of `server`
/// (a command line), recorded in `log`.
fn call_through_the_tap(log: &Path, server: &str, options: &[&str], tool: &str, args: &str) {
    let tapped = format!("{BIN} proxy --record {} -- {server}", log.display());
    let out = Command::new(BIN)
        .arg("client")
        .args(options)
        .args(["--connect", &tapped, "call", tool, "--args", args])
        .stdin(Stdio::null())
        .output()
        .expect("run the client");
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn replay(log: &Path, target: &str) -> Output {
    Command::new(BIN)
        .args(["replay"])
        .arg(log)
        .args(["--check", "--connect", target])
        .stdin(Stdio::null())
        .output()
        .expect("run replay")
}

fn said(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn a_recording_of_a_python_sdk_server_checks_it_and_catches_a_change() {
    let Some(peers) = Peers::find() else { return };
    let server = format!(
        "{} {}/tests/data/python_rounds_server.py",
        peers.python().display(),
        env!("CARGO_MANIFEST_DIR")
    );
    let log = scratch("python.jsonl");
    for args in [r#"{"a": 1, "b": 2}"#, r#"{"a": 40, "b": 2}"#] {
        call_through_the_tap(&log, &server, &[], "add", args);
    }
    // One the server runs as a task: one call in the log, its statuses as task lines.
    call_through_the_tap(&log, &server, &[], "slow_square", r#"{"n": 6}"#);
    let lines: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let statuses: Vec<&str> = lines
        .iter()
        .filter(|l| l["type"] == "task")
        .map(|l| l["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses.first(), Some(&"working"), "{lines:#?}");
    assert_eq!(statuses.last(), Some(&"completed"), "{lines:#?}");
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "response", "{last:#}");
    assert_eq!(last["result"]["result"], 36, "{last:#}");
    let same = replay(&log, &server);
    let text = said(&same);
    assert!(same.status.success(), "{text}");
    assert!(
        text.contains("replayed 3 calls") && text.contains("3 the same, 0 different"),
        "{text}"
    );
    assert!(text.contains("rounds-fixture"), "names the server: {text}");

    // The same server with a bug: each sum off by one. Both calls differ, and say where.
    let skewed = format!("env ROUNDS_FIXTURE_SKEW=1 {server}");
    let changed = replay(&log, &skewed);
    let text = said(&changed);
    assert_eq!(changed.status.code(), Some(1), "{text}");
    assert!(text.contains("0 the same, 3 different"), "{text}");
    assert!(
        text.contains("add") && text.contains("slow_square"),
        "{text}"
    );
}

#[test]
fn a_recording_of_our_own_server_checks_it_in_both_eras() {
    let server = format!("{BIN} --headless --paused --log-level warn");
    for (era, options) in [
        ("2026", &[][..]),
        ("2025", &["--protocol-version", "2025-11-25"][..]),
    ] {
        let log = scratch(&format!("ours-{era}.jsonl"));
        call_through_the_tap(
            &log,
            &server,
            options,
            "structs_query_player",
            r#"{"player_id": "1-1"}"#,
        );
        call_through_the_tap(
            &log,
            &server,
            options,
            "structs_query_struct_type",
            r#"{"struct_type": 14}"#,
        );
        let out = replay(&log, &server);
        let text = said(&out);
        assert!(out.status.success(), "{era}: {text}");
        assert!(text.contains("2 the same, 0 different"), "{era}: {text}");
        // Another world is another answer.
        let other = replay(&log, &format!("{server} --seed 7"));
        assert_eq!(other.status.code(), Some(1), "{era}: {}", said(&other));
    }
}

#[test]
fn a_server_that_cannot_be_reached_is_said_plainly() {
    let log = scratch("unreached.jsonl");
    std::fs::write(&log, "").unwrap();
    let out = replay(&log, "http://127.0.0.1:9/mcp");
    assert!(!out.status.success());
    let text = said(&out);
    assert!(text.contains("cannot attach to the server"), "{text}");
}

/// A call a 2026-07-28 server asks input for is one call in the tap's log, its round
/// a line with what was asked and answered; replayed, the server's question gets the
/// answer the agent gave, so the same server gives the same answer.
#[test]
fn a_call_in_rounds_is_one_call_in_the_log_and_replays_with_the_agents_answers() {
    let Some(peers) = Peers::find() else { return };
    let server = format!(
        "{} {}/tests/data/python_rounds_server.py",
        peers.python().display(),
        env!("CARGO_MANIFEST_DIR")
    );
    let log = scratch("rounds.jsonl");
    call_through_the_tap(
        &log,
        &server,
        &["--elicitation", "accept-defaults"],
        "confirm_delete",
        r#"{"name": "x"}"#,
    );
    let lines: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // The tool call's lines (the client's handshake and lists are logged too, each a
    // request with its method).
    let others: std::collections::HashSet<u64> = lines
        .iter()
        .filter(|l| l["type"] == "request" && !l["method"].is_null())
        .filter_map(|l| l["call"].as_u64())
        .collect();
    let lines: Vec<Value> = lines
        .into_iter()
        .filter(|l| !l["call"].as_u64().is_some_and(|c| others.contains(&c)))
        .filter(|l| l["type"] != "notification")
        .collect();
    let kinds: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["request", "round", "response"], "{lines:#?}");
    assert!(
        lines
            .iter()
            .all(|l| l["v"] == structs_console::record::VERSION && l["call"] == lines[0]["call"]),
        "{lines:#?}"
    );
    // The request keeps the `_meta` the host sent: a 2026-07-28 client's every
    // request says its version and capabilities.
    let meta = &lines[0]["meta"];
    assert_eq!(
        meta["io.modelcontextprotocol/protocolVersion"], "2026-07-28",
        "{meta:#}"
    );
    assert!(
        meta["io.modelcontextprotocol/clientCapabilities"].is_object(),
        "{meta:#}"
    );
    let round = &lines[1];
    assert_eq!(round["round"], 1);
    let (key, asked) = round["input_requests"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .unwrap();
    assert_eq!(asked["method"], "elicitation/create");
    assert_eq!(round["input_responses"][key]["action"], "accept");
    assert_eq!(lines[2]["result"]["result"], "deleted x", "{:#}", lines[2]);

    // Replayed: the server asks again, and gets the agent's yes from the log.
    let out = replay(&log, &server);
    let text = said(&out);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("1 the same, 0 different"), "{text}");
    assert!(text.contains("1 round of input"), "{text}");
}

/// A call the server ran as a task is one call in the tap's log: its task's statuses
/// between its request and its response, the response the task's result; replayed,
/// the client follows the task again to the same answer.
#[test]
fn a_call_run_as_a_task_is_one_call_in_the_log_and_replays() {
    let server = format!("{BIN} --headless --paused --log-level warn");
    let log = scratch("task.jsonl");
    let plan = r#"{"steps": [{"tool": "structs_query_player", "params": {"player_id": "1-1"}}]}"#;
    call_through_the_tap(&log, &server, &[], "structs_plan_execute", plan);
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // The tool call's lines (the client's handshake and lists are logged too, each
    // a request with its method).
    let others: std::collections::HashSet<u64> = lines
        .iter()
        .filter(|l: &&Value| l["type"] == "request" && !l["method"].is_null())
        .filter_map(|l| l["call"].as_u64())
        .collect();
    let lines: Vec<Value> = lines
        .into_iter()
        .filter(|l: &Value| !l["call"].as_u64().is_some_and(|c| others.contains(&c)))
        .filter(|l: &Value| l["type"] != "notification")
        .collect();
    let kinds: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(kinds.first(), Some(&"request"), "{lines:#?}");
    assert_eq!(kinds.last(), Some(&"response"), "{lines:#?}");
    let statuses: Vec<&str> = lines
        .iter()
        .filter(|l| l["type"] == "task")
        .map(|l| l["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses.first(), Some(&"working"), "{lines:#?}");
    assert_eq!(statuses.last(), Some(&"completed"), "{lines:#?}");
    assert!(
        lines.iter().all(|l| l["call"] == lines[0]["call"]),
        "one call: {lines:#?}"
    );
    let answer = &lines.last().unwrap()["result"];
    assert_eq!(answer["steps"][0]["status"], "succeeded", "{answer:#}");

    let out = replay(&log, &server);
    let text = said(&out);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("1 the same, 0 different"), "{text}");
}

/// The console's Replay tab, attached to a server (`replay FILE --connect TARGET`
/// without `--check`), runs a recording again against that server: the server's
/// question gets the agent's recorded answer, so no one is asked, and the same server
/// gives the same answers; a changed one is caught in the tab.
#[test]
fn the_replay_tab_runs_a_recording_again_against_the_server_it_is_attached_to() {
    use structs_console::mcp::client::{Options, Remote, Target};
    use structs_console::tui::{App, Theme};

    let Some(peers) = Peers::find() else { return };
    let script = format!(
        "{}/tests/data/python_rounds_server.py",
        env!("CARGO_MANIFEST_DIR")
    );
    let server = format!("{} {script}", peers.python().display());
    let log = scratch("tab.jsonl");
    call_through_the_tap(
        &log,
        &server,
        &["--elicitation", "accept-defaults"],
        "confirm_delete",
        r#"{"name": "x"}"#,
    );
    call_through_the_tap(&log, &server, &[], "add", r#"{"a": 2, "b": 2}"#);
    // Every request of the log gets a verdict: the two tool calls run again, the
    // clients' other requests (their handshakes and lists) said not to be.
    let requests = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter(|l| serde_json::from_str::<Value>(l).is_ok_and(|v| v["type"] == "request"))
        .count();
    assert!(requests > 2, "the handshakes are logged too: {requests}");
    for (skew, differ) in [("0", 0), ("1", 1)] {
        let rt = support::console::runtime();
        let target = Target::Command(vec![
            "env".into(),
            format!("ROUNDS_FIXTURE_SKEW={skew}"),
            peers.python().display().to_string(),
            script.clone(),
        ]);
        let remote = rt
            .block_on(Remote::connect_with_options(target, Options::default()))
            .expect("attach to the Python server");
        let core = structs_console::mcp::client::attached_core(
            remote.clone(),
            structs_console::clock::WallClock::Fixed(support::console::wall()),
        );
        let mut app =
            App::new(core, Theme::default(), rt.handle().clone()).with_server(remote.clone());
        app.open_log(&log).expect("open the log");
        app.settle_log();
        app.handle_key(crossterm::event::KeyEvent::new(
            crossterm::event::KeyCode::Char('a'),
            crossterm::event::KeyModifiers::NONE,
        ));
        let start = std::time::Instant::now();
        while app.replay_verdicts().0 < requests {
            app.update();
            assert!(
                start.elapsed() < std::time::Duration::from_secs(20),
                "skew {skew}: the run did not end: {:?}\n{}",
                app.replay_verdicts(),
                support::console::draw(&mut app, 100, 30)
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_eq!(app.replay_verdicts(), (requests, differ), "skew {skew}");
        // The question was answered from the log: the operator was asked nothing.
        assert_eq!(remote.asks().count(), 0, "skew {skew}");
        let sent: Vec<String> = remote
            .wire()
            .messages()
            .iter()
            .filter(|m| m.method == "tools/call")
            .map(|m| m.text.clone())
            .collect();
        assert!(
            sent.iter()
                .any(|t| t.contains("inputResponses") && t.contains(r#""confirm":true"#)),
            "skew {skew}: {sent:#?}"
        );
    }
}

/// The Python SDK's server over streamable HTTP: the agent's session recorded through
/// the bridge (`proxy --upstream URL`, its stdio host's 2026-07-28 requests sent with
/// the headers their bodies say), then replayed against the URL. A round and a task
/// included; the same server passes, a changed one is caught.
#[test]
fn a_recording_of_a_python_sdk_server_over_http_checks_it_and_catches_a_change() {
    let Some(peers) = Peers::find() else { return };
    let serve = |skew: &str| {
        let port = support::daemon::free_port();
        let child = Command::new(peers.python())
            .arg(format!(
                "{}/tests/data/python_rounds_server.py",
                env!("CARGO_MANIFEST_DIR")
            ))
            .args(["http", &port.to_string()])
            .env("ROUNDS_FIXTURE_SKEW", skew)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the Python server");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "the Python server never listened"
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        (child, format!("http://127.0.0.1:{port}/mcp"))
    };
    let (mut same, url) = serve("0");
    let log = scratch("python-http.jsonl");
    let bridge = format!(
        "{BIN} proxy --no-control --record {} --upstream {url}",
        log.display()
    );
    for (options, tool, args) in [
        (&[][..], "add", r#"{"a": 1, "b": 2}"#),
        (
            &["--elicitation", "accept-defaults"][..],
            "confirm_delete",
            r#"{"name": "x"}"#,
        ),
        (&[][..], "slow_square", r#"{"n": 3}"#),
    ] {
        let out = Command::new(BIN)
            .arg("client")
            .args(options)
            .args(["--connect", &bridge, "call", tool, "--args", args])
            .stdin(Stdio::null())
            .output()
            .expect("run the client");
        assert!(out.status.success(), "{tool}: {}", said(&out));
    }
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // The agent spoke 2026-07-28 through the bridge (without the revision's headers
    // the server refused it, and the client fell back to 2025-11-25).
    for request in lines.iter().filter(|l| l["type"] == "request") {
        assert_eq!(
            request["meta"]["io.modelcontextprotocol/protocolVersion"], "2026-07-28",
            "{request:#}"
        );
    }
    assert!(lines.iter().any(|l| l["type"] == "round"), "{lines:#?}");
    assert!(lines.iter().any(|l| l["type"] == "task"), "{lines:#?}");
    let out = replay(&log, &url);
    let text = said(&out);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("3 the same, 0 different"), "{text}");
    let (mut skewed, other) = serve("1");
    let out = replay(&log, &other);
    let text = said(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("1 the same, 2 different"), "{text}");
    for child in [&mut same, &mut skewed] {
        let _ = child.kill();
        let _ = child.wait();
    }
}
