//! The Server tab, in the manner of the MCP Inspector: the tools of the server the
//! console talks to (the embedded core, or the one attached with `--connect`) with
//! their schemas, a form built from a tool's schema to call it, the answer, and for an
//! attached server the notifications it sent and the raw JSON-RPC traffic.
//!
//! Calls go through the [`Dispatcher`](crate::tui::dispatch::Dispatcher) like every
//! other pane's, so they are recorded with `--record` and never block a frame.

use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use serde_json::{Map, Value};

use crate::core::Core;
use crate::error::ToolError;
use crate::mcp::client::{Remote, Which};
use crate::tui::component::{Ctx, EventState, Pane, SCROLLING, Ui, dispatch};
use crate::tui::dispatch::{Reply, RequestId};
use crate::tui::keymap::{Command, Context};

mod render;

/// A tool as the pane lists it.
struct ToolInfo {
    name: &'static str,
    description: &'static str,
    schema: Value,
}

/// What a form field takes, from its schema.
#[derive(Debug, Clone, PartialEq)]
enum Kind {
    Text,
    Integer,
    Number,
    Boolean,
    /// One of these strings.
    Choice(Vec<String>),
    /// Anything else, typed as JSON: `array`, `object`, or `any` (several types or
    /// none given).
    Json(&'static str),
}

impl Kind {
    fn of(schema: &Value) -> Kind {
        if let Some(options) = schema.get("enum").and_then(Value::as_array)
            && options.iter().all(Value::is_string)
        {
            return Kind::Choice(
                options
                    .iter()
                    .filter_map(|o| o.as_str().map(str::to_string))
                    .collect(),
            );
        }
        match schema.get("type").and_then(Value::as_str) {
            Some("string") => Kind::Text,
            Some("integer") => Kind::Integer,
            Some("number") => Kind::Number,
            Some("boolean") => Kind::Boolean,
            Some("array") => Kind::Json("array"),
            Some("object") => Kind::Json("object"),
            _ => Kind::Json("any"),
        }
    }

    fn label(&self) -> &'static str {
        match self {
            Kind::Text => "string",
            Kind::Integer => "integer",
            Kind::Number => "number",
            Kind::Boolean => "boolean",
            Kind::Choice(_) => "choice",
            Kind::Json(label) => label,
        }
    }
}

/// One argument of the form.
#[derive(Debug, Clone)]
struct Field {
    name: String,
    kind: Kind,
    required: bool,
    description: String,
    /// The schema's default, shown while the field is empty.
    default: Option<Value>,
    text: String,
}

impl Field {
    /// The name, with `*` when the argument is required.
    fn label(&self) -> String {
        format!("{}{}", self.name, if self.required { "*" } else { "" })
    }

    /// The description, with the choices and the default when the schema gives them.
    fn about(&self) -> String {
        let mut about = self.description.clone();
        if let Kind::Choice(options) = &self.kind {
            about = format!("{about} [{}]", options.join("|"));
        }
        if let Some(d) = &self.default {
            about = format!("{about} (default {d})");
        }
        about
    }

    /// The field's value, `None` when empty (the argument is left out), or why the
    /// text is not a value of its kind.
    fn value(&self) -> Result<Option<Value>, String> {
        let text = self.text.trim();
        if text.is_empty() {
            return Ok(None);
        }
        let value = match &self.kind {
            Kind::Text => Value::String(self.text.clone()),
            Kind::Integer => match text.replace('_', "").parse::<i64>() {
                Ok(n) => Value::from(n),
                Err(_) => match text.parse::<u64>() {
                    Ok(n) => Value::from(n),
                    Err(_) => return Err("not a whole number".into()),
                },
            },
            Kind::Number => match text
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
            {
                Some(n) => Value::Number(n),
                None => return Err("not a number".into()),
            },
            Kind::Boolean => match text.to_ascii_lowercase().as_str() {
                "true" | "yes" | "y" | "1" => Value::Bool(true),
                "false" | "no" | "n" | "0" => Value::Bool(false),
                _ => return Err("true or false".into()),
            },
            Kind::Choice(options) => {
                if !options.iter().any(|o| o == text) {
                    return Err(format!("one of {}", options.join(", ")));
                }
                Value::String(text.to_string())
            }
            Kind::Json(_) => serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?,
        };
        Ok(Some(value))
    }
}

