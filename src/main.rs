//! The `structs-console` command: the console by default, an MCP server with
//! `--headless`.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use serde_json::json;

use structs_console::Core;
use structs_console::config::Config;
use structs_console::nats::{NatsFeed, NatsPublisher};
use structs_console::references::{Include, OnError};
use structs_console::rest::server::RestServer;
use structs_console::source::GameSource;
use structs_console::source::rest::{RestConfig, RestSource};
use structs_console::source::sim::{BlockClock, SimSource, WorldConfig};
use structs_console::source::switch::{SwitchSource, Switcher};
use structs_console::tui::Opening;
use structs_console::tui::theme::Theme;

/// A console and MCP server for building and debugging AI agents that play Structs.
#[derive(Debug, Parser)]
#[command(name = "structs-console", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,

    /// Serve the core as an MCP server over stdio instead of opening the console.
    #[arg(long)]
    headless: bool,

    /// With --headless: serve MCP over streamable HTTP at this address
    /// (`127.0.0.1:8080`; the endpoint is /mcp) instead of stdio. Several clients may
    /// connect, each with its own session.
    #[arg(long, value_name = "ADDR", requires = "headless")]
    http: Option<String>,

    /// Let --http bind an address that is not loopback. Needs a bearer token.
    #[arg(long, requires = "http")]
    http_allow_remote: bool,

    /// With --http: the most MCP sessions open at once; the next client gets 503 with
    /// Retry-After until one ends.
    #[arg(long, value_name = "N", requires = "http", default_value_t = structs_console::mcp::wire::http::SessionLimits::DEFAULT_MAX,
        value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    http_max_sessions: usize,

    /// With --http: the most connections open at once. At the cap a new connection
    /// takes the place of one with no request in flight; when all are busy it gets 503.
    #[arg(long, value_name = "N", requires = "http", default_value_t = structs_console::mcp::wire::http::ListenLimits::DEFAULT_MAX_CONNECTIONS,
        value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(2..=1_000_000))]
    http_max_connections: usize,

    /// With --http: end a session after this many seconds with no request in flight and
    /// no stream open.
    #[arg(long, value_name = "SECONDS", requires = "http", default_value_t = structs_console::mcp::wire::http::SessionLimits::DEFAULT_IDLE.as_secs(),
        value_parser = clap::value_parser!(u64).range(1..=86_400))]
    http_session_idle: u64,

    /// With --http: the bearer token every request must carry (`Authorization:
    /// Bearer TOKEN`), at least 16 characters; with --connect URL, the token sent to
    /// that server. Prefer the environment variable: a flag shows in the process list.
    #[arg(
        long,
        value_name = "TOKEN",
        env = "STRUCTS_CONSOLE_AUTH_TOKEN",
        hide_env_values = true
    )]
    auth_token: Option<String>,

    /// Attach the console to another MCP server as its client: a command line
    /// (`"structs-console --headless --seed 7"`, started as a child process and spoken
    /// to over stdio) or a streamable HTTP URL (`http://127.0.0.1:8080/mcp`, sent
    /// --auth-token as a bearer token when set). Its tools are the console's: the
    /// Server tab lists and calls them, and against a structs-console the other tabs
    /// work as they do locally.
    #[arg(long, value_name = "TARGET", conflicts_with = "headless")]
    connect: Option<String>,

    /// With --connect: a directory offered to the server as a root (`roots/list`);
    /// repeatable. The Server tab's Roots section adds and removes more.
    #[arg(long = "root", value_name = "DIR", requires = "connect")]
    roots: Vec<PathBuf>,

    /// Record every exchange to this JSON Lines session log, appending: with
    /// --headless each MCP request, response and notification; in the console, each
    /// tool call it makes and its answer.
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,

    /// With --headless: publish the traffic live on a control endpoint that
    /// `structs-console watch` reads: a Unix socket (0600), or
    /// http://127.0.0.1:PORT for loopback HTTP with a token. Without one, a socket is
    /// made in $XDG_RUNTIME_DIR/structs-console (or /tmp/structs-console-UID).
    // `Option<Option<_>>`: the flag alone is `Some(None)`. (An empty default for the
    // missing value would be refused by the path parser as no value at all.)
    #[arg(long, value_name = "SOCKET|URL", num_args = 0..=1, requires = "headless")]
    control: Option<Option<PathBuf>>,

    /// Where game data comes from: `sim` (the embedded world) or `rest` (a node's REST
    /// API at --endpoint).
    #[arg(long, default_value = "sim", value_parser = ["sim", "rest"])]
    source: String,

    /// The node's REST address for `--source rest` (`http://localhost:1317`, or a
    /// `serve-rest` of another console).
    #[arg(long, value_name = "URL")]
    endpoint: Option<String>,

    /// Requests per second at most to the node (0 for no limit).
    #[arg(long, value_name = "N", default_value_t = 20.0, value_parser = rate_limit)]
    rate_limit: f64,

    /// Requests that may go to the node at once before --rate-limit spaces them.
    #[arg(long, value_name = "N", default_value_t = 5,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    rate_burst: u32,

    /// Time allowed for one request to the node, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 10_000,
          value_parser = clap::value_parser!(u64).range(1..=600_000))]
    request_timeout_ms: u64,

    /// Further attempts after a failed request (429, 5xx, unreachable, timeout).
    #[arg(long, value_name = "N", default_value_t = 4,
          value_parser = clap::value_parser!(u32).range(0..=10))]
    retries: u32,

    /// Read game events from this NATS server's GRASS subjects (`nats://HOST:PORT`)
    /// instead of the source's own events.
    #[arg(long, value_name = "URL")]
    events: Option<String>,

    #[command(flatten)]
    world: World,

    /// Console theme: a built-in name (dark, light, mono) or a path to a TOML theme file.
    #[arg(long, default_value = "dark")]
    theme: String,

    /// Write logs to this file. Headless, logs go to stderr otherwise; the console
    /// logs nowhere unless this is given.
    #[arg(long, global = true)]
    log_file: Option<PathBuf>,

    /// Log filter (error, warn, info, debug, trace, or a tracing directive). The
    /// default is info, and warn for `client`, whose stderr a script reads (and nothing
    /// from the MCP library there: `client` says each failure itself).
    #[arg(long, env = "STRUCTS_CONSOLE_LOG", global = true)]
    log_level: Option<String>,

    /// Configuration file (TOML); see ARCHITECTURE.md for its tables. Flags override it.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,

    /// References a call gets when it does not say: off, on (all for single results,
    /// primary for lists), all or primary.
    #[arg(long, value_name = "MODE", value_parser = ["off", "on", "all", "primary"])]
    references: Option<String>,

    /// Default reference depth, 1 or 2.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(1..=2))]
    reference_depth: Option<u8>,

    /// Default cap on the entries of one response's references.
    #[arg(long, value_name = "N")]
    max_references: Option<usize>,

    /// Default cap on the new references one entity adds (each item of a list).
    #[arg(long, value_name = "N")]
    max_references_per_entity: Option<usize>,

    /// Reference fetches in flight at once, across every call being served.
    #[arg(long, value_name = "N")]
    max_parallel_queries: Option<usize>,

    /// What a failed reference becomes: indicate (status "failed" and its error) or omit.
    #[arg(long, value_name = "WHAT", value_parser = ["indicate", "omit"])]
    on_reference_error: Option<String>,

    /// Time allowed for one reference, in milliseconds.
    #[arg(long, value_name = "MS")]
    reference_timeout_ms: Option<u64>,

    /// How long resolved references are reused, in seconds (0 turns the cache off).
    #[arg(long, value_name = "SECS")]
    reference_cache_ttl: Option<u64>,

    /// How long a result over 25 KB stays fetchable by its handle, in seconds.
    #[arg(long, value_name = "SECS")]
    handle_ttl: Option<u64>,

    /// Where results over 25 KB are kept: `memory`, or a Redis URL
    /// (`redis://127.0.0.1:6379/0`) so several servers share their handles.
    #[arg(long, value_name = "STORE")]
    handle_store: Option<String>,

    /// A folder of Markdown reference docs to serve instead of the project's own
    /// (embedded, read-only) docs; links written by the docs tools go to its files.
    #[arg(long, value_name = "DIR")]
    docs: Option<PathBuf>,

    /// Tools that never carry references, whatever a call asks (comma-separated or
    /// repeated).
    #[arg(long, value_name = "TOOL", value_delimiter = ',')]
    no_references_for: Vec<String>,
}

