//! Plans in files: a file holds a plan, a recorded plan tool call (or a JSON-RPC
//! `tools/call` request carrying one), an array of them, or JSON Lines of them. The
//! console's Plans tab opens them; the shipped workflows and the example plan are the
//! plans it offers before any file.

use std::collections::BTreeSet;

use serde_json::Value;

use super::{Problem, template};

/// The example plan the console opens with.
pub const EXAMPLE: &str = include_str!("../../data/plans/example.json");

/// How the example plan is listed.
pub const EXAMPLE_LABEL: &str = "example (built in)";

/// The tools whose recorded calls carry a plan.
const PLAN_TOOLS: [&str; 2] = ["structs_plan_execute", "structs_plan_validate"];

/// One plan found in a file: where it was and the plan's JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct FoundPlan {
    pub label: String,
    pub plan: Value,
}

/// The plan a JSON value holds: a plan itself, a recorded plan tool call
/// (`{"name"|"tool", "arguments"|"params"}`), or a JSON-RPC `tools/call` request whose
/// params are such a call.
fn plan_in(v: &Value) -> Option<&Value> {
    let o = v.as_object()?;
    if o.contains_key("steps") {
        return Some(v);
    }
    if o.get("method").and_then(Value::as_str) == Some("tools/call") {
        return plan_in_call(o.get("params")?);
    }
    plan_in_call(v)
}

fn plan_in_call(v: &Value) -> Option<&Value> {
    let o = v.as_object()?;
    let name = o.get("name").or_else(|| o.get("tool"))?.as_str()?;
    if !PLAN_TOOLS.contains(&name) {
        return None;
    }
    o.get("arguments")
        .or_else(|| o.get("params"))
        .filter(|a| a.is_object())
}

/// The tool a recorded call names, for saying what a file held instead of a plan.
fn called_tool(v: &Value) -> Option<&str> {
    let call = if v.get("method").and_then(Value::as_str) == Some("tools/call") {
        v.get("params")?
    } else {
        v
    };
    call.get("name").or_else(|| call.get("tool"))?.as_str()
}

fn found(label: String, plan: &Value) -> FoundPlan {
    let steps = plan["steps"].as_array().map_or(0, Vec::len);
    FoundPlan {
        label: format!(
            "{label} · {steps} step{}",
            if steps == 1 { "" } else { "s" }
        ),
        plan: plan.clone(),
    }
}

/// Every plan in a file's text: one JSON value (a plan, a recorded call, or an array of
/// them) or JSON Lines. The error says what the text holds instead.
pub fn plans_in(text: &str) -> Result<Vec<FoundPlan>, String> {
    let whole = serde_json::from_str::<Value>(text);
    if let Ok(v) = &whole {
        if let Value::Array(items) = v {
            let found: Vec<FoundPlan> = items
                .iter()
                .enumerate()
                .filter_map(|(i, item)| plan_in(item).map(|p| found(format!("item {i}"), p)))
                .collect();
            if found.is_empty() {
                return Err(format!(
                    "none of the array's {} items is a plan or a recorded structs_plan_execute call",
                    items.len()
                ));
            }
            return Ok(found);
        }
        return match plan_in(v) {
            Some(p) => Ok(vec![found("the file".into(), p)]),
            None => Err(not_a_plan(v)),
        };
    }
    // JSON Lines: each line one value.
    let mut plans = Vec::new();
    let mut lines = 0;
    let mut bad_lines = 0;
    let mut bad: Option<(usize, String)> = None;
    let mut other_tools = BTreeSet::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        lines += 1;
        match serde_json::from_str::<Value>(line) {
            Ok(v) => match plan_in(&v) {
                Some(p) => plans.push(found(format!("line {}", n + 1), p)),
                None => {
                    if let Some(tool) = called_tool(&v) {
                        other_tools.insert(tool.to_string());
                    }
                }
            },
            Err(e) => {
                bad_lines += 1;
                if bad.is_none() {
                    bad = Some((n + 1, e.to_string()));
                }
            }
        }
    }
    if !plans.is_empty() {
        return Ok(plans);
    }
    if lines <= 1 || bad_lines == lines {
        // One value, or nothing that reads as lines of JSON: the whole file's error
        // (with its line and column) says most.
        let e = whole.err().map(|e| e.to_string()).unwrap_or_default();
        return Err(format!("the file is not JSON: {e}"));
    }
    let mut message = format!("no plan and no structs_plan_execute call in {lines} lines");
    if !other_tools.is_empty() {
        let tools: Vec<String> = other_tools.into_iter().collect();
        message.push_str(&format!(" (calls of {})", tools.join(", ")));
    }
    if let Some((n, e)) = bad {
        message.push_str(&format!("; line {n} is not JSON: {e}"));
    }
    Err(message)
}

