//! Plans: several tool calls at once, where later calls use earlier results through
//! step references (`${step[0].data.players[0].Player.id}`).
//!
//! - [`template`]: the reference syntax, parsed once per string, and path walking;
//! - this module: the plan's shape ([`Plan`], [`Step`]), parsed from JSON with every
//!   problem collected ([`Problem`]), and checked against the core's tools
//!   ([`validate`]): unknown tools, references to steps that do not exist or come later,
//!   dependency cycles, paths that cannot exist, arguments the tool would refuse;
//! - [`shapes`]: the top-level fields of the results of the tools whose shape is fixed,
//!   so that a path into them can be checked before anything runs;
//! - [`exec`]: the run of a plan, a step at a time or all at once.
//!
//! What a reference sees of a step is its view: `{"success": bool, "data": the tool's
//! result as an agent sees it, "error": the error object or null}`. A result too large
//! for one response (a handle envelope) is read whole from the handle store, so a path
//! into rows past the summary still resolves.

pub mod dispatch;
pub mod exec;
pub mod shapes;
pub mod template;
pub mod workflow;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::{Map, Value, json};

use crate::error::{ErrorCode, ToolError};
pub use dispatch::{Caller, Dispatch};
use template::{Reference, Root, Seg, Template};

/// Most steps in one plan.
pub const MAX_STEPS: usize = 200;
/// Steps running at once unless the plan says.
pub const DEFAULT_MAX_PARALLEL: usize = 8;
/// Most steps a plan may run at once.
pub const MAX_PARALLEL: usize = 32;
/// A step's time limit per attempt unless it says.
pub const DEFAULT_TIMEOUT_MS: u64 = 60_000;
/// The longest time limit a step may ask for (one hour).
pub const MAX_TIMEOUT_MS: u64 = 3_600_000;
/// Most retries of one step.
pub const MAX_RETRIES: u32 = 10;
/// The first wait before a retry unless the plan says; doubled each time.
pub const DEFAULT_BACKOFF_MS: u64 = 200;
/// The longest wait between two attempts.
pub const MAX_BACKOFF_MS: u64 = 10_000;

/// A place inside a step's params: keys and indices from the params object.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ParamPath(pub Vec<ParamSeg>);

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ParamSeg {
    Key(String),
    Index(usize),
}

impl fmt::Display for ParamPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.0.iter().enumerate() {
            match s {
                ParamSeg::Key(k) if i == 0 => write!(f, "{k}")?,
                ParamSeg::Key(k) => write!(f, ".{k}")?,
                ParamSeg::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

impl ParamPath {
    fn child(&self, seg: ParamSeg) -> ParamPath {
        let mut p = self.clone();
        p.0.push(seg);
        p
    }

    /// The value at this place in `v`.
    pub fn get<'a>(&self, v: &'a Value) -> Option<&'a Value> {
        let mut at = v;
        for s in &self.0 {
            at = match s {
                ParamSeg::Key(k) => at.get(k)?,
                ParamSeg::Index(i) => at.get(i)?,
            };
        }
        Some(at)
    }

    fn get_mut<'a>(&self, v: &'a mut Value) -> Option<&'a mut Value> {
        let mut at = v;
        for s in &self.0 {
            at = match s {
                ParamSeg::Key(k) => at.get_mut(k)?,
                ParamSeg::Index(i) => at.get_mut(i)?,
            };
        }
        Some(at)
    }
}

/// One string in a step's params that holds references (or escapes).
#[derive(Debug, Clone)]
pub struct Slot {
    pub at: ParamPath,
    pub template: Template,
}

/// One tool call of a plan.
#[derive(Debug, Clone)]
pub struct Step {
    pub index: usize,
    pub id: Option<String>,
    pub tool: String,
    pub description: Option<String>,
    /// The params as written.
    pub params: Value,
    /// `depends_on` as written, resolved to step indices.
    pub depends_on: BTreeSet<usize>,
    /// Steps this one reads through references.
    pub reads: BTreeSet<usize>,
    pub optional: bool,
    pub retry_count: u32,
    pub timeout_ms: u64,
    /// `false`: the step runs alone, after every earlier step and before every later one.
    pub parallel: bool,
    /// The strings of params that hold references.
    pub slots: Vec<Slot>,
}

impl Step {
    /// The steps whose failure stops this one: `depends_on` and the steps it reads.
    pub fn needs(&self) -> BTreeSet<usize> {
        self.depends_on.union(&self.reads).copied().collect()
    }

