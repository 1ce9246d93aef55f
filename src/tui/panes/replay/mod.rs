//! The Replay tab: a recorded session log (`--record`) call by call, each call run
//! again on the current core on demand, the recorded and fresh answers side by side
//! with a structural diff.
//!
//! The log is never read whole: a [`LogIndex`] built on a thread of its own keeps where
//! each call's lines are, the list draws only the rows on show, and the selected call's
//! two lines are read back from the file when it is selected. Fresh answers are kept
//! for the last [`FRESH_KEPT`] calls run; every call run keeps its verdict.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender};

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Paragraph, Widget};
use serde_json::{Value, json};

use crate::error::{ErrorCode, ToolError};
use crate::record::Entry;
use crate::record::diff::{Change, Ignore};
use crate::record::index::{Call, LogIndex};
use crate::record::replay::{NotRerun, Replayer};
use crate::record::shapes::{Compared, ShapeChange, compare};
use crate::tui::dispatch::{Reply, RequestId};
use crate::tui::keymap::{Command, Scope};
use crate::tui::pane::{Ctx, Event, EventState, Pane, Ui};
use crate::tui::theme::Role;
use crate::tui::widgets::cursor::{Cursor, SCROLLING, Scroll};
use crate::tui::widgets::prompt;
use crate::tui::widgets::prompt::PromptKey;

mod compare;
mod filter;
mod render;
mod timeline;

pub(crate) use render::pretty;

/// Fresh answers kept for showing (the verdict of every call run is kept).
pub const FRESH_KEPT: usize = 64;

/// Changes kept per call.
const CHANGES_KEPT: usize = 200;

/// The plan tool whose calls open in the Plans pane.
const PLAN_TOOL: &str = "structs_plan_execute";

/// A call run again: its row, the recorded answer (when the log has one) and the
/// fresh one, or why it was not run again.
/// A row, its recorded answer (and whether it was recorded in older chain shapes:
/// a log line before version 3), and what running it again gave.
type Outcome = (usize, Option<(Value, bool)>, Rerun);

/// What running a recorded call again gave.
enum Rerun {
    Fresh(Value),
    /// Not run, as `replay --check` does not run it ([`NotRerun`]).
    Skipped(NotRerun),
}

/// A call's fresh run, compared with the recording, or why it was not run.
#[derive(Debug, Clone)]
struct Verdict {
    changes: Vec<Change>,
    total: usize,
    /// The changes of shape an older recording was read through.
    shape: Vec<ShapeChange>,
    skipped: Option<NotRerun>,
}

/// A line of pretty JSON and the JSON Pointer of the value it shows.
type JsonLine = (String, String);

/// The selected call, read back from the log.
struct Shown {
    row: usize,
    call: Call,
    tool: String,
    session: String,
    request: Option<Entry>,
    recorded: Option<Value>,
    /// The recorded answer pretty-printed, and the fresh one with the answer it was
    /// printed from: drawn every frame, printed once.
    recorded_lines: Vec<JsonLine>,
    fresh_lines: Option<(Arc<Value>, Vec<JsonLine>)>,
    /// Why the lines could not be read, if so.
    error: Option<String>,
}

/// A run of every call, in the background.
struct RunAll {
    id: RequestId,
    stop: Arc<AtomicBool>,
    total: usize,
}

