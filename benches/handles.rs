//! The result-handle figures, printed with their targets:
//!
//! - a list of 50 players with full data: its bytes at `raw`, `compact` and `summary`,
//!   and how much smaller the last two are than raw (targets: at least 70 % and 90 %);
//! - handle store `put` and `get` latency, p50 and p99, for the in-memory store (target
//!   p50 < 50 µs) and for Redis on loopback (target p50 < 1 ms).
//!
//! Run with `cargo bench --bench handles`. The Redis figures need `redis-server`
//! installed; without it they are skipped with a note.

#[allow(dead_code)] // the benchmark uses only part of the test helpers
#[path = "../tests/support/daemon.rs"]
mod daemon;
#[allow(dead_code)]
#[path = "../tests/support/redis.rs"]
mod redis_server;

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use structs_console::Core;
use structs_console::clock::WallClock;
use structs_console::handles::shape::{Selection, Verbosity, shape};
use structs_console::source::sim::{BlockClock, SimSource, WorldConfig};
use structs_console::store::redis::RedisStore;
use structs_console::store::{HandleMeta, HandleStore, MemoryStore};

/// The fixed wall clock of every core and store call, so handles never expire mid-run.
const NOW: &str = "2026-11-21T12:00:00Z";
/// Calls made before timing starts (connections, allocator, caches).
const WARM_UP: usize = 200;
/// Timed calls per figure, each on its own handle.
const RUNS: usize = 2_000;

fn now() -> DateTime<Utc> {
    NOW.parse().unwrap()
}

fn sim(players: usize) -> SimSource {
    let config = WorldConfig::with_players(players);
    SimSource::new(config, BlockClock::paused(config.genesis_height))
}

/// Serialized JSON size, as the core counts it against the 25,600-byte limit.
fn bytes(v: &Value) -> usize {
    serde_json::to_vec(v).unwrap().len()
}

