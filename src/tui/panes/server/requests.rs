//! The Server tab's Log, Requests and Roots sections: the server's log messages and
//! the level it logs at; what the server asks of the client (a sampling request the
//! operator answers with a typed reply or rejects, an elicitation the operator
//! answers with a form built from its schema, or declines, or cancels); and the roots
//! the client offers, added and removed here.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};
use serde_json::Value;

use super::content::wrap_line;
use super::form::{Field, form_arguments, form_fields};
use super::render::{Rows, field_rows};
use super::{Mode, Section};
use crate::mcp::client::{AskKind, LOG_LEVELS, Remote, Reply as Answer, RootDir, Which};
use crate::tui::dispatch::{Reply, RequestId};
use crate::tui::keymap::Command;
use crate::tui::pane::{Ctx, Ui};
use crate::tui::theme::Role;
use crate::tui::widgets::area_block;
use crate::tui::widgets::cursor::step;
use crate::tui::widgets::text::{SELECTED_MARK, fit};

/// How many log messages the Log section keeps (the newest).
const LOG_KEEP: usize = 1_000;

/// One `notifications/message`.
struct LogLine {
    at_ms: u64,
    level: String,
    logger: String,
    text: String,
}

/// A request of these sections, waiting for its answer.
enum Pending {
    Level(&'static str),
    Roots,
}

/// The Log, Requests and Roots sections.
#[derive(Default)]
pub(super) struct Requests {
    /// Notifications read from the wire so far.
    seen: u64,
    messages: VecDeque<LogLine>,
    /// The selected level of the list, the level last set, and the least level shown
    /// (an index into [`LOG_LEVELS`]; 0 shows all).
    level_selected: usize,
    level_set: Option<&'static str>,
    filter: usize,
    /// The selected request waiting, and the one being answered.
    ask_selected: usize,
    answering: Option<(u64, AskKind, Value)>,
    reply: String,
    fields: Vec<Field>,
    field: usize,
    /// The selected root, and the path being typed.
    root_selected: usize,
    root_input: String,
    pending: HashMap<RequestId, Pending>,
}

fn level_rank(level: &str) -> usize {
    LOG_LEVELS.iter().position(|l| *l == level).unwrap_or(0)
}

impl Requests {
    /// Reads the notifications that arrived since the last frame: log messages are
    /// kept here; all are returned (with their times) for the other sections.
    pub fn absorb(&mut self, remote: &Remote) -> Vec<(u64, Value)> {
        let wire = remote.wire();
        let total = wire.notified();
        let new = usize::try_from(total.saturating_sub(self.seen)).unwrap_or(usize::MAX);
        self.seen = total;
        if new == 0 {
            return Vec::new();
        }
        let kept = wire.kept(Which::Notifications);
        let mut fresh = Vec::new();
        for note in wire.window(Which::Notifications, kept.saturating_sub(new), new) {
            if !note.method.starts_with("notifications/") {
                continue;
            }
            let Ok(v) = serde_json::from_str::<Value>(&note.text) else {
                continue;
            };
            if note.method == "notifications/message" {
                let p = &v["params"];
                let text = match &p["data"] {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                self.messages.push_back(LogLine {
                    at_ms: note.at_ms,
                    level: p["level"].as_str().unwrap_or("info").to_string(),
                    logger: p["logger"].as_str().unwrap_or("").to_string(),
                    text,
                });
                while self.messages.len() > LOG_KEEP {
                    self.messages.pop_front();
                }
            }
            fresh.push((note.at_ms, v));
        }
        fresh
    }

    pub fn move_in(&mut self, section: Section, delta: isize, remote: Option<&Remote>) {
        let step = |at: usize, len: usize| step(at, delta, len);
        match section {
            Section::Log => self.level_selected = step(self.level_selected, LOG_LEVELS.len()),
            Section::Requests => {
                let len = remote.map_or(0, |r| r.asks().count());
                self.ask_selected = step(self.ask_selected, len);
            }
            _ => {
                let len = remote.map_or(0, |r| r.roots().len());
                self.root_selected = step(self.root_selected, len);
            }
        }
    }

    pub fn move_field(&mut self, delta: isize) {
        if !self.fields.is_empty() {
            self.field = self
                .field
                .saturating_add_signed(delta)
                .min(self.fields.len() - 1);
        }
    }

    pub fn type_char(&mut self, c: char) {
        if self
            .answering
            .as_ref()
            .is_some_and(|a| a.1 == AskKind::Elicitation)
        {
            if let Some(f) = self.fields.get_mut(self.field) {
                f.type_char(c);
            }
        } else if self.answering.is_some() {
            self.reply.push(c);
        } else {
            self.root_input.push(c);
        }
    }

    pub fn erase(&mut self, all: bool) {
        let text = if self
            .answering
            .as_ref()
            .is_some_and(|a| a.1 == AskKind::Elicitation)
        {
            match self.fields.get_mut(self.field) {
                Some(f) => &mut f.text,
                None => return,
            }
        } else if self.answering.is_some() {
            &mut self.reply
        } else {
            &mut self.root_input
        };
        if all {
            text.clear();
        } else {
            text.pop();
        }
    }

    pub fn commands(&self, section: Section, mode: Mode, remote: Option<&Remote>) -> Vec<Command> {
        let typing = [Command::EraseChar, Command::ClearText, Command::Back];
        let list = [
            Command::Up,
            Command::Down,
            Command::Top,
            Command::Bottom,
            Command::Back,
        ];
        match (section, mode) {
            (Section::Log, _) => {
                [&list[..], &[Command::SetLogLevel, Command::CycleLogFilter]].concat()
            }
            (Section::Requests, Mode::Form) => [
                &[
                    Command::Up,
                    Command::Down,
                    Command::AcceptRequest,
                    Command::DeclineRequest,
                    Command::CancelRequest,
                ][..],
                &typing,
            ]
            .concat(),
            (Section::Requests, Mode::Input) => {
                [&[Command::SendReply, Command::RejectRequest][..], &typing].concat()
            }
            (Section::Requests, _) => {
                let mut c = list.to_vec();
                if remote.is_some_and(|r| r.asks().count() > 0) {
                    c.push(Command::AnswerRequest);
                }
                c
            }
            (Section::Roots, Mode::Input) => [&[Command::ConfirmRoot][..], &typing].concat(),
            _ => {
                let mut c = list.to_vec();
                c.push(Command::AddRoot);
                if remote.is_some_and(|r| !r.roots().is_empty()) {
                    c.push(Command::RemoveRoot);
                }
                c
            }
        }
    }

    /// Runs a command of these sections; the mode to show next, when it changes.
    pub fn run(
        &mut self,
        section: Section,
        command: Command,
        remote: &Arc<Remote>,
        ctx: &mut Ctx<'_>,
    ) -> Option<Mode> {
        let _ = section;
        match command {
            Command::SetLogLevel => {
                self.set_log_level(remote, ctx);
                None
            }
            Command::CycleLogFilter => {
                self.filter = (self.filter + 1) % LOG_LEVELS.len();
                ctx.status.info(format!(
                    "showing log messages at {} and above",
                    LOG_LEVELS[self.filter]
                ));
                None
            }
            Command::AnswerRequest => self.start_answering(remote),
            Command::AcceptRequest => self.accept(remote, ctx),
            Command::DeclineRequest => self.answer(remote, Answer::Decline, "declined", ctx),
            Command::CancelRequest => self.answer(remote, Answer::Cancel, "cancelled", ctx),
            Command::SendReply => {
                let text = self.reply.clone();
                self.answer(remote, Answer::Sampled(text), "replied to", ctx)
            }
            Command::RejectRequest => self.answer(remote, Answer::Reject, "rejected", ctx),
            Command::AddRoot => {
                self.root_input.clear();
                Some(Mode::Input)
            }
            Command::ConfirmRoot => self.add_typed_root(remote, ctx),
            Command::RemoveRoot => {
                self.remove_selected_root(remote, ctx);
                None
            }
            _ => None,
        }
    }

    /// Asks the server to log at the selected level, when it offers logging.
    fn set_log_level(&mut self, remote: &Arc<Remote>, ctx: &mut Ctx<'_>) {
        let level = LOG_LEVELS[self.level_selected.min(LOG_LEVELS.len() - 1)];
        if !remote.server_info()["capabilities"]["logging"].is_object() {
            ctx.status.error("the server does not offer logging");
            return;
        }
        let r = remote.clone();
        let id = ctx
            .dispatcher
            .spawn_task(async move { r.set_log_level(level).await });
        self.pending.insert(id, Pending::Level(level));
    }

    /// Starts answering the selected request: an elicitation's form, its fields at
    /// their defaults, or an empty reply; the mode to answer it in.
    fn start_answering(&mut self, remote: &Arc<Remote>) -> Option<Mode> {
        let waiting = remote.asks().waiting();
        let (seq, kind, params) = waiting.get(self.ask_selected)?.clone();
        if kind == AskKind::Elicitation {
            let mut fields = form_fields(&params["requestedSchema"]);
            // A field starts at its default, so accepting sends it.
            for f in &mut fields {
                if let Some(d) = &f.default {
                    f.text = d.as_str().map_or_else(|| d.to_string(), str::to_string);
                }
            }
            self.fields = fields;
            self.field = 0;
        } else {
            self.reply.clear();
        }
        self.answering = Some((seq, kind, params));
        Some(if kind == AskKind::Elicitation {
            Mode::Form
        } else {
            Mode::Input
        })
    }

    /// Accepts the elicitation with the form's content, once every field parses and
    /// every required one is filled in.
    fn accept(&mut self, remote: &Arc<Remote>, ctx: &mut Ctx<'_>) -> Option<Mode> {
        let content = match form_arguments(&self.fields) {
            Ok(v) => v,
            Err((field, why)) => {
                if let Some(i) = self.fields.iter().position(|f| f.name == field) {
                    self.field = i;
                }
                ctx.status.error(format!("{field}: {why}"));
                return None;
            }
        };
        if let Some(missing) = self
            .fields
            .iter()
            .find(|f| f.required && f.text.trim().is_empty())
        {
            ctx.status.error(format!("{} is required", missing.name));
            return None;
        }
        self.answer(remote, Answer::Accept(content), "accepted", ctx)
    }

    /// Adds the directory typed (`~/` at the home directory) to the roots offered; the
    /// list again once it is a directory.
    fn add_typed_root(&mut self, remote: &Arc<Remote>, ctx: &mut Ctx<'_>) -> Option<Mode> {
        let typed = self.root_input.trim().to_string();
        let path = match typed.strip_prefix("~/") {
            Some(rest) => std::env::var_os("HOME")
                .map(|h| std::path::PathBuf::from(h).join(rest))
                .unwrap_or_else(|| typed.clone().into()),
            None => typed.clone().into(),
        };
        match RootDir::from_dir(&path) {
            Ok(root) => {
                let mut roots = remote.roots();
                if !roots.contains(&root) {
                    roots.push(root);
                }
                self.set_roots(roots, remote, ctx);
                Some(Mode::List)
            }
            Err(e) => {
                ctx.status.error(e);
                None
            }
        }
    }

    /// Takes the selected root out of the roots offered.
    fn remove_selected_root(&mut self, remote: &Arc<Remote>, ctx: &mut Ctx<'_>) {
        let mut roots = remote.roots();
        if self.root_selected < roots.len() {
            roots.remove(self.root_selected);
            self.root_selected = self.root_selected.min(roots.len().saturating_sub(1));
            self.set_roots(roots, remote, ctx);
        }
    }

    fn answer(
        &mut self,
        remote: &Arc<Remote>,
        reply: Answer,
        said: &str,
        ctx: &mut Ctx<'_>,
    ) -> Option<Mode> {
        let (seq, kind, _) = self.answering.take()?;
        if remote.asks().answer(seq, reply) {
            ctx.status
                .info(format!("{said} the server's {}", kind.method()));
        } else {
            ctx.status.error(format!(
                "the server no longer waits for this {}",
                kind.method()
            ));
        }
        Some(Mode::List)
    }

    fn set_roots(&mut self, roots: Vec<RootDir>, remote: &Arc<Remote>, ctx: &mut Ctx<'_>) {
        let r = remote.clone();
        let id = ctx
            .dispatcher
            .spawn_task(async move { r.set_roots(roots).await.map(|()| Value::Null) });
        self.pending.insert(id, Pending::Roots);
    }

    pub fn on_reply(&mut self, reply: &Reply, ctx: &mut Ctx<'_>) -> bool {
        let Some(pending) = self.pending.remove(&reply.id) else {
            return false;
        };
        match (pending, &reply.result) {
            (Pending::Level(level), Ok(_)) => {
                self.level_set = Some(level);
                ctx.status
                    .info(format!("the server logs at {level} and above"));
            }
            (Pending::Level(level), Err(e)) => {
                ctx.status
                    .tool_error(&format!("setting the log level {level}"), e);
            }
            (Pending::Roots, Ok(_)) => ctx.status.info("the server was told the roots changed"),
            (Pending::Roots, Err(e)) => ctx.status.tool_error("telling the server the roots", e),
        }
        true
    }

    pub fn render(
        &mut self,
        section: Section,
        mode: Mode,
        remote: Option<&Remote>,
        area: Rect,
        buf: &mut Buffer,
        ui: &Ui<'_>,
    ) {
        let Some(remote) = remote else { return };
        match section {
            Section::Log => self.render_log(area, buf, ui),
            Section::Requests => match mode {
                Mode::Form | Mode::Input => self.render_answering(mode, area, buf, ui),
                _ => self.render_asks(remote, area, buf, ui),
            },
            _ => self.render_roots(mode, remote, area, buf, ui),
        }
    }

    /// The Log section: the levels beside the server's log messages.
    fn render_log(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let levels_w = 22.min(area.width / 3).max(14);
        let [left, right] =
            Layout::horizontal([Constraint::Length(levels_w), Constraint::Min(0)]).areas(area);
        self.render_levels(left, buf, ui);
        self.render_messages(right, buf, ui);
    }

    /// The levels the server may log at, the selected one marked and the one set
    /// dotted.
    fn render_levels(&self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let block = area_block(ui, " Level ", true);
        let inner = block.inner(area);
        block.render(area, buf);
        let width = usize::from(inner.width);
        for (k, level) in LOG_LEVELS
            .iter()
            .enumerate()
            .take(usize::from(inner.height))
        {
            let set = self.level_set == Some(*level);
            let text = format!(
                "{}{level}{}",
                if k == self.level_selected {
                    SELECTED_MARK
                } else {
                    "  "
                },
                if set { " ●" } else { "" }
            );
            let role = if k == self.level_selected {
                Role::Selected
            } else if set {
                Role::Info
            } else {
                Role::Text
            };
            buf.set_stringn(
                inner.x,
                inner.y + k as u16,
                format!("{:<width$}", fit(&text, width)),
                width,
                theme.style(role),
            );
        }
    }

    /// The log messages at the level shown and above, the newest at the bottom.
    fn render_messages(&self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let shown: Vec<&LogLine> = self
            .messages
            .iter()
            .filter(|m| level_rank(&m.level) >= self.filter)
            .collect();
        let title = format!(
            " Log messages {} · shown from {} up{} ",
            shown.len(),
            LOG_LEVELS[self.filter],
            match self.level_set {
                Some(l) => format!(" · server at {l}"),
                None => " · server at its own level".into(),
            }
        );
        let block = area_block(ui, &title, false);
        let inner = block.inner(area);
        block.render(area, buf);
        let rows = usize::from(inner.height);
        let width = usize::from(inner.width);
        if shown.is_empty() {
            buf.set_stringn(
                inner.x,
                inner.y,
                fit(
                    "No log messages yet. Enter sets the level the server logs at.",
                    width,
                ),
                width,
                theme.style(Role::Muted),
            );
            return;
        }
        // The newest at the bottom, each message whole: a long one wraps, and the
        // lines of one with several go on under it. As many whole messages as fit; one
        // taller than the pane shows its start.
        let mut wrapped: Vec<(Role, String)> = Vec::new();
        for m in shown.iter().rev() {
            if wrapped.len() >= rows {
                break;
            }
            let own = message_rows(m, width);
            if !wrapped.is_empty() && wrapped.len() + own.len() > rows {
                break;
            }
            wrapped.splice(0..0, own);
        }
        for (k, (role, text)) in wrapped.iter().take(rows).enumerate() {
            buf.set_stringn(
                inner.x,
                inner.y + k as u16,
                fit(text, width),
                width,
                theme.style(*role),
            );
        }
    }

    fn render_asks(&mut self, remote: &Remote, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let waiting = remote.asks().waiting();
        self.ask_selected = self.ask_selected.min(waiting.len().saturating_sub(1));
        let narrow = area.width < 60;
        let [left, right] = if narrow {
            let [a, b] = Layout::vertical([Constraint::Length(4), Constraint::Min(0)]).areas(area);
            [a, b]
        } else {
            Layout::horizontal([Constraint::Percentage(35), Constraint::Min(0)]).areas(area)
        };
        let title = match remote.asks().refused() {
            0 => format!(" Waiting {} ", waiting.len()),
            n => format!(" Waiting {} · {n} refused: too many ", waiting.len()),
        };
        let block = area_block(ui, &title, true);
        let inner = block.inner(left);
        block.render(left, buf);
        let width = usize::from(inner.width);
        if waiting.is_empty() {
            buf.set_stringn(
                inner.x,
                inner.y,
                fit("Nothing asked yet.", width),
                width,
                theme.style(Role::Muted),
            );
        }
        for (k, (seq, kind, _)) in waiting.iter().enumerate().take(usize::from(inner.height)) {
            let text = format!(
                "{}#{seq} {}",
                if k == self.ask_selected {
                    SELECTED_MARK
                } else {
                    "  "
                },
                kind.method()
            );
            buf.set_stringn(
                inner.x,
                inner.y + k as u16,
                format!("{:<width$}", fit(&text, width)),
                width,
                theme.style(if k == self.ask_selected {
                    Role::Selected
                } else {
                    Role::Text
                }),
            );
        }
        let block = area_block(ui, " The request ", false);
        let inner = block.inner(right);
        block.render(right, buf);
        let lines = match waiting.get(self.ask_selected) {
            Some((_, kind, params)) => ask_lines(*kind, params, theme),
            None => vec![Line::from(Span::styled(
                "A server asks here for a model's reply (sampling) or the user's input \
                 (elicitation); Enter answers the selected request.",
                theme.style(Role::Muted),
            ))],
        };
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .render(inner, buf);
    }

    fn render_answering(&self, mode: Mode, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let Some((seq, kind, params)) = &self.answering else {
            return;
        };
        let [top, bottom] = if area.height >= 12 {
            Layout::vertical([Constraint::Percentage(50), Constraint::Min(0)]).areas(area)
        } else {
            [Rect::default(), area]
        };
        if top.height > 0 {
            let block = area_block(ui, &format!(" #{seq} {} ", kind.method()), false);
            Paragraph::new(ask_lines(*kind, params, theme))
                .wrap(Wrap { trim: false })
                .block(block)
                .render(top, buf);
        }
        let mut lines: Vec<Line<'_>> = Vec::new();
        let title = if mode == Mode::Input {
            lines.push(Line::from(vec![
                Span::styled("reply ", theme.style(Role::Field)),
                Span::styled(self.reply.clone(), theme.style(Role::Value)),
                Span::styled("▏", theme.style(Role::Prompt)),
            ]));
            lines.push(Line::from(Span::styled(
                "Enter sends it as the assistant's message; Ctrl-R rejects the request",
                theme.style(Role::Muted),
            )));
            " Your reply, as the model "
        } else {
            if self.fields.is_empty() {
                lines.push(Line::from(Span::styled(
                    "The form has no fields; Enter accepts.",
                    theme.style(Role::Muted),
                )));
            }
            let rows = Rows {
                kind: true,
                hints: false,
                errors: true,
                name_max: 20,
            };
            let room = usize::from(bottom.height).saturating_sub(5).max(1);
            lines.extend(field_rows(
                &self.fields,
                self.field,
                rows,
                bottom.width,
                room,
                theme,
            ));
            if let Some(f) = self.fields.get(self.field) {
                lines.push(Line::from(Span::styled(
                    f.about(),
                    theme.style(Role::Muted),
                )));
            }
            lines.push(Line::from(Span::styled(
                "Enter accepts · Ctrl-D declines · Ctrl-X cancels",
                theme.style(Role::Muted),
            )));
            " Answer the form "
        };
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(area_block(ui, title, true))
            .render(bottom, buf);
    }

    fn render_roots(
        &mut self,
        mode: Mode,
        remote: &Remote,
        area: Rect,
        buf: &mut Buffer,
        ui: &Ui<'_>,
    ) {
        let theme = ui.theme;
        let roots = remote.roots();
        let (list, input) = if mode == Mode::Input {
            let [a, b] = Layout::vertical([Constraint::Min(0), Constraint::Length(3)]).areas(area);
            (a, Some(b))
        } else {
            (area, None)
        };
        let block = area_block(
            ui,
            &format!(" Roots offered to the server {} ", roots.len()),
            mode == Mode::List,
        );
        let inner = block.inner(list);
        block.render(list, buf);
        let width = usize::from(inner.width);
        if roots.is_empty() {
            buf.set_stringn(
                inner.x,
                inner.y,
                fit(
                    "No roots: a adds a directory (or start with --root DIR).",
                    width,
                ),
                width,
                theme.style(Role::Muted),
            );
        }
        self.root_selected = self.root_selected.min(roots.len().saturating_sub(1));
        for (k, root) in roots.iter().enumerate().take(usize::from(inner.height)) {
            let text = format!(
                "{}{}  {}",
                if k == self.root_selected {
                    SELECTED_MARK
                } else {
                    "  "
                },
                root.name.as_deref().unwrap_or(""),
                root.uri
            );
            buf.set_stringn(
                inner.x,
                inner.y + k as u16,
                format!("{:<width$}", fit(&text, width)),
                width,
                theme.style(if k == self.root_selected && mode == Mode::List {
                    Role::Selected
                } else {
                    Role::Text
                }),
            );
        }
        if let Some(input) = input {
            let line = Line::from(vec![
                Span::styled("directory ", theme.style(Role::Field)),
                Span::styled(self.root_input.clone(), theme.style(Role::Value)),
                Span::styled("▏", theme.style(Role::Prompt)),
            ]);
            Paragraph::new(line)
                .block(area_block(ui, " Add a root ", true))
                .render(input, buf);
        }
    }
}

/// A line `k v`, the name as a field and the value as a value.
/// A log message as its rows `width` wide, in its level's role: its time, level and
/// logger before its first line, the lines after it indented under it.
fn message_rows(m: &LogLine, width: usize) -> Vec<(Role, String)> {
    let role = match level_rank(&m.level) {
        0 => Role::Muted,
        1 | 2 => Role::Text,
        3 => Role::Info,
        _ => Role::Error,
    };
    let logger = if m.logger.is_empty() {
        String::new()
    } else {
        format!(" {}", m.logger)
    };
    let head = format!("{:>7.1}s {:<9}{logger}  ", m.at_ms as f64 / 1e3, m.level);
    let pad = " ".repeat(head.chars().count().min(width / 2));
    let mut own = Vec::new();
    for (k, line) in m.text.lines().enumerate() {
        let text = if k == 0 {
            format!("{head}{line}")
        } else {
            format!("{pad}{line}")
        };
        own.extend(wrap_line(&text, width).into_iter().map(|row| (role, row)));
    }
    own
}

fn field_line(theme: &crate::tui::theme::Theme, k: &str, v: String) -> Line<'static> {
    Line::from(vec![
        Span::styled(format!("{k} "), theme.style(Role::Field)),
        Span::styled(v, theme.style(Role::Value)),
    ])
}

/// A request from the server, described: a sampling request's messages with their
/// roles, its system prompt, model preferences and token limit; an elicitation's
/// message and the fields it asks for.
fn ask_lines(
    kind: AskKind,
    params: &Value,
    theme: &crate::tui::theme::Theme,
) -> Vec<Line<'static>> {
    let mut lines = match kind {
        AskKind::Sampling => sampling_lines(params, theme),
        AskKind::Elicitation => elicitation_lines(params, theme),
    };
    lines.push(Line::default());
    lines.push(Line::from(Span::styled(
        match kind {
            AskKind::Sampling => "Enter: type the reply the model would give, or reject it",
            AskKind::Elicitation => "Enter: fill in the form, then accept, decline or cancel",
        },
        theme.style(Role::Muted),
    )));
    lines
}

