//! The action dialog, the block clock keys and the event log.

use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;
use structs_console::Core;
use structs_console::clock::WallClock;
use structs_console::tui::{App, Tab, Theme};
use tokio::runtime::Runtime;

use crate::support::console::{assert_drawn_whole, draw, press, press_n, runtime, type_text, wall};
use crate::support::sim::make_ready;
use crate::{hint_bar, sim, snapshot};

/// A console on the paused demo world, with its source (to arrange the world) and
/// core (to ask it things directly).
fn action_console(ready: bool) -> (Runtime, App, Core) {
    let source = Arc::new(sim());
    if ready {
        source.with_world_mut(|w| make_ready(w, 1));
    }
    let runtime = runtime();
    let core = structs_console::assembly::build_with_clock(source, WallClock::Fixed(wall()));
    let mut app =
        App::new(core.clone(), Theme::default(), runtime.handle().clone()).with_pow_hashrate(20e6);
    app.settle();
    (runtime, app, core)
}

/// Opens `id` through the id filter (dropping any filter typed before).
fn open_id(app: &mut App, id: &str) {
    press(app, KeyCode::Char('/'));
    press(app, KeyCode::Esc);
    press(app, KeyCode::Char('/'));
    type_text(app, id);
    press(app, KeyCode::Enter);
}

/// The first struct of type `struct_type` in the world.
fn struct_of_type(runtime: &Runtime, core: &Core, struct_type: &str) -> String {
    (1..500)
        .map(|i| format!("5-{i}"))
        .find(|id| {
            runtime
                .block_on(core.call_json("structs_query_struct", json!({"struct_id": id})))
                .is_ok_and(|v| v["struct"]["Struct"]["type"] == struct_type)
        })
        .unwrap_or_else(|| panic!("no struct of type {struct_type}"))
}

#[test]
fn build_here_shows_the_tool_call_before_sending() {
    let (_rt, mut app, _core) = action_console(false);
    open_id(&mut app, "2-1");
    assert!(
        hint_bar(&mut app).contains("a  actions"),
        "{}",
        hint_bar(&mut app)
    );
    let before = app.requests_sent();
    press(&mut app, KeyCode::Char('a'));
    assert_eq!(app.requests_sent(), before, "nothing is sent before Enter");
    snapshot(
        "actions_build_100x30",
        "a on planet 2-1: build here for its owner 1-1, the 22 struct types with their category, the first planet type selected and the exact call Enter sends",
        &mut app,
        100,
        30,
    );
    snapshot(
        "actions_build_40x12",
        "The build dialog on a 40x12 terminal: two types in view and the call, wrapped",
        &mut app,
        40,
        12,
    );
    // A fleet type is built in the owner's fleet: no location.
    press(&mut app, KeyCode::Home);
    let frame = draw(&mut app, 100, 30);
    assert!(
        frame.contains(r#"{"player_id": "1-1", "struct_type": 1}"#),
        "{frame}"
    );
    press(&mut app, KeyCode::Esc);
    assert!(!draw(&mut app, 100, 30).contains("Build here"));
}

#[test]
fn a_refused_build_lists_what_is_missing_and_can_be_edited() {
    let (_rt, mut app, _core) = action_console(false);
    open_id(&mut app, "2-5");
    press(&mut app, KeyCode::Char('a'));
    press(&mut app, KeyCode::Enter);
    assert!(
        app.status_text()
            .is_some_and(|t| t.starts_with("VALIDATION_REQUIREMENTS_NOT_MET")),
        "{:?}",
        app.status_text()
    );
    snapshot(
        "actions_refused_100x30",
        "An Ore Extractor on 2-5 sent: refused, each missing requirement (power, fleet on station, build limit) on its own line",
        &mut app,
        100,
        30,
    );
    assert_eq!(
        app.logged_events().count(),
        0,
        "a refused action changes nothing"
    );
    // Backspace goes back to the types, to choose another.
    press(&mut app, KeyCode::Backspace);
    let frame = draw(&mut app, 100, 30);
    assert!(
        frame.contains("Ore Extractor") && frame.contains("Enter sends"),
        "{frame}"
    );
    press(&mut app, KeyCode::Esc);
    assert!(hint_bar(&mut app).contains("a  actions"));
}

#[test]
fn a_successful_build_shows_the_new_struct_and_its_event() {
    let (_rt, mut app, _core) = action_console(true);
    press(&mut app, KeyCode::Char('e'));
    open_id(&mut app, "2-1");
    press(&mut app, KeyCode::Char('a'));
    press(&mut app, KeyCode::Enter);
    let event = app.logged_events().next().expect("an event").clone();
    assert_eq!(event.category, "struct_block_build_start");
    let id = event.entity.to_string();
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains(&format!("struct        {id}")), "{frame}");
    snapshot(
        "actions_build_done_100x30",
        "The build initiated: the new struct, its transaction, the next step (w starts its PoW job), and the event log listing struct_block_build_start",
        &mut app,
        100,
        30,
    );
    // Closed, the refreshed references of 2-1 list the new struct.
    press(&mut app, KeyCode::Esc);
    let frame = draw(&mut app, 160, 30);
    assert!(frame.contains(&format!("{id}  Ore Extractor")), "{frame}");
}

