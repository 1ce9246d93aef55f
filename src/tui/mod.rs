//! The terminal console: a ratatui face on the core.
//!
//! - [`app`]: the console's state and frame (header, tabs, pane, status, hints);
//! - [`keymap`]: named commands and the keys bound to them, which the hint bar and the
//!   help overlay are drawn from;
//! - `tab`: the tabs, which the keymap and the app both name;
//! - [`theme`]: styles by role, from TOML files in `themes/`;
//! - `panes/`: one file or directory per pane, each owning its state;
//! - `widgets/`: drawing pieces several panes share (the bordered area, the box over
//!   a pane, the tree);
//! - `dispatch`: tool calls run on the tokio runtime and report back by channel, so
//!   the draw loop never waits on the core;
//! - `testing` (tests only): the desk a pane's unit tests press commands on.
//!
//! The console reaches the game only through tool calls ([`Core::call`]) and
//! [`Core::status`] for the header; it never touches a source directly.

pub mod app;
pub mod clipboard;
mod dispatch;
pub mod keymap;
mod pane;
mod panes;
pub mod stderr;
mod tab;
#[cfg(test)]
mod testing;
pub mod theme;
mod widgets;

use std::time::Duration;

use anyhow::Context as _;
use crossterm::event::{self, Event};
use tokio::runtime::Runtime;

pub use app::App;
pub use clipboard::{Clipboard, Copied, SystemClipboard, WithTerminalFallback};
pub use tab::Tab;
pub use theme::Theme;

use crate::core::Core;

/// How often the console redraws while idle, so the block height in the header ticks.
const TICK: Duration = Duration::from_millis(100);

/// How often it looks for tool results while calls are in flight.
const BUSY_TICK: Duration = Duration::from_millis(15);

/// What the console opens on, beside its core.
#[derive(Debug, Clone, Copy)]
pub enum Opening<'a> {
    /// A session log, in the Replay tab.
    Log(&'a std::path::Path),
    /// A control endpoint or a growing session log, in the Live tab; `None` for the
    /// newest live endpoint (waiting for one when there is none yet).
    Watch(Option<&'a std::path::Path>),
}

/// Runs the console on the terminal until the user quits.
///
/// Tool calls run on `runtime`; this thread only handles keys and draws. The terminal
/// is restored however this ends: on return, on error, and on panic (ratatui's panic
/// hook restores it before the panic message is printed).
///
/// # Errors
///
/// When the terminal cannot be set up, drawn to, or read from.
pub fn run(core: Core, theme: Theme, runtime: &Runtime, setup: Setup<'_>) -> anyhow::Result<()> {
    let Setup {
        switcher,
        recorder,
        open,
        attached,
        log_file,
        redaction,
    } = setup;
    let mut terminal = match ratatui::try_init() {
        Ok(terminal) => terminal,
        Err(e) => {
            // Setup may have got half way (raw mode on, no alternate screen).
            let _ = ratatui::try_restore();
            return Err(e).context("cannot set up the terminal");
        }
    };
    let _restore = RestoreOnDrop;
    // From here the terminal is the console's alone: fd 2 goes to the log file, or is
    // kept for the status line. A panic puts it back before its message is printed
    // (the hook ratatui set, which restores the terminal, runs after).
    let capture = stderr::Capture::start(log_file).ok();
    if capture.is_some() {
        let after = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            stderr::restore_now();
            after(info);
        }));
    }
    let _capture = CaptureOnDrop(capture);
    let mut app = match recorder {
        Some(recorder) => App::recording(core, theme, runtime.handle().clone(), recorder),
        None => App::new(core, theme, runtime.handle().clone()),
    };
    if let Some(switcher) = switcher {
        app = app.with_switcher(switcher);
    }
    if let Some(redaction) = redaction {
        app = app.with_redaction(redaction);
    }
    if let Some(remote) = attached {
        app = app.with_server(remote);
    }
    if let Some(capture) = &_capture.0 {
        app = app.with_stderr(capture.lines());
    }
    // Without a system clipboard (a server, SSH without X), copies go through the
    // terminal itself: an OSC 52 sequence on the output the console draws on.
    app = app.with_clipboard(Box::new(clipboard::WithTerminalFallback::new(
        Box::new(SystemClipboard::default()),
        Box::new(std::io::stdout()),
    )));
    match open {
        Some(Opening::Log(path)) => app
            .open_log(path)
            .with_context(|| format!("cannot open the session log {}", path.display()))?,
        Some(Opening::Watch(Some(what))) => app
            .watch(what)
            .with_context(|| format!("cannot watch {}", what.display()))?,
        Some(Opening::Watch(None)) => app.watch_newest(),
        None => {}
    }
    loop {
        app.tick(std::time::Instant::now());
        app.update();
        terminal
            .draw(|frame| app.render(frame))
            .context("cannot draw the console")?;
        if app.should_quit() {
            return Ok(());
        }
        let timeout = if app.pending_requests() > 0 {
            BUSY_TICK
        } else {
            TICK
        };
        if event::poll(timeout).context("cannot read terminal events")? {
            // Resizes need nothing here: the next draw fits the new size.
            if let Event::Key(key) = event::read().context("cannot read terminal events")? {
                app.handle_key(key);
            }
        }
    }
}

/// What the console starts with besides its core: all optional.
#[derive(Default)]
pub struct Setup<'a> {
    /// Switches the source from the source dialog.
    pub switcher: Option<crate::source::switch::Switcher>,
    /// Records every call the console makes (`--record`).
    pub recorder: Option<std::sync::Arc<crate::record::Recorder>>,
    /// A session log or a feed to open at start.
    pub open: Option<Opening<'a>>,
    /// The server `--connect` attached to.
    pub attached: Option<std::sync::Arc<crate::mcp::client::Remote>>,
    /// Where what is written to fd 2 goes while the console runs (`--log-file`).
    pub log_file: Option<&'a std::path::Path>,
    /// What the logs the console shows side by side never show (`[redact]`); the
    /// standard rules when none.
    pub redaction: Option<std::sync::Arc<crate::record::Redaction>>,
}

/// Gives fd 2 back when the console ends, letting the last lines reach the log file.
struct CaptureOnDrop(Option<stderr::Capture>);

impl Drop for CaptureOnDrop {
    fn drop(&mut self) {
        if let Some(capture) = self.0.take() {
            capture.finish(std::time::Duration::from_millis(200));
        }
    }
}

/// Restores the terminal when dropped, so an early `?` return leaves no raw mode.
struct RestoreOnDrop;

impl Drop for RestoreOnDrop {
    fn drop(&mut self) {
        ratatui::restore();
    }
}
