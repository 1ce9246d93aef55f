//! Fleets and planets: moving a fleet, raiding the planet it is away at, exploring a
//! new planet once the home planet is mined out, and the raid clock these change.

use serde_json::{Value, json};

use super::{At, Change, Decided, Planned, Reqs, fid, pid, planet_id, type_u64};
use crate::game::PLANET_STARTING_ORE;
use crate::pow::{Action, Work};
use crate::source::sim::world::{Grid, Location, PLANETARY_SHIELD_BASE, Planet, World};

impl World {
    /// The requirements of exploring: the home planet mined out and the fleet home.
    pub(super) fn plan_explore(&self, at: At, player: u64, reqs: &mut Reqs) -> Planned {
        let At { assume, .. } = at;
        if self
            .players
            .get((player).wrapping_sub(1) as usize)
            .is_none()
        {
            reqs.need(
                "playerExists",
                false,
                format!("{} does not exist", pid(player)),
            );
            return (None, None);
        }
        let actor = self.actor(at.signed, Some(player), reqs);
        self.check_online(player, assume, reqs);
        let p = &self.players[(player - 1) as usize];
        let ore = self.planets[(p.planet - 1) as usize].grid.ore;
        reqs.need(
            "currentPlanetEmpty",
            ore == 0,
            if ore == 0 {
                format!("{} is mined out", planet_id(p.planet))
            } else {
                format!(
                    "{} still has {ore} ore; explore only once it is mined out",
                    planet_id(p.planet)
                )
            },
        );
        self.check_on_station(player, assume, reqs, |fleet| {
            format!("fleet must be onStation to explore: {fleet} is away")
        });
        (actor, Some(Decided::Explore { player }))
    }

    /// The requirements of moving a fleet: an active destination elsewhere and an
    /// online command ship with the charge to move.
    pub(super) fn plan_move(
        &self,
        at: At,
        fleet: u64,
        destination: u64,
        reqs: &mut Reqs,
    ) -> Planned {
        let At { height, assume, .. } = at;
        let Some((f, actor)) = self.open_fleet(at, fleet, reqs) else {
            return (None, None);
        };
        let Some(dest) = self.planet_at(destination) else {
            reqs.need(
                "validLocation",
                false,
                format!("{} does not exist", planet_id(destination)),
            );
            return (actor, None);
        };
        reqs.need(
            "validLocation",
            dest.status == "active",
            format!("{} is {}", planet_id(destination), dest.status),
        );
        let here = f.planet.or(f.away_at);
        reqs.need(
            "notAlreadyThere",
            here != Some(destination),
            if here == Some(destination) {
                format!("{} is already at {}", fid(fleet), planet_id(destination))
            } else {
                format!("{} is not yet at {}", fid(fleet), planet_id(destination))
            },
        );
        self.check_online(f.owner, assume, reqs);
        let cmd_ok = self.command_ship_online(f.owner, assume);
        reqs.need(
            "commandShipOnline",
            cmd_ok,
            if cmd_ok {
                "the fleet's command ship is online".to_string()
            } else {
                format!(
                    "{} cannot move without a built, online command ship",
                    fid(fleet)
                )
            },
        );
        if f.command_struct != 0
            && let Some(cmd) = self.struct_at(f.command_struct)
        {
            self.check_charge(
                f.owner,
                type_u64(cmd.kind(), "moveCharge"),
                height,
                assume,
                reqs,
            );
        }
        (actor, Some(Decided::Move { fleet, destination }))
    }

