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

/// Draws at `width`x`height` (0 included) and checks what a user would see there:
/// nothing at a zero size; below 30x8 the notice that the terminal is too small (its
/// first row the start of the notice, no pane drawn); from 30x8 the console itself:
/// the block height in the header and the tab bar under it.
pub fn assert_drawn_whole(app: &mut App, width: u16, height: u16, state: &str) {
    let buffer = draw_buffer(app, width, height);
    let rows: Vec<String> = (0..height)
        .map(|y| (0..width).map(|x| buffer[(x, y)].symbol()).collect())
        .collect();
    let at = format!("{state} at {width}x{height}");
    if width == 0 || height == 0 {
        assert!(rows.iter().all(String::is_empty), "{at}");
        return;
    }
    let text = rows.join("\n");
    if width < 30 || height < 8 {
        let first = rows[0].trim_end();
        assert!(
            !first.is_empty()
                && ["too small", "terminal too small", "structs-console"]
                    .iter()
                    .any(|notice| notice.starts_with(first) || first.starts_with(notice)),
            "{at}: no too-small notice\n{text}"
        );
        assert!(!text.contains("Entities"), "{at}: panes drawn\n{text}");
        return;
    }
    assert!(rows[0].contains("block "), "{at}: no header\n{text}");
    assert!(
        rows[1].starts_with(" 1 ") && rows[1].contains("│ 2"),
        "{at}: no tab bar\n{text}"
    );
}

/// `12 ms`, `2.5 s`, ` 18.3s` become `#`s of the same width.
pub fn mask_times(row: &str) -> String {
    let chars: Vec<char> = row.chars().collect();
    let mut out = chars.clone();
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_ascii_digit() && (i == 0 || !chars[i - 1].is_alphanumeric()) {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                i += 1;
            }
            let rest: String = chars[i..].iter().take(3).collect();
            let unit = rest.starts_with(" ms")
                || rest.starts_with(" s ")
                || rest.starts_with(" s│")
                || rest.starts_with(" s─")
                || rest.starts_with("s ");
            if unit {
                for c in &mut out[start..i] {
                    *c = '#';
                }
            }
        } else {
            i += 1;
        }
    }
    out.into_iter().collect()
}
