//! The console, driven by keys on the demo world and drawn into ratatui's
//! `TestBackend`. Frames are insta snapshots in the top-level `snapshots/` folder; a
//! changed frame fails the test until its snapshot is reviewed and updated.

mod support;

use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::style::Color;
use serde_json::json;
use structs_console::clock::WallClock;
use structs_console::references::ReferenceConfig;
use structs_console::source::GameSource;
use structs_console::source::instrumented::InstrumentedSource;
use structs_console::source::sim::{BlockClock, SimSource, WorldConfig};
use structs_console::tui::theme::Role;
use structs_console::tui::{App, Clipboard, Copied, SystemClipboard, Tab, Theme};
use structs_console::{Core, EntityId};
use tokio::runtime::Runtime;

use support::console::{
    assert_drawn_whole, draw, draw_buffer, press, press_n, runtime, type_text, wall,
};

/// A console on the demo world with a paused clock and a fixed wall clock, its first
/// page already listed. The runtime must outlive the app.
fn console() -> (Runtime, App) {
    console_with(Theme::default())
}

fn console_with(theme: Theme) -> (Runtime, App) {
    let runtime = runtime();
    let core =
        structs_console::assembly::build_with_clock(Arc::new(sim()), WallClock::Fixed(wall()));
    let mut app = App::new(core, theme, runtime.handle().clone());
    app.settle();
    (runtime, app)
}

/// A console like [`console`] over another source (an instrumented sim) and
/// reference settings.
fn console_over(source: Arc<dyn GameSource>, references: ReferenceConfig) -> (Runtime, App) {
    let runtime = runtime();
    let core = structs_console::assembly::builder(source)
        .clock(WallClock::Fixed(wall()))
        .references(references)
        .build()
        .expect("core");
    let mut app = App::new(core, Theme::default(), runtime.handle().clone());
    app.settle();
    (runtime, app)
}

/// The demo world with its block clock paused.
fn sim() -> SimSource {
    SimSource::new(
        WorldConfig::demo(),
        BlockClock::paused(WorldConfig::DEFAULT_HEIGHT),
    )
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

/// Like [`snapshot`], with the hash of each result handle the core holds replaced by
/// `hash0001`, `hash0002`, ... in the order the handle list gives: handles carry a
/// per-process random key, so their hashes differ from run to run.
fn snapshot_handles(name: &str, description: &str, app: &mut App, core: &Core, size: (u16, u16)) {
    let runtime = runtime();
    let list = runtime
        .block_on(core.call_json("structs_handle_list", json!({})))
        .expect("the handle list");
    let mut frame = draw(app, size.0, size.1);
    for (i, handle) in list["handles"].as_array().unwrap().iter().enumerate() {
        let hash = handle["handle"]
            .as_str()
            .unwrap()
            .rsplit(':')
            .next()
            .unwrap();
        frame = frame.replace(hash, &format!("hash{:04}", i + 1));
    }
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
        before + 2,
        "opening from the list asks only for the references; expanding planetId fetches"
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

#[test]
fn replay_without_a_log_says_how_to_open_one() {
    let (_rt, mut app) = console();
    press(&mut app, KeyCode::Char('6'));
    assert_eq!(app.tab(), Tab::Replay);
    snapshot(
        "replay_empty_100x30",
        "The Replay tab with no session log open: how to record and open one",
        &mut app,
        100,
        30,
    );
    // Nothing to run: no panic, nothing sent.
    let sent = app.requests_sent();
    press(&mut app, KeyCode::Char('r'));
    assert_eq!(app.requests_sent(), sent);
    press(&mut app, KeyCode::Char('1'));
    assert_eq!(app.tab(), Tab::Entities);
}

/// A session log written as the recorder writes it, with fixed times and session ids:
/// each call's recorded answer is what the demo world gives, except `tamper`ed ones.
fn write_log(
    path: &std::path::Path,
    calls: &[(&str, serde_json::Value)],
    tamper: impl Fn(usize, &mut serde_json::Value),
) {
    use std::io::Write;
    let runtime = runtime();
    let core =
        structs_console::assembly::build_with_clock(Arc::new(sim()), WallClock::Fixed(wall()));
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).expect("log"));
    let mut seq = 0;
    for (i, (tool, args)) in calls.iter().enumerate() {
        let n = i as u64 + 1;
        let ts = format!("2026-11-21T10:00:{:02}.{:03}000Z", n / 2, (n * 137) % 1000);
        seq += 1;
        let request = json!({"v": 1, "ts": ts, "session": "s-test-1", "seq": seq,
            "type": "request", "call": n, "tool": tool, "arguments": args,
            "source": "sim", "block_height": 120000});
        writeln!(out, "{request}").unwrap();
        let mut answer = runtime.block_on(core.call_json(tool, args.clone()));
        match &mut answer {
            Ok(v) | Err(v) => tamper(i, v),
        }
        seq += 1;
        let mut response = json!({"v": 1, "ts": ts, "session": "s-test-1", "seq": seq,
            "type": "response", "call": n, "tool": tool, "duration_ms": 1.25 * n as f64,
            "source": "sim", "block_height": 120000});
        match answer {
            Ok(v) => response["result"] = v,
            Err(e) => response["error"] = e,
        }
        writeln!(out, "{response}").unwrap();
    }
}

