//! What `structs-console proxy` adds: the release server answering
//! `structs_query_block_height`, called direct and through the proxy, in turns; over
//! stdio (`proxy -- COMMAND`, and `proxy --embedded`, whose server is in the proxy's
//! process), then over HTTP (`--headless --http` direct, and
//! `proxy --upstream URL --http ADDR` in front of it).
//!
//! - Latency: one caller, 2,000 calls; p50 and p99 of each, and what the proxy adds.
//! - Throughput: 8 callers at once for 3 s (on one connection over stdio; 8 clients,
//!   each its own session, over HTTP); calls/s of each and the ratio (goal: the proxy
//!   at least 90 % of direct).
//!
//! Run with `cargo bench --bench proxy`; with `PROXY_BENCH_WATCH=1` a watcher is
//! attached to each stdio proxy (which then records every call), `PROXY_BENCH_ARGS`
//! gives the proxy more options (`--no-control`), and `PROXY_BENCH_ONLY=stdio` or
//! `http` runs one half.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use structs_console::context::CallContext;
use structs_console::mcp::client::{Remote, Target};

const BIN: &str = env!("CARGO_BIN_EXE_structs-console");
const CALLS: usize = 2_000;
const ROUNDS: usize = 3;

/// How the server is reached: direct, through the proxy to a child, or through
/// `proxy --embedded` (this binary's server in the proxy's process).
#[derive(Clone, Copy, PartialEq)]
enum Way {
    Direct,
    Child,
    Embedded,
}

fn server(way: Way) -> Target {
    let mut words: Vec<String> = Vec::new();
    if way != Way::Direct {
        words.extend([BIN, "proxy"].map(String::from));
        // More of the proxy's options, to compare (`--no-control`, `--record FILE`).
        if let Ok(extra) = std::env::var("PROXY_BENCH_ARGS") {
            words.extend(extra.split_whitespace().map(String::from));
        }
    }
    match way {
        Way::Embedded => {
            words
                .extend(["--embedded", "--", "--paused", "--log-level", "error"].map(String::from));
        }
        Way::Child => {
            words.push("--".into());
            words.extend([BIN, "--headless", "--paused", "--log-level", "error"].map(String::from));
        }
        Way::Direct => {
            words.extend([BIN, "--headless", "--paused", "--log-level", "error"].map(String::from));
        }
    }
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
    let only = std::env::var("PROXY_BENCH_ONLY").unwrap_or_default();
    if only != "http" {
        run();
    }
    if only != "stdio" {
        run_http();
    }
    stop.store(true, Ordering::Relaxed);
    if let Some(mut child) = current.lock().unwrap().take() {
        let _ = child.kill();
        let _ = child.wait();
    }
}

fn run() {
    let rt = tokio::runtime::Runtime::new().expect("a runtime");
    rt.block_on(async {
        let ways = [Way::Direct, Way::Child, Way::Embedded];
        let mut p50 = [0.0; 3];
        let mut p99 = [0.0; 3];
        let mut rate = [0.0; 3];
        for round in 0..ROUNDS {
            // Each turn in another order, so that no way always goes first.
            let mut order = ways;
            order.rotate_left(round % 3);
            for way in order {
                let remote = Remote::connect(server(way), None).await.expect("attach");
                let l = latencies(&remote).await;
                let r = throughput(&remote).await;
                let k = way as usize;
                p50[k] += quantile(&l, 0.5) / ROUNDS as f64;
                p99[k] += quantile(&l, 0.99) / ROUNDS as f64;
                rate[k] += r / ROUNDS as f64;
                remote.close().await;
            }
        }
        for (k, name) in [(1, "to a child"), (2, "--embedded")] {
            println!(
                "proxy over stdio {name}, mean of {ROUNDS} turns each: direct p50 {:.3} ms, \
                 p99 {:.3} ms; through the proxy p50 {:.3} ms, p99 {:.3} ms; added p50 {:.3} ms, \
                 p99 {:.3} ms (goal: p50 under 0.2 ms added)",
                p50[0],
                p99[0],
                p50[k],
                p99[k],
                p50[k] - p50[0],
                p99[k] - p99[0]
            );
            println!(
                "8 callers at once, {name}: direct {:.0} calls/s, through the proxy {:.0} calls/s; \
                 proxy / direct {:.2} (goal: at least 0.90)",
                rate[0],
                rate[k],
                rate[k] / rate[0]
            );
        }
    });
}

