//! `structs_calculate_mining`.

use super::*;

pub(super) fn register(registry: &mut Registry) {
    registry.add(
        ToolSpec {
            name: "structs_calculate_mining",
            description: "Mining figures for an ore extractor (by struct id, read from the \
                source) or a struct type: ore per completion (always 1), the mining \
                difficulty range, and for a working extractor its current proof-of-work \
                difficulty, the expected hashes and when it falls to 8 and 3; the planet's \
                ore still in the ground; and what refining pays (1,000,000 ualpha per ore), \
                with a refinery's current refining difficulty when refinery_id is given.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "extractor_id": id_schema("The extractor's struct id (5-N); its type, mining start block and planet are read from it."),
                    "struct_type": struct_type_schema("A struct type (id or name) instead of an extractor id, e.g. 14 or \"Ore Extractor\"."),
                    "planet_id": id_schema("The planet mined (2-N); the extractor's own planet when omitted."),
                    "refinery_id": id_schema("A refinery's struct id (5-N), for its refining difficulty."),
                    "block_start": {"type": "integer", "minimum": 0,
                        "description": "The block mining started at; the extractor's blockStartOreMine when omitted (0: not mining)."},
                    "current_block": {"type": "integer", "minimum": 0,
                        "description": "The block to compute the difficulty at; the source's height when omitted."}
                },
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Standard,
            title: "Mining and refining figures",
            hints: Hints::READ,
            output_schema: output::compute::mining(),
        },
        calculate_mining,
    );
}

fn mines(t: &StructType) -> bool {
    raw_u64(t, "oreMiningDifficulty") > 0 && raw_str(t, "planetaryMining") != "noPlanetaryMining"
}

fn refines(t: &StructType) -> bool {
    raw_u64(t, "oreRefiningDifficulty") > 0
        && raw_str(t, "planetaryRefinery") != "noPlanetaryRefinery"
}

/// A struct read from the source with its type.
struct Fetched {
    id: EntityId,
    t: &'static StructType,
    entity: Value,
}

async fn fetch_struct(env: &Env, args: &Value, field: &str) -> Result<Fetched, ToolError> {
    let id = id_arg(args, field, Some(EntityKind::Struct))?;
    let entity = fetch(env, id, field).await?;
    let type_id = chain_u64(&entity, &["Struct", "type"]).unwrap_or(0);
    let t = u8::try_from(type_id)
        .ok()
        .and_then(struct_type)
        .ok_or_else(|| {
            ToolError::new(
                ErrorCode::ApiError,
                format!("{id} has struct type {type_id}, which is not a known type"),
            )
        })?;
    Ok(Fetched { id, t, entity })
}

/// The state of a piece of proof-of-work (mining or refining) at `current_block`.
fn work_state(range: u64, block_start: u64, current_block: u64, what: &str) -> Value {
    if block_start == 0 {
        return json!({
            "active": false,
            "reason": format!(
                "not {what}: the start block is 0 (the struct is offline, not built, or was deactivated)"
            ),
            "milestones_from_start": difficulty_milestones(range, None),
        });
    }
    let age = current_block.saturating_sub(block_start);
    let d = pow::difficulty(age, range);
    json!({
        "active": true,
        "block_start": block_start,
        "current_block": current_block,
        "age": age,
        "current_difficulty": d,
        "expected_hashes": pow::expected_hashes(d),
        "milestones": difficulty_milestones(range, Some(age)),
    })
}

async fn calculate_mining(env: Env, args: Value) -> Result<Value, ToolError> {
    let current_block =
        u64_arg(&args, "current_block").unwrap_or_else(|| env.status().block_height);
    let (t, extractor) = extractor_or_type(&env, &args).await?;
    let range = raw_u64(t, "oreMiningDifficulty");
    let block_start = u64_arg(&args, "block_start").or_else(|| {
        extractor
            .as_ref()
            .map(|e| chain_u64(&e.entity, &["structAttributes", "blockStartOreMine"]).unwrap_or(0))
    });
    let planet_json = mined_planet(&env, &args, extractor.as_ref()).await?;
    let refining = refining_json(&env, &args, current_block).await?;
    let mining = match block_start {
        Some(start) => work_state(range, start, current_block, "mining"),
        None => json!({
            "active": null,
            "reason": "no extractor or block_start given",
            "milestones_from_start": difficulty_milestones(range, None),
        }),
    };
    let explanation = mining_explanation(t, range, &mining, &planet_json);
    Ok(json!({
        "struct_type": type_json(t),
        "extractor_id": extractor.as_ref().map(|e| e.id.to_string()),
        "ore_per_completion": ORE_PER_MINING_COMPLETION,
        "mining_difficulty_range": range,
        "current_block": current_block,
        "mining": mining,
        "planet": planet_json,
        "refining": refining,
        "alpha_per_refined_ore_ualpha": UALPHA_PER_REFINED_ORE,
        "alpha_per_refined_ore_grams": UALPHA_PER_REFINED_ORE / UALPHA_PER_GRAM,
        "formula": "difficulty = 64 when age <= 1, else max(1, 64 - trunc(log10(age) / log10(range) × 63)); \
                    age = current_block - blockStartOreMine; expected hashes = 16^difficulty; \
                    ore per completion = 1; alpha per refined ore = 1,000,000 ualpha",
        "inputs": {"range": range, "block_start": block_start, "current_block": current_block},
        "explanation": explanation,
    }))
}

