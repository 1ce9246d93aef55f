//! The rest of the protocol, from the client's side: any request by its method, and
//! the ones an inspector needs by name (resources and their templates, subscriptions,
//! prompts, completions, the log level, roots, ping).
//!
//! Answers come back as the server's JSON, unchanged: the console shows what the
//! server said, and `structs-console client` prints it.

#![allow(deprecated)]

use rmcp::model::{
    CancelledNotification, CancelledNotificationParam, ClientNotification, ClientRequest,
    RootsListChangedNotification,
};
use rmcp::service::PeerRequestOptions;
use serde_json::{Value, json};

use super::handler::RootDir;
use super::traffic::lock;
use super::{Remote, Unregister};
use crate::context::CallContext;
use crate::error::{ErrorCode, ToolError};
use crate::mcp::wire::span::{Operation, Outcome, Request as SpanRequest, Side};
use tracing::Instrument as _;

/// The most pages a `list_all` follows before it stops (a server whose cursors never
/// end would otherwise be read for ever).
pub const MAX_PAGES: usize = 100;

/// Where a 2026-07-28 request asks for log messages at a level.
const LOG_LEVEL_META: &str = "io.modelcontextprotocol/logLevel";

/// The log levels of `logging/setLevel`, least severe first.
pub const LOG_LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// What a completion is for: a prompt's argument or a resource template's variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompleteRef {
    Prompt(String),
    Template(String),
}

impl CompleteRef {
    /// `prompt:NAME` or `resource:URI-TEMPLATE`.
    ///
    /// # Errors
    ///
    /// When the text has neither prefix.
    pub fn parse(text: &str) -> Result<CompleteRef, String> {
        if let Some(name) = text.strip_prefix("prompt:") {
            return Ok(CompleteRef::Prompt(name.to_string()));
        }
        if let Some(uri) = text.strip_prefix("resource:") {
            return Ok(CompleteRef::Template(uri.to_string()));
        }
        Err(format!(
            "{text:?} names neither a prompt (prompt:NAME) nor a resource template \
             (resource:URI-TEMPLATE)"
        ))
    }

    fn to_json(&self) -> Value {
        match self {
            CompleteRef::Prompt(name) => json!({"type": "ref/prompt", "name": name}),
            CompleteRef::Template(uri) => json!({"type": "ref/resource", "uri": uri}),
        }
    }
}

impl Remote {
    /// Sends request `method` with `params` and returns the server's result as JSON,
    /// after any rounds of input the server asks for ([`Remote::request_rounds`]).
    ///
    /// # Errors
    ///
    /// As [`Remote::request_rounds`].
    pub async fn request(
        &self,
        method: &str,
        params: Value,
        ctx: CallContext,
    ) -> Result<Value, ToolError> {
        // A list or a read the server said stays fresh is answered from the cache.
        let key = super::cache::key(method, &params);
        let changes = self.wire.changes();
        if let Some(key) = &key
            && let Some(hit) = self.cache.get(key, changes)
        {
            let left = u64::try_from(hit.left.as_millis()).unwrap_or(u64::MAX);
            self.keep_round(
                &ctx,
                json!({"cache": {"method": method, "hit": true, "ttlMs": left,
                                 "cacheScope": hit.scope}}),
            );
            return Ok(hit.answer);
        }
        let (answer, _) = self.request_rounds(method, params, ctx).await?;
        if let Some(key) = key {
            self.cache.put(key, &answer, changes);
        }
        Ok(answer)
    }

