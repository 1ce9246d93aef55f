//! Decision trees as data: the JSON files in `data/trees/` (embedded), the goals and
//! strategies in `data/decision-goals.json`, and what reads them: [`facts`] (the fact
//! engine: entity reads and the sim's own requirement checks), [`walk`] (a walk from a
//! tree's root against a state, and an outcome turned into a ready recommendation) and
//! [`strategy`] (a named strategy evaluated: requirements, time and cost).
//!
//! # Tree format
//!
//! ```json
//! {"id": "mining-operation", "title": "...", "description": "...",
//!  "inputs": ["player_id", "planet_id"],
//!  "root": "online",
//!  "nodes": {
//!    "online": {"condition": {"fact": "player.online", "op": "==", "value": true},
//!               "condition_text": "The player is online", "yes": "has_ore", "no": "fix_power"},
//!    "fix_power": {"subtree": "power-management"},
//!    "build": {"title": "Build an Ore Extractor", "priority": 3, "reason": "...",
//!              "action": {"tool": "structs_action_build_struct",
//!                         "parameters": {"struct_type": 14, "player_id": "${state.player_id}"},
//!                         "message": {"@type": "/structs.structs.MsgStructBuildInitiate", ...}}}
//!  }}
//! ```
//!
//! A node is one of three kinds:
//! - a **decision**: `condition`, `condition_text`, `yes`, `no`. A condition names a
//!   `fact` (see [`catalog::FACTS`], `state.<field>` or `requirement`) and compares it with
//!   `op` (`==`, `!=`, `>`, `>=`, `<`, `<=`, `exists`) to a `value` or to another fact
//!   (`value_from`). A `requirement` fact is the sim rules' verdict on one requirement
//!   (`name`) of a candidate message (`action`: `build` with the state's or the
//!   condition's `struct_type`, `explore`, `activate_command_ship`, `mine`, `refine`,
//!   `move_home`, `move_to_target`); `if_absent` is its value when the rules do not
//!   impose that requirement on this message (a type without build limit).
//! - a **subtree** link: `subtree` names another tree; the walk continues at its root.
//! - an **outcome**: `title`, `reason`, `priority` (1-5, the priority framework's tiers:
//!   survival, security, economy, expansion, dominance) and an optional `action`: a
//!   `tool` with `parameters`, and/or a chain `message` (checked against the sim's rules
//!   unless it is a message the sim does not apply; `ignore_requirements` leaves out
//!   what the action itself provides, such as `proofOfWork`), or `wait_for_charge` (a
//!   number or a fact). An outcome without action is informational.
//!
//! Strings anywhere in an action or a reason may hold templates: `${state.player_id}`,
//! `${fact.planet.extractor_id}`, `${state.struct_type|3}` (a default), and in messages
//! `${result.nonce}` (filled from the tool's result by the caller). A string that is one
//! whole template takes the value's JSON type; integers in messages are written as
//! strings, as the chain's JSON has them.
//!
//! Every shipped file is validated when the tool registry is built (see [`catalog`]):
//! referenced nodes and trees exist, every node is reachable, there are no cycles
//! (within a tree or through subtree links), facts, operators, requirement names and
//! template references are known, and each tree's facts can be computed from its
//! declared `inputs`.

pub mod catalog;
pub mod facts;
pub mod strategy;
mod validate;
pub mod walk;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::OnceLock;
pub use validate::{validate_condition, validate_tree};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use catalog::{FactType, describe, requirement_needs};

/// The shipped trees, by id, embedded from `data/trees/`.
pub const TREE_FILES: &[(&str, &str)] = &[
    (
        "build-requirements",
        include_str!("../../data/trees/build-requirements.json"),
    ),
    (
        "combat-readiness",
        include_str!("../../data/trees/combat-readiness.json"),
    ),
    (
        "command-ship",
        include_str!("../../data/trees/command-ship.json"),
    ),
    (
        "mining-operation",
        include_str!("../../data/trees/mining-operation.json"),
    ),
    (
        "ore-security",
        include_str!("../../data/trees/ore-security.json"),
    ),
    (
        "power-management",
        include_str!("../../data/trees/power-management.json"),
    ),
    (
        "raid-defense",
        include_str!("../../data/trees/raid-defense.json"),
    ),
];

