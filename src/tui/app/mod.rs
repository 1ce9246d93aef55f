//! The console's state and its frame: header, tabs, the pane on show, the status line
//! and the key-hint bar.
//!
//! The app routes; the panes own their work. A key goes to the layer on top (help,
//! the source dialog) or else to the pane on show, and the global keys get what the
//! pane leaves. A tool call's reply goes to the pane (or layer) that made it. What a
//! pane asks beyond itself (open a plan, show a call in Replay, start a proof-of-work
//! job) it pushes as an `Event`, which `App::route` carries out.

use std::collections::VecDeque;
use std::time::Duration;

use crossterm::event::{KeyEvent, KeyEventKind};
use serde_json::json;
use tokio::runtime::Handle;

use super::clipboard::{Clipboard, SharedClipboard, SystemClipboard};
use super::dispatch::{Dispatcher, Reply};
use super::keymap::{Command, Keymap, Scope};
use super::pane::{Desk, Event, EventState, Owner, Pane, PowRequest, StatusLine};
use super::panes::docs::DocsPane;
use super::panes::entities::EntitiesPane;
use super::panes::handles::{HandlesPane, REFRESH_EVERY};
use super::panes::live::LivePane;
use super::panes::plans::PlansPane;
use super::panes::pow::PowPane;
use super::panes::replay::ReplayPane;
use super::panes::server::ServerPane;
pub use super::tab::Tab;
use super::theme::Theme;
use crate::core::Core;
use crate::entity::EntityId;

mod event_log;
mod help;
mod logs;
mod render;
mod source;

use event_log::EventLog;
use source::SourceDialog;

/// The tool the clock keys call.
const CLOCK_TOOL: &str = "structs_clock_control";

/// The smallest frame the panes can use; below it the console says it is too small.
pub const MIN_WIDTH: u16 = 30;
/// See [`MIN_WIDTH`].
pub const MIN_HEIGHT: u16 = 8;

/// How long [`App::settle`] waits for any one tool result before giving up.
const SETTLE_TIMEOUT: Duration = Duration::from_secs(10);

/// The order the panes take in what came without a key. The Server tab comes last:
/// its notice that the server asks something shows once, so nothing may write the
/// status line after it.
const POLLED: [Tab; 8] = [
    Tab::Entities,
    Tab::Handles,
    Tab::Plans,
    Tab::Pow,
    Tab::Docs,
    Tab::Replay,
    Tab::Live,
    Tab::Server,
];

/// What is drawn over the tabs and takes every key while it is up; the stack's last
/// is on top.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layer {
    /// The source dialog (`S`).
    Source,
    /// The keys, all of them (`?`).
    Help,
    /// The lines written to stderr while the console ran (`L`).
    Logs,
}

/// The console. It reaches the game only through tool calls, made through its
/// dispatcher (and [`Core::status`] for the header); calls run on the tokio runtime and
/// their results are applied by [`App::update`], so handling a key or drawing a frame
/// never waits.
pub struct App {
    /// For the header's figures, the event log and the reference cache; never calls.
    core: Core,
    theme: Theme,
    /// What a pane is lent while it works: the dispatcher, the status line, the keymap
    /// and the event queue.
    desk: Desk,
    tab: Tab,
    /// The pane behind each tab.
    panes: Panes,
    /// The clipboard both panes copy to.
    clipboard: SharedClipboard,
    /// When the Handles pane's list was last asked for by the console itself.
    handles_listed_at: Option<std::time::Instant>,
    /// The live event log, under whichever tab is on show.
    events: EventLog,
    /// Help and dialogs over the tabs, top last.
    layers: Vec<Layer>,
    quit: bool,
    /// The source dialog; on the stack while it is open.
    source: SourceDialog,
    /// Whether the core serves the Structs catalog (the Structs tabs need it): a core
    /// of its own always does; one attached with `--connect` when the server says it
    /// is a structs-console.
    structs: bool,
    /// What arrived on fd 2 while the console owns the terminal, and how many lines of
    /// it the status line has told of.
    stderr: Option<(
        std::sync::Arc<std::sync::Mutex<crate::tui::stderr::Lines>>,
        u64,
    )>,
    /// How many lines the stderr box is scrolled back from the newest.
    logs_back: usize,
}

