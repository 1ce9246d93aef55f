//! The PoW pane: proof-of-work jobs, each planned, waited for, run and watched.
//!
//! - `n` opens a prompt for a job: `ENTITY [build|mine|refine|raid] [key=value ...]`,
//!   e.g. `5-12`, `5-7 mine`, `9-3@2-8 raid block_start=5000`, with keys `block_start`,
//!   `age`, `current_block`, `difficulty` (the range) and `threads`. In the Entities
//!   pane, `w` starts a job for the selected struct (its build) or fleet.
//! - A new job is planned with `structs_calculate_pow_schedule`. Like the official web
//!   client, it waits while the required difficulty is above 10 and starts hashing
//!   (`structs_calculate_proof_of_work`, every core, until found or cancelled) once the
//!   block height brings it there; the tick checks the height.
//! - While it runs, the tool's progress reports feed the view: iterations, hash rate
//!   (and a sparkline of it), best achieved difficulty, the required difficulty now, and
//!   a gauge of expected progress (iterations against 16^difficulty).
//! - `x` cancels the selected job; `c` copies a found proof (input, nonce, hash) as JSON.
//! - Under the jobs, the proof-of-work tasks MCP servers run for their clients (the
//!   Tasks extension), read from the handle store while the tab is on show
//!   ([`TaskBoard`]); `Tab` focuses them, and `x` asks one to stop.

use std::sync::{Arc, Mutex};

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::widgets::ListState;
use serde_json::{Value, json};

use crate::context::{CallContext, ProgressUpdate};
use crate::entity::{EntityId, EntityKind};
use crate::pow::{self, schedule::WEB_CLIENT_START};
use crate::tui::clipboard::Clipboard;
use crate::tui::dispatch::{Reply, RequestId};
use crate::tui::keymap::{Command, Scope};
use crate::tui::pane::FoundProof;
use crate::tui::pane::{Ctx, EventState, Pane, Ui};
use crate::tui::widgets::cursor::{ROWS, moved};
use crate::tui::widgets::tasks::TaskBoard;

mod render;

const SCHEDULE_TOOL: &str = "structs_calculate_pow_schedule";
const SEARCH_TOOL: &str = "structs_calculate_proof_of_work";
/// The tool that lists the work a proof completes now.
const WORK_TOOL: &str = "structs_list_pow_work";
/// How many pieces of work the pane asks for.
const WORK_LIMIT: u64 = 50;
/// How often the work on offer is asked for again while the tab is on show.
const WORK_EVERY: std::time::Duration = std::time::Duration::from_secs(15);
/// A console job hashes until it finds a proof or is cancelled.
const JOB_ITERATIONS: u64 = 1_000_000_000_000;
/// Hash-rate samples kept for the sparkline.
const RATE_SAMPLES: usize = 120;
const MAX_PROMPT_LEN: usize = 96;

/// What the schedule tool says of a job: when to start and what it will cost.
#[derive(Debug, Clone)]
struct Schedule {
    block_start: u64,
    range: u64,
    range_source: String,
    hashrate: f64,
    /// (difficulty, first block) of every coming step.
    steps: Vec<(u32, u64)>,
    web_client_start_block: Option<u64>,
    recommended_start_block: u64,
    expected_seconds_to_proof: f64,
}

#[derive(Debug, Clone)]
enum State {
    Planning,
    Waiting,
    Running,
    Found(Value),
    /// The search stopped without a proof (message).
    Failed(String),
    Cancelled,
}

/// A piece of work the world offers: what the prompt takes for it, and what it is.
#[derive(Debug, Clone)]
pub(super) struct Offer {
    /// In the prompt's words: `5-22`, `5-7 mine`, `9-3@2-8 raid`.
    pub(super) text: String,
    /// The word of its kind: build, mine, refine or raid.
    pub(super) word: &'static str,
    /// The struct type's name (or Fleet), its state and its owner.
    pub(super) about: String,
    /// The leading zeros a proof needs now.
    pub(super) difficulty: u64,
}

