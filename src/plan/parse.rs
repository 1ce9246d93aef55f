//! Reading a plan from JSON: its shape, its steps, their references and the order they
//! run in, with every problem collected.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use super::*;

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
pub(super) struct Parsed {
    pub(super) steps: Vec<Option<Step>>,
    pub(super) inputs: Map<String, Value>,
    pub(super) max_parallel: usize,
    pub(super) retry_backoff_ms: u64,
    pub(super) problems: Vec<Problem>,
}

/// Each named step's index by its `id`; a name given twice is a problem, and the
/// first step keeps it.
fn step_names(raw_steps: &[Value], problems: &mut Vec<Problem>) -> BTreeMap<String, usize> {
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
    names
}

pub(super) fn parse_parts(v: &Value) -> Result<Parsed, Vec<Problem>> {
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
    let names = step_names(raw_steps, &mut problems);
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
    pub(super) fn finish(self) -> Result<Plan, Vec<Problem>> {
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
    let mut fields = StepFields { obj, sp, ok: true };
    fields.check_known();
    let tool = fields.tool();
    fields.check_id();
    let params = fields.params();
    let optional = fields.flag("optional", false);
    let parallel = fields.flag("parallel", true);
    let retry_count = fields.number(["retry_count", "retryCount"], MAX_RETRIES as u64, 0);
    let timeout_ms = fields
        .number(
            ["timeout_ms", "timeoutMs"],
            MAX_TIMEOUT_MS,
            DEFAULT_TIMEOUT_MS,
        )
        .map(|t| if t == 0 { DEFAULT_TIMEOUT_MS } else { t });
    let depends_on = fields.depends_on(i, names, labels);
    let (slots, reads) = fields.references(i, &params, names, labels, inputs);
    let (Some(optional), Some(parallel), Some(retry_count), Some(timeout_ms)) =
        (optional, parallel, retry_count, timeout_ms)
    else {
        return None;
    };
    fields.ok.then(|| Step {
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

/// A step's object read field by field, each problem noted as it is found, with
/// whether the step is still whole.
struct StepFields<'a, 'p> {
    obj: &'a Map<String, Value>,
    sp: &'a mut StepProblems<'p>,
    ok: bool,
}

impl<'a> StepFields<'a, '_> {
    /// Notes a problem that leaves the step unusable.
    fn fail(
        &mut self,
        kind: &'static str,
        param: Option<String>,
        message: String,
        available: Option<Vec<String>>,
    ) {
        self.sp.push(kind, param, message, available);
        self.ok = false;
    }

    /// Every field is one a step has.
    fn check_known(&mut self) {
        for k in self.obj.keys() {
            if !STEP_FIELDS.contains(&k.as_str()) {
                self.fail(
                    "invalid_step",
                    Some(k.clone()),
                    format!(
                        "unknown step field {k:?}; a step has tool, params, id, depends_on, \
                         optional, retry_count, timeout_ms, parallel, description"
                    ),
                    None,
                );
            }
        }
    }

    /// The tool the step calls (empty when it names none).
    fn tool(&mut self) -> String {
        match self.obj.get("tool").and_then(Value::as_str) {
            Some(t) if !t.is_empty() => t.to_string(),
            _ => {
                self.fail(
                    "invalid_step",
                    Some("tool".into()),
                    "every step names its \"tool\"".into(),
                    None,
                );
                String::new()
            }
        }
    }

    /// An id, when given, is a non-empty string of at most 64 characters.
    fn check_id(&mut self) {
        if let Some(id) = self.obj.get("id")
            && !id.as_str().is_some_and(|s| !s.is_empty() && s.len() <= 64)
        {
            self.fail(
                "invalid_step",
                Some("id".into()),
                "a step id is a non-empty string of at most 64 characters".into(),
                None,
            );
        }
    }

    /// The tool's arguments: an object, empty when not given.
    fn params(&mut self) -> Value {
        match self.obj.get("params") {
            None | Some(Value::Null) => json!({}),
            Some(p @ Value::Object(_)) => p.clone(),
            Some(other) => {
                self.fail(
                    "invalid_step",
                    Some("params".into()),
                    format!(
                        "params is an object of the tool's arguments, not {}",
                        template::describe(other)
                    ),
                    None,
                );
                json!({})
            }
        }
    }

    /// A true-or-false field, or its default; none when it is something else.
    fn flag(&mut self, key: &str, default: bool) -> Option<bool> {
        match self.obj.get(key) {
            None => Some(default),
            Some(Value::Bool(b)) => Some(*b),
            Some(_) => {
                self.sp.push(
                    "invalid_step",
                    Some(key.into()),
                    format!("{key} is true or false"),
                    None,
                );
                None
            }
        }
    }

    /// A whole-number field under either spelling, up to `max`, or its default; none
    /// when it is something else.
    fn number(&mut self, keys: [&str; 2], max: u64, default: u64) -> Option<u64> {
        let obj = self.obj;
        let Some((key, v)) = keys.iter().find_map(|k| obj.get(*k).map(|v| (*k, v))) else {
            return Some(default);
        };
        match v.as_u64() {
            Some(n) if n <= max => Some(n),
            _ => {
                self.sp.push(
                    "invalid_step",
                    Some(key.into()),
                    format!("{key} is a whole number from 0 to {max}"),
                    None,
                );
                None
            }
        }
    }

    /// The steps step `i` waits for, given by index or name.
    fn depends_on(
        &mut self,
        i: usize,
        names: &BTreeMap<String, usize>,
        labels: &[String],
    ) -> BTreeSet<usize> {
        let mut depends_on = BTreeSet::new();
        for d in self.dependency_items() {
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
                    self.fail(
                        "cycle",
                        Some("depends_on".into()),
                        "a step cannot depend on itself".into(),
                        None,
                    );
                }
                _ => {
                    self.fail(
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
                }
            }
        }
        depends_on
    }

    /// The entries of `depends_on` (or `dependsOn`): a list, or a single index or name.
    fn dependency_items(&mut self) -> Vec<&'a Value> {
        let deps = self
            .obj
            .get("depends_on")
            .or_else(|| self.obj.get("dependsOn"));
        match deps {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) => a.iter().collect(),
            Some(single @ (Value::Number(_) | Value::String(_))) => vec![single],
            Some(_) => {
                self.fail(
                    "invalid_step",
                    Some("depends_on".into()),
                    "depends_on is a list of step indices or ids".into(),
                    None,
                );
                Vec::new()
            }
        }
    }

    /// The templates in the params, each reference checked, and the steps they read.
    fn references(
        &mut self,
        i: usize,
        params: &Value,
        names: &BTreeMap<String, usize>,
        labels: &[String],
        inputs: &Map<String, Value>,
    ) -> (Vec<Slot>, BTreeSet<usize>) {
        let mut slots = Vec::new();
        let mut reads = BTreeSet::new();
        let mut strings = Vec::new();
        collect_strings(params, ParamPath::default(), &mut strings);
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
                                self.fail(kind, Some(at.to_string()), message, available);
                            }
                        }
                    }
                    slots.push(Slot { at, template });
                }
                Err(e) => {
                    self.fail(
                        "bad_reference",
                        Some(at.to_string()),
                        format!("{:?} {e}", truncate(s, 60)),
                        None,
                    );
                }
            }
        }
        (slots, reads)
    }
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

pub(super) type RefProblem = (&'static str, String, Option<Vec<String>>);

/// Checks what a reference in step `i` points at; the step it reads, if any.
pub(super) fn check_reference(
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
pub(super) fn find_cycle(plan: &Plan) -> Option<Vec<usize>> {
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
