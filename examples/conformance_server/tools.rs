//! The suite's fixture tools, each as its scenario describes it, registered as content
//! tools ([`Registry::add_content`]): their schemas as the suite wrote them and their
//! answers MCP tool results. Long ones run as tasks (`slow_compute`), and one only as
//! a task (`failing_job`), through the layer's task stage.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use structs_console::context::log::Level;
use structs_console::context::{CallContext, ProgressUpdate};
use structs_console::error::ToolError;
use structs_console::handles::Shaping;
use structs_console::references::Support;
use structs_console::tools::{Handler, Hints, Registry, ToolSpec};

/// A 1×1 red PNG.
pub const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/// A WAV file of one silent 8-bit sample at 8 kHz.
fn wav() -> String {
    use base64::Engine as _;
    let mut b = Vec::new();
    b.extend_from_slice(b"RIFF");
    b.extend_from_slice(&37u32.to_le_bytes());
    b.extend_from_slice(b"WAVEfmt ");
    b.extend_from_slice(&16u32.to_le_bytes());
    b.extend_from_slice(&1u16.to_le_bytes()); // PCM
    b.extend_from_slice(&1u16.to_le_bytes()); // mono
    b.extend_from_slice(&8000u32.to_le_bytes());
    b.extend_from_slice(&8000u32.to_le_bytes());
    b.extend_from_slice(&1u16.to_le_bytes());
    b.extend_from_slice(&8u16.to_le_bytes());
    b.extend_from_slice(b"data");
    b.extend_from_slice(&1u32.to_le_bytes());
    b.push(128);
    base64::engine::general_purpose::STANDARD.encode(b)
}

/// The input schema of `json_schema_2020_12_tool`, keyword for keyword.
fn schema_2020_12() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"address": {"$anchor": "addressDef", "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    })
}

pub fn text(t: impl Into<String>) -> Value {
    json!({"content": [{"type": "text", "text": t.into()}]})
}

fn no_arguments() -> Value {
    json!({"type": "object", "properties": {}})
}

/// Waits `for_`, or until the call is cancelled: then `false`.
async fn sleep(ctx: &CallContext, for_: Duration) -> bool {
    tokio::select! {
        () = tokio::time::sleep(for_) => true,
        () = ctx.cancelled() => false,
    }
}

pub type Answer = Result<Value, ToolError>;

/// A fixture's answer to come.
pub type Fut = std::pin::Pin<Box<dyn std::future::Future<Output = Answer> + Send>>;

/// Asks the client `method` with `params` and says what came back as the tool's text,
/// after `said`; a client that could not be asked is the tool's error (one that did not
/// declare the capability gets `-32021` from the layer).
async fn ask(method: &'static str, params: Value, said: fn(&Value) -> String) -> Answer {
    match CallContext::current()
        .ask_client("answer", method, params)
        .await
    {
        Ok(answer) => Ok(text(said(&answer))),
        Err(why) => {
            Ok(json!({"isError": true, "content": [{"type": "text", "text": why.to_string()}]}))
        }
    }
}

/// An elicitation's answer as the suite's tools say it.
fn elicited(answer: &Value) -> String {
    format!(
        "Elicitation completed: action={}, content={}",
        answer["action"].as_str().unwrap_or_default(),
        answer.get("content").unwrap_or(&Value::Null)
    )
}

/// The form of `test_elicitation_sep1034_defaults`: a default for every primitive type.
fn defaults_form() -> Value {
    json!({"message": "Please review and update the form fields with defaults",
    "requestedSchema": {"type": "object", "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {"type": "string", "description": "User status",
            "enum": ["active", "inactive", "pending"], "default": "active"},
        "verified": {"type": "boolean", "description": "Verification status", "default": true}
    }}})
}

/// The form of `test_elicitation_sep1330_enums`: the five kinds of choice.
fn enums_form() -> Value {
    let titled = |prefix: &str, word: &str| {
        json!([
            {"const": format!("{prefix}1"), "title": format!("First {word}")},
            {"const": format!("{prefix}2"), "title": format!("Second {word}")},
            {"const": format!("{prefix}3"), "title": format!("Third {word}")}
        ])
    };
    json!({"message": "Please select options from the enum fields",
    "requestedSchema": {"type": "object", "properties": {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {"type": "string", "oneOf": titled("value", "Option")},
        "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"]},
        "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
        "titledMulti": {"type": "array", "items": {"anyOf": titled("value", "Choice")}}
    }}})
}

