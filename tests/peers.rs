//! The server checked by software nobody on the team wrote: the official MCP
//! conformance suite's server scenarios over streamable HTTP, and MCP Inspector's CLI
//! and the official Python SDK over both transports. `.ci/run` installs them (see
//! tests/support/peers.rs).

mod support;

use std::path::Path;
use std::process::Output;

use serde_json::Value;
use support::mcp_http::Headless;
use support::peers::Peers;

/// Scenarios the issue names, which must pass whatever the baseline says.
const MUST_PASS: [&str; 9] = [
    "server-initialize",
    "ping",
    "tools-list",
    "server-sse-multiple-streams",
    "resources-list",
    "prompts-list",
    "completion-complete",
    "logging-set-level",
    "dns-rebinding-protection",
];

fn text(out: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Each scenario's checks, from the suite's output folder (`server-NAME-TIMESTAMP/checks.json`).
fn results(dir: &Path) -> Vec<(String, Vec<Value>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("the results folder") {
        let path = entry.unwrap().path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some(rest) = name.strip_prefix("server-") else {
            continue;
        };
        // The timestamp starts at the year: `server-ping-2026-11-25T…`.
        let scenario = match rest.find("-20") {
            Some(at) => &rest[..at],
            None => rest,
        };
        let checks: Vec<Value> = std::fs::read_to_string(path.join("checks.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default();
        out.push((scenario.to_string(), checks));
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_conformance_suite_passes_every_scenario_outside_its_baseline() {
    let Some(peers) = Peers::find() else { return };
    let server = Headless::start(&["--paused"], &[]).await;
    let dir = std::env::temp_dir().join(format!("structs-conformance-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let baseline =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/conformance-baseline.yaml");
    let mut cmd = peers.command(&peers.conformance());
    cmd.args(["server", "--url", &server.url, "--expected-failures"])
        .arg(&baseline)
        .arg("-o")
        .arg(&dir);
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .unwrap()
        .expect("run the conformance suite");
    let log = text(&out);
    let results = results(&dir);
    server.stop().await;
    // Exit 0: every failure is in the baseline, and no baseline entry passes.
    assert!(out.status.success(), "conformance suite:\n{log}");
    assert!(log.contains("Baseline check passed"), "{log}");
    for name in MUST_PASS {
        let (_, checks) = results
            .iter()
            .find(|(s, _)| s == name)
            .unwrap_or_else(|| panic!("scenario {name} ran:\n{log}"));
        assert!(
            !checks.is_empty() && checks.iter().all(|c| c["status"] == "SUCCESS"),
            "{name}: {checks:#?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// 2026-07-28 scenarios that must pass whole, whatever the baseline says.
const MUST_PASS_2026: [&str; 11] = [
    "caching",
    "sep-2164-resource-not-found",
    "http-header-validation",
    "dns-rebinding-protection",
    "tools-list",
    "resources-list",
    "prompts-list",
    "completion-complete",
    "server-sse-multiple-streams",
    "input-required-result-unsupported-methods",
    "input-required-result-validate-input",
];

/// The checks of `server-stateless` that do not pass here, each for want of the suite's
/// own diagnostic tool (the baseline names them): `test_missing_capability`,
/// `test_streaming_elicitation`, `test_logging_tool`, and the hooks that change the
/// prompt and tool lists; any other check that does not pass fails the test.
const STATELESS_FIXTURE_CHECKS: [&str; 6] = [
    "sep-2575-server-rejects-undeclared-capability",
    "sep-2575-missing-capability-http-400",
    "sep-2575-http-server-no-independent-requests-on-stream",
    "sep-2575-server-no-log-without-loglevel",
    "sep-2575-server-sends-prompts-list-changed-on-subscription",
    "sep-2575-server-sends-tools-list-changed-on-subscription",
];

/// The extension scenarios, run one by one (the requirement set does not score them).
const EXTENSION_SCENARIOS: [&str; 13] = [
    "tasks-lifecycle",
    "tasks-capability-negotiation",
    "tasks-wire-fields",
    "tasks-request-state-removal",
    "tasks-mrtr-input",
    "tasks-request-headers",
    "tasks-dispatch-and-envelope",
    "tasks-status-notifications",
    "tasks-required-task-error",
    "tasks-mrtr-composition",
    "sep-2640-skills-directory",
    "sep-2640-skills-enumeration",
    "sep-2640-skills-manifest",
];

/// Checks of the tasks scenarios that need none of the suite's jobs, and pass.
const TASK_CHECKS: [&str; 3] = [
    "tasks-extension-advertised",
    "sep-2663-tasks-methods-non-declaring",
    "sep-2663-tasks-get-invalid-task-id-32602",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_2026_conformance_suite_passes_every_scenario_outside_its_baseline() {
    let Some(peers) = Peers::find() else { return };
    let docs = support::docs::TempDocs::copy_of("skills-docs");
    let server = Headless::start(&["--paused", "--docs", docs.root().to_str().unwrap()], &[]).await;
    let dir = std::env::temp_dir().join(format!("structs-conformance-2026-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let baseline =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/conformance-2026-baseline.yaml");
    let run = |extra: Vec<String>| {
        let mut cmd = peers.command(&peers.conformance_2026());
        cmd.args(["server", "--url", &server.url, "--expected-failures"])
            .arg(&baseline)
            .arg("-o")
            .arg(&dir)
            .args(extra);
        cmd
    };
    let mut runs = vec![run(vec!["--requirements".into(), "2026-07-28".into()])];
    for scenario in EXTENSION_SCENARIOS {
        runs.push(run(vec!["--scenario".into(), scenario.into()]));
    }
    let outs = tokio::task::spawn_blocking(move || {
        runs.into_iter()
            .map(|mut cmd| cmd.output().expect("run the conformance suite"))
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    let results = results(&dir);
    server.stop().await;
    // Exit 0 each time: every failure is in the baseline, and no baseline entry passes.
    for out in &outs {
        let log = text(out);
        assert!(out.status.success(), "conformance suite:\n{log}");
        assert!(log.contains("Baseline check passed"), "{log}");
    }
    let checks_of = |name: &str| -> &Vec<Value> {
        &results
            .iter()
            .find(|(s, _)| s == name)
            .unwrap_or_else(|| panic!("scenario {name} ran"))
            .1
    };
    // INFO is the suite saying what it saw (answers in JSON rather than a stream, which
    // the transport lets a server choose), not a failure.
    let passed = |c: &Value| c["status"] == "SUCCESS" || c["status"] == "INFO";
    for name in MUST_PASS_2026.iter().chain(&[
        "sep-2640-skills-directory",
        "sep-2640-skills-enumeration",
        "sep-2640-skills-manifest",
    ]) {
        let checks = checks_of(name);
        assert!(
            !checks.is_empty() && checks.iter().all(passed),
            "{name}: {checks:#?}"
        );
    }
    for c in checks_of("server-stateless") {
        let id = c["id"].as_str().unwrap_or_default();
        assert!(
            passed(c) || STATELESS_FIXTURE_CHECKS.contains(&id),
            "server-stateless: {c:#}"
        );
    }
    let task_checks: Vec<&Value> = results
        .iter()
        .filter(|(s, _)| s.starts_with("tasks-"))
        .flat_map(|(_, checks)| checks)
        .collect();
    for id in TASK_CHECKS {
        let check = task_checks
            .iter()
            .find(|c| c["id"] == id)
            .unwrap_or_else(|| panic!("{id} ran"));
        assert!(passed(check), "{check:#}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs the Inspector's CLI against `target` (a URL, or the server's command) with
/// `args`, and returns its JSON answer.
fn inspect(peers: &Peers, target: &[&str], args: &[&str]) -> Value {
    let mut cmd = peers.command(&peers.inspector());
    cmd.arg("--cli").args(target).args(args);
    let out = cmd.output().expect("run the inspector CLI");
    assert!(out.status.success(), "inspector {args:?}:\n{}", text(&out));
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("inspector {args:?} printed no JSON ({e}):\n{}", text(&out)))
}

/// Tools, resources, prompts and logging through the Inspector, on one transport.
fn inspect_everything(peers: &Peers, target: &[&str]) {
    let tools = inspect(peers, target, &["--method", "tools/list"]);
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"structs_query_entity"), "{names:?}");
    let call = inspect(
        peers,
        target,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "structs_query_entity",
            "--tool-arg",
            "id=1-1",
        ],
    );
    assert_eq!(
        call["structuredContent"]["entity"]["Player"]["id"], "1-1",
        "{call}"
    );
    let resources = inspect(peers, target, &["--method", "resources/list"]);
    let uris: Vec<&str> = resources["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["uri"].as_str())
        .collect();
    assert!(uris.contains(&"structs://docs/api/errors"), "{uris:?}");
    let read = inspect(
        peers,
        target,
        &[
            "--method",
            "resources/read",
            "--uri",
            "structs://entities/2-1",
        ],
    );
    let body: Value = serde_json::from_str(read["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(body["Planet"]["id"], "2-1");
    let prompts = inspect(peers, target, &["--method", "prompts/list"]);
    let names: Vec<&str> = prompts["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert!(
        names.contains(&"brief") && names.contains(&"next"),
        "{names:?}"
    );
    let prompt = inspect(
        peers,
        target,
        &[
            "--method",
            "prompts/get",
            "--prompt-name",
            "brief",
            "--prompt-args",
            "entity_id=1-1",
        ],
    );
    assert!(
        prompt["messages"][0]["content"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("novaforge1")),
        "{prompt}"
    );
    assert_eq!(
        prompt["messages"][1]["content"]["resource"]["uri"],
        "structs://entities/1-1"
    );
}

/// Completions through the Inspector's connection CLI (`mcpdo`: the one-shot CLI has
/// no completion method): connect to `target`, complete a prompt argument and a
/// template variable, and stop its daemon. The daemon and its files are private to
/// this run.
fn complete_with_mcpdo(peers: &Peers, target: &[&str], name: &str) {
    let home = std::env::temp_dir().join(format!("structs-mcpdo-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    std::fs::create_dir_all(home.join("daemon")).unwrap();
    let run = |args: &[&str]| -> Output {
        let mut cmd = peers.command(&peers.mcpdo());
        cmd.env("HOME", &home)
            .env("MCP_INSPECTOR_DAEMON_DIR", home.join("daemon"))
            .env("MCP_CATALOG_PATH", home.join("mcp.json"))
            .args(args);
        cmd.output().expect("run mcpdo")
    };
    let connect: Vec<&str> = ["connect", "--connection", name]
        .into_iter()
        .chain(target.iter().copied())
        .collect();
    let out = run(&connect);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        assert!(out.status.success(), "mcpdo connect:\n{}", text(&out));
        let complete = |ref_type: &str, reference: &str, arg: &str, value: &str| -> Value {
            let out = run(&[
                "--format",
                "json",
                "--connection",
                name,
                "prompts/complete",
                "--complete-ref-type",
                ref_type,
                "--complete-ref",
                reference,
                "--complete-arg-name",
                arg,
                "--complete-arg-value",
                value,
            ]);
            assert!(
                out.status.success(),
                "mcpdo prompts/complete:\n{}",
                text(&out)
            );
            serde_json::from_slice(&out.stdout)
                .unwrap_or_else(|e| panic!("no JSON ({e}):\n{}", text(&out)))
        };
        let c = complete("ref/prompt", "plan-build", "struct_type", "refin");
        assert_eq!(values(&c), ["Ore Refinery"], "{c}");
        assert_eq!(c["total"], 1, "{c}");
        let c = complete("ref/resource", "structs://entities/{id}", "id", "2-1");
        let got = values(&c);
        assert!(
            !got.is_empty() && got.iter().all(|v| v.starts_with("2-1")),
            "{c}"
        );
    }));
    let _ = run(&["daemon", "stop"]);
    let _ = std::fs::remove_dir_all(&home);
    if let Err(panic) = result {
        std::panic::resume_unwind(panic);
    }
}

/// The values of a completion answer, wherever the CLI puts them.
fn values(answer: &Value) -> Vec<String> {
    let list = answer["completion"]["values"]
        .as_array()
        .or(answer["values"].as_array())
        .cloned()
        .unwrap_or_default();
    list.iter()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect()
}

#[test]
fn the_inspector_cli_reads_tools_resources_prompts_and_completions_over_stdio() {
    let Some(peers) = Peers::find() else { return };
    let bin = env!("CARGO_BIN_EXE_structs-console");
    inspect_everything(&peers, &[bin, "--headless", "--paused"]);
    complete_with_mcpdo(&peers, &["--", bin, "--headless", "--paused"], "stdio");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_inspector_cli_reads_tools_resources_prompts_and_completions_over_http() {
    let Some(peers) = Peers::find() else { return };
    let server = Headless::start(&["--paused"], &[]).await;
    let url = server.url.clone();
    tokio::task::spawn_blocking(move || {
        inspect_everything(&peers, &[&url, "--transport", "http"]);
        complete_with_mcpdo(&peers, &["--transport", "http", &url], "http");
    })
    .await
    .unwrap();
    server.stop().await;
}

/// The official Python SDK's client, run by tests/data/python_client.py.
/// Runs `tests/data/SCRIPT` on the Python with the official SDK, with `args`, and
/// reads the one JSON line it prints.
fn run_python(peers: &Peers, script: &str, args: &[&str]) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(script);
    let out = std::process::Command::new(peers.python())
        .arg(script)
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run the Python client");
    assert!(out.status.success(), "python client:\n{}", text(&out));
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no JSON ({e}):\n{}", text(&out)));
    report
}

fn python_client(peers: &Peers, args: &[&str]) -> Value {
    let report = run_python(peers, "python_client.py", args);
    let caps: Vec<&str> = report["capabilities"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        caps,
        ["completions", "logging", "prompts", "resources", "tools"],
        "{report:#}"
    );
    assert_eq!(report["call_error"], false, "{report:#}");
    assert_eq!(report["call_player"], "1-1");
    assert_eq!(report["read"], "2-1");
    assert!(
        report["prompts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p == "plan-build"),
        "{report:#}"
    );
    assert!(
        report["prompt_text"]
            .as_str()
            .unwrap()
            .starts_with("Brief me on player 1-1 (novaforge1)."),
        "{report:#}"
    );
    assert_eq!(report["prompt_resource"], "structs://entities/1-1");
    assert_eq!(report["completion"], serde_json::json!(["Ore Refinery"]));
    assert_eq!(report["template_completion"][0], "2-1");
    assert_eq!(
        report["template_total"], 11,
        "2-1 and 2-10…2-19 of the demo world's planets"
    );
    assert_eq!(
        report["warnings"],
        serde_json::json!([]),
        "the SDK logged no warning"
    );
    report
}

#[test]
fn the_python_sdk_uses_tools_resources_prompts_and_completions_over_stdio() {
    let Some(peers) = Peers::find() else { return };
    let bin = env!("CARGO_BIN_EXE_structs-console");
    python_client(
        &peers,
        &[
            "stdio",
            bin,
            "--headless",
            "--paused",
            "--log-level",
            "warn",
        ],
    );
}

/// The same agent through `structs-console proxy`: it sees what it sees direct.
#[test]
fn the_python_sdk_through_the_proxy_sees_what_it_sees_direct() {
    let Some(peers) = Peers::find() else { return };
    let bin = env!("CARGO_BIN_EXE_structs-console");
    let server = [bin, "--headless", "--paused", "--log-level", "warn"];
    let direct = python_client(&peers, &[&["stdio"][..], &server].concat());
    let log = std::env::temp_dir().join(format!("structs-proxy-sdk-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let log_arg = log.display().to_string();
    let proxied = python_client(
        &peers,
        &[
            &["stdio", bin, "proxy", "--record", &log_arg, "--"][..],
            &server,
        ]
        .concat(),
    );
    assert_eq!(proxied, direct);
    let recorded = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        recorded.contains(r#""tool":"structs_query_entity""#),
        "{recorded}"
    );
    let _ = std::fs::remove_file(&log);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_uses_tools_resources_prompts_and_completions_over_http() {
    let Some(peers) = Peers::find() else { return };
    let server = Headless::start(&["--paused"], &[]).await;
    let url = server.url.clone();
    tokio::task::spawn_blocking(move || python_client(&peers, &["http", &url]))
        .await
        .unwrap();
    server.stop().await;
}

/// A server started with a token, reached with none and with a wrong one: what the
/// official Python SDK raises, and what MCP Inspector's CLI prints, is the server's
/// message, which names the header to set. (Answered 401, the SDK reported "Server
/// returned an error response" and the Inspector asked for a terminal to run OAuth.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_or_wrong_token_is_reported_as_such_by_the_python_sdk_and_the_inspector() {
    let Some(peers) = Peers::find() else { return };
    let token = "the-peers-token-0123456789";
    let server = Headless::start(&["--paused"], &[("STRUCTS_CONSOLE_AUTH_TOKEN", token)]).await;
    let url = server.url.clone();
    tokio::task::spawn_blocking(move || {
        let header = "`Authorization: Bearer TOKEN`";
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/python_auth.py");
        let out = std::process::Command::new(peers.python())
            .arg(script)
            .args([url.as_str(), token])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("run the Python client");
        assert!(out.status.success(), "python client:\n{}", text(&out));
        let report: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("no JSON ({e}):\n{}", text(&out)));
        for (case, says) in [
            ("none", "needs `Authorization: Bearer TOKEN`"),
            ("wrong", "not this server's"),
        ] {
            let raised = report[case]["raised"]
                .as_array()
                .unwrap_or_else(|| panic!("{case}: not refused: {report:#}"));
            assert!(
                raised.iter().any(|e| e["message"]
                    .as_str()
                    .is_some_and(|m| m.contains(says) && m.contains(header))),
                "{case}: the SDK does not report the server's message: {report:#}"
            );
        }
        assert!(!report.to_string().contains("wrong-"), "never echoed");
        assert!(
            report["right"]["tools"].as_u64().is_some_and(|n| n > 0),
            "{report:#}"
        );

        let wrong = format!("Authorization: Bearer wrong-{token}");
        for (extra, says) in [
            (None, "needs `Authorization: Bearer TOKEN`"),
            (Some(wrong.as_str()), "not this server's"),
        ] {
            let mut cmd = peers.command(&peers.inspector());
            cmd.args([
                "--cli",
                &url,
                "--transport",
                "http",
                "--method",
                "tools/list",
            ]);
            if let Some(h) = extra {
                cmd.args(["--header", h]);
            }
            let out = cmd.output().expect("run the inspector CLI");
            let printed = text(&out);
            assert!(!out.status.success(), "{extra:?}: listed:\n{printed}");
            assert!(
                printed.contains(says) && printed.contains(header),
                "{extra:?}: the Inspector does not print the server's message:\n{printed}"
            );
            assert!(!printed.contains("OAuth"), "{extra:?}: {printed}");
        }
    })
    .await
    .unwrap();
    server.stop().await;
}

/// Runs tests/data/python_stateless.py (the official SDK's `Client` in its default
/// mode) with `args`, and checks what it saw: 2026-07-28 spoken, every tool answered,
/// a task run to its end, a listen stream updated by a transaction confirmed in the
/// call's rounds, and no warning from the SDK.
fn python_stateless(peers: &Peers, args: &[&str]) -> Value {
    let report = run_python(peers, "python_stateless.py", args);
    assert_eq!(report["protocol"], "2026-07-28", "{report:#}");
    assert!(report["tools"].as_u64().unwrap() >= 50, "{report:#}");
    assert_eq!(report["failed"], serde_json::json!([]), "{report:#}");
    assert!(report["refused"].as_u64().unwrap() > 0, "{report:#}");
    assert_eq!(report["task_created"], "task", "{report:#}");
    assert_eq!(report["task_status"], "completed", "{report:#}");
    assert_eq!(report["task_valid"], true, "{report:#}");
    assert_eq!(
        report["honored"].as_array().map(Vec::len),
        Some(1),
        "{report:#}"
    );
    assert_eq!(report["confirmed_tx_error"], false, "{report:#}");
    assert_eq!(report["updated"], true, "{report:#}");
    assert_eq!(report["warnings"], serde_json::json!([]), "{report:#}");
    report
}

#[test]
fn the_python_sdk_in_its_default_mode_speaks_2026_over_stdio() {
    let Some(peers) = Peers::find() else { return };
    let bin = env!("CARGO_BIN_EXE_structs-console");
    let report = python_stateless(
        &peers,
        &[
            "stdio",
            bin,
            "--headless",
            "--paused",
            "--confirm-actions",
            "--log-level",
            "warn",
        ],
    );
    // Over stdio the connection is the client: it keeps its subscriptions.
    assert_eq!(report["subscription_list"], false, "{report:#}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_in_its_default_mode_speaks_2026_over_http() {
    let Some(peers) = Peers::find() else { return };
    let server = Headless::start(&["--paused", "--confirm-actions"], &[]).await;
    let url = server.url.clone();
    let report = tokio::task::spawn_blocking(move || python_stateless(&peers, &["http", &url]))
        .await
        .unwrap();
    server.stop().await;
    // Over HTTP a stateless request has no session to keep a subscription in.
    assert_eq!(report["subscription_list"], true, "{report:#}");
}

/// A proxy in front of `upstream`, serving hosts over HTTP and recording to `log`; its
/// URL. Killed when the returned child is.
fn http_proxy(upstream: &str, log: &Path) -> (std::process::Child, String) {
    use std::io::BufRead;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_structs-console"))
        .args(["proxy", "--upstream", upstream, "--http", "127.0.0.1:0"])
        .args(["--no-control", "--log-level", "warn", "--record"])
        .arg(log)
        .env_remove("STRUCTS_CONSOLE_AUTH_TOKEN")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start the proxy");
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .expect("the proxy says where it listens");
    let url = first
        .trim()
        .strip_prefix("proxying MCP over HTTP at ")
        .unwrap_or_else(|| panic!("unexpected first line {first:?}"))
        .to_string();
    (child, url)
}

/// A 2026-07-28 host has no session: through `proxy --upstream URL --http`, each of its
/// requests passes on its own. The official SDK's `Client` in its default mode does
/// through the proxy all it does direct (every tool, a task, a listen stream, a round
/// of elicitation), and the log keeps each call with the headers it came with, the
/// round and the task each as one call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_in_its_default_mode_goes_through_the_http_proxy() {
    let Some(peers) = Peers::find() else { return };
    let server = Headless::start(&["--paused", "--confirm-actions"], &[]).await;
    let log = std::env::temp_dir().join(format!(
        "structs-stateless-proxy-{}.jsonl",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&log);
    let (mut proxy, url) = http_proxy(&server.url, &log);
    let report = tokio::task::spawn_blocking(move || python_stateless(&peers, &["http", &url]))
        .await
        .unwrap();
    let _ = proxy.kill();
    let _ = proxy.wait();
    server.stop().await;
    assert_eq!(report["subscription_list"], true, "{report:#}");
    let lines: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // The tool calls; the other requests (log version 4) carry their own method.
    let requests: Vec<&Value> = lines
        .iter()
        .filter(|l| l["type"] == "request" && l["method"].is_null())
        .collect();
    assert!(requests.len() >= 50, "{} requests", requests.len());
    for r in lines
        .iter()
        .filter(|l| l["type"] == "request" && !l["method"].is_null())
    {
        assert_eq!(r["headers"]["Mcp-Method"], r["method"], "{r:#}");
    }
    // One session in the log for every stateless request.
    let sessions: std::collections::HashSet<&str> =
        lines.iter().filter_map(|l| l["session"].as_str()).collect();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    for r in &requests {
        assert_eq!(r["headers"]["Mcp-Method"], "tools/call", "{r:#}");
        assert_eq!(r["headers"]["Mcp-Name"], r["tool"], "{r:#}");
        assert_eq!(r["headers"]["MCP-Protocol-Version"], "2026-07-28", "{r:#}");
    }
    // The proof-of-work search ran as a task: one call, its statuses, its result.
    let task = lines
        .iter()
        .find(|l| l["type"] == "task")
        .expect("a task line");
    assert_eq!(task["tool"], "structs_calculate_proof_of_work", "{task:#}");
    let call = &task["call"];
    let of_call: Vec<&Value> = lines.iter().filter(|l| &l["call"] == call).collect();
    assert_eq!(of_call[0]["type"], "request", "{of_call:#?}");
    let statuses: Vec<&str> = of_call
        .iter()
        .filter(|l| l["type"] == "task")
        .filter_map(|l| l["status"].as_str())
        .collect();
    assert_eq!(statuses.last(), Some(&"completed"), "{of_call:#?}");
    let end = of_call.last().unwrap();
    assert_eq!(end["type"], "response", "{of_call:#?}");
    assert_eq!(end["result"]["valid"], true, "{end:#}");
    // The transaction confirmed in a round: one call, its round answered.
    // Each destructive call asked its confirmation in a round: still one call, with
    // one request line, the round and the response.
    let rounds: Vec<&Value> = lines.iter().filter(|l| l["type"] == "round").collect();
    assert!(!rounds.is_empty());
    for round in &rounds {
        let of_call: Vec<&str> = lines
            .iter()
            .filter(|l| l["call"] == round["call"])
            .filter_map(|l| l["type"].as_str())
            .collect();
        assert_eq!(of_call, ["request", "round", "response"], "{round:#}");
        assert!(round["input_responses"].is_object(), "{round:#}");
    }
}

/// A host on stdio reaches a 2026-07-28 server over HTTP through the bridge
/// (`proxy --upstream URL`): each request goes with the headers its body says
/// (`Mcp-Method`, `Mcp-Name`, `MCP-Protocol-Version`), which the server checks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_in_its_default_mode_goes_through_the_stdio_bridge() {
    let Some(peers) = Peers::find() else { return };
    let server = Headless::start(&["--paused", "--confirm-actions"], &[]).await;
    let url = server.url.clone();
    let report = tokio::task::spawn_blocking(move || {
        python_stateless(
            &peers,
            &[
                "stdio",
                env!("CARGO_BIN_EXE_structs-console"),
                "proxy",
                "--no-control",
                "--log-level",
                "warn",
                "--upstream",
                &url,
            ],
        )
    })
    .await
    .unwrap();
    server.stop().await;
    assert_eq!(report["subscription_list"], true, "{report:#}");
}
