//! References through `Core::call`: what an agent gets when it asks a query or list tool
//! for the entities its result mentions.

mod support;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use structs_console::Core;
use structs_console::entity::EntityId;
use structs_console::references::ReferenceConfig;
use structs_console::source::GameSource;
use structs_console::source::instrumented::InstrumentedSource;
use structs_console::source::sim::WorldConfig;
use support::calls::ok;
use support::sim::{fixed_clock, paused};

fn core_over(source: Arc<dyn GameSource>, config: ReferenceConfig) -> Core {
    structs_console::assembly::builder(source)
        .clock(fixed_clock())
        .references(config)
        .build()
        .unwrap()
}

fn core() -> Core {
    core_over(
        Arc::new(paused(WorldConfig::demo())),
        ReferenceConfig::default(),
    )
}

/// A core over an instrumented sim, and the instrumented source to inspect.
fn instrumented(
    wrap: impl FnOnce(InstrumentedSource) -> InstrumentedSource,
    config: ReferenceConfig,
) -> (Core, Arc<InstrumentedSource>) {
    let source = Arc::new(wrap(InstrumentedSource::new(Arc::new(paused(
        WorldConfig::demo(),
    )))));
    (core_over(source.clone(), config), source)
}

fn id(s: &str) -> EntityId {
    EntityId::parse(s).unwrap()
}

async fn entity(core: &Core, id: &str) -> Value {
    ok(core, "structs_query_entity", json!({ "id": id })).await["entity"].clone()
}

fn keys(refs: &Value) -> Vec<String> {
    refs.as_object().unwrap().keys().cloned().collect()
}

/// The player's direct relationships as the chain data states them.
fn player_links(player: &Value) -> Vec<(String, String)> {
    ["guildId", "substationId", "planetId", "fleetId"]
        .iter()
        .filter_map(|f| {
            let v = player["Player"][f].as_str()?;
            EntityId::parse(v)
                .ok()
                .map(|_| (f.to_string(), v.to_string()))
        })
        .collect()
}

#[tokio::test]
async fn off_by_default_and_false_is_byte_for_byte_the_plain_result() {
    let core = core();
    for (tool, args) in [
        ("structs_query_player", json!({"player_id": "1-1"})),
        ("structs_query_planet", json!({"planet_id": "2-1"})),
        ("structs_query_entity", json!({"id": "3-1"})),
        ("structs_list_planets", json!({"page_size": 5})),
        ("structs_query_block_height", json!({})),
    ] {
        let plain = serde_json::to_string(&ok(&core, tool, args.clone()).await).unwrap();
        let mut off = args.clone();
        off["include_references"] = json!(false);
        let off = serde_json::to_string(&ok(&core, tool, off).await).unwrap();
        assert_eq!(plain, off, "{tool}");
        assert!(!plain.contains("references"), "{tool}: {plain}");
    }
    // And the plain result is exactly what the query tools returned before references
    // existed: the source's entity under the kind's name, and the timestamp.
    let source = paused(WorldConfig::demo());
    for (tool, field, id_text) in [
        ("structs_query_player", "player_id", "1-1"),
        ("structs_query_planet", "planet_id", "2-1"),
        ("structs_query_fleet", "fleet_id", "9-1"),
    ] {
        let entity = source.get(id(id_text)).await.unwrap().unwrap();
        let kind = id(id_text).kind.name();
        let expected = json!({ kind: entity, "timestamp": "2026-11-21T12:00:00Z" });
        for args in [
            json!({ field: id_text }),
            json!({ field: id_text, "include_references": false }),
        ] {
            let got = ok(&core, tool, args).await;
            assert_eq!(
                serde_json::to_string(&got).unwrap(),
                serde_json::to_string(&expected).unwrap(),
                "{tool}"
            );
        }
    }
}

