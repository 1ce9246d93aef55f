//! Recordings a team tests with: an agent on the official Python MCP SDK
//! (tests/data/recording_agent.py) recorded through the tap twice, the second run with
//! one step changed. `diff` finds exactly that step, `check` fails the second run on an
//! expectation it breaks, and its JUnit file passes the schema Jenkins' xUnit plugin
//! publishes (checked by Python's `xmlschema`). The peers are installed by `.ci/run`.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use support::agent::{BIN, runtime_dir};
use support::peers::Peers;

fn path(p: &Path) -> String {
    p.display().to_string()
}

/// Runs the agent's `variant` through `proxy --record LOG` in front of the embedded
/// server; returns the log and what the agent printed.
fn record(peers: &Peers, dir: &Path, variant: &str) -> (PathBuf, String) {
    let log = dir.join(format!("{variant}.jsonl"));
    let out = Command::new(peers.python())
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/recording_agent.py"))
        .arg(variant)
        .args([BIN, "proxy", "--record", &path(&log), "--"])
        .args([BIN, "--headless", "--paused"])
        .output()
        .expect("run the agent");
    let printed = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success() && printed.contains("\"done\": true"),
        "the agent failed: {printed}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (log, printed)
}

/// Runs the agent's `variant` against `serve-recording LOG` (with `more` options);
/// returns what it printed.
fn against_recording(peers: &Peers, log: &Path, variant: &str, more: &[&str]) -> Output {
    Command::new(peers.python())
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/recording_agent.py"))
        .arg(variant)
        .args([BIN, "serve-recording", &path(log)])
        .args(more)
        .output()
        .expect("run the agent")
}

