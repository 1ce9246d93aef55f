//! Renders world entities in the chain REST API's JSON shape: the core object under its
//! kind's key (`Player`, `Planet`, ...), attributes beside it, integers as strings.

use serde_json::{Value, json};

use super::world::{Grid, Location, Slots, World};
use crate::entity::struct_types::struct_type;
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
    json!({
        "ore": s(g.ore),
        "fuel": s(g.fuel),
        "capacity": s(g.capacity),
        "load": s(g.load),
        "structsLoad": s(g.structs_load),
        "power": s(g.power),
        "connectionCapacity": s(g.connection_capacity),
        "connectionCount": s(g.connection_count),
        "allocationPointerStart": s(0),
        "allocationPointerEnd": s(0),
        "proxyNonce": s(0),
        "lastAction": s(g.last_action),
        "nonce": s(g.nonce),
        "ready": s(u64::from(g.ready)),
        "checkpointBlock": s(0),
    })
}

fn slot_row(row: &[Option<u64>; 4]) -> Value {
    Value::Array(row.iter().map(|s| opt_id(EntityKind::Struct, *s)).collect())
}

fn slot_fields(obj: &mut serde_json::Map<String, Value>, slots: &Slots) {
    for (name, row) in ["space", "air", "land", "water"].iter().zip(slots) {
        obj.insert((*name).into(), slot_row(row));
    }
    for name in ["spaceSlots", "airSlots", "landSlots", "waterSlots"] {
        obj.insert(name.into(), s(4));
    }
}

