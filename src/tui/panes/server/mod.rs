//! The Server tab, in the manner of the MCP Inspector: everything a client can do with
//! the server the console talks to (the embedded core, or the one attached with
//! `--connect`), one section each:
//!
//! - **Tools**: each tool's schema, a form built from it, the call with its progress
//!   (cancel with `x`), the answer; every call kept in the **History**, to see again
//!   or re-run.
//! - **Resources** and their templates (a form per template's variables, with the
//!   server's completions), read as text, a JSON tree or a binary's size and type;
//!   subscriptions, with the updates as they come.
//! - **Prompts**: a form for the arguments (with completions), and the messages a
//!   prompt gives, with their roles and embedded resources.
//! - **Log**: the level the server logs at (`logging/setLevel`) and its log messages,
//!   filtered by level.
//! - **Requests** the server makes of the client: a sampling request answered by a
//!   reply the operator types (there is no model here: the operator is one), an
//!   elicitation by a form built from its schema.
//! - **Roots** offered to the server, added and removed as the operator likes.
//! - **Notifications** and the raw **Traffic** both ways.
//!
//! Tool calls go through the [`Dispatcher`](crate::tui::dispatch::Dispatcher) like
//! every other pane's, so they are recorded with `--record` and never block a frame;
//! the other requests run as the dispatcher's tasks through the same
//! [`Remote`] that `structs-console client` uses.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use serde_json::Value;

use crate::clock::WallClock;
use crate::context::{CallContext, ProgressUpdate};
use crate::core::Core;
use crate::error::ToolError;
use crate::mcp::client::{Filter, Remote, Which};
use crate::tui::dispatch::{Reply, RequestId};
use crate::tui::keymap::{Command, Scope};
use crate::tui::pane::{Ctx, EventState, Pane, Ui};
use crate::tui::theme::Role;
use crate::tui::widgets::cursor::{Cursor, ROWS, SCROLLING, Scroll, step};

mod browse;
mod content;
mod form;
mod render;
mod requests;
mod trail;

use browse::Browse;
use form::{Field, form_arguments, form_fields};
use requests::Requests;

/// How many calls the history keeps (the newest).
const HISTORY_KEEP: usize = 200;
/// The longest search the Server tab takes.
const MAX_SEARCH: usize = 96;

/// A tool as the pane lists it.
struct ToolInfo {
    name: &'static str,
    description: &'static str,
    schema: Value,
}

/// The sections of the tab, in `Tab` order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Section {
    Tools,
    Resources,
    Prompts,
    Log,
    Requests,
    Roots,
    History,
    Notifications,
    Traffic,
}

impl Section {
    const ALL: [Section; 9] = [
        Section::Tools,
        Section::Resources,
        Section::Prompts,
        Section::Log,
        Section::Requests,
        Section::Roots,
        Section::History,
        Section::Notifications,
        Section::Traffic,
    ];

    fn title(self) -> &'static str {
        match self {
            Section::Tools => "Tools",
            Section::Resources => "Resources",
            Section::Prompts => "Prompts",
            Section::Log => "Log",
            Section::Requests => "Requests",
            Section::Roots => "Roots",
            Section::History => "History",
            Section::Notifications => "Notifications",
            Section::Traffic => "Traffic",
        }
    }

    /// Whether the section is there without an attached server (the embedded core
    /// has tools and a history, nothing else a client would see).
    fn local(self) -> bool {
        matches!(self, Section::Tools | Section::History)
    }
}

/// What the section shows: its list, a form, an answer, or a line being typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    List,
    Form,
    Result,
    Input,
}

/// Lines of text, each with its style.
pub(super) type Styled = Vec<(Role, String)>;

/// One call made from the Tools section, kept in the history.
pub(super) struct Call {
    tool: &'static str,
    args: Value,
    id: RequestId,
    /// When it was sent, by the core's wall clock (a fixed clock in tests makes every
    /// duration 0).
    started: chrono::DateTime<chrono::Utc>,
    took: Option<Duration>,
    /// The answer as lines: text as text, anything else pretty JSON (an error in the
    /// error format); `None` while it runs. Wrapped to the pane when drawn.
    answer: Option<Result<Styled, Styled>>,
    /// The last progress report, while it runs.
    progress: Arc<Mutex<Option<ProgressUpdate>>>,
    /// Cancels the call.
    cancel: CallContext,
    /// Whether `x` was pressed.
    cancelling: bool,
    /// What happened along the call beyond progress ([`trail`]): the rounds of input
    /// the server asked for, the statuses of the task it ran the call as.
    trail: Arc<Mutex<Vec<Value>>>,
}

