//! The calculation tools through `Core::call`: the corpus's worked examples (1 g in a
//! reactor is 1 kW and in a World Engine 10 kW; mining difficulty 14000; an Ore
//! Extractor's build charge and draws; damage breakdowns for known matchups), figures
//! read from the sim's entities, and a structured error for each bad input.

mod support;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use structs_console::entity::EntityId;
use structs_console::pow;
use structs_console::source::sim::{SimSource, WorldConfig};
use structs_console::source::{BoxFuture, GameSource, ListQuery, Page, SourceInfo};
use structs_console::{Core, ToolError};
use support::calls::blocking::{call, ok};
use support::sim::{fixed_clock, paused};

/// The sim with some entities' fields overwritten (merged in, object by object).
struct Patched {
    inner: SimSource,
    patches: Mutex<HashMap<EntityId, Value>>,
}

fn merge(into: &mut Value, patch: &Value) {
    match (into, patch) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                merge(a.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (slot, v) => *slot = v.clone(),
    }
}

impl GameSource for Patched {
    fn info(&self) -> SourceInfo {
        self.inner.info()
    }

    fn get(&self, id: EntityId) -> BoxFuture<'_, Result<Option<Value>, ToolError>> {
        Box::pin(async move {
            let mut v = self.inner.get(id).await?;
            if let (Some(v), Some(p)) = (v.as_mut(), self.patches.lock().unwrap().get(&id)) {
                merge(v, p);
            }
            Ok(v)
        })
    }

    fn list(&self, query: ListQuery) -> BoxFuture<'_, Result<Page, ToolError>> {
        self.inner.list(query)
    }
}

const HEIGHT: u64 = WorldConfig::DEFAULT_HEIGHT;

fn setup() -> (Core, Arc<Patched>) {
    let source = Arc::new(Patched {
        inner: paused(WorldConfig::demo()),
        patches: Mutex::new(HashMap::new()),
    });
    let core = structs_console::assembly::build_with_clock(source.clone(), fixed_clock());
    (core, source)
}

fn core() -> Core {
    setup().0
}

/// The error's code and field.
fn err(core: &Core, tool: &str, args: Value) -> (String, String, String) {
    let e = call(core, tool, args.clone())
        .map(|v| panic!("{tool} {args} succeeded: {v}"))
        .unwrap_err();
    let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
    (
        s(&e["error"]["code"]),
        s(&e["error"]["details"]["field"]),
        s(&e["error"]["message"]),
    )
}

/// The first struct of the sim of this type, with its entity.
fn find_struct(core: &Core, type_id: u64) -> (String, Value) {
    for index in 1..2000 {
        let id = format!("5-{index}");
        let Ok(v) = call(core, "structs_query_entity", json!({ "id": id })) else {
            break;
        };
        let e = &v["entity"];
        if e["Struct"]["type"] == json!(type_id.to_string()) {
            return (id, e.clone());
        }
    }
    panic!("no struct of type {type_id} in the demo world");
}

fn approx(v: &Value, want: f64) -> bool {
    v.as_f64().is_some_and(|x| (x - want).abs() < 1e-9)
}

// ---------------------------------------------------------------------------------
// structs_calculate_power
// ---------------------------------------------------------------------------------

#[test]
fn one_gram_in_a_reactor_is_one_kilowatt() {
    let c = core();
    let v = ok(&c, "structs_calculate_power", json!({"alpha_matter": 1}));
    assert_eq!(v["power_generated"], 1);
    assert_eq!(v["power_generated_mw"], 1_000_000);
    assert_eq!(v["conversion_rate"], 1);
    assert_eq!(v["alpha_matter_ualpha"], 1_000_000);
    assert_eq!(v["generator_type"], "reactor");
    assert!(v["formula"].as_str().unwrap().contains("× 1"));
    // 96% to the infuser at the default 4% commission (energy.md's 3 g example).
    let v = ok(
        &c,
        "structs_calculate_power",
        json!({"alpha_matter": 3, "generator_type": "reactor"}),
    );
    assert_eq!(v["reactor"]["player_share_mw"], 2_880_000);
    assert_eq!(v["reactor"]["reactor_share_mw"], 120_000);
    assert!(v["explanation"].as_str().unwrap().contains("3 kW"));
}

