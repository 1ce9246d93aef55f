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
//! - [`resolve`] rolls one attack with [`Dice`] and reports every step in an
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

use serde::Serialize;

use super::{Dice, Rate, Roller};
use crate::entity::struct_types::{Ambit, StructType, struct_type};

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

fn num(raw: &serde_json::Value, key: &str) -> u64 {
    raw.get(key)
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0)
}

fn small(raw: &serde_json::Value, key: &str) -> u32 {
    u32::try_from(num(raw, key)).unwrap_or(u32::MAX)
}

fn flag(raw: &serde_json::Value, key: &str) -> bool {
    raw.get(key)
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false)
}

fn text<'a>(raw: &'a serde_json::Value, key: &str) -> &'a str {
    raw.get(key)
        .and_then(serde_json::Value::as_str)
        .unwrap_or("")
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

    fn type_name(&self) -> String {
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
    /// Set when [`check_reach`] refused the attack; nothing else happened.
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

/// Counts the checks a roller makes.
struct Counting<'a, R: Roller> {
    inner: &'a mut R,
    rolls: u64,
}

impl<R: Roller> Roller for Counting<'_, R> {
    fn roll(&mut self, rate: Rate) -> bool {
        self.rolls += 1;
        self.inner.roll(rate)
    }
}

/// Resolves one attack with the dice (see the module doc for the sequence).
pub fn resolve(attack: &Attack, dice: &mut Dice) -> Outcome {
    resolve_with(attack, dice)
}

/// Resolves one attack with any [`Roller`].
pub fn resolve_with<R: Roller>(attack: &Attack, roller: &mut R) -> Outcome {
    let mut roller = Counting {
        inner: roller,
        rolls: 0,
    };
    let mut out = Fight::new(attack).run(&mut roller);
    out.rolls = roller.rolls;
    out
}

/// The state of one resolution: health by unit (0 attacker, 1 target, 2.. defenders).
struct Fight<'a> {
    attack: &'a Attack,
    health: Vec<u32>,
    touched: Vec<bool>,
    post: Vec<PostDestruction>,
}

const ATTACKER: usize = 0;
const TARGET: usize = 1;

impl<'a> Fight<'a> {
    fn new(attack: &'a Attack) -> Fight<'a> {
        let mut health = vec![
            attack.attacker.health.min(attack.attacker.stats.max_health),
            attack.target.health.min(attack.target.stats.max_health),
        ];
        health.extend(
            attack
                .defenders
                .iter()
                .map(|d| d.health.min(d.stats.max_health)),
        );
        let n = health.len();
        Fight {
            attack,
            health,
            touched: vec![false; n],
            post: Vec::new(),
        }
    }

    fn unit(&self, i: usize) -> &'a Unit {
        match i {
            ATTACKER => &self.attack.attacker,
            TARGET => &self.attack.target,
            d => &self.attack.defenders[d - 2],
        }
    }

    fn alive(&self, i: usize) -> bool {
        self.health[i] > 0
    }

    /// Deals `damage` from `from` to `to`, capped at `to`'s health; a struct it
    /// destroys deals its post-destruction damage back to `from`. Returns what was
    /// dealt.
    fn hit(&mut self, from: usize, to: usize, damage: u32) -> u32 {
        self.touched[to] = true;
        let dealt = damage.min(self.health[to]);
        self.health[to] -= dealt;
        if dealt > 0 && self.health[to] == 0 {
            let pdd = self.unit(to).stats.post_destruction_damage;
            if pdd > 0 && self.alive(from) {
                self.touched[from] = true;
                let back = pdd.min(self.health[from]);
                self.health[from] -= back;
                self.post.push(PostDestruction {
                    from: self.unit(to).id.clone(),
                    to: self.unit(from).id.clone(),
                    damage: back,
                    destroyed: self.health[from] == 0,
                });
            }
        }
        dealt
    }

