//! The live feed and the Live tab keeping up with a busy agent.
//!
//! - Fold: how many calls a second the Live tab's model takes in (a request and a
//!   response line each, answers of about 700 bytes, as `structs_query_player` gives).
//! - Frame: the time to draw the Live tab at 100x30 with 10,000 calls kept.
//! - Feed: a control endpoint publishing calls at a set rate for 3 s to a watcher that
//!   folds them as the tab does; for each rate, the calls the watcher saw and the lines
//!   it was told it missed. Past what the watcher keeps up with, the proxy never waits:
//!   the watcher is sent `{"type":"lagged","missed":N}` instead of the oldest lines.
//!
//! Goal: at least 2,000 calls a second with nothing missed.
//!
//! Run with `cargo bench --bench live`.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;
use structs_console::mcp::control;
use structs_console::record::live::{Fed, Live};
use structs_console::record::{Feed, Recorder};
use structs_console::source::SourceInfo;

fn info() -> SourceInfo {
    SourceInfo {
        name: "proxy",
        description: String::new(),
        block_height: 0,
        paused: false,
    }
}

/// An answer of about 700 bytes.
fn answer(i: u64) -> serde_json::Value {
    json!({"player": {"Player": {"id": format!("1-{i}"), "index": i.to_string(),
        "guildId": "0-1", "substationId": "4-1",
        "creator": "structs1gzlyn2gk5ztpvg962c34k4s4mrfxm8pcpkhd8z",
        "primaryAddress": "structs1gzlyn2gk5ztpvg962c34k4s4mrfxm8pcpkhd8z",
        "planetId": "2-1", "fleetId": "9-1", "guildRank": "1", "name": "novaforge1",
        "pfp": "", "pfpClientRenderAttributes": ""},
        "gridAttributes": {"ore": "1200", "load": "35", "capacity": "100",
            "structsLoad": "35", "lastAction": "119970", "nonce": "4", "ready": "1"},
        "playerInventory": {"rocks": {"denom": "ualpha", "amount": "4000000"}}},
        "references": {"entities": []}})
}

/// The lines of `calls` calls, as a proxy writes them.
fn lines(calls: u64) -> Vec<Vec<u8>> {
    let feed = Feed::new();
    let mut out = Vec::new();
    let r = Recorder::to(None, Some(feed.clone())).unwrap();
    let mut rx = feed.watch().1;
    for i in 0..calls {
        let call = r.request(
            "structs_query_player",
            &json!({"player_id": format!("1-{i}")}),
            &info(),
        );
        r.response(
            call,
            "structs_query_player",
            Ok(&answer(i)),
            Duration::from_micros(900),
            &info(),
        );
        while let Ok(line) = rx.try_recv() {
            out.push(line.to_vec());
        }
    }
    out
}

fn main() {
    // Fold.
    let all = lines(50_000);
    let bytes: usize = all.iter().map(Vec::len).sum();
    let mut live = Live::new();
    let t = Instant::now();
    for line in &all {
        live.line(line);
    }
    let fold = t.elapsed();
    let fold_rate = 50_000.0 / fold.as_secs_f64();
    println!(
        "fold: 50,000 calls ({:.1} MB of lines) in {:.0} ms: {:.0} calls/s",
        bytes as f64 / 1e6,
        fold.as_secs_f64() * 1e3,
        fold_rate
    );

    // Frame, with 10,000 calls kept (the model keeps the newest 10,000).
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let core =
        structs_console::assembly::build(Arc::new(structs_console::source::sim::SimSource::new(
            structs_console::source::sim::WorldConfig::demo(),
            structs_console::source::sim::BlockClock::paused(120_000),
        )));
    let mut app = structs_console::tui::App::new(
        core,
        structs_console::tui::Theme::default(),
        runtime.handle().clone(),
    );
    let text: Vec<String> = all[..20_000]
        .iter()
        .map(|l| String::from_utf8_lossy(l).into_owned())
        .collect();
    let refs: Vec<&str> = text.iter().map(String::as_str).collect();
    app.feed_live(&refs);
    let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
    let frames = 200;
    let t = Instant::now();
    for _ in 0..frames {
        terminal.draw(|f| app.render(f)).unwrap();
    }
    let frame = t.elapsed() / frames;
    println!(
        "frame: the Live tab at 100x30 with 10,000 calls: {:.2} ms",
        frame.as_secs_f64() * 1e3
    );
    // The console draws at most 10 frames a second while idle, more while busy; at 10
    // it has the rest of each second to fold.
    let busy = 10.0 * frame.as_secs_f64();
    println!(
        "the tab alone (10 frames/s, folding in the rest of the time, one core): {:.0} calls/s",
        (1.0 - busy).max(0.0) * fold_rate
    );

    // Feed: a real endpoint and a watcher reading its socket.
    let dir = std::env::temp_dir().join(format!("structs-bench-live-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for rate in [2_000u64, 5_000, 10_000, 20_000] {
        let socket = dir.join(format!("{rate}.sock"));
        let feed = Feed::new();
        let endpoint = {
            let _guard = runtime.enter();
            control::Endpoint::serve(&socket, feed.clone(), json!({"type": "hello"})).unwrap()
        };
        let (tx, rx) = std::sync::mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let reader = control::watch_socket(&socket, tx, stop.clone()).unwrap();
        // The watcher folds as the tab does, on its own thread.
        let folder = std::thread::spawn(move || {
            let mut live = Live::new();
            let mut answers = 0u64;
            let deadline = Instant::now() + Duration::from_secs(10);
            while let Ok(fed) = rx.recv_timeout(deadline.saturating_duration_since(Instant::now()))
            {
                match fed {
                    Fed::Line(l) => {
                        if l.windows(17).any(|w| w == b"\"type\":\"response\"") {
                            answers += 1;
                        }
                        live.line(&l);
                    }
                    Fed::Ended(_) => break,
                }
            }
            (answers, live.calls().len(), live.missed)
        });
        std::thread::sleep(Duration::from_millis(200));
        let r = Recorder::to(None, Some(feed.clone())).unwrap();
        let seconds = 3;
        let total = rate * seconds;
        let start = Instant::now();
        for i in 0..total {
            // Paced: call i goes at i / rate seconds.
            let due = Duration::from_secs_f64(i as f64 / rate as f64);
            if let Some(wait) = due.checked_sub(start.elapsed()) {
                std::thread::sleep(wait);
            }
            let call = r.request(
                "structs_query_player",
                &json!({"player_id": "1-1"}),
                &info(),
            );
            r.response(
                call,
                "structs_query_player",
                Ok(&answer(i)),
                Duration::from_micros(900),
                &info(),
            );
        }
        let published = start.elapsed();
        std::thread::sleep(Duration::from_millis(500));
        drop(endpoint);
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let _ = reader.join();
        let (answers, kept, missed) = folder.join().unwrap();
        println!(
            "feed at {rate} calls/s for {seconds} s (published in {:.2} s): the watcher saw {answers} of {total} answers ({kept} calls kept), {missed} lines missed",
            published.as_secs_f64(),
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
