//! Tool calls off the draw loop: each call runs as a task on the tokio runtime,
//! through the recorder, and its result comes back over a channel tagged with the id
//! the call was given and the owner who made it. The console never waits on the core;
//! it applies whatever results have arrived before each frame.

use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

use serde_json::Value;
use tokio::runtime::Handle;

use crate::context::CallContext;
use crate::core::Core;
use crate::error::{ErrorCode, ToolError};
use crate::record::{Recorded, Recorder};
use crate::tui::tab::Tab;

/// Who made a tool call, so that its reply goes straight back there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Owner {
    /// The app itself (the block clock's keys).
    App,
    /// The source dialog.
    Source,
    /// The pane behind a tab.
    Pane(Tab),
}

/// Names one tool call, so its result can be matched to whoever asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct RequestId(u64);

/// A finished tool call.
#[derive(Debug)]
pub(crate) struct Reply {
    pub id: RequestId,
    /// Who made the call: the reply goes to them alone.
    pub owner: Owner,
    pub result: Result<Value, ToolError>,
}

/// Sends tool calls to the runtime and collects their results. Every call the
/// console makes goes through here, and so through the recorder (`--record`): a pane's
/// own calls, a plan's steps and a replay's calls alike.
pub(crate) struct Dispatcher {
    calls: Recorded,
    runtime: Handle,
    sender: Sender<Reply>,
    receiver: Receiver<Reply>,
    next_id: u64,
    pending: usize,
    /// Long calls (proof-of-work searches) among the pending ones: they run until
    /// done or cancelled, so they do not count as the console loading.
    background: std::collections::HashSet<RequestId>,
}

impl Dispatcher {
    /// Calls on `core`, recorded to `recorder` when there is one.
    pub fn new(core: Core, runtime: Handle, recorder: Option<Arc<Recorder>>) -> Dispatcher {
        let (sender, receiver) = mpsc::channel();
        Dispatcher {
            calls: Recorded::new(core, recorder),
            runtime,
            sender,
            receiver,
            next_id: 0,
            pending: 0,
            background: std::collections::HashSet::new(),
        }
    }

    /// Starts `tool` with `args` and returns at once. Exactly one [`Reply`] with the
    /// returned id will arrive, even if the tool panics (the core reports that as an error).
    pub fn call(&mut self, owner: Owner, tool: &str, args: Value) -> RequestId {
        self.spawn(owner, tool, args, CallContext::new())
    }

    /// [`Dispatcher::call`] for the console's own polling (a list asked for again):
    /// marked so that a server tab's traffic can leave it out.
    pub fn poll(&mut self, owner: Owner, tool: &str, args: Value) -> RequestId {
        self.spawn(owner, tool, args, CallContext::new().in_background())
    }

    /// [`Dispatcher::call`] with a call context, for long calls: the caller keeps a
    /// clone to cancel the call, and the context's progress sink receives the tool's
    /// reports. Such calls do not count as loading.
    pub fn call_with(
        &mut self,
        owner: Owner,
        tool: &str,
        args: Value,
        ctx: CallContext,
    ) -> RequestId {
        let id = self.spawn(owner, tool, args, ctx);
        self.background.insert(id);
        id
    }

    /// Runs `task` on the runtime as a long background job (a plan's run) and answers
    /// with its outcome like a call. Exactly one [`Reply`] comes back, even if the task
    /// panics (then as `TOOL_EXECUTION_FAILED`). It does not count as loading.
    pub fn spawn_task<F>(&mut self, owner: Owner, task: F) -> RequestId
    where
        F: std::future::Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        self.next_id += 1;
        let id = RequestId(self.next_id);
        self.pending += 1;
        self.background.insert(id);
        let sender = self.sender.clone();
        let handle = self.runtime.spawn(task);
        self.runtime.spawn(async move {
            let result = match handle.await {
                Ok(result) => result,
                Err(e) => Err(ToolError::new(
                    ErrorCode::ToolExecutionFailed,
                    format!("the console's background task ended unexpectedly: {e}"),
                )),
            };
            let _ = sender.send(Reply { id, owner, result });
        });
        id
    }

    fn spawn(&mut self, owner: Owner, tool: &str, args: Value, ctx: CallContext) -> RequestId {
        self.next_id += 1;
        let id = RequestId(self.next_id);
        self.pending += 1;
        let calls = self.calls.clone();
        let tool = tool.to_string();
        let sender = self.sender.clone();
        self.runtime.spawn(async move {
            // `Core::call_with` turns a panicking tool into an error result, so exactly
            // one reply comes back for every call.
            let result = calls.call(&tool, args, ctx).await;
            // The console may have closed meanwhile; then nobody wants the result.
            let _ = sender.send(Reply { id, owner, result });
        });
        id
    }

    /// The tools as a plan's steps call them: through the recorder, like every call.
    pub fn tools(&self) -> crate::plan::Caller {
        Arc::new(self.calls.clone())
    }

    /// A replayer whose calls go through the recorder, like every call.
    pub fn replayer(&self) -> crate::record::replay::Replayer {
        crate::record::replay::Replayer::new(self.calls.clone())
    }

    /// The source's name, height and clock (the header's figures).
    pub fn status(&self) -> crate::source::SourceInfo {
        self.calls.status()
    }

    /// The wall clock's time now, as error objects stamp it.
    pub fn timestamp(&self) -> String {
        self.calls.timestamp()
    }

    /// A result that has arrived, without waiting.
    pub fn try_next(&mut self) -> Option<Reply> {
        let reply = self.receiver.try_recv().ok()?;
        self.pending = self.pending.saturating_sub(1);
        self.background.remove(&reply.id);
        Some(reply)
    }

    /// The next result, waiting up to `timeout` for it. Never call this from inside
    /// the runtime: it blocks the thread.
    pub fn wait_next(&mut self, timeout: Duration) -> Option<Reply> {
        match self.receiver.recv_timeout(timeout) {
            Ok(reply) => {
                self.pending = self.pending.saturating_sub(1);
                self.background.remove(&reply.id);
                Some(reply)
            }
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => None,
        }
    }

    /// Calls started whose results have not been taken yet.
    pub fn pending(&self) -> usize {
        self.pending
    }

    /// Pending calls other than long background ones (what the console is loading).
    pub fn loading(&self) -> usize {
        self.pending - self.background.len()
    }

    /// Every call started so far.
    pub fn sent(&self) -> u64 {
        self.next_id
    }
}
