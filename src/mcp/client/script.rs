//! `structs-console client`: the console's MCP client without the console, one
//! request per run, for scripts, CI and the conformance suite's client scenarios.
//!
//! It prints the server's answer as JSON on stdout and exits 0; an error answer (a
//! JSON-RPC error, or a tool result with `isError`) prints the error (the project's
//! error format, `{"error": {"code": …}}`) or the result and exits 1. The caller's own
//! mistakes (an option, JSON that is not, a session line that is no request) and a
//! server that cannot be reached are said on stderr and exit 2, before anything is
//! sent. `session` runs several requests in one session. A 2026-07-28 server's rounds of
//! input requests are answered by the flags, each reported on stderr as a JSON line
//! ([`super::rounds`]). With `--notifications` every
//! notification received (and a child's stderr lines) goes to stderr as JSON Lines.
//! It is the same [`Remote`] the console's Server tab uses.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::handler::{Answers, ElicitPolicy, RootDir, Script};
use super::inspect::CompleteRef;
use super::{Options, Protocol, Remote, Target, Which};
use crate::context::CallContext;
use crate::error::ToolError;

/// `structs-console client`'s options.
#[derive(Debug, clap::Args)]
pub struct ClientArgs {
    /// The server: a command line (started as a child, spoken to over stdio) or a
    /// streamable HTTP URL.
    #[arg(long, value_name = "TARGET")]
    pub connect: String,

    /// The bearer token sent to a --connect URL (`Authorization: Bearer TOKEN`); never
    /// to a command. Prefer the environment variable: a flag shows in the process
    /// list.
    #[arg(
        long,
        value_name = "TOKEN",
        env = "STRUCTS_CONSOLE_AUTH_TOKEN",
        hide_env_values = true
    )]
    pub auth_token: Option<String>,

    /// A directory offered to the server as a root (`roots/list`); repeatable.
    #[arg(long = "root", value_name = "DIR")]
    pub roots: Vec<PathBuf>,

    /// How to answer the server's `elicitation/create`: accept with the form's
    /// defaults, decline, or cancel.
    #[arg(long, value_name = "HOW", default_value = "decline",
          value_parser = ["accept-defaults", "decline", "cancel"])]
    pub elicitation: String,

    /// Answer a field of the server's form by name, typed by the form's schema
    /// (`--answer confirm=true`); repeatable. Any answer accepts the form, over its
    /// defaults; a form without such a field, or a value not of its type, is declined.
    #[arg(long = "answer", value_name = "NAME=VALUE")]
    pub answers: Vec<String>,

    /// How to answer the server's `sampling/createMessage`: this text as the
    /// assistant's reply, or `reject` (the default) to refuse it.
    #[arg(long, value_name = "TEXT|reject", default_value = "reject")]
    pub sampling_reply: String,

    /// The protocol version to offer: `newest` (the library's newest, falling back to
    /// the newest with an `initialize` handshake when the server does not speak it), or
    /// a version such as 2025-06-18.
    #[arg(long, value_name = "VERSION", default_value = "newest")]
    pub protocol_version: String,

    /// How long a request may go without an answer or progress, in seconds; and how
    /// long attaching may take in all (the handshake and the tool and prompt lists).
    #[arg(long, value_name = "SECS", default_value_t = 60,
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub timeout: u64,

    /// Print every notification received (and a child's stderr) to stderr, as JSON
    /// Lines.
    #[arg(long)]
    pub notifications: bool,

    #[command(flatten)]
    pub oauth: super::oauth::OAuthArgs,

    #[command(subcommand)]
    pub request: ClientRequestCmd,
}

