//! Attacks and defense: an attack is resolved by the game's combat rules
//! ([`crate::game::combat`]) on the units the world makes of the structs involved; a
//! defender protects a co-located struct.

use serde_json::{Value, json};

use super::{At, Change, Decided, Planned, Reqs, pid, planet_id, sid, type_u64};
use crate::chain::WeaponChoice;
use crate::entity::EntityId;
use crate::game::Dice;
use crate::game::combat::{self, PlanetDefenses, Unit, WeaponSlot};
use crate::source::sim::world::{Location, Struct, World};

/// Damage each online Planetary Defense Cannon deals an attacker of its planet's
/// structs. The struct types carry no cannon damage; the corpus gives the cannons' sum
/// (`planetary-defense-cannon-damage`) without a per-cannon figure, so one point each.
pub const DEFENSE_CANNON_DAMAGE: u32 = 1;

impl World {
    /// The planet where a struct is: its planet, or where its fleet is.
    fn whereabouts(&self, s: &Struct) -> Option<u64> {
        match s.location {
            Location::Planet(p) => Some(p),
            Location::Fleet(f) => {
                let f = &self.fleets[(f - 1) as usize];
                f.planet.or(f.away_at)
            }
        }
    }

    /// The struct as a combat unit, at its current health and readiness.
    fn unit(&self, index: u64) -> Unit {
        let s = &self.structs[(index - 1) as usize];
        let mut u = Unit::new(&sid(index).to_string(), s.kind(), s.ambit);
        u.health = s.health;
        u.ready = s.online && !s.destroyed && self.player_online(s.owner);
        u
    }

    /// The attack as the combat rules see it: the target's ready, co-located defenders,
    /// and the planet's cannons and interceptors when the target is a planetary struct
    /// on its owner's planet.
    fn engagement(&self, strct: u64, target: u64, weapon: WeaponSlot) -> combat::Attack {
        let t = &self.structs[(target - 1) as usize];
        let defenders = self
            .structs
            .iter()
            .enumerate()
            .filter(|(i, d)| {
                d.defending == Some(target)
                    && *i as u64 + 1 != strct
                    && !d.destroyed
                    && d.location == t.location
            })
            .map(|(i, _)| self.unit(i as u64 + 1))
            .filter(|u| u.ready)
            .collect();
        let planet = match t.location {
            Location::Planet(p) if self.planets[(p - 1) as usize].owner == t.owner => {
                let on = |type_id: u8| {
                    self.planets[(p - 1) as usize]
                        .slots
                        .iter()
                        .flatten()
                        .flatten()
                        .filter(|s| {
                            let s = &self.structs[(**s - 1) as usize];
                            s.type_id == type_id && s.online
                        })
                        .count() as u32
                };
                Some(PlanetDefenses {
                    cannon_damage: on(19) * DEFENSE_CANNON_DAMAGE,
                    interceptors: on(17),
                })
            }
            _ => None,
        };
        combat::Attack {
            attacker: self.unit(strct),
            weapon,
            target: self.unit(target),
            defenders,
            planet,
        }
    }

    /// The requirements of an attack: a weapon that is charged and reaches a live
    /// target in the same place.
    pub(super) fn plan_attack(
        &self,
        at: At,
        strct: u64,
        targets: &[u64],
        weapon: WeaponChoice,
        reqs: &mut Reqs,
    ) -> Planned {
        let At { height, assume, .. } = at;
        let Some((s, actor)) = self.open_struct(at, strct, reqs) else {
            return (None, None);
        };
        let slot = match weapon {
            WeaponChoice::Primary => WeaponSlot::Primary,
            WeaponChoice::Secondary => WeaponSlot::Secondary,
        };
        let Some(w) = combat::Weapon::of(s.kind(), slot) else {
            reqs.need(
                "hasWeapon",
                false,
                format!(
                    "{} is {} {} and has no {} weapon",
                    sid(strct),
                    crate::entity::struct_types::article(&s.kind().name),
                    s.kind().name,
                    weapon.name()
                ),
            );
            return (actor, None);
        };
        reqs.need(
            "structOnline",
            s.built && s.online,
            format!("{} is {}", sid(strct), s.status()),
        );
        self.check_online(s.owner, assume, reqs);
        self.check_charge(s.owner, w.charge, height, assume, reqs);
        let target = targets[0];
        let Some(t) = self.check_target(strct, s, target, reqs) else {
            return (actor, None);
        };
        let reach = combat::check_reach(&self.unit(strct), slot, &self.unit(target));
        reqs.need(
            "weaponReachesTarget",
            reach.is_ok(),
            match &reach {
                Ok(()) => format!("the {} weapon reaches {}", weapon.name(), t.ambit.name()),
                Err(e) => e.clone(),
            },
        );
        if targets.len() > w.targets.max(1) as usize {
            reqs.need(
                "targetCount",
                false,
                format!(
                    "the {} weapon engages {} target(s); {} were given",
                    weapon.name(),
                    w.targets.max(1),
                    targets.len()
                ),
            );
        }
        (
            actor,
            Some(Decided::Attack {
                strct,
                target,
                weapon: slot,
            }),
        )
    }

