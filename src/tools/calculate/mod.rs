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

mod cost;
mod damage;
mod mining;
mod power;
mod trade;

use serde_json::{Map, Value, json};

use super::{Env, Hints, Registry, ToolSpec, output};
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
    crate::entity::struct_types::field_str(&t.raw, key)
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

/// Registers the calculation tools.
pub fn register(registry: &mut Registry) {
    power::register(registry);
    mining::register(registry);
    cost::register(registry);
    damage::register(registry);
    trade::register(registry);
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
        assert_eq!(
            power::camel("Continental Power Plant"),
            "continentalPowerPlant"
        );
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
