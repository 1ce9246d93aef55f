//! Results kept parsed, by handle: a result fetched page by page is read and parsed
//! once, not once a page. Both stores keep their results as JSON text (Redis, or the
//! memory store's bytes); this cache holds the lately used ones as values, the least
//! recently used dropped first past a byte budget (counted as the results' JSON).
//!
//! The data under a handle never changes (every handle is new), so an entry is never
//! stale; whether the handle is still live is the store's to say, from its metadata.
//!
//! An entry unused for [`IDLE`] is let go, and the memory it took given back to the
//! system ([`shared`]'s sweeper): a server that has gone quiet holds no parsed results.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The budget unless a store asks for less: 32 MB of results' JSON.
pub const DEFAULT_BUDGET: usize = 32 << 20;

/// How long an entry unused is kept.
pub const IDLE: Duration = Duration::from_secs(30);

/// How often the sweeper looks for entries gone idle.
const SWEEP_EVERY: Duration = Duration::from_secs(5);

/// Parsed results by handle, least recently used dropped first past a byte budget.
pub struct ParsedCache {
    /// Each result with its JSON size, its place in the order of use, and when it was
    /// last used.
    entries: HashMap<String, (Arc<Value>, usize, u64, Instant)>,
    bytes: usize,
    clock: u64,
    budget: usize,
}

impl Default for ParsedCache {
    fn default() -> Self {
        ParsedCache::with_budget(DEFAULT_BUDGET)
    }
}

impl ParsedCache {
    /// A cache holding at most `budget` bytes of results' JSON; a result over a quarter
    /// of it is not kept.
    pub fn with_budget(budget: usize) -> ParsedCache {
        ParsedCache {
            entries: HashMap::new(),
            bytes: 0,
            clock: 0,
            budget,
        }
    }

    pub fn get(&mut self, handle: &str) -> Option<Arc<Value>> {
        self.clock += 1;
        let clock = self.clock;
        self.entries.get_mut(handle).map(|(data, _, used, at)| {
            *used = clock;
            *at = Instant::now();
            Arc::clone(data)
        })
    }

    /// Lets go of the entries unused since `before`; returns them, for the caller to
    /// free outside its lock.
    #[must_use]
    pub fn sweep(&mut self, before: Instant) -> Vec<Arc<Value>> {
        let idle: Vec<String> = self
            .entries
            .iter()
            .filter(|(_, (_, _, _, at))| *at < before)
            .map(|(h, _)| h.clone())
            .collect();
        idle.iter().filter_map(|h| self.remove(h)).collect()
    }

    /// How many results it holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Keeps `data` (`bytes` of JSON); returns what was dropped to make room, for the
    /// caller to free outside its lock ([`free_later`]).
    #[must_use]
    pub fn put(&mut self, handle: &str, data: Arc<Value>, bytes: usize) -> Vec<Arc<Value>> {
        let mut dropped: Vec<Arc<Value>> = self.remove(handle).into_iter().collect();
        if bytes > self.budget / 4 {
            return dropped;
        }
        self.clock += 1;
        self.entries.insert(
            handle.to_string(),
            (data, bytes, self.clock, Instant::now()),
        );
        self.bytes += bytes;
        while self.bytes > self.budget {
            let Some(oldest) = self
                .entries
                .iter()
                .min_by_key(|(_, (_, _, used, _))| *used)
                .map(|(h, _)| h.clone())
            else {
                break;
            };
            dropped.extend(self.remove(&oldest));
        }
        dropped
    }

    pub fn remove(&mut self, handle: &str) -> Option<Arc<Value>> {
        let (data, bytes, _, _) = self.entries.remove(handle)?;
        self.bytes -= bytes;
        Some(data)
    }
}

/// The caches the sweeper looks after.
static SWEPT: Mutex<Vec<Weak<Mutex<ParsedCache>>>> = Mutex::new(Vec::new());

