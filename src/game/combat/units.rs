//! What fights: weapon slots and weapons, a type's combat stats, a unit in a fight,
//! the planet's defenses, the attack itself, and whether a weapon reaches its target.

use crate::entity::struct_types::{field_bool as flag, field_str as text, field_u64 as num};
use serde::Serialize;

use super::{ARMOUR_PIERCING, INTERCEPTOR_MISS, MAX_INTERCEPTORS, REACH_LOCAL};
use crate::entity::struct_types::{Ambit, StructType, struct_type};
use crate::game::Rate;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WeaponSlot {
    Primary,
    Secondary,
}

impl WeaponSlot {
    pub fn name(self) -> &'static str {
        match self {
            WeaponSlot::Primary => "primary",
            WeaponSlot::Secondary => "secondary",
        }
    }

    pub fn parse(s: &str) -> Option<WeaponSlot> {
        match s {
            "primary" => Some(WeaponSlot::Primary),
            "secondary" => Some(WeaponSlot::Secondary),
            _ => None,
        }
    }
}

/// How a weapon finds its target: what the target's defenses answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Control {
    Guided,
    Unguided,
}

impl Control {
    pub fn name(self) -> &'static str {
        match self {
            Control::Guided => "guided",
            Control::Unguided => "unguided",
        }
    }
}

/// One weapon of a struct type.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Weapon {
    pub slot: WeaponSlot,
    /// The type's weapon name (`guidedWeaponry`, `attackRun`, ...).
    pub name: String,
    pub control: Control,
    /// Charge a shot costs the player.
    pub charge: u64,
    /// Reach bitmask: water 2, land 4, air 8, space 16, local 32 (own ambit).
    pub reach: u32,
    pub targets: u32,
    pub shots: u32,
    /// The first this-many shots hit without a roll.
    pub guaranteed_shots: u32,
    /// Damage per hit.
    pub damage: u32,
    pub blockable: bool,
    pub counterable: bool,
    pub recoil_damage: u32,
    pub shot_success: Rate,
    pub armour_piercing: bool,
}

/// A weapon or defence figure that fits a `u32`; a larger one saturates.
fn small(raw: &serde_json::Value, key: &str) -> u32 {
    u32::try_from(num(raw, key)).unwrap_or(u32::MAX)
}

impl Weapon {
    /// The weapon in `slot`, or `None` when the type has none there
    /// (`noActiveWeaponry`).
    pub fn of(t: &StructType, slot: WeaponSlot) -> Option<Weapon> {
        let raw = &t.raw;
        let p = slot.name();
        let key = |k: &str| format!("{p}Weapon{k}");
        let name = text(raw, &format!("{p}Weapon"));
        let control = match text(raw, &key("Control")) {
            "guided" => Control::Guided,
            "unguided" => Control::Unguided,
            _ => return None,
        };
        if name.is_empty() || name == "noActiveWeaponry" {
            return None;
        }
        Some(Weapon {
            slot,
            name: name.to_string(),
            control,
            charge: num(raw, &key("Charge")),
            reach: small(raw, &key("Ambits")),
            targets: small(raw, &key("Targets")),
            shots: small(raw, &key("Shots")),
            // `omitempty` on the chain: absent means 0.
            guaranteed_shots: small(raw, &key("GuaranteedShots")),
            damage: small(raw, &key("Damage")),
            blockable: flag(raw, &key("Blockable")),
            counterable: flag(raw, &key("Counterable")) && flag(raw, "attackCounterable"),
            recoil_damage: small(raw, &key("RecoilDamage")),
            shot_success: Rate::new(
                num(raw, &key("ShotSuccessRateNumerator")),
                num(raw, &key("ShotSuccessRateDenominator")),
            ),
            armour_piercing: ARMOUR_PIERCING.contains(&(t.id, slot)),
        })
    }

    /// Whether it can hit a struct in `target` when fired from `own`.
    pub fn reaches(&self, own: Ambit, target: Ambit) -> bool {
        self.reach & target.bit() != 0 || (self.reach & REACH_LOCAL != 0 && own == target)
    }

    /// The ambits in its reach mask, by name (`local` for the own-ambit bit).
    pub fn reach_names(&self) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = Ambit::ALL
            .into_iter()
            .filter(|a| self.reach & a.bit() != 0)
            .map(Ambit::name)
            .collect();
        if self.reach & REACH_LOCAL != 0 {
            names.push("local");
        }
        names
    }
}

/// What a unit fights with: the struct type's combat values, each of which a caller
/// may override.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stats {
    pub max_health: u32,
    /// Armour: taken off each volley's damage (`attackReduction`).
    pub attack_reduction: u32,
    /// The unit defense's name (`signalJamming`, `armour`, ...).
    pub unit_defenses: String,
    /// Chance to evade a guided volley.
    pub guided_defense: Rate,
    /// Chance to evade an unguided volley.
    pub unguided_defense: Rate,
    /// Counter damage against an attacker in another ambit.
    pub counter_attack: u32,
    /// Counter damage against an attacker in the same ambit.
    pub counter_attack_same_ambit: u32,
    /// Damage dealt to whoever destroys it.
    pub post_destruction_damage: u32,
    /// Stealthed: only attackable from its own ambit.
    pub stealth: bool,
    /// Built on a planet (`category: planet`).
    pub planetary: bool,
    pub primary: Option<Weapon>,
    pub secondary: Option<Weapon>,
}

