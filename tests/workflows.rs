//! Workflows end to end on the sim source: each shipped workflow validates with its
//! example inputs, runs in the background, is followed with the monitor tool (the
//! proof-of-work steps showing their progress while they wait and hash), and leaves
//! the world changed as it says.

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use structs_console::Core;
use structs_console::plan::{self, workflow};
use structs_console::source::sim::{SimSource, WorldConfig};
use support::calls::ok;
use support::sim::{make_ready, paused_core};

fn setup() -> (Core, Arc<SimSource>) {
    paused_core(WorldConfig::demo())
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Polls the monitor until `until` holds for its answer (or 60 s pass).
async fn watch(core: &Core, id: &str, until: impl Fn(&Value) -> bool) -> Value {
    let start = Instant::now();
    loop {
        let m = ok(core, "structs_workflow_monitor", json!({"workflow_id": id})).await;
        if until(&m) {
            return m;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "gave up: {m:#}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn done(m: &Value) -> bool {
    m["status"] != "running"
}

fn step_status<'a>(m: &'a Value, id: &str) -> &'a str {
    m["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id)
        .and_then(|s| s["status"].as_str())
        .unwrap_or("?")
}

fn report_step<'a>(m: &'a Value, id: &str) -> &'a Value {
    m["report"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id)
        .unwrap()
}