#[test]
fn generators_convert_at_their_rates() {
    let c = core();
    for (generator, rate, type_id) in [
        (json!("fieldGenerator"), 2, 20),
        (json!("continental_power_plant"), 5, 21),
        (json!("worldEngine"), 10, 22),
        (json!("world_engine"), 10, 22),
        (json!(22), 10, 22),
    ] {
        let v = ok(
            &c,
            "structs_calculate_power",
            json!({"alpha_matter": 1, "generator_type": generator}),
        );
        assert_eq!(v["power_generated"], rate, "{generator}");
        assert_eq!(v["power_generated_mw"], rate * 1_000_000);
        assert_eq!(v["conversion_rate"], rate);
        assert_eq!(v["generator"]["struct_type_id"], type_id);
        assert_eq!(v["generator"]["reversible"], false);
        assert!(v["generator"]["passive_draw_mw"].as_u64().unwrap() > 0);
    }
    // Exact in micrograms: 2.5 g in a field generator, 1 ualpha in a world engine.
    let v = ok(
        &c,
        "structs_calculate_power",
        json!({"alpha_matter": 2.5, "generator_type": "fieldGenerator"}),
    );
    assert_eq!(
        (
            v["power_generated"].clone(),
            v["power_generated_mw"].clone()
        ),
        (json!(5), json!(5_000_000))
    );
    let v = ok(
        &c,
        "structs_calculate_power",
        json!({"alpha_matter": 0.000001, "generator_type": "worldEngine"}),
    );
    assert_eq!(v["power_generated_mw"], 10);
    assert!(approx(&v["power_generated"], 0.00001));
    assert_eq!(v["generator_type"], "worldEngine");
}

#[test]
fn power_errors() {
    let c = core();
    let t = "structs_calculate_power";
    assert_eq!(
        err(&c, t, json!({"alpha_matter": 0.0000001})).0,
        "VALIDATION_INVALID_VALUE"
    );
    let (code, field, _) = err(&c, t, json!({"alpha_matter": -1}));
    assert_eq!(
        (code.as_str(), field.as_str()),
        ("VALIDATION_OUT_OF_RANGE", "alpha_matter")
    );
    let (code, field, _) = err(&c, t, json!({}));
    assert_eq!(
        (code.as_str(), field.as_str()),
        ("VALIDATION_MISSING_FIELD", "alpha_matter")
    );
    let (_, field, _) = err(
        &c,
        t,
        json!({"alpha_matter": 1, "generator_type": "battery"}),
    );
    assert_eq!(field, "generator_type");
    let (code, _, _) = err(&c, t, json!({"alpha_matter": 1, "grams": 2}));
    assert_eq!(code, "VALIDATION_UNKNOWN_FIELD");
    let (code, _, _) = err(&c, t, json!({"alpha_matter": "1"}));
    assert_eq!(code, "VALIDATION_WRONG_TYPE");
}

// ---------------------------------------------------------------------------------
// structs_calculate_mining
// ---------------------------------------------------------------------------------

#[test]
fn an_extractor_type_mines_one_ore_at_difficulty_range_14000() {
    let c = core();
    for t in [json!(14), json!("Ore Extractor"), json!("ore_extractor")] {
        let v = ok(&c, "structs_calculate_mining", json!({ "struct_type": t }));
        assert_eq!(v["mining_difficulty_range"], 14000);
        assert_eq!(v["ore_per_completion"], 1);
        assert_eq!(v["alpha_per_refined_ore_ualpha"], 1_000_000);
        assert_eq!(v["alpha_per_refined_ore_grams"], 1);
        assert_eq!(v["struct_type"]["name"], "Ore Extractor");
    }
    // Difficulty 3 after about 17 hours (resources.md).
    let v = ok(&c, "structs_calculate_mining", json!({"struct_type": 14}));
    let d3 = &v["mining"]["milestones_from_start"]["difficulty_3"];
    let hours = d3["hours"].as_f64().unwrap();
    assert!((16.0..18.5).contains(&hours), "{hours}");
    let age = d3["age_blocks"].as_u64().unwrap();
    assert_eq!(pow::difficulty(age, 14000), 3);
    assert!(pow::difficulty(age - 1, 14000) > 3);
}

