//! The console's side of a connection: what it says of itself in the handshake (its
//! name, version and capabilities) and how it answers what the server asks of it.
//!
//! A server may ask the client for a model's reply (`sampling/createMessage`), for the
//! user's input (`elicitation/create`) or for the client's roots (`roots/list`). There
//! is no model here: the operator plays it. Each request becomes an [`Ask`]: a script
//! answers it at once by its [`Script`], the console queues it until the operator
//! answers in the Server tab ([`Answers::Operator`]).

// Sampling and roots are deprecated in the newest protocol (SEP-2577), but servers of
// every earlier version ask for them, and this client answers them.
#![allow(deprecated)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    ClientCapabilities, ClientInfo, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ElicitationCapability, ErrorCode as RpcCode, ErrorData,
    FormElicitationCapability, Implementation, ListRootsResult, ProgressNotificationParam,
    ProgressToken, ProtocolVersion, RootsCapabilities, SamplingCapability,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ClientHandler, RoleClient};
use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::traffic::lock;
use crate::context::{CallContext, ProgressUpdate};
use crate::mcp::wire::PROGRESS_DATA_KEY;

/// The JSON-RPC code a client answers a sampling request it will not serve with, as
/// the specification's examples do ("User rejected sampling request").
pub const SAMPLING_REJECTED: i32 = -1;

/// The model name a reply typed by the operator carries.
pub const OPERATOR_MODEL: &str = "structs-console operator";

/// Progress sinks by the progress token of the request they belong to.
pub(super) type ProgressSinks = Arc<Mutex<HashMap<ProgressToken, CallContext>>>;

/// What the server asked of the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AskKind {
    /// `sampling/createMessage`: a model's reply to the messages.
    Sampling,
    /// `elicitation/create`: the user's input, to a form built from a schema.
    Elicitation,
}

impl AskKind {
    /// The request's method name.
    pub fn method(self) -> &'static str {
        match self {
            AskKind::Sampling => "sampling/createMessage",
            AskKind::Elicitation => "elicitation/create",
        }
    }
}

/// How the operator (or a script) answers an [`Ask`].
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// Sampling: this text, as the assistant's message.
    Sampled(String),
    /// Sampling: refused, answered with a JSON-RPC error.
    Reject,
    /// Elicitation: accepted with these values.
    Accept(Value),
    /// Elicitation: declined (the user said no).
    Decline,
    /// Elicitation: cancelled (the user dismissed it).
    Cancel,
}

/// A request from the server waiting for its answer.
#[derive(Debug)]
pub struct Ask {
    /// Its number on this connection, from 1.
    pub seq: u64,
    pub kind: AskKind,
    /// The request's params as the server sent them (messages, model preferences and
    /// token limit; or the message and the requested schema).
    pub params: Value,
    reply: Option<oneshot::Sender<Reply>>,
}

impl Ask {
    /// Answers the server. False when it no longer waits (it gave up, or the
    /// connection closed).
    pub fn answer(mut self, reply: Reply) -> bool {
        self.reply.take().is_some_and(|tx| tx.send(reply).is_ok())
    }
}

/// What a script does with an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElicitPolicy {
    /// Accept, with each field's default (a required field without one gets its first
    /// allowed value, or an empty one of its type).
    AcceptDefaults,
    Decline,
    Cancel,
}

/// How a script answers the server's requests.
#[derive(Debug, Clone, PartialEq)]
pub struct Script {
    pub elicitation: ElicitPolicy,
    /// `Some(text)` replies with the text; `None` rejects.
    pub sampling: Option<String>,
    /// Answers to a form's fields by name (`--answer confirm=true`), each typed by the
    /// form's schema. Any of them accepts the form, over its defaults.
    pub fields: Vec<(String, String)>,
}

