//! The Live tab: another server's calls folded in as they come (here, lines handed to
//! it as a feed would), followed or paused, filtered, shown, run again and opened in
//! Plans. `tests/live.rs` feeds it from a real server's control endpoint.

use crossterm::event::KeyCode;
use serde_json::{Value, json};
use structs_console::tui::{App, Tab};

use crate::support::console::{draw, press, press_n, type_text};
use crate::{console, snapshot};

fn line(v: Value) -> String {
    v.to_string()
}

/// Two agents' sessions: answered, failed, cancelled and running calls, one with its
/// progress, at fixed times.
fn two_sessions() -> Vec<String> {
    let request = |session: &str, seq: u64, call: u64, tool: &str, args: Value| {
        json!({"v": 1, "ts": format!("2026-11-26T09:00:0{seq}.000000Z"), "session": session,
            "seq": seq, "type": "request", "call": call, "tool": tool, "arguments": args,
            "source": "sim", "block_height": 120000})
    };
    let response = |session: &str, seq: u64, call: u64, tool: &str, ms: f64, answer: Value| {
        let mut v = json!({"v": 1, "session": session, "seq": seq, "type": "response",
            "call": call, "tool": tool, "duration_ms": ms});
        if answer.get("error").is_some() {
            v["error"] = answer;
        } else {
            v["result"] = answer;
        }
        v
    };
    let search = json!({"action_type": "struct_build_complete", "entity_id": "5-1",
        "block_start": 10, "age": 1, "difficulty": 700, "threads": 1});
    let plan = json!({"steps": [
        {"tool": "structs_query_player", "params": {"player_id": "1-1"}},
        {"tool": "structs_query_planet", "params": {"planet_id": "${step[0].data.player.Player.planetId}"}}
    ]});
    let mut search_progress = request(
        "s-agent-a",
        3,
        2,
        "structs_calculate_proof_of_work",
        search.clone(),
    );
    search_progress["progress_token"] = json!("p-2");
    vec![
        line(json!({"v": 1, "type": "hello", "server": "proxy",
            "description": "structs-console --headless", "pid": 1})),
        line(request(
            "s-agent-a",
            1,
            1,
            "structs_query_player",
            json!({"player_id": "1-1"}),
        )),
        line(response(
            "s-agent-a",
            2,
            1,
            "structs_query_player",
            1.4,
            json!({"player": {"Player": {"id": "1-1", "planetId": "2-1"}}}),
        )),
        line(search_progress),
        line(request("s-agent-b", 1, 1, "structs_plan_execute", plan)),
        line(response(
            "s-agent-b",
            2,
            1,
            "structs_plan_execute",
            12.6,
            json!({"status": "completed", "steps": []}),
        )),
        line(request(
            "s-agent-b",
            3,
            2,
            "structs_query_player",
            json!({"player_id": "1-999"}),
        )),
        line(response(
            "s-agent-b",
            4,
            2,
            "structs_query_player",
            0.8,
            json!({"error": {"code": "RESOURCE_NOT_FOUND", "message": "no player 1-999"}}),
        )),
        line(request(
            "s-agent-a",
            5,
            3,
            "structs_list_entities",
            json!({"entity_type": "planet"}),
        )),
        line({
            let mut v = response(
                "s-agent-a",
                6,
                3,
                "structs_list_entities",
                0.3,
                json!({"error": {"code": "RATE_LIMIT_EXCEEDED", "message": "slow down",
                    "details": {"retry_after_ms": 1500}}}),
            );
            v["injected"] = json!("error RATE_LIMIT_EXCEEDED (rule 1)");
            v
        }),
        line(
            json!({"v": 1, "session": "s-agent-a", "seq": 7, "type": "notification",
            "method": "notifications/progress",
            "params": {"progressToken": "p-2", "progress": 42, "total": 100,
                "message": "1.9 MH/s"}}),
        ),
    ]
}

fn fed() -> (tokio::runtime::Runtime, App) {
    let (rt, mut app) = console();
    let lines = two_sessions();
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    app.feed_live(&lines);
    (rt, app)
}

