//! A structural JSON diff: the paths (JSON Pointers) where two values differ, each
//! added, removed or changed, with the values on both sides.
//!
//! Some fields differ on every run without saying anything about the game (timestamps,
//! durations, hash rates, the random part of result handles). [`Ignore`] leaves those
//! out: keys by name anywhere in the values, and strings that are result handles.

use std::collections::BTreeSet;

use serde_json::Value;

/// What happened at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// Only in the second value.
    Added,
    /// Only in the first value.
    Removed,
    /// In both, different.
    Changed,
}

impl ChangeKind {
    /// `+`, `-` or `~`.
    pub fn mark(self) -> char {
        match self {
            ChangeKind::Added => '+',
            ChangeKind::Removed => '-',
            ChangeKind::Changed => '~',
        }
    }
}

/// One difference.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// A JSON Pointer (`/entity/Player/guildId`, `""` for the whole value).
    pub path: String,
    pub kind: ChangeKind,
    pub before: Option<Value>,
    pub after: Option<Value>,
}

/// Keys left out of the comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ignore {
    keys: BTreeSet<String>,
}

/// Keys whose values change from run to run on their own.
pub const VOLATILE_KEYS: &[&str] = &[
    "timestamp",
    "created",
    "created_at",
    "updated_at",
    "expires",
    "expires_at",
    "started_at",
    "ended_at",
    "duration_ms",
    "elapsed_ms",
    "started_ms",
    "computation_time_ms",
    "critical_path_ms",
    "hashrate",
    "hashes_per_second",
    "age",
    "age_sec",
    "hits",
    // A handle's time left, in seconds, as the handle list shows it.
    "expires_in_sec",
    // How many plan steps happened to run at once: the machine's scheduling.
    "peak_parallel",
    // How long a docs build took.
    "build_ms",
    // Whether a hash rate was measured or given: a replay gives the recorded one.
    "hashrate_source",
    // How a proof-of-work search ran on this machine: the hashing kernel it measured
    // fastest, its threads, and how many nonces they tried before one was found. The
    // proof itself (nonce, hash, input, validity) is compared.
    "kernel",
    "threads",
    "iterations",
    // How many references came from the cache rather than the source: it depends on
    // what earlier calls (and how long ago) read, never on the world.
    "from_cache",
    // Derived from the volatile fields above: the bytes of a stored result (its
    // timestamps, durations and cache counts included), and the pages that size cuts
    // it into. The rows it holds (`total`, `rows`) are compared.
    "size_bytes",
    "total_pages",
    // A proof-of-work plan's time to a proof, from the hash rate measured on this
    // machine.
    "expected_seconds",
    "expected_seconds_to_proof",
];

impl Default for Ignore {
    fn default() -> Ignore {
        Ignore {
            keys: VOLATILE_KEYS.iter().map(|k| k.to_string()).collect(),
        }
    }
}

impl Ignore {
    /// No key ignored.
    pub fn nothing() -> Ignore {
        Ignore {
            keys: BTreeSet::new(),
        }
    }

    /// Also ignores `key`.
    pub fn with(mut self, key: &str) -> Ignore {
        self.keys.insert(key.to_string());
        self
    }

    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.keys.iter().map(String::as_str)
    }
}

