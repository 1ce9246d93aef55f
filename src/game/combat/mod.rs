//! Combat: weapons and units read from struct types, and the resolution of one attack
//! on one target, step by step as the chain does it.
//!
//! - [`Weapon::of`] and [`Stats::of`] read a struct type's JSON (the genesis values in
//!   `data/struct-types.json`); the tools may override any [`Stats`] field.
//! - [`Unit`] is one struct in a fight: its stats, ambit, health and readiness.
//! - [`Attack`] is one `struct-attack` against one target, with the target's defenders
//!   (already filtered by the caller to those assigned to the target and in range) and
//!   the planet's defenses when the target is a planetary struct on its owner's planet.
//! - [`check_reach`] says whether the weapon may fire at the target at all.
//! - [`resolve`] rolls one attack with [`Dice`](super::Dice) and reports every step in an
//!   [`Outcome`]; [`expected`] walks every branch of the same rules with its exact
//!   probability.
//!
//! # The sequence (per target)
//!
//! 1. **Evasion**, once for the whole volley: the target's unit defense rolls its
//!    guided or unguided defensive rate (only when the rate is not zero); if that
//!    fails and the weapon is guided and the target is a planetary struct on its
//!    owner's planet, the planet's interceptor network rolls its own chance.
//! 2. **Defender counters**, before any block and whether or not the volley was
//!    evaded: every ready defender whose weapons reach the attacker's ambit counters
//!    once, if the weapon is counterable. Counter damage is the defender type's
//!    `counterAttackSameAmbit` when it shares the attacker's ambit, its `counterAttack`
//!    otherwise.
//! 3. **Deferred block**: the first ready defender in the *target's* ambit is
//!    remembered as the blocker (blockable weapon, volley not evaded), but the block
//!    only happens if the attacker survived every counter.
//! 4. **Survival gate and volley**: a destroyed attacker deals nothing. Otherwise the
//!    volley lands on the blocker (if any) or the target: the first `guaranteed_shots`
//!    shots hit, each other shot rolls the shot success rate, the hits' damage is
//!    summed, the receiver's armour (`attackReduction`) is taken off unless the weapon
//!    is armour-piercing, and the result is capped at the receiver's health.
//! 5. **Target counter**, once, after the volley, if the target survived.
//! 6. **Recoil**, if the attacker survived everything so far.
//! 7. **Planetary defense cannons** fire at the attacker last, when the target is a
//!    planetary struct on its owner's planet.
//!
//! A struct destroyed by another's damage deals its `postDestructionDamage` (0 for
//! every genesis type) to the struct that destroyed it.
//!
//! # Facts decided here
//!
//! - **Armour piercing**: the struct types carry no armour-piercing field; combat.md
//!   ("Damage Formulas") names the Battleship's primary as the one armour-piercing
//!   weapon: [`ARMOUR_PIERCING`].
//! - **Blocking rate**: the struct types carry no blocking rate; a ready, same-ambit
//!   defender blocks a blockable, unevaded volley every time (no roll).
//! - **Minimum damage**: formulas.md subtracts the reduction and floors at 0; combat.md
//!   ("Attack Resolution Sequence", "Edge Cases") says at least 1 damage lands when any
//!   shot hits. This follows combat.md, the newer text: the reduction is taken once
//!   from the volley's sum and the result is at least [`MIN_DAMAGE_WHEN_HIT`]. With the
//!   genesis types the two agree (every weapon that can reach an armoured struct deals
//!   2 per hit, armour is 1); they differ only for overridden stats.
//! - **Counter damage**: formulas.md halves `counterAttackDamage` across ambits;
//!   combat.md uses two per-type fields (`counterAttackSameAmbit`, `counterAttack`),
//!   which the struct types carry. This follows combat.md.
//! - **Interceptor network**: each interceptor (Jamming Satellite) misses 2 times in
//!   3, and the network's chance is one roll at `1 - (2/3)^n` for `n` interceptors
//!   ([`PlanetDefenses::interceptor_rate`]); combat.md says only that each one
//!   compounds the chance and that source and target ambits do not matter.
//! - **Command Ship reach**: reach bit 32 (`local`, combat.md "Ambit Targeting") is the
//!   struct's own current ambit.
//! - **Counterable**: a weapon is counterable when its own flag and its type's
//!   `attackCounterable` are both set; cannons fire only at a counterable attacker.
//!
//! The rules are in four files by purpose: `units` (weapons, stats, units, the
//! attack and its reach), `outcome` (the report of every step), `resolve` (one attack
//! rolled step by step) and `expect` (every branch weighed).

mod expect;
mod outcome;
mod resolve;
#[cfg(test)]
mod tests;
mod units;

pub use expect::{Expectation, expected};
pub use outcome::*;
pub use resolve::{resolve, resolve_with};
pub use units::*;

use super::Rate;

/// Reach bit of the Command Ship's weapon: whatever ambit the struct is in.
pub const REACH_LOCAL: u32 = 32;

/// The armour-piercing weapons, by struct type id and slot: the Battleship's primary
/// (combat.md, "Damage Formulas": "The Battleship's primary is armour-piercing").
pub const ARMOUR_PIERCING: &[(u8, WeaponSlot)] = &[(2, WeaponSlot::Primary)];

/// Damage that lands when at least one shot hits, whatever the armour (combat.md).
pub const MIN_DAMAGE_WHEN_HIT: u32 = 1;

/// One interceptor's miss chance: the network evades with `1 - MISS^n`.
pub const INTERCEPTOR_MISS: Rate = Rate::new(2, 3);

/// More interceptors than this count as this many (3^40 still fits the rate's u64).
pub const MAX_INTERCEPTORS: u32 = 40;

/// The effect name the chain reports for an evasion by the interceptor network.
pub const INTERCEPTOR_NETWORK: &str = "lowOrbitBallisticInterceptorNetwork";
