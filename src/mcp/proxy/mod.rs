//! `structs-console proxy -- COMMAND ARGS`: a tap between an agent's host and the MCP
//! server it starts over stdio. The host starts the proxy where it would start the
//! server; the proxy starts the server as its child and passes every message both ways,
//! unchanged unless a rule says otherwise: ids, progress, notifications and the
//! server's own requests to the client all pass as sent, and capabilities are not
//! narrowed. Bytes go on line by line as each line is whole (a message is one line);
//! what is not JSON passes as it is, and a line over [`TAP_LINE_MAX`] passes as it
//! arrives, unread.
//!
//! Beside the stream it records the tool calls and the server's notifications
//! ([`tap`]) to a session log (`--record`) and to the live feed of its control
//! endpoint, in the format `--headless --record` writes. The [`broker`] applies the
//! breakpoints watchers set and the fault rules of `--faults FILE` ([`rules`]).
//!
//! The child's stderr is the proxy's. When the host closes the proxy's stdin, the
//! child's stdin is closed; when the child exits, the proxy exits with its code. A
//! SIGTERM or Ctrl-C is passed on to the child, which is killed if it has not exited
//! [`STOP_DEADLINE`] later.

mod answers;
mod broker;
pub mod cli;
mod headers;
mod http;
pub mod recorded;
pub mod rules;
mod spans;
mod tap;
mod upstream;

use std::process::{ExitCode, Stdio};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

pub use self::answers::{check_input_responses, check_tool_result};
use self::broker::{Board, Broker, Decision, Out};
pub use self::http::serve_http;
pub use self::rules::Faults;
pub(crate) use self::tap::Tap;
pub use self::upstream::Upstream;
use crate::mcp::control::Control;
use crate::record::{Feed, Recorder};

/// How long the child has to exit once told to stop.
pub const STOP_DEADLINE: Duration = Duration::from_secs(5);

// The longest line the proxy reads; a longer one still passes whole, as it arrives,
// but is neither recorded nor subject to rules (and a warning says so).
use crate::mcp::wire::PEER_LINE_MAX as TAP_LINE_MAX;

/// How long a call is held at a breakpoint by default before it goes on by itself.
pub const HOLD_TIMEOUT: Duration = Duration::from_secs(60);

/// What the proxy does besides passing messages.
pub struct Options {
    pub recorder: Option<Arc<Recorder>>,
    pub feed: Option<Feed>,
    pub faults: Option<Faults>,
    pub hold_timeout: Duration,
    /// Commands from the control endpoint's watchers (breakpoints, faults).
    pub commands: Option<mpsc::UnboundedReceiver<Control>>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            recorder: None,
            feed: None,
            faults: None,
            hold_timeout: HOLD_TIMEOUT,
            commands: None,
        }
    }
}

/// A piece of a stream: a whole line (its newline cut), or bytes passed unread.
#[derive(Debug, PartialEq)]
enum Piece {
    Line(Vec<u8>),
    Raw(Vec<u8>),
}

/// Cuts a stream into lines as its chunks come.
#[derive(Default)]
struct Splitter {
    line: Vec<u8>,
    /// In a line over [`TAP_LINE_MAX`]: its bytes pass as they come, to its newline.
    overlong: bool,
}

impl Splitter {
    fn feed(&mut self, mut chunk: &[u8]) -> Vec<Piece> {
        let mut pieces = Vec::new();
        while !chunk.is_empty() {
            let (segment, newline) = match chunk.iter().position(|b| *b == b'\n') {
                Some(at) => (&chunk[..at], true),
                None => (chunk, false),
            };
            chunk = &chunk[segment.len() + usize::from(newline)..];
            if self.overlong {
                let mut raw = segment.to_vec();
                if newline {
                    raw.push(b'\n');
                    self.overlong = false;
                }
                pieces.push(Piece::Raw(raw));
            } else if self.line.len() + segment.len() > TAP_LINE_MAX {
                let mut raw = std::mem::take(&mut self.line);
                raw.extend_from_slice(segment);
                if newline {
                    raw.push(b'\n');
                } else {
                    self.overlong = true;
                }
                tracing::warn!(
                    max_bytes = TAP_LINE_MAX,
                    "a message over the proxy's limit passed unread and unrecorded"
                );
                pieces.push(Piece::Raw(raw));
            } else {
                self.line.extend_from_slice(segment);
                if newline {
                    pieces.push(Piece::Line(std::mem::take(&mut self.line)));
                }
            }
        }
        pieces
    }

