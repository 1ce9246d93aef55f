//! The tool catalog through `Core::call`, as both faces reach it: results on the demo
//! world, pagination, filters, and a structured error for every kind of bad input.

mod support;

use serde_json::{Value, json};
use structs_console::Core;
use structs_console::source::sim::WorldConfig;
use support::calls::blocking::call;
use support::sim::paused_core;

fn core_with(players: usize) -> Core {
    paused_core(WorldConfig::with_players(players)).0
}

fn core() -> Core {
    core_with(WorldConfig::DEMO_PLAYERS)
}

fn err_code(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or("<no code>")
}

fn err_field(v: &Value) -> &str {
    v["error"]["details"]["field"]
        .as_str()
        .unwrap_or("<no field>")
}

#[test]
fn validate_entity_id_reports_kind_code_and_index() {
    let c = core();
    let v = call(&c, "structs_validate_entity_id", json!({"id": "1-11"})).unwrap();
    assert_eq!(
        v,
        json!({"valid": true, "type": "player", "type_code": 1, "index": 11, "format": "1-11"})
    );
    let v = call(
        &c,
        "structs_validate_entity_id",
        json!({"id": "9-3", "expected_type": 9}),
    )
    .unwrap();
    assert_eq!(v["type"], "fleet");
    let v = call(
        &c,
        "structs_validate_entity_id",
        json!({"id": "9-3", "expected_type": "FLEET"}),
    )
    .unwrap();
    assert_eq!(v["type_code"], 9);
}

#[test]
fn validate_entity_id_errors() {
    let c = core();
    for (id, code) in [
        ("abc", "VALIDATION_INVALID_FORMAT"),
        ("12-1", "VALIDATION_INVALID_FORMAT"),
        ("1-0", "VALIDATION_INVALID_FORMAT"),
        ("1-1-1", "VALIDATION_INVALID_FORMAT"),
        ("", "VALIDATION_INVALID_FORMAT"),
    ] {
        let e = call(&c, "structs_validate_entity_id", json!({ "id": id })).unwrap_err();
        assert_eq!(err_code(&e), code, "{id:?}: {e}");
        assert_eq!(err_field(&e), "id");
        assert!(e["error"]["timestamp"].is_string());
    }
    let e = call(
        &c,
        "structs_validate_entity_id",
        json!({"id": "2-1", "expected_type": "player"}),
    )
    .unwrap_err();
    assert_eq!(err_code(&e), "VALIDATION_WRONG_ENTITY_TYPE");
    assert!(
        e["error"]["details"]["reason"]
            .as_str()
            .unwrap()
            .contains("planet")
    );
    let e = call(
        &c,
        "structs_validate_entity_id",
        json!({"id": "2-1", "expected_type": "starship"}),
    )
    .unwrap_err();
    assert_eq!(err_code(&e), "VALIDATION_INVALID_VALUE");
    assert_eq!(err_field(&e), "expected_type");
    let e = call(
        &c,
        "structs_validate_entity_id",
        json!({"id": "2-1", "expected_type": 12}),
    )
    .unwrap_err();
    assert_eq!(err_code(&e), "VALIDATION_INVALID_VALUE");
}

#[test]
fn typed_queries_return_the_entity_and_a_timestamp() {
    let c = core();
    let v = call(&c, "structs_query_player", json!({"player_id": "1-2"})).unwrap();
    assert_eq!(v["player"]["Player"]["id"], "1-2");
    assert!(v["player"]["gridAttributes"].is_object());
    assert!(v["player"]["playerInventory"].is_object());
    assert_eq!(v["timestamp"], "2026-11-21T12:00:00Z");

    for (tool, field, id, key, inner) in [
        (
            "structs_query_planet",
            "planet_id",
            "2-3",
            "planet",
            "Planet",
        ),
        ("structs_query_guild", "guild_id", "0-1", "guild", "Guild"),
        (
            "structs_query_struct",
            "struct_id",
            "5-1",
            "struct",
            "Struct",
        ),
        ("structs_query_fleet", "fleet_id", "9-4", "fleet", "Fleet"),
    ] {
        let v = call(&c, tool, json!({ field: id })).unwrap();
        assert_eq!(v[key][inner]["id"], id, "{tool}");
    }
}

#[test]
fn query_entity_answers_for_every_kind() {
    let c = core();
    for code in 0..=11 {
        let id = format!("{code}-1");
        let v = call(&c, "structs_query_entity", json!({ "id": id })).unwrap();
        assert_eq!(v["id"], id);
        assert_eq!(v["type_code"], code);
        assert!(v["entity"].is_object());
    }
}

