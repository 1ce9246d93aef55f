//! One MCP request as a span of the OpenTelemetry MCP conventions, for the three rooms
//! that see requests: the server (kind SERVER), and the client and the tap toward its
//! server (kind CLIENT).
//!
//! The span is named `{mcp.method.name} {target}`, the target being the tool or prompt
//! named, and carries the conventions' attributes. [`Operation::end`] writes the
//! outcome (`rpc.response.status_code`, `error.type`: `tool_error` for a tool result
//! with `isError`, else the JSON-RPC code) and records the operation's duration in
//! `mcp.{server,client}.operation.duration`. Nothing here runs when tracing is off:
//! [`Operation::start`] is `None` then.

use std::time::Instant;

use opentelemetry::KeyValue;
use opentelemetry::trace::Status;
use serde_json::Value;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

use crate::context::trace::{self, attr};

/// Which end of a request the span is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Server,
    Client,
}

/// How the request travels (`network.transport`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// stdio: `pipe`.
    Pipe,
    /// HTTP: `tcp`.
    Tcp,
}

impl Transport {
    /// `network.transport`'s value.
    pub fn name(self) -> &'static str {
        match self {
            Transport::Pipe => "pipe",
            Transport::Tcp => "tcp",
        }
    }
}

/// What a span says of its request.
#[derive(Debug, Clone, Default)]
pub struct Request<'a> {
    pub method: &'a str,
    /// The tool a `tools/call` names.
    pub tool: Option<&'a str>,
    /// The prompt a `prompts/get` names.
    pub prompt: Option<&'a str>,
    /// The resource a `resources/*` request names.
    pub uri: Option<&'a str>,
    /// The JSON-RPC id, as text.
    pub id: Option<String>,
    pub protocol: Option<&'a str>,
    /// A 2025-11-25 session's id (never set for 2026-07-28).
    pub session: Option<&'a str>,
}

impl<'a> Request<'a> {
    /// What a request's JSON (`method`, `params`, `id`) says of it.
    pub fn of_json(message: &'a Value) -> Request<'a> {
        let method = message["method"].as_str().unwrap_or_default();
        Request {
            id: match &message["id"] {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            },
            ..Request::of_params(method, &message["params"])
        }
    }

    /// What request `method` with `params` says of itself (no id yet).
    pub fn of_params(method: &'a str, params: &'a Value) -> Request<'a> {
        let name = params["name"].as_str();
        Request {
            method,
            tool: name.filter(|_| method == "tools/call"),
            prompt: name.filter(|_| method == "prompts/get"),
            uri: params["uri"].as_str(),
            id: None,
            protocol: params["_meta"]["io.modelcontextprotocol/protocolVersion"].as_str(),
            session: None,
        }
    }

    fn name(&self) -> String {
        match self.tool.or(self.prompt) {
            Some(target) => format!("{} {target}", self.method),
            None => self.method.to_string(),
        }
    }
}

/// How a request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A result.
    Ok,
    /// A tool result with `isError`.
    ToolError,
    /// A JSON-RPC error, by its code.
    Rpc(i32),
    /// No answer: the request timed out, was cancelled or never left (the project's
    /// error code, `TOOL_TIMEOUT` say).
    Failed(&'static str),
}

impl Outcome {
    /// The outcome of a JSON-RPC response's JSON: its error's code, or its result read
    /// as a tool result.
    pub fn of_json(response: &Value) -> Outcome {
        match response["error"]["code"].as_i64() {
            Some(code) => Outcome::Rpc(i32::try_from(code).unwrap_or(i32::MIN)),
            None if response["result"]["isError"] == Value::Bool(true) => Outcome::ToolError,
            None => Outcome::Ok,
        }
    }
}

/// A request's span and what its duration metric needs.
pub struct Operation {
    span: tracing::Span,
    side: Side,
    started: Instant,
    metric: Vec<KeyValue>,
}

