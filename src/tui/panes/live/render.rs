//! Drawing the Live pane: the calls as a list (session, tool, state, duration, size)
//! and the selected call: what is known of it, its tree, and the references its
//! answer carries; side by side when there is room, else one at a time.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Widget};

use super::{Focus, LivePane};
use crate::record::live::{Hold, LiveCall, Status};
use crate::tui::keymap::{Command, Scope};
use crate::tui::pane::Ui;
use crate::tui::theme::{Role, Theme};
use crate::tui::widgets::area_block;
use crate::tui::widgets::page::cut_handle;
use crate::tui::widgets::text::{SELECTED_MARK, fit, fit_pad, grouped};

/// The least height that shows the list above the selected call.
const STACKED: u16 = 20;

/// Below [`STACKED`], the least width that shows them side by side.
const SIDE_BY_SIDE: u16 = 120;

/// The least width of the call's area that shows its references beside it.
const REFERENCES_BESIDE: u16 = 90;

/// Narrower, the least height that shows them under it.
const REFERENCES_UNDER: u16 = 18;

/// The width of the state column: a progress bar, or an error code (longer ones cut).
const STATE_W: usize = 20;

/// A size in bytes as a person reads it.
fn size(bytes: usize) -> String {
    match bytes {
        b if b < 1_000 => format!("{b} B"),
        b if b < 1_000_000 => format!("{:.1} kB", b as f64 / 1e3),
        b => format!("{:.1} MB", b as f64 / 1e6),
    }
}

/// A duration in milliseconds as a person reads it.
fn took(ms: f64) -> String {
    if ms < 1_000.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{:.2} s", ms / 1e3)
    }
}

/// A call's state in a few characters: its progress while it runs.
fn state(call: &LiveCall) -> String {
    if let Some(hold) = &call.held {
        return format!("⏸ held ({})", hold.way);
    }
    if call.injected.is_some() {
        // Running, too: its answer was kept from the agent, which waits on.
        return format!("↯{}", call.status.word());
    }
    match (&call.status, &call.progress) {
        (Status::Running, Some(p)) => match p.total.filter(|t| *t > 0.0) {
            Some(total) => {
                let pct = (p.progress / total * 100.0).clamp(0.0, 100.0);
                let filled = (pct / 20.0).round() as usize;
                format!(
                    "{}{} {pct:>3.0}%",
                    "█".repeat(filled),
                    "░".repeat(5 - filled)
                )
            }
            None => match &p.message {
                // A task's word on itself: a search's iterations, rate and best.
                Some(said) => format!("working · {said}"),
                None => format!("running {}", p.progress),
            },
        },
        (status, _) => status.word().to_string(),
    }
}

fn role_of(call: &LiveCall) -> Role {
    if call.held.is_some() {
        return Role::Prompt;
    }
    match &call.status {
        Status::Running => Role::Info,
        Status::Answered => Role::Text,
        Status::Failed(_) => Role::Error,
        Status::Cancelled => Role::Muted,
    }
}

impl LivePane {
    pub(super) fn render_pane(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let area = self.render_prompt(area, buf, ui);
        if self.editing.is_some() {
            // The list stays above the editor when there is room.
            if area.height >= STACKED {
                let [list, editor] =
                    Layout::vertical([Constraint::Percentage(35), Constraint::Min(0)]).areas(area);
                self.render_list(list, buf, ui);
                self.render_editor(editor, buf, ui);
            } else {
                self.render_editor(area, buf, ui);
            }
            return;
        }
        if self.rows.is_empty() {
            self.render_list(area, buf, ui);
        } else if area.height >= STACKED {
            let [list, detail] =
                Layout::vertical([Constraint::Percentage(50), Constraint::Min(0)]).areas(area);
            self.render_list(list, buf, ui);
            self.render_detail(detail, buf, ui);
        } else if area.width >= SIDE_BY_SIDE {
            let [list, detail] =
                Layout::horizontal([Constraint::Percentage(55), Constraint::Min(0)]).areas(area);
            self.render_list(list, buf, ui);
            self.render_detail(detail, buf, ui);
        } else if self.focus != Focus::Calls {
            self.render_detail(area, buf, ui);
        } else {
            self.render_list(area, buf, ui);
        }
    }

