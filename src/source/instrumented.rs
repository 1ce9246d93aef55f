//! A source that wraps another to add latency and faults and to count fetches: what
//! the reference tests and benchmarks measure against (a chain node 20 ms away, an
//! entity whose fetch fails, one that hangs, one that is rate limited).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::Value;

use super::{BoxFuture, ClockAction, GameSource, ListQuery, Page, SourceInfo};
use crate::entity::EntityId;
use crate::error::{ErrorCode, ToolError};

/// Wraps a source; every knob is off until set.
pub struct InstrumentedSource {
    inner: Arc<dyn GameSource>,
    delay: Duration,
    failing: HashSet<EntityId>,
    hanging: HashSet<EntityId>,
    slow: HashMap<EntityId, Duration>,
    /// Ids refused with `RATE_LIMIT_EXCEEDED` this many more times before answering.
    rate_limited: Mutex<HashMap<EntityId, u32>>,
    gets: AtomicU64,
    in_flight: AtomicU64,
    peak_in_flight: AtomicU64,
}

/// Decrements the in-flight count when a fetch ends, however it ends.
struct InFlight<'a>(&'a AtomicU64);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl InstrumentedSource {
    pub fn new(inner: Arc<dyn GameSource>) -> InstrumentedSource {
        InstrumentedSource {
            inner,
            delay: Duration::ZERO,
            failing: HashSet::new(),
            hanging: HashSet::new(),
            slow: HashMap::new(),
            rate_limited: Mutex::new(HashMap::new()),
            gets: AtomicU64::new(0),
            in_flight: AtomicU64::new(0),
            peak_in_flight: AtomicU64::new(0),
        }
    }

    /// Adds `delay` to every get and list (a round trip to a remote node).
    pub fn with_delay(mut self, delay: Duration) -> InstrumentedSource {
        self.delay = delay;
        self
    }

    /// Fetching `id` fails with `API_ERROR`.
    pub fn failing(mut self, id: EntityId) -> InstrumentedSource {
        self.failing.insert(id);
        self
    }

    /// Fetching `id` never answers.
    pub fn hanging(mut self, id: EntityId) -> InstrumentedSource {
        self.hanging.insert(id);
        self
    }

    /// Fetching `id` takes `extra` longer than the others.
    pub fn slow(mut self, id: EntityId, extra: Duration) -> InstrumentedSource {
        self.slow.insert(id, extra);
        self
    }

    /// Fetching `id` is refused with `RATE_LIMIT_EXCEEDED` `times` times, then answers.
    pub fn rate_limited(self, id: EntityId, times: u32) -> InstrumentedSource {
        self.rate_limited
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, times);
        self
    }

    /// Gets served so far (including failed ones).
    pub fn gets(&self) -> u64 {
        self.gets.load(Ordering::SeqCst)
    }

    /// The most gets that were ever in flight at once.
    pub fn peak_in_flight(&self) -> u64 {
        self.peak_in_flight.load(Ordering::SeqCst)
    }

    pub fn reset_counts(&self) {
        self.gets.store(0, Ordering::SeqCst);
        self.peak_in_flight.store(0, Ordering::SeqCst);
    }

    fn take_rate_limit(&self, id: EntityId) -> bool {
        let mut left = self.rate_limited.lock().unwrap_or_else(|e| e.into_inner());
        match left.get_mut(&id) {
            Some(n) if *n > 0 => {
                *n -= 1;
                true
            }
            _ => false,
        }
    }
}

impl GameSource for InstrumentedSource {
    fn info(&self) -> SourceInfo {
        self.inner.info()
    }

    fn get(&self, id: EntityId) -> BoxFuture<'_, Result<Option<Value>, ToolError>> {
        Box::pin(async move {
            self.gets.fetch_add(1, Ordering::SeqCst);
            let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            self.peak_in_flight.fetch_max(now, Ordering::SeqCst);
            let _guard = InFlight(&self.in_flight);
            if !self.delay.is_zero() {
                tokio::time::sleep(self.delay).await;
            }
            if let Some(extra) = self.slow.get(&id) {
                tokio::time::sleep(*extra).await;
            }
            if self.hanging.contains(&id) {
                std::future::pending::<()>().await;
            }
            if self.failing.contains(&id) {
                return Err(ToolError::new(
                    ErrorCode::ApiError,
                    format!("the source failed to answer for {id}"),
                ));
            }
            if self.take_rate_limit(id) {
                return Err(ToolError::new(
                    ErrorCode::RateLimitExceeded,
                    "too many requests",
                ));
            }
            self.inner.get(id).await
        })
    }

    fn list(&self, query: ListQuery) -> BoxFuture<'_, Result<Page, ToolError>> {
        Box::pin(async move {
            if !self.delay.is_zero() {
                tokio::time::sleep(self.delay).await;
            }
            self.inner.list(query).await
        })
    }

    fn control_clock(&self, action: ClockAction) -> Result<SourceInfo, ToolError> {
        self.inner.control_clock(action)
    }
}
