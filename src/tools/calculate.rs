//! Calculation tools: `structs_calculate_power`, `structs_calculate_mining`,
//! `structs_calculate_cost`, `structs_calculate_damage` and
//! `structs_calculate_trade_value`. Each applies the rules in [`crate::game`] (and the
//! proof-of-work difficulty in [`crate::pow`]) to its arguments and, where it needs
//! them, to entities read from the source, and answers with the figures, the `formula`
//! it used and a short `explanation`.
//!
//! Amounts of Alpha Matter, ore and energy are read exactly: a JSON number is taken as
//! the decimal it is written as, converted to ualpha or milliwatts (integers), and
//! refused when it is finer than the chain's unit.

use serde_json::{Map, Value, json};

use super::{Env, Registry, ToolSpec};
use super::{chain_str, chain_u64, fetch, id_arg, id_schema, opt_str, parse_id, wrong_kind};
use crate::entity::struct_types::raw_u64;
use crate::entity::struct_types::{Ambit, StructType, struct_type};
use crate::entity::{EntityId, EntityKind};
use crate::error::{ErrorCode, ToolError};
use crate::game::combat::{
    self, Attack, Control, PlanetDefenses, Unit, Weapon, WeaponSlot, check_reach,
};
use crate::game::difficulty::first_age_at_most;
use crate::game::struct_type_arg;
use crate::game::{
    DEFAULT_REACTOR_COMMISSION_PERCENT, Dice, MW_PER_KW, MW_PER_W, ORE_PER_MINING_COMPLETION,
    PLANET_STARTING_ORE, REACTOR_MW_PER_UALPHA, Rate, UALPHA_PER_GRAM, UALPHA_PER_REFINED_ORE,
    generator_mw_per_ualpha,
};
use crate::handles::Shaping;
use crate::json::whole_number;
use crate::pow::{self, schedule::BLOCK_SECONDS};
use crate::references::Support;

/// Most shots a weapon override may fire: the exact expectation walks every branch,
/// 2^shots of them.
pub const MAX_SHOTS: u64 = 8;
/// Most sampled attacks one call may run.
pub const MAX_SAMPLES: u64 = 10_000;
/// The difficulties the build and mining estimates aim for: 8 (a fast machine starts
/// there) and 3 (almost free).
const TARGET_DIFFICULTIES: [u32; 2] = [8, 3];

// ---------------------------------------------------------------------------------
// Argument helpers
// ---------------------------------------------------------------------------------

fn invalid(field: &str, reason: impl Into<String>) -> ToolError {
    ToolError::field(ErrorCode::ValidationInvalidValue, field, reason)
}

fn missing(field: &str, reason: impl Into<String>) -> ToolError {
    ToolError::field(ErrorCode::ValidationMissingField, field, reason)
}

fn u64_arg(args: &Value, field: &str) -> Option<u64> {
    args.get(field).and_then(whole_number)
}

fn u32_arg(args: &Value, field: &str) -> Option<u32> {
    u64_arg(args, field).map(|n| u32::try_from(n).unwrap_or(u32::MAX))
}

/// A non-negative JSON number as an exact integer count of `10^-scale` units: `2.5`
/// with scale 6 is 2,500,000. Refuses a number finer than the unit.
fn scaled(v: &Value, scale: u32, field: &str, unit: &str) -> Result<u128, ToolError> {
    let text = match v {
        Value::Number(n) => n.to_string(),
        _ => return Err(invalid(field, "must be a number")),
    };
    let bad = || {
        invalid(
            field,
            format!("{text} is not a non-negative decimal number"),
        )
    };
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        Some(at) => (
            &text[..at],
            text[at + 1..].parse::<i32>().map_err(|_| bad())?,
        ),
        None => (text.as_str(), 0),
    };
    if mantissa.starts_with('-') {
        return Err(bad());
    }
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits: String = format!("{int}{frac}");
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let digits = digits.trim_start_matches('0');
    let m: u128 = if digits.is_empty() {
        0
    } else {
        digits
            .parse()
            .map_err(|_| invalid(field, format!("{text} is too large")))?
    };
    let shift = i64::from(exponent) - frac.len() as i64 + i64::from(scale);
    if m == 0 {
        return Ok(0);
    }
    if shift >= 0 {
        10u128
            .checked_pow(shift as u32)
            .and_then(|p| m.checked_mul(p))
            .ok_or_else(|| invalid(field, format!("{text} is too large")))
    } else {
        let div = 10u128
            .checked_pow((-shift) as u32)
            .ok_or_else(|| invalid(field, format!("{text} is finer than one {unit}")))?;
        if m.is_multiple_of(div) {
            Ok(m / div)
        } else {
            Err(invalid(field, format!("{text} is finer than one {unit}")))
        }
    }
}

/// `n` units of `10^-scale` as a JSON number: an integer when whole.
fn decimal(n: u128, scale: u32) -> Value {
    let unit = 10u128.pow(scale);
    if n.is_multiple_of(unit) {
        match u64::try_from(n / unit) {
            Ok(whole) => json!(whole),
            Err(_) => json!(n as f64 / unit as f64),
        }
    } else {
        json!(n as f64 / unit as f64)
    }
}

fn int(n: u128) -> Value {
    match u64::try_from(n) {
        Ok(v) => json!(v),
        Err(_) => json!(n as f64),
    }
}

/// The schema of a struct-type argument.
pub(crate) fn struct_type_schema(description: &str) -> Value {
    json!({
        "type": ["integer", "string"],
        "minimum": 1,
        "maximum": 22,
        "maxLength": 64,
        "description": description,
    })
}

pub(crate) fn type_json(t: &StructType) -> Value {
    json!({"id": t.id, "name": t.name, "category": t.category})
}

fn raw_str<'a>(t: &'a StructType, key: &str) -> &'a str {
    t.raw.get(key).and_then(Value::as_str).unwrap_or("")
}

