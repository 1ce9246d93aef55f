//! The Server tab's Resources and Prompts sections: the server's resources and
//! resource templates (paged), a form per template's variables or prompt's
//! arguments with the server's completions as you type, what a read or a prompt
//! gives, and subscriptions with their updates.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};
use serde_json::{Value, json};

use super::form::{Field, Kind, form_arguments};
use super::render::wrap;
use super::{Mode, Section};
use crate::mcp::client::{CompleteRef, Remote};
use crate::tui::component::{Ctx, SELECTED_MARK, Ui, fit};
use crate::tui::dispatch::{Reply, RequestId};
use crate::tui::keymap::Command;
use crate::tui::theme::Role;
use crate::tui::widgets::area_block;

/// One of the server's paged lists, as far as it has been read.
#[derive(Default)]
struct Listing {
    items: Vec<Value>,
    /// The cursor of the next page, when the server said there is one.
    next: Option<String>,
    loading: bool,
    /// Whether the first page has been asked for.
    asked: bool,
    error: Option<String>,
}

/// Which list a page belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum List {
    Resources,
    Templates,
    Prompts,
}

impl List {
    fn method(self) -> &'static str {
        match self {
            List::Resources => "resources/list",
            List::Templates => "resources/templates/list",
            List::Prompts => "prompts/list",
        }
    }

    fn key(self) -> &'static str {
        match self {
            List::Resources => "resources",
            List::Templates => "resourceTemplates",
            List::Prompts => "prompts",
        }
    }
}

/// A request of this section's, waiting for its answer.
enum Pending {
    Page(List),
    Read(String),
    Subscribe(String, bool),
    Get(String),
    /// Completions for a field of the form, for the text it had when asked.
    Complete {
        field: usize,
        text: String,
    },
}

/// What a form fills in.
#[derive(Debug, Clone)]
enum Target {
    /// A resource template's variables, to read the resource they make.
    Template { uri_template: String, name: String },
    /// A prompt's arguments, to get it.
    Prompt { name: String },
}

/// A form of a template's variables or a prompt's arguments.
struct ArgsForm {
    target: Target,
    fields: Vec<Field>,
    field: usize,
    /// The server's completions for each field, and which was filled in last.
    offered: HashMap<usize, (Vec<String>, usize)>,
    /// The newest completion request of each field: an older answer is stale.
    asked: HashMap<usize, RequestId>,
}

/// Lines with how each is drawn.
type Styled = Vec<(Role, String)>;

/// A read or a prompt's answer, as shown: `None` while it is awaited, the error's
/// lines when it failed.
struct Shown {
    title: String,
    lines: Option<Result<Styled, Vec<String>>>,
}

/// The Resources and Prompts sections.
#[derive(Default)]
pub(super) struct Browse {
    resources: Listing,
    templates: Listing,
    prompts: Listing,
    /// The selected row of the resources then templates, and of the prompts.
    res_selected: usize,
    res_top: usize,
    prompt_selected: usize,
    prompt_top: usize,
    subscribed: HashSet<String>,
    /// Updates received for each resource: how many, and the last one's time.
    updates: HashMap<String, (u64, String)>,
    pending: HashMap<RequestId, Pending>,
    form: Option<ArgsForm>,
    shown: Option<Shown>,
}

/// The variables of an RFC 6570 URI template: `{id}`, `{+path}`, `{?a,b}`.
pub(super) fn template_vars(template: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        let inner = &rest[open + 1..open + close];
        let inner = inner.trim_start_matches(['+', '#', '.', '/', ';', '?', '&']);
        for name in inner.split(',') {
            let name = name.trim_end_matches('*');
            let name = name.split(':').next().unwrap_or(name);
            if !name.is_empty() && !out.iter().any(|n| n == name) {
                out.push(name.to_string());
            }
        }
        rest = &rest[open + close + 1..];
    }
    out
}

/// A URI template with its variables filled in (simple, reserved `+`, and query `?`
/// and `&` expressions; an empty variable is left out of a query).
pub(super) fn expand(template: &str, values: &HashMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        out.push_str(&rest[..open]);
        let inner = &rest[open + 1..open + close];
        let (op, names) = match inner.chars().next() {
            Some(c @ ('+' | '#' | '.' | '/' | ';' | '?' | '&')) => (Some(c), &inner[1..]),
            _ => (None, inner),
        };
        let given: Vec<(&str, &str)> = names
            .split(',')
            .map(|n| n.trim_end_matches('*'))
            .filter_map(|n| {
                values
                    .get(n)
                    .filter(|v| !v.is_empty())
                    .map(|v| (n, v.as_str()))
            })
            .collect();
        match op {
            Some(q @ ('?' | '&')) => {
                for (k, (name, value)) in given.iter().enumerate() {
                    let sep = if k == 0 { q } else { '&' };
                    out.push_str(&format!("{sep}{name}={}", encode(value, false)));
                }
            }
            Some('+' | '#') => {
                let joined: Vec<String> = given.iter().map(|(_, v)| encode(v, true)).collect();
                if op == Some('#') && !joined.is_empty() {
                    out.push('#');
                }
                out.push_str(&joined.join(","));
            }
            Some(c @ ('.' | '/')) => {
                for (_, v) in &given {
                    out.push(c);
                    out.push_str(&encode(v, false));
                }
            }
            _ => {
                let joined: Vec<String> = given.iter().map(|(_, v)| encode(v, false)).collect();
                out.push_str(&joined.join(","));
            }
        }
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    out
}

