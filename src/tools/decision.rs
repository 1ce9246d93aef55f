//! Decision tree tools: `structs_decision_tree_navigate`,
//! `structs_decision_tree_get_next_actions`, `structs_decision_tree_evaluate_strategy`
//! and `structs_decision_tree_get_build_requirements`. The trees, goals and strategies
//! are data (`data/trees/`, `data/decision-goals.json`, read by [`crate::trees`]); the
//! facts they test are read from the source, and every requirement comes from the
//! source's own rules (`GameSource::check`), never from a second copy of them.

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use super::calculate::{struct_type_schema, type_json};
use super::{Env, Hints, Registry, ToolSpec, output};
use super::{fetch, id_schema, opt_str, parse_id};
use crate::chain::{self, Assume, Requirement};
use crate::entity::struct_types::StructType;
use crate::entity::struct_types::raw_u64;
use crate::entity::{EntityId, EntityKind};
use crate::error::{ErrorCode, ToolError};
use crate::game::difficulty::first_age_at_most;
use crate::game::struct_type_arg;
use crate::handles::Shaping;
use crate::json::whole_number;
use crate::pow::schedule::BLOCK_SECONDS;
use crate::references::Support;
use crate::trees::facts::{Engine, is_destroyed, read_state, slot_ids, type_of};
use crate::trees::walk::{DEFAULT_MAX_STEPS, Stop, TARGET_DIFFICULTY, next_nodes, recommend, walk};
use crate::trees::{Catalog, NodeKind, catalog, strategy};

/// The most decisions a caller may ask a walk to take.
pub const MAX_STEPS: u64 = 256;

fn state_schema() -> Value {
    json!({
        "type": "object",
        "description": "What the trees are evaluated against. Entity facts are read from the source; the override fields (charge, available_capacity_mw, alpha_ualpha, player_online, fleet_on_station, command_ship_online, block_height, or the catalog's resources) replace what the world says, in the facts and in the rules' requirement checks, for \"what if\".",
        "properties": {
            "player_id": id_schema("The player (1-N) whose situation is assessed."),
            "planet_id": id_schema("The player's own planet (2-N); read from the player when omitted."),
            "struct_type": struct_type_schema("A struct type (id 1-22 or name), for trees about one build (build-requirements) or the combat struct to build (combat-readiness)."),
            "target_planet_id": id_schema("Another player's planet (2-N) to raid (combat-readiness, raid)."),
            "risk_tolerance": {"enum": ["low", "medium", "high"],
                "description": "How much risk the player accepts for efficiency (power-management: high builds a Field Generator instead of infusing the reactor)."},
            "charge": {"type": "integer", "minimum": 0, "description": "Assume this charge."},
            "available_capacity_mw": {"type": "integer", "description": "Assume this much free capacity (mW, may be negative)."},
            "player_online": {"type": "boolean", "description": "Assume the player is (not) online."},
            "fleet_on_station": {"type": "boolean", "description": "Assume the fleet is (not) on station."},
            "command_ship_online": {"type": "boolean", "description": "Assume the command ship is (not) online."},
            "block_height": {"type": "integer", "minimum": 0, "description": "Evaluate at this block height instead of the source's."},
            "alpha_ualpha": {"type": "integer", "minimum": 0, "description": "Assume the player holds this much Alpha Matter (ualpha)."},
            "resources": {
                "type": "object",
                "description": "The tool catalog's form of two overrides: alpha_matter in grams (alpha_ualpha = grams × 1,000,000) and watts of free capacity (available_capacity_mw = watts × 1,000). The answer's state shows them as those overrides; one given both ways must agree.",
                "properties": {
                    "alpha_matter": {"type": "number", "minimum": 0, "description": "Alpha Matter the player holds, in grams."},
                    "watts": {"type": "number", "description": "Free capacity, in W (may be negative)."}
                },
                "additionalProperties": false
            }
        },
        "additionalProperties": false
    })
}

