//! The one error format every tool uses:
//! `{"error": {"code", "message", "details": {"field", "reason"}, "resource_uri", "timestamp"}}`.

use serde::Serialize;
use serde_json::{Value, json};

use crate::entity::{EntityId, EntityKind, IdError};

/// The most bytes of serialized JSON any response may have: results over it become
/// handles, and an error is cut to fit it.
pub const RESPONSE_LIMIT: usize = 25_600;

/// Error codes. Each starts with its category: `VALIDATION_`, `API_`, `RESOURCE_`,
/// `TOOL_` or `RATE_LIMIT_`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    /// A schema rule not covered by a more specific code.
    ValidationError,
    /// A required argument is absent.
    ValidationMissingField,
    /// An argument the tool does not take.
    ValidationUnknownField,
    /// An argument of the wrong JSON type.
    ValidationWrongType,
    /// A string that does not have the required format (ids, keys).
    ValidationInvalidFormat,
    /// A number outside its allowed range.
    ValidationOutOfRange,
    /// A well-formed id of another entity kind than the one asked for.
    ValidationWrongEntityType,
    /// A value not in the allowed set.
    ValidationInvalidValue,
    /// A well-formed action the game's rules refuse now (not enough charge or power,
    /// the wrong location, an invalid proof); `details.missing_requirements` lists why.
    ValidationRequirementsNotMet,
    /// A plan that cannot run as written (`details.problems` lists each problem).
    ValidationInvalidPlan,
    /// A step reference that found nothing when its step ran (`details.reference`,
    /// `details.path`, `details.missing`).
    ValidationUnresolvedReference,
    /// The entity or resource does not exist.
    ResourceNotFound,
    /// The resource existed but has expired (a result handle past its TTL).
    ResourceExpired,
    /// The store that keeps resources (result handles) cannot be reached.
    ResourceUnavailable,
    /// The resource cannot be changed here (the embedded docs).
    ResourceReadOnly,
    /// No tool of that name is registered.
    ToolNotFound,
    /// The tool failed while running.
    ToolExecutionFailed,
    /// The tool ran out of time or iterations.
    ToolTimeout,
    /// The caller cancelled the call before it finished.
    ToolCancelled,
    /// The game source answered with an error.
    ApiError,
    /// The game source could not be reached.
    ApiUnavailable,
    /// Too many requests.
    RateLimitExceeded,
    /// An HTTP request without the server's bearer token.
    Unauthorized,
}

impl ErrorCode {
    /// Every code.
    pub const ALL: [ErrorCode; 23] = [
        ErrorCode::ValidationError,
        ErrorCode::ValidationMissingField,
        ErrorCode::ValidationUnknownField,
        ErrorCode::ValidationWrongType,
        ErrorCode::ValidationInvalidFormat,
        ErrorCode::ValidationOutOfRange,
        ErrorCode::ValidationWrongEntityType,
        ErrorCode::ValidationInvalidValue,
        ErrorCode::ValidationRequirementsNotMet,
        ErrorCode::ValidationInvalidPlan,
        ErrorCode::ValidationUnresolvedReference,
        ErrorCode::ResourceNotFound,
        ErrorCode::ResourceExpired,
        ErrorCode::ResourceUnavailable,
        ErrorCode::ResourceReadOnly,
        ErrorCode::ToolNotFound,
        ErrorCode::ToolExecutionFailed,
        ErrorCode::ToolTimeout,
        ErrorCode::ToolCancelled,
        ErrorCode::ApiError,
        ErrorCode::ApiUnavailable,
        ErrorCode::RateLimitExceeded,
        ErrorCode::Unauthorized,
    ];

