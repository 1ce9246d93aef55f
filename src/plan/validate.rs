//! A parsed plan checked against the tools it calls.

use serde_json::Value;

use super::parse::parse_parts;
use super::*;

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
