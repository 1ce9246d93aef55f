//! The embedded world: typed entities generated deterministically from a seed and a
//! size. Entities refer to each other by 1-based index; every reference points at an
//! entity that exists (checked by [`World::check_integrity`]).

mod generate;
mod integrity;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::entity::struct_types::{Ambit, StructType, struct_type, struct_types};
use crate::entity::{EntityId, EntityKind};
use crate::game::{PLANET_STARTING_ORE, REACTOR_MW_PER_UALPHA, UALPHA_PER_GRAM};

/// What to build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorldConfig {
    pub seed: u64,
    /// Number of players; guilds, planets, fleets, structs and the rest scale with it.
    pub players: usize,
    /// The block height the world was generated at.
    pub genesis_height: u64,
}

impl WorldConfig {
    /// Players in the default demo world.
    pub const DEMO_PLAYERS: usize = 24;
    pub const DEFAULT_SEED: u64 = 42;
    pub const DEFAULT_HEIGHT: u64 = 120_000;

    pub fn demo() -> WorldConfig {
        WorldConfig {
            seed: WorldConfig::DEFAULT_SEED,
            players: WorldConfig::DEMO_PLAYERS,
            genesis_height: WorldConfig::DEFAULT_HEIGHT,
        }
    }

    pub fn with_players(players: usize) -> WorldConfig {
        WorldConfig {
            players,
            ..WorldConfig::demo()
        }
    }
}

/// The grid attributes the chain keeps for players, planets, reactors, substations,
/// providers and allocations (all rendered as integer strings).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grid {
    pub ore: u64,
    pub fuel: u64,
    pub capacity: u64,
    pub load: u64,
    pub structs_load: u64,
    pub power: u64,
    pub connection_capacity: u64,
    pub connection_count: u64,
    pub last_action: u64,
    pub nonce: u64,
    pub ready: bool,
}

#[derive(Debug, Clone)]
pub struct Guild {
    pub owner: u64,
    pub creator: String,
    pub endpoint: String,
    pub join_infusion_minimum: u64,
    pub primary_reactor: u64,
    pub entry_substation: u64,
    pub entry_rank: u64,
}

#[derive(Debug, Clone)]
pub struct Player {
    pub guild: Option<u64>,
    pub substation: Option<u64>,
    pub planet: u64,
    pub fleet: u64,
    pub address: u64,
    pub guild_rank: u64,
    /// `Player.name` (the corpus and the web app call it the username).
    pub name: String,
    pub grid: Grid,
    /// The player's alpha in ualpha (`playerInventory.rocks`); its ore is `grid.ore`.
    pub alpha: u64,
}

/// The four slot rows of a planet or fleet, in JSON order: space, air, land, water.
pub type Slots = [[Option<u64>; 4]; 4];

#[derive(Debug, Clone)]
pub struct Planet {
    pub owner: u64,
    pub creator: String,
    pub max_ore: u64,
    pub slots: Slots,
    pub grid: Grid,
    pub planetary_shield: u64,
    /// `active` while it has ore, `complete` once mined out and left for a new one.
    pub status: &'static str,
    /// The block the raid clock started (a raider present and the shields down); 0 when
    /// no raid can complete.
    pub block_start_raid: u64,
}

/// The planetary shield every planet starts with; online planetary structs add their
/// type's `planetaryShieldContribution`.
pub const PLANETARY_SHIELD_BASE: u64 = 25;

#[derive(Debug, Clone)]
pub struct Fleet {
    pub owner: u64,
    /// The planet it is stationed at; `None` when away.
    pub planet: Option<u64>,
    /// Where an away fleet is: a planet it moved to (to raid it), or `None` in transit.
    pub away_at: Option<u64>,
    /// The block it arrived where it is away; raiders queue at a planet in this order.
    pub arrived: u64,
    pub slots: Slots,
    /// The fleet's command ship; 0 when it has none (never built, or destroyed).
    pub command_struct: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    Planet(u64),
    Fleet(u64),
}