/// The Server pane.
pub(crate) struct ServerPane {
    /// The core's wall clock, for how long calls take.
    wall: WallClock,
    tools: Vec<ToolInfo>,
    remote: Option<Arc<Remote>>,
    section: Section,
    mode: Mode,
    /// The selected tool and the first on show.
    tool_list: Cursor,
    /// The form of the selected tool, and its selected field.
    fields: Vec<Field>,
    field: usize,
    /// The tool whose form `fields` holds.
    form_tool: Option<&'static str>,
    /// Every call made here, oldest first, and the one the answer view shows.
    history: VecDeque<Call>,
    showing: Option<RequestId>,
    history_list: Cursor,
    result_scroll: Scroll,
    /// Resources, templates and prompts.
    browse: Browse,
    /// Log messages, the server's requests, roots.
    requests: Requests,
    /// The selected message of the notifications or traffic list, and whether it is
    /// shown whole under the list.
    log_list: Cursor,
    follow: bool,
    expanded: bool,
    /// Rows a list showed last frame (for paging).
    page: usize,
    /// Spinner frame, advanced each draw.
    tick: usize,
    /// How many of the server's requests were waiting when last looked at.
    asks_seen: usize,
    /// The call the Tools section showed, or was waiting for, when the operator left
    /// it (to answer the server's request that call made, say), shown again on coming
    /// back.
    tools_showing: Option<RequestId>,
    /// A search is being typed (`/`): a tool's name in Tools, the messages' filter in
    /// Notifications and Traffic.
    searching: bool,
    /// The tool name searched for last.
    tool_search: String,
    /// Which messages the notifications and traffic lists keep.
    log_filter: Filter,
}

