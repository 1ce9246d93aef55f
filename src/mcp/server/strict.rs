//! Strict answers to messages rmcp cannot take. Both transports run every incoming
//! message through [`check`] before rmcp sees it; what rmcp would drop without a word,
//! answer without the request's id, or answer with the wrong code is answered here
//! instead, and not passed on:
//!
//! | the message | answer |
//! |---|---|
//! | not JSON (bad syntax, nested deeper than [`MAX_NESTING`], a number beyond a double, not UTF-8) | `-32700` |
//! | JSON but no JSON-RPC request (a batch, a bare value, a wrong `jsonrpc`, an id that is not a string or an integer, no method) | `-32600` |
//! | a known method whose params do not fit it | `-32602`, saying what is wrong |
//! | an unknown method whose params rmcp cannot read | `-32601` |
//! | a notification or a response that cannot be read | none on stdio (JSON-RPC answers neither); HTTP 400 |
//! | a 2026-07-28 request (its `_meta` names that revision) for a method the revision removed: `initialize`, `ping`, `logging/setLevel`, `resources/subscribe`, `resources/unsubscribe` | `-32601`; HTTP 404 |
//!
//! Each answer goes under the request's id when the message holds one that can be read
//! (for text that is not JSON, [`crate::mcp::wire::request_id`] looks for it), else under
//! `null`, and carries the project's error object as its `data`. A known method is one
//! rmcp decodes into its typed requests; it would otherwise take the request for a
//! custom one and answer `-32601`. `arguments: null` in `tools/call` (and `params:
//! null` anywhere) is taken as left out, as rmcp reads it: the 2025-11-25 schema makes
//! both optional objects, and a null is what many clients send for one left out.
//!
//! Refusals are logged at warn level at most once a minute for each kind, with how many
//! went unlogged between, so a client flooding the server with bad lines cannot flood
//! its log; what the message held is never logged.
//!
//! Also here, for the handler: the answers to an unknown tool and to a list cursor this
//! server never gave, both `-32602` as the 2025-11-25 spec has them.

use crate::throttle::Every;

use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, ErrorCode as RpcCode, ErrorData, GetMeta, JsonRpcMessage,
    PaginatedRequestParams, ProtocolVersion, RequestId, ServerJsonRpcMessage,
};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::error::{ErrorCode, ToolError, echo};
use crate::mcp::wire::{now, request_id, rpc_error};

/// How deep objects and arrays may nest in one message (the message object itself is
/// the first level): what serde_json's recursion limit of 128 lets through. A message
/// nested deeper is not JSON to the parser (`-32700`).
pub const MAX_NESTING: usize = 127;

/// How often each kind of refusal may be logged.
pub const LOG_EVERY: std::time::Duration = std::time::Duration::from_secs(60);

/// What to do with one incoming message.
#[derive(Debug)]
pub enum Verdict {
    /// rmcp can take it.
    Pass,
    /// It is answered (or dropped) here and not passed on.
    Refuse(Refusal),
}

/// Why a message was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Not JSON.
    Parse,
    /// JSON, but not a JSON-RPC request.
    InvalidRequest,
    /// A request for a method the server does not have, with params rmcp cannot read.
    MethodNotFound,
    /// A request for a known method whose params do not fit it.
    InvalidParams,
    /// A notification or a response that cannot be read.
    Unreadable,
    /// A stateless (2026-07-28) request for a method that revision removed.
    Removed,
}

impl Kind {
    const ALL: [Kind; 6] = [
        Kind::Parse,
        Kind::InvalidRequest,
        Kind::MethodNotFound,
        Kind::InvalidParams,
        Kind::Unreadable,
        Kind::Removed,
    ];

    fn code(self) -> RpcCode {
        match self {
            Kind::Parse => RpcCode::PARSE_ERROR,
            Kind::InvalidRequest | Kind::Unreadable => RpcCode::INVALID_REQUEST,
            Kind::MethodNotFound | Kind::Removed => RpcCode::METHOD_NOT_FOUND,
            Kind::InvalidParams => RpcCode::INVALID_PARAMS,
        }
    }

    /// The line logged for this kind.
    fn log_line(self) -> &'static str {
        match self {
            Kind::Parse => "refused a message that is not JSON",
            Kind::InvalidRequest => "refused a message that is not a JSON-RPC request",
            Kind::MethodNotFound => "refused a request for a method this server does not have",
            Kind::InvalidParams => "refused a request whose params do not fit its method",
            Kind::Unreadable => "dropped a notification or response that cannot be read",
            Kind::Removed => "refused a 2026-07-28 request for a method that revision removed",
        }
    }

    fn index(self) -> usize {
        Kind::ALL.iter().position(|k| *k == self).unwrap_or(0)
    }
}

