//! Structs proof-of-work exactly as the chain checks it, and a search for it that uses every
//! lane of every core.
//!
//! - [`difficulty`], [`Work::input`], [`check`]: the chain's rules (its `work.go`): the
//!   input strings, the difficulty as the work ages, and the check of a proof.
//! - `sha`, `lanes`: one-block SHA-256 for nonce inputs, scalar and in SIMD lanes.
//! - [`search`]: the search, with progress, cancellation and a required difficulty that
//!   can fall while it runs.
//! - [`pool`]: the process's hashing threads, one per core, shared in turn by every
//!   search.
//! - [`schedule`]: when to start, given the difficulty range and a hash rate.
//! - [`backend`]: the CPU pool or a GPU (`gpu`, the feature of the same name), chosen
//!   once at start.

pub mod backend;
#[cfg(feature = "gpu")]
pub mod gpu;
pub mod lanes;
pub mod pool;
pub mod schedule;
pub mod search;
pub mod sha;

use sha2::{Digest, Sha256};

pub use lanes::Kernel;

/// The four kinds of work that end with a proof.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    StructBuild,
    OreMine,
    OreRefine,
    PlanetRaid,
}

impl Action {
    pub const ALL: [Action; 4] = [
        Action::StructBuild,
        Action::OreMine,
        Action::OreRefine,
        Action::PlanetRaid,
    ];

    /// The tool-facing name (`struct_build_complete`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Action::StructBuild => "struct_build_complete",
            Action::OreMine => "ore_miner_complete",
            Action::OreRefine => "ore_refinery_complete",
            Action::PlanetRaid => "planet_raid_complete",
        }
    }

    pub fn parse(name: &str) -> Option<Action> {
        Action::ALL.into_iter().find(|a| a.name() == name)
    }

    /// The word between the id and the start block in the input.
    pub fn keyword(self) -> &'static str {
        match self {
            Action::StructBuild => "BUILD",
            Action::OreMine => "MINE",
            Action::OreRefine => "REFINE",
            Action::PlanetRaid => "RAID",
        }
    }

    /// The entity field that holds the work's start block.
    pub fn start_field(self) -> &'static str {
        match self {
            Action::StructBuild => "blockStartBuild",
            Action::OreMine => "blockStartOreMine",
            Action::OreRefine => "blockStartOreRefine",
            Action::PlanetRaid => "blockStartRaid",
        }
    }
}

/// One piece of work: what, on which entity, since which block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Work {
    pub action: Action,
    /// The struct id; the fleet id for a raid.
    pub entity_id: String,
    /// The raided planet (raids only).
    pub planet_id: Option<String>,
    pub block_start: u64,
}

impl Work {
    /// The input without its nonce, as the chain builds it:
    /// `{struct}BUILD{start}NONCE`, `{struct}MINE{start}NONCE`,
    /// `{struct}REFINE{start}NONCE`, `{fleet}@{planet}RAID{start}NONCE`.
    pub fn prefix(&self) -> String {
        let who = match (&self.action, &self.planet_id) {
            (Action::PlanetRaid, Some(planet)) => format!("{}@{planet}", self.entity_id),
            _ => self.entity_id.clone(),
        };
        format!("{who}{}{}NONCE", self.action.keyword(), self.block_start)
    }

    /// The whole input for `nonce`.
    pub fn input(&self, nonce: u64) -> String {
        format!("{}{nonce}", self.prefix())
    }
}

/// The number of leading hex zeros a proof needs after `age` blocks, for a difficulty
/// range (a struct type's build, mining or refining difficulty, or a planet's shield).
///
/// The chain computes `64 - int64(log10(age) / log10(range) * 63)` in float64 and
/// raises anything below 1 to 1; an age of 0 or 1 gives 64. Go's conversion of an
/// infinite or out-of-range float (a range of 1 divides by zero) gives the minimum
/// int64 on amd64, and the subtraction wraps; both are reproduced, so the answer is the
/// chain's for every input (a range of 1 gives 1, a range of 0 gives 64 forever).
pub fn difficulty(age: u64, range: u64) -> u32 {
    if age <= 1 {
        return 64;
    }
    let x = (age as f64).log10() / (range as f64).log10() * 63.0;
    // 2^63 is exact in f64; Go's conversion outside [-2^63, 2^63) (and of NaN) gives
    // i64::MIN.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    let converted = if (-LIMIT..LIMIT).contains(&x) {
        x.trunc() as i64
    } else {
        i64::MIN
    };
    let d = 64i64.wrapping_sub(converted);
    d.clamp(1, 64) as u32
}

/// SHA-256 of any input (one block or more) as big-endian words.
pub(crate) fn digest_words(input: &[u8]) -> [u32; 8] {
    let digest = Sha256::digest(input);
    std::array::from_fn(|i| {
        u32::from_be_bytes([
            digest[4 * i],
            digest[4 * i + 1],
            digest[4 * i + 2],
            digest[4 * i + 3],
        ])
    })
}