/// One open log.
struct OpenLog {
    index: LogIndex,
    replayer: Arc<tokio::sync::Mutex<Replayer>>,
    verdicts: HashMap<usize, Verdict>,
    fresh: VecDeque<(usize, Arc<Value>)>,
    different: usize,
    /// Calls not run again, as `replay --check` skips them.
    skipped: usize,
    shown: Option<Shown>,
    single: HashMap<RequestId, usize>,
    run: Option<RunAll>,
    outcomes: (Sender<Outcome>, Receiver<Outcome>),
    file_name: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Focus {
    Calls,
    Detail,
}

/// The Replay pane.
pub(crate) struct ReplayPane {
    log: Option<OpenLog>,
    /// The selected call, the first on show, and the rows shown last frame.
    cursor: Cursor,
    focus: Focus,
    detail_scroll: Scroll,
    ignore: Ignore,
    /// The path being typed to open another log (`f`), when the prompt is open.
    prompt: Option<String>,
    /// A call to select once the index has read it (a call the Live tab sent).
    pending: Option<Pending>,
    /// Where `t` copies a call's trace id (none: the status line says so).
    clipboard: Option<Box<dyn crate::tui::clipboard::Clipboard>>,
    /// The calls on a time axis instead of the list (`v`), when on.
    timeline: Option<timeline::Timeline>,
    /// The calls the filter (`/`) lets through.
    filter: filter::RowFilter,
    /// The open log and another side by side (`d`), when on.
    compare: Option<compare::CompareView>,
    /// The prompt asks for a log to compare with, not one to open.
    prompt_compares: bool,
    /// What the comparison never shows of the logs' arguments.
    redaction: Arc<crate::record::Redaction>,
}

/// A call to select once indexed: its session id and number, and how many of the
/// index's calls were looked at already.
struct Pending {
    session: String,
    call: u64,
    scanned: usize,
}

impl ReplayPane {
    pub fn new() -> ReplayPane {
        ReplayPane {
            log: None,
            cursor: Cursor {
                page: 10,
                ..Cursor::default()
            },
            focus: Focus::Calls,
            detail_scroll: Scroll::default(),
            ignore: Ignore::default(),
            prompt: None,
            pending: None,
            clipboard: None,
            timeline: None,
            filter: filter::RowFilter::default(),
            compare: None,
            prompt_compares: false,
            redaction: crate::record::Redaction::standard(),
        }
    }

    /// The pane copying to `clipboard`.
    pub fn with_clipboard(mut self, clipboard: Box<dyn crate::tui::clipboard::Clipboard>) -> Self {
        self.clipboard = Some(clipboard);
        self
    }

    /// The trace the selected call ran in, as its request's line names it.
    fn selected_trace(&self) -> Option<String> {
        let log = self.log.as_ref()?;
        if let Some(shown) = log.shown.as_ref().filter(|s| s.row == self.cursor.selected) {
            return shown.request.as_ref()?.trace();
        }
        let (call, _, _) = log.index.call(self.cursor.selected)?;
        log.index.entry(call.request).ok()?.trace()
    }

    /// Copies the selected call's trace id.
    fn copy_trace(&mut self, ctx: &mut Ctx<'_>) {
        let trace = self.selected_trace();
        match crate::tui::clipboard::copy_trace(self.clipboard.as_mut(), trace.as_deref()) {
            Ok(said) => ctx.status.info(said),
            Err(why) => ctx.status.error(format!("nothing copied: {why}")),
        }
    }

    /// Keys while the open prompt is up: the path is typed, Enter opens it.
    fn prompt_key(&mut self, key: &KeyEvent, ctx: &mut Ctx<'_>) -> EventState {
        let Some(text) = &mut self.prompt else {
            return EventState::NotConsumed;
        };
        match prompt::path_prompt_key(text, key, ctx, Scope::ReplayPrompt) {
            PromptKey::Accept(path) if self.prompt_compares => {
                self.prompt = None;
                self.prompt_compares = false;
                if path.is_empty() {
                    ctx.status.info("no file given; nothing compared");
                } else if let Err(e) = self.compare_with(std::path::Path::new(&path)) {
                    ctx.status.error(format!("cannot compare with {path}: {e}"));
                }
            }
            PromptKey::Accept(path) => {
                self.prompt = None;
                if path.is_empty() {
                    ctx.status.info("no file given; nothing opened");
                } else {
                    let replayer = ctx.dispatcher.replayer();
                    match self.open(std::path::Path::new(&path), replayer) {
                        Ok(()) => ctx.status.info(format!("opened the session log {path}")),
                        Err(e) => ctx
                            .status
                            .error(format!("cannot open the session log {path}: {e}")),
                    }
                }
            }
            PromptKey::Cancel => {
                self.prompt = None;
                self.prompt_compares = false;
            }
            PromptKey::Edited => {}
            PromptKey::NotMine => return EventState::NotConsumed,
        }
        EventState::Consumed
    }

