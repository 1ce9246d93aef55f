//! `structs-console proxy`: its options, and how they assemble the proxy.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::{Faults, Options, Upstream};
use crate::mcp::control::{self, Endpoint};
use crate::mcp::server::McpServer;
use crate::mcp::wire::http::{HttpOptions, ListenLimits, SessionLimits};
use crate::record::{Feed, Recorder, Redaction};

/// The environment variable that gives `--upstream-token`.
pub const UPSTREAM_TOKEN_ENV: &str = "STRUCTS_CONSOLE_UPSTREAM_TOKEN";

#[derive(Debug, clap::Args)]
pub struct ProxyArgs {
    /// Record the tool calls and the server's notifications to this JSON Lines
    /// session log (the format of `--headless --record`), appending.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Publish the traffic live on this control endpoint instead of the default
    /// socket in $XDG_RUNTIME_DIR/structs-console (or /tmp/structs-console-UID): a
    /// Unix socket (0600), or http://127.0.0.1:PORT for loopback HTTP with a token
    /// (STRUCTS_CONSOLE_CONTROL_TOKEN, else one made at random and kept in a file only
    /// its user reads).
    #[arg(long, value_name = "SOCKET|URL", conflicts_with = "no_control")]
    pub control: Option<PathBuf>,
    /// Publish nothing live.
    #[arg(long)]
    pub no_control: bool,
    /// Inject faults by the rules in this JSON file: latency, errors at a rate or
    /// every Nth call, dropped, truncated, oversized or stale answers.
    #[arg(long, value_name = "FILE")]
    pub faults: Option<PathBuf>,
    /// How long a call waits at a breakpoint before it goes on by itself.
    #[arg(long, value_name = "SECONDS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub hold_timeout: u64,
    /// Start this binary's own server (`--headless`, with the arguments after `--`
    /// if any) instead of a COMMAND.
    #[arg(long, conflicts_with = "upstream")]
    pub embedded: bool,
    /// Pass the traffic to the MCP server at this streamable HTTP URL
    /// (`http://127.0.0.1:8080/mcp`) instead of a child.
    #[arg(long, value_name = "URL")]
    pub upstream: Option<String>,
    /// The bearer token to send --upstream. Prefer the environment variable: a flag
    /// shows in the process list.
    #[arg(
        long,
        value_name = "TOKEN",
        env = UPSTREAM_TOKEN_ENV,
        hide_env_values = true,
        requires = "upstream"
    )]
    pub upstream_token: Option<String>,
    /// Serve hosts over streamable HTTP at this address (`127.0.0.1:8090`; the
    /// endpoint is /mcp) instead of stdio, each host session passed on in its own
    /// session. Who may connect is --headless --http's rule (--auth-token,
    /// --http-allow-remote). Needs --upstream.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
    /// Let --http bind an address that is not loopback. Needs a bearer token.
    #[arg(long, requires = "http")]
    pub http_allow_remote: bool,
    /// With --http: the most host sessions open at once; the next gets 503 with
    /// Retry-After.
    #[arg(long, value_name = "N", requires = "http", default_value_t = SessionLimits::DEFAULT_MAX,
        value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub http_max_sessions: usize,
    /// With --http: end a host session after this many seconds with no request and
    /// no stream open.
    #[arg(long, value_name = "SECONDS", requires = "http", default_value_t = SessionLimits::DEFAULT_IDLE.as_secs(),
        value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub http_session_idle: u64,
    /// The server's command and its arguments, after `--` (with --embedded: more
    /// arguments for `--headless`).
    /// Answer from this session log instead of a server (`serve-recording`).
    #[arg(skip)]
    pub recording: Option<PathBuf>,
    /// With a recording: where a request the log lacks goes.
    #[arg(skip)]
    pub fallback: Option<(String, Option<String>)>,
    #[arg(
        last = true,
        required_unless_present_any = ["embedded", "upstream"],
        conflicts_with = "upstream",
        value_name = "COMMAND"
    )]
    pub command: Vec<String>,
}

/// This binary's own server for `--embedded`, made on the proxy's runtime: the server,
/// and what must live as long as it does.
pub struct Embedded {
    pub server: McpServer,
    pub keep: Box<dyn std::any::Any>,
}

/// Makes the `--embedded` server from the arguments after `--` (those of `--headless`).
pub type MakeEmbedded<'a> =
    Box<dyn FnOnce(&[String], &tokio::runtime::Runtime) -> anyhow::Result<Embedded> + 'a>;

