//! The one path a tool call takes when someone may be recording: [`Recorded`] wraps a
//! core and writes each call's request and answer to the session log, when there is
//! one. The MCP server, the console's dispatcher, a plan's steps and a replay all call
//! through it, so a `--record` log holds every call whichever face made it.

use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

use super::Recorder;
use crate::context::CallContext;
use crate::core::Core;
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
        let Some(recorder) = &self.recorder else {
            return self.core.call_with(tool, args, ctx).await;
        };
        let started = Instant::now();
        let call = recorder.request(tool, &args, &self.core.status());
        let result = self.core.call_with(tool, args, ctx).await;
        let outcome = match &result {
            Ok(v) => Ok(v.clone()),
            Err(e) => Err(e.to_json(&self.core.timestamp())),
        };
        recorder.response(call, tool, &outcome, started.elapsed(), &self.core.status());
        result
    }

    /// Calls `tool` and records the call; a failure is the error's wire object, the
    /// very one the log holds (an MCP answer and its record agree to the timestamp).
    pub async fn call_wire(
        &self,
        tool: &str,
        args: Value,
        ctx: CallContext,
    ) -> Result<Value, Value> {
        let started = Instant::now();
        let call = self
            .recorder
            .as_ref()
            .map(|r| r.request(tool, &args, &self.core.status()));
        let result = self
            .core
            .call_with(tool, args, ctx)
            .await
            .map_err(|e| e.to_json(&self.core.timestamp()));
        if let (Some(r), Some(call)) = (&self.recorder, call) {
            r.response(call, tool, &result, started.elapsed(), &self.core.status());
        }
        result
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