    /// Opens the log at `path`; its calls are indexed in the background.
    pub fn open(&mut self, path: &std::path::Path, replayer: Replayer) -> std::io::Result<()> {
        if let Some(old) = self.log.take() {
            old.index.stop();
            if let Some(run) = old.run {
                run.stop.store(true, Ordering::Relaxed);
            }
        }
        let index = LogIndex::open(path)?;
        // A timeline on show starts again on the new log, fitted to it.
        if self.timeline.is_some() {
            self.timeline = Some(timeline::Timeline::new());
        }
        self.log = Some(OpenLog {
            index,
            replayer: Arc::new(tokio::sync::Mutex::new(replayer)),
            verdicts: HashMap::new(),
            fresh: VecDeque::new(),
            different: 0,
            skipped: 0,
            shown: None,
            single: HashMap::new(),
            run: None,
            outcomes: std::sync::mpsc::channel(),
            file_name: path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| path.display().to_string()),
        });
        self.cursor.selected = 0;
        self.cursor.top = 0;
        self.detail_scroll.reset();
        self.focus = Focus::Calls;
        self.pending = None;
        self.filter = filter::RowFilter::default();
        self.compare = None;
        Ok(())
    }

    /// The open log and `other` side by side, aligned as `diff` aligns them.
    ///
    /// # Errors
    ///
    /// When no log is open, or `other` cannot be opened.
    pub fn compare_with(&mut self, other: &std::path::Path) -> std::io::Result<()> {
        let Some(log) = &self.log else {
            return Err(std::io::Error::other("no session log is open to compare"));
        };
        std::fs::File::open(other)?;
        let a = log.index.path().to_path_buf();
        self.compare = Some(compare::CompareView::open(
            a,
            other.to_path_buf(),
            self.redaction.clone(),
        ));
        Ok(())
    }

    /// What the comparison hides of the logs' arguments (the `[redact]` rules).
    pub(crate) fn set_redaction(&mut self, redaction: Arc<crate::record::Redaction>) {
        self.redaction = redaction;
    }

    /// True once a comparison asked for is read (or could not be).
    pub(crate) fn compare_settled(&mut self) -> bool {
        self.compare
            .as_mut()
            .is_none_or(compare::CompareView::settled)
    }

    /// Opens the log at `path` (as [`ReplayPane::open`]) and selects the call numbered
    /// `call` of session `session` once the index has read it.
    pub fn open_at(
        &mut self,
        path: &std::path::Path,
        replayer: Replayer,
        session: String,
        call: u64,
    ) -> std::io::Result<()> {
        self.open(path, replayer)?;
        self.pending = Some(Pending {
            session,
            call,
            scanned: 0,
        });
        self.find_pending();
        Ok(())
    }

    /// Selects the pending call if the index has read it by now; gives up once the
    /// whole log is read without it. True when it was selected.
    fn find_pending(&mut self) -> bool {
        if self.log.is_none() {
            self.pending = None;
        }
        let (Some(pending), Some(log)) = (self.pending.as_mut(), self.log.as_ref()) else {
            return false;
        };
        // Whether the reading was done before the calls are counted: then none is
        // still to come.
        let done = log.index.progress().done;
        let len = log.index.len();
        let from = pending.scanned.min(len);
        let found = log
            .index
            .window(from, len - from)
            .iter()
            .position(|(call, _, session)| call.call == pending.call && *session == pending.session)
            .map(|k| from + k);
        pending.scanned = len;
        if found.is_some() || done {
            self.pending = None;
        }
        match found {
            Some(row) => {
                self.select(row);
                true
            }
            None => false,
        }
    }