    /// The requirements of completing a raid: the fleet away at the planet and first in
    /// line, the shields down, the raid clock running and a proof of work against the
    /// planet's shield.
    pub(super) fn plan_raid(
        &self,
        at: At,
        fleet: u64,
        planet: Option<u64>,
        nonce: &str,
        proof: Option<&str>,
        reqs: &mut Reqs,
    ) -> Planned {
        let At { height, assume, .. } = at;
        let Some((f, actor)) = self.open_fleet(at, fleet, reqs) else {
            return (None, None);
        };
        self.check_online(f.owner, assume, reqs);
        let Some(raided) = f.away_at else {
            reqs.need(
                "fleetAway",
                false,
                format!(
                    "{} is not away raided another planet; move it to the target first",
                    fid(fleet)
                ),
            );
            return (actor, None);
        };
        if let Some(p) = planet
            && !reqs.need(
                "fleetAway",
                p == raided,
                format!(
                    "wrong location: {} is raided {}, not {}",
                    fid(fleet),
                    planet_id(raided),
                    planet_id(p)
                ),
            )
        {
            return (actor, None);
        }
        let queue = self.raiders_at(raided);
        reqs.need(
            "fleetFirstInLine",
            queue.first() == Some(&fleet),
            match queue.first() {
                Some(first) if *first == fleet => {
                    format!("{} is first in line", fid(fleet))
                }
                Some(first) => format!(
                    "{} arrived first and raids before {}",
                    fid(*first),
                    fid(fleet)
                ),
                None => "no fleet is in line".into(),
            },
        );
        let vulnerable = self.shields_vulnerable(raided);
        reqs.need(
            "defenderShieldsVulnerable",
            vulnerable,
            if vulnerable {
                format!("{}'s shields are down", planet_id(raided))
            } else {
                format!(
                    "shields_active: {}'s owner has its fleet on station and its command ship online",
                    planet_id(raided)
                )
            },
        );
        let target = &self.planets[(raided - 1) as usize];
        let start = target.block_start_raid;
        reqs.need(
            "raidClockStarted",
            start != 0,
            if start != 0 {
                format!("the raid clock started raided block {start}")
            } else {
                "raid_clock_unset: the raid clock starts once the shields are down with a raider present".to_string()
            },
        );
        if start != 0 {
            let work = Work {
                action: Action::PlanetRaid,
                entity_id: fid(fleet).to_string(),
                planet_id: Some(planet_id(raided).to_string()),
                block_start: start,
            };
            self.check_proof(work, target.planetary_shield, nonce, proof, height, reqs);
        }
        (
            actor,
            Some(Decided::Raid {
                fleet,
                planet: raided,
            }),
        )
    }

    /// Re-evaluates the raid clock of the player's planet and of the planet its fleet is
    /// away at.
    pub(super) fn refresh_raids_of(&mut self, player: u64, height: u64, events: &mut Vec<Change>) {
        let p = &self.players[(player - 1) as usize];
        let mut planets = vec![p.planet];
        planets.extend(self.fleets[(p.fleet - 1) as usize].away_at);
        for planet in planets {
            self.refresh_raid_event(planet, height, events);
        }
    }

    /// Re-evaluates the planet's raid clock and tells the bus when it started or
    /// stopped.
    pub(super) fn refresh_raid_event(
        &mut self,
        planet: u64,
        height: u64,
        events: &mut Vec<Change>,
    ) {
        if self.refresh_raid_clock(planet, height) {
            let start = self.planets[(planet - 1) as usize].block_start_raid;
            events.push(Change {
                category: "block_raid_start",
                entity: planet_id(planet),
                changed: vec![planet_id(planet)],
                summary: if start == 0 {
                    format!("{}'s raid clock stopped (shields up or no raider)", planet_id(planet))
                } else {
                    format!("{}'s shields are down with a raider present: raid clock started at {start}", planet_id(planet))
                },
                detail: json!({"block_start_raid": start,
                    "status": if start == 0 { "ongoing" } else { "shieldsVulnerable" }}),
            });
        }
    }

    /// Leaves the mined-out planet (its structs destroyed) for a new one with the
    /// fleet home.
    pub(super) fn do_explore(
        &mut self,
        player: u64,
        height: u64,
        events: &mut Vec<Change>,
    ) -> Value {
        let old = self.players[(player - 1) as usize].planet;
        // The old planet is complete; its structs are destroyed.
        let on_old: Vec<u64> = self.planets[(old - 1) as usize]
            .slots
            .iter()
            .flatten()
            .flatten()
            .copied()
            .collect();
        for s in on_old {
            self.destroy(s, height, events);
        }
        self.planets[(old - 1) as usize].status = "complete";
        let creator = self.address_of(player).unwrap_or_default().to_string();
        self.planets.push(Planet {
            owner: player,
            creator,
            max_ore: PLANET_STARTING_ORE,
            slots: [[None; 4]; 4],
            grid: Grid {
                ore: PLANET_STARTING_ORE,
                ..Default::default()
            },
            planetary_shield: PLANETARY_SHIELD_BASE,
            status: "active",
            block_start_raid: 0,
        });
        let new = self.planets.len() as u64;
        self.players[(player - 1) as usize].planet = new;
        let fleet = self.players[(player - 1) as usize].fleet;
        let f = &mut self.fleets[(fleet - 1) as usize];
        f.planet = Some(new);
        f.away_at = None;
        self.refresh_shield(new);
        self.refresh_raid_event(old, height, events);
        events.push(Change {
            category: "planet_explore",
            entity: planet_id(new),
            changed: vec![planet_id(new), pid(player), fid(fleet), planet_id(old)],
            summary: format!(
                "{} explored {} (left {}, now complete)",
                pid(player),
                planet_id(new),
                planet_id(old)
            ),
            detail: json!({"planet_id": planet_id(new).to_string(), "previous_planet_id": planet_id(old).to_string(),
                "ore": PLANET_STARTING_ORE}),
        });
        json!({"planet_id": planet_id(new).to_string(), "previous_planet_id": planet_id(old).to_string(),
            "ore": PLANET_STARTING_ORE, "fleet_id": fid(fleet).to_string()})
    }