/// The embedded world. The commands that make one (`serve-rest`, `proxy --embedded`,
/// `replay`) take these after their name too; the others do not list them.
#[derive(Debug, Clone, clap::Args)]
struct World {
    /// Publish the embedded world's events to this NATS server (GRASS subjects), so
    /// other consoles and servers can watch the same world.
    #[arg(long, value_name = "URL")]
    publish_events: Option<String>,

    /// Seed of the embedded world: the same seed always gives the same world.
    #[arg(long, default_value_t = WorldConfig::DEFAULT_SEED)]
    seed: u64,

    /// Number of players in the embedded world (guilds, planets, fleets and structs
    /// scale with it).
    #[arg(long, default_value_t = WorldConfig::DEMO_PLAYERS as u64,
          value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    world_size: u64,

    /// Block height the embedded world starts at.
    #[arg(long, default_value_t = WorldConfig::DEFAULT_HEIGHT)]
    start_height: u64,

    /// Start with the block clock paused (it then advances only when stepped).
    #[arg(long)]
    paused: bool,
}

impl World {
    /// These options over `outer` (those given before the command's name): each
    /// given here wins.
    fn over(&self, outer: &World) -> World {
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
enum Command {
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
    },
    /// Be an MCP client from the command line: connect to a server (`--connect`), send
    /// one request, print the answer as JSON, and exit 1 on an error answer.
    Client(structs_console::mcp::client::script::ClientArgs),
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
        #[command(flatten)]
        world: World,
    },
}