/// Runs `structs-console proxy`; `token` is `--auth-token`, which guards `--http`;
/// `embedded` makes this binary's own server, which `--embedded` runs in the proxy's
/// process; `redaction` is what the recording and the live feed never hold.
///
/// # Errors
///
/// A faults file that is not one, a log or socket that cannot be opened, a child that
/// cannot start, an address that cannot be served.
pub fn run(
    args: &ProxyArgs,
    token: Option<String>,
    embedded: MakeEmbedded<'_>,
    redaction: Arc<Redaction>,
) -> anyhow::Result<ExitCode> {
    if args.http.is_some() && args.upstream.is_none() && args.recording.is_none() {
        anyhow::bail!(
            "--http needs --upstream URL: the proxy serves hosts over HTTP in front of an HTTP server"
        );
    }
    let faults = args
        .faults
        .as_deref()
        .map(|path| Faults::load(path).map_err(|e| anyhow::anyhow!("--faults: {e}")))
        .transpose()?;
    let upstream = match &args.recording {
        Some(path) => Some(recording(path, args.fallback.as_ref(), redaction.clone())?),
        None => args
            .upstream
            .as_deref()
            .map(|url| Upstream::new(url, args.upstream_token.clone()))
            .transpose()?,
    };
    let command: Vec<String> = if args.embedded {
        let me = std::env::current_exe()
            .map_err(|e| anyhow::anyhow!("--embedded: cannot find this program: {e}"))?;
        [me.display().to_string(), "--headless".to_string()]
            .into_iter()
            .chain(args.command.iter().cloned())
            .collect()
    } else {
        args.command.clone()
    };
    let description = match &upstream {
        Some(up) => up.shown().to_string(),
        None => command.join(" "),
    };
    // A host over stdio is one client on one pipe; hosts over HTTP get a worker a core.
    let runtime = if args.http.is_some() {
        tokio::runtime::Runtime::new()?
    } else {
        crate::mcp::wire::stdio_runtime()?
    };
    // The same server `--headless` is, in this process: no second process between the
    // agent and the core, and no pipes but the host's.
    let own = if args.embedded {
        Some(embedded(&args.command, &runtime).map_err(|e| anyhow::anyhow!("--embedded: {e:#}"))?)
    } else {
        None
    };
    runtime.block_on(async {
        let (options, published) = options(args, faults, &description, redaction)?;
        if let Some(Embedded { server, keep }) = own {
            let code = super::run_embedded(server, options).await;
            drop(published);
            drop(keep);
            return Ok(code);
        }
        let code = match (upstream, &args.http) {
            (Some(upstream), Some(listen)) => {
                let http = HttpOptions {
                    listen: listen.clone(),
                    token,
                    allow_remote: args.http_allow_remote,
                    callers: Vec::new(),
                    sessions: SessionLimits {
                        max: args.http_max_sessions,
                        idle: Duration::from_secs(args.http_session_idle),
                    },
                    connections: ListenLimits {
                        max_connections: ListenLimits::DEFAULT_MAX_CONNECTIONS,
                        ..ListenLimits::default()
                    },
                };
                super::serve_http(&http, upstream, options, said_where).await?;
                ExitCode::SUCCESS
            }
            (Some(upstream), None) => super::run_upstream(upstream, options).await,
            (None, _) => super::run_stdio(&command, options).await?,
        };
        drop(published);
        Ok(code)
    })
}

/// A session log to answer from, misses going to `fallback` (its target and token).
fn recording(
    path: &Path,
    fallback: Option<&(String, Option<String>)>,
    redaction: Arc<Redaction>,
) -> anyhow::Result<Upstream> {
    let fallback = fallback
        .map(|(spec, token)| {
            crate::mcp::client::Target::parse(spec)
                .map(|t| (t, token.clone()))
                .map_err(|e| anyhow::anyhow!("--fallback: {e}"))
        })
        .transpose()?;
    let recording = super::recorded::Recording::load(path, fallback, redaction)?;
    tracing::info!(requests = recording.len(), "serving {}", recording.shown());
    Ok(Upstream::recording(Arc::new(recording)))
}

