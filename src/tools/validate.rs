//! Validation tools: `structs_validate_entity_id`, `structs_validate_transaction` (shape
//! errors and, against the current state, warnings) and `structs_validate_action` (an
//! action's requirements, with optional assumed facts). Both read requirements from the
//! source's rules ([`GameSource::check`](crate::source::GameSource::check)), so they say
//! exactly what a submission would be refused for.

use serde_json::{Value, json};

use super::{Env, Hints, Registry, ToolSpec, output};
use super::{id_error, kind_arg, wrong_kind};
use crate::chain::{self, Assume, Requirement};
use crate::entity::EntityId;
use crate::error::{ErrorCode, ToolError};
use crate::handles::Shaping;
use crate::references::Support;

pub fn register(registry: &mut Registry) {
    registry.add(
        ToolSpec {
            name: "structs_validate_entity_id",
            description: "Check that a string is a well-formed Structs entity id ({type}-{index}, \
                type code 0-11, 1-based index) and, optionally, that it names the expected kind. \
                Returns the kind's name and code and the index.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "id": {"type": "string", "maxLength": 256,
                           "description": "The id to check, e.g. \"1-11\"."},
                    "expected_type": {
                        "type": ["string", "integer"],
                        "description": "The kind the id must be: a name (player, planet, ...) or a code (0-11)."
                    }
                },
                "required": ["id"],
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Standard,
            title: "Check an entity id",
            hints: Hints::LOCAL,
            output_schema: output::game::validate_entity_id(),
        },
        validate_entity_id,
    );
}

/// `game_state` keys and what they assume.
const GAME_STATE: &[(&str, &str)] = &[
    ("block_height", "the block height to evaluate at"),
    ("charge", "the acting player's charge"),
    (
        "available_capacity",
        "the acting player's available capacity, in mW (may be negative)",
    ),
    ("player_online", "whether the acting player is online"),
    (
        "fleet_on_station",
        "whether the acting player's fleet is on station",
    ),
    (
        "command_ship_online",
        "whether the acting player's command ship is online",
    ),
];

pub(crate) fn register_actions(registry: &mut Registry) {
    registry.add(
        ToolSpec {
            name: "structs_validate_transaction",
            description: "Check a transaction before submitting it: every message's shape \
                (type, required fields, id kinds) gives errors; every requirement the current \
                state would refuse (charge, power, location, proof) gives a warning. Nothing is \
                applied.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "transaction": {"type": "object",
                        "description": "{\"body\": {\"messages\": [...]}} or {\"messages\": [...]}."}
                },
                "required": ["transaction"],
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Standard,
            title: "Check a transaction",
            hints: Hints::READ,
            output_schema: output::game::validate_transaction(),
        },
        validate_transaction,
    );
    let mut state_props = serde_json::Map::new();
    for (k, d) in GAME_STATE {
        let t = match *k {
            "block_height" | "charge" => json!({"type": "integer", "minimum": 0, "description": d}),
            "available_capacity" => json!({"type": "integer", "description": d}),
            _ => json!({"type": "boolean", "description": d}),
        };
        state_props.insert((*k).into(), t);
    }
    registry.add(
        ToolSpec {
            name: "structs_validate_action",
            description: "Check whether an action's requirements are met now: action_type is a \
                chain message (MsgStructBuildInitiate, MsgStructActivate, MsgStructAttack, ...; \
                the Msg prefix and /structs.structs. are optional), parameters its fields \
                (camelCase or snake_case). game_state overrides facts to ask \"what if\". Returns \
                requirements_met, missing_requirements and every requirement with its detail.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "action_type": {"type": "string", "maxLength": 80},
                    "parameters": {"type": "object"},
                    "game_state": {"type": "object", "properties": state_props,
                        "additionalProperties": false}
                },
                "required": ["action_type", "parameters"],
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Standard,
            title: "Check an action's requirements",
            hints: Hints::READ,
            output_schema: output::game::validate_action(),
        },
        validate_action,
    );
}

fn error_json(e: &ToolError) -> Value {
    json!({"code": e.code.as_str(), "field": e.field, "message": e.to_string()})
}