#[derive(Debug, Clone)]
pub struct Struct {
    pub type_id: u8,
    pub owner: u64,
    pub creator: String,
    pub location: Location,
    pub ambit: Ambit,
    pub slot: u8,
    pub health: u32,
    pub built: bool,
    pub online: bool,
    /// Destroyed structs stay as entities (their ids keep resolving) but leave their slot.
    pub destroyed: bool,
    pub block_start_build: u64,
    /// The mining cycle's start (set on activation and on every completion); 0 when not
    /// mining.
    pub block_start_ore_mine: u64,
    /// The refining cycle's start, like the mining one.
    pub block_start_ore_refine: u64,
    /// The struct it defends (`protectedStructIndex`), if any.
    pub defending: Option<u64>,
}

impl Struct {
    pub fn kind(&self) -> &'static StructType {
        struct_type(self.type_id).expect("structs only hold known types")
    }

    /// The power it draws from its owner now: the build draw while building, the
    /// passive draw while online, nothing otherwise.
    pub fn draw(&self) -> u64 {
        if self.destroyed {
            0
        } else if !self.built {
            self.kind().build_draw
        } else if self.online {
            self.kind().passive_draw
        } else {
            0
        }
    }

    /// `structAttributes.status`, the chain's bitmask: every struct is materialized,
    /// and built, online and destroyed add their bits.
    pub fn status_bits(&self) -> u64 {
        use crate::entity::records::StructStatus as S;
        let mut bits = S::MATERIALIZED;
        if self.built {
            bits |= S::BUILT;
        }
        if self.online && !self.destroyed {
            bits |= S::ONLINE;
        }
        if self.destroyed {
            bits |= S::DESTROYED;
        }
        bits
    }

    /// The state in one word, for messages: destroyed, online, built or materialized.
    pub fn status(&self) -> &'static str {
        crate::entity::records::StructStatus(self.status_bits()).word()
    }
}

#[derive(Debug, Clone)]
pub struct Reactor {
    pub guild: u64,
    pub owner: u64,
    pub validator: String,
    pub default_commission: &'static str,
    pub grid: Grid,
}

#[derive(Debug, Clone)]
pub struct Substation {
    pub owner: u64,
    pub guild: u64,
    pub creator: String,
    pub grid: Grid,
}

#[derive(Debug, Clone)]
pub struct Allocation {
    pub kind: &'static str,
    pub source: EntityId,
    pub destination: EntityId,
    pub controller: u64,
    pub creator: String,
    pub amount: u64,
    pub locked: bool,
}

#[derive(Debug, Clone)]
pub struct Infusion {
    pub destination: EntityId,
    pub player: u64,
    pub address: String,
    pub fuel: u64,
    pub power: u64,
    pub ratio: u64,
    pub commission: &'static str,
}

#[derive(Debug, Clone)]
pub struct Address {
    pub address: String,
    pub player: u64,
    pub permissions: u64,
}

#[derive(Debug, Clone)]
pub struct Provider {
    pub owner: u64,
    pub substation: u64,
    pub creator: String,
    pub rate: u64,
    pub access_policy: &'static str,
    pub capacity_minimum: u64,
    pub capacity_maximum: u64,
    pub duration_minimum: u64,
    pub duration_maximum: u64,
    pub grid: Grid,
}

#[derive(Debug, Clone)]
pub struct Agreement {
    pub provider: u64,
    pub consumer: u64,
    pub allocation: u64,
    pub creator: String,
    pub capacity: u64,
    pub start_block: u64,
    pub end_block: u64,
}

