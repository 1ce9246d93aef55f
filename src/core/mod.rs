//! The call pipeline: one game source, a registry of tools built outside (by
//! [`crate::assembly`], or by the MCP client for another server's tools) and call
//! dispatch. Every face reaches the game only through [`Core::call`].
//!
//! A call flows one way, in two steps. [`Core::prepare`]: look up the tool → check the
//! arguments' size → rename catalog aliases and drop optional nulls → validate against
//! the input schema → take out the reference and shaping options. Then
//! [`Prepared::run`]: run the handler (in the caller's task) → attach references →
//! shape, and store a result over the limit as a handle → result (or a structured
//! [`ToolError`]).

use std::sync::{Arc, Weak};

pub use prepared::Prepared;

mod prepared;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use crate::clock::WallClock;
use crate::context::subscriptions::Subscriptions;
use crate::context::{CallContext, ClientWork};
use crate::error::{self, ErrorCode, ToolError};
use crate::events::{EventBus, EventFeed, FeedHealth};
use crate::handles::{self, HandleConfig, Handles};
use crate::plan::Caller;
use crate::references::resolve::{ReferenceCache, Resolver};
use crate::references::{ReferenceConfig, Support};
use crate::source::{BoxFuture, GameSource, SourceHealth, SourceInfo, World};
use crate::store::HandleStore;
use crate::text::edit_distance;
use crate::tools::{Env, Registry, ToolSpec};

/// The most a call's arguments may weigh, as compact JSON (about; strings and keys by
/// their bytes, numbers by their digits).
pub const MAX_ARGUMENT_BYTES: usize = 1 << 20;

/// The deepest a call's arguments may nest (objects and arrays).
pub const MAX_ARGUMENT_DEPTH: usize = 32;

/// Refuses arguments over [`MAX_ARGUMENT_BYTES`] or nested deeper than
/// [`MAX_ARGUMENT_DEPTH`], before any schema or tool looks at them. The walk keeps its
/// own stack (no recursion, whatever the depth) and stops at the first limit passed.
fn check_size(args: &Value) -> Result<(), ToolError> {
    let mut bytes = 0usize;
    let mut stack: Vec<(&Value, usize)> = vec![(args, 1)];
    while let Some((v, depth)) = stack.pop() {
        match v {
            Value::Array(items) => {
                if depth > MAX_ARGUMENT_DEPTH {
                    return Err(too_deep());
                }
                bytes += 2 + items.len();
                stack.extend(items.iter().map(|i| (i, depth + 1)));
            }
            Value::Object(map) => {
                if depth > MAX_ARGUMENT_DEPTH {
                    return Err(too_deep());
                }
                bytes += 2 + map.len();
                for (k, item) in map {
                    bytes += k.len() + 3;
                    stack.push((item, depth + 1));
                }
            }
            Value::String(text) => bytes += text.len() + 2,
            Value::Number(_) => bytes += 8,
            Value::Bool(_) | Value::Null => bytes += 4,
        }
        if bytes > MAX_ARGUMENT_BYTES {
            return Err(ToolError::field(
                ErrorCode::ValidationOutOfRange,
                "arguments",
                format!(
                    "weigh more than {} KB; the most a call may send is {} KB",
                    MAX_ARGUMENT_BYTES / 1024,
                    MAX_ARGUMENT_BYTES / 1024
                ),
            )
            .with_extra("limit_bytes", json!(MAX_ARGUMENT_BYTES)));
        }
    }
    Ok(())
}

fn too_deep() -> ToolError {
    ToolError::field(
        ErrorCode::ValidationOutOfRange,
        "arguments",
        format!("nest deeper than {MAX_ARGUMENT_DEPTH} levels of objects and arrays"),
    )
    .with_extra("limit_depth", json!(MAX_ARGUMENT_DEPTH))
}

/// The message of a panicked task, for the error a caller sees.
fn panic_text(payload: Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_string())
}