impl ServerPane {
    /// Shows `remote`, the server the core forwards to: its identity, every section,
    /// and its traffic.
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
            wall: core.wall(),
            tools,
            remote: None,
            section: Section::Tools,
            mode: Mode::List,
            tool_list: Cursor::default(),
            fields: Vec::new(),
            field: 0,
            form_tool: None,
            history: VecDeque::new(),
            showing: None,
            history_list: Cursor::default(),
            result_scroll: Scroll::default(),
            browse: Browse::default(),
            requests: Requests::default(),
            log_list: Cursor::default(),
            follow: true,
            expanded: false,
            page: 10,
            tick: 0,
            asks_seen: 0,
            tools_showing: None,
            searching: false,
            tool_search: String::new(),
            log_filter: Filter::default(),
        }
    }

    /// Says on the status line when the server asks something of the console (a
    /// sampling or elicitation request), whichever tab is on show. True when the
    /// requests waiting changed, so the frame is drawn again.
    fn announce(&mut self, status: &mut crate::tui::pane::StatusLine) -> bool {
        let Some(remote) = &self.remote else {
            return false;
        };
        let count = remote.asks().count();
        let before = std::mem::replace(&mut self.asks_seen, count);
        if count > before
            && let Some((_, kind, _)) = remote.asks().waiting().last()
        {
            status.info(format!(
                "the server asks: {} · answer it in 7 Server, Requests",
                kind.method()
            ));
        }
        count != before
    }

    /// The sections there are: every one attached to a server, else the local ones.
    fn sections(&self) -> Vec<Section> {
        Section::ALL
            .into_iter()
            .filter(|s| self.remote.is_some() || s.local())
            .collect()
    }

    fn open_form(&mut self) {
        let Some(tool) = self.tools.get(self.tool_list.selected) else {
            return;
        };
        if self.form_tool != Some(tool.name) || self.fields.is_empty() {
            self.fields = form_fields(&tool.schema);
            self.field = 0;
            self.form_tool = Some(tool.name);
        }
        self.mode = Mode::Form;
    }

    fn send(&mut self, ctx: &mut Ctx<'_>) {
        let Some(tool) = self.tools.get(self.tool_list.selected) else {
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
        let name = tool.name;
        self.call(name, args, ctx);
        self.mode = Mode::Result;
    }

    /// Calls `tool` with `args`, keeps the call in the history and shows its answer.
    fn call(&mut self, tool: &'static str, args: Value, ctx: &mut Ctx<'_>) {
        let progress: Arc<Mutex<Option<ProgressUpdate>>> = Arc::default();
        let sink = progress.clone();
        let trail: Arc<Mutex<Vec<Value>>> = Arc::default();
        let kept = trail.clone();
        let cancel = CallContext::new()
            .with_progress(move |update| {
                *sink.lock().unwrap_or_else(|e| e.into_inner()) = Some(update);
            })
            .with_trail(move |event| kept.lock().unwrap_or_else(|e| e.into_inner()).push(event))
            .following_tasks();
        let id = ctx.dispatcher.call_with(tool, args.clone(), cancel.clone());
        self.history.push_back(Call {
            tool,
            args,
            id,
            started: self.wall.now(),
            took: None,
            answer: None,
            progress,
            cancel,
            cancelling: false,
            trail,
        });
        while self.history.len() > HISTORY_KEEP {
            self.history.pop_front();
        }
        self.history_list.selected = self.history.len() - 1;
        self.showing = Some(id);
        self.result_scroll.reset();
    }

    /// The call the answer view shows.
    fn shown_call(&self) -> Option<&Call> {
        let id = self.showing?;
        self.history.iter().find(|c| c.id == id)
    }

    fn cancel_call(&mut self, ctx: &mut Ctx<'_>) {
        let Some(id) = self.showing else { return };
        let Some(call) = self.history.iter_mut().find(|c| c.id == id) else {
            return;
        };
        if call.answer.is_some() {
            ctx.status.info("the call has already answered");
            return;
        }
        call.cancel.cancel();
        call.cancelling = true;
        ctx.status.info(format!(
            "cancelling {}{}",
            call.tool,
            if self.remote.is_some() {
                "; the server is told"
            } else {
                ""
            }
        ));
    }

    fn rerun(&mut self, ctx: &mut Ctx<'_>) {
        let Some(call) = self.history.get(self.history_list.selected) else {
            return;
        };
        let (tool, args) = (call.tool, call.args.clone());
        self.call(tool, args, ctx);
        self.mode = Mode::Result;
    }

    /// The list the view shows, when it shows one of the wire's.
    fn which(&self) -> Option<Which> {
        match self.section {
            Section::Notifications => Some(Which::Notifications),
            Section::Traffic => Some(Which::Messages),
            _ => None,
        }
    }

    fn log_len(&self) -> usize {
        match (&self.remote, self.which()) {
            (Some(r), Some(which)) => r.wire().kept_matching(which, &self.log_filter),
            _ => 0,
        }
    }

    /// A search's text changed: Tools selects the first tool whose name holds it;
    /// the lists of messages start again from their newest.
    fn searched(&mut self, status: &mut crate::tui::pane::StatusLine) {
        if self.section == Section::Tools {
            let wanted = self.tool_search.to_lowercase();
            if wanted.is_empty() {
                return;
            }
            match self
                .tools
                .iter()
                .position(|t| t.name.to_lowercase().contains(&wanted))
            {
                Some(at) => self.tool_list.selected = at,
                None => status.info(format!("no tool's name holds {:?}", self.tool_search)),
            }
        } else {
            self.follow = true;
        }
    }

    /// The text the search on show edits.
    fn search_text(&mut self) -> &mut String {
        if self.section == Section::Tools {
            &mut self.tool_search
        } else {
            &mut self.log_filter.text
        }
    }

    /// The search commands: open, keep, clear, and hiding the console's own calls.
    fn search_command(&mut self, command: Command, ctx: &mut Ctx<'_>) {
        match command {
            Command::StartFilter => {
                self.searching = true;
                self.search_text().clear();
                if self.section != Section::Tools {
                    self.follow = true;
                }
            }
            Command::KeepFilter => self.searching = false,
            Command::DropFilter => {
                self.searching = false;
                self.search_text().clear();
                self.follow = true;
            }
            Command::ToggleOwnTraffic => {
                self.log_filter.hide_background = !self.log_filter.hide_background;
                self.follow = true;
                ctx.status.info(if self.log_filter.hide_background {
                    "the console's own polling is hidden (h shows it)"
                } else {
                    "the console's own polling is shown"
                });
            }
            _ => {}
        }
    }

    fn next_section(&mut self, forward: bool, ctx: &mut Ctx<'_>) {
        let order = self.sections();
        let at = order.iter().position(|s| *s == self.section).unwrap_or(0);
        let n = order.len();
        let next = if forward {
            order[(at + 1) % n]
        } else {
            order[(at + n - 1) % n]
        };
        self.show_section(next, ctx);
    }

    fn show_section(&mut self, next: Section, ctx: &mut Ctx<'_>) {
        if next != self.section {
            self.expanded = false;
            self.follow = true;
        }
        self.enter(next);
        if let Some(remote) = &self.remote {
            match next {
                Section::Resources => self.browse.open_resources(remote, ctx),
                Section::Prompts => self.browse.open_prompts(remote, ctx),
                _ => {}
            }
        }
    }

    /// A scrolling command: the tools, the history and the wire's lists move their
    /// cursor; a form, an answer and the other sections move as they do.
    fn scroll(&mut self, command: Command) {
        let page = self.page;
        let (list, len) = match (self.section, self.mode) {
            (_, Mode::Result) | (Section::Tools, Mode::Form) => return self.scroll_other(command),
            (Section::Tools, _) => (&mut self.tool_list, self.tools.len()),
            (Section::History, _) => (&mut self.history_list, self.history.len()),
            (Section::Notifications | Section::Traffic, _) => {
                let len = self.log_len();
                self.log_list.page = page;
                self.log_list.on(command, len);
                self.follow = match command {
                    Command::Top => false,
                    Command::Bottom => true,
                    _ => len > 0 && self.log_list.selected == len - 1,
                };
                return;
            }
            _ => return self.scroll_other(command),
        };
        list.page = page;
        list.on(command, len);
    }

    /// A scrolling command where no list cursor moves: by rows (a page is the rows
    /// shown last frame) or to either end.
    fn scroll_other(&mut self, command: Command) {
        if self.mode == Mode::Result {
            self.result_scroll.on(command);
            return;
        }
        let page = isize::try_from(self.page.max(1)).unwrap_or(10);
        match command {
            Command::Up => self.move_by(-1),
            Command::Down => self.move_by(1),
            Command::PrevPage => self.move_by(-page),
            Command::NextPage => self.move_by(page),
            Command::Top => self.jump(false),
            Command::Bottom => self.jump(true),
            _ => {}
        }
    }

    fn move_by(&mut self, delta: isize) {
        let step = |at: usize, len: usize| step(at, delta, len);
        match (self.section, self.mode) {
            // A result scrolls as a text ([`Scroll`]), in `scroll_other`.
            (_, Mode::Result) => {}
            (Section::Tools, Mode::Form) => self.field = step(self.field, self.fields.len()),
            (Section::Tools | Section::History | Section::Notifications | Section::Traffic, _) => {}
            (Section::Resources | Section::Prompts, Mode::Form) => self.browse.move_field(delta),
            (Section::Resources, _) => self.browse.move_resource(delta),
            (Section::Prompts, _) => self.browse.move_prompt(delta),
            (Section::Requests, Mode::Form) => self.requests.move_field(delta),
            (Section::Log | Section::Requests | Section::Roots, _) => {
                let remote = self.remote.clone();
                self.requests
                    .move_in(self.section, delta, remote.as_deref());
            }
        }
    }

    fn jump(&mut self, end: bool) {
        let delta = if end { isize::MAX / 2 } else { isize::MIN / 2 };
        self.move_by(delta);
    }

    /// Runs a command of a section other than the tools and the wire's lists.
    fn section_command(&mut self, command: Command, ctx: &mut Ctx<'_>) {
        let Some(remote) = self.remote.clone() else {
            return;
        };
        match (self.section, command) {
            (Section::Resources | Section::Prompts, command) => {
                if let Some(mode) = self.browse.run(self.section, command, &remote, ctx) {
                    self.mode = mode;
                    self.result_scroll.reset();
                }
            }
            (Section::Log | Section::Requests | Section::Roots, command) => {
                if let Some(mode) = self.requests.run(self.section, command, &remote, ctx) {
                    self.mode = mode;
                }
            }
            _ => {}
        }
    }

    /// Moves to section `next`: its list, or, back on Tools, the call it showed or was
    /// waiting for when the operator left (to answer the server's request that call
    /// made, say), with its answer.
    fn enter(&mut self, next: Section) {
        if self.section == Section::Tools && next != Section::Tools {
            let waiting = self.shown_call().is_some_and(|c| c.answer.is_none());
            self.tools_showing = (self.mode == Mode::Result || waiting)
                .then_some(self.showing)
                .flatten();
        }
        let back_to_call = next == Section::Tools && self.section != Section::Tools;
        self.section = next;
        self.mode = Mode::List;
        if back_to_call
            && let Some(id) = self.tools_showing.take()
            && self.history.iter().any(|c| c.id == id)
        {
            self.showing = Some(id);
            self.mode = Mode::Result;
            self.result_scroll.reset();
        }
    }

    fn back(&mut self) {
        self.expanded = false;
        match (self.section, self.mode) {
            (Section::Tools | Section::Notifications | Section::Traffic, Mode::List) => {}
            (_, Mode::List) => self.enter(Section::Tools),
            (Section::Tools, Mode::Result) => self.mode = Mode::List,
            _ => self.mode = Mode::List,
        }
    }

    /// Text typed into whichever field or line the view edits.
    fn type_char(&mut self, c: char, ctx: &mut Ctx<'_>) {
        match (self.section, self.mode) {
            (Section::Tools, Mode::Form) => {
                if let Some(f) = self.fields.get_mut(self.field) {
                    f.type_char(c);
                }
            }
            (Section::Resources | Section::Prompts, Mode::Form) => {
                if let Some(remote) = &self.remote {
                    self.browse.type_char(c, remote, ctx);
                }
            }
            (Section::Requests | Section::Roots, _) => self.requests.type_char(c),
            _ => {}
        }
    }

    fn erase(&mut self, all: bool, ctx: &mut Ctx<'_>) {
        match (self.section, self.mode) {
            (Section::Tools, Mode::Form) => {
                if let Some(f) = self.fields.get_mut(self.field) {
                    if all {
                        f.text.clear();
                    } else {
                        f.text.pop();
                    }
                }
            }
            (Section::Resources | Section::Prompts, Mode::Form) => {
                if let Some(remote) = &self.remote {
                    self.browse.erase(all, remote, ctx);
                }
            }
            (Section::Requests | Section::Roots, _) => self.requests.erase(all),
            _ => {}
        }
    }

    /// Reads what arrived on the wire since the last frame: log messages, resource
    /// updates.
    fn absorb(&mut self) {
        if let Some(remote) = &self.remote {
            let fresh = self.requests.absorb(remote);
            self.browse.note_updates(&fresh);
        }
    }
}

