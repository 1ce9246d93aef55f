//! The `structs-console` command: the console by default, an MCP server with
//! `--headless`.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use serde_json::json;

use structs_console::Core;
use structs_console::config::Config;
use structs_console::nats::{NatsFeed, NatsPublisher};
use structs_console::record::Redaction;
use structs_console::references::{Include, OnError};
use structs_console::rest::server::RestServer;
use structs_console::source::GameSource;
use structs_console::source::rest::{RestConfig, RestSource};
use structs_console::source::sim::{BlockClock, SimSource, WorldConfig};
use structs_console::source::switch::{SwitchSource, Switcher};
use structs_console::telemetry::Telemetry;
use structs_console::tui::Opening;
use structs_console::tui::theme::Theme;

#[path = "main/args.rs"]
mod args;
#[path = "main/quiet.rs"]
mod quiet;
#[path = "main/recordings.rs"]
mod recordings;

use args::{Cli, Command};

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

/// Sets up the log (to `--log-file`, or stderr for every face but the console) and, when
/// `--otlp` or the `OTEL_*` variables ask, the export of traces and metrics, whose
/// exporter is returned to be shut down at the end.
fn init_logging(cli: &Cli) -> anyhow::Result<Option<Telemetry>> {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::{Layer, Registry};
    let telemetry =
        structs_console::telemetry::Settings::from_env(cli.otlp.as_deref(), cli.otlp_content)
            .map_err(anyhow::Error::msg)?
            .map(Telemetry::start)
            .transpose()?;
    let mut filter = log_filter(cli)?;
    let mut layers: Vec<Box<dyn Layer<Registry> + Send + Sync>> = Vec::new();
    if let Some(t) = &telemetry {
        filter = filter.add_directive(
            format!("{}=trace", structs_console::context::trace::TARGET)
                .parse()
                .expect("a valid directive"),
        );
        layers.push(t.layer::<Registry>().boxed());
    }
    // The trace's own spans and events are not log lines.
    let not_trace = tracing_subscriber::filter::filter_fn(|meta| {
        meta.target() != structs_console::context::trace::TARGET
    });
    let fmt = tracing_subscriber::fmt::layer().with_ansi(false);
    match (&cli.log_file, cli.headless || cli.command.is_some()) {
        (Some(path), _) => {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| anyhow::anyhow!("cannot open log file {}: {e}", path.display()))?;
            let fmt = fmt.with_writer(std::sync::Mutex::new(file));
            layers.push(fmt.with_filter(not_trace).boxed());
        }
        // Headless, stdout carries the protocol, so logs go to stderr (serve-rest's too).
        (None, true) => {
            let fmt = fmt.with_writer(std::io::stderr);
            layers.push(fmt.with_filter(not_trace).boxed());
        }
        // The console owns the terminal: no log output unless a file was given.
        (None, false) if telemetry.is_none() => return Ok(None),
        (None, false) => {
            filter = tracing_subscriber::EnvFilter::new("off").add_directive(
                format!("{}=trace", structs_console::context::trace::TARGET)
                    .parse()
                    .expect("a valid directive"),
            )
        }
    }
    // The library's repeated lines, once a line of its code every 10 s.
    layers.push(quiet::LibraryThrottle::default().boxed());
    tracing_subscriber::registry()
        .with(layers)
        .with(filter)
        .init();
    Ok(telemetry)
}

