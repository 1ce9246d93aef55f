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

/// Checks the answers given to a round of a server's input requests (the
/// `inputResponses` a call is sent again with, as an operator edits them at a
/// breakpoint) against what the server asked (`inputRequests`): one answer for each
/// request and none other, each of the shape its method answers; an accepted
/// elicitation's content fits the form the server asked for (`requestedSchema`).
///
/// # Errors
///
/// When they do not, saying which answer and why.
pub fn check_input_responses(asked: &Value, given: &Value) -> Result<(), String> {
    let Some(given) = given.as_object() else {
        return Err(format!(
            "the answers are an object, one per question by its key, not {given}"
        ));
    };
    let Some(asked) = asked.as_object() else {
        return Ok(());
    };
    if let Some(extra) = given.keys().find(|k| !asked.contains_key(*k)) {
        return Err(format!(
            "{extra:?} answers nothing the server asked (it asked {})",
            asked.keys().cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    for (key, request) in asked {
        let Some(answer) = given.get(key) else {
            return Err(format!("{key:?} is asked and not answered"));
        };
        check_one(request, answer).map_err(|why| format!("{key:?}: {why}"))?;
    }
    Ok(())
}

fn check_one(request: &Value, answer: &Value) -> Result<(), String> {
    match request["method"].as_str() {
        Some("elicitation/create") => {
            let action = answer["action"].as_str().unwrap_or("");
            if !matches!(action, "accept" | "decline" | "cancel") {
                return Err(format!(
                    "an elicitation is answered with \"action\": accept, decline or cancel, not {}",
                    answer["action"]
                ));
            }
            let schema = &request["params"]["requestedSchema"];
            if action == "accept" && schema.is_object() {
                let content = answer.get("content").cloned().unwrap_or(json!({}));
                let compiled = crate::tools::schema::ArgSchema::compile(schema)
                    .map_err(|e| format!("the form the server asked for is not a schema: {e}"))?;
                compiled.check(&content).map_err(|e| {
                    format!(
                        "the content does not fit the form the server asked for: {} {}",
                        e.code.as_str(),
                        e.reason.as_deref().unwrap_or(&e.message)
                    )
                })?;
            }
            Ok(())
        }
        Some("sampling/createMessage") => {
            if answer["role"] != "assistant" || !answer["content"].is_object() {
                return Err(
                    "a sampling request is answered with {\"role\": \"assistant\", \"content\": {\"type\": \"text\", \"text\": …}, \"model\": …}"
                        .into(),
                );
            }
            Ok(())
        }
        Some("roots/list") => match answer["roots"].as_array() {
            Some(roots) if roots.iter().all(|r| r["uri"].is_string()) => Ok(()),
            _ => Err(
                "a roots request is answered with {\"roots\": [{\"uri\": \"file://…\"}]}".into(),
            ),
        },
        _ => Ok(()),
    }
}

#[cfg(test)]
mod round_tests {
    use super::*;

    #[test]
    fn the_answers_to_a_round_are_checked_against_what_was_asked() {
        let asked = json!({"confirm": {"method": "elicitation/create", "params": {
            "message": "Delete x?", "requestedSchema": {"type": "object",
                "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}}}});
        let yes = json!({"confirm": {"action": "accept", "content": {"confirm": true}}});
        assert_eq!(check_input_responses(&asked, &yes), Ok(()));
        assert_eq!(
            check_input_responses(&asked, &json!({"confirm": {"action": "decline"}})),
            Ok(())
        );
        let wrong = json!({"confirm": {"action": "accept", "content": {"confirm": "yes"}}});
        let why = check_input_responses(&asked, &wrong).unwrap_err();
        assert!(why.contains("does not fit the form"), "{why}");
        let missing = check_input_responses(&asked, &json!({})).unwrap_err();
        assert!(missing.contains("not answered"), "{missing}");
        let extra = json!({"confirm": {"action": "cancel"}, "other": {}});
        assert!(
            check_input_responses(&asked, &extra)
                .unwrap_err()
                .contains("answers nothing")
        );
        let bad = json!({"confirm": {"action": "maybe"}});
        assert!(
            check_input_responses(&asked, &bad)
                .unwrap_err()
                .contains("accept, decline or cancel")
        );
        let sample = json!({"s": {"method": "sampling/createMessage", "params": {}}});
        assert!(check_input_responses(&sample, &json!({"s": {"role": "user"}})).is_err());
        assert!(
            check_input_responses(
                &sample,
                &json!({"s": {"role": "assistant", "content": {"type": "text", "text": "ok"}}})
            )
            .is_ok()
        );
    }
}