/// A declarative table: each fixture's name, description, input schema and answer.
fn fixtures() -> Vec<(&'static str, &'static str, Value, Handler)> {
    fn handler<F, Fut>(f: F) -> Handler
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Answer> + Send + 'static,
    {
        Arc::new(move |_env, args| Box::pin(f(args)))
    }
    vec![
        (
            "test_simple_text",
            "Answers with one text block.",
            no_arguments(),
            handler(|_| async { Ok(text("This is a simple text response for testing.")) }),
        ),
        (
            "test_image_content",
            "Answers with a PNG image.",
            no_arguments(),
            handler(|_| async {
                Ok(json!({"content": [{"type": "image", "data": PNG, "mimeType": "image/png"}]}))
            }),
        ),
        (
            "test_audio_content",
            "Answers with a WAV clip.",
            no_arguments(),
            handler(|_| async {
                Ok(json!({"content": [{"type": "audio", "data": wav(), "mimeType": "audio/wav"}]}))
            }),
        ),
        (
            "test_embedded_resource",
            "Answers with an embedded resource.",
            no_arguments(),
            handler(|_| async {
                Ok(json!({"content": [{"type": "resource", "resource": {
                "uri": "test://embedded-resource", "mimeType": "text/plain",
                "text": "This is an embedded resource content."}}]}))
            }),
        ),
        (
            "test_multiple_content_types",
            "Answers with text, an image and a resource.",
            no_arguments(),
            handler(|_| async {
                Ok(json!({"content": [
                    {"type": "text", "text": "Multiple content types test:"},
                    {"type": "image", "data": PNG, "mimeType": "image/png"},
                    {"type": "resource", "resource": {"uri": "test://mixed-content-resource",
                        "mimeType": "application/json", "text": "{\"test\":\"data\",\"value\":123}"}}
                ]}))
            }),
        ),
        (
            "test_error_handling",
            "Always answers with a tool error.",
            no_arguments(),
            handler(|_| async {
                Ok(json!({"isError": true, "content": [{"type": "text",
                "text": "This tool intentionally returns an error for testing"}]}))
            }),
        ),
        (
            "test_tool_with_logging",
            "Logs three messages while it runs.",
            no_arguments(),
            handler(|_| async {
                let ctx = CallContext::current();
                for (i, said) in [
                    "Tool execution started",
                    "Tool processing data",
                    "Tool execution completed",
                ]
                .into_iter()
                .enumerate()
                {
                    if i > 0 {
                        sleep(&ctx, Duration::from_millis(50)).await;
                    }
                    ctx.log(Level::Info, "conformance", json!(said));
                }
                Ok(text("Tool with logging executed successfully"))
            }),
        ),
        (
            "test_logging_tool",
            "Logs one message: sent only to a caller that asked for a log level.",
            no_arguments(),
            handler(|_| async {
                CallContext::current().log(
                    Level::Info,
                    "conformance",
                    json!("test_logging_tool ran"),
                );
                Ok(text("logged"))
            }),
        ),
        (
            "test_tool_with_progress",
            "Reports its progress three times.",
            no_arguments(),
            handler(|_| async {
                let ctx = CallContext::current();
                for (i, done) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                    if i > 0 {
                        sleep(&ctx, Duration::from_millis(50)).await;
                    }
                    ctx.report(ProgressUpdate {
                        progress: done,
                        total: Some(100.0),
                        message: format!("{done}/100"),
                        data: Value::Null,
                    });
                }
                Ok(text("Tool with progress executed successfully"))
            }),
        ),
        (
            "json_schema_2020_12_tool",
            "Tool with JSON Schema 2020-12 features",
            schema_2020_12(),
            handler(|args| async move { Ok(text(format!("Received: {args}"))) }),
        ),
        (
            "test_custom_header",
            "Takes a region mirrored into the Mcp-Param-Region header.",
            json!({"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}, "required": ["region"]}),
            handler(|args| async move {
                Ok(text(format!(
                    "Region: {}",
                    args["region"].as_str().unwrap_or_default()
                )))
            }),
        ),
        (
            "test_sampling",
            "Asks the client's model to complete a prompt.",
            json!({"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]}),
            handler(|args| async move {
                let params = json!({"messages": [{"role": "user", "content": {"type": "text",
                    "text": args["prompt"].as_str().unwrap_or_default()}}], "maxTokens": 100});
                ask("sampling/createMessage", params, |a| {
                    format!(
                        "LLM response: {}",
                        a["content"]["text"].as_str().unwrap_or_default()
                    )
                })
                .await
            }),
        ),
        (
            "test_elicitation",
            "Asks the user for a name and an email.",
            json!({"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}),
            handler(|args| async move {
                let params = json!({"message": args["message"].as_str().unwrap_or_default(),
                    "requestedSchema": {"type": "object", "properties": {
                        "username": {"type": "string", "description": "User's response"},
                        "email": {"type": "string", "description": "User's email address"}},
                    "required": ["username", "email"]}});
                ask("elicitation/create", params, |a| {
                    format!(
                        "User response: action={}, content={}",
                        a["action"].as_str().unwrap_or_default(),
                        a.get("content").unwrap_or(&Value::Null)
                    )
                })
                .await
            }),
        ),
        (
            "test_elicitation_sep1034_defaults",
            "Asks for a form whose every field has a default.",
            no_arguments(),
            handler(|_| async { ask("elicitation/create", defaults_form(), elicited).await }),
        ),
        (
            "test_elicitation_sep1330_enums",
            "Asks for a form with every kind of choice.",
            no_arguments(),
            handler(|_| async { ask("elicitation/create", enums_form(), elicited).await }),
        ),
        (
            "test_missing_capability",
            "Needs the client's sampling: a client that did not declare it is refused.",
            no_arguments(),
            handler(|_| async {
                let params = json!({"messages": [{"role": "user", "content": {"type": "text", "text": "ping"}}], "maxTokens": 10});
                ask("sampling/createMessage", params, |_| "sampled".to_string()).await
            }),
        ),
        (
            "test_trigger_prompt_change",
            "Adds a prompt to the list: listeners hear that the prompt list changed.",
            no_arguments(),
            handler(|_| async {
                Ok(text(format!(
                    "Added the prompt {}",
                    super::offer::add_prompt()
                )))
            }),
        ),
        (
            "test_reconnection",
            "Closes its response stream mid-call; its answer reaches the client on the resumed stream.",
            no_arguments(),
            handler(|_| async {
                let ctx = CallContext::current();
                let closed = ctx.close_stream(Duration::from_millis(500)).await;
                sleep(&ctx, Duration::from_millis(700)).await;
                Ok(text(if closed {
                    "Reconnection test completed: this answer followed the stream's close"
                } else {
                    "Reconnection test completed: this call had no stream of its own to close"
                }))
            }),
        ),
        (
            "greet",
            "Greets someone, at once.",
            json!({"type": "object", "properties": {"name": {"type": "string"}}}),
            handler(|args| async move {
                Ok(text(format!(
                    "Hello, {}!",
                    args["name"].as_str().unwrap_or("world")
                )))
            }),
        ),
        (
            "slow_compute",
            "Sleeps the seconds it is given, then answers; a task for a client that can take one.",
            json!({"type": "object", "properties": {"seconds": {"type": "number", "minimum": 0}}}),
            handler(|args| async move {
                let seconds = args["seconds"].as_f64().unwrap_or(1.0);
                sleep(&CallContext::current(), Duration::from_secs_f64(seconds)).await;
                Ok(text(format!("Computed after {seconds} s")))
            }),
        ),
        (
            "confirm_delete",
            "Deletes a file once the user confirms; a task for a client that can take one.",
            json!({"type": "object", "properties": {"filename": {"type": "string"}}, "required": ["filename"]}),
            handler(|args| async move {
                let name = args["filename"].as_str().unwrap_or_default().to_string();
                super::rounds::confirm_delete(name).await
            }),
        ),
        (
            "failing_job",
            "Runs only as a task, and ends with a tool error after a second.",
            no_arguments(),
            handler(|_| async {
                sleep(&CallContext::current(), Duration::from_secs(1)).await;
                Ok(
                    json!({"isError": true, "content": [{"type": "text", "text": "the job failed, as it always does"}]}),
                )
            }),
        ),
        (
            "protocol_error_job",
            "Fails as the server's error, not the tool's.",
            no_arguments(),
            handler(|_| async { panic!("protocol_error_job fails on purpose") }),
        ),
    ]
}

/// The fixtures' registry: nothing of the Structs catalog.
pub fn registry() -> Registry {
    // Listed as registered: the suite calls the first tool listed with no arguments.
    let mut registry = Registry::in_registration_order();
    let asking = super::rounds::fixtures()
        .into_iter()
        .map(|(name, description, run)| {
            let handler: Handler = Arc::new(move |_env, _args| run());
            (name, description, no_arguments(), handler)
        });
    for (name, description, input_schema, handler) in fixtures().into_iter().chain(asking) {
        let spec = ToolSpec {
            name,
            description,
            input_schema,
            references: Support::None,
            shaping: Shaping::Own,
            title: "",
            hints: Hints::default(),
            output_schema: Value::Null,
        };
        registry.add_content(spec, handler);
    }
    registry.long_running("slow_compute");
    registry.long_running("confirm_delete");
    registry.long_running("multi_input");
    registry.task_required("test_tool_with_task");
    registry.asks_before_task("test_tool_with_task");
    registry.long_running("protocol_error_job");
    registry.task_required("failing_job");
    registry
}
