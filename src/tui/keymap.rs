//! Named commands and the one keymap from keys to commands.
//!
//! Every action the console takes on a key is a [`Command`]. [`Keymap`] binds keys to
//! commands per [`Context`] (which area has focus). The hint bar and the help overlay
//! are both drawn from this table and from the commands a pane says it offers right
//! now, so what they show is always what a key does.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::tab::Tab;

/// Where a key is read: the focused area, or the console as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Context {
    /// Keys that work wherever the focused area does not use them.
    Global,
    /// The help overlay.
    Help,
    /// The list of entity kinds.
    Kinds,
    /// The page of entities of one kind.
    List,
    /// The opened entity's tree.
    Tree,
    /// The tree of the entities the opened entity references.
    References,
    /// The id filter prompt, which takes typed text.
    Filter,
    /// The list of live result handles.
    Handles,
    /// The tree of a fetched page of a handle's data.
    HandleData,
    /// The field selection prompt of the Handles pane, which takes typed text.
    Fields,
    /// The proof-of-work jobs.
    Pow,
    /// The new-job prompt of the PoW pane, which takes typed text.
    PowPrompt,
    /// The action dialog's list of what can be done to the entity.
    ActionMenu,
    /// The action dialog's list of struct types to build.
    ActionTypes,
    /// The action dialog's form, whose field takes typed text.
    ActionForm,
    /// The action dialog's answer.
    ActionResult,
    /// The Plans pane's list of steps.
    Plans,
    /// The tree of the selected step's result.
    PlanResult,
    /// The Plans pane's prompt for a file to open, which takes typed text.
    PlanPrompt,
    /// The plan calls found in an opened file, to choose one.
    PlanPick,
    /// The Docs pane's search box, which takes typed text.
    DocsSearch,
    /// The Docs pane's lists: results, links, the docs of the selected entity.
    DocsList,
    /// The open doc's text.
    DocsView,
    /// The source dialog, whose endpoint takes typed text.
    SourceDialog,
    /// The Replay pane's list of recorded calls.
    Replay,
    /// The Replay pane's recorded and fresh answers.
    ReplayDetail,
    /// The Replay pane's prompt for a session log to open, which takes typed text.
    ReplayPrompt,
    /// The Server pane's list of tools.
    ServerTools,
    /// The Server pane's form for a call, whose fields take typed text.
    ServerForm,
    /// The Server pane's answer to the call.
    ServerResult,
    /// The Server pane's notifications or JSON-RPC traffic.
    ServerLog,
}

impl Context {
    /// The tab this context belongs to, or `None` for the contexts every tab shares
    /// (the global keys, help, the source dialog). Exhaustive, so a new context must
    /// be placed.
    pub fn tab(self) -> Option<Tab> {
        use Context as X;
        Some(match self {
            X::Global | X::Help | X::SourceDialog => return None,
            X::Kinds
            | X::List
            | X::Tree
            | X::References
            | X::Filter
            | X::ActionMenu
            | X::ActionTypes
            | X::ActionForm
            | X::ActionResult => Tab::Entities,
            X::Handles | X::HandleData | X::Fields => Tab::Handles,
            X::Plans | X::PlanResult | X::PlanPrompt | X::PlanPick => Tab::Plans,
            X::Pow | X::PowPrompt => Tab::Pow,
            X::DocsSearch | X::DocsList | X::DocsView => Tab::Docs,
            X::Replay | X::ReplayDetail | X::ReplayPrompt => Tab::Replay,
            X::ServerTools | X::ServerForm | X::ServerResult | X::ServerLog => Tab::Server,
        })
    }

    /// A heading for the help overlay.
    pub fn title(self) -> &'static str {
        match self {
            Context::Global => "Everywhere",
            Context::Help => "Help",
            Context::Kinds => "Kinds",
            Context::List => "Entity list",
            Context::Tree => "Entity tree",
            Context::References => "References",
            Context::Filter => "Id filter",
            Context::Handles => "Handles",
            Context::HandleData => "Handle data",
            Context::Fields => "Field selection",
            Context::Pow => "Proof-of-work jobs",
            Context::PowPrompt => "New job",
            Context::ActionMenu => "Actions",
            Context::ActionTypes => "Build: struct type",
            Context::ActionForm => "Action form",
            Context::ActionResult => "Action result",
            Context::Plans => "Plan steps",
            Context::PlanResult => "Step result",
            Context::PlanPrompt => "Open a plan",
            Context::PlanPick => "Plan calls in the file",
            Context::DocsSearch => "Docs search",
            Context::DocsList => "Docs lists",
            Context::DocsView => "Doc text",
            Context::SourceDialog => "Source",
            Context::Replay => "Recorded calls",
            Context::ReplayDetail => "Recorded and fresh answers",
            Context::ReplayPrompt => "Session log to open",
            Context::ServerTools => "Server tools",
            Context::ServerForm => "Call form",
            Context::ServerResult => "Call answer",
            Context::ServerLog => "Notifications and traffic",
        }
    }
}

