//! Caching hints (SEP-2549), from the client's side. A 2026-07-28 server says of a list
//! or a resource read how long its answer stays fresh (`ttlMs`) and for whom
//! (`cacheScope`). The client keeps such an answer that long and answers the same
//! request again from it, without asking the server; a notification that the lists
//! changed or a resource was updated drops what it kept, since the server said
//! otherwise since. A zero `ttlMs` (or none, as every 2025-11-25 answer) is never kept.
//!
//! The cache is one client's, so a `private` answer is kept as a `public` one is; the
//! scope is shown, not enforced.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::traffic::lock;

/// The requests whose answers may carry caching hints.
const CACHEABLE: [&str; 5] = [
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
];

/// The most answers kept; the one nearest its end goes first.
pub const CACHE_KEEP: usize = 256;

/// The longest an answer is kept, whatever the server says (a day).
const TTL_MAX: Duration = Duration::from_secs(24 * 3600);

struct Kept {
    answer: Value,
    until: Instant,
    scope: String,
    /// The connection's count of changes ([`super::traffic::Wire::changes`]) when the
    /// request was sent: a change since means the answer may be stale.
    changes: u64,
}

/// Answers kept by their request.
#[derive(Default)]
pub(super) struct Cache {
    kept: Mutex<HashMap<String, Kept>>,
}

/// A kept answer: the answer, how long it still holds, and its scope.
pub(super) struct Hit {
    pub answer: Value,
    pub left: Duration,
    pub scope: String,
}

/// The cache's key for a request, when its answer may be kept: the method and its
/// params without `_meta` (which says who asks, not what).
pub(super) fn key(method: &str, params: &Value) -> Option<String> {
    if !CACHEABLE.contains(&method) {
        return None;
    }
    // No params and empty ones ask the same.
    let mut params = match params {
        Value::Null => Value::Object(serde_json::Map::new()),
        p => p.clone(),
    };
    if let Some(p) = params.as_object_mut() {
        p.remove("_meta");
    }
    Some(format!("{method} {params}"))
}

/// The hints of an answer: how long it stays fresh, and for whom.
pub fn hints(answer: &Value) -> Option<(u64, &str)> {
    let ttl = answer["ttlMs"].as_u64()?;
    Some((ttl, answer["cacheScope"].as_str().unwrap_or("private")))
}

impl Cache {
    /// The answer kept for `key`, if it is still fresh and nothing changed since.
    pub fn get(&self, key: &str, changes: u64) -> Option<Hit> {
        let mut kept = lock(&self.kept);
        let now = Instant::now();
        match kept.get(key) {
            Some(k) if k.until > now && k.changes == changes => Some(Hit {
                answer: k.answer.clone(),
                left: k.until - now,
                scope: k.scope.clone(),
            }),
            Some(_) => {
                kept.remove(key);
                None
            }
            None => None,
        }
    }

    /// Keeps `answer` for as long as its hints say, if they say it may be kept.
    pub fn put(&self, key: String, answer: &Value, changes: u64) {
        let Some((ttl, scope)) = hints(answer).filter(|(ttl, _)| *ttl > 0) else {
            return;
        };
        let now = Instant::now();
        let mut kept = lock(&self.kept);
        kept.retain(|_, k| k.until > now);
        if kept.len() >= CACHE_KEEP
            && let Some(first) = kept
                .iter()
                .min_by_key(|(_, k)| k.until)
                .map(|(key, _)| key.clone())
        {
            kept.remove(&first);
        }
        kept.insert(
            key,
            Kept {
                answer: answer.clone(),
                until: now + Duration::from_millis(ttl).min(TTL_MAX),
                scope: scope.to_string(),
                changes,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_answer_is_kept_as_long_as_its_hints_say_and_no_change_came() {
        let cache = Cache::default();
        let k = key("tools/list", &json!({"_meta": {"a": 1}})).unwrap();
        assert_eq!(k, key("tools/list", &json!({})).unwrap());
        assert!(key("tools/call", &json!({})).is_none());
        cache.put(
            k.clone(),
            &json!({"tools": [], "ttlMs": 60_000, "cacheScope": "public"}),
            3,
        );
        let hit = cache.get(&k, 3).expect("fresh");
        assert_eq!(hit.scope, "public");
        assert!(hit.left <= Duration::from_secs(60) && hit.left > Duration::from_secs(50));
        // A list change since the request drops it.
        assert!(cache.get(&k, 4).is_none());
        assert!(cache.get(&k, 3).is_none());
    }

    #[test]
    fn an_answer_without_a_lifetime_is_never_kept() {
        let cache = Cache::default();
        let k = key("resources/read", &json!({"uri": "x"})).unwrap();
        cache.put(k.clone(), &json!({"contents": [], "ttlMs": 0}), 0);
        assert!(cache.get(&k, 0).is_none());
        cache.put(k.clone(), &json!({"contents": []}), 0);
        assert!(cache.get(&k, 0).is_none());
        cache.put(k.clone(), &json!({"contents": [], "ttlMs": 1}), 0);
        std::thread::sleep(Duration::from_millis(5));
        assert!(cache.get(&k, 0).is_none());
    }

    #[test]
    fn the_cache_keeps_a_bounded_number_of_answers() {
        let cache = Cache::default();
        for i in 0..CACHE_KEEP + 10 {
            let k = key("resources/read", &json!({"uri": i})).unwrap();
            cache.put(k, &json!({"ttlMs": 60_000 + i}), 0);
        }
        assert_eq!(lock(&cache.kept).len(), CACHE_KEEP);
    }
}
