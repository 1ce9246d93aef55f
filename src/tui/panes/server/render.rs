//! Drawing the Server pane: the summary, the tool list, a tool's arguments, the call
//! form, the answer, and the notifications and traffic.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};
use serde_json::Value;

use super::content::{cut_rows, wrap_lines};
use super::form::Field;
use super::{Call, Mode, Section, ServerPane, form_arguments, form_fields};
use crate::context::ProgressUpdate;
use crate::mcp::client::{Direction, WireMessage};
use crate::tui::pane::Ui;
use crate::tui::theme::{Role, Theme};
use crate::tui::widgets::area_block;
use crate::tui::widgets::cursor::Cursor;
use crate::tui::widgets::text::{SELECTED_MARK, fit, fit_spans};

/// What a form's field rows show besides the name and the text.
#[derive(Clone, Copy)]
pub(super) struct Rows {
    /// The field's type, in a column after its name.
    pub(super) kind: bool,
    /// An empty field not being typed in shows its default, or `—`.
    pub(super) hints: bool,
    /// A field whose text does not parse shows why, cut to the row.
    pub(super) errors: bool,
    /// The widest the name column may be.
    pub(super) name_max: usize,
}

/// The width of a form's name column: the longest name and a space, at most `max`.
pub(super) fn name_width(fields: &[Field], max: usize) -> usize {
    fields
        .iter()
        .map(|f| f.name.len() + 1)
        .max()
        .unwrap_or(0)
        .min(max)
}

/// A form's fields as rows `width` wide, the `selected` one marked: as many as `room`
/// holds, scrolled as the one cursor scrolls a list, so the selected field is on show.
pub(super) fn field_rows(
    fields: &[Field],
    selected: usize,
    rows: Rows,
    width: u16,
    room: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let name_w = name_width(fields, rows.name_max);
    let top = Cursor {
        selected,
        ..Cursor::default()
    }
    .scroll(room);
    fields
        .iter()
        .enumerate()
        .skip(top)
        .take(room)
        .map(|(i, f)| field_row(f, i == selected, name_w, rows, width, theme))
        .collect()
}

/// One field of a form, as one row `width` wide: the mark, the name, then what
/// `rows` says to show.
pub(super) fn field_row(
    f: &Field,
    selected: bool,
    name_w: usize,
    rows: Rows,
    width: u16,
    theme: &Theme,
) -> Line<'static> {
    let mut spans = vec![
        Span::styled(
            if selected { SELECTED_MARK } else { "  " },
            theme.style(Role::Prompt),
        ),
        Span::styled(
            format!("{:<name_w$} ", fit(&f.label(), name_w)),
            theme.style(if selected {
                Role::Selected
            } else {
                Role::Field
            }),
        ),
    ];
    if rows.kind {
        spans.push(Span::styled(
            format!("{:<8}", f.kind.label()),
            theme.style(Role::Muted),
        ));
        spans.push(Span::raw(" "));
    }
    if rows.hints && f.text.is_empty() && !selected {
        let hint = f
            .default
            .as_ref()
            .map_or("—".to_string(), |d| format!("default {d}"));
        spans.push(Span::styled(hint, theme.style(Role::Muted)));
    } else {
        spans.push(Span::styled(f.text.clone(), theme.style(Role::Value)));
        if selected {
            spans.push(Span::styled("▏", theme.style(Role::Prompt)));
            if let Some(hint) = f.placeholder() {
                spans.push(Span::styled(hint, theme.style(Role::Muted)));
            }
        }
    }
    if rows.errors
        && let Err(why) = f.value()
    {
        // A field stays one row: its error is cut to the room left (the whole error
        // is said under the fields).
        let used: usize = spans.iter().map(Span::width).sum();
        let room = usize::from(width).saturating_sub(used);
        spans.push(Span::styled(
            fit(&format!("  ✗ {why}"), room),
            theme.style(Role::Error),
        ));
    }
    Line::from(spans)
}