/// Every entity of the world, each kind in a vector where index `i` lives at `i - 1`.
#[derive(Debug, Clone)]
pub struct World {
    pub config: WorldConfig,
    pub guilds: Vec<Guild>,
    pub players: Vec<Player>,
    pub planets: Vec<Planet>,
    pub reactors: Vec<Reactor>,
    pub substations: Vec<Substation>,
    pub structs: Vec<Struct>,
    pub allocations: Vec<Allocation>,
    pub infusions: Vec<Infusion>,
    pub addresses: Vec<Address>,
    pub fleets: Vec<Fleet>,
    pub providers: Vec<Provider>,
    pub agreements: Vec<Agreement>,
}

/// `PermAll`: every permission bit (0-24) set.
pub const PERM_ALL: u64 = 33_554_431;

impl World {
    /// How many entities of `kind` exist.
    pub fn count(&self, kind: EntityKind) -> u64 {
        (match kind {
            EntityKind::Guild => self.guilds.len(),
            EntityKind::Player => self.players.len(),
            EntityKind::Planet => self.planets.len(),
            EntityKind::Reactor => self.reactors.len(),
            EntityKind::Substation => self.substations.len(),
            EntityKind::Struct => self.structs.len(),
            EntityKind::Allocation => self.allocations.len(),
            EntityKind::Infusion => self.infusions.len(),
            EntityKind::Address => self.addresses.len(),
            EntityKind::Fleet => self.fleets.len(),
            EntityKind::Provider => self.providers.len(),
            EntityKind::Agreement => self.agreements.len(),
        }) as u64
    }

    pub fn exists(&self, id: EntityId) -> bool {
        id.index >= 1 && id.index <= self.count(id.kind)
    }

    /// The player that owns or controls an entity (a player owns itself).
    pub fn owner_of(&self, id: EntityId) -> Option<u64> {
        if !self.exists(id) {
            return None;
        }
        let i = (id.index - 1) as usize;
        Some(match id.kind {
            EntityKind::Guild => self.guilds[i].owner,
            EntityKind::Player => id.index,
            EntityKind::Planet => self.planets[i].owner,
            EntityKind::Reactor => self.reactors[i].owner,
            EntityKind::Substation => self.substations[i].owner,
            EntityKind::Struct => self.structs[i].owner,
            EntityKind::Allocation => self.allocations[i].controller,
            EntityKind::Infusion => self.infusions[i].player,
            EntityKind::Address => self.addresses[i].player,
            EntityKind::Fleet => self.fleets[i].owner,
            EntityKind::Provider => self.providers[i].owner,
            EntityKind::Agreement => self.agreements[i].consumer,
        })
    }

    /// The guild an entity belongs to: its own guild field, or its owner's guild.
    pub fn guild_of(&self, id: EntityId) -> Option<u64> {
        if !self.exists(id) {
            return None;
        }
        let i = (id.index - 1) as usize;
        match id.kind {
            EntityKind::Guild => Some(id.index),
            EntityKind::Reactor => Some(self.reactors[i].guild),
            EntityKind::Substation => Some(self.substations[i].guild),
            _ => {
                let owner = self.owner_of(id)?;
                self.players[(owner - 1) as usize].guild
            }
        }
    }

