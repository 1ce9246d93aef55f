//! Query tools: one entity by id (`structs_query_player`, ..., `structs_query_entity`),
//! the block height, and control of the sim source's block clock.

use serde_json::{Value, json};

use super::{Env, Hints, Registry, ToolSpec, output};
use super::{fetch, id_arg, id_schema};
use crate::entity::EntityKind;
use crate::entity::records::StructStatus;
use crate::entity::struct_types::struct_type;
use crate::error::{ErrorCode, ToolError};
use crate::handles::Shaping;
use crate::json::whole_number;
use crate::references::Support;
use crate::source::{ClockAction, SourceInfo};

/// The typed query tools: (tool, title, kind, argument, description).
const TYPED: [(&str, &str, EntityKind, &str, &str); 5] = [
    (
        "structs_query_player",
        "Query a player",
        EntityKind::Player,
        "player_id",
        "Query a player by id (1-N): core data (guild, substation, planet, fleet, rank), \
         gridAttributes (capacity, load, structsLoad, ore, lastAction) and playerInventory.",
    ),
    (
        "structs_query_planet",
        "Query a planet",
        EntityKind::Planet,
        "planet_id",
        "Query a planet by id (2-N): owner, ore, the four ambit slot rows of struct ids, \
         gridAttributes and planetAttributes (planetaryShield).",
    ),
    (
        "structs_query_guild",
        "Query a guild",
        EntityKind::Guild,
        "guild_id",
        "Query a guild by id (0-N): owner, primary reactor, entry substation, join rules.",
    ),
    (
        "structs_query_struct",
        "Query a struct",
        EntityKind::Struct,
        "struct_id",
        "Query a struct by id (5-N): its type (an integer struct type), owner, location, \
         operating ambit and slot, and structAttributes (health, status, build state).",
    ),
    (
        "structs_query_fleet",
        "Query a fleet",
        EntityKind::Fleet,
        "fleet_id",
        "Query a fleet by id (9-N): owner, station planet or away, command struct and the \
         four ambit slot rows.",
    ),
];

/// Most blocks one `step` may advance.
pub const MAX_STEP_BLOCKS: u64 = 1_000_000;

/// Registers the query tools.
///
/// A declarative table: one registration a tool.
pub fn register(registry: &mut Registry) {
    for (name, title, kind, field, description) in TYPED {
        registry.add(
            ToolSpec {
                name,
                description,
                input_schema: json!({
                    "type": "object",
                    "properties": {
                        field: id_schema(&format!("The {kind} id, e.g. \"{}-1\".", kind.code())),
                    },
                    "required": [field],
                    "additionalProperties": false
                }),
                references: Support::Single,
                shaping: Shaping::Standard,
                title,
                hints: Hints::READ,
                output_schema: output::game::query_typed(kind),
            },
            move |env, args| query_typed(env, args, kind, field),
        );
    }
    registry.add(
        ToolSpec {
            name: "structs_query_entity",
            description: "Query any entity by id, whatever its kind (guild 0, player 1, planet 2, \
                reactor 3, substation 4, struct 5, allocation 6, infusion 7, address 8, fleet 9, \
                provider 10, agreement 11). Returns the kind and the entity in the chain's shape.",
            input_schema: json!({
                "type": "object",
                "properties": { "id": id_schema("Any entity id, e.g. \"3-1\".") },
                "required": ["id"],
                "additionalProperties": false
            }),
            references: Support::Single,
            shaping: Shaping::Standard,
            title: "Query any entity",
            hints: Hints::READ,
            output_schema: output::game::query_entity(),
        },
        query_entity,
    );
    registry.add(
        ToolSpec {
            name: "structs_query_block_height",
            description: "The source's current block height, whether its clock is paused, and \
                which source it is.",
            input_schema: json!({
                "type": "object", "properties": {}, "additionalProperties": false
            }),
            references: Support::Single,
            shaping: Shaping::Standard,
            title: "Block height",
            hints: Hints::READ,
            output_schema: output::game::clock(),
        },
        block_height,
    );
    registry.add(
        ToolSpec {
            name: "structs_query_struct_type",
            description: "A struct type's genesis record by its integer id (1 Command Ship ... \
                22 World Engine): category (fleet or planet), build difficulty and draw, \
                passive draw, health, possible ambits (bitmask: water 2, land 4, air 8, \
                space 16), weapons and defenses. Struct types are integers, never entity ids.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "struct_type": {"type": "integer", "minimum": 1, "maximum": 22,
                                    "description": "The struct type id, 1-22."}
                },
                "required": ["struct_type"],
                "additionalProperties": false
            }),
            references: Support::Single,
            shaping: Shaping::Standard,
            title: "Query a struct type",
            hints: Hints::LOCAL,
            output_schema: output::game::struct_type(),
        },
        query_struct_type,
    );
    registry.add(
        ToolSpec {
            name: "structs_clock_control",
            description: "Pause, resume or step the sim source's block clock (about one block \
                every 6 s while running). `step` advances `blocks` blocks at once, paused or \
                not. Returns the height after the change. A live chain's clock cannot be \
                controlled.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "action": {"type": "string", "enum": ["pause", "resume", "step"]},
                    "blocks": {"type": "integer", "minimum": 1, "maximum": MAX_STEP_BLOCKS,
                               "default": 1, "description": "Blocks to advance with step."}
                },
                "required": ["action"],
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Standard,
            title: "Control the block clock",
            hints: Hints::CHANGES.repeating(),
            output_schema: output::game::clock(),
        },
        clock_control,
    );
}