    /// The filter or endpoint prompt on the last line, when open; the rest.
    fn render_prompt(&self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) -> Rect {
        let theme = ui.theme;
        let (label, text, scope, accept) = if let Some(text) = &self.prompt {
            (
                "watch (empty: the newest live endpoint): ",
                text.as_str(),
                Scope::LivePrompt,
                Command::OpenLogFile,
            )
        } else if self.filtering {
            (
                "filter (#session, tool, status): ",
                self.filter.as_str(),
                Scope::LiveFilter,
                Command::KeepFilter,
            )
        } else {
            return area;
        };
        if area.height < 2 {
            return area;
        }
        let [main, line] =
            Layout::vertical([Constraint::Min(0), Constraint::Length(1)]).areas(area);
        let key = ui.keymap.key_label(scope, accept).unwrap_or_default();
        Line::from(vec![
            Span::styled(label, theme.style(Role::Prompt)),
            Span::styled(text.to_string(), theme.style(Role::Value)),
            Span::styled("▏", theme.style(Role::Prompt)),
            Span::styled(format!("  {key} done"), theme.style(Role::Muted)),
        ])
        .render(line, buf);
        main
    }

    /// The calls, a row each, under the feed's title and counts (or on the timeline).
    fn render_list(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        if self.timeline.is_some() && !self.rows.is_empty() {
            self.render_timeline(area, buf, ui);
            return;
        }
        let theme = ui.theme;
        let focused = self.focus == Focus::Calls;
        let footer = self.list_footer();
        let block = area_block(
            ui,
            &fit(
                &self.list_title(),
                usize::from(area.width).saturating_sub(4),
            ),
            focused,
        )
        .title_bottom(
            Line::from(Span::styled(
                fit(
                    &format!(" {} ", footer.join(" · ")),
                    usize::from(area.width).saturating_sub(2),
                ),
                theme.style(Role::Muted),
            ))
            .right_aligned(),
        );
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.height < 2 || inner.width < 12 {
            return;
        }
        if self.live.calls().is_empty() || self.rows.is_empty() {
            Paragraph::new(self.no_rows_text(ui))
                .wrap(ratatui::widgets::Wrap { trim: true })
                .style(theme.style(Role::Muted))
                .render(inner, buf);
            return;
        }
        let rows = usize::from(inner.height - 1);
        self.cursor.scroll_filled(rows, self.rows.len());
        let columns = self.columns(usize::from(inner.width));
        self.render_rows(&columns, inner, buf, theme);
    }

    /// The list's title: the server watched, else the feed, else just the tab.
    fn list_title(&self) -> String {
        match (&self.watch.feed, &self.live.about) {
            (_, Some(about)) => format!(
                " Live · {} {} ",
                about["server"].as_str().unwrap_or("server"),
                about["description"].as_str().unwrap_or("")
            ),
            (Some(feed), None) => format!(" Live · {} ", feed.what.display()),
            (None, None) => " Live ".to_string(),
        }
    }

    /// The list's footer: whether the feed is followed, the sessions and calls, and
    /// those running, failed, cancelled, held, missed or unread.
    fn list_footer(&self) -> Vec<String> {
        let [running, _, failed, cancelled] = self.live.counts();
        let mut footer = vec![
            if self.watch.waiting.is_some() && self.watch.feed.is_some() {
                "ended; waiting for the next endpoint".to_string()
            } else if let Some(why) = self.watch.feed.as_ref().and_then(|f| f.ended.as_ref()) {
                format!("ended: {why}")
            } else if self.follow {
                "following".into()
            } else {
                "paused".into()
            },
            format!(
                "{} session{}",
                self.live.sessions().len(),
                if self.live.sessions().len() == 1 {
                    ""
                } else {
                    "s"
                }
            ),
            format!("{} calls", grouped(self.live.calls().len())),
        ];
        if !self.filter.is_empty() {
            footer.push(format!("{} shown", grouped(self.rows.len())));
        }
        for (n, word) in [
            (running, "running"),
            (failed, "failed"),
            (cancelled, "cancelled"),
        ] {
            if n > 0 {
                footer.push(format!("{n} {word}"));
            }
        }
        if !self.live.breakpoints.is_empty() {
            footer.push(format!(
                "{} breakpoint{}",
                self.live.breakpoints.len(),
                if self.live.breakpoints.len() == 1 {
                    ""
                } else {
                    "s"
                }
            ));
        }
        let held = self.live.held().count();
        if held > 0 {
            footer.push(format!("{held} held"));
        }
        if self.live.missed > 0 {
            footer.push(format!("{} lines missed", self.live.missed));
        }
        if self.live.bad_lines > 0 {
            footer.push(format!("{} bad lines", self.live.bad_lines));
        }
        footer
    }