/// A record's fields as shaping counts them: its leaves, an array counting as one.
fn fields(v: &Value) -> usize {
    match v {
        Value::Object(o) => o.values().map(fields).sum(),
        _ => 1,
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn verdict(ok: bool) -> &'static str {
    if ok { "met" } else { "NOT met" }
}

/// What the core answers an agent that lists 50 players at `verbosity`.
async fn list_players(core: &Core, verbosity: Verbosity) -> Value {
    core.call_json(
        "structs_list_players",
        json!({"page_size": 50, "verbosity": verbosity.as_str()}),
    )
    .await
    .expect("structs_list_players")
}

/// Section 1: the sizes. Returns the full raw list, which section 2 stores.
async fn sizes() -> Value {
    println!("1. A list of 50 players with full data (200-player world, page_size 50)");
    let core = structs_console::assembly::builder(Arc::new(sim(200)))
        .clock(WallClock::Fixed(now()))
        .handle_store(Arc::new(MemoryStore::default()))
        .build()
        .unwrap();

    // The raw list is over the 25,600-byte limit, so the agent gets an envelope and the
    // store keeps the full, unshaped result under its handle: that is the raw list.
    let raw_answer = list_players(&core, Verbosity::Raw).await;
    let full = if raw_answer["status"] == "partial" {
        let handle = raw_answer["result_handle"].as_str().expect("result_handle");
        let stored = core.handle_store().get(handle, now()).await.expect("get");
        (*stored.expect("a live handle").data).clone()
    } else {
        raw_answer.clone()
    };
    assert_eq!(full["players"].as_array().map(Vec::len), Some(50));

    // Each level is measured by shaping that same raw list with the function the core
    // uses, so the three figures are the same 50 records and nothing else: no envelope,
    // no summary. Where the core answers directly, its answer must match ours.
    println!(
        "  measured: serialized JSON of the \"players\" array, the 50 player records with their\n  \
         entity wrappers, shaped from the full stored result by handles::shape::shape"
    );
    // Verbosity caps the fields per record, so the savings depend on how many it has.
    println!(
        "  a raw player record has {} fields; compact keeps at most 15, summary at most 5",
        fields(&full["players"][0])
    );
    let mut raw_bytes = 0;
    let mut received = Vec::new();
    for (verbosity, target) in [
        (Verbosity::Raw, None),
        (Verbosity::Compact, Some(70.0)),
        (Verbosity::Summary, Some(90.0)),
    ] {
        let mut shaped = full.clone();
        shape(&mut shaped, &Selection::Verbosity(verbosity));
        let answer = list_players(&core, verbosity).await;
        if answer["status"] != "partial" {
            assert_eq!(
                answer["players"], shaped["players"],
                "core and shape differ"
            );
        }
        let n = bytes(&shaped["players"]);
        match target {
            None => {
                raw_bytes = n;
                println!("  {:<8} {n:>7} bytes", verbosity.as_str());
            }
            Some(target) => {
                let smaller = 100.0 * (1.0 - n as f64 / raw_bytes as f64);
                println!(
                    "  {:<8} {n:>7} bytes   {smaller:.1} % smaller than raw   target >= {target:.0} %   {}",
                    verbosity.as_str(),
                    verdict(smaller >= target)
                );
            }
        }
        received.push((verbosity, answer));
    }

    // For information: the whole answer an agent receives for the same call.
    println!(
        "  what an agent receives (the whole answer: direct, or an envelope over 25,600 bytes)"
    );
    for (verbosity, answer) in &received {
        let what = if answer["status"] == "partial" {
            format!(
                "envelope; the stored result behind {} is {} bytes",
                answer["result_handle"].as_str().unwrap_or("?"),
                answer["metadata"]["size_bytes"]
            )
        } else {
            "direct result (players, pagination, timestamp)".to_string()
        };
        println!(
            "  {:<8} {:>7} bytes   {what}",
            verbosity.as_str(),
            bytes(answer)
        );
    }
    full
}

/// Times `RUNS` puts of `data` into `store`, then `RUNS` gets of it through `reader`,
/// each on its own handle, after `WARM_UP` of each; then, when `repeat` is set, `RUNS`
/// gets of one handle through `store` (as when an agent fetches a result's pages one
/// after another). Prints p50 and p99, with p50 against `target`.
async fn store_latency(
    store: &dyn HandleStore,
    reader: &dyn HandleStore,
    repeat: bool,
    data: &Arc<Value>,
    target: Duration,
) {
    let t0 = now();
    let size = bytes(data);
    let handles: Vec<String> = (0..WARM_UP + RUNS)
        .map(|i| format!("structs:player:{}:{i:08x}", t0.timestamp()))
        .collect();

    let mut puts = Vec::with_capacity(RUNS);
    for (i, handle) in handles.iter().enumerate() {
        // The metadata is built before the clock starts: only the store's work is timed.
        let meta = HandleMeta {
            handle: handle.clone(),
            tool: "structs_list_players".into(),
            size_bytes: size,
            rows: 50,
            created: t0,
            expires: t0 + chrono::Duration::hours(1),
            hits: 0,
            owner: None,
        };
        let t = Instant::now();
        store.put(meta, Arc::clone(data)).await.expect("put");
        if i >= WARM_UP {
            puts.push(t.elapsed());
        }
    }

    let mut gets = Vec::with_capacity(RUNS);
    for (i, handle) in handles.iter().enumerate() {
        let t = Instant::now();
        let stored = reader.get(handle, t0).await.expect("get");
        let elapsed = t.elapsed();
        let stored = stored.expect("a live handle");
        if i == 0 {
            assert_eq!(*stored.data, **data, "the store gave back other data");
        }
        if i >= WARM_UP {
            gets.push(elapsed);
        }
    }

    let mut rows = vec![("put", puts), ("get", gets)];
    if repeat {
        let handle = &handles[0];
        let mut again = Vec::with_capacity(RUNS);
        for _ in 0..RUNS {
            let t = Instant::now();
            store.get(handle, t0).await.expect("get").expect("live");
            again.push(t.elapsed());
        }
        rows[1].0 = "get, another server (transfer and parse)";
        rows.push(("get again, same server (parsed copy kept)", again));
    }
    for (op, mut times) in rows {
        times.sort();
        let p50 = percentile(&times, 0.5);
        println!(
            "  {:<6} {op}\n           p50 {:>8.1} µs   p99 {:>8.1} µs   target p50 < {:.0} µs   {}",
            store.name(),
            us(p50),
            us(percentile(&times, 0.99)),
            us(target),
            verdict(p50 < target)
        );
    }
}

/// Section 2: the stores, holding the full raw list from section 1.
async fn stores(full: Value) {
    let data = Arc::new(full);
    println!(
        "\n2. Handle store put and get, the full raw list above as the value ({} bytes as JSON);\n   \
         {RUNS} distinct handles timed after {WARM_UP} warm-up calls",
        bytes(&data)
    );
    println!("  in memory: put inserts the shared value, get returns it (no copy of the data)");
    let memory = MemoryStore::default();
    store_latency(&memory, &memory, false, &data, Duration::from_micros(50)).await;

    println!(
        "  Redis on loopback: put serializes the JSON and writes it with its metadata in one\n  \
         script; get runs the read script (counting a hit) and reads the JSON beside it in\n  \
         one round trip, then parses it; a server keeps parsed copies of what it stored or\n  \
         read, so only the metadata travels when it reads a handle again"
    );
    let Some(server) = redis_server::RedisServer::start() else {
        println!("  Redis figures skipped: redis-server is not installed");
        return;
    };
    let redis = RedisStore::connect(&server.url(), "structs-console-bench")
        .await
        .expect("connect to the local redis-server");
    // A second server on the same Redis reads what the first stored: nothing cached.
    let other = RedisStore::connect(&server.url(), "structs-console-bench")
        .await
        .expect("connect to the local redis-server");
    println!("  ({})", redis.location());
    store_latency(&redis, &other, true, &data, Duration::from_millis(1)).await;
}

fn main() {
    println!("structs-console handles benchmark\n");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let full = sizes().await;
        stores(full).await;
    });
}
