//! What `structs-console proxy` adds over stdio: the release server answering
//! `structs_query_block_height`, called direct and through the proxy, in turns.
//!
//! - Latency: one caller, 2,000 calls; p50 and p99 of each, and what the proxy adds.
//! - Throughput: 8 callers at once on one connection, 3 s; calls/s of each and the
//!   ratio (goal: the proxy at least 90 % of direct).
//!
//! Run with `cargo bench --bench proxy`; with `PROXY_BENCH_WATCH=1` a watcher is
//! attached to each proxy (which then records every call), and `PROXY_BENCH_ARGS`
//! gives the proxy more options (`--no-control`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use structs_console::context::CallContext;
use structs_console::mcp::client::{Remote, Target};

const BIN: &str = env!("CARGO_BIN_EXE_structs-console");
const CALLS: usize = 2_000;
const ROUNDS: usize = 3;

fn server(proxied: bool) -> Target {
    let mut words: Vec<String> = Vec::new();
    if proxied {
        words.extend([BIN, "proxy"].map(String::from));
        // More of the proxy's options, to compare (`--no-control`, `--record FILE`).
        if let Ok(extra) = std::env::var("PROXY_BENCH_ARGS") {
            words.extend(extra.split_whitespace().map(String::from));
        }
        words.push("--".into());
    }
    words.extend([BIN, "--headless", "--paused", "--log-level", "error"].map(String::from));
    Target::Command(words)
}

async fn call(remote: &Remote) {
    remote
        .call("structs_query_block_height", json!({}), CallContext::new())
        .await
        .expect("an answer");
}

/// Each call's time, one after another.
async fn latencies(remote: &Remote) -> Vec<Duration> {
    for _ in 0..200 {
        call(remote).await;
    }
    let mut out = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        let t = Instant::now();
        call(remote).await;
        out.push(t.elapsed());
    }
    out.sort();
    out
}

fn quantile(sorted: &[Duration], q: f64) -> f64 {
    let at = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    sorted[at].as_secs_f64() * 1e3
}

/// Calls per second with 8 callers at once.
async fn throughput(remote: &Arc<Remote>) -> f64 {
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let (remote, stop, done) = (remote.clone(), stop.clone(), done.clone());
        tasks.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                call(&remote).await;
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

fn main() {
    // PROXY_BENCH_WATCH=1: a watcher (`structs-console watch --json`) attached to each
    // proxy, so the proxy records every call for it.
    let watching = std::env::var_os("PROXY_BENCH_WATCH").is_some();
    let stop = Arc::new(AtomicBool::new(false));
    let current: Arc<std::sync::Mutex<Option<std::process::Child>>> = Arc::default();
    if watching {
        let (stop, current) = (stop.clone(), current.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let child = std::process::Command::new(BIN)
                    .args(["watch", "--json"])
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .spawn()
                    .expect("start a watcher");
                *current.lock().unwrap() = Some(child);
                // It ends when its proxy does; then the next waits for the next proxy.
                loop {
                    std::thread::sleep(Duration::from_millis(20));
                    let mut slot = current.lock().unwrap();
                    match slot.as_mut().map(|c| c.try_wait()) {
                        Some(Ok(None)) => {}
                        _ => break,
                    }
                }
            }
        });
        println!("with a watcher attached to each proxy");
    }
    run();
    stop.store(true, Ordering::Relaxed);
    if let Some(mut child) = current.lock().unwrap().take() {
        let _ = child.kill();
        let _ = child.wait();
    }
}

fn run() {
    let rt = tokio::runtime::Runtime::new().expect("a runtime");
    rt.block_on(async {
        let mut p50 = [0.0; 2];
        let mut p99 = [0.0; 2];
        let mut rate = [0.0; 2];
        for round in 0..ROUNDS {
            let order = if round % 2 == 0 {
                [false, true]
            } else {
                [true, false]
            };
            for proxied in order {
                let remote = Remote::connect(server(proxied), None)
                    .await
                    .expect("attach");
                let l = latencies(&remote).await;
                let r = throughput(&remote).await;
                let k = usize::from(proxied);
                p50[k] += quantile(&l, 0.5) / ROUNDS as f64;
                p99[k] += quantile(&l, 0.99) / ROUNDS as f64;
                rate[k] += r / ROUNDS as f64;
                remote.close().await;
            }
        }
        println!(
            "proxy over stdio, mean of {ROUNDS} turns each: direct p50 {:.3} ms, p99 {:.3} ms; \
             through the proxy p50 {:.3} ms, p99 {:.3} ms; added p50 {:.3} ms, p99 {:.3} ms \
             (goal: p50 under 0.2 ms added)",
            p50[0],
            p99[0],
            p50[1],
            p99[1],
            p50[1] - p50[0],
            p99[1] - p99[0]
        );
        println!(
            "8 callers at once: direct {:.0} calls/s, through the proxy {:.0} calls/s; \
             proxy / direct {:.2} (goal: at least 0.90)",
            rate[0],
            rate[1],
            rate[1] / rate[0]
        );
    });
}
