//! The server as the transports serve it: [`Traced`] hands each request to
//! [`McpServer`] inside a SERVER span of the MCP conventions ([`crate::mcp::wire::span`]),
//! a child of the trace context the request's `_meta` carries, so the agent's own span
//! is its parent. With tracing off it only passes the request on.

#![allow(deprecated)]

use std::borrow::Cow;
use std::future::Future;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CancelledNotificationParam,
    CompleteRequestParams, CompleteResult, CustomNotification, CustomRequest, CustomResult,
    DiscoverResult, ErrorData, GetPromptRequestParams, GetPromptResponse, GetSkillRequestParams,
    GetSkillResult, GetTaskParams, GetTaskResult, InitializeRequestParams, InitializeResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListSkillsResult,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ProtocolVersion,
    ReadResourceDirectoryRequestParams, ReadResourceDirectoryResult, ReadResourceRequestParams,
    ReadResourceResponse, ServerConfig, SetLevelRequestParams, SubscribeRequestParams,
    SubscriptionFilter, Tool, UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{RoleServer, ServerHandler};
use tracing::Instrument as _;

use super::McpServer;
use crate::context::trace::{self, attr};
use crate::mcp::wire::span::{Operation, Outcome, Request, Side, Transport};

/// [`McpServer`] with a span for each request.
#[derive(Clone)]
pub struct Traced {
    inner: McpServer,
    transport: Transport,
}

/// What a request names, beside its method.
#[derive(Default)]
struct Names<'a> {
    tool: Option<&'a str>,
    prompt: Option<&'a str>,
    uri: Option<&'a str>,
}

impl Traced {
    pub fn new(inner: McpServer, transport: Transport) -> Traced {
        Traced { inner, transport }
    }

    /// The span of request `method` naming `names`, when tracing is on.
    fn start(
        &self,
        method: &str,
        names: Names<'_>,
        context: &RequestContext<RoleServer>,
    ) -> Option<Operation> {
        if !trace::on() {
            return None;
        }
        let protocol = context.protocol_version();
        let stateless = protocol
            .as_ref()
            .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        let session = (!stateless)
            .then(|| {
                context
                    .extensions
                    .get::<axum::http::request::Parts>()?
                    .headers
                    .get("mcp-session-id")?
                    .to_str()
                    .ok()
            })
            .flatten();
        let described = Request {
            method,
            tool: names.tool,
            prompt: names.prompt,
            uri: names.uri,
            id: Some(context.id.to_string()),
            protocol: protocol.as_ref().map(|v| v.as_str()),
            session,
        };
        let parent = trace::extract(Some(&context.meta.0.0));
        Operation::start(Side::Server, &described, self.transport, Some(parent))
    }
}

/// Runs `work` in `op`'s span and ends it with the outcome `outcome` reads.
async fn run<T>(
    op: Option<Operation>,
    work: impl Future<Output = Result<T, ErrorData>>,
    outcome: impl FnOnce(&T) -> Outcome,
) -> Result<T, ErrorData> {
    let Some(op) = op else {
        return work.await;
    };
    let result = work.instrument(op.span().clone()).await;
    op.end(match &result {
        Ok(v) => outcome(v),
        Err(e) => Outcome::Rpc(e.code.0),
    });
    result
}

fn ok<T>(_: &T) -> Outcome {
    Outcome::Ok
}

/// A request naming nothing, delegated in its span.
macro_rules! plain {
    ($name:ident, $method:literal, $params:ty, $result:ty) => {
        async fn $name(
            &self,
            request: $params,
            context: RequestContext<RoleServer>,
        ) -> Result<$result, ErrorData> {
            let op = self.start($method, Names::default(), &context);
            run(op, self.inner.$name(request, context), ok).await
        }
    };
}

/// A request naming a resource, delegated in its span.
macro_rules! on_uri {
    ($name:ident, $method:literal, $params:ty, $result:ty) => {
        async fn $name(
            &self,
            request: $params,
            context: RequestContext<RoleServer>,
        ) -> Result<$result, ErrorData> {
            let names = Names {
                uri: Some(request.uri.as_str()),
                ..Names::default()
            };
            let op = self.start($method, names, &context);
            run(op, self.inner.$name(request, context), ok).await
        }
    };
}

/// Every method of [`ServerHandler`] is passed to [`McpServer`]: one left out would
/// answer with the trait's default (`tests/telemetry.rs` asks both servers each
/// request and compares). Requests are served in their spans; the rest pass.
impl ServerHandler for Traced {
    async fn ping(&self, context: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        let op = self.start("ping", Names::default(), &context);
        run(op, self.inner.ping(context), ok).await
    }

    plain!(
        initialize,
        "initialize",
        InitializeRequestParams,
        InitializeResult
    );

