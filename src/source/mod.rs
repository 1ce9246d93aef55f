//! Game sources: where entity data comes from. The core talks to a source only through
//! [`GameSource`]; the console and MCP never see one directly.

pub mod instrumented;
pub mod rest;
pub mod sim;
pub mod switch;

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;

use crate::chain::{Assume, Requirement, Signed};
use crate::entity::{EntityId, EntityKind};
use crate::error::ToolError;
use crate::events::{EventBus, GameEvent};

/// A boxed, sendable future: what [`GameSource`] methods return, so the trait stays
/// object-safe for sources that do real I/O.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One page request against a kind's list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListQuery {
    pub kind: EntityKind,
    /// Items per page, 1..=100 (the tools enforce the range).
    pub page_size: usize,
    /// Where to continue: the source's own cursor from a previous page's
    /// [`Page::next_after`] (an index for the sim, the chain's `next_key` for a live
    /// chain); `None` for the first page.
    pub after: Option<String>,
    /// Only entities owned or controlled by this player.
    pub owner: Option<EntityId>,
    /// Only entities belonging to this guild (directly or through their owner).
    pub guild: Option<EntityId>,
    /// Only entities whose id starts with this text.
    pub id_prefix: Option<String>,
}

impl ListQuery {
    pub fn new(kind: EntityKind, page_size: usize) -> ListQuery {
        ListQuery {
            kind,
            page_size,
            after: None,
            owner: None,
            guild: None,
            id_prefix: None,
        }
    }
}

/// One page of entities, each in the chain's JSON shape.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    pub items: Vec<Value>,
    /// The cursor to continue from, when more entities match (opaque to callers).
    pub next_after: Option<String>,
    /// How many entities match the query in all.
    pub total: u64,
}

/// The ids that complete a prefix ([`GameSource::ids_with_prefix`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IdMatches {
    /// The first matches, fewest digits first.
    pub ids: Vec<EntityId>,
    /// How many ids match in all.
    pub total: u64,
}

/// What the console's header shows and what tools stamp on results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceInfo {
    /// `sim` or `rest`.
    pub name: &'static str,
    /// A one-line description (`seed 42, 24 players`).
    pub description: String,
    pub block_height: u64,
    /// True when the block clock is stopped and advances only when stepped.
    pub paused: bool,
}

impl SourceInfo {
    /// The block height, when this source knows one: a chain's node or the embedded
    /// world always, another MCP server once it has said (`None` while it reads 0, as
    /// for a tap in front of a server that is not a Structs one).
    pub fn known_height(&self) -> Option<u64> {
        match self.name {
            "sim" | "rest" => Some(self.block_height),
            _ => (self.block_height > 0).then_some(self.block_height),
        }
    }

    /// Whether the tools reading this source reach things outside the server (MCP's
    /// `openWorldHint`): a chain's node yes, the embedded world no; `None` for another
    /// server's tools, which say for themselves.
    pub fn open_world(&self) -> Option<bool> {
        match self.name {
            "rest" => Some(true),
            "sim" => Some(false),
            _ => None,
        }
    }
}

/// A networked source's connection: what the console's header shows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SourceHealth {
    /// Where it connects (`http://localhost:1317`).
    pub endpoint: String,
    /// False after the last request failed to reach the node.
    pub connected: bool,
    /// Requests sent (retries included) and failed.
    pub requests: u64,
    pub errors: u64,
    /// Latency of recent requests (a moving average) and of the last one, in ms.
    pub latency_ms: f64,
    pub last_latency_ms: f64,
    /// The last error, if any, with how long ago it happened.
    pub last_error: Option<String>,
    /// Entity reads answered from the source's cache, and all entity reads.
    pub cache_hits: u64,
    pub cache_reads: u64,
}

/// What to do to a source's block clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockAction {
    /// Stop at the current height.
    Pause,
    /// Advance with wall time again (about one block every 6 s).
    Resume,
    /// Advance by this many blocks at once.
    Step(u64),
}

/// A transaction a source applied.
#[derive(Debug, Clone, PartialEq)]
pub struct TxOutcome {
    /// The transaction's hash (64 upper-case hex digits, as the chain writes them).
    pub tx_hash: String,
    /// The block height it was applied at.
    pub height: u64,
    /// One result per message, in order.
    pub results: Vec<Value>,
    /// The events it caused, as published on the source's bus.
    pub events: Vec<GameEvent>,
}

