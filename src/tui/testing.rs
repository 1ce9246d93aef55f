//! A desk for a pane's unit tests: the demo world with its block clock paused and a
//! fixed wall clock, the runtime its calls run on, and each reply handed back to the
//! pane. A test presses commands ([`TestDesk::press`]) and reads the pane's state;
//! nothing is drawn and no key is read, so a pane's transitions are tested as the
//! plain code they are. The console's snapshots (`tests/console`) test the drawing.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use chrono::TimeZone;

use super::dispatch::Dispatcher;
use super::keymap::{Command, Keymap};
use super::pane::{Ctx, Desk, Owner, Pane, StatusLine};
use super::tab::Tab;
use crate::clock::WallClock;
use crate::core::Core;
use crate::source::sim::{BlockClock, SimSource, WorldConfig};

/// How long a test waits for one reply before it fails.
const REPLY_TIMEOUT: Duration = Duration::from_secs(10);

/// The desk a pane of `tab` is lent in the console, on the demo world.
pub(crate) struct TestDesk {
    desk: Desk,
    /// The tab whose pane is tested: its calls are that pane's, its scopes that tab's.
    tab: Tab,
    core: Core,
    /// Dropped last: the dispatcher's calls run on it.
    runtime: tokio::runtime::Runtime,
}

impl TestDesk {
    /// On the demo world.
    pub fn new(tab: Tab) -> TestDesk {
        TestDesk::with_world(tab, WorldConfig::demo())
    }

    /// On the world `config` makes, its clock paused at genesis.
    pub fn with_world(tab: Tab, config: WorldConfig) -> TestDesk {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime");
        let source = SimSource::new(config, BlockClock::paused(config.genesis_height));
        let wall = chrono::Utc
            .with_ymd_and_hms(2026, 11, 21, 10, 0, 0)
            .single()
            .expect("a valid instant");
        let core = crate::assembly::build_with_clock(Arc::new(source), WallClock::Fixed(wall));
        let desk = Desk {
            dispatcher: Dispatcher::new(core.clone(), runtime.handle().clone(), None),
            status: StatusLine::default(),
            keymap: Keymap::standard(),
            queue: VecDeque::new(),
        };
        TestDesk {
            desk,
            tab,
            core,
            runtime,
        }
    }

    /// The core the desk's calls go to.
    pub fn core(&self) -> &Core {
        &self.core
    }

    /// Calls `tool` on the core directly (not as the pane), as an agent would.
    pub fn call(&self, tool: &str, args: serde_json::Value) -> serde_json::Value {
        self.runtime
            .block_on(self.core.call_json(tool, args))
            .unwrap_or_else(|e| panic!("{tool}: {e}"))
    }

    /// What the pane is lent, as the app lends it.
    pub fn ctx(&mut self) -> Ctx<'_> {
        self.desk.lend(Owner::Pane(self.tab))
    }

    /// Runs `command` as its key would: it must be one the pane offers now and one a
    /// key runs in the pane's focused scope (a key reaches no other), and every call
    /// it starts is answered and applied before this returns. Before and after, the
    /// pane's scope is one of its own tab's and every command it offers is bound
    /// there: no pane lists another's scopes or commands.
    pub fn press(&mut self, pane: &mut dyn Pane, command: Command) {
        self.check_grouping(pane);
        let offered = pane.commands();
        assert!(
            offered.contains(&command),
            "{command:?} is not offered in {:?}; offered: {offered:?}",
            pane.scope()
        );
        self.desk.status.clear();
        pane.run(command, &mut self.ctx());
        self.settle(pane);
        self.check_grouping(pane);
    }

    /// The pane's scope is its tab's, and it offers only commands bound there.
    fn check_grouping(&self, pane: &dyn Pane) {
        let (scope, tab) = (pane.scope(), self.tab);
        assert_eq!(
            scope.tab(),
            Some(tab),
            "{scope:?} is not a scope of {tab:?}"
        );
        for command in pane.commands() {
            assert!(
                self.desk.keymap.keys(scope, command).next().is_some(),
                "{command:?} is offered in {scope:?}, where no key runs it"
            );
        }
    }

    /// Hands the pane every reply to the calls it has started, and to the calls
    /// those lead to, until none is left.
    pub fn settle(&mut self, pane: &mut dyn Pane) {
        while self.desk.dispatcher.pending() > 0 {
            let reply = self
                .desk
                .dispatcher
                .wait_next(REPLY_TIMEOUT)
                .expect("the core answers every call within 10 s");
            pane.on_reply(&reply, &mut self.ctx());
        }
    }

    /// The status line's text, if any.
    pub fn status(&self) -> Option<&str> {
        self.desk.status.message().map(|(_, text)| text)
    }
}

/// A clipboard that keeps what it is given, for a pane's tests.
#[derive(Clone, Default)]
pub struct KeptClipboard(pub std::sync::Arc<std::sync::Mutex<Vec<String>>>);

impl KeptClipboard {
    /// Everything copied so far.
    pub fn copied(&self) -> Vec<String> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl crate::tui::clipboard::Clipboard for KeptClipboard {
    fn copy(&mut self, text: &str) -> Result<crate::tui::clipboard::Copied, String> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(text.to_string());
        Ok(crate::tui::clipboard::Copied::System)
    }
}
