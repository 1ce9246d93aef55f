//! The state that servers sharing one backend share: results stored under their
//! handles ([`crate::handles`]), and the records of tasks ([`tasks`]). A store trait,
//! the in-memory store (the default, one process's) and Redis ([`redis`], any number
//! of servers and consoles).
//!
//! Nothing here knows what a handle's result means or how a task runs: the handles
//! room shapes and pages results, the MCP server runs tasks; this room keeps them,
//! with their expiry and their memory limits.

pub mod parsed;
pub mod redis;
pub mod tasks;
pub mod traced;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use crate::error::{ErrorCode, ToolError};
use crate::source::BoxFuture;
use parsed::{ParsedCache, free_later};

/// What a store knows of a handle besides its data.
#[derive(Debug, Clone, PartialEq)]
pub struct HandleMeta {
    pub handle: String,
    pub tool: String,
    /// Serialized size of the stored result, in bytes.
    pub size_bytes: usize,
    /// Rows the result pages over (see `page.rs`).
    pub rows: usize,
    pub created: DateTime<Utc>,
    pub expires: DateTime<Utc>,
    /// Fetches served so far.
    pub hits: u64,
    /// The caller whose call made it ([`crate::context::Principal::id`]); `None` for
    /// the console's own, and for a handle stored by a server older than ownership.
    pub owner: Option<String>,
}

impl HandleMeta {
    pub fn to_json(&self, now: DateTime<Utc>) -> Value {
        json!({
            "handle": self.handle,
            "tool_name": self.tool,
            "size_bytes": self.size_bytes,
            "rows": self.rows,
            "created": self.created.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            "expires": self.expires.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            "age_sec": (now - self.created).num_seconds().max(0),
            "expires_in_sec": (self.expires - now).num_seconds().max(0),
            "hits": self.hits,
        })
    }
}

/// A stored result.
#[derive(Debug, Clone)]
pub struct Stored {
    pub meta: HandleMeta,
    pub data: Arc<Value>,
}

/// Why a handle has nothing to give.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Missing {
    /// No such handle was ever stored here (or it was cleaned long ago).
    Unknown,
    /// It existed and expired at this time.
    Expired(DateTime<Utc>),
    /// Its metadata says live, but the store no longer holds its data (a shared
    /// store evicted it under memory pressure, or its own TTL ran out first).
    Evicted,
}

impl Missing {
    /// What a handle that expired at `at` is at `now`: expired, or unknown once
    /// [`EXPIRED_MEMORY`] has passed.
    pub fn after_expiry(at: DateTime<Utc>, now: DateTime<Utc>) -> Missing {
        let forget = chrono::Duration::from_std(EXPIRED_MEMORY).unwrap_or_default();
        if at + forget <= now {
            Missing::Unknown
        } else {
            Missing::Expired(at)
        }
    }

    pub fn to_error(&self, handle: &str) -> ToolError {
        let e = match self {
            Missing::Unknown => ToolError::field(
                ErrorCode::ResourceNotFound,
                "handle",
                format!("no result is stored under {handle:?}"),
            ),
            Missing::Evicted => ToolError::field(
                ErrorCode::ResourceNotFound,
                "handle",
                format!(
                    "the result under {handle:?} is no longer in the handle store (dropped \
                     before its expiry); run the tool again"
                ),
            ),
            Missing::Expired(at) => ToolError::field(
                ErrorCode::ResourceExpired,
                "handle",
                format!(
                    "the result under {handle:?} expired at {}; run the tool again",
                    at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
                ),
            ),
        };
        e.with_resource_uri(format!("structs://handles/{handle}"))
    }
}

/// A place to keep full results under handles. Implementations are shared by every
/// call, so they take `&self` and synchronise inside.
///
/// Every implementation behaves the same (`tests/handle_store.rs` runs one suite
/// against each): a handle is live while `now < expires`, then expired for
/// [`EXPIRED_MEMORY`], then unknown; `get` counts a hit only on a live handle; `list`
/// is newest first; `cleanup` counts each expired handle once.
pub trait HandleStore: Send + Sync {
    /// `memory` or `redis`, for the console and errors.
    fn name(&self) -> &'static str;

