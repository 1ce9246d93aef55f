//! The work a proof-of-work call is about, read from its arguments: the action, the
//! entity, the start block and the difficulty range, each taken from the entity, its
//! struct type or its planet where the call leaves it out.

use serde_json::Value;

use super::super::{Env, chain_u64, fetch, opt_str, parse_id};
use crate::entity::struct_types::{StructType, struct_type};
use crate::entity::{EntityId, EntityKind};
use crate::error::{ErrorCode, ToolError};
use crate::json::whole_number;
use crate::pow::{Action, Work};

/// The work a call is about, with where each part came from.
#[derive(Debug, Clone)]
pub(super) struct Resolved {
    pub(super) work: Work,
    pub(super) range: u64,
    pub(super) range_source: String,
    pub(super) current_block: u64,
    pub(super) age: u64,
    /// The age was given, so it does not move while the search runs.
    pub(super) age_fixed: bool,
}

pub(super) fn invalid(field: &str, reason: impl Into<String>) -> ToolError {
    ToolError::field(ErrorCode::ValidationInvalidValue, field, reason)
}

pub(super) fn u64_arg(args: &Value, field: &str) -> Option<u64> {
    args.get(field).and_then(whole_number)
}

/// What a resolved work is for: a proof to find (refused for a struct already
/// built, whose build proof could complete nothing), or one to check.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Purpose {
    Find,
    Check,
}

/// Reads the work from the arguments, and what they leave out from the entities.
pub(super) async fn resolve(
    env: &Env,
    args: &Value,
    action: Action,
    purpose: Purpose,
) -> Result<Resolved, ToolError> {
    let entity_text = opt_str(args, "entity_id").ok_or_else(|| {
        ToolError::field(
            ErrorCode::ValidationMissingField,
            "entity_id",
            "is required",
        )
    })?;
    let raid = action == Action::PlanetRaid;
    let expected = if raid {
        EntityKind::Fleet
    } else {
        EntityKind::Struct
    };
    let entity = parse_id(entity_text, "entity_id", Some(expected))?;
    let planet = raided_planet(args, raid)?;
    let mut known = Known {
        block_start: u64_arg(args, "block_start"),
        range: u64_arg(args, "difficulty"),
        range_source: "argument".to_string(),
    };
    if known.block_start.is_none() || known.range.is_none() {
        // Raids read the planet (shield and raid start); the rest read the struct and
        // its type.
        let (holder, holder_field) = match planet {
            Some(p) => (p, "planet_id"),
            None => (entity, "entity_id"),
        };
        let v = fetch(env, holder, holder_field).await?;
        if raid {
            known.read_planet(&v, holder)?;
        } else {
            known.read_struct(&v, entity, action, purpose)?;
        }
    }
    let block_start = known.block_start.expect("set above");
    let range = known.range.expect("set above");
    let (age, age_fixed, current_block) = age_and_block(env, args, block_start)?;
    Ok(Resolved {
        work: Work {
            action,
            entity_id: entity.to_string(),
            planet_id: planet.map(|p| p.to_string()),
            block_start,
        },
        range,
        range_source: known.range_source,
        current_block,
        age,
        age_fixed,
    })
}

/// The raided planet: required for a raid, refused for anything else.
pub(super) fn raided_planet(args: &Value, raid: bool) -> Result<Option<EntityId>, ToolError> {
    match (raid, opt_str(args, "planet_id")) {
        (true, Some(p)) => Ok(Some(parse_id(p, "planet_id", Some(EntityKind::Planet))?)),
        (true, None) => Err(ToolError::field(
            ErrorCode::ValidationMissingField,
            "planet_id",
            "planet_raid_complete needs the raided planet (2-N)",
        )),
        (false, Some(_)) => Err(invalid(
            "planet_id",
            "only planet_raid_complete takes a planet_id",
        )),
        (false, None) => Ok(None),
    }
}

/// The work's start block and difficulty range as far as they are known, and where
/// the range came from.
pub(super) struct Known {
    block_start: Option<u64>,
    range: Option<u64>,
    range_source: String,
}