impl App {
    /// A console on `core`, drawn with `theme`, running tool calls on `runtime`. It
    /// opens on the Entities tab and has already asked for the first kind's entities.
    pub fn new(core: Core, theme: Theme, runtime: Handle) -> App {
        App::build(core, theme, runtime, None)
    }

    /// The lines a [`crate::tui::stderr::Capture`] takes from fd 2: the status line
    /// tells of each new one, since nothing may write over the screen, and `L` shows
    /// them.
    pub fn with_stderr(
        mut self,
        lines: std::sync::Arc<std::sync::Mutex<crate::tui::stderr::Lines>>,
    ) -> App {
        self.stderr = Some((lines, 0));
        self
    }

    /// The console attached to another MCP server (`--connect`), whose core
    /// [`crate::mcp::client::attached_core`] forwards there: the Server tab shows the
    /// server and its traffic, and opens first when the server is not a
    /// structs-console (its tools are the news).
    pub fn with_server(mut self, remote: std::sync::Arc<crate::mcp::client::Remote>) -> App {
        self.structs = remote.is_structs();
        self.panes.server.attach(remote);
        if self.structs {
            let mut ctx = self.desk.lend(Owner::Pane(Tab::Entities));
            self.panes.entities = EntitiesPane::new(true, &mut ctx);
        } else {
            self.tab = Tab::Server;
        }
        self
    }

    /// A console like [`App::new`] that records every tool call it makes, with its
    /// answer, to a session log, beginning with the first page it asks for.
    pub fn recording(
        core: Core,
        theme: Theme,
        runtime: Handle,
        recorder: std::sync::Arc<crate::record::Recorder>,
    ) -> App {
        App::build(core, theme, runtime, Some(recorder))
    }

    fn build(
        core: Core,
        theme: Theme,
        runtime: Handle,
        recorder: Option<std::sync::Arc<crate::record::Recorder>>,
    ) -> App {
        let mut desk = Desk {
            dispatcher: Dispatcher::new(core.clone(), runtime, recorder),
            status: StatusLine::default(),
            keymap: Keymap::standard(),
            queue: VecDeque::new(),
        };
        // A forwarding core is known to be a Structs one only once its server is
        // (`with_server`); until then nothing is asked of it.
        let structs = !core.is_forwarded();
        let entities = EntitiesPane::new(structs, &mut desk.lend(Owner::Pane(Tab::Entities)));
        let clipboard = SharedClipboard::new(Box::new(SystemClipboard::default()));
        let events = EventLog::new(core.events());
        let plans = PlansPane::new(&*desk.dispatcher.tools());
        let server = ServerPane::new(&core);
        App {
            core,
            theme,
            desk,
            tab: Tab::Entities,
            panes: Panes {
                entities,
                handles: HandlesPane::new(Box::new(clipboard.clone())),
                pow: PowPane::new(Box::new(clipboard.clone()), None),
                plans,
                docs: DocsPane::new(),
                replay: ReplayPane::new().with_clipboard(Box::new(clipboard.clone())),
                server,
                live: LivePane::new().with_clipboard(Box::new(clipboard.clone())),
            },
            clipboard,
            handles_listed_at: None,
            events,
            layers: Vec::new(),
            quit: false,
            source: SourceDialog::new(None),
            structs,
            stderr: None,
            logs_back: 0,
        }
    }

    /// Lets the source dialog switch the core's source (the core must have been built
    /// over `switcher.switch`).
    /// The console hiding what `redaction` finds in the logs it sets side by side (the
    /// `[redact]` rules of `--config`).
    pub fn with_redaction(mut self, redaction: std::sync::Arc<crate::record::Redaction>) -> App {
        self.panes.replay.set_redaction(redaction);
        self
    }

    pub fn with_switcher(mut self, switcher: crate::source::switch::Switcher) -> App {
        self.source = SourceDialog::new(Some(std::sync::Arc::new(switcher)));
        self
    }

    /// After a switch: answers cached from the old source are dropped and the entity
    /// list is read again from the new one.
    fn after_switch(&mut self, text: String) {
        self.core.reference_cache().clear();
        let mut ctx = self.desk.lend(Owner::Pane(Tab::Entities));
        self.panes.entities = EntitiesPane::new(true, &mut ctx);
        self.desk.status.info(format!("source: {text}"));
    }

