//! The Server tab's Resources and Prompts sections: the server's resources and
//! resource templates (paged), a form per template's variables or prompt's
//! arguments with the server's completions as you type, what a read or a prompt
//! gives, and subscriptions with their updates.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::content::{contents_lines, expand, prompt_lines, template_vars};
use super::form::{Field, Kind, form_arguments};
use super::{Mode, Section};
use crate::context::CallContext;
use crate::mcp::client::{CompleteRef, Remote};
use crate::tui::dispatch::{Reply, RequestId};
use crate::tui::keymap::Command;
use crate::tui::pane::Ctx;
use crate::tui::theme::Role;
use crate::tui::widgets::cursor::step;

mod render;

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
    /// A read, and the cache's word on its answer when it came from the cache.
    Read(String, Arc<Mutex<Option<Value>>>),
    Subscribe(String, bool),
    Get(String),
    /// Completions for a field of the form. At most one is asked at a time per field:
    /// what is typed meanwhile is asked for when it answers, from `remote`.
    Complete {
        field: usize,
        remote: Arc<Remote>,
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
    /// Fields typed in while their completion request was out: asked again when it
    /// answers, its answer being for text no longer there.
    behind: HashSet<usize>,
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
                behind: HashSet::new(),
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
        let hit: Arc<Mutex<Option<Value>>> = Arc::default();
        let seen = hit.clone();
        let id = ctx.dispatcher.spawn_task(async move {
            let call = CallContext::new().with_trail(move |event| {
                if let Some(cache) = event.get("cache") {
                    *seen.lock().unwrap_or_else(|e| e.into_inner()) = Some(cache.clone());
                }
            });
            r.request("resources/read", json!({"uri": asked}), call)
                .await
        });
        self.shown = Some(Shown {
            title: format!("read {uri}"),
            lines: None,
        });
        self.pending.insert(id, Pending::Read(uri, hit));
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
        if form
            .asked
            .get(&form.field)
            .is_some_and(|id| self.pending.contains_key(id))
        {
            form.behind.insert(form.field);
            return;
        }
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
        let id = ctx.dispatcher.spawn_task(async move {
            r.complete(&what, &argument, &text, Some(Value::Object(context)))
                .await
        });
        form.asked.insert(field, id);
        let remote = remote.clone();
        self.pending.insert(id, Pending::Complete { field, remote });
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
            Pending::Read(uri, hit) => self.on_read(&uri, &hit, reply, ctx),
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
            Pending::Complete { field, remote } => {
                let Some(form) = &mut self.form else {
                    return true;
                };
                if form.asked.get(&field) != Some(&reply.id) {
                    return true;
                }
                if form.behind.remove(&field) {
                    // Answered for text since typed over: ask for what is there now.
                    if form.field == field {
                        self.ask_completions(&remote, ctx);
                    }
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
                    form.offered.insert(field, (values, 0));
                }
            }
        }
        true
    }

    /// A resource read answered: its contents (with the caching hints) shown, or why
    /// not.
    fn on_read(&mut self, uri: &str, hit: &Mutex<Option<Value>>, reply: &Reply, ctx: &mut Ctx<'_>) {
        let lines = match &reply.result {
            Ok(answer) => {
                // The caching hints: the answer reused, or how long the
                // server says it holds.
                let cache = hit.lock().unwrap_or_else(|e| e.into_inner()).take();
                let note = cache.map(|c| super::trail::cache_line(&c)).or_else(|| {
                    crate::mcp::client::cache_hints(answer).map(|(ttl, scope)| {
                        super::trail::cache_line(&json!({"ttlMs": ttl, "cacheScope": scope}))
                    })
                });
                let mut lines: Styled = note.into_iter().map(|n| (Role::Muted, n)).collect();
                lines.extend(contents_lines(answer));
                Ok(lines)
            }
            Err(e) => {
                ctx.status.tool_error(&format!("reading {uri}"), e);
                Err(error_lines(e, ctx))
            }
        };
        if let Some(shown) = &mut self.shown {
            shown.lines = Some(lines);
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
        rules: Default::default(),
    }
}

fn error_lines(e: &crate::error::ToolError, ctx: &Ctx<'_>) -> Vec<String> {
    serde_json::to_string_pretty(&e.to_json(&ctx.dispatcher.timestamp()))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}
