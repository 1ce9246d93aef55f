//! MCP over streamable HTTP on loopback: tool calls per second and latency percentiles
//! with 8 concurrent clients (each its own MCP session) against the demo world, and,
//! in the same run, the same calls made on the core directly by 8 tasks (no transport)
//! as the baseline.
//!
//! The server runs in this process on its own runtime; the clients on another. Both
//! share the machine's cores, as a local agent and its server do.
//!
//! Run with `cargo bench --bench mcp_http`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use structs_console::mcp::server::McpServer;
use structs_console::mcp::server::http::HttpServer;
use structs_console::mcp::wire::http::HttpOptions;
use structs_console::source::sim::{BlockClock, SimSource, WorldConfig};

const CLIENTS: usize = 8;
const WARMUP: Duration = Duration::from_secs(1);
const MEASURE: Duration = Duration::from_secs(6);

/// The calls a client cycles through: a query with its depth-1 references, a list page,
/// a planet query.
fn call_for(client: usize, n: usize, players: usize) -> (&'static str, Value) {
    let i = (client * 7919 + n * 104_729) % players + 1;
    match n % 3 {
        0 => (
            "structs_query_player",
            json!({"player_id": format!("1-{i}")}),
        ),
        1 => ("structs_list_players", json!({"page_size": 10})),
        _ => (
            "structs_query_planet",
            json!({"planet_id": format!("2-{i}")}),
        ),
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

struct Figures {
    calls: usize,
    errors: usize,
    took: Duration,
    latencies: Vec<Duration>,
}

impl Figures {
    fn print(&self, label: &str) -> f64 {
        let rate = self.calls as f64 / self.took.as_secs_f64();
        println!(
            "  {label:<28} {:>8.0} calls/s   p50 {:>7.2} ms   p90 {:>7.2} ms   p99 {:>7.2} ms   max {:>7.2} ms   ({} calls, {} errors)",
            rate,
            ms(percentile(&self.latencies, 0.50)),
            ms(percentile(&self.latencies, 0.90)),
            ms(percentile(&self.latencies, 0.99)),
            ms(self.latencies.last().copied().unwrap_or_default()),
            self.calls,
            self.errors,
        );
        rate
    }
}

/// Runs `one(client, n)` on `CLIENTS` tasks for the warm-up and then the measured time.
async fn drive<F, Fut>(one: F) -> Figures
where
    F: Fn(usize, usize) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = bool> + Send,
{
    let one = Arc::new(one);
    let start = Instant::now();
    let measure_from = start + WARMUP;
    let end = measure_from + MEASURE;
    let mut tasks = Vec::new();
    for client in 0..CLIENTS {
        let one = one.clone();
        tasks.push(tokio::spawn(async move {
            let (mut lat, mut errors, mut n) = (Vec::new(), 0usize, 0usize);
            loop {
                let t = Instant::now();
                if t >= end {
                    break;
                }
                let ok = one(client, n).await;
                n += 1;
                if t >= measure_from {
                    lat.push(t.elapsed());
                    if !ok {
                        errors += 1;
                    }
                }
            }
            (lat, errors)
        }));
    }
    let mut latencies = Vec::new();
    let mut errors = 0;
    for t in tasks {
        let (l, e) = t.await.unwrap();
        latencies.extend(l);
        errors += e;
    }
    latencies.sort();
    Figures {
        calls: latencies.len(),
        errors,
        took: MEASURE,
        latencies,
    }
}

fn main() {
    let config = WorldConfig::with_players(WorldConfig::DEMO_PLAYERS);
    let players = WorldConfig::DEMO_PLAYERS;
    let server_rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let client_rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let core = server_rt.block_on(async {
        structs_console::assembly::build(Arc::new(SimSource::new(
            config,
            BlockClock::paused(config.genesis_height),
        )))
    });
    let options = HttpOptions {
        listen: "127.0.0.1:0".into(),
        token: Some("bench-token-bench-token".into()),
        allow_remote: false,
        ..Default::default()
    };
    let http = server_rt
        .block_on(HttpServer::start(
            McpServer::new(
                core.clone(),
                Arc::new(structs_console::docs::Docs::embedded()),
            ),
            &options,
        ))
        .unwrap();
    let url = http.url();
    println!(
        "MCP over streamable HTTP on loopback, {CLIENTS} concurrent clients, demo world ({players} players), \
         bearer token on, {}s measured after {}s warm-up",
        MEASURE.as_secs(),
        WARMUP.as_secs()
    );
    println!(
        "  calls cycle: structs_query_player (depth-1 references), structs_list_players (10, primary references), structs_query_planet"
    );

    // The baseline: the same calls on the core, no transport.
    let direct = {
        let core = core.clone();
        client_rt.block_on(drive(move |client, n| {
            let core = core.clone();
            async move {
                let (tool, args) = call_for(client, n, players);
                core.call(tool, args).await.is_ok()
            }
        }))
    };

    let over_http = client_rt.block_on(async {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut clients = Vec::new();
        for _ in 0..CLIENTS {
            let config = StreamableHttpClientTransportConfig::with_uri(url.clone())
                .auth_header("bench-token-bench-token");
            let transport =
                StreamableHttpClientTransport::with_client(reqwest::Client::new(), config);
            clients.push(Arc::new(().serve(transport).await.expect("connect")));
        }
        let clients = Arc::new(clients);
        drive({
            let clients = clients.clone();
            move |client, n| {
                let c = clients[client].clone();
                async move {
                    let (tool, args) = call_for(client, n, players);
                    let Value::Object(args) = args else {
                        return false;
                    };
                    match c
                        .call_tool(CallToolRequestParams::new(tool).with_arguments(args))
                        .await
                    {
                        Ok(r) => r.is_error != Some(true),
                        Err(_) => false,
                    }
                }
            }
        })
        .await
    });

    let base = direct.print("core directly (baseline)");
    let rate = over_http.print("MCP over HTTP");
    println!(
        "  HTTP reaches {:.0} % of the direct rate; p99 over HTTP {:.2} ms",
        rate / base * 100.0,
        ms(percentile(&over_http.latencies, 0.99))
    );
    server_rt.block_on(http.stop());
}
