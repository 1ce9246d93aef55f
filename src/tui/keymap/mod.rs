//! Named commands and the one keymap from keys to commands.
//!
//! Every action the console takes on a key is a [`Command`], and each command means
//! one thing wherever it is bound. The keys are rows ([`rows::ROWS`]): a scope, its
//! keys, the command, the hint bar's label and the help overlay's line, together.
//! [`Keymap`] answers from those rows which command a key runs where, and draws the
//! hint bar and the help overlay from them and from the commands a pane says it
//! offers right now, so what they show is always what a key does.

mod key;
mod rows;

use crossterm::event::KeyEvent;

pub use key::KeyBinding;

use super::tab::Tab;

/// Where a key is read: the focused area, or the console as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// Keys that work wherever the focused area does not use them.
    Global,
    /// The help overlay.
    Help,
    /// The lines written to stderr while the console ran, over the pane (`L`).
    Logs,
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
    /// The PoW pane's list of the proof-of-work tasks MCP servers run.
    PowTasks,
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
    /// The Plans pane's list of the plan and workflow tasks MCP servers run.
    PlanTasks,
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
    /// The Replay pane's filter, which takes typed text.
    ReplayFilter,
    /// The Live pane's list of calls.
    Live,
    /// The Live pane's selected call: its arguments and answer as a tree.
    LiveDetail,
    /// The Live pane's selected call: the references its answer carries.
    LiveReferences,
    /// The Live pane's filter, which takes typed text.
    LiveFilter,
    /// The Live pane's prompt for an endpoint or log to watch, which takes typed text.
    LivePrompt,
    /// The Live pane's editor of a held call's arguments, answer or error.
    LiveEdit,
    /// The Server pane's list of tools.
    ServerTools,
    /// The Server pane's form for a call, whose fields take typed text.
    ServerForm,
    /// The Server pane's answer to the call.
    ServerResult,
    /// The Server pane's notifications or JSON-RPC traffic.
    ServerLog,
    /// The Server pane's resources and resource templates.
    ServerResources,
    /// The Server pane's prompts.
    ServerPrompts,
    /// The Server pane's log level and log messages.
    ServerLogging,
    /// The Server pane's requests from the server (sampling, elicitation) waiting for
    /// an answer.
    ServerRequests,
    /// The Server pane's roots offered to the server.
    ServerRoots,
    /// The Server pane's history of calls.
    ServerHistory,
    /// A form of a prompt's arguments or a template's variables, with the server's
    /// completions; its fields take typed text.
    ServerArgs,
    /// The form of an elicitation, whose fields take typed text.
    ServerElicit,
    /// The reply typed to a sampling request.
    ServerReply,
    /// A root's path, typed.
    ServerRootInput,
    /// The Server tab's search: a tool's name, or the text the messages are filtered
    /// by, typed.
    ServerSearch,
}

impl Scope {
    /// The tab this scope belongs to, or `None` for the scopes every tab shares
    /// (the global keys, help, the source dialog). Exhaustive, so a new scope must
    /// be placed.
    pub fn tab(self) -> Option<Tab> {
        use Scope as X;
        Some(match self {
            X::Global | X::Help | X::Logs | X::SourceDialog => return None,
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
            X::Plans | X::PlanResult | X::PlanPrompt | X::PlanPick | X::PlanTasks => Tab::Plans,
            X::Pow | X::PowPrompt | X::PowTasks => Tab::Pow,
            X::DocsSearch | X::DocsList | X::DocsView => Tab::Docs,
            X::Replay | X::ReplayDetail | X::ReplayPrompt | X::ReplayFilter => Tab::Replay,
            X::Live
            | X::LiveDetail
            | X::LiveReferences
            | X::LiveFilter
            | X::LivePrompt
            | X::LiveEdit => Tab::Live,
            X::ServerTools
            | X::ServerForm
            | X::ServerResult
            | X::ServerLog
            | X::ServerResources
            | X::ServerPrompts
            | X::ServerLogging
            | X::ServerRequests
            | X::ServerRoots
            | X::ServerHistory
            | X::ServerArgs
            | X::ServerElicit
            | X::ServerReply
            | X::ServerRootInput
            | X::ServerSearch => Tab::Server,
        })
    }