impl World {
    /// The entity's JSON as `GET /structs/{kind}/{id}` returns it, or `None` when it
    /// does not exist.
    pub fn render(&self, eid: EntityId) -> Option<Value> {
        use EntityKind as K;
        if !self.exists(eid) {
            return None;
        }
        let i = (eid.index - 1) as usize;
        let this = Value::String(eid.to_string());
        let index = s(eid.index);
        Some(match eid.kind {
            K::Guild => {
                let g = &self.guilds[i];
                json!({ "Guild": {
                    "id": this, "index": index, "endpoint": g.endpoint,
                    "creator": g.creator, "owner": id(K::Player, g.owner),
                    "joinInfusionMinimum": s(g.join_infusion_minimum),
                    "joinInfusionMinimumBypassByRequest": "closed",
                    "joinInfusionMinimumBypassByInvite": "open",
                    "primaryReactorId": id(K::Reactor, g.primary_reactor),
                    "entrySubstationId": id(K::Substation, g.entry_substation),
                    "entryRank": s(g.entry_rank),
                }})
            }
            K::Player => {
                let p = &self.players[i];
                let address = &self.addresses[(p.address - 1) as usize].address;
                json!({
                    "Player": {
                        "id": this, "index": index,
                        "guildId": opt_id(K::Guild, p.guild),
                        "substationId": opt_id(K::Substation, p.substation),
                        "creator": address, "primaryAddress": address,
                        "planetId": id(K::Planet, p.planet),
                        "fleetId": id(K::Fleet, p.fleet),
                        "guildRank": s(p.guild_rank),
                        "username": p.username, "pfp": "", "pfpClientRenderAttributes": "",
                    },
                    "gridAttributes": grid(&p.grid),
                    "playerInventory": {
                        "rocks": { "ore": s(p.ore_rocks) },
                        "balances": [ { "denom": "ualpha", "amount": s(p.alpha) } ],
                    },
                })
            }
            K::Planet => {
                let p = &self.planets[i];
                let mut planet = serde_json::Map::new();
                planet.insert("id".into(), this);
                planet.insert("maxOre".into(), s(p.max_ore));
                planet.insert("creator".into(), json!(p.creator));
                planet.insert("owner".into(), id(K::Player, p.owner));
                slot_fields(&mut planet, &p.slots);
                planet.insert("status".into(), json!(p.status));
                planet.insert("locationListStart".into(), json!(""));
                planet.insert("locationListLast".into(), json!(""));
                json!({
                    "Planet": planet,
                    "gridAttributes": grid(&p.grid),
                    "planetAttributes": {
                        "planetaryShield": s(p.planetary_shield),
                        "blockStartRaid": s(p.block_start_raid),
                        "repairNetworkQuantity": s(0),
                        "defensiveCannonQuantity": s(0),
                    },
                })
            }
            K::Reactor => {
                let r = &self.reactors[i];
                json!({
                    "Reactor": {
                        "id": this, "index": index, "validator": r.validator,
                        "guildId": id(K::Guild, r.guild),
                        "defaultCommission": r.default_commission,
                        "owner": id(K::Player, r.owner),
                    },
                    "gridAttributes": grid(&r.grid),
                })
            }
            K::Substation => {
                let sub = &self.substations[i];
                json!({
                    "Substation": {
                        "id": this, "index": index,
                        "owner": id(K::Player, sub.owner), "creator": sub.creator,
                    },
                    "gridAttributes": grid(&sub.grid),
                })
            }
            K::Struct => {
                let st = &self.structs[i];
                let (location_type, location_id) = match st.location {
                    Location::Planet(p) => ("planet", id(K::Planet, p)),
                    Location::Fleet(f) => ("fleet", id(K::Fleet, f)),
                };
                let status = st.status();
                json!({
                    "Struct": {
                        "id": this, "index": index, "type": s(u64::from(st.type_id)),
                        "creator": st.creator, "owner": id(K::Player, st.owner),
                        "locationType": location_type, "locationId": location_id,
                        "operatingAmbit": st.ambit.name(), "slot": s(u64::from(st.slot)),
                    },
                    "structAttributes": {
                        "health": s(u64::from(st.health)),
                        "maxHealth": s(struct_type(st.type_id).map_or(0, |t| u64::from(t.max_health))),
                        "status": status,
                        "isBuilt": st.built,
                        "isOnline": st.online,
                        "blockStartBuild": s(st.block_start_build),
                        "blockStartOreMine": s(st.block_start_ore_mine),
                        "blockStartOreRefine": s(st.block_start_ore_refine),
                        "protectedStructIndex": s(st.defending.unwrap_or(0)),
                    },
                })
            }
            K::Allocation => {
                let a = &self.allocations[i];
                json!({
                    "Allocation": {
                        "id": this, "index": index, "type": a.kind,
                        "sourceObjectId": a.source.to_string(),
                        "destinationId": a.destination.to_string(),
                        "controller": id(K::Player, a.controller),
                        "creator": a.creator, "locked": a.locked,
                    },
                    "gridAttributes": { "power": s(a.amount) },
                })
            }
            K::Infusion => {
                let f = &self.infusions[i];
                json!({ "Infusion": {
                    "id": this,
                    "destinationId": f.destination.to_string(),
                    "destinationType": f.destination.kind.name(),
                    "address": f.address,
                    "playerId": id(K::Player, f.player),
                    "fuel": s(f.fuel), "defusing": s(0), "power": s(f.power),
                    "ratio": s(f.ratio), "commission": f.commission,
                }})
            }
            K::Address => {
                let a = &self.addresses[i];
                json!({
                    "id": this, "address": a.address,
                    "playerId": id(K::Player, a.player),
                    "permissions": s(a.permissions),
                })
            }
            K::Fleet => {
                let f = &self.fleets[i];
                let mut fleet = serde_json::Map::new();
                fleet.insert("id".into(), this);
                fleet.insert("owner".into(), id(K::Player, f.owner));
                fleet.insert("planetId".into(), opt_id(K::Planet, f.planet.or(f.away_at)));
                fleet.insert(
                    "status".into(),
                    json!(if f.planet.is_some() {
                        "onStation"
                    } else {
                        "away"
                    }),
                );
                fleet.insert(
                    "commandStruct".into(),
                    opt_id(K::Struct, Some(f.command_struct).filter(|c| *c != 0)),
                );
                slot_fields(&mut fleet, &f.slots);
                fleet.insert("locationListForward".into(), json!(""));
                fleet.insert("locationListBackward".into(), json!(""));
                json!({ "Fleet": fleet })
            }
            K::Provider => {
                let p = &self.providers[i];
                json!({
                    "Provider": {
                        "id": this, "index": index,
                        "substationId": id(K::Substation, p.substation),
                        "rate": { "denom": "ualpha", "amount": s(p.rate) },
                        "accessPolicy": p.access_policy,
                        "capacityMinimum": s(p.capacity_minimum),
                        "capacityMaximum": s(p.capacity_maximum),
                        "durationMinimum": s(p.duration_minimum),
                        "durationMaximum": s(p.duration_maximum),
                        "providerCancellationPenalty": "0.100000000000000000",
                        "consumerCancellationPenalty": "0.100000000000000000",
                        "creator": p.creator, "owner": id(K::Player, p.owner),
                    },
                    "gridAttributes": grid(&p.grid),
                })
            }
            K::Agreement => {
                let a = &self.agreements[i];
                json!({ "Agreement": {
                    "id": this, "index": index,
                    "providerId": id(K::Provider, a.provider),
                    "consumerId": id(K::Player, a.consumer),
                    "allocationId": id(K::Allocation, a.allocation),
                    "capacity": s(a.capacity),
                    "startBlock": s(a.start_block), "endBlock": s(a.end_block),
                    "creator": a.creator,
                }})
            }
        })
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
                assert_eq!(core["id"], eid.to_string());
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
