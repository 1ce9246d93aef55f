//! A scripted game: a seeded sequence of actions by every player of a world, applied
//! through the rules, with the world's invariants checked after each. The test suite
//! plays a short one; `benches/game.rs` plays 1,000 actions and prints how many the
//! rules apply per second (proof-of-work search excluded: proofs are found between
//! actions, outside the timed part).
//!
//! The script favours actions that can succeed (it builds what fits, completes builds
//! once their proof is cheap, mines with online extractors, attacks structs at the same
//! planet) but also tries some that the rules refuse; both count as actions.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::world::{Location, World};
use crate::chain::{Msg, Signed, Signer, WeaponChoice};
use crate::entity::struct_types::struct_types;
use crate::pow::{self, Action, Work};

/// What a scripted game did.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub attempted: u64,
    pub applied: u64,
    /// Applied actions by message type.
    pub applied_by_type: BTreeMap<&'static str, u64>,
    /// Refusals by the first missing requirement.
    pub refused_by: BTreeMap<&'static str, u64>,
    /// Time spent inside `World::apply` (checks and changes).
    pub apply_time: Duration,
    /// Time spent finding proofs (not part of the action rate).
    pub pow_time: Duration,
    /// Time spent checking invariants after every action.
    pub check_time: Duration,
    /// Invariant violations found (each with the action that preceded it).
    pub violations: Vec<String>,
    /// Events the applied actions produced.
    pub events: u64,
    pub final_height: u64,
    /// Every action with the height it was applied at, to replay elsewhere.
    pub log: Vec<(Signed, u64)>,
}

impl Report {
    /// Actions (applied or refused) per second of rules time.
    pub fn actions_per_second(&self) -> f64 {
        self.attempted as f64 / self.apply_time.as_secs_f64().max(1e-9)
    }
}

/// Gives every player what it needs to act: ample capacity, its fleet home, its command
/// ship online, full charge. (The generated world has offline players and away fleets;
/// a game script wants players who can play.)
pub fn prepare(w: &mut World) {
    for p in 1..=w.players.len() as u64 {
        let i = (p - 1) as usize;
        let (fleet, planet) = (w.players[i].fleet, w.players[i].planet);
        let f = &mut w.fleets[(fleet - 1) as usize];
        f.planet = Some(planet);
        f.away_at = None;
        let cmd = f.command_struct;
        if cmd != 0 {
            let c = &mut w.structs[(cmd - 1) as usize];
            let before = c.draw();
            c.built = true;
            c.online = true;
            let after = c.draw();
            w.players[i].grid.structs_load = w.players[i].grid.structs_load - before + after;
        }
        let g = &mut w.players[i].grid;
        g.capacity = g.load + g.structs_load + 200_000_000;
        g.last_action = 0;
    }
    for p in 1..=w.planets.len() as u64 {
        w.refresh_shield(p);
    }
}

