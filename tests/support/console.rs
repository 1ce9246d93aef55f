//! The console driven by keys and drawn into ratatui's `TestBackend`: what the console
//! tests share.

use chrono::{TimeZone, Utc};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use structs_console::tui::App;
use tokio::runtime::Runtime;

/// A two-worker runtime, as small as the machine.
pub fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// The wall clock the snapshots are taken at.
pub fn wall() -> chrono::DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 21, 10, 0, 0)
        .single()
        .expect("valid instant")
}

/// Presses a key and waits for the tool calls it started.
pub fn press(app: &mut App, code: KeyCode) {
    app.handle_key(KeyEvent::new(code, KeyModifiers::NONE));
    app.settle();
}

pub fn press_n(app: &mut App, code: KeyCode, times: usize) {
    for _ in 0..times {
        press(app, code);
    }
}

pub fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        press(app, KeyCode::Char(c));
    }
}

/// The frame at `width`x`height`.
pub fn draw_buffer(app: &mut App, width: u16, height: u16) -> Buffer {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test terminal");
    terminal
        .draw(|frame| app.render(frame))
        .expect("drawing into a TestBackend");
    terminal.backend().buffer().clone()
}

/// The frame at `width`x`height`, as text (`TestBackend`'s display: one quoted line
/// per row). Width must not be 0: ratatui's text view cannot show such a buffer.
pub fn draw(app: &mut App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test terminal");
    terminal
        .draw(|frame| app.render(frame))
        .expect("drawing into a TestBackend");
    terminal.backend().to_string()
}