    /// The database server behind the store, for a trace's spans (`None`: in memory).
    fn server(&self) -> Option<traced::Server> {
        None
    }

    fn put(&self, meta: HandleMeta, data: Arc<Value>) -> BoxFuture<'_, Result<(), ToolError>>;

    /// The JSON size of the results held now, for the `structs.store.bytes` metric
    /// (`None`: the store does not count them).
    fn held_bytes(&self) -> BoxFuture<'_, Result<Option<usize>, ToolError>> {
        Box::pin(async { Ok(None) })
    }

    /// The result under `handle`, counting a hit, as of `now`.
    fn get(
        &self,
        handle: &str,
        now: DateTime<Utc>,
    ) -> BoxFuture<'_, Result<Result<Stored, Missing>, ToolError>>;

    /// Every live handle's metadata, newest first.
    fn list(&self, now: DateTime<Utc>) -> BoxFuture<'_, Result<Vec<HandleMeta>, ToolError>>;

    /// Drops what expired before `now`; returns how many.
    fn cleanup(&self, now: DateTime<Utc>) -> BoxFuture<'_, Result<usize, ToolError>>;

    /// Keeps a small JSON record under `key` (the MCP server's tasks) for `ttl` of
    /// real time from now, replacing what was there. Records live beside the handles
    /// so that servers sharing a store share them.
    fn put_record(
        &self,
        key: &str,
        value: Value,
        ttl: Duration,
    ) -> BoxFuture<'_, Result<(), ToolError>>;

    /// The record under `key`, if one is kept and its time has not run out.
    fn get_record(&self, key: &str) -> BoxFuture<'_, Result<Option<Value>, ToolError>>;

    /// Up to `limit` records whose keys start with `prefix`, with their keys, in no
    /// particular order.
    fn list_records(
        &self,
        prefix: &str,
        limit: usize,
    ) -> BoxFuture<'_, Result<Vec<(String, Value)>, ToolError>>;

    /// Marks `key` taken for `ttl` of real time from now, if no one has; `true` when
    /// this call took it. Of any number of claims of one key, on any number of servers
    /// sharing the store, exactly one gets `true` while the mark lives (what spends a
    /// confirmation once). A mark is never dropped for room before its time: a store
    /// with no room left refuses the claim (`RESOURCE_UNAVAILABLE`).
    fn claim(&self, key: &str, ttl: Duration) -> BoxFuture<'_, Result<bool, ToolError>>;
}

/// Marks the memory store keeps at most ([`HandleStore::claim`]); past it, a claim is
/// refused rather than an older mark forgotten.
pub const MAX_CLAIMS: usize = 100_000;

/// Records the memory store keeps at most: past it, the one nearest its end goes.
pub const MAX_RECORDS: usize = 10_000;

/// How long an expired handle is still recognised as expired (rather than unknown).
pub const EXPIRED_MEMORY: Duration = Duration::from_secs(3600);

/// The memory store's size unless configured: stored results are dropped, oldest first,
/// past this many MB of JSON. The Redis store's budget is the same unless configured.
pub const DEFAULT_MEMORY_LIMIT_MB: u64 = 256;

/// What one caller ([`crate::context::caller`]) may hold of a store: a quarter of its
/// budget. Past it the caller's own oldest results go first, so one caller's results
/// cannot push out everyone else's.
pub const CALLER_SHARE: usize = 4;

/// The most one caller may hold of a store of `limit` bytes.
pub fn caller_limit(limit: usize) -> usize {
    (limit / CALLER_SHARE).max(1)
}

/// Results in this process's memory, at most `limit` bytes of them (their JSON size):
/// storing one more drops the oldest until they fit, so many large results cannot
/// exhaust the process. A dropped handle's fetch says it was dropped before its expiry.
///
/// A result is held as its compact JSON text, not as a parsed `Value` (which takes
/// several times its text's size in small allocations), so the limit is close to the
/// memory the results really take. A fetch parses it, and the results fetched lately
/// stay parsed ([`ParsedCache`]: an eighth of the limit, 32 MB at most), so reading a
/// result page by page parses it once.
pub struct MemoryStore {
    state: Mutex<MemoryState>,
    limit: usize,
    parsed: Arc<Mutex<ParsedCache>>,
    /// Records by key, each with when it runs out.
    records: Mutex<HashMap<String, (Value, std::time::Instant)>>,
    /// Claimed keys, each with when its mark runs out.
    claims: Mutex<HashMap<String, std::time::Instant>>,
}

