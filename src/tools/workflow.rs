//! Workflow tools: `structs_workflow_list` (the shipped workflows and their inputs),
//! `structs_workflow_execute` (start one in the background; answers with its
//! `workflow_id` at once), `structs_workflow_monitor` (status, progress, each step, the
//! proof-of-work search's progress while one runs, the report once it ended) and
//! `structs_workflow_cancel`.

use serde_json::{Map, Value, json};

use super::opt_str;
use super::{Env, Hints, Registry, ToolSpec, output};
use crate::context::CallContext;
use crate::error::{ErrorCode, ToolError};
use crate::handles::Shaping;
use std::sync::Arc;

use crate::plan::workflow::{self, Runs, WorkflowRun};
use crate::references::Support;

fn names() -> Vec<String> {
    workflow::catalog().keys().cloned().collect()
}

fn id_schema() -> Value {
    json!({"type": "string", "maxLength": 32, "pattern": "^wf_[0-9]+$",
           "description": "The workflow_id structs_workflow_execute returned."})
}

/// A workflow tool's handler, given the runs it starts and reads.
fn with_runs<F, Fut>(runs: &Arc<Runs>, f: F) -> impl Fn(Env, Value) -> Fut + Send + Sync + 'static
where
    F: Fn(Arc<Runs>, Env, Value) -> Fut + Send + Sync + 'static,
{
    let runs = Arc::clone(runs);
    move |env, args| f(Arc::clone(&runs), env, args)
}

