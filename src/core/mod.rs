//! The core: one game source, the tool registry and call dispatch. Both faces (the
//! console and the MCP server) reach the game only through [`Core::call`].
//!
//! A call flows one way: look up the tool → validate the arguments against its input
//! schema → take out the reference options → run the handler → attach references when
//! asked → result (or a structured [`ToolError`]).

pub mod schema;

use crate::clock::WallClock;

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Value, json};

use crate::context::subscriptions;
use crate::context::{self as call, CallContext, CancelOnDrop};
use crate::error::{self, ErrorCode, ToolError};
use crate::handles::store::HandleStore;
use crate::handles::{self, HandleConfig, Shaping};
use crate::references::{self, ReferenceConfig, Support, resolve::ReferenceCache};
use crate::source::{BoxFuture, GameSource, SourceInfo};
use crate::text::edit_distance;
use schema::ArgSchema;

/// A tool's public description: what `tools/list` shows an agent.
#[derive(Debug, Clone)]
pub struct ToolSpec {
    pub name: &'static str,
    pub description: &'static str,
    /// JSON Schema (draft 2020-12 compatible) of the arguments object. A tool that
    /// supports references gains the reference options on registration.
    pub input_schema: Value,
    /// Whether and how the tool's results carry references.
    pub references: Support,
    /// Whether the core shapes the tool's results (`verbosity`, `fields`).
    pub shaping: Shaping,
}

/// A tool's implementation: takes the core and already-validated arguments.
pub type Handler =
    Arc<dyn Fn(Core, Value) -> BoxFuture<'static, Result<Value, ToolError>> + Send + Sync>;

struct RegisteredTool {
    spec: ToolSpec,
    schema: ArgSchema,
    handler: Handler,
    /// Other names an argument may be given by (the catalog's), each with the name
    /// the tool reads.
    aliases: Vec<(&'static str, &'static str)>,
    /// Another server's tool: its arguments are forwarded as given.
    remote: bool,
}

/// What every local tool's input schema says of `null`.
pub const NULL_NOTE: &str = "An optional argument given as null is taken as not given.";

impl RegisteredTool {
    /// The arguments as the tool reads them: an argument given by another name the
    /// catalog uses is renamed, and `null` given for an optional argument is dropped
    /// (at any depth the schema describes). Runs before the schema check, for calls
    /// and for plan validation alike.
    fn normalize(&self, args: &mut Value) -> Result<(), ToolError> {
        if self.remote {
            return Ok(());
        }
        for &(alias, name) in &self.aliases {
            // `attacker.weapon_type`: the object at `attacker`, its key `weapon_type`.
            let (parent, alias_key) = alias.rsplit_once('.').unwrap_or(("", alias));
            let name_key = name.rsplit_once('.').map_or(name, |(_, k)| k);
            let pointer: String = parent
                .split('.')
                .filter(|p| !p.is_empty())
                .map(|p| format!("/{p}"))
                .collect();
            let Some(obj) = args.pointer_mut(&pointer).and_then(Value::as_object_mut) else {
                continue;
            };
            let Some(v) = obj.remove(alias_key) else {
                continue;
            };
            if obj.contains_key(name_key) {
                return Err(ToolError::field(
                    ErrorCode::ValidationInvalidValue,
                    alias,
                    format!("is another name for {name}; give one of them, not both"),
                ));
            }
            obj.insert(name_key.to_string(), v);
        }
        schema::drop_optional_nulls(&self.spec.input_schema, args);
        Ok(())
    }
}

/// The set of tools a core serves, by name.
#[derive(Default)]
pub struct Registry {
    tools: BTreeMap<&'static str, RegisteredTool>,
}