/// The work on offer, as far as it is known.
#[derive(Debug, Default)]
pub(super) struct Offers {
    pub(super) items: Vec<Offer>,
    /// How many the world has in all (more than `items` past the limit).
    pub(super) total: u64,
    /// Why there is no list (the server has no such tool, the read failed).
    pub(super) error: Option<String>,
    /// The request in flight, and when the list was last asked for.
    request: Option<RequestId>,
    asked_at: Option<std::time::Instant>,
    /// The offer the prompt was last filled from.
    pub(super) at: Option<usize>,
}

impl Offers {
    fn take_answer(&mut self, v: &Value) {
        self.total = v["total"].as_u64().unwrap_or(0);
        self.error = None;
        self.items = v["work"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|w| {
                let entity = w["entity_id"].as_str()?;
                let word = match w["action_type"].as_str()? {
                    "struct_build_complete" => "build",
                    "ore_miner_complete" => "mine",
                    "ore_refinery_complete" => "refine",
                    "planet_raid_complete" => "raid",
                    _ => return None,
                };
                let text = match (word, w["planet_id"].as_str()) {
                    ("raid", Some(planet)) => format!("{entity}@{planet} raid"),
                    ("build", _) => entity.to_string(),
                    (word, _) => format!("{entity} {word}"),
                };
                let mut about = format!(
                    "{} · {}",
                    w["type_name"].as_str().unwrap_or("?"),
                    w["state"].as_str().unwrap_or("?")
                );
                if let Some(owner) = w["owner"].as_str() {
                    about.push_str(&format!(" · owner {owner}"));
                }
                Some(Offer {
                    text,
                    word,
                    about,
                    difficulty: w["difficulty_now"].as_u64().unwrap_or(64),
                })
            })
            .collect();
        self.at = self.at.filter(|i| *i < self.items.len());
    }

    /// Examples for the prompt: the first offer of each kind, in the prompt's words.
    pub(super) fn examples(&self) -> Vec<&str> {
        let mut seen = Vec::new();
        let mut out = Vec::new();
        for offer in &self.items {
            if !seen.contains(&offer.word) {
                seen.push(offer.word);
                out.push(offer.text.as_str());
            }
        }
        out
    }
}

/// What the progress reports of a running job have said; written by the tool's task.
#[derive(Debug, Default)]
struct Live {
    last: Option<Value>,
    /// What the search said of its engine (why not the GPU, or that the GPU is a CPU
    /// emulation); kept once said, since the final answer does not repeat it.
    engine_note: Option<String>,
    rates: Vec<u64>,
    /// Figures set by a test to draw a fixed frame; real reports are then ignored.
    pinned: bool,
}

impl Live {
    fn push(&mut self, data: Value) {
        if let Some(note) = data["engine_note"].as_str() {
            self.engine_note = Some(note.to_string());
        }
        if let Some(r) = data["hashrate"].as_f64() {
            if self.rates.len() == RATE_SAMPLES {
                self.rates.remove(0);
            }
            self.rates.push(r as u64);
        }
        self.last = Some(data);
    }
}

struct Job {
    number: usize,
    label: String,
    args: Value,
    /// The age was given: the difficulty does not move with the block height.
    age: Option<u64>,
    plan: Option<Schedule>,
    plan_request: Option<RequestId>,
    run_request: Option<RequestId>,
    state: State,
    live: Arc<Mutex<Live>>,
    call: Option<CallContext>,
    block_now: u64,
}

impl Job {
    fn live(&self) -> std::sync::MutexGuard<'_, Live> {
        self.live.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn required_now(&self) -> Option<u32> {
        let plan = self.plan.as_ref()?;
        let age = self
            .age
            .unwrap_or_else(|| self.block_now.saturating_sub(plan.block_start));
        Some(pow::difficulty(age, plan.range))
    }

    fn status_word(&self) -> String {
        match &self.state {
            State::Planning => "planning".into(),
            State::Waiting => format!("waiting d{}", self.required_now().unwrap_or(64)),
            State::Running => {
                let live = self.live();
                let d = live
                    .last
                    .as_ref()
                    .and_then(|l| l["required_difficulty"].as_u64())
                    .unwrap_or(u64::from(self.required_now().unwrap_or(64)));
                format!("running d{d}")
            }
            State::Found(_) => "found".into(),
            State::Failed(_) => "failed".into(),
            State::Cancelled => "cancelled".into(),
        }
    }
}

