//! Every tool's metadata as MCP clients see it, through the real MCP face (an rmcp
//! client over the stdio transport, in process): each listed tool has a title,
//! annotations true to what it does, and an output schema that its answers validate
//! against — a success of every tool on the demo world, an error of every tool, and
//! the envelope of an answer over the size limit. Answers that are wrong in small ways
//! fail. The hints follow the source: a chain's node is an open world, the embedded
//! one is not.

#[path = "../support/mod.rs"]
mod support;

mod answers;
mod hints;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use rmcp::model::{CallToolRequestParams, Tool};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use structs_console::docs::Docs;
use structs_console::mcp::server::{McpServer, stdio};
use structs_console::rest::server::RestServer;
use structs_console::source::rest::{RestConfig, RestSource};
use structs_console::source::sim::world::Location;
use structs_console::source::sim::{SimSource, WorldConfig};
use structs_console::{Core, EntityKind};
use support::docs::TempDocs;
use support::sim::{fixed_clock, make_ready, paused};

type Client = RunningService<RoleClient, ()>;

/// An MCP session with `core`'s server: the server on one end of an in-memory pipe,
/// speaking the stdio transport, and rmcp's client on the other.
async fn session(core: Core, docs: Arc<Docs>) -> Client {
    let server = McpServer::new(core, docs);
    let (client_end, server_end) = tokio::io::duplex(1 << 22);
    let (read, write) = tokio::io::split(server_end);
    tokio::spawn(stdio::serve(
        server,
        read,
        write,
        structs_console::mcp::wire::MAX_MESSAGE_BYTES,
    ));
    let (read, write) = tokio::io::split(client_end);
    ().serve((read, write)).await.expect("initialize")
}

/// The project's docs copied into a temporary root, so that the link tools can write.
fn writable_docs() -> TempDocs {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let p = e.unwrap().path();
            let target = to.join(p.file_name().unwrap());
            if p.is_dir() {
                copy(&p, &target);
            } else {
                std::fs::copy(&p, &target).unwrap();
            }
        }
    }
    let docs = TempDocs::new(&[]);
    copy(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("docs"),
        docs.root(),
    );
    docs
}

/// Validation problems of `v`, one line each (empty when it is valid).
fn problems(validator: &jsonschema::Validator, v: &Value) -> Vec<String> {
    validator
        .iter_errors(v)
        .map(|e| format!("{} at {:?}", e, e.instance_path().as_str()))
        .collect()
}

/// One of a tool's `$defs` (`answer`, `partial`, `error`) as a schema of its own.
fn def(schema: &Value, name: &str) -> jsonschema::Validator {
    let s = json!({"$ref": format!("#/$defs/{name}"), "$defs": schema["$defs"]});
    jsonschema::validator_for(&s).unwrap_or_else(|e| panic!("$defs/{name}: {e}"))
}

/// What a tool's answers are checked against.
struct Schemas {
    whole: jsonschema::Validator,
    answer: jsonschema::Validator,
    partial: jsonschema::Validator,
    error: jsonschema::Validator,
}

/// The calls of a test and what they showed, by tool.
struct Checker {
    client: Client,
    schemas: BTreeMap<String, Schemas>,
    succeeded: BTreeSet<String>,
    failed: BTreeSet<String>,
    partial: BTreeSet<String>,
}