/// The fields of a tool's input schema: the required ones first, each group by name.
fn form_fields(schema: &Value) -> Vec<Field> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut fields: Vec<Field> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| {
            props
                .iter()
                .map(|(name, prop)| Field {
                    name: name.clone(),
                    kind: Kind::of(prop),
                    required: required.contains(&name.as_str()),
                    description: prop
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    default: prop.get("default").cloned(),
                    text: String::new(),
                })
                .collect()
        })
        .unwrap_or_default();
    fields.sort_by(|a, b| b.required.cmp(&a.required).then(a.name.cmp(&b.name)));
    fields
}

/// The arguments a form makes, or the first field whose text is not a value.
fn form_arguments(fields: &[Field]) -> Result<Value, (String, String)> {
    let mut args = Map::new();
    for f in fields {
        match f.value() {
            Ok(Some(v)) => {
                args.insert(f.name.clone(), v);
            }
            Ok(None) => {}
            Err(why) => return Err((f.name.clone(), why)),
        }
    }
    Ok(Value::Object(args))
}

/// The call made from the form and its answer.
struct Called {
    tool: &'static str,
    args: Value,
    id: RequestId,
    /// The answer pretty-printed (an error in the error format); `None` while it runs.
    answer: Option<Result<Vec<String>, Vec<String>>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum View {
    Tools,
    Form,
    Result,
    Notifications,
    Traffic,
}

/// The Server pane.
pub(crate) struct ServerPane {
    tools: Vec<ToolInfo>,
    remote: Option<Arc<Remote>>,
    view: View,
    /// The selected tool.
    selected: usize,
    tools_top: usize,
    /// The form of the selected tool, and its selected field.
    fields: Vec<Field>,
    field: usize,
    called: Option<Called>,
    result_scroll: usize,
    /// The selected message of the notifications or traffic list, and whether it is
    /// shown whole under the list.
    log_selected: usize,
    log_top: usize,
    follow: bool,
    expanded: bool,
    /// Rows a list showed last frame (for paging).
    page: usize,
}

impl ServerPane {
    /// Shows `remote`, the server the core forwards to: its identity and traffic.
    pub fn attach(&mut self, remote: Arc<Remote>) {
        self.remote = Some(remote);
    }

    pub fn new(core: &Core) -> ServerPane {
        let tools = core
            .tools()
            .map(|t| ToolInfo {
                name: t.name,
                description: t.description,
                schema: t.input_schema.clone(),
            })
            .collect();
        ServerPane {
            tools,
            remote: None,
            view: View::Tools,
            selected: 0,
            tools_top: 0,
            fields: Vec::new(),
            field: 0,
            called: None,
            result_scroll: 0,
            log_selected: 0,
            log_top: 0,
            follow: true,
            expanded: false,
            page: 10,
        }
    }

    fn open_form(&mut self) {
        let Some(tool) = self.tools.get(self.selected) else {
            return;
        };
        let called_here = self.called.as_ref().is_some_and(|c| c.tool == tool.name);
        if !called_here || self.fields.is_empty() {
            self.fields = form_fields(&tool.schema);
            self.field = 0;
        }
        self.view = View::Form;
    }

    fn send(&mut self, ctx: &mut Ctx<'_>) {
        let Some(tool) = self.tools.get(self.selected) else {
            return;
        };
        let args = match form_arguments(&self.fields) {
            Ok(args) => args,
            Err((field, why)) => {
                if let Some(i) = self.fields.iter().position(|f| f.name == field) {
                    self.field = i;
                }
                ctx.status.error(format!("{field}: {why}"));
                return;
            }
        };
        let id = ctx.dispatcher.call(tool.name, args.clone());
        self.called = Some(Called {
            tool: tool.name,
            args,
            id,
            answer: None,
        });
        self.result_scroll = 0;
        self.view = View::Result;
    }

    /// The list the view shows, when it shows one of the wire's.
    fn which(&self) -> Option<Which> {
        match self.view {
            View::Notifications => Some(Which::Notifications),
            View::Traffic => Some(Which::Messages),
            _ => None,
        }
    }

    fn log_len(&self) -> usize {
        match (&self.remote, self.which()) {
            (Some(r), Some(which)) => r.wire().kept(which),
            _ => 0,
        }
    }

