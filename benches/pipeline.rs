//! The call pipeline's own cost: a fixed number of tool calls made on the core directly
//! (no transport), one at a time, cycling the calls of `benches/mcp_http.rs` (a player
//! query, a list page, a planet query) on the demo world. Prints calls per second and
//! microseconds per call, three times in one run: with tracing off (as by default),
//! on (each call a server span as the MCP server makes it, with its children, all
//! sampled and sent to a collector on loopback), and on with a collector nobody
//! answers at; each mode in a process of its own (tracing, once on, stays on), the three
//! in turn for `PIPELINE_ROUNDS` rounds (3), and the median of each given as a ratio of
//! off's. `PIPELINE_TRACING=off|on|unreachable` runs one pass alone (for callgrind).
//!
//! The work is fixed (`PIPELINE_CALLS`, default 30,000), so the figure can also be
//! taken as instructions, which do not move with the machine's load:
//!
//! ```sh
//! PIPELINE_CALLS=3000 PIPELINE_TRACING=off valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.out \
//!     target/release/deps/pipeline-*  # then divide the total by the calls
//! ```
//!
//! Run with `cargo bench --bench pipeline`.

use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};
use structs_console::source::sim::{BlockClock, SimSource, WorldConfig};

fn call_for(n: usize, players: usize) -> (&'static str, Value) {
    let i = (n * 104_729) % players + 1;
    match n % 3 {
        0 => (
            "structs_query_player",
            json!({"player_id": format!("1-{i}")}),
        ),
        1 => ("structs_list_players", json!({"page_size": 10})),
        _ => (
            "structs_query_planet",
            json!({"planet_id": format!("2-{i}")}),
        ),
    }
}

/// How a pass traces its calls.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Tracing {
    /// No exporter, as by default.
    Off,
    /// Every call a server span with its children, sampled (1.0) and sent to a
    /// collector on loopback that takes them.
    On,
    /// The same, to a port nothing listens on.
    Unreachable,
}