    fn run<R: Roller>(mut self, roller: &mut R) -> Outcome {
        let a = self.attack;
        let (attacker, target) = (&a.attacker, &a.target);
        self.touched[ATTACKER] = true;
        self.touched[TARGET] = true;
        let unit_rate = a
            .attacker
            .stats
            .weapon(a.weapon)
            .map_or(Rate::NEVER, |w| target.stats.defense_against(w.control));
        let mut out = Outcome {
            attacker: attacker.id.clone(),
            target: target.id.clone(),
            weapon: a.weapon,
            rejected: None,
            evasion: Evasion {
                evaded: false,
                by: None,
                unit_defense: target.stats.unit_defenses.clone(),
                unit_rate,
                unit_rolled: false,
                interceptor_rate: None,
                interceptor_rolled: false,
            },
            counters: Vec::new(),
            blocking: Blocking {
                blocked: false,
                by: None,
                reason: String::new(),
            },
            volley: Volley {
                fired: false,
                not_fired_because: None,
                at: None,
                shots: Vec::new(),
                hits: 0,
                raw_damage: 0,
                reduction: 0,
                armour_piercing: false,
                reduction_applied: 0,
                damage: 0,
                damage_dealt: 0,
                receiver_destroyed: false,
            },
            recoil: Recoil {
                damage: 0,
                applied: false,
                attacker_destroyed: false,
            },
            cannon: Cannon {
                damage: 0,
                fired: false,
                attacker_destroyed: false,
            },
            post_destruction: Vec::new(),
            damage_to_target: 0,
            damage_to_attacker: 0,
            damage_to_blocker: 0,
            units: Vec::new(),
            rolls: 0,
        };
        if let Err(reason) = check_reach(attacker, a.weapon, target) {
            out.blocking.reason = "the attack was rejected".into();
            out.volley.not_fired_because = Some(reason.clone());
            out.rejected = Some(reason);
            out.units = self.reports();
            return out;
        }
        let weapon = attacker
            .stats
            .weapon(a.weapon)
            .expect("check_reach found the weapon");

        // 1. Evasion, once for the volley.
        if !unit_rate.is_never() {
            out.evasion.unit_rolled = true;
            if roller.roll(unit_rate) {
                out.evasion.evaded = true;
                out.evasion.by = Some(target.stats.unit_defenses.clone());
            }
        }
        if !out.evasion.evaded
            && weapon.control == Control::Guided
            && let Some(planet) = a.planet.filter(|p| p.interceptors > 0)
        {
            let rate = planet.interceptor_rate();
            out.evasion.interceptor_rate = Some(rate);
            out.evasion.interceptor_rolled = true;
            if roller.roll(rate) {
                out.evasion.evaded = true;
                out.evasion.by = Some(INTERCEPTOR_NETWORK.into());
            }
        }

        // 2. Defender counters, each defender once, evaded or not.
        let mut seen: Vec<&str> = Vec::new();
        if weapon.counterable {
            for d in 2..self.health.len() {
                let unit = self.unit(d);
                if seen.contains(&unit.id.as_str()) {
                    continue;
                }
                seen.push(&unit.id);
                if !self.alive(ATTACKER) {
                    break;
                }
                if !unit.ready
                    || !self.alive(d)
                    || !unit.stats.can_reach(unit.ambit, attacker.ambit)
                {
                    continue;
                }
                self.touched[d] = true;
                let same = unit.ambit == attacker.ambit;
                let dealt = self.hit(d, ATTACKER, unit.stats.counter_damage(same));
                out.counters.push(Counter {
                    by: unit.id.clone(),
                    role: CounterRole::Defender,
                    same_ambit: same,
                    damage: dealt,
                    attacker_health_after: self.health[ATTACKER],
                    attacker_destroyed: !self.alive(ATTACKER),
                });
            }
        }

        // 3. The deferred block: the first ready defender in the target's ambit.
        let blocker = (2..self.health.len()).find(|&d| {
            let u = self.unit(d);
            u.ready && self.alive(d) && u.ambit == target.ambit && u.id != target.id
        });
        let attacker_alive = self.alive(ATTACKER);
        out.blocking.reason = match blocker {
            _ if !weapon.blockable => "the weapon cannot be blocked".into(),
            _ if out.evasion.evaded => "nothing to block: the volley was evaded".into(),
            None => format!(
                "no ready defender in the target's ambit ({})",
                target.ambit.name()
            ),
            Some(_) if !attacker_alive => {
                "no block needed: the counters destroyed the attacker".into()
            }
            Some(d) => format!(
                "{} is a ready defender in the target's ambit ({})",
                self.unit(d).id,
                target.ambit.name()
            ),
        };
        let blocker = blocker.filter(|_| weapon.blockable && !out.evasion.evaded && attacker_alive);
        if let Some(b) = blocker {
            self.touched[b] = true;
            out.blocking.blocked = true;
            out.blocking.by = Some(self.unit(b).id.clone());
        }

        // 4. The survival gate and the volley.
        if !attacker_alive {
            out.volley.not_fired_because =
                Some("the attacker was destroyed by counter-attacks first".into());
        } else if out.evasion.evaded {
            out.volley.not_fired_because = Some(format!(
                "evaded by {}",
                out.evasion.by.as_deref().unwrap_or("the target")
            ));
        } else {
            let receiver = blocker.unwrap_or(TARGET);
            let v = &mut out.volley;
            v.fired = true;
            v.at = Some(self.unit(receiver).id.clone());
            for index in 0..weapon.shots {
                let guaranteed = index < weapon.guaranteed_shots;
                let hit = guaranteed || roller.roll(weapon.shot_success);
                v.shots.push(Shot {
                    index,
                    guaranteed,
                    rolled: !guaranteed,
                    hit,
                    damage: if hit { weapon.damage } else { 0 },
                });
            }
            v.hits = v.shots.iter().filter(|s| s.hit).count() as u32;
            v.raw_damage = v
                .shots
                .iter()
                .map(|s| s.damage)
                .fold(0u32, u32::saturating_add);
            v.armour_piercing = weapon.armour_piercing;
            v.reduction = self.unit(receiver).stats.attack_reduction;
            let reduction = if weapon.armour_piercing {
                0
            } else {
                v.reduction
            };
            v.damage = if v.raw_damage == 0 {
                0
            } else {
                v.raw_damage
                    .saturating_sub(reduction)
                    .max(MIN_DAMAGE_WHEN_HIT)
            };
            v.reduction_applied = v.raw_damage - v.damage.min(v.raw_damage);
            let dealt = self.hit(ATTACKER, receiver, v.damage);
            let v = &mut out.volley;
            v.damage_dealt = dealt;
            v.receiver_destroyed = dealt > 0 && self.health[receiver] == 0;
            if receiver == TARGET {
                out.damage_to_target = dealt;
            } else {
                out.damage_to_blocker = dealt;
            }
        }

        // 5. The target's counter, after the volley.
        if weapon.counterable
            && self.alive(ATTACKER)
            && self.alive(TARGET)
            && target.ready
            && target.stats.can_reach(target.ambit, attacker.ambit)
        {
            let same = target.ambit == attacker.ambit;
            let dealt = self.hit(TARGET, ATTACKER, target.stats.counter_damage(same));
            out.counters.push(Counter {
                by: target.id.clone(),
                role: CounterRole::Target,
                same_ambit: same,
                damage: dealt,
                attacker_health_after: self.health[ATTACKER],
                attacker_destroyed: !self.alive(ATTACKER),
            });
        }

        // 6. Recoil, if the attacker survived.
        out.recoil.damage = weapon.recoil_damage;
        if weapon.recoil_damage > 0 && self.alive(ATTACKER) {
            let dealt = weapon.recoil_damage.min(self.health[ATTACKER]);
            self.health[ATTACKER] -= dealt;
            out.recoil = Recoil {
                damage: dealt,
                applied: true,
                attacker_destroyed: !self.alive(ATTACKER),
            };
        }

        // 7. The planet's cannons, last.
        if let Some(planet) = a.planet {
            out.cannon.damage = planet.cannon_damage;
            if planet.cannon_damage > 0 && weapon.counterable && self.alive(ATTACKER) {
                let dealt = planet.cannon_damage.min(self.health[ATTACKER]);
                self.health[ATTACKER] -= dealt;
                out.cannon = Cannon {
                    damage: dealt,
                    fired: true,
                    attacker_destroyed: !self.alive(ATTACKER),
                };
            }
        }

        out.damage_to_attacker =
            self.unit(ATTACKER).health.min(attacker.stats.max_health) - self.health[ATTACKER];
        out.post_destruction = std::mem::take(&mut self.post);
        out.units = self.reports();
        out
    }

