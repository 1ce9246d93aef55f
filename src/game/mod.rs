//! Pure game rules: no I/O, no async, no clock. The calculation tools and the sim use
//! the same functions, so an agent's estimate and the sim's outcome agree.
//!
//! - [`Rate`]: a success rate as the chain stores it (numerator over denominator).
//! - [`Dice`]: the chain's `IsSuccessful` check made deterministic and replayable
//!   (block height, player id and the player's nonce in, one boolean out per roll).
//! - [`Roller`]: what a rule that needs chance asks; [`Dice`] is one, the exact
//!   expectation in [`combat::expected`] is another.
//! - The economic constants of the chain (power, ore, alpha) with the facts they stand
//!   for.
//! - [`combat`]: weapons and units from struct types and the resolution of one attack.

pub mod combat;
pub mod difficulty;
mod struct_type_arg;

pub use struct_type_arg::{squash, struct_type_arg};

use serde::Serialize;

use crate::entity::struct_types::StructType;

/// A player's own draw while online: 25,000 mW (25 W), the chain's
/// `PlayerPassiveDraw`. Counted in `structsLoad` with the passive draw of every online
/// struct the player owns.
pub const PLAYER_PASSIVE_DRAW_MW: u64 = 25_000;

/// Ore a mining completion adds to the player's stored ore: always 1, whatever the
/// planet (`StoredOreIncrement(1)`).
pub const ORE_PER_MINING_COMPLETION: u64 = 1;

/// Alpha Matter minted by refining one ore: 1,000,000 ualpha (1 gram).
pub const UALPHA_PER_REFINED_ORE: u64 = 1_000_000;

/// Ore every planet starts with (`PlanetStartingOre`): 5.
pub const PLANET_STARTING_ORE: u64 = 5;

/// Capacity a reactor gives per ualpha infused: 1 mW (`ReactorFuelToEnergyConversion`),
/// so 1 gram is 1 kW. Generators convert at their struct type's `generatingRate`
/// instead ([`generator_mw_per_ualpha`]): Field Generator 2, Continental Power Plant 5,
/// World Engine 10.
pub const REACTOR_MW_PER_UALPHA: u64 = 1;

/// The reactor's default commission on an infusion, in percent: the reactor keeps 4%
/// of the capacity created and the infusing player gets the other 96%.
pub const DEFAULT_REACTOR_COMMISSION_PERCENT: u64 = 4;

/// Micrograms (ualpha) in a gram of Alpha Matter.
pub const UALPHA_PER_GRAM: u64 = 1_000_000;

/// Milliwatts (the chain's power unit) in a watt and in a kilowatt.
pub const MW_PER_W: u64 = 1_000;
pub const MW_PER_KW: u64 = 1_000_000;

/// mW of capacity per ualpha for a struct type: its `generatingRate` (0 for a type
/// that generates nothing).
pub fn generator_mw_per_ualpha(t: &StructType) -> u64 {
    t.raw
        .get("generatingRate")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0)
}

/// A success rate as the chain stores it. A zero numerator or denominator never
/// succeeds; a numerator at or above the denominator always does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Rate {
    pub numerator: u64,
    pub denominator: u64,
}

impl Rate {
    pub const NEVER: Rate = Rate::new(0, 1);
    pub const ALWAYS: Rate = Rate::new(1, 1);

    pub const fn new(numerator: u64, denominator: u64) -> Rate {
        Rate {
            numerator,
            denominator,
        }
    }

    /// Can never succeed (zero numerator or denominator).
    pub fn is_never(self) -> bool {
        self.numerator == 0 || self.denominator == 0
    }

    /// Always succeeds.
    pub fn is_certain(self) -> bool {
        !self.is_never() && self.numerator >= self.denominator
    }

    /// The chance of success, 0 to 1.
    pub fn probability(self) -> f64 {
        if self.is_never() {
            0.0
        } else if self.is_certain() {
            1.0
        } else {
            self.numerator as f64 / self.denominator as f64
        }
    }

    /// Whether a draw `value` (uniform over `0..denominator`) succeeds.
    pub fn admits(self, value: u64) -> bool {
        !self.is_never() && value % self.denominator < self.numerator
    }
}

impl std::fmt::Display for Rate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.numerator, self.denominator)
    }
}

/// A source of success checks. Every rule that needs chance asks one of these, so the
/// same rule can be rolled ([`Dice`]) or enumerated exactly ([`combat::expected`]).
pub trait Roller {
    fn roll(&mut self, rate: Rate) -> bool;
}

/// The chain's `IsSuccessful` check, made deterministic: the chain seeds its draw with
/// the block's hash and the acting player's nonce; here the draw is
///
/// ```text
/// value = first 8 bytes, big-endian, of SHA-256("{block_height}/{player_id}/{nonce}")
/// success = value mod denominator < numerator
/// ```
///
/// with `nonce` the player's nonce at the roll, which every roll advances by one
/// (successful or not, whatever the rate). The same block height, player and nonce
/// always give the same rolls; [`Dice::nonce`] is the nonce to store back on the
/// player afterwards.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dice {
    block_height: u64,
    player_id: String,
    nonce: u64,
    rolls: u64,
}

