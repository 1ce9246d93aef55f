//! What one MCP call over HTTP costs the server, in counts that do not move with the
//! machine's load: the user-space instructions (valgrind's callgrind) and the system
//! calls (strace) of the release server answering `structs_query_block_height`, one
//! session calling in turn. Each figure is the difference between a run of 550 calls
//! and one of 50, over 500, so start-up and shutdown cancel out.
//!
//! `SOAK_BASELINE_BIN=PATH` measures another build the same way (the release binary
//! before a change), for the ratio. Needs valgrind and strace on the PATH.
//!
//! Run with `cargo bench --bench server_cost`.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::json;
use structs_console::context::CallContext;
use structs_console::mcp::client::{Remote, Target};

const FEW: u64 = 50;
const MANY: u64 = 550;

/// Which counter wraps the server.
#[derive(Clone, Copy)]
enum Counter {
    Callgrind,
    Strace,
}

/// Runs `bin` under `counter`, makes `calls` calls, stops it, and returns the count.
async fn measure(bin: &str, counter: Counter, calls: u64) -> u64 {
    let out = std::env::temp_dir().join(format!(
        "structs-server-cost-{}-{calls}-{}",
        std::process::id(),
        match counter {
            Counter::Callgrind => "cg",
            Counter::Strace => "st",
        }
    ));
    let port = free_port();
    let mut cmd = match counter {
        Counter::Callgrind => {
            let mut c = tokio::process::Command::new("valgrind");
            c.arg("--tool=callgrind")
                .arg(format!("--callgrind-out-file={}", out.display()));
            c
        }
        Counter::Strace => {
            let mut c = tokio::process::Command::new("strace");
            c.args(["-f", "-c", "-o"]).arg(&out);
            c
        }
    };
    let mut child = cmd
        .arg(bin)
        .args(["--headless", "--paused", "--log-level", "error", "--http"])
        .arg(format!("127.0.0.1:{port}"))
        .env_remove("STRUCTS_CONSOLE_AUTH_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("start the server under its counter (are valgrind and strace installed?)");
    let up = Instant::now();
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(
            up.elapsed() < Duration::from_secs(120),
            "the server did not start"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let remote = Remote::connect(Target::Url(format!("http://127.0.0.1:{port}/mcp")), None)
        .await
        .expect("attach");
    for _ in 0..calls {
        remote
            .call("structs_query_block_height", json!({}), CallContext::new())
            .await
            .expect("an answer");
    }
    remote.close().await;
    drop(remote);
    // SIGTERM to the server itself (under strace, the traced child).
    let pid = child.id().expect("pid");
    let target = match counter {
        Counter::Callgrind => pid,
        Counter::Strace => child_of(pid).unwrap_or(pid),
    };
    let _ = std::process::Command::new("kill")
        .args(["-TERM", &target.to_string()])
        .status();
    let _ = tokio::time::timeout(Duration::from_secs(60), child.wait()).await;
    let text = std::fs::read_to_string(&out).expect("the counter's output");
    let _ = std::fs::remove_file(&out);
    match counter {
        Counter::Callgrind => text
            .lines()
            .find_map(|l| l.strip_prefix("summary: "))
            .and_then(|n| n.trim().parse().ok())
            .expect("callgrind's summary"),
        Counter::Strace => text
            .lines()
            .rev()
            .find(|l| l.trim_end().ends_with("total"))
            .and_then(|l| l.split_whitespace().nth(3)?.parse().ok())
            .expect("strace's total"),
    }
}

fn child_of(pid: u32) -> Option<u32> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).ok()?;
    text.split_whitespace().next()?.parse().ok()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// Instructions and system calls per call for one build.
async fn per_call(bin: &str) -> (f64, f64) {
    let mut out = [0.0; 2];
    for (k, counter) in [Counter::Callgrind, Counter::Strace]
        .into_iter()
        .enumerate()
    {
        let few = measure(bin, counter, FEW).await;
        let many = measure(bin, counter, MANY).await;
        out[k] = many.saturating_sub(few) as f64 / (MANY - FEW) as f64;
    }
    (out[0], out[1])
}

fn main() {
    let rt = tokio::runtime::Runtime::new().expect("a runtime");
    rt.block_on(async {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let this = env!("CARGO_BIN_EXE_structs-console");
        let (instr, sys) = per_call(this).await;
        println!(
            "server cost of one call over HTTP: {instr:.0} user-space instructions, \
             {sys:.1} system calls (this build)"
        );
        if let Ok(bin) = std::env::var("SOAK_BASELINE_BIN") {
            let (old_instr, old_sys) = per_call(&bin).await;
            println!(
                "baseline build: {old_instr:.0} instructions, {old_sys:.1} system calls; \
                 this / baseline: {:.3} instructions, {:.2} system calls",
                instr / old_instr,
                sys / old_sys
            );
        }
    });
}