impl Pane for ServerPane {
    fn run(&mut self, command: Command, ctx: &mut Ctx<'_>) {
        match command {
            command if SCROLLING.contains(&command) => self.scroll(command),
            Command::OpenForm => self.open_form(),
            Command::CallTool => self.send(ctx),
            Command::EditCall => match self.section {
                Section::Tools => self.mode = Mode::Form,
                Section::Resources | Section::Prompts if self.browse.has_form() => {
                    self.mode = Mode::Form;
                }
                _ => self.mode = Mode::List,
            },
            Command::CancelCall => self.cancel_call(ctx),
            Command::ShowCall => {
                if let Some(call) = self.history.get(self.history_list.selected) {
                    self.showing = Some(call.id);
                    self.result_scroll.reset();
                    self.mode = Mode::Result;
                }
            }
            Command::RerunCall => self.rerun(ctx),
            Command::Back => self.back(),
            Command::EraseChar | Command::ClearText if self.searching => {
                if command == Command::ClearText {
                    self.search_text().clear();
                } else {
                    self.search_text().pop();
                }
                self.searched(ctx.status);
            }
            Command::EraseChar => self.erase(false, ctx),
            Command::ClearText => self.erase(true, ctx),
            Command::StartFilter
            | Command::KeepFilter
            | Command::DropFilter
            | Command::ToggleOwnTraffic => self.search_command(command, ctx),
            Command::ToggleMessage => self.expanded = !self.expanded,
            Command::FocusNext => self.next_section(true, ctx),
            Command::FocusPrev => self.next_section(false, ctx),
            other => self.section_command(other, ctx),
        }
    }

