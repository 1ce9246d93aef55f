//! The two protocol eras on one build: stateless 2026-07-28 requests against
//! 2025-11-25 sessions, over streamable HTTP on loopback, the release binary serving
//! `--headless --http`.
//!
//! 1. Load: calls/s and p99 for 8 and 32 clients, each calling the cheapest tool
//!    (`structs_validate_entity_id`) as fast as it is answered. A session client opens
//!    its session first (`initialize`, `notifications/initialized`) and sends its id;
//!    a stateless client sends each request whole, with its `_meta`. The eras take
//!    turns, `ERAS_ROUNDS` rounds (3 unless set); the medians are printed, and the
//!    ratio of the eras is taken within each round.
//! 2. Memory per client: a fresh server's RSS after two waves of 2,000 clients that
//!    each make one call and leave (sharing a pool of connections): as sessions (each
//!    kept by the server until it idles out) and as stateless clients. The second
//!    wave's growth is what a client leaves behind.
//!
//! Goal: stateless is no slower, and needs no memory per client.
//!
//! Run with `cargo bench --bench eras`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

#[path = "support/server.rs"]
#[allow(dead_code)]
mod server;

use server::Server;

const WARMUP: Duration = Duration::from_secs(1);
const MEASURE: Duration = Duration::from_secs(4);
const IDLE_CLIENTS: usize = 2_000;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Era {
    Stateless,
    Sessions,
}

impl Era {
    fn name(self) -> &'static str {
        match self {
            Era::Stateless => "2026-07-28 stateless",
            Era::Sessions => "2025-11-25 sessions",
        }
    }
}

/// One client of one era: how it sends a call.
struct Client {
    http: reqwest::Client,
    url: String,
    era: Era,
    session: Option<String>,
}

impl Client {
    async fn open(http: reqwest::Client, url: &str, era: Era) -> Client {
        let mut client = Client {
            http,
            url: url.to_string(),
            era,
            session: None,
        };
        if era == Era::Sessions {
            let response = client
                .post(
                    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": {"name": "eras-bench", "version": "1"}}}),
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
                .post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
                .send()
                .await;
        }
        client
    }

    fn post(&self, body: Value) -> reqwest::RequestBuilder {
        let mut request = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        match self.era {
            Era::Stateless => {
                request = request.header("mcp-protocol-version", "2026-07-28");
                if let Some(method) = body["method"].as_str() {
                    request = request.header("mcp-method", method);
                }
                if let Some(name) = body["params"]["name"].as_str() {
                    request = request.header("mcp-name", name);
                }
            }
            Era::Sessions => {
                request = request.header("mcp-protocol-version", "2025-11-25");
                if let Some(id) = &self.session {
                    request = request.header("mcp-session-id", id);
                }
            }
        }
        request.body(body.to_string())
    }

    /// One call; true when it was answered with a result.
    async fn call(&self, n: usize) -> bool {
        let mut params = json!({"name": "structs_validate_entity_id",
                                "arguments": {"id": format!("1-{}", n % 50 + 1)}});
        if self.era == Era::Stateless {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            });
        }
        let body = json!({"jsonrpc": "2.0", "id": n + 1, "method": "tools/call", "params": params});
        match self.post(body).send().await {
            Ok(r) if r.status().is_success() => r
                .bytes()
                .await
                .is_ok_and(|b| b.windows(9).any(|w| w == b"\"result\":")),
            _ => false,
        }
    }
}

struct Figures {
    rate: f64,
    p99: Duration,
    errors: usize,
}