/// A refused message and its answer.
#[derive(Debug, Clone)]
pub struct Refusal {
    pub kind: Kind,
    /// The id the answer goes under (`None`: `null`).
    pub id: Option<RequestId>,
    pub error: ErrorData,
    /// The method it named, when it named one.
    pub method: Option<String>,
}

impl Refusal {
    fn new(kind: Kind, id: Option<RequestId>, error: ToolError) -> Refusal {
        Refusal {
            kind,
            id,
            error: rpc_error(kind.code(), &error),
            method: None,
        }
    }

    fn of(mut self, method: &str) -> Refusal {
        self.method = Some(method.to_string());
        self
    }

    /// Whether the message is answered on stdio: not a notification or a response,
    /// which JSON-RPC never answers.
    pub fn answered(&self) -> bool {
        self.kind != Kind::Unreadable
    }

    /// The JSON-RPC error message.
    pub fn answer(&self) -> ServerJsonRpcMessage {
        ServerJsonRpcMessage::error(self.error.clone(), self.id.clone())
    }

    /// The HTTP status: a request whose params or method are wrong is answered as any
    /// request is (200, the error under its id); a message that is no request at all
    /// is 400, as the streamable HTTP transport asks of input the server cannot take.
    pub fn http_status(&self) -> u16 {
        match self.kind {
            // The 2026-07-28 transport: a method the server does not serve is 404.
            Kind::Removed => 404,
            Kind::InvalidParams | Kind::MethodNotFound if self.id.is_some() => 200,
            _ => 400,
        }
    }

    /// Logs the refusal, at most once a minute for each kind.
    pub fn log(&self, transport: &'static str) {
        static EVERY: [Every; 6] = [const { Every::new(LOG_EVERY) }; 6];
        let Some(unlogged) = EVERY[self.kind.index()].ready() else {
            return;
        };
        // The client's own text, cut and escaped so that it cannot forge log lines.
        let method: Option<String> = self.method.as_deref().map(|m| {
            m.chars()
                .take(64)
                .collect::<String>()
                .escape_debug()
                .to_string()
        });
        tracing::warn!(
            transport,
            code = self.error.code.0,
            method = method.as_deref(),
            unlogged_since_last = unlogged,
            "{} (logged at most once a minute)",
            self.kind.log_line()
        );
    }
}

/// A request's error as it leaves a handler (`prompts/get`, `resources/read`,
/// `resources/subscribe`, `completion/complete`, …): cut so that it never quotes an
/// argument whole ([`crate::error::cut_for_wire`]), and logged at most once every
/// 10 s for all of them, with how many went unlogged.
pub fn bounded(method: &'static str, mut error: ErrorData) -> ErrorData {
    static EVERY: Every = Every::new(crate::throttle::WARN_EVERY);
    let mut message = error.message.to_string();
    crate::error::cut_for_wire(&mut message, error.data.as_mut());
    error.message = message.into();
    if let Some(unlogged) = EVERY.ready() {
        let said: String = error.message.chars().take(200).collect();
        tracing::warn!(
            method,
            code = error.code.0,
            unlogged_since_last = unlogged,
            "a request was answered with an error: {}",
            said.escape_debug()
        );
    }
    error
}

/// What a message is, for one incoming message (a stdio line without its newline, an
/// HTTP body).
pub fn check(message: &[u8]) -> Verdict {
    match parse(message) {
        Ok(_) => Verdict::Pass,
        Err(refusal) => Verdict::Refuse(*refusal),
    }
}

