//! An agent written with the official Python MCP SDK (tests/data/python_agent.py),
//! through `structs-console proxy`, against our own server and against the MCP
//! reference server (`server-everything`): what it sends and gets is the same, byte for
//! byte, as when it talks to the server direct; a breakpoint holds its call, which is
//! continued, edited and answered with an error, as the SDK reports each; fault rules
//! fire call for call as the seeded rules say; and what was recorded replays. The peers
//! are installed by `.ci/run` (see tests/support/peers.rs).

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use structs_console::mcp::proxy::Faults;
use structs_console::mcp::proxy::rules::Fault;
use support::agent::{BIN, lines_of, runtime_dir, until};
use support::peers::Peers;

/// The longest an agent's whole run, or a replay, may take.
const DEADLINE: Duration = Duration::from_secs(90);

/// `sh -c TEE sh UP DOWN COMMAND…` runs COMMAND with what goes into it copied to the
/// file UP and what comes out of it to DOWN, byte for byte (`tee` passes what it reads
/// as it reads it).
const TEE: &str = r#"up=$1; down=$2; shift 2; tee "$up" | "$@" | tee "$down""#;

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| (*a).to_string()).collect()
}

fn path(p: &Path) -> String {
    p.display().to_string()
}

/// A folder of the test's own that only this user can open (the control sockets go
/// there), removed when the test is done.
fn private_dir(name: &str) -> PathBuf {
    let dir = runtime_dir(name);
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    dir
}

/// The two files one tap writes: what went into a process, and what came out.
struct Tap {
    up: PathBuf,
    down: PathBuf,
}

impl Tap {
    fn new(dir: &Path, name: &str) -> Tap {
        Tap {
            up: dir.join(format!("{name}.up")),
            down: dir.join(format!("{name}.down")),
        }
    }

    /// `command` with this tap around it.
    fn around(&self, command: &[String]) -> Vec<String> {
        let mut args = strings(&["sh", "-c", TEE, "sh"]);
        args.push(path(&self.up));
        args.push(path(&self.down));
        args.extend_from_slice(command);
        args
    }

    fn up(&self) -> Vec<u8> {
        std::fs::read(&self.up).unwrap_or_else(|e| panic!("{}: {e}", self.up.display()))
    }

    fn down(&self) -> Vec<u8> {
        std::fs::read(&self.down).unwrap_or_else(|e| panic!("{}: {e}", self.down.display()))
    }
}

