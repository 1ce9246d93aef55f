//! The embedded world: typed entities generated deterministically from a seed and a
//! size. Entities refer to each other by 1-based index; every reference points at an
//! entity that exists (checked by [`World::check_integrity`]).

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
    pub username: String,
    pub grid: Grid,
    pub ore_rocks: u64,
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

    pub fn status(&self) -> &'static str {
        if self.destroyed {
            "destroyed"
        } else if self.online {
            "online"
        } else if self.built {
            "built"
        } else {
            "materialized"
        }
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

const BECH32_CHARSET: &[u8] = b"qpzry9x8gf2tvdw0s3jn54khce6mua7l";

fn bech32ish(rng: &mut ChaCha8Rng, prefix: &str) -> String {
    let mut s = String::with_capacity(prefix.len() + 38);
    s.push_str(prefix);
    for _ in 0..38 {
        s.push(BECH32_CHARSET[rng.random_range(0..BECH32_CHARSET.len())] as char);
    }
    s
}

const NAME_HEADS: [&str; 16] = [
    "ash", "bolt", "cinder", "dusk", "ember", "flux", "gale", "halo", "ion", "jade", "kilo",
    "lumen", "mire", "nova", "onyx", "pyre",
];
const NAME_TAILS: [&str; 8] = [
    "runner", "warden", "smith", "drift", "forge", "scout", "miner", "reach",
];