    fn reports(&self) -> Vec<UnitReport> {
        (0..self.health.len())
            .filter(|&i| self.touched[i])
            .map(|i| {
                let u = self.unit(i);
                let before = u.health.min(u.stats.max_health);
                UnitReport {
                    id: u.id.clone(),
                    role: match i {
                        ATTACKER => Role::Attacker,
                        TARGET => Role::Target,
                        _ => Role::Defender,
                    },
                    type_id: u.type_id,
                    type_name: u.type_name(),
                    ambit: u.ambit.name(),
                    max_health: u.stats.max_health,
                    health_before: before,
                    health_after: self.health[i],
                    destroyed: before > 0 && self.health[i] == 0,
                }
            })
            .collect()
    }
}

/// Expected results of an attack, from every branch of the rules weighed by its exact
/// probability (not by sampling).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Expectation {
    pub damage_to_target: f64,
    pub damage_to_attacker: f64,
    pub damage_to_blocker: f64,
    pub target_destroyed: f64,
    pub attacker_destroyed: f64,
    pub evaded: f64,
    pub blocked: f64,
    pub volley_fired: f64,
    /// Distinct branches walked (each a different sequence of roll results).
    pub branches: usize,
}

/// Rolls fixed results for a prefix of the checks, then the most likely result, and
/// records every check it was asked.
struct Script {
    prefix: Vec<bool>,
    taken: Vec<(Rate, bool)>,
}

impl Roller for Script {
    fn roll(&mut self, rate: Rate) -> bool {
        let i = self.taken.len();
        let v = self.prefix.get(i).copied().unwrap_or(rate.is_certain());
        self.taken.push((rate, v));
        v
    }
}

