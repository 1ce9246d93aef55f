//! The tap and the client among hostile peers: `client` against servers that misbehave
//! (pages that never end, a message over 16 MB or nested 100,000 levels, a handshake or
//! a list never answered, floods of requests, a stderr line that never ends), and
//! `proxy --upstream` and `watch --json` against streams whose line never ends.
//!
//! For each: how it ended (the exit code, or the error the agent got), how long that
//! took against the `--timeout` that bounds it, and the process's peak RSS (the
//! kernel's count for the child, from `wait4`) against the limit the README's Limits
//! table states for it ([`RSS_LIMIT_MB`]).

// Every child is reaped by `wait4` in `reap`, which std's `Child` does not see.
#![allow(clippy::zombie_processes)]

use std::io::{BufRead, Read, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The peak RSS the README's Limits table promises for `client`, `proxy` and `watch`
/// against a hostile peer.
pub const RSS_LIMIT_MB: f64 = 128.0;

/// The `--timeout` the client runs with.
const TIMEOUT_S: u64 = 3;

/// The longest any one run may take: a run that hangs is killed, and shows as ended
/// by a signal.
const HANG: Duration = Duration::from_secs(60);

/// Waits for `child` to exit, by `wait4` (killing it after [`HANG`]): its exit code
/// and its peak RSS in MB.
fn reap(child: &Child) -> (Option<i32>, f64) {
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watchdog = {
        let (done, pid) = (done.clone(), child.id() as libc::pid_t);
        std::thread::spawn(move || {
            let until = Instant::now() + HANG;
            while Instant::now() < until {
                if done.load(std::sync::atomic::Ordering::Relaxed) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            // SAFETY: our own child, not yet reaped (so its pid is still its own).
            unsafe { libc::kill(pid, libc::SIGKILL) };
        })
    };
    let mut status = 0;
    // SAFETY: rusage is plain data the kernel fills in; the pid is our own child's.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    // SAFETY: as above; the status and usage outlive the call.
    let got = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(got, pid, "wait4");
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let _ = watchdog.join();
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    (code, usage.ru_maxrss as f64 / 1024.0)
}

/// Reads a child's stream to the end on a thread; its text.
fn collect(stream: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::BufReader::new(stream).read_to_string(&mut text);
        text
    })
}

fn verdict(rss: f64) -> &'static str {
    if rss <= RSS_LIMIT_MB {
        "within"
    } else {
        "OVER"
    }
}

/// `client --timeout 3 … ping` against each misbehaving server.
fn client(bin: &str) {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/hostile_server.py");
    for mode in [
        "endless-tools",
        "huge",
        "deep",
        "silent-init",
        "silent-prompts",
        "stderr-endless",
        "sampling-flood",
        "flood",
    ] {
        let started = Instant::now();
        let mut child = Command::new(bin)
            .args(["client", "--timeout", &TIMEOUT_S.to_string(), "--connect"])
            .arg(format!("python3 {script} {mode}"))
            .arg("ping")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run the client");
        let out = collect(child.stdout.take().unwrap());
        let err = collect(child.stderr.take().unwrap());
        let (code, rss) = reap(&child);
        let took = started.elapsed().as_secs_f64();
        let (out, err) = (out.join().unwrap(), err.join().unwrap());
        let said = match code {
            Some(0) => format!("answered {}", out.trim()),
            _ => err
                .lines()
                .last()
                .unwrap_or("")
                .replace(script, "hostile_server.py")
                .chars()
                .take(150)
                .collect(),
        };
        println!(
            "  client vs {mode:<15} exit {} in {took:>4.1} s (--timeout {TIMEOUT_S} s), peak RSS {rss:>5.1} MB, {} {RSS_LIMIT_MB} MB: {said}",
            code.map_or("by signal".into(), |c| c.to_string()),
            verdict(rss),
        );
    }
}

/// A loopback server that answers every request with `head`, then sends
/// `endless_mb` megabytes with no newline and holds the connection; its address.
fn endless_server(head: &'static str, endless_mb: usize) -> std::net::SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            std::thread::spawn(move || {
                let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                    line.clear();
                }
                let _ = stream.write_all(head.as_bytes());
                let block = vec![b'x'; 1 << 20];
                for _ in 0..endless_mb {
                    if stream.write_all(&block).is_err() {
                        return;
                    }
                }
                std::thread::sleep(Duration::from_secs(60));
            });
        }
    });
    addr
}

/// `proxy --upstream` in front of a server whose answer never ends: the time to the
/// agent's error, and the proxy's peak RSS.
fn upstream(bin: &str) {
    for (what, head) in [
        (
            "an event that never ends",
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nmcp-session-id: s\r\n\r\ndata: ",
        ),
        (
            "a JSON body that never ends",
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nmcp-session-id: s\r\n\r\n",
        ),
    ] {
        let addr = endless_server(head, 64);
        let started = Instant::now();
        let mut child = Command::new(bin)
            .args(["proxy", "--no-control", "--upstream"])
            .arg(format!("http://{addr}/mcp"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("run the proxy");
        let mut stdin = child.stdin.take().unwrap();
        let _ = writeln!(
            stdin,
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"soak","version":"1"}}}}}}"#
        );
        let mut answer = String::new();
        let _ = std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut answer);
        let took = started.elapsed().as_secs_f64();
        drop(stdin);
        let (_, rss) = reap(&child);
        let said: String = serde_json::from_str::<serde_json::Value>(&answer)
            .ok()
            .and_then(|v| v["error"]["message"].as_str().map(str::to_string))
            .unwrap_or_else(|| format!("no error: {}", answer.trim()))
            .chars()
            .take(110)
            .collect();
        println!(
            "  proxy --upstream vs {what:<27} answered in {took:>4.1} s, peak RSS {rss:>5.1} MB, {} {RSS_LIMIT_MB} MB: {said}",
            verdict(rss)
        );
    }
}

/// `watch --json` on an endpoint whose feed line never ends, for 5 s: its peak RSS.
fn watch(bin: &str) {
    let addr = endless_server(
        "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: structs-control/1\r\n\r\n{\"type\":\"hello\"}\n",
        256,
    );
    let mut child = Command::new(bin)
        .args(["watch", "--json"])
        .arg(format!("http://{addr}"))
        .env(
            "STRUCTS_CONSOLE_CONTROL_TOKEN",
            "soak-token-0123456789abcdef",
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("run watch");
    let out = collect(child.stdout.take().unwrap());
    std::thread::sleep(Duration::from_secs(5));
    // SAFETY: our own child, by its pid.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    let (_, rss) = reap(&child);
    let lines = out.join().unwrap();
    println!(
        "  watch --json vs a feed line that never ends (256 MB in 5 s): peak RSS {rss:>5.1} MB, {} {RSS_LIMIT_MB} MB; it printed {} line(s)",
        verdict(rss),
        lines.lines().count()
    );
}

/// Every hostile peer, in turn.
pub fn run(bin: &str) {
    println!(
        "7. the tap and the client among hostile peers (peak RSS limit {RSS_LIMIT_MB} MB, README's Limits):"
    );
    client(bin);
    upstream(bin);
    watch(bin);
}