/// A duration as a person reads it: `840 ms`, `2.4 s`.
fn took(d: std::time::Duration) -> String {
    if d.as_millis() < 1_000 {
        format!("{} ms", d.as_millis())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

/// `text` in lines of at most `width` characters, broken between words (a word
/// longer than a line is broken inside).
pub(super) fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let mut word: Vec<char> = word.chars().collect();
        while word.len() > width {
            if !line.is_empty() {
                lines.push(std::mem::take(&mut line));
            }
            lines.push(word.drain(..width).collect());
        }
        let word: String = word.into_iter().collect();
        let len = line.chars().count();
        if len > 0 && len + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&word);
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

impl ServerPane {
    pub(super) fn render_summary(&self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let mut spans = Vec::new();
        match &self.remote {
            Some(r) => {
                let info = r.server_info();
                // What the server is and offers first; where it runs (often a long
                // command, also in the header) last, where a narrow screen cuts it.
                spans.push(Span::styled(
                    match info["serverInfo"]["name"].as_str() {
                        Some(name) => format!(
                            " {name} {}",
                            info["serverInfo"]["version"].as_str().unwrap_or("")
                        ),
                        None => " an MCP server".to_string(),
                    },
                    theme.style(Role::Text),
                ));
                if let Some(v) = info["protocolVersion"].as_str() {
                    // A stateless server's handshake was `server/discover`.
                    let era = if info["supportedVersions"].is_array() {
                        " (stateless)"
                    } else {
                        ""
                    };
                    spans.push(Span::styled(
                        format!(" · protocol {v}{era}"),
                        theme.style(Role::Muted),
                    ));
                }
                if let Some(extensions) = info["capabilities"]["extensions"].as_object()
                    && !extensions.is_empty()
                {
                    let names: Vec<&str> = extensions
                        .keys()
                        .map(|k| k.rsplit('/').next().unwrap_or(k))
                        .collect();
                    spans.push(Span::styled(
                        format!(" · {}", names.join(", ")),
                        theme.style(Role::Muted),
                    ));
                }
                let mut offers = format!(" · {} tools", self.tools.len());
                if info["capabilities"]["prompts"].is_object() {
                    offers.push_str(&format!(" · {} prompts", r.prompts().len()));
                }
                if info["capabilities"]["completions"].is_object() {
                    offers.push_str(" · completions");
                }
                spans.push(Span::styled(
                    format!(
                        "{offers} · {} messages · {} notifications",
                        r.wire().total(),
                        r.wire().notified()
                    ),
                    theme.style(Role::Muted),
                ));
                if !r.is_connected() {
                    spans.push(Span::styled(" · disconnected", theme.style(Role::Error)));
                }
                spans.push(Span::styled(
                    format!(" · attached to {}", r.target().describe()),
                    theme.style(Role::Muted),
                ));
            }
            None => {
                spans.push(Span::styled(" embedded core", theme.style(Role::Text)));
                spans.push(Span::styled(
                    format!(
                        " · {} tools · calls go to the core directly; --connect attaches to a server",
                        self.tools.len()
                    ),
                    theme.style(Role::Muted),
                ));
            }
        }
        Line::from(fit_spans(spans, usize::from(area.width))).render(area, buf);
    }

    pub(super) fn render_tools(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let mut title = format!(" Tools ({})", self.tools.len());
        if self.searching {
            title.push_str(&format!(" · search: {}▏", self.tool_search));
        }
        title.push(' ');
        let block = area_block(ui, &title, self.mode == Mode::List);
        let inner = block.inner(area);
        block.render(area, buf);
        let rows = usize::from(inner.height);
        if rows == 0 {
            return;
        }
        if self.mode == Mode::List {
            self.page = rows;
        }
        self.tool_list.scroll(rows);
        let width = usize::from(inner.width);
        for (k, tool) in self
            .tools
            .iter()
            .enumerate()
            .skip(self.tool_list.top)
            .take(rows)
        {
            let y = inner.y + (k - self.tool_list.top) as u16;
            let selected = k == self.tool_list.selected;
            let (mark, role) = match (selected, self.mode == Mode::List) {
                (true, true) => (SELECTED_MARK, Role::Selected),
                (true, false) => (SELECTED_MARK, Role::SelectedInactive),
                _ => ("  ", Role::Text),
            };
            let text = format!("{mark}{}", tool.name);
            buf.set_stringn(
                inner.x,
                y,
                format!("{:<width$}", fit(&text, width)),
                width,
                theme.style(role),
            );
        }
    }

    pub(super) fn render_tool(&self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let Some(tool) = self.tools.get(self.tool_list.selected) else {
            let block = area_block(ui, " Tool ", false);
            Paragraph::new(Span::styled(
                "The server lists no tools.",
                theme.style(Role::Muted),
            ))
            .block(block)
            .render(area, buf);
            return;
        };
        let block = area_block(ui, &format!(" {} ", tool.name), false);
        let inner = block.inner(area);
        block.render(area, buf);
        let width = usize::from(inner.width);
        let mut lines: Vec<Line<'_>> = wrap(tool.description, width)
            .into_iter()
            .map(|l| Line::from(Span::styled(l, theme.style(Role::Text))))
            .collect();
        lines.push(Line::default());
        let fields = form_fields(&tool.schema);
        if fields.is_empty() {
            lines.push(Line::from(Span::styled(
                "No arguments.",
                theme.style(Role::Muted),
            )));
        } else {
            lines.push(Line::from(Span::styled(
                "Arguments (* required)",
                theme.style(Role::Title),
            )));
            let name_w = fields.iter().map(|f| f.name.len() + 1).max().unwrap_or(0);
            // Name and type, then the description wrapped in its own column.
            let indent = 2 + name_w + 1 + 8 + 1;
            for f in &fields {
                let name = f.label();
                let wrapped = wrap(&f.about(), width.saturating_sub(indent).max(12));
                for (k, text) in wrapped.into_iter().enumerate() {
                    let head = if k == 0 {
                        vec![
                            Span::styled(format!("  {name:<name_w$} "), theme.style(Role::Field)),
                            Span::styled(
                                format!("{:<8} ", f.kind.label()),
                                theme.style(Role::Value),
                            ),
                        ]
                    } else {
                        vec![Span::raw(" ".repeat(indent))]
                    };
                    let mut spans = head;
                    spans.push(Span::styled(text, theme.style(Role::Muted)));
                    lines.push(Line::from(spans));
                }
            }
        }
        lines.push(Line::default());
        lines.push(Line::from(Span::styled(
            "Enter fills in a call from this schema.",
            theme.style(Role::Muted),
        )));
        let rows = usize::from(inner.height);
        if lines.len() > rows && rows > 0 {
            lines.truncate(rows - 1);
            lines.push(Line::from(Span::styled(
                "… more: Enter shows every argument in the form",
                theme.style(Role::Muted),
            )));
        }
        Paragraph::new(lines).render(inner, buf);
    }

    pub(super) fn render_form(&self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let name = self
            .tools
            .get(self.tool_list.selected)
            .map_or("", |t| t.name);
        let block = area_block(ui, &format!(" Call {name} "), true);
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.height == 0 {
            return;
        }
        let mut lines = Vec::new();
        if self.fields.is_empty() {
            lines.push(Line::from(Span::styled(
                "This tool takes no arguments; Enter calls it.",
                theme.style(Role::Muted),
            )));
        }
        let rows = Rows {
            kind: true,
            hints: true,
            errors: true,
            name_max: 28,
        };
        let room = usize::from(inner.height).saturating_sub(4).max(1);
        lines.extend(field_rows(
            &self.fields,
            self.field,
            rows,
            inner.width,
            room,
            theme,
        ));
        lines.push(Line::default());
        match form_arguments(&self.fields) {
            Ok(args) => lines.push(Line::from(vec![
                Span::styled("arguments ", theme.style(Role::Field)),
                Span::styled(args.to_string(), theme.style(Role::Value)),
            ])),
            Err((field, why)) => lines.push(Line::from(Span::styled(
                format!("{field}: {why}"),
                theme.style(Role::Error),
            ))),
        }
        if let Some(f) = self.fields.get(self.field) {
            lines.push(Line::from(Span::styled(
                f.about(),
                theme.style(Role::Muted),
            )));
        }
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .render(inner, buf);
    }

    /// The call on show: its arguments and trail, then its answer or its progress.
    pub(super) fn render_result(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let Some(call) = self.shown_call() else {
            return;
        };
        let block = area_block(ui, &format!(" {} ", result_title(call)), true);
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.height < 2 {
            return;
        }
        let width = usize::from(inner.width);
        let head = story_rows(call, inner);
        for (k, (role, row)) in head.iter().enumerate() {
            buf.set_stringn(inner.x, inner.y + k as u16, row, width, theme.style(*role));
        }
        let top = inner.y + head.len() as u16;
        let left = inner.height.saturating_sub(head.len() as u16);
        if left == 0 {
            return;
        }
        let rest = Rect::new(inner.x, top, inner.width, left);
        let Some(answer) = &call.answer else {
            self.render_running(call, rest, buf, theme);
            return;
        };
        let (Ok(lines) | Err(lines)) = answer;
        let lines = wrap_lines(lines, width);
        self.render_answer(&lines, rest, area, buf, theme);
    }

    /// A running call: a gauge when the server said how much there is, else a spinner
    /// with its message; and how to stop it.
    fn render_running(&self, call: &Call, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let width = usize::from(area.width);
        let spinner = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"][self.tick % 10];
        let progress = call
            .progress
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let elapsed = took(super::since(self.wall, call.started));
        let line = progress_text(progress, spinner, &elapsed, width);
        buf.set_stringn(
            area.x,
            area.y,
            fit(&line, width),
            width,
            theme.style(Role::Info),
        );
        if area.height > 1 {
            let is_task = call
                .trail
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .any(|e| e.get("task").is_some());
            let hint = if is_task {
                "x asks the server to stop the task (tasks/cancel)"
            } else {
                "x cancels the call"
            };
            buf.set_stringn(
                area.x,
                area.y + 1,
                fit(hint, width),
                width,
                theme.style(Role::Muted),
            );
        }
    }

    /// The answer's `lines` in `area`, scrolled; where they do not all fit, which of
    /// them show, on the bottom border of the `pane`.
    fn render_answer(
        &mut self,
        lines: &[(Role, String)],
        area: Rect,
        pane: Rect,
        buf: &mut Buffer,
        theme: &Theme,
    ) {
        let width = usize::from(area.width);
        let rows = usize::from(area.height);
        self.page = rows;
        let first = self.result_scroll.shown_filled(rows, lines.len());
        for (k, (role, line)) in lines.iter().skip(first).take(rows).enumerate() {
            buf.set_stringn(area.x, area.y + k as u16, line, width, theme.style(*role));
        }
        if lines.len() > rows {
            let note = format!(
                " lines {}-{} of {} ",
                first + 1,
                (first + rows).min(lines.len()),
                lines.len()
            );
            let x = pane.right().saturating_sub(note.len() as u16 + 2);
            buf.set_string(x, pane.bottom() - 1, note, theme.style(Role::Muted));
        }
    }

    /// The sections of the tab, the one on show marked; cut to the current one and
    /// its place where the line is narrow.
    pub(super) fn render_sections(&self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let sections = self.sections();
        let waiting = self.remote.as_ref().map_or(0, |r| r.asks().count());
        let label = |s: Section| match s {
            Section::Requests if waiting > 0 => format!("Requests {waiting}!"),
            Section::History => format!("History {}", self.history.len()),
            other => other.title().to_string(),
        };
        let full: usize = sections.iter().map(|s| label(*s).len() + 3).sum();
        let mut spans = Vec::new();
        if full <= usize::from(area.width) {
            for s in &sections {
                let role = if *s == self.section {
                    Role::Selected
                } else if *s == Section::Requests && waiting > 0 {
                    Role::Error
                } else {
                    Role::Muted
                };
                spans.push(Span::styled(format!(" {} ", label(*s)), theme.style(role)));
                spans.push(Span::raw(" "));
            }
        } else {
            let at = sections
                .iter()
                .position(|s| *s == self.section)
                .unwrap_or(0);
            spans.push(Span::styled(
                format!(" {} ", label(self.section)),
                theme.style(Role::Selected),
            ));
            spans.push(Span::styled(
                format!(" {}/{} · Tab", at + 1, sections.len()),
                theme.style(Role::Muted),
            ));
            if waiting > 0 && self.section != Section::Requests {
                spans.push(Span::styled(
                    format!(" · {waiting} request!"),
                    theme.style(Role::Error),
                ));
            }
        }
        Line::from(spans).render(area, buf);
    }

    /// Every call made from the Tools section, the newest last.
    pub(super) fn render_history(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let block = area_block(ui, &format!(" Calls {} ", self.history.len()), true);
        let inner = block.inner(area);
        block.render(area, buf);
        let rows = usize::from(inner.height);
        let width = usize::from(inner.width);
        if rows == 0 {
            return;
        }
        self.page = rows;
        if self.history.is_empty() {
            buf.set_stringn(
                inner.x,
                inner.y,
                fit("No calls yet: the Tools section makes them.", width),
                width,
                theme.style(Role::Muted),
            );
            return;
        }
        self.history_list.selected = self.history_list.selected.min(self.history.len() - 1);
        self.history_list.scroll(rows);
        for (k, call) in self
            .history
            .iter()
            .enumerate()
            .skip(self.history_list.top)
            .take(rows)
        {
            let (mark, role) = match &call.answer {
                None => ("…", Role::Info),
                Some(Ok(_)) => ("✓", Role::Text),
                Some(Err(_)) => ("✗", Role::Error),
            };
            let time = call.took.map_or_else(|| "running".to_string(), took);
            let trail =
                super::trail::trail_mark(&call.trail.lock().unwrap_or_else(|e| e.into_inner()));
            let text = format!(
                "{}{mark} {:>9} {}{}  {}",
                if k == self.history_list.selected {
                    SELECTED_MARK
                } else {
                    "  "
                },
                time,
                call.tool,
                if trail.is_empty() {
                    String::new()
                } else {
                    format!(" ({trail})")
                },
                call.args
            );
            buf.set_stringn(
                inner.x,
                inner.y + (k - self.history_list.top) as u16,
                format!("{:<width$}", fit(&text, width)),
                width,
                theme.style(if k == self.history_list.selected {
                    Role::Selected
                } else {
                    role
                }),
            );
        }
    }

    /// The notifications or the traffic, a row each, and the selected message whole
    /// under them when expanded.
    pub(super) fn render_log(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let notifications = self.section == Section::Notifications;
        let len = self.log_len();
        if self.follow || self.log_list.selected >= len {
            self.log_list.selected = len.saturating_sub(1);
        }
        let (list_area, detail_area) = if self.expanded && area.height >= 10 {
            let [a, b] =
                Layout::vertical([Constraint::Percentage(45), Constraint::Min(0)]).areas(area);
            (a, Some(b))
        } else {
            (area, None)
        };
        let block = area_block(ui, &self.log_heading(len), true);
        let inner = block.inner(list_area);
        block.render(list_area, buf);
        let rows = usize::from(inner.height);
        if rows == 0 {
            return;
        }
        self.page = rows;
        if len == 0 {
            buf.set_stringn(
                inner.x,
                inner.y,
                if notifications {
                    "No notifications yet."
                } else {
                    "No messages yet."
                },
                usize::from(inner.width),
                theme.style(Role::Muted),
            );
            return;
        }
        // Never scrolled past a full window: the last rows fill the pane to its bottom
        // (the two views share the scroll, and one may be shorter than the other).
        self.log_list.scroll_filled(rows, len);
        let width = usize::from(inner.width);
        let (Some(remote), Some(which)) = (&self.remote, self.which()) else {
            return;
        };
        let shown = remote
            .wire()
            .window_matching(which, &self.log_filter, self.log_list.top, rows);
        for (j, m) in shown.iter().enumerate() {
            let k = self.log_list.top + j;
            let (text, role) = message_row(m, k == self.log_list.selected);
            buf.set_stringn(
                inner.x,
                inner.y + j as u16,
                format!("{:<width$}", fit(&text, width)),
                width,
                theme.style(role),
            );
        }
        let selected =
            remote
                .wire()
                .window_matching(which, &self.log_filter, self.log_list.selected, 1);
        if let (Some(detail), Some(m)) = (detail_area, selected.first()) {
            render_message(m, detail, buf, ui);
        }
    }

    /// The title of the notifications or the traffic: how many messages are listed (of
    /// how many, when filtered), whether the console's own polling is hidden, and the
    /// search.
    fn log_heading(&self, len: usize) -> String {
        let notifications = self.section == Section::Notifications;
        let title = if notifications {
            "Notifications (and the server's stderr)"
        } else {
            "JSON-RPC traffic"
        };
        let mut heading = format!(" {title} · {len}");
        if let (Some(remote), Some(which)) = (&self.remote, self.which())
            && !self.log_filter.is_empty()
        {
            heading.push_str(&format!(" of {}", remote.wire().kept(which)));
        }
        if self.log_filter.hide_background && !notifications {
            heading.push_str(" · the console's own polling hidden");
        }
        if self.searching || !self.log_filter.text.is_empty() {
            heading.push_str(&format!(" · search: {}", self.log_filter.text));
            if self.searching {
                heading.push('▏');
            }
        }
        heading.push(' ');
        heading
    }
}

/// The result's title: the tool, and whether it is being called, being cancelled, or
/// answered (with how long it took).
fn result_title(call: &Call) -> String {
    match (&call.answer, call.took) {
        (None, _) if call.cancelling => format!("{} · cancelling…", call.tool),
        (None, _) => format!("{} · calling…", call.tool),
        (Some(Ok(_)), Some(t)) => format!("{} · result · {}", call.tool, took(t)),
        (Some(Err(_)), Some(t)) => format!("{} · error · {}", call.tool, took(t)),
        (Some(Ok(_)), None) => format!("{} · result", call.tool),
        (Some(Err(_)), None) => format!("{} · error", call.tool),
    }
}

/// The rows above a call's answer in `inner`: its arguments, then its trail, with a
/// rule under the trail where there is room.
fn story_rows(call: &Call, inner: Rect) -> Vec<(Role, String)> {
    let width = usize::from(inner.width);
    // The arguments whole where they fit in a few rows (a third of the pane at
    // most), the answer under them.
    let mut head: Vec<(Role, String)> = cut_rows(&format!("arguments {}", call.args), width)
        .into_iter()
        .map(|row| (Role::Muted, row))
        .collect();
    let most = usize::from(inner.height / 3).max(1);
    if head.len() > most {
        head.truncate(most);
        let last = head.pop().map(|(_, row)| row).unwrap_or_default();
        head.push((Role::Muted, fit(&format!("{last} …"), width)));
    }
    // Then the call's trail (its rounds, its task's statuses): each event whole, the
    // newest where they do not all fit, always leaving a row for the answer.
    let events = trail_events(call, width);
    let rows = usize::from(inner.height);
    let budget = rows.saturating_sub(head.len() + 1);
    let room = (rows / 2).saturating_sub(head.len()).max(2).min(budget);
    head.extend(trail_rows(&events, room, width));
    if !events.is_empty() && rows > head.len() + 2 {
        // A rule between the call's story and its answer.
        head.push((Role::Muted, "─".repeat(width.min(24))));
    }
    head
}

/// The events of a call's trail, each as its rows `width` wide: a long line goes on
/// indented under itself.
fn trail_events(call: &Call, width: usize) -> Vec<Vec<(Role, String)>> {
    super::trail::trail_lines(&call.trail.lock().unwrap_or_else(|e| e.into_inner()))
        .into_iter()
        .map(|(role, line)| {
            wrap(&line, width.saturating_sub(2).max(8))
                .into_iter()
                .enumerate()
                .map(|(k, row)| (role, if k == 0 { row } else { format!("  {row}") }))
                .collect()
        })
        .collect()
}

/// A running call's progress in a line `width` wide: a bar when the server said how
/// much there is, else the spinner with what it said, or that the answer is awaited.
fn progress_text(
    progress: Option<ProgressUpdate>,
    spinner: &str,
    elapsed: &str,
    width: usize,
) -> String {
    match progress {
        Some(p) => match p.total.filter(|t| *t > 0.0) {
            Some(total) => {
                let share = (p.progress / total).clamp(0.0, 1.0);
                let bar_w = width.saturating_sub(24).clamp(4, 40);
                let full = (share * bar_w as f64).round() as usize;
                format!(
                    "[{}{}] {:>3.0}% {}/{}  {}",
                    "█".repeat(full),
                    "░".repeat(bar_w - full),
                    share * 100.0,
                    p.progress,
                    total,
                    p.message
                )
            }
            None => format!("{spinner} {} {}  {}", p.progress, p.message, elapsed),
        },
        None => format!("{spinner} waiting for the answer · {elapsed}"),
    }
}

/// A message's row in the notifications or the traffic: when, which way, its method,
/// target and id, then its text; with its role.
fn message_row(m: &WireMessage, selected: bool) -> (String, Role) {
    let arrow = match m.direction {
        Direction::Sent => "→",
        Direction::Received => "←",
    };
    let id =
        m.id.as_deref()
            .map_or(String::new(), |id| format!(" #{id}"));
    // What it is about: the tool, prompt, resource or task, an answer's too.
    let target = m
        .target
        .as_deref()
        .map_or(String::new(), |t| format!(" {t}"));
    let text = format!(
        "{}{:>6.3}s {arrow} {}{target}{id}  {}",
        if selected { SELECTED_MARK } else { "  " },
        m.at_ms as f64 / 1e3,
        m.method,
        m.text
    );
    let role = if selected {
        Role::Selected
    } else if m.method == "error" || m.method == "stderr" {
        Role::Error
    } else if m.is_notification() {
        Role::Info
    } else {
        Role::Text
    };
    (text, role)
}

/// The selected message whole, its JSON pretty-printed.
fn render_message(m: &WireMessage, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
    let pretty = serde_json::from_str::<Value>(&m.text)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| m.text.clone());
    let lines: Vec<Line<'_>> = pretty
        .lines()
        .map(|l| Line::from(Span::styled(l.to_string(), ui.theme.style(Role::Text))))
        .collect();
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .block(area_block(ui, &format!(" message {} ", m.seq), false))
        .render(area, buf);
}