    /// A heading for the help overlay.
    pub fn title(self) -> &'static str {
        match self {
            Scope::Global => "Everywhere",
            Scope::Help => "Help",
            Scope::Logs => "Stderr",
            Scope::Kinds => "Kinds",
            Scope::List => "Entity list",
            Scope::Tree => "Entity tree",
            Scope::References => "References",
            Scope::Filter => "Id filter",
            Scope::Handles => "Handles",
            Scope::HandleData => "Handle data",
            Scope::Fields => "Field selection",
            Scope::Pow => "Proof-of-work jobs",
            Scope::PowPrompt => "New job",
            Scope::PowTasks => "Proof-of-work tasks",
            Scope::ActionMenu => "Actions",
            Scope::ActionTypes => "Build: struct type",
            Scope::ActionForm => "Action form",
            Scope::ActionResult => "Action result",
            Scope::Plans => "Plan steps",
            Scope::PlanResult => "Step result",
            Scope::PlanPrompt => "Open a plan",
            Scope::PlanPick => "Plan calls in the file",
            Scope::PlanTasks => "Plan and workflow tasks",
            Scope::DocsSearch => "Docs search",
            Scope::DocsList => "Docs lists",
            Scope::DocsView => "Doc text",
            Scope::SourceDialog => "Source",
            Scope::Replay => "Recorded calls",
            Scope::ReplayDetail => "Recorded and fresh answers",
            Scope::ReplayPrompt => "Session log to open",
            Scope::ReplayFilter => "Replay filter",
            Scope::Live => "Live calls",
            Scope::LiveDetail => "Live call: arguments and answer",
            Scope::LiveReferences => "Live call: the answer's references",
            Scope::LiveFilter => "Live filter",
            Scope::LivePrompt => "Endpoint or log to watch",
            Scope::LiveEdit => "Held call: the JSON to send",
            Scope::ServerTools => "Server tools",
            Scope::ServerForm => "Call form",
            Scope::ServerResult => "Call answer",
            Scope::ServerLog => "Notifications and traffic",
            Scope::ServerResources => "Resources and templates",
            Scope::ServerPrompts => "Prompts",
            Scope::ServerLogging => "Log level and messages",
            Scope::ServerRequests => "Requests from the server",
            Scope::ServerRoots => "Roots",
            Scope::ServerHistory => "Call history",
            Scope::ServerArgs => "Arguments",
            Scope::ServerElicit => "Elicitation form",
            Scope::ServerReply => "Sampling reply",
            Scope::ServerRootInput => "New root",
            Scope::ServerSearch => "Search",
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
    /// Hide or show the console's own polling in the Server tab's traffic.
    ToggleOwnTraffic,
    /// Show the lines written to stderr while the console ran.
    ShowLogs,
    /// Close what is drawn over the pane: the help, a dialog, a prompt, a list to
    /// choose from.
    Close,
    /// Show a tab.
    ShowTab(Tab),
    /// Pause the sim source's block clock, or start it again.
    ToggleClock,
    /// Advance the sim source's block clock by this many blocks.
    StepBlocks(u64),
    /// Show or hide the live event log.
    ToggleEvents,
    /// Open the source dialog (switch between the embedded world or a REST node).
    OpenSource,
    /// Source dialog: connect to the chosen source.
    Connect,
    /// Focus the next area (or view) of the pane.
    FocusNext,
    /// Focus the previous area (or view) of the pane.
    FocusPrev,
    /// Move the selection (or the text) up one row.
    Up,
    /// Move the selection (or the text) down one row.
    Down,
    /// Select the first row.
    Top,
    /// Select the last row.
    Bottom,
    /// The next page (of a list, of a handle's data, of text).
    NextPage,
    /// The previous page.
    PrevPage,
    /// Focus the area to the left (the list from the tree, the tools from an answer).
    Back,
    /// A prompt: erase the last character.
    EraseChar,
    /// A prompt: erase all of its text.
    ClearText,
    /// Kinds: go to the selected kind's entities.
    ShowKind,
    /// List: open the selected entity as a tree.
    OpenEntity,
    /// Entities: open the id filter prompt.
    StartFilter,
    /// Entities: drop the id filter.
    ClearFilter,
    /// Id filter prompt: keep the filter, or open the entity when the text is a whole
    /// id.
    KeepFilter,
    /// Id filter prompt: clear the filter and close the prompt.
    DropFilter,
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
    /// Fetch a result handle's first page into a tree: the selected handle (Handles),
    /// the selected call's answer's handle (Live).
    Inspect,
    /// Handles: list the live handles again.
    Refresh,
    /// Handles: edit the field selection of fetched pages.
    EditFields,
    /// Field selection prompt: fetch the first page with these fields.
    ApplyFields,
    /// Field selection prompt: drop the selection and close the prompt.
    DropFields,
    /// Handles: the next verbosity for fetched pages (raw, detailed, compact, summary).
    CycleVerbosity,
    /// Handles: copy the fetched page's JSON to the clipboard.
    CopyJson,
    /// Live, Replay: copy the selected call's trace id to the clipboard.
    CopyTraceId,
    /// PoW: type the parameters of a new job.
    NewJob,
    /// New-job prompt: plan the job typed.
    PlanJob,
    /// PoW: cancel the selected job.
    CancelJob,
    /// PoW: copy the selected job's proof.
    CopyProof,
    /// PoW and Plans: ask the selected task to stop, wherever it runs.
    CancelTask,
    /// Entities: start a proof-of-work job for the selected struct or fleet, or the
    /// one the action dialog's answer calls for.
    PowJob,
    /// Entities: open the action dialog on the selected or opened entity.
    OpenActions,
    /// Action dialog: take the selected action.
    TakeAction,
    /// Action dialog: send the tool call shown.
    SendAction,
    /// Action dialog: switch the attack's weapon (primary, secondary).
    CycleWeapon,
    /// Action dialog: from the answer back to the form, to change and send again.
    EditAction,
    /// Plans: type the path of a plan file (a plan, a recorded call, JSON Lines).
    OpenPlan,
    /// Plan file prompt: open the file typed.
    OpenPlanFile,
    /// The plan calls in a file: open the selected one.
    OpenPlanCall,
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
    /// Docs: focus the search box.
    Search,
    /// Docs search box: go to the results.
    ShowResults,
    /// Docs search box: leave it, keeping the query and results.
    LeaveSearch,
    /// Docs: open the selected doc (a result, a link, a doc of the entity).
    OpenDoc,
    /// Docs: back to the doc opened before this one.
    DocBack,
    /// Replay: run the selected recorded call again on the current source.
    ReplayCall,
    /// Replay: run every recorded call again, in order.
    ReplayAll,
    /// Replay: stop running the calls again.
    StopReplay,
    /// Replay: go to the next call whose fresh answer differs.
    NextDifference,
    /// Replay: go to the previous call whose fresh answer differs.
    PrevDifference,
    /// Replay: open the selected `structs_plan_execute` call in the Plans pane.
    OpenInPlans,
    /// Live: open the selected call in the Replay pane.
    OpenInReplay,
    /// Replay: open another session log.
    OpenLog,
    /// Replay: the calls on a time axis, or as a list again.
    ToggleTimeline,
    /// The Replay tab: the open log and another side by side, aligned as `diff` aligns
    /// them (or the log alone again).
    CompareLogs,
    /// Timeline: half the time in view.
    ZoomIn,
    /// Timeline: twice the time in view.
    ZoomOut,
    /// Timeline: earlier.
    PanLeft,
    /// Timeline: later.
    PanRight,
    /// Session log prompt: open the file typed.
    OpenLogFile,
    /// Server: fill in a call to the selected tool, in a form built from its schema.
    OpenForm,
    /// Server form: call the tool with the arguments filled in.
    CallTool,
    /// Server: from the answer back to the form, to change and call again.
    EditCall,
    /// Server: show the selected notification or message whole, or hide it.
    ToggleMessage,
    /// Live: follow the newest call, or stop following.
    ToggleFollow,
    /// Live: hold every call at a breakpoint, or stop.
    BreakAll,
    /// Live: hold the answers to the selected call's tool at a breakpoint, or stop.
    ToggleAnswerBreakpoint,
    /// Live: let the held call go on as it is.
    ContinueHeld,
    /// Live: edit the held call's arguments (or a held answer), then send it on.
    EditHeld,
    /// Live: answer the held call without the server, with a result typed.
    AnswerHeld,
    /// Live: answer the held call with an error typed.
    ErrorHeld,
    /// Live: drop the held call (the agent gets a cancellation).
    DropHeld,
    /// Live editor: send the text.
    SendEdit,
    /// In a text of several lines: the cursor one character left.
    CursorLeft,
    /// In a text of several lines: the cursor one character right.
    CursorRight,
    /// In a text of several lines: the cursor to the line's start.
    LineStart,
    /// In a text of several lines: the cursor to the line's end.
    LineEnd,
    /// In a text of several lines: break the line.
    NewLine,
    /// In a text of several lines: erase the character under the cursor.
    DeleteChar,
    /// Server: cancel the call running (`notifications/cancelled` to a server).
    CancelCall,
    /// Server history: call the selected call again, with the same arguments.
    RerunCall,
    /// Server history: show the selected call's arguments and answer.
    ShowCall,
    /// Server resources: read the selected resource, or fill in a template's
    /// variables to read one.
    ReadResource,
    /// Server resources: subscribe to the selected resource, or unsubscribe.
    ToggleSubscribe,
    /// Server resources and prompts: ask for the next page of the list.
    NextListPage,
    /// Server resources and prompts: list them again from the first page.
    Relist,
    /// Server prompts: get the selected prompt, first filling in its arguments.
    GetPrompt,
    /// Argument form: send it (read the resource, get the prompt).
    SubmitArgs,
    /// Argument form: fill the field with the server's next completion.
    NextCompletion,
    /// Server logging: set the selected level on the server.
    SetLogLevel,
    /// Server logging: show only messages at this level or above, the next level.
    CycleLogFilter,
    /// Server requests: answer the selected request (a reply, or a form).
    AnswerRequest,
    /// Elicitation form: accept, sending the values filled in.
    AcceptRequest,
    /// Elicitation form: decline.
    DeclineRequest,
    /// Elicitation form: cancel (the user dismissed it).
    CancelRequest,
    /// Sampling reply: send the reply typed.
    SendReply,
    /// Sampling reply: reject the request.
    RejectRequest,
    /// Server roots: type a directory to add.
    AddRoot,
    /// Server roots: remove the selected root.
    RemoveRoot,
    /// New root: add the directory typed.
    ConfirmRoot,
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

/// One key of one scope, as read from a row.
#[derive(Debug, Clone, Copy)]
struct Binding {
    scope: Scope,
    key: KeyBinding,
    command: Command,
    hint: &'static str,
    help: &'static str,
}

/// The key bindings of every scope.
#[derive(Debug, Clone)]
pub struct Keymap {
    /// Every row spread out, one binding per scope and key, in row order.
    bindings: Vec<Binding>,
}

impl Default for Keymap {
    fn default() -> Keymap {
        Keymap::standard()
    }
}

impl Keymap {
    /// The console's bindings: the rows of [`rows::ROWS`].
    pub fn standard() -> Keymap {
        let mut bindings = Vec::new();
        for row in rows::ROWS {
            for &scope in row.scopes {
                for &key in row.keys {
                    bindings.push(Binding {
                        scope,
                        key,
                        command: row.command,
                        hint: row.hint,
                        help: row.help,
                    });
                }
            }
        }
        Keymap { bindings }
    }

    /// Every scope that has bindings, in keymap order.
    pub fn scopes(&self) -> Vec<Scope> {
        scopes_in_order(&self.bindings)
    }

    /// True when a key written `label` (as hints and help write it: `Enter`, `C-u`,
    /// `j`) is bound in `scope`.
    pub fn binds(&self, scope: Scope, label: &str) -> bool {
        self.bindings
            .iter()
            .any(|b| b.scope == scope && b.key.label() == label)
    }

    /// The command `key` is bound to first in `scope`, if any.
    pub fn command(&self, scope: Scope, key: &KeyEvent) -> Option<Command> {
        self.commands_for(scope, key).next()
    }

    /// Every command `key` is bound to in `scope`, in keymap order. A key may name
    /// several commands of one scope; the first that is available runs.
    pub fn commands_for(&self, scope: Scope, key: &KeyEvent) -> impl Iterator<Item = Command> {
        self.bindings
            .iter()
            .filter(move |b| b.scope == scope && b.key.matches(key))
            .map(|b| b.command)
    }

    /// The keys bound to `command` in `scope`, first (primary) key first.
    pub fn keys(&self, scope: Scope, command: Command) -> impl Iterator<Item = KeyBinding> {
        self.bindings
            .iter()
            .filter(move |b| b.scope == scope && b.command == command)
            .map(|b| b.key)
    }

    /// The primary key of `command` in `scope`, written for people (`Enter`).
    pub fn key_label(&self, scope: Scope, command: Command) -> Option<String> {
        self.keys(scope, command).next().map(|k| k.label())
    }

    /// The hint bar's label of `command` in `scope`; `None` when it has none there
    /// or is not bound there.
    pub fn hint(&self, scope: Scope, command: Command) -> Option<&'static str> {
        self.bindings
            .iter()
            .find(|b| b.scope == scope && b.command == command)
            .map(|b| b.hint)
            .filter(|h| !h.is_empty())
    }

    /// The hint bar entries for `offered` commands, in order. With `text_input`, keys
    /// that would type a character are left out (a text prompt takes them).
    pub fn hints(&self, scope: Scope, offered: &[Command], text_input: bool) -> Vec<Hint> {
        let mut groups: Vec<(&'static str, Vec<String>)> = Vec::new();
        for command in offered {
            let Some(label) = self.hint(scope, *command) else {
                continue;
            };
            let Some(key) = self
                .keys(scope, *command)
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

    /// Every binding of `scope`, one line per help text, in keymap order.
    pub fn help(&self, scope: Scope) -> Vec<HelpLine> {
        let mut lines: Vec<(&'static str, Vec<String>)> = Vec::new();
        for binding in self.bindings.iter().filter(|b| b.scope == scope) {
            let key = binding.key.label();
            match lines.iter_mut().find(|(d, _)| *d == binding.help) {
                Some((_, keys)) => keys.push(key),
                None => lines.push((binding.help, vec![key])),
            }
        }
        lines
            .into_iter()
            .map(|(description, keys)| HelpLine {
                keys: join_keys(&keys),
                description: description.to_string(),
            })
            .collect()
    }
}

/// The scopes of `bindings`, each once, in the order they first appear.
fn scopes_in_order(bindings: &[Binding]) -> Vec<Scope> {
    let mut out: Vec<Scope> = Vec::new();
    for b in bindings {
        if !out.contains(&b.scope) {
            out.push(b.scope);
        }
    }
    out
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
    use crossterm::event::{KeyCode, KeyModifiers};

    #[test]
    fn no_binding_is_listed_twice() {
        let keymap = Keymap::standard();
        for (i, a) in keymap.bindings.iter().enumerate() {
            for b in &keymap.bindings[i + 1..] {
                assert!(
                    !(a.scope == b.scope && a.key == b.key && a.command == b.command),
                    "{} is bound to {:?} twice in {:?}",
                    a.key.label(),
                    a.command,
                    a.scope
                );
            }
        }
    }

    #[test]
    fn shared_keys_only_where_meant() {
        // A key bound to several commands of one scope must be one the pane
        // resolves by availability: only Left/h in the trees (Collapse, else Back).
        let keymap = Keymap::standard();
        for a in &keymap.bindings {
            let commands: Vec<Command> = keymap
                .bindings
                .iter()
                .filter(|b| b.scope == a.scope && b.key == a.key)
                .map(|b| b.command)
                .collect();
            if commands.len() > 1 {
                assert!(
                    matches!(
                        a.scope,
                        Scope::Tree
                            | Scope::References
                            | Scope::HandleData
                            | Scope::PlanResult
                            | Scope::LiveDetail
                            | Scope::LiveReferences
                    ),
                    "{} in {:?}",
                    a.key.label(),
                    a.scope
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
            keymap.command(Scope::List, &shifted_g),
            Some(Command::Bottom)
        );
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(keymap.command(Scope::Global, &ctrl_c), Some(Command::Quit));
        let plain_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::NONE);
        assert_eq!(keymap.command(Scope::Global, &plain_c), None);
    }

    #[test]
    fn hints_group_and_compact_keys() {
        let keymap = Keymap::standard();
        let hints = keymap.hints(
            Scope::List,
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
        let hints = keymap.hints(Scope::Global, &tabs, false);
        assert_eq!(hints[0].keys, "1-8");
        let quit = keymap.hints(Scope::Global, &[Command::Quit], true);
        assert_eq!(quit[0].keys, "C-c");
    }

    #[test]
    fn a_command_has_one_hint_per_scope() {
        // The hint bar reads a command's label from its first row in the scope; a
        // second row saying otherwise would be a label no one sees.
        let keymap = Keymap::standard();
        for a in &keymap.bindings {
            for b in &keymap.bindings {
                if a.scope == b.scope && a.command == b.command {
                    assert_eq!(a.hint, b.hint, "{:?} in {:?}", a.command, a.scope);
                }
            }
        }
    }

    #[test]
    fn each_tab_is_shown_by_its_number() {
        let keymap = Keymap::standard();
        for tab in Tab::ALL {
            let keys: Vec<String> = keymap
                .keys(Scope::Global, Command::ShowTab(tab))
                .map(|k| k.label())
                .collect();
            assert_eq!(keys, [tab.number().to_string()], "{tab:?}");
        }
        // The help line names the first and last tab.
        let first = Tab::ALL[0].title();
        let last = Tab::ALL[Tab::ALL.len() - 1].title();
        assert_eq!(
            rows::SHOW_TAB_HELP,
            format!("Show a tab by its number ({first} … {last})")
        );
    }

    #[test]
    fn every_key_is_matched_by_its_own_event() {
        let keymap = Keymap::standard();
        for b in &keymap.bindings {
            assert!(b.key.matches(&b.key.event()), "{}", b.key.label());
        }
    }
}