/// A server started for the HTTP half, killed when dropped.
struct Started {
    child: std::process::Child,
    url: String,
}

impl Started {
    /// Starts `BIN args` and reads its URL from the first line of its stdout, which
    /// starts with `said`.
    fn start(args: &[String], said: &str) -> Started {
        use std::io::BufRead;
        let mut child = std::process::Command::new(BIN)
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .expect("its first line");
        let url = line
            .trim()
            .strip_prefix(said)
            .unwrap_or_else(|| panic!("unexpected {line:?}"))
            .to_string();
        Started { child, url }
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Calls per second of 8 clients at once, each on its own session.
async fn throughput_clients(url: &str) -> f64 {
    let mut remotes = Vec::new();
    for _ in 0..8 {
        remotes.push(Arc::new(
            Remote::connect(Target::Url(url.to_string()), None)
                .await
                .expect("attach"),
        ));
    }
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for remote in &remotes {
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
    for remote in remotes {
        if let Ok(remote) = Arc::try_unwrap(remote) {
            remote.close().await;
        }
    }
    n as f64 / took
}

fn run_http() {
    let words = |w: &[&str]| w.iter().map(|s| (*s).to_string()).collect::<Vec<_>>();
    let server = Started::start(
        &words(&[
            "--headless",
            "--http",
            "127.0.0.1:0",
            "--paused",
            "--log-level",
            "error",
        ]),
        "serving MCP over HTTP at ",
    );
    let mut args = words(&["proxy", "--upstream", &server.url, "--http", "127.0.0.1:0"]);
    if let Ok(extra) = std::env::var("PROXY_BENCH_ARGS") {
        args.extend(extra.split_whitespace().map(String::from));
    }
    args.extend(words(&["--log-level", "error"]));
    let proxy = Started::start(&args, "proxying MCP over HTTP at ");
    let rt = tokio::runtime::Runtime::new().expect("a runtime");
    rt.block_on(async {
        let mut p50 = [0.0; 2];
        let mut p99 = [0.0; 2];
        let mut rate = [0.0; 2];
        for round in 0..ROUNDS {
            let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
            for k in order {
                let url = if k == 0 { &server.url } else { &proxy.url };
                let remote = Remote::connect(Target::Url(url.clone()), None)
                    .await
                    .expect("attach");
                let l = latencies(&remote).await;
                remote.close().await;
                let r = throughput_clients(url).await;
                p50[k] += quantile(&l, 0.5) / ROUNDS as f64;
                p99[k] += quantile(&l, 0.99) / ROUNDS as f64;
                rate[k] += r / ROUNDS as f64;
            }
        }
        println!(
            "proxy over HTTP, mean of {ROUNDS} turns each: direct p50 {:.3} ms, p99 {:.3} ms; \
             through the proxy p50 {:.3} ms, p99 {:.3} ms; added p50 {:.3} ms, p99 {:.3} ms",
            p50[0],
            p99[0],
            p50[1],
            p99[1],
            p50[1] - p50[0],
            p99[1] - p99[0]
        );
        println!(
            "8 clients at once over HTTP: direct {:.0} calls/s, through the proxy {:.0} calls/s; \
             proxy / direct {:.2} (goal: at least 0.90)",
            rate[0],
            rate[1],
            rate[1] / rate[0]
        );
    });
    drop(proxy);
    drop(server);
}
