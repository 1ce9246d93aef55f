//! A call made ready once: [`Core::prepare`] looks the tool up and checks the
//! arguments (their size, the catalog's other names, the schema, the reference and
//! shaping options), and [`Prepared::run`] runs it. Whoever answers a call (a server
//! asking a person to confirm, making a task, or running it now) reads the tool's
//! hints from the prepared call and never looks it up or checks it again.

use std::panic::AssertUnwindSafe;

use futures_util::FutureExt;
use serde_json::{Value, json};
use tracing::Instrument as _;
use tracing::field::Empty;

use super::{Core, check_size, panic_text};
use crate::context::{CallContext, CancelOnDrop, trace};
use crate::error::{ErrorCode, ToolError};
use crate::handles;
use crate::handles::Shaping;
use crate::references::{self, ReferencePlan};
use crate::tools::{Handler, Hints, Origin, TaskSupport};

/// A tool call whose arguments passed every check, ready to run.
pub struct Prepared {
    core: Core,
    tool: &'static str,
    hints: Hints,
    tasks: TaskSupport,
    /// Whether it asks its client before its long work becomes a task.
    asks_first: bool,
    /// Where the tool comes from: only a catalog tool's answer gets references,
    /// shaping and handles.
    origin: Origin,
    handler: Handler,
    /// The arguments as the handler reads them: renamed, nulls dropped, the
    /// reference and shaping options taken out.
    args: Value,
    references: ReferencePlan,
    shaping: handles::Request,
}

impl Core {
    /// Looks `tool` up and checks `args` (`null` is no arguments) once: what a call
    /// would be refused for is refused here, before anyone is asked or anything runs.
    ///
    /// # Errors
    ///
    /// `TOOL_NOT_FOUND` for a tool not registered (with the nearest names), and the
    /// validation error of arguments the tool would refuse.
    pub fn prepare(&self, tool: &str, args: Value) -> Result<Prepared, ToolError> {
        let Some(registered) = self.inner.registry.get(tool) else {
            return Err(self.unknown_tool(tool));
        };
        let mut args = if args.is_null() { json!({}) } else { args };
        check_size(&args)?;
        registered.prepare(&mut args)?;
        let spec = registered.spec();
        // A forwarded tool's server attaches references, shapes and stores its own
        // results, and a content tool's answer is its own: its arguments go on as given.
        let (references, shaping) =
            if self.inner.forwarded || registered.origin() != Origin::Catalog {
                (ReferencePlan::Off, handles::Request::default())
            } else {
                let plan = references::config::plan(
                    self.inner.references.config(),
                    tool,
                    spec.references,
                    &mut args,
                )?;
                let shaping = match spec.shaping {
                    Shaping::Standard => handles::Request::take(&mut args),
                    Shaping::Own => handles::Request::default(),
                };
                (plan, shaping)
            };
        Ok(Prepared {
            core: self.clone(),
            tool: spec.name,
            hints: spec.hints,
            tasks: registered.task_support(),
            asks_first: registered.asks_first(),
            origin: registered.origin(),
            handler: registered.handler().clone(),
            args,
            references,
            shaping,
        })
    }
}

