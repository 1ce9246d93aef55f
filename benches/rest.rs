//! The REST source's figures, against `serve-rest` over real HTTP on loopback:
//!
//! 1. with 20 ms of latency added to every request: a player query with its depth-1
//!    references, in round trips (wall time / 20 ms), against the plain query and the
//!    same references fetched one after another, all in this run;
//! 2. the scripted agent of `benches/support/agent_tasks.rs` (12 tasks, with and without
//!    references) on the REST source: its entity cache's hit rate and the requests the
//!    node served;
//! 3. the client-side rate limit under a burst of 1,000 calls: alone, and through the
//!    source against the node.
//!
//! Run with `cargo bench --bench rest`.

// Only the twelve tasks run here; the lean briefings and the scan are the references
// bench's.
#[allow(dead_code)]
#[path = "support/agent_tasks.rs"]
mod agent_tasks;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use structs_console::entity::{EntityId, EntityKind};
use structs_console::rest::server::RestServer;
use structs_console::source::GameSource;
use structs_console::source::rest::{RateLimiter, RestConfig, RestSource};
use structs_console::source::sim::{BlockClock, SimSource, WorldConfig};

const LATENCY: Duration = Duration::from_millis(20);

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn verdict(ok: bool) -> &'static str {
    if ok { "PASS" } else { "FAIL" }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn sim(players: usize) -> Arc<SimSource> {
    let config = WorldConfig::with_players(players);
    Arc::new(SimSource::new(
        config,
        BlockClock::paused(config.genesis_height),
    ))
}

fn config(url: &str, rate: Option<f64>) -> RestConfig {
    let mut c = RestConfig::new(url);
    c.rate_limit = rate;
    // The height is read once at connect; a poller would add requests to the counts.
    c.height_poll = Duration::from_secs(3600);
    c
}

async fn round_trips() {
    println!("1. A depth-1 reference query against serve-rest with 20 ms added to every request");
    let server = RestServer::start("127.0.0.1:0", sim(WorldConfig::DEMO_PLAYERS))
        .await
        .unwrap();
    server.faults.set_latency(LATENCY);
    let rest = RestSource::connect(config(&server.url(), None))
        .await
        .unwrap();
    let core = structs_console::assembly::build(rest.clone());
    let runs = 15;
    let mut plain = Vec::new();
    let mut with = Vec::new();
    let mut sequential = Vec::new();
    let (mut requests_with, mut refs) = (0, 0);
    for _ in 0..runs {
        rest.clear_cache();
        let t = Instant::now();
        core.call("structs_query_entity", json!({"id": "1-1"}))
            .await
            .unwrap();
        plain.push(t.elapsed());

        rest.clear_cache();
        core.reference_cache().clear();
        let before = server.faults.requests();
        let t = Instant::now();
        let v = core
            .call(
                "structs_query_entity",
                json!({"id": "1-1", "include_references": true, "reference_depth": 1}),
            )
            .await
            .unwrap();
        with.push(t.elapsed());
        requests_with = server.faults.requests() - before;
        let ids: Vec<EntityId> = v["references"]
            .as_object()
            .unwrap()
            .keys()
            .map(|k| EntityId::parse(k).unwrap())
            .collect();
        refs = ids.len();

        // The baseline: the entity, then each reference one after another.
        rest.clear_cache();
        let t = Instant::now();
        rest.get(EntityId::parse("1-1").unwrap()).await.unwrap();
        for id in ids {
            rest.get(id).await.unwrap();
        }
        sequential.push(t.elapsed());
    }
    let trips = |d: Duration| d.as_secs_f64() / LATENCY.as_secs_f64();
    let (p, w, s) = (median(plain), median(with), median(sequential));
    println!(
        "  plain query (1 request)                       median {:>6.1} ms = {:.2} round trips",
        ms(p),
        trips(p)
    );
    println!(
        "  with references ({refs} refs, {requests_with} requests)            median {:>6.1} ms = {:.2} round trips   target about 2   {}",
        ms(w),
        trips(w),
        verdict(trips(w) <= 2.5)
    );
    println!(
        "  the same fetched one after another            median {:>6.1} ms = {:.2} round trips   ({} requests)",
        ms(s),
        trips(s),
        refs + 1
    );
}