impl Known {
    /// Fills in a raid's from the raided planet `v`: its shield, and the raid's start.
    fn read_planet(&mut self, v: &Value, holder: EntityId) -> Result<(), ToolError> {
        if self.range.is_none() {
            self.range = chain_u64(v, &["planetAttributes", "planetaryShield"]);
            self.range_source = format!("planet {holder} planetaryShield");
        }
        if self.block_start.is_none() {
            self.block_start = chain_u64(v, &["planetAttributes", "blockStartRaid"])
                .or_else(|| chain_u64(v, &["Planet", "blockStartRaid"]))
                .filter(|b| *b > 0);
            if self.block_start.is_none() {
                return Err(invalid(
                    "block_start",
                    format!(
                        "planet {holder} has no raid under way (blockStartRaid is 0 or absent); pass block_start"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Fills in a struct's from the struct `v` and its type: the type's difficulty for
    /// the action, and the struct's start of that work.
    fn read_struct(
        &mut self,
        v: &Value,
        entity: EntityId,
        action: Action,
        purpose: Purpose,
    ) -> Result<(), ToolError> {
        let type_id = chain_u64(v, &["Struct", "type"]).unwrap_or(0);
        let t = u8::try_from(type_id)
            .ok()
            .and_then(struct_type)
            .ok_or_else(|| {
                ToolError::new(
                    ErrorCode::ApiError,
                    format!("{entity} has struct type {type_id}, which is not a known type"),
                )
            })?;
        if self.range.is_none() {
            let (value, field) = type_difficulty(t, action);
            if value == 0 {
                return Err(invalid(
                    "action_type",
                    format!(
                        "{entity} is a {} (struct type {}), which has no {field}: it cannot do {}",
                        t.name,
                        t.id,
                        action.name()
                    ),
                ));
            }
            self.range = Some(value);
            self.range_source = format!("struct type {} ({}) {field}", t.id, t.name);
        }
        if self.block_start.is_none() {
            self.block_start = Some(struct_block_start(v, entity, action, purpose)?);
        }
        Ok(())
    }
}

/// The difficulty range of `action` for struct type `t`, with its field's name.
pub(super) fn type_difficulty(t: &StructType, action: Action) -> (u64, &'static str) {
    match action {
        Action::StructBuild => (t.build_difficulty, "buildDifficulty"),
        Action::OreMine => (
            t.raw["oreMiningDifficulty"].as_u64().unwrap_or(0),
            "oreMiningDifficulty",
        ),
        _ => (
            t.raw["oreRefiningDifficulty"].as_u64().unwrap_or(0),
            "oreRefiningDifficulty",
        ),
    }
}

/// The block the struct `v` started `action`'s work at; a build proof to find for a
/// struct already built is refused.
pub(super) fn struct_block_start(
    v: &Value,
    entity: EntityId,
    action: Action,
    purpose: Purpose,
) -> Result<u64, ToolError> {
    let field = action.start_field();
    if purpose == Purpose::Find
        && action == Action::StructBuild
        && crate::entity::records::StructStatus::of(&v["structAttributes"])
            .is_some_and(|s| s.has(crate::entity::records::StructStatus::BUILT))
    {
        return Err(invalid(
            "entity_id",
            format!(
                "{entity} is already built (its build started at block {}); a build proof completes a struct still being built, or pass block_start to compute one anyway",
                chain_u64(v, &["structAttributes", field]).unwrap_or(0)
            ),
        ));
    }
    chain_u64(v, &["structAttributes", field])
        .filter(|b| *b > 0)
        .ok_or_else(|| {
            invalid(
                "block_start",
                format!(
                    "{entity} has no work of this kind under way ({field} is 0); pass block_start"
                ),
            )
        })
}

/// The work's age, whether it is fixed, and the block it is computed for: `age`
/// blocks after the start when given, else the current block's.
pub(super) fn age_and_block(
    env: &Env,
    args: &Value,
    block_start: u64,
) -> Result<(u64, bool, u64), ToolError> {
    let current_block = u64_arg(args, "current_block").unwrap_or_else(|| env.status().block_height);
    match u64_arg(args, "age") {
        // The difficulty is computed for the block `age` blocks after the start.
        Some(age) => Ok((age, true, block_start.saturating_add(age))),
        None => {
            if current_block < block_start {
                return Err(ToolError::field(
                    ErrorCode::ValidationOutOfRange,
                    "block_start",
                    format!("block_start {block_start} is after the current block {current_block}"),
                ));
            }
            Ok((
                current_block - block_start,
                u64_arg(args, "current_block").is_some(),
                current_block,
            ))
        }
    }
}

pub(super) fn action_arg(args: &Value) -> Result<Option<Action>, ToolError> {
    match opt_str(args, "action_type") {
        None => Ok(None),
        Some(name) => Action::parse(name).map(Some).ok_or_else(|| {
            invalid(
                "action_type",
                format!("{name:?} is not one of struct_build_complete, ore_miner_complete, ore_refinery_complete, planet_raid_complete"),
            )
        }),
    }
}