impl Default for Script {
    /// Declines elicitations and rejects sampling: nothing is said for the user
    /// unless a flag says what.
    fn default() -> Script {
        Script {
            elicitation: ElicitPolicy::Decline,
            sampling: None,
            fields: Vec::new(),
        }
    }
}

/// Who answers the server's requests.
#[derive(Debug, Clone)]
pub enum Answers {
    /// A script, at once.
    Script(Script),
    /// The operator: requests wait in [`Asks`] until answered.
    Operator,
}

/// The most requests that wait for the operator at once; the server's next is refused
/// at once with a JSON-RPC error, saying so.
pub const ASKS_MAX: usize = 100;

/// The requests waiting for the operator, oldest first.
#[derive(Default)]
pub struct Asks {
    next: AtomicU64,
    waiting: Mutex<Vec<Ask>>,
    /// Requests refused because [`ASKS_MAX`] were waiting.
    refused: AtomicU64,
}

impl Asks {
    /// The requests waiting, oldest first: their numbers, kinds and params.
    pub fn waiting(&self) -> Vec<(u64, AskKind, Value)> {
        lock(&self.waiting)
            .iter()
            .filter(|a| a.reply.as_ref().is_some_and(|tx| !tx.is_closed()))
            .map(|a| (a.seq, a.kind, a.params.clone()))
            .collect()
    }

    /// How many requests are waiting: [`Asks::waiting`]'s length, without copying
    /// their params.
    pub fn count(&self) -> usize {
        lock(&self.waiting)
            .iter()
            .filter(|a| a.reply.as_ref().is_some_and(|tx| !tx.is_closed()))
            .count()
    }

    /// Answers request `seq`. False when there is no such request waiting.
    pub fn answer(&self, seq: u64, reply: Reply) -> bool {
        let ask = {
            let mut waiting = lock(&self.waiting);
            waiting.retain(|a| a.reply.as_ref().is_some_and(|tx| !tx.is_closed()));
            let Some(at) = waiting.iter().position(|a| a.seq == seq) else {
                return false;
            };
            waiting.remove(at)
        };
        ask.answer(reply)
    }

    /// How many of the server's requests were refused because [`ASKS_MAX`] waited.
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    /// Puts a request in the queue; `None` (and it is counted as refused) when
    /// [`ASKS_MAX`] are waiting already. Those the server gave up on make room.
    fn push(&self, kind: AskKind, params: Value) -> Option<oneshot::Receiver<Reply>> {
        let mut waiting = lock(&self.waiting);
        if waiting.len() >= ASKS_MAX {
            waiting.retain(|a| a.reply.as_ref().is_some_and(|tx| !tx.is_closed()));
        }
        if waiting.len() >= ASKS_MAX {
            self.refused.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        let (tx, rx) = oneshot::channel();
        let seq = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        waiting.push(Ask {
            seq,
            kind,
            params,
            reply: Some(tx),
        });
        Some(rx)
    }
}

/// A root the client offers the server: a directory as a `file://` URI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootDir {
    pub uri: String,
    pub name: Option<String>,
}

impl RootDir {
    /// A directory as a root. It must exist; it is named by its last component.
    ///
    /// # Errors
    ///
    /// When the directory does not exist or is not a directory.
    pub fn from_dir(path: &std::path::Path) -> Result<RootDir, String> {
        let abs =
            std::fs::canonicalize(path).map_err(|e| format!("root {}: {e}", path.display()))?;
        if !abs.is_dir() {
            return Err(format!("root {} is not a directory", path.display()));
        }
        let url = reqwest::Url::from_directory_path(&abs)
            .map_err(|()| format!("root {} cannot be written as a file URI", abs.display()))?;
        let uri = url.as_str().trim_end_matches('/').to_string();
        Ok(RootDir {
            uri,
            name: abs.file_name().map(|n| n.to_string_lossy().into_owned()),
        })
    }

    fn to_json(&self) -> Value {
        match &self.name {
            Some(name) => json!({"uri": self.uri, "name": name}),
            None => json!({"uri": self.uri}),
        }
    }
}

