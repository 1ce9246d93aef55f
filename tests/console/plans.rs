//! The Plans pane.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;
use structs_console::tui::App;

use crate::support::console::{assert_drawn_whole, draw, press, press_n, type_text};
use crate::{plan_file, plans_console, snapshot};

/// Each step's status in the pane's run, in order.
fn plan_statuses(app: &App) -> Vec<String> {
    let report = app.plan_report().expect("a valid plan is open");
    report["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["status"].as_str().unwrap().to_string())
        .collect()
}

/// Opens `path` through the pane's prompt (which starts with the last path: C-u
/// clears it).
fn open_plan_file(app: &mut App, path: &str) {
    press(app, KeyCode::Char('o'));
    app.handle_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    type_text(app, path);
    press(app, KeyCode::Enter);
}

#[test]
fn plans_open_with_the_built_in_example() {
    let (_rt, mut app) = plans_console();
    assert_eq!(plan_statuses(&app), ["pending"; 5]);
    snapshot(
        "plans_example_120x34",
        "The Plans tab at start: the built-in example's steps by level with what each waits for, step 0's params, nothing run yet",
        &mut app,
        120,
        34,
    );
    // A step whose reference reads a step that has not run says so.
    press(&mut app, KeyCode::Down);
    let frame = draw(&mut app, 120, 34);
    assert!(frame.contains("once step 0 (players) has run"), "{frame}");
}

#[test]
fn plans_a_reference_that_finds_nothing_names_the_missing_part() {
    let (_rt, mut app) = plans_console();
    app.open_plan(
        "short list",
        json!({"steps": [
            {"id": "players", "tool": "structs_list_players", "params": {"page_size": 2}},
            {"id": "sixth", "tool": "structs_query_player",
             "params": {"player_id": "${steps.players.data.players[5].Player.id}"}}
        ]}),
    );
    press(&mut app, KeyCode::Char('s'));
    press(&mut app, KeyCode::Down);
    // The preview already fails, naming the index the list does not have.
    let frame = draw(&mut app, 120, 30);
    assert!(frame.contains("nothing at"), "{frame}");
    assert!(frame.contains("[5]"), "{frame}");
    press(&mut app, KeyCode::Char('s'));
    assert_eq!(plan_statuses(&app), ["succeeded", "failed"]);
    let report = app.plan_report().unwrap();
    assert_eq!(
        report["steps"][1]["error"]["code"],
        "VALIDATION_UNRESOLVED_REFERENCE"
    );
    assert!(draw(&mut app, 120, 30).contains("VALIDATION_UNRESOLVED_REFERENCE"));
}

#[test]
fn plans_x_cancels_a_running_step() {
    let (_rt, mut app) = plans_console();
    // A proof at difficulty 60 is never found: the search runs until cancelled.
    app.open_plan(
        "slow",
        json!({"steps": [
            {"id": "work", "tool": "structs_calculate_proof_of_work",
             "params": {"entity_id": "5-42", "action_type": "struct_build_complete",
                        "block_start": 1000, "age": 1, "difficulty": 700, "threads": 1,
                        "max_iterations": 1_000_000_000_000u64}},
            {"id": "after", "tool": "structs_query_block_height", "params": {}, "depends_on": ["work"]}
        ]}),
    );
    app.handle_key(KeyEvent::new(KeyCode::Char('r'), KeyModifiers::NONE));
    let start = std::time::Instant::now();
    while plan_statuses(&app)[0] != "running" {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(10),
            "the step never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(
        draw(&mut app, 120, 30).contains("x  cancel"),
        "the hint bar offers cancel"
    );
    press(&mut app, KeyCode::Char('x'));
    assert_eq!(plan_statuses(&app), ["failed", "skipped"]);
    let report = app.plan_report().unwrap();
    assert_eq!(report["steps"][0]["error"]["code"], "TOOL_CANCELLED");
    assert!(
        app.status_text().unwrap().starts_with("run cancelled"),
        "{:?}",
        app.status_text()
    );
}

#[test]
fn plans_step_runs_one_step_and_previews_the_next() {
    let (_rt, mut app) = plans_console();
    press(&mut app, KeyCode::Char('s'));
    assert_eq!(
        plan_statuses(&app),
        ["succeeded", "pending", "pending", "pending", "pending"]
    );
    assert!(
        app.status_text()
            .unwrap()
            .contains("step 0 (players) succeeded"),
        "{:?}",
        app.status_text()
    );
    press(&mut app, KeyCode::Down);
    let frame = draw(&mut app, 120, 34);
    assert!(frame.contains("resolved (preview)"), "{frame}");
    assert!(frame.contains("\"2-1\"  ← step 0 (players)"), "{frame}");
    snapshot(
        "plans_stepped_120x34",
        "After s ran step 0: step 1 selected, its planet_id as written beside the preview resolved from step 0's result",
        &mut app,
        120,
        34,
    );
}

#[test]
fn plans_run_all_and_open_a_result() {
    let (_rt, mut app) = plans_console();
    press(&mut app, KeyCode::Char('r'));
    assert_eq!(
        plan_statuses(&app),
        ["succeeded", "succeeded", "succeeded", "succeeded", "failed"]
    );
    let report = app.plan_report().unwrap();
    assert_eq!(report["success"], true, "the failure is optional");
    assert_eq!(report["steps"][1]["resolved_params"]["planet_id"], "2-1");
    assert!(
        app.status_text()
            .unwrap()
            .starts_with("run ended: 4 succeeded · 1 optional failed"),
        "{:?}",
        app.status_text()
    );
    // Step 1's result: focus it, open the planet and its Planet record.
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Enter);
    let frame = draw(&mut app, 120, 34);
    assert!(frame.contains("owner: 1-1"), "{frame}");
    snapshot(
        "plans_ran_120x34",
        "After r: every step ended (the optional one failed); step 1's result tree focused with planet and Planet open",
        &mut app,
        120,
        34,
    );
}

