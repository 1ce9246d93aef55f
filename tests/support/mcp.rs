//! An MCP client's side of the end-to-end tests: a handler that keeps the resource
//! updates it hears of, and a tool call's structured answer.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, ResourceUpdatedNotificationParam};
use rmcp::service::{NotificationContext, RunningService, Service};
use rmcp::{ClientHandler, RoleClient};
use serde_json::Value;

/// A client that keeps the URIs of the resource updates it receives.
#[derive(Clone, Default)]
pub struct Updates(pub Arc<Mutex<Vec<String>>>);

impl ClientHandler for Updates {
    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.0.lock().unwrap().push(params.uri);
    }
}

impl Updates {
    /// Waits up to 3 s for an update of `uri`.
    pub async fn wait_for(&self, uri: &str) -> bool {
        for _ in 0..60 {
            if self.0.lock().unwrap().iter().any(|u| u == uri) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        false
    }

    /// How many updates of `uri` came.
    pub fn count(&self, uri: &str) -> usize {
        self.0.lock().unwrap().iter().filter(|u| *u == uri).count()
    }
}

/// A call's structured answer (result or error object) and whether it failed.
pub async fn call<H: Service<RoleClient>>(
    client: &RunningService<RoleClient, H>,
    tool: &str,
    args: Value,
) -> (Value, bool) {
    let Value::Object(args) = args else {
        panic!("arguments must be an object")
    };
    let r = client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(args))
        .await
        .expect("tools/call");
    (
        r.structured_content.unwrap_or(Value::Null),
        r.is_error == Some(true),
    )
}
