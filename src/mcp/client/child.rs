//! A server the client starts as its child, over stdio: the transport that reads its
//! stdout through a [`Watched`] reader (so that a message the protocol library drops
//! unread is named, not just waited on), stops it gracefully, and reads its stderr a
//! bounded line at a time.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio::io::{AsyncRead, AsyncReadExt, ReadBuf};
use tokio::process::{Child, ChildStdin, ChildStdout};

use super::STDERR;
use super::traffic::{Direction, Wire};

/// The longest message the protocol library reads (rmcp's line limit); a longer one
/// is dropped by it, and named by [`Watched`].
pub const MESSAGE_MAX: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

/// The deepest nesting the JSON reader takes: serde_json's recursion limit of 128
/// refuses the 128th level (the message itself is the first).
pub const DEPTH_MAX: usize = 127;

/// The longest stderr line kept whole; the rest of a longer one is cut.
pub const STDERR_LINE_MAX: usize = 64 * 1024;

/// How long a child has to exit once its stdin is closed, and again after SIGTERM.
const EXIT_WAIT: Duration = Duration::from_secs(2);

/// One line's measures, as its bytes come.
#[derive(Default)]
struct Meter {
    bytes: usize,
    depth: usize,
    deepest: usize,
    in_string: bool,
    escaped: bool,
    /// Told of already (it went past the limit before its end).
    told: bool,
}

impl Meter {
    fn take(&mut self, b: u8) {
        self.bytes += 1;
        if self.in_string {
            match (self.escaped, b) {
                (true, _) => self.escaped = false,
                (false, b'\\') => self.escaped = true,
                (false, b'"') => self.in_string = false,
                _ => {}
            }
            return;
        }
        match b {
            b'"' => self.in_string = true,
            b'{' | b'[' => {
                self.depth += 1;
                self.deepest = self.deepest.max(self.depth);
            }
            b'}' | b']' => self.depth = self.depth.saturating_sub(1),
            _ => {}
        }
    }

    /// Why the library will not read this line, if it will not.
    fn unread(&self) -> Option<String> {
        // The library drops a line whose bytes and newline go past its limit.
        if self.bytes >= MESSAGE_MAX {
            Some(format!(
                "the server sent a message over {} MB ({} bytes or more), which is not read",
                MESSAGE_MAX >> 20,
                self.bytes
            ))
        } else if self.deepest > DEPTH_MAX {
            Some(format!(
                "the server sent a message nested {} levels deep, past the {DEPTH_MAX} the JSON reader takes, which is not read",
                self.deepest
            ))
        } else {
            None
        }
    }
}

/// The child's stdout, passed through unchanged, with each line measured: its length,
/// and how deep its objects and arrays nest. A line the library will drop unread is
/// told to the wire ([`Wire::unread`]).
pub(super) struct Watched<R> {
    inner: R,
    wire: Arc<Wire>,
    meter: Meter,
}

impl<R> Watched<R> {
    pub(super) fn new(inner: R, wire: Arc<Wire>) -> Watched<R> {
        Watched {
            inner,
            wire,
            meter: Meter::default(),
        }
    }

    fn scan(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if b == b'\n' {
                if !self.meter.told
                    && let Some(why) = self.meter.unread()
                {
                    self.wire.unread(why);
                }
                self.meter = Meter::default();
            } else {
                self.meter.take(b);
            }
        }
        // A line still coming that is past the limit already is told now: it may
        // never end.
        if !self.meter.told && self.meter.bytes >= MESSAGE_MAX {
            if let Some(why) = self.meter.unread() {
                self.wire.unread(why);
            }
            self.meter.told = true;
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Watched<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            self.scan(&buf.filled()[before..]);
        }
        polled
    }
}

/// The transport to a child server: its stdin and (watched) stdout, and the child,
/// which is stopped when the transport closes and killed when it is dropped.
pub(super) struct ChildTransport {
    inner: AsyncRwTransport<RoleClient, Watched<ChildStdout>, ChildStdin>,
    child: Child,
}

impl ChildTransport {
    /// Starts `command` with piped stdio; its stderr is read into the wire.
    pub(super) fn spawn(
        mut command: tokio::process::Command,
        wire: &Arc<Wire>,
    ) -> std::io::Result<ChildTransport> {
        // A process group of its own: the terminal's Ctrl-C reaches only this process,
        // which cancels its call and then stops the child, rather than the child dying
        // under the call.
        let mut child = command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .process_group(0)
            .kill_on_drop(true)
            .spawn()?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        if let Some(stderr) = child.stderr.take() {
            tokio::spawn(read_stderr(stderr, wire.clone()));
        }
        Ok(ChildTransport {
            inner: AsyncRwTransport::new_client(Watched::new(stdout, wire.clone()), stdin),
            child,
        })
    }
}