/// The lowercase hex SHA-256 of `input`, as the chain computes it.
pub fn hash_hex(input: &str) -> String {
    let digest = Sha256::digest(input.as_bytes());
    let mut s = String::with_capacity(64);
    for b in digest {
        s.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
        s.push(char::from(b"0123456789abcdef"[usize::from(b & 15)]));
    }
    s
}

/// Leading `'0'` characters of a hex hash.
pub fn achieved_difficulty(hash: &str) -> u32 {
    hash.bytes().take_while(|&b| b == b'0').count() as u32
}

/// The chain's verdict on a proof.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// The hash of the input, recomputed.
    pub hash: String,
    /// The proof given is that hash.
    pub hash_matches: bool,
    /// The hash has the required leading zeros.
    pub difficulty_met: bool,
    pub required: u32,
    pub achieved: u32,
}

impl Check {
    /// What the chain accepts: the proof is the input's hash and meets the difficulty.
    pub fn valid(&self) -> bool {
        self.hash_matches && self.difficulty_met
    }
}

/// Checks `proof` for `input` exactly as the chain does: the proof must equal the hex
/// SHA-256 of the input, and its first `required` characters must all be `'0'`.
pub fn check(input: &str, proof: &str, required: u32) -> Check {
    let hash = hash_hex(input);
    let achieved = achieved_difficulty(&hash);
    Check {
        hash_matches: proof == hash,
        difficulty_met: achieved >= required,
        required,
        achieved,
        hash,
    }
}

/// Expected hashes to find a proof of `difficulty` leading hex zeros: 16^difficulty.
pub fn expected_hashes(difficulty: u32) -> f64 {
    16f64.powi(difficulty as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn difficulty_matches_the_chain_vectors() {
        for (age, range, want) in [
            (0, 700, 64),
            (1, 700, 64),
            (2, 700, 58),
            (10, 700, 42),
            (100, 700, 20),
            (699, 700, 2),
            (700, 700, 1),
            (5000, 700, 1),
            (50, 14000, 39),
            (1000, 14000, 19),
            (300, 28000, 29),
            (120, 200, 8),
        ] {
            assert_eq!(difficulty(age, range), want, "age {age} range {range}");
        }
    }

    #[test]
    fn degenerate_ranges_follow_go_on_amd64() {
        // log10(1) is 0: the division is infinite, the conversion gives i64::MIN.
        assert_eq!(difficulty(50, 1), 1);
        // log10(0) is -inf: the quotient is -0, so the difficulty never falls.
        assert_eq!(difficulty(1_000_000, 0), 64);
        assert_eq!(difficulty(u64::MAX, 2), 1);
    }

    #[test]
    fn difficulty_never_rises_as_work_ages() {
        for range in [200, 700, 2880, 14000, 28000] {
            let mut last = 64;
            for age in 0..40_000 {
                let d = difficulty(age, range);
                assert!(d <= last && (1..=64).contains(&d));
                last = d;
            }
            assert_eq!(last, 1);
        }
    }

    #[test]
    fn inputs_are_the_chains() {
        let build = Work {
            action: Action::StructBuild,
            entity_id: "5-42".into(),
            planet_id: None,
            block_start: 1280144,
        };
        assert_eq!(build.input(0), "5-42BUILD1280144NONCE0");
        assert_eq!(
            hash_hex(&build.input(0)),
            "ca79e8091e4fe468fbf4c5921cd15ad09f3fb4265b0a82cd2efa3782a4f03c10"
        );
        let mine = Work {
            action: Action::OreMine,
            block_start: 100,
            ..build.clone()
        };
        assert_eq!(
            hash_hex(&mine.input(7)),
            "b52b7684fd06c590cdf191ef2599d1588fe0e02d2e4d084e89d4327cc2b1f9be"
        );
        let refine = Work {
            action: Action::OreRefine,
            ..mine
        };
        assert_eq!(refine.input(3), "5-42REFINE100NONCE3");
        let raid = Work {
            action: Action::PlanetRaid,
            entity_id: "9-3".into(),
            planet_id: Some("2-8".into()),
            block_start: 5000,
        };
        assert_eq!(
            hash_hex(&raid.input(42)),
            "d31f7701ab13ae747be14e437f2d05c777a2d0dd6744b45e55cb8ef7ed708e65"
        );
    }

    #[test]
    fn check_is_the_chains() {
        let input = "5-42MINE100NONCE7";
        let hash = "b52b7684fd06c590cdf191ef2599d1588fe0e02d2e4d084e89d4327cc2b1f9be";
        assert!(check(input, hash, 0).valid());
        let c = check(input, hash, 1);
        assert!(c.hash_matches && !c.difficulty_met && !c.valid());
        assert_eq!(c.achieved, 0);
        // Case matters: the chain compares the lowercase hex string.
        assert!(!check(input, &hash.to_uppercase(), 0).hash_matches);
        assert!(!check("5-42MINE100NONCE8", hash, 0).valid());
        assert_eq!(achieved_difficulty("000a"), 3);
        assert_eq!(achieved_difficulty(&"0".repeat(64)), 64);
    }
}
