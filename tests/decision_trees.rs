//! The decision tree tools through `Core::call` on a paused sim world: every shipped
//! tree validates; walks reach outcomes with filled parameters, or stop at the fact a
//! missing input leaves unknown; the next actions follow the world as transactions
//! change it; strategies are feasible or not with the reasons named; build requirements
//! match the struct types and the rules.

mod support;

use std::sync::Arc;

use serde_json::{Value, json};
use structs_console::Core;
use structs_console::chain::{self, Signed};
use structs_console::pow;
use structs_console::source::sim::{SimSource, World, WorldConfig};
use structs_console::source::{ClockAction, GameSource};
use structs_console::trees::{self, Catalog};
use support::calls::blocking::{call, ok};
use support::sim::paused_core;

const PLAYERS: usize = 120;

fn setup() -> (Core, Arc<SimSource>) {
    setup_with(PLAYERS)
}

fn setup_with(players: usize) -> (Core, Arc<SimSource>) {
    paused_core(WorldConfig::with_players(players))
}

fn err_code(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or("")
}

fn planet_types(w: &World, player: usize) -> Vec<u8> {
    let planet = &w.planets[w.players[player].planet as usize - 1];
    planet
        .slots
        .iter()
        .flatten()
        .flatten()
        .map(|s| &w.structs[*s as usize - 1])
        .filter(|s| !s.destroyed)
        .map(|s| s.type_id)
        .collect()
}

/// A player ready to build an Ore Extractor: online with room for its draw, charge,
/// fleet home, command ship online, ore in the ground, no extractor, a free water or
/// land slot, and no ore held (so refining does not come first).
fn ready_without_extractor(w: &World) -> usize {
    ready_players(w)[0]
}

fn ready_players(w: &World) -> Vec<usize> {
    let height = w.config.genesis_height;
    (0..w.players.len())
        .filter(|&i| {
            let p = &w.players[i];
            let index = i as u64 + 1;
            let fleet = &w.fleets[p.fleet as usize - 1];
            let planet = &w.planets[p.planet as usize - 1];
            let cmd_online =
                fleet.command_struct != 0 && w.structs[fleet.command_struct as usize - 1].online;
            let free_slot = [2usize, 3]
                .iter()
                .any(|row| planet.slots[*row].iter().any(Option::is_none));
            w.available_capacity(index) >= 1_200_000
                && w.charge(index, height) >= 8
                && fleet.planet == Some(p.planet)
                && cmd_online
                && planet.grid.ore > 0
                && p.grid.ore == 0
                && free_slot
                && !planet_types(w, i).contains(&14)
        })
        .collect()
}

fn player_id(i: usize) -> String {
    format!("1-{}", i + 1)
}

fn apply(source: &SimSource, msg: Value) -> Value {
    let signed: Signed = chain::parse(&msg, "m").unwrap();
    let tx = json!({"body": {"messages": [msg]}});
    let out = source
        .apply(&tx, &[signed])
        .unwrap_or_else(|e| panic!("{msg} refused: {e}"));
    out.results[0].clone()
}

#[test]
fn every_shipped_tree_validates_and_every_file_is_shipped() {
    let c = Catalog::parse(trees::TREE_FILES, trees::GOALS_FILE).unwrap();
    assert_eq!(c.validate(), Vec::<String>::new());
    let on_disk: Vec<String> =
        std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/data/trees"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".json"))
            .map(|n| n.trim_end_matches(".json").to_string())
            .collect();
    for name in &on_disk {
        assert!(
            c.trees.contains_key(name),
            "data/trees/{name}.json is not embedded"
        );
    }
    assert_eq!(on_disk.len(), c.trees.len());
    // Every tool a tree names exists.
    let (core, _) = setup();
    let names: Vec<&str> = core.tool_names().collect();
    for tree in c.trees.values() {
        for (id, node) in &tree.nodes {
            if let Some(tool) = node.action.as_ref().and_then(|a| a.tool.as_deref()) {
                assert!(names.contains(&tool), "{}/{id} names {tool}", tree.id);
            }
        }
    }
    // The navigate tool's description lists every tree; the other tools every goal
    // and strategy.
    let spec = |n: &str| core.tools().find(|t| t.name == n).unwrap().description;
    for id in c.trees.keys() {
        assert!(
            spec("structs_decision_tree_navigate").contains(id.as_str()),
            "{id}"
        );
    }
    for g in c.goals.keys() {
        assert!(
            spec("structs_decision_tree_get_next_actions").contains(g.as_str()),
            "{g}"
        );
    }
    for s in c.strategies.keys() {
        assert!(
            spec("structs_decision_tree_evaluate_strategy").contains(s.as_str()),
            "{s}"
        );
    }
}