    /// Sends request `method` with `params` once and returns the server's result as
    /// JSON, whatever it is (an `input_required` result included). Progress reports go
    /// to `ctx`; cancelling `ctx` sends `notifications/cancelled` and ends the request
    /// with `TOOL_CANCELLED`. A request that goes without an answer or progress for the
    /// idle timeout is given up the same way.
    ///
    /// # Errors
    ///
    /// The server's JSON-RPC error (its code kept as `jsonrpc_code`), a timeout, a
    /// cancellation, or a connection that is gone.
    pub async fn request_once(
        &self,
        method: &str,
        params: Value,
        ctx: CallContext,
    ) -> Result<Value, ToolError> {
        // A CLIENT span when tracing is on, its context sent in `_meta` (SEP-414).
        let op = Operation::start(
            Side::Client,
            &SpanRequest {
                protocol: Some(self.shared.protocol.as_str()),
                ..SpanRequest::of_params(method, &params)
            },
            self.transport(),
            None,
        );
        let Some(op) = op else {
            return self.send_once(method, params, ctx).await;
        };
        let mut params = params;
        op.inject(&mut params);
        let answer = self
            .send_once(method, params, ctx)
            .instrument(op.span().clone())
            .await;
        op.end(match &answer {
            Ok(v) if v["isError"] == Value::Bool(true) => Outcome::ToolError,
            Ok(_) => Outcome::Ok,
            Err(e) => match e.extra.get("jsonrpc_code").and_then(Value::as_i64) {
                Some(code) => Outcome::Rpc(i32::try_from(code).unwrap_or(i32::MIN)),
                None => Outcome::Failed(e.code.as_str()),
            },
        });
        answer
    }

    /// [`Remote::request_once`] without its span.
    async fn send_once(
        &self,
        method: &str,
        params: Value,
        ctx: CallContext,
    ) -> Result<Value, ToolError> {
        let params = match params {
            Value::Null => json!({}),
            p @ Value::Object(_) => p,
            other => {
                return Err(ToolError::field(
                    ErrorCode::ValidationWrongType,
                    "params",
                    format!("must be an object, not {other}"),
                ));
            }
        };
        let mut params = params;
        if let Some(level) = lock(&self.shared.log_level).clone()
            && let Some(object) = params.as_object_mut()
        {
            let meta = object.entry("_meta").or_insert_with(|| json!({}));
            if let Some(meta) = meta.as_object_mut() {
                meta.insert(LOG_LEVEL_META.into(), json!(level));
            }
        }
        if ctx.is_background() {
            self.wire.expect_background(method, &params);
        }
        let request: ClientRequest =
            serde_json::from_value(json!({"method": method, "params": params})).map_err(|e| {
                ToolError::field(
                    ErrorCode::ValidationInvalidFormat,
                    "params",
                    format!("not valid params for {method}: {e}"),
                )
            })?;
        let peer = self.service.peer().clone();
        let handle = peer
            .send_cancellable_request(request, {
                let mut options = PeerRequestOptions::with_timeout(self.idle_timeout);
                options.reset_timeout_on_progress = true;
                // A caller following the call's whole trail (the Server tab) follows a
                // task too: this request declares the Tasks extension even where the
                // connection does not (the other panes want a search's progress).
                if ctx.follows_tasks() && !self.shared.tasks && self.stateless() {
                    let info = super::handler::client_info_with(self.shared.protocol.clone(), true);
                    let mut meta = rmcp::model::RequestMetaObject::default();
                    meta.set_client_capabilities(info.capabilities);
                    options.meta = Some(meta);
                }
                options
            })
            .await
            .map_err(|e| self.unreachable(method, &e))?;
        let token = handle.progress_token.clone();
        let id = handle.id.clone();
        if crate::context::trace::on() {
            use tracing_opentelemetry::OpenTelemetrySpanExt as _;
            tracing::Span::current()
                .set_attribute(crate::context::trace::attr::JSONRPC_ID, id.to_string());
        }
        lock(&self.shared.progress).insert(token.clone(), ctx.clone());
        let _unregister = Unregister {
            sinks: self.shared.progress.clone(),
            token,
        };
        let answer = tokio::select! {
            answer = handle.await_response() => answer,
            () = ctx.cancelled() => {
                let note = CancelledNotification::new(CancelledNotificationParam::new(
                    Some(id),
                    Some("cancelled in the console".into()),
                ));
                let _ = peer
                    .send_notification(ClientNotification::CancelledNotification(note))
                    .await;
                return Err(ToolError::new(
                    ErrorCode::ToolCancelled,
                    format!("{method} was cancelled; the server was told"),
                ));
            }
        };
        let result = answer.map_err(|e| self.unreachable(method, &e))?;
        serde_json::to_value(&result).map_err(|e| {
            ToolError::new(
                ErrorCode::ToolExecutionFailed,
                format!("the answer to {method} cannot be shown as JSON: {e}"),
            )
        })
    }