/// The log filter `--log-level` (or the command's default) gives.
fn log_filter(cli: &Cli) -> anyhow::Result<tracing_subscriber::EnvFilter> {
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
    Ok(filter)
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

/// The `--record` session log, when asked for, hiding what `config`'s `[redact]` rules
/// find.
fn open_recorder(
    cli: &Cli,
    config: &Config,
) -> anyhow::Result<Option<Arc<structs_console::record::Recorder>>> {
    structs_console::record::Recorder::maybe(cli.record.as_deref(), None, redaction_of(config)?)
}

/// What the configuration's `[redact]` rules hide (the standard rules without one).
fn redaction_of(config: &Config) -> anyhow::Result<Arc<Redaction>> {
    Redaction::from_config(&config.redact)
        .map(Arc::new)
        .map_err(|e| anyhow::anyhow!(e))
}

/// The redaction rules of `--config`, for the commands that read or serve recordings.
fn redaction(cli: &Cli) -> anyhow::Result<Arc<Redaction>> {
    match &cli.config {
        Some(path) => redaction_of(&Config::load(path).map_err(|e| anyhow::anyhow!(e))?),
        None => Ok(Redaction::standard()),
    }
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
    let recorder = open_recorder(&inner, &config)?;
    let services = build_core(&inner, config, runtime, false)?;
    let mut server =
        structs_console::mcp::server::McpServer::new(services.core.clone(), services.docs.clone());
    if let Some(r) = recorder {
        server = server.with_recorder(r);
    }
    Ok(structs_console::mcp::proxy::cli::Embedded {
        server,
        keep: Box::new(services),
    })
}

/// `structs-console watch`: the Live tab in a terminal, else the lines on stdout.
fn watch(
    cli: &Cli,
    endpoint: Option<&std::path::Path>,
    json: bool,
    filter: Option<&str>,
) -> anyhow::Result<ExitCode> {
    use structs_console::mcp::control;
    let filter = filter
        .map(structs_console::record::filter::Filter::parse)
        .transpose()
        .map_err(|e| anyhow::anyhow!("--filter: {e}"))?;
    if json || filter.is_some() || !std::io::stdout().is_terminal() {
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
        let mut out = std::io::stdout().lock();
        match &filter {
            Some(filter) => control::print_feed_filtered(&what, &mut out, stop, filter)?,
            None => control::print_feed(&what, &mut out, stop)?,
        }
        return Ok(ExitCode::SUCCESS);
    }
    let config = load_config(cli)?;
    run_console(
        cli,
        config,
        Some(Opening::Watch(endpoint)),
        cli.connect.as_deref(),
    )
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
        let on_heard: Option<structs_console::nats::OnHeard> = rest.as_ref().map(|r| {
            let weak = Arc::downgrade(r);
            Box::new(move |heard: structs_console::nats::Heard<'_>| {
                if let Some(r) = weak.upgrade() {
                    match heard {
                        structs_console::nats::Heard::Height(h) => r.set_height(h),
                        structs_console::nats::Heard::Changed(ids) => r.forget(ids),
                    }
                }
            }) as structs_console::nats::OnHeard
        });
        let feed = runtime
            .block_on(NatsFeed::connect(url, on_heard))
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
    server: structs_console::mcp::server::McpServer,
    options: structs_console::mcp::wire::http::HttpOptions,
    drain: std::time::Duration,
) -> anyhow::Result<()> {
    let tasks = server.tasks();
    let http = structs_console::mcp::server::http::HttpServer::start(server, &options).await?;
    // The one line a script waits for: where to point a client.
    println!("serving MCP over HTTP at {}", http.url());
    let (drainer, stop) = (http.drainer(), http.stopper());
    tokio::spawn(async move {
        shutdown_signal().await;
        tokio::spawn(drainer.drain(drain));
        // A second signal does not wait for the drain.
        shutdown_signal().await;
        stop.cancel();
    });
    let served = http.wait().await;
    tasks
        .shut_down(structs_console::mcp::server::tasks::SHUT_DOWN_WAIT)
        .await;
    served
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
    let telemetry = init_logging(&cli)?;
    let code = run_face(cli);
    if let Some(t) = telemetry {
        t.shutdown();
    }
    code
}

