//! Recordings a team tests with, at the size of a long agent run:
//!
//! - `diff` of two session logs of 100,000 calls each (the second with every 1,000th
//!   call changed), as text and as `--json`, and `check` of one against an
//!   expectations file with every kind of rule: the command's whole run, from start to
//!   exit, the median of 3 (target: under 2 s each);
//! - `serve-recording` over stdio answering 8 callers at once on one connection, for
//!   3 s, against the embedded server (`--headless`) answering the same calls the same
//!   way in the same run (target: at least the embedded server's calls/s).
//!
//! The logs are written first, each response a real answer of the demo world (a player
//! with its references, a list page, a planet), about 1-4 KB, as an agent's session
//! would be. Run with `cargo bench --bench recordings`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use structs_console::context::CallContext;
use structs_console::mcp::client::{Remote, Target};
use structs_console::source::sim::{BlockClock, SimSource, WorldConfig};

const BIN: &str = env!("CARGO_BIN_EXE_structs-console");
const CALLS: u64 = 100_000;

/// The calls the logs cycle through, and the benchmark's callers make.
fn calls() -> Vec<(&'static str, Value)> {
    vec![
        ("structs_query_player", json!({"player_id": "1-1"})),
        ("structs_list_players", json!({"page_size": 5})),
        ("structs_query_planet", json!({"planet_id": "2-3"})),
        ("structs_query_player", json!({"player_id": "1-4"})),
    ]
}

/// Writes a log of [`CALLS`] calls to `path`; with `changed`, every 1,000th call asks
/// for another player, one the world lacks, and fails.
fn write_log(path: &Path, answers: &[Value], changed: bool) {
    let calls = calls();
    let mut out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path).unwrap());
    for n in 1..=CALLS {
        let k = (n % calls.len() as u64) as usize;
        let (tool, mut args) = (calls[k].0, calls[k].1.clone());
        let mut answer = ("result", answers[k].clone());
        if changed && n % 1000 == 0 {
            args = json!({"player_id": format!("1-{}", 100_000 + n)});
            answer = (
                "error",
                json!({"error": {"code": "RESOURCE_NOT_FOUND", "message": "no such player"}}),
            );
        }
        let ts = format!(
            "2026-11-21T10:{:02}:{:02}.{:06}Z",
            n / 60_000 % 60,
            n / 1000 % 60,
            n % 1000 * 1000
        );
        let req = json!({"v": 5, "ts": ts, "session": "s-bench", "seq": 2 * n - 1, "type": "request",
            "call": n, "tool": tool, "arguments": args, "source": "sim", "block_height": 120000});
        writeln!(out, "{req}").unwrap();
        let mut resp = json!({"v": 5, "ts": ts, "session": "s-bench", "seq": 2 * n, "type": "response",
            "call": n, "tool": tool, "duration_ms": 0.5 + (n % 7) as f64, "source": "sim",
            "block_height": 120000});
        resp[answer.0] = answer.1;
        writeln!(out, "{resp}").unwrap();
    }
}

/// An expectations file with a rule of every kind.
const EXPECT: &str = r#"
[calls]
max = 200000
tools = { "structs_query_*" = { max = 80000 }, "structs_list_*" = { min = 1 } }
[errors]
max = 0
codes = { "RESOURCE_NOT_FOUND" = { max = 0 } }
[duration]
p50 = "5ms"
p95 = "10ms"
max = "1s"
[bytes]
total = "1gb"
call = "25k"
[tools]
required = ["structs_query_player"]
forbidden = ["structs_action_*"]
[[arguments]]
tool = "structs_query_player"
pointer = "/player_id"
matches = "^1-[0-9]{1,2}$"
[[order]]
first = "structs_query_player"
then = "structs_list_*"
[confirmations]
declined = 0
[[rule]]
name = "no slow failed queries"
filter = "tool:structs_query_* status:error dur>200ms"
max = 0
[[rule]]
name = "nothing says secret"
filter = "text:secret"
max = 0
"#;

/// The median wall time of running `args` 3 times (output thrown away).
fn timed(args: &[&str]) -> (f64, Option<i32>) {
    let mut took = Vec::new();
    let mut code = None;
    for _ in 0..3 {
        let t = Instant::now();
        let status = Command::new(BIN)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("run structs-console");
        took.push(t.elapsed().as_secs_f64());
        code = status.code();
    }
    took.sort_by(f64::total_cmp);
    (took[1], code)
}

