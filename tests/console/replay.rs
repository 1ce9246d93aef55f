//! The Replay tab: session logs opened, stepped through, run again and compared, and
//! the console's own recording of the calls it makes.

use std::sync::Arc;

use crossterm::event::KeyCode;
use ratatui::style::Color;
use serde_json::json;
use structs_console::clock::WallClock;
use structs_console::tui::theme::Role;
use structs_console::tui::{App, Tab, Theme};

use crate::support::console::{draw, draw_buffer, press, press_n, runtime, type_text, wall};
use crate::{console, hint_bar, sim, snapshot};

#[test]
fn replay_without_a_log_says_how_to_open_one() {
    let (_rt, mut app) = console();
    press(&mut app, KeyCode::Char('6'));
    assert_eq!(app.tab(), Tab::Replay);
    snapshot(
        "replay_empty_100x30",
        "The Replay tab with no session log open: how to record and open one",
        &mut app,
        100,
        30,
    );
    // Nothing to run: no panic, nothing sent.
    let sent = app.requests_sent();
    press(&mut app, KeyCode::Char('r'));
    assert_eq!(app.requests_sent(), sent);
    press(&mut app, KeyCode::Char('1'));
    assert_eq!(app.tab(), Tab::Entities);
}

/// A session log written as the recorder writes it, with fixed times and session ids:
/// each call's recorded answer is what the demo world gives, except `tamper`ed ones.
fn write_log(
    path: &std::path::Path,
    calls: &[(&str, serde_json::Value)],
    tamper: impl Fn(usize, &mut serde_json::Value),
) {
    use std::io::Write;
    let runtime = runtime();
    let core =
        structs_console::assembly::build_with_clock(Arc::new(sim()), WallClock::Fixed(wall()));
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).expect("log"));
    let mut seq = 0;
    for (i, (tool, args)) in calls.iter().enumerate() {
        let n = i as u64 + 1;
        let ts = format!("2026-11-21T10:00:{:02}.{:03}000Z", n / 2, (n * 137) % 1000);
        seq += 1;
        let v = structs_console::record::VERSION;
        let request = json!({"v": v, "ts": ts, "session": "s-test-1", "seq": seq,
            "type": "request", "call": n, "tool": tool, "arguments": args,
            "source": "sim", "block_height": 120000});
        writeln!(out, "{request}").unwrap();
        let mut answer = runtime.block_on(core.call_json(tool, args.clone()));
        match &mut answer {
            Ok(v) | Err(v) => tamper(i, v),
        }
        seq += 1;
        let mut response = json!({"v": v, "ts": ts, "session": "s-test-1", "seq": seq,
            "type": "response", "call": n, "tool": tool, "duration_ms": 1.25 * n as f64,
            "source": "sim", "block_height": 120000});
        match answer {
            Ok(v) => response["result"] = v,
            Err(e) => response["error"] = e,
        }
        writeln!(out, "{response}").unwrap();
    }
}

/// A log recorded before the chain's own shapes were followed runs again the same, and
/// the call shown says which change of shape it was read through.
#[test]
fn an_older_log_runs_again_the_same_through_its_change_of_shape() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/older-shapes.jsonl");
    let (_rt, mut app) = console();
    app.open_log(&path).expect("open the log");
    app.settle_log();
    press(&mut app, KeyCode::Char('a'));
    assert_eq!(app.replay_verdicts(), (11, 0));
    let frame = draw(&mut app, 120, 36);
    assert!(
        frame.contains("the same answer, recorded in older chain shapes"),
        "{frame}"
    );
    assert!(frame.contains("Player.username is Player.name"), "{frame}");
}