#[test]
fn unknown_ids_are_resource_not_found_naming_the_id() {
    let c = core();
    let e = call(&c, "structs_query_player", json!({"player_id": "1-999"})).unwrap_err();
    assert_eq!(err_code(&e), "RESOURCE_NOT_FOUND");
    assert!(e["error"]["message"].as_str().unwrap().contains("1-999"));
    assert_eq!(e["error"]["details"]["id"], "1-999");
    assert_eq!(err_field(&e), "player_id");
    let e = call(&c, "structs_query_entity", json!({"id": "11-5000"})).unwrap_err();
    assert_eq!(err_code(&e), "RESOURCE_NOT_FOUND");
}

#[test]
fn bad_arguments_get_structured_errors_naming_the_field() {
    let c = core();
    let cases: Vec<(&str, Value, &str, &str)> = vec![
        (
            "structs_query_player",
            json!({}),
            "VALIDATION_MISSING_FIELD",
            "player_id",
        ),
        (
            "structs_query_player",
            json!({"player_id": 11}),
            "VALIDATION_WRONG_TYPE",
            "player_id",
        ),
        (
            "structs_query_player",
            json!({"player_id": "eleven"}),
            "VALIDATION_INVALID_FORMAT",
            "player_id",
        ),
        (
            "structs_query_player",
            json!({"player_id": "2-1"}),
            "VALIDATION_WRONG_ENTITY_TYPE",
            "player_id",
        ),
        (
            "structs_query_player",
            json!({"player_id": "1-0"}),
            "VALIDATION_INVALID_FORMAT",
            "player_id",
        ),
        (
            "structs_query_player",
            json!({"player_id": "13-1"}),
            "VALIDATION_INVALID_FORMAT",
            "player_id",
        ),
        (
            "structs_query_player",
            json!({"player_id": "1-1", "verbose": true}),
            "VALIDATION_UNKNOWN_FIELD",
            "verbose",
        ),
        (
            "structs_query_player",
            json!("1-1"),
            "VALIDATION_WRONG_TYPE",
            "arguments",
        ),
        (
            "structs_query_player",
            json!({"player_id": null}),
            "VALIDATION_WRONG_TYPE",
            "player_id",
        ),
        (
            "structs_list_players",
            json!({"page_size": 0}),
            "VALIDATION_OUT_OF_RANGE",
            "page_size",
        ),
        (
            "structs_list_players",
            json!({"page_size": 101}),
            "VALIDATION_OUT_OF_RANGE",
            "page_size",
        ),
        (
            "structs_list_players",
            json!({"page_size": -5}),
            "VALIDATION_OUT_OF_RANGE",
            "page_size",
        ),
        (
            "structs_list_players",
            json!({"page_size": 2.5}),
            "VALIDATION_WRONG_TYPE",
            "page_size",
        ),
        (
            "structs_list_players",
            json!({"page_size": "10"}),
            "VALIDATION_WRONG_TYPE",
            "page_size",
        ),
        (
            "structs_list_players",
            json!({"page_key": "garbage!"}),
            "VALIDATION_INVALID_FORMAT",
            "page_key",
        ),
        (
            "structs_list_players",
            json!({"owner": "1-1"}),
            "VALIDATION_UNKNOWN_FIELD",
            "owner",
        ),
        (
            "structs_list_planets",
            json!({"owner": "0-1"}),
            "VALIDATION_WRONG_ENTITY_TYPE",
            "owner",
        ),
        (
            "structs_list_structs",
            json!({"guild_id": "1-1"}),
            "VALIDATION_WRONG_ENTITY_TYPE",
            "guild_id",
        ),
        (
            "structs_list_entities",
            json!({}),
            "VALIDATION_MISSING_FIELD",
            "entity_type",
        ),
        (
            "structs_list_entities",
            json!({"entity_type": "ship"}),
            "VALIDATION_INVALID_VALUE",
            "entity_type",
        ),
        (
            "structs_query_endpoints",
            json!({"category": "nope"}),
            "VALIDATION_INVALID_VALUE",
            "category",
        ),
        (
            "structs_query_endpoints",
            json!({"entity_type": "ship"}),
            "VALIDATION_INVALID_VALUE",
            "entity_type",
        ),
        (
            "structs_query_entity",
            json!({"id": "x".repeat(10_000)}),
            "VALIDATION_INVALID_FORMAT",
            "id",
        ),
    ];
    for (tool, args, code, field) in cases {
        let e = call(&c, tool, args.clone()).unwrap_err();
        assert_eq!(err_code(&e), code, "{tool} {args}: {e}");
        assert_eq!(err_field(&e), field, "{tool} {args}: {e}");
        assert!(
            e["error"]["details"]["reason"]
                .as_str()
                .is_some_and(|r| !r.is_empty()),
            "{tool} {args}: no reason"
        );
    }
}

