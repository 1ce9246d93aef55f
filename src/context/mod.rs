//! What a caller gives a call beside its arguments: a way to cancel it and a place to
//! send progress. Long tools (the proof-of-work search) read it with
//! [`CallContext::current`]; every other tool ignores it.

pub mod caller;
pub mod log;
pub mod subscriptions;
pub mod trace;

pub use caller::Principal;

use std::sync::Arc;

use std::sync::atomic::{AtomicBool, Ordering};
use subscriptions::Subscriptions;

use serde_json::{Value, json};

use crate::error::{ErrorCode, ToolError};

/// One progress report of a running call.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgressUpdate {
    /// Work done so far; grows with every report.
    pub progress: f64,
    /// Work in all, when known.
    pub total: Option<f64>,
    /// One line for a person.
    pub message: String,
    /// The tool's own figures, as JSON.
    pub data: Value,
}

type Sink = Arc<dyn Fn(ProgressUpdate) + Send + Sync>;

/// Asks the calling client something while a call runs: under a key of the tool's
/// (what a stateless round names the question by), an MCP request
/// (`sampling/createMessage`, `elicitation/create`, `roots/list`) and its params, to the
/// client's answer ([`CallContext::with_client`]).
pub type AskFn = Arc<
    dyn Fn(
            String,
            &'static str,
            Value,
        ) -> std::pin::Pin<Box<dyn Future<Output = Result<Value, Unasked>> + Send>>
        + Send
        + Sync,
>;

/// How a call's client is asked: the asking, and the capabilities the client declared.
#[derive(Clone)]
pub struct ClientAsk {
    /// Asks one question.
    pub ask: AskFn,
    /// The capabilities the client declared (`sampling`, `elicitation`, `roots`).
    pub declared: Vec<&'static str>,
}

/// Why the client was not asked, or gave no answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Unasked {
    /// The client did not declare the capability the request needs (`sampling`,
    /// `elicitation`, `roots`): a server answers the call with `-32021` naming it.
    Undeclared(&'static str),
    /// The question goes out in the call's answer (a stateless request's
    /// `input_required` round): the client answers it when it calls again, and the
    /// tool is run again with the answer. The tool ends here; what it answers now is
    /// not sent.
    InRound(String),
    /// There is no client to ask in the call's way (the console's own calls, a task).
    NoClient(String),
    /// The client was asked and answered with an error, or went away.
    Failed(String),
}

impl std::fmt::Display for Unasked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unasked::Undeclared(capability) => {
                write!(f, "the client did not declare the {capability} capability")
            }
            Unasked::InRound(key) => {
                write!(
                    f,
                    "{key} is asked in the call's answer, to be answered in the next round"
                )
            }
            Unasked::NoClient(why) | Unasked::Failed(why) => f.write_str(why),
        }
    }
}

/// Closes a call's response stream after telling the client to come back in the
/// given time; true where it was open and is closed.
pub type StreamCloser = Arc<
    dyn Fn(std::time::Duration) -> std::pin::Pin<Box<dyn Future<Output = bool> + Send>>
        + Send
        + Sync,
>;

/// Where [`CallContext::become_task`] tells the layer, once, and what it does first.
type Escalation =
    Arc<std::sync::Mutex<Option<(tokio::sync::oneshot::Sender<()>, Box<dyn FnOnce() + Send>)>>>;

/// Where a call's trail goes ([`CallContext::with_trail`]).
type TrailSink = Arc<dyn Fn(Value) + Send + Sync>;

