//! The REST source: a live chain read through a node's REST API (`--source rest
//! --endpoint URL`), or `serve-rest` run from another console.
//!
//! - One entity: `GET /structs/{kind}/{id}`, kept in a cache for the current block (a
//!   new block empties it, and an event from `--events` drops the entities it
//!   changed), so the repeated reads of an agent's session cost nothing.
//! - Lists: `GET /structs/{kind}` with the chain's pagination (its `next_key` is the
//!   page cursor). The chain has no owner, guild or prefix filter, so a filtered list
//!   reads the kind's pages (1,000 records a request) and filters here; planets and
//!   addresses of one owner use `planet_by_player` and `address_by_player`.
//! - The block height: `GET /blockheight`, read every `height_poll` in the background.
//! - Transactions: only signed ones, broadcast as `tx_bytes`; building and applying
//!   unsigned messages needs the sim.
//!
//! List items are the chain's bare records (lists carry no grid attributes), wrapped
//! under their kind's key as single reads are.

pub mod client;
pub mod wire;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub use client::{Client, RateLimiter, Reply, RestConfig};

use super::{BoxFuture, GameSource, ListQuery, Page, SourceHealth, SourceInfo, TxOutcome};
use crate::chain::{Assume, Requirement, Signed};
use crate::entity::records;
use crate::entity::{EntityId, EntityKind};
use crate::error::{ErrorCode, ToolError};
use crate::json::chain_int;
use wire::{list_key, segment};

/// Records read per request when a filtered list scans a kind.
const SCAN_LIMIT: usize = 1000;

/// Pages a scan reads at most (100 million records): a node that hands out keys without
/// end cannot keep a call going forever.
const SCAN_PAGES: usize = 100_000;

/// How far ahead of the node's own height a height heard over NATS may be.
const MAX_HEIGHT_JUMP: u64 = 1_000;

/// Installs the TLS crypto provider (ring) once per process, so `https://` nodes work.
pub fn install_crypto() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

struct Cached {
    height: u64,
    at: Instant,
    value: Option<Value>,
}

