//! Answers worked out from the game's rules: the calculators, proof-of-work, the
//! decision trees.

use serde_json::{Value, json};

use super::*;

/// Fields every calculator states beside its figures.
fn workings() -> [(&'static str, Value); 2] {
    [
        ("formula", about(string(), "How the figures are computed.")),
        (
            "explanation",
            about(string(), "The figures in a sentence or two."),
        ),
    ]
}

fn with_workings(mut props: Value) -> Value {
    for (k, v) in workings() {
        props[k] = v;
    }
    props
}

/// `structs_calculate_power`.
pub fn power() -> Value {
    answer(
        &[
            "alpha_matter",
            "alpha_matter_ualpha",
            "generator_type",
            "conversion_rate",
            "conversion_rate_unit",
            "power_generated",
            "power_generated_mw",
            "power_generated_w",
            "formula",
            "inputs",
            "explanation",
        ],
        with_workings(json!({
            "alpha_matter": about(number(), "Grams."),
            "alpha_matter_ualpha": count(),
            "generator_type": about(string(), "reactor, or the generator's type in camelCase (fieldGenerator)."),
            "conversion_rate": about(count(), "kW per gram (= mW per ualpha)."),
            "conversion_rate_unit": string(),
            "power_generated": about(number(), "kW."),
            "power_generated_mw": count(),
            "power_generated_w": number(),
            "inputs": {"type": "object"},
            "reactor": about(object(&["default_commission_percent", "player_share_mw", "reactor_share_mw"],
                json!({"default_commission_percent": number(), "player_share_mw": count(),
                       "reactor_share_mw": count(), "reversible": boolean()})),
                "A reactor: the shares at the default commission."),
            "generator": about(object(&["struct_type_id", "name", "passive_draw_mw"],
                json!({"struct_type_id": count(), "name": string(), "build_draw_mw": count(),
                       "passive_draw_mw": count(), "power_after_own_passive_draw_mw": {"type": "integer"},
                       "reversible": boolean()})),
                "A generator struct: its type and own draw."),
        })),
    )
}

/// `structs_calculate_cost`.
pub fn cost() -> Value {
    answer(
        &[
            "struct_type",
            "location_type",
            "possible_ambits",
            "build_limit",
            "cost",
            "build_difficulty",
            "build_proof",
            "block_seconds",
            "formula",
            "inputs",
            "explanation",
        ],
        with_workings(json!({
            "struct_type": struct_type_brief(),
            "location_type": one_of(&["planet", "fleet"]),
            "possible_ambits": array(one_of(&["water", "land", "air", "space"])),
            "build_limit": count(),
            "cost": object(&["charge", "build_draw_mw", "passive_draw_mw", "activate_charge", "alpha_matter"],
                json!({"charge": count(), "build_draw_mw": count(), "build_draw_w": number(),
                       "passive_draw_mw": count(), "passive_draw_w": number(),
                       "activate_charge": count(), "alpha_matter": {"const": 0}, "note": string()})),
            "build_difficulty": about(count(), "The build proof's difficulty range."),
            "build_proof": about(milestones(), "When the build proof gets cheap, from the build's start."),
            "block_seconds": number(),
            "inputs": {"type": "object"},
        })),
    )
}

/// A mining or refining cycle's state.
fn work_state() -> Value {
    object(
        &["active"],
        json!({
            "active": about(nullable(boolean()), "null: nothing said when the work started."),
            "reason": string(),
            "block_start": count(),
            "current_block": count(),
            "age": count(),
            "current_difficulty": {"type": "integer", "minimum": 1, "maximum": 64},
            "expected_hashes": number(),
            "milestones": milestones(),
            "milestones_from_start": milestones(),
        }),
    )
}

/// `structs_calculate_mining`.
pub fn mining() -> Value {
    answer(
        &[
            "struct_type",
            "extractor_id",
            "ore_per_completion",
            "mining_difficulty_range",
            "current_block",
            "mining",
            "planet",
            "refining",
            "alpha_per_refined_ore_ualpha",
            "alpha_per_refined_ore_grams",
            "formula",
            "inputs",
            "explanation",
        ],
        with_workings(json!({
            "struct_type": struct_type_brief(),
            "extractor_id": nullable(entity_id(Some(EntityKind::Struct))),
            "ore_per_completion": count(),
            "mining_difficulty_range": count(),
            "current_block": count(),
            "mining": work_state(),
            "planet": nullable(object(&["id", "ore_remaining", "completions_left"],
                json!({"id": entity_id(Some(EntityKind::Planet)), "ore_remaining": count(),
                       "completions_left": count(), "starting_ore": count(),
                       "max_ore": nullable(count())}))),
            "refining": nullable(object(&["refinery_id", "refining_difficulty_range", "state"],
                json!({"refinery_id": entity_id(Some(EntityKind::Struct)),
                       "refining_difficulty_range": count(), "state": work_state()}))),
            "alpha_per_refined_ore_ualpha": count(),
            "alpha_per_refined_ore_grams": number(),
            "inputs": {"type": "object"},
        })),
    )
}

/// `structs_calculate_trade_value`.
pub fn trade_value() -> Value {
    answer(
        &[
            "resource",
            "amount",
            "unit",
            "value",
            "market_rate",
            "formula",
            "timestamp",
            "explanation",
        ],
        with_workings(json!({
            "resource": one_of(&["alpha_matter", "ore", "energy", "watts"]),
            "amount": number(),
            "unit": string(),
            "value": about(object(&["alpha_matter_grams", "alpha_matter_ualpha", "ore", "energy_mw", "energy_w", "energy_kw"],
                json!({"alpha_matter_grams": number(), "alpha_matter_ualpha": count(), "ore": number(),
                       "energy_mw": count(), "energy_w": number(), "energy_kw": number()})),
                "The amount in every unit (and, at a provider, what it buys there)."),
            "market_rate": object(&["market"], json!({"market": string()})),
            "timestamp": timestamp(),
        })),
    )
}

/// A unit of a damage calculation.
fn unit() -> Value {
    object(
        &[
            "id",
            "struct_type",
            "ambit",
            "health",
            "max_health",
            "ready",
        ],
        json!({"id": string(), "struct_type": nullable(struct_type_brief()),
               "ambit": one_of(&["water", "land", "air", "space"]), "health": count(),
               "max_health": count(), "ready": boolean(), "weapon": {"type": "object"}}),
    )
}

/// `structs_calculate_damage`.
pub fn damage() -> Value {
    let expected = object(
        &[
            "damage_to_target",
            "damage_to_attacker",
            "target_destroyed",
            "attacker_destroyed",
            "evaded",
            "blocked",
        ],
        json!({"damage_to_target": number(), "damage_to_attacker": number(),
               "damage_to_blocker": number(), "target_destroyed": number(),
               "attacker_destroyed": number(), "evaded": number(), "blocked": number(),
               "volley_fired": number(), "branches": count()}),
    );
    answer(
        &[
            "attacker",
            "defender",
            "blockers",
            "planet",
            "expected",
            "sample",
            "samples",
            "formula",
            "explanation",
        ],
        with_workings(json!({
            "attacker": unit(),
            "defender": unit(),
            "blockers": array(unit()),
            "planet": nullable(json!({"type": "object"})),
            "expected": about(expected, "Exact expectations over every roll (destroyed, evaded and blocked as probabilities)."),
            "sample": about(object(&["dice", "outcome"], json!({"dice": {"type": "object"}, "outcome": {"type": "object"}})),
                "One attack rolled with the chain's dice."),
            "samples": about(nullable(object(&["count"], json!({"count": count()}))), "The averages of the extra sampled attacks."),
        })),
    )
}

/// Where a proof-of-work's work came from.
fn work() -> Value {
    json!({
        "action_type": one_of(&["struct_build_complete", "ore_miner_complete", "ore_refinery_complete", "planet_raid_complete"]),
        "entity_id": string(),
        "planet_id": nullable(string()),
        "block_start": count(),
        "current_block": count(),
        "age": count(),
        "difficulty_range": count(),
        "difficulty_range_source": string(),
    })
}

fn difficulty() -> Value {
    json!({"type": "integer", "minimum": 0, "maximum": 64})
}

/// `structs_calculate_proof_of_work`: a proof found (running out is an error).
pub fn proof_of_work() -> Value {
    let mut props = work();
    for (k, v) in [
        ("hash", about(string(), "Lowercase hex SHA-256 of input.")),
        ("nonce", count()),
        ("input", string()),
        ("valid", boolean()),
        ("difficulty_met", boolean()),
        ("difficulty", difficulty()),
        ("achieved_difficulty", difficulty()),
        ("iterations", count()),
        ("computation_time_ms", count()),
        ("hashrate", number()),
        ("threads", count()),
        ("kernel", string()),
    ] {
        props[k] = v;
    }
    answer_all(props)
}

/// `structs_validate_proof`.
pub fn validate_proof() -> Value {
    let mut props = work();
    for (k, v) in [
        ("valid", about(boolean(), "The chain would accept it.")),
        ("hash_matches", boolean()),
        ("difficulty_met", boolean()),
        ("required_difficulty", difficulty()),
        ("achieved_difficulty", difficulty()),
        ("expected_hash", string()),
        ("input", string()),
        ("reason", string()),
    ] {
        props[k] = v;
    }
    // The work is stated when it was looked up, without its entity.
    if let Some(o) = props.as_object_mut() {
        o.remove("entity_id");
        o.remove("planet_id");
    }
    answer(
        &[
            "valid",
            "hash_matches",
            "difficulty_met",
            "required_difficulty",
            "achieved_difficulty",
            "expected_hash",
            "input",
            "reason",
        ],
        props,
    )
}

/// `structs_calculate_pow_schedule`.
pub fn pow_schedule() -> Value {
    let step = object(
        &[
            "difficulty",
            "from_block",
            "to_block",
            "age",
            "expected_seconds",
        ],
        json!({"difficulty": difficulty(), "from_block": count(), "to_block": nullable(count()),
               "age": count(), "starts_in_seconds": number(), "expected_hashes": number(),
               "expected_seconds": number()}),
    );
    answer(
        &[
            "difficulty_range",
            "block_start",
            "current_block",
            "hashrate",
            "block_seconds",
            "steps",
            "web_client_start_block",
            "recommended_start_block",
            "expected_seconds_to_proof",
            "start_now",
            "difficulty_now",
            "difficulty_range_source",
            "hashrate_source",
            "formula",
        ],
        json!({
            "difficulty_range": count(),
            "block_start": count(),
            "current_block": count(),
            "hashrate": number(),
            "block_seconds": number(),
            "steps": about(array(step), "Every difficulty from now on, in order."),
            "web_client_start_block": nullable(count()),
            "recommended_start_block": about(count(), "Start hashing here for the soonest expected proof."),
            "expected_seconds_to_proof": number(),
            "start_now": boolean(),
            "difficulty_now": difficulty(),
            "difficulty_range_source": string(),
            "hashrate_source": string(),
            "formula": string(),
        }),
    )
}

/// `structs_list_pow_work`: the work a proof completes now, easiest first.
pub fn pow_work() -> Value {
    let item = object(
        &[
            "action_type",
            "entity_id",
            "type_name",
            "state",
            "block_start",
            "age",
            "difficulty_range",
            "difficulty_now",
            "arguments",
        ],
        json!({
            "action_type": one_of(&["struct_build_complete", "ore_miner_complete",
                                    "ore_refinery_complete", "planet_raid_complete"]),
            "entity_id": about(string(), "The struct (5-N), or for a raid the fleet (9-N)."),
            "planet_id": nullable(string()),
            "struct_type": nullable(count()),
            "type_name": about(string(), "The struct type's name, or Fleet for a raid."),
            "owner": nullable(string()),
            "state": about(string(), "being built; online, mining; online, refining; away at 2-N, raiding."),
            "block_start": count(),
            "age": count(),
            "difficulty_range": count(),
            "difficulty_now": difficulty(),
            "arguments": about(
                json!({"type": "object"}),
                "What to pass to structs_calculate_proof_of_work for this work.",
            ),
        }),
    );
    answer(
        &["work", "total", "current_block", "scanned", "complete"],
        json!({
            "work": array(item),
            "total": about(count(), "Every piece of work found, before the limit."),
            "current_block": count(),
            "scanned": about(json!({"type": "object"}), "How many structs, planets and fleets were read."),
            "complete": about(boolean(), "False when the world was larger than one answer reads (5,000 of a kind)."),
        }),
    )
}

/// What a decision-tree tool read the world with.
fn state_and_height() -> [(&'static str, Value); 3] {
    [
        (
            "state",
            about(json!({"type": "object"}), "The state as given."),
        ),
        ("block_height", count()),
        ("timestamp", timestamp()),
    ]
}

fn with_state(mut props: Value) -> Value {
    for (k, v) in state_and_height() {
        props[k] = v;
    }
    props
}

/// An outcome of a tree as an action to take, with `more` fields.
fn recommendation(more: Value) -> Value {
    let mut props = json!({
        "tree": string(), "node": string(), "title": string(), "reason": string(),
        "priority": about(json!({"type": "integer", "minimum": 1, "maximum": 5}), "1 survival ... 5 dominance."),
        "tier": string(),
        "kind": one_of(&["tool", "message", "wait", "none"]),
        "action": about(nullable(string()), "The tool to call or the message to submit."),
        "parameters": {"type": "object"},
        "requirements_met": nullable(boolean()),
        "missing_requirements": array(json!({"type": "object"})),
        "requirements": array(json!({"type": "object"})),
    });
    let mut required = vec![
        "tree",
        "node",
        "title",
        "priority",
        "kind",
        "action",
        "parameters",
    ];
    if let (Some(p), Value::Object(more)) = (props.as_object_mut(), more) {
        for (k, v) in more {
            p.insert(k, v);
        }
    }
    if props.get("rank").is_some() {
        required.push("rank");
    }
    object(&required, props)
}

/// `structs_decision_tree_navigate`.
pub fn navigate() -> Value {
    let node = object(
        &["tree", "node", "kind"],
        json!({"tree": string(), "node": string(),
               "kind": one_of(&["outcome", "unknown", "max_steps"]), "title": string(),
               "missing_input": nullable(string()), "reason": nullable(string())}),
    );
    answer(
        &[
            "tree",
            "state",
            "path",
            "current_node",
            "next_nodes",
            "recommendation",
            "missing_inputs",
            "facts",
            "block_height",
            "timestamp",
        ],
        with_state(json!({
            "tree": object(&["id", "title"], json!({"id": string(), "title": string(),
                "description": string(), "inputs": array(string())})),
            "path": about(array(object(&["tree", "node"], json!({"tree": string(), "node": string(),
                "branch": string(), "next": string()}))), "Each decision taken: the condition, the fact's value, the branch."),
            "current_node": about(node, "Where the walk stopped."),
            "next_nodes": array(json!({"type": "object"})),
            "recommendation": about(nullable(recommendation(json!({}))),
                "The outcome reached, as an action to take; null when the walk stopped before one."),
            "missing_inputs": about(array(string()), "State fields to give to go on."),
            "facts": about(json!({"type": "object"}), "Every fact read, by name."),
        })),
    )
}

/// `structs_decision_tree_get_next_actions`.
pub fn next_actions() -> Value {
    answer(
        &[
            "goal",
            "description",
            "trees",
            "state",
            "actions",
            "notes",
            "needs_input",
            "ranking",
            "block_height",
            "timestamp",
        ],
        with_state(json!({
            "goal": string(),
            "description": string(),
            "trees": array(string()),
            "actions": about(array(recommendation(json!({"rank": count(), "from_tree": string(),
                "because": array(string())}))),
                "The actions the goal's trees recommend, best first (rank 1 first)."),
            "notes": array(json!({"type": "object"})),
            "needs_input": array(object(&["tree", "missing_input"], json!({"tree": string(),
                "missing_input": nullable(string()), "reason": nullable(string())}))),
            "ranking": string(),
        })),
    )
}

/// `structs_decision_tree_evaluate_strategy`.
pub fn evaluate_strategy() -> Value {
    let req = object(
        &["requirement", "met"],
        json!({"requirement": string(), "met": nullable(boolean()), "detail": nullable(string()),
               "step": string(), "blocking": boolean()}),
    );
    answer(
        &[
            "strategy",
            "title",
            "description",
            "feasible",
            "score",
            "score_formula",
            "requirements_met",
            "missing_requirements",
            "requirements",
            "estimated_time",
            "estimated_cost",
            "block_height",
            "timestamp",
        ],
        json!({
            "strategy": one_of(&["expand_mining", "fortify", "raid"]),
            "title": string(),
            "description": string(),
            "feasible": boolean(),
            "score": about(json!({"type": "number", "minimum": 0, "maximum": 1}), "0-1, see score_formula."),
            "score_formula": string(),
            "requirements_met": boolean(),
            "missing_requirements": array(req.clone()),
            "requirements": array(req),
            "estimated_time": object(&["blocks", "seconds", "steps"], json!({"blocks": count(),
                "seconds": number(), "hours": number(), "steps": array(json!({"type": "object"}))})),
            "estimated_cost": object(&["charge", "build_draw_mw", "passive_draw_mw"], json!({
                "charge": count(), "build_draw_mw": count(), "passive_draw_mw": count(),
                "alpha_matter": count(), "note": string()})),
            "block_height": count(),
            "timestamp": timestamp(),
        }),
    )
}

/// `structs_decision_tree_get_build_requirements`.
pub fn build_requirements() -> Value {
    answer(
        &[
            "struct_type",
            "player_id",
            "requirements",
            "met",
            "missing_requirements",
            "estimated_build_time",
            "block_height",
            "timestamp",
        ],
        json!({
            "struct_type": struct_type_brief(),
            "player_id": nullable(entity_id(Some(EntityKind::Player))),
            "requirements": object(&["resources", "location", "prerequisites"], json!({
                "resources": object(&["charge", "build_draw_mw", "passive_draw_mw"], json!({
                    "charge": count(), "build_draw_mw": count(), "passive_draw_mw": count()})),
                "location": {"type": "object"},
                "prerequisites": array(object(&["requirement", "met"], json!({
                    "requirement": string(), "description": string(), "met": nullable(boolean())}))),
            })),
            "met": about(nullable(boolean()), "Every requirement holds for player_id; null without a player."),
            "missing_requirements": array(object(&["requirement", "detail"], json!({
                "requirement": string(), "detail": string()}))),
            "estimated_build_time": object(&["difficulty_range", "blocks"], json!({
                "difficulty_range": count(), "blocks": nullable(count()), "seconds": nullable(number())})),
            "block_height": count(),
            "timestamp": timestamp(),
        }),
    )
}
