//! Every example the project ships is data this test runs: each tool call written in
//! README.md, the user guide (book/src/) and docs/ (`structs_tool {json}` in code, a plan or a `{"tool",
//! "arguments"}` object in a JSON block) runs against the demo world and succeeds, or
//! fails with the error code the text names beside it; each `structs-console` command
//! line in a shell block starts as the text says it does.

mod support;

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use structs_console::clock::WallClock;
use structs_console::source::sim::{BlockClock, SimSource, WorldConfig};
use structs_console::{Core, ErrorCode};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every Markdown file under docs/, in a stable order.
fn documents() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "md") {
                out.push(p);
            }
        }
    }
    let mut out = vec![root().join("README.md")];
    walk(&root().join("book/src"), &mut out);
    walk(&root().join("docs"), &mut out);
    out
}

/// One example found in a document.
#[derive(Debug, Clone)]
enum Example {
    /// A tool call, and the error code the text says it answers with, if any.
    Call {
        tool: String,
        args: Value,
        fails_with: Option<String>,
    },
    /// A `structs-console` command line from a shell block.
    Command(Vec<String>),
    /// Written like a call, but its arguments are not JSON (placeholders).
    Broken(String),
    /// A TOML block that names its file in its first line (`# team.toml`): written to
    /// the folder the command lines run in, for the lines after it to read.
    File { name: String, text: String },
}

#[derive(Debug, Clone)]
struct Found {
    doc: String,
    line: usize,
    text: String,
    example: Example,
}

/// A code block: its language, first line (1-based) and text.
struct Block {
    lang: String,
    line: usize,
    text: String,
}

/// Splits a Markdown text into its fenced blocks and its prose (fences blanked, so
/// line numbers stay).
fn split(text: &str) -> (Vec<Block>, String) {
    let mut blocks = Vec::new();
    let mut prose = String::new();
    let mut open: Option<Block> = None;
    for (n, line) in text.lines().enumerate() {
        let fence = line.trim_start().starts_with("```");
        match (&mut open, fence) {
            (None, true) => {
                open = Some(Block {
                    lang: line.trim_start().trim_start_matches('`').trim().to_string(),
                    line: n + 2,
                    text: String::new(),
                });
                prose.push('\n');
            }
            (Some(_), true) => {
                blocks.push(open.take().unwrap());
                prose.push('\n');
            }
            (Some(b), false) => {
                b.text.push_str(line);
                b.text.push('\n');
                prose.push('\n');
            }
            (None, false) => {
                prose.push_str(line);
                prose.push('\n');
            }
        }
    }
    (blocks, prose)
}

/// The error code named in backticks in `after` (the text that follows a call, up to
/// the end of its sentence), if any.
fn named_code(after: &str) -> Option<String> {
    let sentence = after.split(". ").next().unwrap_or(after);
    // Up to the next call written in the same sentence.
    let sentence = sentence.split("`structs_").next().unwrap_or(sentence);
    sentence
        .split('`')
        .skip(1)
        .step_by(2)
        .find_map(|code| ErrorCode::parse(code).is_some().then(|| code.to_string()))
}

/// Words of a shell command line, with simple quotes and comments.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for c in line.chars() {
        match (quote, c) {
            (None, '#') if !any => break,
            (None, '"' | '\'') => {
                quote = Some(c);
                any = true;
            }
            (Some(q), c) if c == q => quote = None,
            (None, c) if c.is_whitespace() => {
                if any {
                    words.push(std::mem::take(&mut word));
                    any = false;
                }
            }
            (_, c) => {
                word.push(c);
                any = true;
            }
        }
    }
    if any {
        words.push(word);
    }
    words
}