#[test]
fn an_extractor_is_read_from_the_source() {
    let (c, src) = setup();
    let (id, e) = find_struct(&c, 14);
    let planet = e["Struct"]["locationId"].as_str().unwrap().to_string();
    let planet_id = EntityId::parse(&planet).unwrap();
    // Make sure its planet has ore and the extractor is between cycles (offline
    // extractors are; online ones mine from their activation).
    src.patches
        .lock()
        .unwrap()
        .insert(planet_id, json!({"gridAttributes": {"ore": "4"}}));
    src.patches.lock().unwrap().insert(
        EntityId::parse(&id).unwrap(),
        json!({"structAttributes": {"blockStartOreMine": "0"}}),
    );
    let v = ok(
        &c,
        "structs_calculate_mining",
        json!({ "extractor_id": id }),
    );
    assert_eq!(v["extractor_id"], json!(id));
    assert_eq!(v["mining"]["active"], false);
    assert!(
        v["mining"]["reason"]
            .as_str()
            .unwrap()
            .contains("not mining")
    );
    assert_eq!(v["planet"]["id"], json!(planet));
    assert_eq!(v["planet"]["ore_remaining"], 4);
    assert_eq!(v["planet"]["completions_left"], 4);

    // Mining for 1,000 blocks: the difficulty of that age.
    let struct_id = EntityId::parse(&id).unwrap();
    src.patches.lock().unwrap().insert(
        struct_id,
        json!({"structAttributes": {"blockStartOreMine": (HEIGHT - 1000).to_string()}}),
    );
    let v = ok(
        &c,
        "structs_calculate_mining",
        json!({ "extractor_id": id }),
    );
    let m = &v["mining"];
    let d = pow::difficulty(1000, 14000);
    assert_eq!(m["active"], true);
    assert_eq!(m["age"], 1000);
    assert_eq!(m["current_difficulty"], d);
    assert_eq!(m["expected_hashes"], pow::expected_hashes(d));
    let d3 = &m["milestones"]["difficulty_3"];
    assert_eq!(
        d3["blocks_left"].as_u64().unwrap(),
        d3["age_blocks"].as_u64().unwrap() - 1000
    );
    assert!(
        v["explanation"]
            .as_str()
            .unwrap()
            .contains(&format!("it is {d} now"))
    );
    // The arguments override the entity.
    let v = ok(
        &c,
        "structs_calculate_mining",
        json!({"extractor_id": id, "block_start": 5, "current_block": 105}),
    );
    assert_eq!(
        v["mining"]["current_difficulty"],
        pow::difficulty(100, 14000)
    );
}

#[test]
fn a_refinery_reports_its_refining_difficulty() {
    let (c, src) = setup();
    let (extractor, e) = find_struct(&c, 14);
    let planet = EntityId::parse(e["Struct"]["locationId"].as_str().unwrap()).unwrap();
    src.patches
        .lock()
        .unwrap()
        .insert(planet, json!({"gridAttributes": {"ore": "2"}}));
    let (refinery, _) = find_struct(&c, 15);
    src.patches.lock().unwrap().insert(
        EntityId::parse(&refinery).unwrap(),
        json!({"structAttributes": {"blockStartOreRefine": (HEIGHT - 50).to_string()}}),
    );
    let v = ok(
        &c,
        "structs_calculate_mining",
        json!({"extractor_id": extractor, "refinery_id": refinery}),
    );
    let r = &v["refining"];
    assert_eq!(r["refining_difficulty_range"], 28000);
    assert_eq!(r["state"]["current_difficulty"], pow::difficulty(50, 28000));
}