impl Stats {
    pub fn of(t: &StructType) -> Stats {
        let raw = &t.raw;
        Stats {
            max_health: t.max_health,
            attack_reduction: small(raw, "attackReduction"),
            unit_defenses: text(raw, "unitDefenses").to_string(),
            guided_defense: Rate::new(
                num(raw, "guidedDefensiveSuccessRateNumerator"),
                num(raw, "guidedDefensiveSuccessRateDenominator"),
            ),
            unguided_defense: Rate::new(
                num(raw, "unguidedDefensiveSuccessRateNumerator"),
                num(raw, "unguidedDefensiveSuccessRateDenominator"),
            ),
            counter_attack: small(raw, "counterAttack"),
            counter_attack_same_ambit: small(raw, "counterAttackSameAmbit"),
            post_destruction_damage: small(raw, "postDestructionDamage"),
            stealth: flag(raw, "stealthSystems"),
            planetary: !t.is_fleet(),
            primary: Weapon::of(t, WeaponSlot::Primary),
            secondary: Weapon::of(t, WeaponSlot::Secondary),
        }
    }

    pub fn weapon(&self, slot: WeaponSlot) -> Option<&Weapon> {
        match slot {
            WeaponSlot::Primary => self.primary.as_ref(),
            WeaponSlot::Secondary => self.secondary.as_ref(),
        }
    }

    pub fn weapon_mut(&mut self, slot: WeaponSlot) -> Option<&mut Weapon> {
        match slot {
            WeaponSlot::Primary => self.primary.as_mut(),
            WeaponSlot::Secondary => self.secondary.as_mut(),
        }
    }

    /// Whether any of its weapons reaches `target` from `own` (what a counter needs).
    pub fn can_reach(&self, own: Ambit, target: Ambit) -> bool {
        [&self.primary, &self.secondary]
            .into_iter()
            .flatten()
            .any(|w| w.reaches(own, target))
    }

    /// Its counter damage against an attacker in the same or another ambit.
    pub fn counter_damage(&self, same_ambit: bool) -> u32 {
        if same_ambit {
            self.counter_attack_same_ambit
        } else {
            self.counter_attack
        }
    }

    /// The defensive rate against a weapon of this control.
    pub fn defense_against(&self, control: Control) -> Rate {
        match control {
            Control::Guided => self.guided_defense,
            Control::Unguided => self.unguided_defense,
        }
    }
}

/// One struct in a fight.
#[derive(Debug, Clone, PartialEq)]
pub struct Unit {
    pub id: String,
    pub type_id: u8,
    pub stats: Stats,
    pub ambit: Ambit,
    pub health: u32,
    /// Online, and its owner online: only a ready struct counters or blocks.
    pub ready: bool,
}

impl Unit {
    /// A ready unit of type `t` at full health.
    pub fn new(id: &str, t: &StructType, ambit: Ambit) -> Unit {
        Unit {
            id: id.to_string(),
            type_id: t.id,
            stats: Stats::of(t),
            ambit,
            health: t.max_health,
            ready: true,
        }
    }

    pub(super) fn type_name(&self) -> String {
        struct_type(self.type_id)
            .map_or_else(|| format!("type {}", self.type_id), |t| t.name.clone())
    }
}

/// The planet's defenses, when the target is a planetary struct on its owner's
/// planet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct PlanetDefenses {
    /// The cannons' damage to the attacker at the end of the attack, all cannons
    /// together.
    pub cannon_damage: u32,
    /// Interceptors (Jamming Satellites) on the planet.
    pub interceptors: u32,
}

impl PlanetDefenses {
    /// The interceptor network's chance to evade a guided volley: `1 - (2/3)^n`.
    pub fn interceptor_rate(&self) -> Rate {
        let n = self.interceptors.min(MAX_INTERCEPTORS);
        if n == 0 {
            return Rate::NEVER;
        }
        let miss = INTERCEPTOR_MISS.numerator.pow(n);
        let all = INTERCEPTOR_MISS.denominator.pow(n);
        Rate::new(all - miss, all)
    }
}

/// One `struct-attack` against one target.
#[derive(Debug, Clone, PartialEq)]
pub struct Attack {
    pub attacker: Unit,
    pub weapon: WeaponSlot,
    pub target: Unit,
    /// The target's defenders, already filtered by the caller to those assigned to the
    /// target and in range, in the order the chain visits them.
    pub defenders: Vec<Unit>,
    /// `Some` when the target is a planetary struct on its owner's planet.
    pub planet: Option<PlanetDefenses>,
}

/// Whether `attacker` may fire `weapon` at `target`: the weapon exists, its reach
/// includes the target's ambit, and a stealthed target is only attackable from its own
/// ambit.
pub fn check_reach(attacker: &Unit, weapon: WeaponSlot, target: &Unit) -> Result<(), String> {
    let Some(w) = attacker.stats.weapon(weapon) else {
        return Err(format!(
            "{} has no {} weapon",
            attacker.type_name(),
            weapon.name()
        ));
    };
    if !w.reaches(attacker.ambit, target.ambit) {
        let reach = if w.reach & REACH_LOCAL != 0 {
            let mut names = w.reach_names();
            names.retain(|n| *n != "local");
            names.push(attacker.ambit.name());
            names.join(", ")
        } else {
            w.reach_names().join(", ")
        };
        return Err(format!(
            "the {} weapon of {} in {} reaches {}, not {} where the target {} is",
            weapon.name(),
            attacker.type_name(),
            attacker.ambit.name(),
            if reach.is_empty() { "nothing" } else { &reach },
            target.ambit.name(),
            target.type_name(),
        ));
    }
    if target.stats.stealth && attacker.ambit != target.ambit {
        return Err(format!(
            "{} in {} is stealthed: only a struct in {} can target it, and {} is in {}",
            target.type_name(),
            target.ambit.name(),
            target.ambit.name(),
            attacker.type_name(),
            attacker.ambit.name(),
        ));
    }
    Ok(())
}
