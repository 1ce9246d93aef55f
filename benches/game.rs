//! The game's figure: a scripted game of 1,000 actions on the demo world (every player
//! made able to act), applied by the rules, with the world's invariants (no dangling
//! ids, slots and loads that agree, no negative resources) checked after every action.
//!
//! Printed: actions per second through `World::apply` (checks and changes; the
//! proof-of-work search for the actions that need a proof is done between actions and
//! excluded), the same actions replayed through the whole tool path
//! (`structs_action_submit_transaction` on a `Core`: argument validation, message
//! parsing, the write lock, the transaction hash, the event bus), what was applied and
//! refused, and the invariant checks.
//!
//! Run with `cargo bench --bench game`.

use std::sync::Arc;
use std::time::Instant;

use serde_json::json;
use structs_console::chain;
use structs_console::source::sim::script::{play, prepare};
use structs_console::source::sim::{BlockClock, SimSource, World, WorldConfig};

const ACTIONS: u64 = 1_000;

fn main() {
    let config = WorldConfig::demo();
    let mut world = World::generate(config);
    prepare(&mut world);
    let start = world.clone();
    let report = play(&mut world, config.genesis_height, ACTIONS, 2026);

    println!(
        "scripted game: {ACTIONS} actions on the demo world ({} players)",
        config.players
    );
    println!(
        "  rules (World::apply):      {:>10.0} actions/s  ({} applied, {} refused, {:.2} ms in all)",
        report.actions_per_second(),
        report.applied,
        report.attempted - report.applied,
        report.apply_time.as_secs_f64() * 1e3
    );
    println!("  applied by type:           {:?}", report.applied_by_type);
    println!("  refused by (first missing): {:?}", report.refused_by);
    println!(
        "  events: {}; proofs found between actions in {:.1} ms (excluded)",
        report.events,
        report.pow_time.as_secs_f64() * 1e3
    );
    println!(
        "  invariants checked after every action: {} checks, {:.2} ms in all, {} violations",
        report.attempted,
        report.check_time.as_secs_f64() * 1e3,
        report.violations.len()
    );
    for v in report.violations.iter().take(5) {
        println!("    {v}");
    }

    // The same actions through the tool path, on a paused clock stepped to each height.
    let source = Arc::new(SimSource::new(
        config,
        BlockClock::paused(config.genesis_height),
    ));
    source.with_world_mut(|w| *w = start.clone());
    let core = structs_console::assembly::build(source.clone());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut applied = 0u64;
    let mut elapsed = std::time::Duration::ZERO;
    for (signed, height) in &report.log {
        let now = source.clock().height();
        if *height > now {
            source.clock().step(height - now);
        }
        let creator = signed.signer.creator.clone().unwrap_or_default();
        let tx = json!({"body": {"messages": [chain::to_json(&signed.msg, &creator)]}});
        let t = Instant::now();
        let r = rt.block_on(core.call_json(
            "structs_action_submit_transaction",
            json!({"transaction": tx}),
        ));
        elapsed += t.elapsed();
        if r.is_ok() {
            applied += 1;
        }
    }
    println!(
        "  tool path (submit_transaction): {:>6.0} actions/s  ({applied} applied: {})",
        report.log.len() as f64 / elapsed.as_secs_f64(),
        if applied == report.applied {
            "the same as the rules"
        } else {
            "DIFFERENT from the rules"
        }
    );
    let same = source.with_world(|w| format!("{:?}", w.players) == format!("{:?}", world.players));
    println!("  final player state identical on both paths: {same}");
}
