//! Resolution: fetching referenced entities with bounded parallelism, a timeout per
//! reference, exponential backoff on rate limits, and a cache shared by every call.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::task::JoinSet;
use tokio::time::Instant;
use tracing::Instrument as _;

use super::config::ReferenceConfig;
use crate::context::trace;
use crate::entity::EntityId;
use crate::error::{ErrorCode, ToolError};
use crate::source::World;

/// How one reference came out.
#[derive(Debug, Clone)]
pub enum Outcome {
    Resolved { data: Arc<Value>, cached: bool },
    Failed { code: ErrorCode, message: String },
}

/// Reference resolution for one core: the server-wide settings, the cache of resolved
/// entities, and the permits that cap fetches in flight across every call.
pub struct Resolver {
    config: ReferenceConfig,
    cache: ReferenceCache,
    permits: Arc<tokio::sync::Semaphore>,
}

impl Resolver {
    pub fn new(config: ReferenceConfig) -> Resolver {
        Resolver {
            permits: Arc::new(tokio::sync::Semaphore::new(config.max_parallel_queries)),
            config,
            cache: ReferenceCache::default(),
        }
    }

    /// The server-wide reference settings.
    pub fn config(&self) -> &ReferenceConfig {
        &self.config
    }

    /// Entities resolved as references, reused across calls.
    pub fn cache(&self) -> &ReferenceCache {
        &self.cache
    }
}

/// One state of the world, as far as the core can tell: the block height and the
/// number of game events published on the bus the core reads (every applied
/// transaction publishes at least one).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WorldVersion {
    height: u64,
    events: u64,
}

impl WorldVersion {
    pub fn of(world: &World) -> WorldVersion {
        WorldVersion {
            height: world.source.info().block_height,
            events: world.events.as_ref().map_or(0, |bus| bus.published()),
        }
    }
}

/// Resolved entities, reused for a while. The entries belong to one state of the world
/// (a block height and the number of game events seen): when either moves, they are
/// all dropped, since any of them may have changed. So a transaction applied within a
/// block is never answered with what was read before it.
#[derive(Default)]
pub struct ReferenceCache {
    state: Mutex<CacheState>,
}

#[derive(Default)]
struct CacheState {
    version: WorldVersion,
    entries: HashMap<EntityId, (Instant, Arc<Value>)>,
}

impl ReferenceCache {
    /// Drops every entry if the world has moved on from the version they were read at.
    pub fn observe(&self, version: WorldVersion) {
        let mut s = self.lock();
        if s.version != version {
            s.entries.clear();
            s.version = version;
        }
    }

    pub fn get(&self, id: EntityId, ttl: Duration) -> Option<Arc<Value>> {
        let mut s = self.lock();
        match s.entries.get(&id) {
            Some((at, v)) if at.elapsed() < ttl => Some(Arc::clone(v)),
            Some(_) => {
                s.entries.remove(&id);
                None
            }
            None => None,
        }
    }

    pub fn put(&self, id: EntityId, data: Arc<Value>, capacity: usize, ttl: Duration) {
        let mut s = self.lock();
        if s.entries.len() >= capacity {
            s.entries.retain(|_, (at, _)| at.elapsed() < ttl);
            if s.entries.len() >= capacity {
                // Still full of live entries: start over rather than grow without bound.
                s.entries.clear();
            }
        }
        s.entries.insert(id, (Instant::now(), data));
    }

    pub fn clear(&self) {
        self.lock().entries.clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, CacheState> {
        // A panic while holding the lock leaves plain data behind; keep using it.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Resolves `ids` (distinct) and returns their outcomes in the same order. Fetches take
/// a permit from the core's reference semaphore, so at most `max_parallel_queries` are
/// in flight across the server; cached entities cost no fetch.
pub async fn resolve_all(
    resolver: &Arc<Resolver>,
    world: &World,
    ids: &[EntityId],
) -> Vec<Outcome> {
    let config = resolver.config();
    let cache = resolver.cache();
    let ttl = config.cache_ttl();
    // What is read while the world moves may be older than the new state: not cached.
    let version = WorldVersion::of(world);
    let mut out: Vec<Option<Outcome>> = vec![None; ids.len()];
    let mut misses = Vec::new();
    for (i, &id) in ids.iter().enumerate() {
        match cache.get(id, ttl) {
            Some(data) => out[i] = Some(Outcome::Resolved { data, cached: true }),
            None => misses.push((i, id)),
        }
    }
    if !misses.is_empty() {
        let mut set = JoinSet::new();
        for (i, id) in misses {
            let world = world.clone();
            let resolver = Arc::clone(resolver);
            // Each fetch a span of the trace, under the call's (a task of its own
            // would otherwise start a trace of its own).
            let span = tracing::info_span!(
                target: trace::TARGET, "reference fetch",
                structs.entity.id = %id, structs.entity.kind = id.kind.name()
            );
            set.spawn(
                async move {
                    // The semaphore is never closed, so acquiring cannot fail.
                    let _permit = Arc::clone(&resolver.permits).acquire_owned().await.ok();
                    (i, id, fetch_one(&resolver.config, &world, id).await)
                }
                .instrument(span),
            );
        }
        while let Some(joined) = set.join_next().await {
            match joined {
                Ok((i, id, outcome)) => {
                    if let Outcome::Resolved { data, .. } = &outcome
                        && WorldVersion::of(world) == version
                    {
                        cache.put(id, Arc::clone(data), config.cache_capacity, ttl);
                    }
                    out[i] = Some(outcome);
                }
                // A fetch that panicked: its slot stays empty and is reported below.
                Err(e) => tracing::warn!("reference fetch failed unexpectedly: {e}"),
            }
        }
    }
    out.into_iter()
        .map(|o| {
            o.unwrap_or(Outcome::Failed {
                code: ErrorCode::ToolExecutionFailed,
                message: "the fetch failed unexpectedly".into(),
            })
        })
        .collect()
}

/// One reference: the source's answer within the timeout, retrying rate-limit refusals
/// after 1, 2, 4, ... times the base backoff.
async fn fetch_one(config: &ReferenceConfig, world: &World, id: EntityId) -> Outcome {
    let attempt = async {
        let mut retries = 0;
        loop {
            match world.source.get(id).await {
                Ok(Some(data)) => return Ok(data),
                Ok(None) => return Err(ToolError::not_found(id, None)),
                Err(e)
                    if e.code == ErrorCode::RateLimitExceeded
                        && retries < config.rate_limit_retries =>
                {
                    let wait = Duration::from_millis(config.backoff_ms) * 2u32.pow(retries);
                    tracing::debug!(%id, ?wait, "reference fetch rate limited; backing off");
                    tokio::time::sleep(wait).await;
                    retries += 1;
                }
                Err(e) => return Err(e),
            }
        }
    };
    match tokio::time::timeout(config.timeout(), attempt).await {
        Ok(Ok(data)) => Outcome::Resolved {
            data: Arc::new(data),
            cached: false,
        },
        Ok(Err(e)) => Outcome::Failed {
            code: e.code,
            message: e.message.clone(),
        },
        Err(_) => Outcome::Failed {
            code: ErrorCode::ToolTimeout,
            message: format!(
                "no answer for {id} within {} ms",
                config.reference_timeout_ms
            ),
        },
    }
}
