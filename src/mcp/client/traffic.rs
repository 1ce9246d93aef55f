//! The traffic of one connection: every JSON-RPC message in both directions, kept for
//! the Server tab ([`Wire`]), and the transport that writes to it ([`Logged`]).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use rmcp::RoleClient;
use rmcp::transport::Transport;
use serde_json::Value;

use super::STDERR;

/// How the traffic names a message the library dropped unread.
pub const UNREAD: &str = "unread";

/// How many JSON-RPC messages the traffic view keeps (the newest).
pub(super) const WIRE_KEEP: usize = 2_000;

/// The longest message text kept whole; longer ones are cut, with a marker.
pub(super) const WIRE_TEXT_MAX: usize = 256 * 1024;

/// Which of a [`Wire`]'s lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    /// Every message, both ways.
    Messages,
    /// The notifications received (and the server's stderr lines).
    Notifications,
}

/// Which way a message went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// From the console to the server.
    Sent,
    /// From the server to the console.
    Received,
}

/// One JSON-RPC message as it crossed the wire.
#[derive(Debug, Clone)]
pub struct WireMessage {
    /// Its number, from 1, over the whole connection (0 for a stderr line).
    pub seq: u64,
    /// Milliseconds since the connection was opened.
    pub at_ms: u64,
    pub direction: Direction,
    /// `tools/call`, `notifications/progress`, or `response` / `error` for answers.
    pub method: String,
    /// The request id it carries or answers, if any.
    pub id: Option<String>,
    /// The message as compact JSON (cut at 256 KB).
    pub text: String,
    /// What a request is about, and an answer answers: the tool or prompt by name, the
    /// resource by URI, the task by id.
    pub target: Option<String>,
    /// A request the console made by itself (its polling: the block height, the task
    /// and handle lists), or the answer to one.
    pub background: bool,
}

impl WireMessage {
    /// True for a notification (a message with a method and no id).
    pub fn is_notification(&self) -> bool {
        self.id.is_none() && self.method.contains('/')
    }
}

/// Which messages a view of the traffic keeps.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// Leave out the console's own polling.
    pub hide_background: bool,
    /// Keep only messages whose method, target or id holds this text, or whose JSON
    /// does in its first [`FILTER_TEXT_READ`] bytes (case ignored); empty keeps all.
    pub text: String,
}

/// How much of a message's JSON a text filter reads.
pub const FILTER_TEXT_READ: usize = 4096;

impl Filter {
    pub fn is_empty(&self) -> bool {
        !self.hide_background && self.text.is_empty()
    }

    pub fn keeps(&self, m: &WireMessage) -> bool {
        self.keeps_lowered(m, &self.text.to_lowercase())
    }

    /// [`Filter::keeps`] with the text already lowercased, for a scan of many.
    fn keeps_lowered(&self, m: &WireMessage, wanted: &str) -> bool {
        if self.hide_background && m.background {
            return false;
        }
        if wanted.is_empty() {
            return true;
        }
        let holds = |s: &str| s.to_lowercase().contains(wanted);
        if holds(&m.method)
            || m.target.as_deref().is_some_and(holds)
            || m.id.as_deref().is_some_and(holds)
        {
            return true;
        }
        let mut end = m.text.len().min(FILTER_TEXT_READ);
        while !m.text.is_char_boundary(end) {
            end -= 1;
        }
        holds(&m.text[..end])
    }
}

/// The most requests whose targets are remembered for their answers.
const TARGETS_KEPT: usize = 4096;

/// A request as a key the console's own calls are known by: its method and its
/// params with every object's keys sorted, their `_meta` left out (the library adds
/// its own).
fn request_key(method: &str, params: &Value) -> String {
    let mut params = params.clone();
    if let Some(object) = params.as_object_mut() {
        object.remove("_meta");
    }
    format!("{method} {}", crate::json::canonical(&params))
}

/// The messages of one connection, the newest [`WIRE_KEEP`] of them, and the
/// notifications among everything received. Also what the server wrote to its stderr
/// (a child process), as pseudo-notifications named `stderr`.
#[derive(Default)]
pub struct Wire {
    opened: Option<Instant>,
    seq: AtomicU64,
    messages: Mutex<VecDeque<WireMessage>>,
    notifications: Mutex<VecDeque<WireMessage>>,
    /// Every notification received, including those no longer kept.
    notified: AtomicU64,
    /// The notifications received that say the server's lists or a resource changed
    /// (`…/list_changed`, `notifications/resources/updated`): what invalidates the
    /// answers kept by caching hints.
    changed: AtomicU64,
    /// Why the last message the library dropped unread was not read.
    unread: Mutex<Option<String>>,
    /// The console's own requests about to be sent, by [`request_key`]: the next
    /// message sent with such a key is marked background.
    expected_background: Mutex<Vec<String>>,
    /// The requests sent, by id: their targets, and whether the console made them by
    /// itself (for their answers).
    sent: Mutex<std::collections::HashMap<String, (Option<String>, bool)>>,
}

impl Wire {
    pub(super) fn new() -> Wire {
        Wire {
            opened: Some(Instant::now()),
            ..Wire::default()
        }
    }

