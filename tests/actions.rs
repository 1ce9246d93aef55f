//! The action and validation tools on the sim world, through `Core::call`: a build from
//! initiation to a real proof, mining, an attack, transactions applied whole or not at
//! all, refusals that name what is missing, and the events each change publishes.

mod support;

use std::sync::Arc;

use serde_json::{Value, json};
use structs_console::Core;
use structs_console::source::GameSource;
use structs_console::source::sim::world::{Location, World};
use structs_console::source::sim::{SimSource, WorldConfig};
use support::sim::{make_ready, paused_core};

fn setup() -> (Core, Arc<SimSource>) {
    paused_core(WorldConfig::demo())
}

// Not support::calls::blocking: these calls run on a two-worker runtime, where that one
// runs each on a current-thread runtime; the proofs here are real searches.
fn run<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

fn call(core: &Core, tool: &str, args: Value) -> Result<Value, Value> {
    run(core.call_json(tool, args))
}

fn ok(core: &Core, tool: &str, args: Value) -> Value {
    call(core, tool, args.clone()).unwrap_or_else(|e| panic!("{tool} {args}: {e}"))
}

fn refused(core: &Core, tool: &str, args: Value) -> Value {
    let e = call(core, tool, args.clone()).expect_err("the rules should refuse this");
    assert_eq!(e["error"]["code"], "VALIDATION_REQUIREMENTS_NOT_MET", "{e}");
    e
}

fn missing(e: &Value) -> Vec<String> {
    e["error"]["details"]["missing_requirements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["requirement"].as_str().unwrap().to_string())
        .collect()
}

/// A planet struct type player `p` has not built (the build limit is one each).
fn free_type(w: &World, p: u64) -> u8 {
    let planet = &w.planets[(w.players[(p - 1) as usize].planet - 1) as usize];
    let present: Vec<u8> = planet
        .slots
        .iter()
        .flatten()
        .flatten()
        .map(|s| w.structs[(*s - 1) as usize].type_id)
        .collect();
    [14u8, 15, 16, 20]
        .into_iter()
        .find(|t| !present.contains(t))
        .unwrap()
}

fn nonce_for(core: &Core, action: &str, entity: &str) -> String {
    let v = ok(
        core,
        "structs_calculate_proof_of_work",
        json!({"action_type": action, "entity_id": entity}),
    );
    v["nonce"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| v["nonce"].to_string())
}

#[test]
fn a_build_goes_from_initiation_to_a_real_proof_and_comes_online() {
    let (core, src) = setup();
    let t = src.with_world_mut(|w| {
        make_ready(w, 1);
        free_type(w, 1)
    });
    let mut events = src.events().unwrap().subscribe();
    let v = ok(
        &core,
        "structs_action_build_struct",
        json!({"player_id": "1-1", "struct_type": t}),
    );
    assert_eq!(v["status"], "initiated");
    let hash = v["transaction_hash"].as_str().unwrap();
    assert_eq!(hash.len(), 64);
    assert!(hash.chars().all(|c| c.is_ascii_hexdigit()));
    let sid = v["struct_id"].as_str().unwrap().to_string();
    assert_eq!(v["next_step"]["tool"], "structs_calculate_proof_of_work");
    assert_eq!(v["next_step"]["arguments"]["entity_id"], sid);
    assert_eq!(v["estimated_completion"]["difficulty_now"], 64);
    let e = events.try_recv().unwrap();
    assert_eq!(e.category, "struct_block_build_start");
    assert_eq!(e.entity.to_string(), sid);
    assert_eq!(e.tx_hash.as_deref(), Some(hash));

    // The struct exists, being built.
    let q = ok(&core, "structs_query_struct", json!({"struct_id": sid}));
    assert_eq!(
        q["struct"]["structAttributes"]["status"], "1",
        "materialized"
    );
    assert_eq!(q["derived"]["status"], "materialized");
    assert_eq!(q["derived"]["status_flags"], json!(["materialized"]));

    // Too early: the proof is refused, and says why.
    let e = refused(
        &core,
        "structs_action_build_struct",
        json!({"player_id": "1-1", "struct_id": sid, "nonce": "7"}),
    );
    assert_eq!(missing(&e), vec!["proofOfWork"]);
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("proof invalid")
    );

    // Later the difficulty is low; the PoW tool finds a nonce the rules accept.
    src.clock().step(40_000);
    let nonce = nonce_for(&core, "struct_build_complete", &sid);
    let v = ok(
        &core,
        "structs_action_build_struct",
        json!({"player_id": "1-1", "struct_id": sid, "nonce": nonce}),
    );
    assert_eq!(v["status"], "completed");
    assert_eq!(v["online"], true);
    let q = ok(&core, "structs_query_struct", json!({"struct_id": sid}));
    assert_eq!(
        q["struct"]["structAttributes"]["status"], "7",
        "materialized, built, online"
    );
    assert_eq!(q["derived"]["status"], "online");
    assert_eq!(q["struct"]["structAttributes"]["isOnline"], true);
    src.with_world(|w| assert_eq!(w.check_integrity(), Vec::<String>::new()));
}

