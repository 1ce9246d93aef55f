//! The call pipeline's own cost: a fixed number of tool calls made on the core directly
//! (no transport), one at a time, cycling the calls of `benches/mcp_http.rs` (a player
//! query, a list page, a planet query) on the demo world. Prints calls per second and
//! microseconds per call.
//!
//! The work is fixed (`PIPELINE_CALLS`, default 30,000), so the figure can also be
//! taken as instructions, which do not move with the machine's load:
//!
//! ```sh
//! PIPELINE_CALLS=3000 valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.out \
//!     target/release/deps/pipeline-*  # then divide the total by the calls
//! ```
//!
//! Run with `cargo bench --bench pipeline`.

use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};
use structs_console::source::sim::{BlockClock, SimSource, WorldConfig};

fn call_for(n: usize, players: usize) -> (&'static str, Value) {
    let i = (n * 104_729) % players + 1;
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

fn main() {
    let calls: usize = std::env::var("PIPELINE_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30_000);
    let config = WorldConfig::with_players(WorldConfig::DEMO_PLAYERS);
    let players = WorldConfig::DEMO_PLAYERS;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let core = rt.block_on(async {
        structs_console::assembly::build(Arc::new(SimSource::new(
            config,
            BlockClock::paused(config.genesis_height),
        )))
    });
    let (took, errors) = rt.block_on(async {
        // One warm-up pass of each call, so first-use work is not counted.
        for n in 0..3 {
            let (tool, args) = call_for(n, players);
            core.call(tool, args).await.expect("a warm-up call");
        }
        let start = Instant::now();
        let mut errors = 0;
        for n in 0..calls {
            let (tool, args) = call_for(n, players);
            if core.call(tool, args).await.is_err() {
                errors += 1;
            }
        }
        (start.elapsed(), errors)
    });
    let per_call = took.as_secs_f64() * 1e6 / calls as f64;
    println!(
        "call pipeline, demo world, one caller: {calls} calls in {:.2} s, {:.0} calls/s, {per_call:.1} µs per call, {errors} errors",
        took.as_secs_f64(),
        calls as f64 / took.as_secs_f64(),
    );
    assert_eq!(errors, 0, "every call answers");
}