/// What `structs-console client` asks.
#[derive(Debug, clap::Subcommand)]
pub enum ClientRequestCmd {
    /// The server's `initialize` answer: name, version, protocol, capabilities.
    Info,
    /// `tools/list`, every page.
    Tools,
    /// `tools/call`; exits 1 when the result is an error.
    Call {
        tool: String,
        /// The arguments, a JSON object.
        #[arg(long, value_name = "JSON", default_value = "{}")]
        args: String,
    },
    /// `resources/list`: every page, or the one at --cursor.
    Resources {
        #[arg(long)]
        cursor: Option<String>,
    },
    /// `resources/templates/list`: every page, or the one at --cursor.
    Templates {
        #[arg(long)]
        cursor: Option<String>,
    },
    /// `resources/read`.
    Read { uri: String },
    /// `skills/list` (the Skills extension), every page: nothing of a skill is read.
    Skills,
    /// Loads the skill NAME as a host would: its `SKILL.md` read and checked against
    /// the entry `skills/list` gave (size, SHA-256 digest, front matter), then each of
    /// its other files; exits 1, reading nothing more, at the first that differs.
    Skill { name: String },
    /// `resources/subscribe`, then wait for updates to the resource; exits 1 when
    /// fewer than --updates arrive within --wait.
    Subscribe {
        uri: String,
        #[arg(long, default_value_t = 1)]
        updates: usize,
        /// Seconds to wait for them.
        #[arg(long, default_value_t = 10)]
        wait: u64,
    },
    /// `prompts/list`: every page, or the one at --cursor.
    Prompts {
        #[arg(long)]
        cursor: Option<String>,
    },
    /// `prompts/get`.
    Prompt {
        name: String,
        /// The arguments, a JSON object of strings.
        #[arg(long, value_name = "JSON", default_value = "{}")]
        args: String,
    },
    /// `completion/complete` for a prompt's argument (`prompt:NAME`) or a resource
    /// template's variable (`resource:URI-TEMPLATE`).
    Complete {
        #[arg(value_name = "REF")]
        what: String,
        argument: String,
        #[arg(default_value = "")]
        value: String,
        /// The other arguments already chosen, a JSON object of strings.
        #[arg(long, value_name = "JSON")]
        context: Option<String>,
    },
    /// `logging/setLevel`; with --wait, then print the log messages that arrive.
    LogLevel {
        level: String,
        /// Seconds to collect `notifications/message` after setting the level.
        #[arg(long, default_value_t = 0)]
        wait: u64,
    },
    /// `ping`.
    Ping,
    /// Any request, by its method.
    Request {
        method: String,
        #[arg(long, value_name = "JSON", default_value = "{}")]
        params: String,
    },
    /// Several requests in one session: one per line of FILE (`-` for stdin), each
    /// written as this command's own subcommands are (`call echo --args '{"message":
    /// "hi"}'`); `#` starts a comment. Prints one compact JSON answer per line, then a
    /// summary (`answered`, `failed`), and exits 1 when any of them is an error. A line
    /// that is no request exits 2 before any is sent.
    Session {
        #[arg(value_name = "FILE")]
        file: PathBuf,
    },
}

/// One line of a `session` file, read as a subcommand.
#[derive(Debug, clap::Parser)]
#[command(name = "session line", no_binary_name = true)]
struct Line {
    #[command(subcommand)]
    request: ClientRequestCmd,
}

