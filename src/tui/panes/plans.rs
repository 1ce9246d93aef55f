//! The Plans pane: a plan's steps as a dependency list, run all at once, one step at a
//! time or up to a breakpoint, with the selected step's params as written beside the
//! resolved ones and its result as a tree.
//!
//! ```text
//! ╭ Plan · example (built in) · 5 steps ───────╮╭ Step 1 (planet) · structs_query_planet ──────╮
//! │    ✓ 0 players      list_players           ││status     ✓ succeeded · 1 attempt · 3 ms     │
//! │›   ✓   1 planet     query_planet  ← 0      ││waits for  0 (players) · level 1              │
//! │    ✓   2 guild      query_guild   ← 0      ││param      as written        resolved         │
//! │  ● ○     3 structs  list_structs  ← 1      ││planet_id  "${steps.players  "2-1"  ← step 0  │
//! │    ✗ 4 lost         query_struct  optional ││           .data.players[0]  (players)        │
//! ╰──────────────────────────────── ✓3 ✗1 ○1 ──╯╰──────────────────────────────────────────────╯
//! ```
//!
//! A step is indented by its level (steps of one level can run at once); `← 0, 2` are
//! the steps it waits for, `●` a breakpoint. Below the detail, the result's tree.
//!
//! - A plan comes from a file (`o`: a plan `{"steps": [...]}`, a recorded
//!   `structs_plan_execute` call as `{"name"|"tool", "arguments"}` or as a JSON-RPC
//!   `tools/call` request, or JSON Lines holding such requests, one of which is then
//!   chosen), from [`PlansPane::open_plan`], or is the built-in example
//!   (`data/plans/example.json`) the pane opens with. A plan that does not validate
//!   shows its problems, each with its step and parameter.
//! - The run is a shared [`Run`] (`src/plan/exec.rs`): the pane starts one background
//!   task at a time on the runtime (through the Dispatcher, so it answers like a tool
//!   call) and draws the run's state every frame without waiting for it. `r` runs
//!   everything left ([`exec::execute`]), `s` one ready step, `c` runs ready steps in
//!   index order, a level at a time, until the next one to start has a breakpoint
//!   (`b`), `R` retries a failed step (for a skipped one, the failure it waits on),
//!   `x` cancels, `n` starts a new run.
//! - For the selected step: its params as written beside the resolved ones (for a
//!   pending step, a preview against the steps that have ended), each substituted value
//!   highlighted with the step it came from; a reference that finds nothing says which
//!   part is missing; the result (data or error) as a tree drawn with the entity
//!   tree's [`Fields`]; why it was skipped; attempts and time taken.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{List, ListItem, ListState, Paragraph, StatefulWidget, Widget};
use serde_json::{Value, json};

use super::entity_tree::{Fetched, Fields};
use crate::context::CallContext;
use crate::core::Core;
use crate::error::{ErrorCode, ToolError};
use crate::plan::exec::{self, Counts, Run, Status};
use crate::plan::template::Template;
use crate::plan::{self, ParamPath, ParamSeg, Problem, Step, Substitution, Unresolved};
use crate::tui::component::{
    self, Ctx, EventState, Pane, PromptKey, SELECTED_MARK, Ui, dispatch, fit,
};
use crate::tui::dispatch::{Reply, RequestId};
use crate::tui::keymap::{Command, Context};
use crate::tui::theme::Role;
use crate::tui::widgets::area_block;
use crate::tui::widgets::tree::{Change, TreeView};

/// The plan the pane opens with.
const EXAMPLE: &str = include_str!("../../../data/plans/example.json");
const EXAMPLE_LABEL: &str = "example (built in)";

/// The tools whose recorded calls carry a plan.
const PLAN_TOOLS: [&str; 2] = ["structs_plan_execute", "structs_plan_validate"];

/// The largest file the pane reads.
const MAX_FILE_BYTES: u64 = 8 << 20;

/// Below this width the steps sit above the detail instead of beside it.
const SIDE_BY_SIDE: u16 = 70;

/// Below this inner width the params are listed under each other, not in columns.
const PARAM_COLUMNS: u16 = 56;

/// The deepest level drawn as indentation.
const MAX_INDENT: usize = 6;

/// One plan found in a file: where it was and the plan's JSON.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FoundPlan {
    pub label: String,
    pub plan: Value,
}

/// The plan a JSON value holds: a plan itself, a recorded plan tool call
/// (`{"name"|"tool", "arguments"|"params"}`), or a JSON-RPC `tools/call` request whose
/// params are such a call.
fn plan_in(v: &Value) -> Option<&Value> {
    let o = v.as_object()?;
    if o.contains_key("steps") {
        return Some(v);
    }
    if o.get("method").and_then(Value::as_str) == Some("tools/call") {
        return plan_in_call(o.get("params")?);
    }
    plan_in_call(v)
}

fn plan_in_call(v: &Value) -> Option<&Value> {
    let o = v.as_object()?;
    let name = o.get("name").or_else(|| o.get("tool"))?.as_str()?;
    if !PLAN_TOOLS.contains(&name) {
        return None;
    }
    o.get("arguments")
        .or_else(|| o.get("params"))
        .filter(|a| a.is_object())
}

/// The tool a recorded call names, for saying what a file held instead of a plan.
fn called_tool(v: &Value) -> Option<&str> {
    let call = if v.get("method").and_then(Value::as_str) == Some("tools/call") {
        v.get("params")?
    } else {
        v
    };
    call.get("name").or_else(|| call.get("tool"))?.as_str()
}

fn found(label: String, plan: &Value) -> FoundPlan {
    let steps = plan["steps"].as_array().map_or(0, Vec::len);
    FoundPlan {
        label: format!(
            "{label} · {steps} step{}",
            if steps == 1 { "" } else { "s" }
        ),
        plan: plan.clone(),
    }
}

/// Every plan in a file's text: one JSON value (a plan, a recorded call, or an array of
/// them) or JSON Lines. The error says what the text holds instead.
pub(crate) fn plans_in(text: &str) -> Result<Vec<FoundPlan>, String> {
    let whole = serde_json::from_str::<Value>(text);
    if let Ok(v) = &whole {
        if let Value::Array(items) = v {
            let found: Vec<FoundPlan> = items
                .iter()
                .enumerate()
                .filter_map(|(i, item)| plan_in(item).map(|p| found(format!("item {i}"), p)))
                .collect();
            if found.is_empty() {
                return Err(format!(
                    "none of the array's {} items is a plan or a recorded structs_plan_execute call",
                    items.len()
                ));
            }
            return Ok(found);
        }
        return match plan_in(v) {
            Some(p) => Ok(vec![found("the file".into(), p)]),
            None => Err(not_a_plan(v)),
        };
    }
    // JSON Lines: each line one value.
    let mut plans = Vec::new();
    let mut lines = 0;
    let mut bad_lines = 0;
    let mut bad: Option<(usize, String)> = None;
    let mut other_tools = BTreeSet::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        lines += 1;
        match serde_json::from_str::<Value>(line) {
            Ok(v) => match plan_in(&v) {
                Some(p) => plans.push(found(format!("line {}", n + 1), p)),
                None => {
                    if let Some(tool) = called_tool(&v) {
                        other_tools.insert(tool.to_string());
                    }
                }
            },
            Err(e) => {
                bad_lines += 1;
                if bad.is_none() {
                    bad = Some((n + 1, e.to_string()));
                }
            }
        }
    }
    if !plans.is_empty() {
        return Ok(plans);
    }
    if lines <= 1 || bad_lines == lines {
        // One value, or nothing that reads as lines of JSON: the whole file's error
        // (with its line and column) says most.
        let e = whole.err().map(|e| e.to_string()).unwrap_or_default();
        return Err(format!("the file is not JSON: {e}"));
    }
    let mut message = format!("no plan and no structs_plan_execute call in {lines} lines");
    if !other_tools.is_empty() {
        let tools: Vec<String> = other_tools.into_iter().collect();
        message.push_str(&format!(" (calls of {})", tools.join(", ")));
    }
    if let Some((n, e)) = bad {
        message.push_str(&format!("; line {n} is not JSON: {e}"));
    }
    Err(message)
}

