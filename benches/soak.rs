//! A shared server under attack: the release binary serving `--headless --http` on
//! loopback, with well-behaved clients and the attacks of issue 28 at once.
//!
//! 1. Load: calls/s and p99 for 8 and 32 well-behaved clients on a quiet server.
//! 2. Sessions: 50,000 `initialize`s against the cap; the refusals and the peak RSS.
//! 3. Slow connections: 20,000 that send half a request and wait, while 8 clients call
//!    on; their p99 (goal: under 50 ms).
//! 4. Proof of work: 8 sessions asking for 256 threads each; the peak thread count
//!    (goal: cores plus a small constant) and the CPU after the sessions end (goal: 0).
//! 5. Load again on the same server, after all of it (goal: no slower).
//! 6. Handle store: results over 25 KB stored into a 32 MB store; RSS growth against
//!    the cap (goal: within 1.5x), on a server of its own.
//! 7. The tap and the client among hostile peers ([`hostile`]): `client` against
//!    servers whose pages never end, whose messages are too big or too deep, that never
//!    answer, or that flood it; `proxy --upstream` and `watch --json` against lines
//!    that never end. How each ended, how long it took against `--timeout`, and its
//!    peak RSS against the Limits table's figure. `SOAK_ONLY=hostile` runs this alone.
//!
//! `SOAK_BASELINE_BIN=PATH` first measures the same load on another build (the release
//! binary before a change), the two builds taking turns, `SOAK_ROUNDS` rounds each
//! (3 unless set).
//!
//! Run with `cargo bench --bench soak`. `SOAK_SCALE=0.1` runs a tenth of the counts.

use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

#[path = "support/hostile.rs"]
mod hostile;
#[path = "support/server.rs"]
mod server;

use server::Server;

const SLOW_HELPER: &str = "SOAK_SLOW_HELPER";

fn scale(n: usize) -> usize {
    let s: f64 = std::env::var("SOAK_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    ((n as f64 * s) as usize).max(1)
}

/// A well-behaved MCP client over plain HTTP: one session, calls one after another.
struct Client {
    http: reqwest::Client,
    url: String,
    session: String,
    next: u64,
}

impl Client {
    async fn connect(url: &str) -> Option<Client> {
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(2)
            .build()
            .ok()?;
        let r = post(&http, url, None, &initialize()).await.ok()?;
        if r.status() != 200 {
            return None;
        }
        let session = r
            .headers()
            .get("mcp-session-id")?
            .to_str()
            .ok()?
            .to_string();
        let _ = r.bytes().await;
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let _ = post(&http, url, Some(&session), &note)
            .await
            .ok()?
            .bytes()
            .await;
        Some(Client {
            http,
            url: url.to_string(),
            session,
            next: 1,
        })
    }

    /// One tool call; its latency, or `None` when it failed.
    async fn call(&mut self, tool: &str, args: Value) -> Option<Duration> {
        self.next += 1;
        let body = json!({"jsonrpc": "2.0", "id": self.next, "method": "tools/call",
            "params": {"name": tool, "arguments": args}});
        let at = Instant::now();
        let r = post(&self.http, &self.url, Some(&self.session), &body)
            .await
            .ok()?;
        if r.status() != 200 {
            return None;
        }
        let text = r.text().await.ok()?;
        (text.contains("\"result\"") && !text.contains("\"isError\":true")).then(|| at.elapsed())
    }

    async fn close(self) {
        let _ = self
            .http
            .delete(&self.url)
            .header("mcp-session-id", &self.session)
            .send()
            .await;
    }
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "soak", "version": "1"}}})
}

async fn post(
    http: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    body: &Value,
) -> reqwest::Result<reqwest::Response> {
    let mut r = http
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .timeout(Duration::from_secs(30))
        .body(body.to_string());
    if let Some(s) = session {
        r = r.header("mcp-session-id", s);
    }
    r.send().await
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1000.0
}

