//! A real `redis-server` for tests and benchmarks, with no persistence unless asked (see
//! [`super::daemon`]: a free loopback port, stopped on drop, restartable, skipped with a
//! note where Redis is not installed outside CI).

use super::daemon::{Daemon, Spec};

static SPEC: Spec = Spec {
    program: "redis-server",
    env: "REDIS_SERVER",
    skips: "the Redis store cases",
    args: |port, _dir| args(port, &["--save", "", "--appendonly", "no"]),
    show_stderr: true,
};

/// Redis as an operator who wants handles to outlive a restart would run it: every write
/// in the append-only file before it is acknowledged, so even a killed server keeps it.
static PERSISTENT: Spec = Spec {
    program: "redis-server",
    env: "REDIS_SERVER",
    skips: "the Redis store cases",
    args: |port, dir| {
        let mut a = args(port, &["--save", "", "--appendonly", "yes"]);
        a.extend(["--appendfsync", "always", "--dir"].map(String::from));
        a.push(dir.display().to_string());
        a
    },
    show_stderr: true,
};

fn args(port: u16, persistence: &[&str]) -> Vec<String> {
    let mut args = vec!["--port".to_string(), port.to_string()];
    for a in ["--bind", "127.0.0.1"].iter().chain(persistence) {
        args.push(a.to_string());
    }
    for a in ["--loglevel", "warning", "--daemonize", "no"] {
        args.push(a.to_string());
    }
    args
}

pub struct RedisServer(Daemon);

impl RedisServer {
    /// Starts a server, or `None` (with a note) when Redis is not installed outside CI.
    pub fn start() -> Option<RedisServer> {
        Daemon::start(&SPEC).map(RedisServer)
    }

    /// A server that keeps its data across a restart (an append-only file synced on
    /// every write).
    pub fn start_persistent() -> Option<RedisServer> {
        Daemon::start(&PERSISTENT).map(RedisServer)
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.0.port)
    }
}

impl std::ops::Deref for RedisServer {
    type Target = Daemon;
    fn deref(&self) -> &Daemon {
        &self.0
    }
}

impl std::ops::DerefMut for RedisServer {
    fn deref_mut(&mut self) -> &mut Daemon {
        &mut self.0
    }
}
