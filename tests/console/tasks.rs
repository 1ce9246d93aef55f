//! The tasks MCP servers run for clients of the Tasks extension, as the PoW and Plans
//! tabs show them: read from the handle store the console shares with those servers,
//! each tab the tasks of its own tools, and a working one asked to stop from there.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::KeyCode;
use serde_json::{Value, json};
use structs_console::clock::WallClock;
use structs_console::store::HandleStore;
use structs_console::store::tasks;
use structs_console::tui::{App, Tab, Theme};

use crate::support::console::{draw, press, runtime, wall};
use crate::{sim, snapshot};

/// A task's record as a server writes it (see `mcp::server::tasks`).
fn record(id: &str, tool: &str, status: &str, created: &str, updated: &str) -> Value {
    json!({"taskId": id, "tool": tool, "status": status, "createdAt": created,
           "lastUpdatedAt": updated, "ttlMs": 600000, "pollIntervalMs": 500})
}

fn keep(runtime: &tokio::runtime::Runtime, store: &Arc<dyn HandleStore>, record: Value) {
    let key = tasks::key(record["taskId"].as_str().unwrap());
    runtime
        .block_on(store.put_record(&key, record, Duration::from_secs(600)))
        .unwrap();
}

#[test]
fn the_pow_and_plans_tabs_show_the_servers_tasks_and_stop_one() {
    let runtime = runtime();
    let core =
        structs_console::assembly::build_with_clock(Arc::new(sim()), WallClock::Fixed(wall()));
    let store = core.handle_store().clone();
    let mut app = App::new(core, Theme::default(), runtime.handle().clone());
    app.settle();
    app.pin_plan_timing();

    // No task in the store: the PoW tab shows its jobs alone.
    press(&mut app, KeyCode::Char('4'));
    app.tick(Instant::now());
    app.settle();
    assert!(!draw(&mut app, 110, 24).contains("Tasks"));

    // What servers sharing the store keep: a proof-of-work search still running (its
    // server rewrote it just now), one that found its proof, one whose server stopped,
    // a plan run and a workflow run that failed.
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let running = "9f1c2b3a4d5e6f708192a3b4c5d6e7f8";
    keep(
        &runtime,
        &store,
        record(
            running,
            "structs_calculate_proof_of_work",
            "working",
            "2026-11-27T09:00:03.000Z",
            &now,
        ),
    );
    let mut found = record(
        "0a1b2c3d4e5f60718293a4b5c6d7e8f9",
        "structs_calculate_proof_of_work",
        "completed",
        "2026-11-27T09:00:02.000Z",
        "2026-11-27T09:00:02.500Z",
    );
    found["result"] = json!({"structuredContent": {"nonce": 11578, "valid": true,
        "hash": "0000d96994fb354aa51c6158a9ede2910da71a52d6a58db2578ac345e8549b06"}});
    keep(&runtime, &store, found);
    keep(
        &runtime,
        &store,
        record(
            "5e5e5e5e00000000000000000000abcd",
            "structs_calculate_proof_of_work",
            "working",
            "2026-11-27T09:00:01.000Z",
            "2026-11-27T09:00:01.000Z",
        ),
    );
    let mut plan = record(
        "7a7a7a7a11111111111111111111beef",
        "structs_plan_execute",
        "completed",
        "2026-11-27T08:59:00.000Z",
        "2026-11-27T08:59:01.000Z",
    );
    plan["result"] =
        json!({"structuredContent": {"status": "succeeded", "steps": [{}, {}, {}, {}, {}]}});
    keep(&runtime, &store, plan);
    let mut workflow = record(
        "3c3c3c3c22222222222222222222f00d",
        "structs_workflow_execute",
        "completed",
        "2026-11-27T08:58:00.000Z",
        "2026-11-27T08:58:04.000Z",
    );
    workflow["result"] = json!({"isError": true, "structuredContent": {"error":
        {"code": "VALIDATION_FAILED", "message": "workflow \"raid\" needs input fleet_id"}}});
    keep(&runtime, &store, workflow);

    // The next look shows the three searches under the jobs, newest first; the one
    // whose server went quiet reads failed.
    app.tick(Instant::now() + Duration::from_secs(3));
    app.settle();
    let frame = draw(&mut app, 110, 24);
    assert!(frame.contains("Tasks · 3"), "{frame}");
    assert!(frame.contains("9f1c2b3a pow working"), "{frame}");
    assert!(frame.contains("0a1b2c3d pow completed"), "{frame}");
    assert!(frame.contains("5e5e5e5e pow failed"), "{frame}");
    assert!(
        !frame.contains("7a7a7a7a"),
        "plan runs are the Plans tab's: {frame}"
    );

    // Tab focuses them; the found proof's task shows how it ended.
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Down);
    snapshot(
        "pow_tasks",
        "The PoW tab with three proof-of-work tasks of MCP servers under the (empty) jobs: the second, focused, found its proof",
        &mut app,
        110,
        24,
    );
    press(&mut app, KeyCode::Down);
    let frame = draw(&mut app, 110, 24);
    assert!(
        frame.contains("the server running this task stopped"),
        "{frame}"
    );

    // x on the running one asks its server, through the store, to stop it.
    press(&mut app, KeyCode::Char('g'));
    press(&mut app, KeyCode::Char('x'));
    app.settle();
    assert!(
        app.status_text()
            .is_some_and(|s| s.contains("9f1c2b3a: asked to stop")),
        "{:?}",
        app.status_text()
    );
    assert!(runtime.block_on(tasks::cancel_asked(store.as_ref(), running)));
    // Esc gives the jobs the focus back.
    press(&mut app, KeyCode::Esc);
    assert!(draw(&mut app, 110, 24).contains("n  new job"));

    // The Plans tab lists the plan and workflow runs under the steps.
    press(&mut app, KeyCode::Char('3'));
    assert_eq!(app.tab(), Tab::Plans);
    app.tick(Instant::now() + Duration::from_secs(6));
    app.settle();
    let frame = draw(&mut app, 120, 34);
    assert!(frame.contains("Tasks · 2"), "{frame}");
    assert!(
        frame.contains("3c3c3c3c workflow completed (tool error)"),
        "{frame}"
    );
    assert!(!frame.contains("9f1c2b3a"), "{frame}");
    // Steps, result, tasks.
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Down);
    snapshot(
        "plans_tasks",
        "The Plans tab with a plan run and a workflow run of MCP servers under the example's steps; the workflow run, focused, ended in a tool error",
        &mut app,
        120,
        34,
    );
    press(&mut app, KeyCode::Tab);
    assert!(
        draw(&mut app, 120, 34).contains("r  run"),
        "back on the steps"
    );
}