    /// `2 (player)` or `2`.
    pub fn label(&self) -> String {
        match &self.id {
            Some(id) => format!("{} ({id})", self.index),
            None => self.index.to_string(),
        }
    }
}

/// A parsed plan; [`validate`] has checked it against the core's tools.
#[derive(Debug, Clone)]
pub struct Plan {
    pub steps: Vec<Step>,
    pub inputs: Map<String, Value>,
    pub max_parallel: usize,
    pub retry_backoff_ms: u64,
    /// Each step's order-only predecessors (from `parallel: false`): they must have
    /// ended, but their failure does not stop it.
    pub after: Vec<BTreeSet<usize>>,
}

/// One thing wrong with a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The step, when the problem is in one.
    pub step: Option<usize>,
    pub step_id: Option<String>,
    /// The parameter (`facility_id`, `filters.owner`) or plan field (`depends_on`).
    pub param: Option<String>,
    /// `unknown_tool`, `missing_step`, `later_step`, `cycle`, `impossible_path`,
    /// `bad_reference`, `missing_input`, `invalid_arguments`, `invalid_step`,
    /// `duplicate_id`, `invalid_plan`.
    pub kind: &'static str,
    pub message: String,
    /// For a missing step or input: what there is to refer to.
    pub available: Option<Vec<String>>,
}

impl Problem {
    fn plan(kind: &'static str, message: impl Into<String>) -> Problem {
        Problem {
            step: None,
            step_id: None,
            param: None,
            kind,
            message: message.into(),
            available: None,
        }
    }

    pub fn to_json(&self) -> Value {
        let mut o = Map::new();
        o.insert("kind".into(), json!(self.kind));
        if let Some(s) = self.step {
            o.insert("step".into(), json!(s));
        }
        if let Some(id) = &self.step_id {
            o.insert("step_id".into(), json!(id));
        }
        if let Some(p) = &self.param {
            o.insert("param".into(), json!(p));
        }
        o.insert("message".into(), json!(self.message));
        if let Some(a) = &self.available {
            o.insert("available".into(), json!(a));
        }
        Value::Object(o)
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(s) = self.step {
            write!(f, "step {s}")?;
            if let Some(id) = &self.step_id {
                write!(f, " ({id})")?;
            }
            if let Some(p) = &self.param {
                write!(f, ", {p}")?;
            }
            write!(f, ": ")?;
        }
        write!(f, "{}", self.message)
    }
}

/// Collects problems for one step.
struct StepProblems<'a> {
    index: usize,
    id: Option<String>,
    out: &'a mut Vec<Problem>,
}

impl StepProblems<'_> {
    fn push(
        &mut self,
        kind: &'static str,
        param: Option<String>,
        message: String,
        available: Option<Vec<String>>,
    ) {
        self.out.push(Problem {
            step: Some(self.index),
            step_id: self.id.clone(),
            param,
            kind,
            message,
            available,
        });
    }
}

const STEP_FIELDS: [&str; 13] = [
    "tool",
    "params",
    "id",
    "depends_on",
    "dependsOn",
    "optional",
    "retry_count",
    "retryCount",
    "timeout_ms",
    "timeoutMs",
    "parallel",
    "description",
    "name",
];

/// Reads `v` as a plan: `{"steps": [...], "inputs": {...}, "max_parallel": N,
/// "retry_backoff_ms": N}`. Every problem is collected; the plan comes back only when
/// there are none. Tools are not looked up here (see [`validate`]).
pub fn parse(v: &Value) -> Result<Plan, Vec<Problem>> {
    parse_parts(v)?.finish()
}

/// A plan read as far as it could be: the steps that parsed, and the problems so far.
struct Parsed {
    steps: Vec<Option<Step>>,
    inputs: Map<String, Value>,
    max_parallel: usize,
    retry_backoff_ms: u64,
    problems: Vec<Problem>,
}