/// When a proof of a work with this range gets cheap: for each target difficulty the
/// age it is reached at, in blocks and seconds, and (given the work's current age) how
/// many blocks are left.
pub(crate) fn difficulty_milestones(range: u64, age_now: Option<u64>) -> Value {
    let mut out = Map::new();
    for d in TARGET_DIFFICULTIES {
        let key = format!("difficulty_{d}");
        let v = match first_age_at_most(d, range) {
            Some(age) => {
                let mut m = json!({
                    "age_blocks": age,
                    "seconds": age as f64 * BLOCK_SECONDS,
                    "hours": (age as f64 * BLOCK_SECONDS / 3600.0 * 10.0).round() / 10.0,
                    "expected_hashes": pow::expected_hashes(d),
                });
                if let Some(now) = age_now {
                    let left = age.saturating_sub(now);
                    m["blocks_left"] = json!(left);
                    m["seconds_left"] = json!(left as f64 * BLOCK_SECONDS);
                }
                m
            }
            None => Value::Null,
        };
        out.insert(key, v);
    }
    Value::Object(out)
}

pub fn register(registry: &mut Registry) {
    registry.add(
        ToolSpec {
            name: "structs_calculate_power",
            description: "Power from Alpha Matter: a reactor gives 1 kW per gram (1 mW per \
                ualpha), a Field Generator 2, a Continental Power Plant 5, a World Engine 10 \
                (their struct type's generatingRate). Computed exactly in ualpha and \
                milliwatts. Returns power_generated (kW), power_generated_mw, \
                conversion_rate (kW per gram), the formula and, for a generator, its struct \
                type and its own build and passive draw; for a reactor, the share you keep \
                at the default 4% commission.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "alpha_matter": {"type": "number", "minimum": 0, "maximum": 1_000_000_000_000u64,
                        "description": "Alpha Matter in grams (1 g = 1,000,000 ualpha); at most 6 decimal places."},
                    "generator_type": {
                        "enum": ["reactor", "fieldGenerator", "continentalPowerPlant", "worldEngine",
                                 "field_generator", "continental_power_plant", "world_engine", 20, 21, 22],
                        "description": "Where the Alpha Matter goes (default reactor); generators also by struct type id 20, 21, 22."
                    }
                },
                "required": ["alpha_matter"],
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Standard,
        },
        calculate_power,
    );
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
        },
        calculate_mining,
    );
    registry.add(
        ToolSpec {
            name: "structs_calculate_cost",
            description: "What building a struct type costs: charge (buildCharge), the power it \
                draws while building and once online (milliwatts), the charge to activate it, \
                and no Alpha Matter; its build difficulty range, and how many blocks (and \
                seconds) after the build starts the proof-of-work falls to difficulty 8 and \
                3. A location_type that does not fit the type's category is an error.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "struct_type": struct_type_schema("The struct type: an id 1-22 or a name (\"Ore Extractor\", \"ore_extractor\")."),
                    "location_type": {"enum": ["planet", "fleet"],
                        "description": "Where it would be built; checked against the type's category."}
                },
                "required": ["struct_type"],
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Standard,
        },
        calculate_cost,
    );
    registry.add(
        ToolSpec {
            name: "structs_calculate_damage",
            description: "Resolve one attack by the chain's rules: evasion (guided vs unguided \
                defensive rates, then a planet's interceptors), defender counters, the \
                deferred block by a same-ambit defender, the volley (per-shot rolls, \
                guaranteed shots, armour unless armour-piercing, at least 1 damage when any \
                shot hits), the target's counter, recoil and planetary cannons. Returns \
                `expected` (exact expected damage to each side and the chance of each \
                event, from every branch's probability), a deterministic `sample` with the \
                full breakdown for a block height and nonce, and the formula. Stats come \
                from the struct types unless overridden.",
            input_schema: damage_schema(),
            references: Support::None,
            shaping: Shaping::Standard,
        },
        calculate_damage,
    );
    registry.add(
        ToolSpec {
            name: "structs_calculate_trade_value",
            description: "What an amount of Alpha Matter (grams), ore or energy (watts) is worth \
                in the other units: alpha to energy at the reactor rate (1 g = 1 kW), ore to \
                alpha at the refining rate (1 ore = 1 g); or, with market set to a provider \
                id (10-N), at that provider's rate (its price per milliwatt of capacity per \
                block). Returns the values, market_rate, the formula and a timestamp.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "resource": {"enum": ["alpha_matter", "ore", "energy", "watts"],
                        "description": "What the amount is: alpha_matter (grams), ore (units of 1 g), energy or watts (W of capacity)."},
                    "amount": {"type": "number", "minimum": 0, "maximum": 1_000_000_000_000_000u64,
                        "description": "How much: grams of alpha or ore (6 decimals at most), watts of energy (3 decimals at most)."},
                    "market": {"type": "string", "maxLength": 48,
                        "description": "reactor (default), or a provider id (10-N) to price energy at its rate."}
                },
                "required": ["resource", "amount"],
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Standard,
        },
        calculate_trade_value,
    );
}

// ---------------------------------------------------------------------------------
// structs_calculate_power
// ---------------------------------------------------------------------------------

/// The generator a power calculation is for: the reactor, or a generator struct type.
fn generator_arg(args: &Value) -> Result<Option<&'static StructType>, ToolError> {
    let Some(v) = args.get("generator_type") else {
        return Ok(None);
    };
    if v.as_str() == Some("reactor") {
        return Ok(None);
    }
    let t = struct_type_arg(v, "generator_type")?;
    if generator_mw_per_ualpha(t) == 0 {
        return Err(invalid(
            "generator_type",
            format!("{} does not generate power", t.name),
        ));
    }
    Ok(Some(t))
}

