//! The Redis handle store: results kept in a Redis server, so several headless servers
//! pointed at the same Redis share their handles.
//!
//! Layout, under a key prefix (`structs-console` by default):
//!
//! - `{prefix}:data:{handle}`: the result as a JSON string;
//! - `{prefix}:meta:{handle}`: a hash of `tool`, `size_bytes`, `rows`, `created` and
//!   `expires` (Unix milliseconds), `hits` and the `owner` whose call made it (absent
//!   for the console's own);
//! - `{prefix}:live`: a sorted set of handles scored by their expiry, which `list` and
//!   `cleanup` read;
//! - `{prefix}:record:{key}`: a task's record (JSON), and `{prefix}:claim:{key}` a
//!   spent confirmation's mark, each with Redis's own TTL.
//!
//! The store keeps to a byte budget ([`RedisStore::with_limit`], the memory store's
//! 256 MB unless configured), counted in Redis itself so that every server sharing the
//! prefix keeps to one budget: past it the oldest results are dropped first, and past a
//! caller's share ([`super::caller_limit`]) that caller's own oldest first.
//!
//! Expiry is decided by comparing `expires` with the `now` each call passes in, exactly
//! as the memory store does. Redis's own key TTLs are a safety net that frees memory
//! when no server is left to clean up: data lives a minute past its expiry, metadata
//! [`EXPIRED_MEMORY`] past it (so a late fetch still hears "expired" rather than
//! "unknown"), and the live set as long as its longest-lived handle. Those TTLs run on
//! Redis's clock, so a reader whose clock lags the writer's by over a minute, or a
//! core on a simulated clock that runs long, can find metadata without data; so can a
//! Redis that evicts keys under `maxmemory`. Such a handle is neither listed nor
//! fetched: a fetch says it was dropped before its expiry ([`Missing::Evicted`]).
//!
//! The scripts name data keys from their prefix rather than passing them as KEYS, so
//! the store needs one Redis server (standalone or a primary), not a Cluster.
//!
//! Every command runs through one [`ConnectionManager`], which reconnects by itself
//! after Redis restarts; while Redis is away each call fails within a few seconds with
//! `RESOURCE_UNAVAILABLE` and the rest of the server goes on serving.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use serde_json::Value;

use super::parsed::{ParsedCache, free_later};
use super::{EXPIRED_MEMORY, HandleMeta, HandleStore, Missing, Stored};
use crate::error::{ErrorCode, ToolError};
use crate::source::BoxFuture;

/// The key prefix unless the URL's caller gives another.
pub const DEFAULT_PREFIX: &str = "structs-console";

/// The longest any one store operation may take, connection attempts included.
const OPERATION_TIMEOUT: Duration = Duration::from_secs(3);

/// How long data stays in Redis past its expiry before Redis drops it itself.
const DATA_GRACE_MS: i64 = 60_000;

/// The metadata hash fields, in the order `parse_meta` reads them.
const META_FIELDS: [&str; 7] = [
    "tool",
    "size_bytes",
    "rows",
    "created",
    "expires",
    "hits",
    "owner",
];

/// Reads a handle's metadata and counts a hit when it is live. KEYS: meta, data.
/// ARGV: now (ms). Returns nil when unknown; the seven metadata fields when expired
/// (the owner `false` when there is none); those and "1" when live (hit counted), or
/// "0" when live but the data is gone.
/// The data itself is read beside the script (a plain GET in the same round trip),
/// since passing it through Lua doubles its copying.
const GET_SCRIPT: &str = r#"
local m = redis.call('HMGET', KEYS[1], 'tool', 'size_bytes', 'rows', 'created', 'expires', 'hits', 'owner')
if not m[5] then return false end
if not m[7] then m[7] = '' end
if tonumber(m[5]) <= tonumber(ARGV[1]) then return m end
if redis.call('EXISTS', KEYS[2]) == 0 then m[8] = '0'; return m end
m[6] = tostring(redis.call('HINCRBY', KEYS[1], 'hits', 1))
m[8] = '1'
return m
"#;

