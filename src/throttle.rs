//! A warning that can repeat without end (a refused client, a lagging reader) is logged
//! at most once an interval, with how many times it happened unlogged since.
//!
//! ```
//! use std::time::Duration;
//! use structs_console::throttle::Every;
//!
//! static FULL: Every = Every::new(Duration::from_secs(10));
//! if let Some(unlogged) = FULL.ready() {
//!     // log it, with `unlogged` beside it
//! #   assert_eq!(unlogged, 0);
//! }
//! assert_eq!(FULL.ready(), None, "not again within the interval");
//! ```

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The interval most repeated warnings use.
pub const WARN_EVERY: Duration = Duration::from_secs(10);

/// One kind of repeated warning, logged at most once per interval.
pub struct Every {
    interval_ms: u64,
    /// When it was last logged, in milliseconds since [`epoch`] plus one (0: never).
    last: AtomicU64,
    unlogged: AtomicU64,
}

/// The process's own clock start, so that times fit in an atomic.
fn epoch() -> Instant {
    static START: OnceLock<Instant> = OnceLock::new();
    *START.get_or_init(Instant::now)
}

impl Every {
    pub const fn new(interval: Duration) -> Every {
        Every {
            interval_ms: interval.as_millis() as u64,
            last: AtomicU64::new(0),
            unlogged: AtomicU64::new(0),
        }
    }

    /// `Some(unlogged)` when this one is to be logged (the times it was not since the
    /// last), `None` when it is counted instead.
    pub fn ready(&self) -> Option<u64> {
        let now = epoch().elapsed().as_millis() as u64 + 1;
        let last = self.last.load(Ordering::Relaxed);
        let due = last == 0 || now.saturating_sub(last) >= self.interval_ms;
        if due
            && self
                .last
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            return Some(self.unlogged.swap(0, Ordering::Relaxed));
        }
        self.unlogged.fetch_add(1, Ordering::Relaxed);
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn once_an_interval_with_the_count_of_the_rest() {
        let every = Every::new(Duration::from_millis(200));
        assert_eq!(every.ready(), Some(0));
        for _ in 0..1_000 {
            assert_eq!(every.ready(), None);
        }
        std::thread::sleep(Duration::from_millis(220));
        assert_eq!(every.ready(), Some(1_000));
        assert_eq!(every.ready(), None);
    }

    #[test]
    fn threads_racing_log_it_once() {
        let every = std::sync::Arc::new(Every::new(Duration::from_secs(60)));
        let logged: usize = (0..8)
            .map(|_| {
                let every = every.clone();
                std::thread::spawn(move || (0..1_000).filter(|_| every.ready().is_some()).count())
            })
            .map(|t| t.join().unwrap())
            .sum();
        assert_eq!(logged, 1);
    }
}
