//! Several headless servers as one, for tests and benchmarks: Redis, NATS, one
//! `serve-rest` of the embedded world (paused, publishing its events to NATS), N
//! `--headless --http` servers reading it and sharing Redis and NATS, and HAProxy in
//! front with the shipped `deploy/haproxy.cfg` (plus a stats socket the tests read).
//!
//! Each piece is a real program on a free loopback port, stopped on drop. Where Redis,
//! NATS or HAProxy is not installed, [`Cluster::start`] returns `None` with a note,
//! except under CI, where `.ci/run` installs them and a missing one fails.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::daemon::{find_program, free_port, under_ci};
use super::nats::NatsServer;
use super::redis::RedisServer;

const BIN: &str = env!("CARGO_BIN_EXE_structs-console");

/// How long a server drains (`--http-drain`) before it stops: long enough for HAProxy
/// (checking every second, out after two failures) to stop sending it requests.
pub const DRAIN_SECS: u64 = 3;

/// One headless server: its process (None while stopped) and its port.
struct Server {
    child: Option<Child>,
    port: u16,
}

pub struct Cluster {
    pub redis: RedisServer,
    pub nats: NatsServer,
    rest: Child,
    rest_url: String,
    servers: Vec<Server>,
    /// HAProxy and the port it listens on, when the cluster is balanced.
    haproxy: Option<(Child, u16)>,
    dir: PathBuf,
    /// Whether the servers keep their handles and tasks in Redis (else each its own
    /// memory).
    shared_store: bool,
    /// Where the servers send traces (a collector's port), if anywhere.
    otlp: Option<u16>,
}

/// What [`Cluster::start_with`] starts.
#[derive(Clone, Copy)]
pub struct Setup {
    pub servers: usize,
    /// HAProxy in front (else a client talks to the first server directly).
    pub balanced: bool,
    /// Redis keeps what it was told across a restart (an append-only file synced on
    /// every write), as an operator who restarts it would run it.
    pub persistent: bool,
    /// The servers keep handles and tasks in Redis (`--handle-store`); else each in its
    /// own memory, as one server alone would.
    pub shared_store: bool,
    /// The port of an OTLP/HTTP collector on this host the servers send traces to
    /// (`--otlp`), each naming itself `server{i}` in `service.instance.id`.
    pub otlp: Option<u16>,
}

impl Default for Setup {
    fn default() -> Self {
        Setup {
            servers: 1,
            balanced: false,
            persistent: false,
            shared_store: true,
            otlp: None,
        }
    }
}

/// A program's path where it is installed, else None (a note, or a panic under CI).
fn installed(program: &str) -> Option<PathBuf> {
    let found = find_program(program);
    if found.is_none() {
        assert!(
            !under_ci(),
            "{program} is not installed, and CI requires the cluster tests (.ci/run installs it)"
        );
        eprintln!("note: {program} not installed; skipping the cluster cases");
    }
    found
}