/// [`check`], keeping the message read when it passes: a transport that hands rmcp
/// messages, not bytes, reads each line once.
///
/// # Errors
///
/// The refusal, as [`check`] gives it.
pub fn parse(message: &[u8]) -> Result<ClientJsonRpcMessage, Box<Refusal>> {
    let message = message.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(message);
    if let Some(key) = twice_named(message) {
        let error = ToolError::new(
            ErrorCode::ValidationInvalidFormat,
            format!(
                "the message names {} twice; readers differ on which one counts (the \
                 headers' check and the dispatch could read two different ones), so \
                 nothing of it was run",
                echo(&json!(key))
            ),
        );
        return Err(Box::new(Refusal::new(
            Kind::InvalidRequest,
            request_id(message),
            error,
        )));
    }
    match crate::mcp::wire::read::client_message(message) {
        // The method first: only five are removed, and reading `_meta` costs more.
        Ok(JsonRpcMessage::Request(r))
            if REMOVED_METHODS.contains(&r.request.method())
                && is_stateless(r.request.get_meta())
                && let Some(refusal) = removed(r.request.method(), Some(r.id.clone())) =>
        {
            Err(Box::new(refusal))
        }
        Ok(JsonRpcMessage::Request(r)) => match &r.request {
            // rmcp took a known method for a custom one: its params did not fit.
            ClientRequest::CustomRequest(c) if is_known(&c.method) => {
                let value = serde_json::from_slice::<Value>(message).unwrap_or_default();
                Err(Box::new(bad_params(&c.method, Some(r.id.clone()), &value)))
            }
            ClientRequest::SubscriptionsListenRequest(listen) => {
                let uris = listen
                    .params
                    .notifications
                    .resource_subscriptions
                    .as_ref()
                    .map_or(0, Vec::len);
                match too_many_uris(uris, Some(r.id.clone())) {
                    Some(refusal) => Err(Box::new(refusal)),
                    None => Ok(JsonRpcMessage::Request(r)),
                }
            }
            _ => Ok(JsonRpcMessage::Request(r)),
        },
        Ok(other) => Ok(other),
        Err(_) => Err(Box::new(diagnose(message))),
    }
}

/// The first key the message's top-level object names twice, if any. Read with every
/// value skipped, so it costs one pass over the bytes; anything but an object is left
/// to the reader.
fn twice_named(message: &[u8]) -> Option<String> {
    struct FirstRepeat;
    impl<'de> serde::de::Visitor<'de> for FirstRepeat {
        type Value = Option<String>;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a JSON object")
        }

        fn visit_map<A: serde::de::MapAccess<'de>>(
            self,
            mut map: A,
        ) -> Result<Self::Value, A::Error> {
            // Read to the end: the map must close for the read to count.
            let (mut seen, mut repeated) = (std::collections::HashSet::new(), None);
            while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                map.next_value::<serde::de::IgnoredAny>()?;
                if !seen.insert(key.clone()) && repeated.is_none() {
                    repeated = Some(key.into_owned());
                }
            }
            Ok(repeated)
        }
    }
    use serde::Deserializer as _;
    serde_json::Deserializer::from_slice(message)
        .deserialize_map(FirstRepeat)
        .ok()
        .flatten()
}

/// Why rmcp cannot read `message`.
fn diagnose(message: &[u8]) -> Refusal {
    if let Err(e) = std::str::from_utf8(message) {
        let error = ToolError::new(
            ErrorCode::ValidationInvalidFormat,
            format!(
                "the message is not UTF-8: byte {} is not part of a character; nothing of \
                 it was run",
                e.valid_up_to()
            ),
        )
        .with_extra("byte", json!(e.valid_up_to()));
        return Refusal::new(Kind::Parse, request_id(message), error);
    }
    let value = match serde_json::from_slice::<Value>(message) {
        Ok(v) => v,
        Err(e) => {
            let error = ToolError::new(
                ErrorCode::ValidationInvalidFormat,
                format!("the message is not JSON: {e}; nothing of it was run"),
            )
            .with_extra("line", json!(e.line()))
            .with_extra("column", json!(e.column()));
            return Refusal::new(Kind::Parse, request_id(message), error);
        }
    };
    let Value::Object(object) = &value else {
        let what = if value.is_array() {
            "a batch (an array): MCP sends one message at a time, each a JSON object".to_string()
        } else {
            format!("{}: a JSON-RPC message is an object", kind_of(&value))
        };
        return not_a_request(None, "message", format!("the message is {what}"));
    };
    let id = object.get("id");
    let read_id = id.and_then(|v| RequestId::deserialize(v).ok());
    let method = object.get("method");
    let responds = object.contains_key("result") || object.contains_key("error");
    match (method, id) {
        // A notification: never answered, whatever is wrong with it.
        (Some(Value::String(m)), None) => unreadable(format!(
            "the notification {} cannot be read",
            echo(&json!(m))
        ))
        .of(m),
        (Some(Value::String(m)), Some(id)) => diagnose_request(m, id, read_id, &value, responds),
        (Some(other), _) => not_a_request(
            read_id,
            "method",
            format!("the method must be a string, not {}", echo(other)),
        ),
        (None, _) if responds => unreadable("a response that cannot be read".into()),
        (None, _) => not_a_request(
            read_id,
            "method",
            "the message names no method: a request needs one".into(),
        ),
    }
}

