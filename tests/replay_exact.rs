//! `replay --check` is a regression test users put in CI, so it must be exact: a long
//! scripted session that touches every tool, recorded headless and recorded from the
//! console, replays with zero differences every time, and a changed world is still
//! caught.

mod support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crossterm::event::KeyCode;
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use structs_console::clock::WallClock;
use structs_console::record::{Kind, LogReader, Recorder};
use structs_console::source::sim::{BlockClock, SimSource, WorldConfig};
use structs_console::tui::{App, Theme};
use support::console::{press, press_n, type_text};

/// Calls the scripted session makes at least.
const CALLS: usize = 2_000;

/// The two sessions run one after the other: each already keeps both cores busy, and
/// a replay must be exact on a loaded machine, not a starved one.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("structs-replay-exact-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join(name);
    let _ = std::fs::remove_file(&log);
    log
}

use support::replay::check as replay;

/// The log replays with no difference five times over, and differs in another world.
fn replays_exactly(log: &Path, calls: usize) {
    for run in 1..=5 {
        let (code, out) = replay(log, &["--paused"]);
        assert_eq!(code, 0, "run {run}: {}", &out[..out.len().min(4_000)]);
        assert!(
            out.contains(&format!("replayed {calls} calls")),
            "run {run}: {}",
            &out[..out.len().min(400)]
        );
        assert!(
            out.contains(&format!("{calls} the same, 0 different")),
            "run {run}: {}",
            &out[..out.len().min(4_000)]
        );
    }
    // A deliberate change of the world is still caught.
    let (code, out) = replay(log, &["--paused", "--seed", "7"]);
    assert_eq!(
        code,
        1,
        "another world must differ: {}",
        &out[..out.len().min(2_000)]
    );
    assert!(out.contains("different"), "{out}");
}

/// The tools a log called, and how many calls it holds.
fn tools_called(log: &Path) -> (BTreeSet<String>, usize) {
    let mut tools = BTreeSet::new();
    let mut calls = 0;
    for entry in LogReader::open(log).unwrap() {
        let entry = entry.unwrap().unwrap();
        if entry.kind == Kind::Response {
            calls += 1;
            tools.insert(entry.tool.unwrap());
        }
    }
    (tools, calls)
}

struct Agent {
    client: RunningService<RoleClient, ()>,
    calls: usize,
}

impl Agent {
    async fn call(&mut self, tool: &str, args: Value) -> Value {
        let Value::Object(args) = args else {
            panic!("arguments must be an object")
        };
        let r = self
            .client
            .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(args))
            .await
            .unwrap_or_else(|e| panic!("{tool}: {e}"));
        self.calls += 1;
        r.structured_content.unwrap_or(Value::Null)
    }
}