#[test]
fn refusals_name_what_is_missing() {
    let (core, src) = setup();
    let t = src.with_world_mut(|w| {
        make_ready(w, 1);
        make_ready(w, 2);
        let g = &mut w.players[0].grid;
        g.capacity = g.load + g.structs_load; // online, but nothing to spare
        free_type(w, 1)
    });
    let e = refused(
        &core,
        "structs_action_build_struct",
        json!({"player_id": "1-1", "struct_type": t}),
    );
    assert_eq!(missing(&e), vec!["sufficientPower"]);
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("insufficient power")
    );

    // Wrong location: another player's planet.
    let e = refused(
        &core,
        "structs_action_build_struct",
        json!({"player_id": "1-2", "struct_type": free_type_of(&src, 2), "location_id": "2-1"}),
    );
    assert_eq!(missing(&e), vec!["validLocation"]);
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("wrong location")
    );

    // Not enough charge: two builds in a row.
    let t2 = free_type_of(&src, 2);
    ok(
        &core,
        "structs_action_build_struct",
        json!({"player_id": "1-2", "struct_type": t2}),
    );
    src.clock().step(3);
    let other = [14u8, 15, 16, 20]
        .into_iter()
        .find(|x| *x != t2 && src.with_world(|w| free_type_ok(w, 2, *x)))
        .unwrap();
    let e = refused(
        &core,
        "structs_action_build_struct",
        json!({"player_id": "1-2", "struct_type": other}),
    );
    assert_eq!(missing(&e), vec!["sufficientCharge"]);
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("required charge 8 but 1-2 had 3")
    );
    // A fleet type in the planet's ambit is a wrong location too, caught before the rules.
    let e = call(
        &core,
        "structs_action_build_struct",
        json!({"player_id": "1-2", "struct_type": 3, "location_type": "planet"}),
    )
    .unwrap_err();
    assert_eq!(e["error"]["code"], "VALIDATION_INVALID_VALUE");
    src.with_world(|w| assert_eq!(w.check_integrity(), Vec::<String>::new()));
}

fn free_type_of(src: &SimSource, p: u64) -> u8 {
    src.with_world(|w| free_type(w, p))
}

fn free_type_ok(w: &World, p: u64, t: u8) -> bool {
    let planet = &w.planets[(w.players[(p - 1) as usize].planet - 1) as usize];
    !planet
        .slots
        .iter()
        .flatten()
        .flatten()
        .any(|s| w.structs[(*s - 1) as usize].type_id == t)
}

#[test]
fn mining_starts_reports_and_completes() {
    let (core, src) = setup();
    // An Ore Extractor of player 1, built and offline, on a planet with ore.
    let ex = src.with_world_mut(|w| {
        make_ready(w, 1);
        let planet = w.players[0].planet;
        w.planets[(planet - 1) as usize].grid.ore = 3;
        w.planets[(planet - 1) as usize]
            .slots
            .iter()
            .flatten()
            .flatten()
            .copied()
            .find(|s| w.structs[(*s - 1) as usize].type_id == 14)
    });
    let ex = match ex {
        Some(i) => {
            // Make it built and offline.
            src.with_world_mut(|w| {
                let s = &mut w.structs[(i - 1) as usize];
                let before = s.draw();
                s.built = true;
                s.online = false;
                s.block_start_ore_mine = 0;
                let after = s.draw();
                let g = &mut w.players[0].grid;
                g.structs_load = g.structs_load - before + after;
            });
            format!("5-{i}")
        }
        None => {
            let v = ok(
                &core,
                "structs_action_build_struct",
                json!({"player_id": "1-1", "struct_type": 14}),
            );
            let sid = v["struct_id"].as_str().unwrap().to_string();
            src.clock().step(40_000);
            let nonce = nonce_for(&core, "struct_build_complete", &sid);
            ok(
                &core,
                "structs_action_build_struct",
                json!({"player_id": "1-1", "struct_id": sid, "nonce": nonce}),
            );
            ok(
                &core,
                "structs_action_submit_transaction",
                json!({"transaction": {"messages": [{"@type": "/structs.structs.MsgStructDeactivate",
                    "structId": sid}]}}),
            );
            sid
        }
    };
    src.with_world_mut(|w| w.players[0].grid.last_action = 0);
    let v = ok(
        &core,
        "structs_action_mine_resources",
        json!({"extractor_id": ex, "player_id": "1-1"}),
    );
    assert_eq!(v["status"], "initiated", "{v}");
    assert_eq!(
        v["next_step"]["arguments"]["action_type"],
        "ore_miner_complete"
    );
    let v = ok(
        &core,
        "structs_action_mine_resources",
        json!({"extractor_id": ex}),
    );
    assert_eq!(v["status"], "mining");
    assert_eq!(v["estimated_completion"]["difficulty_now"], 64);
    src.clock().step(300_000);
    let nonce = nonce_for(&core, "ore_miner_complete", &ex);
    let stored = src.with_world(|w| w.players[0].grid.ore);
    let v = ok(
        &core,
        "structs_action_mine_resources",
        json!({"extractor_id": ex, "nonce": nonce}),
    );
    assert_eq!(v["status"], "completed");
    assert_eq!(v["ore_mined"], 1);
    assert_eq!(v["planet_ore_remaining"], 2);
    assert_eq!(src.with_world(|w| w.players[0].grid.ore), stored + 1);
    // Another player cannot mine with it, and is told whose it is.
    let e = call(
        &core,
        "structs_action_mine_resources",
        json!({"extractor_id": ex, "player_id": "1-2"}),
    )
    .unwrap_err();
    assert_eq!(e["error"]["code"], "VALIDATION_INVALID_VALUE", "{e}");
    assert_eq!(
        e["error"]["message"],
        format!("invalid argument player_id: {ex} belongs to 1-1, not 1-2"),
        "{e}"
    );
    // Not an extractor.
    let e = call(
        &core,
        "structs_action_mine_resources",
        json!({"extractor_id": "5-1"}),
    )
    .unwrap_err();
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not an Ore Extractor")
    );
}