/// What the budget's scripts share: `drop(p, h)` lets go of handle `h`'s data under
/// prefix `p` and takes its bytes off the counts (its metadata stays, so a fetch says
/// it was dropped before its expiry); `keep(p, key, ms)` makes a count key live as long
/// as the longest-lived handle.
///
/// The counts, under the prefix: `:bytes` (the JSON held in all), `:sizes` (each
/// handle's), `:owners` (each handle's owner), `:order` (handles by creation),
/// `:owner-bytes` (each owner's bytes) and `:owned:{owner}` (an owner's handles by
/// creation). Every count lives as long as the longest-lived handle, so what `drop`
/// reads is there while the handle is counted.
const BUDGET_FNS: &str = r#"
local function drop(p, h)
  local size = tonumber(redis.call('HGET', p .. ':sizes', h) or '0')
  local owner = redis.call('HGET', p .. ':owners', h)
  redis.call('DECRBY', p .. ':bytes', size)
  redis.call('HDEL', p .. ':sizes', h)
  redis.call('HDEL', p .. ':owners', h)
  redis.call('ZREM', p .. ':order', h)
  redis.call('ZREM', p .. ':live', h)
  redis.call('DEL', p .. ':data:' .. h)
  if owner and owner ~= '' then
    redis.call('HINCRBY', p .. ':owner-bytes', owner, -size)
    redis.call('ZREM', p .. ':owned:' .. owner, h)
  end
  return size
end
local function keep(key, ms)
  if redis.call('PTTL', key) < tonumber(ms) then redis.call('PEXPIRE', key, ms) end
end
"#;

