//! The Handles tab: the live result handles, their pages fetched as a tree, field
//! selection and verbosity, and copying (to a clipboard, or through the terminal).

use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;
use structs_console::Core;
use structs_console::clock::WallClock;
use structs_console::source::sim::{BlockClock, SimSource, WorldConfig};
use structs_console::tui::{App, Clipboard, Copied, SystemClipboard, Tab, Theme};
use tokio::runtime::Runtime;

use crate::support::console::{assert_drawn_whole, draw, press, press_n, runtime, type_text, wall};
use crate::{Recorder, console, snapshot};

/// Like [`snapshot`], with the random part of each result handle the core holds
/// replaced by `hash0001000…`, `hash0002000…`, ... (as long as it, so the columns stay
/// where they are; its first 8 digits, as narrow rows show them, by `hash0001`) in the
/// order the handle list gives: the random part differs from run to run.
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
        let mask = crate::handle_mask(i + 1);
        frame = frame.replace(hash, &mask).replace(&hash[..8], &mask[..8]);
    }
    crate::snapshot_frame(name, description, frame);
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
    // At 120 columns a handle shows whole but for its random part, cut to 8 digits.
    let shown = format!("{}…", &handle[..handle.len() - 24]);
    assert!(frame.contains(&shown), "handles at 120 columns");
    assert!(!frame.contains(&handle), "the random part is cut");
    assert!(frame.contains("2 live · memory store"));

    // Select the players' handle and fetch its first page.
    let row = frame.lines().position(|l| l.contains(&shown)).unwrap();
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
    // The list shows a handle's random part cut to its first 8 digits.
    let shown = &handle[..handle.len() - 24];
    let row = frame.lines().position(|l| l.contains(shown)).unwrap();
    let first = frame.lines().position(|l| l.contains("structs:")).unwrap();
    press_n(&mut app, KeyCode::Down, row - first);
    press(&mut app, KeyCode::Enter);

    press(&mut app, KeyCode::Char('f'));
    type_text(&mut app, "id,name, guildId");
    snapshot_handles(
        "handles_fields_prompt_120x30",
        "The field prompt of the Handles pane, a selection typed",
        &mut app,
        &core,
        (120, 30),
    );
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.status_text(), Some("fields id,name,guildId"));
    assert!(draw(&mut app, 120, 30).contains("fields id,name,guildId ·"));

    // What the pane shows (and copies) is exactly what the tool returns.
    press(&mut app, KeyCode::Char('c'));
    let copied: serde_json::Value = serde_json::from_str(&recorder.last().unwrap()).unwrap();
    let expected = runtime
        .block_on(core.call_json(
            "structs_handle_fetch",
            json!({"handle": handle, "page": 1, "fields": "id,name,guildId"}),
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