/// The goals (each a list of trees) and strategies, embedded.
pub const GOALS_FILE: &str = include_str!("../../data/decision-goals.json");

/// The state fields a caller may give, with their types. The last seven override what
/// the world says (as `structs_validate_action`'s `game_state` does), for "what if".
pub const STATE_FIELDS: &[(&str, FactType)] = &[
    ("player_id", FactType::Str),
    ("planet_id", FactType::Str),
    ("struct_type", FactType::Int),
    ("target_planet_id", FactType::Str),
    ("risk_tolerance", FactType::Str),
    ("charge", FactType::Int),
    ("available_capacity_mw", FactType::Int),
    ("player_online", FactType::Bool),
    ("fleet_on_station", FactType::Bool),
    ("command_ship_online", FactType::Bool),
    ("block_height", FactType::Int),
    ("alpha_ualpha", FactType::Int),
];

/// State fields that only override facts; any tree may be given them.
pub const OVERRIDES: &[&str] = &[
    "charge",
    "available_capacity_mw",
    "player_online",
    "fleet_on_station",
    "command_ship_online",
    "block_height",
    "alpha_ualpha",
];

/// The requirement names the sim's rules report (`source::sim::rules`).
pub const REQUIREMENT_NAMES: &[&str] = &[
    "playerOnline",
    "playerExists",
    "validSigner",
    "ownership",
    "sufficientCharge",
    "sufficientPower",
    "fleetOnStation",
    "commandShipOnline",
    "fleetHasCommandShip",
    "buildLimit",
    "validAmbit",
    "validLocation",
    "slotAvailable",
    "structExists",
    "structNotDestroyed",
    "structInBuildingState",
    "structBuilt",
    "structOffline",
    "structOnline",
    "structIsExtractor",
    "structIsRefinery",
    "cycleStarted",
    "planetHasOre",
    "hasStoredOre",
    "proofOfWork",
    "currentPlanetEmpty",
    "fleetExists",
    "notAlreadyThere",
    "fleetAway",
    "fleetFirstInLine",
    "defenderShieldsVulnerable",
    "raidClockStarted",
    "hasWeapon",
    "validTarget",
    "targetInRange",
    "weaponReachesTarget",
    "targetCount",
    "protectedAlive",
    "notSelf",
    "coLocated",
    "defenderOnline",
    "isDefending",
];

/// The candidate messages a `requirement` fact may name.
pub const REQUIREMENT_ACTIONS: &[&str] = &[
    "build",
    "explore",
    "activate_command_ship",
    "mine",
    "refine",
    "move_home",
    "move_to_target",
];

/// The five tiers of the priority framework, by priority 1-5.
pub const TIERS: [&str; 5] = ["survival", "security", "economy", "expansion", "dominance"];

pub fn tier(priority: u8) -> &'static str {
    TIERS
        .get(usize::from(priority).saturating_sub(1))
        .copied()
        .unwrap_or("unknown")
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tree {
    pub id: String,
    pub title: String,
    pub description: String,
    pub inputs: Vec<String>,
    pub root: String,
    pub nodes: BTreeMap<String, Node>,
}

/// One node, as written; [`Node::kind`] tells which of the three it is.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Node {
    pub condition: Option<Condition>,
    pub condition_text: Option<String>,
    pub yes: Option<String>,
    pub no: Option<String>,
    pub subtree: Option<String>,
    pub title: Option<String>,
    pub action: Option<Action>,
    pub reason: Option<String>,
    pub priority: Option<u8>,
}

/// A node by kind.
#[derive(Debug, Clone, Copy)]
pub enum NodeKind<'a> {
    Decision {
        condition: &'a Condition,
        text: &'a str,
        yes: &'a str,
        no: &'a str,
    },
    Subtree(&'a str),
    Outcome {
        title: &'a str,
        action: Option<&'a Action>,
        reason: &'a str,
        priority: u8,
    },
}

