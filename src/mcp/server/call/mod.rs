//! A `tools/call` as the server answers it: a short pipeline of stages, each in a file
//! of its own, so a new concern is one more stage.
//!
//! 1. **prepare** (here): the tool looked up and its arguments checked, once;
//! 2. **confirm** ([`confirm`]): a person asked first, where the operator wants that;
//! 3. **task** ([`task`]): long work answered at once as a task, for a client that
//!    declared the extension (a task-only tool refuses one that did not, before the
//!    confirm stage asks anyone);
//! 4. **now** ([`now`]): otherwise run while the request waits, its progress reported
//!    and its cancellation followed;
//! 5. **run** ([`run`]): the call run as its caller makes it, recorded, and wrapped as
//!    the answer.

use std::borrow::Cow;

use rmcp::ErrorData as McpError;
use rmcp::RoleServer;
use rmcp::model::{CallToolRequestParams, CallToolResponse, JsonObject};
use rmcp::service::RequestContext;
use serde_json::Value;

use super::{McpServer, ask, client_ask, strict};
use crate::core::Prepared;
use crate::error::{ErrorCode, ToolError};

mod confirm;
mod now;
mod run;
mod task;

/// A call as it passes from stage to stage.
pub(super) struct Call {
    /// The tool's name, as the client gave it.
    tool: Cow<'static, str>,
    /// The arguments as the client gave them, kept where someone is asked to confirm
    /// or a log is written: what is asked about and recorded.
    given: Option<JsonObject>,
    /// The core's prepared call, or why its arguments are refused: then no one is
    /// asked and no task is made, and the refusal is answered and recorded as the
    /// tool's error.
    prepared: Result<Prepared, ToolError>,
}

impl McpServer {
    pub(super) async fn answer_call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let CallToolRequestParams {
            name,
            arguments,
            request_state,
            input_responses,
            ..
        } = request;
        let stateless = super::stateless::is_stateless(&context);
        let call = self.prepare(name, arguments, stateless)?;
        let as_task = task::runs_as_task(&call, &context)?;
        // What the client may be asked, in rounds or by its task.
        let declared = client_ask::declared(context.client_capabilities().as_ref());
        // A stateless request's answers to the tool's own questions, from this round
        // and the earlier ones its state carries.
        let confirmed =
            self.confirm_actions && call.prepared.as_ref().is_ok_and(|p| p.is_destructive());
        let inputs = if stateless && call.prepared.is_ok() {
            let bound = ask::binding(
                &call.tool,
                call.given.as_ref(),
                self.principal(&context).id(),
            );
            let inputs = self.asker.inputs(
                bound,
                request_state.as_deref(),
                input_responses.as_ref(),
                "call",
                confirmed,
            )?;
            Some(std::sync::Arc::new(inputs.declaring(declared.clone())))
        } else {
            None
        };
        let answers = confirm::Answers {
            state: request_state.as_deref(),
            responses: input_responses.as_ref(),
        };
        if let Some(answer) = self.confirm(&call, answers, &context).await? {
            return Ok(answer);
        }
        let mut caller = self.caller(&context);
        if let Some(inputs) = &inputs {
            caller.client = Some(client_ask::in_rounds(inputs.clone()));
        }
        if !caller.sessionless {
            self.ensure_watcher(context.peer.clone());
        }
        if as_task {
            let asks_first = call.prepared.as_ref().is_ok_and(|p| p.asks_first());
            if let Some(inputs) = inputs.filter(|_| asks_first) {
                return self
                    .ask_then_task(call, caller, inputs, confirmed, &context)
                    .await;
            }
            return Ok(self.start_task(call, caller, declared).await);
        }
        let answer = self.run_now(call, caller, &context).await;
        // The tool asked what this round could not answer: the questions go out, and
        // what the tool made of their absence does not.
        if let Some(inputs) = inputs
            && let Some(asked) = self.asker.next_round(&inputs, confirmed)?
        {
            return Ok(CallToolResponse::InputRequired(asked));
        }
        answer.map(Into::into)
    }

    /// The first stage: one lookup and one check. An unknown tool is a protocol error,
    /// not a tool's (the 2025-11-25 spec).
    fn prepare(
        &self,
        tool: Cow<'static, str>,
        given: Option<JsonObject>,
        stateless: bool,
    ) -> Result<Call, McpError> {
        // The arguments as given are kept only for who reads them: the person asked to
        // confirm, the log, and a stateless request's state (sealed to them).
        let keep = self.confirm_actions || self.records() || stateless;
        let (args, given) = match given {
            Some(map) if keep => (Value::Object(map.clone()), Some(map)),
            given => (given.map_or(Value::Null, Value::Object), None),
        };
        let prepared = self.core.prepare(&tool, args);
        if let Err(error) = &prepared
            && error.code == ErrorCode::ToolNotFound
        {
            return Err(strict::unknown_tool(error));
        }
        Ok(Call {
            tool,
            given,
            prepared,
        })
    }
}
