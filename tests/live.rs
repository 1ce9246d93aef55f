//! The live feed: a `proxy` (and `--headless --control`) publishes its traffic on a
//! private Unix socket, `structs-console watch` reads it (or follows a growing session
//! log), and the console's Live tab folds it into calls.

mod support;

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use structs_console::record::live::{Live, Status};
use support::agent::{
    Agent, BIN, PROXIED, endless_search, lines_of, runtime_dir, socket_from, until,
};

#[test]
fn a_proxy_publishes_every_call_to_its_watchers_as_it_happens() {
    let dir = runtime_dir("proxy");
    // Recording to a log, the proxy keeps the newest lines for a watcher who comes
    // late (without a log it does the work of a line only while someone watches).
    let log = dir.join("agent.jsonl");
    let args: Vec<&str> = ["proxy", "--record", log.to_str().unwrap()]
        .into_iter()
        .chain(PROXIED[1..].iter().copied())
        .collect();
    let (mut agent, stderr) = Agent::start(&args, &dir);
    let socket = socket_from(&stderr);
    // The default endpoint: in a folder only this user opens, itself only theirs.
    assert_eq!(socket.parent().unwrap(), dir.join("structs-console"));
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir.join("structs-console")), 0o700);
    assert_eq!(mode(&socket), 0o600);

    agent.call(1, "structs_query_player", json!({"player_id": "1-1"}), None);
    until(&agent.out, "the first answer", |v| v["id"] == 1);

    // A watcher attaching now sees the call before it, then the ones after. Without a
    // path, `watch` finds the newest live endpoint.
    let mut watcher = Command::new(BIN)
        .args(["watch", "--json"])
        .env("XDG_RUNTIME_DIR", &dir)
        .env("TMPDIR", &dir)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let watched = lines_of(watcher.stdout.take().unwrap());
    let hello = until(&watched, "the hello", |_| true);
    assert_eq!(hello[0]["type"], "hello");
    assert_eq!(hello[0]["server"], "proxy");
    assert!(
        hello[0]["description"]
            .as_str()
            .unwrap()
            .contains("--headless"),
        "{}",
        hello[0]
    );
    // (The agent's handshake is a request of the log too, before it.)
    let mut seen = until(&watched, "the first call's answer", |v| {
        v["type"] == "response" && v["tool"] == "structs_query_player"
    });

    agent.call(
        2,
        "structs_query_player",
        json!({"player_id": "1-999"}),
        None,
    );
    agent.call(
        3,
        "structs_calculate_proof_of_work",
        endless_search(),
        Some("p-3"),
    );
    seen.extend(until(&watched, "progress of the search", |v| {
        v["method"] == "notifications/progress"
    }));
    agent.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 3, "reason": "the agent gave up"}}),
    );
    seen.extend(until(&watched, "the search's end", |v| {
        v["type"] == "response" && v["tool"] == "structs_calculate_proof_of_work"
    }));

    let search = seen
        .iter()
        .find(|v| v["type"] == "request" && v["tool"] == "structs_calculate_proof_of_work")
        .expect("the search's request");
    assert_eq!(search["progress_token"], "p-3");
    assert_eq!(search["arguments"]["difficulty"], 700);

    // Folded into calls, as the Live tab shows them.
    let mut live = Live::new();
    for v in &seen {
        assert!(live.line(v.to_string().as_bytes()), "{v}");
    }
    // Every request is there: the handshake first, then the tool calls.
    assert_eq!(
        live.calls().front().and_then(|c| c.method.as_deref()),
        Some("initialize")
    );
    let states: Vec<(String, Status)> = live
        .calls()
        .iter()
        .filter(|c| c.method.is_none())
        .map(|c| (c.tool.clone(), c.status.clone()))
        .collect();
    assert_eq!(
        states,
        [
            ("structs_query_player".to_string(), Status::Answered),
            (
                "structs_query_player".to_string(),
                Status::Failed("RESOURCE_NOT_FOUND".into())
            ),
            (
                "structs_calculate_proof_of_work".to_string(),
                Status::Cancelled
            ),
        ]
    );
    assert_eq!(live.sessions().len(), 1);

    // The host closes the proxy: its socket goes, and the watcher ends with it.
    let status = agent.finish();
    assert!(status.success(), "{status:?}");
    assert!(!socket.exists(), "the socket is removed");
    let start = Instant::now();
    while watcher.try_wait().unwrap().is_none() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "watch did not end"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn headless_publishes_with_control_and_the_console_watches_it() {
    let dir = runtime_dir("headless");
    let socket = dir.join("mine.sock");
    let (mut agent, _stderr) = Agent::start(
        &[
            "--headless",
            "--paused",
            "--log-level",
            "warn",
            "--control",
            socket.to_str().unwrap(),
        ],
        &dir,
    );
    agent.call(1, "structs_query_player", json!({"player_id": "1-1"}), None);
    until(&agent.out, "the answer", |v| v["id"] == 1);

    // The console's Live tab, on the same socket.
    let rt = support::console::runtime();
    let (core, _) = support::sim::paused_core(structs_console::source::sim::WorldConfig::demo());
    let mut app = structs_console::tui::App::new(
        core,
        structs_console::tui::Theme::default(),
        rt.handle().clone(),
    );
    app.watch(&socket).expect("watch the socket");
    assert_eq!(app.tab(), structs_console::tui::Tab::Live);
    agent.call(
        2,
        "structs_list_entities",
        json!({"entity_type": "planet"}),
        None,
    );
    let start = Instant::now();
    loop {
        app.update();
        let calls = app.live_calls();
        if calls.len() == 2 && calls.iter().all(|c| c.2 == "ok") {
            assert_eq!(calls[1].1, "structs_list_entities");
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the Live tab has {calls:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let frame = support::console::draw(&mut app, 100, 30);
    assert!(frame.contains("Live · headless"), "{frame}");
    assert!(frame.contains("list_entities"), "{frame}");
    assert!(agent.finish().success());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_growing_session_log_is_followed() {
    let dir = runtime_dir("follow");
    let log = dir.join("agent.jsonl");
    std::fs::write(
        &log,
        "{\"v\":1,\"session\":\"s\",\"seq\":1,\"type\":\"request\",\"call\":1,\"tool\":\"t\",\"arguments\":{}}\n",
    )
    .unwrap();
    let mut watcher = Command::new(BIN)
        .args(["watch", log.to_str().unwrap()])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let watched = lines_of(watcher.stdout.take().unwrap());
    until(&watched, "the line already there", |v| {
        v["type"] == "request"
    });
    let mut file = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    // Half a line, then the rest: only whole lines are passed on.
    file.write_all(b"{\"v\":1,\"session\":\"s\",\"seq\":2,\"type\":\"resp")
        .unwrap();
    file.flush().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    file.write_all(b"onse\",\"call\":1,\"tool\":\"t\",\"result\":{}}\n")
        .unwrap();
    let seen = until(&watched, "the line appended", |v| v["type"] == "response");
    assert_eq!(seen.len(), 1, "{seen:?}");
    let _ = watcher.kill();
    let _ = watcher.wait();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn watch_waits_for_an_endpoint_and_says_what_is_wrong_with_a_path() {
    let dir = runtime_dir("waiting");
    // Nothing live yet: watch waits, and takes the first endpoint to answer.
    let mut watcher = Command::new(BIN)
        .args(["watch"])
        .env("XDG_RUNTIME_DIR", &dir)
        .env("TMPDIR", &dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let said = lines_of(watcher.stderr.take().unwrap())
        .recv_timeout(Duration::from_secs(10))
        .unwrap();
    assert!(said.contains("waiting for a live endpoint"), "{said}");
    let watched = lines_of(watcher.stdout.take().unwrap());
    let (mut agent, _stderr) = Agent::start(PROXIED, &dir);
    // Attached once the proxy is up; a call then is seen as it happens.
    let hello = until(&watched, "the proxy's hello", |_| true);
    assert_eq!(hello[0]["type"], "hello");
    agent.call(1, "structs_query_player", json!({"player_id": "1-1"}), None);
    until(&watched, "the call", |v| v["type"] == "response");
    assert!(agent.finish().success());
    let _ = watcher.wait();

    let out = Command::new(BIN)
        .args(["watch", "/no/such/socket"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannot watch /no/such/socket"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_feed_folder_others_can_open_is_refused_and_the_agent_is_still_served() {
    let dir = runtime_dir("open");
    let shared = dir.join("structs-console");
    std::fs::create_dir_all(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (mut agent, stderr) = Agent::start(PROXIED, &dir);
    let said = stderr.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(said.contains("no live feed"), "{said}");
    assert!(said.contains("only this user"), "{said}");
    agent.call(1, "structs_query_player", json!({"player_id": "1-1"}), None);
    let answer = until(&agent.out, "the answer", |v| v["id"] == 1);
    assert!(answer.last().unwrap()["result"].is_object());
    assert!(agent.finish().success());

    // The same over HTTP, where the folder would keep the token.
    let (mut agent, stderr) = Agent::start(
        &[
            "proxy",
            "--control",
            "http://127.0.0.1:0",
            "--embedded",
            "--",
            "--paused",
        ],
        &dir,
    );
    let said = stderr.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(said.contains("no live feed"), "{said}");
    agent.call(1, "structs_query_player", json!({"player_id": "1-1"}), None);
    let answer = until(&agent.out, "the answer", |v| v["id"] == 1);
    assert!(answer.last().unwrap()["result"].is_object());
    assert!(agent.finish().success());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_control_url_that_is_not_plain_http_is_refused_as_a_url() {
    for url in ["https://127.0.0.1:9/control", "ftp://127.0.0.1:9"] {
        let out = Command::new(BIN)
            .args(["proxy", "--control", url, "--embedded", "--", "--paused"])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{said}");
        assert!(said.contains("plain http"), "{said}");
        assert!(!said.contains("No such file"), "{said}");
        let out = Command::new(BIN).args(["watch", url]).output().unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(said.contains("plain http"), "watch {url}: {said}");
    }
}

/// Reads an HTTP answer's head from `stream`, byte by byte (the rest is the protocol).
fn http_head(stream: &mut std::net::TcpStream) -> String {
    use std::io::Read;
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        assert_eq!(
            stream.read(&mut byte).unwrap(),
            1,
            "the head ended early: {head:?}"
        );
        head.push(byte[0]);
    }
    String::from_utf8(head).unwrap()
}

/// What a proxy with `--control http://…` says first on stderr, the URL of its feed in
/// it, and the URL's port.
fn control_url(stderr: &std::sync::mpsc::Receiver<String>) -> (String, String, u16) {
    let said = stderr
        .recv_timeout(Duration::from_secs(10))
        .expect("the proxy says where its feed is");
    let url = said
        .split("watch it with: structs-console watch ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no URL in {said:?}"))
        .to_string();
    let port = url.rsplit(':').next().unwrap().parse().unwrap();
    (said, url, port)
}

/// `--control http://127.0.0.1:0`: the feed over loopback HTTP, upgraded to the
/// socket's own protocol, with a token kept in a file only its user reads.
#[test]
fn the_control_endpoint_over_loopback_http_takes_only_its_token() {
    let dir = runtime_dir("control-http");
    let (mut agent, stderr) = Agent::start(
        &[
            "proxy",
            "--control",
            "http://127.0.0.1:0",
            "--",
            BIN,
            "--headless",
            "--paused",
            "--log-level",
            "warn",
        ],
        &dir,
    );
    let (said, url, port) = control_url(&stderr);
    let file = dir.join(format!("structs-console/control-{port}.token"));
    assert!(said.contains(file.to_str().unwrap()), "{said}");
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "only its user reads the token");
    let token = std::fs::read_to_string(&file).unwrap().trim().to_string();
    assert_eq!(token.len(), 32, "a token made at random: {token}");

    // `watch URL` finds the token in the file and prints the feed.
    let mut watch = Command::new(BIN)
        .args(["watch", &url, "--json"])
        .env("XDG_RUNTIME_DIR", &dir)
        .env("TMPDIR", &dir)
        .env_remove("STRUCTS_CONSOLE_CONTROL_TOKEN")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let watched = lines_of(watch.stdout.take().unwrap());
    until(&watched, "the hello", |v| v["type"] == "hello");

    // Refused: no token, a wrong one, a browser's Origin, no upgrade.
    let ask = |extra: &str| {
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        write!(
            stream,
            "GET /control HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{extra}\r\n"
        )
        .unwrap();
        (http_head(&mut stream), stream)
    };
    let upgrade = "Connection: Upgrade\r\nUpgrade: structs-control/1\r\n";
    assert!(ask(upgrade).0.starts_with("HTTP/1.1 401"));
    let wrong = format!("Authorization: Bearer {}\r\n{upgrade}", "f".repeat(32));
    assert!(ask(&wrong).0.starts_with("HTTP/1.1 401"));
    let auth = format!("Authorization: Bearer {token}\r\n");
    let browser = format!("{auth}Origin: http://127.0.0.1:{port}\r\n{upgrade}");
    assert!(ask(&browser).0.starts_with("HTTP/1.1 403"));
    assert!(ask(&auth).0.starts_with("HTTP/1.1 426"));

    // With its token: the socket's protocol, commands and all.
    let (head, stream) = ask(&format!("{auth}{upgrade}"));
    assert!(head.starts_with("HTTP/1.1 101"), "{head}");
    let mut sender = stream.try_clone().unwrap();
    let lines = lines_of(stream);
    until(&lines, "the hello", |v| v["type"] == "hello");
    writeln!(
        sender,
        "{}",
        json!({"cmd": "break", "tool": "structs_query_player"})
    )
    .unwrap();
    until(&lines, "the ack", |v| v["type"] == "ack");
    agent.call(1, "structs_query_player", json!({"player_id": "1-1"}), None);
    let held = until(&lines, "the held call", |v| v["type"] == "held")
        .pop()
        .unwrap();
    until(&watched, "the held call, by `watch`", |v| {
        v["type"] == "held"
    });
    writeln!(
        sender,
        "{}",
        json!({"cmd": "continue", "hold": held["hold"]})
    )
    .unwrap();
    let got = until(&agent.out, "the answer", |v| v["id"] == 1)
        .pop()
        .unwrap();
    assert_eq!(
        got["result"]["structuredContent"]["player"]["Player"]["id"],
        "1-1"
    );
    until(&watched, "the answer, by `watch`", |v| {
        v["type"] == "response" && v["tool"] == "structs_query_player"
    });
    drop(sender);
    assert!(agent.finish().success());
    let _ = watch.kill();
    let _ = watch.wait();
    assert!(!file.exists(), "the token file goes with its endpoint");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A host that starts the proxy with a pared-down environment (the official SDKs pass
/// no `XDG_RUNTIME_DIR`) still has it found by a `watch` in the operator's terminal,
/// which has one.
#[test]
fn watch_finds_a_proxy_a_host_started_without_the_runtime_folder_variable() {
    let dir = runtime_dir("stripped");
    let mut proxy = Command::new(BIN)
        .args(PROXIED)
        .env_remove("XDG_RUNTIME_DIR")
        .env("TMPDIR", &dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let socket = socket_from(&lines_of(proxy.stderr.take().unwrap()));
    assert!(!socket.starts_with(dir.join("xdg")), "{}", socket.display());
    let mut watcher = Command::new(BIN)
        .args(["watch", "--json"])
        .env("XDG_RUNTIME_DIR", dir.join("xdg"))
        .env("TMPDIR", &dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let watched = lines_of(watcher.stdout.take().unwrap());
    let hello = until(&watched, "the proxy's hello", |_| true);
    assert_eq!(hello[0]["server"], "proxy");
    assert_eq!(hello[0]["pid"], proxy.id());
    drop(proxy.stdin.take());
    let _ = proxy.wait();
    let _ = watcher.wait();
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--control` alone, as `--help` and the README give it: the default socket, in this
/// user's own folder, publishing the calls.
#[test]
fn headless_control_without_a_path_publishes_on_the_default_socket() {
    let dir = runtime_dir("headless-default");
    let (mut agent, stderr) = Agent::start(
        &["--headless", "--paused", "--log-level", "warn", "--control"],
        &dir,
    );
    let socket = socket_from(&stderr);
    assert_eq!(socket.parent().unwrap(), dir.join("structs-console"));
    let mut watcher = Command::new(BIN)
        .args(["watch", "--json"])
        .arg(&socket)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let watched = lines_of(watcher.stdout.take().unwrap());
    let hello = until(&watched, "the hello", |_| true);
    assert_eq!(hello[0]["server"], "headless");
    agent.call(1, "structs_query_block_height", json!({}), None);
    until(&agent.out, "the answer", |v| v["id"] == 1);
    until(&watched, "the call's answer", |v| {
        v["type"] == "response" && v["tool"] == "structs_query_block_height"
    });
    assert!(agent.finish().success());
    let _ = watcher.wait();
    let _ = std::fs::remove_dir_all(&dir);
}

/// Idle connections that never send a request (so never show a token) cannot lock a
/// watcher out, nor use up the proxy's files: under a limit of 256 open files, 600
/// of them are held open while a watcher attaches and the agent is served.
#[test]
fn idle_connections_to_the_http_control_cannot_lock_a_watcher_out() {
    let dir = runtime_dir("control-idle");
    let mut child = Command::new("sh")
        .args(["-c", "ulimit -n 256 && exec \"$0\" \"$@\""])
        .arg(BIN)
        .args([
            "proxy",
            "--control",
            "http://127.0.0.1:0",
            "--embedded",
            "--",
            "--paused",
        ])
        .env("XDG_RUNTIME_DIR", &dir)
        .env("TMPDIR", &dir)
        .env_remove("STRUCTS_CONSOLE_CONTROL_TOKEN")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = lines_of(child.stderr.take().unwrap());
    let (_, _, port) = control_url(&stderr);
    let token = std::fs::read_to_string(dir.join(format!("structs-console/control-{port}.token")))
        .unwrap()
        .trim()
        .to_string();
    let idle: Vec<_> = (0..600)
        .filter_map(|_| std::net::TcpStream::connect(("127.0.0.1", port)).ok())
        .collect();
    assert!(idle.len() >= 500, "{} connected", idle.len());
    std::thread::sleep(Duration::from_millis(300));

    let started = Instant::now();
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    write!(
        stream,
        "GET /control HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\nConnection: Upgrade\r\nUpgrade: structs-control/1\r\n\r\n"
    )
    .unwrap();
    let head = http_head(&mut stream);
    assert!(head.starts_with("HTTP/1.1 101"), "{head}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "attached in {:?}",
        started.elapsed()
    );
    // The agent is served meanwhile.
    let mut stdin = child.stdin.take().unwrap();
    let out = lines_of(child.stdout.take().unwrap());
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}})
    )
    .unwrap();
    until(&out, "the handshake", |v| v["id"] == 0);
    drop(idle);
    drop(stdin);
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
}
