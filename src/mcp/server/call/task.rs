//! The task stage: long work, for a client that declared the Tasks extension, is
//! answered at once with a task and runs on ([`super::super::tasks`]).

use rmcp::RoleServer;
use rmcp::model::{CallToolResponse, CallToolResult};
use rmcp::service::RequestContext;

use super::super::McpServer;
use super::super::stateless::Caller;
use super::Call;
use crate::core::Prepared;

/// Whether `call` runs as a task: long work, and a client that declared the extension.
pub(super) fn runs_as_task(call: &Call, context: &RequestContext<RoleServer>) -> bool {
    let declared = context
        .client_capabilities()
        .is_some_and(|caps| caps.supports_tasks());
    declared && call.prepared.as_ref().is_ok_and(Prepared::is_long)
}

impl McpServer {
    /// The task made and answered; its work runs on after the answer.
    pub(super) async fn start_task(&self, call: Call, mut caller: Caller) -> CallToolResponse {
        // Nothing of the request outlives its answer: no log stream to write to.
        caller.log = None;
        let server = self.clone();
        let tool = call.tool.to_string();
        let owner = Some(caller.principal.id().to_string());
        let started = self
            .tasks
            .start(&tool, owner, move |ctx| async move {
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