impl Node {
    /// The node's kind, or what makes it none (or more than one).
    pub fn kind(&self) -> Result<NodeKind<'_>, String> {
        let decision = self.condition.is_some()
            || self.condition_text.is_some()
            || self.yes.is_some()
            || self.no.is_some();
        let subtree = self.subtree.is_some();
        let outcome = self.title.is_some()
            || self.action.is_some()
            || self.reason.is_some()
            || self.priority.is_some();
        match (decision, subtree, outcome) {
            (true, false, false) => {
                match (&self.condition, &self.condition_text, &self.yes, &self.no) {
                    (Some(c), Some(t), Some(y), Some(n)) => Ok(NodeKind::Decision {
                        condition: c,
                        text: t,
                        yes: y,
                        no: n,
                    }),
                    _ => Err("a decision needs condition, condition_text, yes and no".into()),
                }
            }
            (false, true, false) => Ok(NodeKind::Subtree(self.subtree.as_deref().unwrap_or(""))),
            (false, false, true) => match (&self.title, &self.reason, self.priority) {
                (Some(t), Some(r), Some(p)) => Ok(NodeKind::Outcome {
                    title: t,
                    action: self.action.as_ref(),
                    reason: r,
                    priority: p,
                }),
                _ => Err("an outcome needs title, reason and priority".into()),
            },
            (false, false, false) => Err("the node is empty".into()),
            _ => Err("a node is a decision, a subtree link or an outcome, not several".into()),
        }
    }
}

/// A comparison of a fact.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Condition {
    pub fact: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<Op>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_from: Option<String>,
    /// `requirement`: the requirement's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `requirement`: the candidate message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// `requirement` with `build`, and `planet.struct_count`: a struct type id (or a
    /// list of them for the count).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub struct_type: Option<Value>,
    /// `planet.struct_count`: count only online structs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub online: Option<bool>,
    /// `requirement`: its value when the rules do not impose it on this message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub if_absent: Option<bool>,
}

impl Condition {
    /// The operator: `==` for a requirement when not written.
    pub fn op(&self) -> Option<Op> {
        self.op
            .or_else(|| (self.fact == "requirement").then_some(Op::Eq))
    }

    /// The value compared with: `true` for a requirement when not written.
    pub fn value(&self) -> Option<Value> {
        self.value.clone().or_else(|| {
            (self.fact == "requirement" && self.value_from.is_none()).then_some(Value::Bool(true))
        })
    }

    /// The struct types the condition names (one, or a list).
    pub fn struct_types(&self) -> Vec<u8> {
        match &self.struct_type {
            Some(Value::Number(n)) => n.as_u64().map(|n| vec![n as u8]).unwrap_or_default(),
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(Value::as_u64)
                .map(|n| n as u8)
                .collect(),
            _ => Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
pub enum Op {
    #[serde(rename = "==")]
    Eq,
    #[serde(rename = "!=")]
    Ne,
    #[serde(rename = ">")]
    Gt,
    #[serde(rename = ">=")]
    Ge,
    #[serde(rename = "<")]
    Lt,
    #[serde(rename = "<=")]
    Le,
    #[serde(rename = "exists")]
    Exists,
}

impl Op {
    pub fn symbol(self) -> &'static str {
        match self {
            Op::Eq => "==",
            Op::Ne => "!=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Exists => "exists",
        }
    }

    fn ordering(self) -> bool {
        matches!(self, Op::Gt | Op::Ge | Op::Lt | Op::Le)
    }

    /// `left op right`; `None` when the values cannot be compared that way.
    pub fn apply(self, left: &Value, right: Option<&Value>) -> Option<bool> {
        if self == Op::Exists {
            return Some(!left.is_null());
        }
        let right = right?;
        if let (Some(a), Some(b)) = (left.as_f64(), right.as_f64()) {
            return Some(match self {
                Op::Eq => a == b,
                Op::Ne => a != b,
                Op::Gt => a > b,
                Op::Ge => a >= b,
                Op::Lt => a < b,
                Op::Le => a <= b,
                Op::Exists => unreachable!(),
            });
        }
        match self {
            Op::Eq => Some(left == right),
            Op::Ne => Some(left != right),
            _ => None,
        }
    }
}

/// What an outcome recommends.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Action {
    pub tool: Option<String>,
    pub parameters: Option<Value>,
    pub message: Option<Value>,
    pub wait_for_charge: Option<Value>,
    #[serde(default)]
    pub ignore_requirements: Vec<String>,
}

/// A goal: the trees whose outcomes make its ranked actions, in order.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Goal {
    pub description: String,
    pub trees: Vec<String>,
}