    fn negotiate_initialize(
        &self,
        request: &InitializeRequestParams,
    ) -> Result<InitializeResult, ErrorData> {
        self.inner.negotiate_initialize(request)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        self.inner.supported_protocol_versions()
    }

    async fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        let op = self.start("server/discover", Names::default(), &context);
        run(op, self.inner.discover(context), ok).await
    }

    plain!(
        complete,
        "completion/complete",
        CompleteRequestParams,
        CompleteResult
    );
    plain!(set_level, "logging/setLevel", SetLevelRequestParams, ());

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let names = Names {
            prompt: Some(request.name.as_str()),
            ..Names::default()
        };
        let op = self.start("prompts/get", names, &context);
        run(op, self.inner.get_prompt(request, context), ok).await
    }

    plain!(
        list_prompts,
        "prompts/list",
        Option<PaginatedRequestParams>,
        ListPromptsResult
    );
    plain!(
        list_resources,
        "resources/list",
        Option<PaginatedRequestParams>,
        ListResourcesResult
    );
    plain!(
        list_resource_templates,
        "resources/templates/list",
        Option<PaginatedRequestParams>,
        ListResourceTemplatesResult
    );
    on_uri!(
        read_resource,
        "resources/read",
        ReadResourceRequestParams,
        ReadResourceResponse
    );

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        self.inner.accepted_subscription_filter(requested)
    }

    async fn listen(&self, context: rmcp::service::SubscriptionContext) -> Result<(), ErrorData> {
        self.inner.listen(context).await
    }

    on_uri!(subscribe, "resources/subscribe", SubscribeRequestParams, ());
    on_uri!(
        unsubscribe,
        "resources/unsubscribe",
        UnsubscribeRequestParams,
        ()
    );

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let names = Names {
            tool: Some(request.name.as_ref()),
            ..Names::default()
        };
        let op = self.start("tools/call", names, &context);
        if let Some(op) = &op
            && trace::content()
        {
            let args = serde_json::Value::Object(request.arguments.clone().unwrap_or_default());
            op.set(attr::TOOL_ARGUMENTS, crate::record::redacted_text(&args));
        }
        let content = op.is_some() && trace::content();
        let work = self.inner.call_tool(request, context);
        let Some(op) = op else {
            return work.await;
        };
        let result = work.instrument(op.span().clone()).await;
        if content
            && let Ok(CallToolResponse::Complete(answer)) = &result
            && let Ok(value) = serde_json::to_value(answer)
        {
            op.set(attr::TOOL_RESULT, crate::record::redacted_text(&value));
        }
        op.end(match &result {
            Ok(answer) => tool_outcome(answer),
            Err(e) => Outcome::Rpc(e.code.0),
        });
        result
    }

    plain!(
        list_tools,
        "tools/list",
        Option<PaginatedRequestParams>,
        ListToolsResult
    );

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.inner.get_tool(name)
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let method = request.method.clone();
        let op = self.start(&method, Names::default(), &context);
        run(op, self.inner.on_custom_request(request, context), ok).await
    }

    async fn on_cancelled(
        &self,
        notification: CancelledNotificationParam,
        context: NotificationContext<RoleServer>,
    ) {
        self.inner.on_cancelled(notification, context).await;
    }

    async fn on_progress(
        &self,
        notification: ProgressNotificationParam,
        context: NotificationContext<RoleServer>,
    ) {
        self.inner.on_progress(notification, context).await;
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.inner.on_initialized(context).await;
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        self.inner.on_roots_list_changed(context).await;
    }

    async fn on_custom_notification(
        &self,
        notification: CustomNotification,
        context: NotificationContext<RoleServer>,
    ) {
        self.inner
            .on_custom_notification(notification, context)
            .await;
    }

    fn get_info(&self) -> ServerConfig {
        self.inner.get_info()
    }

    plain!(get_task, "tasks/get", GetTaskParams, GetTaskResult);
    plain!(update_task, "tasks/update", UpdateTaskParams, ());
    plain!(cancel_task, "tasks/cancel", CancelTaskParams, ());
    plain!(
        list_skills,
        "skills/list",
        Option<PaginatedRequestParams>,
        ListSkillsResult
    );
    plain!(
        get_skill,
        "skills/get",
        GetSkillRequestParams,
        GetSkillResult
    );
    plain!(
        read_resource_directory,
        "resources/directory/read",
        ReadResourceDirectoryRequestParams,
        ReadResourceDirectoryResult
    );
}

/// How a tool call's answer ended: `tool_error` for a result with `isError`.
fn tool_outcome(answer: &CallToolResponse) -> Outcome {
    match answer {
        CallToolResponse::Complete(r) if r.is_error == Some(true) => Outcome::ToolError,
        _ => Outcome::Ok,
    }
}
