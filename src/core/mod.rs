//! The core: one game source, the tool registry and call dispatch. Both faces (the
//! console and the MCP server) reach the game only through [`Core::call`].
//!
//! A call flows one way: look up the tool → validate the arguments against its input
//! schema → run the handler → result (or a structured [`ToolError`]).

pub mod error;
pub mod schema;

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Value, json};

use crate::source::{BoxFuture, GameSource, SourceInfo};
use error::{ErrorCode, ToolError};
use schema::ArgSchema;

/// A tool's public description: what `tools/list` shows an agent.
#[derive(Debug, Clone)]
pub struct ToolSpec {
    pub name: &'static str,
    pub description: &'static str,
    /// JSON Schema (draft 2020-12 compatible) of the arguments object.
    pub input_schema: Value,
}

/// A tool's implementation: takes the core and already-validated arguments.
pub type Handler =
    Arc<dyn Fn(Core, Value) -> BoxFuture<'static, Result<Value, ToolError>> + Send + Sync>;

struct RegisteredTool {
    spec: ToolSpec,
    schema: ArgSchema,
    handler: Handler,
}

/// The set of tools a core serves, by name.
#[derive(Default)]
pub struct Registry {
    tools: BTreeMap<&'static str, RegisteredTool>,
}

impl Registry {
    /// Adds a tool. Panics on a duplicate name or a schema that does not compile: both
    /// are programming errors caught by the first test that builds a core.
    pub fn add<F, Fut>(&mut self, spec: ToolSpec, handler: F)
    where
        F: Fn(Core, Value) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        let schema = ArgSchema::compile(&spec.input_schema)
            .unwrap_or_else(|e| panic!("input schema of {} does not compile: {e}", spec.name));
        let name = spec.name;
        let handler: Handler = Arc::new(move |core, args| Box::pin(handler(core, args)));
        let previous = self.tools.insert(
            name,
            RegisteredTool {
                spec,
                schema,
                handler,
            },
        );
        assert!(previous.is_none(), "tool {name} registered twice");
    }
}

/// The message of a panicked task, for the error a caller sees.
fn panic_text(e: tokio::task::JoinError) -> String {
    match e.try_into_panic() {
        Ok(payload) => payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".to_string()),
        Err(e) => e.to_string(),
    }
}

/// Where timestamps come from: the system clock, or a fixed instant so that snapshots
/// and replays are stable.
#[derive(Debug, Clone, Copy)]
pub enum WallClock {
    System,
    Fixed(DateTime<Utc>),
}

impl WallClock {
    pub fn now(&self) -> DateTime<Utc> {
        match self {
            WallClock::System => Utc::now(),
            WallClock::Fixed(t) => *t,
        }
    }
}

struct Inner {
    source: Arc<dyn GameSource>,
    registry: Registry,
    wall: WallClock,
}

/// The server core. Cheap to clone; every clone is the same core.
#[derive(Clone)]
pub struct Core {
    inner: Arc<Inner>,
}

impl Core {
    /// A core over `source` serving the whole tool catalog, stamped by the system clock.
    pub fn new(source: Arc<dyn GameSource>) -> Core {
        Core::with_clock(source, WallClock::System)
    }

    pub fn with_clock(source: Arc<dyn GameSource>, wall: WallClock) -> Core {
        Core::with_extra_tools(source, wall, |_| {})
    }

    /// The whole catalog plus the tools `extra` registers (for embedding and tests).
    pub fn with_extra_tools(
        source: Arc<dyn GameSource>,
        wall: WallClock,
        extra: impl FnOnce(&mut Registry),
    ) -> Core {
        let mut registry = Registry::default();
        crate::tools::register_all(&mut registry);
        extra(&mut registry);
        Core {
            inner: Arc::new(Inner {
                source,
                registry,
                wall,
            }),
        }
    }

    /// Calls a tool by name. `args` may be `null` (no arguments) or an object.
    pub async fn call(&self, tool: &str, args: Value) -> Result<Value, ToolError> {
        let Some(registered) = self.inner.registry.tools.get(tool) else {
            return Err(self.unknown_tool(tool));
        };
        let args = if args.is_null() { json!({}) } else { args };
        registered.schema.check(&args)?;
        // The handler runs as its own task so that a bug that panics in one tool comes
        // back as a structured error and the server keeps serving.
        match tokio::spawn((registered.handler)(self.clone(), args)).await {
            Ok(result) => result,
            Err(e) => Err(ToolError::new(
                ErrorCode::ToolExecutionFailed,
                format!("{tool} failed unexpectedly: {}", panic_text(e)),
            )),
        }
    }

    /// [`Core::call`], with a failure turned into the wire error object.
    pub async fn call_json(&self, tool: &str, args: Value) -> Result<Value, Value> {
        self.call(tool, args)
            .await
            .map_err(|e| e.to_json(&self.timestamp()))
    }

    fn unknown_tool(&self, tool: &str) -> ToolError {
        let mut close: Vec<&str> = self
            .tool_names()
            .filter(|n| {
                let wanted = tool.trim_start_matches("structs_");
                !wanted.is_empty() && n.contains(wanted)
            })
            .take(5)
            .collect();
        if close.is_empty() {
            close = self.tool_names().take(5).collect();
        }
        let mut e = ToolError::field(
            ErrorCode::ToolNotFound,
            "name",
            format!("no tool named {tool:?} is registered"),
        )
        .with_message(format!("unknown tool {tool:?}"));
        e.extra.insert("suggestions".into(), json!(close));
        e
    }

    /// Every registered tool's spec, by name.
    pub fn tools(&self) -> impl Iterator<Item = &ToolSpec> {
        self.inner.registry.tools.values().map(|t| &t.spec)
    }

    pub fn tool_names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.inner.registry.tools.keys().copied()
    }

    /// The source's name, description and block height.
    pub fn status(&self) -> SourceInfo {
        self.inner.source.info()
    }

    pub(crate) fn source(&self) -> &dyn GameSource {
        self.inner.source.as_ref()
    }

    /// Now, in RFC 3339 with second precision (`2026-11-21T10:00:00Z`).
    pub fn timestamp(&self) -> String {
        self.inner
            .wall
            .now()
            .to_rfc3339_opts(SecondsFormat::Secs, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::sim::SimSource;

    fn core_with_a_broken_tool() -> Core {
        Core::with_extra_tools(Arc::new(SimSource::demo()), WallClock::System, |r| {
            r.add(
                ToolSpec {
                    name: "structs_test_broken",
                    description: "A tool with a bug, for testing.",
                    input_schema: json!({"type": "object", "additionalProperties": false}),
                },
                |_core, _args| async { panic!("index out of bounds in the test tool") },
            );
        })
    }

    #[tokio::test]
    async fn a_panicking_tool_is_a_structured_error_and_the_core_keeps_serving() {
        let core = core_with_a_broken_tool();
        let e = core
            .call("structs_test_broken", json!({}))
            .await
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::ToolExecutionFailed);
        assert!(e.message.contains("index out of bounds"), "{}", e.message);
        let v = core
            .call("structs_validate_entity_id", json!({"id": "1-1"}))
            .await
            .unwrap();
        assert_eq!(v["valid"], true);
    }

    #[test]
    #[should_panic(expected = "registered twice")]
    fn duplicate_tool_names_are_refused() {
        let mut r = Registry::default();
        crate::tools::register_all(&mut r);
        crate::tools::register_all(&mut r);
    }
}