/// The first age at which a work's difficulty is at most 3 (cheap to prove).
fn cheap_age(range: u64) -> u64 {
    let mut age = 2u64;
    while pow::difficulty(age, range) > 3 {
        age = age.saturating_mul(2);
        if age > 1 << 40 {
            break;
        }
    }
    let (mut lo, mut hi) = (age / 2, age);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if pow::difficulty(mid, range) <= 3 {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// A nonce for `work` at `height` (whose difficulty is cheap).
fn solve(work: &Work, range: u64, height: u64) -> String {
    let need = pow::difficulty(height.saturating_sub(work.block_start), range);
    let prefix = work.prefix();
    (0u64..)
        .find(|n| pow::achieved_difficulty(&pow::hash_hex(&format!("{prefix}{n}"))) >= need)
        .expect("a cheap difficulty is always reached")
        .to_string()
}

/// Plays `actions` seeded actions on `world` from `height`.
pub fn play(world: &mut World, mut height: u64, actions: u64, seed: u64) -> Report {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut report = Report::default();
    let players = world.players.len() as u64;
    for n in 0..actions {
        height += rng.random_range(1..=12);
        let p = rng.random_range(1..=players);
        let pow_start = Instant::now();
        let (msg, at) = pick(world, p, height, &mut rng);
        report.pow_time += pow_start.elapsed();
        height = height.max(at);
        let signed = Signed {
            msg,
            signer: Signer {
                creator: world.address_of(p).map(str::to_string),
                player: None,
            },
        };
        let name = signed.msg.type_name();
        let t = Instant::now();
        let outcome = world.apply(&signed, height);
        report.apply_time += t.elapsed();
        report.log.push((signed.clone(), height));
        report.attempted += 1;
        match outcome {
            Ok(a) => {
                report.applied += 1;
                report.events += a.events.len() as u64;
                *report.applied_by_type.entry(name).or_default() += 1;
            }
            Err(c) => {
                let first = c.missing().first().map_or("none", |r| r.requirement);
                *report.refused_by.entry(first).or_default() += 1;
            }
        }
        let t = Instant::now();
        let problems = world.check_integrity();
        report.check_time += t.elapsed();
        for pr in problems {
            report
                .violations
                .push(format!("after action {n} ({name}): {pr}"));
        }
    }
    report.final_height = height;
    report
}

/// The next action for player `p`, and the height it needs (later than `height` when a
/// proof must age to be cheap).
fn pick(w: &World, p: u64, height: u64, rng: &mut ChaCha8Rng) -> (Msg, u64) {
    let turn = Turn::new(w, p, height);
    let roll = rng.random_range(0..100);
    let unbuilt = turn.unbuilt();
    if roll < 20 || (roll < 30 && unbuilt.is_empty()) {
        return turn.build_initiate(rng);
    }
    if roll < 30 {
        return turn.build_complete(rng, &unbuilt);
    }
    if roll < 45
        && let Some(action) = turn.work_ore(rng)
    {
        return action;
    }
    if roll < 65 {
        return turn.attack_or_move(rng);
    }
    if roll < 75
        && let Some(action) = turn.raid_or_return()
    {
        return action;
    }
    if roll < 85 && !turn.mine.is_empty() {
        return turn.toggle(rng);
    }
    if roll < 95 && turn.mine.len() >= 2 {
        return turn.defend(rng);
    }
    (Msg::PlanetExplore { player: p }, height)
}

/// One of `v`, drawn at random.
fn pick_of(rng: &mut ChaCha8Rng, v: &[u64]) -> u64 {
    v[rng.random_range(0..v.len())]
}

/// A player's turn in a scripted game: the world, the player, the height and the
/// player's live structs, from which [`pick`] chooses an action.
struct Turn<'a> {
    w: &'a World,
    p: u64,
    height: u64,
    /// The player's live structs, by index.
    mine: Vec<u64>,
}

impl<'a> Turn<'a> {
    /// Player `p`'s turn at `height`.
    fn new(w: &'a World, p: u64, height: u64) -> Turn<'a> {
        let mine = w
            .structs
            .iter()
            .enumerate()
            .filter(|(_, s)| s.owner == p && !s.destroyed)
            .map(|(i, _)| i as u64 + 1)
            .collect();
        Turn { w, p, height, mine }
    }

    /// A nonce for the work and the height at which it is cheap to prove (never before
    /// this turn's height).
    fn proof_for(
        &self,
        action: Action,
        id: String,
        planet: Option<String>,
        start: u64,
        range: u64,
    ) -> (String, u64) {
        let at = self.height.max(start + cheap_age(range));
        let work = Work {
            action,
            entity_id: id,
            planet_id: planet,
            block_start: start,
        };
        (solve(&work, range, at), at)
    }

    /// The player's structs still being built.
    fn unbuilt(&self) -> Vec<u64> {
        self.mine
            .iter()
            .copied()
            .filter(|s| !self.w.structs[(*s - 1) as usize].built)
            .collect()
    }

    /// Starts building a struct of a random type.
    fn build_initiate(&self, rng: &mut ChaCha8Rng) -> (Msg, u64) {
        let t = &struct_types()[rng.random_range(0..struct_types().len())];
        (
            Msg::StructBuildInitiate {
                player: self.p,
                struct_type: t.id,
                ambit: None,
                slot: None,
                location: None,
            },
            self.height,
        )
    }

    /// Completes one of the `unbuilt` structs, once its proof is cheap.
    fn build_complete(&self, rng: &mut ChaCha8Rng, unbuilt: &[u64]) -> (Msg, u64) {
        let s = pick_of(rng, unbuilt);
        let st = &self.w.structs[(s - 1) as usize];
        let (nonce, at) = self.proof_for(
            Action::StructBuild,
            format!("5-{s}"),
            None,
            st.block_start_build,
            st.kind().build_difficulty,
        );
        (
            Msg::StructBuildComplete {
                strct: s,
                nonce,
                proof: None,
            },
            at,
        )
    }

    /// Mines or refines with an online struct that can; `None` when none can.
    fn work_ore(&self, rng: &mut ChaCha8Rng) -> Option<(Msg, u64)> {
        let workers: Vec<u64> = self
            .mine
            .iter()
            .copied()
            .filter(|s| {
                let st = &self.w.structs[(*s - 1) as usize];
                st.online && (st.block_start_ore_mine != 0 || st.block_start_ore_refine != 0)
            })
            .collect();
        if workers.is_empty() {
            return None;
        }
        let s = pick_of(rng, &workers);
        let st = &self.w.structs[(s - 1) as usize];
        let t = st.kind();
        if st.block_start_ore_mine != 0 {
            let range = t.raw["oreMiningDifficulty"].as_u64().unwrap_or(0);
            let (nonce, at) = self.proof_for(
                Action::OreMine,
                format!("5-{s}"),
                None,
                st.block_start_ore_mine,
                range,
            );
            return Some((
                Msg::StructOreMinerComplete {
                    strct: s,
                    nonce,
                    proof: None,
                },
                at,
            ));
        }
        let range = t.raw["oreRefiningDifficulty"].as_u64().unwrap_or(0);
        let (nonce, at) = self.proof_for(
            Action::OreRefine,
            format!("5-{s}"),
            None,
            st.block_start_ore_refine,
            range,
        );
        Some((
            Msg::StructOreRefineryComplete {
                strct: s,
                nonce,
                proof: None,
            },
            at,
        ))
    }

    /// Attacks something at the same planet; moves the fleet to a random planet when
    /// nothing is, or the player has nothing armed.
    fn attack_or_move(&self, rng: &mut ChaCha8Rng) -> (Msg, u64) {
        let w = self.w;
        let fleet = w.players[(self.p - 1) as usize].fleet;
        let armed: Vec<u64> = self
            .mine
            .iter()
            .copied()
            .filter(|s| {
                let st = &w.structs[(*s - 1) as usize];
                st.online && matches!(st.location, Location::Fleet(_))
            })
            .collect();
        let targets = self.targets_at_fleet(fleet);
        if !armed.is_empty() && !targets.is_empty() {
            let weapon = if rng.random_bool(0.8) {
                WeaponChoice::Primary
            } else {
                WeaponChoice::Secondary
            };
            return (
                Msg::StructAttack {
                    strct: pick_of(rng, &armed),
                    targets: vec![pick_of(rng, &targets)],
                    weapon,
                },
                self.height,
            );
        }
        let planets = w.planets.len() as u64;
        let destination = rng.random_range(1..=planets);
        (Msg::FleetMove { fleet, destination }, self.height)
    }

    /// Other players' built, live structs at the planet where `fleet` is (on a planet
    /// or in a fleet there); none when the fleet is in transit.
    fn targets_at_fleet(&self, fleet: u64) -> Vec<u64> {
        let w = self.w;
        let here = {
            let f = &w.fleets[(fleet - 1) as usize];
            f.planet.or(f.away_at)
        };
        w.structs
            .iter()
            .enumerate()
            .filter(|(_, t)| {
                t.owner != self.p
                    && t.built
                    && !t.destroyed
                    && here.is_some()
                    && match t.location {
                        Location::Planet(pl) => Some(pl) == here,
                        Location::Fleet(f) => {
                            let f = &w.fleets[(f - 1) as usize];
                            f.planet.or(f.away_at) == here
                        }
                    }
            })
            .map(|(i, _)| i as u64 + 1)
            .collect()
    }

    /// For a fleet away at a planet: completes a raid there when one has started, or
    /// else sends the fleet home. `None` when the fleet is not away.
    fn raid_or_return(&self) -> Option<(Msg, u64)> {
        let w = self.w;
        let fleet = w.players[(self.p - 1) as usize].fleet;
        let at = w.fleets[(fleet - 1) as usize].away_at?;
        let planet = &w.planets[(at - 1) as usize];
        if planet.block_start_raid != 0 {
            let (nonce, when) = self.proof_for(
                Action::PlanetRaid,
                format!("9-{fleet}"),
                Some(format!("2-{at}")),
                planet.block_start_raid,
                planet.planetary_shield,
            );
            return Some((
                Msg::PlanetRaidComplete {
                    fleet,
                    planet: Some(at),
                    nonce,
                    proof: None,
                },
                when,
            ));
        }
        let home = w.players[(self.p - 1) as usize].planet;
        Some((
            Msg::FleetMove {
                fleet,
                destination: home,
            },
            self.height,
        ))
    }

    /// Takes one of the player's structs offline when it is online, online otherwise.
    fn toggle(&self, rng: &mut ChaCha8Rng) -> (Msg, u64) {
        let s = pick_of(rng, &self.mine);
        let st = &self.w.structs[(s - 1) as usize];
        let msg = if st.online {
            Msg::StructDeactivate { strct: s }
        } else {
            Msg::StructActivate { strct: s }
        };
        (msg, self.height)
    }

    /// Sets one of the player's structs to defend another (possibly itself).
    fn defend(&self, rng: &mut ChaCha8Rng) -> (Msg, u64) {
        let (a, b) = (pick_of(rng, &self.mine), pick_of(rng, &self.mine));
        (
            Msg::StructDefenseSet {
                defender: a,
                protected: b,
            },
            self.height,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::world::WorldConfig;
    use super::*;

    #[test]
    fn a_scripted_game_keeps_the_world_whole() {
        let mut w = World::generate(WorldConfig::demo());
        prepare(&mut w);
        assert!(w.check_integrity().is_empty());
        let r = play(&mut w, WorldConfig::DEFAULT_HEIGHT, 400, 7);
        assert_eq!(r.violations, Vec::<String>::new());
        assert_eq!(r.attempted, 400);
        // The script reaches the game's main actions, not only refusals.
        for t in [
            "MsgStructBuildInitiate",
            "MsgStructBuildComplete",
            "MsgStructAttack",
            "MsgFleetMove",
        ] {
            assert!(
                r.applied_by_type.get(t).copied().unwrap_or(0) > 0,
                "{t} never applied: {:?} refused {:?}",
                r.applied_by_type,
                r.refused_by
            );
        }
        assert!(r.applied > 100, "{r:?}");
        // The same seed plays the same game.
        let mut again = World::generate(WorldConfig::demo());
        prepare(&mut again);
        let r2 = play(&mut again, WorldConfig::DEFAULT_HEIGHT, 400, 7);
        assert_eq!(r.applied_by_type, r2.applied_by_type);
        assert_eq!(format!("{:?}", w.players), format!("{:?}", again.players));
    }
}
