//! The Live tab: another server's tool calls as they happen, read from its control
//! endpoint (a `proxy`, `--headless --control`) or from a session log followed as it
//! grows. Calls are listed per session with their state, duration and size; the
//! selected one shows its arguments and answer as a tree, the references its answer
//! carries as another ([`detail`]). The list follows the newest call until the
//! operator moves up (or presses the follow key), and can be filtered by session, tool
//! or status. A call can be run again on the console's own core, its result handle
//! fetched there, a plan call opened in Plans, and any call opened in Replay
//! ([`export`]).
//!
//! The feed is read on a thread of its own ([`crate::mcp::control::open_feed`]); the
//! pane folds what arrived into a [`Live`] on every update, so a busy feed never
//! stalls a key or a frame. Memory is bounded by [`crate::record::live::LIVE_KEPT`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use serde_json::{Value, json};

use crate::context::CallContext;
use crate::error::ToolError;
use crate::record::filter::Filter;
use crate::record::live::{Live, LiveCall};
use crate::tui::dispatch::{Reply, RequestId};
use crate::tui::keymap::{Command, Scope};
use crate::tui::pane::{Ctx, Event, EventState, Pane, Ui};
use crate::tui::widgets::cursor::{Cursor, SCROLLING};
use crate::tui::widgets::page::Page;
use crate::tui::widgets::prompt::{PromptKey, path_prompt_key, typed_char};

mod detail;
mod export;
mod feed;
mod hold;
mod render;

use feed::Watch;

mod timeline;
use hold::{EditKind, Editing};

/// A call by its session's number and its own number in that session.
type CallKey = (usize, u64);

/// The plan tool whose calls open in the Plans pane.
const PLAN_TOOL: &str = "structs_plan_execute";

/// The Live tab's filter, read: `#N` names a session, the rest is the filter language
/// (or, while it does not read yet, words to look for).
struct LiveFilter {
    session: Option<String>,
    parsed: Result<Filter, Vec<String>>,
}

impl LiveFilter {
    fn parse(text: &str) -> LiveFilter {
        let (sessions, rest): (Vec<&str>, Vec<&str>) =
            text.split_whitespace().partition(|w| w.starts_with('#'));
        // Two different sessions match nothing; keep the first that differs to say so.
        let session = sessions.first().map(|s| (*s).to_string());
        let session = match sessions.iter().find(|s| Some(**s) != session.as_deref()) {
            Some(_) => Some(String::new()),
            None => session,
        };
        let rest = rest.join(" ");
        let parsed = Filter::parse(&rest)
            .map_err(|_| rest.split_whitespace().map(str::to_lowercase).collect());
        LiveFilter { session, parsed }
    }

    fn passes(&self, call: &LiveCall) -> bool {
        if let Some(s) = &self.session
            && *s != format!("#{}", call.session)
        {
            return false;
        }
        match &self.parsed {
            Ok(f) => f.matches(call),
            Err(words) => words.iter().all(|w| {
                use crate::record::filter::Subject as _;
                call.holds(0, w)
            }),
        }
    }
}

/// The longest filter, in bytes.
const FILTER_MAX: usize = 200;

/// The most lines folded in per update, so that a flood cannot hold a frame back.
const LINES_PER_UPDATE: usize = 20_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Focus {
    Calls,
    /// The selected call's tree.
    Detail,
    /// The references its answer carries.
    References,
}

/// A call run again on the console's core: which call, and its answer once in.
struct Rerun {
    key: CallKey,
    answer: Option<Result<Value, ToolError>>,
}

/// A call's result handle fetched (through the watched proxy, or on the console's
/// core): which call and handle, the fetch on its way on the core, and the page once in
/// (or why there is none).
struct HandleFetch {
    key: CallKey,
    handle: String,
    request: Option<RequestId>,
    page: Option<Result<Page, String>>,
}

/// The handle an answer over the size limit was stored under, if it was.
fn handle_of(call: &LiveCall) -> Option<&str> {
    call.answer.as_ref()?.get("result_handle")?.as_str()
}

