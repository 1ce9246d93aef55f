//! The tool catalog: one file per category, each exposing its specs and handlers, all
//! registered here. Names follow `structs_{category}_{action}`.

pub mod action;
pub mod calculate;
pub mod decision;
pub mod docs;
pub mod endpoints;
mod env;
pub mod handles;
pub mod list;
pub mod output;
pub mod plan;
pub mod pow;
pub mod pow_work;
pub mod query;
pub mod registry;
pub mod schema;
pub mod schemas;
pub mod subscription;
pub mod tasks;
pub mod validate;
pub mod workflow;

pub use env::Env;
pub use registry::{
    Handler, Hints, NULL_NOTE, Origin, RegisteredTool, Registry, TaskSupport, ToolSpec,
};

use std::sync::Arc;

use serde_json::Value;

use crate::docs::Docs;
use crate::plan::workflow::Runs;

use crate::entity::{EntityId, EntityKind};
use crate::error::{ErrorCode, ToolError};
pub(crate) use crate::error::{id_error, parse_id, wrong_kind};
pub(crate) use crate::json::{chain_str, chain_u64};

/// Registers every tool of the catalog.
pub fn register_all(registry: &mut Registry, docs: &Arc<Docs>, runs: &Arc<Runs>) {
    validate::register(registry);
    validate::register_actions(registry);
    query::register(registry);
    list::register(registry);
    endpoints::register(registry);
    handles::register(registry);
    pow::register(registry);
    pow_work::register(registry);
    action::register(registry);
    calculate::register(registry);
    schemas::register(registry);
    subscription::register(registry);
    tasks::register(registry);
    decision::register(registry);
    plan::register(registry);
    workflow::register(registry, runs);
    docs::register(registry, docs);
    for &(tool, alias, name) in CATALOG_NAMES {
        registry.alias(tool, alias, name);
    }
}

/// Arguments the tool catalog names otherwise than these tools do: (tool, the
/// catalog's name, the tool's name). Both names are accepted.
pub const CATALOG_NAMES: &[(&str, &str, &str)] = &[
    ("structs_workflow_execute", "parameters", "inputs"),
    ("structs_docs_search", "category", "type"),
    // The catalog's damage example: the weapon fired, its damage per hit, and the
    // armour taken off each volley.
    (
        "structs_calculate_damage",
        "attacker.weapon_type",
        "attacker.weapon",
    ),
    (
        "structs_calculate_damage",
        "attacker.power",
        "attacker.damage",
    ),
    (
        "structs_calculate_damage",
        "defender.armor",
        "defender.attack_reduction",
    ),
];

/// Fetches one entity or fails with `RESOURCE_NOT_FOUND` naming the argument it came from.
pub(crate) async fn fetch(env: &Env, id: EntityId, field: &str) -> Result<Value, ToolError> {
    env.source()
        .get(id)
        .await?
        .ok_or_else(|| ToolError::not_found(id, Some(field)))
}

/// The JSON Schema of an entity-id argument.
pub(crate) fn id_schema(description: &str) -> Value {
    serde_json::json!({
        "type": "string",
        "description": description,
        "pattern": EntityId::PATTERN,
        "maxLength": 48,
    })
}

/// A string argument, if present (the schema has already checked its type).
pub(crate) fn opt_str<'a>(args: &'a Value, field: &str) -> Option<&'a str> {
    args.get(field).and_then(Value::as_str)
}

/// Parses an id argument and checks its kind when one is expected.
pub(crate) fn id_arg(
    args: &Value,
    field: &str,
    expected: Option<EntityKind>,
) -> Result<EntityId, ToolError> {
    let text = opt_str(args, field)
        .ok_or_else(|| ToolError::field(ErrorCode::ValidationMissingField, field, "is required"))?;
    parse_id(text, field, expected)
}

/// An entity-kind argument given by name (`player`, case-insensitive, plural allowed) or
/// by code (`1` or `"1"`); `None` when the argument is absent.
pub(crate) fn kind_arg(args: &Value, field: &str) -> Result<Option<EntityKind>, ToolError> {
    let Some(v) = args.get(field) else {
        return Ok(None);
    };
    let kind = match v {
        Value::String(s) => EntityKind::parse_name_or_code(s),
        Value::Number(n) => n.as_u64().and_then(EntityKind::from_code),
        _ => None,
    };
    kind.map(Some).ok_or_else(|| {
        let names: Vec<&str> = EntityKind::ALL.iter().map(|k| k.name()).collect();
        ToolError::field(
            ErrorCode::ValidationInvalidValue,
            field,
            format!(
                "{} is not an entity kind; use a name ({}) or a code 0-11",
                crate::error::echo(v),
                names.join(", ")
            ),
        )
    })
}

/// `out` with the fields of `more` put in, over its own (both objects; anything else
/// leaves `out` as it is).
pub(crate) fn merge(out: &mut Value, more: Value) {
    if let (Some(o), Value::Object(m)) = (out.as_object_mut(), more) {
        o.extend(m);
    }
}