#[test]
fn every_shipped_workflow_validates_with_its_example_inputs() {
    let (core, _) = setup();
    let all = workflow::parse_all().unwrap();
    let names: Vec<&str> = all.iter().map(|w| w.name.as_str()).collect();
    for name in [
        "mine-refine-convert",
        "planet-setup",
        "build-mining-operation",
        "query-and-monitor-planet",
    ] {
        assert!(names.contains(&name), "{name} is not shipped");
    }
    for w in &all {
        assert!(!w.description.is_empty());
        let plan = w.plan_json(&w.example_inputs()).unwrap();
        if let Err(p) = plan::validate(&core, &plan) {
            panic!("{} does not validate: {p:#?}", w.name);
        }
    }
    let listed = rt().block_on(ok(&core, "structs_workflow_list", json!({})));
    assert_eq!(listed["workflows"].as_array().unwrap().len(), all.len());
    let bmo = listed["workflows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["name"] == "build-mining-operation")
        .unwrap();
    assert_eq!(bmo["uses_proof_of_work"], true);
    assert_eq!(bmo["inputs"]["player_id"]["required"], true);
    assert_eq!(bmo["inputs"]["start_difficulty"]["default"], 8);
}

/// No two steps of a shipped workflow that change something (a tool whose annotations
/// do not say read-only) can run at the same time: one waits for the other, directly
/// or through other steps (`depends_on`, a `${steps...}` reference, `parallel: false`).
/// Two changes at once race each other (a CI flake once: the two subscriptions of
/// query-and-monitor-planet).
#[test]
fn no_two_changing_steps_of_a_shipped_workflow_can_run_at_once() {
    let (core, _) = setup();
    for w in workflow::parse_all().unwrap() {
        let plan = plan::validate(&core, &w.plan_json(&w.example_inputs()).unwrap())
            .unwrap_or_else(|p| panic!("{} does not validate: {p:#?}", w.name));
        // Every step each one waits to end before it starts, however far back.
        let waits: Vec<std::collections::BTreeSet<usize>> = plan
            .steps
            .iter()
            .map(|s| {
                let mut seen = std::collections::BTreeSet::new();
                let mut todo = vec![s.index];
                while let Some(i) = todo.pop() {
                    for &before in plan.steps[i].needs().union(&plan.after[i]) {
                        if seen.insert(before) {
                            todo.push(before);
                        }
                    }
                }
                seen
            })
            .collect();
        let changing: Vec<&plan::Step> = plan
            .steps
            .iter()
            .filter(|s| core.tool_spec(&s.tool).unwrap().hints.read_only != Some(true))
            .collect();
        for (k, a) in changing.iter().enumerate() {
            for b in &changing[k + 1..] {
                assert!(
                    waits[a.index].contains(&b.index) || waits[b.index].contains(&a.index),
                    "{}: steps {} ({}) and {} ({}) both change things and may run at once; \
                     make one depend on the other",
                    w.name,
                    a.label(),
                    a.tool,
                    b.label(),
                    b.tool
                );
            }
        }
    }
}

/// The examples a workflow ships are what a new user runs first: each must succeed, as
/// given, on the demo world as it starts (no world edited to suit it). A proof that
/// waits for its difficulty to fall gets the blocks it waits for.
#[test]
fn every_shipped_workflow_succeeds_with_its_example_inputs() {
    for w in workflow::parse_all().unwrap() {
        let (core, src) = setup();
        rt().block_on(async {
            let started = ok(
                &core,
                "structs_workflow_execute",
                json!({"workflow": w.name, "inputs": w.example_inputs()}),
            )
            .await;
            let id = started["workflow_id"].as_str().unwrap().to_string();
            let start = Instant::now();
            let m = loop {
                let m = ok(
                    &core,
                    "structs_workflow_monitor",
                    json!({"workflow_id": id}),
                )
                .await;
                if done(&m) {
                    break m;
                }
                let waiting = m["current"].as_array().into_iter().flatten().any(|c| {
                    c["progress"]
                        .as_str()
                        .is_some_and(|p| p.contains("waiting for block"))
                });
                if waiting {
                    src.clock().step(1_000);
                }
                assert!(
                    start.elapsed() < Duration::from_secs(120),
                    "{} gave up: {m:#}",
                    w.name
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            };
            assert_eq!(
                m["status"], "succeeded",
                "{} with its example inputs: {m:#}",
                w.name
            );
            assert_eq!(m["report"]["totals"]["reference_errors"], 0, "{}", w.name);
        });
    }
}

#[test]
fn inputs_are_checked_before_anything_starts() {
    let (core, _) = setup();
    let rt = rt();
    let e = rt
        .block_on(core.call_json(
            "structs_workflow_execute",
            json!({"workflow": "planet-setup", "inputs": {}}),
        ))
        .unwrap_err();
    assert_eq!(e["error"]["code"], "VALIDATION_MISSING_FIELD");
    assert_eq!(e["error"]["details"]["field"], "inputs.player_id");
    let e = rt
        .block_on(core.call_json(
            "structs_workflow_execute",
            json!({"workflow": "planet-setup", "inputs": {"player_id": "1-1", "planet": "2-1"}}),
        ))
        .unwrap_err();
    assert_eq!(e["error"]["code"], "VALIDATION_UNKNOWN_FIELD");
    let e = rt
        .block_on(core.call_json(
            "structs_workflow_execute",
            json!({"workflow": "planet-teardown"}),
        ))
        .unwrap_err();
    assert_eq!(e["error"]["details"]["field"], "workflow");
    let e = rt
        .block_on(core.call_json("structs_workflow_monitor", json!({"workflow_id": "wf_999"})))
        .unwrap_err();
    assert_eq!(e["error"]["code"], "RESOURCE_NOT_FOUND");
}

#[test]
fn query_and_monitor_planet_reads_and_subscribes() {
    let (core, _) = setup();
    rt().block_on(async {
        let started = ok(
            &core,
            "structs_workflow_execute",
            json!({"workflow": "query-and-monitor-planet", "inputs": {"planet_id": "2-3"}}),
        )
        .await;
        let id = started["workflow_id"].as_str().unwrap().to_string();
        assert!(id.starts_with("wf_"));
        assert_eq!(started["steps"], 6);
        let m = watch(&core, &id, done).await;
        assert_eq!(m["status"], "succeeded", "{m:#}");
        assert_eq!(m["progress"]["steps_done"], 6);
        assert_eq!(m["progress"]["percent"], 100.0);
        assert_eq!(
            report_step(&m, "owner")["resolved_params"]["player_id"],
            "1-3"
        );
        assert_eq!(
            report_step(&m, "fleet")["data"]["fleet"]["Fleet"]["owner"],
            "1-3"
        );
        // The subscriptions were made for the caller (here the core's own).
        let subs = ok(&core, "structs_subscription_list", json!({})).await;
        let text = subs.to_string();
        assert!(text.contains("2-3") && text.contains("1-3"), "{subs:#}");
        assert_eq!(m["report"]["totals"]["reference_errors"], 0);
    });
}

#[test]
fn planet_setup_plans_the_first_builds() {
    let (core, _) = setup();
    rt().block_on(async {
        let started = ok(
            &core,
            "structs_workflow_execute",
            json!({"workflow": "planet-setup", "inputs": {"player_id": "1-2"}}),
        )
        .await;
        let id = started["workflow_id"].as_str().unwrap();
        let m = watch(&core, id, done).await;
        assert_eq!(m["status"], "succeeded", "{m:#}");
        for step in ["extractor", "cannon", "refinery"] {
            let s = report_step(&m, step);
            assert!(s["data"]["requirements"].is_object(), "{step}: {s:#}");
        }
        assert_eq!(
            report_step(&m, "planet")["resolved_params"]["planet_id"],
            "2-2"
        );
        assert!(report_step(&m, "next")["data"].is_object());
    });
}

#[test]
fn build_mining_operation_waits_for_its_proof_then_builds_and_mines() {
    let (core, src) = setup();
    // Player 3 can build an Ore Extractor: ready, with no extractor on its planet.
    let p = src.with_world_mut(|w| {
        let p = (1..=w.players.len() as u64)
            .find(|&p| {
                let planet = &w.planets[(w.players[(p - 1) as usize].planet - 1) as usize];
                let slots = planet.slots.iter().flatten();
                let taken: Vec<u64> = slots.clone().flatten().copied().collect();
                !taken
                    .iter()
                    .any(|s| w.structs[(*s - 1) as usize].type_id == 14)
                    && planet.slots.iter().flatten().any(|s| s.is_none())
            })
            .expect("a player without an extractor");
        make_ready(w, p);
        p
    });
    let player = format!("1-{p}");
    rt().block_on(async {
        let started = ok(
            &core,
            "structs_workflow_execute",
            json!({"workflow": "build-mining-operation", "inputs": {"player_id": player}}),
        )
        .await;
        let id = started["workflow_id"].as_str().unwrap().to_string();
        assert_eq!(started["uses_proof_of_work"], true);
        // The proof step waits for the difficulty to fall, and says so.
        let m = watch(&core, &id, |m| {
            m["current"][0]["id"] == "proof"
                && m["current"][0]["progress"]
                    .as_str()
                    .is_some_and(|p| p.contains("waiting for block"))
        })
        .await;
        assert_eq!(step_status(&m, "build"), "succeeded");
        let waiting = &m["steps"][2]["progress"]["data"];
        assert_eq!(waiting["waiting"], true);
        assert!(waiting["required_difficulty"].as_u64().unwrap() > 8);
        // Blocks pass: the difficulty falls and the engine finds the proof.
        src.clock().step(40_000);
        let m = watch(&core, &id, done).await;
        assert_eq!(m["status"], "succeeded", "{m:#}");
        let sid = report_step(&m, "build")["data"]["struct_id"]
            .as_str()
            .unwrap()
            .to_string();
        let proof = report_step(&m, "proof");
        assert_eq!(proof["data"]["valid"], true);
        assert_eq!(
            report_step(&m, "complete")["resolved_params"]["struct_id"],
            sid
        );
        assert_eq!(
            report_step(&m, "complete")["resolved_params"]["nonce"],
            proof["data"]["nonce"]
        );
        let ex = &report_step(&m, "extractor")["data"]["struct"];
        assert_eq!(ex["Struct"]["id"], sid);
        assert_eq!(ex["structAttributes"]["isBuilt"], true);
        assert_eq!(ex["structAttributes"]["isOnline"], true);
        assert_eq!(m["report"]["totals"]["reference_errors"], 0);
    });
}

#[test]
fn mine_refine_convert_runs_both_proofs_at_once_and_refines_the_mined_ore() {
    let (core, src) = setup();
    let before = src.with_world_mut(|w| {
        make_ready(w, 11);
        let planet = w.players[10].planet;
        w.planets[(planet - 1) as usize].grid.ore = 3;
        w.players[10].grid.ore
    });
    rt().block_on(async {
        let w = workflow::catalog().get("mine-refine-convert").unwrap();
        let started = ok(
            &core,
            "structs_workflow_execute",
            json!({"workflow": "mine-refine-convert", "inputs": w.example_inputs()}),
        )
        .await;
        let id = started["workflow_id"].as_str().unwrap().to_string();
        // Both proofs wait at the same time. The refining proof starts beside the
        // first `player` read, so wait for that read to finish (it can be slow on a
        // loaded machine): then the two proofs are all that runs.
        let m = watch(&core, &id, |m| {
            step_status(m, "mine_proof") == "running"
                && step_status(m, "refine_proof") == "running"
                && step_status(m, "player") == "succeeded"
        })
        .await;
        assert_eq!(m["progress"]["running"], 2);
        src.clock().step(300_000);
        let m = watch(&core, &id, done).await;
        assert_eq!(m["status"], "succeeded", "{m:#}");
        assert_eq!(report_step(&m, "mine")["data"]["ore_mined"], 1);
        let refine = report_step(&m, "refine");
        assert_eq!(refine["data"]["status"], "success", "{refine:#}");
        assert_eq!(refine["data"]["results"][0]["ore_refined"], 1);
        assert!(
            refine["resolved_params"]["transaction"]["body"]["messages"][0]["creator"]
                .as_str()
                .unwrap()
                .starts_with("structs1")
        );
        assert_eq!(report_step(&m, "convert")["data"]["power_generated"], 1.0);
    });
    // One ore mined, one refined: the stored ore is where it was.
    assert_eq!(src.with_world(|w| w.players[10].grid.ore), before);
}

#[test]
fn a_workflow_can_be_cancelled_while_its_proof_waits() {
    let (core, src) = setup();
    let p = 11;
    src.with_world_mut(|w| make_ready(w, p));
    rt().block_on(async {
        let started = ok(
            &core,
            "structs_workflow_execute",
            json!({"workflow": "mine-refine-convert", "inputs": {
                "player_id": "1-11", "extractor_id": "5-56", "refinery_id": "5-57"}}),
        )
        .await;
        let id = started["workflow_id"].as_str().unwrap().to_string();
        watch(&core, &id, |m| step_status(m, "mine_proof") == "running").await;
        let c = ok(&core, "structs_workflow_cancel", json!({"workflow_id": id})).await;
        assert_eq!(c["cancelled"], true);
        let m = watch(&core, &id, done).await;
        assert_eq!(m["status"], "cancelled");
        assert_eq!(step_status(&m, "mine_proof"), "failed");
        assert_eq!(step_status(&m, "balance"), "skipped");
        let listed = ok(&core, "structs_workflow_list", json!({})).await;
        assert_eq!(listed["runs"][0]["status"], "cancelled");
    });
}