/// No template is left in an answer unless it is listed as unfilled (or is the
/// `${result.nonce}` the proof tool fills).
fn assert_filled(rec: &Value) {
    let unfilled: Vec<String> = rec["unfilled"]
        .as_array()
        .map(|a| a.iter().map(|v| v.as_str().unwrap().to_string()).collect())
        .unwrap_or_default();
    let mut text = rec.to_string();
    for u in &unfilled {
        text = text.replace(u.as_str(), "");
    }
    text = text.replace("${result.nonce}", "");
    assert!(!text.contains("${"), "a template is left in {rec}");
}

#[test]
fn navigate_reaches_an_outcome_with_filled_parameters() {
    let (core, source) = setup();
    let i = source.with_world(ready_without_extractor);
    let (planet, addr) = source.with_world(|w| {
        (
            format!("2-{}", w.players[i].planet),
            w.address_of(i as u64 + 1).unwrap().to_string(),
        )
    });
    let v = ok(
        &core,
        "structs_decision_tree_navigate",
        json!({"tree": "mining-operation", "state": {"player_id": player_id(i)}}),
    );
    assert_eq!(v["tree"]["id"], "mining-operation");
    assert_eq!(v["current_node"]["kind"], "outcome");
    assert_eq!(v["current_node"]["node"], "build_extractor");
    assert_eq!(v["next_nodes"], json!([]));
    let path = v["path"].as_array().unwrap();
    assert!(path.len() >= 5, "{path:?}");
    for step in path {
        assert!(step["branch"] == "yes" || step["branch"] == "no", "{step}");
        assert!(
            step["condition"].is_string() && step["fact"]["fact"].is_string(),
            "{step}"
        );
    }
    // The power decision is the rules' own verdict, with their detail.
    let power = path.iter().find(|p| p["node"] == "power").unwrap();
    assert_eq!(power["fact"]["requirement"], "sufficientPower");
    assert_eq!(power["value"], true);
    assert!(
        power["detail"].as_str().unwrap().contains("500000 mW draw"),
        "{power}"
    );

    let rec = &v["recommendation"];
    assert_eq!(rec["action"], "structs_action_build_struct");
    assert_eq!(rec["kind"], "tool");
    assert_eq!(
        rec["parameters"],
        json!({"struct_type": 14, "location_type": "planet", "location_id": planet, "player_id": player_id(i)})
    );
    assert_eq!(
        rec["message"]["@type"],
        "/structs.structs.MsgStructBuildInitiate"
    );
    assert_eq!(rec["message"]["creator"], addr);
    assert_eq!(rec["message"]["structTypeId"], "14");
    assert_eq!(rec["requirements_met"], true);
    assert_eq!(rec["missing_requirements"], json!([]));
    assert_eq!(rec["priority"], 3);
    assert_eq!(rec["tier"], "economy");
    assert!(rec["reason"].as_str().unwrap().contains(&planet));
    assert_filled(rec);

    // The same build through the build-requirements tree, the type given by name.
    let v = ok(
        &core,
        "structs_decision_tree_navigate",
        json!({"tree": "build-requirements", "state": {"player_id": player_id(i), "struct_type": "Ore Extractor"}}),
    );
    assert_eq!(v["current_node"]["node"], "build", "{v}");
    assert_eq!(v["recommendation"]["parameters"]["struct_type"], 14);
    assert_eq!(v["recommendation"]["parameters"]["location_id"], planet);
    assert_filled(&v["recommendation"]);

    // A step budget stops early, with the branches ahead.
    let v = ok(
        &core,
        "structs_decision_tree_navigate",
        json!({"tree": "mining-operation", "state": {"player_id": player_id(i)}, "max_steps": 2}),
    );
    assert_eq!(v["current_node"]["kind"], "max_steps");
    assert_eq!(v["path"].as_array().unwrap().len(), 2);
    assert_eq!(v["next_nodes"].as_array().unwrap().len(), 2);
    assert_eq!(v["recommendation"], Value::Null);
}