/// Everything the console does on a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Command {
    /// Leave the console.
    Quit,
    /// Open or close the help overlay.
    ToggleHelp,
    /// Close the help overlay.
    CloseHelp,
    /// Show a tab.
    ShowTab(Tab),
    /// Pause the sim source's block clock, or start it again.
    ToggleClock,
    /// Advance the sim source's block clock by this many blocks.
    StepBlocks(u64),
    /// Show or hide the live event log.
    ToggleEvents,
    /// Open the source dialog (switch between the embedded world and a REST node).
    OpenSource,
    /// Focus the next area of the pane.
    FocusNext,
    /// Focus the previous area of the pane.
    FocusPrev,
    /// Move the selection up one row.
    Up,
    /// Move the selection down one row.
    Down,
    /// Select the first row.
    Top,
    /// Select the last row.
    Bottom,
    /// Kinds: go to the selected kind's entities.
    ShowKind,
    /// List: open the selected entity as a tree.
    OpenEntity,
    /// List: the next page.
    NextPage,
    /// List: the previous page.
    PrevPage,
    /// Open the id filter prompt.
    StartFilter,
    /// Drop the id filter.
    ClearFilter,
    /// Focus the area to the left (the list from the tree, the kinds from the list).
    Back,
    /// Tree: expand the selected node (fetching an entity if it names one).
    Expand,
    /// Tree: collapse the selected node, or select its parent.
    Collapse,
    /// Tree: expand or collapse the selected node.
    Toggle,
    /// Entity tree and references: switch the references between depth 1 and 2.
    ReferenceDepth,
    /// Entity tree and references: show the next kind of reference (all kinds, then
    /// each kind the unfiltered references held, then all again).
    ReferenceKinds,
    /// Filter prompt: keep the filter, or open the entity when the text is a whole id.
    AcceptFilter,
    /// Filter prompt: clear the filter and close the prompt.
    CancelFilter,
    /// Filter prompt: erase the last character.
    EraseChar,
    /// Handles: fetch the selected handle's first page into the data tree.
    Inspect,
    /// Handles: list the live handles again.
    Refresh,
    /// Handles: edit the field selection of fetched pages.
    EditFields,
    /// Handles: the next verbosity for fetched pages (raw, detailed, compact, summary).
    CycleVerbosity,
    /// Handles: copy the fetched page's JSON to the clipboard; PoW: copy the proof.
    CopyJson,
    /// PoW: type the parameters of a new job.
    NewJob,
    /// PoW: cancel the selected job.
    CancelJob,
    /// Entities: start a proof-of-work job for the selected struct or fleet.
    PowJob,
    /// Entities: open the action dialog on the selected or opened entity.
    OpenActions,
    /// Action dialog: take the selected action.
    ChooseAction,
    /// Action dialog: send the tool call shown.
    SendAction,
    /// Action dialog: close it.
    CloseDialog,
    /// Action dialog: switch the attack's weapon (primary, secondary).
    CycleWeapon,
    /// Action dialog: from the answer back to the form, to change and send again.
    EditAction,
    /// Plans: type the path of a plan file (a plan, a recorded call, JSON Lines).
    OpenPlan,
    /// Plans: choose a shipped workflow (with its example inputs) or the example plan.
    OpenWorkflow,
    /// Plans: run every remaining step.
    RunPlan,
    /// Plans: run one step (the selected one if it is ready, else the next ready).
    StepPlan,
    /// Plans: run until the next step to start has a breakpoint.
    ContinuePlan,
    /// Plans: set or clear the selected step's breakpoint.
    ToggleBreakpoint,
    /// Plans: run the selected failed or skipped step again.
    RetryStep,
    /// Plans: cancel what is running.
    CancelPlan,
    /// Plans: start the plan over with every step pending (breakpoints kept).
    RestartPlan,
    /// A prompt: erase all of its text.
    ClearText,
    /// Docs: open the selected doc (a result, a link, a doc of the entity).
    OpenDoc,
    /// Docs: back to the doc opened before this one.
    DocBack,
    /// Replay: run the selected recorded call again on the current source.
    ReplayCall,
    /// Replay: run every recorded call again, in order.
    ReplayAll,
    /// Replay: go to the next call whose fresh answer differs.
    NextDifference,
    /// Replay: go to the previous call whose fresh answer differs.
    PrevDifference,
    /// Replay: open another session log.
    OpenLog,
    /// Server: fill in a call to the selected tool, in a form built from its schema.
    OpenForm,
}