/// A `sampling/createMessage`: its messages, then what it asks of the model.
fn sampling_lines(params: &Value, theme: &crate::tui::theme::Theme) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    let field = |k: &str, v: String| field_line(theme, k, v);
    for m in params["messages"].as_array().cloned().unwrap_or_default() {
        let content = &m["content"];
        let text = match content["text"].as_str() {
            Some(t) => t.to_string(),
            None => format!("({} content)", content["type"].as_str().unwrap_or("?")),
        };
        // A message of several lines shows each on its own (a span would
        // draw the line breaks as nothing).
        let mut said = text.lines();
        lines.push(Line::from(vec![
            Span::styled(
                format!("{}: ", m["role"].as_str().unwrap_or("?")),
                theme.style(Role::Title),
            ),
            Span::styled(
                said.next().unwrap_or("").to_string(),
                theme.style(Role::Text),
            ),
        ]));
        lines
            .extend(said.map(|l| Line::from(Span::styled(l.to_string(), theme.style(Role::Text)))));
    }
    if let Some(s) = params["systemPrompt"].as_str() {
        lines.push(field("system prompt", s.to_string()));
    }
    if let Some(n) = params["maxTokens"].as_u64() {
        lines.push(field("max tokens", n.to_string()));
    }
    let prefs = &params["modelPreferences"];
    if prefs.is_object() {
        let hints: Vec<&str> = prefs["hints"]
            .as_array()
            .map(|h| h.iter().filter_map(|x| x["name"].as_str()).collect())
            .unwrap_or_default();
        let mut said = Vec::new();
        if !hints.is_empty() {
            said.push(format!("hints {}", hints.join(", ")));
        }
        for key in ["costPriority", "speedPriority", "intelligencePriority"] {
            if let Some(p) = prefs[key].as_f64() {
                said.push(format!("{key} {p}"));
            }
        }
        lines.push(field("model preferences", said.join(" · ")));
    }
    if let Some(t) = params["temperature"].as_f64() {
        // Sent as a 32-bit float: 0.7 arrives as 0.699999988…
        let t = format!("{t:.3}");
        lines.push(field(
            "temperature",
            t.trim_end_matches('0').trim_end_matches('.').to_string(),
        ));
    }
    if let Some(c) = params["includeContext"].as_str() {
        lines.push(field("include context", c.to_string()));
    }
    lines
}

/// An `elicitation/create`: its message, then the form's fields (`*` required).
fn elicitation_lines(params: &Value, theme: &crate::tui::theme::Theme) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    let field = |k: &str, v: String| field_line(theme, k, v);
    lines.push(Line::from(Span::styled(
        params["message"].as_str().unwrap_or("").to_string(),
        theme.style(Role::Text),
    )));
    let schema = &params["requestedSchema"];
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Some(props) = schema["properties"].as_object() {
        for (name, p) in props {
            let mut about = p["type"].as_str().unwrap_or("any").to_string();
            if let Some(format) = p["format"].as_str() {
                about = format!("{about} ({format})");
            }
            if let Some(e) = p["enum"].as_array() {
                let e: Vec<String> = e.iter().map(|v| v.to_string()).collect();
                about = format!("{about} [{}]", e.join("|"));
            }
            if let Some(d) = p.get("default") {
                about = format!("{about} (default {d})");
            }
            lines.push(field(
                &format!(
                    "  {name}{}",
                    if required.contains(&name.as_str()) {
                        "*"
                    } else {
                        ""
                    }
                ),
                about,
            ));
        }
    }
    lines
}
