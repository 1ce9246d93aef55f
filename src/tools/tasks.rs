//! Task tools: the long calls an MCP server runs as tasks (the Tasks extension), read
//! from the handle store every server sharing it writes (`structs_task_list`), and
//! asked to stop from anywhere that shares it (`structs_task_cancel`). The console's
//! PoW and Plans tabs show tasks through them.

use serde_json::{Value, json};

use super::{Env, Hints, Registry, ToolSpec, opt_str, output};
use crate::error::ToolError;
use crate::handles::Shaping;
use crate::json::whole_number;
use crate::references::Support;
use crate::store::tasks::{self, Cancel, LIST_MAX};

/// A task id as the server makes them.
const TASK_ID_PATTERN: &str = "^[0-9a-f]{1,64}$";

/// Most tool names one listing filters on.
const TOOLS_MAX: usize = 16;

pub fn register(registry: &mut Registry) {
    registry.add(
        ToolSpec {
            name: "structs_task_list",
            description: "The tasks MCP servers run for clients that declare the Tasks \
                extension (proof-of-work searches, plan and workflow runs), newest first: \
                id, tool, status (working, completed, failed, cancelled), status message, \
                times, a one-line outcome and the caller that made it. A caller (its bearer \
                token) lists its own tasks; the operator's token, every caller's. Read from \
                the handle store, so every server sharing a Redis store lists the same tasks; a task is kept 600 s from its \
                creation. A task still `working` whose server went quiet for 15 s is \
                listed `failed`. Fetch a task's whole result with tasks/get.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "tools": {"type": "array", "maxItems": TOOLS_MAX,
                        "items": {"type": "string", "pattern": "^structs_[a-z_]{1,60}$"},
                        "description": "Only the tasks of these tools, e.g. [\"structs_plan_execute\", \"structs_workflow_execute\"]."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": LIST_MAX, "default": 50,
                        "description": "Most tasks to show (1-100, default 50)."}
                },
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Own,
            title: "List tasks",
            hints: Hints::LOCAL,
            output_schema: output::agent::task_list(),
        },
        list,
    );
    registry.add(
        ToolSpec {
            name: "structs_task_cancel",
            description: "Asks a task to stop, whichever server sharing the handle store \
                runs it: that server cancels it within a second, and the task then reads \
                `cancelled`. A task that already ended is left as it is, and the answer \
                says how it ended. A caller stops its own tasks only; an unknown id, or \
                another caller's, is RESOURCE_NOT_FOUND. It destroys nothing in the game, \
                so it asks no confirmation, as tasks/cancel asks none.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "task_id": {"type": "string", "pattern": TASK_ID_PATTERN,
                        "description": "The task's id, from structs_task_list or the call that made it."}
                },
                "required": ["task_id"],
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Own,
            title: "Cancel a task",
            hints: Hints {
                read_only: Some(false),
                destructive: Some(false),
                idempotent: Some(true),
                open_world: Some(false),
            },
            output_schema: output::agent::task_cancel(),
        },
        cancel,
    );
}

async fn list(env: Env, args: Value) -> Result<Value, ToolError> {
    let tools: Vec<String> = args["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t.as_str().map(str::to_string))
        .collect();
    let limit = args
        .get("limit")
        .and_then(whole_number)
        .map_or(50, |n| n as usize);
    let store = env.handle_store();
    // Servers stamp their tasks with the real time, whatever the game's clock says.
    // A caller lists its own tasks; the operator and the console, every caller's.
    let ctx = crate::context::CallContext::current();
    let (shown, total) = tasks::list(
        store.as_ref(),
        &tools,
        limit,
        chrono::Utc::now(),
        ctx.owner(),
    )
    .await?;
    Ok(json!({
        "tasks": shown,
        "total": total,
        "store": store.name(),
        "ttl_secs": tasks::TTL.as_secs(),
        "timestamp": env.timestamp(),
    }))
}

async fn cancel(env: Env, args: Value) -> Result<Value, ToolError> {
    let id = opt_str(&args, "task_id").unwrap_or_default();
    let store = env.handle_store();
    let ctx = crate::context::CallContext::current();
    let asked = tasks::ask_cancel(store.as_ref(), id, chrono::Utc::now(), ctx.owner()).await?;
    let (asked, status) = match asked {
        Cancel::Asked => (true, "working"),
        Cancel::Ended(status) => (false, status),
    };
    Ok(json!({
        "task_id": id,
        "asked": asked,
        "status": status,
        "timestamp": env.timestamp(),
    }))
}