    fn next_view(&mut self, forward: bool) {
        let order = if self.remote.is_some() {
            vec![View::Tools, View::Notifications, View::Traffic]
        } else {
            vec![View::Tools]
        };
        let now = match self.view {
            View::Form | View::Result => View::Tools,
            v => v,
        };
        let at = order.iter().position(|v| *v == now).unwrap_or(0);
        let n = order.len();
        let next = if forward {
            order[(at + 1) % n]
        } else {
            order[(at + n - 1) % n]
        };
        if next != self.view {
            self.expanded = false;
            self.follow = true;
        }
        self.view = next;
    }

    fn move_by(&mut self, delta: isize) {
        let step = |at: usize, len: usize| -> usize {
            if len == 0 {
                0
            } else {
                at.saturating_add_signed(delta).min(len - 1)
            }
        };
        match self.view {
            View::Tools => self.selected = step(self.selected, self.tools.len()),
            View::Form => self.field = step(self.field, self.fields.len()),
            View::Result => self.result_scroll = self.result_scroll.saturating_add_signed(delta),
            View::Notifications | View::Traffic => {
                let len = self.log_len();
                self.log_selected = step(self.log_selected, len);
                self.follow = len > 0 && self.log_selected == len - 1;
            }
        }
    }

    fn jump(&mut self, end: bool) {
        match self.view {
            View::Tools => {
                self.selected = if end {
                    self.tools.len().saturating_sub(1)
                } else {
                    0
                }
            }
            View::Form => {}
            View::Result => self.result_scroll = if end { usize::MAX / 2 } else { 0 },
            View::Notifications | View::Traffic => {
                self.log_selected = if end {
                    self.log_len().saturating_sub(1)
                } else {
                    0
                };
                self.follow = end;
            }
        }
    }
}

impl Pane for ServerPane {
    fn handle_key(&mut self, key: &KeyEvent, ctx: &mut Ctx<'_>) -> EventState {
        if self.view == View::Form
            && let KeyCode::Char(c) = key.code
            && !key
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
        {
            if let Some(f) = self.fields.get_mut(self.field) {
                f.text.push(c);
            }
            return EventState::Consumed;
        }
        let offered = self.commands();
        let page = isize::try_from(self.page.max(1)).unwrap_or(10);
        dispatch(
            key,
            ctx,
            self.context(),
            &offered,
            |command, ctx| match command {
                Command::Up => self.move_by(-1),
                Command::Down => self.move_by(1),
                Command::PrevPage => self.move_by(-page),
                Command::NextPage => self.move_by(page),
                Command::Top => self.jump(false),
                Command::Bottom => self.jump(true),
                Command::OpenForm => self.open_form(),
                Command::CallTool => self.send(ctx),
                Command::EditCall => self.view = View::Form,
                Command::Back => {
                    self.view = View::Tools;
                    self.expanded = false;
                }
                Command::EraseChar => {
                    if let Some(f) = self.fields.get_mut(self.field) {
                        f.text.pop();
                    }
                }
                Command::ClearText => {
                    if let Some(f) = self.fields.get_mut(self.field) {
                        f.text.clear();
                    }
                }
                Command::ToggleMessage => self.expanded = !self.expanded,
                Command::FocusNext => self.next_view(true),
                Command::FocusPrev => self.next_view(false),
                _ => {}
            },
        )
    }

    fn on_reply(&mut self, reply: &Reply, ctx: &mut Ctx<'_>) -> bool {
        let Some(called) = &mut self.called else {
            return false;
        };
        if called.id != reply.id || called.answer.is_some() {
            return false;
        }
        let pretty = |v: &Value| {
            serde_json::to_string_pretty(v)
                .unwrap_or_default()
                .lines()
                .map(str::to_string)
                .collect::<Vec<_>>()
        };
        let answer = match &reply.result {
            Ok(v) => {
                ctx.status.info(format!("{} answered", called.tool));
                Ok(pretty(v))
            }
            Err(e) => {
                ctx.status
                    .tool_error(&format!("calling {}", called.tool), e);
                Err(pretty(&error_json(e, ctx)))
            }
        };
        called.answer = Some(answer);
        true
    }

    fn context(&self) -> Context {
        match self.view {
            View::Tools => Context::ServerTools,
            View::Form => Context::ServerForm,
            View::Result => Context::ServerResult,
            View::Notifications | View::Traffic => Context::ServerLog,
        }
    }

    fn captures_text(&self) -> bool {
        self.view == View::Form
    }

