//! The confirm stage: under `--confirm-actions`, a person confirms a call that destroys
//! or spends before it runs: by elicitation in a session, or by an `InputRequired`
//! round on a stateless request. A stateless confirmation's state is spent by the
//! call it lets run: a second use of it is refused, on every server sharing the store.

use rmcp::ErrorData as McpError;
use rmcp::RoleServer;
use rmcp::model::{CallToolResponse, CallToolResult, InputResponses};
use rmcp::service::RequestContext;

use super::super::{McpServer, ask, stateless};
use super::Call;
use crate::context::trace;
use crate::mcp::server::ask::STATE_TTL;
use tracing::Instrument as _;

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
        let span = tracing::info_span!(
            target: trace::TARGET, "confirm", structs.confirm.decision = tracing::field::Empty
        );
        // The request's own span: a round is linked to the call that asked.
        let round = tracing::Span::current();
        let answer = self
            .decide(call, answers, context, &round)
            .instrument(span.clone())
            .await;
        let said = match &answer {
            Ok(None) => "run",
            Ok(Some(CallToolResponse::InputRequired(_))) => "asked",
            Ok(Some(_)) => "refused",
            Err(_) => "error",
        };
        span.record("structs.confirm.decision", said);
        answer
    }

    /// The confirmation stage's decision.
    async fn decide(
        &self,
        call: &Call,
        answers: Answers<'_>,
        context: &RequestContext<RoleServer>,
        round: &tracing::Span,
    ) -> Result<Option<CallToolResponse>, McpError> {
        let decision = if stateless::is_stateless(context) {
            self.asker.confirm_stateless(
                context,
                round,
                self.principal(context).id(),
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
            ask::Decision::Run { spend: None } => None,
            ask::Decision::Run { spend: Some(nonce) } => {
                self.spend(&call.tool, &nonce).await?;
                None
            }
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

impl McpServer {
    /// Marks a confirmation's state spent in the store every server shares, or refuses
    /// it (`-32602`) when it already was: of concurrent uses, exactly one runs. A store
    /// that cannot say refuses the call rather than risk running it twice.
    async fn spend(&self, tool: &str, nonce: &str) -> Result<(), McpError> {
        let claimed = self
            .core
            .handle_store()
            .claim(&ask::spent_key(nonce), STATE_TTL)
            .await
            .map_err(|e| {
                McpError::internal_error(
                    format!(
                        "{tool} was not run: whether its confirmation was already used could \
                         not be read ({})",
                        e.message
                    ),
                    Some(e.to_json(&self.core.timestamp())),
                )
            })?;
        if claimed {
            Ok(())
        } else {
            Err(ask::spent(tool))
        }
    }
}