    fn handle_key(&mut self, key: &KeyEvent, ctx: &mut Ctx<'_>) -> EventState {
        if self.captures_text()
            && let KeyCode::Char(c) = key.code
            && !key
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
        {
            if self.searching {
                if self.search_text().chars().count() < MAX_SEARCH {
                    self.search_text().push(c);
                }
                self.searched(ctx.status);
            } else {
                self.type_char(c, ctx);
            }
            return EventState::Consumed;
        }
        self.run_key(key, ctx)
    }

    fn poll(&mut self, ctx: &mut Ctx<'_>) -> bool {
        self.announce(ctx.status)
    }

    fn on_reply(&mut self, reply: &Reply, ctx: &mut Ctx<'_>) -> bool {
        if self.browse.on_reply(reply, ctx) || self.requests.on_reply(reply, ctx) {
            return true;
        }
        let Some(call) = self.history.iter_mut().find(|c| c.id == reply.id) else {
            return false;
        };
        if call.answer.is_some() {
            return false;
        }
        call.took = Some(since(self.wall, call.started));
        let pretty = |v: &Value| {
            serde_json::to_string_pretty(v)
                .unwrap_or_default()
                .lines()
                .map(|l| (Role::Error, l.to_string()))
                .collect::<Styled>()
        };
        let answer = match &reply.result {
            Ok(v) => {
                ctx.status.info(format!("{} answered", call.tool));
                Ok(content::answer_lines(v))
            }
            Err(e) => {
                ctx.status.tool_error(&format!("calling {}", call.tool), e);
                Err(pretty(&error_json(e, ctx)))
            }
        };
        call.answer = Some(answer);
        true
    }

