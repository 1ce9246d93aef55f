//! Workflows: named plans shipped with the binary (`data/workflows/*.json`), run in the
//! background with inputs, and followed by id.
//!
//! A workflow file is a plan with a `name`, a `description` and declared `inputs`
//! (`description`, `required`, `default`, `example`); its steps read the inputs as
//! `${input.NAME}`. [`Runs`] keeps the runs of one core: each has its [`Run`] state
//! (shared with whoever watches it), a cancel flag, and its start and end times.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Map, Value, json};
use tracing::Instrument as _;

use super::Caller;
use super::exec::{self, Run, Status};
use crate::context::CallContext;
use crate::error::{ErrorCode, ToolError};

/// The shipped workflow files.
const FILES: [(&str, &str); 4] = [
    (
        "query-and-monitor-planet",
        include_str!("../../data/workflows/query-and-monitor-planet.json"),
    ),
    (
        "planet-setup",
        include_str!("../../data/workflows/planet-setup.json"),
    ),
    (
        "build-mining-operation",
        include_str!("../../data/workflows/build-mining-operation.json"),
    ),
    (
        "mine-refine-convert",
        include_str!("../../data/workflows/mine-refine-convert.json"),
    ),
];

/// Most runs a core remembers; the oldest finished ones are forgotten first.
pub const MAX_RUNS: usize = 100;

/// One declared input.
#[derive(Debug, Clone)]
pub struct Input {
    pub name: String,
    pub description: String,
    pub required: bool,
    pub default: Option<Value>,
    pub example: Option<Value>,
}

/// A named plan with inputs.
#[derive(Debug, Clone)]
pub struct Workflow {
    pub name: String,
    pub description: String,
    pub inputs: Vec<Input>,
    /// The file's JSON (its `steps` are the plan's).
    pub source: Value,
}

impl Workflow {
    fn parse(name: &str, text: &str) -> Result<Workflow, String> {
        let source: Value =
            serde_json::from_str(text).map_err(|e| format!("workflow {name}: {e}"))?;
        let declared = source["name"].as_str().unwrap_or_default();
        if declared != name {
            return Err(format!(
                "workflow file {name} declares the name {declared:?}"
            ));
        }
        let mut inputs = Vec::new();
        if let Some(map) = source["inputs"].as_object() {
            for (k, v) in map {
                inputs.push(Input {
                    name: k.clone(),
                    description: v["description"].as_str().unwrap_or_default().to_string(),
                    required: v["required"].as_bool().unwrap_or(false),
                    default: v.get("default").cloned(),
                    example: v.get("example").cloned(),
                });
            }
        }
        Ok(Workflow {
            name: name.to_string(),
            description: source["description"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            inputs,
            source,
        })
    }

    /// The plan JSON for these inputs: required ones present, unknown ones refused,
    /// defaults filled in.
    pub fn plan_json(&self, given: &Map<String, Value>) -> Result<Value, ToolError> {
        for k in given.keys() {
            if !self.inputs.iter().any(|i| &i.name == k) {
                let names: Vec<&str> = self.inputs.iter().map(|i| i.name.as_str()).collect();
                return Err(ToolError::field(
                    ErrorCode::ValidationUnknownField,
                    format!("inputs.{k}"),
                    format!(
                        "{} has no input {k:?}; its inputs are {}",
                        self.name,
                        names.join(", ")
                    ),
                ));
            }
        }
        let mut inputs = Map::new();
        for i in &self.inputs {
            match (given.get(&i.name), &i.default) {
                (Some(v), _) => {
                    inputs.insert(i.name.clone(), v.clone());
                }
                (None, Some(d)) => {
                    inputs.insert(i.name.clone(), d.clone());
                }
                (None, None) if i.required => {
                    return Err(ToolError::field(
                        ErrorCode::ValidationMissingField,
                        format!("inputs.{}", i.name),
                        format!(
                            "{} needs {}: {}{}",
                            self.name,
                            i.name,
                            i.description,
                            i.example
                                .as_ref()
                                .map(|e| format!(" (e.g. {e})"))
                                .unwrap_or_default()
                        ),
                    ));
                }
                (None, None) => {}
            }
        }
        let mut plan = Map::new();
        plan.insert("steps".into(), self.source["steps"].clone());
        plan.insert("inputs".into(), Value::Object(inputs));
        for k in ["max_parallel", "retry_backoff_ms"] {
            if let Some(v) = self.source.get(k) {
                plan.insert(k.into(), v.clone());
            }
        }
        Ok(Value::Object(plan))
    }

    /// The example inputs (for the console and the docs).
    pub fn example_inputs(&self) -> Map<String, Value> {
        self.inputs
            .iter()
            .filter_map(|i| Some((i.name.clone(), i.example.clone()?)))
            .collect()
    }

    /// Whether a step computes a proof of work.
    pub fn uses_pow(&self) -> bool {
        self.source["steps"].as_array().is_some_and(|s| {
            s.iter()
                .any(|s| s["tool"] == "structs_calculate_proof_of_work")
        })
    }

    pub fn to_json(&self) -> Value {
        let inputs: Map<String, Value> = self
            .inputs
            .iter()
            .map(|i| {
                (
                    i.name.clone(),
                    json!({"description": i.description, "required": i.required,
                           "default": i.default, "example": i.example}),
                )
            })
            .collect();
        let steps: Vec<Value> = self.source["steps"]
            .as_array()
            .map(|s| {
                s.iter()
                    .map(|s| json!({"id": s["id"], "tool": s["tool"], "description": s["description"]}))
                    .collect()
            })
            .unwrap_or_default();
        json!({
            "name": self.name,
            "description": self.description,
            "inputs": inputs,
            "uses_proof_of_work": self.uses_pow(),
            "steps": steps,
        })
    }
}

/// Every shipped workflow, by name. A file that does not parse is a build mistake the
/// test suite catches; it is left out rather than stopping the server.
pub fn catalog() -> &'static BTreeMap<String, Workflow> {
    static CATALOG: OnceLock<BTreeMap<String, Workflow>> = OnceLock::new();
    CATALOG.get_or_init(|| {
        FILES
            .iter()
            .filter_map(|(name, text)| match Workflow::parse(name, text) {
                Ok(w) => Some((w.name.clone(), w)),
                Err(e) => {
                    tracing::error!("{e}");
                    None
                }
            })
            .collect()
    })
}