/// The Live pane.
pub(crate) struct LivePane {
    live: Live,
    /// What is watched, and the thread reading it.
    watch: Watch,
    /// The rows on show (indexes into the kept calls), after the filter.
    rows: Vec<usize>,
    /// Calls let go by the model since the rows were made (they shift every index).
    seen_front: Option<(usize, u64)>,
    /// The selected row, the first on show, and the rows shown last frame.
    cursor: Cursor,
    /// The selection stays on the newest call as calls come.
    follow: bool,
    focus: Focus,
    /// The selected call's trees.
    detail: detail::Detail,
    /// Rows the focused tree showed last frame (for paging).
    tree_page: usize,
    /// The filter's text, and whether it is being typed.
    filter: String,
    filtering: bool,
    /// The endpoint being typed to watch another one, when the prompt is open.
    prompt: Option<String>,
    /// The editor open on a held call.
    editing: Option<Editing>,
    reruns: HashMap<RequestId, CallKey>,
    rerun: Option<Rerun>,
    fetch: Option<HandleFetch>,
    /// The session logs written for Replay.
    exports: export::Exports,
    /// Where `t` copies a call's trace id (none: the status line says so).
    clipboard: Option<Box<dyn crate::tui::clipboard::Clipboard>>,
    /// The calls on a time axis instead of the list (`v`), when on.
    timeline: Option<timeline::LiveTimeline>,
}

impl LivePane {
    pub fn new() -> LivePane {
        LivePane {
            live: Live::new(),
            watch: Watch::default(),
            rows: Vec::new(),
            seen_front: None,
            cursor: Cursor {
                page: 10,
                ..Cursor::default()
            },
            follow: true,
            focus: Focus::Calls,
            detail: detail::Detail::default(),
            tree_page: 10,
            filter: String::new(),
            filtering: false,
            prompt: None,
            editing: None,
            reruns: HashMap::new(),
            rerun: None,
            fetch: None,
            exports: export::Exports::default(),
            clipboard: None,
            timeline: None,
        }
    }

    /// The pane copying to `clipboard`.
    pub fn with_clipboard(mut self, clipboard: Box<dyn crate::tui::clipboard::Clipboard>) -> Self {
        self.clipboard = Some(clipboard);
        self
    }

    /// Copies the selected call's trace id.
    fn copy_trace(&mut self, ctx: &mut Ctx<'_>) {
        let trace = self.selected().and_then(|(_, c)| c.trace_id.clone());
        match crate::tui::clipboard::copy_trace(self.clipboard.as_mut(), trace.as_deref()) {
            Ok(said) => ctx.status.info(said),
            Err(why) => ctx.status.error(format!("nothing copied: {why}")),
        }
    }

    /// Starts watching `what` (a control endpoint or a session log), leaving whatever
    /// was watched before.
    pub fn watch(&mut self, what: &Path) -> anyhow::Result<()> {
        let watch = Watch::open(what)?;
        self.reset();
        self.watch = watch;
        Ok(())
    }

    /// Waits for an endpoint to answer in the default folder, and watches the newest
    /// once one does (looked for on each update, every `LOOK_EVERY` at most). When
    /// it ends, the next one is waited for, its calls added to those seen (an agent
    /// run again is another session).
    pub fn watch_newest(&mut self) {
        self.reset();
        self.watch = Watch::newest();
    }

    /// Sends `command`, saying on the status line when it cannot go.
    fn command(&mut self, command: Value, ctx: &mut Ctx<'_>) {
        if let Err(why) = self.watch.send(&command) {
            ctx.status.error(why);
        }
    }

    /// Forgets the calls and the feed, keeping the filter (and the log written for
    /// Replay, which Replay may be showing).
    fn reset(&mut self) {
        *self = LivePane {
            filter: std::mem::take(&mut self.filter),
            exports: std::mem::take(&mut self.exports),
            ..LivePane::new()
        };
        self.refilter();
    }

    /// Test seam: folds in lines as if the feed had sent them.
    #[doc(hidden)]
    pub fn feed_lines(&mut self, lines: &[&str]) {
        for line in lines {
            self.live.line(line.as_bytes());
        }
        self.on_fetched_through();
        self.refilter();
    }

    /// The calls folded in so far.
    pub fn live(&self) -> &Live {
        &self.live
    }