/// A condition of a strategy, with whether it blocks it (an unmet non-blocking one
/// lowers the score but leaves the strategy feasible).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StrategyCondition {
    pub condition: Condition,
    pub text: String,
    pub blocking: bool,
}

/// A struct a strategy needs at least `count` of at its location.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StrategyBuild {
    pub struct_type: u8,
    #[serde(default = "one")]
    pub count: u32,
}

fn one() -> u32 {
    1
}

/// Work a strategy ends with, each timed by its proof-of-work schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Work {
    OreMine,
    OreRefine,
    FleetMove,
    PlanetRaid,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Strategy {
    pub title: String,
    pub description: String,
    pub inputs: Vec<String>,
    #[serde(default)]
    pub conditions: Vec<StrategyCondition>,
    #[serde(default)]
    pub builds: Vec<StrategyBuild>,
    #[serde(default)]
    pub work: Vec<Work>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct GoalsFile {
    goals: BTreeMap<String, Goal>,
    strategies: BTreeMap<String, Strategy>,
}

/// Every tree, goal and strategy.
#[derive(Debug, Clone)]
pub struct Catalog {
    pub trees: BTreeMap<String, Tree>,
    pub goals: BTreeMap<String, Goal>,
    pub strategies: BTreeMap<String, Strategy>,
}

impl Catalog {
    /// Parses the given files (id, text) and goals; errors are parse errors only.
    pub fn parse(files: &[(&str, &str)], goals: &str) -> Result<Catalog, Vec<String>> {
        let mut problems = Vec::new();
        let mut trees = BTreeMap::new();
        for (id, text) in files {
            match serde_json::from_str::<Tree>(text) {
                Ok(t) => {
                    if t.id != *id {
                        problems.push(format!("tree file {id}: its id is {:?}", t.id));
                    }
                    trees.insert(id.to_string(), t);
                }
                Err(e) => problems.push(format!("tree file {id}: {e}")),
            }
        }
        let goals = match serde_json::from_str::<GoalsFile>(goals) {
            Ok(g) => g,
            Err(e) => {
                problems.push(format!("goals file: {e}"));
                GoalsFile {
                    goals: BTreeMap::new(),
                    strategies: BTreeMap::new(),
                }
            }
        };
        if problems.is_empty() {
            Ok(Catalog {
                trees,
                goals: goals.goals,
                strategies: goals.strategies,
            })
        } else {
            Err(problems)
        }
    }

    /// Every problem of every tree, goal and strategy (empty when all is well).
    pub fn validate(&self) -> Vec<String> {
        let mut problems = Vec::new();
        for tree in self.trees.values() {
            problems.extend(
                validate_tree(tree, self)
                    .into_iter()
                    .map(|p| format!("tree {}: {p}", tree.id)),
            );
        }
        problems.extend(self.subtree_cycles());
        for (name, goal) in &self.goals {
            if goal.trees.is_empty() {
                problems.push(format!("goal {name}: names no tree"));
            }
            for t in &goal.trees {
                if !self.trees.contains_key(t) {
                    problems.push(format!("goal {name}: tree {t} does not exist"));
                }
            }
        }
        for (name, s) in &self.strategies {
            let inputs: BTreeSet<&str> = s.inputs.iter().map(String::as_str).collect();
            for i in &s.inputs {
                if !STATE_FIELDS.iter().any(|(f, _)| f == i) {
                    problems.push(format!("strategy {name}: input {i} is not a state field"));
                }
            }
            for (i, c) in s.conditions.iter().enumerate() {
                for p in validate_condition(&c.condition, &inputs) {
                    problems.push(format!("strategy {name}: conditions[{i}]: {p}"));
                }
            }
            for b in &s.builds {
                if crate::entity::struct_types::struct_type(b.struct_type).is_none() {
                    problems.push(format!(
                        "strategy {name}: struct type {} does not exist",
                        b.struct_type
                    ));
                }
            }
            if (s.work.contains(&Work::PlanetRaid) || s.work.contains(&Work::FleetMove))
                && !inputs.contains("target_planet_id")
            {
                problems.push(format!(
                    "strategy {name}: fleet work needs target_planet_id among its inputs"
                ));
            }
            if !inputs.contains("player_id") {
                problems.push(format!("strategy {name}: needs player_id among its inputs"));
            }
        }
        problems
    }

    /// Subtree links that loop back (a tree reached again through links).
    fn subtree_cycles(&self) -> Vec<String> {
        let links: HashMap<&str, Vec<&str>> = self
            .trees
            .values()
            .map(|t| {
                (
                    t.id.as_str(),
                    t.nodes
                        .values()
                        .filter_map(|n| n.subtree.as_deref())
                        .collect(),
                )
            })
            .collect();
        let mut problems = Vec::new();
        for start in links.keys() {
            let mut stack = vec![(*start, vec![*start])];
            while let Some((at, path)) = stack.pop() {
                for next in links.get(at).into_iter().flatten() {
                    if next == start {
                        problems.push(format!(
                            "subtree links loop: {} -> {next}",
                            path.join(" -> ")
                        ));
                    } else if !path.contains(next) {
                        let mut p = path.clone();
                        p.push(next);
                        stack.push((next, p));
                    }
                }
            }
        }
        problems.sort();
        problems.dedup();
        problems
    }

    pub fn tree(&self, id: &str) -> Option<&Tree> {
        self.trees.get(id)
    }

    pub fn tree_ids(&self) -> Vec<&str> {
        self.trees.keys().map(String::as_str).collect()
    }
}

/// The shipped catalog, parsed and validated once. A shipped file that does not parse
/// or validate is a programming error: it stops the program when the tool registry is
/// built (and fails the tests), with every problem listed.
pub fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| {
        let catalog = Catalog::parse(TREE_FILES, GOALS_FILE)
            .unwrap_or_else(|p| panic!("shipped decision trees do not parse:\n{}", p.join("\n")));
        let problems = catalog.validate();
        assert!(
            problems.is_empty(),
            "shipped decision trees do not validate:\n{}",
            problems.join("\n")
        );
        catalog
    })
}

