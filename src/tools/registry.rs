//! The set of tools a core serves. The catalog registers into a [`Registry`] that the
//! assembly builds and hands to the core; another server's tools are registered by the
//! MCP client side with [`Registry::add_forwarded`].
//!
//! A tool's spec says what it takes (its input schema), what it answers (its output
//! schema, [`super::output`]), and what a call does ([`Hints`]); registration adds what
//! the core gives every tool (reference and shaping options, the size-limit envelope,
//! the error object).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Value, json};

use super::Env;
use super::schema::{self, ArgSchema};
use crate::error::{ErrorCode, ToolError};
use crate::handles::{self, Shaping};
use crate::references::{self, Support};
use crate::source::BoxFuture;

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
    /// A short human-readable name (`tools/list`'s `title`); empty for a forwarded
    /// tool whose server gives none.
    pub title: &'static str,
    /// What a call does to the game and the server, as MCP's annotation hints.
    pub hints: Hints,
    /// JSON Schema of a successful answer (its `structuredContent`). On registration
    /// it becomes the tool's whole output schema ([`super::output::compose`]): that
    /// answer (with references and shaping as the tool supports them), the envelope of
    /// an answer over the size limit, or the error object. A forwarded tool's is its
    /// server's, `null` when it gives none.
    pub output_schema: Value,
}

/// What a call does, as MCP's tool annotations say it: hints for a client deciding
/// whether to ask before calling, not guarantees. A forwarded tool's are its server's,
/// `None` where it gives none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Hints {
    /// Changes nothing.
    pub read_only: Option<bool>,
    /// May change or remove what is there, rather than only add to it.
    pub destructive: Option<bool>,
    /// Calling again with the same arguments changes nothing more.
    pub idempotent: Option<bool>,
    /// Reaches things outside the server. `None` on a catalog tool that reads the game
    /// source: then it is the source's ([`crate::source::SourceInfo::open_world`]), a
    /// live chain's node being open and the embedded world closed.
    pub open_world: Option<bool>,
}

impl Hints {
    /// Reads the game source and changes nothing.
    pub const READ: Hints = Hints {
        read_only: Some(true),
        destructive: Some(false),
        idempotent: Some(true),
        open_world: None,
    };
    /// Reads only what the server holds (its embedded facts, the docs, stored
    /// results, the arguments), never the game source: read-only and closed, whatever
    /// the source.
    pub const LOCAL: Hints = Hints::READ.closed();
    /// Changes the game for good: a transaction, or a plan or workflow whose steps
    /// may submit one.
    pub const TRANSACT: Hints = Hints {
        read_only: Some(false),
        destructive: Some(true),
        idempotent: Some(false),
        open_world: None,
    };
    /// Changes the server's or the game's state by adding to it or setting it (a
    /// subscription, a doc link, the clock), destroying nothing; idempotent unless
    /// [`Hints::repeating`].
    pub const CHANGES: Hints = Hints {
        read_only: Some(false),
        destructive: Some(false),
        idempotent: Some(true),
        open_world: None,
    };

    /// Never reaches the game source.
    pub const fn closed(self) -> Hints {
        Hints {
            open_world: Some(false),
            ..self
        }
    }

    /// Each call changes things again (a step of the clock).
    pub const fn repeating(self) -> Hints {
        Hints {
            idempotent: Some(false),
            ..self
        }
    }
}

/// A tool's implementation: takes what a tool can reach ([`Env`]) and arguments already
/// checked against its schema.
pub type Handler =
    Arc<dyn Fn(Env, Value) -> BoxFuture<'static, Result<Value, ToolError>> + Send + Sync>;

/// A tool as registered: its spec, its compiled schema and its handler.
pub struct RegisteredTool {
    spec: ToolSpec,
    schema: ArgSchema,
    handler: Handler,
    /// Other names an argument may be given by (the catalog's), each with the name
    /// the tool reads.
    aliases: Vec<(&'static str, &'static str)>,
    /// Where the tool comes from, which says what the core does around its calls.
    origin: Origin,
    /// Whether its calls run as tasks ([`Registry::long_running`],
    /// [`Registry::task_required`]).
    tasks: TaskSupport,
    /// Whether it asks its client before its long work ([`Registry::asks_before_task`]).
    asks_first: bool,
}

