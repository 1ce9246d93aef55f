//! The tap's requests toward its server as CLIENT spans of the MCP conventions: each
//! request the host sends gets one, its trace context written into the request's
//! `params._meta` when the host sent none (a context the host sent passes unchanged,
//! and the tap's span is its child), ended by the server's answer.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;

use crate::context::trace;
use crate::mcp::wire::span::{Operation, Outcome, Request, Side, Transport};

/// Most requests waiting for their answers with a span open; past it a request gets
/// none (a server that never answers cannot grow the map).
const OPEN_MAX: usize = 4096;

/// The open spans of one tap, by request id.
#[derive(Default)]
pub(super) struct Spans {
    open: Mutex<HashMap<String, Operation>>,
    /// The server is reached over HTTP (else a pipe).
    tcp: AtomicBool,
}

impl Spans {
    /// Says the server is reached over HTTP.
    pub(super) fn over_tcp(&self) {
        self.tcp.store(true, Ordering::Relaxed);
    }

    /// Whether spans are made (tracing is on).
    pub(super) fn on(&self) -> bool {
        trace::on()
    }

    /// A request from the host: its span opened, and its trace context written into it
    /// when it carries none. Whether `message` changed, and the span (to record the
    /// request's line in, so that the line names its trace).
    pub(super) fn request(&self, message: &mut Value) -> (bool, tracing::Span) {
        let (Some(id), Some(_)) = (id_of(message), message["method"].as_str()) else {
            return (false, tracing::Span::none());
        };
        let transport = if self.tcp.load(Ordering::Relaxed) {
            Transport::Tcp
        } else {
            Transport::Pipe
        };
        let meta = message["params"]["_meta"].as_object();
        let theirs = meta.is_some_and(|m| m.contains_key("traceparent"));
        let parent = theirs.then(|| trace::extract(meta));
        let Some(op) =
            Operation::start(Side::Client, &Request::of_json(message), transport, parent)
        else {
            return (false, tracing::Span::none());
        };
        let changed = !theirs && message["params"].is_object() && {
            op.inject(&mut message["params"]);
            true
        };
        let span = op.span().clone();
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        if open.len() < OPEN_MAX {
            open.insert(id, op);
        }
        (changed, span)
    }

    /// A message from the server: a response ends its request's span, which is
    /// returned (to record the response's line in).
    pub(super) fn response(&self, message: &Value) -> tracing::Span {
        if message.get("method").is_some() {
            return tracing::Span::none();
        }
        let Some(id) = id_of(message) else {
            return tracing::Span::none();
        };
        let op = self
            .open
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id);
        match op {
            Some(op) => {
                let span = op.span().clone();
                op.end(Outcome::of_json(message));
                span
            }
            None => tracing::Span::none(),
        }
    }
}

fn id_of(message: &Value) -> Option<String> {
    match &message["id"] {
        Value::String(s) => Some(format!("s:{s}")),
        Value::Number(n) => Some(format!("n:{n}")),
        _ => None,
    }
}