#[test]
fn plans_a_skipped_step_says_why_and_retry_goes_to_the_failure() {
    let (_rt, mut app) = plans_console();
    let plan = json!({"steps": [
        {"id": "ghost", "tool": "structs_query_player", "params": {"player_id": "1-9999"}},
        {"id": "planet", "tool": "structs_query_planet",
         "params": {"planet_id": "${steps.ghost.data.player.Player.planetId}"}},
        {"id": "height", "tool": "structs_query_block_height", "params": {}}
    ]});
    // A recorded session: the plan is the one structs_plan_execute request in it.
    let lines = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "structs_query_block_height", "arguments": {}}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "structs_plan_execute", "arguments": plan}}),
    ]
    .map(|l| l.to_string())
    .join("\n");
    let path = plan_file("skipped.jsonl", &lines);
    open_plan_file(&mut app, &path);
    assert_eq!(plan_statuses(&app), ["pending"; 3]);
    assert_eq!(
        app.status_text(),
        Some("opened skipped.jsonl line 2: 3 steps")
    );
    press(&mut app, KeyCode::Char('r'));
    assert_eq!(plan_statuses(&app), ["failed", "skipped", "succeeded"]);
    press(&mut app, KeyCode::Down);
    let frame = draw(&mut app, 120, 30);
    assert!(
        frame.contains("step 0 (ghost) failed: 1-9999 not found"),
        "{frame}"
    );
    snapshot(
        "plans_skipped_120x30",
        "A plan from a JSON Lines recording, run: step 0 failed (no such player), step 1 skipped and saying why",
        &mut app,
        120,
        30,
    );
    // Retrying the skipped step runs the failure it waits on again.
    press(&mut app, KeyCode::Char('R'));
    assert!(
        app.status_text().unwrap().contains("step 0 (ghost) failed"),
        "{:?}",
        app.status_text()
    );
    assert_eq!(plan_statuses(&app), ["failed", "skipped", "succeeded"]);
}

