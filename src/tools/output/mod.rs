//! Output schemas: the JSON Schema of what each tool answers, as `tools/list` shows it
//! (`outputSchema`) and as its `structuredContent` validates.
//!
//! A tool's spec gives the schema of its successful answer, written with the helpers
//! here and one function per tool in the family files ([`game`]: queries, lists,
//! validation, actions; [`compute`]: calculators, proof-of-work, decision trees;
//! [`agent`]: docs, plans, workflows, handles, subscriptions). Each answer schema is a
//! closed object: every top-level key the tool can answer with, `required` naming
//! those always there. Registration ([`compose`]) turns it into the tool's whole
//! output schema, `anyOf`:
//!
//! - `answer`: the answer, with `references` and `references_summary` when the tool
//!   carries references;
//! - `shaped` (tools the core shapes): the same with any field left out, for a call
//!   that asked for `fields` or a smaller `verbosity` (but for what shaping keeps, a
//!   record's wrapper and id: [`kept`], under `allOf`); `answer` is `shaped` plus its
//!   `required` keys;
//! - `partial`: the envelope of an answer over the size limit ([`handles`]);
//! - `error`: the error object of a failed call ([`crate::error::wire_schema`]).

pub mod agent;
pub mod compute;
pub mod game;

use serde_json::{Map, Value, json};

use super::ToolSpec;
use crate::entity::{EntityId, EntityKind};
use crate::handles::{self, Shaping};
use crate::references::Support;

/// The whole output schema of `spec`, its answer schema composed with what the core
/// adds (see the module's documentation). Panics on an answer schema that is not an
/// object's: a programming error the first test that builds a core catches.
pub fn compose(spec: &ToolSpec) -> Value {
    let mut answer = spec.output_schema.clone();
    let Some(props) = answer
        .get_mut("properties")
        .and_then(Value::as_object_mut)
        .filter(|_| spec.output_schema["type"] == "object")
    else {
        panic!(
            "the output schema of {} is not an object's with properties",
            spec.name
        );
    };
    if spec.references != Support::None {
        for (k, v) in [
            ("references", references_schema()),
            ("references_summary", json!({"type": "object"})),
        ] {
            assert!(
                props.insert(k.to_string(), v).is_none(),
                "{} declares {k} in its output; the registry adds it",
                spec.name
            );
        }
    }
    let mut defs = Map::new();
    let mut choices = vec![json!({"$ref": "#/$defs/answer"})];
    if spec.shaping == Shaping::Standard {
        let mut shaped = answer.clone();
        strip_required(&mut shaped);
        shaped["properties"][handles::UNMATCHED_KEY] = handles::unmatched::unmatched_schema();
        shaped["description"] = json!("Shaped by fields or verbosity: any field may be left out.");
        let mut strict = skeleton(&answer);
        strict.insert("allOf".into(), json!([{"$ref": "#/$defs/shaped"}]));
        if let Some(d) = answer.get("description") {
            strict.insert("description".into(), d.clone());
        }
        defs.insert("answer".into(), Value::Object(strict));
        defs.insert("shaped".into(), shaped);
        choices.push(json!({"$ref": "#/$defs/shaped"}));
    } else {
        defs.insert("answer".into(), answer);
    }
    defs.insert("partial".into(), handles::envelope_schema(spec.name));
    defs.insert("error".into(), crate::error::wire_schema());
    choices.push(json!({"$ref": "#/$defs/partial"}));
    choices.push(json!({"$ref": "#/$defs/error"}));
    json!({"$schema": crate::tools::schema::DIALECT, "type": "object", "anyOf": choices, "$defs": defs})
}

/// The `references` map a reference-capable tool adds.
fn references_schema() -> Value {
    json!({
        "type": "object",
        "description": "The entities the answer mentions, by id (include_references).",
        "additionalProperties": kept(json!({"type": "object"}), &["reference_type"])
    })
}

/// The keywords whose value is a schema.
const SUBSCHEMA: [&str; 2] = ["items", "additionalProperties"];

/// Removes every `required` of `schema`, at any depth (property names are left alone),
/// except under `allOf`: there are the keys shaping never takes away ([`kept`]).
fn strip_required(schema: &mut Value) {
    let Some(obj) = schema.as_object_mut() else {
        return;
    };
    obj.remove("required");
    if let Some(Value::Object(props)) = obj.get_mut("properties") {
        props.values_mut().for_each(strip_required);
    }
    for k in SUBSCHEMA {
        if let Some(v) = obj.get_mut(k) {
            strip_required(v);
        }
    }
    for k in ["anyOf", "oneOf"] {
        if let Some(Value::Array(list)) = obj.get_mut(k) {
            list.iter_mut().for_each(strip_required);
        }
    }
}

/// `schema` with `required` keys that are there however the answer is shaped (a
/// record's wrapper and id, a reference's type).
pub fn kept(mut schema: Value, required: &[&str]) -> Value {
    schema["allOf"] = json!([{"required": required}]);
    schema
}