/// The game as one call sees it: the source, and the event bus it is read with (an
/// outside feed's when the core has one, else the source's own).
#[derive(Clone)]
pub struct World {
    pub source: std::sync::Arc<dyn GameSource>,
    pub events: Option<EventBus>,
}

/// A source of game state: the embedded simulation or a live chain.
pub trait GameSource: Send + Sync {
    fn info(&self) -> SourceInfo;

    /// One entity by id in the chain's JSON shape, or `None` when it does not exist.
    fn get(&self, id: EntityId) -> BoxFuture<'_, Result<Option<Value>, ToolError>>;

    /// A page of one kind's entities, filtered.
    fn list(&self, query: ListQuery) -> BoxFuture<'_, Result<Page, ToolError>>;

    /// The ids of `kind` that start with `prefix` (the whole id's text, `1-12`), at most
    /// `limit` of them, fewest digits first, with how many match in all: what an id
    /// being typed can become. The default reads the source's filtered list; a source
    /// that knows its ids answers without rendering entities.
    fn ids_with_prefix(
        &self,
        kind: EntityKind,
        prefix: String,
        limit: usize,
    ) -> BoxFuture<'_, Result<IdMatches, ToolError>> {
        Box::pin(async move {
            let mut q = ListQuery::new(kind, limit.clamp(1, 100));
            q.id_prefix = Some(prefix);
            let page = self.list(q).await?;
            let mut ids: Vec<EntityId> = page
                .items
                .iter()
                .filter_map(|item| {
                    let body = match kind.rest_key() {
                        Some(key) => item.get(key).unwrap_or(item),
                        None => item,
                    };
                    EntityId::parse(body.get("id")?.as_str()?).ok()
                })
                .collect();
            ids.sort_by_key(|id| id.index);
            ids.truncate(limit);
            Ok(IdMatches {
                ids,
                total: page.total,
            })
        })
    }

    /// Applies a transaction's messages, all or none. A refused message fails the whole
    /// transaction with `VALIDATION_REQUIREMENTS_NOT_MET` naming what is missing. `tx` is
    /// the transaction as sent (hashed for its id). Sources that cannot apply
    /// transactions say so.
    fn submit(
        &self,
        tx: Value,
        messages: Vec<Signed>,
    ) -> BoxFuture<'_, Result<TxOutcome, ToolError>> {
        let _ = (tx, messages);
        let name = self.info().name;
        Box::pin(async move {
            Err(ToolError::new(
                crate::error::ErrorCode::ToolExecutionFailed,
                format!("the {name} source cannot apply transactions"),
            ))
        })
    }

    /// Broadcasts an already-signed transaction (`tx_bytes`, base64 of the chain's
    /// `TxRaw`) and returns the node's `tx_response` (`txhash`, `code`, `codespace`,
    /// `raw_log`, `height`, ...). A transaction the node refuses is still an answer
    /// (`code` other than 0); only a failure to reach the node is an error.
    fn broadcast(&self, tx_bytes: String) -> BoxFuture<'_, Result<Value, ToolError>> {
        let _ = tx_bytes;
        let name = self.info().name;
        Box::pin(async move {
            Err(ToolError::new(
                crate::error::ErrorCode::ToolExecutionFailed,
                format!("the {name} source cannot broadcast transactions"),
            ))
        })
    }

    /// How the source's connection is doing, for sources that have one.
    fn health(&self) -> Option<SourceHealth> {
        None
    }

    /// Evaluates a message's requirements against the current state (with the caller's
    /// assumptions), changing nothing.
    fn check(&self, message: &Signed, assume: &Assume) -> Result<Vec<Requirement>, ToolError> {
        let _ = (message, assume);
        Err(ToolError::new(
            crate::error::ErrorCode::ToolExecutionFailed,
            format!(
                "the {} source cannot evaluate action requirements",
                self.info().name
            ),
        ))
    }

    /// The source's event bus, when it has one.
    fn events(&self) -> Option<EventBus> {
        None
    }

    /// Pauses, resumes or steps the block clock, and returns the state after it. A
    /// source that follows a live chain cannot; the default says so.
    fn control_clock(&self, action: ClockAction) -> Result<SourceInfo, ToolError> {
        let _ = action;
        Err(ToolError::new(
            crate::error::ErrorCode::ToolExecutionFailed,
            format!(
                "the {} source follows its chain's blocks; only the sim source's clock can be paused or stepped",
                self.info().name
            ),
        ))
    }
}