fn examples(doc: &Path) -> Vec<Found> {
    let text = std::fs::read_to_string(doc).unwrap();
    let name = doc
        .strip_prefix(root())
        .unwrap_or(doc)
        .display()
        .to_string();
    let (blocks, prose) = split(&text);
    let mut out = Vec::new();
    // Calls in inline code: `structs_tool {json}`, possibly over several lines.
    let mut rest = prose.as_str();
    let mut offset = 0;
    while let Some(start) = rest.find('`') {
        let after_start = &rest[start + 1..];
        let Some(len) = after_start.find('`') else {
            break;
        };
        let span = after_start[..len].replace('\n', " ");
        let line = prose[..offset + start].matches('\n').count() + 1;
        let tail = &after_start[len + 1..];
        if let Some((tool, json_text)) = span.split_once(' ')
            && tool.starts_with("structs_")
            && tool.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
            && json_text.trim_start().starts_with('{')
        {
            let after: String = tail.chars().take(300).collect();
            let example = match serde_json::from_str(json_text) {
                Ok(args) => Example::Call {
                    tool: tool.to_string(),
                    args,
                    fails_with: named_code(&after),
                },
                Err(e) => Example::Broken(format!("its arguments are not JSON ({e})")),
            };
            out.push(Found {
                doc: name.clone(),
                line,
                text: span.clone(),
                example,
            });
        }
        let used = start + 1 + len + 1;
        offset += used;
        rest = &rest[used..];
    }
    for b in blocks {
        match b.lang.as_str() {
            "json" => {
                let Ok(v) = serde_json::from_str::<Value>(&b.text) else {
                    continue;
                };
                let call = if v.get("steps").is_some() {
                    Some(("structs_plan_execute".to_string(), v.clone()))
                } else if let (Some(tool), Some(args)) = (v["tool"].as_str(), v.get("arguments")) {
                    Some((tool.to_string(), args.clone()))
                } else {
                    None
                };
                if let Some((tool, args)) = call {
                    let after = &text
                        .lines()
                        .skip(b.line + b.text.lines().count())
                        .take(3)
                        .collect::<Vec<_>>()
                        .join(" ");
                    out.push(Found {
                        doc: name.clone(),
                        line: b.line,
                        text: format!("{tool} {}", b.text.trim()),
                        example: Example::Call {
                            tool,
                            args,
                            fails_with: named_code(after),
                        },
                    });
                }
            }
            "toml" => {
                let first = b.text.lines().next().unwrap_or_default().trim();
                if let Some(file) = first.strip_prefix("# ")
                    && file.ends_with(".toml")
                    && !file.contains(['/', ' '])
                {
                    out.push(Found {
                        doc: name.clone(),
                        line: b.line,
                        text: file.to_string(),
                        example: Example::File {
                            name: file.to_string(),
                            text: b.text.clone(),
                        },
                    });
                }
            }
            "sh" | "bash" | "shell" => {
                for (n, l) in b.text.lines().enumerate() {
                    let words = shell_words(l);
                    if words.first().is_some_and(|w| w == "structs-console") {
                        out.push(Found {
                            doc: name.clone(),
                            line: b.line + n,
                            text: l.trim().to_string(),
                            example: Example::Command(words[1..].to_vec()),
                        });
                    }
                }
            }
            _ => {}
        }
    }
    out
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Runs a call on `core`; a proof that waits for its difficulty gets its blocks.
async fn run_call(core: &Core, sim: &SimSource, tool: &str, args: Value) -> Result<Value, Value> {
    let call = core.call_json(tool, args);
    tokio::pin!(call);
    let start = Instant::now();
    loop {
        tokio::select! {
            answer = &mut call => return answer,
            _ = tokio::time::sleep(Duration::from_millis(200)) => {
                assert!(start.elapsed() < Duration::from_secs(120), "{tool}: no answer in 120 s");
                sim.clock().step(500);
            }
        }
    }
}

#[test]
fn every_tool_call_in_the_docs_runs_on_the_demo_world() {
    let runtime = rt();
    let mut total = 0;
    let mut failures = Vec::new();
    for doc in documents() {
        let found: Vec<Found> = examples(&doc)
            .into_iter()
            .filter(|f| matches!(f.example, Example::Call { .. } | Example::Broken(_)))
            .collect();
        if found.is_empty() {
            continue;
        }
        // A fresh demo world for each document, its calls in the order written.
        let config = WorldConfig::demo();
        let sim = Arc::new(SimSource::new(
            config,
            BlockClock::paused(config.genesis_height),
        ));
        let core = structs_console::assembly::build_with_clock(sim.clone(), WallClock::System);
        for f in found {
            total += 1;
            let (tool, args, fails_with) = match &f.example {
                Example::Call {
                    tool,
                    args,
                    fails_with,
                } => (tool, args, fails_with),
                Example::Broken(why) => {
                    failures.push(format!(
                        "{}:{}: `{}`\n    {why}; write a call that runs",
                        f.doc, f.line, f.text
                    ));
                    continue;
                }
                Example::Command(_) | Example::File { .. } => continue,
            };
            let answer = runtime.block_on(run_call(&core, &sim, tool, args.clone()));
            let problem = match (&answer, fails_with) {
                (Ok(_), None) => None,
                (Err(e), Some(code)) if e["error"]["code"] == code.as_str() => None,
                (Ok(_), Some(code)) => {
                    Some(format!("the text says it fails with {code}, it succeeded"))
                }
                (Err(e), _) => Some(format!("{}: {}", e["error"]["code"], e["error"]["message"])),
            };
            if let Some(p) = problem {
                failures.push(format!("{}:{}: `{}`\n    {p}", f.doc, f.line, f.text));
            }
        }
    }
    assert!(total >= 20, "only {total} calls found in the docs");
    assert!(
        failures.is_empty(),
        "{} of {total} calls in the docs do not do what the text says:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// What a command line did in its first seconds.
enum Started {
    /// Still running: a server that came up.
    Running,
    Exited(i32, String),
}

/// Starts a command line. A stdio MCP server (`--headless` without `--http`) must
/// answer an `initialize` request; anything else must keep running for 3 s or end well.
fn start(dir: &Path, args: &[String]) -> Started {
    // `--headless`, and a proxy of one (`proxy --embedded`), serve MCP on stdio.
    let stdio_server = args.iter().any(|a| a == "--headless" || a == "--embedded")
        && !args.iter().any(|a| a == "--http");
    // A `--connect "structs-console …"` line starts the binary by its name.
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_structs-console"))
        .parent()
        .unwrap()
        .to_path_buf();
    let path = std::env::join_paths(std::iter::once(bin_dir).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_structs-console"))
        .args(args)
        .env("PATH", path)
        .current_dir(dir)
        .stdin(if stdio_server {
            std::process::Stdio::piped()
        } else {
            std::process::Stdio::null()
        })
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    if stdio_server {
        let mut stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        writeln!(
            stdin,
            r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"examples","version":"1"}}}}}}"#
        )
        .unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = std::io::BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let answer = rx.recv_timeout(Duration::from_secs(10)).unwrap_or_default();
        drop(stdin);
        let _ = child.kill();
        let _ = child.wait();
        let v: Value = serde_json::from_str(&answer).unwrap_or_default();
        return if v["result"]["serverInfo"]["name"] == "structs-console" {
            Started::Exited(0, answer)
        } else {
            Started::Exited(-1, format!("no answer to initialize: {answer:?}"))
        };
    }
    let until = Instant::now() + Duration::from_secs(3);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let out = child.wait_with_output().unwrap();
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            return Started::Exited(status.code().unwrap_or(-1), text);
        }
        if Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            return Started::Running;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Records a short real session at `log` (as `--headless --paused --record` writes it):
