//! Answers about the game: queries, lists, the endpoints, validation, actions.

use serde_json::{Map, Value, json};

use super::*;
use crate::entity::records::StructStatus;

fn kind_names() -> Value {
    let names: Vec<&str> = EntityKind::ALL.iter().map(|k| k.name()).collect();
    one_of(&names)
}

/// `structs_query_player` and the other typed queries: `{kind: entity, timestamp}`.
pub fn query_typed(kind: EntityKind) -> Value {
    let mut properties = json!({
        kind.name(): about(entity(kind), &format!("The {kind} in the chain's shape.")),
        "timestamp": timestamp(),
    });
    if kind == EntityKind::Struct {
        properties["derived"] = struct_derived();
    }
    answer(&[kind.name(), "timestamp"], properties)
}

/// What a struct's answer says beside its chain record: the status bits in words and
/// the max health its type gives it (the chain keeps it on the type, not the struct).
fn struct_derived() -> Value {
    about(
        json!({
            "type": "object",
            "required": ["status", "status_flags", "max_health"],
            "additionalProperties": false,
            "properties": {
                "status": about(
                    one_of(&["destroyed", "online", "built", "materialized", "stateless"]),
                    "structAttributes.status in one word: the strongest state set.",
                ),
                "status_flags": about(
                    json!({"type": "array", "items": one_of(&StructStatus::NAMES.map(|(_, n)| n))}),
                    "Every bit set in structAttributes.status, lowest first.",
                ),
                "max_health": about(
                    json!({"type": ["integer", "null"], "minimum": 0}),
                    "The struct type's maxHealth; null for a type this build does not know.",
                ),
            },
        }),
        "Read from the record, not part of it: the chain sends only the number.",
    )
}

/// `structs_query_entity`.
pub fn query_entity() -> Value {
    answer(
        &["id", "type", "type_code", "entity", "timestamp"],
        json!({
            "id": entity_id(None),
            "type": about(kind_names(), "The entity's kind."),
            "type_code": {"type": "integer", "minimum": 0, "maximum": 11},
            "entity": any_entity(),
            "derived": struct_derived(),
            "timestamp": timestamp(),
        }),
    )
}

/// `structs_query_block_height` and `structs_clock_control`: the source's clock.
pub fn clock() -> Value {
    answer(
        &[
            "height",
            "paused",
            "source",
            "source_description",
            "timestamp",
        ],
        json!({
            "height": about(count(), "The current block height."),
            "paused": about(boolean(), "The block clock is stopped (it moves only when stepped)."),
            "source": about(string(), "sim (the embedded world) or rest (a chain's node)."),
            "source_description": string(),
            "timestamp": timestamp(),
        }),
    )
}

/// `structs_query_struct_type`.
pub fn struct_type() -> Value {
    let record = object(
        &[
            "id",
            "type",
            "category",
            "buildDifficulty",
            "buildDraw",
            "passiveDraw",
            "maxHealth",
            "possibleAmbit",
        ],
        json!({
            "id": {"type": "integer", "minimum": 1, "maximum": 22},
            "type": about(string(), "The type's name."),
            "category": one_of(&["planet", "fleet"]),
            "buildDifficulty": count(),
            "buildDraw": about(count(), "mW drawn while building."),
            "passiveDraw": about(count(), "mW drawn while online."),
            "maxHealth": count(),
            "possibleAmbit": about(count(), "Bitmask: water 2, land 4, air 8, space 16."),
        }),
    );
    answer(
        &["struct_type", "timestamp"],
        json!({"struct_type": about(record, "The type's genesis record (integers as numbers)."),
               "timestamp": timestamp()}),
    )
}

fn pagination() -> Value {
    object(
        &["next_key", "total", "page_size"],
        json!({
            "next_key": about(nullable(string()), "page_key for the next page; null on the last."),
            "total": about(count(), "Entities matching, on every page."),
            "page_size": count(),
        }),
    )
}

/// `structs_list_players` and the other typed lists.
pub fn list_typed(kind: EntityKind) -> Value {
    answer(
        &["entity_type", kind.plural(), "pagination", "timestamp"],
        json!({
            "entity_type": {"const": kind.name()},
            kind.plural(): array(entity(kind)),
            "table": crate::handles::table::table_schema(),
            "pagination": pagination(),
            "timestamp": timestamp(),
        }),
    )
}