/// The source. Cheap to share: the background height reader holds a weak reference.
pub struct RestSource {
    client: Client,
    height: AtomicU64,
    cache: Mutex<HashMap<EntityId, Cached>>,
    totals: Mutex<HashMap<EntityKind, (u64, u64)>>,
    cache_ttl: Duration,
    cache_hits: AtomicU64,
    cache_reads: AtomicU64,
    poller: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl RestSource {
    /// Connects: reads the block height once (an unreachable node is an error here,
    /// with the reason), then keeps reading it in the background on the current runtime.
    pub async fn connect(config: RestConfig) -> Result<Arc<RestSource>, ToolError> {
        let poll = config.height_poll;
        let source = Arc::new(RestSource {
            client: Client::new(config)?,
            height: AtomicU64::new(0),
            cache: Mutex::new(HashMap::new()),
            totals: Mutex::new(HashMap::new()),
            cache_ttl: Duration::from_secs(30),
            cache_hits: AtomicU64::new(0),
            cache_reads: AtomicU64::new(0),
            poller: Mutex::new(None),
        });
        source.refresh_height().await?;
        let weak = Arc::downgrade(&source);
        let task = tokio::spawn(async move {
            loop {
                tokio::time::sleep(poll).await;
                let Some(source) = weak.upgrade() else { return };
                if let Err(e) = source.refresh_height().await {
                    tracing::debug!(error = %e.message, "block height not read");
                }
            }
        });
        *source.poller.lock().unwrap_or_else(|e| e.into_inner()) = Some(task);
        Ok(source)
    }

    pub fn config(&self) -> &RestConfig {
        &self.client.config
    }

    /// Reads `/blockheight` now; a new height empties the entity cache.
    pub async fn refresh_height(&self) -> Result<u64, ToolError> {
        let reply = self.client.get("/blockheight", &[]).await?;
        let Reply::Found(v) = reply else {
            return Err(ToolError::new(
                ErrorCode::ApiError,
                "the node has no /blockheight",
            ));
        };
        let height = ["blockHeight", "height"]
            .iter()
            .find_map(|k| v.get(*k).and_then(chain_int))
            .ok_or_else(|| {
                ToolError::new(
                    ErrorCode::ApiError,
                    format!("the node's /blockheight has no height: {v}"),
                )
            })?;
        // The node is the authority: its height is taken as it is, even a lower one (a
        // restarted test chain), and undoes any wrong height heard elsewhere.
        let old = self.height.swap(height, Ordering::Relaxed);
        if old != height {
            self.clear_cache();
        }
        Ok(height)
    }

    /// Takes the height a node's answer named in its header when it is newer than the
    /// one known: the block moved on, so what the cache holds is older than it.
    fn adopt_heard_height(&self) {
        if let Some(heard) = self.client.heard_height() {
            let old = self.height.fetch_max(heard, Ordering::Relaxed);
            if heard > old {
                self.clear_cache();
            }
        }
    }

    /// A height heard elsewhere (the NATS `consensus` subject), taken when it is newer
    /// but not implausibly far ahead of the node's (a garbled message cannot pin it; the
    /// next poll of the node has the last word anyway).
    pub fn set_height(&self, height: u64) {
        let current = self.height.load(Ordering::Relaxed);
        if height > current && height - current <= MAX_HEIGHT_JUMP {
            let old = self.height.fetch_max(height, Ordering::Relaxed);
            if height > old {
                self.clear_cache();
            }
        }
    }

    /// Entity reads answered from the cache, and all entity reads.
    pub fn cache_stats(&self) -> (u64, u64) {
        (
            self.cache_hits.load(Ordering::Relaxed),
            self.cache_reads.load(Ordering::Relaxed),
        )
    }

    /// Drops what the cache holds of `ids` (an event said they changed: a node's next
    /// block, or `serve-rest`, which applies a transaction at once).
    pub fn forget(&self, ids: &[EntityId]) {
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        for id in ids {
            cache.remove(id);
        }
    }

    /// Empties the entity cache (the next reads go to the node).
    pub fn clear_cache(&self) {
        self.cache.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    fn cached(&self, id: EntityId) -> Option<Option<Value>> {
        let height = self.height.load(Ordering::Relaxed);
        let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        let c = cache.get(&id)?;
        (c.height == height && c.at.elapsed() < self.cache_ttl).then(|| c.value.clone())
    }

    async fn fetch(&self, id: EntityId) -> Result<Option<Value>, ToolError> {
        self.cache_reads.fetch_add(1, Ordering::Relaxed);
        if let Some(v) = self.cached(id) {
            self.cache_hits.fetch_add(1, Ordering::Relaxed);
            return Ok(v);
        }
        // The height known when the request left: an answer cached under it is
        // dropped by the next block, even one that arrives while this is in flight.
        let height = self.height.load(Ordering::Relaxed);
        let path = format!("/structs/{}/{id}", segment(id.kind));
        let value = match self.client.get(&path, &[]).await {
            Ok(reply) => {
                self.adopt_heard_height();
                reply.found()
            }
            // The chain has no route for infusion ids (they are addressed by
            // destination and address): nothing by that id.
            Err(e)
                if id.kind == EntityKind::Infusion
                    && e.extra.get("status") == Some(&json!(501)) =>
            {
                None
            }
            Err(e) => return Err(e),
        };
        // A node answers an unknown address with player `1-0`.
        let value = value.filter(|v| {
            id.kind != EntityKind::Address || v["playerId"] != "1-0" && v["address"].is_string()
        });
        // The record must be the one asked for (and of the kind asked for).
        let value = value.filter(|v| {
            id.kind
                .core_object(v)
                .and_then(|o| o.get("id"))
                .is_none_or(|found| *found == id.to_string())
        });
        self.cache.lock().unwrap_or_else(|e| e.into_inner()).insert(
            id,
            Cached {
                height,
                at: Instant::now(),
                value: value.clone(),
            },
        );
        Ok(value)
    }

    /// One page of the chain's list at `path`, from `key`.
    async fn page(
        &self,
        kind: EntityKind,
        path: &str,
        key: Option<&str>,
        limit: usize,
    ) -> Result<(Vec<Value>, Option<String>, u64), ToolError> {
        let mut query = vec![("pagination.limit", limit.to_string())];
        match key {
            Some(k) => query.push(("pagination.key", k.to_string())),
            None => query.push(("pagination.count_total", "true".to_string())),
        }
        let reply = self.client.get(path, &query).await?;
        self.adopt_heard_height();
        let Reply::Found(v) = reply else {
            return Ok((Vec::new(), None, 0));
        };
        let items = v
            .get(list_key(kind))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let next = v
            .pointer("/pagination/next_key")
            .and_then(Value::as_str)
            .filter(|k| !k.is_empty())
            .map(str::to_string);
        let total = v
            .pointer("/pagination/total")
            .and_then(chain_int)
            .unwrap_or(0);
        Ok((items, next, total))
    }

    /// Every record at `path`, following `next_key` to the end.
    async fn scan(&self, kind: EntityKind, path: &str) -> Result<Vec<Value>, ToolError> {
        let mut out = Vec::new();
        let mut key: Option<String> = None;
        let mut seen = std::collections::HashSet::new();
        for _ in 0..SCAN_PAGES {
            let (items, next, _) = self.page(kind, path, key.as_deref(), SCAN_LIMIT).await?;
            out.extend(items);
            match next {
                // A key handed out twice would go round for ever.
                Some(n) if seen.insert(n.clone()) => key = Some(n),
                Some(n) => {
                    return Err(ToolError::new(
                        ErrorCode::ApiError,
                        format!(
                            "the node's pages of {path} go round in a cycle (key {n} came back)"
                        ),
                    ));
                }
                None => return Ok(out),
            }
        }
        Err(ToolError::new(
            ErrorCode::ApiError,
            format!(
                "{path} has more than {SCAN_PAGES} pages of {SCAN_LIMIT}; give a narrower filter"
            ),
        ))
    }

    fn remember_total(&self, kind: EntityKind, height: u64, total: u64) {
        self.totals
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(kind, (height, total));
    }

    /// How many records a kind has (cached for the block).
    async fn total(&self, kind: EntityKind) -> Result<u64, ToolError> {
        let height = self.height.load(Ordering::Relaxed);
        if let Some((h, t)) = self
            .totals
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&kind)
            && *h == height
        {
            return Ok(*t);
        }
        let path = format!("/structs/{}", segment(kind));
        let (_, _, total) = self.page(kind, &path, None, 1).await?;
        self.remember_total(kind, height, total);
        Ok(total)
    }

    async fn list_now(&self, q: ListQuery) -> Result<Page, ToolError> {
        let kind = q.kind;
        let filtered = q.owner.is_some() || q.guild.is_some() || q.id_prefix.is_some();
        if !filtered {
            let path = format!("/structs/{}", segment(kind));
            let (items, next, total) = self
                .page(kind, &path, q.after.as_deref(), q.page_size)
                .await?;
            let total = if q.after.is_none() {
                self.remember_total(kind, self.height.load(Ordering::Relaxed), total);
                total
            } else {
                self.total(kind).await?
            };
            return Ok(Page {
                items: items.into_iter().map(|v| wrap(kind, v)).collect(),
                next_after: next,
                total,
            });
        }
        // Filtered: read the records that can match, filter, and page the matches by id.
        let path = match (kind, q.owner) {
            (EntityKind::Planet, Some(o)) => format!("/structs/planet_by_player/{o}"),
            (EntityKind::Address, Some(o)) => format!("/structs/address_by_player/{o}"),
            _ => format!("/structs/{}", segment(kind)),
        };
        let records = self.scan(kind, &path).await?;
        let guilds = match q.guild {
            Some(_)
                if !matches!(
                    kind,
                    EntityKind::Guild | EntityKind::Player | EntityKind::Reactor
                ) =>
            {
                let players = self.scan(EntityKind::Player, "/structs/player").await?;
                players
                    .iter()
                    .filter_map(|p| {
                        Some((
                            p["id"].as_str()?.to_string(),
                            p["guildId"].as_str()?.to_string(),
                        ))
                    })
                    .collect()
            }
            _ => HashMap::new(),
        };
        let matching: Vec<Value> = records
            .into_iter()
            .filter(|r| {
                // Kinds with no id (infusions, addresses) are known by their key.
                let key = records::key_of(kind, r).unwrap_or_default();
                let id = key.as_str();
                if let Some(prefix) = &q.id_prefix
                    && !id.starts_with(prefix.as_str())
                {
                    return false;
                }
                if let Some(owner) = q.owner
                    && owner_of(kind, r).as_deref() != Some(owner.to_string().as_str())
                {
                    return false;
                }
                if let Some(guild) = q.guild {
                    let g = match kind {
                        EntityKind::Guild => r["id"].as_str().map(str::to_string),
                        EntityKind::Player | EntityKind::Reactor => {
                            r["guildId"].as_str().map(str::to_string)
                        }
                        _ => owner_of(kind, r).and_then(|o| guilds.get(&o).cloned()),
                    };
                    if g.as_deref() != Some(guild.to_string().as_str()) {
                        return false;
                    }
                }
                true
            })
            .collect();
        let total = matching.len() as u64;
        let key = |r: &Value| records::key_of(kind, r);
        let start = match &q.after {
            None => 0,
            Some(after) => matching
                .iter()
                .position(|r| key(r).is_some_and(|k| k.as_str() >= after.as_str()))
                .unwrap_or(matching.len()),
        };
        let end = (start + q.page_size).min(matching.len());
        let next_after = matching.get(end).and_then(key);
        Ok(Page {
            items: matching[start..end]
                .iter()
                .cloned()
                .map(|v| wrap(kind, v))
                .collect(),
            next_after,
            total,
        })
    }

    /// The fleet at `index` (`GET /structs/fleet_by_index/{index}`), or `None`.
    pub async fn fleet_by_index(&self, index: u64) -> Result<Option<Value>, ToolError> {
        Ok(self
            .client
            .get(&format!("/structs/fleet_by_index/{index}"), &[])
            .await?
            .found())
    }

    async fn broadcast_now(&self, tx_bytes: String) -> Result<Value, ToolError> {
        let reply = self
            .client
            .post(
                "/cosmos/tx/v1beta1/txs",
                json!({"tx_bytes": tx_bytes, "mode": "BROADCAST_MODE_SYNC"}),
            )
            .await?;
        match reply {
            Reply::Found(v) => v.get("tx_response").cloned().ok_or_else(|| {
                ToolError::new(
                    ErrorCode::ApiError,
                    format!("the node's answer to the broadcast has no tx_response: {v}"),
                )
            }),
            Reply::NotFound => Err(ToolError::new(
                ErrorCode::ApiError,
                "the node answered the broadcast with object not found",
            )),
        }
    }
}

impl Drop for RestSource {
    fn drop(&mut self) {
        if let Some(task) = self.poller.lock().unwrap_or_else(|e| e.into_inner()).take() {
            task.abort();
        }
    }
}

/// A list record under its kind's key, as single reads are (addresses stay flat).
fn wrap(kind: EntityKind, record: Value) -> Value {
    match kind.rest_key() {
        Some(key) => json!({ key: record }),
        None => record,
    }
}

/// The player who owns or controls a record (a player owns itself).
fn owner_of(kind: EntityKind, r: &Value) -> Option<String> {
    r.get(records::owner_field(kind))
        .and_then(Value::as_str)
        .map(str::to_string)
}

fn unsigned(what: &str) -> ToolError {
    ToolError::new(
        ErrorCode::ToolExecutionFailed,
        format!(
            "a live chain only takes signed transactions, and this console does not sign: \
             {what}. Sign the transaction with the player's key (for example `structsd tx \
             sign`) and send its bytes with structs_action_submit_transaction's tx_bytes"
        ),
    )
    .with_extra("source", json!("rest"))
}

impl GameSource for RestSource {
    fn info(&self) -> SourceInfo {
        SourceInfo {
            name: "rest",
            description: self.client.config.endpoint.clone(),
            block_height: self.height.load(Ordering::Relaxed),
            paused: false,
        }
    }

