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
}

impl WireMessage {
    /// True for a notification (a message with a method and no id).
    pub fn is_notification(&self) -> bool {
        self.id.is_none() && self.method.contains('/')
    }
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
        self.record(direction, method, id, text);
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
