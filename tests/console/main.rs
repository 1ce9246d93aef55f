//! The console, driven by keys on the demo world and drawn into ratatui's
//! `TestBackend`. Frames are insta snapshots in the top-level `snapshots/` folder; a
//! changed frame fails the test until its snapshot is reviewed and updated.
//!
//! One test binary, a module per pane; what several panes use is here. Snapshots are
//! named explicitly (and insta's module prefix is off), so a test's module does not
//! show in its snapshot's file name.

#[path = "../support/mod.rs"]
mod support;

mod actions;
mod app;
mod docs;
mod entities;
mod handles;
mod live;
mod plans;
mod pow;
mod references;
mod replay;
mod server;
mod source;
mod standin;
mod tasks;
mod themes;

use std::sync::Arc;

use crossterm::event::KeyCode;
use ratatui::buffer::Buffer;
use structs_console::clock::WallClock;
use structs_console::references::ReferenceConfig;
use structs_console::source::GameSource;
use structs_console::source::sim::{BlockClock, SimSource, WorldConfig};
use structs_console::tui::{App, Clipboard, Copied, Tab, Theme};
use tokio::runtime::Runtime;

use support::console::{draw, press, press_n, runtime, wall};

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
    snapshot_frame(name, description, draw(app, width, height));
}

/// Compares a frame already drawn (and made steady where it differs from run to run)
/// with `snapshots/{name}.snap`.
fn snapshot_frame(name: &str, description: &str, frame: String) {
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

/// The text of row `y` of the frame.
fn row_text(buffer: &Buffer, y: u16) -> String {
    (0..buffer.area.width)
        .map(|x| buffer[(x, y)].symbol())
        .collect()
}

/// What the `n`th result handle's random part (32 hex digits) is written as in a
/// snapshot: `hash0001` then zeros, as long as it, so columns stay where they are.
fn handle_mask(n: usize) -> String {
    format!("hash{n:04}{}", "0".repeat(24))
}

/// The hint bar of a 100x30 frame.
fn hint_bar(app: &mut App) -> String {
    let frame = draw(app, 100, 30);
    frame.lines().last().unwrap_or_default().to_string()
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

/// Writes `text` to a file of its own for one test and returns its path.
fn plan_file(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("structs-console-plans-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("writing a plan file");
    path.to_string_lossy().into_owned()
}

/// A console on the Plans tab with the built-in example open and durations left out
/// of the frame.
fn plans_console() -> (Runtime, App) {
    let (rt, mut app) = console();
    press(&mut app, KeyCode::Char('3'));
    assert_eq!(app.tab(), Tab::Plans);
    app.pin_plan_timing();
    (rt, app)
}
