//! The stateless revision (2026-07-28) beside the session revisions, on one server.
//!
//! rmcp tells the eras apart per request: a request whose `_meta` names
//! `io.modelcontextprotocol/protocolVersion` 2026-07-28 is served statelessly, an
//! `initialize` opens a session as before. What a session owned becomes, for a
//! stateless request (ARCHITECTURE.md, "Both protocol eras", says it once for all):
//!
//! - **its caller** ([`Caller`]): over HTTP nothing of the caller outlives the request.
//!   It is its credential ([`crate::context::caller`]): its handle list is its own
//!   handles in the store, its work caps count over all its stateless requests
//!   ([`CallerWork`]), and the request is recorded in one session of the log that every
//!   stateless request shares. Over stdio the connection is the
//!   client, and its state serves both eras.
//! - **its log level**: `_meta`'s `io.modelcontextprotocol/logLevel`, per request; no
//!   level, no `notifications/message` ([`request_log`]).
//! - **its subscriptions**: a `subscriptions/listen` stream with filters
//!   ([`super::listen`]), which also carries the status of the tasks it names;
//!   the subscription tools answer that a stateless request has no session to keep one.
//! - **its caching hints**: true ones ([`Hints`]).

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::CacheScope;
use rmcp::service::RequestContext;

use super::logging::{self, ClientLog};
use crate::context::subscriptions::Subscriptions;
use crate::context::{CallContext, ClientHandles, ClientWork, Principal};
use crate::record::Recorder;

/// Whether `context`'s request is a 2026-07-28 one (its `_meta` names the revision).
pub fn is_stateless(context: &RequestContext<RoleServer>) -> bool {
    super::strict::is_stateless(&context.meta)
}

/// The running work of each caller's stateless requests over HTTP, by [`Principal`]: a
/// caller's searches and plan runs are capped together, whatever requests carry them
/// (a session's are its own). An entry lives while a call of its caller runs.
#[derive(Default)]
pub struct CallerWork(
    std::sync::Mutex<std::collections::HashMap<String, std::sync::Weak<ClientWork>>>,
);

/// Callers' entries kept before the ones with nothing running are dropped.
const CALLER_WORK_SWEEP: usize = 1024;

impl CallerWork {
    /// `principal`'s running work: the one every call of it shares.
    pub fn of(&self, principal: &Principal) -> Arc<ClientWork> {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(work) = map.get(principal.id()).and_then(std::sync::Weak::upgrade) {
            return work;
        }
        if map.len() >= CALLER_WORK_SWEEP {
            map.retain(|_, w| w.strong_count() > 0);
        }
        let work: Arc<ClientWork> = Arc::default();
        map.insert(principal.id().to_string(), Arc::downgrade(&work));
        work
    }
}

/// Where a stateless request's state lives.
#[derive(Clone)]
pub enum Scope {
    /// stdio: the connection is the client; its state serves both eras.
    Connection,
    /// HTTP: nothing outlives the request but the log's one stateless session.
    Shared { recorder: Option<Arc<Recorder>> },
}

/// What one request's calls use: its session's state, or a stateless request's own.
pub struct Caller {
    pub handles: Option<Arc<ClientHandles>>,
    pub subscriptions: Arc<Subscriptions>,
    pub work: Arc<ClientWork>,
    pub recorder: Option<Arc<Recorder>>,
    /// Where its log messages go; `None` drops them.
    pub log: Option<Arc<ClientLog>>,
    /// True when nothing of the caller outlives the request.
    pub sessionless: bool,
    /// Who the caller is: what it makes is its own, and it sees only its own.
    pub principal: Principal,
    /// How a call asks its client mid-call: a session's connection; `None` for a
    /// stateless request and a task.
    pub client: Option<crate::context::ClientAsk>,
    /// How a call closes its response stream (a session over HTTP); `None` elsewhere.
    pub stream: Option<crate::context::StreamCloser>,
}

impl Caller {
    /// A stateless request over HTTP: fresh state, the shared log session.
    pub fn sessionless(
        principal: Principal,
        work: Arc<ClientWork>,
        recorder: Option<Arc<Recorder>>,
        log: Option<Arc<ClientLog>>,
    ) -> Caller {
        Caller {
            handles: None,
            subscriptions: Arc::new(Subscriptions::new()),
            work,
            recorder,
            log,
            sessionless: true,
            principal,
            client: None,
            stream: None,
        }
    }

    /// The one place a call's context is made: `ctx` (its progress and cancellation)
    /// with what this caller brings: subscriptions, running work, handles, its log,
    /// and no session where nothing outlives the request.
    pub fn context(&self, ctx: CallContext) -> CallContext {
        let mut ctx = ctx
            .with_subscriptions(self.subscriptions.clone())
            .with_work(self.work.clone())
            .with_owner(self.principal.clone());
        if let Some(handles) = &self.handles {
            ctx = ctx.with_handles(handles.clone());
        }
        if let Some(log) = &self.log {
            ctx = ctx.with_log(log.sink());
        }
        if self.sessionless {
            ctx = ctx.without_session();
        }
        if let Some(client) = &self.client {
            ctx = ctx.with_client(client.clone());
        }
        if let Some(close) = &self.stream {
            ctx = ctx.with_stream_closer(close.clone());
        }
        ctx
    }
}

/// The log of one stateless request: the level its `_meta` asks for, sent on the
/// request's own stream; `None` when it asks for none (the revision's opt-in).
pub fn request_log(
    context: &RequestContext<RoleServer>,
    recorder: Option<Arc<Recorder>>,
) -> Option<Arc<ClientLog>> {
    let level = context.meta.log_level()?;
    let log = ClientLog::new(recorder);
    log.set_level(logging::from_wire(level));
    log.connect(context.peer.clone());
    Some(log)
}

/// The caching hints (SEP-2549) this server can stand behind, by what a result holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hints {
    /// Fixed for the process's life (the catalog's tools, the resource templates, the
    /// entity schemas): an hour, for anyone.
    Fixed,
    /// The game's state, which moves every block: one block, for anyone.
    Block,
    /// What changes with any call or any docs sync (handles, docs, prompts): not to be
    /// kept, and only for this caller.
    Volatile,
}

/// How long [`Hints::Fixed`] may be kept.
pub const FIXED_TTL_MS: u64 = 3_600_000;

impl Hints {
    /// `(ttlMs, cacheScope)`.
    pub fn wire(self) -> (u64, CacheScope) {
        match self {
            Hints::Fixed => (FIXED_TTL_MS, CacheScope::Public),
            Hints::Block => (
                (crate::pow::schedule::BLOCK_SECONDS * 1000.0) as u64,
                CacheScope::Public,
            ),
            Hints::Volatile => (0, CacheScope::Private),
        }
    }
}

/// Sets a result's hints for a stateless request; a session's result keeps the shape
/// of its revision, which has none.
macro_rules! hint {
    ($context:expr, $result:expr, $hints:expr) => {{
        let mut result = $result;
        if $crate::mcp::server::stateless::is_stateless($context) {
            let (ttl, scope) = $hints.wire();
            result.ttl_ms = Some(ttl);
            result.cache_scope = Some(scope);
        }
        result
    }};
}
pub(crate) use hint;
