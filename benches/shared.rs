//! A stateless server that strangers share, measured as the probes measured it,
//! on the release binary over HTTP (2026-07-28 requests):
//!
//! 1. `subscriptions/listen`: the time to the acknowledgement of a filter naming 1, 100
//!    and 1,000 (the cap) resources, and to the refusal of one naming 1,001 and 20,000;
//!    the median of 20 each.
//! 2. Memory: the server's RSS at start, after 2,000 stored results (each a result over
//!    25 KB kept under a handle), and after 60 s idle, with the memory store and with
//!    the Redis store (a `redis-server` the benchmark starts; skipped without one), and
//!    what Redis then holds (this build's Redis budget set to 64 MB, so that the results
//!    go past it).
//!
//! With `--before PATH` (an older release binary) every figure is measured for it too,
//! in the same run. Arguments (after `--`): `--results N` (2,000), `--idle SECONDS` (60),
//! `--before PATH`.
//!
//! Run with `cargo bench --bench shared`.

#[path = "../tests/support/daemon.rs"]
#[allow(dead_code)]
mod daemon;
#[path = "../tests/support/redis.rs"]
#[allow(dead_code)]
mod redis;
#[path = "support/server.rs"]
#[allow(dead_code)]
mod server;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use server::Server;

struct Args {
    results: usize,
    idle: u64,
    before: Option<String>,
}

fn args() -> Args {
    let mut a = Args {
        results: 2_000,
        idle: 60,
        before: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| panic!("{arg} needs a value"));
        match arg.as_str() {
            "--results" => a.results = value().parse().expect("--results: a number"),
            "--idle" => a.idle = value().parse().expect("--idle: seconds"),
            "--before" => a.before = Some(value()),
            // cargo bench passes --bench.
            _ => {}
        }
    }
    a
}

fn http() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

fn meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
           "io.modelcontextprotocol/clientCapabilities": {}})
}

/// The time from sending a listen request naming `n` resources to its first frame
/// (the acknowledgement, or the refusal); and whether it was acknowledged.
async fn listen_once(client: &reqwest::Client, url: &str, n: usize) -> (Duration, bool) {
    let uris: Vec<String> = (0..n)
        .map(|i| format!("structs://entities/1-{}", i + 1))
        .collect();
    let body = json!({"jsonrpc": "2.0", "id": "l", "method": "subscriptions/listen",
        "params": {"_meta": meta(), "notifications": {"resourceSubscriptions": uris}}})
    .to_string();
    let started = Instant::now();
    let mut response = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "subscriptions/listen")
        .body(body)
        .send()
        .await
        .expect("an answer");
    let mut text = String::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        text.push_str(&String::from_utf8_lossy(&chunk));
        if text.contains("acknowledged") || text.contains("\"error\"") {
            break;
        }
    }
    (started.elapsed(), text.contains("acknowledged"))
}

async fn listen_figures(bin: &str, label: &str) {
    let server = Server::start_bin(bin, &[]).await;
    let client = http();
    for n in [1, 100, 1_000, 1_001, 20_000] {
        let mut times = Vec::new();
        let mut acked = 0;
        let rounds = if n > 1_000 { 5 } else { 20 };
        for _ in 0..rounds {
            let (took, ok) = listen_once(&client, &server.url, n).await;
            times.push(took);
            acked += usize::from(ok);
        }
        times.sort();
        let median = times[times.len() / 2];
        println!(
            "  {label:<7} {n:>6} URIs: {:>9.2} ms to the first frame, {acked}/{rounds} acknowledged",
            median.as_secs_f64() * 1e3
        );
    }
}