/// The rows of a call's trail events that fit in `room`: all of them when they fit,
/// else the newest whole events under a line saying how many earlier ones are hidden
/// (the newest alone cut to the room when even it does not fit).
pub(super) fn trail_rows(
    events: &[Vec<(Role, String)>],
    room: usize,
    width: usize,
) -> Vec<(Role, String)> {
    let total: usize = events.iter().map(Vec::len).sum();
    if total <= room {
        return events.iter().flatten().cloned().collect();
    }
    if room == 0 {
        return Vec::new();
    }
    let mut free = room - 1;
    let mut shown = 0;
    for event in events.iter().rev() {
        if event.len() > free {
            break;
        }
        free -= event.len();
        shown += 1;
    }
    let mut out = Vec::new();
    let newest: Vec<(Role, String)> = if shown == 0 {
        // Even the newest does not fit whole: its first rows.
        shown = 1;
        let mut cut: Vec<(Role, String)> = events
            .last()
            .map(|e| e.iter().take(room - 1).cloned().collect())
            .unwrap_or_default();
        if let Some((_, last)) = cut.last_mut() {
            *last = fit(&format!("{last} …"), width);
        }
        cut
    } else {
        events[events.len() - shown..]
            .iter()
            .flatten()
            .cloned()
            .collect()
    };
    let hidden = events.len() - shown;
    if hidden > 0 || newest.is_empty() {
        out.push((Role::Muted, format!("… {hidden} earlier")));
    }
    out.extend(newest);
    out.truncate(room);
    out
}
