//! Several servers behind one address behave as one: three `--headless --http`
//! servers sharing one `serve-rest`, one Redis and one NATS, behind HAProxy with the
//! shipped deploy/haproxy.cfg, driven by the official Python MCP SDK's `Client` in its
//! default 2026-07-28 mode (tests/data/python_cluster.py). Every piece is the real
//! program; `.ci/run` installs them (see tests/support/cluster.rs).

mod support;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::cluster::{Cluster, Setup};
use support::peers::Peers;

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/python_cluster.py");

/// One set of servers at a time: several at once on a small machine would starve the
/// health checks the tests watch.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs the agent in `mode` to its end: its report.
fn agent(peers: &Peers, args: &[&str]) -> Value {
    finish(start_agent(peers, args))
}

fn start_agent(peers: &Peers, args: &[&str]) -> Child {
    Command::new(peers.python())
        .arg(SCRIPT)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the Python agent")
}

fn finish(child: Child) -> Value {
    let out = child.wait_with_output().expect("the Python agent");
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "the agent failed:\n{text}");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("no JSON ({e}):\n{text}"))
}

/// A session's report without its running time.
fn answers(mut report: Value) -> Value {
    report.as_object_mut().map(|o| o.remove("seconds"));
    report
}

/// The agent's session through three servers gives the answers it gives through one:
/// its handle read back page by page, a proof-of-work task, a long task cancelled, a
/// plan run once, and a listen stream seeing the transaction it sent, whichever server
/// each request reached. HAProxy spread the requests over all three.
#[test]
fn three_servers_behind_haproxy_answer_an_agent_as_one_server_does() {
    let _one = one_at_a_time();
    let Some(peers) = Peers::find() else { return };
    let Some(one) = Cluster::start(1, false) else {
        return;
    };
    let alone = answers(agent(&peers, &["session", &one.url()]));
    drop(one);
    let Some(three) = Cluster::start(3, true) else {
        return;
    };
    let spread = answers(agent(&peers, &["session", &three.url()]));
    let logs = three.logs();
    assert_eq!(spread, alone, "{logs}");

    let expected = json!({
        "protocol": "2026-07-28",
        "handle": {"players": 24, "first": "1-1", "pages": 4},
        "pow": {"status": "completed", "valid": true},
        "cancelled": "cancelled",
        "plan": {"success": true, "steps": ["succeeded", "succeeded"], "resolved": "1-10", "player": "1-10"},
        "plan_records": 1,
        "tx_error": false,
        "updated": true,
        "online_after": false,
    });
    for (key, want) in expected.as_object().unwrap() {
        match want {
            Value::Object(fields) => {
                for (f, v) in fields {
                    assert_eq!(&spread[key][f], v, "{key}.{f}: {spread:#}");
                }
            }
            _ => assert_eq!(&spread[key], want, "{key}: {spread:#}"),
        }
    }
    assert_eq!(
        spread["honored"].as_array().map(Vec::len),
        Some(1),
        "{spread:#}"
    );
    let stats = three.balancer_stats();
    assert_eq!(stats.len(), 3, "{stats:?}");
    for (name, state, sent) in &stats {
        assert!(
            state.starts_with("UP") && *sent > 0,
            "{name}: {state}, {sent} sent"
        );
    }
}

