//! The wall clock every timestamp comes from.

use chrono::{DateTime, Utc};

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
}
