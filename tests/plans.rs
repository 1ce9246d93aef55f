//! Plans with step references: the resolver on every form, validation, and a scenario
//! suite of plans over the real tools on the sim world (lists then queries, nested
//! references, optional failures, retries, timeouts, fan-out and fan-in, barriers,
//! handle envelopes, inputs), each with zero reference errors.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use structs_console::Core;
use structs_console::clock::WallClock;
use structs_console::entity::EntityId;
use structs_console::plan::{self, template};
use structs_console::source::GameSource;
use structs_console::source::instrumented::InstrumentedSource;
use structs_console::source::sim::{BlockClock, SimSource, WorldConfig};

fn sim() -> Arc<SimSource> {
    let config = WorldConfig::demo();
    Arc::new(SimSource::new(
        config,
        BlockClock::paused(config.genesis_height),
    ))
}

fn core_over(source: Arc<dyn GameSource>) -> Core {
    let fixed = "2026-11-21T12:00:00Z".parse().unwrap();
    structs_console::assembly::build_with_clock(source, WallClock::Fixed(fixed))
}

fn core() -> Core {
    core_over(sim())
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn execute(core: &Core, plan: Value) -> Value {
    rt().block_on(core.call_json("structs_plan_execute", plan))
        .unwrap_or_else(|e| panic!("the plan did not run: {e}"))
}

/// Runs a scenario: it must succeed with no reference error.
fn scenario(core: &Core, plan: Value) -> Value {
    let r = execute(core, plan);
    assert_eq!(r["totals"]["reference_errors"], 0, "{r:#}");
    assert_eq!(r["success"], true, "{r:#}");
    r
}

/// Item `i` of a kind's `count` entities in the order lists give them: the chain's,
/// by the bytes of the ids (`5-1`, `5-10`, `5-100`, `5-101`, …).
fn in_chain_order(code: u8, count: u64, i: usize) -> String {
    let mut ids: Vec<String> = (1..=count).map(|n| format!("{code}-{n}")).collect();
    ids.sort();
    ids[i].clone()
}

fn step(r: &Value, i: usize) -> &Value {
    &r["steps"][i]
}

fn problems(core: &Core, plan: Value) -> Vec<Value> {
    let v = rt()
        .block_on(core.call_json("structs_plan_validate", plan))
        .unwrap();
    assert_eq!(v["valid"], false, "{v:#}");
    v["problems"].as_array().unwrap().clone()
}

// ---------------------------------------------------------------- the resolver

/// Resolves `params` for the last step of a plan whose earlier steps have `views`.
fn resolve_with(views: Vec<Value>, params: Value) -> Result<Value, plan::Unresolved> {
    let mut steps: Vec<Value> = views
        .iter()
        .enumerate()
        .map(|(i, _)| json!({"id": format!("s{i}"), "tool": "t"}))
        .collect();
    steps.push(json!({"tool": "t", "params": params}));
    let p = plan::parse(&json!({"steps": steps, "inputs": {"who": "1-7", "n": 4}})).unwrap();
    let last = p.steps.last().unwrap().clone();
    let views: Vec<plan::StepView> = views
        .into_iter()
        .map(|v| plan::StepView {
            view: Arc::new(v),
            full: None,
        })
        .collect();
    plan::resolve(&last, &p, &|i| views.get(i).cloned()).map(|(v, _)| v)
}

fn ok_view(data: Value) -> Value {
    json!({"success": true, "data": data, "error": null})
}

#[test]
fn a_whole_string_reference_keeps_its_json_type() {
    let data = json!({"n": 5, "flag": true, "obj": {"a": [1, 2]}, "none": null, "s": "x"});
    let v = resolve_with(
        vec![ok_view(data)],
        json!({
            "n": "${step[0].data.n}", "flag": "${step[0].data.flag}",
            "obj": "${step[0].data.obj}", "none": "${step[0].data.none}",
            "arr": "${step[0].data.obj.a}", "s": "${steps.s0.data.s}",
            "ok": "${step[0].success}"
        }),
    )
    .unwrap();
    assert_eq!(
        v,
        json!({"n": 5, "flag": true, "obj": {"a": [1, 2]}, "none": null,
               "arr": [1, 2], "s": "x", "ok": true})
    );
}

#[test]
fn references_inside_longer_strings_are_interpolated_and_escapes_stay_literal() {
    let v = resolve_with(
        vec![ok_view(json!({"id": "1-3", "n": 7, "o": {"k": 1}}))],
        json!({
            "text": "player ${step[0].data.id} has ${step[0].data.n} and ${step[0].data.o}",
            "literal": "$${step[0].data.id} stays",
            "mixed": "$${x}=${step[0].data.n}",
            "nested": {"list": ["a-${step[0].data.n}", {"deep": "${steps.s0.data.id}"}]}
        }),
    )
    .unwrap();
    assert_eq!(v["text"], "player 1-3 has 7 and {\"k\":1}");
    assert_eq!(v["literal"], "${step[0].data.id} stays");
    assert_eq!(v["mixed"], "${x}=7");
    assert_eq!(v["nested"]["list"][0], "a-7");
    assert_eq!(v["nested"]["list"][1]["deep"], "1-3");
}

#[test]
fn dashed_keys_negative_indices_length_and_inputs() {
    let data = json!({
        "references": {"2-1": {"owner": "1-1"}, "5-12": {"owner": "1-4"}},
        "items": [{"id": "a"}, {"id": "b"}, {"id": "c"}]
    });
    let v = resolve_with(
        vec![ok_view(data)],
        json!({
            "owner": "${step[0].data.references[\"2-1\"].owner}",
            "single": "${step[0].data.references['5-12'].owner}",
            "dotted": "${step[0].data.references.5-12.owner}",
            "last": "${step[0].data.items[-1].id}",
            "second_last": "${step[0].data.items[-2].id}",
            "count": "${step[0].data.items.length}",
            "who": "${input.who}",
            "n": "${input.n}"
        }),
    )
    .unwrap();
    assert_eq!(v["owner"], "1-1");
    assert_eq!(v["single"], "1-4");
    assert_eq!(v["dotted"], "1-4");
    assert_eq!(v["last"], "c");
    assert_eq!(v["second_last"], "b");
    assert_eq!(v["count"], 3);
    assert_eq!(v["who"], "1-7");
    assert_eq!(v["n"], 4);
}

#[test]
fn a_missing_path_names_the_path_and_the_missing_part() {
    let views = || vec![ok_view(json!({"items": [{"id": "a"}], "page": {"n": 1}}))];
    let e = resolve_with(views(), json!({"x": "${step[0].data.items[3].id}"})).unwrap_err();
    assert_eq!(e.param, "x");
    assert_eq!(e.missing.part, "[3]");
    assert_eq!(e.missing.at, "step[0].data.items[3]");
    assert!(
        e.missing.reason.contains("has 1 items"),
        "{}",
        e.missing.reason
    );
    let e = resolve_with(views(), json!({"x": "id ${step[0].data.pages.n}"})).unwrap_err();
    assert_eq!(e.missing.part, "pages");
    assert!(
        e.missing.reason.contains("items, page"),
        "{}",
        e.missing.reason
    );
    let e = resolve_with(views(), json!({"x": "${step[0].data.items[-2]}"})).unwrap_err();
    assert_eq!(e.missing.part, "[-2]");
    let err = e.to_error();
    assert_eq!(err.code.as_str(), "VALIDATION_UNRESOLVED_REFERENCE");
    assert_eq!(err.extra["missing"], "[-2]");
    assert!(
        err.message.contains("${step[0].data.items[-2]}"),
        "{}",
        err.message
    );

    // A failed step has no data, and the message says why.
    let failed = json!({"success": false, "data": null,
        "error": {"code": "RESOURCE_NOT_FOUND", "message": "1-999 not found"}});
    let e = resolve_with(vec![failed.clone()], json!({"x": "${step[0].data.id}"})).unwrap_err();
    assert!(
        e.missing
            .reason
            .contains("step 0 failed (RESOURCE_NOT_FOUND"),
        "{}",
        e.missing.reason
    );
    // ...but its success and error can be read.
    let v = resolve_with(
        vec![failed],
        json!({"ok": "${step[0].success}", "code": "${step[0].error.code}"}),
    )
    .unwrap();
    assert_eq!(v, json!({"ok": false, "code": "RESOURCE_NOT_FOUND"}));
}

#[test]
fn resolving_a_reference_is_cheap() {
    // The figure is measured by benches/plans.rs; this keeps the order of magnitude.
    let v = ok_view(
        json!({"players": (0..50).map(|i| json!({"Player": {"id": format!("1-{i}")}})).collect::<Vec<_>>()}),
    );
    let start = std::time::Instant::now();
    for _ in 0..1000 {
        let r = resolve_with(
            vec![v.clone()],
            json!({"id": "${step[0].data.players[-1].Player.id}"}),
        )
        .unwrap();
        assert_eq!(r["id"], "1-49");
    }
    assert!(start.elapsed() < Duration::from_secs(5));
}

// ---------------------------------------------------------------- validation

#[test]
fn validation_names_the_step_the_parameter_and_what_is_available() {
    let core = core();
    let p = problems(
        &core,
        json!({"steps": [
            {"id": "players", "tool": "structs_list_players", "params": {"page_size": 2}},
            {"tool": "structs_query_player", "params": {"player_id": "${step[9].data.players[0].Player.id}"}},
            {"tool": "structs_query_player", "params": {"player_id": "${steps.plyers.data.players[0].Player.id}"}},
            {"tool": "structs_query_player", "params": {"player_id": "${step[4].data.player.Player.id}"}},
            {"tool": "structs_query_plyer", "params": {"player_id": "1-1"}},
            {"tool": "structs_query_player", "params": {"player_id": "${step[0].result.players}"}}
        ]}),
    );
    let find = |kind: &str, step: u64| {
        p.iter()
            .find(|x| x["kind"] == kind && x["step"] == step)
            .unwrap_or_else(|| panic!("no {kind} problem at step {step}: {p:#?}"))
            .clone()
    };
    let missing = find("missing_step", 1);
    assert_eq!(missing["param"], "player_id");
    assert!(
        missing["message"]
            .as_str()
            .unwrap()
            .contains("the plan has 6 steps")
    );
    assert_eq!(missing["available"], json!(["0 (players)"]));
    let named = find("missing_step", 2);
    assert!(named["message"].as_str().unwrap().contains("\"plyers\""));
    assert_eq!(named["available"], json!(["0 (players)", "1"]));
    let later = find("later_step", 3);
    assert!(later["message"].as_str().unwrap().contains("comes later"));
    let tool = find("unknown_tool", 4);
    assert!(
        tool["available"]
            .as_array()
            .unwrap()
            .contains(&json!("structs_query_player")),
        "{tool}"
    );
    let path = find("impossible_path", 5);
    assert!(
        path["message"].as_str().unwrap().contains("under data"),
        "{path}"
    );
}

#[test]
fn impossible_paths_into_known_results_are_caught_before_running() {
    let core = core();
    let p = problems(
        &core,
        json!({"steps": [
            {"tool": "structs_list_entities", "params": {"entity_type": "player"}},
            {"tool": "structs_query_player", "params": {"player_id": "${step[0].data.player[0].Player.id}"}},
            {"tool": "structs_query_player", "params": {"player_id": "${step[0].success.id}"}},
            {"tool": "structs_query_entity", "params": {"id": "${step[0].data.players[0].Player.id}"}},
            {"tool": "structs_query_planet", "params": {"planet_id": "${step[3].data.entitiy.Player.planetId}"}}
        ]}),
    );
    assert_eq!(p.len(), 3, "{p:#?}");
    assert!(
        p[0]["message"].as_str().unwrap().contains("players"),
        "{:#}",
        p[0]
    );
    assert_eq!(p[0]["step"], 1);
    assert!(p[1]["message"].as_str().unwrap().contains("true or false"));
    assert_eq!(p[2]["step"], 4);
    assert!(
        p[2]["message"].as_str().unwrap().contains("entity"),
        "{:#}",
        p[2]
    );
}

#[test]
fn cycles_duplicates_syntax_arguments_and_inputs_are_problems() {
    let core = core();
    let p = problems(
        &core,
        json!({"steps": [
            {"id": "a", "tool": "structs_query_block_height", "depends_on": ["b"]},
            {"id": "b", "tool": "structs_query_block_height", "depends_on": [0]}
        ]}),
    );
    assert_eq!(p[0]["kind"], "cycle");
    assert!(
        p[0]["message"].as_str().unwrap().contains("→"),
        "{:#}",
        p[0]
    );

    let p = problems(
        &core,
        json!({"steps": [
            {"id": "a", "tool": "structs_query_block_height"},
            {"id": "a", "tool": "structs_query_block_height"},
            {"tool": "structs_query_player", "params": {"player_id": "${step[0].data"}},
            {"tool": "structs_query_player", "params": {"player": "1-1"}},
            {"tool": "structs_query_player", "params": {"player_id": "${input.who}", "extra": "${step[0].success}"}},
            {"tool": "structs_query_player", "params": {"player_id": "1-1"}, "retries": 3}
        ], "inputs": {"whom": "1-1"}}),
    );
    let kinds: Vec<&str> = p.iter().map(|x| x["kind"].as_str().unwrap()).collect();
    for k in [
        "duplicate_id",
        "bad_reference",
        "missing_input",
        "invalid_step",
    ] {
        assert!(kinds.contains(&k), "{k} missing from {p:#?}");
    }
    let input = p.iter().find(|x| x["kind"] == "missing_input").unwrap();
    assert_eq!(input["available"], json!(["whom"]));

    // With the structure right, the tools' arguments are checked.
    let p = problems(
        &core,
        json!({"steps": [
            {"tool": "structs_query_block_height"},
            {"tool": "structs_query_player", "params": {"player": "1-1"}},
            {"tool": "structs_query_player", "params": {"player_id": "${step[0].data.source}", "extra": 1}},
            {"tool": "structs_query_player", "params": {"planet_id": "${step[0].data.source}"}}
        ]}),
    );
    let at: Vec<(u64, &str)> = p
        .iter()
        .map(|x| {
            (
                x["step"].as_u64().unwrap(),
                x["param"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert!(at.contains(&(1, "player")), "{p:#?}");
    assert!(at.contains(&(2, "extra")), "{p:#?}");
    assert!(at.contains(&(3, "planet_id")), "{p:#?}");
    assert!(at.contains(&(3, "player_id")), "{p:#?}");
}

#[test]
fn a_valid_plan_is_outlined_with_its_levels() {
    let core = core();
    let v = rt()
        .block_on(core.call_json(
            "structs_plan_validate",
            json!({"steps": [
                {"id": "list", "tool": "structs_list_players", "params": {"page_size": 2}},
                {"tool": "structs_query_player", "params": {"player_id": "${steps.list.data.players[0].Player.id}"}},
                {"tool": "structs_query_player", "params": {"player_id": "${steps.list.data.players[1].Player.id}"}},
                {"tool": "structs_query_block_height", "depends_on": [1, 2]}
            ]}),
        ))
        .unwrap();
    assert_eq!(v["valid"], true, "{v:#}");
    let steps = v["outline"]["steps"].as_array().unwrap();
    let levels: Vec<u64> = steps.iter().map(|s| s["level"].as_u64().unwrap()).collect();
    assert_eq!(levels, vec![0, 1, 1, 2]);
    assert_eq!(steps[1]["reads"], json!([0]));
    assert_eq!(v["outline"]["levels"], 3);
}

#[test]
fn executing_an_invalid_plan_is_a_structured_error() {
    let core = core();
    let e = rt()
        .block_on(core.call_json(
            "structs_plan_execute",
            json!({"steps": [{"tool": "structs_query_player", "params": {"player_id": "${step[1].data}"}}]}),
        ))
        .unwrap_err();
    assert_eq!(e["error"]["code"], "VALIDATION_INVALID_PLAN");
    assert_eq!(e["error"]["details"]["field"], "steps[0].params.player_id");
    assert_eq!(e["error"]["details"]["problems"][0]["kind"], "missing_step");
}

// ---------------------------------------------------------------- scenarios

#[test]
fn scenario_list_then_query_then_follow_the_ids() {
    let core = core();
    let r = scenario(
        &core,
        json!({"steps": [
            {"id": "players", "tool": "structs_list_players", "params": {"page_size": 3}},
            {"id": "player", "tool": "structs_query_player",
             "params": {"player_id": "${steps.players.data.players[1].Player.id}"}},
            {"tool": "structs_query_planet", "params": {"planet_id": "${steps.player.data.player.Player.planetId}"}},
            {"tool": "structs_query_fleet", "params": {"fleet_id": "${steps.player.data.player.Player.fleetId}"}}
        ]}),
    );
    // The chain's order of ids: 1-1, 1-10, 1-11.
    assert_eq!(step(&r, 1)["resolved_params"]["player_id"], "1-10");
    assert_eq!(
        step(&r, 1)["params"]["player_id"],
        "${steps.players.data.players[1].Player.id}"
    );
    assert_eq!(step(&r, 2)["data"]["planet"]["Planet"]["owner"], "1-10");
    assert_eq!(step(&r, 3)["data"]["fleet"]["Fleet"]["owner"], "1-10");
    assert_eq!(step(&r, 2)["substitutions"][0]["from_step"], 1);
    assert_eq!(r["totals"]["succeeded"], 4);
}

#[test]
fn scenario_nested_references_three_deep() {
    let core = core();
    let r = scenario(
        &core,
        json!({"steps": [
            {"tool": "structs_query_planet", "params": {"planet_id": "2-1"}},
            {"tool": "structs_query_struct", "params": {"struct_id": "${step[0].data.planet.Planet.space[0]}"}},
            {"tool": "structs_query_player", "params": {"player_id": "${step[1].data.struct.Struct.owner}"}},
            {"tool": "structs_query_guild", "params": {"guild_id": "${step[2].data.player.Player.guildId}"}}
        ]}),
    );
    assert_eq!(step(&r, 1)["resolved_params"]["struct_id"], "5-2");
    assert_eq!(step(&r, 3)["resolved_params"]["guild_id"], "0-1");
    assert!(step(&r, 3)["data"]["guild"]["Guild"].is_object());
}

#[test]
fn scenario_typed_values_and_interpolation_reach_the_tools() {
    let core = core();
    let r = scenario(
        &core,
        json!({"steps": [
            {"tool": "structs_query_player", "params": {"player_id": "1-1"}},
            {"tool": "structs_list_players", "params": {"page_size": 2}},
            // A number stays a number: page_size is an integer argument.
            {"tool": "structs_list_structs", "params": {"page_size": "${step[1].data.pagination.page_size}"}},
            // An object stays an object: the player record checked against its schema.
            {"tool": "structs_validate_schema", "params": {"data": "${step[0].data.player}", "schema_uri": "player"}},
            // Interpolated: the planet id built from the player's index.
            {"tool": "structs_validate_entity_id", "params": {"id": "2-${step[0].data.player.Player.index}"}}
        ]}),
    );
    assert_eq!(step(&r, 2)["resolved_params"]["page_size"], 2);
    assert_eq!(step(&r, 2)["data"]["structs"].as_array().unwrap().len(), 2);
    assert!(step(&r, 3)["resolved_params"]["data"]["Player"].is_object());
    assert_eq!(step(&r, 3)["data"]["valid"], true, "{:#}", step(&r, 3));
    assert_eq!(step(&r, 4)["resolved_params"]["id"], "2-1");
    assert_eq!(step(&r, 4)["data"]["valid"], true);
}

#[test]
fn scenario_negative_indices_length_and_inputs() {
    let core = core();
    let r = scenario(
        &core,
        json!({"inputs": {"kind": "planet", "count": 4}, "steps": [
            {"id": "planets", "tool": "structs_list_entities",
             "params": {"entity_type": "${input.kind}", "page_size": "${input.count}"}},
            {"tool": "structs_query_planet", "params": {"planet_id": "${steps.planets.data.planets[-1].Planet.id}"}},
            {"tool": "structs_validate_entity_id",
             "params": {"id": "2-${steps.planets.data.planets.length}"}}
        ]}),
    );
    assert_eq!(
        step(&r, 0)["resolved_params"],
        json!({"entity_type": "planet", "page_size": 4})
    );
    // Lists come in the chain's order of ids: 2-1, 2-10, 2-11, 2-12.
    assert_eq!(step(&r, 1)["resolved_params"]["planet_id"], "2-12");
    assert_eq!(step(&r, 2)["resolved_params"]["id"], "2-4");
}

#[test]
fn scenario_an_optional_failure_does_not_stop_the_plan() {
    let core = core();
    let r = scenario(
        &core,
        json!({"steps": [
            {"id": "ghost", "tool": "structs_query_player", "params": {"player_id": "1-999"}, "optional": true},
            {"tool": "structs_query_player", "params": {"player_id": "1-2"}},
            // Reads how the optional step went, not its data.
            {"tool": "structs_validate_entity_id",
             "params": {"id": "${steps.ghost.error.details.id}"}, "depends_on": ["ghost"]}
        ]}),
    );
    assert_eq!(step(&r, 0)["status"], "failed");
    assert_eq!(step(&r, 0)["error"]["code"], "RESOURCE_NOT_FOUND");
    assert_eq!(step(&r, 2)["resolved_params"]["id"], "1-999");
    assert_eq!(step(&r, 2)["status"], "succeeded");
    assert_eq!(r["totals"]["optional_failed"], 1);
    assert_eq!(r["totals"]["failed"], 0);
}

#[test]
fn scenario_a_failure_skips_its_dependants_and_says_why() {
    let core = core();
    let r = execute(
        &core,
        json!({"steps": [
            {"id": "ghost", "tool": "structs_query_player", "params": {"player_id": "1-999"}},
            {"id": "planet", "tool": "structs_query_planet",
             "params": {"planet_id": "${steps.ghost.data.player.Player.planetId}"}},
            {"tool": "structs_query_block_height", "depends_on": ["planet"]},
            {"tool": "structs_query_player", "params": {"player_id": "1-3"}}
        ]}),
    );
    assert_eq!(r["success"], false);
    assert_eq!(r["totals"]["reference_errors"], 0);
    assert_eq!(step(&r, 0)["status"], "failed");
    assert_eq!(step(&r, 1)["status"], "skipped");
    assert!(
        step(&r, 1)["skipped_reason"]
            .as_str()
            .unwrap()
            .starts_with("step 0 (ghost) failed: 1-999 not found"),
        "{:#}",
        step(&r, 1)
    );
    assert_eq!(step(&r, 1)["attempts"], 0);
    let transitive = step(&r, 2)["skipped_reason"].as_str().unwrap();
    assert!(
        transitive.contains("step 1 (planet) was skipped"),
        "{transitive}"
    );
    assert_eq!(step(&r, 3)["status"], "succeeded");
    assert_eq!(r["totals"]["skipped"], 2);
}

#[test]
fn scenario_a_retry_succeeds_on_the_second_attempt() {
    let source = InstrumentedSource::new(sim()).rate_limited(EntityId::parse("1-3").unwrap(), 1);
    let core = core_over(Arc::new(source));
    let r = scenario(
        &core,
        json!({"retry_backoff_ms": 20, "steps": [
            {"tool": "structs_query_player", "params": {"player_id": "1-3"}, "retry_count": 2},
            {"tool": "structs_query_planet", "params": {"planet_id": "${step[0].data.player.Player.planetId}"}}
        ]}),
    );
    assert_eq!(step(&r, 0)["attempts"], 2);
    assert_eq!(
        step(&r, 0)["attempt_errors"][0]["code"],
        "RATE_LIMIT_EXCEEDED"
    );
    assert_eq!(step(&r, 0)["attempt_errors"][0]["retry_in_ms"], 20);
    assert_eq!(step(&r, 1)["resolved_params"]["planet_id"], "2-3");
}

#[test]
fn scenario_a_hanging_call_times_out_and_is_retried() {
    let source = InstrumentedSource::new(sim()).hanging(EntityId::parse("1-4").unwrap());
    let core = core_over(Arc::new(source));
    let started = std::time::Instant::now();
    let r = scenario(
        &core,
        json!({"retry_backoff_ms": 10, "steps": [
            {"tool": "structs_query_player", "params": {"player_id": "1-4"},
             "timeout_ms": 150, "retry_count": 1, "optional": true},
            {"tool": "structs_query_player", "params": {"player_id": "1-5"}, "timeout_ms": 5000}
        ]}),
    );
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(step(&r, 0)["status"], "failed");
    assert_eq!(step(&r, 0)["error"]["code"], "TOOL_TIMEOUT");
    assert_eq!(step(&r, 0)["attempts"], 2);
    assert!(step(&r, 0)["duration_ms"].as_f64().unwrap() >= 300.0);
    assert_eq!(step(&r, 1)["status"], "succeeded");
}

#[test]
fn scenario_fan_out_and_fan_in_run_at_once() {
    let source = InstrumentedSource::new(sim()).with_delay(Duration::from_millis(60));
    let core = core_over(Arc::new(source));
    let q = |i: usize| {
        json!({"id": format!("p{i}"), "tool": "structs_query_player",
               "params": {"player_id": format!("${{steps.list.data.players[{i}].Player.id}}")}})
    };
    let r = scenario(
        &core,
        json!({"steps": [
            {"id": "list", "tool": "structs_list_players", "params": {"page_size": 4}},
            q(0), q(1), q(2), q(3),
            // Fan-in: one call that reads all four.
            {"tool": "structs_validate_schema", "params": {
                "data": {"Planet": {"a": "${steps.p0.data.player.Player.planetId}", "b": "${steps.p1.data.player.Player.planetId}",
                         "c": "${steps.p2.data.player.Player.planetId}", "d": "${steps.p3.data.player.Player.planetId}"}},
                "schema_uri": "planet"}}
        ]}),
    );
    assert_eq!(
        step(&r, 5)["resolved_params"]["data"]["Planet"],
        json!({"a": "2-1", "b": "2-10", "c": "2-11", "d": "2-12"})
    );
    // The made-up record is not a planet: the check answers, and says so.
    assert_eq!(step(&r, 5)["data"]["valid"], false);
    assert_eq!(r["totals"]["peak_parallel"], 4);
    // The four queries overlapped: each started before every other one ended.
    let span = |i: usize| {
        let start = step(&r, i)["started_ms"].as_f64().unwrap();
        (start, start + step(&r, i)["duration_ms"].as_f64().unwrap())
    };
    for a in 1..5 {
        for b in 1..5 {
            assert!(
                span(a).0 < span(b).1,
                "step {a} started after step {b} ended"
            );
        }
    }
}

#[test]
fn scenario_a_step_that_is_not_parallel_runs_alone() {
    let core = core();
    let r = scenario(
        &core,
        json!({"steps": [
            {"tool": "structs_query_block_height"},
            {"tool": "structs_query_player", "params": {"player_id": "1-1"}},
            {"id": "tick", "tool": "structs_clock_control", "params": {"action": "step", "blocks": 5}, "parallel": false},
            {"tool": "structs_query_block_height"},
            {"tool": "structs_validate_entity_id", "params": {"id": "1-${step[0].data.height}"}}
        ]}),
    );
    let h0 = step(&r, 0)["data"]["height"].as_u64().unwrap();
    assert_eq!(step(&r, 2)["data"]["height"], h0 + 5);
    assert_eq!(
        step(&r, 3)["data"]["height"],
        h0 + 5,
        "read after the barrier"
    );
    let barrier_start = step(&r, 2)["started_ms"].as_f64().unwrap();
    for i in [0, 1] {
        let end = step(&r, i)["started_ms"].as_f64().unwrap()
            + step(&r, i)["duration_ms"].as_f64().unwrap();
        assert!(
            end <= barrier_start + 0.2,
            "step {i} ended before the barrier began"
        );
    }
}

#[test]
fn scenario_a_reference_reads_past_a_handle_summary() {
    let core = core();
    let r = scenario(
        &core,
        json!({"steps": [
            {"id": "all", "tool": "structs_list_structs", "params": {"page_size": 100, "include_references": true}},
            {"tool": "structs_query_struct", "params": {"struct_id": "${steps.all.data.structs[90].Struct.id}"}},
            {"tool": "structs_handle_fetch", "params": {"handle": "${steps.all.data.result_handle}", "page": 2}}
        ]}),
    );
    // The list was too large for one response: the agent saw an envelope...
    assert_eq!(step(&r, 0)["data"]["status"], "partial");
    assert!(
        step(&r, 0)["data"]["summary"]["structs"]
            .as_array()
            .is_none_or(|a| a.len() < 90)
    );
    // ...and the reference read the whole stored result.
    let ninety_first = in_chain_order(5, 120, 90);
    assert_eq!(step(&r, 1)["resolved_params"]["struct_id"], ninety_first);
    assert_eq!(step(&r, 1)["data"]["struct"]["Struct"]["id"], ninety_first);
    assert!(step(&r, 2)["data"].is_object());
}

#[test]
fn scenario_calculations_and_decisions_on_listed_entities() {
    let core = core();
    let r = scenario(
        &core,
        json!({"steps": [
            {"id": "structs", "tool": "structs_list_structs", "params": {"page_size": 3}},
            {"tool": "structs_calculate_pow_schedule", "params": {
                "action_type": "struct_build_complete", "entity_id": "${steps.structs.data.structs[1].Struct.id}",
                "block_start": 119000, "hashrate": 1000000}},
            {"tool": "structs_query_struct_type", "params": {"struct_type": 14}},
            {"tool": "structs_decision_tree_get_build_requirements", "params": {
                "player_id": "${steps.structs.data.structs[0].Struct.owner}",
                "struct_type": "${step[2].data.struct_type.id}"}}
        ]}),
    );
    assert_eq!(step(&r, 1)["resolved_params"]["entity_id"], "5-10");
    assert_eq!(step(&r, 3)["resolved_params"]["player_id"], "1-1");
    assert_eq!(step(&r, 3)["resolved_params"]["struct_type"], 14);
    assert!(step(&r, 3)["data"].is_object());
}

#[test]
fn scenario_depends_on_by_name_orders_steps_without_references() {
    let core = core();
    let r = scenario(
        &core,
        json!({"steps": [
            {"id": "after", "tool": "structs_query_block_height", "depends_on": ["tick"]},
            {"id": "tick", "tool": "structs_clock_control", "params": {"action": "step", "blocks": 2}}
        ]}),
    );
    assert_eq!(step(&r, 0)["data"]["height"], step(&r, 1)["data"]["height"]);
    assert!(
        step(&r, 0)["started_ms"].as_f64().unwrap() >= step(&r, 1)["started_ms"].as_f64().unwrap()
    );
}

#[test]
fn scenario_plans_run_through_mcp_names_and_progress() {
    // The same plan, with the camelCase spellings agents sometimes use.
    let core = core();
    let r = scenario(
        &core,
        json!({"steps": [
            {"id": "a", "tool": "structs_query_player", "params": {"player_id": "1-6"}},
            {"tool": "structs_query_fleet", "params": {"fleet_id": "${step[0].data.player.Player.fleetId}"},
             "dependsOn": [0], "retryCount": 1, "timeoutMs": 10000}
        ]}),
    );
    assert_eq!(step(&r, 1)["data"]["fleet"]["Fleet"]["id"], "9-6");
}

#[test]
fn the_known_result_fields_match_what_the_tools_return() {
    let core = core();
    let mut checked = 0;
    for tool in core.tool_names() {
        let args = match tool {
            "structs_query_entity" => json!({"id": "1-1"}),
            "structs_query_block_height" => json!({}),
            "structs_clock_control" => json!({"action": "pause"}),
            "structs_query_struct_type" => json!({"struct_type": 14}),
            "structs_list_entities" => json!({"entity_type": "fleet", "page_size": 2}),
            t if t.starts_with("structs_list_") => json!({"page_size": 2}),
            t if t.starts_with("structs_query_") => {
                let kind = t.trim_start_matches("structs_query_");
                let Some(k) = structs_console::entity::EntityKind::parse_name_or_code(kind) else {
                    continue;
                };
                let code = k.code();
                json!({ format!("{kind}_id"): format!("{code}-1") })
            }
            _ => continue,
        };
        let Some(mut known) = plan::shapes::known_fields(tool, &args) else {
            continue;
        };
        let v = rt().block_on(core.call_json(tool, args.clone())).unwrap();
        let mut got: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        got.sort();
        known.sort();
        assert_eq!(got, known, "{tool} {args}");
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} tools checked");
}

#[test]
fn the_reference_parser_round_trips_its_own_labels() {
    let t = template::Template::parse("${steps.a.data.references[\"2-1\"].list[-1]}")
        .unwrap()
        .unwrap();
    let r = t.references().next().unwrap();
    assert_eq!(
        r.prefix(r.path.len()),
        "steps.a.data.references.2-1.list[-1]"
    );
}

/// Plans written the way agents' planners write them, after the seed's own example
/// (`${step[0].data[0].id}`): each succeeds, and says how it read the path.
#[test]
fn plans_written_the_seeds_way_run() {
    let core = core();
    let plans = [
        // The seed's example shape: the first item of a list result, its id.
        (
            json!({"steps": [
                {"tool": "structs_list_players", "params": {"page_size": 5}},
                {"tool": "structs_query_player", "params": {"player_id": "${step[0].data[0].id}"}}
            ]}),
            "1-1",
            vec![
                "step[0].data[0] read as step[0].data.players[0]",
                "step[0].data[0].id read as step[0].data.players[0].Player.id",
            ],
        ),
        // The list named, the id without the chain's wrapper.
        (
            json!({"steps": [
                {"tool": "structs_list_players", "params": {"page_size": 5}},
                {"tool": "structs_query_player", "params": {"player_id": "${step[0].data.players[2].id}"}}
            ]}),
            "1-11",
            vec!["step[0].data.players[2].id read as step[0].data.players[2].Player.id"],
        ),
        // A query's record without its wrapper, by step id, and the last item.
        (
            json!({"steps": [
                {"id": "p", "tool": "structs_query_player", "params": {"player_id": "1-4"}},
                {"tool": "structs_query_planet", "params": {"planet_id": "${steps.p.data.player.planetId}"}}
            ]}),
            "2-4",
            vec!["steps.p.data.player.planetId read as steps.p.data.player.Player.planetId"],
        ),
        (
            json!({"steps": [
                {"tool": "structs_list_entities", "params": {"entity_type": "fleet", "page_size": 3}},
                {"tool": "structs_query_fleet", "params": {"fleet_id": "${step[0].data[-1].id}"}}
            ]}),
            "9-11",
            vec![
                "step[0].data[-1] read as step[0].data.fleets[-1]",
                "step[0].data[-1].id read as step[0].data.fleets[-1].Fleet.id",
            ],
        ),
        // Written exactly: no reading, none reported.
        (
            json!({"steps": [
                {"tool": "structs_list_players", "params": {"page_size": 5}},
                {"tool": "structs_query_player", "params": {"player_id": "${step[0].data.players[0].Player.id}"}}
            ]}),
            "1-1",
            vec![],
        ),
    ];
    for (plan, id, readings) in plans {
        // The validator agrees with the executor.
        let v = rt()
            .block_on(core.call_json("structs_plan_validate", plan.clone()))
            .unwrap();
        assert_eq!(v["valid"], true, "{v:#}");
        let r = scenario(&core, plan.clone());
        let sub = &step(&r, 1)["substitutions"][0];
        assert_eq!(sub["value"], id, "{plan}");
        let said: Vec<&str> = sub["readings"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        assert_eq!(said, readings, "{plan}");
    }
}

/// Where more than one reading fits, or none, the plan fails as before and says why.
#[test]
fn a_path_with_no_single_reading_still_fails_and_says_why() {
    let core = core();
    // A query result holds no list: the validator catches `data[0]` before running.
    let p = problems(
        &core,
        json!({"steps": [
            {"tool": "structs_query_player", "params": {"player_id": "1-1"}},
            {"tool": "structs_query_planet", "params": {"planet_id": "${step[0].data[0].id}"}}
        ]}),
    );
    assert_eq!(p.len(), 1, "{p:#?}");
    assert!(
        p[0]["message"]
            .as_str()
            .unwrap()
            .contains("data has no item [0]"),
        "{p:#?}"
    );
    // A field neither the record nor its wrapper has fails at run time, naming both.
    let r = execute(
        &core,
        json!({"steps": [
            {"tool": "structs_list_players", "params": {"page_size": 2}},
            {"tool": "structs_query_player", "params": {"player_id": "${step[0].data[0].playerId}"}}
        ]}),
    );
    assert_eq!(r["success"], false);
    let message = step(&r, 1)["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("step[0].data[0] has no field \"playerId\""),
        "{message}"
    );
}

/// A path into a result kept behind a handle says what is true of the whole result,
/// exactly as it would of a small one.
#[test]
fn a_missing_item_of_a_handle_backed_result_is_described_truly() {
    let core = core();
    let r = execute(
        &core,
        json!({"steps": [
            {"tool": "structs_list_structs", "params": {"page_size": 100, "include_references": true}},
            {"tool": "structs_query_struct", "params": {"struct_id": "${step[0].data.structs[100].Struct.id}"}}
        ]}),
    );
    assert_eq!(
        step(&r, 0)["data"]["status"],
        "partial",
        "a handle envelope"
    );
    let message = step(&r, 1)["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("step[0].data.structs has no item [100]: it has 100 items"),
        "{message}"
    );
    // The seed's shape reads the stored list too, and the envelope's own fields still read.
    let r = scenario(
        &core,
        json!({"steps": [
            {"tool": "structs_list_structs", "params": {"page_size": 100, "include_references": true}},
            {"tool": "structs_query_struct", "params": {"struct_id": "${step[0].data[99].id}"}},
            {"tool": "structs_handle_fetch", "params": {"handle": "${step[0].data.result_handle}", "page": 2}}
        ]}),
    );
    assert_eq!(
        step(&r, 1)["resolved_params"]["struct_id"],
        in_chain_order(5, 120, 99)
    );
    assert!(step(&r, 2)["data"]["page_info"].is_object());
}
