//! The headless server over HTTP: started as the built binary, and rmcp clients for it.

use std::process::Stdio;

use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use tokio::io::AsyncBufReadExt;

/// `structs-console --headless --http 127.0.0.1:0 ARGS`, running until dropped.
pub struct Headless {
    pub child: tokio::process::Child,
    /// The MCP endpoint, as the server printed it.
    pub url: String,
}

impl Headless {
    /// Starts the server with `args` (on `--http 127.0.0.1:0` unless they name another
    /// address) and waits for
    /// the line that says where it listens.
    pub async fn start(args: &[&str], env: &[(&str, &str)]) -> Headless {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_structs-console"));
        cmd.arg("--headless");
        if !args.contains(&"--log-level") {
            cmd.args(["--log-level", "warn"]);
        }
        if !args.contains(&"--http") {
            cmd.args(["--http", "127.0.0.1:0"]);
        }
        cmd.args(args)
            .env_remove("STRUCTS_CONSOLE_AUTH_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        for (k, v) in env {
            cmd.env(k, v);
        }
        Headless::spawn(cmd).await
    }

    /// The conformance suite's server (`examples/conformance_server`, which `cargo
    /// test` builds beside the tests) with `args`.
    #[allow(dead_code)]
    pub async fn conformance_server(args: &[&str]) -> Headless {
        // target/debug/deps/TEST → target/debug/examples/conformance_server
        let exe = std::env::current_exe().expect("the test's path");
        let bin = exe
            .parent()
            .and_then(std::path::Path::parent)
            .expect("the target folder")
            .join("examples/conformance_server");
        assert!(bin.exists(), "{} is built by cargo test", bin.display());
        let mut cmd = tokio::process::Command::new(bin);
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        Headless::spawn(cmd).await
    }

    /// Spawns `cmd` and waits for the line that says where it listens.
    async fn spawn(mut cmd: tokio::process::Command) -> Headless {
        let mut child = cmd.spawn().expect("spawn the MCP server");
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = tokio::io::BufReader::new(stdout).lines();
        let line = tokio::time::timeout(std::time::Duration::from_secs(60), lines.next_line())
            .await
            .expect("the server says where it listens within a minute")
            .expect("read stdout")
            .expect("a line on stdout");
        let url = line
            .strip_prefix("serving MCP over HTTP at ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_string();
        Headless { child, url }
    }

    /// Stops the server as Ctrl-C would and waits for it to exit.
    pub async fn stop(mut self) -> std::process::ExitStatus {
        if let Some(pid) = self.child.id() {
            // SIGINT: the server ends its sessions and exits cleanly.
            let _ = std::process::Command::new("kill")
                .args(["-INT", &pid.to_string()])
                .status();
        }
        tokio::time::timeout(std::time::Duration::from_secs(20), self.child.wait())
            .await
            .expect("the server exits after SIGINT")
            .expect("wait")
    }
}

/// An rmcp client of `url`, with a bearer token when given.
pub async fn connect(
    url: &str,
    token: Option<&str>,
) -> Result<RunningService<RoleClient, ()>, rmcp::service::ClientInitializeError> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    if let Some(token) = token {
        config = config.auth_header(token.to_string());
    }
    let transport = StreamableHttpClientTransport::with_client(reqwest::Client::new(), config);
    ().serve(transport).await
}
