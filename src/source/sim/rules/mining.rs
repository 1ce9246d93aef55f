//! Mining and refining: a completed mine moves ore from the planet to its owner, a
//! completed refine turns one stored ore into Alpha Matter; both restart their cycle.

use serde_json::{Value, json};

use super::{At, Change, Decided, Planned, Reqs, pid, planet_id, sid, type_u64};
use crate::game::{ORE_PER_MINING_COMPLETION, UALPHA_PER_REFINED_ORE};
use crate::pow::{Action, Work};
use crate::source::sim::world::{Location, World};

impl World {
    /// The requirements of a mine completion (`mining`) or a refine completion.
    pub(super) fn plan_ore(
        &self,
        at: At,
        mining: bool,
        strct: u64,
        nonce: &str,
        proof: Option<&str>,
        reqs: &mut Reqs,
    ) -> Planned {
        let At { height, assume, .. } = at;
        let Some((s, actor)) = self.open_struct(at, strct, reqs) else {
            return (None, None);
        };
        let t = s.kind();
        let (field, range_field, action) = if mining {
            ("oreMiningDifficulty", "an Ore Extractor", Action::OreMine)
        } else {
            (
                "oreRefiningDifficulty",
                "an Ore Refinery",
                Action::OreRefine,
            )
        };
        let range = type_u64(t, field);
        if !reqs.need(
            if mining {
                "structIsExtractor"
            } else {
                "structIsRefinery"
            },
            range > 0,
            if range > 0 {
                format!(
                    "{} is {} {}",
                    sid(strct),
                    crate::entity::struct_types::article(&t.name),
                    t.name
                )
            } else {
                format!(
                    "{} is {} {} (type {}), not {range_field}: it has no {field}",
                    sid(strct),
                    crate::entity::struct_types::article(&t.name),
                    t.name,
                    t.id
                )
            },
        ) {
            return (actor, None);
        }
        reqs.need_either(
            "structOnline",
            s.online,
            || format!("{} is online", sid(strct)),
            || format!("{} is offline; activate it to start the cycle", sid(strct)),
        );
        self.check_online(s.owner, assume, reqs);
        let start = if mining {
            s.block_start_ore_mine
        } else {
            s.block_start_ore_refine
        };
        reqs.need(
            "cycleStarted",
            start != 0,
            if start != 0 {
                format!("the cycle started at block {start}")
            } else {
                "the cycle has not started (it starts when the struct comes online)".to_string()
            },
        );
        let planet = match s.location {
            Location::Planet(p) => p,
            Location::Fleet(_) => 0,
        };
        self.check_ore(mining, planet, s.owner, reqs);
        let work = Work {
            action,
            entity_id: sid(strct).to_string(),
            planet_id: None,
            block_start: start,
        };
        if start != 0 {
            self.check_proof(work, range, nonce, proof, height, reqs);
        }
        let plan = if mining {
            Decided::Mine { strct, planet }
        } else {
            Decided::Refine { strct }
        };
        (actor, Some(plan))
    }

    /// That there is ore to work: in the planet to mine, or stored by the owner to
    /// refine.
    fn check_ore(&self, mining: bool, planet: u64, owner: u64, reqs: &mut Reqs) {
        if mining {
            let ore = self.planet_at(planet).map_or(0, |p| p.grid.ore);
            reqs.need(
                "planetHasOre",
                ore > 0,
                if ore > 0 {
                    format!("{} has {ore} ore left", planet_id(planet))
                } else {
                    format!("{} has no ore left to mine", planet_id(planet))
                },
            );
        } else {
            let stored = self.players[(owner - 1) as usize].grid.ore;
            reqs.need(
                "hasStoredOre",
                stored > 0,
                if stored > 0 {
                    format!("{} holds {stored} ore", pid(owner))
                } else {
                    format!("{} has no stored ore to refine", pid(owner))
                },
            );
        }
    }