#[tokio::test]
async fn a_player_query_carries_its_direct_relationships_at_depth_one() {
    let core = core();
    let v = ok(
        &core,
        "structs_query_player",
        json!({"player_id": "1-1", "include_references": true}),
    )
    .await;
    let links = player_links(&v["player"]);
    assert!(links.len() >= 3, "{links:?}");
    let refs = &v["references"];
    for (field, target) in &links {
        let r = &refs[target];
        assert_eq!(r["status"], "success", "{target}: {r}");
        assert_eq!(r["id"], *target);
        assert_eq!(r["referenced_from"], *field);
        assert_eq!(r["referenced_in"], "1-1");
        assert_eq!(r["depth"], 1);
        let kind = id(target).kind;
        assert_eq!(r["reference_type"], kind.name());
        // The entity's full data, exactly as its query returns it.
        let full = entity(&core, target).await;
        for (k, want) in full.as_object().unwrap() {
            assert_eq!(&r[k], want, "{target}.{k}");
        }
    }
    assert!(refs.get("1-1").is_none(), "no self-reference");
    // The player mentions nothing else an agent would need at depth 1.
    let mut expected: Vec<String> = links.iter().map(|(_, t)| t.clone()).collect();
    expected.sort();
    let mut got = keys(refs);
    got.sort();
    assert_eq!(got, expected);
    let s = &v["references_summary"];
    assert_eq!(s["status"], "complete");
    assert_eq!(s["included"], links.len());
    assert_eq!(s["resolved"], links.len());
    assert_eq!(s["left_out"], 0);
    // The plain fields are untouched.
    assert_eq!(v["player"]["Player"]["id"], "1-1");
    assert_eq!(
        keys(&v),
        ["player", "timestamp", "references", "references_summary"]
    );
}

#[tokio::test]
async fn depth_two_adds_the_references_of_references_once_and_stops_at_cycles() {
    let (core, source) = instrumented(|s| s, ReferenceConfig::default());
    let one = ok(
        &core,
        "structs_query_player",
        json!({"player_id": "1-1", "include_references": true}),
    )
    .await;
    let two = ok(
        &core,
        "structs_query_player",
        json!({"player_id": "1-1", "include_references": true, "reference_depth": 2}),
    )
    .await;
    let refs1 = one["references"].as_object().unwrap();
    let refs2 = two["references"].as_object().unwrap();
    assert!(refs2.len() > refs1.len());
    for k in refs1.keys() {
        assert_eq!(refs2[k]["depth"], 1, "{k} stays a first-level reference");
    }
    // The guild's primary reactor is a reference of a reference.
    let guild_id = one["player"]["Player"]["guildId"].as_str().unwrap();
    let guild = &refs2[guild_id];
    let reactor = guild["Guild"]["primaryReactorId"].as_str().unwrap();
    assert_eq!(refs2[reactor]["depth"], 2);
    assert_eq!(refs2[reactor]["referenced_in"], guild_id);
    assert_eq!(refs2[reactor]["referenced_from"], "primaryReactorId");
    // The planet's owner is the queried player: the cycle ends there.
    let planet_id = one["player"]["Player"]["planetId"].as_str().unwrap();
    assert_eq!(refs2[planet_id]["Planet"]["owner"], "1-1");
    assert!(refs2.get("1-1").is_none());
    // Every second-level reference is mentioned by a first-level one.
    for (k, r) in refs2 {
        if r["depth"] == 2 {
            let by = r["referenced_in"].as_str().unwrap();
            assert_eq!(refs2[by]["depth"], 1, "{k} referenced in {by}");
        }
    }
    assert_eq!(two["references_summary"]["depth"], 2);
    // Each entity was fetched once: the two queries, then every reference of each
    // (nothing is cached across calls here: the second call repeats the first level).
    source.reset_counts();
    core.reference_cache().clear();
    let again = ok(
        &core,
        "structs_query_player",
        json!({"player_id": "1-1", "include_references": true, "reference_depth": 2}),
    )
    .await;
    assert_eq!(
        source.gets(),
        1 + refs2.len() as u64,
        "the query, then each reference once"
    );
    assert_eq!(again["references"], two["references"]);
}

#[tokio::test]
async fn primary_leaves_out_slot_contents_and_all_names_the_slot() {
    let core = core();
    // Find a planet with something in its slots.
    let page = ok(&core, "structs_list_planets", json!({"page_size": 24})).await;
    let planet = page["planets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| {
            ["space", "air", "land", "water"].iter().any(|row| {
                p["Planet"][row]
                    .as_array()
                    .is_some_and(|r| r.iter().any(|s| s != ""))
            })
        })
        .expect("a planet with structs")
        .clone();
    let pid = planet["Planet"]["id"].as_str().unwrap();
    let all = ok(
        &core,
        "structs_query_planet",
        json!({"planet_id": pid, "include_references": "all"}),
    )
    .await;
    let primary = ok(
        &core,
        "structs_query_planet",
        json!({"planet_id": pid, "include_references": "primary"}),
    )
    .await;
    let owner = planet["Planet"]["owner"].as_str().unwrap();
    assert_eq!(keys(&primary["references"]), [owner]);
    let structs: Vec<(&String, &Value)> = all["references"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, r)| r["reference_type"] == "struct")
        .collect();
    assert!(!structs.is_empty());
    for (sid, r) in structs {
        let from = r["referenced_from"].as_str().unwrap();
        let (row, rest) = from
            .split_once('[')
            .expect("a slot reference names its index");
        let slot: usize = rest.trim_end_matches(']').parse().unwrap();
        assert_eq!(planet["Planet"][row][slot], *sid, "{from}");
    }
    assert_eq!(primary["references_summary"]["mode"], "primary");
}