/// What the connection's handler shares with [`super::Remote`].
pub(super) struct Shared {
    pub progress: ProgressSinks,
    pub asks: Arc<Asks>,
    pub roots: Mutex<Vec<RootDir>>,
    pub answers: Answers,
    pub protocol: ProtocolVersion,
    /// The log level asked of a 2026-07-28 server: sent in every request's `_meta`,
    /// the revision's replacement for `logging/setLevel`.
    pub log_level: Mutex<Option<String>>,
    /// Whether the client declares the Tasks extension (and so follows tasks).
    pub tasks: bool,
}

/// The client side's handler.
pub(super) struct Listener {
    pub shared: Arc<Shared>,
}

/// The client's name, version and capabilities, as sent in `initialize`.
pub fn client_info(protocol: ProtocolVersion) -> ClientInfo {
    client_info_with(protocol, false)
}

/// [`client_info`], declaring the Tasks extension when `tasks` is true.
pub fn client_info_with(protocol: ProtocolVersion, tasks: bool) -> ClientInfo {
    let mut me = Implementation::new("structs-console", env!("CARGO_PKG_VERSION"));
    me.title = Some("Structs Console".into());
    me.description =
        Some("A terminal console for building and debugging MCP agents and servers".into());
    let mut capabilities = ClientCapabilities::default();
    capabilities.roots = Some({
        let mut roots = RootsCapabilities::default();
        roots.list_changed = Some(true);
        roots
    });
    capabilities.sampling = Some(SamplingCapability::default());
    capabilities.elicitation =
        Some(ElicitationCapability::new().with_form(FormElicitationCapability::new()));
    if tasks {
        capabilities
            .extensions
            .get_or_insert_with(Default::default)
            .insert(
                rmcp::model::TASKS_EXTENSION_ID.to_string(),
                Default::default(),
            );
    }
    ClientInfo::new(capabilities, me).with_protocol_version(protocol)
}

impl Shared {
    /// The answer to a request of the server's: the script's at once, or the
    /// operator's when they give it. A request the server cancels (`cancelled`) stops
    /// waiting, and its place in the queue is freed.
    pub(super) async fn ask(
        &self,
        kind: AskKind,
        params: Value,
        cancelled: impl std::future::Future<Output = ()>,
    ) -> Result<Reply, ErrorData> {
        match &self.answers {
            Answers::Script(script) => Ok(scripted(script, kind, &params)),
            Answers::Operator => match self.asks.push(kind, params) {
                Some(reply) => tokio::select! {
                    reply = reply => reply
                        .map_err(|_| ErrorData::internal_error("the console closed", None)),
                    () = cancelled => Err(ErrorData::internal_error(
                        "the server cancelled the request",
                        None,
                    )),
                },
                None => Err(ErrorData::internal_error(
                    format!(
                        "{ASKS_MAX} requests already wait for the operator; this one is refused"
                    ),
                    None,
                )),
            },
        }
    }
}

impl Shared {
    /// The answer to `sampling/createMessage` (its params as sent): the reply as a
    /// `CreateMessageResult`, or the refusal's JSON-RPC error.
    pub(super) async fn sample(
        &self,
        params: Value,
        cancelled: impl std::future::Future<Output = ()>,
    ) -> Result<Value, ErrorData> {
        match self.ask(AskKind::Sampling, params, cancelled).await? {
            Reply::Sampled(text) => Ok(json!({
                "model": OPERATOR_MODEL,
                "stopReason": "endTurn",
                "role": "assistant",
                "content": {"type": "text", "text": text},
            })),
            _ => Err(ErrorData::new(
                RpcCode(SAMPLING_REJECTED),
                match self.answers {
                    Answers::Script(_) => {
                        "the client rejected the sampling request (no reply was given)"
                    }
                    Answers::Operator => "the operator rejected the sampling request",
                },
                None,
            )),
        }
    }