impl Command {
    /// The short label the hint bar shows; commands sharing a label share one hint
    /// (`↑↓ move`). `None` keeps a command out of the hint bar (it is still in help).
    pub fn hint(self, context: Context) -> Option<&'static str> {
        Some(match self {
            Command::Up | Command::Down if context == Context::SourceDialog => "choose",
            Command::OpenForm => "call",
            Command::SendAction if context == Context::ServerForm => "call",
            Command::FocusNext
                if matches!(
                    context,
                    Context::ServerTools | Context::ServerResult | Context::ServerLog
                ) =>
            {
                "view"
            }
            Command::Back
                if matches!(
                    context,
                    Context::ServerForm | Context::ServerResult | Context::ServerLog
                ) =>
            {
                "tools"
            }
            Command::Toggle if context == Context::ServerLog => "whole",
            Command::Quit => "quit",
            Command::ToggleHelp => "help",
            Command::CloseHelp => "close",
            Command::ShowTab(_) => "tabs",
            Command::FocusNext => "next area",
            Command::Up | Command::Down
                if matches!(context, Context::ActionResult | Context::DocsView) =>
            {
                "scroll"
            }
            Command::Up | Command::Down => "move",
            Command::ShowKind => "list",
            Command::OpenEntity => "open",
            Command::NextPage | Command::PrevPage => "page",
            Command::Inspect => "fetch",
            Command::Refresh => "refresh",
            Command::EditFields => "fields",
            Command::CycleVerbosity => "verbosity",
            Command::CopyJson => "copy",
            Command::NewJob => "new job",
            Command::CancelJob => "cancel job",
            Command::PowJob => "pow job",
            Command::ToggleEvents => "events",
            Command::OpenSource => "source",
            Command::AcceptFilter if context == Context::SourceDialog => "connect",
            Command::CancelFilter if context == Context::SourceDialog => "close",
            Command::OpenActions => "actions",
            Command::ChooseAction => "choose",
            Command::SendAction => "send",
            Command::CloseDialog => "close",
            Command::CycleWeapon => "weapon",
            Command::EditAction => "edit",
            Command::OpenPlan if matches!(context, Context::Replay | Context::ReplayDetail) => {
                "plan"
            }
            Command::OpenPlan => "open",
            Command::ReplayCall => "run again",
            Command::ReplayAll => "run all",
            Command::OpenLog => "open log",
            Command::NextDifference | Command::PrevDifference => "differences",
            Command::CancelPlan if matches!(context, Context::Replay | Context::ReplayDetail) => {
                "stop"
            }
            Command::OpenWorkflow => "workflows",
            Command::RunPlan => "run",
            Command::StepPlan => "step",
            Command::ContinuePlan => "continue",
            Command::ToggleBreakpoint => "breakpoint",
            Command::RetryStep => "retry",
            Command::CancelPlan => "cancel",
            Command::RestartPlan => "new run",
            Command::ClearText => "clear",
            Command::OpenDoc => "open",
            Command::DocBack => "back",
            Command::StartFilter if matches!(context, Context::DocsList | Context::DocsView) => {
                "search"
            }
            Command::AcceptFilter if context == Context::DocsSearch => "results",
            Command::CancelFilter if context == Context::DocsSearch => "leave",
            Command::StartFilter => "filter",
            Command::ClearFilter => "clear filter",
            Command::Back if context == Context::Tree => "list",
            Command::Back if context == Context::References => "tree",
            Command::Back if context == Context::HandleData => "handles",
            Command::Back if context == Context::PlanResult => "steps",
            Command::Back => "kinds",
            Command::Expand => "expand",
            Command::Collapse => "collapse",
            Command::Toggle => "open/close",
            Command::ReferenceDepth => "depth",
            Command::ReferenceKinds => "kinds",
            Command::AcceptFilter
                if matches!(context, Context::PlanPrompt | Context::ReplayPrompt) =>
            {
                "open"
            }
            Command::AcceptFilter => "done",
            Command::CancelFilter
                if matches!(
                    context,
                    Context::PlanPrompt | Context::PlanPick | Context::ReplayPrompt
                ) =>
            {
                "close"
            }
            Command::CancelFilter => "clear",
            Command::EraseChar => "erase",
            Command::FocusPrev
            | Command::Top
            | Command::Bottom
            | Command::ToggleClock
            | Command::StepBlocks(_) => return None,
        })
    }

    /// What the command does, for the help overlay.
    pub fn description(self, context: Context) -> String {
        match self {
            Command::Up | Command::Down if context == Context::SourceDialog => {
                "Choose the embedded world or a REST node".into()
            }
            Command::Quit => "Quit the console".into(),
            Command::ToggleHelp => "Show or hide the keys of the focused area".into(),
            Command::CloseHelp => "Close this list".into(),
            Command::ShowTab(_) => {
                // One line per title would not fit the overlay; the first and last
                // name the range.
                format!(
                    "Show a tab by its number ({} … {})",
                    Tab::ALL[0].title(),
                    Tab::ALL[Tab::ALL.len() - 1].title()
                )
            }
            Command::ToggleClock => "Pause or resume the block clock (sim source)".into(),
            // One line for the three step keys (help merges equal descriptions).
            Command::StepBlocks(_) => {
                "Step the block clock by 1, 10 or 100 blocks (sim source)".into()
            }
            Command::ToggleEvents => "Show or hide the live event log (newest on top)".into(),
            Command::OpenSource => "Switch the source: the embedded world or a REST node".into(),
            Command::AcceptFilter if context == Context::SourceDialog => {
                "Connect to the chosen source (the current one stays if it fails)".into()
            }
            Command::CancelFilter if context == Context::SourceDialog => "Close the dialog".into(),
            Command::FocusNext if matches!(context, Context::Handles | Context::HandleData) => {
                "Focus the other area (handles, data)".into()
            }
            Command::FocusNext if matches!(context, Context::Replay | Context::ReplayDetail) => {
                "Focus the other area (calls, answers)".into()
            }
            Command::Up if context == Context::ReplayDetail => "Scroll the answers up".into(),
            Command::Down if context == Context::ReplayDetail => "Scroll the answers down".into(),
            Command::NextPage if context == Context::ReplayDetail => {
                "Scroll the answers down ten lines".into()
            }
            Command::PrevPage if context == Context::ReplayDetail => {
                "Scroll the answers up ten lines".into()
            }
            Command::NextPage if context == Context::Replay => "Down a screen of calls".into(),
            Command::PrevPage if context == Context::Replay => "Up a screen of calls".into(),
            Command::ReplayCall => {
                "Run the selected call again on the current source and compare".into()
            }
            Command::ReplayAll => {
                "Run every call again in order, each session as its own client, and compare".into()
            }
            Command::NextDifference => "Go to the next call whose answer differs".into(),
            Command::OpenLog => "Open a session log (a --record file) by its path".into(),
            Command::OpenForm => "Call the selected tool: a form from its input schema".into(),
            Command::SendAction if context == Context::ServerForm => {
                "Call the tool with these arguments (empty fields are left out)".into()
            }
            Command::Up if context == Context::ServerForm => "The field above".into(),
            Command::Down if context == Context::ServerForm => "The field below".into(),
            Command::EditAction if context == Context::ServerResult => {
                "Back to the form, to change it and call again".into()
            }
            Command::FocusNext
                if matches!(
                    context,
                    Context::ServerTools | Context::ServerResult | Context::ServerLog
                ) =>
            {
                "Next view: tools, notifications, JSON-RPC traffic".into()
            }
            Command::FocusPrev
                if matches!(
                    context,
                    Context::ServerTools | Context::ServerResult | Context::ServerLog
                ) =>
            {
                "Previous view".into()
            }
            Command::Back
                if matches!(
                    context,
                    Context::ServerForm | Context::ServerResult | Context::ServerLog
                ) =>
            {
                "Back to the tools".into()
            }
            Command::Toggle if context == Context::ServerLog => {
                "Show the selected message whole, pretty-printed, or hide it".into()
            }
            Command::Up if context == Context::ServerResult => "Scroll up".into(),
            Command::Down if context == Context::ServerResult => "Scroll down".into(),
            Command::NextPage if matches!(context, Context::ServerResult | Context::ServerLog) => {
                "Down a screen".into()
            }
            Command::PrevPage if matches!(context, Context::ServerResult | Context::ServerLog) => {
                "Up a screen".into()
            }
            Command::Bottom if context == Context::ServerLog => {
                "Go to the newest and follow new ones".into()
            }
            Command::PrevDifference => "Go to the previous call whose answer differs".into(),
            Command::OpenPlan if matches!(context, Context::Replay | Context::ReplayDetail) => {
                "Open the selected structs_plan_execute call in Plans (else go to the next one)"
                    .into()
            }
            Command::CancelPlan if matches!(context, Context::Replay | Context::ReplayDetail) => {
                "Stop running the calls again".into()
            }
            Command::FocusNext if matches!(context, Context::Plans | Context::PlanResult) => {
                "Focus the other area (steps, result)".into()
            }
            Command::FocusNext
                if matches!(
                    context,
                    Context::DocsSearch | Context::DocsList | Context::DocsView
                ) =>
            {
                "Focus the next area (search, results, doc, links, entity)".into()
            }
            Command::FocusNext => "Focus the next area (kinds, list, tree, references)".into(),
            Command::FocusPrev => "Focus the previous area".into(),
            Command::Up if matches!(context, Context::ActionResult | Context::DocsView) => {
                "Scroll up".into()
            }
            Command::Down if matches!(context, Context::ActionResult | Context::DocsView) => {
                "Scroll down".into()
            }
            Command::NextPage if context == Context::DocsView => "Scroll down a page".into(),
            Command::PrevPage if context == Context::DocsView => "Scroll up a page".into(),
            Command::Up => "Move up".into(),
            Command::Down => "Move down".into(),
            Command::Top => "Go to the first row".into(),
            Command::Bottom => "Go to the last row".into(),
            Command::ShowKind => "Go to the selected kind's entities".into(),
            Command::OpenEntity => "Open the selected entity as a tree".into(),
            Command::NextPage if context == Context::List => "Next page".into(),
            Command::PrevPage if context == Context::List => "Previous page".into(),
            Command::NextPage => "Fetch the next page of the handle's data".into(),
            Command::PrevPage => "Fetch the previous page of the handle's data".into(),
            Command::Inspect => "Fetch the selected handle's first page as a tree".into(),
            Command::Refresh => "List the live handles again".into(),
            Command::EditFields => {
                "Choose the fields of fetched pages (comma-separated paths)".into()
            }
            Command::CycleVerbosity => {
                "Next verbosity of fetched pages: raw, detailed, compact, summary".into()
            }
            Command::CopyJson if context == Context::Pow => {
                "Copy the found proof (input, nonce, hash) as JSON".into()
            }
            Command::CopyJson => "Copy the fetched page's JSON to the clipboard".into(),
            Command::NewJob => {
                "New job: ENTITY [build|mine|refine|raid] [block_start= age= difficulty= threads=]"
                    .into()
            }
            Command::CancelJob => "Cancel the selected job (stops its search)".into(),
            Command::PowJob if context == Context::ActionResult => {
                "Start the proof-of-work job the answer calls for (PoW tab)".into()
            }
            Command::PowJob => "Proof-of-work job for the selected struct or fleet".into(),
            Command::OpenActions => "Actions: build here, complete build, mine, attack this".into(),
            Command::ChooseAction if context == Context::PlanPick => {
                "Open the selected plan call".into()
            }
            Command::ChooseAction => "Take the selected action".into(),
            Command::SendAction => "Send the tool call shown".into(),
            Command::CloseDialog => "Close the action dialog".into(),
            Command::CycleWeapon => "Switch the weapon: primary or secondary".into(),
            Command::EditAction => "Back to the form, to change it and send again".into(),
            Command::OpenWorkflow => {
                "Open a shipped workflow with its example inputs, or the example plan".into()
            }
            Command::OpenPlan => {
                "Open a plan file: a plan, a recorded structs_plan_execute call, or JSON Lines"
                    .into()
            }
            Command::RunPlan => "Run every remaining step (breakpoints are not stops)".into(),
            Command::StepPlan => {
                "Run one step: the selected one if it is ready, else the next ready one".into()
            }
            Command::ContinuePlan => {
                "Continue: run steps until the next to start has a breakpoint".into()
            }
            Command::ToggleBreakpoint => "Set or clear a breakpoint on the selected step".into(),
            Command::RetryStep => {
                "Retry the selected failed step (a skipped one: the failure it waits on)".into()
            }
            Command::CancelPlan => "Cancel what is running".into(),
            Command::RestartPlan => "New run: every step pending again, breakpoints kept".into(),
            Command::ClearText => "Erase all the text".into(),
            Command::OpenDoc => "Open the selected doc".into(),
            Command::DocBack => "Back to the doc opened before this one".into(),
            Command::StartFilter if matches!(context, Context::DocsList | Context::DocsView) => {
                "Search the docs: results follow each key typed".into()
            }
            Command::StartFilter => "Filter by id prefix; a whole id then Enter opens it".into(),
            Command::ClearFilter => "Clear the id filter".into(),
            Command::Back if context == Context::Tree => "Back to the entity list".into(),
            Command::Back if context == Context::References => "Back to the entity tree".into(),
            Command::Back if context == Context::HandleData => "Back to the handles".into(),
            Command::Back if context == Context::PlanResult => "Back to the steps".into(),
            Command::Back => "Back to the kinds".into(),
            Command::Expand => "Expand; a field naming an entity fetches it in place".into(),
            Command::Collapse => "Collapse, or go to the parent field".into(),
            Command::Toggle => "Expand or collapse".into(),
            Command::ReferenceDepth => "References: switch between depth 1 and 2".into(),
            Command::ReferenceKinds => "References: kind filter (all, then each kind found)".into(),
            Command::AcceptFilter if context == Context::DocsSearch => "Go to the results".into(),
            Command::CancelFilter if context == Context::DocsSearch => {
                "Leave the search box (the query and results stay)".into()
            }
            Command::AcceptFilter if context == Context::PowPrompt => {
                "Plan the job; it starts when its difficulty is 10 or less".into()
            }
            Command::CancelFilter if context == Context::PowPrompt => "Close the prompt".into(),
            Command::AcceptFilter if context == Context::PlanPrompt => "Open the file".into(),
            Command::CancelFilter if context == Context::PlanPrompt => "Close the prompt".into(),
            Command::AcceptFilter if context == Context::ReplayPrompt => {
                "Open the log (an empty prompt opens nothing)".into()
            }
            Command::CancelFilter if context == Context::ReplayPrompt => "Close the prompt".into(),
            Command::CancelFilter if context == Context::PlanPick => {
                "Close the list, back to the plan that was open".into()
            }
            Command::AcceptFilter if context == Context::Fields => {
                "Fetch the first page with these fields".into()
            }
            Command::CancelFilter if context == Context::Fields => {
                "Drop the field selection and close the prompt".into()
            }
            Command::AcceptFilter => "Keep the filter; a whole id opens that entity".into(),
            Command::CancelFilter => "Clear the filter and close the prompt".into(),
            Command::EraseChar => "Erase the last character".into(),
        }
    }
}