struct Inner {
    source: Arc<dyn GameSource>,
    registry: Registry,
    wall: WallClock,
    references: Arc<Resolver>,
    handles: Arc<Handles>,
    /// The subscriptions of callers that bring none of their own (the console).
    subscriptions: Arc<Subscriptions>,
    /// The running work of callers that bring no count of their own (the console).
    work: Arc<ClientWork>,
    /// Events from outside the process (NATS), read instead of the source's own bus.
    feed: Option<Arc<dyn EventFeed>>,
    /// The tools are another server's: it attaches references, shapes and stores its
    /// own results.
    forwarded: bool,
    /// This core as the tools a plan calls, made once: a weak handle, so the core does
    /// not keep itself alive.
    caller: Caller,
}

/// The core as [`crate::plan::Dispatch`] for its own tools, without owning it.
struct SelfCaller(Weak<Inner>);

impl SelfCaller {
    fn core(&self) -> Option<Core> {
        self.0.upgrade().map(|inner| Core { inner })
    }
}

impl crate::plan::Dispatch for SelfCaller {
    fn call(
        &self,
        tool: &str,
        args: Value,
        ctx: CallContext,
    ) -> BoxFuture<'static, Result<Value, ToolError>> {
        match self.core() {
            Some(core) => crate::plan::Dispatch::call(&core, tool, args, ctx),
            None => Box::pin(async {
                Err(ToolError::new(
                    ErrorCode::ToolExecutionFailed,
                    "the server is shutting down",
                ))
            }),
        }
    }

    fn input_schema(&self, tool: &str) -> Option<Value> {
        self.core()?.tool_spec(tool).map(|s| s.input_schema.clone())
    }

    fn similar_tools(&self, tool: &str) -> Vec<String> {
        self.core()
            .map(|c| c.similar_tools(tool))
            .unwrap_or_default()
    }

    fn check_arguments(&self, tool: &str, args: &Value) -> Result<(), ToolError> {
        match self.core() {
            Some(core) => core.check_arguments(tool, args),
            None => Err(ToolError::new(
                ErrorCode::ToolExecutionFailed,
                "the server is shutting down",
            )),
        }
    }

    fn handles(&self) -> Option<Arc<Handles>> {
        crate::plan::Dispatch::handles(&self.core()?)
    }

    fn wall(&self) -> WallClock {
        self.core().map_or(WallClock::System, |c| c.inner.wall)
    }

    fn client_work(&self, ctx: &CallContext) -> Arc<ClientWork> {
        match self.core() {
            Some(core) => core.client_work(ctx),
            None => ctx.work().unwrap_or_default(),
        }
    }
}

/// Builds a [`Core`] over a source and a registry of tools.
pub struct CoreBuilder {
    source: Arc<dyn GameSource>,
    registry: Registry,
    wall: WallClock,
    references: ReferenceConfig,
    handles: HandleConfig,
    handle_store: Option<Arc<dyn HandleStore>>,
    feed: Option<Arc<dyn EventFeed>>,
    forwarded: bool,
}

impl CoreBuilder {
    /// Where timestamps come from (the system clock by default).
    pub fn clock(mut self, wall: WallClock) -> CoreBuilder {
        self.wall = wall;
        self
    }

    /// The server-wide reference settings (checked with [`ReferenceConfig::validate`]).
    pub fn references(mut self, config: ReferenceConfig) -> CoreBuilder {
        self.references = config;
        self
    }

    /// Handle settings (TTL, cleanup interval).
    pub fn handles(mut self, config: HandleConfig) -> CoreBuilder {
        self.handles = config;
        self
    }

    /// Where results over the size limit are kept (in memory unless set).
    pub fn handle_store(mut self, store: Arc<dyn HandleStore>) -> CoreBuilder {
        self.handle_store = Some(store);
        self
    }

    /// Events from an outside stream (NATS) instead of the source's own bus: the
    /// subscription tools, MCP resource updates and the console's event log read them.
    pub fn event_feed(mut self, feed: Arc<dyn EventFeed>) -> CoreBuilder {
        self.feed = Some(feed);
        self
    }

    /// The registry's tools are another server's (`--connect`): each call is checked
    /// against the server's schema here, then answered there, progress and
    /// cancellation included. References, shaping and handles are the server's
    /// business.
    pub fn forwarded(mut self) -> CoreBuilder {
        self.forwarded = true;
        self
    }

