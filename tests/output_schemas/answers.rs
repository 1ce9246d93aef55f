//! A success of every tool on the demo world, an error of every tool, envelopes over
//! the size limit; and wrong answers that fail.

use super::*;

/// The nonce of a proof `tool` finds for this work.
async fn nonce(c: &mut Checker, action: &str, entity: &str) -> u64 {
    let v = c
        .ok(
            "structs_calculate_proof_of_work",
            json!({"action_type": action, "entity_id": entity}),
        )
        .await;
    v["nonce"].as_u64().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_answers_as_its_output_schema_says() {
    let docs = writable_docs();
    let sim = Arc::new(paused(WorldConfig::demo()));
    sim.with_world_mut(|w| make_ready(w, 1));
    let core = structs_console::assembly::builder(sim.clone())
        .clock(fixed_clock())
        .docs(Arc::new(Docs::dir(docs.root()).unwrap()))
        .build()
        .unwrap();
    let count = core.tools().count();
    let store = core.handle_store().clone();
    let (mut c, tools) = Checker::new(session(core, Arc::new(Docs::embedded())).await).await;
    assert_eq!(tools.len(), count, "every registered tool is listed");
    check_hints(&tools, false);

    // Queries and lists.
    for (tool, arg, id) in [
        ("structs_query_player", "player_id", "1-1"),
        ("structs_query_planet", "planet_id", "2-1"),
        ("structs_query_guild", "guild_id", "0-1"),
        ("structs_query_struct", "struct_id", "5-1"),
        ("structs_query_fleet", "fleet_id", "9-1"),
    ] {
        c.ok(tool, json!({arg: id})).await;
        c.ok(tool, json!({arg: id, "include_references": true}))
            .await;
        c.ok(tool, json!({arg: id, "fields": "id"})).await;
        c.err(tool, json!({arg: "3-1"})).await;
    }
    c.ok("structs_query_entity", json!({"id": "3-1"})).await;
    c.err("structs_query_entity", json!({"id": "3-999"})).await;
    c.ok("structs_query_block_height", json!({})).await;
    c.ok("structs_query_block_height", json!({"fields": "height"}))
        .await;
    c.ok("structs_query_struct_type", json!({"struct_type": 14}))
        .await;
    c.err("structs_query_struct_type", json!({"struct_type": 23}))
        .await;
    c.ok(
        "structs_clock_control",
        json!({"action": "step", "blocks": 2}),
    )
    .await;
    c.err(
        "structs_clock_control",
        json!({"action": "pause", "blocks": 2}),
    )
    .await;
    for tool in [
        "structs_list_players",
        "structs_list_planets",
        "structs_list_structs",
        "structs_list_guilds",
        "structs_list_fleets",
    ] {
        c.ok(tool, json!({"page_size": 3})).await;
        c.ok(tool, json!({"page_size": 1, "verbosity": "summary"}))
            .await;
        c.err(tool, json!({"page_key": "not a key"})).await;
    }
    for kind in EntityKind::ALL {
        c.ok(
            "structs_list_entities",
            json!({"entity_type": kind.name(), "page_size": 2}),
        )
        .await;
    }
    c.err("structs_list_entities", json!({"entity_type": "ships"}))
        .await;
    c.ok("structs_query_endpoints", json!({})).await;
    c.ok("structs_query_endpoints", json!({"entity_type": "struct"}))
        .await;
    c.err("structs_query_endpoints", json!({"entity_type": "ships"}))
        .await;
    // Over the limit: the envelope, then its pages.
    let envelope = c
        .partial(
            "structs_list_structs",
            json!({"page_size": 100, "include_references": true}),
        )
        .await;
    let handle = envelope["result_handle"].as_str().unwrap().to_string();
    c.partial(
        "structs_list_entities",
        json!({"entity_type": "struct", "page_size": 100, "include_references": true}),
    )
    .await;
    c.ok("structs_handle_fetch", json!({"handle": handle, "page": 2}))
        .await;
    c.err(
        "structs_handle_fetch",
        json!({"handle": "structs:player:1:00000000"}),
    )
    .await;
    c.ok("structs_handle_list", json!({})).await;
    c.err("structs_handle_list", json!({"scope": "everyone"}))
        .await;

    // Tasks, as a server running them for Tasks clients keeps them in the store: this
    // connection's client's own (over stdio, the `local` caller).
    let tasks = structs_console::mcp::server::tasks::Tasks::new(store);
    let mine = || Some(structs_console::context::caller::LOCAL.to_string());
    let ended = tasks
        .start("structs_plan_execute", mine(), |_| async {
            Ok(rmcp::model::CallToolResult::structured(
                json!({"status": "succeeded", "steps": []}),
            ))
        })
        .await
        .unwrap()
        .task
        .task_id;
    // Newest first is by creation time, to the millisecond.
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let working = tasks
        .start(
            "structs_calculate_proof_of_work",
            mine(),
            |ctx| async move {
                ctx.cancelled().await;
                Ok(rmcp::model::CallToolResult::structured(
                    json!({"valid": false}),
                ))
            },
        )
        .await
        .unwrap()
        .task
        .task_id;
    let mut listed = c.ok("structs_task_list", json!({})).await;
    for _ in 0..200 {
        if listed["tasks"][1]["status"] == "completed" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        listed = c.ok("structs_task_list", json!({})).await;
    }
    assert_eq!(listed["total"], 2, "{listed}");
    assert_eq!(listed["tasks"][0]["task_id"], working.as_str());
    assert_eq!(listed["tasks"][1]["outcome"], "succeeded: 0 steps");
    let pow = c
        .ok(
            "structs_task_list",
            json!({"tools": ["structs_calculate_proof_of_work"], "limit": 1}),
        )
        .await;
    assert_eq!(pow["tasks"].as_array().unwrap().len(), 1, "{pow}");
    c.err("structs_task_list", json!({"limit": 0})).await;
    let asked = c
        .ok("structs_task_cancel", json!({"task_id": working}))
        .await;
    assert_eq!(
        (&asked["asked"], &asked["status"]),
        (&json!(true), &json!("working"))
    );
    let left = c.ok("structs_task_cancel", json!({"task_id": ended})).await;
    assert_eq!(
        (&left["asked"], &left["status"]),
        (&json!(false), &json!("completed"))
    );
    c.err("structs_task_cancel", json!({"task_id": "ffff0000"}))
        .await;
    c.err("structs_task_cancel", json!({"task_id": "not hex"}))
        .await;

    // Validation.
    c.ok("structs_validate_entity_id", json!({"id": "1-11"}))
        .await;
    c.err(
        "structs_validate_entity_id",
        json!({"id": "1-11", "expected_type": "planet"}),
    )
    .await;
    let activate =
        json!({"messages": [{"@type": "/structs.structs.MsgStructActivate", "structId": "5-1"}]});
    c.ok(
        "structs_validate_transaction",
        json!({"transaction": activate}),
    )
    .await;
    c.ok(
        "structs_validate_transaction",
        json!({"transaction": {"messages": [{"@type": "/structs.structs.MsgNope"}]}}),
    )
    .await;
    c.err("structs_validate_transaction", json!({})).await;
    c.ok(
        "structs_validate_action",
        json!({"action_type": "MsgStructActivate", "parameters": {"struct_id": "5-1"}}),
    )
    .await;
    c.ok(
        "structs_validate_action",
        json!({"action_type": "MsgStructActivate", "parameters": {"struct_id": "1-1"}}),
    )
    .await;
    c.err(
        "structs_validate_action",
        json!({"action_type": "MsgNope", "parameters": {}}),
    )
    .await;
    c.ok("structs_validate_schema", json!({"entity_id": "2-5"}))
        .await;
    c.ok(
        "structs_validate_schema",
        json!({"data": {"id": "1-1"}, "schema_uri": "player"}),
    )
    .await;
    c.err("structs_validate_schema", json!({})).await;

    // Calculators.
    c.ok("structs_calculate_power", json!({"alpha_matter": 2.5}))
        .await;
    c.ok(
        "structs_calculate_power",
        json!({"alpha_matter": 2.5, "generator_type": 20}),
    )
    .await;
    c.ok(
        "structs_calculate_power",
        json!({"alpha_matter": 2.5, "fields": "power_generated"}),
    )
    .await;
    c.err("structs_calculate_power", json!({"alpha_matter": -1}))
        .await;
    c.ok("structs_calculate_cost", json!({"struct_type": 14}))
        .await;
    c.err(
        "structs_calculate_cost",
        json!({"struct_type": 14, "location_type": "fleet"}),
    )
    .await;
    c.ok("structs_calculate_mining", json!({"struct_type": 14}))
        .await;
    c.err("structs_calculate_mining", json!({})).await;
    c.ok(
        "structs_calculate_trade_value",
        json!({"resource": "ore", "amount": 3}),
    )
    .await;
    c.err(
        "structs_calculate_trade_value",
        json!({"resource": "ore", "amount": 3, "market": "2-1"}),
    )
    .await;
    c.ok(
        "structs_calculate_damage",
        json!({"attacker": {"struct_type": 1}, "defender": {"struct_type": 1}, "samples": 3}),
    )
    .await;
    c.err(
        "structs_calculate_damage",
        json!({"attacker": {"struct_type": 1}, "defender": {"struct_type": 99}}),
    )
    .await;
    c.ok(
        "structs_calculate_pow_schedule",
        json!({"difficulty": 700, "block_start": 10, "hashrate": 1e6}),
    )
    .await;
    c.err("structs_calculate_pow_schedule", json!({})).await;
    let work = c.ok("structs_list_pow_work", json!({"limit": 3})).await;
    assert_eq!(work["work"].as_array().map(Vec::len), Some(3), "{work}");
    let mining = c
        .ok(
            "structs_list_pow_work",
            json!({"action_type": "ore_miner_complete", "player_id": "1-21"}),
        )
        .await;
    assert!(
        mining["work"]
            .as_array()
            .unwrap()
            .iter()
            .all(|w| w["action_type"] == "ore_miner_complete" && w["owner"] == "1-21"),
        "{mining}"
    );
    c.err("structs_list_pow_work", json!({"action_type": "fly"}))
        .await;
    c.err(
        "structs_calculate_proof_of_work",
        json!({"action_type": "struct_build_complete", "entity_id": "5-1"}),
    )
    .await;
    c.err("structs_validate_proof", json!({"proof": "00"}))
        .await;

    // Decision trees.
    let state = json!({"player_id": "1-1"});
    c.ok(
        "structs_decision_tree_navigate",
        json!({"tree": "mining-operation", "state": state}),
    )
    .await;
    c.ok(
        "structs_decision_tree_navigate",
        json!({"tree": "mining-operation", "state": {}}),
    )
    .await;
    c.err(
        "structs_decision_tree_navigate",
        json!({"tree": "decision-tree-of-life", "state": {}}),
    )
    .await;
    for goal in [
        "build_mining_operation",
        "defend_planet",
        "expand_power",
        "raid_ready",
    ] {
        c.ok(
            "structs_decision_tree_get_next_actions",
            json!({"goal": goal, "state": state}),
        )
        .await;
    }
    c.err(
        "structs_decision_tree_get_next_actions",
        json!({"goal": "world_peace", "state": state}),
    )
    .await;
    for strategy in ["expand_mining", "fortify", "raid"] {
        c.ok(
            "structs_decision_tree_evaluate_strategy",
            json!({"strategy": strategy, "state": {"player_id": "1-1", "target_planet_id": "2-2"}}),
        )
        .await;
    }
    c.err(
        "structs_decision_tree_evaluate_strategy",
        json!({"strategy": "raid", "state": {}}),
    )
    .await;
    c.ok(
        "structs_decision_tree_get_build_requirements",
        json!({"struct_type": 14, "player_id": "1-1"}),
    )
    .await;
    c.ok(
        "structs_decision_tree_get_build_requirements",
        json!({"struct_type": "Command Ship"}),
    )
    .await;
    c.err(
        "structs_decision_tree_get_build_requirements",
        json!({"struct_type": 99}),
    )
    .await;

    // Docs.
    c.ok(
        "structs_docs_search",
        json!({"query": "proof of work", "limit": 3}),
    )
    .await;
    c.ok("structs_docs_search", json!({"query": "unicorn"}))
        .await;
    c.err("structs_docs_search", json!({"query": ""})).await;
    c.ok(
        "structs_docs_get",
        json!({"doc_id": "overview", "max_chars": 500, "include_related": true}),
    )
    .await;
    c.err("structs_docs_get", json!({"doc_id": "no/such/doc"}))
        .await;
    c.ok(
        "structs_docs_get_related",
        json!({"doc_id": "overview", "depth": 2}),
    )
    .await;
    c.err("structs_docs_get_related", json!({"doc_id": "no/such/doc"}))
        .await;
    c.ok("structs_docs_get_index", json!({})).await;
    c.ok("structs_docs_get_index", json!({"category": "guide"}))
        .await;
    c.ok(
        "structs_docs_loading_strategy",
        json!({"task": "build an Ore Extractor and start mining"}),
    )
    .await;
    c.err("structs_docs_loading_strategy", json!({"task": ""}))
        .await;
    c.ok(
        "structs_docs_list_references",
        json!({"source_kind": "entity", "source_id": "5-1", "include_kind_links": true}),
    )
    .await;
    c.err(
        "structs_docs_list_references",
        json!({"source_kind": "galaxy", "source_id": "x"}),
    )
    .await;
    c.ok(
        "structs_docs_suggest_references",
        json!({"source_kind": "entity", "source_id": "1-1"}),
    )
    .await;
    c.ok(
        "structs_docs_suggest_references",
        json!({"source_kind": "entity", "source_id": "1-1", "mode": "apply", "max_apply": 1}),
    )
    .await;
    c.err(
        "structs_docs_suggest_references",
        json!({"source_kind": "entity", "source_id": "1-1", "mode": "apply", "relation": "loves"}),
    )
    .await;
    c.ok(
        "structs_docs_upsert_link",
        json!({"source_kind": "struct_type", "source_id": 14, "target_doc_id": "overview"}),
    )
    .await;
    c.err(
        "structs_docs_upsert_link",
        json!({"source_kind": "struct_type", "source_id": 14, "target_doc_id": "no/such/doc"}),
    )
    .await;
    c.ok("structs_docs_sync", json!({})).await;

    // Subscriptions.
    let sub = c
        .ok(
            "structs_subscription_subscribe",
            json!({"entity_type": "player", "entity_id": "1-1"}),
        )
        .await;
    c.err(
        "structs_subscription_subscribe",
        json!({"entity_type": "player", "entity_id": "1-999"}),
    )
    .await;
    c.ok("structs_subscription_list", json!({})).await;
    c.ok(
        "structs_subscription_unsubscribe",
        json!({"subscription_id": sub["subscription_id"]}),
    )
    .await;
    c.err(
        "structs_subscription_unsubscribe",
        json!({"subscription_id": sub["subscription_id"]}),
    )
    .await;

    // Plans and workflows.
    let plan = json!({"steps": [
        {"id": "h", "tool": "structs_query_block_height"},
        {"tool": "structs_query_player", "params": {"player_id": "1-1"}, "depends_on": ["h"]},
        {"tool": "structs_query_player", "params": {"player_id": "1-999"}, "optional": true}
    ]});
    c.ok("structs_plan_validate", plan.clone()).await;
    c.ok(
        "structs_plan_validate",
        json!({"steps": [{"tool": "structs_query_player", "params": {"player_id": "${step[3].data}"}}]}),
    )
    .await;
    c.err("structs_plan_validate", json!({"steps": []})).await;
    c.ok("structs_plan_execute", plan).await;
    c.err(
        "structs_plan_execute",
        json!({"steps": [{"tool": "structs_nope"}]}),
    )
    .await;
    c.ok("structs_workflow_list", json!({})).await;
    let run = c
        .ok(
            "structs_workflow_execute",
            json!({"workflow": "query-and-monitor-planet", "inputs": {"planet_id": "2-1"}}),
        )
        .await;
    let id = run["workflow_id"].clone();
    c.ok(
        "structs_workflow_monitor",
        json!({"workflow_id": id, "wait_ms": 20000}),
    )
    .await;
    c.ok("structs_workflow_cancel", json!({"workflow_id": id}))
        .await;
    c.err(
        "structs_workflow_execute",
        json!({"workflow": "planet-setup", "inputs": {}}),
    )
    .await;
    c.err("structs_workflow_monitor", json!({"workflow_id": "wf_999"}))
        .await;
    c.err("structs_workflow_cancel", json!({"workflow_id": "wf_999"}))
        .await;

    // Actions: a build from start to finish, an extractor's cycle, an attack.
    let built = c
        .ok(
            "structs_action_build_struct",
            json!({"player_id": "1-1", "struct_type": 14}),
        )
        .await;
    let ex = built["struct_id"].as_str().unwrap().to_string();
    c.err(
        "structs_action_build_struct",
        json!({"player_id": "1-1", "struct_id": ex, "nonce": 7}),
    )
    .await;
    sim.clock().step(40_000);
    let n = nonce(&mut c, "struct_build_complete", &ex).await;
    let input = format!("{ex}BUILD{}NONCE{n}", built["block_start_build"]);
    let proof = c
        .ok(
            "structs_validate_proof",
            json!({"input": input, "proof": "00", "required_difficulty": 1}),
        )
        .await;
    c.ok(
        "structs_validate_proof",
        json!({"action_type": "struct_build_complete", "entity_id": ex, "nonce": n,
               "proof": proof["expected_hash"]}),
    )
    .await;
    c.ok(
        "structs_calculate_pow_schedule",
        json!({"action_type": "struct_build_complete", "entity_id": ex, "hashrate": 1e6}),
    )
    .await;
    c.ok(
        "structs_action_build_struct",
        json!({"player_id": "1-1", "struct_id": ex, "nonce": n}),
    )
    .await;
    c.ok(
        "structs_calculate_mining",
        json!({"extractor_id": ex, "planet_id": "2-1"}),
    )
    .await;
    c.ok(
        "structs_action_submit_transaction",
        json!({"transaction": {"messages": [{"@type": "/structs.structs.MsgStructDeactivate", "structId": ex}]}, "sign": true}),
    )
    .await;
    sim.with_world_mut(|w| w.players[0].grid.last_action = 0);
    c.ok("structs_action_mine_resources", json!({"extractor_id": ex}))
        .await;
    c.ok("structs_action_mine_resources", json!({"extractor_id": ex}))
        .await;
    sim.clock().step(300_000);
    let n = nonce(&mut c, "ore_miner_complete", &ex).await;
    c.ok(
        "structs_action_mine_resources",
        json!({"extractor_id": ex, "nonce": n}),
    )
    .await;
    c.err(
        "structs_action_mine_resources",
        json!({"extractor_id": "5-1"}),
    )
    .await;
    c.err("structs_action_submit_transaction", json!({})).await;
    c.err(
        "structs_action_submit_transaction",
        json!({"transaction": {"messages": [{"@type": "/structs.structs.MsgStructActivate", "structId": "5-99999"}]}}),
    )
    .await;
    let (attacker, target) = attack_setup(&sim);
    c.ok(
        "structs_action_attack",
        json!({"attacker_id": attacker, "target_id": target}),
    )
    .await;
    c.err(
        "structs_action_attack",
        json!({"attacker_id": attacker, "target_id": "1-1"}),
    )
    .await;

    // Every tool refuses an argument it does not take, with the error object.
    for t in &tools {
        c.err(&t.name, json!({"no_such_argument": 1})).await;
    }

    let all: BTreeSet<String> = tools.iter().map(|t| t.name.to_string()).collect();
    let missing: Vec<&String> = all.difference(&c.succeeded).collect();
    assert!(missing.is_empty(), "no success checked for {missing:?}");
    assert_eq!(c.failed, all);
    assert_eq!(c.partial.len(), 2);
}

/// A ready command ship and an enemy struct in its reach (its fleet moved to the
/// target's planet): (attacker, target).
fn attack_setup(sim: &SimSource) -> (String, String) {
    sim.with_world_mut(|w| {
        for a in 1..=w.players.len() as u64 {
            let fleet = w.players[(a - 1) as usize].fleet;
            let cmd = w.fleets[(fleet - 1) as usize].command_struct;
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
                let planet = w.players[(owner - 1) as usize].planet;
                w.fleets[(fleet - 1) as usize].planet = Some(planet);
                return (format!("5-{cmd}"), format!("5-{ti}"));
            }
        }
        panic!("no matchup in the demo world")
    })
}