/// `structs_list_entities`: the page is under the kind's plural (`reactors`).
pub fn list_entities() -> Value {
    let mut props = Map::new();
    props.insert(
        "entity_type".into(),
        about(kind_names(), "The kind listed."),
    );
    let mut pages = Vec::new();
    for kind in EntityKind::ALL {
        props.insert(kind.plural().into(), array(any_entity()));
        pages.push(json!({"required": [kind.plural()],
                          "properties": {"entity_type": {"const": kind.name()}}}));
    }
    props.insert("table".into(), crate::handles::table::table_schema());
    props.insert("pagination".into(), pagination());
    props.insert("timestamp".into(), timestamp());
    let mut a = answer(
        &["entity_type", "pagination", "timestamp"],
        Value::Object(props),
    );
    a["anyOf"] = Value::Array(pages);
    a
}

/// `structs_query_endpoints`.
pub fn endpoints() -> Value {
    let endpoint = object(
        &[
            "method",
            "path",
            "description",
            "entity_type",
            "category",
            "paginated",
        ],
        json!({
            "method": one_of(&["GET", "POST"]),
            "path": string(),
            "description": string(),
            "entity_type": nullable(string()),
            "category": one_of(&["queries", "system", "transactions"]),
            "paginated": boolean(),
        }),
    );
    answer(
        &["total", "endpoints", "source", "timestamp"],
        json!({"total": count(), "endpoints": array(endpoint), "source": string(),
               "timestamp": timestamp()}),
    )
}

/// `structs_validate_entity_id`: a bad id is an error, so the answer says valid.
pub fn validate_entity_id() -> Value {
    answer(
        &["valid", "type", "type_code", "index", "format"],
        json!({
            "valid": {"const": true},
            "type": kind_names(),
            "type_code": {"type": "integer", "minimum": 0, "maximum": 11},
            "index": {"type": "integer", "minimum": 1},
            "format": about(entity_id(None), "The id written canonically."),
        }),
    )
}

/// A problem with a message or an argument: its code, field and message.
fn problem() -> Value {
    object(
        &["code", "message"],
        json!({"code": string(), "field": nullable(string()), "message": string(),
               "message_index": count()}),
    )
}

/// `structs_validate_transaction`.
pub fn validate_transaction() -> Value {
    let warning = object(
        &["message"],
        json!({"message": string(), "message_index": count(), "requirement": string(),
               "field": string()}),
    );
    let message = object(
        &["index", "type"],
        json!({"index": count(), "type": string(), "requirements_met": boolean(),
               "requirements": array(requirement())}),
    );
    answer(
        &["valid", "errors", "warnings", "messages"],
        json!({
            "valid": about(boolean(), "Every message is well formed (errors is empty)."),
            "errors": array(problem()),
            "warnings": about(array(warning), "What the current state would refuse, and other cautions."),
            "messages": about(array(message), "Each well-formed message with its requirements now."),
        }),
    )
}

/// `structs_validate_action`.
pub fn validate_action() -> Value {
    answer(
        &[
            "valid",
            "action_type",
            "requirements_met",
            "missing_requirements",
            "errors",
        ],
        json!({
            "valid": about(boolean(), "The parameters make a well-formed message."),
            "action_type": string(),
            "requirements_met": boolean(),
            "missing_requirements": array(requirement()),
            "requirements": array(requirement()),
            "assumed": about(array(string()), "The game_state facts assumed."),
            "errors": array(problem()),
        }),
    )
}

/// `structs_validate_schema`.
pub fn validate_schema() -> Value {
    let error = object(
        &["instance_path", "schema_path", "keyword", "message"],
        json!({"instance_path": string(), "schema_path": string(), "keyword": string(),
               "message": string(), "absolute_keyword_location": nullable(string())}),
    );
    answer(
        &["valid", "errors", "schema_uri"],
        json!({
            "valid": boolean(),
            "errors": array(error),
            "schema_uri": string(),
            "entity_id": entity_id(None),
        }),
    )
}

/// The fields of an applied transaction's answer.
fn applied() -> Map<String, Value> {
    let event = object(
        &["seq", "category", "entity", "summary"],
        json!({"seq": count(), "category": string(), "entity": entity_id(None),
               "summary": string()}),
    );
    let Value::Object(m) = json!({
        "transaction_hash": about(string(), "64 hex digits, as the chain writes them."),
        "status": string(),
        "height": about(count(), "The block it was applied at."),
        "message": string(),
        "results": about(array(json!({"type": "object"})), "One result per message, in order."),
        "events": array(event),
    }) else {
        unreachable!()
    };
    m
}

/// An action's answer: the applied transaction's fields and `more`.
fn action(required: &[&str], more: Value) -> Value {
    let mut props = applied();
    if let Value::Object(more) = more {
        props.extend(more);
    }
    answer(required, Value::Object(props))
}

const APPLIED: [&str; 6] = [
    "transaction_hash",
    "status",
    "height",
    "message",
    "results",
    "events",
];

