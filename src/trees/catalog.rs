//! The facts catalog: every fact a tree or strategy may name, its type, the state
//! fields it needs and what it means. The engine that computes them is
//! [`super::facts`].

use serde::Serialize;

use super::STATE_FIELDS;

/// What kind of value a fact holds (checked against conditions when trees validate).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum FactType {
    Bool,
    Int,
    Num,
    Str,
    /// A string (an entity id, an address) or null when there is none.
    Nullable,
}

/// Which state fields a fact is computed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    Player,
    /// `planet_id`, or the player's planet.
    Planet,
    StructType,
    PlayerAndType,
    Target,
    PlayerAndTarget,
}

impl Needs {
    /// Alternatives, each a set of fields that together suffice.
    pub fn alternatives(self) -> Vec<Vec<&'static str>> {
        match self {
            Needs::Player => vec![vec!["player_id"]],
            Needs::Planet => vec![vec!["planet_id"], vec!["player_id"]],
            Needs::StructType => vec![vec!["struct_type"]],
            Needs::PlayerAndType => vec![vec!["player_id", "struct_type"]],
            Needs::Target => vec![vec!["target_planet_id"]],
            Needs::PlayerAndTarget => vec![vec!["player_id", "target_planet_id"]],
        }
    }
}

/// One fact the engine computes.
pub struct FactDef {
    pub name: &'static str,
    pub ty: FactType,
    pub needs: Needs,
    pub description: &'static str,
}

const fn f(name: &'static str, ty: FactType, needs: Needs, description: &'static str) -> FactDef {
    FactDef {
        name,
        ty,
        needs,
        description,
    }
}

use FactType as T;
use Needs as N;

