//! The tasks MCP servers run for clients of the Tasks extension, as the PoW and Plans
//! tabs show them: each tab lists the tasks of its own tools, read with
//! `structs_task_list` from the handle store (so a console sharing a Redis store, or
//! attached to a server, sees the tasks every server there runs), asked for again every
//! few seconds while the tab is on show, and a working one is asked to stop with
//! `structs_task_cancel`.

use std::time::{Duration, Instant};

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{List, ListItem, ListState, Paragraph, StatefulWidget, Widget, Wrap};
use serde_json::{Value, json};

use crate::error::ErrorCode;
use crate::tui::dispatch::{Reply, RequestId};
use crate::tui::keymap::Command;
use crate::tui::pane::{Ctx, Ui};
use crate::tui::theme::Role;
use crate::tui::widgets::area_block;
use crate::tui::widgets::cursor::moved;
use crate::tui::widgets::text::SELECTED_MARK;

const LIST_TOOL: &str = "structs_task_list";
const CANCEL_TOOL: &str = "structs_task_cancel";

/// How often the list is asked for while its tab is on show.
pub(crate) const REFRESH_EVERY: Duration = Duration::from_secs(2);

/// Rows the tasks area takes at most, borders included.
pub(crate) const MAX_HEIGHT: u16 = 8;

/// One task as the list shows it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TaskRow {
    pub id: String,
    pub tool: String,
    pub status: String,
    pub message: Option<String>,
    pub created: String,
    pub updated: String,
    pub ttl_ms: Option<u64>,
    pub outcome: Option<String>,
    /// Completed with the tool's error result.
    pub tool_error: bool,
}

impl TaskRow {
    fn read(v: &Value) -> Option<TaskRow> {
        let text = |k: &str| v[k].as_str().map(str::to_string);
        Some(TaskRow {
            id: text("task_id")?,
            tool: text("tool").unwrap_or_default(),
            status: text("status").unwrap_or_default(),
            message: text("status_message"),
            created: text("created_at").unwrap_or_default(),
            updated: text("last_updated_at").unwrap_or_default(),
            ttl_ms: v["ttl_ms"].as_u64(),
            outcome: text("outcome"),
            tool_error: v["tool_error"] == true,
        })
    }

    fn working(&self) -> bool {
        self.status == "working" || self.status == "input_required"
    }

    /// How the list marks it: a tool's error is an end that went wrong.
    fn look(&self) -> (&'static str, Role) {
        if self.tool_error {
            return ("✗", Role::Error);
        }
        (glyph(&self.status), role(&self.status))
    }
}

/// The tasks of some tools, kept fresh by the tab that shows them.
pub(crate) struct TaskBoard {
    tools: &'static [&'static str],
    rows: Vec<TaskRow>,
    total: usize,
    store: String,
    listing: Option<RequestId>,
    cancelling: Option<(RequestId, String)>,
    listed_at: Option<Instant>,
    /// The tools answering have no task tools (another server's catalog): the list is
    /// asked for no more.
    absent: bool,
    /// Why the last listing failed, shown until one succeeds.
    error: Option<String>,
    pub list: ListState,
}