/// Parses every shipped file, for the tests.
pub fn parse_all() -> Result<Vec<Workflow>, String> {
    FILES
        .iter()
        .map(|(name, text)| Workflow::parse(name, text))
        .collect()
}

/// One workflow run.
pub struct WorkflowRun {
    pub id: String,
    pub workflow: String,
    pub inputs: Map<String, Value>,
    pub run: Arc<Mutex<Run>>,
    pub cancel: CallContext,
    pub started: DateTime<Utc>,
    pub ended: Mutex<Option<DateTime<Utc>>>,
}

impl WorkflowRun {
    /// `running`, `succeeded`, `failed` or `cancelled`.
    pub fn status(&self) -> &'static str {
        let ended = self
            .ended
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some();
        if !ended {
            return "running";
        }
        if self.cancel.is_cancelled() {
            return "cancelled";
        }
        if exec::lock(&self.run).succeeded() {
            "succeeded"
        } else {
            "failed"
        }
    }

    /// Status, progress and each step's state; the whole report once it ended (when
    /// asked).
    pub fn monitor(&self, include_results: bool) -> Value {
        let status = self.status();
        let run = exec::lock(&self.run);
        let total = run.steps.len();
        let c = run.counts();
        let ended = total - c.pending - c.running;
        let steps: Vec<Value> = run
            .plan
            .steps
            .iter()
            .zip(&run.steps)
            .map(|(step, s)| {
                let mut o = Map::new();
                o.insert("step_index".into(), json!(step.index));
                o.insert("id".into(), json!(step.id));
                o.insert("tool".into(), json!(step.tool));
                o.insert("status".into(), json!(s.status.as_str()));
                o.insert("attempts".into(), json!(s.attempts));
                if let Some(d) = s.duration {
                    o.insert("duration_ms".into(), json!(d.as_millis() as u64));
                }
                if let Some(e) = &s.error {
                    o.insert("error".into(), json!({"code": e["code"], "message": e["message"]}));
                }
                if let Some(why) = &s.skipped_reason {
                    o.insert("skipped_reason".into(), json!(why));
                }
                if s.status == Status::Running
                    && let Some(p) = &s.progress
                {
                    o.insert(
                        "progress".into(),
                        json!({"message": p.message, "progress": p.progress, "total": p.total, "data": p.data}),
                    );
                }
                Value::Object(o)
            })
            .collect();
        let current: Vec<Value> = run
            .plan
            .steps
            .iter()
            .zip(&run.steps)
            .filter(|(_, s)| s.status == Status::Running)
            .map(|(step, s)| {
                json!({"step_index": step.index, "id": step.id, "tool": step.tool,
                       "progress": s.progress.as_ref().map(|p| p.message.clone())})
            })
            .collect();
        let ended_at = *self.ended.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = json!({
            "workflow_id": self.id,
            "workflow": self.workflow,
            "inputs": self.inputs,
            "status": status,
            "progress": {
                "steps_done": ended,
                "steps_total": total,
                "percent": if total == 0 { 100.0 } else { (ended as f64 * 1000.0 / total as f64).round() / 10.0 },
                "succeeded": c.succeeded,
                "failed": c.failed + c.optional_failed,
                "skipped": c.skipped,
                "running": c.running,
            },
            "current": current,
            "steps": steps,
            "started_at": self.started.to_rfc3339_opts(SecondsFormat::Secs, true),
            "ended_at": ended_at.map(|t| t.to_rfc3339_opts(SecondsFormat::Secs, true)),
            "elapsed_ms": run.elapsed().as_millis() as u64,
        });
        if include_results && ended_at.is_some() {
            out["report"] = run.report();
        }
        out
    }
}