/// True when two texts that tell of a hash rate (`… at 108.45 MH/s the rest takes
/// 3 minutes …`) differ only in their numbers: the rate, and what follows from it,
/// are the machine's, not the game's (a proof-of-work search that ran out of
/// iterations says them in its message).
fn same_but_the_machine(x: &str, y: &str) -> bool {
    fn numbers_out(s: &str) -> String {
        let mut out = String::with_capacity(s.len());
        let mut in_number = false;
        for c in s.chars() {
            if c.is_ascii_digit() || (in_number && c == '.') {
                if !in_number {
                    out.push('#');
                }
                in_number = true;
            } else {
                in_number = false;
                out.push(c);
            }
        }
        out
    }
    /// `about 3 min`, `under a second`, `about 2 days`: one shape for every duration
    /// `text::duration_words` writes.
    fn durations_out(s: &str) -> String {
        let s = numbers_out(s)
            .replace("under a second", "about # ~")
            .replace("more than #^# years", "about # ~")
            .replace("forever", "about # ~");
        s.split(' ')
            .map(|w| {
                let bare = w.trim_end_matches([',', ';', '.', ')']);
                match bare {
                    "s" | "min" | "h" | "day" | "days" | "year" | "years" => {
                        format!("~{}", &w[bare.len()..])
                    }
                    _ => w.to_string(),
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
    x.contains("MH/s") && y.contains("MH/s") && durations_out(x) == durations_out(y)
}

/// True for a result handle (`structs:{entity}:{unix}:{random}`), whose last part is
/// random, or a URI naming one. The random part is 32 hex digits, or 8 in logs written
/// before handles carried 128 bits.
fn is_handle(s: &str) -> bool {
    let s = s.strip_prefix("structs://handles/").unwrap_or(s);
    let mut parts = s.split(':');
    parts.next() == Some("structs")
        && parts.next().is_some()
        && parts.next().is_some_and(|t| t.parse::<i64>().is_ok())
        && parts
            .next()
            .is_some_and(|h| matches!(h.len(), 8 | 32) && h.bytes().all(|b| b.is_ascii_hexdigit()))
        && parts.next().is_none()
}

/// The differences between `before` and `after`, in document order, at most `limit`
/// of them (the count of all is returned beside).
pub fn diff(before: &Value, after: &Value, ignore: &Ignore, limit: usize) -> (Vec<Change>, usize) {
    let mut out = Vec::new();
    let mut count = 0;
    walk(
        before,
        after,
        &mut String::new(),
        ignore,
        limit,
        &mut out,
        &mut count,
    );
    (out, count)
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn push(
    out: &mut Vec<Change>,
    count: &mut usize,
    limit: usize,
    path: &str,
    kind: ChangeKind,
    before: Option<&Value>,
    after: Option<&Value>,
) {
    *count += 1;
    if out.len() < limit {
        out.push(Change {
            path: path.to_string(),
            kind,
            before: before.cloned(),
            after: after.cloned(),
        });
    }
}

fn walk(
    a: &Value,
    b: &Value,
    path: &mut String,
    ignore: &Ignore,
    limit: usize,
    out: &mut Vec<Change>,
    count: &mut usize,
) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, va) in x {
                if ignore.keys.contains(k) {
                    continue;
                }
                let len = path.len();
                path.push('/');
                path.push_str(&escape(k));
                match y.get(k) {
                    Some(vb) => walk(va, vb, path, ignore, limit, out, count),
                    None => push(out, count, limit, path, ChangeKind::Removed, Some(va), None),
                }
                path.truncate(len);
            }
            for (k, vb) in y {
                if ignore.keys.contains(k) || x.contains_key(k) {
                    continue;
                }
                let len = path.len();
                path.push('/');
                path.push_str(&escape(k));
                push(out, count, limit, path, ChangeKind::Added, None, Some(vb));
                path.truncate(len);
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            for i in 0..x.len().max(y.len()) {
                let len = path.len();
                path.push('/');
                path.push_str(&i.to_string());
                match (x.get(i), y.get(i)) {
                    (Some(va), Some(vb)) => walk(va, vb, path, ignore, limit, out, count),
                    (Some(va), None) => {
                        push(out, count, limit, path, ChangeKind::Removed, Some(va), None)
                    }
                    (None, Some(vb)) => {
                        push(out, count, limit, path, ChangeKind::Added, None, Some(vb))
                    }
                    (None, None) => {}
                }
                path.truncate(len);
            }
        }
        (Value::String(x), Value::String(y))
            if x == y || (is_handle(x) && is_handle(y)) || same_but_the_machine(x, y) => {}
        (x, y) if x == y => {}
        (x, y) => push(
            out,
            count,
            limit,
            path,
            ChangeKind::Changed,
            Some(x),
            Some(y),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_messages_hash_rate_and_what_follows_from_it_are_the_machines() {
        let here = "no proof in 10000 iterations: the best hash has 5 leading zeros, 64 are \
                    required; at 108.45 MH/s the rest of the search takes about 3 min, or start \
                    at block 130000 for a proof in about 52 s";
        let there = "no proof in 10000 iterations: the best hash has 5 leading zeros, 64 are \
                     required; at 2.10 MH/s the rest of the search takes about 2 days, or start \
                     at block 151234 for a proof in under a second";
        let (changes, total) = diff(
            &json!({"message": here}),
            &json!({"message": there}),
            &Ignore::default(),
            10,
        );
        assert_eq!(total, 0, "{changes:?}");
        // The game's part still counts: a message without a rate, or other words.
        let (_, total) = diff(
            &json!({"m": "best 5 of 64"}),
            &json!({"m": "best 6 of 64"}),
            &Ignore::default(),
            10,
        );
        assert_eq!(total, 1);
        let other = there.replace("leading zeros", "zeros");
        let (_, total) = diff(
            &json!({"message": here}),
            &json!({"message": other}),
            &Ignore::default(),
            10,
        );
        assert_eq!(total, 1);
        // A plan's time to a proof is the machine's too.
        let (_, total) = diff(
            &json!({"expected_seconds": 5.0}),
            &json!({"expected_seconds": 9.0}),
            &Ignore::default(),
            10,
        );
        assert_eq!(total, 0);
    }
    use serde_json::json;

    #[test]
    fn paths_name_what_was_added_removed_and_changed() {
        let a = json!({"entity": {"Player": {"guildId": "0-1", "planetId": "2-1", "a/b": 1}},
                       "list": [1, 2, 3], "timestamp": "t1"});
        let b = json!({"entity": {"Player": {"guildId": "0-2", "fleetId": "9-1", "a/b": 1}},
                       "list": [1, 5], "timestamp": "t2"});
        let (changes, count) = diff(&a, &b, &Ignore::default(), 100);
        let seen: Vec<(char, &str)> = changes
            .iter()
            .map(|c| (c.kind.mark(), c.path.as_str()))
            .collect();
        assert_eq!(
            seen,
            [
                ('~', "/entity/Player/guildId"),
                ('-', "/entity/Player/planetId"),
                ('+', "/entity/Player/fleetId"),
                ('~', "/list/1"),
                ('-', "/list/2"),
            ]
        );
        assert_eq!(count, 5);
        assert_eq!(changes[0].before, Some(json!("0-1")));
        assert_eq!(changes[0].after, Some(json!("0-2")));
        // Without the default ignores, the timestamp counts too; the limit keeps the count.
        let (changes, count) = diff(&a, &b, &Ignore::nothing(), 2);
        assert_eq!((changes.len(), count), (2, 6));
        assert!(diff(&a, &a, &Ignore::nothing(), 10).0.is_empty());
    }

    #[test]
    fn sizes_derived_from_volatile_fields_are_not_differences() {
        // The same stored list, once measured with a warm reference cache and once with
        // a cold one: `from_cache` has another digit, so the stored bytes and the pages
        // they make differ by that much, and nothing else does.
        let envelope = |size: u64, pages: u64, cached: u64, rows: u64| {
            json!({"status": "partial", "summary": {"references_summary": {"from_cache": cached}},
                   "page_info": {"has_more": true, "total": rows, "current_page": 1, "total_pages": pages},
                   "metadata": {"size_bytes": size, "row_count": 5}})
        };
        let warm = envelope(56_773, 4, 12, 100);
        let cold = envelope(56_772, 3, 0, 100);
        assert!(diff(&warm, &cold, &Ignore::default(), 10).0.is_empty());
        // The rows the result holds still count.
        let (changes, _) = diff(&warm, &envelope(56_772, 3, 0, 99), &Ignore::default(), 10);
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].path, "/page_info/total");
    }

    #[test]
    fn handles_and_ignored_keys_are_not_differences() {
        let a = json!({"handle": "structs:players:1763700000:0a1b2c3d",
                       "uri": "structs://handles/structs:players:1763700000:0a1b2c3d", "n": 1});
        let b = json!({"handle": "structs:players:1763700100:ffee0011",
                       "uri": "structs://handles/structs:players:1763700100:ffee0011", "n": 1});
        assert!(diff(&a, &b, &Ignore::default(), 10).0.is_empty());
        // A handle of today (128 random bits) against one of an older log.
        let b = json!({"handle": "structs:players:1763700100:3f9a1c07d2e84b5f9a60c1e7b3d8f421",
                       "uri": "structs://handles/structs:players:1763700100:3f9a1c07d2e84b5f9a60c1e7b3d8f421", "n": 1});
        assert!(diff(&a, &b, &Ignore::default(), 10).0.is_empty());
        assert!(!is_handle("structs:players:1763700100:3f9a1c07d2e84b5f"));
        let b2 = json!({"handle": "not a handle", "uri": b["uri"], "n": 2});
        let (c, _) = diff(&a, &b2, &Ignore::default().with("n"), 10);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].path, "/handle");
        // A different type at the same path is one change.
        let (c, _) = diff(
            &json!({"x": [1]}),
            &json!({"x": {"0": 1}}),
            &Ignore::nothing(),
            10,
        );
        assert_eq!((c.len(), c[0].path.as_str()), (1, "/x"));
    }
}
