//! What a plan needs of whoever runs its steps: tools to call by name, their schemas
//! for validation, and where results over the size limit are kept. The call pipeline
//! (`core::Core`) is the one implementation; a plan knows nothing else of it.

use std::sync::Arc;

use serde_json::Value;

use crate::clock::WallClock;
use crate::context::{CallContext, ClientWork};
use crate::error::ToolError;
use crate::handles::Handles;
use crate::source::BoxFuture;

pub trait Dispatch: Send + Sync + 'static {
    /// Calls a tool by name, as any other caller would.
    fn call(
        &self,
        tool: &str,
        args: Value,
        ctx: CallContext,
    ) -> BoxFuture<'static, Result<Value, ToolError>>;

    /// A tool's input schema; `None` when no tool has that name.
    fn input_schema(&self, tool: &str) -> Option<Value>;

    /// Up to five tool names like `tool` (for "did you mean").
    fn similar_tools(&self, tool: &str) -> Vec<String>;

    /// Checks `args` against `tool`'s input schema without running it.
    fn check_arguments(&self, tool: &str, args: &Value) -> Result<(), ToolError>;

    /// The handle service results are stored in, when it is this process's; `None`
    /// when the tools are another server's, whose handles are read back page by page
    /// through `structs_handle_fetch`.
    fn handles(&self) -> Option<Arc<Handles>>;

    /// Where timestamps come from.
    fn wall(&self) -> WallClock;

    /// Where the caller of `ctx` counts its running work.
    fn client_work(&self, ctx: &CallContext) -> Arc<ClientWork>;
}

/// The tools a plan's steps are run with.
pub type Caller = Arc<dyn Dispatch>;
