//! Running a plan.
//!
//! [`Run`] is the state of one run: each step's status, resolved params, result and
//! timing. It knows which steps are ready (everything they need and everything they
//! are ordered after has ended), starts one ([`Run::begin`] resolves its references),
//! records how it ended ([`Run::finish`]) and skips what a failure stops. [`execute`]
//! drives a run to its end with bounded concurrency; the console drives the same
//! [`Run`] a step at a time ([`run_step`]).
//!
//! A step that fails stops the steps that need it (its `depends_on` and the steps
//! that read it), transitively, unless it is `optional`: then its dependants run and see
//! `success: false`. A failed attempt is retried `retry_count` times after a backoff
//! (the plan's `retry_backoff_ms`, doubled each time, at most 10 s, at least a rate
//! limit's `retry_after_ms`) unless retrying cannot help (the arguments are wrong, the
//! tool does not exist, a reference is unresolved, the call was cancelled). Each
//! attempt has the step's `timeout_ms`; running out of it cancels the call.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tracing::Instrument as _;

use super::Caller;
use super::{Plan, StepView, Substitution, Unresolved};
use crate::context::{CallContext, ProgressUpdate, trace};
use crate::error::{ErrorCode, ToolError};

/// Where a step is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Pending,
    Running,
    Succeeded,
    Failed,
    Skipped,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Running => "running",
            Status::Succeeded => "succeeded",
            Status::Failed => "failed",
            Status::Skipped => "skipped",
        }
    }

    /// Ended one way or another.
    pub fn is_done(self) -> bool {
        matches!(self, Status::Succeeded | Status::Failed | Status::Skipped)
    }
}

/// One step's state in a run.
#[derive(Debug, Clone)]
pub struct StepState {
    pub status: Status,
    /// The params with every reference resolved (once the step started).
    pub resolved: Option<Value>,
    pub substitutions: Vec<Substitution>,
    /// The tool's result as an agent sees it.
    pub data: Option<Value>,
    /// The error object (`{"code", "message", "details", ...}`).
    pub error: Option<Value>,
    /// What references read: `{"success", "data", "error"}`.
    pub view: Option<Arc<Value>>,
    /// The whole result behind a handle envelope.
    pub full: Option<Arc<Value>>,
    pub attempts: u32,
    /// The errors of attempts that were retried.
    pub attempt_errors: Vec<Value>,
    pub skipped_reason: Option<String>,
    /// When it started, from the run's start.
    pub started: Option<Duration>,
    pub duration: Option<Duration>,
    /// The latest progress report of its call (a proof-of-work search).
    pub progress: Option<ProgressUpdate>,
}

impl StepState {
    fn new() -> StepState {
        StepState {
            status: Status::Pending,
            resolved: None,
            substitutions: Vec::new(),
            data: None,
            error: None,
            view: None,
            full: None,
            attempts: 0,
            attempt_errors: Vec::new(),
            skipped_reason: None,
            started: None,
            duration: None,
            progress: None,
        }
    }
}

/// A step ready to be called: its resolved arguments and limits.
#[derive(Debug, Clone)]
pub struct Attempt {
    pub index: usize,
    pub tool: String,
    pub args: Value,
    pub timeout: Duration,
    pub retries: u32,
    pub backoff: Duration,
}

/// How a step's call ended, after its retries.
#[derive(Debug)]
pub struct Outcome {
    pub result: Result<Value, ToolError>,
    /// The full result behind a handle envelope, when there was one.
    pub full: Option<Arc<Value>>,
    pub attempts: u32,
    pub attempt_errors: Vec<Value>,
    pub duration: Duration,
}

/// The state of one plan's run.
#[derive(Debug)]
pub struct Run {
    pub plan: Arc<Plan>,
    pub steps: Vec<StepState>,
    started: Instant,
    ended: Option<Duration>,
    peak_running: usize,
    timestamp: String,
}

impl Run {
    pub fn new(plan: Plan) -> Run {
        let n = plan.steps.len();
        Run {
            plan: Arc::new(plan),
            steps: (0..n).map(|_| StepState::new()).collect(),
            started: Instant::now(),
            ended: None,
            peak_running: 0,
            timestamp: String::new(),
        }
    }

