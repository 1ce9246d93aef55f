//! The stdio face's transport: [`LimitedLines`] reads each incoming line whole and
//! reads it once into the message rmcp takes; rmcp's line transport writes the
//! answers. A line over [`crate::mcp::wire::MAX_MESSAGE_BYTES`] is dropped before
//! anything parses it, and the client is answered with an error that
//! names the limit (and the request's id, when its first bytes hold one). rmcp on its
//! own drops such a line after buffering 16 MB and answers nothing, so the caller would
//! wait for ever. Each whole line then goes through [`super::strict::check`]: one rmcp
//! cannot take (not JSON, not a request, params that do not fit) is answered here with
//! its JSON-RPC error and not passed on; a blank line is skipped. A `subscriptions/listen`
//! request's task ids, which rmcp does not keep, are read off its line on the way
//! ([`super::listen::task_ids_of`]).

use crate::throttle::{Every, WARN_EVERY};
use std::pin::Pin;
use std::task::{Context, Poll};

use rmcp::model::{ClientJsonRpcMessage, RequestId, ServerJsonRpcMessage};
use rmcp::service::RxJsonRpcMessage;
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::{RoleServer, ServiceExt};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::mpsc;

use super::McpServer;
use super::listen::PendingListens;
use super::strict::{self, Refusal};
use crate::mcp::wire::{request_id, too_large_answer};

/// How much of a dropped line is kept to look for its request id.
const ID_PREFIX_BYTES: usize = 64 * 1024;

/// How much is read from the input at a time.
const CHUNK_BYTES: usize = 64 * 1024;

/// A line that was dropped for its size.
#[derive(Debug, Clone, PartialEq)]
pub struct Oversized {
    /// The request's id, when the line's first bytes hold one at its top level.
    pub id: Option<RequestId>,
    /// The line's length without its newline.
    pub bytes: usize,
}

/// A line that was not passed on.
#[derive(Debug, Clone)]
pub enum Dropped {
    /// Over the size limit.
    Oversized(Oversized),
    /// Refused by the strict check (see [`LimitedLines::strict`]).
    Refused(Refusal),
}

/// A reader that passes on whole lines of at most `max` bytes and drops longer ones,
/// reporting each dropped line on a channel. Memory stays within `max` plus one chunk
/// whatever the input.
pub struct LimitedLines<R> {
    inner: R,
    max: usize,
    /// The line being gathered.
    line: Vec<u8>,
    /// Whole lines waiting to be read, from `ready_at` on.
    ready: Vec<u8>,
    ready_at: usize,
    /// While a line over the limit is being skipped: its first bytes and its length.
    dropping: Option<(Vec<u8>, usize)>,
    chunk: Box<[u8]>,
    /// Whether each whole line is checked before it is passed on.
    strict: bool,
    reports: mpsc::UnboundedSender<Dropped>,
    /// Where the task ids of listen requests go, when the server follows tasks.
    listens: Option<std::sync::Arc<PendingListens>>,
    /// Whether each line that passes is kept as the message read ([`Self::parsing`])
    /// instead of as bytes.
    parsing: bool,
    /// The messages read and passed, waiting to be taken ([`Self::poll_message`]).
    messages: std::collections::VecDeque<ClientJsonRpcMessage>,
    /// Whether the input ended.
    ended: bool,
    /// Whether an `initialize` has passed: a session has begun.
    initialized: bool,
}

impl<R> LimitedLines<R> {
    pub fn new(inner: R, max: usize) -> (LimitedLines<R>, mpsc::UnboundedReceiver<Dropped>) {
        let (reports, rx) = mpsc::unbounded_channel();
        let reader = LimitedLines {
            inner,
            max,
            line: Vec::new(),
            ready: Vec::new(),
            ready_at: 0,
            dropping: None,
            chunk: vec![0; CHUNK_BYTES].into_boxed_slice(),
            strict: false,
            reports,
            listens: None,
            parsing: false,
            messages: std::collections::VecDeque::new(),
            ended: false,
            initialized: false,
        };
        (reader, rx)
    }

    /// Checks each whole line as [`Self::strict`] does, and keeps what passes as the
    /// message read, for [`Self::poll_message`]: each line is read once, not once for
    /// the check and again by rmcp.
    pub fn parsing(mut self) -> LimitedLines<R> {
        self.strict = true;
        self.parsing = true;
        self
    }

    /// Checks each whole line with [`strict::check`]: a line it refuses is reported
    /// and not passed on, and a blank line is skipped.
    pub fn strict(mut self) -> LimitedLines<R> {
        self.strict = true;
        self
    }