async fn agent_session() {
    println!("\n2. The scripted agent (12 tasks) on the REST source, 20 ms per request");
    let server = RestServer::start("127.0.0.1:0", sim(WorldConfig::DEMO_PLAYERS))
        .await
        .unwrap();
    server.faults.set_latency(LATENCY);
    for style in agent_tasks::Style::ALL {
        let rest = RestSource::connect(config(&server.url(), None))
            .await
            .unwrap();
        let core = structs_console::assembly::build(rest.clone());
        let mut agent = agent_tasks::Agent::new(core, style);
        let before = server.faults.requests();
        let t = Instant::now();
        for i in 0..agent_tasks::TASKS.len() {
            agent.forget();
            agent_tasks::run(i, &mut agent).await;
        }
        let took = t.elapsed();
        let (hits, reads) = rest.cache_stats();
        println!(
            "  {:<10}  {:>3} tool calls  {:>4} entity reads  {:>4} from the cache = {:>5.1} % hit rate  {:>4} requests to the node  {:>6.0} ms",
            style.name(),
            agent.calls,
            reads,
            hits,
            100.0 * hits as f64 / reads.max(1) as f64,
            server.faults.requests() - before,
            ms(took)
        );
    }
}

async fn rate_limit() {
    println!("\n3. The client-side rate limit under a burst of 1,000 calls");
    // Alone: 1,000 tasks ask for a slot at once.
    let rate = 500.0;
    let limiter = Arc::new(RateLimiter::new(Some(rate), 1));
    let mut tasks = Vec::new();
    for _ in 0..1000 {
        let l = limiter.clone();
        tasks.push(tokio::spawn(async move {
            l.acquire().await;
            Instant::now()
        }));
    }
    let mut times = Vec::new();
    for t in tasks {
        times.push(t.await.unwrap());
    }
    times.sort();
    let span = times[999] - times[0];
    let got = 999.0 / span.as_secs_f64();
    let err = 100.0 * (got / rate - 1.0);
    println!(
        "  limiter alone at {rate:.0}/s: {got:>7.1} requests/s over {:.0} ms  ({err:+.2} %)   target within 5 %   {}",
        ms(span),
        verdict(err.abs() <= 5.0)
    );

    // Through the source against the node: 1,000 reads of distinct structs at once.
    let world = sim(400);
    let count = world.with_world(|w| w.count(EntityKind::Struct));
    assert!(count >= 1000, "{count} structs");
    let server = RestServer::start("127.0.0.1:0", world).await.unwrap();
    let rate = 200.0;
    let rest = RestSource::connect(config(&server.url(), Some(rate)))
        .await
        .unwrap();
    // The connect's own request took the first slot; start after it.
    tokio::time::sleep(Duration::from_millis(10)).await;
    let before = server.faults.requests();
    let mut tasks = Vec::new();
    for i in 1..=1000u64 {
        let r = rest.clone();
        tasks.push(tokio::spawn(async move {
            r.get(EntityId::new(EntityKind::Struct, i)).await.unwrap();
            Instant::now()
        }));
    }
    let mut done = Vec::new();
    for t in tasks {
        done.push(t.await.unwrap());
    }
    done.sort();
    let sent = server.faults.requests() - before;
    let span = done[999] - done[0];
    let got = 999.0 / span.as_secs_f64();
    let err = 100.0 * (got / rate - 1.0);
    println!(
        "  through the REST source at {rate:.0}/s: {sent} requests, {got:>6.1} answered/s over {:.0} ms  ({err:+.2} %)   target within 5 %   {}",
        ms(span),
        verdict(err.abs() <= 5.0)
    );
}

fn main() {
    println!("structs-console REST source benchmark\n");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        round_trips().await;
        agent_session().await;
        rate_limit().await;
    });
}