/// The PoW pane.
pub(crate) struct PowPane {
    jobs: Vec<Job>,
    list: ListState,
    prompt: Option<String>,
    clipboard: Box<dyn Clipboard>,
    /// Hashes per second to plan with; measured by the server when `None`.
    planning_rate: Option<f64>,
    next_number: usize,
    /// Whether the block clock was paused at the last tick: a waiting job's time to
    /// start is then no time at all.
    clock_paused: bool,
    /// A struct read for `w`, to find the work it is doing.
    work_lookup: Option<(RequestId, EntityId)>,
    /// The proof-of-work tasks MCP servers run.
    tasks: TaskBoard,
    /// The tasks have the focus rather than the jobs.
    on_tasks: bool,
    /// The work the world offers to prove.
    offers: Offers,
}

impl PowPane {
    pub fn new(clipboard: Box<dyn Clipboard>, planning_rate: Option<f64>) -> PowPane {
        PowPane {
            jobs: Vec::new(),
            list: ListState::default(),
            prompt: None,
            clipboard,
            planning_rate,
            next_number: 1,
            clock_paused: false,
            work_lookup: None,
            tasks: TaskBoard::new(&[SEARCH_TOOL]),
            on_tasks: false,
            offers: Offers::default(),
        }
    }

    /// Asks for the work on offer when it is time: never asked, or asked
    /// [`WORK_EVERY`] ago while the tab is on show.
    pub fn refresh_offers(&mut self, ctx: &mut Ctx<'_>, now: std::time::Instant) {
        let due = self
            .offers
            .asked_at
            .is_none_or(|at| now.duration_since(at) >= WORK_EVERY);
        if due && self.offers.request.is_none() {
            self.ask_offers(ctx, now);
        }
    }

    fn ask_offers(&mut self, ctx: &mut Ctx<'_>, now: std::time::Instant) {
        self.offers.asked_at = Some(now);
        self.offers.request = Some(
            ctx.dispatcher
                .call(WORK_TOOL, json!({ "limit": WORK_LIMIT })),
        );
    }

    /// Fills the prompt from the offer `delta` rows away from the last one used.
    fn choose_offer(&mut self, delta: isize) {
        let n = self.offers.items.len();
        if n == 0 {
            return;
        }
        let at = match self.offers.at {
            None if delta < 0 => n - 1,
            None => 0,
            Some(at) => at.saturating_add_signed(delta).min(n - 1),
        };
        self.offers.at = Some(at);
        self.prompt = Some(self.offers.items[at].text.clone());
    }

    /// Asks for the tasks again when it is time (the tab is on show).
    pub fn refresh_tasks(&mut self, ctx: &mut Ctx<'_>, now: std::time::Instant) {
        self.tasks.refresh(ctx, now);
    }

    /// A command while the new-job prompt is open.
    fn prompt_command(&mut self, command: Command, ctx: &mut Ctx<'_>) {
        match command {
            Command::PlanJob => {
                let text = self.prompt.take().unwrap_or_default();
                if let Err(e) = self.add_job(&text, ctx) {
                    ctx.status.error(e);
                    self.prompt = Some(text);
                }
            }
            Command::Close => self.prompt = None,
            Command::Up => self.choose_offer(-1),
            Command::Down => self.choose_offer(1),
            Command::EraseChar => {
                if let Some(t) = &mut self.prompt {
                    t.pop();
                }
            }
            _ => {}
        }
    }

    /// A command while the list of tasks MCP servers run has focus.
    fn tasks_command(&mut self, command: Command, ctx: &mut Ctx<'_>) {
        match command {
            Command::CancelTask => self.tasks.cancel_selected(ctx),
            Command::FocusNext | Command::FocusPrev | Command::Back => self.on_tasks = false,
            command => {
                self.tasks.move_by(command);
            }
        }
    }