    /// The console with another clipboard than the system's (tests use one that
    /// records what is copied, or one that refuses).
    pub fn with_clipboard(self, clipboard: Box<dyn Clipboard>) -> App {
        self.clipboard.replace(clipboard);
        self
    }

    /// Plans proof-of-work jobs with this hash rate (hashes per second) instead of the
    /// one the server measures: to plan for another machine, or for a fixed frame.
    pub fn with_pow_hashrate(mut self, hashrate: f64) -> App {
        self.panes.pow = PowPane::new(Box::new(self.clipboard.clone()), Some(hashrate));
        self
    }

    /// Test seam: draws PoW job `index` (from 0) with these progress figures (the keys
    /// of the calculate tool's progress data, plus `rates` for the sparkline) and
    /// ignores its search's own reports from then on.
    #[doc(hidden)]
    pub fn pin_pow_progress(&mut self, index: usize, data: serde_json::Value) {
        self.panes.pow.pin_progress(index, data);
    }

    /// Opens a plan (its JSON, as `structs_plan_execute` takes it) in the Plans pane
    /// under `label` and shows that tab. A plan that does not validate shows its
    /// problems there. Whatever ran in the pane before is cancelled.
    pub fn open_plan(&mut self, label: impl Into<String>, plan: serde_json::Value) {
        let tools = self.desk.dispatcher.tools();
        self.panes.plans.open_plan(label.into(), plan, &*tools);
        self.tab = Tab::Plans;
    }

    /// Opens a session log (`--record`) in the Replay pane and shows that tab. Its
    /// calls are indexed in the background; the first ones show at once.
    pub fn open_log(&mut self, path: &std::path::Path) -> std::io::Result<()> {
        self.panes
            .replay
            .open(path, self.desk.dispatcher.replayer())?;
        self.tab = Tab::Replay;
        Ok(())
    }

    /// Watches a control endpoint (a socket) or a session log followed as it grows, in
    /// the Live tab, and shows that tab.
    pub fn watch(&mut self, what: &std::path::Path) -> anyhow::Result<()> {
        self.panes.live.watch(what)?;
        self.tab = Tab::Live;
        Ok(())
    }

    /// Watches the newest live endpoint in the Live tab, waiting for one to answer
    /// when none does yet, and shows that tab.
    pub fn watch_newest(&mut self) {
        self.panes.live.watch_newest();
        self.tab = Tab::Live;
    }

    /// Test seam: folds lines into the Live tab as if a feed had sent them, and shows
    /// that tab.
    #[doc(hidden)]
    pub fn feed_live(&mut self, lines: &[&str]) {
        self.panes.live.feed_lines(lines);
        self.tab = Tab::Live;
    }

    /// The Live tab's calls: (session, tool, state word) of each, oldest first.
    pub fn live_calls(&self) -> Vec<(usize, String, String)> {
        self.panes
            .live
            .live()
            .calls()
            .iter()
            .map(|c| (c.session, c.tool.clone(), c.status.word().to_string()))
            .collect()
    }

    /// Waits (up to 30 s) until the Replay pane's log is read to its end. For tests
    /// and benchmarks.
    pub fn settle_log(&mut self) {
        let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !self.panes.replay.indexed() && std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }

    /// Compares the log open in Replay with `other`, side by side.
    ///
    /// # Errors
    ///
    /// When no log is open, or `other` cannot be opened.
    pub fn compare_log(&mut self, other: &std::path::Path) -> std::io::Result<()> {
        self.panes.replay.compare_with(other)
    }

    /// Waits (up to 30 s) until the Replay pane's comparison is read.
    pub fn settle_compare(&mut self) {
        let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !self.panes.replay.compare_settled() && std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }

    /// Waits (up to 30 s) until the Replay pane's filter has read what it needs.
    pub fn settle_filter(&mut self) {
        let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !self.panes.replay.filter_settled() && std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }

    /// The Replay pane's verdicts: calls run again, and how many of them differ.
    pub fn replay_verdicts(&self) -> (usize, usize) {
        self.panes.replay.verdicts()
    }

    /// The Plans pane's run as `structs_plan_execute` reports it (every step's status,
    /// params, resolved params, result), when a valid plan is open.
    pub fn plan_report(&self) -> Option<serde_json::Value> {
        self.panes.plans.report()
    }

    /// Test seam: the Plans pane leaves durations out of its frame, so a frame after a
    /// run is the same every time.
    #[doc(hidden)]
    pub fn pin_plan_timing(&mut self) {
        self.panes.plans.pin_timing();
    }