impl Cli {
    /// Takes the options a command gives after its name over those before it, so
    /// the rest reads one set.
    fn settle(&mut self) {
        let (world, token) = match &mut self.command {
            Some(Command::ServeRest {
                world, auth_token, ..
            })
            | Some(Command::Proxy {
                world, auth_token, ..
            }) => (Some(world.over(&self.world)), auth_token.take()),
            Some(Command::Replay { world, .. }) => (Some(world.over(&self.world)), None),
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

/// The configuration file, if any, with the command-line flags applied over it.
fn load_config(cli: &Cli) -> anyhow::Result<Config> {
    let mut config = match &cli.config {
        Some(path) => Config::load(path).map_err(|e| anyhow::anyhow!(e))?,
        None => Config::default(),
    };
    let r = &mut config.references;
    if let Some(mode) = &cli.references {
        r.include_references = match mode.as_str() {
            "on" => Include::On,
            "all" => Include::All,
            "primary" => Include::Primary,
            _ => Include::Off,
        };
    }
    if let Some(d) = cli.reference_depth {
        r.reference_depth = d;
    }
    if let Some(n) = cli.max_references {
        r.max_references = n;
        r.max_references_limit = r.max_references_limit.max(n);
    }
    if let Some(n) = cli.max_references_per_entity {
        r.max_references_per_entity = n;
    }
    if let Some(n) = cli.max_parallel_queries {
        r.max_parallel_queries = n;
    }
    if let Some(what) = &cli.on_reference_error {
        r.on_error = if what == "omit" {
            OnError::Omit
        } else {
            OnError::Indicate
        };
    }
    if let Some(ms) = cli.reference_timeout_ms {
        r.reference_timeout_ms = ms;
    }
    if let Some(secs) = cli.reference_cache_ttl {
        r.cache_ttl_secs = secs;
    }
    for tool in &cli.no_references_for {
        r.tools.entry(tool.clone()).or_default().enabled = Some(false);
    }
    r.validate().map_err(|e| anyhow::anyhow!("{e}"))?;
    if let Some(secs) = cli.handle_ttl {
        config.handles.ttl_secs = secs;
    }
    if let Some(store) = &cli.handle_store {
        config.handles.store = store.clone();
    }
    config
        .handles
        .validate()
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(config)
}

fn init_logging(cli: &Cli) -> anyhow::Result<()> {
    use tracing_subscriber::EnvFilter;
    let level = cli.log_level.clone().unwrap_or_else(|| match cli.command {
        // `client` says every failure itself, once, in plain words; the MCP library's
        // own lines (a transport that closed, logged at each handshake tried, an error
        // the client answers with) would only say it again, raw.
        Some(Command::Client(_)) => "warn,rmcp=off".into(),
        // rmcp warns of every error the client answers with (a rejected sampling).
        Some(Command::Proxy { .. }) => "warn,rmcp=error".into(),
        _ => "info".into(),
    });
    let mut filter = EnvFilter::try_new(&level)
        .map_err(|e| anyhow::anyhow!("invalid --log-level {level:?}: {e}"))?;
    // rmcp logs every request whole at debug and trace: arguments, and with them signed
    // transactions (`tx_bytes`). It stays at info unless the level names it itself.
    let asked = level.to_ascii_lowercase();
    if (asked.contains("debug") || asked.contains("trace")) && !asked.contains("rmcp") {
        filter = filter.add_directive("rmcp=info".parse().expect("a valid directive"));
    }
    // rmcp warns of every error a handler answers with, whole and without a throttle;
    // the server logs those itself, cut and at most once every 10 s
    // (`mcp::server::strict::bounded`), so the library says only its errors.
    if !asked.contains("rmcp") {
        filter = filter.add_directive("rmcp::service=error".parse().expect("a valid directive"));
    }
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    match (&cli.log_file, cli.headless || cli.command.is_some()) {
        (Some(path), _) => {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| anyhow::anyhow!("cannot open log file {}: {e}", path.display()))?;
            builder
                .with_ansi(false)
                .with_writer(std::sync::Mutex::new(file))
                .init();
        }
        // Headless, stdout carries the protocol, so logs go to stderr (serve-rest's too).
        (None, true) => builder.with_ansi(false).with_writer(std::io::stderr).init(),
        // The console owns the terminal: no log output unless a file was given.
        (None, false) => {}
    }
    Ok(())
}

/// The embedded world the command line describes.
fn sim_source(cli: &Cli) -> Arc<SimSource> {
    sim_maker(cli)()
}

/// Makes the embedded world the command line describes (again, for the console's
/// source dialog).
fn sim_maker(cli: &Cli) -> impl Fn() -> Arc<SimSource> + Send + Sync + 'static {
    let world = WorldConfig {
        seed: cli.world.seed,
        players: cli.world.world_size as usize,
        genesis_height: cli.world.start_height,
    };
    let paused = cli.world.paused;
    move || {
        let clock = if paused {
            BlockClock::paused(world.genesis_height)
        } else {
            BlockClock::running(world.genesis_height)
        };
        Arc::new(SimSource::new(world, clock))
    }
}

/// The `--record` session log, when asked for.
fn open_recorder(cli: &Cli) -> anyhow::Result<Option<Arc<structs_console::record::Recorder>>> {
    structs_console::record::Recorder::maybe(cli.record.as_deref(), None)
}

/// `proxy --embedded`'s server: what `--headless ARGS` would serve, built on the
/// proxy's runtime.
fn embedded_server(
    outer: &Cli,
    args: &[String],
    runtime: &tokio::runtime::Runtime,
) -> anyhow::Result<structs_console::mcp::proxy::cli::Embedded> {
    let words = ["structs-console", "--headless"]
        .into_iter()
        .map(String::from)
        .chain(args.iter().cloned());
    let mut inner = Cli::try_parse_from(words).map_err(|e| anyhow::anyhow!("{e}"))?;
    // The world's options may come before `--` too (`proxy --embedded --seed 7`); after
    // it they win.
    inner.world = inner.world.over(&outer.world);
    let config = load_config(&inner)?;
    let services = build_core(&inner, config, runtime, false)?;
    let mut server =
        structs_console::mcp::server::McpServer::new(services.core.clone(), services.docs.clone());
    if let Some(r) = structs_console::record::Recorder::maybe(inner.record.as_deref(), None)? {
        server = server.with_recorder(r);
    }
    Ok(structs_console::mcp::proxy::cli::Embedded {
        server,
        keep: Box::new(services),
    })
}

/// `structs-console watch`: the Live tab in a terminal, else the lines on stdout.
fn watch(cli: &Cli, endpoint: Option<&std::path::Path>, json: bool) -> anyhow::Result<ExitCode> {
    use structs_console::mcp::control;
    if json || !std::io::stdout().is_terminal() {
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let what = match endpoint {
            Some(p) => p.to_path_buf(),
            None => {
                if control::live_endpoints().is_empty() {
                    eprintln!(
                        "structs-console: waiting for a live endpoint in {} (a `structs-console proxy`, or `--headless --control`)",
                        control::default_dir().display()
                    );
                }
                control::wait_for_endpoint(&stop).unwrap_or_default()
            }
        };
        // Until the endpoint closes; a followed file, until interrupted.
        control::print_feed(&what, &mut std::io::stdout().lock(), stop)?;
        return Ok(ExitCode::SUCCESS);
    }
    let config = load_config(cli)?;
    run_console(cli, config, Some(Opening::Watch(endpoint)))
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

/// The REST settings the command line describes, for any endpoint.
fn rest_config(cli: &Cli) -> impl Fn(&str) -> RestConfig + Send + Sync + 'static {
    let rate = (cli.rate_limit > 0.0).then_some(cli.rate_limit);
    let (burst, retries) = (cli.rate_burst, cli.retries);
    let timeout = std::time::Duration::from_millis(cli.request_timeout_ms);
    move |endpoint| {
        let mut config = RestConfig::new(endpoint);
        config.rate_limit = rate;
        config.rate_burst = burst;
        config.timeout = timeout;
        config.retries = retries;
        config
    }
}

/// The `--publish-events` publisher of `source`'s events, when asked for.
fn publisher(
    cli: &Cli,
    runtime: &tokio::runtime::Runtime,
    source: Arc<dyn GameSource>,
) -> anyhow::Result<Option<NatsPublisher>> {
    let Some(url) = &cli.world.publish_events else {
        return Ok(None);
    };
    runtime
        .block_on(NatsPublisher::start(url, source))
        .map(Some)
        .map_err(|e| anyhow::anyhow!("--publish-events: {}", e.message))
}

/// What runs beside the core for the life of the process.
struct Services {
    core: Core,
    /// The reference docs: the docs tools read them, the MCP server serves them.
    docs: Arc<structs_console::docs::Docs>,
    /// Set when the console can switch sources (it wraps the first one).
    switch: Option<Arc<SwitchSource>>,
    _publisher: Option<NatsPublisher>,
}

fn build_core(
    cli: &Cli,
    config: Config,
    runtime: &tokio::runtime::Runtime,
    switchable: bool,
) -> anyhow::Result<Services> {
    let mut rest = None;
    let source: Arc<dyn GameSource> = match cli.source.as_str() {
        "rest" => {
            let endpoint = cli.endpoint.as_deref().ok_or_else(|| {
                anyhow::anyhow!("--source rest needs --endpoint URL (e.g. http://localhost:1317)")
            })?;
            let source = runtime
                .block_on(RestSource::connect(rest_config(cli)(endpoint)))
                .map_err(|e| anyhow::anyhow!("{}", e.message))?;
            rest = Some(source.clone());
            source
        }
        _ => {
            if cli.endpoint.is_some() {
                anyhow::bail!("--endpoint is for --source rest");
            }
            sim_source(cli)
        }
    };
    let publisher = publisher(cli, runtime, source.clone())?;
    let (source, switch): (Arc<dyn GameSource>, _) = if switchable {
        let switch = runtime.block_on(async { SwitchSource::new(source) });
        (switch.clone(), Some(switch))
    } else {
        (source, None)
    };
    let store = runtime
        .block_on(config.handles.open_store())
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let docs = match &cli.docs {
        Some(dir) => Arc::new(
            structs_console::docs::Docs::dir(dir).map_err(|e| anyhow::anyhow!("--docs: {e}"))?,
        ),
        None => Arc::new(structs_console::docs::Docs::embedded()),
    };
    let mut builder = structs_console::assembly::builder(source).docs(docs.clone());
    if let Some(url) = &cli.events {
        // A weak reference: a source the console switched away from is not kept alive
        // (nor its height poller) by the feed.
        let on_height: Option<Box<dyn Fn(u64) + Send + Sync>> = rest.as_ref().map(|r| {
            let weak = Arc::downgrade(r);
            Box::new(move |h| {
                if let Some(r) = weak.upgrade() {
                    r.set_height(h);
                }
            }) as Box<dyn Fn(u64) + Send + Sync>
        });
        let feed = runtime
            .block_on(NatsFeed::connect(url, on_height))
            .map_err(|e| anyhow::anyhow!("--events: {}", e.message))?;
        builder = builder.event_feed(feed);
    }
    let core = builder
        .handle_store(store)
        .references(config.references)
        .handles(config.handles)
        .build()
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(Services {
        core,
        docs,
        switch,
        _publisher: publisher,
    })
}

/// `serve-rest`: the embedded world over the chain's REST API until interrupted.
fn serve_rest(
    cli: &Cli,
    listen: &str,
    allow_remote: bool,
    latency_ms: u64,
) -> anyhow::Result<ExitCode> {
    let access = structs_console::guard::Access {
        token: cli.auth_token.clone(),
        allow_remote,
    };
    let runtime = tokio::runtime::Runtime::new()?;
    let sim = sim_source(cli);
    let _publisher = publisher(cli, &runtime, sim.clone())?;
    runtime.block_on(async {
        let server = RestServer::start_with(listen, sim.clone(), &access).await?;
        server
            .faults
            .set_latency(std::time::Duration::from_millis(latency_ms));
        // The one line a script waits for: where to point a client.
        println!("serving the embedded world's REST API at {}", server.url());
        tracing::info!(url = %server.url(), auth = access.token.is_some(), "serve-rest listening");
        tokio::select! {
            _ = server.wait() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

/// `--headless --http`: serves until Ctrl-C (or SIGTERM), then ends every session.
async fn serve_http(
    core: Core,
    docs: Arc<structs_console::docs::Docs>,
    recorder: Option<Arc<structs_console::record::Recorder>>,
    options: structs_console::mcp::wire::http::HttpOptions,
) -> anyhow::Result<()> {
    let mut server = structs_console::mcp::server::McpServer::new(core, docs);
    if let Some(r) = recorder {
        server = server.with_recorder(r);
    }
    let http = structs_console::mcp::server::http::HttpServer::start(server, &options).await?;
    // The one line a script waits for: where to point a client.
    println!("serving MCP over HTTP at {}", http.url());
    let stop = http.stopper();
    tokio::spawn(async move {
        shutdown_signal().await;
        stop.cancel();
    });
    http.wait().await
}

/// Ctrl-C, or SIGTERM on Unix.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(t) => t,
                Err(_) => {
                    let _ = tokio::signal::ctrl_c().await;
                    return;
                }
            };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    init_logging(&cli)?;
    if let Some(Command::ServeRest {
        listen,
        allow_remote,
        latency_ms,
        ..
    }) = &cli.command
    {
        return serve_rest(&cli, listen, *allow_remote, *latency_ms);
    }
    if let Some(Command::Proxy { args, .. }) = &cli.command {
        return structs_console::mcp::proxy::cli::run(
            args,
            cli.auth_token.clone(),
            Box::new(|args, runtime| embedded_server(&cli, args, runtime)),
        );
    }
    if let Some(Command::Watch { endpoint, json }) = &cli.command {
        return watch(&cli, endpoint.as_deref(), *json);
    }
    if let Some(Command::Client(args)) = cli.command {
        let runtime = tokio::runtime::Runtime::new()?;
        let token = cli.auth_token.clone();
        return Ok(runtime.block_on(structs_console::mcp::client::script::run(args, token)));
    }
    let config = load_config(&cli)?;
    if let Some(Command::Replay {
        file,
        check,
        ignore,
        ..
    }) = &cli.command
    {
        if !*check {
            return run_console(&cli, config, Some(Opening::Log(file)));
        }
        let runtime = tokio::runtime::Runtime::new()?;
        let services = build_core(&cli, config, &runtime, false)?;
        let mut rules = structs_console::record::diff::Ignore::default();
        for key in ignore {
            rules = rules.with(key);
        }
        let core = services.core.clone();
        let report = runtime
            .block_on(structs_console::record::replay::check(&core, file, &rules))
            .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", file.display()))?;
        let info = core.status();
        print!(
            "{}",
            structs_console::record::replay::render(
                &report,
                file,
                &format!(
                    "{} · {} (block {})",
                    info.name, info.description, info.block_height
                )
            )
        );
        return Ok(if report.passed() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        });
    }
    if cli.headless {
        let runtime = tokio::runtime::Runtime::new()?;
        let services = build_core(&cli, config, &runtime, false)?;
        let core = services.core.clone();
        let feed = cli
            .control
            .is_some()
            .then(structs_console::record::Feed::new);
        let recorder =
            structs_console::record::Recorder::maybe(cli.record.as_deref(), feed.clone())?;
        let _endpoint = match feed {
            Some(feed) => {
                let mut hello =
                    json!({"server": "headless", "description": core.status().description});
                if let Some(path) = cli
                    .record
                    .as_deref()
                    .and_then(|p| std::path::absolute(p).ok())
                {
                    hello["record"] = json!(path);
                }
                let _guard = runtime.enter();
                Some(structs_console::mcp::control::publish(
                    cli.control.clone().flatten().as_deref(),
                    "headless",
                    feed,
                    hello,
                    None,
                )?)
            }
            None => None,
        };
        if let Some(listen) = &cli.http {
            let options = structs_console::mcp::wire::http::HttpOptions {
                listen: listen.clone(),
                token: cli.auth_token.clone(),
                allow_remote: cli.http_allow_remote,
                sessions: structs_console::mcp::wire::http::SessionLimits {
                    max: cli.http_max_sessions,
                    idle: std::time::Duration::from_secs(cli.http_session_idle),
                },
                connections: structs_console::mcp::wire::http::ListenLimits {
                    max_connections: cli.http_max_connections,
                    ..Default::default()
                },
            };
            runtime.block_on(serve_http(core, services.docs.clone(), recorder, options))?;
            return Ok(ExitCode::SUCCESS);
        }
        tracing::info!(tools = core.tools().count(), source = %core.status().description, "serving MCP over stdio");
        runtime.block_on(structs_console::mcp::server::serve_stdio(
            core,
            services.docs.clone(),
            recorder,
        ))?;
        return Ok(ExitCode::SUCCESS);
    }
    run_console(&cli, config, None)
}

/// The console, with a session log open in the Replay pane when one is given.
fn run_console(cli: &Cli, config: Config, open: Option<Opening<'_>>) -> anyhow::Result<ExitCode> {
    if let Some(Opening::Log(path)) = open {
        std::fs::File::open(path)
            .map_err(|e| anyhow::anyhow!("cannot open the session log {}: {e}", path.display()))?;
    }
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        let hint = match open {
            Some(Opening::Log(path)) => format!(
                "To run the log again without the console, run: structs-console replay {} --check",
                path.display()
            ),
            Some(Opening::Watch(path)) => format!(
                "To print the traffic as JSON Lines, run: structs-console watch {} --json",
                path.map(|p| p.display().to_string()).unwrap_or_default()
            ),
            None => {
                "To serve the tools to an agent over stdio, run: structs-console --headless".into()
            }
        };
        eprintln!(
            "structs-console: the console needs an interactive terminal, but stdin or stdout \
             is not a TTY.\n{hint}"
        );
        return Ok(ExitCode::from(2));
    }
    let theme = Theme::load(&cli.theme).map_err(|e| anyhow::anyhow!("{e}"))?;
    let runtime = tokio::runtime::Runtime::new()?;
    if let Some(spec) = &cli.connect {
        let target = structs_console::mcp::client::Target::parse(spec)
            .map_err(|e| anyhow::anyhow!("--connect: {e}"))?;
        eprintln!("structs-console: attaching to {}…", target.describe());
        let roots = cli
            .roots
            .iter()
            .map(|d| structs_console::mcp::client::RootDir::from_dir(d))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| anyhow::anyhow!("--root: {e}"))?;
        let options = structs_console::mcp::client::Options {
            token: cli.auth_token.clone(),
            roots,
            ..Default::default()
        };
        let remote = runtime
            .block_on(structs_console::mcp::client::Remote::connect_with_options(
                target, options,
            ))
            .map_err(|e| e.context("cannot attach to the server"))?;
        let core = structs_console::mcp::client::attached_core(
            remote.clone(),
            structs_console::clock::WallClock::System,
        );
        let recorder = open_recorder(cli)?;
        structs_console::tui::run(core, theme, &runtime, None, recorder, open, Some(remote))?;
        return Ok(ExitCode::SUCCESS);
    }
    let services = build_core(cli, config, &runtime, true)?;
    let switcher = services.switch.clone().map(|switch| {
        let make_sim = sim_maker(cli);
        Switcher::new(
            switch,
            Box::new(move || make_sim() as Arc<dyn GameSource>),
            Box::new(rest_config(cli)),
            cli.endpoint.clone(),
        )
    });
    let recorder = open_recorder(cli)?;
    structs_console::tui::run(
        services.core.clone(),
        theme,
        &runtime,
        switcher,
        recorder,
        open,
        None,
    )?;
    Ok(ExitCode::SUCCESS)
}

