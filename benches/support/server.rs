//! The release server a benchmark runs: `--headless --http` on loopback, with the
//! figures read from `/proc` (its RSS, peak RSS, threads, CPU). Shared by the
//! benchmarks that measure the server whole (`soak`, `eras`).

use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncBufReadExt;

/// The server: the release binary, its pid and its MCP URL.
pub struct Server {
    pub child: tokio::process::Child,
    pub pid: u32,
    pub url: String,
    pub addr: String,
}

impl Server {
    pub async fn start(extra: &[&str]) -> Server {
        Server::start_bin(env!("CARGO_BIN_EXE_structs-console"), extra).await
    }

    pub async fn start_bin(bin: &str, extra: &[&str]) -> Server {
        let mut child = tokio::process::Command::new(bin)
            .args([
                "--headless",
                "--paused",
                "--log-level",
                "error",
                "--http",
                "127.0.0.1:0",
            ])
            .args(extra)
            .env_remove("STRUCTS_CONSOLE_AUTH_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("start the server");
        let pid = child.id().expect("pid");
        let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let line = lines.next_line().await.unwrap().expect("a line");
        let url = line
            .strip_prefix("serving MCP over HTTP at ")
            .expect("where it listens")
            .to_string();
        let addr = url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .to_string();
        Server {
            child,
            pid,
            url,
            addr,
        }
    }

    pub fn status(&self, key: &str) -> u64 {
        let s = std::fs::read_to_string(format!("/proc/{}/status", self.pid)).unwrap_or_default();
        s.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    }

    pub fn rss_mb(&self) -> f64 {
        self.status("VmRSS:") as f64 / 1024.0
    }

    pub fn peak_rss_mb(&self) -> f64 {
        self.status("VmHWM:") as f64 / 1024.0
    }

    pub fn threads(&self) -> u64 {
        self.status("Threads:")
    }

    pub fn cpu_ticks(&self) -> u64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid)).unwrap_or_default();
        let Some(at) = stat.rfind(')') else { return 0 };
        let f: Vec<&str> = stat[at + 2..].split_whitespace().collect();
        f.get(11).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0)
            + f.get(12).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0)
    }

    pub async fn stop(mut self) {
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &self.pid.to_string()])
            .status();
        let _ = tokio::time::timeout(Duration::from_secs(10), self.child.wait()).await;
    }
}
