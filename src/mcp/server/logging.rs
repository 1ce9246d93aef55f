//! MCP logging for one client: `logging/setLevel` sets the level for that client only,
//! and the messages its calls log (see [`crate::context::log`]) go out as
//! `notifications/message`, filtered by the level and throttled.
//!
//! Until the client sets a level, it gets warnings and worse. The throttle is a token
//! bucket per client: [`BURST`] messages at once, then [`PER_SECOND`]. Messages over it
//! are dropped and counted; the next message that passes is preceded by one warning
//! saying how many were dropped.

// rmcp marks logging deprecated (the next protocol revision drops it); the protocol
// versions this server speaks (up to 2025-11-25) have it.
#![allow(deprecated)]

use std::sync::{Arc, Mutex};
use std::time::Instant;

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::{Peer, RoleServer};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::context::log::{Level, LogSink};

/// The level a client gets before it sets one.
pub const DEFAULT_LEVEL: Level = Level::Warning;

/// Messages one client may get at once before the throttle holds them back.
pub const BURST: f64 = 50.0;

/// Messages per second one client gets after a burst.
pub const PER_SECOND: f64 = 20.0;

/// The logger name of the throttle's own notice.
const THROTTLE_LOGGER: &str = "structs.log";

/// One client's level, throttle and sender.
pub struct ClientLog {
    state: Mutex<State>,
    recorder: Option<Arc<crate::record::Recorder>>,
}

struct State {
    level: Level,
    tokens: f64,
    refilled: Instant,
    dropped: u64,
    /// The queue to the task that sends to the client; started with the first peer.
    sender: Option<mpsc::UnboundedSender<LoggingMessageNotificationParam>>,
    /// That task.
    task: Option<tokio::task::JoinHandle<()>>,
}

impl ClientLog {
    pub fn new(recorder: Option<Arc<crate::record::Recorder>>) -> Arc<ClientLog> {
        Arc::new(ClientLog {
            state: Mutex::new(State {
                level: DEFAULT_LEVEL,
                tokens: BURST,
                refilled: Instant::now(),
                dropped: 0,
                sender: None,
                task: None,
            }),
            recorder,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn set_level(&self, level: Level) {
        self.lock().level = level;
    }

    pub fn level(&self) -> Level {
        self.lock().level
    }

    /// Starts (once) the task that sends this client's messages to `peer`.
    pub fn connect(&self, peer: Peer<RoleServer>) {
        let mut s = self.lock();
        if s.sender.as_ref().is_some_and(|tx| !tx.is_closed()) {
            return;
        }
        let (tx, mut rx) = mpsc::unbounded_channel::<LoggingMessageNotificationParam>();
        let recorder = self.recorder.clone();
        s.task = Some(tokio::spawn(async move {
            while let Some(param) = rx.recv().await {
                if let Some(r) = &recorder {
                    r.notification(
                        "notifications/message",
                        serde_json::to_value(&param).unwrap_or_default(),
                    );
                }
                #[allow(deprecated)]
                if peer.notify_logging_message(param).await.is_err() {
                    return;
                }
            }
        }));
        s.sender = Some(tx);
    }

    /// Sends what is queued and stops: for one request's log, whose messages go out on
    /// its stream before its answer. Waits at most 2 s.
    pub async fn drain(&self) {
        let task = {
            let mut s = self.lock();
            s.sender = None;
            s.task.take()
        };
        if let Some(task) = task {
            let _ = tokio::time::timeout(std::time::Duration::from_secs(2), task).await;
        }
    }

    /// Sends a message if the client's level lets it through and the throttle has
    /// room; counts it as dropped otherwise.
    pub fn send(&self, level: Level, logger: &str, data: Value) {
        let mut s = self.lock();
        if level < s.level {
            return;
        }
        let Some(tx) = s.sender.clone() else {
            return;
        };
        let now = Instant::now();
        let elapsed = now.duration_since(s.refilled).as_secs_f64();
        s.tokens = (s.tokens + elapsed * PER_SECOND).min(BURST);
        s.refilled = now;
        if s.tokens < 1.0 {
            s.dropped += 1;
            return;
        }
        s.tokens -= 1.0;
        if s.dropped > 0 {
            let dropped = std::mem::take(&mut s.dropped);
            let notice = json!({
                "message": format!(
                    "{dropped} log messages were dropped: a client gets at most {BURST} at once \
                     and {PER_SECOND} a second"
                ),
                "dropped": dropped,
            });
            let _ = tx.send(
                LoggingMessageNotificationParam::new(LoggingLevel::Warning, notice)
                    .with_logger(THROTTLE_LOGGER),
            );
        }
        let _ =
            tx.send(LoggingMessageNotificationParam::new(wire(level), data).with_logger(logger));
    }

    /// The sink a call of this client logs to.
    pub fn sink(self: &Arc<Self>) -> LogSink {
        let me = Arc::clone(self);
        Arc::new(move |level, logger, data| me.send(level, logger, data))
    }
}

/// The level as rmcp names it.
pub fn wire(level: Level) -> LoggingLevel {
    match level {
        Level::Debug => LoggingLevel::Debug,
        Level::Info => LoggingLevel::Info,
        Level::Notice => LoggingLevel::Notice,
        Level::Warning => LoggingLevel::Warning,
        Level::Error => LoggingLevel::Error,
        Level::Critical => LoggingLevel::Critical,
        Level::Alert => LoggingLevel::Alert,
        Level::Emergency => LoggingLevel::Emergency,
    }
}

/// rmcp's level as ours.
pub fn from_wire(level: LoggingLevel) -> Level {
    match level {
        LoggingLevel::Debug => Level::Debug,
        LoggingLevel::Info => Level::Info,
        LoggingLevel::Notice => Level::Notice,
        LoggingLevel::Warning => Level::Warning,
        LoggingLevel::Error => Level::Error,
        LoggingLevel::Critical => Level::Critical,
        LoggingLevel::Alert => Level::Alert,
        LoggingLevel::Emergency => Level::Emergency,
    }
}