/// A collector that takes every export and answers 200 at once, on a thread of its
/// own: what a call costs is the process's side of the export.
fn sink() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let url = format!("http://{}", listener.local_addr().expect("an address"));
    std::thread::spawn(move || {
        use std::io::{BufRead, BufReader, Read, Write};
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream);
                loop {
                    let mut length = 0usize;
                    let mut line = String::new();
                    loop {
                        line.clear();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        let lower = line.to_ascii_lowercase();
                        if let Some(v) = lower.strip_prefix("content-length:") {
                            length = v.trim().parse().unwrap_or(0);
                        }
                        if line == "\r\n" {
                            break;
                        }
                    }
                    let mut body = vec![0; length];
                    if reader.read_exact(&mut body).is_err() {
                        return;
                    }
                    let answer = "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
                    if reader.get_mut().write_all(answer.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    url
}

/// A URL where nothing listens.
fn nowhere() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    format!("http://{}", listener.local_addr().expect("an address"))
}

/// One pass of `calls` calls, each inside a server span when tracing is on (as the MCP
/// server makes them); returns the time taken and the errors.
fn pass(calls: usize, mode: Tracing) -> (std::time::Duration, usize) {
    use structs_console::mcp::wire::span::{Operation, Outcome, Request, Side, Transport};
    use tracing::Instrument as _;
    let config = WorldConfig::with_players(WorldConfig::DEMO_PLAYERS);
    let players = WorldConfig::DEMO_PLAYERS;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let core = rt.block_on(async {
        structs_console::assembly::build(Arc::new(SimSource::new(
            config,
            BlockClock::paused(config.genesis_height),
        )))
    });
    rt.block_on(async {
        // One warm-up pass of each call, so first-use work is not counted.
        for n in 0..3 {
            let (tool, args) = call_for(n, players);
            core.call(tool, args).await.expect("a warm-up call");
        }
        let start = Instant::now();
        let mut errors = 0;
        for n in 0..calls {
            let (tool, args) = call_for(n, players);
            let request = Request {
                method: "tools/call",
                tool: Some(tool),
                protocol: Some("2025-11-25"),
                ..Request::default()
            };
            let op = Operation::start(Side::Server, &request, Transport::Pipe, None);
            let answer = match &op {
                Some(op) => core.call(tool, args).instrument(op.span().clone()).await,
                None => core.call(tool, args).await,
            };
            if let Some(op) = op {
                op.end(if answer.is_ok() {
                    Outcome::Ok
                } else {
                    Outcome::ToolError
                });
            }
            if answer.is_err() {
                errors += 1;
            }
        }
        assert_eq!(
            mode == Tracing::Off,
            !structs_console::context::trace::on(),
            "tracing is {mode:?}"
        );
        (start.elapsed(), errors)
    })
}

/// A pass with tracing `mode`, its exporter started first and shut down after.
fn traced_pass(calls: usize, mode: Tracing) -> (std::time::Duration, usize, u64) {
    use tracing_subscriber::layer::SubscriberExt;
    let url = match mode {
        Tracing::Off => {
            let (took, errors) = pass(calls, mode);
            return (took, errors, 0);
        }
        Tracing::On => sink(),
        Tracing::Unreachable => nowhere(),
    };
    let settings = structs_console::telemetry::Settings::read(Some(&url), false, |name| {
        (name == "OTEL_TRACES_SAMPLER").then(|| "always_on".to_string())
    })
    .expect("settings")
    .expect("on");
    let telemetry = structs_console::telemetry::Telemetry::start(settings).expect("an exporter");
    let subscriber = tracing_subscriber::registry().with(telemetry.layer());
    let guard = tracing::subscriber::set_default(subscriber);
    let (took, errors) = pass(calls, mode);
    drop(guard);
    let drops = telemetry.drops();
    telemetry.shutdown();
    (took, errors, drops.spans())
}

/// The mode `PIPELINE_TRACING` names, when this process runs one pass alone.
fn mode_of(name: &str) -> Option<Tracing> {
    match name {
        "off" => Some(Tracing::Off),
        "on" => Some(Tracing::On),
        "unreachable" => Some(Tracing::Unreachable),
        _ => None,
    }
}

/// Runs one pass in a process of its own (tracing, once on, stays on in a process) and
/// reads its microseconds per call.
fn pass_apart(mode: &str, calls: usize) -> f64 {
    let out = std::process::Command::new(std::env::current_exe().expect("this bench"))
        .env("PIPELINE_TRACING", mode)
        .env("PIPELINE_CALLS", calls.to_string())
        .output()
        .expect("a pass");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "the {mode} pass failed: {text}");
    print!("{text}");
    text.lines()
        .find_map(|l| l.strip_prefix("per-call-us "))
        .and_then(|v| v.trim().parse().ok())
        .expect("the pass's figure")
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let calls: usize = std::env::var("PIPELINE_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30_000);
    if let Some(mode) = std::env::var("PIPELINE_TRACING")
        .ok()
        .as_deref()
        .and_then(mode_of)
    {
        let (took, errors, dropped) = traced_pass(calls, mode);
        let per_call = took.as_secs_f64() * 1e6 / calls as f64;
        println!(
            "call pipeline, demo world, one caller, tracing {mode:?}: {calls} calls in {:.2} s, \
             {:.0} calls/s, {per_call:.1} µs per call, {errors} errors, {dropped} spans dropped",
            took.as_secs_f64(),
            calls as f64 / took.as_secs_f64(),
        );
        println!("per-call-us {per_call}");
        assert_eq!(errors, 0, "every call answers");
        return;
    }
    // Each mode in a process of its own, the three in turn, three rounds; the median
    // of each is compared with off's.
    let rounds: usize = std::env::var("PIPELINE_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let mut figures: Vec<(&str, Vec<f64>)> = vec![
        ("off", Vec::new()),
        ("on", Vec::new()),
        ("unreachable", Vec::new()),
    ];
    for _ in 0..rounds {
        for (mode, seen) in &mut figures {
            seen.push(pass_apart(mode, calls));
        }
    }
    let off = median(figures[0].1.clone());
    for (mode, seen) in figures {
        let m = median(seen);
        println!(
            "tracing {mode}: median {m:.1} µs per call of {rounds} runs, {:.3} of off",
            m / off
        );
    }
}