/// The cancel flag and progress sink of one call. Cheap to clone; clones share both.
#[derive(Clone, Default)]
pub struct CallContext {
    cancelled: Arc<Cancel>,
    progress: Option<Sink>,
    /// The calling client's subscriptions; `None` uses the core's own (the console's).
    subscriptions: Option<Arc<Subscriptions>>,
    /// The result handles the calling client made; `None` for the console, which sees
    /// every handle in the store.
    handles: Option<Arc<ClientHandles>>,
    /// What the calling client has running; `None` counts against the core's own.
    work: Option<Arc<ClientWork>>,
    /// Where the call's log messages go; `None` drops them.
    log: Option<log::LogSink>,
    /// True for a stateless (2026-07-28) request over HTTP: nothing of the caller
    /// outlives the request, so what needs a session (a subscription) is refused.
    sessionless: bool,
    /// Where what happened along the call beyond progress goes; `None` keeps nothing.
    trail: Option<TrailSink>,
    /// Whether the caller follows a task the call may become (a client declares the
    /// Tasks extension for it).
    follows_tasks: bool,
    /// Made by the console by itself (its polling), not at anyone's asking: a server
    /// tab's traffic can leave such calls out.
    background: bool,
    /// Answers given in advance to the rounds of input the call's server asks for, in
    /// order: what a recorded agent answered, when its call is replayed.
    answers: Option<Arc<std::sync::Mutex<std::collections::VecDeque<Value>>>>,
    /// Who makes the call ([`caller`]); `None` for the console itself, which sees all.
    owner: Option<Principal>,
    /// How the calling client is asked something mid-call; `None` where it cannot be.
    client: Option<ClientAsk>,
    /// Closes the call's response stream, for the client to resume it later.
    stream: Option<StreamCloser>,
    /// Told when the call's questions are answered and its long work begins: the
    /// caller is answered with a task ([`CallContext::become_task`]).
    escalation: Option<Escalation>,
    /// Why the client could not be asked mid-call, once a tool tried and could not:
    /// a server answers the call with `-32021` rather than the tool's answer.
    unasked: Arc<std::sync::Mutex<Option<Unasked>>>,
}

/// Proof-of-work searches one client may run at once.
pub const MAX_POW_PER_CLIENT: usize = 4;

/// Plan runs (`structs_plan_execute`, workflows) one client may have going at once.
pub const MAX_PLANS_PER_CLIENT: usize = 8;

/// Long work a client can start, each kind capped per client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Work {
    ProofOfWork,
    Plan,
}

impl Work {
    fn index(self) -> usize {
        match self {
            Work::ProofOfWork => 0,
            Work::Plan => 1,
        }
    }

    /// At most this many at once per client.
    pub fn limit(self) -> usize {
        match self {
            Work::ProofOfWork => MAX_POW_PER_CLIENT,
            Work::Plan => MAX_PLANS_PER_CLIENT,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Work::ProofOfWork => "proof_of_work",
            Work::Plan => "plan",
        }
    }

    fn plural(self) -> &'static str {
        match self {
            Work::ProofOfWork => "proof-of-work searches",
            Work::Plan => "plan runs",
        }
    }
}

/// What one client has running, by kind of [`Work`]. A slot is taken when the work
/// starts and given back when its [`WorkSlot`] is dropped, however the work ends.
#[derive(Debug, Default)]
pub struct ClientWork {
    running: [std::sync::atomic::AtomicUsize; 2],
}

impl ClientWork {
    /// Takes a slot for `work`, or says the client is at its limit
    /// (`RATE_LIMIT_EXCEEDED`, with the limit and the count in `details`).
    pub fn start(self: &Arc<Self>, work: Work) -> Result<WorkSlot, ToolError> {
        let counter = &self.running[work.index()];
        let taken = counter.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
            (n < work.limit()).then_some(n + 1)
        });
        match taken {
            Ok(_) => Ok(WorkSlot {
                owner: self.clone(),
                work,
            }),
            Err(running) => Err(ToolError::new(
                ErrorCode::RateLimitExceeded,
                format!(
                    "this client already has {running} {} going, the most it may have at once; \
                     cancel one or wait for one to end",
                    work.plural()
                ),
            )
            .with_extra("work", json!(work.name()))
            .with_extra("limit", json!(work.limit()))
            .with_extra("running", json!(running))),
        }
    }

    /// How many of `work` are going now.
    pub fn running(&self, work: Work) -> usize {
        self.running[work.index()].load(Ordering::Acquire)
    }
}

