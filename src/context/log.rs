//! Log messages a call sends its caller while it works: MCP `notifications/message`
//! for a client of the headless server. Tools and the domain code under them (the
//! reference resolver, the REST source, the handle store, the proof-of-work search)
//! send through [`log`], which reaches the sink of the call the task is running, and
//! does nothing outside a call or when the caller did not ask for messages. The
//! caller filters by level and throttles.

use std::sync::Arc;

use serde_json::Value;

use super::CallContext;

/// The syslog severities MCP uses, least severe first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

impl Level {
    pub const ALL: [Level; 8] = [
        Level::Debug,
        Level::Info,
        Level::Notice,
        Level::Warning,
        Level::Error,
        Level::Critical,
        Level::Alert,
        Level::Emergency,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Notice => "notice",
            Level::Warning => "warning",
            Level::Error => "error",
            Level::Critical => "critical",
            Level::Alert => "alert",
            Level::Emergency => "emergency",
        }
    }

    pub fn parse(text: &str) -> Option<Level> {
        Level::ALL.into_iter().find(|l| l.as_str() == text)
    }
}

/// Where a call's log messages go: level, logger name, data (an object with at least
/// `message`).
pub type LogSink = Arc<dyn Fn(Level, &'static str, Value) + Send + Sync>;

/// Sends a message from the call this task is running.
pub fn log(level: Level, logger: &'static str, data: Value) {
    CallContext::current().log(level, logger, data);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_ordered_and_named_as_mcp_names_them() {
        assert!(Level::Debug < Level::Info && Level::Warning < Level::Error);
        for l in Level::ALL {
            assert_eq!(Level::parse(l.as_str()), Some(l));
        }
        assert_eq!(Level::parse("warn"), None);
    }
}
