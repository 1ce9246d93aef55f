//! The report of `fields` paths that matched nothing: by kind, what each kind's
//! records were shown as and the fields the kind has, so a name that fits nothing is
//! said rather than dropped.

use serde_json::{Map, Value};

use super::shape::{Selection, answers, holds_an_empty_list, leaves, record_id, unqualified};
use crate::entity::EntityKind;
use crate::references::ENTRY_FIELDS;

/// The most field names a report lists for one kind.
const REPORTED_FIELDS: usize = 80;

/// What one kind of record in an answer offered a field selection.
struct KindFields {
    kind: EntityKind,
    /// Some record of this kind is outside `references` (the answer's own records).
    primary: bool,
    /// Its field names, in the order first seen.
    names: Vec<String>,
    seen: std::collections::HashSet<String>,
    /// Per selected path: some record of this kind has a field it answers.
    matched: Vec<bool>,
}

/// Which selected `paths` matched nothing, kind by kind, and what each of those kinds
/// offers instead: `{"player": {"unmatched": ["owner"], "shown": "summary", "fields":
/// ["id", "index", ...]}}`. A path is reported for a kind when it applies to that kind
/// (unqualified, or qualified by it) and no record of that kind has it, and either no
/// record of any kind has it, the path names that kind, or nothing selected fits the
/// kind at all (its records are then shown at `otherwise`). Kinds only met as
/// references are reported for paths that name them. `shown` says what the kind's
/// records got: `fields`, or the verbosity they fell back to. An answer with no
/// records at all is reported as `result`, with its top-level fields. `None` when
/// every path matched.
pub fn unmatched_fields(value: &Value, selection: &Selection) -> Option<Value> {
    let Selection::Fields { paths, otherwise } = selection else {
        return None;
    };
    // `id` always matches: every record keeps it.
    let asked: Vec<&String> = paths
        .iter()
        .filter(|p| {
            p.as_str() != "id"
                && !EntityKind::ALL
                    .iter()
                    .any(|k| k.rest_key().and_then(|w| unqualified(p, w)) == Some("id"))
        })
        .collect();
    if asked.is_empty() {
        return None;
    }
    let mut kinds: Vec<KindFields> = Vec::new();
    collect_fields(value, &asked, true, &mut kinds);
    let mut out = Map::new();
    if kinds.is_empty() {
        // No records: the selection applied to the answer's own top level.
        let Value::Object(obj) = value else {
            return None;
        };
        // An empty page has no records to miss fields in.
        if holds_an_empty_list(obj) {
            return None;
        }
        let names: Vec<String> = leaves(obj, None).into_iter().map(|(n, _)| n).collect();
        let unmatched: Vec<&String> = asked
            .iter()
            .copied()
            .filter(|p| !names.iter().any(|n| answers(n, None, p)))
            .collect();
        if unmatched.is_empty() {
            return None;
        }
        out.insert(
            "result".into(),
            serde_json::json!({"unmatched": unmatched, "shown": "fields",
                               "fields": names.iter().take(REPORTED_FIELDS).collect::<Vec<_>>()}),
        );
        return Some(Value::Object(out));
    }
    let anywhere: Vec<bool> = (0..asked.len())
        .map(|i| kinds.iter().any(|k| k.matched[i]))
        .collect();
    for k in &kinds {
        let qualifier = k.kind.rest_key();
        let names_kind = |p: &str| qualifier.is_some_and(|w| unqualified(p, w).is_some());
        let qualified_elsewhere = |p: &str| {
            EntityKind::ALL.iter().any(|other| {
                *other != k.kind
                    && other
                        .rest_key()
                        .is_some_and(|w| unqualified(p, w).is_some())
            })
        };
        let fitted = k.matched.iter().any(|m| *m);
        let unmatched: Vec<&String> = asked
            .iter()
            .enumerate()
            .filter(|(i, p)| {
                !k.matched[*i]
                    && !qualified_elsewhere(p)
                    && (names_kind(p) || (k.primary && (!anywhere[*i] || !fitted)))
            })
            .map(|(_, p)| *p)
            .collect();
        if unmatched.is_empty() {
            continue;
        }
        out.insert(
            k.kind.name().into(),
            serde_json::json!({
                "unmatched": unmatched,
                "shown": if fitted { "fields" } else { otherwise.as_str() },
                "fields": k.names.iter().take(REPORTED_FIELDS).collect::<Vec<_>>(),
            }),
        );
    }
    (!out.is_empty()).then_some(Value::Object(out))
}

