//! The Tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`): long work that
//! outlives its request.
//!
//! When a request's client declares the extension, a call of a tool that runs long (a
//! proof-of-work search, a workflow run, a plan run: a tool registered as
//! [`crate::tools::Registry::long_running`]) answers at once
//! with `resultType: "task"` and runs on; the client polls `tasks/get` (at
//! [`POLL_INTERVAL_MS`]), and may `tasks/cancel`. A client that does not declare it gets
//! the answer itself, as before.
//!
//! A task is a record in the handle store's backend ([`crate::store::tasks`]: the
//! process's memory, or Redis), so any server sharing that Redis answers `tasks/get`
//! and `tasks/cancel` for it, and the console's task tools list it:
//! - the server running a task rewrites its record every [`HEARTBEAT`], and reads there
//!   whether another server was asked to cancel it;
//! - a record still `working` whose heartbeat is older than [`STALE_AFTER`] is answered
//!   `failed`, naming why: the server running it stopped.
//!
//! - a server that is shut down stops the tasks it still runs and records each as
//!   `failed`, saying so ([`Tasks::shut_down`]), so no client waits out the staleness.
//!
//! A task's tool may ask its client ([`super::task_input`]): the task is then
//! `input_required`, its open questions in `inputRequests`, until `tasks/update`
//! answers them. An update is acknowledged once the task's record shows it; answers to
//! questions not open are ignored, as the extension asks. An update given to another
//! server sharing the store waits there for the server running the task, which reads
//! it at its next heartbeat.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolResult, CreateTaskResult, DetailedTask, InputResponses, JsonObject, Task, TaskPayload,
    TaskStatus,
};
use serde_json::{Value, json};
use tracing::Instrument as _;

use super::task_input::Waiting;
use crate::context::caller::{Full, Place, Places};
use crate::context::{CallContext, Principal};
use crate::error::{ErrorCode, ToolError};
use crate::store::HandleStore;
pub use crate::store::tasks::{STALE_AFTER, TTL};
use crate::store::tasks::{cancel_key, input_key, key};

/// Tasks one process runs at once; one more is answered `RATE_LIMIT_EXCEEDED`.
pub const MAX_RUNNING: usize = 32;

/// Tasks one caller ([`crate::context::caller`]) runs at once on one process, so that
/// no caller fills [`MAX_RUNNING`]; one more is answered `RATE_LIMIT_EXCEEDED`.
pub const MAX_RUNNING_PER_CALLER: usize = 8;

/// What a task still running when its server was shut down ended with.
pub const SHUT_DOWN: &str =
    "the server running this task was shut down before it ended; run it again";

/// How long a shutdown waits for its tasks to record that they stopped.
pub const SHUT_DOWN_WAIT: Duration = Duration::from_secs(2);

/// How often a client is asked to poll.
pub const POLL_INTERVAL_MS: u64 = 500;

/// How often a running task's record is rewritten, and a cancel asked elsewhere read.
pub const HEARTBEAT: Duration = Duration::from_secs(1);

/// The tasks this process runs, over the store every server sharing it reads.
pub struct Tasks {
    store: Arc<dyn HandleStore>,
    /// The tasks running here, by id: how to stop each.
    running: Mutex<HashMap<String, CallContext>>,
    /// The places of the tasks running here, in all and by caller.
    places: Arc<Places>,
    /// Set by [`Tasks::shut_down`]: a task stopped now failed, it was not cancelled.
    shutting_down: AtomicBool,
    /// The open questions of the tasks running here, by id.
    waiting: Mutex<HashMap<String, Arc<Waiting>>>,
}

impl Tasks {
    pub fn new(store: Arc<dyn HandleStore>) -> Arc<Tasks> {
        Arc::new(Tasks {
            store,
            running: Mutex::default(),
            places: Places::new(MAX_RUNNING, MAX_RUNNING_PER_CALLER),
            shutting_down: AtomicBool::new(false),
            waiting: Mutex::default(),
        })
    }

    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<String, CallContext>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many run here now.
    pub fn running_now(&self) -> usize {
        self.places.total()
    }