/// Registers the decision-tree tools.
///
/// A declarative table: one registration a tool.
pub fn register(registry: &mut Registry) {
    // A shipped tree that does not validate stops the program here, when the registry
    // is built, with every problem listed.
    let cat = catalog();
    let goals: Vec<&str> = cat.goals.keys().map(String::as_str).collect();
    let strategies: Vec<&str> = cat.strategies.keys().map(String::as_str).collect();
    registry.add(
        ToolSpec {
            name: "structs_decision_tree_navigate",
            description: "Walk a decision tree from its root against a player's state and get \
                where it leads. Trees: build-requirements (can this struct type be built now; \
                needs player_id and struct_type), mining-operation (extractor, its proof, mining), \
                ore-security (refine held ore before a raid takes it), power-management (stay \
                online, keep a 20% reserve, grow capacity), raid-defense (keep the shields up, \
                then defenses), combat-readiness (ready a raid on target_planet_id), command-ship \
                (build, finish or activate it). Each decision tests a fact read from the game \
                (charge, capacity, fleet and command ship status, the planet's structs and ore) or \
                a requirement evaluated by the game's own rules. Returns path (each node with its \
                condition, the fact's value and the branch taken), current_node (an outcome, or \
                the fact that is unknown and the state input that would make it known), \
                next_nodes (the branches from there) and recommendation (the outcome's action: a \
                tool call or chain message with parameters filled from the state, its reason, \
                priority 1-5 (survival, security, economy, expansion, dominance) and whether its \
                requirements are met now). An unknown tree is RESOURCE_NOT_FOUND listing the trees.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "tree": {"type": "string", "maxLength": 64,
                        "description": "The tree's id: build-requirements, mining-operation, ore-security, power-management, raid-defense, combat-readiness or command-ship."},
                    "state": state_schema(),
                    "max_steps": {"type": "integer", "minimum": 1, "maximum": MAX_STEPS,
                        "description": "Most decisions to take before stopping (default 64); stop early to step through a tree."}
                },
                "required": ["tree", "state"],
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Standard,
            title: "Walk a decision tree",
            hints: Hints::READ,
            output_schema: output::compute::navigate(),
        },
        navigate,
    );
    registry.add(
        ToolSpec {
            name: "structs_decision_tree_get_next_actions",
            description: "What to do next for a goal, ranked: build_mining_operation \
                (mining-operation then ore-security), defend_planet (raid-defense, ore-security, \
                power-management), expand_power (power-management), raid_ready (combat-readiness, \
                ore-security). Each of the goal's trees is walked against the state; each outcome \
                reached gives one action {rank, action (tool name or chain message type), kind, \
                priority (1 survival .. 5 dominance), reason, parameters (ready to call, filled from \
                the state), requirements_met, missing_requirements (from the game's own rules)}, \
                ranked by priority, then ready before blocked, then the goal's tree order. \
                Outcomes that need nothing done are in notes; trees that stopped at a fact the \
                state cannot give are in needs_input with the missing field.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "goal": {"enum": goals, "description": "The goal."},
                    "state": state_schema()
                },
                "required": ["goal", "state"],
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Standard,
            title: "Next actions for a goal",
            hints: Hints::READ,
            output_schema: output::compute::next_actions(),
        },
        get_next_actions,
    );
    registry.add(
        ToolSpec {
            name: "structs_decision_tree_evaluate_strategy",
            description: "Evaluate a named strategy against a player's state: expand_mining (an \
                Ore Extractor and Ore Refinery, then one ore mined and refined), fortify (shields \
                up, then a Planetary Defense Cannon and an Orbital Shield Generator), raid (move \
                to target_planet_id and raid it). Returns feasible (every blocking requirement \
                holds; charge only takes time), score (0..1: met / total × (1 if feasible else \
                0.5) × 24 / (24 + hours)), requirements_met, missing_requirements (each with its \
                step and whether it blocks; build and move requirements come from the game's own \
                rules), estimated_time (blocks, seconds and hours, with each step: builds and \
                proofs timed to difficulty 3 at 6 s per block, charge-consuming actions in \
                sequence) and estimated_cost (charge, build and passive draw in mW, alpha_matter 0: \
                builds cost none).",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "strategy": {"enum": strategies, "description": "The strategy."},
                    "state": state_schema()
                },
                "required": ["strategy", "state"],
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Standard,
            title: "Evaluate a strategy",
            hints: Hints::READ,
            output_schema: output::compute::evaluate_strategy(),
        },
        evaluate_strategy,
    );
    registry.add(
        ToolSpec {
            name: "structs_decision_tree_get_build_requirements",
            description: "Everything a build of a struct type needs. requirements.resources: \
                charge (buildCharge), build_draw_mw, passive_draw_mw, activate_charge, \
                alpha_matter 0; requirements.location: the planet or fleet (the player's own by \
                the type's category, or location), whether it has a free slot, free_slots by the \
                ambits the type may use, how many of the type it holds and the build limit; \
                requirements.prerequisites: player online, fleet on station, command ship online \
                (planet builds) or present (fleet builds), build limit. With player_id each \
                requirement carries met and the rules' detail, evaluated as the game evaluates a \
                MsgStructBuildInitiate, and met / missing_requirements sum them up. \
                estimated_build_time: blocks and seconds from initiation until the build proof is \
                at difficulty 3 (almost free), and at 8, plus the wait for charge.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "struct_type": struct_type_schema("The struct type: an id 1-22 or a name (\"Ore Extractor\", \"ore_extractor\")."),
                    "location": {
                        "type": "object",
                        "properties": {
                            "type": {"enum": ["planet", "fleet"], "description": "planet for types 14-22, fleet for 1-13."},
                            "id": id_schema("The planet (2-N) or fleet (9-N).")
                        },
                        "required": ["type", "id"],
                        "additionalProperties": false,
                        "description": "Where to build; the player's own planet or fleet when omitted."
                    },
                    "player_id": id_schema("The builder (1-N): with it every requirement says whether it is met.")
                },
                "required": ["struct_type"],
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Standard,
            title: "Requirements to build a struct type",
            hints: Hints::READ,
            output_schema: output::compute::build_requirements(),
        },
        get_build_requirements,
    );
}

