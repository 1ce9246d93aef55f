//! The references of the entity open in Entities: asked for on opening, at depth 1 or
//! 2, filtered by kind, failures marked, partial answers said so.

use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::Color;
use serde_json::json;
use structs_console::EntityId;
use structs_console::references::ReferenceConfig;
use structs_console::source::instrumented::InstrumentedSource;
use structs_console::tui::theme::Role;
use structs_console::tui::{App, Theme};

use crate::support::console::{draw, draw_buffer, press, press_n};
use crate::{console, console_over, hint_bar, row_text, sim, snapshot};

/// The focused area, as the help overlay names its keys' section.
fn focused_area(app: &mut App) -> &'static str {
    press(app, KeyCode::Char('?'));
    let frame = draw(app, 100, 30);
    press(app, KeyCode::Esc);
    ["Kinds", "Entity list", "Entity tree", "References"]
        .into_iter()
        .find(|title| frame.contains(&format!("│{title} ")))
        .unwrap_or_else(|| panic!("no section title in the help overlay:\n{frame}"))
}

#[test]
fn opening_an_entity_asks_for_its_references() {
    let (_rt, mut app) = console();
    assert_eq!(app.references_query(), None, "nothing open yet");
    let before = app.requests_sent();
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.requests_sent(), before + 1, "one call: the references");
    assert_eq!(
        app.references_query(),
        Some(&json!({"id": "1-1", "include_references": true, "reference_depth": 1}))
    );
    // Tab from the entity tree focuses the references; there Down walks the groups
    // and their entities (guild, 0-1, planet, 2-1) and Right opens planet 2-1 from
    // the answer, with no further call.
    press(&mut app, KeyCode::Tab);
    assert_eq!(focused_area(&mut app), "References");
    // The depth and kind keys are in the hint bar and in help.
    let hints = hint_bar(&mut app);
    assert!(
        hints.contains("d  depth") && hints.contains("t  kinds"),
        "{hints}"
    );
    press(&mut app, KeyCode::Char('?'));
    let help = draw(&mut app, 100, 30);
    press(&mut app, KeyCode::Esc);
    for line in [
        "d        References: switch between depth 1 and 2",
        "t        References: kind filter (all, then each kind found)",
        "Esc/←/h  Back to the entity tree",
    ] {
        assert!(help.contains(line), "{line}\n{help}");
    }
    press_n(&mut app, KeyCode::Down, 3);
    press(&mut app, KeyCode::Right);
    assert_eq!(app.requests_sent(), before + 1, "the answer holds 2-1");
    snapshot(
        "references_depth1_100x30",
        "Player 1-1 open, its references focused at depth 1: grouped by kind, each with \
         where it was found; planet 2-1 expanded into its fields from the answer",
        &mut app,
        100,
        30,
    );

    // Tab goes round: references, kinds, list, entity tree, references; Shift-Tab
    // back.
    let mut order = Vec::new();
    for _ in 0..4 {
        press(&mut app, KeyCode::Tab);
        order.push(focused_area(&mut app));
    }
    assert_eq!(order, ["Kinds", "Entity list", "Entity tree", "References"]);
    press(&mut app, KeyCode::BackTab);
    assert_eq!(focused_area(&mut app), "Entity tree");
    // Left at a closed top-level node goes back an area, as in the entity tree.
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Home);
    press(&mut app, KeyCode::Left);
    press(&mut app, KeyCode::Left);
    assert_eq!(focused_area(&mut app), "Entity tree");
}

#[test]
fn d_switches_the_references_to_depth_two_and_back() {
    let (_rt, mut app) = console();
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Tab);
    press_n(&mut app, KeyCode::Down, 3);
    let before = app.requests_sent();
    press(&mut app, KeyCode::Char('d'));
    assert_eq!(app.requests_sent(), before + 1, "d asks again");
    let query = app.references_query().expect("an entity is open").clone();
    assert_eq!(query["reference_depth"], 2, "{query}");
    assert_eq!(query["include_references"], true, "{query}");
    snapshot(
        "references_depth2_100x30",
        "After d: the references of 1-1 at depth 2 add structs 5-2 and 5-1 and reactor \
         3-1, marked depth 2; the selection stays on planet 2-1",
        &mut app,
        100,
        30,
    );

    // The depth is kept for the next entity opened...
    press(&mut app, KeyCode::Esc);
    press(&mut app, KeyCode::Esc);
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Enter);
    let query = app.references_query().expect("1-10 open");
    assert_eq!(query["id"], "1-10");
    assert_eq!(query["reference_depth"], 2);
    // ...and d works from the entity tree too.
    press(&mut app, KeyCode::Char('d'));
    assert_eq!(app.references_query().expect("1-10")["reference_depth"], 1);
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains("references · depth 1"), "{frame}");
}

#[test]
fn an_answer_to_an_older_question_is_dropped() {
    let (_rt, mut app) = console();
    press(&mut app, KeyCode::Enter);
    // Two depth changes before either answer: only the second question's answer,
    // depth 1, may show, whichever arrives last.
    let before = app.requests_sent();
    app.handle_key(KeyEvent::new(KeyCode::Char('d'), KeyModifiers::NONE));
    app.handle_key(KeyEvent::new(KeyCode::Char('d'), KeyModifiers::NONE));
    app.settle();
    assert_eq!(app.requests_sent(), before + 2);
    assert_eq!(app.pending_requests(), 0);
    assert_eq!(app.references_query().expect("open")["reference_depth"], 1);
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains("references · depth 1"), "{frame}");
    assert!(frame.contains("4 resolved, 0 failed"), "{frame}");
    assert!(!frame.contains("(depth 2)"), "{frame}");
}

