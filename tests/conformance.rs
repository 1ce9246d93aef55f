//! The conformance suite's server (`examples/conformance_server`: the suite's fixtures
//! on this project's own MCP layer) against every server scenario of both suites:
//! 0.1.16 for 2025-11-25 and 0.2.0-alpha.12 for 2026-07-28, `--suite all` (pending and
//! extension scenarios included). Each run passes outside its baseline, which names the
//! gap in the layer behind every scenario still failing; the suite fails a run whose
//! baseline lists a scenario that passes. Run with `--nocapture` for the totals.

mod support;

use std::path::{Path, PathBuf};

use serde_json::Value;
use support::mcp_http::Headless;
use support::peers::Peers;

/// Passed and failed checks in a results folder (`server-NAME-TIMESTAMP/checks.json`),
/// with the scenarios that had a failure.
fn totals(dir: &Path) -> (usize, usize, Vec<String>) {
    let (mut passed, mut failed, mut failing) = (0, 0, Vec::new());
    for entry in std::fs::read_dir(dir).expect("the results folder") {
        let path = entry.unwrap().path();
        let checks: Vec<Value> = std::fs::read_to_string(path.join("checks.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default();
        let bad = checks.iter().filter(|c| c["status"] == "FAILURE").count();
        passed += checks.iter().filter(|c| c["status"] == "SUCCESS").count();
        failed += bad;
        if bad > 0 {
            failing.push(path.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    failing.sort();
    (passed, failed, failing)
}

/// Runs the suite at `suite` against the conformance server with `baseline`, and
/// returns its output and results folder.
async fn run(
    peers: &Peers,
    suite: PathBuf,
    server: &Headless,
    baseline: &str,
    era: &str,
) -> (String, bool, PathBuf) {
    let dir = std::env::temp_dir().join(format!(
        "structs-conformance-server-{era}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let baseline = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(baseline);
    let mut cmd = peers.command(&suite);
    cmd.args([
        "server",
        "--url",
        &server.url,
        "--suite",
        "all",
        "--expected-failures",
    ])
    .arg(&baseline)
    .arg("-o")
    .arg(&dir);
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .unwrap()
        .expect("run the conformance suite");
    let log = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (log, out.status.success(), dir)
}

/// Checks one run: exit 0, the baseline held, and scenarios ran and passed.
fn judge(era: &str, log: &str, success: bool, dir: &Path, at_least: usize) {
    let (passed, failed, failing) = totals(dir);
    eprintln!("conformance server, {era}: {passed} checks passed, {failed} failed");
    assert!(success, "conformance suite ({era}):\n{log}");
    assert!(log.contains("Baseline check passed"), "{log}");
    assert!(
        passed >= at_least,
        "{era}: only {passed} checks passed ({failing:?})"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_conformance_server_passes_the_2025_suite_outside_its_baseline() {
    let Some(peers) = Peers::find() else { return };
    let server = Headless::conformance_server(&[]).await;
    let (log, ok, dir) = run(
        &peers,
        peers.conformance(),
        &server,
        "conformance-server-baseline.yaml",
        "2025-11-25",
    )
    .await;
    server.stop().await;
    judge("2025-11-25", &log, ok, &dir, 46);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_conformance_server_passes_the_2026_suite_outside_its_baseline() {
    let Some(peers) = Peers::find() else { return };
    let docs = support::docs::TempDocs::copy_of("skills-docs");
    let server = Headless::conformance_server(&["--docs", docs.root().to_str().unwrap()]).await;
    let (log, ok, dir) = run(
        &peers,
        peers.conformance_2026(),
        &server,
        "conformance-server-2026-baseline.yaml",
        "2026-07-28",
    )
    .await;
    server.stop().await;
    judge("2026-07-28", &log, ok, &dir, 247);
}
