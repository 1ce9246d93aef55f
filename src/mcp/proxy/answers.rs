//! What the proxy answers in the server's stead, and what it takes as an answer: a
//! response line, a tool result as our server writes one, a result's text cut to a
//! budget (the `truncate` fault), the key answers are kept under, and the check that an
//! edited or typed answer is a whole tool result an agent's SDK takes.

use serde_json::{Value, json};

use crate::tools::schema::ArgSchema;

/// `{"jsonrpc":"2.0","id":…,"result":…}` as a line.
pub(super) fn response_line(id: &Value, result: &Value) -> Vec<u8> {
    let mut bytes = json!({"jsonrpc": "2.0", "id": id, "result": result})
        .to_string()
        .into_bytes();
    bytes.push(b'\n');
    bytes
}

/// A tool result as our server writes one: the value as text and as structured
/// content (when an object), `isError` for an error.
pub(super) fn tool_result(value: &Value, is_error: bool) -> Value {
    let mut result = json!({"content": [{"type": "text", "text": value.to_string()}]});
    if value.is_object() {
        result["structuredContent"] = value.clone();
    }
    if is_error {
        result["isError"] = json!(true);
    }
    result
}

/// Cuts a tool result's text to `budget` bytes in all (at a character's edge): the
/// text items in order, the one the budget ends in cut, those after it and what else
/// follows them left out. Its structured content and `isError` stay as they were, so
/// that an agent whose SDK checks the tool's output schema still takes the answer and
/// reads the cut text (an answer with no structured content, the SDKs refuse).
pub(super) fn truncate_text(result: &mut Value, budget: usize) {
    let Some(content) = result["content"].as_array_mut() else {
        return;
    };
    let mut left = budget;
    let mut keep = content.len();
    for (i, item) in content.iter_mut().enumerate() {
        let Some(text) = item["text"].as_str().filter(|_| item["type"] == "text") else {
            continue;
        };
        if text.len() <= left {
            left -= text.len();
            continue;
        }
        let mut cut = left;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        item["text"] = json!(text[..cut].to_string());
        keep = i + 1;
        break;
    }
    content.truncate(keep);
}

pub(super) fn answer_key(tool: &str, args: &Value) -> String {
    format!("{tool} {args}")
}

/// Checks that `result` is a whole tool result (`content`, and `structuredContent`,
/// `isError` when given) that an agent takes: one that is not an error fits the tool's
/// output schema, when it declares one (an SDK refuses an answer that does not, or
/// that has no structured content). The reason says what is wrong.
///
/// # Errors
///
/// When it is not, saying why.
pub fn check_tool_result(result: &Value, output_schema: Option<&Value>) -> Result<(), String> {
    const SHAPE: &str = "{\"content\": [{\"type\": \"text\", \"text\": …}], \"structuredContent\": {…}, \"isError\": false}";
    let Some(fields) = result.as_object() else {
        return Err(format!(
            "a result is the whole tool result, {SHAPE}, not {result}"
        ));
    };
    let content = fields
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| {
            format!(
                "a result is the whole tool result, {SHAPE}: \"content\" is missing or not a list"
            )
        })?;
    if let Some((n, _)) = content
        .iter()
        .enumerate()
        .find(|(_, c)| !c["type"].is_string())
    {
        return Err(format!(
            "content[{n}] is not a content item: it needs a \"type\" (\"text\", …)"
        ));
    }
    if let Some((n, _)) = content
        .iter()
        .enumerate()
        .find(|(_, c)| c["type"] == "text" && !c["text"].is_string())
    {
        return Err(format!(
            "content[{n}] is text: its \"text\" must be a string"
        ));
    }
    let is_error = match fields.get("isError") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => return Err(format!("\"isError\" is true or false, not {other}")),
    };
    let structured = fields.get("structuredContent");
    if let Some(s) = structured
        && !s.is_object()
    {
        return Err(format!("\"structuredContent\" is an object, not {s}"));
    }
    if is_error {
        return Ok(());
    }
    let Some(schema) = output_schema else {
        return Ok(());
    };
    let Some(structured) = structured else {
        return Err(
            "the tool declares an output schema: a result that is not an error needs \"structuredContent\" that fits it".into(),
        );
    };
    let compiled = ArgSchema::compile(schema)
        .map_err(|e| format!("the tool's output schema does not compile: {e}"))?;
    compiled.check(structured).map_err(|e| {
        format!(
            "\"structuredContent\" does not fit the tool's output schema: {}{}: {}",
            e.code.as_str(),
            e.field
                .as_deref()
                .map_or(String::new(), |f| format!(" at {f}")),
            e.reason.as_deref().unwrap_or(&e.message)
        )
    })
}