    /// Every item of a paged list (`tools/list`, `resources/list`,
    /// `resources/templates/list`, `prompts/list`), following `nextCursor` up to
    /// [`MAX_PAGES`] pages.
    ///
    /// # Errors
    ///
    /// As [`Remote::request`], for any page; and when the pages do not end.
    pub async fn list_all(&self, method: &str, key: &str) -> Result<Vec<Value>, ToolError> {
        self.list_whole(method, key).await.map(|list| {
            match list {
                Value::Object(mut o) => o.remove(key),
                _ => None,
            }
            .and_then(|items| match items {
                Value::Array(items) => Some(items),
                _ => None,
            })
            .unwrap_or_default()
        })
    }

    /// [`Remote::list_all`] as one list result, `{key: [every item]}`, with the caching
    /// hints that hold for the whole: the shortest `ttlMs` of its pages, and `private`
    /// when any page is (none when a page has none).
    ///
    /// # Errors
    ///
    /// As [`Remote::list_all`].
    pub async fn list_whole(&self, method: &str, key: &str) -> Result<Value, ToolError> {
        let mut items = Vec::new();
        let mut hints: Option<Option<(u64, String)>> = None;
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let page = self.request(method, params, CallContext::new()).await?;
            if let Some(list) = page[key].as_array() {
                items.extend(list.iter().cloned());
            }
            let these = super::cache::hints(&page).map(|(t, s)| (t, s.to_string()));
            hints = Some(match (hints, these) {
                (None, these) => these,
                (Some(Some((t0, s0))), Some((t1, s1))) => Some((
                    t0.min(t1),
                    if s0 == "public" && s1 == "public" {
                        s0
                    } else {
                        "private".into()
                    },
                )),
                _ => None,
            });
            match page["nextCursor"].as_str() {
                Some(next) if !next.is_empty() && Some(next) != cursor.as_deref() => {
                    cursor = Some(next.to_string());
                }
                _ => {
                    let mut whole = json!({ key: items });
                    if let Some(Some((ttl, scope))) = hints {
                        whole["ttlMs"] = json!(ttl);
                        whole["cacheScope"] = json!(scope);
                    }
                    return Ok(whole);
                }
            }
        }
        Err(ToolError::new(
            ErrorCode::ToolExecutionFailed,
            format!(
                "{} still had more of {method} after {MAX_PAGES} pages; stopped there",
                self.target.describe()
            ),
        ))
    }

    /// One page of a paged list, from `cursor` (the first page without one).
    ///
    /// # Errors
    ///
    /// As [`Remote::request`].
    pub async fn page(&self, method: &str, cursor: Option<&str>) -> Result<Value, ToolError> {
        let params = match cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        self.request(method, params, CallContext::new()).await
    }

    /// `resources/read`.
    ///
    /// # Errors
    ///
    /// As [`Remote::request`].
    pub async fn read_resource(&self, uri: &str) -> Result<Value, ToolError> {
        self.request("resources/read", json!({"uri": uri}), CallContext::new())
            .await
    }

    /// `resources/subscribe` (or `resources/unsubscribe` when `on` is false); on a
    /// 2026-07-28 server, a `subscriptions/listen` stream naming the resource (or its
    /// end). Updates arrive as `notifications/resources/updated` among the
    /// notifications.
    ///
    /// # Errors
    ///
    /// As [`Remote::request`].
    pub async fn subscribe(&self, uri: &str, on: bool) -> Result<Value, ToolError> {
        // The 2026-07-28 revision watches through a listen stream.
        if self.stateless() {
            return self.listen_to(uri, on).await;
        }
        let method = if on {
            "resources/subscribe"
        } else {
            "resources/unsubscribe"
        };
        self.request(method, json!({"uri": uri}), CallContext::new())
            .await
    }

    /// `prompts/get` with its arguments (string values).
    ///
    /// # Errors
    ///
    /// As [`Remote::request`].
    pub async fn get_prompt(&self, name: &str, arguments: Value) -> Result<Value, ToolError> {
        let mut params = json!({"name": name});
        if arguments.as_object().is_some_and(|a| !a.is_empty()) {
            params["arguments"] = arguments;
        }
        self.request("prompts/get", params, CallContext::new())
            .await
    }

    /// `completion/complete`: the values the server offers for `argument` of `what`,
    /// typed so far as `value`, with the other arguments already chosen in `context`.
    ///
    /// # Errors
    ///
    /// As [`Remote::request`].
    pub async fn complete(
        &self,
        what: &CompleteRef,
        argument: &str,
        value: &str,
        context: Option<Value>,
    ) -> Result<Value, ToolError> {
        let mut params = json!({
            "ref": what.to_json(),
            "argument": {"name": argument, "value": value},
        });
        if let Some(ctx) = context.filter(|c| c.as_object().is_some_and(|m| !m.is_empty())) {
            params["context"] = json!({ "arguments": ctx });
        }
        self.request("completion/complete", params, CallContext::new())
            .await
    }

    /// `logging/setLevel`.
    ///
    /// # Errors
    ///
    /// An unknown level, or as [`Remote::request`].
    pub async fn set_log_level(&self, level: &str) -> Result<Value, ToolError> {
        if !LOG_LEVELS.contains(&level) {
            return Err(ToolError::field(
                ErrorCode::ValidationInvalidFormat,
                "level",
                format!("{level:?} is not one of {}", LOG_LEVELS.join(", ")),
            ));
        }
        // 2026-07-28 has no session to keep a level in: every request asks for its own.
        if self.stateless() {
            *lock(&self.shared.log_level) = Some(level.to_string());
            return Ok(json!({}));
        }
        self.request(
            "logging/setLevel",
            json!({"level": level}),
            CallContext::new(),
        )
        .await
    }

    /// Whether the connection speaks the stateless revision (2026-07-28 or later),
    /// which has no session to keep a log level in and no `ping`.
    pub(crate) fn stateless(&self) -> bool {
        self.protocol_version().as_str() >= rmcp::model::ProtocolVersion::V_2026_07_28.as_str()
    }

    /// `ping`.
    ///
    /// # Errors
    ///
    /// As [`Remote::request`].
    pub async fn ping(&self) -> Result<Value, ToolError> {
        // 2026-07-28 removed `ping`: any request shows the server is there, and
        // `server/discover` is the one that does nothing else.
        if self.stateless() {
            self.request("server/discover", json!({}), CallContext::new())
                .await?;
            return Ok(json!({}));
        }
        self.request("ping", json!({}), CallContext::new()).await
    }

    /// The roots this client offers, as `roots/list` answers them.
    pub fn roots(&self) -> Vec<RootDir> {
        lock(&self.shared.roots).clone()
    }

    /// Replaces the roots and tells the server (`notifications/roots/list_changed`).
    ///
    /// # Errors
    ///
    /// When the notification cannot be sent (the connection is gone).
    pub async fn set_roots(&self, roots: Vec<RootDir>) -> Result<(), ToolError> {
        *lock(&self.shared.roots) = roots;
        self.service
            .peer()
            .send_notification(ClientNotification::RootsListChangedNotification(
                RootsListChangedNotification::default(),
            ))
            .await
            .map_err(|e| self.unreachable("notifications/roots/list_changed", &e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completion_refs_name_a_prompt_or_a_template() {
        assert_eq!(
            CompleteRef::parse("prompt:greet").unwrap(),
            CompleteRef::Prompt("greet".into())
        );
        assert_eq!(
            CompleteRef::parse("resource:demo://{id}")
                .unwrap()
                .to_json(),
            json!({"type": "ref/resource", "uri": "demo://{id}"})
        );
        assert!(
            CompleteRef::parse("greet")
                .unwrap_err()
                .contains("prompt:NAME")
        );
    }

    #[test]
    fn any_method_becomes_a_request() {
        for (method, params) in [
            ("resources/list", json!({"cursor": "2"})),
            ("resources/read", json!({"uri": "demo://1"})),
            ("prompts/get", json!({"name": "p", "arguments": {"a": "1"}})),
            ("logging/setLevel", json!({"level": "debug"})),
            ("ping", json!({})),
            ("vendor/anything", json!({"x": 1})),
        ] {
            let request: ClientRequest =
                serde_json::from_value(json!({"method": method, "params": params})).unwrap();
            assert_eq!(request.method(), method);
        }
    }
}