    /// Moves the fleet (home is on station, elsewhere is away) and updates the raid
    /// clocks of the planets it left and reached.
    pub(super) fn do_move(
        &mut self,
        fleet: u64,
        destination: u64,
        height: u64,
        events: &mut Vec<Change>,
    ) -> Value {
        let owner = self.fleets[(fleet - 1) as usize].owner;
        let home = self.players[(owner - 1) as usize].planet;
        let f = &self.fleets[(fleet - 1) as usize];
        let from = f.planet.or(f.away_at);
        let cmd = f.command_struct;
        if cmd != 0 {
            self.charge_used(owner, cmd, "moveCharge", height);
        }
        let f = &mut self.fleets[(fleet - 1) as usize];
        if destination == home {
            f.planet = Some(home);
            f.away_at = None;
        } else {
            f.planet = None;
            f.away_at = Some(destination);
            f.arrived = height;
        }
        let status = if destination == home {
            "onStation"
        } else {
            "away"
        };
        let mut changed = vec![fid(fleet), planet_id(destination)];
        changed.extend(from.map(planet_id));
        events.push(Change {
            category: "fleet_move",
            entity: fid(fleet),
            changed,
            summary: format!(
                "{} moved to {} ({status})",
                fid(fleet),
                planet_id(destination)
            ),
            detail: json!({"from": from.map(|p| planet_id(p).to_string()),
                "to": planet_id(destination).to_string(), "status": status}),
        });
        let mut planets = vec![home, destination];
        planets.extend(from);
        planets.sort_unstable();
        planets.dedup();
        for p in planets {
            self.refresh_raid_event(p, height, events);
        }
        json!({"fleet_id": fid(fleet).to_string(), "planet_id": planet_id(destination).to_string(),
            "status": status})
    }

    /// A command ship destroyed while its fleet is away defeats the raid: the fleet is
    /// sent home (`attackerDefeated`).
    pub(super) fn defeat_raid_if_command_ship(
        &mut self,
        strct: u64,
        height: u64,
        events: &mut Vec<Change>,
    ) {
        let s = &self.structs[(strct - 1) as usize];
        let Location::Fleet(f) = s.location else {
            return;
        };
        if s.type_id != 1 {
            return;
        }
        let owner = s.owner;
        let Some(at) = self.fleets[(f - 1) as usize].away_at else {
            return;
        };
        let home = self.players[(owner - 1) as usize].planet;
        let fleet = &mut self.fleets[(f - 1) as usize];
        fleet.away_at = None;
        fleet.planet = Some(home);
        events.push(Change {
            category: "planet_raid",
            entity: planet_id(at),
            changed: vec![planet_id(at), fid(f), pid(owner)],
            summary: format!(
                "{}'s command ship was destroyed at {}: the raid is defeated and the fleet sent home",
                fid(f),
                planet_id(at)
            ),
            detail: json!({"status": "attackerDefeated", "fleet_id": fid(f).to_string()}),
        });
        for p in [at, home] {
            self.refresh_raid_event(p, height, events);
        }
    }

