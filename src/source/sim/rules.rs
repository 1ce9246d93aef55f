//! The game's rules on the sim world: each message is checked against every requirement
//! the chain has for it, and only when all are met is it applied, all at once.
//!
//! [`World::check`] evaluates the requirements without changing anything (it is what
//! `structs_validate_action` reports, optionally with facts overridden by the caller);
//! [`World::apply`] checks and then changes the world, returning the events of the
//! change. A refused message changes nothing.
//!
//! Facts used (from `schemas/formulas.md` and `knowledge/mechanics/`):
//! - charge is `height - lastAction`; a charge-consuming action needs at least its cost
//!   and resets the bar to 0 (`lastAction = height`);
//! - a player is online while capacity covers load (`capacity - load - structsLoad >= 0`);
//! - building draws the type's `buildDraw` from initiation to completion; an online
//!   struct draws its `passiveDraw`; completion activates the struct when the power is
//!   there;
//! - mining and refining cycles start on activation and restart on every completion;
//!   a mine moves one ore from the planet to its owner, a refine turns one stored ore
//!   into 1,000,000 ualpha;
//! - a raid completes only while the defender's shields are down and the raid clock
//!   runs, and seizes all the defender's stored ore.

use serde_json::{Value, json};

use super::world::{Location, PLANETARY_SHIELD_BASE, Planet, Struct, World};
use crate::chain::{Assume, Msg, Requirement, Signed, WeaponChoice};
use crate::entity::struct_types::{Ambit, StructType, struct_type};
use crate::entity::{EntityId, EntityKind};
use crate::game::Dice;
use crate::game::combat::{self, PlanetDefenses, Unit, WeaponSlot};
use crate::pow::{self, Action, Work};

/// Ore a completed mine moves from the planet to its owner.
pub const ORE_PER_MINE: u64 = 1;
/// Alpha matter (in ualpha) a completed refine makes of one ore.
pub const UALPHA_PER_ORE: u64 = 1_000_000;
/// Ore a newly explored planet holds.
pub const PLANET_STARTING_ORE: u64 = 5;

/// The requirements of one message, evaluated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    pub requirements: Vec<Requirement>,
    /// The player acting, when it could be resolved.
    pub actor: Option<u64>,
    plan: Option<Plan>,
}

impl Checked {
    pub fn met(&self) -> bool {
        self.plan.is_some() && self.requirements.iter().all(|r| r.met)
    }

    pub fn missing(&self) -> Vec<&Requirement> {
        self.requirements.iter().filter(|r| !r.met).collect()
    }
}

/// What an applied message did.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    /// The message's result for the caller (`struct_id` of a new struct, the ore mined,
    /// the attack's breakdown).
    pub result: Value,
    pub events: Vec<Change>,
}

/// One state change, before the bus numbers it.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub category: &'static str,
    pub entity: EntityId,
    pub changed: Vec<EntityId>,
    pub summary: String,
    pub detail: Value,
}

/// What `check` resolved, so `apply` does not decide anything twice.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Plan {
    Explore {
        player: u64,
    },
    Initiate {
        player: u64,
        type_id: u8,
        location: Location,
        ambit: Ambit,
        slot: u8,
    },
    Complete {
        strct: u64,
    },
    Activate {
        strct: u64,
    },
    Deactivate {
        strct: u64,
    },
    Mine {
        strct: u64,
        planet: u64,
    },
    Refine {
        strct: u64,
    },
    DefenseSet {
        defender: u64,
        protected: u64,
    },
    DefenseClear {
        defender: u64,
    },
    Move {
        fleet: u64,
        destination: u64,
    },
    Raid {
        fleet: u64,
        planet: u64,
    },
    Attack {
        strct: u64,
        target: u64,
        weapon: WeaponSlot,
    },
}

/// Damage each online Planetary Defense Cannon deals an attacker of its planet's
/// structs. The struct types carry no cannon damage; the corpus gives the cannons' sum
/// (`planetary-defense-cannon-damage`) without a per-cannon figure, so one point each.
pub const DEFENSE_CANNON_DAMAGE: u32 = 1;

fn sid(i: u64) -> EntityId {
    EntityId::new(EntityKind::Struct, i)
}
fn pid(i: u64) -> EntityId {
    EntityId::new(EntityKind::Player, i)
}
fn planet_id(i: u64) -> EntityId {
    EntityId::new(EntityKind::Planet, i)
}
fn fid(i: u64) -> EntityId {
    EntityId::new(EntityKind::Fleet, i)
}

/// Requirements as they are evaluated.
struct Reqs {
    list: Vec<Requirement>,
}

impl Reqs {
    fn need(&mut self, requirement: &'static str, met: bool, detail: impl Into<String>) -> bool {
        self.list.push(Requirement {
            requirement,
            met,
            detail: detail.into(),
        });
        met
    }

    fn all_met(&self) -> bool {
        self.list.iter().all(|r| r.met)
    }
}

fn type_u64(t: &StructType, field: &str) -> u64 {
    t.raw[field].as_u64().unwrap_or(0)
}

impl World {
    fn struct_at(&self, index: u64) -> Option<&Struct> {
        index
            .checked_sub(1)
            .and_then(|i| self.structs.get(i as usize))
    }

    fn planet_at(&self, index: u64) -> Option<&Planet> {
        index
            .checked_sub(1)
            .and_then(|i| self.planets.get(i as usize))
    }

    /// The player an address belongs to.
    pub fn player_by_address(&self, address: &str) -> Option<u64> {
        self.addresses
            .iter()
            .find(|a| a.address == address)
            .map(|a| a.player)
    }

    /// The player's address (what `creator` holds in its messages).
    pub fn address_of(&self, player: u64) -> Option<&str> {
        let p = self.players.get((player.checked_sub(1)?) as usize)?;
        self.addresses
            .get((p.address - 1) as usize)
            .map(|a| a.address.as_str())
    }

