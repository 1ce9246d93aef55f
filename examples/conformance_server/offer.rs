//! The suite's fixture resources, template and prompts, offered beside the core's
//! through the layer's [`Offer`].

use rmcp::ErrorData as McpError;
use rmcp::model::{
    GetPromptResult, JsonObject, Prompt, PromptArgument, PromptMessage, ReadResourceResult,
    Resource, ResourceContents, ResourceTemplate,
};
use serde_json::{Value, json};
use structs_console::context::Unasked;
use structs_console::mcp::server::ask::rounds::{Inputs, refusal};
use structs_console::mcp::server::offer::Offer;

use super::tools::PNG;

const STATIC_TEXT: &str = "test://static-text";
const STATIC_BINARY: &str = "test://static-binary";
const WATCHED: &str = "test://watched-resource";
const TEMPLATE: &str = "test://template/{id}/data";

/// The fixtures.
pub struct Fixtures;

/// How many prompts `test_trigger_prompt_change` added, told to whoever listens.
static ADDED: std::sync::LazyLock<tokio::sync::watch::Sender<u64>> =
    std::sync::LazyLock::new(|| tokio::sync::watch::channel(0).0);

/// Adds one prompt to the list (`test_dynamic_prompt_N`), and says its name.
pub fn add_prompt() -> String {
    ADDED.send_modify(|n| *n += 1);
    format!("test_dynamic_prompt_{}", *ADDED.borrow())
}

/// A message as the scenario writes it.
fn message(v: Value) -> PromptMessage {
    serde_json::from_value(v).expect("a fixture message is a prompt message")
}

fn argument(name: &str, description: &str) -> PromptArgument {
    PromptArgument::new(name)
        .with_description(description)
        .with_required(true)
}

/// A required argument's value, or `-32602` naming it.
fn given<'a>(arguments: &'a JsonObject, name: &str) -> Result<&'a str, McpError> {
    arguments
        .get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| McpError::invalid_params(format!("{name} is required"), None))
}

impl Offer for Fixtures {
    fn resources(&self) -> Vec<Resource> {
        vec![
            Resource::new(STATIC_TEXT, "static text")
                .with_description("A fixed text resource")
                .with_mime_type("text/plain"),
            Resource::new(STATIC_BINARY, "static binary")
                .with_description("A fixed PNG image")
                .with_mime_type("image/png"),
            Resource::new(WATCHED, "watched resource")
                .with_description("A resource to subscribe to")
                .with_mime_type("text/plain"),
        ]
    }

    fn templates(&self) -> Vec<ResourceTemplate> {
        vec![
            ResourceTemplate::new(TEMPLATE, "template data")
                .with_description("Data for an id")
                .with_mime_type("application/json"),
        ]
    }

    fn read(&self, uri: &str) -> Option<Result<ReadResourceResult, McpError>> {
        let contents = match uri {
            STATIC_TEXT => {
                ResourceContents::text("This is the content of the static text resource.", uri)
                    .with_mime_type("text/plain")
            }
            STATIC_BINARY => ResourceContents::blob(PNG, uri).with_mime_type("image/png"),
            WATCHED => ResourceContents::text("watched", uri).with_mime_type("text/plain"),
            _ => {
                let id = uri
                    .strip_prefix("test://template/")?
                    .strip_suffix("/data")?;
                if id.is_empty() || id.contains('/') {
                    return None;
                }
                let data =
                    json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
                ResourceContents::text(data.to_string(), uri).with_mime_type("application/json")
            }
        };
        Some(Ok(ReadResourceResult::new(vec![contents])))
    }

    fn prompt_changes(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        Some(ADDED.subscribe())
    }

    fn prompts(&self) -> Vec<Prompt> {
        let added = (1..=*ADDED.borrow()).map(|n| {
            Prompt::new(
                format!("test_dynamic_prompt_{n}"),
                Some("A prompt added by test_trigger_prompt_change"),
                None,
            )
        });
        let fixed = vec![
            Prompt::new(
                "test_simple_prompt",
                Some("A prompt without arguments"),
                None,
            ),
            Prompt::new(
                "test_prompt_with_arguments",
                Some("A prompt with two arguments"),
                Some(vec![
                    argument("arg1", "First test argument"),
                    argument("arg2", "Second test argument"),
                ]),
            ),
            Prompt::new(
                "test_prompt_with_embedded_resource",
                Some("A prompt embedding a resource"),
                Some(vec![argument(
                    "resourceUri",
                    "URI of the resource to embed",
                )]),
            ),
            Prompt::new(
                "test_prompt_with_image",
                Some("A prompt with an image"),
                None,
            ),
            Prompt::new(
                "test_input_required_result_prompt",
                Some("A prompt that asks the user for its context first"),
                None,
            ),
        ];
        fixed.into_iter().chain(added).collect()
    }

    fn prompt(
        &self,
        name: &str,
        arguments: &JsonObject,
        inputs: &Inputs,
    ) -> Option<Result<GetPromptResult, McpError>> {
        let text =
            |t: String| message(json!({"role": "user", "content": {"type": "text", "text": t}}));
        let messages = match name {
            "test_simple_prompt" => Ok(vec![text("This is a simple prompt for testing.".into())]),
            "test_prompt_with_arguments" => (|| {
                let (a, b) = (given(arguments, "arg1")?, given(arguments, "arg2")?);
                Ok(vec![text(format!(
                    "Prompt with arguments: arg1='{a}', arg2='{b}'"
                ))])
            })(),
            "test_prompt_with_embedded_resource" => given(arguments, "resourceUri").map(|uri| {
                vec![
                    message(
                        json!({"role": "user", "content": {"type": "resource", "resource": {
                        "uri": uri, "mimeType": "text/plain",
                        "text": "Embedded resource content for testing."}}}),
                    ),
                    text("Please process the embedded resource above.".into()),
                ]
            }),
            "test_prompt_with_image" => Ok(vec![
                message(
                    json!({"role": "user", "content": {"type": "image", "data": PNG, "mimeType": "image/png"}}),
                ),
                text("Please analyze the image above.".into()),
            ]),
            "test_input_required_result_prompt" => {
                let form = json!({"message": "What context should the prompt use?",
                    "requestedSchema": {"type": "object",
                        "properties": {"context": {"type": "string"}}, "required": ["context"]}});
                match inputs.answer("user_context", "elicitation/create", form) {
                    Ok(a) => Ok(vec![text(format!(
                        "Answer with this context in mind: {}",
                        a["content"]["context"].as_str().unwrap_or_default()
                    ))]),
                    // Asked in the next round: the layer sends the question, not this.
                    Err(Unasked::InRound(_)) => Ok(Vec::new()),
                    Err(why) => Err(refusal(why)),
                }
            }
            dynamic if dynamic.starts_with("test_dynamic_prompt_") => {
                let n: u64 = dynamic["test_dynamic_prompt_".len()..].parse().ok()?;
                if n == 0 || n > *ADDED.borrow() {
                    return None;
                }
                Ok(vec![text(format!(
                    "This is {dynamic}, added while serving."
                ))])
            }
            _ => return None,
        };
        Some(messages.map(GetPromptResult::new))
    }

    fn watchable(&self, uri: &str) -> bool {
        uri == WATCHED
    }
}
