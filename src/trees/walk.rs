//! Walking a tree against a state, and turning the outcome reached into a
//! recommendation with its parameters filled and its requirements checked.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::facts::{Engine, Fact};
use super::{
    Action, Catalog, Condition, NodeKind, Op, TemplateRef, Tree, all_refs, template_refs, tier,
};
use crate::chain;
use crate::entity::EntityId;
use crate::entity::struct_types::struct_type;
use crate::error::{ErrorCode, ToolError};
use crate::game::difficulty::first_age_at_most;
use crate::json::chain_u64;
use crate::pow::{self, schedule::BLOCK_SECONDS};

/// The most decisions a walk takes when the caller does not say.
pub const DEFAULT_MAX_STEPS: usize = 64;
/// The proof difficulty the estimates aim for: a hash at 3 is almost free.
pub const TARGET_DIFFICULTY: u32 = 3;

/// Where a walk stopped.
#[derive(Debug, Clone, PartialEq)]
pub enum Stop {
    Outcome {
        tree: String,
        node: String,
    },
    /// A decision whose fact (or compared fact) is not known.
    Unknown {
        tree: String,
        node: String,
        fact: String,
        missing_input: Option<String>,
        reason: String,
    },
    /// The step budget ran out before this decision.
    MaxSteps {
        tree: String,
        node: String,
    },
}

impl Stop {
    pub fn tree(&self) -> &str {
        match self {
            Stop::Outcome { tree, .. }
            | Stop::Unknown { tree, .. }
            | Stop::MaxSteps { tree, .. } => tree,
        }
    }

    pub fn node(&self) -> &str {
        match self {
            Stop::Outcome { node, .. }
            | Stop::Unknown { node, .. }
            | Stop::MaxSteps { node, .. } => node,
        }
    }
}

/// A finished walk: every node passed, and where it stopped.
#[derive(Debug, Clone)]
pub struct Walk {
    pub path: Vec<Value>,
    pub stop: Stop,
}

fn fact_label(c: &super::Condition) -> Value {
    let mut m = Map::new();
    m.insert("fact".into(), json!(c.fact));
    if let Some(n) = &c.name {
        m.insert("requirement".into(), json!(n));
    }
    if let Some(a) = &c.action {
        m.insert("action".into(), json!(a));
    }
    if let Some(t) = &c.struct_type {
        m.insert("struct_type".into(), t.clone());
    }
    if let Some(o) = c.online {
        m.insert("online".into(), json!(o));
    }
    Value::Object(m)
}

/// Walks from `start`'s root, following subtree links, for at most `max_steps`
/// decisions.
pub async fn walk(
    catalog: &Catalog,
    start: &str,
    engine: &mut Engine,
    max_steps: usize,
) -> Result<Walk, ToolError> {
    let mut tree = catalog
        .tree(start)
        .ok_or_else(|| ToolError::new(ErrorCode::ResourceNotFound, format!("no tree {start}")))?;
    let mut at = tree.root.clone();
    let mut path = Vec::new();
    let mut steps = 0;
    // Trees and links are acyclic (validated); this only guards against a bug.
    for _ in 0..10_000 {
        let node = tree
            .nodes
            .get(&at)
            .ok_or_else(|| bug(&format!("{} has no node {at}", tree.id)))?;
        match node.kind().map_err(|e| bug(&e))? {
            NodeKind::Outcome { .. } => {
                return Ok(Walk {
                    path,
                    stop: Stop::Outcome {
                        tree: tree.id.clone(),
                        node: at,
                    },
                });
            }
            NodeKind::Subtree(sub) => {
                let next = catalog
                    .tree(sub)
                    .ok_or_else(|| bug(&format!("subtree {sub} is missing")))?;
                path.push(json!({"tree": tree.id, "node": at, "subtree": sub, "next": next.root}));
                tree = next;
                at = tree.root.clone();
            }
            NodeKind::Decision {
                condition,
                text,
                yes,
                no,
            } => {
                if steps >= max_steps {
                    return Ok(Walk {
                        path,
                        stop: Stop::MaxSteps {
                            tree: tree.id.clone(),
                            node: at,
                        },
                    });
                }
                steps += 1;
                let found = match evaluate_condition(engine, condition).await? {
                    Ok(found) => found,
                    Err(u) => {
                        return Ok(Walk {
                            path,
                            stop: Stop::Unknown {
                                tree: tree.id.clone(),
                                node: at,
                                fact: u.fact,
                                missing_input: u.missing_input,
                                reason: u.reason,
                            },
                        });
                    }
                };
                let next = if found.holds { yes } else { no };
                path.push(decision_step(&tree.id, &at, text, condition, found, next));
                at = next.to_string();
            }
        }
    }
    Err(bug("the walk did not end"))
}

