//! The Live tab's holds: breakpoints set from the selected call, and the editor
//! opened on a held call, whose text goes back to the proxy as arguments, an answer or
//! an error, checked first as the proxy will check it.

use crossterm::event::KeyEvent;
use serde_json::{Value, json};

use super::LivePane;
use crate::record::live::{Hold, LiveCall};
use crate::tools::schema::ArgSchema;
use crate::tui::keymap::{Command, Scope};
use crate::tui::pane::{Ctx, EventState};
use crate::tui::widgets::prompt::typed_char;
use crate::tui::widgets::textarea::TextArea;

/// What the editor's text is sent as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum EditKind {
    /// The held request's arguments, checked against the tool's schema.
    Arguments,
    /// A result to answer with (or, on a held response, to give in its place).
    Answer,
    /// An error object: code, message, details.
    Error,
    /// The answers to the server's questions a call in rounds is sent again with,
    /// checked against what the server asked.
    Round,
}

/// The editor open on a held call.
pub(super) struct Editing {
    pub(super) hold: u64,
    pub(super) kind: EditKind,
    pub(super) on_response: bool,
    pub(super) schema: Option<Value>,
    /// The tool's output schema, which a result must fit (when the proxy knows it).
    pub(super) output_schema: Option<Value>,
    /// What the server asked, for answers to a round (`null` when the proxy did not
    /// see it ask).
    pub(super) asked: Value,
    /// What the editor opened with.
    pub(super) original: Value,
    /// The call, as the editor's title names it.
    pub(super) title: String,
    pub(super) area: TextArea,
    /// Why the text was not sent.
    pub(super) problem: Option<String>,
}

/// A tool result's text items that were its structured content as JSON (as a server
/// writes them for clients that read text) say the edited structured content too, when
/// only that was changed: an agent reading either reads the same answer.
fn text_follows_structured(original: &Value, edited: &mut Value) {
    let Some(was) = original.get("structuredContent") else {
        return;
    };
    let Some(now) = edited.get("structuredContent").cloned() else {
        return;
    };
    if *was == now {
        return;
    }
    let before = original["content"].as_array().cloned().unwrap_or_default();
    let Some(items) = edited["content"].as_array_mut() else {
        return;
    };
    for (item, old) in items.iter_mut().zip(&before) {
        let Some(text) = old["text"].as_str() else {
            continue;
        };
        let mirrored = serde_json::from_str::<Value>(text).is_ok_and(|v| v == *was);
        if mirrored && item["type"] == "text" && item["text"] == old["text"] {
            item["text"] = json!(now.to_string());
        }
    }
}

impl LivePane {
    /// Sets or clears a breakpoint on the selected call's tool (`every`: on every
    /// call), holding its requests or (`on` `"response"`) its answers.
    pub(super) fn toggle_breakpoint(&mut self, every: bool, on: &str, ctx: &mut Ctx<'_>) {
        let tool = if every {
            None
        } else {
            match self.selected() {
                Some((_, call)) => Some(call.tool.clone()),
                None => return,
            }
        };
        let shown = tool.clone().unwrap_or_else(|| "any tool".into());
        let existing = self
            .live
            .breakpoints
            .iter()
            .find(|(_, way, what)| way == on && *what == shown)
            .map(|(rule, _, _)| *rule);
        let command = match (existing, tool) {
            (Some(rule), _) => json!({"cmd": "unbreak", "rule": rule}),
            (None, Some(tool)) => json!({"cmd": "break", "on": on, "tool": tool}),
            (None, None) => json!({"cmd": "break", "on": on}),
        };
        self.command(command, ctx);
    }

    /// The selected call's hold, when it is held.
    pub(super) fn selected_hold(&self) -> Option<(&LiveCall, &Hold)> {
        let (_, call) = self.selected()?;
        call.held.as_ref().map(|h| (call, h))
    }