fn not_a_plan(v: &Value) -> String {
    if let Some(tool) = called_tool(v) {
        return format!(
            "the file holds a call of {tool}, not of structs_plan_execute: there is no plan in it"
        );
    }
    match v {
        Value::Object(o) => {
            let keys: Vec<&str> = o.keys().map(String::as_str).take(6).collect();
            format!(
                "the file holds an object with {}, not a plan ({{\"steps\": [...]}}) or a \
                 recorded structs_plan_execute call",
                if keys.is_empty() {
                    "no fields".to_string()
                } else {
                    keys.join(", ")
                }
            )
        }
        other => format!(
            "the file holds {}, not a plan ({{\"steps\": [...]}})",
            plan::template::describe(other)
        ),
    }
}

/// A plan's file could not be used: the problem standing for it.
fn file_problem(message: String) -> Problem {
    Problem {
        step: None,
        step_id: None,
        param: None,
        kind: "unreadable_file",
        message,
        available: None,
    }
}

/// The work of a background task.
#[derive(Debug, Clone)]
enum Job {
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

/// The background task of a run.
struct Driver {
    request: RequestId,
    call: CallContext,
    job: Job,
    generation: u64,
}

/// An opened, valid plan and its run.
struct Opened {
    label: String,
    run: Arc<Mutex<Run>>,
    levels: Vec<usize>,
    breakpoints: Arc<Mutex<BTreeSet<usize>>>,
}

impl Opened {
    fn run(&self) -> MutexGuard<'_, Run> {
        exec::lock(&self.run)
    }

    fn breakpoints(&self) -> MutexGuard<'_, BTreeSet<usize>> {
        self.breakpoints.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What the pane shows.
enum Doc {
    Plan(Opened),
    /// A file or plan that cannot run, and why.
    Problems {
        label: String,
        problems: Vec<Problem>,
    },
}

/// The shipped workflows as plans with their example inputs, then the example plan.
fn shipped_plans() -> Vec<FoundPlan> {
    let mut out: Vec<FoundPlan> = crate::plan::workflow::catalog()
        .values()
        .filter_map(|w| {
            let inputs = w.example_inputs();
            let plan = w.plan_json(&inputs).ok()?;
            let shown: Vec<String> = inputs
                .iter()
                .map(|(k, v)| format!("{k} {}", compact(v)))
                .collect();
            let mut f = found(w.name.clone(), &plan);
            if !shown.is_empty() {
                f.label = format!("{} · {}", f.label, shown.join(", "));
            }
            Some(f)
        })
        .collect();
    if let Ok(plan) = serde_json::from_str::<Value>(EXAMPLE) {
        out.push(found(EXAMPLE_LABEL.into(), &plan));
    }
    out
}

/// The plan calls of a file (or the shipped workflows), to choose one.
struct Pick {
    label: String,
    plans: Vec<FoundPlan>,
    list: ListState,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Area {
    Steps,
    Result,
}

/// What the result tree was built from; a change rebuilds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shown {
    generation: u64,
    step: usize,
    status: Status,
    attempts: u32,
}

/// The Plans pane.
pub(crate) struct PlansPane {
    doc: Doc,
    focus: Area,
    list: ListState,
    prompt: Option<String>,
    last_path: String,
    pick: Option<Pick>,
    driver: Option<Driver>,
    /// Bumped for every opened plan and new run.
    generation: u64,
    view: TreeView,
    fetched: Fetched,
    shown: Option<Shown>,
    /// Durations are left out of the frame (tests' reproducible frames).
    pinned_timing: bool,
}

impl PlansPane {
    /// The pane with the built-in example plan open.
    pub fn new(core: &Core) -> PlansPane {
        let mut pane = PlansPane {
            doc: Doc::Problems {
                label: EXAMPLE_LABEL.into(),
                problems: Vec::new(),
            },
            focus: Area::Steps,
            list: ListState::default(),
            prompt: None,
            last_path: String::new(),
            pick: None,
            driver: None,
            generation: 0,
            view: TreeView::default(),
            fetched: Fetched::default(),
            shown: None,
            pinned_timing: false,
        };
        match serde_json::from_str::<Value>(EXAMPLE) {
            Ok(plan) => pane.open_plan(EXAMPLE_LABEL.into(), plan, core),
            Err(e) => {
                pane.doc = Doc::Problems {
                    label: EXAMPLE_LABEL.into(),
                    problems: vec![file_problem(format!("the built-in plan is not JSON: {e}"))],
                }
            }
        }
        pane
    }

    /// Opens `plan` (a plan's JSON, as `structs_plan_execute` takes it) under `label`,
    /// replacing what was open and cancelling its run. A plan that does not validate
    /// shows its problems instead.
    pub fn open_plan(&mut self, label: String, plan: Value, core: &Core) {
        self.cancel_driver();
        self.pick = None;
        self.generation += 1;
        self.focus = Area::Steps;
        self.view = TreeView::default();
        self.shown = None;
        match plan::validate(core, &plan) {
            Ok(plan) => {
                let levels = plan::levels(&plan);
                self.doc = Doc::Plan(Opened {
                    label,
                    run: Arc::new(Mutex::new(Run::new(plan))),
                    levels,
                    breakpoints: Arc::default(),
                });
                self.list.select(Some(0));
            }
            Err(problems) => {
                self.doc = Doc::Problems { label, problems };
                self.list.select(None);
            }
        }
    }

    /// Test seam: leaves durations out of the frame, so a frame after a run is the same
    /// every time.
    pub fn pin_timing(&mut self) {
        self.pinned_timing = true;
    }

    /// The run's report (as `structs_plan_execute` answers), when a valid plan is open.
    pub fn report(&self) -> Option<Value> {
        match &self.doc {
            Doc::Plan(o) => Some(o.run().report()),
            Doc::Problems { .. } => None,
        }
    }

    /// Cancels the run's task, if one is going (the console is closing, or another
    /// plan opens).
    fn cancel_driver(&mut self) {
        if let Some(d) = self.driver.take() {
            d.call.cancel();
        }
    }

    fn opened(&self) -> Option<&Opened> {
        match &self.doc {
            Doc::Plan(o) => Some(o),
            Doc::Problems { .. } => None,
        }
    }

    fn selected(&self) -> Option<usize> {
        self.opened()?;
        self.list.selected()
    }

    fn step_count(&self) -> usize {
        self.opened().map_or(0, |o| o.run().steps.len())
    }