    /// Keeps the task ids of each listen request passed on in `listens`.
    pub fn listens(mut self, listens: std::sync::Arc<PendingListens>) -> LimitedLines<R> {
        self.listens = Some(listens);
        self
    }

    /// Sorts `bytes` into the line being gathered, the lines ready, and the line being
    /// dropped.
    fn take(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let newline = bytes.iter().position(|&b| b == b'\n');
            let (piece, rest) = match newline {
                Some(at) => (&bytes[..at], &bytes[at + 1..]),
                None => (bytes, &[][..]),
            };
            bytes = rest;
            if let Some((prefix, len)) = self.dropping.as_mut() {
                let room = ID_PREFIX_BYTES.saturating_sub(prefix.len());
                prefix.extend_from_slice(&piece[..piece.len().min(room)]);
                *len += piece.len();
            } else {
                self.line.extend_from_slice(piece);
                if self.line.len() > self.max {
                    let mut prefix = std::mem::take(&mut self.line);
                    let len = prefix.len();
                    prefix.truncate(ID_PREFIX_BYTES);
                    prefix.shrink_to_fit();
                    self.dropping = Some((prefix, len));
                }
            }
            if newline.is_some() {
                self.end_line(true);
            }
        }
    }

    /// Ends the line being gathered (`newline`: it ended with one, else the input did).
    fn end_line(&mut self, newline: bool) {
        if let Some((prefix, bytes)) = self.dropping.take() {
            static OVERSIZED: Every = Every::new(WARN_EVERY);
            if let Some(unlogged) = OVERSIZED.ready() {
                tracing::warn!(
                    bytes,
                    limit = self.max,
                    unlogged_since_last = unlogged,
                    "dropped an incoming message over the size limit (logged at most once in 10 s)"
                );
            }
            let _ = self.reports.send(Dropped::Oversized(Oversized {
                id: request_id(&prefix),
                bytes,
            }));
            return;
        }
        if self.strict {
            let line = self.line.strip_suffix(b"\r").unwrap_or(&self.line);
            // A blank line holds no message: skipped, as rmcp would.
            if line.iter().all(u8::is_ascii_whitespace) {
                self.line.clear();
                return;
            }
            let parsed = strict::parse(line).and_then(|message| {
                // Before its `initialize`, a connection has no session for a request
                // of a session's revision.
                if !self.initialized {
                    if let Some(refused) = strict::needs_session(&message) {
                        return Err(Box::new(refused));
                    }
                    self.initialized = strict::is_initialize(&message);
                }
                Ok(message)
            });
            match parsed {
                Ok(message) => {
                    if let Some(listens) = &self.listens
                        && let Some((id, tasks)) = super::listen::task_ids_of(line)
                    {
                        listens.put(&id, tasks);
                    }
                    if self.parsing {
                        self.messages.push_back(message);
                        self.line.clear();
                        return;
                    }
                }
                Err(r) => {
                    let _ = self.reports.send(Dropped::Refused(*r));
                    self.line.clear();
                    return;
                }
            }
        }
        if self.ready_at == self.ready.len() {
            // Nothing is waiting (the usual case): the line becomes the ready buffer
            // without being copied, and the old buffer gathers the next line.
            std::mem::swap(&mut self.ready, &mut self.line);
            self.ready_at = 0;
        } else {
            self.ready.extend_from_slice(&self.line);
        }
        self.line.clear();
        if newline {
            self.ready.push(b'\n');
        }
    }
}

impl<R: AsyncRead + Unpin> LimitedLines<R> {
    /// The next message read and passed (in [`Self::parsing`] mode); `None` once the
    /// input has ended (or cannot be read) and every message was taken. What it has
    /// read stays here when the future polling it is dropped.
    pub fn poll_message(&mut self, cx: &mut Context<'_>) -> Poll<Option<ClientJsonRpcMessage>> {
        loop {
            if let Some(message) = self.messages.pop_front() {
                return Poll::Ready(Some(message));
            }
            if self.ended {
                return Poll::Ready(None);
            }
            let mut chunk = ReadBuf::new(&mut self.chunk);
            match Pin::new(&mut self.inner).poll_read(cx, &mut chunk) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) => {
                    tracing::debug!("reading the client's messages failed: {e}");
                    self.ended = true;
                }
                Poll::Ready(Ok(())) => {
                    let n = chunk.filled().len();
                    if n == 0 {
                        // A last line without its newline is read as it is (or
                        // reported, when it was too long).
                        if self.dropping.is_some() || !self.line.is_empty() {
                            self.end_line(false);
                        }
                        self.ended = true;
                        continue;
                    }
                    let chunk = std::mem::take(&mut self.chunk);
                    self.take(&chunk[..n]);
                    self.chunk = chunk;
                }
            }
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for LimitedLines<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.ready_at < this.ready.len() {
                let n = buf.remaining().min(this.ready.len() - this.ready_at);
                buf.put_slice(&this.ready[this.ready_at..this.ready_at + n]);
                this.ready_at += n;
                return Poll::Ready(Ok(()));
            }
            let mut chunk = ReadBuf::new(&mut this.chunk);
            match Pin::new(&mut this.inner).poll_read(cx, &mut chunk) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Ready(Ok(())) => {
                    let n = chunk.filled().len();
                    if n == 0 {
                        // The end of the input: a last line without its newline is
                        // passed on as it is (or reported, when it was too long).
                        if this.dropping.is_some() {
                            this.end_line(false);
                        } else if !this.line.is_empty() {
                            this.end_line(false);
                            continue;
                        }
                        return Poll::Ready(Ok(()));
                    }
                    let chunk = std::mem::take(&mut this.chunk);
                    this.take(&chunk[..n]);
                    this.chunk = chunk;
                }
            }
        }
    }
}