async fn calculate_power(_env: Env, args: Value) -> Result<Value, ToolError> {
    let ualpha = scaled(
        &args["alpha_matter"],
        6,
        "alpha_matter",
        "microgram (ualpha)",
    )?;
    let generator = generator_arg(&args)?;
    let (rate, name) = match generator {
        None => (REACTOR_MW_PER_UALPHA, "reactor".to_string()),
        Some(t) => (generator_mw_per_ualpha(t), t.name.clone()),
    };
    let mw = ualpha * u128::from(rate);
    let grams = decimal(ualpha, 6);
    let kw = decimal(mw, 6);
    let mut out = json!({
        "alpha_matter": grams,
        "alpha_matter_ualpha": int(ualpha),
        "generator_type": match generator {
            None => "reactor".to_string(),
            Some(t) => camel(&t.name),
        },
        "conversion_rate": rate,
        "conversion_rate_unit": "kW per gram (= mW per ualpha)",
        "power_generated": kw,
        "power_generated_mw": int(mw),
        "power_generated_w": decimal(mw, 3),
        "formula": format!(
            "power_mw = alpha_ualpha × {rate}; kW = power_mw / {MW_PER_KW}; 1 g = {UALPHA_PER_GRAM} ualpha"
        ),
        "inputs": {"alpha_ualpha": int(ualpha), "mw_per_ualpha": rate},
    });
    match generator {
        None => {
            let kept = mw * u128::from(100 - DEFAULT_REACTOR_COMMISSION_PERCENT) / 100;
            out["reactor"] = json!({
                "default_commission_percent": DEFAULT_REACTOR_COMMISSION_PERCENT,
                "player_share_mw": int(kept),
                "reactor_share_mw": int(mw - kept),
                "reversible": true,
            });
            out["explanation"] = json!(format!(
                "{grams} g of Alpha Matter infused into a reactor gives {kw} kW \
                 ({mw} mW) of capacity at 1 mW per ualpha; at the default {DEFAULT_REACTOR_COMMISSION_PERCENT}% \
                 commission the reactor keeps {} mW and you get {kept} mW. Defusing returns the alpha after a cooldown.",
                mw - kept
            ));
        }
        Some(t) => {
            let passive = u128::from(t.passive_draw);
            out["generator"] = json!({
                "struct_type_id": t.id,
                "name": t.name,
                "build_draw_mw": t.build_draw,
                "passive_draw_mw": t.passive_draw,
                "power_after_own_passive_draw_mw": if mw >= passive {
                    int(mw - passive)
                } else {
                    json!(-i64::try_from(passive - mw).unwrap_or(i64::MAX))
                },
                "reversible": false,
            });
            out["explanation"] = json!(format!(
                "{grams} g of Alpha Matter infused into a {name} gives {kw} kW ({mw} mW) at \
                 {rate} mW per ualpha, {rate}x a reactor. The alpha is consumed for good and the \
                 generator can be raided; it draws {} mW itself once online.",
                t.passive_draw
            ));
        }
    }
    Ok(out)
}

/// `Field Generator` → `fieldGenerator`.
fn camel(name: &str) -> String {
    let mut out = String::new();
    for (i, word) in name.split_whitespace().enumerate() {
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            if i == 0 {
                out.extend(first.to_lowercase());
            } else {
                out.extend(first.to_uppercase());
            }
            out.push_str(chars.as_str());
        }
    }
    out
}

// ---------------------------------------------------------------------------------
// structs_calculate_mining
// ---------------------------------------------------------------------------------

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
    let (t, extractor) = match (args.get("extractor_id"), args.get("struct_type")) {
        (Some(_), Some(_)) => {
            return Err(invalid(
                "struct_type",
                "give extractor_id or struct_type, not both: an extractor's type is read from it",
            ));
        }
        (None, None) => {
            return Err(missing(
                "extractor_id",
                "give an extractor's struct id (5-N), or a struct_type",
            ));
        }
        (Some(_), None) => {
            let s = fetch_struct(&env, &args, "extractor_id").await?;
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
            (s.t, Some(s))
        }
        (None, Some(v)) => {
            let t = struct_type_arg(v, "struct_type")?;
            if !mines(t) {
                return Err(invalid(
                    "struct_type",
                    format!("{} does not mine ore; the Ore Extractor (14) does", t.name),
                ));
            }
            (t, None)
        }
    };
    let range = raw_u64(t, "oreMiningDifficulty");
    let block_start = u64_arg(&args, "block_start").or_else(|| {
        extractor
            .as_ref()
            .map(|e| chain_u64(&e.entity, &["structAttributes", "blockStartOreMine"]).unwrap_or(0))
    });

    // The planet: given, or the extractor's own.
    let (planet, planet_field) = match opt_str(&args, "planet_id") {
        Some(p) => (
            Some(parse_id(p, "planet_id", Some(EntityKind::Planet))?),
            "planet_id",
        ),
        None => {
            let own = extractor.as_ref().and_then(|e| {
                (chain_str(&e.entity, &["Struct", "locationType"]) == Some("planet"))
                    .then(|| chain_str(&e.entity, &["Struct", "locationId"]))
                    .flatten()
                    .and_then(|p| EntityId::parse(p).ok())
            });
            (own, "extractor_id")
        }
    };
    let planet_json = match planet {
        Some(p) => {
            let v = fetch(&env, p, planet_field).await?;
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
            json!({
                "id": p.to_string(),
                "ore_remaining": ore,
                "completions_left": ore / ORE_PER_MINING_COMPLETION,
                "starting_ore": PLANET_STARTING_ORE,
                "max_ore": chain_u64(&v, &["Planet", "maxOre"]),
            })
        }
        None => Value::Null,
    };

    let refining = match opt_str(&args, "refinery_id") {
        Some(_) => {
            let r = fetch_struct(&env, &args, "refinery_id").await?;
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
            let start =
                chain_u64(&r.entity, &["structAttributes", "blockStartOreRefine"]).unwrap_or(0);
            json!({
                "refinery_id": r.id.to_string(),
                "refining_difficulty_range": rrange,
                "state": work_state(rrange, start, current_block, "refining"),
            })
        }
        None => Value::Null,
    };

    let mining = match block_start {
        Some(start) => work_state(range, start, current_block, "mining"),
        None => json!({
            "active": null,
            "reason": "no extractor or block_start given",
            "milestones_from_start": difficulty_milestones(range, None),
        }),
    };
    let explanation = {
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
    };
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

// ---------------------------------------------------------------------------------
// structs_calculate_cost
// ---------------------------------------------------------------------------------

