//! Detection: which entity ids a payload mentions, where, and in which entity.
//!
//! The walk visits every string of the payload. A string is a candidate when it parses
//! as an entity id (`{code}-{index}`, code 0-11, index from 1). Fields that never hold
//! ids (versions, timestamps, block heights, amounts, ...) are skipped with everything
//! under them. An object's own `id` (or the `id` of its chain wrapper, as in
//! `{"Player": {"id": ...}}`) names the entity the object is: that id is *present* in the
//! payload, never a reference, and it is the `referenced_in` of the ids found inside.
//! Struct types are plain integers (`"type": "14"`), so they never parse as ids.

use std::collections::HashSet;

use serde_json::{Map, Value};

use crate::entity::{EntityId, EntityKind};

/// One mention of an entity id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub id: EntityId,
    /// The field that held it: `guildId`, or `space[2]` inside an array.
    pub from: String,
    /// The entity whose data mentioned it, when it sits inside one.
    pub referenced_in: Option<EntityId>,
    /// True when it sits in a plain field (a direct relationship), false inside an array
    /// (slot contents and other collections).
    pub primary: bool,
    /// True when it is something the mentioning entity holds: a struct in one of its
    /// slots (`space`, `air`, `land`, `water`) or its command ship (`commandStruct`).
    pub contents: bool,
}

/// Fields whose ids name what an entity holds rather than what it relates to: a
/// planet's or fleet's slot rows, a fleet's command ship.
const SLOT_ROWS: [&str; 4] = ["space", "air", "land", "water"];

/// Every mention in a payload, in the order the payload lists them.
#[derive(Debug, Default)]
pub struct Extraction {
    /// One entry per (id, referencing entity), first mention first.
    pub candidates: Vec<Candidate>,
    /// Ids of the entities the payload itself carries.
    pub present: HashSet<EntityId>,
    seen: HashSet<(EntityId, Option<EntityId>)>,
}

/// True when a field of this name never holds an entity id: versions, positions and
/// ranges, times, block heights, amounts and balances, nonces and hashes, indices and
/// slots, struct types, names and pagination. Names are compared lowercase without `_`
/// or `-`, so `created_at` and `createdAt` are the same field.
pub fn never_holds_ids(field: &str) -> bool {
    let mut buf = [0u8; 48];
    let mut n = 0;
    for b in field.bytes() {
        if b == b'_' || b == b'-' {
            continue;
        }
        if n == buf.len() {
            return false;
        }
        buf[n] = b.to_ascii_lowercase();
        n += 1;
    }
    let norm = &buf[..n];
    if matches!(
        norm,
        b"version"
            | b"schemaversion"
            | b"apiversion"
            | b"coordinates"
            | b"position"
            | b"range"
            | b"timestamp"
            | b"createdat"
            | b"updatedat"
            | b"deletedat"
            | b"date"
            | b"time"
            | b"duration"
            | b"height"
            | b"amount"
            | b"balance"
            | b"balances"
            | b"denom"
            | b"rate"
            | b"ratio"
            | b"commission"
            | b"defaultcommission"
            | b"nonce"
            | b"hash"
            | b"txhash"
            | b"signature"
            | b"memo"
            | b"index"
            | b"slot"
            | b"type"
            | b"structtype"
            | b"typeid"
            | b"username"
            | b"name"
            | b"pfpclientrenderattributes"
            | b"rawaddress"
            | b"pfp"
            | b"endpoint"
            | b"difficulty"
            | b"seed"
            | b"pagekey"
            | b"nextkey"
            | b"pagination"
            | b"total"
            | b"count"
            | b"connectioncount"
    ) {
        return true;
    }
    // A relationship field (`…Id`, `…_id`) is never excluded by the rules below.
    if norm.ends_with(b"id") {
        return false;
    }
    // Block numbers (`blockStartBuild`, `startBlock`, `blockHeight`), amounts, versions,
    // times and counters.
    norm.starts_with(b"block")
        || [
            &b"height"[..],
            b"block",
            b"amount",
            b"version",
            b"timestamp",
            b"duration",
            b"nonce",
        ]
        .iter()
        .any(|s| norm.ends_with(s))
}

/// A quick test before the full parse: starts and ends with a digit, and neither part
/// has a leading zero (the chain writes `1-5`, never `01-5` or `1-05`; such a string is
/// something else, and taking it for `1-5` would key the map by text it never had).
fn could_be_id(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 3 || b.len() > 41 || !b[0].is_ascii_digit() || !b[b.len() - 1].is_ascii_digit() {
        return false;
    }
    let Some(dash) = b.iter().position(|&c| c == b'-') else {
        return false;
    };
    let leading_zero = |part: &[u8]| part.len() > 1 && part[0] == b'0';
    !leading_zero(&b[..dash]) && !leading_zero(&b[dash + 1..])
}