/// The face the command line names, run to its end.
fn run_face(cli: Cli) -> anyhow::Result<ExitCode> {
    // Opened at the first search, not now.
    if let Some(choice) = structs_pow::backend::Choice::parse(&cli.pow_backend) {
        structs_pow::backend::configure(choice);
    }
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
            redaction(&cli)?,
        );
    }
    if let Some(Command::ServeRecording { args, .. }) = &cli.command {
        return structs_console::mcp::proxy::cli::run(
            &args.proxy(),
            cli.auth_token.clone(),
            Box::new(|_, _| anyhow::bail!("serve-recording starts no server of its own")),
            redaction(&cli)?,
        );
    }
    if let Some(Command::Watch {
        endpoint,
        json,
        filter,
    }) = &cli.command
    {
        return watch(&cli, endpoint.as_deref(), *json, filter.as_deref());
    }
    if let Some(code) = recordings::run(&cli) {
        return Ok(code);
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
        connect,
        ..
    }) = &cli.command
    {
        if !*check {
            // `--connect`: the calls run again on that server, in the Replay tab.
            let target = connect.as_deref().or(cli.connect.as_deref());
            return run_console(&cli, config, Some(Opening::Log(file)), target);
        }
        return replay_check(&cli, config, file, ignore, connect.as_deref());
    }
    if cli.headless {
        return run_headless(&cli, config);
    }
    run_console(&cli, config, None, cli.connect.as_deref())
}