/// the handshake and one call, on the same world the examples replay on.
fn record_a_session(log: &Path) {
    let _ = std::fs::remove_file(log);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_structs-console"))
        .args(["--headless", "--paused", "--log-level", "warn", "--record"])
        .arg(log)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    for line in [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"examples","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"structs_query_player","arguments":{"player_id":"1-1"}}}"#,
    ] {
        writeln!(stdin, "{line}").unwrap();
    }
    let mut answered = 0;
    let mut line = String::new();
    while answered < 2 && out.read_line(&mut line).is_ok_and(|n| n > 0) {
        answered += usize::from(line.contains("\"id\":"));
        line.clear();
    }
    drop(stdin);
    let _ = child.wait();
}

/// The addresses a command names, made safe to run here: a node's REST address
/// (`--endpoint`, wherever it is) becomes a stand-in node the test runs (this
/// program's `serve-rest`), each other loopback port a free one (the same one for the
/// same port), and a NATS or Redis address a real server's. No test sends traffic off
/// the machine.
struct Addresses {
    ports: HashMap<String, u16>,
    nats: Option<String>,
    redis: Option<String>,
    node: String,
}

impl Addresses {
    fn rewrite_all(&mut self, args: &[String]) -> Vec<String> {
        let mut out = Vec::new();
        let mut endpoint = false;
        for a in args {
            out.push(if endpoint {
                self.node.clone()
            } else {
                self.rewrite(a)
            });
            endpoint = a == "--endpoint";
        }
        out
    }

