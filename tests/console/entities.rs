//! The Entities tab: the kinds, the list with its pages and id filter, and the entity
//! tree that fetches the ids it is opened on.

use crossterm::event::KeyCode;
use structs_console::EntityId;
use structs_console::tui::{App, Tab};

use crate::support::console::{draw, press, press_n, type_text};
use crate::{console, open_player_and_planet, plan_file, snapshot};

#[test]
fn startup_lists_the_first_kind() {
    let (_rt, mut app) = console();
    assert_eq!(app.tab(), Tab::Entities);
    let ids = app.listed_ids();
    assert_eq!(ids.len(), 20, "a full first page");
    assert_eq!(ids[0].to_string(), "1-1");
    snapshot(
        "startup_100x30",
        "Startup: players listed (page 1 of 2), nothing open yet",
        &mut app,
        100,
        30,
    );
}

#[test]
fn startup_small() {
    let (_rt, mut app) = console();
    snapshot(
        "startup_40x12",
        "Startup on a 40x12 terminal: only the focused area (the list) is drawn",
        &mut app,
        40,
        12,
    );
}

#[test]
fn expanding_an_id_field_fetches_that_entity() {
    let (_rt, mut app) = console();
    let before = app.requests_sent();
    open_player_and_planet(&mut app);
    assert_eq!(
        app.requests_sent(),
        before + 2,
        "opening from the list asks only for the references, whose answer holds the whole \
         entity; expanding planetId fetches"
    );
    snapshot(
        "tree_fetched_link_100x30",
        "Player 1-1 open, planetId expanded into planet 2-1 (fetched), whose owner 1-1 is \
         marked as already open above",
        &mut app,
        100,
        30,
    );

    // Collapsing and expanding again uses the fetched entity.
    press(&mut app, KeyCode::Left);
    press(&mut app, KeyCode::Right);
    assert_eq!(app.requests_sent(), before + 2, "the entity is cached");
}

#[test]
fn an_entity_opened_from_the_list_shows_all_of_it() {
    // A list page holds the chain's core record; the tree shows the whole entity, as
    // the same player opened by its id does.
    let (_rt, mut app) = console();
    press(&mut app, KeyCode::Enter);
    let from_list = draw(&mut app, 100, 60);
    for part in ["gridAttributes", "playerInventory"] {
        assert!(from_list.contains(part), "{part} missing:\n{from_list}");
    }
}

#[test]
fn a_cyclic_id_is_a_marked_leaf_and_is_never_fetched() {
    let (_rt, mut app) = console();
    open_player_and_planet(&mut app);
    // Right on the open planetId steps into its first field, id; owner is three down:
    // id, maxOre, creator, owner (the chain's field order).
    press(&mut app, KeyCode::Right);
    press_n(&mut app, KeyCode::Down, 3);
    let sent = app.requests_sent();
    press(&mut app, KeyCode::Right);
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Char('l'));
    assert_eq!(
        app.requests_sent(),
        sent,
        "expanding a cycle must not fetch"
    );
    snapshot(
        "tree_cycle_selected_100x30",
        "The selection on planet 2-1's owner, 1-1: the root entity, so a marked leaf that \
         Right and Enter leave closed",
        &mut app,
        100,
        30,
    );
}

#[test]
fn left_walks_back_out_of_the_tree_and_the_list() {
    let (_rt, mut app) = console();
    let hints = |app: &mut App| {
        let frame = draw(app, 100, 30);
        frame.lines().last().unwrap_or_default().to_string()
    };
    press(&mut app, KeyCode::Enter);
    assert!(hints(&mut app).contains("Esc  list"), "the tree has focus");
    // On a top-level field with nothing to collapse, Left goes back to the list...
    press(&mut app, KeyCode::Left);
    assert!(
        hints(&mut app).contains("Enter  open"),
        "the list has focus"
    );
    // ...and from the list to the kinds, where Down picks the next kind.
    press(&mut app, KeyCode::Char('h'));
    press(&mut app, KeyCode::Down);
    assert_eq!(app.listed_ids()[0].to_string(), "0-1", "guilds listed");
}

#[test]
fn tree_small() {
    let (_rt, mut app) = console();
    open_player_and_planet(&mut app);
    snapshot(
        "tree_40x12",
        "Player 1-1 open on a 40x12 terminal: only the tree is drawn, scrolled to the \
         selected planetId",
        &mut app,
        40,
        12,
    );
}

#[test]
fn paging_forward_then_back_returns_the_same_page() {
    let (_rt, mut app) = console();
    let first = app.listed_ids();
    press(&mut app, KeyCode::Char('n'));
    let second = app.listed_ids();
    assert_eq!(second.len(), 4, "24 players: 20 then 4");
    // The chain's order of ids: 1-1, 1-10 … 1-19, 1-2, 1-20 … 1-24, 1-3 … 1-9.
    assert_eq!(second[0].to_string(), "1-6");
    press(&mut app, KeyCode::Char('n'));
    assert_eq!(app.listed_ids(), second, "there is no third page");
    press(&mut app, KeyCode::Char('p'));
    assert_eq!(app.listed_ids(), first);
    assert_eq!(app.listed_ids()[0], first[0]);
}