fn run(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("run structs-console")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Expectations the changed run breaks (an error, a planet it failed to find) and the
/// first run keeps.
const EXPECT: &str = r#"
[calls]
max = 9
tools = { "structs_query_*" = { max = 4 } }

[errors]
max = 0

[duration]
max = "30s"

[tools]
required = ["structs_query_player", "tools/list"]
forbidden = ["structs_action_*"]

[[arguments]]
tool = "structs_query_planet"
pointer = "/planet_id"
matches = "^2-[0-9]{1,2}$"

[[order]]
first = "tools/list"
then = "structs_*"

[[rule]]
name = "no failed queries"
filter = "tool:structs_query_* status:error"
max = 0
"#;

#[test]
fn two_runs_of_a_python_agent_diff_to_their_one_change_and_check_fails_the_second() {
    let Some(peers) = Peers::find() else { return };
    let dir = runtime_dir("recordings");
    let (a, _) = record(&peers, &dir, "a");
    let (b, _) = record(&peers, &dir, "b");

    // The diff: every step the same but the planet's, which B asked for another of.
    let out = run(&["diff", &path(&a), &path(&b), "--json"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "the runs differ: {}",
        text(&out)
    );
    let diff: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(diff["counts"]["removed"], 1, "{diff:#}");
    assert_eq!(diff["counts"]["added"], 1, "{diff:#}");
    assert_eq!(diff["counts"]["changed"], 0, "{diff:#}");
    assert_eq!(diff["counts"]["same"], 8, "{diff:#}");
    let differ: Vec<&Value> = diff["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["op"] != "same")
        .collect();
    assert_eq!(differ[0]["a"]["tool"], "structs_query_planet");
    assert_eq!(differ[0]["a"]["arguments"]["planet_id"], "2-1");
    assert_eq!(differ[0]["a"]["outcome"], "ok");
    assert_eq!(differ[1]["b"]["arguments"]["planet_id"], "2-999");
    assert_eq!(differ[1]["b"]["code"], "RESOURCE_NOT_FOUND");
    let planet = diff["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["tool"] == "structs_query_planet")
        .unwrap();
    assert_eq!(
        (&planet["a"]["errors"], &planet["b"]["errors"]),
        (&0.into(), &1.into())
    );
    // As text: the two rows of the change, and the per-tool table.
    let out = run(&["diff", &path(&a), &path(&b), "--context", "0"]);
    let shown = text(&out);
    let rows: Vec<&str> = shown
        .lines()
        .filter(|l| l.starts_with(['=', '~', '-', '+']) && !l.starts_with("---"))
        .filter(|l| !l.starts_with("+++"))
        .collect();
    assert_eq!(rows.len(), 2, "{shown}");
    assert!(
        rows[0].starts_with('-') && rows[0].contains(r#"{"planet_id":"2-1"}"#),
        "{shown}"
    );
    assert!(
        rows[1].starts_with('+') && rows[1].contains("error RESOURCE_NOT_FOUND"),
        "{shown}"
    );
    assert!(
        shown.contains("structs_query_planet") && shown.contains("0→1"),
        "{shown}"
    );
    // A run is the same as itself.
    let out = run(&["diff", &path(&a), &path(&a)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));

    // The expectations: the first run keeps them, the second breaks three.
    let expect = dir.join("expect.toml");
    std::fs::write(&expect, EXPECT).unwrap();
    let out = run(&["check", &path(&a), "--expect", &path(&expect)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let junit = dir.join("junit.xml");
    let out = run(&[
        "check",
        &path(&b),
        "--expect",
        &path(&expect),
        "--junit",
        &path(&junit),
    ]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    for broken in [
        "FAIL errors.max",
        "FAIL arguments structs_query_planet/planet_id",
        "FAIL rule \"no failed queries\".max",
    ] {
        assert!(said.contains(broken), "{broken} in {said}");
    }
    assert_eq!(said.matches("FAIL").count(), 3, "{said}");
    // The JUnit file is valid against the published schema, and says the same.
    let checked = Command::new(peers.python())
        .args([
            "-c",
            "import sys, xmlschema; s = xmlschema.XMLSchema(sys.argv[1]); s.validate(sys.argv[2]); \
             d = s.to_dict(sys.argv[2]); suite = d['testsuite'][0]; \
             print(suite['@tests'], suite['@failures'], \
             sum(1 for c in suite['testcase'] if 'failure' in c))",
        ])
        .arg(peers.junit_schema())
        .arg(&junit)
        .output()
        .expect("run xmlschema");
    assert!(checked.status.success(), "{}", text(&checked));
    let counts = String::from_utf8_lossy(&checked.stdout);
    let expected_tests = said
        .lines()
        .filter(|l| l.starts_with("ok ") || l.starts_with("FAIL"))
        .count();
    assert_eq!(counts.trim(), format!("{expected_tests} 3 3"), "{said}");
    // A filter that leaves out the failed call: the second run keeps them again, but
    // for the planet's argument.
    let out = run(&[
        "check",
        &path(&b),
        "--expect",
        &path(&expect),
        "--filter",
        "-status:error",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // An expectations file that does not read exits 2, naming the key.
    std::fs::write(&expect, "[calls]\nmaximum = 3\n").unwrap();
    let out = run(&["check", &path(&b), "--expect", &path(&expect)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("maximum"), "{}", text(&out));
    let out = run(&["diff", &path(&a), &path(&b), "--filter", "colour:red"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("no key \"colour\""), "{}", text(&out));
}

#[test]
fn an_agent_against_a_recording_of_itself_gets_the_same_bytes_and_a_miss_names_the_nearest() {
    let Some(peers) = Peers::find() else { return };
    let dir = runtime_dir("serve-recording");
    let (a, printed) = record(&peers, &dir, "a");
    // The same agent, no world behind it: every answer byte for byte as recorded.
    let out = against_recording(&peers, &a, "a", &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), printed);

    // A call the recording lacks: a JSON-RPC error naming the nearest recorded call.
    let served = format!("{BIN} serve-recording {}", path(&a));
    let out = run(&[
        "client",
        "--connect",
        &served,
        "call",
        "structs_query_planet",
        "--args",
        r#"{"planet_id": "2-999"}"#,
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let said = text(&out);
    assert!(said.contains("-32602"), "{said}");
    assert!(
        said.contains(
            r#"the nearest it holds is tools/call structs_query_planet {\"planet_id\":\"2-1\"}"#
        ),
        "{said}"
    );

    // With a fallback, the miss goes to a real server, whose answer is recorded.
    let more = dir.join("more.jsonl");
    let fallback = format!("{BIN} --headless --paused");
    let served = format!(
        "{BIN} serve-recording {} --record {} --fallback '{fallback}'",
        path(&a),
        path(&more)
    );
    let out = run(&[
        "client",
        "--connect",
        &served,
        "call",
        "structs_query_planet",
        "--args",
        r#"{"planet_id": "2-2"}"#,
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let answer: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(
        answer["structuredContent"]["planet"]["Planet"]["id"], "2-2",
        "{answer:#}"
    );
    let recorded = std::fs::read_to_string(&more).unwrap();
    assert!(
        recorded
            .lines()
            .any(|l| l.contains(r#""type":"response""#) && l.contains(r#""id":"2-2""#)),
        "{recorded}"
    );
    // The agent's other run against the recording: its changed step fails, the rest
    // as recorded.
    let out = against_recording(&peers, &a, "b", &[]);
    assert!(
        !out.status.success(),
        "the changed step is not in the recording"
    );
    assert!(
        text(&out).contains("the nearest it holds"),
        "{}",
        text(&out)
    );
}

#[test]
fn watch_with_a_filter_prints_only_the_calls_it_matches_each_whole() {
    use support::agent::{lines_of, until};
    let dir = runtime_dir("watch-filter");
    let log = dir.join("session.jsonl");
    let line = |seq: u64, kind: &str, call: u64, rest: &str| {
        format!(
            r#"{{"v":5,"ts":"2026-12-01T10:00:{seq:02}Z","session":"s","seq":{seq},"type":"{kind}","call":{call},"tool":"structs_query_player",{rest}}}"#
        )
    };
    let mut text = String::new();
    for (n, fails) in [(1, false), (2, true), (3, false), (4, true)] {
        text.push_str(&line(
            2 * n - 1,
            "request",
            n,
            &format!(r#""arguments":{{"player_id":"1-{n}"}}"#),
        ));
        text.push('\n');
        let answer = if fails {
            r#""duration_ms":3,"error":{"error":{"code":"RESOURCE_NOT_FOUND","message":"no"}}"#
        } else {
            r#""duration_ms":1,"result":{"ok":true}"#
        };
        text.push_str(&line(2 * n, "response", n, answer));
        text.push('\n');
        if n == 2 {
            text.push_str(r#"{"v":5,"ts":"2026-12-01T10:00:04Z","session":"s","seq":40,"type":"notification","method":"notifications/progress","params":{}}"#);
            text.push('\n');
        }
    }
    std::fs::write(&log, text).unwrap();
    let mut watcher = Command::new(BIN)
        .args([
            "watch",
            &path(&log),
            "--filter",
            "status:error -code:NOT_FOUND",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let watched = lines_of(watcher.stdout.take().unwrap());
    let seen = until(&watched, "the fourth call's answer", |v| {
        v["call"] == 4 && v["type"] == "response"
    });
    let _ = watcher.kill();
    let _ = watcher.wait();
    let said: Vec<(String, u64)> = seen
        .iter()
        .map(|v| {
            (
                v["type"].as_str().unwrap().to_string(),
                v["call"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(
        said,
        [
            ("request".to_string(), 2),
            ("response".to_string(), 2),
            ("request".to_string(), 4),
            ("response".to_string(), 4)
        ],
        "{seen:#?}"
    );
}

/// Headless Chromium, or `None` (with a note; a failure under CI).
fn chromium() -> Option<PathBuf> {
    let found = ["chromium", "chromium-browser"].iter().find_map(|name| {
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        let note = "chromium is not installed (Debian's `chromium`; .ci/run installs it)";
        assert!(std::env::var_os("CI").is_none(), "{note}");
        eprintln!("skipped: {note}");
    }
    found
}

#[test]
fn the_report_of_two_runs_renders_in_chromium_with_its_timeline_diff_verdict_and_search() {
    let Some(peers) = Peers::find() else { return };
    let Some(chromium) = chromium() else { return };
    let dir = runtime_dir("report");
    let (a, _) = record(&peers, &dir, "a");
    let (b, _) = record(&peers, &dir, "b");
    let expect = dir.join("expect.toml");
    std::fs::write(&expect, EXPECT).unwrap();
    let page = dir.join("report.html");
    let out = run(&[
        "report",
        &path(&b),
        &path(&a),
        "-o",
        &path(&page),
        "--expect",
        &path(&expect),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        !html.contains("src=\"http") && !html.contains("href=\"http"),
        "self-contained"
    );
    let browse = |extra: &[String], hash: &str| {
        let out = Command::new(&chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
            ])
            .arg(format!("--user-data-dir={}", path(&dir.join("chromium"))))
            .args(extra)
            .arg(format!("file://{}{hash}", path(&page)))
            .output()
            .expect("run chromium");
        assert!(out.status.success(), "{}", text(&out));
        out
    };
    // The page as the browser built it, its script run, searching for the guild.
    let dom = String::from_utf8_lossy(
        &browse(&["--dump-dom".to_string()], "#q=structs_query_guild").stdout,
    )
    .to_string();
    assert_eq!(dom.matches("<rect class=\"call").count(), 9, "a bar a call");
    assert_eq!(
        dom.matches("<rect class=\"call error").count(),
        1,
        "the failed planet"
    );
    assert!(
        dom.contains("id=\"diff-summary\">8 same, 0 changed, 1 only in this run, 1 only in"),
        "{dom}"
    );
    assert_eq!(dom.matches("class=\"op-added\"").count(), 1);
    assert_eq!(dom.matches("class=\"op-removed\"").count(), 1);
    assert!(dom.contains("id=\"verdict\" class=\"fail\""), "{dom}");
    assert_eq!(
        dom.matches("<tr class=\"fail\">").count(),
        3,
        "three broken expectations"
    );
    let calls = dom.matches("<details class=\"call\"").count();
    assert_eq!(calls, 9);
    let hidden = dom.matches("<details class=\"call\" hidden").count();
    let shown: usize = dom
        .split("<span id=\"shown\">")
        .nth(1)
        .and_then(|t| t.split('<').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count shown: {dom}"));
    assert!(
        shown >= 1 && shown < calls,
        "the search narrowed the list: {shown}"
    );
    assert_eq!(hidden, calls - shown);
    // A screenshot: the page draws.
    let shot = dir.join("report.png");
    browse(
        &[
            format!("--screenshot={}", path(&shot)),
            "--window-size=1400,1800".to_string(),
        ],
        "",
    );
    let png = std::fs::read(&shot).expect("a screenshot");
    assert_eq!(&png[1..4], b"PNG");
    let (w, h) = (
        u32::from_be_bytes(png[16..20].try_into().unwrap()),
        u32::from_be_bytes(png[20..24].try_into().unwrap()),
    );
    assert_eq!((w, h), (1400, 1800));
    assert!(
        png.len() > 20_000,
        "more than a blank page: {} bytes",
        png.len()
    );
}

#[test]
fn check_follow_stops_at_the_first_expectation_broken_for_good() {
    use std::io::Write as _;
    let dir = runtime_dir("check-follow");
    let log = dir.join("live.jsonl");
    let call = |n: u64, tool: &str| {
        format!(
            "{{\"v\":5,\"ts\":\"2026-12-01T10:00:0{n}Z\",\"session\":\"s\",\"type\":\"request\",\"call\":{n},\"tool\":\"{tool}\",\"arguments\":{{}}}}\n\
             {{\"v\":5,\"ts\":\"2026-12-01T10:00:0{n}Z\",\"session\":\"s\",\"type\":\"response\",\"call\":{n},\"tool\":\"{tool}\",\"duration_ms\":2,\"result\":{{}}}}\n"
        )
    };
    std::fs::write(&log, call(1, "structs_query_player")).unwrap();
    let expect = dir.join("expect.toml");
    // A minimum not reached yet does not stop it; a forbidden tool does.
    std::fs::write(
        &expect,
        "[calls]\nmin = 5\n[tools]\nforbidden = [\"structs_action_*\"]\n",
    )
    .unwrap();
    let junit = dir.join("junit.xml");
    let mut checking = Command::new(BIN)
        .args(["check", &path(&log), "--expect", &path(&expect), "--follow"])
        .args(["--junit", &path(&junit)])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(800));
    assert!(
        checking.try_wait().unwrap().is_none(),
        "a minimum not reached yet is no reason to stop"
    );
    let mut file = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    file.write_all(call(2, "structs_query_planet").as_bytes())
        .unwrap();
    file.write_all(call(3, "structs_action_attack").as_bytes())
        .unwrap();
    file.flush().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let status = loop {
        if let Some(status) = checking.try_wait().unwrap() {
            break status;
        }
        assert!(std::time::Instant::now() < deadline, "check did not stop");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let out = checking.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(status.code(), Some(1), "{said}");
    assert!(
        said.contains("FAIL tools.forbidden \"structs_action_*\""),
        "{said}"
    );
    assert!(
        said.contains("FAIL calls.min: calls: 3, at least 5 expected"),
        "{said}"
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("failures=\"2\""), "{xml}");
}

/// Starts `args` (a server on `port`) and waits until it listens; killed when dropped.
struct Listening(std::process::Child);

impl Listening {
    fn start(args: &[&str], port: u16) -> Listening {
        let child = Command::new(BIN)
            .args(args)
            .env_remove("STRUCTS_CONSOLE_AUTH_TOKEN")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start a server");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "{args:?} did not listen"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        Listening(child)
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_stateless_2026_recording_is_served_over_http_as_it_was_recorded() {
    let dir = runtime_dir("serve-2026");
    let log = dir.join("stateless.jsonl");
    let ports = [
        support::daemon::free_port(),
        support::daemon::free_port(),
        support::daemon::free_port(),
    ];
    let addr = |p: u16| format!("127.0.0.1:{p}");
    let url = |p: u16| format!("http://127.0.0.1:{p}/mcp");
    let call = |p: u16| {
        run(&[
            "client",
            "--connect",
            &url(p),
            "call",
            "structs_query_player",
            "--args",
            r#"{"player_id": "1-2"}"#,
        ])
    };
    // The client (2026-07-28, stateless) through the tap in front of the server.
    let recorded = {
        let _server = Listening::start(
            &["--headless", "--paused", "--http", &addr(ports[0])],
            ports[0],
        );
        let _tap = Listening::start(
            &[
                "proxy",
                "--no-control",
                "--upstream",
                &url(ports[0]),
                "--http",
                &addr(ports[1]),
                "--record",
                &path(&log),
            ],
            ports[1],
        );
        call(ports[1])
    };
    assert!(recorded.status.success(), "{}", text(&recorded));
    let lines = std::fs::read_to_string(&log).unwrap();
    assert!(
        lines.contains(r#""method":"server/discover""#),
        "a 2026-07-28 client: {lines}"
    );
    // The recording over HTTP, no server behind it: the same answer, byte for byte.
    let _served = Listening::start(
        &["serve-recording", &path(&log), "--http", &addr(ports[2])],
        ports[2],
    );
    let served = call(ports[2]);
    assert!(served.status.success(), "{}", text(&served));
    assert_eq!(
        String::from_utf8_lossy(&served.stdout),
        String::from_utf8_lossy(&recorded.stdout)
    );
    let info = run(&["client", "--connect", &url(ports[2]), "info"]);
    let info: Value = serde_json::from_slice(&info.stdout).expect("JSON");
    assert_eq!(info["protocolVersion"], "2026-07-28", "{info:#}");
}

/// Rules a team adds to the standard ones: a key of its own and a key format.
const REDACT: &str = r#"
[redact]
keys = ["(?i)^session_key$"]
values = ["sk-live-[0-9A-Za-z]{8,}"]
"#;

#[test]
fn secrets_stay_out_of_the_tap_s_log_and_of_diff_report_and_serve_recording() {
    let Some(peers) = Peers::find() else { return };
    let dir = runtime_dir("redact");
    let config = dir.join("redact.toml");
    std::fs::write(&config, REDACT).unwrap();
    let secrets = ["K-9f8e7d6c", "sk-live-AbCdEf123456"];
    let holds = |text: &str, what: &str| {
        for s in secrets {
            assert!(!text.contains(s), "{what} holds {s}:\n{text}");
        }
        assert!(
            text.contains("[redacted: "),
            "{what} says nothing was hidden:\n{text}"
        );
    };

    // The tap, told the rules: neither secret reaches the log, and the request line
    // says which argument it does not hold.
    let kept = dir.join("kept.jsonl");
    let out = Command::new(peers.python())
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/recording_agent.py"))
        .arg("secret")
        .args([
            BIN,
            "proxy",
            "--config",
            &path(&config),
            "--record",
            &path(&kept),
        ])
        .args(["--", BIN, "--headless", "--paused"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let log = std::fs::read_to_string(&kept).unwrap();
    holds(&log, "the tap's log");
    assert!(log.contains(r#""redacted":["session_key"]"#), "{log}");
    assert!(log.contains(r#""redacted":["player_id"]"#), "{log}");

    // A log written without the rules holds both; what is made from it does not.
    let (plain, _) = record(&peers, &dir, "secret");
    let raw = std::fs::read_to_string(&plain).unwrap();
    assert!(secrets.iter().all(|s| raw.contains(s)), "{raw}");
    let cfg = path(&config);
    let diff = run(&[
        "diff",
        "--config",
        &cfg,
        "--all",
        &path(&plain),
        &path(&kept),
    ]);
    holds(&text(&diff), "diff");
    // With the secrets hidden alike, the two runs are the same run.
    assert_eq!(diff.status.code(), Some(0), "{}", text(&diff));
    let json = run(&[
        "diff",
        "--config",
        &cfg,
        "--json",
        "--all",
        &path(&plain),
        &path(&plain),
    ]);
    holds(&text(&json), "diff --json");
    let page = dir.join("report.html");
    let report = run(&[
        "report",
        "--config",
        &cfg,
        &path(&plain),
        "-o",
        &path(&page),
    ]);
    assert!(report.status.success(), "{}", text(&report));
    holds(&std::fs::read_to_string(&page).unwrap(), "the report");

    // Served, the recording gives no secret back; the agent's own secret argument still
    // finds its recorded call (a miss would name the nearest instead).
    let served = against_recording(&peers, &plain, "secret", &["--config", &cfg]);
    let said = text(&served);
    assert!(served.status.success(), "{said}");
    holds(&said, "serve-recording's answers");
    assert!(said.contains("VALIDATION_UNKNOWN_FIELD"), "{said}");
    assert!(!said.contains("the recording holds no"), "{said}");
}

#[test]
fn a_call_recorded_as_a_task_is_served_as_a_task_with_its_result_byte_for_byte() {
    let dir = runtime_dir("serve-task");
    let (log, again) = (dir.join("task.jsonl"), dir.join("served.jsonl"));
    let ports = [
        support::daemon::free_port(),
        support::daemon::free_port(),
        support::daemon::free_port(),
    ];
    let addr = |p: u16| format!("127.0.0.1:{p}");
    let url = |p: u16| format!("http://127.0.0.1:{p}/mcp");
    // A proof-of-work search: long work, which the server runs as a task for a client
    // that declares the extension (the console's client does).
    let search = |p: u16| {
        run(&[
            "client",
            "--connect",
            &url(p),
            "call",
            "structs_calculate_proof_of_work",
            "--args",
            r#"{"action_type": "struct_build_complete", "entity_id": "5-1", "difficulty": 700, "block_start": 1, "age": 600}"#,
        ])
    };
    let recorded = {
        let _server = Listening::start(
            &["--headless", "--paused", "--http", &addr(ports[0])],
            ports[0],
        );
        let _tap = Listening::start(
            &[
                "proxy",
                "--no-control",
                "--upstream",
                &url(ports[0]),
                "--http",
                &addr(ports[1]),
                "--record",
                &path(&log),
            ],
            ports[1],
        );
        search(ports[1])
    };
    assert!(recorded.status.success(), "{}", text(&recorded));
    let lines = std::fs::read_to_string(&log).unwrap();
    assert!(
        lines.contains(r#""type":"task""#) && lines.contains(r#""status":"completed""#),
        "the search ran as a task: {lines}"
    );
    // Served: a task again, polled to the recorded result; the client prints what it
    // printed then, byte for byte (the hash rate and time the search took among it).
    let _served = Listening::start(
        &[
            "serve-recording",
            &path(&log),
            "--http",
            &addr(ports[2]),
            "--record",
            &path(&again),
        ],
        ports[2],
    );
    let served = search(ports[2]);
    assert!(served.status.success(), "{}", text(&served));
    assert!(
        String::from_utf8_lossy(&recorded.stdout).contains("\"nonce\""),
        "{}",
        text(&recorded)
    );
    assert_eq!(
        String::from_utf8_lossy(&served.stdout),
        String::from_utf8_lossy(&recorded.stdout)
    );
    let lines = std::fs::read_to_string(&again).unwrap();
    assert!(
        lines.contains(r#""type":"task""#) && lines.contains(r#""status":"completed""#),
        "the recording gave a task: {lines}"
    );
}