/// A decision's condition evaluated: the fact's value, what it was compared with and
/// whether the comparison holds.
struct Evaluated {
    value: Value,
    detail: Option<String>,
    expected: Option<Value>,
    op: Op,
    holds: bool,
}

/// Why a decision cannot be taken: the fact not known (or not comparable), and why.
struct Undecided {
    fact: String,
    missing_input: Option<String>,
    reason: String,
}

/// Evaluates a decision's condition: its fact, the value it is compared with (given or
/// another fact's), and the comparison.
async fn evaluate_condition(
    engine: &mut Engine,
    condition: &Condition,
) -> Result<Result<Evaluated, Undecided>, ToolError> {
    let unknown = |fact: &str, missing_input, reason| Undecided {
        fact: fact.to_string(),
        missing_input,
        reason,
    };
    let (value, detail) = match engine.fact(&condition.fact, Some(condition)).await? {
        Fact::Known { value, detail } => (value, detail),
        Fact::Unknown {
            missing_input,
            reason,
        } => {
            let fact = condition
                .name
                .as_deref()
                .map_or(condition.fact.clone(), |n| {
                    format!(
                        "requirement {n} ({})",
                        condition.action.as_deref().unwrap_or("")
                    )
                });
            return Ok(Err(unknown(&fact, missing_input, reason)));
        }
    };
    let expected = match &condition.value_from {
        Some(other) => match engine.fact(other, None).await? {
            Fact::Known { value, .. } => Some(value),
            Fact::Unknown {
                missing_input,
                reason,
            } => return Ok(Err(unknown(other, missing_input, reason))),
        },
        None => condition.value(),
    };
    let op = condition
        .op()
        .ok_or_else(|| bug("a condition without op"))?;
    let Some(holds) = op.apply(&value, expected.as_ref()) else {
        return Ok(Err(unknown(
            &condition.fact,
            None,
            format!(
                "{} ({value}) cannot be compared with {} {}",
                condition.fact,
                op.symbol(),
                expected.unwrap_or(Value::Null)
            ),
        )));
    };
    Ok(Ok(Evaluated {
        value,
        detail,
        expected,
        op,
        holds,
    }))
}

/// The path's entry for a decision taken: the condition, what was found, and the branch.
fn decision_step(
    tree: &str,
    at: &str,
    text: &str,
    condition: &Condition,
    found: Evaluated,
    next: &str,
) -> Value {
    let mut step = Map::new();
    step.insert("tree".into(), json!(tree));
    step.insert("node".into(), json!(at));
    step.insert("condition".into(), json!(text));
    step.insert("fact".into(), fact_label(condition));
    step.insert("op".into(), json!(found.op.symbol()));
    if found.op != Op::Exists {
        step.insert("expected".into(), found.expected.unwrap_or(Value::Null));
    }
    if let Some(f) = &condition.value_from {
        step.insert("expected_from".into(), json!(f));
    }
    step.insert("value".into(), found.value);
    if let Some(d) = found.detail {
        step.insert("detail".into(), json!(d));
    }
    step.insert(
        "branch".into(),
        json!(if found.holds { "yes" } else { "no" }),
    );
    step.insert("next".into(), json!(next));
    Value::Object(step)
}