    /// Every entity id one entity refers to, with the field that holds it. Used by the
    /// integrity check; the JSON renderer writes the same references.
    ///
    /// A declarative table: one arm a kind.
    pub fn references_of(&self, id: EntityId) -> Vec<(&'static str, EntityId)> {
        use EntityKind as K;
        let mut out = Vec::new();
        if !self.exists(id) {
            return out;
        }
        let i = (id.index - 1) as usize;
        let slot_refs = |out: &mut Vec<(&'static str, EntityId)>, slots: &Slots| {
            for row in slots {
                for s in row.iter().flatten() {
                    out.push(("slots", EntityId::new(K::Struct, *s)));
                }
            }
        };
        match id.kind {
            K::Guild => {
                let g = &self.guilds[i];
                out.push(("owner", EntityId::new(K::Player, g.owner)));
                out.push((
                    "primaryReactorId",
                    EntityId::new(K::Reactor, g.primary_reactor),
                ));
                out.push((
                    "entrySubstationId",
                    EntityId::new(K::Substation, g.entry_substation),
                ));
            }
            K::Player => {
                let p = &self.players[i];
                if let Some(g) = p.guild {
                    out.push(("guildId", EntityId::new(K::Guild, g)));
                }
                if let Some(s) = p.substation {
                    out.push(("substationId", EntityId::new(K::Substation, s)));
                }
                out.push(("planetId", EntityId::new(K::Planet, p.planet)));
                out.push(("fleetId", EntityId::new(K::Fleet, p.fleet)));
                out.push(("address", EntityId::new(K::Address, p.address)));
            }
            K::Planet => {
                let p = &self.planets[i];
                out.push(("owner", EntityId::new(K::Player, p.owner)));
                slot_refs(&mut out, &p.slots);
            }
            K::Reactor => {
                let r = &self.reactors[i];
                out.push(("guildId", EntityId::new(K::Guild, r.guild)));
                out.push(("owner", EntityId::new(K::Player, r.owner)));
            }
            K::Substation => {
                out.push(("owner", EntityId::new(K::Player, self.substations[i].owner)));
            }
            K::Struct => {
                let s = &self.structs[i];
                out.push(("owner", EntityId::new(K::Player, s.owner)));
                if let Some(d) = s.defending {
                    out.push(("protectedStructIndex", EntityId::new(K::Struct, d)));
                }
                out.push((
                    "locationId",
                    match s.location {
                        Location::Planet(p) => EntityId::new(K::Planet, p),
                        Location::Fleet(f) => EntityId::new(K::Fleet, f),
                    },
                ));
            }
            K::Allocation => {
                let a = &self.allocations[i];
                out.push(("sourceObjectId", a.source));
                out.push(("destinationId", a.destination));
                out.push(("controller", EntityId::new(K::Player, a.controller)));
            }
            K::Infusion => {
                let f = &self.infusions[i];
                out.push(("destinationId", f.destination));
                out.push(("playerId", EntityId::new(K::Player, f.player)));
            }
            K::Address => {
                out.push((
                    "playerId",
                    EntityId::new(K::Player, self.addresses[i].player),
                ));
            }
            K::Fleet => {
                let f = &self.fleets[i];
                out.push(("owner", EntityId::new(K::Player, f.owner)));
                if let Some(p) = f.planet.or(f.away_at) {
                    out.push(("locationId", EntityId::new(K::Planet, p)));
                }
                if f.command_struct != 0 {
                    out.push(("commandStruct", EntityId::new(K::Struct, f.command_struct)));
                }
                slot_refs(&mut out, &f.slots);
            }
            K::Provider => {
                let p = &self.providers[i];
                out.push(("owner", EntityId::new(K::Player, p.owner)));
                out.push(("substationId", EntityId::new(K::Substation, p.substation)));
            }
            K::Agreement => {
                let a = &self.agreements[i];
                out.push(("providerId", EntityId::new(K::Provider, a.provider)));
                out.push(("owner", EntityId::new(K::Player, a.consumer)));
                out.push(("allocationId", EntityId::new(K::Allocation, a.allocation)));
            }
        }
        out
    }

    /// The player's charge: blocks since its last charge-consuming action.
    pub fn charge(&self, player: u64, height: u64) -> u64 {
        height.saturating_sub(self.players[(player - 1) as usize].grid.last_action)
    }

    /// Capacity left after the player's load and its structs' load (may be negative).
    pub fn available_capacity(&self, player: u64) -> i128 {
        let g = &self.players[(player - 1) as usize].grid;
        i128::from(g.capacity) - i128::from(g.load) - i128::from(g.structs_load)
    }

    /// A player is online while its capacity covers its load.
    pub fn player_online(&self, player: u64) -> bool {
        self.available_capacity(player) >= 0
    }

