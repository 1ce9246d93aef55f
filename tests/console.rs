//! The console, driven by keys on the demo world and drawn into ratatui's
//! `TestBackend`. Frames are insta snapshots in the top-level `snapshots/` folder; a
//! changed frame fails the test until its snapshot is reviewed and updated.

use std::sync::Arc;

use chrono::{TimeZone, Utc};
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Color;
use structs_console::core::WallClock;
use structs_console::source::sim::{BlockClock, SimSource, WorldConfig};
use structs_console::tui::{App, Tab, Theme};
use structs_console::{Core, EntityId};
use tokio::runtime::Runtime;

/// A console on the demo world with a paused clock and a fixed wall clock, its first
/// page already listed. The runtime must outlive the app.
fn console() -> (Runtime, App) {
    console_with(Theme::default())
}

fn console_with(theme: Theme) -> (Runtime, App) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let source = SimSource::new(
        WorldConfig::demo(),
        BlockClock::paused(WorldConfig::DEFAULT_HEIGHT),
    );
    let wall = Utc
        .with_ymd_and_hms(2026, 11, 21, 10, 0, 0)
        .single()
        .expect("valid instant");
    let core = Core::with_clock(Arc::new(source), WallClock::Fixed(wall));
    let mut app = App::new(core, theme, runtime.handle().clone());
    app.settle();
    (runtime, app)
}

/// Presses a key and waits for the tool calls it started.
fn press(app: &mut App, code: KeyCode) {
    app.handle_key(KeyEvent::new(code, KeyModifiers::NONE));
    app.settle();
}

fn press_n(app: &mut App, code: KeyCode, times: usize) {
    for _ in 0..times {
        press(app, code);
    }
}

fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        press(app, KeyCode::Char(c));
    }
}

/// The frame at `width`x`height`.
fn draw_buffer(app: &mut App, width: u16, height: u16) -> Buffer {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test terminal");
    terminal
        .draw(|frame| app.render(frame))
        .expect("drawing into a TestBackend");
    terminal.backend().buffer().clone()
}

/// The frame at `width`x`height`, as text (`TestBackend`'s display: one quoted line
/// per row). Width must not be 0: ratatui's text view cannot show such a buffer.
fn draw(app: &mut App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test terminal");
    terminal
        .draw(|frame| app.render(frame))
        .expect("drawing into a TestBackend");
    terminal.backend().to_string()
}

/// Compares the frame with `snapshots/{name}.snap`.
fn snapshot(name: &str, description: &str, app: &mut App, width: u16, height: u16) {
    let frame = draw(app, width, height);
    insta::with_settings!({
        snapshot_path => concat!(env!("CARGO_MANIFEST_DIR"), "/snapshots"),
        prepend_module_to_snapshot => false,
        omit_expression => true,
        description => description,
    }, {
        insta::assert_snapshot!(name, frame);
    });
}

