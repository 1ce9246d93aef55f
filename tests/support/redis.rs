//! A real `redis-server` for tests and benchmarks, with no persistence (see
//! [`super::daemon`]: a free loopback port, stopped on drop, restartable, skipped with a
//! note where Redis is not installed outside CI).

use super::daemon::{Daemon, Spec};

static SPEC: Spec = Spec {
    program: "redis-server",
    env: "REDIS_SERVER",
    skips: "the Redis store cases",
    args: |port| {
        let mut args = vec!["--port".to_string(), port.to_string()];
        for a in ["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"] {
            args.push(a.to_string());
        }
        for a in ["--loglevel", "warning", "--daemonize", "no"] {
            args.push(a.to_string());
        }
        args
    },
    show_stderr: true,
};

pub struct RedisServer(Daemon);

impl RedisServer {
    /// Starts a server, or `None` (with a note) when Redis is not installed outside CI.
    pub fn start() -> Option<RedisServer> {
        Daemon::start(&SPEC).map(RedisServer)
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