#[test]
fn live_without_a_feed_says_how_to_watch_one() {
    let (_rt, mut app) = console();
    press(&mut app, KeyCode::Char('8'));
    assert_eq!(app.tab(), Tab::Live);
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains("Watching nothing."), "{frame}");
    assert!(frame.contains("structs-console watch"), "{frame}");
    // Nothing to run again: nothing sent.
    let sent = app.requests_sent();
    press(&mut app, KeyCode::Char('r'));
    assert_eq!(app.requests_sent(), sent);
}

#[test]
fn calls_of_two_sessions_with_their_states_progress_and_sizes() {
    let (_rt, mut app) = fed();
    assert_eq!(app.tab(), Tab::Live);
    snapshot(
        "live_calls_100x30",
        "Live: two agents' calls as they came, the newest selected (a rate limit), a search running at 42 %",
        &mut app,
        100,
        30,
    );
    snapshot(
        "live_calls_40x12",
        "Live on a small terminal: the list alone",
        &mut app,
        40,
        12,
    );
    // The running search, selected: its progress and its arguments.
    press_n(&mut app, KeyCode::Up, 3);
    let frame = draw(&mut app, 100, 30);
    assert!(
        frame.contains("paused"),
        "moving up pauses following:\n{frame}"
    );
    snapshot(
        "live_running_100x30",
        "Live: the running proof-of-work search selected, its progress and arguments",
        &mut app,
        100,
        30,
    );
    press(&mut app, KeyCode::Enter);
    snapshot(
        "live_running_40x12",
        "Live on a small terminal: Enter shows the selected call alone",
        &mut app,
        40,
        12,
    );
}

#[test]
fn following_pausing_and_filtering_by_keys() {
    let (_rt, mut app) = fed();
    // Following: a new call is selected as it comes.
    app.feed_live(&[&line(
        json!({"session": "s-agent-b", "type": "request", "call": 3,
        "tool": "structs_query_planet", "arguments": {"planet_id": "2-1"}}),
    )]);
    let frame = draw(&mut app, 100, 30);
    assert!(
        frame.contains("#2 call 3 · structs_query_planet"),
        "{frame}"
    );
    // Paused: the selection stays where it was as calls come.
    press(&mut app, KeyCode::Up);
    app.feed_live(&[&line(
        json!({"session": "s-agent-a", "type": "request", "call": 4,
        "tool": "structs_query_guild", "arguments": {"guild_id": "0-1"}}),
    )]);
    let frame = draw(&mut app, 100, 30);
    assert!(
        frame.contains("#1 call 3 · structs_list_entities"),
        "{frame}"
    );
    assert!(frame.contains("paused"), "{frame}");
    // f follows again.
    press(&mut app, KeyCode::Char('f'));
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains("#1 call 4 · structs_query_guild"), "{frame}");
    assert!(frame.contains("following"), "{frame}");

    // The filter: one session, then its failures.
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, "#2");
    press(&mut app, KeyCode::Enter);
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains("3 shown"), "{frame}");
    assert!(!frame.contains("list_entities"), "{frame}");
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, " not_found");
    press(&mut app, KeyCode::Enter);
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains("1 shown"), "{frame}");
    assert!(frame.contains("RESOURCE_NOT_FOUND"), "{frame}");
    snapshot(
        "live_filtered_100x30",
        "Live filtered to session 2's calls not found",
        &mut app,
        100,
        30,
    );
    // A filter nothing passes says so; C shows every call again.
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, "zzz");
    press(&mut app, KeyCode::Enter);
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains("No call matches the filter"), "{frame}");
    press(&mut app, KeyCode::Char('C'));
    let frame = draw(&mut app, 100, 30);
    assert!(!frame.contains("shown"), "{frame}");
    assert!(frame.contains("7 calls"), "{frame}");
}

