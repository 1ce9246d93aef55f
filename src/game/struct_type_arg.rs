//! A struct type named in an argument or a state document: by id or by name.

use serde_json::Value;

use crate::entity::struct_types::{StructType, struct_type, struct_types};
use crate::error::{ErrorCode, ToolError};
use crate::json::whole_number;

/// A struct type given by id (1-22, number or numeric string) or by name (any case,
/// spaces, underscores or camelCase).
pub fn struct_type_arg(v: &Value, field: &str) -> Result<&'static StructType, ToolError> {
    let found = match v {
        Value::Number(_) => whole_number(v)
            .and_then(|n| u8::try_from(n).ok())
            .and_then(struct_type),
        Value::String(s) => match s.trim().parse::<u8>() {
            Ok(n) => struct_type(n),
            Err(_) => {
                let want = squash(s);
                struct_types().iter().find(|t| squash(&t.name) == want)
            }
        },
        _ => None,
    };
    found.ok_or_else(|| {
        let names: Vec<String> = struct_types()
            .iter()
            .map(|t| format!("{} {}", t.id, t.name))
            .collect();
        ToolError::field(
            ErrorCode::ValidationInvalidValue,
            field,
            format!(
                "{v} is not a struct type; use an id 1-22 or a name: {}",
                names.join(", ")
            ),
        )
    })
}

/// Lowercase letters and digits only: `Ore Extractor`, `ore_extractor` and
/// `oreExtractor` are all `oreextractor`.
pub fn squash(s: &str) -> String {
    s.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}