/// Calls per second with 8 callers at once on one connection, for 3 s.
async fn throughput(remote: &Arc<Remote>) -> f64 {
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for i in 0..8 {
        let (remote, stop, done) = (remote.clone(), stop.clone(), done.clone());
        tasks.push(tokio::spawn(async move {
            let calls = calls();
            let mut n = i;
            while !stop.load(Ordering::Relaxed) {
                let (tool, args) = &calls[n % calls.len()];
                remote
                    .call(tool, args.clone(), CallContext::new())
                    .await
                    .expect("an answer");
                n += 1;
                done.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    let start = Instant::now();
    tokio::time::sleep(Duration::from_secs(3)).await;
    stop.store(true, Ordering::Relaxed);
    let n = done.load(Ordering::Relaxed);
    let took = start.elapsed().as_secs_f64();
    for t in tasks {
        let _ = t.await;
    }
    n as f64 / took
}

async fn attach(command: &[String]) -> Arc<Remote> {
    Remote::connect(Target::Command(command.to_vec()), None)
        .await
        .expect("attach")
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| (*a).to_string()).collect()
}

/// A log of the calls the callers make, recorded through the tap in front of the
/// embedded server.
async fn recorded(dir: &Path) -> PathBuf {
    let log = dir.join("served.jsonl");
    let mut tap = strings(&[BIN, "proxy", "--no-control", "--record"]);
    tap.push(log.display().to_string());
    tap.extend(strings(&["--", BIN, "--headless", "--paused"]));
    let remote = attach(&tap).await;
    for (tool, args) in calls() {
        remote
            .call(tool, args, CallContext::new())
            .await
            .expect("an answer");
    }
    remote.close().await;
    log
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let config = WorldConfig::demo();
    let core = runtime.block_on(async {
        structs_console::assembly::build(Arc::new(SimSource::new(
            config,
            BlockClock::paused(config.genesis_height),
        )))
    });
    let answers: Vec<Value> = calls()
        .iter()
        .map(|(tool, args)| {
            runtime
                .block_on(core.call_json(tool, args.clone()))
                .unwrap_or_else(|e| e)
        })
        .collect();
    let dir = std::env::temp_dir().join(format!("structs-bench-recordings-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (a, b) = (dir.join("a.jsonl"), dir.join("b.jsonl"));
    write_log(&a, &answers, false);
    write_log(&b, &answers, true);
    let expect = dir.join("expect.toml");
    std::fs::write(&expect, EXPECT).unwrap();
    let mb = |p: &Path| std::fs::metadata(p).unwrap().len() as f64 / 1e6;
    println!(
        "two session logs of {CALLS} calls each ({:.0} MB and {:.0} MB), every 1,000th call of the second changed",
        mb(&a),
        mb(&b)
    );
    let (sa, sb) = (a.display().to_string(), b.display().to_string());
    let (text, code) = timed(&["diff", &sa, &sb]);
    println!("diff A B: {text:.2} s (exit {code:?}; target under 2 s)");
    let (json, code) = timed(&["diff", &sa, &sb, "--json"]);
    println!("diff A B --json: {json:.2} s (exit {code:?}; target under 2 s)");
    let (check, code) = timed(&["check", &sb, "--expect", &expect.display().to_string()]);
    println!(
        "check B --expect (every kind of rule): {check:.2} s (exit {code:?}; target under 2 s)"
    );

    // serve-recording against the embedded server, in turns.
    let log = runtime.block_on(recorded(&dir));
    let served = {
        let mut c = strings(&[BIN, "serve-recording"]);
        c.push(log.display().to_string());
        c
    };
    let embedded = strings(&[BIN, "--headless", "--paused"]);
    let (mut ours, mut base) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        for (command, into) in [(&served, &mut ours), (&embedded, &mut base)] {
            let rate = runtime.block_on(async {
                let remote = attach(command).await;
                let rate = throughput(&remote).await;
                remote.close().await;
                rate
            });
            into.push(rate);
        }
    }
    ours.sort_by(f64::total_cmp);
    base.sort_by(f64::total_cmp);
    println!(
        "8 callers on one stdio connection, 3 s, median of 3: serve-recording {:.0} calls/s, the embedded server {:.0} calls/s, ratio {:.2} (target at least 1)",
        ours[1],
        base[1],
        ours[1] / base[1]
    );
    let _ = std::fs::remove_dir_all(&dir);
}
