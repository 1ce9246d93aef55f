//! The wall clock every timestamp comes from.

use chrono::{DateTime, SecondsFormat, Utc};

/// Where timestamps come from: the system clock, or a fixed instant so that snapshots
/// and replays are stable.
#[derive(Debug, Clone, Copy)]
pub enum WallClock {
    System,
    Fixed(DateTime<Utc>),
}

impl WallClock {
    pub fn now(&self) -> DateTime<Utc> {
        match self {
            WallClock::System => Utc::now(),
            WallClock::Fixed(t) => *t,
        }
    }

    /// Now, in RFC 3339 with second precision (`2026-11-21T10:00:00Z`).
    pub fn timestamp(&self) -> String {
        self.now().to_rfc3339_opts(SecondsFormat::Secs, true)
    }
}
