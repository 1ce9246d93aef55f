//! `structs-console client` in rounds and tasks. A server that needs something of the
//! client before it answers (a person's yes, a model's reply, the client's roots) asks
//! for it with `input_required` under 2026-07-28, and the client answers each round by
//! its flags and sends the request again. Checked against a 2026-era server written
//! with the official Python SDK (tests/data/python_rounds_server.py), over stdio and
//! HTTP; under 2025-11-25, where the same server asks mid-call; against the project's
//! own server; and against one that never stops asking. Long work a server answers as
//! a task (the Tasks extension, which the client declares) is followed to its end,
//! cancelled by an interrupt, and given the input it waits on.

mod support;

use std::process::{Command, Output, Stdio};

use serde_json::Value;
use support::peers::Peers;

const BIN: &str = env!("CARGO_BIN_EXE_structs-console");

fn server(peers: &Peers) -> String {
    format!(
        "{} {}/tests/data/python_rounds_server.py",
        peers.python().display(),
        env!("CARGO_MANIFEST_DIR")
    )
}

/// Runs `structs-console client OPTIONS --connect TARGET ARGS…`.
fn client(target: &str, options: &[&str], args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("client")
        .args(options)
        .args(["--connect", target])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run structs-console client")
}

/// The answer on stdout, whether it exited 0, and the rounds reported on stderr.
fn outcome(out: &Output) -> (Value, bool, Vec<Value>) {
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    let answer = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}\nstderr:\n{err}"));
    let rounds = err
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| v.get("input_required").cloned())
        .collect();
    (answer, out.status.success(), rounds)
}

fn text_of(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or("")
}