/// Finds a nonce whose hash meets difficulty 3 for a work.
fn solve(work: &pow::Work) -> String {
    (0u64..)
        .map(|n| n.to_string())
        .find(|n| pow::achieved_difficulty(&pow::hash_hex(&format!("{}{n}", work.prefix()))) >= 3)
        .unwrap()
}

fn top(core: &Core, goal: &str, player: usize) -> Value {
    let v = ok(
        core,
        "structs_decision_tree_get_next_actions",
        json!({"goal": goal, "state": {"player_id": player_id(player)}}),
    );
    let actions = v["actions"].as_array().unwrap();
    for (n, a) in actions.iter().enumerate() {
        assert_eq!(a["rank"], n + 1);
        assert_filled(a);
    }
    actions[0].clone()
}

#[test]
fn the_next_action_follows_the_extractor_through_build_and_mining() {
    // A world large enough for two players ready to build an extractor.
    let (core, source) = setup_with(400);
    let i = source.with_world(ready_without_extractor);
    let planet = source.with_world(|w| format!("2-{}", w.players[i].planet));

    // No extractor: build one, with parameters ready for the build tool.
    let a = top(&core, "build_mining_operation", i);
    assert_eq!(a["action"], "structs_action_build_struct", "{a}");
    assert_eq!(a["parameters"]["struct_type"], 14);
    assert_eq!(a["parameters"]["location_id"], planet);
    assert_eq!(a["parameters"]["player_id"], player_id(i));
    assert_eq!(a["requirements_met"], true);
    assert_eq!(a["missing_requirements"], json!([]));

    // Initiated (through the rules, as the chain would): now its build proof.
    let built = apply(&source, a["message"].clone());
    let extractor = built["struct_id"].as_str().unwrap().to_string();
    let a = top(&core, "build_mining_operation", i);
    assert_eq!(a["action"], "structs_calculate_proof_of_work", "{a}");
    assert_eq!(
        a["parameters"],
        json!({"action_type": "struct_build_complete", "entity_id": extractor})
    );
    assert_eq!(
        a["message"]["@type"],
        "/structs.structs.MsgStructBuildComplete"
    );
    assert_eq!(a["message"]["nonce"], "${result.nonce}");
    assert_eq!(a["proof"]["difficulty_range"], 700);
    assert_eq!(a["proof"]["difficulty_now"], 64);
    let wait = a["proof"]["blocks_until_target"].as_u64().unwrap();
    assert!((500..700).contains(&wait), "{wait}");
    assert_eq!(a["requirements_met"], true, "{a}");

    // Once the difficulty is 3, the proof completes the build and the extractor comes
    // online: the top action is now the mining proof of that extractor.
    source.control_clock(ClockAction::Step(wait)).unwrap();
    let start = source.with_world(|w| {
        let index: usize = extractor[2..].parse().unwrap();
        w.structs[index - 1].block_start_build
    });
    let work = pow::Work {
        action: pow::Action::StructBuild,
        entity_id: extractor.clone(),
        planet_id: None,
        block_start: start,
    };
    let mut complete = a["message"].clone();
    complete["nonce"] = json!(solve(&work));
    let done = apply(&source, complete);
    assert_eq!(done["online"], true, "{done}");

    let a = top(&core, "build_mining_operation", i);
    assert_eq!(a["action"], "structs_calculate_proof_of_work", "{a}");
    assert_eq!(
        a["parameters"],
        json!({"action_type": "ore_miner_complete", "entity_id": extractor})
    );
    assert_eq!(
        a["message"]["@type"],
        "/structs.structs.MsgStructOreMinerComplete"
    );
    assert_eq!(a["requirements_met"], true, "{a}");
    assert_eq!(a["proof"]["difficulty_range"], 14000);
    assert_eq!(a["tree"], "mining-operation");

    // Another player without an extractor still gets the build.
    let other = source.with_world(|w| ready_players(w)[1]);
    let b = top(&core, "build_mining_operation", other);
    assert_eq!(b["action"], "structs_action_build_struct", "{b}");
    assert_eq!(b["parameters"]["struct_type"], 14, "{b}");
    assert_ne!(a["action"], b["action"]);
}

