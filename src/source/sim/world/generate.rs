//! A world generated from a seed: guilds, players, planets, fleets and structs placed
//! as the chain would have them, deterministic for a seed.

use super::*;

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
        w.generate_addresses(&mut rng, n);
        w.found_guilds(&mut rng, guild_count);
        for p in 1..=n {
            w.generate_player(&mut rng, p, guild_count);
        }
        w.generate_structs(&mut rng, n);
        w.settle_player_grids(&mut rng);
        w.power_guilds(&mut rng, n, guild_count);
        for p in 1..=n {
            w.open_provider(&mut rng, p, n);
        }
        w
    }

    /// An address for every player, made first: guild creators are players.
    fn generate_addresses(&mut self, rng: &mut ChaCha8Rng, n: u64) {
        for p in 1..=n {
            self.addresses.push(Address {
                address: bech32ish(rng, "structs1"),
                player: p,
                permissions: PERM_ALL,
            });
        }
    }

    /// The guilds: guild k is founded by player k, which owns its reactor and entry
    /// substation.
    fn found_guilds(&mut self, rng: &mut ChaCha8Rng, guild_count: u64) {
        for g in 1..=guild_count {
            let creator = self.addresses[(g - 1) as usize].address.clone();
            self.guilds.push(Guild {
                owner: g,
                creator: creator.clone(),
                endpoint: format!("https://guild-{g}.structs.example/api"),
                join_infusion_minimum: rng.random_range(0..5) * UALPHA_PER_GRAM,
                primary_reactor: g,
                entry_substation: g,
                entry_rank: 101,
            });
            self.reactors.push(Reactor {
                guild: g,
                owner: g,
                validator: bech32ish(rng, "structsvaloper1"),
                default_commission: ["0.040000000000000000", "0.050000000000000000"]
                    [rng.random_range(0..2)],
                grid: Grid::default(),
            });
            self.substations.push(Substation {
                owner: g,
                guild: g,
                creator,
                grid: Grid::default(),
            });
        }
    }

    /// Player `p`, with a planet and a fleet of the same index.
    fn generate_player(&mut self, rng: &mut ChaCha8Rng, p: u64, guild_count: u64) {
        let height = self.config.genesis_height;
        let guild = if p <= guild_count {
            Some(p)
        } else if rng.random_bool(0.85) {
            Some(rng.random_range(1..=guild_count))
        } else {
            None
        };
        let head = NAME_HEADS[rng.random_range(0..NAME_HEADS.len())];
        let tail = NAME_TAILS[rng.random_range(0..NAME_TAILS.len())];
        self.players.push(Player {
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
            name: format!("{head}{tail}{p}"),
            grid: Grid {
                last_action: height.saturating_sub(rng.random_range(0..900)),
                ore: rng.random_range(0..6),
                nonce: rng.random_range(0..40),
                ready: true,
                ..Grid::default()
            },
            alpha: {
                // A draw the player once kept (ore in its inventory, which the chain
                // does not have), kept so that every seed still makes its world.
                let _: u64 = rng.random_range(0..4);
                rng.random_range(0..50) * UALPHA_PER_GRAM
            },
        });
        let creator = self.addresses[(p - 1) as usize].address.clone();
        let max_ore = PLANET_STARTING_ORE;
        self.planets.push(Planet {
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
        self.fleets.push(Fleet {
            owner: p,
            planet: rng.random_bool(0.85).then_some(p),
            away_at: None,
            arrived: 0,
            slots: [[None; 4]; 4],
            command_struct: 0,
        });
    }

    /// Structs: a command ship in every fleet, a few more fleet units, and planet
    /// structs of distinct types (each planet type has a build limit of one).
    fn generate_structs(&mut self, rng: &mut ChaCha8Rng, n: u64) {
        let fleet_types: Vec<&StructType> = struct_types()
            .iter()
            .filter(|t| t.is_fleet() && t.id != 1)
            .collect();
        let planet_types: Vec<&StructType> =
            struct_types().iter().filter(|t| !t.is_fleet()).collect();
        for p in 1..=n {
            let command = self.place_struct(rng, p, struct_type(1).expect("type 1"));
            if let Some(cmd) = command {
                self.fleets[(p - 1) as usize].command_struct = cmd;
            }
            for _ in 0..rng.random_range(0..=3) {
                let t = fleet_types[rng.random_range(0..fleet_types.len())];
                self.place_struct(rng, p, t);
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
                self.place_struct(rng, p, t);
            }
        }
    }

    /// Grid loads follow from the structs: online structs draw passive power, unbuilt
    /// ones their build draw; online planetary structs raise their planet's shield.
    /// Most players have capacity to spare; the rest are short of their load.
    fn settle_player_grids(&mut self, rng: &mut ChaCha8Rng) {
        for i in 0..self.structs.len() {
            let s = &self.structs[i];
            self.players[(s.owner - 1) as usize].grid.structs_load += s.draw();
        }
        for p in 1..=self.planets.len() as u64 {
            self.refresh_shield(p);
        }
        for player in &mut self.players {
            let online = rng.random_bool(0.9);
            let margin = rng.random_range(0..2_000) * 1_000;
            player.grid.capacity = if online {
                player.grid.structs_load + margin
            } else {
                player.grid.structs_load / 2
            };
        }
    }

    /// Reactors and substations: capacity covers their members; one allocation each
    /// from reactor to entry substation, and the reactor's infusions.
    fn power_guilds(&mut self, rng: &mut ChaCha8Rng, n: u64, guild_count: u64) {
        let height = self.config.genesis_height;
        let mut members = vec![0u64; guild_count as usize];
        for player in &self.players {
            if let Some(g) = player.guild {
                members[(g - 1) as usize] += 1;
            }
        }
        for g in 1..=guild_count {
            let gi = (g - 1) as usize;
            let fuel = rng.random_range(10..200) * UALPHA_PER_GRAM;
            let capacity = fuel * REACTOR_MW_PER_UALPHA;
            self.reactors[gi].grid = Grid {
                fuel,
                capacity,
                power: capacity,
                load: capacity / 2,
                last_action: height.saturating_sub(rng.random_range(0..300)),
                ready: true,
                ..Grid::default()
            };
            self.substations[gi].grid = Grid {
                capacity: capacity / 2,
                connection_capacity: (capacity / 2) / members[gi].max(1),
                connection_count: members[gi],
                load: 0,
                ready: true,
                ..Grid::default()
            };
            let owner = self.guilds[gi].owner;
            self.allocations.push(Allocation {
                kind: "static",
                source: EntityId::new(EntityKind::Reactor, g),
                destination: EntityId::new(EntityKind::Substation, g),
                controller: owner,
                creator: self.addresses[(owner - 1) as usize].address.clone(),
                amount: capacity / 2,
                locked: false,
            });
            self.infuse_reactor(rng, g, n);
        }
    }

    /// The founder of guild `g` always infuses its reactor; up to two members do too.
    fn infuse_reactor(&mut self, rng: &mut ChaCha8Rng, g: u64, n: u64) {
        let gi = (g - 1) as usize;
        let owner = self.guilds[gi].owner;
        let mut infusers = vec![owner];
        for _ in 0..2 {
            let candidate = rng.random_range(1..=n);
            if self.players[(candidate - 1) as usize].guild == Some(g)
                && !infusers.contains(&candidate)
            {
                infusers.push(candidate);
            }
        }
        for player in infusers {
            let fuel = rng.random_range(1..50) * UALPHA_PER_GRAM;
            self.infusions.push(Infusion {
                destination: EntityId::new(EntityKind::Reactor, g),
                player,
                address: self.addresses[(player - 1) as usize].address.clone(),
                fuel,
                power: fuel * REACTOR_MW_PER_UALPHA,
                ratio: REACTOR_MW_PER_UALPHA,
                commission: self.reactors[gi].default_commission,
            });
        }
    }

    /// Providers: some guild members (player 1 always, others by chance) sell energy
    /// through their guild's substation, with one or two agreements.
    fn open_provider(&mut self, rng: &mut ChaCha8Rng, p: u64, n: u64) {
        let Some(g) = self.players[(p - 1) as usize].guild else {
            return;
        };
        if !(p == 1 || rng.random_bool(0.1)) {
            return;
        }
        let provider_index = self.providers.len() as u64 + 1;
        let rate = rng.random_range(1..20) * 10_000;
        self.providers.push(Provider {
            owner: p,
            substation: g,
            creator: self.addresses[(p - 1) as usize].address.clone(),
            rate,
            access_policy: ["openMarket", "guildMarket", "closedMarket"][rng.random_range(0..3)],
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
            self.sign_agreement(rng, provider_index, p, consumer);
        }
    }

    /// An agreement of provider `provider_index` (owned by `p`) with `consumer`, backed
    /// by a locked allocation and counted in the provider's load.
    fn sign_agreement(&mut self, rng: &mut ChaCha8Rng, provider_index: u64, p: u64, consumer: u64) {
        let height = self.config.genesis_height;
        let capacity = rng.random_range(1..500) * 1_000;
        self.allocations.push(Allocation {
            kind: "providerAgreement",
            source: EntityId::new(EntityKind::Provider, provider_index),
            destination: EntityId::new(EntityKind::Player, consumer),
            controller: p,
            creator: self.addresses[(p - 1) as usize].address.clone(),
            amount: capacity,
            locked: true,
        });
        let start = height.saturating_sub(rng.random_range(0..5_000));
        self.agreements.push(Agreement {
            provider: provider_index,
            consumer,
            allocation: self.allocations.len() as u64,
            creator: self.addresses[(consumer - 1) as usize].address.clone(),
            capacity,
            start_block: start,
            end_block: start + rng.random_range(1_000..20_000),
        });
        let pg = &mut self.providers[(provider_index - 1) as usize].grid;
        pg.load += capacity;
        pg.connection_count += 1;
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
}
