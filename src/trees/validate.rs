//! Checks of a tree against the catalog: nodes and subtrees exist, all are reachable,
//! no cycles, known facts and operators, requirement names and the inputs they need.

use std::collections::BTreeSet;

use serde_json::Value;

use super::*;

/// The problems of one tree (within the catalog, for subtree links).
pub fn validate_tree(tree: &Tree, catalog: &Catalog) -> Vec<String> {
    let mut problems = Vec::new();
    if tree.title.trim().is_empty() || tree.description.trim().is_empty() {
        problems.push("needs a title and a description".to_string());
    }
    let inputs: BTreeSet<&str> = tree.inputs.iter().map(String::as_str).collect();
    for i in &tree.inputs {
        if !STATE_FIELDS.iter().any(|(f, _)| f == i) {
            problems.push(format!(
                "input {i} is not a state field (known: {})",
                STATE_FIELDS
                    .iter()
                    .map(|(f, _)| *f)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    if !tree.nodes.contains_key(&tree.root) {
        problems.push(format!("root {} is not a node", tree.root));
    }
    for (id, node) in &tree.nodes {
        let at = |p: String| format!("node {id}: {p}");
        match node.kind() {
            Err(e) => problems.push(at(e)),
            Ok(NodeKind::Decision {
                condition,
                text,
                yes,
                no,
            }) => {
                for next in [yes, no] {
                    if !tree.nodes.contains_key(next) {
                        problems.push(at(format!("next node {next} does not exist")));
                    }
                }
                if text.trim().is_empty() {
                    problems.push(at("condition_text is empty".into()));
                }
                problems.extend(validate_condition(condition, &inputs).into_iter().map(at));
            }
            Ok(NodeKind::Subtree(sub)) => match catalog.trees.get(sub) {
                None => problems.push(at(format!("subtree {sub} does not exist"))),
                Some(s) => {
                    for i in &s.inputs {
                        if !inputs.contains(i.as_str()) {
                            problems.push(at(format!(
                                "subtree {sub} reads input {i}, which this tree does not declare"
                            )));
                        }
                    }
                }
            },
            Ok(NodeKind::Outcome {
                title,
                action,
                reason,
                priority,
            }) => {
                if !(1..=5).contains(&priority) {
                    problems.push(at(format!("priority {priority} is not 1-5")));
                }
                if title.trim().is_empty() || reason.trim().is_empty() {
                    problems.push(at("title and reason must not be empty".into()));
                }
                problems.extend(
                    validate_templates(&Value::String(reason.to_string()), &inputs, false)
                        .into_iter()
                        .map(|p| at(format!("reason: {p}"))),
                );
                if let Some(a) = action {
                    problems.extend(validate_action(a, &inputs).into_iter().map(at));
                }
            }
        }
    }
    if tree.nodes.contains_key(&tree.root) {
        problems.extend(reachability(tree));
    }
    problems
}

/// Reachability and cycles over the yes/no edges, from the root (which is a node):
/// a node reached again on its own path, and a node never reached.
fn reachability(tree: &Tree) -> Vec<String> {
    let mut problems = Vec::new();
    let mut state: HashMap<&str, u8> = HashMap::new(); // 1 on the stack, 2 done
    let mut stack: Vec<(&str, usize)> = vec![(tree.root.as_str(), 0)];
    state.insert(tree.root.as_str(), 1);
    while let Some((id, i)) = stack.pop() {
        let nexts: Vec<&str> = tree
            .nodes
            .get(id)
            .map(|n| {
                [n.yes.as_deref(), n.no.as_deref()]
                    .into_iter()
                    .flatten()
                    .collect()
            })
            .unwrap_or_default();
        if i < nexts.len() {
            stack.push((id, i + 1));
            let next = nexts[i];
            if !tree.nodes.contains_key(next) {
                continue;
            }
            match state.get(next) {
                Some(1) => problems.push(format!("cycle: {next} is reached again from {id}")),
                Some(_) => {}
                None => {
                    state.insert(next, 1);
                    stack.push((next, 0));
                }
            }
        } else {
            state.insert(id, 2);
        }
    }
    for id in tree.nodes.keys() {
        if !state.contains_key(id.as_str()) {
            problems.push(format!("node {id} cannot be reached from the root"));
        }
    }
    problems
}

/// Whether some alternative of `needs` is among the inputs (overrides always are).
pub(super) fn satisfiable(needs: &[Vec<&str>], inputs: &BTreeSet<&str>) -> bool {
    needs.is_empty()
        || needs.iter().any(|alt| {
            alt.iter()
                .all(|f| inputs.contains(f) || OVERRIDES.contains(f))
        })
}

pub(super) fn needs_text(needs: &[Vec<&str>]) -> String {
    needs
        .iter()
        .map(|alt| alt.join(" and "))
        .collect::<Vec<_>>()
        .join(" or ")
}

/// The problems of one condition: its op, its fact (or requirement), what it is
/// compared with, and whether the two compare.
pub fn validate_condition(c: &Condition, inputs: &BTreeSet<&str>) -> Vec<String> {
    let mut problems = Vec::new();
    let Some(op) = c.op() else {
        return vec![format!("fact {} needs an op", c.fact)];
    };
    if c.value.is_some() && c.value_from.is_some() {
        problems.push("give value or value_from, not both".into());
    }
    let fact_type = if c.fact == "requirement" {
        check_requirement(c, inputs, &mut problems);
        Some(FactType::Bool)
    } else {
        known_fact_type(c, inputs, &mut problems)
    };
    if op == Op::Exists {
        check_exists(c, fact_type, &mut problems);
        return problems;
    }
    let right_type = match (&c.value, &c.value_from) {
        (Some(v), None) => Some(match v {
            Value::Bool(_) => FactType::Bool,
            Value::Number(n) if n.is_f64() => FactType::Num,
            Value::Number(_) => FactType::Int,
            Value::String(_) => FactType::Str,
            _ => {
                problems.push(format!("value {v} is not a boolean, number or string"));
                return problems;
            }
        }),
        (None, Some(f)) => value_from_type(f, inputs, &mut problems),
        (None, None) if c.fact == "requirement" => Some(FactType::Bool),
        (None, None) => {
            problems.push(format!("{} needs a value or value_from", op.symbol()));
            None
        }
        _ => None,
    };
    if let (Some(l), Some(r)) = (fact_type, right_type) {
        check_comparable(c, op, l, r, &mut problems);
    }
    problems
}

/// A requirement fact: a name the rules report, a candidate action whose inputs are
/// there, and a struct type for a build only.
fn check_requirement(c: &Condition, inputs: &BTreeSet<&str>, problems: &mut Vec<String>) {
    match (&c.name, &c.action) {
        (Some(name), Some(action)) => {
            if !REQUIREMENT_NAMES.contains(&name.as_str()) {
                problems.push(format!("requirement {name} is not one the rules report"));
            }
            if !REQUIREMENT_ACTIONS.contains(&action.as_str()) {
                problems.push(format!(
                    "action {action} is not a candidate message ({})",
                    REQUIREMENT_ACTIONS.join(", ")
                ));
            } else {
                let needs = requirement_needs(action, !c.struct_types().is_empty());
                if !satisfiable(&needs, inputs) {
                    problems.push(format!(
                        "requirement {name} of {action} needs {}, not among the inputs",
                        needs_text(&needs)
                    ));
                }
            }
            if c.struct_type.is_some() && action != "build" {
                problems.push("struct_type applies to the build action only".into());
            }
        }
        _ => problems.push("a requirement fact needs name and action".into()),
    }
    if let Some(t) = c.struct_type.as_ref()
        && !t.as_u64().is_some_and(|n| (1..=22).contains(&n))
    {
        problems.push(format!("struct_type {t} is not a struct type id"));
    }
}

/// A named fact's type, when the fact is known, its inputs are there and it takes
/// only the fields it uses.
fn known_fact_type(
    c: &Condition,
    inputs: &BTreeSet<&str>,
    problems: &mut Vec<String>,
) -> Option<FactType> {
    if c.name.is_some() || c.action.is_some() || c.if_absent.is_some() {
        problems.push("name, action and if_absent belong to requirement facts".into());
    }
    let Some((t, needs)) = describe(&c.fact) else {
        problems.push(format!("fact {} is not known", c.fact));
        return None;
    };
    if !satisfiable(&needs, inputs) {
        problems.push(format!(
            "fact {} needs {}, not among the inputs",
            c.fact,
            needs_text(&needs)
        ));
    }
    if c.fact == "planet.struct_count" {
        let types = c.struct_types();
        if types.is_empty() || types.iter().any(|t| !(1..=22).contains(t)) {
            problems.push("planet.struct_count needs struct_type: an id or a list of ids".into());
        }
    } else if c.struct_type.is_some() || c.online.is_some() {
        problems.push(format!("{} takes no struct_type or online", c.fact));
    }
    Some(t)
}

/// An `exists` condition compares with nothing, on a fact that may be absent.
fn check_exists(c: &Condition, fact_type: Option<FactType>, problems: &mut Vec<String>) {
    if c.value.is_some() || c.value_from.is_some() {
        problems.push("exists compares with nothing".into());
    }
    if fact_type.is_some_and(|t| t != FactType::Nullable && t != FactType::Str) {
        problems.push(format!(
            "exists applies to facts that may be absent, not {}",
            c.fact
        ));
    }
}

/// The type of the fact a condition compares with, when it is known and its inputs
/// are there.
fn value_from_type(
    f: &str,
    inputs: &BTreeSet<&str>,
    problems: &mut Vec<String>,
) -> Option<FactType> {
    match describe(f) {
        Some((t, needs)) => {
            if !satisfiable(&needs, inputs) {
                problems.push(format!(
                    "value_from {f} needs {}, not among the inputs",
                    needs_text(&needs)
                ));
            }
            Some(t)
        }
        None => {
            problems.push(format!("value_from {f} is not a known fact"));
            None
        }
    }
}

/// Whether a fact of type `l` compares with a value of type `r` under `op`: ordering
/// takes numbers, equality the same kind (or a string for a fact that may be absent).
fn check_comparable(c: &Condition, op: Op, l: FactType, r: FactType, problems: &mut Vec<String>) {
    let numeric = |t: FactType| matches!(t, FactType::Int | FactType::Num);
    let both_numbers = numeric(l) && numeric(r);
    let comparable = if op.ordering() {
        both_numbers
    } else {
        both_numbers || l == r || (l == FactType::Nullable && r == FactType::Str)
    };
    if !comparable && op.ordering() {
        problems.push(format!("{} compares numbers only", op.symbol()));
    } else if !comparable {
        problems.push(format!(
            "{} is a {:?} fact compared with a {:?}",
            c.fact, l, r
        ));
    }
}

pub(super) fn validate_action(a: &Action, inputs: &BTreeSet<&str>) -> Vec<String> {
    let mut problems = Vec::new();
    if a.tool.is_none() && a.message.is_none() && a.wait_for_charge.is_none() {
        problems.push("an action needs a tool, a message or wait_for_charge".into());
    }
    if let Some(tool) = &a.tool {
        let ok = tool.starts_with("structs_")
            && tool.bytes().all(|b| b.is_ascii_lowercase() || b == b'_');
        if !ok {
            problems.push(format!("tool {tool} is not a structs_ tool name"));
        }
        if a.wait_for_charge.is_some() {
            problems.push("wait_for_charge stands alone".into());
        }
    }
    match &a.parameters {
        Some(p) if !p.is_object() => problems.push("parameters must be an object".into()),
        Some(_) if a.tool.is_none() => problems.push("parameters belong to a tool".into()),
        Some(p) => problems.extend(
            validate_templates(p, inputs, false)
                .into_iter()
                .map(|e| format!("parameters: {e}")),
        ),
        None => {}
    }
    if let Some(m) = &a.message {
        match m.get("@type").and_then(Value::as_str) {
            None => problems.push("a message needs its @type".into()),
            Some(t) => {
                let name = t.strip_prefix(crate::chain::TYPE_PREFIX).unwrap_or(t);
                if !crate::chain::tx::CHAIN_MESSAGES.contains(&name) {
                    problems.push(format!("message type {t} is not a Structs message"));
                }
                // A message a tree recommends is written as the chain reads it: its
                // fields are tx.proto's, a uint64 a string (templates fill the rest).
                match crate::chain::tx::definition(name) {
                    None => problems.push(format!(
                        "message type {t} has no field list here (chain::tx): a tree cannot recommend it"
                    )),
                    Some(def) => problems.extend(message_field_problems(name, def, m)),
                }
                if !t.starts_with(crate::chain::TYPE_PREFIX) {
                    problems.push(format!(
                        "message type {t} should be written in full ({}...)",
                        crate::chain::TYPE_PREFIX
                    ));
                }
            }
        }
        problems.extend(
            validate_templates(m, inputs, true)
                .into_iter()
                .map(|e| format!("message: {e}")),
        );
    }
    if let Some(w) = &a.wait_for_charge {
        match w {
            Value::Number(n) if n.as_u64().is_some() => {}
            Value::String(f) => match describe(f) {
                Some((FactType::Int, needs)) if satisfiable(&needs, inputs) => {}
                Some((FactType::Int, needs)) => problems.push(format!(
                    "wait_for_charge {f} needs {}, not among the inputs",
                    needs_text(&needs)
                )),
                _ => problems.push(format!("wait_for_charge {f} is not a known integer fact")),
            },
            _ => problems.push("wait_for_charge is a charge or an integer fact".into()),
        }
    }
    for r in &a.ignore_requirements {
        if !REQUIREMENT_NAMES.contains(&r.as_str()) {
            problems.push(format!(
                "ignore_requirements: {r} is not a requirement the rules report"
            ));
        }
    }
    problems
}

/// What is wrong with a tree's message `m` of type `name` against its tx.proto
/// definition: a field it lacks, a uint64 not a string, a list not an array, a weapon
/// system the chain does not name.
fn message_field_problems(
    name: &str,
    def: &crate::entity::records::Message,
    m: &Value,
) -> Vec<String> {
    let mut problems = Vec::new();
    for (key, value) in m.as_object().into_iter().flatten() {
        match def.field(key) {
            None if key != "@type" => {
                problems.push(format!("{key} is not a field of {name} in tx.proto"))
            }
            Some(f) if matches!(f.ty, crate::entity::records::Ty::U64) && !value.is_string() => {
                problems.push(format!("{name}.{key} is a uint64, written as a string"));
            }
            Some(f) if matches!(f.ty, crate::entity::records::Ty::List(_)) && !value.is_array() => {
                problems.push(format!("{name}.{key} is repeated, written as an array"));
            }
            _ if key == "weaponSystem"
                && !value
                    .as_str()
                    .is_some_and(|w| crate::chain::tx::WEAPON_SYSTEM.contains(&w)) =>
            {
                problems.push(format!(
                    "{name}.weaponSystem is one of {}",
                    crate::chain::tx::WEAPON_SYSTEM.join(", ")
                ));
            }
            _ => {}
        }
    }
    problems
}

pub(super) fn validate_templates(v: &Value, inputs: &BTreeSet<&str>, message: bool) -> Vec<String> {
    let mut refs = Vec::new();
    all_refs(v, &mut refs);
    let mut problems = Vec::new();
    for r in refs {
        match r.scope.as_str() {
            "state" => {
                if !STATE_FIELDS.iter().any(|(f, _)| *f == r.path) {
                    problems.push(format!("${{{}}}: {} is not a state field", r.raw, r.path));
                } else if !inputs.contains(r.path.as_str()) && r.default.is_none() {
                    problems.push(format!(
                        "${{{}}}: {} is not among the tree's inputs",
                        r.raw, r.path
                    ));
                }
            }
            "fact" => match describe(&r.path) {
                None => problems.push(format!("${{{}}}: {} is not a known fact", r.raw, r.path)),
                Some((_, needs)) => {
                    if !satisfiable(&needs, inputs) {
                        problems.push(format!(
                            "${{{}}}: {} needs {}, not among the inputs",
                            r.raw,
                            r.path,
                            needs_text(&needs)
                        ));
                    }
                    if r.path == "planet.struct_count" {
                        problems.push(format!(
                            "${{{}}}: a count needs a condition's struct_type",
                            r.raw
                        ));
                    }
                }
            },
            "result" if message => {}
            "result" => problems.push(format!(
                "${{{}}}: result references belong in messages (filled after the tool runs)",
                r.raw
            )),
            other => problems.push(format!(
                "${{{}}}: scope {other} is not state, fact or result",
                r.raw
            )),
        }
    }
    problems
}