#[test]
fn t_cycles_the_kind_filter_through_the_kinds_found() {
    let (_rt, mut app) = console();
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Tab);
    let kinds = |app: &App| {
        app.references_query()
            .expect("open")
            .get("reference_types")
            .cloned()
    };
    // Player 1-1 references a guild, a planet, a fleet and a substation directly; the
    // filter offers them in the kinds list's order.
    let mut seen = Vec::new();
    for _ in 0..5 {
        let before = app.requests_sent();
        press(&mut app, KeyCode::Char('t'));
        assert_eq!(app.requests_sent(), before + 1, "t asks again");
        seen.push(kinds(&app));
        if seen.len() == 2 {
            snapshot(
                "references_kind_filter_100x30",
                "After t twice: only the planet references of 1-1 (the second kind found, \
                 after guild)",
                &mut app,
                100,
                30,
            );
        }
    }
    assert_eq!(
        seen,
        [
            Some(json!(["guild"])),
            Some(json!(["planet"])),
            Some(json!(["fleet"])),
            Some(json!(["substation"])),
            None,
        ]
    );
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains("all kinds"), "{frame}");

    // At depth 2 the kinds reached through others are offered too, and filtering to
    // structs shows the structs on 1-1's planet and in its fleet.
    press(&mut app, KeyCode::Char('d'));
    let mut last = None;
    for _ in 0..5 {
        press(&mut app, KeyCode::Char('t'));
        last = kinds(&app);
        if last == Some(json!(["struct"])) {
            break;
        }
    }
    assert_eq!(last, Some(json!(["struct"])));
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains("struct (2)"), "{frame}");
    assert!(frame.contains("5-2"), "{frame}");
    assert!(frame.contains("5-1"), "{frame}");
}

#[test]
fn a_failed_reference_is_marked() {
    let guild = EntityId::parse("0-1").expect("id");
    let source = InstrumentedSource::new(Arc::new(sim())).failing(guild);
    let (_rt, mut app) = console_over(Arc::new(source), ReferenceConfig::default());
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Down);
    // The failed reference is a leaf: Right neither opens it nor asks for anything.
    let sent = app.requests_sent();
    press(&mut app, KeyCode::Right);
    assert_eq!(app.requests_sent(), sent);
    snapshot(
        "references_failed_100x30",
        "Guild 0-1 cannot be fetched: its reference is a red ✗ leaf with the error, its \
         group and the footer count the failure",
        &mut app,
        100,
        30,
    );
    assert!(
        hint_bar(&mut app).contains("Esc  tree") && !hint_bar(&mut app).contains("expand"),
        "a failed reference does not expand"
    );
    // Off the selection, the mark and the error are drawn in the theme's error style.
    press(&mut app, KeyCode::Up);
    let buffer = draw_buffer(&mut app, 100, 30);
    let error = Theme::default().style(Role::Error);
    let (x, y) = (0..buffer.area.height)
        .find_map(|y| {
            let row = row_text(&buffer, y);
            let at = row.find("✗ 0-1 failed")?;
            Some((u16::try_from(row[..at].chars().count()).ok()?, y))
        })
        .expect("the failed reference is on show");
    assert_eq!(buffer[(x, y)].fg, error.fg.unwrap_or(Color::Reset));
    let next = row_text(&buffer, y + 1);
    assert!(
        next.contains("the source failed to answer for 0-1"),
        "the error on the line under it: {next}"
    );
    assert_eq!(buffer[(x + 2, y + 1)].fg, error.fg.unwrap_or(Color::Reset));
}

#[test]
fn references_small() {
    let (_rt, mut app) = console();
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Tab);
    snapshot(
        "references_40x12",
        "Player 1-1's references on a 40x12 terminal: only the focused references are \
         drawn",
        &mut app,
        40,
        12,
    );
}

#[test]
fn a_wide_terminal_shows_every_area() {
    let (_rt, mut app) = console();
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Char('d'));
    snapshot(
        "references_wide_160x30",
        "160 columns: kinds, list, entity tree and its references at depth 2 side by side",
        &mut app,
        160,
        30,
    );
    // Back in the list, a 100-column terminal shows kinds, list and entity tree.
    press(&mut app, KeyCode::Esc);
    let frame = draw(&mut app, 100, 30);
    assert!(
        frame.contains("Kinds") && !frame.contains("references ·"),
        "{frame}"
    );
}

#[test]
fn a_partial_answer_says_what_was_left_out() {
    let limits = ReferenceConfig {
        max_references: 2,
        ..ReferenceConfig::default()
    };
    let (_rt, mut app) = console_over(Arc::new(sim()), limits);
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Tab);
    let frame = draw(&mut app, 100, 30);
    // Player 1-1 references four entities; the server's limit keeps two.
    assert!(
        frame.contains("╰ 2 resolved, 0 failed · 2 left out (limit) ─"),
        "{frame}"
    );
}