/// A key, as bound in the keymap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyBinding {
    code: KeyCode,
    control: bool,
}

impl KeyBinding {
    const fn key(code: KeyCode) -> KeyBinding {
        KeyBinding {
            code,
            control: false,
        }
    }

    const fn ch(c: char) -> KeyBinding {
        KeyBinding::key(KeyCode::Char(c))
    }

    const fn ctrl(c: char) -> KeyBinding {
        KeyBinding {
            code: KeyCode::Char(c),
            control: true,
        }
    }

    /// True when `key` is this binding. Shift is ignored, since it is already part of
    /// the character (`G`, `?`) or of the key (`BackTab`); Alt never matches.
    pub fn matches(&self, key: &KeyEvent) -> bool {
        if key.modifiers.contains(KeyModifiers::ALT) {
            return false;
        }
        let control = key.modifiers.contains(KeyModifiers::CONTROL);
        let code = match key.code {
            KeyCode::Char(c) if control => KeyCode::Char(c.to_ascii_lowercase()),
            other => other,
        };
        code == self.code && control == self.control
    }

    /// True for a key that types a character into a text prompt.
    pub fn is_plain_char(&self) -> bool {
        matches!(self.code, KeyCode::Char(_)) && !self.control
    }

    /// How the key is written in hints and help (`↑`, `Enter`, `C-c`, `n`).
    pub fn label(&self) -> String {
        let name = match self.code {
            KeyCode::Up => "↑".to_string(),
            KeyCode::Down => "↓".to_string(),
            KeyCode::Left => "←".to_string(),
            KeyCode::Right => "→".to_string(),
            KeyCode::Enter => "Enter".to_string(),
            KeyCode::Esc => "Esc".to_string(),
            KeyCode::Tab => "Tab".to_string(),
            KeyCode::BackTab => "S-Tab".to_string(),
            KeyCode::PageUp => "PgUp".to_string(),
            KeyCode::PageDown => "PgDn".to_string(),
            KeyCode::Home => "Home".to_string(),
            KeyCode::End => "End".to_string(),
            KeyCode::Backspace => "Bksp".to_string(),
            KeyCode::Char(' ') => "Space".to_string(),
            KeyCode::Char(c) => c.to_string(),
            other => format!("{other:?}"),
        };
        if self.control {
            format!("C-{name}")
        } else {
            name
        }
    }
}

