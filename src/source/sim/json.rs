//! Renders world entities exactly as a node answers `GET /structs/{kind}/{id}`: the
//! records of [`crate::entity::records`] (every field present, integers as strings,
//! enums by name), the core object under its kind's key and what the node puts beside
//! it. What the sim keeps beyond the chain (a fleet in transit, an allocation's lock)
//! stays inside it.

use std::collections::HashMap;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::world::{Grid, Location, Slots, World};
use crate::entity::records::{self, StructStatus};
use crate::entity::{EntityId, EntityKind};

fn s(n: u64) -> Value {
    Value::String(n.to_string())
}

fn id(kind: EntityKind, index: u64) -> Value {
    Value::String(EntityId::new(kind, index).to_string())
}

fn opt_id(kind: EntityKind, index: Option<u64>) -> Value {
    index.map_or_else(|| Value::String(String::new()), |i| id(kind, i))
}

fn grid(g: &Grid) -> Value {
    records::GRID_ATTRIBUTES.record([
        ("ore", s(g.ore)),
        ("fuel", s(g.fuel)),
        ("capacity", s(g.capacity)),
        ("load", s(g.load)),
        ("structsLoad", s(g.structs_load)),
        ("power", s(g.power)),
        ("connectionCapacity", s(g.connection_capacity)),
        ("connectionCount", s(g.connection_count)),
        ("lastAction", s(g.last_action)),
        ("nonce", s(g.nonce)),
        ("ready", s(u64::from(g.ready))),
    ])
}

fn slot_row(row: &[Option<u64>; 4]) -> Value {
    Value::Array(row.iter().map(|s| opt_id(EntityKind::Struct, *s)).collect())
}

fn slot_fields(slots: &Slots) -> [(&'static str, Value); 8] {
    [
        ("space", slot_row(&slots[0])),
        ("air", slot_row(&slots[1])),
        ("land", slot_row(&slots[2])),
        ("water", slot_row(&slots[3])),
        ("spaceSlots", s(4)),
        ("airSlots", s(4)),
        ("landSlots", s(4)),
        ("waterSlots", s(4)),
    ]
}

/// A guild's name: the sim draws none at random (a new draw would change every seeded
/// world), so each guild takes one from this list by its index.
const GUILD_NAMES: [&str; 8] = [
    "Iron Meridian",
    "Solar Accord",
    "Deepcore Union",
    "Ashen Fleet",
    "Quiet Lattice",
    "Red Perihelion",
    "Hollow Crown",
    "Tidewater Pact",
];

/// The 20 bytes a reactor's `rawAddress` holds (the validator's operator address), in
/// base64 as the node writes bytes; the sim derives them from the validator's name.
fn raw_address(validator: &str) -> Value {
    use base64::Engine as _;
    let digest = Sha256::digest(validator.as_bytes());
    Value::String(base64::engine::general_purpose::STANDARD.encode(&digest[..20]))
}

/// The records of one list, rendered as the list holds them ([`World::render_listed`]),
/// with the planets' queues of fleets found once for the whole list.
pub struct Lister<'a> {
    world: &'a World,
    queues: std::cell::OnceCell<HashMap<u64, Vec<u64>>>,
}

impl Lister<'_> {
    pub fn render(&self, eid: EntityId) -> Option<Value> {
        let queues = matches!(eid.kind, EntityKind::Planet | EntityKind::Fleet)
            .then(|| self.queues.get_or_init(|| self.world.location_queues()));
        let v = self.world.render_as(eid, false, queues)?;
        Some(match eid.kind.rest_key() {
            Some(key) => json!({ key: v.get(key)? }),
            None => v,
        })
    }
}