/// `clients` well-behaved clients calling for `secs`: calls/s, p99 ms, errors.
async fn load(url: &str, clients: usize, secs: f64) -> (f64, f64, usize) {
    let errors = Arc::new(AtomicUsize::new(0));
    let until = Instant::now() + Duration::from_secs_f64(secs);
    let mut tasks = Vec::new();
    for c in 0..clients {
        let (url, errors) = (url.to_string(), errors.clone());
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            let Some(mut client) = Client::connect(&url).await else {
                errors.fetch_add(1, Ordering::Relaxed);
                return lat;
            };
            let mut n = 0usize;
            while Instant::now() < until {
                n += 1;
                let i = (c * 7919 + n * 104_729) % 24 + 1;
                let (tool, args) = match n % 3 {
                    0 => (
                        "structs_query_player",
                        json!({"player_id": format!("1-{i}")}),
                    ),
                    1 => ("structs_list_players", json!({"page_size": 10})),
                    _ => (
                        "structs_query_planet",
                        json!({"planet_id": format!("2-{i}")}),
                    ),
                };
                match client.call(tool, args).await {
                    Some(d) => lat.push(d),
                    None => {
                        errors.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            client.close().await;
            lat
        }));
    }
    let started = Instant::now();
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap_or_default());
    }
    let took = started.elapsed().as_secs_f64();
    all.sort();
    (
        all.len() as f64 / took,
        percentile(&all, 0.99),
        errors.load(Ordering::Relaxed),
    )
}

/// Opens `count` connections to `addr`, each sending half a request, and holds them
/// (reopening any the server closes) until stdin closes. Run as a child process so
/// that the connections do not count against the bench's own open-file limit.
async fn slow_helper(addr: String, count: usize) {
    let opened = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..count {
        let (addr, opened) = (addr.clone(), opened.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                let Ok(mut tcp) = tokio::net::TcpStream::connect(&addr).await else {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                };
                if tcp
                    .write_all(b"POST /mcp HTTP/1.1\r\nHost: loc")
                    .await
                    .is_err()
                {
                    continue;
                }
                opened.fetch_add(1, Ordering::Relaxed);
                // Wait for the server to close it, then open another.
                let mut buf = [0u8; 64];
                let _ = tokio::io::AsyncReadExt::read(&mut tcp, &mut buf).await;
            }
        }));
    }
    let mut stdin = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    let _ = stdin.next_line().await;
    println!("{}", opened.load(Ordering::Relaxed));
}

fn raise_open_files() {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: get and set the process's own limit with structs they fill or read.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) == 0 {
            r.rlim_cur = r.rlim_max.min(1 << 20);
            libc::setrlimit(libc::RLIMIT_NOFILE, &r);
        }
    }
}

fn main() {
    raise_open_files();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    if let Ok(spec) = std::env::var(SLOW_HELPER) {
        let (addr, count) = spec.rsplit_once(',').expect("addr,count");
        rt.block_on(slow_helper(addr.to_string(), count.parse().expect("count")));
        return;
    }
    if std::env::var("SOAK_ONLY").as_deref() != Ok("hostile") {
        rt.block_on(soak());
    }
    hostile::run(env!("CARGO_BIN_EXE_structs-console"));
}