/// One row of the keymap.
#[derive(Debug, Clone, Copy)]
struct Binding {
    context: Context,
    key: KeyBinding,
    command: Command,
}

/// One entry of the hint bar: the keys and what they do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hint {
    /// `↑↓`, `n/p`, `1-6`, `Enter`.
    pub keys: String,
    /// `move`, `page`, `open`.
    pub label: &'static str,
}

/// One line of the help overlay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HelpLine {
    /// Every key bound to the command, e.g. `↑/k`.
    pub keys: String,
    pub description: String,
}

/// The key bindings of every context.
#[derive(Debug, Clone)]
pub struct Keymap {
    bindings: Vec<Binding>,
}

impl Default for Keymap {
    fn default() -> Keymap {
        Keymap::standard()
    }
}

impl Keymap {
    /// The console's bindings.
    pub fn standard() -> Keymap {
        use Command as C;
        use Context as X;
        use KeyBinding as K;
        let mut bindings = Vec::new();
        let mut bind = |context: Context, keys: &[KeyBinding], command: Command| {
            for key in keys {
                bindings.push(Binding {
                    context,
                    key: *key,
                    command,
                });
            }
        };

        bind(X::Global, &[K::ch('q'), K::ctrl('c')], C::Quit);
        bind(X::Global, &[K::ch('?')], C::ToggleHelp);
        bind(X::Global, &[K::ch('P')], C::ToggleClock);
        bind(X::Global, &[K::ch('+')], C::StepBlocks(1));
        bind(X::Global, &[K::ch('>')], C::StepBlocks(10));
        bind(X::Global, &[K::ch(']')], C::StepBlocks(100));
        bind(X::Global, &[K::ch('e')], C::ToggleEvents);
        bind(X::Global, &[K::ch('S')], C::OpenSource);
        bind(X::SourceDialog, &[K::key(KeyCode::Up), K::ch('k')], C::Up);
        bind(
            X::SourceDialog,
            &[K::key(KeyCode::Down), K::ch('j')],
            C::Down,
        );
        bind(X::SourceDialog, &[K::key(KeyCode::Enter)], C::AcceptFilter);
        bind(X::SourceDialog, &[K::key(KeyCode::Esc)], C::CancelFilter);
        bind(X::SourceDialog, &[K::key(KeyCode::Backspace)], C::EraseChar);
        bind(X::SourceDialog, &[K::ctrl('u')], C::ClearText);
        for tab in Tab::ALL {
            let digit = char::from_digit(u32::from(tab.number()), 10).unwrap_or('0');
            bind(X::Global, &[K::ch(digit)], C::ShowTab(tab));
        }

        bind(
            X::Help,
            &[K::key(KeyCode::Esc), K::ch('?'), K::ch('q')],
            C::CloseHelp,
        );

        let up = [K::key(KeyCode::Up), K::ch('k')];
        let down = [K::key(KeyCode::Down), K::ch('j')];
        let top = [K::key(KeyCode::Home), K::ch('g')];
        let bottom = [K::key(KeyCode::End), K::ch('G')];
        let forward = [K::key(KeyCode::Enter), K::key(KeyCode::Right), K::ch('l')];
        for context in [X::Kinds, X::List, X::Tree, X::References] {
            bind(context, &up, C::Up);
            bind(context, &down, C::Down);
            bind(context, &top, C::Top);
            bind(context, &bottom, C::Bottom);
            bind(context, &[K::ch('/')], C::StartFilter);
            bind(context, &[K::key(KeyCode::Tab)], C::FocusNext);
            bind(context, &[K::key(KeyCode::BackTab)], C::FocusPrev);
        }

        bind(X::Kinds, &forward, C::ShowKind);

        bind(X::List, &forward, C::OpenEntity);
        bind(
            X::List,
            &[K::ch('n'), K::key(KeyCode::PageDown)],
            C::NextPage,
        );
        bind(X::List, &[K::ch('p'), K::key(KeyCode::PageUp)], C::PrevPage);
        bind(X::List, &[K::key(KeyCode::Esc)], C::ClearFilter);
        bind(X::List, &[K::key(KeyCode::Left), K::ch('h')], C::Back);

        // Both trees move and open alike. Left at a top-level node that is not open
        // goes back an area (the entity tree to the list, the references to the entity
        // tree), as Left goes from the list to the kinds: Collapse is tried first, Back
        // when it is not available.
        for context in [X::Tree, X::References] {
            bind(context, &[K::key(KeyCode::Right), K::ch('l')], C::Expand);
            bind(context, &[K::key(KeyCode::Left), K::ch('h')], C::Collapse);
            bind(context, &[K::key(KeyCode::Enter)], C::Toggle);
            bind(
                context,
                &[K::key(KeyCode::Esc), K::key(KeyCode::Left), K::ch('h')],
                C::Back,
            );
            bind(context, &[K::ch('d')], C::ReferenceDepth);
            bind(context, &[K::ch('t')], C::ReferenceKinds);
        }

        bind(X::Filter, &[K::key(KeyCode::Enter)], C::AcceptFilter);
        bind(X::Filter, &[K::key(KeyCode::Esc)], C::CancelFilter);
        bind(X::Filter, &[K::key(KeyCode::Backspace)], C::EraseChar);

        // The Handles pane: the list of handles and the tree of a fetched page. Both
        // page, choose fields and verbosity, and copy; the tree moves like the others.
        for context in [X::Handles, X::HandleData] {
            bind(context, &up, C::Up);
            bind(context, &down, C::Down);
            bind(context, &top, C::Top);
            bind(context, &bottom, C::Bottom);
            bind(
                context,
                &[K::ch('n'), K::key(KeyCode::PageDown)],
                C::NextPage,
            );
            bind(context, &[K::ch('p'), K::key(KeyCode::PageUp)], C::PrevPage);
            bind(context, &[K::ch('f')], C::EditFields);
            bind(context, &[K::ch('v')], C::CycleVerbosity);
            bind(context, &[K::ch('c')], C::CopyJson);
            bind(context, &[K::ch('r')], C::Refresh);
            bind(context, &[K::key(KeyCode::Tab)], C::FocusNext);
            bind(context, &[K::key(KeyCode::BackTab)], C::FocusPrev);
        }
        bind(X::Handles, &forward, C::Inspect);
        bind(
            X::HandleData,
            &[K::key(KeyCode::Right), K::ch('l')],
            C::Expand,
        );
        bind(
            X::HandleData,
            &[K::key(KeyCode::Left), K::ch('h')],
            C::Collapse,
        );
        bind(X::HandleData, &[K::key(KeyCode::Enter)], C::Toggle);
        bind(
            X::HandleData,
            &[K::key(KeyCode::Esc), K::key(KeyCode::Left), K::ch('h')],
            C::Back,
        );

        // Entities: a proof-of-work job for what is selected.
        for context in [X::List, X::Tree, X::References] {
            bind(context, &[K::ch('w')], C::PowJob);
        }

        bind(X::Pow, &up, C::Up);
        bind(X::Pow, &down, C::Down);
        bind(X::Pow, &top, C::Top);
        bind(X::Pow, &bottom, C::Bottom);
        bind(X::Pow, &[K::ch('n')], C::NewJob);
        bind(X::Pow, &[K::ch('x')], C::CancelJob);
        bind(X::Pow, &[K::ch('c')], C::CopyJson);
        bind(X::PowPrompt, &[K::key(KeyCode::Enter)], C::AcceptFilter);
        bind(X::PowPrompt, &[K::key(KeyCode::Esc)], C::CancelFilter);
        bind(X::PowPrompt, &[K::key(KeyCode::Backspace)], C::EraseChar);

        // Entities: the action dialog on what is selected.
        for context in [X::List, X::Tree, X::References] {
            bind(context, &[K::ch('a')], C::OpenActions);
        }
        let close = [K::key(KeyCode::Esc)];
        for context in [X::ActionMenu, X::ActionTypes] {
            bind(context, &up, C::Up);
            bind(context, &down, C::Down);
            bind(context, &top, C::Top);
            bind(context, &bottom, C::Bottom);
            bind(context, &close, C::CloseDialog);
        }
        bind(X::ActionMenu, &[K::key(KeyCode::Enter)], C::ChooseAction);
        bind(X::ActionTypes, &[K::key(KeyCode::Enter)], C::SendAction);
        bind(X::ActionForm, &[K::key(KeyCode::Enter)], C::SendAction);
        bind(X::ActionForm, &close, C::CloseDialog);
        bind(X::ActionForm, &[K::key(KeyCode::Tab)], C::CycleWeapon);
        bind(X::ActionForm, &[K::key(KeyCode::Backspace)], C::EraseChar);
        bind(X::ActionResult, &up, C::Up);
        bind(X::ActionResult, &down, C::Down);
        bind(
            X::ActionResult,
            &[K::key(KeyCode::Esc), K::key(KeyCode::Enter)],
            C::CloseDialog,
        );
        bind(
            X::ActionResult,
            &[K::key(KeyCode::Backspace), K::key(KeyCode::Left)],
            C::EditAction,
        );
        bind(X::ActionResult, &[K::ch('w')], C::PowJob);

        // The Replay pane: the calls and the answers share the run keys.
        for context in [X::Replay, X::ReplayDetail] {
            bind(context, &up, C::Up);
            bind(context, &down, C::Down);
            bind(context, &[K::key(KeyCode::PageDown)], C::NextPage);
            bind(context, &[K::key(KeyCode::PageUp)], C::PrevPage);
            bind(context, &[K::key(KeyCode::Tab)], C::FocusNext);
            bind(context, &[K::key(KeyCode::BackTab)], C::FocusPrev);
            bind(context, &[K::ch('r')], C::ReplayCall);
            bind(context, &[K::ch('a')], C::ReplayAll);
            bind(context, &[K::ch('x')], C::CancelPlan);
            bind(context, &[K::ch('n')], C::NextDifference);
            bind(context, &[K::ch('p')], C::PrevDifference);
            bind(context, &[K::ch('o')], C::OpenPlan);
        }
        bind(X::Replay, &top, C::Top);
        bind(X::Replay, &bottom, C::Bottom);
        bind(X::Replay, &[K::ch('f')], C::OpenLog);
        bind(X::ReplayDetail, &[K::ch('f')], C::OpenLog);
        bind(X::ReplayPrompt, &[K::key(KeyCode::Enter)], C::AcceptFilter);
        bind(X::ReplayPrompt, &[K::key(KeyCode::Esc)], C::CancelFilter);
        bind(X::ReplayPrompt, &[K::key(KeyCode::Backspace)], C::EraseChar);
        bind(X::ReplayPrompt, &[K::ctrl('u')], C::ClearText);

        // The Server pane: tools, a call's form and answer, notifications and traffic.
        for context in [X::ServerTools, X::ServerResult, X::ServerLog] {
            bind(context, &up, C::Up);
            bind(context, &down, C::Down);
            bind(context, &top, C::Top);
            bind(context, &bottom, C::Bottom);
            bind(context, &[K::key(KeyCode::Tab)], C::FocusNext);
            bind(context, &[K::key(KeyCode::BackTab)], C::FocusPrev);
        }
        bind(X::ServerTools, &forward, C::OpenForm);
        for context in [X::ServerResult, X::ServerLog] {
            bind(context, &[K::key(KeyCode::PageDown)], C::NextPage);
            bind(context, &[K::key(KeyCode::PageUp)], C::PrevPage);
        }
        bind(
            X::ServerResult,
            &[K::key(KeyCode::Enter), K::ch('e')],
            C::EditAction,
        );
        bind(X::ServerResult, &[K::key(KeyCode::Esc)], C::Back);
        bind(X::ServerLog, &[K::key(KeyCode::Enter)], C::Toggle);
        bind(X::ServerLog, &[K::key(KeyCode::Esc)], C::Back);
        bind(
            X::ServerForm,
            &[K::key(KeyCode::Up), K::key(KeyCode::BackTab)],
            C::Up,
        );
        bind(
            X::ServerForm,
            &[K::key(KeyCode::Down), K::key(KeyCode::Tab)],
            C::Down,
        );
        bind(X::ServerForm, &[K::key(KeyCode::Enter)], C::SendAction);
        bind(X::ServerForm, &[K::key(KeyCode::Esc)], C::Back);
        bind(X::ServerForm, &[K::key(KeyCode::Backspace)], C::EraseChar);
        bind(X::ServerForm, &[K::ctrl('u')], C::ClearText);
        bind(X::Replay, &[K::key(KeyCode::Enter)], C::ReplayCall);

        // The Plans pane: the steps and the selected step's result share the run keys;
        // the result moves and opens like the other trees.
        for context in [X::Plans, X::PlanResult] {
            bind(context, &up, C::Up);
            bind(context, &down, C::Down);
            bind(context, &top, C::Top);
            bind(context, &bottom, C::Bottom);
            bind(context, &[K::ch('r')], C::RunPlan);
            bind(context, &[K::ch('s')], C::StepPlan);
            bind(context, &[K::ch('c')], C::ContinuePlan);
            bind(context, &[K::ch('b')], C::ToggleBreakpoint);
            bind(context, &[K::ch('R')], C::RetryStep);
            bind(context, &[K::ch('x')], C::CancelPlan);
            bind(context, &[K::ch('n')], C::RestartPlan);
            bind(context, &[K::ch('o')], C::OpenPlan);
            bind(context, &[K::ch('w')], C::OpenWorkflow);
            bind(context, &[K::key(KeyCode::Tab)], C::FocusNext);
            bind(context, &[K::key(KeyCode::BackTab)], C::FocusPrev);
        }
        bind(
            X::Plans,
            &[K::key(KeyCode::Enter), K::key(KeyCode::Right), K::ch('l')],
            C::FocusNext,
        );
        bind(
            X::PlanResult,
            &[K::key(KeyCode::Right), K::ch('l')],
            C::Expand,
        );
        bind(
            X::PlanResult,
            &[K::key(KeyCode::Left), K::ch('h')],
            C::Collapse,
        );
        bind(X::PlanResult, &[K::key(KeyCode::Enter)], C::Toggle);
        bind(
            X::PlanResult,
            &[K::key(KeyCode::Esc), K::key(KeyCode::Left), K::ch('h')],
            C::Back,
        );
        bind(X::PlanPrompt, &[K::key(KeyCode::Enter)], C::AcceptFilter);
        bind(X::PlanPrompt, &[K::key(KeyCode::Esc)], C::CancelFilter);
        bind(X::PlanPrompt, &[K::key(KeyCode::Backspace)], C::EraseChar);
        bind(X::PlanPrompt, &[K::ctrl('u')], C::ClearText);
        bind(X::PlanPick, &up, C::Up);
        bind(X::PlanPick, &down, C::Down);
        bind(X::PlanPick, &top, C::Top);
        bind(X::PlanPick, &bottom, C::Bottom);
        bind(X::PlanPick, &[K::key(KeyCode::Enter)], C::ChooseAction);
        bind(X::PlanPick, &[K::key(KeyCode::Esc)], C::CancelFilter);

        bind(X::Fields, &[K::key(KeyCode::Enter)], C::AcceptFilter);
        bind(X::Fields, &[K::key(KeyCode::Esc)], C::CancelFilter);
        bind(X::Fields, &[K::key(KeyCode::Backspace)], C::EraseChar);

        // The Docs pane: a search box that takes text, lists that open docs, and the
        // doc's text that scrolls; Backspace goes back through the docs opened.
        bind(X::DocsSearch, &[K::key(KeyCode::Enter)], C::AcceptFilter);
        bind(X::DocsSearch, &[K::key(KeyCode::Esc)], C::CancelFilter);
        bind(X::DocsSearch, &[K::key(KeyCode::Backspace)], C::EraseChar);
        bind(X::DocsSearch, &[K::ctrl('u')], C::ClearText);
        bind(
            X::DocsSearch,
            &[K::key(KeyCode::Tab), K::key(KeyCode::Down)],
            C::FocusNext,
        );
        bind(X::DocsSearch, &[K::key(KeyCode::BackTab)], C::FocusPrev);
        for context in [X::DocsList, X::DocsView] {
            bind(context, &up, C::Up);
            bind(context, &down, C::Down);
            bind(context, &top, C::Top);
            bind(context, &bottom, C::Bottom);
            bind(context, &[K::ch('/')], C::StartFilter);
            bind(context, &[K::key(KeyCode::Tab)], C::FocusNext);
            bind(context, &[K::key(KeyCode::BackTab)], C::FocusPrev);
            bind(
                context,
                &[K::key(KeyCode::Backspace), K::ch('b')],
                C::DocBack,
            );
        }
        bind(X::DocsList, &forward, C::OpenDoc);
        bind(
            X::DocsView,
            &[K::key(KeyCode::PageDown), K::ch(' ')],
            C::NextPage,
        );
        bind(X::DocsView, &[K::key(KeyCode::PageUp)], C::PrevPage);

        Keymap { bindings }
    }