    /// Pending steps whose needs and predecessors have all ended, in index order.
    pub fn ready(&self) -> Vec<usize> {
        self.plan
            .steps
            .iter()
            .filter(|s| self.steps[s.index].status == Status::Pending)
            .filter(|s| {
                s.needs()
                    .iter()
                    .chain(self.plan.after[s.index].iter())
                    .all(|&p| self.steps[p].status.is_done())
            })
            .map(|s| s.index)
            .collect()
    }

    pub fn running(&self) -> usize {
        self.steps
            .iter()
            .filter(|s| s.status == Status::Running)
            .count()
    }

    /// Nothing pending or running.
    pub fn is_done(&self) -> bool {
        self.steps.iter().all(|s| s.status.is_done())
    }

    /// The step's view for references, once it has ended.
    pub fn view(&self, i: usize) -> Option<StepView> {
        let s = self.steps.get(i)?;
        Some(StepView {
            view: s.view.clone()?,
            full: s.full.clone(),
        })
    }

    /// Resolves step `i`'s references against the steps that have ended. `Ok` holds the
    /// resolved params and what was substituted.
    pub fn resolve(&self, i: usize) -> Result<(Value, Vec<Substitution>), Unresolved> {
        super::resolve(&self.plan.steps[i], &self.plan, &|s| self.view(s))
    }

    /// Starts step `i`: resolves its params and marks it running. `None` when a
    /// reference found nothing; the step has then failed (and its dependants are
    /// skipped unless it is optional).
    pub fn begin(&mut self, i: usize) -> Option<Attempt> {
        let at = self.started.elapsed();
        let state = &mut self.steps[i];
        state.started = Some(at);
        state.progress = None;
        match self.resolve(i) {
            Ok((params, subs)) => {
                let step = &self.plan.steps[i];
                let state = &mut self.steps[i];
                state.status = Status::Running;
                state.resolved = Some(params.clone());
                state.substitutions = subs;
                let running = self.running();
                self.peak_running = self.peak_running.max(running);
                Some(Attempt {
                    index: i,
                    tool: step.tool.clone(),
                    args: params,
                    timeout: Duration::from_millis(step.timeout_ms),
                    retries: step.retry_count,
                    backoff: Duration::from_millis(self.plan.retry_backoff_ms),
                })
            }
            Err(unresolved) => {
                let e = unresolved.to_error();
                self.finish(
                    i,
                    Outcome {
                        result: Err(e),
                        full: None,
                        attempts: 0,
                        attempt_errors: Vec::new(),
                        duration: Duration::ZERO,
                    },
                );
                None
            }
        }
    }

    /// Records how step `i` ended and skips what its failure stops.
    pub fn finish(&mut self, i: usize, outcome: Outcome) {
        let state = &mut self.steps[i];
        state.attempts = outcome.attempts;
        state.attempt_errors = outcome.attempt_errors;
        state.duration = Some(outcome.duration);
        match outcome.result {
            Ok(data) => {
                state.view = Some(Arc::new(
                    json!({"success": true, "data": data.clone(), "error": null}),
                ));
                state.full = outcome.full;
                state.status = Status::Succeeded;
                state.data = Some(data);
                state.error = None;
            }
            Err(e) => {
                let error = e.to_json(&self.timestamp)["error"].clone();
                state.view = Some(Arc::new(
                    json!({"success": false, "data": null, "error": error}),
                ));
                state.status = Status::Failed;
                state.data = None;
                state.error = Some(error);
                if !self.plan.steps[i].optional {
                    let why = format!("step {} failed: {}", self.plan.steps[i].label(), e.message);
                    self.skip_dependants(i, &why);
                }
            }
        }
        if self.is_done() {
            self.ended = Some(self.started.elapsed());
        }
    }

    fn skip_dependants(&mut self, failed: usize, why: &str) {
        let dependants: Vec<usize> = self
            .plan
            .steps
            .iter()
            .filter(|s| s.needs().contains(&failed))
            .map(|s| s.index)
            .collect();
        for d in dependants {
            if self.steps[d].status != Status::Pending {
                continue;
            }
            let label = self.plan.steps[d].label();
            let state = &mut self.steps[d];
            state.status = Status::Skipped;
            state.skipped_reason = Some(why.to_string());
            let next = format!("step {label} was skipped ({why})");
            self.skip_dependants(d, &next);
        }
    }