    /// A command on the list of jobs.
    fn jobs_command(&mut self, command: Command, ctx: &mut Ctx<'_>) {
        match command {
            Command::FocusNext => self.on_tasks = true,
            Command::NewJob => {
                self.prompt = Some(String::new());
                self.offers.at = None;
                if self.offers.request.is_none() {
                    self.ask_offers(ctx, std::time::Instant::now());
                }
            }
            Command::CancelJob => self.cancel_selected(ctx),
            Command::CopyProof => self.copy_selected(ctx),
            command if ROWS.contains(&command) => {
                let at = self.list.selected().unwrap_or(0);
                let to = moved(command, at, self.jobs.len(), 1).unwrap_or(0);
                self.list.select(Some(to));
            }
            _ => {}
        }
    }

    /// Whether the tasks area has the focus (there are tasks to show).
    fn tasks_focused(&self) -> bool {
        self.on_tasks && !self.tasks.is_empty()
    }

    fn selected(&self) -> Option<&Job> {
        self.jobs.get(self.list.selected()?)
    }

    /// Starts planning a job for `text` (the prompt's syntax); the error says what is
    /// wrong with the text.
    pub fn add_job(&mut self, text: &str, ctx: &mut Ctx<'_>) -> Result<(), String> {
        let (args, label) = parse_job(text)?;
        self.clock_paused = ctx.dispatcher.status().paused;
        let mut plan_args = args.clone();
        if let Some(rate) = self.planning_rate {
            plan_args["hashrate"] = json!(rate);
        }
        plan_args.as_object_mut().map(|o| o.remove("threads"));
        let request = ctx.dispatcher.call(SCHEDULE_TOOL, plan_args);
        let number = self.next_number;
        self.next_number += 1;
        self.jobs.push(Job {
            number,
            label,
            age: args.get("age").and_then(Value::as_u64),
            args,
            plan: None,
            plan_request: Some(request),
            run_request: None,
            state: State::Planning,
            live: Arc::default(),
            call: None,
            block_now: ctx.dispatcher.status().block_height,
        });
        self.list.select(Some(self.jobs.len() - 1));
        Ok(())
    }

    /// A job for an entity chosen elsewhere. A struct is read first, so the job is the
    /// work it is doing (its build, a mining or a refining cycle), or the status line
    /// says it does none; a fleet's raid needs a planet and so opens the prompt.
    pub fn job_for(&mut self, id: EntityId, ctx: &mut Ctx<'_>) {
        match id.kind {
            EntityKind::Struct => {
                let request = ctx
                    .dispatcher
                    .call("structs_query_struct", json!({"struct_id": id.to_string()}));
                self.work_lookup = Some((request, id));
                ctx.status.info(format!("{id}: reading what it is doing…"));
            }
            EntityKind::Fleet => self.prompt = Some(format!("{id}@2- raid")),
            kind => ctx.status.error(format!(
                "{id} is a {kind}: proof-of-work jobs are for structs and fleets"
            )),
        }
    }

    /// The nonces found by finished jobs, oldest job first, for the action dialog.
    pub fn found_proofs(&self) -> Vec<FoundProof> {
        self.jobs
            .iter()
            .filter_map(|job| {
                let State::Found(v) = &job.state else {
                    return None;
                };
                let nonce = match &v["nonce"] {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    _ => return None,
                };
                Some(FoundProof {
                    entity: EntityId::parse(job.args["entity_id"].as_str()?).ok()?,
                    action: job.args["action_type"].as_str()?.to_string(),
                    nonce,
                    job: job.number,
                })
            })
            .collect()
    }

    /// Moves waiting jobs along with the block height: a job starts hashing once its
    /// difficulty is at most 10.
    pub fn tick(&mut self, ctx: &mut Ctx<'_>) {
        let status = ctx.dispatcher.status();
        let height = status.block_height;
        self.clock_paused = status.paused;
        for i in 0..self.jobs.len() {
            self.jobs[i].block_now = height;
            if matches!(self.jobs[i].state, State::Waiting)
                && self.jobs[i]
                    .required_now()
                    .is_some_and(|d| d <= WEB_CLIENT_START)
            {
                self.start(i, ctx);
            }
        }
    }