    /// Takes a running task's place for `owner`: one of the process's
    /// [`MAX_RUNNING`], and one of the caller's [`MAX_RUNNING_PER_CALLER`].
    fn take_slot(&self, owner: Option<&str>) -> Result<Place, ToolError> {
        let (limit, whose) = match self.places.take(owner) {
            Ok(place) => return Ok(place),
            Err(Full::All) => (MAX_RUNNING, "this server"),
            Err(Full::Caller) => (MAX_RUNNING_PER_CALLER, "this caller"),
        };
        Err(ToolError::new(
            ErrorCode::RateLimitExceeded,
            format!(
                "{whose} runs {limit} tasks at once, the most it may; wait for one to end \
                 or cancel one"
            ),
        )
        .with_extra("limit", json!(limit)))
    }

    /// How many tasks `owner` runs here now.
    pub fn running_for(&self, owner: &str) -> usize {
        self.places.of(owner)
    }

    /// Starts `work` (the call, run with the context it is given) as a task of `owner`
    /// (`None`: the console's own), and answers once `tasks/get` can see it.
    ///
    /// # Errors
    ///
    /// `RATE_LIMIT_EXCEEDED` past [`MAX_RUNNING`] or [`MAX_RUNNING_PER_CALLER`]; the
    /// store's error when it cannot keep the record.
    pub async fn start<F, Fut>(
        self: &Arc<Self>,
        tool: &str,
        owner: Option<String>,
        work: F,
    ) -> Result<CreateTaskResult, ToolError>
    where
        F: FnOnce(CallContext) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = Result<CallToolResult, McpError>> + Send + 'static,
    {
        self.start_asking(tool, owner, Vec::new(), work).await
    }

    /// [`Tasks::start`], for a client that declared `declared` (`elicitation`,
    /// `sampling`, `roots`): the task's tool may ask it under those, and the task waits
    /// `input_required` for the answers ([`super::task_input`]).
    ///
    /// # Errors
    ///
    /// As [`Tasks::start`].
    pub async fn start_asking<F, Fut>(
        self: &Arc<Self>,
        tool: &str,
        owner: Option<String>,
        declared: Vec<&'static str>,
        work: F,
    ) -> Result<CreateTaskResult, ToolError>
    where
        F: FnOnce(CallContext) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = Result<CallToolResult, McpError>> + Send + 'static,
    {
        let slot = self.take_slot(owner.as_deref())?;
        let record = Record {
            tool: tool.to_string(),
            owner,
            traceparent: crate::context::trace::current_traceparent(),
        };
        let id = crate::random::hex128();
        let created = now();
        let task = Task::new(id.clone(), TaskStatus::Working, created.clone(), created)
            .with_ttl_ms(TTL.as_millis() as u64)
            .with_poll_interval_ms(POLL_INTERVAL_MS)
            .with_status_message(format!("{tool} is running"));
        self.write(
            &record,
            &DetailedTask::new(task.clone(), TaskPayload::Working),
        )
        .await?;
        if let Some(owner) = &record.owner {
            // Listed under its owner, so that a caller's listing finds it among many.
            let index = crate::store::tasks::owner_key(owner, &id);
            self.store.put_record(&index, json!(true), TTL).await?;
        }
        // The work's latest progress (a search's iterations, rate and best) becomes
        // the task's status message at the next heartbeat, so whoever polls the task
        // sees how far it is.
        let progress: Arc<Mutex<Option<String>>> = Arc::default();
        let sink = progress.clone();
        let waiting = Waiting::new();
        let ctx = CallContext::new()
            .with_progress(move |u: crate::context::ProgressUpdate| {
                if !u.message.is_empty() {
                    *sink.lock().unwrap_or_else(|e| e.into_inner()) = Some(u.message);
                }
            })
            .with_client(waiting.asker(declared));
        self.running().insert(id.clone(), ctx.canceller());
        self.waiting_on().insert(id.clone(), waiting.clone());
        let me = self.clone();
        let running = task.clone();
        let (span, counted) = traced(tool, &id);
        tokio::spawn(async move {
            let _slot = slot;
            let _counted = counted;
            let call = work(ctx.clone());
            tokio::pin!(call);
            let mut beat = tokio::time::interval(HEARTBEAT);
            beat.tick().await;
            let result = loop {
                tokio::select! {
                    result = &mut call => break result,
                    () = waiting.changed() => {
                        let said = progress.lock().unwrap_or_else(|e| e.into_inner()).clone();
                        me.beat(&record, &running, said, &waiting).await;
                    }
                    _ = beat.tick() => {
                        if me.cancel_asked(&running.task_id).await {
                            ctx.cancel();
                        }
                        me.answers_elsewhere(&running.task_id, &waiting).await;
                        let said = progress.lock().unwrap_or_else(|e| e.into_inner()).clone();
                        me.beat(&record, &running, said, &waiting).await;
                    }
                }
            };
            me.running().remove(&running.task_id);
            me.waiting_on().remove(&running.task_id);
            let mut done = running.clone();
            done.last_updated_at = now();
            done.status_message = None;
            let shut_down = ctx.is_cancelled() && me.shutting_down.load(Ordering::Acquire);
            if shut_down {
                done.status_message = Some(SHUT_DOWN.to_string());
            }
            let payload = ended(result, ctx.is_cancelled(), shut_down);
            if let Err(e) = me.write(&record, &DetailedTask::new(done, payload)).await {
                tracing::warn!(task = %running.task_id, "a task's end could not be stored: {}", e.message);
            }
            // An update waiting for its answer to show sees the end instead.
            waiting.written(u64::MAX);
        }.instrument(span));
        Ok(CreateTaskResult::new(task))
    }

