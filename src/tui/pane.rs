//! What every pane implements, and what the app lends a pane while it handles a key
//! or a tool result.

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use serde_json::Value;

pub(crate) use super::dispatch::Owner;
use super::dispatch::{Dispatcher, Reply, RequestId};
use super::keymap::{Command, Keymap, Scope};
use super::theme::Theme;
use crate::context::CallContext;
use crate::error::ToolError;

/// Whether a pane used a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventState {
    Consumed,
    NotConsumed,
}

/// What a pane asks of the app, or of another pane, pushed on the queue of the `Ctx`
/// it was lent and routed by the app once the key or reply that caused it is handled.
/// A pane never reaches another pane itself.
#[derive(Debug)]
pub(crate) enum Event {
    /// Open a plan (a `structs_plan_execute` call's arguments) in the Plans tab.
    OpenPlan { label: String, plan: Value },
    /// Show a call of a session log in the Replay tab.
    OpenInReplay(ReplayRequest),
    /// Start a proof-of-work job in the PoW tab and show it.
    StartPow(PowRequest),
    /// Open the Entities tab's action dialog with the proofs the PoW tab found.
    OpenActions,
    /// The source dialog switched the core's source (the text says to what).
    SourceSwitched(String),
}

/// A call the Live tab asks the Replay tab to show: the log, the call's session id and
/// number in it, and what to say once it is open.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ReplayRequest {
    pub path: std::path::PathBuf,
    pub session: String,
    pub call: u64,
    pub said: String,
}

/// What `w` asks the PoW tab for.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum PowRequest {
    /// A job for this entity (its build, or a fleet's raid prompt).
    Entity(crate::entity::EntityId),
    /// A job in the PoW prompt's words (`5-7 mine`), from the action dialog.
    Job(String),
}

/// A nonce a finished proof-of-work job found: for which entity and which action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FoundProof {
    pub entity: crate::entity::EntityId,
    /// The PoW tool's `action_type` (`struct_build_complete`, `ore_miner_complete`, ...).
    pub action: String,
    pub nonce: String,
    /// The job's number in the PoW tab.
    pub job: usize,
}

/// The dispatcher as one pane (or the app) holds it: every call it starts is tagged
/// with that owner, so its reply is handed to the owner alone.
pub(crate) struct Calls<'a> {
    dispatcher: &'a mut Dispatcher,
    owner: Owner,
}

impl Calls<'_> {
    /// Starts `tool` with `args` and returns at once (see [`Dispatcher::call`]).
    pub fn call(&mut self, tool: &str, args: Value) -> RequestId {
        self.dispatcher.call(self.owner, tool, args)
    }

    /// The console's own polling (see [`Dispatcher::poll`]).
    pub fn poll(&mut self, tool: &str, args: Value) -> RequestId {
        self.dispatcher.poll(self.owner, tool, args)
    }

    /// A long call with its own call context (see [`Dispatcher::call_with`]).
    pub fn call_with(&mut self, tool: &str, args: Value, ctx: CallContext) -> RequestId {
        self.dispatcher.call_with(self.owner, tool, args, ctx)
    }

    /// A background job answered like a call (see [`Dispatcher::spawn_task`]).
    pub fn spawn_task<F>(&mut self, task: F) -> RequestId
    where
        F: std::future::Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        self.dispatcher.spawn_task(self.owner, task)
    }

    /// The tools as a plan's steps call them (through the recorder).
    pub fn tools(&self) -> crate::plan::Caller {
        self.dispatcher.tools()
    }

    /// A replayer whose calls go through the recorder.
    pub fn replayer(&self) -> crate::record::replay::Replayer {
        self.dispatcher.replayer()
    }

    /// The source's name, height and clock.
    pub fn status(&self) -> crate::source::SourceInfo {
        self.dispatcher.status()
    }

    /// The wall clock's time now, as error objects stamp it.
    pub fn timestamp(&self) -> String {
        self.dispatcher.timestamp()
    }
}

/// What the app lends: the dispatcher, the status line, the keymap and the event
/// queue. [`Desk::lend`] is the one place a [`Ctx`] is made.
pub(crate) struct Desk {
    pub dispatcher: Dispatcher,
    pub status: StatusLine,
    pub keymap: Keymap,
    pub queue: std::collections::VecDeque<Event>,
}

impl Desk {
    /// What `owner` handles a key, a reply or a tick with.
    pub fn lend(&mut self, owner: Owner) -> Ctx<'_> {
        Ctx {
            dispatcher: Calls {
                dispatcher: &mut self.dispatcher,
                owner,
            },
            status: &mut self.status,
            keymap: &self.keymap,
            queue: &mut self.queue,
        }
    }
}