/// Small mistakes in an answer fail its schema: a key of the wrong type, a key no
/// tool answers with, a missing field where nothing is shaped, an envelope that is
/// not partial, an error without a code.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_answers_fail_the_schemas() {
    let (mut c, _) = Checker::new(
        session(
            structs_console::assembly::build_with_clock(
                Arc::new(paused(WorldConfig::demo())),
                fixed_clock(),
            ),
            Arc::new(Docs::embedded()),
        )
        .await,
    )
    .await;
    let player = c
        .ok("structs_query_player", json!({"player_id": "1-1"}))
        .await;
    let plan = c
        .ok(
            "structs_plan_execute",
            json!({"steps": [{"tool": "structs_query_block_height"}]}),
        )
        .await;
    let page = c.ok("structs_list_players", json!({})).await;
    let envelope = c
        .partial(
            "structs_list_structs",
            json!({"page_size": 100, "include_references": true}),
        )
        .await;
    let error = c
        .err("structs_query_player", json!({"player_id": "2-1"}))
        .await;
    let edit = |v: &Value, f: &dyn Fn(&mut Value)| {
        let mut v = v.clone();
        f(&mut v);
        v
    };
    let wrong = [
        (
            "structs_query_player",
            edit(&player, &|v| v["timestamp"] = json!(5)),
        ),
        (
            "structs_query_player",
            edit(&player, &|v| v["surprise"] = json!(true)),
        ),
        (
            "structs_query_player",
            edit(&player, &|v| v["player"] = json!({"Planet": {"id": "2-1"}})),
        ),
        (
            "structs_query_player",
            edit(&player, &|v| v["player"]["Player"]["id"] = json!("2-1")),
        ),
        (
            "structs_plan_execute",
            edit(&plan, &|v| {
                v.as_object_mut().unwrap().remove("totals");
            }),
        ),
        (
            "structs_plan_execute",
            edit(&plan, &|v| v["steps"][0]["status"] = json!("done")),
        ),
        (
            "structs_list_players",
            edit(&page, &|v| v["entity_type"] = json!("planet")),
        ),
        (
            "structs_list_players",
            edit(&page, &|v| v["pagination"]["total"] = json!("24")),
        ),
        (
            "structs_list_structs",
            edit(&envelope, &|v| v["status"] = json!("complete")),
        ),
        (
            "structs_list_structs",
            edit(&envelope, &|v| {
                v["metadata"]["tool_name"] = json!("structs_list_players")
            }),
        ),
        (
            "structs_query_player",
            edit(&error, &|v| {
                v["error"].as_object_mut().unwrap().remove("code");
            }),
        ),
        (
            "structs_query_player",
            edit(&error, &|v| v["error"]["code"] = json!("OOPS")),
        ),
    ];
    for (tool, v) in wrong {
        assert!(
            !c.schemas[tool].whole.is_valid(&v),
            "{tool}: a wrong answer passes its outputSchema: {v}"
        );
    }
    // A whole answer with a required field missing is no whole answer; a call that
    // asked for fields may leave it out.
    let mut short = player.clone();
    short.as_object_mut().unwrap().remove("timestamp");
    assert!(!c.schemas["structs_query_player"].answer.is_valid(&short));
    assert!(c.schemas["structs_query_player"].whole.is_valid(&short));
}
