//! A real `nats-server` for tests and benchmarks: started on a free loopback port,
//! stopped on drop, and restartable on the same port.
//!
//! Where `nats-server` is not installed, [`NatsServer::start`] returns `None` so a
//! developer's run skips the NATS cases with a note, except under CI (`CI` set), where
//! a missing server fails the test: `.ci/run` installs the `nats-server` package.

use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct NatsServer {
    binary: PathBuf,
    child: Option<Child>,
    pub port: u16,
}

/// The `redis-server` binary: `$REDIS_SERVER`, or the first on `PATH` or in the usual
/// places.
fn find_binary() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("NATS_SERVER") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/bin", "/usr/sbin", "/usr/local/bin"].map(PathBuf::from))
        .map(|dir| dir.join("nats-server"))
        .find(|p| p.is_file())
}

fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

impl NatsServer {
    /// Starts a server, or `None` (with a note) when Redis is not installed outside CI.
    pub fn start() -> Option<NatsServer> {
        let Some(binary) = find_binary() else {
            if under_ci() {
                panic!(
                    "nats-server is not installed, and CI requires the NATS tests to run \
                     (.ci/run installs the nats-server package)"
                );
            }
            eprintln!("note: nats-server not installed; skipping the NATS cases");
            return None;
        };
        // Another process may take the free port before the server binds it; then the
        // server exits and another port is tried.
        for _ in 0..5 {
            let mut server = NatsServer {
                binary: binary.clone(),
                child: None,
                port: free_port(),
            };
            if server.launch() {
                return Some(server);
            }
        }
        panic!("nats-server would not start on any of 5 free ports");
    }

    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Stops the server (core NATS keeps nothing).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        // Wait until the port refuses connections.
        let deadline = Instant::now() + Duration::from_secs(5);
        while TcpStream::connect(("127.0.0.1", self.port)).is_ok() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Starts the server again on the same port.
    pub fn restart(&mut self) {
        self.stop();
        assert!(
            self.launch(),
            "nats-server would not start again on port {}",
            self.port
        );
    }

    /// Starts the server and waits until it listens; false when it exited instead (its
    /// port was taken).
    fn launch(&mut self) -> bool {
        let child = Command::new(&self.binary)
            .args(["--port", &self.port.to_string(), "--addr", "127.0.0.1"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", self.binary.display()));
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            // Only our own server counts: one that exited left the port to others.
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(_)) = child.try_wait()
            {
                self.child = None;
                return false;
            }
            if TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return true;
            }
            assert!(
                Instant::now() < deadline,
                "nats-server did not listen on port {} within 10 s",
                self.port
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

pub use super::redis::free_port;