/// A 2025-11-25 session stays on the server that made it: HAProxy sends every request
/// carrying its `Mcp-Session-Id` there (a request reaching another server would be
/// refused with 404, the session unknown there).
#[test]
fn a_2025_session_sticks_to_its_server() {
    let _one = one_at_a_time();
    let Some(three) = Cluster::start(3, true) else {
        return;
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(sticks(&three));
}

async fn sticks(three: &Cluster) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let before = three.balancer_stats();
    let http = reqwest::Client::new();
    let post = |body: Value, session: Option<String>| {
        let mut req = http
            .post(three.url())
            .header("accept", "application/json, text/event-stream")
            .json(&body);
        if let Some(s) = session {
            req = req
                .header("mcp-session-id", s)
                .header("mcp-protocol-version", "2025-11-25");
        }
        req.send()
    };
    let init = post(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "sticky", "version": "1"}}}),
        None,
    )
    .await
    .unwrap();
    assert_eq!(init.status(), 200);
    let session = init.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_string();
    let _ = init.bytes().await;
    let note = post(
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        Some(session.clone()),
    )
    .await
    .unwrap();
    assert_eq!(note.status(), 202);
    for id in 2..11 {
        let answer = post(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
                "name": "structs_query_player", "arguments": {"player_id": "1-1"}}}),
            Some(session.clone()),
        )
        .await
        .unwrap();
        let status = answer.status();
        let body = answer.text().await.unwrap();
        assert_eq!(status, 200, "request {id}: {body}");
        assert!(body.contains("1-1"), "request {id}: {body}");
    }
    // Sent to one server only.
    let after = three.balancer_stats();
    let used = after.iter().zip(&before).filter(|(a, b)| a.2 > b.2).count();
    assert_eq!(used, 1, "before {before:?}, after {after:?}");
}