#[test]
fn filter_lists_only_matching_ids() {
    let (_rt, mut app) = console();
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, "1-1");
    let ids: Vec<String> = app.listed_ids().iter().map(EntityId::to_string).collect();
    assert_eq!(ids.len(), 11, "1-1 and 1-10 to 1-19: {ids:?}");
    assert!(ids.iter().all(|id| id.starts_with("1-1")), "{ids:?}");
    snapshot(
        "filter_prompt_100x30",
        "The id filter prompt with 1-1 typed: the list follows as typed, and Enter would \
         open 1-1",
        &mut app,
        100,
        30,
    );

    // Esc clears the filter and lists the whole first page again.
    press(&mut app, KeyCode::Esc);
    assert!(app.listed_ids().len() >= 20, "the page fills the list");
}

#[test]
fn filter_with_a_kind_code_switches_kind_and_enter_opens_the_id() {
    let (_rt, mut app) = console();
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, "9-");
    let ids = app.listed_ids();
    assert!(!ids.is_empty());
    assert!(
        ids.iter().all(|id| id.to_string().starts_with("9-")),
        "{ids:?}"
    );
    type_text(&mut app, "3");
    let before = app.requests_sent();
    press(&mut app, KeyCode::Enter);
    assert_eq!(
        app.requests_sent(),
        before + 2,
        "Enter on a whole id fetches it and its references"
    );
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains("fleet 9-3"), "{frame}");
}

#[test]
fn a_missing_entity_shows_the_tool_error() {
    let (_rt, mut app) = console();
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, "1-999");
    assert!(app.listed_ids().is_empty());
    press(&mut app, KeyCode::Enter);
    let status = app.status_text().unwrap_or_default().to_string();
    assert!(status.starts_with("RESOURCE_NOT_FOUND"), "{status}");
    snapshot(
        "not_found_100x30",
        "Enter on 1-999 in the filter: the fetch fails, the tree and the status line say why",
        &mut app,
        100,
        30,
    );
}

/// `/` and `o` start empty: typing never lands after the last filter or path.
#[test]
fn the_filter_and_the_open_prompt_start_empty() {
    let (_rt, mut app) = console();
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, "2-1");
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.references_query().expect("2-1 open")["id"], "2-1");
    press(&mut app, KeyCode::Esc);
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, "2-12");
    press(&mut app, KeyCode::Enter);
    assert_eq!(
        app.references_query().expect("2-12 open")["id"],
        "2-12",
        "the second filter is what was typed, not 2-12-12"
    );

    // Plans: the path prompt starts empty; Enter on it opens the last file again.
    let plan = plan_file(
        "prompt.json",
        r#"{"steps": [{"tool": "structs_query_block_height"}]}"#,
    );
    press(&mut app, KeyCode::Char('3'));
    press(&mut app, KeyCode::Char('o'));
    type_text(&mut app, &plan);
    press(&mut app, KeyCode::Enter);
    assert!(
        app.status_text().is_none_or(|s| !s.contains("cannot")),
        "{:?}",
        app.status_text()
    );
    press(&mut app, KeyCode::Char('o'));
    let frame = draw(&mut app, 160, 30);
    assert!(frame.contains(&format!("opens {plan} again")), "{frame}");
    type_text(&mut app, &plan);
    press(&mut app, KeyCode::Enter);
    let status = app.status_text().unwrap_or_default().to_string();
    assert!(!status.contains(&format!("{plan}{plan}")), "{status}");
    assert!(!status.contains("cannot"), "{status}");
}

/// A list fills the height it is drawn at: taller than its page, it asks for a larger
/// one. Read whole, the players read by number (the node lists ids as text: 1-1, 1-10,
/// 1-2); in pages, they keep the node's order, the order its pages follow.
#[test]
fn the_list_fills_its_height_and_reads_by_number_when_whole() {
    let (_rt, mut app) = console();
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains("page 1/2"), "{frame}");
    let at = |frame: &str, id: &str| frame.find(&format!(" {id} ")).unwrap_or(usize::MAX);
    assert!(
        at(&frame, "1-10") < at(&frame, "1-2"),
        "in pages: the node's order\n{frame}"
    );
    app.update();
    app.settle();
    let frame = draw(&mut app, 100, 40);
    assert!(!frame.contains("page 1/2"), "{frame}");
    assert!(frame.contains("players · 24 total"), "{frame}");
    let order: Vec<usize> = (1..=24).map(|n| at(&frame, &format!("1-{n}"))).collect();
    assert!(order.iter().all(|p| *p != usize::MAX), "{frame}");
    assert!(order.windows(2).all(|w| w[0] < w[1]), "by number\n{frame}");
}

/// The structs list names each by its type and says its state, read from the struct
/// itself (the chain's list carries no attributes): being built, online and mining,
/// offline, destroyed.
#[test]
fn structs_are_listed_by_type_and_state() {
    let (_rt, mut app) = console();
    press(&mut app, KeyCode::Char('h'));
    press_n(&mut app, KeyCode::Down, 4);
    press(&mut app, KeyCode::Enter);
    app.settle();
    let frame = draw(&mut app, 160, 40);
    assert!(frame.contains("structs · "), "{frame}");
    assert!(frame.contains(" · being built"), "{frame}");
    assert!(
        frame.contains(" · online, mining") || frame.contains(" · online"),
        "{frame}"
    );
    snapshot(
        "structs_states_160x40",
        "The structs list: each struct by its type's name, its owner and ambit, and its state read from the struct",
        &mut app,
        160,
        40,
    );
}