    /// Who acts: the signer's address, else the message's player, else the owner of
    /// what it acts on.
    fn actor(&self, signed: &Signed, owner: Option<u64>, reqs: &mut Reqs) -> Option<u64> {
        let by_address = match &signed.signer.creator {
            Some(addr) => match self.player_by_address(addr) {
                Some(p) => Some(p),
                None => {
                    reqs.need(
                        "validSigner",
                        false,
                        format!("creator {addr} is not the address of any player"),
                    );
                    return None;
                }
            },
            None => None,
        };
        let actor = by_address.or(signed.signer.player).or(owner)?;
        if let Some(owner) = owner {
            reqs.need(
                "ownership",
                actor == owner,
                if actor == owner {
                    format!("{} acts for its own {}", pid(actor), pid(owner))
                } else {
                    format!("{} cannot act for what {} owns", pid(actor), pid(owner))
                },
            );
        }
        Some(actor)
    }

    fn check_online(&self, player: u64, assume: &Assume, reqs: &mut Reqs) -> bool {
        let available = assume
            .available_capacity
            .unwrap_or_else(|| self.available_capacity(player));
        let online = assume.player_online.unwrap_or(available >= 0);
        let g = &self.players[(player - 1) as usize].grid;
        reqs.need(
            "playerOnline",
            online,
            if online {
                format!("{} is online", pid(player))
            } else if assume.player_online.is_some() {
                format!("{} is offline, as assumed", pid(player))
            } else if assume.available_capacity.is_some() {
                format!(
                    "{} is offline: {available} mW available, as assumed",
                    pid(player)
                )
            } else {
                format!(
                    "{} is offline: load {} + structs load {} mW exceeds capacity {} mW",
                    pid(player),
                    g.load,
                    g.structs_load,
                    g.capacity
                )
            },
        )
    }

    fn check_charge(
        &self,
        player: u64,
        cost: u64,
        height: u64,
        assume: &Assume,
        reqs: &mut Reqs,
    ) -> bool {
        let charge = assume.charge.unwrap_or_else(|| self.charge(player, height));
        reqs.need(
            "sufficientCharge",
            charge >= cost,
            if charge >= cost {
                format!("charge {charge} covers the cost {cost}")
            } else {
                format!(
                    "required charge {cost} but {} had {charge}; it refills one per block, ready in {} blocks",
                    pid(player),
                    cost - charge
                )
            },
        )
    }

    fn check_power(&self, player: u64, draw: u64, assume: &Assume, reqs: &mut Reqs) -> bool {
        let available = assume
            .available_capacity
            .unwrap_or_else(|| self.available_capacity(player));
        let ok = available >= i128::from(draw);
        reqs.need(
            "sufficientPower",
            ok,
            if ok {
                format!("{available} mW available covers the {draw} mW draw")
            } else {
                format!(
                    "insufficient power: the struct draws {draw} mW but {} has {available} mW available",
                    pid(player)
                )
            },
        )
    }

    fn check_proof(
        &self,
        work: Work,
        range: u64,
        nonce: &str,
        proof: Option<&str>,
        height: u64,
        reqs: &mut Reqs,
    ) -> bool {
        let input = format!("{}{nonce}", work.prefix());
        let age = height.saturating_sub(work.block_start);
        let required = pow::difficulty(age, range);
        let hash = pow::hash_hex(&input);
        let check = pow::check(&input, proof.unwrap_or(&hash), required);
        let detail = if check.valid() {
            format!(
                "{input} hashes to {} leading zeros; {required} needed at age {age}",
                check.achieved
            )
        } else if !check.hash_matches {
            format!(
                "proof invalid: the proof is not the SHA-256 of {input} (that is {})",
                check.hash
            )
        } else {
            format!(
                "proof invalid: {input} hashes to {} leading zeros but {required} are needed at age {age} (range {range})",
                check.achieved
            )
        };
        reqs.need("proofOfWork", check.valid(), detail)
    }

    fn command_ship_online(&self, player: u64, assume: &Assume) -> bool {
        assume.command_ship_online.unwrap_or_else(|| {
            let fleet = &self.fleets[(self.players[(player - 1) as usize].fleet - 1) as usize];
            fleet.command_struct != 0
                && self
                    .struct_at(fleet.command_struct)
                    .is_some_and(|c| c.online && !c.destroyed)
        })
    }

    fn fleet_on_station(&self, player: u64, assume: &Assume) -> bool {
        assume.fleet_on_station.unwrap_or_else(|| {
            let p = &self.players[(player - 1) as usize];
            self.fleets[(p.fleet - 1) as usize].planet == Some(p.planet)
        })
    }

    /// A struct that exists, is not destroyed, and who acts for it.
    fn live_struct(
        &self,
        signed: &Signed,
        index: u64,
        reqs: &mut Reqs,
    ) -> Option<(&Struct, Option<u64>)> {
        let Some(s) = self.struct_at(index) else {
            reqs.need(
                "structExists",
                false,
                format!("{} does not exist", sid(index)),
            );
            return None;
        };
        if !reqs.need(
            "structNotDestroyed",
            !s.destroyed,
            if s.destroyed {
                format!("{} was destroyed", sid(index))
            } else {
                format!("{} exists", sid(index))
            },
        ) {
            return None;
        }
        let actor = self.actor(signed, Some(s.owner), reqs);
        Some((s, actor))
    }

    /// Evaluates every requirement of the message at `height` without changing the world.
    pub fn check(&self, signed: &Signed, height: u64, assume: &Assume) -> Checked {
        let height = assume.block_height.unwrap_or(height);
        let mut reqs = Reqs { list: Vec::new() };
        let (actor, plan) = self.plan(signed, height, assume, &mut reqs);
        let plan = plan.filter(|_| reqs.all_met());
        Checked {
            requirements: reqs.list,
            actor,
            plan,
        }
    }