    fn commands(&self) -> Vec<Command> {
        let mut commands = match self.view {
            View::Tools => {
                let mut c = vec![Command::Up, Command::Down, Command::Top, Command::Bottom];
                if !self.tools.is_empty() {
                    c.push(Command::OpenForm);
                }
                c
            }
            View::Form => vec![
                Command::Up,
                Command::Down,
                Command::CallTool,
                Command::EraseChar,
                Command::ClearText,
                Command::Back,
            ],
            View::Result => [&SCROLLING[..], &[Command::EditCall, Command::Back]].concat(),
            View::Notifications | View::Traffic => {
                [&SCROLLING[..], &[Command::ToggleMessage, Command::Back]].concat()
            }
        };
        if self.remote.is_some() && self.view != View::Form {
            commands.extend([Command::FocusNext, Command::FocusPrev]);
        }
        commands
    }

    fn render(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        if area.height < 3 || area.width < 20 {
            return;
        }
        let [summary, body] =
            Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(area);
        self.render_summary(summary, buf, ui);
        match self.view {
            View::Notifications | View::Traffic => self.render_log(body, buf, ui),
            _ => {
                let longest = self.tools.iter().map(|t| t.name.len()).max().unwrap_or(0);
                let list_w = u16::try_from(longest + 4)
                    .unwrap_or(u16::MAX)
                    .clamp(24, (body.width / 2).max(24))
                    .min(body.width);
                let [list, detail] =
                    Layout::horizontal([Constraint::Length(list_w), Constraint::Min(0)])
                        .areas(body);
                self.render_tools(list, buf, ui);
                match self.view {
                    View::Form => self.render_form(detail, buf, ui),
                    View::Result => self.render_result(detail, buf, ui),
                    _ => self.render_tool(detail, buf, ui),
                }
            }
        }
    }
}

fn error_json(e: &ToolError, ctx: &Ctx<'_>) -> Value {
    e.to_json(&ctx.dispatcher.core().timestamp())
}

#[cfg(test)]
mod tests {
    use super::render::wrap;
    use super::*;
    use serde_json::json;

    #[test]
    fn wrapping_breaks_between_words_and_inside_long_ones() {
        assert_eq!(wrap("one two three", 7), ["one two", "three"]);
        assert_eq!(wrap("abcdefghij x", 4), ["abcd", "efgh", "ij x"]);
        assert_eq!(wrap("", 5), [""]);
        assert!(
            wrap("a b c d e f g", 3)
                .iter()
                .all(|l| l.chars().count() <= 3)
        );
    }

    #[test]
    fn a_form_follows_the_schema_and_types_its_values() {
        let schema = json!({
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": "An id."},
                "depth": {"type": "integer", "default": 1},
                "ratio": {"type": "number"},
                "deep": {"type": "boolean"},
                "mode": {"type": "string", "enum": ["none", "all"]},
                "filter": {"type": "object"}
            },
            "required": ["id"]
        });
        let mut fields = form_fields(&schema);
        let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["id", "deep", "depth", "filter", "mode", "ratio"]);
        assert!(fields[0].required);
        assert_eq!(fields[2].default, Some(json!(1)));
        assert_eq!(form_arguments(&fields).unwrap(), json!({}));
        let set = |fields: &mut Vec<Field>, name: &str, text: &str| {
            fields.iter_mut().find(|f| f.name == name).unwrap().text = text.into();
        };
        set(&mut fields, "id", "1-1");
        set(&mut fields, "deep", "yes");
        set(&mut fields, "depth", "2");
        set(&mut fields, "filter", r#"{"kind": "player"}"#);
        set(&mut fields, "mode", "all");
        set(&mut fields, "ratio", "0.5");
        assert_eq!(
            form_arguments(&fields).unwrap(),
            json!({"id": "1-1", "deep": true, "depth": 2, "filter": {"kind": "player"},
                   "mode": "all", "ratio": 0.5})
        );
        set(&mut fields, "depth", "two");
        assert_eq!(
            form_arguments(&fields).unwrap_err(),
            ("depth".to_string(), "not a whole number".to_string())
        );
        set(&mut fields, "depth", "");
        set(&mut fields, "mode", "some");
        assert_eq!(form_arguments(&fields).unwrap_err().1, "one of none, all");
        set(&mut fields, "mode", "");
        set(&mut fields, "filter", "{");
        assert!(
            form_arguments(&fields)
                .unwrap_err()
                .1
                .starts_with("not JSON")
        );
    }
}