fn collect_fields(value: &Value, asked: &[&String], primary: bool, kinds: &mut Vec<KindFields>) {
    match value {
        Value::Object(obj) => {
            let Some(kind) = record_id(obj) else {
                for (k, child) in obj {
                    // The top-level `references` map holds what the answer mentions,
                    // not what it answers.
                    collect_fields(child, asked, primary && k != "references", kinds);
                }
                return;
            };
            let at = match kinds.iter().position(|k| k.kind == kind) {
                Some(at) => at,
                None => {
                    kinds.push(KindFields {
                        kind,
                        primary,
                        names: Vec::new(),
                        seen: Default::default(),
                        matched: vec![false; asked.len()],
                    });
                    kinds.len() - 1
                }
            };
            let entry = &mut kinds[at];
            entry.primary |= primary;
            let wrapper = kind.rest_key().filter(|k| obj.contains_key(*k));
            let qualifier = kind.rest_key();
            for (name, json_path) in leaves(obj, wrapper) {
                if json_path.len() == 1 && ENTRY_FIELDS.contains(&name.as_str()) {
                    continue;
                }
                for (i, p) in asked.iter().enumerate() {
                    if !entry.matched[i] && answers(&name, qualifier, p) {
                        entry.matched[i] = true;
                    }
                }
                if entry.names.len() < REPORTED_FIELDS && entry.seen.insert(name.clone()) {
                    entry.names.push(name);
                }
            }
        }
        Value::Array(items) => items
            .iter()
            .for_each(|v| collect_fields(v, asked, primary, kinds)),
        _ => {}
    }
}

/// The JSON Schema of [`unmatched_fields`]' report.
pub fn unmatched_schema() -> Value {
    serde_json::json!({
        "type": "object",
        "description": "Field paths of `fields` that matched nothing, by kind, with the fields that kind has.",
        "additionalProperties": {
            "type": "object",
            "required": ["unmatched", "shown", "fields"],
            "properties": {
                "unmatched": {"type": "array", "items": {"type": "string"}},
                "shown": {"type": "string"},
                "fields": {"type": "array", "items": {"type": "string"}}
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handles::shape::{Verbosity, shape};
    use serde_json::json;

    fn bare_planets() -> Value {
        json!({"entity_type": "planet", "planets": [
            {"Planet": {"id": "2-1", "owner": "1-1", "maxOre": "5", "status": "active", "creator": "c"}},
            {"Planet": {"id": "2-2", "owner": "1-2", "maxOre": "7", "status": "active", "creator": "c"}}
        ], "references": {"1-1": {"reference_type": "player", "id": "1-1", "Player": {"id": "1-1", "name": "nova", "owner": "x"}}}})
    }

    #[test]
    fn paths_qualified_by_a_kind_fit_its_list_records() {
        let mut v = bare_planets();
        shape(&mut v, &Selection::fields("planet.maxOre"));
        assert_eq!(
            v["planets"][0],
            json!({"Planet": {"id": "2-1", "maxOre": "5"}})
        );
        assert_eq!(
            v["planets"][1],
            json!({"Planet": {"id": "2-2", "maxOre": "7"}})
        );
    }

    #[test]
    fn fields_that_match_nothing_are_reported_by_kind_with_what_the_kind_has() {
        // The case: planets listed bare have no gridAttributes.
        let v = bare_planets();
        let report = unmatched_fields(&v, &Selection::fields("id,gridAttributes.ore")).unwrap();
        assert_eq!(report["planet"]["unmatched"], json!(["gridAttributes.ore"]));
        assert_eq!(report["planet"]["shown"], "summary");
        assert_eq!(
            report["planet"]["fields"],
            json!(["id", "owner", "maxOre", "status", "creator"])
        );
        // A kind met only as a reference is not blamed for an unqualified path.
        assert!(report.get("player").is_none(), "{report}");
        // `owner` is a planet's: nothing to report, whatever the references lack.
        assert_eq!(unmatched_fields(&v, &Selection::fields("id,owner")), None);
        // One path of two matched: the other is still named, and the kind is shaped.
        let report = unmatched_fields(&v, &Selection::fields("maxOre,ownr")).unwrap();
        assert_eq!(report["planet"]["unmatched"], json!(["ownr"]));
        assert_eq!(report["planet"]["shown"], "fields");
        // A path qualified by a kind met as a reference is checked against that kind.
        let report = unmatched_fields(&v, &Selection::fields("maxOre,Player.guildId")).unwrap();
        assert_eq!(report["player"]["unmatched"], json!(["Player.guildId"]));
        assert!(report.get("planet").is_none(), "{report}");
        // Verbosity is no selection of names.
        assert_eq!(
            unmatched_fields(&v, &Selection::Verbosity(Verbosity::Summary)),
            None
        );
        // Ids always match, of any kind.
        assert_eq!(
            unmatched_fields(&v, &Selection::fields("id,Guild.id")),
            None
        );
    }

    #[test]
    fn fields_on_an_answer_without_records_report_its_own_top_level() {
        let v = json!({"height": 5, "paused": true});
        let report = unmatched_fields(&v, &Selection::fields("height,heigth")).unwrap();
        assert_eq!(
            report,
            json!({"result": {"unmatched": ["heigth"], "shown": "fields", "fields": ["height", "paused"]}})
        );
    }
}