async fn soak() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("soak: the release server under attack on loopback ({cores} cores)");

    // 0. The same load on another build, when one is named (the build before a change),
    // taking turns with this one so that neither gains from going first.
    if let Ok(bin) = std::env::var("SOAK_BASELINE_BIN") {
        let this = env!("CARGO_BIN_EXE_structs-console").to_string();
        let mut sums: Vec<(f64, f64, usize)> = vec![(0.0, 0.0, 0); 4];
        // Each turn's rate, to show the spread beside the means.
        let mut turns: Vec<Vec<f64>> = vec![Vec::new(); 4];
        let rounds: usize = std::env::var("SOAK_ROUNDS")
            .ok()
            .and_then(|s| s.parse().ok())
            .filter(|&n| n > 0)
            .unwrap_or(3);
        for round in 0..rounds {
            let order = if round % 2 == 0 {
                [(1, &bin), (0, &this)]
            } else {
                [(0, &this), (1, &bin)]
            };
            for (which, path) in order {
                let server = Server::start_bin(path, &[]).await;
                for (k, clients) in [8, 32].into_iter().enumerate() {
                    let (rate, p99, errors) = load(&server.url, clients, 4.0).await;
                    let s = &mut sums[which * 2 + k];
                    s.0 += rate / rounds as f64;
                    s.1 += p99 / rounds as f64;
                    s.2 += errors;
                    turns[which * 2 + k].push(rate);
                }
                server.stop().await;
            }
        }
        let spread = |rates: &[f64]| {
            let lo = rates.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = rates.iter().copied().fold(0.0, f64::max);
            format!("{lo:.0}-{hi:.0}")
        };
        for (k, clients) in [8, 32].into_iter().enumerate() {
            let (new, old) = (sums[k], sums[2 + k]);
            println!(
                "  load, {clients:>2} clients, mean of {rounds} turns each: this build {:.0} calls/s \
                 (turns {}), p99 {:.2} ms ({} errors); baseline build {:.0} calls/s (turns {}), \
                 p99 {:.2} ms ({} errors); this / baseline {:.2}",
                new.0,
                spread(&turns[k]),
                new.1,
                new.2,
                old.0,
                spread(&turns[2 + k]),
                old.1,
                old.2,
                new.0 / old.0
            );
        }
    }

    // Sessions idle for 5 s end, so that the server is open again soon after the flood.
    let server = Server::start(&["--http-session-idle", "5"]).await;
    println!(
        "  started: RSS {:.1} MB, {} threads",
        server.rss_mb(),
        server.threads()
    );

    // 1. Load on a quiet server.
    let mut quiet = Vec::new();
    for clients in [8, 32] {
        let (rate, p99, errors) = load(&server.url, clients, 6.0).await;
        println!(
            "  load, quiet, {clients:>2} clients: {rate:>7.0} calls/s, p99 {p99:>6.2} ms, {errors} errors"
        );
        quiet.push((clients, rate, p99));
    }
    // 2. Sessions against the cap.
    let attempts = scale(50_000);
    let ok = Arc::new(AtomicUsize::new(0));
    let refused = Arc::new(AtomicUsize::new(0));
    let failed = Arc::new(AtomicUsize::new(0));
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..32 {
        let (url, ok, refused, failed, next) = (
            server.url.clone(),
            ok.clone(),
            refused.clone(),
            failed.clone(),
            next.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let http = reqwest::Client::new();
            while next.fetch_add(1, Ordering::Relaxed) < attempts {
                match post(&http, &url, None, &initialize()).await {
                    Ok(r) if r.status() == 200 => {
                        ok.fetch_add(1, Ordering::Relaxed);
                        let _ = r.bytes().await;
                    }
                    Ok(r) if r.status() == 503 => {
                        refused.fetch_add(1, Ordering::Relaxed);
                        let _ = r.bytes().await;
                    }
                    _ => {
                        failed.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        }));
    }
    for t in tasks {
        let _ = t.await;
    }
    println!(
        "  sessions: {attempts} initialize in {:.1} s: {} opened, {} refused (503), {} failed; \
         RSS {:.1} MB, peak {:.1} MB",
        started.elapsed().as_secs_f64(),
        ok.load(Ordering::Relaxed),
        refused.load(Ordering::Relaxed),
        failed.load(Ordering::Relaxed),
        server.rss_mb(),
        server.peak_rss_mb()
    );
    // The flood's sessions end after their idle time.
    tokio::time::sleep(Duration::from_secs(8)).await;
    let open = match reqwest::get(server.url.replace("/mcp", "/health")).await {
        Ok(r) => r
            .json::<Value>()
            .await
            .ok()
            .and_then(|h| h["sessions"].as_i64())
            .unwrap_or(-1),
        Err(_) => -1,
    };
    println!(
        "    after their idle time: {open} sessions open, RSS {:.1} MB (the allocator keeps what it had)",
        server.rss_mb()
    );

    // 3. Slow connections while clients call.
    let slow = scale(20_000);
    let mut helpers = Vec::new();
    for part in [slow / 2, slow - slow / 2] {
        let helper = tokio::process::Command::new(std::env::current_exe().unwrap())
            .env(SLOW_HELPER, format!("{},{part}", server.addr))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("slow helper");
        helpers.push(helper);
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    let (rate, p99, errors) = load(&server.url, 8, 8.0).await;
    println!(
        "  slow connections: {slow} attackers each keeping a half-sent request open; 8 clients \
         meanwhile: {rate:.0} calls/s, p99 {p99:.2} ms (goal < 50 ms), {errors} errors; server RSS \
         {:.1} MB, {} threads",
        server.rss_mb(),
        server.threads()
    );
    let mut reopened = 0usize;
    for mut h in helpers {
        drop(h.stdin.take());
        if let Ok(out) = tokio::time::timeout(Duration::from_secs(30), async {
            let mut s = String::new();
            let _ =
                tokio::io::AsyncReadExt::read_to_string(h.stdout.as_mut().unwrap(), &mut s).await;
            s
        })
        .await
        {
            reopened += out.trim().parse::<usize>().unwrap_or(0);
        }
        let _ = h.kill().await;
    }
    println!(
        "    ({reopened} half-sent connections made in all: the server holds at most its cap and \
         closes the oldest silent one for each new one, and each attacker reconnects at once)"
    );

    // 4. Proof of work: 8 sessions, 256 threads each.
    let idle_threads = server.threads();
    let mut clients = Vec::new();
    for _ in 0..8 {
        let mut c = Client::connect(&server.url).await.expect("a session");
        let args = json!({"action_type": "struct_build_complete", "entity_id": "5-1",
            "block_start": 10, "age": 1, "difficulty": 700, "threads": 256,
            "max_iterations": 1_000_000_000_000u64});
        let http = c.http.clone();
        let (url, session) = (c.url.clone(), c.session.clone());
        c.next += 1;
        let body = json!({"jsonrpc": "2.0", "id": c.next, "method": "tools/call",
            "params": {"name": "structs_calculate_proof_of_work", "arguments": args}});
        let call = tokio::spawn(async move {
            let _ = http
                .post(&url)
                .header("accept", "application/json, text/event-stream")
                .header("content-type", "application/json")
                .header("mcp-session-id", session)
                .body(body.to_string())
                .send()
                .await;
        });
        clients.push((c, call));
    }
    let mut peak = 0;
    for _ in 0..30 {
        peak = peak.max(server.threads());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let busy_cpu = {
        let before = server.cpu_ticks();
        tokio::time::sleep(Duration::from_secs(1)).await;
        server.cpu_ticks() - before
    };
    let ended = Instant::now();
    for (c, call) in clients {
        call.abort();
        c.close().await;
    }
    // The sessions' searches end when rmcp ends their calls (it waits up to 5 s for
    // answers of a closed session first); then the CPU falls quiet.
    let mut after_cpu;
    loop {
        let before = server.cpu_ticks();
        tokio::time::sleep(Duration::from_secs(1)).await;
        after_cpu = server.cpu_ticks() - before;
        if after_cpu < 5 || ended.elapsed() > Duration::from_secs(30) {
            break;
        }
    }
    let quiet_after = ended.elapsed().as_secs_f64();
    let settled_cpu = {
        let before = server.cpu_ticks();
        tokio::time::sleep(Duration::from_secs(2)).await;
        (server.cpu_ticks() - before) as f64 / 2.0
    };
    println!(
        "  proof of work: 8 sessions x 256 threads: peak {peak} threads in the server ({idle_threads} \
         idle, {cores} cores; goal at most cores + a small constant over idle); CPU {busy_cpu} ticks/s \
         while hashing; quiet ({after_cpu} ticks/s) {quiet_after:.1} s after the sessions ended, \
         then {settled_cpu:.1} ticks/s (goal 0)"
    );

    // 5. Load again on the same server, after all of it.
    for (clients, rate0, p990) in quiet {
        let (rate, p99, errors) = load(&server.url, clients, 6.0).await;
        println!(
            "  load, after the attacks, {clients:>2} clients: {rate:>7.0} calls/s, p99 {p99:>6.2} ms, \
             {errors} errors (quiet: {rate0:.0} calls/s, p99 {p990:.2} ms)"
        );
    }
    let at = Instant::now();
    server.stop().await;
    println!("  stopped in {:.2} s", at.elapsed().as_secs_f64());

    // 6. Handle store against its cap.
    let dir = std::env::temp_dir().join(format!("structs-soak-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("soak.toml");
    std::fs::write(&config, "[handles]\nmemory_limit_mb = 32\n").unwrap();
    let server =
        Server::start(&["--config", config.to_str().unwrap(), "--world-size", "400"]).await;
    let mut c = Client::connect(&server.url).await.expect("a session");
    // Warm up, then the baseline.
    let _ = c
        .call(
            "structs_list_structs",
            json!({"page_size": 100, "include_references": true}),
        )
        .await;
    let before = server.rss_mb();
    let results = scale(1_500);
    let mut stored = 0;
    for n in 0..results {
        // Every call's result is stored under a handle of its own, the same page or not.
        let body = json!({"jsonrpc": "2.0", "id": n + 10, "method": "tools/call",
            "params": {"name": "structs_list_structs",
                "arguments": {"page_size": 100, "include_references": true}}});
        if let Ok(r) = post(&c.http, &c.url, Some(&c.session), &body).await
            && let Ok(text) = r.text().await
            && text.contains("result_handle")
        {
            stored += 1;
        }
    }
    let grown = server.rss_mb() - before;
    println!(
        "  handle store: {results} large results ({stored} stored under handles) into a 32 MB \
         store: RSS {before:.1} -> {:.1} MB, grew {grown:.1} MB = {:.2}x the cap (goal <= 1.5x)",
        server.rss_mb(),
        grown / 32.0
    );
    c.close().await;
    server.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}