/// A result as the memory store holds it.
struct Held {
    meta: HandleMeta,
    /// The result's compact JSON.
    json: Arc<[u8]>,
}

#[derive(Default)]
struct MemoryState {
    /// The results held, each with its place in `order`.
    live: HashMap<String, (u64, Held)>,
    /// The handles in `live` by when they were stored, oldest first: what goes first
    /// when room is needed.
    order: BTreeMap<u64, String>,
    /// The place the next result stored takes in `order`.
    next: u64,
    /// The JSON size of everything in `live`.
    bytes: usize,
    /// Handles cleaned up, with when they expired, so a late fetch hears "expired".
    expired: HashMap<String, DateTime<Utc>>,
    /// Handles dropped for room before their expiry, with that expiry.
    evicted: HashMap<String, DateTime<Utc>>,
    /// Each caller's results, by owner: their JSON size, and their places in `order`.
    owned: HashMap<String, (usize, BTreeMap<u64, String>)>,
}

impl Default for MemoryStore {
    fn default() -> MemoryStore {
        MemoryStore::with_limit((DEFAULT_MEMORY_LIMIT_MB << 20) as usize)
    }
}

impl MemoryStore {
    /// A store that holds at most `limit` bytes of results.
    pub fn with_limit(limit: usize) -> MemoryStore {
        MemoryStore {
            state: Mutex::new(MemoryState::default()),
            limit,
            parsed: parsed::shared((limit / 8).min(parsed::DEFAULT_BUDGET)),
            records: Mutex::default(),
            claims: Mutex::default(),
        }
    }

    /// The result under `handle` (held as `json`), parsed: from the cache of results
    /// fetched lately, or parsed now and kept there.
    fn parsed(&self, handle: &str, json: &[u8]) -> Result<Arc<Value>, serde_json::Error> {
        let cache = || self.parsed.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(data) = cache().get(handle) {
            return Ok(data);
        }
        let data = Arc::new(serde_json::from_slice::<Value>(json)?);
        free_later(cache().put(handle, Arc::clone(&data), json.len()));
        Ok(data)
    }