    /// Reads a file and opens the plan in it, or lists the plans to choose from, or
    /// shows why it cannot.
    fn open_file(&mut self, path: &str, ctx: &mut Ctx<'_>) {
        let path = path.trim();
        let label = std::path::Path::new(path)
            .file_name()
            .map_or_else(|| path.to_string(), |n| n.to_string_lossy().into_owned());
        let core = ctx.dispatcher.core().clone();
        let text = match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => Err(format!("{path} is a folder, not a file")),
            // A pipe or a device could keep the console waiting for its end.
            Ok(m) if !m.is_file() => Err(format!("{path} is not a regular file")),
            Ok(m) if m.len() > MAX_FILE_BYTES => Err(format!(
                "{path} is {} MB; plan files of up to {} MB are read",
                m.len() >> 20,
                MAX_FILE_BYTES >> 20
            )),
            Ok(_) => std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}")),
            Err(e) => Err(format!("cannot read {path}: {e}")),
        };
        let plans = text.and_then(|t| plans_in(&t));
        match plans {
            Err(message) => {
                self.cancel_driver();
                self.generation += 1;
                ctx.status.error(format!("{label}: no plan opened"));
                self.doc = Doc::Problems {
                    label,
                    problems: vec![file_problem(message)],
                };
                self.list.select(None);
                self.focus = Area::Steps;
            }
            Ok(mut plans) if plans.len() == 1 => {
                let one = plans.remove(0);
                self.open_found(label, one, &core, ctx);
            }
            Ok(plans) => {
                ctx.status.info(format!(
                    "{label} holds {} plan calls: choose one",
                    plans.len()
                ));
                self.pick = Some(Pick {
                    label,
                    plans,
                    list: ListState::default().with_selected(Some(0)),
                });
            }
        }
    }

    fn open_found(&mut self, label: String, found: FoundPlan, core: &Core, ctx: &mut Ctx<'_>) {
        let name = if found.label.starts_with("the file") {
            label
        } else if found.label.starts_with(EXAMPLE_LABEL) {
            EXAMPLE_LABEL.to_string()
        } else {
            format!("{label} {}", found.label.split(" · ").next().unwrap_or(""))
        };
        self.open_plan(name.clone(), found.plan, core);
        match &self.doc {
            Doc::Plan(o) => ctx
                .status
                .info(format!("opened {name}: {} steps", o.run().steps.len())),
            Doc::Problems { problems, .. } => ctx.status.error(format!(
                "{name}: the plan cannot run ({} problem{})",
                problems.len(),
                if problems.len() == 1 { "" } else { "s" }
            )),
        }
    }

    /// Starts `job` as the run's background task.
    fn start(&mut self, job: Job, ctx: &mut Ctx<'_>) {
        let Some(o) = self.opened() else {
            return;
        };
        let call = CallContext::new();
        let core = ctx.dispatcher.core().clone();
        let task = drive(
            core,
            o.run.clone(),
            call.clone(),
            job.clone(),
            o.breakpoints.clone(),
        );
        let request = ctx.dispatcher.spawn_task(task);
        self.driver = Some(Driver {
            request,
            call,
            job,
            generation: self.generation,
        });
    }

    fn step_label(&self, i: usize) -> String {
        self.opened()
            .map(|o| o.run().plan.steps[i].label())
            .unwrap_or_else(|| i.to_string())
    }

    fn run_command(&mut self, command: Command, ctx: &mut Ctx<'_>) {
        if let Some(pick) = &mut self.pick {
            let len = pick.plans.len();
            match command {
                Command::Up => pick.list.select_previous(),
                Command::Down => pick.list.select_next(),
                Command::Top => pick.list.select_first(),
                Command::Bottom => pick.list.select(Some(len.saturating_sub(1))),
                Command::ChooseAction => {
                    let at = pick.list.selected().unwrap_or(0).min(len.saturating_sub(1));
                    if let Some(pick) = self.pick.take()
                        && let Some(found) = pick.plans.into_iter().nth(at)
                    {
                        let core = ctx.dispatcher.core().clone();
                        self.open_found(pick.label, found, &core, ctx);
                    }
                }
                Command::CancelFilter => self.pick = None,
                _ => {}
            }
            return;
        }
        match (self.focus, command) {
            // The prompt starts empty (typing never lands after an old path); Enter on
            // it opens the last file again.
            (_, Command::OpenPlan) => self.prompt = Some(String::new()),
            (_, Command::OpenWorkflow) => {
                self.pick = Some(Pick {
                    label: "workflow".into(),
                    plans: shipped_plans(),
                    list: ListState::default().with_selected(Some(0)),
                });
                ctx.status
                    .info("the shipped workflows, with their example inputs: choose one");
            }
            (_, Command::FocusNext | Command::FocusPrev) => {
                self.focus = match self.focus {
                    Area::Steps => Area::Result,
                    Area::Result => Area::Steps,
                };
            }
            (_, Command::Back) => self.focus = Area::Steps,
            (_, Command::RunPlan) => {
                ctx.status.info("running every remaining step");
                self.start(Job::All, ctx);
            }
            (_, Command::StepPlan) => self.step(ctx),
            (_, Command::ContinuePlan) => {
                let Some(o) = self.opened() else {
                    return;
                };
                // Stopped before a breakpoint: that step may start now; the next
                // breakpoint still stops the run.
                let first = o.run().ready().first().copied();
                let pass: BTreeSet<usize> = first
                    .filter(|i| o.breakpoints().contains(i))
                    .into_iter()
                    .collect();
                ctx.status.info("continuing to the next breakpoint");
                self.start(Job::Continue { pass }, ctx);
            }
            (_, Command::ToggleBreakpoint) => {
                let (Some(i), Some(o)) = (self.selected(), self.opened()) else {
                    return;
                };
                let set = {
                    let mut bps = o.breakpoints();
                    if !bps.remove(&i) {
                        bps.insert(i);
                        true
                    } else {
                        false
                    }
                };
                let label = self.step_label(i);
                if set {
                    let go = ctx
                        .keymap
                        .key_label(Context::Plans, Command::ContinuePlan)
                        .unwrap_or_default();
                    ctx.status
                        .info(format!("breakpoint on step {label}: {go} stops before it"));
                } else {
                    ctx.status
                        .info(format!("breakpoint on step {label} cleared"));
                }
            }
            (_, Command::RetryStep) => self.retry(ctx),
            (_, Command::CancelPlan) => {
                if let Some(d) = &self.driver {
                    d.call.cancel();
                    ctx.status.info("cancelling the run");
                }
            }
            (_, Command::RestartPlan) => {
                self.cancel_driver();
                if let Doc::Plan(o) = &mut self.doc {
                    // A new shared state: a task still finishing writes into the old one.
                    let plan = (*o.run().plan).clone();
                    o.run = Arc::new(Mutex::new(Run::new(plan)));
                }
                self.generation += 1;
                ctx.status
                    .info("new run: every step pending, breakpoints kept");
            }
            (Area::Steps, Command::Up) => self.move_by(-1),
            (Area::Steps, Command::Down) => self.move_by(1),
            (Area::Steps, Command::Top) => self.move_by(isize::MIN),
            (Area::Steps, Command::Bottom) => self.move_by(isize::MAX),
            (Area::Result, command) => match self.view.run(command) {
                Change::None => {}
                Change::Reshaped => self.rebuild_result(),
                Change::LinkOpened(target) => {
                    self.fetched.fetch_if_needed(target, ctx);
                    self.rebuild_result();
                }
            },
            _ => {}
        }
    }

    fn move_by(&mut self, delta: isize) {
        let len = self.step_count();
        if len == 0 {
            return;
        }
        let at = self.list.selected().unwrap_or(0);
        self.list
            .select(Some(at.saturating_add_signed(delta).min(len - 1)));
    }

    /// `s`: the selected step if it is ready, else the first ready one.
    fn step(&mut self, ctx: &mut Ctx<'_>) {
        let Some(o) = self.opened() else {
            return;
        };
        let ready = o.run().ready();
        let chosen = match self.list.selected() {
            Some(i) if ready.contains(&i) => Some(i),
            _ => ready.first().copied(),
        };
        let Some(i) = chosen else {
            ctx.status.info("no step is ready to run");
            return;
        };
        self.list.select(Some(i));
        ctx.status
            .info(format!("running step {}", self.step_label(i)));
        self.start(Job::Steps(vec![i]), ctx);
    }

    /// `R`: a failed step runs again; for a skipped step, the failed step it waits on
    /// (through any steps skipped in between) does, and everything skipped because of
    /// it is pending again.
    fn retry(&mut self, ctx: &mut Ctx<'_>) {
        let (Some(i), Some(o)) = (self.selected(), self.opened()) else {
            return;
        };
        let roots = {
            let mut run = o.run();
            let roots = retry_roots(&run, i);
            for &r in &roots {
                run.reset(r);
            }
            roots
        };
        if roots.is_empty() {
            return;
        }
        let names: Vec<String> = roots.iter().map(|&r| self.step_label(r)).collect();
        if roots == [i] {
            ctx.status
                .info(format!("retrying step {}", names.join(", ")));
        } else {
            ctx.status.info(format!(
                "retrying step {}, which step {} waits on",
                names.join(", "),
                self.step_label(i)
            ));
        }
        self.start(Job::Retry(roots), ctx);
    }

    /// The result's value and what it is (`data`, `error`) for the selected step.
    fn result_value(&self) -> Option<(Value, &'static str)> {
        let o = self.opened()?;
        let i = self.list.selected()?;
        let run = o.run();
        let state = run.steps.get(i)?;
        if let Some(d) = &state.data {
            return Some((d.clone(), "data"));
        }
        state.error.clone().map(|e| (e, "error"))
    }

    /// Rebuilds the result tree from the selected step's result.
    fn rebuild_result(&mut self) {
        let nodes = match self.result_value() {
            Some((value, _)) => {
                let fields = Fields {
                    fetched: &self.fetched,
                    opened: self.view.opened(),
                };
                match &value {
                    Value::Object(map) if !map.is_empty() => map
                        .iter()
                        .map(|(k, v)| {
                            fields.value(format!("k:{k}"), k, v, k == "id", &[], &mut Vec::new())
                        })
                        .collect(),
                    other => vec![fields.value(
                        "k:value".into(),
                        "value",
                        other,
                        false,
                        &[],
                        &mut Vec::new(),
                    )],
                }
            }
            None => Vec::new(),
        };
        self.view.set_nodes(nodes);
    }

    /// Rebuilds the result tree when the selected step or its state changed.
    fn refresh_result(&mut self) {
        let current = self.opened().and_then(|o| {
            let i = self.list.selected()?;
            let run = o.run();
            let s = run.steps.get(i)?;
            Some(Shown {
                generation: self.generation,
                step: i,
                status: s.status,
                attempts: s.attempts,
            })
        });
        if current == self.shown {
            return;
        }
        let same_step = matches!(
            (current, self.shown),
            (Some(a), Some(b)) if a.generation == b.generation && a.step == b.step
        );
        if !same_step {
            self.view = TreeView::default();
        }
        self.shown = current;
        self.rebuild_result();
    }

    /// Keys while the path prompt is open.
    fn prompt_key(&mut self, key: &KeyEvent, ctx: &mut Ctx<'_>) -> EventState {
        let Some(text) = &mut self.prompt else {
            return EventState::NotConsumed;
        };
        match component::path_prompt_key(text, key, ctx, Context::PlanPrompt) {
            PromptKey::Accept(typed) => {
                self.prompt = None;
                // An empty prompt opens the last file again.
                let path = if typed.is_empty() {
                    self.last_path.clone()
                } else {
                    typed
                };
                if path.is_empty() {
                    ctx.status.info("no file given; nothing opened");
                } else {
                    self.last_path = path.clone();
                    self.open_file(&path, ctx);
                }
            }
            PromptKey::Cancel => self.prompt = None,
            PromptKey::Edited => {}
            PromptKey::NotMine => return EventState::NotConsumed,
        }
        EventState::Consumed
    }

    /// The status line's words once a task has ended.
    fn report_end(&mut self, driver: Driver, result: &Result<Value, ToolError>, ctx: &mut Ctx<'_>) {
        if let Err(e) = result {
            ctx.status.tool_error("running the plan", e);
            return;
        }
        if driver.generation != self.generation {
            return;
        }
        let Some(o) = self.opened() else {
            return;
        };
        let (counts, done, lines): (Counts, bool, Vec<String>) = {
            let run = o.run();
            let lines = match &driver.job {
                Job::Steps(steps) | Job::Retry(steps) => steps
                    .iter()
                    .map(|&i| {
                        let s = &run.steps[i];
                        let mut text =
                            format!("step {} {}", run.plan.steps[i].label(), s.status.as_str());
                        if let Some(e) = &s.error {
                            text.push_str(&format!(
                                ": {} {}",
                                e["code"].as_str().unwrap_or(""),
                                e["message"].as_str().unwrap_or("")
                            ));
                        }
                        text
                    })
                    .collect(),
                _ => Vec::new(),
            };
            (run.counts(), run.is_done(), lines)
        };
        let cancelled = driver.call.is_cancelled();
        let stopped_at = result
            .as_ref()
            .ok()
            .and_then(|v| v["stopped_at"].as_u64())
            .map(|i| i as usize);
        match (&driver.job, stopped_at) {
            (_, Some(i)) => {
                self.list.select(Some(i));
                let key = |c| ctx.keymap.key_label(Context::Plans, c).unwrap_or_default();
                let (go, one) = (key(Command::ContinuePlan), key(Command::StepPlan));
                ctx.status.info(format!(
                    "breakpoint: stopped before step {} · {go} continues, {one} runs it",
                    self.step_label(i)
                ));
            }
            (Job::Steps(_) | Job::Retry(_), None) => ctx.status.info(lines.join(" · ")),
            _ if cancelled => ctx
                .status
                .info(format!("run cancelled: {}", summary(counts))),
            _ if done => ctx.status.info(format!("run ended: {}", summary(counts))),
            _ => ctx
                .status
                .info(format!("nothing more can start: {}", summary(counts))),
        }
    }
}

