//! The command line's shape: every flag and subcommand of `structs-console`, as clap
//! reads them, and how a subcommand's own options settle over the global ones. What
//! each command does is in `main.rs`.

use std::path::PathBuf;

use clap::Parser;

use structs_console::source::sim::WorldConfig;

/// A console and MCP server for building and debugging AI agents that play Structs.
#[derive(Debug, Parser)]
#[command(name = "structs-console", version, about)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Option<Command>,

    /// Serve the core as an MCP server over stdio instead of opening the console.
    #[arg(long)]
    pub(crate) headless: bool,

    /// With --headless: serve MCP over streamable HTTP at this address
    /// (`127.0.0.1:8080`; the endpoint is /mcp) instead of stdio. Several clients may
    /// connect, each with its own session.
    #[arg(long, value_name = "ADDR", requires = "headless")]
    pub(crate) http: Option<String>,

    /// With --headless: ask the client's user to confirm every call that destroys or
    /// spends (a transaction, an attack, a plan run) before it runs, by elicitation.
    /// Servers sharing a balancer share the key that seals the question's state in
    /// STRUCTS_CONSOLE_STATE_KEY.
    #[arg(long, requires = "headless")]
    pub(crate) confirm_actions: bool,

    /// Let --http bind an address that is not loopback. Needs a bearer token.
    #[arg(long, requires = "http")]
    pub(crate) http_allow_remote: bool,

    /// With --http: the most MCP sessions open at once; the next client gets 503 with
    /// Retry-After until one ends.
    #[arg(long, value_name = "N", requires = "http", default_value_t = structs_console::mcp::wire::http::SessionLimits::DEFAULT_MAX,
        value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub(crate) http_max_sessions: usize,

    /// With --http: the most connections open at once. At the cap a new connection
    /// takes the place of one with no request in flight; when all are busy it gets 503.
    #[arg(long, value_name = "N", requires = "http", default_value_t = structs_console::mcp::wire::http::ListenLimits::DEFAULT_MAX_CONNECTIONS,
        value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(2..=1_000_000))]
    pub(crate) http_max_connections: usize,

    /// With --http: end a session after this many seconds with no request in flight and
    /// no stream open.
    #[arg(long, value_name = "SECONDS", requires = "http", default_value_t = structs_console::mcp::wire::http::SessionLimits::DEFAULT_IDLE.as_secs(),
        value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub(crate) http_session_idle: u64,

    /// With --http: end a subscriptions/listen stream that has carried nothing for this
    /// many seconds (its client hears the stream's final result and may open another).
    #[arg(long, value_name = "SECONDS", requires = "http", default_value_t = structs_console::mcp::server::listen::STREAM_IDLE.as_secs(),
        value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub(crate) http_listen_idle: u64,

    /// What proof-of-work searches hash on: auto (a discrete GPU if there is one, else
    /// the CPU), cpu, or gpu (the GPU wgpu prefers, a software one included; the CPU when
    /// there is none, saying why).
    #[arg(long, value_name = "BACKEND", default_value = "auto",
        value_parser = ["auto", "cpu", "gpu"])]
    pub(crate) pow_backend: String,

    /// With --http: on SIGTERM or Ctrl-C, keep serving this many seconds while /health
    /// answers 503 "draining", so that a load balancer takes the server out before it
    /// stops (0: stop at once).
    #[arg(long, value_name = "SECONDS", requires = "http", default_value_t = 0,
        value_parser = clap::value_parser!(u64).range(0..=600))]
    pub(crate) http_drain: u64,

    /// With --http: the bearer token every request must carry (`Authorization:
    /// Bearer TOKEN`), at least 16 characters; with --connect URL, the token sent to
    /// that server. Prefer the environment variable: a flag shows in the process list.
    #[arg(
        long,
        value_name = "TOKEN",
        env = "STRUCTS_CONSOLE_AUTH_TOKEN",
        hide_env_values = true
    )]
    pub(crate) auth_token: Option<String>,

    /// With --headless --http: a file of callers, one a line: a name, then that
    /// caller's own bearer token (at least 16 characters). Each is let in as that
    /// caller, and lists, reads and cancels its own tasks and handles only;
    /// --auth-token is then the operator's, who sees every caller's.
    #[arg(long, value_name = "FILE", requires = "http")]
    pub(crate) caller_tokens: Option<PathBuf>,

    /// Attach the console to another MCP server as its client: a command line
    /// (`"structs-console --headless --seed 7"`, started as a child process and spoken
    /// to over stdio) or a streamable HTTP URL (`http://127.0.0.1:8080/mcp`, sent
    /// --auth-token as a bearer token when set). Its tools are the console's: the
    /// Server tab lists and calls them, and against a structs-console the other tabs
    /// work as they do locally.
    #[arg(long, value_name = "TARGET", conflicts_with = "headless")]
    pub(crate) connect: Option<String>,

    /// With --connect: a directory offered to the server as a root (`roots/list`);
    /// repeatable. The Server tab's Roots section adds and removes more.
    #[arg(long = "root", value_name = "DIR", requires = "connect")]
    pub(crate) roots: Vec<PathBuf>,

    /// Record every exchange to this JSON Lines session log, appending: with
    /// --headless each MCP request, response and notification; in the console, each
    /// tool call it makes and its answer.
    #[arg(long, value_name = "FILE")]
    pub(crate) record: Option<PathBuf>,

    /// With --headless: publish the traffic live on a control endpoint that
    /// `structs-console watch` reads: a Unix socket (0600), or
    /// http://127.0.0.1:PORT for loopback HTTP with a token. Without one, a socket is
    /// made in $XDG_RUNTIME_DIR/structs-console (or /tmp/structs-console-UID).
    // `Option<Option<_>>`: the flag alone is `Some(None)`. (An empty default for the
    // missing value would be refused by the path parser as no value at all.)
    #[arg(long, value_name = "SOCKET|URL", num_args = 0..=1, requires = "headless")]
    pub(crate) control: Option<Option<PathBuf>>,

    /// Where game data comes from: `sim` (the embedded world) or `rest` (a node's REST
    /// API at --endpoint).
    #[arg(long, default_value = "sim", value_parser = ["sim", "rest"])]
    pub(crate) source: String,

    /// The node's REST address for `--source rest` (`http://localhost:1317`, or a
    /// `serve-rest` of another console).
    #[arg(long, value_name = "URL")]
    pub(crate) endpoint: Option<String>,

    /// Requests per second at most to the node (0 for no limit).
    #[arg(long, value_name = "N", default_value_t = 20.0, value_parser = rate_limit)]
    pub(crate) rate_limit: f64,

    /// Requests that may go to the node at once before --rate-limit spaces them.
    #[arg(long, value_name = "N", default_value_t = 5,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub(crate) rate_burst: u32,

    /// Time allowed for one request to the node, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 10_000,
          value_parser = clap::value_parser!(u64).range(1..=600_000))]
    pub(crate) request_timeout_ms: u64,

    /// Further attempts after a failed request (429, 5xx, unreachable, timeout).
    #[arg(long, value_name = "N", default_value_t = 4,
          value_parser = clap::value_parser!(u32).range(0..=10))]
    pub(crate) retries: u32,

    /// Read game events from this NATS server's GRASS subjects (`nats://HOST:PORT`)
    /// instead of the source's own events.
    #[arg(long, value_name = "URL")]
    pub(crate) events: Option<String>,

    #[command(flatten)]
    pub(crate) world: World,

    /// Console theme: a built-in name (dark, light, mono) or a path to a TOML theme file.
    #[arg(long, default_value = "dark")]
    pub(crate) theme: String,

    /// Write logs to this file. Headless, logs go to stderr otherwise; the console
    /// logs nowhere unless this is given.
    #[arg(long, global = true)]
    pub(crate) log_file: Option<PathBuf>,

    /// Send traces and metrics by OpenTelemetry (OTLP) to this collector, its base URL
    /// (`http://localhost:4318`), as `OTEL_EXPORTER_OTLP_ENDPOINT` does; that and the
    /// other standard `OTEL_*` variables turn it on without the flag. Off by default.
    #[arg(long, global = true, value_name = "URL")]
    pub(crate) otlp: Option<String>,

    /// With traces on: put each tool call's arguments and result on its span
    /// (`gen_ai.tool.call.arguments`, `.result`), redacted as a recording is.
    #[arg(long, global = true)]
    pub(crate) otlp_content: bool,

    /// Log filter (error, warn, info, debug, trace, or a tracing directive). The
    /// default is info, and warn for `client`, whose stderr a script reads (and nothing
    /// from the MCP library there: `client` says each failure itself).
    #[arg(long, env = "STRUCTS_CONSOLE_LOG", global = true)]
    pub(crate) log_level: Option<String>,

    /// Configuration file (TOML); see ARCHITECTURE.md for its tables. Flags override it.
    /// Its `[redact]` rules apply to every command that writes, shows or serves a
    /// recording.
    #[arg(long, value_name = "FILE", global = true)]
    pub(crate) config: Option<PathBuf>,

    /// References a call gets when it does not say: off, on (all for single results,
    /// primary for lists), all or primary.
    #[arg(long, value_name = "MODE", value_parser = ["off", "on", "all", "primary"])]
    pub(crate) references: Option<String>,

    /// Default reference depth, 1 or 2.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(1..=2))]
    pub(crate) reference_depth: Option<u8>,

    /// Default cap on the entries of one response's references.
    #[arg(long, value_name = "N")]
    pub(crate) max_references: Option<usize>,

    /// Default cap on the new references one entity adds (each item of a list).
    #[arg(long, value_name = "N")]
    pub(crate) max_references_per_entity: Option<usize>,

    /// Reference fetches in flight at once, across every call being served.
    #[arg(long, value_name = "N")]
    pub(crate) max_parallel_queries: Option<usize>,

    /// What a failed reference becomes: indicate (status "failed" and its error) or omit.
    #[arg(long, value_name = "WHAT", value_parser = ["indicate", "omit"])]
    pub(crate) on_reference_error: Option<String>,

    /// Time allowed for one reference, in milliseconds.
    #[arg(long, value_name = "MS")]
    pub(crate) reference_timeout_ms: Option<u64>,

    /// How long resolved references are reused, in seconds (0 turns the cache off).
    #[arg(long, value_name = "SECS")]
    pub(crate) reference_cache_ttl: Option<u64>,

    /// How long a result over 25 KB stays fetchable by its handle, in seconds.
    #[arg(long, value_name = "SECS")]
    pub(crate) handle_ttl: Option<u64>,

    /// Where results over 25 KB are kept: `memory`, or a Redis URL
    /// (`redis://127.0.0.1:6379/0`) so several servers share their handles.
    #[arg(long, value_name = "STORE")]
    pub(crate) handle_store: Option<String>,

    /// A folder of Markdown reference docs to serve instead of the project's own
    /// (embedded, read-only) docs; links written by the docs tools go to its files.
    #[arg(long, value_name = "DIR")]
    pub(crate) docs: Option<PathBuf>,

    /// Tools that never carry references, whatever a call asks (comma-separated or
    /// repeated).
    #[arg(long, value_name = "TOOL", value_delimiter = ',')]
    pub(crate) no_references_for: Vec<String>,
}