    /// Opens the editor on the held call: its arguments, its answer, or an error.
    pub(super) fn open_editor(&mut self, kind: EditKind) {
        let Some((call, hold)) = self.selected_hold() else {
            return;
        };
        // `e` on a held round edits its answers to the server's questions.
        let kind = match (&hold.round, kind) {
            (Some(_), EditKind::Arguments) if hold.way == "request" => EditKind::Round,
            _ => kind,
        };
        let start = match kind {
            EditKind::Round => hold
                .round
                .as_ref()
                .map_or_else(|| json!({}), |r| r["input_responses"].clone()),
            EditKind::Arguments if hold.way == "response" => {
                hold.answer.clone().unwrap_or_else(|| json!({}))
            }
            EditKind::Arguments => call.arguments.clone(),
            // The whole tool result, as a held answer shows it: its text the
            // structured content's JSON, which follows it as it is edited.
            EditKind::Answer => json!({"content": [{"type": "text", "text": "{}"}],
                "structuredContent": {}}),
            EditKind::Error => json!({"code": "RATE_LIMIT_EXCEEDED",
                "message": "injected by the operator", "details": {"retry_after_ms": 1000}}),
        };
        let text = serde_json::to_string_pretty(&start).unwrap_or_default();
        self.editing = Some(Editing {
            hold: hold.id,
            kind: if kind == EditKind::Arguments && hold.way == "response" {
                EditKind::Answer
            } else {
                kind
            },
            on_response: hold.way == "response",
            schema: hold.schema.clone(),
            output_schema: hold.output_schema.clone(),
            asked: hold
                .round
                .as_ref()
                .map_or(Value::Null, |r| r["input_requests"].clone()),
            original: start,
            title: format!("#{} call {} · {}", call.session, call.call, call.tool),
            area: TextArea::new(&text),
            problem: None,
        });
    }

    /// Sends what the editor holds, when it reads as it must.
    pub(super) fn send_edit(&mut self, ctx: &mut Ctx<'_>) {
        let Some(editing) = &mut self.editing else {
            return;
        };
        let mut value: Value = match serde_json::from_str(&editing.area.text()) {
            Ok(v) => v,
            Err(e) => {
                editing.problem = Some(format!("not JSON: {e}"));
                return;
            }
        };
        let command = match editing.kind {
            EditKind::Arguments => {
                if !value.is_object() {
                    editing.problem = Some("the arguments are a JSON object".into());
                    return;
                }
                if let Some(schema) = &editing.schema
                    && let Ok(compiled) = ArgSchema::compile(schema)
                    && let Err(e) = compiled.check(&value)
                {
                    editing.problem = Some(format!(
                        "{}: {}",
                        e.code.as_str(),
                        e.reason.as_deref().unwrap_or(&e.message)
                    ));
                    return;
                }
                json!({"cmd": "edit", "hold": editing.hold, "arguments": value})
            }
            EditKind::Answer => {
                text_follows_structured(&editing.original, &mut value);
                if let Err(why) =
                    crate::mcp::proxy::check_tool_result(&value, editing.output_schema.as_ref())
                {
                    editing.problem = Some(why);
                    return;
                }
                let cmd = if editing.on_response {
                    "edit"
                } else {
                    "answer"
                };
                json!({"cmd": cmd, "hold": editing.hold, "result": value})
            }
            EditKind::Round => {
                if let Err(why) = crate::mcp::proxy::check_input_responses(&editing.asked, &value) {
                    editing.problem = Some(why);
                    return;
                }
                json!({"cmd": "edit", "hold": editing.hold, "input_responses": value})
            }
            EditKind::Error => {
                let code = value["code"].as_str().unwrap_or("");
                if crate::error::ErrorCode::parse(code).is_none() {
                    editing.problem = Some(format!(
                        "\"code\" must be one of the error codes (RATE_LIMIT_EXCEEDED, TOOL_TIMEOUT, …), not {:?}",
                        code
                    ));
                    return;
                }
                json!({"cmd": "error", "hold": editing.hold, "error": value})
            }
        };
        self.editing = None;
        self.command(command, ctx);
    }

    pub(super) fn edit_key(&mut self, key: &KeyEvent, ctx: &mut Ctx<'_>) -> EventState {
        let Some(editing) = &mut self.editing else {
            return EventState::NotConsumed;
        };
        match ctx.keymap.command(Scope::LiveEdit, key) {
            Some(Command::SendEdit) => self.send_edit(ctx),
            Some(Command::Back) => self.editing = None,
            Some(Command::Up) => editing.area.up(),
            Some(Command::Down) => editing.area.down(),
            Some(Command::CursorLeft) => editing.area.left(),
            Some(Command::CursorRight) => editing.area.right(),
            Some(Command::LineStart) => editing.area.home(),
            Some(Command::LineEnd) => editing.area.end(),
            Some(Command::NewLine) => editing.area.newline(),
            Some(Command::EraseChar) => editing.area.backspace(),
            Some(Command::DeleteChar) => editing.area.delete(),
            Some(_) => {}
            None => {
                if let Some(c) = typed_char(key) {
                    editing.problem = None;
                    if !editing.area.insert(c) {
                        ctx.status.info(format!(
                            "the editor holds at most {} bytes",
                            crate::tui::widgets::textarea::TEXT_MAX
                        ));
                    }
                }
            }
        }
        EventState::Consumed
    }
}