/// One running piece of [`Work`]; its slot is given back when this is dropped.
#[derive(Debug)]
pub struct WorkSlot {
    owner: Arc<ClientWork>,
    work: Work,
}

impl Drop for WorkSlot {
    fn drop(&mut self) {
        self.owner.running[self.work.index()].fetch_sub(1, Ordering::AcqRel);
    }
}

/// The result handles one MCP client made: its `structs_handle_list` and
/// `resources/list` show these only. (Any client may still fetch a handle it is given.)
#[derive(Debug, Default)]
pub struct ClientHandles(std::sync::Mutex<std::collections::HashSet<String>>);

impl ClientHandles {
    pub fn add(&self, handle: &str) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(handle.to_string());
    }

    pub fn contains(&self, handle: &str) -> bool {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(handle)
    }

    pub fn len(&self) -> usize {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[derive(Default)]
struct Cancel {
    flag: AtomicBool,
    notify: tokio::sync::Notify,
}

impl std::fmt::Debug for CallContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallContext")
            .field("cancelled", &self.is_cancelled())
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

tokio::task_local! {
    static CONTEXT: CallContext;
}

impl CallContext {
    pub fn new() -> CallContext {
        CallContext::default()
    }

    /// Progress reports of the call go to `sink` (called from the tool's task; keep it
    /// quick and non-blocking).
    pub fn with_progress(mut self, sink: impl Fn(ProgressUpdate) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(sink));
        self
    }

    /// Asks the call to stop; a tool that watches the flag ends with `TOOL_CANCELLED`.
    pub fn cancel(&self) {
        self.cancelled.flag.store(true, Ordering::Relaxed);
        self.cancelled.notify.notify_waiters();
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancelled.flag.load(Ordering::Relaxed)
    }

    /// Resolves once the call is cancelled.
    pub async fn cancelled(&self) {
        loop {
            let notified = self.cancelled.notify.notified();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }

    /// The same cancel flag without the progress sink (for a watcher that only
    /// cancels, so that it does not keep the sink alive).
    pub fn canceller(&self) -> CallContext {
        CallContext {
            cancelled: self.cancelled.clone(),
            progress: None,
            subscriptions: None,
            handles: None,
            work: None,
            log: None,
            sessionless: self.sessionless,
            trail: None,
            follows_tasks: false,
            background: false,
            answers: None,
            owner: self.owner.clone(),
            client: None,
            stream: None,
            escalation: None,
            unasked: Arc::default(),
        }
    }

    /// A context for a call made on this call's behalf (a plan's step): its own cancel
    /// flag and no progress sink, the same client's subscriptions.
    pub fn child(&self) -> CallContext {
        CallContext {
            cancelled: Arc::default(),
            progress: None,
            subscriptions: self.subscriptions.clone(),
            handles: self.handles.clone(),
            work: self.work.clone(),
            log: self.log.clone(),
            sessionless: self.sessionless,
            trail: None,
            follows_tasks: false,
            background: false,
            answers: None,
            owner: self.owner.clone(),
            client: self.client.clone(),
            stream: None,
            escalation: None,
            unasked: Arc::default(),
        }
    }

    /// The call's log messages go to `sink` (called from the tool's task; keep it quick
    /// and non-blocking).
    pub fn with_log(mut self, sink: log::LogSink) -> Self {
        self.log = Some(sink);
        self
    }

    /// Sends a log message to the caller, if it listens.
    pub fn log(&self, level: log::Level, logger: &'static str, data: Value) {
        if let Some(sink) = &self.log {
            sink(level, logger, data);
        }
    }

    /// The calling client can be asked something mid-call through `ask`.
    pub fn with_client(mut self, ask: ClientAsk) -> Self {
        self.client = Some(ask);
        self
    }

    /// Asks the calling client `method` with `params`, as the question `key` (unique in
    /// the call), and waits for its answer (or the call's cancellation). On a
    /// stateless request the question goes out in the call's answer
    /// ([`Unasked::InRound`]) and the tool is run again with every answer so far: a tool
    /// that asks does so before it changes anything, and asks the same questions under
    /// the same keys each time.
    ///
    /// # Errors
    ///
    /// [`Unasked`]: no client to ask, one that did not declare the capability (kept,
    /// for [`CallContext::unasked`]), a question asked in the answer, or a client that
    /// answered with an error.
    pub async fn ask_client(
        &self,
        key: &str,
        method: &'static str,
        params: Value,
    ) -> Result<Value, Unasked> {
        let Some(client) = &self.client else {
            return Err(Unasked::NoClient(format!(
                "{method}: this call has no client that can be asked mid-call"
            )));
        };
        let answer = tokio::select! {
            answer = (client.ask)(key.to_string(), method, params) => answer,
            () = self.cancelled() => Err(Unasked::Failed(format!("{method}: the call was cancelled"))),
        };
        if let Err(e @ Unasked::Undeclared(_)) = &answer {
            *self.unasked.lock().unwrap_or_else(|p| p.into_inner()) = Some(e.clone());
        }
        answer
    }

    /// [`CallContext::become_task`] runs `first`, then tells `to`.
    pub fn with_escalation(
        mut self,
        to: tokio::sync::oneshot::Sender<()>,
        first: impl FnOnce() + Send + 'static,
    ) -> Self {
        let once: Box<dyn FnOnce() + Send> = Box::new(first);
        self.escalation = Some(Arc::new(std::sync::Mutex::new(Some((to, once)))));
        self
    }

    /// Says that the call's questions are answered and its long work begins (a tool
    /// registered with [`crate::tools::Registry::asks_before_task`]): a caller that
    /// follows tasks is answered with the call's task now, and the work goes on as
    /// that task. True where the call became a task; false where it goes on as it was
    /// (a session, a caller without the extension, a call already a task).
    pub fn become_task(&self) -> bool {
        let taken = self
            .escalation
            .as_ref()
            .and_then(|e| e.lock().unwrap_or_else(|p| p.into_inner()).take());
        taken.is_some_and(|(to, first)| {
            first();
            to.send(()).is_ok()
        })
    }

    /// The call's response stream is closed by `close`.
    pub fn with_stream_closer(mut self, close: StreamCloser) -> Self {
        self.stream = Some(close);
        self
    }

    /// Closes the call's response stream (a 2025-11-25 session over HTTP, SSE polling):
    /// the client is told to come back after `retry` and resumes the stream, where the
    /// call's answer reaches it whenever it is sent. False where the call has no stream
    /// of its own to close (stdio, a stateless request, a task, the console).
    pub async fn close_stream(&self, retry: std::time::Duration) -> bool {
        match &self.stream {
            Some(close) => close(retry).await,
            None => false,
        }
    }

    /// Whether the calling client declared `capability` (`sampling`, `elicitation`,
    /// `roots`): what a tool reads to ask only what can be answered.
    pub fn client_declares(&self, capability: &str) -> bool {
        self.client
            .as_ref()
            .is_some_and(|c| c.declared.contains(&capability))
    }

    /// The capability a tool needed of the client and the client did not declare.
    pub fn unasked(&self) -> Option<Unasked> {
        self.unasked
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Marks the call as one with no session behind it (a stateless request).
    pub fn without_session(mut self) -> Self {
        self.sessionless = true;
        self
    }

    /// False for a stateless request, whose caller has nothing that outlives it.
    pub fn has_session(&self) -> bool {
        !self.sessionless
    }

    /// The client the call comes from counts its running work here.
    pub fn with_work(mut self, work: Arc<ClientWork>) -> Self {
        self.work = Some(work);
        self
    }

    /// The calling client's running work, if it brought its own.
    pub fn work(&self) -> Option<Arc<ClientWork>> {
        self.work.clone()
    }

    /// The client the call comes from keeps its subscriptions here.
    pub fn with_subscriptions(mut self, subscriptions: Arc<Subscriptions>) -> Self {
        self.subscriptions = Some(subscriptions);
        self
    }

    pub fn subscriptions(&self) -> Option<Arc<Subscriptions>> {
        self.subscriptions.clone()
    }

    /// The client the call comes from keeps the handles it made here.
    pub fn with_handles(mut self, handles: Arc<ClientHandles>) -> Self {
        self.handles = Some(handles);
        self
    }

    pub fn handles(&self) -> Option<Arc<ClientHandles>> {
        self.handles.clone()
    }

    /// What happened along the call beyond its progress goes to `sink`, one JSON value
    /// each: a call forwarded to another server reports each round of input the server
    /// asked for, each status of the task it ran the call as, and an answer taken from
    /// the cache.
    pub fn with_trail(mut self, sink: impl Fn(Value) + Send + Sync + 'static) -> Self {
        self.trail = Some(Arc::new(sink));
        self
    }

    /// The caller follows the call to its end even if the server runs it as a task (a
    /// client forwarding it declares the Tasks extension for it).
    pub fn following_tasks(mut self) -> Self {
        self.follows_tasks = true;
        self
    }

    /// Whether the caller follows a task the call may become.
    pub fn follows_tasks(&self) -> bool {
        self.follows_tasks
    }

    /// The call is the console's own polling (a list or the block height asked for
    /// again), not something anyone asked for.
    pub fn in_background(mut self) -> Self {
        self.background = true;
        self
    }

    /// Whether the call is the console's own polling.
    pub fn is_background(&self) -> bool {
        self.background
    }

    /// The rounds of input the call's server asks for get these answers first, in
    /// order (each a round's `inputResponses`), before anyone is asked.
    pub fn with_answers(mut self, answers: Vec<Value>) -> Self {
        if !answers.is_empty() {
            self.answers = Some(Arc::new(std::sync::Mutex::new(answers.into())));
        }
        self
    }

    /// The next answer given in advance for a round of input, if any is left.
    pub fn next_answer(&self) -> Option<Value> {
        self.answers
            .as_ref()?
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop_front()
    }

    /// Adds one event to the call's trail, if anyone follows it.
    pub fn trail(&self, event: Value) {
        if let Some(sink) = &self.trail {
            sink(event);
        }
    }

    /// The call is made by `owner`: what it makes is that caller's, and it sees only
    /// that caller's own (unless the caller is the operator).
    pub fn with_owner(mut self, owner: Principal) -> Self {
        self.owner = Some(owner);
        self
    }

    /// Who makes the call; `None` for the console itself.
    pub fn owner(&self) -> Option<&Principal> {
        self.owner.as_ref()
    }

    /// The id what the call makes is recorded under; `None` for the console's own.
    pub fn owner_id(&self) -> Option<String> {
        self.owner.as_ref().map(|p| p.id().to_string())
    }

    /// Whether the call may list, read or stop what `owner` made: the console and the
    /// operator may, any other caller its own only.
    pub fn sees(&self, owner: Option<&str>) -> bool {
        self.owner.as_ref().is_none_or(|p| p.owns(owner))
    }

    /// Whether anyone listens to progress.
    pub fn wants_progress(&self) -> bool {
        self.progress.is_some()
    }

    pub fn report(&self, update: ProgressUpdate) {
        if let Some(sink) = &self.progress {
            sink(update);
        }
    }

    /// The context of the call this task is running, or an empty one outside a call.
    pub fn current() -> CallContext {
        CONTEXT.try_with(Clone::clone).unwrap_or_default()
    }

    /// Runs `f` with this as the current context.
    pub(crate) async fn scope<F: Future>(self, f: F) -> F::Output {
        CONTEXT.scope(self, f).await
    }
}

/// Cancels a context when dropped unless disarmed: a call whose caller went away
/// (its future dropped) stops its work too.
pub(crate) struct CancelOnDrop(pub Option<CallContext>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(ctx) = self.0.take() {
            ctx.cancel();
        }
    }
}
