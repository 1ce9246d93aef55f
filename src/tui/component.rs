//! What every pane implements, and what the app lends a pane while it handles a key
//! or a tool result.

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::dispatch::{Dispatcher, Reply};
use super::keymap::{Command, Context, Keymap};
use super::theme::Theme;
use crate::error::ToolError;

/// The mark in front of the selected row of a list or tree. The tree's closed and open
/// nodes use `▸` and `▾`, so the selection needs a shape of its own.
pub(crate) const SELECTED_MARK: &str = "› ";

/// The commands of an area that scrolls or pages through rows.
pub(crate) const SCROLLING: [Command; 6] = [
    Command::Up,
    Command::Down,
    Command::NextPage,
    Command::PrevPage,
    Command::Top,
    Command::Bottom,
];

/// `text` cut to `width` columns, ending with `…` when cut.
pub(crate) fn fit(text: &str, width: usize) -> String {
    if ratatui::text::Span::raw(text).width() <= width {
        return text.to_string();
    }
    // Cut by columns, not characters: a wide character takes two.
    let room = width.saturating_sub(1);
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = ratatui::text::Span::raw(c.to_string()).width();
        if used + w > room {
            break;
        }
        used += w;
        out.push(c);
    }
    out.push('…');
    out
}

/// How many rows `text` takes wrapped at word edges to `width` columns (a word wider
/// than a row is broken), as a `Paragraph` wrapping without trimming draws it.
pub(crate) fn wrapped_lines(text: &str, width: usize) -> usize {
    let mut lines = 1;
    let mut used = 0;
    for word in text.split_inclusive(' ') {
        let w = ratatui::text::Span::raw(word).width();
        let fits = ratatui::text::Span::raw(word.trim_end()).width();
        if used > 0 && used + fits > width {
            lines += 1;
            used = 0;
        }
        if w > width {
            lines += (used + w - 1) / width;
            used = (used + w) % width;
        } else {
            used += w;
        }
    }
    lines
}

/// `text` in lines of at most `width` columns, broken between words (a word longer
/// than a line is cut).
pub(crate) fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let w = ratatui::text::Line::from(word).width();
        let now = ratatui::text::Line::from(line.as_str()).width();
        if !line.is_empty() && now + 1 + w > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
        while ratatui::text::Line::from(line.as_str()).width() > width {
            let cut: String = line.chars().take(width).collect();
            let rest: String = line.chars().skip(width).collect();
            lines.push(cut);
            line = rest;
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// [`fit`], padded with spaces to `width` columns.
pub(crate) fn fit_pad(text: &str, width: usize) -> String {
    let cut = fit(text, width);
    let used = ratatui::text::Span::raw(cut.as_str()).width();
    format!("{cut}{}", " ".repeat(width.saturating_sub(used)))
}

/// `12345` as `12,345`.
pub(crate) fn grouped(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Whether a pane used a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventState {
    Consumed,
    NotConsumed,
}

/// What a pane may touch while handling a key or a result: the tool dispatcher, the
/// status line, and the keymap.
pub(crate) struct Ctx<'a> {
    pub dispatcher: &'a mut Dispatcher,
    pub status: &'a mut StatusLine,
    pub keymap: &'a Keymap,
}

/// What a pane draws with.
pub(crate) struct Ui<'a> {
    pub theme: &'a Theme,
    pub keymap: &'a Keymap,
}