    fn start(&mut self, i: usize, ctx: &mut Ctx<'_>) {
        let job = &mut self.jobs[i];
        let live = job.live.clone();
        let call = CallContext::new().with_progress(move |u: ProgressUpdate| {
            let mut live = live.lock().unwrap_or_else(|e| e.into_inner());
            if !live.pinned {
                live.push(u.data);
            }
        });
        let mut args = job.args.clone();
        args["max_iterations"] = json!(JOB_ITERATIONS);
        if let Some(plan) = &job.plan {
            args["block_start"] = json!(plan.block_start);
            args["difficulty"] = json!(plan.range);
        }
        job.run_request = Some(ctx.dispatcher.call_with(SEARCH_TOOL, args, call.clone()));
        job.call = Some(call);
        job.state = State::Running;
    }

    fn cancel_selected(&mut self, ctx: &mut Ctx<'_>) {
        let Some(i) = self.list.selected() else {
            return;
        };
        let job = &mut self.jobs[i];
        match job.state {
            State::Running => {
                if let Some(call) = &job.call {
                    call.cancel();
                }
                ctx.status.info(format!("cancelling job {}", job.number));
            }
            State::Planning | State::Waiting => {
                job.state = State::Cancelled;
                job.plan_request = None;
                ctx.status.info(format!("job {} cancelled", job.number));
            }
            _ => {}
        }
    }

    fn copy_selected(&mut self, ctx: &mut Ctx<'_>) {
        let Some(State::Found(v)) = self.selected().map(|j| j.state.clone()) else {
            return;
        };
        let proof = json!({"input": v["input"], "nonce": v["nonce"], "hash": v["hash"]});
        let text = serde_json::to_string_pretty(&proof).unwrap_or_default();
        match self.clipboard.copy(&text) {
            Ok(way) => ctx.status.info(format!("copied the proof {}", way.way())),
            Err(e) => ctx.status.error(format!("nothing copied: {e}")),
        }
    }

    /// Test seam: draw job `index` (from 0) with these progress figures, ignoring the
    /// search's own reports from now on, so a frame of a running job is reproducible.
    pub fn pin_progress(&mut self, index: usize, data: Value) {
        if let Some(job) = self.jobs.get(index) {
            let mut live = job.live();
            live.rates.clear();
            for r in data["rates"].as_array().into_iter().flatten() {
                live.rates.push(r.as_u64().unwrap_or(0));
            }
            live.engine_note = data["engine_note"].as_str().map(str::to_string);
            live.last = Some(data);
            live.pinned = true;
        }
    }

    /// Cancels every running search (the console is closing).
    pub fn cancel_all(&self) {
        for job in &self.jobs {
            if let Some(call) = &job.call {
                call.cancel();
            }
        }
    }
}

impl Drop for PowPane {
    fn drop(&mut self) {
        self.cancel_all();
    }
}

/// Parses the prompt: `ENTITY[@PLANET] [ACTION] [key=value ...]`.
fn parse_job(text: &str) -> Result<(Value, String), String> {
    let mut words = text.split_whitespace();
    let who = words
        .next()
        .ok_or("type an entity id, e.g. 5-12 or 9-3@2-8 raid")?;
    let (entity, planet) = match who.split_once('@') {
        Some((f, p)) => (f, Some(p)),
        None => (who, None),
    };
    let id = EntityId::parse(entity).map_err(|e| format!("{entity}: {e}"))?;
    let mut action = match id.kind {
        EntityKind::Struct => "struct_build_complete",
        EntityKind::Fleet => "planet_raid_complete",
        kind => {
            return Err(format!(
                "{id} is a {kind}; jobs are for structs (5-N) and fleets (9-N)"
            ));
        }
    };
    let mut args = json!({"entity_id": id.to_string()});
    if let Some(p) = planet {
        let p = EntityId::parse(p).map_err(|e| format!("{p}: {e}"))?;
        args["planet_id"] = json!(p.to_string());
    }
    for word in words {
        match word {
            "build" => action = "struct_build_complete",
            "mine" => action = "ore_miner_complete",
            "refine" => action = "ore_refinery_complete",
            "raid" => action = "planet_raid_complete",
            _ => {
                let (k, v) = word.split_once('=').ok_or_else(|| {
                    format!("{word:?}: use build, mine, refine, raid or key=value")
                })?;
                if !matches!(
                    k,
                    "block_start" | "age" | "current_block" | "difficulty" | "threads"
                ) {
                    return Err(format!(
                        "{k}: keys are block_start, age, current_block, difficulty, threads"
                    ));
                }
                let n: u64 = v
                    .parse()
                    .map_err(|_| format!("{k}={v}: not a whole number"))?;
                args[k] = json!(n);
            }
        }
    }
    args["action_type"] = json!(action);
    let short = action.split('_').next().unwrap_or(action);
    let short = match short {
        "struct" => "build",
        "ore" if action.contains("miner") => "mine",
        "ore" => "refine",
        "planet" => "raid",
        s => s,
    };
    Ok((args, format!("{who} {short}")))
}

