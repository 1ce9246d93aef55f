//! A real server program for tests and benchmarks (`redis-server`, `nats-server`):
//! started on a free loopback port, stopped on drop, and restartable on the same port.
//!
//! Where the program is not installed, [`Daemon::start`] returns `None` so a
//! developer's run skips those cases with a note, except under CI (`CI` set), where a
//! missing program fails the test: `.ci/run` installs its package.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// What differs from one server program to another.
pub struct Spec {
    /// The program's name, as installed (`redis-server`).
    pub program: &'static str,
    /// The environment variable that may name the binary instead (`REDIS_SERVER`).
    pub env: &'static str,
    /// What a run without the program skips (`the Redis store cases`).
    pub skips: &'static str,
    /// Its arguments to listen on 127.0.0.1 at a port, keeping any files in a directory
    /// of its own (the same one across restarts).
    pub args: fn(u16, &Path) -> Vec<String>,
    /// Whether its stderr goes to the test's (else it is dropped).
    pub show_stderr: bool,
}

pub struct Daemon {
    spec: &'static Spec,
    binary: PathBuf,
    child: Option<Child>,
    pub port: u16,
    /// The server's own directory, removed on drop.
    pub dir: PathBuf,
}

/// A fresh empty directory for one server.
fn scratch_dir(program: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "structs-console-{program}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory for the server");
    dir
}

/// The binary: `$ENV`, or the first on `PATH` or in the usual places.
fn find_binary(spec: &Spec) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(spec.env) {
        return Some(PathBuf::from(p));
    }
    find_program(spec.program)
}

/// A program's path: the first on `PATH`, or in the usual places (Debian puts some
/// servers in `/usr/sbin`, off a user's `PATH`).
pub fn find_program(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin"].map(PathBuf::from))
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

pub fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

impl Daemon {
    /// Starts a server, or `None` (with a note) when it is not installed outside CI.
    pub fn start(spec: &'static Spec) -> Option<Daemon> {
        let Some(binary) = find_binary(spec) else {
            if under_ci() {
                panic!(
                    "{} is not installed, and CI requires the tests that use it to run \
                     (.ci/run installs its package)",
                    spec.program
                );
            }
            eprintln!(
                "note: {} not installed; skipping {}",
                spec.program, spec.skips
            );
            return None;
        };
        // Another process may take the free port before the server binds it; then the
        // server exits and another port is tried.
        for _ in 0..5 {
            let mut server = Daemon {
                spec,
                binary: binary.clone(),
                child: None,
                port: free_port(),
                dir: scratch_dir(spec.program),
            };
            if server.launch() {
                return Some(server);
            }
        }
        panic!("{} would not start on any of 5 free ports", spec.program);
    }

    /// The server's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Kills the server (SIGKILL: it gets no chance to save anything it has not already
    /// written to its directory).
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
            "{} would not start again on port {}",
            self.spec.program,
            self.port
        );
    }

    /// Starts the server and waits until it listens; false when it exited instead (its
    /// port was taken).
    fn launch(&mut self) -> bool {
        let child = Command::new(&self.binary)
            .args((self.spec.args)(self.port, &self.dir))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(if self.spec.show_stderr {
                Stdio::inherit()
            } else {
                Stdio::null()
            })
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
                "{} did not listen on port {} within 10 s",
                self.spec.program,
                self.port
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A loopback port nothing listens on right now.
pub fn free_port() -> u16 {
    TcpListener::bind(("127.0.0.1", 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}
