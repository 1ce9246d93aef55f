//! One attack resolved step by step, in the chain's order, by whatever roller it is
//! given: the dice for a real attack, a script for the expectation.

use super::outcome::*;
use super::units::*;
use super::{INTERCEPTOR_NETWORK, MIN_DAMAGE_WHEN_HIT};
use crate::game::{Dice, Rate, Roller};

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

    /// Resolves the attack: the reach check, then evasion, the defenders' counters,
    /// the block, the volley, the target's counter, recoil and the planet's cannons.
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
        let mut out = unresolved(a, unit_rate);
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
        self.evade(weapon, unit_rate, roller, &mut out);

        // 2. Defender counters, each defender once, evaded or not.
        if weapon.counterable {
            self.defender_counters(&mut out);
        }

        // 3. The deferred block: the first ready defender in the target's ambit.
        let attacker_alive = self.alive(ATTACKER);
        let blocker = self.block(weapon, attacker_alive, &mut out);

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
            self.volley(weapon, blocker.unwrap_or(TARGET), roller, &mut out);
        }

        // 5. The target's counter, after the volley.
        self.target_counter(weapon, &mut out);

        // 6. Recoil, if the attacker survived.
        self.recoil(weapon, &mut out);

        // 7. The planet's cannons, last.
        self.cannons(weapon, &mut out);

        out.damage_to_attacker =
            self.unit(ATTACKER).health.min(attacker.stats.max_health) - self.health[ATTACKER];
        out.post_destruction = std::mem::take(&mut self.post);
        out.units = self.reports();
        out
    }

    /// Rolls the target's unit defense, then (for a guided weapon not yet evaded) the
    /// planet's interceptor network.
    fn evade<R: Roller>(
        &self,
        weapon: &Weapon,
        unit_rate: Rate,
        roller: &mut R,
        out: &mut Outcome,
    ) {
        let a = self.attack;
        if !unit_rate.is_never() {
            out.evasion.unit_rolled = true;
            if roller.roll(unit_rate) {
                out.evasion.evaded = true;
                out.evasion.by = Some(a.target.stats.unit_defenses.clone());
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
    }

    /// Each defender that is ready, alive and can reach the attacker counters once,
    /// until the attacker is destroyed.
    fn defender_counters(&mut self, out: &mut Outcome) {
        let attacker = &self.attack.attacker;
        let mut seen: Vec<&str> = Vec::new();
        for d in 2..self.health.len() {
            let unit = self.unit(d);
            if seen.contains(&unit.id.as_str()) {
                continue;
            }
            seen.push(&unit.id);
            if !self.alive(ATTACKER) {
                break;
            }
            if !unit.ready || !self.alive(d) || !unit.stats.can_reach(unit.ambit, attacker.ambit) {
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

    /// The defender that blocks the volley, if any, with why it does or none does.
    fn block(&mut self, weapon: &Weapon, attacker_alive: bool, out: &mut Outcome) -> Option<usize> {
        let target = &self.attack.target;
        let blocker = (2..self.health.len()).find(|&d| {
            let u = self.unit(d);
            u.ready && self.alive(d) && u.ambit == target.ambit && u.id != target.id
        });
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
        blocker
    }

    /// Fires the volley at the receiver: each shot rolled (past the guaranteed ones),
    /// the hits' damage reduced by its armour, then dealt.
    fn volley<R: Roller>(
        &mut self,
        weapon: &Weapon,
        receiver: usize,
        roller: &mut R,
        out: &mut Outcome,
    ) {
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

    /// The target counters once, if it and the attacker survived and it can reach.
    fn target_counter(&mut self, weapon: &Weapon, out: &mut Outcome) {
        let (attacker, target) = (&self.attack.attacker, &self.attack.target);
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
    }

    /// The weapon's recoil, dealt to the attacker if it survived.
    fn recoil(&mut self, weapon: &Weapon, out: &mut Outcome) {
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
    }

    /// The planet's cannons, fired at a surviving attacker whose weapon can be countered.
    fn cannons(&mut self, weapon: &Weapon, out: &mut Outcome) {
        if let Some(planet) = self.attack.planet {
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

/// The outcome before anything happens: nothing evaded, blocked, fired or dealt.
fn unresolved(a: &Attack, unit_rate: Rate) -> Outcome {
    let (attacker, target) = (&a.attacker, &a.target);
    Outcome {
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
    }
}