impl Operation {
    /// The span of `request` seen from `side` over `transport`, a child of `parent`
    /// (the trace context the request carried, on the server) or else of the current
    /// span; `None` when tracing is off.
    pub fn start(
        side: Side,
        request: &Request<'_>,
        transport: Transport,
        parent: Option<opentelemetry::Context>,
    ) -> Option<Operation> {
        if !trace::on() {
            return None;
        }
        let kind = match side {
            Side::Server => "server",
            Side::Client => "client",
        };
        // Every attribute given as the span is made: one pass through the layer, where
        // setting each after costs a lookup of the span's data apiece.
        let execute = request.tool.map(|_| "execute_tool");
        let span = tracing::info_span!(
            target: trace::TARGET, "mcp", otel.name = %request.name(), otel.kind = kind,
            mcp.method.name = request.method, network.transport = transport.name(),
            mcp.protocol.version = request.protocol, gen_ai.tool.name = request.tool,
            gen_ai.operation.name = execute, gen_ai.prompt.name = request.prompt,
            mcp.resource.uri = request.uri, jsonrpc.request.id = request.id.as_deref(),
            mcp.session.id = request.session
        );
        if let Some(parent) = parent.filter(has_span) {
            let _ = span.set_parent(parent);
        }
        // The duration metric's attributes: the span's, but for the ids.
        let mut metric = vec![
            KeyValue::new(attr::MCP_METHOD, request.method.to_string()),
            KeyValue::new(attr::TRANSPORT, transport.name()),
        ];
        if let Some(v) = request.protocol {
            metric.push(KeyValue::new(attr::MCP_PROTOCOL_VERSION, v.to_string()));
        }
        if let Some(tool) = request.tool {
            metric.push(KeyValue::new(attr::TOOL_NAME, tool.to_string()));
            metric.push(KeyValue::new(attr::OPERATION, "execute_tool"));
        }
        if let Some(prompt) = request.prompt {
            metric.push(KeyValue::new(attr::PROMPT_NAME, prompt.to_string()));
        }
        Some(Operation {
            span,
            side,
            started: Instant::now(),
            metric,
        })
    }

    /// The span, to run the request's work in.
    pub fn span(&self) -> &tracing::Span {
        &self.span
    }

    /// Writes the span's trace context into `params._meta` unless a `traceparent` is
    /// there already (a context the caller sent goes on unchanged).
    pub fn inject(&self, params: &mut Value) {
        if let Some(object) = params.as_object_mut() {
            let meta = object
                .entry("_meta")
                .or_insert_with(|| Value::Object(serde_json::Map::new()));
            if let Some(meta) = meta.as_object_mut() {
                trace::inject_from(&self.span.context(), meta);
            }
        }
    }

    /// Sets the JSON-RPC id, once the request has one.
    pub fn set_id(&self, id: String) {
        self.span.set_attribute(attr::JSONRPC_ID, id);
    }

    /// Puts `key` = `value` on the span (content, redacted by the caller).
    pub fn set(&self, key: &'static str, value: String) {
        self.span.set_attribute(key, value);
    }

    /// Ends the span with `outcome` and records the duration.
    pub fn end(mut self, outcome: Outcome) {
        let error = match outcome {
            Outcome::Ok => None,
            Outcome::ToolError => Some("tool_error".to_string()),
            Outcome::Rpc(code) => {
                self.span.set_attribute(attr::STATUS_CODE, code.to_string());
                Some(code.to_string())
            }
            Outcome::Failed(why) => Some(why.to_string()),
        };
        if let Some(error) = error {
            self.span.set_attribute(attr::ERROR_TYPE, error.clone());
            self.span.set_status(Status::error(error.clone()));
            self.metric.push(KeyValue::new(attr::ERROR_TYPE, error));
        }
        if let Some(i) = trace::instruments() {
            let took = self.started.elapsed().as_secs_f64();
            match self.side {
                Side::Server => i.server_operation.record(took, &self.metric),
                Side::Client => i.client_operation.record(took, &self.metric),
            }
        }
    }
}

fn has_span(cx: &opentelemetry::Context) -> bool {
    use opentelemetry::trace::TraceContextExt as _;
    cx.span().span_context().is_valid()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_request_is_named_by_its_method_and_target() {
        let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "structs_query_player", "arguments": {}}});
        let r = Request::of_json(&call);
        assert_eq!(r.name(), "tools/call structs_query_player");
        assert_eq!(
            (r.tool, r.prompt, r.id.as_deref()),
            (Some("structs_query_player"), None, Some("7"))
        );
        let prompt = json!({"id": "a", "method": "prompts/get", "params": {"name": "p"}});
        let r = Request::of_json(&prompt);
        assert_eq!(
            (r.name().as_str(), r.tool, r.id.as_deref()),
            ("prompts/get p", None, Some("a"))
        );
        let read = json!({"id": 1, "method": "resources/read", "params": {"uri": "structs://x"}});
        let r = Request::of_json(&read);
        assert_eq!(
            (r.name().as_str(), r.uri),
            ("resources/read", Some("structs://x"))
        );
    }

    #[test]
    fn an_outcome_is_read_from_the_answer() {
        assert_eq!(Outcome::of_json(&json!({"result": {}})), Outcome::Ok);
        assert_eq!(
            Outcome::of_json(&json!({"result": {"isError": true}})),
            Outcome::ToolError
        );
        assert_eq!(
            Outcome::of_json(&json!({"error": {"code": -32602, "message": "x"}})),
            Outcome::Rpc(-32602)
        );
    }
}