    /// The code its wire name names (`VALIDATION_ERROR`).
    pub fn parse(name: &str) -> Option<ErrorCode> {
        ErrorCode::ALL.into_iter().find(|c| c.as_str() == name)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::ValidationError => "VALIDATION_ERROR",
            ErrorCode::ValidationMissingField => "VALIDATION_MISSING_FIELD",
            ErrorCode::ValidationUnknownField => "VALIDATION_UNKNOWN_FIELD",
            ErrorCode::ValidationWrongType => "VALIDATION_WRONG_TYPE",
            ErrorCode::ValidationInvalidFormat => "VALIDATION_INVALID_FORMAT",
            ErrorCode::ValidationOutOfRange => "VALIDATION_OUT_OF_RANGE",
            ErrorCode::ValidationWrongEntityType => "VALIDATION_WRONG_ENTITY_TYPE",
            ErrorCode::ValidationInvalidValue => "VALIDATION_INVALID_VALUE",
            ErrorCode::ValidationRequirementsNotMet => "VALIDATION_REQUIREMENTS_NOT_MET",
            ErrorCode::ValidationInvalidPlan => "VALIDATION_INVALID_PLAN",
            ErrorCode::ValidationUnresolvedReference => "VALIDATION_UNRESOLVED_REFERENCE",
            ErrorCode::ResourceNotFound => "RESOURCE_NOT_FOUND",
            ErrorCode::ResourceExpired => "RESOURCE_EXPIRED",
            ErrorCode::ResourceUnavailable => "RESOURCE_UNAVAILABLE",
            ErrorCode::ResourceReadOnly => "RESOURCE_READ_ONLY",
            ErrorCode::ToolNotFound => "TOOL_NOT_FOUND",
            ErrorCode::ToolExecutionFailed => "TOOL_EXECUTION_FAILED",
            ErrorCode::ToolTimeout => "TOOL_TIMEOUT",
            ErrorCode::ToolCancelled => "TOOL_CANCELLED",
            ErrorCode::ApiError => "API_ERROR",
            ErrorCode::ApiUnavailable => "API_UNAVAILABLE",
            ErrorCode::RateLimitExceeded => "RATE_LIMIT_EXCEEDED",
            ErrorCode::Unauthorized => "UNAUTHORIZED",
        }
    }
}

/// A structured tool error. `details` names the argument at fault and why; `extra`
/// carries anything more a caller can act on (the other errors, suggestions).
///
/// Boxed so that `Result<_, ToolError>` stays one pointer wide on the success path; the
/// fields are reached through `Deref`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError(Box<ErrorBody>);

/// The fields of a [`ToolError`].
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorBody {
    pub code: ErrorCode,
    pub message: String,
    pub field: Option<String>,
    pub reason: Option<String>,
    pub resource_uri: Option<String>,
    pub extra: serde_json::Map<String, Value>,
}

impl std::ops::Deref for ToolError {
    type Target = ErrorBody;
    fn deref(&self) -> &ErrorBody {
        &self.0
    }
}

impl std::ops::DerefMut for ToolError {
    fn deref_mut(&mut self) -> &mut ErrorBody {
        &mut self.0
    }
}

/// The longest text an error carries in one string (its message, its reason, a
/// string in its details) before it is cut.
pub const TEXT_MAX_CHARS: usize = 2_000;

/// Characters of a caller's value an error quotes before cutting it.
const ECHO_MAX_CHARS: usize = 80;

/// A caller's value as an error quotes it: its JSON, cut after 80 characters with its
/// whole length stated, so a 100 KB argument never comes back in the answer.
pub fn echo(v: &Value) -> String {
    let text = v.to_string();
    let n = text.chars().count();
    if n <= ECHO_MAX_CHARS {
        return text;
    }
    let head: String = text.chars().take(ECHO_MAX_CHARS - 20).collect();
    match v {
        Value::String(s) => format!("{head}…\" (a string of {} characters)", s.chars().count()),
        _ => format!("{head}… ({n} characters of JSON)"),
    }
}

/// A caller's string as an error quotes it ([`echo`]).
pub fn quote(s: &str) -> String {
    echo(&Value::String(s.to_string()))
}

/// `s` cut to `max` characters, saying how long it was.
fn cut_text(s: &mut String, max: usize) {
    let n = s.chars().count();
    if n > max {
        let head: String = s.chars().take(max).collect();
        *s = format!("{head}… (cut: {n} characters in all)");
    }
}

/// A protocol error's message and data as they leave: the message cut at
/// [`TEXT_MAX_CHARS`], every string in the data too, and its arrays at 100 items, each
/// cut saying how long the whole was; so that no argument comes back whole.
pub fn cut_for_wire(message: &mut String, data: Option<&mut Value>) {
    cut_text(message, TEXT_MAX_CHARS);
    if let Some(data) = data {
        cut_value(data, TEXT_MAX_CHARS, 100);
    }
}