    /// Puts a failed or skipped step back to pending, with every step skipped because of
    /// it, so that it can run again (the console's retry).
    pub fn reset(&mut self, i: usize) -> bool {
        if !matches!(self.steps[i].status, Status::Failed | Status::Skipped) {
            return false;
        }
        let mut todo = vec![i];
        while let Some(s) = todo.pop() {
            self.steps[s] = StepState::new();
            for d in &self.plan.steps {
                if d.needs().contains(&s) && self.steps[d.index].status == Status::Skipped {
                    todo.push(d.index);
                }
            }
        }
        self.ended = None;
        true
    }

    /// Stamps error objects with this time (the core's clock).
    pub fn set_timestamp(&mut self, t: String) {
        self.timestamp = t;
    }

    /// Cancels every step that has not started: the run ends as it is.
    pub fn cancel_pending(&mut self, why: &str) {
        for s in self.steps.iter_mut() {
            if s.status == Status::Pending {
                s.status = Status::Skipped;
                s.skipped_reason = Some(why.to_string());
            }
        }
        if self.is_done() {
            self.ended = Some(self.started.elapsed());
        }
    }

    /// Counts of each status.
    pub fn counts(&self) -> Counts {
        let mut c = Counts::default();
        for (s, state) in self.plan.steps.iter().zip(&self.steps) {
            match state.status {
                Status::Pending => c.pending += 1,
                Status::Running => c.running += 1,
                Status::Succeeded => c.succeeded += 1,
                Status::Failed if s.optional => c.optional_failed += 1,
                Status::Failed => c.failed += 1,
                Status::Skipped => c.skipped += 1,
            }
        }
        c
    }

    /// The run succeeded: everything ended, and every failure was optional.
    pub fn succeeded(&self) -> bool {
        let c = self.counts();
        self.is_done() && c.failed == 0 && c.skipped == 0
    }

    /// The longest chain of step durations through the dependencies: the least time
    /// the plan could have taken with unbounded parallelism.
    pub fn critical_path(&self) -> Duration {
        let levels = super::levels(&self.plan);
        let mut order: Vec<usize> = (0..self.steps.len()).collect();
        order.sort_by_key(|&i| levels[i]);
        let mut finish = vec![Duration::ZERO; self.steps.len()];
        for i in order {
            let s = &self.plan.steps[i];
            let start = s
                .needs()
                .iter()
                .chain(self.plan.after[i].iter())
                .map(|&p| finish[p])
                .max()
                .unwrap_or(Duration::ZERO);
            finish[i] = start + self.steps[i].duration.unwrap_or(Duration::ZERO);
        }
        finish.into_iter().max().unwrap_or(Duration::ZERO)
    }

    /// The time since the run started, or its whole length once it ended.
    pub fn elapsed(&self) -> Duration {
        self.ended.unwrap_or_else(|| self.started.elapsed())
    }

    /// One step's entry in the report.
    pub fn step_json(&self, i: usize) -> Value {
        let step = &self.plan.steps[i];
        let s = &self.steps[i];
        let ms = |d: Option<Duration>| d.map(|d| d.as_secs_f64() * 1000.0).map(round1);
        let mut o = serde_json::Map::new();
        o.insert("step_index".into(), json!(i));
        if let Some(id) = &step.id {
            o.insert("id".into(), json!(id));
        }
        o.insert("tool".into(), json!(step.tool));
        o.insert("status".into(), json!(s.status.as_str()));
        o.insert("params".into(), step.params.clone());
        o.insert(
            "resolved_params".into(),
            s.resolved.clone().unwrap_or(Value::Null),
        );
        if !s.substitutions.is_empty() {
            o.insert(
                "substitutions".into(),
                s.substitutions.iter().map(Substitution::to_json).collect(),
            );
        }
        o.insert("success".into(), json!(s.status == Status::Succeeded));
        if let Some(d) = &s.data {
            o.insert("data".into(), d.clone());
        }
        if let Some(e) = &s.error {
            o.insert("error".into(), e.clone());
        }
        if let Some(why) = &s.skipped_reason {
            o.insert("skipped_reason".into(), json!(why));
        }
        if step.optional {
            o.insert("optional".into(), json!(true));
        }
        o.insert("attempts".into(), json!(s.attempts));
        if !s.attempt_errors.is_empty() {
            o.insert("attempt_errors".into(), json!(s.attempt_errors));
        }
        o.insert("started_ms".into(), json!(ms(s.started)));
        o.insert("duration_ms".into(), json!(ms(s.duration)));
        if let Some(p) = &s.progress
            && s.status == Status::Running
        {
            o.insert(
                "progress".into(),
                json!({"progress": p.progress, "total": p.total, "message": p.message, "data": p.data}),
            );
        }
        Value::Object(o)
    }