/// `replay --check`: runs the log's calls again, prints how the answers compare, and
/// exits 1 when any differs.
fn replay_check(
    cli: &Cli,
    config: Config,
    file: &std::path::Path,
    ignore: &[String],
    connect: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Runtime::new()?;
    let mut rules = structs_console::record::diff::Ignore::default();
    for key in ignore {
        rules = rules.with(key);
    }
    // Against another server: its tools, reached through the console's client.
    // (What the embedded core runs with lives as long as the check.)
    let (core, remote, kept) = match connect {
        Some(target) => {
            let (core, remote) = replay_remote(cli, &runtime, target)?;
            (core, Some(remote), None)
        }
        None => {
            let services = build_core(cli, config, &runtime, false)?;
            (services.core.clone(), None, Some(services))
        }
    };
    // A server asking for input is given what the recorded agent answered.
    let report = runtime
        .block_on(structs_console::record::replay::check(&core, file, &rules))
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", file.display()))?;
    if let Some(remote) = &remote {
        runtime.block_on(remote.close());
    }
    drop(kept);
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
    Ok(if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `replay --check --connect`: the server `target` names, attached to, with the core that
/// reaches its tools; input it asks for is answered from the log.
fn replay_remote(
    cli: &Cli,
    runtime: &tokio::runtime::Runtime,
    target: &str,
) -> anyhow::Result<(Core, Arc<structs_console::mcp::client::Remote>)> {
    let target = structs_console::mcp::client::Target::parse(target)
        .map_err(|e| anyhow::anyhow!("--connect: {e}"))?;
    let options = structs_console::mcp::client::Options {
        token: cli.auth_token.clone(),
        follow_height: false,
        tasks: true,
        answers: structs_console::mcp::client::Answers::Script(
            structs_console::mcp::client::Script::default(),
        ),
        ..Default::default()
    };
    let remote = runtime
        .block_on(structs_console::mcp::client::Remote::connect_with_options(
            target, options,
        ))
        .map_err(|e| anyhow::anyhow!("cannot attach to the server: {e:#}"))?;
    let core = structs_console::mcp::client::attached_core(
        remote.clone(),
        structs_console::clock::WallClock::System,
    );
    Ok((core, remote))
}

/// `--headless`: the tools served to an agent over stdio, or over HTTP with `--http`.
fn run_headless(cli: &Cli, config: Config) -> anyhow::Result<ExitCode> {
    let runtime = if cli.http.is_some() {
        tokio::runtime::Runtime::new()?
    } else {
        structs_console::mcp::wire::stdio_runtime()?
    };
    let redaction = redaction_of(&config)?;
    let services = build_core(cli, config, &runtime, false)?;
    let core = services.core.clone();
    let feed = cli
        .control
        .is_some()
        .then(structs_console::record::Feed::new);
    let recorder =
        structs_console::record::Recorder::maybe(cli.record.as_deref(), feed.clone(), redaction)?;
    let _endpoint = match feed {
        Some(feed) => Some(publish_headless(cli, &core, &runtime, feed)?),
        None => None,
    };
    let mut server =
        structs_console::mcp::server::McpServer::new(core.clone(), services.docs.clone());
    if let Some(r) = recorder {
        server = server.with_recorder(r);
    }
    if cli.confirm_actions {
        server = server.confirming().map_err(anyhow::Error::msg)?;
    }
    if let Some(listen) = &cli.http {
        server = server.with_stream_idle(std::time::Duration::from_secs(cli.http_listen_idle));
        let drain = std::time::Duration::from_secs(cli.http_drain);
        runtime.block_on(serve_http(server, http_options(cli, listen)?, drain))?;
        return Ok(ExitCode::SUCCESS);
    }
    tracing::info!(tools = server.core().tools().count(), source = %server.core().status().description, "serving MCP over stdio");
    runtime.block_on(structs_console::mcp::server::serve_stdio(server))?;
    Ok(ExitCode::SUCCESS)
}

/// `--headless --control`: publishes the feed on the control endpoint, greeting a watcher
/// with the server's description and the session log's path.
fn publish_headless(
    cli: &Cli,
    core: &Core,
    runtime: &tokio::runtime::Runtime,
    feed: structs_console::record::Feed,
) -> anyhow::Result<structs_console::mcp::control::Endpoint> {
    let mut hello = json!({"server": "headless", "description": core.status().description});
    if let Some(path) = cli
        .record
        .as_deref()
        .and_then(|p| std::path::absolute(p).ok())
    {
        hello["record"] = json!(path);
    }
    let _guard = runtime.enter();
    structs_console::mcp::control::publish(
        cli.control.clone().flatten().as_deref(),
        "headless",
        feed,
        hello,
        None,
    )
}

/// `--headless --http`: where to listen, the token, and the session and connection limits.
fn http_options(
    cli: &Cli,
    listen: &str,
) -> anyhow::Result<structs_console::mcp::wire::http::HttpOptions> {
    let callers = match &cli.caller_tokens {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| anyhow::anyhow!("--caller-tokens {}: {e}", path.display()))?;
            structs_console::guard::read_callers(&text)
                .map_err(|e| anyhow::anyhow!("--caller-tokens {}: {e}", path.display()))?
        }
        None => Vec::new(),
    };
    Ok(structs_console::mcp::wire::http::HttpOptions {
        listen: listen.to_owned(),
        token: cli.auth_token.clone(),
        allow_remote: cli.http_allow_remote,
        callers,
        sessions: structs_console::mcp::wire::http::SessionLimits {
            max: cli.http_max_sessions,
            idle: std::time::Duration::from_secs(cli.http_session_idle),
        },
        connections: structs_console::mcp::wire::http::ListenLimits {
            max_connections: cli.http_max_connections,
            ..Default::default()
        },
    })
}

/// The console, with a session log open in the Replay pane when one is given.
/// The console on the embedded world, or attached to the server `connect` names.
fn run_console(
    cli: &Cli,
    config: Config,
    open: Option<Opening<'_>>,
    connect: Option<&str>,
) -> anyhow::Result<ExitCode> {
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
    let recorder = open_recorder(cli, &config)?;
    let redaction = Some(redaction_of(&config)?);
    if let Some(spec) = connect {
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
        structs_console::tui::run(
            core,
            theme,
            &runtime,
            structs_console::tui::Setup {
                recorder,
                open,
                attached: Some(remote),
                log_file: cli.log_file.as_deref(),
                redaction: redaction.clone(),
                ..Default::default()
            },
        )?;
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
    structs_console::tui::run(
        services.core.clone(),
        theme,
        &runtime,
        structs_console::tui::Setup {
            switcher,
            recorder,
            open,
            attached: None,
            log_file: cli.log_file.as_deref(),
            redaction,
        },
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