/// Stores a handle within the budget. KEYS: data, meta, live set. ARGV: handle, JSON,
/// data TTL (ms), metadata TTL (ms), expires (ms), prefix, budget (bytes), a caller's
/// share (bytes), then the metadata fields and values (`created` the 8th of them,
/// `owner` the 14th). The sets and counts live as long as their longest-lived entry.
/// Past the owner's share its own oldest go first, then past the budget anyone's, never
/// the handle just stored. Returns the handles dropped.
const PUT_SCRIPT: &str = r#"
local p, h, size = ARGV[6], ARGV[1], string.len(ARGV[2])
local created, owner = ARGV[16], ARGV[22]
if redis.call('HEXISTS', p .. ':sizes', h) == 1 then drop(p, h) end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
redis.call('DEL', KEYS[2])
redis.call('HSET', KEYS[2], unpack(ARGV, 9))
redis.call('PEXPIRE', KEYS[2], ARGV[4])
redis.call('ZADD', KEYS[3], ARGV[5], h)
keep(KEYS[3], ARGV[4])
redis.call('HSET', p .. ':sizes', h, size)
redis.call('INCRBY', p .. ':bytes', size)
redis.call('ZADD', p .. ':order', created, h)
for _, k in ipairs({':sizes', ':bytes', ':order'}) do keep(p .. k, ARGV[4]) end
local dropped = {}
if owner ~= '' then
  local mine = p .. ':owned:' .. owner
  redis.call('HSET', p .. ':owners', h, owner)
  redis.call('HINCRBY', p .. ':owner-bytes', owner, size)
  redis.call('ZADD', mine, created, h)
  for _, k in ipairs({mine, p .. ':owners', p .. ':owner-bytes'}) do keep(k, ARGV[4]) end
  while tonumber(redis.call('HGET', p .. ':owner-bytes', owner) or '0') > tonumber(ARGV[8]) do
    local oldest = redis.call('ZRANGE', mine, 0, 0)[1]
    if not oldest or oldest == h then break end
    drop(p, oldest)
    -- Gone from the owner's set whatever `drop` found, so the loop always moves on.
    redis.call('ZREM', mine, oldest)
    dropped[#dropped + 1] = oldest
  end
end
while tonumber(redis.call('GET', p .. ':bytes') or '0') > tonumber(ARGV[7]) do
  local oldest = redis.call('ZRANGE', p .. ':order', 0, 0)[1]
  if not oldest or oldest == h then break end
  drop(p, oldest)
  dropped[#dropped + 1] = oldest
end
return dropped
"#;

/// Drops the data of every handle expired by `now`, and its bytes from the counts.
/// KEYS: live set. ARGV: now (ms), prefix. Returns how many were dropped.
const CLEANUP_SCRIPT: &str = r#"
local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, 1000)
for _, h in ipairs(gone) do
  drop(ARGV[2], h)
end
return #gone
"#;

/// A script with the budget's functions before it.
fn with_budget_fns(script: &str) -> String {
    format!("{BUDGET_FNS}{script}")
}

/// Results in a Redis server.
pub struct RedisStore {
    connection: ConnectionManager,
    prefix: String,
    /// The URL without credentials, for messages.
    shown: String,
    /// Results this process read lately, parsed. The data under a handle never changes
    /// (every handle is new), so a page-by-page fetch reads and parses the whole result
    /// once, not once per page; the metadata still comes from Redis.
    parsed: Arc<Mutex<ParsedCache>>,
    /// The most JSON the store holds, in all; past it the oldest results go first.
    limit: usize,
}

impl RedisStore {
    /// Connects to the Redis at `url` (`redis://[user:password@]host[:port][/db]`) and
    /// checks that it answers.
    pub async fn connect(url: &str, prefix: &str) -> Result<RedisStore, String> {
        let shown = without_credentials(url);
        let client = redis::Client::open(url)
            .map_err(|e| format!("invalid Redis URL {shown:?} for the handle store: {e}"))?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_millis(1000)))
            .set_response_timeout(Some(Duration::from_millis(2000)))
            .set_number_of_retries(1)
            .set_min_delay(Duration::from_millis(50))
            .set_max_delay(Duration::from_millis(500));
        let connecting = ConnectionManager::new_with_config(client, config);
        let connection = match tokio::time::timeout(OPERATION_TIMEOUT, connecting).await {
            Ok(Ok(c)) => c,
            Ok(Err(e)) => {
                return Err(format!(
                    "cannot reach the Redis handle store at {shown}: {e}"
                ));
            }
            Err(_) => {
                return Err(format!(
                    "cannot reach the Redis handle store at {shown}: no answer within {} s",
                    OPERATION_TIMEOUT.as_secs()
                ));
            }
        };
        let store = RedisStore {
            connection,
            prefix: prefix.to_string(),
            shown,
            parsed: super::parsed::shared(super::parsed::DEFAULT_BUDGET),
            limit: (super::DEFAULT_MEMORY_LIMIT_MB << 20) as usize,
        };
        store
            .query::<String>(&redis::cmd("PING"))
            .await
            .map_err(|e| e.message.clone())?;
        Ok(store)
    }

    /// Holds at most `limit` bytes of results' JSON, in all, for every server sharing
    /// the prefix (each should say the same); past it the oldest go first.
    pub fn with_limit(mut self, limit: usize) -> RedisStore {
        self.limit = limit.max(1);
        self
    }

    /// The JSON of the results held now, by every server sharing the prefix.
    ///
    /// # Errors
    ///
    /// The store's, when Redis cannot be read.
    pub async fn bytes(&self) -> Result<usize, ToolError> {
        let held: Option<i64> = self
            .query(redis::cmd("GET").arg(format!("{}:bytes", self.prefix)))
            .await?;
        Ok(held.unwrap_or(0).max(0) as usize)
    }

    /// The Redis URL without credentials.
    pub fn location(&self) -> &str {
        &self.shown
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, ParsedCache> {
        self.parsed.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn data_key(&self, handle: &str) -> String {
        format!("{}:data:{handle}", self.prefix)
    }

    fn meta_key(&self, handle: &str) -> String {
        format!("{}:meta:{handle}", self.prefix)
    }

    fn live_key(&self) -> String {
        format!("{}:live", self.prefix)
    }

    fn record_key(&self, key: &str) -> String {
        format!("{}:record:{key}", self.prefix)
    }

    /// Runs one command: [`RedisStore::run`].
    async fn query<T: redis::FromRedisValue>(&self, cmd: &redis::Cmd) -> Result<T, ToolError> {
        self.run(|mut c| async move { cmd.query_async(&mut c).await })
            .await
    }

    /// Runs one pipeline: [`RedisStore::run`].
    async fn query_pipe<T: redis::FromRedisValue>(
        &self,
        pipe: &redis::Pipeline,
    ) -> Result<T, ToolError> {
        self.run(|mut c| async move { pipe.query_async(&mut c).await })
            .await
    }

    /// Runs one Redis operation under the time limit, turning failures into
    /// `RESOURCE_UNAVAILABLE`. An operation that finds its connection dropped (Redis
    /// restarted since the last) runs once more on the connection the manager makes
    /// anew, so the first call after a restart does not fail; every operation here may
    /// run twice (writes set whole values).
    async fn run<T, Fut>(&self, op: impl Fn(ConnectionManager) -> Fut) -> Result<T, ToolError>
    where
        Fut: std::future::Future<Output = redis::RedisResult<T>>,
    {
        let mut retried = false;
        loop {
            match tokio::time::timeout(OPERATION_TIMEOUT, op(self.connection.clone())).await {
                Ok(Ok(v)) => return Ok(v),
                Ok(Err(e)) if !retried && (e.is_connection_dropped() || e.is_io_error()) => {
                    retried = true;
                }
                Ok(Err(e)) => return Err(self.unavailable(&e.to_string())),
                Err(_) => {
                    return Err(self.unavailable(&format!(
                        "no answer within {} s",
                        OPERATION_TIMEOUT.as_secs()
                    )));
                }
            }
        }
    }

    fn unavailable(&self, why: &str) -> ToolError {
        ToolError::new(
            ErrorCode::ResourceUnavailable,
            format!(
                "the Redis handle store at {} is unavailable: {why}",
                self.shown
            ),
        )
        .with_extra("store", Value::String(format!("redis {}", self.shown)))
    }

    fn corrupt(&self, handle: &str, why: &str) -> ToolError {
        ToolError::new(
            ErrorCode::ResourceUnavailable,
            format!(
                "the Redis handle store at {} holds unreadable data for {handle}: {why}",
                self.shown
            ),
        )
    }
}

fn without_credentials(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            format!("{}{}", &url[..scheme + 3], &url[at + 1..])
        }
        _ => url.to_string(),
    }
}