/// Opens player 1-1 from the list (the console starts on the players' first page with
/// the list focused) and expands its `planetId` field, fetching planet 2-1.
fn open_player_and_planet(app: &mut App) {
    press(app, KeyCode::Enter);
    // id, index, guildId, substationId, creator, primaryAddress, planetId: the core
    // object's fields in the chain's order.
    press_n(app, KeyCode::Down, 6);
    press(app, KeyCode::Right);
}

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
        before + 1,
        "opening from the list needs no call; expanding planetId needs one"
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
    assert_eq!(app.requests_sent(), before + 1, "the entity is cached");
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
fn themes_style_the_frame() {
    let (_rt, mut dark) = console();
    let (_rt_light, mut light) = console_with(Theme::load("light").expect("light"));
    let dark_frame = draw_buffer(&mut dark, 100, 30);
    let light_frame = draw_buffer(&mut light, 100, 30);
    assert_eq!(dark_frame[(1, 0)].bg, Color::Indexed(236), "dark header");
    assert_eq!(light_frame[(1, 0)].bg, Color::Indexed(252), "light header");
    assert_eq!(
        light_frame[(50, 15)].bg,
        Color::Indexed(255),
        "light background"
    );
    assert_eq!(
        dark_frame[(50, 15)].bg,
        Color::Reset,
        "dark keeps the terminal's"
    );
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
    assert_eq!(second[0].to_string(), "1-21");
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
    assert_eq!(app.listed_ids().len(), 20);
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
        before + 1,
        "Enter on a whole id fetches it"
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

#[test]
fn later_tabs_say_they_are_not_available_yet() {
    let (_rt, mut app) = console();
    press(&mut app, KeyCode::Char('2'));
    assert_eq!(app.tab(), Tab::Handles);
    snapshot(
        "handles_placeholder_100x30",
        "The Handles tab, not in this build yet",
        &mut app,
        100,
        30,
    );
    press(&mut app, KeyCode::Char('1'));
    assert_eq!(app.tab(), Tab::Entities);
}

#[test]
fn help_lists_the_keys_of_the_focused_area() {
    let (_rt, mut app) = console();
    press(&mut app, KeyCode::Char('?'));
    snapshot(
        "help_list_100x30",
        "The help overlay over the focused entity list: its keys and the global keys",
        &mut app,
        100,
        30,
    );
    press(&mut app, KeyCode::Esc);
    assert!(!draw(&mut app, 100, 30).contains("Everywhere"));
}

#[test]
fn quit_keys_and_key_releases() {
    let (_rt, mut app) = console();
    // A release is not a press.
    let mut release = KeyEvent::new(KeyCode::Char('q'), KeyModifiers::NONE);
    release.kind = KeyEventKind::Release;
    app.handle_key(release);
    assert!(!app.should_quit());
    // In the filter prompt q is text, Ctrl-C still quits.
    press(&mut app, KeyCode::Char('/'));
    press(&mut app, KeyCode::Char('q'));
    assert!(!app.should_quit());
    app.handle_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
    assert!(app.should_quit());

    let (_rt, mut app) = console();
    press(&mut app, KeyCode::Char('q'));
    assert!(app.should_quit());
}

#[test]
fn any_size_renders_without_panicking() {
    let (_rt, mut app) = console();
    let sizes = [
        (0, 0),
        (1, 1),
        (20, 5),
        (0, 30),
        (100, 0),
        (2, 2),
        (5, 3),
        (40, 12),
        (59, 20),
        (60, 20),
        (61, 4),
        (100, 1),
        (100, 30),
        (300, 80),
    ];
    let check = |app: &mut App, state: &str| {
        for (width, height) in sizes {
            let buffer = draw_buffer(app, width, height);
            assert_eq!(
                buffer.area,
                Rect::new(0, 0, width, height),
                "{state} at {width}x{height}"
            );
        }
    };
    check(&mut app, "startup");
    open_player_and_planet(&mut app);
    check(&mut app, "tree open");
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, "2-1");
    check(&mut app, "filter prompt");
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Char('?'));
    check(&mut app, "help");
    press(&mut app, KeyCode::Esc);
    press(&mut app, KeyCode::Char('4'));
    check(&mut app, "placeholder");
}

#[test]
fn builtin_themes_load_by_name() {
    for name in Theme::BUILTIN_NAMES {
        let theme = Theme::load(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(theme.name(), name);
    }
    assert_eq!(Theme::default(), Theme::load("dark").expect("dark"));
    assert_ne!(
        Theme::load("dark").expect("dark"),
        Theme::load("light").expect("light")
    );
}

#[test]
fn unknown_theme_names_list_the_builtins() {
    let e = Theme::load("solarized").expect_err("not a built-in");
    assert!(e.contains("\"solarized\""), "{e}");
    for name in Theme::BUILTIN_NAMES {
        assert!(e.contains(name), "{e}");
    }
}

#[test]
fn theme_files_load_and_bad_ones_say_why() {
    let dir = std::env::temp_dir().join(format!("structs-console-themes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");

    let good = dir.join("ocean.toml");
    std::fs::write(
        &good,
        "base = \"light\"\n[styles]\nid_link = { fg = \"#0077cc\", modifiers = [\"underlined\"] }\n",
    )
    .expect("write theme");
    let theme = Theme::load(good.to_str().expect("utf-8 path")).expect("valid theme file");
    assert_eq!(theme.name(), "ocean");

    let bad_toml = dir.join("broken.toml");
    std::fs::write(&bad_toml, "[styles\nheader = {").expect("write theme");
    let e = Theme::load(bad_toml.to_str().expect("utf-8 path")).expect_err("bad TOML");
    assert!(e.contains("broken.toml"), "{e}");

    let bad_colour = dir.join("colour.toml");
    std::fs::write(&bad_colour, "[styles]\nerror = { fg = \"reddish\" }\n").expect("write");
    let e = Theme::load(bad_colour.to_str().expect("utf-8 path")).expect_err("bad colour");
    assert!(
        e.contains("styles.error.fg") && e.contains("reddish"),
        "{e}"
    );

    let missing = dir.join("missing.toml");
    let e = Theme::load(missing.to_str().expect("utf-8 path")).expect_err("no such file");
    assert!(e.contains("cannot read theme file"), "{e}");

    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn clock_keys_step_and_toggle_the_sim_clock() {
    let (_rt, mut app) = console();
    press(&mut app, KeyCode::Char('+'));
    let screen = draw(&mut app, 100, 30);
    assert!(screen.contains("block 120001"), "{screen}");
    assert_eq!(app.status_text(), Some("block 120001, clock paused"));
    press(&mut app, KeyCode::Char('P'));
    assert_eq!(app.status_text(), Some("block 120001, clock running"));
    press(&mut app, KeyCode::Char('P'));
    assert!(
        app.status_text()
            .is_some_and(|t| t.ends_with("clock paused")),
        "{:?}",
        app.status_text()
    );
}
