//! The Server tab: the tools listed, a call's form built from a tool's schema, and its
//! answer.

use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use structs_console::clock::WallClock;
use structs_console::tui::{App, Tab};

use crate::support::console::{draw, draw_buffer, mask_times, press, press_n, type_text, wall};
use crate::{console, sim};

/// A snapshot with the time a call took (`· 3 ms`) hidden: it differs run to run.
fn snapshot(name: &str, description: &str, app: &mut App, width: u16, height: u16) {
    let frame: Vec<String> = draw(app, width, height).lines().map(mask_times).collect();
    insta::with_settings!({
        snapshot_path => concat!(env!("CARGO_MANIFEST_DIR"), "/snapshots"),
        prepend_module_to_snapshot => false,
        omit_expression => true,
        description => description,
    }, {
        insta::assert_snapshot!(name, frame.join("\n"));
    });
}

/// Selects `tool` in the Server tab's list (the tools are listed by name).
fn select_server_tool(app: &mut App, tool: &str) {
    let core =
        structs_console::assembly::build_with_clock(Arc::new(sim()), WallClock::Fixed(wall()));
    let at = core
        .tool_names()
        .position(|n| n == tool)
        .expect("a registered tool");
    press(app, KeyCode::Home);
    press_n(app, KeyCode::Down, at);
}