#[tokio::test]
async fn the_type_filter_keeps_only_the_kinds_asked_for() {
    let core = core();
    let v = ok(
        &core,
        "structs_query_player",
        json!({"player_id": "1-1", "include_references": true, "reference_depth": 2,
               "reference_types": ["planet", "reactor"]}),
    )
    .await;
    let refs = v["references"].as_object().unwrap();
    assert!(!refs.is_empty());
    for r in refs.values() {
        assert!(
            r["reference_type"] == "planet" || r["reference_type"] == "reactor",
            "{r}"
        );
    }
    assert!(refs.values().any(|r| r["reference_type"] == "planet"));
    // The guild is filtered out, yet its reactor is reached through it at depth 2.
    let guild = v["player"]["Player"]["guildId"].as_str().unwrap();
    let reactor = refs
        .values()
        .find(|r| r["reference_type"] == "reactor")
        .expect("the guild's reactor");
    assert_eq!(reactor["referenced_in"], guild);
    assert_eq!(reactor["depth"], 2);
    assert!(refs.get(guild).is_none());
    assert!(v["references_summary"]["traversed"].as_u64().unwrap() >= 1);

    // At depth 1 nothing is fetched only to be walked.
    let v = ok(
        &core,
        "structs_query_player",
        json!({"player_id": "1-1", "include_references": true, "reference_types": ["planet"]}),
    )
    .await;
    assert_eq!(keys(&v["references"]).len(), 1);
    assert_eq!(v["references_summary"]["traversed"], 0);

    // Entities walked through count against max_references, and one the limit stops
    // makes the map partial.
    let v = ok(
        &core,
        "structs_query_player",
        json!({"player_id": "1-1", "include_references": true, "reference_depth": 2,
               "reference_types": ["reactor"], "max_references": 2}),
    )
    .await;
    let s = &v["references_summary"];
    let fetched = s["included"].as_u64().unwrap() + s["traversed"].as_u64().unwrap();
    assert!(fetched <= 2, "{s}");
    assert_eq!(s["status"], "partial", "{s}");
}