/// The id an object stands for: its own `id`, or the `id` inside its chain wrapper key
/// (`{"Player": {"id": "1-1"}, "gridAttributes": ...}`).
pub fn own_id(obj: &Map<String, Value>) -> Option<EntityId> {
    if let Some(Value::String(s)) = obj.get("id") {
        return EntityId::parse(s).ok();
    }
    // Wrapper keys are capitalised; everything else in entity JSON is camelCase.
    obj.iter().find_map(|(k, v)| {
        if !k.starts_with(|c: char| c.is_ascii_uppercase()) {
            return None;
        }
        let kind = EntityKind::from_rest_key(k)?;
        let id = EntityId::parse(v.get("id")?.as_str()?).ok()?;
        (id.kind == kind).then_some(id)
    })
}

impl Extraction {
    /// Walks `payload`; mentions are added after those already found.
    pub fn walk(&mut self, payload: &Value) {
        let mut path = Vec::new();
        self.visit(payload, "", &mut path, None);
    }

    /// [`Extraction::walk`] for a payload already known to be an object.
    pub fn walk_object(&mut self, payload: &Map<String, Value>) {
        self.visit_object(payload, None);
    }

    /// Walks `payload` as the data of entity `of` (a resolved reference): its own id is
    /// present, and what it mentions is referenced in it.
    pub fn walk_entity(&mut self, of: EntityId, payload: &Value) {
        self.present.insert(of);
        let mut path = Vec::new();
        self.visit(payload, "", &mut path, Some(of));
    }

