//! `structs_calculate_cost`.

use super::*;

pub(super) fn register(registry: &mut Registry) {
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
            title: "Cost of building a struct type",
            hints: Hints::LOCAL,
            output_schema: output::compute::cost(),
        },
        calculate_cost,
    );
}

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
