//! Readers of JSON values shared by every layer.

use serde_json::Value;

/// A whole-number argument. JSON Schema counts `2.0` as an integer, so a schema that
/// says `"type": "integer"` lets it through; this reads it as the integer it is.
pub fn whole_number(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= u64::MAX as f64)
            .map(|f| f as u64)
    })
}