    /// The core; fails when the reference settings are out of range or name a tool
    /// that does not exist or does not carry references.
    pub fn build(self) -> Result<Core, String> {
        self.references.validate()?;
        self.handles.validate()?;
        for name in self.references.tools.keys() {
            match self.registry.get(name.as_str()) {
                Some(t) if t.spec().references != Support::None => {}
                Some(_) => {
                    return Err(format!(
                        "references.tools.{name}: this tool never carries references"
                    ));
                }
                None => return Err(format!("references.tools.{name}: no tool of that name")),
            }
        }
        let handle_store: Arc<dyn HandleStore> = match self.handle_store {
            Some(store) => store,
            None if self.handles.store == "memory" => Arc::new(self.handles.memory_store()),
            // A Redis store has to be connected (async) before the core exists.
            None => {
                return Err(format!(
                    "handles.store is {:?}: open it with HandleConfig::open_store and pass it \
                     to the builder's handle_store",
                    self.handles.store
                ));
            }
        };
        // Each read and write a span, when traces are exported.
        let handle_store: Arc<dyn HandleStore> = if crate::context::trace::on() {
            Arc::new(crate::store::traced::Traced::new(handle_store))
        } else {
            handle_store
        };
        Ok(Core {
            inner: Arc::new_cyclic(|weak| Inner {
                source: self.source,
                registry: self.registry,
                wall: self.wall,
                references: Arc::new(Resolver::new(self.references)),
                handles: Arc::new(Handles::new(self.handles, handle_store, self.wall)),
                subscriptions: Arc::new(Subscriptions::new()),
                work: Arc::default(),
                feed: self.feed,
                forwarded: self.forwarded,
                caller: Arc::new(SelfCaller(weak.clone())),
            }),
        })
    }
}

/// The server core. Cheap to clone; every clone is the same core.
#[derive(Clone)]
pub struct Core {
    inner: Arc<Inner>,
}

impl Core {
    /// A core over `source` serving the tools of `registry`; see [`crate::assembly`]
    /// for one serving the Structs catalog.
    pub fn builder(source: Arc<dyn GameSource>, registry: Registry) -> CoreBuilder {
        CoreBuilder {
            source,
            registry,
            wall: WallClock::System,
            references: ReferenceConfig::default(),
            handles: HandleConfig::default(),
            handle_store: None,
            feed: None,
            forwarded: false,
        }
    }

    /// Whether the tools are another server's (`--connect`), each call forwarded there.
    pub fn is_forwarded(&self) -> bool {
        self.inner.forwarded
    }

    /// Calls a tool by name. `args` may be `null` (no arguments) or an object.
    pub async fn call(&self, tool: &str, args: Value) -> Result<Value, ToolError> {
        self.call_with(tool, args, CallContext::new()).await
    }

    /// [`Core::call`] with a context: the caller can cancel the call through it and
    /// receives the tool's progress reports. Dropping the returned future cancels the
    /// context too, so work the caller abandoned stops.
    pub async fn call_with(
        &self,
        tool: &str,
        args: Value,
        ctx: CallContext,
    ) -> Result<Value, ToolError> {
        self.prepare(tool, args)?.run(ctx).await
    }

    /// [`Core::call`], with a failure turned into the wire error object.
    pub async fn call_json(&self, tool: &str, args: Value) -> Result<Value, Value> {
        self.call(tool, args)
            .await
            .map_err(|e| e.to_json(&self.timestamp()))
    }

    /// What a tool can reach while it runs.
    fn env(&self, world: World, shaping: handles::Request) -> Env {
        Env {
            shaping,
            world,
            wall: self.inner.wall,
            handles: self.inner.handles.clone(),
            subscriptions: self.inner.subscriptions.clone(),
            work: self.inner.work.clone(),
            tools: self.inner.caller.clone(),
        }
    }

    /// The game as a call sees it now: the source and the event bus read.
    pub fn world(&self) -> World {
        World {
            source: self.inner.source.clone(),
            events: self.events(),
        }
    }

    /// A registered tool's spec.
    pub fn tool_spec(&self, name: &str) -> Option<&ToolSpec> {
        self.inner.registry.get(name).map(|t| t.spec())
    }

    /// Checks `args` as a call of `tool` would be checked ([`Core::prepare`]), without
    /// running it.
    pub fn check_arguments(&self, tool: &str, args: &Value) -> Result<(), ToolError> {
        self.prepare(tool, args.clone()).map(drop)
    }