/// What `strip_required` takes out of `schema`: its `required` lists where they are,
/// and its alternatives whole (they may require keys). Not `allOf`, which the
/// stripped schema keeps.
fn skeleton(schema: &Value) -> Map<String, Value> {
    let mut out = Map::new();
    let Some(obj) = schema.as_object() else {
        return out;
    };
    if let Some(r) = obj.get("required") {
        out.insert("required".into(), r.clone());
    }
    if let Some(Value::Object(props)) = obj.get("properties") {
        let inner: Map<String, Value> = props
            .iter()
            .map(|(k, v)| (k.clone(), skeleton(v)))
            .filter(|(_, s)| !s.is_empty())
            .map(|(k, s)| (k, Value::Object(s)))
            .collect();
        if !inner.is_empty() {
            out.insert("properties".into(), Value::Object(inner));
        }
    }
    for k in SUBSCHEMA {
        if let Some(s) = obj.get(k).map(skeleton).filter(|s| !s.is_empty()) {
            out.insert(k.into(), Value::Object(s));
        }
    }
    for k in ["anyOf", "oneOf"] {
        if let Some(v) = obj.get(k) {
            out.insert(k.into(), v.clone());
        }
    }
    out
}

// ------------------------------------------------------------------ the helpers

/// A tool's answer: a closed object with these properties, `required` always there.
pub fn answer(required: &[&str], properties: Value) -> Value {
    json!({"type": "object", "required": required, "properties": properties,
           "additionalProperties": false})
}

/// A tool's answer whose properties are all always there.
pub fn answer_all(properties: Value) -> Value {
    let keys: Vec<String> = properties
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default();
    let required: Vec<&str> = keys.iter().map(String::as_str).collect();
    answer(&required, properties)
}

/// An object inside an answer: its main fields, others allowed.
pub fn object(required: &[&str], properties: Value) -> Value {
    json!({"type": "object", "required": required, "properties": properties})
}

/// `schema` with a description.
pub fn about(mut schema: Value, description: &str) -> Value {
    schema["description"] = json!(description);
    schema
}

pub fn string() -> Value {
    json!({"type": "string"})
}

pub fn boolean() -> Value {
    json!({"type": "boolean"})
}

/// A whole number of zero or more (a count, a height, an amount in base units).
pub fn count() -> Value {
    json!({"type": "integer", "minimum": 0})
}

/// Any number of zero or more (a rate, a duration, an amount with decimals).
pub fn number() -> Value {
    json!({"type": "number", "minimum": 0})
}

pub fn array(items: Value) -> Value {
    json!({"type": "array", "items": items})
}

/// `schema`, or `null`.
pub fn nullable(mut schema: Value) -> Value {
    match schema.get("type").cloned() {
        Some(Value::String(t)) => schema["type"] = json!([t, "null"]),
        Some(Value::Array(mut types)) => {
            types.push(json!("null"));
            schema["type"] = Value::Array(types);
        }
        _ => return json!({"anyOf": [schema, {"type": "null"}]}),
    }
    schema
}

/// One of these strings.
pub fn one_of(values: &[&str]) -> Value {
    json!({"enum": values})
}

/// An RFC 3339 time stamp.
pub fn timestamp() -> Value {
    json!({"type": "string", "format": "date-time"})
}

/// An entity id, of `kind` when given.
pub fn entity_id(kind: Option<EntityKind>) -> Value {
    let pattern = match kind {
        Some(k) => format!("^{}-[0-9]+$", k.code()),
        None => EntityId::PATTERN.to_string(),
    };
    json!({"type": "string", "pattern": pattern})
}

/// An entity in the chain's JSON shape (`{"Player": {"id": ...}, "gridAttributes": ...}`,
/// integers as strings); its id survives any shaping.
pub fn entity(kind: EntityKind) -> Value {
    let record = |props: Value| json!({"type": "object", "properties": props});
    let id = kept(record(json!({"id": entity_id(Some(kind))})), &["id"]);
    match kind.rest_key() {
        Some(key) => kept(record(json!({key: id})), &[key]),
        None => id,
    }
}

/// An entity of any kind.
pub fn any_entity() -> Value {
    json!({"type": "object", "minProperties": 1,
           "description": "An entity in the chain's JSON shape."})
}

/// One requirement of an action and whether it holds (`chain::Requirement`).
pub fn requirement() -> Value {
    object(
        &["requirement", "met", "detail"],
        json!({"requirement": string(), "met": boolean(), "detail": string()}),
    )
}

/// A struct type named briefly (`{"id", "name", "category"}`).
pub fn struct_type_brief() -> Value {
    object(
        &["id", "name", "category"],
        json!({"id": {"type": "integer", "minimum": 1, "maximum": 22}, "name": string(),
               "category": one_of(&["planet", "fleet"])}),
    )
}

/// When a proof-of-work gets cheap: `difficulty_8` and `difficulty_3`, each the age it
/// is reached at (`null` if never).
pub fn milestones() -> Value {
    let at = nullable(object(
        &["age_blocks", "seconds", "hours", "expected_hashes"],
        json!({"age_blocks": count(), "seconds": number(), "hours": number(),
               "expected_hashes": number(), "blocks_left": count(), "seconds_left": number()}),
    ));
    object(
        &["difficulty_8", "difficulty_3"],
        json!({"difficulty_8": at, "difficulty_3": at}),
    )
}

/// What to call next.
pub fn next_step() -> Value {
    object(
        &[],
        json!({"step": string(), "description": string(), "tool": string(),
               "arguments": {"type": "object"}}),
    )
}
