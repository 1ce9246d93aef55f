//! What a server built on this layer offers besides the core's: its own resources,
//! resource templates and prompts, served beside the entities, docs, handles and
//! briefings, with the same caching hints, limits and checks. The product offers none;
//! a server for another catalog (the conformance suite's, `examples/conformance_server`)
//! brings its own through [`McpServer::with_offer`](super::McpServer::with_offer).

use super::ask::rounds::Inputs;
use rmcp::ErrorData as McpError;
use rmcp::RoleServer;
use rmcp::model::{
    GetPromptRequestParams, GetPromptResponse, GetPromptResult, InputResponses, JsonObject, Prompt,
    ReadResourceResult, Resource, ResourceTemplate,
};
use rmcp::service::RequestContext;

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

    /// The prompt `name` with `arguments`, or `None` where it is not this offer's. A
    /// prompt may ask its client first, through `inputs` ([`Inputs::answer`]): the layer
    /// sends what it asks (in a session on the connection, on a stateless request in
    /// the answer's `input_required` round) and gets the prompt again with the answers.
    fn prompt(
        &self,
        _name: &str,
        _arguments: &JsonObject,
        _inputs: &Inputs,
    ) -> Option<Result<GetPromptResult, McpError>> {
        None
    }

    /// Told each time this offer's prompt list changes (the value is a count); `None`
    /// for a list that never does. The layer sends `notifications/prompts/list_changed`
    /// to a session that listed prompts and to each listen stream that asked for it.
    fn prompt_changes(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        None
    }

    /// Whether `uri` is one of this offer's that a client may subscribe to. The layer
    /// acknowledges the subscription; an offer has no way yet to say its resources
    /// changed, so no `notifications/resources/updated` follows.
    fn watchable(&self, _uri: &str) -> bool {
        false
    }
}

/// The most rounds of questions an offered prompt asks a session client before it is
/// refused (`-32602`): a prompt that asks again whatever it is told ends.
pub const MAX_SESSION_ROUNDS: usize = 8;

impl super::McpServer {
    /// The offered prompt of `request`, after the rounds of its own questions; `None`
    /// where no offer has it.
    pub(super) async fn offered_prompt(
        &self,
        request: &GetPromptRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Option<Result<GetPromptResponse, McpError>> {
        let offer = self.offer.clone()?;
        // Another's prompt (the core's): its own rounds, its own state.
        if !offer.prompts().iter().any(|p| p.name == request.name) {
            return None;
        }
        let given = request.arguments.clone().unwrap_or_default();
        let caps = context.client_capabilities();
        let declared = super::client_ask::declared(caps.as_ref());
        let bound = super::ask::binding(
            &format!("prompt {}", request.name),
            Some(&given),
            self.principal(context).id(),
        );
        if super::stateless::is_stateless(context) {
            let inputs = match self.asker.inputs(
                bound,
                request.request_state.as_deref(),
                request.input_responses.as_ref(),
                "prompt",
                false,
            ) {
                Ok(inputs) => inputs.declaring(declared),
                Err(e) => return Some(Err(e)),
            };
            let got = offer.prompt(&request.name, &given, &inputs)?;
            return Some(match self.asker.next_round(&inputs, false) {
                Ok(Some(asked)) => Ok(GetPromptResponse::InputRequired(asked)),
                Ok(None) => got.map(Into::into),
                Err(e) => Err(e),
            });
        }
        // A session: each round's questions asked on the connection, in turn.
        let ask = super::client_ask::asker(context.peer.clone(), caps);
        let mut answers = InputResponses::new();
        for round in 0..=MAX_SESSION_ROUNDS {
            let inputs =
                match self
                    .asker
                    .inputs(bound.clone(), None, Some(&answers), "prompt", false)
                {
                    Ok(inputs) => inputs.declaring(declared.clone()),
                    Err(e) => return Some(Err(e)),
                };
            let got = offer.prompt(&request.name, &given, &inputs)?;
            let questions = inputs.take_questions();
            if questions.is_empty() {
                return Some(got.map(Into::into));
            }
            if round == MAX_SESSION_ROUNDS {
                break;
            }
            for (key, question) in questions {
                // Kept by `Inputs::answer`, which takes only these three.
                let method = match question["method"].as_str() {
                    Some("sampling/createMessage") => "sampling/createMessage",
                    Some("elicitation/create") => "elicitation/create",
                    _ => "roots/list",
                };
                match (ask.ask)(key.clone(), method, question["params"].clone()).await {
                    Ok(answer) => answers.insert(key, answer),
                    Err(why) => return Some(Err(super::ask::rounds::refusal(why))),
                };
            }
        }
        Some(Err(McpError::invalid_params(
            format!(
                "prompt {} asked its client more than {MAX_SESSION_ROUNDS} rounds of questions",
                request.name
            ),
            None,
        )))
    }
}
