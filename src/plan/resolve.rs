//! Step references resolved at run time from the views of the steps that ended.

use serde_json::{Value, json};

use super::*;

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
