//! The stateless revision (2026-07-28) beside the session revisions, on one server.
//!
//! rmcp tells the eras apart per request: a request whose `_meta` names
//! `io.modelcontextprotocol/protocolVersion` 2026-07-28 is served statelessly, an
//! `initialize` opens a session as before. What a session owned becomes, for a
//! stateless request (ARCHITECTURE.md, "Both protocol eras", says it once for all):
//!
//! - **its caller** ([`Caller`]): over HTTP nothing of the caller outlives the request.
//!   Its handle list is the store's (`structs_handle_list` says `scope: "all"`), its
//!   work caps count within the request, and the request is recorded in one session of
//!   the log that every stateless request shares. Over stdio the connection is the
//!   client, and its state serves both eras.
//! - **its log level**: `_meta`'s `io.modelcontextprotocol/logLevel`, per request; no
//!   level, no `notifications/message` ([`request_log`]).
//! - **its subscriptions**: a `subscriptions/listen` stream with filters ([`listen`]);
//!   the subscription tools answer that a stateless request has no session to keep one.
//! - **its caching hints**: true ones ([`Hints`]).

use std::sync::Arc;

use rmcp::model::{CacheScope, SubscriptionFilter};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer};

use super::logging::{self, ClientLog};
use crate::context::subscriptions::Subscriptions;
use crate::context::{ClientHandles, ClientWork};
use crate::entity::{ENTITY_URI, EntityId};
use crate::record::Recorder;

/// Whether `context`'s request is a 2026-07-28 one (its `_meta` names the revision).
pub fn is_stateless(context: &RequestContext<RoleServer>) -> bool {
    super::strict::is_stateless(&context.meta)
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
}

impl Caller {
    /// A stateless request over HTTP: fresh state, the shared log session.
    pub fn sessionless(recorder: Option<Arc<Recorder>>, log: Option<Arc<ClientLog>>) -> Caller {
        Caller {
            handles: None,
            subscriptions: Arc::new(Subscriptions::new()),
            work: Arc::default(),
            recorder,
            log,
            sessionless: true,
        }
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

/// What of a `subscriptions/listen` filter this server serves: prompt list changes
/// (the docs' skills and playbooks are prompts) and updates of entities
/// (`structs://entities/{id}`). The tool list changes only with an attached server,
/// which this server does not follow, so it is never offered.
pub fn accepted(requested: &SubscriptionFilter) -> SubscriptionFilter {
    let mut filter = SubscriptionFilter::new();
    filter.prompts_list_changed = requested.prompts_list_changed.filter(|on| *on);
    filter.resource_subscriptions = requested.resource_subscriptions.as_ref().map(|uris| {
        uris.iter()
            .filter(|uri| entity_of(uri).is_some())
            .cloned()
            .collect()
    });
    filter
}

fn entity_of(uri: &str) -> Option<EntityId> {
    EntityId::parse(uri.strip_prefix(ENTITY_URI)?).ok()
}

/// Runs one `subscriptions/listen` stream until the client cancels it or the server
/// stops: each entity it names that a game event changed, once per event, and each
/// change of the prompt list.
pub async fn listen(
    server: &super::McpServer,
    subscription: SubscriptionContext,
) -> Result<(), McpError> {
    let accepted = subscription.accepted().clone();
    let sink = subscription.sink().clone();
    let recorder = server.recorder.clone();
    let watched: std::collections::HashSet<EntityId> = accepted
        .resource_subscriptions
        .iter()
        .flatten()
        .filter_map(|uri| entity_of(uri))
        .collect();
    let mut events = (!watched.is_empty())
        .then(|| server.core.events().map(|bus| bus.subscribe()))
        .flatten();
    let prompts = accepted.prompts_list_changed == Some(true);
    let mut docs = server.docs.changes();
    docs.mark_unchanged();
    let listed = || -> Vec<(String, String)> {
        super::prompts::catalog(server.docs.current().as_deref())
            .into_iter()
            .map(|p| (p.name, p.description))
            .collect()
    };
    let mut last = listed();
    let note = |method: &str, params: serde_json::Value| {
        if let Some(r) = &recorder {
            r.notification(method, params);
        }
    };
    loop {
        tokio::select! {
            _ = subscription.cancelled() => return Ok(()),
            event = async {
                match events.as_mut() {
                    Some(rx) => rx.recv().await,
                    None => std::future::pending().await,
                }
            } => match event {
                Ok(event) => {
                    let mut sent = std::collections::HashSet::new();
                    for id in event.changed {
                        if watched.contains(&id) && sent.insert(id) {
                            let uri = crate::entity::entity_uri(id);
                            note("notifications/resources/updated", serde_json::json!({"uri": uri}));
                            if sink.notify_resource_updated(uri).await.is_err() {
                                return Ok(());
                            }
                        }
                    }
                }
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(tokio::sync::broadcast::error::RecvError::Closed) => events = None,
            },
            changed = docs.changed(), if prompts => {
                if changed.is_err() {
                    return Ok(());
                }
                let now = listed();
                if now != last {
                    last = now;
                    note("notifications/prompts/list_changed", serde_json::Value::Null);
                    if sink.notify_prompt_list_changed().await.is_err() {
                        return Ok(());
                    }
                }
            }
        }
    }
}
