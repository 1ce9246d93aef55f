//! `structs-console proxy -- COMMAND`: every byte passes both ways unchanged, the
//! child's exit code is the proxy's, and `--record` writes a session log that replays.

mod support;

use std::io::{Read, Write};
use std::process::{Command, Stdio};

use serde_json::json;
use structs_console::context::CallContext;
use structs_console::mcp::client::{Remote, Target};

const BIN: &str = env!("CARGO_BIN_EXE_structs-console");

/// A child that writes back every byte it reads, as it reads it.
const ECHO: &str = "import sys\nwhile True:\n    b = sys.stdin.buffer.read1(65536)\n    if not b: break\n    sys.stdout.buffer.write(b); sys.stdout.buffer.flush()";

#[test]
fn every_byte_passes_both_ways_unchanged() {
    let mut child = Command::new(BIN)
        .args(["proxy", "--", "python3", "-c", ECHO])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the proxy");
    let big = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{{\"name\":\"x\",\"arguments\":{{\"pad\":\"{}\"}}}}}}\n",
        "a".repeat(1 << 20)
    );
    let input: Vec<u8> = [
        &b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}\n"[..],
        b"not JSON, passed as it is\r\n",
        "ünïcode ✓ and \u{0} a NUL\n".as_bytes(),
        b"\n",
        big.as_bytes(),
        b"[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}]\n",
        b"a last line with no newline",
    ]
    .concat();
    let mut stdin = child.stdin.take().unwrap();
    let sent = input.clone();
    let writer = std::thread::spawn(move || {
        stdin.write_all(&sent).unwrap();
        // Closing the proxy's stdin closes the child's, and the child ends.
    });
    let mut out = Vec::new();
    child.stdout.take().unwrap().read_to_end(&mut out).unwrap();
    writer.join().unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert_eq!(out.len(), input.len());
    assert!(out == input, "the bytes differ");
}

#[test]
fn the_childs_exit_code_is_the_proxys_and_a_missing_program_is_said() {
    let status = Command::new(BIN)
        .args(["proxy", "--", "sh", "-c", "exit 3"])
        .stdin(Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(3));
    let out = Command::new(BIN)
        .args(["proxy", "--", "/no/such/server"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/no/such/server"));
    // No command at all is a usage error.
    let out = Command::new(BIN).args(["proxy"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_tapped_session_is_recorded_and_replays() {
    let dir = std::env::temp_dir().join(format!("structs-proxy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("tapped.jsonl");
    let _ = std::fs::remove_file(&log);
    let rt = support::console::runtime();
    let target = Target::Command(
        [
            BIN,
            "proxy",
            "--record",
            log.to_str().unwrap(),
            "--",
            BIN,
            "--headless",
            "--paused",
            "--log-level",
            "warn",
        ]
        .map(String::from)
        .to_vec(),
    );
    rt.block_on(async {
        let remote = Remote::connect(target, None)
            .await
            .expect("attach through the proxy");
        let player = remote
            .call(
                "structs_query_player",
                json!({"player_id": "1-1"}),
                CallContext::new(),
            )
            .await
            .expect("an answer through the proxy");
        assert_eq!(player["player"]["Player"]["id"], "1-1");
        let refused = remote
            .call(
                "structs_query_player",
                json!({"player_id": "1-999"}),
                CallContext::new(),
            )
            .await
            .expect_err("no such player");
        assert_eq!(refused.code.as_str(), "RESOURCE_NOT_FOUND");
        // Requests other than tool calls are recorded too.
        remote
            .request(
                "prompts/get",
                json!({"name": "brief", "arguments": {"entity_id": "1-1"}}),
                CallContext::new(),
            )
            .await
            .expect("a prompt through the proxy");
        remote
            .request(
                "resources/read",
                json!({"uri": "structs://docs/overview"}),
                CallContext::new(),
            )
            .await
            .expect("a resource through the proxy");
        remote.close().await;
    });
    drop(rt);
    let text = std::fs::read_to_string(&log).expect("the session log");
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let requests = lines.iter().filter(|l| l["type"] == "request").count();
    let responses: Vec<&serde_json::Value> =
        lines.iter().filter(|l| l["type"] == "response").collect();
    // The console's header asks for the block height once at attach, too.
    assert!(requests >= 2, "{text}");
    assert_eq!(requests, responses.len(), "{text}");
    assert!(
        responses.iter().any(|r| r["tool"] == "structs_query_player"
            && r["result"]["player"]["Player"]["id"] == "1-1"),
        "{text}"
    );
    assert!(
        responses
            .iter()
            .any(|r| r["error"]["error"]["code"] == "RESOURCE_NOT_FOUND"),
        "{text}"
    );
    // Every request is there: the handshake and lists the client made, the prompt
    // and the resource, each with its answer.
    let methods: Vec<&str> = lines
        .iter()
        .filter(|l| l["type"] == "request")
        .filter_map(|l| l["method"].as_str())
        .collect();
    assert!(
        methods.contains(&"server/discover") || methods.contains(&"initialize"),
        "{methods:?}"
    );
    for method in [
        "tools/list",
        "prompts/list",
        "prompts/get",
        "resources/read",
    ] {
        assert!(methods.contains(&method), "{method}: {methods:?}");
    }
    let prompt = lines
        .iter()
        .find(|l| l["type"] == "request" && l["method"] == "prompts/get")
        .unwrap();
    assert_eq!(prompt["tool"], "prompts/get brief", "{prompt}");
    assert_eq!(
        prompt["params"]["arguments"]["entity_id"], "1-1",
        "{prompt}"
    );
    let answered = lines
        .iter()
        .find(|l| l["type"] == "response" && l["call"] == prompt["call"])
        .expect("the prompt's answer");
    assert!(answered["result"]["messages"].is_array(), "{answered}");
    // The log runs again against the same world, answer for answer; the other
    // requests are counted, not checked.
    let out = Command::new(BIN)
        .args(["replay", log.to_str().unwrap(), "--check", "--paused"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        said.contains("other than tool calls, not checked") && said.contains("prompts/get 1"),
        "{said}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