/// Waits for a file the agent writes, and reads it as JSON.
fn read_when_written(path: &Path, within: Duration) -> Value {
    let deadline = Instant::now() + within;
    loop {
        if let Ok(text) = std::fs::read_to_string(path) {
            return serde_json::from_str(&text).expect("JSON");
        }
        assert!(
            Instant::now() < deadline,
            "{} never written",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Whether an error the agent met is one it can retry: its connection lost or refused
/// (a server gone mid-request), the balancer's 502/503, the store briefly unreachable.
fn retryable(e: &str) -> bool {
    [
        "RESOURCE_UNAVAILABLE",
        " 502",
        " 503",
        "ConnectError",
        "RemoteProtocolError",
        "ReadError",
    ]
    .iter()
    .any(|k| e.contains(k))
}

/// The errors a steady agent met: each must be one it can retry (a transport error
/// or a 5xx from the balancer while a server went, a store that was briefly
/// unreachable), and no more than `most`.
fn only_retryable(steady: &Value, most: usize) {
    let errors = steady["errors"].as_array().unwrap();
    assert!(errors.len() <= most, "{steady:#}");
    for e in errors {
        let e = e.as_str().unwrap();
        assert!(
            retryable(e),
            "an error the agent cannot retry: {e}\n{steady:#}"
        );
    }
    assert!(
        steady["counts"]["calls"].as_u64().unwrap() > 0,
        "{steady:#}"
    );
}

/// A server killed mid-session: HAProxy takes it out, the agent's calls go on through
/// the others, and the tasks it was running are reported failed naming it, while the
/// others' tasks are cancelled as asked.
#[test]
fn a_killed_server_is_taken_out_and_its_tasks_end_failed_saying_why() {
    let _one = one_at_a_time();
    let Some(peers) = Peers::find() else { return };
    let Some(mut three) = Cluster::start(3, true) else {
        return;
    };
    let stop = three.dir().join("stop");
    let ids = three.dir().join("long.json");
    let steady = start_agent(&peers, &["steady", &three.url(), stop.to_str().unwrap()]);
    let long = start_agent(&peers, &["long", &three.url(), "3", ids.to_str().unwrap()]);
    let started = read_when_written(&ids, Duration::from_secs(60));
    let victim_server = started[0]["server"].as_str().unwrap().to_string();
    let victim = (0..3)
        .find(|&i| {
            three
                .pid(i)
                .is_some_and(|p| victim_server.ends_with(&format!(":{p}")))
        })
        .unwrap_or_else(|| panic!("no server runs {started}"));
    three.kill(victim);
    three.wait_in_rotation(victim, false);
    let long = finish(long);
    std::fs::write(&stop, "").unwrap();
    let steady = finish(steady);
    let logs = three.logs();
    eprintln!("long tasks: {long}\nsteady agent: {steady}");

    for t in long["tasks"].as_array().unwrap() {
        let on_victim = t["server"] == victim_server.as_str();
        let message = t["message"].as_str().unwrap_or_default();
        if on_victim {
            assert_eq!(t["status"], "failed", "{long:#}\n{logs}");
            assert!(
                message.contains("stopped") && message.contains(&victim_server),
                "{long:#}"
            );
        } else {
            assert_eq!(t["status"], "cancelled", "{long:#}\n{logs}");
        }
    }
    // A call in flight on the killed server may have lost its connection, or got the
    // balancer's 502: the agent opened another client and went on.
    only_retryable(&steady, 2);
    for e in long["errors"].as_array().unwrap() {
        assert!(retryable(e.as_str().unwrap()), "{long:#}");
    }
}

/// Redis and NATS restarting, then every server restarted in turn (SIGTERM: each
/// drains while HAProxy takes it out): the agent working throughout sees no error at
/// all, its handle outlives it all, the long tasks of a server that was shut down end
/// failed saying so (not left working), and afterwards a listen stream sees a
/// transaction sent through another server again.
#[test]
fn redis_nats_and_a_rolling_restart_lose_nothing() {
    let _one = one_at_a_time();
    let Some(peers) = Peers::find() else { return };
    let setup = Setup {
        servers: 3,
        balanced: true,
        persistent: true,
        ..Setup::default()
    };
    let Some(mut three) = Cluster::start_with(setup) else {
        return;
    };
    let stop = three.dir().join("stop");
    let ids = three.dir().join("long.json");
    let steady = start_agent(&peers, &["steady", &three.url(), stop.to_str().unwrap()]);
    let long = start_agent(&peers, &["long", &three.url(), "3", ids.to_str().unwrap()]);
    read_when_written(&ids, Duration::from_secs(60));
    let first = format!(":{}", three.pid(0).unwrap());
    std::thread::sleep(Duration::from_secs(1));
    three.restart_redis();
    std::thread::sleep(Duration::from_secs(2));
    three.restart_nats();
    std::thread::sleep(Duration::from_secs(2));
    for i in 0..three.servers() {
        let status = three.stop(i);
        assert!(
            status.is_some_and(|s| s.success()),
            "server {i}: {status:?}"
        );
        three.start_again(i);
    }
    std::thread::sleep(Duration::from_secs(1));
    std::fs::write(&stop, "").unwrap();
    let steady = finish(steady);
    let long = finish(long);
    let logs = three.logs();
    eprintln!("long tasks: {long}\nsteady agent: {steady}");
    // The long tasks on the first server restarted ended with it, saying so at once;
    // the agent then cancelled the others. Under load the next server may be
    // restarted before the agent's cancel reaches it: its tasks then end as the
    // first's did. None is left working, and none ends any other way.
    let tasks = long["tasks"].as_array().unwrap();
    let shut_down = |t: &Value| {
        t["status"] == "failed"
            && t["message"]
                .as_str()
                .unwrap_or_default()
                .contains("was shut down")
    };
    for t in tasks {
        if t["server"].as_str().unwrap().ends_with(&first) {
            assert!(shut_down(t), "{long:#}\n{logs}");
        } else {
            assert!(
                t["status"] == "cancelled" || shut_down(t),
                "{long:#}\n{logs}"
            );
        }
    }
    assert_eq!(long["errors"], json!([]), "{long:#}");
    // None of it cost the agent a call: the store reconnected on the call that found
    // Redis gone, and each server left the rotation before it stopped.
    assert_eq!(steady["errors"], json!([]), "{steady:#}\n{logs}");
    assert_eq!(steady["counts"]["connections"], 1, "{steady:#}");
    assert!(
        steady["counts"]["tasks"].as_u64().unwrap() > 5,
        "{steady:#}"
    );

    let after = agent(&peers, &["session", &three.url()]);
    assert_eq!(after["updated"], true, "{after:#}\n{logs}");
    assert_eq!(after["pow"]["valid"], true, "{after:#}");
}