/// `structs-console serve-recording FILE`: its own options, the proxy's where they
/// mean the same.
#[derive(Debug, clap::Args)]
pub struct RecordingArgs {
    /// The session log to answer from (`--record` of `--headless` or of `proxy`).
    pub file: PathBuf,
    /// Send each request the log lacks to this MCP server and give its answer: a
    /// command line (started as a child, spoken to over stdio) or a streamable HTTP
    /// URL. With --record, those answers are recorded with the rest.
    #[arg(long, value_name = "TARGET")]
    pub fallback: Option<String>,
    /// The bearer token sent to a --fallback URL. Prefer the environment variable.
    #[arg(
        long,
        value_name = "TOKEN",
        env = "STRUCTS_CONSOLE_FALLBACK_TOKEN",
        hide_env_values = true,
        requires = "fallback"
    )]
    pub fallback_token: Option<String>,
    /// Serve over streamable HTTP at this address (`127.0.0.1:8090`; the endpoint is
    /// /mcp) instead of stdio: 2025-11-25 sessions and 2026-07-28 stateless requests
    /// alike. Who may connect is --headless --http's rule (--auth-token,
    /// --http-allow-remote).
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
    /// Let --http bind an address that is not loopback. Needs a bearer token.
    #[arg(long, requires = "http")]
    pub http_allow_remote: bool,
    /// Record what is asked and answered to this session log (misses that went to
    /// --fallback among them), appending.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Publish the traffic live on this control endpoint (a socket path, or
    /// http://127.0.0.1:PORT), for `watch` and the Live tab. None unless given.
    #[arg(long, value_name = "SOCKET|URL")]
    pub control: Option<PathBuf>,
}

impl RecordingArgs {
    /// The proxy's options that serve the recording.
    pub fn proxy(&self) -> ProxyArgs {
        ProxyArgs {
            record: self.record.clone(),
            no_control: self.control.is_none(),
            control: self.control.clone(),
            faults: None,
            hold_timeout: super::HOLD_TIMEOUT.as_secs(),
            embedded: false,
            upstream: None,
            upstream_token: None,
            http: self.http.clone(),
            http_allow_remote: self.http_allow_remote,
            http_max_sessions: SessionLimits::DEFAULT_MAX,
            http_session_idle: SessionLimits::DEFAULT_IDLE.as_secs(),
            recording: Some(self.file.clone()),
            fallback: self
                .fallback
                .clone()
                .map(|f| (f, self.fallback_token.clone())),
            command: Vec::new(),
        }
    }
}

/// Says on stdout where the proxy serves hosts (as `--headless --http` does).
fn said_where(addr: SocketAddr) {
    println!(
        "proxying MCP over HTTP at http://{addr}{}",
        crate::mcp::wire::http::PATH
    );
}

/// The recording and live feed the options ask for, and the endpoint publishing it.
fn options(
    args: &ProxyArgs,
    faults: Option<Faults>,
    description: &str,
    redaction: Arc<Redaction>,
) -> anyhow::Result<(Options, Option<Endpoint>)> {
    let feed = (!args.no_control).then(Feed::new);
    let recorder: Option<Arc<Recorder>> =
        Recorder::maybe(args.record.as_deref(), feed.clone(), redaction)?;
    let mut hello = json!({"server": "proxy", "description": description});
    // Where the calls are kept too, so a watcher can open them whole (Replay).
    if let Some(path) = args
        .record
        .as_deref()
        .and_then(|p| std::path::absolute(p).ok())
    {
        hello["record"] = json!(path);
    }
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let control: Option<&Path> = args.control.as_deref();
    let published = match feed.clone() {
        // A socket asked for by name must work; the default one is a nicety that never
        // keeps the agent's server from starting.
        Some(feed) if control.is_some() => {
            match control::publish(control, "proxy", feed, hello, Some(tx)) {
                Ok(endpoint) => Some(endpoint),
                // Over HTTP, the runtime folder only keeps the token: when it is not
                // this user's alone the agent is served without a feed, as it is
                // without the default socket.
                Err(e) if e.downcast_ref::<control::http::NoTokenFolder>().is_some() => {
                    eprintln!("structs-console: no live feed: {e:#}");
                    None
                }
                Err(e) => return Err(e),
            }
        }
        Some(feed) => match control::publish(None, "proxy", feed, hello, Some(tx)) {
            Ok(endpoint) => Some(endpoint),
            Err(e) => {
                eprintln!("structs-console: no live feed: {e:#}");
                None
            }
        },
        None => None,
    };
    let options = Options {
        recorder,
        feed: published.as_ref().and(feed),
        faults,
        hold_timeout: Duration::from_secs(args.hold_timeout),
        commands: published.as_ref().map(|_| rx),
    };
    Ok((options, published))
}