impl Drop for PlansPane {
    fn drop(&mut self) {
        self.cancel_driver();
    }
}

/// The steps to run again so that step `i` can run: `i` itself when what it needs is
/// fine, else, for each need that failed or was skipped, that need's own roots.
fn retry_roots(run: &Run, i: usize) -> Vec<usize> {
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
async fn drive(
    core: Core,
    run: Arc<Mutex<Run>>,
    call: CallContext,
    job: Job,
    breakpoints: Arc<Mutex<BTreeSet<usize>>>,
) -> Result<Value, ToolError> {
    match job {
        Job::All => exec::execute(&core, &run, &call).await,
        Job::Steps(steps) | Job::Retry(steps) => together(&core, &run, &call, steps).await,
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
            together(&core, &run, &call, batch).await;
        },
    }
    Ok(json!({}))
}

/// Runs these steps at once and waits for all of them.
async fn together(core: &Core, run: &Arc<Mutex<Run>>, call: &CallContext, steps: Vec<usize>) {
    let mut tasks = tokio::task::JoinSet::new();
    for i in steps {
        let (core, run, call) = (core.clone(), run.clone(), call.clone());
        tasks.spawn(async move { exec::run_step(&core, &run, i, &call).await });
    }
    while let Some(joined) = tasks.join_next().await {
        if let Err(e) = joined {
            // run_step does not panic (the core turns a tool's panic into an error);
            // should it, the step stays as it was and the log says so.
            tracing::error!("a plan step task failed: {e}");
        }
    }
}

/// `3 succeeded · 1 failed · 1 skipped`.
fn summary(c: Counts) -> String {
    let parts: Vec<String> = [
        (c.succeeded, "succeeded"),
        (c.failed, "failed"),
        (c.optional_failed, "optional failed"),
        (c.skipped, "skipped"),
        (c.running, "running"),
        (c.pending, "pending"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, w)| format!("{n} {w}"))
    .collect();
    if parts.is_empty() {
        "no steps".into()
    } else {
        parts.join(" · ")
    }
}

/// The glyph and role of a step's status.
fn glyph(status: Status) -> (&'static str, Role) {
    match status {
        Status::Pending => ("○", Role::Muted),
        Status::Running => ("◐", Role::Prompt),
        Status::Succeeded => ("✓", Role::Info),
        Status::Failed => ("✗", Role::Error),
        Status::Skipped => ("⊘", Role::Muted),
    }
}

/// `3 ms`, `1.2 s`.
fn millis(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if ms < 1000.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{:.1} s", ms / 1000.0)
    }
}