fn millis(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis()
}

fn from_millis(ms: i64) -> DateTime<Utc> {
    Utc.timestamp_millis_opt(ms)
        .single()
        .unwrap_or(DateTime::<Utc>::UNIX_EPOCH)
}

/// Metadata from the seven hash fields, in `GET_SCRIPT`'s order (an empty owner is
/// none).
fn parse_meta(handle: &str, f: &[Option<String>]) -> Option<HandleMeta> {
    let text = |i: usize| f.get(i).and_then(|v| v.as_deref());
    let num = |i: usize| text(i).and_then(|v| v.parse::<i64>().ok());
    Some(HandleMeta {
        handle: handle.to_string(),
        tool: text(0)?.to_string(),
        size_bytes: num(1)?.max(0) as usize,
        rows: num(2)?.max(0) as usize,
        created: from_millis(num(3)?),
        expires: from_millis(num(4)?),
        hits: num(5).unwrap_or(0).max(0) as u64,
        owner: text(6).filter(|o| !o.is_empty()).map(str::to_string),
    })
}

impl HandleStore for RedisStore {
    fn server(&self) -> Option<super::traced::Server> {
        let url = reqwest::Url::parse(&self.shown).ok()?;
        Some(super::traced::Server {
            system: "redis",
            address: url.host_str()?.to_string(),
            port: url.port().unwrap_or(6379),
            namespace: url
                .path()
                .trim_start_matches('/')
                .parse::<u32>()
                .unwrap_or(0)
                .to_string(),
        })
    }