#[test]
fn server_tab_lists_the_tools_and_calls_one_from_its_schema() {
    let (_rt, mut app) = console();
    press(&mut app, KeyCode::Char('7'));
    assert_eq!(app.tab(), Tab::Server);
    select_server_tool(&mut app, "structs_query_entity");
    snapshot(
        "server_tool_120x34",
        "The Server tab on the embedded core: the tools, and the selected tool's schema as arguments",
        &mut app,
        120,
        34,
    );

    // The form takes every character, even the console's global keys.
    press(&mut app, KeyCode::Enter);
    type_text(&mut app, "1-1q7");
    assert_eq!(app.tab(), Tab::Server);
    assert!(!app.should_quit());
    press_n(&mut app, KeyCode::Backspace, 2);
    // The required id first, then the others by name: reference_depth, an integer,
    // is the seventh.
    press_n(&mut app, KeyCode::Tab, 6);
    type_text(&mut app, "deep");
    let frame = draw(&mut app, 120, 34);
    assert!(frame.contains("✗ not a whole number"), "{frame}");
    press(&mut app, KeyCode::Enter);
    assert_eq!(
        app.status_text(),
        Some("reference_depth: not a whole number"),
        "a bad field is not sent"
    );
    let sent = app.requests_sent();
    press_n(&mut app, KeyCode::Backspace, 4);
    type_text(&mut app, "1");
    snapshot(
        "server_form_120x34",
        "A call's form built from structs_query_entity's schema: typed fields, the arguments it makes, the field's description",
        &mut app,
        120,
        34,
    );
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.requests_sent(), sent + 1);
    snapshot(
        "server_result_120x34",
        "The answer to the form's call, pretty-printed",
        &mut app,
        120,
        34,
    );
    // Back to the form: the arguments are kept.
    press(&mut app, KeyCode::Char('e'));
    let frame = draw(&mut app, 120, 34);
    assert!(frame.contains(r#"arguments {"id":"1-1""#), "{frame}");
    // Esc goes back to the tools; with no server attached the only other section is
    // the history of calls.
    press(&mut app, KeyCode::Esc);
    let frame = draw(&mut app, 120, 34);
    assert!(frame.contains("embedded core"), "{frame}");
    assert!(frame.contains(" Tools   History 1 "), "{frame}");
    assert!(!frame.contains("Resources"), "{frame}");
    press(&mut app, KeyCode::Tab);
    let frame = draw(&mut app, 120, 34);
    assert!(frame.contains("structs_query_entity"), "{frame}");
    assert!(frame.contains("Calls 1"), "{frame}");
}

/// `include_references` takes `false`, `true`, `"all"` or `"primary"`: `all` typed bare
/// is the string, as the Handles tab's hint writes the call, and is sent.
#[test]
fn a_field_of_several_kinds_takes_a_bare_word_its_schema_allows() {
    let (_rt, mut app) = console();
    press(&mut app, KeyCode::Char('7'));
    select_server_tool(&mut app, "structs_query_entity");
    press(&mut app, KeyCode::Enter);
    type_text(&mut app, "1-1");
    // id, fields, then include_references.
    press_n(&mut app, KeyCode::Tab, 2);
    type_text(&mut app, "all");
    let frame = draw(&mut app, 120, 34);
    assert!(
        frame.contains(r#"arguments {"id":"1-1","include_references":"all"}"#),
        "{frame}"
    );
    assert!(frame.contains("[false|true|all|primary]"), "{frame}");
    let sent = app.requests_sent();
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.requests_sent(), sent + 1, "{:?}", app.status_text());
    app.settle();
    let frame = draw(&mut app, 120, 34);
    assert!(frame.contains("structs_query_entity · result"), "{frame}");
    assert_eq!(app.status_text(), Some("structs_query_entity answered"));
}

/// A call from the Server tab with references at summary verbosity answers in the lean
/// shape: each reference is its kind and its record, with no bookkeeping beside it.
#[test]
fn a_lean_reference_answer_in_the_server_tab() {
    let (_rt, mut app) = console();
    press(&mut app, KeyCode::Char('7'));
    select_server_tool(&mut app, "structs_query_player");
    press(&mut app, KeyCode::Enter);
    type_text(&mut app, "1-2");
    // After the id, the fields by name: fields, include_references, ... verbosity.
    press_n(&mut app, KeyCode::Tab, 2);
    // Its schema allows true as well as strings: a word it does not allow is refused
    // on its own row, which stays one row; one it allows is that string.
    type_text(&mut app, "some");
    let frame = draw(&mut app, 120, 34);
    let rows: Vec<&str> = frame.lines().collect();
    let at = rows
        .iter()
        .position(|r| r.contains("include_references"))
        .expect("the field's row");
    assert!(rows[at].contains("✗ one of false, true"), "{frame}");
    assert!(rows[at + 1].contains("max_references"), "{frame}");
    app.handle_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    type_text(&mut app, "primary");
    press_n(&mut app, KeyCode::Tab, 8);
    type_text(&mut app, "summary");
    let frame = draw(&mut app, 120, 34);
    assert!(
        frame.contains(r#""include_references":"primary""#)
            && frame.contains(r#""verbosity":"summary"#),
        "{frame}"
    );
    press(&mut app, KeyCode::Enter);
    app.settle();
    let frame = draw(&mut app, 120, 60);
    assert!(frame.contains(r#""reference_type": "guild""#), "{frame}");
    assert!(!frame.contains("referenced_from"), "{frame}");
    assert!(!frame.contains("references_summary"), "{frame}");
    snapshot(
        "server_lean_references_120x60",
        "structs_query_player with primary references at summary verbosity: each reference is its kind and its record, no bookkeeping",
        &mut app,
        120,
        60,
    );
}

#[test]
fn escape_sequences_in_answers_are_drawn_inert() {
    // An answer carrying terminal control sequences (a title change, a colour, a bell,
    // a cursor move) must reach the screen as inert text: no cell holds an escape.
    let (_rt, mut app) = console();
    press(&mut app, KeyCode::Char('7'));
    select_server_tool(&mut app, "structs_validate_entity_id");
    press(&mut app, KeyCode::Enter);
    type_text(&mut app, "\u{1b}]0;pwned\u{7}\u{1b}[31m\u{1b}[2J1-\u{9b}1");
    // The form shows the typed text as it is; the answer echoes it back.
    let form = draw_buffer(&mut app, 120, 34);
    press(&mut app, KeyCode::Enter);
    let answer = draw_buffer(&mut app, 120, 34);
    for buffer in [form, answer] {
        let text: String = buffer.content().iter().map(|c| c.symbol()).collect();
        assert!(text.contains("structs_validate_entity_id"), "{text}");
        assert!(text.contains("pwned"), "the text itself is shown: {text}");
        for c in text.chars() {
            assert!(
                !c.is_control(),
                "a control character reached the screen: {c:?}"
            );
        }
    }
}
