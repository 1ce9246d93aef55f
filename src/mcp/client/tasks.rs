//! Tasks (the Tasks extension, SEP-2663) from the client's side: a server may answer
//! long work with `resultType: "task"` to a client that declares the extension
//! ([`super::Options::tasks`]). The client follows the task to its end: it polls
//! `tasks/get` at the `pollIntervalMs` the server asks for, answers a task waiting on
//! input with `tasks/update`, asks it to stop with `tasks/cancel` when the call is
//! cancelled (Ctrl-C in `client`), and answers with the task's result as if the call
//! had answered it. Each status seen is kept, as the task's lifecycle, for `client` to
//! report.

use std::time::Duration;

use serde_json::{Value, json};

use super::Remote;
use crate::context::CallContext;
use crate::error::{ErrorCode, ToolError};

/// The shortest and longest wait between two polls, whatever the server asks.
const POLL_MIN: Duration = Duration::from_millis(50);
const POLL_MAX: Duration = Duration::from_secs(5);

/// How long a cancelled task is waited for to say it stopped.
const CANCEL_WAIT: Duration = Duration::from_secs(10);

/// Whether a result is a task made for the call, not the call's answer.
pub fn is_task(result: &Value) -> bool {
    result["resultType"] == "task"
}

fn wait_of(task: &Value) -> Duration {
    task["pollIntervalMs"]
        .as_u64()
        .map_or(Duration::from_millis(500), Duration::from_millis)
        .clamp(POLL_MIN, POLL_MAX)
}

/// A task being followed: the call's method and context, and the task's id.
struct Followed<'a> {
    method: &'a str,
    id: String,
    ctx: &'a CallContext,
}

impl Followed<'_> {
    /// The context of one request about the task: it declares the extension as the
    /// call did.
    fn poll(&self) -> CallContext {
        if self.ctx.follows_tasks() {
            CallContext::new().following_tasks()
        } else {
            CallContext::new()
        }
    }

    /// The error of a task the server cancelled.
    fn cancelled(&self) -> ToolError {
        ToolError::new(
            ErrorCode::ToolCancelled,
            format!("task {} of {} was cancelled", self.id, self.method),
        )
        .with_extra("task_id", json!(self.id))
    }

    /// The error of a task asked to stop that did not say it had within
    /// [`CANCEL_WAIT`].
    fn not_stopped(&self) -> ToolError {
        ToolError::new(
            ErrorCode::ToolCancelled,
            format!(
                "task {} of {} was asked to stop, and had not said it did within {} s",
                self.id,
                self.method,
                CANCEL_WAIT.as_secs()
            ),
        )
        .with_extra("task_id", json!(self.id))
    }
}

impl Remote {
    /// Follows the task `created` (a `resultType: "task"` result) to its end: the
    /// call's result when it completes.
    ///
    /// # Errors
    ///
    /// `TOOL_CANCELLED` when `ctx` is cancelled (the server is asked to stop the task)
    /// or the server cancelled it; the task's error when it failed; a request's error
    /// when polling fails.
    pub(super) async fn follow_task(
        &self,
        method: &str,
        created: Value,
        ctx: &CallContext,
    ) -> Result<Value, ToolError> {
        let Some(id) = created["taskId"].as_str().map(str::to_string) else {
            return Err(ToolError::new(
                ErrorCode::ToolExecutionFailed,
                format!(
                    "{} answered {method} with a task without a taskId: {created}",
                    self.server_name()
                ),
            ));
        };
        let followed = Followed { method, id, ctx };
        let mut task = created;
        let mut said = String::new();
        let mut cancelled_at: Option<tokio::time::Instant> = None;
        let mut answered_keys = std::collections::HashSet::new();
        loop {
            let status = task["status"].as_str().unwrap_or("").to_string();
            // Each new status, and each new message while it works (a search's
            // progress), is kept and told.
            let now = format!("{status}\n{}", task["statusMessage"]);
            if now != said {
                self.keep_round(
                    ctx,
                    json!({"task": {
                    "method": method, "taskId": followed.id, "status": status,
                    "statusMessage": task["statusMessage"]}}),
                );
                said = now;
            }
            match status.as_str() {
                "completed" => return Ok(task["result"].clone()),
                "failed" => return Err(self.task_failed(&followed, &task)),
                "cancelled" => return Err(followed.cancelled()),
                "input_required" => {
                    self.answer_task_input(&followed, &task, &mut answered_keys)
                        .await?;
                }
                _ => {}
            }
            self.wait_for_task(&followed, &task, &mut cancelled_at)
                .await;
            if cancelled_at.is_some_and(|at| at.elapsed() > CANCEL_WAIT) {
                return Err(followed.not_stopped());
            }
            task = self
                .request_once("tasks/get", json!({"taskId": followed.id}), followed.poll())
                .await?;
        }
    }

    /// The error of a task that failed: the server's reason, the task's id and its
    /// JSON-RPC code.
    fn task_failed(&self, followed: &Followed<'_>, task: &Value) -> ToolError {
        let code = task["error"]["code"].as_i64().unwrap_or(-32603);
        ToolError::new(
            ErrorCode::ToolExecutionFailed,
            format!(
                "task {} of {} failed on {}: {}",
                followed.id,
                followed.method,
                self.server_name(),
                task["error"]["message"]
                    .as_str()
                    .unwrap_or("no reason given")
            ),
        )
        .with_extra("task_id", json!(followed.id))
        .with_extra("jsonrpc_code", json!(code))
    }

    /// Answers the input a task waits on with `tasks/update`, keeping the round; a key
    /// answered before is left out.
    async fn answer_task_input(
        &self,
        followed: &Followed<'_>,
        task: &Value,
        answered_keys: &mut std::collections::HashSet<String>,
    ) -> Result<(), ToolError> {
        let (method, id) = (followed.method, &followed.id);
        // Only what was not answered yet: a poll may come before the server has taken
        // in the last answer.
        let mut asked = task["inputRequests"].clone();
        if let Some(requests) = asked.as_object_mut() {
            requests.retain(|key, _| !answered_keys.contains(key));
        }
        if let Some(keys) = asked.as_object().filter(|r| !r.is_empty()) {
            answered_keys.extend(keys.keys().cloned());
            let answered = self
                .shared
                .fulfil(&asked, followed.ctx)
                .await
                .map_err(|why| {
                    ToolError::new(
                        ErrorCode::ToolExecutionFailed,
                        format!("task {id} of {method} waits on input: {why}"),
                    )
                })?;
            self.keep_round(
                followed.ctx,
                json!({"task": {"method": method, "taskId": id,
                "inputRequests": asked, "inputResponses": answered}}),
            );
            self.request_once(
                "tasks/update",
                json!({"taskId": id, "inputResponses": answered}),
                followed.poll(),
            )
            .await?;
        }
        Ok(())
    }

    /// Waits the poll interval the task asks for. Cancelling the call meanwhile asks
    /// the task to stop (once, noting when); its end is still waited for, a while, to
    /// say how it ended.
    async fn wait_for_task(
        &self,
        followed: &Followed<'_>,
        task: &Value,
        cancelled_at: &mut Option<tokio::time::Instant>,
    ) {
        let wait = wait_of(task);
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            () = followed.ctx.cancelled(), if cancelled_at.is_none() => {
                *cancelled_at = Some(tokio::time::Instant::now());
                let _ = self
                    .request_once("tasks/cancel", json!({"taskId": followed.id}), followed.poll())
                    .await;
            }
        }
    }
}