#[test]
fn a_missing_input_stops_the_walk_at_the_unknown_fact() {
    let (core, source) = setup();
    let i = source.with_world(ready_without_extractor);
    // build-requirements needs the struct type for its first requirement.
    let v = ok(
        &core,
        "structs_decision_tree_navigate",
        json!({"tree": "build-requirements", "state": {"player_id": player_id(i)}}),
    );
    let cur = &v["current_node"];
    assert_eq!(cur["kind"], "unknown", "{v}");
    assert_eq!(cur["node"], "online");
    assert_eq!(cur["missing_input"], "struct_type");
    assert!(
        cur["fact"].as_str().unwrap().contains("playerOnline"),
        "{cur}"
    );
    assert!(
        cur["reason"]
            .as_str()
            .unwrap()
            .contains("state.struct_type"),
        "{cur}"
    );
    assert_eq!(v["missing_inputs"], json!(["struct_type"]));
    assert_eq!(v["recommendation"], Value::Null);
    assert_eq!(v["path"], json!([]));
    assert_eq!(v["next_nodes"].as_array().unwrap().len(), 2);

    // No player at all: the first fact is unknown, nothing is guessed.
    let v = ok(
        &core,
        "structs_decision_tree_navigate",
        json!({"tree": "mining-operation", "state": {}}),
    );
    assert_eq!(v["current_node"]["fact"], "player.online");
    assert_eq!(v["current_node"]["missing_input"], "player_id");

    // Walked as far as the state allows: with Alpha Matter and no generator, growing
    // power is the reactor (safe) or a Field Generator (efficient), which only the
    // player's risk tolerance decides; the goal reports it under needs_input.
    let j = source.with_world(|w| {
        (0..w.players.len())
            .find(|&j| {
                let online_generator = w.planets[w.players[j].planet as usize - 1]
                    .slots
                    .iter()
                    .flatten()
                    .flatten()
                    .map(|s| &w.structs[*s as usize - 1])
                    .any(|s| (20..=22).contains(&s.type_id) && s.online);
                w.players[j].alpha > 0 && !online_generator
            })
            .expect("some player holds Alpha Matter and runs no generator")
    });
    let roomy = json!({"player_id": player_id(j), "available_capacity_mw": 10_000_000_000i64});
    let v = ok(
        &core,
        "structs_decision_tree_get_next_actions",
        json!({"goal": "expand_power", "state": roomy}),
    );
    assert_eq!(v["actions"], json!([]), "{v}");
    let needs = v["needs_input"].as_array().unwrap();
    assert_eq!(needs.len(), 1, "{v}");
    assert_eq!(needs[0]["missing_input"], "risk_tolerance");
    assert_eq!(needs[0]["fact"], "state.risk_tolerance");
    // Given, the walk goes on to a Field Generator.
    let mut state = roomy.clone();
    state["risk_tolerance"] = json!("high");
    let v = ok(
        &core,
        "structs_decision_tree_get_next_actions",
        json!({"goal": "expand_power", "state": state}),
    );
    assert_eq!(v["needs_input"], json!([]));
    assert_eq!(v["actions"][0]["parameters"]["struct_type"], 20, "{v}");
}