/// A cache of `budget` bytes whose idle entries the sweeper lets go ([`IDLE`]): one
/// thread for the process, started with the first cache, that after letting go of any
/// gives the freed memory back to the system.
pub fn shared(budget: usize) -> Arc<Mutex<ParsedCache>> {
    let cache = Arc::new(Mutex::new(ParsedCache::with_budget(budget)));
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        let started = std::thread::Builder::new()
            .name("parsed-sweeper".into())
            .spawn(sweeper);
        if let Err(e) = started {
            tracing::warn!(
                "the parsed results' sweeper did not start ({e}); idle results stay until pushed out"
            );
        }
    });
    let mut swept = SWEPT.lock().unwrap_or_else(|e| e.into_inner());
    swept.retain(|c| c.strong_count() > 0);
    swept.push(Arc::downgrade(&cache));
    cache
}

fn sweeper() {
    loop {
        std::thread::sleep(SWEEP_EVERY);
        let caches: Vec<Arc<Mutex<ParsedCache>>> = {
            let mut swept = SWEPT.lock().unwrap_or_else(|e| e.into_inner());
            swept.retain(|c| c.strong_count() > 0);
            swept.iter().filter_map(Weak::upgrade).collect()
        };
        let Some(before) = Instant::now().checked_sub(IDLE) else {
            continue;
        };
        let mut freed = 0;
        for cache in caches {
            let idle = cache
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .sweep(before);
            freed += idle.len();
            drop(idle);
        }
        if freed > 0 {
            give_back_memory();
        }
    }
}

/// Gives the memory the allocator keeps free back to the system, where it can: glibc
/// keeps what a large result's many small allocations freed, and the process would
/// hold it while idle.
pub fn give_back_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory to the system; it touches nothing
    // in use.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Frees results dropped from the cache off the caller's path: freeing a large result
/// is a long walk of small allocations, so it goes to a blocking thread when there is a
/// runtime.
pub fn free_later(dropped: Vec<Arc<Value>>) {
    if dropped.is_empty() {
        return;
    }
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => {
            runtime.spawn_blocking(move || drop(dropped));
        }
        Err(_) => drop(dropped),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_unused_for_a_while_are_let_go() {
        let mut cache = ParsedCache::default();
        assert!(cache.put("old", Arc::new(Value::from(1)), 10).is_empty());
        let between = Instant::now();
        std::thread::sleep(Duration::from_millis(5));
        assert!(cache.put("new", Arc::new(Value::from(2)), 10).is_empty());
        let gone = cache.sweep(between);
        assert_eq!(gone.len(), 1);
        assert_eq!(*gone[0], Value::from(1));
        assert!(cache.get("old").is_none());
        assert!(cache.get("new").is_some());
        assert_eq!(cache.bytes, 10);
        // Used again, an entry is kept anew.
        std::thread::sleep(Duration::from_millis(5));
        let later = Instant::now();
        assert!(cache.sweep(later).len() == 1);
        assert!(cache.is_empty());
    }

    #[test]
    fn the_parsed_cache_drops_the_least_recently_used_past_its_budget() {
        let quarter = DEFAULT_BUDGET / 4;
        let mut cache = ParsedCache::default();
        for h in ["a", "b", "c", "d"] {
            assert!(cache.put(h, Arc::new(Value::from(h)), quarter).is_empty());
        }
        assert!(cache.get("a").is_some(), "a is now the most recently used");
        let dropped = cache.put("e", Arc::new(Value::from("e")), quarter);
        assert_eq!(dropped.len(), 1);
        assert_eq!(*dropped[0], Value::from("b"));
        assert!(cache.get("b").is_none());
        assert_eq!(cache.bytes, DEFAULT_BUDGET);
        // Too large to keep: not cached, and nothing else is dropped for it.
        assert!(
            cache
                .put("huge", Arc::new(Value::Null), quarter + 1)
                .is_empty()
        );
        assert!(cache.get("huge").is_none());
        // Replacing an entry gives back the old one.
        assert_eq!(cache.put("a", Arc::new(Value::Null), 1).len(), 1);
        assert_eq!(cache.bytes, 3 * quarter + 1);
    }
}
