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
    assert!(
        frame.contains("ran structs_query_player again here: answered"),
        "{frame}"
    );
    // The fresh answer is a node of the call's tree, under the recorded one, open;
    // the time is this console's fixed clock.
    assert!(frame.contains("▾ run again here {2}"), "{frame}");
    assert!(
        frame.contains("timestamp: 2026-11-21T10:00:00Z"),
        "the demo world's answer:\n{frame}"
    );
    // Into the tree: the fresh answer's player, opened down to its substation.
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::End);
    press(&mut app, KeyCode::Up);
    press(&mut app, KeyCode::Right);
    press(&mut app, KeyCode::Right);
    press(&mut app, KeyCode::Right);
    let frame = draw(&mut app, 120, 60);
    assert!(frame.contains("substationId: 4-1 substation"), "{frame}");
    // Esc goes back to the calls.
    press(&mut app, KeyCode::Esc);
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
    // Edit the player id: "1-1" becomes "1-x", which the schema refuses. The cursor
    // starts at the end of the text, on the line below the id.
    press(&mut app, KeyCode::Char('e'));
    press(&mut app, KeyCode::Up);
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

#[test]
fn the_editor_starts_at_the_end_and_erases_before_and_under_the_cursor() {
    let (_rt, mut app) = console();
    let lines = with_a_held_call();
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    app.feed_live(&lines);
    let ctrl_s = || {
        crossterm::event::KeyEvent::new(KeyCode::Char('s'), crossterm::event::KeyModifiers::CONTROL)
    };
    // Backspace at once erases the text's last character: the closing brace.
    press(&mut app, KeyCode::Char('e'));
    press(&mut app, KeyCode::Backspace);
    app.handle_key(ctrl_s());
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains("✗ not JSON"), "{frame}");
    type_text(&mut app, "}");
    // Delete erases under the cursor: "1-1" loses its last digit, which the schema
    // then refuses (the editor stays open, showing the text).
    press(&mut app, KeyCode::Up);
    press(&mut app, KeyCode::End);
    press_n(&mut app, KeyCode::Left, 2);
    press(&mut app, KeyCode::Delete);
    app.handle_key(ctrl_s());
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains(r#""player_id": "1-""#), "{frame}");
    assert!(frame.contains("✗ VALIDATION_INVALID_FORMAT"), "{frame}");
    // At a line's end, Delete joins the line below to it.
    press(&mut app, KeyCode::End);
    press(&mut app, KeyCode::Delete);
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains(r#""player_id": "1-"}"#), "{frame}");
}

#[test]
fn an_answer_a_fault_kept_from_the_agent_shows_the_call_still_waiting() {
    let (_rt, mut app) = console();
    app.feed_live(&[
        &line(json!({"v": 1, "type": "hello", "server": "proxy",
            "description": "structs-console --headless", "pid": 1})),
        &line(
            json!({"v": 1, "ts": "2026-11-26T09:00:01.000000Z", "session": "s-a",
            "seq": 1, "type": "request", "call": 1, "tool": "structs_query_planet",
            "arguments": {"planet_id": "2-1"}}),
        ),
        &line(
            json!({"v": 1, "type": "dropped", "session": "s-a", "call": 1,
            "tool": "structs_query_planet", "how": "dropped response (rule 2)"}),
        ),
    ]);
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains("↯running"), "{frame}");
    assert!(
        frame.contains("the agent got nothing (dropped response (rule 2)) and waits on"),
        "{frame}"
    );
    // The agent gives up: the call ends cancelled, marked.
    app.feed_live(&[&line(
        json!({"v": 1, "session": "s-a", "seq": 2, "type": "response", "call": 1,
            "tool": "structs_query_planet", "duration_ms": 2001.5,
            "injected": "dropped response (rule 2)",
            "error": {"error": {"code": "TOOL_CANCELLED", "message": "the client cancelled the call: timed out"}}}),
    )]);
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains("↯cancelled"), "{frame}");
    assert!(frame.contains("2.00 s"), "{frame}");
}