#[test]
fn an_attack_through_the_tool_changes_health_and_reports_the_breakdown() {
    let (core, src) = setup();
    // A command ship and an enemy struct in its ambit, the fleet moved to the target's
    // planet.
    let (attacker, target, planet, fleet) = src.with_world_mut(|w| {
        for a in 1..=w.players.len() as u64 {
            let cmd = w.fleets[(w.players[(a - 1) as usize].fleet - 1) as usize].command_struct;
            let ambit = w.structs[(cmd - 1) as usize].ambit;
            let found = w.structs.iter().enumerate().find(|(_, s)| {
                s.owner != a
                    && s.built
                    && s.ambit == ambit
                    && matches!(s.location, Location::Planet(_))
            });
            if let Some((ti, t)) = found {
                let (ti, owner) = (ti as u64 + 1, t.owner);
                make_ready(w, a);
                make_ready(w, owner);
                return (
                    cmd,
                    ti,
                    w.players[(owner - 1) as usize].planet,
                    w.players[(a - 1) as usize].fleet,
                );
            }
        }
        panic!("no matchup")
    });
    let attacker = format!("5-{attacker}");
    let target = format!("5-{target}");
    let attacker_owner = ok(
        &core,
        "structs_query_struct",
        json!({"struct_id": attacker}),
    )["struct"]["Struct"]["owner"]
        .as_str()
        .unwrap()
        .to_string();
    let e = refused(
        &core,
        "structs_action_attack",
        json!({"attacker_id": attacker, "target_id": target}),
    );
    assert!(missing(&e).contains(&"targetInRange".to_string()));
    let other = if attacker_owner == "1-1" {
        "1-2"
    } else {
        "1-1"
    };
    let e = call(
        &core,
        "structs_action_attack",
        json!({"attacker_id": attacker, "target_id": target, "player_id": other}),
    )
    .unwrap_err();
    assert_eq!(
        e["error"]["message"],
        format!("invalid argument player_id: {attacker} belongs to {attacker_owner}, not {other}"),
        "{e}"
    );
    ok(
        &core,
        "structs_action_submit_transaction",
        json!({"transaction": {"body": {"messages": [{"@type": "/structs.structs.MsgFleetMove",
            "fleetId": format!("9-{fleet}"), "destinationLocationId": format!("2-{planet}")}]}}}),
    );
    // The move spent the charge; let it refill.
    src.clock().step(10);
    let before = ok(&core, "structs_query_struct", json!({"struct_id": target}));
    let v = ok(
        &core,
        "structs_action_attack",
        json!({"attacker_id": attacker, "target_id": target, "weapon_type": "primary"}),
    );
    assert_eq!(v["status"], "completed");
    let after = ok(&core, "structs_query_struct", json!({"struct_id": target}));
    let h = |v: &Value| -> u64 {
        v["struct"]["structAttributes"]["health"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap()
    };
    assert_eq!(
        h(&before) - h(&after),
        v["damage_to_target"].as_u64().unwrap()
    );
    assert_eq!(v["target_health_after"].as_u64().unwrap(), h(&after));
    assert!(v["estimated_damage"].as_f64().unwrap() >= 0.0);
    for k in ["evasion", "volley", "counters", "blocking", "recoil"] {
        assert!(v["breakdown"].get(k).is_some(), "{k} in {}", v["breakdown"]);
    }
    src.with_world(|w| assert_eq!(w.check_integrity(), Vec::<String>::new()));
}

#[test]
fn a_transaction_applies_all_its_messages_or_none() {
    let (core, src) = setup();
    let t = src.with_world_mut(|w| {
        make_ready(w, 1);
        free_type(w, 1)
    });
    let snapshot = |src: &SimSource| src.with_world(|w| format!("{:?}", w.players[0]));
    let before = snapshot(&src);
    let count = src.with_world(|w| w.structs.len());
    let address = src.with_world(|w| w.address_of(1).unwrap().to_string());
    // The build is fine on its own; the second message (a second build at once) is
    // refused for charge, so neither happens.
    let tx = json!({"body": {"messages": [
        {"@type": "/structs.structs.MsgStructBuildInitiate", "creator": address,
         "playerId": "1-1", "structTypeId": t.to_string()},
        {"@type": "/structs.structs.MsgStructBuildInitiate", "creator": address,
         "playerId": "1-1", "structTypeId": "3"},
    ]}});
    let e = refused(
        &core,
        "structs_action_submit_transaction",
        json!({"transaction": tx}),
    );
    assert_eq!(e["error"]["details"]["message_index"], 1);
    assert_eq!(snapshot(&src), before);
    assert_eq!(src.with_world(|w| w.structs.len()), count);

    // Validation says the same without applying anything: shape is fine, the second
    // message would be refused.
    let v = ok(
        &core,
        "structs_validate_transaction",
        json!({"transaction": tx}),
    );
    assert_eq!(v["valid"], true);
    assert_eq!(v["messages"][0]["requirements_met"], true);
    // (Checked one by one against the current state, the second message is a fleet
    // build the player can also afford; the refusal came from the first one's charge.)
    assert!(
        v["warnings"][0]["message"]
            .as_str()
            .unwrap()
            .contains("all or none")
    );

    // Malformed messages are errors with their path.
    let bad = json!({"messages": [{"@type": "/structs.structs.MsgStructAttack", "structId": "1-1",
        "targetStructId": "5-2"}]});
    let v = ok(
        &core,
        "structs_validate_transaction",
        json!({"transaction": bad}),
    );
    assert_eq!(v["valid"], false);
    assert_eq!(v["errors"][0]["field"], "transaction.messages[0].structId");
    let e = call(
        &core,
        "structs_action_submit_transaction",
        json!({"transaction": bad}),
    )
    .unwrap_err();
    assert_eq!(e["error"]["code"], "VALIDATION_WRONG_ENTITY_TYPE");
}

#[test]
fn validate_action_reports_requirements_and_takes_assumptions() {
    let (core, src) = setup();
    let t = src.with_world_mut(|w| {
        make_ready(w, 1);
        free_type(w, 1)
    });
    let args = |state: Value| {
        json!({"action_type": "MsgStructBuildInitiate",
            "parameters": {"player_id": "1-1", "struct_type_id": t},
            "game_state": state})
    };
    let v = ok(&core, "structs_validate_action", args(json!({})));
    assert_eq!(v["requirements_met"], true, "{v}");
    assert!(v["requirements"].as_array().unwrap().len() >= 5);
    let v = ok(
        &core,
        "structs_validate_action",
        args(json!({"charge": 2, "available_capacity": 10})),
    );
    assert_eq!(v["requirements_met"], false);
    let names: Vec<&str> = v["missing_requirements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["requirement"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["sufficientCharge", "sufficientPower"]);
    // Short names work; bad parameters are errors, not refusals.
    let v = ok(
        &core,
        "structs_validate_action",
        json!({"action_type": "struct_activate", "parameters": {"struct_id": "1-1"}}),
    );
    assert_eq!(v["valid"], false);
    assert_eq!(v["errors"][0]["field"], "parameters.structId");
    let e = call(
        &core,
        "structs_validate_action",
        json!({"action_type": "MsgTeleport", "parameters": {}}),
    )
    .unwrap_err();
    assert_eq!(e["error"]["details"]["field"], "action_type");
    let e = call(
        &core,
        "structs_validate_action",
        json!({"action_type": "MsgStructActivate", "parameters": {}, "game_state": {"mood": 1}}),
    )
    .unwrap_err();
    assert_eq!(e["error"]["code"], "VALIDATION_UNKNOWN_FIELD");
}
