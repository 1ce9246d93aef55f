//! A core whose tools are another MCP server's (`--connect`): the remote's tools
//! registered as forwarded ones, and a game source that gives the header the server's
//! figures.

use std::sync::Arc;

use serde_json::Value;

use super::Remote;
use crate::context::CallContext;
use crate::error::{ErrorCode, ToolError};
use crate::source::SourceInfo;

/// A core whose tools are another MCP server's (`--connect`): each call is checked
/// against the server's schema here, then answered there, progress and cancellation
/// included. References, shaping and handles are the server's business;
/// [`Core::status`](crate::core::Core::status) shows its block height as last seen.
pub fn attached_core(remote: Arc<Remote>, wall: crate::clock::WallClock) -> crate::core::Core {
    let mut registry = crate::tools::Registry::default();
    register_remote(&mut registry, &remote);
    let source = Arc::new(RemoteSource(remote));
    crate::core::Core::builder(source, registry)
        .clock(wall)
        .forwarded()
        .build()
        .expect("the default settings are valid")
}

/// Registers the tools `remote` lists, each forwarding its calls there. Their schemas,
/// titles and annotations are the server's own (reference and shaping options
/// included when it has them). A name listed twice keeps its first listing.
pub fn register_remote(registry: &mut crate::tools::Registry, remote: &Arc<Remote>) {
    for tool in remote.tools() {
        if registry.get(&tool.name).is_some() {
            continue;
        }
        // The registry names tools with &'static str; a console attaches once per
        // process, so the remote's names and descriptions live as long as it does.
        let name: &'static str = Box::leak(tool.name.to_string().into_boxed_str());
        let description: &'static str = Box::leak(
            tool.description
                .as_deref()
                .unwrap_or("")
                .to_string()
                .into_boxed_str(),
        );
        let annotations = tool.annotations.clone().unwrap_or_default();
        let title = tool.title.clone().or(annotations.title.clone());
        let spec = crate::tools::ToolSpec {
            name,
            description,
            input_schema: Value::Object((*tool.input_schema).clone()),
            references: crate::references::Support::None,
            shaping: crate::handles::Shaping::Own,
            title: Box::leak(title.unwrap_or_default().into_boxed_str()),
            hints: crate::tools::Hints {
                read_only: annotations.read_only_hint,
                destructive: annotations.destructive_hint,
                idempotent: annotations.idempotent_hint,
                open_world: annotations.open_world_hint,
            },
            output_schema: tool
                .output_schema
                .as_ref()
                .map_or(Value::Null, |s| Value::Object((**s).clone())),
        };
        let remote = remote.clone();
        let handler: crate::tools::Handler = Arc::new(move |_env, args| {
            let remote = remote.clone();
            Box::pin(async move { remote.call(name, args, CallContext::current()).await })
        });
        registry.add_forwarded(spec, handler);
    }
}

/// The game source of an [`attached_core`]: the header's
/// figures from the server. Its tools answer on the server, so nothing reads entities
/// through this source; if something did, it would be told so.
pub struct RemoteSource(pub Arc<Remote>);

impl crate::source::GameSource for RemoteSource {
    fn info(&self) -> SourceInfo {
        self.0.status()
    }

    fn get(
        &self,
        id: crate::entity::EntityId,
    ) -> crate::source::BoxFuture<'_, Result<Option<Value>, ToolError>> {
        let e = self.not_here(&format!("entity {id}"));
        Box::pin(async move { Err(e) })
    }

    fn list(
        &self,
        _query: crate::source::ListQuery,
    ) -> crate::source::BoxFuture<'_, Result<crate::source::Page, ToolError>> {
        let e = self.not_here("a list of entities");
        Box::pin(async move { Err(e) })
    }
}

impl RemoteSource {
    fn not_here(&self, what: &str) -> ToolError {
        ToolError::new(
            ErrorCode::ApiUnavailable,
            format!(
                "{what} is read by the tools of {}, not in this console",
                self.0.target.describe()
            ),
        )
    }
}