#[test]
fn an_answer_typed_for_a_held_call_must_fit_the_tools_output_schema() {
    let (_rt, mut app) = console();
    let mut lines = with_a_held_call();
    let mut held: Value = serde_json::from_str(lines.last().unwrap()).unwrap();
    held["output_schema"] = json!({"type": "object", "required": ["player"],
        "properties": {"player": {"type": "object"}}});
    *lines.last_mut().unwrap() = held.to_string();
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    app.feed_live(&lines);
    // a opens a whole tool result, its structured content empty: the schema refuses
    // it, and the editor stays open saying why, the reason wrapped whole.
    press(&mut app, KeyCode::Char('a'));
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains(r#""structuredContent": {}"#), "{frame}");
    app.handle_key(crossterm::event::KeyEvent::new(
        KeyCode::Char('s'),
        crossterm::event::KeyModifiers::CONTROL,
    ));
    let frame = draw(&mut app, 60, 30);
    assert!(
        frame.contains("✗ \"structuredContent\" does not fit the tool's output"),
        "{frame}"
    );
    assert!(frame.contains("player"), "{frame}");
    snapshot(
        "live_answer_refused_60x30",
        "Live: an answer typed for a held call, refused by the tool's output schema, the reason wrapped under the editor",
        &mut app,
        60,
        30,
    );
}

/// Enough calls to scroll the list, a few of them plans.
fn many_calls() -> Vec<String> {
    let mut lines = vec![line(json!({"v": 1, "type": "hello", "server": "proxy",
        "description": "structs-console --headless", "pid": 1}))];
    for n in 1..=60u64 {
        let tool = if n % 5 == 0 {
            "structs_plan_execute"
        } else {
            "structs_query_player"
        };
        lines.extend(answered_call(
            "s-agent-a",
            n,
            tool,
            json!({"player_id": "1-1"}),
            json!({"ok": true}),
        ));
    }
    lines
}

#[test]
fn a_filter_shows_every_call_it_matches_that_fits() {
    let (_rt, mut app) = console();
    let lines = many_calls();
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    app.feed_live(&lines);
    // Following the newest, the list is scrolled to its end.
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains("60 calls"), "{frame}");
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, "plan");
    press(&mut app, KeyCode::Enter);
    // The list's rows: as many of the 12 as its 10 rows hold, not the newest alone.
    let rows = |frame: &str| {
        frame
            .lines()
            .filter(|l| l.contains("│  #1 ") || l.contains("│› #1 "))
            .count()
    };
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains("12 shown"), "{frame}");
    assert_eq!(rows(&frame), 10, "{frame}");
    // A taller list shows all 12.
    let frame = draw(&mut app, 100, 60);
    assert_eq!(rows(&frame), 12, "{frame}");
}

/// A call's request and response lines, as a feed gives them.
fn answered_call(session: &str, call: u64, tool: &str, args: Value, answer: Value) -> [String; 2] {
    let ts = format!("2026-11-26T09:01:{call:02}.000000Z");
    [
        line(
            json!({"v": 1, "ts": ts, "session": session, "seq": call * 2 - 1,
            "type": "request", "call": call, "tool": tool, "arguments": args}),
        ),
        line(
            json!({"v": 1, "session": session, "seq": call * 2, "type": "response",
            "call": call, "tool": tool, "duration_ms": 2.5, "result": answer}),
        ),
    ]
}

/// What `core` answers `tool` with `args`: the watched server's answer, made here.
fn answer_of(core: &structs_console::Core, tool: &str, args: Value) -> Value {
    crate::support::console::runtime()
        .block_on(core.call_json(tool, args))
        .expect("an answer")
}

/// The demo world's core, with the snapshots' fixed clock.
fn demo_core() -> structs_console::Core {
    structs_console::assembly::build_with_clock(
        std::sync::Arc::new(crate::sim()),
        structs_console::clock::WallClock::Fixed(crate::support::console::wall()),
    )
}