    fn rewrite(&mut self, arg: &str) -> String {
        let Some((scheme, rest)) = arg.split_once("://") else {
            return match arg.rsplit_once(':') {
                Some((host, port)) if is_loopback(host) && port.parse::<u16>().is_ok() => {
                    format!("127.0.0.1:{}", self.port(port))
                }
                _ => arg.to_string(),
            };
        };
        let (authority, path) = rest.split_once('/').map_or((rest, ""), |(a, p)| (a, p));
        let (host, port) = authority.rsplit_once(':').unwrap_or((authority, ""));
        if scheme == "nats"
            && let Some(nats) = &self.nats
        {
            return nats.clone();
        }
        if scheme == "redis"
            && let Some(redis) = &self.redis
        {
            return redis.clone();
        }
        if !is_loopback(host) || port.is_empty() {
            return arg.to_string();
        }
        let port = self.port(port);
        let path = if path.is_empty() {
            String::new()
        } else {
            format!("/{path}")
        };
        format!("{scheme}://127.0.0.1:{port}{path}")
    }

    fn port(&mut self, written: &str) -> u16 {
        *self
            .ports
            .entry(written.to_string())
            .or_insert_with(support::daemon::free_port)
    }
}

fn is_loopback(host: &str) -> bool {
    matches!(host, "localhost" | "127.0.0.1" | "[::1]")
}

