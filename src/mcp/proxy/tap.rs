//! The proxy's recording: the tool calls the host sends, the answers it gets (marked
//! when they did not come from the server) and the server's notifications, written
//! to the session log and the live feed in the format `--headless --record` writes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::{Value, json};

use crate::mcp::wire::tool_outcome;
use crate::record::Recorder;
use crate::source::SourceInfo;

/// What the tap keeps between a request and its answer.
struct Pending {
    call: u64,
    tool: String,
    started: Instant,
    /// Why its answer is not the server's answer to the request recorded.
    note: Option<String>,
}

/// Records what passes.
pub(crate) struct Tap {
    pub(super) recorder: Option<Arc<Recorder>>,
    pub(super) source: SourceInfo,
    /// `tools/call` requests waiting for their answers, by their id as JSON text.
    pending: Mutex<HashMap<String, Pending>>,
}

impl Tap {
    pub(super) fn new(recorder: Option<Arc<Recorder>>, description: String) -> Tap {
        Tap {
            recorder,
            source: SourceInfo {
                name: "proxy",
                description,
                block_height: 0,
                paused: false,
            },
            pending: Mutex::new(HashMap::new()),
        }
    }

    /// True when what passes is recorded now (a log file, or a watcher).
    pub(super) fn active(&self) -> bool {
        self.recorder.as_ref().is_some_and(|r| r.wanted())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Pending>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A message from the host: a tool call is recorded (its number returned), a
    /// cancellation ends the call it names.
    pub(super) fn host_sent(&self, m: &Value) -> Option<u64> {
        let recorder = self.recorder.as_ref().filter(|r| r.wanted())?;
        let id = m.get("id").filter(|id| !id.is_null()).map(Value::to_string);
        match (m["method"].as_str(), id) {
            (Some("tools/call"), Some(id)) => {
                let tool = m["params"]["name"].as_str().unwrap_or("").to_string();
                let arguments = m["params"]
                    .get("arguments")
                    .cloned()
                    .unwrap_or_else(|| json!({}));
                let token = m["params"]["_meta"].get("progressToken");
                let call = recorder.request_tracked(&tool, &arguments, token, &self.source);
                self.lock().insert(
                    id,
                    Pending {
                        call,
                        tool,
                        started: Instant::now(),
                        note: None,
                    },
                );
                Some(call)
            }
            (Some("notifications/cancelled"), None) => {
                // The host gave up on a call: the server need not answer it, so the
                // log says it ended here.
                let id = m["params"]["requestId"].to_string();
                let p = self.lock().remove(&id)?;
                let reason = m["params"]["reason"].as_str().unwrap_or("no reason given");
                let error = json!({"error": {
                    "code": "TOOL_CANCELLED",
                    "message": format!("the client cancelled the call: {reason}"),
                }});
                // A call whose answer a fault rule kept from the agent ends here too,
                // marked with the rule: the agent gave up waiting.
                recorder.response_injected(
                    p.call,
                    &p.tool,
                    Err(&error),
                    p.started.elapsed(),
                    &self.source,
                    p.note.as_deref(),
                );
                None
            }
            _ => None,
        }
    }

    /// A line on its way to the host; `injected` when it did not come from the
    /// server.
    pub(super) fn host_gets(&self, line: &[u8], injected: Option<&str>) {
        if self.recorder.is_none() {
            return;
        }
        // A line the broker wrote: one message, or several on their lines.
        for text in line.split(|b| *b == b'\n') {
            if let Ok(message) = serde_json::from_slice::<Value>(text) {
                self.host_gets_message(&message, injected);
            }
        }
    }

    /// A message on its way to the host (a batch: each of its messages).
    pub(super) fn host_gets_message(&self, message: &Value, injected: Option<&str>) {
        let Some(recorder) = &self.recorder else {
            return;
        };
        let messages: &[Value] = match message {
            Value::Array(items) => items,
            _ => std::slice::from_ref(message),
        };
        for m in messages {
            let id = m.get("id").filter(|id| !id.is_null()).map(Value::to_string);
            match (m["method"].as_str(), id) {
                (None, Some(id)) => {
                    let Some(p) = self.lock().remove(&id) else {
                        continue;
                    };
                    let outcome = match (m.get("result"), m.get("error")) {
                        (Some(result), _) => tool_outcome(result),
                        (None, Some(error)) => Err(json!({ "error": error })),
                        (None, None) => Err(
                            json!({"error": {"message": "an answer with neither result nor error"}}),
                        ),
                    };
                    recorder.response_injected(
                        p.call,
                        &p.tool,
                        outcome.as_ref(),
                        p.started.elapsed(),
                        &self.source,
                        injected.or(p.note.as_deref()),
                    );
                }
                (Some(method), None) if method.starts_with("notifications/") => {
                    recorder.notification(method, m.get("params").cloned().unwrap_or(Value::Null));
                }
                _ => {}
            }
        }
    }

    /// The call with this id was changed on its way (its arguments edited): its answer
    /// will be logged as not the server's answer to the request logged.
    pub(super) fn note(&self, id: &str, note: &str) {
        if let Some(p) = self.lock().get_mut(id) {
            p.note = Some(note.to_string());
        }
    }

    /// The session ended: every call still waiting for its answer ends in the log as
    /// not answered (marked with why its answer was kept from the agent, when it was),
    /// so that no call is left running for ever in the log and the live feed.
    pub(super) fn session_ended(&self) {
        let Some(recorder) = &self.recorder else {
            return;
        };
        let waiting: Vec<Pending> = self.lock().drain().map(|(_, p)| p).collect();
        for p in waiting {
            let error = json!({"error": {
                "code": "TOOL_CANCELLED",
                "message": "the session ended before the agent got an answer",
            }});
            recorder.response_injected(
                p.call,
                &p.tool,
                Err(&error),
                p.started.elapsed(),
                &self.source,
                Some(
                    p.note
                        .as_deref()
                        .unwrap_or("no answer before the session ended"),
                ),
            );
        }
    }

    /// The server's answer to the call with this id was dropped on purpose: the agent
    /// gets none, so for the agent the call goes on until it gives up on it (its
    /// `notifications/cancelled`), which the log records, marked with `note`.
    pub(super) fn dropped(&self, id: &str, note: &str) {
        self.note(id, note);
    }
}