#[test]
fn bad_trees_and_states_are_structured_errors() {
    let (core, source) = setup();
    let e = call(
        &core,
        "structs_decision_tree_navigate",
        json!({"tree": "decision-tree-of-life", "state": {}}),
    )
    .unwrap_err();
    assert_eq!(err_code(&e), "RESOURCE_NOT_FOUND");
    let listed = e["error"]["details"]["trees"].as_array().unwrap();
    assert!(listed.contains(&json!("mining-operation")), "{e}");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("raid-defense"),
        "{e}"
    );

    let e = call(
        &core,
        "structs_decision_tree_navigate",
        json!({"tree": "mining-operation", "state": {"player_id": "2-1"}}),
    )
    .unwrap_err();
    assert_eq!(err_code(&e), "VALIDATION_WRONG_ENTITY_TYPE");
    assert_eq!(e["error"]["details"]["field"], "state.player_id");

    let e = call(
        &core,
        "structs_decision_tree_navigate",
        json!({"tree": "mining-operation", "state": {"player_id": "1-99999"}}),
    )
    .unwrap_err();
    assert_eq!(err_code(&e), "RESOURCE_NOT_FOUND");

    let e = call(
        &core,
        "structs_decision_tree_navigate",
        json!({"tree": "mining-operation", "state": {"player_id": "1-1", "mood": "bold"}}),
    )
    .unwrap_err();
    assert!(err_code(&e).starts_with("VALIDATION_"), "{e}");

    let other = source.with_world(|w| format!("2-{}", w.players[1].planet));
    let e = call(
        &core,
        "structs_decision_tree_navigate",
        json!({"tree": "mining-operation", "state": {"player_id": "1-1", "planet_id": other}}),
    )
    .unwrap_err();
    assert_eq!(err_code(&e), "VALIDATION_INVALID_VALUE");
    assert_eq!(e["error"]["details"]["field"], "state.planet_id");

    let e = call(
        &core,
        "structs_decision_tree_get_next_actions",
        json!({"goal": "world_peace", "state": {"player_id": "1-1"}}),
    )
    .unwrap_err();
    assert!(err_code(&e).starts_with("VALIDATION_"), "{e}");

    let e = call(
        &core,
        "structs_decision_tree_evaluate_strategy",
        json!({"strategy": "raid", "state": {"player_id": "1-1"}}),
    )
    .unwrap_err();
    assert_eq!(err_code(&e), "VALIDATION_MISSING_FIELD");
    assert_eq!(e["error"]["details"]["field"], "state.target_planet_id");
}

#[test]
fn an_offline_player_is_told_to_recover_first() {
    let (core, source) = setup();
    let offline = source.with_world(|w| {
        (0..w.players.len())
            .find(|&i| w.available_capacity(i as u64 + 1) < 0)
            .expect("some player is offline")
    });
    let a = top(&core, "build_mining_operation", offline);
    assert_eq!(a["priority"], 1, "{a}");
    assert_eq!(a["tier"], "survival");
    assert_eq!(a["tree"], "power-management");
    assert!(
        a["because"].as_array().unwrap()[0]
            .as_str()
            .unwrap()
            .ends_with(": no")
    );
}