#[test]
fn mining_errors() {
    let (c, src) = setup();
    let t = "structs_calculate_mining";
    // A struct that is not an extractor is named with its type.
    let (cmd, _) = find_struct(&c, 1);
    let (code, field, message) = err(&c, t, json!({ "extractor_id": cmd }));
    assert_eq!(
        (code.as_str(), field.as_str()),
        ("VALIDATION_INVALID_VALUE", "extractor_id")
    );
    assert!(
        message.contains("Command Ship") && message.contains("not an ore extractor"),
        "{message}"
    );
    // A planet with no ore.
    let (extractor, e) = find_struct(&c, 14);
    let planet = e["Struct"]["locationId"].as_str().unwrap().to_string();
    src.patches.lock().unwrap().insert(
        EntityId::parse(&planet).unwrap(),
        json!({"gridAttributes": {"ore": "0"}}),
    );
    let (code, field, message) = err(&c, t, json!({ "extractor_id": extractor }));
    assert_eq!(
        (code.as_str(), field.as_str()),
        ("VALIDATION_INVALID_VALUE", "extractor_id")
    );
    assert!(
        message.contains(&planet) && message.contains("no ore"),
        "{message}"
    );
    let (_, field, _) = err(&c, t, json!({"struct_type": 14, "planet_id": planet}));
    assert_eq!(field, "planet_id");
    // A type that does not mine, neither or both, wrong kinds, missing entities.
    let (_, field, message) = err(&c, t, json!({"struct_type": "Tank"}));
    assert_eq!(field, "struct_type");
    assert!(message.contains("does not mine"), "{message}");
    assert_eq!(err(&c, t, json!({})).0, "VALIDATION_MISSING_FIELD");
    assert_eq!(
        err(&c, t, json!({"extractor_id": extractor, "struct_type": 14})).1,
        "struct_type"
    );
    assert_eq!(
        err(&c, t, json!({"extractor_id": "2-1"})).0,
        "VALIDATION_WRONG_ENTITY_TYPE"
    );
    assert_eq!(
        err(&c, t, json!({"extractor_id": "5-99999"})).0,
        "RESOURCE_NOT_FOUND"
    );
    let (code, field, _) = err(&c, t, json!({"struct_type": 14, "refinery_id": cmd}));
    assert_eq!(
        (code.as_str(), field.as_str()),
        ("VALIDATION_INVALID_VALUE", "refinery_id")
    );
    assert_eq!(
        err(&c, t, json!({"struct_type": 14, "planet_id": "1-1"})).0,
        "VALIDATION_WRONG_ENTITY_TYPE"
    );
}

// ---------------------------------------------------------------------------------
// structs_calculate_cost
// ---------------------------------------------------------------------------------

#[test]
fn an_ore_extractor_costs_charge_and_power_not_alpha() {
    let c = core();
    for t in [json!(14), json!("Ore Extractor"), json!("oreExtractor")] {
        let v = ok(
            &c,
            "structs_calculate_cost",
            json!({"struct_type": t, "location_type": "planet"}),
        );
        let cost = &v["cost"];
        assert_eq!(cost["charge"], 8);
        assert_eq!(cost["build_draw_mw"], 500_000);
        assert_eq!(cost["build_draw_w"], 500);
        assert_eq!(cost["passive_draw_mw"], 500_000);
        assert_eq!(cost["activate_charge"], 1);
        assert_eq!(cost["alpha_matter"], 0);
        assert!(cost["note"].as_str().unwrap().contains("not Alpha Matter"));
        assert_eq!(v["build_difficulty"], 700);
        assert_eq!(v["location_type"], "planet");
    }
    // The build proof falls to 3 and to 8 at the ages the chain's rule gives.
    let v = ok(
        &c,
        "structs_calculate_cost",
        json!({"struct_type": "Command Ship"}),
    );
    assert_eq!(v["cost"]["build_draw_mw"], 50_000);
    for d in [3, 8] {
        let m = &v["build_proof"][format!("difficulty_{d}")];
        let age = m["age_blocks"].as_u64().unwrap();
        assert!(pow::difficulty(age, 200) <= d && pow::difficulty(age - 1, 200) > d);
        assert!(approx(&m["seconds"], age as f64 * 6.0));
    }
}