/// Each kind of input request, answered by the flags, over one transport.
fn every_kind_is_answered(target: &str) {
    let root = std::env::temp_dir();
    let root = root.to_str().unwrap();
    let yes = client(
        target,
        &["--elicitation", "accept-defaults"],
        &["call", "confirm_delete", "--args", r#"{"name": "x"}"#],
    );
    let (answer, ok, rounds) = outcome(&yes);
    assert!(ok, "{answer:#}");
    assert_eq!(text_of(&answer), "deleted x", "{answer:#}");
    assert_eq!(rounds.len(), 1, "{rounds:#?}");
    let round = &rounds[0];
    assert_eq!(
        (&round["method"], &round["round"]),
        (&"tools/call".into(), &1.into())
    );
    let (key, asked) = round["inputRequests"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .unwrap();
    assert_eq!(asked["method"], "elicitation/create", "{round:#}");
    assert_eq!(asked["params"]["message"], "Delete x?");
    assert_eq!(
        round["inputResponses"][key]["action"], "accept",
        "{round:#}"
    );
    assert_eq!(round["inputResponses"][key]["content"]["confirm"], true);

    // A no: the server's tool refuses, and the client says so.
    let no = client(
        target,
        &[],
        &["call", "confirm_delete", "--args", r#"{"name": "x"}"#],
    );
    let (answer, ok, rounds) = outcome(&no);
    assert!(!ok && answer["isError"] == true, "{answer:#}");
    assert!(text_of(&answer).contains("decline"), "{answer:#}");
    assert_eq!(rounds.len(), 1);

    let sampled = client(
        target,
        &["--sampling-reply", "short"],
        &["call", "summarize", "--args", r#"{"text": "a long text"}"#],
    );
    let (answer, ok, rounds) = outcome(&sampled);
    assert!(ok, "{answer:#}");
    assert_eq!(text_of(&answer), "summary: short");
    let response = rounds[0]["inputResponses"]
        .as_object()
        .unwrap()
        .values()
        .next()
        .unwrap();
    assert_eq!(response["content"]["text"], "short", "{rounds:#?}");
    assert_eq!(response["role"], "assistant");

    // A sampling request the flags reject: the request is not sent again, and the
    // error says why, naming the round.
    let rejected = client(
        target,
        &[],
        &["call", "summarize", "--args", r#"{"text": "t"}"#],
    );
    let (answer, ok, _) = outcome(&rejected);
    assert!(!ok);
    assert_eq!(
        answer["error"]["code"], "TOOL_EXECUTION_FAILED",
        "{answer:#}"
    );
    let said = answer["error"]["message"].as_str().unwrap();
    assert!(
        said.contains("not asked again") && said.contains("round 1"),
        "{said}"
    );

    let roots = client(target, &["--root", root], &["call", "count_roots"]);
    let (answer, ok, rounds) = outcome(&roots);
    assert!(ok, "{answer:#}");
    assert_eq!(text_of(&answer), "1 roots");
    let listed = rounds[0]["inputResponses"]
        .as_object()
        .unwrap()
        .values()
        .next()
        .unwrap();
    assert!(
        listed["roots"][0]["uri"]
            .as_str()
            .unwrap()
            .starts_with("file://")
    );

    // A tool that asks nothing takes no round.
    let plain = client(
        target,
        &[],
        &["call", "add", "--args", r#"{"a": 2, "b": 3}"#],
    );
    let (answer, ok, rounds) = outcome(&plain);
    assert!(ok && rounds.is_empty(), "{answer:#} {rounds:#?}");
    assert_eq!(text_of(&answer), "5");

    // A tool the server runs as a task (the client declares the extension): the
    // task's result is the answer, its statuses the lifecycle on stderr.
    let task = client(
        target,
        &[],
        &["call", "slow_square", "--args", r#"{"n": 4}"#],
    );
    let (answer, ok, _) = outcome(&task);
    assert!(ok, "{answer:#}");
    assert_eq!(text_of(&answer), "16", "{answer:#}");
    let statuses: Vec<String> = task_lines(&task)
        .iter()
        .filter_map(|t| t["status"].as_str().map(str::to_string))
        .collect();
    assert_eq!(
        (
            statuses.first().map(String::as_str),
            statuses.last().map(String::as_str)
        ),
        (Some("working"), Some("completed")),
        "{statuses:?}"
    );
}

#[test]
fn the_python_sdks_2026_server_is_answered_in_rounds_over_stdio() {
    let Some(peers) = Peers::find() else { return };
    let target = server(&peers);
    every_kind_is_answered(&target);
    // Under 2025-11-25 the same server asks mid-call instead: the same answers, and
    // no round.
    let old = client(
        &target,
        &[
            "--protocol-version",
            "2025-11-25",
            "--elicitation",
            "accept-defaults",
        ],
        &["call", "confirm_delete", "--args", r#"{"name": "y"}"#],
    );
    let (answer, ok, rounds) = outcome(&old);
    assert!(ok, "{answer:#}");
    assert_eq!(text_of(&answer), "deleted y");
    assert!(rounds.is_empty(), "{rounds:#?}");
}

#[test]
fn the_python_sdks_2026_server_is_answered_in_rounds_over_http() {
    let Some(peers) = Peers::find() else { return };
    let port = support::daemon::free_port();
    let mut child = Command::new(peers.python())
        .arg(format!(
            "{}/tests/data/python_rounds_server.py",
            env!("CARGO_MANIFEST_DIR")
        ))
        .args(["http", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the Python server");
    let url = format!("http://127.0.0.1:{port}/mcp");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "the Python server never listened"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    every_kind_is_answered(&url);
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn our_own_server_asks_to_confirm_in_a_round() {
    let target = format!("{BIN} --headless --paused --log-level warn --confirm-actions");
    let tx = r#"{"transaction": {"body": {"messages": [
        {"@type": "/structs.structs.MsgStructDeactivate", "structId": "5-1"}]}}}"#;
    let out = client(
        &target,
        &[],
        &["call", "structs_action_submit_transaction", "--args", tx],
    );
    let (answer, ok, rounds) = outcome(&out);
    assert!(!ok, "{answer:#}");
    assert_eq!(
        answer["structuredContent"]["error"]["code"], "TOOL_CANCELLED",
        "{answer:#}"
    );
    assert_eq!(rounds.len(), 1, "{rounds:#?}");
    assert_eq!(
        rounds[0]["inputRequests"]["confirm"]["method"],
        "elicitation/create"
    );
    assert_eq!(rounds[0]["inputResponses"]["confirm"]["action"], "decline");
}

#[test]
fn a_server_that_never_stops_asking_is_given_up_after_the_cap() {
    let target = format!(
        "python3 {}/tests/data/hostile_server.py ask-forever",
        env!("CARGO_MANIFEST_DIR")
    );
    let out = client(
        &target,
        &["--elicitation", "accept-defaults"],
        &["call", "echo"],
    );
    let (answer, ok, rounds) = outcome(&out);
    assert!(!ok);
    assert_eq!(
        answer["error"]["code"], "TOOL_EXECUTION_FAILED",
        "{answer:#}"
    );
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("after 8 rounds"),
        "{answer:#}"
    );
    assert_eq!(answer["error"]["details"]["rounds"], 8);
    assert_eq!(rounds.len(), 8);
    // Each retry carried the state the server gave, as it came: the server counts
    // with it.
    assert_eq!(rounds[7]["round"], 8);
    assert_eq!(
        rounds[7]["inputRequests"]["again"]["params"]["message"],
        "once more? (8)"
    );
}

/// The task lines reported on stderr: each status seen, and each answer given.
fn task_lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| v.get("task").cloned())
        .collect()
}

const QUICK: &str = r#"{"action_type": "struct_build_complete", "entity_id": "5-1",
    "difficulty": 700, "block_start": 1, "age": 600}"#;
const HARD: &str = r#"{"action_type": "struct_build_complete", "entity_id": "5-1",
    "difficulty": 100000000, "block_start": 1, "age": 1, "max_iterations": 1000000000000}"#;

#[test]
fn our_own_servers_long_work_is_a_task_followed_to_its_end() {
    let target = format!("{BIN} --headless --paused --log-level warn");
    let out = client(
        &target,
        &[],
        &["call", "structs_calculate_proof_of_work", "--args", QUICK],
    );
    let (answer, ok, _) = outcome(&out);
    assert!(ok, "{answer:#}");
    assert_eq!(answer["structuredContent"]["valid"], true, "{answer:#}");
    let lines = task_lines(&out);
    let ends: Vec<&str> = lines
        .iter()
        .filter_map(|t| t["status"].as_str())
        .filter(|s| *s != "working")
        .collect();
    // It may end before the first poll; it always says how it ended.
    assert_eq!(ends, ["completed"], "{lines:#?}");
    let first = &lines[0];
    assert_eq!(first["method"], "tools/call");
    assert_eq!(
        first["taskId"].as_str().map(str::len),
        Some(32),
        "{first:#}"
    );
}

#[test]
fn an_interrupt_cancels_the_task_on_the_server() {
    let target = format!("{BIN} --headless --paused --log-level warn");
    let child = Command::new(BIN)
        .args(["client", "--connect", &target])
        .args(["call", "structs_calculate_proof_of_work", "--args", HARD])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(3000));
    // SAFETY: signalling our own child by its pid.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let out = child.wait_with_output().unwrap();
    let (answer, ok, _) = outcome(&out);
    assert!(!ok);
    assert_eq!(answer["error"]["code"], "TOOL_CANCELLED", "{answer:#}");
    let lines = task_lines(&out);
    let mut statuses: Vec<String> = lines
        .iter()
        .filter_map(|t| t["status"].as_str().map(String::from))
        .collect();
    // While it worked, the search's progress came with its status, line by line.
    assert!(
        lines.iter().any(|t| t["status"] == "working"
            && t["statusMessage"]
                .as_str()
                .is_some_and(|m| m.contains(" iterations, ") && m.contains(" MH/s"))),
        "{lines:#?}"
    );
    statuses.dedup();
    // The server said it stopped: the client waited for its word.
    assert_eq!(statuses, ["working", "cancelled"], "{statuses:?}");
}

#[test]
fn a_task_waiting_on_input_gets_it_through_tasks_update() {
    let target = format!(
        "python3 {}/tests/data/hostile_server.py task-input",
        env!("CARGO_MANIFEST_DIR")
    );
    let out = client(
        &target,
        &["--elicitation", "accept-defaults"],
        &["call", "echo"],
    );
    let (answer, ok, _) = outcome(&out);
    assert!(ok, "{answer:#}");
    assert_eq!(text_of(&answer), "hello Ada");
    let lines = task_lines(&out);
    let answered: Vec<&Value> = lines
        .iter()
        .filter(|t| t.get("inputResponses").is_some())
        .collect();
    // Answered once, whatever the polls between the answer and the server taking it.
    assert_eq!(answered.len(), 1, "{lines:#?}");
    assert_eq!(
        answered[0]["inputResponses"]["name"]["content"]["name"],
        "Ada"
    );
    let statuses: Vec<&str> = lines.iter().filter_map(|t| t["status"].as_str()).collect();
    assert_eq!(statuses, ["working", "input_required", "completed"]);
}

/// Caching hints: an answer a 2026-07-28 server says stays fresh (our own server's
/// template list, an hour) is answered again from the client's cache, and `client`
/// says so on stderr; one it says not to keep (a docs read) is asked again.
#[test]
fn answers_the_server_says_stay_fresh_come_from_the_cache() {
    let target = format!("{BIN} --headless --paused --log-level warn");
    let out = Command::new(BIN)
        .args(["client", "--connect", &target, "session", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(b"templates\ntemplates\nresources\nresources\n")?;
            child.wait_with_output()
        })
        .expect("run a client session");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let answers: Vec<Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert!(answers.len() >= 4, "{stdout}");
    assert_eq!(answers[0], answers[1], "the cached answer is the answer");
    assert!(
        answers[0]["ttlMs"].as_u64().is_some_and(|t| t > 0),
        "the hints show in the answer: {:#}",
        answers[0]
    );
    let hits: Vec<Value> = stderr
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| v.get("cache").cloned())
        .collect();
    // The template list once from the cache; the resource list (not to be kept)
    // asked both times.
    assert_eq!(hits.len(), 1, "{stderr}");
    assert_eq!(hits[0]["method"], "resources/templates/list");
    assert_eq!(hits[0]["hit"], true);
    assert_eq!(hits[0]["cacheScope"], "public");
    assert!(
        hits[0]["ttlMs"].as_u64().unwrap() > 3_500_000,
        "{:#}",
        hits[0]
    );
}