    /// Whether the index has read the whole log.
    pub fn indexed(&self) -> bool {
        self.log.as_ref().is_none_or(|l| l.index.progress().done)
    }

    /// Takes the outcomes a run of every call sent. True when there were any.
    fn drain(&mut self) -> bool {
        let found = self.find_pending();
        let Some(log) = &mut self.log else {
            return found;
        };
        let filtered = self.filter.poll(&log.index);
        let compared = self
            .compare
            .as_mut()
            .is_some_and(compare::CompareView::poll);
        log.drain(&self.ignore) || found || filtered || compared
    }

    /// The verdicts so far: calls run again, and how many of them differ.
    pub fn verdicts(&self) -> (usize, usize) {
        self.log
            .as_ref()
            .map_or((0, 0), |l| (l.verdicts.len(), l.different))
    }

    fn calls(&self) -> usize {
        self.log.as_ref().map_or(0, |l| l.index.len())
    }

    fn select(&mut self, row: usize) {
        let n = self.calls();
        if n == 0 {
            return;
        }
        self.cursor.selected = row.min(n - 1);
        self.detail_scroll.reset();
    }

    /// Runs the selected call again.
    fn run_selected(&mut self, ctx: &mut Ctx<'_>) {
        let row = self.cursor.selected;
        let Some(log) = &mut self.log else { return };
        let Some((call, tool, session)) = log.index.call(row) else {
            return;
        };
        let index = log.index.clone();
        let replayer = log.replayer.clone();
        let sender = log.outcomes.0.clone();
        let id = ctx.dispatcher.spawn_task(async move {
            let (recorded, fresh) = rerun(&index, &replayer, call, &tool, &session).await?;
            let _ = sender.send((row, recorded, fresh));
            Ok(Value::Null)
        });
        log.single.insert(id, row);
        ctx.status.info(format!("running call {} again…", row + 1));
    }

    /// Runs every call again, in order, in the background.
    fn run_all(&mut self, ctx: &mut Ctx<'_>) {
        let Some(log) = &mut self.log else { return };
        if log.run.is_some() {
            ctx.status.info("a run is under way; x stops it");
            return;
        }
        let index = log.index.clone();
        let replayer = log.replayer.clone();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let sender = log.outcomes.0.clone();
        // The calls indexed by now; a log still being indexed is run as far as it is read.
        let total = index.len();
        let id = ctx.dispatcher.spawn_task(async move {
            let mut ran = 0usize;
            for row in 0..total {
                if flag.load(Ordering::Relaxed) {
                    break;
                }
                let Some((call, tool, session)) = index.call(row) else {
                    break;
                };
                let (recorded, fresh) = rerun(&index, &replayer, call, &tool, &session).await?;
                ran += 1;
                if sender.send((row, recorded, fresh)).is_err() {
                    break;
                }
            }
            Ok(json!({"ran": ran, "of": total}))
        });
        log.run = Some(RunAll { id, stop, total });
        ctx.status.info(format!("running {total} calls again…"));
    }

    fn stop_run(&mut self, ctx: &mut Ctx<'_>) {
        if let Some(run) = self.log.as_ref().and_then(|l| l.run.as_ref()) {
            run.stop.store(true, Ordering::Relaxed);
            ctx.status.info("stopping the run after the call under way");
        }
    }

    /// The next (or previous) call whose fresh answer differs.
    fn jump_difference(&mut self, forward: bool, ctx: &mut Ctx<'_>) {
        let Some(log) = &self.log else { return };
        let mut rows: Vec<usize> = log
            .verdicts
            .iter()
            .filter(|(_, v)| v.total > 0)
            .map(|(r, _)| *r)
            .collect();
        rows.sort_unstable();
        let next = if forward {
            rows.iter()
                .find(|&&r| r > self.cursor.selected)
                .or(rows.first())
        } else {
            rows.iter()
                .rev()
                .find(|&&r| r < self.cursor.selected)
                .or(rows.last())
        };
        match next {
            Some(&row) => self.select(row),
            None => ctx.status.info(if log.verdicts.is_empty() {
                "no call has been run again yet: r runs the selected one, a runs them all"
            } else {
                "no differences among the calls run again"
            }),
        }
    }

