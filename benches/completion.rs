//! `completion/complete` of entity ids on a 100,000-player world: latency percentiles
//! of whole MCP requests (rmcp's client talking to the server over an in-memory pipe,
//! so the figure includes JSON-RPC framing but no sockets), and in the same run the
//! source's prefix lookup alone, and, as the baseline, the same matches found the
//! general way: a filtered list page, which walks and renders entities.
//!
//! Run with `cargo bench --bench completion`. The goal is a p50 under 5 ms for an id
//! prefix.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use structs_console::entity::EntityKind;
use structs_console::mcp::server::McpServer;
use structs_console::source::sim::{BlockClock, SimSource, WorldConfig};
use structs_console::source::{GameSource, ListQuery};

const PLAYERS: usize = 100_000;
const ROUNDS: usize = 2_000;

/// Prefixes an operator types on the way to an id: short ones match tens of thousands.
const PREFIXES: [&str; 8] = [
    "1-", "1-1", "1-12", "1-123", "1-1234", "1-99999", "1-5", "1-100000",
];

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1000.0
}

fn report(name: &str, mut times: Vec<Duration>) -> f64 {
    times.sort();
    let p50 = percentile(&times, 0.50);
    println!(
        "  {name:<34} p50 {:>8.3} ms   p90 {:>8.3} ms   p99 {:>8.3} ms   ({} requests)",
        p50,
        percentile(&times, 0.90),
        percentile(&times, 0.99),
        times.len()
    );
    p50
}

fn main() {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let config = WorldConfig::with_players(PLAYERS);
    let source = Arc::new(SimSource::new(
        config,
        BlockClock::paused(config.genesis_height),
    ));
    println!(
        "completion/complete of player ids, {} ({} rounds over {} prefixes)\n",
        source.info().description,
        ROUNDS,
        PREFIXES.len()
    );
    let core = structs_console::assembly::build(source.clone());
    let docs = Arc::new(structs_console::docs::Docs::embedded());
    let server = McpServer::new(core, docs);

    let (mcp_p50, lookup_p50, list_p50) = runtime.block_on(async {
        let (client_io, server_io) = tokio::io::duplex(1 << 20);
        tokio::spawn(async move {
            let running = server.serve(server_io).await.expect("serve");
            let _ = running.waiting().await;
        });
        let client = ().serve(client_io).await.expect("initialize");
        let peer = client.peer().clone();

        let mut mcp = Vec::with_capacity(ROUNDS);
        let mut checked = 0u64;
        for n in 0..ROUNDS {
            let prefix = PREFIXES[n % PREFIXES.len()];
            let started = Instant::now();
            let c = peer
                .complete_prompt_argument("brief", "entity_id", prefix, None)
                .await
                .expect("completion/complete");
            mcp.push(started.elapsed());
            assert!(c.values.iter().all(|v| v.starts_with(prefix)));
            checked += u64::from(c.total.unwrap_or(0));
        }

        let mut lookup = Vec::with_capacity(ROUNDS);
        for n in 0..ROUNDS {
            let prefix = PREFIXES[n % PREFIXES.len()].to_string();
            let started = Instant::now();
            let m = source
                .ids_with_prefix(EntityKind::Player, prefix, 100)
                .await
                .expect("lookup");
            lookup.push(started.elapsed());
            checked += m.total;
        }

        // The baseline: a filtered list page of 100, fewer rounds (it is slow).
        let mut list = Vec::new();
        for n in 0..(ROUNDS / 20) {
            let mut q = ListQuery::new(EntityKind::Player, 100);
            q.id_prefix = Some(PREFIXES[n % PREFIXES.len()].to_string());
            let started = Instant::now();
            let page = source.list(q).await.expect("list");
            list.push(started.elapsed());
            checked += page.total;
        }
        std::hint::black_box(checked);
        client.cancel().await.ok();
        (
            report("MCP completion/complete", mcp),
            report("source prefix lookup (no transport)", lookup),
            report("baseline: filtered list page", list),
        )
    });
    println!();
    println!(
        "  goal: p50 under 5 ms for an id prefix over MCP: {:.3} ms, {}",
        mcp_p50,
        if mcp_p50 < 5.0 { "met" } else { "NOT met" }
    );
    println!(
        "  the lookup is {:.0}x faster than the filtered list page at p50",
        list_p50 / lookup_p50.max(1e-9)
    );
}
