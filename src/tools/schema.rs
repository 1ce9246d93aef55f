//! Validation of tool arguments against each tool's JSON Schema, with errors mapped to
//! the brief's codes and naming the argument at fault.

use jsonschema::error::{TypeKind, ValidationErrorKind};
use serde_json::{Value, json};

use crate::error::{ErrorCode, ToolError};

/// The JSON Schema dialect every tool schema names (`$schema`): 2020-12, which MCP
/// takes where a schema names none, so that a client reads `$defs`, `$anchor`,
/// `allOf`/`anyOf` and `if`/`then`/`else` as the tool means them.
pub const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

/// A compiled input schema.
pub struct ArgSchema {
    validator: jsonschema::Validator,
    schema: Value,
}

impl ArgSchema {
    /// Compiles `schema`. A tool with a broken schema is a programming error, reported
    /// at registration.
    pub fn compile(schema: &Value) -> Result<ArgSchema, String> {
        jsonschema::validator_for(schema)
            .map(|validator| ArgSchema {
                validator,
                schema: schema.clone(),
            })
            .map_err(|e| e.to_string())
    }

    /// Checks `args`; the first problem decides the code, and every problem is listed
    /// in `details.errors`.
    pub fn check(&self, args: &Value) -> Result<(), ToolError> {
        let problems: Vec<(ErrorCode, String, String)> = self
            .validator
            .iter_errors(args)
            .map(|e| {
                let (code, field, mut reason) =
                    describe(e.kind(), e.instance_path().as_str(), e.instance());
                if code == ErrorCode::ValidationUnknownField {
                    reason.push_str(
                        &self.known_here(e.schema_path().as_str(), e.instance_path().as_str()),
                    );
                }
                (code, field, reason)
            })
            .collect();
        let Some((code, field, reason)) = problems.first().cloned() else {
            return Ok(());
        };
        let mut err = ToolError::field(code, field, reason);
        if problems.len() > 1 {
            let all: Vec<Value> = problems
                .iter()
                .map(|(c, f, r)| json!({"code": c.as_str(), "field": f, "reason": r}))
                .collect();
            err = err.with_extra("errors", Value::Array(all));
        }
        Err(err)
    }

    /// For an unknown argument: the arguments the object it was found in does take,
    /// from the schema at `schema_path` (which ends at that object's
    /// `additionalProperties`), so a caller sees the right name beside the wrong one.
    fn known_here(&self, schema_path: &str, instance_path: &str) -> String {
        const SHOWN: usize = 24;
        let Some(object) = schema_path
            .strip_suffix("/additionalProperties")
            .and_then(|at| self.schema.pointer(at))
        else {
            return String::new();
        };
        let Some(props) = object.get("properties").and_then(Value::as_object) else {
            return String::new();
        };
        let whose = match field_name(instance_path).as_str() {
            "arguments" => "its arguments are".to_string(),
            object => format!("{object} takes"),
        };
        if props.is_empty() {
            return format!("; {whose} none");
        }
        let names: Vec<&str> = props.keys().map(String::as_str).collect();
        let more = names.len().saturating_sub(SHOWN);
        format!(
            "; {whose} {}{}",
            names[..names.len().min(SHOWN)].join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        )
    }
}

/// Removes from `args` every `null` given for a property `schema` does not require,
/// in objects at any depth the schema describes (`properties`, and `items` of arrays).
/// A required property given as null stays, and the schema check refuses it.
pub fn drop_optional_nulls(schema: &Value, args: &mut Value) {
    match args {
        Value::Object(obj) => {
            let Some(props) = schema.get("properties").and_then(Value::as_object) else {
                return;
            };
            let required = schema.get("required").and_then(Value::as_array);
            let is_required = |k: &str| required.is_some_and(|r| r.iter().any(|x| x == k));
            obj.retain(|k, v| {
                !v.is_null() || is_required(k) || props.get(k).is_none_or(accepts_null)
            });
            for (k, v) in obj.iter_mut() {
                if let Some(sub) = props.get(k) {
                    drop_optional_nulls(sub, v);
                }
            }
        }
        Value::Array(items) => {
            if let Some(sub) = schema.get("items") {
                items.iter_mut().for_each(|v| drop_optional_nulls(sub, v));
            }
        }
        _ => {}
    }
}

/// True when a property's schema takes `null` as a value of its own: its type says
/// so, or it restricts no type at all (`structs_validate_schema`'s `data` may be
/// any JSON, null included). Such a null is given, not absent.
fn accepts_null(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "null"),
        Some(_) => false,
        None => ["enum", "const", "anyOf", "oneOf", "$ref"]
            .iter()
            .all(|k| schema.get(k).is_none()),
    }
}