impl World {
    /// The records of a kind the chain keeps without ids (infusions, addresses), each
    /// as its store key and the sim's index, in the store's order (the keys' bytes): an
    /// infusion's key is `destinationId/address` (under one destination, the address
    /// alone: `within_destination`), an address record's the address. Empty for kinds
    /// with ids, whose order is their ids' ([`crate::entity::order`]).
    pub fn keyed_order(&self, kind: EntityKind, within_destination: bool) -> Vec<(String, u64)> {
        let mut keyed: Vec<(String, u64)> = match kind {
            EntityKind::Infusion => self
                .infusions
                .iter()
                .zip(1u64..)
                .map(|(f, i)| {
                    let key = if within_destination {
                        f.address.clone()
                    } else {
                        format!("{}/{}", f.destination, f.address)
                    };
                    (key, i)
                })
                .collect(),
            EntityKind::Address => self
                .addresses
                .iter()
                .zip(1u64..)
                .map(|(a, i)| (a.address.clone(), i))
                .collect(),
            _ => Vec::new(),
        };
        keyed.sort();
        keyed
    }

    /// The entity's JSON as `GET /structs/{kind}/{id}` returns it, or `None` when it
    /// does not exist. Infusions and addresses have no id on the chain: the sim's
    /// `7-N` and `8-N` name its records, and their JSON carries none.
    pub fn render(&self, eid: EntityId) -> Option<Value> {
        self.render_as(eid, true, None)
    }

    /// The entity as a list holds it: its record alone, under its kind's key (an
    /// address record bare), without the blocks a read of one adds; cheaper, since a
    /// struct's defenders are found by a scan of every struct. A list of many is
    /// rendered through [`World::lister`], which finds the planets' queues once.
    pub fn render_listed(&self, eid: EntityId) -> Option<Value> {
        self.lister().render(eid)
    }