    /// The answer to `elicitation/create` (its params as sent), as an `ElicitResult`.
    /// Only forms are declared: a server that asks for a URL anyway is told no.
    pub(super) async fn elicit(
        &self,
        params: Value,
        cancelled: impl std::future::Future<Output = ()>,
    ) -> Result<Value, ErrorData> {
        if params["mode"] == "url" {
            return Ok(json!({"action": "decline"}));
        }
        Ok(
            match self.ask(AskKind::Elicitation, params, cancelled).await? {
                Reply::Accept(content) => json!({"action": "accept", "content": content}),
                Reply::Cancel => json!({"action": "cancel"}),
                _ => json!({"action": "decline"}),
            },
        )
    }

    /// Answers each of a round's input requests: its key with the result a server's own
    /// request would have been answered with.
    ///
    /// # Errors
    ///
    /// Why one could not be answered.
    pub(super) async fn fulfil(&self, asked: &Value, ctx: &CallContext) -> Result<Value, String> {
        let Some(requests) = asked.as_object() else {
            return Err(format!("its inputRequests are not an object: {asked}"));
        };
        let mut answered = serde_json::Map::new();
        for (key, request) in requests {
            let params = request["params"].clone();
            let response = match request["method"].as_str() {
                Some("elicitation/create") => {
                    self.elicit(params, ctx.cancelled()).await.map_err(|e| {
                        format!("the elicitation {key:?} was not answered: {}", e.message)
                    })?
                }
                Some("sampling/createMessage") => self
                    .sample(params, ctx.cancelled())
                    .await
                    .map_err(|e| format!("the sampling request {key:?}: {}", e.message))?,
                Some("roots/list") => self.roots(),
                other => {
                    return Err(format!(
                        "input request {key:?} asks for {}, which this client does not serve",
                        other.map_or_else(|| "no method".to_string(), |m| format!("{m:?}"))
                    ));
                }
            };
            answered.insert(key.clone(), response);
        }
        Ok(Value::Object(answered))
    }

    /// The answer to `roots/list`: the roots offered now.
    pub(super) fn roots(&self) -> Value {
        let roots: Vec<Value> = lock(&self.roots).iter().map(RootDir::to_json).collect();
        json!({ "roots": roots })
    }
}

/// A script's answer to a request.
fn scripted(script: &Script, kind: AskKind, params: &Value) -> Reply {
    match kind {
        AskKind::Sampling => script
            .sampling
            .clone()
            .map_or(Reply::Reject, Reply::Sampled),
        AskKind::Elicitation if !script.fields.is_empty() => {
            match answered(&params["requestedSchema"], &script.fields) {
                Ok(values) => Reply::Accept(values),
                Err(why) => {
                    // The form asks for something the answers cannot say: no one said
                    // yes to it.
                    eprintln!("structs-console client: declined the server's form: {why}");
                    Reply::Decline
                }
            }
        }
        AskKind::Elicitation => match script.elicitation {
            ElicitPolicy::AcceptDefaults => Reply::Accept(defaults(&params["requestedSchema"])),
            ElicitPolicy::Decline => Reply::Decline,
            ElicitPolicy::Cancel => Reply::Cancel,
        },
    }
}