/// The embedded world. The commands that make one (`serve-rest`, `proxy --embedded`,
/// `replay`) take these after their name too; the others do not list them.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct World {
    /// Publish the embedded world's events to this NATS server (GRASS subjects), so
    /// other consoles and servers can watch the same world.
    #[arg(long, value_name = "URL")]
    pub(crate) publish_events: Option<String>,

    /// Seed of the embedded world: the same seed always gives the same world.
    #[arg(long, default_value_t = WorldConfig::DEFAULT_SEED)]
    pub(crate) seed: u64,

    /// Number of players in the embedded world (guilds, planets, fleets and structs
    /// scale with it).
    #[arg(long, default_value_t = WorldConfig::DEMO_PLAYERS as u64,
          value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub(crate) world_size: u64,

    /// Block height the embedded world starts at.
    #[arg(long, default_value_t = WorldConfig::DEFAULT_HEIGHT)]
    pub(crate) start_height: u64,

    /// Start with the block clock paused (it then advances only when stepped).
    #[arg(long)]
    pub(crate) paused: bool,
}

impl World {
    /// These options over `outer` (those given before the command's name): each
    /// given here wins.
    pub(crate) fn over(&self, outer: &World) -> World {
        let mut world = self.clone();
        if world.seed == WorldConfig::DEFAULT_SEED {
            world.seed = outer.seed;
        }
        if world.world_size == WorldConfig::DEMO_PLAYERS as u64 {
            world.world_size = outer.world_size;
        }
        if world.start_height == WorldConfig::DEFAULT_HEIGHT {
            world.start_height = outer.start_height;
        }
        world.paused |= outer.paused;
        if world.publish_events.is_none() {
            world.publish_events.clone_from(&outer.publish_events);
        }
        world
    }
}