/// Where a tool comes from, which says what the core does around its calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The Structs catalog: the catalog's other argument names, references, shaping
    /// and handles; its answer is JSON, shown as text and as `structuredContent`.
    Catalog,
    /// Another server's (`--connect`): its arguments go on as given, and its answer is
    /// that server's.
    Forwarded,
    /// A tool of the server's own outside the catalog, whose answer is an MCP tool
    /// result as its handler writes it: content blocks (text, images, audio, embedded
    /// resources) and `isError` ([`Registry::add_content`]).
    Content,
}

/// Whether a tool's calls run as tasks (MCP's Tasks extension).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TaskSupport {
    /// Answered while the request waits.
    #[default]
    Never,
    /// Long work: it reports its progress, and runs as a task for a client that
    /// declared the extension (and while the request waits for one that did not).
    Optional,
    /// Runs only as a task: a client that did not declare the extension is refused
    /// with `-32021`, naming the extension it lacks.
    Required,
}

/// What every local tool's input schema says of `null`.
pub const NULL_NOTE: &str = "An optional argument given as null is taken as not given.";

impl RegisteredTool {
    pub fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    pub fn handler(&self) -> &Handler {
        &self.handler
    }

    /// Whether a call is long work: it reports its progress, and may run as a task.
    pub fn is_long(&self) -> bool {
        self.tasks != TaskSupport::Never
    }

    /// Whether its calls run as tasks.
    pub fn task_support(&self) -> TaskSupport {
        self.tasks
    }

    /// Whether it asks its client before its long work.
    pub fn asks_first(&self) -> bool {
        self.asks_first
    }

    /// Where the tool comes from.
    pub fn origin(&self) -> Origin {
        self.origin
    }

    /// Readies `args` for the tool ([`RegisteredTool::normalize`]) and checks them
    /// against its schema.
    pub fn prepare(&self, args: &mut Value) -> Result<(), ToolError> {
        self.normalize(args)?;
        self.schema.check(args)
    }