    /// Work that comes with time rather than keys: while the Handles tab is on show, its
    /// list is asked for again every few seconds (ages, expiry, handles other servers
    /// stored), and while the PoW or Plans tab is, the tasks MCP servers run. The
    /// terminal loop calls this on every pass.
    pub fn tick(&mut self, now: std::time::Instant) {
        // Waiting proof-of-work jobs start as the blocks bring their difficulty
        // down, whichever tab is on show.
        self.panes
            .pow
            .tick(&mut self.desk.lend(Owner::Pane(Tab::Pow)));
        match self.tab {
            Tab::Pow => {
                let mut ctx = self.desk.lend(Owner::Pane(Tab::Pow));
                self.panes.pow.refresh_tasks(&mut ctx, now);
                if self.structs {
                    self.panes.pow.refresh_offers(&mut ctx, now);
                }
                return;
            }
            Tab::Plans => {
                let mut ctx = self.desk.lend(Owner::Pane(Tab::Plans));
                self.panes.plans.refresh_tasks(&mut ctx, now);
                return;
            }
            Tab::Handles => {}
            _ => return,
        }
        if self
            .handles_listed_at
            .is_some_and(|at| now.duration_since(at) < REFRESH_EVERY)
        {
            return;
        }
        self.handles_listed_at = Some(now);
        let mut ctx = self.desk.lend(Owner::Pane(Tab::Handles));
        self.panes.handles.refresh_in_background(&mut ctx);
    }

    /// Handles one key event: the layer on top takes it, else the pane on show, and
    /// the global keys get what the pane leaves. Releases are ignored; the status line
    /// is cleared, so it shows the outcome of this key.
    pub fn handle_key(&mut self, key: KeyEvent) {
        if key.kind == KeyEventKind::Release {
            return;
        }
        self.desk.status.clear();
        match self.layers.last().copied() {
            Some(layer) => self.layer_key(layer, &key),
            None => {
                let consumed = self.pane_key(&key);
                self.route();
                if consumed == EventState::NotConsumed {
                    self.global_key(&key);
                }
            }
        }
        self.route();
    }

    /// A key for the layer on top.
    fn layer_key(&mut self, layer: Layer, key: &KeyEvent) {
        match layer {
            Layer::Help => match self.desk.keymap.command(Scope::Help, key) {
                Some(Command::Close) => {
                    self.layers.pop();
                }
                _ => {
                    if self.desk.keymap.command(Scope::Global, key) == Some(Command::Quit) {
                        self.quit = true;
                    }
                }
            },
            Layer::Logs => self.logs_key(key),
            Layer::Source => {
                // Ctrl-C still quits; the dialog takes every other key.
                if key
                    .modifiers
                    .contains(crossterm::event::KeyModifiers::CONTROL)
                    && key.code == crossterm::event::KeyCode::Char('c')
                {
                    self.quit = true;
                    return;
                }
                self.source
                    .handle_key(key, &mut self.desk.lend(Owner::Source));
                self.drop_closed_layers();
            }
        }
    }

    /// A dialog that closed itself (Esc, or done) leaves the stack.
    fn drop_closed_layers(&mut self) {
        let open = self.source.is_open();
        self.layers.retain(|l| *l != Layer::Source || open);
    }

    /// A key for the pane on show. A Structs tab with no Structs server behind it has
    /// nothing to act on: only the global keys work there.
    fn pane_key(&mut self, key: &KeyEvent) -> EventState {
        if self.needs_structs() {
            return EventState::NotConsumed;
        }
        let mut ctx = self.desk.lend(Owner::Pane(self.tab));
        self.panes.of(self.tab).handle_key(key, &mut ctx)
    }

    /// The keys that work on every tab.
    fn global_key(&mut self, key: &KeyEvent) {
        match self.desk.keymap.command(Scope::Global, key) {
            Some(Command::Quit) => self.quit = true,
            Some(Command::ToggleHelp) => self.layers.push(Layer::Help),
            Some(Command::ShowLogs) => self.open_logs(),
            Some(Command::ShowTab(tab)) => self.show(tab),
            Some(Command::ToggleClock) => {
                let action = if self.core.status().paused {
                    "resume"
                } else {
                    "pause"
                };
                self.clock_call(json!({ "action": action }));
            }
            Some(Command::StepBlocks(blocks)) => {
                self.clock_call(json!({"action": "step", "blocks": blocks}));
            }
            Some(Command::ToggleEvents) => self.events.toggle(),
            Some(Command::OpenSource) => {
                self.source.open(self.core.status().name);
                self.layers.push(Layer::Source);
            }
            _ => {}
        }
    }