    /// What the list says when it has no rows: no call matches the filter, it waits
    /// for an endpoint or for calls, or it watches nothing.
    fn no_rows_text(&self, ui: &Ui<'_>) -> String {
        if !self.live.calls().is_empty() {
            format!("No call matches the filter {:?}.", self.filter)
        } else if self.watch.waiting.is_some() {
            format!(
                "Waiting for a live endpoint in {}: an agent's host starting `structs-console proxy -- …`, or a server run with `--headless --control`.",
                crate::mcp::control::default_dir().display()
            )
        } else if self.watch.feed.is_none() {
            let key = ui
                .keymap
                .key_label(Scope::Live, Command::OpenLog)
                .unwrap_or_default();
            format!(
                "Watching nothing. {key} watches a control endpoint (a proxy's socket) or a session log; so does `structs-console watch`."
            )
        } else {
            "Waiting for calls…".to_string()
        }
    }

    /// The list's columns for a list `width` wide: the tool column takes what its
    /// longest name needs; the state column the rest (an error code is long), at least
    /// its own least width.
    fn columns(&self, width: usize) -> Columns {
        let session_w = format!("#{}", self.live.sessions().len()).len();
        let narrow = width < 60;
        let state_least = if narrow { 11 } else { STATE_W };
        let others = 2 + session_w + 1 + 1 + if narrow { 0 } else { 1 + 9 + 1 + 8 };
        let calls = self.live.calls();
        let tool_need = self
            .rows
            .iter()
            .filter_map(|i| calls.get(*i))
            .map(|c| c.tool.trim_start_matches("structs_").chars().count())
            .max()
            .unwrap_or(0)
            .max(4);
        let tool_w = tool_need
            .min(width.saturating_sub(others + state_least))
            .max(4);
        Columns {
            session: session_w,
            tool: tool_w,
            state: width.saturating_sub(others + tool_w).max(state_least),
            narrow,
        }
    }

    /// The heading and the rows in view under it, the selected one marked.
    fn render_rows(&self, columns: &Columns, inner: Rect, buf: &mut Buffer, theme: &Theme) {
        let focused = self.focus == Focus::Calls;
        let rows = usize::from(inner.height - 1);
        let width = usize::from(inner.width);
        let calls = self.live.calls();
        buf.set_stringn(
            inner.x,
            inner.y,
            columns.head(),
            width,
            theme.style(Role::Muted),
        );
        for (k, index) in self
            .rows
            .iter()
            .skip(self.cursor.top)
            .take(rows)
            .enumerate()
        {
            let Some(call) = calls.get(*index) else {
                continue;
            };
            let row = self.cursor.top + k;
            let chosen = row == self.cursor.selected;
            let mark = if chosen { SELECTED_MARK } else { "  " };
            let text = columns.row(mark, call);
            let y = inner.y + 1 + k as u16;
            let role = if chosen {
                if focused {
                    Role::Selected
                } else {
                    Role::SelectedInactive
                }
            } else {
                role_of(call)
            };
            if chosen {
                buf.set_style(Rect::new(inner.x, y, inner.width, 1), theme.style(role));
            }
            buf.set_stringn(inner.x, y, &text, width, theme.style(role));
        }
    }

