//! Validation tools: `structs_validate_entity_id`.

use serde_json::{Value, json};

use super::{id_error, kind_arg, wrong_kind};
use crate::core::error::ToolError;
use crate::core::{Core, Registry, ToolSpec};
use crate::entity::EntityId;
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
        },
        validate_entity_id,
    );
}

async fn validate_entity_id(_core: Core, args: Value) -> Result<Value, ToolError> {
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