async fn calculate_cost(_env: Env, args: Value) -> Result<Value, ToolError> {
    let t = struct_type_arg(&args["struct_type"], "struct_type")?;
    if let Some(loc) = opt_str(&args, "location_type")
        && loc != t.category
    {
        return Err(invalid(
            "location_type",
            format!(
                "{} is a {} struct: it is built {}, not {}",
                t.name,
                t.category,
                if t.is_fleet() {
                    "in a fleet"
                } else {
                    "on a planet"
                },
                if loc == "fleet" {
                    "in a fleet"
                } else {
                    "on a planet"
                },
            ),
        )
        .with_extra("category", json!(t.category)));
    }
    let charge = raw_u64(t, "buildCharge");
    let activate = raw_u64(t, "activateCharge");
    let milestones = difficulty_milestones(t.build_difficulty, None);
    let ambits: Vec<&str> = t.ambits().into_iter().map(Ambit::name).collect();
    let at3 = milestones["difficulty_3"]["age_blocks"].clone();
    Ok(json!({
        "struct_type": type_json(t),
        "location_type": t.category,
        "possible_ambits": ambits,
        "build_limit": t.build_limit,
        "cost": {
            "charge": charge,
            "build_draw_mw": t.build_draw,
            "build_draw_w": decimal(u128::from(t.build_draw), 3),
            "passive_draw_mw": t.passive_draw,
            "passive_draw_w": decimal(u128::from(t.passive_draw), 3),
            "activate_charge": activate,
            "alpha_matter": 0,
            "note": "Building costs charge and power, not Alpha Matter: the build reserves build_draw \
                     while it runs, and once complete the struct draws passive_draw while online \
                     (one after the other, not both).",
        },
        "build_difficulty": t.build_difficulty,
        "build_proof": milestones,
        "block_seconds": BLOCK_SECONDS,
        "formula": "charge = buildCharge (the player's charge bar refills about 1 per block); \
                    load while building = buildDraw, then passiveDraw once online; \
                    build proof difficulty = max(1, 64 - trunc(log10(age) / log10(buildDifficulty) × 63)); \
                    seconds = age_blocks × 6",
        "inputs": {"buildCharge": charge, "buildDraw": t.build_draw, "passiveDraw": t.passive_draw,
                   "activateCharge": activate, "buildDifficulty": t.build_difficulty},
        "explanation": format!(
            "{} {} takes {charge} charge to start, reserves {} W while it builds and draws {} W once \
             online; its build proof reaches difficulty 3 {at3} blocks after the build starts.",
            capital(article(&t.name)),
            t.name,
            t.build_draw as f64 / MW_PER_W as f64,
            t.passive_draw as f64 / MW_PER_W as f64,
        ),
    }))
}

// ---------------------------------------------------------------------------------
// structs_calculate_damage
// ---------------------------------------------------------------------------------

fn rate_schema(description: &str) -> Value {
    json!({
        "type": "object",
        "description": description,
        "properties": {
            "numerator": {"type": "integer", "minimum": 0, "maximum": 1_000_000},
            "denominator": {"type": "integer", "minimum": 0, "maximum": 1_000_000}
        },
        "required": ["numerator", "denominator"],
        "additionalProperties": false
    })
}

fn small_int(max: u64, description: &str) -> Value {
    json!({"type": "integer", "minimum": 0, "maximum": max, "description": description})
}

/// The properties every unit (attacker, defender, blocker) takes.
fn unit_properties() -> Map<String, Value> {
    let v = json!({
        "struct_type": struct_type_schema("The struct type: an id 1-22 or a name."),
        "ambit": {"enum": ["water", "land", "air", "space"],
            "description": "Where it operates; must be one of the type's ambits. Chosen to make the matchup work when omitted."},
        "health": {"type": "integer", "minimum": 1, "maximum": 1000,
            "description": "Current health (default: max health)."},
        "ready": {"type": "boolean", "description": "Online with its owner online (default true); only a ready struct counters or blocks."},
        "max_health": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "Override: max health."},
        "attack_reduction": small_int(100, "Override: armour taken off each volley."),
        "guided_defense": rate_schema("Override: chance to evade guided fire."),
        "unguided_defense": rate_schema("Override: chance to evade unguided fire."),
        "counter_attack": small_int(100, "Override: counter damage against an attacker in another ambit."),
        "counter_attack_same_ambit": small_int(100, "Override: counter damage against an attacker in the same ambit."),
        "post_destruction_damage": small_int(100, "Override: damage dealt to whoever destroys it."),
        "stealth": {"type": "boolean", "description": "Override: stealthed (only attackable from its own ambit)."}
    });
    v.as_object().cloned().expect("object")
}

fn unit_schema(extra: Value, description: &str) -> Value {
    let mut props = unit_properties();
    if let Value::Object(m) = extra {
        props.extend(m);
    }
    json!({
        "type": "object",
        "description": description,
        "properties": props,
        "required": ["struct_type"],
        "additionalProperties": false
    })
}

fn damage_schema() -> Value {
    let weapon = json!({
        "weapon": {"enum": ["primary", "secondary"], "description": "The weapon fired (default primary)."},
        "control": {"enum": ["guided", "unguided"], "description": "Override: the weapon's control."},
        "shots": small_int(MAX_SHOTS, "Override: shots per volley (at most 8)."),
        "guaranteed_shots": small_int(MAX_SHOTS, "Override: shots that hit without a roll."),
        "damage": small_int(100, "Override: damage per hit."),
        "shot_success": rate_schema("Override: each rolled shot's chance to hit."),
        "armour_piercing": {"type": "boolean", "description": "Override: ignores the receiver's armour."},
        "recoil_damage": small_int(100, "Override: damage the attacker takes after firing."),
        "blockable": {"type": "boolean", "description": "Override: a same-ambit defender can block it."},
        "counterable": {"type": "boolean", "description": "Override: defenders and the target can counter it."}
    });
    json!({
        "type": "object",
        "properties": {
            "attacker": unit_schema(weapon, "The attacking struct, its weapon and any stat overrides."),
            "defender": unit_schema(json!({}), "The target of the attack."),
            "blockers": {
                "type": "array", "maxItems": 16,
                "description": "The target's defenders: each ready one counters if its weapons reach the attacker; the first in the target's ambit blocks.",
                "items": unit_schema(json!({}), "One defender of the target.")
            },
            "planet": {
                "type": "object",
                "description": "The planet's defenses, when the defender is a planetary struct on its owner's planet.",
                "properties": {
                    "cannon_damage": small_int(100, "Damage of the planet's defense cannons, all together."),
                    "interceptors": small_int(40, "Interceptors (Jamming Satellites) on the planet.")
                },
                "additionalProperties": false
            },
            "block_height": {"type": "integer", "minimum": 0, "description": "Block height for the sample roll (default: the source's)."},
            "nonce": {"type": "integer", "minimum": 0, "description": "The attacking player's nonce for the sample roll (default 0)."},
            "player_id": id_schema("The attacking player (1-N) for the sample roll (default 1-1)."),
            "samples": {"type": "integer", "minimum": 0, "maximum": MAX_SAMPLES,
                "description": "Extra sampled attacks (successive nonces) to average, as a check on `expected` (default 0)."}
        },
        "required": ["attacker", "defender"],
        "additionalProperties": false
    })
}

