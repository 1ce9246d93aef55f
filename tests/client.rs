//! `structs-console client`, the console's MCP client as a command, checked against
//! software nobody on the team wrote: the official conformance suite's client
//! scenarios, and the MCP reference server (`server-everything`) for every part of the
//! protocol a client takes part in. Also against the project's own headless server,
//! over stdio and HTTP. `.ci/run` installs the peers (see tests/support/peers.rs).

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::mcp_http::Headless;
use support::peers::Peers;

const BIN: &str = env!("CARGO_BIN_EXE_structs-console");

/// The reference server as a `--connect` command line.
fn everything(peers: &Peers) -> String {
    format!(
        "{} {} stdio",
        peers.node().display(),
        peers.everything().display()
    )
}

/// Our own headless server, paused, as a `--connect` command line.
fn ours() -> String {
    format!("{BIN} --headless --paused --log-level warn")
}

/// Runs `structs-console client --connect TARGET ARGS…`.
fn client(target: &str, args: &[&str]) -> Output {
    client_with(target, &[], args, None)
}

/// As [`client`], with options before `--connect` and stdin text.
fn client_with(target: &str, options: &[&str], args: &[&str], stdin: Option<&str>) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.arg("client")
        .args(options)
        .args(["--connect", target])
        .args(args)
        .env_remove("STRUCTS_CONSOLE_AUTH_TOKEN")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("run structs-console client");
    {
        use std::io::Write;
        let mut input = child.stdin.take().unwrap();
        if let Some(text) = stdin {
            input.write_all(text.as_bytes()).unwrap();
        }
    }
    child
        .wait_with_output()
        .expect("structs-console client ends")
}

/// The JSON it printed, and whether it exited 0.
fn answer(out: &Output) -> (Value, bool) {
    let text = String::from_utf8_lossy(&out.stdout);
    let value = serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}):\n{text}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (value, out.status.success())
}