fn tree_not_found(id: &str, cat: &Catalog) -> ToolError {
    let ids = cat.tree_ids();
    let mut e = ToolError::new(
        ErrorCode::ResourceNotFound,
        format!(
            "decision tree {id:?} not found; the trees are: {}",
            ids.join(", ")
        ),
    );
    e.field = Some("tree".into());
    e.reason = Some(format!("no decision tree {id:?}"));
    e.with_extra("trees", json!(ids))
}

/// The stopping point as `current_node`.
fn current_node(cat: &Catalog, stop: &Stop) -> Value {
    let tree = cat.tree(stop.tree());
    let node = tree.and_then(|t| t.nodes.get(stop.node()));
    let text = match node.map(|n| n.kind()) {
        Some(Ok(NodeKind::Decision { text, .. })) => Some(text.to_string()),
        _ => None,
    };
    match stop {
        Stop::Outcome { tree, node: id } => {
            let title = node.and_then(|n| n.title.clone());
            json!({"tree": tree, "node": id, "kind": "outcome", "title": title})
        }
        Stop::Unknown {
            tree,
            node: id,
            fact,
            missing_input,
            reason,
        } => json!({
            "tree": tree, "node": id, "kind": "unknown", "condition": text,
            "fact": fact, "missing_input": missing_input, "reason": reason,
        }),
        Stop::MaxSteps { tree, node: id } => json!({
            "tree": tree, "node": id, "kind": "max_steps", "condition": text,
            "reason": "the step budget (max_steps) ran out before this decision",
        }),
    }
}

async fn navigate(env: Env, args: Value) -> Result<Value, ToolError> {
    let cat = catalog();
    let id = opt_str(&args, "tree").unwrap_or_default();
    let Some(tree) = cat.tree(id) else {
        return Err(tree_not_found(id, cat));
    };
    let state = read_state(env.source(), &args["state"]).await?;
    let max_steps = args
        .get("max_steps")
        .and_then(whole_number)
        .map_or(DEFAULT_MAX_STEPS, |n| n as usize);
    let mut engine = Engine::new(env.world.source.clone(), state.clone());
    let w = walk(cat, id, &mut engine, max_steps).await?;
    let stop_tree = cat
        .tree(w.stop.tree())
        .expect("a walk stops in a catalog tree");
    let recommendation = match &w.stop {
        Stop::Outcome { node, .. } => recommend(&mut engine, stop_tree, node).await?,
        _ => Value::Null,
    };
    let missing_inputs: Vec<&str> = match &w.stop {
        Stop::Unknown {
            missing_input: Some(m),
            ..
        } => vec![m.as_str()],
        _ => Vec::new(),
    };
    Ok(json!({
        "tree": {"id": tree.id, "title": tree.title, "description": tree.description, "inputs": tree.inputs},
        "state": state,
        "path": w.path,
        "current_node": current_node(cat, &w.stop),
        "next_nodes": next_nodes(stop_tree, w.stop.node()),
        "recommendation": recommendation,
        "missing_inputs": missing_inputs,
        "facts": engine.known_facts(),
        "block_height": engine.height(),
        "timestamp": env.timestamp(),
    }))
}