    pub(super) fn push(&self, direction: Direction, value: &Value) {
        let text = match serde_json::to_string(value) {
            Ok(t) if t.len() > WIRE_TEXT_MAX => {
                let mut cut = WIRE_TEXT_MAX;
                while !t.is_char_boundary(cut) {
                    cut -= 1;
                }
                format!("{}… ({} bytes in all)", &t[..cut], t.len())
            }
            Ok(t) => t,
            Err(e) => format!("(cannot show this message: {e})"),
        };
        let id = value.get("id").map(|id| match id {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        });
        let method = match value.get("method").and_then(Value::as_str) {
            Some(m) => m.to_string(),
            None if value.get("error").is_some() => "error".into(),
            None => "response".into(),
        };
        let (target, background) = self.label(direction, &method, id.as_deref(), value);
        self.record_labelled(direction, method, id, text, target, background);
    }

    /// Says the console is about to send this request by itself (polling): it is
    /// marked background on the wire, and so is its answer.
    pub fn expect_background(&self, method: &str, params: &Value) {
        let mut expected = lock(&self.expected_background);
        if expected.len() >= 64 {
            expected.remove(0);
        }
        expected.push(request_key(method, params));
    }

    /// A message's target and whether it is the console's own: a request's from its
    /// params (and the marks [`Wire::expect_background`] left), an answer's from the
    /// request it answers.
    fn label(
        &self,
        direction: Direction,
        method: &str,
        id: Option<&str>,
        value: &Value,
    ) -> (Option<String>, bool) {
        let params = value.get("params").unwrap_or(&Value::Null);
        match (direction, id, value.get("method").is_some()) {
            (Direction::Sent, Some(id), true) => {
                let target = crate::mcp::wire::request_target(method, params).map(str::to_string);
                // The key is made only while a mark waits (the console polls a few times
                // a minute; every other request passes unread).
                let background = {
                    let mut expected = lock(&self.expected_background);
                    let at = if expected.is_empty() {
                        None
                    } else {
                        let key = request_key(method, params);
                        expected.iter().position(|k| *k == key)
                    };
                    at.map(|at| expected.remove(at)).is_some()
                };
                let mut sent = lock(&self.sent);
                if sent.len() >= TARGETS_KEPT {
                    sent.clear();
                }
                sent.insert(id.to_string(), (target.clone(), background));
                (target, background)
            }
            (Direction::Received, Some(id), false) => {
                lock(&self.sent).remove(id).unwrap_or((None, false))
            }
            (_, _, true) => (
                crate::mcp::wire::request_target(method, params).map(str::to_string),
                false,
            ),
            _ => (None, false),
        }
    }

    /// A message came that the library drops unread: the traffic shows why, and an
    /// error waiting on it can say so ([`Wire::unread_reason`]).
    pub(super) fn unread(&self, why: String) {
        tracing::debug!("{why}");
        self.record(Direction::Received, UNREAD.into(), None, why.clone());
        *lock(&self.unread) = Some(why);
    }

    /// How many notifications so far said the server's lists or a resource changed.
    pub fn changes(&self) -> u64 {
        self.changed.load(Ordering::Relaxed)
    }

    /// `": "` and why the last message dropped unread was not read; empty when none
    /// was.
    pub fn unread_reason(&self) -> String {
        lock(&self.unread)
            .as_ref()
            .map_or_else(String::new, |why| format!(": {why}"))
    }

    pub(super) fn record(
        &self,
        direction: Direction,
        method: String,
        id: Option<String>,
        text: String,
    ) {
        self.record_labelled(direction, method, id, text, None, false);
    }

    fn record_labelled(
        &self,
        direction: Direction,
        method: String,
        id: Option<String>,
        text: String,
        target: Option<String>,
        background: bool,
    ) {
        let message = WireMessage {
            // Only protocol messages are numbered; a stderr line has no number.
            seq: if method == STDERR {
                0
            } else {
                self.seq.fetch_add(1, Ordering::Relaxed) + 1
            },
            at_ms: self.opened.map_or(0, |t| {
                t.elapsed().as_millis().try_into().unwrap_or(u64::MAX)
            }),
            direction,
            method,
            id,
            text,
            target,
            background,
        };
        let stderr = message.method == STDERR;
        if direction == Direction::Received && message.id.is_none() {
            self.notified.fetch_add(1, Ordering::Relaxed);
            if message.method.ends_with("/list_changed")
                || message.method == "notifications/resources/updated"
            {
                self.changed.fetch_add(1, Ordering::Relaxed);
            }
            let mut kept = lock(&self.notifications);
            if kept.len() == WIRE_KEEP {
                kept.pop_front();
            }
            kept.push_back(message.clone());
        }
        if stderr {
            // Not JSON-RPC: the traffic list keeps only what crossed the protocol.
            return;
        }
        let mut kept = lock(&self.messages);
        if kept.len() == WIRE_KEEP {
            kept.pop_front();
        }
        kept.push_back(message);
    }