impl ClientArgs {
    /// The connection options these flags describe.
    ///
    /// # Errors
    ///
    /// A root that is not a directory, or an unknown protocol version.
    pub fn options(&self, token: Option<String>) -> Result<Options, String> {
        let roots = self
            .roots
            .iter()
            .map(|d| RootDir::from_dir(d))
            .collect::<Result<Vec<_>, _>>()?;
        let elicitation = match self.elicitation.as_str() {
            "accept-defaults" => ElicitPolicy::AcceptDefaults,
            "cancel" => ElicitPolicy::Cancel,
            _ => ElicitPolicy::Decline,
        };
        let sampling = (self.sampling_reply != "reject").then(|| self.sampling_reply.clone());
        let fields = self
            .answers
            .iter()
            .map(|a| match a.split_once('=') {
                Some((name, value)) if !name.trim().is_empty() => {
                    Ok((name.trim().to_string(), value.to_string()))
                }
                _ => Err(format!(
                    "--answer {a:?}: write it NAME=VALUE, e.g. confirm=true"
                )),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Options {
            token,
            idle_timeout: Duration::from_secs(self.timeout),
            // Attaching is waited on no longer than a request.
            connect_timeout: Duration::from_secs(self.timeout),
            protocol: Protocol::parse(&self.protocol_version)?,
            roots,
            answers: Answers::Script(Script {
                elicitation,
                sampling,
                fields,
            }),
            follow_height: false,
            tasks: true,
            oauth: self.oauth.config()?,
        })
    }
}

/// Runs one `structs-console client` request: connects, asks, prints, disconnects.
pub async fn run(args: ClientArgs, token: Option<String>) -> ExitCode {
    let fail = |e: String| {
        eprintln!("structs-console client: {e}");
        ExitCode::from(2)
    };
    let target = match Target::parse(&args.connect) {
        Ok(t) => t,
        Err(e) => return fail(format!("--connect: {e}")),
    };
    let options = match args.options(token) {
        Ok(o) => o,
        Err(e) => return fail(e),
    };
    // The caller's own mistakes (JSON that is not, a session line that is no request)
    // are found before the server is started or reached.
    let asked = match prepare(&args.request) {
        Ok(a) => a,
        Err(e) => return fail(e),
    };
    let remote = match Remote::connect_with_options(target, options).await {
        Ok(r) => r,
        Err(e) => return fail(format!("cannot attach to the server: {e:#}")),
    };
    let printed = Printed::new(args.notifications);
    // Ctrl-C (or SIGINT) cancels the request in flight: the server is sent
    // `notifications/cancelled`, and the answer is TOOL_CANCELLED.
    let ctx = CallContext::new();
    let session = matches!(asked, Ask::Session { .. });
    let asked = ask(&remote, &asked, &printed, ctx.clone());
    tokio::pin!(asked);
    let outcome = tokio::select! {
        outcome = &mut asked => outcome,
        _ = tokio::signal::ctrl_c() => {
            ctx.cancel();
            asked.await
        }
    };
    printed.flush(&remote);
    say_rounds(&remote);
    remote.close().await;
    let (value, ok) = shown(outcome);
    // A session's answers are JSON Lines, its summary one more line.
    if session {
        say(&value.to_string());
    } else {
        say(&pretty(&value));
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// What is printed for an answer, and whether it counts as a success.
fn shown(outcome: Result<(Value, bool), ToolError>) -> (Value, bool) {
    match outcome {
        Ok(answer) => answer,
        Err(e) => {
            let stamp = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
            (e.to_json(&stamp), false)
        }
    }
}

/// The requests of a `session` file, in one session: one answer per line, then the
/// summary.
async fn session(
    remote: &Arc<Remote>,
    name: &str,
    lines: &[Ask],
    printed: &Printed,
    ctx: CallContext,
) -> Result<(Value, bool), ToolError> {
    let (mut answered, mut failed) = (0, 0);
    for request in lines {
        let (value, ok) = shown(Box::pin(ask(remote, request, printed, ctx.clone())).await);
        say_rounds(remote);
        answered += 1;
        failed += usize::from(!ok);
        say(&value.to_string());
        if ctx.is_cancelled() {
            break;
        }
    }
    Ok((
        json!({"session": name, "answered": answered, "failed": failed, "ok": failed == 0}),
        failed == 0,
    ))
}

/// The lines of a `session` file, each read as a request. A line that is none is the
/// caller's mistake, said with its number.
fn session_lines(file: &std::path::Path) -> Result<Vec<Ask>, String> {
    let text = if file.as_os_str() == "-" {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text).map(|_| text)
    } else {
        std::fs::read_to_string(file)
    }
    .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let mut lines = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = |e: String| format!("{}, line {}: {e}", file.display(), n + 1);
        let words = super::split_words(line).map_err(at)?;
        let Line { request } = <Line as clap::Parser>::try_parse_from(words).map_err(|e| {
            let said = e.to_string();
            at(said
                .lines()
                .next()
                .unwrap_or("")
                .trim_start_matches("error: ")
                .to_string())
        })?;
        if matches!(request, ClientRequestCmd::Session { .. }) {
            return Err(at("a session cannot run another session".into()));
        }
        lines.push(prepare(&request).map_err(at)?);
    }
    Ok(lines)
}

/// Writes the answer to stdout. A reader that has gone (`| head`) is not an error.
fn say(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}").and_then(|()| out.flush());
}

/// Writes the rounds of input requests answered since the last time to stderr, one
/// JSON line each: the server asked, the script answered, and the request went again.
fn say_rounds(remote: &Remote) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    for line in remote.take_rounds() {
        let _ = writeln!(err, "{line}");
    }
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
}

/// Notifications printed to stderr, each once.
struct Printed {
    on: bool,
    seen: std::sync::atomic::AtomicU64,
}

