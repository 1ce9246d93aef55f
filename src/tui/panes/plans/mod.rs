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

mod params;
mod render;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{List, ListItem, ListState, Paragraph, StatefulWidget, Widget};
use serde_json::Value;

use crate::context::CallContext;
use crate::error::{ErrorCode, ToolError};
use crate::plan::Dispatch;
use crate::plan::driver::{Job, drive, retry_roots};
use crate::plan::exec::{self, Counts, Run, Status};
use crate::plan::file::{EXAMPLE, EXAMPLE_LABEL, FoundPlan, file_problem, plans_in, shipped_plans};
use crate::plan::template::Template;
use crate::plan::{self, ParamPath, ParamSeg, Problem, Step, Substitution, Unresolved};
use crate::tui::dispatch::{Reply, RequestId};
use crate::tui::keymap::{Command, Scope};
use crate::tui::pane::{Ctx, EventState, Pane, Ui};
use crate::tui::theme::Role;
use crate::tui::widgets::area_block;
use crate::tui::widgets::cursor::{ROWS, moved};
use crate::tui::widgets::fields::{Fetched, Fields};
use crate::tui::widgets::prompt;
use crate::tui::widgets::prompt::PromptKey;
use crate::tui::widgets::tasks::TaskBoard;
use crate::tui::widgets::text::{SELECTED_MARK, fit};
use crate::tui::widgets::tree::TreeView;
use params::*;
use render::*;

/// The largest file the pane reads.
const MAX_FILE_BYTES: u64 = 8 << 20;

/// Below this width the steps sit above the detail instead of beside it.
const SIDE_BY_SIDE: u16 = 70;

/// Below this inner width the params are listed under each other, not in columns.
const PARAM_COLUMNS: u16 = 56;

/// The deepest level drawn as indentation.
const MAX_INDENT: usize = 6;

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
    /// The plan and workflow tasks MCP servers run.
    Tasks,
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
    /// The plan and workflow runs MCP servers run as tasks.
    tasks: TaskBoard,
}