    /// The requirements of an attack's target: one that exists, is built and not
    /// destroyed, is not the attacker `s` itself, and stands where it stands.
    fn check_target(
        &self,
        strct: u64,
        s: &Struct,
        target: u64,
        reqs: &mut Reqs,
    ) -> Option<&Struct> {
        let Some(t) = self.struct_at(target) else {
            reqs.need(
                "validTarget",
                false,
                format!("{} does not exist", sid(target)),
            );
            return None;
        };
        let valid = !t.destroyed && t.built && target != strct;
        reqs.need(
            "validTarget",
            valid,
            if t.destroyed {
                format!("destroyed: {} was already destroyed", sid(target))
            } else if !t.built {
                format!("unbuilt: {} is still being built", sid(target))
            } else if target == strct {
                "a struct cannot attack itself".to_string()
            } else {
                format!("{} is a built {}", sid(target), t.kind().name)
            },
        );
        if !valid {
            return None;
        }
        let (here, there) = (self.whereabouts(s), self.whereabouts(t));
        reqs.need(
            "targetInRange",
            here.is_some() && here == there,
            match (here, there) {
                (Some(a), Some(b)) if a == b => format!("both are at {}", planet_id(a)),
                (a, b) => format!(
                    "out of range: {} is at {} and {} at {}; move the fleet to the target's planet",
                    sid(strct),
                    a.map_or("no planet".into(), |p| planet_id(p).to_string()),
                    sid(target),
                    b.map_or("no planet".into(), |p| planet_id(p).to_string()),
                ),
            },
        );
        Some(t)
    }

    /// The requirements of defending a struct: both alive and in the same place, the
    /// defender online and charged.
    pub(super) fn plan_defense_set(
        &self,
        at: At,
        defender: u64,
        protected: u64,
        reqs: &mut Reqs,
    ) -> Planned {
        let At { height, assume, .. } = at;
        let Some((d, actor)) = self.open_struct(at, defender, reqs) else {
            return (None, None);
        };
        let Some(p) = self.struct_at(protected) else {
            reqs.need(
                "structExists",
                false,
                format!("{} does not exist", sid(protected)),
            );
            return (actor, None);
        };
        reqs.need(
            "protectedAlive",
            !p.destroyed,
            format!("{} is {}", sid(protected), p.status()),
        );
        reqs.need(
            "notSelf",
            defender != protected,
            "a struct cannot defend itself",
        );
        reqs.need(
            "coLocated",
            d.location == p.location,
            if d.location == p.location {
                "both are in the same place".to_string()
            } else {
                format!(
                    "wrong location: {} and {} are not in the same planet or fleet",
                    sid(defender),
                    sid(protected)
                )
            },
        );
        reqs.need(
            "defenderOnline",
            d.built && d.online,
            format!("{} is {}", sid(defender), d.status()),
        );
        self.check_charge(
            d.owner,
            type_u64(d.kind(), "defendChangeCharge"),
            height,
            assume,
            reqs,
        );
        (
            actor,
            Some(Decided::DefenseSet {
                defender,
                protected,
            }),
        )
    }