    /// Renders the records of one list, the planets' queues of fleets found once.
    pub fn lister(&self) -> Lister<'_> {
        Lister {
            world: self,
            queues: std::cell::OnceCell::new(),
        }
    }

    /// The fleets visiting each planet, first in line first (by arrival): the chain's
    /// location lists (`Planet.locationListStart`…`Last`, linked through each
    /// fleet's `locationListForward`, towards the planet, and `…Backward`).
    pub fn location_queues(&self) -> HashMap<u64, Vec<u64>> {
        let mut at: HashMap<u64, Vec<(u64, u64)>> = HashMap::new();
        for (i, f) in self.fleets.iter().enumerate() {
            if let Some(planet) = f.away_at {
                at.entry(planet)
                    .or_default()
                    .push((f.arrived, i as u64 + 1));
            }
        }
        at.into_iter()
            .map(|(planet, mut fleets)| {
                fleets.sort_unstable();
                (planet, fleets.into_iter().map(|(_, f)| f).collect())
            })
            .collect()
    }

    /// The entity's JSON, whole as a read of one returns it or (`whole` false) as a
    /// list holds it, the planets' queues taken from `queues` when given.
    fn render_as(
        &self,
        eid: EntityId,
        whole: bool,
        queues: Option<&HashMap<u64, Vec<u64>>>,
    ) -> Option<Value> {
        use EntityKind as K;
        if !self.exists(eid) {
            return None;
        }
        let i = (eid.index - 1) as usize;
        let this = Value::String(eid.to_string());
        let index = s(eid.index);
        Some(match eid.kind {
            K::Guild => self.guild_json(i, this, index),
            K::Player => self.player_json(i, this, index),
            K::Planet => self.planet_json(eid, this, queues),
            K::Reactor => self.reactor_json(i, this),
            K::Substation => self.substation_json(i, this),
            K::Struct => self.struct_json(eid, this, index, whole),
            K::Allocation => self.allocation_json(i, this, index),
            K::Infusion => self.infusion_json(i),
            K::Address => self.address_json(i),
            K::Fleet => self.fleet_json(eid, this, queues),
            K::Provider => self.provider_json(i, this, index),
            K::Agreement => self.agreement_json(i, this),
        })
    }

    /// The queue at a planet: from the list's, or found now for one record.
    fn queue_at(&self, planet: u64, queues: Option<&HashMap<u64, Vec<u64>>>) -> Vec<u64> {
        match queues {
            Some(q) => q.get(&planet).cloned().unwrap_or_default(),
            None => self.raiders_at(planet),
        }
    }

    /// Guild `i` (from 0), under `Guild`.
    fn guild_json(&self, i: usize, this: Value, index: Value) -> Value {
        let g = &self.guilds[i];
        let guild = records::GUILD.record([
            ("id", this),
            ("index", index),
            ("endpoint", json!(g.endpoint)),
            ("creator", json!(g.creator)),
            ("owner", id(EntityKind::Player, g.owner)),
            ("joinInfusionMinimum", s(g.join_infusion_minimum)),
            ("joinInfusionMinimumBypassByRequest", json!("closed")),
            ("joinInfusionMinimumBypassByInvite", json!("permissioned")),
            (
                "primaryReactorId",
                id(EntityKind::Reactor, g.primary_reactor),
            ),
            (
                "entrySubstationId",
                id(EntityKind::Substation, g.entry_substation),
            ),
            ("entryRank", s(g.entry_rank)),
            ("name", json!(GUILD_NAMES[i % GUILD_NAMES.len()])),
        ]);
        json!({ "Guild": guild })
    }

    /// Player `i` (from 0), with its grid and its inventory.
    fn player_json(&self, i: usize, this: Value, index: Value) -> Value {
        use EntityKind as K;
        let p = &self.players[i];
        let address = &self.addresses[(p.address - 1) as usize].address;
        let player = records::PLAYER.record([
            ("id", this),
            ("index", index),
            ("guildId", opt_id(K::Guild, p.guild)),
            ("substationId", opt_id(K::Substation, p.substation)),
            ("creator", json!(address)),
            ("primaryAddress", json!(address)),
            ("planetId", id(K::Planet, p.planet)),
            ("fleetId", id(K::Fleet, p.fleet)),
            ("guildRank", s(p.guild_rank)),
            ("name", json!(p.name)),
        ]);
        json!({
            "Player": player,
            "gridAttributes": grid(&p.grid),
            "playerInventory": {
                "rocks": { "denom": "ualpha", "amount": p.alpha.to_string() },
            },
        })
    }

    /// Planet `eid`, with the first and last of the fleets in line at it, its grid and
    /// its shield.
    fn planet_json(
        &self,
        eid: EntityId,
        this: Value,
        queues: Option<&HashMap<u64, Vec<u64>>>,
    ) -> Value {
        use EntityKind as K;
        let p = &self.planets[(eid.index - 1) as usize];
        let mut fields = vec![
            ("id", this),
            ("maxOre", s(p.max_ore)),
            ("creator", json!(p.creator)),
            ("owner", id(K::Player, p.owner)),
            ("status", json!(p.status)),
        ];
        let line = self.queue_at(eid.index, queues);
        if let (Some(first), Some(last)) = (line.first(), line.last()) {
            fields.push(("locationListStart", id(K::Fleet, *first)));
            fields.push(("locationListLast", id(K::Fleet, *last)));
        }
        fields.extend(slot_fields(&p.slots));
        json!({
            "Planet": records::PLANET.record(fields),
            "gridAttributes": grid(&p.grid),
            "planetAttributes": records::PLANET_ATTRIBUTES.record([
                ("planetaryShield", s(p.planetary_shield)),
                ("blockStartRaid", s(p.block_start_raid)),
            ]),
        })
    }

    /// Reactor `i` (from 0), with its grid.
    fn reactor_json(&self, i: usize, this: Value) -> Value {
        let r = &self.reactors[i];
        json!({
            "Reactor": records::REACTOR.record([
                ("id", this),
                ("validator", json!(r.validator)),
                ("guildId", id(EntityKind::Guild, r.guild)),
                ("defaultCommission", json!(r.default_commission)),
                ("rawAddress", raw_address(&r.validator)),
                ("owner", id(EntityKind::Player, r.owner)),
            ]),
            "gridAttributes": grid(&r.grid),
        })
    }

    /// Substation `i` (from 0), with its grid.
    fn substation_json(&self, i: usize, this: Value) -> Value {
        let sub = &self.substations[i];
        json!({
            "Substation": records::SUBSTATION.record([
                ("id", this),
                ("owner", id(EntityKind::Player, sub.owner)),
                ("creator", json!(sub.creator)),
            ]),
            "gridAttributes": grid(&sub.grid),
        })
    }

    /// Struct `eid`, with its attributes and (`whole`) the structs defending it.
    fn struct_json(&self, eid: EntityId, this: Value, index: Value, whole: bool) -> Value {
        use EntityKind as K;
        let st = &self.structs[(eid.index - 1) as usize];
        let (location_type, location_id) = match st.location {
            Location::Planet(p) => ("planet", id(K::Planet, p)),
            Location::Fleet(f) => ("fleet", id(K::Fleet, f)),
        };
        let status = StructStatus(st.status_bits());
        let flag = |bit| Value::Bool(status.has(bit));
        json!({
            "Struct": records::STRUCT.record([
                ("id", this),
                ("index", index),
                ("type", s(u64::from(st.type_id))),
                ("creator", json!(st.creator)),
                ("owner", id(K::Player, st.owner)),
                ("locationType", json!(location_type)),
                ("locationId", location_id),
                ("operatingAmbit", json!(st.ambit.name())),
                ("slot", s(u64::from(st.slot))),
            ]),
            "structAttributes": records::STRUCT_ATTRIBUTES.record([
                ("health", s(u64::from(st.health))),
                ("status", s(status.0)),
                ("blockStartBuild", s(st.block_start_build)),
                ("blockStartOreMine", s(st.block_start_ore_mine)),
                ("blockStartOreRefine", s(st.block_start_ore_refine)),
                ("protectedStructIndex", s(st.defending.unwrap_or(0))),
                ("isMaterialized", flag(StructStatus::MATERIALIZED)),
                ("isBuilt", flag(StructStatus::BUILT)),
                ("isOnline", flag(StructStatus::ONLINE)),
                ("isHidden", flag(StructStatus::HIDDEN)),
                ("isDestroyed", flag(StructStatus::DESTROYED)),
                ("isLocked", flag(StructStatus::LOCKED)),
            ]),
            "gridAttributes": records::GRID_ATTRIBUTES.defaults(),
            "structDefenders": self.defenders_json(eid.index, whole),
        })
    }

    /// The structs defending struct `index` (`structDefenders`), in index order; a
    /// list (`whole` false) shows none of it.
    fn defenders_json(&self, index: u64, whole: bool) -> Vec<Value> {
        if !whole {
            return Vec::new();
        }
        self.structs
            .iter()
            .enumerate()
            .filter(|(_, d)| !d.destroyed && d.defending == Some(index))
            .map(|(j, _)| id(EntityKind::Struct, j as u64 + 1))
            .collect()
    }

    /// Allocation `i` (from 0), its amount as its grid's power.
    fn allocation_json(&self, i: usize, this: Value, index: Value) -> Value {
        let a = &self.allocations[i];
        json!({
            "Allocation": records::ALLOCATION.record([
                ("id", this),
                ("type", json!(a.kind)),
                ("sourceObjectId", json!(a.source.to_string())),
                ("index", index),
                ("destinationId", json!(a.destination.to_string())),
                ("creator", json!(a.creator)),
                ("controller", id(EntityKind::Player, a.controller)),
            ]),
            "gridAttributes": records::GRID_ATTRIBUTES.record([("power", s(a.amount))]),
        })
    }

    /// Infusion `i` (from 0), which carries no id.
    fn infusion_json(&self, i: usize) -> Value {
        let f = &self.infusions[i];
        json!({ "Infusion": records::INFUSION.record([
            ("destinationType", json!(f.destination.kind.name())),
            ("destinationId", json!(f.destination.to_string())),
            ("fuel", s(f.fuel)),
            ("power", s(f.power)),
            ("commission", json!(f.commission)),
            ("playerId", id(EntityKind::Player, f.player)),
            ("address", json!(f.address)),
            ("ratio", s(f.ratio)),
        ])})
    }

    /// Address record `i` (from 0), bare: no id and no key around it.
    fn address_json(&self, i: usize) -> Value {
        let a = &self.addresses[i];
        records::ADDRESS.record([
            ("address", json!(a.address)),
            ("playerId", id(EntityKind::Player, a.player)),
            ("permissions", s(a.permissions)),
        ])
    }

    /// Fleet `eid`: where it is, its command ship, its neighbours in the line at the
    /// planet it visits, and its slots.
    fn fleet_json(
        &self,
        eid: EntityId,
        this: Value,
        queues: Option<&HashMap<u64, Vec<u64>>>,
    ) -> Value {
        use EntityKind as K;
        let f = &self.fleets[(eid.index - 1) as usize];
        // On station at home or away at a planet; a fleet in transit (a state of
        // the sim's, not the chain's) shows no location.
        let at = f.planet.or(f.away_at);
        let mut fields = vec![
            ("id", this),
            ("owner", id(K::Player, f.owner)),
            ("locationType", json!("planet")),
            ("locationId", opt_id(K::Planet, at)),
            (
                "status",
                json!(if f.planet.is_some() {
                    "onStation"
                } else {
                    "away"
                }),
            ),
            (
                "commandStruct",
                opt_id(K::Struct, Some(f.command_struct).filter(|c| *c != 0)),
            ),
        ];
        // Its neighbours in the line at the planet it visits.
        if let Some(planet) = f.away_at {
            let line = self.queue_at(planet, queues);
            if let Some(pos) = line.iter().position(|x| *x == eid.index) {
                if let Some(ahead) = pos.checked_sub(1).and_then(|p| line.get(p)) {
                    fields.push(("locationListForward", id(K::Fleet, *ahead)));
                }
                if let Some(behind) = line.get(pos + 1) {
                    fields.push(("locationListBackward", id(K::Fleet, *behind)));
                }
            }
        }
        fields.extend(slot_fields(&f.slots));
        json!({ "Fleet": records::FLEET.record(fields) })
    }

    /// Provider `i` (from 0), with its grid.
    fn provider_json(&self, i: usize, this: Value, index: Value) -> Value {
        let p = &self.providers[i];
        json!({
            "Provider": records::PROVIDER.record([
                ("id", this),
                ("index", index),
                ("substationId", id(EntityKind::Substation, p.substation)),
                ("rate", json!({ "denom": "ualpha", "amount": p.rate.to_string() })),
                ("accessPolicy", json!(p.access_policy)),
                ("capacityMinimum", s(p.capacity_minimum)),
                ("capacityMaximum", s(p.capacity_maximum)),
                ("durationMinimum", s(p.duration_minimum)),
                ("durationMaximum", s(p.duration_maximum)),
                ("providerCancellationPenalty", json!("0.100000000000000000")),
                ("consumerCancellationPenalty", json!("0.100000000000000000")),
                ("creator", json!(p.creator)),
                ("owner", id(EntityKind::Player, p.owner)),
            ]),
            "gridAttributes": grid(&p.grid),
        })
    }

    /// Agreement `i` (from 0), owned by its consumer.
    fn agreement_json(&self, i: usize, this: Value) -> Value {
        let a = &self.agreements[i];
        json!({ "Agreement": records::AGREEMENT.record([
            ("id", this),
            ("providerId", id(EntityKind::Provider, a.provider)),
            ("allocationId", id(EntityKind::Allocation, a.allocation)),
            ("capacity", s(a.capacity)),
            ("startBlock", s(a.start_block)),
            ("endBlock", s(a.end_block)),
            ("creator", json!(a.creator)),
            ("owner", id(EntityKind::Player, a.consumer)),
        ])})
    }
}

