//! The task stage: long work, for a client that declared the Tasks extension, is
//! answered at once with a task and runs on ([`super::super::tasks`]).

use rmcp::model::{CallToolResponse, CallToolResult, ClientCapabilities};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};

use std::sync::Arc;

use super::super::McpServer;
use super::super::ask::rounds::Inputs;
use super::super::stateless::Caller;
use super::Call;
use crate::context::CallContext;

/// Whether `call` runs as a task: long work, and a client that declared the extension.
///
/// # Errors
///
/// `-32021` for a tool that runs only as a task ([`Prepared::requires_task`]), called
/// by a client that did not declare the extension: its data names the extension
/// (`requiredCapabilities.extensions`). Checked before anyone is asked or anything
/// runs.
pub(super) fn runs_as_task(
    call: &Call,
    context: &RequestContext<RoleServer>,
) -> Result<bool, McpError> {
    let declared = context
        .client_capabilities()
        .is_some_and(|caps| caps.supports_tasks());
    let Ok(prepared) = &call.prepared else {
        return Ok(false);
    };
    if prepared.requires_task() && !declared {
        return Err(McpError::missing_required_client_capability(
            ClientCapabilities::builder().enable_tasks().build(),
        ));
    }
    Ok(declared && prepared.is_long())
}

impl McpServer {
    /// A tool that asks before its long work ([`crate::tools::Registry::asks_before_task`]),
    /// on a stateless request of a client that follows tasks: run at once with the
    /// answers of its rounds. Its questions unanswered go out as an `input_required`
    /// round, and no task is made; once it says its long work begins
    /// ([`CallContext::become_task`]) the caller gets its task and the work goes on as
    /// that task; a tool that ends first is answered as it ended.
    pub(super) async fn ask_then_task(
        &self,
        call: Call,
        mut caller: Caller,
        inputs: Arc<Inputs>,
        confirmed: bool,
        request: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        // Nothing of the request outlives its answer, and the work may outlive it.
        caller.log = None;
        caller.stream = None;
        let (tx, mut rx) = tokio::sync::oneshot::channel();
        // No question goes out in rounds once the call is a task.
        let closing = inputs.clone();
        let ctx = CallContext::new().with_escalation(tx, move || closing.close());
        // Until the task holds the work, the work stops with the request.
        let mut stop = StopUnlessKept(Some(ctx.canceller()));
        let tool = call.tool.to_string();
        let owner = Some(caller.principal.id().to_string());
        let server = self.clone();
        let mut run = tokio::spawn(async move { server.run(&caller, call, ctx).await });
        let ended = tokio::select! {
            escalated = &mut rx => if escalated.is_ok() { None } else { Some(joined((&mut run).await)) },
            done = &mut run => Some(joined(done)),
            () = request.ct.cancelled() => {
                stop.cancel();
                Some(joined((&mut run).await))
            }
        };
        if let Some(done) = ended {
            // The tool ended without becoming a task: asked, or answered.
            if let Some(asked) = self.asker.next_round(&inputs, confirmed)? {
                return Ok(CallToolResponse::InputRequired(asked));
            }
            return done.map(Into::into);
        }
        let cancel = stop.keep();
        let started = self
            .tasks
            .start(&tool, owner, move |task: CallContext| async move {
                tokio::select! {
                    done = &mut run => joined(done),
                    () = task.cancelled() => {
                        cancel.cancel();
                        joined(run.await)
                    }
                }
            })
            .await;
        Ok(match started {
            Ok(task) => CallToolResponse::Task(task),
            Err(error) => {
                CallToolResult::structured_error(error.to_json(&self.core.timestamp())).into()
            }
        })
    }

    /// The task made and answered; its work runs on after the answer.
    pub(super) async fn start_task(
        &self,
        call: Call,
        mut caller: Caller,
        declared: Vec<&'static str>,
    ) -> CallToolResponse {
        // Nothing of the request outlives its answer: no log stream to write to.
        caller.log = None;
        // Nor a connection to ask the client on: a task's client polls it, and answers
        // its questions with tasks/update; nor a response stream of its own to close.
        caller.client = None;
        caller.stream = None;
        let server = self.clone();
        let tool = call.tool.to_string();
        let owner = Some(caller.principal.id().to_string());
        let started = self
            .tasks
            .start_asking(&tool, owner, declared, move |ctx| async move {
                server.run(&caller, call, ctx).await
            })
            .await;
        match started {
            Ok(task) => CallToolResponse::Task(task),
            Err(error) => {
                CallToolResult::structured_error(error.to_json(&self.core.timestamp())).into()
            }
        }
    }
}

/// A spawned run's answer; a run that panicked is the server's error.
fn joined(
    run: Result<Result<CallToolResult, McpError>, tokio::task::JoinError>,
) -> Result<CallToolResult, McpError> {
    run.unwrap_or_else(|e| {
        Err(McpError::internal_error(
            format!("the call's work ended abnormally: {e}"),
            None,
        ))
    })
}

/// Cancels a call's work when dropped, unless kept: a request dropped before its work
/// became a task takes the work with it.
struct StopUnlessKept(Option<CallContext>);

impl StopUnlessKept {
    fn cancel(&self) {
        if let Some(stop) = &self.0 {
            stop.cancel();
        }
    }

    /// The work is another's to stop now: its canceller.
    fn keep(&mut self) -> CallContext {
        self.0.take().unwrap_or_default()
    }
}

impl Drop for StopUnlessKept {
    fn drop(&mut self) {
        self.cancel();
    }
}