    /// The requirements of stopping a defense: that there is one, and the charge.
    pub(super) fn plan_defense_clear(&self, at: At, defender: u64, reqs: &mut Reqs) -> Planned {
        let At { height, assume, .. } = at;
        let Some((d, actor)) = self.open_struct(at, defender, reqs) else {
            return (None, None);
        };
        reqs.need(
            "isDefending",
            d.defending.is_some(),
            match d.defending {
                Some(p) => format!("{} defends {}", sid(defender), sid(p)),
                None => format!("{} defends nothing", sid(defender)),
            },
        );
        self.check_charge(
            d.owner,
            type_u64(d.kind(), "defendChangeCharge"),
            height,
            assume,
            reqs,
        );
        (actor, Some(Decided::DefenseClear { defender }))
    }

    /// Resolves the attack by the combat rules with the owner's dice, writes the
    /// health back and destroys what fell.
    pub(super) fn do_attack(
        &mut self,
        strct: u64,
        target: u64,
        weapon: WeaponSlot,
        height: u64,
        events: &mut Vec<Change>,
    ) -> Value {
        let attack = self.engagement(strct, target, weapon);
        let owner = self.structs[(strct - 1) as usize].owner;
        let nonce = self.players[(owner - 1) as usize].grid.nonce;
        let mut dice = Dice::new(height, &pid(owner).to_string(), nonce);
        let expected = combat::expected(&attack);
        let outcome = combat::resolve(&attack, &mut dice);
        self.players[(owner - 1) as usize].grid.nonce = dice.nonce();
        let charge = combat::Weapon::of(self.structs[(strct - 1) as usize].kind(), weapon)
            .map_or(0, |w| w.charge);
        if charge > 0 {
            self.players[(owner - 1) as usize].grid.last_action = height;
        }
        let mut changed = vec![sid(strct), sid(target), pid(owner)];
        let mut destroyed = Vec::new();
        for u in &outcome.units {
            let Ok(id) = EntityId::parse(&u.id) else {
                continue;
            };
            if u.health_after != u.health_before {
                if !changed.contains(&id) {
                    changed.push(id);
                }
                self.structs[(id.index - 1) as usize].health = u.health_after;
            }
            if u.destroyed {
                destroyed.push(id.index);
            }
        }
        let breakdown = serde_json::to_value(&outcome).unwrap_or_default();
        let target_after = self.structs[(target - 1) as usize].health;
        events.push(Change {
            category: "struct_attack",
            entity: sid(strct),
            changed,
            summary: format!(
                "{} attacked {} with its {} weapon: {} damage to the target, {} to the attacker",
                sid(strct),
                sid(target),
                weapon.name(),
                outcome.damage_to_target,
                outcome.damage_to_attacker
            ),
            detail: breakdown.clone(),
        });
        for d in destroyed {
            self.destroy(d, height, events);
            self.defeat_raid_if_command_ship(d, height, events);
        }
        json!({
            "attacker_id": sid(strct).to_string(),
            "target_id": sid(target).to_string(),
            "weapon": weapon.name(),
            "estimated_damage": (expected.damage_to_target * 1000.0).round() / 1000.0,
            "damage_to_target": outcome.damage_to_target,
            "damage_to_attacker": outcome.damage_to_attacker,
            "target_health_after": target_after,
            "target_destroyed": outcome.target_destroyed(),
            "attacker_health_after": self.structs[(strct - 1) as usize].health,
            "attacker_destroyed": outcome.attacker_destroyed(),
            "player_nonce_after": dice.nonce(),
            "breakdown": breakdown,
        })
    }

    /// Makes the defender protect the struct.
    pub(super) fn do_defense_set(
        &mut self,
        defender: u64,
        protected: u64,
        height: u64,
        events: &mut Vec<Change>,
    ) -> Value {
        let owner = self.structs[(defender - 1) as usize].owner;
        self.structs[(defender - 1) as usize].defending = Some(protected);
        self.charge_used(owner, defender, "defendChangeCharge", height);
        events.push(Change {
            category: "struct_defense_add",
            entity: sid(defender),
            changed: vec![sid(defender), sid(protected)],
            summary: format!("{} now defends {}", sid(defender), sid(protected)),
            detail: json!({"protected_struct_id": sid(protected).to_string()}),
        });
        json!({"defender_id": sid(defender).to_string(), "protected_struct_id": sid(protected).to_string()})
    }

