//! The block clock: about one block every 6 seconds, or paused and stepped by hand.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::pow::schedule::BLOCK_SECONDS;

/// Default time between blocks on the chain: the proof-of-work schedule's block time,
/// so the sim's blocks and the schedule's estimates in seconds cannot drift apart.
/// (`Duration::from_secs_f64` is not const; whole nanoseconds lose nothing here.)
pub const BLOCK_TIME: Duration = Duration::from_nanos((BLOCK_SECONDS * 1e9) as u64);

// The running clock divides elapsed milliseconds by the block time.
const _: () = assert!(BLOCK_TIME.as_millis() > 0);

#[derive(Debug)]
enum Mode {
    Running { base: u64, since: Instant },
    Paused { height: u64 },
}

/// The height of the simulated chain. Running, it advances with wall time; paused, it
/// changes only through [`BlockClock::step`], which makes tests and snapshots stable.
#[derive(Debug)]
pub struct BlockClock {
    mode: Mutex<Mode>,
    block_time: Duration,
}

impl BlockClock {
    pub fn running(start_height: u64) -> BlockClock {
        BlockClock {
            mode: Mutex::new(Mode::Running {
                base: start_height,
                since: Instant::now(),
            }),
            block_time: BLOCK_TIME,
        }
    }

    pub fn paused(height: u64) -> BlockClock {
        BlockClock {
            mode: Mutex::new(Mode::Paused { height }),
            block_time: BLOCK_TIME,
        }
    }

    pub fn height(&self) -> u64 {
        let mode = self.mode.lock().unwrap_or_else(|e| e.into_inner());
        match *mode {
            Mode::Running { base, since } => {
                base + (since.elapsed().as_millis() / self.block_time.as_millis()) as u64
            }
            Mode::Paused { height } => height,
        }
    }

    pub fn is_paused(&self) -> bool {
        let mode = self.mode.lock().unwrap_or_else(|e| e.into_inner());
        matches!(*mode, Mode::Paused { .. })
    }

    /// Stops the clock at the current height.
    pub fn pause(&self) {
        let height = self.height();
        *self.mode.lock().unwrap_or_else(|e| e.into_inner()) = Mode::Paused { height };
    }

    /// Starts the clock again from the current height.
    pub fn resume(&self) {
        let height = self.height();
        *self.mode.lock().unwrap_or_else(|e| e.into_inner()) = Mode::Running {
            base: height,
            since: Instant::now(),
        };
    }

    /// Advances by `blocks` (paused or running) and returns the new height.
    pub fn step(&self, blocks: u64) -> u64 {
        let mut mode = self.mode.lock().unwrap_or_else(|e| e.into_inner());
        match &mut *mode {
            Mode::Running { base, .. } => *base += blocks,
            Mode::Paused { height } => *height += blocks,
        }
        drop(mode);
        self.height()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_the_schedules_seconds() {
        assert_eq!(BLOCK_TIME.as_secs_f64(), BLOCK_SECONDS);
    }

    #[test]
    fn paused_clock_moves_only_when_stepped() {
        let clock = BlockClock::paused(100);
        assert_eq!(clock.height(), 100);
        assert!(clock.is_paused());
        assert_eq!(clock.step(3), 103);
        assert_eq!(clock.height(), 103);
    }

    #[test]
    fn running_clock_starts_at_its_base_and_can_pause() {
        let clock = BlockClock::running(500);
        assert_eq!(clock.height(), 500);
        assert_eq!(clock.step(2), 502);
        clock.pause();
        assert!(clock.is_paused());
        assert_eq!(clock.height(), 502);
        clock.resume();
        assert!(!clock.is_paused());
    }
}