#[test]
fn cost_errors() {
    let c = core();
    let t = "structs_calculate_cost";
    let (code, field, message) = err(&c, t, json!({"struct_type": 14, "location_type": "fleet"}));
    assert_eq!(
        (code.as_str(), field.as_str()),
        ("VALIDATION_INVALID_VALUE", "location_type")
    );
    assert!(
        message.contains("Ore Extractor is a planet struct"),
        "{message}"
    );
    let (_, _, message) = err(
        &c,
        t,
        json!({"struct_type": "Tank", "location_type": "planet"}),
    );
    assert!(message.contains("in a fleet"), "{message}");
    let (code, field, _) = err(&c, t, json!({"struct_type": "Death Star"}));
    assert_eq!(
        (code.as_str(), field.as_str()),
        ("VALIDATION_INVALID_VALUE", "struct_type")
    );
    assert_eq!(
        err(&c, t, json!({"struct_type": 23})).0,
        "VALIDATION_OUT_OF_RANGE"
    );
    assert_eq!(err(&c, t, json!({})).0, "VALIDATION_MISSING_FIELD");
    assert_eq!(
        err(&c, t, json!({"struct_type": 1, "location_type": "moon"})).1,
        "location_type"
    );
}

// ---------------------------------------------------------------------------------
// structs_calculate_damage
// ---------------------------------------------------------------------------------

#[test]
fn a_starfighter_attack_run_on_a_frigate() {
    let c = core();
    let args = json!({
        "attacker": {"struct_type": "Starfighter", "weapon": "secondary"},
        "defender": {"struct_type": "Frigate"},
        "block_height": 5000, "nonce": 7
    });
    let v = ok(&c, "structs_calculate_damage", args.clone());
    // 3 shots of 1, the first guaranteed, the others 1/3: 1 + 2/3 expected.
    let e = &v["expected"];
    assert!(approx(&e["damage_to_target"], 5.0 / 3.0), "{e}");
    assert!(approx(&e["target_destroyed"], 1.0 / 9.0));
    assert!(approx(&e["damage_to_attacker"], 8.0 / 9.0));
    assert_eq!(v["attacker"]["ambit"], "space");
    assert_eq!(v["attacker"]["weapon"]["guaranteed_shots"], 1);
    let o = &v["sample"]["outcome"];
    let shots = o["volley"]["shots"].as_array().unwrap();
    assert_eq!(shots.len(), 3);
    assert_eq!(
        (shots[0]["guaranteed"].clone(), shots[0]["hit"].clone()),
        (json!(true), json!(true))
    );
    assert!(shots[1..].iter().all(|s| s["rolled"] == true));
    let rolls = o["rolls"].as_u64().unwrap();
    assert_eq!(rolls, 2);
    assert_eq!(v["sample"]["dice"]["nonce_after"], 7 + rolls);
    // The same block and nonce give the same sample.
    let again = ok(&c, "structs_calculate_damage", args);
    assert_eq!(again["sample"], v["sample"]);
    assert!(v["formula"].as_str().unwrap().contains("guaranteed"));
    assert!(v["explanation"].as_str().unwrap().contains("Starfighter"));
}