fn parse_parts(v: &Value) -> Result<Parsed, Vec<Problem>> {
    let mut problems = Vec::new();
    let Some(obj) = v.as_object() else {
        return Err(vec![Problem::plan(
            "invalid_plan",
            format!(
                "a plan is an object with \"steps\", not {}",
                template::describe(v)
            ),
        )]);
    };
    let Some(raw_steps) = obj.get("steps").and_then(Value::as_array) else {
        return Err(vec![Problem::plan(
            "invalid_plan",
            "a plan needs \"steps\": an array of {\"tool\", \"params\"} objects",
        )]);
    };
    if raw_steps.is_empty() {
        problems.push(Problem::plan("invalid_plan", "the plan has no steps"));
    }
    if raw_steps.len() > MAX_STEPS {
        return Err(vec![Problem::plan(
            "invalid_plan",
            format!(
                "the plan has {} steps; at most {MAX_STEPS} are allowed",
                raw_steps.len()
            ),
        )]);
    }
    let inputs = match obj.get("inputs") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(other) => {
            problems.push(Problem::plan(
                "invalid_plan",
                format!(
                    "\"inputs\" is an object of named values, not {}",
                    template::describe(other)
                ),
            ));
            Map::new()
        }
    };
    let max_parallel = match obj.get("max_parallel") {
        None => DEFAULT_MAX_PARALLEL,
        Some(v) => match v.as_u64() {
            Some(n @ 1..) if n as usize <= MAX_PARALLEL => n as usize,
            _ => {
                problems.push(Problem::plan(
                    "invalid_plan",
                    format!("\"max_parallel\" is a whole number from 1 to {MAX_PARALLEL}"),
                ));
                DEFAULT_MAX_PARALLEL
            }
        },
    };
    let retry_backoff_ms = match obj.get("retry_backoff_ms") {
        None => DEFAULT_BACKOFF_MS,
        Some(v) => match v.as_u64() {
            Some(n) if n <= MAX_BACKOFF_MS => n,
            _ => {
                problems.push(Problem::plan(
                    "invalid_plan",
                    format!("\"retry_backoff_ms\" is a whole number from 0 to {MAX_BACKOFF_MS}"),
                ));
                DEFAULT_BACKOFF_MS
            }
        },
    };

    // Names first, so that references and depends_on can use them in any order.
    let mut names: BTreeMap<String, usize> = BTreeMap::new();
    for (i, raw) in raw_steps.iter().enumerate() {
        if let Some(id) = raw.get("id").and_then(Value::as_str) {
            if let Some(first) = names.get(id) {
                problems.push(Problem {
                    step: Some(i),
                    step_id: Some(id.to_string()),
                    param: Some("id".into()),
                    kind: "duplicate_id",
                    message: format!("the id {id:?} is already step {first}'s"),
                    available: None,
                });
            } else {
                names.insert(id.to_string(), i);
            }
        }
    }
    let labels: Vec<String> = raw_steps
        .iter()
        .enumerate()
        .map(|(i, raw)| match raw.get("id").and_then(Value::as_str) {
            Some(id) => format!("{i} ({id})"),
            None => i.to_string(),
        })
        .collect();

    let mut steps = Vec::with_capacity(raw_steps.len());
    for (i, raw) in raw_steps.iter().enumerate() {
        let id = raw.get("id").and_then(Value::as_str).map(str::to_string);
        let mut sp = StepProblems {
            index: i,
            id: id.clone(),
            out: &mut problems,
        };
        steps.push(parse_step(i, raw, &names, &labels, &inputs, &mut sp));
    }
    Ok(Parsed {
        steps,
        inputs,
        max_parallel,
        retry_backoff_ms,
        problems,
    })
}

impl Parsed {
    /// The plan, when nothing is wrong with it (dependency cycles are checked last).
    fn finish(self) -> Result<Plan, Vec<Problem>> {
        let mut problems = self.problems;
        if !problems.is_empty() {
            return Err(problems);
        }
        let steps: Vec<Step> = self.steps.into_iter().flatten().collect();
        let after = order_edges(&steps);
        let plan = Plan {
            steps,
            inputs: self.inputs,
            max_parallel: self.max_parallel,
            retry_backoff_ms: self.retry_backoff_ms,
            after,
        };
        if let Some(cycle) = find_cycle(&plan) {
            let path: Vec<String> = cycle
                .iter()
                .map(|&i| format!("step {}", plan.steps[i].label()))
                .collect();
            let first = cycle[0];
            problems.push(Problem {
                step: Some(first),
                step_id: plan.steps[first].id.clone(),
                param: Some("depends_on".into()),
                kind: "cycle",
                message: format!(
                    "the steps wait for each other in a cycle: {} (parallel: false orders a \
                     step after every earlier one)",
                    path.join(" → ")
                ),
                available: None,
            });
            return Err(problems);
        }
        Ok(plan)
    }
}