/// What an agent does in a long session: every tool, references on and off, large
/// results behind handles and their pages, plans, proofs of small difficulty,
/// subscriptions, workflows, docs, actions that change the world, and mistakes.
async fn session(agent: &mut Agent) {
    // Reading the world, with and without references, by every query tool.
    for i in 1..=24 {
        let player = format!("1-{i}");
        agent
            .call("structs_query_player", json!({"player_id": player}))
            .await;
        agent
            .call(
                "structs_query_player",
                json!({"player_id": player, "include_references": true, "reference_depth": 2}),
            )
            .await;
        agent
            .call(
                "structs_query_planet",
                json!({"planet_id": format!("2-{i}"), "include_references": i % 2 == 0}),
            )
            .await;
        agent
            .call(
                "structs_query_fleet",
                json!({"fleet_id": format!("9-{i}"), "include_references": true, "verbosity": "compact"}),
            )
            .await;
        agent
            .call(
                "structs_query_entity",
                json!({"id": format!("4-{}", i % 6 + 1)}),
            )
            .await;
        agent
            .call(
                "structs_query_guild",
                json!({"guild_id": format!("0-{}", i % 4 + 1), "include_references": i % 3 == 0}),
            )
            .await;
    }
    for i in 1..=120 {
        agent
            .call(
                "structs_query_struct",
                json!({"struct_id": format!("5-{i}"), "include_references": i % 4 == 0,
                       "fields": if i % 5 == 0 { json!("id,type,owner") } else { Value::Null }}),
            )
            .await;
    }
    for t in 1..=22 {
        agent
            .call("structs_query_struct_type", json!({"struct_type": t}))
            .await;
        agent
            .call("structs_calculate_cost", json!({"struct_type": t}))
            .await;
        agent
            .call(
                "structs_decision_tree_get_build_requirements",
                json!({"struct_type": t, "player_id": format!("1-{}", t % 24 + 1)}),
            )
            .await;
    }
    // Lists, page by page, with filters, and results large enough for a handle.
    for kind in [
        "player",
        "planet",
        "fleet",
        "struct",
        "guild",
        "substation",
        "reactor",
    ] {
        let mut key = Value::Null;
        loop {
            let page = agent
                .call(
                    "structs_list_entities",
                    json!({"entity_type": kind, "page_size": 7, "page_key": key}),
                )
                .await;
            key = page["pagination"]["next_key"].clone();
            if key.is_null() {
                break;
            }
        }
    }
    agent
        .call(
            "structs_list_players",
            json!({"page_size": 5, "include_references": true}),
        )
        .await;
    agent
        .call("structs_list_planets", json!({"owner": "1-3"}))
        .await;
    agent
        .call("structs_list_fleets", json!({"guild_id": "0-1"}))
        .await;
    agent.call("structs_list_guilds", json!({})).await;
    let big = agent
        .call(
            "structs_list_structs",
            json!({"page_size": 100, "include_references": true}),
        )
        .await;
    let handle = big["result_handle"].as_str().expect("a handle").to_string();
    for page in 1..=4 {
        agent
            .call(
                "structs_handle_fetch",
                json!({"handle": handle, "page": page, "page_size": 30}),
            )
            .await;
    }
    agent
        .call(
            "structs_handle_fetch",
            json!({"handle": handle, "fields": "id,owner", "page": 2}),
        )
        .await;
    agent.call("structs_handle_list", json!({})).await;
    agent
        .call("structs_handle_list", json!({"scope": "all"}))
        .await;
    // No client declares the Tasks extension here: no task to list, none to stop.
    agent.call("structs_task_list", json!({"limit": 10})).await;
    agent
        .call("structs_task_cancel", json!({"task_id": "0123abcd"}))
        .await;
    agent
        .call("structs_query_endpoints", json!({"entity_type": "struct"}))
        .await;
    agent.call("structs_query_block_height", json!({})).await;

    // Validation and calculation.
    for id in ["1-1", "5-12", "player-1", "12-3", "9-0", "2-24"] {
        agent
            .call(
                "structs_validate_entity_id",
                json!({"id": id, "expected_type": "player"}),
            )
            .await;
    }
    agent
        .call("structs_validate_schema", json!({"entity_id": "2-5"}))
        .await;
    agent
        .call(
            "structs_validate_schema",
            json!({"data": {"id": "x"}, "schema_uri": "player"}),
        )
        .await;
    agent
        .call(
            "structs_validate_transaction",
            json!({"transaction": {"messages": [{"@type": "/structs.structs.MsgStructActivate", "structId": "5-22"}]}}),
        )
        .await;
    agent
        .call(
            "structs_validate_action",
            json!({"action_type": "MsgStructBuildInitiate", "parameters": {"creator": "1-2", "structType": 14, "locationType": "planet"}}),
        )
        .await;
    agent
        .call("structs_calculate_power", json!({"alpha_matter": "2.5"}))
        .await;
    agent
        .call("structs_calculate_mining", json!({"extractor_id": "5-56"}))
        .await;
    agent
        .call(
            "structs_calculate_trade_value",
            json!({"resource": "ore", "amount": "3"}),
        )
        .await;
    agent
        .call(
            "structs_calculate_damage",
            json!({"attacker": "5-7", "defender": "5-31", "samples": 3}),
        )
        .await;
    agent
        .call(
            "structs_calculate_pow_schedule",
            json!({"action_type": "struct_build_complete", "entity_id": "5-22", "hashrate": 1_000_000}),
        )
        .await;
    // The work the world has to prove, with the structs named.
    agent
        .call(
            "structs_list_pow_work",
            json!({"limit": 5, "include_references": true}),
        )
        .await;
    // Planned at the hash rate this machine measures, which a replay gives back.
    agent
        .call(
            "structs_calculate_pow_schedule",
            json!({"action_type": "struct_build_complete", "entity_id": "5-23"}),
        )
        .await;
    // Proofs of small difficulty, on one thread and on every core (where any thread
    // may find its own nonce first: the replay starts at the recorded one).
    for (sid, threads) in [
        ("5-22", json!(1)),
        ("5-23", Value::Null),
        ("5-45", Value::Null),
    ] {
        let found = agent
            .call(
                "structs_calculate_proof_of_work",
                json!({"action_type": "struct_build_complete", "entity_id": sid,
                       "difficulty": 3, "threads": threads}),
            )
            .await;
        agent
            .call(
                "structs_validate_proof",
                json!({"proof": found["hash"], "input": found["input"], "required_difficulty": 2}),
            )
            .await;
    }

    // Decisions.
    let state = json!({"player_id": "1-2"});
    agent
        .call(
            "structs_decision_tree_navigate",
            json!({"tree": "build_mining_operation", "state": state}),
        )
        .await;
    agent
        .call(
            "structs_decision_tree_get_next_actions",
            json!({"goal": "build_mining_operation", "state": state}),
        )
        .await;
    agent
        .call(
            "structs_decision_tree_evaluate_strategy",
            json!({"strategy": "expand_mining", "state": state}),
        )
        .await;

    // Plans and workflows.
    let plan = json!({"steps": [
        {"tool": "structs_list_players", "params": {"page_size": 4}},
        {"tool": "structs_query_player", "params": {"player_id": "${step[0].data[0].id}"}},
        {"tool": "structs_query_planet", "params": {"planet_id": "${step[1].data.player.Player.planetId}"}},
        {"tool": "structs_query_fleet", "params": {"fleet_id": "${step[1].data.player.Player.fleetId}"}}
    ]});
    agent.call("structs_plan_validate", plan.clone()).await;
    agent.call("structs_plan_execute", plan).await;
    agent.call("structs_workflow_list", json!({})).await;
    for (name, inputs) in [
        ("query-and-monitor-planet", json!({"planet_id": "2-4"})),
        ("planet-setup", json!({"player_id": "1-6"})),
    ] {
        let started = agent
            .call(
                "structs_workflow_execute",
                json!({"workflow": name, "parameters": inputs}),
            )
            .await;
        let id = started["workflow_id"].clone();
        agent
            .call(
                "structs_workflow_monitor",
                json!({"workflow_id": id, "wait_ms": 60_000}),
            )
            .await;
        agent
            .call("structs_workflow_cancel", json!({"workflow_id": id}))
            .await;
    }

    // Subscriptions.
    let sub = agent
        .call(
            "structs_subscription_subscribe",
            json!({"entity_type": "planet", "entity_id": "2-2"}),
        )
        .await;
    agent.call("structs_subscription_list", json!({})).await;

    // Actions that change the world, and what they changed.
    agent
        .call(
            "structs_action_build_struct",
            json!({"player_id": "1-2", "struct_type": 14, "location_type": "planet"}),
        )
        .await;
    agent
        .call(
            "structs_query_planet",
            json!({"planet_id": "2-2", "include_references": true}),
        )
        .await;
    agent
        .call(
            "structs_action_mine_resources",
            json!({"extractor_id": "5-56"}),
        )
        .await;
    agent
        .call(
            "structs_action_attack",
            json!({"attacker_id": "5-7", "target_id": "5-31"}),
        )
        .await;
    agent
        .call(
            "structs_action_submit_transaction",
            json!({"transaction": {"messages": [{"@type": "/structs.structs.MsgStructDeactivate", "structId": "5-57"}]}}),
        )
        .await;
    agent
        .call(
            "structs_clock_control",
            json!({"action": "step", "blocks": 3}),
        )
        .await;
    agent
        .call(
            "structs_subscription_unsubscribe",
            json!({"subscription_id": sub["subscription_id"]}),
        )
        .await;

    // Docs.
    for q in [
        "mining",
        "power",
        "how do I build an ore extractor",
        "result handle",
        "raid",
    ] {
        agent
            .call("structs_docs_search", json!({"query": q, "limit": 5}))
            .await;
    }
    agent
        .call(
            "structs_docs_get",
            json!({"doc_id": "guides/plans-and-workflows", "max_chars": 2_000}),
        )
        .await;
    agent.call("structs_docs_get_index", json!({})).await;
    agent
        .call(
            "structs_docs_get_related",
            json!({"doc_id": "overview", "depth": 2}),
        )
        .await;
    agent
        .call(
            "structs_docs_loading_strategy",
            json!({"task": "build an extractor and mine"}),
        )
        .await;
    agent
        .call(
            "structs_docs_list_references",
            json!({"source_kind": "entity", "source_id": "5-56", "include_kind_links": true}),
        )
        .await;
    agent
        .call(
            "structs_docs_suggest_references",
            json!({"source_kind": "entity", "source_id": "5-56"}),
        )
        .await;
    agent
        .call(
            "structs_docs_upsert_link",
            json!({"source_kind": "entity", "source_id": "5-56", "target_doc_id": "overview"}),
        )
        .await;
    agent.call("structs_docs_sync", json!({})).await;

    // Mistakes agents make: each a structured error, replayed as such.
    agent
        .call("structs_query_player", json!({"player_id": "1-999"}))
        .await;
    agent
        .call("structs_query_planet", json!({"planet_id": null}))
        .await;
    agent
        .call("structs_list_entities", json!({"entity_type": "ships"}))
        .await;
    agent
        .call(
            "structs_handle_fetch",
            json!({"handle": "structs:struct:1:00000000"}),
        )
        .await;

    // The rest of the session: an agent walking the world again and again, after the
    // changes, with references on and off.
    let mut i = 0u64;
    while agent.calls < CALLS {
        i += 1;
        let player = format!("1-{}", i % 24 + 1);
        match i % 4 {
            0 => agent.call("structs_query_player", json!({"player_id": player, "include_references": true})).await,
            1 => agent.call("structs_query_struct", json!({"struct_id": format!("5-{}", i % 121 + 1)})).await,
            2 => agent.call("structs_list_structs", json!({"owner": player, "page_size": 5})).await,
            _ => agent.call("structs_query_planet", json!({"planet_id": format!("2-{}", i % 24 + 1), "include_references": true, "reference_depth": 2})).await,
        };
    }
}

