//! Driving a plan's run a piece at a time, as the console's Plans tab does: everything
//! left, chosen steps at once, a retry, or up to the next breakpoint.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tracing::Instrument as _;

use super::Caller;
use super::exec::{self, Run, Status};
use crate::context::CallContext;
use crate::error::ToolError;

/// The work of a background task.
#[derive(Debug, Clone)]
pub enum Job {
    /// Everything left ([`exec::execute`]).
    All,
    /// These steps, at once.
    Steps(Vec<usize>),
    /// Retry these steps (reset already).
    Retry(Vec<usize>),
    /// Until the next step to start has a breakpoint; `pass` is the breakpoint the run
    /// stood at when continued, which may start.
    Continue { pass: BTreeSet<usize> },
}

/// The steps to run again so that step `i` can run: `i` itself when what it needs is
/// fine, else, for each need that failed or was skipped, that need's own roots.
pub fn retry_roots(run: &Run, i: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    fn walk(run: &Run, i: usize, out: &mut Vec<usize>, seen: &mut BTreeSet<usize>) {
        if !seen.insert(i) {
            return;
        }
        let blocked: Vec<usize> = run.plan.steps[i]
            .needs()
            .into_iter()
            .filter(|&n| {
                let s = run.steps[n].status;
                s == Status::Skipped || s == Status::Failed && !run.plan.steps[n].optional
            })
            .collect();
        if blocked.is_empty() {
            if matches!(run.steps[i].status, Status::Failed | Status::Skipped) {
                out.push(i);
            }
            return;
        }
        for n in blocked {
            walk(run, n, out, seen);
        }
    }
    walk(run, i, &mut out, &mut seen);
    out.sort_unstable();
    out
}

/// The background task: runs `job` on `run`, and says where it stopped.
pub async fn drive(
    tools: Caller,
    run: Arc<Mutex<Run>>,
    call: CallContext,
    job: Job,
    breakpoints: Arc<Mutex<BTreeSet<usize>>>,
) -> Result<Value, ToolError> {
    match job {
        Job::All => exec::execute(&tools, &run, &call).await,
        Job::Steps(steps) | Job::Retry(steps) => together(&tools, &run, &call, steps).await,
        Job::Continue { pass } => loop {
            if call.is_cancelled() {
                break;
            }
            let (batch, stop) = {
                let r = exec::lock(&run);
                let bps = breakpoints.lock().unwrap_or_else(|e| e.into_inner());
                let mut batch = Vec::new();
                let mut stop = None;
                for i in r.ready() {
                    if bps.contains(&i) && !pass.contains(&i) {
                        stop = Some(i);
                        break;
                    }
                    batch.push(i);
                }
                batch.truncate(r.plan.max_parallel);
                (batch, stop)
            };
            if batch.is_empty() {
                return Ok(json!({ "stopped_at": stop }));
            }
            together(&tools, &run, &call, batch).await;
        },
    }
    Ok(json!({}))
}

/// Runs these steps at once and waits for all of them.
pub async fn together(
    tools: &Caller,
    run: &Arc<Mutex<Run>>,
    call: &CallContext,
    steps: Vec<usize>,
) {
    let mut tasks = tokio::task::JoinSet::new();
    for i in steps {
        let (tools, run, call) = (tools.clone(), run.clone(), call.clone());
        tasks.spawn(async move { exec::run_step(&tools, &run, i, &call).await }.in_current_span());
    }
    while let Some(joined) = tasks.join_next().await {
        if let Err(e) = joined {
            // run_step does not panic (the core turns a tool's panic into an error);
            // should it, the step stays as it was and the log says so.
            tracing::error!("a plan step task failed: {e}");
        }
    }
}