/// The answer to a dropped line: a JSON-RPC "invalid request" error whose data is the
/// project's error object.
pub fn oversized_answer(o: &Oversized, max: usize) -> ServerJsonRpcMessage {
    too_large_answer(o.id.clone(), Some(o.bytes), max)
}

/// Serves `server` on a line stream (stdin and stdout, or any pipe) until the client
/// closes it, dropping and answering each message over `max` bytes and each that
/// [`strict::check`] refuses.
pub async fn serve<R, W>(server: McpServer, read: R, write: W, max: usize) -> anyhow::Result<()>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let listens = server.pending_listens.clone();
    let tasks = server.tasks();
    let began = std::time::Instant::now();
    let service = super::traced::Traced::new(server, crate::mcp::wire::span::Transport::Pipe)
        .serve(StdioTransport::following(read, write, max, listens))
        .await
        .map_err(|e| anyhow::anyhow!("MCP initialize failed: {e}"))?;
    service.waiting().await?;
    // The session's length, when traces are on (a stdio connection is one session).
    if let Some(i) = crate::context::trace::instruments() {
        let pipe = opentelemetry::KeyValue::new(crate::context::trace::attr::TRANSPORT, "pipe");
        i.server_session
            .record(began.elapsed().as_secs_f64(), &[pipe]);
    }
    // Nobody is left to poll them, but a shared store's readers would wait out the
    // staleness.
    tasks.shut_down(super::tasks::SHUT_DOWN_WAIT).await;
    Ok(())
}

/// The stdio transport: a [`LimitedLines`] reader that reads each line once into the
/// message rmcp takes (checked on the way), and rmcp's line transport writing the
/// answers; each dropped line answered.
pub struct StdioTransport<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    lines: LimitedLines<R>,
    /// rmcp's line transport, for writing (it reads nothing).
    inner: AsyncRwTransport<RoleServer, tokio::io::Empty, W>,
    dropped: mpsc::UnboundedReceiver<Dropped>,
    max: usize,
    /// The answer to a dropped line being written. It is kept here, not in
    /// [`Transport::receive`]'s future, because rmcp drops that future whenever it has
    /// something else to do: an answer taken off the channel would be lost with it.
    sending: Option<Sending>,
}

type Sending = std::pin::Pin<Box<dyn Future<Output = Result<(), std::io::Error>> + Send>>;

impl<R, W> StdioTransport<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// The transport of a server that follows tasks on listen streams: the task ids of
    /// each listen request go to `listens`.
    pub fn following(
        read: R,
        write: W,
        max: usize,
        listens: std::sync::Arc<PendingListens>,
    ) -> StdioTransport<R, W> {
        let (read, dropped) = LimitedLines::new(read, max);
        StdioTransport {
            lines: read.parsing().listens(listens),
            inner: AsyncRwTransport::new(tokio::io::empty(), write),
            dropped,
            max,
            sending: None,
        }
    }

    /// Starts the answer to one dropped line (a refused notification or response is
    /// only logged). Nothing here awaits, so no answer is lost if the caller is dropped.
    fn queue(&mut self, dropped: &Dropped) {
        let answer = match dropped {
            Dropped::Oversized(o) => oversized_answer(o, self.max),
            Dropped::Refused(r) => {
                r.log("stdio");
                if !r.answered() {
                    return;
                }
                r.answer()
            }
        };
        self.sending = Some(Box::pin(self.inner.send(answer)));
    }

    /// Finishes writing the answer under way; false when it cannot be written.
    async fn flush(&mut self) -> bool {
        let Some(sending) = self.sending.as_mut() else {
            return true;
        };
        let written = sending.as_mut().await.is_ok();
        self.sending = None;
        written
    }
}