fn rate_arg(v: &Value) -> Option<Rate> {
    Some(Rate::new(
        v.get("numerator").and_then(whole_number)?,
        v.get("denominator").and_then(whole_number)?,
    ))
}

fn ambit_by_name(name: &str) -> Option<Ambit> {
    Ambit::ALL.into_iter().find(|a| a.name() == name)
}

/// A unit from its argument object: type and stat overrides. Its ambit is settled
/// later (it may depend on the other units).
fn unit_arg(v: &Value, field: &str, id: &str) -> Result<(Unit, Option<Ambit>), ToolError> {
    let t = struct_type_arg(&v["struct_type"], &format!("{field}.struct_type"))?;
    let first = t.ambits()[0];
    let mut u = Unit::new(id, t, first);
    let s = &mut u.stats;
    if let Some(n) = u32_arg(v, "max_health") {
        s.max_health = n;
    }
    if let Some(n) = u32_arg(v, "attack_reduction") {
        s.attack_reduction = n;
    }
    if let Some(r) = v.get("guided_defense").and_then(rate_arg) {
        s.guided_defense = r;
    }
    if let Some(r) = v.get("unguided_defense").and_then(rate_arg) {
        s.unguided_defense = r;
    }
    if let Some(n) = u32_arg(v, "counter_attack") {
        s.counter_attack = n;
    }
    if let Some(n) = u32_arg(v, "counter_attack_same_ambit") {
        s.counter_attack_same_ambit = n;
    }
    if let Some(n) = u32_arg(v, "post_destruction_damage") {
        s.post_destruction_damage = n;
    }
    if let Some(b) = v.get("stealth").and_then(Value::as_bool) {
        s.stealth = b;
    }
    u.health = match u32_arg(v, "health") {
        Some(h) if h > s.max_health => {
            return Err(ToolError::field(
                ErrorCode::ValidationOutOfRange,
                format!("{field}.health"),
                format!(
                    "{h} is more than the {}'s max health {}",
                    t.name, s.max_health
                ),
            ));
        }
        Some(h) => h,
        None => s.max_health,
    };
    if let Some(b) = v.get("ready").and_then(Value::as_bool) {
        u.ready = b;
    }
    let ambit = match opt_str(v, "ambit") {
        Some(name) => {
            let a = ambit_by_name(name)
                .ok_or_else(|| invalid(&format!("{field}.ambit"), "unknown ambit"))?;
            if t.possible_ambit & a.bit() == 0 {
                let can: Vec<&str> = t.ambits().into_iter().map(Ambit::name).collect();
                return Err(invalid(
                    &format!("{field}.ambit"),
                    format!(
                        "a {} operates in {}, not {}",
                        t.name,
                        can.join(" or "),
                        a.name()
                    ),
                ));
            }
            Some(a)
        }
        None => None,
    };
    Ok((u, ambit))
}

/// Applies the attacker's weapon overrides to its weapon in `slot`.
fn weapon_overrides(u: &mut Unit, slot: WeaponSlot, v: &Value) -> Result<(), ToolError> {
    let name = struct_type(u.type_id).map_or("?", |t| t.name.as_str());
    let Some(w) = u.stats.weapon_mut(slot) else {
        return Err(invalid(
            "attacker.weapon",
            format!("a {name} has no {} weapon", slot.name()),
        ));
    };
    if let Some(c) = opt_str(v, "control") {
        w.control = if c == "guided" {
            Control::Guided
        } else {
            Control::Unguided
        };
    }
    if let Some(n) = u32_arg(v, "shots") {
        w.shots = n;
    }
    if let Some(n) = u32_arg(v, "guaranteed_shots") {
        w.guaranteed_shots = n;
    }
    if let Some(n) = u32_arg(v, "damage") {
        w.damage = n;
    }
    if let Some(r) = v.get("shot_success").and_then(rate_arg) {
        w.shot_success = r;
    }
    if let Some(b) = v.get("armour_piercing").and_then(Value::as_bool) {
        w.armour_piercing = b;
    }
    if let Some(n) = u32_arg(v, "recoil_damage") {
        w.recoil_damage = n;
    }
    if let Some(b) = v.get("blockable").and_then(Value::as_bool) {
        w.blockable = b;
    }
    if let Some(b) = v.get("counterable").and_then(Value::as_bool) {
        w.counterable = b;
    }
    if w.guaranteed_shots > w.shots {
        return Err(invalid(
            "attacker.guaranteed_shots",
            format!(
                "{} guaranteed shots is more than the {} shots the weapon fires",
                w.guaranteed_shots, w.shots
            ),
        ));
    }
    Ok(())
}

fn possible(u: &Unit) -> Vec<Ambit> {
    struct_type(u.type_id).map_or_else(Vec::new, StructType::ambits)
}