    fn name(&self) -> &'static str {
        "redis"
    }

    fn held_bytes(&self) -> BoxFuture<'_, Result<Option<usize>, ToolError>> {
        Box::pin(async move { self.bytes().await.map(Some) })
    }

    fn put(&self, meta: HandleMeta, data: Arc<Value>) -> BoxFuture<'_, Result<(), ToolError>> {
        Box::pin(async move {
            let json = serde_json::to_string(&*data).map_err(|e| {
                ToolError::new(
                    ErrorCode::ToolExecutionFailed,
                    format!("cannot encode result: {e}"),
                )
            })?;
            let ttl_ms = (meta.expires - meta.created).num_milliseconds().max(1);
            let forget_ms = EXPIRED_MEMORY.as_millis() as i64;
            let mut put = redis::cmd("EVAL");
            put.arg(with_budget_fns(PUT_SCRIPT))
                .arg(3)
                .arg(self.data_key(&meta.handle))
                .arg(self.meta_key(&meta.handle))
                .arg(self.live_key())
                .arg(&meta.handle)
                .arg(json)
                .arg(ttl_ms + DATA_GRACE_MS)
                .arg(ttl_ms + forget_ms)
                .arg(millis(meta.expires))
                .arg(&self.prefix)
                .arg(self.limit)
                .arg(super::caller_limit(self.limit))
                .arg("tool")
                .arg(&meta.tool)
                .arg("size_bytes")
                .arg(meta.size_bytes)
                .arg("rows")
                .arg(meta.rows)
                .arg("created")
                .arg(millis(meta.created))
                .arg("expires")
                .arg(millis(meta.expires))
                .arg("hits")
                .arg(meta.hits)
                .arg("owner")
                .arg(meta.owner.as_deref().unwrap_or(""));
            drop(data);
            let dropped: Vec<String> = self.query(&put).await?;
            // A handle stored again (never done, but allowed) is not read back as before.
            free_later(self.cache().remove(&meta.handle).into_iter().collect());
            for handle in &dropped {
                // Dropped for room: not to be read back parsed either.
                free_later(self.cache().remove(handle).into_iter().collect());
                tracing::info!(
                    handle = %handle,
                    limit = self.limit,
                    "dropped a stored result to make room in the Redis handle store"
                );
                crate::context::log::log(
                    crate::context::log::Level::Warning,
                    "structs.handles",
                    serde_json::json!({"message": format!(
                        "result handle {handle} was dropped to make room in the Redis handle \
                         store ({} bytes); fetching it now says RESOURCE_NOT_FOUND", self.limit),
                        "handle": handle, "limit_bytes": self.limit}),
                );
            }
            Ok(())
        })
    }

    fn get(
        &self,
        handle: &str,
        now: DateTime<Utc>,
    ) -> BoxFuture<'_, Result<Result<Stored, Missing>, ToolError>> {
        let handle = handle.to_string();
        Box::pin(async move {
            let cached = self.cache().get(&handle);
            let mut script = redis::cmd("EVAL");
            script
                .arg(GET_SCRIPT)
                .arg(2)
                .arg(self.meta_key(&handle))
                .arg(self.data_key(&handle))
                .arg(millis(now));
            let (reply, json): (Option<Vec<Option<String>>>, Option<Vec<u8>>) = if cached.is_some()
            {
                (self.query(&script).await?, None)
            } else {
                let mut pipe = redis::pipe();
                pipe.add_command(script)
                    .cmd("GET")
                    .arg(self.data_key(&handle));
                self.query_pipe(&pipe).await?
            };
            let Some(fields) = reply else {
                drop(self.cache().remove(&handle));
                return Ok(Err(Missing::Unknown));
            };
            let meta = parse_meta(&handle, &fields)
                .ok_or_else(|| self.corrupt(&handle, "its metadata is incomplete"))?;
            if meta.expires <= now {
                drop(self.cache().remove(&handle));
                return Ok(Err(Missing::after_expiry(meta.expires, now)));
            }
            if fields.get(7).and_then(Option::as_deref) != Some("1") {
                // Live by its metadata, but Redis no longer has the data.
                drop(self.cache().remove(&handle));
                return Ok(Err(Missing::Evicted));
            }
            let data = match (cached, json) {
                (Some(data), _) => data,
                (None, Some(json)) => {
                    let len = json.len();
                    let text = String::from_utf8(json)
                        .map_err(|e| self.corrupt(&handle, &e.to_string()))?;
                    let data: Value = serde_json::from_str(&text)
                        .map_err(|e| self.corrupt(&handle, &e.to_string()))?;
                    let data = Arc::new(data);
                    let dropped = self.cache().put(&handle, Arc::clone(&data), len);
                    free_later(dropped);
                    data
                }
                // Dropped between the script and the GET.
                (None, None) => return Ok(Err(Missing::Evicted)),
            };
            Ok(Ok(Stored { meta, data }))
        })
    }

    fn list(&self, now: DateTime<Utc>) -> BoxFuture<'_, Result<Vec<HandleMeta>, ToolError>> {
        Box::pin(async move {
            let handles: Vec<String> = self
                .query(
                    redis::cmd("ZRANGEBYSCORE")
                        .arg(self.live_key())
                        .arg(format!("({}", millis(now)))
                        .arg("+inf"),
                )
                .await?;
            if handles.is_empty() {
                return Ok(Vec::new());
            }
            // Each handle's metadata, and whether its data is still there (a handle
            // whose data is gone cannot be fetched, so it is not listed): one round trip.
            let mut pipe = redis::pipe();
            for h in &handles {
                pipe.cmd("HMGET")
                    .arg(self.meta_key(h))
                    .arg(&META_FIELDS[..])
                    .cmd("EXISTS")
                    .arg(self.data_key(h));
            }
            let replies: Vec<redis::Value> = self.query_pipe(&pipe).await?;
            let mut live: Vec<HandleMeta> = handles
                .iter()
                .zip(replies.chunks(2))
                .filter_map(|(h, reply)| {
                    let [fields, present] = reply else {
                        return None;
                    };
                    let present: bool = redis::from_redis_value_ref(present).ok()?;
                    let fields: Vec<Option<String>> = redis::from_redis_value_ref(fields).ok()?;
                    present.then(|| parse_meta(h, &fields)).flatten()
                })
                .filter(|m| m.expires > now)
                .collect();
            live.sort_by(|a, b| b.created.cmp(&a.created).then(a.handle.cmp(&b.handle)));
            Ok(live)
        })
    }

    fn cleanup(&self, now: DateTime<Utc>) -> BoxFuture<'_, Result<usize, ToolError>> {
        Box::pin(async move {
            let mut total = 0;
            loop {
                let n: usize = self
                    .query(
                        redis::cmd("EVAL")
                            .arg(with_budget_fns(CLEANUP_SCRIPT))
                            .arg(1)
                            .arg(self.live_key())
                            .arg(millis(now))
                            .arg(&self.prefix),
                    )
                    .await?;
                total += n;
                if n < 1000 {
                    return Ok(total);
                }
            }
        })
    }

    fn put_record(
        &self,
        key: &str,
        value: Value,
        ttl: Duration,
    ) -> BoxFuture<'_, Result<(), ToolError>> {
        let key = self.record_key(key);
        Box::pin(async move {
            let ms = ttl.as_millis().max(1) as u64;
            self.query::<()>(
                redis::cmd("SET")
                    .arg(&key)
                    .arg(value.to_string())
                    .arg("PX")
                    .arg(ms),
            )
            .await
        })
    }

    fn claim(&self, key: &str, ttl: Duration) -> BoxFuture<'_, Result<bool, ToolError>> {
        let key = format!("{}:claim:{key}", self.prefix);
        Box::pin(async move {
            let ms = ttl.as_millis().max(1) as u64;
            // SET NX is one command: of concurrent claims, Redis lets one through.
            let set: Option<String> = self
                .query(
                    redis::cmd("SET")
                        .arg(&key)
                        .arg("1")
                        .arg("NX")
                        .arg("PX")
                        .arg(ms),
                )
                .await?;
            Ok(set.is_some())
        })
    }

    fn list_records(
        &self,
        prefix: &str,
        limit: usize,
    ) -> BoxFuture<'_, Result<Vec<(String, Value)>, ToolError>> {
        let pattern = format!("{}*", self.record_key(prefix));
        let strip = self.record_key("");
        Box::pin(async move {
            let mut keys: Vec<String> = Vec::new();
            let mut cursor: u64 = 0;
            // SCAN walks the keys a batch at a time; a record made or dropped meanwhile
            // may be missed or seen once more, which a listing can bear.
            loop {
                let (next, batch): (u64, Vec<String>) = self
                    .query(
                        redis::cmd("SCAN")
                            .arg(cursor)
                            .arg("MATCH")
                            .arg(&pattern)
                            .arg("COUNT")
                            .arg(500),
                    )
                    .await?;
                keys.extend(batch);
                cursor = next;
                if cursor == 0 || keys.len() >= limit {
                    break;
                }
            }
            keys.sort();
            keys.dedup();
            keys.truncate(limit);
            if keys.is_empty() {
                return Ok(Vec::new());
            }
            let texts: Vec<Option<String>> = self.query(redis::cmd("MGET").arg(&keys)).await?;
            Ok(keys
                .into_iter()
                .zip(texts)
                .filter_map(|(k, t)| {
                    let value = serde_json::from_str(&t?).ok()?;
                    Some((k.strip_prefix(&strip).unwrap_or(&k).to_string(), value))
                })
                .collect())
        })
    }

    fn get_record(&self, key: &str) -> BoxFuture<'_, Result<Option<Value>, ToolError>> {
        let key = self.record_key(key);
        Box::pin(async move {
            let text: Option<String> = self.query(redis::cmd("GET").arg(&key)).await?;
            match text {
                None => Ok(None),
                Some(text) => serde_json::from_str(&text)
                    .map(Some)
                    .map_err(|e| self.corrupt(&key, &e.to_string())),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_never_shown() {
        assert_eq!(
            without_credentials("redis://:secret@10.0.0.1:6379/2"),
            "redis://10.0.0.1:6379/2"
        );
        assert_eq!(
            without_credentials("redis://user:p@ss@host"),
            "redis://host"
        );
        assert_eq!(
            without_credentials("redis://127.0.0.1"),
            "redis://127.0.0.1"
        );
    }

    #[test]
    fn metadata_round_trips_through_hash_fields() {
        let f = |v: &str| Some(v.to_string());
        let fields = [
            f("structs_list_players"),
            f("40000"),
            f("50"),
            f("1795003200000"),
            f("1795004100000"),
            f("3"),
        ];
        let m = parse_meta("structs:player:1:00000000", &fields).unwrap();
        assert_eq!(m.tool, "structs_list_players");
        assert_eq!((m.size_bytes, m.rows, m.hits), (40_000, 50, 3));
        assert_eq!((m.expires - m.created).num_seconds(), 900);
        // A hash missing a field is not metadata.
        assert!(parse_meta("h", &fields[..4]).is_none());
    }
}