/// Stores `n` results over 25 KB through stateless calls, 8 at a time.
async fn store_results(url: &str, n: usize) -> usize {
    let client = http();
    let mut handles = 0;
    let mut next = 0;
    while next < n {
        let batch: Vec<_> = (next..(next + 8).min(n))
            .map(|i| {
                let client = client.clone();
                let url = url.to_string();
                async move {
                    let params = json!({"name": "structs_list_entities", "_meta": meta(),
                        "arguments": {"entity_type": "player", "page_size": 100,
                                      "verbosity": "raw"}});
                    let body = json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                                      "params": params});
                    let text = client
                        .post(&url)
                        .header("content-type", "application/json")
                        .header("accept", "application/json, text/event-stream")
                        .header("mcp-protocol-version", "2026-07-28")
                        .header("mcp-method", "tools/call")
                        .header("mcp-name", "structs_list_entities")
                        .body(body.to_string())
                        .send()
                        .await
                        .expect("an answer")
                        .text()
                        .await
                        .unwrap_or_default();
                    text.contains("result_handle")
                }
            })
            .collect();
        for stored in futures_util::future::join_all(batch).await {
            handles += usize::from(stored);
        }
        next += 8;
    }
    handles
}

/// What Redis holds in all (`used_memory`), in MB.
async fn redis_used_mb(url: &str) -> f64 {
    let Ok(client) = ::redis::Client::open(url) else {
        return 0.0;
    };
    let Ok(mut conn) = client.get_multiplexed_async_connection().await else {
        return 0.0;
    };
    let info: String = ::redis::cmd("INFO")
        .arg("memory")
        .query_async(&mut conn)
        .await
        .unwrap_or_default();
    info.lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .map_or(0.0, |b| b / (1 << 20) as f64)
}

async fn memory_figures(bin: &str, label: &str, store: &str, extra: &[&str], args: &Args) {
    let mut flags = vec!["--world-size", "2000"];
    flags.extend_from_slice(extra);
    let server = Server::start_bin(bin, &flags).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let at_start = server.rss_mb();
    let started = Instant::now();
    let stored = store_results(&server.url, args.results).await;
    let took = started.elapsed();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = server.rss_mb();
    tokio::time::sleep(Duration::from_secs(args.idle)).await;
    let idle = server.rss_mb();
    if let Some(url) = extra
        .iter()
        .position(|a| *a == "--handle-store")
        .and_then(|i| extra.get(i + 1))
    {
        println!(
            "  {label:<7} redis  Redis holds {:.0} MB",
            redis_used_mb(url).await
        );
    }
    println!(
        "  {label:<7} {store:<6} RSS {at_start:>6.0} MB at start, {after:>6.0} MB after {stored} stored results ({:.1} s), {idle:>6.0} MB after {} s idle",
        took.as_secs_f64(),
        args.idle
    );
}

/// Empties Redis, so that each binary's figures are its own.
async fn flush(url: &str) {
    if let Ok(client) = ::redis::Client::open(url)
        && let Ok(mut conn) = client.get_multiplexed_async_connection().await
    {
        let _: Result<(), _> = ::redis::cmd("FLUSHALL").query_async(&mut conn).await;
    }
}

fn main() {
    let args = args();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let now = env!("CARGO_BIN_EXE_structs-console").to_string();
    let mut bins = vec![("now", now)];
    if let Some(before) = &args.before {
        bins.insert(0, ("before", before.clone()));
    }
    runtime.block_on(async {
        println!("subscriptions/listen: time to the acknowledgement (median)");
        for (label, bin) in &bins {
            listen_figures(bin, label).await;
        }
        println!(
            "server memory: {} results stored, then {} s idle",
            args.results, args.idle
        );
        let redis = redis::RedisServer::start();
        for (label, bin) in &bins {
            memory_figures(bin, label, "memory", &[], &args).await;
            if let Some(redis) = &redis {
                let url = redis.url();
                flush(&url).await;
                // This build keeps the Redis store to a budget: 64 MB here, so that the
                // results stored go past it (an older build takes no such setting).
                let config = std::env::temp_dir().join("shared-bench-budget.toml");
                std::fs::write(&config, "[handles]\nredis_limit_mb = 64\n").unwrap();
                let config = config.display().to_string();
                let mut extra = vec!["--handle-store", url.as_str()];
                if *label == "now" {
                    extra.extend(["--config", config.as_str()]);
                }
                memory_figures(bin, label, "redis", &extra, &args).await;
            }
        }
        if redis.is_none() {
            println!("  (no redis-server: the Redis store was not measured)");
        }
    });
}