#[test]
fn an_answers_references_show_as_a_tree_beside_it_and_open_from_the_answer() {
    let (_rt, mut app) = console();
    let watched = demo_core();
    let full = answer_of(
        &watched,
        "structs_query_player",
        json!({"player_id": "1-2", "include_references": true}),
    );
    assert_eq!(full["references"].as_object().map(|m| m.len()), Some(4));
    let mut lines = vec![line(json!({"v": 1, "type": "hello", "server": "proxy",
        "description": "structs-console --headless", "pid": 1}))];
    lines.extend(answered_call(
        "s-agent-a",
        1,
        "structs_query_player",
        json!({"player_id": "1-2", "include_references": true}),
        full,
    ));
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    app.feed_live(&lines);
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains(" references in the answer "), "{frame}");
    assert!(frame.contains("4 resolved, 0 failed"), "{frame}");
    assert!(frame.contains("0-2  Solar Accord  ← guildId"), "{frame}");
    // The answer's own node leaves the references to their tree.
    assert!(!frame.contains("references {"), "{frame}");
    snapshot(
        "live_references_100x30",
        "Live: a player's answer as a tree, the four entities it references beside it, grouped by kind",
        &mut app,
        100,
        30,
    );
    // Into the references: the guild opens into its fields, from the answer itself.
    let sent = app.requests_sent();
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Tab);
    assert!(hint_bar_of(&mut app).contains("expand"));
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Right);
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains("joinInfusionMinimum: 2000000"), "{frame}");
    snapshot(
        "live_references_40x12",
        "Live on a small terminal: the references alone when focused, the guild opened from the answer",
        &mut app,
        40,
        12,
    );
    // So does an id in the call's tree that the references hold: nothing is fetched.
    // Rows: arguments, player_id, include_references, answer, player, timestamp.
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Home);
    press_n(&mut app, KeyCode::Down, 4);
    // player opens, then into its first child (Player), which opens; its third field.
    press_n(&mut app, KeyCode::Right, 3);
    press_n(&mut app, KeyCode::Down, 3);
    let frame = draw(&mut app, 100, 60);
    let selected = |frame: &str, text: &str| {
        frame
            .lines()
            .any(|l| l.split(text).count() > 1 && l.split(text).next().unwrap().contains('›'))
    };
    assert!(selected(&frame, "▸ guildId: 0-2 guild"), "{frame}");
    press(&mut app, KeyCode::Right);
    let frame = draw(&mut app, 100, 60);
    assert!(frame.contains("▾ guildId: 0-2 guild"), "{frame}");
    assert!(
        frame.contains("entrySubstationId: 4-2 substation"),
        "{frame}"
    );
    assert_eq!(app.requests_sent(), sent, "opened from the answer");
    // An id the references do not hold is fetched, on this console's core.
    press(&mut app, KeyCode::Home);
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Right);
    assert_eq!(app.requests_sent(), sent + 1, "player 1-2 fetched here");
    let frame = draw(&mut app, 100, 60);
    assert!(frame.contains("name: fluxsmith2"), "{frame}");

    // Lean bookkeeping (primary references at summary verbosity): entries without a
    // status are resolved ones.
    let lean_args = json!({"player_id": "1-2", "include_references": "primary",
        "verbosity": "summary"});
    let lean = answer_of(&watched, "structs_query_player", lean_args.clone());
    assert!(lean["references"]["0-2"].get("status").is_none());
    let more = answered_call("s-agent-a", 2, "structs_query_player", lean_args, lean);
    app.feed_live(&[&more[0], &more[1]]);
    press(&mut app, KeyCode::Esc);
    press(&mut app, KeyCode::End);
    let frame = draw(&mut app, 100, 30);
    assert!(
        frame.contains("#1 call 2 · structs_query_player"),
        "{frame}"
    );
    assert!(frame.contains("4 resolved, 0 failed"), "{frame}");
    assert!(!frame.contains('✗'), "{frame}");
}