    fn get(&self, id: EntityId) -> BoxFuture<'_, Result<Option<Value>, ToolError>> {
        Box::pin(self.fetch(id))
    }

    fn list(&self, query: ListQuery) -> BoxFuture<'_, Result<Page, ToolError>> {
        Box::pin(self.list_now(query))
    }

    fn submit(
        &self,
        tx: Value,
        messages: Vec<Signed>,
    ) -> BoxFuture<'_, Result<TxOutcome, ToolError>> {
        let _ = (tx, messages);
        Box::pin(async { Err(unsigned("it cannot apply unsigned messages")) })
    }

    fn broadcast(&self, tx_bytes: String) -> BoxFuture<'_, Result<Value, ToolError>> {
        Box::pin(self.broadcast_now(tx_bytes))
    }

    fn check(&self, message: &Signed, assume: &Assume) -> Result<Vec<Requirement>, ToolError> {
        let _ = (message, assume);
        Err(ToolError::new(
            ErrorCode::ToolExecutionFailed,
            "the rest source cannot evaluate an action's requirements: the game's rules run \
             in the embedded sim; a live chain checks them when it receives the signed \
             transaction",
        )
        .with_extra("source", json!("rest")))
    }

    fn health(&self) -> Option<SourceHealth> {
        let mut h = self.client.health();
        let (hits, reads) = self.cache_stats();
        h.cache_hits = hits;
        h.cache_reads = reads;
        Some(h)
    }
}