#[cfg(test)]
mod tests {
    use super::super::world::WorldConfig;
    use super::*;

    fn all_ids_in(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::String(t) if EntityId::looks_like(t) => out.push(t.clone()),
            Value::Array(a) => a.iter().for_each(|x| all_ids_in(x, out)),
            Value::Object(o) => o.values().for_each(|x| all_ids_in(x, out)),
            _ => {}
        }
    }

    #[test]
    fn player_has_the_rest_shape() {
        let w = World::generate(WorldConfig::demo());
        let v = w.render(EntityId::parse("1-1").unwrap()).unwrap();
        assert_eq!(v["Player"]["id"], "1-1");
        assert_eq!(v["Player"]["planetId"], "2-1");
        assert_eq!(v["Player"]["fleetId"], "9-1");
        assert_eq!(v["Player"]["guildId"], "0-1");
        assert!(v["gridAttributes"]["capacity"].is_string());
        assert!(v["playerInventory"].is_object());
        assert!(
            w.render(EntityId::parse("1-9999").unwrap()).is_none(),
            "unknown ids render nothing"
        );
    }

    #[test]
    fn every_id_in_every_rendered_entity_exists() {
        let w = World::generate(WorldConfig::with_players(120));
        for kind in EntityKind::ALL {
            for index in 1..=w.count(kind) {
                let eid = EntityId::new(kind, index);
                let v = w.render(eid).unwrap();
                let core = kind.core_object(&v).unwrap();
                if records::has_id(kind) {
                    assert_eq!(core["id"], eid.to_string());
                } else {
                    assert!(core.get("id").is_none(), "{eid} carries an id");
                }
                let problems = records::single_response(kind).check(&v);
                assert!(problems.is_empty(), "{eid}: {problems:?}");
                let mut ids = Vec::new();
                all_ids_in(&v, &mut ids);
                for found in ids {
                    let target = EntityId::parse(&found).unwrap();
                    assert!(w.exists(target), "{eid} mentions missing {target}");
                }
            }
        }
    }

    #[test]
    fn a_listed_record_is_the_read_records_core() {
        let w = World::generate(WorldConfig::with_players(60));
        for kind in EntityKind::ALL {
            for index in 1..=w.count(kind) {
                let eid = EntityId::new(kind, index);
                let full = w.render(eid).unwrap();
                let listed = w.render_listed(eid).unwrap();
                match kind.rest_key() {
                    Some(key) => assert_eq!(listed, json!({ key: full[key] }), "{eid}"),
                    None => assert_eq!(listed, full, "{eid}"),
                }
            }
        }
    }

    #[test]
    fn the_fleets_at_a_planet_are_its_location_list_in_order_of_arrival() {
        let mut w = World::generate(WorldConfig::demo());
        // Fleets 9-3, 9-5 and 9-4 arrive at planet 2-1 in that order.
        for (fleet, arrived) in [(3, 100), (5, 200), (4, 300)] {
            let f = &mut w.fleets[fleet - 1];
            f.planet = None;
            f.away_at = Some(1);
            f.arrived = arrived;
        }
        let planet = w.render(EntityId::parse("2-1").unwrap()).unwrap();
        assert_eq!(planet["Planet"]["locationListStart"], "9-3");
        assert_eq!(planet["Planet"]["locationListLast"], "9-4");
        let fleet = |id: &str| w.render(EntityId::parse(id).unwrap()).unwrap()["Fleet"].clone();
        let links = |f: Value| {
            (
                f["locationListForward"].clone(),
                f["locationListBackward"].clone(),
            )
        };
        assert_eq!(links(fleet("9-3")), (json!(""), json!("9-5")));
        assert_eq!(links(fleet("9-5")), (json!("9-3"), json!("9-4")));
        assert_eq!(links(fleet("9-4")), (json!("9-5"), json!("")));
        assert_eq!(fleet("9-5")["status"], "away");
        // A planet no one visits has an empty line; a list shows what a read shows.
        let other = w.render(EntityId::parse("2-2").unwrap()).unwrap();
        assert_eq!(other["Planet"]["locationListStart"], "");
        let lister = w.lister();
        for id in ["2-1", "9-3", "9-5", "9-4"] {
            let eid = EntityId::parse(id).unwrap();
            let key = eid.kind.rest_key().unwrap();
            assert_eq!(
                lister.render(eid).unwrap()[key],
                w.render(eid).unwrap()[key],
                "{id}"
            );
        }
    }

    #[test]
    fn same_seed_same_world_other_seed_other_world() {
        let render_all = |seed| {
            let w = World::generate(WorldConfig {
                seed,
                players: 60,
                genesis_height: 1_000,
            });
            let mut out = Vec::new();
            for kind in EntityKind::ALL {
                for index in 1..=w.count(kind) {
                    out.push(w.render(EntityId::new(kind, index)).unwrap());
                }
            }
            out
        };
        assert_eq!(render_all(7), render_all(7));
        assert_ne!(render_all(7), render_all(8));
    }
}