#[test]
fn a_long_headless_session_replays_with_no_difference() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    support::console::runtime().block_on(headless_session());
}

async fn headless_session() {
    let log = scratch("headless.jsonl");
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_structs-console"));
    cmd.args(["--headless", "--paused", "--log-level", "warn", "--record"])
        .arg(&log);
    let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
    let every: BTreeSet<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    let mut agent = Agent { client, calls: 0 };
    session(&mut agent).await;
    let Agent { client, calls } = agent;
    client.cancel().await.unwrap();

    let (tools, logged) = tools_called(&log);
    assert_eq!(logged, calls);
    assert!(calls >= CALLS, "{calls} calls");
    let missing: Vec<_> = every.difference(&tools).collect();
    assert!(
        missing.is_empty(),
        "tools the session never called: {missing:?}"
    );
    replays_exactly(&log, calls);
}

/// The console's own calls, recorded as it makes them, replay the same way: browsing
/// entities and their references, handles, a plan, a proof, docs search.
#[test]
fn a_long_console_session_replays_with_no_difference() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let log = scratch("console.jsonl");
    let runtime = support::console::runtime();
    let config = WorldConfig::demo();
    let source = SimSource::new(config, BlockClock::paused(config.genesis_height));
    let core = structs_console::assembly::build_with_clock(Arc::new(source), WallClock::System);
    let recorder = Arc::new(Recorder::open(&log).unwrap());
    let mut app = App::recording(core, Theme::default(), runtime.handle().clone(), recorder);
    app.settle();

    // Every kind, and every entity of its first page opened (the entity and its
    // references), the references at depth 2 too, round after round.
    let mut calls = 0;
    for _round in 0..10 {
        for kind in 0..12 {
            press_n(&mut app, KeyCode::Esc, 3);
            press(&mut app, KeyCode::Home);
            press_n(&mut app, KeyCode::Down, kind);
            press(&mut app, KeyCode::Enter);
            for _ in 0..20 {
                press(&mut app, KeyCode::Enter);
                press(&mut app, KeyCode::Char('d'));
                press(&mut app, KeyCode::Esc);
                press(&mut app, KeyCode::Down);
            }
        }
        calls = tools_called(&log).1;
        if calls >= CALLS {
            break;
        }
    }
    // Handles: the list and a fetched page.
    press(&mut app, KeyCode::Char('2'));
    press(&mut app, KeyCode::Char('r'));
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Char('n'));
    // Docs: a search typed key by key.
    press(&mut app, KeyCode::Char('5'));
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, "mining power");
    press(&mut app, KeyCode::Enter);
    app.settle();
    drop(app);

    let (tools, logged) = tools_called(&log);
    assert!(logged >= calls && calls >= CALLS, "{logged} calls");
    for tool in [
        "structs_list_entities",
        "structs_query_entity",
        "structs_handle_list",
        "structs_docs_search",
    ] {
        assert!(
            tools.contains(tool),
            "the console never called {tool}: {tools:?}"
        );
    }
    replays_exactly(&log, logged);
}

/// A file with no log entries in it (empty, garbage, `/dev/null`) is not a log that
/// checks out: the check says there was nothing to check, and fails.
#[test]
fn a_file_with_no_entries_has_nothing_to_check_and_fails() {
    let empty = scratch("no-entries-empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let garbage = scratch("no-entries-garbage.jsonl");
    std::fs::write(&garbage, "not a log\n{\"json\": \"but not an entry\"}\n").unwrap();
    for file in [empty.as_path(), garbage.as_path(), Path::new("/dev/null")] {
        let (code, said) = replay(file, &[]);
        assert_eq!(code, 1, "{}: {said}", file.display());
        assert!(
            said.contains("nothing to check"),
            "{}: {said}",
            file.display()
        );
    }
}
