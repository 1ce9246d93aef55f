//! What can be known about a step's result before it runs, so that a path that cannot
//! exist is a validation problem rather than a failure halfway through a plan.
//!
//! Every step's view has exactly `success`, `data` and `error`. For the tools whose
//! result has a fixed set of top-level fields (the queries and lists), the first field
//! under `data` is checked too; `tests/plans.rs` runs each of them and compares.

use serde_json::Value;

use super::Step;
use super::template::{Reference, Root, Seg};
use crate::entity::EntityKind;

/// The fields of a step's view.
pub const VIEW_FIELDS: [&str; 3] = ["success", "data", "error"];

/// Fields any result may carry: references, and the envelope of a result too large
/// for one response.
pub const ALWAYS: [&str; 8] = [
    "references",
    "references_summary",
    "status",
    "summary",
    "result_handle",
    "page_info",
    "metadata",
    "resource_uri",
];

/// Checks the part of a step reference every step shares: the view's fields.
pub fn check_step_path(r: &Reference) -> Result<(), String> {
    if matches!(r.root, Root::Input(_)) {
        return Ok(());
    }
    let Some(first) = r.path.first() else {
        return Ok(());
    };
    let Seg::Key(k) = first else {
        return Err(format!(
            "${{{}}}: a step's result is an object of success, data and error, not an array",
            r.text
        ));
    };
    match k.as_str() {
        "data" | "error" => Ok(()),
        "success" if r.path.len() == 1 => Ok(()),
        "success" => Err(format!(
            "${{{}}}: success is true or false and has no fields",
            r.text
        )),
        other => {
            let hint = if other == "result" || other == "output" || other == "value" {
                " (the tool's result is under data)"
            } else {
                ""
            };
            Err(format!(
                "${{{}}}: a step's result has success, data and error, not {other:?}{hint}",
                r.text
            ))
        }
    }
}

/// The top-level fields of `tool`'s result for these params, when they are fixed.
pub fn known_fields(tool: &str, params: &Value) -> Option<Vec<String>> {
    let own = |v: &[&str]| Some(v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    match tool {
        "structs_query_entity" => {
            let mut f = own(&["id", "type", "type_code", "entity", "timestamp"])?;
            // A struct's answer adds its status in words beside the record; an id
            // given by a reference may be one.
            let id = params.get("id").and_then(Value::as_str);
            let kind = id
                .and_then(|t| crate::entity::EntityId::parse(t).ok())
                .map(|i| i.kind);
            if kind.is_none_or(|k| k == EntityKind::Struct) {
                f.push("derived".into());
            }
            Some(f)
        }
        "structs_query_block_height" | "structs_clock_control" => own(&[
            "height",
            "paused",
            "source",
            "source_description",
            "timestamp",
        ]),
        "structs_query_struct_type" => own(&["struct_type", "timestamp"]),
        "structs_list_entities" => {
            let mut f = own(&["entity_type", "pagination", "timestamp"])?;
            match params
                .get("entity_type")
                .and_then(Value::as_str)
                .and_then(EntityKind::parse_name_or_code)
            {
                Some(kind) => f.push(kind.plural().to_string()),
                // The kind is a reference: any kind's list may come back.
                None => f.extend(EntityKind::ALL.iter().map(|k| k.plural().to_string())),
            }
            Some(f)
        }
        _ => {
            if let Some(rest) = tool.strip_prefix("structs_query_") {
                let kind = EntityKind::ALL.iter().find(|k| k.name() == rest)?;
                let mut f = vec![kind.name().to_string(), "timestamp".to_string()];
                if *kind == EntityKind::Struct {
                    f.push("derived".into());
                }
                return Some(f);
            }
            if let Some(rest) = tool.strip_prefix("structs_list_") {
                let kind = EntityKind::ALL.iter().find(|k| k.plural() == rest)?;
                return Some(vec![
                    "entity_type".to_string(),
                    kind.plural().to_string(),
                    "pagination".to_string(),
                    "timestamp".to_string(),
                ]);
            }
            None
        }
    }
}

/// True for the tools whose result holds exactly one list (the list tools: the
/// entities, beside the kind, pagination and timestamp).
fn holds_one_list(tool: &str) -> bool {
    tool.starts_with("structs_list_")
}

/// Checks the first field under `data` against what `target`'s tool returns.
pub fn check_data_path(r: &Reference, target: &Step) -> Result<(), String> {
    let (Some(Seg::Key(first)), Some(second)) = (r.path.first(), r.path.get(1)) else {
        return Ok(());
    };
    if first != "data" {
        return Ok(());
    }
    let Some(fields) = known_fields(&target.tool, &target.params) else {
        return Ok(());
    };
    match second {
        // A list result holds exactly one list, so `data[N]` reads its item N.
        Seg::Index(_) if holds_one_list(&target.tool) => Ok(()),
        Seg::Index(i) => Err(format!(
            "${{{}}}: the result of {} is an object, so data has no item [{i}]; its fields are {}",
            r.text,
            target.tool,
            fields.join(", ")
        )),
        Seg::Key(k) if fields.contains(k) || ALWAYS.contains(&k.as_str()) => Ok(()),
        Seg::Key(k) => Err(format!(
            "${{{}}}: the result of {} (step {}) has no field {k:?}; its fields are {}",
            r.text,
            target.tool,
            target.label(),
            fields.join(", ")
        )),
    }
}