/// One `${scope.path|default}` reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateRef {
    /// The text between `${` and `}`.
    pub raw: String,
    pub scope: String,
    pub path: String,
    pub default: Option<String>,
}

/// The references in one string.
pub fn template_refs(s: &str) -> Vec<TemplateRef> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else { break };
        let raw = &after[..end];
        let (body, default) = match raw.split_once('|') {
            Some((b, d)) => (b, Some(d.to_string())),
            None => (raw, None),
        };
        let (scope, path) = body.split_once('.').unwrap_or((body, ""));
        out.push(TemplateRef {
            raw: raw.to_string(),
            scope: scope.to_string(),
            path: path.to_string(),
            default,
        });
        rest = &after[end + 1..];
    }
    out
}

/// Every template reference in a JSON value's strings (and object keys' values).
pub fn all_refs(v: &Value, out: &mut Vec<TemplateRef>) {
    match v {
        Value::String(s) => out.extend(template_refs(s)),
        Value::Array(a) => a.iter().for_each(|x| all_refs(x, out)),
        Value::Object(o) => o.values().for_each(|x| all_refs(x, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(text: &str) -> Tree {
        serde_json::from_str(text).unwrap()
    }

    fn problems_of(t: Tree) -> Vec<String> {
        let mut catalog = catalog().clone();
        let id = t.id.clone();
        catalog.trees.insert(id.clone(), t);
        validate_tree(&catalog.trees[&id], &catalog)
    }

    #[test]
    fn the_shipped_catalog_validates() {
        let c = Catalog::parse(TREE_FILES, GOALS_FILE).unwrap();
        assert_eq!(c.validate(), Vec::<String>::new());
        for want in [
            "build-requirements",
            "mining-operation",
            "combat-readiness",
            "power-management",
            "raid-defense",
        ] {
            assert!(c.trees.contains_key(want), "{want} is shipped");
        }
    }

    #[test]
    fn requirement_names_are_the_rules_own() {
        // The rules live in one file per family of messages; a name may be in any.
        let rules = [
            include_str!("../source/sim/rules/mod.rs"),
            include_str!("../source/sim/rules/checks.rs"),
            include_str!("../source/sim/rules/build.rs"),
            include_str!("../source/sim/rules/mining.rs"),
            include_str!("../source/sim/rules/combat.rs"),
            include_str!("../source/sim/rules/fleet.rs"),
        ]
        .concat();
        for name in REQUIREMENT_NAMES {
            assert!(
                rules.contains(&format!("\"{name}\"")),
                "{name} is not in the sim's rules"
            );
        }
    }

    #[test]
    fn broken_trees_are_refused_with_the_reason() {
        let p = problems_of(tree(
            r#"{"id": "t", "title": "T", "description": "D", "inputs": ["player_id"], "root": "a",
                "nodes": {
                  "a": {"condition": {"fact": "player.online", "op": "==", "value": true},
                        "condition_text": "x", "yes": "b", "no": "missing"},
                  "b": {"condition": {"fact": "player.charge", "op": ">=", "value": 8},
                        "condition_text": "x", "yes": "a", "no": "c"},
                  "c": {"title": "C", "reason": "r", "priority": 3},
                  "d": {"title": "D", "reason": "r ${fact.nope}", "priority": 9}
                }}"#,
        ));
        let all = p.join("\n");
        assert!(all.contains("next node missing does not exist"), "{all}");
        assert!(all.contains("cycle"), "{all}");
        assert!(all.contains("node d cannot be reached"), "{all}");
        assert!(all.contains("priority 9"), "{all}");
        assert!(all.contains("nope is not a known fact"), "{all}");

        let p = problems_of(tree(
            r#"{"id": "t", "title": "T", "description": "D", "inputs": ["player_id"], "root": "a",
                "nodes": {
                  "a": {"condition": {"fact": "planet.unicorns", "op": ">", "value": 1},
                        "condition_text": "x", "yes": "b", "no": "b"},
                  "b": {"condition": {"fact": "struct_type.buildCharge", "op": ">", "value": "x"},
                        "condition_text": "x", "yes": "c", "no": "c"},
                  "c": {"condition": {"fact": "requirement", "name": "enoughVibes", "action": "build"},
                        "condition_text": "x", "yes": "d", "no": "d"},
                  "d": {"title": "D", "reason": "r", "priority": 1,
                        "action": {"tool": "structs_x", "parameters": {"a": "${state.target_planet_id}"}}}
                }}"#,
        ));
        let all = p.join("\n");
        assert!(all.contains("planet.unicorns is not known"), "{all}");
        assert!(
            all.contains("struct_type.buildCharge needs struct_type"),
            "{all}"
        );
        assert!(all.contains("compares numbers only"), "{all}");
        assert!(all.contains("enoughVibes"), "{all}");
        assert!(
            all.contains("requirement enoughVibes of build needs player_id and struct_type"),
            "{all}"
        );
        assert!(
            all.contains("target_planet_id is not among the tree's inputs"),
            "{all}"
        );
    }

    #[test]
    fn subtree_loops_are_found() {
        let mut c = catalog().clone();
        let mut a = c.trees["command-ship"].clone();
        a.nodes.insert(
            "command_ship_ready".into(),
            Node {
                subtree: Some("build-requirements".into()),
                ..Node::default()
            },
        );
        a.inputs = c.trees["build-requirements"].inputs.clone();
        c.trees.insert("command-ship".into(), a);
        let p = c.validate().join("\n");
        assert!(p.contains("subtree links loop"), "{p}");
    }

    #[test]
    fn templates_are_parsed_with_defaults() {
        let r = template_refs("a ${state.struct_type|3} b ${fact.planet.id}");
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].scope, "state");
        assert_eq!(r[0].path, "struct_type");
        assert_eq!(r[0].default.as_deref(), Some("3"));
        assert_eq!(r[1].path, "planet.id");
    }

    #[test]
    fn operators_compare_numbers_strings_and_presence() {
        use serde_json::json;
        assert_eq!(Op::Ge.apply(&json!(8), Some(&json!(8))), Some(true));
        assert_eq!(Op::Gt.apply(&json!(0.1), Some(&json!(0.2))), Some(false));
        assert_eq!(
            Op::Eq.apply(&json!("high"), Some(&json!("high"))),
            Some(true)
        );
        assert_eq!(Op::Exists.apply(&Value::Null, None), Some(false));
        assert_eq!(Op::Gt.apply(&json!("a"), Some(&json!("b"))), None);
        assert_eq!(tier(1), "survival");
        assert_eq!(tier(5), "dominance");
    }
}