impl World {
    /// Builds the world for `config`. The same config always gives the same world.
    pub fn generate(config: WorldConfig) -> World {
        let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
        let n = config.players.max(1) as u64;
        let guild_count = (n / 8).max(1);
        let height = config.genesis_height;

        let mut w = World {
            config,
            guilds: Vec::with_capacity(guild_count as usize),
            players: Vec::with_capacity(n as usize),
            planets: Vec::with_capacity(n as usize),
            reactors: Vec::with_capacity(guild_count as usize),
            substations: Vec::with_capacity(guild_count as usize),
            structs: Vec::with_capacity(n as usize * 5),
            allocations: Vec::new(),
            infusions: Vec::new(),
            addresses: Vec::with_capacity(n as usize),
            fleets: Vec::with_capacity(n as usize),
            providers: Vec::new(),
            agreements: Vec::new(),
        };

        // Addresses first: every player has one, and guild creators are players.
        for p in 1..=n {
            w.addresses.push(Address {
                address: bech32ish(&mut rng, "structs1"),
                player: p,
                permissions: PERM_ALL,
            });
        }

        // Guild k is founded by player k, which owns its reactor and entry substation.
        for g in 1..=guild_count {
            let creator = w.addresses[(g - 1) as usize].address.clone();
            w.guilds.push(Guild {
                owner: g,
                creator: creator.clone(),
                endpoint: format!("https://guild-{g}.structs.example/api"),
                join_infusion_minimum: rng.random_range(0..5) * UALPHA_PER_GRAM,
                primary_reactor: g,
                entry_substation: g,
                entry_rank: 101,
            });
            w.reactors.push(Reactor {
                guild: g,
                owner: g,
                validator: bech32ish(&mut rng, "structsvaloper1"),
                default_commission: ["0.040000000000000000", "0.050000000000000000"]
                    [rng.random_range(0..2)],
                grid: Grid::default(),
            });
            w.substations.push(Substation {
                owner: g,
                guild: g,
                creator,
                grid: Grid::default(),
            });
        }

        // Players, each with a planet and a fleet of the same index.
        for p in 1..=n {
            let guild = if p <= guild_count {
                Some(p)
            } else if rng.random_bool(0.85) {
                Some(rng.random_range(1..=guild_count))
            } else {
                None
            };
            let head = NAME_HEADS[rng.random_range(0..NAME_HEADS.len())];
            let tail = NAME_TAILS[rng.random_range(0..NAME_TAILS.len())];
            w.players.push(Player {
                guild,
                substation: guild,
                planet: p,
                fleet: p,
                address: p,
                guild_rank: match guild {
                    None => 0,
                    Some(_) if p <= guild_count => 1,
                    Some(_) => 101,
                },
                username: format!("{head}{tail}{p}"),
                grid: Grid {
                    last_action: height.saturating_sub(rng.random_range(0..900)),
                    ore: rng.random_range(0..6),
                    nonce: rng.random_range(0..40),
                    ready: true,
                    ..Grid::default()
                },
                ore_rocks: rng.random_range(0..4),
                alpha: rng.random_range(0..50) * UALPHA_PER_GRAM,
            });
            let creator = w.addresses[(p - 1) as usize].address.clone();
            let max_ore = PLANET_STARTING_ORE;
            w.planets.push(Planet {
                owner: p,
                creator,
                max_ore,
                slots: [[None; 4]; 4],
                grid: Grid {
                    ore: rng.random_range(0..=max_ore),
                    ..Grid::default()
                },
                planetary_shield: 0,
                status: "active",
                block_start_raid: 0,
            });
            w.fleets.push(Fleet {
                owner: p,
                planet: rng.random_bool(0.85).then_some(p),
                away_at: None,
                arrived: 0,
                slots: [[None; 4]; 4],
                command_struct: 0,
            });
        }

        // Structs: a command ship in every fleet, a few more fleet units, and planet
        // structs of distinct types (each planet type has a build limit of one).
        let fleet_types: Vec<&StructType> = struct_types()
            .iter()
            .filter(|t| t.is_fleet() && t.id != 1)
            .collect();
        let planet_types: Vec<&StructType> =
            struct_types().iter().filter(|t| !t.is_fleet()).collect();
        for p in 1..=n {
            let command = w.place_struct(&mut rng, p, struct_type(1).expect("type 1"));
            if let Some(cmd) = command {
                w.fleets[(p - 1) as usize].command_struct = cmd;
            }
            for _ in 0..rng.random_range(0..=3) {
                let t = fleet_types[rng.random_range(0..fleet_types.len())];
                w.place_struct(&mut rng, p, t);
            }
            let mut chosen: Vec<&StructType> = Vec::new();
            let count = rng.random_range(1..=4);
            while chosen.len() < count {
                let t = planet_types[rng.random_range(0..planet_types.len())];
                if !chosen.iter().any(|c| c.id == t.id) {
                    chosen.push(t);
                }
            }
            for t in chosen {
                w.place_struct(&mut rng, p, t);
            }
        }

        // Grid loads follow from the structs: online structs draw passive power, unbuilt
        // ones their build draw; online planetary structs raise their planet's shield.
        for i in 0..w.structs.len() {
            let s = &w.structs[i];
            w.players[(s.owner - 1) as usize].grid.structs_load += s.draw();
        }
        for p in 1..=w.planets.len() as u64 {
            w.refresh_shield(p);
        }
        for player in &mut w.players {
            let online = rng.random_bool(0.9);
            let margin = rng.random_range(0..2_000) * 1_000;
            player.grid.capacity = if online {
                player.grid.structs_load + margin
            } else {
                player.grid.structs_load / 2
            };
        }

        // Reactors and substations: capacity covers their members; one allocation each
        // from reactor to entry substation.
        let mut members = vec![0u64; guild_count as usize];
        for player in &w.players {
            if let Some(g) = player.guild {
                members[(g - 1) as usize] += 1;
            }
        }
        for g in 1..=guild_count {
            let gi = (g - 1) as usize;
            let fuel = rng.random_range(10..200) * UALPHA_PER_GRAM;
            let capacity = fuel * REACTOR_MW_PER_UALPHA;
            w.reactors[gi].grid = Grid {
                fuel,
                capacity,
                power: capacity,
                load: capacity / 2,
                last_action: height.saturating_sub(rng.random_range(0..300)),
                ready: true,
                ..Grid::default()
            };
            w.substations[gi].grid = Grid {
                capacity: capacity / 2,
                connection_capacity: (capacity / 2) / members[gi].max(1),
                connection_count: members[gi],
                load: 0,
                ready: true,
                ..Grid::default()
            };
            let owner = w.guilds[gi].owner;
            w.allocations.push(Allocation {
                kind: "static",
                source: EntityId::new(EntityKind::Reactor, g),
                destination: EntityId::new(EntityKind::Substation, g),
                controller: owner,
                creator: w.addresses[(owner - 1) as usize].address.clone(),
                amount: capacity / 2,
                locked: false,
            });
            // The founder always infuses its reactor; up to two members do too.
            let mut infusers = vec![owner];
            for _ in 0..2 {
                let candidate = rng.random_range(1..=n);
                if w.players[(candidate - 1) as usize].guild == Some(g)
                    && !infusers.contains(&candidate)
                {
                    infusers.push(candidate);
                }
            }
            for player in infusers {
                let fuel = rng.random_range(1..50) * UALPHA_PER_GRAM;
                w.infusions.push(Infusion {
                    destination: EntityId::new(EntityKind::Reactor, g),
                    player,
                    address: w.addresses[(player - 1) as usize].address.clone(),
                    fuel,
                    power: fuel * REACTOR_MW_PER_UALPHA,
                    ratio: REACTOR_MW_PER_UALPHA,
                    commission: w.reactors[gi].default_commission,
                });
            }
        }

        // Providers: some guild members sell energy through their guild's substation;
        // each has one or two agreements backed by an allocation.
        for p in 1..=n {
            let Some(g) = w.players[(p - 1) as usize].guild else {
                continue;
            };
            if !(p == 1 || rng.random_bool(0.1)) {
                continue;
            }
            let provider_index = w.providers.len() as u64 + 1;
            let rate = rng.random_range(1..20) * 10_000;
            w.providers.push(Provider {
                owner: p,
                substation: g,
                creator: w.addresses[(p - 1) as usize].address.clone(),
                rate,
                access_policy: ["openMarket", "guildMarket", "closedMarket"]
                    [rng.random_range(0..3)],
                capacity_minimum: 1_000,
                capacity_maximum: 5_000_000,
                duration_minimum: 100,
                duration_maximum: 100_000,
                grid: Grid::default(),
            });
            for _ in 0..rng.random_range(1..=2) {
                let consumer = rng.random_range(1..=n);
                if consumer == p || n == 1 {
                    continue;
                }
                let capacity = rng.random_range(1..500) * 1_000;
                w.allocations.push(Allocation {
                    kind: "provider-agreement",
                    source: EntityId::new(EntityKind::Provider, provider_index),
                    destination: EntityId::new(EntityKind::Player, consumer),
                    controller: p,
                    creator: w.addresses[(p - 1) as usize].address.clone(),
                    amount: capacity,
                    locked: true,
                });
                let start = height.saturating_sub(rng.random_range(0..5_000));
                w.agreements.push(Agreement {
                    provider: provider_index,
                    consumer,
                    allocation: w.allocations.len() as u64,
                    creator: w.addresses[(consumer - 1) as usize].address.clone(),
                    capacity,
                    start_block: start,
                    end_block: start + rng.random_range(1_000..20_000),
                });
                let pg = &mut w.providers[(provider_index - 1) as usize].grid;
                pg.load += capacity;
                pg.connection_count += 1;
            }
        }
        w
    }