/// The bytes with every RFC 3339 instant in them (`2026-11-26T03:30:18Z`, with or
/// without a fraction of a second) replaced by `<instant>`, and how many there were.
fn without_instants(bytes: &[u8]) -> (String, usize) {
    fn instant_at(b: &[u8]) -> Option<usize> {
        let shape = b"dddd-dd-ddTdd:dd:dd";
        if b.len() < shape.len() {
            return None;
        }
        let fits = shape.iter().zip(b).all(|(s, c)| match s {
            b'd' => c.is_ascii_digit(),
            _ => s == c,
        });
        if !fits {
            return None;
        }
        let mut at = shape.len();
        if b.get(at) == Some(&b'.') {
            at += 1;
            let digits = b[at..].iter().take_while(|c| c.is_ascii_digit()).count();
            if digits == 0 {
                return None;
            }
            at += digits;
        }
        (b.get(at) == Some(&b'Z')).then_some(at + 1)
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut found = 0;
    let mut i = 0;
    while i < bytes.len() {
        match instant_at(&bytes[i..]) {
            Some(len) => {
                out.extend_from_slice(b"<instant>");
                found += 1;
                i += len;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    (String::from_utf8(out).expect("UTF-8"), found)
}

/// The Python agent, running a scenario; its lines as they come.
struct PythonAgent {
    child: Child,
    stdin: Option<ChildStdin>,
    out: Receiver<String>,
    err: Receiver<String>,
    /// Every line taken so far.
    seen: Vec<Value>,
}

impl PythonAgent {
    fn start(peers: &Peers, scenario: &[String]) -> PythonAgent {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/python_agent.py");
        let mut child = Command::new(peers.python())
            .arg(script)
            .args(scenario)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the Python agent");
        PythonAgent {
            stdin: child.stdin.take(),
            out: lines_of(child.stdout.take().unwrap()),
            err: lines_of(child.stderr.take().unwrap()),
            child,
            seen: Vec::new(),
        }
    }

    /// Takes lines until one satisfies `wanted` (10 s at most), and returns it.
    fn next(&mut self, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        let taken = until(&self.out, what, wanted);
        self.seen.extend(taken.iter().cloned());
        taken.last().cloned().unwrap()
    }

    /// What the agent printed for step `name`.
    fn step(&mut self, name: &str) -> Value {
        self.next(&format!("the agent's step {name:?}"), |v| v["step"] == name)
    }

    /// Tells the agent to make its next call.
    fn go(&mut self) {
        let stdin = self.stdin.as_mut().expect("the agent's stdin is open");
        stdin.write_all(b"go\n").unwrap();
        stdin.flush().unwrap();
    }

    fn stderr(&self) -> String {
        self.err.try_iter().collect::<Vec<_>>().join("\n")
    }

    /// Closes its stdin, takes the rest of its lines and waits for it to exit, which it
    /// must do cleanly; every line it printed.
    fn finish(mut self) -> Vec<Value> {
        self.stdin = None;
        let start = Instant::now();
        loop {
            match self
                .out
                .recv_timeout(DEADLINE.saturating_sub(start.elapsed()))
            {
                Ok(line) => self.seen.push(
                    serde_json::from_str(&line)
                        .unwrap_or_else(|e| panic!("not JSON ({e}): {line}")),
                ),
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => panic!(
                    "the agent did not finish in {DEADLINE:?}; it printed {:#?}\nstderr:\n{}",
                    self.seen,
                    self.stderr()
                ),
            }
        }
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "the agent closed its stdout but did not exit"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(
            status.success(),
            "the agent failed ({status}); it printed {:#?}\nstderr:\n{}",
            self.seen,
            self.stderr()
        );
        let last = self.seen.last().cloned().unwrap_or(Value::Null);
        assert_eq!(last["done"], true, "{:#?}", self.seen);
        assert_eq!(
            last["warnings"],
            json!([]),
            "the SDK logged no warning: {:#?}",
            self.seen
        );
        std::mem::take(&mut self.seen)
    }
}

impl Drop for PythonAgent {
    fn drop(&mut self) {
        // A test that failed half-way leaves no agent behind (its server's stdin closes
        // with it, and the server goes too).
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Runs a scenario to its end; every line the agent printed.
fn run(peers: &Peers, scenario: &[String]) -> Vec<Value> {
    PythonAgent::start(peers, scenario).finish()
}

/// The scenario's argv: its name, its own arguments, then the command it starts.
fn scenario(name: &str, own: &[&str], command: &[String]) -> Vec<String> {
    let mut args = strings(&[name]);
    args.extend(strings(own));
    args.extend_from_slice(command);
    args
}

/// A watcher of a proxy's control endpoint, which sends it commands.
struct Watcher {
    stream: UnixStream,
    lines: Receiver<String>,
    /// Every line read so far.
    seen: Vec<Value>,
}

impl Watcher {
    fn attach(socket: &Path) -> Watcher {
        let stream = UnixStream::connect(socket)
            .unwrap_or_else(|e| panic!("the endpoint {} answers: {e}", socket.display()));
        let reader = stream.try_clone().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(reader).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Watcher {
            stream,
            lines: rx,
            seen: Vec::new(),
        }
    }

    fn next(&mut self, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        let taken = until(&self.lines, what, wanted);
        self.seen.extend(taken.iter().cloned());
        taken.last().cloned().unwrap()
    }

    /// Sends a command; its answer (`ack` or `refused`).
    fn command(&mut self, command: Value) -> Value {
        writeln!(self.stream, "{command}").unwrap();
        self.next(&format!("the answer to {command}"), |v| {
            v["type"] == "ack" || v["type"] == "refused"
        })
    }

    /// The next call held.
    fn held(&mut self) -> Value {
        self.next("a call held", |v| v["type"] == "held")
    }

    /// How each hold so far was released, in order.
    fn releases(&self) -> Vec<String> {
        self.seen
            .iter()
            .filter(|v| v["type"] == "released")
            .filter_map(|v| v["how"].as_str().map(str::to_string))
            .collect()
    }
}

/// A command's stdout, once it has exited (within the deadline) successfully.
fn output(cmd: &mut Command) -> String {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start");
    let read = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = r.read_to_string(&mut text);
            text
        })
    };
    let out = read(Box::new(child.stdout.take().unwrap()));
    let err = read(Box::new(child.stderr.take().unwrap()));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > DEADLINE {
            let _ = child.kill();
            panic!("{cmd:?} did not finish in {DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (out, err) = (out.join().unwrap(), err.join().unwrap());
    assert!(status.success(), "{cmd:?}: {status}\n{out}\n{err}");
    out
}

/// `structs-console replay LOG --check --paused`, which must find no difference; what
/// it printed.
fn replay_check(log: &Path) -> String {
    output(Command::new(BIN).args(["replay", &path(log), "--check", "--paused"]))
}

fn log_lines(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_else(|e| panic!("{}: {e}", log.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// The agent's lines as text, one a line, with the instants taken out.
fn report_text(lines: &[Value]) -> String {
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    without_instants(text.join("\n").as_bytes()).0
}

/// Our server, as the Python agent starts it.
fn our_server() -> Vec<String> {
    strings(&[BIN, "--headless", "--paused", "--log-level", "warn"])
}

/// The reference server, as the Python agent starts it.
fn everything(peers: &Peers) -> Vec<String> {
    vec![
        path(&peers.node()),
        path(&peers.everything()),
        "stdio".to_string(),
    ]
}

/// The same session on our server direct, through `proxy -- COMMAND` (the server's own
/// pipes tapped as well), and through `proxy --embedded`. The SDK sends the same bytes
/// every way, and the server's bytes reach the agent as the server wrote them.
///
/// Our server stamps its answers with the wall clock (`"timestamp"`, to the second),
/// so two runs differ there and nowhere else: between runs the bytes are compared
/// with every RFC 3339 instant replaced by a marker. Within the proxied run, what the
/// server wrote and what the agent read are compared as they are.
#[test]
fn the_python_sdk_sends_and_gets_the_same_bytes_through_the_proxy_as_direct() {
    let Some(peers) = Peers::find() else { return };
    let dir = private_dir("py-bytes");

    let direct = Tap::new(&dir, "direct");
    let direct_report = run(
        &peers,
        &scenario("structs", &[], &direct.around(&our_server())),
    );

    let (outer, inner) = (Tap::new(&dir, "outer"), Tap::new(&dir, "inner"));
    let log = dir.join("proxied.jsonl");
    let mut proxy = strings(&[BIN, "proxy", "--record", &path(&log)]);
    proxy.extend(strings(&["--control", &path(&dir.join("p.sock")), "--"]));
    proxy.extend(inner.around(&our_server()));
    let proxied_report = run(&peers, &scenario("structs", &[], &outer.around(&proxy)));

    // A fault rule on a tool the agent never calls: the broker reads every call, and
    // still passes each as it came.
    let faults = dir.join("idle-faults.json");
    std::fs::write(
        &faults,
        json!({"rules": [{"tool": "structs_query_guild", "latency_ms": 5000}]}).to_string(),
    )
    .unwrap();
    let embedded = Tap::new(&dir, "embedded");
    let embedded_log = dir.join("embedded.jsonl");
    let proxy = strings(&[
        BIN,
        "proxy",
        "--embedded",
        "--record",
        &path(&embedded_log),
        "--control",
        &path(&dir.join("e.sock")),
        "--faults",
        &path(&faults),
        "--",
        "--paused",
        "--log-level",
        "warn",
    ]);
    let embedded_report = run(&peers, &scenario("structs", &[], &embedded.around(&proxy)));

    // What the agent saw.
    let step = |name: &str| -> &Value {
        direct_report
            .iter()
            .find(|v| v["step"] == name)
            .unwrap_or_else(|| panic!("no step {name}: {direct_report:#?}"))
    };
    assert_eq!(step("initialize")["server"], "structs-console");
    assert!(
        step("tools")["names"]
            .as_array()
            .is_some_and(|n| n.contains(&json!("structs_query_player"))),
        "{direct_report:#?}"
    );
    assert_eq!(step("player")["is_error"], false);
    assert_eq!(
        step("player")["structured"]["player"]["Player"]["id"],
        "1-1"
    );
    assert_eq!(step("missing")["is_error"], true);
    assert_eq!(
        step("missing")["structured"]["error"]["code"],
        "RESOURCE_NOT_FOUND"
    );
    assert_eq!(
        step("planet")["structured"]["planet"]["Planet"]["id"],
        "2-1"
    );
    assert_eq!(step("complete")["values"], json!(["Ore Refinery"]));
    assert!(step("ping").is_object());
    let seen = report_text(&direct_report);
    assert_eq!(report_text(&proxied_report), seen);
    assert_eq!(report_text(&embedded_report), seen);

    // Host to server: the same bytes every way, and the server got what the host sent.
    let sent = direct.up();
    let requests: Vec<Value> = sent
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    let methods: Vec<&str> = requests
        .iter()
        .filter_map(|r| r["method"].as_str())
        .collect();
    assert_eq!(
        methods,
        [
            "initialize",
            "notifications/initialized",
            "tools/list",
            "tools/call",
            "tools/call",
            "tools/call",
            "resources/list",
            "resources/read",
            "prompts/list",
            "prompts/get",
            "completion/complete",
            "ping"
        ]
    );
    assert!(
        outer.up() == sent,
        "the host sent other bytes through the proxy"
    );
    assert!(
        inner.up() == sent,
        "the server got other bytes than the host sent"
    );
    assert!(
        embedded.up() == sent,
        "the host sent other bytes through proxy --embedded"
    );

    // Server to host: through the proxy, exactly what the server wrote; between runs,
    // the same but for the instants.
    let got = outer.down();
    assert!(
        got == inner.down(),
        "the agent got other bytes than the server wrote"
    );
    let (direct_got, stamps) = without_instants(&direct.down());
    assert!(stamps >= 2, "the answers carry their timestamps: {stamps}");
    let answers = direct_got.lines().count();
    assert_eq!(answers, 11, "one answer a request, no notification");
    assert_eq!(without_instants(&got), (direct_got.clone(), stamps));
    assert_eq!(without_instants(&embedded.down()), (direct_got, stamps));

    // Both recordings run again with no difference.
    for log in [&log, &embedded_log] {
        let text = replay_check(log);
        assert!(text.contains("replayed 3 calls "), "{text}");
        assert!(text.contains("3 the same, 0 different"), "{text}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The same, with the MCP reference server behind the proxy. Its answers to the calls
/// the agent makes (echo, a sum, its lists, a prompt without arguments, ping) are the
/// same every run, so the bytes are compared as they are. It cannot be replayed (replay
/// runs calls on our own core); its recording holds its calls.
#[test]
fn the_python_sdk_sends_and_gets_the_same_bytes_through_the_proxy_to_the_reference_server() {
    let Some(peers) = Peers::find() else { return };
    let dir = private_dir("py-everything");

    let direct = Tap::new(&dir, "direct");
    let direct_report = run(
        &peers,
        &scenario("everything", &[], &direct.around(&everything(&peers))),
    );
    let (outer, inner) = (Tap::new(&dir, "outer"), Tap::new(&dir, "inner"));
    let log = dir.join("everything.jsonl");
    let mut proxy = strings(&[BIN, "proxy", "--record", &path(&log)]);
    proxy.extend(strings(&["--control", &path(&dir.join("p.sock")), "--"]));
    proxy.extend(inner.around(&everything(&peers)));
    let proxied_report = run(&peers, &scenario("everything", &[], &outer.around(&proxy)));

    let step = |name: &str| -> &Value {
        direct_report
            .iter()
            .find(|v| v["step"] == name)
            .unwrap_or_else(|| panic!("no step {name}: {direct_report:#?}"))
    };
    assert_eq!(step("initialize")["server"], "mcp-servers/everything");
    assert_eq!(step("echo")["text"], json!(["Echo: through the tap ✓"]));
    assert_eq!(step("sum")["text"], json!(["The sum of 19 and 23 is 42."]));
    assert_eq!(
        step("prompt")["text"],
        "This is a simple prompt without arguments."
    );
    assert!(
        step("tools")["names"]
            .as_array()
            .is_some_and(|n| n.contains(&json!("get-sum"))),
        "{direct_report:#?}"
    );
    assert_eq!(proxied_report, direct_report);

    let sent = direct.up();
    assert!(!sent.is_empty());
    assert!(
        outer.up() == sent,
        "the host sent other bytes through the proxy"
    );
    assert!(
        inner.up() == sent,
        "the server got other bytes than the host sent"
    );
    let got = direct.down();
    let got_text = String::from_utf8_lossy(&got);
    assert!(
        got_text.contains(r#""text":"Echo: through the tap ✓""#),
        "{got_text}"
    );
    assert!(
        inner.down() == got,
        "the reference server wrote other bytes than it does direct"
    );
    assert!(
        outer.down() == got,
        "the agent got other bytes through the proxy than direct"
    );

    // The recording holds both calls, their answers, and the server's notification.
    let lines = log_lines(&log);
    // The tool calls' lines: the SDK's other requests (its handshake, its lists) are
    // logged too, with their method, and their answers share their numbers.
    let others: std::collections::HashSet<u64> = lines
        .iter()
        .filter(|l| l["type"] == "request" && !l["method"].is_null())
        .filter_map(|l| l["call"].as_u64())
        .collect();
    let calls: Vec<(&str, &str, &Value)> = lines
        .iter()
        .filter(|l| !l["call"].as_u64().is_some_and(|c| others.contains(&c)))
        .filter_map(|l| Some((l["type"].as_str()?, l["tool"].as_str()?, l)))
        .collect();
    assert_eq!(calls.len(), 4, "{lines:#?}");
    assert_eq!((calls[0].0, calls[0].1), ("request", "echo"));
    assert_eq!(
        calls[0].2["arguments"],
        json!({"message": "through the tap ✓"})
    );
    assert_eq!((calls[1].0, calls[1].1), ("response", "echo"));
    assert_eq!(
        calls[1].2["result"]["content"][0]["text"],
        "Echo: through the tap ✓"
    );
    assert_eq!((calls[2].0, calls[2].1), ("request", "get-sum"));
    assert_eq!(calls[2].2["arguments"], json!({"a": 19, "b": 23}));
    assert_eq!((calls[3].0, calls[3].1), ("response", "get-sum"));
    assert_eq!(
        calls[3].2["result"]["content"][0]["text"],
        "The sum of 19 and 23 is 42."
    );
    assert!(
        lines
            .iter()
            .all(|l| l.get("injected").is_none() && l["error"].is_null()),
        "{lines:#?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l["type"] == "notification"
                && l["method"] == "notifications/tools/list_changed"),
        "{lines:#?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// What a breakpoint test checks of the agent's call on one server.
struct Held<'a> {
    tool: &'a str,
    sent: Value,
    /// Arguments the tool's schema refuses.
    unfit: Value,
    edited: Value,
    /// True when a step's result is the server's answer to these arguments.
    answers: &'a dyn Fn(&Value, &Value) -> bool,
}

/// Runs the `hold` scenario through a proxy in front of `server`: the agent waits for
/// the go-ahead before each call, the watcher holds every call to the tool, and
/// releases the first as it is, sends the second on with other arguments (after
/// arguments the tool's schema refuses have been refused), answers the third with an
/// error, and lets the fourth pass with no breakpoint. Returns the session log.
fn hold_calls(peers: &Peers, dir: &Path, server: &[String], held: &Held) -> PathBuf {
    let log = dir.join("held.jsonl");
    let socket = dir.join("held.sock");
    let mut proxy = strings(&[BIN, "proxy", "--record", &path(&log), "--control"]);
    proxy.extend(strings(&[&path(&socket), "--hold-timeout", "30", "--"]));
    proxy.extend_from_slice(server);
    let sent = held.sent.to_string();
    let mut agent = PythonAgent::start(
        peers,
        &scenario(
            "hold",
            &[held.tool, &sent, "continue,edit,error,free"],
            &proxy,
        ),
    );
    // The agent listed the tools (so the proxy knows their schemas): the proxy, and
    // its endpoint, are up.
    agent.step("tools");
    let mut watcher = Watcher::attach(&socket);
    let ack = watcher.command(json!({"cmd": "break", "tool": held.tool}));
    assert_eq!(ack["type"], "ack", "{ack}");

    // Each call the agent makes is held, as it sent it, with the tool's schema; the
    // agent gets nothing meanwhile.
    let hold = |agent: &mut PythonAgent, watcher: &mut Watcher, step: &str| -> u64 {
        agent.next(&format!("the agent ready for {step}"), |v| {
            v["ready"] == step
        });
        agent.go();
        let event = watcher.held();
        assert_eq!(event["way"], "request", "{event}");
        assert_eq!(event["tool"], held.tool, "{event}");
        assert_eq!(event["arguments"], held.sent, "{event}");
        assert!(event["schema"]["properties"].is_object(), "{event}");
        let early: Vec<String> = agent.out.try_iter().collect();
        assert!(early.is_empty(), "the agent got {early:?} while held");
        event["hold"].as_u64().unwrap()
    };

    // Continued: the server's answer to the call as sent.
    let n = hold(&mut agent, &mut watcher, "continue");
    let ack = watcher.command(json!({"cmd": "continue", "hold": n}));
    assert_eq!(ack["type"], "ack", "{ack}");
    let got = agent.step("continue");
    assert_eq!(got["is_error"], false, "{got}");
    assert!((held.answers)(&got, &held.sent), "{got}");

    // Edited: arguments that do not fit are refused, saying why; then the agent gets
    // the answer to the edited call.
    let n = hold(&mut agent, &mut watcher, "edit");
    let refused = watcher.command(json!({"cmd": "edit", "hold": n, "arguments": held.unfit}));
    assert_eq!(refused["type"], "refused", "{refused}");
    assert!(
        refused["reason"].as_str().is_some_and(
            |r| r.contains("do not fit the tool's schema") && r.contains("VALIDATION_")
        ),
        "{refused}"
    );
    let ack = watcher.command(json!({"cmd": "edit", "hold": n, "arguments": held.edited}));
    assert_eq!(ack["type"], "ack", "{ack}");
    let got = agent.step("edit");
    assert_eq!(got["is_error"], false, "{got}");
    assert!((held.answers)(&got, &held.edited), "{got}");

    // Answered with an error: the SDK returns it as a tool result with isError and the
    // error object as structured content (not a JSON-RPC error, which it would raise).
    let n = hold(&mut agent, &mut watcher, "error");
    let ack = watcher.command(json!({"cmd": "error", "hold": n, "error": {
        "code": "RATE_LIMIT_EXCEEDED", "message": "slow down",
        "details": {"retry_after_ms": 1500}}}));
    assert_eq!(ack["type"], "ack", "{ack}");
    let got = agent.step("error");
    assert!(got.get("raised").is_none(), "{got}");
    assert_eq!(got["is_error"], true, "{got}");
    let error = &got["structured"]["error"];
    let stamp = error["timestamp"].as_str().unwrap_or_default();
    assert_eq!(without_instants(stamp.as_bytes()), ("<instant>".into(), 1));
    assert_eq!(
        got["structured"],
        json!({"error": {"code": "RATE_LIMIT_EXCEEDED", "message": "slow down",
            "details": {"retry_after_ms": 1500}, "timestamp": stamp}})
    );
    let text: Value = serde_json::from_str(got["text"][0].as_str().unwrap()).unwrap();
    assert_eq!(text, got["structured"], "the text says the same");

    // No breakpoint: the call goes straight on (held, it would wait the 30 s out).
    agent.next("the agent ready for free", |v| v["ready"] == "free");
    let ack = watcher.command(json!({"cmd": "unbreak"}));
    assert_eq!(ack["type"], "ack", "{ack}");
    agent.go();
    let got = agent.step("free");
    assert!((held.answers)(&got, &held.sent), "{got}");
    agent.finish();

    // The feed told of each release, and held nothing once the breakpoint was gone.
    // (The SDK's own requests, its tool list, are in the feed too.)
    let answered = |seen: &[Value]| {
        seen.iter()
            .filter(|v| v["type"] == "response" && v["tool"] == held.tool)
            .count()
    };
    while answered(&watcher.seen) < 4 {
        watcher.next("a call's answer in the feed", |v| {
            v["type"] == "response" && v["tool"] == held.tool
        });
    }
    assert_eq!(
        watcher.releases(),
        ["continued", "edited, continued", "answered with an error"]
    );
    let holds = watcher.seen.iter().filter(|v| v["type"] == "held").count();
    assert_eq!(holds, 3, "{:#?}", watcher.seen);

    // The log marks the two answers the server did not give to the call it recorded.
    let lines = log_lines(&log);
    // The tool calls, in order (the SDK's other requests have numbers too).
    let calls: Vec<u64> = lines
        .iter()
        .filter(|l| l["type"] == "request" && l["method"].is_null())
        .filter_map(|l| l["call"].as_u64())
        .collect();
    assert_eq!(calls.len(), 4, "{lines:#?}");
    let injected: Vec<(u64, &str)> = lines
        .iter()
        .filter(|l| l["type"] == "response")
        .filter_map(|l| {
            let nth = calls.iter().position(|c| Some(*c) == l["call"].as_u64())? as u64 + 1;
            Some((nth, l["injected"].as_str()?))
        })
        .collect();
    assert_eq!(
        injected,
        [
            (2, "arguments edited at a breakpoint"),
            (3, "error RATE_LIMIT_EXCEEDED at a breakpoint"),
        ]
    );
    log
}

#[test]
fn a_breakpoint_holds_continues_edits_and_errors_as_the_python_sdk_sees_it() {
    let Some(peers) = Peers::find() else { return };
    let dir = private_dir("py-hold");
    let player = |got: &Value, args: &Value| {
        got["structured"]["player"]["Player"]["id"] == args["player_id"]
    };
    let log = hold_calls(
        &peers,
        &dir,
        &our_server(),
        &Held {
            tool: "structs_query_player",
            sent: json!({"player_id": "1-1"}),
            unfit: json!({"player_id": "not an id"}),
            edited: json!({"player_id": "1-2"}),
            answers: &player,
        },
    );
    // The log replays: the two calls the server answered run again the same, the two
    // it did not are left out, and said to be.
    let text = replay_check(&log);
    assert!(text.contains("replayed 2 calls "), "{text}");
    assert!(text.contains("2 the same, 0 different"), "{text}");
    assert_eq!(text.matches("got an injected answer").count(), 2, "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The same breakpoints in front of the reference server: the proxy learns its tool's
/// schema from the agent's tool list, and edits and errors reach the agent the same way.
#[test]
fn a_breakpoint_holds_the_reference_servers_calls_as_the_python_sdk_sees_it() {
    let Some(peers) = Peers::find() else { return };
    let dir = private_dir("py-hold-everything");
    let echo = |got: &Value, args: &Value| {
        got["text"] == json!([format!("Echo: {}", args["message"].as_str().unwrap())])
    };
    let log = hold_calls(
        &peers,
        &dir,
        &everything(&peers),
        &Held {
            tool: "echo",
            sent: json!({"message": "as the agent sent it"}),
            unfit: json!({"message": 5}),
            edited: json!({"message": "edited on its way"}),
            answers: &echo,
        },
    );
    let lines = log_lines(&log);
    // The second tool call's answer (the SDK's other requests have numbers too).
    let second = lines
        .iter()
        .filter(|l| l["type"] == "request" && l["method"].is_null())
        .nth(1)
        .expect("a second tool call");
    let edited = lines
        .iter()
        .find(|l| l["type"] == "response" && l["call"] == second["call"])
        .unwrap();
    assert_eq!(
        edited["result"]["content"][0]["text"],
        "Echo: edited on its way"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// An answer held at a breakpoint and edited: the hold shows the whole tool result,
/// the edit gives one back, and the SDK takes it as the tool's answer (it checks the
/// structured content against the tool's output schema).
#[test]
fn an_answer_edited_at_a_breakpoint_is_taken_by_the_python_sdk() {
    let Some(peers) = Peers::find() else { return };
    let dir = private_dir("py-edit-answer");
    let socket = dir.join("answer.sock");
    let tool = "structs_query_block_height";
    let mut proxy = strings(&[BIN, "proxy", "--control", &path(&socket)]);
    proxy.extend(strings(&["--hold-timeout", "30", "--"]));
    proxy.extend(our_server());
    let mut agent = PythonAgent::start(&peers, &scenario("hold", &[tool, "{}", "edited"], &proxy));
    agent.step("tools");
    let mut watcher = Watcher::attach(&socket);
    let ack = watcher.command(json!({"cmd": "break", "on": "response", "tool": tool}));
    assert_eq!(ack["type"], "ack", "{ack}");
    agent.next("the agent ready", |v| v["ready"] == "edited");
    agent.go();
    let event = watcher.held();
    assert_eq!(event["way"], "response", "{event}");
    let mut edited = event["answer"].clone();
    let height = edited["structuredContent"]["height"].as_u64().unwrap();
    edited["structuredContent"]["height"] = json!(height + 1000);
    edited["content"][0]["text"] = json!(edited["structuredContent"].to_string());
    let ack = watcher.command(json!({"cmd": "edit", "hold": event["hold"], "result": edited}));
    assert_eq!(ack["type"], "ack", "{ack}");
    let got = agent.step("edited");
    assert_eq!(got["is_error"], false, "{got}");
    assert_eq!(got["structured"], edited["structuredContent"], "{got}");
    assert_eq!(
        got["text"],
        json!([edited["structuredContent"].to_string()])
    );
    let done = agent.finish();
    assert_eq!(done.last().unwrap()["warnings"], json!([]), "{done:#?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Twenty calls, player and planet queries in the agent's fixed order, through a proxy
/// with a faults file: which fail, and how, is what the seeded rules pick call for
/// call. A dropped answer is a timeout to the SDK (it gives up after 2 s, and says so),
/// which is when the log ends the call; a truncated one reaches it as cut text.
#[test]
fn fault_rules_fire_at_their_rates_with_a_fixed_seed_as_the_python_sdk_sees_it() {
    let Some(peers) = Peers::find() else { return };
    let dir = private_dir("py-faults");
    let rules = json!({"seed": 11, "rules": [
        {"tool": "structs_query_player", "error": "RATE_LIMIT_EXCEEDED",
         "details": {"retry_after_ms": 1500}, "rate": 0.4},
        {"tool": "structs_query_planet", "every": 2, "drop_response": true},
        {"tool": "structs_query_planet", "truncate": 30},
        {"tool": "structs_query_player", "every": 5, "oversize": 30000}
    ]});
    let file = dir.join("faults.json");
    std::fs::write(&file, rules.to_string()).unwrap();
    let log = dir.join("faults.jsonl");
    let proxy = strings(&[
        BIN,
        "proxy",
        "--embedded",
        "--record",
        &path(&log),
        "--control",
        &path(&dir.join("f.sock")),
        "--faults",
        &path(&file),
        "--",
        "--paused",
        "--log-level",
        "warn",
    ]);
    let report = run(&peers, &scenario("faults", &["20"], &proxy));

    // The agent's order: every fourth call a planet, the others a player.
    let mut expected = Faults::from_json(&rules).unwrap();
    // The calls no rule touched (replayed), and those padded.
    let mut clean = 0;
    let mut padded = Vec::new();
    let want: Vec<(String, String)> = (1..=20u64)
        .map(|n| {
            let (tool, args) = if n % 4 == 0 {
                ("structs_query_planet", json!({"planet_id": "2-1"}))
            } else {
                ("structs_query_player", json!({"player_id": "1-1"}))
            };
            let fired = expected.pick(tool, &args);
            clean += usize::from(fired.is_empty());
            if let Some((_, Fault::Oversize(_))) = fired.first() {
                padded.push(n);
            }
            let outcome = match fired.first().map(|(_, f)| f) {
                None | Some(Fault::Truncate(_) | Fault::Oversize(_)) => "ok",
                Some(Fault::Error(_)) => "RATE_LIMIT_EXCEEDED",
                Some(Fault::DropResponse) => "timeout",
                Some(other) => panic!("no such rule: {other:?}"),
            };
            (tool.to_string(), outcome.to_string())
        })
        .collect();
    let got: Vec<(String, String)> = report
        .iter()
        .filter(|v| v["step"].is_u64())
        .map(|v| {
            (
                v["tool"].as_str().unwrap().to_string(),
                v["outcome"]
                    .as_str()
                    .map_or_else(|| v["outcome"].to_string(), str::to_string),
            )
        })
        .collect();
    assert_eq!(got, want, "{report:#?}");
    let errors = want
        .iter()
        .filter(|(_, o)| o == "RATE_LIMIT_EXCEEDED")
        .count();
    assert!((2..=13).contains(&errors), "{errors} of 15 at 0.4");
    assert_eq!(
        want.iter().filter(|(_, o)| o == "timeout").count(),
        2,
        "every second planet call"
    );
    for v in report
        .iter()
        .filter(|v| v["outcome"] == "RATE_LIMIT_EXCEEDED")
    {
        assert_eq!(v["details"], json!({"retry_after_ms": 1500}), "{v}");
    }
    // A padded answer is the same answer, 30,000 bytes big: the SDK takes it, and its
    // text is still the answer's JSON.
    assert!(!padded.is_empty(), "every fifth player call");
    for v in report
        .iter()
        .filter(|v| padded.contains(&v["step"].as_u64().unwrap_or(0)))
    {
        let text = v["text"][0].as_str().unwrap_or_default();
        assert!(text.len() > 29_000, "{} bytes", text.len());
        let answer: Value = serde_json::from_str(text.trim_end()).expect("still JSON");
        assert_eq!(answer["player"]["Player"]["id"], "1-1");
    }
    // A planet answer that reached the agent was cut to 30 bytes of text, and the SDK
    // took it (its structured content, which the SDK checks, is whole).
    let cut: Vec<&Value> = report
        .iter()
        .filter(|v| v["tool"] == "structs_query_planet" && v["outcome"] == "ok")
        .collect();
    assert_eq!(cut.len(), 3, "{report:#?}");
    for v in cut {
        let text = v["text"][0].as_str().unwrap_or_default();
        assert_eq!(text.len(), 30, "{v}");
        assert!(serde_json::from_str::<Value>(text).is_err(), "{v}");
    }

    // The log marks each injected answer with its rule, and the rest replays.
    let lines = log_lines(&log);
    let injected: Vec<&str> = lines
        .iter()
        .filter(|l| l["type"] == "response")
        .filter_map(|l| l["injected"].as_str())
        .collect();
    assert_eq!(
        injected
            .iter()
            .filter(|i| **i == "error RATE_LIMIT_EXCEEDED (rule 1)")
            .count(),
        errors
    );
    assert_eq!(
        injected
            .iter()
            .filter(|i| **i == "dropped response (rule 2)")
            .count(),
        2
    );
    // A dropped answer is no answer: the call ends when the SDK gives up on it, as
    // cancelled, not as a timeout of the proxy's own.
    for l in lines
        .iter()
        .filter(|l| l["injected"] == "dropped response (rule 2)")
    {
        assert_eq!(l["error"]["error"]["code"], "TOOL_CANCELLED", "{l}");
        // The SDK's 2 s run from before the request reached the proxy, whose clock
        // starts when it did: a little under 2 s here.
        assert!(l["duration_ms"].as_f64().unwrap() >= 1900.0, "{l}");
    }
    // The calls no rule touched run again; the others got answers changed on their
    // way (an error, cut, dropped, padded), so they are not.
    let text = replay_check(&log);
    let calls = if clean == 1 { "call" } else { "calls" };
    assert!(
        text.contains(&format!("replayed {clean} {calls} ")),
        "{text}"
    );
    assert!(
        text.contains(&format!("{clean} the same, 0 different")),
        "{text}"
    );
    assert_eq!(
        text.matches("got an injected answer").count(),
        20 - clean,
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn instants_are_found_in_bytes_with_or_without_a_fraction() {
    let (text, n) = without_instants(
        br#"{"timestamp":"2026-11-26T03:30:18Z","t":"2026-11-26T03:30:18.366Z","id":"1-1","x":"2026-11-26T03:30:18"}"#,
    );
    assert_eq!(n, 2);
    assert_eq!(
        text,
        r#"{"timestamp":"<instant>","t":"<instant>","id":"1-1","x":"2026-11-26T03:30:18"}"#
    );
}