async fn query_typed(
    env: Env,
    args: Value,
    kind: EntityKind,
    field: &'static str,
) -> Result<Value, ToolError> {
    let id = id_arg(&args, field, Some(kind))?;
    let entity = fetch(&env, id, field).await?;
    let mut out = json!({ kind.name(): entity, "timestamp": env.timestamp() });
    if let Some(derived) = struct_derived(kind, &out[kind.name()]) {
        out["derived"] = derived;
    }
    Ok(out)
}

/// A struct's status in words and its type's max health, beside its record (see
/// `output::game::struct_derived`); `None` for other kinds.
fn struct_derived(kind: EntityKind, entity: &Value) -> Option<Value> {
    if kind != EntityKind::Struct {
        return None;
    }
    let status = StructStatus::of(&entity["structAttributes"])?;
    let max_health = crate::json::chain_u64(entity, &["Struct", "type"])
        .and_then(|t| u8::try_from(t).ok())
        .and_then(struct_type)
        .map(|t| t.max_health);
    Some(json!({
        "status": status.word(),
        "status_flags": status.flags(),
        "max_health": max_health,
    }))
}

async fn query_entity(env: Env, args: Value) -> Result<Value, ToolError> {
    let id = id_arg(&args, "id", None)?;
    let entity = fetch(&env, id, "id").await?;
    let mut out = json!({
        "id": id.to_string(),
        "type": id.kind.name(),
        "type_code": id.kind.code(),
        "entity": entity,
        "timestamp": env.timestamp(),
    });
    if let Some(derived) = struct_derived(id.kind, &out["entity"]) {
        out["derived"] = derived;
    }
    Ok(out)
}

async fn query_struct_type(env: Env, args: Value) -> Result<Value, ToolError> {
    let id = whole_number(&args["struct_type"]).unwrap_or_default();
    let record = u8::try_from(id).ok().and_then(struct_type).ok_or_else(|| {
        ToolError::field(
            ErrorCode::ValidationOutOfRange,
            "struct_type",
            "must be 1-22",
        )
    })?;
    Ok(json!({ "struct_type": record.raw, "timestamp": env.timestamp() }))
}

async fn block_height(env: Env, _args: Value) -> Result<Value, ToolError> {
    Ok(clock_json(&env, &env.status()))
}

async fn clock_control(env: Env, args: Value) -> Result<Value, ToolError> {
    let blocks = args.get("blocks").and_then(whole_number);
    let action = match args["action"].as_str() {
        Some("pause") => ClockAction::Pause,
        Some("resume") => ClockAction::Resume,
        _ => ClockAction::Step(blocks.unwrap_or(1)),
    };
    if blocks.is_some() && !matches!(action, ClockAction::Step(_)) {
        return Err(ToolError::field(
            ErrorCode::ValidationInvalidValue,
            "blocks",
            "only applies to action \"step\"",
        ));
    }
    let info = env.source().control_clock(action)?;
    Ok(clock_json(&env, &info))
}

fn clock_json(env: &Env, info: &SourceInfo) -> Value {
    json!({
        "height": info.block_height,
        "paused": info.paused,
        "source": info.name,
        "source_description": info.description,
        "timestamp": env.timestamp(),
    })
}
