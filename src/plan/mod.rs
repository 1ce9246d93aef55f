//! Plans: several tool calls at once, where later calls use earlier results through
//! step references (`${step[0].data.players[0].Player.id}`).
//!
//! - [`template`]: the reference syntax, parsed once per string, and path walking;
//! - this module: the plan's shape ([`Plan`], [`Step`], [`Problem`]) and its levels;
//! - `parse`: read from JSON with every problem collected ([`parse`]);
//! - `validate`: checked against the tools ([`validate`], through [`Dispatch`]):
//!   unknown tools, references to steps that do not exist or come later, dependency
//!   cycles, paths that cannot exist, arguments the tool would refuse;
//! - `resolve`: step references resolved from the steps that ended ([`resolve`]);
//! - [`shapes`]: the top-level fields of the results of the tools whose shape is fixed,
//!   so that a path into them can be checked before anything runs;
//! - [`exec`]: the run of a plan, a step at a time or all at once.
//!
//! What a reference sees of a step is its view: `{"success": bool, "data": the tool's
//! result as an agent sees it, "error": the error object or null}`. A result too large
//! for one response (a handle envelope) is read whole from the handle store, so a path
//! into rows past the summary still resolves.

pub mod dispatch;
pub mod driver;
pub mod exec;
pub mod file;
mod parse;
mod resolve;
pub mod shapes;
pub mod template;
mod validate;
pub mod workflow;

use std::collections::BTreeSet;
use std::fmt;

use serde_json::{Map, Value, json};

use crate::error::{ErrorCode, ToolError};
pub use dispatch::{Caller, Dispatch};
pub use parse::parse;
pub use resolve::{StepView, Substitution, Unresolved, resolve};
use template::{Reference, Root, Seg, Template};
pub use validate::validate;

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
