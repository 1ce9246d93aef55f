//! A real `nats-server` for tests (see [`super::daemon`]: a free loopback port, stopped
//! on drop, restartable, skipped with a note where it is not installed outside CI).
//! Core NATS keeps nothing across a restart.

use super::daemon::{Daemon, Spec};

static SPEC: Spec = Spec {
    program: "nats-server",
    env: "NATS_SERVER",
    skips: "the NATS cases",
    args: |port, _dir| {
        vec![
            "--port".to_string(),
            port.to_string(),
            "--addr".to_string(),
            "127.0.0.1".to_string(),
        ]
    },
    show_stderr: false,
};

pub struct NatsServer(Daemon);

impl NatsServer {
    /// Starts a server, or `None` (with a note) when it is not installed outside CI.
    pub fn start() -> Option<NatsServer> {
        Daemon::start(&SPEC).map(NatsServer)
    }

    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.0.port)
    }
}

impl std::ops::Deref for NatsServer {
    type Target = Daemon;
    fn deref(&self) -> &Daemon {
        &self.0
    }
}

impl std::ops::DerefMut for NatsServer {
    fn deref_mut(&mut self) -> &mut Daemon {
        &mut self.0
    }
}