/// Whether the attacker, placed at some ambit it may take (or `given`), can fire at a
/// target placed at `at`.
fn can_fire(
    attacker: &Unit,
    given: Option<Ambit>,
    slot: WeaponSlot,
    target: &Unit,
    at: Ambit,
) -> bool {
    let froms = given.map_or_else(|| possible(attacker), |a| vec![a]);
    froms.into_iter().any(|from| {
        let mut a = attacker.clone();
        a.ambit = from;
        let mut t = target.clone();
        t.ambit = at;
        check_reach(&a, slot, &t).is_ok()
    })
}

fn weapon_json(w: &Weapon) -> Value {
    let mut v = serde_json::to_value(w).unwrap_or(Value::Null);
    v["reach_ambits"] = json!(w.reach_names());
    v
}

fn unit_json(u: &Unit) -> Value {
    let t = struct_type(u.type_id);
    let s = &u.stats;
    json!({
        "id": u.id,
        "struct_type": t.map(type_json),
        "ambit": u.ambit.name(),
        "health": u.health,
        "max_health": s.max_health,
        "ready": u.ready,
        "attack_reduction": s.attack_reduction,
        "unit_defenses": s.unit_defenses,
        "guided_defense": s.guided_defense,
        "unguided_defense": s.unguided_defense,
        "counter_attack": s.counter_attack,
        "counter_attack_same_ambit": s.counter_attack_same_ambit,
        "post_destruction_damage": s.post_destruction_damage,
        "stealth": s.stealth,
        "planetary": s.planetary,
    })
}