fn not_a_plan(v: &Value) -> String {
    if let Some(tool) = called_tool(v) {
        return format!(
            "the file holds a call of {tool}, not of structs_plan_execute: there is no plan in it"
        );
    }
    match v {
        Value::Object(o) => {
            let keys: Vec<&str> = o.keys().map(String::as_str).take(6).collect();
            format!(
                "the file holds an object with {}, not a plan ({{\"steps\": [...]}}) or a \
                 recorded structs_plan_execute call",
                if keys.is_empty() {
                    "no fields".to_string()
                } else {
                    keys.join(", ")
                }
            )
        }
        other => format!(
            "the file holds {}, not a plan ({{\"steps\": [...]}})",
            template::describe(other)
        ),
    }
}

/// A plan's file could not be used: the problem standing for it.
pub fn file_problem(message: String) -> Problem {
    Problem {
        step: None,
        step_id: None,
        param: None,
        kind: "unreadable_file",
        message,
        available: None,
    }
}

/// The shipped workflows as plans with their example inputs, then the example plan.
pub fn shipped_plans() -> Vec<FoundPlan> {
    let mut out: Vec<FoundPlan> = crate::plan::workflow::catalog()
        .values()
        .filter_map(|w| {
            let inputs = w.example_inputs();
            let plan = w.plan_json(&inputs).ok()?;
            let shown: Vec<String> = inputs
                .iter()
                .map(|(k, v)| format!("{k} {}", serde_json::to_string(v).unwrap_or_default()))
                .collect();
            let mut f = found(w.name.clone(), &plan);
            if !shown.is_empty() {
                f.label = format!("{} · {}", f.label, shown.join(", "));
            }
            Some(f)
        })
        .collect();
    if let Ok(plan) = serde_json::from_str::<Value>(EXAMPLE) {
        out.push(found(EXAMPLE_LABEL.into(), &plan));
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_plan_file_is_a_plan_a_recorded_call_or_a_request() {
        let plan = json!({"steps": [{"tool": "structs_query_block_height"}]});
        let as_text = plan.to_string();
        let found = plans_in(&as_text).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].plan, plan);
        for wrapped in [
            json!({"name": "structs_plan_execute", "arguments": plan}),
            json!({"tool": "structs_plan_execute", "arguments": plan}),
            json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                   "params": {"name": "structs_plan_execute", "arguments": plan}}),
        ] {
            let found = plans_in(&wrapped.to_string()).unwrap();
            assert_eq!(found[0].plan, plan, "{wrapped}");
        }
    }

    #[test]
    fn json_lines_list_every_plan_call() {
        let plan = json!({"steps": [{"tool": "structs_query_block_height"}]});
        let text = [
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}).to_string(),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                   "params": {"name": "structs_query_player", "arguments": {"player_id": "1-1"}}})
            .to_string(),
            String::new(),
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                   "params": {"name": "structs_plan_execute", "arguments": plan}})
            .to_string(),
            json!({"name": "structs_plan_validate", "arguments": plan}).to_string(),
        ]
        .join("\n");
        let found = plans_in(&text).unwrap();
        let labels: Vec<&str> = found.iter().map(|f| f.label.as_str()).collect();
        assert_eq!(labels, ["line 4 · 1 step", "line 5 · 1 step"]);
    }

    #[test]
    fn files_without_plans_say_what_they_hold() {
        let e = plans_in("{\"steps\": [").unwrap_err();
        assert!(e.starts_with("the file is not JSON"), "{e}");
        let e = plans_in(&json!({"name": "structs_query_player", "arguments": {}}).to_string())
            .unwrap_err();
        assert!(e.contains("structs_query_player"), "{e}");
        let e = plans_in("[1, 2]").unwrap_err();
        assert!(e.contains("2 items"), "{e}");
        let e = plans_in("{\"a\": 1}\n{\"name\": \"structs_list_players\"}\nnot json").unwrap_err();
        assert!(e.contains("in 3 lines"), "{e}");
        assert!(e.contains("structs_list_players"), "{e}");
        assert!(e.contains("line 3 is not JSON"), "{e}");
        let e = plans_in("").unwrap_err();
        assert!(e.contains("not JSON"), "{e}");
    }
}
