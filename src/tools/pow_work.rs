//! `structs_list_pow_work`: the work on the world a proof-of-work completes now. A
//! struct being built (its build proof), an extractor mining or a refinery refining (a
//! cycle's proof), and a fleet raiding a planet whose raid clock runs. Each comes with
//! its type's name, its state, the difficulty it needs now and the arguments
//! `structs_calculate_proof_of_work` takes for it, easiest first.

use serde_json::{Value, json};

use super::{Env, Hints, Registry, ToolSpec, chain_str, chain_u64, opt_str, output, parse_id};
use crate::entity::records::StructStatus;
use crate::entity::struct_types::struct_type;
use crate::entity::{EntityId, EntityKind};
use crate::error::{ErrorCode, ToolError};
use crate::handles::Shaping;
use crate::pow::{self, Action};
use crate::references::Support;
use crate::source::ListQuery;

/// Items returned when the caller does not say.
pub const DEFAULT_LIMIT: u64 = 20;
/// The most items one answer returns.
pub const MAX_LIMIT: u64 = 200;
/// The most entities of one kind read for one answer; a larger world is read in part,
/// and the answer says so (`complete: false`). A struct's state is a read of its own
/// (the chain's lists carry no attributes), so this bounds an answer's reads of a node.
pub const MAX_SCAN: usize = 2_000;
/// Entities listed per page.
const PAGE: usize = 100;
/// Whole records read at once.
const READS_AT_ONCE: usize = 16;

pub fn register(registry: &mut Registry) {
    registry.add(
        ToolSpec {
            name: "structs_list_pow_work",
            description: "List the work a proof-of-work can complete now: structs being built, \
                extractors mining, refineries refining, and fleets raiding a planet whose raid \
                clock runs. Each item names the struct's type and state, the block the work \
                started, the leading zeros a proof needs now, and the arguments to pass to \
                structs_calculate_proof_of_work; the easiest come first. Filter by player_id \
                and action_type.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "player_id": super::id_schema("Only this player's structs and fleet (1-N)."),
                    "action_type": {"type": "string",
                        "enum": ["struct_build_complete", "ore_miner_complete",
                                 "ore_refinery_complete", "planet_raid_complete"],
                        "description": "Only work of this kind."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
                        "description": "The most items to return (default 20)."}
                },
                "additionalProperties": false
            }),
            // The structs, fleets, planets and owners named come along on request.
            references: Support::List,
            shaping: Shaping::Own,
            title: "List the work a proof-of-work completes",
            hints: Hints::READ,
            output_schema: output::compute::pow_work(),
        },
        list_pow_work,
    );
}

/// One piece of work found on the world.
struct Found {
    action: Action,
    entity: EntityId,
    planet: Option<EntityId>,
    type_id: Option<u64>,
    type_name: String,
    owner: Option<String>,
    state: String,
    block_start: u64,
    range: u64,
}

/// Every entity of `kind` (at most [`MAX_SCAN`]), owned by `owner` when given, and
/// whether that was all of them.
async fn read_all(
    env: &Env,
    kind: EntityKind,
    owner: Option<EntityId>,
) -> Result<(Vec<Value>, bool), ToolError> {
    let mut out = Vec::new();
    let mut query = ListQuery::new(kind, PAGE);
    query.owner = owner;
    loop {
        let page = env.source().list(query.clone()).await?;
        out.extend(page.items);
        match page.next_after {
            Some(next) if out.len() < MAX_SCAN => query.after = Some(next),
            Some(_) => return Ok((out, false)),
            None => return Ok((out, true)),
        }
    }
}

/// The record's own fields (`{"Struct": {...}}` opened), or the record.
fn body(item: &Value, kind: EntityKind) -> &Value {
    kind.rest_key()
        .and_then(|key| item.get(key))
        .unwrap_or(item)
}

/// The build, mining and refining a struct has under way.
fn struct_work(item: &Value) -> Vec<Found> {
    let own = body(item, EntityKind::Struct);
    let Some(id) = own["id"].as_str().and_then(|t| EntityId::parse(t).ok()) else {
        return Vec::new();
    };
    let type_id = chain_u64(own, &["type"]).unwrap_or(0);
    let Some(t) = u8::try_from(type_id).ok().and_then(struct_type) else {
        return Vec::new();
    };
    let attributes = &item["structAttributes"];
    let status = StructStatus::of(attributes).unwrap_or(StructStatus(0));
    if status.has(StructStatus::DESTROYED) {
        return Vec::new();
    }
    let start = |action: Action| chain_u64(attributes, &[action.start_field()]).unwrap_or(0);
    let mut out = Vec::new();
    let mut add = |action: Action, range: u64, state: String| {
        let block_start = start(action);
        if range > 0 && block_start > 0 {
            out.push(Found {
                action,
                entity: id,
                planet: None,
                type_id: Some(type_id),
                type_name: t.name.to_string(),
                owner: chain_str(own, &["owner"]).map(str::to_string),
                state,
                block_start,
                range,
            });
        }
    };
    if status.has(StructStatus::BUILT) {
        if status.has(StructStatus::ONLINE) {
            let mining = t.raw["oreMiningDifficulty"].as_u64().unwrap_or(0);
            add(Action::OreMine, mining, "online, mining".into());
            let refining = t.raw["oreRefiningDifficulty"].as_u64().unwrap_or(0);
            add(Action::OreRefine, refining, "online, refining".into());
        }
    } else {
        add(
            Action::StructBuild,
            t.build_difficulty,
            "being built".into(),
        );
    }
    out
}