/// The proof-of-work a struct's record calls for: its build while it is being built,
/// else the mining or refining cycle under way; otherwise why there is none.
fn work_of(record: &Value) -> Result<&'static str, String> {
    let attrs = &record["structAttributes"];
    let started = |field: &str| {
        attrs[field]
            .as_str()
            .and_then(|s| s.parse::<u64>().ok())
            .is_some_and(|b| b > 0)
    };
    let status = crate::entity::records::StructStatus::of(attrs);
    let built = status.is_some_and(|s| s.has(crate::entity::records::StructStatus::BUILT));
    if !built {
        return Ok("build");
    }
    if started("blockStartOreMine") {
        return Ok("mine");
    }
    if started("blockStartOreRefine") {
        return Ok("refine");
    }
    Err(format!(
        "is {} and has no mining or refining cycle under way: no proof to find",
        status.map_or_else(|| "built".to_string(), |s| s.describe())
    ))
}

fn plan_from(v: &Value) -> Option<Schedule> {
    Some(Schedule {
        block_start: v["block_start"].as_u64()?,
        range: v["difficulty_range"].as_u64()?,
        range_source: v["difficulty_range_source"]
            .as_str()
            .unwrap_or("")
            .to_string(),
        hashrate: v["hashrate"].as_f64()?,
        steps: v["steps"]
            .as_array()?
            .iter()
            .filter_map(|s| Some((s["difficulty"].as_u64()? as u32, s["from_block"].as_u64()?)))
            .collect(),
        web_client_start_block: v["web_client_start_block"].as_u64(),
        recommended_start_block: v["recommended_start_block"].as_u64()?,
        expected_seconds_to_proof: v["expected_seconds_to_proof"].as_f64()?,
    })
}

/// A duration in words: `0.4 s`, `12 s`, `3 min`, `5 h`, `12 d`, `1827 y`, `> 10^55 y`.
fn span(secs: f64) -> String {
    if !secs.is_finite() {
        return "never".into();
    }
    match secs {
        s if s < 10.0 => format!("{s:.1} s"),
        s if s < 120.0 => format!("{s:.0} s"),
        s if s < 7200.0 => format!("{:.0} min", s / 60.0),
        s if s < 172_800.0 => format!("{:.0} h", s / 3600.0),
        s if s < 3.156e7 => format!("{:.0} d", s / 86_400.0),
        s if s < 3.156e13 => format!("{:.0} y", s / 3.156e7),
        // Past a million years the digits mean nothing: the order of magnitude does.
        s => format!("> 10^{} y", (s / 3.156e7).log10().floor()),
    }
}

/// A rate in words: `19.8 MH/s`.
fn rate(r: f64) -> String {
    if r >= 1e6 {
        format!("{:.1} MH/s", r / 1e6)
    } else {
        format!("{:.0} kH/s", r / 1e3)
    }
}

impl Pane for PowPane {
    fn run(&mut self, command: Command, ctx: &mut Ctx<'_>) {
        if self.prompt.is_some() {
            self.prompt_command(command, ctx);
        } else if self.tasks_focused() {
            self.tasks_command(command, ctx);
        } else {
            self.jobs_command(command, ctx);
        }
    }