/// The Replay pane: the calls of a log with their timing; the selected call's
/// recorded answer; every call run again with the differing one found by `n` and shown
/// side by side with its changed paths; one call run again by itself; a plan call
/// opened in the Plans pane.
#[test]
fn replay_steps_through_a_log_runs_it_again_and_shows_the_differences() {
    // A file name the snapshots can show: the process id goes in the folder.
    let dir = std::env::temp_dir().join(format!("structs-replay-pane-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("session.jsonl");
    let plan = json!({"steps": [
        {"id": "players", "tool": "structs_list_players", "params": {"page_size": 2}},
        {"id": "first", "tool": "structs_query_player",
         "params": {"player_id": "${steps.players.data.players[0].Player.id}"}}
    ]});
    write_log(
        &path,
        &[
            (
                "structs_query_player",
                json!({"player_id": "1-1", "include_references": false}),
            ),
            ("structs_list_players", json!({"page_size": 2})),
            ("structs_query_player", json!({"player_id": "2-1"})),
            (
                "structs_query_planet",
                json!({"planet_id": "2-1", "include_references": false}),
            ),
            ("structs_plan_execute", plan.clone()),
        ],
        |i, v| {
            // The recording of call 4 says the planet had other ore than it has now.
            if i == 3 {
                v["planet"]["Planet"]["maxOre"] = json!("1");
                v["planet"]["gone"] = json!(true);
            }
        },
    );
    let (_rt, mut app) = console();
    app.open_log(&path).expect("open the log");
    app.settle_log();
    assert_eq!(app.tab(), Tab::Replay);
    snapshot(
        "replay_log_120x36",
        "A five-call session log in Replay: the calls with their time and duration, the first call's recorded answer",
        &mut app,
        120,
        36,
    );
    assert!(
        hint_bar(&mut app).contains("run again"),
        "{}",
        hint_bar(&mut app)
    );

    // Every call again: four give the recorded answer, the tampered one does not.
    press(&mut app, KeyCode::Char('a'));
    assert_eq!(app.replay_verdicts(), (5, 1));
    assert!(
        app.status_text().unwrap_or_default().contains("1 differ"),
        "{:?}",
        app.status_text()
    );
    press(&mut app, KeyCode::Char('n'));
    let frame = draw(&mut app, 120, 36);
    assert!(frame.contains("call 4 · structs_query_planet"), "{frame}");
    assert!(frame.contains("~ /planet/Planet/maxOre"), "{frame}");
    assert!(frame.contains("- /planet/gone"), "{frame}");
    snapshot(
        "replay_diff_120x36",
        "Call 4 run again: its changed and removed paths, the recorded and fresh answers side by side",
        &mut app,
        120,
        36,
    );
    // The changed line is drawn in the change's colour on both sides.
    let buffer = draw_buffer(&mut app, 120, 36);
    let theme = Theme::default();
    let changed_colour = theme.style(Role::Prompt).fg;
    let rows_with = |needle: &str| -> Vec<u16> {
        (0..36)
            .filter(|y| {
                let line: String = (0..120).map(|x| buffer[(x, *y)].symbol()).collect();
                line.contains(needle)
            })
            .collect()
    };
    let ore_rows = rows_with("\"maxOre\"");
    assert!(!ore_rows.is_empty(), "the maxOre lines are on show");
    let y = ore_rows[0];
    let coloured = (0..120)
        .filter(|x| buffer[(*x, y)].fg == changed_colour.unwrap_or(Color::Reset))
        .count();
    assert!(
        coloured > 10,
        "maxOre drawn in the changed colour on both sides"
    );

    // One call by itself: the first one, the same as recorded.
    press(&mut app, KeyCode::Home);
    press(&mut app, KeyCode::Char('r'));
    assert_eq!(
        app.status_text(),
        Some("call 1: the same answer as recorded")
    );

    // The plan call opens in the Plans pane: `o` goes to it, `o` again opens it.
    press(&mut app, KeyCode::Char('o'));
    assert_eq!(app.tab(), Tab::Replay);
    press(&mut app, KeyCode::Char('o'));
    assert_eq!(app.tab(), Tab::Plans);
    let report = app.plan_report().expect("the plan is open");
    assert_eq!(report["steps"].as_array().map(Vec::len), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A log of 100,000 calls: its first calls show while it is read, the count once it
/// is, and the last call's arguments are read back from the file when it is selected.
#[test]
fn a_log_of_100_000_calls_opens_without_reading_it_whole() {
    use std::io::Write;
    let dir = std::env::temp_dir().join(format!("structs-replay-100k-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("big.jsonl");
    {
        let mut out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        for n in 1..=100_000u64 {
            writeln!(out, r#"{{"v":1,"ts":"2026-11-21T10:00:00Z","session":"s-big","seq":{},"type":"request","call":{n},"tool":"structs_query_player","arguments":{{"player_id":"1-{}","n":{n}}}}}"#, 2 * n - 1, n % 50 + 1).unwrap();
            writeln!(out, r#"{{"v":1,"ts":"2026-11-21T10:00:00Z","session":"s-big","seq":{},"type":"response","call":{n},"tool":"structs_query_player","duration_ms":0.5,"result":{{"player":{{"Player":{{"id":"1-{}"}}}}}}}}"#, 2 * n, n % 50 + 1).unwrap();
        }
    }
    let (_rt, mut app) = console();
    app.open_log(&path).expect("open");
    let frame = draw(&mut app, 120, 30);
    assert!(frame.contains("big.jsonl"), "{frame}");
    app.settle_log();
    let frame = draw(&mut app, 120, 30);
    assert!(frame.contains("100,000 calls"), "{frame}");
    assert!(frame.contains(r#""n":1}"#), "{frame}");
    press(&mut app, KeyCode::End);
    let frame = draw(&mut app, 120, 30);
    assert!(
        frame.contains("call 100000 · structs_query_player"),
        "{frame}"
    );
    assert!(frame.contains(r#""n":100000"#), "{frame}");
    assert!(frame.contains("100,000"), "{frame}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The Docs tab over the project's own (embedded) docs: `/` and words give live
/// results, Enter opens one as readable text with its links, a link is followed and
/// Backspace comes back; the docs linked to the entity selected in Entities are listed.
#[test]
fn docs_search_open_follow_and_back() {
    let (_rt, mut app) = console();
    press(&mut app, KeyCode::Char('5'));
    assert_eq!(app.tab(), Tab::Docs);
    // The first entity listed (player 1-1) is selected in Entities.
    let frame = draw(&mut app, 120, 36);
    assert!(frame.contains("Docs for 1-1"), "{frame}");
    press(&mut app, KeyCode::Char('/'));
    assert!(
        hint_bar(&mut app).contains("results"),
        "{}",
        hint_bar(&mut app)
    );
    type_text(&mut app, "refine ore");
    // The digits and letters went into the search, not to the tabs.
    assert_eq!(app.tab(), Tab::Docs);
    snapshot(
        "docs_live_results_120x36",
        "Docs: `/` then \"refine ore\": results with snippets follow the keys typed",
        &mut app,
        120,
        36,
    );
    let frame = draw(&mut app, 120, 36);
    assert!(frame.contains("Mining and refining"), "{frame}");
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Enter);
    let frame = draw(&mut app, 120, 36);
    assert!(
        frame.contains("knowledge/mechanics/mining-and-refining · mechanics"),
        "{frame}"
    );
    snapshot(
        "docs_open_doc_120x36",
        "Docs: the first result opened, its Markdown as text, its links out and in below",
        &mut app,
        120,
        36,
    );
    // Tab to the links, follow the first, then come back.
    press(&mut app, KeyCode::Tab);
    let before = draw(&mut app, 120, 36);
    press(&mut app, KeyCode::Enter);
    let after = draw(&mut app, 120, 36);
    assert_ne!(before, after);
    assert!(after.contains("back: 1"), "{after}");
    assert!(
        !after.contains("knowledge/mechanics/mining-and-refining · mechanics"),
        "{after}"
    );
    press(&mut app, KeyCode::Backspace);
    let back = draw(&mut app, 120, 36);
    assert!(
        back.contains("knowledge/mechanics/mining-and-refining · mechanics"),
        "{back}"
    );
    assert!(!back.contains("back: 1"), "{back}");
    // Scrolling moves the text.
    press(&mut app, KeyCode::BackTab);
    press_n(&mut app, KeyCode::Down, 5);
    assert_ne!(draw(&mut app, 120, 36), back);
}

/// A struct selected in Entities: the Docs tab lists the docs linked to its kind and to
/// its struct type, and opens one.
#[test]
fn docs_linked_to_the_selected_entity() {
    let (_rt, mut app) = console();
    // Open struct 5-1 through the id filter.
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, "5-1");
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Char('5'));
    let frame = draw(&mut app, 120, 36);
    assert!(frame.contains("Docs for 5-1"), "{frame}");
    // Struct 5-1 is a Command Ship (type 1): its type's docs first, its kind's last.
    assert!(frame.contains("› type 1 "), "{frame}");
    snapshot(
        "docs_for_selected_struct_120x36",
        "Docs: struct 5-1 selected in Entities; the docs for its kind and its type",
        &mut app,
        120,
        36,
    );
    // Tab from the results: doc, links, then the entity's docs; the last is a kind's.
    press_n(&mut app, KeyCode::Tab, 3);
    press(&mut app, KeyCode::End);
    let frame = draw(&mut app, 120, 36);
    assert!(frame.contains("› kind "), "{frame}");
    press(&mut app, KeyCode::Enter);
    let frame = draw(&mut app, 120, 36);
    assert!(!frame.contains("Open a result with Enter"), "{frame}");
}

#[test]
fn docs_narrow_shows_the_focused_area() {
    let (_rt, mut app) = console();
    press(&mut app, KeyCode::Char('5'));
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, "proof of work");
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Enter);
    snapshot(
        "docs_narrow_60x20",
        "Docs at 60x20: the search box and the open doc only",
        &mut app,
        60,
        20,
    );
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
            assert_drawn_whole(app, width, height, state);
        }
    };
    check(&mut app, "startup");
    open_player_and_planet(&mut app);
    check(&mut app, "tree open");
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Char('d'));
    check(&mut app, "references focused");
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
fn the_handles_pane_renders_at_any_size() {
    let (_rt, core, mut app) = console_with_handles(Box::new(Recorder::default()));
    let _ = core;
    press(&mut app, KeyCode::Char('2'));
    for (width, height) in [
        (0, 0),
        (1, 1),
        (20, 5),
        (40, 12),
        (60, 13),
        (60, 14),
        (300, 80),
    ] {
        assert_drawn_whole(&mut app, width, height, "list");
    }
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Char('f'));
    type_text(&mut app, "id,owner");
    for (width, height) in [
        (0, 0),
        (1, 1),
        (20, 5),
        (40, 12),
        (60, 13),
        (60, 14),
        (300, 80),
    ] {
        assert_drawn_whole(&mut app, width, height, "data");
    }
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

/// The text of row `y` of the frame.
fn row_text(buffer: &Buffer, y: u16) -> String {
    (0..buffer.area.width)
        .map(|x| buffer[(x, y)].symbol())
        .collect()
}

/// The hint bar of a 100x30 frame.
fn hint_bar(app: &mut App) -> String {
    let frame = draw(app, 100, 30);
    frame.lines().last().unwrap_or_default().to_string()
}

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

/// A clipboard that keeps what is copied.
#[derive(Clone, Default)]
struct Recorder(Arc<std::sync::Mutex<Vec<String>>>);

impl Clipboard for Recorder {
    fn copy(&mut self, text: &str) -> Result<Copied, String> {
        self.0.lock().unwrap().push(text.to_string());
        Ok(Copied::System)
    }
}

impl Recorder {
    fn last(&self) -> Option<String> {
        self.0.lock().unwrap().last().cloned()
    }
}

/// A machine without a clipboard.
struct NoClipboard;

impl Clipboard for NoClipboard {
    fn copy(&mut self, _text: &str) -> Result<Copied, String> {
        Err("no clipboard is available here (X11 server connection timed out)".into())
    }
}

/// A console on a 200-player world whose core already holds two results over 25 KB:
/// the first 100 players, then the first 100 structs.
fn console_with_handles(clipboard: Box<dyn Clipboard>) -> (Runtime, Core, App) {
    let runtime = runtime();
    let config = WorldConfig::with_players(200);
    let source = SimSource::new(config, BlockClock::paused(config.genesis_height));
    let core =
        structs_console::assembly::build_with_clock(Arc::new(source), WallClock::Fixed(wall()));
    for tool in ["structs_list_players", "structs_list_structs"] {
        // Lists hold each entity's core record; with their references they are large.
        let answer = runtime
            .block_on(core.call_json(tool, json!({"page_size": 100, "include_references": true})))
            .expect("a list");
        assert_eq!(answer["status"], "partial", "{tool} is over 25 KB");
    }
    let mut app = App::new(core.clone(), Theme::default(), runtime.handle().clone())
        .with_clipboard(clipboard);
    app.settle();
    (runtime, core, app)
}

/// The handle of the players' result (listed first: both were made at the same
/// second, and the list breaks ties by handle).
fn players_handle(runtime: &Runtime, core: &Core) -> String {
    let list = runtime
        .block_on(core.call_json("structs_handle_list", json!({})))
        .unwrap();
    list["handles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["tool_name"] == "structs_list_players")
        .and_then(|h| h["handle"].as_str())
        .unwrap()
        .to_string()
}

#[test]
fn the_handles_pane_says_how_handles_come_when_there_are_none() {
    let (_rt, mut app) = console();
    press(&mut app, KeyCode::Char('2'));
    assert_eq!(app.tab(), Tab::Handles);
    snapshot(
        "handles_empty_100x24",
        "The Handles tab with no live handles: what would be listed, and how",
        &mut app,
        100,
        24,
    );
}

#[test]
fn the_handles_pane_lists_live_handles_and_fetches_pages_as_a_tree() {
    let (runtime, core, mut app) = console_with_handles(Box::new(Recorder::default()));
    let handle = players_handle(&runtime, &core);
    let before = app.requests_sent();
    press(&mut app, KeyCode::Char('2'));
    assert_eq!(
        app.requests_sent(),
        before + 1,
        "showing the tab lists the handles"
    );
    snapshot_handles(
        "handles_list_120x30",
        "Two live handles (players and structs lists, each over 25 KB), nothing fetched yet",
        &mut app,
        &core,
        (120, 30),
    );
    let frame = draw(&mut app, 120, 30);
    assert!(frame.contains(&handle), "whole handles at 120 columns");
    assert!(frame.contains("2 live · memory store"));

    // Select the players' handle and fetch its first page.
    let row = frame.lines().position(|l| l.contains(&handle)).unwrap();
    let first = frame.lines().position(|l| l.contains("structs:")).unwrap();
    press_n(&mut app, KeyCode::Down, row - first);
    press(&mut app, KeyCode::Enter);
    let total_pages = runtime
        .block_on(core.call_json("structs_handle_fetch", json!({"handle": handle})))
        .unwrap()["page_info"]["total_pages"]
        .as_u64()
        .unwrap();
    assert!(total_pages > 1);
    let frame = draw(&mut app, 120, 30);
    assert!(frame.contains(&format!("page 1/{total_pages}")), "{frame}");
    snapshot_handles(
        "handles_page_120x30",
        "The players' handle fetched: page 1 as a tree, its players open, each item an \
         entity (id and kind), raw verbosity and the page's size against the whole",
        &mut app,
        &core,
        (120, 30),
    );

    // n fetches the next page, p the one before.
    press(&mut app, KeyCode::Char('n'));
    assert!(draw(&mut app, 120, 30).contains(&format!("page 2/{total_pages}")));
    press(&mut app, KeyCode::Char('p'));
    assert!(draw(&mut app, 120, 30).contains(&format!("page 1/{total_pages}")));

    // A listed entity opens into its fields, which are in the page: no call.
    let sent = app.requests_sent();
    press(&mut app, KeyCode::Down); // [0] 1-1 player
    press(&mut app, KeyCode::Right);
    assert_eq!(app.requests_sent(), sent);
    // An id among them opens into that entity, fetched on demand: id, index, guildId.
    press(&mut app, KeyCode::Right);
    press_n(&mut app, KeyCode::Down, 2);
    press(&mut app, KeyCode::Right);
    assert_eq!(app.requests_sent(), sent + 1);
    snapshot_handles(
        "handles_entity_link_120x30",
        "In the fetched page, player 1-1 open and its guildId expanded into guild 0-1, \
         fetched with structs_query_entity",
        &mut app,
        &core,
        (120, 30),
    );
}

#[test]
fn field_selection_and_verbosity_shape_the_fetched_page() {
    let recorder = Recorder::default();
    let (runtime, core, mut app) = console_with_handles(Box::new(recorder.clone()));
    let handle = players_handle(&runtime, &core);
    press(&mut app, KeyCode::Char('2'));
    let frame = draw(&mut app, 120, 30);
    let row = frame.lines().position(|l| l.contains(&handle)).unwrap();
    let first = frame.lines().position(|l| l.contains("structs:")).unwrap();
    press_n(&mut app, KeyCode::Down, row - first);
    press(&mut app, KeyCode::Enter);

    press(&mut app, KeyCode::Char('f'));
    type_text(&mut app, "id,username, guildId");
    snapshot_handles(
        "handles_fields_prompt_120x30",
        "The field prompt of the Handles pane, a selection typed",
        &mut app,
        &core,
        (120, 30),
    );
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.status_text(), Some("fields id,username,guildId"));
    assert!(draw(&mut app, 120, 30).contains("fields id,username,guildId ·"));

    // What the pane shows (and copies) is exactly what the tool returns.
    press(&mut app, KeyCode::Char('c'));
    let copied: serde_json::Value = serde_json::from_str(&recorder.last().unwrap()).unwrap();
    let expected = runtime
        .block_on(core.call_json(
            "structs_handle_fetch",
            json!({"handle": handle, "page": 1, "fields": "id,username,guildId"}),
        ))
        .unwrap();
    assert_eq!(copied, expected["data"]);
    assert!(app.status_text().unwrap().starts_with("copied page 1/"));

    // A field selection overrides verbosity; dropping it brings verbosity back.
    press(&mut app, KeyCode::Char('v'));
    assert!(app.status_text().unwrap().contains("overrides verbosity"));
    press(&mut app, KeyCode::Char('f'));
    press(&mut app, KeyCode::Esc);
    assert!(
        draw(&mut app, 120, 30).contains(" detailed · "),
        "the verbosity stepped to detailed"
    );
    press(&mut app, KeyCode::Char('c'));
    let copied: serde_json::Value = serde_json::from_str(&recorder.last().unwrap()).unwrap();
    let expected = runtime
        .block_on(core.call_json(
            "structs_handle_fetch",
            json!({"handle": handle, "page": 1, "verbosity": "detailed"}),
        ))
        .unwrap();
    assert_eq!(copied, expected["data"]);
}

#[test]
fn copying_without_a_clipboard_says_so() {
    let (_rt, _core, mut app) = console_with_handles(Box::new(NoClipboard));
    press(&mut app, KeyCode::Char('2'));
    let wide_hints = |app: &mut App| draw(app, 200, 30).lines().last().unwrap().to_string();
    assert!(
        !wide_hints(&mut app).contains("copy"),
        "nothing fetched, nothing to copy"
    );
    press(&mut app, KeyCode::Enter);
    assert!(wide_hints(&mut app).contains(" c  copy "));
    press(&mut app, KeyCode::Char('c'));
    let status = app.status_text().unwrap();
    assert!(
        status.starts_with("nothing copied: no clipboard is available here"),
        "{status}"
    );
    // The console goes on.
    press(&mut app, KeyCode::Char('n'));
    assert!(draw(&mut app, 120, 30).contains("page 2/"));
}

/// Over SSH or on a server, the console copies through the terminal (OSC 52), and
/// the status line says which way the text went.
#[test]
fn without_a_clipboard_the_terminal_takes_the_copy() {
    #[derive(Clone, Default)]
    struct Screen(Arc<std::sync::Mutex<Vec<u8>>>);
    impl std::io::Write for Screen {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let screen = Screen::default();
    let fallback = structs_console::tui::WithTerminalFallback::new(
        Box::new(NoClipboard),
        Box::new(screen.clone()),
    );
    let (_rt, _core, mut app) = console_with_handles(Box::new(fallback));
    press(&mut app, KeyCode::Char('2'));
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Char('c'));
    let status = app.status_text().unwrap();
    assert!(status.contains("through the terminal (OSC 52)"), "{status}");
    let written = String::from_utf8(screen.0.lock().unwrap().clone()).unwrap();
    assert!(
        written.starts_with("\x1b]52;c;") && written.ends_with('\x07'),
        "{written:?}"
    );
    use base64::Engine as _;
    let text = base64::engine::general_purpose::STANDARD
        .decode(&written[7..written.len() - 1])
        .unwrap();
    let page: serde_json::Value = serde_json::from_slice(&text).unwrap();
    assert!(
        page.is_object(),
        "the page's JSON went through the terminal"
    );
}

#[test]
fn the_system_clipboard_reports_a_missing_display() {
    // Only meaningful where there is no display to talk to (CI, a server).
    if std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some() {
        return;
    }
    let err = SystemClipboard::default().copy("{}").unwrap_err();
    assert!(err.starts_with("no clipboard is available here"), "{err}");
}

#[test]
fn the_handles_pane_on_a_small_terminal_shows_the_focused_area() {
    let (_rt, core, mut app) = console_with_handles(Box::new(Recorder::default()));
    press(&mut app, KeyCode::Char('2'));
    press(&mut app, KeyCode::Enter);
    snapshot_handles(
        "handles_page_70x16",
        "The Handles pane at 70x16 with a page fetched: only the focused data tree",
        &mut app,
        &core,
        (70, 16),
    );
    press(&mut app, KeyCode::Esc);
    snapshot_handles(
        "handles_list_70x16",
        "Back on the list at 70x16: short handles (entity and hash), tool names without \
         their prefix",
        &mut app,
        &core,
        (70, 16),
    );
}

#[test]
fn the_handle_list_refreshes_every_few_seconds_while_on_show() {
    let (_rt, mut app) = console();
    let start = std::time::Instant::now();
    app.tick(start + std::time::Duration::from_secs(60));
    assert_eq!(app.pending_requests(), 0, "not on show: no refresh");
    let before = std::time::Instant::now();
    press(&mut app, KeyCode::Char('2'));
    let sent = app.requests_sent();
    app.tick(before);
    assert_eq!(app.requests_sent(), sent, "just listed");
    app.tick(std::time::Instant::now() + std::time::Duration::from_secs(6));
    assert_eq!(app.requests_sent(), sent + 1, "listed again after 5 s");
    app.settle();
}

#[test]
fn paging_waits_for_the_fetch_on_its_way() {
    let (_rt, _core, mut app) = console_with_handles(Box::new(Recorder::default()));
    press(&mut app, KeyCode::Char('2'));
    press(&mut app, KeyCode::Enter);
    // Two presses before the first answer: the second finds a fetch on its way and
    // does nothing, so the pane lands on page 2, not 3.
    let n = KeyEvent::new(KeyCode::Char('n'), KeyModifiers::NONE);
    let sent = app.requests_sent();
    app.handle_key(n);
    app.handle_key(n);
    assert_eq!(app.requests_sent(), sent + 1, "one fetch for two presses");
    app.settle();
    let frame = draw(&mut app, 120, 30);
    assert!(frame.contains("· page 2/"), "{frame}");
}

/// A console on the paused demo world that plans proof-of-work at a fixed 20 MH/s,
/// with its core (to move the block clock) and a clipboard that records.
fn pow_console() -> (Runtime, App, Core, Recorder) {
    let runtime = runtime();
    let core =
        structs_console::assembly::build_with_clock(Arc::new(sim()), WallClock::Fixed(wall()));
    let copied = Recorder(Arc::default());
    let mut app = App::new(core.clone(), Theme::default(), runtime.handle().clone())
        .with_clipboard(Box::new(Recorder(copied.0.clone())))
        .with_pow_hashrate(20e6);
    app.settle();
    press(&mut app, KeyCode::Char('4'));
    (runtime, app, core, copied)
}

fn new_job(app: &mut App, text: &str) {
    press(app, KeyCode::Char('n'));
    type_text(app, text);
    press(app, KeyCode::Enter);
}

#[test]
fn pow_job_waits_runs_when_the_blocks_bring_the_difficulty_down_and_cancels() {
    let (runtime, mut app, core, _) = pow_console();
    snapshot(
        "pow_empty",
        "The PoW tab before any job: how to start one",
        &mut app,
        100,
        16,
    );
    let height = WorldConfig::DEFAULT_HEIGHT;
    new_job(
        &mut app,
        &format!("5-42 build block_start={} difficulty=700", height - 2),
    );
    assert_eq!(
        app.pending_requests(),
        0,
        "a job above difficulty 10 does not hash"
    );
    snapshot(
        "pow_waiting",
        "A build job two blocks old: difficulty 58, waiting for 10 (the web client's rule); the clock is paused, so no wait is promised; the coming steps at 20 MH/s",
        &mut app,
        110,
        30,
    );
    // 300 blocks later the difficulty is 10 and the tick starts the search.
    runtime
        .block_on(core.call(
            "structs_clock_control",
            json!({"action": "step", "blocks": 300}),
        ))
        .unwrap();
    app.tick(std::time::Instant::now());
    assert_eq!(app.pending_requests(), 1, "the search is running");
    app.pin_pow_progress(
        0,
        json!({"iterations": 123_456_789u64, "hashrate": 19_800_000.0, "elapsed_ms": 6235,
               "best_achieved_difficulty": 7, "required_difficulty": 10, "threads": 2,
               "kernel": "avx2x8", "rates": [18_000_000u64, 19_500_000u64, 19_900_000u64, 19_800_000u64, 20_100_000u64, 19_800_000u64]}),
    );
    snapshot(
        "pow_running",
        "The job hashing at difficulty 10: iterations, rate, best so far, expected-progress gauge and hash-rate sparkline (figures pinned)",
        &mut app,
        110,
        30,
    );
    press(&mut app, KeyCode::Char('x'));
    app.settle();
    let frame = draw(&mut app, 110, 30);
    assert!(
        frame.contains("cancelled"),
        "{:?} {frame}",
        app.status_text()
    );
    assert_eq!(app.pending_requests(), 0);
}

#[test]
fn pow_job_finds_a_proof_the_chain_accepts_and_copies_it() {
    let (_runtime, mut app, _core, copied) = pow_console();
    new_job(
        &mut app,
        "5-42 build block_start=1280144 age=600 difficulty=700 threads=1",
    );
    app.settle();
    app.pin_pow_progress(
        0,
        json!({"iterations": 4096, "hashrate": 18_500_000.0, "elapsed_ms": 1,
               "achieved_difficulty": 3, "difficulty": 3, "threads": 1, "kernel": "avx2x8"}),
    );
    snapshot(
        "pow_done",
        "A job whose difficulty is 3: found at once; the proof's nonce, input and hash (timing pinned)",
        &mut app,
        110,
        24,
    );
    press(&mut app, KeyCode::Char('c'));
    let proof: serde_json::Value = serde_json::from_str(&copied.last().expect("copied")).unwrap();
    let input = proof["input"].as_str().unwrap();
    assert_eq!(input, format!("5-42BUILD1280144NONCE{}", proof["nonce"]));
    let check = structs_console::pow::check(input, proof["hash"].as_str().unwrap(), 3);
    assert!(check.valid(), "{check:?}");
}

#[test]
fn w_on_a_struct_in_entities_starts_its_build_job() {
    let (_runtime, mut app, _core, _) = pow_console();
    press(&mut app, KeyCode::Char('1'));
    // The id filter opens a whole id as a tree; w starts a job for it.
    press(&mut app, KeyCode::Char('/'));
    // 5-22 is being built: its job is its build.
    type_text(&mut app, "5-22");
    press(&mut app, KeyCode::Enter);
    let first = "5-22";
    assert!(
        draw(&mut app, 110, 30).contains("w  pow job"),
        "the hint bar offers the job"
    );
    press(&mut app, KeyCode::Char('w'));
    app.settle();
    assert_eq!(
        app.tab(),
        structs_console::tui::app::Tab::Pow,
        "{}",
        draw(&mut app, 110, 30)
    );
    let frame = draw(&mut app, 110, 30);
    assert!(frame.contains(&format!("1 {first} build")), "{frame}");
    assert!(frame.contains("struct_build_complete"), "{frame}");
}

#[test]
fn a_bad_job_is_explained_and_the_prompt_stays() {
    let (_runtime, mut app, _core, _) = pow_console();
    new_job(&mut app, "1-1 build");
    assert!(
        app.status_text().unwrap().contains("player"),
        "{:?}",
        app.status_text()
    );
    let frame = draw(&mut app, 100, 16);
    assert!(
        frame.contains("1-1 build"),
        "the prompt keeps the text: {frame}"
    );
    press(&mut app, KeyCode::Esc);
    new_job(&mut app, "5-1 mine");
    let frame = draw(&mut app, 120, 20);
    assert!(frame.contains("failed"), "{frame}");
}

// The action dialog, the block clock keys and the event log.

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

/// Player `p` with full charge, ample power, its fleet home and its command ship
/// online: every requirement of a build met but the build's own.
fn make_ready(w: &mut structs_console::source::sim::world::World, p: u64) {
    let i = (p - 1) as usize;
    let (fleet, planet) = (w.players[i].fleet, w.players[i].planet);
    w.fleets[(fleet - 1) as usize].planet = Some(planet);
    w.fleets[(fleet - 1) as usize].away_at = None;
    let cmd = w.fleets[(fleet - 1) as usize].command_struct;
    let c = &mut w.structs[(cmd - 1) as usize];
    let before = c.draw();
    c.built = true;
    c.online = true;
    let after = c.draw();
    let g = &mut w.players[i].grid;
    g.structs_load = g.structs_load - before + after;
    g.capacity = g.load + g.structs_load + 1_000_000_000;
    g.last_action = 0;
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

// The Plans pane.

/// A console on the Plans tab with the built-in example open and durations left out
/// of the frame.
fn plans_console() -> (Runtime, App) {
    let (rt, mut app) = console();
    press(&mut app, KeyCode::Char('3'));
    assert_eq!(app.tab(), Tab::Plans);
    app.pin_plan_timing();
    (rt, app)
}

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

/// Writes `text` to a file of its own for one test and returns its path.
fn plan_file(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("structs-console-plans-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("writing a plan file");
    path.to_string_lossy().into_owned()
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

/// The sim seen as a live node: a REST source's name and endpoint, and fixed connection
/// figures, so the header's frame is the same every time.
struct LiveLooking {
    sim: SimSource,
    health: structs_console::source::SourceHealth,
}

impl GameSource for LiveLooking {
    fn info(&self) -> structs_console::source::SourceInfo {
        let mut info = self.sim.info();
        info.name = "rest";
        info.description = "http://node.example:1317".into();
        info.paused = false;
        info
    }
    fn get(
        &self,
        id: EntityId,
    ) -> structs_console::source::BoxFuture<
        '_,
        Result<Option<serde_json::Value>, structs_console::ToolError>,
    > {
        self.sim.get(id)
    }
    fn list(
        &self,
        query: structs_console::source::ListQuery,
    ) -> structs_console::source::BoxFuture<
        '_,
        Result<structs_console::source::Page, structs_console::ToolError>,
    > {
        self.sim.list(query)
    }
    fn health(&self) -> Option<structs_console::source::SourceHealth> {
        Some(self.health.clone())
    }
}

/// A feed with fixed figures whose bus the test publishes on.
struct FixedFeed(
    structs_console::events::FeedHealth,
    structs_console::events::EventBus,
);

impl structs_console::events::EventFeed for FixedFeed {
    fn bus(&self) -> structs_console::events::EventBus {
        self.1.clone()
    }
    fn health(&self) -> structs_console::events::FeedHealth {
        self.0.clone()
    }
}

fn live_console(connected: bool) -> (Runtime, App) {
    let (runtime, app, _) = live_console_with_bus(connected);
    (runtime, app)
}

fn live_console_with_bus(connected: bool) -> (Runtime, App, structs_console::events::EventBus) {
    let runtime = runtime();
    let health = structs_console::source::SourceHealth {
        endpoint: "http://node.example:1317".into(),
        connected,
        requests: 40,
        errors: 2,
        latency_ms: 21.4,
        last_latency_ms: 19.0,
        last_error: None,
        cache_hits: 0,
        cache_reads: 0,
    };
    let feed = structs_console::events::FeedHealth {
        url: "nats://127.0.0.1:4222".into(),
        connected: true,
        events: 14,
        ..Default::default()
    };
    let bus = structs_console::events::EventBus::new();
    let core = structs_console::assembly::builder(Arc::new(LiveLooking { sim: sim(), health }))
        .clock(WallClock::Fixed(wall()))
        .event_feed(Arc::new(FixedFeed(feed, bus.clone())))
        .build()
        .expect("core");
    let mut app = App::new(core, Theme::default(), runtime.handle().clone());
    app.settle();
    (runtime, app, bus)
}

#[test]
fn the_event_log_shows_the_feeds_events() {
    let (_rt, mut app, bus) = live_console_with_bus(true);
    press(&mut app, KeyCode::Char('e'));
    let id = EntityId::parse("5-3").unwrap();
    bus.publish(structs_console::events::GameEvent {
        seq: 0,
        block: 120_007,
        category: "struct_health",
        entity: id,
        changed: vec![id],
        summary: "5-3 struct_health from NATS".into(),
        detail: json!({"struct_id": "5-3", "health": 2}),
        tx_hash: None,
    });
    app.settle();
    let frame = draw(&mut app, 120, 30);
    assert!(frame.contains("5-3 struct_health from NATS"), "{frame}");
}

#[test]
fn the_header_shows_a_live_source_and_its_event_feed() {
    let (_rt, mut app) = live_console(true);
    snapshot(
        "header_live_source_120x12",
        "A REST source with its latency and errors, and a NATS event feed with its events",
        &mut app,
        120,
        12,
    );
    // Narrower, the figures shorten before they go.
    let narrow = row_text(&draw_buffer(&mut app, 60, 12), 0);
    assert!(narrow.contains("● 21 ms · 2✕"), "{narrow}");
    assert!(
        narrow.contains("nats ●") && narrow.contains("block 120000"),
        "{narrow}"
    );
    let (_rt, mut app) = live_console(false);
    let header = row_text(&draw_buffer(&mut app, 120, 12), 0);
    assert!(header.contains("✕ unreachable · 2 errors"), "{header}");
}

#[test]
fn the_source_dialog_switches_to_a_node_and_back() {
    use structs_console::rest::server::RestServer;
    use structs_console::source::rest::RestConfig;
    use structs_console::source::switch::{SwitchSource, Switcher};
    let runtime = runtime();
    // A node serving another world (seed 7), on a free port.
    let other = WorldConfig {
        seed: 7,
        ..WorldConfig::demo()
    };
    let node_sim = Arc::new(SimSource::new(other, BlockClock::paused(130_000)));
    let server = runtime
        .block_on(RestServer::start("127.0.0.1:0", node_sim))
        .expect("serve-rest");
    let first: Arc<dyn GameSource> = Arc::new(sim());
    let switch = runtime.block_on(async { SwitchSource::new(first) });
    let core = structs_console::assembly::builder(switch.clone())
        .clock(WallClock::Fixed(wall()))
        .build()
        .expect("core");
    let switcher = Switcher::new(
        switch,
        Box::new(|| Arc::new(sim()) as Arc<dyn GameSource>),
        Box::new(|endpoint: &str| {
            let mut c = RestConfig::new(endpoint);
            c.retries = 0;
            c.timeout = std::time::Duration::from_secs(2);
            c
        }),
        None,
    );
    let mut app =
        App::new(core, Theme::default(), runtime.handle().clone()).with_switcher(switcher);
    app.settle();
    press(&mut app, KeyCode::Char('S'));
    snapshot(
        "source_dialog_100x24",
        "The source dialog over the entities: the embedded world chosen, a REST endpoint offered",
        &mut app,
        100,
        24,
    );
    // A node that is not there: the dialog says why and the console keeps its source.
    press(&mut app, KeyCode::Down);
    app.handle_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    type_text(&mut app, "http://127.0.0.1:1");
    press(&mut app, KeyCode::Enter);
    let frame = draw(&mut app, 100, 24);
    assert!(
        frame.contains("cannot connect to http://127.0.0.1:1"),
        "{frame}"
    );
    assert!(row_text(&draw_buffer(&mut app, 100, 24), 0).contains("sim · seed 42"));
    // Closing the dialog while it connects gives the connection up.
    app.handle_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    type_text(&mut app, &server.url());
    app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    app.handle_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
    app.settle();
    assert!(row_text(&draw_buffer(&mut app, 100, 24), 0).contains("sim · seed 42"));
    // The node: the header names it and the list is read from it.
    press(&mut app, KeyCode::Char('S'));
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Enter);
    let buffer = draw_buffer(&mut app, 100, 24);
    let header = row_text(&buffer, 0);
    assert!(
        header.contains(&format!("rest · {}", server.url())),
        "{header}"
    );
    assert!(header.contains("block 130000"), "{header}");
    assert!(
        app.status_text().unwrap_or("").contains("source: rest"),
        "{:?}",
        app.status_text()
    );
    assert!(
        !draw(&mut app, 100, 24).contains("│ Now:"),
        "the dialog closed"
    );
    // And back to the embedded world.
    press(&mut app, KeyCode::Char('S'));
    press(&mut app, KeyCode::Up);
    press(&mut app, KeyCode::Enter);
    let header = row_text(&draw_buffer(&mut app, 100, 24), 0);
    assert!(
        header.contains("sim · seed 42") && header.contains("block 120000"),
        "{header}"
    );
    drop(server);
}

#[test]
fn the_console_records_the_calls_it_makes_and_replays_them_the_same() {
    let path =
        std::env::temp_dir().join(format!("structs-console-rec-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let recorder = Arc::new(structs_console::record::Recorder::open(&path).expect("log"));
    let runtime = runtime();
    let core =
        structs_console::assembly::build_with_clock(Arc::new(sim()), WallClock::Fixed(wall()));
    let mut app = App::recording(core, Theme::default(), runtime.handle().clone(), recorder);
    app.settle(); // the first page, recorded too
    press(&mut app, KeyCode::Char('n')); // the next page
    press(&mut app, KeyCode::Enter); // open the selected player, with its references
    let mut tools = Vec::new();
    for item in structs_console::record::LogReader::open(&path).expect("log") {
        let e = item.expect("readable").expect("an entry");
        tools.push((format!("{:?}", e.kind), e.tool.unwrap_or_default()));
    }
    assert!(tools.len() >= 6 && tools.len() % 2 == 0, "{tools:?}");
    // Both pages are in it: the first, asked for as the console opened, and the next.
    let list = ("Request".to_string(), "structs_list_entities".to_string());
    assert_eq!(tools[0], list, "{tools:?}");
    assert_eq!(tools.iter().filter(|t| **t == list).count(), 2, "{tools:?}");
    assert!(
        tools.contains(&("Response".into(), "structs_query_entity".into())),
        "{tools:?}"
    );

    // The log the console wrote opens in a console's Replay tab, and every call in it,
    // run again on the same world, gives the answer it was recorded with.
    let calls = tools.len() / 2;
    let (_rt, mut replay) = console();
    replay.open_log(&path).expect("open the console's own log");
    replay.settle_log();
    assert_eq!(replay.tab(), Tab::Replay);
    let frame = draw(&mut replay, 120, 36);
    assert!(
        frame.contains(&format!("{calls} calls")) && frame.contains("query_entity"),
        "{frame}"
    );
    press(&mut replay, KeyCode::Char('a'));
    assert_eq!(replay.replay_verdicts(), (calls, 0), "{tools:?}");
    let _ = std::fs::remove_file(&path);
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
    // Esc goes back to the tools; with no server attached there are no other views.
    press(&mut app, KeyCode::Esc);
    let frame = draw(&mut app, 120, 34);
    assert!(frame.contains("embedded core"), "{frame}");
    assert!(!frame.contains("Tab  view"), "{frame}");
}

#[test]
fn tiny_terminals_say_they_are_too_small() {
    let (_rt, mut app) = console();
    let sizes = [(1, 1), (5, 2), (10, 3), (20, 5)];
    let mut frames = Vec::new();
    for (width, height) in sizes {
        snapshot(
            &format!("too_small_{width}x{height}"),
            "A terminal below 30x8: what the console needs, as much of it as fits",
            &mut app,
            width,
            height,
        );
        frames.push(draw(&mut app, width, height));
    }
    // Whatever the console shows, the tiny frame is the same.
    press(&mut app, KeyCode::Char('7'));
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Char('?'));
    for ((width, height), before) in sizes.into_iter().zip(&frames) {
        assert_eq!(&draw(&mut app, width, height), before, "{width}x{height}");
    }
    // At the smallest size the panes use, the console is whole again.
    let frame = draw(&mut app, 30, 8);
    assert!(!frame.contains("too small"), "{frame}");
    assert!(frame.contains("Tools (56)"), "{frame}");
    // Keys still work while it is too small.
    press(&mut app, KeyCode::Esc);
    press(&mut app, KeyCode::Esc);
    draw(&mut app, 10, 3);
    press(&mut app, KeyCode::Char('q'));
    assert!(app.should_quit());
}

#[test]
fn a_resize_storm_never_panics() {
    let (_rt, mut app) = console();
    // Sizes from a fixed sequence (a small LCG), with keys between frames that move
    // through every tab and open what each offers.
    let mut seed: u32 = 12345;
    let mut next = |below: u32| {
        seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        (seed >> 16) % below
    };
    let keys = [
        KeyCode::Enter,
        KeyCode::Down,
        KeyCode::Tab,
        KeyCode::Char('?'),
        KeyCode::Esc,
        KeyCode::Right,
        KeyCode::Char('e'),
    ];
    for round in 0..700u32 {
        if round % 100 == 0 {
            let tab = char::from_digit(round / 100 + 1, 10).unwrap();
            press(&mut app, KeyCode::Char(tab));
        }
        if round % 7 == 0 {
            press(&mut app, keys[next(keys.len() as u32) as usize]);
        }
        let (width, height) = (next(220) as u16, next(70) as u16);
        assert_drawn_whole(&mut app, width, height, &format!("round {round}"));
    }
    assert!(!app.should_quit());
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

// ------------------------------------------------------------ prompts, dialogs, `w`

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

/// `w` on a struct starts the work it is doing, or says there is none.
#[test]
fn w_starts_the_proof_of_the_work_a_struct_is_doing() {
    let (_rt, mut app) = console();
    let job_for = |app: &mut App, id: &str| {
        press(app, KeyCode::Char('1'));
        press(app, KeyCode::Char('/'));
        type_text(app, id);
        press(app, KeyCode::Enter);
        press(app, KeyCode::Char('w'));
        app.settle();
        (
            app.tab(),
            app.status_text().unwrap_or_default().to_string(),
            draw(app, 120, 30),
        )
    };
    // 5-4, an online Ore Refinery refining: a refine job.
    let (tab, status, frame) = job_for(&mut app, "5-4");
    assert_eq!(tab, Tab::Pow);
    assert_eq!(status, "5-4: a refine job, the work it is doing");
    assert!(frame.contains("5-4 refine"), "{frame}");
    // 5-56, an Ore Extractor mining: a mine job.
    let (_, _, frame) = job_for(&mut app, "5-56");
    assert!(frame.contains("5-56 mine"), "{frame}");
    // 5-22, still being built: its build.
    let (_, _, frame) = job_for(&mut app, "5-22");
    assert!(frame.contains("5-22 build"), "{frame}");
    // 5-12, built and doing no proof work: nothing started, and the status says why.
    let (_, status, frame) = job_for(&mut app, "5-12");
    assert!(status.contains("no proof to find"), "{status}");
    assert!(!frame.contains("5-12 build"), "{frame}");
}

/// While the clock is paused, a waiting job says so instead of a time that will not
/// come.
#[test]
fn a_waiting_job_says_the_clock_is_paused() {
    let (_runtime, mut app, _core, _) = pow_console();
    let height = WorldConfig::DEFAULT_HEIGHT;
    new_job(
        &mut app,
        &format!("5-42 build block_start={} difficulty=700", height - 2),
    );
    app.tick(std::time::Instant::now());
    let frame = draw(&mut app, 140, 30);
    assert!(frame.contains("at block 120273 (clock paused)"), "{frame}");
    assert!(
        frame.contains("(difficulty 8); the clock is paused"),
        "{frame}"
    );
    assert!(!frame.contains("(in "), "{frame}");
}

/// The source dialog moves with j and k like every list, and Enter on the source
/// already in use changes nothing (the open entity stays open).
#[test]
fn the_source_dialog_moves_with_j_and_k_and_keeps_the_source_in_use() {
    use structs_console::source::rest::RestConfig;
    use structs_console::source::switch::{SwitchSource, Switcher};
    let runtime = runtime();
    let first: Arc<dyn GameSource> = Arc::new(sim());
    let switch = runtime.block_on(async { SwitchSource::new(first) });
    let core = structs_console::assembly::builder(switch.clone())
        .clock(WallClock::Fixed(wall()))
        .build()
        .expect("core");
    let switcher = Switcher::new(
        switch,
        Box::new(|| Arc::new(sim()) as Arc<dyn GameSource>),
        Box::new(RestConfig::new),
        None,
    );
    let mut app =
        App::new(core, Theme::default(), runtime.handle().clone()).with_switcher(switcher);
    app.settle();
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.references_query().expect("1-1 open")["id"], "1-1");
    press(&mut app, KeyCode::Char('S'));
    press(&mut app, KeyCode::Char('j'));
    let frame = draw(&mut app, 100, 24);
    assert!(frame.contains("› rest"), "j moves down: {frame}");
    // On the endpoint, j and k type.
    type_text(&mut app, "jk");
    let frame = draw(&mut app, 100, 24);
    assert!(frame.contains("1317jk"), "{frame}");
    press(&mut app, KeyCode::Up);
    let frame = draw(&mut app, 100, 24);
    assert!(frame.contains("› sim"), "{frame}");
    press(&mut app, KeyCode::Char('k'));
    let frame = draw(&mut app, 100, 24);
    assert!(frame.contains("› sim"), "k stays on the first: {frame}");
    press(&mut app, KeyCode::Enter);
    assert!(
        app.status_text()
            .is_some_and(|s| s.contains("already using the embedded world")),
        "{:?}",
        app.status_text()
    );
    assert_eq!(app.references_query().expect("1-1 still open")["id"], "1-1");
}

/// The help box wraps a long description under itself rather than cutting it.
#[test]
fn the_help_box_wraps_long_descriptions() {
    let (_rt, mut app) = plans_console();
    press(&mut app, KeyCode::Char('?'));
    for (width, height) in [(100u16, 44u16), (64, 50)] {
        let frame = draw(&mut app, width, height);
        assert!(!frame.contains("else t…"), "{frame}");
        assert!(frame.contains("Run one step"), "{frame}");
        snapshot(
            &format!("help_plans_{width}x{height}"),
            "? on the Plans tab: every key with its description, long ones wrapped under themselves",
            &mut app,
            width,
            height,
        );
    }
}

/// A log opens from inside the Replay tab: `f`, its path, Enter. A path that is not a
/// log is said on the status line.
#[test]
fn the_replay_tab_opens_a_log_from_inside() {
    let dir = std::env::temp_dir().join(format!("structs-replay-open-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("inside.jsonl");
    write_log(
        &path,
        &[("structs_query_player", json!({"player_id": "1-1"}))],
        |_, _| {},
    );
    let (_rt, mut app) = console();
    press(&mut app, KeyCode::Char('6'));
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains("press f here"), "{frame}");
    press(&mut app, KeyCode::Char('f'));
    // While the prompt is open, letters type: the hint bar offers no tab or quit key.
    let frame = draw(&mut app, 100, 30);
    let bar = frame
        .lines()
        .rev()
        .find(|l| l.contains("Enter"))
        .unwrap_or_default();
    assert!(
        bar.contains("Enter  open") && bar.contains("Esc  close"),
        "{bar}"
    );
    assert!(!bar.contains("q  quit") && !bar.contains("1-7"), "{bar}");
    type_text(&mut app, &dir.join("missing.jsonl").to_string_lossy());
    press(&mut app, KeyCode::Enter);
    let status = app.status_text().unwrap_or_default().to_string();
    assert!(status.contains("cannot open the session log"), "{status}");
    press(&mut app, KeyCode::Char('f'));
    type_text(&mut app, &path.to_string_lossy());
    press(&mut app, KeyCode::Enter);
    app.settle_log();
    let frame = draw(&mut app, 120, 30);
    assert!(frame.contains("structs_query_player"), "{frame}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A doc that informs many entities (every struct type) names a few in its header and
/// counts the rest, so its text shows at once.
#[test]
fn a_doc_informing_many_entities_folds_its_header() {
    let (_rt, mut app) = console();
    press(&mut app, KeyCode::Char('5'));
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, "the 22 struct types");
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Enter);
    let frame = draw(&mut app, 120, 36);
    assert!(frame.contains("knowledge/struct-types"), "{frame}");
    assert!(frame.contains("more"), "{frame}");
    assert!(!frame.contains("struct type 22"), "{frame}");
    // The doc's own text starts within the first lines of its pane.
    assert!(frame.contains("Struct types are plain integers"), "{frame}");
    snapshot(
        "docs_struct_types_folded_120x36",
        "The struct types doc: its header names a few of the 23 things it informs and counts the rest; the text follows",
        &mut app,
        120,
        36,
    );
}

/// The job examples the console guide gives for the PoW tab each plan a real job on
/// the demo world: none is refused or fails.
#[test]
fn the_guides_pow_job_examples_plan_on_the_demo_world() {
    let guide = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/guides/console.md"
    ))
    .unwrap();
    let section = guide
        .split("## 4 PoW")
        .nth(1)
        .and_then(|s| s.split("## 5").next())
        .expect("the PoW section");
    let examples_text = section
        .split("e.g.")
        .nth(1)
        .and_then(|s| s.split(". Each").next())
        .expect("the examples");
    let examples: Vec<String> = examples_text
        .replace('\n', " ")
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    assert!(examples.len() >= 3, "{examples:?}");
    for example in &examples {
        let (_runtime, mut app, _core, _) = pow_console();
        new_job(&mut app, example);
        app.settle();
        let frame = draw(&mut app, 120, 30);
        let status = app.status_text().unwrap_or_default().to_string();
        assert!(
            !frame.contains("failed") && !status.contains("error") && !status.contains("refused"),
            "{example}: {status}\n{frame}"
        );
        let job = example.split_whitespace().next().unwrap();
        assert!(frame.contains(&format!("1 {job}")), "{example}: {frame}");
    }
}

/// A path prompt takes 4,096 bytes at most and says so, in Plans and in Replay alike;
/// Esc closes it without opening anything.
#[test]
fn a_path_prompt_stops_at_its_limit_and_says_so() {
    for (tab, key) in [('3', 'o'), ('6', 'f')] {
        let (_rt, mut app) = console();
        press(&mut app, KeyCode::Char(tab));
        press(&mut app, KeyCode::Char(key));
        type_text(&mut app, &"a".repeat(4_096));
        let status = app.status_text().unwrap_or_default().to_string();
        assert!(!status.contains("at most"), "{tab}: {status}");
        press(&mut app, KeyCode::Char('b'));
        let status = app.status_text().unwrap_or_default().to_string();
        assert!(
            status.contains("a path is at most 4096 bytes"),
            "{tab}: {status}"
        );
        press(&mut app, KeyCode::Esc);
        let status = app.status_text().unwrap_or_default().to_string();
        assert!(!status.contains("cannot open"), "{tab}: {status}");
    }
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
    // Its schema allows true as well as strings, so the form takes JSON there: a bare
    // word is refused on its own row, which stays one row.
    type_text(&mut app, "primary");
    let frame = draw(&mut app, 120, 34);
    let rows: Vec<&str> = frame.lines().collect();
    let at = rows
        .iter()
        .position(|r| r.contains("include_references"))
        .expect("the field's row");
    assert!(rows[at].contains("✗ not JSON"), "{frame}");
    assert!(rows[at + 1].contains("max_references"), "{frame}");
    app.handle_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    type_text(&mut app, r#""primary""#);
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
