//! Results kept parsed, by handle: a result fetched page by page is read and parsed
//! once, not once a page. Both stores keep their results as JSON text (Redis, or the
//! memory store's bytes); this cache holds the lately used ones as values, the least
//! recently used dropped first past a byte budget (counted as the results' JSON).
//!
//! The data under a handle never changes (every handle is new), so an entry is never
//! stale; whether the handle is still live is the store's to say, from its metadata.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

/// The budget unless a store asks for less: 32 MB of results' JSON.
pub const DEFAULT_BUDGET: usize = 32 << 20;

/// Parsed results by handle, least recently used dropped first past a byte budget.
pub struct ParsedCache {
    entries: HashMap<String, (Arc<Value>, usize, u64)>,
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
        self.entries.get_mut(handle).map(|(data, _, used)| {
            *used = clock;
            Arc::clone(data)
        })
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
        self.entries
            .insert(handle.to_string(), (data, bytes, self.clock));
        self.bytes += bytes;
        while self.bytes > self.budget {
            let Some(oldest) = self
                .entries
                .iter()
                .min_by_key(|(_, (_, _, used))| *used)
                .map(|(h, _)| h.clone())
            else {
                break;
            };
            dropped.extend(self.remove(&oldest));
        }
        dropped
    }

    pub fn remove(&mut self, handle: &str) -> Option<Arc<Value>> {
        let (data, bytes, _) = self.entries.remove(handle)?;
        self.bytes -= bytes;
        Some(data)
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
