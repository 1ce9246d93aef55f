//! The combat rules' tests: weapons from the struct types, each step of the sequence,
//! and the expectation against sampling.

use super::*;
use crate::entity::struct_types::{Ambit, StructType, struct_type};
use crate::game::{Dice, Rate, Roller};

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