/// One tab's content. Panes own their state, draw themselves into the area they are
/// given, and report the commands they offer right now (the hint bar shows those).
pub(crate) trait Pane {
    /// Handles a key press; `NotConsumed` lets the app try its global keys.
    fn handle_key(&mut self, key: &KeyEvent, ctx: &mut Ctx<'_>) -> EventState;

    /// Applies a tool result if it answers one of this pane's calls.
    fn on_reply(&mut self, reply: &Reply, ctx: &mut Ctx<'_>) -> bool {
        let _ = (reply, ctx);
        false
    }

    /// The keymap context of the focused area.
    fn context(&self) -> Context;

    /// True while a text prompt takes typed characters, so plain-character global
    /// keys (`q`, `1`) do not apply.
    fn captures_text(&self) -> bool {
        false
    }

    /// The commands a key can run right now, in hint-bar order.
    fn commands(&self) -> Vec<Command>;

    /// Draws the pane.
    fn render(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>);
}

/// Runs the first of `key`'s commands in `context` that the pane `offered` now, through
/// `run`. A key bound in `context` is consumed even when none of its commands is
/// available (it does nothing); a key not bound there is left to the global keys.
pub(crate) fn dispatch(
    key: &KeyEvent,
    ctx: &mut Ctx<'_>,
    context: Context,
    offered: &[Command],
    run: impl FnOnce(Command, &mut Ctx<'_>),
) -> EventState {
    let mut bound = ctx.keymap.commands_for(context, key).peekable();
    if bound.peek().is_none() {
        return EventState::NotConsumed;
    }
    if let Some(command) = bound.find(|c| offered.contains(c)) {
        run(command, ctx);
    }
    EventState::Consumed
}

/// The longest path a file prompt takes.
pub(crate) const MAX_PATH_LEN: usize = 4096;

/// What a key did to a one-line path prompt (Plans' and Replay's `open` prompts).
pub(crate) enum PromptKey {
    /// Enter: the text typed, trimmed.
    Accept(String),
    /// Esc: the prompt closes.
    Cancel,
    /// The text was edited (or the key did nothing there).
    Edited,
    /// Not a key of the prompt.
    NotMine,
}

/// Edits `text` with `key` as a path prompt in `context` (Enter bound to the prompt's
/// open command, `OpenPlanFile` or `OpenLogFile`; `Close`, `EraseChar`, `ClearText`);
/// other plain characters are typed, up to [`MAX_PATH_LEN`] bytes.
pub(crate) fn path_prompt_key(
    text: &mut String,
    key: &KeyEvent,
    ctx: &mut Ctx<'_>,
    context: Context,
) -> PromptKey {
    match ctx.keymap.command(context, key) {
        Some(Command::OpenPlanFile | Command::OpenLogFile) => {
            PromptKey::Accept(text.trim().to_string())
        }
        Some(Command::Close) => PromptKey::Cancel,
        Some(Command::EraseChar) => {
            text.pop();
            PromptKey::Edited
        }
        Some(Command::ClearText) => {
            text.clear();
            PromptKey::Edited
        }
        Some(_) => PromptKey::Edited,
        None => match typed_char(key) {
            Some(c) if text.len() < MAX_PATH_LEN => {
                text.push(c);
                PromptKey::Edited
            }
            Some(_) => {
                ctx.status
                    .info(format!("a path is at most {MAX_PATH_LEN} bytes here"));
                PromptKey::Edited
            }
            None => PromptKey::NotMine,
        },
    }
}

/// The character a key types into a text field: a plain one, without Ctrl or Alt.
pub(crate) fn typed_char(key: &KeyEvent) -> Option<char> {
    use crossterm::event::{KeyCode, KeyModifiers};
    match key.code {
        KeyCode::Char(c)
            if !key
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
        {
            Some(c)
        }
        _ => None,
    }
}

/// How serious a status message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Level {
    Info,
    Error,
}

/// The one-line message under the pane: the outcome of the last action, or why a tool
/// call failed. Cleared by the next key press.
#[derive(Debug, Default)]
pub(crate) struct StatusLine {
    message: Option<(Level, String)>,
}

impl StatusLine {
    pub fn info(&mut self, text: impl Into<String>) {
        self.message = Some((Level::Info, text.into()));
    }

    pub fn error(&mut self, text: impl Into<String>) {
        self.message = Some((Level::Error, text.into()));
    }

    /// Reports a failed tool call: its code, message, and what the console was doing.
    pub fn tool_error(&mut self, doing: &str, error: &ToolError) {
        self.error(format!(
            "{}: {} ({doing})",
            error.code.as_str(),
            error.message
        ));
    }

    pub fn clear(&mut self) {
        self.message = None;
    }

    pub fn message(&self) -> Option<(Level, &str)> {
        self.message.as_ref().map(|(l, t)| (*l, t.as_str()))
    }
}