    /// The planet's shield: the base plus what its online planetary structs contribute.
    pub fn refresh_shield(&mut self, planet: u64) {
        let p = &self.planets[(planet - 1) as usize];
        let mut shield = PLANETARY_SHIELD_BASE;
        for s in p.slots.iter().flatten().flatten() {
            let st = &self.structs[(*s - 1) as usize];
            if st.online {
                shield += st.kind().raw["planetaryShieldContribution"]
                    .as_u64()
                    .unwrap_or(0);
            }
        }
        self.planets[(planet - 1) as usize].planetary_shield = shield;
    }

    /// True when the planet's owner cannot defend its shields: its fleet is off station,
    /// or its command ship is missing, destroyed or offline.
    pub fn shields_vulnerable(&self, planet: u64) -> bool {
        let owner = self.planets[(planet - 1) as usize].owner;
        let player = &self.players[(owner - 1) as usize];
        if player.planet != planet {
            return true;
        }
        let fleet = &self.fleets[(player.fleet - 1) as usize];
        if fleet.planet != Some(planet) || fleet.command_struct == 0 {
            return true;
        }
        let cmd = &self.structs[(fleet.command_struct - 1) as usize];
        cmd.destroyed || !cmd.online
    }

    /// Away fleets at the planet, first in line first.
    pub fn raiders_at(&self, planet: u64) -> Vec<u64> {
        let mut at: Vec<(u64, u64)> = self
            .fleets
            .iter()
            .enumerate()
            .filter(|(_, f)| f.away_at == Some(planet))
            .map(|(i, f)| (f.arrived, i as u64 + 1))
            .collect();
        at.sort_unstable();
        at.into_iter().map(|(_, f)| f).collect()
    }

    /// Starts the planet's raid clock when a raider is present and the shields are down,
    /// and stops it otherwise. Returns true when it changed.
    pub fn refresh_raid_clock(&mut self, planet: u64, height: u64) -> bool {
        let open = !self.raiders_at(planet).is_empty() && self.shields_vulnerable(planet);
        let p = &mut self.planets[(planet - 1) as usize];
        let before = p.block_start_raid;
        if open && p.block_start_raid == 0 {
            p.block_start_raid = height.max(1);
        } else if !open {
            p.block_start_raid = 0;
        }
        before != p.block_start_raid
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demo_world_is_whole() {
        let w = World::generate(WorldConfig::demo());
        assert_eq!(w.players.len(), WorldConfig::DEMO_PLAYERS);
        assert_eq!(w.check_integrity(), Vec::<String>::new());
        for kind in EntityKind::ALL {
            assert!(w.count(kind) > 0, "the demo world has no {kind}");
        }
    }

    #[test]
    fn worlds_of_many_sizes_and_seeds_are_whole() {
        for players in [1, 2, 7, 8, 9, 50, 333] {
            for seed in [0, 1, 42, u64::MAX] {
                let w = World::generate(WorldConfig {
                    seed,
                    players,
                    genesis_height: 10,
                });
                assert_eq!(w.players.len(), players);
                let problems = w.check_integrity();
                assert!(problems.is_empty(), "{players}/{seed}: {problems:?}");
            }
        }
    }

    #[test]
    fn every_fleet_has_a_command_ship() {
        let w = World::generate(WorldConfig::with_players(200));
        for f in &w.fleets {
            let cmd = &w.structs[(f.command_struct - 1) as usize];
            assert_eq!(cmd.type_id, 1);
            assert_eq!(cmd.owner, f.owner);
        }
    }

    #[test]
    fn planet_types_respect_their_build_limit() {
        let w = World::generate(WorldConfig::with_players(300));
        for (pi, planet) in w.planets.iter().enumerate() {
            let mut seen = std::collections::HashSet::new();
            for s in planet.slots.iter().flatten().flatten() {
                let t = w.structs[(*s - 1) as usize].type_id;
                assert!(seen.insert(t), "planet 2-{} has type {t} twice", pi + 1);
            }
        }
    }
}
