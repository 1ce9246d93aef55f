//! The fault rules applied to a call: answered in the server's place or delayed on its
//! way there, and the server's answer dropped, cut or padded before the agent gets it.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::{Broker, Call, Decision, HostCall};
use crate::mcp::proxy::answers::{response_line, truncate_text};
use crate::mcp::proxy::rules::Fault;

impl Broker {
    /// Answers a call in the server's place after `latency`, the answer marked with
    /// what gave it (`injected`).
    pub(super) fn answer_in_place(
        self: &Arc<Self>,
        id: &Value,
        result: &Value,
        injected: String,
        latency: Duration,
    ) {
        self.lock().calls.remove(&id.to_string());
        let bytes = response_line(id, result);
        let broker = self.clone();
        let in_hand = self.in_hand();
        tokio::spawn(async move {
            let _in_hand = in_hand;
            tokio::time::sleep(latency).await;
            broker.send_host(bytes, Some(injected));
        });
    }

    /// Sends a call on to the server after `latency`.
    pub(super) fn delay_request(
        &self,
        call: &HostCall<'_>,
        fired: &[(usize, Fault)],
        latency: Duration,
    ) {
        // Delayed: the answer will be marked, with the (first) rule that delayed it.
        let rule = fired
            .iter()
            .find(|(_, f)| matches!(f, Fault::Latency(_)))
            .map_or(0, |(n, _)| *n);
        if let Some(call) = self.lock().calls.get_mut(&call.id.to_string()) {
            call.response_faults
                .insert(0, (rule, Fault::Latency(latency)));
        }
        let to_server = self.to_server.clone();
        let bytes = call.line.to_vec();
        let in_hand = self.in_hand();
        tokio::spawn(async move {
            let _in_hand = in_hand;
            tokio::time::sleep(latency).await;
            let _ = to_server.send(bytes);
        });
    }

    /// The server's answer (request `id`, known by `key`) after the call's response
    /// faults: passed when none fired, else taken (dropped) or replaced, saying which.
    pub(super) fn fault_response(
        &self,
        call: &Call,
        key: &str,
        id: &Value,
        message: &Value,
    ) -> Decision {
        let mut notes = Vec::new();
        let mut result = message.get("result").cloned();
        for (n, fault) in &call.response_faults {
            let note = format!("{} (rule {n})", fault.describe());
            match fault {
                Fault::DropResponse => {
                    // The agent waits on, as for a server that never answers; the feed
                    // says the answer came and was kept from it.
                    if let Some(tap) = &self.tap {
                        tap.dropped(key, &note);
                    }
                    self.publish(json!({"type": "dropped", "call": call.number,
                        "tool": call.tool, "how": note}));
                    return Decision::Taken;
                }
                Fault::Truncate(n) => {
                    if let Some(r) = &mut result {
                        truncate_text(r, *n);
                    }
                }
                Fault::Oversize(n) => {
                    if let Some(r) = &mut result {
                        pad(r, *n);
                    }
                }
                Fault::Latency(_) | Fault::Error(_) | Fault::Stale => {}
            }
            notes.push(note);
        }
        if notes.is_empty() {
            return Decision::Pass;
        }
        let bytes = match result {
            Some(r) => response_line(id, &r),
            None => {
                let mut line = message.to_string().into_bytes();
                line.push(b'\n');
                line
            }
        };
        Decision::Replace(bytes, notes.join(", "))
    }
}

/// The same answer, padded with white space after its text: still valid JSON, still the
/// tool's output schema, `n` bytes big.
fn pad(r: &mut Value, n: usize) {
    let pad = n.saturating_sub(r.to_string().len());
    match r["content"]
        .as_array_mut()
        .and_then(|c| c.iter_mut().find(|c| c["text"].is_string()))
    {
        Some(text) => {
            let padded = format!("{}{}", text["text"].as_str().unwrap_or(""), " ".repeat(pad));
            text["text"] = json!(padded);
        }
        None => {
            let item = json!({"type": "text", "text": " ".repeat(pad.saturating_sub(30))});
            match r["content"].as_array_mut() {
                Some(content) => content.push(item),
                None => r["content"] = json!([item]),
            }
        }
    }
}