/// Each `structs-console` line of a shell block starts: a server comes up and keeps
/// running, a one-shot command ends well, and the console, which needs a terminal,
/// says so rather than refusing its arguments. They run in the order written, in one
/// folder, so a log one line records is there for the next to replay.
#[test]
fn every_command_line_in_the_docs_starts() {
    let dir = std::env::temp_dir().join(format!("structs-examples-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let nats = support::nats::NatsServer::start();
    let redis = support::redis::RedisServer::start();
    // The stand-in node for every `--endpoint`.
    let node_port = support::daemon::free_port();
    let mut node = std::process::Command::new(env!("CARGO_BIN_EXE_structs-console"))
        .args([
            "serve-rest",
            "--listen",
            &format!("127.0.0.1:{node_port}"),
            "--paused",
        ])
        // serve-rest takes this token too; the REST source sends none.
        .env_remove("STRUCTS_CONSOLE_AUTH_TOKEN")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let up = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", node_port)).is_err() {
        assert!(
            up.elapsed() < Duration::from_secs(20),
            "the stand-in node did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut addresses = Addresses {
        ports: HashMap::new(),
        nats: nats.as_ref().map(|n| n.url()),
        redis: redis.as_ref().map(|r| r.url()),
        node: format!("http://127.0.0.1:{node_port}"),
    };
    let mut total = 0;
    let mut failures = Vec::new();
    for doc in documents() {
        for f in examples(&doc) {
            if let Example::File { name, text } = &f.example {
                std::fs::write(dir.join(name), text).unwrap();
                continue;
            }
            let Example::Command(args) = &f.example else {
                continue;
            };
            let uses_nats = args.iter().any(|a| a.starts_with("nats://"));
            if uses_nats && addresses.nats.is_none() {
                eprintln!("note: no nats-server here; not starting `{}`", f.text);
                continue;
            }
            let uses_redis = args.iter().any(|a| a.starts_with("redis://"));
            if uses_redis && addresses.redis.is_none() {
                eprintln!("note: no redis-server here; not starting `{}`", f.text);
                continue;
            }
            total += 1;
            let args = addresses.rewrite_all(args);
            // `replay LOG --check` checks a session: one is recorded there first (a
            // file with no entries has nothing to check, and fails).
            if args.first().is_some_and(|a| a == "replay")
                && let Some(log) = args.get(1)
            {
                record_a_session(&dir.join(log));
            }
            match start(&dir, &args) {
                Started::Running | Started::Exited(0, _) => {}
                // The console without a terminal points to --headless: its arguments
                // were taken.
                Started::Exited(2, text) if text.contains("interactive terminal") => {}
                Started::Exited(code, text) => failures.push(format!(
                    "{}:{}: `{}` exited {code}: {}",
                    f.doc,
                    f.line,
                    f.text,
                    text.lines().take(3).collect::<Vec<_>>().join(" | ")
                )),
            }
        }
    }
    let _ = node.kill();
    let _ = node.wait();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(total >= 15, "only {total} command lines found");
    assert!(
        failures.is_empty(),
        "{} of {total} command lines do not start:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn the_example_finder_reads_calls_codes_and_commands() {
    let dir = std::env::temp_dir().join(format!("structs-examples-finder-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let doc = dir.join("x.md");
    std::fs::write(
        &doc,
        "Call `structs_query_player {\"player_id\":\n\"1-1\"}` first; `structs_query_player {\"player_id\": \"1-999\"}`\nanswers `RESOURCE_NOT_FOUND`.\n\n```sh\nstructs-console --connect \"a b\"   # a comment\ncargo test\n```\n",
    )
    .unwrap();
    let found = examples(&doc);
    assert_eq!(found.len(), 3, "{found:#?}");
    match &found[0].example {
        Example::Call {
            tool,
            args,
            fails_with,
        } => {
            assert_eq!(tool, "structs_query_player");
            assert_eq!(args, &json!({"player_id": "1-1"}));
            assert_eq!(fails_with, &None);
        }
        other => panic!("{other:?}"),
    }
    match &found[1].example {
        Example::Call { fails_with, .. } => {
            assert_eq!(fails_with.as_deref(), Some("RESOURCE_NOT_FOUND"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(found[1].line, 2);
    match &found[2].example {
        Example::Command(words) => assert_eq!(words, &["--connect", "a b"]),
        other => panic!("{other:?}"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A heading's anchor, as mdBook and the forges make it: lower case, spaces as `-`,
/// punctuation other than `-` and `_` left out.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown file's headings (outside code blocks).
fn anchors(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            let heading = line.trim_start_matches('#');
            if heading.starts_with(' ') {
                out.push(anchor(&heading.replace('`', "")));
            }
        }
    }
    out
}

/// The Markdown links of a text outside code: (line, target).
fn links(text: &str) -> Vec<(usize, String)> {
    let mut fenced = false;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let tail = &rest[at + 2..];
            let Some(end) = tail.find(')') else { break };
            out.push((n + 1, tail[..end].to_string()));
            rest = &tail[end..];
        }
    }
    out
}

/// Every link of the README and the user guide leads somewhere: a file that is there
/// and, after `#`, one of its headings.
#[test]
fn the_readme_and_the_book_link_only_to_what_is_there() {
    let mut files = vec![root().join("README.md")];
    let mut chapters: Vec<PathBuf> = std::fs::read_dir(root().join("book/src"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    chapters.sort();
    files.extend(chapters);
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (line, target) in links(&text) {
            if target.starts_with("http://") || target.starts_with("https://") {
                continue;
            }
            checked += 1;
            let (path, fragment) = target.split_once('#').unwrap_or((&target, ""));
            let to = if path.is_empty() {
                file.clone()
            } else {
                file.parent().unwrap().join(path)
            };
            let Ok(there) = std::fs::read_to_string(&to) else {
                broken.push(format!("{}:{line}: {target}: no such file", file.display()));
                continue;
            };
            if !fragment.is_empty() && !anchors(&there).iter().any(|a| a == fragment) {
                broken.push(format!(
                    "{}:{line}: {target}: no such heading",
                    file.display()
                ));
            }
        }
    }
    assert!(checked > 40, "only {checked} links found");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// Every chapter of the book is in its table of contents, and every entry there is a
/// chapter.
#[test]
fn every_chapter_is_in_the_books_summary() {
    let src = root().join("book/src");
    let summary = std::fs::read_to_string(src.join("SUMMARY.md")).unwrap();
    let listed: Vec<String> = links(&summary).into_iter().map(|(_, t)| t).collect();
    let mut chapters: Vec<String> = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md") && n != "SUMMARY.md")
        .collect();
    chapters.sort();
    let mut sorted = listed.clone();
    sorted.sort();
    assert_eq!(sorted, chapters);
}

/// The README stays a page: at most 300 lines, its picture of the console the frame a
/// reviewed snapshot holds.
#[test]
fn the_readme_is_short_and_its_picture_is_the_consoles() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(lines <= 300, "README.md has {lines} lines");
    let snap =
        std::fs::read_to_string(root().join("snapshots/tree_fetched_link_100x30.snap")).unwrap();
    let frame: Vec<String> = snap
        .lines()
        .skip_while(|l| !l.starts_with('"'))
        .map(|l| l.trim_matches('"').to_string())
        .collect();
    assert_eq!(frame.len(), 30);
    let start = readme
        .lines()
        .position(|l| l == frame[0])
        .expect("the README shows the console's first line");
    let shown: Vec<&str> = readme.lines().skip(start).take(frame.len()).collect();
    assert_eq!(shown, frame, "the README's picture is the snapshot's frame");
}