impl Prepared {
    /// The tool's name.
    pub fn tool(&self) -> &'static str {
        self.tool
    }

    /// What the call does, as the tool's annotations say.
    pub fn hints(&self) -> Hints {
        self.hints
    }

    /// Whether the call may destroy or spend something (a person may be asked first).
    pub fn is_destructive(&self) -> bool {
        self.hints.destructive == Some(true)
    }

    /// Whether the call is long work: it reports its progress, and runs as a task for
    /// a client that declared the extension.
    pub fn is_long(&self) -> bool {
        self.tasks != TaskSupport::Never
    }

    /// Whether the call runs only as a task: a client that did not declare the
    /// extension is refused.
    pub fn requires_task(&self) -> bool {
        self.tasks == TaskSupport::Required
    }

    /// Whether it asks its client before its long work becomes a task
    /// ([`crate::tools::Registry::asks_before_task`]).
    pub fn asks_first(&self) -> bool {
        self.asks_first
    }

    /// Whether the answer is an MCP tool result as the tool wrote it
    /// ([`Origin::Content`]), sent as it is, rather than JSON to wrap.
    pub fn answers_content(&self) -> bool {
        self.origin == Origin::Content
    }

    /// Runs the call: the handler → references attached → shaped, and a result over
    /// the limit stored as a handle. The caller cancels it through `ctx` and hears its
    /// progress there; dropping the future cancels `ctx` too, so work the caller
    /// abandoned stops.
    ///
    /// # Errors
    ///
    /// The tool's error, or `TOOL_EXECUTION_FAILED` for a tool that panicked (the core
    /// keeps serving).
    pub async fn run(self, ctx: CallContext) -> Result<Value, ToolError> {
        let mut guard = CancelOnDrop(Some(ctx.clone()));
        let Prepared {
            core,
            tool,
            handler,
            args,
            references,
            shaping,
            origin,
            ..
        } = self;
        let world = core.world();
        let result = handler(core.env(world.clone(), shaping.clone()), args);
        let result = if core.inner.forwarded {
            ctx.scope(result).await
        } else if origin == Origin::Content {
            // A panic is the server's failure, not the tool's answer: the caller gets
            // it as a protocol error.
            match AssertUnwindSafe(ctx.scope(result)).catch_unwind().await {
                Ok(result) => result,
                Err(panic) => Err(ToolError::new(
                    ErrorCode::ToolExecutionFailed,
                    format!("{tool} failed unexpectedly: {}", panic_text(panic)),
                )),
            }
        } else {
            let resolver = core.inner.references.clone();
            let handles = core.inner.handles.clone();
            // A bug that panics in one tool comes back as a structured error and the
            // server keeps serving. The handler runs in the caller's task, not a task
            // of its own: a call costs one task less, and a call its caller let go of
            // stops at once.
            let task = async move {
                let mut value = result.await?;
                let span = match references {
                    ReferencePlan::Off => tracing::Span::none(),
                    _ => tracing::info_span!(
                        target: trace::TARGET, "references", structs.references.count = Empty
                    ),
                };
                references::attach(
                    &resolver,
                    &world,
                    &references,
                    shaping.is_lean(),
                    &mut value,
                )
                .instrument(span.clone())
                .await;
                if !span.is_disabled() {
                    let count = value["references"].as_object().map_or(0, |m| m.len());
                    span.record("structs.references.count", count as i64);
                }
                handles.finish(tool, &shaping, value).await
            };
            match AssertUnwindSafe(ctx.scope(task)).catch_unwind().await {
                Ok(result) => result,
                Err(panic) => Err(ToolError::new(
                    ErrorCode::ToolExecutionFailed,
                    format!("{tool} failed unexpectedly: {}", panic_text(panic)),
                )),
            }
        };
        guard.0 = None;
        result
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use crate::source::sim::SimSource;

    fn core() -> Core {
        Core::builder(Arc::new(SimSource::demo()), super::super::tests::catalog())
            .build()
            .unwrap()
    }

    #[test]
    fn a_prepared_call_tells_its_hints() {
        let core = core();
        let action = core
            .prepare("structs_action_build_struct", json!({"player_id": "1-1"}))
            .unwrap();
        assert!(action.is_destructive());
        assert!(!action.is_long());
        let query = core
            .prepare("structs_query_player", json!({"player_id": "1-1"}))
            .unwrap();
        assert_eq!(query.tool(), "structs_query_player");
        assert!(!query.is_destructive());
        assert!(!query.is_long());
        assert_eq!(query.hints(), crate::tools::Hints::READ);
        let search = core
            .prepare(
                "structs_calculate_proof_of_work",
                json!({"action_type": "struct_build_complete", "entity_id": "5-1"}),
            )
            .unwrap();
        assert!(search.is_long());
        assert!(!search.is_destructive());
    }

    #[test]
    fn what_a_call_would_be_refused_for_is_refused_when_prepared() {
        let core = core();
        let unknown = core
            .prepare("structs_no_such_tool", json!({}))
            .err()
            .unwrap();
        assert_eq!(unknown.code, ErrorCode::ToolNotFound);
        let missing = core
            .prepare("structs_query_player", json!({}))
            .err()
            .unwrap();
        assert_eq!(
            missing.code,
            ErrorCode::ValidationMissingField,
            "{missing:?}"
        );
        let bad_reference = core
            .prepare(
                "structs_query_player",
                json!({"player_id": "1-1", "references": "sideways"}),
            )
            .err()
            .unwrap();
        assert!(
            bad_reference.code.as_str().starts_with("VALIDATION_"),
            "{bad_reference:?}"
        );
        assert!(
            core.check_arguments("structs_query_player", &json!({}))
                .is_err()
        );
        assert!(
            core.check_arguments("structs_query_player", &json!({"player_id": "1-1"}))
                .is_ok()
        );
    }

    #[tokio::test]
    async fn a_prepared_call_runs_as_a_call_does() {
        let core = core();
        let args = json!({"player_id": "1-1", "verbosity": "compact"});
        let prepared = core
            .prepare("structs_query_player", args.clone())
            .unwrap()
            .run(CallContext::new())
            .await
            .unwrap();
        assert_eq!(
            prepared,
            core.call("structs_query_player", args).await.unwrap()
        );
        assert!(prepared.get("verbosity").is_none());
    }
}