#[test]
fn armour_piercing_and_armour_against_a_tank() {
    let c = core();
    let damage = |attacker: &str| {
        let v = ok(
            &c,
            "structs_calculate_damage",
            json!({"attacker": {"struct_type": attacker}, "defender": {"struct_type": "Tank"}}),
        );
        (v["expected"]["damage_to_target"].as_f64().unwrap(), v)
    };
    let (d, v) = damage("Battleship");
    assert_eq!(d, 2.0);
    let volley = &v["sample"]["outcome"]["volley"];
    assert_eq!(volley["armour_piercing"], true);
    assert_eq!(
        (
            volley["reduction"].clone(),
            volley["reduction_applied"].clone()
        ),
        (json!(1), json!(0))
    );
    let (d, v) = damage("Mobile Artillery");
    assert_eq!(d, 1.0);
    assert_eq!(v["sample"]["outcome"]["volley"]["reduction_applied"], 1);
    // Mobile Artillery's indirect fire cannot be countered (attackCounterable is false);
    // a Tank does counter a Tank (same ambit, 1), and a Battleship in space is out of a
    // Tank's reach.
    assert!(
        approx(&v["expected"]["damage_to_attacker"], 0.0),
        "{}",
        v["sample"]
    );
    assert!(
        v["sample"]["outcome"]["counters"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    let (_, v) = damage("Tank");
    assert!(approx(&v["expected"]["damage_to_attacker"], 1.0));
    let (_, v) = damage("Battleship");
    assert!(approx(&v["expected"]["damage_to_attacker"], 0.0));
}

#[test]
fn signal_jamming_blocking_and_planetary_defenses() {
    let c = core();
    // Guided fire at a Pursuit Fighter: evaded 2 times in 3.
    let v = ok(
        &c,
        "structs_calculate_damage",
        json!({"attacker": {"struct_type": "SAM Launcher"}, "defender": {"struct_type": "Pursuit Fighter"}}),
    );
    assert!(approx(&v["expected"]["evaded"], 2.0 / 3.0));
    assert!(approx(&v["expected"]["damage_to_target"], 2.0 / 3.0));
    // A same-ambit defender blocks every volley and takes it; a cross-ambit one counters.
    let v = ok(
        &c,
        "structs_calculate_damage",
        json!({
            "attacker": {"struct_type": "Tank"},
            "defender": {"struct_type": "Tank"},
            "blockers": [{"struct_type": "Battleship"}, {"struct_type": "Mobile Artillery"}]
        }),
    );
    let e = &v["expected"];
    assert!(approx(&e["blocked"], 1.0) && approx(&e["damage_to_target"], 0.0));
    assert!(approx(&e["damage_to_blocker"], 2.0));
    let o = &v["sample"]["outcome"];
    assert_eq!(o["blocking"]["by"], "blocker-2");
    assert_eq!(o["counters"][0]["by"], "blocker-1");
    assert_eq!(o["counters"][0]["same_ambit"], false);
    assert_eq!(v["blockers"][0]["ambit"], "space");
    // Battleship counter 1 + target counter 1.
    assert!(approx(&e["damage_to_attacker"], 2.0));
    // Cannons and interceptors for a planetary target: a Command Ship's guided shot at
    // an Ore Extractor faces 1 - (2/3)^2 = 5/9 interception, then 2 cannon damage.
    let v = ok(
        &c,
        "structs_calculate_damage",
        json!({
            "attacker": {"struct_type": 1},
            "defender": {"struct_type": 14, "ambit": "land"},
            "planet": {"cannon_damage": 2, "interceptors": 2}
        }),
    );
    assert_eq!(v["attacker"]["ambit"], "land");
    assert!(approx(&v["expected"]["evaded"], 5.0 / 9.0));
    assert!(approx(&v["expected"]["damage_to_attacker"], 2.0));
    assert_eq!(v["sample"]["outcome"]["cannon"]["fired"], true);
}

#[test]
fn overrides_and_samples() {
    let c = core();
    let v = ok(
        &c,
        "structs_calculate_damage",
        json!({
            "attacker": {"struct_type": "Tank", "shots": 4, "shot_success": {"numerator": 1, "denominator": 2},
                         "recoil_damage": 1, "health": 2},
            "defender": {"struct_type": "Tank", "attack_reduction": 0, "max_health": 20},
            "samples": 400
        }),
    );
    // 4 shots of 2 at 1/2: 4 expected.
    assert!(
        approx(&v["expected"]["damage_to_target"], 4.0),
        "{}",
        v["expected"]
    );
    assert_eq!(v["defender"]["health"], 20);
    let mean = v["samples"]["mean_damage_to_target"].as_f64().unwrap();
    assert!((mean - 4.0).abs() < 0.4, "{mean}");
    assert_eq!(v["samples"]["count"], 400);
}

#[test]
fn damage_errors() {
    let c = core();
    let t = "structs_calculate_damage";
    // Out of reach: both ambits named.
    let (code, field, message) = err(
        &c,
        t,
        json!({"attacker": {"struct_type": "Tank"}, "defender": {"struct_type": "Starfighter"}}),
    );
    assert_eq!(
        (code.as_str(), field.as_str()),
        ("VALIDATION_INVALID_VALUE", "defender.ambit")
    );
    assert!(
        message.contains("land") && message.contains("space"),
        "{message}"
    );
    // No such weapon.
    let (_, field, message) = err(
        &c,
        t,
        json!({"attacker": {"struct_type": "Tank", "weapon": "secondary"}, "defender": {"struct_type": "Tank"}}),
    );
    assert_eq!(field, "attacker.weapon");
    assert!(message.contains("no secondary weapon"), "{message}");
    // An ambit the type cannot be in; health over max; planet on a fleet target.
    let (_, field, message) = err(
        &c,
        t,
        json!({"attacker": {"struct_type": "Tank", "ambit": "space"}, "defender": {"struct_type": "Tank"}}),
    );
    assert_eq!(field, "attacker.ambit");
    assert!(message.contains("land"), "{message}");
    let (code, field, _) = err(
        &c,
        t,
        json!({"attacker": {"struct_type": "Tank"}, "defender": {"struct_type": "Tank", "health": 4}}),
    );
    assert_eq!(
        (code.as_str(), field.as_str()),
        ("VALIDATION_OUT_OF_RANGE", "defender.health")
    );
    let (_, field, _) = err(
        &c,
        t,
        json!({"attacker": {"struct_type": "Tank"}, "defender": {"struct_type": "Tank"},
               "planet": {"cannon_damage": 1}}),
    );
    assert_eq!(field, "planet");
    // A stealthed Submersible from another ambit.
    let (_, _, message) = err(
        &c,
        t,
        json!({"attacker": {"struct_type": "Battleship"}, "defender": {"struct_type": "Submersible"}}),
    );
    assert!(message.contains("stealthed"), "{message}");
    // The sample's player must be a player.
    let (code, field, _) = err(
        &c,
        t,
        json!({"attacker": {"struct_type": 9}, "defender": {"struct_type": 9}, "player_id": "2-1"}),
    );
    assert_eq!(
        (code.as_str(), field.as_str()),
        ("VALIDATION_WRONG_ENTITY_TYPE", "player_id")
    );
    // Schema: too many shots, unknown fields, a missing defender.
    assert_eq!(
        err(
            &c,
            t,
            json!({"attacker": {"struct_type": 9, "shots": 9}, "defender": {"struct_type": 9}})
        )
        .0,
        "VALIDATION_OUT_OF_RANGE"
    );
    assert_eq!(
        err(
            &c,
            t,
            json!({"attacker": {"struct_type": 9, "speed": 1}, "defender": {"struct_type": 9}})
        )
        .0,
        "VALIDATION_UNKNOWN_FIELD"
    );
    assert_eq!(
        err(&c, t, json!({"attacker": {"struct_type": 9}})).0,
        "VALIDATION_MISSING_FIELD"
    );
    let (_, field, _) = err(
        &c,
        t,
        json!({"attacker": {"struct_type": 9, "guaranteed_shots": 2}, "defender": {"struct_type": 9}}),
    );
    assert_eq!(field, "attacker.guaranteed_shots");
}

// ---------------------------------------------------------------------------------
// structs_calculate_trade_value
// ---------------------------------------------------------------------------------

#[test]
fn trade_values_at_the_reactor_and_refining_rates() {
    let c = core();
    let t = "structs_calculate_trade_value";
    let v = ok(&c, t, json!({"resource": "alpha_matter", "amount": 2.5}));
    assert_eq!(v["value"]["energy_kw"], 2.5);
    assert_eq!(v["value"]["energy_mw"], 2_500_000);
    assert_eq!(v["value"]["alpha_matter_ualpha"], 2_500_000);
    assert_eq!(v["market_rate"]["market"], "reactor");
    assert_eq!(v["timestamp"], "2026-11-21T12:00:00Z");
    assert!(v["formula"].as_str().unwrap().contains("reactor"));
    let v = ok(&c, t, json!({"resource": "ore", "amount": 3}));
    assert_eq!(v["value"]["alpha_matter_grams"], 3);
    assert_eq!(v["value"]["alpha_matter_ualpha"], 3_000_000);
    assert_eq!(v["value"]["energy_kw"], 3);
    let v = ok(&c, t, json!({"resource": "watts", "amount": 1500}));
    assert_eq!(v["value"]["alpha_matter_grams"], 1.5);
    assert_eq!(v["value"]["energy_mw"], 1_500_000);
}

#[test]
fn trade_value_at_a_providers_rate() {
    let c = core();
    let t = "structs_calculate_trade_value";
    let p = ok(&c, "structs_query_entity", json!({"id": "10-1"}));
    let rate: u64 = p["entity"]["Provider"]["rate"]["amount"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let v = ok(
        &c,
        t,
        json!({"resource": "energy", "amount": 2, "market": "10-1"}),
    );
    assert_eq!(v["market_rate"]["amount"], rate);
    assert_eq!(v["market_rate"]["denom"], "ualpha");
    assert_eq!(v["value"]["market_cost_per_block"], 2_000 * rate);
    let v = ok(
        &c,
        t,
        json!({"resource": "alpha_matter", "amount": 1, "market": "10-1"}),
    );
    assert_eq!(
        v["value"]["market_capacity_mw_for_one_block"],
        1_000_000 / rate
    );
    assert_eq!(v["market_rate"]["reactor_break_even_blocks"], rate);
}

#[test]
fn trade_value_errors() {
    let c = core();
    let t = "structs_calculate_trade_value";
    assert_eq!(
        err(&c, t, json!({"resource": "gold", "amount": 1})).1,
        "resource"
    );
    assert_eq!(
        err(&c, t, json!({"resource": "ore", "amount": -2})).0,
        "VALIDATION_OUT_OF_RANGE"
    );
    assert_eq!(
        err(&c, t, json!({"resource": "watts", "amount": 0.0001})).1,
        "amount"
    );
    assert_eq!(
        err(
            &c,
            t,
            json!({"resource": "ore", "amount": 1, "market": "10-99999"})
        )
        .0,
        "RESOURCE_NOT_FOUND"
    );
    assert_eq!(
        err(
            &c,
            t,
            json!({"resource": "ore", "amount": 1, "market": "1-1"})
        )
        .0,
        "VALIDATION_WRONG_ENTITY_TYPE"
    );
    let (code, field, _) = err(
        &c,
        t,
        json!({"resource": "ore", "amount": 1, "market": "bazaar"}),
    );
    assert_eq!(
        (code.as_str(), field.as_str()),
        ("VALIDATION_INVALID_VALUE", "market")
    );
    assert_eq!(
        err(&c, t, json!({"resource": "ore"})).0,
        "VALIDATION_MISSING_FIELD"
    );
}

#[test]
fn the_calculation_tools_are_registered_with_strict_schemas() {
    let c = core();
    let names: Vec<&str> = c.tool_names().collect();
    for name in [
        "structs_calculate_power",
        "structs_calculate_mining",
        "structs_calculate_cost",
        "structs_calculate_damage",
        "structs_calculate_trade_value",
    ] {
        assert!(names.contains(&name), "{name}");
        let spec = c.tools().find(|s| s.name == name).unwrap();
        assert_eq!(spec.input_schema["additionalProperties"], false);
    }
    // Nested objects are strict too.
    let spec = c
        .tools()
        .find(|s| s.name == "structs_calculate_damage")
        .unwrap();
    let props = &spec.input_schema["properties"];
    for key in ["attacker", "defender", "planet"] {
        assert_eq!(props[key]["additionalProperties"], false, "{key}");
    }
    assert_eq!(props["blockers"]["items"]["additionalProperties"], false);
}