    /// Stops every task still running here, as the server shuts down: each is recorded
    /// `failed` with [`SHUT_DOWN`] as its message. Waits at most `within` for them to
    /// write that; a task that has not by then is left to be judged stale.
    pub async fn shut_down(&self, within: Duration) {
        self.shutting_down.store(true, Ordering::Release);
        let running: Vec<CallContext> = self.running().values().cloned().collect();
        if running.is_empty() {
            return;
        }
        tracing::info!(
            tasks = running.len(),
            "stopping the tasks still running here"
        );
        for ctx in running {
            ctx.cancel();
        }
        let deadline = tokio::time::Instant::now() + within;
        while self.running_now() > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// The task as `tasks/get` answers it to `who` (`None`: the console).
    ///
    /// # Errors
    ///
    /// `-32602` for a task this store does not know (never made, or past its TTL), and
    /// for another caller's: it is not there for `who`, and its answer says no more.
    pub async fn get(&self, id: &str, who: Option<&Principal>) -> Result<DetailedTask, McpError> {
        let record = self.store.get_record(&key(id)).await.map_err(unavailable)?;
        let Some(record) = record.filter(|r| crate::store::tasks::visible(r, who)) else {
            return Err(unknown(id));
        };
        let task = read(&record).ok_or_else(|| unknown(id))?;
        // A poll is linked to the call that made the task.
        if let Some(made_in) = record["traceparent"].as_str() {
            crate::context::trace::link_current(made_in);
        }
        let owner = Record {
            tool: record["tool"].as_str().unwrap_or_default().to_string(),
            owner: record["owner"].as_str().map(str::to_string),
            traceparent: record["traceparent"].as_str().map(str::to_string),
        };
        let server = record["server"].as_str().unwrap_or_default();
        Ok(self.judge(&owner, server, task).await)
    }

    /// A task as it is answered: one still `working` whose server has gone quiet is
    /// `failed`, saying so (and is written so, still naming the server that ran it).
    async fn judge(&self, about: &Record, server: &str, mut task: DetailedTask) -> DetailedTask {
        let id = task.task.task_id.clone();
        let open = matches!(
            task.status(),
            TaskStatus::Working | TaskStatus::InputRequired
        );
        if open && !self.running().contains_key(&id) {
            let record = serde_json::to_value(&task).unwrap_or_default();
            if crate::store::tasks::went_quiet(&record, chrono::Utc::now()) {
                let mut failed = task.task.clone();
                failed.status_message = Some(crate::store::tasks::quiet_message(server));
                task = DetailedTask::new(
                    failed,
                    TaskPayload::Failed {
                        error: failure("the server running this task stopped"),
                    },
                );
                let _ = self.write_as(about, server, &task).await;
            }
        }
        task
    }

    /// Asks a task of `who` to stop: at once when it runs here, else through the store
    /// for the server running it. A task already ended is left as it is.
    ///
    /// # Errors
    ///
    /// `-32602` for a task this store does not know, or another caller's.
    pub async fn cancel(&self, id: &str, who: Option<&Principal>) -> Result<(), McpError> {
        let task = self.get(id, who).await?;
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

    /// `tasks/update`: gives a task of `who` the answers to its open questions. Running
    /// here, the answers go to its tool at once, and the update is acknowledged once the
    /// task's record shows them (at most [`HEARTBEAT`] later); running on another
    /// server, they wait in the store for that server's next heartbeat. Answers to
    /// questions not open, and to a task that has ended, are ignored.
    ///
    /// # Errors
    ///
    /// `-32602` for a task this store does not know, or another caller's.
    pub async fn update(
        &self,
        id: &str,
        who: Option<&Principal>,
        responses: &InputResponses,
    ) -> Result<(), McpError> {
        let task = self.get(id, who).await?;
        if task.status().is_terminal() || responses.is_empty() {
            return Ok(());
        }
        let here = self.waiting_on().get(id).cloned();
        let Some(waiting) = here else {
            // Only the questions the task's record lists as open wait for its server.
            let open = match &task.payload {
                TaskPayload::InputRequired { input_requests } => input_requests.clone(),
                _ => Default::default(),
            };
            for (question, answer) in responses.iter().filter(|(q, _)| open.contains_key(*q)) {
                self.store
                    .put_record(&input_key(id, question), answer.clone(), TTL)
                    .await
                    .map_err(unavailable)?;
            }
            return Ok(());
        };
        if let Some(made) = waiting.answer(responses) {
            waiting.shown(made, HEARTBEAT).await;
        }
        Ok(())
    }

    fn waiting_on(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Waiting>>> {
        self.waiting.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A running task's record rewritten: `working`, or `input_required` with its open
    /// questions; `said` the work's latest progress.
    async fn beat(&self, record: &Record, running: &Task, said: Option<String>, waiting: &Waiting) {
        let made = waiting.current();
        let mut alive = running.clone();
        alive.last_updated_at = now();
        let payload = match waiting.requests() {
            Some(input_requests) => {
                alive.status_message = Some(format!("{} waits on its client's input", record.tool));
                TaskPayload::InputRequired { input_requests }
            }
            None => {
                if let Some(said) = said {
                    alive.status_message = Some(said);
                }
                TaskPayload::Working
            }
        };
        if self
            .write(record, &DetailedTask::new(alive, payload))
            .await
            .is_ok()
        {
            waiting.written(made);
        }
    }

    /// Answers to a running task's open questions given on another server.
    async fn answers_elsewhere(&self, id: &str, waiting: &Waiting) {
        for question in waiting.keys() {
            let key = input_key(id, &question);
            if let Ok(Some(answer)) = self.store.get_record(&key).await
                && !answer.is_null()
            {
                let mut given = InputResponses::new();
                given.insert(question, answer);
                waiting.answer(&given);
                // Used: a question asked again under its key waits for a new answer.
                let _ = self
                    .store
                    .put_record(&key, Value::Null, HEARTBEAT * 5)
                    .await;
            }
        }
    }

    async fn cancel_asked(&self, id: &str) -> bool {
        crate::store::tasks::cancel_asked(self.store.as_ref(), id).await
    }

    /// Writes a task's record: the task as `tasks/get` answers it, its tool and owner,
    /// and this server.
    async fn write(&self, record: &Record, task: &DetailedTask) -> Result<(), ToolError> {
        self.write_as(record, crate::store::tasks::this_server(), task)
            .await
    }

    /// Writes a task's record as run by `server`.
    async fn write_as(
        &self,
        record: &Record,
        server: &str,
        task: &DetailedTask,
    ) -> Result<(), ToolError> {
        let mut value = serde_json::to_value(task).map_err(|e| {
            ToolError::new(
                ErrorCode::ToolExecutionFailed,
                format!("a task record: {e}"),
            )
        })?;
        value["tool"] = json!(record.tool);
        value["server"] = json!(server);
        if let Some(owner) = &record.owner {
            value["owner"] = json!(owner);
        }
        if let Some(traceparent) = &record.traceparent {
            value["traceparent"] = json!(traceparent);
        }
        self.store
            .put_record(&key(&task.task.task_id), value, TTL)
            .await
    }
}

/// What a task's record says beside the task: its tool and its owner, and the span of
/// the call that made it (when traces are on).
struct Record {
    tool: String,
    owner: Option<String>,
    traceparent: Option<String>,
}

/// The span a task's work runs in (of the call that made the task; it ends after the
/// answer), and its place in `structs.tasks.running`, when traces are on.
fn traced(tool: &str, id: &str) -> (tracing::Span, Option<Counted>) {
    let span = tracing::info_span!(
        target: crate::context::trace::TARGET, "task",
        otel.name = %format_args!("task {tool}"), structs.task.id = %id,
        gen_ai.tool.name = tool
    );
    let counted = crate::context::trace::instruments().map(|i| {
        i.tasks_running.add(1, &[]);
        Counted(i.tasks_running.clone())
    });
    (span, counted)
}

/// A task counted in `structs.tasks.running` until it ends.
struct Counted(opentelemetry::metrics::UpDownCounter<i64>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.add(-1, &[]);
    }
}

fn read(record: &Value) -> Option<DetailedTask> {
    serde_json::from_value(record.clone()).ok()
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// A failed task's JSON-RPC error.
/// How a task's work ended, as its record says: stopped by the server's shutdown,
/// cancelled, completed with the tool's answer (an error result included), or failed
/// with the server's error (a protocol error).
fn ended(
    result: Result<CallToolResult, McpError>,
    cancelled: bool,
    shut_down: bool,
) -> TaskPayload {
    if shut_down {
        return TaskPayload::Failed {
            error: failure(SHUT_DOWN),
        };
    }
    if cancelled {
        return TaskPayload::Cancelled;
    }
    match result.map(|r| serde_json::to_value(&r)) {
        Ok(Ok(Value::Object(result))) => TaskPayload::Completed { result },
        Ok(_) => TaskPayload::Failed {
            error: failure("the result could not be written"),
        },
        Err(error) => TaskPayload::Failed {
            error: match serde_json::to_value(&error) {
                Ok(Value::Object(error)) => error,
                _ => failure(&error.message),
            },
        },
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::MemoryStore;

    /// A proof-of-work task that runs until it is asked to stop.
    async fn until_cancelled(tasks: &Arc<Tasks>) -> CreateTaskResult {
        tasks
            .start("structs_calculate_proof_of_work", None, |ctx| async move {
                ctx.cancelled().await;
                Ok(CallToolResult::structured(json!({"valid": false})))
            })
            .await
            .unwrap()
    }

    async fn until(tasks: &Tasks, id: &str, status: TaskStatus) {
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while tasks.get(id, None).await.unwrap().status() != status {
            assert!(
                std::time::Instant::now() < deadline,
                "{id} never {status:?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// A task that asks its client two questions at once and says their answers.
    async fn asking(tasks: &Arc<Tasks>) -> String {
        let made = tasks
            .start_asking("asks", None, vec!["elicitation"], |ctx| async move {
                let form = json!({"message": "?", "requestedSchema": {"type": "object", "properties": {}}});
                let (a, b) = tokio::join!(
                    ctx.ask_client("a", "elicitation/create", form.clone()),
                    ctx.ask_client("b", "elicitation/create", form),
                );
                let said = format!("{} {}", a.unwrap()["action"], b.unwrap()["action"]);
                Ok(CallToolResult::structured(json!({"said": said})))
            })
            .await
            .unwrap();
        made.task.task_id
    }

    fn answers(keys: &[&str], action: &str) -> InputResponses {
        keys.iter()
            .map(|k| (k.to_string(), json!({"action": action})))
            .collect()
    }

    #[tokio::test]
    async fn a_task_waits_on_its_questions_and_an_update_answers_them_here_or_elsewhere() {
        let store: Arc<dyn HandleStore> = Arc::new(MemoryStore::default());
        let here = Tasks::new(store.clone());
        let id = asking(&here).await;
        until(&here, &id, TaskStatus::InputRequired).await;
        let open = |t: DetailedTask| match t.payload {
            TaskPayload::InputRequired { input_requests } => {
                input_requests.into_keys().collect::<Vec<_>>()
            }
            other => panic!("not waiting: {other:?}"),
        };
        assert_eq!(open(here.get(&id, None).await.unwrap()), ["a", "b"]);
        // One answered here: acknowledged once the record lists only the other.
        here.update(&id, None, &answers(&["a", "zz"], "accept"))
            .await
            .unwrap();
        assert_eq!(open(here.get(&id, None).await.unwrap()), ["b"]);
        // The other answered on a server sharing the store: read at the next heartbeat.
        let elsewhere = Tasks::new(store.clone());
        elsewhere
            .update(&id, None, &answers(&["b"], "decline"))
            .await
            .unwrap();
        until(&here, &id, TaskStatus::Completed).await;
        let done = serde_json::to_value(here.get(&id, None).await.unwrap()).unwrap();
        assert_eq!(
            done["result"]["structuredContent"]["said"], "\"accept\" \"decline\"",
            "{done}"
        );
        // An update of an ended task is acknowledged and changes nothing.
        here.update(&id, None, &answers(&["a"], "cancel"))
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn a_tool_that_answers_an_error_completes_and_a_server_error_fails() {
        let tasks = Tasks::new(Arc::new(MemoryStore::default()));
        let answered = tasks
            .start("failing_job", None, |_| async {
                Ok(CallToolResult::error(vec![
                    rmcp::model::ContentBlock::text("no"),
                ]))
            })
            .await
            .unwrap();
        let broke = tasks
            .start("protocol_error_job", None, |_| async {
                Err(McpError::internal_error("it broke", Some(json!({"at": 3}))))
            })
            .await
            .unwrap();
        until(&tasks, &answered.task.task_id, TaskStatus::Completed).await;
        until(&tasks, &broke.task.task_id, TaskStatus::Failed).await;
        let answered =
            serde_json::to_value(tasks.get(&answered.task.task_id, None).await.unwrap()).unwrap();
        assert_eq!(answered["result"]["isError"], true, "{answered}");
        assert!(answered.get("error").is_none(), "{answered}");
        let broke =
            serde_json::to_value(tasks.get(&broke.task.task_id, None).await.unwrap()).unwrap();
        assert_eq!(
            broke["error"],
            json!({"code": -32603, "message": "it broke", "data": {"at": 3}}),
            "{broke}"
        );
        assert!(broke.get("result").is_none(), "{broke}");
    }

    #[tokio::test]
    async fn the_store_lists_each_task_with_its_tool_newest_first() {
        let store: Arc<dyn HandleStore> = Arc::new(MemoryStore::default());
        let tasks = Tasks::new(store.clone());
        let quick = tasks
            .start("structs_plan_execute", None, |_| async {
                Ok(CallToolResult::structured(
                    json!({"status": "succeeded", "steps": [{}]}),
                ))
            })
            .await
            .unwrap();
        until(&tasks, &quick.task.task_id, TaskStatus::Completed).await;
        tokio::time::sleep(Duration::from_millis(5)).await;
        let slow = until_cancelled(&tasks).await;
        let now = chrono::Utc::now();
        let (listed, total) = crate::store::tasks::list(store.as_ref(), &[], 10, now, None)
            .await
            .unwrap();
        let shown: Vec<(&str, &str, &str)> = listed
            .iter()
            .map(|l| {
                (
                    l["tool"].as_str().unwrap(),
                    l["task_id"].as_str().unwrap(),
                    l["status"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(total, 2);
        assert_eq!(
            shown,
            [
                (
                    "structs_calculate_proof_of_work",
                    slow.task.task_id.as_str(),
                    "working"
                ),
                (
                    "structs_plan_execute",
                    quick.task.task_id.as_str(),
                    "completed"
                ),
            ]
        );
        assert_eq!(listed[1]["outcome"], "succeeded: 1 step");
        assert_eq!(tasks.running_now(), 1);

        // Asked to stop through the store (as the console or another server asks): the
        // heartbeat reads the flag, it says so, and its place is given back.
        let asked = crate::store::tasks::ask_cancel(store.as_ref(), &slow.task.task_id, now, None)
            .await
            .unwrap();
        assert_eq!(asked, crate::store::tasks::Cancel::Asked);
        until(&tasks, &slow.task.task_id, TaskStatus::Cancelled).await;
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(tasks.running_now(), 0);
    }

    #[tokio::test]
    async fn one_caller_cannot_fill_the_process_with_tasks() {
        let store: Arc<dyn HandleStore> = Arc::new(MemoryStore::default());
        let tasks = Tasks::new(store);
        let start = |owner: &str| {
            let owner = Some(owner.to_string());
            let tasks = tasks.clone();
            async move {
                tasks
                    .start("structs_calculate_proof_of_work", owner, |ctx| async move {
                        ctx.cancelled().await;
                        Ok(CallToolResult::structured(json!({"valid": false})))
                    })
                    .await
            }
        };
        let mut alices = Vec::new();
        for _ in 0..MAX_RUNNING_PER_CALLER {
            alices.push(start("caller:alice").await.unwrap().task.task_id);
        }
        let refused = start("caller:alice").await.unwrap_err();
        assert_eq!(refused.code, ErrorCode::RateLimitExceeded);
        assert!(
            refused.message.contains("this caller"),
            "{}",
            refused.message
        );
        assert_eq!(tasks.running_for("caller:alice"), MAX_RUNNING_PER_CALLER);
        // The refusal gave the process's place back, and bob has his own.
        assert_eq!(tasks.running_now(), MAX_RUNNING_PER_CALLER);
        let bobs = start("caller:bob").await.unwrap().task.task_id;
        // Alice's place comes back when one of hers ends.
        let alice = Principal::named("alice");
        tasks.cancel(&alices[0], Some(&alice)).await.unwrap();
        until(&tasks, &alices[0], TaskStatus::Cancelled).await;
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(
            tasks.running_for("caller:alice"),
            MAX_RUNNING_PER_CALLER - 1
        );
        start("caller:alice").await.unwrap();
        // Bob cannot stop hers, nor read it.
        let bob = Principal::named("bob");
        assert!(tasks.cancel(&alices[1], Some(&bob)).await.is_err());
        assert!(tasks.get(&alices[1], Some(&bob)).await.is_err());
        assert!(tasks.get(&bobs, Some(&bob)).await.is_ok());
        tasks.shut_down(SHUT_DOWN_WAIT).await;
    }

    #[tokio::test]
    async fn a_task_running_at_shutdown_is_recorded_failed_saying_so() {
        let store: Arc<dyn HandleStore> = Arc::new(MemoryStore::default());
        let tasks = Tasks::new(store.clone());
        let slow = until_cancelled(&tasks).await;
        let id = slow.task.task_id;
        tasks.shut_down(SHUT_DOWN_WAIT).await;
        assert_eq!(tasks.running_now(), 0);
        // Another server reading the store sees the end, not a task still working.
        let other = Tasks::new(store);
        let task = other.get(&id, None).await.unwrap();
        assert_eq!(task.status(), TaskStatus::Failed);
        assert_eq!(task.task.status_message.as_deref(), Some(SHUT_DOWN));
    }
}
