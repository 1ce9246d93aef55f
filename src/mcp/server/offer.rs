//! What a server built on this layer offers besides the core's: its own resources,
//! resource templates and prompts, served beside the entities, docs, handles and
//! briefings, with the same caching hints, limits and checks. The product offers none;
//! a server for another catalog (the conformance suite's, `examples/conformance_server`)
//! brings its own through [`McpServer::with_offer`](super::McpServer::with_offer).

use rmcp::ErrorData as McpError;
use rmcp::model::{
    GetPromptResult, JsonObject, Prompt, ReadResourceResult, Resource, ResourceTemplate,
};

/// Resources and prompts a server offers besides the core's. Each method has a default
/// that offers nothing, so an offer names only what it has.
pub trait Offer: Send + Sync {
    /// Resources listed after the core's.
    fn resources(&self) -> Vec<Resource> {
        Vec::new()
    }

    /// Resource templates listed after the core's.
    fn templates(&self) -> Vec<ResourceTemplate> {
        Vec::new()
    }

    /// `uri` read, or `None` where it is not this offer's (the core's resources are
    /// tried next, and a URI no one has is `-32602`).
    fn read(&self, _uri: &str) -> Option<Result<ReadResourceResult, McpError>> {
        None
    }

    /// Prompts listed after the core's.
    fn prompts(&self) -> Vec<Prompt> {
        Vec::new()
    }

    /// The prompt `name` with `arguments`, or `None` where it is not this offer's.
    fn prompt(
        &self,
        _name: &str,
        _arguments: &JsonObject,
    ) -> Option<Result<GetPromptResult, McpError>> {
        None
    }

    /// Whether `uri` is one of this offer's that a client may subscribe to. The layer
    /// acknowledges the subscription; an offer has no way yet to say its resources
    /// changed, so no `notifications/resources/updated` follows.
    fn watchable(&self, _uri: &str) -> bool {
        false
    }
}
