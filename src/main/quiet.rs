//! The MCP library's own warnings and errors, at most one a line of its code every
//! [`INTERVAL`]: when many streams close at once, rmcp says the same thing once for
//! each ("failed to send pending response during drain", hundreds of lines in a second),
//! and a log that repeats it buries everything else. The server's own lines are
//! throttled where they are written (`structs_console::throttle`); this does the same
//! for a library whose lines it cannot change.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tracing::Subscriber;
use tracing::callsite::Identifier;
use tracing_subscriber::layer::{Context, Layer};

/// How often one line of the library's code may be logged.
pub(crate) const INTERVAL: Duration = Duration::from_secs(10);

/// Drops an rmcp warning or error logged from the same place within [`INTERVAL`].
#[derive(Default)]
pub(crate) struct LibraryThrottle {
    last: Mutex<HashMap<Identifier, Instant>>,
}

impl LibraryThrottle {
    /// Whether the line of code `site` may be logged at `now`.
    fn admit(&self, site: Identifier, now: Instant) -> bool {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        match last.get(&site) {
            Some(at) if now.duration_since(*at) < INTERVAL => false,
            _ => {
                last.insert(site, now);
                true
            }
        }
    }
}

impl<S: Subscriber> Layer<S> for LibraryThrottle {
    fn event_enabled(&self, event: &tracing::Event<'_>, _ctx: Context<'_, S>) -> bool {
        let meta = event.metadata();
        let noisy = *meta.level() <= tracing::Level::WARN && meta.target().starts_with("rmcp");
        !noisy || self.admit(meta.callsite(), Instant::now())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_place_is_logged_once_an_interval_and_another_place_apart() {
        static ONE: tracing::callsite::DefaultCallsite =
            tracing::callsite::DefaultCallsite::new(&ONE_META);
        static ONE_META: tracing::Metadata<'static> = tracing::metadata! {
            name: "one", target: "rmcp::service", level: tracing::Level::ERROR,
            fields: &[], callsite: &ONE, kind: tracing::metadata::Kind::EVENT,
        };
        static TWO: tracing::callsite::DefaultCallsite =
            tracing::callsite::DefaultCallsite::new(&TWO_META);
        static TWO_META: tracing::Metadata<'static> = tracing::metadata! {
            name: "two", target: "rmcp::service", level: tracing::Level::ERROR,
            fields: &[], callsite: &TWO, kind: tracing::metadata::Kind::EVENT,
        };
        let throttle = LibraryThrottle::default();
        let t0 = Instant::now();
        let one = || ONE_META.callsite();
        assert!(throttle.admit(one(), t0));
        for i in 1..900 {
            assert!(!throttle.admit(one(), t0 + Duration::from_millis(i)));
        }
        assert!(throttle.admit(TWO_META.callsite(), t0));
        assert!(throttle.admit(one(), t0 + INTERVAL));
    }
}
