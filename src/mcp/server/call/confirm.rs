//! The confirm stage: under `--confirm-actions`, a person confirms a call that destroys
//! or spends before it runs: by elicitation in a session, or by an `InputRequired`
//! round on a stateless request.

use rmcp::ErrorData as McpError;
use rmcp::RoleServer;
use rmcp::model::{CallToolResponse, CallToolResult, InputResponses};
use rmcp::service::RequestContext;

use super::super::{McpServer, ask, stateless};
use super::Call;

/// What a stateless request brings back from an earlier round.
pub(super) struct Answers<'a> {
    pub state: Option<&'a str>,
    pub responses: Option<&'a InputResponses>,
}

impl McpServer {
    /// `None`: the call goes on. Otherwise the answer: the question, or the refusal.
    pub(super) async fn confirm(
        &self,
        call: &Call,
        answers: Answers<'_>,
        context: &RequestContext<RoleServer>,
    ) -> Result<Option<CallToolResponse>, McpError> {
        let asks = call.prepared.as_ref().is_ok_and(|p| p.is_destructive());
        if !(self.confirm_actions && asks) {
            return Ok(None);
        }
        let decision = if stateless::is_stateless(context) {
            self.asker.confirm_stateless(
                context,
                &call.tool,
                call.given.as_ref(),
                answers.state,
                answers.responses,
            )?
        } else {
            self.asker
                .confirm_session(&context.peer, &call.tool, call.given.as_ref())
                .await
        };
        Ok(match decision {
            ask::Decision::Run => None,
            ask::Decision::Answer(ask::Outcome::Ask(ask)) => {
                Some(CallToolResponse::InputRequired(ask))
            }
            ask::Decision::Answer(ask::Outcome::Refused(error)) => {
                let error = error.to_json(&self.core.timestamp());
                Some(CallToolResult::structured_error(error).into())
            }
        })
    }
}