/// Why rmcp cannot read a request for `m` whose `id` is there.
fn diagnose_request(
    m: &str,
    id: &Value,
    read_id: Option<RequestId>,
    value: &Value,
    responds: bool,
) -> Refusal {
    let Some(read_id) = read_id else {
        return not_a_request(
            None,
            "id",
            format!(
                "the request's id must be a string or an integer, not {}",
                echo(id)
            ),
        )
        .of(m);
    };
    if value.get("jsonrpc") != Some(&json!("2.0")) {
        let got = value.get("jsonrpc").map_or("nothing".into(), echo);
        return not_a_request(
            Some(read_id),
            "jsonrpc",
            format!("jsonrpc must be \"2.0\", not {got}"),
        )
        .of(m);
    }
    if responds {
        return not_a_request(
            Some(read_id),
            "message",
            "a request holds no result or error".into(),
        )
        .of(m);
    }
    let version = value
        .pointer("/params/_meta")
        .and_then(|meta| meta.get(PROTOCOL_VERSION_KEY))
        .and_then(Value::as_str);
    if version.is_some_and(|v| v >= ProtocolVersion::V_2026_07_28.as_str())
        && let Some(refusal) = removed(m, Some(read_id.clone()))
    {
        return refusal;
    }
    if is_known(m) {
        return bad_params(m, Some(read_id), value);
    }
    let error = ToolError::field(
        ErrorCode::ValidationInvalidValue,
        "method",
        format!("this server has no method {}", echo(&json!(m))),
    )
    .with_message(format!("no method {}", echo(&json!(m))));
    Refusal::new(Kind::MethodNotFound, Some(read_id), error).of(m)
}

/// The most URIs one `subscriptions/listen` filter may name. The filter is refused
/// (`-32602`) before it is acknowledged: acknowledging costs rmcp time that grows with
/// the square of the count, and matching an event costs the same at any count.
pub const MAX_LISTEN_URIS: usize = 1_000;

/// A listen filter naming more than [`MAX_LISTEN_URIS`].
fn too_many_uris(uris: usize, id: Option<RequestId>) -> Option<Refusal> {
    if uris <= MAX_LISTEN_URIS {
        return None;
    }
    let error = ToolError::field(
        ErrorCode::ValidationOutOfRange,
        "notifications.resourceSubscriptions",
        format!(
            "a listen filter names at most {MAX_LISTEN_URIS} resources, and this one names \
             {uris}; follow fewer entities on one stream"
        ),
    )
    .with_extra("limit", json!(MAX_LISTEN_URIS))
    .with_extra("given", json!(uris));
    let message = format!(
        "invalid params for subscriptions/listen: {}",
        error.reason.as_deref().unwrap_or(&error.message)
    );
    Some(
        Refusal::new(Kind::InvalidParams, id, error.with_message(message))
            .of("subscriptions/listen"),
    )
}

/// Where a 2026-07-28 request names its revision.
const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";

/// Methods the 2026-07-28 revision removed: the handshake, `ping`, and what lived in a
/// session (its log level, its resource subscriptions).
pub const REMOVED_METHODS: [&str; 5] = [
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];

