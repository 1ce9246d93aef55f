//! Several servers behind HAProxy against one server direct, in one run: calls/s, p50
//! and p99, and the CPU each piece spends per call: the servers, HAProxy, Redis and the
//! node (`serve-rest`) they read.
//!
//! Every set reads one `serve-rest` of the embedded world (paused) and has NATS; the
//! release binary serves `--headless --http` (tests/support/cluster.rs starts the
//! pieces). The sets, in order:
//! - `direct, memory`: one server, handles in its own memory: the baseline;
//! - `direct, Redis`: one server, handles in Redis: the shared store's cost;
//! - `HAProxy, N`: HAProxy (deploy/haproxy.cfg) in front of N servers sharing Redis,
//!   for each N asked: the balancer's cost, and the scaling where cores allow it.
//!
//! Two calls, each as 2026-07-28 stateless requests (no session, so round robin spreads
//! every request): `query` reads a player (the source's cache answers it: no store), and
//! `fetch` reads a page of a stored result (the handle store). Each client sends its
//! next call when the last is answered.
//!
//! Arguments (after `--`), each a comma-separated list:
//!   --servers 1,2,3   the HAProxy sets to measure (default 1,2,3)
//!   --clients 1,8     the clients in flight (default 1,8)
//!   --seconds 4       how long each measurement lasts (default 4)
//!
//! Run with `cargo bench --bench cluster` (redis-server, nats-server and haproxy
//! installed), e.g. `cargo bench --bench cluster -- --servers 1,4,8 --clients 64` on
//! a machine with the cores to show scaling.

#[path = "../tests/support/cluster.rs"]
#[allow(dead_code)]
mod cluster;
#[path = "../tests/support/daemon.rs"]
#[allow(dead_code)]
mod daemon;
#[path = "../tests/support/nats.rs"]
#[allow(dead_code)]
mod nats;
#[path = "../tests/support/redis.rs"]
#[allow(dead_code)]
mod redis;

use std::sync::Arc;
use std::time::{Duration, Instant};

use cluster::{Cluster, Setup};
use serde_json::{Value, json};

const WARMUP: Duration = Duration::from_secs(1);

struct Args {
    servers: Vec<usize>,
    clients: Vec<usize>,
    seconds: u64,
}

fn list(text: &str, what: &str) -> Vec<usize> {
    text.split(',')
        .map(|n| {
            n.trim()
                .parse()
                .ok()
                .filter(|&n| n > 0)
                .unwrap_or_else(|| panic!("{what}: {n:?} is not a positive number"))
        })
        .collect()
}

fn args() -> Args {
    let mut a = Args {
        servers: vec![1, 2, 3],
        clients: vec![1, 8],
        seconds: 4,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| panic!("{arg} needs a value"));
        match arg.as_str() {
            "--servers" => a.servers = list(&value(), "--servers"),
            "--clients" => a.clients = list(&value(), "--clients"),
            "--seconds" => {
                a.seconds = value().parse().expect("--seconds: a number of seconds");
            }
            // cargo bench passes --bench.
            "--bench" => {}
            other => panic!("unknown argument {other} (--servers, --clients, --seconds)"),
        }
    }
    a
}

/// A 2026-07-28 stateless `tools/call`, with the headers such a request carries.
fn call(
    http: &reqwest::Client,
    url: &str,
    id: usize,
    tool: &str,
    args: Value,
) -> reqwest::RequestBuilder {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": tool, "arguments": args,
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}});
    http.post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", tool)
        .body(body.to_string())
}

/// The tool result's structured content, from a JSON or an SSE answer.
fn result_of(body: &[u8]) -> Option<Value> {
    let text = std::str::from_utf8(body).ok()?;
    let json = text
        .lines()
        .find_map(|l| {
            l.strip_prefix("data:")
                .map(str::trim)
                .filter(|d| !d.is_empty())
        })
        .unwrap_or(text);
    let v: Value = serde_json::from_str(json).ok()?;
    let result = v.get("result")?;
    (result["isError"] != true).then(|| result["structuredContent"].clone())
}

#[derive(Clone, Copy)]
enum Work {
    Query,
    Fetch,
}

impl Work {
    fn name(self) -> &'static str {
        match self {
            Work::Query => "query",
            Work::Fetch => "fetch",
        }
    }

    fn request(
        self,
        http: &reqwest::Client,
        url: &str,
        n: usize,
        handle: &str,
    ) -> reqwest::RequestBuilder {
        match self {
            Work::Query => call(
                http,
                url,
                n,
                "structs_query_player",
                json!({"player_id": format!("1-{}", n % 24 + 1)}),
            ),
            Work::Fetch => call(
                http,
                url,
                n,
                "structs_handle_fetch",
                json!({"handle": handle, "page": n % 4 + 1, "page_size": 10}),
            ),
        }
    }
}

struct Figures {
    rate: f64,
    p50: Duration,
    p99: Duration,
    errors: usize,
    calls: usize,
}