/// The mining type: an extractor's (read with it) or the struct_type given, one of the
/// two and a type that mines.
async fn extractor_or_type(
    env: &Env,
    args: &Value,
) -> Result<(&'static StructType, Option<Fetched>), ToolError> {
    match (args.get("extractor_id"), args.get("struct_type")) {
        (Some(_), Some(_)) => Err(invalid(
            "struct_type",
            "give extractor_id or struct_type, not both: an extractor's type is read from it",
        )),
        (None, None) => Err(missing(
            "extractor_id",
            "give an extractor's struct id (5-N), or a struct_type",
        )),
        (Some(_), None) => {
            let s = fetch_struct(env, args, "extractor_id").await?;
            if !mines(s.t) {
                return Err(invalid(
                    "extractor_id",
                    format!(
                        "{} is a {}, not an ore extractor: its type has no mining system ({})",
                        s.id,
                        s.t.name,
                        raw_str(s.t, "planetaryMining")
                    ),
                )
                .with_extra("struct_type", type_json(s.t)));
            }
            Ok((s.t, Some(s)))
        }
        (None, Some(v)) => {
            let t = struct_type_arg(v, "struct_type")?;
            if !mines(t) {
                return Err(invalid(
                    "struct_type",
                    format!("{} does not mine ore; the Ore Extractor (14) does", t.name),
                ));
            }
            Ok((t, None))
        }
    }
}

/// The planet mined, given or the extractor's own, with the ore left in it; a planet
/// with none left is refused.
async fn mined_planet(
    env: &Env,
    args: &Value,
    extractor: Option<&Fetched>,
) -> Result<Value, ToolError> {
    let (planet, planet_field) = match opt_str(args, "planet_id") {
        Some(p) => (
            Some(parse_id(p, "planet_id", Some(EntityKind::Planet))?),
            "planet_id",
        ),
        None => {
            let own = extractor.and_then(|e| {
                (chain_str(&e.entity, &["Struct", "locationType"]) == Some("planet"))
                    .then(|| chain_str(&e.entity, &["Struct", "locationId"]))
                    .flatten()
                    .and_then(|p| EntityId::parse(p).ok())
            });
            (own, "extractor_id")
        }
    };
    let Some(p) = planet else {
        return Ok(Value::Null);
    };
    let v = fetch(env, p, planet_field).await?;
    let ore = chain_u64(&v, &["gridAttributes", "ore"]).unwrap_or(0);
    if ore == 0 {
        return Err(invalid(
            planet_field,
            format!(
                "planet {p} has no ore left in the ground (gridAttributes.ore is 0): mining it yields nothing"
            ),
        )
        .with_extra("planet_id", json!(p.to_string())));
    }
    Ok(json!({
        "id": p.to_string(),
        "ore_remaining": ore,
        "completions_left": ore / ORE_PER_MINING_COMPLETION,
        "starting_ore": PLANET_STARTING_ORE,
        "max_ore": chain_u64(&v, &["Planet", "maxOre"]),
    }))
}

/// The refinery given, if any, with the state of its refining at `current_block`.
async fn refining_json(env: &Env, args: &Value, current_block: u64) -> Result<Value, ToolError> {
    if opt_str(args, "refinery_id").is_none() {
        return Ok(Value::Null);
    }
    let r = fetch_struct(env, args, "refinery_id").await?;
    if !refines(r.t) {
        return Err(invalid(
            "refinery_id",
            format!(
                "{} is a {}, not an ore refinery: its type has no refining system ({})",
                r.id,
                r.t.name,
                raw_str(r.t, "planetaryRefinery")
            ),
        ));
    }
    let rrange = raw_u64(r.t, "oreRefiningDifficulty");
    let start = chain_u64(&r.entity, &["structAttributes", "blockStartOreRefine"]).unwrap_or(0);
    Ok(json!({
        "refinery_id": r.id.to_string(),
        "refining_difficulty_range": rrange,
        "state": work_state(rrange, start, current_block, "refining"),
    }))
}

/// What mining with type `t` gives, and where its proof and the planet stand.
fn mining_explanation(t: &StructType, range: u64, mining: &Value, planet_json: &Value) -> String {
    let mut s = format!(
        "Each mining completion moves {ORE_PER_MINING_COMPLETION} ore from the planet to the \
         player (where raids can take it); refining turns it into {UALPHA_PER_REFINED_ORE} ualpha \
         (1 g) of Alpha Matter. The {} proof's difficulty falls from 64 as the work ages over a range of {range}",
        t.name
    );
    if let Some(d) = mining.get("current_difficulty") {
        s.push_str(&format!("; it is {d} now"));
    }
    if let Some(ore) = planet_json.get("ore_remaining") {
        s.push_str(&format!("; the planet has {ore} ore left"));
    }
    s.push('.');
    s
}