    /// The whole report: every step and the totals.
    pub fn report(&self) -> Value {
        let c = self.counts();
        let steps: Vec<Value> = (0..self.steps.len()).map(|i| self.step_json(i)).collect();
        let reference_errors = self
            .steps
            .iter()
            .filter(|s| {
                s.error
                    .as_ref()
                    .is_some_and(|e| e["code"] == ErrorCode::ValidationUnresolvedReference.as_str())
            })
            .count();
        json!({
            "success": self.succeeded(),
            "steps": steps,
            "totals": {
                "steps": self.steps.len(),
                "succeeded": c.succeeded,
                "failed": c.failed,
                "optional_failed": c.optional_failed,
                "skipped": c.skipped,
                "pending": c.pending,
                "running": c.running,
                "reference_errors": reference_errors,
                "attempts": self.steps.iter().map(|s| s.attempts).sum::<u32>(),
                "duration_ms": round1(self.elapsed().as_secs_f64() * 1000.0),
                "critical_path_ms": round1(self.critical_path().as_secs_f64() * 1000.0),
                "peak_parallel": self.peak_running,
                "max_parallel": self.plan.max_parallel,
            }
        })
    }
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// How many steps are in each state.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    pub pending: usize,
    pub running: usize,
    pub succeeded: usize,
    /// Non-optional failures.
    pub failed: usize,
    pub optional_failed: usize,
    pub skipped: usize,
}

/// Whether another attempt could end differently.
fn retriable(e: &ToolError) -> bool {
    use ErrorCode::*;
    !matches!(
        e.code,
        ValidationError
            | ValidationMissingField
            | ValidationUnknownField
            | ValidationWrongType
            | ValidationInvalidFormat
            | ValidationOutOfRange
            | ValidationWrongEntityType
            | ValidationInvalidValue
            | ValidationInvalidPlan
            | ValidationUnresolvedReference
            | ToolNotFound
            | ToolCancelled
    )
}

/// Calls one step's tool with its retries and time limit. `parent` cancels it;
/// `progress` receives its call's progress reports. The step is a span of the trace,
/// each try of its tool call a child (`execute_tool {tool}`).
pub async fn attempt(
    tools: &Caller,
    a: &Attempt,
    parent: &CallContext,
    progress: Option<Arc<dyn Fn(ProgressUpdate) + Send + Sync>>,
) -> Outcome {
    let span = tracing::info_span!(
        target: trace::TARGET, "plan step",
        otel.name = %format_args!("plan step {} {}", a.index, a.tool),
        structs.plan.step = a.index as i64, gen_ai.tool.name = %a.tool
    );
    tries(tools, a, parent, progress).instrument(span).await
}