impl Registry {
    /// Adds a tool. Panics on a duplicate name or a schema that does not compile: both
    /// are programming errors caught by the first test that builds a core.
    pub fn add<F, Fut>(&mut self, mut spec: ToolSpec, handler: F)
    where
        F: Fn(Core, Value) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        if spec.references != Support::None {
            let Some(props) = spec
                .input_schema
                .get_mut("properties")
                .and_then(Value::as_object_mut)
            else {
                panic!(
                    "{} supports references but its schema has no properties object",
                    spec.name
                );
            };
            for (k, v) in references::config::schema_properties(spec.references) {
                assert!(
                    props.insert(k.clone(), v).is_none(),
                    "{} declares {k} itself; reference options are added by the registry",
                    spec.name
                );
            }
        }
        if spec.shaping == Shaping::Standard {
            let Some(props) = spec
                .input_schema
                .get_mut("properties")
                .and_then(Value::as_object_mut)
            else {
                panic!("{} has no properties object in its schema", spec.name);
            };
            for (k, v) in [
                (
                    "verbosity",
                    handles::verbosity_schema("the result as it is"),
                ),
                ("fields", handles::fields_schema()),
            ] {
                assert!(
                    props.insert(k.to_string(), v).is_none(),
                    "{} declares {k} itself; shaping options are added by the registry",
                    spec.name
                );
            }
        }
        let optional = spec
            .input_schema
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|props| {
                let required = spec.input_schema.get("required").and_then(Value::as_array);
                props
                    .keys()
                    .any(|k| !required.is_some_and(|r| r.contains(&json!(k))))
            });
        if optional && let Some(schema) = spec.input_schema.as_object_mut() {
            let note = match schema.get("description").and_then(Value::as_str) {
                Some(d) => format!("{d} {NULL_NOTE}"),
                None => NULL_NOTE.to_string(),
            };
            schema.insert("description".into(), json!(note));
        }
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
                aliases: Vec::new(),
                remote: false,
            },
        );
        assert!(previous.is_none(), "tool {name} registered twice");
    }

    /// Lets `tool` take its argument `name` as `alias` too (the name the catalog
    /// uses); a dotted pair (`attacker.weapon_type`, `attacker.weapon`) names a field
    /// of an object argument. The alias is listed in the tool's schema, and a call
    /// giving both is refused. Panics when the tool or the argument does not exist: a
    /// programming error the first test that builds a core catches.
    pub fn alias(&mut self, tool: &str, alias: &'static str, name: &'static str) {
        let t = self
            .tools
            .get_mut(tool)
            .unwrap_or_else(|| panic!("alias {alias} for {tool}, which is not registered"));
        let (parent, alias_key) = alias.rsplit_once('.').unwrap_or(("", alias));
        let name_key = name.rsplit_once('.').map_or(name, |(_, k)| k);
        let mut at = &mut t.spec.input_schema;
        for part in parent.split('.').filter(|p| !p.is_empty()) {
            at = at
                .get_mut("properties")
                .and_then(|p| p.get_mut(part))
                .unwrap_or_else(|| panic!("{tool} has no object argument {parent}"));
        }
        let props = at
            .get_mut("properties")
            .and_then(Value::as_object_mut)
            .unwrap_or_else(|| panic!("{tool} has no properties to alias"));
        let mut schema = props
            .get(name_key)
            .unwrap_or_else(|| panic!("{tool} has no argument {name} to alias as {alias}"))
            .clone();
        assert!(
            !props.contains_key(alias_key),
            "{tool} already has an argument {alias}"
        );
        if let Some(obj) = schema.as_object_mut() {
            obj.insert(
                "description".into(),
                json!(format!(
                    "Another name for {name_key} (the tool catalog's); give one or the other."
                )),
            );
        }
        props.insert(alias_key.to_string(), schema);
        t.schema = ArgSchema::compile(&t.spec.input_schema)
            .unwrap_or_else(|e| panic!("input schema of {tool} does not compile: {e}"));
        t.aliases.push((alias, name));
    }

    /// Registers the tools another MCP server lists, each forwarding its calls there.
    /// Their schemas are the server's own (reference and shaping options included when
    /// it has them); one that does not compile here accepts any object, and the server
    /// still checks it. A name listed twice keeps its first listing.
    fn add_remote(&mut self, remote: &Arc<crate::mcp::client::Remote>) {
        for tool in remote.tools() {
            if self.tools.contains_key(tool.name.as_ref()) {
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
            let input_schema = Value::Object((*tool.input_schema).clone());
            let schema = ArgSchema::compile(&input_schema).unwrap_or_else(|e| {
                tracing::warn!(
                    tool = name,
                    "the server's input schema does not compile here: {e}"
                );
                ArgSchema::compile(&json!({"type": "object"})).expect("a trivial schema compiles")
            });
            let remote = remote.clone();
            let handler: Handler = Arc::new(move |_core, args| {
                let remote = remote.clone();
                Box::pin(async move { remote.call(name, args, CallContext::current()).await })
            });
            self.tools.insert(
                name,
                RegisteredTool {
                    spec: ToolSpec {
                        name,
                        description,
                        input_schema,
                        references: Support::None,
                        shaping: Shaping::Own,
                    },
                    schema,
                    handler,
                    aliases: Vec::new(),
                    remote: true,
                },
            );
        }
    }
}

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

