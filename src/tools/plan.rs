//! Plan tools: `structs_plan_validate` (every problem of a plan before anything runs)
//! and `structs_plan_execute` (the run, with each step's resolved params and result).
//! The plan format and the reference syntax are in [`crate::plan`].

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::{Env, Hints, Registry, ToolSpec, output};
use crate::context::CallContext;
use crate::error::ToolError;
use crate::handles::Shaping;
use crate::plan::exec::{self, Run};
use crate::plan::{self, Problem};
use crate::references::Support;

/// The JSON Schema of a plan's fields, shared by the plan and workflow tools.
pub(crate) fn plan_properties() -> Value {
    json!({
        "steps": {
            "type": "array",
            "minItems": 1,
            "maxItems": plan::MAX_STEPS,
            "description": "The tool calls, in order. A step's params may use ${step[N].path}, \
                ${steps.ID.path} (earlier steps only) and ${input.NAME}; a step's result reads \
                as {success, data, error}, data being the tool's result.",
            "items": {
                "type": "object",
                "properties": {
                    "tool": {"type": "string", "description": "The tool to call."},
                    "params": {"type": "object", "description": "Its arguments; strings may hold references."},
                    "id": {"type": "string", "maxLength": 64, "description": "A name for ${steps.ID...} and depends_on."},
                    "depends_on": {"type": "array", "items": {"type": ["integer", "string"]},
                        "description": "Steps (indices or ids) that must succeed first; references add their steps by themselves."},
                    "optional": {"type": "boolean", "description": "May fail without stopping the steps that need it (default false)."},
                    "retry_count": {"type": "integer", "minimum": 0, "maximum": plan::MAX_RETRIES,
                        "description": "Attempts after the first when one fails in a way that can change (default 0)."},
                    "timeout_ms": {"type": "integer", "minimum": 0, "maximum": plan::MAX_TIMEOUT_MS,
                        "description": "Time limit per attempt (default 60000)."},
                    "parallel": {"type": "boolean",
                        "description": "false: run alone, after every earlier step and before any later one (default true)."},
                    "description": {"type": "string"}
                },
                "required": ["tool"]
            }
        },
        "inputs": {"type": "object", "description": "Named values for ${input.NAME}."},
        "max_parallel": {"type": "integer", "minimum": 1, "maximum": plan::MAX_PARALLEL,
            "description": "Steps running at once at most (default 8)."},
        "retry_backoff_ms": {"type": "integer", "minimum": 0, "maximum": plan::MAX_BACKOFF_MS,
            "description": "The wait before the first retry, doubled for each next one (default 200)."}
    })
}

pub fn register(registry: &mut Registry) {
    registry.add(
        ToolSpec {
            name: "structs_plan_validate",
            description: "Check a plan without running it: unknown tools, references to steps \
                that do not exist or come later (naming the steps there are), dependency \
                cycles, paths that cannot exist in a result, and arguments the tool would \
                refuse. Returns valid, every problem with its step and parameter, and for a \
                valid plan each step's dependencies and the levels that can run at once.",
            input_schema: json!({
                "type": "object",
                "properties": plan_properties(),
                "required": ["steps"],
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Own,
            title: "Check a plan",
            hints: Hints::LOCAL,
            output_schema: output::agent::plan_validate(),
        },
        validate,
    );
    registry.add(
        ToolSpec {
            name: "structs_plan_execute",
            description: "Run a plan of tool calls where later steps use earlier results: \
                {\"steps\": [{\"id\": \"players\", \"tool\": \"structs_list_players\", \"params\": {\"page_size\": 2}}, \
                {\"tool\": \"structs_query_player\", \"params\": {\"player_id\": \"${steps.players.data.players[0].Player.id}\"}}]}. \
                Steps that do not need each other run at once; a failed step skips the steps \
                that need it unless it is optional; retries and time limits per step. \
                Returns every step with params as written, resolved_params, success, data or \
                error, attempts and timing, plus totals.",
            input_schema: json!({
                "type": "object",
                "properties": plan_properties(),
                "required": ["steps"],
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Own,
            title: "Run a plan",
            hints: Hints::TRANSACT,
            output_schema: output::agent::plan_execute(),
        },
        execute,
    );
    registry.long_running("structs_plan_execute");
}

async fn validate(env: Env, args: Value) -> Result<Value, ToolError> {
    match plan::validate(env.tools.as_ref(), &args) {
        Ok(p) => Ok(json!({
            "valid": true,
            "problems": [],
            "outline": plan::outline(&p),
        })),
        Err(problems) => Ok(json!({
            "valid": false,
            "problems": problems.iter().map(Problem::to_json).collect::<Vec<_>>(),
        })),
    }
}

async fn execute(env: Env, args: Value) -> Result<Value, ToolError> {
    let plan = plan::validate(env.tools.as_ref(), &args).map_err(|p| plan::invalid_plan(&p))?;
    let run = Arc::new(Mutex::new(Run::new(plan)));
    let ctx = CallContext::current();
    let _slot = env.client_work(&ctx).start(crate::context::Work::Plan)?;
    exec::execute(&env.tools, &run, &ctx).await;
    let report = exec::lock(&run).report();
    Ok(report)
}