/// Compact JSON for a cell.
fn compact(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// Every leaf of a params object with its place: scalars, and empty arrays and objects.
fn leaves(v: &Value, at: ParamPath, out: &mut Vec<(ParamPath, Value)>) {
    match v {
        Value::Object(map) if !map.is_empty() => {
            for (k, item) in map {
                let mut p = at.clone();
                p.0.push(ParamSeg::Key(k.clone()));
                leaves(item, p, out);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for (i, item) in items.iter().enumerate() {
                let mut p = at.clone();
                p.0.push(ParamSeg::Index(i));
                leaves(item, p, out);
            }
        }
        other => {
            if !at.0.is_empty() {
                out.push((at, other.clone()));
            }
        }
    }
}

/// A value as written, its references picked out.
fn written_spans(v: &Value) -> Vec<(Role, String)> {
    let Value::String(s) = v else {
        return vec![(Role::Value, compact(v))];
    };
    let Ok(Some(template)) = Template::parse(s) else {
        return vec![(Role::Value, compact(v))];
    };
    let quoted = compact(v);
    let inner = &quoted[1..quoted.len() - 1];
    let mut out = vec![(Role::Value, "\"".to_string())];
    let mut rest = inner;
    for r in template.references() {
        let written = format!("${{{}}}", r.text);
        // The reference as the JSON string shows it (quotes inside it escaped).
        let shown = compact(&Value::String(written));
        let shown = &shown[1..shown.len() - 1];
        if let Some(at) = rest.find(shown) {
            if at > 0 {
                out.push((Role::Value, rest[..at].to_string()));
            }
            out.push((Role::Info, shown.to_string()));
            rest = &rest[at + shown.len()..];
        }
    }
    if !rest.is_empty() {
        out.push((Role::Value, rest.to_string()));
    }
    out.push((Role::Value, "\"".to_string()));
    out
}

/// Where a step's resolved params come from, for the detail.
enum Resolution {
    /// Resolved when it started, or a preview that resolved.
    Resolved {
        params: Value,
        subs: Vec<Substitution>,
        preview: bool,
    },
    /// A reference that finds nothing (now, or when it started).
    Unresolved(Unresolved),
    /// Steps it reads have not ended.
    Waiting(Vec<String>),
    /// It never started (skipped).
    Never,
}

/// One param's row: its place, as written, and its resolved lines.
struct ParamRow {
    name: String,
    written: Vec<(Role, String)>,
    resolved: Vec<Vec<(Role, String)>>,
}

fn step_word(from: Option<usize>, steps: &[Step]) -> String {
    match from {
        Some(n) => format!("step {}", steps.get(n).map_or(n.to_string(), Step::label)),
        None => "the plan's inputs".into(),
    }
}

fn param_rows(step: &Step, steps: &[Step], resolution: &Resolution) -> Vec<ParamRow> {
    let mut out = Vec::new();
    let mut all = Vec::new();
    leaves(&step.params, ParamPath::default(), &mut all);
    for (path, written) in all {
        let name = path.to_string();
        let is_slot = step.slots.iter().any(|s| s.at == path);
        let plain = || vec![vec![(Role::Value, compact(&written))]];
        let resolved = match resolution {
            Resolution::Resolved { params, subs, .. } => {
                let here: Vec<&Substitution> = subs.iter().filter(|s| s.param == path).collect();
                let value = path.get(params).cloned().unwrap_or(Value::Null);
                match here.as_slice() {
                    [] => vec![vec![(Role::Value, compact(&value))]],
                    [one] => vec![vec![
                        (Role::Info, compact(&value)),
                        (
                            Role::Muted,
                            format!("  ← {}", step_word(one.from_step, steps)),
                        ),
                    ]],
                    many => {
                        let mut lines = vec![vec![(Role::Info, compact(&value))]];
                        for s in many {
                            lines.push(vec![
                                (Role::Muted, format!("← ${{{}}} = ", s.reference)),
                                (Role::Info, compact(&s.value)),
                                (Role::Muted, format!(" ({})", step_word(s.from_step, steps))),
                            ]);
                        }
                        lines
                    }
                }
            }
            Resolution::Unresolved(u) if u.param == name => vec![
                vec![(Role::Error, format!("nothing at {}", u.missing.at))],
                vec![(Role::Error, u.missing.reason.clone())],
            ],
            Resolution::Unresolved(_) if is_slot => vec![vec![(Role::Muted, "…".into())]],
            Resolution::Waiting(labels) if is_slot => vec![vec![(
                Role::Muted,
                format!("once step {} has run", labels.join(", ")),
            )]],
            Resolution::Never if is_slot => vec![vec![(Role::Muted, "—".into())]],
            _ => plain(),
        };
        out.push(ParamRow {
            name,
            written: written_spans(&written),
            resolved,
        });
    }
    out
}

/// The width of a text on screen.
fn width(s: &str) -> usize {
    Span::raw(s).width()
}

/// Cuts styled text into lines of at most `max` columns: after the last space that
/// fits, or inside a word with no space to break at (a reference, an address).
fn wrap(spans: &[(Role, String)], max: usize) -> Vec<Vec<(Role, String)>> {
    let max = max.max(1);
    let char_width = |c: char| width(c.encode_utf8(&mut [0; 4]));
    let mut lines: Vec<Vec<(Role, char)>> = vec![Vec::new()];
    let mut used = 0;
    for (role, text) in spans {
        for c in text.chars() {
            let w = char_width(c);
            let line = lines.last_mut().expect("never empty");
            if used + w > max && used > 0 {
                // Move the word being cut to the next line when a space comes before it.
                let carry = match line.iter().rposition(|(_, ch)| *ch == ' ') {
                    Some(at) if at > 0 => {
                        let carry = line.split_off(at + 1);
                        line.pop();
                        carry
                    }
                    _ => Vec::new(),
                };
                used = carry.iter().map(|(_, ch)| char_width(*ch)).sum();
                lines.push(carry);
                if c == ' ' && used == 0 {
                    continue;
                }
            }
            lines.last_mut().expect("never empty").push((*role, c));
            used += w;
        }
    }
    lines
        .into_iter()
        .map(|line| {
            let mut spans: Vec<(Role, String)> = Vec::new();
            for (role, c) in line {
                match spans.last_mut() {
                    Some((r, text)) if *r == role => text.push(c),
                    _ => spans.push((role, c.to_string())),
                }
            }
            spans
        })
        .collect()
}

fn line_of(spans: Vec<(Role, String)>, ui: &Ui<'_>) -> Line<'static> {
    Line::from(
        spans
            .into_iter()
            .map(|(role, text)| Span::styled(text, ui.theme.style(role)))
            .collect::<Vec<_>>(),
    )
}

fn spans_width(spans: &[(Role, String)]) -> usize {
    spans.iter().map(|(_, t)| width(t)).sum()
}

/// The params as lines: in columns (name, as written, resolved) when there is room,
/// else each param's written value with its resolved value under it.
fn param_lines(rows: &[ParamRow], heading: &str, inner: u16, ui: &Ui<'_>) -> Vec<Line<'static>> {
    let inner = usize::from(inner);
    let mut out = Vec::new();
    if rows.is_empty() {
        out.push(line_of(vec![(Role::Muted, "no params".into())], ui));
        return out;
    }
    if inner >= usize::from(PARAM_COLUMNS) {
        let name_w = rows
            .iter()
            .map(|r| width(&r.name))
            .max()
            .unwrap_or(0)
            .clamp(5, inner / 4);
        let col = (inner - name_w - 4) / 2;
        let pad = |s: &mut Vec<(Role, String)>, to: usize| {
            let w = spans_width(s);
            if w < to {
                s.push((Role::Text, " ".repeat(to - w)));
            }
        };
        let mut head = vec![(Role::Muted, "param".to_string())];
        pad(&mut head, name_w + 2);
        head.push((Role::Muted, "as written".into()));
        pad(&mut head, name_w + 2 + col + 2);
        head.push((Role::Muted, heading.to_string()));
        out.push(line_of(head, ui));
        for row in rows {
            let written = wrap(&row.written, col);
            let resolved: Vec<Vec<(Role, String)>> =
                row.resolved.iter().flat_map(|l| wrap(l, col)).collect();
            let name: String = if width(&row.name) > name_w {
                row.name
                    .chars()
                    .take(name_w.saturating_sub(1))
                    .collect::<String>()
                    + "…"
            } else {
                row.name.clone()
            };
            for k in 0..written.len().max(resolved.len()) {
                let mut line = Vec::new();
                if k == 0 {
                    line.push((Role::Field, name.clone()));
                }
                pad(&mut line, name_w + 2);
                if let Some(w) = written.get(k) {
                    line.extend(w.iter().cloned());
                }
                pad(&mut line, name_w + 2 + col + 2);
                if let Some(r) = resolved.get(k) {
                    line.extend(r.iter().cloned());
                }
                out.push(line_of(line, ui));
            }
        }
    } else {
        out.push(line_of(
            vec![(Role::Muted, format!("param: as written → {heading}"))],
            ui,
        ));
        for row in rows {
            let mut first = vec![(Role::Field, row.name.clone()), (Role::Muted, ": ".into())];
            first.extend(row.written.iter().cloned());
            for l in wrap(&first, inner) {
                out.push(line_of(l, ui));
            }
            for (k, r) in row.resolved.iter().enumerate() {
                let mut l = vec![(
                    Role::Muted,
                    if k == 0 { "  → " } else { "    " }.to_string(),
                )];
                l.extend(r.iter().cloned());
                for l in wrap(&l, inner) {
                    out.push(line_of(l, ui));
                }
            }
        }
    }
    out
}

impl Pane for PlansPane {
    fn handle_key(&mut self, key: &KeyEvent, ctx: &mut Ctx<'_>) -> EventState {
        if self.prompt.is_some() {
            return self.prompt_key(key, ctx);
        }
        // The run moves on its own: the result tree follows it before a key acts on it.
        self.refresh_result();
        let (context, offered) = (self.context(), self.commands());
        dispatch(key, ctx, context, &offered, |c, ctx| {
            self.run_command(c, ctx)
        })
    }

    fn on_reply(&mut self, reply: &Reply, ctx: &mut Ctx<'_>) -> bool {
        if self.driver.as_ref().is_some_and(|d| d.request == reply.id) {
            if let Some(driver) = self.driver.take() {
                self.report_end(driver, &reply.result, ctx);
            }
            return true;
        }
        if self.fetched.on_reply(reply, ctx) {
            self.rebuild_result();
            return true;
        }
        false
    }

    fn context(&self) -> Context {
        if self.prompt.is_some() {
            return Context::PlanPrompt;
        }
        if self.pick.is_some() {
            return Context::PlanPick;
        }
        match (self.focus, &self.doc) {
            (Area::Result, Doc::Plan(_)) => Context::PlanResult,
            _ => Context::Plans,
        }
    }

    fn captures_text(&self) -> bool {
        self.prompt.is_some()
    }

    fn commands(&self) -> Vec<Command> {
        if let Some(p) = &self.prompt {
            let mut out = vec![Command::AcceptFilter, Command::CancelFilter];
            if !p.is_empty() {
                out.extend([Command::EraseChar, Command::ClearText]);
            }
            return out;
        }
        if let Some(pick) = &self.pick {
            let mut out = Vec::new();
            if pick.plans.len() > 1 {
                out.extend([Command::Up, Command::Down, Command::Top, Command::Bottom]);
            }
            out.extend([Command::ChooseAction, Command::CancelFilter]);
            return out;
        }
        let mut out = Vec::new();
        let Some(o) = self.opened() else {
            out.extend([Command::OpenPlan, Command::OpenWorkflow]);
            return out;
        };
        // In the result, its tree's keys come first; in the steps, the run's.
        if self.focus == Area::Result {
            self.view.commands(&mut out);
            out.push(Command::Back);
        }
        {
            let run = o.run();
            if self.driver.is_some() {
                out.push(Command::CancelPlan);
            } else {
                if !run.ready().is_empty() {
                    out.extend([Command::RunPlan, Command::StepPlan, Command::ContinuePlan]);
                }
                if let Some(i) = self.list.selected()
                    && run
                        .steps
                        .get(i)
                        .is_some_and(|s| matches!(s.status, Status::Failed | Status::Skipped))
                {
                    out.push(Command::RetryStep);
                }
            }
            if self.list.selected().is_some() {
                out.push(Command::ToggleBreakpoint);
            }
            out.extend([Command::OpenPlan, Command::OpenWorkflow]);
            if self.driver.is_none() && run.steps.iter().any(|s| s.status != Status::Pending) {
                out.push(Command::RestartPlan);
            }
        }
        if self.focus == Area::Steps && self.step_count() > 1 {
            out.extend([Command::Up, Command::Down, Command::Top, Command::Bottom]);
        }
        out.extend([Command::FocusNext, Command::FocusPrev]);
        out
    }

    fn render(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        self.refresh_result();
        let (main, prompt) = if self.prompt.is_some() && area.height > 0 {
            let [main, prompt] =
                Layout::vertical([Constraint::Min(0), Constraint::Length(1)]).areas(area);
            (main, Some(prompt))
        } else {
            (area, None)
        };
        if let Some(pick) = &mut self.pick {
            render_pick(pick, main, buf, ui);
        } else {
            match &self.doc {
                Doc::Problems { label, problems } => {
                    render_problems(label, problems, main, buf, ui)
                }
                Doc::Plan(_) => self.render_plan(main, buf, ui),
            }
        }
        if let Some(prompt) = prompt {
            self.render_prompt(prompt, buf, ui);
        }
    }
}

impl PlansPane {
    fn render_plan(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        if area.is_empty() {
            return;
        }
        let steps = self.step_count() as u16;
        let (list, detail) = if area.width >= SIDE_BY_SIDE {
            let w = self.list_width().clamp(30, area.width / 2);
            let [l, d] =
                Layout::horizontal([Constraint::Length(w), Constraint::Min(0)]).areas(area);
            (l, d)
        } else if area.height >= 16 {
            let h = (steps + 2).clamp(4, area.height * 2 / 5);
            let [l, d] = Layout::vertical([Constraint::Length(h), Constraint::Min(0)]).areas(area);
            (l, d)
        } else if self.focus == Area::Steps {
            (area, Rect::default())
        } else {
            (Rect::default(), area)
        };
        self.render_steps(list, buf, ui);
        self.render_detail(detail, buf, ui);
    }

    /// The steps' names, indented by level, and their tools without `structs_`.
    fn step_columns(o: &Opened, run: &Run) -> (Vec<String>, Vec<String>) {
        let names = run
            .plan
            .steps
            .iter()
            .map(|s| {
                let indent = "  ".repeat(o.levels[s.index].min(MAX_INDENT));
                match &s.id {
                    Some(id) => format!("{indent}{} {id}", s.index),
                    None => format!("{indent}{}", s.index),
                }
            })
            .collect();
        let tools = run
            .plan
            .steps
            .iter()
            .map(|s| s.tool.trim_start_matches("structs_").to_string())
            .collect();
        (names, tools)
    }

    /// The width the steps list wants: its widest row, borders and selection mark.
    fn list_width(&self) -> u16 {
        let Some(o) = self.opened() else {
            return 0;
        };
        let run = o.run();
        let (names, tools) = Self::step_columns(o, &run);
        let name_w = names.iter().map(|n| width(n)).max().unwrap_or(0);
        let tool_w = tools.iter().map(|t| width(t)).max().unwrap_or(0);
        let tail = run
            .plan
            .steps
            .iter()
            .map(|s| {
                let needs: Vec<String> = s.needs().iter().map(usize::to_string).collect();
                let mut w = 0;
                if !needs.is_empty() {
                    w += 4 + width(&needs.join(", "));
                }
                if s.optional {
                    w += 10;
                }
                if !self.pinned_timing {
                    // Room for a duration once it ran.
                    w += 8;
                }
                w
            })
            .max()
            .unwrap_or(0);
        // Borders, the selection mark, the breakpoint and status columns, and a space
        // before the right border.
        let total = 2 + 2 + 2 + 2 + name_w + 2 + tool_w + tail + 1;
        u16::try_from(total).unwrap_or(u16::MAX)
    }

    fn render_steps(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        if area.is_empty() {
            return;
        }
        let Doc::Plan(o) = &self.doc else {
            return;
        };
        let theme = ui.theme;
        let run = o.run();
        let bps = o.breakpoints().clone();
        let steps = &run.plan.steps;
        let (names, tools) = Self::step_columns(o, &run);
        let name_w = names.iter().map(|n| width(n)).max().unwrap_or(0);
        // What each row needs after the tool: its dependencies and the optional mark.
        let tail_w = steps
            .iter()
            .map(|s| {
                let needs: Vec<String> = s.needs().iter().map(usize::to_string).collect();
                let deps = if needs.is_empty() {
                    0
                } else {
                    4 + width(&needs.join(", "))
                };
                deps + if s.optional { 10 } else { 0 }
            })
            .max()
            .unwrap_or(0);
        // When the pane is narrow the tool names give way, not what a step waits for.
        let room = usize::from(area.width).saturating_sub(2 + 2 + 2 + 2 + name_w + 2 + tail_w);
        let tool_w = tools
            .iter()
            .map(|t| width(t))
            .max()
            .unwrap_or(0)
            .min(room.max(8));
        let tools: Vec<String> = tools.iter().map(|t| fit(t, tool_w)).collect();
        let items: Vec<ListItem> = steps
            .iter()
            .map(|s| {
                let state = &run.steps[s.index];
                let (g, role) = glyph(state.status);
                let mut spans = vec![
                    if bps.contains(&s.index) {
                        Span::styled("● ", theme.style(Role::Error))
                    } else {
                        Span::raw("  ")
                    },
                    Span::styled(format!("{g} "), theme.style(role)),
                    Span::styled(
                        format!("{:<name_w$}  ", names[s.index]),
                        theme.style(Role::Text),
                    ),
                    Span::styled(
                        format!("{:<tool_w$}", tools[s.index]),
                        theme.style(Role::Muted),
                    ),
                ];
                let needs: Vec<String> = s.needs().iter().map(usize::to_string).collect();
                if !needs.is_empty() {
                    spans.push(Span::styled(
                        format!("  ← {}", needs.join(", ")),
                        theme.style(Role::Field),
                    ));
                }
                if s.optional {
                    spans.push(Span::styled("  optional", theme.style(Role::Muted)));
                }
                if let Some(d) = state.duration.filter(|_| !self.pinned_timing) {
                    spans.push(Span::styled(
                        format!("  {}", millis(d)),
                        theme.style(Role::Muted),
                    ));
                }
                ListItem::new(Line::from(spans))
            })
            .collect();
        let c = run.counts();
        let mut counts = Vec::new();
        for (n, g, role) in [
            (c.succeeded, "✓", Role::Info),
            (c.failed + c.optional_failed, "✗", Role::Error),
            (c.skipped, "⊘", Role::Muted),
            (c.running, "◐", Role::Prompt),
            (c.pending, "○", Role::Muted),
        ] {
            if n > 0 {
                counts.push(Span::styled(format!(" {g}{n}"), theme.style(role)));
            }
        }
        counts.push(Span::raw(" "));
        let n = steps.len();
        drop(run);
        let focused = self.focus == Area::Steps && self.pick.is_none();
        let title = format!(
            " Plan · {} · {n} step{} ",
            o.label,
            if n == 1 { "" } else { "s" }
        );
        let block =
            area_block(ui, &title, focused).title_bottom(Line::from(counts).right_aligned());
        let highlight = if focused {
            Role::Selected
        } else {
            Role::SelectedInactive
        };
        StatefulWidget::render(
            List::new(items)
                .block(block)
                .highlight_symbol(SELECTED_MARK)
                .highlight_spacing(ratatui::widgets::HighlightSpacing::Always)
                .highlight_style(theme.style(highlight)),
            area,
            buf,
            &mut self.list,
        );
    }

    fn render_detail(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        if area.is_empty() {
            return;
        }
        let theme = ui.theme;
        let (Some(o), Some(i)) = (self.opened(), self.list.selected()) else {
            return;
        };
        let field = |name: &str, spans: Vec<(Role, String)>| {
            let mut all = vec![(Role::Field, format!("{name:<11}"))];
            all.extend(spans);
            all
        };
        let run = o.run();
        let Some(step) = run.plan.steps.get(i).cloned() else {
            return;
        };
        let state = without_data(&run.steps[i]);
        let steps = &run.plan.steps;
        let mut info: Vec<Vec<(Role, String)>> = Vec::new();

        // An unresolved reference's error is shown where it happened, in the params.
        let unresolved_failure = state
            .error
            .as_ref()
            .is_some_and(|e| e["code"] == ErrorCode::ValidationUnresolvedReference.as_str());

        // Status, attempts, time.
        let (g, role) = glyph(state.status);
        let mut status = vec![(role, format!("{g} {}", state.status.as_str()))];
        if unresolved_failure {
            status.push((Role::Error, " · a reference found nothing".into()));
        }
        if state.status == Status::Failed && step.optional {
            status.push((Role::Muted, " (optional: what needs it still runs)".into()));
        }
        if state.attempts > 0 {
            status.push((
                Role::Text,
                format!(
                    " · {} attempt{}",
                    state.attempts,
                    if state.attempts == 1 { "" } else { "s" }
                ),
            ));
        }
        if let Some(d) = state.duration.filter(|_| !self.pinned_timing) {
            status.push((Role::Text, format!(" · {}", millis(d))));
        }
        let ready = run.ready().contains(&i);
        if state.status == Status::Pending {
            status.push((
                Role::Muted,
                if ready { " · ready" } else { " · waiting" }.into(),
            ));
        }
        if o.breakpoints().contains(&i) {
            status.push((Role::Error, " · ● breakpoint".into()));
        }
        info.push(field("status", status));

        let needs: Vec<String> = step.needs().iter().map(|&n| steps[n].label()).collect();
        let mut waits = vec![(
            Role::Text,
            if needs.is_empty() {
                "nothing".to_string()
            } else {
                needs.join(", ")
            },
        )];
        waits.push((Role::Muted, format!(" · level {}", o.levels[i])));
        if !step.parallel {
            waits.push((Role::Muted, " · runs alone".into()));
        }
        info.push(field("waits for", waits));
        if let Some(about) = &step.description {
            info.push(field("about", vec![(Role::Text, about.clone())]));
        }
        let mut flags = Vec::new();
        if step.optional {
            flags.push("optional".to_string());
        }
        if step.retry_count > 0 {
            flags.push(format!("{} retries", step.retry_count));
        }
        if step.timeout_ms != plan::DEFAULT_TIMEOUT_MS {
            flags.push(format!(
                "timeout {}",
                millis(Duration::from_millis(step.timeout_ms))
            ));
        }
        if !flags.is_empty() {
            info.push(field("settings", vec![(Role::Muted, flags.join(" · "))]));
        }
        if let Some(why) = &state.skipped_reason {
            info.push(field("skipped", vec![(Role::Text, why.clone())]));
        }
        if let Some(e) = state.error.as_ref().filter(|_| !unresolved_failure) {
            info.push(field(
                "error",
                vec![(
                    Role::Error,
                    format!(
                        "{}: {}",
                        e["code"].as_str().unwrap_or("ERROR"),
                        e["message"].as_str().unwrap_or("")
                    ),
                )],
            ));
        }
        for e in &state.attempt_errors {
            info.push(field(
                &format!("attempt {}", e["attempt"]),
                vec![(
                    Role::Muted,
                    format!(
                        "{}: {} (tried again after {} ms)",
                        e["code"].as_str().unwrap_or(""),
                        e["message"].as_str().unwrap_or(""),
                        e["retry_in_ms"]
                    ),
                )],
            ));
        }
        if let (Status::Running, Some(p)) = (state.status, &state.progress) {
            info.push(field("progress", vec![(Role::Text, p.message.clone())]));
        }

        // Where the resolved params stand.
        let reads_ended = step.reads.iter().all(|&r| run.steps[r].status.is_done());
        let resolution = match (&state.resolved, state.status) {
            (Some(params), _) => Resolution::Resolved {
                params: params.clone(),
                subs: state.substitutions.clone(),
                preview: false,
            },
            (None, Status::Skipped) => Resolution::Never,
            (None, _) if !reads_ended => Resolution::Waiting(
                step.reads
                    .iter()
                    .filter(|&&r| !run.steps[r].status.is_done())
                    .map(|&r| steps[r].label())
                    .collect(),
            ),
            (None, _) => match run.resolve(i) {
                Ok((params, subs)) => Resolution::Resolved {
                    params,
                    subs,
                    preview: true,
                },
                Err(u) => Resolution::Unresolved(u),
            },
        };
        let rows = param_rows(&step, steps, &resolution);
        drop(run);
        let heading = match &resolution {
            Resolution::Resolved { preview: true, .. } => "resolved (preview)",
            Resolution::Resolved { .. } => "resolved",
            _ => "resolved",
        };

        let title = format!(" Step {} · {} ", step.label(), step.tool);
        let block = area_block(ui, &title, false);
        let inner_w = block.inner(area).width;
        let mut lines: Vec<Line<'static>> = Vec::new();
        for l in info {
            for w in wrap(&l, usize::from(inner_w)) {
                lines.push(line_of(w, ui));
            }
        }
        lines.push(Line::default());
        lines.extend(param_lines(&rows, heading, inner_w, ui));

        // The detail takes what its lines need, leaving the result at least 6 rows;
        // on a short area only the focused part shows.
        let wanted = u16::try_from(lines.len() + 2).unwrap_or(u16::MAX);
        let (top, bottom) = if area.height >= 14 {
            let h = wanted.min(area.height - 6).max(area.height.min(6));
            let [t, b] = Layout::vertical([Constraint::Length(h), Constraint::Min(0)]).areas(area);
            (t, b)
        } else if self.focus == Area::Result {
            (Rect::default(), area)
        } else {
            (area, Rect::default())
        };
        if !top.is_empty() {
            Paragraph::new(lines).block(block).render(top, buf);
        }
        if bottom.is_empty() {
            return;
        }
        let focused = self.focus == Area::Result && self.pick.is_none();
        let what = self.result_value().map(|(_, what)| what);
        let block = area_block(
            ui,
            &match what {
                Some(w) => format!(" Result · {w} "),
                None => " Result ".to_string(),
            },
            focused,
        );
        if what.is_none() {
            let text = match state.status {
                Status::Pending => "not run yet",
                Status::Running => "running…",
                Status::Skipped => "skipped: no result",
                _ => "no result",
            };
            Paragraph::new(Span::styled(text, theme.style(Role::Muted)))
                .block(block)
                .render(bottom, buf);
            return;
        }
        self.view.render(bottom, buf, ui, block, focused);
    }

    fn render_prompt(&self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let text = self.prompt.clone().unwrap_or_default();
        let accept = ui
            .keymap
            .key_label(Context::PlanPrompt, Command::AcceptFilter)
            .unwrap_or_default();
        let note = if text.is_empty() && !self.last_path.is_empty() {
            format!("   {accept} opens {} again", self.last_path)
        } else {
            format!(
                "   {accept} opens: a plan, a recorded structs_plan_execute call, or JSON Lines"
            )
        };
        Line::from(vec![
            Span::styled(" open › ", theme.style(Role::Prompt)),
            Span::styled(text, theme.style(Role::Text)),
            Span::styled("█", theme.style(Role::Prompt)),
            Span::styled(note, theme.style(Role::Muted)),
        ])
        .render(area, buf);
    }
}

fn render_pick(pick: &mut Pick, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
    let theme = ui.theme;
    let title = format!(
        " {} · {} plan calls · choose one ",
        pick.label,
        pick.plans.len()
    );
    let items: Vec<ListItem> = pick
        .plans
        .iter()
        .map(|p| ListItem::new(Span::styled(p.label.clone(), theme.style(Role::Text))))
        .collect();
    StatefulWidget::render(
        List::new(items)
            .block(area_block(ui, &title, true))
            .highlight_symbol(SELECTED_MARK)
            .highlight_spacing(ratatui::widgets::HighlightSpacing::Always)
            .highlight_style(theme.style(Role::Selected)),
        area,
        buf,
        &mut pick.list,
    );
}

fn render_problems(label: &str, problems: &[Problem], area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
    let theme = ui.theme;
    let n = problems.len();
    let title = format!(
        " Plan · {label} · {n} problem{} ",
        if n == 1 { "" } else { "s" }
    );
    let open = ui
        .keymap
        .key_label(Context::Plans, Command::OpenPlan)
        .unwrap_or_default();
    let block = area_block(ui, &title, true);
    let inner = block.inner(area).width;
    let mut lines = vec![
        Line::from(Span::styled(
            format!("This plan cannot run. Fix it and open it again with {open}."),
            theme.style(Role::Text),
        )),
        Line::default(),
    ];
    for p in problems {
        let mut head = vec![Span::styled("✗ ", theme.style(Role::Error))];
        match p.step {
            Some(s) => {
                let mut w = format!("step {s}");
                if let Some(id) = &p.step_id {
                    w.push_str(&format!(" ({id})"));
                }
                head.push(Span::styled(w, theme.style(Role::Title)));
                if let Some(param) = &p.param {
                    head.push(Span::styled(" · ", theme.style(Role::Muted)));
                    head.push(Span::styled(param.clone(), theme.style(Role::Field)));
                }
            }
            None => head.push(Span::styled("plan", theme.style(Role::Title))),
        }
        head.push(Span::styled(
            format!("  {}", p.kind),
            theme.style(Role::Muted),
        ));
        lines.push(Line::from(head));
        // Continuation lines keep the indent, so each problem reads as one block.
        let indented = |role: Role, text: String, lines: &mut Vec<Line<'static>>| {
            for l in wrap(&[(role, text)], usize::from(inner.saturating_sub(2))) {
                let mut spans = vec![(Role::Text, "  ".to_string())];
                spans.extend(l);
                lines.push(line_of(spans, ui));
            }
        };
        indented(Role::Error, p.message.clone(), &mut lines);
        if let Some(available) = &p.available {
            let list = if available.is_empty() {
                "none".to_string()
            } else {
                available.join(", ")
            };
            indented(Role::Muted, format!("available: {list}"), &mut lines);
        }
    }
    Paragraph::new(lines).block(block).render(area, buf);
}

/// A step's state without its result's data, for drawing the detail each frame.
fn without_data(s: &exec::StepState) -> exec::StepState {
    exec::StepState {
        status: s.status,
        resolved: s.resolved.clone(),
        substitutions: s.substitutions.clone(),
        data: None,
        error: s.error.clone(),
        view: None,
        full: None,
        attempts: s.attempts,
        attempt_errors: s.attempt_errors.clone(),
        skipped_reason: s.skipped_reason.clone(),
        started: s.started,
        duration: s.duration,
        progress: s.progress.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_file_is_a_plan_a_recorded_call_or_a_request() {
        let plan = json!({"steps": [{"tool": "structs_query_block_height"}]});
        let as_text = plan.to_string();
        let found = plans_in(&as_text).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].plan, plan);
        for wrapped in [
            json!({"name": "structs_plan_execute", "arguments": plan}),
            json!({"tool": "structs_plan_execute", "arguments": plan}),
            json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                   "params": {"name": "structs_plan_execute", "arguments": plan}}),
        ] {
            let found = plans_in(&wrapped.to_string()).unwrap();
            assert_eq!(found[0].plan, plan, "{wrapped}");
        }
    }

    #[test]
    fn json_lines_list_every_plan_call() {
        let plan = json!({"steps": [{"tool": "structs_query_block_height"}]});
        let text = [
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}).to_string(),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                   "params": {"name": "structs_query_player", "arguments": {"player_id": "1-1"}}})
            .to_string(),
            String::new(),
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                   "params": {"name": "structs_plan_execute", "arguments": plan}})
            .to_string(),
            json!({"name": "structs_plan_validate", "arguments": plan}).to_string(),
        ]
        .join("\n");
        let found = plans_in(&text).unwrap();
        let labels: Vec<&str> = found.iter().map(|f| f.label.as_str()).collect();
        assert_eq!(labels, ["line 4 · 1 step", "line 5 · 1 step"]);
    }

    #[test]
    fn files_without_plans_say_what_they_hold() {
        let e = plans_in("{\"steps\": [").unwrap_err();
        assert!(e.starts_with("the file is not JSON"), "{e}");
        let e = plans_in(&json!({"name": "structs_query_player", "arguments": {}}).to_string())
            .unwrap_err();
        assert!(e.contains("structs_query_player"), "{e}");
        let e = plans_in("[1, 2]").unwrap_err();
        assert!(e.contains("2 items"), "{e}");
        let e = plans_in("{\"a\": 1}\n{\"name\": \"structs_list_players\"}\nnot json").unwrap_err();
        assert!(e.contains("in 3 lines"), "{e}");
        assert!(e.contains("structs_list_players"), "{e}");
        assert!(e.contains("line 3 is not JSON"), "{e}");
        let e = plans_in("").unwrap_err();
        assert!(e.contains("not JSON"), "{e}");
    }

    #[test]
    fn written_values_pick_out_their_references() {
        let spans = written_spans(&json!("player ${steps.p.data.id} of ${input.g}"));
        let refs: Vec<&str> = spans
            .iter()
            .filter(|(r, _)| *r == Role::Info)
            .map(|(_, t)| t.as_str())
            .collect();
        assert_eq!(refs, ["${steps.p.data.id}", "${input.g}"]);
        let text: String = spans.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(text, "\"player ${steps.p.data.id} of ${input.g}\"");
        assert_eq!(
            written_spans(&json!(5)),
            vec![(Role::Value, "5".to_string())]
        );
    }

    #[test]
    fn wrapping_keeps_styles_and_widths() {
        let lines = wrap(
            &[(Role::Value, "abcdef".into()), (Role::Info, "ghij".into())],
            4,
        );
        let text: Vec<String> = lines
            .iter()
            .map(|l| l.iter().map(|(_, t)| t.as_str()).collect())
            .collect();
        assert_eq!(text, ["abcd", "efgh", "ij"]);
        assert_eq!(lines[1][1], (Role::Info, "gh".to_string()));
        let lines = wrap(&[(Role::Text, "has no field \"planet\"; its".into())], 16);
        let text: Vec<String> = lines
            .iter()
            .map(|l| l.iter().map(|(_, t)| t.as_str()).collect())
            .collect();
        assert_eq!(text, ["has no field", "\"planet\"; its"]);
    }

    #[test]
    fn params_flatten_to_their_places() {
        let mut out = Vec::new();
        leaves(
            &json!({"a": 1, "f": {"owner": "x"}, "ids": ["p", "q"], "e": {}}),
            ParamPath::default(),
            &mut out,
        );
        let names: Vec<String> = out.iter().map(|(p, _)| p.to_string()).collect();
        assert_eq!(names, ["a", "f.owner", "ids[0]", "ids[1]", "e"]);
    }
}