/// Walks every branch of [`resolve_with`] (each check both ways, unless one way is
/// impossible) and weighs its results by its probability. The number of branches is
/// at most 2^(checks); with at most 8 rolled shots that is a few thousand.
pub fn expected(attack: &Attack) -> Expectation {
    let mut e = Expectation {
        damage_to_target: 0.0,
        damage_to_attacker: 0.0,
        damage_to_blocker: 0.0,
        target_destroyed: 0.0,
        attacker_destroyed: 0.0,
        evaded: 0.0,
        blocked: 0.0,
        volley_fired: 0.0,
        branches: 0,
    };
    let mut stack: Vec<Vec<bool>> = vec![Vec::new()];
    while let Some(prefix) = stack.pop() {
        let fixed = prefix.len();
        let mut script = Script {
            prefix,
            taken: Vec::new(),
        };
        let out = resolve_with(attack, &mut script);
        let p: f64 = script
            .taken
            .iter()
            .map(|&(rate, v)| {
                if v {
                    rate.probability()
                } else {
                    1.0 - rate.probability()
                }
            })
            .product();
        // Every check past the fixed prefix took its default; the other way is a new
        // branch when it can happen.
        for i in fixed..script.taken.len() {
            let (rate, v) = script.taken[i];
            let other_possible = if v {
                !rate.is_certain()
            } else {
                !rate.is_never()
            };
            if other_possible {
                let mut next: Vec<bool> = script.taken[..i].iter().map(|&(_, v)| v).collect();
                next.push(!v);
                stack.push(next);
            }
        }
        e.branches += 1;
        e.damage_to_target += p * f64::from(out.damage_to_target);
        e.damage_to_attacker += p * f64::from(out.damage_to_attacker);
        e.damage_to_blocker += p * f64::from(out.damage_to_blocker);
        e.target_destroyed += p * f64::from(u8::from(out.target_destroyed()));
        e.attacker_destroyed += p * f64::from(u8::from(out.attacker_destroyed()));
        e.evaded += p * f64::from(u8::from(out.evasion.evaded));
        e.blocked += p * f64::from(u8::from(out.blocking.blocked));
        e.volley_fired += p * f64::from(u8::from(out.volley.fired));
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entity::struct_types::struct_type;

    fn t(id: u8) -> &'static StructType {
        struct_type(id).unwrap()
    }

    fn unit(id: &str, type_id: u8, ambit: Ambit) -> Unit {
        Unit::new(id, t(type_id), ambit)
    }

    fn attack(attacker: Unit, weapon: WeaponSlot, target: Unit) -> Attack {
        Attack {
            attacker,
            weapon,
            target,
            defenders: Vec::new(),
            planet: None,
        }
    }

    /// Rolls from a fixed list (then `default`).
    struct Fixed(Vec<bool>, bool);
    impl Roller for Fixed {
        fn roll(&mut self, _rate: Rate) -> bool {
            if self.0.is_empty() {
                self.1
            } else {
                self.0.remove(0)
            }
        }
    }

    fn health(o: &Outcome, id: &str) -> (u32, u32, bool) {
        let u = o.units.iter().find(|u| u.id == id).expect(id);
        (u.health_before, u.health_after, u.destroyed)
    }

    const STARFIGHTER: u8 = 3;
    const BATTLESHIP: u8 = 2;
    const TANK: u8 = 9;
    const MOBILE_ARTILLERY: u8 = 8;
    const CRUISER: u8 = 11;
    const DESTROYER: u8 = 12;
    const FRIGATE: u8 = 4;
    const SUBMERSIBLE: u8 = 13;
    const HIGH_ALT: u8 = 7;
    const PURSUIT: u8 = 5;
    const SAM: u8 = 10;

    #[test]
    fn weapons_come_from_the_struct_types() {
        let attack_run = Weapon::of(t(STARFIGHTER), WeaponSlot::Secondary).unwrap();
        assert_eq!(
            (
                attack_run.shots,
                attack_run.guaranteed_shots,
                attack_run.damage
            ),
            (3, 1, 1)
        );
        assert_eq!(attack_run.shot_success, Rate::new(1, 3));
        assert_eq!(attack_run.control, Control::Unguided);
        let bs = Weapon::of(t(BATTLESHIP), WeaponSlot::Primary).unwrap();
        assert!(bs.armour_piercing);
        assert_eq!(bs.reach_names(), ["water", "land", "space"]);
        assert!(Weapon::of(t(BATTLESHIP), WeaponSlot::Secondary).is_none());
        assert!(
            !Weapon::of(t(TANK), WeaponSlot::Primary)
                .unwrap()
                .armour_piercing
        );
        assert!(Weapon::of(t(14), WeaponSlot::Primary).is_none());
        // Indirect fire (Mobile Artillery, attackCounterable false) cannot be countered.
        assert!(
            !Weapon::of(t(MOBILE_ARTILLERY), WeaponSlot::Primary)
                .unwrap()
                .counterable
        );
        assert!(
            Weapon::of(t(TANK), WeaponSlot::Primary)
                .unwrap()
                .counterable
        );
        // The Command Ship's weapon reaches wherever it is.
        let cmd = Weapon::of(t(1), WeaponSlot::Primary).unwrap();
        assert_eq!(cmd.reach, REACH_LOCAL);
        for a in Ambit::ALL {
            assert!(cmd.reaches(a, a));
        }
        assert!(!cmd.reaches(Ambit::Space, Ambit::Land));
        let s = Stats::of(t(CRUISER));
        assert_eq!(s.unit_defenses, "signalJamming");
        assert_eq!(s.guided_defense, Rate::new(2, 3));
        assert_eq!(s.unguided_defense, Rate::new(0, 0));
        assert_eq!(Stats::of(t(TANK)).attack_reduction, 1);
        assert!(Stats::of(t(SUBMERSIBLE)).stealth);
        assert!(Stats::of(t(20)).planetary && !Stats::of(t(TANK)).planetary);
    }

    #[test]
    fn reach_and_stealth() {
        let tank = unit("5-1", TANK, Ambit::Land);
        let fighter = unit("5-2", STARFIGHTER, Ambit::Space);
        let e = check_reach(&tank, WeaponSlot::Primary, &fighter).unwrap_err();
        assert!(e.contains("reaches land") && e.contains("not space"), "{e}");
        let e = check_reach(&tank, WeaponSlot::Secondary, &fighter).unwrap_err();
        assert!(e.contains("no secondary weapon"), "{e}");
        assert!(check_reach(&fighter, WeaponSlot::Primary, &fighter).is_ok());
        // A stealthed Submersible (water) is reachable by a Battleship's primary
        // (water) only from water, which a Battleship never is.
        let sub = unit("5-3", SUBMERSIBLE, Ambit::Water);
        let bs = unit("5-4", BATTLESHIP, Ambit::Space);
        let e = check_reach(&bs, WeaponSlot::Primary, &sub).unwrap_err();
        assert!(e.contains("stealthed"), "{e}");
        let cruiser = unit("5-5", CRUISER, Ambit::Water);
        assert!(check_reach(&cruiser, WeaponSlot::Primary, &sub).is_ok());
        // The Command Ship hits whatever shares its ambit.
        let cmd = unit("5-6", 1, Ambit::Land);
        assert!(check_reach(&cmd, WeaponSlot::Primary, &tank).is_ok());
        let e = check_reach(&cmd, WeaponSlot::Primary, &fighter).unwrap_err();
        assert!(e.contains("reaches land, not space"), "{e}");
    }

    #[test]
    fn attack_run_three_shots_one_guaranteed() {
        // Starfighter secondary at a Frigate: shot 0 is guaranteed, shots 1 and 2 roll
        // 1/3 each. Frigate has no evasion and no armour.
        let a = attack(
            unit("5-1", STARFIGHTER, Ambit::Space),
            WeaponSlot::Secondary,
            unit("5-2", FRIGATE, Ambit::Space),
        );
        let o = resolve_with(&a, &mut Fixed(vec![false, true], false));
        let shots: Vec<(bool, bool, bool)> = o
            .volley
            .shots
            .iter()
            .map(|s| (s.guaranteed, s.rolled, s.hit))
            .collect();
        assert_eq!(
            shots,
            [
                (true, false, true),
                (false, true, false),
                (false, true, true)
            ]
        );
        assert_eq!((o.volley.raw_damage, o.volley.damage), (2, 2));
        assert_eq!(o.damage_to_target, 2);
        assert_eq!(o.rolls, 2, "the guaranteed shot is not rolled");
        // All rolls miss: the guaranteed shot still lands 1.
        let o = resolve_with(&a, &mut Fixed(vec![], false));
        assert_eq!((o.volley.hits, o.damage_to_target), (1, 1));
        // Exactly: 1 + 2 × 1/3 damage.
        let e = expected(&a);
        assert!((e.damage_to_target - 5.0 / 3.0).abs() < 1e-12, "{e:?}");
        // All three hit 1 time in 9 and destroy the Frigate (3 health); otherwise its
        // counter (same ambit, 1) lands.
        assert!((e.target_destroyed - 1.0 / 9.0).abs() < 1e-12);
        assert!((e.damage_to_attacker - 8.0 / 9.0).abs() < 1e-12);
    }

    #[test]
    fn armour_takes_one_except_from_armour_piercing() {
        // Mobile Artillery (unguided, 2) at a Tank: 2 - 1 = 1.
        let a = attack(
            unit("5-1", MOBILE_ARTILLERY, Ambit::Land),
            WeaponSlot::Primary,
            unit("5-2", TANK, Ambit::Land),
        );
        let o = resolve_with(&a, &mut Fixed(vec![], true));
        assert_eq!(
            (
                o.volley.raw_damage,
                o.volley.reduction,
                o.volley.reduction_applied,
                o.volley.damage
            ),
            (2, 1, 1, 1)
        );
        assert_eq!(health(&o, "5-2"), (3, 2, false));
        // The Battleship's armour-piercing primary deals the full 2.
        let a = attack(
            unit("5-3", BATTLESHIP, Ambit::Space),
            WeaponSlot::Primary,
            unit("5-2", TANK, Ambit::Land),
        );
        let o = resolve_with(&a, &mut Fixed(vec![], true));
        assert!(o.volley.armour_piercing);
        assert_eq!((o.volley.reduction_applied, o.damage_to_target), (0, 2));
    }

    #[test]
    fn at_least_one_damage_when_any_shot_hits() {
        let mut target = unit("5-2", TANK, Ambit::Land);
        target.stats.attack_reduction = 5;
        let a = attack(
            unit("5-1", MOBILE_ARTILLERY, Ambit::Land),
            WeaponSlot::Primary,
            target,
        );
        let o = resolve_with(&a, &mut Fixed(vec![], true));
        assert_eq!((o.volley.damage, o.volley.reduction_applied), (1, 1));
        let o = resolve_with(&a, &mut Fixed(vec![], false));
        assert_eq!((o.volley.hits, o.volley.damage), (0, 0));
    }

    #[test]
    fn signal_jamming_evades_guided_only() {
        // A SAM Launcher (guided, reaches space and air) at a Pursuit Fighter (air,
        // signalJamming: evades guided fire 2 times in 3).
        let a = attack(
            unit("5-1", SAM, Ambit::Land),
            WeaponSlot::Primary,
            unit("5-2", PURSUIT, Ambit::Air),
        );
        let o = resolve_with(&a, &mut Fixed(vec![true], true));
        assert!(o.evasion.evaded && o.evasion.unit_rolled);
        assert_eq!(o.evasion.by.as_deref(), Some("signalJamming"));
        assert!(!o.volley.fired && o.damage_to_target == 0);
        // Pursuit Fighter reaches air only: no counter on a land attacker.
        assert!(o.counters.is_empty());
        let e = expected(&a);
        assert!((e.evaded - 2.0 / 3.0).abs() < 1e-12);
        assert!((e.damage_to_target - 2.0 / 3.0).abs() < 1e-12, "{e:?}");
        // Unguided fire (Cruiser secondary reaches air) is not evaded.
        let a = attack(
            unit("5-3", CRUISER, Ambit::Water),
            WeaponSlot::Secondary,
            unit("5-2", PURSUIT, Ambit::Air),
        );
        let o = resolve_with(&a, &mut Fixed(vec![], true));
        assert!(!o.evasion.unit_rolled && !o.evasion.evaded);
        assert_eq!(o.damage_to_target, 2);
        // Defensive Maneuver evades unguided only.
        let a = attack(
            unit("5-3", CRUISER, Ambit::Water),
            WeaponSlot::Secondary,
            unit("5-4", HIGH_ALT, Ambit::Air),
        );
        assert!((expected(&a).evaded - 2.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn interceptors_evade_guided_fire_at_planetary_structs() {
        let mut a = attack(
            unit("5-1", 1, Ambit::Land),
            WeaponSlot::Primary,
            unit("5-2", 14, Ambit::Land),
        );
        a.planet = Some(PlanetDefenses {
            cannon_damage: 0,
            interceptors: 2,
        });
        assert_eq!(
            a.planet.unwrap().interceptor_rate(),
            Rate::new(5, 9),
            "1 - (2/3)^2"
        );
        let o = resolve_with(&a, &mut Fixed(vec![true], true));
        assert_eq!(o.evasion.by.as_deref(), Some(INTERCEPTOR_NETWORK));
        assert!(!o.evasion.unit_rolled && o.evasion.interceptor_rolled);
        assert!((expected(&a).evaded - 5.0 / 9.0).abs() < 1e-12);
    }

    #[test]
    fn counters_same_and_different_ambit() {
        // A Destroyer (water; counters 2 in the same ambit, 1 across) defends a
        // Cruiser, first against a Submersible (water), then against a Stealth Bomber
        // (air, reaches land and water).
        let target = unit("5-2", CRUISER, Ambit::Water);
        let destroyer = unit("5-3", DESTROYER, Ambit::Water);
        let mut a = attack(
            unit("5-1", SUBMERSIBLE, Ambit::Water),
            WeaponSlot::Primary,
            target.clone(),
        );
        a.defenders = vec![destroyer.clone()];
        let o = resolve_with(&a, &mut Fixed(vec![false], true));
        let c = &o.counters[0];
        assert_eq!(
            (c.role, c.same_ambit, c.damage),
            (CounterRole::Defender, true, 2)
        );
        let mut a = attack(unit("5-1", 6, Ambit::Air), WeaponSlot::Primary, target);
        a.defenders = vec![destroyer];
        let o = resolve_with(&a, &mut Fixed(vec![false], true));
        let c = &o.counters[0];
        assert_eq!((c.same_ambit, c.damage), (false, 1));
    }

    #[test]
    fn a_counter_that_destroys_the_attacker_voids_its_volley() {
        let mut attacker = unit("5-1", SUBMERSIBLE, Ambit::Water);
        attacker.health = 2;
        let mut a = attack(
            attacker,
            WeaponSlot::Primary,
            unit("5-2", CRUISER, Ambit::Water),
        );
        a.defenders = vec![unit("5-3", DESTROYER, Ambit::Water)];
        // The Cruiser's signal jamming does not evade; the Destroyer counters for 2.
        let o = resolve_with(&a, &mut Fixed(vec![false], true));
        assert!(o.counters[0].attacker_destroyed);
        assert!(!o.volley.fired && !o.blocking.blocked);
        assert!(
            o.volley
                .not_fired_because
                .as_deref()
                .unwrap()
                .contains("destroyed")
        );
        assert_eq!(o.damage_to_target, 0);
        assert_eq!(health(&o, "5-1"), (2, 0, true));
        assert_eq!(health(&o, "5-2"), (3, 3, false));
        assert!(!o.recoil.applied);
    }

    #[test]
    fn blocking_only_from_the_targets_ambit() {
        // A Tank attacks a Tank defended by a Mobile Artillery (land, same ambit as the
        // target): the artillery blocks and takes the volley.
        let mut a = attack(
            unit("5-1", TANK, Ambit::Land),
            WeaponSlot::Primary,
            unit("5-2", TANK, Ambit::Land),
        );
        a.defenders = vec![unit("5-3", MOBILE_ARTILLERY, Ambit::Land)];
        let o = resolve_with(&a, &mut Fixed(vec![], true));
        assert!(o.blocking.blocked);
        assert_eq!(o.blocking.by.as_deref(), Some("5-3"));
        assert_eq!(o.volley.at.as_deref(), Some("5-3"));
        assert_eq!((o.damage_to_target, o.damage_to_blocker), (0, 2));
        assert_eq!(health(&o, "5-3"), (3, 1, false));
        // The target still counters after the volley (land vs land: 1).
        assert_eq!(o.counters.last().unwrap().role, CounterRole::Target);
        // A cross-ambit defender (a Battleship in space, which reaches land) counters
        // but cannot block.
        let mut a = attack(
            unit("5-1", TANK, Ambit::Land),
            WeaponSlot::Primary,
            unit("5-2", TANK, Ambit::Land),
        );
        a.defenders = vec![unit("5-4", BATTLESHIP, Ambit::Space)];
        let o = resolve_with(&a, &mut Fixed(vec![], true));
        assert!(!o.blocking.blocked);
        assert_eq!(o.counters[0].by, "5-4");
        assert_eq!(o.counters[0].damage, 1);
        assert_eq!(o.damage_to_target, 1);
        // An offline same-ambit defender neither counters nor blocks.
        let mut off = unit("5-3", MOBILE_ARTILLERY, Ambit::Land);
        off.ready = false;
        a.defenders = vec![off];
        let o = resolve_with(&a, &mut Fixed(vec![], true));
        assert!(!o.blocking.blocked && o.counters.len() == 1);
    }

    #[test]
    fn recoil_only_when_the_attacker_survives() {
        let mut attacker = unit("5-1", TANK, Ambit::Land);
        attacker
            .stats
            .weapon_mut(WeaponSlot::Primary)
            .unwrap()
            .recoil_damage = 1;
        let a = attack(
            attacker.clone(),
            WeaponSlot::Primary,
            unit("5-2", TANK, Ambit::Land),
        );
        let o = resolve_with(&a, &mut Fixed(vec![], true));
        // Target counter 1, recoil 1.
        assert!(o.recoil.applied && o.recoil.damage == 1);
        assert_eq!(health(&o, "5-1"), (3, 1, false));
        assert_eq!(o.damage_to_attacker, 2);
        // At 1 health the counter destroys it: no recoil.
        attacker.health = 1;
        let a = attack(
            attacker,
            WeaponSlot::Primary,
            unit("5-2", TANK, Ambit::Land),
        );
        let o = resolve_with(&a, &mut Fixed(vec![], true));
        assert!(!o.recoil.applied);
        assert!(o.attacker_destroyed());
    }

    #[test]
    fn cannons_fire_last_and_post_destruction_is_reported() {
        let mut target = unit("5-2", 14, Ambit::Land);
        target.health = 1;
        target.stats.post_destruction_damage = 1;
        let mut a = attack(unit("5-1", TANK, Ambit::Land), WeaponSlot::Primary, target);
        a.planet = Some(PlanetDefenses {
            cannon_damage: 1,
            interceptors: 3,
        });
        let o = resolve_with(&a, &mut Fixed(vec![], true));
        // Unguided: the interceptors do not roll.
        assert!(!o.evasion.interceptor_rolled);
        assert!(o.target_destroyed());
        assert_eq!(o.post_destruction[0].damage, 1);
        assert!(o.cannon.fired && o.cannon.damage == 1);
        assert_eq!(health(&o, "5-1"), (3, 1, false));
        assert_eq!(o.damage_to_attacker, 2);
    }

    #[test]
    fn the_same_block_and_nonce_give_the_same_outcome() {
        let mut a = attack(
            unit("5-1", STARFIGHTER, Ambit::Space),
            WeaponSlot::Secondary,
            unit("5-2", BATTLESHIP, Ambit::Space),
        );
        a.defenders = vec![unit("5-3", FRIGATE, Ambit::Space)];
        let run = |n| resolve(&a, &mut Dice::new(1000, "1-1", n));
        assert_eq!(run(5), run(5));
        let outcomes: Vec<Outcome> = (0..40).map(run).collect();
        assert!(
            outcomes.iter().any(|o| o != &outcomes[0]),
            "different nonces can differ"
        );
        let mut d = Dice::new(1000, "1-1", 5);
        let o = resolve(&a, &mut d);
        assert_eq!(d.nonce(), 5 + o.rolls);
    }

    #[test]
    fn no_health_goes_below_zero_or_above_max() {
        // Every pairing of fleet types that can reach, with every defender type, at
        // several healths and nonces.
        let ambit = |id: u8| t(id).ambits()[0];
        let mut checked = 0;
        for att in 1..=13u8 {
            for tgt in 1..=22u8 {
                for slot in [WeaponSlot::Primary, WeaponSlot::Secondary] {
                    let mut attacker = unit("5-1", att, ambit(tgt));
                    if !t(att).ambits().contains(&attacker.ambit) {
                        attacker.ambit = ambit(att);
                    }
                    let target = unit("5-2", tgt, ambit(tgt));
                    if check_reach(&attacker, slot, &target).is_err() {
                        continue;
                    }
                    for hp in 1..=3 {
                        let mut a = attack(attacker.clone(), slot, target.clone());
                        a.attacker.health = hp;
                        a.target.health = hp;
                        a.defenders = (1..=13u8)
                            .step_by(3)
                            .map(|d| unit(&format!("5-{}", 10 + d), d, ambit(d)))
                            .collect();
                        a.planet = (!t(tgt).is_fleet()).then_some(PlanetDefenses {
                            cannon_damage: 2,
                            interceptors: 1,
                        });
                        for n in 0..4 {
                            let o = resolve(&a, &mut Dice::new(9, "1-1", n));
                            for u in &o.units {
                                assert!(u.health_after <= u.health_before);
                                assert!(u.health_before <= u.max_health);
                                assert_eq!(u.destroyed, u.health_after == 0);
                            }
                            checked += 1;
                        }
                        let e = expected(&a);
                        assert!(e.damage_to_target <= f64::from(hp) + 1e-9);
                        assert!(e.damage_to_attacker <= f64::from(hp) + 1e-9);
                        for p in [e.target_destroyed, e.attacker_destroyed, e.evaded] {
                            assert!((-1e-9..=1.0 + 1e-9).contains(&p));
                        }
                    }
                }
            }
        }
        assert!(checked > 500, "{checked}");
    }

    #[test]
    fn expectation_matches_sampling() {
        let mut a = attack(
            unit("5-1", STARFIGHTER, Ambit::Space),
            WeaponSlot::Secondary,
            unit("5-2", BATTLESHIP, Ambit::Space),
        );
        a.defenders = vec![unit("5-3", FRIGATE, Ambit::Space)];
        let e = expected(&a);
        let n = 3000;
        let mut total = 0u32;
        let mut d = Dice::new(77, "1-4", 0);
        for _ in 0..n {
            let o = resolve(&a, &mut d);
            total += o.damage_to_target + o.damage_to_blocker;
        }
        let sampled = f64::from(total) / f64::from(n);
        let exact = e.damage_to_target + e.damage_to_blocker;
        assert!((sampled - exact).abs() < 0.08, "{sampled} vs {exact}");
    }
}