#[test]
fn a_call_runs_again_here_and_a_plan_opens_in_plans() {
    let (_rt, mut app) = fed();
    // The first call: player 1-1, run again on this console's core.
    press(&mut app, KeyCode::Home);
    press(&mut app, KeyCode::Char('r'));
    let frame = draw(&mut app, 120, 60);
    assert!(frame.contains("run again here: answer"), "{frame}");
    assert!(
        frame.contains(r#""substationId": "4-1""#),
        "the demo world's answer:\n{frame}"
    );
    assert!(
        frame.contains("ran structs_query_player again here: answered"),
        "{frame}"
    );
    // The plan call opens in Plans, ready to step through.
    press_n(&mut app, KeyCode::Down, 2);
    press(&mut app, KeyCode::Char('o'));
    assert_eq!(app.tab(), Tab::Plans);
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains("live #2 call 1"), "{frame}");
    assert!(frame.contains("query_planet"), "{frame}");
}

/// The two sessions, then a call of session 1 held at a breakpoint on its tool.
fn with_a_held_call() -> Vec<String> {
    let mut lines = two_sessions();
    lines.push(line(
        json!({"v": 1, "type": "breakpoints", "session": "s-agent-a",
        "rules": [{"rule": 1, "on": "request", "match": "structs_query_player"}]}),
    ));
    lines.push(line(json!({"v": 1, "ts": "2026-11-26T09:00:08.000000Z",
        "session": "s-agent-a", "seq": 8, "type": "request", "call": 4,
        "tool": "structs_query_player", "arguments": {"player_id": "1-1"}})));
    lines.push(line(
        json!({"v": 1, "type": "held", "session": "s-agent-a", "call": 4,
        "hold": 1, "way": "request", "tool": "structs_query_player",
        "arguments": {"player_id": "1-1"}, "rule": 1, "timeout_ms": 60000,
        "schema": {"type": "object", "properties": {"player_id": {"type": "string",
            "pattern": "^[0-9]+-[0-9]+$"}}, "required": ["player_id"],
            "additionalProperties": false}}),
    ));
    lines
}

#[test]
fn an_injected_fault_is_marked_as_not_the_servers_answer() {
    let (_rt, mut app) = fed();
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains("↯RATE_LIMIT_EXCEEDED"), "{frame}");
    assert!(
        frame.contains("↯ not the server's answer: error RATE_LIMIT_EXCEEDED (rule 1)"),
        "{frame}"
    );
    snapshot(
        "live_injected_100x30",
        "Live: the selected call's rate limit was injected by a fault rule, and says so",
        &mut app,
        100,
        30,
    );
    snapshot(
        "live_injected_40x12",
        "Live on a small terminal: the injected fault marked in the list",
        &mut app,
        40,
        12,
    );
}

#[test]
fn a_held_call_is_edited_and_checked_against_its_schema_before_it_goes() {
    let (_rt, mut app) = console();
    let lines = with_a_held_call();
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    app.feed_live(&lines);
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains("⏸ held (request)"), "{frame}");
    assert!(frame.contains("1 breakpoint · 1 held"), "{frame}");
    assert!(
        frame.contains("c continue · e edit · a answer · E error · x drop"),
        "{frame}"
    );
    // Edit the player id: "1-1" becomes "1-x", which the schema refuses.
    press(&mut app, KeyCode::Char('e'));
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::End);
    press_n(&mut app, KeyCode::Left, 1);
    press(&mut app, KeyCode::Backspace);
    type_text(&mut app, "x");
    app.handle_key(crossterm::event::KeyEvent::new(
        KeyCode::Char('s'),
        crossterm::event::KeyModifiers::CONTROL,
    ));
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains(r#""player_id": "1-x""#), "{frame}");
    assert!(frame.contains("✗ VALIDATION_INVALID_FORMAT"), "{frame}");
    snapshot(
        "live_held_edit_100x30",
        "Live: a held call's arguments being edited; the schema refuses the id typed",
        &mut app,
        100,
        30,
    );
    snapshot(
        "live_held_edit_40x12",
        "Live on a small terminal: the editor alone",
        &mut app,
        40,
        12,
    );
    // Esc leaves the editor; the call is still held.
    press(&mut app, KeyCode::Esc);
    assert!(draw(&mut app, 100, 30).contains("⏸ held (request)"));
}