/// `a` or `an` before a name.
fn article(name: &str) -> &'static str {
    if name.starts_with(['A', 'E', 'I', 'O', 'U', 'a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}

fn capital(word: &str) -> String {
    let mut c = word.chars();
    c.next()
        .map_or_else(String::new, |f| f.to_uppercase().chain(c).collect())
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// Resolves the attack `n` more times with the dice (successive nonces) and averages.
fn sample_many(attack: &Attack, dice: &mut Dice, n: u64) -> Value {
    let (mut to_target, mut to_attacker, mut killed, mut lost) = (0u64, 0u64, 0u64, 0u64);
    for _ in 0..n {
        let o = combat::resolve(attack, dice);
        to_target += u64::from(o.damage_to_target);
        to_attacker += u64::from(o.damage_to_attacker);
        killed += u64::from(o.target_destroyed());
        lost += u64::from(o.attacker_destroyed());
    }
    let count = n as f64;
    json!({
        "count": n,
        "mean_damage_to_target": to_target as f64 / count,
        "mean_damage_to_attacker": to_attacker as f64 / count,
        "target_destroyed_rate": killed as f64 / count,
        "attacker_destroyed_rate": lost as f64 / count,
        "nonce_after": dice.nonce(),
    })
}

async fn calculate_damage(env: Env, args: Value) -> Result<Value, ToolError> {
    let a_args = &args["attacker"];
    let slot = opt_str(a_args, "weapon")
        .and_then(WeaponSlot::parse)
        .unwrap_or(WeaponSlot::Primary);
    let (mut attacker, attacker_ambit) = unit_arg(a_args, "attacker", "attacker")?;
    weapon_overrides(&mut attacker, slot, a_args)?;
    let (mut target, target_ambit) = unit_arg(&args["defender"], "defender", "defender")?;

    // The ambits: as given, or the first that makes the matchup possible.
    target.ambit = target_ambit.unwrap_or_else(|| {
        possible(&target)
            .into_iter()
            .find(|&at| can_fire(&attacker, attacker_ambit, slot, &target, at))
            .unwrap_or(target.ambit)
    });
    attacker.ambit = attacker_ambit.unwrap_or_else(|| {
        let options = possible(&attacker);
        let fits = |from: Ambit| {
            let mut a = attacker.clone();
            a.ambit = from;
            check_reach(&a, slot, &target).is_ok()
        };
        if options.contains(&target.ambit) && fits(target.ambit) {
            target.ambit
        } else {
            options
                .into_iter()
                .find(|&a| fits(a))
                .unwrap_or(attacker.ambit)
        }
    });
    if let Err(reason) = check_reach(&attacker, slot, &target) {
        let w = attacker.stats.weapon(slot);
        return Err(invalid("defender.ambit", reason)
            .with_extra("attacker_ambit", json!(attacker.ambit.name()))
            .with_extra("defender_ambit", json!(target.ambit.name()))
            .with_extra("weapon_reach", json!(w.map(Weapon::reach_names))));
    }

    let mut defenders = Vec::new();
    if let Some(list) = args.get("blockers").and_then(Value::as_array) {
        for (i, b) in list.iter().enumerate() {
            let field = format!("blockers[{i}]");
            let (mut u, ambit) = unit_arg(b, &field, &format!("blocker-{}", i + 1))?;
            u.ambit = ambit.unwrap_or_else(|| {
                let options = possible(&u);
                if options.contains(&target.ambit) {
                    target.ambit
                } else {
                    options[0]
                }
            });
            defenders.push(u);
        }
    }
    let planet = match args.get("planet") {
        Some(p) => {
            if !target.stats.planetary {
                return Err(invalid(
                    "planet",
                    format!(
                        "planetary defenses protect planetary structs only; the defender, a {}, is a fleet struct",
                        struct_type(target.type_id).map_or("?", |t| t.name.as_str())
                    ),
                ));
            }
            Some(PlanetDefenses {
                cannon_damage: u32_arg(p, "cannon_damage").unwrap_or(0),
                interceptors: u32_arg(p, "interceptors").unwrap_or(0),
            })
        }
        None => None,
    };
    let attack = Attack {
        attacker,
        weapon: slot,
        target,
        defenders,
        planet,
    };

    let block_height = u64_arg(&args, "block_height").unwrap_or_else(|| env.status().block_height);
    let nonce = u64_arg(&args, "nonce").unwrap_or(0);
    let player = match opt_str(&args, "player_id") {
        Some(p) => parse_id(p, "player_id", Some(EntityKind::Player))?.to_string(),
        None => "1-1".to_string(),
    };
    let samples = u64_arg(&args, "samples").unwrap_or(0);
    // Thousands of branches or samples, each with a few SHA-256 rolls: off the
    // runtime's workers.
    let (attack, expected, sample, sampled) = {
        let player = player.clone();
        tokio::task::spawn_blocking(move || {
            let expected = combat::expected(&attack);
            let mut dice = Dice::new(block_height, &player, nonce);
            let sample = combat::resolve(&attack, &mut dice);
            let sampled = (samples > 0).then(|| sample_many(&attack, &mut dice, samples));
            (attack, expected, sample, sampled)
        })
        .await
        .map_err(|e| {
            ToolError::new(
                ErrorCode::ToolExecutionFailed,
                format!("the damage calculation failed: {e}"),
            )
        })?
    };

    let w = attack
        .attacker
        .stats
        .weapon(slot)
        .expect("check_reach found the weapon");
    let a_name = struct_type(attack.attacker.type_id).map_or("?", |t| t.name.as_str());
    let t_name = struct_type(attack.target.type_id).map_or("?", |t| t.name.as_str());
    let explanation = format!(
        "{} {a_name} in {} fires its {} weapon ({}, {} {} of {} damage, {} guaranteed, {} per rolled shot{}) \
         at {} {t_name} in {}. Expected: {} damage to the {t_name} ({}% destroyed), {} back to the \
         {a_name} ({}% destroyed); evaded {}% of the time, blocked {}% (the blocker takes {} expected).",
        capital(article(a_name)),
        attack.attacker.ambit.name(),
        slot.name(),
        w.control.name(),
        w.shots,
        if w.shots == 1 { "shot" } else { "shots" },
        w.damage,
        w.guaranteed_shots,
        w.shot_success,
        if w.armour_piercing {
            ", armour-piercing"
        } else {
            ""
        },
        article(t_name),
        attack.target.ambit.name(),
        round3(expected.damage_to_target),
        round3(expected.target_destroyed * 100.0),
        round3(expected.damage_to_attacker),
        round3(expected.attacker_destroyed * 100.0),
        round3(expected.evaded * 100.0),
        round3(expected.blocked * 100.0),
        round3(expected.damage_to_blocker),
    );
    let mut attacker_json = unit_json(&attack.attacker);
    attacker_json["weapon"] = weapon_json(w);
    Ok(json!({
        "attacker": attacker_json,
        "defender": unit_json(&attack.target),
        "blockers": attack.defenders.iter().map(unit_json).collect::<Vec<_>>(),
        "planet": attack.planet,
        "expected": expected,
        "sample": {
            "dice": {
                "block_height": block_height,
                "player_id": player,
                "nonce": nonce,
                "nonce_after": nonce + sample.rolls,
                "roll": "success when first 8 bytes (big-endian) of SHA-256(\"{block_height}/{player_id}/{nonce}\") mod denominator < numerator; each roll advances the nonce",
            },
            "outcome": sample,
        },
        "samples": sampled.unwrap_or(Value::Null),
        "formula": "evade = roll(target's guided|unguided defensive rate), then for guided fire at a planetary \
                    target roll(1 - (2/3)^interceptors); each ready defender whose weapons reach the attacker \
                    counters once (counterAttackSameAmbit if same ambit, else counterAttack); the first ready \
                    defender in the target's ambit blocks (blockable, not evaded, attacker alive); \
                    volley = sum(damage for each shot: shot < guaranteed or roll(shot success)); \
                    damage = max(1, volley - armour) when volley > 0 (armour 0 if armour-piercing), \
                    capped at the receiver's health; then the target counters, recoil, cannons",
        "explanation": explanation,
    }))
}

// ---------------------------------------------------------------------------------
// structs_calculate_trade_value
// ---------------------------------------------------------------------------------

async fn calculate_trade_value(env: Env, args: Value) -> Result<Value, ToolError> {
    let resource = opt_str(&args, "resource").unwrap_or_default();
    let amount = &args["amount"];
    // Everything in ualpha-equivalent (alpha, ore) or milliwatts (energy), exactly.
    let (ualpha, mw, unit) = match resource {
        "alpha_matter" => {
            let u = scaled(amount, 6, "amount", "microgram (ualpha)")?;
            (
                u,
                u * u128::from(REACTOR_MW_PER_UALPHA),
                "grams of Alpha Matter",
            )
        }
        "ore" => {
            let micro_ore = scaled(amount, 6, "amount", "millionth of an ore")?;
            let u = micro_ore * u128::from(UALPHA_PER_REFINED_ORE) / 1_000_000;
            (u, u * u128::from(REACTOR_MW_PER_UALPHA), "ore (1 g each)")
        }
        _ => {
            let m = scaled(amount, 3, "amount", "milliwatt")?;
            (
                m / u128::from(REACTOR_MW_PER_UALPHA),
                m,
                "watts of capacity",
            )
        }
    };
    let mut values = json!({
        "alpha_matter_grams": decimal(ualpha, 6),
        "alpha_matter_ualpha": int(ualpha),
        "ore": decimal(ualpha, 6),
        "energy_mw": int(mw),
        "energy_w": decimal(mw, 3),
        "energy_kw": decimal(mw, 6),
    });
    let market = opt_str(&args, "market").unwrap_or("reactor");
    let (market_rate, formula, mut explanation) = if market == "reactor" {
        (
            json!({
                "market": "reactor",
                "mw_per_ualpha": REACTOR_MW_PER_UALPHA,
                "kw_per_gram": REACTOR_MW_PER_UALPHA,
                "ualpha_per_ore": UALPHA_PER_REFINED_ORE,
                "default_commission_percent": DEFAULT_REACTOR_COMMISSION_PERCENT,
            }),
            "energy_mw = alpha_ualpha × 1 (reactor); alpha_ualpha = ore × 1,000,000 (refining); \
             1 g = 1,000,000 ualpha; 1 kW = 1,000,000 mW"
                .to_string(),
            match resource {
                "alpha_matter" => format!(
                    "{} g of Alpha Matter infused into a reactor is {} kW of capacity (every block, while infused).",
                    values["alpha_matter_grams"], values["energy_kw"]
                ),
                "ore" => format!(
                    "{} ore refines into {} g of Alpha Matter, which a reactor turns into {} kW of capacity.",
                    values["ore"], values["alpha_matter_grams"], values["energy_kw"]
                ),
                _ => format!(
                    "{} W of capacity takes {} g of Alpha Matter infused into a reactor (before its commission).",
                    values["energy_w"], values["alpha_matter_grams"]
                ),
            },
        )
    } else {
        let id = parse_id(market, "market", None).map_err(|_| {
            invalid(
                "market",
                format!("{market:?} is not a market: use reactor or a provider id (10-N)"),
            )
        })?;
        if id.kind != EntityKind::Provider {
            return Err(wrong_kind("market", id, EntityKind::Provider));
        }
        let p = fetch(&env, id, "market").await?;
        let rate = chain_u64(&p, &["Provider", "rate", "amount"]).unwrap_or(0);
        let denom = chain_str(&p, &["Provider", "rate", "denom"])
            .unwrap_or("")
            .to_string();
        if rate == 0 {
            return Err(invalid("market", format!("provider {id} has no rate set")));
        }
        let duration_min = chain_u64(&p, &["Provider", "durationMinimum"])
            .unwrap_or(1)
            .max(1);
        let rate128 = u128::from(rate);
        let v = values.as_object_mut().expect("object");
        // An agreement costs capacity × rate × duration, paid up front.
        v.insert("market_cost_per_block".into(), int(mw * rate128));
        v.insert(
            "market_cost_for_minimum_duration".into(),
            int(mw * rate128 * u128::from(duration_min)),
        );
        if denom == "ualpha" {
            v.insert(
                "market_capacity_mw_for_one_block".into(),
                int(ualpha / rate128),
            );
            v.insert(
                "market_capacity_mw_for_minimum_duration".into(),
                int(ualpha / (rate128 * u128::from(duration_min))),
            );
        } else if resource != "energy" && resource != "watts" {
            return Err(invalid(
                "market",
                format!(
                    "provider {id} prices capacity in {denom}, not ualpha: Alpha Matter and ore have no value there; ask with resource energy"
                ),
            ));
        }
        (
            json!({
                "market": id.to_string(),
                "denom": denom,
                "amount": rate,
                "unit": format!("{denom} per milliwatt of capacity per block"),
                "duration_minimum": duration_min,
                "duration_maximum": chain_u64(&p, &["Provider", "durationMaximum"]),
                "capacity_minimum_mw": chain_u64(&p, &["Provider", "capacityMinimum"]),
                "capacity_maximum_mw": chain_u64(&p, &["Provider", "capacityMaximum"]),
                "reactor_break_even_blocks": rate / REACTOR_MW_PER_UALPHA,
            }),
            format!(
                "agreement cost = capacity_mw × {rate} {denom} × blocks (paid up front); \
                 capacity for one block = ualpha / {rate}; reactor: 1 ualpha = 1 mW every block"
            ),
            if resource == "energy" || resource == "watts" {
                format!(
                    "Provider {id} sells capacity at {rate} {denom} per mW per block: {} W for one block costs {} {denom}, \
                     {} {denom} for its {duration_min}-block minimum. After {rate} blocks buying has cost as much as \
                     infusing a reactor, which keeps giving 1 mW per ualpha.",
                    values["energy_w"],
                    values["market_cost_per_block"],
                    values["market_cost_for_minimum_duration"]
                )
            } else {
                format!(
                    "At {rate} {denom} per mW per block, {} g of Alpha Matter buys {} mW from provider {id} for one \
                     block ({} mW for its {duration_min}-block minimum); infused into a reactor it gives {} mW every block.",
                    values["alpha_matter_grams"],
                    values["market_capacity_mw_for_one_block"],
                    values["market_capacity_mw_for_minimum_duration"],
                    values["energy_mw"]
                )
            },
        )
    };
    explanation.push_str(" Energy is capacity per block: it is not stored.");
    Ok(json!({
        "resource": resource,
        "amount": amount,
        "unit": unit,
        "value": values,
        "market_rate": market_rate,
        "formula": formula,
        "timestamp": env.timestamp(),
        "explanation": explanation,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_read_as_the_decimals_they_are() {
        let s = |v: Value, scale| scaled(&v, scale, "x", "unit");
        assert_eq!(s(json!(1), 6).unwrap(), 1_000_000);
        assert_eq!(s(json!(0.1), 6).unwrap(), 100_000);
        assert_eq!(s(json!(2.5), 3).unwrap(), 2_500);
        assert_eq!(s(json!(0.000001), 6).unwrap(), 1);
        assert_eq!(s(json!(1e12), 6).unwrap(), 1_000_000_000_000_000_000);
        assert_eq!(s(json!(0), 6).unwrap(), 0);
        assert_eq!(s(json!(0.0), 6).unwrap(), 0);
        assert!(s(json!(0.0000001), 6).is_err());
        assert!(s(json!(1.0005), 3).is_err());
        assert!(s(json!(-1), 6).is_err());
        assert_eq!(decimal(2_500_000, 6), json!(2.5));
        assert_eq!(decimal(3_000_000, 6), json!(3));
    }

    #[test]
    fn struct_types_by_id_or_name() {
        for v in [
            json!(14),
            json!("14"),
            json!("Ore Extractor"),
            json!("ore_extractor"),
            json!("oreExtractor"),
        ] {
            assert_eq!(struct_type_arg(&v, "t").unwrap().id, 14, "{v}");
        }
        assert!(struct_type_arg(&json!("Death Star"), "t").is_err());
        assert!(struct_type_arg(&json!(23), "t").is_err());
        assert_eq!(camel("Continental Power Plant"), "continentalPowerPlant");
    }

    #[test]
    fn difficulty_milestones_match_the_chain_rule() {
        // Mining (range 14000) reaches difficulty 3 after about 17 hours.
        let age = first_age_at_most(3, 14_000).unwrap();
        assert!(pow::difficulty(age, 14_000) <= 3 && pow::difficulty(age - 1, 14_000) > 3);
        let hours = age as f64 * BLOCK_SECONDS / 3600.0;
        assert!((16.0..18.5).contains(&hours), "{hours}");
        assert_eq!(first_age_at_most(1, 700), Some(700));
        assert_eq!(first_age_at_most(3, 0), None);
    }
}
