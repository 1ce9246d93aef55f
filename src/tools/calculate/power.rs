//! `structs_calculate_power`.

use super::*;

pub(super) fn register(registry: &mut Registry) {
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
            title: "Power from Alpha Matter",
            hints: Hints::LOCAL,
            output_schema: output::compute::power(),
        },
        calculate_power,
    );
}

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
pub(super) fn camel(name: &str) -> String {
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