/// A path as short sentences: `condition: yes`.
fn because(path: &[Value]) -> Vec<String> {
    path.iter()
        .filter_map(|p| {
            let c = p.get("condition")?.as_str()?;
            let b = p.get("branch")?.as_str()?;
            Some(format!("{c}: {b}"))
        })
        .collect()
}

async fn get_next_actions(env: Env, args: Value) -> Result<Value, ToolError> {
    let cat = catalog();
    let goal_name = opt_str(&args, "goal").unwrap_or_default();
    let goal = cat.goals.get(goal_name).ok_or_else(|| {
        ToolError::field(
            ErrorCode::ValidationInvalidValue,
            "goal",
            format!(
                "{goal_name:?} is not a goal; use {}",
                cat.goals.keys().cloned().collect::<Vec<_>>().join(", ")
            ),
        )
    })?;
    let state = read_state(env.source(), &args["state"]).await?;
    let mut engine = Engine::new(env.world.source.clone(), state.clone());
    let mut actions: Vec<(u8, u8, usize, Value)> = Vec::new();
    let mut notes = Vec::new();
    let mut needs_input = Vec::new();
    let mut seen = HashSet::new();
    for (order, tree_id) in goal.trees.iter().enumerate() {
        let w = walk(cat, tree_id, &mut engine, usize::MAX).await?;
        match &w.stop {
            Stop::Outcome { tree, node } => {
                let t = cat.tree(tree).expect("catalog tree");
                let mut rec = recommend(&mut engine, t, node).await?;
                rec["from_tree"] = json!(tree_id);
                rec["because"] = json!(because(&w.path));
                if rec["kind"] == "none" {
                    notes.push(
                        json!({"tree": tree_id, "title": rec["title"], "reason": rec["reason"],
                        "priority": rec["priority"], "because": rec["because"]}),
                    );
                    continue;
                }
                let key = format!("{}|{}", rec["action"], rec["parameters"]);
                if !seen.insert(key) {
                    continue;
                }
                let priority = rec["priority"].as_u64().unwrap_or(5) as u8;
                let readiness = match rec["requirements_met"].as_bool() {
                    Some(true) => 0,
                    None => 1,
                    Some(false) => 2,
                };
                actions.push((priority, readiness, order, rec));
            }
            Stop::Unknown {
                tree,
                node,
                fact,
                missing_input,
                reason,
            } => needs_input.push(json!({
                "tree": tree_id, "stopped_in": tree, "node": node, "fact": fact,
                "missing_input": missing_input, "reason": reason,
            })),
            Stop::MaxSteps { .. } => {}
        }
    }
    actions.sort_by_key(|(p, r, o, _)| (*p, *r, *o));
    let actions: Vec<Value> = actions
        .into_iter()
        .enumerate()
        .map(|(i, (_, _, _, mut a))| {
            if let Some(o) = a.as_object_mut() {
                let mut ranked = Map::new();
                ranked.insert("rank".into(), json!(i + 1));
                ranked.extend(std::mem::take(o));
                *o = ranked;
            }
            a
        })
        .collect();
    Ok(json!({
        "goal": goal_name,
        "description": goal.description,
        "trees": goal.trees,
        "state": state,
        "actions": actions,
        "notes": notes,
        "needs_input": needs_input,
        "ranking": "priority (1 survival, 2 security, 3 economy, 4 expansion, 5 dominance), then actions whose requirements are met, then the goal's tree order",
        "block_height": engine.height(),
        "timestamp": env.timestamp(),
    }))
}