/// The hint bar of a 100x30 frame.
fn hint_bar_of(app: &mut App) -> String {
    crate::hint_bar(app)
}

/// `frame` with the random part of `handle` written as [`crate::handle_mask`]'s first,
/// so that the frame is the same on every run; where the frame cuts the handle short,
/// as much of it as shows.
fn masked(frame: &str, handle: &str) -> String {
    let (head, hash) = handle.rsplit_once(':').expect("a handle's random part");
    let mask = crate::handle_mask(1);
    let mut frame = frame.to_string();
    for n in (1..=hash.len()).rev() {
        frame = frame.replace(
            &format!("{head}:{}", &hash[..n]),
            &format!("{head}:{}", &mask[..n]),
        );
    }
    frame
}

#[test]
fn a_result_handle_is_fetched_on_this_consoles_core_or_said_to_be_the_servers() {
    use structs_console::source::sim::{BlockClock, SimSource, WorldConfig};
    // A core whose store holds a result over 25 KB, as the watched server's would;
    // the console runs on it, so the handle is in its store.
    let config = WorldConfig::with_players(200);
    let core = structs_console::assembly::build_with_clock(
        std::sync::Arc::new(SimSource::new(
            config,
            BlockClock::paused(config.genesis_height),
        )),
        structs_console::clock::WallClock::Fixed(crate::support::console::wall()),
    );
    let args = json!({"page_size": 100, "include_references": true});
    let envelope = answer_of(&core, "structs_list_players", args.clone());
    assert_eq!(envelope["status"], "partial");
    let handle = envelope["result_handle"].as_str().unwrap().to_string();
    let runtime = crate::support::console::runtime();
    let mut app = App::new(
        core.clone(),
        structs_console::tui::Theme::default(),
        runtime.handle().clone(),
    );
    app.settle();
    let mut lines = vec![line(json!({"v": 1, "type": "hello", "server": "proxy",
        "description": "structs-console --headless", "pid": 1}))];
    lines.extend(answered_call(
        "s-agent-a",
        1,
        "structs_list_players",
        args,
        envelope,
    ));
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    app.feed_live(&lines);
    let frame = draw(&mut app, 100, 30);
    assert!(
        frame.contains(&format!(
            "over 25 KB: stored whole under {}…; H fetches it",
            &handle[..handle.len() - 24]
        )),
        "{frame}"
    );
    let sent = app.requests_sent();
    press(&mut app, KeyCode::Char('H'));
    assert_eq!(app.requests_sent(), sent + 1, "one structs_handle_fetch");
    let status = app.status_text().unwrap_or_default().to_string();
    assert!(
        status.contains(&format!(
            "page 1 of 8 of {}… fetched on this console's core",
            &handle[..handle.len() - 24]
        )),
        "{status}"
    );
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains("page 1/8 · rows 1-20 of 154"), "{frame}");
    assert!(frame.contains("[0] 1-1 player"), "{frame}");
    let shot = |name: &str, description: &str, app: &mut App, width: u16, height: u16| {
        let frame = masked(&draw(app, width, height), &handle);
        crate::snapshot_frame(name, description, frame);
    };
    shot(
        "live_handle_100x30",
        "Live: an answer over 25 KB, its handle fetched on this console's core (H): page 1 as a tree, selected, its players open",
        &mut app,
        100,
        30,
    );
    press(&mut app, KeyCode::Enter);
    shot(
        "live_handle_40x12",
        "Live on a small terminal: the call alone, the fetched page selected",
        &mut app,
        40,
        12,
    );
    press(&mut app, KeyCode::Esc);

    // A handle this console's store does not hold: the watched server's own.
    let theirs = "structs:player:1795255200:0badc0de";
    let more = answered_call(
        "s-agent-a",
        2,
        "structs_list_players",
        json!({"page_size": 100}),
        json!({"status": "partial", "summary": {}, "result_handle": theirs}),
    );
    app.feed_live(&[&more[0], &more[1]]);
    press(&mut app, KeyCode::End);
    press(&mut app, KeyCode::Char('H'));
    let status = app.status_text().unwrap_or_default().to_string();
    assert!(
        status.contains(&format!(
            "{theirs} belongs to the watched server (proxy), not this console's core"
        )),
        "{status}"
    );
    let frame = draw(&mut app, 160, 40);
    assert!(
        frame.contains("belongs to the watched server (proxy), not this console's core"),
        "the call's tree says so too:\n{frame}"
    );
    // The status line wraps a message longer than the terminal is wide: its end is
    // drawn, above the hint bar.
    let frame = draw(&mut app, 100, 30);
    let rows: Vec<&str> = frame.lines().collect();
    let hints = rows.len() - 1;
    assert!(rows[hints - 1].contains("both use would)"), "{frame}");
    assert!(
        rows[hints - 2].contains("belongs to the watched server"),
        "{frame}"
    );
    // A call whose answer has no handle offers no fetch: H does nothing there.
    let small = answered_call(
        "s-agent-a",
        3,
        "structs_query_block_height",
        json!({}),
        json!({"height": "120000"}),
    );
    app.feed_live(&[&small[0], &small[1]]);
    press(&mut app, KeyCode::End);
    let sent = app.requests_sent();
    press(&mut app, KeyCode::Char('H'));
    assert_eq!(app.requests_sent(), sent);
    assert!(!draw(&mut app, 100, 30).contains("over 25 KB"));
}