    fn render_editor(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let Some(editing) = &mut self.editing else {
            return;
        };
        let what = match (editing.kind, editing.on_response) {
            (super::EditKind::Arguments, _) => "the arguments to send the server",
            (super::EditKind::Answer, true) => "the answer to give the agent instead",
            (super::EditKind::Answer, false) => "the result to answer with",
            (super::EditKind::Error, _) => "the error to answer with",
            (super::EditKind::Round, _) => "the answers to the server's questions",
        };
        let title = format!(" {} · {what} ", editing.title);
        let block = area_block(
            ui,
            &fit(&title, usize::from(area.width).saturating_sub(4)),
            true,
        );
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.height == 0 {
            return;
        }
        let send = ui
            .keymap
            .key_label(Scope::LiveEdit, Command::SendEdit)
            .unwrap_or_default();
        // A problem (a refusal with its reason) wraps to three rows, so it is read
        // whole; the text keeps at least two.
        let foot_h = editing.problem.as_ref().map_or(1, |p| {
            let rows = crate::tui::widgets::text::wrapped_lines(
                &format!("✗ {p}"),
                usize::from(inner.width.max(1)),
            )
            .clamp(1, 3);
            (rows as u16).min(inner.height.saturating_sub(2)).max(1)
        });
        let (text_area, foot) = if inner.height > 2 {
            let [t, f] =
                Layout::vertical([Constraint::Min(0), Constraint::Length(foot_h)]).areas(inner);
            (t, Some(f))
        } else {
            (inner, None)
        };
        editing.area.render(
            text_area,
            buf,
            theme.style(Role::Value),
            theme.style(Role::Selected),
        );
        if let Some(foot) = foot {
            let (text, role) = match &editing.problem {
                Some(p) => (format!("✗ {p}"), Role::Error),
                None => (
                    format!("{send} sends it; Esc leaves it, the call still held"),
                    Role::Muted,
                ),
            };
            Paragraph::new(Line::from(Span::styled(text, theme.style(role))))
                .wrap(ratatui::widgets::Wrap { trim: false })
                .render(foot, buf);
        }
    }

    /// The selected call, and beside it (or under it) the references its answer
    /// carries; where there is room for one area only, the focused one.
    fn render_detail(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        self.sync_detail();
        if self.detail.references.is_some() {
            if area.width >= REFERENCES_BESIDE {
                let [call, references] =
                    Layout::horizontal([Constraint::Percentage(55), Constraint::Min(0)])
                        .areas(area);
                self.render_call(call, buf, ui, true);
                self.render_references(references, buf, ui);
                return;
            }
            if area.height >= REFERENCES_UNDER {
                let [call, references] =
                    Layout::vertical([Constraint::Percentage(55), Constraint::Min(0)]).areas(area);
                self.render_call(call, buf, ui, true);
                self.render_references(references, buf, ui);
                return;
            }
            if self.focus == Focus::References {
                self.render_references(area, buf, ui);
                return;
            }
        }
        self.render_call(area, buf, ui, false);
    }

    fn render_references(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let focused = self.focus == Focus::References;
        if focused {
            self.tree_page = usize::from(area.height.saturating_sub(2));
        }
        if let Some(references) = &mut self.detail.references {
            references.render(area, buf, ui, area_block(ui, "", focused), focused);
        }
    }

    /// The call: what is known of it in a few lines, then its tree. `references_shown`
    /// says whether its references are on show beside it.
    fn render_call(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>, references_shown: bool) {
        let theme = ui.theme;
        let focused = self.focus == Focus::Detail;
        let Some((_, call)) = self.selected() else {
            area_block(ui, " call ", focused).render(area, buf);
            return;
        };
        let title = format!(" #{} call {} · {} ", call.session, call.call, call.tool);
        let block = area_block(
            ui,
            &fit(&title, usize::from(area.width).saturating_sub(4)),
            focused,
        );
        let inner = block.inner(area);
        block.render(area, buf);
        let mut lines = vec![outcome_line(call, theme)];
        if let Some(hold) = &call.held {
            lines.extend(held_lines(hold, ui));
        }
        lines.extend(story_lines(call, theme));
        lines.extend(self.answer_notes(call, ui, references_shown));
        if !call.ts.is_empty() {
            lines.push(Line::from(Span::styled(
                format!("sent {}", call.ts),
                theme.style(Role::Muted),
            )));
        }
        // At most half the room, so that the tree always shows.
        let head_h = (lines.len() as u16).min(inner.height.div_ceil(2));
        let [head, tree] =
            Layout::vertical([Constraint::Length(head_h), Constraint::Min(0)]).areas(inner);
        let shown = one_row_each(lines, usize::from(head_h), usize::from(head.width));
        Paragraph::new(shown).render(head, buf);
        if focused {
            self.tree_page = usize::from(tree.height);
        }
        self.detail
            .view
            .render(tree, buf, ui, Block::default(), focused);
    }