#[test]
fn unknown_tools_are_tool_not_found_with_suggestions() {
    let c = core();
    let e = call(&c, "structs_query_plyer", json!({})).unwrap_err();
    assert_eq!(err_code(&e), "TOOL_NOT_FOUND");
    assert_eq!(err_field(&e), "name");
    let e = call(&c, "query_player", json!({})).unwrap_err();
    let suggestions = e["error"]["details"]["suggestions"].as_array().unwrap();
    assert!(suggestions.contains(&json!("structs_query_player")), "{e}");
}

#[test]
fn missing_arguments_mean_an_empty_object() {
    let c = core();
    let v = call(&c, "structs_list_guilds", Value::Null).unwrap();
    assert_eq!(v["pagination"]["total"], 3);
}

#[test]
fn list_pages_walk_every_player_once_with_a_total() {
    let c = core_with(95);
    let mut key: Option<String> = None;
    let mut seen = Vec::new();
    let mut pages = 0;
    loop {
        let mut args = json!({"page_size": 20});
        if let Some(k) = &key {
            args["page_key"] = json!(k);
        }
        let v = call(&c, "structs_list_players", args).unwrap();
        assert_eq!(v["pagination"]["total"], 95);
        assert_eq!(v["pagination"]["page_size"], 20);
        for p in v["players"].as_array().unwrap() {
            seen.push(p["Player"]["id"].as_str().unwrap().to_string());
        }
        pages += 1;
        match v["pagination"]["next_key"].as_str() {
            Some(k) => key = Some(k.to_string()),
            None => break,
        }
    }
    assert_eq!(pages, 5);
    // Each once, in the chain's order of ids (their bytes: 1-1, 1-10, 1-11, …).
    let mut expected: Vec<String> = (1..=95).map(|i| format!("1-{i}")).collect();
    expected.sort();
    assert_eq!(seen, expected);
}

#[test]
fn default_and_maximum_page_sizes() {
    let c = core_with(150);
    let v = call(&c, "structs_list_players", json!({})).unwrap();
    assert_eq!(v["players"].as_array().unwrap().len(), 20);
    // A full page of 100 players is over the 25 KB limit; ids alone are not.
    let v = call(
        &c,
        "structs_list_players",
        json!({"page_size": 100, "fields": "id"}),
    )
    .unwrap();
    assert_eq!(v["players"].as_array().unwrap().len(), 100);
    assert!(v["pagination"]["next_key"].is_string());
}

#[test]
fn a_page_key_of_one_list_is_refused_by_another() {
    let c = core_with(60);
    let v = call(&c, "structs_list_players", json!({"page_size": 5})).unwrap();
    let key = v["pagination"]["next_key"].as_str().unwrap();
    let e = call(&c, "structs_list_planets", json!({"page_key": key})).unwrap_err();
    assert_eq!(err_code(&e), "VALIDATION_INVALID_FORMAT");
    assert_eq!(err_field(&e), "page_key");
}

#[test]
fn filters_narrow_lists() {
    let c = core_with(80);
    let v = call(
        &c,
        "structs_list_structs",
        json!({"owner": "1-5", "page_size": 100}),
    )
    .unwrap();
    let structs = v["structs"].as_array().unwrap();
    assert!(!structs.is_empty());
    assert!(structs.iter().all(|s| s["Struct"]["owner"] == "1-5"));
    assert_eq!(v["pagination"]["total"], structs.len());

    let v = call(
        &c,
        "structs_list_players",
        json!({"guild_id": "0-2", "page_size": 100}),
    )
    .unwrap();
    let players = v["players"].as_array().unwrap();
    assert!(!players.is_empty());
    assert!(players.iter().all(|p| p["Player"]["guildId"] == "0-2"));

    let v = call(&c, "structs_list_fleets", json!({"owner": "1-7"})).unwrap();
    assert_eq!(v["pagination"]["total"], 1);
    assert_eq!(v["fleets"][0]["Fleet"]["id"], "9-7");

    let v = call(&c, "structs_list_guilds", json!({"owner": "1-2"})).unwrap();
    assert_eq!(v["guilds"][0]["Guild"]["owner"], "1-2");

    let v = call(
        &c,
        "structs_list_entities",
        json!({"entity_type": "reactor", "id_prefix": "3-1"}),
    )
    .unwrap();
    assert!(
        v["reactors"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["Reactor"]["id"].as_str().unwrap().starts_with("3-1"))
    );
}