    /// Shows `tab`: the Handles list is asked for again when it comes back (what is
    /// live changed while it was away), and Docs shows the docs linked to what is
    /// selected in Entities.
    fn show(&mut self, tab: Tab) {
        if tab == Tab::Handles && self.tab != Tab::Handles {
            self.handles_listed_at = Some(std::time::Instant::now());
            let mut ctx = self.desk.lend(Owner::Pane(Tab::Handles));
            self.panes.handles.refresh(&mut ctx);
        }
        if tab == Tab::Docs {
            let entity = self.panes.entities.target().map(|id| id.to_string());
            let mut ctx = self.desk.lend(Owner::Pane(Tab::Docs));
            self.panes.docs.show_entity(entity, &mut ctx);
        }
        self.tab = tab;
    }

    /// Carries out what the panes asked beyond themselves, in the order they asked.
    fn route(&mut self) {
        while let Some(event) = self.desk.queue.pop_front() {
            match event {
                Event::OpenPlan { label, plan } => self.open_plan(label, plan),
                Event::OpenInReplay(request) => {
                    let replayer = self.desk.dispatcher.replayer();
                    let opened = self.panes.replay.open_at(
                        &request.path,
                        replayer,
                        request.session,
                        request.call,
                    );
                    match opened {
                        Ok(()) => {
                            self.tab = Tab::Replay;
                            self.desk.status.info(request.said);
                        }
                        Err(e) => self.desk.status.error(format!(
                            "cannot open {} in Replay: {e}",
                            request.path.display()
                        )),
                    }
                }
                Event::StartPow(request) => {
                    let mut ctx = self.desk.lend(Owner::Pane(Tab::Pow));
                    match request {
                        PowRequest::Entity(id) => self.panes.pow.job_for(id, &mut ctx),
                        PowRequest::Job(text) => {
                            if let Err(e) = self.panes.pow.add_job(&text, &mut ctx) {
                                ctx.status.error(e);
                            }
                        }
                    }
                    self.tab = Tab::Pow;
                }
                Event::OpenActions => {
                    let proofs = self.panes.pow.found_proofs();
                    let mut ctx = self.desk.lend(Owner::Pane(Tab::Entities));
                    self.panes.entities.open_actions(&proofs, &mut ctx);
                }
                Event::SourceSwitched(text) => self.after_switch(text),
            }
        }
    }

    /// Asks the core to change the block clock; the header shows the new height once
    /// the answer is in, and the status line says what happened.
    fn clock_call(&mut self, args: serde_json::Value) {
        self.desk.dispatcher.call(Owner::App, CLOCK_TOOL, args);
    }

    /// Applies every tool result that has arrived and whatever else the panes take in
    /// without a key (feeds, indexing, a server's requests), without waiting. Returns
    /// true when there was any (the frame may have changed).
    pub fn update(&mut self) -> bool {
        let mut any = false;
        while let Some(reply) = self.desk.dispatcher.try_next() {
            self.apply(&reply);
            any = true;
        }
        for tab in POLLED {
            let mut ctx = self.desk.lend(Owner::Pane(tab));
            any |= self.panes.of(tab).poll(&mut ctx);
        }
        self.route();
        any |= self.tell_of_stderr();
        self.events.drain() || any
    }

    /// Says the latest line written to fd 2, when one arrived since the last frame.
    fn tell_of_stderr(&mut self) -> bool {
        let Some((lines, told)) = &mut self.stderr else {
            return false;
        };
        let lines = lines.lock().unwrap_or_else(|e| e.into_inner());
        let n = lines.total;
        if n == *told {
            return false;
        }
        *told = n;
        let last: String = lines
            .kept
            .back()
            .map(|l| l.chars().take(160).collect())
            .unwrap_or_default();
        drop(lines);
        self.desk.status.info(format!(
            "on stderr, kept off the screen ({n} line{}, L shows them): {last}",
            if n == 1 { "" } else { "s" }
        ));
        true
    }