    /// What the call's answer calls for: over the size limit, the handle the whole of
    /// it waits under (until fetched); with references not on show, where they are.
    fn answer_notes(
        &self,
        call: &LiveCall,
        ui: &Ui<'_>,
        references_shown: bool,
    ) -> Vec<Line<'static>> {
        let theme = ui.theme;
        let mut lines = Vec::new();
        // An answer over the size limit: the whole of it waits under its handle.
        if let Some(handle) = super::handle_of(call)
            && self
                .fetch
                .as_ref()
                .is_none_or(|f| f.key != (call.session, call.call))
        {
            let key = ui
                .keymap
                .key_label(Scope::LiveDetail, Command::Inspect)
                .unwrap_or_default();
            lines.push(Line::from(Span::styled(
                format!(
                    "over 25 KB: stored whole under {}; {key} fetches it here",
                    cut_handle(handle)
                ),
                theme.style(Role::Info),
            )));
        }
        if self.detail.references.is_some() && !references_shown {
            let key = ui
                .keymap
                .key_label(Scope::LiveDetail, Command::FocusNext)
                .unwrap_or_default();
            lines.push(Line::from(Span::styled(
                format!("the answer carries references: their tree is the next area ({key})"),
                theme.style(Role::Info),
            )));
        }
        lines
    }
}

/// The widths of the list's columns, and whether it is too narrow for the time taken
/// and the size.
struct Columns {
    session: usize,
    tool: usize,
    state: usize,
    narrow: bool,
}

impl Columns {
    /// The heading row.
    fn head(&self) -> String {
        let (session_w, tool_w, state_w) = (self.session, self.tool, self.state);
        if self.narrow {
            format!(
                "  {:<session_w$} {} {:<state_w$}",
                "s",
                fit_pad("tool", tool_w),
                "state"
            )
        } else {
            format!(
                "  {:<session_w$} {} {:<state_w$} {:>9} {:>8}",
                "s",
                fit_pad("tool", tool_w),
                "state",
                "took",
                "size"
            )
        }
    }

    /// A call's row after `mark`: its session, tool and state, then (when there is
    /// room) the time it took and its size.
    fn row(&self, mark: &str, call: &LiveCall) -> String {
        let (session_w, tool_w, state_w) = (self.session, self.tool, self.state);
        let mut text = format!(
            "{mark}{:<session_w$} {} {}",
            format!("#{}", call.session),
            fit_pad(call.tool.trim_start_matches("structs_"), tool_w),
            fit_pad(&state(call), state_w),
        );
        if !self.narrow {
            text.push_str(&format!(
                " {:>9} {:>8}",
                call.duration_ms.map_or(String::new(), took),
                call.size.map_or(String::new(), size)
            ));
        }
        text
    }
}

/// The call's first line: how it ended (or that it runs), how long it took and the
/// size of its answer.
fn outcome_line(call: &LiveCall, theme: &Theme) -> Line<'static> {
    let mut head = vec![Span::styled(
        match &call.status {
            Status::Running => "running".to_string(),
            Status::Answered => "answered".to_string(),
            Status::Failed(code) => format!("failed: {code}"),
            Status::Cancelled => "cancelled".to_string(),
        },
        theme.style(role_of(call)),
    )];
    if let Some(ms) = call.duration_ms {
        head.push(Span::styled(
            format!(" · {}", took(ms)),
            theme.style(Role::Muted),
        ));
    }
    if let Some(bytes) = call.size {
        head.push(Span::styled(
            format!(" · {}", size(bytes)),
            theme.style(Role::Muted),
        ));
    }
    Line::from(head)
}