#[derive(Debug, clap::Subcommand)]
pub(crate) enum Command {
    /// Serve the embedded world over the chain's REST paths and JSON shapes (for REST
    /// clients, and for `--source rest` of other consoles and servers).
    ServeRest {
        /// Address to listen on. Anything but loopback needs --allow-remote and a token.
        #[arg(long, default_value = "127.0.0.1:1317")]
        listen: String,
        /// Let --listen bind an address that is not loopback. Needs a bearer token
        /// (--auth-token or STRUCTS_CONSOLE_AUTH_TOKEN), which every request must then
        /// carry.
        #[arg(long)]
        allow_remote: bool,
        /// Delay added to every request, in milliseconds (to try clients on a slow node).
        #[arg(long, value_name = "MS", default_value_t = 0)]
        latency_ms: u64,
        /// The bearer token every request must carry (`Authorization: Bearer
        /// TOKEN`), at least 16 characters. Prefer the environment variable: a flag
        /// shows in the process list.
        #[arg(
            long,
            value_name = "TOKEN",
            env = "STRUCTS_CONSOLE_AUTH_TOKEN",
            hide_env_values = true
        )]
        auth_token: Option<String>,
        #[command(flatten)]
        world: World,
    },
    /// Stand where an agent's host expects its MCP server and pass every message both
    /// ways unchanged: to a child started over stdio (after `--`), to this binary's
    /// own server (--embedded), or to an HTTP server (--upstream); record the calls,
    /// publish them live, and hold, edit and fault them by rule.
    Proxy {
        #[command(flatten)]
        args: structs_console::mcp::proxy::cli::ProxyArgs,
        /// With --http: the bearer token every host's request must carry
        /// (`Authorization: Bearer TOKEN`), at least 16 characters. Prefer the
        /// environment variable: a flag shows in the process list.
        #[arg(
            long,
            value_name = "TOKEN",
            env = "STRUCTS_CONSOLE_AUTH_TOKEN",
            hide_env_values = true
        )]
        auth_token: Option<String>,
        /// With --embedded, its world.
        #[command(flatten)]
        world: World,
    },
    /// Answer as the server a session log recorded: each request from the log, matched
    /// by method and arguments, in recorded order for repeated ones; over stdio, or
    /// streamable HTTP with --http (both protocol revisions). A request the log lacks gets
    /// a JSON-RPC error naming the nearest recorded one, or goes to --fallback.
    ServeRecording {
        #[command(flatten)]
        args: structs_console::mcp::proxy::cli::RecordingArgs,
        /// With --http: the bearer token every request must carry, at least 16
        /// characters. Prefer the environment variable: a flag shows in the process
        /// list.
        #[arg(
            long,
            value_name = "TOKEN",
            env = "STRUCTS_CONSOLE_AUTH_TOKEN",
            hide_env_values = true
        )]
        auth_token: Option<String>,
    },
    /// Watch a server's traffic as it happens: a control endpoint (the socket of a
    /// `proxy` or of `--headless --control`), or a session log followed as it grows.
    /// Without one, the newest live endpoint. In a terminal it opens the console's
    /// Live tab; otherwise it prints the lines (JSON Lines) as they come.
    Watch {
        /// A control endpoint (its socket, or its http://127.0.0.1:PORT URL), or a
        /// session log file.
        endpoint: Option<PathBuf>,
        /// Print the lines even in a terminal.
        #[arg(long)]
        json: bool,
        /// Print only the calls this filter matches, each whole once it has ended
        /// (`tool:structs_query_* status:error dur>200ms`; see the book's "Recording and
        /// replaying sessions"), as JSON Lines.
        #[arg(long, value_name = "FILTER", allow_hyphen_values = true)]
        filter: Option<String>,
    },
    /// Be an MCP client from the command line: connect to a server (`--connect`), send
    /// one request, print the answer as JSON, and exit 1 on an error answer.
    Client(structs_console::mcp::client::script::ClientArgs),
    /// Compare two session logs: the calls aligned by sequence, as a text diff aligns
    /// lines (`=` the same, `~` the same step ended differently, `-` only in A, `+` only
    /// in B), then calls, errors, bytes and time per tool, A against B. Exits 0 when the
    /// runs made the same steps with the same outcomes, 1 when they differ, 2 on an error.
    Diff {
        /// The first log (A).
        a: PathBuf,
        /// The second log (B).
        b: PathBuf,
        /// Print the comparison as one JSON object: counts, the table per tool, every
        /// pair.
        #[arg(long)]
        json: bool,
        /// Compare only the calls this filter matches (`tool:structs_query_*
        /// -status:ok dur>200ms`; see the book's "Recording and replaying sessions").
        #[arg(long, value_name = "FILTER", allow_hyphen_values = true)]
        filter: Option<String>,
        /// Pairs of the same step shown around each difference.
        #[arg(long, value_name = "N", default_value_t = 2)]
        context: usize,
        /// Show every pair, not only the differences and their context.
        #[arg(long)]
        all: bool,
    },
    /// Check a session log against expectations (a TOML file: limits on calls, errors,
    /// durations and bytes, tools required and forbidden, argument patterns, order,
    /// confirmations answered no, filter rules). Prints each expectation's verdict and
    /// exits 1 when any is broken, 2 when the files do not read.
    Check {
        /// The session log.
        file: PathBuf,
        /// The expectations file (TOML).
        #[arg(long, value_name = "EXPECT.toml")]
        expect: PathBuf,
        /// Also write the verdicts as JUnit XML to this file (for GitHub, GitLab,
        /// Jenkins).
        #[arg(long, value_name = "PATH")]
        junit: Option<PathBuf>,
        /// Check only the calls this filter matches.
        #[arg(long, value_name = "FILTER", allow_hyphen_values = true)]
        filter: Option<String>,
        /// FILE is a live feed (a control endpoint's socket or URL, or a log followed as
        /// it grows): check each call as it ends, and exit 1 at the first expectation
        /// broken for good (a limit passed, a forbidden tool, an argument, the order, a
        /// refused confirmation), so a script can stop the agent there; the rest are
        /// judged when the feed ends.
        #[arg(long)]
        follow: bool,
    },
    /// Write one self-contained HTML page of a session log to share: a timeline of the
    /// calls, the table per tool, every call's request and answer (searchable), the diff
    /// against a second log when given, and the verdict of --expect. It needs no server
    /// and no network to open.
    Report {
        /// The session log.
        file: PathBuf,
        /// A second log to compare the first with.
        other: Option<PathBuf>,
        /// Where to write the page.
        #[arg(short = 'o', long, value_name = "PATH", default_value = "report.html")]
        output: PathBuf,
        /// Check the log against these expectations (as `check --expect`) and show the
        /// verdict.
        #[arg(long, value_name = "EXPECT.toml")]
        expect: Option<PathBuf>,
    },
    /// Run a recorded session log (`--record`) again and compare the answers.
    Replay {
        /// The session log (JSON Lines).
        file: PathBuf,
        /// Re-run every call headless against the world the options describe (or the
        /// REST source), print the differences, and exit 1 when any answer differs.
        #[arg(long)]
        check: bool,
        /// A key to leave out of the comparison, besides the volatile ones (timestamps,
        /// durations, hash rates, ages, hits); repeat or separate with commas.
        #[arg(long, value_name = "KEY", value_delimiter = ',')]
        ignore: Vec<String>,
        /// Run the calls again against this MCP server instead of the embedded world: a
        /// command line (started, spoken to over stdio) or an http(s) URL (sent the
        /// token in STRUCTS_CONSOLE_AUTH_TOKEN, if set). Input the server asks for is
        /// given the answers the log recorded (with --check, else declined; in the
        /// Replay tab, else asked of the operator).
        #[arg(long, value_name = "TARGET")]
        connect: Option<String>,
        #[command(flatten)]
        world: World,
    },
}

impl Cli {
    /// Takes the options a command gives after its name over those before it, so
    /// the rest reads one set.
    pub(crate) fn settle(&mut self) {
        let (world, token) = match &mut self.command {
            Some(Command::ServeRest {
                world, auth_token, ..
            })
            | Some(Command::Proxy {
                world, auth_token, ..
            }) => (Some(world.over(&self.world)), auth_token.take()),
            Some(Command::Replay { world, .. }) => (Some(world.over(&self.world)), None),
            Some(Command::ServeRecording { auth_token, .. }) => (None, auth_token.take()),
            Some(Command::Client(args)) => (None, args.auth_token.take()),
            _ => (None, None),
        };
        if let Some(world) = world {
            self.world = world;
        }
        if token.is_some() {
            self.auth_token = token;
        }
    }
}

/// `--rate-limit`: 0 for none, else between 0.01 and 100,000 requests per second.
fn rate_limit(text: &str) -> Result<f64, String> {
    let r: f64 = text
        .parse()
        .map_err(|_| format!("{text:?} is not a number of requests per second"))?;
    if r == 0.0 || (0.01..=100_000.0).contains(&r) {
        Ok(r)
    } else {
        Err("give 0 (no limit) or 0.01 to 100000 requests per second".into())
    }
}