    /// Places a new struct of type `t` for `player` in a free slot of an allowed ambit
    /// (its fleet for fleet types, its planet otherwise). Returns the struct index, or
    /// `None` when every allowed slot is taken.
    fn place_struct(&mut self, rng: &mut ChaCha8Rng, player: u64, t: &StructType) -> Option<u64> {
        let mut ambits = t.ambits();
        // Shuffle deterministically so ambits fill evenly.
        for i in (1..ambits.len()).rev() {
            ambits.swap(i, rng.random_range(0..=i));
        }
        let index = self.structs.len() as u64 + 1;
        let slots: &mut Slots = if t.is_fleet() {
            &mut self.fleets[(player - 1) as usize].slots
        } else {
            &mut self.planets[(player - 1) as usize].slots
        };
        let (ambit, slot) = ambits.iter().find_map(|a| {
            let row = &mut slots[a.slot_row()];
            let free = row.iter().position(Option::is_none)?;
            row[free] = Some(index);
            Some((*a, free as u8))
        })?;
        let location = if t.is_fleet() {
            Location::Fleet(player)
        } else {
            Location::Planet(player)
        };
        let built = rng.random_bool(0.9);
        let height = self.config.genesis_height;
        self.structs.push(Struct {
            type_id: t.id,
            owner: player,
            creator: self.addresses[(player - 1) as usize].address.clone(),
            location,
            ambit,
            slot,
            health: if built {
                rng.random_range(1..=t.max_health)
            } else {
                t.max_health
            },
            built,
            online: built && rng.random_bool(0.85),
            destroyed: false,
            block_start_build: height.saturating_sub(rng.random_range(1..10_000)),
            block_start_ore_mine: 0,
            block_start_ore_refine: 0,
            defending: None,
        });
        // Online extractors and refineries are part-way through a cycle (derived from the
        // index, so the random stream, and with it the rest of the world, is unchanged).
        let s = &mut self.structs[(index - 1) as usize];
        if s.online {
            let cycle_start = height.saturating_sub(1 + (index * 7_919) % 4_000);
            if t.raw["oreMiningDifficulty"].as_u64().unwrap_or(0) > 0 {
                s.block_start_ore_mine = cycle_start;
            }
            if t.raw["oreRefiningDifficulty"].as_u64().unwrap_or(0) > 0 {
                s.block_start_ore_refine = cycle_start;
            }
        }
        Some(index)
    }

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
                    out.push(("planetId", EntityId::new(K::Planet, p)));
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
                out.push(("consumerId", EntityId::new(K::Player, a.consumer)));
                out.push(("allocationId", EntityId::new(K::Allocation, a.allocation)));
            }
        }
        out
    }

    /// Checks that every reference points at an existing entity and that back
    /// references agree (a struct's slot holds it, a player's planet is owned by it).
    /// Returns one line per problem; empty when the world is whole.
    pub fn check_integrity(&self) -> Vec<String> {
        let mut problems = Vec::new();
        for kind in EntityKind::ALL {
            for index in 1..=self.count(kind) {
                let id = EntityId::new(kind, index);
                for (field, target) in self.references_of(id) {
                    if !self.exists(target) {
                        problems.push(format!("{id}.{field} -> {target} does not exist"));
                    }
                }
            }
        }
        let mut loads = vec![0u64; self.players.len()];
        for (i, s) in self.structs.iter().enumerate() {
            let index = i as u64 + 1;
            if let Some(load) = loads.get_mut((s.owner - 1) as usize) {
                *load += s.draw();
            }
            if s.health > s.kind().max_health {
                problems.push(format!("5-{index} has more health than its type allows"));
            }
            if s.destroyed {
                if s.online || s.health != 0 {
                    problems.push(format!("5-{index} is destroyed but online or alive"));
                }
                continue;
            }
            if s.online && !s.built {
                problems.push(format!("5-{index} is online but not built"));
            }
            let slots = match s.location {
                Location::Planet(p) => self.planets.get((p - 1) as usize).map(|x| &x.slots),
                Location::Fleet(f) => self.fleets.get((f - 1) as usize).map(|x| &x.slots),
            };
            let held = slots
                .and_then(|sl| sl[s.ambit.slot_row()][usize::from(s.slot)])
                .is_some_and(|held| held == index);
            if !held {
                problems.push(format!("5-{index} is not in its own slot"));
            }
            let t = struct_type(s.type_id);
            match (t, s.location) {
                (Some(t), Location::Fleet(_)) if t.is_fleet() => {}
                (Some(t), Location::Planet(_)) if !t.is_fleet() => {}
                _ => problems.push(format!("5-{index} has a type that cannot be there")),
            }
            if t.is_some_and(|t| t.possible_ambit & s.ambit.bit() == 0) {
                problems.push(format!("5-{index} is in an ambit its type cannot use"));
            }
        }
        for (i, p) in self.players.iter().enumerate() {
            let index = i as u64 + 1;
            // Resources are unsigned; a subtraction that went below zero would wrap to
            // an enormous value, so anything past 2^62 is a negative resource.
            for (name, v) in [
                ("ore", p.grid.ore),
                ("capacity", p.grid.capacity),
                ("load", p.grid.load),
                ("structs load", p.grid.structs_load),
                ("alpha", p.alpha),
            ] {
                if v > 1 << 62 {
                    problems.push(format!("1-{index} has a negative {name} (wrapped to {v})"));
                }
            }
            if p.grid.structs_load != loads[i] {
                problems.push(format!(
                    "1-{index} has a structs load of {} but its structs draw {}",
                    p.grid.structs_load, loads[i]
                ));
            }
            if self.planets.get((p.planet - 1) as usize).map(|x| x.owner) != Some(index) {
                problems.push(format!("1-{index}'s planet is not owned by it"));
            }
            if self.fleets.get((p.fleet - 1) as usize).map(|x| x.owner) != Some(index) {
                problems.push(format!("1-{index}'s fleet is not owned by it"));
            }
        }
        for (i, planet) in self.planets.iter().enumerate() {
            if planet.grid.ore > planet.max_ore {
                problems.push(format!("2-{} holds more ore than its maximum", i + 1));
            }
            for (row, ambit) in
                planet
                    .slots
                    .iter()
                    .zip([Ambit::Space, Ambit::Air, Ambit::Land, Ambit::Water])
            {
                for (slot, held) in row.iter().enumerate() {
                    let Some(held) = held else { continue };
                    let ok = self.structs.get((*held - 1) as usize).is_some_and(|s| {
                        !s.destroyed
                            && s.location == Location::Planet(i as u64 + 1)
                            && s.ambit == ambit
                            && usize::from(s.slot) == slot
                    });
                    if !ok {
                        problems.push(format!(
                            "2-{} slot {} {slot} holds 5-{held}, which is not there",
                            i + 1,
                            ambit.name()
                        ));
                    }
                }
            }
        }
        for (i, fleet) in self.fleets.iter().enumerate() {
            if fleet.command_struct != 0 {
                let ok = self
                    .structs
                    .get((fleet.command_struct - 1) as usize)
                    .is_some_and(|s| {
                        s.type_id == 1
                            && !s.destroyed
                            && s.location == Location::Fleet(i as u64 + 1)
                    });
                if !ok {
                    problems.push(format!(
                        "9-{}'s command struct is not a live command ship in it",
                        i + 1
                    ));
                }
            }
            if fleet.planet.is_some() && fleet.away_at.is_some() {
                problems.push(format!("9-{} is both on station and away", i + 1));
            }
        }
        problems
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