/// Cuts every string in `v` to `max` characters and every array to `items` items.
fn cut_value(v: &mut Value, max: usize, items: usize) {
    match v {
        Value::String(s) => cut_text(s, max),
        Value::Array(a) => {
            if a.len() > items {
                let n = a.len();
                a.truncate(items);
                a.push(json!(format!("… (cut: {n} items in all)")));
            }
            a.iter_mut().for_each(|v| cut_value(v, max, items));
        }
        Value::Object(m) => m.values_mut().for_each(|v| cut_value(v, max, items)),
        _ => {}
    }
}

impl ToolError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ToolError {
        let mut message = message.into();
        cut_text(&mut message, TEXT_MAX_CHARS);
        ToolError(Box::new(ErrorBody {
            code,
            message,
            field: None,
            reason: None,
            resource_uri: None,
            extra: serde_json::Map::new(),
        }))
    }

    /// An error about one argument: `field` is its name (dotted path when nested).
    pub fn field(
        code: ErrorCode,
        field: impl Into<String>,
        reason: impl Into<String>,
    ) -> ToolError {
        let mut field = field.into();
        cut_text(&mut field, ECHO_MAX_CHARS * 4);
        let mut reason = reason.into();
        cut_text(&mut reason, TEXT_MAX_CHARS);
        let message = format!("invalid argument {field}: {reason}");
        let mut e = ToolError::new(code, message);
        e.field = Some(field);
        e.reason = Some(reason);
        e
    }

    pub fn not_found(id: impl std::fmt::Display, field: Option<&str>) -> ToolError {
        let id = id.to_string();
        let mut e = ToolError::new(ErrorCode::ResourceNotFound, format!("{id} not found"));
        e.field = field.map(str::to_string);
        e.reason = Some(format!("no entity with id {id} exists on this source"));
        e.resource_uri = Some(format!("{}{id}", crate::entity::ENTITY_URI));
        e.extra.insert("id".into(), Value::String(id));
        e
    }

    pub fn with_message(mut self, message: impl Into<String>) -> ToolError {
        self.message = message.into();
        cut_text(&mut self.message, TEXT_MAX_CHARS);
        self
    }

    pub fn with_resource_uri(mut self, uri: impl Into<String>) -> ToolError {
        self.resource_uri = Some(uri.into());
        self
    }

    pub fn with_extra(mut self, key: &str, value: Value) -> ToolError {
        self.extra.insert(key.to_string(), value);
        self
    }

    /// The error a wire form describes (what [`ToolError::to_json`] wrote, as another
    /// server sent it), or `None` when `v` is not one. A code this build does not know
    /// becomes `TOOL_EXECUTION_FAILED` with the server's code kept as `remote_code`.
    pub fn from_wire(v: &Value) -> Option<ToolError> {
        let error = v.get("error")?.as_object()?;
        let name = error.get("code")?.as_str()?;
        let message = error.get("message").and_then(Value::as_str).unwrap_or(name);
        let mut e = match ErrorCode::parse(name) {
            Some(code) => ToolError::new(code, message),
            None => ToolError::new(ErrorCode::ToolExecutionFailed, message)
                .with_extra("remote_code", json!(name)),
        };
        if let Some(details) = error.get("details").and_then(Value::as_object) {
            for (k, v) in details {
                match (k.as_str(), v) {
                    ("field", Value::String(s)) => e.field = Some(s.clone()),
                    ("reason", Value::String(s)) => e.reason = Some(s.clone()),
                    _ => {
                        e.extra.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        if let Some(uri) = error.get("resource_uri").and_then(Value::as_str) {
            e.resource_uri = Some(uri.to_string());
        }
        Some(e)
    }

    /// The wire form, stamped with `timestamp` (RFC 3339). It is never over the
    /// response limit ([`RESPONSE_LIMIT`]): texts are cut to
    /// [`TEXT_MAX_CHARS`], and details that still do not fit are cut further, then
    /// left out (saying so).
    pub fn to_json(&self, timestamp: &str) -> Value {
        let mut message = self.message.clone();
        cut_text(&mut message, TEXT_MAX_CHARS);
        let mut details = serde_json::Map::new();
        if let Some(field) = &self.field {
            let mut field = field.clone();
            cut_text(&mut field, ECHO_MAX_CHARS * 4);
            details.insert("field".into(), json!(field));
        }
        if let Some(reason) = &self.reason {
            let mut reason = reason.clone();
            cut_text(&mut reason, TEXT_MAX_CHARS);
            details.insert("reason".into(), json!(reason));
        }
        for (k, v) in &self.extra {
            let mut v = v.clone();
            cut_value(&mut v, TEXT_MAX_CHARS, 200);
            details.insert(k.clone(), v);
        }
        let wire = |details: &serde_json::Map<String, Value>| {
            let mut error = serde_json::Map::new();
            error.insert("code".into(), json!(self.code.as_str()));
            error.insert("message".into(), json!(message));
            error.insert("details".into(), Value::Object(details.clone()));
            if let Some(uri) = &self.resource_uri {
                error.insert("resource_uri".into(), json!(uri));
            }
            error.insert("timestamp".into(), json!(timestamp));
            json!({ "error": Value::Object(error) })
        };
        let limit = RESPONSE_LIMIT;
        let fits = |v: &Value| crate::json::encoded_len(v) <= limit;
        let mut out = wire(&details);
        if fits(&out) {
            return out;
        }
        let mut smaller = details.clone();
        smaller
            .values_mut()
            .for_each(|v| cut_value(v, ECHO_MAX_CHARS * 2, 20));
        out = wire(&smaller);
        if fits(&out) {
            return out;
        }
        let mut bare = serde_json::Map::new();
        for k in ["field", "reason"] {
            if let Some(v) = smaller.get(k) {
                bare.insert(k.into(), v.clone());
            }
        }
        bare.insert(
            "details_cut".into(),
            json!(format!(
                "the details ({}) were too large for one answer",
                details.keys().cloned().collect::<Vec<_>>().join(", ")
            )),
        );
        wire(&bare)
    }
}

/// The JSON Schema of the wire form ([`ToolError::to_json`]): what a failed call's
/// `structuredContent` is. Short, as every tool's output schema holds it: the code by
/// its pattern (a category, then words; [`ErrorCode::ALL`] lists them).
pub fn wire_schema() -> Value {
    let text = json!({"type": "string"});
    json!({
        "type": "object",
        "required": ["error"],
        "properties": {
            "error": {
                "type": "object",
                "required": ["code", "message", "details", "timestamp"],
                "properties": {
                    "code": {"type": "string", "pattern": CODE_PATTERN},
                    "message": text,
                    "details": {"type": "object"},
                    "resource_uri": text,
                    "timestamp": text
                },
                "additionalProperties": false
            }
        },
        "additionalProperties": false
    })
}

/// What every [`ErrorCode`]'s wire name matches.
pub const CODE_PATTERN: &str = "^((VALIDATION|API|RESOURCE|TOOL|RATE_LIMIT)_[A-Z_]+|UNAUTHORIZED)$";

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

impl std::error::Error for ToolError {}

/// An entity id read from an argument (or a state field) named `field`, checked to be
/// of the `expected` kind when one is given.
pub fn parse_id(
    text: &str,
    field: &str,
    expected: Option<EntityKind>,
) -> Result<EntityId, ToolError> {
    let id = EntityId::parse(text).map_err(|e| id_error(&e, field))?;
    if let Some(kind) = expected
        && id.kind != kind
    {
        return Err(wrong_kind(field, id, kind));
    }
    Ok(id)
}

/// The reference doc on entity ids, which an id error points at.
pub const ENTITY_ID_DOC_URI: &str = "structs://docs/schemas/entity-ids";

pub fn id_error(e: &IdError, field: &str) -> ToolError {
    ToolError::field(ErrorCode::ValidationInvalidFormat, field, e.to_string())
        .with_resource_uri(ENTITY_ID_DOC_URI)
}

pub fn wrong_kind(field: &str, id: EntityId, expected: EntityKind) -> ToolError {
    ToolError::field(
        ErrorCode::ValidationWrongEntityType,
        field,
        format!(
            "expected a {expected} id ({}-N), got {id}, which is a {}",
            expected.code(),
            id.kind
        ),
    )
    .with_extra("expected_type", Value::String(expected.name().into()))
    .with_extra("actual_type", Value::String(id.kind.name().into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wire_form_of_every_code_validates_against_the_wire_schema() {
        let schema = jsonschema::validator_for(&wire_schema()).unwrap();
        for c in ErrorCode::ALL {
            let e = ToolError::field(c, "x", "y").with_resource_uri("structs://docs/x");
            assert!(
                schema.is_valid(&e.to_json("2026-01-01T00:00:00Z")),
                "{}",
                c.as_str()
            );
        }
        let mut e = ToolError::new(ErrorCode::ApiError, "z").to_json("t");
        e["error"]["code"] = json!("OOPS");
        assert!(!schema.is_valid(&e));
    }

    #[test]
    fn wire_form_has_the_brief_shape() {
        let e = ToolError::field(
            ErrorCode::ValidationInvalidFormat,
            "player_id",
            "expected {type}-{index}",
        );
        let v = e.to_json("2026-01-01T00:00:00Z");
        assert_eq!(v["error"]["code"], "VALIDATION_INVALID_FORMAT");
        assert_eq!(v["error"]["details"]["field"], "player_id");
        assert_eq!(v["error"]["details"]["reason"], "expected {type}-{index}");
        assert_eq!(v["error"]["timestamp"], "2026-01-01T00:00:00Z");
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains("player_id")
        );
    }

    #[test]
    fn the_wire_form_reads_back_as_the_same_error() {
        for code in ErrorCode::ALL {
            assert_eq!(ErrorCode::parse(code.as_str()), Some(code));
        }
        let e = ToolError::not_found("1-999", Some("player_id")).with_extra("n", json!(3));
        let back = ToolError::from_wire(&e.to_json("t")).unwrap();
        assert_eq!(back, e);
        let odd = json!({"error": {"code": "NEW_CODE", "message": "m"}});
        let back = ToolError::from_wire(&odd).unwrap();
        assert_eq!(back.code, ErrorCode::ToolExecutionFailed);
        assert_eq!(back.extra["remote_code"], "NEW_CODE");
        assert!(ToolError::from_wire(&json!({"error": "text"})).is_none());
        assert!(ToolError::from_wire(&json!({"ok": true})).is_none());
    }

    #[test]
    fn echoed_values_are_cut_and_no_error_is_over_the_limit() {
        let huge = "x".repeat(100_000);
        assert_eq!(echo(&json!("abc")), "\"abc\"");
        let e = echo(&json!(huge));
        assert!(
            e.len() < 120 && e.ends_with("(a string of 100000 characters)"),
            "{e}"
        );
        let e = echo(&json!([huge]));
        assert!(
            e.len() < 120 && e.ends_with("(100004 characters of JSON)"),
            "{e}"
        );

        // Whatever the error holds, its wire form fits one answer.
        let limit = RESPONSE_LIMIT;
        let e = ToolError::field(
            ErrorCode::ValidationInvalidValue,
            huge.clone(),
            huge.clone(),
        )
        .with_extra("value", json!(huge))
        .with_extra("many", json!(vec![huge.clone(); 500]))
        .with_extra("deep", json!({"a": [{"b": huge}]}));
        let v = e.to_json("t");
        let size = serde_json::to_vec(&v).unwrap().len();
        assert!(size <= limit, "{size} bytes");
        let message = v["error"]["message"].as_str().unwrap();
        assert!(
            message.ends_with("characters in all)"),
            "{}",
            &message[message.len() - 60..]
        );
        assert_eq!(v["error"]["code"], "VALIDATION_INVALID_VALUE");
        // Many small details that together are too large are cut, not dropped whole.
        let e = ToolError::new(ErrorCode::ValidationError, "m")
            .with_extra("errors", json!(vec!["y".repeat(1_000); 100]));
        let v = e.to_json("t");
        assert!(serde_json::to_vec(&v).unwrap().len() <= limit);
        assert_eq!(
            v["error"]["details"]["errors"].as_array().unwrap().len(),
            21
        );
        // A small error is untouched.
        let small = ToolError::not_found("1-999", Some("player_id"));
        assert_eq!(ToolError::from_wire(&small.to_json("t")).unwrap(), small);
    }

    #[test]
    fn not_found_names_the_id() {
        let v = ToolError::not_found("1-999", Some("player_id")).to_json("t");
        assert_eq!(v["error"]["code"], "RESOURCE_NOT_FOUND");
        assert_eq!(v["error"]["details"]["id"], "1-999");
        assert!(v["error"]["message"].as_str().unwrap().contains("1-999"));
        assert_eq!(v["error"]["resource_uri"], "structs://entities/1-999");
    }
}