    fn scope(&self) -> Scope {
        if self.searching {
            return Scope::ServerSearch;
        }
        match (self.section, self.mode) {
            (Section::Tools, Mode::List) => Scope::ServerTools,
            (Section::Tools, Mode::Form) => Scope::ServerForm,
            (_, Mode::Result) => Scope::ServerResult,
            (Section::Notifications | Section::Traffic, _) => Scope::ServerLog,
            (Section::Resources | Section::Prompts, Mode::Form) => Scope::ServerArgs,
            (Section::Resources, _) => Scope::ServerResources,
            (Section::Prompts, _) => Scope::ServerPrompts,
            (Section::Log, _) => Scope::ServerLogging,
            (Section::Requests, Mode::Form) => Scope::ServerElicit,
            (Section::Requests, Mode::Input) => Scope::ServerReply,
            (Section::Requests, _) => Scope::ServerRequests,
            (Section::Roots, Mode::Input) => Scope::ServerRootInput,
            (Section::Roots, _) => Scope::ServerRoots,
            (Section::History, _) => Scope::ServerHistory,
            (Section::Tools, Mode::Input) => Scope::ServerTools,
        }
    }

    fn captures_text(&self) -> bool {
        self.searching || matches!(self.mode, Mode::Form | Mode::Input)
    }

