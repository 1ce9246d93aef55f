//! Opening a session log of 100,000 calls in the console's Replay pane:
//!
//! - the time from `open_log` to the first screen drawn with calls on it (target:
//!   under 300 ms),
//! - the time to index the whole log,
//! - the process's memory: resident before opening, after, and its peak (target: under
//!   100 MB),
//! - then the last call selected and drawn (its lines read back from the file).
//!
//! The log is written first, streaming: each response carries a real answer of the
//! demo world (a player with its references, a list page, a planet), about 1-4 KB, as
//! an agent's session would.
//!
//! Run with `cargo bench --bench replay`.

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::{Value, json};
use structs_console::source::sim::{BlockClock, SimSource, WorldConfig};
use structs_console::tui::{App, Theme};

const CALLS: u64 = 100_000;

/// A figure from /proc/self/status, in MB.
fn status_mb(key: &str) -> f64 {
    let text = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    text.lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn draw(app: &mut App, terminal: &mut Terminal<TestBackend>) -> String {
    terminal.draw(|f| app.render(f)).unwrap();
    terminal.backend().to_string()
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let config = WorldConfig::demo();
    let core = runtime.block_on(async {
        structs_console::assembly::build(Arc::new(SimSource::new(
            config,
            BlockClock::paused(config.genesis_height),
        )))
    });

    // Real answers to cycle through.
    let calls: Vec<(&str, Value)> = vec![
        ("structs_query_player", json!({"player_id": "1-1"})),
        ("structs_list_players", json!({"page_size": 5})),
        ("structs_query_planet", json!({"planet_id": "2-3"})),
        ("structs_query_player", json!({"player_id": "1-4"})),
    ];
    let answers: Vec<Value> = calls
        .iter()
        .map(|(tool, args)| {
            runtime
                .block_on(core.call_json(tool, args.clone()))
                .unwrap_or_else(|e| e)
        })
        .collect();

    let dir = std::env::temp_dir().join(format!("structs-bench-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("session.jsonl");
    let written = Instant::now();
    {
        let mut out =
            std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&path).unwrap());
        for n in 1..=CALLS {
            let k = (n % calls.len() as u64) as usize;
            let (tool, args) = &calls[k];
            let ts = format!(
                "2026-11-21T10:{:02}:{:02}.{:06}Z",
                n / 60_000 % 60,
                n / 1000 % 60,
                n % 1000 * 1000
            );
            let session = format!("s-bench-{}", n % 3);
            let req = json!({"v": 1, "ts": ts, "session": session, "seq": 2 * n - 1, "type": "request",
                "call": n, "tool": tool, "arguments": args, "source": "sim", "block_height": 120000});
            writeln!(out, "{req}").unwrap();
            let resp = json!({"v": 1, "ts": ts, "session": session, "seq": 2 * n, "type": "response",
                "call": n, "tool": tool, "duration_ms": 0.8, "result": answers[k],
                "source": "sim", "block_height": 120000});
            writeln!(out, "{resp}").unwrap();
        }
    }
    let bytes = std::fs::metadata(&path).unwrap().len();
    println!(
        "Opening a session log of {CALLS} calls ({:.0} MB, {} lines) in the Replay pane; written in {:.1} s",
        bytes as f64 / 1e6,
        2 * CALLS,
        written.elapsed().as_secs_f64()
    );

    let mut app = App::new(core.clone(), Theme::default(), runtime.handle().clone());
    app.settle();
    let mut terminal = Terminal::new(TestBackend::new(160, 48)).unwrap();
    draw(&mut app, &mut terminal);
    let before = status_mb("VmRSS:");

    // Open, then draw until the first screen has calls on it.
    let started = Instant::now();
    app.open_log(&path).unwrap();
    let first = loop {
        let frame = draw(&mut app, &mut terminal);
        // The first row: call 1 at 0.000 s.
        if frame.contains("    0.000 list_players") {
            break started.elapsed();
        }
        if started.elapsed() > Duration::from_secs(30) {
            panic!("no first screen after 30 s:\n{frame}");
        }
    };
    let frame = draw(&mut app, &mut terminal);
    let shown_calls = frame
        .lines()
        .filter(|l| l.contains("query_p") || l.contains("list_players"))
        .count();
    app.settle_log();
    let indexed = started.elapsed();
    let frame = draw(&mut app, &mut terminal);
    assert!(frame.contains("100,000 calls"), "{frame}");
    let after = status_mb("VmRSS:");
    let peak = status_mb("VmHWM:");

    // The last call, read back from the end of the file.
    let t = Instant::now();
    app.handle_key(KeyEvent::new(KeyCode::End, KeyModifiers::NONE));
    let frame = draw(&mut app, &mut terminal);
    let last = t.elapsed();
    assert!(frame.contains("call 100000"), "{frame}");

    // The timeline (`v`): its first frame builds the bars from the index; then frames
    // draw them, the whole log in view and zoomed in.
    let t = Instant::now();
    app.handle_key(KeyEvent::new(KeyCode::Char('v'), KeyModifiers::NONE));
    let frame = draw(&mut app, &mut terminal);
    let built = t.elapsed();
    assert!(frame.contains("Timeline · 100000 calls"), "{frame}");
    let mut frames = Vec::new();
    for k in 0..60 {
        if k == 30 {
            for _ in 0..6 {
                app.handle_key(KeyEvent::new(KeyCode::Char('+'), KeyModifiers::NONE));
            }
        }
        let t = Instant::now();
        draw(&mut app, &mut terminal);
        frames.push(t.elapsed());
    }
    frames.sort();
    let (median, worst) = (frames[frames.len() / 2], frames[frames.len() - 1]);

    println!(
        "  first screen ({shown_calls} calls drawn)   {:>8.1} ms   target < 300 ms   {}",
        first.as_secs_f64() * 1e3,
        if first < Duration::from_millis(300) {
            "PASS"
        } else {
            "FAIL"
        }
    );
    println!(
        "  whole log indexed           {:>8.1} ms",
        indexed.as_secs_f64() * 1e3
    );
    println!(
        "  last call selected, drawn   {:>8.1} ms",
        last.as_secs_f64() * 1e3
    );
    println!(
        "  timeline: first frame (bars built) {:.1} ms; a frame of 100,000 calls, median {:.2} ms, worst {:.2} ms of 60 (whole log, then zoomed in 64 times)   target < 16 ms   {}",
        built.as_secs_f64() * 1e3,
        median.as_secs_f64() * 1e3,
        worst.as_secs_f64() * 1e3,
        if worst < Duration::from_millis(16) {
            "PASS"
        } else {
            "FAIL"
        }
    );
    println!(
        "  memory: {before:.1} MB resident before opening, {after:.1} MB after indexing (+{:.1} MB), peak {peak:.1} MB   target < 100 MB   {}",
        after - before,
        if peak < 100.0 { "PASS" } else { "FAIL" }
    );
    let _ = std::fs::remove_dir_all(&dir);
}