    /// Ends the defender's protection.
    pub(super) fn do_defense_clear(
        &mut self,
        defender: u64,
        height: u64,
        events: &mut Vec<Change>,
    ) -> Value {
        let owner = self.structs[(defender - 1) as usize].owner;
        let was = self.structs[(defender - 1) as usize].defending.take();
        self.charge_used(owner, defender, "defendChangeCharge", height);
        let mut changed = vec![sid(defender)];
        changed.extend(was.map(sid));
        events.push(Change {
            category: "struct_defense_remove",
            entity: sid(defender),
            changed,
            summary: format!("{} stopped defending", sid(defender)),
            detail: json!({"was_protecting": was.map(|w| sid(w).to_string())}),
        });
        json!({"defender_id": sid(defender).to_string(), "cleared": true})
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::*;
    use super::super::*;
    use crate::chain::{Msg, WeaponChoice};
    use crate::game::combat;

    #[test]
    fn defense_needs_co_location_and_an_online_defender() {
        let mut w = ready();
        let fleet = w.players[0].fleet;
        let cmd = w.fleets[(fleet - 1) as usize].command_struct;
        let planet_struct = w.planets[(w.players[0].planet - 1) as usize]
            .slots
            .iter()
            .flatten()
            .flatten()
            .copied()
            .next()
            .unwrap();
        let msg = signed(
            &w,
            1,
            Msg::StructDefenseSet {
                defender: cmd,
                protected: planet_struct,
            },
        );
        assert!(missing(w.apply(&msg, H)).contains(&"coLocated"));
        let other = w
            .structs
            .iter()
            .position(|s| s.location == Location::Fleet(fleet) && s.type_id != 1);
        if let Some(o) = other {
            let o = o as u64 + 1;
            let msg = signed(
                &w,
                1,
                Msg::StructDefenseSet {
                    defender: cmd,
                    protected: o,
                },
            );
            w.apply(&msg, H).unwrap();
            assert_eq!(w.structs[(cmd - 1) as usize].defending, Some(o));
            let clear = signed(&w, 1, Msg::StructDefenseClear { defender: cmd });
            w.apply(&clear, H + 5).unwrap();
            assert_eq!(w.structs[(cmd - 1) as usize].defending, None);
        }
        assert!(w.check_integrity().is_empty());
    }

    /// A pair of players and structs where the first can fire its primary at the
    /// second, both players made ready.
    fn matchup(w: &mut World) -> (u64, u64, u64, u64) {
        let n = w.players.len() as u64;
        for a in 1..=n {
            for b in (1..=n).filter(|b| *b != a) {
                for (ai, s) in w.structs.iter().enumerate() {
                    if s.owner != a || !matches!(s.location, Location::Fleet(_)) || !s.built {
                        continue;
                    }
                    for (ti, t) in w.structs.iter().enumerate() {
                        if t.owner == b
                            && t.built
                            && combat::check_reach(
                                &w.unit(ai as u64 + 1),
                                WeaponSlot::Primary,
                                &w.unit(ti as u64 + 1),
                            )
                            .is_ok()
                        {
                            let (x, y) = (ai as u64 + 1, ti as u64 + 1);
                            make_ready(w, a);
                            make_ready(w, b);
                            let s = &mut w.structs[(x - 1) as usize];
                            if !s.online {
                                s.online = true;
                                let d = s.kind().passive_draw;
                                w.players[(a - 1) as usize].grid.structs_load += d;
                                make_ready(w, a);
                            }
                            return (a, x, b, y);
                        }
                    }
                }
            }
        }
        panic!("no matchup in the world");
    }

    #[test]
    fn attacks_resolve_with_the_combat_rules_and_change_the_world() {
        let mut w = ready();
        let (pa, cmd, pb, target) = matchup(&mut w);
        let target_planet = w.players[(pb - 1) as usize].planet;
        let attack = |w: &World| {
            signed(
                w,
                pa,
                Msg::StructAttack {
                    strct: cmd,
                    targets: vec![target],
                    weapon: WeaponChoice::Primary,
                },
            )
        };
        // Out of range until the fleet is at the target's planet (a fleet struct of
        // player 2 stays with its fleet at player 2's planet when on station).
        let r = missing(w.apply(&attack(&w), H));
        assert!(r.contains(&"targetInRange"), "{r:?}");
        let a_fleet = w.players[(pa - 1) as usize].fleet;
        let mv = signed(
            &w,
            pa,
            Msg::FleetMove {
                fleet: a_fleet,
                destination: target_planet,
            },
        );
        w.apply(&mv, H).unwrap();
        assert!(w.check_integrity().is_empty(), "{:?}", w.check_integrity());

        let before = w.clone();
        let nonce = w.players[(pa - 1) as usize].grid.nonce;
        let a = w.apply(&attack(&w), H + 10).unwrap();
        let breakdown = &a.result["breakdown"];
        assert!(
            breakdown["volley"].is_object() && breakdown["evasion"].is_object(),
            "{breakdown}"
        );
        let health = w.structs[(target - 1) as usize].health;
        assert_eq!(a.result["target_health_after"], health);
        assert_eq!(
            u64::from(before.structs[(target - 1) as usize].health - health),
            a.result["damage_to_target"].as_u64().unwrap()
        );
        let rolls = breakdown["rolls"].as_u64().unwrap();
        assert_eq!(
            w.players[(pa - 1) as usize].grid.nonce,
            nonce + rolls,
            "every roll advances the nonce"
        );
        assert_eq!(w.charge(pa, H + 10), 0, "an attack spends the charge");
        assert_eq!(a.events[0].category, "struct_attack");
        assert!(a.events[0].changed.contains(&sid(target)));
        // Deterministic: the same world, block and nonce give the same attack.
        let mut again = before.clone();
        let b = again.apply(&attack(&again), H + 10).unwrap();
        assert_eq!(a.result, b.result);
        // Right away there is not enough charge for another shot.
        assert!(missing(w.apply(&attack(&w), H + 10)).contains(&"sufficientCharge"));
        assert!(w.check_integrity().is_empty(), "{:?}", w.check_integrity());

        // Fight until the target falls: it is destroyed, leaves its slot, stops drawing.
        let mut h = H + 20;
        while !w.structs[(target - 1) as usize].destroyed {
            if w.structs[(cmd - 1) as usize].destroyed {
                return; // the defender won; the rules held all the same
            }
            let _ = w.apply(&attack(&w), h);
            h += 10;
            assert!(w.check_integrity().is_empty(), "{:?}", w.check_integrity());
            assert!(h < H + 10_000, "the fight never ends");
        }
        let t = &w.structs[(target - 1) as usize];
        assert_eq!((t.health, t.online), (0, false));
        let r = missing(w.apply(&attack(&w), h + 10));
        assert_eq!(
            r,
            vec!["validTarget"],
            "a destroyed struct cannot be attacked"
        );
    }

    #[test]
    fn attack_refusals() {
        let mut w = ready();
        let cmd = w.fleets[(w.players[0].fleet - 1) as usize].command_struct;
        // No secondary weapon on a command ship.
        let msg = signed(
            &w,
            1,
            Msg::StructAttack {
                strct: cmd,
                targets: vec![cmd],
                weapon: WeaponChoice::Secondary,
            },
        );
        assert_eq!(missing(w.apply(&msg, H)), vec!["hasWeapon"]);
        // Itself.
        let msg = signed(
            &w,
            1,
            Msg::StructAttack {
                strct: cmd,
                targets: vec![cmd],
                weapon: WeaponChoice::Primary,
            },
        );
        assert!(missing(w.apply(&msg, H)).contains(&"validTarget"));
        // An unbuilt target.
        let t = free_planet_type(&w, 2);
        let a = w
            .apply(
                &signed(
                    &w,
                    2,
                    Msg::StructBuildInitiate {
                        player: 2,
                        struct_type: t,
                        ambit: None,
                        slot: None,
                        location: None,
                    },
                ),
                H,
            )
            .unwrap();
        let unbuilt: u64 = a.result["struct_id"].as_str().unwrap()[2..]
            .parse()
            .unwrap();
        let msg = signed(
            &w,
            1,
            Msg::StructAttack {
                strct: cmd,
                targets: vec![unbuilt],
                weapon: WeaponChoice::Primary,
            },
        );
        let Err(c) = w.apply(&msg, H) else { panic!() };
        assert!(
            c.missing()[0].detail.starts_with("unbuilt"),
            "{:?}",
            c.missing()
        );
    }
}