    /// The arguments as the tool reads them: an argument given by another name the
    /// catalog uses is renamed, and `null` given for an optional argument is dropped
    /// (at any depth the schema describes). Runs before the schema check, for calls
    /// and for plan validation alike.
    fn normalize(&self, args: &mut Value) -> Result<(), ToolError> {
        if self.origin != Origin::Catalog {
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
    /// The names in the order they were registered, when the registry lists them so
    /// ([`Registry::in_registration_order`]); by name otherwise.
    order: Option<Vec<&'static str>>,
}

impl Registry {
    /// Adds a tool. Panics on a duplicate name or a schema that does not compile: both
    /// are programming errors caught by the first test that builds a core.
    pub fn add<F, Fut>(&mut self, mut spec: ToolSpec, handler: F)
    where
        F: Fn(Env, Value) -> Fut + Send + Sync + 'static,
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
        // Every schema names its dialect, the one MCP takes by default.
        if let Some(schema) = spec.input_schema.as_object_mut() {
            schema
                .entry("$schema")
                .or_insert_with(|| json!(schema::DIALECT));
        }
        let schema = ArgSchema::compile(&spec.input_schema)
            .unwrap_or_else(|e| panic!("input schema of {} does not compile: {e}", spec.name));
        assert!(
            !spec.title.is_empty(),
            "{} has no title; every catalog tool has one",
            spec.name
        );
        spec.output_schema = super::output::compose(&spec);
        let name = spec.name;
        let handler: Handler = Arc::new(move |env, args| Box::pin(handler(env, args)));
        if let Some(order) = &mut self.order {
            order.push(name);
        }
        let previous = self.tools.insert(
            name,
            RegisteredTool {
                spec,
                schema,
                handler,
                aliases: Vec::new(),
                origin: Origin::Catalog,
                tasks: TaskSupport::Never,
                asks_first: false,
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

    /// Marks `tool` as long work (a search, a workflow, a plan): it reports its
    /// progress, and a server runs its calls as tasks for a client that declared the
    /// extension. Panics when the tool is not registered: a programming error the
    /// first test that builds a core catches.
    pub fn long_running(&mut self, tool: &str) {
        self.tools
            .get_mut(tool)
            .unwrap_or_else(|| panic!("{tool} is marked long-running but not registered"))
            .tasks = TaskSupport::Optional;
    }

    /// Marks `tool`, one that runs as a task, as asking its client before its long work
    /// (SEP-2663's composition with SEP-2322): on a stateless request it is run at once,
    /// its questions go out in `input_required` rounds, and it becomes a task only when
    /// it says so ([`crate::context::CallContext::become_task`]), once they are answered.
    pub fn asks_before_task(&mut self, tool: &str) {
        let registered = self
            .tools
            .get_mut(tool)
            .unwrap_or_else(|| panic!("{tool} is marked as asking first but not registered"));
        assert!(
            registered.tasks != TaskSupport::Never,
            "{tool} asks before its task but runs none"
        );
        registered.asks_first = true;
    }

    /// Marks `tool` as work that runs only as a task ([`TaskSupport::Required`]).
    /// Panics when the tool is not registered, as [`Registry::long_running`] does.
    pub fn task_required(&mut self, tool: &str) {
        self.tools
            .get_mut(tool)
            .unwrap_or_else(|| panic!("{tool} is marked task-only but not registered"))
            .tasks = TaskSupport::Required;
    }

    /// Adds another server's tool, which forwards its calls there: its arguments are
    /// checked against `spec.input_schema` and passed on as given (no aliases, no nulls
    /// dropped), and its results are that server's business. Its title, hints and
    /// output schema are the server's, as given (references and shaping are the
    /// server's too). A schema that does not compile here accepts any object (the
    /// server still checks it). A name already registered keeps its first
    /// registration.
    pub fn add_forwarded(&mut self, spec: ToolSpec, handler: Handler) {
        self.add_as_given(spec, handler, Origin::Forwarded);
    }

    /// Adds a tool of the server's own outside the catalog ([`Origin::Content`]): its
    /// input schema, title, hints and output schema as given, its arguments checked
    /// against that schema and passed as given, and its answer the MCP tool result its
    /// handler writes (`{"content": [...], "isError": ...}`), which a server sends as
    /// it is. A name already registered keeps its first registration.
    pub fn add_content(&mut self, spec: ToolSpec, handler: Handler) {
        self.add_as_given(spec, handler, Origin::Content);
    }

    fn add_as_given(&mut self, spec: ToolSpec, handler: Handler, origin: Origin) {
        let name = spec.name;
        if self.tools.contains_key(name) {
            return;
        }
        if let Some(order) = &mut self.order {
            order.push(name);
        }
        let schema = ArgSchema::compile(&spec.input_schema).unwrap_or_else(|e| {
            tracing::warn!(
                tool = name,
                "the server's input schema does not compile here: {e}"
            );
            ArgSchema::compile(&json!({"type": "object"})).expect("a trivial schema compiles")
        });
        self.tools.insert(
            name,
            RegisteredTool {
                spec: ToolSpec {
                    references: Support::None,
                    shaping: Shaping::Own,
                    ..spec
                },
                schema,
                handler,
                aliases: Vec::new(),
                origin,
                tasks: TaskSupport::Never,
                asks_first: false,
            },
        );
    }

    /// The tool registered under `name`.
    pub fn get(&self, name: &str) -> Option<&RegisteredTool> {
        self.tools.get(name)
    }

    /// A registry that lists its tools in the order they are registered rather than by
    /// name: for a server whose list is read in order (the conformance suite calls the
    /// first tool listed).
    pub fn in_registration_order() -> Registry {
        Registry {
            tools: BTreeMap::new(),
            order: Some(Vec::new()),
        }
    }

    /// Every registered tool, by name (or in registration order, where kept).
    pub fn iter(&self) -> impl Iterator<Item = &RegisteredTool> {
        self.names().filter_map(|name| self.tools.get(name))
    }

    /// Every registered tool's name, in order.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        let (ordered, by_name) = match &self.order {
            Some(order) => (Some(order.iter().copied()), None),
            None => (None, Some(self.tools.keys().copied())),
        };
        ordered
            .into_iter()
            .flatten()
            .chain(by_name.into_iter().flatten())
    }
}
