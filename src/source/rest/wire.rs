//! The wire rules of the chain's REST API, shared by the client ([`super::RestSource`])
//! and the server (`crate::rest::server`): list order, page keys and the error bodies
//! a node sends.
//!
//! The chain keeps each kind in a store keyed by the id's text, so a list comes back in
//! the byte order of the ids (`1-1, 1-10, 1-100, 1-11, ..., 1-2`) and a page key is the
//! next record's store key in standard base64 (`MS0xMQ==` for `1-11`). A page starts at
//! its key, inclusive.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use crate::entity::{EntityId, EntityKind};

/// The chain's message for a missing object (`x/structs/types/errors.go`, code 1050).
pub const NOT_FOUND_MESSAGE: &str = "codespace structs code 1050: object not found";

/// The header a node's gateway puts the block height of an answer in.
pub const HEIGHT_HEADER: &str = "grpc-metadata-x-cosmos-block-height";

/// The page size a node uses when a request gives none.
pub const DEFAULT_LIMIT: usize = 100;

/// The gRPC-status body the REST gateway sends with an error.
pub fn error_body(grpc_code: u32, message: &str) -> Value {
    json!({"code": grpc_code, "message": message, "details": []})
}

pub use crate::entity::order::{lex_next, lex_seek};

/// The page key (store key, base64) of an entity id.
pub fn key_of(id: &str) -> String {
    STANDARD.encode(id.as_bytes())
}

/// The id a page key stands for, when it is one.
pub fn id_of_key(key: &str) -> Option<String> {
    let bytes = STANDARD.decode(key.trim()).ok()?;
    String::from_utf8(bytes).ok()
}

/// The path segment of a kind's routes (`/structs/{segment}/{id}`).
pub fn segment(kind: EntityKind) -> &'static str {
    kind.name()
}

/// The key a list response puts its items under: the wrapper key, except addresses
/// (`address`).
pub fn list_key(kind: EntityKind) -> &'static str {
    kind.rest_key().unwrap_or("address")
}

/// True when `text` is an id of `kind`.
pub fn id_of_kind(text: &str, kind: EntityKind) -> Option<EntityId> {
    EntityId::parse(text).ok().filter(|id| id.kind == kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(count: u64) -> Vec<u64> {
        let mut out = Vec::new();
        let mut x = if count == 0 { None } else { Some(1) };
        while let Some(i) = x {
            out.push(i);
            x = lex_next(i, count);
        }
        out
    }

    #[test]
    fn lex_order_matches_sorting_the_ids_as_text() {
        for count in [0, 1, 9, 10, 11, 57, 100, 101, 1234] {
            let mut text: Vec<String> = (1..=count).map(|i| format!("1-{i}")).collect();
            text.sort();
            let walked: Vec<String> = order(count).iter().map(|i| format!("1-{i}")).collect();
            assert_eq!(walked, text, "count {count}");
        }
    }

    #[test]
    fn seek_finds_the_first_id_at_or_after() {
        let count = 123;
        let mut ids: Vec<String> = (1..=count).map(|i| format!("1-{i}")).collect();
        ids.sort();
        for probe in [
            "1-1", "1-10", "1-100", "1-105", "1-11", "1-2", "1-99", "1-0", "1-124", "1-5x", "1-",
            "0-9", "2-1",
        ] {
            let expected = ids.iter().position(|i| i.as_str() >= probe);
            let got = lex_seek(EntityKind::Player, probe, count)
                .map(|i| ids.iter().position(|t| *t == format!("1-{i}")).unwrap());
            assert_eq!(got, expected, "{probe}");
        }
    }

    #[test]
    fn keys_are_base64_of_the_id() {
        assert_eq!(key_of("1-11"), "MS0xMQ==");
        assert_eq!(id_of_key("MS0xMQ==").as_deref(), Some("1-11"));
        assert_eq!(id_of_key("!!"), None);
    }
}
