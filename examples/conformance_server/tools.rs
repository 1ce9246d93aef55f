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

fn text(t: impl Into<String>) -> Value {
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

type Answer = Result<Value, ToolError>;

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
    for (name, description, input_schema, handler) in fixtures() {
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
    registry.long_running("protocol_error_job");
    registry.task_required("failing_job");
    registry
}