#[test]
fn an_action_closed_before_its_answer_still_refreshes() {
    let (_rt, mut app, _core) = action_console(true);
    open_id(&mut app, "2-1");
    press(&mut app, KeyCode::Char('a'));
    // Enter sends, Esc closes before the answer is applied.
    app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    app.handle_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
    app.settle();
    let id = app
        .logged_events()
        .next()
        .expect("an event")
        .entity
        .to_string();
    assert!(
        app.status_text()
            .is_some_and(|t| t.contains(&format!("as {id}"))),
        "{:?}",
        app.status_text()
    );
    let frame = draw(&mut app, 160, 30);
    assert!(!frame.contains("Build here"), "{frame}");
    assert!(frame.contains(&format!("{id}  Ore Extractor")), "{frame}");
}

#[test]
fn a_build_completes_with_the_nonce_its_pow_job_found() {
    let (runtime, mut app, core) = action_console(true);
    open_id(&mut app, "2-1");
    press(&mut app, KeyCode::Char('a'));
    press(&mut app, KeyCode::Enter);
    let id = app
        .logged_events()
        .next()
        .expect("an event")
        .entity
        .to_string();
    // w in the answer starts the build's proof-of-work job.
    press(&mut app, KeyCode::Char('w'));
    assert_eq!(app.tab(), Tab::Pow);
    assert!(draw(&mut app, 110, 30).contains(&format!("1 {id} build")));
    // Much later the difficulty is low; the job runs and finds a proof.
    runtime
        .block_on(core.call(
            "structs_clock_control",
            json!({"action": "step", "blocks": 40_000}),
        ))
        .unwrap();
    app.tick(std::time::Instant::now());
    app.settle();
    assert!(draw(&mut app, 110, 30).contains("found"));
    press(&mut app, KeyCode::Char('1'));
    open_id(&mut app, &id);
    press(&mut app, KeyCode::Char('a'));
    // A struct being built: complete build first, then attack this.
    let frame = draw(&mut app, 100, 30);
    assert!(
        frame.contains("complete build") && frame.contains("attack this"),
        "{frame}"
    );
    press(&mut app, KeyCode::Enter);
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains("found by PoW job 1"), "{frame}");
    assert!(frame.contains(r#""nonce": ""#), "{frame}");
    press(&mut app, KeyCode::Enter);
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains("✓ completed"), "{frame}");
    assert!(
        app.logged_events()
            .any(|e| e.entity.to_string() == id && e.summary.contains("finished building")),
        "{:?}",
        app.logged_events().collect::<Vec<_>>()
    );
}

