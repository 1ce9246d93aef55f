//! The `structs-console` command: the console by default, an MCP server with
//! `--headless`.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;

use structs_console::Core;
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

fn build_core(cli: &Cli) -> Core {
    let config = WorldConfig {
        seed: cli.seed,
        players: cli.world_size as usize,
        genesis_height: cli.start_height,
    };
    let clock = if cli.paused {
        BlockClock::paused(config.genesis_height)
    } else {
        BlockClock::running(config.genesis_height)
    };
    Core::new(Arc::new(SimSource::new(config, clock)))
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    init_logging(&cli)?;
    if cli.headless {
        let runtime = tokio::runtime::Runtime::new()?;
        let core = build_core(&cli);
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
    let core = build_core(&cli);
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