/// A file-size limit (`ulimit -f`) reached by the session log must fail that write, not
/// kill the server: with SIGXFSZ ignored the write returns EFBIG, which the recorder
/// reports, and the calls go on being answered.
fn ignore_file_size_signal() {
    // SAFETY: setting a signal's disposition to SIG_IGN at start, before any thread is
    // spawned; no handler code runs.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}

fn main() -> ExitCode {
    ignore_file_size_signal();
    let mut cli = Cli::parse();
    cli.settle();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("structs-console: {e:#}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(words: &[&str]) -> Cli {
        let mut cli = Cli::try_parse_from(words).unwrap_or_else(|e| panic!("{words:?}: {e}"));
        cli.settle();
        cli
    }

    #[test]
    fn control_takes_a_path_or_none() {
        let cli = parsed(&["structs-console", "--headless", "--control"]);
        assert!(matches!(cli.control, Some(None)), "{:?}", cli.control);
        let cli = parsed(&["structs-console", "--headless", "--control", "--paused"]);
        assert!(matches!(cli.control, Some(None)));
        assert!(cli.world.paused);
        let cli = parsed(&["structs-console", "--headless", "--control", "/tmp/s.sock"]);
        assert_eq!(
            cli.control.flatten().as_deref(),
            Some(std::path::Path::new("/tmp/s.sock"))
        );
        assert!(parsed(&["structs-console", "--headless"]).control.is_none());
    }

    #[test]
    fn the_worlds_options_are_taken_before_or_after_the_commands_name() {
        let cli = parsed(&["structs-console", "--seed", "7", "serve-rest", "--paused"]);
        assert_eq!(cli.world.seed, 7);
        assert!(cli.world.paused);
        let cli = parsed(&[
            "structs-console",
            "--seed",
            "7",
            "replay",
            "x",
            "--seed",
            "9",
        ]);
        assert_eq!(cli.world.seed, 9, "after the name wins");
        let cli = parsed(&["structs-console", "proxy", "--world-size", "50", "--", "x"]);
        assert_eq!(cli.world.world_size, 50);
        // The token of the command that uses it.
        let cli = parsed(&[
            "structs-console",
            "client",
            "--auth-token",
            "a-token-of-16-chars",
            "--connect",
            "x",
            "ping",
        ]);
        assert_eq!(cli.auth_token.as_deref(), Some("a-token-of-16-chars"));
        // A command that makes no world does not take its options.
        for words in [
            &["structs-console", "watch", "--seed", "7"][..],
            &[
                "structs-console",
                "client",
                "--connect",
                "x",
                "--seed",
                "7",
                "ping",
            ],
            &[
                "structs-console",
                "watch",
                "--auth-token",
                "a-token-of-16-chars",
            ],
        ] {
            assert!(Cli::try_parse_from(words).is_err(), "{words:?}");
        }
    }
}