async fn evaluate_strategy(env: Env, args: Value) -> Result<Value, ToolError> {
    let cat = catalog();
    let name = opt_str(&args, "strategy").unwrap_or_default();
    let s = cat.strategies.get(name).ok_or_else(|| {
        ToolError::field(
            ErrorCode::ValidationInvalidValue,
            "strategy",
            format!(
                "{name:?} is not a strategy; use {}",
                cat.strategies
                    .keys()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
    })?;
    let state = read_state(env.source(), &args["state"]).await?;
    for input in &s.inputs {
        if !state.contains_key(input) {
            return Err(ToolError::field(
                ErrorCode::ValidationMissingField,
                format!("state.{input}"),
                format!(
                    "the {name} strategy is evaluated for {}",
                    s.inputs.join(" and ")
                ),
            ));
        }
    }
    let mut engine = Engine::new(env.world.source.clone(), state);
    let mut out = strategy::evaluate(&mut engine, name, s).await?;
    out["timestamp"] = json!(env.timestamp());
    Ok(out)
}

// ---------------------------------------------------------------------------------
// structs_decision_tree_get_build_requirements
// ---------------------------------------------------------------------------------

/// One requirement as the rules evaluated it (`met` null without a player, or when the
/// rules stopped before it).
fn requirement(name: &str, description: &str, checks: Option<&[Requirement]>) -> Value {
    let mut v = json!({"requirement": name, "description": description, "met": Value::Null});
    if let Some(list) = checks {
        match list.iter().find(|r| r.requirement == name) {
            Some(r) => {
                v["met"] = json!(r.met);
                v["detail"] = json!(r.detail);
            }
            None => {
                let failed: Vec<&str> = list
                    .iter()
                    .filter(|r| !r.met)
                    .map(|r| r.requirement)
                    .collect();
                v["detail"] = json!(if failed.is_empty() {
                    "not evaluated for this build".to_string()
                } else {
                    format!("not evaluated: the rules stopped at {}", failed.join(", "))
                });
            }
        }
    }
    v
}

/// The location's slots for the type: free slots by allowed ambit, how many of the
/// type it holds.
async fn location_json(env: &Env, t: &StructType, id: EntityId) -> Result<Value, ToolError> {
    let key = if t.is_fleet() { "Fleet" } else { "Planet" };
    let v = fetch(env, id, "location.id").await?;
    let rows = slot_ids(&v, key);
    let mut free = Map::new();
    let mut total = 0;
    for a in t.ambits() {
        let n = rows
            .iter()
            .find(|(row, _)| *row == a.name())
            .map_or(0, |(_, ids)| ids.iter().filter(|i| i.is_empty()).count());
        total += n;
        free.insert(a.name().into(), json!(n));
    }
    let mut of_type = 0;
    for (_, ids) in &rows {
        for sid in ids.iter().filter(|i| !i.is_empty()) {
            if let Ok(eid) = EntityId::parse(sid)
                && let Some(s) = env.source().get(eid).await?
                && !is_destroyed(&s)
                && type_of(&s) == t.id
            {
                of_type += 1;
            }
        }
    }
    Ok(json!({
        "type": key.to_ascii_lowercase(),
        "id": id.to_string(),
        "owner": v[key]["owner"],
        "available": total > 0,
        "allowed_ambits": t.ambits().iter().map(|a| a.name()).collect::<Vec<_>>(),
        "free_slots": free,
        "free_slots_total": total,
        "of_this_type": of_type,
        "build_limit": t.build_limit,
        "limit_reached": t.build_limit > 0 && of_type >= t.build_limit,
    }))
}

async fn get_build_requirements(env: Env, args: Value) -> Result<Value, ToolError> {
    let t = struct_type_arg(&args["struct_type"], "struct_type")?;
    let given_location = location_arg(&env, &args, t).await?;
    let player = match opt_str(&args, "player_id") {
        Some(p) => {
            let id = parse_id(p, "player_id", Some(EntityKind::Player))?;
            Some((id, fetch(&env, id, "player_id").await?))
        }
        None => None,
    };
    let height = env.status().block_height;
    let home = player.as_ref().and_then(|(_, p)| {
        let field = if t.is_fleet() { "fleetId" } else { "planetId" };
        p["Player"][field]
            .as_str()
            .and_then(|s| EntityId::parse(s).ok())
    });
    let location = given_location.or(home);
    let checks = build_checks(&env, t, player.as_ref(), given_location)?;
    let checks_ref = checks.as_deref();
    let location_v = location_requirements(&env, t, location, given_location, checks_ref).await?;
    let prerequisites = prerequisites(t, checks_ref);
    let charge = raw_u64(t, "buildCharge");
    let resources = json!({
        "charge": charge,
        "build_draw_mw": t.build_draw,
        "passive_draw_mw": t.passive_draw,
        "activate_charge": raw_u64(t, "activateCharge"),
        "alpha_matter": 0,
        "checks": [
            requirement("sufficientCharge", "the charge bar (blocks since the last action) holds the build charge", checks_ref),
            requirement("sufficientPower", "available capacity covers the build draw", checks_ref),
        ],
    });
    let build_time = estimated_build_time(t, charge, player.as_ref().map(|(_, p)| p), height);
    let (met, missing) = match &checks {
        Some(list) => (
            Some(list.iter().all(|r| r.met)),
            list.iter()
                .filter(|r| !r.met)
                .map(|r| json!({"requirement": r.requirement, "detail": r.detail}))
                .collect::<Vec<_>>(),
        ),
        None => (None, Vec::new()),
    };
    Ok(json!({
        "struct_type": type_json(t),
        "player_id": player.as_ref().map(|(id, _)| id.to_string()),
        "requirements": {
            "resources": resources,
            "location": location_v,
            "prerequisites": prerequisites,
        },
        "met": met,
        "missing_requirements": missing,
        "estimated_build_time": build_time,
        "block_height": height,
        "timestamp": env.timestamp(),
    }))
}

/// Where a struct of type `t` is built: `planet` or `fleet`.
fn category(t: &StructType) -> &'static str {
    if t.is_fleet() { "fleet" } else { "planet" }
}

/// The location the caller gave, if any: of the type's category, and there.
async fn location_arg(
    env: &Env,
    args: &Value,
    t: &StructType,
) -> Result<Option<EntityId>, ToolError> {
    let Some(loc) = args.get("location") else {
        return Ok(None);
    };
    let category = category(t);
    let ty = opt_str(loc, "type").unwrap_or_default();
    if ty != category {
        return Err(ToolError::field(
            ErrorCode::ValidationInvalidValue,
            "location.type",
            format!(
                "a {} (type {}) is a {category} struct and is built in a {category}, not a {ty}",
                t.name, t.id
            ),
        ));
    }
    let kind = if t.is_fleet() {
        EntityKind::Fleet
    } else {
        EntityKind::Planet
    };
    let id = parse_id(
        opt_str(loc, "id").unwrap_or_default(),
        "location.id",
        Some(kind),
    )?;
    fetch(env, id, "location.id").await?;
    Ok(Some(id))
}

/// The rules' verdicts, when a player is given: a MsgStructBuild naming the location
/// when one was given (so a location that is not the player's is refused), else a
/// MsgStructBuildInitiate.
fn build_checks(
    env: &Env,
    t: &StructType,
    player: Option<&(EntityId, Value)>,
    given_location: Option<EntityId>,
) -> Result<Option<Vec<Requirement>>, ToolError> {
    let Some((pid, p)) = player else {
        return Ok(None);
    };
    let creator = p["Player"]["primaryAddress"].as_str().unwrap_or_default();
    let msg = match given_location {
        Some(loc) => json!({"@type": format!("{}MsgStructBuild", chain::TYPE_PREFIX),
            "creator": creator, "playerId": pid.to_string(), "structType": t.id.to_string(),
            "locationId": loc.to_string()}),
        None => json!({"@type": format!("{}MsgStructBuildInitiate", chain::TYPE_PREFIX),
            "creator": creator, "playerId": pid.to_string(), "structTypeId": t.id.to_string()}),
    };
    let signed = chain::parse(&msg, "message")?;
    Ok(Some(env.source().check(&signed, &Assume::default())?))
}

/// requirements.location: the location's slots when it is known, with the rules'
/// verdicts on the slot (and on the location, when one was given).
async fn location_requirements(
    env: &Env,
    t: &StructType,
    location: Option<EntityId>,
    given_location: Option<EntityId>,
    checks: Option<&[Requirement]>,
) -> Result<Value, ToolError> {
    let mut location_v = match location {
        Some(id) => location_json(env, t, id).await?,
        None => json!({
            "type": category(t),
            "id": Value::Null,
            "available": Value::Null,
            "allowed_ambits": t.ambits().iter().map(|a| a.name()).collect::<Vec<_>>(),
            "build_limit": t.build_limit,
            "note": "give location or player_id to see its slots",
        }),
    };
    let mut location_checks = vec![requirement(
        "slotAvailable",
        "a free slot in an ambit the type may operate in (4 per ambit)",
        checks,
    )];
    if given_location.is_some() {
        location_checks.push(requirement(
            "validLocation",
            "the location is the builder's own planet or fleet (by the type's category)",
            checks,
        ));
    }
    location_v["checks"] = json!(location_checks);
    Ok(location_v)
}

/// requirements.prerequisites: the builder's state the build needs, by the type.
fn prerequisites(t: &StructType, checks: Option<&[Requirement]>) -> Vec<Value> {
    let mut prerequisites = vec![
        requirement(
            "playerOnline",
            "the builder is online: capacity covers load",
            checks,
        ),
        requirement(
            "fleetOnStation",
            "the builder's fleet is on station (planet builds, and building on the fleet itself)",
            checks,
        ),
    ];
    if t.is_fleet() {
        if t.id != 1 {
            prerequisites.push(requirement(
                "fleetHasCommandShip",
                "the fleet has a command ship (the command ship itself is exempt)",
                checks,
            ));
        }
    } else {
        prerequisites.push(requirement(
            "commandShipOnline",
            "the fleet's command ship is built and online (planet builds)",
            checks,
        ));
    }
    if t.build_limit > 0 {
        prerequisites.push(requirement(
            "buildLimit",
            "fewer of this type at the location than its build limit",
            checks,
        ));
    }
    prerequisites
}

/// estimated_build_time: blocks until the build proof is at difficulty 3 (and at 8),
/// and with a player the wait for the build's `charge`.
fn estimated_build_time(t: &StructType, charge: u64, player: Option<&Value>, height: u64) -> Value {
    let d3 = first_age_at_most(TARGET_DIFFICULTY, t.build_difficulty);
    let d8 = first_age_at_most(8, t.build_difficulty);
    let mut build_time = json!({
        "difficulty_range": t.build_difficulty,
        "target_difficulty": TARGET_DIFFICULTY,
        "blocks": d3,
        "seconds": d3.map(|b| b as f64 * BLOCK_SECONDS),
        "hours": d3.map(|b| (b as f64 * BLOCK_SECONDS / 360.0).round() / 10.0),
        "difficulty_8": {"blocks": d8, "seconds": d8.map(|b| b as f64 * BLOCK_SECONDS)},
        "block_seconds": BLOCK_SECONDS,
        "note": "blocks from initiation until the build proof is at difficulty 3 (almost free); the struct comes online on completion when the power is there",
    });
    if let Some(p) = player {
        let last = p["gridAttributes"]["lastAction"]
            .as_str()
            .and_then(|s| s.parse::<u64>().ok())
            .unwrap_or(0);
        let have = height.saturating_sub(last);
        let wait = charge.saturating_sub(have);
        build_time["charge_now"] = json!(have);
        build_time["charge_wait_blocks"] = json!(wait);
        build_time["total_blocks"] = json!(d3.map(|b| b + wait));
        build_time["total_seconds"] = json!(d3.map(|b| (b + wait) as f64 * BLOCK_SECONDS));
    }
    build_time
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trees::STATE_FIELDS;

    #[test]
    fn the_state_schema_lists_every_state_field() {
        let schema = state_schema();
        let props = schema["properties"].as_object().unwrap();
        // `resources` is the catalog's form of two overrides; read_state turns it
        // into them, so no tree sees it.
        let mut names: Vec<&str> = props
            .keys()
            .map(String::as_str)
            .filter(|&n| n != "resources")
            .collect();
        names.sort_unstable();
        let mut fields: Vec<&str> = STATE_FIELDS.iter().map(|(f, _)| *f).collect();
        fields.sort_unstable();
        assert_eq!(names, fields);
    }
}