impl PlansPane {
    /// The pane with the built-in example plan open.
    pub fn new(tools: &dyn Dispatch) -> PlansPane {
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
            tasks: TaskBoard::new(&["structs_plan_execute", "structs_workflow_execute"]),
        };
        match serde_json::from_str::<Value>(EXAMPLE) {
            Ok(plan) => pane.open_plan(EXAMPLE_LABEL.into(), plan, tools),
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
    pub fn open_plan(&mut self, label: String, plan: Value, tools: &dyn Dispatch) {
        self.cancel_driver();
        self.pick = None;
        self.generation += 1;
        self.focus = Area::Steps;
        self.view = TreeView::default();
        self.shown = None;
        match plan::validate(tools, &plan) {
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
        let tools = ctx.dispatcher.tools();
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
                self.open_found(label, one, &*tools, ctx);
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

    fn open_found(
        &mut self,
        label: String,
        found: FoundPlan,
        tools: &dyn Dispatch,
        ctx: &mut Ctx<'_>,
    ) {
        let name = if found.label.starts_with("the file") {
            label
        } else if found.label.starts_with(EXAMPLE_LABEL) {
            EXAMPLE_LABEL.to_string()
        } else {
            format!("{label} {}", found.label.split(" · ").next().unwrap_or(""))
        };
        self.open_plan(name.clone(), found.plan, tools);
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
        let tools = ctx.dispatcher.tools();
        let task = drive(
            tools,
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

    /// Asks for the tasks again when it is time (the tab is on show).
    pub fn refresh_tasks(&mut self, ctx: &mut Ctx<'_>, now: std::time::Instant) {
        self.tasks.refresh(ctx, now);
    }

    /// The area with the focus: the tasks only while there are some.
    fn area(&self) -> Area {
        match self.focus {
            Area::Tasks if self.tasks.is_empty() => Area::Steps,
            focus => focus,
        }
    }

    /// A command while the list of plans to open is on show.
    fn pick_command(&mut self, command: Command, ctx: &mut Ctx<'_>) {
        let Some(pick) = &mut self.pick else {
            return;
        };
        let len = pick.plans.len();
        match command {
            command if ROWS.contains(&command) => {
                let at = pick.list.selected().unwrap_or(0);
                if let Some(row) = moved(command, at, len, 1) {
                    pick.list.select(Some(row));
                }
            }
            Command::OpenPlanCall => {
                let at = pick.list.selected().unwrap_or(0).min(len.saturating_sub(1));
                if let Some(pick) = self.pick.take()
                    && let Some(found) = pick.plans.into_iter().nth(at)
                {
                    let tools = ctx.dispatcher.tools();
                    self.open_found(pick.label, found, &*tools, ctx);
                }
            }
            Command::Close => self.pick = None,
            _ => {}
        }
    }

    /// A command in the list of the plan runs that are tasks.
    fn tasks_command(&mut self, command: Command, ctx: &mut Ctx<'_>) {
        match command {
            Command::CancelTask => self.tasks.cancel_selected(ctx),
            Command::FocusNext | Command::Back => self.focus = Area::Steps,
            Command::FocusPrev => self.focus = Area::Result,
            command => {
                self.tasks.move_by(command);
            }
        }
    }

    /// `w`: the shipped workflows, to choose one with its example inputs.
    fn open_workflows(&mut self, ctx: &mut Ctx<'_>) {
        self.pick = Some(Pick {
            label: "workflow".into(),
            plans: shipped_plans(),
            list: ListState::default().with_selected(Some(0)),
        });
        ctx.status
            .info("the shipped workflows, with their example inputs: choose one");
    }

    /// Runs on to the next breakpoint. Stopped before a breakpoint, that step may
    /// start now; the next breakpoint still stops the run.
    fn continue_plan(&mut self, ctx: &mut Ctx<'_>) {
        let Some(o) = self.opened() else {
            return;
        };
        let first = o.run().ready().first().copied();
        let pass: BTreeSet<usize> = first
            .filter(|i| o.breakpoints().contains(i))
            .into_iter()
            .collect();
        ctx.status.info("continuing to the next breakpoint");
        self.start(Job::Continue { pass }, ctx);
    }

    /// Sets or clears a breakpoint on the selected step, and says which.
    fn toggle_breakpoint(&mut self, ctx: &mut Ctx<'_>) {
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
                .key_label(Scope::Plans, Command::ContinuePlan)
                .unwrap_or_default();
            ctx.status
                .info(format!("breakpoint on step {label}: {go} stops before it"));
        } else {
            ctx.status
                .info(format!("breakpoint on step {label} cleared"));
        }
    }

    /// A new run of the plan: every step pending, breakpoints kept.
    fn restart(&mut self, ctx: &mut Ctx<'_>) {
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
        match prompt::path_prompt_key(text, key, ctx, Scope::PlanPrompt) {
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
                let key = |c| ctx.keymap.key_label(Scope::Plans, c).unwrap_or_default();
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

impl Pane for PlansPane {
    fn run(&mut self, command: Command, ctx: &mut Ctx<'_>) {
        if self.pick.is_some() {
            return self.pick_command(command, ctx);
        }
        if self.area() == Area::Tasks {
            return self.tasks_command(command, ctx);
        }
        match (self.area(), command) {
            // The prompt starts empty (typing never lands after an old path); Enter on
            // it opens the last file again.
            (_, Command::OpenPlan) => self.prompt = Some(String::new()),
            (_, Command::OpenWorkflow) => self.open_workflows(ctx),
            (focus, Command::FocusNext) => {
                self.focus = match focus {
                    Area::Steps => Area::Result,
                    _ if !self.tasks.is_empty() => Area::Tasks,
                    _ => Area::Steps,
                };
            }
            (focus, Command::FocusPrev) => {
                self.focus = match focus {
                    Area::Steps if !self.tasks.is_empty() => Area::Tasks,
                    Area::Steps => Area::Result,
                    _ => Area::Steps,
                };
            }
            (_, Command::Back) => self.focus = Area::Steps,
            (_, Command::RunPlan) => {
                ctx.status.info("running every remaining step");
                self.start(Job::All, ctx);
            }
            (_, Command::StepPlan) => self.step(ctx),
            (_, Command::ContinuePlan) => self.continue_plan(ctx),
            (_, Command::ToggleBreakpoint) => self.toggle_breakpoint(ctx),
            (_, Command::RetryStep) => self.retry(ctx),
            (_, Command::CancelPlan) => {
                if let Some(d) = &self.driver {
                    d.call.cancel();
                    ctx.status.info("cancelling the run");
                }
            }
            (_, Command::RestartPlan) => self.restart(ctx),
            (Area::Steps, command) if ROWS.contains(&command) => {
                let at = self.list.selected().unwrap_or(0);
                if let Some(row) = moved(command, at, self.step_count(), 1) {
                    self.list.select(Some(row));
                }
            }
            (Area::Result, command) => {
                let change = self.view.run(command);
                if self.fetched.follow(change, ctx) {
                    self.rebuild_result();
                }
            }
            _ => {}
        }
    }

    fn handle_key(&mut self, key: &KeyEvent, ctx: &mut Ctx<'_>) -> EventState {
        if self.prompt.is_some() {
            return self.prompt_key(key, ctx);
        }
        // The run moves on its own: the result tree follows it before a key acts on it.
        self.refresh_result();
        self.run_key(key, ctx)
    }

    fn on_reply(&mut self, reply: &Reply, ctx: &mut Ctx<'_>) -> bool {
        if self.tasks.on_reply(reply, ctx) {
            return true;
        }
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

    fn scope(&self) -> Scope {
        if self.prompt.is_some() {
            return Scope::PlanPrompt;
        }
        if self.pick.is_some() {
            return Scope::PlanPick;
        }
        match (self.area(), &self.doc) {
            (Area::Result, Doc::Plan(_)) => Scope::PlanResult,
            (Area::Tasks, Doc::Plan(_)) => Scope::PlanTasks,
            _ => Scope::Plans,
        }
    }

    fn captures_text(&self) -> bool {
        self.prompt.is_some()
    }

    fn commands(&self) -> Vec<Command> {
        if let Some(p) = &self.prompt {
            let mut out = vec![Command::OpenPlanFile, Command::Close];
            if !p.is_empty() {
                out.extend([Command::EraseChar, Command::ClearText]);
            }
            return out;
        }
        if let Some(pick) = &self.pick {
            let mut out = Vec::new();
            if pick.plans.len() > 1 {
                out.extend(ROWS);
            }
            out.extend([Command::OpenPlanCall, Command::Close]);
            return out;
        }
        let mut out = Vec::new();
        let Some(o) = self.opened() else {
            out.extend([Command::OpenPlan, Command::OpenWorkflow]);
            return out;
        };
        if self.area() == Area::Tasks {
            if self.tasks.rows().len() > 1 {
                out.extend(ROWS);
            }
            if self.tasks.can_cancel() {
                out.push(Command::CancelTask);
            }
            out.extend([Command::FocusNext, Command::FocusPrev, Command::Back]);
            return out;
        }
        // In the result, its tree's keys come first; in the steps, the run's.
        if self.area() == Area::Result {
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
        if self.area() == Area::Steps && self.step_count() > 1 {
            out.extend(ROWS);
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
mod tests;