#[test]
fn a_call_is_sent_to_replay_among_the_calls_seen_so_far() {
    let (_rt, mut app) = fed();
    // #2 call 1, the plan: the third call seen.
    press(&mut app, KeyCode::Home);
    press_n(&mut app, KeyCode::Down, 2);
    // On a wide terminal the hint bar offers it.
    let wide = draw(&mut app, 240, 30);
    assert!(
        wide.lines()
            .last()
            .unwrap_or_default()
            .contains("R  replay"),
        "{wide}"
    );
    press(&mut app, KeyCode::Char('R'));
    assert_eq!(app.tab(), Tab::Replay);
    app.settle_log();
    let status = app.status_text().unwrap_or_default().to_string();
    assert!(
        status.starts_with("#2 call 1 in Replay, among the 5 calls seen so far, written to "),
        "{status}"
    );
    let path = std::path::PathBuf::from(status.rsplit("written to ").next().unwrap());
    assert!(path.is_file(), "{}", path.display());
    let frame = draw(&mut app, 120, 36);
    // Replay shows the log of the five calls, the plan selected: its arguments and the
    // answer the agent got.
    assert!(frame.contains(" · 5 calls · "), "{frame}");
    assert!(frame.contains("call 3 · structs_plan_execute"), "{frame}");
    assert!(frame.contains("session s-agent-b #1"), "{frame}");
    assert!(
        frame.contains(r#"arguments {"steps":[{"tool":"structs_query_player""#),
        "{frame}"
    );
    assert!(frame.contains(r#""status": "completed""#), "{frame}");
    let selected = frame
        .lines()
        .find(|l| l.contains("› "))
        .unwrap_or_default()
        .to_string();
    assert!(selected.contains("plan_execute"), "{frame}");
    // The call runs again from there, as any recorded call does.
    press(&mut app, KeyCode::Char('r'));
    assert_eq!(app.replay_verdicts().0, 1);
    // The log is this console's: it goes when the console does.
    drop(app);
    assert!(!path.exists(), "{}", path.display());
}

#[test]
fn a_call_of_a_followed_log_opens_in_that_log() {
    let dir = std::env::temp_dir().join(format!("structs-live-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("agent.jsonl");
    // The two sessions as a recorder wrote them (the hello is the endpoint's, not the
    // log's).
    let lines: Vec<String> = two_sessions().into_iter().skip(1).collect();
    std::fs::write(&log, lines.join("\n") + "\n").unwrap();
    let (_rt, mut app) = console();
    app.watch(&log).unwrap();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while app.live_calls().len() < 5 && std::time::Instant::now() < until {
        app.update();
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(app.live_calls().len(), 5);
    // #1 call 3, the injected rate limit: the last call.
    press(&mut app, KeyCode::End);
    press(&mut app, KeyCode::Char('R'));
    assert_eq!(app.tab(), Tab::Replay);
    app.settle_log();
    let status = app.status_text().unwrap_or_default().to_string();
    assert_eq!(status, format!("#1 call 3 in Replay, in {}", log.display()));
    let frame = draw(&mut app, 120, 36);
    assert!(frame.contains("agent.jsonl"), "{frame}");
    assert!(frame.contains("call 5 · structs_list_entities"), "{frame}");
    assert!(frame.contains("RATE_LIMIT_EXCEEDED"), "{frame}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A call a 2026-07-28 server asked input for, fed as the tap writes it (a version 2
/// log): one call, its round between its request and its answer, shown with what was
/// asked and what the agent answered.
#[test]
fn a_call_in_rounds_shows_what_was_asked_and_answered() {
    let (_rt, mut app) = console();
    let lines = [
        json!({"v": 2, "ts": "2026-11-28T09:00:01.000000Z", "session": "s-a", "seq": 1,
            "type": "request", "call": 1, "tool": "confirm_delete",
            "arguments": {"name": "x"}, "source": "proxy"}),
        json!({"v": 2, "ts": "2026-11-28T09:00:02.000000Z", "session": "s-a", "seq": 2,
            "type": "round", "call": 1, "tool": "confirm_delete", "round": 1,
            "input_requests": {"ask_confirm": {"method": "elicitation/create",
                "params": {"mode": "form", "message": "Delete x?",
                    "requestedSchema": {"type": "object"}}}},
            "input_responses": {"ask_confirm": {"action": "accept",
                "content": {"confirm": true}}}}),
        json!({"v": 2, "ts": "2026-11-28T09:00:03.000000Z", "session": "s-a", "seq": 3,
            "type": "response", "call": 1, "tool": "confirm_delete", "duration_ms": 7.0,
            "result": {"result": "deleted x"}, "source": "proxy"}),
    ]
    .map(line);
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    app.feed_live(&lines);
    let frame = draw(&mut app, 100, 30);
    assert!(
        frame.contains(
            r#"round 1: asked elicitation/create "Delete x?" · answered accept {"confirm":true}"#
        ),
        "{frame}"
    );
    snapshot(
        "live_rounds_100x30",
        "Live: one call that went through a round of input, what the server asked and what the agent answered, then its answer",
        &mut app,
        100,
        30,
    );
}

/// A call sent again with the agent's answers to the server's questions (a round), held:
/// `e` edits the answers, and an answer that does not fit the form the server asked
/// for is refused in the editor, before anything goes.
#[test]
fn a_held_round_edits_the_answers_checked_against_what_the_server_asked() {
    let (_rt, mut app) = console();
    let mut lines = two_sessions();
    let asked = json!({"confirm": {"method": "elicitation/create", "params": {
        "message": "Delete x?", "requestedSchema": {"type": "object",
            "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}}}});
    let given = json!({"confirm": {"action": "accept", "content": {"confirm": true}}});
    lines.push(line(json!({"v": 2, "ts": "2026-11-26T09:00:08.000000Z",
        "session": "s-agent-a", "seq": 8, "type": "request", "call": 4,
        "tool": "confirm_delete", "arguments": {"name": "x"}})));
    lines.push(line(json!({"v": 2, "ts": "2026-11-26T09:00:08.100000Z",
        "session": "s-agent-a", "seq": 9, "type": "round", "call": 4,
        "tool": "confirm_delete", "round": 1, "input_requests": asked,
        "input_responses": given})));
    lines.push(line(
        json!({"v": 2, "type": "held", "session": "s-agent-a", "call": 4,
        "hold": 1, "way": "request", "tool": "confirm_delete",
        "arguments": {"name": "x"}, "rule": 1, "timeout_ms": 60000,
        "round": {"input_requests": asked, "input_responses": given}}),
    ));
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    app.feed_live(&lines);
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains("⏸ held (request)"), "{frame}");
    press(&mut app, KeyCode::Char('e'));
    let frame = draw(&mut app, 100, 30);
    assert!(
        frame.contains("the answers to the server's questions"),
        "{frame}"
    );
    assert!(frame.contains(r#""action": "accept""#), "{frame}");
    // `true` becomes `"yes"`, which the form the server asked for refuses.
    press_n(&mut app, KeyCode::Up, 3);
    press(&mut app, KeyCode::End);
    press_n(&mut app, KeyCode::Backspace, 4);
    type_text(&mut app, "\"yes\"");
    app.handle_key(crossterm::event::KeyEvent::new(
        KeyCode::Char('s'),
        crossterm::event::KeyModifiers::CONTROL,
    ));
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains(r#""confirm": "yes""#), "{frame}");
    assert!(frame.contains("does not fit the form"), "{frame}");
    snapshot(
        "live_held_round_100x30",
        "Live: the answers of a held round being edited; the server's form refuses a string where it asked a yes or no",
        &mut app,
        100,
        30,
    );
}

/// A call the server ran as a task, fed as the tap writes it: one call, its task's
/// statuses between its request and its answer, the answer the task's result.
#[test]
fn a_call_run_as_a_task_shows_its_lifecycle() {
    let (_rt, mut app) = console();
    let lines = [
        json!({"v": 2, "ts": "2026-11-28T09:00:01.000000Z", "session": "s-a", "seq": 1,
            "type": "request", "call": 1, "tool": "slow_square",
            "arguments": {"n": 7}, "source": "proxy"}),
        json!({"v": 2, "ts": "2026-11-28T09:00:01.010000Z", "session": "s-a", "seq": 2,
            "type": "task", "call": 1, "tool": "slow_square",
            "task_id": "aa7f8cf3bcff4ed4acbe6fa252d7d2f3", "status": "working"}),
        json!({"v": 2, "ts": "2026-11-28T09:00:01.320000Z", "session": "s-a", "seq": 3,
            "type": "task", "call": 1, "tool": "slow_square",
            "task_id": "aa7f8cf3bcff4ed4acbe6fa252d7d2f3", "status": "completed"}),
        json!({"v": 2, "ts": "2026-11-28T09:00:01.321000Z", "session": "s-a", "seq": 4,
            "type": "response", "call": 1, "tool": "slow_square", "duration_ms": 321.0,
            "result": {"result": 49}, "source": "proxy"}),
    ]
    .map(line);
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    app.feed_live(&lines);
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains("working"), "{frame}");
    assert!(frame.contains("completed"), "{frame}");
    assert!(frame.contains("49"), "{frame}");
    snapshot(
        "live_task_100x30",
        "Live: one call the server ran as a task, each status the host polled, then the task's result",
        &mut app,
        100,
        30,
    );
}

/// A tap records every request (log version 4): a prompt got and a resource read show
/// in Live beside the tool calls, by method and what they are about, with their params.
#[test]
fn requests_other_than_tool_calls_show_beside_the_calls() {
    let (_rt, mut app) = console();
    let lines = [
        line(
            json!({"v": 4, "ts": "2026-11-26T09:00:01.000000Z", "session": "s-a", "seq": 1,
            "type": "request", "call": 1, "method": "prompts/get", "tool": "prompts/get brief",
            "params": {"name": "brief", "arguments": {"entity_id": "1-1"}}, "source": "proxy"}),
        ),
        line(
            json!({"v": 4, "session": "s-a", "seq": 2, "type": "response", "call": 1,
            "tool": "prompts/get brief", "duration_ms": 2.0,
            "result": {"messages": [{"role": "user", "content": {"type": "text", "text": "Brief 1-1"}}]}}),
        ),
        line(
            json!({"v": 4, "ts": "2026-11-26T09:00:02.000000Z", "session": "s-a", "seq": 3,
            "type": "request", "call": 2, "method": "resources/read",
            "tool": "resources/read structs://docs/nowhere",
            "params": {"uri": "structs://docs/nowhere"}, "source": "proxy"}),
        ),
        line(
            json!({"v": 4, "session": "s-a", "seq": 4, "type": "response", "call": 2,
            "tool": "resources/read structs://docs/nowhere", "duration_ms": 1.0,
            "error": {"error": {"code": -32002, "message": "no such resource"}}}),
        ),
    ];
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    app.feed_live(&lines);
    press(&mut app, KeyCode::Char('8'));
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains("prompts/get brief"), "{frame}");
    assert!(
        frame.contains("resources/read structs://docs/nowhere"),
        "{frame}"
    );
    press(&mut app, KeyCode::Home);
    press(&mut app, KeyCode::Enter);
    let frame = draw(&mut app, 100, 30);
    assert!(
        frame.contains("name: brief"),
        "the params show as the arguments: {frame}"
    );
}

/// A call the server runs as a task shows the task's word on itself while it works
/// (a search's iterations, rate and best), as the tap logged it from the polls.
#[test]
fn a_task_shows_its_progress_while_it_works() {
    let (_rt, mut app) = console();
    let lines = [
        line(
            json!({"v": 4, "ts": "2026-11-26T09:00:01.000000Z", "session": "s-a", "seq": 1,
            "type": "request", "call": 1, "tool": "structs_calculate_proof_of_work",
            "arguments": {"action_type": "struct_build_complete", "entity_id": "5-1"},
            "source": "proxy"}),
        ),
        line(
            json!({"v": 4, "session": "s-a", "seq": 2, "type": "task", "call": 1,
            "tool": "structs_calculate_proof_of_work", "task_id": "t1", "status": "working",
            "status_message": "structs_calculate_proof_of_work is running"}),
        ),
        line(
            json!({"v": 4, "session": "s-a", "seq": 3, "type": "task", "call": 1,
            "tool": "structs_calculate_proof_of_work", "task_id": "t1", "status": "working",
            "status_message": "502312000 of 1500000000 iterations, 108.45 MH/s, best 8 of 10 leading zeros"}),
        ),
    ];
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    app.feed_live(&lines);
    press(&mut app, KeyCode::Char('8'));
    let frame = draw(&mut app, 120, 30);
    assert!(
        frame.contains("working · 502312000 of 1500000000 iterations, 108.45 MH/s, best 8 of"),
        "{frame}"
    );
}

#[test]
fn the_timeline_draws_the_filtered_calls_with_a_held_one_marked() {
    let (_rt, mut app) = console();
    let lines = with_a_held_call();
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    app.feed_live(&lines);
    press(&mut app, KeyCode::Char('v'));
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains("Timeline · "), "{frame}");
    assert!(frame.contains('░'), "the held call: {frame}");
    snapshot(
        "live_timeline_100x30",
        "Live on a timeline: two agents' calls over eight seconds in lanes, the failed ones in the error colour, the fault rule's answer hatched, the running search drawn to the end, the held query lit as the prompt; the held call selected, its detail below",
        &mut app,
        100,
        30,
    );
    // The filter's calls alone.
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, "#1");
    press(&mut app, KeyCode::Enter);
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains("filter #1"), "{frame}");
    // Zoom and pan, then the list again.
    press_n(&mut app, KeyCode::Char('+'), 2);
    let zoomed = draw(&mut app, 100, 30);
    press_n(&mut app, KeyCode::Right, 2);
    assert_ne!(draw(&mut app, 100, 30), zoomed);
    press(&mut app, KeyCode::Char('v'));
    assert!(!draw(&mut app, 100, 30).contains("Timeline · "));
}
