//! What every MCP room speaks (the server, the client, the proxy and the control feed):
//! JSON-RPC framing and its size limits, request ids read from a message's first bytes,
//! and the JSON-RPC error answers a message is refused with. The HTTP plumbing both HTTP
//! faces share is in [`http`], their accept loop in [`listen`], and the fast reader of a
//! client's message in [`read`]. No room's own rules live
//! here, only what two rooms would otherwise each write.

pub mod http;
pub mod listen;
pub mod read;
pub mod span;

use rmcp::model::{ErrorCode as RpcCode, ErrorData, RequestId, ServerJsonRpcMessage};
use serde_json::{Value, json};

use crate::error::{ErrorCode, ToolError};

/// The largest message a client may send, the same over stdio and HTTP (a tool call's
/// arguments are small; a plan with many steps is the biggest thing an agent sends).
pub const MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;

/// The name this project's server gives itself in `serverInfo`: a console attached
/// to a server of that name knows its tools are the Structs catalog.
pub const SERVER_NAME: &str = "structs-console";

/// The `_meta` key under which the server sends a progress report's own figures (the
/// proof-of-work search's hash rate, for one), so a console attached over MCP draws
/// what a local one does.
pub const PROGRESS_DATA_KEY: &str = "structs-console/data";

/// The longest line taken whole from a peer that is not this server's client: the
/// tap's lines each way, an upstream server's messages, and a feed's lines (a log line
/// around one of these). A longer one is passed on (the tap) or let go and said, never
/// kept.
pub const PEER_LINE_MAX: usize = 16 * 1024 * 1024;

/// The runtime of a face that serves one client over one pipe (the stdio server, and
/// the tap before a host over stdio): one worker thread unless `TOKIO_WORKER_THREADS`
/// says more. One client's messages arrive in order on one pipe; on a second worker
/// each crossed threads twice, and those wake-ups cost the stdio server nearly half of
/// a call's CPU, and the tap a tenth of its rate (`benches/peers.rs`). Work that takes
/// CPU (the proof-of-work search, the docs index) has threads of its own.
///
/// # Errors
///
/// The runtime's, when the thread cannot be started.
pub fn stdio_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if std::env::var_os("TOKIO_WORKER_THREADS").is_none() {
        builder.worker_threads(1);
    }
    builder.enable_all().build()
}

/// The request id at the top level of a JSON object's first bytes, if they hold one
/// whole: `{"jsonrpc":"2.0","id":7,"method":…` gives 7. Ids inside `params` are not
/// the request's and are passed over.
pub fn request_id(prefix: &[u8]) -> Option<RequestId> {
    let mut depth = 0usize;
    let mut key_next = false;
    let mut i = 0;
    while i < prefix.len() {
        match prefix[i] {
            b'"' => {
                let end = string_end(prefix, i)?;
                if depth == 1 && key_next {
                    if &prefix[i + 1..end] == b"id" {
                        let rest = prefix[end + 1..].trim_ascii_start().strip_prefix(b":")?;
                        return serde_json::Deserializer::from_slice(rest)
                            .into_iter::<RequestId>()
                            .next()?
                            .ok();
                    }
                    key_next = false;
                }
                i = end;
            }
            b'{' | b'[' => {
                depth += 1;
                key_next = depth == 1 && prefix[i] == b'{';
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            b',' if depth == 1 => key_next = true,
            _ => {}
        }
        i += 1;
    }
    None
}

/// The index of the quote that closes the string opening at `start`.
fn string_end(text: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < text.len() {
        match text[i] {
            b'\\' => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// The answer to a message over `max` bytes, `bytes` long when that is known (an HTTP
/// body sent in chunks is cut at the limit, its length never learnt).
pub fn too_large_answer(
    id: Option<RequestId>,
    bytes: Option<usize>,
    max: usize,
) -> ServerJsonRpcMessage {
    let size = match bytes {
        Some(bytes) => format!("{bytes} bytes"),
        None => "longer".to_string(),
    };
    let mut error = ToolError::new(
        ErrorCode::ValidationOutOfRange,
        format!(
            "the message is {size}, over the {max}-byte limit for one message; \
             nothing of it was read"
        ),
    );
    if let Some(bytes) = bytes {
        error = error.with_extra("bytes", json!(bytes));
    }
    let error = error
        .with_extra("limit_bytes", json!(max))
        .to_json(&chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true));
    let message = error["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    ServerJsonRpcMessage::error(
        ErrorData::new(RpcCode::INVALID_REQUEST, message, Some(error)),
        id,
    )
}

/// A JSON-RPC error whose message is the error's and whose data is its wire form.
pub fn rpc_error(code: RpcCode, error: &ToolError) -> ErrorData {
    let data = error.to_json(&now());
    let message = data["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    ErrorData::new(code, message, Some(data))
}

/// Now, as the error objects of refusals stamp it (milliseconds, UTC).
pub fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// What a request is about: the tool or prompt by name, the resource by URI, the
/// completion's prompt or template, the task by id; `None` for the rest (lists, the
/// handshake, pings).
pub fn request_target<'a>(method: &str, params: &'a Value) -> Option<&'a str> {
    match method {
        "tools/call" | "prompts/get" => params["name"].as_str(),
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => {
            params["uri"].as_str()
        }
        "completion/complete" => params["ref"]["name"]
            .as_str()
            .or_else(|| params["ref"]["uri"].as_str()),
        m if m.starts_with("tasks/") => params["taskId"].as_str(),
        _ => None,
    }
}

/// A `tools/call` result, as JSON, read as the core answers and as `--headless`
/// records: the structured content, else the text blocks read as a JSON object, else
/// `{"content": blocks}`. `Err` when the result says `isError`.
pub fn tool_outcome(result: &Value) -> Result<Value, Value> {
    let value = match result.get("structuredContent").filter(|v| !v.is_null()) {
        Some(v) => v.clone(),
        None => serde_json::from_str::<Value>(&content_text(result))
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

/// The text blocks of a result's content, joined by new lines.
pub fn content_text(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}
