//! A source that can be replaced at run time (the console's source dialog).
//!
//! [`SwitchSource`] stands in front of the current source and forwards every call to
//! it. It has one event bus of its own for its whole life, fed from the current
//! source's bus, so readers (the event log, MCP update tasks) never need to subscribe
//! again after a switch. [`Switcher`] knows how to make the sources the dialog offers.

use std::sync::{Arc, Mutex, RwLock};

use serde_json::Value;

use super::rest::{RestConfig, RestSource};
use super::{
    BoxFuture, ClockAction, GameSource, IdMatches, ListQuery, Page, SourceHealth, SourceInfo,
    TxOutcome,
};
use crate::chain::{Assume, Requirement, Signed};
use crate::entity::{EntityId, EntityKind};
use crate::error::ToolError;
use crate::events::EventBus;

pub struct SwitchSource {
    current: RwLock<Arc<dyn GameSource>>,
    bus: EventBus,
    forward: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// Where the forwarder runs: switches may come from a thread outside the runtime
    /// (the console's).
    runtime: tokio::runtime::Handle,
}

impl SwitchSource {
    /// Wraps `initial`. Must be called on a tokio runtime: the event forwarder runs
    /// there, whichever thread switches later.
    pub fn new(initial: Arc<dyn GameSource>) -> Arc<SwitchSource> {
        let s = Arc::new(SwitchSource {
            current: RwLock::new(initial.clone()),
            bus: EventBus::new(),
            forward: Mutex::new(None),
            runtime: tokio::runtime::Handle::current(),
        });
        s.forward_from(&initial);
        s
    }

    /// The source calls go to now.
    pub fn current(&self) -> Arc<dyn GameSource> {
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Sends every call to `next` from now on; calls already running finish on the
    /// source they started with.
    pub fn switch(&self, next: Arc<dyn GameSource>) {
        // One switch at a time: the forwarder always reads the source calls go to.
        let mut forward = self.forward.lock().unwrap_or_else(|e| e.into_inner());
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = next.clone();
        self.forward_locked(&mut forward, &next);
    }

    fn forward_from(&self, source: &Arc<dyn GameSource>) {
        let mut forward = self.forward.lock().unwrap_or_else(|e| e.into_inner());
        self.forward_locked(&mut forward, source);
    }

    fn forward_locked(
        &self,
        forward: &mut Option<tokio::task::JoinHandle<()>>,
        source: &Arc<dyn GameSource>,
    ) {
        if let Some(old) = forward.take() {
            old.abort();
        }
        let Some(inner) = source.events() else {
            return;
        };
        let (mut rx, out) = (inner.subscribe(), self.bus.clone());
        *forward = Some(self.runtime.spawn(async move {
            loop {
                match rx.recv().await {
                    Ok(event) => {
                        out.publish(event);
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(_) => return,
                }
            }
        }));
    }
}

impl Drop for SwitchSource {
    fn drop(&mut self) {
        if let Some(t) = self
            .forward
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            t.abort();
        }
    }
}

impl GameSource for SwitchSource {
    fn info(&self) -> SourceInfo {
        self.current().info()
    }

    fn get(&self, id: EntityId) -> BoxFuture<'_, Result<Option<Value>, ToolError>> {
        let s = self.current();
        Box::pin(async move { s.get(id).await })
    }

    fn list(&self, query: ListQuery) -> BoxFuture<'_, Result<Page, ToolError>> {
        let s = self.current();
        Box::pin(async move { s.list(query).await })
    }

    fn ids_with_prefix(
        &self,
        kind: EntityKind,
        prefix: String,
        limit: usize,
    ) -> BoxFuture<'_, Result<IdMatches, ToolError>> {
        let s = self.current();
        Box::pin(async move { s.ids_with_prefix(kind, prefix, limit).await })
    }

    fn submit(
        &self,
        tx: Value,
        messages: Vec<Signed>,
    ) -> BoxFuture<'_, Result<TxOutcome, ToolError>> {
        let s = self.current();
        Box::pin(async move { s.submit(tx, messages).await })
    }

    fn broadcast(&self, tx_bytes: String) -> BoxFuture<'_, Result<Value, ToolError>> {
        let s = self.current();
        Box::pin(async move { s.broadcast(tx_bytes).await })
    }

    fn health(&self) -> Option<SourceHealth> {
        self.current().health()
    }

    fn check(&self, message: &Signed, assume: &Assume) -> Result<Vec<Requirement>, ToolError> {
        self.current().check(message, assume)
    }

    fn events(&self) -> Option<EventBus> {
        Some(self.bus.clone())
    }

    fn control_clock(&self, action: ClockAction) -> Result<SourceInfo, ToolError> {
        self.current().control_clock(action)
    }
}

type MakeSim = Box<dyn Fn() -> Arc<dyn GameSource> + Send + Sync>;
type MakeRestConfig = Box<dyn Fn(&str) -> RestConfig + Send + Sync>;

/// What the console's source dialog switches between: the embedded world (the same
/// one each time, made on first use) and REST nodes.
pub struct Switcher {
    pub switch: Arc<SwitchSource>,
    make_sim: MakeSim,
    sim: Mutex<Option<Arc<dyn GameSource>>>,
    rest_config: MakeRestConfig,
    /// The endpoint the dialog offers first.
    pub endpoint: Option<String>,
}

impl Switcher {
    pub fn new(
        switch: Arc<SwitchSource>,
        make_sim: MakeSim,
        rest_config: MakeRestConfig,
        endpoint: Option<String>,
    ) -> Switcher {
        let current = switch.current();
        let sim = (current.info().name == "sim").then_some(current);
        Switcher {
            switch,
            make_sim,
            sim: Mutex::new(sim),
            rest_config,
            endpoint,
        }
    }

    /// Connects to the node at `endpoint` and switches to it; the current source stays
    /// when the node cannot be reached.
    pub async fn to_rest(&self, endpoint: &str) -> Result<SourceInfo, ToolError> {
        let source = self.connect_rest(endpoint).await?;
        Ok(self.use_source(source))
    }

    /// Connects to the node at `endpoint` without switching to it yet.
    pub async fn connect_rest(&self, endpoint: &str) -> Result<Arc<RestSource>, ToolError> {
        RestSource::connect((self.rest_config)(endpoint)).await
    }

    /// Switches to a source connected before.
    pub fn use_source(&self, source: Arc<dyn GameSource>) -> SourceInfo {
        self.switch.switch(source);
        self.switch.info()
    }

    /// Switches to the embedded world.
    pub fn to_sim(&self) -> SourceInfo {
        let sim = self
            .sim
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert_with(|| (self.make_sim)())
            .clone();
        self.switch.switch(sim);
        self.switch.info()
    }
}
