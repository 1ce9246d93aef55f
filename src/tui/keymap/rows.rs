//! The console's keys, one row each: where a key is read, the keys, the command they
//! run, the hint bar's label and the help overlay's line, side by side. Everything
//! else the keymap answers (which command a key runs, the hint bar, the help overlay,
//! what `tests/docs_keys.rs` checks the console guide against) is read from here.
//!
//! A row may name several scopes when the keys, hint and help are the same in each.
//! Order matters within a scope: the help overlay lists its lines in row order, a
//! command's first key is the one hints and messages name, and a key bound to two
//! commands of one scope (Left in the trees: collapse, else back) tries them in row
//! order.

use crossterm::event::KeyCode;

use super::key::KeyBinding;
use super::{Command, Scope};
use crate::tui::tab::Tab;

/// One row of the keymap.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Row {
    /// Where the keys are read.
    pub scopes: &'static [Scope],
    /// The keys, the first the one hints and messages name.
    pub keys: &'static [KeyBinding],
    pub command: Command,
    /// The hint bar's label; commands sharing a label share one hint (`↑↓ move`).
    /// Empty keeps the command out of the hint bar (it is still in help).
    pub hint: &'static str,
    /// What the command does there, for the help overlay; rows of one scope with
    /// the same text share one help line (`+/>/]`).
    pub help: &'static str,
}

const fn row(
    scopes: &'static [Scope],
    keys: &'static [KeyBinding],
    command: Command,
    hint: &'static str,
    help: &'static str,
) -> Row {
    Row {
        scopes,
        keys,
        command,
        hint,
        help,
    }
}

const fn key(code: KeyCode) -> KeyBinding {
    KeyBinding::key(code)
}

const fn ch(c: char) -> KeyBinding {
    KeyBinding::ch(c)
}

const fn ctrl(c: char) -> KeyBinding {
    KeyBinding::ctrl(c)
}

const UP: &[KeyBinding] = &[key(KeyCode::Up), ch('k')];
const DOWN: &[KeyBinding] = &[key(KeyCode::Down), ch('j')];
const TOP: &[KeyBinding] = &[key(KeyCode::Home), ch('g')];
const BOTTOM: &[KeyBinding] = &[key(KeyCode::End), ch('G')];
/// Into what is selected: Enter, or right as in the trees.
const FORWARD: &[KeyBinding] = &[key(KeyCode::Enter), key(KeyCode::Right), ch('l')];
const ENTER: &[KeyBinding] = &[key(KeyCode::Enter)];
const ESC: &[KeyBinding] = &[key(KeyCode::Esc)];
const TAB: &[KeyBinding] = &[key(KeyCode::Tab)];
const BACKTAB: &[KeyBinding] = &[key(KeyCode::BackTab)];
const BKSP: &[KeyBinding] = &[key(KeyCode::Backspace)];
const PGDN: &[KeyBinding] = &[key(KeyCode::PageDown)];
const PGUP: &[KeyBinding] = &[key(KeyCode::PageUp)];
const RIGHT: &[KeyBinding] = &[key(KeyCode::Right), ch('l')];
const LEFT: &[KeyBinding] = &[key(KeyCode::Left), ch('h')];
/// Back an area from a tree: Esc, or Left where Collapse has nothing to close.
const TREE_BACK: &[KeyBinding] = &[key(KeyCode::Esc), key(KeyCode::Left), ch('h')];

/// The help line of the tab keys. One line per title would not fit the overlay; the
/// first and last name the range (a test checks it against [`Tab::ALL`]).
pub(crate) const SHOW_TAB_HELP: &str = "Show a tab by its number (Entities … Live)";

use Command as C;
use Scope as X;

// The scopes that share rows.
const ENTITY_AREAS: &[Scope] = &[X::Kinds, X::List, X::Tree, X::References];
const ENTITY_TREES: &[Scope] = &[X::Tree, X::References];
const ENTITY_PICKS: &[Scope] = &[X::List, X::Tree, X::References];
const HANDLE_AREAS: &[Scope] = &[X::Handles, X::HandleData];
const ACTION_LISTS: &[Scope] = &[X::ActionMenu, X::ActionTypes];
const REPLAY_AREAS: &[Scope] = &[X::Replay, X::ReplayDetail];
const LIVE_AREAS: &[Scope] = &[X::Live, X::LiveDetail, X::LiveReferences];
const LIVE_TREES: &[Scope] = &[X::LiveDetail, X::LiveReferences];
const SERVER_VIEWS: &[Scope] = &[
    X::ServerTools,
    X::ServerResult,
    X::ServerLog,
    X::ServerResources,
    X::ServerPrompts,
    X::ServerLogging,
    X::ServerRequests,
    X::ServerRoots,
    X::ServerHistory,
];
const SERVER_LISTS: &[Scope] = &[
    X::ServerTools,
    X::ServerLog,
    X::ServerResources,
    X::ServerPrompts,
    X::ServerLogging,
    X::ServerRequests,
    X::ServerRoots,
    X::ServerHistory,
];
const SERVER_SECTIONS: &[Scope] = &[
    X::ServerResources,
    X::ServerPrompts,
    X::ServerLogging,
    X::ServerRequests,
    X::ServerRoots,
    X::ServerHistory,
];
const SERVER_PAGED: &[Scope] = &[X::ServerResult, X::ServerLog];
const SERVER_PAGES: &[Scope] = &[X::ServerResources, X::ServerPrompts];
const SERVER_TYPING: &[Scope] = &[
    X::ServerForm,
    X::ServerArgs,
    X::ServerElicit,
    X::ServerReply,
    X::ServerRootInput,
];
const SERVER_FORMS: &[Scope] = &[X::ServerArgs, X::ServerElicit];
const PLAN_AREAS: &[Scope] = &[X::Plans, X::PlanResult];
const TASK_LISTS: &[Scope] = &[X::PowTasks, X::PlanTasks];
const DOCS_AREAS: &[Scope] = &[X::DocsList, X::DocsView];
/// The lists and trees whose Up, Down, first and last rows read alike: one set of
/// rows for them all.
const MOVING: &[Scope] = &[
    X::Kinds,
    X::List,
    X::Tree,
    X::References,
    X::Handles,
    X::HandleData,
    X::Pow,
    X::ActionMenu,
    X::ActionTypes,
    X::Plans,
    X::PlanResult,
    X::PowTasks,
    X::PlanTasks,
    X::PlanPick,
];