    /// Moves the mined ore from the planet to its owner and restarts the cycle.
    pub(super) fn do_mine(
        &mut self,
        strct: u64,
        planet: u64,
        height: u64,
        events: &mut Vec<Change>,
    ) -> Value {
        let owner = self.structs[(strct - 1) as usize].owner;
        self.planets[(planet - 1) as usize].grid.ore -= ORE_PER_MINING_COMPLETION;
        self.players[(owner - 1) as usize].grid.ore += ORE_PER_MINING_COMPLETION;
        self.structs[(strct - 1) as usize].block_start_ore_mine = height;
        let left = self.planets[(planet - 1) as usize].grid.ore;
        let stored = self.players[(owner - 1) as usize].grid.ore;
        events.push(Change {
            category: "ore_mined",
            entity: sid(strct),
            changed: vec![sid(strct), pid(owner), planet_id(planet)],
            summary: format!(
                "{} mined {ORE_PER_MINING_COMPLETION} ore from {} ({left} left); {} holds {stored}",
                sid(strct),
                planet_id(planet),
                pid(owner)
            ),
            detail: json!({"ore": ORE_PER_MINING_COMPLETION, "planet_ore_left": left,
                "player_stored_ore": stored, "next_cycle_start": height}),
        });
        json!({"ore_mined": ORE_PER_MINING_COMPLETION, "planet_ore_left": left,
            "player_stored_ore": stored, "block_start_ore_mine": height})
    }

