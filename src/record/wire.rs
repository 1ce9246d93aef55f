//! A tool call's answer as the host got it, kept whole beside the value a log compares.
//!
//! A response line holds a tool call's answer as one value (`result`, or `error` for a
//! result marked `isError`): its `structuredContent`, else its text read as JSON, else
//! `{"content": […]}`. That is what a replay compares, but not what the host got: the
//! result's other content blocks (a resource link), its `resultType`, its `_meta`, or a
//! text that is not the value's JSON are lost. A tap therefore writes `wire` too (from
//! version 5): the result with what the value already holds replaced by markers, so a
//! result of the usual shape costs nothing and any other a few bytes:
//!
//! - `"structuredContent": true`: the value;
//! - a text block `{"type": "text", "textIsValue": true}`: the value's JSON, compact;
//! - `"content": true`: the value's `content` (a result with no structured content whose
//!   text is not JSON).
//!
//! A result of exactly `{"content": [{"type": "text", "text": JSON}], "structuredContent":
//! VALUE, "isError": BOOL}` has no `wire` at all. [`rebuild`] gives the result back, byte
//! for byte as JSON (keys in their order), from the value and `wire`.

use serde_json::{Map, Value, json};

const TEXT_MARK: &str = "textIsValue";

/// What of `result` (a tool call's result as the host got it) the value `value` does not
/// hold; `None` when the result is of the usual shape.
pub fn shrink(result: &Value, value: &Value) -> Option<Value> {
    let Value::Object(r) = result else {
        return Some(result.clone());
    };
    let text = value.to_string();
    let mut w = Map::new();
    for (k, v) in r {
        let kept = match k.as_str() {
            "structuredContent" if v == value => Value::Bool(true),
            "content"
                if value.get("content") == Some(v)
                    && value.as_object().is_some_and(|o| o.len() == 1) =>
            {
                Value::Bool(true)
            }
            "content" => match v {
                Value::Array(blocks) => {
                    Value::Array(blocks.iter().map(|b| mark_text(b, &text)).collect())
                }
                other => other.clone(),
            },
            _ => v.clone(),
        };
        w.insert(k.clone(), kept);
    }
    let usual = w.len() == 3
        && w.keys()
            .map(String::as_str)
            .eq(["content", "structuredContent", "isError"])
        && w["content"] == json!([{"type": "text", TEXT_MARK: true}])
        && w["structuredContent"] == Value::Bool(true)
        && w["isError"].is_boolean();
    (!usual).then_some(Value::Object(w))
}

/// A text block whose text is `text`, with the text replaced by the marker in its place.
fn mark_text(block: &Value, text: &str) -> Value {
    let Value::Object(b) = block else {
        return block.clone();
    };
    if b.get("type") != Some(&json!("text")) || b.get("text").and_then(Value::as_str) != Some(text)
    {
        return block.clone();
    }
    Value::Object(
        b.iter()
            .map(|(k, v)| {
                if k == "text" {
                    (TEXT_MARK.to_string(), Value::Bool(true))
                } else {
                    (k.clone(), v.clone())
                }
            })
            .collect(),
    )
}

/// The result the host got, from the recorded value, whether it was an error result,
/// and the line's `wire` (none: the usual shape).
pub fn rebuild(value: &Value, is_error: bool, wire: Option<&Value>) -> Value {
    let text = value.to_string();
    let Some(Value::Object(w)) = wire else {
        return json!({
            "content": [{"type": "text", "text": text}],
            "structuredContent": value,
            "isError": is_error,
        });
    };
    let mut r = Map::new();
    for (k, v) in w {
        let given = match (k.as_str(), v) {
            ("structuredContent", Value::Bool(true)) => value.clone(),
            ("content", Value::Bool(true)) => value.get("content").cloned().unwrap_or(Value::Null),
            ("content", Value::Array(blocks)) => {
                Value::Array(blocks.iter().map(|b| unmark_text(b, &text)).collect())
            }
            _ => v.clone(),
        };
        r.insert(k.clone(), given);
    }
    Value::Object(r)
}

fn unmark_text(block: &Value, text: &str) -> Value {
    match block {
        Value::Object(b) if b.get(TEXT_MARK) == Some(&Value::Bool(true)) => Value::Object(
            b.iter()
                .map(|(k, v)| {
                    if k == TEXT_MARK {
                        ("text".to_string(), Value::String(text.to_string()))
                    } else {
                        (k.clone(), v.clone())
                    }
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The value a log keeps of `result`, as a tap reads it.
    fn tool_outcome(result: &Value) -> Result<Value, Value> {
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        let value = match result.get("structuredContent") {
            Some(v) => v.clone(),
            None => serde_json::from_str::<Value>(text)
                .ok()
                .filter(Value::is_object)
                .unwrap_or_else(|| json!({ "content": result["content"] })),
        };
        if result["isError"] == true {
            Err(value)
        } else {
            Ok(value)
        }
    }

    /// What a tap writes and a server answering from the log gives back: the same bytes.
    fn round_trip(result: Value) -> Option<Value> {
        let (value, is_error) = match tool_outcome(&result) {
            Ok(v) => (v, false),
            Err(v) => (v, true),
        };
        let wire = shrink(&result, &value);
        let back = rebuild(&value, is_error, wire.as_ref());
        assert_eq!(back.to_string(), result.to_string(), "byte for byte");
        wire
    }

    #[test]
    fn the_usual_result_needs_no_wire_and_every_other_comes_back_whole() {
        let v = json!({"player": {"id": "1-1", "n": 1.5}, "a": [1, 2]});
        let usual = json!({"content": [{"type": "text", "text": v.to_string()}],
                           "structuredContent": v, "isError": false});
        assert_eq!(round_trip(usual), None);
        // A link beside the text, and the 2026-07-28 result type.
        let linked = json!({"resultType": "complete",
            "content": [{"type": "text", "text": v.to_string()},
                        {"type": "resource_link", "uri": "structs://handles/x", "name": "x"}],
            "structuredContent": v, "isError": false});
        let wire = round_trip(linked).unwrap();
        assert!(
            !wire.to_string().contains("1-1"),
            "the value is not kept twice: {wire}"
        );
        // A text that is not JSON (a server of another kind).
        let echo = json!({"content": [{"type": "text", "text": "Echo: hi"}]});
        let wire = round_trip(echo).unwrap();
        assert_eq!(wire, json!({"content": true}));
        // An error result, and a result whose text differs from its structured content.
        let failed = json!({"content": [{"type": "text", "text": "{\"error\":{\"code\":\"X\"}}"}],
                            "structuredContent": {"error": {"code": "X"}}, "isError": true});
        assert_eq!(round_trip(failed), None);
        let odd = json!({"content": [{"type": "text", "text": "summary"}],
                         "structuredContent": {"n": 1}, "_meta": {"k": 1}});
        assert!(round_trip(odd).is_some());
        // Images and audio pass as they are.
        let image = json!({"content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}],
                           "isError": false});
        round_trip(image);
    }
}