    /// Folds in what the feed sent since the last update. True when anything came.
    fn drain(&mut self) -> bool {
        let live = &mut self.live;
        let any = self.watch.drain(LINES_PER_UPDATE, |line| {
            live.line(line);
        });
        if any {
            self.on_fetched_through();
            self.refilter();
        }
        any
    }

    /// Builds the selected call's trees again if it or what is known of it changed;
    /// a focus on references the call does not have goes to the call.
    fn sync_detail(&mut self) {
        let call = self
            .rows
            .get(self.cursor.selected)
            .and_then(|i| self.live.calls().get(*i));
        self.detail
            .sync(call, self.rerun.as_ref(), self.fetch.as_ref());
        if self.focus == Focus::References && self.detail.references.is_none() {
            self.focus = Focus::Detail;
        }
    }

    /// The areas Tab goes through: the calls, the call, and its references when its
    /// answer carries some.
    fn areas(&self) -> Vec<Focus> {
        let mut areas = vec![Focus::Calls, Focus::Detail];
        if self.detail.references.is_some() {
            areas.push(Focus::References);
        }
        areas
    }

    fn focus_by(&mut self, step: isize) {
        let areas = self.areas();
        let at = areas.iter().position(|a| *a == self.focus).unwrap_or(0);
        let next = (at as isize + step).rem_euclid(areas.len() as isize) as usize;
        self.focus = areas[next];
    }

    /// Runs a tree command in the focused tree.
    fn tree_command(&mut self, command: Command, ctx: &mut Ctx<'_>) {
        match self.focus {
            Focus::Detail => self.detail.run(command, ctx),
            Focus::References => {
                if let Some(references) = &mut self.detail.references {
                    references.run(command, ctx);
                }
            }
            Focus::Calls => {}
        }
    }

    /// True when `call` passes the filter: `#N` names its session, and the rest is the
    /// filter language of `diff`, `check` and `watch` ([`crate::record::filter`]:
    /// `tool:structs_query_* status:error dur>200ms`, bare words searched in its tool,
    /// status, arguments and answer). Text that does not read as the language yet (a
    /// term half typed) is searched for as words.
    #[cfg(test)]
    fn passes(filter: &str, call: &LiveCall) -> bool {
        LiveFilter::parse(filter).passes(call)
    }

    /// Makes the rows again from the kept calls and the filter, keeping the selected
    /// call selected (or the newest, when following).
    fn refilter(&mut self) {
        let calls = self.live.calls();
        let chosen = self.selected_call_key();
        // Read once, not once a call.
        let filter = LiveFilter::parse(&self.filter);
        self.rows = (0..calls.len())
            .filter(|i| filter.passes(&calls[*i]))
            .collect();
        self.seen_front = calls.front().map(|c| (c.session, c.call));
        if self.follow || chosen.is_none() {
            self.cursor.selected = self.rows.len().saturating_sub(1);
        } else if let Some(key) = chosen {
            self.cursor.selected = self
                .rows
                .iter()
                .position(|i| {
                    let c = &calls[*i];
                    (c.session, c.call) == key
                })
                .unwrap_or(0);
        }
    }

    /// The (session, call) of the selected row, as the rows were made.
    fn selected_call_key(&self) -> Option<(usize, u64)> {
        let i = *self.rows.get(self.cursor.selected)?;
        // The rows index the calls as they were: when older ones were let go since,
        // the index is off by as many; find the call by its key instead.
        let calls = self.live.calls();
        let front = calls.front().map(|c| (c.session, c.call));
        if front == self.seen_front {
            calls.get(i).map(|c| (c.session, c.call))
        } else {
            None
        }
    }

    fn selected(&self) -> Option<(usize, &LiveCall)> {
        let i = *self.rows.get(self.cursor.selected)?;
        self.live.calls().get(i).map(|c| (i, c))
    }

    /// Moves the selection by a scrolling command.
    fn scroll(&mut self, command: Command) {
        if self.cursor.on(command, self.rows.len()) {
            // Moving off the newest pauses following; coming back to it resumes.
            self.follow = self.cursor.selected + 1 == self.rows.len();
        }
    }

