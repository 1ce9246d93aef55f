//! The Tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`): long work that
//! outlives its request.
//!
//! When a request's client declares the extension, a call of a tool that runs long (a
//! proof-of-work search, a workflow run, a plan run: [`TASK_TOOLS`]) answers at once
//! with `resultType: "task"` and runs on; the client polls `tasks/get` (at
//! [`POLL_INTERVAL_MS`]), and may `tasks/cancel`. A client that does not declare it gets
//! the answer itself, as before.
//!
//! A task is a record in the handle store's backend ([`crate::handles::store::HandleStore`]
//! records: the process's memory, or Redis), so any server sharing that Redis answers
//! `tasks/get` and `tasks/cancel` for it:
//! - the server running a task rewrites its record every [`HEARTBEAT`], and reads there
//!   whether another server was asked to cancel it;
//! - a record still `working` whose heartbeat is older than [`STALE_AFTER`] is answered
//!   `failed`, naming why: the server running it stopped.
//!
//! This server's tasks never ask for input, so `tasks/update` is acknowledged and its
//! responses ignored, as the extension asks for keys a task is not waiting on.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolResult, CreateTaskResult, DetailedTask, JsonObject, Task, TaskPayload, TaskStatus,
};
use serde_json::{Value, json};

use crate::context::CallContext;
use crate::error::{ErrorCode, ToolError};
use crate::handles::store::HandleStore;

/// The tools whose calls become tasks for a client that declares the extension.
pub const TASK_TOOLS: [&str; 3] = [
    "structs_calculate_proof_of_work",
    "structs_workflow_execute",
    "structs_plan_execute",
];

/// Tasks one process runs at once; one more is answered `RATE_LIMIT_EXCEEDED`.
pub const MAX_RUNNING: usize = 32;

/// How long a task is kept from its creation (its `ttlMs`): its result can be fetched
/// until then.
pub const TTL: Duration = Duration::from_secs(600);

/// How often a client is asked to poll.
pub const POLL_INTERVAL_MS: u64 = 500;

/// How often a running task's record is rewritten, and a cancel asked elsewhere read.
pub const HEARTBEAT: Duration = Duration::from_secs(1);

/// A `working` record not rewritten for this long belongs to a server that stopped.
pub const STALE_AFTER: Duration = Duration::from_secs(15);

/// The record key of a task, and of the flag asking it to stop.
fn key(id: &str) -> String {
    format!("task:{id}")
}

fn cancel_key(id: &str) -> String {
    format!("task:{id}:cancel")
}

/// The tasks this process runs, over the store every server sharing it reads.
pub struct Tasks {
    store: Arc<dyn HandleStore>,
    /// The tasks running here, by id: how to stop each.
    running: Mutex<HashMap<String, CallContext>>,
    count: AtomicUsize,
}

impl Tasks {
    pub fn new(store: Arc<dyn HandleStore>) -> Arc<Tasks> {
        Arc::new(Tasks {
            store,
            running: Mutex::default(),
            count: AtomicUsize::new(0),
        })
    }

    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<String, CallContext>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many run here now.
    pub fn running_now(&self) -> usize {
        self.count.load(Ordering::Acquire)
    }