#[test]
fn strategies_are_feasible_or_not_with_the_reasons() {
    let (core, source) = setup();
    let i = source.with_world(ready_without_extractor);
    let refinery = source.with_world(|w| planet_types(w, i).contains(&15));
    let v = ok(
        &core,
        "structs_decision_tree_evaluate_strategy",
        json!({"strategy": "expand_mining", "state": {"player_id": player_id(i)}}),
    );
    assert_eq!(v["feasible"], true, "{v}");
    assert_eq!(v["requirements_met"], true);
    assert_eq!(v["missing_requirements"], json!([]));
    let score = v["score"].as_f64().unwrap();
    assert!(score > 0.0 && score <= 1.0, "{score}");
    let t = &v["estimated_time"];
    let blocks = t["blocks"].as_u64().unwrap();
    assert_eq!(t["seconds"].as_f64().unwrap(), blocks as f64 * 6.0);
    assert_eq!(t["target_difficulty"], 3);
    // The refine (range 28000) at difficulty 3 is the long pole: more than a day.
    assert!(blocks > 14_000, "{blocks}");
    let c = &v["estimated_cost"];
    assert_eq!(c["alpha_matter"], 0);
    let builds = if refinery { 1 } else { 2 };
    assert_eq!(c["charge"], 8 * builds);
    assert_eq!(c["build_draw_mw"], 500_000 * builds);

    // The same player, assumed offline: infeasible, with the reason named, and a lower
    // score.
    let off = ok(
        &core,
        "structs_decision_tree_evaluate_strategy",
        json!({"strategy": "expand_mining", "state": {"player_id": player_id(i), "player_online": false}}),
    );
    assert_eq!(off["feasible"], false, "{off}");
    assert_eq!(off["requirements_met"], false);
    let missing: Vec<&str> = off["missing_requirements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["requirement"].as_str().unwrap())
        .collect();
    assert!(missing.contains(&"playerOnline"), "{missing:?}");
    assert!(missing.contains(&"The player is online"), "{missing:?}");
    assert!(off["score"].as_f64().unwrap() < score);

    // A player the world has offline.
    let offline = source.with_world(|w| {
        (0..w.players.len())
            .find(|&j| w.available_capacity(j as u64 + 1) < 0)
            .unwrap()
    });
    let v = ok(
        &core,
        "structs_decision_tree_evaluate_strategy",
        json!({"strategy": "fortify", "state": {"player_id": player_id(offline)}}),
    );
    assert_eq!(v["feasible"], false, "{v}");

    // Charge only takes time: an empty bar leaves the strategy feasible, but later.
    let later = ok(
        &core,
        "structs_decision_tree_evaluate_strategy",
        json!({"strategy": "fortify", "state": {"player_id": player_id(i), "charge": 0}}),
    );
    let now = ok(
        &core,
        "structs_decision_tree_evaluate_strategy",
        json!({"strategy": "fortify", "state": {"player_id": player_id(i)}}),
    );
    assert_eq!(later["feasible"], now["feasible"]);
    assert_eq!(
        later["estimated_time"]["steps"][0]["starts_in_blocks"], 8,
        "{later}"
    );
}

#[test]
fn build_requirements_of_an_ore_extractor() {
    let (core, source) = setup();
    // Without a player: the type's figures, nothing judged.
    let v = ok(
        &core,
        "structs_decision_tree_get_build_requirements",
        json!({"struct_type": 14}),
    );
    let r = &v["requirements"];
    assert_eq!(r["resources"]["charge"], 8);
    assert_eq!(r["resources"]["build_draw_mw"], 500_000);
    assert_eq!(r["resources"]["passive_draw_mw"], 500_000);
    assert_eq!(r["resources"]["alpha_matter"], 0);
    assert_eq!(r["location"]["type"], "planet");
    assert_eq!(r["location"]["allowed_ambits"], json!(["water", "land"]));
    assert_eq!(v["met"], Value::Null);
    let names: Vec<&str> = r["prerequisites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["requirement"].as_str().unwrap())
        .collect();
    for want in [
        "playerOnline",
        "fleetOnStation",
        "commandShipOnline",
        "buildLimit",
    ] {
        assert!(names.contains(&want), "{names:?}");
    }
    let t = &v["estimated_build_time"];
    let blocks = t["blocks"].as_u64().unwrap();
    assert_eq!(pow::difficulty(blocks, 700), 3);
    assert!(pow::difficulty(blocks - 1, 700) > 3);
    assert_eq!(t["seconds"].as_f64().unwrap(), blocks as f64 * 6.0);

    // With a ready player: its planet, its free slots by ambit, every requirement met.
    let i = source.with_world(ready_without_extractor);
    let (planet, free_water, free_land) = source.with_world(|w| {
        let p = &w.planets[w.players[i].planet as usize - 1];
        let free = |row: usize| p.slots[row].iter().filter(|s| s.is_none()).count();
        (format!("2-{}", w.players[i].planet), free(3), free(2))
    });
    let v = ok(
        &core,
        "structs_decision_tree_get_build_requirements",
        json!({"struct_type": "ore extractor", "player_id": player_id(i)}),
    );
    let loc = &v["requirements"]["location"];
    assert_eq!(loc["id"], planet);
    assert_eq!(
        loc["free_slots"],
        json!({"water": free_water, "land": free_land})
    );
    assert_eq!(loc["available"], true);
    assert_eq!(loc["of_this_type"], 0);
    assert_eq!(v["met"], true, "{v}");
    assert_eq!(v["missing_requirements"], json!([]));
    for p in v["requirements"]["prerequisites"].as_array().unwrap() {
        assert_eq!(p["met"], true, "{p}");
    }
    for c in v["requirements"]["resources"]["checks"].as_array().unwrap() {
        assert_eq!(c["met"], true, "{c}");
    }
    assert_eq!(v["estimated_build_time"]["charge_wait_blocks"], 0);

    // Someone else's planet: refused by the rules as the wrong location.
    let other = source.with_world(|w| format!("2-{}", w.players[(i + 1) % w.players.len()].planet));
    let v = ok(
        &core,
        "structs_decision_tree_get_build_requirements",
        json!({"struct_type": 14, "player_id": player_id(i), "location": {"type": "planet", "id": other}}),
    );
    assert_eq!(v["met"], false);
    let checks = v["requirements"]["location"]["checks"].as_array().unwrap();
    let valid = checks
        .iter()
        .find(|c| c["requirement"] == "validLocation")
        .unwrap();
    assert_eq!(valid["met"], false, "{valid}");

    // A planet type in a fleet is a bad argument.
    let e = call(
        &core,
        "structs_decision_tree_get_build_requirements",
        json!({"struct_type": 14, "location": {"type": "fleet", "id": "9-1"}}),
    )
    .unwrap_err();
    assert_eq!(err_code(&e), "VALIDATION_INVALID_VALUE");
    assert_eq!(e["error"]["details"]["field"], "location.type");
}

#[test]
fn every_goal_and_strategy_answers_for_every_player() {
    let (core, source) = setup();
    let n = source.with_world(|w| w.players.len());
    for i in 0..n {
        let target = format!("2-{}", (i + 1) % n + 1);
        let state = json!({"player_id": player_id(i), "target_planet_id": target});
        for goal in [
            "build_mining_operation",
            "defend_planet",
            "expand_power",
            "raid_ready",
        ] {
            let v = ok(
                &core,
                "structs_decision_tree_get_next_actions",
                json!({"goal": goal, "state": state}),
            );
            for a in v["actions"].as_array().unwrap() {
                assert_filled(a);
                assert!(a["parameters"].is_object(), "{a}");
                assert!((1..=5).contains(&a["priority"].as_u64().unwrap()), "{a}");
            }
        }
        for s in ["expand_mining", "fortify", "raid"] {
            let v = ok(
                &core,
                "structs_decision_tree_evaluate_strategy",
                json!({"strategy": s, "state": state}),
            );
            let score = v["score"].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&score), "{v}");
        }
    }
}