    /// Every context that has bindings, in keymap order.
    pub fn contexts(&self) -> Vec<Context> {
        let mut out: Vec<Context> = Vec::new();
        for b in &self.bindings {
            if !out.contains(&b.context) {
                out.push(b.context);
            }
        }
        out
    }

    /// True when a key written `label` (as hints and help write it: `Enter`, `C-u`,
    /// `j`) is bound in `context`.
    pub fn binds(&self, context: Context, label: &str) -> bool {
        self.bindings
            .iter()
            .any(|b| b.context == context && b.key.label() == label)
    }

    /// The command `key` is bound to first in `context`, if any.
    pub fn command(&self, context: Context, key: &KeyEvent) -> Option<Command> {
        self.commands_for(context, key).next()
    }

    /// Every command `key` is bound to in `context`, in keymap order. A key may name
    /// several commands of one context; the first that is available runs.
    pub fn commands_for(&self, context: Context, key: &KeyEvent) -> impl Iterator<Item = Command> {
        self.bindings
            .iter()
            .filter(move |b| b.context == context && b.key.matches(key))
            .map(|b| b.command)
    }

    /// The keys bound to `command` in `context`, first (primary) key first.
    pub fn keys(&self, context: Context, command: Command) -> impl Iterator<Item = KeyBinding> {
        self.bindings
            .iter()
            .filter(move |b| b.context == context && b.command == command)
            .map(|b| b.key)
    }