/// Every named fact. Besides these: `state.<field>` (a state field as given) and
/// `requirement` (a rule's verdict; see the module doc of [`super`]).
pub const FACTS: &[FactDef] = &[
    f(
        "player.online",
        T::Bool,
        N::Player,
        "capacity - load - structsLoad >= 0 (or state.player_online)",
    ),
    f(
        "player.charge",
        T::Int,
        N::Player,
        "height - lastAction (or state.charge)",
    ),
    f(
        "player.available_capacity_mw",
        T::Int,
        N::Player,
        "capacity - load - structsLoad in mW, may be negative (or state.available_capacity_mw)",
    ),
    f(
        "player.capacity_mw",
        T::Int,
        N::Player,
        "the player's capacity in mW",
    ),
    f(
        "player.available_ratio",
        T::Num,
        N::Player,
        "available capacity / capacity (0 when capacity is 0)",
    ),
    f(
        "player.capacity_shortfall_mw",
        T::Int,
        N::Player,
        "mW missing to be online: max(0, -available)",
    ),
    f(
        "player.reserve_shortfall_mw",
        T::Int,
        N::Player,
        "mW missing for a 20% reserve: max(0, ceil(capacity / 5) - available)",
    ),
    f(
        "player.stored_ore",
        T::Int,
        N::Player,
        "unrefined ore the player holds (raidable)",
    ),
    f(
        "player.alpha_ualpha",
        T::Int,
        N::Player,
        "Alpha Matter balance in ualpha",
    ),
    f(
        "player.address",
        T::Str,
        N::Player,
        "the player's primary address (a message's creator)",
    ),
    f(
        "player.planet_id",
        T::Str,
        N::Player,
        "the player's home planet",
    ),
    f(
        "player.deactivation_candidate",
        T::Nullable,
        N::Player,
        "the online struct with the largest passive draw, the command ship aside",
    ),
    f(
        "player.reactor_validator",
        T::Nullable,
        N::Player,
        "the validator address of the player's guild's primary reactor",
    ),
    f("fleet.id", T::Str, N::Player, "the player's fleet"),
    f(
        "fleet.on_station",
        T::Bool,
        N::Player,
        "the fleet is on station at the home planet (or state.fleet_on_station)",
    ),
    f(
        "fleet.has_command_ship",
        T::Bool,
        N::Player,
        "the fleet has a command ship",
    ),
    f(
        "fleet.command_ship_id",
        T::Nullable,
        N::Player,
        "the fleet's command ship",
    ),
    f(
        "fleet.command_ship_built",
        T::Bool,
        N::Player,
        "the command ship's build is complete",
    ),
    f(
        "fleet.command_ship_online",
        T::Bool,
        N::Player,
        "the command ship is online (or state.command_ship_online)",
    ),
    f(
        "fleet.combat_structs",
        T::Int,
        N::Player,
        "online structs in the fleet besides the command ship",
    ),
    f(
        "fleet.attacker_id",
        T::Nullable,
        N::Player,
        "the first online combat struct of the fleet",
    ),
    f(
        "fleet.at_target",
        T::Bool,
        N::PlayerAndTarget,
        "the fleet is away at the target planet",
    ),
    f(
        "planet.id",
        T::Str,
        N::Planet,
        "the planet (state.planet_id, else the player's)",
    ),
    f("planet.ore", T::Int, N::Planet, "ore still in the ground"),
    f(
        "planet.shield",
        T::Int,
        N::Planet,
        "planetary shield: the raid proof's difficulty range",
    ),
    f(
        "planet.raid_clock_running",
        T::Bool,
        N::Planet,
        "blockStartRaid is set: a raid can complete",
    ),
    f(
        "planet.shields_vulnerable",
        T::Bool,
        N::Planet,
        "the owner's fleet is away or its command ship is not online",
    ),
    f(
        "planet.free_slots",
        T::Int,
        N::Planet,
        "empty slots over all ambits",
    ),
    f(
        "planet.extractor_id",
        T::Nullable,
        N::Planet,
        "the planet's Ore Extractor",
    ),
    f(
        "planet.extractor_built",
        T::Bool,
        N::Planet,
        "the extractor's build is complete (false without one)",
    ),
    f(
        "planet.extractor_online",
        T::Bool,
        N::Planet,
        "the extractor is online (false without one)",
    ),
    f(
        "planet.extractor_mining",
        T::Bool,
        N::Planet,
        "the extractor's mining cycle has started",
    ),
    f(
        "planet.refinery_id",
        T::Nullable,
        N::Planet,
        "the planet's Ore Refinery",
    ),
    f(
        "planet.refinery_built",
        T::Bool,
        N::Planet,
        "the refinery's build is complete (false without one)",
    ),
    f(
        "planet.refinery_online",
        T::Bool,
        N::Planet,
        "the refinery is online (false without one)",
    ),
    f(
        "planet.refinery_refining",
        T::Bool,
        N::Planet,
        "the refinery's refining cycle has started",
    ),
    f(
        "planet.generator_id",
        T::Nullable,
        N::Planet,
        "an online Field Generator, Continental Power Plant or World Engine",
    ),
    f(
        "planet.struct_count",
        T::Int,
        N::Planet,
        "structs of the condition's struct_type(s) on the planet (online only with online: true)",
    ),
    f(
        "struct_type.id",
        T::Int,
        N::StructType,
        "the state's struct type id",
    ),
    f("struct_type.name", T::Str, N::StructType, "its name"),
    f(
        "struct_type.buildCharge",
        T::Int,
        N::StructType,
        "charge a build needs",
    ),
    f(
        "struct_type.buildDraw",
        T::Int,
        N::StructType,
        "mW drawn while building",
    ),
    f(
        "struct_type.passiveDraw",
        T::Int,
        N::StructType,
        "mW drawn while online",
    ),
    f(
        "struct_type.buildDifficulty",
        T::Int,
        N::StructType,
        "the build proof's difficulty range",
    ),
    f(
        "struct_type.buildLimit",
        T::Int,
        N::StructType,
        "most of the type per location (0: no limit)",
    ),
    f(
        "struct_type.is_fleet",
        T::Bool,
        N::StructType,
        "built in the fleet rather than on the planet",
    ),
    f(
        "build.location_type",
        T::Str,
        N::PlayerAndType,
        "planet or fleet: where the player builds this type",
    ),
    f(
        "build.location_id",
        T::Str,
        N::PlayerAndType,
        "the player's planet or fleet, by the type's category",
    ),
    f("target.planet_id", T::Str, N::Target, "the target planet"),
    f(
        "target.owner",
        T::Str,
        N::Target,
        "the target planet's owner",
    ),
    f(
        "target.shield",
        T::Int,
        N::Target,
        "the target's planetary shield",
    ),
    f(
        "target.shields_vulnerable",
        T::Bool,
        N::Target,
        "the target owner's fleet is away or its command ship is not online",
    ),
    f(
        "target.raid_clock_running",
        T::Bool,
        N::Target,
        "the target's raid clock runs",
    ),
    f(
        "target.command_ship_id",
        T::Nullable,
        N::Target,
        "the target owner's command ship",
    ),
];

/// A fact's type and the state fields it needs (alternatives), by name.
pub fn describe(name: &str) -> Option<(FactType, Vec<Vec<&'static str>>)> {
    if let Some(field) = name.strip_prefix("state.") {
        return STATE_FIELDS
            .iter()
            .find(|(f, _)| *f == field)
            .map(|(f, t)| (*t, vec![vec![*f]]));
    }
    FACTS
        .iter()
        .find(|d| d.name == name)
        .map(|d| (d.ty, d.needs.alternatives()))
}

/// The state fields a requirement fact of this candidate message needs.
pub fn requirement_needs(action: &str, condition_names_type: bool) -> Vec<Vec<&'static str>> {
    match action {
        "build" if !condition_names_type => vec![vec!["player_id", "struct_type"]],
        "move_to_target" => vec![vec!["player_id", "target_planet_id"]],
        _ => vec![vec!["player_id"]],
    }
}