/// Every key of the console.
#[rustfmt::skip]
pub(crate) const ROWS: &[Row] = &[
    // Everywhere, unless the focused area uses the key.
    row(&[X::Global], &[ch('q'), ctrl('c')], C::Quit, "quit", "Quit the console"),
    row(&[X::Global], &[ch('?')], C::ToggleHelp, "help", "Show or hide the keys of the focused area"),
    row(&[X::Global], &[ch('P')], C::ToggleClock, "", "Pause or resume the block clock (sim source)"),
    row(&[X::Global], &[ch('+')], C::StepBlocks(1), "", "Step the block clock by 1, 10 or 100 blocks (sim source)"),
    row(&[X::Global], &[ch('>')], C::StepBlocks(10), "", "Step the block clock by 1, 10 or 100 blocks (sim source)"),
    row(&[X::Global], &[ch(']')], C::StepBlocks(100), "", "Step the block clock by 1, 10 or 100 blocks (sim source)"),
    row(&[X::Global], &[ch('e')], C::ToggleEvents, "events", "Show or hide the live event log (newest on top)"),
    row(&[X::Global], &[ch('L')], C::ShowLogs, "", "Show the stderr lines kept off the screen"),
    row(&[X::Global], &[ch('S')], C::OpenSource, "source", "Switch the source: the embedded world or a REST node"),

    // The source dialog.
    row(&[X::SourceDialog], UP, C::Up, "choose", "Choose the embedded world or a REST node"),
    row(&[X::SourceDialog], DOWN, C::Down, "choose", "Choose the embedded world or a REST node"),
    row(&[X::SourceDialog], ENTER, C::Connect, "connect", "Connect to the chosen source (the current one stays if it fails)"),
    row(&[X::SourceDialog], ESC, C::Close, "close", "Close the dialog"),
    row(&[X::SourceDialog], BKSP, C::EraseChar, "erase", "Erase the last character"),
    row(&[X::SourceDialog], &[ctrl('u')], C::ClearText, "clear", "Erase all the text"),

    // A tab's number shows it.
    row(&[X::Global], &[ch('1')], C::ShowTab(Tab::Entities), "tabs", SHOW_TAB_HELP),
    row(&[X::Global], &[ch('2')], C::ShowTab(Tab::Handles), "tabs", SHOW_TAB_HELP),
    row(&[X::Global], &[ch('3')], C::ShowTab(Tab::Plans), "tabs", SHOW_TAB_HELP),
    row(&[X::Global], &[ch('4')], C::ShowTab(Tab::Pow), "tabs", SHOW_TAB_HELP),
    row(&[X::Global], &[ch('5')], C::ShowTab(Tab::Docs), "tabs", SHOW_TAB_HELP),
    row(&[X::Global], &[ch('6')], C::ShowTab(Tab::Replay), "tabs", SHOW_TAB_HELP),
    row(&[X::Global], &[ch('7')], C::ShowTab(Tab::Server), "tabs", SHOW_TAB_HELP),
    row(&[X::Global], &[ch('8')], C::ShowTab(Tab::Live), "tabs", SHOW_TAB_HELP),

    // The help overlay.
    row(&[X::Help], &[key(KeyCode::Esc), ch('?'), ch('q')], C::Close, "close", "Close this list"),

    // The stderr lines.
    row(&[X::Logs], &[key(KeyCode::Esc), ch('L'), ch('q')], C::Close, "close", "Close the lines"),
    row(&[X::Logs], UP, C::Up, "scroll", "Scroll to older lines"),
    row(&[X::Logs], DOWN, C::Down, "scroll", "Scroll to newer lines"),
    row(&[X::Logs], TOP, C::Top, "", "Go to the oldest line kept"),
    row(&[X::Logs], BOTTOM, C::Bottom, "", "Go to the newest line"),

    // Entities: kinds, list, entity tree and references.
    // The lists and trees that move alike.
    row(MOVING, UP, C::Up, "move", "Move up"),
    row(MOVING, DOWN, C::Down, "move", "Move down"),
    row(MOVING, TOP, C::Top, "", "Go to the first row"),
    row(MOVING, BOTTOM, C::Bottom, "", "Go to the last row"),
    row(ENTITY_AREAS, &[ch('/')], C::StartFilter, "filter", "Filter by id prefix; a whole id then Enter opens it"),
    row(ENTITY_AREAS, TAB, C::FocusNext, "next area", "Focus the next area (kinds, list, tree, references)"),
    row(ENTITY_AREAS, BACKTAB, C::FocusPrev, "", "Focus the previous area"),
    row(&[X::Kinds], FORWARD, C::ShowKind, "list", "Go to the selected kind's entities"),
    row(&[X::List], FORWARD, C::OpenEntity, "open", "Open the selected entity as a tree"),
    row(&[X::List], &[ch('n'), key(KeyCode::PageDown)], C::NextPage, "page", "Next page"),
    row(&[X::List], &[ch('p'), key(KeyCode::PageUp)], C::PrevPage, "page", "Previous page"),
    row(&[X::List], ESC, C::ClearFilter, "clear filter", "Clear the id filter"),
    row(&[X::List], LEFT, C::Back, "kinds", "Back to the kinds"),
    // Both trees move and open alike. Left at a top-level node that is not open goes
    // back an area (the entity tree to the list, the references to the entity tree),
    // as Left goes from the list to the kinds: Collapse is tried first, Back when it
    // is not available.
    row(ENTITY_TREES, RIGHT, C::Expand, "expand", "Expand; a field naming an entity fetches it in place"),
    row(ENTITY_TREES, LEFT, C::Collapse, "collapse", "Collapse, or go to the parent field"),
    row(ENTITY_TREES, ENTER, C::Toggle, "open/close", "Expand or collapse"),
    row(&[X::Tree], TREE_BACK, C::Back, "list", "Back to the entity list"),
    row(&[X::References], TREE_BACK, C::Back, "tree", "Back to the entity tree"),
    row(ENTITY_TREES, &[ch('d')], C::ReferenceDepth, "depth", "References: switch between depth 1 and 2"),
    row(ENTITY_TREES, &[ch('t')], C::ReferenceKinds, "kinds", "References: kind filter (all, then each kind found)"),

    // Entities: the id filter prompt.
    row(&[X::Filter], ENTER, C::KeepFilter, "done", "Keep the filter; a whole id opens that entity"),
    row(&[X::Filter], ESC, C::DropFilter, "clear", "Clear the filter and close the prompt"),
    row(&[X::Filter], BKSP, C::EraseChar, "erase", "Erase the last character"),

    // Handles: the list of handles and the tree of a fetched page. Both page, choose
    // fields and verbosity, and copy; the tree moves like the others.
    row(HANDLE_AREAS, &[ch('n'), key(KeyCode::PageDown)], C::NextPage, "page", "Fetch the next page of the handle's data"),
    row(HANDLE_AREAS, &[ch('p'), key(KeyCode::PageUp)], C::PrevPage, "page", "Fetch the previous page of the handle's data"),
    row(HANDLE_AREAS, &[ch('f')], C::EditFields, "fields", "Choose the fields of fetched pages (comma-separated paths)"),
    row(HANDLE_AREAS, &[ch('v')], C::CycleVerbosity, "verbosity", "Next verbosity of fetched pages: raw, detailed, compact, summary"),
    row(HANDLE_AREAS, &[ch('c')], C::CopyJson, "copy", "Copy the fetched page's JSON to the clipboard"),
    row(HANDLE_AREAS, &[ch('r')], C::Refresh, "refresh", "List the live handles again"),
    row(HANDLE_AREAS, TAB, C::FocusNext, "next area", "Focus the other area (handles, data)"),
    row(HANDLE_AREAS, BACKTAB, C::FocusPrev, "", "Focus the previous area"),
    row(&[X::Handles], FORWARD, C::Inspect, "fetch", "Fetch the selected handle's first page as a tree"),
    row(&[X::HandleData], RIGHT, C::Expand, "expand", "Expand; a field naming an entity fetches it in place"),
    row(&[X::HandleData], LEFT, C::Collapse, "collapse", "Collapse, or go to the parent field"),
    row(&[X::HandleData], ENTER, C::Toggle, "open/close", "Expand or collapse"),
    row(&[X::HandleData], TREE_BACK, C::Back, "handles", "Back to the handles"),

    // Entities: a proof-of-work job for what is selected.
    row(ENTITY_PICKS, &[ch('w')], C::PowJob, "pow job", "Proof-of-work job for the selected struct or fleet"),

    // PoW: the jobs and the new-job prompt.
    row(&[X::Pow], &[ch('n')], C::NewJob, "new job", "New job: ENTITY [build|mine|refine|raid] [block_start= age= difficulty= threads=]"),
    row(&[X::Pow], &[ch('x')], C::CancelJob, "cancel job", "Cancel the selected job (stops its search)"),
    row(&[X::Pow], &[ch('c')], C::CopyProof, "copy", "Copy the found proof (input, nonce, hash) as JSON"),
    row(&[X::Pow], TAB, C::FocusNext, "tasks", "Focus the tasks MCP servers run (shown when there are any)"),
    row(&[X::PowPrompt], ENTER, C::PlanJob, "done", "Plan the job; it starts when its difficulty is 10 or less"),
    row(&[X::PowPrompt], ESC, C::Close, "clear", "Close the prompt"),
    row(&[X::PowPrompt], BKSP, C::EraseChar, "erase", "Erase the last character"),
    row(&[X::PowPrompt], &[key(KeyCode::Up)], C::Up, "work", "Fill in the work above from the list of work to prove now"),
    row(&[X::PowPrompt], &[key(KeyCode::Down)], C::Down, "work", "Fill in the work below from the list of work to prove now"),

    // Entities: the action dialog on what is selected, one scope per stage.
    row(ENTITY_PICKS, &[ch('a')], C::OpenActions, "actions", "Actions: build here, complete build, mine, attack this"),
    row(ACTION_LISTS, ESC, C::Close, "close", "Close the action dialog"),
    row(&[X::ActionMenu], ENTER, C::TakeAction, "choose", "Take the selected action"),
    row(&[X::ActionTypes], ENTER, C::SendAction, "send", "Send the tool call shown"),
    row(&[X::ActionForm], ENTER, C::SendAction, "send", "Send the tool call shown"),
    row(&[X::ActionForm], ESC, C::Close, "close", "Close the action dialog"),
    row(&[X::ActionForm], TAB, C::CycleWeapon, "weapon", "Switch the weapon: primary or secondary"),
    row(&[X::ActionForm], BKSP, C::EraseChar, "erase", "Erase the last character"),
    row(&[X::ActionResult], UP, C::Up, "scroll", "Scroll up"),
    row(&[X::ActionResult], DOWN, C::Down, "scroll", "Scroll down"),
    row(&[X::ActionResult], &[key(KeyCode::Esc), key(KeyCode::Enter)], C::Close, "close", "Close the action dialog"),
    row(&[X::ActionResult], &[key(KeyCode::Backspace), key(KeyCode::Left)], C::EditAction, "edit", "Back to the form, to change it and send again"),
    row(&[X::ActionResult], &[ch('w')], C::PowJob, "pow job", "Start the proof-of-work job the answer calls for (PoW tab)"),

    // Replay: the calls and the answers share the run keys.
    row(&[X::Replay], UP, C::Up, "move", "Move up"),
    row(&[X::ReplayDetail], UP, C::Up, "move", "Scroll the answers up"),
    row(&[X::Replay], DOWN, C::Down, "move", "Move down"),
    row(&[X::ReplayDetail], DOWN, C::Down, "move", "Scroll the answers down"),
    row(&[X::Replay], PGDN, C::NextPage, "page", "Down a screen of calls"),
    row(&[X::ReplayDetail], PGDN, C::NextPage, "page", "Scroll the answers down ten lines"),
    row(&[X::Replay], PGUP, C::PrevPage, "page", "Up a screen of calls"),
    row(&[X::ReplayDetail], PGUP, C::PrevPage, "page", "Scroll the answers up ten lines"),
    row(REPLAY_AREAS, TAB, C::FocusNext, "next area", "Focus the other area (calls, answers)"),
    row(REPLAY_AREAS, BACKTAB, C::FocusPrev, "", "Focus the previous area"),
    row(REPLAY_AREAS, &[ch('r')], C::ReplayCall, "run again", "Run the selected call again on the current source and compare"),
    row(REPLAY_AREAS, &[ch('a')], C::ReplayAll, "run all", "Run every call again in order, each session as its own client, and compare"),
    row(REPLAY_AREAS, &[ch('x')], C::StopReplay, "stop", "Stop running the calls again"),
    row(REPLAY_AREAS, &[ch('n')], C::NextDifference, "differences", "Go to the next call whose answer differs"),
    row(REPLAY_AREAS, &[ch('p')], C::PrevDifference, "differences", "Go to the previous call whose answer differs"),
    row(REPLAY_AREAS, &[ch('o')], C::OpenInPlans, "plan", "Open the selected structs_plan_execute call in Plans (else go to the next one)"),
    row(&[X::Replay], TOP, C::Top, "", "Go to the first row"),
    row(&[X::Replay], BOTTOM, C::Bottom, "", "Go to the last row"),
    row(REPLAY_AREAS, &[ch('f')], C::OpenLog, "open log", "Open a session log (a --record file) by its path"),
    row(REPLAY_AREAS, &[ch('v')], C::ToggleTimeline, "timeline", "Show the calls on a time axis, in lanes when at once (or as a list again)"),
    row(&[X::Replay], &[ch('+'), ch('=')], C::ZoomIn, "zoom", "Timeline: half the time in view, around the selected call"),
    row(&[X::Replay], &[ch('-')], C::ZoomOut, "", "Timeline: twice the time in view"),
    row(&[X::Replay], LEFT, C::PanLeft, "pan", "Timeline: a quarter of the view earlier"),
    row(&[X::Replay], RIGHT, C::PanRight, "", "Timeline: a quarter of the view later"),
    row(REPLAY_AREAS, &[ch('d')], C::CompareLogs, "compare", "Compare with another session log: type its path; the two runs side by side, aligned as diff aligns them (d again: the log alone)"),
    row(REPLAY_AREAS, &[ch('/')], C::StartFilter, "filter", "Filter the calls: the filter language of diff and check (tool:GLOB status:error dur>200ms bytes>10k code:X rounds>0 text:WORD, words); the count shown says how many match"),
    row(REPLAY_AREAS, &[ch('C')], C::ClearFilter, "clear filter", "Show every call again"),
    row(&[X::ReplayFilter], ENTER, C::KeepFilter, "done", "Keep the filter and close the prompt"),
    row(&[X::ReplayFilter], ESC, C::DropFilter, "clear", "Clear the filter and close the prompt"),
    row(&[X::ReplayFilter], BKSP, C::EraseChar, "erase", "Erase the last character"),
    row(&[X::ReplayFilter], &[ctrl('u')], C::ClearText, "clear", "Erase all the text"),
    row(&[X::ReplayPrompt], ENTER, C::OpenLogFile, "open", "Open the log (an empty prompt opens nothing)"),
    row(&[X::ReplayPrompt], ESC, C::Close, "close", "Close the prompt"),
    row(&[X::ReplayPrompt], BKSP, C::EraseChar, "erase", "Erase the last character"),
    row(&[X::ReplayPrompt], &[ctrl('u')], C::ClearText, "clear", "Erase all the text"),

    // Live: another server's calls as they happen.
    row(&[X::Live], UP, C::Up, "move", "Move up (stops following the newest call)"),
    row(LIVE_TREES, UP, C::Up, "move", "Move up"),
    row(&[X::Live], DOWN, C::Down, "move", "Move down (on the newest call, follows again)"),
    row(LIVE_TREES, DOWN, C::Down, "move", "Move down"),
    row(LIVE_AREAS, PGUP, C::PrevPage, "page", "Up a screen"),
    row(LIVE_AREAS, PGDN, C::NextPage, "page", "Down a screen"),
    row(&[X::Live], TOP, C::Top, "", "Go to the first call"),
    row(LIVE_TREES, TOP, C::Top, "", "Go to the first row"),
    row(&[X::Live], BOTTOM, C::Bottom, "", "Go to the newest call, and follow"),
    row(LIVE_TREES, BOTTOM, C::Bottom, "", "Go to the last row"),
    row(&[X::Live], &[key(KeyCode::Enter), key(KeyCode::Tab)], C::FocusNext, "open", "Show the selected call: focus its arguments and answer"),
    row(LIVE_TREES, TAB, C::FocusNext, "next area", "Focus the next area (calls, the call, its references)"),
    row(LIVE_AREAS, BACKTAB, C::FocusPrev, "", "Focus the previous area"),
    // The call and its references move and open like the other trees; Left at a
    // top-level node that is not open goes back to the calls.
    row(LIVE_TREES, RIGHT, C::Expand, "expand", "Expand; a field naming an entity opens it (from the answer's references, else fetched on this console's core)"),
    row(LIVE_TREES, LEFT, C::Collapse, "collapse", "Collapse, or go to the parent field"),
    row(LIVE_TREES, ENTER, C::Toggle, "open/close", "Expand or collapse"),
    row(LIVE_TREES, TREE_BACK, C::Back, "back", "Back to the calls"),
    row(LIVE_AREAS, &[ch('f')], C::ToggleFollow, "follow", "Follow the newest call as calls come, or pause on the one selected"),
    row(LIVE_AREAS, &[ch('/')], C::StartFilter, "filter", "Filter the calls: #session, and the filter language of diff and check (tool:GLOB status:error dur>200ms code:X, words)"),
    row(LIVE_AREAS, &[ch('C')], C::ClearFilter, "clear filter", "Show every call again"),
    row(LIVE_AREAS, &[ch('v')], C::ToggleTimeline, "timeline", "Show the calls the filter lets through on a time axis, in lanes when at once (or as a list again)"),
    row(&[X::Live], &[ch('+'), ch('=')], C::ZoomIn, "zoom", "Timeline: half the time in view, around the selected call"),
    row(&[X::Live], &[ch('-')], C::ZoomOut, "", "Timeline: twice the time in view"),
    row(&[X::Live], LEFT, C::PanLeft, "pan", "Timeline: a quarter of the view earlier"),
    row(&[X::Live], RIGHT, C::PanRight, "", "Timeline: a quarter of the view later"),
    row(LIVE_AREAS, &[ch('b')], C::ToggleBreakpoint, "breakpoint", "Hold the selected call's tool at a breakpoint from now on, or stop holding it"),
    row(LIVE_AREAS, &[ch('A')], C::ToggleAnswerBreakpoint, "break answers", "Hold the answers to the selected call's tool at a breakpoint from now on (to change them on their way to the agent), or stop"),
    row(LIVE_AREAS, &[ch('B')], C::BreakAll, "break all", "Hold every call at a breakpoint from now on, or stop"),
    row(LIVE_AREAS, &[ch('c')], C::ContinueHeld, "continue", "Let the held call go on as it is"),
    row(LIVE_AREAS, &[ch('t')], C::CopyTraceId, "copy trace", "Copy the selected call's trace id (the OpenTelemetry trace it ran in), to find it in a trace backend"),
    row(LIVE_AREAS, &[ch('e')], C::EditHeld, "edit", "Edit the held call's arguments (a held answer: the answer), then send it on"),
    row(LIVE_AREAS, &[ch('a')], C::AnswerHeld, "answer", "Answer the held call without the server: type the result"),
    row(LIVE_AREAS, &[ch('E')], C::ErrorHeld, "error", "Answer the held call with an error: type its code, message and details"),
    row(LIVE_AREAS, &[ch('x')], C::DropHeld, "drop", "Drop the held call: the agent gets TOOL_CANCELLED"),
    row(&[X::LiveEdit], &[ctrl('s')], C::SendEdit, "send", "Send it (JSON, checked against the tool's schema when the proxy knows it)"),
    row(&[X::LiveEdit], ESC, C::Back, "cancel", "Leave the editor; the call stays held"),
    row(&[X::LiveEdit], &[key(KeyCode::Up)], C::Up, "", "The line above"),
    row(&[X::LiveEdit], &[key(KeyCode::Down)], C::Down, "", "The line below"),
    row(&[X::LiveEdit], &[key(KeyCode::Left)], C::CursorLeft, "", "One character left"),
    row(&[X::LiveEdit], &[key(KeyCode::Right)], C::CursorRight, "", "One character right"),
    row(&[X::LiveEdit], &[key(KeyCode::Home)], C::LineStart, "", "The line's start"),
    row(&[X::LiveEdit], &[key(KeyCode::End)], C::LineEnd, "", "The line's end"),
    row(&[X::LiveEdit], ENTER, C::NewLine, "", "Break the line"),
    row(&[X::LiveEdit], BKSP, C::EraseChar, "erase", "Erase the character before the cursor (at a line's start, join it to the line above)"),
    row(&[X::LiveEdit], &[key(KeyCode::Delete)], C::DeleteChar, "", "Erase the character under the cursor (at a line's end, join the line below to it)"),
    row(LIVE_AREAS, &[ch('r')], C::RerunCall, "run again", "Run the selected call again on this console's core, its answer under the recorded one"),
    row(LIVE_AREAS, &[ch('o')], C::OpenInPlans, "plan", "Open the selected structs_plan_execute call in Plans, to step through it"),
    row(LIVE_AREAS, &[ch('H')], C::Inspect, "fetch handle", "Fetch the result handle of the selected call's answer (over 25 KB): its first page, as a tree, from the watched server through a proxy, else on this console's core"),
    row(LIVE_AREAS, &[ch('R')], C::OpenInReplay, "replay", "Open the selected call in Replay: in the log the calls come from, else in the calls seen so far written to a session log"),
    row(LIVE_AREAS, &[ch('w')], C::OpenLog, "watch", "Watch another endpoint or session log (empty: the newest live endpoint)"),
    row(&[X::LiveFilter], ENTER, C::KeepFilter, "done", "Keep the filter and close the prompt"),
    row(&[X::LiveFilter], ESC, C::DropFilter, "clear", "Clear the filter and close the prompt"),
    row(&[X::LivePrompt], ENTER, C::OpenLogFile, "watch", "Watch it: a control endpoint's socket or a session log (empty: the newest live endpoint)"),
    row(&[X::LivePrompt], ESC, C::Close, "close", "Close the prompt"),
    row(&[X::LiveFilter, X::LivePrompt], BKSP, C::EraseChar, "erase", "Erase the last character"),
    row(&[X::LiveFilter, X::LivePrompt], &[ctrl('u')], C::ClearText, "clear", "Erase all the text"),

    // Server: tools, a call's form and answer, the other sections, notifications and
    // traffic.
    row(&[X::ServerTools], UP, C::Up, "move", "Move up"),
    row(&[X::ServerResult], UP, C::Up, "move", "Scroll up"),
    row(&[X::ServerLog], UP, C::Up, "move", "Move up"),
    row(SERVER_SECTIONS, UP, C::Up, "move", "Move up"),
    row(SERVER_LISTS, DOWN, C::Down, "move", "Move down"),
    row(&[X::ServerResult], DOWN, C::Down, "move", "Scroll down"),
    row(SERVER_VIEWS, TOP, C::Top, "", "Go to the first row"),
    row(&[X::ServerTools, X::ServerResult], BOTTOM, C::Bottom, "", "Go to the last row"),
    row(SERVER_SECTIONS, BOTTOM, C::Bottom, "", "Go to the last row"),
    row(&[X::ServerLog], BOTTOM, C::Bottom, "", "Go to the newest and follow new ones"),
    row(SERVER_VIEWS, TAB, C::FocusNext, "view", "Next view: tools, resources, prompts, log, requests, roots, history, notifications, traffic"),
    row(SERVER_VIEWS, BACKTAB, C::FocusPrev, "", "Previous view"),
    row(&[X::ServerTools], FORWARD, C::OpenForm, "call", "Call the selected tool: a form from its input schema"),
    row(SERVER_PAGED, PGDN, C::NextPage, "page", "Down a screen"),
    row(SERVER_PAGED, PGUP, C::PrevPage, "page", "Up a screen"),
    row(&[X::ServerResult], &[key(KeyCode::Enter), ch('e')], C::EditCall, "edit", "Back to the form, to change it and send again"),
    row(&[X::ServerResult], &[ch('x')], C::CancelCall, "cancel", "Cancel the call while it runs (the server is told)"),
    row(&[X::ServerResult], ESC, C::Back, "back", "Back to the list"),
    row(&[X::ServerLog], ENTER, C::ToggleMessage, "whole", "Show the selected message whole, pretty-printed, or hide it"),
    row(&[X::ServerTools, X::ServerLog], &[ch('/')], C::StartFilter, "search", "Search: a tool by name; the messages by method, target (tool, prompt, resource) or text"),
    row(&[X::ServerLog], &[ch('h')], C::ToggleOwnTraffic, "hide own", "Hide or show the console's own polling (the block height, the task and handle lists)"),
    row(&[X::ServerSearch], ENTER, C::KeepFilter, "done", "Keep the search and close the prompt"),
    row(&[X::ServerSearch], ESC, C::DropFilter, "clear", "Clear the search and close the prompt"),
    row(&[X::ServerSearch], BKSP, C::EraseChar, "erase", "Erase the last character"),
    row(&[X::ServerSearch], &[ctrl('u')], C::ClearText, "clear", "Erase all the text"),
    row(&[X::ServerLog], ESC, C::Back, "tools", "Back to the tools"),
    row(&[X::ServerForm], &[key(KeyCode::Up), key(KeyCode::BackTab)], C::Up, "move", "The field above"),
    row(&[X::ServerForm], &[key(KeyCode::Down), key(KeyCode::Tab)], C::Down, "move", "The field below"),
    row(&[X::ServerForm], ENTER, C::CallTool, "call", "Call the tool with these arguments (empty fields are left out)"),
    row(SERVER_FORMS, &[key(KeyCode::Up), key(KeyCode::BackTab)], C::Up, "move", "The field above"),
    row(SERVER_FORMS, &[key(KeyCode::Down), key(KeyCode::Tab)], C::Down, "move", "The field below"),
    row(&[X::ServerArgs], ENTER, C::SubmitArgs, "send", "Send: read the resource, or get the prompt (empty fields are left out)"),
    row(&[X::ServerArgs], &[ctrl('n')], C::NextCompletion, "complete", "Fill the field with the server's next completion"),
    row(&[X::ServerElicit], ENTER, C::AcceptRequest, "accept", "Accept, sending the values filled in (empty fields are left out)"),
    row(&[X::ServerElicit], &[ctrl('d')], C::DeclineRequest, "decline", "Decline: the user says no"),
    row(&[X::ServerElicit], &[ctrl('x')], C::CancelRequest, "cancel", "Cancel: the user dismissed the form"),
    row(&[X::ServerReply], ENTER, C::SendReply, "send", "Send the reply typed as the model's answer"),
    row(&[X::ServerReply], &[ctrl('r')], C::RejectRequest, "reject", "Reject the request (the server gets an error)"),
    row(&[X::ServerRootInput], ENTER, C::ConfirmRoot, "add", "Add the directory typed as a root"),
    row(SERVER_TYPING, ESC, C::Back, "back", "Back, keeping what was typed (a request stays waiting)"),
    row(SERVER_TYPING, BKSP, C::EraseChar, "erase", "Erase the last character"),
    row(SERVER_TYPING, &[ctrl('u')], C::ClearText, "clear", "Erase all the text"),
    row(&[X::ServerResources], FORWARD, C::ReadResource, "read", "Read the selected resource; on a template, fill in its variables first"),
    row(&[X::ServerResources], &[ch('s')], C::ToggleSubscribe, "subscribe", "Subscribe to the selected resource's updates, or unsubscribe"),
    row(SERVER_PAGES, &[ch('n')], C::NextListPage, "more", "Ask for the next page of the list"),
    row(SERVER_PAGES, &[ch('r')], C::Relist, "relist", "List again from the first page"),
    row(&[X::ServerPrompts], FORWARD, C::GetPrompt, "get", "Get the selected prompt, first filling in its arguments"),
    row(&[X::ServerLogging], ENTER, C::SetLogLevel, "set level", "Ask the server to send log messages at the selected level and above"),
    row(&[X::ServerLogging], &[ch('f')], C::CycleLogFilter, "filter", "Show only the messages at this level or above: the next level"),
    row(&[X::ServerRequests], FORWARD, C::AnswerRequest, "answer", "Answer the selected request: type a reply, or fill in the form"),
    row(&[X::ServerRoots], &[ch('a')], C::AddRoot, "add", "Type a directory to offer as a root"),
    row(&[X::ServerRoots], &[ch('d')], C::RemoveRoot, "remove", "Stop offering the selected root"),
    row(&[X::ServerHistory], FORWARD, C::ShowCall, "show", "Show the selected call's arguments, answer and time"),
    row(&[X::ServerHistory], &[ch('r')], C::RerunCall, "re-run", "Call it again with the same arguments"),
    row(SERVER_SECTIONS, ESC, C::Back, "tools", "Back to the tools"),
    row(&[X::Replay], ENTER, C::ReplayCall, "run again", "Run the selected call again on the current source and compare"),
    row(REPLAY_AREAS, &[ch('t')], C::CopyTraceId, "copy trace", "Copy the selected call's trace id (the OpenTelemetry trace it ran in), to find it in a trace backend"),

    // Plans: the steps and the selected step's result share the run keys; the result
    // moves and opens like the other trees.
    row(PLAN_AREAS, &[ch('r')], C::RunPlan, "run", "Run every remaining step (breakpoints are not stops)"),
    row(PLAN_AREAS, &[ch('s')], C::StepPlan, "step", "Run one step: the selected one if it is ready, else the next ready one"),
    row(PLAN_AREAS, &[ch('c')], C::ContinuePlan, "continue", "Continue: run steps until the next to start has a breakpoint"),
    row(PLAN_AREAS, &[ch('b')], C::ToggleBreakpoint, "breakpoint", "Set or clear a breakpoint on the selected step"),
    row(PLAN_AREAS, &[ch('R')], C::RetryStep, "retry", "Retry the selected failed step (a skipped one: the failure it waits on)"),
    row(PLAN_AREAS, &[ch('x')], C::CancelPlan, "cancel", "Cancel what is running"),
    row(PLAN_AREAS, &[ch('n')], C::RestartPlan, "new run", "New run: every step pending again, breakpoints kept"),
    row(PLAN_AREAS, &[ch('o')], C::OpenPlan, "open", "Open a plan file: a plan, a recorded structs_plan_execute call, or JSON Lines"),
    row(PLAN_AREAS, &[ch('w')], C::OpenWorkflow, "workflows", "Open a shipped workflow with its example inputs, or the example plan"),
    row(PLAN_AREAS, TAB, C::FocusNext, "next area", "Focus the next area (steps, result, tasks)"),
    row(PLAN_AREAS, BACKTAB, C::FocusPrev, "", "Focus the previous area"),
    row(&[X::Plans], FORWARD, C::FocusNext, "next area", "Focus the next area (steps, result, tasks)"),
    row(&[X::PlanResult], RIGHT, C::Expand, "expand", "Expand; a field naming an entity fetches it in place"),
    row(&[X::PlanResult], LEFT, C::Collapse, "collapse", "Collapse, or go to the parent field"),
    row(&[X::PlanResult], ENTER, C::Toggle, "open/close", "Expand or collapse"),
    row(&[X::PlanResult], TREE_BACK, C::Back, "steps", "Back to the steps"),
    row(&[X::PlanPrompt], ENTER, C::OpenPlanFile, "open", "Open the file"),
    row(&[X::PlanPrompt], ESC, C::Close, "close", "Close the prompt"),
    row(&[X::PlanPrompt], BKSP, C::EraseChar, "erase", "Erase the last character"),
    row(&[X::PlanPrompt], &[ctrl('u')], C::ClearText, "clear", "Erase all the text"),
    // The tasks MCP servers run, under the PoW jobs and the plan's steps.
    row(TASK_LISTS, &[ch('x')], C::CancelTask, "cancel task", "Ask the selected task to stop, whichever server sharing the store runs it"),
    row(TASK_LISTS, TAB, C::FocusNext, "next area", "Focus the next area"),
    row(TASK_LISTS, BACKTAB, C::FocusPrev, "", "Focus the previous area"),
    row(TASK_LISTS, ESC, C::Back, "back", "Back to the jobs or the steps"),
    row(&[X::PlanPick], ENTER, C::OpenPlanCall, "choose", "Open the selected plan call"),
    row(&[X::PlanPick], ESC, C::Close, "close", "Close the list, back to the plan that was open"),

    // Handles: the field selection prompt.
    row(&[X::Fields], ENTER, C::ApplyFields, "done", "Fetch the first page with these fields"),
    row(&[X::Fields], ESC, C::DropFields, "clear", "Drop the field selection and close the prompt"),
    row(&[X::Fields], BKSP, C::EraseChar, "erase", "Erase the last character"),

    // Docs: a search box that takes text, lists that open docs, and the doc's text
    // that scrolls; Backspace goes back through the docs opened.
    row(&[X::DocsSearch], ENTER, C::ShowResults, "results", "Go to the results"),
    row(&[X::DocsSearch], ESC, C::LeaveSearch, "leave", "Leave the search box (the query and results stay)"),
    row(&[X::DocsSearch], BKSP, C::EraseChar, "erase", "Erase the last character"),
    row(&[X::DocsSearch], &[ctrl('u')], C::ClearText, "clear", "Erase all the text"),
    row(&[X::DocsSearch], &[key(KeyCode::Tab), key(KeyCode::Down)], C::FocusNext, "next area", "Focus the next area (search, results, doc, links, entity)"),
    row(&[X::DocsSearch], BACKTAB, C::FocusPrev, "", "Focus the previous area"),
    row(&[X::DocsList], UP, C::Up, "move", "Move up"),
    row(&[X::DocsView], UP, C::Up, "scroll", "Scroll up"),
    row(&[X::DocsList], DOWN, C::Down, "move", "Move down"),
    row(&[X::DocsView], DOWN, C::Down, "scroll", "Scroll down"),
    row(DOCS_AREAS, TOP, C::Top, "", "Go to the first row"),
    row(DOCS_AREAS, BOTTOM, C::Bottom, "", "Go to the last row"),
    row(DOCS_AREAS, &[ch('/')], C::Search, "search", "Search the docs: results follow each key typed"),
    row(DOCS_AREAS, TAB, C::FocusNext, "next area", "Focus the next area (search, results, doc, links, entity)"),
    row(DOCS_AREAS, BACKTAB, C::FocusPrev, "", "Focus the previous area"),
    row(DOCS_AREAS, &[key(KeyCode::Backspace), ch('b')], C::DocBack, "back", "Back to the doc opened before this one"),
    row(&[X::DocsList], FORWARD, C::OpenDoc, "open", "Open the selected doc"),
    row(&[X::DocsView], &[key(KeyCode::PageDown), ch(' ')], C::NextPage, "page", "Scroll down a page"),
    row(&[X::DocsView], PGUP, C::PrevPage, "page", "Scroll up a page"),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Every list and tree that moves alike is in [`MOVING`], so a scope added to one
    /// of their groups does not go without its Up and Down.
    #[test]
    fn the_lists_that_move_alike_are_all_moving() {
        let groups: [&[Scope]; 7] = [
            ENTITY_AREAS,
            HANDLE_AREAS,
            &[X::Pow],
            ACTION_LISTS,
            PLAN_AREAS,
            TASK_LISTS,
            &[X::PlanPick],
        ];
        for scope in groups.iter().flat_map(|g| g.iter()) {
            assert!(MOVING.contains(scope), "{scope:?} is not in MOVING");
        }
    }
}