/// The Replay pane: the calls of a log with their timing; the selected call's
/// recorded answer; every call run again with the differing one found by `n` and shown
/// side by side with its changed paths; one call run again by itself; a plan call
/// opened in the Plans pane.
#[test]
fn replay_steps_through_a_log_runs_it_again_and_shows_the_differences() {
    // A file name the snapshots can show: the process id goes in the folder.
    let dir = std::env::temp_dir().join(format!("structs-replay-pane-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("session.jsonl");
    let plan = json!({"steps": [
        {"id": "players", "tool": "structs_list_players", "params": {"page_size": 2}},
        {"id": "first", "tool": "structs_query_player",
         "params": {"player_id": "${steps.players.data.players[0].Player.id}"}}
    ]});
    write_log(
        &path,
        &[
            (
                "structs_query_player",
                json!({"player_id": "1-1", "include_references": false}),
            ),
            ("structs_list_players", json!({"page_size": 2})),
            ("structs_query_player", json!({"player_id": "2-1"})),
            (
                "structs_query_planet",
                json!({"planet_id": "2-1", "include_references": false}),
            ),
            ("structs_plan_execute", plan.clone()),
        ],
        |i, v| {
            // The recording of call 4 says the planet had other ore than it has now.
            if i == 3 {
                v["planet"]["Planet"]["maxOre"] = json!("1");
                v["planet"]["gone"] = json!(true);
            }
        },
    );
    let (_rt, mut app) = console();
    app.open_log(&path).expect("open the log");
    app.settle_log();
    assert_eq!(app.tab(), Tab::Replay);
    snapshot(
        "replay_log_120x36",
        "A five-call session log in Replay: the calls with their time and duration, the first call's recorded answer",
        &mut app,
        120,
        36,
    );
    assert!(
        hint_bar(&mut app).contains("run again"),
        "{}",
        hint_bar(&mut app)
    );

    // Every call again: four give the recorded answer, the tampered one does not.
    press(&mut app, KeyCode::Char('a'));
    assert_eq!(app.replay_verdicts(), (5, 1));
    assert!(
        app.status_text().unwrap_or_default().contains("1 differ"),
        "{:?}",
        app.status_text()
    );
    press(&mut app, KeyCode::Char('n'));
    let frame = draw(&mut app, 120, 36);
    assert!(frame.contains("call 4 · structs_query_planet"), "{frame}");
    assert!(frame.contains("~ /planet/Planet/maxOre"), "{frame}");
    assert!(frame.contains("- /planet/gone"), "{frame}");
    snapshot(
        "replay_diff_120x36",
        "Call 4 run again: its changed and removed paths, the recorded and fresh answers side by side",
        &mut app,
        120,
        36,
    );
    // The changed line is drawn in the change's colour on both sides.
    let buffer = draw_buffer(&mut app, 120, 36);
    let theme = Theme::default();
    let changed_colour = theme.style(Role::Prompt).fg;
    let rows_with = |needle: &str| -> Vec<u16> {
        (0..36)
            .filter(|y| {
                let line: String = (0..120).map(|x| buffer[(x, *y)].symbol()).collect();
                line.contains(needle)
            })
            .collect()
    };
    let ore_rows = rows_with("\"maxOre\"");
    assert!(!ore_rows.is_empty(), "the maxOre lines are on show");
    let y = ore_rows[0];
    let coloured = (0..120)
        .filter(|x| buffer[(*x, y)].fg == changed_colour.unwrap_or(Color::Reset))
        .count();
    assert!(
        coloured > 10,
        "maxOre drawn in the changed colour on both sides"
    );
    // The answers scroll within themselves: past their end the keys stop, so one Up
    // comes back at once.
    press(&mut app, KeyCode::Tab);
    press_n(&mut app, KeyCode::Down, 500);
    let end = draw(&mut app, 120, 36);
    press(&mut app, KeyCode::Up);
    assert_ne!(
        draw(&mut app, 120, 36),
        end,
        "one Up scrolls back from the end"
    );
    press(&mut app, KeyCode::PageUp);
    press(&mut app, KeyCode::PageUp);
    press(&mut app, KeyCode::BackTab);

    // One call by itself: the first one, the same as recorded.
    press(&mut app, KeyCode::Home);
    press(&mut app, KeyCode::Char('r'));
    assert_eq!(
        app.status_text(),
        Some("call 1: the same answer as recorded")
    );

    // The plan call opens in the Plans pane: `o` goes to it, `o` again opens it.
    press(&mut app, KeyCode::Char('o'));
    assert_eq!(app.tab(), Tab::Replay);
    press(&mut app, KeyCode::Char('o'));
    assert_eq!(app.tab(), Tab::Plans);
    let report = app.plan_report().expect("the plan is open");
    assert_eq!(report["steps"].as_array().map(Vec::len), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A call whose answer a fault or a breakpoint gave is not run again, in the tab as in
/// `replay --check`: both say why, and neither counts it as a difference.
#[test]
fn an_injected_answer_is_not_run_again_here_or_by_the_check() {
    use std::io::Write;
    let dir = std::env::temp_dir().join(format!("structs-replay-injected-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("injected.jsonl");
    write_log(
        &path,
        &[("structs_query_player", json!({"player_id": "1-1"}))],
        |_, _| {},
    );
    // Call 2 timed out for the agent: the proxy answered it from a fault rule.
    let mut log = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    let request = json!({"v": 1, "ts": "2026-11-21T10:00:05.000000Z", "session": "s-test-1",
        "seq": 3, "type": "request", "call": 2, "tool": "structs_query_player",
        "arguments": {"player_id": "1-2"}, "source": "proxy"});
    let response = json!({"v": 1, "ts": "2026-11-21T10:00:06.000000Z", "session": "s-test-1",
        "seq": 4, "type": "response", "call": 2, "tool": "structs_query_player",
        "duration_ms": 600.0, "source": "proxy", "injected": "fault error TOOL_TIMEOUT",
        "error": {"error": {"code": "TOOL_TIMEOUT", "message": "injected"}}});
    writeln!(log, "{request}\n{response}").unwrap();
    drop(log);

    let (_rt, mut app) = console();
    app.open_log(&path).expect("open the log");
    app.settle_log();
    press(&mut app, KeyCode::Char('a'));
    assert_eq!(
        app.replay_verdicts(),
        (2, 0),
        "run or skipped, none differs"
    );
    press(&mut app, KeyCode::End);
    let frame = draw(&mut app, 120, 36);
    let text: String = frame
        .lines()
        .map(|l| l.split('│').nth(3).unwrap_or_default().trim())
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        text.contains("not run again: the agent got an injected answer (fault error TOOL_TIMEOUT), not the server's"),
        "wrapped whole in the detail pane: {frame}"
    );
    assert!(frame.contains("skip"), "the list marks it: {frame}");
    assert!(frame.contains("1 skipped"), "the footer counts it: {frame}");
    assert!(frame.contains("recorded (what the agent got)"), "{frame}");
    assert!(
        !frame.contains("block 0"),
        "a tap's log states no height: {frame}"
    );
    press(&mut app, KeyCode::Char('r'));
    let status = app.status_text().unwrap_or_default().to_string();
    assert!(status.starts_with("call 2: not run again: "), "{status}");

    // The check skips the same call, for the same reason.
    let rt = runtime();
    let core =
        structs_console::assembly::build_with_clock(Arc::new(sim()), WallClock::Fixed(wall()));
    let report = rt
        .block_on(structs_console::record::replay::check(
            &core,
            &path,
            &structs_console::record::diff::Ignore::default(),
        ))
        .unwrap();
    assert_eq!(report.calls, 1);
    assert!(report.passed(), "{report:?}");
    assert_eq!(
        report.injected,
        [(
            "structs_query_player".to_string(),
            "fault error TOOL_TIMEOUT".to_string()
        )]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A log of 100,000 calls: its first calls show while it is read, the count once it
/// is, and the last call's arguments are read back from the file when it is selected.
#[test]
fn a_log_of_100_000_calls_opens_without_reading_it_whole() {
    use std::io::Write;
    let dir = std::env::temp_dir().join(format!("structs-replay-100k-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("big.jsonl");
    {
        let mut out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        for n in 1..=100_000u64 {
            writeln!(out, r#"{{"v":1,"ts":"2026-11-21T10:00:00Z","session":"s-big","seq":{},"type":"request","call":{n},"tool":"structs_query_player","arguments":{{"player_id":"1-{}","n":{n}}}}}"#, 2 * n - 1, n % 50 + 1).unwrap();
            writeln!(out, r#"{{"v":1,"ts":"2026-11-21T10:00:00Z","session":"s-big","seq":{},"type":"response","call":{n},"tool":"structs_query_player","duration_ms":0.5,"result":{{"player":{{"Player":{{"id":"1-{}"}}}}}}}}"#, 2 * n, n % 50 + 1).unwrap();
        }
    }
    let (_rt, mut app) = console();
    app.open_log(&path).expect("open");
    let frame = draw(&mut app, 120, 30);
    assert!(frame.contains("big.jsonl"), "{frame}");
    app.settle_log();
    let frame = draw(&mut app, 120, 30);
    assert!(frame.contains("100,000 calls"), "{frame}");
    assert!(frame.contains(r#""n":1}"#), "{frame}");
    press(&mut app, KeyCode::End);
    let frame = draw(&mut app, 120, 30);
    assert!(
        frame.contains("call 100000 · structs_query_player"),
        "{frame}"
    );
    assert!(frame.contains(r#""n":100000"#), "{frame}");
    assert!(frame.contains("100,000"), "{frame}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A log opens from inside the Replay tab: `f`, its path, Enter. A path that is not a
/// log is said on the status line.
#[test]
fn the_replay_tab_opens_a_log_from_inside() {
    let dir = std::env::temp_dir().join(format!("structs-replay-open-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("inside.jsonl");
    write_log(
        &path,
        &[("structs_query_player", json!({"player_id": "1-1"}))],
        |_, _| {},
    );
    let (_rt, mut app) = console();
    press(&mut app, KeyCode::Char('6'));
    let frame = draw(&mut app, 100, 30);
    assert!(frame.contains("press f here"), "{frame}");
    press(&mut app, KeyCode::Char('f'));
    // While the prompt is open, letters type: the hint bar offers no tab or quit key.
    let frame = draw(&mut app, 100, 30);
    let bar = frame
        .lines()
        .rev()
        .find(|l| l.contains("Enter"))
        .unwrap_or_default();
    assert!(
        bar.contains("Enter  open") && bar.contains("Esc  close"),
        "{bar}"
    );
    assert!(!bar.contains("q  quit") && !bar.contains("1-7"), "{bar}");
    type_text(&mut app, &dir.join("missing.jsonl").to_string_lossy());
    press(&mut app, KeyCode::Enter);
    let status = app.status_text().unwrap_or_default().to_string();
    assert!(status.contains("cannot open the session log"), "{status}");
    press(&mut app, KeyCode::Char('f'));
    type_text(&mut app, &path.to_string_lossy());
    press(&mut app, KeyCode::Enter);
    app.settle_log();
    let frame = draw(&mut app, 120, 30);
    assert!(frame.contains("structs_query_player"), "{frame}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_console_records_the_calls_it_makes_and_replays_them_the_same() {
    let path =
        std::env::temp_dir().join(format!("structs-console-rec-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let recorder = Arc::new(structs_console::record::Recorder::open(&path).expect("log"));
    let runtime = runtime();
    let core =
        structs_console::assembly::build_with_clock(Arc::new(sim()), WallClock::Fixed(wall()));
    let mut app = App::recording(core, Theme::default(), runtime.handle().clone(), recorder);
    app.settle(); // the first page, recorded too
    press(&mut app, KeyCode::Char('n')); // the next page
    press(&mut app, KeyCode::Enter); // open the selected player, with its references
    let mut tools = Vec::new();
    for item in structs_console::record::LogReader::open(&path).expect("log") {
        let e = item.expect("readable").expect("an entry");
        tools.push((format!("{:?}", e.kind), e.tool.unwrap_or_default()));
    }
    assert!(tools.len() >= 6 && tools.len() % 2 == 0, "{tools:?}");
    // Both pages are in it: the first, asked for as the console opened, and the next.
    let list = ("Request".to_string(), "structs_list_entities".to_string());
    assert_eq!(tools[0], list, "{tools:?}");
    assert_eq!(tools.iter().filter(|t| **t == list).count(), 2, "{tools:?}");
    assert!(
        tools.contains(&("Response".into(), "structs_query_entity".into())),
        "{tools:?}"
    );

    // The log the console wrote opens in a console's Replay tab, and every call in it,
    // run again on the same world, gives the answer it was recorded with.
    let calls = tools.len() / 2;
    let (_rt, mut replay) = console();
    replay.open_log(&path).expect("open the console's own log");
    replay.settle_log();
    assert_eq!(replay.tab(), Tab::Replay);
    let frame = draw(&mut replay, 120, 36);
    assert!(
        frame.contains(&format!("{calls} calls")) && frame.contains("query_entity"),
        "{frame}"
    );
    press(&mut replay, KeyCode::Char('a'));
    assert_eq!(replay.replay_verdicts(), (calls, 0), "{tools:?}");
    let _ = std::fs::remove_file(&path);
}

#[test]
fn the_timeline_draws_calls_in_lanes_with_rounds_errors_and_injected_answers() {
    let dir = std::env::temp_dir().join(format!("structs-replay-timeline-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("timeline.jsonl");
    // Five calls over two seconds: 1 and 2 at once, 3 with a round of input, 4 failed,
    // 5 answered by a breakpoint rule.
    let line = |ts: &str, kind: &str, call: u64, tool: &str, rest: &str| {
        format!(
            r#"{{"v":5,"ts":"2026-12-01T10:00:{ts}Z","session":"s","type":"{kind}","call":{call},"tool":"{tool}"{rest}}}"#
        )
    };
    let lines = [
        line(
            "00.000",
            "request",
            1,
            "structs_query_player",
            r#","arguments":{"player_id":"1-1"}"#,
        ),
        line(
            "00.200",
            "request",
            2,
            "structs_query_planet",
            r#","arguments":{"planet_id":"2-1"}"#,
        ),
        line(
            "00.600",
            "response",
            1,
            "structs_query_player",
            r#","duration_ms":600,"result":{}"#,
        ),
        line(
            "00.700",
            "response",
            2,
            "structs_query_planet",
            r#","duration_ms":500,"result":{}"#,
        ),
        line(
            "00.800",
            "request",
            3,
            "structs_action_attack",
            r#","arguments":{"target":"5-2"}"#,
        ),
        line(
            "01.000",
            "round",
            3,
            "structs_action_attack",
            r#","round":1,"input_requests":{},"input_responses":{}"#,
        ),
        line(
            "01.300",
            "response",
            3,
            "structs_action_attack",
            r#","duration_ms":500,"result":{}"#,
        ),
        line(
            "01.400",
            "request",
            4,
            "structs_query_player",
            r#","arguments":{"player_id":"1-999"}"#,
        ),
        line(
            "01.500",
            "response",
            4,
            "structs_query_player",
            r#","duration_ms":100,"error":{"error":{"code":"RESOURCE_NOT_FOUND"}}"#,
        ),
        line(
            "01.600",
            "request",
            5,
            "structs_query_guild",
            r#","arguments":{"guild_id":"0-1"}"#,
        ),
        line(
            "02.000",
            "response",
            5,
            "structs_query_guild",
            r#","duration_ms":400,"injected":"breakpoint: answered","result":{}"#,
        ),
    ];
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let (_rt, mut app) = console();
    app.open_log(&path).expect("open the log");
    app.settle_log();
    press(&mut app, KeyCode::Char('v'));
    let frame = draw(&mut app, 120, 24);
    assert!(
        frame.contains("Timeline · 5 calls in 2 lanes · call 1"),
        "{frame}"
    );
    snapshot(
        "replay_timeline_120x24",
        "The Replay tab's timeline: five calls over two seconds, two at once in two lanes, a round of input marked on the attack, the failed query in the error colour, the breakpoint's answer hatched; the first call selected, its answer beside",
        &mut app,
        120,
        24,
    );
    // The next call is selected on the timeline and shown in the detail.
    press(&mut app, KeyCode::Down);
    let frame = draw(&mut app, 120, 24);
    assert!(frame.contains("call 2 · structs_query_planet"), "{frame}");
    // Zooming in around it halves the time in view; panning moves it.
    let axis = |frame: &str| {
        frame
            .lines()
            .find(|l| l.contains("┆0 ms"))
            .map(str::to_string)
    };
    assert!(axis(&frame).is_some(), "{frame}");
    press_n(&mut app, KeyCode::Char('+'), 3);
    let zoomed = draw(&mut app, 120, 24);
    assert!(
        !zoomed.contains("┆1.5 s"),
        "an eighth of the time: {zoomed}"
    );
    press_n(&mut app, KeyCode::Right, 8);
    let panned = draw(&mut app, 120, 24);
    assert_ne!(panned, zoomed);
    // `v` again: the list.
    press(&mut app, KeyCode::Char('v'));
    assert!(!draw(&mut app, 120, 24).contains("Timeline ·"));
}

/// A log of six calls, one second apart: queries of players, a planet (`planet`) and a
/// guild, one failed, one after a round of input.
fn six_calls(dir: &std::path::Path, name: &str, planet: &str) -> std::path::PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(name);
    let calls: [(&str, serde_json::Value, Option<&str>); 6] = [
        ("structs_query_player", json!({"player_id": "1-1"}), None),
        ("structs_query_planet", json!({"planet_id": planet}), None),
        (
            "structs_query_player",
            json!({"player_id": "1-999"}),
            Some("RESOURCE_NOT_FOUND"),
        ),
        ("structs_query_guild", json!({"guild_id": "0-1"}), None),
        ("structs_list_players", json!({"page_size": 5}), None),
        ("structs_query_player", json!({"player_id": "1-2"}), None),
    ];
    let mut lines = Vec::new();
    for (i, (tool, args, error)) in calls.iter().enumerate() {
        let call = i as u64 + 1;
        lines.push(
            json!({"v": 5, "ts": format!("2026-12-01T10:00:0{i}.000Z"), "session": "s",
            "type": "request", "call": call, "tool": tool, "arguments": args}),
        );
        let mut answer = json!({"v": 5, "ts": format!("2026-12-01T10:00:0{i}.300Z"),
            "session": "s", "type": "response", "call": call, "tool": tool,
            "duration_ms": 300});
        match error {
            Some(code) => answer["error"] = json!({"error": {"code": code}}),
            None => answer["result"] = json!({"id": call}),
        }
        lines.push(answer);
    }
    let text: Vec<String> = lines.iter().map(ToString::to_string).collect();
    std::fs::write(&path, text.join("\n") + "\n").unwrap();
    path
}

#[test]
fn the_filter_lists_the_calls_that_match_and_counts_them() {
    let dir = std::env::temp_dir().join(format!("structs-replay-filter-{}", std::process::id()));
    let path = six_calls(&dir, "six.jsonl", "2-1");
    let (_rt, mut app) = console();
    app.open_log(&path).expect("open the log");
    app.settle_log();
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, "tool:structs_query_player -status:error");
    app.settle_filter();
    let frame = draw(&mut app, 120, 24);
    assert!(frame.contains("2 of 6 match"), "{frame}");
    snapshot(
        "replay_filter_120x24",
        "The Replay tab filtered as diff and check filter: the two player queries that did not fail, the count on the prompt and in the title, the first of them selected",
        &mut app,
        120,
        24,
    );
    // Enter keeps it; Down moves to the next call that matches, call 6.
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Down);
    let frame = draw(&mut app, 120, 24);
    assert!(frame.contains("call 6 · structs_query_player"), "{frame}");
    assert!(!frame.contains("query_guild"), "{frame}");
    // The timeline draws the filter's calls alone, the selected one among them.
    press(&mut app, KeyCode::Char('v'));
    let frame = draw(&mut app, 120, 24);
    assert!(
        frame.contains("Timeline · 2 calls in 1 lane · filter tool:")
            && frame.contains("call 6 · structs_query_player"),
        "{frame}"
    );
    press(&mut app, KeyCode::Char('v'));
    // Words a log line holds (`text:`) are read again, then counted.
    press(&mut app, KeyCode::Char('/'));
    app.handle_key(crossterm::event::KeyEvent::new(
        KeyCode::Char('u'),
        crossterm::event::KeyModifiers::CONTROL,
    ));
    type_text(&mut app, "text:1-999");
    app.settle_filter();
    let frame = draw(&mut app, 120, 24);
    assert!(frame.contains("1 of 6 match"), "{frame}");
    // What does not read says why; Esc clears the filter.
    type_text(&mut app, " dur>x");
    let frame = draw(&mut app, 120, 24);
    assert!(frame.contains("dur"), "{frame}");
    press(&mut app, KeyCode::Esc);
    let frame = draw(&mut app, 120, 24);
    assert!(!frame.contains("match"), "{frame}");
    assert!(frame.contains("query_guild"), "{frame}");
}

#[test]
fn two_logs_side_by_side_are_aligned_as_diff_aligns_them() {
    let dir = std::env::temp_dir().join(format!("structs-replay-compare-{}", std::process::id()));
    let a = six_calls(&dir, "a.jsonl", "2-1");
    let b = six_calls(&dir, "b.jsonl", "2-999");
    let (_rt, mut app) = console();
    app.open_log(&a).expect("open the log");
    app.settle_log();
    // `d` asks for the other log, as `f` does.
    press(&mut app, KeyCode::Char('d'));
    let frame = draw(&mut app, 120, 24);
    assert!(frame.contains("compare with ›"), "{frame}");
    press(&mut app, KeyCode::Esc);
    app.compare_log(&b).expect("compare");
    app.settle_compare();
    let frame = draw(&mut app, 120, 24);
    assert!(
        frame.contains("5 same, 0 changed, 1 only in a.jsonl, 1 only in b.jsonl"),
        "{frame}"
    );
    // `n` goes to the first difference: the planet A asked for.
    press(&mut app, KeyCode::Char('n'));
    let frame = draw(&mut app, 120, 24);
    assert!(frame.contains("removed · the pair"), "{frame}");
    assert!(frame.contains(r#"{"planet_id":"2-1"}"#), "{frame}");
    snapshot(
        "replay_compare_120x24",
        "Two runs side by side in the Replay tab: five steps the same, the planet query of A removed and B's added in its place, the first of them selected with both sides' arguments and the totals under the pairs",
        &mut app,
        120,
        24,
    );
    press(&mut app, KeyCode::Char('n'));
    let frame = draw(&mut app, 120, 24);
    assert!(frame.contains("added · the pair"), "{frame}");
    assert!(frame.contains(r#"{"planet_id":"2-999"}"#), "{frame}");
    // `d` again: the log alone.
    press(&mut app, KeyCode::Char('d'));
    assert!(!draw(&mut app, 120, 24).contains("⟷"));
}

#[test]
fn the_comparison_hides_what_the_configs_redaction_rules_name() {
    let dir = std::env::temp_dir().join(format!("structs-replay-redact-{}", std::process::id()));
    let a = six_calls(&dir, "a.jsonl", "2-1");
    // A log written before the team's rule: its planet id is what the rule hides.
    let b = six_calls(&dir, "b.jsonl", "sk-live-AbCdEf123456");
    let rules =
        structs_console::record::Redaction::from_config(&structs_console::record::RedactConfig {
            defaults: true,
            keys: Vec::new(),
            values: vec!["sk-live-[0-9A-Za-z]{8,}".into()],
        })
        .unwrap();
    let (_rt, app) = console();
    let mut app = app.with_redaction(Arc::new(rules));
    app.open_log(&a).expect("open the log");
    app.settle_log();
    app.compare_log(&b).expect("compare");
    app.settle_compare();
    press_n(&mut app, KeyCode::Char('n'), 2);
    let frame = draw(&mut app, 120, 24);
    assert!(frame.contains("added · the pair"), "{frame}");
    assert!(
        frame.contains(r#"{"planet_id":"[redacted: 20 bytes]"}"#),
        "{frame}"
    );
    assert!(!frame.contains("sk-live"), "{frame}");
}