/// `/a/0/b` → `a[0].b`; the root is `arguments`.
fn field_name(pointer: &str) -> String {
    if pointer.is_empty() || pointer == "/" {
        return "arguments".to_string();
    }
    let mut out = String::new();
    for seg in pointer.trim_start_matches('/').split('/') {
        let seg = seg.replace("~1", "/").replace("~0", "~");
        if seg.bytes().all(|b| b.is_ascii_digit()) && !out.is_empty() {
            out.push_str(&format!("[{seg}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&seg);
        }
    }
    out
}

fn join(parent: &str, child: &str) -> String {
    if parent == "arguments" {
        child.to_string()
    } else {
        format!("{parent}.{child}")
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn expected_types(kind: &TypeKind) -> String {
    match kind {
        TypeKind::Single(t) => t.to_string(),
        TypeKind::Multiple(ts) => ts
            .iter()
            .map(|t| t.to_string())
            .collect::<Vec<_>>()
            .join(" or "),
    }
}

fn short(v: &Value) -> String {
    let mut s = v.to_string();
    if s.len() > 60 {
        let mut cut = 57;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push_str("...");
    }
    s
}

fn describe(
    kind: &ValidationErrorKind,
    pointer: &str,
    instance: &Value,
) -> (ErrorCode, String, String) {
    let at = field_name(pointer);
    match kind {
        ValidationErrorKind::Required { property } => {
            let name = property.as_str().unwrap_or_default();
            (
                ErrorCode::ValidationMissingField,
                join(&at, name),
                "is required".to_string(),
            )
        }
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let name = unexpected.first().cloned().unwrap_or_default();
            (
                ErrorCode::ValidationUnknownField,
                join(&at, &name),
                format!(
                    "is not an argument of this tool{}",
                    if unexpected.len() > 1 {
                        format!(" (nor are {})", unexpected[1..].join(", "))
                    } else {
                        String::new()
                    }
                ),
            )
        }
        ValidationErrorKind::Type { kind } => (
            ErrorCode::ValidationWrongType,
            at,
            format!(
                "expected {}, got {}",
                expected_types(kind),
                type_name(instance)
            ),
        ),
        ValidationErrorKind::Minimum { limit }
        | ValidationErrorKind::ExclusiveMinimum { limit } => (
            ErrorCode::ValidationOutOfRange,
            at,
            format!("must be at least {limit}, got {}", short(instance)),
        ),
        ValidationErrorKind::Maximum { limit }
        | ValidationErrorKind::ExclusiveMaximum { limit } => (
            ErrorCode::ValidationOutOfRange,
            at,
            format!("must be at most {limit}, got {}", short(instance)),
        ),
        ValidationErrorKind::Pattern { pattern } => (
            ErrorCode::ValidationInvalidFormat,
            at,
            format!("must match {pattern}, got {}", short(instance)),
        ),
        ValidationErrorKind::MinLength { limit } => (
            ErrorCode::ValidationInvalidFormat,
            at,
            format!("must be at least {limit} characters long"),
        ),
        ValidationErrorKind::MaxLength { limit } => (
            ErrorCode::ValidationInvalidFormat,
            at,
            format!("must be at most {limit} characters long"),
        ),
        ValidationErrorKind::Enum { options } => (
            ErrorCode::ValidationInvalidValue,
            at,
            format!("must be one of {options}, got {}", short(instance)),
        ),
        other => (
            ErrorCode::ValidationError,
            at,
            format!("{other:?}").chars().take(200).collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> ArgSchema {
        ArgSchema::compile(&json!({
            "type": "object",
            "properties": {
                "player_id": {"type": "string", "pattern": "^[0-9]+-[0-9]+$"},
                "page_size": {"type": "integer", "minimum": 1, "maximum": 100},
                "kind": {"type": "string", "enum": ["a", "b"]}
            },
            "required": ["player_id"],
            "additionalProperties": false
        }))
        .unwrap()
    }

    fn err(args: Value) -> ToolError {
        schema().check(&args).unwrap_err()
    }

    #[test]
    fn maps_each_problem_to_a_code_and_field() {
        assert!(schema().check(&json!({"player_id": "1-1"})).is_ok());

        let e = err(json!({}));
        assert_eq!(e.code, ErrorCode::ValidationMissingField);
        assert_eq!(e.field.as_deref(), Some("player_id"));

        let e = err(json!({"player_id": "1-1", "colour": "red"}));
        assert_eq!(e.code, ErrorCode::ValidationUnknownField);
        assert_eq!(e.field.as_deref(), Some("colour"));

        let e = err(json!({"player_id": 11}));
        assert_eq!(e.code, ErrorCode::ValidationWrongType);
        assert_eq!(e.reason.as_deref(), Some("expected string, got integer"));

        let e = err(json!({"player_id": "1-1", "page_size": 101}));
        assert_eq!(e.code, ErrorCode::ValidationOutOfRange);
        assert_eq!(e.field.as_deref(), Some("page_size"));

        let e = err(json!({"player_id": "1-1", "page_size": 0}));
        assert_eq!(e.code, ErrorCode::ValidationOutOfRange);

        let e = err(json!({"player_id": "one"}));
        assert_eq!(e.code, ErrorCode::ValidationInvalidFormat);

        let e = err(json!({"player_id": "1-1", "kind": "c"}));
        assert_eq!(e.code, ErrorCode::ValidationInvalidValue);

        let e = err(json!([1, 2]));
        assert_eq!(e.code, ErrorCode::ValidationWrongType);
        assert_eq!(e.field.as_deref(), Some("arguments"));
    }

    #[test]
    fn several_problems_are_all_listed() {
        let e = err(json!({"page_size": "ten", "extra": 1}));
        let all = e.extra.get("errors").and_then(Value::as_array).unwrap();
        assert!(all.len() >= 3, "{all:?}");
    }

    #[test]
    fn nested_pointers_become_dotted_paths() {
        assert_eq!(field_name("/a/0/b"), "a[0].b");
        assert_eq!(field_name(""), "arguments");
        assert_eq!(field_name("/x~1y"), "x/y");
    }
}