    /// At the end of the stream: a last line without its newline, as it is.
    fn finish(&mut self) -> Option<Piece> {
        (!self.line.is_empty()).then(|| Piece::Raw(std::mem::take(&mut self.line)))
    }
}

/// True when `needle` is somewhere in `line`.
fn mentions(line: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(line, needle).is_some()
}

/// A stream read a chunk at a time and cut into pieces.
struct Reader {
    chunk: Vec<u8>,
    split: Splitter,
}

impl Default for Reader {
    fn default() -> Self {
        Reader {
            chunk: vec![0u8; 64 * 1024],
            split: Splitter::default(),
        }
    }
}

impl Reader {
    /// The pieces of the next chunk, and whether the stream ended with it.
    async fn next<R: AsyncRead + Unpin>(
        &mut self,
        from: &mut R,
    ) -> std::io::Result<(Vec<Piece>, bool)> {
        let n = from.read(&mut self.chunk).await?;
        Ok(if n == 0 {
            (self.split.finish().into_iter().collect(), true)
        } else {
            (self.split.feed(&self.chunk[..n]), false)
        })
    }
}

fn with_newline(line: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(line.len() + 1);
    bytes.extend_from_slice(line);
    bytes.push(b'\n');
    bytes
}

/// One end of the stream, written by a pump and by the broker in turn; `None` once
/// closed.
type Shared<W> = Arc<tokio::sync::Mutex<Option<W>>>;

/// Writes `bytes` to `end` and flushes; false when it is closed.
async fn write_to<W: AsyncWrite + Unpin>(end: &Shared<W>, bytes: &[u8]) -> std::io::Result<bool> {
    let mut guard = end.lock().await;
    match guard.as_mut() {
        Some(w) => {
            w.write_all(bytes).await?;
            w.flush().await?;
            Ok(true)
        }
        None => Ok(false),
    }
}

/// Reads the host's messages, records them, lets the broker decide on each, and writes
/// what goes on to the server. At the end of the host's stream the server's stdin is
/// closed.
async fn pump_up<R: AsyncRead + Unpin, W: AsyncWrite + Unpin>(
    mut from: R,
    server: Shared<W>,
    broker: Arc<Broker>,
    tap: Arc<Tap>,
) -> std::io::Result<()> {
    let mut reader = Reader::default();
    loop {
        let (pieces, ended) = reader.next(&mut from).await?;
        // What the tap and the broker need to read now.
        let (recording, ruling) = (tap.active(), broker.active());
        let mut out = Vec::new();
        for piece in pieces {
            let mut line = match piece {
                Piece::Raw(bytes) => {
                    out.extend_from_slice(&bytes);
                    continue;
                }
                Piece::Line(line) => line,
            };
            // The tap records every request, so it reads every line while it records.
            // Otherwise only a tool call or list, or a cancellation, concerns the
            // broker; and a tool list always (its schemas check edits at a
            // breakpoint). A line with a `\u` escape may spell any method
            // (`tool\u0073/call`): it is parsed, so no spelling of JSON gets a call
            // past the broker.
            let escaped = mentions(&line, b"\\u");
            let traced = tap.spans().on();
            let look = recording
                || traced
                || ((mentions(&line, b"tools") || escaped)
                    && (ruling || escaped || mentions(&line, b"tools/list")))
                || ((mentions(&line, b"cancelled") || escaped) && ruling);
            let decision = if !look {
                Decision::Pass
            } else {
                match serde_json::from_slice::<Value>(&line) {
                    Ok(Value::Array(batch)) => {
                        for m in &batch {
                            tap.host_sent(m);
                        }
                        Decision::Pass
                    }
                    Ok(mut m) => {
                        // Its trace context written in when it had none, and its line
                        // recorded in its span.
                        let (changed, span) = if traced {
                            tap.spans().request(&mut m)
                        } else {
                            (false, tracing::Span::none())
                        };
                        if changed && let Ok(bytes) = serde_json::to_vec(&m) {
                            line = bytes;
                        }
                        let number = span.in_scope(|| tap.host_sent(&m));
                        broker.on_host_line(&with_newline(&line), &m, number)
                    }
                    Err(_) => Decision::Pass,
                }
            };
            match decision {
                Decision::Pass => {
                    out.extend_from_slice(&line);
                    out.push(b'\n');
                }
                Decision::Taken => {}
                Decision::Replace(bytes, _) => out.extend_from_slice(&bytes),
            }
        }
        if !out.is_empty() && !write_to(&server, &out).await? {
            return Ok(());
        }
        if ended {
            // The host is done: the server's stdin closes, once the calls the broker
            // took (held, delayed) have gone to it, so that each is answered.
            broker.settled().await;
            broker.close_server();
            return Ok(());
        }
    }
}