impl Transport<RoleClient> for ChildTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.inner.receive()
    }

    /// Closes the child's stdin and waits for it to exit; then SIGTERM, then SIGKILL.
    async fn close(&mut self) -> Result<(), Self::Error> {
        let _ = self.inner.close().await;
        if tokio::time::timeout(EXIT_WAIT, self.child.wait())
            .await
            .is_ok()
        {
            return Ok(());
        }
        #[cfg(unix)]
        if let Some(pid) = self.child.id()
            && let Ok(pid) = i32::try_from(pid)
        {
            // SAFETY: a signal to our own child, by its pid, which it still has.
            unsafe { libc::kill(pid, libc::SIGTERM) };
            if tokio::time::timeout(EXIT_WAIT, self.child.wait())
                .await
                .is_ok()
            {
                return Ok(());
            }
        }
        self.child.kill().await
    }
}

/// Reads the child's stderr line by line into the wire's notifications; a line over
/// [`STDERR_LINE_MAX`] is kept cut, with its length, and the rest of it is read and
/// let go (a line that never ends costs no memory).
async fn read_stderr(mut stderr: impl AsyncRead + Unpin, wire: Arc<Wire>) {
    let mut chunk = vec![0u8; 8 * 1024];
    let mut line: Vec<u8> = Vec::new();
    let mut dropped = 0usize;
    let flush = |line: &mut Vec<u8>, dropped: &mut usize| {
        let mut text = String::from_utf8_lossy(line).into_owned();
        if *dropped > 0 {
            text.push_str(&format!("… ({} bytes in all)", line.len() + *dropped));
        }
        wire.record(Direction::Received, STDERR.into(), None, text);
        line.clear();
        *dropped = 0;
    };
    loop {
        let n = match stderr.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        for piece in chunk[..n].split_inclusive(|b| *b == b'\n') {
            let (body, ends) = match piece.strip_suffix(b"\n") {
                Some(body) => (body, true),
                None => (piece, false),
            };
            let room = STDERR_LINE_MAX.saturating_sub(line.len());
            line.extend_from_slice(&body[..body.len().min(room)]);
            dropped += body.len().saturating_sub(room);
            if ends {
                flush(&mut line, &mut dropped);
            }
        }
    }
    if !line.is_empty() || dropped > 0 {
        flush(&mut line, &mut dropped);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lines_the_library_drops_are_named_and_every_byte_passes() {
        let wire = Arc::new(Wire::new());
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let fine = r#"{"a":"[[[[ in a string \" ]"}"#;
        let input = format!("{fine}\n{deep}\n{fine}\n");
        let mut watched = Watched::new(input.as_bytes(), wire.clone());
        let mut out = String::new();
        watched.read_to_string(&mut out).await.unwrap();
        assert_eq!(out, input);
        let why = wire.unread_reason();
        assert!(why.contains("200 levels deep"), "{why}");

        let wire = Arc::new(Wire::new());
        let mut watched = Watched::new(&b"{\"ok\":[1,2,{}]}\n"[..], wire.clone());
        watched.read_to_string(&mut out).await.unwrap();
        assert_eq!(wire.unread_reason(), "", "a message read is not named");
    }

    #[tokio::test]
    async fn a_stderr_line_is_kept_cut_at_its_limit() {
        use super::super::traffic::Which;
        let wire = Arc::new(Wire::new());
        let long = vec![b'e'; STDERR_LINE_MAX * 3];
        let input = [&b"first\n"[..], &long, b"\nlast"].concat();
        read_stderr(&input[..], wire.clone()).await;
        let lines: Vec<String> = wire.notifications().into_iter().map(|m| m.text).collect();
        assert_eq!(
            lines.len(),
            3,
            "{:?}",
            lines.iter().map(String::len).collect::<Vec<_>>()
        );
        assert_eq!(lines[0], "first");
        assert!(lines[1].len() < STDERR_LINE_MAX + 100, "{}", lines[1].len());
        assert!(
            lines[1].ends_with(&format!("({} bytes in all)", STDERR_LINE_MAX * 3)),
            "{}",
            &lines[1][lines[1].len() - 40..]
        );
        assert_eq!(lines[2], "last");
        assert_eq!(wire.kept(Which::Notifications), 3);
    }

    #[test]
    fn a_line_past_the_limit_is_named_before_it_ends() {
        let wire = Arc::new(Wire::new());
        let mut watched = Watched::new(&b""[..], wire.clone());
        let block = vec![b'x'; 1 << 20];
        for _ in 0..=(MESSAGE_MAX >> 20) {
            watched.scan(&block);
        }
        let why = wire.unread_reason();
        assert!(why.contains("over 16 MB"), "{why}");
    }
}