    fn commands(&self) -> Vec<Command> {
        if self.searching {
            return vec![
                Command::KeepFilter,
                Command::DropFilter,
                Command::EraseChar,
                Command::ClearText,
            ];
        }
        let typing = [Command::EraseChar, Command::ClearText, Command::Back];
        let mut commands = match (self.section, self.mode) {
            (Section::Tools, Mode::List) => {
                let mut c = ROWS.to_vec();
                if !self.tools.is_empty() {
                    c.extend([Command::OpenForm, Command::StartFilter]);
                }
                c
            }
            (Section::Tools, Mode::Form) => [
                &[Command::Up, Command::Down, Command::CallTool][..],
                &typing,
            ]
            .concat(),
            (_, Mode::Result) => {
                let mut c = [&SCROLLING[..], &[Command::Back]].concat();
                match self.section {
                    Section::Tools | Section::History => {
                        if self.section == Section::Tools {
                            c.push(Command::EditCall);
                        }
                        if self.shown_call().is_some_and(|c| c.answer.is_none()) {
                            c.push(Command::CancelCall);
                        }
                    }
                    _ => {
                        if self.browse.has_form() {
                            c.push(Command::EditCall);
                        }
                    }
                }
                c
            }
            (Section::Notifications | Section::Traffic, _) => {
                let mut c = [
                    &SCROLLING[..],
                    &[Command::ToggleMessage, Command::StartFilter],
                ]
                .concat();
                if self.section == Section::Traffic {
                    c.push(Command::ToggleOwnTraffic);
                }
                c.push(Command::Back);
                c
            }
            (Section::History, _) => {
                let mut c = vec![
                    Command::Up,
                    Command::Down,
                    Command::Top,
                    Command::Bottom,
                    Command::Back,
                ];
                if !self.history.is_empty() {
                    c.extend([Command::ShowCall, Command::RerunCall]);
                }
                c
            }
            (Section::Resources | Section::Prompts, Mode::Form) => [
                &[
                    Command::Up,
                    Command::Down,
                    Command::SubmitArgs,
                    Command::NextCompletion,
                ][..],
                &typing,
            ]
            .concat(),
            (Section::Resources | Section::Prompts, _) => self.browse.commands(self.section),
            (Section::Log | Section::Requests | Section::Roots, mode) => {
                self.requests
                    .commands(self.section, mode, self.remote.as_deref())
            }
            (Section::Tools, Mode::Input) => Vec::new(),
        };
        if self.mode == Mode::List || (self.mode == Mode::Result) {
            commands.extend([Command::FocusNext, Command::FocusPrev]);
        }
        commands
    }

    fn render(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        if area.height < 4 || area.width < 20 {
            return;
        }
        self.tick = self.tick.wrapping_add(1);
        self.absorb();
        let [summary, bar, body] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Length(1),
            Constraint::Min(0),
        ])
        .areas(area);
        self.render_summary(summary, buf, ui);
        self.render_sections(bar, buf, ui);
        match self.section {
            Section::Notifications | Section::Traffic => self.render_log(body, buf, ui),
            Section::Tools => {
                let longest = self.tools.iter().map(|t| t.name.len()).max().unwrap_or(0);
                let list_w = u16::try_from(longest + 4)
                    .unwrap_or(u16::MAX)
                    .clamp(24, (body.width / 2).max(24))
                    .min(body.width);
                let [list, detail] =
                    Layout::horizontal([Constraint::Length(list_w), Constraint::Min(0)])
                        .areas(body);
                self.render_tools(list, buf, ui);
                match self.mode {
                    Mode::Form => self.render_form(detail, buf, ui),
                    Mode::Result => self.render_result(detail, buf, ui),
                    _ => self.render_tool(detail, buf, ui),
                }
            }
            Section::History => match self.mode {
                Mode::Result => self.render_result(body, buf, ui),
                _ => self.render_history(body, buf, ui),
            },
            Section::Resources | Section::Prompts => {
                let mode = self.mode;
                let section = self.section;
                self.browse
                    .render(section, mode, &mut self.result_scroll, body, buf, ui);
            }
            Section::Log | Section::Requests | Section::Roots => {
                let mode = self.mode;
                let remote = self.remote.clone();
                self.requests
                    .render(self.section, mode, remote.as_deref(), body, buf, ui);
            }
        }
    }
}

/// The time from `start` to now, by the core's wall clock.
pub(super) fn since(wall: WallClock, start: chrono::DateTime<chrono::Utc>) -> Duration {
    (wall.now() - start).to_std().unwrap_or_default()
}

fn error_json(e: &ToolError, ctx: &Ctx<'_>) -> Value {
    e.to_json(&ctx.dispatcher.timestamp())
}

#[cfg(test)]
mod tests;