impl Dice {
    pub fn new(block_height: u64, player_id: &str, player_nonce: u64) -> Dice {
        Dice {
            block_height,
            player_id: player_id.to_string(),
            nonce: player_nonce,
            rolls: 0,
        }
    }

    /// The hashed input of the roll made at `nonce`.
    pub fn input(block_height: u64, player_id: &str, nonce: u64) -> String {
        format!("{block_height}/{player_id}/{nonce}")
    }

    /// The 64-bit draw for `nonce`: the first 8 bytes of the input's SHA-256.
    pub fn draw(block_height: u64, player_id: &str, nonce: u64) -> u64 {
        let hex = crate::pow::hash_hex(&Dice::input(block_height, player_id, nonce));
        u64::from_str_radix(&hex[..16], 16).expect("SHA-256 hex has 64 digits")
    }

    /// One success check against `rate`; advances the nonce.
    pub fn roll(&mut self, rate: Rate) -> bool {
        let value = Dice::draw(self.block_height, &self.player_id, self.nonce);
        self.nonce += 1;
        self.rolls += 1;
        rate.admits(value)
    }

    /// The player's nonce after the rolls so far.
    pub fn nonce(&self) -> u64 {
        self.nonce
    }

    /// How many rolls these dice have made.
    pub fn rolls(&self) -> u64 {
        self.rolls
    }

    pub fn block_height(&self) -> u64 {
        self.block_height
    }

    pub fn player_id(&self) -> &str {
        &self.player_id
    }
}

impl Roller for Dice {
    fn roll(&mut self, rate: Rate) -> bool {
        Dice::roll(self, rate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_that_never_or_always_succeed() {
        assert!(Rate::new(0, 3).is_never() && Rate::new(2, 0).is_never());
        assert!(Rate::ALWAYS.is_certain() && Rate::new(5, 3).is_certain());
        assert!(!Rate::new(2, 3).is_certain() && !Rate::new(2, 3).is_never());
        assert_eq!(Rate::new(1, 4).probability(), 0.25);
        assert_eq!(Rate::new(7, 0).probability(), 0.0);
        assert!(!Rate::new(0, 1).admits(0));
        assert!(!Rate::new(1, 0).admits(0));
        assert!(Rate::new(2, 3).admits(4) && !Rate::new(2, 3).admits(5));
    }

    #[test]
    fn dice_are_the_documented_hash() {
        // The draw is the first 8 bytes of SHA-256("100/1-7/3"), computed independently.
        use sha2::{Digest, Sha256};
        let digest = Sha256::digest(b"100/1-7/3");
        let want = u64::from_be_bytes(digest[..8].try_into().unwrap());
        assert_eq!(Dice::draw(100, "1-7", 3), want);
        let mut d = Dice::new(100, "1-7", 3);
        assert_eq!(d.roll(Rate::new(1, 1000)), want % 1000 < 1);
        assert_eq!(d.nonce(), 4);
    }

    #[test]
    fn every_roll_advances_the_nonce_and_never_rates_never_succeed() {
        let mut d = Dice::new(7, "1-1", 10);
        for _ in 0..50 {
            assert!(!d.roll(Rate::new(0, 5)));
            assert!(!d.roll(Rate::new(5, 0)));
            assert!(d.roll(Rate::ALWAYS));
        }
        assert_eq!((d.nonce(), d.rolls()), (160, 150));
    }

    #[test]
    fn the_same_inputs_give_the_same_rolls() {
        let rolls = |h, p: &str, n| {
            let mut d = Dice::new(h, p, n);
            (0..64)
                .map(|_| d.roll(Rate::new(1, 2)))
                .collect::<Vec<bool>>()
        };
        assert_eq!(rolls(5, "1-2", 0), rolls(5, "1-2", 0));
        assert_ne!(rolls(5, "1-2", 0), rolls(5, "1-2", 1));
        assert_ne!(rolls(5, "1-2", 0), rolls(6, "1-2", 0));
        assert_ne!(rolls(5, "1-2", 0), rolls(5, "1-3", 0));
        // Fair enough: a half rate succeeds about half the time.
        let mut d = Dice::new(1, "1-1", 0);
        let hits = (0..4000).filter(|_| d.roll(Rate::new(1, 2))).count();
        assert!((1800..2200).contains(&hits), "{hits}");
    }

    #[test]
    fn generators_convert_at_their_types_rate() {
        use crate::entity::struct_types::struct_type;
        let rates: Vec<u64> = [14, 20, 21, 22]
            .iter()
            .map(|&id| generator_mw_per_ualpha(struct_type(id).unwrap()))
            .collect();
        assert_eq!(rates, [0, 2, 5, 10]);
    }
}