/// The raids under way: each planet whose raid clock runs, with each fleet away at it.
fn raid_work(planets: &[Value], fleets: &[Value]) -> Vec<Found> {
    let mut out = Vec::new();
    for planet in planets {
        let own = body(planet, EntityKind::Planet);
        let Some(pid) = own["id"].as_str().and_then(|t| EntityId::parse(t).ok()) else {
            continue;
        };
        let attributes = &planet["planetAttributes"];
        let start = chain_u64(attributes, &["blockStartRaid"]).unwrap_or(0);
        let shield = chain_u64(attributes, &["planetaryShield"]).unwrap_or(0);
        if start == 0 || shield == 0 {
            continue;
        }
        for fleet in fleets {
            let f = body(fleet, EntityKind::Fleet);
            let at = f["locationId"].as_str() == Some(pid.to_string().as_str());
            if !at || f["status"].as_str() != Some("away") {
                continue;
            }
            let Some(fid) = f["id"].as_str().and_then(|t| EntityId::parse(t).ok()) else {
                continue;
            };
            out.push(Found {
                action: Action::PlanetRaid,
                entity: fid,
                planet: Some(pid),
                type_id: None,
                type_name: "Fleet".into(),
                owner: chain_str(f, &["owner"]).map(str::to_string),
                state: format!("away at {pid}, raiding"),
                block_start: start,
                range: shield,
            });
        }
    }
    out
}

/// Each listed record read whole (its attributes), in list order; one that is gone
/// since the list is left out.
async fn read_whole(
    env: &Env,
    listed: &[Value],
    kind: EntityKind,
) -> Result<Vec<Value>, ToolError> {
    use futures_util::stream::{self, StreamExt, TryStreamExt};
    let ids: Vec<EntityId> = listed
        .iter()
        .filter_map(|item| body(item, kind)["id"].as_str())
        .filter_map(|t| EntityId::parse(t).ok())
        .collect();
    let read: Vec<Option<Value>> = stream::iter(ids)
        .map(|id| env.source().get(id))
        .buffered(READS_AT_ONCE)
        .try_collect()
        .await?;
    Ok(read.into_iter().flatten().collect())
}

async fn list_pow_work(env: Env, args: Value) -> Result<Value, ToolError> {
    let owner = opt_str(&args, "player_id")
        .map(|p| parse_id(p, "player_id", Some(EntityKind::Player)))
        .transpose()?;
    let only = match opt_str(&args, "action_type") {
        Some(name) => Some(Action::parse(name).ok_or_else(|| {
            ToolError::field(
                ErrorCode::ValidationInvalidValue,
                "action_type",
                format!("{name:?} is not one of struct_build_complete, ore_miner_complete, ore_refinery_complete, planet_raid_complete"),
            )
        })?),
        None => None,
    };
    let limit = args["limit"]
        .as_u64()
        .unwrap_or(DEFAULT_LIMIT)
        .clamp(1, MAX_LIMIT);
    let current_block = env.status().block_height;
    let wants = |a: Action| only.is_none_or(|o| o == a);

    let mut found = Vec::new();
    let mut complete = true;
    let mut scanned = json!({});
    if Action::ALL
        .into_iter()
        .any(|a| a != Action::PlanetRaid && wants(a))
    {
        let (listed, all) = read_all(&env, EntityKind::Struct, owner).await?;
        complete &= all;
        scanned["structs"] = json!(listed.len());
        let structs = read_whole(&env, &listed, EntityKind::Struct).await?;
        found.extend(structs.iter().flat_map(struct_work));
    }
    if wants(Action::PlanetRaid) {
        let (fleets, all) = read_all(&env, EntityKind::Fleet, owner).await?;
        complete &= all;
        scanned["fleets"] = json!(fleets.len());
        // Only a planet a fleet is away at can be raided.
        let mut at: Vec<Value> = fleets
            .iter()
            .map(|f| body(f, EntityKind::Fleet))
            .filter(|f| f["status"].as_str() == Some("away"))
            .filter_map(|f| f["locationId"].as_str())
            .map(|p| json!({"id": p}))
            .collect();
        at.sort_by_key(Value::to_string);
        at.dedup();
        let planets = read_whole(&env, &at, EntityKind::Planet).await?;
        scanned["planets"] = json!(planets.len());
        found.extend(raid_work(&planets, &fleets));
    }
    found.retain(|f| wants(f.action));

    let age = |f: &Found| current_block.saturating_sub(f.block_start);
    let needs = |f: &Found| pow::difficulty(age(f), f.range);
    found.sort_by_key(|f| {
        (
            needs(f),
            f.entity.kind.code(),
            f.entity.index,
            f.action.name(),
        )
    });
    let total = found.len();
    let work: Vec<Value> = found
        .iter()
        .take(usize::try_from(limit).unwrap_or(usize::MAX))
        .map(|f| {
            let mut arguments = json!({
                "action_type": f.action.name(),
                "entity_id": f.entity.to_string(),
            });
            if let Some(p) = f.planet {
                arguments["planet_id"] = json!(p.to_string());
            }
            json!({
                "action_type": f.action.name(),
                "entity_id": f.entity.to_string(),
                "planet_id": f.planet.map(|p| p.to_string()),
                "struct_type": f.type_id,
                "type_name": f.type_name,
                "owner": f.owner,
                "state": f.state,
                "block_start": f.block_start,
                "age": age(f),
                "difficulty_range": f.range,
                "difficulty_now": needs(f),
                "arguments": arguments,
            })
        })
        .collect();
    Ok(json!({
        "work": work,
        "total": total,
        "current_block": current_block,
        "scanned": scanned,
        "complete": complete,
    }))
}