/// `structs_action_submit_transaction`: applied by the sim, or signed bytes broadcast
/// to a node.
pub fn submit_transaction() -> Value {
    let mut a = action(
        &["transaction_hash", "status", "height", "message"],
        json!({
            "transaction_hash": nullable(string()),
            "status": one_of(&["success", "accepted", "rejected"]),
            "height": about(json!({"type": ["integer", "string", "null"]}), "The block it was applied at (the node's, for tx_bytes)."),
            "note": string(),
            "code": about(count(), "The node's result code (0: accepted); tx_bytes only."),
            "codespace": nullable(string()),
            "raw_log": nullable(string()),
            "node_result": about(json!({"type": "object"}), "The node's tx_response; tx_bytes only."),
        }),
    );
    // Applied on the sim: the results and events; broadcast: the node's answer.
    a["anyOf"] = json!([
        {"required": ["results", "events"], "properties": {"status": {"const": "success"}}},
        {"required": ["code", "node_result"]}
    ]);
    a
}

/// `structs_action_build_struct`: a build initiated, or completed.
pub fn build_struct() -> Value {
    let mut a = action(
        &[
            "transaction_hash",
            "status",
            "height",
            "message",
            "results",
            "events",
            "struct_id",
            "next_step",
        ],
        json!({
            "status": one_of(&["initiated", "completed"]),
            "struct_id": entity_id(Some(EntityKind::Struct)),
            "struct_type": object(&["id", "name"], json!({"id": count(), "name": string()})),
            "location_id": entity_id(None),
            "operating_ambit": one_of(&["water", "land", "air", "space"]),
            "slot": count(),
            "block_start_build": count(),
            "online": about(boolean(), "Completed: the struct came online."),
            "next_step": json!({"anyOf": [next_step(), string()]}),
            "estimated_completion": about(work_schedule(), "Initiated: when the build proof gets cheap."),
        }),
    );
    a["anyOf"] = json!([
        {"required": ["struct_type", "location_id", "operating_ambit", "slot", "block_start_build", "estimated_completion"],
         "properties": {"status": {"const": "initiated"}}},
        {"required": ["online"], "properties": {"status": {"const": "completed"}}}
    ]);
    a
}

/// A work's current difficulty and when it gets cheap.
fn work_schedule() -> Value {
    object(
        &[
            "difficulty_range",
            "block_start",
            "age_blocks",
            "difficulty_now",
            "expected_hashes_now",
            "milestones",
        ],
        json!({
            "difficulty_range": count(),
            "block_start": count(),
            "age_blocks": count(),
            "difficulty_now": {"type": "integer", "minimum": 1, "maximum": 64},
            "expected_hashes_now": number(),
            "milestones": milestones(),
        }),
    )
}

/// `structs_action_mine_resources`: the extractor activated, a cycle still mining (no
/// transaction), or a cycle completed.
pub fn mine_resources() -> Value {
    action(
        &[
            "transaction_hash",
            "status",
            "message",
            "extractor_id",
            "planet_id",
            "player_id",
            "mining_rate",
            "mining_rate_unit",
            "estimated_yield",
            "planet_ore_remaining",
            "next_step",
        ],
        json!({
            "transaction_hash": about(nullable(string()), "null while a cycle is mining (nothing submitted)."),
            "status": one_of(&["initiated", "mining", "completed"]),
            "extractor_id": entity_id(Some(EntityKind::Struct)),
            "planet_id": entity_id(Some(EntityKind::Planet)),
            "player_id": entity_id(Some(EntityKind::Player)),
            "mining_rate": number(),
            "mining_rate_unit": string(),
            "estimated_yield": count(),
            "planet_ore_remaining": count(),
            "ore_mined": count(),
            "player_stored_ore": count(),
            "next_step": next_step(),
            "estimated_completion": work_schedule(),
        }),
    )
}

/// `structs_action_attack`.
pub fn attack() -> Value {
    let mut required = APPLIED.to_vec();
    required.extend([
        "damage_to_target",
        "damage_to_attacker",
        "target_health_after",
        "target_destroyed",
        "attacker_health_after",
        "attacker_destroyed",
        "breakdown",
        "weapon_type",
    ]);
    action(
        &required,
        json!({
            "status": {"const": "completed"},
            "estimated_damage": about(number(), "The expected damage to the target, over every roll."),
            "damage_to_target": count(),
            "damage_to_attacker": count(),
            "target_health_after": count(),
            "target_destroyed": boolean(),
            "attacker_health_after": count(),
            "attacker_destroyed": boolean(),
            "breakdown": about(json!({"type": "object"}), "The attack step by step: evasion, counters, blocking, the volley, recoil."),
            "weapon_type": one_of(&["primary", "secondary"]),
        }),
    )
}
