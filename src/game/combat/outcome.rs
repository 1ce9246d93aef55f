//! The report of one attack: each step the rules took (evasion, counters, blocking,
//! the volley, recoil, the cannons) and every unit's health before and after.

use serde::Serialize;

use super::units::WeaponSlot;
use crate::game::Rate;

/// The evasion step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Evasion {
    pub evaded: bool,
    /// What evaded it: the target's unit defense (`signalJamming`, ...) or
    /// `lowOrbitBallisticInterceptorNetwork`.
    pub by: Option<String>,
    pub unit_defense: String,
    /// The target's rate against this weapon's control.
    pub unit_rate: Rate,
    /// The unit defense rolled (its rate is not zero).
    pub unit_rolled: bool,
    /// The interceptor network's rate, when it applied (guided fire at a planetary
    /// target with interceptors).
    pub interceptor_rate: Option<Rate>,
    pub interceptor_rolled: bool,
}

/// Who counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CounterRole {
    Defender,
    Target,
}

/// One counter-attack on the attacker.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Counter {
    pub by: String,
    pub role: CounterRole,
    pub same_ambit: bool,
    pub damage: u32,
    /// The attacker's health after it.
    pub attacker_health_after: u32,
    pub attacker_destroyed: bool,
}

/// The block step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Blocking {
    pub blocked: bool,
    pub by: Option<String>,
    /// Why it did or did not happen.
    pub reason: String,
}

/// One shot of the volley.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Shot {
    pub index: u32,
    pub guaranteed: bool,
    /// Rolled the shot success rate (not guaranteed).
    pub rolled: bool,
    pub hit: bool,
    /// Damage before armour.
    pub damage: u32,
}

/// The attacker's volley.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Volley {
    pub fired: bool,
    /// Why it did not fire (evaded, attacker destroyed, rejected).
    pub not_fired_because: Option<String>,
    /// Who it landed on: the target, or the blocker.
    pub at: Option<String>,
    pub shots: Vec<Shot>,
    pub hits: u32,
    /// Sum of the hits' damage.
    pub raw_damage: u32,
    /// The receiver's armour.
    pub reduction: u32,
    pub armour_piercing: bool,
    /// What the armour actually took off.
    pub reduction_applied: u32,
    /// Damage after armour.
    pub damage: u32,
    /// Damage after the cap at the receiver's health.
    pub damage_dealt: u32,
    pub receiver_destroyed: bool,
}

/// Recoil on the attacker.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Recoil {
    pub damage: u32,
    pub applied: bool,
    pub attacker_destroyed: bool,
}

/// The planet's cannons firing at the attacker.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cannon {
    pub damage: u32,
    pub fired: bool,
    pub attacker_destroyed: bool,
}

/// Damage a destroyed struct dealt to the one that destroyed it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PostDestruction {
    pub from: String,
    pub to: String,
    pub damage: u32,
    pub destroyed: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Attacker,
    Target,
    Defender,
}

/// A unit's health before and after.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UnitReport {
    pub id: String,
    pub role: Role,
    pub type_id: u8,
    pub type_name: String,
    pub ambit: &'static str,
    pub max_health: u32,
    pub health_before: u32,
    pub health_after: u32,
    pub destroyed: bool,
}

/// Everything one attack did, step by step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    pub attacker: String,
    pub target: String,
    pub weapon: WeaponSlot,
    /// Set when [`check_reach`](super::check_reach) refused the attack; nothing else happened.
    pub rejected: Option<String>,
    pub evasion: Evasion,
    /// Defender counters (before the volley), then the target's (after it).
    pub counters: Vec<Counter>,
    pub blocking: Blocking,
    pub volley: Volley,
    pub recoil: Recoil,
    pub cannon: Cannon,
    pub post_destruction: Vec<PostDestruction>,
    /// Damage the target took (0 when the volley was blocked or evaded).
    pub damage_to_target: u32,
    /// Damage the attacker took from counters, recoil, cannons and post-destruction.
    pub damage_to_attacker: u32,
    /// Damage the blocker took, if one blocked.
    pub damage_to_blocker: u32,
    /// The attacker, the target and every defender that countered, blocked or was hit.
    pub units: Vec<UnitReport>,
    /// Success checks made (each advanced the player's nonce).
    pub rolls: u64,
}

impl Outcome {
    pub fn target_destroyed(&self) -> bool {
        self.units
            .iter()
            .any(|u| u.role == Role::Target && u.destroyed)
    }

    pub fn attacker_destroyed(&self) -> bool {
        self.units
            .iter()
            .any(|u| u.role == Role::Attacker && u.destroyed)
    }
}