    /// Waits until every tool call started so far, and any they lead to, has answered
    /// and been applied. For tests and benchmarks: it blocks the calling thread, so it
    /// must not be called from inside the tokio runtime. Gives up, saying so on the
    /// status line, if the core does not answer within 10 seconds.
    pub fn settle(&mut self) {
        while self.desk.dispatcher.pending() > 0 {
            match self.desk.dispatcher.wait_next(SETTLE_TIMEOUT) {
                Some(reply) => self.apply(&reply),
                None => {
                    self.desk.status.error(format!(
                        "no answer from the core after {} s; gave up waiting",
                        SETTLE_TIMEOUT.as_secs()
                    ));
                    return;
                }
            }
        }
        self.events.drain();
        let mut ctx = self.desk.lend(Owner::Pane(Tab::Replay));
        self.panes.replay.poll(&mut ctx);
        self.route();
    }

    /// Hands a reply to whoever made the call.
    fn apply(&mut self, reply: &Reply) {
        match reply.owner {
            Owner::Source => {
                self.source
                    .on_reply(reply, &mut self.desk.lend(Owner::Source));
                self.drop_closed_layers();
            }
            Owner::App => match &reply.result {
                Ok(v) => self.desk.status.info(format!(
                    "block {}{}",
                    v["height"],
                    if v["paused"] == true {
                        ", clock paused"
                    } else {
                        ", clock running"
                    }
                )),
                Err(e) => self.desk.status.tool_error("changing the block clock", e),
            },
            Owner::Pane(tab) => {
                let mut ctx = self.desk.lend(Owner::Pane(tab));
                // A reply the pane no longer wants answers a call that was superseded
                // (a list page asked for again before it came); it is dropped.
                let _wanted = self.panes.of(tab).on_reply(reply, &mut ctx);
            }
        }
        self.route();
    }

    /// True once the user has asked to quit.
    pub fn should_quit(&self) -> bool {
        self.quit
    }

    /// The tab on show.
    pub fn tab(&self) -> Tab {
        self.tab
    }

    /// How many tool calls the console has started.
    pub fn requests_sent(&self) -> u64 {
        self.desk.dispatcher.sent()
    }

    /// How many tool calls have not answered yet.
    pub fn pending_requests(&self) -> usize {
        self.desk.dispatcher.pending()
    }

    /// The ids on the Entities pane's page on show, in order.
    pub fn listed_ids(&self) -> Vec<EntityId> {
        self.panes.entities.listed_ids()
    }

    /// The arguments of the opened entity's latest references query
    /// (`structs_query_entity` with `include_references`), if an entity is open.
    pub fn references_query(&self) -> Option<&serde_json::Value> {
        self.panes.entities.references_query()
    }

    /// The events the log keeps, newest first.
    pub fn logged_events(&self) -> impl Iterator<Item = &crate::events::GameEvent> {
        self.events.latest()
    }

    /// The status line's text, if any.
    pub fn status_text(&self) -> Option<&str> {
        self.desk.status.message().map(|(_, text)| text)
    }

    /// Whether the tab on show is a Structs tab while the core is another kind of MCP
    /// server's (attached with `--connect`): such a tab has nothing to show. The
    /// Server tab, the Replay tab (a recording of any server, run again against it) and
    /// the Live tab (any tap's traffic) work with any server.
    fn needs_structs(&self) -> bool {
        !matches!(self.tab, Tab::Server | Tab::Replay | Tab::Live) && !self.structs
    }
}

/// The pane behind each tab. Each owns its state; [`Panes::of`] is the one place a
/// tab is matched to its pane, so a new tab is added there.
struct Panes {
    entities: EntitiesPane,
    handles: HandlesPane,
    pow: PowPane,
    plans: PlansPane,
    docs: DocsPane,
    replay: ReplayPane,
    server: ServerPane,
    live: LivePane,
}

impl Panes {
    /// The pane `tab` shows.
    fn of(&mut self, tab: Tab) -> &mut dyn Pane {
        match tab {
            Tab::Entities => &mut self.entities,
            Tab::Handles => &mut self.handles,
            Tab::Pow => &mut self.pow,
            Tab::Plans => &mut self.plans,
            Tab::Docs => &mut self.docs,
            Tab::Replay => &mut self.replay,
            Tab::Server => &mut self.server,
            Tab::Live => &mut self.live,
        }
    }
}