    /// Opens the selected plan call in the Plans pane, or goes to the next plan call.
    fn open_plan(&mut self, ctx: &mut Ctx<'_>) {
        let Some(log) = &self.log else { return };
        let Some((call, tool, _)) = log.index.call(self.cursor.selected) else {
            return;
        };
        if tool == PLAN_TOOL {
            match log.index.entry(call.request) {
                Ok(entry) => {
                    let plan = entry.arguments.unwrap_or(Value::Null);
                    ctx.push(Event::OpenPlan {
                        label: format!("{} line {}", log.file_name, call.request.line),
                        plan,
                    });
                }
                Err(e) => ctx.status.error(format!("cannot read the call back: {e}")),
            }
            return;
        }
        match log.index.next_of_tool(self.cursor.selected + 1, PLAN_TOOL) {
            Some(row) => {
                self.select(row);
                ctx.status
                    .info("a structs_plan_execute call: o again opens its plan in Plans");
            }
            None => ctx.status.info("no structs_plan_execute call in the log"),
        }
    }

    /// Reads the selected call's lines back when the selection moved.
    fn load_shown(&mut self) {
        let Some(log) = &mut self.log else { return };
        if log
            .shown
            .as_ref()
            .is_some_and(|s| s.row == self.cursor.selected)
        {
            return;
        }
        let Some((call, tool, session)) = log.index.call(self.cursor.selected) else {
            log.shown = None;
            return;
        };
        let mut shown = Shown {
            row: self.cursor.selected,
            call,
            tool,
            session,
            request: None,
            recorded: None,
            recorded_lines: Vec::new(),
            fresh_lines: None,
            error: None,
        };
        match log.index.entry(call.request) {
            Ok(e) => shown.request = Some(e),
            Err(e) => shown.error = Some(format!("cannot read line {}: {e}", call.request.line)),
        }
        if let Some(span) = call.response {
            match log.index.entry(span) {
                Ok(e) => shown.recorded = Some(e.answer()),
                Err(e) => shown.error = Some(format!("cannot read line {}: {e}", span.line)),
            }
        }
        shown.recorded_lines = pretty(shown.recorded.as_ref().unwrap_or(&Value::Null));
        log.shown = Some(shown);
    }
}

impl Default for ReplayPane {
    fn default() -> Self {
        ReplayPane::new()
    }
}

/// Runs one recorded call again through the replayer: the recorded answer (when the
/// log has one) and the fresh one.
async fn rerun(
    index: &LogIndex,
    replayer: &tokio::sync::Mutex<Replayer>,
    call: Call,
    tool: &str,
    session: &str,
) -> Result<(Option<(Value, bool)>, Rerun), ToolError> {
    let unreadable = |e: std::io::Error| {
        ToolError::new(
            ErrorCode::ResourceUnavailable,
            format!("cannot read the call back from the log: {e}"),
        )
    };
    let request = index.entry(call.request).map_err(unreadable)?;
    let response = match call.response {
        Some(span) => Some(index.entry(span).map_err(unreadable)?),
        None => None,
    };
    let recorded = response
        .as_ref()
        .map(|r| (r.answer(), r.v < crate::record::SHAPES_VERSION));
    let injected = response.as_ref().and_then(|r| r.injected.as_deref());
    if let Some(method) = request.other_method() {
        return Ok((
            recorded,
            Rerun::Skipped(NotRerun::NotATool(method.to_string())),
        ));
    }
    if let Some(why) = NotRerun::of(&request.redacted, injected) {
        return Ok((recorded, Rerun::Skipped(why)));
    }
    // With traces on, the run is a new span linked to the one the call was recorded in.
    let recorded_in = response
        .as_ref()
        .and_then(|r| r.recorded_span())
        .or_else(|| request.recorded_span());
    let args = request.arguments.unwrap_or(Value::Null);
    // What the agent answered in the call's rounds, for the server's questions.
    let answers = index.answers_of(&call, session).map_err(unreadable)?;
    let mut replayer = replayer.lock().await;
    replayer.give_answers(answers);
    replayer.link_next(recorded_in);
    let fresh = replayer
        .call(session, tool, args, recorded.as_ref().map(|(v, _)| v))
        .await;
    Ok((recorded, Rerun::Fresh(fresh)))
}