    fn rerun(&mut self, ctx: &mut Ctx<'_>) {
        let Some((_, call)) = self.selected() else {
            return;
        };
        let key = (call.session, call.call);
        let (tool, args) = (call.tool.clone(), call.arguments.clone());
        ctx.status
            .info(format!("running {tool} again on this console's core"));
        let id = ctx.dispatcher.call_with(&tool, args, CallContext::new());
        self.reruns.insert(id, key);
        self.rerun = Some(Rerun { key, answer: None });
        self.detail.touch();
    }

    fn open_plan(&mut self, ctx: &mut Ctx<'_>) {
        let Some((_, call)) = self.selected() else {
            return;
        };
        if call.tool != PLAN_TOOL {
            ctx.status.info(format!(
                "{} is not a plan: only {PLAN_TOOL} calls open in Plans",
                call.tool
            ));
            return;
        }
        ctx.push(Event::OpenPlan {
            label: format!("live #{} call {}", call.session, call.call),
            plan: call.arguments.clone(),
        });
    }

    fn prompt_key(&mut self, key: &KeyEvent, ctx: &mut Ctx<'_>) -> EventState {
        let Some(text) = &mut self.prompt else {
            return EventState::NotConsumed;
        };
        match path_prompt_key(text, key, ctx, Scope::LivePrompt) {
            PromptKey::Edited | PromptKey::NotMine => {}
            PromptKey::Cancel => self.prompt = None,
            PromptKey::Accept(typed) => {
                self.prompt = None;
                if typed.is_empty() {
                    self.watch_newest();
                    ctx.status.info(format!(
                        "watching the newest live endpoint in {}",
                        crate::mcp::control::default_dir().display()
                    ));
                } else {
                    let path = PathBuf::from(typed);
                    match self.watch(&path) {
                        Ok(()) => ctx.status.info(format!("watching {}", path.display())),
                        Err(e) => ctx.status.error(format!("{e:#}")),
                    }
                }
            }
        }
        EventState::Consumed
    }

    fn filter_key(&mut self, key: &KeyEvent, ctx: &mut Ctx<'_>) -> EventState {
        match ctx.keymap.command(Scope::LiveFilter, key) {
            Some(Command::KeepFilter) => self.filtering = false,
            Some(Command::DropFilter) => {
                self.filtering = false;
                self.filter.clear();
                self.refilter();
            }
            Some(Command::EraseChar) => {
                self.filter.pop();
                self.refilter();
            }
            Some(Command::ClearText) => {
                self.filter.clear();
                self.refilter();
            }
            Some(_) => {}
            None => {
                if let Some(c) = typed_char(key)
                    && self.filter.len() < FILTER_MAX
                {
                    self.filter.push(c);
                    self.refilter();
                }
            }
        }
        EventState::Consumed
    }
}

impl Pane for LivePane {
    fn run(&mut self, command: Command, ctx: &mut Ctx<'_>) {
        let in_tree = self.focus != Focus::Calls;
        match command {
            Command::Up
            | Command::Down
            | Command::Top
            | Command::Bottom
            | Command::Expand
            | Command::Collapse
            | Command::Toggle
                if in_tree =>
            {
                self.tree_command(command, ctx);
            }
            Command::PrevPage | Command::NextPage if in_tree => {
                let step = if command == Command::NextPage {
                    Command::Down
                } else {
                    Command::Up
                };
                for _ in 0..self.tree_page.max(1) {
                    self.tree_command(step, ctx);
                }
            }
            command if SCROLLING.contains(&command) => self.scroll(command),
            Command::FocusNext => self.focus_by(1),
            Command::FocusPrev => self.focus_by(-1),
            Command::Back => self.focus = Focus::Calls,
            Command::ToggleFollow => {
                self.follow = !self.follow;
                if self.follow {
                    self.cursor.selected = self.rows.len().saturating_sub(1);
                }
            }
            Command::StartFilter => self.filtering = true,
            Command::ClearFilter => {
                self.filter.clear();
                self.refilter();
            }
            Command::ToggleTimeline => {
                self.timeline = match self.timeline {
                    Some(_) => None,
                    None => Some(timeline::LiveTimeline::default()),
                };
            }
            Command::ZoomIn | Command::ZoomOut | Command::PanLeft | Command::PanRight => {
                self.move_timeline(command);
            }
            Command::RerunCall => self.rerun(ctx),
            Command::ToggleBreakpoint => self.toggle_breakpoint(false, "request", ctx),
            Command::BreakAll => self.toggle_breakpoint(true, "request", ctx),
            Command::ToggleAnswerBreakpoint => {
                self.toggle_breakpoint(false, "response", ctx);
            }
            Command::ContinueHeld | Command::DropHeld => {
                if let Some((_, hold)) = self.selected_hold() {
                    let cmd = if command == Command::ContinueHeld {
                        "continue"
                    } else {
                        "drop"
                    };
                    let hold = hold.id;
                    self.command(json!({"cmd": cmd, "hold": hold}), ctx);
                }
            }
            Command::EditHeld => self.open_editor(EditKind::Arguments),
            Command::AnswerHeld => self.open_editor(EditKind::Answer),
            Command::ErrorHeld => self.open_editor(EditKind::Error),
            Command::OpenInPlans => self.open_plan(ctx),
            Command::Inspect => self.fetch_handle(ctx),
            Command::OpenInReplay => self.open_in_replay(ctx),
            Command::OpenLog => self.prompt = Some(String::new()),
            Command::CopyTraceId => self.copy_trace(ctx),
            _ => {}
        }
    }

