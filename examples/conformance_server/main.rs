//! The MCP conformance suite's server, built on this project's own MCP layer: the
//! suite's fixture tools in a core of their own (`tools.rs`), its resources, template
//! and prompts as the layer's `Offer` (`offer.rs`), served by the same `McpServer`, over
//! the same HTTP face, stages of a call, Tasks, Skills, listen and caching as the
//! product's `--headless --http`. Nothing of it enters the product's catalog: it is
//! test code, run by `tests/peers.rs` against both eras of the official suite.
//!
//! ```sh
//! cargo run --example conformance_server -- [--listen 127.0.0.1:0] [--docs DIR]
//! ```
//!
//! The first line on stdout is `serving MCP over HTTP at URL`. `--docs` names a folder
//! whose `SKILL.md` files are served as skills (the suite's skills scenarios).

mod offer;
mod rounds;
mod tools;

use std::sync::Arc;

use structs_console::core::Core;
use structs_console::docs::Docs;
use structs_console::mcp::server::McpServer;
use structs_console::mcp::server::http::HttpServer;
use structs_console::mcp::wire::http::HttpOptions;
use structs_console::source::sim::SimSource;

fn main() -> anyhow::Result<()> {
    let mut listen = "127.0.0.1:0".to_string();
    let mut docs = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--listen" => {
                listen = args
                    .next()
                    .ok_or_else(|| anyhow::anyhow!("--listen ADDR"))?
            }
            "--docs" => docs = Some(args.next().ok_or_else(|| anyhow::anyhow!("--docs DIR"))?),
            other => anyhow::bail!("unknown argument {other}; takes --listen ADDR and --docs DIR"),
        }
    }
    // protocol_error_job panics on purpose: one line for it, not a backtrace.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let on_purpose = info
            .payload()
            .downcast_ref::<&str>()
            .is_some_and(|m| m.contains("on purpose"));
        if on_purpose {
            eprintln!("conformance_server: protocol_error_job panicked, as it should");
        } else {
            default_hook(info);
        }
    }));
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async move {
        let docs = match docs {
            Some(dir) => Docs::dir(dir).map_err(|e| anyhow::anyhow!("--docs: {e}"))?,
            None => Docs::embedded(),
        };
        let core = Core::builder(Arc::new(SimSource::demo()), tools::registry())
            .build()
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let server = McpServer::new(core, Arc::new(docs))
            .with_offer(Arc::new(offer::Fixtures))
            .serving_http();
        let options = HttpOptions {
            listen,
            token: None,
            allow_remote: false,
            callers: Vec::new(),
            sessions: Default::default(),
            connections: Default::default(),
        };
        let http = HttpServer::start(server, &options).await?;
        println!("serving MCP over HTTP at {}", http.url());
        tokio::select! {
            served = http.wait() => served,
            _ = tokio::signal::ctrl_c() => Ok(()),
        }
    })
}