async fn load(url: &str, work: Work, clients: usize, handle: &str, measure: Duration) -> Figures {
    let start = Instant::now();
    let from = start + WARMUP;
    let end = from + measure;
    let mut tasks = Vec::new();
    let handle: Arc<str> = handle.into();
    for c in 0..clients {
        let (url, handle) = (url.to_string(), handle.clone());
        tasks.push(tokio::spawn(async move {
            let http = reqwest::Client::new();
            let (mut lat, mut errors, mut n) = (Vec::new(), 0, c * 1_000_000);
            loop {
                let t = Instant::now();
                if t >= end {
                    break;
                }
                let ok = match work.request(&http, &url, n, &handle).send().await {
                    Ok(r) if r.status().is_success() => {
                        r.bytes().await.ok().and_then(|b| result_of(&b)).is_some()
                    }
                    _ => false,
                };
                n += 1;
                if t >= from {
                    lat.push(t.elapsed());
                    errors += usize::from(!ok);
                }
            }
            (lat, errors)
        }));
    }
    let (mut lat, mut errors) = (Vec::new(), 0);
    for t in tasks {
        let (l, e) = t.await.expect("a client");
        lat.extend(l);
        errors += e;
    }
    lat.sort();
    let at = |q: f64| {
        lat.get(((lat.len() as f64 - 1.0) * q).round() as usize)
            .copied()
            .unwrap_or_default()
    };
    Figures {
        rate: lat.len() as f64 / measure.as_secs_f64(),
        p50: at(0.5),
        p99: at(0.99),
        errors,
        calls: lat.len(),
    }
}

/// A process's CPU time so far (user and system), from /proc.
fn cpu(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command's closing parenthesis: utime and stime are 14 and 15.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 = [11, 12]
        .iter()
        .filter_map(|&i| fields.get(i).and_then(|f| f.parse::<u64>().ok()))
        .sum();
    // /proc counts in USER_HZ, 100 a second on Linux whatever the kernel's own HZ.
    Duration::from_secs_f64(ticks as f64 / 100.0)
}

/// The processes whose CPU a set spends: the servers, HAProxy, Redis, the node.
struct Pids {
    servers: Vec<u32>,
    haproxy: Option<u32>,
    redis: Option<u32>,
    node: u32,
}

impl Pids {
    fn of(c: &Cluster, shared: bool) -> Pids {
        Pids {
            servers: (0..c.servers()).filter_map(|i| c.pid(i)).collect(),
            haproxy: c.haproxy_pid(),
            redis: if shared { c.redis.pid() } else { None },
            node: c.rest_pid(),
        }
    }

    fn now(&self) -> [Duration; 4] {
        [
            self.servers.iter().map(|&p| cpu(p)).sum(),
            self.haproxy.map(cpu).unwrap_or_default(),
            self.redis.map(cpu).unwrap_or_default(),
            cpu(self.node),
        ]
    }
}

fn micros_per_call(spent: Duration, calls: usize) -> String {
    if calls == 0 {
        return "-".into();
    }
    format!("{:.1}", spent.as_secs_f64() * 1e6 / calls as f64)
}

fn main() {
    let a = args();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let measure = Duration::from_secs(a.seconds);
    let mut sets: Vec<(String, Setup)> = vec![
        (
            "direct, memory".into(),
            Setup {
                servers: 1,
                balanced: false,
                persistent: false,
                shared_store: false,
                otlp: None,
            },
        ),
        (
            "direct, Redis".into(),
            Setup {
                servers: 1,
                balanced: false,
                persistent: false,
                shared_store: true,
                otlp: None,
            },
        ),
    ];
    for &n in &a.servers {
        sets.push((
            format!("HAProxy, {n}"),
            Setup {
                servers: n,
                balanced: true,
                persistent: false,
                shared_store: true,
                otlp: None,
            },
        ));
    }
    println!(
        "several servers as one: {} s a measurement, clients {:?}, {} cores here",
        a.seconds,
        a.clients,
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!();
    println!(
        "| set | call | clients | calls/s | p50 ms | p99 ms | errors | servers µs CPU/call | HAProxy µs/call | Redis µs/call | node µs/call |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for (name, setup) in sets {
        let Some(c) = Cluster::start_with(setup) else {
            println!("(skipped {name}: a piece is not installed)");
            continue;
        };
        let url = c.url();
        let pids = Pids::of(&c, setup.shared_store);
        let handle = runtime.block_on(async {
            let http = reqwest::Client::new();
            let r = call(
                &http,
                &url,
                0,
                "structs_list_players",
                json!({"page_size": 100, "include_references": true, "reference_depth": 2}),
            )
            .send()
            .await
            .expect("the first call");
            let body = r.bytes().await.expect("its answer");
            let v = result_of(&body).expect("a result");
            v["result_handle"].as_str().expect("a handle").to_string()
        });
        for &clients in &a.clients {
            for work in [Work::Query, Work::Fetch] {
                let before = pids.now();
                let f = runtime.block_on(load(&url, work, clients, &handle, measure));
                let after = pids.now();
                // The CPU of the warm-up is counted too: spread over the calls of the
                // measurement and the warm-up's share of them.
                let counted = (f.calls as f64
                    * (1.0 + WARMUP.as_secs_f64() / measure.as_secs_f64()))
                    as usize;
                let spent: Vec<String> = (0..4)
                    .map(|i| micros_per_call(after[i].saturating_sub(before[i]), counted))
                    .collect();
                println!(
                    "| {name} | {} | {clients} | {:.0} | {:.2} | {:.2} | {} | {} | {} | {} | {} |",
                    work.name(),
                    f.rate,
                    f.p50.as_secs_f64() * 1e3,
                    f.p99.as_secs_f64() * 1e3,
                    f.errors,
                    spent[0],
                    if setup.balanced {
                        spent[1].as_str()
                    } else {
                        "-"
                    },
                    if setup.shared_store {
                        spent[2].as_str()
                    } else {
                        "-"
                    },
                    spent[3],
                );
            }
        }
        drop(c);
    }
}