impl Checker {
    /// Lists the tools and compiles their output schemas; every tool must have a
    /// title, the four hints and an output schema whose root is an object's.
    async fn new(client: Client) -> (Checker, Vec<Tool>) {
        let tools = client.list_all_tools().await.expect("tools/list");
        let mut schemas = BTreeMap::new();
        for t in &tools {
            let name = t.name.to_string();
            assert!(
                t.title.as_deref().is_some_and(|s| !s.is_empty()),
                "{name} has no title"
            );
            let a = t
                .annotations
                .as_ref()
                .unwrap_or_else(|| panic!("{name} has no annotations"));
            assert_eq!(a.title, t.title, "{name}: the annotations' title");
            for (hint, v) in [
                ("readOnlyHint", a.read_only_hint),
                ("destructiveHint", a.destructive_hint),
                ("idempotentHint", a.idempotent_hint),
                ("openWorldHint", a.open_world_hint),
            ] {
                assert!(v.is_some(), "{name} does not say {hint}");
            }
            let schema = Value::Object(
                (**t.output_schema
                    .as_ref()
                    .unwrap_or_else(|| panic!("{name} has no outputSchema")))
                .clone(),
            );
            assert_eq!(schema["type"], "object", "{name}: MCP wants an object");
            // Both schemas name the 2020-12 dialect, and are valid schemas of it.
            let dialect = "https://json-schema.org/draft/2020-12/schema";
            for (which, schema) in [
                ("inputSchema", &*t.input_schema),
                ("outputSchema", schema.as_object().unwrap()),
            ] {
                assert_eq!(schema["$schema"], dialect, "{name}: {which}'s $schema");
                let schema = Value::Object(schema.clone());
                assert!(
                    jsonschema::draft202012::meta::is_valid(&schema),
                    "{name}: {which} is not a 2020-12 schema"
                );
            }
            let whole = jsonschema::validator_for(&schema)
                .unwrap_or_else(|e| panic!("the outputSchema of {name} does not compile: {e}"));
            schemas.insert(
                name,
                Schemas {
                    whole,
                    answer: def(&schema, "answer"),
                    partial: def(&schema, "partial"),
                    error: def(&schema, "error"),
                },
            );
        }
        let checker = Checker {
            client,
            schemas,
            succeeded: BTreeSet::new(),
            failed: BTreeSet::new(),
            partial: BTreeSet::new(),
        };
        (checker, tools)
    }

    /// Calls `tool` and checks its structured answer against its output schema.
    async fn call(&mut self, tool: &str, args: Value) -> (Value, bool) {
        let Value::Object(map) = args.clone() else {
            panic!("arguments must be an object")
        };
        let r = self
            .client
            .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(map))
            .await
            .expect("tools/call");
        let failed = r.is_error == Some(true);
        let v = r
            .structured_content
            .unwrap_or_else(|| panic!("{tool} {args}: no structuredContent"));
        let s = &self.schemas[tool];
        let wrong = problems(&s.whole, &v);
        assert!(
            wrong.is_empty(),
            "{tool} {args} answered against its outputSchema:\n{}\n{v:#}",
            wrong.join("\n")
        );
        (v, failed)
    }

    /// A call that succeeds: a whole answer (not shaped, not cut) holds every
    /// `required` key of its schema.
    async fn ok(&mut self, tool: &str, args: Value) -> Value {
        let (v, failed) = self.call(tool, args.clone()).await;
        assert!(!failed, "{tool} {args} failed: {v:#}");
        assert_ne!(v["status"], "partial", "{tool} {args} was over the limit");
        let shaped = args.get("fields").is_some() || args.get("verbosity").is_some();
        if !shaped {
            let wrong = problems(&self.schemas[tool].answer, &v);
            assert!(
                wrong.is_empty(),
                "{tool} {args} is not a whole answer:\n{}\n{v:#}",
                wrong.join("\n")
            );
        }
        self.succeeded.insert(tool.to_string());
        v
    }

    /// A call that fails: the error object.
    async fn err(&mut self, tool: &str, args: Value) -> Value {
        let (v, failed) = self.call(tool, args.clone()).await;
        assert!(failed, "{tool} {args} should fail: {v:#}");
        let wrong = problems(&self.schemas[tool].error, &v);
        assert!(wrong.is_empty(), "{tool} {args}: {}", wrong.join("\n"));
        self.failed.insert(tool.to_string());
        v
    }

    /// A call whose answer is over the size limit: the envelope.
    async fn partial(&mut self, tool: &str, args: Value) -> Value {
        let (v, failed) = self.call(tool, args.clone()).await;
        assert!(!failed, "{tool} {args} failed: {v:#}");
        let wrong = problems(&self.schemas[tool].partial, &v);
        assert!(wrong.is_empty(), "{tool} {args}: {}", wrong.join("\n"));
        assert!(
            !self.schemas[tool].answer.is_valid(&v),
            "{tool}: the envelope passes for a whole answer"
        );
        self.partial.insert(tool.to_string());
        v
    }
}