    fn handle_key(&mut self, key: &KeyEvent, ctx: &mut Ctx<'_>) -> EventState {
        if self.editing.is_some() {
            return self.edit_key(key, ctx);
        }
        if self.prompt.is_some() {
            return self.prompt_key(key, ctx);
        }
        if self.filtering {
            return self.filter_key(key, ctx);
        }
        self.sync_detail();
        let state = self.run_key(key, ctx);
        self.sync_detail();
        state
    }

    /// The feed's lines, and what the proxy answered to the commands sent.
    fn poll(&mut self, ctx: &mut Ctx<'_>) -> bool {
        let any = self.drain();
        for (ok, text) in std::mem::take(&mut self.live.answers) {
            if ok {
                ctx.status.info(text);
            } else {
                ctx.status.error(text);
            }
        }
        any
    }

    fn on_reply(&mut self, reply: &Reply, ctx: &mut Ctx<'_>) -> bool {
        if self
            .fetch
            .as_ref()
            .is_some_and(|f| f.request == Some(reply.id))
        {
            self.on_fetched(reply, ctx);
            return true;
        }
        if self.detail.on_reply(reply, ctx) {
            return true;
        }
        let Some(key) = self.reruns.remove(&reply.id) else {
            return false;
        };
        let tool = self
            .live
            .calls()
            .iter()
            .find(|c| (c.session, c.call) == key)
            .map_or("the call", |c| c.tool.as_str());
        match &reply.result {
            Ok(_) => ctx.status.info(format!("ran {tool} again here: answered")),
            Err(e) => ctx
                .status
                .tool_error(&format!("running {tool} again here"), e),
        }
        if let Some(rerun) = &mut self.rerun
            && rerun.key == key
        {
            rerun.answer = Some(reply.result.clone());
        }
        self.detail.touch();
        true
    }

    fn scope(&self) -> Scope {
        if self.editing.is_some() {
            Scope::LiveEdit
        } else if self.prompt.is_some() {
            Scope::LivePrompt
        } else if self.filtering {
            Scope::LiveFilter
        } else {
            match self.focus {
                Focus::Calls => Scope::Live,
                Focus::Detail => Scope::LiveDetail,
                Focus::References => Scope::LiveReferences,
            }
        }
    }

    fn captures_text(&self) -> bool {
        self.prompt.is_some() || self.filtering || self.editing.is_some()
    }