/// Reads the server's messages, lets the broker decide on each, writes what goes on to
/// the host, and records it.
async fn pump_down<R: AsyncRead + Unpin, W: AsyncWrite + Unpin>(
    mut from: R,
    host: Shared<W>,
    broker: Arc<Broker>,
    tap: Arc<Tap>,
) -> std::io::Result<()> {
    let mut reader = Reader::default();
    loop {
        let (pieces, ended) = reader.next(&mut from).await?;
        let traced = tap.spans().on();
        let look = tap.active() || broker.expects_answers() || traced;
        let mut out = Vec::new();
        let mut messages = Vec::new();
        for piece in pieces {
            let line = match piece {
                Piece::Raw(bytes) => {
                    out.extend_from_slice(&bytes);
                    continue;
                }
                Piece::Line(line) => line,
            };
            let (decision, message) = if look {
                match serde_json::from_slice::<Value>(&line) {
                    Ok(m) => {
                        let span = if traced {
                            tap.spans().response(&m)
                        } else {
                            tracing::Span::none()
                        };
                        (broker.on_server_line(&m), Some((m, span)))
                    }
                    Err(_) => (Decision::Pass, None),
                }
            } else {
                (Decision::Pass, None)
            };
            match decision {
                Decision::Pass => {
                    out.extend_from_slice(&line);
                    out.push(b'\n');
                    messages.extend(message);
                }
                Decision::Taken => {}
                Decision::Replace(bytes, note) => {
                    // In order: what passed before it, then it.
                    write_to(&host, &out).await?;
                    for (m, span) in messages.drain(..) {
                        span.in_scope(|| tap.host_gets_message(&m, None));
                    }
                    out.clear();
                    write_to(&host, &bytes).await?;
                    tap.host_gets(&bytes, Some(&note));
                }
            }
        }
        if !out.is_empty() {
            write_to(&host, &out).await?;
        }
        for (m, span) in &messages {
            span.in_scope(|| tap.host_gets_message(m, None));
        }
        if ended {
            return Ok(());
        }
    }
}

/// Writes to the server what the broker sends (held, delayed, edited requests); an
/// empty message closes the server's stdin ([`Broker::close_server`]).
async fn forward_to_server<W: AsyncWrite + Unpin>(
    mut rx: mpsc::UnboundedReceiver<Vec<u8>>,
    server: Shared<W>,
) -> std::io::Result<()> {
    while let Some(bytes) = rx.recv().await {
        if bytes.is_empty() {
            if let Some(mut w) = server.lock().await.take() {
                let _ = w.shutdown().await;
            }
            break;
        }
        if !write_to(&server, &bytes).await? {
            break;
        }
    }
    Ok(())
}

/// Writes to the host what the broker sends (answers it gave, held answers, progress),
/// recording each, until [`Out::End`].
async fn forward_to_host<W: AsyncWrite + Unpin>(
    mut rx: mpsc::UnboundedReceiver<Out>,
    host: Shared<W>,
    tap: Arc<Tap>,
) -> std::io::Result<()> {
    while let Some(out) = rx.recv().await {
        let Out::Bytes {
            bytes,
            injected,
            messages,
        } = out
        else {
            break;
        };
        write_to(&host, &bytes).await?;
        if messages.is_empty() {
            tap.host_gets(&bytes, injected.as_deref());
        } else {
            for m in &messages {
                tap.host_gets_message(m, injected.as_deref());
            }
        }
    }
    Ok(())
}