/// What the annotations say of a family of tools: (readOnly, destructive, idempotent).
const EXPECTED: &[(&str, (bool, bool, bool))] = &[
    // Actions change the game for good; so may a plan or workflow.
    ("structs_action_", (false, true, false)),
    ("structs_plan_execute", (false, true, false)),
    ("structs_workflow_execute", (false, true, false)),
    // Reading, computing, checking: nothing changes.
    ("structs_query_endpoints", (true, false, true)),
    ("structs_query_", (true, false, true)),
    ("structs_list_", (true, false, true)),
    ("structs_validate_", (true, false, true)),
    ("structs_calculate_", (true, false, true)),
    ("structs_decision_tree_", (true, false, true)),
    ("structs_handle_", (true, false, true)),
    ("structs_task_list", (true, false, true)),
    // Stopping a task ends its caller's own work and changes nothing in the game, so
    // no one is asked to confirm it, by this tool or by tasks/cancel.
    ("structs_task_cancel", (false, false, true)),
    ("structs_plan_validate", (true, false, true)),
    ("structs_workflow_list", (true, false, true)),
    ("structs_workflow_monitor", (true, false, true)),
    ("structs_subscription_list", (true, false, true)),
    ("structs_docs_upsert_link", (false, false, true)),
    ("structs_docs_suggest_references", (false, false, true)),
    ("structs_docs_sync", (false, false, true)),
    ("structs_docs_", (true, false, true)),
    // The server's own state: added to, set, never destroyed.
    ("structs_subscription_", (false, false, true)),
    ("structs_workflow_cancel", (false, false, true)),
    ("structs_clock_control", (false, false, false)),
];

/// The tools that never reach the game source: a closed world whatever it is.
const LOCAL: &[&str] = &[
    "structs_query_struct_type",
    "structs_query_endpoints",
    "structs_validate_entity_id",
    "structs_calculate_power",
    "structs_calculate_cost",
    "structs_docs_search",
    "structs_docs_get",
    "structs_docs_get_related",
    "structs_docs_get_index",
    "structs_docs_loading_strategy",
    "structs_docs_upsert_link",
    "structs_docs_sync",
    "structs_handle_fetch",
    "structs_handle_list",
    "structs_task_list",
    "structs_task_cancel",
    "structs_subscription_unsubscribe",
    "structs_subscription_list",
    "structs_plan_validate",
    "structs_workflow_list",
    "structs_workflow_monitor",
    "structs_workflow_cancel",
];

fn expected(tool: &str) -> (bool, bool, bool) {
    EXPECTED
        .iter()
        .find(|(prefix, _)| tool.starts_with(prefix))
        .map(|(_, e)| *e)
        .unwrap_or_else(|| panic!("{tool} is in no family of the expectation table"))
}

/// Checks each tool's hints against the table; `open` is the source's open world.
fn check_hints(tools: &[Tool], open: bool) {
    for t in tools {
        let a = t.annotations.as_ref().unwrap();
        let (read_only, destructive, idempotent) = expected(&t.name);
        assert_eq!(a.read_only_hint, Some(read_only), "{} readOnlyHint", t.name);
        assert_eq!(
            a.destructive_hint,
            Some(destructive),
            "{} destructiveHint",
            t.name
        );
        assert_eq!(
            a.idempotent_hint,
            Some(idempotent),
            "{} idempotentHint",
            t.name
        );
        let world = open && !LOCAL.contains(&t.name.as_ref());
        assert_eq!(a.open_world_hint, Some(world), "{} openWorldHint", t.name);
    }
}