/// The tool catalog's `state.resources` (`alpha_matter` in grams, `watts` free) stands
/// for the `alpha_ualpha` and `available_capacity_mw` overrides: the answer's state shows
/// them so, the facts use them, and the details say they were assumed rather than
/// quoting the world's numbers beside them.
#[test]
fn the_catalogs_resources_are_assumed_as_overrides() {
    let (core, source) = setup();
    let i = source.with_world(ready_without_extractor);
    let planet = source.with_world(|w| format!("2-{}", w.players[i].planet));
    let v = ok(
        &core,
        "structs_decision_tree_evaluate_strategy",
        json!({"strategy": "expand_mining", "state": {
            "player_id": player_id(i), "planet_id": planet,
            "resources": {"alpha_matter": 50, "watts": 25}}}),
    );
    assert!(v.to_string().contains("has 25000 mW available"), "{v}");
    let online = v["requirements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["requirement"] == "The player is online")
        .unwrap_or_else(|| panic!("{v}"));
    assert_eq!(online["detail"], "25000 mW available, as the state says");

    // Offline by assumption, holding 1.1 g: the power tree reads that balance.
    let walk = ok(
        &core,
        "structs_decision_tree_navigate",
        json!({"tree": "power-management", "state": {
            "player_id": player_id(i), "resources": {"alpha_matter": 1.1, "watts": -2}}}),
    );
    assert_eq!(walk["state"]["alpha_ualpha"], 1_100_000, "{walk}");
    assert_eq!(walk["state"]["available_capacity_mw"], -2_000, "{walk}");
    assert!(walk["state"].get("resources").is_none(), "{walk}");
    let steps = walk["path"].as_array().unwrap();
    let alpha = steps
        .iter()
        .find(|s| s["fact"]["fact"] == "player.alpha_ualpha")
        .unwrap_or_else(|| panic!("{walk}"));
    assert_eq!(alpha["value"], 1_100_000, "{walk}");
    assert_eq!(steps[0]["value"], false, "{walk}");
    assert_eq!(steps[0]["detail"], "-2000 mW available, as the state says");

    // One value given both ways must agree; a fraction of a mW is refused.
    for (state, field) in [
        (
            json!({"player_id": player_id(i), "alpha_ualpha": 3, "resources": {"alpha_matter": 1}}),
            "state.resources",
        ),
        (
            json!({"player_id": player_id(i), "resources": {"watts": 0.0001}}),
            "state.resources.watts",
        ),
        (
            json!({"player_id": player_id(i), "resources": {"alpha_matter": -1}}),
            "state.resources.alpha_matter",
        ),
    ] {
        let e = call(
            &core,
            "structs_decision_tree_navigate",
            json!({"tree": "power-management", "state": state}),
        )
        .unwrap_err();
        assert!(err_code(&e).starts_with("VALIDATION_"), "{e}");
        assert_eq!(e["error"]["details"]["field"], field, "{e}");
    }
    // The same value given both ways is fine.
    ok(
        &core,
        "structs_decision_tree_navigate",
        json!({"tree": "power-management", "state": {
            "player_id": player_id(i), "available_capacity_mw": 5000, "resources": {"watts": 5}}}),
    );
}

/// An action checked with an assumed capacity says the player is offline as assumed,
/// not that the world's load exceeds its capacity (which may not be so).
#[test]
fn an_assumed_offline_player_is_said_to_be_assumed() {
    let (core, source) = setup();
    let i = source.with_world(ready_without_extractor);
    let v = ok(
        &core,
        "structs_validate_action",
        json!({"action_type": "MsgStructBuildInitiate",
            "parameters": {"player_id": player_id(i), "struct_type_id": 14},
            "game_state": {"available_capacity": -5}}),
    );
    assert_eq!(v["requirements_met"], false, "{v}");
    let text = v.to_string();
    assert!(text.contains("offline: -5 mW available, as assumed"), "{v}");
    assert!(!text.contains("exceeds capacity"), "{v}");
}