impl OpenLog {
    /// Takes the calls run again that have arrived. True when there were any.
    fn drain(&mut self, ignore: &Ignore) -> bool {
        let mut any = false;
        while let Ok((row, recorded, fresh)) = self.outcomes.1.try_recv() {
            self.record(row, recorded.as_ref(), fresh, ignore);
            any = true;
        }
        any
    }

    /// Keeps a fresh answer and its verdict against the recording, or why the call
    /// was not run again.
    fn record(
        &mut self,
        row: usize,
        recorded: Option<&(Value, bool)>,
        rerun: Rerun,
        ignore: &Ignore,
    ) {
        let (fresh, verdict) = match rerun {
            Rerun::Fresh(fresh) => {
                let compared = match recorded {
                    Some((r, older)) => compare(r, &fresh, ignore, CHANGES_KEPT, *older),
                    None => Compared::default(),
                };
                let verdict = Verdict {
                    changes: compared.changes,
                    total: compared.total,
                    shape: compared.shape,
                    skipped: None,
                };
                (Some(fresh), verdict)
            }
            Rerun::Skipped(why) => {
                let verdict = Verdict {
                    changes: Vec::new(),
                    total: 0,
                    shape: Vec::new(),
                    skipped: Some(why),
                };
                (None, verdict)
            }
        };
        let (total, skipped) = (verdict.total, verdict.skipped.is_some());
        if let Some(old) = self.verdicts.insert(row, verdict) {
            self.different -= usize::from(old.total > 0);
            self.skipped -= usize::from(old.skipped.is_some());
        }
        self.different += usize::from(total > 0);
        self.skipped += usize::from(skipped);
        self.fresh.retain(|(r, _)| *r != row);
        let Some(fresh) = fresh else { return };
        self.fresh.push_back((row, Arc::new(fresh)));
        while self.fresh.len() > FRESH_KEPT {
            self.fresh.pop_front();
        }
    }
}

impl Pane for ReplayPane {
    fn run(&mut self, command: Command, ctx: &mut Ctx<'_>) {
        if let Some(c) = &mut self.compare {
            if command == Command::CompareLogs {
                self.compare = None;
            } else {
                c.run(command);
            }
            return;
        }
        match command {
            Command::CompareLogs => {
                self.prompt = Some(String::new());
                self.prompt_compares = true;
            }
            Command::Up | Command::Down | Command::PrevPage | Command::NextPage
                if self.focus == Focus::Detail =>
            {
                self.detail_scroll.on(command);
            }
            command if SCROLLING.contains(&command) => {
                let row = if self.filter.active() {
                    self.filter.target(command, self.cursor.selected)
                } else {
                    self.cursor.target(command, self.calls())
                };
                if let Some(row) = row {
                    self.select(row);
                }
            }
            Command::StartFilter => self.filter.typing = true,
            Command::ClearFilter => self.filter.clear(),
            Command::FocusNext | Command::FocusPrev => {
                self.focus = match self.focus {
                    Focus::Calls => Focus::Detail,
                    Focus::Detail => Focus::Calls,
                }
            }
            Command::OpenLog => self.prompt = Some(String::new()),
            Command::ReplayCall => self.run_selected(ctx),
            Command::ReplayAll => self.run_all(ctx),
            Command::StopReplay => self.stop_run(ctx),
            Command::NextDifference => self.jump_difference(true, ctx),
            Command::PrevDifference => self.jump_difference(false, ctx),
            Command::OpenInPlans => self.open_plan(ctx),
            Command::CopyTraceId => self.copy_trace(ctx),
            Command::ToggleTimeline => {
                self.timeline = match self.timeline {
                    Some(_) => None,
                    None => Some(timeline::Timeline::new()),
                };
            }
            Command::ZoomIn | Command::ZoomOut | Command::PanLeft | Command::PanRight => {
                if let Some(tl) = &mut self.timeline {
                    tl.run(command, self.cursor.selected);
                }
            }
            _ => {}
        }
    }