fn parse_step(
    i: usize,
    raw: &Value,
    names: &BTreeMap<String, usize>,
    labels: &[String],
    inputs: &Map<String, Value>,
    sp: &mut StepProblems<'_>,
) -> Option<Step> {
    let Some(obj) = raw.as_object() else {
        sp.push(
            "invalid_step",
            None,
            format!(
                "a step is an object with \"tool\" and \"params\", not {}",
                template::describe(raw)
            ),
            None,
        );
        return None;
    };
    let mut ok = true;
    for k in obj.keys() {
        if !STEP_FIELDS.contains(&k.as_str()) {
            sp.push(
                "invalid_step",
                Some(k.clone()),
                format!(
                    "unknown step field {k:?}; a step has tool, params, id, depends_on, \
                     optional, retry_count, timeout_ms, parallel, description"
                ),
                None,
            );
            ok = false;
        }
    }
    let tool = match obj.get("tool").and_then(Value::as_str) {
        Some(t) if !t.is_empty() => t.to_string(),
        _ => {
            sp.push(
                "invalid_step",
                Some("tool".into()),
                "every step names its \"tool\"".into(),
                None,
            );
            ok = false;
            String::new()
        }
    };
    if let Some(id) = obj.get("id")
        && !id.as_str().is_some_and(|s| !s.is_empty() && s.len() <= 64)
    {
        sp.push(
            "invalid_step",
            Some("id".into()),
            "a step id is a non-empty string of at most 64 characters".into(),
            None,
        );
        ok = false;
    }
    let params = match obj.get("params") {
        None | Some(Value::Null) => json!({}),
        Some(p @ Value::Object(_)) => p.clone(),
        Some(other) => {
            sp.push(
                "invalid_step",
                Some("params".into()),
                format!(
                    "params is an object of the tool's arguments, not {}",
                    template::describe(other)
                ),
                None,
            );
            ok = false;
            json!({})
        }
    };
    let flag = |sp: &mut StepProblems<'_>, key: &str, default: bool| match obj.get(key) {
        None => Some(default),
        Some(Value::Bool(b)) => Some(*b),
        Some(_) => {
            sp.push(
                "invalid_step",
                Some(key.into()),
                format!("{key} is true or false"),
                None,
            );
            None
        }
    };
    let optional = flag(sp, "optional", false);
    let parallel = flag(sp, "parallel", true);
    let number = |sp: &mut StepProblems<'_>, keys: [&str; 2], max: u64, default: u64| {
        let Some((key, v)) = keys.iter().find_map(|k| obj.get(*k).map(|v| (*k, v))) else {
            return Some(default);
        };
        match v.as_u64() {
            Some(n) if n <= max => Some(n),
            _ => {
                sp.push(
                    "invalid_step",
                    Some(key.into()),
                    format!("{key} is a whole number from 0 to {max}"),
                    None,
                );
                None
            }
        }
    };
    let retry_count = number(sp, ["retry_count", "retryCount"], MAX_RETRIES as u64, 0);
    let timeout_ms = number(
        sp,
        ["timeout_ms", "timeoutMs"],
        MAX_TIMEOUT_MS,
        DEFAULT_TIMEOUT_MS,
    )
    .map(|t| if t == 0 { DEFAULT_TIMEOUT_MS } else { t });

    // depends_on: indices or names.
    let mut depends_on = BTreeSet::new();
    let deps = obj.get("depends_on").or_else(|| obj.get("dependsOn"));
    let dep_items: Vec<&Value> = match deps {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a.iter().collect(),
        Some(single @ (Value::Number(_) | Value::String(_))) => vec![single],
        Some(_) => {
            sp.push(
                "invalid_step",
                Some("depends_on".into()),
                "depends_on is a list of step indices or ids".into(),
                None,
            );
            ok = false;
            Vec::new()
        }
    };
    for d in dep_items {
        let target = match d {
            Value::Number(n) => n.as_u64().map(|n| n as usize),
            Value::String(s) => names.get(s).copied().or_else(|| s.parse::<usize>().ok()),
            _ => None,
        };
        match target {
            Some(t) if t < labels.len() && t != i => {
                depends_on.insert(t);
            }
            Some(t) if t == i => {
                sp.push(
                    "cycle",
                    Some("depends_on".into()),
                    "a step cannot depend on itself".into(),
                    None,
                );
                ok = false;
            }
            _ => {
                sp.push(
                    "missing_step",
                    Some("depends_on".into()),
                    format!("depends on {d}, which is not a step of this plan"),
                    Some(
                        labels
                            .iter()
                            .filter(|l| **l != labels[i])
                            .cloned()
                            .collect(),
                    ),
                );
                ok = false;
            }
        }
    }

    // References in params.
    let mut slots = Vec::new();
    let mut reads = BTreeSet::new();
    let mut strings = Vec::new();
    collect_strings(&params, ParamPath::default(), &mut strings);
    for (at, s) in strings {
        match Template::parse(s) {
            Ok(None) => {}
            Ok(Some(template)) => {
                for r in template.references() {
                    match check_reference(i, r, names, labels, inputs) {
                        Ok(Some(target)) => {
                            reads.insert(target);
                        }
                        Ok(None) => {}
                        Err((kind, message, available)) => {
                            sp.push(kind, Some(at.to_string()), message, available);
                            ok = false;
                        }
                    }
                }
                slots.push(Slot { at, template });
            }
            Err(e) => {
                sp.push(
                    "bad_reference",
                    Some(at.to_string()),
                    format!("{:?} {e}", truncate(s, 60)),
                    None,
                );
                ok = false;
            }
        }
    }
    let (Some(optional), Some(parallel), Some(retry_count), Some(timeout_ms)) =
        (optional, parallel, retry_count, timeout_ms)
    else {
        return None;
    };
    ok.then(|| Step {
        index: i,
        id: obj.get("id").and_then(Value::as_str).map(str::to_string),
        tool,
        description: obj
            .get("description")
            .or_else(|| obj.get("name"))
            .and_then(Value::as_str)
            .map(str::to_string),
        params,
        depends_on,
        reads,
        optional,
        retry_count: retry_count as u32,
        timeout_ms,
        parallel,
        slots,
    })
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n).collect::<String>() + "…"
    }
}