/// Waits until `url` answers 200 to a GET.
fn wait_healthy(url: &str, within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        if http_status(url) == Some(200) {
            return;
        }
        assert!(Instant::now() < deadline, "nothing healthy at {url}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The status of a plain HTTP/1.1 GET of `url` (`http://host:port/path`).
pub fn http_status(url: &str) -> Option<u16> {
    let rest = url.strip_prefix("http://")?;
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut stream = std::net::TcpStream::connect(host).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    let path = if path.is_empty() { "/" } else { path };
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut first = String::new();
    BufReader::new(stream).read_line(&mut first).ok()?;
    first.split(' ').nth(1)?.parse().ok()
}

impl Cluster {
    /// `servers` servers, behind HAProxy when `balanced` (else a client talks to the
    /// first directly); None when a piece is not installed outside CI.
    pub fn start(servers: usize, balanced: bool) -> Option<Cluster> {
        Self::start_with(Setup {
            servers,
            balanced,
            ..Setup::default()
        })
    }

    /// The set `setup` describes.
    pub fn start_with(setup: Setup) -> Option<Cluster> {
        let Setup {
            servers,
            balanced,
            persistent,
            shared_store,
            otlp,
        } = setup;
        let haproxy = if balanced {
            Some(installed("haproxy")?)
        } else {
            None
        };
        let redis = if persistent {
            RedisServer::start_persistent()?
        } else {
            RedisServer::start()?
        };
        let nats = NatsServer::start()?;
        let dir = std::env::temp_dir().join(format!(
            "structs-cluster-{}-{}",
            std::process::id(),
            free_port()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("the cluster's directory");
        let (rest, rest_url) = start_rest(&nats.url(), &dir);
        let mut cluster = Cluster {
            redis,
            nats,
            rest,
            rest_url,
            servers: (0..servers)
                .map(|_| Server {
                    child: None,
                    port: free_port(),
                })
                .collect(),
            haproxy: None,
            dir,
            shared_store,
            otlp,
        };
        for i in 0..servers {
            cluster.launch(i);
        }
        if let Some(program) = haproxy {
            cluster.start_haproxy(&program);
        }
        Some(cluster)
    }

    /// Where a client points: HAProxy, or the first server.
    pub fn url(&self) -> String {
        match &self.haproxy {
            Some((_, port)) => format!("http://127.0.0.1:{port}/mcp"),
            None => self.server_url(0),
        }
    }

    pub fn server_url(&self, i: usize) -> String {
        format!("http://127.0.0.1:{}/mcp", self.servers[i].port)
    }

    /// The process id of server `i` (as task records name it, after the host).
    pub fn pid(&self, i: usize) -> Option<u32> {
        self.servers[i].child.as_ref().map(Child::id)
    }

    /// The `serve-rest` the servers read (the node), its process id.
    pub fn rest_pid(&self) -> u32 {
        self.rest.id()
    }

    /// HAProxy's process id, when the cluster is balanced.
    pub fn haproxy_pid(&self) -> Option<u32> {
        self.haproxy.as_ref().map(|(child, _)| child.id())
    }

    pub fn servers(&self) -> usize {
        self.servers.len()
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Starts server `i` on its port and waits until its `/health` says ok.
    fn launch(&mut self, i: usize) {
        let port = self.servers[i].port;
        let log = std::fs::File::create(self.dir.join(format!("server{i}.log"))).expect("a log");
        let mut command = Command::new(BIN);
        command
            .args(["--headless", "--http", &format!("127.0.0.1:{port}")])
            .args(["--http-drain", &DRAIN_SECS.to_string()])
            .args(["--source", "rest", "--endpoint", &self.rest_url])
            .args(["--events", &self.nats.url()])
            .args(["--log-level", "info"]);
        if self.shared_store {
            command.args(["--handle-store", &self.redis.url()]);
        }
        if let Some(port) = self.otlp {
            command
                .args(["--otlp", &format!("http://127.0.0.1:{port}")])
                .env(
                    "OTEL_RESOURCE_ATTRIBUTES",
                    format!("service.instance.id=server{i}"),
                );
        }
        let child = command
            .env_remove("STRUCTS_CONSOLE_AUTH_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start a headless server");
        self.servers[i].child = Some(child);
        wait_healthy(
            &format!("http://127.0.0.1:{port}/health"),
            Duration::from_secs(60),
        );
    }

    fn start_haproxy(&mut self, program: &Path) {
        let shipped = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/haproxy.cfg");
        let mut cfg = std::fs::read_to_string(shipped).expect("deploy/haproxy.cfg");
        // The stats socket the tests read each server's state from.
        let socket = self.dir.join("haproxy.sock");
        cfg = cfg.replacen(
            "global\n",
            &format!(
                "global\n    stats socket {} level admin\n",
                socket.display()
            ),
            1,
        );
        for (i, s) in self.servers.iter().enumerate() {
            cfg.push_str(&format!("    server s{i} 127.0.0.1:{}\n", s.port));
        }
        let path = self.dir.join("haproxy.cfg");
        std::fs::write(&path, cfg).expect("write haproxy.cfg");
        let port = free_port();
        let log = std::fs::File::create(self.dir.join("haproxy.log")).expect("a log");
        let child = Command::new(program)
            .args(["-db", "-f"])
            .arg(&path)
            .env("MCP_FRONT", format!("127.0.0.1:{port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start haproxy");
        self.haproxy = Some((child, port));
        wait_healthy(
            &format!("http://127.0.0.1:{port}/health"),
            Duration::from_secs(20),
        );
        for i in 0..self.servers.len() {
            self.wait_in_rotation(i, true);
        }
    }

    /// Each server's state as HAProxy sees it (`UP`, `DOWN`, `MAINT`, …), by name `sI`.
    pub fn balancer_states(&self) -> Vec<(String, String)> {
        self.balancer_stats()
            .into_iter()
            .map(|(name, state, _)| (name, state))
            .collect()
    }

    /// Each server's name, state and how many requests' connections HAProxy has sent it.
    pub fn balancer_stats(&self) -> Vec<(String, String, u64)> {
        let Ok(mut s) = UnixStream::connect(self.dir.join("haproxy.sock")) else {
            return Vec::new();
        };
        let _ = s.write_all(b"show stat\n");
        let mut csv = String::new();
        let _ = s.read_to_string(&mut csv);
        // # pxname,svname,qcur,qmax,scur,smax,slim,stot,…,status (column 18)
        csv.lines()
            .filter(|l| l.starts_with("servers,s"))
            .filter_map(|l| {
                let cols: Vec<&str> = l.split(',').collect();
                Some((
                    cols.get(1)?.to_string(),
                    cols.get(17)?.to_string(),
                    cols.get(7)?.parse().ok()?,
                ))
            })
            .collect()
    }

    /// Waits until HAProxy has server `i` in rotation (`up`) or out of it.
    pub fn wait_in_rotation(&self, i: usize, up: bool) {
        let name = format!("s{i}");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let states = self.balancer_states();
            let state = states
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, s)| s.as_str());
            if state.is_some_and(|s| s.starts_with("UP") == up && !s.contains("going")) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "HAProxy never had s{i} {}: {states:?}",
                if up { "up" } else { "down" }
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Kills server `i` at once (SIGKILL: no drain, its tasks left as they were).
    pub fn kill(&mut self, i: usize) {
        if let Some(mut child) = self.servers[i].child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Stops server `i` as an operator's restart does (SIGTERM: it drains, then stops)
    /// and waits for it to exit; how it exited.
    pub fn stop(&mut self, i: usize) -> Option<std::process::ExitStatus> {
        let mut child = self.servers[i].child.take()?;
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(DRAIN_SECS + 20);
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                return Some(status);
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!(
                    "server {i} did not stop within {} s of SIGTERM",
                    DRAIN_SECS + 20
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Starts server `i` again on its port; when balanced, waits until HAProxy has it
    /// back in rotation.
    pub fn start_again(&mut self, i: usize) {
        self.launch(i);
        if self.haproxy.is_some() {
            self.wait_in_rotation(i, true);
        }
    }

    /// Restarts the shared Redis on its port (what it kept depends on how it was
    /// started: [`Cluster::start_with`]).
    pub fn restart_redis(&mut self) {
        self.redis.restart();
    }

    /// Restarts the shared NATS on its port (core NATS keeps nothing).
    pub fn restart_nats(&mut self) {
        self.nats.restart();
    }

    /// What the servers logged, for a failure's message.
    pub fn logs(&self) -> String {
        let mut all = String::new();
        for i in 0..self.servers.len() {
            let log = std::fs::read_to_string(self.dir.join(format!("server{i}.log")))
                .unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(15).collect();
            all.push_str(&format!("--- server {i}\n"));
            for l in tail.into_iter().rev() {
                all.push_str(l);
                all.push('\n');
            }
        }
        all
    }
}

/// `serve-rest --paused` on a free port, publishing to NATS; its URL.
fn start_rest(nats: &str, dir: &Path) -> (Child, String) {
    let log = std::fs::File::create(dir.join("rest.log")).expect("a log");
    let mut child = Command::new(BIN)
        .args(["serve-rest", "--listen", "127.0.0.1:0", "--paused"])
        .args(["--publish-events", nats, "--log-level", "warn"])
        .env_remove("STRUCTS_CONSOLE_AUTH_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(log)
        .spawn()
        .expect("start serve-rest");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("serve-rest prints its address");
    let url = line
        .trim()
        .rsplit(' ')
        .next()
        .unwrap_or_default()
        .to_string();
    assert!(
        url.starts_with("http://127.0.0.1:"),
        "serve-rest said {line:?}"
    );
    (child, url)
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if let Some((mut h, _)) = self.haproxy.take() {
            let _ = h.kill();
            let _ = h.wait();
        }
        for s in &mut self.servers {
            if let Some(mut c) = s.child.take() {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
        let _ = self.rest.kill();
        let _ = self.rest.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