    fn handle_key(&mut self, key: &KeyEvent, ctx: &mut Ctx<'_>) -> EventState {
        if self.prompt.is_some() {
            return self.prompt_key(key, ctx);
        }
        if self.filter.typing {
            return self.filter_key(key, ctx);
        }
        self.run_key(key, ctx)
    }

    /// The outcomes a run of every call sent.
    fn poll(&mut self, _: &mut Ctx<'_>) -> bool {
        self.drain()
    }

    fn on_reply(&mut self, reply: &Reply, ctx: &mut Ctx<'_>) -> bool {
        let Some(log) = &mut self.log else {
            return false;
        };
        if let Some(row) = log.single.remove(&reply.id) {
            log.drain(&self.ignore);
            match &reply.result {
                Ok(_) => {
                    let verdict = log.verdicts.get(&row);
                    let total = verdict.map_or(0, |v| v.total);
                    let skipped = verdict.and_then(|v| v.skipped.as_ref());
                    ctx.status.info(if let Some(why) = skipped {
                        format!("call {}: not run again: {}", row + 1, why.reason())
                    } else if total == 0 {
                        format!("call {}: the same answer as recorded", row + 1)
                    } else {
                        format!(
                            "call {}: {total} difference{} from the recording",
                            row + 1,
                            if total == 1 { "" } else { "s" }
                        )
                    });
                }
                Err(e) => ctx.status.tool_error("running the call again", e),
            }
            return true;
        }
        if log.run.as_ref().is_some_and(|r| r.id == reply.id) {
            let run = log.run.take();
            log.drain(&self.ignore);
            match &reply.result {
                Ok(v) => ctx.status.info(format!(
                    "ran {} of {} calls again: {} differ",
                    v["ran"],
                    run.map_or(0, |r| r.total),
                    log.different
                )),
                Err(e) => ctx.status.tool_error("running the log again", e),
            }
            return true;
        }
        false
    }

    fn scope(&self) -> Scope {
        if self.prompt.is_some() {
            return Scope::ReplayPrompt;
        }
        if self.filter.typing {
            return Scope::ReplayFilter;
        }
        match self.focus {
            Focus::Calls => Scope::Replay,
            Focus::Detail => Scope::ReplayDetail,
        }
    }

    fn captures_text(&self) -> bool {
        self.prompt.is_some() || self.filter.typing
    }