struct Inner {
    source: Arc<dyn GameSource>,
    registry: Registry,
    wall: WallClock,
    references: ReferenceConfig,
    reference_cache: ReferenceCache,
    /// Permits for reference fetches, shared by every call.
    reference_permits: Arc<tokio::sync::Semaphore>,
    handle_config: HandleConfig,
    handle_store: Arc<dyn HandleStore>,
    /// When expired handles were last cleaned out.
    last_cleanup: std::sync::Mutex<Option<DateTime<Utc>>>,
    /// The subscriptions of callers that bring none of their own (the console).
    subscriptions: Arc<subscriptions::Subscriptions>,
    /// The running work of callers that bring no count of their own (the console).
    work: Arc<call::ClientWork>,
    /// Workflow runs started on this core.
    workflows: crate::plan::workflow::Runs,
    /// The reference docs.
    docs: Arc<crate::docs::Docs>,
    /// Events from outside the process (NATS), read instead of the source's own bus.
    feed: Option<Arc<dyn crate::events::EventFeed>>,
    /// Another MCP server whose tools this core forwards to (`--connect`).
    remote: Option<Arc<crate::mcp::client::Remote>>,
}

/// Builds a [`Core`] with settings other than the defaults.
pub struct CoreBuilder {
    source: Arc<dyn GameSource>,
    wall: WallClock,
    references: ReferenceConfig,
    handles: HandleConfig,
    handle_store: Option<Arc<dyn HandleStore>>,
    docs: Option<Arc<crate::docs::Docs>>,
    feed: Option<Arc<dyn crate::events::EventFeed>>,
    extra: Vec<ExtraTools>,
    remote: Option<Arc<crate::mcp::client::Remote>>,
}

