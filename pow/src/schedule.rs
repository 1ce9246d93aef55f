//! When to hash: the required difficulty falls as work ages, and each hex zero less
//! makes a proof 16 times cheaper, so starting later often finishes sooner.

use serde::Serialize;

use super::{difficulty, expected_hashes};

/// The official web client waits until the difficulty is at most this before hashing.
pub const WEB_CLIENT_START: u32 = 10;

/// Seconds between blocks on the chain (and in the sim).
pub const BLOCK_SECONDS: f64 = 6.0;

/// A run of blocks with the same required difficulty.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    pub difficulty: u32,
    /// The first block at this difficulty.
    pub from_block: u64,
    /// The last block at this difficulty (`None` for the last step, which lasts).
    pub to_block: Option<u64>,
    /// Age of the work at `from_block`.
    pub age: u64,
    /// Seconds from now until `from_block`.
    pub starts_in_seconds: f64,
    /// 16^difficulty.
    pub expected_hashes: f64,
    /// Expected seconds to find a proof at this difficulty at the given hash rate.
    pub expected_seconds: f64,
}

/// The plan for one piece of work.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Schedule {
    pub difficulty_range: u64,
    pub block_start: u64,
    pub current_block: u64,
    pub hashrate: f64,
    pub block_seconds: f64,
    /// Every difficulty from now on, in order.
    pub steps: Vec<Step>,
    /// The first block where the difficulty is at most 10 (the web client's rule).
    pub web_client_start_block: Option<u64>,
    /// The block to start hashing at for the soonest expected proof, assuming the
    /// search keeps the difficulty of its start block (a later, lower difficulty only
    /// helps).
    pub recommended_start_block: u64,
    /// Expected seconds from now until a proof when starting at the recommended block.
    pub expected_seconds_to_proof: f64,
    /// Starting now is (within a second) as good as waiting.
    pub start_now: bool,
}

/// The first age from `from` whose difficulty is at most `d`, if the difficulty ever
/// gets there.
fn first_age_at_most(d: u32, from: u64, range: u64) -> Option<u64> {
    if difficulty(from, range) <= d {
        return Some(from);
    }
    let mut hi = from.max(range).saturating_mul(2).saturating_add(2);
    if difficulty(hi, range) > d {
        hi = u64::MAX;
        if difficulty(hi, range) > d {
            return None;
        }
    }
    let mut lo = from;
    // difficulty(lo) > d >= difficulty(hi)
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if difficulty(mid, range) <= d {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// The schedule from `current_block` on, for work started at `block_start` with this
/// difficulty range, at `hashrate` hashes per second.
pub fn plan(range: u64, block_start: u64, current_block: u64, hashrate: f64) -> Schedule {
    let rate = hashrate.max(1.0);
    let age_now = current_block.saturating_sub(block_start);
    let mut steps: Vec<Step> = Vec::new();
    let mut age = age_now;
    loop {
        let d = difficulty(age, range);
        let from_block = block_start + age;
        let blocks_away = from_block - current_block.max(block_start).min(from_block);
        let next = if d > 1 {
            first_age_at_most(d - 1, age, range)
        } else {
            None
        };
        steps.push(Step {
            difficulty: d,
            from_block,
            to_block: next.map(|n| block_start + n - 1),
            age,
            starts_in_seconds: blocks_away as f64 * BLOCK_SECONDS,
            expected_hashes: expected_hashes(d),
            expected_seconds: expected_hashes(d) / rate,
        });
        match next {
            Some(n) => age = n,
            None => break,
        }
    }
    let finish = |s: &Step| s.starts_in_seconds + s.expected_seconds;
    let best = steps
        .iter()
        .min_by(|a, b| finish(a).total_cmp(&finish(b)))
        .expect("at least one step");
    Schedule {
        difficulty_range: range,
        block_start,
        current_block,
        hashrate,
        block_seconds: BLOCK_SECONDS,
        web_client_start_block: steps
            .iter()
            .find(|s| s.difficulty <= WEB_CLIENT_START)
            .map(|s| s.from_block),
        recommended_start_block: best.from_block,
        expected_seconds_to_proof: finish(best),
        start_now: finish(&steps[0]) <= finish(best) + 1.0,
        steps,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_cover_every_difficulty_from_now_down_to_one() {
        let s = plan(700, 1000, 1002, 1e6);
        assert_eq!(s.steps[0].difficulty, 58);
        assert_eq!(s.steps[0].from_block, 1002);
        assert_eq!(s.steps.last().unwrap().difficulty, 1);
        assert_eq!(s.steps.last().unwrap().from_block, 1700);
        for pair in s.steps.windows(2) {
            assert!(pair[0].difficulty > pair[1].difficulty);
            assert_eq!(pair[0].to_block, Some(pair[1].from_block - 1));
            // Every block of a step has the step's difficulty.
            for b in [pair[0].from_block, pair[0].to_block.unwrap()] {
                assert_eq!(difficulty(b - 1000, 700), pair[0].difficulty);
            }
        }
    }

    #[test]
    fn waiting_wins_when_hashing_now_would_take_longer() {
        // Difficulty 20 at age 100 of 700: 16^20 hashes is forever; a few hundred
        // blocks later it is seconds.
        let s = plan(700, 0, 100, 30e6);
        assert!(!s.start_now);
        assert!(s.recommended_start_block > 100);
        let rec = s
            .steps
            .iter()
            .find(|x| x.from_block == s.recommended_start_block)
            .unwrap();
        assert!(rec.difficulty <= 10, "{rec:?}");
        assert_eq!(
            s.web_client_start_block,
            Some(
                s.steps
                    .iter()
                    .find(|x| x.difficulty <= 10)
                    .unwrap()
                    .from_block
            )
        );
        // Old work is cheap now.
        assert!(plan(700, 0, 5000, 30e6).start_now);
    }

    #[test]
    fn a_zero_shield_never_falls() {
        let s = plan(0, 0, 50, 1e6);
        assert_eq!(s.steps.len(), 1);
        assert_eq!(s.steps[0].difficulty, 64);
        assert_eq!(s.web_client_start_block, None);
    }
}