    /// Up to five tool names like `tool` (for "did you mean").
    pub fn similar_tools(&self, tool: &str) -> Vec<String> {
        self.close_names(tool)
            .into_iter()
            .map(str::to_string)
            .collect()
    }

    fn close_names(&self, tool: &str) -> Vec<&'static str> {
        let wanted = tool.trim_start_matches("structs_");
        let mut close: Vec<&str> = self
            .tool_names()
            .filter(|n| !wanted.is_empty() && n.contains(wanted))
            .take(5)
            .collect();
        if close.is_empty() {
            // The nearest names by edit distance.
            let mut all: Vec<(usize, &'static str)> = self
                .tool_names()
                .map(|n| (edit_distance(tool, n), n))
                .collect();
            all.sort();
            close = all.into_iter().take(5).map(|(_, n)| n).collect();
        }
        close
    }

    /// The `TOOL_NOT_FOUND` error for `tool`, with the nearest names as `suggestions`.
    pub fn unknown_tool(&self, tool: &str) -> ToolError {
        let close = self.close_names(tool);
        let mut e = ToolError::field(
            ErrorCode::ToolNotFound,
            "name",
            format!("no tool named {} is registered", error::echo(&json!(tool))),
        )
        .with_message(format!("unknown tool {}", error::echo(&json!(tool))));
        e.extra.insert("suggestions".into(), json!(close));
        e
    }

    /// Every registered tool's spec, by name.
    pub fn tools(&self) -> impl Iterator<Item = &ToolSpec> {
        self.inner.registry.iter().map(|t| t.spec())
    }

    pub fn tool_names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.inner.registry.names()
    }

    /// The source's name, description and block height.
    pub fn status(&self) -> SourceInfo {
        self.inner.source.info()
    }

    /// The game source the core reads.
    pub fn source(&self) -> &dyn GameSource {
        self.inner.source.as_ref()
    }

    /// The event bus the core reads: the outside feed's when one is set (`--events`),
    /// else the source's, when it has one (the sim's does).
    pub fn events(&self) -> Option<EventBus> {
        match &self.inner.feed {
            Some(feed) => Some(feed.bus()),
            None => self.inner.source.events(),
        }
    }

    /// The outside event feed's health, when one is set.
    pub fn feed_health(&self) -> Option<FeedHealth> {
        self.inner.feed.as_ref().map(|f| f.health())
    }

    /// The source's connection health, for networked sources.
    pub fn source_health(&self) -> Option<SourceHealth> {
        self.inner.source.health()
    }

    /// The subscriptions of callers without their own (the console, tests).
    pub fn subscriptions(&self) -> Arc<Subscriptions> {
        self.inner.subscriptions.clone()
    }

    /// Where the caller of `ctx` counts its running work: its own, or the core's for
    /// callers that bring none.
    pub fn client_work(&self, ctx: &CallContext) -> Arc<ClientWork> {
        ctx.work().unwrap_or_else(|| self.inner.work.clone())
    }

    /// The server-wide reference settings.
    pub fn reference_config(&self) -> &ReferenceConfig {
        self.inner.references.config()
    }

    /// Entities resolved as references, reused across calls.
    pub fn reference_cache(&self) -> &ReferenceCache {
        self.inner.references.cache()
    }

    /// The result-handle service: settings, store, cleanup.
    pub fn handles(&self) -> &Arc<Handles> {
        &self.inner.handles
    }

    /// Handle settings.
    pub fn handle_config(&self) -> &HandleConfig {
        self.inner.handles.config()
    }

    /// Where results over the size limit are kept.
    pub fn handle_store(&self) -> &Arc<dyn HandleStore> {
        self.inner.handles.store()
    }

    /// The core's wall clock.
    pub fn wall(&self) -> WallClock {
        self.inner.wall
    }

    /// Now, by the core's wall clock.
    pub fn now(&self) -> DateTime<Utc> {
        self.inner.wall.now()
    }

    /// Now, in RFC 3339 with second precision (`2026-11-21T10:00:00Z`).
    pub fn timestamp(&self) -> String {
        self.inner.wall.timestamp()
    }
}