/// What a pane may touch while handling a key or a result: its calls, the status
/// line, the keymap, and the queue of events for the app.
pub(crate) struct Ctx<'a> {
    pub dispatcher: Calls<'a>,
    pub status: &'a mut StatusLine,
    pub keymap: &'a Keymap,
    pub queue: &'a mut std::collections::VecDeque<Event>,
}

impl Ctx<'_> {
    /// Asks the app for something beyond this pane (see [`Event`]).
    pub fn push(&mut self, event: Event) {
        self.queue.push_back(event);
    }
}

/// What a pane draws with.
pub(crate) struct Ui<'a> {
    pub theme: &'a Theme,
    pub keymap: &'a Keymap,
}

/// One tab's content. Panes own their state, draw themselves into the area they are
/// given, and report the commands they offer right now (the hint bar shows those).
///
/// A pane keeps its state apart from its view: [`Pane::run`] is what a command does (the
/// pane's transitions, plain code that a unit test drives with no keys and no
/// terminal), [`Pane::handle_key`] only maps a key to a command (or to typed text), and
/// [`Pane::render`] draws the state.
pub(crate) trait Pane {
    /// Handles a key press; `NotConsumed` lets the app try its global keys. By default
    /// the key's command in the focused scope runs (see [`Pane::run_key`]); a pane with
    /// a text prompt takes typed characters first.
    fn handle_key(&mut self, key: &KeyEvent, ctx: &mut Ctx<'_>) -> EventState {
        self.run_key(key, ctx)
    }

    /// Runs the command `key` is bound to in the focused scope, if the pane offers it
    /// now (see [`dispatch`]).
    fn run_key(&mut self, key: &KeyEvent, ctx: &mut Ctx<'_>) -> EventState {
        let (scope, offered) = (self.scope(), self.commands());
        dispatch(key, ctx, scope, &offered, |command, ctx| {
            self.run(command, ctx)
        })
    }

    /// What `command` does to the pane. Keys reach it only for commands the pane
    /// offers now ([`Pane::commands`]); any other does nothing.
    fn run(&mut self, command: Command, ctx: &mut Ctx<'_>);

    /// Applies the result of one of this pane's calls; false for one it no longer
    /// wants (a list page asked for again before it came), which is dropped.
    fn on_reply(&mut self, reply: &Reply, ctx: &mut Ctx<'_>) -> bool {
        let _ = (reply, ctx);
        false
    }

    /// Takes in what arrived without a key: feed lines, indexing, a server's
    /// requests. True when the frame may have changed. Called before every frame,
    /// whichever tab is on show.
    fn poll(&mut self, ctx: &mut Ctx<'_>) -> bool {
        let _ = ctx;
        false
    }

    /// The keymap scope of the focused area.
    fn scope(&self) -> Scope;

    /// True while a text prompt takes typed characters, so plain-character global
    /// keys (`q`, `1`) do not apply.
    fn captures_text(&self) -> bool {
        false
    }

    /// The commands a key can run right now, in hint-bar order.
    fn commands(&self) -> Vec<Command>;

    /// Draws the pane.
    fn render(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>);
}

/// Runs the first of `key`'s commands in `scope` that the pane `offered` now, through
/// `run`. A key bound in `scope` is consumed even when none of its commands is
/// available (it does nothing); a key not bound there is left to the global keys.
pub(crate) fn dispatch(
    key: &KeyEvent,
    ctx: &mut Ctx<'_>,
    scope: Scope,
    offered: &[Command],
    run: impl FnOnce(Command, &mut Ctx<'_>),
) -> EventState {
    let mut bound = ctx.keymap.commands_for(scope, key).peekable();
    if bound.peek().is_none() {
        return EventState::NotConsumed;
    }
    if let Some(command) = bound.find(|c| offered.contains(c)) {
        run(command, ctx);
    }
    EventState::Consumed
}

/// How serious a status message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Level {
    Info,
    Error,
}

/// The one-line message under the pane: the outcome of the last action, or why a tool
/// call failed. Cleared by the next key press.
#[derive(Debug, Default)]
pub(crate) struct StatusLine {
    message: Option<(Level, String)>,
}

impl StatusLine {
    pub fn info(&mut self, text: impl Into<String>) {
        self.message = Some((Level::Info, text.into()));
    }

    pub fn error(&mut self, text: impl Into<String>) {
        self.message = Some((Level::Error, text.into()));
    }

    /// Reports a failed tool call: its code, message, and what the console was doing.
    pub fn tool_error(&mut self, doing: &str, error: &ToolError) {
        self.error(format!(
            "{}: {} ({doing})",
            error.code.as_str(),
            error.message
        ));
    }

    pub fn clear(&mut self) {
        self.message = None;
    }

    pub fn message(&self) -> Option<(Level, &str)> {
        self.message.as_ref().map(|(l, t)| (*l, t.as_str()))
    }
}
