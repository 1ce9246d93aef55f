//! The run stage: the call run as its caller makes it (the one context builder,
//! [`Caller::context`]), recorded, and wrapped as the answer: the result as text and
//! as `structuredContent`, or the error object with `isError: true`.

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
    ) -> CallToolResult {
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
        match answer {
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
        }
    }
}