    /// Turns one stored ore into Alpha Matter and restarts the cycle.
    pub(super) fn do_refine(&mut self, strct: u64, height: u64, events: &mut Vec<Change>) -> Value {
        let owner = self.structs[(strct - 1) as usize].owner;
        let p = &mut self.players[(owner - 1) as usize];
        p.grid.ore -= 1;
        p.alpha += UALPHA_PER_REFINED_ORE;
        let (stored, alpha) = (p.grid.ore, p.alpha);
        self.structs[(strct - 1) as usize].block_start_ore_refine = height;
        events.push(Change {
            category: "ore_refined",
            entity: sid(strct),
            changed: vec![sid(strct), pid(owner)],
            summary: format!(
                "{} refined 1 ore into {UALPHA_PER_REFINED_ORE} ualpha for {}",
                sid(strct),
                pid(owner)
            ),
            detail: json!({"ore": 1, "ualpha": UALPHA_PER_REFINED_ORE,
                "player_stored_ore": stored, "player_ualpha": alpha}),
        });
        json!({"ore_refined": 1, "ualpha_minted": UALPHA_PER_REFINED_ORE,
            "player_stored_ore": stored, "player_ualpha": alpha,
            "block_start_ore_refine": height})
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::*;
    use super::super::*;
    use crate::chain::Msg;
    use crate::pow::{Action, Work};

    /// Player 1 with an online extractor on a planet holding ore.
    fn with_extractor(w: &mut World) -> u64 {
        let t = 14;
        let planet = w.players[0].planet;
        let existing = w.planets[(planet - 1) as usize]
            .slots
            .iter()
            .flatten()
            .flatten()
            .copied()
            .find(|s| w.structs[(*s - 1) as usize].type_id == t);
        let index = match existing {
            Some(i) => i,
            None => {
                let a = w
                    .apply(
                        &signed(
                            w,
                            1,
                            Msg::StructBuildInitiate {
                                player: 1,
                                struct_type: t,
                                ambit: None,
                                slot: None,
                                location: None,
                            },
                        ),
                        H,
                    )
                    .unwrap();
                a.result["struct_id"].as_str().unwrap()[2..]
                    .parse()
                    .unwrap()
            }
        };
        let s = &w.structs[(index - 1) as usize];
        if !s.built {
            let work = Work {
                action: Action::StructBuild,
                entity_id: sid(index).to_string(),
                planet_id: None,
                block_start: s.block_start_build,
            };
            let nonce = solve(&work, 700, H + 40_000);
            w.apply(
                &signed(
                    w,
                    1,
                    Msg::StructBuildComplete {
                        strct: index,
                        nonce,
                        proof: None,
                    },
                ),
                H + 40_000,
            )
            .unwrap();
        } else if !s.online {
            w.apply(&signed(w, 1, Msg::StructActivate { strct: index }), H)
                .unwrap();
        }
        w.planets[(planet - 1) as usize].grid.ore = 2;
        index
    }

    fn mine(w: &mut World, index: u64, height: u64) -> Result<Applied, Checked> {
        let s = &w.structs[(index - 1) as usize];
        let work = Work {
            action: Action::OreMine,
            entity_id: sid(index).to_string(),
            planet_id: None,
            block_start: s.block_start_ore_mine,
        };
        let nonce = if s.block_start_ore_mine == 0 {
            "1".to_string()
        } else {
            solve(&work, 14_000, height)
        };
        let msg = signed(
            w,
            1,
            Msg::StructOreMinerComplete {
                strct: index,
                nonce,
                proof: None,
            },
        );
        w.apply(&msg, height)
    }

    #[test]
    fn mining_moves_one_ore_and_restarts_the_cycle() {
        let mut w = ready();
        let ex = with_extractor(&mut w);
        let planet = w.players[0].planet;
        let stored = w.players[0].grid.ore;
        let h = w.structs[(ex - 1) as usize].block_start_ore_mine + 200_000;
        let a = mine(&mut w, ex, h).unwrap();
        assert_eq!(a.result["ore_mined"], 1);
        assert_eq!(w.planets[(planet - 1) as usize].grid.ore, 1);
        assert_eq!(w.players[0].grid.ore, stored + 1);
        assert_eq!(w.structs[(ex - 1) as usize].block_start_ore_mine, h);
        // The cycle restarted at h: right away the difficulty is back at 64.
        let too_soon = mine(&mut w, ex, h + 1);
        assert_eq!(missing(too_soon), vec!["proofOfWork"]);
        let a = mine(&mut w, ex, h + 200_000).unwrap();
        assert_eq!(a.result["planet_ore_left"], 0);
        assert_eq!(missing(mine(&mut w, ex, h + 400_000)), vec!["planetHasOre"]);
        // Offline: the cycle stops.
        w.planets[(planet - 1) as usize].grid.ore = 1;
        w.apply(&signed(&w, 1, Msg::StructDeactivate { strct: ex }), h)
            .unwrap();
        let r = missing(mine(&mut w, ex, h + 600_000));
        assert!(
            r.contains(&"structOnline") && r.contains(&"cycleStarted"),
            "{r:?}"
        );
        // A command ship is not an extractor.
        let cmd = w.fleets[(w.players[0].fleet - 1) as usize].command_struct;
        let msg = signed(
            &w,
            1,
            Msg::StructOreMinerComplete {
                strct: cmd,
                nonce: "1".into(),
                proof: None,
            },
        );
        assert_eq!(missing(w.apply(&msg, h)), vec!["structIsExtractor"]);
        assert!(w.check_integrity().is_empty());
    }

    #[test]
    fn refining_turns_stored_ore_into_alpha() {
        let mut w = ready();
        // Put an online refinery on player 1's planet.
        let planet = w.players[0].planet;
        let existing = w.planets[(planet - 1) as usize]
            .slots
            .iter()
            .flatten()
            .flatten()
            .copied()
            .find(|s| w.structs[(*s - 1) as usize].type_id == 15);
        let index = match existing {
            Some(i) => i,
            None => w
                .apply(
                    &signed(
                        &w,
                        1,
                        Msg::StructBuildInitiate {
                            player: 1,
                            struct_type: 15,
                            ambit: None,
                            slot: None,
                            location: None,
                        },
                    ),
                    H,
                )
                .map(|a| {
                    a.result["struct_id"].as_str().unwrap()[2..]
                        .parse()
                        .unwrap()
                })
                .unwrap(),
        };
        let s = w.structs[(index - 1) as usize].clone();
        if !s.built {
            let work = Work {
                action: Action::StructBuild,
                entity_id: sid(index).to_string(),
                planet_id: None,
                block_start: s.block_start_build,
            };
            let nonce = solve(&work, 700, H + 40_000);
            w.apply(
                &signed(
                    &w,
                    1,
                    Msg::StructBuildComplete {
                        strct: index,
                        nonce,
                        proof: None,
                    },
                ),
                H + 40_000,
            )
            .unwrap();
        } else if !s.online {
            w.apply(&signed(&w, 1, Msg::StructActivate { strct: index }), H)
                .unwrap();
        }
        let start = w.structs[(index - 1) as usize].block_start_ore_refine;
        let h = start + 500_000;
        let work = Work {
            action: Action::OreRefine,
            entity_id: sid(index).to_string(),
            planet_id: None,
            block_start: start,
        };
        let nonce = solve(&work, 28_000, h);
        let msg = signed(
            &w,
            1,
            Msg::StructOreRefineryComplete {
                strct: index,
                nonce,
                proof: None,
            },
        );
        w.players[0].grid.ore = 0;
        assert_eq!(missing(w.apply(&msg, h)), vec!["hasStoredOre"]);
        w.players[0].grid.ore = 3;
        let alpha = w.players[0].alpha;
        let a = w.apply(&msg, h).unwrap();
        assert_eq!(a.result["ualpha_minted"], 1_000_000);
        assert_eq!(w.players[0].alpha, alpha + 1_000_000);
        assert_eq!(w.players[0].grid.ore, 2);
        assert!(w.check_integrity().is_empty());
    }
}
