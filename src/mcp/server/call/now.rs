//! The now stage: a call run while its request waits. Its progress goes out as
//! `notifications/progress`, in order, through one forwarding task; the request's
//! cancellation stops the work; a stateless request's log goes out on its stream
//! before the answer.

use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{CallToolResult, NotificationMetaObject, ProgressNotificationParam};
use rmcp::service::RequestContext;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::super::McpServer;
use super::super::stateless::{self, Caller};
use super::Call;
use crate::context::{CallContext, ProgressUpdate};
use crate::record::Recorder;

/// How long the answer waits for the last progress reports to go out.
const PROGRESS_FLUSH: Duration = Duration::from_secs(2);

impl McpServer {
    pub(super) async fn run_now(
        &self,
        call: Call,
        caller: Caller,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, rmcp::ErrorData> {
        let (ctx, forwarder) = match context.meta.get_progress_token() {
            Some(token) => {
                let (tx, rx) = mpsc::unbounded_channel::<ProgressUpdate>();
                let ctx = CallContext::new().with_progress(move |u| {
                    let _ = tx.send(u);
                });
                let peer = context.peer.clone();
                let forwarder = forward_progress(token, rx, peer, caller.recorder.clone());
                (ctx, Some(forwarder))
            }
            None => (CallContext::new(), None),
        };
        // notifications/cancelled for this request stops the work. Watched here, not
        // by a task of its own: one task less a call.
        let canceller = ctx.canceller();
        let run = self.run(&caller, call, ctx);
        tokio::pin!(run);
        let result = tokio::select! {
            biased;
            result = &mut run => result,
            () = context.ct.cancelled() => {
                canceller.cancel();
                run.await
            }
        };
        if stateless::is_stateless(context)
            && let Some(log) = &caller.log
        {
            // A request's own log goes out on its stream, before its answer.
            log.drain().await;
        }
        if let Some(forwarder) = forwarder {
            // Every report is sent before the result.
            let _ = tokio::time::timeout(PROGRESS_FLUSH, forwarder).await;
        }
        result
    }
}

/// Sends each report as a progress notification (the tool's own figures in `_meta`,
/// for a console attached over MCP), recorded when there is a recorder, until the
/// call's context is gone or the peer is.
fn forward_progress(
    token: rmcp::model::ProgressToken,
    mut rx: mpsc::UnboundedReceiver<ProgressUpdate>,
    peer: rmcp::Peer<RoleServer>,
    recorder: Option<std::sync::Arc<Recorder>>,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        while let Some(u) = rx.recv().await {
            let mut param =
                ProgressNotificationParam::new(token.clone(), u.progress).with_message(u.message);
            if let Some(total) = u.total {
                param = param.with_total(total);
            }
            if !u.data.is_null() {
                let mut meta = NotificationMetaObject::new();
                meta.0
                    .0
                    .insert(crate::mcp::wire::PROGRESS_DATA_KEY.into(), u.data);
                param.meta = Some(meta);
            }
            if let Some(r) = &recorder {
                r.notification(
                    "notifications/progress",
                    serde_json::to_value(&param).unwrap_or_default(),
                );
            }
            if peer.notify_progress(param).await.is_err() {
                break;
            }
        }
    })
}