/// The workflow runs of one core.
#[derive(Default)]
pub struct Runs {
    next: AtomicU64,
    runs: Mutex<BTreeMap<u64, Arc<WorkflowRun>>>,
}

impl Runs {
    /// Starts `workflow` with `inputs` in the background; returns its run at once.
    pub fn start(
        &self,
        tools: &Caller,
        workflow: &Workflow,
        inputs: &Map<String, Value>,
        parent: &CallContext,
    ) -> Result<Arc<WorkflowRun>, ToolError> {
        let plan_json = workflow.plan_json(inputs)?;
        let plan =
            super::validate(tools.as_ref(), &plan_json).map_err(|p| super::invalid_plan(&p))?;
        // The run holds the client's plan slot until it ends.
        let slot = tools
            .client_work(parent)
            .start(crate::context::Work::Plan)?;
        let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let id = format!("wf_{n}");
        let run = Arc::new(Mutex::new(Run::new(plan)));
        // The run outlives the call that started it: its own cancel flag, the caller's
        // subscriptions.
        let cancel = parent.child();
        let wr = Arc::new(WorkflowRun {
            id: id.clone(),
            workflow: workflow.name.clone(),
            inputs: plan_json["inputs"].as_object().cloned().unwrap_or_default(),
            run: run.clone(),
            cancel: cancel.clone(),
            started: tools.wall().now(),
            ended: Mutex::new(None),
        });
        {
            let mut runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
            while runs.len() >= MAX_RUNS {
                let oldest_done = runs
                    .iter()
                    .find(|(_, r)| r.status() != "running")
                    .map(|(k, _)| *k);
                match oldest_done {
                    Some(k) => {
                        runs.remove(&k);
                    }
                    None => {
                        return Err(ToolError::new(
                            ErrorCode::RateLimitExceeded,
                            format!(
                                "{MAX_RUNS} workflows are running; wait for one to end or cancel one"
                            ),
                        ));
                    }
                }
            }
            runs.insert(n, wr.clone());
        }
        let tools = tools.clone();
        let task_run = wr.clone();
        // The run goes on after the call that started it answered: a span of its own
        // in that call's trace.
        let span = tracing::info_span!(
            target: crate::context::trace::TARGET, "workflow run",
            otel.name = %format_args!("workflow run wf_{n}"), structs.workflow.run = n as i64
        );
        tokio::spawn(
            async move {
                exec::execute(&tools, &task_run.run, &task_run.cancel).await;
                *task_run.ended.lock().unwrap_or_else(|e| e.into_inner()) =
                    Some(tools.wall().now());
                drop(slot);
            }
            .instrument(span),
        );
        Ok(wr)
    }

    pub fn get(&self, id: &str) -> Option<Arc<WorkflowRun>> {
        let n: u64 = id.strip_prefix("wf_")?.parse().ok()?;
        self.runs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&n)
            .cloned()
    }

    /// Every remembered run, newest first.
    pub fn list(&self) -> Vec<Arc<WorkflowRun>> {
        self.runs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .rev()
            .cloned()
            .collect()
    }
}