#[test]
fn mine_reports_the_cycle_and_offers_its_pow_job() {
    let (runtime, mut app, core) = action_console(false);
    let extractor = struct_of_type(&runtime, &core, "14");
    open_id(&mut app, &extractor);
    press(&mut app, KeyCode::Char('a'));
    let frame = draw(&mut app, 100, 30);
    assert!(
        frame.contains("mine") && frame.contains("attack this"),
        "{frame}"
    );
    // mine is first for a built extractor.
    press(&mut app, KeyCode::Enter);
    let frame = draw(&mut app, 100, 30);
    assert!(
        frame.contains(&format!(r#"{{"extractor_id": "{extractor}"}}"#)),
        "{frame}"
    );
    press(&mut app, KeyCode::Enter);
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains("structs_action_mine_resources"), "{frame}");
    // The demo world's extractors are mining: the cycle needs a nonce.
    assert!(frame.contains("submit a nonce"), "{frame}");
    snapshot(
        "actions_mine_100x30",
        "Mine without a nonce: the extractor has been mining; the cycle's difficulty, the next step, and w for its PoW job",
        &mut app,
        100,
        30,
    );
    press(&mut app, KeyCode::Char('w'));
    assert_eq!(app.tab(), Tab::Pow);
    let frame = draw(&mut app, 110, 30);
    assert!(frame.contains(&format!("1 {extractor} mine")), "{frame}");
}

#[test]
fn attack_this_takes_the_attacker_and_the_weapon() {
    let (_rt, mut app, _core) = action_console(false);
    open_id(&mut app, "5-2");
    press(&mut app, KeyCode::Char('a'));
    press(&mut app, KeyCode::End);
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Enter);
    assert_eq!(
        app.status_text(),
        Some("type the attacking struct's id first, e.g. 5-12")
    );
    type_text(&mut app, "5-x");
    assert_eq!(
        app.status_text(),
        Some("the attacker is a struct id: digits and a dash, e.g. 5-12")
    );
    type_text(&mut app, "1");
    press(&mut app, KeyCode::Tab);
    // q, e and digits are typed, not run as the global keys.
    assert!(!app.should_quit());
    snapshot(
        "actions_attack_100x30",
        "Attack this on 5-2: the attacker typed, the secondary weapon chosen, the call shown",
        &mut app,
        100,
        30,
    );
    press(&mut app, KeyCode::Enter);
    let frame = draw(&mut app, 100, 30);
    assert!(
        frame.contains(r#"structs_action_attack"#)
            && (frame.contains("✓ ") || frame.contains("✗ ")),
        "{frame}"
    );
}

#[test]
fn kinds_without_actions_say_so() {
    let (_rt, mut app, _core) = action_console(false);
    open_id(&mut app, "0-1");
    assert!(!hint_bar(&mut app).contains("actions"));
    press(&mut app, KeyCode::Char('a'));
    assert!(!draw(&mut app, 100, 30).contains("Actions ·"));
}

#[test]
fn clock_keys_step_by_one_ten_and_a_hundred() {
    let (_rt, mut app, _core) = action_console(false);
    press(&mut app, KeyCode::Char('+'));
    press(&mut app, KeyCode::Char('>'));
    snapshot(
        "clock_stepped_100x30",
        "+ then > : the paused clock stepped 1 and 10 blocks; the header shows block 120011",
        &mut app,
        100,
        30,
    );
    press(&mut app, KeyCode::Char(']'));
    assert_eq!(app.status_text(), Some("block 120111, clock paused"));
    assert!(draw(&mut app, 100, 30).contains("block 120111 ⏸ paused"));
}

#[test]
fn the_event_log_shows_and_hides() {
    let (_rt, mut app, _core) = action_console(false);
    assert!(!draw(&mut app, 100, 30).contains("Events ·"));
    press(&mut app, KeyCode::Char('e'));
    let frame = draw(&mut app, 100, 30);
    assert!(
        frame.contains("Events · 0") && frame.contains("No events yet"),
        "{frame}"
    );
    press(&mut app, KeyCode::Char('e'));
    assert!(!draw(&mut app, 100, 30).contains("Events ·"));
}

#[test]
fn the_action_dialog_renders_at_any_size() {
    let (_rt, mut app, _core) = action_console(true);
    press(&mut app, KeyCode::Char('e'));
    let sizes = [
        (0, 0),
        (1, 1),
        (20, 5),
        (2, 2),
        (5, 3),
        (40, 12),
        (59, 20),
        (61, 4),
        (100, 1),
        (100, 8),
        (100, 30),
        (300, 80),
    ];
    let check = |app: &mut App, state: &str| {
        for (width, height) in sizes {
            assert_drawn_whole(app, width, height, state);
        }
    };
    open_id(&mut app, "2-1");
    press(&mut app, KeyCode::Char('a'));
    check(&mut app, "types");
    press(&mut app, KeyCode::Enter);
    check(&mut app, "result");
    press_n(&mut app, KeyCode::Down, 40);
    check(&mut app, "result scrolled");
    press(&mut app, KeyCode::Esc);
    open_id(&mut app, "5-2");
    press(&mut app, KeyCode::Char('a'));
    check(&mut app, "menu");
    press(&mut app, KeyCode::Enter);
    type_text(&mut app, "5-1234567890123456789012345678901234567");
    check(&mut app, "form");
}