#[test]
fn plans_an_invalid_file_lists_its_problems() {
    let (_rt, mut app) = plans_console();
    let plan = json!({"steps": [
        {"id": "height", "tool": "structs_query_block_height", "params": {}},
        {"id": "players", "tool": "structs_list_player", "params": {}},
        {"id": "planet", "tool": "structs_query_planet",
         "params": {"planet_id": "${steps.height.data.planet}"}},
        {"tool": "structs_query_player", "params": {"player_id": "1-1", "depth": 2}}
    ]});
    let path = plan_file("invalid.json", &plan.to_string());
    open_plan_file(&mut app, &path);
    assert!(app.plan_report().is_none(), "no plan is open");
    let frame = draw(&mut app, 110, 28);
    for expected in [
        "step 1 (players) · tool",
        "step 2 (planet) · planet_id",
        "step 3 · depth",
    ] {
        assert!(frame.contains(expected), "{expected}: {frame}");
    }
    snapshot(
        "plans_invalid_110x28",
        "An invalid plan file: every problem with its step and param (an unknown tool, a path the result cannot have, an unknown argument)",
        &mut app,
        110,
        28,
    );
    // A file that is not JSON says so, and nothing panics.
    let path = plan_file("broken.json", "{\"steps\": [");
    open_plan_file(&mut app, &path);
    assert!(draw(&mut app, 110, 28).contains("not JSON"));
    open_plan_file(&mut app, "/no/such/plan.json");
    assert!(draw(&mut app, 110, 28).contains("cannot read /no/such/plan.json"));
}

#[test]
fn plans_continue_stops_before_a_breakpoint() {
    let (_rt, mut app) = plans_console();
    press_n(&mut app, KeyCode::Down, 3);
    press(&mut app, KeyCode::Char('b'));
    press(&mut app, KeyCode::Char('c'));
    assert_eq!(
        plan_statuses(&app),
        ["succeeded", "succeeded", "succeeded", "pending", "failed"]
    );
    assert_eq!(
        app.status_text(),
        Some("breakpoint: stopped before step 3 (structs) · c continues, s runs it")
    );
    let frame = draw(&mut app, 120, 34);
    assert!(frame.contains("\"1-1\"  ← step 1 (planet)"), "{frame}");
    snapshot(
        "plans_breakpoint_120x34",
        "c stopped before step 3, whose breakpoint is marked; its owner param previewed from step 1's result",
        &mut app,
        120,
        34,
    );
    press(&mut app, KeyCode::Char('c'));
    assert_eq!(
        plan_statuses(&app),
        ["succeeded", "succeeded", "succeeded", "succeeded", "failed"]
    );
    // A new run starts over with the breakpoint kept. With two breakpoints in one
    // level, continuing from the first stops again before the second.
    press(&mut app, KeyCode::Char('n'));
    assert_eq!(plan_statuses(&app), ["pending"; 5]);
    press_n(&mut app, KeyCode::Up, 2);
    press(&mut app, KeyCode::Char('b'));
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Char('b'));
    press(&mut app, KeyCode::Char('c'));
    assert_eq!(
        plan_statuses(&app),
        ["succeeded", "pending", "pending", "pending", "failed"]
    );
    press(&mut app, KeyCode::Char('c'));
    assert_eq!(
        plan_statuses(&app),
        ["succeeded", "succeeded", "pending", "pending", "failed"]
    );
    assert_eq!(
        app.status_text(),
        Some("breakpoint: stopped before step 2 (guild) · c continues, s runs it")
    );
    press(&mut app, KeyCode::Char('c'));
    assert_eq!(plan_statuses(&app)[2..4], ["succeeded", "pending"]);
}

#[test]
fn plans_a_file_with_several_plan_calls_offers_a_choice() {
    let (_rt, mut app) = plans_console();
    let one = json!({"steps": [{"tool": "structs_query_block_height"}]});
    let two = json!({"steps": [{"tool": "structs_query_block_height"}, {"tool": "structs_query_player", "params": {"player_id": "1-2"}}]});
    let text = format!(
        "{}\n{}\n",
        json!({"name": "structs_plan_execute", "arguments": one}),
        json!({"name": "structs_plan_execute", "arguments": two}),
    );
    let path = plan_file("two.jsonl", &text);
    open_plan_file(&mut app, &path);
    let frame = draw(&mut app, 100, 20);
    assert!(frame.contains("line 1 · 1 step"), "{frame}");
    assert!(frame.contains("line 2 · 2 steps"), "{frame}");
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Enter);
    assert_eq!(plan_statuses(&app), ["pending"; 2]);
    press(&mut app, KeyCode::Char('r'));
    assert_eq!(plan_statuses(&app), ["succeeded"; 2]);
    // Open from code: the plan replaces what was open.
    app.open_plan(
        "from code",
        json!({"steps": [{"tool": "structs_query_block_height"}]}),
    );
    assert_eq!(plan_statuses(&app), ["pending"]);
    assert!(draw(&mut app, 100, 20).contains("Plan · from code · 1 step"));
}

