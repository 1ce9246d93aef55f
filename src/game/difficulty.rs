//! How a proof-of-work's required difficulty falls with the work's age.

use crate::pow;

/// The first age (blocks since the work started) at which the required difficulty is
/// at most `d`, for a difficulty range; `None` when it never gets there.
pub fn first_age_at_most(d: u32, range: u64) -> Option<u64> {
    let mut hi = range.max(2).saturating_mul(2);
    if pow::difficulty(hi, range) > d {
        hi = u64::MAX;
        if pow::difficulty(hi, range) > d {
            return None;
        }
    }
    let mut lo = 1; // difficulty(1) is 64 > d
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if pow::difficulty(mid, range) <= d {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}
