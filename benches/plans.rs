//! The plan figures, printed with their targets:
//!
//! - 8 independent steps against a source that adds 50 ms to every call: the plan's wall
//!   time against one call's (target under 1.3 × 50 ms), with the same plan run one step
//!   at a time (`max_parallel: 1`, about 400 ms) as the baseline in the same run;
//! - a 3-level fan-out/fan-in plan (a list, 4 player queries, 4 planet queries reading
//!   them, one step reading all four planets) against its critical path (4 calls of
//!   50 ms), and the critical path the run itself measured from its step durations;
//! - reference resolution: the cost per reference of resolving a step's params against a
//!   list of 100 players (target under 10 µs).
//!
//! Run with `cargo bench --bench plans`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use structs_console::Core;
use structs_console::clock::WallClock;
use structs_console::plan::{self, StepView};
use structs_console::source::instrumented::InstrumentedSource;
use structs_console::source::sim::{BlockClock, SimSource, WorldConfig};

const DELAY: Duration = Duration::from_millis(50);
const RUNS: usize = 10;

fn core() -> Core {
    let config = WorldConfig::with_players(100);
    let sim = Arc::new(SimSource::new(
        config,
        BlockClock::paused(config.genesis_height),
    ));
    let source = InstrumentedSource::new(sim).with_delay(DELAY);
    let fixed = "2026-11-21T12:00:00Z".parse().unwrap();
    structs_console::assembly::build_with_clock(Arc::new(source), WallClock::Fixed(fixed))
}

/// The median wall time of `RUNS` runs of `plan`, and the last report.
fn time_plan(rt: &tokio::runtime::Runtime, core: &Core, plan: &Value) -> (Duration, Value) {
    let mut times = Vec::new();
    let mut last = Value::Null;
    for _ in 0..RUNS {
        let start = Instant::now();
        let r = rt
            .block_on(core.call("structs_plan_execute", plan.clone()))
            .expect("the plan runs");
        times.push(start.elapsed());
        assert_eq!(r["success"], true, "{r:#}");
        assert_eq!(r["totals"]["reference_errors"], 0);
        last = r;
    }
    times.sort();
    (times[RUNS / 2], last)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let core = core();

    // One call, for the ratio.
    let mut singles = Vec::new();
    for _ in 0..RUNS {
        let start = Instant::now();
        rt.block_on(core.call("structs_query_player", json!({"player_id": "1-1"})))
            .unwrap();
        singles.push(start.elapsed());
    }
    singles.sort();
    let single = singles[RUNS / 2];

    let steps: Vec<Value> = (1..=8)
        .map(|i| json!({"tool": "structs_query_player", "params": {"player_id": format!("1-{i}")}}))
        .collect();
    let (parallel, _) = time_plan(&rt, &core, &json!({"steps": steps}));
    let (serial, _) = time_plan(&rt, &core, &json!({"steps": steps, "max_parallel": 1}));
    println!(
        "8 independent steps, {} ms added per call (median of {RUNS} runs)",
        ms(DELAY)
    );
    println!("  one call                     {:>7.1} ms", ms(single));
    println!(
        "  the plan, at once            {:>7.1} ms = {:.2} x 50 ms  (target < 1.3 x)",
        ms(parallel),
        ms(parallel) / ms(DELAY)
    );
    println!(
        "  the plan, one at a time      {:>7.1} ms = {:.2} x 50 ms  (baseline)",
        ms(serial),
        ms(serial) / ms(DELAY)
    );

    // 3 levels of fan-out and fan-in after the list.
    let mut steps =
        vec![json!({"id": "list", "tool": "structs_list_players", "params": {"page_size": 4}})];
    for i in 0..4 {
        steps.push(
            json!({"id": format!("p{i}"), "tool": "structs_query_player",
            "params": {"player_id": format!("${{steps.list.data.players[{i}].Player.id}}")}}),
        );
    }
    for i in 0..4 {
        steps.push(
            json!({"id": format!("g{i}"), "tool": "structs_query_planet",
            "params": {"planet_id": format!("${{steps.p{i}.data.player.Player.planetId}}")}}),
        );
    }
    steps.push(json!({"tool": "structs_query_entity", "params": {
        "id": "${steps.g3.data.planet.Planet.id}"},
        "depends_on": ["g0", "g1", "g2"]}));
    let (fan, report) = time_plan(&rt, &core, &json!({"steps": steps}));
    let measured_critical = report["totals"]["critical_path_ms"].as_f64().unwrap();
    let ideal = 4.0 * ms(DELAY);
    println!(
        "3-level fan-out/fan-in: 1 list, 4 + 4 queries, 1 fan-in (10 steps, 4 on the critical path)"
    );
    println!(
        "  wall time                    {:>7.1} ms = {:.2} x the critical path of 4 x 50 ms",
        ms(fan),
        ms(fan) / ideal
    );
    println!(
        "  its own critical path        {:>7.1} ms (sum of the step durations along it)",
        measured_critical
    );
    println!(
        "  steps one after another      {:>7.1} ms (what a sequential executor takes)",
        10.0 * ms(DELAY)
    );

    // Reference resolution, without any source.
    let players: Vec<Value> = (1..=100)
        .map(|i| {
            json!({"Player": {"id": format!("1-{i}"), "planetId": format!("2-{i}")},
                        "gridAttributes": {"ore": "3"}})
        })
        .collect();
    let data = json!({"entity_type": "player", "players": players,
                      "references": {"2-1": {"owner": "1-1"}}});
    let p = plan::parse(&json!({"steps": [
        {"id": "list", "tool": "structs_list_players"},
        {"tool": "structs_query_player", "params": {
            "a": "${step[0].data.players[0].Player.id}",
            "b": "${steps.list.data.players[-1].Player.planetId}",
            "c": "${step[0].data.references[\"2-1\"].owner}",
            "d": "ore ${step[0].data.players[50].gridAttributes.ore} on ${step[0].data.players[50].Player.planetId}",
            "e": "${step[0].data.players.length}",
            "f": {"nested": ["${step[0].success}"]}
        }}
    ]}))
    .unwrap();
    let refs = 7;
    let view = StepView {
        view: Arc::new(json!({"success": true, "data": data, "error": null})),
        full: None,
    };
    let step = p.steps[1].clone();
    let lookup = |_: usize| Some(view.clone());
    for _ in 0..1_000 {
        plan::resolve(&step, &p, &lookup).unwrap();
    }
    let n = 50_000;
    let start = Instant::now();
    for _ in 0..n {
        let (v, subs) = plan::resolve(&step, &p, &lookup).unwrap();
        assert_eq!(subs.len(), refs);
        std::hint::black_box(v);
    }
    let per = start.elapsed().as_secs_f64() * 1e6 / (n * refs) as f64;
    println!("reference resolution");
    println!(
        "  {refs} references per step, {n} resolutions: {per:.2} µs per reference (target < 10 µs)"
    );
}