/// A held call's lines: what is held and for how long, and the keys that release it.
fn held_lines(hold: &Hold, ui: &Ui<'_>) -> Vec<Line<'static>> {
    let theme = ui.theme;
    let keys: Vec<String> = [
        (Command::ContinueHeld, "continue"),
        (Command::EditHeld, "edit"),
        (Command::AnswerHeld, "answer"),
        (Command::ErrorHeld, "error"),
        (Command::DropHeld, "drop"),
    ]
    .iter()
    .filter_map(|(c, word)| {
        ui.keymap
            .key_label(Scope::LiveDetail, *c)
            .map(|k| format!("{k} {word}"))
    })
    .collect();
    vec![
        Line::from(Span::styled(
            format!(
                "held at a breakpoint ({}, hold {}): goes on by itself after {} s",
                if hold.way == "response" {
                    "the answer, not given to the agent yet"
                } else {
                    "the request, not sent to the server yet"
                },
                hold.id,
                hold.timeout_ms / 1000
            ),
            theme.style(Role::Prompt),
        )),
        Line::from(Span::styled(keys.join(" · "), theme.style(Role::Info))),
    ]
}

/// What happened along the call: an answer put in the server's place, a release from
/// a breakpoint, the rounds of input, and its progress while it runs.
pub(super) fn story_lines(call: &LiveCall, theme: &Theme) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    if let Some(trace) = &call.trace_id {
        lines.push(Line::from(vec![
            Span::styled("trace ", theme.style(Role::Field)),
            Span::styled(trace.clone(), theme.style(Role::Value)),
        ]));
    }
    if let Some(what) = &call.injected {
        lines.push(Line::from(Span::styled(
            if call.status == Status::Running {
                format!("↯ the server answered; the agent got nothing ({what}) and waits on")
            } else {
                format!("↯ not the server's answer: {what}")
            },
            theme.style(Role::Prompt),
        )));
    }
    if let Some(how) = &call.released {
        lines.push(Line::from(Span::styled(
            format!("released from a breakpoint: {how}"),
            theme.style(Role::Muted),
        )));
    }
    // The rounds of input the server asked for before it answered (2026-07-28).
    for round in &call.rounds {
        lines.push(Line::from(Span::styled(
            round_line(round),
            theme.style(Role::Info),
        )));
    }
    if call.status == Status::Running
        && let Some(p) = &call.progress
    {
        let of = p.total.map_or(String::new(), |t| format!(" of {t}"));
        let message = p
            .message
            .as_deref()
            .map_or(String::new(), |m| format!(" · {m}"));
        lines.push(Line::from(Span::styled(
            format!("progress {}{of}{message}", p.progress),
            theme.style(Role::Info),
        )));
    }
    lines
}

/// The first `rows` lines, one row a line: those longer than `width` are cut, in the
/// style of their first span.
fn one_row_each(lines: Vec<Line<'static>>, rows: usize, width: usize) -> Vec<Line<'static>> {
    lines
        .into_iter()
        .take(rows)
        .map(|line| {
            let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
            if Span::raw(text.as_str()).width() <= width {
                line
            } else {
                let style = line.spans.first().map(|s| s.style).unwrap_or_default();
                Line::from(Span::styled(fit(&text, width), style))
            }
        })
        .collect()
}

/// One round of input in a line (what the server asked, and what the agent answered),
/// or one status of the task the call became.
fn round_line(round: &serde_json::Value) -> String {
    if let Some(task) = round["task"].as_str() {
        return format!(
            "task {}: {}",
            task.get(..8).unwrap_or(task),
            round["status"].as_str().unwrap_or("?")
        );
    }
    let asked: Vec<String> = round["inputRequests"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(_, r)| match r["params"]["message"].as_str() {
            Some(message) => format!("{} {message:?}", r["method"].as_str().unwrap_or("?")),
            None => r["method"].as_str().unwrap_or("?").to_string(),
        })
        .collect();
    let answered: Vec<String> = match round["inputResponses"].as_object() {
        None => vec!["nothing: the call was not sent again".into()],
        Some(given) => given
            .values()
            .map(|a| match (a["action"].as_str(), &a["content"]) {
                (Some(action), serde_json::Value::Null) => action.to_string(),
                (Some(action), content) => format!("{action} {content}"),
                (None, _) if a["roots"].is_array() => {
                    format!("{} roots", a["roots"].as_array().map_or(0, Vec::len))
                }
                (None, _) => match a["content"]["text"].as_str() {
                    Some(text) => format!("reply {text:?}"),
                    None => a.to_string(),
                },
            })
            .collect(),
    };
    format!(
        "round {}: asked {} · answered {}",
        round["round"].as_u64().unwrap_or(0),
        asked.join(", "),
        answered.join(", ")
    )
}