    /// The JSON size of the results held now.
    pub fn bytes(&self) -> usize {
        self.lock().bytes
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, MemoryState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl MemoryState {
    fn insert(&mut self, stored: Held) {
        let seq = self.next;
        self.next += 1;
        self.bytes += stored.meta.size_bytes;
        self.order.insert(seq, stored.meta.handle.clone());
        if let Some(owner) = &stored.meta.owner {
            let (bytes, order) = self.owned.entry(owner.clone()).or_default();
            *bytes += stored.meta.size_bytes;
            order.insert(seq, stored.meta.handle.clone());
        }
        self.live.insert(stored.meta.handle.clone(), (seq, stored));
    }

    fn remove(&mut self, handle: &str) -> Option<Held> {
        let (seq, stored) = self.live.remove(handle)?;
        self.order.remove(&seq);
        self.bytes = self.bytes.saturating_sub(stored.meta.size_bytes);
        if let Some(owner) = &stored.meta.owner
            && let Some((bytes, order)) = self.owned.get_mut(owner)
        {
            *bytes = bytes.saturating_sub(stored.meta.size_bytes);
            order.remove(&seq);
            if order.is_empty() {
                self.owned.remove(owner);
            }
        }
        Some(stored)
    }

    /// The handle `owner`'s oldest result is under, past its share of `limit`.
    fn owner_over(&self, owner: &str, limit: usize) -> Option<String> {
        let (bytes, order) = self.owned.get(owner)?;
        if *bytes <= caller_limit(limit) {
            return None;
        }
        order.first_key_value().map(|(_, h)| h.clone())
    }

    /// Moves what expired by `now` out of `live`; returns how many.
    fn expire(&mut self, now: DateTime<Utc>) -> usize {
        let gone: Vec<String> = self
            .live
            .iter()
            .filter(|(_, (_, v))| v.meta.expires <= now)
            .map(|(k, _)| k.clone())
            .collect();
        for handle in &gone {
            if let Some(stored) = self.remove(handle) {
                self.expired.insert(handle.clone(), stored.meta.expires);
            }
        }
        gone.len()
    }

    /// Drops the oldest results, never `keep` (the newest), until everything fits in
    /// `limit`: first those of `keep`'s owner past its share ([`caller_limit`]), then
    /// anyone's. One already expired is moved to `expired`, as `cleanup` would have.
    fn make_room(&mut self, limit: usize, keep: &str, now: DateTime<Utc>) {
        let owner = self
            .live
            .get(keep)
            .and_then(|(_, held)| held.meta.owner.clone());
        loop {
            // The caller's own oldest past its share; never the result just stored, which
            // then goes to the store's own limit below.
            let over_share = owner
                .as_deref()
                .and_then(|o| self.owner_over(o, limit))
                .filter(|h| h != keep);
            let handle = match over_share {
                Some(handle) => handle,
                None if self.bytes > limit => match self.order.first_key_value() {
                    Some((_, handle)) => handle.clone(),
                    None => break,
                },
                None => break,
            };
            if handle == keep {
                break;
            }
            let Some(stored) = self.remove(&handle) else {
                break;
            };
            if stored.meta.expires <= now {
                self.expired.insert(handle, stored.meta.expires);
                continue;
            }
            tracing::info!(
                handle = %handle,
                bytes = stored.meta.size_bytes,
                limit,
                "dropped a stored result to make room in the memory handle store"
            );
            // Told to the client whose call made the store full.
            crate::context::log::log(
                crate::context::log::Level::Warning,
                "structs.handles",
                serde_json::json!({"message": format!(
                    "result handle {handle} ({} bytes of {}) was dropped to make room in the \
                     memory handle store ({limit} bytes); fetching it now says RESOURCE_NOT_FOUND",
                    stored.meta.size_bytes, stored.meta.tool),
                    "handle": handle, "tool": stored.meta.tool,
                    "size_bytes": stored.meta.size_bytes, "limit_bytes": limit}),
            );
            self.evicted.insert(handle, stored.meta.expires);
        }
    }
}

impl HandleStore for MemoryStore {
    fn name(&self) -> &'static str {
        "memory"
    }

    fn held_bytes(&self) -> BoxFuture<'_, Result<Option<usize>, ToolError>> {
        let held = self.bytes();
        Box::pin(async move { Ok(Some(held)) })
    }