/// Runs watchers' commands on the board, for as long as the endpoint sends them.
fn serve_commands(board: Arc<Board>, commands: Option<mpsc::UnboundedReceiver<Control>>) {
    let Some(mut commands) = commands else {
        return;
    };
    tokio::spawn(async move {
        while let Some(control) = commands.recv().await {
            match control {
                Control::Command { body, reply, .. } if body["cmd"] == "fetch" => {
                    // It waits on the server: the next commands need not.
                    let board = board.clone();
                    tokio::spawn(async move {
                        let _ = reply.send(board.fetch(&body).await);
                    });
                }
                Control::Command {
                    watcher,
                    body,
                    reply,
                } => {
                    let _ = reply.send(board.command(watcher, &body));
                }
                Control::Left { watcher } => board.watcher_left(watcher),
            }
        }
    });
}

/// The tasks of one session through the proxy: the two pumps and the broker's two
/// writers.
struct Running<W> {
    up: tokio::task::JoinHandle<std::io::Result<()>>,
    down: tokio::task::JoinHandle<std::io::Result<()>>,
    to_server: tokio::task::JoinHandle<std::io::Result<()>>,
    to_host: tokio::task::JoinHandle<std::io::Result<()>>,
    down_tx: mpsc::UnboundedSender<Out>,
    host: Shared<W>,
    tap: Arc<Tap>,
    broker: Arc<Broker>,
}

/// Starts a session between the host's ends and the server's, on `board`.
fn start<HR, HW, SR, SW>(
    (host_in, host_out): (HR, HW),
    (server_out, server_in): (SR, SW),
    board: &Arc<Board>,
    tap: Arc<Tap>,
    hold_timeout: Duration,
) -> Running<HW>
where
    HR: AsyncRead + Unpin + Send + 'static,
    HW: AsyncWrite + Unpin + Send + 'static,
    SR: AsyncRead + Unpin + Send + 'static,
    SW: AsyncWrite + Unpin + Send + 'static,
{
    let (up_tx, up_rx) = mpsc::unbounded_channel();
    let (down_tx, down_rx) = mpsc::unbounded_channel();
    let broker = Broker::new(
        up_tx,
        down_tx.clone(),
        board.clone(),
        Some(tap.clone()),
        hold_timeout,
    );
    let server: Shared<_> = Arc::new(tokio::sync::Mutex::new(Some(server_in)));
    let host: Shared<_> = Arc::new(tokio::sync::Mutex::new(Some(host_out)));
    Running {
        to_server: tokio::spawn(forward_to_server(up_rx, server.clone())),
        up: tokio::spawn(pump_up(host_in, server, broker.clone(), tap.clone())),
        to_host: tokio::spawn(forward_to_host(down_rx, host.clone(), tap.clone())),
        down: tokio::spawn(pump_down(
            server_out,
            host.clone(),
            broker.clone(),
            tap.clone(),
        )),
        down_tx,
        host,
        tap,
        broker,
    }
}

impl<W: AsyncWrite + Unpin + Send + 'static> Running<W> {
    /// Waits (up to `wait`, or for as long as it takes) for the server's stream to
    /// end, passes on what the broker still has for the host, and stops.
    async fn finish(mut self, wait: Option<Duration>) {
        match wait {
            Some(wait) => {
                let _ = tokio::time::timeout(wait, &mut self.down).await;
            }
            None => {
                let _ = (&mut self.down).await;
            }
        }
        // Answers the broker still has on their way to the host go before the end:
        // what it holds is let go as it was, and what it delayed is waited for.
        self.broker.let_go();
        let _ = tokio::time::timeout(wait.unwrap_or(STOP_DEADLINE), self.broker.settled()).await;
        let _ = self.down_tx.send(Out::End);
        let _ = tokio::time::timeout(Duration::from_secs(1), self.to_host).await;
        if let Some(mut w) = self.host.lock().await.take() {
            let _ = w.flush().await;
            let _ = w.shutdown().await;
        }
        self.down.abort();
        self.up.abort();
        self.to_server.abort();
        // A call the host never got an answer to (one a fault dropped, or the server
        // stopped first) ends in the log with the session, never left running.
        self.tap.session_ended();
    }
}

