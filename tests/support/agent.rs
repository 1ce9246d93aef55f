//! An agent speaking JSON-RPC by hand over a server's stdio (through a proxy, or
//! straight), and the lines of a child's pipes as they come: for the live-feed tests.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub const BIN: &str = env!("CARGO_BIN_EXE_structs-console");

/// A folder of the test's own, standing in for `$XDG_RUNTIME_DIR`.
pub fn runtime_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("structs-live-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The lines a child writes to a pipe, as they come.
pub fn lines_of(out: impl std::io::Read + Send + 'static) -> Receiver<String> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { return };
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    rx
}

/// Takes lines until one satisfies `wanted` (10 s at most); every line taken.
pub fn until(rx: &Receiver<String>, what: &str, wanted: impl Fn(&Value) -> bool) -> Vec<Value> {
    let start = Instant::now();
    let mut seen = Vec::new();
    loop {
        let left = Duration::from_secs(10).saturating_sub(start.elapsed());
        match rx.recv_timeout(left) {
            Ok(line) => {
                let v: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
                let done = wanted(&v);
                seen.push(v);
                if done {
                    return seen;
                }
            }
            Err(_) => panic!("gave up waiting for {what}; saw {seen:#?}"),
        }
    }
}

/// An agent speaking JSON-RPC over a server's stdio, by hand, so that the test says
/// exactly what is sent (progress tokens, cancellations).
pub struct Agent {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    pub out: Receiver<String>,
    /// The answer to its `initialize`.
    pub handshake: Value,
}

impl Agent {
    pub fn start(args: &[&str], runtime_dir: &Path) -> (Agent, Receiver<String>) {
        let (mut agent, err) = Agent::start_stateless(args, runtime_dir);
        agent.send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "a-test-agent", "version": "1"}}}),
        );
        agent.handshake = until(&agent.out, "the handshake", |v| v["id"] == 0)
            .pop()
            .unwrap_or_default();
        agent.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        (agent, err)
    }

    /// An agent of the stateless revision (2026-07-28): no handshake; each request
    /// says its version in its `_meta`.
    pub fn start_stateless(args: &[&str], runtime_dir: &Path) -> (Agent, Receiver<String>) {
        let mut child = Command::new(BIN)
            .args(args)
            .env("XDG_RUNTIME_DIR", runtime_dir)
            .env("TMPDIR", runtime_dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start");
        let stdin = child.stdin.take();
        let out: ChildStdout = child.stdout.take().unwrap();
        let err = lines_of(child.stderr.take().unwrap());
        let agent = Agent {
            child,
            stdin,
            out: lines_of(out),
            handshake: Value::Null,
        };
        (agent, err)
    }

    pub fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    pub fn call(&mut self, id: u64, tool: &str, arguments: Value, token: Option<&str>) {
        let mut params = json!({"name": tool, "arguments": arguments});
        if let Some(token) = token {
            params["_meta"] = json!({"progressToken": token});
        }
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}));
    }

    /// Closes stdin, as a host does when it is done, and waits for the exit.
    pub fn finish(mut self) -> std::process::ExitStatus {
        self.stdin = None;
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(start.elapsed() < Duration::from_secs(15), "it did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The socket a server named on stderr.
pub fn socket_from(stderr: &Receiver<String>) -> PathBuf {
    let line = stderr
        .recv_timeout(Duration::from_secs(10))
        .expect("the server says where its live feed is");
    let at = line
        .split("watch it with: structs-console watch ")
        .nth(1)
        .unwrap_or_else(|| panic!("no endpoint in {line:?}"));
    PathBuf::from(at.trim())
}

/// A proxy in front of our own server, its control endpoint the default one.
pub const PROXIED: &[&str] = &[
    "proxy",
    "--",
    BIN,
    "--headless",
    "--paused",
    "--log-level",
    "warn",
];

/// A search that cannot succeed: it runs, reporting progress, until cancelled.
pub fn endless_search() -> Value {
    json!({"action_type": "struct_build_complete", "entity_id": "5-1",
        "block_start": 10, "age": 1, "difficulty": 700, "threads": 1,
        "max_iterations": 1_000_000_000_000u64})
}

/// A watcher of the control endpoint that sends commands.
pub struct Watcher {
    pub stream: std::os::unix::net::UnixStream,
    pub lines: Receiver<String>,
}

impl Watcher {
    pub fn attach(socket: &Path) -> Watcher {
        let stream = std::os::unix::net::UnixStream::connect(socket).expect("the endpoint answers");
        let reader = stream.try_clone().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(reader).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Watcher { stream, lines: rx }
    }

    /// Sends a command and returns its answer (the lines before it are passed over).
    pub fn command(&mut self, command: Value) -> Value {
        writeln!(self.stream, "{command}").unwrap();
        until(&self.lines, "the command's answer", |v| {
            v["type"] == "ack" || v["type"] == "refused"
        })
        .pop()
        .unwrap()
    }

    /// Waits for the next call held; its hold number and the event.
    pub fn held(&self) -> (u64, Value) {
        let event = until(&self.lines, "a call held", |v| v["type"] == "held")
            .pop()
            .unwrap();
        (event["hold"].as_u64().unwrap(), event)
    }
}