/// Whether a request's `_meta` names the stateless revision or a later one.
pub fn is_stateless(meta: &rmcp::model::RequestMetaObject) -> bool {
    meta.protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

/// Whether a message is an `initialize` request: a session begins with it.
pub fn is_initialize(message: &ClientJsonRpcMessage) -> bool {
    matches!(message, JsonRpcMessage::Request(r)
        if matches!(r.request, ClientRequest::InitializeRequest(_)))
}

/// The refusal of a request that names a revision served in a session (2025-11-25 and
/// before) in its `_meta`, sent where no session has begun (a stdio connection before
/// its `initialize`): such a revision's requests belong to a session, and one served
/// without it would be refused later for the wrong reason (a destructive call's
/// "elicitation not declared"). `None` for anything else.
pub fn needs_session(message: &ClientJsonRpcMessage) -> Option<Refusal> {
    let JsonRpcMessage::Request(r) = message else {
        return None;
    };
    if is_initialize(message) {
        return None;
    }
    let version = r.request.get_meta().protocol_version()?;
    if version.as_str() >= ProtocolVersion::V_2026_07_28.as_str() {
        return None;
    }
    let method = r.request.method().to_string();
    let error = ToolError::field(
        ErrorCode::ValidationRequirementsNotMet,
        "_meta.io.modelcontextprotocol/protocolVersion",
        format!(
            "the request names protocol {}, whose requests are served in a session, and \
             no session has begun: send initialize first, or name {} in _meta to be \
             served without one",
            version.as_str(),
            ProtocolVersion::V_2026_07_28.as_str()
        ),
    );
    let message = error.reason.clone().unwrap_or_default();
    Some(
        Refusal::new(
            Kind::InvalidRequest,
            Some(r.id.clone()),
            error.with_message(message),
        )
        .of(&method),
    )
}

/// The refusal of a stateless request for a removed method, if `method` is one.
fn removed(method: &str, id: Option<RequestId>) -> Option<Refusal> {
    let replacement = match method {
        "initialize" => {
            "send each request with its own _meta; server/discover says what this server speaks"
        }
        "ping" => "any request shows that the server is there",
        "logging/setLevel" => {
            "ask for log messages per request with _meta's io.modelcontextprotocol/logLevel"
        }
        "resources/subscribe" | "resources/unsubscribe" => {
            "open subscriptions/listen with resourceSubscriptions, and cancel it to stop"
        }
        _ => return None,
    };
    let error = ToolError::field(
        ErrorCode::ValidationInvalidValue,
        "method",
        format!("2026-07-28 removed {method}: {replacement}"),
    )
    .with_message(format!(
        "no method {method} in protocol 2026-07-28; {replacement}"
    ));
    Some(Refusal::new(Kind::Removed, id, error).of(method))
}

fn not_a_request(id: Option<RequestId>, field: &str, reason: String) -> Refusal {
    let error = ToolError::field(ErrorCode::ValidationInvalidFormat, field, reason.clone())
        .with_message(format!("not a JSON-RPC request: {reason}"));
    Refusal::new(Kind::InvalidRequest, id, error)
}

fn unreadable(reason: String) -> Refusal {
    let error = ToolError::new(ErrorCode::ValidationInvalidFormat, reason);
    Refusal::new(Kind::Unreadable, None, error)
}

/// The refusal of a request for `method`, known, whose params (in `message`) do not
/// fit: what is wrong with the commonest params in words, else serde's account.
fn bad_params(method: &str, id: Option<RequestId>, message: &Value) -> Refusal {
    let params = message.get("params").filter(|p| !p.is_null());
    let error = match params {
        Some(p) if !p.is_object() => Some(ToolError::field(
            ErrorCode::ValidationWrongType,
            "params",
            format!(
                "the params of {method} must be an object (named params), not {}",
                kind_of(p)
            ),
        )),
        _ => {
            let empty = serde_json::Map::new();
            let params = params.and_then(Value::as_object).unwrap_or(&empty);
            match method {
                "tools/call" | "prompts/get" => {
                    let thing = if method == "tools/call" {
                        "tool"
                    } else {
                        "prompt"
                    };
                    required_string(method, params, "name", &format!("the {thing}'s name"))
                        .or_else(|| optional_object(method, params, "arguments"))
                }
                "resources/read" | "resources/subscribe" | "resources/unsubscribe" => {
                    required_string(method, params, "uri", "the resource's URI")
                }
                _ => None,
            }
        }
    };
    let error = error.unwrap_or_else(|| {
        let why = typed_error(method, message).unwrap_or_else(|| "they cannot be read".into());
        ToolError::field(ErrorCode::ValidationError, "params", why)
    });
    let message = format!(
        "invalid params for {method}: {}",
        error.reason.as_deref().unwrap_or(&error.message)
    );
    Refusal::new(Kind::InvalidParams, id, error.with_message(message)).of(method)
}

fn required_string(
    method: &str,
    params: &serde_json::Map<String, Value>,
    name: &str,
    what: &str,
) -> Option<ToolError> {
    let field = format!("params.{name}");
    match params.get(name) {
        None | Some(Value::Null) => Some(ToolError::field(
            ErrorCode::ValidationMissingField,
            field,
            format!("{method} needs {name}: {what}"),
        )),
        Some(Value::String(_)) => None,
        Some(v) => Some(ToolError::field(
            ErrorCode::ValidationWrongType,
            field,
            format!("{name} must be a string, not {} ({})", kind_of(v), echo(v)),
        )),
    }
}

fn optional_object(
    method: &str,
    params: &serde_json::Map<String, Value>,
    name: &str,
) -> Option<ToolError> {
    match params.get(name) {
        None | Some(Value::Null) | Some(Value::Object(_)) => None,
        Some(v) => Some(ToolError::field(
            ErrorCode::ValidationWrongType,
            format!("params.{name}"),
            format!(
                "{name} of {method} must be an object (or left out), not {} ({})",
                kind_of(v),
                echo(v)
            ),
        )),
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The request methods rmcp decodes into its typed requests (each with the type it
/// decodes into), and what that decoding says of `message`.
macro_rules! known_requests {
    ($($method:literal => $ty:ty),* $(,)?) => {
        /// The methods of [`ClientRequest`]'s typed variants.
        pub const KNOWN_METHODS: &[&str] = &[$($method),*];

        pub(super) fn typed_error(method: &str, message: &Value) -> Option<String> {
            match method {
                $($method => <$ty>::deserialize(message).err().map(|e| e.to_string()),)*
                _ => None,
            }
        }
    };
}

// Logging and resources/subscribe are deprecated by the 2026-07-28 revision, which
// this server does not speak; they are still known methods of the ones it does.
#[allow(deprecated)]
mod typed {
    use super::*;
    known_requests! {
        "ping" => rmcp::model::PingRequest,
        "initialize" => rmcp::model::InitializeRequest,
        "server/discover" => rmcp::model::DiscoverRequest,
        "completion/complete" => rmcp::model::CompleteRequest,
        "logging/setLevel" => rmcp::model::SetLevelRequest,
        "prompts/get" => rmcp::model::GetPromptRequest,
        "prompts/list" => rmcp::model::ListPromptsRequest,
        "resources/list" => rmcp::model::ListResourcesRequest,
        "resources/templates/list" => rmcp::model::ListResourceTemplatesRequest,
        "resources/read" => rmcp::model::ReadResourceRequest,
        "subscriptions/listen" => rmcp::model::SubscriptionsListenRequest,
        "resources/subscribe" => rmcp::model::SubscribeRequest,
        "resources/unsubscribe" => rmcp::model::UnsubscribeRequest,
        "tools/call" => rmcp::model::CallToolRequest,
        "tools/list" => rmcp::model::ListToolsRequest,
        "tasks/get" => rmcp::model::GetTaskRequest,
        "tasks/update" => rmcp::model::UpdateTaskRequest,
        "tasks/cancel" => rmcp::model::CancelTaskRequest,
        "skills/list" => rmcp::model::ListSkillsRequest,
        "skills/get" => rmcp::model::GetSkillRequest,
        "resources/directory/read" => rmcp::model::ReadResourceDirectoryRequest,
    }
}
use typed::{KNOWN_METHODS, typed_error};

fn is_known(method: &str) -> bool {
    KNOWN_METHODS.contains(&method)
}

/// The answer to `tools/call` of a tool the server does not have: `-32602`, the nearest
/// names in its message, and the `TOOL_NOT_FOUND` error (with `suggestions`) as data.
pub fn unknown_tool(error: &ToolError) -> ErrorData {
    let suggestions: Vec<&str> = error
        .extra
        .get("suggestions")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut message = error.message.clone();
    if !suggestions.is_empty() {
        message = format!("{message}; did you mean {}?", suggestions.join(", "));
    }
    ErrorData::invalid_params(message, Some(error.to_json(&now())))
}

/// `Ok` unless the request carries a cursor: this server's lists come whole, in one
/// page, so any cursor is one it never gave.
pub fn no_cursor(method: &str, request: Option<&PaginatedRequestParams>) -> Result<(), ErrorData> {
    no_cursor_given(method, request.and_then(|r| r.cursor.as_deref()))
}

/// [`no_cursor`] for a request whose params hold a cursor beside others
/// (`resources/directory/read`).
pub fn no_cursor_given(method: &str, cursor: Option<&str>) -> Result<(), ErrorData> {
    let Some(cursor) = cursor else {
        return Ok(());
    };
    let error = ToolError::field(
        ErrorCode::ValidationInvalidValue,
        "params.cursor",
        format!(
            "this server never gave the cursor {}: its lists come whole, in one page, \
             with no nextCursor; ask again without one",
            echo(&json!(cursor))
        ),
    );
    let message = format!(
        "invalid cursor for {method}: {}",
        error.reason.as_deref().unwrap_or_default()
    );
    Err(rpc_error(
        RpcCode::INVALID_PARAMS,
        &error.with_message(message),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_named_twice_is_refused_before_any_reader_picks_one() {
        let r = refused(
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","method":"tools/call","params":{}}"#,
        );
        assert_eq!(r.http_status(), 400);
        let answer = serde_json::to_value(r.answer()).unwrap();
        assert_eq!(answer["id"], 7);
        assert_eq!(answer["error"]["code"], -32600);
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains("\"method\" twice"), "{message}");
        // Twice in params is the params' reader's to judge; once each passes.
        assert!(matches!(
            check(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#),
            Verdict::Pass
        ));
        assert_eq!(
            twice_named(br#"{"a":1,"b":{"a":2},"a":3}"#).as_deref(),
            Some("a")
        );
        assert_eq!(twice_named(br#"{"a":1,"b":{"a":2}}"#), None);
        assert_eq!(twice_named(b"[1,2]"), None);
        assert_eq!(
            twice_named(br#"{"a\u0062":1,"ab":2}"#).as_deref(),
            Some("ab")
        );
    }

    fn refused(text: &str) -> Refusal {
        match check(text.as_bytes()) {
            Verdict::Refuse(r) => r,
            Verdict::Pass => panic!("{text} passed"),
        }
    }

    /// A 2026-07-28 `_meta`, for the stateless cases.
    const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

    #[test]
    fn a_stateless_request_for_a_removed_method_is_404_and_method_not_found() {
        for (method, params) in [
            ("initialize", ""),
            ("ping", ""),
            ("logging/setLevel", r#""level":"info","#),
            ("logging/setLevel", ""),
            ("resources/subscribe", r#""uri":"structs://entities/1-1","#),
            ("resources/unsubscribe", ""),
        ] {
            let text = format!(
                r#"{{"jsonrpc":"2.0","id":7,"method":"{method}","params":{{{params}{META}}}}}"#
            );
            let r = refused(&text);
            assert_eq!(r.kind, Kind::Removed, "{text}");
            assert_eq!(r.error.code, RpcCode::METHOD_NOT_FOUND, "{text}");
            assert_eq!(r.http_status(), 404, "{text}");
            assert_eq!(r.id, Some(RequestId::Number(7)));
            assert!(r.error.message.contains(method), "{}", r.error.message);
        }
        // The same methods in a session are served as before.
        for text in [
            r#"{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"info"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        ] {
            assert!(matches!(check(text.as_bytes()), Verdict::Pass), "{text}");
        }
        // A stateless request for a method it has is checked as any other.
        let ok = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{META}}}}}"#);
        assert!(matches!(check(ok.as_bytes()), Verdict::Pass));
        let bad = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":5,{META}}}}}"#
        );
        assert_eq!(refused(&bad).kind, Kind::InvalidParams);
    }

    #[test]
    fn well_formed_messages_pass() {
        for text in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":null}}"#,
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/list","params":null}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"no/such/method","params":{"x":1}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":{}}"#,
            "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}",
        ] {
            assert!(matches!(check(text.as_bytes()), Verdict::Pass), "{text}");
        }
    }

    #[test]
    fn every_known_method_refuses_params_that_are_not_an_object() {
        for method in KNOWN_METHODS {
            let text = format!(r#"{{"jsonrpc":"2.0","id":9,"method":"{method}","params":[]}}"#);
            let r = refused(&text);
            assert_eq!(r.kind, Kind::InvalidParams, "{method}");
            assert_eq!(r.id, Some(RequestId::Number(9)), "{method}");
            assert_eq!(r.error.code, RpcCode::INVALID_PARAMS, "{method}");
            assert!(
                r.error.message.contains(method),
                "{method}: {}",
                r.error.message
            );
            assert!(typed_error(method, &json!({"method": method, "params": []})).is_some());
        }
    }

    #[test]
    fn the_typed_request_beside_each_method_is_that_methods() {
        // Each typed request refuses another method's name, so a method paired with
        // the wrong type would refuse its own well-formed requests.
        let good = json!({"method": "tools/list", "params": {}});
        assert_eq!(typed_error("tools/list", &good), None);
        assert!(typed_error("resources/list", &good).is_some());
        let good = json!({"method": "resources/read", "params": {"uri": "x"}});
        assert_eq!(typed_error("resources/read", &good), None);
        assert!(typed_error("resources/subscribe", &good).is_some());
    }

    #[test]
    fn what_is_wrong_is_said_in_words() {
        let r = refused(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#);
        let data = &r.error.data.as_ref().unwrap()["error"];
        assert_eq!(data["code"], "VALIDATION_MISSING_FIELD");
        assert_eq!(data["details"]["field"], "params.name");
        assert_eq!(
            r.error.message,
            "invalid params for tools/call: tools/call needs name: the tool's name"
        );
        let r = refused(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":[1]}}"#,
        );
        assert_eq!(
            r.error.data.as_ref().unwrap()["error"]["details"]["field"],
            "params.arguments"
        );
        assert!(
            r.error
                .message
                .contains("must be an object (or left out), not an array")
        );
        let r =
            refused(r#"{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":9}}"#);
        assert!(
            r.error
                .message
                .starts_with("invalid params for logging/setLevel: ")
        );
    }

    #[test]
    fn ids_are_recovered_where_they_can_be() {
        let r = refused(r#"{"jsonrpc":"2.0","id":"x","method":"tools/list","#);
        assert_eq!(
            (r.kind, r.id),
            (Kind::Parse, Some(RequestId::String("x".into())))
        );
        let r = refused("{oops");
        assert_eq!((r.kind, r.id), (Kind::Parse, None));
        let r = refused(r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#);
        assert_eq!((r.kind, r.id), (Kind::InvalidRequest, None));
        let r = refused(r#"{"jsonrpc":"2.0","id":1.0,"method":"ping","params":7}"#);
        assert_eq!(
            (r.kind, r.id),
            (Kind::InvalidParams, Some(RequestId::Number(1)))
        );
    }

    #[test]
    fn notifications_and_responses_are_never_answered() {
        for text in [
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":5}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":5}"#,
        ] {
            let r = refused(text);
            assert_eq!(r.kind, Kind::Unreadable, "{text}");
            assert!(!r.answered(), "{text}");
            assert_eq!(r.http_status(), 400, "{text}");
        }
    }

    #[test]
    fn nesting_is_taken_to_the_parsers_limit_and_no_further() {
        // The request object is one level; its params another; the rest is arrays.
        let message = |depth: usize| {
            let inner = format!("{}1{}", "[".repeat(depth - 2), "]".repeat(depth - 2));
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"x/y","params":{{"a":{inner}}}}}"#)
        };
        let v = check(message(MAX_NESTING).as_bytes());
        assert!(matches!(v, Verdict::Pass), "{v:?}");
        let r = refused(&message(MAX_NESTING + 1));
        assert_eq!((r.kind, r.id), (Kind::Parse, Some(RequestId::Number(1))));
        assert!(
            r.error.message.contains("recursion limit"),
            "{}",
            r.error.message
        );
    }

    #[test]
    fn a_listen_filter_names_at_most_the_cap() {
        let listen = |n: usize| {
            let uris: Vec<String> = (0..n)
                .map(|i| format!("structs://entities/1-{i}"))
                .collect();
            let message = json!({"jsonrpc": "2.0", "id": 9, "method": "subscriptions/listen",
                "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {}},
                    "notifications": {"resourceSubscriptions": uris}}});
            serde_json::to_vec(&message).unwrap()
        };
        assert!(matches!(check(&listen(1)), Verdict::Pass));
        assert!(matches!(check(&listen(MAX_LISTEN_URIS)), Verdict::Pass));
        let Verdict::Refuse(over) = check(&listen(MAX_LISTEN_URIS + 1)) else {
            panic!("one over the cap passed");
        };
        assert_eq!(over.http_status(), 200);
        let answer = serde_json::to_value(over.answer()).unwrap();
        assert_eq!(answer["id"], 9);
        assert_eq!(answer["error"]["code"], -32602);
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains("at most 1000"), "{message}");
    }

    #[test]
    fn a_cursor_is_refused_and_none_is_fine() {
        assert!(no_cursor("tools/list", None).is_ok());
        assert!(no_cursor("tools/list", Some(&PaginatedRequestParams::default())).is_ok());
        let e = no_cursor(
            "tools/list",
            Some(&PaginatedRequestParams::default().with_cursor(Some("abc".into()))),
        )
        .unwrap_err();
        assert_eq!(e.code, RpcCode::INVALID_PARAMS);
        assert!(e.message.contains("\"abc\""), "{}", e.message);
    }
}
