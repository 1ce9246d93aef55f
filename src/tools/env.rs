//! What a tool can reach while it runs. The call pipeline makes one for every call;
//! tools see the game, the clock, result handles, the caller's subscriptions and work,
//! and (for plans and workflows) the other tools, and nothing else of the core.

use std::sync::Arc;

use chrono::{DateTime, Utc};

use crate::clock::WallClock;
use crate::context::subscriptions::Subscriptions;
use crate::context::{CallContext, ClientWork};
use crate::events::EventBus;
use crate::handles::{HandleConfig, Handles};
use crate::plan::Caller;
use crate::source::{GameSource, SourceInfo, World};
use crate::store::HandleStore;

#[derive(Clone)]
pub struct Env {
    pub world: World,
    pub wall: WallClock,
    pub handles: Arc<Handles>,
    /// The subscriptions of callers that bring none of their own (the console).
    pub subscriptions: Arc<Subscriptions>,
    /// The running work of callers that bring no count of their own (the console).
    pub work: Arc<ClientWork>,
    /// The tools themselves, for the ones that run others (plans, workflows).
    pub tools: Caller,
    /// How the core will shape this call's answer (`fields`, `verbosity`, `format`),
    /// for tools whose limits depend on it (a list's page size).
    pub shaping: crate::handles::Request,
}

impl Env {
    pub fn source(&self) -> &dyn GameSource {
        self.world.source.as_ref()
    }

    /// The source's name, description and block height.
    pub fn status(&self) -> SourceInfo {
        self.world.source.info()
    }

    /// The event bus calls read, when there is one.
    pub fn events(&self) -> Option<EventBus> {
        self.world.events.clone()
    }

    pub fn now(&self) -> DateTime<Utc> {
        self.wall.now()
    }

    /// Now, in RFC 3339 with second precision.
    pub fn timestamp(&self) -> String {
        self.wall.timestamp()
    }

    pub fn handle_store(&self) -> &Arc<dyn HandleStore> {
        self.handles.store()
    }

    pub fn handle_config(&self) -> &HandleConfig {
        self.handles.config()
    }

    pub async fn maybe_clean_handles(&self) {
        self.handles.maybe_clean().await;
    }

    /// The subscriptions of callers without their own.
    pub fn subscriptions(&self) -> Arc<Subscriptions> {
        self.subscriptions.clone()
    }

    /// Where the caller of `ctx` counts its running work: its own, or the shared count
    /// for callers that bring none.
    pub fn client_work(&self, ctx: &CallContext) -> Arc<ClientWork> {
        ctx.work().unwrap_or_else(|| self.work.clone())
    }
}