#[test]
fn plans_w_opens_a_shipped_workflow_with_its_example_inputs() {
    let (_rt, mut app) = plans_console();
    press(&mut app, KeyCode::Char('w'));
    let frame = draw(&mut app, 120, 20);
    for name in [
        "build-mining-operation",
        "mine-refine-convert",
        "planet-setup",
        "query-and-monitor-planet",
        "example (built in)",
    ] {
        assert!(frame.contains(name), "{name} is not offered: {frame}");
    }
    // planet-setup is the third (by name).
    press_n(&mut app, KeyCode::Down, 2);
    press(&mut app, KeyCode::Enter);
    assert_eq!(plan_statuses(&app), ["pending"; 7]);
    snapshot(
        "plans_workflow_120x30",
        "w, then planet-setup: the shipped workflow open with its example input, step 0's player_id previewed from ${input.player_id}",
        &mut app,
        120,
        30,
    );
    press(&mut app, KeyCode::Char('r'));
    assert_eq!(plan_statuses(&app), ["succeeded"; 7]);
}

#[test]
fn the_plans_pane_renders_at_any_size() {
    let (_rt, mut app) = plans_console();
    let sizes = [
        (0, 0),
        (1, 1),
        (20, 5),
        (40, 12),
        (60, 20),
        (69, 30),
        (70, 13),
        (300, 80),
    ];
    let check = |app: &mut App, state: &str| {
        for (width, height) in sizes {
            assert_drawn_whole(app, width, height, state);
        }
    };
    check(&mut app, "example");
    press(&mut app, KeyCode::Char('r'));
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Enter);
    check(&mut app, "result focused");
    press(&mut app, KeyCode::Char('o'));
    type_text(&mut app, "some/path");
    check(&mut app, "prompt");
    press(&mut app, KeyCode::Enter);
    check(&mut app, "problems");
}

#[test]
fn a_recording_console_logs_the_plans_tab_steps_like_every_other_call() {
    use std::sync::Arc;
    use structs_console::tui::{Tab, Theme};
    let path = std::env::temp_dir().join(format!(
        "structs-console-plan-rec-{}.jsonl",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&path);
    let recorder = Arc::new(structs_console::record::Recorder::open(&path).expect("log"));
    let runtime = crate::support::console::runtime();
    let core = structs_console::assembly::build_with_clock(
        Arc::new(crate::sim()),
        structs_console::clock::WallClock::Fixed(crate::support::console::wall()),
    );
    let mut app = App::recording(core, Theme::default(), runtime.handle().clone(), recorder);
    app.settle();
    app.open_plan(
        "two steps",
        json!({"steps": [
            {"id": "players", "tool": "structs_list_players", "params": {"page_size": 2}},
            {"id": "first", "tool": "structs_query_player",
             "params": {"player_id": "${steps.players.data.players[0].Player.id}"}}
        ]}),
    );
    assert_eq!(app.tab(), Tab::Plans);
    press(&mut app, KeyCode::Char('r'));
    app.settle();
    assert_eq!(plan_statuses(&app), ["succeeded", "succeeded"]);
    let mut seen = Vec::new();
    for item in structs_console::record::LogReader::open(&path).expect("log") {
        let e = item.expect("readable").expect("an entry");
        seen.push((
            format!("{:?}", e.kind),
            e.tool.unwrap_or_default(),
            e.arguments,
        ));
    }
    // Both steps are in the log, request and response, with the reference resolved in
    // the arguments the second step was called with.
    for tool in ["structs_list_players", "structs_query_player"] {
        for kind in ["Request", "Response"] {
            assert!(
                seen.iter().any(|(k, t, _)| k == kind && t == tool),
                "{kind} {tool} missing from {seen:?}"
            );
        }
    }
    let query = seen
        .iter()
        .find(|(k, t, _)| k == "Request" && t == "structs_query_player")
        .and_then(|(_, _, a)| a.clone())
        .expect("the second step's arguments");
    assert!(
        query["player_id"]
            .as_str()
            .is_some_and(|id| id.starts_with("1-")),
        "{query}"
    );
    let _ = std::fs::remove_file(&path);
}
