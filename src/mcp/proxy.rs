//! `structs-console proxy -- COMMAND ARGS`: a tap between an agent's host and the MCP
//! server it starts over stdio. The host starts the proxy where it would start the
//! server; the proxy starts the server as its child and passes the bytes both ways
//! unchanged, as they arrive (nothing is parsed on the way, so ids, progress,
//! notifications and the server's own requests to the client all pass as sent, and
//! capabilities are not narrowed). Beside the stream it reads each whole line and
//! records the tool calls and the server's notifications to a session log
//! (`--record`), in the format `--headless --record` writes, so a tapped agent's
//! session can be replayed.
//!
//! The child's stderr is the proxy's. When the host closes the proxy's stdin, the
//! child's stdin is closed; when the child exits, the proxy exits with its code. A
//! SIGTERM or Ctrl-C is passed on to the child, which is killed if it has not exited
//! [`STOP_DEADLINE`] later.

use std::collections::HashMap;
use std::process::{ExitCode, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::mcp::client::tool_outcome;
use crate::record::Recorder;
use crate::source::SourceInfo;

/// How long the child has to exit once told to stop.
pub const STOP_DEADLINE: Duration = Duration::from_secs(5);

/// The longest line the tap reads to record; a longer one still passes whole, but is
/// not recorded (and is counted).
pub const TAP_LINE_MAX: usize = 16 * 1024 * 1024;

/// Which way bytes go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Way {
    /// From the host (the agent's client) to the server.
    ToServer,
    /// From the server to the host.
    ToHost,
}

/// What the tap keeps between a request and its answer.
struct Pending {
    call: u64,
    tool: String,
    started: Instant,
}

/// Reads whole lines beside the stream and records what they say.
struct Tap {
    recorder: Option<Arc<Recorder>>,
    source: SourceInfo,
    /// `tools/call` requests waiting for their answers, by their id as JSON text.
    pending: Mutex<HashMap<String, Pending>>,
}

impl Tap {
    fn line(&self, way: Way, line: &[u8]) {
        let Some(recorder) = &self.recorder else {
            return;
        };
        let Ok(message) = serde_json::from_slice::<Value>(line) else {
            return;
        };
        // A batch is a list of messages.
        let messages = match message {
            Value::Array(items) => items,
            one => vec![one],
        };
        for m in messages {
            self.message(recorder, way, &m);
        }
    }