/// Runs the proxy until the child exits; its exit code is the proxy's.
///
/// # Errors
///
/// When the child cannot be started.
pub async fn run_stdio(command: &[String], options: Options) -> anyhow::Result<ExitCode> {
    let Some((program, args)) = command.split_first() else {
        anyhow::bail!("proxy needs the server's command after --");
    };
    // Its own process group: a Ctrl-C in the host's terminal reaches the proxy, which
    // answers what is pending and stops the server, not the server under a call.
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| anyhow::anyhow!("cannot start {program:?}: {e}"))?;
    let tap = Arc::new(Tap::new(options.recorder, command.join(" ")));
    let board = Board::new(options.feed, options.faults);
    serve_commands(board.clone(), options.commands);
    let child_in = child.stdin.take().expect("piped stdin");
    let child_out = child.stdout.take().expect("piped stdout");
    let running = start(
        (host_in(), host_out()),
        (child_out, child_in),
        &board,
        tap,
        options.hold_timeout,
    );
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
    running.finish(Some(Duration::from_secs(1))).await;
    let code = status.code().unwrap_or(1);
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}

/// Runs the proxy between the host on stdio and this binary's own server in this
/// process (`--embedded`), until the host closes its end or a signal.
pub async fn run_embedded(server: crate::mcp::server::McpServer, options: Options) -> ExitCode {
    let tap = Arc::new(Tap::new(
        options.recorder,
        "structs-console --headless (in the proxy's process)".into(),
    ));
    let board = Board::new(options.feed, options.faults);
    serve_commands(board.clone(), options.commands);
    let (server_in, server_reads) = tokio::io::duplex(PIPE_BYTES);
    let (server_writes, server_out) = tokio::io::duplex(PIPE_BYTES);
    let mut served = tokio::spawn(crate::mcp::server::serve_lines(
        server,
        server_reads,
        server_writes,
        crate::mcp::wire::MAX_MESSAGE_BYTES,
    ));
    let running = start(
        (host_in(), host_out()),
        (server_out, server_in),
        &board,
        tap,
        options.hold_timeout,
    );
    let code = tokio::select! {
        done = &mut served => match done {
            Ok(Ok(())) => ExitCode::SUCCESS,
            Ok(Err(e)) => {
                tracing::error!("the embedded server stopped: {e:#}");
                ExitCode::FAILURE
            }
            Err(_) => ExitCode::FAILURE,
        },
        () = stop_signal() => ExitCode::SUCCESS,
    };
    running.finish(Some(Duration::from_secs(1))).await;
    served.abort();
    code
}

/// The bytes a session's ends pass through in memory.
const PIPE_BYTES: usize = 1 << 20;