/// Plans run their steps through the pipeline, like any other caller.
impl crate::plan::Dispatch for Core {
    fn call(
        &self,
        tool: &str,
        args: Value,
        ctx: CallContext,
    ) -> BoxFuture<'static, Result<Value, ToolError>> {
        let core = self.clone();
        let tool = tool.to_string();
        Box::pin(async move { core.call_with(&tool, args, ctx).await })
    }

    fn input_schema(&self, tool: &str) -> Option<Value> {
        self.tool_spec(tool).map(|s| s.input_schema.clone())
    }

    fn similar_tools(&self, tool: &str) -> Vec<String> {
        Core::similar_tools(self, tool)
    }

    fn check_arguments(&self, tool: &str, args: &Value) -> Result<(), ToolError> {
        Core::check_arguments(self, tool, args)
    }

    fn handles(&self) -> Option<Arc<Handles>> {
        (!self.inner.forwarded).then(|| self.inner.handles.clone())
    }

    fn wall(&self) -> WallClock {
        self.inner.wall
    }

    fn client_work(&self, ctx: &CallContext) -> Arc<ClientWork> {
        Core::client_work(self, ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handles::Shaping;
    use crate::source::sim::SimSource;

    /// The catalog, registered here rather than by the assembly (a layer above).
    pub(super) fn catalog() -> Registry {
        let mut r = Registry::default();
        let docs = Arc::new(crate::docs::Docs::embedded());
        crate::tools::register_all(&mut r, &docs, &Arc::default());
        r
    }

    fn core_with_a_broken_tool() -> Core {
        let mut r = catalog();
        r.add(
                    ToolSpec {
                        name: "structs_test_broken",
                        description: "A tool with a bug, for testing.",
                        input_schema: json!({"type": "object", "properties": {}, "additionalProperties": false}),
                        references: Support::None,
                        shaping: Shaping::Standard,
                        title: "Broken",
                        hints: crate::tools::Hints::LOCAL,
                        output_schema: json!({"type": "object", "properties": {}}),
                    },
            |_env, _args| async { panic!("index out of bounds in the test tool") },
        );
        Core::builder(Arc::new(SimSource::demo()), r)
            .build()
            .unwrap()
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

    #[tokio::test]
    async fn arguments_too_big_or_too_deep_are_refused_before_the_tool_runs() {
        let core = Core::builder(Arc::new(SimSource::demo()), catalog())
            .build()
            .unwrap();
        let mut deep = json!("1-1");
        for _ in 0..MAX_ARGUMENT_DEPTH {
            deep = json!([deep]);
        }
        let e = core
            .call("structs_validate_entity_id", json!({ "id": deep }))
            .await
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::ValidationOutOfRange);
        assert_eq!(e.field.as_deref(), Some("arguments"));
        assert!(e.message.contains("deeper than 32"), "{}", e.message);
        // One level less is only the schema's business.
        let mut ok = json!("1-1");
        for _ in 0..MAX_ARGUMENT_DEPTH - 2 {
            ok = json!([ok]);
        }
        let e = core
            .call("structs_validate_entity_id", json!({ "id": ok }))
            .await
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::ValidationWrongType);
        let huge = "x".repeat(MAX_ARGUMENT_BYTES);
        let e = core
            .call("structs_validate_entity_id", json!({ "id": huge }))
            .await
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::ValidationOutOfRange);
        assert!(e.message.contains("1024 KB"), "{}", e.message);
        // A value deeper than serde_json would parse is refused without recursion.
        let mut very = Value::Null;
        for _ in 0..100_000 {
            let mut map = serde_json::Map::new();
            map.insert("a".into(), very);
            very = Value::Object(map);
        }
        assert!(check_size(&very).is_err());
        // Dropping such a value recurses in serde_json; leak it in the test instead.
        std::mem::forget(very);
    }

    #[test]
    #[should_panic(expected = "registered twice")]
    fn duplicate_tool_names_are_refused() {
        let mut r = Registry::default();
        let docs = Arc::new(crate::docs::Docs::embedded());
        let runs = Arc::default();
        crate::tools::register_all(&mut r, &docs, &runs);
        crate::tools::register_all(&mut r, &docs, &runs);
    }
}
