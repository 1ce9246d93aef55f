//! The `structs-console` command: the console by default, an MCP server with
//! `--headless`.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;

use structs_console::Core;
use structs_console::config::Config;
use structs_console::references::{Include, OnError};
use structs_console::source::sim::{BlockClock, SimSource, WorldConfig};
use structs_console::tui::theme::Theme;

/// A console and MCP server for building and debugging AI agents that play Structs.
#[derive(Debug, Parser)]
#[command(name = "structs-console", version, about)]
struct Cli {
    /// Serve the core as an MCP server over stdio instead of opening the console.
    #[arg(long)]
    headless: bool,

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

    /// Console theme: a built-in name (dark, light, mono) or a path to a TOML theme file.
    #[arg(long, default_value = "dark")]
    theme: String,

    /// Write logs to this file. Headless, logs go to stderr otherwise; the console
    /// logs nowhere unless this is given.
    #[arg(long)]
    log_file: Option<PathBuf>,

    /// Log filter (error, warn, info, debug, trace, or a tracing directive).
    #[arg(long, default_value = "info", env = "STRUCTS_CONSOLE_LOG")]
    log_level: String,

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
    let filter = EnvFilter::try_new(&cli.log_level)
        .map_err(|e| anyhow::anyhow!("invalid --log-level {:?}: {e}", cli.log_level))?;
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    match (&cli.log_file, cli.headless) {
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
        // Headless: stdout carries the protocol, so logs go to stderr.
        (None, true) => builder.with_ansi(false).with_writer(std::io::stderr).init(),
        // The console owns the terminal: no log output unless a file was given.
        (None, false) => {}
    }
    Ok(())
}

fn build_core(
    cli: &Cli,
    config: Config,
    runtime: &tokio::runtime::Runtime,
) -> anyhow::Result<Core> {
    let world = WorldConfig {
        seed: cli.seed,
        players: cli.world_size as usize,
        genesis_height: cli.start_height,
    };
    let clock = if cli.paused {
        BlockClock::paused(world.genesis_height)
    } else {
        BlockClock::running(world.genesis_height)
    };
    let source = Arc::new(SimSource::new(world, clock));
    let store = runtime
        .block_on(config.handles.open_store())
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut builder = Core::builder(source);
    if let Some(dir) = &cli.docs {
        let docs =
            structs_console::docs::Docs::dir(dir).map_err(|e| anyhow::anyhow!("--docs: {e}"))?;
        builder = builder.docs(Arc::new(docs));
    }
    builder
        .handle_store(store)
        .references(config.references)
        .handles(config.handles)
        .build()
        .map_err(|e| anyhow::anyhow!("{e}"))
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    init_logging(&cli)?;
    let config = load_config(&cli)?;
    if cli.headless {
        let runtime = tokio::runtime::Runtime::new()?;
        let core = build_core(&cli, config, &runtime)?;
        tracing::info!(tools = core.tools().count(), source = %core.status().description, "serving MCP over stdio");
        runtime.block_on(structs_console::mcp::serve_stdio(core))?;
        return Ok(ExitCode::SUCCESS);
    }
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        eprintln!(
            "structs-console: the console needs an interactive terminal, but stdin or stdout \
             is not a TTY.\nTo serve the tools to an agent over stdio, run: structs-console --headless"
        );
        return Ok(ExitCode::from(2));
    }
    let theme = Theme::load(&cli.theme).map_err(|e| anyhow::anyhow!("{e}"))?;
    let runtime = tokio::runtime::Runtime::new()?;
    let core = build_core(&cli, config, &runtime)?;
    structs_console::tui::run(core, theme, &runtime)?;
    Ok(ExitCode::SUCCESS)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("structs-console: {e:#}");
            ExitCode::FAILURE
        }
    }
}