    /// Seizes the defender's stored ore and sends the fleet home.
    pub(super) fn do_raid(
        &mut self,
        fleet: u64,
        planet: u64,
        height: u64,
        events: &mut Vec<Change>,
    ) -> Value {
        let raider = self.fleets[(fleet - 1) as usize].owner;
        let defender = self.planets[(planet - 1) as usize].owner;
        let seized = std::mem::take(&mut self.players[(defender - 1) as usize].grid.ore);
        self.players[(raider - 1) as usize].grid.ore += seized;
        let home = self.players[(raider - 1) as usize].planet;
        let f = &mut self.fleets[(fleet - 1) as usize];
        f.away_at = None;
        f.planet = Some(home);
        events.push(Change {
            category: "planet_raid",
            entity: planet_id(planet),
            changed: vec![planet_id(planet), fid(fleet), pid(raider), pid(defender)],
            summary: format!(
                "{} raided {} and seized {seized} ore from {}; the fleet returned home",
                fid(fleet),
                planet_id(planet),
                pid(defender)
            ),
            detail: json!({"status": "raidSuccessful", "seized_ore": seized,
                "fleet_id": fid(fleet).to_string(), "defender_id": pid(defender).to_string()}),
        });
        for p in [planet, home] {
            self.refresh_raid_event(p, height, events);
        }
        json!({"status": "raidSuccessful", "seized_ore": seized, "fleet_id": fid(fleet).to_string(),
            "planet_id": planet_id(planet).to_string()})
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::*;
    use super::super::*;
    use crate::chain::Msg;
    use crate::game::PLANET_STARTING_ORE;
    use crate::pow::{Action, Work};

    #[test]
    fn explore_needs_a_mined_out_planet_and_the_fleet_home() {
        let mut w = ready();
        let old = w.players[0].planet;
        w.planets[(old - 1) as usize].grid.ore = 3;
        let msg = signed(&w, 1, Msg::PlanetExplore { player: 1 });
        assert_eq!(missing(w.apply(&msg, H)), vec!["currentPlanetEmpty"]);
        w.planets[(old - 1) as usize].grid.ore = 0;
        let fleet = w.players[0].fleet;
        w.fleets[(fleet - 1) as usize].planet = None;
        assert_eq!(missing(w.apply(&msg, H)), vec!["fleetOnStation"]);
        make_ready(&mut w, 1);
        let on_old: Vec<u64> = w.planets[(old - 1) as usize]
            .slots
            .iter()
            .flatten()
            .flatten()
            .copied()
            .collect();
        let a = w.apply(&msg, H).unwrap();
        let new = w.players[0].planet;
        assert_ne!(new, old);
        assert_eq!(a.result["planet_id"], format!("2-{new}"));
        assert_eq!(w.planets[(new - 1) as usize].grid.ore, PLANET_STARTING_ORE);
        assert_eq!(w.planets[(old - 1) as usize].status, "complete");
        assert_eq!(w.fleets[(fleet - 1) as usize].planet, Some(new));
        for s in on_old {
            assert!(w.structs[(s - 1) as usize].destroyed);
        }
        assert!(w.check_integrity().is_empty(), "{:?}", w.check_integrity());
    }

    #[test]
    fn raid_needs_vulnerable_shields_a_running_clock_and_a_proof() {
        let mut w = ready();
        let (raider_fleet, target) = (w.players[0].fleet, w.players[1].planet);
        w.players[1].grid.ore = 4;
        let mv = signed(
            &w,
            1,
            Msg::FleetMove {
                fleet: raider_fleet,
                destination: target,
            },
        );
        let a = w.apply(&mv, H).unwrap();
        assert_eq!(a.result["status"], "away");
        // The defender is shielded: fleet home, command ship online.
        assert_eq!(w.planets[(target - 1) as usize].block_start_raid, 0);
        let raid = |w: &World, nonce: &str| {
            signed(
                w,
                1,
                Msg::PlanetRaidComplete {
                    fleet: raider_fleet,
                    planet: Some(target),
                    nonce: nonce.into(),
                    proof: None,
                },
            )
        };
        let r = missing(w.apply(&raid(&w, "1"), H + 10));
        assert!(
            r.contains(&"defenderShieldsVulnerable") && r.contains(&"raidClockStarted"),
            "{r:?}"
        );
        // The defender takes its command ship offline: the clock starts.
        let cmd = w.fleets[(w.players[1].fleet - 1) as usize].command_struct;
        let a = w
            .apply(&signed(&w, 2, Msg::StructDeactivate { strct: cmd }), H + 20)
            .unwrap();
        assert!(a.events.iter().any(|e| e.category == "block_raid_start"));
        assert_eq!(w.planets[(target - 1) as usize].block_start_raid, H + 20);
        let shield = w.planets[(target - 1) as usize].planetary_shield;
        let work = Work {
            action: Action::PlanetRaid,
            entity_id: fid(raider_fleet).to_string(),
            planet_id: Some(planet_id(target).to_string()),
            block_start: H + 20,
        };
        let h = H + 20 + 5_000_000;
        let nonce = solve(&work, shield, h);
        let raider_ore = w.players[0].grid.ore;
        let a = w.apply(&raid(&w, &nonce), h).unwrap();
        assert_eq!(a.result["seized_ore"], 4);
        assert_eq!(w.players[1].grid.ore, 0);
        assert_eq!(w.players[0].grid.ore, raider_ore + 4);
        assert_eq!(
            w.fleets[(raider_fleet - 1) as usize].planet,
            Some(w.players[0].planet)
        );
        assert_eq!(
            w.planets[(target - 1) as usize].block_start_raid,
            0,
            "no raider left"
        );
        assert!(w.check_integrity().is_empty());
    }
}
