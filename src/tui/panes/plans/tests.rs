//! Unit tests of the Plans tab: its state and transitions, and the pieces its drawing uses.

use serde_json::json;

use super::*;

#[test]
fn written_values_pick_out_their_references() {
    let spans = written_spans(&json!("player ${steps.p.data.id} of ${input.g}"));
    let refs: Vec<&str> = spans
        .iter()
        .filter(|(r, _)| *r == Role::Info)
        .map(|(_, t)| t.as_str())
        .collect();
    assert_eq!(refs, ["${steps.p.data.id}", "${input.g}"]);
    let text: String = spans.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(text, "\"player ${steps.p.data.id} of ${input.g}\"");
    assert_eq!(
        written_spans(&json!(5)),
        vec![(Role::Value, "5".to_string())]
    );
}

#[test]
fn wrapping_keeps_styles_and_widths() {
    let lines = wrap(
        &[(Role::Value, "abcdef".into()), (Role::Info, "ghij".into())],
        4,
    );
    let text: Vec<String> = lines
        .iter()
        .map(|l| l.iter().map(|(_, t)| t.as_str()).collect())
        .collect();
    assert_eq!(text, ["abcd", "efgh", "ij"]);
    assert_eq!(lines[1][1], (Role::Info, "gh".to_string()));
    let lines = wrap(&[(Role::Text, "has no field \"planet\"; its".into())], 16);
    let text: Vec<String> = lines
        .iter()
        .map(|l| l.iter().map(|(_, t)| t.as_str()).collect())
        .collect();
    assert_eq!(text, ["has no field", "\"planet\"; its"]);
}

#[test]
fn params_flatten_to_their_places() {
    let mut out = Vec::new();
    leaves(
        &json!({"a": 1, "f": {"owner": "x"}, "ids": ["p", "q"], "e": {}}),
        ParamPath::default(),
        &mut out,
    );
    let names: Vec<String> = out.iter().map(|(p, _)| p.to_string()).collect();
    assert_eq!(names, ["a", "f.owner", "ids[0]", "ids[1]", "e"]);
}

/// The example plan, stepped once, then started over.
#[test]
fn a_step_runs_and_a_restart_sets_every_step_pending() {
    use crate::plan::exec::Status;
    use crate::tui::tab::Tab;
    use crate::tui::testing::TestDesk;
    let mut desk = TestDesk::new(Tab::Plans);
    let mut pane = PlansPane::new(&*desk.ctx().dispatcher.tools());
    let statuses = |pane: &PlansPane| -> Vec<Status> {
        let o = pane.opened().expect("the example plan opens");
        o.run().steps.iter().map(|s| s.status).collect()
    };
    assert!(statuses(&pane).iter().all(|s| *s == Status::Pending));
    desk.press(&mut pane, Command::StepPlan);
    let after = statuses(&pane);
    assert_eq!(after[0], Status::Succeeded, "{:?}", desk.status());
    assert!(
        after[1..].iter().all(|s| *s == Status::Pending),
        "{after:?}"
    );
    desk.press(&mut pane, Command::RestartPlan);
    assert!(statuses(&pane).iter().all(|s| *s == Status::Pending));
}

#[test]
fn a_shipped_workflow_is_picked_and_opened() {
    use crate::tui::tab::Tab;
    use crate::tui::testing::TestDesk;
    let mut desk = TestDesk::new(Tab::Plans);
    let mut pane = PlansPane::new(&*desk.ctx().dispatcher.tools());
    desk.press(&mut pane, Command::OpenWorkflow);
    assert_eq!(pane.scope(), Scope::PlanPick);
    let second = pane.pick.as_ref().map(|p| p.plans.len()).unwrap_or(0);
    assert!(second > 1, "several workflows are shipped");
    desk.press(&mut pane, Command::Down);
    desk.press(&mut pane, Command::OpenPlanCall);
    assert!(pane.pick.is_none());
    assert_eq!(pane.scope(), Scope::Plans);
    let label = pane.opened().map(|o| o.label.clone()).unwrap_or_default();
    assert_ne!(
        label, EXAMPLE_LABEL,
        "the workflow replaced the example plan"
    );
}