#[test]
fn list_entities_covers_every_kind() {
    let c = core();
    for code in 0..=11 {
        let v = call(&c, "structs_list_entities", json!({"entity_type": code})).unwrap();
        let kind = v["entity_type"].as_str().unwrap();
        let plural_key = v
            .as_object()
            .unwrap()
            .keys()
            .find(|k| k.starts_with(&kind[..3]) && k.as_str() != "entity_type")
            .cloned()
            .unwrap();
        assert!(!v[&plural_key].as_array().unwrap().is_empty(), "{kind}");
    }
}

#[test]
fn endpoints_filter_by_kind_and_category() {
    let c = core();
    let all = call(&c, "structs_query_endpoints", json!({})).unwrap();
    let total = all["total"].as_u64().unwrap();
    assert!(total > 30);
    let player = call(
        &c,
        "structs_query_endpoints",
        json!({"entity_type": "player"}),
    )
    .unwrap();
    let paths: Vec<&str> = player["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, vec!["/structs/player/{id}", "/structs/player"]);
    let system = call(&c, "structs_query_endpoints", json!({"category": "system"})).unwrap();
    assert!(
        system["endpoints"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["path"] == "/blockheight")
    );
}

#[test]
fn block_height_comes_from_the_source_clock() {
    let c = core();
    let v = call(&c, "structs_query_block_height", json!({})).unwrap();
    assert_eq!(v["height"], WorldConfig::DEFAULT_HEIGHT);
    assert_eq!(v["paused"], true);
    assert_eq!(v["source"], "sim");
}

#[test]
fn every_tool_declares_an_object_schema_and_a_description() {
    let c = core();
    let names: Vec<&str> = c.tool_names().collect();
    for required in [
        "structs_validate_entity_id",
        "structs_query_player",
        "structs_query_planet",
        "structs_query_guild",
        "structs_query_struct",
        "structs_query_fleet",
        "structs_query_entity",
        "structs_list_players",
        "structs_list_planets",
        "structs_list_structs",
        "structs_list_guilds",
        "structs_list_fleets",
        "structs_query_endpoints",
    ] {
        assert!(names.contains(&required), "{required} is not registered");
    }
    for spec in c.tools() {
        assert!(spec.name.starts_with("structs_"));
        assert_eq!(spec.input_schema["type"], "object", "{}", spec.name);
        assert_eq!(
            spec.input_schema["additionalProperties"], false,
            "{}",
            spec.name
        );
        assert!(spec.description.len() > 20, "{}", spec.name);
    }
}

#[test]
fn the_sim_clock_can_be_stepped_paused_and_resumed() {
    let c = core();
    let v = call(&c, "structs_clock_control", json!({"action": "step"})).unwrap();
    assert_eq!(v["height"], WorldConfig::DEFAULT_HEIGHT + 1);
    assert_eq!(v["paused"], true);
    let v = call(
        &c,
        "structs_clock_control",
        json!({"action": "step", "blocks": 10}),
    )
    .unwrap();
    assert_eq!(v["height"], WorldConfig::DEFAULT_HEIGHT + 11);
    let v = call(&c, "structs_query_block_height", json!({})).unwrap();
    assert_eq!(v["height"], WorldConfig::DEFAULT_HEIGHT + 11);

    let v = call(&c, "structs_clock_control", json!({"action": "resume"})).unwrap();
    assert_eq!(v["paused"], false);
    let v = call(&c, "structs_clock_control", json!({"action": "pause"})).unwrap();
    assert_eq!(v["paused"], true);
    assert!(v["height"].as_u64().unwrap() >= WorldConfig::DEFAULT_HEIGHT + 11);

    for (args, code, field) in [
        (
            json!({"action": "rewind"}),
            "VALIDATION_INVALID_VALUE",
            "action",
        ),
        (
            json!({"action": "step", "blocks": 0}),
            "VALIDATION_OUT_OF_RANGE",
            "blocks",
        ),
        (
            json!({"action": "step", "blocks": 1_000_001}),
            "VALIDATION_OUT_OF_RANGE",
            "blocks",
        ),
        (
            json!({"action": "pause", "blocks": 3}),
            "VALIDATION_INVALID_VALUE",
            "blocks",
        ),
        (json!({}), "VALIDATION_MISSING_FIELD", "action"),
    ] {
        let e = call(&c, "structs_clock_control", args.clone()).unwrap_err();
        assert_eq!(err_code(&e), code, "{args}");
        assert_eq!(err_field(&e), field, "{args}");
    }
}

#[test]
fn struct_types_are_queried_by_integer_id() {
    let c = core();
    let v = call(&c, "structs_query_struct_type", json!({"struct_type": 14})).unwrap();
    assert_eq!(v["struct_type"]["type"], "Ore Extractor");
    assert_eq!(v["struct_type"]["buildDifficulty"], 700);
    assert_eq!(v["struct_type"]["category"], "planet");
    for bad in [json!(0), json!(23), json!("14"), json!("5-14")] {
        let e = call(
            &c,
            "structs_query_struct_type",
            json!({ "struct_type": bad }),
        )
        .unwrap_err();
        assert!(err_code(&e).starts_with("VALIDATION_"), "{e}");
        assert_eq!(err_field(&e), "struct_type");
    }
}

/// JSON Schema counts `2.0` as an integer; the tools read it as one.
#[test]
fn integral_floats_are_read_as_the_integers_they_are() {
    let c = core();
    let v = call(
        &c,
        "structs_query_struct_type",
        json!({"struct_type": 14.0}),
    )
    .unwrap();
    assert_eq!(
        v,
        call(&c, "structs_query_struct_type", json!({"struct_type": 14})).unwrap()
    );
    let v = call(
        &c,
        "structs_clock_control",
        json!({"action": "step", "blocks": 3.0}),
    )
    .unwrap();
    assert_eq!(v["height"], WorldConfig::DEFAULT_HEIGHT + 3);
    let e = call(
        &c,
        "structs_clock_control",
        json!({"action": "pause", "blocks": 2.0}),
    )
    .unwrap_err();
    assert_eq!(err_field(&e), "blocks");
}

/// Agents send `null` for an optional argument they do not mean to give: it is taken
/// as not given, at any depth the schema describes, while a required argument given
/// as null is still refused. Every schema says so.
#[test]
fn null_for_an_optional_argument_means_not_given() {
    let c = core();
    let plain = call(&c, "structs_list_players", json!({"page_size": 3})).unwrap();
    let nulls = call(
        &c,
        "structs_list_players",
        json!({"page_size": 3, "page_key": null, "guild_id": null, "verbosity": null}),
    )
    .unwrap();
    assert_eq!(plain, nulls);
    let v = call(
        &c,
        "structs_query_player",
        json!({"player_id": "1-1", "include_references": null}),
    )
    .unwrap();
    assert!(v.get("references").is_none());
    // Required: refused, naming the argument.
    let e = call(&c, "structs_query_planet", json!({"planet_id": null})).unwrap_err();
    assert_eq!(err_code(&e), "VALIDATION_WRONG_TYPE");
    assert_eq!(err_field(&e), "planet_id");
    // An argument the tool does not take is still unknown, even as null.
    let e = call(
        &c,
        "structs_query_planet",
        json!({"planet_id": "2-1", "nope": null}),
    )
    .unwrap_err();
    assert_eq!(err_code(&e), "VALIDATION_UNKNOWN_FIELD");
    for tool in c.tools() {
        let props = tool.input_schema["properties"].as_object().unwrap();
        let required = tool.input_schema["required"].as_array().map_or(0, Vec::len);
        if props.len() > required {
            let d = tool.input_schema["description"].as_str().unwrap_or("");
            assert!(
                d.contains("null is taken as not given"),
                "{}: {d:?}",
                tool.name
            );
        }
    }
}

/// The tool catalog's own argument names work beside this project's.
#[test]
fn the_catalogs_argument_names_are_accepted() {
    let c = core();
    let v = call(
        &c,
        "structs_workflow_execute",
        json!({"workflow": "query-and-monitor-planet", "parameters": {"planet_id": "2-3"}}),
    )
    .unwrap();
    assert_eq!(v["inputs"]["planet_id"], "2-3");
    let e = call(
        &c,
        "structs_workflow_execute",
        json!({"workflow": "query-and-monitor-planet", "parameters": {}, "inputs": {}}),
    )
    .unwrap_err();
    assert_eq!(err_field(&e), "parameters");
    assert!(e["error"]["message"].as_str().unwrap().contains("not both"));
    // The alias is in the schema an agent reads.
    let spec = c.tool_spec("structs_workflow_execute").unwrap();
    assert!(spec.input_schema["properties"]["parameters"].is_object());
    // Every alias is in its tool's schema, beside the name it stands for.
    for &(tool, alias, name) in structs_console::tools::CATALOG_NAMES {
        let schema = &c.tool_spec(tool).unwrap().input_schema;
        let at = |path: &str| {
            let pointer: String = path
                .split('.')
                .map(|p| format!("/properties/{p}"))
                .collect();
            schema.pointer(&pointer).cloned()
        };
        assert!(
            at(alias).is_some() && at(name).is_some(),
            "{tool}: {alias} {name}"
        );
    }

    // The docs search's category, plural as the catalog writes it, is the doc type.
    let by_type = call(
        &c,
        "structs_docs_search",
        json!({"query": "player", "type": "schema"}),
    )
    .unwrap();
    let by_category = call(
        &c,
        "structs_docs_search",
        json!({"query": "player", "category": "schemas"}),
    )
    .unwrap();
    assert_eq!(by_type["hits"], by_category["hits"]);
    assert!(!by_type["hits"].as_array().unwrap().is_empty());
    let index = call(&c, "structs_docs_get_index", json!({"category": "schemas"})).unwrap();
    assert_eq!(index["category"], "schema");

    // The catalog's damage example, in its own names (with the chain's weapon names).
    let ours = call(
        &c,
        "structs_calculate_damage",
        json!({"attacker": {"struct_type": 10, "weapon": "primary", "damage": 3},
               "defender": {"struct_type": 1, "attack_reduction": 1}}),
    )
    .unwrap();
    let catalog = call(
        &c,
        "structs_calculate_damage",
        json!({"attacker": {"struct_type": 10, "weapon_type": "primary", "power": 3},
               "defender": {"struct_type": 1, "armor": 1}}),
    )
    .unwrap();
    assert_eq!(ours["expected"], catalog["expected"]);
    assert_eq!(ours["attacker"], catalog["attacker"]);
}

/// No answer is over the limit, errors included: a value echoed back is cut, with its
/// length stated.
#[test]
fn an_error_about_a_huge_value_is_within_the_limit() {
    let c = core();
    let huge = "k".repeat(100_000);
    let long_tool = "no_such_tool_".repeat(5_000);
    for (tool, args) in [
        ("structs_list_entities", json!({"entity_type": huge})),
        ("structs_query_endpoints", json!({"entity_type": huge})),
        ("structs_query_entity", json!({"id": huge})),
        (long_tool.as_str(), json!({})),
    ] {
        let e = call(&c, tool, args).unwrap_err();
        let size = serde_json::to_vec(&e).unwrap().len();
        assert!(
            size <= 2_000,
            "{}: a {size}-byte error",
            &tool[..20.min(tool.len())]
        );
        let text = e.to_string();
        assert!(
            text.contains("characters") && !text.contains(&"k".repeat(100)),
            "{text}"
        );
    }
}

/// An unknown argument's refusal names the arguments the object it sits in does take,
/// at the top and inside a nested object, so the right name is beside the wrong one.
#[test]
fn an_unknown_argument_is_answered_with_the_names_that_are_known() {
    let core = core();
    let e = call(
        &core,
        "structs_query_player",
        json!({"player_id": "1-1", "player": "1-1"}),
    )
    .unwrap_err();
    assert_eq!(err_code(&e), "VALIDATION_UNKNOWN_FIELD", "{e}");
    assert_eq!(err_field(&e), "player");
    let reason = e["error"]["details"]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("is not an argument of this tool; its arguments are player_id, "),
        "{reason}"
    );
    let e = call(
        &core,
        "structs_calculate_damage",
        json!({"attacker": {"struct_type": 10}, "defender": {"struct_type": 1, "defense": 25}}),
    )
    .unwrap_err();
    assert_eq!(err_field(&e), "defender.defense", "{e}");
    let reason = e["error"]["details"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("; defender takes struct_type, "),
        "{reason}"
    );
    assert!(reason.contains("attack_reduction"), "{reason}");
    // A tool with no arguments of its own still lists the common ones.
    let e = call(&core, "structs_query_block_height", json!({"x": 1})).unwrap_err();
    let reason = e["error"]["details"]["reason"].as_str().unwrap();
    assert!(reason.contains("its arguments are "), "{reason}");
}