    fn commands(&self) -> Vec<Command> {
        if self.editing.is_some() {
            return vec![Command::SendEdit, Command::Back, Command::EraseChar];
        }
        // A prompt offers its own commands, which the hint bar then shows.
        let typed = match (&self.prompt, self.filtering) {
            (Some(path), _) => Some((vec![Command::OpenLogFile, Command::Close], path)),
            (None, true) => Some((vec![Command::KeepFilter, Command::DropFilter], &self.filter)),
            (None, false) => None,
        };
        if let Some((mut commands, text)) = typed {
            if !text.is_empty() {
                commands.extend([Command::EraseChar, Command::ClearText]);
            }
            return commands;
        }
        let mut commands = Vec::new();
        match self.focus {
            Focus::Calls => commands.extend([
                Command::Up,
                Command::Down,
                Command::PrevPage,
                Command::NextPage,
                Command::Top,
                Command::Bottom,
            ]),
            Focus::Detail => self.detail.view.commands(&mut commands),
            Focus::References => {
                if let Some(references) = &self.detail.references {
                    references.commands(&mut commands);
                }
            }
        }
        if self.focus != Focus::Calls {
            commands.extend([Command::PrevPage, Command::NextPage]);
        }
        commands.extend([
            Command::FocusNext,
            Command::FocusPrev,
            Command::ToggleFollow,
            Command::StartFilter,
            Command::OpenLog,
        ]);
        if self.focus != Focus::Calls {
            commands.push(Command::Back);
        }
        if !self.filter.is_empty() {
            commands.push(Command::ClearFilter);
        }
        if self.selected().is_some_and(|(_, c)| c.trace_id.is_some()) {
            commands.push(Command::CopyTraceId);
        }
        if self.selected_hold().is_some() {
            commands.extend([
                Command::ContinueHeld,
                Command::EditHeld,
                Command::AnswerHeld,
                Command::ErrorHeld,
                Command::DropHeld,
            ]);
        }
        if self
            .watch
            .feed
            .as_ref()
            .is_some_and(|f| f.commands.is_some())
        {
            commands.extend([
                Command::ToggleBreakpoint,
                Command::ToggleAnswerBreakpoint,
                Command::BreakAll,
            ]);
        }
        if let Some((_, call)) = self.selected() {
            commands.push(Command::RerunCall);
            if handle_of(call).is_some() {
                commands.push(Command::Inspect);
            }
            if call.tool == PLAN_TOOL {
                commands.push(Command::OpenInPlans);
            }
            commands.push(Command::OpenInReplay);
        }
        if !self.rows.is_empty() {
            commands.push(Command::ToggleTimeline);
            if self.timeline.is_some() && self.focus == Focus::Calls {
                commands.extend([
                    Command::ZoomIn,
                    Command::ZoomOut,
                    Command::PanLeft,
                    Command::PanRight,
                ]);
            }
        }
        commands
    }