/// Runs the proxy between the host on stdio and an HTTP server, until the host closes
/// its end (and the calls in flight are answered) or a signal.
pub async fn run_upstream(upstream: Upstream, options: Options) -> ExitCode {
    let tap = Arc::new(Tap::new(options.recorder, upstream.shown().to_string()));
    tap.spans().over_tcp();
    let board = Board::new(options.feed, options.faults);
    serve_commands(board.clone(), options.commands);
    let (server_in, upstream_reads) = tokio::io::duplex(PIPE_BYTES);
    let (upstream_writes, server_out) = tokio::io::duplex(PIPE_BYTES);
    let mut link = tokio::spawn(upstream.run(upstream_reads, upstream_writes));
    let running = start(
        (host_in(), host_out()),
        (server_out, server_in),
        &board,
        tap,
        options.hold_timeout,
    );
    let code = tokio::select! {
        // The server lost the session: the host sees its server end, as if it had
        // restarted, and starts it again.
        ended = &mut link => if matches!(ended, Ok(true)) { ExitCode::FAILURE } else { ExitCode::SUCCESS },
        () = stop_signal() => ExitCode::SUCCESS,
    };
    running.finish(Some(Duration::from_secs(1))).await;
    link.abort();
    code
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
    fn a_stream_is_cut_into_whole_lines_and_a_last_one_passes_as_it_is() {
        let mut split = Splitter::default();
        assert_eq!(
            split.feed(b"{\"a\":1}\n{\"b\""),
            [Piece::Line(b"{\"a\":1}".to_vec())]
        );
        assert_eq!(
            split.feed(b":2}\n\nnot json\r\n"),
            [
                Piece::Line(b"{\"b\":2}".to_vec()),
                Piece::Line(Vec::new()),
                Piece::Line(b"not json\r".to_vec()),
            ]
        );
        assert_eq!(split.feed(b"tail"), []);
        assert_eq!(split.finish(), Some(Piece::Raw(b"tail".to_vec())));
        assert_eq!(split.finish(), None);
    }

    #[test]
    fn a_line_over_the_limit_passes_as_it_comes() {
        let mut split = Splitter::default();
        let big = vec![b'x'; TAP_LINE_MAX];
        assert_eq!(split.feed(&big), []);
        let pieces = split.feed(b"yy");
        assert!(matches!(&pieces[..], [Piece::Raw(b)] if b.len() == TAP_LINE_MAX + 2));
        assert_eq!(
            split.feed(b"z\n{}\n"),
            [Piece::Raw(b"z\n".to_vec()), Piece::Line(b"{}".to_vec())]
        );
    }

    #[tokio::test]
    async fn the_pumps_pass_every_byte_when_no_rule_applies() {
        let input: Vec<u8> = [
            &b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"[..],
            b"not json at all\r\n",
            "\u{fc}n\u{ef}code \u{2713}\n".as_bytes(),
            b"\n",
            b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"t\"}}\n",
            b"a last line with no newline",
        ]
        .concat();
        let (up_tx, mut up_rx) = mpsc::unbounded_channel();
        let (down_tx, _down_rx) = mpsc::unbounded_channel();
        let tap = Arc::new(Tap::new(None, String::new()));
        let broker = Broker::new(up_tx, down_tx, Board::new(None, None), None, HOLD_TIMEOUT);
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let server: Shared<Keep> = Arc::new(tokio::sync::Mutex::new(Some(Keep(seen.clone()))));
        pump_up(&input[..], server.clone(), broker, tap)
            .await
            .unwrap();
        assert_eq!(*seen.lock().unwrap(), input);
        // At the end of the stream the server's stdin is closed, after what the broker
        // sent before.
        assert_eq!(up_rx.recv().await, Some(Vec::new()), "closed at the end");
    }

    #[tokio::test]
    async fn a_method_spelled_with_escapes_is_recorded_as_the_server_reads_it() {
        let dir = std::env::temp_dir().join(format!("structs-escaped-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("tap.jsonl");
        let recorder = Arc::new(crate::record::Recorder::open(&log).unwrap());
        let tap = Arc::new(Tap::new(Some(recorder), String::new()));
        let (up_tx, _up_rx) = mpsc::unbounded_channel();
        let (down_tx, _down_rx) = mpsc::unbounded_channel();
        let broker = Broker::new(up_tx, down_tx, Board::new(None, None), None, HOLD_TIMEOUT);
        let input = b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tool\\u0073/call\",\"params\":{\"name\":\"t\\u0065st\",\"arguments\":{}}}\n";
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let server: Shared<Keep> = Arc::new(tokio::sync::Mutex::new(Some(Keep(seen.clone()))));
        pump_up(&input[..], server, broker, tap).await.unwrap();
        assert_eq!(*seen.lock().unwrap(), input, "passed as it came");
        let lines: Vec<Value> = std::fs::read_to_string(&log)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert!(
            lines
                .iter()
                .any(|l| l["type"] == "request" && l["tool"] == "test"),
            "the call the server runs is recorded: {lines:?}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A writer that keeps what it is given.
    struct Keep(Arc<std::sync::Mutex<Vec<u8>>>);

    impl AsyncWrite for Keep {
        fn poll_write(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
            buf: &[u8],
        ) -> std::task::Poll<std::io::Result<usize>> {
            self.0.lock().unwrap().extend_from_slice(buf);
            std::task::Poll::Ready(Ok(buf.len()))
        }

        fn poll_flush(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            std::task::Poll::Ready(Ok(()))
        }

        fn poll_shutdown(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            std::task::Poll::Ready(Ok(()))
        }
    }
}