    /// The primary key of `command` in `context`, written for people (`Enter`).
    pub fn key_label(&self, context: Context, command: Command) -> Option<String> {
        self.keys(context, command).next().map(|k| k.label())
    }

    /// The hint bar entries for `offered` commands, in order. With `text_input`, keys
    /// that would type a character are left out (a text prompt takes them).
    pub fn hints(&self, context: Context, offered: &[Command], text_input: bool) -> Vec<Hint> {
        let mut groups: Vec<(&'static str, Vec<String>)> = Vec::new();
        for command in offered {
            let Some(label) = command.hint(context) else {
                continue;
            };
            let Some(key) = self
                .keys(context, *command)
                .find(|k| !(text_input && k.is_plain_char()))
            else {
                continue;
            };
            let key = key.label();
            match groups.iter_mut().find(|(l, _)| *l == label) {
                Some((_, keys)) if !keys.contains(&key) => keys.push(key),
                Some(_) => {}
                None => groups.push((label, vec![key])),
            }
        }
        groups
            .into_iter()
            .map(|(label, keys)| Hint {
                keys: join_keys(&keys),
                label,
            })
            .collect()
    }

    /// Every binding of `context`, one line per command, in keymap order.
    pub fn help(&self, context: Context) -> Vec<HelpLine> {
        let mut lines: Vec<(String, Vec<String>)> = Vec::new();
        for binding in self.bindings.iter().filter(|b| b.context == context) {
            let description = binding.command.description(context);
            let key = binding.key.label();
            match lines.iter_mut().find(|(d, _)| *d == description) {
                Some((_, keys)) => keys.push(key),
                None => lines.push((description, vec![key])),
            }
        }
        lines
            .into_iter()
            .map(|(description, keys)| HelpLine {
                keys: join_keys(&keys),
                description,
            })
            .collect()
    }
}

/// Writes a group of keys compactly: arrows run together (`↑↓`), a run of consecutive
/// digits becomes a range (`1-6`), anything else is joined with `/` (`n/p`).
fn join_keys(keys: &[String]) -> String {
    let digits: Vec<u32> = keys
        .iter()
        .filter_map(|k| {
            let mut chars = k.chars();
            let c = chars.next()?;
            chars.next().is_none().then_some(c)?.to_digit(10)
        })
        .collect();
    if keys.len() >= 3 && digits.len() == keys.len() && digits.windows(2).all(|w| w[1] == w[0] + 1)
    {
        return format!("{}-{}", keys[0], keys[keys.len() - 1]);
    }
    let arrows = ["↑", "↓", "←", "→"];
    if keys.len() > 1 && keys.iter().all(|k| arrows.contains(&k.as_str())) {
        return keys.concat();
    }
    keys.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::KeyEvent;

    #[test]
    fn no_binding_is_listed_twice() {
        let keymap = Keymap::standard();
        for (i, a) in keymap.bindings.iter().enumerate() {
            for b in &keymap.bindings[i + 1..] {
                assert!(
                    !(a.context == b.context && a.key == b.key && a.command == b.command),
                    "{} is bound to {:?} twice in {:?}",
                    a.key.label(),
                    a.command,
                    a.context
                );
            }
        }
    }

    #[test]
    fn shared_keys_only_where_meant() {
        // A key bound to several commands of one context must be one the pane
        // resolves by availability: only Left/h in the trees (Collapse, else Back).
        let keymap = Keymap::standard();
        for a in &keymap.bindings {
            let commands: Vec<Command> = keymap
                .bindings
                .iter()
                .filter(|b| b.context == a.context && b.key == a.key)
                .map(|b| b.command)
                .collect();
            if commands.len() > 1 {
                assert!(
                    matches!(
                        a.context,
                        Context::Tree
                            | Context::References
                            | Context::HandleData
                            | Context::PlanResult
                    ),
                    "{} in {:?}",
                    a.key.label(),
                    a.context
                );
                assert_eq!(commands, [Command::Collapse, Command::Back]);
            }
        }
    }

    #[test]
    fn keys_match_with_and_without_shift() {
        let keymap = Keymap::standard();
        let shifted_g = KeyEvent::new(KeyCode::Char('G'), KeyModifiers::SHIFT);
        assert_eq!(
            keymap.command(Context::List, &shifted_g),
            Some(Command::Bottom)
        );
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(
            keymap.command(Context::Global, &ctrl_c),
            Some(Command::Quit)
        );
        let plain_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::NONE);
        assert_eq!(keymap.command(Context::Global, &plain_c), None);
    }

    #[test]
    fn hints_group_and_compact_keys() {
        let keymap = Keymap::standard();
        let hints = keymap.hints(
            Context::List,
            &[
                Command::Up,
                Command::Down,
                Command::NextPage,
                Command::PrevPage,
            ],
            false,
        );
        let text: Vec<String> = hints
            .iter()
            .map(|h| format!("{} {}", h.keys, h.label))
            .collect();
        assert_eq!(text, ["↑↓ move", "n/p page"]);
        let tabs: Vec<Command> = Tab::ALL.into_iter().map(Command::ShowTab).collect();
        let hints = keymap.hints(Context::Global, &tabs, false);
        assert_eq!(hints[0].keys, "1-7");
        let quit = keymap.hints(Context::Global, &[Command::Quit], true);
        assert_eq!(quit[0].keys, "C-c");
    }
}