#[tokio::test]
async fn limits_cut_the_map_and_the_summary_says_how_much_is_missing() {
    let core = core();
    let v = ok(
        &core,
        "structs_query_player",
        json!({"player_id": "1-1", "include_references": true, "max_references": 2}),
    )
    .await;
    let links = player_links(&v["player"]);
    assert_eq!(v["references"].as_object().unwrap().len(), 2);
    let s = &v["references_summary"];
    assert_eq!(s["status"], "partial");
    assert_eq!(s["left_out"], links.len() - 2);
    assert_eq!(s["left_out_by"]["max_references"], links.len() - 2);
    let left: Vec<&str> = s["left_out_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    // The ones left out are the last ones the player lists, in order.
    let expected: Vec<&str> = links[2..].iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(left, expected);
}

#[tokio::test]
async fn list_items_each_add_at_most_the_per_entity_limit() {
    let core = core();
    let v = ok(
        &core,
        "structs_list_players",
        json!({"page_size": 10, "include_references": "all", "max_references_per_entity": 2,
               "max_references": 500}),
    )
    .await;
    let refs = v["references"].as_object().unwrap();
    let mut per_item = std::collections::HashMap::<String, usize>::new();
    for r in refs.values() {
        *per_item
            .entry(r["referenced_in"].as_str().unwrap().to_string())
            .or_default() += 1;
    }
    assert!(per_item.values().all(|&n| n <= 2), "{per_item:?}");
    assert!(
        v["references_summary"]["left_out_by"]["max_references_per_entity"]
            .as_u64()
            .unwrap()
            > 0
    );
    // Listed players are in the payload already: never repeated as references.
    for p in v["players"].as_array().unwrap() {
        let pid = p["Player"]["id"].as_str().unwrap();
        assert!(refs.get(pid).is_none(), "{pid} is listed and referenced");
    }
    // The global cap holds across items.
    let v = ok(
        &core,
        "structs_list_players",
        json!({"page_size": 24, "include_references": "all", "max_references": 7}),
    )
    .await;
    assert_eq!(v["references"].as_object().unwrap().len(), 7);
    assert!(
        v["references_summary"]["left_out_by"]["max_references"]
            .as_u64()
            .unwrap()
            > 0
    );
}

#[tokio::test]
async fn lists_default_to_primary_references_within_the_default_limits() {
    let core = core();
    let v = ok(
        &core,
        "structs_list_planets",
        // Summary verbosity keeps 24 planets and their owners under the size limit;
        // full metadata says where each reference came from.
        json!({"page_size": 24, "include_references": true, "verbosity": "summary",
               "reference_metadata": "full"}),
    )
    .await;
    let s = &v["references_summary"];
    assert_eq!(s["mode"], "primary");
    let refs = v["references"].as_object().unwrap();
    assert!(refs.len() <= 50);
    for r in refs.values() {
        assert_eq!(r["referenced_from"], "owner", "{r}");
        assert_eq!(r["reference_type"], "player");
    }
    // Every planet's owner is there (24 players, each owning a planet).
    for p in v["planets"].as_array().unwrap() {
        let owner = p["Planet"]["owner"].as_str().unwrap();
        assert_eq!(refs[owner]["status"], "success");
    }
}

#[tokio::test]
async fn failed_references_are_indicated_or_omitted_and_the_response_still_succeeds() {
    let player = entity(&core(), "1-1").await;
    let guild = player["Player"]["guildId"].as_str().unwrap().to_string();
    let (core, _) = instrumented(|s| s.failing(id(&guild)), ReferenceConfig::default());
    let v = ok(
        &core,
        "structs_query_player",
        json!({"player_id": "1-1", "include_references": true}),
    )
    .await;
    let r = &v["references"][&guild];
    assert_eq!(r["status"], "failed");
    assert_eq!(r["error_code"], "API_ERROR");
    assert!(r["error"].as_str().unwrap().contains(&guild));
    assert!(r.get("Guild").is_none());
    assert_eq!(v["references_summary"]["failed"], 1);
    assert_eq!(v["player"]["Player"]["id"], "1-1");
    let others = v["references"]
        .as_object()
        .unwrap()
        .values()
        .filter(|r| r["status"] == "success")
        .count();
    assert_eq!(others, player_links(&player).len() - 1);

    let v = ok(
        &core,
        "structs_query_player",
        json!({"player_id": "1-1", "include_references": true, "on_reference_error": "omit"}),
    )
    .await;
    assert!(v["references"].get(&guild).is_none());
    assert_eq!(v["references_summary"]["failed_omitted"], 1);
}

/// A lean answer (fields or a small verbosity) carries records alone, but a failure is
/// never silent: the failed entry keeps its error and where it was mentioned, and the
/// summary appears to say so; with `reference_metadata: "none"` the entry leaves the map
/// and the summary names it. `"full"` gives today's bookkeeping back.
#[tokio::test]
async fn lean_references_carry_records_and_still_say_what_failed() {
    let player = entity(&core(), "1-1").await;
    let guild = player["Player"]["guildId"].as_str().unwrap().to_string();
    let planet = player["Player"]["planetId"].as_str().unwrap().to_string();
    let (core, _) = instrumented(|s| s.failing(id(&guild)), ReferenceConfig::default());
    let ask = |extra: Value| {
        let mut args = json!({"player_id": "1-1", "include_references": true});
        for (k, v) in extra.as_object().unwrap() {
            args[k] = v.clone();
        }
        args
    };
    let v = ok(
        &core,
        "structs_query_player",
        ask(json!({"verbosity": "summary"})),
    )
    .await;
    let resolved = v["references"][&planet].as_object().unwrap();
    let keys: Vec<&str> = resolved.keys().map(String::as_str).collect();
    assert_eq!(keys[0], "reference_type", "{v}");
    assert!(resolved.contains_key("Planet"), "{v}");
    for meta in ["id", "status", "referenced_from", "referenced_in", "depth"] {
        assert!(!resolved.contains_key(meta), "{meta} in a lean entry: {v}");
    }
    let failed = &v["references"][&guild];
    assert_eq!(failed["status"], "failed", "{v}");
    assert_eq!(failed["error_code"], "API_ERROR");
    assert_eq!(failed["referenced_from"], "guildId");
    assert_eq!(failed["referenced_in"], "1-1");
    let summary = &v["references_summary"];
    assert_eq!(summary["failed"], 1, "{summary}");
    assert_eq!(summary["failed_ids"], json!([guild]), "{summary}");
    assert!(summary.get("from_cache").is_none() && summary.get("left_out").is_none());

    let v = ok(
        &core,
        "structs_query_player",
        ask(json!({"fields": "planetId", "reference_metadata": "none"})),
    )
    .await;
    assert!(v["references"].get(&guild).is_none(), "{v}");
    assert_eq!(v["references_summary"]["failed_ids"], json!([guild]), "{v}");
    assert_eq!(v["references_summary"]["failed_omitted"], 1, "{v}");

    let v = ok(
        &core,
        "structs_query_player",
        ask(json!({"verbosity": "summary", "reference_metadata": "full"})),
    )
    .await;
    assert_eq!(v["references"][&planet]["status"], "success", "{v}");
    assert_eq!(v["references"][&planet]["depth"], 1, "{v}");
    assert!(v["references_summary"]["from_cache"].as_u64().is_some());

    // Without a failure or a limit, a lean answer has no summary at all.
    let (core, _) = instrumented(|s| s, ReferenceConfig::default());
    let v = ok(
        &core,
        "structs_query_player",
        ask(json!({"verbosity": "compact"})),
    )
    .await;
    assert!(v.get("references_summary").is_none(), "{v}");
    assert!(!v["references"].as_object().unwrap().is_empty());
    // Detailed and raw keep the full bookkeeping.
    for verbosity in ["detailed", "raw"] {
        let v = ok(
            &core,
            "structs_query_player",
            ask(json!({"verbosity": verbosity})),
        )
        .await;
        assert_eq!(v["references_summary"]["status"], "complete", "{verbosity}");
        assert_eq!(v["references"][&planet]["referenced_from"], "planetId");
    }
}

/// Primary references at depth 2 bring what the first-level entities hold (the structs
/// in the planet's slots, the fleet's command ship), not their own relationships (the
/// guild's reactor and entry substation).
#[tokio::test]
async fn primary_at_depth_two_brings_what_the_entities_hold() {
    let core = core();
    let v = ok(
        &core,
        "structs_query_player",
        json!({"player_id": "1-2", "include_references": "primary", "reference_depth": 2,
               "reference_metadata": "full"}),
    )
    .await;
    let refs = v["references"].as_object().unwrap();
    let planet = &refs[v["player"]["Player"]["planetId"].as_str().unwrap()];
    let guild = &refs[v["player"]["Player"]["guildId"].as_str().unwrap()];
    let slots: Vec<&str> = ["space", "air", "land", "water"]
        .iter()
        .flat_map(|row| planet["Planet"][row].as_array().unwrap())
        .filter_map(Value::as_str)
        .filter(|s| !s.is_empty())
        .collect();
    assert!(!slots.is_empty());
    for s in &slots {
        assert_eq!(refs[*s]["depth"], 2, "{s} is not in the map: {v}");
    }
    let reactor = guild["Guild"]["primaryReactorId"].as_str().unwrap();
    assert!(
        refs.get(reactor).is_none(),
        "the guild's reactor came along: {v}"
    );
    for r in refs.values().filter(|r| r["depth"] == 2) {
        assert_eq!(r["reference_type"], "struct", "{r}");
    }
}

#[tokio::test]
async fn a_hanging_reference_times_out_alone() {
    let player = entity(&core(), "1-1").await;
    let planet = player["Player"]["planetId"].as_str().unwrap().to_string();
    let config = ReferenceConfig {
        reference_timeout_ms: 150,
        ..ReferenceConfig::default()
    };
    let (core, _) = instrumented(|s| s.hanging(id(&planet)), config);
    let started = std::time::Instant::now();
    let v = ok(
        &core,
        "structs_query_player",
        json!({"player_id": "1-1", "include_references": true}),
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    let r = &v["references"][&planet];
    assert_eq!(r["status"], "failed");
    assert_eq!(r["error_code"], "TOOL_TIMEOUT");
    assert!(r["error"].as_str().unwrap().contains("150 ms"));
    let fleet = player["Player"]["fleetId"].as_str().unwrap();
    assert_eq!(v["references"][fleet]["status"], "success");
}

#[tokio::test]
async fn the_timeout_is_per_reference_not_per_batch() {
    let player = entity(&core(), "1-1").await;
    let guild = player["Player"]["guildId"].as_str().unwrap().to_string();
    let substation = player["Player"]["substationId"]
        .as_str()
        .unwrap()
        .to_string();
    // One fetch at a time: the guild hangs for its whole 150 ms, then the substation
    // takes 100 ms of its own 150 ms and succeeds.
    let config = ReferenceConfig {
        reference_timeout_ms: 150,
        max_parallel_queries: 1,
        ..ReferenceConfig::default()
    };
    let (core, _) = instrumented(
        |s| {
            s.hanging(id(&guild))
                .slow(id(&substation), Duration::from_millis(100))
        },
        config,
    );
    let started = std::time::Instant::now();
    let v = ok(
        &core,
        "structs_query_player",
        json!({"player_id": "1-1", "include_references": true}),
    )
    .await;
    assert!(
        started.elapsed() >= Duration::from_millis(250),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(v["references"][&guild]["error_code"], "TOOL_TIMEOUT");
    assert_eq!(v["references"][&substation]["status"], "success");
}

#[tokio::test]
async fn rate_limited_fetches_back_off_and_then_resolve() {
    let player = entity(&core(), "1-1").await;
    let fleet = player["Player"]["fleetId"].as_str().unwrap().to_string();
    let config = ReferenceConfig {
        backoff_ms: 5,
        ..ReferenceConfig::default()
    };
    let (core, source) = instrumented(|s| s.rate_limited(id(&fleet), 3), config.clone());
    let v = ok(
        &core,
        "structs_query_player",
        json!({"player_id": "1-1", "include_references": true}),
    )
    .await;
    assert_eq!(v["references"][&fleet]["status"], "success");
    let links = player_links(&player).len() as u64;
    // The query itself, one fetch per reference, and three refused attempts.
    assert_eq!(source.gets(), 1 + links + 3);

    // More refusals than retries: a failure that says so.
    let (core, _) = instrumented(
        |s| s.rate_limited(id(&fleet), 10),
        ReferenceConfig {
            rate_limit_retries: 2,
            ..config
        },
    );
    let v = ok(
        &core,
        "structs_query_player",
        json!({"player_id": "1-1", "include_references": true}),
    )
    .await;
    assert_eq!(v["references"][&fleet]["error_code"], "RATE_LIMIT_EXCEEDED");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resolution_never_has_more_fetches_in_flight_than_allowed_across_calls() {
    let config = ReferenceConfig {
        max_parallel_queries: 3,
        ..ReferenceConfig::default()
    };
    let (core, source) = instrumented(|s| s.with_delay(Duration::from_millis(5)), config);
    let args = json!({"page_size": 24, "include_references": "all", "max_references": 60,
                      "verbosity": "summary"});
    let (a, b) = tokio::join!(
        ok(&core, "structs_list_planets", args.clone()),
        ok(&core, "structs_list_fleets", args),
    );
    assert!(a["references"].as_object().unwrap().len() > 10);
    assert!(b["references"].as_object().unwrap().len() > 10);
    // Two calls resolving at once still share the three permits.
    assert_eq!(source.peak_in_flight(), 3);
}

#[tokio::test(start_paused = true)]
async fn the_cache_serves_repeats_until_its_ttl_or_the_next_block() {
    let (core, source) = instrumented(|s| s, ReferenceConfig::default());
    let args = json!({"player_id": "1-1", "include_references": true});
    let first = ok(&core, "structs_query_player", args.clone()).await;
    let n = first["references"].as_object().unwrap().len() as u64;
    assert_eq!(source.gets(), 1 + n);
    assert_eq!(first["references_summary"]["from_cache"], 0);

    let again = ok(&core, "structs_query_player", args.clone()).await;
    assert_eq!(
        source.gets(),
        1 + n + 1,
        "only the query itself is fetched again"
    );
    assert_eq!(again["references_summary"]["from_cache"], n);
    assert_eq!(again["references"], first["references"]);

    // Past the TTL (30 s) the references are fetched afresh.
    tokio::time::advance(Duration::from_secs(31)).await;
    let later = ok(&core, "structs_query_player", args.clone()).await;
    assert_eq!(later["references_summary"]["from_cache"], 0);
    assert_eq!(source.gets(), 2 * (1 + n) + 1);

    // A new block empties the cache even within the TTL.
    ok(&core, "structs_clock_control", json!({"action": "step"})).await;
    let next_block = ok(&core, "structs_query_player", args).await;
    assert_eq!(next_block["references_summary"]["from_cache"], 0);
}

#[tokio::test]
async fn a_server_can_turn_references_off_per_tool_and_bound_what_calls_ask() {
    let config: ReferenceConfig = toml::from_str(
        r#"
        max_references = 10
        max_references_limit = 10
        [tools.structs_list_players]
        enabled = false
        "#,
    )
    .unwrap();
    let core = core_over(Arc::new(paused(WorldConfig::demo())), config);
    let v = ok(
        &core,
        "structs_list_players",
        json!({"page_size": 3, "include_references": true}),
    )
    .await;
    assert_eq!(v["references_summary"]["status"], "disabled");
    assert_eq!(v["references"], json!({}));
    assert_eq!(v["players"].as_array().unwrap().len(), 3);

    let e = core
        .call_json(
            "structs_query_player",
            json!({"player_id": "1-1", "include_references": true, "max_references": 11}),
        )
        .await
        .unwrap_err();
    assert_eq!(e["error"]["code"], "VALIDATION_OUT_OF_RANGE");
    assert_eq!(e["error"]["details"]["field"], "max_references");

    // A configuration naming a tool that does not exist is refused at start.
    let bad: ReferenceConfig =
        toml::from_str("[tools.structs_query_plnet]\nenabled = false").unwrap();
    let e = structs_console::assembly::builder(Arc::new(paused(WorldConfig::demo())))
        .references(bad)
        .build()
        .err()
        .unwrap();
    assert!(e.contains("structs_query_plnet"), "{e}");
}

#[tokio::test]
async fn reference_options_are_part_of_every_query_and_list_schema_and_checked() {
    let core = core();
    for spec in core.tools() {
        let props = &spec.input_schema["properties"];
        let takes = props.get("include_references").is_some();
        let should = spec.name.starts_with("structs_query_")
            && spec.name != "structs_query_endpoints"
            || spec.name.starts_with("structs_list_");
        assert_eq!(takes, should, "{}", spec.name);
    }
    for (args, field, code) in [
        (
            json!({"player_id": "1-1", "include_references": true, "reference_depth": 3}),
            "reference_depth",
            "VALIDATION_OUT_OF_RANGE",
        ),
        (
            json!({"player_id": "1-1", "include_references": true, "reference_depth": 0}),
            "reference_depth",
            "VALIDATION_OUT_OF_RANGE",
        ),
        (
            json!({"player_id": "1-1", "include_references": "yes"}),
            "include_references",
            "VALIDATION_INVALID_VALUE",
        ),
        (
            json!({"player_id": "1-1", "include_references": true, "reference_types": ["moon"]}),
            "reference_types[0]",
            "VALIDATION_INVALID_VALUE",
        ),
        (
            json!({"player_id": "1-1", "include_references": true, "reference_types": "planet"}),
            "reference_types",
            "VALIDATION_WRONG_TYPE",
        ),
    ] {
        let e = core
            .call_json("structs_query_player", args.clone())
            .await
            .unwrap_err();
        assert_eq!(e["error"]["code"], code, "{args}: {e}");
        assert_eq!(e["error"]["details"]["field"], field, "{args}: {e}");
    }
    let e = core
        .call_json(
            "structs_validate_entity_id",
            json!({"id": "1-1", "include_references": true}),
        )
        .await
        .unwrap_err();
    assert_eq!(e["error"]["code"], "VALIDATION_UNKNOWN_FIELD");
}

#[path = "../benches/support/agent_tasks.rs"]
mod agent_tasks;

/// The benchmark's scripted agent reaches the same answers in every style: with
/// references in fewer calls on every task, and lean in fewer bytes as well.
#[tokio::test]
async fn the_scripted_agent_answers_the_same_in_fewer_calls() {
    use agent_tasks::{Agent, Style};
    let core = core();
    let mut agents: Vec<Agent> = Style::ALL
        .iter()
        .map(|&style| Agent::new(core.clone(), style))
        .collect();
    for (i, name) in agent_tasks::TASKS.iter().enumerate() {
        let mut answers = Vec::new();
        let mut costs = Vec::new();
        for a in &mut agents {
            a.forget();
            let (calls, bytes) = (a.calls, a.bytes);
            answers.push(agent_tasks::run(i, a).await);
            costs.push((a.calls - calls, a.bytes - bytes));
        }
        for (style, answer) in Style::ALL.iter().zip(&answers) {
            assert_eq!(&answers[0], answer, "{name}: {}", style.name());
        }
        let [plain, refs, lean] = [costs[0], costs[1], costs[2]];
        println!(
            "{name}: calls {} / {} / {}, bytes {} / {} / {}",
            plain.0, refs.0, lean.0, plain.1, refs.1, lean.1
        );
        assert!(refs.0 < plain.0, "{name}: {costs:?}");
        assert!(lean.0 <= refs.0, "{name}: {costs:?}");
        assert!(lean.1 < refs.1, "{name}: lean is not smaller: {costs:?}");
    }
    let [plain, refs, lean] = [&agents[0], &agents[1], &agents[2]];
    println!(
        "total: calls {} / {} / {}, bytes {} / {} / {}",
        plain.calls, refs.calls, lean.calls, plain.bytes, refs.bytes, lean.bytes
    );
    let saved = |a: &Agent| 1.0 - f64::from(a.calls) / f64::from(plain.calls);
    assert!(
        saved(refs) >= 0.7,
        "{} vs {} calls",
        refs.calls,
        plain.calls
    );
    assert!(
        saved(lean) >= 0.7,
        "{} vs {} calls",
        lean.calls,
        plain.calls
    );
    let bytes_saved = 1.0 - lean.bytes as f64 / plain.bytes as f64;
    assert!(
        bytes_saved >= 0.6,
        "lean read {} bytes, plain {}",
        lean.bytes,
        plain.bytes
    );
}

/// The benchmark's two lean tasks measured another way answer the same plain and lean:
/// twelve briefings, and a scan of every struct's id and type in three calls as a table.
#[tokio::test]
async fn lean_briefings_and_a_tabular_scan_answer_the_same_as_plain() {
    use agent_tasks::{Agent, Style};
    let core = core();
    let mut plain = Agent::new(core.clone(), Style::Plain);
    let mut lean = Agent::new(core.clone(), Style::Lean);
    for p in agent_tasks::BRIEFED {
        plain.forget();
        lean.forget();
        let (a, b) = (
            agent_tasks::briefing(&mut plain, p).await,
            agent_tasks::briefing(&mut lean, p).await,
        );
        assert_eq!(a, b, "briefing of {p}");
    }
    assert!(lean.calls < plain.calls && lean.bytes * 4 < plain.bytes);

    let (mut plain, mut lean) = (
        Agent::new(core.clone(), Style::Plain),
        Agent::new(core, Style::Lean),
    );
    let all = agent_tasks::scan_structs(&mut plain).await;
    assert_eq!(all, agent_tasks::scan_structs(&mut lean).await);
    assert!(!all.is_empty());
    assert_eq!(lean.calls as usize, all.len().div_ceil(1000));
    assert!(
        lean.bytes * 5 < plain.bytes,
        "{} vs {}",
        lean.bytes,
        plain.bytes
    );
}

/// The reference cache never answers with what was read before a transaction, even
/// one applied within the same block: the cache belongs to one state of the world.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transaction_within_the_block_is_seen_by_the_next_references() {
    let core = core();
    let ask = json!({"player_id": "1-2", "include_references": true});
    let before = ok(&core, "structs_query_player", ask.clone()).await;
    let again = ok(&core, "structs_query_player", ask.clone()).await;
    // Warm: the second read came from the cache, the same data.
    assert!(again["references_summary"]["from_cache"].as_u64().unwrap() > 0);
    assert_eq!(before["references"]["2-2"], again["references"]["2-2"]);

    // Player 1-2 starts an Ore Extractor on its planet: the planet changes now.
    let built = ok(
        &core,
        "structs_action_build_struct",
        json!({"player_id": "1-2", "struct_type": 14, "location_type": "planet"}),
    )
    .await;
    assert_eq!(built["status"], "initiated", "{built:#}");
    let height = ok(&core, "structs_query_block_height", json!({})).await;
    assert_eq!(height["height"], built["height"], "still the same block");
    let after = ok(&core, "structs_query_player", ask).await;
    assert_eq!(after["references_summary"]["from_cache"], 0);
    let planet = ok(&core, "structs_query_planet", json!({"planet_id": "2-2"})).await;
    let referenced = &after["references"]["2-2"];
    assert_ne!(
        referenced, &before["references"]["2-2"],
        "the planet changed"
    );
    assert_eq!(referenced["Planet"], planet["planet"]["Planet"]);
}
