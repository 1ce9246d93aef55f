//! The run stage: the call run as its caller makes it (the one context builder,
//! [`Caller::context`]), recorded, and wrapped as the answer: the result as text and
//! as `structuredContent`, or the error object with `isError: true`. A content tool's
//! answer ([`crate::tools::Origin::Content`]) is its own MCP tool result, sent as it is,
//! and its failure the server's error.

use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::Value;

use super::super::stateless::Caller;
use super::super::{McpServer, resources};
use super::Call;
use crate::context::{CallContext, trace};
use tracing::Instrument as _;

impl McpServer {
    pub(super) async fn run(
        &self,
        caller: &Caller,
        call: Call,
        ctx: CallContext,
    ) -> Result<CallToolResult, McpError> {
        let content = call.prepared.as_ref().is_ok_and(|p| p.answers_content());
        // The same context as the call's (its clones share what they learn).
        let asked = ctx.clone();
        let given = call.given.map_or(Value::Null, Value::Object);
        let span = tracing::info_span!(
            target: trace::TARGET, "run", otel.name = %format_args!("run {}", call.tool),
            gen_ai.tool.name = %call.tool
        );
        let answer = crate::record::run_recorded(
            &self.core,
            caller.recorder.as_deref(),
            &given,
            &call.tool,
            call.prepared,
            caller.context(ctx),
        )
        .instrument(span)
        .await;
        // A tool that needed a capability the client did not declare: the call's
        // answer is -32021 naming it, whatever the tool made of it.
        if let Some(crate::context::Unasked::Undeclared(capability)) = asked.unasked() {
            return Err(super::super::ask::rounds::undeclared(capability));
        }
        if content {
            return as_written(&call.tool, answer.map_err(|(e, _)| e));
        }
        Ok(match answer {
            Ok(value) => {
                let link = resources::handle_link(&value);
                let mut result = CallToolResult::structured(value);
                // A partial result points at its stored whole, readable as a resource.
                if let Some(link) = link {
                    result.content.push(ContentBlock::resource_link(link));
                }
                result
            }
            Err((_, error)) => CallToolResult::structured_error(error),
        })
    }
}

/// A content tool's answer as it wrote it; its failure (a panic, or an answer that is
/// not a tool result) the server's internal error, which a task records as `failed`.
fn as_written(
    tool: &str,
    answer: Result<Value, crate::error::ToolError>,
) -> Result<CallToolResult, McpError> {
    match answer {
        Ok(value) => {
            let mut result: CallToolResult = serde_json::from_value(value).map_err(|e| {
                McpError::internal_error(
                    format!("{tool} answered something other than a tool result: {e}"),
                    None,
                )
            })?;
            // A result is complete (2026-07-28's `resultType`), as every other answer is.
            result
                .result_type
                .get_or_insert(rmcp::model::ResultType::COMPLETE);
            Ok(result)
        }
        Err(error) => Err(McpError::internal_error(
            error.message.clone(),
            Some(serde_json::json!({"code": error.code})),
        )),
    }
}
