//! The Replay pane's own tests: a log moved through, run again, its trace copied.

use super::*;
use crate::tui::tab::Tab;
use crate::tui::testing::TestDesk;

/// The pane with `tests/data/older-shapes.jsonl` open and indexed.
fn opened(desk: &mut TestDesk) -> ReplayPane {
    let mut pane = ReplayPane::new();
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/older-shapes.jsonl");
    let replayer = desk.ctx().dispatcher.replayer();
    pane.open(&path, replayer).expect("the log opens");
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while pane.calls() < 11 && std::time::Instant::now() < until {
        pane.poll(&mut desk.ctx());
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    pane
}

#[test]
fn a_log_is_indexed_and_its_calls_are_moved_through() {
    let mut desk = TestDesk::new(Tab::Replay);
    let mut pane = opened(&mut desk);
    assert_eq!(pane.calls(), 11, "the log records 11 calls");
    assert_eq!(pane.scope(), Scope::Replay);
    desk.press(&mut pane, Command::Down);
    desk.press(&mut pane, Command::Down);
    assert_eq!(pane.cursor.selected, 2);
    desk.press(&mut pane, Command::Bottom);
    assert_eq!(pane.cursor.selected, 10);
    desk.press(&mut pane, Command::FocusNext);
    assert_eq!(pane.scope(), Scope::ReplayDetail);
    desk.press(&mut pane, Command::FocusPrev);
    assert_eq!(pane.scope(), Scope::Replay);
}

#[test]
fn a_call_run_again_gets_a_verdict() {
    let mut desk = TestDesk::new(Tab::Replay);
    let mut pane = opened(&mut desk);
    assert_eq!(pane.verdicts(), (0, 0));
    desk.press(&mut pane, Command::ReplayCall);
    pane.poll(&mut desk.ctx());
    assert_eq!(pane.verdicts().0, 1, "{:?}", desk.status());
}

#[test]
fn a_calls_trace_id_is_copied_from_its_line() {
    let dir = std::env::temp_dir().join(format!("replay-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("traced.jsonl");
    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    std::fs::write(
        &path,
        format!(
            "{}\n{}\n{}\n",
            format_args!(r#"{{"v":2,"ts":"2026-12-01T21:07:10.487210Z","session":"s","seq":1,"type":"request","call":1,"tool":"structs_query_player","arguments":{{"player_id":"1-1"}},"trace_id":"{trace}","span_id":"00f067aa0ba902b7"}}"#),
            r#"{"v":2,"ts":"2026-12-01T21:07:10.487486Z","session":"s","seq":2,"type":"response","call":1,"tool":"structs_query_player","duration_ms":0.2,"result":{}}"#,
            r#"{"v":2,"ts":"2026-12-01T21:07:10.488666Z","session":"s","seq":3,"type":"request","call":2,"tool":"structs_query_struct","arguments":{"struct_id":"5-1"}}"#,
        ),
    )
    .unwrap();
    let mut desk = TestDesk::new(Tab::Replay);
    let kept = crate::tui::testing::KeptClipboard::default();
    let mut pane = ReplayPane::new().with_clipboard(Box::new(kept.clone()));
    let replayer = desk.ctx().dispatcher.replayer();
    pane.open(&path, replayer).expect("the log opens");
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while pane.calls() < 2 && std::time::Instant::now() < until {
        pane.poll(&mut desk.ctx());
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    desk.press(&mut pane, Command::Top);
    desk.press(&mut pane, Command::CopyTraceId);
    assert_eq!(kept.copied(), [trace]);
    desk.press(&mut pane, Command::Down);
    assert!(!pane.commands().contains(&Command::CopyTraceId));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_prompt_for_another_log_starts_empty() {
    let mut desk = TestDesk::new(Tab::Replay);
    let mut pane = ReplayPane::new();
    desk.press(&mut pane, Command::OpenLog);
    assert_eq!(pane.prompt.as_deref(), Some(""));
    assert_eq!(pane.scope(), Scope::ReplayPrompt);
}