    fn commands(&self) -> Vec<Command> {
        if let Some(p) = &self.prompt {
            let mut out = vec![Command::OpenLogFile, Command::Close];
            if !p.is_empty() {
                out.extend([Command::EraseChar, Command::ClearText]);
            }
            return out;
        }
        if self.compare.is_some() {
            return vec![
                Command::Up,
                Command::Down,
                Command::NextPage,
                Command::PrevPage,
                Command::Top,
                Command::Bottom,
                Command::NextDifference,
                Command::PrevDifference,
                Command::CompareLogs,
            ];
        }
        if self.filter.typing {
            let mut out = vec![Command::KeepFilter, Command::DropFilter];
            if !self.filter.text.is_empty() {
                out.extend([Command::EraseChar, Command::ClearText]);
            }
            return out;
        }
        let Some(log) = &self.log else {
            return vec![Command::OpenLog];
        };
        let mut commands = vec![Command::Up, Command::Down, Command::OpenLog];
        if self.focus == Focus::Calls {
            commands.extend([Command::Top, Command::Bottom]);
        }
        commands.extend([
            Command::NextPage,
            Command::PrevPage,
            Command::FocusNext,
            Command::FocusPrev,
        ]);
        if !log.index.is_empty() {
            commands.push(Command::ReplayCall);
            if log.run.is_none() {
                commands.push(Command::ReplayAll);
            }
            commands.push(Command::OpenInPlans);
        }
        if log.run.is_some() {
            commands.push(Command::StopReplay);
        }
        if log.different > 0 {
            commands.extend([Command::NextDifference, Command::PrevDifference]);
        }
        if self.selected_trace().is_some() {
            commands.push(Command::CopyTraceId);
        }

        if !log.index.is_empty() {
            commands.push(Command::ToggleTimeline);
            if self.timeline.is_some() && self.focus == Focus::Calls {
                commands.extend([
                    Command::ZoomIn,
                    Command::ZoomOut,
                    Command::PanLeft,
                    Command::PanRight,
                ]);
            }
        }
        if !log.index.is_empty() {
            commands.extend([Command::StartFilter, Command::CompareLogs]);
        }
        if self.filter.active() {
            commands.push(Command::ClearFilter);
        }
        commands
    }

    fn render(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let area = if let Some(text) = &self.prompt
            && area.height > 1
        {
            let [main, line] =
                Layout::vertical([Constraint::Min(0), Constraint::Length(1)]).areas(area);
            let accept = ui
                .keymap
                .key_label(Scope::ReplayPrompt, Command::OpenLogFile)
                .unwrap_or_default();
            let (label, what) = if self.prompt_compares {
                (
                    " compare with › ",
                    "compares the open log with this one, side by side",
                )
            } else {
                (
                    " open log › ",
                    "opens a session log (JSON Lines from --record)",
                )
            };
            Line::from(vec![
                Span::styled(label, theme.style(Role::Prompt)),
                Span::styled(text.clone(), theme.style(Role::Text)),
                Span::styled("█", theme.style(Role::Prompt)),
                Span::styled(format!("   {accept} {what}"), theme.style(Role::Muted)),
            ])
            .render(line, buf);
            main
        } else if self.filter.typing && area.height > 1 {
            let [main, line] =
                Layout::vertical([Constraint::Min(0), Constraint::Length(1)]).areas(area);
            self.render_filter_prompt(line, buf, ui);
            main
        } else {
            area
        };
        if self.log.is_none() {
            let block = Block::bordered()
                .border_type(BorderType::Rounded)
                .border_style(theme.style(Role::Border))
                .title(Span::styled(" Replay ", theme.style(Role::Title)));
            Paragraph::new(vec![
                Line::from(Span::styled(
                    "No session log is open.",
                    theme.style(Role::Text),
                )),
                Line::default(),
                Line::from(Span::styled(
                    format!(
                        "Record one with --record FILE (headless or in the console), then press \
                         {} here and type its path, or start with: structs-console replay FILE",
                        ui.keymap
                            .key_label(Scope::Replay, Command::OpenLog)
                            .unwrap_or_default()
                    ),
                    theme.style(Role::Muted),
                )),
            ])
            .wrap(ratatui::widgets::Wrap { trim: true })
            .block(block)
            .render(area, buf);
            return;
        }
        self.drain();
        if let Some(c) = &mut self.compare {
            c.render(area, buf, ui);
            return;
        }
        let [list_area, detail_area] = if area.width >= 100 {
            Layout::horizontal([Constraint::Percentage(42), Constraint::Fill(1)]).areas(area)
        } else {
            Layout::vertical([Constraint::Percentage(45), Constraint::Fill(1)]).areas(area)
        };
        if self.timeline.is_some() {
            self.render_timeline(list_area, buf, ui);
        } else {
            self.render_list(list_area, buf, ui);
        }
        self.load_shown();
        self.render_detail(detail_area, buf, ui);
    }
}

#[cfg(test)]
mod tests;
