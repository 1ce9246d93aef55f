//! A `tools/call` as the server answers it: asked to confirm where the operator wants
//! that, run as a task for a client that declared the extension, or run now with its
//! progress reported and its cancellation followed; recorded either way.

use rmcp::ErrorData as McpError;
use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock,
    ProgressNotificationParam,
};
use rmcp::service::RequestContext;
use serde_json::Value;

use super::{McpServer, ask, resources, stateless, strict, tasks};
use crate::context::{CallContext, ProgressUpdate};

impl McpServer {
    pub(super) async fn answer_call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        // An unknown tool is a protocol error, not a tool's (the 2025-11-25 spec).
        let Some(spec) = self.core.tool_spec(&request.name) else {
            return Err(strict::unknown_tool(&self.core.unknown_tool(&request.name)));
        };
        // Arguments a tool would refuse are answered at once: no one is asked to
        // confirm them, and no task is made of them. Checked only where that matters,
        // since the call checks them again.
        let runnable = || {
            let args = request.arguments.clone().map_or(Value::Null, Value::Object);
            self.core.check_arguments(&request.name, &args).is_ok()
        };
        // A person confirms what destroys or spends, when the operator asks for it.
        let destructive = spec.hints.destructive == Some(true);
        if self.confirm_actions && destructive && runnable() {
            let asker = &self.asker;
            let decision = if stateless::is_stateless(&context) {
                asker.confirm_stateless(
                    &context,
                    &request.name,
                    request.arguments.as_ref(),
                    request.request_state.as_deref(),
                    request.input_responses.as_ref(),
                )?
            } else {
                asker
                    .confirm_session(&context.peer, &request.name, request.arguments.as_ref())
                    .await
            };
            match decision {
                ask::Decision::Run => {}
                ask::Decision::Answer(ask::Outcome::Ask(ask)) => {
                    return Ok(CallToolResponse::InputRequired(ask));
                }
                ask::Decision::Answer(ask::Outcome::Refused(error)) => {
                    let error = error.to_json(&self.core.timestamp());
                    return Ok(CallToolResult::structured_error(error).into());
                }
            }
        }
        let mut caller = self.caller(&context);
        if !caller.sessionless {
            self.ensure_watcher(context.peer.clone());
        }
        // Long work is a task for a client that declared the extension.
        let declared = context
            .client_capabilities()
            .is_some_and(|caps| caps.supports_tasks());
        if declared && tasks::TASK_TOOLS.contains(&&*request.name) && runnable() {
            // Nothing of the request outlives its answer: no log stream to write to.
            caller.log = None;
            let server = self.clone();
            let tool = request.name.to_string();
            let name = tool.clone();
            let started = self
                .tasks
                .start(&tool, move |ctx| async move {
                    server.call_as(&caller, &name, request.arguments, ctx).await
                })
                .await;
            return Ok(match started {
                Ok(task) => CallToolResponse::Task(task),
                Err(error) => {
                    CallToolResult::structured_error(error.to_json(&self.core.timestamp())).into()
                }
            });
        }
        let mut ctx = CallContext::new();
        // Progress reports go out as notifications/progress, in order, through one
        // forwarding task that ends when the call's context is gone.
        let mut forwarder = None;
        if let Some(token) = context.meta.get_progress_token() {
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<ProgressUpdate>();
            ctx = ctx.with_progress(move |u| {
                let _ = tx.send(u);
            });
            let peer = context.peer.clone();
            let recorder = caller.recorder.clone();
            forwarder = Some(tokio::spawn(async move {
                while let Some(u) = rx.recv().await {
                    let mut param = ProgressNotificationParam::new(token.clone(), u.progress)
                        .with_message(u.message);
                    if let Some(total) = u.total {
                        param = param.with_total(total);
                    }
                    if !u.data.is_null() {
                        // The tool's own figures, for a console attached over MCP.
                        let mut meta = rmcp::model::NotificationMetaObject::new();
                        meta.0
                            .0
                            .insert(crate::mcp::wire::PROGRESS_DATA_KEY.into(), u.data);
                        param.meta = Some(meta);
                    }
                    if let Some(r) = &recorder {
                        r.notification(
                            "notifications/progress",
                            serde_json::to_value(&param).unwrap_or_default(),
                        );
                    }
                    if peer.notify_progress(param).await.is_err() {
                        break;
                    }
                }
            }));
        }
        // notifications/cancelled for this request stops the work.
        // Watched here, not by a task of its own: one task less a call.
        let canceller = ctx.canceller();
        let call = self.call_as(&caller, &request.name, request.arguments, ctx);
        tokio::pin!(call);
        let result = tokio::select! {
            biased;
            result = &mut call => result,
            () = context.ct.cancelled() => {
                canceller.cancel();
                call.await
            }
        };
        if stateless::is_stateless(&context)
            && let Some(log) = &caller.log
        {
            // A request's own log goes out on its stream, before its answer.
            log.drain().await;
        }
        if let Some(forwarder) = forwarder {
            // Every report is sent before the result.
            let _ = tokio::time::timeout(std::time::Duration::from_secs(2), forwarder).await;
        }
        Ok(result.into())
    }

    /// One call as `caller` makes it: its subscriptions, handles, work and log.
    async fn call_as(
        &self,
        caller: &stateless::Caller,
        name: &str,
        arguments: Option<serde_json::Map<String, Value>>,
        mut ctx: CallContext,
    ) -> CallToolResult {
        ctx = ctx
            .with_subscriptions(caller.subscriptions.clone())
            .with_work(caller.work.clone());
        if let Some(handles) = &caller.handles {
            ctx = ctx.with_handles(handles.clone());
        }
        if let Some(log) = &caller.log {
            ctx = ctx.with_log(log.sink());
        }
        if caller.sessionless {
            ctx = ctx.without_session();
        }
        self.call_recorded(caller.recorder.as_deref(), name, arguments, ctx)
            .await
    }

    pub(super) async fn call_recorded(
        &self,
        recorder: Option<&crate::record::Recorder>,
        name: &str,
        arguments: Option<serde_json::Map<String, Value>>,
        ctx: CallContext,
    ) -> CallToolResult {
        let args = arguments.map_or(Value::Null, Value::Object);
        let answer = crate::record::call_recorded(&self.core, recorder, name, args, ctx).await;
        match answer.map_err(|(_, wire)| wire) {
            Ok(value) => {
                let link = resources::handle_link(&value);
                let mut result = CallToolResult::structured(value);
                // A partial result points at its stored whole, readable as a resource.
                if let Some(link) = link {
                    result.content.push(ContentBlock::resource_link(link));
                }
                result
            }
            Err(error) => CallToolResult::structured_error(error),
        }
    }
}