    fn list(&self, which: Which) -> &Mutex<VecDeque<WireMessage>> {
        match which {
            Which::Messages => &self.messages,
            Which::Notifications => &self.notifications,
        }
    }

    /// How many of `which` are kept.
    pub fn kept(&self, which: Which) -> usize {
        lock(self.list(which)).len()
    }

    /// Up to `n` of `which` from the `start`th kept (oldest first): what a frame draws,
    /// without copying the rest.
    pub fn window(&self, which: Which, start: usize, n: usize) -> Vec<WireMessage> {
        lock(self.list(which))
            .iter()
            .skip(start)
            .take(n)
            .cloned()
            .collect()
    }

    /// How many of `which` the filter keeps.
    pub fn kept_matching(&self, which: Which, filter: &Filter) -> usize {
        if filter.is_empty() {
            return self.kept(which);
        }
        let wanted = filter.text.to_lowercase();
        lock(self.list(which))
            .iter()
            .filter(|m| filter.keeps_lowered(m, &wanted))
            .count()
    }

    /// Up to `n` of the messages the filter keeps, from the `start`th of them.
    pub fn window_matching(
        &self,
        which: Which,
        filter: &Filter,
        start: usize,
        n: usize,
    ) -> Vec<WireMessage> {
        let wanted = filter.text.to_lowercase();
        lock(self.list(which))
            .iter()
            .filter(|m| filter.keeps_lowered(m, &wanted))
            .skip(start)
            .take(n)
            .cloned()
            .collect()
    }

    /// The messages kept, oldest first.
    pub fn messages(&self) -> Vec<WireMessage> {
        self.window(Which::Messages, 0, usize::MAX)
    }

    /// The notifications kept (and stderr lines), oldest first.
    pub fn notifications(&self) -> Vec<WireMessage> {
        self.window(Which::Notifications, 0, usize::MAX)
    }

    /// Every protocol message so far, including those no longer kept.
    pub fn total(&self) -> u64 {
        self.seq.load(Ordering::Relaxed)
    }

    /// Every notification so far.
    pub fn notified(&self) -> u64 {
        self.notified.load(Ordering::Relaxed)
    }
}

pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A transport that writes every message it carries to a [`Wire`].
pub(super) struct Logged<T> {
    pub(super) inner: T,
    pub(super) wire: Arc<Wire>,
}

impl<T> Transport<RoleClient> for Logged<T>
where
    T: Transport<RoleClient>,
{
    type Error = T::Error;

    fn send(
        &mut self,
        item: rmcp::service::TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let Ok(v) = serde_json::to_value(&item) {
            self.wire.push(Direction::Sent, &v);
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<rmcp::service::RxJsonRpcMessage<RoleClient>> {
        let item = self.inner.receive().await?;
        if let Ok(v) = serde_json::to_value(&item) {
            self.wire.push(Direction::Received, &v);
        }
        Some(item)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_message_names_its_target_and_the_consoles_own_calls_are_marked() {
        let wire = Wire::new();
        let params = json!({"name": "structs_query_block_height", "arguments": {}});
        wire.expect_background("tools/call", &params);
        // The library adds its own `_meta`; the mark is found all the same.
        wire.push(
            Direction::Sent,
            &json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                    "params": {"arguments": {}, "name": "structs_query_block_height",
                               "_meta": {"progressToken": 3}}}),
        );
        wire.push(
            Direction::Sent,
            &json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
                    "params": {"name": "structs_query_block_height", "arguments": {}}}),
        );
        wire.push(
            Direction::Sent,
            &json!({"jsonrpc": "2.0", "id": 9, "method": "resources/read",
                    "params": {"uri": "structs://docs/overview"}}),
        );
        wire.push(
            Direction::Received,
            &json!({"jsonrpc": "2.0", "id": 7, "result": {"content": []}}),
        );
        wire.push(
            Direction::Received,
            &json!({"jsonrpc": "2.0", "id": 9, "error": {"code": -32002, "message": "x"}}),
        );
        let m = wire.messages();
        let seen: Vec<(&str, Option<&str>, bool)> = m
            .iter()
            .map(|m| (m.method.as_str(), m.target.as_deref(), m.background))
            .collect();
        assert_eq!(
            seen,
            [
                ("tools/call", Some("structs_query_block_height"), true),
                ("tools/call", Some("structs_query_block_height"), false),
                ("resources/read", Some("structs://docs/overview"), false),
                ("response", Some("structs_query_block_height"), true),
                ("error", Some("structs://docs/overview"), false),
            ]
        );
        let hide = Filter {
            hide_background: true,
            text: String::new(),
        };
        assert_eq!(wire.kept_matching(Which::Messages, &hide), 3);
        let docs = Filter {
            hide_background: false,
            text: "DOCS/over".into(),
        };
        assert_eq!(wire.kept_matching(Which::Messages, &docs), 2);
        let ids: Vec<Option<String>> = wire
            .window_matching(Which::Messages, &hide, 1, 5)
            .into_iter()
            .map(|m| m.id)
            .collect();
        assert_eq!(ids, [Some("9".to_string()), Some("9".to_string())]);
        assert!(Filter::default().is_empty());
    }
}