    fn handle_key(&mut self, key: &KeyEvent, ctx: &mut Ctx<'_>) -> EventState {
        if self.prompt.is_some()
            && let KeyCode::Char(c) = key.code
            && ctx.keymap.command(Scope::PowPrompt, key).is_none()
        {
            if let Some(text) = &mut self.prompt
                && text.chars().count() < MAX_PROMPT_LEN
            {
                text.push(c);
            }
            return EventState::Consumed;
        }
        self.run_key(key, ctx)
    }

    fn on_reply(&mut self, reply: &Reply, ctx: &mut Ctx<'_>) -> bool {
        if self.tasks.on_reply(reply, ctx) {
            return true;
        }
        if self.offers.request == Some(reply.id) {
            self.offers.request = None;
            match &reply.result {
                Ok(v) => self.offers.take_answer(v),
                Err(e) => {
                    self.offers.items.clear();
                    self.offers.error = Some(format!("{}: {}", e.code.as_str(), e.message));
                }
            }
            return true;
        }
        if let Some((request, id)) = self.work_lookup
            && request == reply.id
        {
            self.work_lookup = None;
            match &reply.result {
                Ok(v) => match work_of(&v["struct"]) {
                    Ok(kind) => match self.add_job(&format!("{id} {kind}"), ctx) {
                        Ok(()) => ctx
                            .status
                            .info(format!("{id}: a {kind} job, the work it is doing")),
                        Err(e) => ctx.status.error(e),
                    },
                    Err(why) => ctx.status.info(format!("{id} {why}")),
                },
                Err(e) => ctx.status.tool_error(&format!("reading {id}"), e),
            }
            return true;
        }
        let Some(i) = self
            .jobs
            .iter()
            .position(|j| j.plan_request == Some(reply.id) || j.run_request == Some(reply.id))
        else {
            return false;
        };
        let job = &mut self.jobs[i];
        if job.plan_request == Some(reply.id) {
            job.plan_request = None;
            match &reply.result {
                Ok(v) => {
                    job.plan = plan_from(v);
                    job.state = State::Waiting;
                    if job.required_now().is_some_and(|d| d <= WEB_CLIENT_START) {
                        self.start(i, ctx);
                    }
                }
                Err(e) => {
                    ctx.status
                        .tool_error(&format!("planning job {}", job.number), e);
                    job.state = State::Failed(format!("{}: {}", e.code.as_str(), e.message));
                }
            }
            return true;
        }
        job.run_request = None;
        job.call = None;
        match &reply.result {
            Ok(v) => {
                let mut live = job.live();
                if !live.pinned {
                    live.push(v.clone());
                }
                drop(live);
                ctx.status.info(format!(
                    "job {}: proof found, nonce {}",
                    job.number, v["nonce"]
                ));
                job.state = State::Found(v.clone());
            }
            Err(e) if e.code.as_str() == "TOOL_CANCELLED" => {
                job.state = State::Cancelled;
                // The status line said "cancelling"; it now says it is done.
                ctx.status.info(format!("job {} cancelled", job.number));
            }
            Err(e) => {
                ctx.status.tool_error(&format!("job {}", job.number), e);
                job.state = State::Failed(e.message.clone());
            }
        }
        true
    }

    fn scope(&self) -> Scope {
        if self.prompt.is_some() {
            Scope::PowPrompt
        } else if self.tasks_focused() {
            Scope::PowTasks
        } else {
            Scope::Pow
        }
    }

    fn captures_text(&self) -> bool {
        self.prompt.is_some()
    }

    fn commands(&self) -> Vec<Command> {
        if self.prompt.is_some() {
            let mut out = vec![Command::PlanJob, Command::Close, Command::EraseChar];
            if !self.offers.items.is_empty() {
                out.extend([Command::Up, Command::Down]);
            }
            return out;
        }
        if self.tasks_focused() {
            let mut out = Vec::new();
            if self.tasks.rows().len() > 1 {
                out.extend(ROWS);
            }
            if self.tasks.can_cancel() {
                out.push(Command::CancelTask);
            }
            out.extend([Command::FocusNext, Command::Back]);
            return out;
        }
        let mut out = vec![Command::NewJob];
        if self.jobs.len() > 1 {
            out.extend(ROWS);
        }
        if !self.tasks.is_empty() {
            out.push(Command::FocusNext);
        }
        match self.selected().map(|j| &j.state) {
            Some(State::Planning | State::Waiting | State::Running) => out.push(Command::CancelJob),
            Some(State::Found(_)) => out.push(Command::CopyProof),
            _ => {}
        }
        out
    }