/// A function that registers tools beside the catalog.
type ExtraTools = Box<dyn FnOnce(&mut Registry)>;

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

    /// The reference docs (the embedded project docs unless set).
    pub fn docs(mut self, docs: Arc<crate::docs::Docs>) -> CoreBuilder {
        self.docs = Some(docs);
        self
    }

    /// Events from an outside stream (NATS) instead of the source's own bus: the
    /// subscription tools, MCP resource updates and the console's event log read them.
    pub fn event_feed(mut self, feed: Arc<dyn crate::events::EventFeed>) -> CoreBuilder {
        self.feed = Some(feed);
        self
    }

    /// Registers more tools beside the catalog (for embedding and tests).
    pub fn tools(mut self, extra: impl FnOnce(&mut Registry) + 'static) -> CoreBuilder {
        self.extra.push(Box::new(extra));
        self
    }

    /// The core; fails when the reference settings are out of range or name a tool
    /// that does not exist or does not carry references.
    pub fn build(self) -> Result<Core, String> {
        self.references.validate()?;
        self.handles.validate()?;
        let mut registry = Registry::default();
        match &self.remote {
            Some(remote) => registry.add_remote(remote),
            None => crate::tools::register_all(&mut registry),
        }
        for extra in self.extra {
            extra(&mut registry);
        }
        for name in self.references.tools.keys() {
            match registry.tools.get(name.as_str()) {
                Some(t) if t.spec.references != Support::None => {}
                Some(_) => {
                    return Err(format!(
                        "references.tools.{name}: this tool never carries references"
                    ));
                }
                None => return Err(format!("references.tools.{name}: no tool of that name")),
            }
        }
        let handle_store = match self.handle_store {
            Some(store) => store,
            None if self.handles.store == "memory" => Arc::new(self.handles.memory_store()),
            // A Redis store has to be connected (async) before the core exists.
            None => {
                return Err(format!(
                    "handles.store is {:?}: open it with HandleConfig::open_store and pass it \
                     to CoreBuilder::handle_store",
                    self.handles.store
                ));
            }
        };
        Ok(Core {
            inner: Arc::new(Inner {
                source: self.source,
                registry,
                wall: self.wall,
                reference_permits: Arc::new(tokio::sync::Semaphore::new(
                    self.references.max_parallel_queries,
                )),
                references: self.references,
                reference_cache: ReferenceCache::default(),
                handle_config: self.handles,
                handle_store,
                last_cleanup: std::sync::Mutex::new(None),
                subscriptions: Arc::new(subscriptions::Subscriptions::new()),
                work: Arc::default(),
                workflows: Default::default(),
                docs: self
                    .docs
                    .unwrap_or_else(|| Arc::new(crate::docs::Docs::embedded())),
                feed: self.feed,
                remote: self.remote,
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
    /// A core over `source` serving the whole tool catalog, stamped by the system clock.
    pub fn new(source: Arc<dyn GameSource>) -> Core {
        Core::with_clock(source, WallClock::System)
    }

    pub fn with_clock(source: Arc<dyn GameSource>, wall: WallClock) -> Core {
        Core::builder(source)
            .clock(wall)
            .build()
            .expect("the default settings are valid")
    }

    /// A core with settings other than the defaults.
    pub fn builder(source: Arc<dyn GameSource>) -> CoreBuilder {
        CoreBuilder {
            source,
            wall: WallClock::System,
            references: ReferenceConfig::default(),
            handles: HandleConfig::default(),
            handle_store: None,
            docs: None,
            feed: None,
            extra: Vec::new(),
            remote: None,
        }
    }

    /// A core whose tools are another MCP server's (`--connect`): each call is checked
    /// against the server's schema here, then answered there, progress and
    /// cancellation included. References, shaping and handles are the server's
    /// business; [`Core::status`] shows its block height as last seen.
    pub fn remote(remote: Arc<crate::mcp::client::Remote>, wall: WallClock) -> Core {
        let source = Arc::new(crate::mcp::client::RemoteSource(remote.clone()));
        let mut builder = Core::builder(source).clock(wall);
        builder.remote = Some(remote);
        builder.build().expect("the default settings are valid")
    }

    /// The server this core forwards to, when it was built by [`Core::remote`].
    pub fn remote_server(&self) -> Option<&Arc<crate::mcp::client::Remote>> {
        self.inner.remote.as_ref()
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
        let mut guard = CancelOnDrop(Some(ctx.clone()));
        let result = self.call_in(tool, args, ctx).await;
        guard.0 = None;
        result
    }

    async fn call_in(&self, tool: &str, args: Value, ctx: CallContext) -> Result<Value, ToolError> {
        let Some(registered) = self.inner.registry.tools.get(tool) else {
            return Err(self.unknown_tool(tool));
        };
        let mut args = if args.is_null() { json!({}) } else { args };
        check_size(&args)?;
        registered.normalize(&mut args)?;
        registered.schema.check(&args)?;
        if self.inner.remote.is_some() {
            // The server attaches references, shapes and stores its own results.
            return ctx.scope((registered.handler)(self.clone(), args)).await;
        }
        let plan = references::config::plan(
            &self.inner.references,
            tool,
            registered.spec.references,
            &mut args,
        )?;
        let shaping = match registered.spec.shaping {
            Shaping::Standard => handles::Request::take(&mut args),
            Shaping::Own => handles::Request::default(),
        };
        let result = (registered.handler)(self.clone(), args);
        let core = self.clone();
        let name = registered.spec.name;
        // The handler runs as its own task so that a bug that panics in one tool comes
        // back as a structured error and the server keeps serving.
        let task = async move {
            let mut value = result.await?;
            references::attach(&core, &plan, shaping.is_lean(), &mut value).await;
            handles::finish(&core, name, &shaping, value).await
        };
        match tokio::spawn(ctx.scope(task)).await {
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

    /// A registered tool's spec.
    pub fn tool_spec(&self, name: &str) -> Option<&ToolSpec> {
        self.inner.registry.tools.get(name).map(|t| &t.spec)
    }

    /// Checks `args` against `tool`'s input schema without running it.
    pub fn check_arguments(&self, tool: &str, args: &Value) -> Result<(), ToolError> {
        match self.inner.registry.tools.get(tool) {
            Some(t) => {
                let mut args = args.clone();
                t.normalize(&mut args)?;
                t.schema.check(&args)
            }
            None => Err(self.unknown_tool(tool)),
        }
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

    fn unknown_tool(&self, tool: &str) -> ToolError {
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

    /// The event bus the core reads: the outside feed's when one is set (`--events`),
    /// else the source's, when it has one (the sim's does).
    pub fn events(&self) -> Option<crate::events::EventBus> {
        match &self.inner.feed {
            Some(feed) => Some(feed.bus()),
            None => self.inner.source.events(),
        }
    }

    /// The outside event feed's health, when one is set.
    pub fn feed_health(&self) -> Option<crate::events::FeedHealth> {
        self.inner.feed.as_ref().map(|f| f.health())
    }

    /// The source's connection health, for networked sources.
    pub fn source_health(&self) -> Option<crate::source::SourceHealth> {
        self.inner.source.health()
    }

    /// The subscriptions of callers without their own (the console, tests).
    pub fn subscriptions(&self) -> Arc<subscriptions::Subscriptions> {
        self.inner.subscriptions.clone()
    }

    /// Where the caller of `ctx` counts its running work: its own, or the core's for
    /// callers that bring none.
    pub fn client_work(&self, ctx: &CallContext) -> Arc<call::ClientWork> {
        ctx.work().unwrap_or_else(|| self.inner.work.clone())
    }

    /// The workflow runs started on this core.
    pub fn workflows(&self) -> &crate::plan::workflow::Runs {
        &self.inner.workflows
    }

    /// The reference docs.
    pub fn docs(&self) -> &Arc<crate::docs::Docs> {
        &self.inner.docs
    }

    /// The server-wide reference settings.
    pub fn reference_config(&self) -> &ReferenceConfig {
        &self.inner.references
    }

    /// Entities resolved as references, reused across calls.
    pub fn reference_cache(&self) -> &ReferenceCache {
        &self.inner.reference_cache
    }

    /// Handle settings.
    pub fn handle_config(&self) -> &HandleConfig {
        &self.inner.handle_config
    }

    /// Where results over the size limit are kept.
    pub fn handle_store(&self) -> &Arc<dyn HandleStore> {
        &self.inner.handle_store
    }

    /// Now, by the core's wall clock.
    pub fn now(&self) -> DateTime<Utc> {
        self.inner.wall.now()
    }

    /// Cleans expired handles out of the store when the cleanup interval has passed
    /// since the last time. Called as handles are stored, fetched and listed, so the
    /// cleanup runs periodically while the server is used, with no timer of its own.
    pub(crate) async fn maybe_clean_handles(&self) {
        let now = self.now();
        let every =
            chrono::Duration::seconds(self.inner.handle_config.cleanup_interval_secs as i64);
        {
            let mut last = self
                .inner
                .last_cleanup
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if last.is_some_and(|at| now - at < every) {
                return;
            }
            *last = Some(now);
        }
        match self.handle_store().cleanup(now).await {
            Ok(0) => {}
            Ok(n) => tracing::debug!(removed = n, "expired handles cleaned"),
            Err(e) => tracing::warn!("handle cleanup failed: {}", e.message),
        }
    }

    /// Permits for reference fetches: at most `max_parallel_queries` in flight.
    pub(crate) fn reference_permits(&self) -> &Arc<tokio::sync::Semaphore> {
        &self.inner.reference_permits
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
        Core::builder(Arc::new(SimSource::demo()))
            .tools(|r| {
                r.add(
                    ToolSpec {
                        name: "structs_test_broken",
                        description: "A tool with a bug, for testing.",
                        input_schema: json!({"type": "object", "properties": {}, "additionalProperties": false}),
                        references: Support::None,
                        shaping: Shaping::Standard,
                    },
                    |_core, _args| async { panic!("index out of bounds in the test tool") },
                );
            })
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
        let core = Core::new(Arc::new(SimSource::demo()));
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
        crate::tools::register_all(&mut r);
        crate::tools::register_all(&mut r);
    }
}
