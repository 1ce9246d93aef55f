//! The task stage: long work, for a client that declared the Tasks extension, is
//! answered at once with a task and runs on ([`super::super::tasks`]).

use rmcp::model::{CallToolResponse, CallToolResult, ClientCapabilities};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};

use super::super::McpServer;
use super::super::stateless::Caller;
use super::Call;

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
        // its questions with tasks/update.
        caller.client = None;
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