/// Registers the workflow tools, each keeping its runs in `runs`.
pub fn register(registry: &mut Registry, runs: &Arc<Runs>) {
    registry.add(
        ToolSpec {
            name: "structs_workflow_list",
            description: "The workflows this server runs: each one's name, description, inputs \
                (required, default, example), its steps and whether it computes a proof of work; \
                and the runs it remembers with their status.",
            input_schema: json!({"type": "object", "properties": {}, "additionalProperties": false}),
            references: Support::None,
            shaping: Shaping::Own,
            title: "List workflows",
            hints: Hints::LOCAL,
            output_schema: output::agent::workflow_list(),
        },
        with_runs(runs, list),
    );
    registry.add(
        ToolSpec {
            name: "structs_workflow_execute",
            description: "Start a named workflow with its inputs, in the background: answers at \
                once with a workflow_id to follow with structs_workflow_monitor. Workflows: \
                query-and-monitor-planet (planet_id), planet-setup (player_id), \
                build-mining-operation (player_id), mine-refine-convert (player_id, \
                extractor_id, refinery_id). The ones with proofs of work wait until the \
                difficulty is low (start_difficulty, default 8) and then hash on every core.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "workflow": {"type": "string", "enum": names(), "description": "The workflow's name."},
                    "inputs": {"type": "object", "description": "Its inputs by name (structs_workflow_list shows them)."}
                },
                "required": ["workflow"],
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Own,
            title: "Start a workflow",
            hints: Hints::TRANSACT,
            output_schema: output::agent::workflow_execute(),
        },
        with_runs(runs, execute),
    );
    registry.long_running("structs_workflow_execute");
    registry.add(
        ToolSpec {
            name: "structs_workflow_monitor",
            description: "A workflow run's status (running, succeeded, failed, cancelled), \
                progress (steps done of all), the steps running now with their progress (a \
                proof-of-work search's hashrate and difficulty), every step's status, attempts, \
                error or skipped reason, and once it ended the whole report with each step's \
                resolved params and result (include_results, default true). With wait_ms it \
                answers when the run ends (or the wait is up), saving calls in a loop.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "workflow_id": id_schema(),
                    "include_results": {"type": "boolean", "description": "Add the full report once the run ended (default true)."},
                    "wait_ms": {"type": "integer", "minimum": 0, "maximum": MAX_WAIT_MS,
                        "description": "Wait up to this long (at most 60000 ms) for the run to end before answering, rather than calling again and again; it answers at once when the run has ended (default 0: at once)."}
                },
                "required": ["workflow_id"],
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Own,
            title: "Follow a workflow run",
            hints: Hints::LOCAL,
            output_schema: output::agent::workflow_monitor(),
        },
        with_runs(runs, monitor),
    );
    registry.add(
        ToolSpec {
            name: "structs_workflow_cancel",
            description: "Cancel a running workflow: the steps running now are stopped (a \
                proof-of-work search ends), the ones not started are skipped.",
            input_schema: json!({
                "type": "object",
                "properties": {"workflow_id": id_schema()},
                "required": ["workflow_id"],
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Own,
            title: "Cancel a workflow run",
            hints: Hints::CHANGES.closed(),
            output_schema: output::agent::workflow_cancel(),
        },
        with_runs(runs, cancel),
    );
}

fn find(runs: &Runs, args: &Value) -> Result<std::sync::Arc<WorkflowRun>, ToolError> {
    let id = opt_str(args, "workflow_id").unwrap_or_default();
    runs.get(id).ok_or_else(|| {
        let mut e = ToolError::field(
            ErrorCode::ResourceNotFound,
            "workflow_id",
            format!("no workflow run {id:?} on this server"),
        );
        e.message = format!("workflow run {id} not found");
        e
    })
}

async fn list(runs: Arc<Runs>, _env: Env, _args: Value) -> Result<Value, ToolError> {
    let workflows: Vec<Value> = workflow::catalog().values().map(|w| w.to_json()).collect();
    let runs: Vec<Value> = runs
        .list()
        .iter()
        .map(|r| json!({"workflow_id": r.id, "workflow": r.workflow, "status": r.status()}))
        .collect();
    Ok(json!({"workflows": workflows, "runs": runs}))
}

async fn execute(runs: Arc<Runs>, env: Env, args: Value) -> Result<Value, ToolError> {
    let name = opt_str(&args, "workflow").unwrap_or_default();
    let w = workflow::catalog().get(name).ok_or_else(|| {
        ToolError::field(
            ErrorCode::ValidationInvalidValue,
            "workflow",
            format!(
                "no workflow {name:?}; the workflows are {}",
                names().join(", ")
            ),
        )
    })?;
    let inputs = args
        .get("inputs")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_else(Map::new);
    let run = runs.start(&env.tools, w, &inputs, &CallContext::current())?;
    let steps = crate::plan::exec::lock(&run.run).steps.len();
    Ok(json!({
        "workflow_id": run.id,
        "workflow": run.workflow,
        "status": "running",
        "inputs": run.inputs,
        "steps": steps,
        "uses_proof_of_work": w.uses_pow(),
        "monitor": {"tool": "structs_workflow_monitor", "arguments": {"workflow_id": run.id}},
        "started_at": env.timestamp(),
    }))
}

/// The longest `structs_workflow_monitor` waits for a run to end.
const MAX_WAIT_MS: u64 = 60_000;

async fn monitor(runs: Arc<Runs>, _env: Env, args: Value) -> Result<Value, ToolError> {
    let run = find(&runs, &args)?;
    let wait = args
        .get("wait_ms")
        .and_then(crate::json::whole_number)
        .unwrap_or(0)
        .min(MAX_WAIT_MS);
    let until = tokio::time::Instant::now() + std::time::Duration::from_millis(wait);
    let caller = CallContext::current();
    while run.status() == "running" && tokio::time::Instant::now() < until && !caller.is_cancelled()
    {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let include = args
        .get("include_results")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    Ok(run.monitor(include))
}

async fn cancel(runs: Arc<Runs>, _env: Env, args: Value) -> Result<Value, ToolError> {
    let run = find(&runs, &args)?;
    let was = run.status();
    if was == "running" {
        run.cancel.cancel();
    }
    Ok(json!({"workflow_id": run.id, "was": was, "cancelled": was == "running"}))
}