    /// Starts `work` (the call, run with the context it is given) as a task, and answers
    /// once `tasks/get` can see it.
    ///
    /// # Errors
    ///
    /// `RATE_LIMIT_EXCEEDED` past [`MAX_RUNNING`]; the store's error when it cannot
    /// keep the record.
    pub async fn start<F, Fut>(
        self: &Arc<Self>,
        tool: &str,
        work: F,
    ) -> Result<CreateTaskResult, ToolError>
    where
        F: FnOnce(CallContext) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = CallToolResult> + Send + 'static,
    {
        let taken = self
            .count
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < MAX_RUNNING).then_some(n + 1)
            });
        if taken.is_err() {
            return Err(ToolError::new(
                ErrorCode::RateLimitExceeded,
                format!(
                    "this server runs {MAX_RUNNING} tasks at once, the most it may; \
                     wait for one to end or cancel one"
                ),
            )
            .with_extra("limit", json!(MAX_RUNNING)));
        }
        let slot = Slot(self.clone());
        let id = crate::guard::random_hex();
        let created = now();
        let task = Task::new(id.clone(), TaskStatus::Working, created.clone(), created)
            .with_ttl_ms(TTL.as_millis() as u64)
            .with_poll_interval_ms(POLL_INTERVAL_MS)
            .with_status_message(format!("{tool} is running"));
        self.write(&DetailedTask::new(task.clone(), TaskPayload::Working))
            .await?;
        let ctx = CallContext::new();
        self.running().insert(id.clone(), ctx.canceller());
        let me = self.clone();
        let running = task.clone();
        tokio::spawn(async move {
            let _slot = slot;
            let call = work(ctx.clone());
            tokio::pin!(call);
            let mut beat = tokio::time::interval(HEARTBEAT);
            beat.tick().await;
            let result = loop {
                tokio::select! {
                    result = &mut call => break result,
                    _ = beat.tick() => {
                        if me.cancel_asked(&running.task_id).await {
                            ctx.cancel();
                        }
                        let mut alive = running.clone();
                        alive.last_updated_at = now();
                        let _ = me.write(&DetailedTask::new(alive, TaskPayload::Working)).await;
                    }
                }
            };
            me.running().remove(&running.task_id);
            let mut done = running.clone();
            done.last_updated_at = now();
            done.status_message = None;
            let payload = if ctx.is_cancelled() {
                TaskPayload::Cancelled
            } else {
                match serde_json::to_value(&result) {
                    Ok(Value::Object(result)) => TaskPayload::Completed { result },
                    _ => TaskPayload::Failed {
                        error: failure("the result could not be written"),
                    },
                }
            };
            if let Err(e) = me.write(&DetailedTask::new(done, payload)).await {
                tracing::warn!(task = %running.task_id, "a task's end could not be stored: {}", e.message);
            }
        });
        Ok(CreateTaskResult::new(task))
    }

    /// The task as `tasks/get` answers it.
    ///
    /// # Errors
    ///
    /// `-32602` for a task this store does not know (never made, or past its TTL).
    pub async fn get(&self, id: &str) -> Result<DetailedTask, McpError> {
        let Some(record) = self.store.get_record(&key(id)).await.map_err(unavailable)? else {
            return Err(unknown(id));
        };
        let mut task = read(&record).ok_or_else(|| unknown(id))?;
        if task.status() == TaskStatus::Working && !self.running().contains_key(id) {
            let beat = chrono::DateTime::parse_from_rfc3339(&task.task.last_updated_at).ok();
            let stale = beat.is_none_or(|t| {
                (chrono::Utc::now() - t.with_timezone(&chrono::Utc))
                    .to_std()
                    .unwrap_or_default()
                    > STALE_AFTER
            });
            if stale {
                let mut failed = task.task.clone();
                failed.status_message = Some(format!(
                    "the server running this task stopped: no word from it for over {} s",
                    STALE_AFTER.as_secs()
                ));
                task = DetailedTask::new(
                    failed,
                    TaskPayload::Failed {
                        error: failure("the server running this task stopped"),
                    },
                );
                let _ = self.write(&task).await;
            }
        }
        Ok(task)
    }

    /// Asks a task to stop: at once when it runs here, else through the store for the
    /// server running it. A task already ended is left as it is.
    ///
    /// # Errors
    ///
    /// `-32602` for a task this store does not know.
    pub async fn cancel(&self, id: &str) -> Result<(), McpError> {
        let task = self.get(id).await?;
        if task.status().is_terminal() {
            return Ok(());
        }
        let local = self.running().get(id).cloned();
        match local {
            Some(ctx) => ctx.cancel(),
            None => self
                .store
                .put_record(&cancel_key(id), json!(true), TTL)
                .await
                .map_err(unavailable)?,
        }
        Ok(())
    }

    /// `tasks/update`: this server's tasks wait on no input, so the responses are
    /// acknowledged and ignored; an unknown task is refused.
    ///
    /// # Errors
    ///
    /// `-32602` for a task this store does not know.
    pub async fn update(&self, id: &str) -> Result<(), McpError> {
        self.get(id).await.map(|_| ())
    }

    async fn cancel_asked(&self, id: &str) -> bool {
        matches!(self.store.get_record(&cancel_key(id)).await, Ok(Some(_)))
    }

    async fn write(&self, task: &DetailedTask) -> Result<(), ToolError> {
        let value = serde_json::to_value(task).map_err(|e| {
            ToolError::new(
                ErrorCode::ToolExecutionFailed,
                format!("a task record: {e}"),
            )
        })?;
        self.store
            .put_record(&key(&task.task.task_id), value, TTL)
            .await
    }
}

/// Gives a running task's place back however it ends.
struct Slot(Arc<Tasks>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.count.fetch_sub(1, Ordering::AcqRel);
    }
}

fn read(record: &Value) -> Option<DetailedTask> {
    serde_json::from_value(record.clone()).ok()
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// A failed task's JSON-RPC error.
fn failure(message: &str) -> JsonObject {
    let mut error = JsonObject::new();
    error.insert("code".into(), json!(-32603));
    error.insert("message".into(), json!(message));
    error
}

fn unknown(id: &str) -> McpError {
    let shown: String = id.chars().take(64).collect();
    McpError::invalid_params(
        format!(
            "no task {shown:?}: it was never made here, or it is past its {} s",
            TTL.as_secs()
        ),
        Some(json!({"taskId": shown})),
    )
}

fn unavailable(e: ToolError) -> McpError {
    McpError::internal_error(e.message.clone(), Some(e.to_json(&now())))
}