async fn load(url: &str, era: Era, clients: usize) -> Figures {
    let mut opened = Vec::new();
    for _ in 0..clients {
        opened.push(Arc::new(
            Client::open(reqwest::Client::new(), url, era).await,
        ));
    }
    let start = Instant::now();
    let from = start + WARMUP;
    let end = from + MEASURE;
    let mut tasks = Vec::new();
    for client in opened {
        tasks.push(tokio::spawn(async move {
            let (mut lat, mut errors, mut n) = (Vec::new(), 0, 0);
            loop {
                let t = Instant::now();
                if t >= end {
                    break;
                }
                let ok = client.call(n).await;
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
        let (l, e) = t.await.unwrap();
        lat.extend(l);
        errors += e;
    }
    lat.sort();
    let p99 = lat
        .get(((lat.len() as f64 - 1.0) * 0.99).round() as usize)
        .copied()
        .unwrap_or_default();
    Figures {
        rate: lat.len() as f64 / MEASURE.as_secs_f64(),
        p99,
        errors,
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The RSS (MB) of a fresh server, warmed, then after each of two waves of
/// `IDLE_CLIENTS` clients of `era` that each make one call and leave. The first wave
/// also grows what the allocator keeps for the busiest moment; the second shows what
/// each client leaves behind.
async fn memory(era: Era) -> ([f64; 3], usize) {
    let server = Server::start(&["--http-max-sessions", "100000"]).await;
    let http = reqwest::Client::new();
    let warm = Client::open(http.clone(), &server.url, Era::Stateless).await;
    for n in 0..200 {
        warm.call(n).await;
    }
    let mut rss = [server.rss_mb(), 0.0, 0.0];
    let mut failed = 0;
    for after in rss.iter_mut().skip(1) {
        let mut kept = Vec::new();
        for chunk in (0..IDLE_CLIENTS).collect::<Vec<_>>().chunks(50) {
            let mut tasks = Vec::new();
            for &i in chunk {
                // The clients share a pool of connections, as the requests of many
                // agents behind one host or balancer do.
                let (http, url) = (http.clone(), server.url.clone());
                tasks.push(tokio::spawn(async move {
                    let client = Client::open(http, &url, era).await;
                    let ok = client.call(i).await;
                    (client, ok)
                }));
            }
            for t in tasks {
                let (client, ok) = t.await.unwrap();
                failed += usize::from(!ok);
                kept.push(client);
            }
        }
        // The clients go. What a session keeps stays until it idles out; a stateless
        // client left nothing.
        drop(kept);
        tokio::time::sleep(Duration::from_millis(1000)).await;
        *after = server.rss_mb();
    }
    server.stop().await;
    (rss, failed)
}

fn main() {
    let rounds: usize = std::env::var("ERAS_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let _ = rustls::crypto::ring::default_provider().install_default();
    rt.block_on(async {
        println!(
            "The two protocol eras over streamable HTTP on loopback, the release binary, one server, \
             structs_validate_entity_id, {}s measured after {}s warm-up, {rounds} rounds (the eras take turns)",
            MEASURE.as_secs(),
            WARMUP.as_secs()
        );
        let server = Server::start(&["--http-max-sessions", "100000"]).await;
        for clients in [8, 32] {
            let mut rates = [Vec::new(), Vec::new()];
            let mut p99s = [Vec::new(), Vec::new()];
            let mut ratios = Vec::new();
            let mut errors = 0;
            for round in 0..rounds {
                let order = if round % 2 == 0 {
                    [Era::Stateless, Era::Sessions]
                } else {
                    [Era::Sessions, Era::Stateless]
                };
                let mut this = [0.0; 2];
                for era in order {
                    let f = load(&server.url, era, clients).await;
                    let i = usize::from(era == Era::Sessions);
                    rates[i].push(f.rate);
                    p99s[i].push(f.p99.as_secs_f64() * 1e3);
                    this[i] = f.rate;
                    errors += f.errors;
                }
                ratios.push(this[0] / this[1]);
            }
            println!("  {clients} clients:");
            for (i, era) in [Era::Stateless, Era::Sessions].into_iter().enumerate() {
                println!(
                    "    {:<22} {:>8.0} calls/s   p99 {:>6.2} ms   (medians of {rounds})",
                    era.name(),
                    median(rates[i].clone()),
                    median(p99s[i].clone()),
                );
            }
            println!(
                "    stateless / sessions: {:.2} (median of the rounds' ratios); {errors} calls failed",
                median(ratios)
            );
        }
        server.stop().await;

        println!(
            "  memory: the server's RSS warmed, then after each of two waves of {IDLE_CLIENTS} clients that each make one call and leave"
        );
        for era in [Era::Stateless, Era::Sessions] {
            let ([warm, first, second], failed) = memory(era).await;
            println!(
                "    {:<22} {:>6.1} -> {:>6.1} -> {:>6.1} MB: the second wave {:>5.1} KB a client ({failed} calls failed)",
                era.name(),
                warm,
                first,
                second,
                (second - first) * 1024.0 / IDLE_CLIENTS as f64
            );
        }
    });
}