/// [`attempt`]'s tries.
async fn tries(
    tools: &Caller,
    a: &Attempt,
    parent: &CallContext,
    progress: Option<Arc<dyn Fn(ProgressUpdate) + Send + Sync>>,
) -> Outcome {
    let start = Instant::now();
    let mut errors = Vec::new();
    let mut n = 0;
    loop {
        n += 1;
        let mut ctx = parent.child();
        if let Some(p) = &progress {
            let p = p.clone();
            ctx = ctx.with_progress(move |u| p(u));
        }
        let call = tools
            .call(&a.tool, a.args.clone(), ctx)
            .instrument(tracing::info_span!(
                target: trace::TARGET, "execute_tool",
                otel.name = %format_args!("execute_tool {}", a.tool),
                gen_ai.operation.name = "execute_tool", gen_ai.tool.name = %a.tool,
                structs.plan.attempt = i64::from(n)
            ));
        let result = tokio::select! {
            r = tokio::time::timeout(a.timeout, call) => match r {
                Ok(r) => r,
                Err(_) => Err(ToolError::new(
                    ErrorCode::ToolTimeout,
                    format!(
                        "{} did not answer within the step's timeout_ms of {} (attempt {n})",
                        a.tool,
                        a.timeout.as_millis()
                    ),
                )
                .with_extra("timeout_ms", json!(a.timeout.as_millis() as u64))),
            },
            _ = parent.cancelled() => Err(ToolError::new(
                ErrorCode::ToolCancelled,
                "the plan was cancelled while this step ran",
            )),
        };
        match result {
            Ok(v) => {
                let full = full_result(tools, &v).await;
                return Outcome {
                    result: Ok(v),
                    full,
                    attempts: n,
                    attempt_errors: errors,
                    duration: start.elapsed(),
                };
            }
            Err(e) if n <= a.retries && retriable(&e) && !parent.is_cancelled() => {
                let wait = backoff(a.backoff, n, &e);
                errors.push(json!({
                    "attempt": n,
                    "code": e.code.as_str(),
                    "message": e.message,
                    "retry_in_ms": wait.as_millis() as u64,
                }));
                tokio::select! {
                    _ = tokio::time::sleep(wait) => {}
                    _ = parent.cancelled() => {}
                }
            }
            Err(e) => {
                return Outcome {
                    result: Err(e),
                    full: None,
                    attempts: n,
                    attempt_errors: errors,
                    duration: start.elapsed(),
                };
            }
        }
    }
}

/// The wait before attempt `n + 1`: the base doubled per attempt, at most
/// [`super::MAX_BACKOFF_MS`], and at least what a rate limit asked for.
fn backoff(base: Duration, n: u32, e: &ToolError) -> Duration {
    let doubled = base.saturating_mul(1u32 << (n - 1).min(16));
    let capped = doubled.min(Duration::from_millis(super::MAX_BACKOFF_MS));
    let asked = e
        .extra
        .get("retry_after_ms")
        .and_then(Value::as_u64)
        .map(Duration::from_millis)
        .unwrap_or(Duration::ZERO);
    capped.max(asked.min(Duration::from_millis(super::MAX_BACKOFF_MS)))
}

/// The whole result behind a handle envelope, so references can read past its summary.
async fn full_result(tools: &Caller, v: &Value) -> Option<Arc<Value>> {
    if v.get("status").and_then(Value::as_str) != Some("partial") {
        return None;
    }
    let handle = v.get("result_handle")?.as_str()?;
    let Some(handles) = tools.handles() else {
        return remote_result(tools, handle).await.map(Arc::new);
    };
    match handles.store().get(handle, tools.wall().now()).await {
        Ok(Ok(stored)) => Some(stored.data),
        _ => None,
    }
}

/// A handle's whole result from the server a remote core forwards to, rebuilt from
/// its pages as `structs_handle_fetch` gives them; `None` when a page cannot be
/// fetched or had to be cut (then the rebuilt result would not be the stored one).
async fn remote_result(tools: &Caller, handle: &str) -> Option<Value> {
    let mut whole = serde_json::Map::new();
    let mut items = Vec::new();
    for page in 1..=10_000u32 {
        let args = serde_json::json!({"handle": handle, "page": page, "page_size": 100});
        let v = tools
            .call("structs_handle_fetch", args, CallContext::new())
            .await
            .ok()?;
        let info = v.get("page_info")?;
        if info.get("cut").and_then(Value::as_bool) == Some(true) {
            return None;
        }
        match v.get("data")? {
            // A stored array pages as its items; an object as its fields and records.
            Value::Array(more) => items.extend(more.iter().cloned()),
            data => crate::handles::page::merge(&mut whole, data),
        }
        if info.get("has_more").and_then(Value::as_bool) != Some(true) {
            return Some(if whole.is_empty() && !items.is_empty() {
                Value::Array(items)
            } else {
                Value::Object(whole)
            });
        }
    }
    None
}