/// A form's values: its defaults, and over them each answer by name, typed by the
/// field's schema (`true`/`false` for a boolean, a number for an integer or number,
/// one of an enum's values, text for a string).
///
/// # Errors
///
/// An answer to a field the form does not have, or one that is not of its type.
pub fn answered(schema: &Value, answers: &[(String, String)]) -> Result<Value, String> {
    let mut values = defaults(schema);
    let props = schema["properties"].as_object();
    for (name, text) in answers {
        let Some(prop) = props.and_then(|p| p.get(name)) else {
            let fields: Vec<&str> = props
                .map(|p| p.keys().map(String::as_str).collect())
                .unwrap_or_default();
            return Err(format!(
                "the form has no field {name:?} (its fields: {})",
                fields.join(", ")
            ));
        };
        let value = match prop["type"].as_str() {
            Some("boolean") => match text.as_str() {
                "true" => json!(true),
                "false" => json!(false),
                _ => return Err(format!("{name} is a boolean: true or false, not {text:?}")),
            },
            Some("integer") => text
                .parse::<i64>()
                .map(|n| json!(n))
                .map_err(|_| format!("{name} is an integer, not {text:?}"))?,
            Some("number") => text
                .parse::<f64>()
                .ok()
                .and_then(|n| serde_json::Number::from_f64(n).map(Value::Number))
                .ok_or_else(|| format!("{name} is a number, not {text:?}"))?,
            _ => json!(text),
        };
        if let Some(allowed) = prop["enum"].as_array()
            && !allowed.contains(&value)
        {
            return Err(format!("{name} is one of {allowed:?}, not {text:?}"));
        }
        values[name.as_str()] = value;
    }
    Ok(values)
}

/// A form's values with every field at its default. A required field without one gets
/// its first allowed value, or an empty value of its type; an optional field without
/// one is left out.
pub fn defaults(schema: &Value) -> Value {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut out = serde_json::Map::new();
    if let Some(props) = schema["properties"].as_object() {
        for (name, prop) in props {
            let value = match prop.get("default") {
                Some(v) => Some(v.clone()),
                None if required.contains(&name.as_str()) => Some(empty_of(prop)),
                None => None,
            };
            if let Some(v) = value {
                out.insert(name.clone(), v);
            }
        }
    }
    Value::Object(out)
}

/// The first allowed value of a field, or an empty one of its type.
fn empty_of(prop: &Value) -> Value {
    if let Some(first) = prop["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    if let Some(first) = prop["oneOf"].as_array().and_then(|e| e.first()) {
        return first["const"].clone();
    }
    match prop["type"].as_str() {
        Some("integer" | "number") => prop.get("minimum").cloned().unwrap_or(json!(0)),
        Some("boolean") => json!(false),
        Some("array") => json!([]),
        _ => json!(""),
    }
}

impl ClientHandler for Listener {
    fn get_info(&self) -> ClientInfo {
        client_info_with(self.shared.protocol.clone(), self.shared.tasks)
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let params = serde_json::to_value(&params).unwrap_or(Value::Null);
        let reply = self.shared.sample(params, context.ct.cancelled()).await?;
        serde_json::from_value(reply).map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let params = serde_json::to_value(&request).unwrap_or(Value::Null);
        let answer = self.shared.elicit(params, context.ct.cancelled()).await?;
        Ok(answer_of(&answer))
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        serde_json::from_value(self.shared.roots())
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        context: NotificationContext<RoleClient>,
    ) {
        let ctx = lock(&self.shared.progress)
            .get(&params.progress_token)
            .cloned();
        if let Some(ctx) = ctx {
            // Where rmcp leaves a notification's `_meta`: the params, the context's
            // meta, or (3.9 moves it there when it reads the message) the context's
            // extensions.
            let in_extensions = context
                .extensions
                .get::<rmcp::model::NotificationMetaObject>();
            let data = [params.meta.as_ref(), Some(&context.meta), in_extensions]
                .into_iter()
                .flatten()
                .find_map(|m| m.0.0.get(PROGRESS_DATA_KEY))
                .cloned()
                .unwrap_or(Value::Null);
            ctx.report(ProgressUpdate {
                progress: params.progress,
                total: params.total,
                message: params.message.unwrap_or_default(),
                data,
            });
        }
    }
}