    fn message(&self, recorder: &Recorder, way: Way, m: &Value) {
        let id = m.get("id").filter(|id| !id.is_null()).map(Value::to_string);
        let method = m["method"].as_str();
        match (way, method, id) {
            (Way::ToServer, Some("tools/call"), Some(id)) => {
                let tool = m["params"]["name"].as_str().unwrap_or("").to_string();
                let arguments = m["params"]
                    .get("arguments")
                    .cloned()
                    .unwrap_or_else(|| json!({}));
                let token = m["params"]["_meta"].get("progressToken");
                let call = recorder.request_tracked(&tool, &arguments, token, &self.source);
                self.lock().insert(
                    id,
                    Pending {
                        call,
                        tool,
                        started: Instant::now(),
                    },
                );
            }
            (Way::ToHost, None, Some(id)) => {
                let Some(p) = self.lock().remove(&id) else {
                    return;
                };
                let outcome = match (m.get("result"), m.get("error")) {
                    (Some(result), _) => tool_outcome(result),
                    (None, Some(error)) => Err(json!({ "error": error })),
                    (None, None) => Err(
                        json!({"error": {"message": "an answer with neither result nor error"}}),
                    ),
                };
                recorder.response(p.call, &p.tool, &outcome, p.started.elapsed(), &self.source);
            }
            (Way::ToServer, Some("notifications/cancelled"), None) => {
                // The host gave up on a call: the server need not answer it, so the
                // log says it ended here.
                let id = m["params"]["requestId"].to_string();
                let Some(p) = self.lock().remove(&id) else {
                    return;
                };
                let reason = m["params"]["reason"].as_str().unwrap_or("no reason given");
                let error = json!({"error": {
                    "code": "TOOL_CANCELLED",
                    "message": format!("the client cancelled the call: {reason}"),
                }});
                recorder.response(
                    p.call,
                    &p.tool,
                    &Err(error),
                    p.started.elapsed(),
                    &self.source,
                );
            }
            (Way::ToHost, Some(method), None) if method.starts_with("notifications/") => {
                recorder.notification(method, m.get("params").cloned().unwrap_or(Value::Null));
            }
            _ => {}
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Pending>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Copies `from` to `to` as the bytes arrive, and hands each whole line to the tap.
/// Returns when `from` ends (or `to` is gone).
async fn pump<R, W>(mut from: R, mut to: W, way: Way, tap: Arc<Tap>) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut chunk = vec![0u8; 64 * 1024];
    let mut line: Vec<u8> = Vec::new();
    let mut overlong = false;
    loop {
        let n = from.read(&mut chunk).await?;
        if n == 0 {
            to.flush().await?;
            return Ok(());
        }
        to.write_all(&chunk[..n]).await?;
        to.flush().await?;
        // The tap reads what passed, line by line.
        let mut rest = &chunk[..n];
        while let Some(at) = rest.iter().position(|b| *b == b'\n') {
            if !overlong {
                line.extend_from_slice(&rest[..at]);
                tap.line(way, &line);
            }
            line.clear();
            overlong = false;
            rest = &rest[at + 1..];
        }
        if !overlong {
            if line.len() + rest.len() > TAP_LINE_MAX {
                overlong = true;
                line.clear();
                tracing::warn!(
                    max_bytes = TAP_LINE_MAX,
                    "a message over the tap's limit passed unrecorded"
                );
            } else {
                line.extend_from_slice(rest);
            }
        }
    }
}

/// Runs the proxy until the child exits; its exit code is the proxy's.
///
/// # Errors
///
/// When the child cannot be started.
pub async fn run_stdio(
    command: &[String],
    recorder: Option<Arc<Recorder>>,
) -> anyhow::Result<ExitCode> {
    let Some((program, args)) = command.split_first() else {
        anyhow::bail!("proxy needs the server's command after --");
    };
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| anyhow::anyhow!("cannot start {program:?}: {e}"))?;
    let tap = Arc::new(Tap {
        recorder,
        source: SourceInfo {
            name: "proxy",
            description: command.join(" "),
            block_height: 0,
            paused: false,
        },
        pending: Mutex::new(HashMap::new()),
    });
    let child_in = child.stdin.take().expect("piped stdin");
    let child_out = child.stdout.take().expect("piped stdout");
    // Host → server; when the host is done, the child's stdin closes with the pump.
    let up = tokio::spawn(pump(host_in(), child_in, Way::ToServer, tap.clone()));
    let down = tokio::spawn(pump(child_out, host_out(), Way::ToHost, tap.clone()));
    let status = tokio::select! {
        status = child.wait() => status?,
        () = stop_signal() => {
            if let Some(pid) = child.id() {
                // SAFETY: a signal to our own child, by its pid.
                unsafe { libc::kill(pid as i32, libc::SIGTERM) };
            }
            match tokio::time::timeout(STOP_DEADLINE, child.wait()).await {
                Ok(status) => status?,
                Err(_) => {
                    let _ = child.kill().await;
                    child.wait().await?
                }
            }
        }
    };
    // What the child wrote before it exited still goes to the host.
    let _ = tokio::time::timeout(Duration::from_secs(1), down).await;
    up.abort();
    let code = status.code().unwrap_or(1);
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}

/// The host's end to read: the stdin pipe read without a thread in between when it is
/// a pipe (as a host starts a server), else tokio's stdin (a terminal, a file).
fn host_in() -> Box<dyn AsyncRead + Unpin + Send> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        if let Ok(fd) = std::io::stdin().as_fd().try_clone_to_owned()
            && let Ok(pipe) = tokio::net::unix::pipe::Receiver::from_owned_fd(fd)
        {
            return Box::new(pipe);
        }
    }
    Box::new(tokio::io::stdin())
}

/// The host's end to write, as [`host_in`].
fn host_out() -> Box<dyn AsyncWrite + Unpin + Send> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        if let Ok(fd) = std::io::stdout().as_fd().try_clone_to_owned()
            && let Ok(pipe) = tokio::net::unix::pipe::Sender::from_owned_fd(fd)
        {
            return Box::new(pipe);
        }
    }
    Box::new(tokio::io::stdout())
}

async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_results_are_recorded_as_the_headless_server_records_them() {
        assert_eq!(
            tool_outcome(&json!({"content": [], "structuredContent": {"a": 1}})),
            Ok(json!({"a": 1}))
        );
        assert_eq!(
            tool_outcome(&json!({"content": [{"type": "text", "text": "{\"b\": 2}"}]})),
            Ok(json!({"b": 2}))
        );
        assert_eq!(
            tool_outcome(&json!({"content": [{"type": "text", "text": "hi"}], "isError": true})),
            Err(json!({"content": [{"type": "text", "text": "hi"}]}))
        );
    }

    #[tokio::test]
    async fn the_pump_passes_every_byte_and_taps_whole_lines() {
        let input: Vec<u8> = [
            &b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"[..],
            b"not json at all\r\n",
            "ünïcode ✓\n".as_bytes(),
            b"\n",
            b"a last line with no newline",
        ]
        .concat();
        let tap = Arc::new(Tap {
            recorder: None,
            source: SourceInfo {
                name: "proxy",
                description: String::new(),
                block_height: 0,
                paused: false,
            },
            pending: Mutex::new(HashMap::new()),
        });
        let mut out = Vec::new();
        pump(&input[..], &mut out, Way::ToServer, tap)
            .await
            .unwrap();
        assert_eq!(out, input);
    }
}
