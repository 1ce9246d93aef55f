//! The one path a tool call takes when someone may be recording: [`Recorded`] wraps a
//! core and writes each call's request and answer to the session log, when there is
//! one. The MCP server, the console's dispatcher, a plan's steps and a replay all call
//! through it, so a `--record` log holds every call whichever face made it.

use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

use super::Recorder;
use crate::context::CallContext;
use crate::core::{Core, Prepared};
use crate::error::ToolError;
use crate::handles::Handles;
use crate::source::{BoxFuture, SourceInfo};

/// A core whose calls are recorded (when a recorder is given).
#[derive(Clone)]
pub struct Recorded {
    core: Core,
    recorder: Option<Arc<Recorder>>,
}

impl Recorded {
    /// Calls on `core`, each written to `recorder` when there is one.
    pub fn new(core: Core, recorder: Option<Arc<Recorder>>) -> Recorded {
        Recorded { core, recorder }
    }

    /// Calls `tool` and records the call; a failure is the tool's error.
    pub async fn call(
        &self,
        tool: &str,
        args: Value,
        ctx: CallContext,
    ) -> Result<Value, ToolError> {
        call_recorded(&self.core, self.recorder.as_deref(), tool, args, ctx)
            .await
            .map_err(|(error, _)| error)
    }

    /// Calls `tool` and records the call; a failure is the error's wire object, the
    /// very one the log holds (an MCP answer and its record agree to the timestamp).
    pub async fn call_wire(
        &self,
        tool: &str,
        args: Value,
        ctx: CallContext,
    ) -> Result<Value, Value> {
        call_recorded(&self.core, self.recorder.as_deref(), tool, args, ctx)
            .await
            .map_err(|(_, wire)| wire)
    }

    /// The source's name, height and clock, for headers and records.
    pub fn status(&self) -> SourceInfo {
        self.core.status()
    }

    /// The wall clock's time now, as error objects stamp it.
    pub fn timestamp(&self) -> String {
        self.core.timestamp()
    }
}

/// Calls `tool` on `core` and, when there is a recorder, writes the request and the
/// answer to it. A failure comes back as the tool's error and as its wire object, the
/// one the log holds, so that whoever answers with it answers what was recorded.
pub async fn call_recorded(
    core: &Core,
    recorder: Option<&Recorder>,
    tool: &str,
    args: Value,
    ctx: CallContext,
) -> Result<Value, (ToolError, Value)> {
    let started = Instant::now();
    let call = recorder.map(|r| r.request(tool, &args, &core.status()));
    let result = core.call_with(tool, args, ctx).await;
    answered(core, recorder.zip(call), tool, started, result)
}

/// [`call_recorded`] for a call already prepared (or refused for its arguments):
/// `given` is what the client sent, as the log keeps it.
pub async fn run_recorded(
    core: &Core,
    recorder: Option<&Recorder>,
    given: &Value,
    tool: &str,
    prepared: Result<Prepared, ToolError>,
    ctx: CallContext,
) -> Result<Value, (ToolError, Value)> {
    let started = Instant::now();
    let call = recorder.map(|r| r.request(tool, given, &core.status()));
    let result = match prepared {
        Ok(call) => call.run(ctx).await,
        Err(error) => Err(error),
    };
    answered(core, recorder.zip(call), tool, started, result)
}

/// The answer recorded, and a failure given its wire object.
fn answered(
    core: &Core,
    recording: Option<(&Recorder, u64)>,
    tool: &str,
    started: Instant,
    result: Result<Value, ToolError>,
) -> Result<Value, (ToolError, Value)> {
    let result = result.map_err(|error| {
        let wire = error.to_json(&core.timestamp());
        (error, wire)
    });
    if let Some((r, call)) = recording {
        let outcome = result.as_ref().map_err(|(_, wire)| wire);
        r.response(call, tool, outcome, started.elapsed(), &core.status());
    }
    result
}

/// A plan's steps call through the recorder like any other call.
impl crate::plan::Dispatch for Recorded {
    fn call(
        &self,
        tool: &str,
        args: Value,
        ctx: CallContext,
    ) -> BoxFuture<'static, Result<Value, ToolError>> {
        let this = self.clone();
        let tool = tool.to_string();
        Box::pin(async move { this.call(&tool, args, ctx).await })
    }

    fn input_schema(&self, tool: &str) -> Option<Value> {
        crate::plan::Dispatch::input_schema(&self.core, tool)
    }

    fn similar_tools(&self, tool: &str) -> Vec<String> {
        crate::plan::Dispatch::similar_tools(&self.core, tool)
    }

    fn check_arguments(&self, tool: &str, args: &Value) -> Result<(), ToolError> {
        crate::plan::Dispatch::check_arguments(&self.core, tool, args)
    }

    fn handles(&self) -> Option<Arc<Handles>> {
        crate::plan::Dispatch::handles(&self.core)
    }

    fn wall(&self) -> crate::clock::WallClock {
        crate::plan::Dispatch::wall(&self.core)
    }

    fn client_work(&self, ctx: &CallContext) -> Arc<crate::context::ClientWork> {
        crate::plan::Dispatch::client_work(&self.core, ctx)
    }
}