async fn validate_transaction(env: Env, args: Value) -> Result<Value, ToolError> {
    let tx = &args["transaction"];
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    let mut messages = Vec::new();
    match chain::messages(tx, "transaction") {
        Err(e) => errors.push(error_json(&e)),
        Ok(list) => {
            if list.len() > 1 {
                warnings.push(json!({"message": format!(
                    "{} messages apply all or none: one refusal undoes the others", list.len())}));
            }
            for (i, (path, m)) in list.iter().enumerate() {
                let signed = match chain::parse(m, path) {
                    Ok(s) => s,
                    Err(e) => {
                        let mut j = error_json(&e);
                        j["message_index"] = json!(i);
                        errors.push(j);
                        continue;
                    }
                };
                if signed.signer.creator.is_none() {
                    warnings.push(
                        json!({"message_index": i, "field": format!("{path}.creator"),
                        "message": "no creator: the chain needs the signing address"}),
                    );
                }
                let entry = match env.source().check(&signed, &Assume::default()) {
                    Ok(reqs) => {
                        for r in reqs.iter().filter(|r| !r.met) {
                            warnings.push(json!({"message_index": i, "requirement": r.requirement,
                                "message": format!("would be refused now: {}", r.detail)}));
                        }
                        json!({"index": i, "type": signed.msg.type_name(),
                            "requirements_met": reqs.iter().all(|r| r.met), "requirements": reqs})
                    }
                    Err(e) => {
                        warnings.push(json!({"message_index": i, "message": e.to_string()}));
                        json!({"index": i, "type": signed.msg.type_name()})
                    }
                };
                messages.push(entry);
            }
        }
    }
    Ok(json!({
        "valid": errors.is_empty(),
        "errors": errors,
        "warnings": warnings,
        "messages": messages,
    }))
}

/// `player_id` → `playerId`.
fn camel(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut upper = false;
    for c in key.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

async fn validate_action(env: Env, args: Value) -> Result<Value, ToolError> {
    let raw = args["action_type"].as_str().unwrap_or_default().trim();
    if raw.is_empty() {
        return Err(ToolError::field(
            ErrorCode::ValidationMissingField,
            "action_type",
            "names no action; give a chain message such as MsgStructBuildInitiate",
        ));
    }
    let short = raw.strip_prefix(chain::TYPE_PREFIX).unwrap_or(raw);
    let name = if short.starts_with("Msg") {
        short.to_string()
    } else {
        // `struct_build_initiate` and `StructBuildInitiate` both name MsgStructBuildInitiate.
        let c = camel(short);
        let mut chars = c.chars();
        match chars.next() {
            Some(f) => format!("Msg{}{}", f.to_ascii_uppercase(), chars.as_str()),
            None => String::new(),
        }
    };
    let mut msg = serde_json::Map::new();
    msg.insert(
        "@type".into(),
        json!(format!("{}{name}", chain::TYPE_PREFIX)),
    );
    if let Some(params) = args["parameters"].as_object() {
        for (k, v) in params {
            msg.insert(camel(k), v.clone());
        }
    }
    let signed = match chain::parse(&Value::Object(msg), "parameters") {
        Ok(s) => s,
        Err(e) => {
            if e.field.as_deref() == Some("parameters.@type") {
                let reason = e.reason.clone().unwrap_or_else(|| e.message.clone());
                return Err(ToolError::field(e.code, "action_type", reason));
            }
            return Ok(json!({
                "valid": false, "requirements_met": false, "missing_requirements": [],
                "errors": [error_json(&e)], "action_type": name,
            }));
        }
    };
    let state = &args["game_state"];
    let int = |k: &str| state.get(k).and_then(Value::as_i64);
    let flag = |k: &str| state.get(k).and_then(Value::as_bool);
    let assume = Assume {
        block_height: int("block_height").map(|h| h as u64),
        charge: int("charge").map(|c| c as u64),
        available_capacity: int("available_capacity").map(i128::from),
        player_online: flag("player_online"),
        fleet_on_station: flag("fleet_on_station"),
        command_ship_online: flag("command_ship_online"),
    };
    let reqs = env.source().check(&signed, &assume)?;
    let missing: Vec<&Requirement> = reqs.iter().filter(|r| !r.met).collect();
    Ok(json!({
        "valid": true,
        "action_type": name,
        "requirements_met": missing.is_empty(),
        "missing_requirements": missing,
        "requirements": reqs,
        "assumed": state.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>()).unwrap_or_default(),
        "errors": [],
    }))
}

async fn validate_entity_id(_env: Env, args: Value) -> Result<Value, ToolError> {
    let expected = kind_arg(&args, "expected_type")?;
    let text = args["id"].as_str().unwrap_or_default();
    let id = EntityId::parse(text).map_err(|e| id_error(&e, "id"))?;
    if let Some(kind) = expected
        && kind != id.kind
    {
        return Err(wrong_kind("id", id, kind));
    }
    Ok(json!({
        "valid": true,
        "type": id.kind.name(),
        "type_code": id.kind.code(),
        "index": id.index,
        "format": id.to_string(),
    }))
}