fn collect_strings<'a>(v: &'a Value, at: ParamPath, out: &mut Vec<(ParamPath, &'a str)>) {
    match v {
        Value::String(s) => out.push((at, s)),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                collect_strings(item, at.child(ParamSeg::Index(i)), out);
            }
        }
        Value::Object(map) => {
            for (k, item) in map {
                collect_strings(item, at.child(ParamSeg::Key(k.clone())), out);
            }
        }
        _ => {}
    }
}

type RefProblem = (&'static str, String, Option<Vec<String>>);

/// Checks what a reference in step `i` points at; the step it reads, if any.
fn check_reference(
    i: usize,
    r: &Reference,
    names: &BTreeMap<String, usize>,
    labels: &[String],
    inputs: &Map<String, Value>,
) -> Result<Option<usize>, RefProblem> {
    let earlier = || Some(labels[..i].to_vec());
    let target = match &r.root {
        Root::Input(name) => {
            let Some(value) = inputs.get(name) else {
                return Err((
                    "missing_input",
                    format!(
                        "${{{}}} names the input {name:?}, which the plan was not given",
                        r.text
                    ),
                    Some(inputs.keys().cloned().collect()),
                ));
            };
            // Inputs are known now: the whole path can be checked.
            if let Err(m) = template::walk(r, value, 0, &mut Vec::new()) {
                return Err((
                    "impossible_path",
                    format!("${{{}}}: {}", r.text, m.reason),
                    None,
                ));
            }
            return Ok(None);
        }
        Root::Index(n) => *n,
        Root::Named(name) => match names.get(name) {
            Some(&n) => n,
            None => {
                return Err((
                    "missing_step",
                    format!(
                        "${{{}}} refers to a step with id {name:?}, and no step has that id",
                        r.text
                    ),
                    earlier(),
                ));
            }
        },
    };
    if target >= labels.len() {
        return Err((
            "missing_step",
            format!(
                "${{{}}} refers to step {target}, but the plan has {} steps (0 to {})",
                r.text,
                labels.len(),
                labels.len() - 1
            ),
            earlier(),
        ));
    }
    if target >= i {
        let which = if target == i {
            "itself".to_string()
        } else {
            format!("step {}, which comes later", labels[target])
        };
        return Err((
            "later_step",
            format!(
                "${{{}}} refers to {which}; a step can only read the results of earlier steps",
                r.text
            ),
            earlier(),
        ));
    }
    shapes::check_step_path(r).map_err(|m| ("impossible_path", m, None))?;
    Ok(Some(target))
}

/// The order-only predecessors that `parallel: false` adds.
fn order_edges(steps: &[Step]) -> Vec<BTreeSet<usize>> {
    let n = steps.len();
    let mut after = vec![BTreeSet::new(); n];
    for b in steps.iter().filter(|s| !s.parallel).map(|s| s.index) {
        after[b].extend(0..b);
        for later in after.iter_mut().skip(b + 1) {
            later.insert(b);
        }
    }
    after
}

/// A cycle in the needs and order edges, as step indices, if there is one.
fn find_cycle(plan: &Plan) -> Option<Vec<usize>> {
    let n = plan.steps.len();
    let preds = |i: usize| -> Vec<usize> {
        plan.steps[i]
            .needs()
            .union(&plan.after[i])
            .copied()
            .collect()
    };
    // 0 unvisited, 1 on the stack, 2 done.
    let mut state = vec![0u8; n];
    let mut stack: Vec<usize> = Vec::new();
    fn visit(
        i: usize,
        preds: &dyn Fn(usize) -> Vec<usize>,
        state: &mut [u8],
        stack: &mut Vec<usize>,
    ) -> Option<Vec<usize>> {
        state[i] = 1;
        stack.push(i);
        for p in preds(i) {
            if state[p] == 1 {
                let from = stack.iter().position(|&s| s == p).unwrap_or(0);
                let mut cycle: Vec<usize> = stack[from..].to_vec();
                cycle.push(p);
                return Some(cycle);
            }
            if state[p] == 0
                && let Some(c) = visit(p, preds, state, stack)
            {
                return Some(c);
            }
        }
        stack.pop();
        state[i] = 2;
        None
    }
    for i in 0..n {
        if state[i] == 0
            && let Some(c) = visit(i, &preds, &mut state, &mut stack)
        {
            return Some(c);
        }
    }
    None
}

/// Parses `v` and checks it against the core's tools: every tool exists, params without
/// references satisfy the tool's schema, and params with references name only fields the
/// tool has and every field it requires.
pub fn validate(tools: &dyn Dispatch, v: &Value) -> Result<Plan, Vec<Problem>> {
    let mut parsed = parse_parts(v)?;
    let mut problems = std::mem::take(&mut parsed.problems);
    for step in parsed.steps.iter().flatten() {
        let mut sp = StepProblems {
            index: step.index,
            id: step.id.clone(),
            out: &mut problems,
        };
        let Some(input_schema) = tools.input_schema(&step.tool) else {
            let close = tools.similar_tools(&step.tool);
            sp.push(
                "unknown_tool",
                Some("tool".into()),
                format!("no tool named {:?} is registered", step.tool),
                Some(close),
            );
            continue;
        };
        if step.tool == "structs_plan_execute" || step.tool == "structs_workflow_execute" {
            sp.push(
                "invalid_step",
                Some("tool".into()),
                format!("{} cannot run inside a plan", step.tool),
                None,
            );
            continue;
        }
        if step.slots.is_empty() {
            if let Err(e) = tools.check_arguments(&step.tool, &step.params) {
                let field = e.field.clone();
                sp.push("invalid_arguments", field, e.message.clone(), None);
            }
            continue;
        }
        // Params with references: their values are unknown until run time, so check the
        // names only.
        let props = input_schema.get("properties").and_then(Value::as_object);
        let closed = input_schema.get("additionalProperties") == Some(&Value::Bool(false));
        if let (Some(params), Some(props)) = (step.params.as_object(), props) {
            for k in params.keys() {
                if closed && !props.contains_key(k) {
                    sp.push(
                        "invalid_arguments",
                        Some(k.clone()),
                        format!("{} has no argument {k:?}", step.tool),
                        Some(props.keys().cloned().collect()),
                    );
                }
            }
            if let Some(required) = input_schema.get("required").and_then(Value::as_array) {
                for r in required.iter().filter_map(Value::as_str) {
                    if !params.contains_key(r) {
                        sp.push(
                            "invalid_arguments",
                            Some(r.to_string()),
                            format!("{} requires {r:?}", step.tool),
                            None,
                        );
                    }
                }
            }
        }
        for slot in &step.slots {
            for r in slot.template.references() {
                let target = match &r.root {
                    Root::Index(n) => parsed.steps.get(*n).and_then(Option::as_ref),
                    Root::Named(name) => parsed
                        .steps
                        .iter()
                        .flatten()
                        .find(|s| s.id.as_deref() == Some(name)),
                    Root::Input(_) => None,
                };
                if let Some(t) = target
                    && let Err(m) = shapes::check_data_path(r, t)
                {
                    sp.push("impossible_path", Some(slot.at.to_string()), m, None);
                }
            }
        }
    }
    problems.sort_by_key(|p| p.step);
    parsed.problems = problems;
    parsed.finish()
}

/// A summary of a valid plan: each step's dependencies and the levels it runs in.
pub fn outline(plan: &Plan) -> Value {
    let levels = levels(plan);
    let steps: Vec<Value> = plan
        .steps
        .iter()
        .map(|s| {
            json!({
                "step_index": s.index,
                "id": s.id,
                "tool": s.tool,
                "depends_on": s.depends_on,
                "reads": s.reads,
                "after": plan.after[s.index],
                "references": s.slots.iter().flat_map(|slot| slot.template.references().map(move |r| json!({
                    "param": slot.at.to_string(),
                    "reference": format!("${{{}}}", r.text),
                }))).collect::<Vec<_>>(),
                "optional": s.optional,
                "level": levels[s.index],
            })
        })
        .collect();
    let depth = levels.iter().max().map_or(0, |m| m + 1);
    json!({"steps": steps, "levels": depth, "max_parallel": plan.max_parallel})
}

/// Each step's level: 0 for steps that wait for nothing, else one more than the highest
/// level it waits for. Steps of one level can run at once.
pub fn levels(plan: &Plan) -> Vec<usize> {
    let mut level = vec![0usize; plan.steps.len()];
    // Steps may depend on later ones (depends_on), so relax until stable; the graph has
    // no cycle, so this ends within n rounds.
    for _ in 0..plan.steps.len() {
        let mut changed = false;
        for s in &plan.steps {
            let l = s
                .needs()
                .union(&plan.after[s.index])
                .map(|&p| level[p] + 1)
                .max()
                .unwrap_or(0);
            if l != level[s.index] {
                level[s.index] = l;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    level
}

/// Resolves every reference in `step`'s params. `view(i)` is step `i`'s view
/// (`{"success", "data", "error"}`) or `None` when it has not run.
pub fn resolve(
    step: &Step,
    plan: &Plan,
    view: &dyn Fn(usize) -> Option<StepView>,
) -> Result<(Value, Vec<Substitution>), Unresolved> {
    let mut params = step.params.clone();
    let mut subs = Vec::new();
    for slot in &step.slots {
        let mut text = String::new();
        let mut whole: Option<Value> = None;
        for part in &slot.template.parts {
            match part {
                template::Part::Text(t) => text.push_str(t),
                template::Part::Ref(r) => {
                    let Found {
                        value,
                        from,
                        readings,
                    } = lookup(r, plan, view).map_err(|m| Unresolved {
                        param: slot.at.to_string(),
                        reference: format!("${{{}}}", r.text),
                        missing: m,
                    })?;
                    subs.push(Substitution {
                        param: slot.at.clone(),
                        reference: r.text.clone(),
                        from_step: from,
                        value: value.clone(),
                        readings: readings.iter().map(ToString::to_string).collect(),
                    });
                    if slot.template.is_whole() {
                        whole = Some(value);
                    } else {
                        text.push_str(&template::interpolate(&value));
                    }
                }
            }
        }
        let new = whole.unwrap_or(Value::String(text));
        if let Some(place) = slot.at.get_mut(&mut params) {
            *place = new;
        }
    }
    Ok((params, subs))
}

/// What one reference found: the value, the step it read (none for inputs), and any
/// reading of the path other than as written.
struct Found {
    value: Value,
    from: Option<usize>,
    readings: Vec<template::Reading>,
}

fn lookup(
    r: &Reference,
    plan: &Plan,
    view: &dyn Fn(usize) -> Option<StepView>,
) -> Result<Found, template::Missing> {
    let mut readings = Vec::new();
    let step = match &r.root {
        Root::Input(name) => {
            let Some(v) = plan.inputs.get(name) else {
                return Err(template::Missing {
                    at: r.root.label(),
                    part: name.clone(),
                    reason: format!("the plan has no input {name:?}"),
                });
            };
            let walked = template::walk(r, v, 0, &mut readings);
            return found(walked, None, readings);
        }
        Root::Index(n) => *n,
        Root::Named(name) => plan
            .steps
            .iter()
            .position(|s| s.id.as_deref() == Some(name))
            .ok_or_else(|| template::Missing {
                at: r.root.label(),
                part: name.clone(),
                reason: format!("no step has the id {name:?}"),
            })?,
    };
    let Some(StepView { view: v, full }) = view(step) else {
        return Err(template::Missing {
            at: r.root.label(),
            part: r.root.label(),
            reason: format!("step {step} has not run"),
        });
    };
    let under_data = matches!(r.path.first(), Some(Seg::Key(k)) if k == "data");
    // A result too large for one response is read whole, as the tool made it; only
    // what the envelope alone has (result_handle, page_info, …) is read from the
    // envelope. What is missing is said of the whole result.
    if under_data && let Some(full) = &full {
        let whole = template::walk(r, full, 1, &mut readings);
        if whole.is_ok() {
            return found(whole, Some(step), readings);
        }
        let mut envelope_readings = Vec::new();
        let envelope = template::walk(r, &v, 0, &mut envelope_readings);
        if envelope.is_ok() && envelope_readings.is_empty() {
            return found(envelope, Some(step), envelope_readings);
        }
        return found(whole, Some(step), readings);
    }
    let walked = template::walk(r, &v, 0, &mut readings).map_err(|mut m| {
        // Say why data is missing when the step failed.
        if v["success"] == false && under_data {
            m.reason = format!(
                "step {step} failed ({}: {}), so it has no data",
                v["error"]["code"].as_str().unwrap_or("ERROR"),
                v["error"]["message"].as_str().unwrap_or("")
            );
        }
        m
    });
    found(walked, Some(step), readings)
}

fn found(
    w: Result<template::WalkResult<'_>, template::Missing>,
    from: Option<usize>,
    readings: Vec<template::Reading>,
) -> Result<Found, template::Missing> {
    let value = match w? {
        template::WalkResult::Value(v) => v.clone(),
        template::WalkResult::Length(n, _) => json!(n),
    };
    Ok(Found {
        value,
        from,
        readings,
    })
}

/// What references read of an ended step.
#[derive(Debug, Clone)]
pub struct StepView {
    /// `{"success", "data", "error"}`, data as the agent saw it.
    pub view: std::sync::Arc<Value>,
    /// The whole result when `data` is a handle envelope.
    pub full: Option<std::sync::Arc<Value>>,
}

/// The error for a plan that cannot run: the first problems in the message, all of
/// them in `details.problems`.
pub fn invalid_plan(problems: &[Problem]) -> ToolError {
    let first: Vec<String> = problems.iter().take(3).map(|p| p.to_string()).collect();
    let more = if problems.len() > 3 {
        format!(" (and {} more)", problems.len() - 3)
    } else {
        String::new()
    };
    let mut e = ToolError::new(
        ErrorCode::ValidationInvalidPlan,
        format!("the plan cannot run: {}{more}", first.join("; ")),
    );
    if let Some(p) = problems.first() {
        e.field = Some(match (p.step, &p.param) {
            (Some(s), Some(param)) => format!("steps[{s}].params.{param}"),
            (Some(s), None) => format!("steps[{s}]"),
            _ => "steps".to_string(),
        });
    }
    e.with_extra("problems", problems.iter().map(Problem::to_json).collect())
}

/// One substituted reference, for the result and the console.
#[derive(Debug, Clone, PartialEq)]
pub struct Substitution {
    pub param: ParamPath,
    /// The reference as written, without `${` `}`.
    pub reference: String,
    /// The step it read (none for inputs).
    pub from_step: Option<usize>,
    pub value: Value,
    /// Where the path was read another way than written, how
    /// (`step[0].data[0] read as step[0].data.players[0]`); empty when read as written.
    pub readings: Vec<String>,
}

impl Substitution {
    pub fn to_json(&self) -> Value {
        let mut v = json!({
            "param": self.param.to_string(),
            "reference": format!("${{{}}}", self.reference),
            "from_step": self.from_step,
            "value": self.value,
        });
        if !self.readings.is_empty() {
            v["readings"] = json!(self.readings);
        }
        v
    }
}

/// A reference that found nothing at run time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unresolved {
    pub param: String,
    pub reference: String,
    pub missing: template::Missing,
}

impl Unresolved {
    pub fn to_error(&self) -> ToolError {
        ToolError::field(
            ErrorCode::ValidationUnresolvedReference,
            &self.param,
            format!(
                "{} found nothing at {}: {}",
                self.reference, self.missing.at, self.missing.reason
            ),
        )
        .with_extra("reference", json!(self.reference))
        .with_extra("missing", json!(self.missing.part))
        .with_extra("path", json!(self.missing.at))
    }
}