/// The answer of a run that must succeed.
fn ok(out: &Output) -> Value {
    let (value, success) = answer(out);
    assert!(
        success,
        "exit {:?}: {value:#}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    value
}

/// A tool result's text blocks, joined.
fn text_of(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// The names in a list answer (`tools`, `prompts`, …).
fn names(list: &Value, key: &str, field: &str) -> Vec<String> {
    list[key]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i[field].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// The client scenarios each pass: the suite drives `structs-console client` through
/// tests/data/conformance_client.sh, once offering the newest protocol (with its
/// fallback) and once pinned to an older version.
#[test]
fn the_conformance_suites_client_scenarios_pass() {
    let Some(peers) = Peers::find() else { return };
    let runs: [(&str, Option<&str>); 5] = [
        ("initialize", None),
        ("initialize", Some("2025-06-18")),
        ("tools_call", None),
        ("elicitation-sep1034-client-defaults", None),
        ("sse-retry", None),
    ];
    for (scenario, protocol) in runs {
        let checks = client_scenario(&peers, &peers.conformance(), scenario, protocol, &[]);
        if let Some(v) = protocol {
            let sent = checks
                .iter()
                .find(|c| c["id"] == "mcp-client-initialization")
                .map(|c| c["details"]["protocolVersionSent"].clone());
            assert_eq!(sent, Some(json!(v)));
        }
    }
}

/// The 2026-07-28 suite's client scenarios that need no authorization server: a tool
/// call, the `_meta` and headers of every request, and the rounds of a server that asks
/// for input (the state echoed as it came, a new id for each retry, no state where none
/// was given); the `Mcp-Method` and `Mcp-Name` headers of each kind of request; the
/// `Mcp-Param-*` headers of `x-mcp-header` arguments, and a tool whose annotations are
/// invalid left out of the list; a tool
/// schema's network `$ref` never fetched, and its 2020-12 keywords kept as they came.
#[test]
fn the_2026_suites_client_scenarios_pass() {
    let Some(peers) = Peers::find() else { return };
    for scenario in [
        "tools_call",
        "request-metadata",
        "sep-2322-client-request-state",
        "http-standard-headers",
        "http-custom-headers",
        "http-invalid-tool-headers",
        "json-schema-ref-no-deref",
        "json-schema-2020-12-preservation",
    ] {
        let checks = client_scenario(&peers, &peers.conformance_2026(), scenario, None, &[]);
        if scenario == "sep-2322-client-request-state" {
            let echoed = checks
                .iter()
                .find(|c| c["id"] == "sep-2322-client-request-state-echoed");
            assert!(
                echoed.is_some_and(|c| c["status"] == "SUCCESS"),
                "{checks:#?}"
            );
        }
    }
}

/// A server's skill loaded as a host loads it: listed, then its `SKILL.md` and every
/// other file read, each checked against the entry (a file that differs is refused:
/// the 2026 suite's `sep-2640-client-verify-*` scenarios serve such files).
#[test]
fn a_skill_is_listed_then_loaded_with_every_file_checked() {
    let docs = support::docs::TempDocs::copy_of("skills-docs");
    let server = format!("{} --docs {}", ours(), docs.root().display());
    let listed = ok(&client(&server, &["skills"]));
    let names = names(&listed, "skills", "uri");
    assert_eq!(names, ["skill://structs-scouting/SKILL.md"], "{listed:#}");
    let loaded = ok(&client(&server, &["skill", "structs-scouting"]));
    assert_eq!(loaded["skill"], "structs-scouting");
    let files = loaded["files"].as_array().unwrap();
    assert!(files.len() >= 2, "{loaded:#}");
    for file in files {
        let uri = file["uri"].as_str().unwrap();
        let rel = uri.replace("skill://", "skills/");
        assert_eq!(file["text"], docs.read(&rel).as_str(), "{uri}");
    }
    // A skill the server does not list: exit 1, saying so.
    let out = client(&server, &["skill", "no-such-skill"]);
    assert_eq!(out.status.code(), Some(1));
    let (said, _) = answer(&out);
    assert!(
        said.to_string().contains("lists no skill no-such-skill"),
        "{said}"
    );
}

/// Every client scenario of both suites (`--suite all`: the authorization, skills and
/// pending ones too) passes outside its baseline, which names the gap behind each
/// failure; a baseline entry that passes fails the run too. The totals are printed
/// (`--nocapture`).
#[test]
fn every_client_scenario_of_both_suites_passes_outside_its_baseline() {
    let Some(peers) = Peers::find() else { return };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/conformance_client.sh");
    // The checks passed today: fewer is a scenario the client no longer serves.
    for (suite, era, baseline, passed) in [
        (
            peers.conformance(),
            "2025-11-25",
            "conformance-client-baseline.yaml",
            333,
        ),
        (
            peers.conformance_2026(),
            "2026-07-28",
            "conformance-client-2026-baseline.yaml",
            554,
        ),
    ] {
        let baseline = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(baseline);
        let dir =
            std::env::temp_dir().join(format!("structs-client-suite-{}-{era}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut cmd = peers.command(&suite);
        cmd.args(["client", "--command"])
            .arg(format!("bash {}", script.display()))
            .args(["--suite", "all", "--expected-failures"])
            .arg(&baseline)
            .arg("-o")
            .arg(&dir)
            .env("STRUCTS_CONSOLE_BIN", BIN)
            .env_remove("CLIENT_PROTOCOL");
        let (out, log, checks) = suite_run(cmd, &dir);
        let count = |status: &str| checks.iter().filter(|c| c["status"] == status).count();
        println!(
            "client, {era}: {} checks passed, {} failed, {} warnings",
            count("SUCCESS"),
            count("FAILURE"),
            count("WARNING")
        );
        assert!(out.status.success(), "{era}: outside the baseline\n{log}");
        assert!(count("SUCCESS") >= passed, "{era}: {log}");
    }
}

/// OAuth as a person does it, in the browser (curl plays it: it opens the URL the
/// client prints and follows the redirect back to the client's loopback listener):
/// metadata discovered, a client registered, PKCE, the resource named as published;
/// then a step-up asking for the new scope with the old.
#[test]
fn oauth_in_the_browser_authorizes_and_steps_up() {
    let Some(peers) = Peers::find() else { return };
    let browser = [("OAUTH_BROWSER", "1")];
    for (scenario, wanted) in [
        (
            "auth/metadata-default",
            &[
                "client-registration",
                "pkce-verifier-matches-challenge",
                "resource-parameter-matches-prm",
            ][..],
        ),
        (
            "auth/scope-step-up",
            &["scope-step-up-initial", "scope-step-up-escalation"][..],
        ),
    ] {
        let checks = client_scenario(&peers, &peers.conformance_2026(), scenario, None, &browser);
        for id in wanted {
            assert!(
                checks
                    .iter()
                    .any(|c| c["id"] == *id && c["status"] == "SUCCESS"),
                "{scenario}: {id} missing\n{checks:#?}"
            );
        }
    }
}

/// Runs one client scenario of the suite at `suite` against `structs-console client`
/// (offering `protocol`, or the newest; the script's environment given `env`) and
/// checks that every judged check passed: the checks.
fn client_scenario(
    peers: &Peers,
    suite: &Path,
    scenario: &str,
    protocol: Option<&str>,
    env: &[(&str, &str)],
) -> Vec<Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/conformance_client.sh");
    // The two suites share scenario names, and their tests run at once.
    let era = if suite.to_string_lossy().contains("conformance-2026") {
        "2026"
    } else {
        "2025"
    };
    let dir = std::env::temp_dir().join(format!(
        "structs-client-conformance-{}-{era}-{scenario}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let mut cmd = peers.command(suite);
    cmd.args(["client", "--command"])
        .arg(format!("bash {}", script.display()))
        .args(["--scenario", scenario, "-o"])
        .arg(&dir)
        .env("STRUCTS_CONSOLE_BIN", BIN)
        .envs(env.iter().copied());
    match protocol {
        Some(v) => cmd.env("CLIENT_PROTOCOL", v),
        None => cmd.env_remove("CLIENT_PROTOCOL"),
    };
    let (out, log, checks) = suite_run(cmd, &dir);
    assert!(out.status.success(), "{scenario}:\n{log}");
    // INFO says what happened; SKIPPED, what the scenario could not exercise (a 2026
    // client sends no `initialize` for its header to be checked on).
    let judged: Vec<&Value> = checks
        .iter()
        .filter(|c| c["status"] != "INFO" && c["status"] != "SKIPPED")
        .collect();
    assert!(!judged.is_empty(), "{scenario}: no checks\n{log}");
    for check in judged {
        assert_eq!(check["status"], "SUCCESS", "{scenario}: {check:#}\n{log}");
    }
    checks
}

/// Runs the suite's `cmd`, writing to `dir`: its exit, its output, and the checks it
/// wrote (the folder is removed after).
fn suite_run(mut cmd: Command, dir: &Path) -> (Output, String, Vec<Value>) {
    let out = cmd.output().expect("run the conformance suite");
    let log = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let checks = checks_in(dir);
    let _ = std::fs::remove_dir_all(dir);
    (out, log, checks)
}

/// Every `checks.json` under the suite's output folder.
fn checks_in(dir: &Path) -> Vec<Value> {
    let mut out = Vec::new();
    let mut stack: Vec<PathBuf> = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.file_name().is_some_and(|n| n == "checks.json") {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                if let Ok(Value::Array(list)) = serde_json::from_str(&text) {
                    out.extend(list);
                }
            }
        }
    }
    out
}

#[test]
fn the_reference_server_shows_every_list_and_read() {
    let Some(peers) = Peers::find() else { return };
    let se = everything(&peers);

    let info = ok(&client(&se, &["info"]));
    assert_eq!(info["serverInfo"]["name"], "mcp-servers/everything");
    assert!(info["protocolVersion"].is_string(), "{info:#}");

    // The sampling, elicitation and roots tools show only to a client that declares
    // those capabilities.
    let tools = names(&ok(&client(&se, &["tools"])), "tools", "name");
    for tool in [
        "echo",
        "trigger-sampling-request",
        "trigger-elicitation-request",
        "get-roots-list",
    ] {
        assert!(tools.iter().any(|t| t == tool), "{tool} in {tools:?}");
    }

    let echoed = ok(&client(
        &se,
        &["call", "echo", "--args", r#"{"message": "hello"}"#],
    ));
    assert!(text_of(&echoed).contains("hello"), "{echoed:#}");

    let resources = ok(&client(&se, &["resources"]));
    let uris = names(&resources, "resources", "uri");
    assert!(uris.len() >= 2, "{resources:#}");
    let first = ok(&client(&se, &["resources", "--cursor", ""]));
    assert!(first["resources"].is_array(), "{first:#}");

    let templates = ok(&client(&se, &["templates"]));
    let template_uris = names(&templates, "resourceTemplates", "uriTemplate");
    assert!(
        template_uris.iter().any(|t| t.contains("{resourceId}")),
        "{templates:#}"
    );

    let text = ok(&client(&se, &["read", "demo://resource/dynamic/text/7"]));
    assert!(
        text["contents"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains('7')),
        "{text:#}"
    );
    let blob = ok(&client(&se, &["read", "demo://resource/dynamic/blob/7"]));
    assert!(blob["contents"][0]["blob"].is_string(), "{blob:#}");

    let prompts = names(&ok(&client(&se, &["prompts"])), "prompts", "name");
    assert!(prompts.iter().any(|p| p == "args-prompt"), "{prompts:?}");
    let got = ok(&client(
        &se,
        &["prompt", "args-prompt", "--args", r#"{"city": "Oslo"}"#],
    ));
    assert_eq!(got["messages"][0]["role"], "user", "{got:#}");
    assert!(
        got["messages"][0]["content"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("Oslo"))
    );
    let embedded = ok(&client(
        &se,
        &[
            "prompt",
            "resource-prompt",
            "--args",
            r#"{"resourceType": "Text", "resourceId": "2"}"#,
        ],
    ));
    assert!(
        embedded.to_string().contains(r#""type":"resource""#),
        "an embedded resource: {embedded:#}"
    );

    let completed = ok(&client(
        &se,
        &["complete", "prompt:completable-prompt", "department", "Eng"],
    ));
    assert_eq!(completed["completion"]["values"][0], "Engineering");
    let by_template = ok(&client(
        &se,
        &[
            "complete",
            "resource:demo://resource/dynamic/text/{resourceId}",
            "resourceId",
            "1",
        ],
    ));
    assert!(
        by_template["completion"]["values"].is_array(),
        "{by_template:#}"
    );

    assert_eq!(ok(&client(&se, &["ping"])), json!({}));
    let raw = ok(&client(&se, &["request", "prompts/list", "--params", "{}"]));
    assert!(raw["prompts"].is_array(), "{raw:#}");
}

#[test]
fn sampling_is_answered_by_the_scripted_reply_or_rejected() {
    let Some(peers) = Peers::find() else { return };
    let se = everything(&peers);
    let args = [
        "call",
        "trigger-sampling-request",
        "--args",
        r#"{"prompt": "2+2?", "maxTokens": 5}"#,
    ];
    let replied = ok(&client_with(
        &se,
        &["--sampling-reply", "four"],
        &args,
        None,
    ));
    let said = text_of(&replied);
    assert!(said.contains("four"), "{said}");
    assert!(said.contains("structs-console operator"), "{said}");

    let out = client(&se, &args);
    let (rejected, success) = answer(&out);
    assert!(
        !success,
        "a rejected sampling makes the tool fail: {rejected:#}"
    );
    assert_eq!(rejected["isError"], true);
    assert!(text_of(&rejected).contains("rejected"), "{rejected:#}");
}

#[test]
fn elicitation_is_accepted_declined_or_cancelled() {
    let Some(peers) = Peers::find() else { return };
    let se = everything(&peers);
    let call = ["call", "trigger-elicitation-request"];
    for (how, said) in [
        ("accept-defaults", r#""action": "accept""#),
        ("decline", r#""action": "decline""#),
        ("cancel", r#""action": "cancel""#),
    ] {
        let result = ok(&client_with(&se, &["--elicitation", how], &call, None));
        let text = text_of(&result);
        assert!(text.contains(said), "{how}: {text}");
        if how == "accept-defaults" {
            // The form's defaults are what was sent.
            assert!(text.contains("It was a dark and stormy night."), "{text}");
        }
    }
}

#[test]
fn roots_are_listed_to_the_server() {
    let Some(peers) = Peers::find() else { return };
    let se = everything(&peers);
    let dir = std::env::temp_dir().join(format!("structs-client-root-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let here = env!("CARGO_MANIFEST_DIR");
    let result = ok(&client_with(
        &se,
        &["--root", dir.to_str().unwrap(), "--root", here],
        &["call", "get-roots-list"],
        None,
    ));
    let text = text_of(&result);
    assert!(text.contains("2 total"), "{text}");
    let canonical = std::fs::canonicalize(&dir).unwrap();
    assert!(
        text.contains(&format!("file://{}", canonical.display())),
        "{text}"
    );
    let _ = std::fs::remove_dir(&dir);

    let out = client_with(&se, &["--root", "/no/such/dir"], &["tools"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/no/such/dir"));
}

#[test]
fn a_long_call_is_cancelled_by_an_interrupt_and_the_server_is_told() {
    let Some(peers) = Peers::find() else { return };
    let se = everything(&peers);
    let child = Command::new(BIN)
        .args(["client", "--notifications", "--connect", &se])
        .args([
            "call",
            "trigger-long-running-operation",
            "--args",
            r#"{"duration": 30, "steps": 30}"#,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Progress shows the call is running; then an interrupt ends it. (The notifications
    // are printed at the end; the wait leaves a slow start under load time for some.)
    std::thread::sleep(Duration::from_millis(4000));
    let sent = Instant::now();
    // SAFETY: signalling our own child by its pid.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        sent.elapsed() < Duration::from_secs(5),
        "ended soon after the interrupt"
    );
    let (value, success) = answer(&out);
    assert!(!success);
    assert_eq!(value["error"]["code"], "TOOL_CANCELLED", "{value:#}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("notifications/progress"), "{stderr}");
}

/// A prompt asked for without its arguments says how to give them; the server's
/// question for them is answered by name.
#[test]
fn a_prompt_without_its_arguments_says_how_to_give_them() {
    let server = format!("{BIN} --headless --paused --log-level warn");
    let out = client_with(&server, &[], &["prompt", "next"], None);
    let (value, success) = answer(&out);
    assert!(!success, "{value:#}");
    let message = value["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("needs player_id"), "{message}");
    assert!(
        message.contains("--args") && message.contains("--answer"),
        "{message}"
    );
    let out = client_with(
        &server,
        &["--answer", "player_id=1-2"],
        &["prompt", "next"],
        None,
    );
    let (value, success) = answer(&out);
    assert!(success, "{value:#}");
    assert!(
        value["description"]
            .as_str()
            .unwrap_or_default()
            .contains("1-2"),
        "{value:#}"
    );
}

/// Ctrl-C in a terminal signals the whole foreground process group. The server the
/// client started is in a group of its own, so the interrupt reaches only the client:
/// it cancels the call (`TOOL_CANCELLED`, not a transport that closed under it) and
/// then stops the server.
#[test]
fn an_interrupt_to_the_terminals_group_cancels_the_call_and_stops_the_server() {
    use std::os::unix::process::CommandExt;
    // A mark on the server's command line, to find it among the processes.
    let mark = format!("{}", 900_000 + std::process::id() % 99_999);
    let server = format!("{BIN} --headless --paused --seed {mark}");
    let child = Command::new(BIN)
        .args(["client", "--connect", &server, "call"])
        .args([
            "structs_calculate_proof_of_work",
            "--args",
            r#"{"action_type": "struct_build_complete", "entity_id": "5-1", "block_start": 10, "age": 1, "difficulty": 700, "max_iterations": 1000000000000}"#,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // The client leads a group, as a shell's foreground job does.
        .process_group(0)
        .spawn()
        .unwrap();
    let group = child.id() as i32;
    let running = |mark: &str| {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
            .any(|c| {
                let c = String::from_utf8_lossy(&c).replace('\0', " ");
                c.contains("--headless") && c.contains(mark)
            })
    };
    let started = Instant::now();
    while !running(&mark) && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(running(&mark), "the server started");
    // Time for the search to be under way.
    std::thread::sleep(Duration::from_millis(2500));
    // SAFETY: signalling the group our child leads, as the terminal would.
    unsafe {
        libc::killpg(group, libc::SIGINT);
    }
    let out = child.wait_with_output().unwrap();
    let (value, success) = answer(&out);
    assert!(!success);
    assert_eq!(value["error"]["code"], "TOOL_CANCELLED", "{value:#}");
    let gone = Instant::now();
    while running(&mark) && gone.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(!running(&mark), "the server was stopped");
}

#[test]
fn a_session_runs_several_requests_in_one_connection() {
    let Some(peers) = Peers::find() else { return };
    let se = everything(&peers);
    // Logging and resource updates are turned on by a tool, in the same session.
    let lines = "\
# the server's simulated log, at a 5 s pace
call toggle-simulated-logging
log-level debug --wait 7
call toggle-subscriber-updates
subscribe demo://resource/static/document/architecture.md --wait 7
request no/such-method
";
    let out = client_with(&se, &[], &["session", "-"], Some(lines));
    assert_eq!(out.status.code(), Some(1), "one request was refused");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let answers: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(answers.len(), 6, "{stdout}");
    let messages = answers[1]["messages"].as_array().unwrap();
    assert!(
        messages
            .iter()
            .any(|m| m["params"]["logger"] == "everything-server"
                && m["params"]["level"].is_string()),
        "{stdout}"
    );
    assert_eq!(
        answers[3]["updates"][0]["params"]["uri"],
        "demo://resource/static/document/architecture.md",
        "{stdout}"
    );
    assert!(answers[4]["error"]["code"].is_string(), "{stdout}");
    assert_eq!(answers[5]["answered"], 5);
    assert_eq!(answers[5]["failed"], 1);
    assert_eq!(answers[5]["ok"], false);
}

/// The caller's own mistakes exit 2, said on stderr, before the server is started;
/// the server's refusals exit 1 with the error on stdout.
#[test]
fn the_callers_mistakes_exit_2_and_the_servers_refusals_1() {
    // A server that would leave a mark if it were started.
    let dir = std::env::temp_dir().join(format!("structs-client-mistakes-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("server.jsonl");
    let server = format!("{} --record {}", ours(), log.display());
    let mistakes: [(&[&str], Option<&str>, &str); 7] = [
        (
            &["call", "structs_query_block_height", "--args", "{"],
            None,
            "--args is not JSON",
        ),
        (
            &["call", "structs_query_block_height", "--args", "[1]"],
            None,
            "--args must be a JSON object",
        ),
        (&["prompt", "brief", "--args", "1-1"], None, "--args"),
        (
            &["request", "ping", "--params", "nope"],
            None,
            "--params is not JSON",
        ),
        (
            &["complete", "brief", "entity_id"],
            None,
            "names neither a prompt",
        ),
        (&["session", "-"], Some("ping\nnot-a-command\n"), "line 2"),
        (
            &["session", "-"],
            Some("ping\ncall x --args '{'\n"),
            "line 2: --args is not JSON",
        ),
    ];
    for (args, stdin, said) in mistakes {
        let out = client_with(&server, &[], args, stdin);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing on stdout");
        assert!(stderr.contains(said), "{args:?}: {stderr}");
    }
    assert!(!log.exists(), "no server was started for a mistake");

    // A refusal: exit 1, the project's error, naming the server, not its command line.
    let out = client(&server, &["read", "structs://entities/1-999"]);
    let (value, success) = answer(&out);
    assert!(!success);
    assert_eq!(value["error"]["code"], "RESOURCE_NOT_FOUND", "{value:#}");
    let message = value["error"]["message"].as_str().unwrap();
    assert!(message.contains("1-999"), "{message}");
    assert!(!message.contains("--headless"), "{message}");
    let out = client(&server, &["read", "structs://entities/nope"]);
    assert_eq!(answer(&out).0["error"]["code"], "VALIDATION_INVALID_FORMAT");

    // A session says how many failed.
    let out = client_with(
        &server,
        &[],
        &["session", "-"],
        Some("ping\ncall no_such_tool\nread structs://entities/1-999\n"),
    );
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(summary["answered"], 3, "{stdout}");
    assert_eq!(summary["failed"], 2, "{stdout}");
    assert_eq!(summary["ok"], false, "{stdout}");

    // A script's call is the only call: the server's log holds no other.
    let _ = std::fs::remove_file(&log);
    ok(&client(
        &server,
        &[
            "call",
            "structs_query_player",
            "--args",
            r#"{"player_id": "1-1"}"#,
        ],
    ));
    let recorded = std::fs::read_to_string(&log).unwrap();
    let tools: Vec<String> = recorded
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "request")
        .filter_map(|v| v["tool"].as_str().map(String::from))
        .collect();
    assert_eq!(tools, ["structs_query_player"], "{recorded}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn our_own_server_over_stdio_through_the_fallback_and_a_pinned_version() {
    let ours = ours();
    let info = ok(&client(&ours, &["info"]));
    assert_eq!(info["serverInfo"]["name"], "structs-console");
    // The newest protocol is offered and taken: this server speaks 2026-07-28.
    assert_eq!(info["protocolVersion"], "2026-07-28");
    // server/discover's word on the versions it speaks, which a session has not.
    assert_eq!(info["supportedVersions"][0], "2024-11-05", "{info:#}");
    assert_eq!(
        info["capabilities"]["extensions"]["io.modelcontextprotocol/tasks"],
        json!({})
    );
    let pinned = ok(&client_with(
        &ours,
        &["--protocol-version", "2025-06-18"],
        &["info"],
        None,
    ));
    assert_eq!(pinned["protocolVersion"], "2025-06-18");
    let pinned = ok(&client_with(
        &ours,
        &["--protocol-version", "2025-11-25"],
        &["info"],
        None,
    ));
    assert_eq!(pinned["protocolVersion"], "2025-11-25");
    assert!(pinned.get("supportedVersions").is_none(), "{pinned:#}");
    // `ping` works in both eras (2026-07-28 removed the method; the client asks
    // server/discover instead).
    for pin in [&[][..], &["--protocol-version", "2025-11-25"][..]] {
        assert_eq!(ok(&client_with(&ours, pin, &["ping"], None)), json!({}));
    }
    let out = client_with(
        &ours,
        &["--protocol-version", "1999-01-01"],
        &["info"],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("newest, 2024-11-05"));

    let tools = names(&ok(&client(&ours, &["tools"])), "tools", "name");
    assert!(
        tools.iter().any(|t| t == "structs_list_entities"),
        "{tools:?}"
    );
    let height = ok(&client(&ours, &["call", "structs_query_block_height"]));
    assert!(
        height["structuredContent"]["height"].as_u64().is_some(),
        "{height:#}"
    );

    // An error answer: exit 1 and the error, in the project's format.
    let out = client(&ours, &["call", "no_such_tool"]);
    let (value, success) = answer(&out);
    assert!(!success);
    assert_eq!(value["error"]["code"], "TOOL_NOT_FOUND", "{value:#}");

    let resources = ok(&client(&ours, &["resources"]));
    assert!(
        !names(&resources, "resources", "uri").is_empty(),
        "{resources:#}"
    );
    let templates = ok(&client(&ours, &["templates"]));
    assert!(
        !names(&templates, "resourceTemplates", "uriTemplate").is_empty(),
        "{templates:#}"
    );
    let prompts = names(&ok(&client(&ours, &["prompts"])), "prompts", "name");
    assert!(!prompts.is_empty());
    assert_eq!(
        ok(&client(&ours, &["log-level", "warning"]))["level"],
        "warning"
    );
    let out = client(&ours, &["log-level", "loud"]);
    assert_eq!(answer(&out).0["error"]["code"], "VALIDATION_INVALID_FORMAT");
}

/// A 2026-07-28 server has no `resources/subscribe`: `subscribe` opens a
/// `subscriptions/listen` stream naming the resource, and the update a transaction
/// makes arrives on it. A resource the server does not watch is refused by name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_server_is_watched_through_a_listen_stream() {
    let server = Headless::start(&["--paused"], &[]).await;
    let url = server.url.clone();
    let (watched, refused) = tokio::task::spawn_blocking(move || {
        let watcher = Command::new(BIN)
            .args(["client", "--connect", &url])
            .args(["subscribe", "structs://entities/5-1", "--wait", "10"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(2500));
        let tx = r#"{"transaction": {"body": {"messages": [
            {"@type": "/structs.structs.MsgStructDeactivate", "structId": "5-1"}]}}}"#;
        ok(&client(
            &url,
            &["call", "structs_action_submit_transaction", "--args", tx],
        ));
        let watched = watcher.wait_with_output().unwrap();
        let refused = client(&url, &["subscribe", "structs://handles/x", "--wait", "1"]);
        (watched, refused)
    })
    .await
    .unwrap();
    server.stop().await;
    let got = ok(&watched);
    let update = &got["updates"][0];
    assert_eq!(
        update["method"], "notifications/resources/updated",
        "{got:#}"
    );
    assert_eq!(update["params"]["uri"], "structs://entities/5-1");
    assert!(
        update["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"].is_number(),
        "{got:#}"
    );
    let (said, success) = answer(&refused);
    assert!(!success);
    assert_eq!(said["error"]["code"], "RESOURCE_NOT_FOUND", "{said:#}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_own_server_over_http_with_its_token() {
    let token = "client-test-token-0123456789";
    let server = Headless::start(&["--paused"], &[("STRUCTS_CONSOLE_AUTH_TOKEN", token)]).await;
    let url = server.url.clone();
    let (with, without) = tokio::task::spawn_blocking(move || {
        let mut cmd = Command::new(BIN);
        cmd.args(["client", "--connect", &url, "info"])
            .env("STRUCTS_CONSOLE_AUTH_TOKEN", token);
        let with = cmd.output().unwrap();
        let without = client(&url, &["info"]);
        (with, without)
    })
    .await
    .unwrap();
    server.stop().await;
    let info = ok(&with);
    assert_eq!(info["serverInfo"]["name"], "structs-console");
    assert_eq!(without.status.code(), Some(2));
    let said = String::from_utf8_lossy(&without.stderr);
    assert!(said.contains("cannot attach"), "{said}");
}

#[test]
fn a_server_that_is_not_there_exits_2_in_plain_words() {
    let out = client("http://127.0.0.1:9/mcp", &["tools"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("cannot attach"), "{said}");
    // Said once, in plain words: no library's log lines before it.
    assert_eq!(said.lines().count(), 1, "{said}");
    let out = client("/no/such/program --flag", &["tools"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/no/such/program"));
}

/// Each command's help lists the options it takes, and says what they do there: no
/// world for `client` and `watch`, and the token each one uses.
#[test]
fn each_commands_help_lists_only_what_it_takes() {
    let help = |command: &str| {
        let out = Command::new(BIN)
            .args([command, "--help"])
            .env_remove("STRUCTS_CONSOLE_AUTH_TOKEN")
            .output()
            .unwrap();
        assert!(out.status.success(), "{command} --help");
        String::from_utf8(out.stdout).unwrap()
    };
    let world = [
        "--seed",
        "--world-size",
        "--start-height",
        "--paused",
        "--publish-events",
    ];
    let client = help("client");
    let watch = help("watch");
    for flag in world {
        assert!(!client.contains(flag), "client lists {flag}:\n{client}");
        assert!(!watch.contains(flag), "watch lists {flag}:\n{watch}");
        for command in ["serve-rest", "proxy", "replay"] {
            assert!(help(command).contains(flag), "{command} lacks {flag}");
        }
    }
    assert!(!watch.contains("--auth-token"), "{watch}");
    assert!(!client.contains("serve-rest"), "{client}");
    assert!(client.contains("sent to a --connect URL"), "{client}");
    assert!(
        help("serve-rest").contains("every request must carry"),
        "serve-rest's token"
    );
    assert!(
        help("proxy").contains("every host's request"),
        "proxy's token"
    );
    assert!(!help("replay").contains("--auth-token"));
}

/// `client --timeout 3 … ping` against a server that misbehaves as `mode` says: how
/// long it took, and what it said.
fn against_hostile(mode: &str) -> (Duration, Output) {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/hostile_server.py");
    let started = Instant::now();
    let out = client_with(
        &format!("python3 {script} {mode}"),
        &["--timeout", "3"],
        &["ping"],
        None,
    );
    (started.elapsed(), out)
}

#[test]
fn attaching_is_bounded_by_the_timeout_and_the_page_cap_and_says_why() {
    // (mode, what the error says, whether it fails: a server that never lists its
    // prompts is still served without them)
    for (mode, said) in [
        (
            "silent-init",
            "did not complete the MCP handshake within 3 s",
        ),
        ("endless-tools", "after 100 pages"),
        ("huge", "over 16 MB"),
        ("deep", "levels deep"),
    ] {
        let (took, out) = against_hostile(mode);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{mode}: {stderr}");
        assert!(stderr.contains(said), "{mode}: {stderr}");
        assert!(took < Duration::from_secs(12), "{mode} took {took:?}");
    }
    let (took, out) = against_hostile("silent-prompts");
    assert_eq!(ok(&out), json!({}), "ping is answered without the prompts");
    assert!(took < Duration::from_secs(12), "took {took:?}");
}

#[test]
fn a_flood_of_the_servers_requests_leaves_the_answer_and_a_quiet_stderr() {
    for mode in ["sampling-flood", "flood"] {
        let (_, out) = against_hostile(mode);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(ok(&out), json!({}), "{mode}: {stderr}");
        assert!(
            stderr.trim().is_empty(),
            "{mode}: {} bytes: {stderr:.2000}",
            stderr.len()
        );
    }
}

#[test]
fn a_session_client_is_asked_to_confirm_by_elicitation() {
    // --confirm-actions: a session (2025-11-25) client is asked with elicitation/create
    // on its session; its answer decides. The client here declines or cancels, and
    // the answer says which: so it was asked.
    let confirming = format!("{BIN} --headless --paused --log-level warn --confirm-actions");
    let tx = r#"{"transaction": {"body": {"messages": [
        {"@type": "/structs.structs.MsgStructDeactivate", "structId": "5-1"}]}}}"#;
    for (how, said) in [("decline", "declined"), ("cancel", "cancelled")] {
        let out = client_with(
            &confirming,
            &["--protocol-version", "2025-11-25", "--elicitation", how],
            &["call", "structs_action_submit_transaction", "--args", tx],
            None,
        );
        let (value, success) = answer(&out);
        assert!(!success, "{value:#}");
        let error = &value["structuredContent"]["error"];
        assert_eq!(error["code"], "TOOL_CANCELLED", "{value:#}");
        assert_eq!(error["details"]["confirmation"], said, "{value:#}");
    }
    // Answered by name: yes, and the transaction runs.
    let out = client_with(
        &confirming,
        &[
            "--protocol-version",
            "2025-11-25",
            "--answer",
            "confirm=true",
        ],
        &["call", "structs_action_submit_transaction", "--args", tx],
        None,
    );
    let (value, success) = answer(&out);
    assert!(success, "{value:#}");
    // An answer that is no NAME=VALUE is refused before anything is sent.
    let out = client_with(
        &confirming,
        &["--answer", "confirm"],
        &["call", "structs_action_submit_transaction", "--args", tx],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("NAME=VALUE"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A read is not asked about.
    let out = client_with(
        &confirming,
        &[
            "--protocol-version",
            "2025-11-25",
            "--elicitation",
            "decline",
        ],
        &[
            "call",
            "structs_query_struct",
            "--args",
            r#"{"struct_id": "5-1"}"#,
        ],
        None,
    );
    ok(&out);
}

/// A 2025 session's first request waits until the server's stream to the client is
/// open: a server that sends an elicitation there as soon as a call arrives, and drops
/// what has no stream to go on, must not lose it to that race. The server here opens
/// its stream half a second late and reports in its tool list whether the list came
/// first.
#[test]
fn a_sessions_first_request_waits_for_its_stream_to_open() {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/slow_stream_server.py"
    );
    let mut server = Command::new("python3")
        .arg(script)
        .stdout(Stdio::piped())
        .spawn()
        .expect("start python3");
    let mut port = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(server.stdout.take().expect("stdout")),
        &mut port,
    )
    .expect("read the port");
    let url = format!("http://127.0.0.1:{}/mcp", port.trim());
    let out = client(&url, &["tools"]);
    let _ = server.kill();
    let _ = server.wait();
    let tools = ok(&out);
    assert_eq!(
        names(&tools, "tools", "name"),
        ["stream-was-open"],
        "{tools}"
    );
}