impl Printed {
    fn new(on: bool) -> Printed {
        Printed {
            on,
            seen: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// Prints the notifications that came since the last flush.
    fn flush(&self, remote: &Remote) {
        if !self.on {
            return;
        }
        use std::sync::atomic::Ordering;
        let wire = remote.wire();
        let total = wire.notified();
        let seen = self.seen.swap(total, Ordering::Relaxed);
        let kept = wire.kept(Which::Notifications);
        let new = usize::try_from(total.saturating_sub(seen)).unwrap_or(usize::MAX);
        for note in wire.window(Which::Notifications, kept.saturating_sub(new), new) {
            use std::io::Write;
            let line = if note.method == super::STDERR {
                json!({"stderr": note.text}).to_string()
            } else {
                note.text
            };
            let _ = writeln!(std::io::stderr().lock(), "{line}");
        }
    }
}

/// Parses a JSON object given on the command line.
fn object(flag: &str, text: &str) -> Result<Value, String> {
    match serde_json::from_str::<Value>(text) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(other) => Err(format!("{flag} must be a JSON object, not {other}")),
        Err(e) => Err(format!("{flag} is not JSON: {e}")),
    }
}

/// A request as checked before connecting: its JSON read, its reference parsed, a
/// session's every line.
#[derive(Debug)]
enum Ask {
    Info,
    Tools,
    Call {
        tool: String,
        args: Value,
    },
    Resources {
        cursor: Option<String>,
    },
    Templates {
        cursor: Option<String>,
    },
    Read {
        uri: String,
    },
    Skills,
    Skill {
        name: String,
    },
    Subscribe {
        uri: String,
        updates: usize,
        wait: u64,
    },
    Prompts {
        cursor: Option<String>,
    },
    Prompt {
        name: String,
        args: Value,
    },
    Complete {
        what: CompleteRef,
        argument: String,
        value: String,
        context: Option<Value>,
    },
    LogLevel {
        level: String,
        wait: u64,
    },
    Ping,
    Request {
        method: String,
        params: Value,
    },
    Session {
        name: String,
        lines: Vec<Ask>,
    },
}

/// Checks what the caller wrote: the error says what is wrong with it.
fn prepare(request: &ClientRequestCmd) -> Result<Ask, String> {
    use ClientRequestCmd as C;
    Ok(match request {
        C::Info => Ask::Info,
        C::Tools => Ask::Tools,
        C::Call { tool, args } => Ask::Call {
            tool: tool.clone(),
            args: object("--args", args)?,
        },
        C::Resources { cursor } => Ask::Resources {
            cursor: cursor.clone(),
        },
        C::Templates { cursor } => Ask::Templates {
            cursor: cursor.clone(),
        },
        C::Read { uri } => Ask::Read { uri: uri.clone() },
        C::Skills => Ask::Skills,
        C::Skill { name } => Ask::Skill { name: name.clone() },
        C::Subscribe { uri, updates, wait } => Ask::Subscribe {
            uri: uri.clone(),
            updates: *updates,
            wait: *wait,
        },
        C::Prompts { cursor } => Ask::Prompts {
            cursor: cursor.clone(),
        },
        C::Prompt { name, args } => Ask::Prompt {
            name: name.clone(),
            args: object("--args", args)?,
        },
        C::Complete {
            what,
            argument,
            value,
            context,
        } => Ask::Complete {
            what: CompleteRef::parse(what)?,
            argument: argument.clone(),
            value: value.clone(),
            context: context
                .as_deref()
                .map(|c| object("--context", c))
                .transpose()?,
        },
        C::LogLevel { level, wait } => Ask::LogLevel {
            level: level.clone(),
            wait: *wait,
        },
        C::Ping => Ask::Ping,
        C::Request { method, params } => Ask::Request {
            method: method.clone(),
            params: object("--params", params)?,
        },
        C::Session { file } => Ask::Session {
            name: file.display().to_string(),
            lines: session_lines(file)?,
        },
    })
}

/// The answer to `request` and whether it counts as a success.
async fn ask(
    remote: &Arc<Remote>,
    request: &Ask,
    printed: &Printed,
    ctx: CallContext,
) -> Result<(Value, bool), ToolError> {
    let ok = |v: Value| Ok((v, true));
    match request {
        Ask::Info => ok(remote.server_info().clone()),
        Ask::Tools => ok(remote.list_whole("tools/list", "tools").await?),
        Ask::Call { tool, args } => {
            let result = remote
                .request("tools/call", json!({"name": tool, "arguments": args}), ctx)
                .await
                .map_err(|mut e| {
                    e.message = e
                        .message
                        .replacen("tools/call", &format!("tools/call {tool}"), 1);
                    e
                })?;
            let failed = result["isError"] == true;
            Ok((result, !failed))
        }
        Ask::Resources { cursor } => match cursor {
            Some(c) => ok(remote.page("resources/list", Some(c)).await?),
            None => ok(remote.list_whole("resources/list", "resources").await?),
        },
        Ask::Templates { cursor } => match cursor {
            Some(c) => ok(remote.page("resources/templates/list", Some(c)).await?),
            None => ok(remote
                .list_whole("resources/templates/list", "resourceTemplates")
                .await?),
        },
        Ask::Read { uri } => ok(remote.read_resource(uri).await?),
        Ask::Skills => ok(super::skills::list(remote).await?),
        Ask::Skill { name } => ok(super::skills::load(remote, name).await?),
        Ask::Subscribe { uri, updates, wait } => {
            remote.subscribe(uri, true).await?;
            let got = wait_for(
                remote,
                Duration::from_secs(*wait),
                printed,
                |n| n["method"] == "notifications/resources/updated" && n["params"]["uri"] == *uri,
                *updates,
            )
            .await;
            let _ = remote.subscribe(uri, false).await;
            let enough = got.len() >= *updates;
            Ok((json!({"uri": uri, "updates": got}), enough))
        }
        Ask::Prompts { cursor } => match cursor {
            Some(c) => ok(remote.page("prompts/list", Some(c)).await?),
            None => ok(remote.list_whole("prompts/list", "prompts").await?),
        },
        Ask::Prompt { name, args } => match remote.get_prompt(name, args.clone()).await {
            Ok(v) => ok(v),
            // A prompt the server refused for its arguments: say how to give them.
            Err(mut e) if e.extra.get("jsonrpc_code") == Some(&json!(-32602)) => {
                let given = args.as_object().is_some_and(|a| !a.is_empty());
                e.message.push_str(&if given {
                    format!(
                        " (the prompt's arguments: see `prompts`; \
                         `complete prompt:{name} ARGUMENT VALUE` offers values)"
                    )
                } else {
                    format!(
                        " (give the prompt's arguments with --args '{{\"NAME\": \"VALUE\"}}', \
                         or answer the server's question with --answer NAME=VALUE; `prompts` \
                         lists {name}'s arguments)"
                    )
                });
                Err(e)
            }
            Err(e) => Err(e),
        },
        Ask::Complete {
            what,
            argument,
            value,
            context,
        } => ok(remote
            .complete(what, argument, value, context.clone())
            .await?),
        Ask::LogLevel { level, wait } => {
            remote.set_log_level(level).await?;
            let messages = wait_for(
                remote,
                Duration::from_secs(*wait),
                printed,
                |n| n["method"] == "notifications/message",
                usize::MAX,
            )
            .await;
            ok(json!({"level": level, "messages": messages}))
        }
        Ask::Ping => ok(remote.ping().await?),
        Ask::Request { method, params } => ok(remote.request(method, params.clone(), ctx).await?),
        Ask::Session { name, lines } => session(remote, name, lines, printed, ctx).await,
    }
}

/// The notifications that match `wanted`, received from now until `limit` of them
/// or `wait` has passed.
async fn wait_for(
    remote: &Remote,
    wait: Duration,
    printed: &Printed,
    wanted: impl Fn(&Value) -> bool,
    limit: usize,
) -> Vec<Value> {
    let start = remote.wire().notified();
    let until = Instant::now() + wait;
    let mut got = Vec::new();
    let mut read = start;
    loop {
        let wire = remote.wire();
        let total = wire.notified();
        let new = usize::try_from(total - read).unwrap_or(usize::MAX);
        let kept = wire.kept(Which::Notifications);
        for note in wire.window(Which::Notifications, kept.saturating_sub(new), new) {
            if let Ok(v) = serde_json::from_str::<Value>(&note.text)
                && wanted(&v)
            {
                got.push(v);
            }
        }
        read = total;
        printed.flush(remote);
        if got.len() >= limit || Instant::now() >= until || !remote.is_connected() {
            got.truncate(limit);
            return got;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}