/// The branches out of a decision node (empty for an outcome).
pub fn next_nodes(tree: &Tree, node: &str) -> Vec<Value> {
    match tree.nodes.get(node).map(|n| n.kind()) {
        Some(Ok(NodeKind::Decision { text, yes, no, .. })) => vec![
            json!({"node": yes, "branch": "yes", "condition": text}),
            json!({"node": no, "branch": "no", "condition": format!("not: {text}")}),
        ],
        Some(Ok(NodeKind::Subtree(sub))) => {
            vec![json!({"node": sub, "branch": "subtree", "condition": "always"})]
        }
        _ => Vec::new(),
    }
}

/// Replaces the templates of a JSON value; references without a value stay as written.
fn fill(v: &Value, values: &HashMap<String, Option<Value>>) -> Value {
    match v {
        Value::String(s) => {
            let refs = template_refs(s);
            if refs.len() == 1 && s == &format!("${{{}}}", refs[0].raw) {
                return values
                    .get(&refs[0].raw)
                    .cloned()
                    .flatten()
                    .unwrap_or_else(|| v.clone());
            }
            let mut out = s.clone();
            for r in refs {
                if let Some(Some(val)) = values.get(&r.raw) {
                    let text = match val {
                        Value::String(t) => t.clone(),
                        other => other.to_string(),
                    };
                    out = out.replace(&format!("${{{}}}", r.raw), &text);
                }
            }
            Value::String(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| fill(x, values)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| (k.clone(), fill(x, values)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Integers written as strings, as the chain's JSON has them.
fn chain_numbers(v: Value) -> Value {
    match v {
        Value::Number(n) if n.is_u64() || n.is_i64() => Value::String(n.to_string()),
        Value::Array(a) => Value::Array(a.into_iter().map(chain_numbers).collect()),
        Value::Object(o) => {
            Value::Object(o.into_iter().map(|(k, x)| (k, chain_numbers(x))).collect())
        }
        other => other,
    }
}

/// `${result.*}` placeholders replaced by `0`, so the message can be checked before the
/// tool has run (the requirements they feed are ignored).
fn placeholders_zeroed(v: &Value) -> Value {
    match v {
        Value::String(s) if s.starts_with("${result.") => Value::String("0".into()),
        Value::Array(a) => Value::Array(a.iter().map(placeholders_zeroed).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| (k.clone(), placeholders_zeroed(x)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The recommendation of an outcome node: the action with its parameters filled from
/// the state and facts, the reason, the priority and its tier, and the requirements of
/// its chain message as the sim's rules see them now.
pub async fn recommend(
    engine: &mut Engine,
    tree: &Tree,
    node_id: &str,
) -> Result<Value, ToolError> {
    let node = tree
        .nodes
        .get(node_id)
        .ok_or_else(|| bug(&format!("{} has no node {node_id}", tree.id)))?;
    let NodeKind::Outcome {
        title,
        action,
        reason,
        priority,
    } = node.kind().map_err(|e| bug(&e))?
    else {
        return Err(bug(&format!("{node_id} is not an outcome")));
    };
    let mut refs: Vec<TemplateRef> = template_refs(reason);
    if let Some(a) = action {
        for v in [&a.parameters, &a.message].into_iter().flatten() {
            all_refs(v, &mut refs);
        }
    }
    let (values, unfilled) = resolve_all(engine, &refs).await?;
    let reason = match fill(&Value::String(reason.to_string()), &values) {
        Value::String(s) => s,
        other => other.to_string(),
    };
    let mut out = json!({
        "tree": tree.id,
        "node": node_id,
        "title": title,
        "reason": reason,
        "priority": priority,
        "tier": tier(priority),
    });
    let mut notes: Vec<String> = Vec::new();
    match action {
        None => {
            out["kind"] = json!("none");
            out["action"] = Value::Null;
            out["parameters"] = json!({});
            out["requirements_met"] = Value::Null;
            out["missing_requirements"] = json!([]);
        }
        Some(a) => {
            let message = a.message.as_ref().map(|m| chain_numbers(fill(m, &values)));
            let parameters = a.parameters.as_ref().map(|p| fill(p, &values));
            if let Some(tool) = &a.tool {
                out["kind"] = json!("tool");
                out["action"] = json!(tool);
                out["parameters"] = parameters.clone().unwrap_or_else(|| json!({}));
                if let Some(m) = &message {
                    out["message"] = m.clone();
                }
            } else if let Some(m) = &message {
                out["kind"] = json!("message");
                out["action"] = json!(chain::type_name(m, "message").unwrap_or("?"));
                out["parameters"] = m.clone();
            } else {
                out["kind"] = json!("wait");
                out["action"] = json!("wait");
                out["parameters"] = wait(engine, a).await?;
            }
            let (met, missing, all) = match &message {
                Some(m) => check_message(engine, m, a, &unfilled, &mut notes)?,
                None if unfilled.is_empty() => (Some(true), Vec::new(), Vec::new()),
                None => (None, Vec::new(), Vec::new()),
            };
            out["requirements_met"] = json!(met);
            out["missing_requirements"] = json!(missing);
            if !all.is_empty() {
                out["requirements"] = json!(all);
            }
            if a.tool.as_deref() == Some("structs_calculate_proof_of_work")
                && let Some(p) = &parameters
                && let Some(proof) = proof_timing(engine, p).await?
            {
                out["proof"] = proof;
            }
        }
    }
    if !unfilled.is_empty() {
        notes.push(format!(
            "not filled (the state does not give them): {}",
            unfilled.join(", ")
        ));
        out["unfilled"] = json!(unfilled);
    }
    if !notes.is_empty() {
        out["notes"] = json!(notes);
    }
    Ok(out)
}

/// Each reference's value from the state, once, and the references (`${…}`) the
/// state does not fill (a step's own `result` is filled later, not here).
async fn resolve_all(
    engine: &mut Engine,
    refs: &[TemplateRef],
) -> Result<(HashMap<String, Option<Value>>, Vec<String>), ToolError> {
    let mut values: HashMap<String, Option<Value>> = HashMap::new();
    let mut unfilled = Vec::new();
    for r in refs {
        if values.contains_key(&r.raw) {
            continue;
        }
        let v = engine.resolve(r).await?;
        if v.is_none() && r.scope != "result" {
            unfilled.push(format!("${{{}}}", r.raw));
        }
        values.insert(r.raw.clone(), v);
    }
    Ok((values, unfilled))
}

type Checked = (Option<bool>, Vec<Value>, Vec<Value>);

fn check_message(
    engine: &mut Engine,
    message: &Value,
    a: &Action,
    unfilled: &[String],
    notes: &mut Vec<String>,
) -> Result<Checked, ToolError> {
    let ty = chain::type_name(message, "message")
        .unwrap_or("?")
        .to_string();
    if !chain::APPLIED.contains(&ty.as_str()) {
        notes.push(format!(
            "{ty} is a chain message the sim does not apply: its requirements are not checked here"
        ));
        return Ok((None, Vec::new(), Vec::new()));
    }
    if !unfilled.is_empty() {
        notes.push(format!("{ty} cannot be checked until it is filled"));
        return Ok((None, Vec::new(), Vec::new()));
    }
    let reqs = match engine.check(&placeholders_zeroed(message)) {
        Ok(r) => r,
        Err(e) => {
            notes.push(format!("{ty} could not be checked: {}", e.message));
            return Ok((None, Vec::new(), Vec::new()));
        }
    };
    let kept: Vec<_> = reqs
        .into_iter()
        .filter(|r| !a.ignore_requirements.iter().any(|i| i == r.requirement))
        .collect();
    if !a.ignore_requirements.is_empty() {
        notes.push(format!(
            "not checked, the action provides it: {}",
            a.ignore_requirements.join(", ")
        ));
    }
    let missing: Vec<Value> = kept
        .iter()
        .filter(|r| !r.met)
        .map(|r| json!({"requirement": r.requirement, "detail": r.detail}))
        .collect();
    let all: Vec<Value> = kept
        .iter()
        .map(|r| json!({"requirement": r.requirement, "met": r.met, "detail": r.detail}))
        .collect();
    Ok((Some(missing.is_empty()), missing, all))
}

/// A wait for charge: how many blocks until the bar holds what is needed.
async fn wait(engine: &mut Engine, a: &Action) -> Result<Value, ToolError> {
    let need = match &a.wait_for_charge {
        Some(Value::Number(n)) => n.as_u64(),
        Some(Value::String(f)) => match engine.fact(f, None).await? {
            Fact::Known { value, .. } => value.as_u64(),
            Fact::Unknown { .. } => None,
        },
        _ => None,
    };
    let have = match engine.fact("player.charge", None).await? {
        Fact::Known { value, .. } => value.as_u64(),
        Fact::Unknown { .. } => None,
    };
    Ok(match (need, have) {
        (Some(need), Some(have)) => {
            let blocks = need.saturating_sub(have);
            json!({"until": format!("charge >= {need}"), "charge": have, "blocks": blocks,
                   "seconds": blocks as f64 * BLOCK_SECONDS, "ready_at_block": engine.height() + blocks})
        }
        _ => json!({"until": "charge", "blocks": Value::Null}),
    })
}

/// When a proof gets cheap: blocks from `age` until the difficulty of a work of this
/// range falls to `d`.
pub fn blocks_until(d: u32, range: u64, age: u64) -> Option<u64> {
    first_age_at_most(d, range).map(|a| a.saturating_sub(age))
}

/// The difficulty now and the wait for difficulty 3, for a proof-of-work action's
/// parameters (`action_type`, `entity_id`, `planet_id`).
async fn proof_timing(engine: &mut Engine, p: &Value) -> Result<Option<Value>, ToolError> {
    let (Some(action), Some(entity)) = (
        p.get("action_type").and_then(Value::as_str),
        p.get("entity_id").and_then(Value::as_str),
    ) else {
        return Ok(None);
    };
    let Ok(id) = EntityId::parse(entity) else {
        return Ok(None);
    };
    let (start, range) = if action == "planet_raid_complete" {
        let Some(planet) = p
            .get("planet_id")
            .and_then(Value::as_str)
            .and_then(|t| EntityId::parse(t).ok())
        else {
            return Ok(None);
        };
        let v = engine.entity(planet).await?;
        (
            chain_u64(&v, &["planetAttributes", "blockStartRaid"]).unwrap_or(0),
            chain_u64(&v, &["planetAttributes", "planetaryShield"]).unwrap_or(0),
        )
    } else {
        let v = engine.entity(id).await?;
        let t = chain_u64(&v, &["Struct", "type"])
            .and_then(|t| struct_type(t as u8))
            .ok_or_else(|| bug(&format!("{id} has no struct type")))?;
        let (field, range_key) = match action {
            "ore_miner_complete" => ("blockStartOreMine", "oreMiningDifficulty"),
            "ore_refinery_complete" => ("blockStartOreRefine", "oreRefiningDifficulty"),
            _ => ("blockStartBuild", "buildDifficulty"),
        };
        (
            chain_u64(&v, &["structAttributes", field]).unwrap_or(0),
            t.raw.get(range_key).and_then(Value::as_u64).unwrap_or(0),
        )
    };
    if start == 0 {
        return Ok(Some(json!({
            "difficulty_range": range,
            "block_start": 0,
            "started": false,
            "note": "the work has not started: no proof can be found yet",
        })));
    }
    let age = engine.height().saturating_sub(start);
    let now = pow::difficulty(age, range);
    let left = blocks_until(TARGET_DIFFICULTY, range, age);
    Ok(Some(json!({
        "difficulty_range": range,
        "block_start": start,
        "age_blocks": age,
        "difficulty_now": now,
        "target_difficulty": TARGET_DIFFICULTY,
        "blocks_until_target": left,
        "seconds_until_target": left.map(|b| b as f64 * BLOCK_SECONDS),
        "advice": if now <= TARGET_DIFFICULTY {
            "the proof is almost free now: run it".to_string()
        } else {
            format!("difficulty {now} now; at {TARGET_DIFFICULTY} the hash is almost free (a fast machine can start at 8; 9 and above take hours)")
        },
    })))
}

fn bug(what: &str) -> ToolError {
    ToolError::new(
        ErrorCode::ToolExecutionFailed,
        format!("decision tree walk: {what}"),
    )
}
