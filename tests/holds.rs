//! Breakpoints and faults in the proxy, as the agent sees them: a call held, edited
//! (checked against the tool's schema), continued, answered with a result or an
//! error, dropped; an answer held and changed; a watcher killed while it holds a call;
//! fault rules firing at their rates with a fixed seed; and the recording of it all,
//! which marks what was injected and replays without it.

mod support;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use structs_console::mcp::proxy::Faults;
use support::agent::{Agent, BIN, Watcher, runtime_dir, socket_from, until};

/// The answer to request `id`, from the agent's side.
fn answer(agent: &Agent, id: u64) -> Value {
    until(&agent.out, &format!("the answer to {id}"), |v| {
        v["id"] == id && v.get("method").is_none()
    })
    .pop()
    .unwrap()
}

fn proxy_args<'a>(log: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["proxy", "--record", log];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--", BIN, "--headless", "--paused", "--log-level", "warn"]);
    args
}

fn log_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_breakpoint_holds_edits_continues_answers_and_drops_as_the_agent_sees_it() {
    let dir = runtime_dir("holds");
    let log = dir.join("held.jsonl");
    let args = proxy_args(log.to_str().unwrap(), &["--hold-timeout", "30"]);
    let (mut agent, stderr) = Agent::start(&args, &dir);
    let socket = socket_from(&stderr);
    // The agent lists the tools, as agents do: the proxy learns their schemas.
    agent.send(json!({"jsonrpc": "2.0", "id": 50, "method": "tools/list"}));
    answer(&agent, 50);
    let mut watcher = Watcher::attach(&socket);
    let ack = watcher.command(json!({"cmd": "break", "tool": "structs_query_player"}));
    assert_eq!(ack["type"], "ack", "{ack}");

    // Held, then edited: the schema is checked first.
    agent.call(
        1,
        "structs_query_player",
        json!({"player_id": "1-1"}),
        Some("t-1"),
    );
    let (hold, event) = watcher.held();
    assert_eq!(event["way"], "request");
    assert_eq!(event["arguments"]["player_id"], "1-1");
    assert!(
        event["schema"]["properties"]["player_id"].is_object(),
        "{event}"
    );
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        agent.out.try_recv().is_err(),
        "nothing reaches the agent while its call is held"
    );
    let refused = watcher.command(json!({"cmd": "edit", "hold": hold,
        "arguments": {"player_id": "not an id"}}));
    assert_eq!(refused["type"], "refused");
    assert!(
        refused["reason"].as_str().unwrap().contains("VALIDATION"),
        "{refused}"
    );
    let ack = watcher.command(json!({"cmd": "edit", "hold": hold,
        "arguments": {"player_id": "1-2"}}));
    assert_eq!(ack["type"], "ack", "{ack}");
    let got = answer(&agent, 1);
    assert_eq!(
        got["result"]["structuredContent"]["player"]["Player"]["id"],
        "1-2"
    );

    // Continued as it was.
    agent.call(2, "structs_query_player", json!({"player_id": "1-1"}), None);
    let (hold, _) = watcher.held();
    watcher.command(json!({"cmd": "continue", "hold": hold}));
    let got = answer(&agent, 2);
    assert_eq!(
        got["result"]["structuredContent"]["player"]["Player"]["id"],
        "1-1"
    );
    // A whole tool result to answer with later: the server's, for another player.
    let mut made_up = got["result"].clone();
    made_up["structuredContent"]["player"]["Player"]["id"] = json!("1-7");
    made_up["content"][0]["text"] = json!(made_up["structuredContent"].to_string());

    // Answered with one of the project's errors, details and all.
    agent.call(3, "structs_query_player", json!({"player_id": "1-1"}), None);
    let (hold, _) = watcher.held();
    let ack = watcher.command(json!({"cmd": "error", "hold": hold, "error": {
        "code": "RATE_LIMIT_EXCEEDED", "message": "slow down",
        "details": {"retry_after_ms": 1500}}}));
    assert_eq!(ack["type"], "ack", "{ack}");
    let got = answer(&agent, 3);
    assert_eq!(got["result"]["isError"], true);
    let error = &got["result"]["structuredContent"]["error"];
    assert_eq!(error["code"], "RATE_LIMIT_EXCEEDED");
    assert_eq!(error["details"]["retry_after_ms"], 1500);
    assert!(error["timestamp"].is_string(), "{error}");

    // Answered with a result made up: the whole tool result, given as it is. What is
    // not one, or does not fit the tool's output schema, is refused, saying why.
    agent.call(4, "structs_query_player", json!({"player_id": "1-1"}), None);
    let (hold, event) = watcher.held();
    assert!(event["output_schema"]["anyOf"].is_array(), "{event}");
    let refused = watcher.command(json!({"cmd": "answer", "hold": hold,
        "result": {"made": "up"}}));
    assert_eq!(refused["type"], "refused", "{refused}");
    assert!(
        refused["reason"]
            .as_str()
            .unwrap()
            .contains("whole tool result"),
        "{refused}"
    );
    let refused = watcher.command(json!({"cmd": "answer", "hold": hold,
        "result": {"content": [{"type": "text", "text": "made up"}]}}));
    assert!(
        refused["reason"]
            .as_str()
            .unwrap()
            .contains("needs \"structuredContent\""),
        "{refused}"
    );
    let ack = watcher.command(json!({"cmd": "answer", "hold": hold, "result": made_up}));
    assert_eq!(ack["type"], "ack", "{ack}");
    assert_eq!(answer(&agent, 4)["result"], made_up);
    agent.call(5, "structs_query_player", json!({"player_id": "1-1"}), None);
    let (hold, _) = watcher.held();
    watcher.command(json!({"cmd": "drop", "hold": hold}));
    let got = answer(&agent, 5);
    assert_eq!(
        got["result"]["structuredContent"]["error"]["code"],
        "TOOL_CANCELLED"
    );

    // The answer held instead, and changed on its way to the agent.
    watcher.command(json!({"cmd": "unbreak"}));
    watcher.command(json!({"cmd": "break", "on": "response", "tool": "structs_query_player"}));
    agent.call(6, "structs_query_player", json!({"player_id": "1-1"}), None);
    let (hold, event) = watcher.held();
    assert_eq!(event["way"], "response");
    assert_eq!(
        event["answer"]["structuredContent"]["player"]["Player"]["id"],
        "1-1"
    );
    // The edit gives the answer back in the shape the hold showed it: the whole tool
    // result, which reaches the agent as given, not wrapped again.
    let mut edited = event["answer"].clone();
    edited["structuredContent"]["player"]["Player"]["id"] = json!("1-5");
    edited["content"][0]["text"] = json!(edited["structuredContent"].to_string());
    let refused = watcher.command(json!({"cmd": "edit", "hold": hold,
        "result": edited["structuredContent"]}));
    assert_eq!(refused["type"], "refused", "{refused}");
    let ack = watcher.command(json!({"cmd": "edit", "hold": hold, "result": edited}));
    assert_eq!(ack["type"], "ack", "{ack}");
    assert_eq!(answer(&agent, 6)["result"], edited);
    // A command that names nothing held is refused, saying why.
    let refused = watcher.command(json!({"cmd": "continue", "hold": 999}));
    assert!(
        refused["reason"]
            .as_str()
            .unwrap()
            .contains("nothing is held")
    );
    assert!(agent.finish().success());

    // The log marks what the agent did not get from the server, and replays the rest.
    let lines = log_lines(&log);
    // The calls numbered among the player's calls (the log numbers the agent's other
    // requests too: its tool list).
    let player_calls: Vec<u64> = lines
        .iter()
        .filter(|l| l["type"] == "request" && l["tool"] == "structs_query_player")
        .filter_map(|l| l["call"].as_u64())
        .collect();
    let injected: Vec<(u64, &str)> = lines
        .iter()
        .filter(|l| l["type"] == "response")
        .filter_map(|l| {
            let call = l["call"].as_u64()?;
            let nth = player_calls.iter().position(|c| *c == call)? as u64 + 1;
            Some((nth, l["injected"].as_str()?))
        })
        .collect();
    assert_eq!(
        injected,
        [
            (1, "arguments edited at a breakpoint"),
            (3, "error RATE_LIMIT_EXCEEDED at a breakpoint"),
            (4, "answered at a breakpoint"),
            (5, "dropped at a breakpoint"),
            (6, "edited at a breakpoint"),
        ]
    );
    let out = Command::new(BIN)
        .args(["replay", log.to_str().unwrap(), "--check", "--paused"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("replayed 1 call "), "{text}");
    assert_eq!(text.matches("got an injected answer").count(), 5, "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_watcher_killed_while_it_holds_a_call_lets_the_call_go_on() {
    let dir = runtime_dir("killed");
    let log = dir.join("k.jsonl");
    let args = proxy_args(log.to_str().unwrap(), &["--hold-timeout", "60"]);
    let (mut agent, stderr) = Agent::start(&args, &dir);
    let socket = socket_from(&stderr);
    // The watcher that sets the breakpoint is a process of its own, killed below.
    let mut holder = Command::new("python3")
        .args([
            "-c",
            "import socket, sys, time\n\
             s = socket.socket(socket.AF_UNIX)\n\
             s.connect(sys.argv[1])\n\
             s.sendall(b'{\"cmd\": \"break\"}\\n')\n\
             time.sleep(120)",
            socket.to_str().unwrap(),
        ])
        .spawn()
        .unwrap();
    let observer = Watcher::attach(&socket);
    until(&observer.lines, "the breakpoint", |v| {
        v["type"] == "breakpoints" && v["rules"].as_array().is_some_and(|r| !r.is_empty())
    });
    agent.call(1, "structs_query_player", json!({"player_id": "1-1"}), None);
    observer.held();
    let killed = Instant::now();
    holder.kill().unwrap();
    let _ = holder.wait();
    let got = answer(&agent, 1);
    assert_eq!(
        got["result"]["structuredContent"]["player"]["Player"]["id"],
        "1-1"
    );
    assert!(
        killed.elapsed() < Duration::from_secs(10),
        "the call went on when its watcher died, not at the 60 s timeout"
    );
    let released = until(&observer.lines, "the release", |v| v["type"] == "released")
        .pop()
        .unwrap();
    assert_eq!(released["how"], "its watcher left, continued");
    assert!(agent.finish().success());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_hold_nobody_answers_goes_on_at_its_timeout_with_progress_meanwhile() {
    let dir = runtime_dir("timeout");
    let log = dir.join("t.jsonl");
    let args = proxy_args(log.to_str().unwrap(), &["--hold-timeout", "7"]);
    let (mut agent, stderr) = Agent::start(&args, &dir);
    let socket = socket_from(&stderr);
    let mut watcher = Watcher::attach(&socket);
    watcher.command(json!({"cmd": "break"}));
    let started = Instant::now();
    agent.call(
        1,
        "structs_query_player",
        json!({"player_id": "1-1"}),
        Some("p-1"),
    );
    // The agent asked for progress: it hears the call is alive while it waits.
    let seen = until(&agent.out, "the answer after the timeout", |v| v["id"] == 1);
    let took = started.elapsed();
    assert!(took >= Duration::from_secs(7), "{took:?}");
    let beats: Vec<&Value> = seen
        .iter()
        .filter(|v| v["method"] == "notifications/progress")
        .collect();
    assert!(!beats.is_empty(), "{seen:?}");
    assert_eq!(beats[0]["params"]["progressToken"], "p-1");
    assert_eq!(
        seen.last().unwrap()["result"]["structuredContent"]["player"]["Player"]["id"],
        "1-1"
    );
    assert!(agent.finish().success());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn fault_rules_fire_at_their_rates_with_a_fixed_seed() {
    let dir = runtime_dir("faults");
    let log = dir.join("f.jsonl");
    let rules = json!({"seed": 7, "rules": [
        {"tool": "structs_query_player", "error": "RATE_LIMIT_EXCEEDED",
         "details": {"retry_after_ms": 1500}, "rate": 0.5},
        {"tool": "structs_query_planet", "every": 3, "drop_response": true},
        {"tool": "structs_query_block_height", "latency_ms": 400},
        {"tool": "structs_query_guild", "truncate": 20},
        {"tool": "structs_query_struct", "oversize": 30000},
        {"tool": "structs_list_entities", "stale": true},
        {"tool": "structs_query_fleet", "truncate": 20}
    ]});
    let file = dir.join("faults.json");
    std::fs::write(&file, rules.to_string()).unwrap();
    let args = proxy_args(log.to_str().unwrap(), &["--faults", file.to_str().unwrap()]);
    let (mut agent, _stderr) = Agent::start(&args, &dir);

    // Which player calls fail is what the seeded rules say, call for call.
    let mut expected = Faults::from_json(&rules).unwrap();
    let mut failed = Vec::new();
    let mut want = Vec::new();
    for id in 1..=20u64 {
        agent.call(
            id,
            "structs_query_player",
            json!({"player_id": "1-1"}),
            None,
        );
        let got = answer(&agent, id);
        failed.push(got["result"]["isError"] == true);
        want.push(
            !expected
                .pick("structs_query_player", &json!({"player_id": "1-1"}))
                .is_empty(),
        );
        if got["result"]["isError"] == true {
            let e = &got["result"]["structuredContent"]["error"];
            assert_eq!(e["code"], "RATE_LIMIT_EXCEEDED");
            assert_eq!(e["details"]["retry_after_ms"], 1500);
        }
    }
    assert_eq!(failed, want);
    let n = failed.iter().filter(|f| **f).count();
    assert!((4..=16).contains(&n), "{n} of 20 at 0.5");

    // Every third planet call gets no answer at all.
    for id in 101..=106u64 {
        agent.call(
            id,
            "structs_query_planet",
            json!({"planet_id": "2-1"}),
            None,
        );
    }
    // The server answers calls at once, in any order.
    let mut answered: Vec<u64> = Vec::new();
    while answered.len() < 4 {
        let v = until(&agent.out, "the planet answers", |v| v["id"].is_u64())
            .pop()
            .unwrap();
        answered.push(v["id"].as_u64().unwrap());
    }
    answered.sort_unstable();
    assert_eq!(answered, [101, 102, 104, 105]);
    std::thread::sleep(Duration::from_millis(500));
    let late: Vec<String> = agent.out.try_iter().collect();
    assert!(late.is_empty(), "{late:?}");
    // The agent gives up on one, as an SDK does at its timeout; the other is still
    // waiting when the session ends.
    agent.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 103, "reason": "timed out"}}),
    );

    // Latency, a cut answer, a padded one.
    let started = Instant::now();
    agent.call(201, "structs_query_block_height", json!({}), None);
    answer(&agent, 201);
    assert!(started.elapsed() >= Duration::from_millis(400));
    agent.call(202, "structs_query_guild", json!({"guild_id": "0-1"}), None);
    let cut = answer(&agent, 202);
    assert_eq!(
        cut["result"]["content"][0]["text"].as_str().unwrap().len(),
        20
    );
    // Only the text is cut: the structured content, which an SDK checks against the
    // tool's output schema, stays whole, so the agent takes the answer.
    assert_eq!(
        cut["result"]["structuredContent"]["guild"]["Guild"]["id"], "0-1",
        "{cut}"
    );
    agent.call(
        203,
        "structs_query_struct",
        json!({"struct_id": "5-1"}),
        None,
    );
    let big = answer(&agent, 203);
    let size = big["result"].to_string().len();
    assert!((29_000..=31_000).contains(&size), "{size}");
    // The same answer, only bigger: its text is still the structured content's JSON,
    // so it still fits the tool's output schema.
    assert_eq!(
        big["result"]["structuredContent"]["struct"]["Struct"]["id"],
        "5-1"
    );
    let text: Value =
        serde_json::from_str(big["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, big["result"]["structuredContent"]);

    // An error cut short is still an error.
    agent.call(
        204,
        "structs_query_fleet",
        json!({"fleet_id": "9-999"}),
        None,
    );
    let cut = answer(&agent, 204);
    assert_eq!(cut["result"]["isError"], true, "{cut}");
    assert_eq!(
        cut["result"]["content"][0]["text"].as_str().unwrap().len(),
        20
    );

    // Stale: the second list gets the first one's answer, not the server's.
    agent.call(
        301,
        "structs_list_entities",
        json!({"entity_type": "planet"}),
        None,
    );
    let first = answer(&agent, 301);
    agent.call(
        302,
        "structs_list_entities",
        json!({"entity_type": "planet"}),
        None,
    );
    let second = answer(&agent, 302);
    assert_eq!(first["result"], second["result"]);
    assert!(agent.finish().success());

    // The recording marks each injected answer with its rule.
    let lines = log_lines(&log);
    let marked = |tool: &str| -> Vec<String> {
        lines
            .iter()
            .filter(|l| l["type"] == "response" && l["tool"] == tool)
            .filter_map(|l| l["injected"].as_str().map(str::to_string))
            .collect()
    };
    assert_eq!(marked("structs_query_player").len(), n);
    assert!(marked("structs_query_player")[0].contains("(rule 1)"));
    assert_eq!(
        marked("structs_query_planet"),
        ["dropped response (rule 2)", "dropped response (rule 2)"]
    );
    // A dropped answer is not an answer: the call ends when the agent gives up on it.
    let dropped: Vec<&Value> = lines
        .iter()
        .filter(|l| l["type"] == "response" && l["injected"] == "dropped response (rule 2)")
        .collect();
    for l in &dropped {
        assert_eq!(l["error"]["error"]["code"], "TOOL_CANCELLED", "{l}");
        assert!(
            l["duration_ms"].as_f64().unwrap() >= 500.0,
            "ended when the agent gave up: {l}"
        );
    }
    let messages: Vec<&str> = dropped
        .iter()
        .filter_map(|l| l["error"]["error"]["message"].as_str())
        .collect();
    assert_eq!(
        messages,
        [
            "the client cancelled the call: timed out",
            "the session ended before the agent got an answer"
        ],
        "a call never given up on ends with its session"
    );
    assert_eq!(
        marked("structs_query_block_height"),
        ["latency 400 ms (rule 3)"]
    );
    assert_eq!(marked("structs_list_entities"), ["stale answer (rule 6)"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_faults_file_that_is_not_one_stops_the_proxy_saying_why() {
    let dir = runtime_dir("badfaults");
    let file = dir.join("bad.json");
    std::fs::write(&file, r#"{"rules": [{"tool": "x", "latency": 5}]}"#).unwrap();
    let out = Command::new(BIN)
        .args(["proxy", "--faults", file.to_str().unwrap(), "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("--faults"), "{said}");
    assert!(said.contains("rule 1: unknown key \"latency\""), "{said}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Applies what the feed sent until the frame at 100x30 shows `wanted` (10 s at most).
fn frame_until(app: &mut structs_console::tui::App, wanted: &str) -> String {
    let start = Instant::now();
    loop {
        app.update();
        let frame = support::console::draw(app, 100, 30);
        if frame.contains(wanted) {
            return frame;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "gave up waiting for {wanted:?}:\n{frame}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_live_tab_holds_and_edits_a_call_by_keys() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use support::console::{press, type_text};
    let dir = runtime_dir("keys");
    let log = dir.join("keys.jsonl");
    let args = proxy_args(log.to_str().unwrap(), &["--hold-timeout", "30"]);
    let (mut agent, stderr) = Agent::start(&args, &dir);
    let socket = socket_from(&stderr);
    agent.send(json!({"jsonrpc": "2.0", "id": 50, "method": "tools/list"}));
    answer(&agent, 50);

    let rt = support::console::runtime();
    let (core, _) = support::sim::paused_core(structs_console::source::sim::WorldConfig::demo());
    let mut app = structs_console::tui::App::new(
        core,
        structs_console::tui::Theme::default(),
        rt.handle().clone(),
    );
    app.watch(&socket).unwrap();
    // B: every call held from now on.
    press(&mut app, KeyCode::Char('B'));
    frame_until(&mut app, "1 breakpoint");
    agent.call(1, "structs_query_player", json!({"player_id": "1-1"}), None);
    frame_until(&mut app, "⏸ held (request)");
    // e, then "1-1" becomes "1-3", and Ctrl-S sends it on. The cursor starts at the
    // end, under the id's line.
    press(&mut app, KeyCode::Char('e'));
    press(&mut app, KeyCode::Up);
    press(&mut app, KeyCode::End);
    press(&mut app, KeyCode::Left);
    press(&mut app, KeyCode::Backspace);
    type_text(&mut app, "3");
    app.handle_key(KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL));
    let got = answer(&agent, 1);
    assert_eq!(
        got["result"]["structuredContent"]["player"]["Player"]["id"],
        "1-3"
    );
    let frame = frame_until(&mut app, "released from a breakpoint: edited, continued");
    assert!(frame.contains("player_id: 1-3"), "{frame}");
    // B again: nothing is held any more.
    press(&mut app, KeyCode::Char('B'));
    frame_until(&mut app, "breakpoint cleared");
    agent.call(2, "structs_query_player", json!({"player_id": "1-1"}), None);
    answer(&agent, 2);

    // A on the block height call: its answers are held from now on.
    agent.call(3, "structs_query_block_height", json!({}), None);
    answer(&agent, 3);
    // (The agent's handshake and tool list are calls of the log too.)
    frame_until(&mut app, "· structs_query_block_height");
    press(&mut app, KeyCode::Char('A'));
    frame_until(&mut app, "1 breakpoint");
    agent.call(4, "structs_query_block_height", json!({}), None);
    frame_until(&mut app, "⏸ held (response)");
    // e opens the whole tool result; the height (7 lines up from the end) goes from
    // 120000 to 120007, and Ctrl-S gives it to the agent in that shape.
    press(&mut app, KeyCode::Char('e'));
    for _ in 0..7 {
        press(&mut app, KeyCode::Up);
    }
    press(&mut app, KeyCode::End);
    press(&mut app, KeyCode::Left);
    press(&mut app, KeyCode::Backspace);
    type_text(&mut app, "7");
    app.handle_key(KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL));
    let got = answer(&agent, 4);
    let result = &got["result"];
    assert_eq!(result["structuredContent"]["height"], 120_007, "{got}");
    assert!(
        result["structuredContent"].get("content").is_none(),
        "{got}"
    );
    assert_eq!(result["isError"], false, "{got}");
    // Its text, the structured content's JSON, says the same.
    let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, result["structuredContent"]);
    frame_until(&mut app, "released from a breakpoint: edited, continued");
    assert!(agent.finish().success());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_live_tab_fetches_a_handle_through_the_watched_server() {
    use crossterm::event::KeyCode;
    use support::console::press;
    let dir = runtime_dir("fetch");
    let log = dir.join("fetch.jsonl");
    // A world big enough that a page of 100 planets is over 25 KB.
    let args = [
        "proxy",
        "--record",
        log.to_str().unwrap(),
        "--",
        BIN,
        "--headless",
        "--paused",
        "--world-size",
        "120",
        "--log-level",
        "warn",
    ];
    let (mut agent, stderr) = Agent::start(&args, &dir);
    let socket = socket_from(&stderr);
    let rt = support::console::runtime();
    // The console's own core has a store of its own, which holds no handle of the
    // watched server's.
    let (core, _) = support::sim::paused_core(structs_console::source::sim::WorldConfig::demo());
    let mut app = structs_console::tui::App::new(
        core,
        structs_console::tui::Theme::default(),
        rt.handle().clone(),
    );
    app.watch(&socket).unwrap();
    agent.call(1, "structs_list_planets", json!({"page_size": 100}), None);
    let got = answer(&agent, 1);
    let handle = got["result"]["structuredContent"]["result_handle"]
        .as_str()
        .unwrap_or_else(|| panic!("an answer over 25 KB: {} bytes", got.to_string().len()))
        .to_string();
    frame_until(&mut app, "H fetches it");
    press(&mut app, KeyCode::Char('H'));
    let frame = frame_until(&mut app, "fetched through the watched server");
    assert!(
        frame.contains("page 1 of") && !frame.contains("belongs to"),
        "{frame}"
    );
    assert!(frame.contains(&handle[..12]), "{frame}");
    // The command itself: a handle the server does not hold is refused with the
    // server's reason; a command that names none, saying so.
    let mut watcher = Watcher::attach(&socket);
    let refused = watcher.command(json!({"cmd": "fetch", "handle": "structs:nothing:1:0badc0de"}));
    assert_eq!(refused["type"], "refused", "{refused}");
    assert!(
        refused["reason"]
            .as_str()
            .unwrap()
            .contains("RESOURCE_NOT_FOUND"),
        "{refused}"
    );
    let refused = watcher.command(json!({"cmd": "fetch"}));
    assert!(
        refused["reason"]
            .as_str()
            .unwrap()
            .contains("name the \"handle\""),
        "{refused}"
    );
    // A session that has gone is refused, never swapped for another agent's.
    let refused =
        watcher.command(json!({"cmd": "fetch", "handle": handle, "session": "s-gone-long-ago"}));
    assert_eq!(refused["type"], "refused", "{refused}");
    assert!(
        refused["reason"]
            .as_str()
            .unwrap()
            .contains("session s-gone-long-ago has ended"),
        "{refused}"
    );
    let page = watcher.command(json!({"cmd": "fetch", "handle": handle, "page": 2}));
    assert_eq!(page["type"], "ack", "{page}");
    // The fetches were the proxy's own requests: the agent got nothing of them, and
    // the log holds the agent's call alone.
    std::thread::sleep(Duration::from_millis(300));
    let extra: Vec<String> = agent.out.try_iter().collect();
    assert!(extra.is_empty(), "{extra:?}");
    assert!(agent.finish().success());
    let requests: Vec<Value> = log_lines(&log)
        .into_iter()
        .filter(|l| l["type"] == "request" && l["method"].is_null())
        .collect();
    assert_eq!(requests.len(), 1, "{requests:#?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The messages a proxy writes to a host that sends `lines` and closes its stdin at
/// once, and the proxy's session log.
fn all_at_once(extra: &[&str], lines: &[Value], dir: &Path) -> (Vec<Value>, Vec<Value>) {
    use std::io::Write;
    let log = dir.join("at-once.jsonl");
    let _ = std::fs::remove_file(&log);
    let mut args = vec!["proxy", "--no-control", "--record", log.to_str().unwrap()];
    args.extend_from_slice(extra);
    let mut child = Command::new(BIN)
        .args(&args)
        .env("XDG_RUNTIME_DIR", dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    stdin.write_all(text.as_bytes()).unwrap();
    drop(stdin);
    // A proxy that never exits fails the test rather than hanging it.
    let pid = child.id();
    let (done, watchdog) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        if watchdog.recv_timeout(Duration::from_secs(30)).is_err() {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        }
    });
    let out = child.wait_with_output().unwrap();
    let _ = done.send(());
    let got = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    (got, log_lines(&log))
}

#[test]
fn a_call_taken_by_a_fault_is_answered_and_recorded_when_the_host_closes_at_once() {
    let dir = runtime_dir("at-once");
    let lines = [
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "a-test-agent", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "structs_query_block_height", "arguments": {}}}),
    ];
    let child = ["--", BIN, "--headless", "--paused", "--log-level", "warn"];
    for (rule, server) in [
        (
            json!({"latency_ms": 500}),
            &["--embedded", "--", "--paused"][..],
        ),
        (json!({"latency_ms": 500}), &child[..]),
        (
            json!({"latency_ms": 300, "error": "RATE_LIMIT_EXCEEDED"}),
            &["--embedded", "--", "--paused"][..],
        ),
        (json!({"error": "RATE_LIMIT_EXCEEDED"}), &child[..]),
    ] {
        // A latency and an error are two rules: one fault a rule.
        let rules: Vec<Value> = match rule.as_object().unwrap().len() {
            1 => vec![rule.clone()],
            _ => vec![
                json!({"latency_ms": rule["latency_ms"]}),
                json!({"error": rule["error"]}),
            ],
        };
        let file = dir.join("at-once-faults.json");
        std::fs::write(&file, json!({"rules": rules}).to_string()).unwrap();
        let mut extra = vec!["--faults", file.to_str().unwrap()];
        extra.extend_from_slice(server);
        let (got, log) = all_at_once(&extra, &lines, &dir);
        let answer = got
            .iter()
            .find(|m| m["id"] == 1)
            .unwrap_or_else(|| panic!("{rule} {server:?}: no answer in {got:?}"));
        let is_error = rule.get("error").is_some();
        assert_eq!(answer["result"]["isError"] == true, is_error, "{answer}");
        assert!(
            log.iter()
                .any(|l| l["type"] == "response" && l["call"] == 1),
            "{rule} {server:?}: the answer is recorded: {log:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_watchers_fault_rules_leave_with_it_and_unfault_clears_them() {
    let dir = runtime_dir("unfault");
    let log = dir.join("u.jsonl");
    let file = dir.join("faults.json");
    // The file's rule fires on planets only: it stays through everything below.
    std::fs::write(
        &file,
        json!({"rules": [{"tool": "structs_query_planet", "error": "RATE_LIMIT_EXCEEDED"}]})
            .to_string(),
    )
    .unwrap();
    let args = proxy_args(log.to_str().unwrap(), &["--faults", file.to_str().unwrap()]);
    let (mut agent, stderr) = Agent::start(&args, &dir);
    let socket = socket_from(&stderr);
    let failed = |agent: &mut Agent, id: u64, tool: &str, args: Value| {
        agent.call(id, tool, args, None);
        answer(agent, id)["result"]["isError"] == true
    };
    let player = || json!({"player_id": "1-1"});

    let mut watcher = Watcher::attach(&socket);
    let ack = watcher.command(json!({"cmd": "fault", "rule": {"error": "RATE_LIMIT_EXCEEDED"}}));
    assert_eq!(ack["rule"], 2, "numbered after the file's rule: {ack}");
    assert!(failed(&mut agent, 1, "structs_query_player", player()));
    // Gone with `unfault`, naming it; the file's rule stays.
    let ack = watcher.command(json!({"cmd": "unfault", "rule": 2}));
    assert_eq!(
        (ack["type"].as_str(), ack["removed"].as_u64()),
        (Some("ack"), Some(1)),
        "{ack}"
    );
    assert!(!failed(&mut agent, 2, "structs_query_player", player()));
    assert!(failed(
        &mut agent,
        3,
        "structs_query_planet",
        json!({"planet_id": "2-1"})
    ));
    let refused = watcher.command(json!({"cmd": "unfault", "rule": 2}));
    assert_eq!(refused["type"], "refused", "{refused}");

    // `unfault` alone clears what watchers added, never the file's.
    watcher.command(json!({"cmd": "fault", "rule": {"error": "RATE_LIMIT_EXCEEDED"}}));
    watcher.command(json!({"cmd": "fault", "rule": {"latency_ms": 1}}));
    let ack = watcher.command(json!({"cmd": "unfault"}));
    assert_eq!(ack["removed"], 2, "{ack}");
    assert_eq!(ack["left"], 1, "{ack}");
    assert!(!failed(&mut agent, 4, "structs_query_player", player()));

    // A watcher that goes away takes its rules with it.
    let ack = watcher.command(json!({"cmd": "fault", "rule": {"error": "RATE_LIMIT_EXCEEDED"}}));
    assert_eq!(ack["rule"], 5, "numbers are never used twice: {ack}");
    assert!(failed(&mut agent, 5, "structs_query_player", player()));
    drop(watcher);
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut id = 6;
    while failed(&mut agent, id, "structs_query_player", player()) {
        assert!(Instant::now() < deadline, "the rule outlived its watcher");
        std::thread::sleep(Duration::from_millis(50));
        id += 1;
    }
    assert!(failed(
        &mut agent,
        100,
        "structs_query_planet",
        json!({"planet_id": "2-1"})
    ));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A breakpoint holds a call in rounds too. A 2026-07-28 server (the official Python
/// SDK's) asks for a yes before it deletes; the agent sends the call again with its
/// answer, and the breakpoint holds that retry with what the server asked. An edited
/// answer that does not fit the form the server asked for is refused, saying why; one
/// that fits goes to the server in the agent's place, and the log marks the call.
#[test]
fn a_breakpoint_holds_a_round_and_an_edited_answer_must_fit_what_was_asked() {
    let Some(peers) = support::peers::Peers::find() else {
        return;
    };
    let dir = runtime_dir("round-holds");
    let log = dir.join("rounds.jsonl");
    let python = peers.python().display().to_string();
    let script = format!(
        "{}/tests/data/python_rounds_server.py",
        env!("CARGO_MANIFEST_DIR")
    );
    let args = [
        "proxy",
        "--record",
        log.to_str().unwrap(),
        "--hold-timeout",
        "30",
        "--",
        &python,
        &script,
    ];
    let (mut agent, stderr) = Agent::start_stateless(&args, &dir);
    let socket = socket_from(&stderr);
    let mut watcher = Watcher::attach(&socket);
    let ack = watcher.command(json!({"cmd": "break", "tool": "confirm_delete"}));
    assert_eq!(ack["type"], "ack", "{ack}");
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "agent", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    });
    let call = |id: u64, extra: Value| {
        let mut params = json!({"name": "confirm_delete", "arguments": {"name": "x"},
            "_meta": meta.clone()});
        if let (Some(p), Some(e)) = (params.as_object_mut(), extra.as_object()) {
            p.extend(e.clone());
        }
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
    };
    // The first time: held as any call, then the server asks.
    agent.send(call(1, json!({})));
    let (hold, event) = watcher.held();
    assert!(event.get("round").is_none(), "{event}");
    watcher.command(json!({"cmd": "continue", "hold": hold}));
    let asked = answer(&agent, 1);
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    let requests = asked["result"]["inputRequests"].clone();
    let (key, request) = requests.as_object().unwrap().iter().next().unwrap();
    assert_eq!(request["method"], "elicitation/create");

    // Sent again with the agent's yes: held with the round.
    let yes = json!({key.clone(): {"action": "accept", "content": {"confirm": true}}});
    agent.send(call(
        2,
        json!({"inputResponses": yes, "requestState": asked["result"]["requestState"]}),
    ));
    let (hold, event) = watcher.held();
    assert_eq!(event["round"]["input_requests"], requests, "{event}");
    assert_eq!(event["round"]["input_responses"], yes, "{event}");
    let wrong = json!({key.clone(): {"action": "accept", "content": {"confirm": "yes"}}});
    let refused = watcher.command(json!({"cmd": "edit", "hold": hold, "input_responses": wrong}));
    assert_eq!(refused["type"], "refused", "{refused}");
    let reason = refused["reason"].as_str().unwrap();
    assert!(reason.contains("does not fit the form"), "{reason}");
    let unasked = json!({"other": {"action": "decline"}});
    let refused = watcher.command(json!({"cmd": "edit", "hold": hold, "input_responses": unasked}));
    assert_eq!(refused["type"], "refused", "{refused}");
    // A no, in the agent's place: the server keeps the thing.
    let no = json!({key.clone(): {"action": "accept", "content": {"confirm": false}}});
    let ack = watcher.command(json!({"cmd": "edit", "hold": hold, "input_responses": no}));
    assert_eq!(ack["type"], "ack", "{ack}");
    let got = answer(&agent, 2);
    assert_eq!(got["result"]["content"][0]["text"], "kept x", "{got}");
    let status = agent.finish();
    assert!(status.success(), "{status:?}");
    let lines = log_lines(&log);
    let response = lines
        .iter()
        .find(|l| l["type"] == "response")
        .expect("the call's response");
    assert!(
        response["injected"]
            .as_str()
            .is_some_and(|i| i.contains("edited at a breakpoint")),
        "{response:#}"
    );
}

/// Under 2026-07-28 every answer carries a `resultType`; so does one the operator gives
/// in the server's place (an error, a drop) and one a fault rule injects.
#[test]
fn answers_given_in_the_servers_place_follow_the_stateless_era() {
    let dir = runtime_dir("era-holds");
    let log = dir.join("era.jsonl");
    let rules = json!({"rules": [{"tool": "structs_query_guild", "error": "RATE_LIMIT_EXCEEDED"}]});
    let file = dir.join("faults.json");
    std::fs::write(&file, rules.to_string()).unwrap();
    let args = proxy_args(
        log.to_str().unwrap(),
        &["--hold-timeout", "30", "--faults", file.to_str().unwrap()],
    );
    let (mut agent, stderr) = Agent::start_stateless(&args, &dir);
    let socket = socket_from(&stderr);
    let mut watcher = Watcher::attach(&socket);
    let ack = watcher.command(json!({"cmd": "break", "tool": "structs_query_player"}));
    assert_eq!(ack["type"], "ack", "{ack}");
    let call = |id: u64, tool: &str, args: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": tool, "arguments": args, "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "agent", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {}}}})
    };
    agent.send(call(1, "structs_query_player", json!({"player_id": "1-1"})));
    let (hold, _) = watcher.held();
    watcher.command(json!({"cmd": "continue", "hold": hold}));
    let served = answer(&agent, 1);
    assert_eq!(served["result"]["resultType"], "complete", "{served}");

    agent.send(call(2, "structs_query_player", json!({"player_id": "1-1"})));
    let (hold, _) = watcher.held();
    let ack = watcher.command(json!({"cmd": "error", "hold": hold, "error": {
        "code": "RATE_LIMIT_EXCEEDED", "message": "slow down"}}));
    assert_eq!(ack["type"], "ack", "{ack}");
    let got = answer(&agent, 2);
    assert_eq!(got["result"]["isError"], true, "{got}");
    assert_eq!(got["result"]["resultType"], "complete", "{got}");

    agent.send(call(3, "structs_query_player", json!({"player_id": "1-1"})));
    let (hold, _) = watcher.held();
    watcher.command(json!({"cmd": "drop", "hold": hold}));
    let got = answer(&agent, 3);
    assert_eq!(got["result"]["resultType"], "complete", "{got}");

    agent.send(call(4, "structs_query_guild", json!({"guild_id": "0-1"})));
    let got = answer(&agent, 4);
    assert_eq!(
        got["result"]["structuredContent"]["error"]["code"], "RATE_LIMIT_EXCEEDED",
        "{got}"
    );
    assert_eq!(got["result"]["resultType"], "complete", "{got}");
    drop(watcher);
    let status = agent.finish();
    assert!(status.success(), "{status:?}");
}