/// An elicitation answer from its JSON (which is always one of the three shapes).
fn answer_of(answer: &Value) -> ElicitResult {
    serde_json::from_value(answer.clone()).unwrap_or_else(|_| {
        serde_json::from_value(json!({"action": "decline"})).expect("a decline is valid")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_fill_every_field_that_has_one() {
        let schema = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
                "verified": {"type": "boolean", "default": true},
                "nickname": {"type": "string"},
                "color": {"type": "string", "enum": ["red", "blue"]},
                "count": {"type": "integer", "minimum": 2},
                "agree": {"type": "boolean"}
            },
            "required": ["color", "count", "agree"]
        });
        assert_eq!(
            defaults(&schema),
            json!({
                "name": "John Doe", "age": 30, "status": "active", "verified": true,
                "color": "red", "count": 2, "agree": false
            })
        );
        assert_eq!(defaults(&json!({})), json!({}));
    }

    #[test]
    fn answers_by_name_are_typed_by_the_form() {
        let form = json!({"type": "object", "required": ["confirm"], "properties": {
            "confirm": {"type": "boolean"}, "count": {"type": "integer", "default": 2},
            "color": {"type": "string", "enum": ["red", "blue"]}}});
        let say = |pairs: &[(&str, &str)]| {
            let answers: Vec<(String, String)> = pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            answered(&form, &answers)
        };
        assert_eq!(
            say(&[("confirm", "true")]).unwrap(),
            json!({"confirm": true, "count": 2})
        );
        assert_eq!(
            say(&[("confirm", "false"), ("count", "5"), ("color", "blue")]).unwrap(),
            json!({"confirm": false, "count": 5, "color": "blue"})
        );
        assert!(
            say(&[("confirm", "yes")])
                .unwrap_err()
                .contains("true or false")
        );
        assert!(say(&[("count", "x")]).unwrap_err().contains("an integer"));
        assert!(say(&[("color", "green")]).unwrap_err().contains("one of"));
        assert!(
            say(&[("nope", "1")])
                .unwrap_err()
                .contains("its fields: confirm")
        );
    }

    #[test]
    fn scripts_answer_by_their_policy() {
        let script = Script {
            elicitation: ElicitPolicy::AcceptDefaults,
            sampling: Some("hi".into()),
            fields: Vec::new(),
        };
        let schema = json!({"requestedSchema": {"properties": {"a": {"default": 1}}}});
        assert_eq!(
            scripted(&script, AskKind::Elicitation, &schema),
            Reply::Accept(json!({"a": 1}))
        );
        assert_eq!(
            scripted(&script, AskKind::Sampling, &Value::Null),
            Reply::Sampled("hi".into())
        );
        let none = Script::default();
        assert_eq!(
            scripted(&none, AskKind::Sampling, &Value::Null),
            Reply::Reject
        );
        assert_eq!(
            scripted(&none, AskKind::Elicitation, &schema),
            Reply::Decline
        );
    }

    #[tokio::test]
    async fn the_operator_answers_a_waiting_request_once() {
        let asks = Asks::default();
        let rx = asks
            .push(AskKind::Sampling, json!({"maxTokens": 5}))
            .unwrap();
        let waiting = asks.waiting();
        assert_eq!(waiting.len(), 1);
        assert_eq!(waiting[0].0, 1);
        assert_eq!(waiting[0].2["maxTokens"], 5);
        assert!(!asks.answer(9, Reply::Reject), "no such request");
        assert!(asks.answer(1, Reply::Sampled("ok".into())));
        assert_eq!(rx.await.unwrap(), Reply::Sampled("ok".into()));
        assert!(!asks.answer(1, Reply::Reject), "answered already");
        // A request whose asker went away is no longer shown.
        drop(asks.push(AskKind::Elicitation, json!({})));
        assert!(asks.waiting().is_empty());
    }

    /// A server that fills the queue, then cancels what it asked: each cancelled
    /// request frees its place, so the next is queued, not refused.
    #[tokio::test]
    async fn requests_the_server_cancels_free_their_places() {
        use rmcp::ServiceExt as _;
        use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
        let shared = Arc::new(Shared {
            progress: ProgressSinks::default(),
            asks: Arc::default(),
            roots: Mutex::new(Vec::new()),
            answers: Answers::Operator,
            protocol: ProtocolVersion::V_2025_06_18,
            log_level: Mutex::new(None),
            tasks: false,
        });
        let (ours, theirs) = tokio::io::duplex(1 << 20);
        let (server_reads, mut server_writes) = tokio::io::split(theirs);
        let (client_reads, client_writes) = tokio::io::split(ours);
        let mut lines = tokio::io::BufReader::new(server_reads).lines();
        let server = async move {
            let init: Value =
                serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
            let answer = json!({"jsonrpc": "2.0", "id": init["id"], "result": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "serverInfo": {"name": "asker", "version": "1"}}});
            server_writes
                .write_all(format!("{answer}\n").as_bytes())
                .await
                .unwrap();
            let _initialized = lines.next_line().await.unwrap();
            let ask = |n: usize| {
                json!({"jsonrpc": "2.0", "id": n, "method": "elicitation/create", "params": {
                    "message": "?", "requestedSchema": {"type": "object", "properties": {}}}})
            };
            let mut out = String::new();
            for n in 0..ASKS_MAX {
                out.push_str(&format!("{}\n", ask(n)));
            }
            for n in 0..ASKS_MAX {
                let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": n}});
                out.push_str(&format!("{cancel}\n"));
            }
            server_writes.write_all(out.as_bytes()).await.unwrap();
            (server_writes, lines, ask)
        };
        let listener = Listener {
            shared: shared.clone(),
        };
        let (client, (mut server_writes, _lines, ask)) =
            tokio::join!(listener.serve((client_reads, client_writes)), server);
        let client = client.unwrap();
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(5);
        // The hundred came, and went with their cancellations.
        while shared.asks.count() > 0 || shared.asks.next.load(Ordering::Relaxed) < 100 {
            assert!(
                tokio::time::Instant::now() < deadline,
                "{} waiting",
                shared.asks.count()
            );
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        server_writes
            .write_all(format!("{}\n", ask(ASKS_MAX)).as_bytes())
            .await
            .unwrap();
        while shared.asks.count() == 0 {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the next was not queued"
            );
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert_eq!(shared.asks.refused(), 0);
        drop(client);
    }

    #[test]
    fn no_more_than_the_cap_wait_and_the_rest_are_refused_and_counted() {
        let asks = Asks::default();
        let held: Vec<_> = (0..ASKS_MAX)
            .map(|_| asks.push(AskKind::Elicitation, json!({})).unwrap())
            .collect();
        assert!(asks.push(AskKind::Sampling, json!({})).is_none());
        assert!(asks.push(AskKind::Sampling, json!({})).is_none());
        assert_eq!((asks.count(), asks.refused()), (ASKS_MAX, 2));
        // One the server gave up on makes room.
        drop(held);
        let room = asks.push(AskKind::Sampling, json!({}));
        assert!(room.is_some());
        assert_eq!(asks.count(), 1);
    }

    #[test]
    fn roots_are_file_uris_of_existing_directories() {
        let dir = std::env::temp_dir();
        let root = RootDir::from_dir(&dir).unwrap();
        assert!(root.uri.starts_with("file:///"), "{}", root.uri);
        assert!(!root.uri.ends_with('/'));
        assert!(RootDir::from_dir(std::path::Path::new("/no/such/dir/here")).is_err());
        let info = serde_json::to_value(client_info(ProtocolVersion::LATEST)).unwrap();
        assert_eq!(info["clientInfo"]["name"], "structs-console");
        assert_eq!(info["clientInfo"]["version"], env!("CARGO_PKG_VERSION"));
        assert_eq!(info["capabilities"]["roots"]["listChanged"], true);
        assert!(info["capabilities"]["sampling"].is_object());
        assert!(info["capabilities"]["elicitation"]["form"].is_object());
    }
}