/// Runs step `i` of a shared run (resolving, calling, recording). Returns false when
/// the step was not ready.
pub async fn run_step(
    tools: &Caller,
    run: &Arc<Mutex<Run>>,
    i: usize,
    parent: &CallContext,
) -> bool {
    let attempt_of = {
        let mut r = lock(run);
        if !r.ready().contains(&i) {
            return false;
        }
        r.set_timestamp(tools.wall().timestamp());
        r.begin(i)
    };
    if let Some(a) = attempt_of {
        let outcome = attempt(tools, &a, parent, Some(progress_sink(run, i))).await;
        lock(run).finish(i, outcome);
    }
    true
}

fn progress_sink(run: &Arc<Mutex<Run>>, i: usize) -> Arc<dyn Fn(ProgressUpdate) + Send + Sync> {
    let run = Arc::downgrade(run);
    Arc::new(move |u| {
        if let Some(run) = run.upgrade() {
            lock(&run).steps[i].progress = Some(u);
        }
    })
}

/// Locks a run; a panic elsewhere never makes the state unreadable.
pub fn lock(run: &Mutex<Run>) -> std::sync::MutexGuard<'_, Run> {
    run.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs every remaining step of `run`, at most `max_parallel` at once, until all have
/// ended or `parent` is cancelled. Reports progress (steps ended of all) to `parent`.
pub async fn execute(tools: &Caller, run: &Arc<Mutex<Run>>, parent: &CallContext) {
    let mut tasks = tokio::task::JoinSet::new();
    let mut ids = std::collections::HashMap::new();
    let total = lock(run).steps.len();
    loop {
        let starts: Vec<Attempt> = {
            let mut r = lock(run);
            r.set_timestamp(tools.wall().timestamp());
            let mut starts = Vec::new();
            if !parent.is_cancelled() {
                // Starting a step can fail it (an unresolved reference), which can make
                // others ready or skipped: repeat until nothing changes.
                loop {
                    let room = r.plan.max_parallel.saturating_sub(r.running());
                    let ready: Vec<usize> = r.ready().into_iter().take(room).collect();
                    if ready.is_empty() {
                        break;
                    }
                    for i in ready {
                        if let Some(a) = r.begin(i) {
                            starts.push(a);
                        }
                    }
                }
            }
            starts
        };
        for a in starts {
            let tools = tools.clone();
            let parent = parent.clone();
            let sink = progress_sink(run, a.index);
            let index = a.index;
            let handle = tasks.spawn(
                async move { attempt(&tools, &a, &parent, Some(sink)).await }.in_current_span(),
            );
            ids.insert(handle.id(), index);
        }
        let Some(joined) = tasks.join_next_with_id().await else {
            break;
        };
        let (i, outcome) = match joined {
            Ok((id, outcome)) => (ids.remove(&id).unwrap_or_default(), outcome),
            Err(e) => {
                // attempt() does not panic (the core turns a tool's panic into an
                // error), but a step must never stay running if it somehow did.
                tracing::error!("a plan step task failed: {e}");
                let i = ids.remove(&e.id()).unwrap_or_default();
                let outcome = Outcome {
                    result: Err(ToolError::new(
                        ErrorCode::ToolExecutionFailed,
                        "the step's task ended unexpectedly",
                    )),
                    full: None,
                    attempts: 1,
                    attempt_errors: Vec::new(),
                    duration: Duration::ZERO,
                };
                (i, outcome)
            }
        };
        let mut r = lock(run);
        r.finish(i, outcome);
        let c = r.counts();
        let ended = total - c.pending - c.running;
        let step = &r.plan.steps[i];
        parent.report(ProgressUpdate {
            progress: ended as f64,
            total: Some(total as f64),
            message: format!(
                "step {} ({}) {}",
                step.label(),
                step.tool,
                r.steps[i].status.as_str()
            ),
            data: json!({"step_index": i, "status": r.steps[i].status.as_str()}),
        });
    }
    if parent.is_cancelled() {
        lock(run).cancel_pending("the plan was cancelled before this step started");
    }
}
