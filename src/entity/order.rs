//! The order the chain keeps entities in: by the bytes of their ids, so `1-1`,
//! `1-10`, `1-100`, `1-11`, … `1-2`. Lists come in this order from a node, from
//! `serve-rest` and from the embedded world alike, so an agent sees one order
//! wherever it runs.

use super::EntityKind;

/// The index after `index` when the indices `1..=count` are written out as text and
/// sorted as the chain sorts ids (`1, 10, 100, 11, ..., 2`), or `None` after the last.
/// Constant time amortised: a walk over the decimal tree.
pub fn lex_next(index: u64, count: u64) -> Option<u64> {
    if index.checked_mul(10).is_some_and(|c| c <= count) {
        return Some(index * 10);
    }
    let mut x = index;
    while x % 10 == 9 || x + 1 > count {
        x /= 10;
        if x == 0 {
            return None;
        }
    }
    Some(x + 1)
}

/// The first index whose id sorts at or after `id` in `kind`'s list (ids of another
/// kind sort before or after the whole list).
pub fn lex_seek(kind: EntityKind, id: &str, count: u64) -> Option<u64> {
    if count == 0 {
        return None;
    }
    let prefix = format!("{}-", kind.code());
    let Some(rest) = id.strip_prefix(&prefix) else {
        return (id < prefix.as_str()).then_some(1);
    };
    // Walk the order from the start, skipping whole subtrees that sort before `rest`.
    let mut x = 1u64;
    loop {
        let text = x.to_string();
        if text.as_str() >= rest {
            return Some(x);
        }
        // `rest` starts with this number's text: its place is inside this subtree.
        if rest.starts_with(text.as_str()) {
            match lex_next(x, count) {
                Some(n) => x = n,
                None => return None,
            }
            continue;
        }
        // Otherwise skip every number under this one.
        let mut y = x;
        loop {
            if y % 10 != 9 && y < count {
                x = y + 1;
                break;
            }
            y /= 10;
            if y == 0 {
                return None;
            }
        }
    }
}