    fn render(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        self.render_pane(area, buf, ui);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(session: usize, tool: &str, status: crate::record::live::Status) -> LiveCall {
        LiveCall {
            trace_id: None,
            session,
            call: 1,
            tool: tool.into(),
            arguments: Value::Null,
            method: None,
            ts: String::new(),
            status,
            progress: None,
            duration_ms: None,
            size: None,
            answer: None,
            held: None,
            injected: None,
            released: None,
            rounds: Vec::new(),
        }
    }

    #[test]
    fn the_filter_matches_session_tool_and_status_words() {
        use crate::record::live::Status;
        let failed = call(
            2,
            "structs_query_entity",
            Status::Failed("RATE_LIMIT_EXCEEDED".into()),
        );
        assert!(LivePane::passes("", &failed));
        assert!(LivePane::passes("query", &failed));
        assert!(LivePane::passes("#2 rate_limit", &failed));
        assert!(!LivePane::passes("#1", &failed));
        assert!(!LivePane::passes("#2 ok", &failed));
        let ok = call(12, "structs_list_entities", Status::Answered);
        assert!(!LivePane::passes("#1", &ok), "#1 is not #12");
        assert!(LivePane::passes("#12 ok", &ok));
        // The language of diff, check and watch.
        assert!(LivePane::passes(
            "#2 status:error tool:structs_query_*",
            &failed
        ));
        assert!(LivePane::passes("code:rate_limit_exceeded", &failed));
        assert!(!LivePane::passes("-status:error", &failed));
        assert!(LivePane::passes("-status:error tool:*list*", &ok));
        assert!(!LivePane::passes("status:held", &ok));
        // Half typed: searched for as words until it reads.
        assert!(LivePane::passes("tool:", &failed) == failed.tool.contains("tool:"));
    }

    #[test]
    fn a_calls_trace_id_is_shown_and_copied_and_a_call_without_one_says_so() {
        use crate::tui::tab::Tab;
        use crate::tui::testing::TestDesk;
        let desk = &mut TestDesk::new(Tab::Live);
        let kept = crate::tui::testing::KeptClipboard::default();
        let mut pane = LivePane::new().with_clipboard(Box::new(kept.clone()));
        let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
        pane.feed_lines(&[
            // Written in a traced call.
            &format!(r#"{{"v":2,"ts":"t","session":"s","seq":1,"type":"request","call":1,"tool":"structs_query_player","arguments":{{}},"trace_id":"{trace}","span_id":"00f067aa0ba902b7"}}"#),
            // Not traced here, but the agent's `_meta` named its trace.
            r#"{"v":2,"ts":"t","session":"s","seq":2,"type":"request","call":2,"tool":"structs_query_planet","arguments":{},"meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}"#,
            r#"{"v":2,"ts":"t","session":"s","seq":3,"type":"request","call":3,"tool":"structs_query_fleet","arguments":{}}"#,
        ]);
        desk.press(&mut pane, Command::Top);
        assert!(pane.commands().contains(&Command::CopyTraceId));
        desk.press(&mut pane, Command::CopyTraceId);
        assert_eq!(kept.copied(), [trace]);
        assert!(
            desk.status().is_some_and(|s| s.contains(trace)),
            "{:?}",
            desk.status()
        );
        // Drawn in the call's detail.
        let (_, selected) = pane.selected().unwrap();
        let lines = render::story_lines(selected, &crate::tui::theme::Theme::default());
        let text: Vec<String> = lines.iter().map(ToString::to_string).collect();
        assert_eq!(
            text.first().map(String::as_str),
            Some(format!("trace {trace}").as_str())
        );
        desk.press(&mut pane, Command::Down);
        desk.press(&mut pane, Command::CopyTraceId);
        assert_eq!(
            kept.0.lock().unwrap()[1],
            "0af7651916cd43dd8448eb211c80319c"
        );
        desk.press(&mut pane, Command::Down);
        assert!(
            !pane.commands().contains(&Command::CopyTraceId),
            "not offered"
        );
        pane.run(Command::CopyTraceId, &mut desk.ctx());
        assert_eq!(kept.copied().len(), 2, "nothing copied");
        assert!(desk.status().is_some_and(|s| s.contains("no trace")));
    }

    /// The pane fed the calls of `tests/data/older-shapes.jsonl`: 2 query_player, 6
    /// query_entity, and one each of fleet, guild and struct.
    fn fed() -> LivePane {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/older-shapes.jsonl");
        let text = std::fs::read_to_string(path).expect("the log");
        let mut pane = LivePane::new();
        pane.feed_lines(&text.lines().collect::<Vec<_>>());
        pane
    }

    #[test]
    fn calls_are_moved_through_followed_and_filtered() {
        use crate::tui::tab::Tab;
        use crate::tui::testing::TestDesk;
        let desk = &mut TestDesk::new(Tab::Live);
        let mut pane = fed();
        assert_eq!(pane.rows.len(), 11);
        desk.press(&mut pane, Command::Top);
        assert_eq!(pane.cursor.selected, 0);
        desk.press(&mut pane, Command::Down);
        assert_eq!(pane.cursor.selected, 1);

        desk.press(&mut pane, Command::ToggleFollow);
        assert!(pane.follow);
        assert_eq!(
            pane.cursor.selected, 10,
            "following selects the newest call"
        );
        desk.press(&mut pane, Command::ToggleFollow);
        assert!(!pane.follow);

        desk.press(&mut pane, Command::StartFilter);
        assert_eq!(pane.scope(), Scope::LiveFilter);
        pane.filter = "structs_query_player".into();
        pane.filtering = false;
        pane.refilter();
        assert_eq!(pane.rows.len(), 2);
        desk.press(&mut pane, Command::ClearFilter);
        assert_eq!(pane.rows.len(), 11);

        desk.press(&mut pane, Command::FocusNext);
        assert_eq!(pane.scope(), Scope::LiveDetail);
        desk.press(&mut pane, Command::Back);
        assert_eq!(pane.scope(), Scope::Live);

        desk.press(&mut pane, Command::OpenLog);
        assert_eq!(pane.scope(), Scope::LivePrompt);
        assert_eq!(pane.commands(), [Command::OpenLogFile, Command::Close]);
    }
}