    fn render(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let list_width = (area.width / 3).clamp(24.min(area.width), 36);
        let [left, right] =
            Layout::horizontal([Constraint::Length(list_width), Constraint::Min(0)]).areas(area);
        if self.tasks.is_empty() {
            self.render_list(left, buf, ui);
            self.render_job(right, buf, ui);
            return;
        }
        let [jobs, tasks] =
            Layout::vertical([Constraint::Min(3), Constraint::Length(self.tasks.height())])
                .areas(left);
        let on_tasks = self.tasks_focused();
        self.render_list(jobs, buf, ui);
        self.tasks.render_list(tasks, buf, ui, on_tasks);
        if on_tasks {
            self.tasks.render_detail(right, buf, ui);
        } else {
            self.render_job(right, buf, ui);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_reads_entity_action_and_keys() {
        let (a, label) = parse_job("5-12").unwrap();
        assert_eq!(a["action_type"], "struct_build_complete");
        assert_eq!(label, "5-12 build");
        let (a, _) = parse_job("5-7 mine block_start=100 difficulty=14000 threads=1").unwrap();
        assert_eq!(a["action_type"], "ore_miner_complete");
        assert_eq!(
            (a["block_start"].as_u64(), a["threads"].as_u64()),
            (Some(100), Some(1))
        );
        let (a, label) = parse_job("9-3@2-8 block_start=5").unwrap();
        assert_eq!(a["action_type"], "planet_raid_complete");
        assert_eq!(a["planet_id"], "2-8");
        assert_eq!(label, "9-3@2-8 raid");
        assert!(parse_job("").is_err());
        assert!(parse_job("1-1").unwrap_err().contains("player"));
        assert!(parse_job("5-1 fly").is_err());
        assert!(parse_job("5-1 nonce=3").unwrap_err().contains("keys are"));
        assert!(parse_job("5-1 age=x").unwrap_err().contains("whole number"));
    }

    #[test]
    fn spans_read_well() {
        assert_eq!(span(0.42), "0.4 s");
        assert_eq!(span(90.0), "90 s");
        assert_eq!(span(3600.0), "60 min");
        assert_eq!(span(1e9), "32 y");
        assert_eq!(span(1e12), "31686 y");
        assert_eq!(span(1e20), "> 10^12 y");
        assert_eq!(span(2e69), "> 10^61 y");
    }

    /// What the pane copied: nothing here.
    struct NoClipboard;

    impl Clipboard for NoClipboard {
        fn copy(&mut self, _: &str) -> Result<crate::tui::clipboard::Copied, String> {
            Err("no clipboard in a unit test".into())
        }
    }

    #[test]
    fn the_new_job_prompt_offers_the_worlds_work_and_plans_a_job() {
        use crate::tui::tab::Tab;
        use crate::tui::testing::TestDesk;
        let desk = &mut TestDesk::new(Tab::Pow);
        let mut pane = PowPane::new(Box::new(NoClipboard), None);
        desk.press(&mut pane, Command::NewJob);
        assert_eq!(pane.scope(), Scope::PowPrompt);
        assert!(
            !pane.offers.items.is_empty(),
            "the demo world has work to prove"
        );
        desk.press(&mut pane, Command::Down);
        let first = pane.offers.items[0].text.clone();
        assert_eq!(pane.prompt.as_deref(), Some(first.as_str()));

        // A job the prompt cannot read stays typed, and says why.
        pane.prompt = Some("5-7 dance".into());
        desk.press(&mut pane, Command::PlanJob);
        assert_eq!(pane.prompt.as_deref(), Some("5-7 dance"));
        assert!(pane.jobs.is_empty());
        assert!(desk.status().is_some());

        desk.press(&mut pane, Command::Close);
        assert_eq!(pane.prompt, None);
        assert_eq!(pane.scope(), Scope::Pow);
    }
}
