//! The foundation's figures, printed with their targets:
//!
//! - headless start to an answered `tools/list` (target < 300 ms);
//! - `structs_query_player` round trip over stdio on the demo world (target p50 < 1 ms);
//! - a 100,000-player world: generation time (< 5 s), resident memory (< 1 GB), and one
//!   frame of the Entities pane rendered on it (< 5 ms).
//!
//! Run with `cargo bench --bench foundation`. It spawns the release binary for the
//! stdio figures, so they include process start and the real transport.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::json;
use structs_console::source::sim::{BlockClock, SimSource, WorldConfig};
use structs_console::tui::App;
use structs_console::tui::theme::Theme;

fn proc_status_kb(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn verdict(ok: bool) -> &'static str {
    if ok { "PASS" } else { "FAIL" }
}

/// Draws 300 frames of `app` and prints their p50, p99 and max against the 5 ms target.
fn report_frames(label: &str, what: &str, app: &mut App, terminal: &mut Terminal<TestBackend>) {
    let mut frames = Vec::new();
    for _ in 0..300 {
        let t = Instant::now();
        terminal.draw(|f| app.render(f)).expect("draw");
        frames.push(t.elapsed());
    }
    frames.sort();
    let p99 = percentile(&frames, 0.99);
    println!(
        "  {label} {:>9.3} ms p50, {:.3} ms p99, {:.3} ms max ({what})   target < 5 ms   {}",
        ms(percentile(&frames, 0.5)),
        ms(p99),
        ms(*frames.last().unwrap()),
        verdict(p99 < Duration::from_millis(5))
    );
}

fn headless() -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_structs-console"));
    cmd.args(["--headless", "--paused", "--log-level", "warn"]);
    cmd
}

fn main() {
    println!("structs-console foundation benchmark\n");

    // 1. The large world, measured first so the resident-memory figure is the world's.
    let rss_before = proc_status_kb("VmRSS:").unwrap_or(0);
    let started = Instant::now();
    let config = WorldConfig::with_players(100_000);
    let source = SimSource::new(config, BlockClock::paused(config.genesis_height));
    let generated = started.elapsed();
    let rss_after = proc_status_kb("VmRSS:").unwrap_or(0);
    let hwm = proc_status_kb("VmHWM:").unwrap_or(0);
    let status = {
        use structs_console::source::GameSource;
        source.info()
    };
    println!("100,000-player world ({})", status.description);
    println!(
        "  generated in           {:>9.1} ms   target < 5000 ms   {}",
        ms(generated),
        verdict(generated < Duration::from_secs(5))
    );
    println!(
        "  resident memory        {:>9.1} MB   target < 1024 MB   {}   (process RSS; {:.1} MB before generation, peak {:.1} MB)",
        rss_after as f64 / 1024.0,
        verdict(rss_after < 1024 * 1024),
        rss_before as f64 / 1024.0,
        hwm as f64 / 1024.0
    );

    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let core = structs_console::assembly::build(Arc::new(source));
    let theme = Theme::load("dark").expect("built-in theme");
    let mut app = App::new(core, theme, runtime.handle().clone());
    app.settle();
    let mut terminal = Terminal::new(TestBackend::new(100, 30)).expect("test terminal");
    report_frames(
        "Entities pane frame   ",
        "100x30, 300 frames",
        &mut app,
        &mut terminal,
    );
    // The same with player 1-1 open and its planetId expanded (a fetched child).
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let key = |code| KeyEvent::new(code, KeyModifiers::NONE);
    app.handle_key(key(KeyCode::Enter));
    for _ in 0..6 {
        app.handle_key(key(KeyCode::Down));
    }
    app.handle_key(key(KeyCode::Right));
    app.settle();
    report_frames(
        "... with a tree open  ",
        "player 1-1, planetId expanded",
        &mut app,
        &mut terminal,
    );
    drop(app);

    // 2. Headless start to answered tools/list, a fresh process each time.
    let mut starts = Vec::new();
    runtime.block_on(async {
        for _ in 0..15 {
            let t = Instant::now();
            let client =
                ().serve(TokioChildProcess::new(headless()).expect("spawn"))
                    .await
                    .expect("initialize");
            let tools = client.list_all_tools().await.expect("tools/list");
            starts.push(t.elapsed());
            assert!(!tools.is_empty());
            client.cancel().await.ok();
        }
    });
    starts.sort();
    println!(
        "\nheadless start to answered tools/list (15 runs, process spawn + initialize + tools/list)"
    );
    println!(
        "  p50 {:.1} ms, min {:.1} ms, max {:.1} ms   target < 300 ms   {}",
        ms(percentile(&starts, 0.5)),
        ms(starts[0]),
        ms(*starts.last().unwrap()),
        verdict(percentile(&starts, 0.5) < Duration::from_millis(300))
    );

    // 3. Query round trips over stdio on the demo world.
    let mut trips = Vec::new();
    runtime.block_on(async {
        let client =
            ().serve(TokioChildProcess::new(headless()).expect("spawn"))
                .await
                .expect("initialize");
        let call = |i: usize| {
            let id = format!("1-{}", i % WorldConfig::DEMO_PLAYERS + 1);
            let args = json!({ "player_id": id }).as_object().cloned().unwrap();
            client
                .call_tool(CallToolRequestParams::new("structs_query_player").with_arguments(args))
        };
        for i in 0..200 {
            call(i).await.expect("warm-up call");
        }
        for i in 0..3000 {
            let t = Instant::now();
            let r = call(i).await.expect("call");
            trips.push(t.elapsed());
            assert_eq!(r.is_error, Some(false));
        }
        client.cancel().await.ok();
    });
    trips.sort();
    println!(
        "\nstructs_query_player round trip over stdio (demo world, 3000 calls after 200 warm-up)"
    );
    println!(
        "  p50 {:.3} ms, p90 {:.3} ms, p99 {:.3} ms   target p50 < 1 ms   {}",
        ms(percentile(&trips, 0.5)),
        ms(percentile(&trips, 0.9)),
        ms(percentile(&trips, 0.99)),
        verdict(percentile(&trips, 0.5) < Duration::from_millis(1))
    );
}