    fn plan(
        &self,
        signed: &Signed,
        height: u64,
        assume: &Assume,
        reqs: &mut Reqs,
    ) -> (Option<u64>, Option<Plan>) {
        match &signed.msg {
            Msg::PlanetExplore { player } => {
                if self
                    .players
                    .get((*player).wrapping_sub(1) as usize)
                    .is_none()
                {
                    reqs.need(
                        "playerExists",
                        false,
                        format!("{} does not exist", pid(*player)),
                    );
                    return (None, None);
                }
                let actor = self.actor(signed, Some(*player), reqs);
                self.check_online(*player, assume, reqs);
                let p = &self.players[(*player - 1) as usize];
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
                let on_station = self.fleet_on_station(*player, assume);
                reqs.need(
                    "fleetOnStation",
                    on_station,
                    if on_station {
                        format!("{} is on station", fid(p.fleet))
                    } else {
                        format!(
                            "fleet must be onStation to explore: {} is away",
                            fid(p.fleet)
                        )
                    },
                );
                (actor, Some(Plan::Explore { player: *player }))
            }
            Msg::StructBuildInitiate {
                player,
                struct_type: type_id,
                ambit,
                slot,
                location,
            } => self.plan_initiate(
                signed, *player, *type_id, *ambit, *slot, *location, height, assume, reqs,
            ),
            Msg::StructBuildComplete {
                strct,
                nonce,
                proof,
            } => {
                let Some((s, actor)) = self.live_struct(signed, *strct, reqs) else {
                    return (None, None);
                };
                reqs.need(
                    "structInBuildingState",
                    !s.built,
                    if s.built {
                        format!("{} is already built", sid(*strct))
                    } else {
                        format!(
                            "{} is being built since block {}",
                            sid(*strct),
                            s.block_start_build
                        )
                    },
                );
                self.check_online(s.owner, assume, reqs);
                let work = Work {
                    action: Action::StructBuild,
                    entity_id: sid(*strct).to_string(),
                    planet_id: None,
                    block_start: s.block_start_build,
                };
                self.check_proof(
                    work,
                    s.kind().build_difficulty,
                    nonce,
                    proof.as_deref(),
                    height,
                    reqs,
                );
                (actor, Some(Plan::Complete { strct: *strct }))
            }
            Msg::StructActivate { strct } => {
                let Some((s, actor)) = self.live_struct(signed, *strct, reqs) else {
                    return (None, None);
                };
                let t = s.kind();
                reqs.need(
                    "structBuilt",
                    s.built,
                    if s.built {
                        format!("{} is built", sid(*strct))
                    } else {
                        format!("{} is still being built", sid(*strct))
                    },
                );
                reqs.need(
                    "structOffline",
                    !s.online,
                    if s.online {
                        format!("{} is already online", sid(*strct))
                    } else {
                        format!("{} is offline", sid(*strct))
                    },
                );
                self.check_online(s.owner, assume, reqs);
                self.check_charge(s.owner, type_u64(t, "activateCharge"), height, assume, reqs);
                self.check_power(s.owner, t.passive_draw, assume, reqs);
                (actor, Some(Plan::Activate { strct: *strct }))
            }
            Msg::StructDeactivate { strct } => {
                let Some((s, actor)) = self.live_struct(signed, *strct, reqs) else {
                    return (None, None);
                };
                reqs.need(
                    "structOnline",
                    s.online,
                    if s.online {
                        format!("{} is online", sid(*strct))
                    } else {
                        format!("{} is not online", sid(*strct))
                    },
                );
                (actor, Some(Plan::Deactivate { strct: *strct }))
            }
            Msg::StructOreMinerComplete {
                strct,
                nonce,
                proof,
            }
            | Msg::StructOreRefineryComplete {
                strct,
                nonce,
                proof,
            } => {
                let mining = matches!(signed.msg, Msg::StructOreMinerComplete { .. });
                let Some((s, actor)) = self.live_struct(signed, *strct, reqs) else {
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
                            sid(*strct),
                            crate::entity::struct_types::article(&t.name),
                            t.name
                        )
                    } else {
                        format!(
                            "{} is {} {} (type {}), not {range_field}: it has no {field}",
                            sid(*strct),
                            crate::entity::struct_types::article(&t.name),
                            t.name,
                            t.id
                        )
                    },
                ) {
                    return (actor, None);
                }
                reqs.need(
                    "structOnline",
                    s.online,
                    if s.online {
                        format!("{} is online", sid(*strct))
                    } else {
                        format!("{} is offline; activate it to start the cycle", sid(*strct))
                    },
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
                        "the cycle has not started (it starts when the struct comes online)"
                            .to_string()
                    },
                );
                let planet = match s.location {
                    Location::Planet(p) => p,
                    Location::Fleet(_) => 0,
                };
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
                    let stored = self.players[(s.owner - 1) as usize].grid.ore;
                    reqs.need(
                        "hasStoredOre",
                        stored > 0,
                        if stored > 0 {
                            format!("{} holds {stored} ore", pid(s.owner))
                        } else {
                            format!("{} has no stored ore to refine", pid(s.owner))
                        },
                    );
                }
                let work = Work {
                    action,
                    entity_id: sid(*strct).to_string(),
                    planet_id: None,
                    block_start: start,
                };
                if start != 0 {
                    self.check_proof(work, range, nonce, proof.as_deref(), height, reqs);
                }
                let plan = if mining {
                    Plan::Mine {
                        strct: *strct,
                        planet,
                    }
                } else {
                    Plan::Refine { strct: *strct }
                };
                (actor, Some(plan))
            }
            Msg::StructAttack {
                strct,
                targets,
                weapon,
            } => self.plan_attack(signed, *strct, targets, *weapon, height, assume, reqs),
            Msg::StructDefenseSet {
                defender,
                protected,
            } => {
                let Some((d, actor)) = self.live_struct(signed, *defender, reqs) else {
                    return (None, None);
                };
                let Some(p) = self.struct_at(*protected) else {
                    reqs.need(
                        "structExists",
                        false,
                        format!("{} does not exist", sid(*protected)),
                    );
                    return (actor, None);
                };
                reqs.need(
                    "protectedAlive",
                    !p.destroyed,
                    format!("{} is {}", sid(*protected), p.status()),
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
                            sid(*defender),
                            sid(*protected)
                        )
                    },
                );
                reqs.need(
                    "defenderOnline",
                    d.built && d.online,
                    format!("{} is {}", sid(*defender), d.status()),
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
                    Some(Plan::DefenseSet {
                        defender: *defender,
                        protected: *protected,
                    }),
                )
            }
            Msg::StructDefenseClear { defender } => {
                let Some((d, actor)) = self.live_struct(signed, *defender, reqs) else {
                    return (None, None);
                };
                reqs.need(
                    "isDefending",
                    d.defending.is_some(),
                    match d.defending {
                        Some(p) => format!("{} defends {}", sid(*defender), sid(p)),
                        None => format!("{} defends nothing", sid(*defender)),
                    },
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
                    Some(Plan::DefenseClear {
                        defender: *defender,
                    }),
                )
            }
            Msg::FleetMove { fleet, destination } => {
                let Some(f) = fleet
                    .checked_sub(1)
                    .and_then(|i| self.fleets.get(i as usize))
                else {
                    reqs.need(
                        "fleetExists",
                        false,
                        format!("{} does not exist", fid(*fleet)),
                    );
                    return (None, None);
                };
                let actor = self.actor(signed, Some(f.owner), reqs);
                let Some(dest) = self.planet_at(*destination) else {
                    reqs.need(
                        "validLocation",
                        false,
                        format!("{} does not exist", planet_id(*destination)),
                    );
                    return (actor, None);
                };
                reqs.need(
                    "validLocation",
                    dest.status == "active",
                    format!("{} is {}", planet_id(*destination), dest.status),
                );
                let here = f.planet.or(f.away_at);
                reqs.need(
                    "notAlreadyThere",
                    here != Some(*destination),
                    if here == Some(*destination) {
                        format!("{} is already at {}", fid(*fleet), planet_id(*destination))
                    } else {
                        format!("{} is not yet at {}", fid(*fleet), planet_id(*destination))
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
                            fid(*fleet)
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
                (
                    actor,
                    Some(Plan::Move {
                        fleet: *fleet,
                        destination: *destination,
                    }),
                )
            }
            Msg::PlanetRaidComplete {
                fleet,
                planet,
                nonce,
                proof,
            } => {
                let Some(f) = fleet
                    .checked_sub(1)
                    .and_then(|i| self.fleets.get(i as usize))
                else {
                    reqs.need(
                        "fleetExists",
                        false,
                        format!("{} does not exist", fid(*fleet)),
                    );
                    return (None, None);
                };
                let actor = self.actor(signed, Some(f.owner), reqs);
                self.check_online(f.owner, assume, reqs);
                let Some(at) = f.away_at else {
                    reqs.need(
                        "fleetAway",
                        false,
                        format!(
                            "{} is not away at another planet; move it to the target first",
                            fid(*fleet)
                        ),
                    );
                    return (actor, None);
                };
                if let Some(p) = planet
                    && !reqs.need(
                        "fleetAway",
                        *p == at,
                        format!(
                            "wrong location: {} is at {}, not {}",
                            fid(*fleet),
                            planet_id(at),
                            planet_id(*p)
                        ),
                    )
                {
                    return (actor, None);
                }
                let queue = self.raiders_at(at);
                reqs.need(
                    "fleetFirstInLine",
                    queue.first() == Some(fleet),
                    match queue.first() {
                        Some(first) if first == fleet => {
                            format!("{} is first in line", fid(*fleet))
                        }
                        Some(first) => format!(
                            "{} arrived first and raids before {}",
                            fid(*first),
                            fid(*fleet)
                        ),
                        None => "no fleet is in line".into(),
                    },
                );
                let vulnerable = self.shields_vulnerable(at);
                reqs.need(
                    "defenderShieldsVulnerable",
                    vulnerable,
                    if vulnerable {
                        format!("{}'s shields are down", planet_id(at))
                    } else {
                        format!(
                            "shields_active: {}'s owner has its fleet on station and its command ship online",
                            planet_id(at)
                        )
                    },
                );
                let target = &self.planets[(at - 1) as usize];
                let start = target.block_start_raid;
                reqs.need(
                    "raidClockStarted",
                    start != 0,
                    if start != 0 {
                        format!("the raid clock started at block {start}")
                    } else {
                        "raid_clock_unset: the raid clock starts once the shields are down with a raider present".to_string()
                    },
                );
                if start != 0 {
                    let work = Work {
                        action: Action::PlanetRaid,
                        entity_id: fid(*fleet).to_string(),
                        planet_id: Some(planet_id(at).to_string()),
                        block_start: start,
                    };
                    self.check_proof(
                        work,
                        target.planetary_shield,
                        nonce,
                        proof.as_deref(),
                        height,
                        reqs,
                    );
                }
                (
                    actor,
                    Some(Plan::Raid {
                        fleet: *fleet,
                        planet: at,
                    }),
                )
            }
        }
    }

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

    #[allow(clippy::too_many_arguments)]
    fn plan_attack(
        &self,
        signed: &Signed,
        strct: u64,
        targets: &[u64],
        weapon: WeaponChoice,
        height: u64,
        assume: &Assume,
        reqs: &mut Reqs,
    ) -> (Option<u64>, Option<Plan>) {
        let Some((s, actor)) = self.live_struct(signed, strct, reqs) else {
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
        let Some(t) = self.struct_at(target) else {
            reqs.need(
                "validTarget",
                false,
                format!("{} does not exist", sid(target)),
            );
            return (actor, None);
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
            return (actor, None);
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
            Some(Plan::Attack {
                strct,
                target,
                weapon: slot,
            }),
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn plan_initiate(
        &self,
        signed: &Signed,
        player: u64,
        type_id: u8,
        ambit: Option<Ambit>,
        slot: Option<u8>,
        location: Option<EntityId>,
        height: u64,
        assume: &Assume,
        reqs: &mut Reqs,
    ) -> (Option<u64>, Option<Plan>) {
        // `MsgStructBuild` may leave the player to the creator.
        let player = if player == 0 {
            match signed
                .signer
                .creator
                .as_deref()
                .and_then(|a| self.player_by_address(a))
            {
                Some(p) => p,
                None => {
                    reqs.need(
                        "playerExists",
                        false,
                        "the message names no player and its creator is no player's address",
                    );
                    return (None, None);
                }
            }
        } else {
            player
        };
        if self.players.get((player - 1) as usize).is_none() {
            reqs.need(
                "playerExists",
                false,
                format!("{} does not exist", pid(player)),
            );
            return (None, None);
        }
        let actor = self.actor(signed, Some(player), reqs);
        let t = struct_type(type_id).expect("parsed types exist");
        let p = &self.players[(player - 1) as usize];
        let home = if t.is_fleet() {
            Location::Fleet(p.fleet)
        } else {
            Location::Planet(p.planet)
        };
        let home_id = match home {
            Location::Planet(i) => planet_id(i),
            Location::Fleet(i) => fid(i),
        };
        if let Some(loc) = location
            && !reqs.need(
                "validLocation",
                loc == home_id,
                if loc == home_id {
                    format!("{} builds at {loc}", pid(player))
                } else {
                    format!(
                        "wrong location: {} {} ({}) is built in {}'s {} {home_id}, not {loc}",
                        crate::entity::struct_types::article(&t.name),
                        t.name,
                        t.category,
                        pid(player),
                        if t.is_fleet() { "fleet" } else { "planet" },
                    )
                },
            )
        {
            return (actor, None);
        }
        self.check_online(player, assume, reqs);
        self.check_charge(player, type_u64(t, "buildCharge"), height, assume, reqs);
        self.check_power(player, t.build_draw, assume, reqs);
        let on_station = self.fleet_on_station(player, assume);
        reqs.need(
            "fleetOnStation",
            on_station,
            if on_station {
                format!("{} is on station", fid(p.fleet))
            } else {
                format!(
                    "{} is away; building needs the fleet on station",
                    fid(p.fleet)
                )
            },
        );
        if t.is_fleet() {
            if t.id != 1 {
                let has = self.fleets[(p.fleet - 1) as usize].command_struct != 0;
                reqs.need(
                    "fleetHasCommandShip",
                    has,
                    if has {
                        "the fleet has a command ship".to_string()
                    } else {
                        format!(
                            "{} has no command ship; build one (type 1) first",
                            fid(p.fleet)
                        )
                    },
                );
            }
        } else {
            let ok = self.command_ship_online(player, assume);
            reqs.need(
                "commandShipOnline",
                ok,
                if ok {
                    "the command ship is online".to_string()
                } else {
                    "planet building needs the fleet's command ship built and online".to_string()
                },
            );
        }
        // The build limit counts live structs of the type in the same place.
        let slots = match home {
            Location::Planet(i) => &self.planets[(i - 1) as usize].slots,
            Location::Fleet(i) => &self.fleets[(i - 1) as usize].slots,
        };
        if t.build_limit > 0 {
            let have = slots
                .iter()
                .flatten()
                .flatten()
                .filter(|s| self.structs[(**s - 1) as usize].type_id == t.id)
                .count() as u32;
            reqs.need(
                "buildLimit",
                have < t.build_limit,
                format!(
                    "{home_id} has {have} of type {} ({}); the limit is {}",
                    t.id, t.name, t.build_limit
                ),
            );
        }
        let allowed = t.ambits();
        let ambits: Vec<Ambit> = match ambit {
            Some(a) => {
                let ok = allowed.contains(&a);
                if !reqs.need(
                    "validAmbit",
                    ok,
                    if ok {
                        format!("a {} can operate in {}", t.name, a.name())
                    } else {
                        format!(
                            "wrong location: {} {} operates in {}, not {}",
                            crate::entity::struct_types::article(&t.name),
                            t.name,
                            allowed
                                .iter()
                                .map(|a| a.name())
                                .collect::<Vec<_>>()
                                .join(", "),
                            a.name()
                        )
                    },
                ) {
                    return (actor, None);
                }
                vec![a]
            }
            None => allowed,
        };
        let free = ambits.iter().find_map(|a| {
            let row = &slots[a.slot_row()];
            match slot {
                Some(s) => row[usize::from(s)].is_none().then_some((*a, s)),
                None => row.iter().position(Option::is_none).map(|s| (*a, s as u8)),
            }
        });
        let names: Vec<&str> = ambits.iter().map(|a| a.name()).collect();
        if !reqs.need(
            "slotAvailable",
            free.is_some(),
            match (free, slot) {
                (Some((a, s)), _) => format!("slot {s} in {} is free", a.name()),
                (None, Some(s)) => format!("slot {s} in {} is taken", names.join("/")),
                (None, None) => format!("no free slot in {} at {home_id}", names.join("/")),
            },
        ) {
            return (actor, None);
        }
        let (ambit, slot) = free.expect("checked");
        (
            actor,
            Some(Plan::Initiate {
                player,
                type_id,
                location: home,
                ambit,
                slot,
            }),
        )
    }

    /// Checks the message and, when every requirement holds, applies it. A refused
    /// message leaves the world as it was and returns the requirements.
    pub fn apply(&mut self, signed: &Signed, height: u64) -> Result<Applied, Checked> {
        let checked = self.check(signed, height, &Assume::default());
        let Some(plan) = checked.plan.clone().filter(|_| checked.met()) else {
            return Err(checked);
        };
        Ok(self.commit(plan, height))
    }

    fn commit(&mut self, plan: Plan, height: u64) -> Applied {
        let mut events = Vec::new();
        let result = match plan {
            Plan::Explore { player } => self.do_explore(player, height, &mut events),
            Plan::Initiate {
                player,
                type_id,
                location,
                ambit,
                slot,
            } => {
                let t = struct_type(type_id).expect("known type");
                let index = self.structs.len() as u64 + 1;
                let creator = self.address_of(player).unwrap_or_default().to_string();
                self.structs.push(Struct {
                    type_id,
                    owner: player,
                    creator,
                    location,
                    ambit,
                    slot,
                    health: t.max_health,
                    built: false,
                    online: false,
                    destroyed: false,
                    block_start_build: height,
                    block_start_ore_mine: 0,
                    block_start_ore_refine: 0,
                    defending: None,
                });
                let slots = match location {
                    Location::Planet(i) => &mut self.planets[(i - 1) as usize].slots,
                    Location::Fleet(i) => &mut self.fleets[(i - 1) as usize].slots,
                };
                slots[ambit.slot_row()][usize::from(slot)] = Some(index);
                let g = &mut self.players[(player - 1) as usize].grid;
                g.structs_load += t.build_draw;
                g.last_action = height;
                let at = match location {
                    Location::Planet(i) => planet_id(i),
                    Location::Fleet(i) => fid(i),
                };
                events.push(Change {
                    category: "struct_block_build_start",
                    entity: sid(index),
                    changed: vec![sid(index), pid(player), at],
                    summary: format!(
                        "{} began building {} {} at {at} ({} slot {slot})",
                        pid(player),
                        crate::entity::struct_types::article(&t.name),
                        t.name,
                        ambit.name()
                    ),
                    detail: json!({"struct_type": t.id, "location_id": at.to_string(),
                        "operating_ambit": ambit.name(), "slot": slot, "block_start_build": height,
                        "build_draw_mw": t.build_draw, "build_difficulty": t.build_difficulty}),
                });
                json!({"struct_id": sid(index).to_string(), "struct_type": t.id,
                    "location_id": at.to_string(), "operating_ambit": ambit.name(), "slot": slot,
                    "block_start_build": height})
            }
            Plan::Complete { strct } => {
                let owner = self.structs[(strct - 1) as usize].owner;
                let t = self.structs[(strct - 1) as usize].kind();
                {
                    let s = &mut self.structs[(strct - 1) as usize];
                    s.built = true;
                }
                self.players[(owner - 1) as usize].grid.structs_load -= t.build_draw;
                events.push(Change {
                    category: "struct_status",
                    entity: sid(strct),
                    changed: vec![sid(strct), pid(owner)],
                    summary: format!("{} finished building ({})", sid(strct), t.name),
                    detail: json!({"status": "built"}),
                });
                if t.id == 1 {
                    let fleet = self.players[(owner - 1) as usize].fleet;
                    if self.fleets[(fleet - 1) as usize].command_struct == 0 {
                        self.fleets[(fleet - 1) as usize].command_struct = strct;
                    }
                }
                let available = self.available_capacity(owner);
                let activated = available >= i128::from(t.passive_draw);
                if activated {
                    self.bring_online(strct, height, &mut events);
                }
                json!({"struct_id": sid(strct).to_string(), "built": true, "online": activated,
                "note": if activated { "built and activated".to_string() } else {
                    format!("built but not activated: it draws {} mW and {available} mW is available", t.passive_draw)
                }})
            }
            Plan::Activate { strct } => {
                let owner = self.structs[(strct - 1) as usize].owner;
                if type_u64(self.structs[(strct - 1) as usize].kind(), "activateCharge") > 0 {
                    self.players[(owner - 1) as usize].grid.last_action = height;
                }
                self.bring_online(strct, height, &mut events);
                json!({"struct_id": sid(strct).to_string(), "online": true})
            }
            Plan::Deactivate { strct } => {
                self.take_offline(strct, height, "deactivated", &mut events);
                json!({"struct_id": sid(strct).to_string(), "online": false})
            }
            Plan::Mine { strct, planet } => {
                let owner = self.structs[(strct - 1) as usize].owner;
                self.planets[(planet - 1) as usize].grid.ore -= ORE_PER_MINE;
                self.players[(owner - 1) as usize].grid.ore += ORE_PER_MINE;
                self.structs[(strct - 1) as usize].block_start_ore_mine = height;
                let left = self.planets[(planet - 1) as usize].grid.ore;
                let stored = self.players[(owner - 1) as usize].grid.ore;
                events.push(Change {
                    category: "ore_mined",
                    entity: sid(strct),
                    changed: vec![sid(strct), pid(owner), planet_id(planet)],
                    summary: format!(
                        "{} mined {ORE_PER_MINE} ore from {} ({left} left); {} holds {stored}",
                        sid(strct),
                        planet_id(planet),
                        pid(owner)
                    ),
                    detail: json!({"ore": ORE_PER_MINE, "planet_ore_left": left,
                        "player_stored_ore": stored, "next_cycle_start": height}),
                });
                json!({"ore_mined": ORE_PER_MINE, "planet_ore_left": left,
                    "player_stored_ore": stored, "block_start_ore_mine": height})
            }
            Plan::Refine { strct } => {
                let owner = self.structs[(strct - 1) as usize].owner;
                let p = &mut self.players[(owner - 1) as usize];
                p.grid.ore -= 1;
                p.alpha += UALPHA_PER_ORE;
                let (stored, alpha) = (p.grid.ore, p.alpha);
                self.structs[(strct - 1) as usize].block_start_ore_refine = height;
                events.push(Change {
                    category: "ore_refined",
                    entity: sid(strct),
                    changed: vec![sid(strct), pid(owner)],
                    summary: format!(
                        "{} refined 1 ore into {UALPHA_PER_ORE} ualpha for {}",
                        sid(strct),
                        pid(owner)
                    ),
                    detail: json!({"ore": 1, "ualpha": UALPHA_PER_ORE,
                        "player_stored_ore": stored, "player_ualpha": alpha}),
                });
                json!({"ore_refined": 1, "ualpha_minted": UALPHA_PER_ORE,
                    "player_stored_ore": stored, "player_ualpha": alpha,
                    "block_start_ore_refine": height})
            }
            Plan::DefenseSet {
                defender,
                protected,
            } => {
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
            Plan::DefenseClear { defender } => {
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
            Plan::Move { fleet, destination } => {
                self.do_move(fleet, destination, height, &mut events)
            }
            Plan::Raid { fleet, planet } => self.do_raid(fleet, planet, height, &mut events),
            Plan::Attack {
                strct,
                target,
                weapon,
            } => self.do_attack(strct, target, weapon, height, &mut events),
        };
        Applied { result, events }
    }

    fn charge_used(&mut self, owner: u64, strct: u64, field: &str, height: u64) {
        if type_u64(self.structs[(strct - 1) as usize].kind(), field) > 0 {
            self.players[(owner - 1) as usize].grid.last_action = height;
        }
    }

    fn bring_online(&mut self, strct: u64, height: u64, events: &mut Vec<Change>) {
        let s = &mut self.structs[(strct - 1) as usize];
        let t = s.kind();
        s.online = true;
        if type_u64(t, "oreMiningDifficulty") > 0 {
            s.block_start_ore_mine = height;
        }
        if type_u64(t, "oreRefiningDifficulty") > 0 {
            s.block_start_ore_refine = height;
        }
        let (owner, location) = (s.owner, s.location);
        self.players[(owner - 1) as usize].grid.structs_load += t.passive_draw;
        let mut changed = vec![sid(strct), pid(owner)];
        if let Location::Planet(p) = location {
            self.refresh_shield(p);
            changed.push(planet_id(p));
        }
        events.push(Change {
            category: "struct_status",
            entity: sid(strct),
            changed,
            summary: format!("{} is online, drawing {} mW", sid(strct), t.passive_draw),
            detail: json!({"status": "online", "passive_draw_mw": t.passive_draw}),
        });
        self.refresh_raids_of(owner, height, events);
    }

    fn take_offline(&mut self, strct: u64, height: u64, why: &str, events: &mut Vec<Change>) {
        let s = &mut self.structs[(strct - 1) as usize];
        let t = s.kind();
        s.online = false;
        s.block_start_ore_mine = 0;
        s.block_start_ore_refine = 0;
        let (owner, location) = (s.owner, s.location);
        self.players[(owner - 1) as usize].grid.structs_load -= t.passive_draw;
        let mut changed = vec![sid(strct), pid(owner)];
        if let Location::Planet(p) = location {
            self.refresh_shield(p);
            changed.push(planet_id(p));
        }
        events.push(Change {
            category: "struct_status",
            entity: sid(strct),
            changed,
            summary: format!("{} is offline ({why})", sid(strct)),
            detail: json!({"status": "built", "reason": why}),
        });
        self.refresh_raids_of(owner, height, events);
    }

    /// Destroys a struct: health 0, out of its slot, no draw, no defending. A destroyed
    /// command ship leaves its fleet without one.
    pub(crate) fn destroy(&mut self, strct: u64, height: u64, events: &mut Vec<Change>) {
        let s = &self.structs[(strct - 1) as usize];
        if s.destroyed {
            return;
        }
        let draw = s.draw();
        let (owner, location, ambit, slot) = (s.owner, s.location, s.ambit, s.slot);
        let s = &mut self.structs[(strct - 1) as usize];
        s.destroyed = true;
        s.online = false;
        s.health = 0;
        s.defending = None;
        s.block_start_ore_mine = 0;
        s.block_start_ore_refine = 0;
        self.players[(owner - 1) as usize].grid.structs_load -= draw;
        let slots = match location {
            Location::Planet(i) => &mut self.planets[(i - 1) as usize].slots,
            Location::Fleet(i) => &mut self.fleets[(i - 1) as usize].slots,
        };
        slots[ambit.slot_row()][usize::from(slot)] = None;
        for other in &mut self.structs {
            if other.defending == Some(strct) {
                other.defending = None;
            }
        }
        let mut changed = vec![sid(strct), pid(owner)];
        match location {
            Location::Planet(p) => {
                self.refresh_shield(p);
                changed.push(planet_id(p));
            }
            Location::Fleet(f) => {
                if self.fleets[(f - 1) as usize].command_struct == strct {
                    self.fleets[(f - 1) as usize].command_struct = 0;
                }
                changed.push(fid(f));
            }
        }
        events.push(Change {
            category: "struct_status",
            entity: sid(strct),
            changed,
            summary: format!("{} was destroyed", sid(strct)),
            detail: json!({"status": "destroyed"}),
        });
        self.refresh_raids_of(owner, height, events);
    }

    /// Re-evaluates the raid clock of the player's planet and of the planet its fleet is
    /// away at.
    fn refresh_raids_of(&mut self, player: u64, height: u64, events: &mut Vec<Change>) {
        let p = &self.players[(player - 1) as usize];
        let mut planets = vec![p.planet];
        planets.extend(self.fleets[(p.fleet - 1) as usize].away_at);
        for planet in planets {
            self.refresh_raid_event(planet, height, events);
        }
    }

    fn refresh_raid_event(&mut self, planet: u64, height: u64, events: &mut Vec<Change>) {
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

    fn do_explore(&mut self, player: u64, height: u64, events: &mut Vec<Change>) -> Value {
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
            grid: super::world::Grid {
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

    fn do_move(
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

    fn do_attack(
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

    /// A command ship destroyed while its fleet is away defeats the raid: the fleet is
    /// sent home (`attackerDefeated`).
    fn defeat_raid_if_command_ship(&mut self, strct: u64, height: u64, events: &mut Vec<Change>) {
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

    fn do_raid(&mut self, fleet: u64, planet: u64, height: u64, events: &mut Vec<Change>) -> Value {
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
    use super::super::world::WorldConfig;
    use super::*;
    use crate::chain::Signer;

    const H: u64 = 120_000;

    /// A world where players 1 and 2 have full charge, plenty of power, their fleet on
    /// station and their command ship built and online.
    fn ready() -> World {
        let mut w = World::generate(WorldConfig::with_players(8));
        for p in [1, 2] {
            make_ready(&mut w, p);
        }
        assert_eq!(w.check_integrity(), Vec::<String>::new());
        w
    }

    fn make_ready(w: &mut World, p: u64) {
        let fleet = w.players[(p - 1) as usize].fleet;
        let planet = w.players[(p - 1) as usize].planet;
        w.fleets[(fleet - 1) as usize].planet = Some(planet);
        let cmd = w.fleets[(fleet - 1) as usize].command_struct;
        let c = &mut w.structs[(cmd - 1) as usize];
        let before = c.draw();
        c.built = true;
        c.online = true;
        let after = c.draw();
        let g = &mut w.players[(p - 1) as usize].grid;
        g.structs_load = g.structs_load - before + after;
        g.capacity = g.load + g.structs_load + 1_000_000_000;
        g.last_action = 0;
    }

    fn signed(w: &World, player: u64, msg: Msg) -> Signed {
        Signed {
            msg,
            signer: Signer {
                creator: w.address_of(player).map(str::to_string),
                player: None,
            },
        }
    }

    fn missing(r: Result<Applied, Checked>) -> Vec<&'static str> {
        match r {
            Ok(a) => panic!("expected a refusal, got {:?}", a.result),
            Err(c) => c.missing().iter().map(|r| r.requirement).collect(),
        }
    }

    /// A nonce whose hash meets the difficulty of `work` at `height`.
    fn solve(work: &Work, range: u64, height: u64) -> String {
        let need = pow::difficulty(height - work.block_start, range);
        if need > 5 {
            return "1".into(); // out of reach in a test: any nonce fails
        }
        (0u64..)
            .map(|n| n.to_string())
            .find(|n| {
                pow::achieved_difficulty(&pow::hash_hex(&format!("{}{n}", work.prefix()))) >= need
            })
            .unwrap()
    }

    fn free_planet_type(w: &World, player: u64) -> u8 {
        let planet = &w.planets[(w.players[(player - 1) as usize].planet - 1) as usize];
        let present: Vec<u8> = planet
            .slots
            .iter()
            .flatten()
            .flatten()
            .map(|s| w.structs[(*s - 1) as usize].type_id)
            .collect();
        [14u8, 15, 16, 20]
            .into_iter()
            .find(|t| !present.contains(t))
            .expect("some small planet type is free")
    }

    #[test]
    fn build_initiate_draws_power_spends_charge_and_completes_with_a_proof() {
        let mut w = ready();
        let t = free_planet_type(&w, 1);
        let load = w.players[0].grid.structs_load;
        let init = Msg::StructBuildInitiate {
            player: 1,
            struct_type: t,
            ambit: None,
            slot: None,
            location: None,
        };
        let a = w.apply(&signed(&w, 1, init.clone()), H).unwrap();
        let id = a.result["struct_id"].as_str().unwrap().to_string();
        let index: u64 = id[2..].parse().unwrap();
        let kind = struct_type(t).unwrap();
        assert_eq!(w.players[0].grid.structs_load, load + kind.build_draw);
        assert_eq!(w.charge(1, H), 0, "a build resets the charge bar");
        assert_eq!(a.events[0].category, "struct_block_build_start");
        assert!(w.check_integrity().is_empty(), "{:?}", w.check_integrity());

        // Charge is spent: a second build right away is refused, and says how long to wait.
        let again = w.apply(&signed(&w, 1, init), H + 2);
        let Err(c) = again else { panic!() };
        let req = c.missing()[0];
        assert_eq!(req.requirement, "sufficientCharge");
        assert!(
            req.detail.contains("required charge 8 but 1-1 had 2"),
            "{}",
            req.detail
        );

        // At age 1 the difficulty is 64: no proof passes.
        let work = Work {
            action: Action::StructBuild,
            entity_id: id.clone(),
            planet_id: None,
            block_start: H,
        };
        let early = Msg::StructBuildComplete {
            strct: index,
            nonce: "1".into(),
            proof: None,
        };
        assert_eq!(
            missing(w.apply(&signed(&w, 1, early), H + 1)),
            vec!["proofOfWork"]
        );
        // A proof that is not the input's hash is refused whatever its zeros.
        let later = H + 50_000;
        let nonce = solve(&work, kind.build_difficulty, later);
        let forged = Msg::StructBuildComplete {
            strct: index,
            nonce: nonce.clone(),
            proof: Some("0".repeat(64)),
        };
        assert_eq!(
            missing(w.apply(&signed(&w, 1, forged), later)),
            vec!["proofOfWork"]
        );
        let done = Msg::StructBuildComplete {
            strct: index,
            nonce,
            proof: Some(pow::hash_hex(&format!(
                "{}{}",
                work.prefix(),
                solve(&work, kind.build_difficulty, later)
            ))),
        };
        let a = w.apply(&signed(&w, 1, done.clone()), later).unwrap();
        assert_eq!(a.result["online"], true);
        let s = &w.structs[(index - 1) as usize];
        assert!(s.built && s.online);
        assert_eq!(w.players[0].grid.structs_load, load + kind.passive_draw);
        // Not twice.
        assert_eq!(
            missing(w.apply(&signed(&w, 1, done), later)),
            vec!["structInBuildingState"]
        );
        assert!(w.check_integrity().is_empty());
    }

    #[test]
    fn build_refusals_name_what_is_missing() {
        let mut w = ready();
        let t = free_planet_type(&w, 1);
        let msg = |ambit, slot| Msg::StructBuildInitiate {
            player: 1,
            struct_type: t,
            ambit,
            slot,
            location: None,
        };
        // Insufficient power.
        let g = &mut w.players[0].grid;
        g.capacity = g.load + g.structs_load + 10;
        let r = missing(w.apply(&signed(&w, 1, msg(None, None)), H));
        assert_eq!(r, vec!["sufficientPower"]);
        make_ready(&mut w, 1);
        // Wrong ambit: planet structs of these types are not in space... find one that is not allowed.
        let kind = struct_type(t).unwrap();
        let wrong = Ambit::ALL.into_iter().find(|a| !kind.ambits().contains(a));
        if let Some(a) = wrong {
            assert_eq!(
                missing(w.apply(&signed(&w, 1, msg(Some(a), None)), H)),
                vec!["validAmbit"]
            );
        }
        // Fleet away: planet building needs it on station (and the command ship then
        // defends nothing, but is still online).
        let fleet = w.players[0].fleet;
        w.fleets[(fleet - 1) as usize].planet = None;
        assert_eq!(
            missing(w.apply(&signed(&w, 1, msg(None, None)), H)),
            vec!["fleetOnStation"]
        );
        make_ready(&mut w, 1);
        // Command ship offline.
        let cmd = w.fleets[(fleet - 1) as usize].command_struct;
        w.apply(&signed(&w, 1, Msg::StructDeactivate { strct: cmd }), H)
            .unwrap();
        assert_eq!(
            missing(w.apply(&signed(&w, 1, msg(None, None)), H)),
            vec!["commandShipOnline"]
        );
        // Another player's address cannot build for player 1.
        let other = signed(&w, 2, msg(None, None));
        assert!(missing(w.apply(&other, H)).contains(&"ownership"));
        // The offline player.
        let g = &mut w.players[0].grid;
        g.capacity = 0;
        assert!(missing(w.apply(&signed(&w, 1, msg(None, None)), H)).contains(&"playerOnline"));
        // Nothing changed through all of it.
        assert!(w.check_integrity().is_empty());
    }

    #[test]
    fn build_limit_and_taken_slots() {
        let mut w = ready();
        let t = free_planet_type(&w, 1);
        let build = |w: &mut World, h, slot| {
            let s = signed(
                w,
                1,
                Msg::StructBuildInitiate {
                    player: 1,
                    struct_type: t,
                    ambit: None,
                    slot,
                    location: None,
                },
            );
            w.apply(&s, h)
        };
        build(&mut w, H, None).unwrap();
        let r = missing(build(&mut w, H + 100, None));
        assert!(r.contains(&"buildLimit"), "{r:?}");
        // A fleet type into a taken slot of its ambit.
        let fleet = w.players[0].fleet;
        let cmd = &w.structs[(w.fleets[(fleet - 1) as usize].command_struct - 1) as usize];
        let (cmd_ambit, cmd_slot) = (cmd.ambit, cmd.slot);
        let s = signed(
            &w,
            1,
            Msg::StructBuildInitiate {
                player: 1,
                struct_type: 3,
                ambit: Some(cmd_ambit),
                slot: Some(cmd_slot),
                location: None,
            },
        );
        if struct_type(3).unwrap().ambits().contains(&cmd_ambit) {
            assert!(missing(w.apply(&s, H + 200)).contains(&"slotAvailable"));
        }
        assert!(w.check_integrity().is_empty());
    }

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