/// Percent-encodes what a URI template's expression may not carry as is.
fn encode(value: &str, reserved: bool) -> String {
    let mut out = String::new();
    for b in value.bytes() {
        let keep = b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'.' | b'_' | b'~')
            || (reserved && b"/:?#[]@!$&'()*+,;=".contains(&b));
        if keep {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// What a resource read gave, as lines: text as it is, JSON pretty-printed as a tree
/// of indented lines, a binary as its size and type.
pub(super) fn contents_lines(answer: &Value) -> Vec<(Role, String)> {
    let mut lines = Vec::new();
    let contents = answer["contents"].as_array().cloned().unwrap_or_default();
    if contents.is_empty() {
        lines.push((Role::Muted, "(no contents)".to_string()));
    }
    for (k, item) in contents.iter().enumerate() {
        if k > 0 {
            lines.push((Role::Text, String::new()));
        }
        let mime = item["mimeType"].as_str().unwrap_or("");
        lines.push((
            Role::Title,
            format!(
                "{}{}",
                item["uri"].as_str().unwrap_or("?"),
                if mime.is_empty() {
                    String::new()
                } else {
                    format!(" · {mime}")
                }
            ),
        ));
        if let Some(text) = item["text"].as_str() {
            let json = serde_json::from_str::<Value>(text)
                .ok()
                .filter(|v| v.is_object() || v.is_array());
            match json {
                Some(v) => lines.extend(json_tree(&v)),
                None => lines.extend(text.lines().map(|l| (Role::Text, l.to_string()))),
            }
        } else if let Some(blob) = item["blob"].as_str() {
            let bytes = blob.trim_end_matches('=').len() * 3 / 4;
            lines.push((
                Role::Value,
                format!(
                    "binary: {bytes} bytes of {}",
                    if mime.is_empty() {
                        "unknown type"
                    } else {
                        mime
                    }
                ),
            ));
        } else {
            lines.push((Role::Muted, item.to_string()));
        }
    }
    lines
}

/// A JSON value as a tree of lines: each key on its own line under its parent,
/// containers with their sizes, scalars beside their keys.
pub(super) fn json_tree(value: &Value) -> Vec<(Role, String)> {
    fn walk(label: &str, v: &Value, depth: usize, out: &mut Vec<(Role, String)>) {
        let pad = "  ".repeat(depth);
        let head = if label.is_empty() {
            String::new()
        } else {
            format!("{label}: ")
        };
        match v {
            Value::Object(map) => {
                out.push((Role::Field, format!("{pad}{head}{{{}}}", map.len())));
                for (k, item) in map {
                    walk(k, item, depth + 1, out);
                }
            }
            Value::Array(items) => {
                out.push((Role::Field, format!("{pad}{head}[{}]", items.len())));
                for (i, item) in items.iter().enumerate() {
                    walk(&format!("[{i}]"), item, depth + 1, out);
                }
            }
            Value::String(s) => out.push((Role::Value, format!("{pad}{head}{s:?}"))),
            other => out.push((Role::Value, format!("{pad}{head}{other}"))),
        }
    }
    let mut out = Vec::new();
    walk("", value, 0, &mut out);
    out
}

/// What a prompt gives, as lines: each message under its role; text as it is, an
/// embedded resource with its uri and text, an image or audio as its type and size.
pub(super) fn prompt_lines(answer: &Value) -> Vec<(Role, String)> {
    let mut lines = Vec::new();
    if let Some(d) = answer["description"].as_str() {
        lines.push((Role::Muted, d.to_string()));
        lines.push((Role::Text, String::new()));
    }
    for m in answer["messages"].as_array().cloned().unwrap_or_default() {
        lines.push((
            Role::Title,
            format!("{}:", m["role"].as_str().unwrap_or("?")),
        ));
        let content = &m["content"];
        match content["type"].as_str() {
            Some("text") => lines.extend(
                content["text"]
                    .as_str()
                    .unwrap_or("")
                    .lines()
                    .map(|l| (Role::Text, format!("  {l}"))),
            ),
            Some("resource") => {
                let r = &content["resource"];
                lines.push((
                    Role::Field,
                    format!(
                        "  embedded resource {} {}",
                        r["uri"].as_str().unwrap_or("?"),
                        r["mimeType"].as_str().unwrap_or("")
                    ),
                ));
                if let Some(text) = r["text"].as_str() {
                    lines.extend(text.lines().map(|l| (Role::Text, format!("    {l}"))));
                } else if let Some(blob) = r["blob"].as_str() {
                    lines.push((
                        Role::Value,
                        format!("    binary: {} bytes", blob.len() * 3 / 4),
                    ));
                }
            }
            Some("resource_link") => lines.push((
                Role::Field,
                format!("  link to {}", content["uri"].as_str().unwrap_or("?")),
            )),
            Some(kind @ ("image" | "audio")) => lines.push((
                Role::Value,
                format!(
                    "  {kind}: {} bytes of {}",
                    content["data"].as_str().map_or(0, |d| d.len() * 3 / 4),
                    content["mimeType"].as_str().unwrap_or("?")
                ),
            )),
            _ => lines.push((Role::Muted, format!("  {content}"))),
        }
    }
    lines
}

impl Browse {
    /// Lists the resources and templates, the first time the section opens.
    pub fn open_resources(&mut self, remote: &Arc<Remote>, ctx: &mut Ctx<'_>) {
        if !self.resources.asked {
            self.ask_page(List::Resources, remote, ctx);
            self.ask_page(List::Templates, remote, ctx);
        }
    }

    /// Lists the prompts, the first time the section opens.
    pub fn open_prompts(&mut self, remote: &Arc<Remote>, ctx: &mut Ctx<'_>) {
        if !self.prompts.asked {
            self.ask_page(List::Prompts, remote, ctx);
        }
    }

    fn listing(&mut self, list: List) -> &mut Listing {
        match list {
            List::Resources => &mut self.resources,
            List::Templates => &mut self.templates,
            List::Prompts => &mut self.prompts,
        }
    }

    /// Asks for the next page of `list` (the first, the first time).
    fn ask_page(&mut self, list: List, remote: &Arc<Remote>, ctx: &mut Ctx<'_>) {
        let offered = match list {
            List::Resources | List::Templates => "resources",
            List::Prompts => "prompts",
        };
        let listing = self.listing(list);
        if listing.loading || (listing.asked && listing.next.is_none()) {
            return;
        }
        if !remote.server_info()["capabilities"][offered].is_object() {
            listing.asked = true;
            listing.error = Some(format!("the server offers no {offered}"));
            return;
        }
        let cursor = listing.next.clone();
        listing.asked = true;
        listing.loading = true;
        let remote = remote.clone();
        let id = ctx
            .dispatcher
            .spawn_task(async move { remote.page(list.method(), cursor.as_deref()).await });
        self.pending.insert(id, Pending::Page(list));
    }

    fn relist(&mut self, section: Section, remote: &Arc<Remote>, ctx: &mut Ctx<'_>) {
        let lists: &[List] = match section {
            Section::Resources => &[List::Resources, List::Templates],
            _ => &[List::Prompts],
        };
        for &list in lists {
            *self.listing(list) = Listing::default();
            self.ask_page(list, remote, ctx);
        }
        self.res_selected = 0;
        self.prompt_selected = 0;
    }

    /// Rows of the Resources list: the resources, then the templates.
    fn resource_rows(&self) -> usize {
        self.resources.items.len() + self.templates.items.len()
    }

    pub fn move_resource(&mut self, delta: isize) {
        let len = self.resource_rows();
        self.res_selected = step(self.res_selected, delta, len);
    }

    pub fn move_prompt(&mut self, delta: isize) {
        let len = self.prompts.items.len();
        self.prompt_selected = step(self.prompt_selected, delta, len);
    }

    pub fn move_field(&mut self, delta: isize) {
        if let Some(form) = &mut self.form {
            form.field = step(form.field, delta, form.fields.len());
        }
    }

    pub fn has_form(&self) -> bool {
        self.form.is_some()
    }

    /// The selected row: a resource, or a template.
    fn selected_resource(&self) -> Option<(bool, &Value)> {
        let n = self.resources.items.len();
        if self.res_selected < n {
            self.resources
                .items
                .get(self.res_selected)
                .map(|v| (false, v))
        } else {
            self.templates
                .items
                .get(self.res_selected - n)
                .map(|v| (true, v))
        }
    }

    pub fn commands(&self, section: Section) -> Vec<Command> {
        let mut c = vec![
            Command::Up,
            Command::Down,
            Command::Top,
            Command::Bottom,
            Command::Relist,
            Command::Back,
        ];
        match section {
            Section::Resources => {
                if self.resource_rows() > 0 {
                    c.push(Command::ReadResource);
                }
                if self
                    .selected_resource()
                    .is_some_and(|(template, _)| !template)
                {
                    c.push(Command::ToggleSubscribe);
                }
                if self.resources.next.is_some() || self.templates.next.is_some() {
                    c.push(Command::NextListPage);
                }
            }
            _ => {
                if !self.prompts.items.is_empty() {
                    c.push(Command::GetPrompt);
                }
                if self.prompts.next.is_some() {
                    c.push(Command::NextListPage);
                }
            }
        }
        c
    }

    /// Runs a command of the Resources or Prompts section; the mode to show next,
    /// when it changes.
    pub fn run(
        &mut self,
        section: Section,
        command: Command,
        remote: &Arc<Remote>,
        ctx: &mut Ctx<'_>,
    ) -> Option<Mode> {
        match command {
            Command::Relist => self.relist(section, remote, ctx),
            Command::NextListPage => match section {
                Section::Resources => {
                    if self.resources.next.is_some() {
                        self.ask_page(List::Resources, remote, ctx);
                    }
                    if self.templates.next.is_some() {
                        self.ask_page(List::Templates, remote, ctx);
                    }
                }
                _ => self.ask_page(List::Prompts, remote, ctx),
            },
            Command::ReadResource => {
                let (template, item) = self.selected_resource()?;
                if template {
                    let uri_template = item["uriTemplate"].as_str().unwrap_or("").to_string();
                    let name = item["name"].as_str().unwrap_or("").to_string();
                    let fields = template_vars(&uri_template)
                        .into_iter()
                        .map(|v| text_field(&v, true, ""))
                        .collect();
                    self.open_form(Target::Template { uri_template, name }, fields);
                    return Some(Mode::Form);
                }
                let uri = item["uri"].as_str().unwrap_or("").to_string();
                self.form = None;
                self.read(uri, remote, ctx);
                return Some(Mode::Result);
            }
            Command::ToggleSubscribe => {
                let (false, item) = self.selected_resource()? else {
                    return None;
                };
                let uri = item["uri"].as_str().unwrap_or("").to_string();
                if !remote.server_info()["capabilities"]["resources"]["subscribe"]
                    .as_bool()
                    .unwrap_or(false)
                {
                    ctx.status
                        .error("the server does not offer subscriptions to its resources");
                    return None;
                }
                let on = !self.subscribed.contains(&uri);
                let r = remote.clone();
                let asked = uri.clone();
                let id = ctx
                    .dispatcher
                    .spawn_task(async move { r.subscribe(&asked, on).await });
                self.pending.insert(id, Pending::Subscribe(uri, on));
            }
            Command::GetPrompt => {
                let prompt = self.prompts.items.get(self.prompt_selected)?.clone();
                let name = prompt["name"].as_str().unwrap_or("").to_string();
                let fields: Vec<Field> = prompt["arguments"]
                    .as_array()
                    .map(|args| {
                        args.iter()
                            .map(|a| {
                                text_field(
                                    a["name"].as_str().unwrap_or(""),
                                    a["required"].as_bool().unwrap_or(false),
                                    a["description"].as_str().unwrap_or(""),
                                )
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                if fields.is_empty() {
                    self.form = None;
                    self.get(name, json!({}), remote, ctx);
                    return Some(Mode::Result);
                }
                self.open_form(Target::Prompt { name }, fields);
                return Some(Mode::Form);
            }
            Command::SubmitArgs => return self.submit(remote, ctx),
            Command::NextCompletion => self.next_completion(),
            _ => {}
        }
        None
    }

    fn open_form(&mut self, target: Target, fields: Vec<Field>) {
        let same = match (&self.form, &target) {
            (Some(f), Target::Prompt { name }) => {
                matches!(&f.target, Target::Prompt { name: n } if n == name)
            }
            (Some(f), Target::Template { uri_template, .. }) => {
                matches!(&f.target, Target::Template { uri_template: u, .. } if u == uri_template)
            }
            _ => false,
        };
        if !same {
            self.form = Some(ArgsForm {
                target,
                fields,
                field: 0,
                offered: HashMap::new(),
                asked: HashMap::new(),
            });
        }
    }

    fn submit(&mut self, remote: &Arc<Remote>, ctx: &mut Ctx<'_>) -> Option<Mode> {
        let form = self.form.as_ref()?;
        if let Some(missing) = form
            .fields
            .iter()
            .find(|f| f.required && f.text.trim().is_empty())
        {
            ctx.status.error(format!("{} is required", missing.name));
            return None;
        }
        let args = form_arguments(&form.fields).ok()?;
        match form.target.clone() {
            Target::Template { uri_template, .. } => {
                let values: HashMap<String, String> = form
                    .fields
                    .iter()
                    .map(|f| (f.name.clone(), f.text.clone()))
                    .collect();
                self.read(expand(&uri_template, &values), remote, ctx);
            }
            Target::Prompt { name } => self.get(name, args, remote, ctx),
        }
        Some(Mode::Result)
    }

    fn read(&mut self, uri: String, remote: &Arc<Remote>, ctx: &mut Ctx<'_>) {
        let r = remote.clone();
        let asked = uri.clone();
        let id = ctx
            .dispatcher
            .spawn_task(async move { r.read_resource(&asked).await });
        self.shown = Some(Shown {
            title: format!("read {uri}"),
            lines: None,
        });
        self.pending.insert(id, Pending::Read(uri));
    }

    fn get(&mut self, name: String, args: Value, remote: &Arc<Remote>, ctx: &mut Ctx<'_>) {
        let r = remote.clone();
        let asked = name.clone();
        let id = ctx
            .dispatcher
            .spawn_task(async move { r.get_prompt(&asked, args).await });
        self.shown = Some(Shown {
            title: format!("prompt {name}"),
            lines: None,
        });
        self.pending.insert(id, Pending::Get(name));
    }

    /// Text typed into the form's selected field; the server is asked for
    /// completions of the new text.
    pub fn type_char(&mut self, c: char, remote: &Arc<Remote>, ctx: &mut Ctx<'_>) {
        if let Some(form) = &mut self.form
            && let Some(f) = form.fields.get_mut(form.field)
        {
            f.text.push(c);
        }
        self.ask_completions(remote, ctx);
    }

    pub fn erase(&mut self, all: bool, remote: &Arc<Remote>, ctx: &mut Ctx<'_>) {
        if let Some(form) = &mut self.form
            && let Some(f) = form.fields.get_mut(form.field)
        {
            if all {
                f.text.clear();
            } else {
                f.text.pop();
            }
        }
        self.ask_completions(remote, ctx);
    }

    fn ask_completions(&mut self, remote: &Arc<Remote>, ctx: &mut Ctx<'_>) {
        if !remote.server_info()["capabilities"]["completions"].is_object() {
            return;
        }
        let Some(form) = &mut self.form else { return };
        let Some(f) = form.fields.get(form.field) else {
            return;
        };
        let what = match &form.target {
            Target::Prompt { name } => CompleteRef::Prompt(name.clone()),
            Target::Template { uri_template, .. } => CompleteRef::Template(uri_template.clone()),
        };
        let context: serde_json::Map<String, Value> = form
            .fields
            .iter()
            .enumerate()
            .filter(|(k, o)| *k != form.field && !o.text.is_empty())
            .map(|(_, o)| (o.name.clone(), Value::String(o.text.clone())))
            .collect();
        let (argument, text, field) = (f.name.clone(), f.text.clone(), form.field);
        let r = remote.clone();
        let asked_text = text.clone();
        let id = ctx.dispatcher.spawn_task(async move {
            r.complete(&what, &argument, &asked_text, Some(Value::Object(context)))
                .await
        });
        form.asked.insert(field, id);
        self.pending.insert(id, Pending::Complete { field, text });
    }

    /// Fills the selected field with the server's next completion.
    fn next_completion(&mut self) {
        let Some(form) = &mut self.form else { return };
        let field = form.field;
        let Some((values, pick)) = form.offered.get_mut(&field) else {
            return;
        };
        if values.is_empty() {
            return;
        }
        let value = values[*pick % values.len()].clone();
        *pick = (*pick + 1) % values.len();
        if let Some(f) = form.fields.get_mut(field) {
            f.text = value;
        }
    }

    /// Counts the updates of subscribed resources among fresh notifications.
    pub fn note_updates(&mut self, fresh: &[(u64, Value)]) {
        for (at_ms, note) in fresh {
            if note["method"] == "notifications/resources/updated"
                && let Some(uri) = note["params"]["uri"].as_str()
            {
                let entry = self
                    .updates
                    .entry(uri.to_string())
                    .or_insert((0, String::new()));
                entry.0 += 1;
                entry.1 = format!("{:.1}s", *at_ms as f64 / 1e3);
            }
        }
    }

    pub fn on_reply(&mut self, reply: &Reply, ctx: &mut Ctx<'_>) -> bool {
        let Some(pending) = self.pending.remove(&reply.id) else {
            return false;
        };
        match pending {
            Pending::Page(list) => {
                let listing = self.listing(list);
                listing.loading = false;
                match &reply.result {
                    Ok(page) => {
                        if let Some(items) = page[list.key()].as_array() {
                            listing.items.extend(items.iter().cloned());
                        }
                        listing.next = page["nextCursor"]
                            .as_str()
                            .filter(|c| !c.is_empty())
                            .map(str::to_string);
                        listing.error = None;
                    }
                    Err(e) => {
                        listing.error = Some(e.message.clone());
                        ctx.status.tool_error(&format!("listing {}", list.key()), e);
                    }
                }
            }
            Pending::Read(uri) => {
                let lines = match &reply.result {
                    Ok(answer) => Ok(contents_lines(answer)),
                    Err(e) => {
                        ctx.status.tool_error(&format!("reading {uri}"), e);
                        Err(error_lines(e, ctx))
                    }
                };
                if let Some(shown) = &mut self.shown {
                    shown.lines = Some(lines);
                }
            }
            Pending::Get(name) => {
                let lines = match &reply.result {
                    Ok(answer) => Ok(prompt_lines(answer)),
                    Err(e) => {
                        ctx.status.tool_error(&format!("getting prompt {name}"), e);
                        Err(error_lines(e, ctx))
                    }
                };
                if let Some(shown) = &mut self.shown {
                    shown.lines = Some(lines);
                }
            }
            Pending::Subscribe(uri, on) => match &reply.result {
                Ok(_) => {
                    if on {
                        self.subscribed.insert(uri.clone());
                        ctx.status.info(format!("subscribed to {uri}"));
                    } else {
                        self.subscribed.remove(&uri);
                        ctx.status.info(format!("unsubscribed from {uri}"));
                    }
                }
                Err(e) => ctx.status.tool_error(&format!("subscribing to {uri}"), e),
            },
            Pending::Complete { field, text } => {
                let Some(form) = &mut self.form else {
                    return true;
                };
                if form.asked.get(&field) != Some(&reply.id) {
                    return true;
                }
                if let Ok(answer) = &reply.result {
                    let values: Vec<String> = answer["completion"]["values"]
                        .as_array()
                        .map(|v| {
                            v.iter()
                                .filter_map(|s| s.as_str().map(str::to_string))
                                .collect()
                        })
                        .unwrap_or_default();
                    let _ = text;
                    form.offered.insert(field, (values, 0));
                }
            }
        }
        true
    }

    pub fn render(
        &mut self,
        section: Section,
        mode: Mode,
        scroll: &mut usize,
        area: Rect,
        buf: &mut Buffer,
        ui: &Ui<'_>,
    ) {
        let [list, detail] =
            Layout::horizontal([Constraint::Percentage(40), Constraint::Min(0)]).areas(area);
        let (list, detail) = if area.width < 60 {
            // Narrow: the list, or what it opened, the whole width.
            match mode {
                Mode::List => (area, Rect::default()),
                _ => (Rect::default(), area),
            }
        } else {
            (list, detail)
        };
        match section {
            Section::Resources => self.render_resources(list, mode == Mode::List, buf, ui),
            _ => self.render_prompts(list, mode == Mode::List, buf, ui),
        }
        if detail.width == 0 {
            return;
        }
        match mode {
            Mode::Form => self.render_form(detail, buf, ui),
            Mode::Result => self.render_shown(detail, scroll, buf, ui),
            _ => self.render_selected(section, detail, buf, ui),
        }
    }

    fn render_resources(&mut self, area: Rect, focused: bool, buf: &mut Buffer, ui: &Ui<'_>) {
        if area.width == 0 {
            return;
        }
        let theme = ui.theme;
        let more = if self.resources.next.is_some() || self.templates.next.is_some() {
            " · n: more"
        } else {
            ""
        };
        let block = area_block(
            ui,
            &format!(
                " Resources {} · templates {}{more} ",
                self.resources.items.len(),
                self.templates.items.len()
            ),
            focused,
        );
        let inner = block.inner(area);
        block.render(area, buf);
        let rows = usize::from(inner.height);
        if rows == 0 {
            return;
        }
        let width = usize::from(inner.width);
        let mut all: Vec<(Role, String)> = Vec::new();
        for (k, r) in self.resources.items.iter().enumerate() {
            let uri = r["uri"].as_str().unwrap_or("?");
            let mut text = r["name"].as_str().unwrap_or(uri).to_string();
            if self.subscribed.contains(uri) {
                let n = self.updates.get(uri).map_or(0, |u| u.0);
                text = format!("{text} ◉ {n} updates");
            }
            all.push((row_role(k == self.res_selected, focused), text));
        }
        let n = self.resources.items.len();
        for (k, t) in self.templates.items.iter().enumerate() {
            let text = format!(
                "⧉ {}",
                t["name"]
                    .as_str()
                    .or(t["uriTemplate"].as_str())
                    .unwrap_or("?")
            );
            all.push((row_role(n + k == self.res_selected, focused), text));
        }
        if all.is_empty() {
            let note = listing_note(&self.resources).or(listing_note(&self.templates));
            all.push((
                Role::Muted,
                note.unwrap_or_else(|| "The server lists no resources.".into()),
            ));
        }
        draw_rows(
            &all,
            self.res_selected,
            &mut self.res_top,
            inner,
            width,
            buf,
            theme,
        );
    }

    fn render_prompts(&mut self, area: Rect, focused: bool, buf: &mut Buffer, ui: &Ui<'_>) {
        if area.width == 0 {
            return;
        }
        let theme = ui.theme;
        let more = if self.prompts.next.is_some() {
            " · n: more"
        } else {
            ""
        };
        let block = area_block(
            ui,
            &format!(" Prompts {}{more} ", self.prompts.items.len()),
            focused,
        );
        let inner = block.inner(area);
        block.render(area, buf);
        let width = usize::from(inner.width);
        let mut all: Vec<(Role, String)> = self
            .prompts
            .items
            .iter()
            .enumerate()
            .map(|(k, p)| {
                (
                    row_role(k == self.prompt_selected, focused),
                    p["name"].as_str().unwrap_or("?").to_string(),
                )
            })
            .collect();
        if all.is_empty() {
            all.push((
                Role::Muted,
                listing_note(&self.prompts)
                    .unwrap_or_else(|| "The server lists no prompts.".into()),
            ));
        }
        draw_rows(
            &all,
            self.prompt_selected,
            &mut self.prompt_top,
            inner,
            width,
            buf,
            theme,
        );
    }

    /// The selected resource, template or prompt, described.
    fn render_selected(&self, section: Section, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let (title, item, hint) = match section {
            Section::Resources => match self.selected_resource() {
                Some((true, t)) => (
                    "template",
                    t.clone(),
                    "Enter fills in its variables, with completions, to read one",
                ),
                Some((false, r)) => (
                    "resource",
                    r.clone(),
                    "Enter reads it; s subscribes to its updates",
                ),
                None => ("resource", Value::Null, ""),
            },
            _ => (
                "prompt",
                self.prompts
                    .items
                    .get(self.prompt_selected)
                    .cloned()
                    .unwrap_or(Value::Null),
                "Enter fills in its arguments, with completions, and gets it",
            ),
        };
        let block = area_block(ui, &format!(" {title} "), false);
        let inner = block.inner(area);
        block.render(area, buf);
        if item.is_null() {
            return;
        }
        let width = usize::from(inner.width).max(10);
        let mut lines: Vec<Line<'_>> = Vec::new();
        for key in ["name", "title", "uri", "uriTemplate", "mimeType", "size"] {
            if let Some(v) = item.get(key).filter(|v| !v.is_null()) {
                let v = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                lines.push(Line::from(vec![
                    Span::styled(format!("{key} "), theme.style(Role::Field)),
                    Span::styled(v, theme.style(Role::Value)),
                ]));
            }
        }
        if let Some(d) = item["description"].as_str() {
            for l in wrap(d, width) {
                lines.push(Line::from(Span::styled(l, theme.style(Role::Text))));
            }
        }
        if let Some(args) = item["arguments"].as_array() {
            lines.push(Line::from(Span::styled(
                "arguments (* required)",
                theme.style(Role::Title),
            )));
            for a in args {
                lines.push(Line::from(vec![
                    Span::styled(
                        format!(
                            "  {}{} ",
                            a["name"].as_str().unwrap_or("?"),
                            if a["required"] == true { "*" } else { "" }
                        ),
                        theme.style(Role::Field),
                    ),
                    Span::styled(
                        a["description"].as_str().unwrap_or("").to_string(),
                        theme.style(Role::Muted),
                    ),
                ]));
            }
        }
        if let Some(uri) = item["uri"].as_str()
            && let Some((n, at)) = self.updates.get(uri)
        {
            lines.push(Line::from(Span::styled(
                format!("{n} updates, the last at {at}"),
                theme.style(Role::Info),
            )));
        }
        lines.push(Line::default());
        lines.push(Line::from(Span::styled(hint, theme.style(Role::Muted))));
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .render(inner, buf);
    }

    fn render_form(&self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let Some(form) = &self.form else { return };
        let title = match &form.target {
            Target::Template { name, .. } => format!(" read from template {name} "),
            Target::Prompt { name } => format!(" get prompt {name} "),
        };
        let block = area_block(ui, &title, true);
        let inner = block.inner(area);
        block.render(area, buf);
        let width = usize::from(inner.width);
        let mut lines: Vec<Line<'_>> = Vec::new();
        let name_w = form
            .fields
            .iter()
            .map(|f| f.name.len() + 1)
            .max()
            .unwrap_or(0)
            .min(20);
        for (i, f) in form.fields.iter().enumerate() {
            let selected = i == form.field;
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
                Span::styled(f.text.clone(), theme.style(Role::Value)),
            ];
            if selected {
                spans.push(Span::styled("▏", theme.style(Role::Prompt)));
            }
            lines.push(Line::from(spans));
            if selected && let Some((values, _)) = form.offered.get(&i) {
                let offered = if values.is_empty() {
                    "  no completions".to_string()
                } else {
                    format!("  Ctrl-N: {}", values.join(" · "))
                };
                lines.push(Line::from(Span::styled(
                    fit(&offered, width),
                    theme.style(Role::Info),
                )));
            }
        }
        if let Target::Template { uri_template, .. } = &form.target {
            let values: HashMap<String, String> = form
                .fields
                .iter()
                .map(|f| (f.name.clone(), f.text.clone()))
                .collect();
            lines.push(Line::default());
            lines.push(Line::from(vec![
                Span::styled("uri ", theme.style(Role::Field)),
                Span::styled(expand(uri_template, &values), theme.style(Role::Value)),
            ]));
        }
        if let Some(f) = form.fields.get(form.field)
            && !f.description.is_empty()
        {
            lines.push(Line::from(Span::styled(
                f.description.clone(),
                theme.style(Role::Muted),
            )));
        }
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .render(inner, buf);
    }

    fn render_shown(&self, area: Rect, scroll: &mut usize, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let Some(shown) = &self.shown else { return };
        let state = match &shown.lines {
            None => "…",
            Some(Ok(_)) => "",
            Some(Err(_)) => " · error",
        };
        let block = area_block(ui, &format!(" {}{state} ", shown.title), true);
        let inner = block.inner(area);
        block.render(area, buf);
        let rows = usize::from(inner.height);
        let width = usize::from(inner.width);
        let lines: Vec<(Role, String)> = match &shown.lines {
            None => vec![(Role::Muted, "waiting for the answer…".into())],
            Some(Ok(lines)) => lines.clone(),
            Some(Err(lines)) => lines.iter().map(|l| (Role::Error, l.clone())).collect(),
        };
        *scroll = (*scroll).min(lines.len().saturating_sub(rows));
        for (k, (role, text)) in lines.iter().skip(*scroll).take(rows).enumerate() {
            buf.set_stringn(
                inner.x,
                inner.y + k as u16,
                fit(text, width),
                width,
                theme.style(*role),
            );
        }
    }
}

fn text_field(name: &str, required: bool, description: &str) -> Field {
    Field {
        name: name.to_string(),
        kind: Kind::Text,
        required,
        description: description.to_string(),
        default: None,
        text: String::new(),
    }
}

fn error_lines(e: &crate::error::ToolError, ctx: &Ctx<'_>) -> Vec<String> {
    serde_json::to_string_pretty(&e.to_json(&ctx.dispatcher.core().timestamp()))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

fn step(at: usize, delta: isize, len: usize) -> usize {
    if len == 0 {
        0
    } else {
        at.saturating_add_signed(delta).min(len - 1)
    }
}

fn row_role(selected: bool, focused: bool) -> Role {
    match (selected, focused) {
        (true, true) => Role::Selected,
        (true, false) => Role::SelectedInactive,
        _ => Role::Text,
    }
}

/// Why a list is empty: loading, failed, or not offered.
fn listing_note(listing: &Listing) -> Option<String> {
    if listing.loading {
        return Some("listing…".into());
    }
    listing.error.clone()
}

/// Draws rows, keeping the selected one on screen.
fn draw_rows(
    rows: &[(Role, String)],
    selected: usize,
    top: &mut usize,
    inner: Rect,
    width: usize,
    buf: &mut Buffer,
    theme: &crate::tui::theme::Theme,
) {
    let height = usize::from(inner.height);
    if height == 0 {
        return;
    }
    if selected < *top {
        *top = selected;
    } else if selected >= *top + height {
        *top = selected + 1 - height;
    }
    for (k, (role, text)) in rows.iter().enumerate().skip(*top).take(height) {
        let mark = if k == selected && matches!(role, Role::Selected | Role::SelectedInactive) {
            SELECTED_MARK
        } else {
            "  "
        };
        buf.set_stringn(
            inner.x,
            inner.y + (k - *top) as u16,
            format!("{:<width$}", fit(&format!("{mark}{text}"), width)),
            width,
            theme.style(*role),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_name_their_variables_and_expand() {
        assert_eq!(template_vars("demo://r/{id}"), ["id"]);
        assert_eq!(
            template_vars("structs://handles/{handle}{?page,page_size}"),
            ["handle", "page", "page_size"]
        );
        let values: HashMap<String, String> = [("handle", "h 1"), ("page", "2"), ("page_size", "")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(
            expand("structs://handles/{handle}{?page,page_size}", &values),
            "structs://handles/h%201?page=2"
        );
        assert_eq!(
            expand(
                "a/{+path}",
                &[("path".to_string(), "x/y".to_string())].into()
            ),
            "a/x/y"
        );
    }

    #[test]
    fn contents_show_text_json_and_binary() {
        let lines = contents_lines(&json!({"contents": [
            {"uri": "a://1", "mimeType": "text/plain", "text": "hello\nworld"},
            {"uri": "a://2", "mimeType": "application/json", "text": "{\"k\": [1, 2]}"},
            {"uri": "a://3", "mimeType": "image/png", "blob": "AAAA"}
        ]}));
        let text: Vec<&str> = lines.iter().map(|(_, t)| t.as_str()).collect();
        assert!(text.contains(&"hello"));
        assert!(text.contains(&"  k: [2]"), "{text:?}");
        assert!(text.contains(&"    [1]: 2"), "{text:?}");
        assert!(text.contains(&"binary: 3 bytes of image/png"), "{text:?}");
    }

    #[test]
    fn prompts_show_roles_and_embedded_resources() {
        let lines = prompt_lines(&json!({"messages": [
            {"role": "user", "content": {"type": "text", "text": "hi"}},
            {"role": "assistant", "content": {"type": "resource",
                "resource": {"uri": "r://1", "mimeType": "text/plain", "text": "body"}}}
        ]}));
        let text: Vec<&str> = lines.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(
            text,
            [
                "user:",
                "  hi",
                "assistant:",
                "  embedded resource r://1 text/plain",
                "    body"
            ]
        );
    }
}