    fn visit(&mut self, v: &Value, key: &str, path: &mut Vec<usize>, within: Option<EntityId>) {
        match v {
            Value::String(s) => {
                if could_be_id(s)
                    && let Ok(id) = EntityId::parse(s)
                {
                    self.mention(id, key, path, within);
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    path.push(i);
                    self.visit(item, key, path, within);
                    path.pop();
                }
            }
            Value::Object(obj) => self.visit_object(obj, within),
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }

    fn visit_object(&mut self, obj: &Map<String, Value>, within: Option<EntityId>) {
        let own = own_id(obj);
        if let Some(id) = own {
            self.present.insert(id);
        }
        let within = own.or(within);
        // An object starts a new field path: indices above it no longer apply.
        let mut path = Vec::new();
        for (k, child) in obj {
            if (k == "id" && own.is_some()) || never_holds_ids(k) {
                continue;
            }
            self.visit(child, k, &mut path, within);
        }
    }

    fn mention(&mut self, id: EntityId, key: &str, path: &[usize], within: Option<EntityId>) {
        if within == Some(id) || !self.seen.insert((id, within)) {
            return;
        }
        let mut from = String::with_capacity(key.len() + 4 * path.len());
        from.push_str(key);
        for i in path {
            from.push('[');
            from.push_str(&i.to_string());
            from.push(']');
        }
        self.candidates.push(Candidate {
            id,
            from,
            referenced_in: within,
            primary: path.is_empty(),
            contents: key == "commandStruct" || (!path.is_empty() && SLOT_ROWS.contains(&key)),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ids(x: &Extraction) -> Vec<String> {
        x.candidates.iter().map(|c| c.id.to_string()).collect()
    }

    fn extract(v: &Value) -> Extraction {
        let mut x = Extraction::default();
        x.walk(v);
        x
    }

    fn id(s: &str) -> EntityId {
        EntityId::parse(s).unwrap()
    }

    #[test]
    fn finds_ids_in_nested_objects_and_arrays_with_their_field_and_entity() {
        let v = json!({
            "planet": {
                "Planet": {
                    "id": "2-1", "owner": "1-11",
                    "space": ["5-1", "", "5-7"],
                    "nested": {"deeper": {"targetId": "9-3"}}
                },
                "gridAttributes": {"ore": "12"}
            }
        });
        let x = extract(&v);
        assert_eq!(ids(&x), ["1-11", "5-1", "5-7", "9-3"]);
        let c = &x.candidates;
        assert_eq!(c[0].from, "owner");
        assert_eq!(c[0].referenced_in, Some(id("2-1")));
        assert!(c[0].primary);
        assert_eq!(c[1].from, "space[0]");
        assert_eq!(c[2].from, "space[2]");
        assert!(!c[2].primary, "slot contents are not primary");
        assert!(
            c[2].contents && !c[0].contents,
            "slots hold contents; an owner is not"
        );
        assert_eq!(c[3].from, "targetId");
        assert_eq!(c[3].referenced_in, Some(id("2-1")));
        assert!(x.present.contains(&id("2-1")));
    }

    #[test]
    fn no_self_references() {
        let v = json!({"Player": {"id": "1-11", "creator": "1-11", "planetId": "2-1"}});
        let x = extract(&v);
        assert_eq!(ids(&x), ["2-1"]);
        // A top-level id (structs_query_entity's shape) is the payload's own entity too.
        let v = json!({"id": "2-1", "type": "planet", "entity": {"Planet": {"id": "2-1", "owner": "1-1"}}});
        let x = extract(&v);
        assert_eq!(ids(&x), ["1-1"]);
    }

    #[test]
    fn empty_strings_nulls_numbers_and_non_ids_are_ignored() {
        let v = json!({
            "a": "", "b": null, "c": 12, "d": "1-", "e": "-1", "f": "1-1-1", "g": "12-1",
            "h": "99-4", "i": "1-0", "j": "01-x", "k": "1 - 2", "l": true, "m": [null, "", 3],
            "n": "1-99999999999999999999999", "o": "０-1", "p": "01-1", "q": "1-01"
        });
        let x = extract(&v);
        assert!(x.candidates.is_empty(), "{:?}", ids(&x));
        // Code 11 is the last kind; 12 is out of range.
        assert_eq!(ids(&extract(&json!({"agreementId": "11-2"}))), ["11-2"]);
    }

    #[test]
    fn fields_that_never_hold_ids_are_skipped_with_their_contents() {
        let v = json!({
            "version": "1-2", "schema_version": "1-0", "api_version": "2-1",
            "coordinates": ["3-4", {"x": "1-1"}], "position": "2-3", "range": "1-5",
            "timestamp": "2-2", "created_at": "1-3", "updated_at": "1-4",
            "blockStartBuild": "5-5", "startBlock": "1-7", "endBlock": "1-8",
            "height": "1-9", "block_height": "2-9",
            "rate": {"denom": "ualpha", "amount": "1-1"}, "amount": "3-3",
            "slot": "1-2", "nonce": "7-7", "index": "2-2",
            "ownerId": "1-6"
        });
        assert_eq!(ids(&extract(&v)), ["1-6"]);
        assert!(never_holds_ids("blockStartOreMine"));
        assert!(never_holds_ids("connectionCount"));
        assert!(!never_holds_ids("account"));
        assert!(!never_holds_ids("owner"));
        assert!(!never_holds_ids("destinationId"));
        assert!(!never_holds_ids("commandStruct"));
        assert!(!never_holds_ids(
            "a_very_long_field_name_that_is_longer_than_the_buffer_of_48"
        ));
    }

    #[test]
    fn struct_type_numbers_are_never_ids() {
        let v = json!({"Struct": {"id": "5-3", "type": "14", "owner": "1-2", "locationId": "2-2"},
                       "structType": 14, "struct_type": {"id": 14, "type": "Command Ship"}});
        assert_eq!(ids(&extract(&v)), ["1-2", "2-2"]);
    }

    #[test]
    fn list_items_are_present_and_each_is_its_own_referencing_entity() {
        let v = json!({"planets": [
            {"Planet": {"id": "2-1", "owner": "1-1"}},
            {"Planet": {"id": "2-2", "owner": "1-1", "neighbour": "2-1"}},
        ]});
        let x = extract(&v);
        let seen: Vec<(String, String)> = x
            .candidates
            .iter()
            .map(|c| (c.id.to_string(), c.referenced_in.unwrap().to_string()))
            .collect();
        assert_eq!(
            seen,
            [
                ("1-1".into(), "2-1".into()),
                ("1-1".into(), "2-2".into()),
                ("2-1".into(), "2-2".into())
            ]
        );
        assert!(x.present.contains(&id("2-1")) && x.present.contains(&id("2-2")));
    }

    #[test]
    fn flat_entities_such_as_reactors_name_themselves() {
        let v = json!({"id": "3-4", "validator": "structsvaloper1abc", "guildId": "0-3"});
        let x = extract(&v);
        assert_eq!(ids(&x), ["0-3"]);
        assert_eq!(x.candidates[0].referenced_in, Some(id("3-4")));
    }

    #[test]
    fn payload_without_an_entity_has_no_referencing_entity() {
        let x = extract(&json!({"struct_id": "5-9", "result": ["1-1"]}));
        assert_eq!(ids(&x), ["5-9", "1-1"]);
        assert_eq!(x.candidates[0].referenced_in, None);
        assert_eq!(x.candidates[1].from, "result[0]");
    }
}