impl<R, W> Transport<RoleServer> for StdioTransport<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if !self.flush().await {
                return None;
            }
            let lines = &mut self.lines;
            let next = std::future::poll_fn(|cx| lines.poll_message(cx));
            tokio::select! {
                biased;
                Some(dropped) = self.dropped.recv() => self.queue(&dropped),
                // The reader keeps its place in a line when this is interrupted.
                message = next => {
                    if message.is_none() {
                        // A dropped line just before the end is still answered.
                        while let Ok(dropped) = self.dropped.try_recv() {
                            self.queue(&dropped);
                            if !self.flush().await {
                                break;
                            }
                        }
                    }
                    return message;
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::wire::MAX_MESSAGE_BYTES;
    use tokio::io::AsyncReadExt;

    /// Read once: lines across chunk edges come out as messages in order; a refused
    /// line, an oversized one and a blank one do not; a last line without its newline
    /// does.
    #[tokio::test]
    async fn parsing_reads_each_line_once_into_its_message() {
        let call = |id: u64| {
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{{}}}}"#)
        };
        let long = format!(
            r#"{{"jsonrpc":"2.0","id":9,"method":"tools/list","x":"{}"}}"#,
            "y".repeat(300)
        );
        let input = format!("{}\n\n not json\n{long}\n{}\n{}", call(1), call(2), call(3));
        let (client, mut server) = tokio::io::duplex(7);
        let writer = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            server.write_all(input.as_bytes()).await.unwrap();
        });
        let (mut lines, mut reports) = LimitedLines::new(client, 200);
        lines = lines.parsing();
        let mut ids = Vec::new();
        while let Some(message) = std::future::poll_fn(|cx| lines.poll_message(cx)).await {
            match message {
                rmcp::model::JsonRpcMessage::Request(r) => ids.push(r.id.to_string()),
                other => panic!("not a request: {other:?}"),
            }
        }
        writer.await.unwrap();
        assert_eq!(ids, ["1", "2", "3"]);
        drop(lines);
        let mut dropped = Vec::new();
        while let Some(d) = reports.recv().await {
            dropped.push(matches!(d, Dropped::Oversized(_)));
        }
        assert_eq!(dropped, [false, true], "a refusal, then the oversized line");
    }

    async fn read_all(input: &[u8], max: usize) -> (Vec<u8>, Vec<Oversized>) {
        let (out, dropped, refused) = read_checked(input, max, false).await;
        assert!(refused.is_empty());
        (out, dropped)
    }

    async fn read_checked(
        input: &[u8],
        max: usize,
        strict: bool,
    ) -> (Vec<u8>, Vec<Oversized>, Vec<Refusal>) {
        // A reader that hands out 7 bytes at a time, so lines cross chunk edges.
        let (client, mut server) = tokio::io::duplex(7);
        let input = input.to_vec();
        let writer = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            server.write_all(&input).await.unwrap();
        });
        let (mut lines, mut reports) = LimitedLines::new(client, max);
        if strict {
            lines = lines.strict();
        }
        let mut out = Vec::new();
        lines.read_to_end(&mut out).await.unwrap();
        writer.await.unwrap();
        drop(lines);
        let (mut dropped, mut refused) = (Vec::new(), Vec::new());
        while let Some(d) = reports.recv().await {
            match d {
                Dropped::Oversized(o) => dropped.push(o),
                Dropped::Refused(r) => refused.push(r),
            }
        }
        (out, dropped, refused)
    }

    #[tokio::test]
    async fn a_strict_reader_passes_requests_and_reports_the_rest() {
        let ok = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        let input = format!(
            "{ok}\n\n  \r\n{{oops\r\n{ok}\r\n{}\n[1]\n{ok}",
            "x".repeat(64)
        );
        let (out, dropped, refused) = read_checked(input.as_bytes(), 64, true).await;
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!("{ok}\n{ok}\r\n{ok}")
        );
        assert_eq!(dropped.len(), 0, "64 bytes is not over 64");
        let kinds: Vec<_> = refused.iter().map(|r| r.kind).collect();
        use strict::Kind;
        assert_eq!(kinds, [Kind::Parse, Kind::Parse, Kind::InvalidRequest]);
    }

    #[tokio::test]
    async fn a_sessions_revision_is_served_once_its_session_has_begun() {
        let meta = |v: &str| {
            format!(
                r#""_meta":{{"io.modelcontextprotocol/protocolVersion":"{v}","io.modelcontextprotocol/clientCapabilities":{{}}}}"#
            )
        };
        let list = |id: u32, v: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{{{}}}}}"#,
                meta(v)
            )
        };
        let initialize = r#"{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
        let input = format!(
            "{}\n{}\n{initialize}\n{}\n",
            list(1, "2025-11-25"),
            list(2, "2026-07-28"),
            list(3, "2025-11-25")
        );
        let (out, _, refused) = read_checked(input.as_bytes(), 1 << 16, true).await;
        let out = String::from_utf8(out).unwrap();
        // The first is refused; a stateless one needs no session; after initialize, a
        // session's revision is served.
        assert_eq!(refused.len(), 1, "{out}");
        assert_eq!(refused[0].kind, strict::Kind::InvalidRequest);
        let answer = serde_json::to_value(refused[0].answer()).unwrap();
        assert_eq!(answer["id"], 1);
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("send initialize first"),
            "{answer}"
        );
        assert_eq!(out.lines().count(), 3, "{out}");
        assert!(out.contains(r#""id":3"#), "{out}");
    }

    #[tokio::test]
    async fn lines_within_the_limit_pass_unchanged_and_longer_ones_are_reported() {
        let long = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":42,\"p\":\"{}\"}}",
            "x".repeat(100)
        );
        let input = format!("short one\n{long}\nexactly10!\n\nlast without newline");
        let (out, dropped) = read_all(input.as_bytes(), 20).await;
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "short one\nexactly10!\n\nlast without newline"
        );
        assert_eq!(
            dropped,
            vec![Oversized {
                id: Some(RequestId::Number(42)),
                bytes: long.len()
            }]
        );
    }

    #[tokio::test]
    async fn a_long_last_line_without_its_newline_is_reported() {
        let (out, dropped) = read_all(b"ok\n0123456789abcdef", 10).await;
        assert_eq!(out, b"ok\n");
        assert_eq!(dropped.len(), 1);
        assert_eq!(dropped[0].bytes, 16);
        assert_eq!(dropped[0].id, None);
    }

    #[tokio::test]
    async fn a_line_far_over_the_limit_is_skipped_without_being_held() {
        let huge = tokio::io::repeat(b'x').take(20 << 20);
        let input = huge.chain(&b"\n{\"after\":1}\n"[..]);
        let (mut lines, mut reports) = LimitedLines::new(input, 1 << 20);
        let mut out = Vec::new();
        lines.read_to_end(&mut out).await.unwrap();
        assert_eq!(out, b"{\"after\":1}\n");
        let Some(Dropped::Oversized(o)) = reports.recv().await else {
            panic!("reported as oversized")
        };
        assert_eq!(o.bytes, 20 << 20);
    }

    #[test]
    fn the_request_id_is_found_at_the_top_level_only() {
        let cases: [(&str, Option<RequestId>); 8] = [
            (
                r#"{"jsonrpc":"2.0","id":7,"method":"x"}"#,
                Some(RequestId::Number(7)),
            ),
            (
                r#"{ "id" : "abc", "x": 1"#,
                Some(RequestId::String("abc".into())),
            ),
            (
                r#"{"params":{"id":1},"a":[{"id":2}],"id":3"#,
                Some(RequestId::Number(3)),
            ),
            (
                r#"{"method":"say \"id\":9","id":4}"#,
                Some(RequestId::Number(4)),
            ),
            (r#"{"params":{"id":1},"method":"#, None),
            (r#"{"x":"id","y":"id"}"#, None),
            (r#"{"id":{"a":1}}"#, None),
            (r#"{"id":12"#, Some(RequestId::Number(12))),
        ];
        for (text, want) in cases {
            assert_eq!(request_id(text.as_bytes()), want, "{text}");
        }
    }

    #[test]
    fn the_answer_names_the_limit_and_carries_the_error_object() {
        let msg = oversized_answer(
            &Oversized {
                id: Some(RequestId::Number(5)),
                bytes: 5_000_000,
            },
            MAX_MESSAGE_BYTES,
        );
        let v = serde_json::to_value(&msg).unwrap();
        assert_eq!(v["id"], 5);
        assert_eq!(v["error"]["code"], -32600);
        let data = &v["error"]["data"]["error"];
        assert_eq!(data["code"], "VALIDATION_OUT_OF_RANGE");
        assert_eq!(data["details"]["limit_bytes"], MAX_MESSAGE_BYTES);
        assert_eq!(data["details"]["bytes"], 5_000_000);
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains("5000000 bytes, over the 4194304-byte limit")
        );
    }
}