    fn put(&self, meta: HandleMeta, data: Arc<Value>) -> BoxFuture<'_, Result<(), ToolError>> {
        let json: Arc<[u8]> = match serde_json::to_vec(&*data) {
            Ok(bytes) => bytes.into(),
            Err(e) => {
                let e = ToolError::new(
                    ErrorCode::ToolExecutionFailed,
                    format!("the result could not be written as JSON: {e}"),
                );
                return Box::pin(async { Err(e) });
            }
        };
        drop(data);
        // A handle stored again (never done, but allowed) is not read back as before.
        let old = self
            .parsed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&meta.handle);
        free_later(old.into_iter().collect());
        let mut s = self.lock();
        s.expired.remove(&meta.handle);
        s.evicted.remove(&meta.handle);
        s.remove(&meta.handle);
        let (handle, now) = (meta.handle.clone(), meta.created);
        s.insert(Held { meta, json });
        s.make_room(self.limit, &handle, now);
        Box::pin(async { Ok(()) })
    }

    fn get(
        &self,
        handle: &str,
        now: DateTime<Utc>,
    ) -> BoxFuture<'_, Result<Result<Stored, Missing>, ToolError>> {
        let mut s = self.lock();
        let found = match s.live.get_mut(handle).map(|(_, stored)| stored) {
            Some(stored) if stored.meta.expires > now => {
                stored.meta.hits += 1;
                Ok((stored.meta.clone(), stored.json.clone()))
            }
            Some(stored) => Err(Missing::after_expiry(stored.meta.expires, now)),
            None => Err(match (s.evicted.get(handle), s.expired.get(handle)) {
                (Some(expires), _) if *expires > now => Missing::Evicted,
                (Some(at), _) | (None, Some(at)) => Missing::after_expiry(*at, now),
                (None, None) => Missing::Unknown,
            }),
        };
        drop(s);
        // Parsed outside the lock: other calls need not wait for it.
        let found = match found {
            Ok((meta, json)) => match self.parsed(handle, &json) {
                Ok(data) => Ok(Ok(Stored { meta, data })),
                Err(e) => Err(ToolError::new(
                    ErrorCode::ToolExecutionFailed,
                    format!("the stored result under {handle:?} could not be read back: {e}"),
                )),
            },
            Err(missing) => Ok(Err(missing)),
        };
        Box::pin(async { found })
    }

    fn list(&self, now: DateTime<Utc>) -> BoxFuture<'_, Result<Vec<HandleMeta>, ToolError>> {
        let s = self.lock();
        let mut live: Vec<HandleMeta> = s
            .live
            .values()
            .map(|(_, v)| v)
            .filter(|v| v.meta.expires > now)
            .map(|v| v.meta.clone())
            .collect();
        live.sort_by(|a, b| b.created.cmp(&a.created).then(a.handle.cmp(&b.handle)));
        Box::pin(async { Ok(live) })
    }

    fn cleanup(&self, now: DateTime<Utc>) -> BoxFuture<'_, Result<usize, ToolError>> {
        let mut s = self.lock();
        let n = s.expire(now);
        let forget = chrono::Duration::from_std(EXPIRED_MEMORY).unwrap_or_default();
        s.expired.retain(|_, at| *at + forget > now);
        s.evicted.retain(|_, at| *at + forget > now);
        Box::pin(async move { Ok(n) })
    }

    fn put_record(
        &self,
        key: &str,
        value: Value,
        ttl: Duration,
    ) -> BoxFuture<'_, Result<(), ToolError>> {
        let now = std::time::Instant::now();
        let mut records = self.records.lock().unwrap_or_else(|e| e.into_inner());
        records.retain(|_, (_, until)| *until > now);
        if records.len() >= MAX_RECORDS && !records.contains_key(key) {
            let soonest = records
                .iter()
                .min_by_key(|(_, (_, until))| *until)
                .map(|(k, _)| k.clone());
            if let Some(k) = soonest {
                records.remove(&k);
            }
        }
        records.insert(key.to_string(), (value, now + ttl));
        Box::pin(async { Ok(()) })
    }

    fn get_record(&self, key: &str) -> BoxFuture<'_, Result<Option<Value>, ToolError>> {
        let records = self.records.lock().unwrap_or_else(|e| e.into_inner());
        let found = records
            .get(key)
            .filter(|(_, until)| *until > std::time::Instant::now())
            .map(|(v, _)| v.clone());
        Box::pin(async { Ok(found) })
    }

    fn claim(&self, key: &str, ttl: Duration) -> BoxFuture<'_, Result<bool, ToolError>> {
        let now = std::time::Instant::now();
        let mut claims = self.claims.lock().unwrap_or_else(|e| e.into_inner());
        let taken = claims.get(key).is_some_and(|until| *until > now);
        let answer = if taken {
            Ok(false)
        } else {
            if claims.len() >= MAX_CLAIMS {
                claims.retain(|_, until| *until > now);
            }
            if claims.len() >= MAX_CLAIMS {
                Err(ToolError::new(
                    ErrorCode::ResourceUnavailable,
                    format!(
                        "the memory store holds {MAX_CLAIMS} marks of spent confirmations, \
                         the most it keeps; try again when the oldest run out"
                    ),
                ))
            } else {
                claims.insert(key.to_string(), now + ttl);
                Ok(true)
            }
        };
        Box::pin(async move { answer })
    }

    fn list_records(
        &self,
        prefix: &str,
        limit: usize,
    ) -> BoxFuture<'_, Result<Vec<(String, Value)>, ToolError>> {
        let now = std::time::Instant::now();
        let records = self.records.lock().unwrap_or_else(|e| e.into_inner());
        let found: Vec<(String, Value)> = records
            .iter()
            .filter(|(k, (_, until))| k.starts_with(prefix) && *until > now)
            .take(limit)
            .map(|(k, (v, _))| (k.clone(), v.clone()))
            .collect();
        Box::pin(async { Ok(found) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(handle: &str, created: DateTime<Utc>, ttl: i64) -> HandleMeta {
        HandleMeta {
            handle: handle.into(),
            tool: "t".into(),
            size_bytes: 1,
            rows: 1,
            created,
            expires: created + chrono::Duration::seconds(ttl),
            hits: 0,
            owner: None,
        }
    }

    #[tokio::test]
    async fn a_result_fetched_again_is_not_parsed_again_until_it_is_stored_anew() {
        let t0: DateTime<Utc> = "2026-11-21T12:00:00Z".parse().unwrap();
        let s = MemoryStore::default();
        let data = serde_json::json!({"players": [{"id": "1-1"}, {"id": "1-2"}]});
        s.put(meta("h", t0, 600), Arc::new(data.clone()))
            .await
            .unwrap();
        let read = || async { s.get("h", t0).await.unwrap().unwrap().data };
        let (first, second) = (read().await, read().await);
        assert_eq!(*first, data);
        assert!(
            Arc::ptr_eq(&first, &second),
            "the second fetch reads the parsed copy"
        );
        // Stored again under the same handle: the new data, not the cached copy.
        let other = serde_json::json!({"players": []});
        s.put(meta("h", t0, 600), Arc::new(other.clone()))
            .await
            .unwrap();
        assert_eq!(*read().await, other);
    }

    #[tokio::test]
    async fn one_caller_past_its_share_loses_its_own_oldest_not_anothers() {
        let t0: DateTime<Utc> = "2026-11-21T12:00:00Z".parse().unwrap();
        let at = |s: i64| t0 + chrono::Duration::seconds(s);
        let owned = |handle: &str, created: i64, owner: &str| HandleMeta {
            size_bytes: 100,
            owner: Some(owner.to_string()),
            ..meta(handle, at(created), 600)
        };
        // A 1,000-byte store: a caller holds 250 bytes at most.
        let s = MemoryStore::with_limit(1000);
        s.put(owned("bob-1", 0, "caller:bob"), Arc::new(json!(1)))
            .await
            .unwrap();
        for i in 1..=5 {
            let h = format!("alice-{i}");
            s.put(owned(&h, i, "caller:alice"), Arc::new(json!(i)))
                .await
                .unwrap();
        }
        // Alice keeps her newest two (200 of her 250); bob's older one is untouched.
        let live: Vec<String> = s
            .list(at(10))
            .await
            .unwrap()
            .into_iter()
            .map(|m| m.handle)
            .collect();
        assert_eq!(live, ["alice-5", "alice-4", "bob-1"]);
        assert!(matches!(
            s.get("alice-1", at(10)).await.unwrap(),
            Err(Missing::Evicted)
        ));
        assert_eq!(s.bytes(), 300);
    }

    #[tokio::test]
    async fn results_each_over_a_callers_share_still_keep_the_store_to_its_limit() {
        let t0: DateTime<Utc> = "2026-11-21T12:00:00Z".parse().unwrap();
        let s = MemoryStore::with_limit(1000);
        for (i, owner) in ["a", "b", "c", "d", "e"].into_iter().enumerate() {
            let m = HandleMeta {
                size_bytes: 300,
                owner: Some(format!("key:{owner}")),
                ..meta(owner, t0 + chrono::Duration::seconds(i as i64), 600)
            };
            s.put(m, Arc::new(json!(i))).await.unwrap();
        }
        assert!(s.bytes() <= 1000, "{} bytes", s.bytes());
        assert_eq!(s.bytes(), 900);
    }

    #[tokio::test]
    async fn past_its_limit_the_memory_store_drops_the_oldest_first() {
        let t0: DateTime<Utc> = "2026-11-21T12:00:00Z".parse().unwrap();
        let at = |s: i64| t0 + chrono::Duration::seconds(s);
        let sized = |handle: &str, created: i64, size: usize| HandleMeta {
            size_bytes: size,
            ..meta(handle, at(created), 600)
        };
        let s = MemoryStore::with_limit(1000);
        for (i, h) in ["a", "b", "c"].into_iter().enumerate() {
            s.put(sized(h, i as i64, 400), Arc::new(serde_json::json!(h)))
                .await
                .unwrap();
        }
        // a, the oldest, made room for c.
        assert_eq!(s.bytes(), 800);
        assert_eq!(
            s.get("a", at(5)).await.unwrap().unwrap_err(),
            Missing::Evicted
        );
        assert!(s.get("b", at(5)).await.unwrap().is_ok());
        assert!(s.get("c", at(5)).await.unwrap().is_ok());
        let names: Vec<String> = s
            .list(at(5))
            .await
            .unwrap()
            .into_iter()
            .map(|m| m.handle)
            .collect();
        assert_eq!(names, ["c", "b"]);
        // Storing one again replaces it rather than counting it twice.
        s.put(sized("c", 3, 400), Arc::new(serde_json::json!("c2")))
            .await
            .unwrap();
        assert_eq!(s.bytes(), 800);
        // One result over the limit on its own is kept alone.
        s.put(sized("d", 4, 5000), Arc::new(serde_json::json!("d")))
            .await
            .unwrap();
        assert_eq!(s.bytes(), 5000);
        assert_eq!(
            s.get("b", at(5)).await.unwrap().unwrap_err(),
            Missing::Evicted
        );
        assert!(s.get("d", at(5)).await.unwrap().is_ok());
        // A dropped handle reads as expired once its own expiry has passed, then unknown.
        assert_eq!(
            s.get("a", at(700)).await.unwrap().unwrap_err(),
            Missing::Expired(at(600))
        );
        s.cleanup(at(600 + 3600 + 1)).await.unwrap();
        assert_eq!(
            s.get("a", at(600 + 3600 + 1)).await.unwrap().unwrap_err(),
            Missing::Unknown
        );
        assert_eq!(s.bytes(), 0);
    }

    #[tokio::test]
    async fn ttl_expiry_cleanup_and_hits() {
        let t0: DateTime<Utc> = "2026-11-21T12:00:00Z".parse().unwrap();
        let s = MemoryStore::default();
        s.put(meta("a", t0, 60), Arc::new(serde_json::json!(1)))
            .await
            .unwrap();
        s.put(
            meta("b", t0 + chrono::Duration::seconds(1), 600),
            Arc::new(serde_json::json!(2)),
        )
        .await
        .unwrap();
        let got = s.get("a", t0).await.unwrap().unwrap();
        assert_eq!(*got.data, serde_json::json!(1));
        assert_eq!(got.meta.hits, 1);
        assert_eq!(s.get("a", t0).await.unwrap().unwrap().meta.hits, 2);
        let names = |v: Vec<HandleMeta>| v.into_iter().map(|m| m.handle).collect::<Vec<_>>();
        assert_eq!(
            names(s.list(t0 + chrono::Duration::seconds(2)).await.unwrap()),
            ["b", "a"]
        );

        let later = t0 + chrono::Duration::seconds(61);
        assert_eq!(
            s.get("a", later).await.unwrap().unwrap_err(),
            Missing::Expired(t0 + chrono::Duration::seconds(60))
        );
        assert_eq!(names(s.list(later).await.unwrap()), ["b"]);
        assert_eq!(s.cleanup(later).await.unwrap(), 1);
        assert_eq!(s.cleanup(later).await.unwrap(), 0);
        // Remembered as expired for a while after cleanup, then unknown.
        assert!(matches!(
            s.get("a", later).await.unwrap(),
            Err(Missing::Expired(_))
        ));
        let much_later = later + chrono::Duration::from_std(EXPIRED_MEMORY).unwrap();
        s.cleanup(much_later).await.unwrap();
        assert_eq!(
            s.get("a", much_later).await.unwrap().unwrap_err(),
            Missing::Unknown
        );
        assert_eq!(
            s.get("zzz", t0).await.unwrap().unwrap_err(),
            Missing::Unknown
        );
    }
}
