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
//!   a mine moves `game::ORE_PER_MINING_COMPLETION` ore from the planet to its owner,
//!   a refine turns one stored ore into `game::UALPHA_PER_REFINED_ORE` ualpha;
//! - a raid completes only while the defender's shields are down and the raid clock
//!   runs, and seizes all the defender's stored ore.
//!
//! Each family of messages has its own file, its requirements beside what applying it
//! changes: `build` (building, activating, deactivating and destroying structs),
//! `mining` (mine and refine completions), `combat` (attacks and defense), `fleet`
//! (moving, raiding and exploring). This module holds what they share: the types a
//! check and an apply return, the requirement list, and the two dispatches; `checks`
//! holds the requirements several families ask for (actor, online, charge, power,
//! proof).

mod build;
mod checks;
mod combat;
mod fleet;
mod mining;
#[cfg(test)]
mod testkit;

use serde_json::Value;

use super::world::{Location, World};
use crate::chain::{Assume, Msg, Requirement, Signed};
use crate::entity::struct_types::{Ambit, StructType};
use crate::entity::{EntityId, EntityKind};
use crate::game::combat::WeaponSlot;

pub use combat::DEFENSE_CANNON_DAMAGE;

/// The requirements of one message, evaluated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    pub requirements: Vec<Requirement>,
    /// The player acting, when it could be resolved.
    pub actor: Option<u64>,
    plan: Option<Decided>,
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
enum Decided {
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

/// Where a message is checked: its signature, the block, and the facts a caller
/// overrides. Every family's `plan_*` opens with it.
#[derive(Clone, Copy)]
struct At<'a> {
    signed: &'a Signed,
    height: u64,
    assume: &'a Assume,
}

/// What a family's checks found: who acts, and what applying the message will do when
/// every requirement holds.
type Planned = (Option<u64>, Option<Decided>);

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

    /// [`Reqs::need`], saying `yes` when it is met and `no` when it is not.
    fn need_either(
        &mut self,
        requirement: &'static str,
        met: bool,
        yes: impl FnOnce() -> String,
        no: impl FnOnce() -> String,
    ) -> bool {
        self.need(requirement, met, if met { yes() } else { no() })
    }

    fn all_met(&self) -> bool {
        self.list.iter().all(|r| r.met)
    }
}

fn type_u64(t: &StructType, field: &str) -> u64 {
    t.raw[field].as_u64().unwrap_or(0)
}

impl World {
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

    /// Hands the message to its family's checks, which say who acts and what applying
    /// it will do.
    fn plan(&self, signed: &Signed, height: u64, assume: &Assume, reqs: &mut Reqs) -> Planned {
        let at = At {
            signed,
            height,
            assume,
        };
        match &signed.msg {
            Msg::PlanetExplore { player } => self.plan_explore(at, *player, reqs),
            Msg::StructBuildInitiate {
                player,
                struct_type: type_id,
                ambit,
                slot,
                location,
            } => self.plan_initiate(at, *player, *type_id, *ambit, *slot, *location, reqs),
            Msg::StructBuildComplete {
                strct,
                nonce,
                proof,
            } => self.plan_complete(at, *strct, nonce, proof.as_deref(), reqs),
            Msg::StructActivate { strct } => self.plan_activate(at, *strct, reqs),
            Msg::StructDeactivate { strct } => self.plan_deactivate(at, *strct, reqs),
            Msg::StructOreMinerComplete {
                strct,
                nonce,
                proof,
            } => self.plan_ore(at, true, *strct, nonce, proof.as_deref(), reqs),
            Msg::StructOreRefineryComplete {
                strct,
                nonce,
                proof,
            } => self.plan_ore(at, false, *strct, nonce, proof.as_deref(), reqs),
            Msg::StructAttack {
                strct,
                targets,
                weapon,
            } => self.plan_attack(at, *strct, targets, *weapon, reqs),
            Msg::StructDefenseSet {
                defender,
                protected,
            } => self.plan_defense_set(at, *defender, *protected, reqs),
            Msg::StructDefenseClear { defender } => self.plan_defense_clear(at, *defender, reqs),
            Msg::FleetMove { fleet, destination } => self.plan_move(at, *fleet, *destination, reqs),
            Msg::PlanetRaidComplete {
                fleet,
                planet,
                nonce,
                proof,
            } => self.plan_raid(at, *fleet, *planet, nonce, proof.as_deref(), reqs),
        }
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

    /// Applies what `check` resolved, through the family that owns the message.
    fn commit(&mut self, plan: Decided, height: u64) -> Applied {
        let mut events = Vec::new();
        let result = match plan {
            Decided::Explore { player } => self.do_explore(player, height, &mut events),
            Decided::Initiate {
                player,
                type_id,
                location,
                ambit,
                slot,
            } => self.do_initiate(player, type_id, location, ambit, slot, height, &mut events),
            Decided::Complete { strct } => self.do_complete(strct, height, &mut events),
            Decided::Activate { strct } => self.do_activate(strct, height, &mut events),
            Decided::Deactivate { strct } => self.do_deactivate(strct, height, &mut events),
            Decided::Mine { strct, planet } => self.do_mine(strct, planet, height, &mut events),
            Decided::Refine { strct } => self.do_refine(strct, height, &mut events),
            Decided::DefenseSet {
                defender,
                protected,
            } => self.do_defense_set(defender, protected, height, &mut events),
            Decided::DefenseClear { defender } => {
                self.do_defense_clear(defender, height, &mut events)
            }
            Decided::Move { fleet, destination } => {
                self.do_move(fleet, destination, height, &mut events)
            }
            Decided::Raid { fleet, planet } => self.do_raid(fleet, planet, height, &mut events),
            Decided::Attack {
                strct,
                target,
                weapon,
            } => self.do_attack(strct, target, weapon, height, &mut events),
        };
        Applied { result, events }
    }

    /// Spends the charge of a struct's action: the bar resets only when the struct's type
    /// has a cost (`field`) for it, since a free action leaves the charge as it was.
    fn charge_used(&mut self, owner: u64, strct: u64, field: &str, height: u64) {
        if type_u64(self.structs[(strct - 1) as usize].kind(), field) > 0 {
            self.players[(owner - 1) as usize].grid.last_action = height;
        }
    }
}
