//! The MCP face: an rmcp server handler over the core. It lists every registered tool
//! with its input schema and forwards `tools/call` to [`Core::call`]; it holds no game
//! logic of its own.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

use crate::core::Core;

/// Instructions sent to clients at initialize.
const INSTRUCTIONS: &str = "Tools for the Structs strategy game. Entity ids are {type}-{index} \
(guild 0, player 1, planet 2, reactor 3, substation 4, struct 5, allocation 6, infusion 7, \
address 8, fleet 9, provider 10, agreement 11); struct types are plain integers. Errors come \
back with isError and {\"error\": {code, message, details: {field, reason}}}.";

/// The rmcp handler: a core plus its tool list, built once.
#[derive(Clone)]
pub struct McpServer {
    core: Core,
    tools: Arc<Vec<Tool>>,
}

impl McpServer {
    pub fn new(core: Core) -> McpServer {
        let tools = core
            .tools()
            .map(|spec| {
                let schema = match &spec.input_schema {
                    Value::Object(o) => o.clone(),
                    _ => serde_json::Map::new(),
                };
                Tool::new(spec.name, spec.description, Arc::new(schema))
            })
            .collect();
        McpServer {
            core,
            tools: Arc::new(tools),
        }
    }

    /// Runs one call and wraps the outcome: the result as text and as
    /// `structuredContent`, or the error object with `isError: true`.
    pub async fn call(
        &self,
        name: &str,
        arguments: Option<serde_json::Map<String, Value>>,
    ) -> CallToolResult {
        let args = arguments.map_or(Value::Null, Value::Object);
        match self.core.call_json(name, args).await {
            Ok(value) => CallToolResult::structured(value),
            Err(error) => CallToolResult::structured_error(error),
        }
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("structs-console", env!("CARGO_PKG_VERSION"))
                    .with_title("Structs console"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        Ok(self.call(&request.name, request.arguments).await.into())
    }
}

/// Serves the core over stdin/stdout until the client closes the connection.
pub async fn serve_stdio(core: Core) -> anyhow::Result<()> {
    let service = McpServer::new(core)
        .serve(rmcp::transport::io::stdio_pipes())
        .await
        .map_err(|e| anyhow::anyhow!("MCP initialize failed: {e}"))?;
    service.waiting().await?;
    Ok(())
}