impl TaskBoard {
    pub fn new(tools: &'static [&'static str]) -> TaskBoard {
        TaskBoard {
            tools,
            rows: Vec::new(),
            total: 0,
            store: String::new(),
            listing: None,
            cancelling: None,
            listed_at: None,
            absent: false,
            error: None,
            list: ListState::default(),
        }
    }

    pub fn rows(&self) -> &[TaskRow] {
        &self.rows
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    pub fn selected(&self) -> Option<&TaskRow> {
        self.rows.get(self.list.selected()?)
    }

    /// Whether the selected task can be asked to stop.
    pub fn can_cancel(&self) -> bool {
        self.selected().is_some_and(TaskRow::working) && self.cancelling.is_none()
    }

    /// Asks for the list when none is on its way and [`REFRESH_EVERY`] has passed since
    /// the last time.
    pub fn refresh(&mut self, ctx: &mut Ctx<'_>, now: Instant) {
        if self.absent
            || self.listing.is_some()
            || self
                .listed_at
                .is_some_and(|at| now.duration_since(at) < REFRESH_EVERY)
        {
            return;
        }
        self.listed_at = Some(now);
        self.listing = Some(
            ctx.dispatcher
                .poll(LIST_TOOL, json!({"tools": self.tools, "limit": 50})),
        );
    }

    /// Takes in a reply to one of the board's calls; false for another's.
    pub fn on_reply(&mut self, reply: &Reply, ctx: &mut Ctx<'_>) -> bool {
        if self.listing == Some(reply.id) {
            self.listing = None;
            match &reply.result {
                Ok(v) => {
                    let selected = self.selected().map(|r| r.id.clone());
                    self.rows = v["tasks"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(TaskRow::read)
                        .collect();
                    self.total = v["total"].as_u64().unwrap_or(0) as usize;
                    self.store = v["store"].as_str().unwrap_or("").to_string();
                    self.error = None;
                    let at = selected
                        .and_then(|id| self.rows.iter().position(|r| r.id == id))
                        .or_else(|| (!self.rows.is_empty()).then_some(0));
                    self.list.select(at);
                }
                Err(e) if e.code == ErrorCode::ToolNotFound => self.absent = true,
                Err(e) => self.error = Some(format!("{}: {}", e.code.as_str(), e.message)),
            }
            return true;
        }
        if let Some((request, id)) = &self.cancelling
            && *request == reply.id
        {
            let short = short_id(id).to_string();
            self.cancelling = None;
            match &reply.result {
                Ok(v) if v["asked"] == true => ctx.status.info(format!(
                    "task {short}: asked to stop; it ends within a second"
                )),
                Ok(v) => ctx.status.info(format!(
                    "task {short} had already ended: {}",
                    v["status"].as_str().unwrap_or("ended")
                )),
                Err(e) => ctx
                    .status
                    .tool_error(&format!("cancelling task {short}"), e),
            }
            // The next listing shows how it ended.
            self.listed_at = None;
            return true;
        }
        false
    }

    /// Asks the selected task to stop.
    pub fn cancel_selected(&mut self, ctx: &mut Ctx<'_>) {
        if !self.can_cancel() {
            return;
        }
        let Some(id) = self.selected().map(|r| r.id.clone()) else {
            return;
        };
        let request = ctx.dispatcher.call(CANCEL_TOOL, json!({"task_id": id}));
        ctx.status
            .info(format!("asking task {} to stop…", short_id(&id)));
        self.cancelling = Some((request, id));
    }

    /// Moves the selection for a row command; false for any other command.
    pub fn move_by(&mut self, command: Command) -> bool {
        let at = self.list.selected().unwrap_or(0);
        match moved(command, at, self.rows.len(), 1) {
            Some(to) => {
                self.list.select(Some(to));
                true
            }
            None => false,
        }
    }

    /// How many rows the list wants, borders included.
    pub fn height(&self) -> u16 {
        (self.rows.len() as u16 + 2).min(MAX_HEIGHT)
    }

    /// Draws the list of tasks; the selection is marked when `focused`.
    pub fn render_list(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>, focused: bool) {
        let theme = ui.theme;
        let title = if self.total > self.rows.len() {
            format!(" Tasks · {} of {} ", self.rows.len(), self.total)
        } else {
            format!(" Tasks · {} ", self.rows.len())
        };
        let block = area_block(ui, &title, focused);
        let items: Vec<ListItem> = self
            .rows
            .iter()
            .map(|r| {
                let (glyph, role) = r.look();
                let status = if r.tool_error {
                    format!("{} (tool error)", r.status)
                } else {
                    r.status.clone()
                };
                ListItem::new(Line::from(vec![
                    Span::styled(format!("{glyph} "), theme.style(role)),
                    Span::styled(
                        format!("{} {} ", short_id(&r.id), short_tool(&r.tool)),
                        theme.style(Role::Text),
                    ),
                    Span::styled(status, theme.style(role)),
                ]))
            })
            .collect();
        let mut state = if focused {
            self.list
        } else {
            ListState::default().with_offset(self.list.offset())
        };
        StatefulWidget::render(
            List::new(items)
                .block(block)
                .highlight_symbol(SELECTED_MARK)
                .highlight_style(theme.style(Role::Selected)),
            area,
            buf,
            &mut state,
        );
        if focused {
            self.list = state;
        }
    }

    /// Draws the selected task: its fields, how it ended, and what a key can do.
    pub fn render_detail(&self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let Some(task) = self.selected() else {
            return;
        };
        let block = area_block(
            ui,
            &format!(" Task {} · {} ", short_id(&task.id), short_tool(&task.tool)),
            false,
        );
        let field = |name: &str, value: String, role: Role| {
            Line::from(vec![
                Span::styled(format!("{name:<10}"), theme.style(Role::Field)),
                Span::styled(value, theme.style(role)),
            ])
        };
        let mut lines = vec![
            field("task", task.id.clone(), Role::Value),
            field("tool", task.tool.clone(), Role::Value),
            field("status", task.status.clone(), task.look().1),
        ];
        if let Some(m) = &task.message {
            lines.push(field("message", m.clone(), Role::Value));
        }
        lines.push(field("created", clock(&task.created), Role::Value));
        lines.push(field("updated", clock(&task.updated), Role::Value));
        if let Some(ttl) = task.ttl_ms {
            lines.push(field(
                "kept",
                format!("{} s from its creation", ttl / 1000),
                Role::Value,
            ));
        }
        if let Some(o) = &task.outcome {
            lines.push(field("outcome", o.clone(), Role::Value));
        }
        lines.push(field(
            "store",
            format!(
                "{} · {} task{} of these tools",
                self.store,
                self.total,
                if self.total == 1 { "" } else { "s" }
            ),
            Role::Muted,
        ));
        if let Some(e) = &self.error {
            lines.push(Line::default());
            lines.push(Line::from(Span::styled(
                format!("last listing failed: {e}"),
                theme.style(Role::Error),
            )));
        }
        lines.push(Line::default());
        lines.push(Line::from(Span::styled(
            if task.working() {
                "A server runs it for an MCP client; x asks it to stop, wherever it runs."
            } else {
                "A server ran it for an MCP client; its whole result: tasks/get with its id."
            },
            theme.style(Role::Muted),
        )));
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(block)
            .render(area, buf);
    }
}

/// A task id's first eight characters, enough to tell tasks apart on screen.
pub(crate) fn short_id(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

/// The tool a task runs, in a word.
fn short_tool(tool: &str) -> &str {
    match tool {
        "structs_calculate_proof_of_work" => "pow",
        "structs_plan_execute" => "plan",
        "structs_workflow_execute" => "workflow",
        t => t.strip_prefix("structs_").unwrap_or(t),
    }
}

fn glyph(status: &str) -> &'static str {
    match status {
        "completed" => "✓",
        "failed" => "✗",
        "cancelled" => "–",
        _ => "…",
    }
}

fn role(status: &str) -> Role {
    match status {
        "completed" => Role::Info,
        "failed" => Role::Error,
        "cancelled" => Role::Muted,
        _ => Role::Text,
    }
}

/// An RFC 3339 time as a date and a clock time in UTC: `2026-11-28 10:00:01 UTC`.
fn clock(at: &str) -> String {
    match chrono::DateTime::parse_from_rfc3339(at) {
        Ok(t) => t
            .with_timezone(&chrono::Utc)
            .format("%Y-%m-%d %H:%M:%S UTC")
            .to_string(),
        Err(_) => at.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_read_the_listing_and_words_stay_short() {
        let row = TaskRow::read(&json!({"task_id": "0123456789abcdef", "tool":
            "structs_plan_execute", "status": "working", "created_at":
            "2026-11-28T10:00:01.250Z", "last_updated_at": "2026-11-28T10:00:02Z",
            "ttl_ms": 600000, "status_message": null, "outcome": null}))
        .unwrap();
        assert_eq!(short_id(&row.id), "01234567");
        assert_eq!(short_tool(&row.tool), "plan");
        assert!(row.working());
        assert_eq!(clock(&row.created), "2026-11-28 10:00:01 UTC");
        assert_eq!(row.message, None);
        assert!(TaskRow::read(&json!({"tool": "x"})).is_none());
    }
}
