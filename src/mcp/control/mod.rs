//! The control endpoint: a local Unix socket on which a server (`proxy`, `--headless
//! --control`) publishes its traffic as it happens, and the client side that
//! `structs-console watch` and the Live tab read it with.
//!
//! What a watcher reads is a session log (the `--record` format, one JSON object a
//! line), after one line about the server:
//! `{"v":1,"type":"hello","server":"proxy","description":"…","pid":…}`. A watcher that
//! falls behind gets `{"type":"lagged","missed":N}` in place of the lines it missed;
//! one over [`WATCHERS_MAX`] gets `{"type":"refused","reason":…}` and is closed.
//!
//! A watcher may also send commands, one JSON object a line (a proxy's breakpoints and
//! faults, [`Control`]); each is answered on that watcher's stream alone, among the
//! lines it reads, by a line of `"type": "ack"` or `"type": "refused"`.
//!
//! Privacy: the socket is made in a folder only its user can open (0700, checked when
//! it already exists), and is itself 0600. Secrets never reach it: it carries what the
//! session log carries, which never holds tokens or `tx_bytes`.

use std::io::{BufRead, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::time::Duration;

use anyhow::Context as _;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc;

use crate::record::Feed;
use crate::record::live::Fed;

pub mod http;

/// The most watchers one endpoint serves at once.
pub const WATCHERS_MAX: usize = 16;

/// The longest command line a watcher may send.
pub const COMMAND_MAX: usize = 1024 * 1024;

/// What watchers send to the server behind an endpoint.
#[derive(Debug)]
pub enum Control {
    /// A command (a JSON object) from watcher `watcher`; the answer goes back to it
    /// alone.
    Command {
        watcher: u64,
        body: Value,
        reply: tokio::sync::oneshot::Sender<Value>,
    },
    /// Watcher `watcher` went away (closed, or killed).
    Left { watcher: u64 },
}

/// The folders endpoints may be in, the one this process makes them in first:
/// `$XDG_RUNTIME_DIR/structs-console`, `/run/user/<uid>/structs-console` when that
/// folder exists, then `structs-console-<uid>` in the temporary folder (`$TMPDIR`, else
/// `/tmp`).
///
/// A host often starts its server with a pared-down environment (the official SDKs pass
/// a few variables only, `XDG_RUNTIME_DIR` not among them), so a proxy it starts may
/// see another default than the operator's terminal does; a watcher looks in them all.
pub fn endpoint_dirs() -> Vec<PathBuf> {
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    let mut dirs = Vec::new();
    if let Some(dir) = std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        dirs.push(PathBuf::from(dir).join("structs-console"));
    }
    let run = PathBuf::from(format!("/run/user/{uid}"));
    if run.is_dir() {
        dirs.push(run.join("structs-console"));
    }
    dirs.push(std::env::temp_dir().join(format!("structs-console-{uid}")));
    let mut seen = std::collections::HashSet::new();
    dirs.retain(|d| seen.insert(d.clone()));
    dirs
}

/// The folder this process makes its endpoints in by default (the first of
/// [`endpoint_dirs`]).
pub fn default_dir() -> PathBuf {
    endpoint_dirs().swap_remove(0)
}

/// True when `dir` is a folder only this user can open (so what is in it is ours).
fn is_private(dir: &Path) -> bool {
    // SAFETY: as in endpoint_dirs.
    let me = unsafe { libc::getuid() };
    std::fs::metadata(dir).is_ok_and(|m| m.is_dir() && m.uid() == me && m.mode() & 0o077 == 0)
}

/// An endpoint's default path: `<default_dir>/<kind>-<pid>.sock`.
pub fn default_path(kind: &str) -> PathBuf {
    default_dir().join(format!("{kind}-{}.sock", std::process::id()))
}

/// Starts the control endpoint at `path` (the default one of `kind` when `None` or
/// empty), publishing `feed`, and says on stderr how to watch it.
///
/// # Errors
///
/// When the socket cannot be made (the message names it).
pub fn publish(
    path: Option<&Path>,
    kind: &str,
    feed: Feed,
    mut hello: Value,
    commands: Option<mpsc::UnboundedSender<Control>>,
) -> anyhow::Result<Endpoint> {
    let path = match path.filter(|p| !p.as_os_str().is_empty()) {
        Some(p) => p.to_path_buf(),
        None => default_path(kind),
    };
    hello["v"] = json!(crate::record::VERSION);
    hello["type"] = json!("hello");
    hello["pid"] = json!(std::process::id());
    if http::is_url(&path) {
        let mut line = serde_json::to_vec(&hello).unwrap_or_default();
        line.push(b'\n');
        let asked = path.display().to_string();
        let (endpoint, url) = http::serve(&asked, feed, Arc::from(line), commands)
            .with_context(|| format!("the control endpoint {asked}"))?;
        eprintln!(
            "structs-console: live traffic at {url}; watch it with: structs-console watch {url} (its token is in {})",
            endpoint.path().display()
        );
        return Ok(endpoint);
    }
    let endpoint = Endpoint::serve_with(&path, feed, hello, commands)
        .map_err(|e| anyhow::anyhow!("the control endpoint {}: {e}", path.display()))?;
    eprintln!(
        "structs-console: live traffic at {0}; watch it with: structs-console watch {0}",
        path.display()
    );
    Ok(endpoint)
}

/// Makes `dir` private to this user, or says why it cannot be used.
fn private_dir(dir: &Path) -> std::io::Result<()> {
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let meta = std::fs::metadata(dir)?;
    // SAFETY: as in default_dir.
    let me = unsafe { libc::getuid() };
    if !meta.is_dir() || meta.uid() != me || meta.mode() & 0o077 != 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!(
                "{} is not a folder only this user can open (mode {:o}, owner {}); remove it or name another endpoint",
                dir.display(),
                meta.mode() & 0o777,
                meta.uid()
            ),
        ));
    }
    Ok(())
}

/// A running endpoint. Dropping it stops it and removes the socket.
pub struct Endpoint {
    path: PathBuf,
    task: tokio::task::JoinHandle<()>,
}

impl Endpoint {
    /// Serves `feed` at `path` (its folder made private when it is the default one),
    /// each watcher getting `hello` first. Call inside a tokio runtime.
    ///
    /// # Errors
    ///
    /// When the folder is not private, or the socket cannot be made (a live endpoint
    /// already there).
    pub fn serve(path: &Path, feed: Feed, hello: Value) -> std::io::Result<Endpoint> {
        Endpoint::serve_with(path, feed, hello, None)
    }

    /// As [`Endpoint::serve`], passing what watchers send to `commands` (each answered
    /// to its sender alone), and saying when one leaves.
    ///
    /// # Errors
    ///
    /// As [`Endpoint::serve`].
    pub fn serve_with(
        path: &Path,
        feed: Feed,
        hello: Value,
        commands: Option<mpsc::UnboundedSender<Control>>,
    ) -> std::io::Result<Endpoint> {
        if let Some(dir) = path.parent()
            && dir == default_dir()
        {
            private_dir(dir)?;
        }
        // Only a socket that nobody answers on (left by a process that died) is
        // replaced. Anything else at the path (a session log given to --control by
        // mistake, a symlink, a folder) is left as it is and refused, naming it.
        if let Ok(meta) = std::fs::symlink_metadata(path) {
            use std::os::unix::fs::FileTypeExt;
            let kind = meta.file_type();
            if !kind.is_socket() {
                let what = if kind.is_symlink() {
                    "a symbolic link"
                } else if kind.is_dir() {
                    "a folder"
                } else if kind.is_file() {
                    "a file"
                } else {
                    "not a socket"
                };
                return Err(std::io::Error::new(
                    std::io::ErrorKind::AlreadyExists,
                    format!(
                        "{} is {what}, not a control socket: it is left as it is; give the \
                         control endpoint a path where nothing is, or a stale socket",
                        path.display()
                    ),
                ));
            }
            if std::os::unix::net::UnixStream::connect(path).is_ok() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::AddrInUse,
                    format!("{} is another live endpoint", path.display()),
                ));
            }
            std::fs::remove_file(path)?;
        }
        let listener = tokio::net::UnixListener::bind(path)?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
        let mut hello = serde_json::to_vec(&hello).unwrap_or_default();
        hello.push(b'\n');
        let hello: Arc<[u8]> = Arc::from(hello);
        let task = tokio::spawn(async move {
            let mut watchers = 0u64;
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    // Out of file descriptors, most often: wait for some to close.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                };
                let refused = feed.watchers() >= WATCHERS_MAX;
                watchers += 1;
                tokio::spawn(serve_watcher(
                    stream.into_split(),
                    feed.clone(),
                    hello.clone(),
                    refused,
                    watchers,
                    commands.clone(),
                ));
            }
        });
        Ok(Endpoint {
            path: path.to_path_buf(),
            task,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.task.abort();
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Serves one watcher on its two ends (a Unix socket's, or an upgraded HTTP
/// connection's): the hello, the backlog and the feed out; commands in.
async fn serve_watcher<R, W>(
    (read, mut write): (R, W),
    feed: Feed,
    hello: Arc<[u8]>,
    refused: bool,
    watcher: u64,
    commands: Option<mpsc::UnboundedSender<Control>>,
) where
    R: tokio::io::AsyncRead + Unpin,
    W: tokio::io::AsyncWrite + Unpin,
{
    use tokio::io::AsyncBufReadExt;
    if refused {
        let line = json!({
            "type": "refused",
            "reason": format!("this endpoint serves at most {WATCHERS_MAX} watchers at once"),
        });
        let _ = write.write_all(format!("{line}\n").as_bytes()).await;
        return;
    }
    let (backlog, mut rx) = feed.watch();
    if write.write_all(&hello).await.is_err() {
        return;
    }
    for line in backlog {
        if write.write_all(&line).await.is_err() {
            return;
        }
    }
    let mut reader = tokio::io::BufReader::new(read).take(COMMAND_MAX as u64 + 1);
    // A command's bytes as they come (kept across the select, which may cut a read
    // short: `read_until` goes on where it stopped).
    let mut command = Vec::new();
    loop {
        tokio::select! {
            sent = rx.recv() => {
                let line: Arc<[u8]> = match sent {
                    Ok(line) => line,
                    Err(RecvError::Lagged(n)) => Arc::from(
                        format!("{}\n", json!({"type": "lagged", "missed": n})).into_bytes(),
                    ),
                    Err(RecvError::Closed) => break,
                };
                if write.write_all(&line).await.is_err() {
                    break;
                }
            }
            read = reader.read_until(b'\n', &mut command) => {
                if !matches!(read, Ok(n) if n > 0) {
                    break;
                }
                // Each command may be up to COMMAND_MAX bytes; the budget starts again.
                reader.set_limit(COMMAND_MAX as u64 + 1);
                let mut line = std::mem::take(&mut command);
                // Cut by the limit, maybe inside a character: refused for its size.
                let over = line.len() > COMMAND_MAX;
                if line.last() == Some(&b'\n') {
                    line.pop();
                    if line.last() == Some(&b'\r') {
                        line.pop();
                    }
                }
                let answer = match String::from_utf8(line) {
                    _ if over => json!({"type": "refused",
                        "reason": format!("a command is at most {COMMAND_MAX} bytes")}),
                    Ok(text) => answer_command(&text, watcher, commands.as_ref()).await,
                    Err(_) => json!({"type": "refused",
                        "reason": "a command is a line of JSON, in UTF-8: this line is not UTF-8"}),
                };
                if write.write_all(format!("{answer}\n").as_bytes()).await.is_err() {
                    break;
                }
            }
        }
    }
    if let Some(commands) = &commands {
        let _ = commands.send(Control::Left { watcher });
    }
}

/// The answer to one command line a watcher sent.
async fn answer_command(
    text: &str,
    watcher: u64,
    commands: Option<&mpsc::UnboundedSender<Control>>,
) -> Value {
    let refused = |why: String| json!({"type": "refused", "reason": why});
    if text.len() > COMMAND_MAX {
        return refused(format!("a command is at most {COMMAND_MAX} bytes"));
    }
    let body: Value = match serde_json::from_str(text) {
        Ok(v @ Value::Object(_)) => v,
        Ok(other) => return refused(format!("a command is a JSON object, not {other}")),
        Err(e) => return refused(format!("a command is a JSON object: {e}")),
    };
    let Some(commands) = commands else {
        return refused("this endpoint takes no commands: it only publishes".into());
    };
    let (reply, answer) = tokio::sync::oneshot::channel();
    if commands
        .send(Control::Command {
            watcher,
            body,
            reply,
        })
        .is_err()
    {
        return refused("the server behind this endpoint has stopped".into());
    }
    answer
        .await
        .unwrap_or_else(|_| refused("the server behind this endpoint has stopped".into()))
}

/// How often a watcher's reader looks at its stop flag while the endpoint is quiet.
const READ_TICK: Duration = Duration::from_millis(200);

/// The longest feed line a watcher reads: a message through the proxy (up to
/// [`crate::mcp::wire::PEER_LINE_MAX`]) and the log line around it. A longer line is
/// read and let go, and a `{"type": "skipped"}` line takes its place.
pub const FEED_LINE_MAX: usize = crate::mcp::wire::PEER_LINE_MAX + (1 << 20);

/// Reads the endpoint at `path` on a thread of its own, handing each line to `out`
/// until the endpoint closes ([`Fed::Ended`]), `stop` is set or `out` is dropped.
///
/// # Errors
///
/// When nothing answers at `path`.
pub fn watch_socket(
    path: &Path,
    out: Sender<Fed>,
    stop: Arc<AtomicBool>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    watch_socket_sending(path, out, stop).map(|(thread, _)| thread)
}

/// As [`watch_socket`], with the other end of the socket, to send the server commands
/// on (one JSON object a line; each is answered among the lines read).
///
/// # Errors
///
/// As [`watch_socket`].
pub fn watch_socket_sending(
    path: &Path,
    out: Sender<Fed>,
    stop: Arc<AtomicBool>,
) -> std::io::Result<(std::thread::JoinHandle<()>, std::os::unix::net::UnixStream)> {
    let stream = std::os::unix::net::UnixStream::connect(path)?;
    stream.set_read_timeout(Some(READ_TICK))?;
    let sender = stream.try_clone()?;
    sender.set_write_timeout(Some(Duration::from_secs(2)))?;
    let thread = read_lines(stream, path.display().to_string(), out, stop)?;
    Ok((thread, sender))
}

/// Reads the lines of an endpoint's stream (its read timeout set to [`READ_TICK`]) on a
/// thread of its own, handing each to `out` until it closes, `stop` is set or `out` is
/// dropped.
fn read_lines<R: std::io::Read + Send + 'static>(
    stream: R,
    shown: String,
    out: Sender<Fed>,
    stop: Arc<AtomicBool>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("watch".into())
        .spawn(move || {
            let mut reader = std::io::BufReader::with_capacity(1 << 16, stream);
            let mut line = Vec::new();
            // The bytes of a line over FEED_LINE_MAX, read and let go.
            let mut skipped = 0usize;
            while !stop.load(Ordering::Relaxed) {
                let chunk = match reader.fill_buf() {
                    Ok([]) => {
                        let _ = out.send(Fed::Ended(format!("{shown} closed")));
                        return;
                    }
                    Ok(chunk) => chunk,
                    Err(e)
                        if matches!(
                            e.kind(),
                            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                        ) =>
                    {
                        continue;
                    }
                    Err(e) => {
                        let _ = out.send(Fed::Ended(format!("{shown}: {e}")));
                        return;
                    }
                };
                let newline = chunk.iter().position(|b| *b == b'\n');
                let body = &chunk[..newline.unwrap_or(chunk.len())];
                if skipped == 0 && line.len() + body.len() <= FEED_LINE_MAX {
                    line.extend_from_slice(body);
                } else {
                    skipped += std::mem::take(&mut line).len() + body.len();
                }
                let used = newline.map_or(chunk.len(), |at| at + 1);
                reader.consume(used);
                if newline.is_none() {
                    continue;
                }
                let whole = if skipped > 0 {
                    tracing::warn!(bytes = skipped, "a feed line over the limit was let go");
                    let note = json!({"type": "skipped", "bytes": skipped,
                        "limit_bytes": FEED_LINE_MAX,
                        "reason": "a line of the feed went past the limit; it was read and let go"});
                    skipped = 0;
                    note.to_string().into_bytes()
                } else {
                    std::mem::take(&mut line)
                };
                if out.send(Fed::Line(whole)).is_err() {
                    return;
                }
            }
        })
}

/// The endpoints of this user's that answer in the folders a watcher looks in
/// ([`endpoint_dirs`], those only this user can open), newest first.
///
/// Only sockets this user owns: a process of another user's that can write in the
/// folder (root's, or one started with this user's environment) may have made one
/// there, and a watcher attached to it would hold that user's agent at its
/// breakpoints. Another user's endpoint is watched only when named.
pub fn live_endpoints() -> Vec<PathBuf> {
    // SAFETY: as in endpoint_dirs.
    let me = unsafe { libc::getuid() };
    let dirs: Vec<PathBuf> = endpoint_dirs()
        .into_iter()
        .filter(|d| is_private(d))
        .collect();
    endpoints_of(&dirs, me)
}

/// The sockets in `dirs` that `uid` owns and that answer, newest first.
fn endpoints_of(dirs: &[PathBuf], uid: u32) -> Vec<PathBuf> {
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = dirs
        .iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flatten()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "sock"))
        .filter_map(|p| Some((std::fs::symlink_metadata(&p).ok()?, p)))
        .filter(|(m, _)| m.uid() == uid)
        .filter(|(_, p)| std::os::unix::net::UnixStream::connect(p).is_ok())
        .filter_map(|(m, p)| Some((m.modified().ok()?, p)))
        .collect();
    found.sort_by_key(|(at, _)| std::cmp::Reverse(*at));
    found.into_iter().map(|(_, p)| p).collect()
}

/// How often [`wait_for_endpoint`] looks again.
pub const LOOK_EVERY: Duration = Duration::from_millis(250);

/// Waits until an endpoint in the default folder answers, and returns the newest; `None`
/// when `stop` is set first.
pub fn wait_for_endpoint(stop: &AtomicBool) -> Option<PathBuf> {
    loop {
        if let Some(found) = live_endpoints().into_iter().next() {
            return Some(found);
        }
        if stop.load(Ordering::Relaxed) {
            return None;
        }
        std::thread::sleep(LOOK_EVERY);
    }
}

/// Writes each line of the endpoint (a socket, or a URL) or log at `what` to `out` as it comes, until it
/// ends: `structs-console watch` without a terminal. A socket is read until it
/// closes; a file is followed until `stop` is set.
///
/// # Errors
///
/// When `what` cannot be opened.
pub fn print_feed(what: &Path, out: &mut dyn Write, stop: Arc<AtomicBool>) -> anyhow::Result<()> {
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = open_feed(what, tx, stop)?.thread;
    for fed in rx {
        match fed {
            Fed::Line(line) => {
                out.write_all(&line)?;
                out.write_all(b"\n")?;
                out.flush()?;
            }
            Fed::Ended(why) => {
                tracing::info!("{why}");
                break;
            }
        }
    }
    let _ = reader.join();
    Ok(())
}

/// As [`print_feed`], printing only the calls `filter` matches, each whole (its lines
/// held until its response), with the notifications it matches (by method) and the
/// feed's own lines.
///
/// # Errors
///
/// As [`print_feed`].
pub fn print_feed_filtered(
    what: &Path,
    out: &mut dyn Write,
    stop: Arc<AtomicBool>,
    filter: &crate::record::filter::Filter,
) -> anyhow::Result<()> {
    use crate::record::calls::{Followed, Follower};
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = open_feed(what, tx, stop)?.thread;
    let mut follower = Follower::new(&filter.needles);
    for fed in rx {
        let line = match fed {
            Fed::Line(line) => line,
            Fed::Ended(why) => {
                tracing::info!("{why}");
                break;
            }
        };
        for followed in follower.push(&line) {
            let lines = match followed {
                Followed::Call(call, lines) if filter.matches(&*call) => lines,
                Followed::Call(..) => continue,
                Followed::Other(line) if other_matches(&line, filter) => vec![line],
                Followed::Other(_) => continue,
            };
            for line in lines {
                out.write_all(&line)?;
                out.write_all(b"\n")?;
            }
            out.flush()?;
        }
    }
    let _ = reader.join();
    Ok(())
}

/// Whether a line of no call passes `filter`: a notification when the filter matches
/// its method (as a call of that name that ended well); the feed's own lines always.
fn other_matches(line: &[u8], filter: &crate::record::filter::Filter) -> bool {
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(line) else {
        return false;
    };
    if v["type"] != "notification" {
        return true;
    }
    let method = v["method"].as_str().unwrap_or_default().to_string();
    let as_call = crate::record::calls::CallRecord {
        session: 0,
        call: 0,
        line: 0,
        tool: method.clone(),
        method,
        arguments: serde_json::Value::Null,
        at_ms: None,
        duration_ms: None,
        bytes: line.len() as u64,
        outcome: crate::record::calls::Outcome::Ok,
        rounds: 0,
        declined: 0,
        task_updates: 0,
        injected: None,
        text: 0,
    };
    filter.matches(&as_call)
}

/// Where a watcher writes its commands (one JSON object a line).
pub type CommandStream = Box<dyn Write + Send>;

/// A feed being read.
pub struct Opened {
    /// The thread reading it.
    pub thread: std::thread::JoinHandle<()>,
    /// Where to send commands: a control endpoint's stream (a log takes none).
    pub commands: Option<CommandStream>,
}

/// Starts reading `what`: a control endpoint's socket, or a session log to follow.
///
/// # Errors
///
/// When it is neither, or cannot be opened.
pub fn open_feed(what: &Path, out: Sender<Fed>, stop: Arc<AtomicBool>) -> anyhow::Result<Opened> {
    use std::os::unix::fs::FileTypeExt;
    if http::is_url(what) {
        let url = what.display().to_string();
        let stream = http::connect(&url)?;
        stream.set_read_timeout(Some(READ_TICK))?;
        let sender = stream.try_clone()?;
        sender.set_write_timeout(Some(Duration::from_secs(2)))?;
        let thread = read_lines(stream, url, out, stop)?;
        return Ok(Opened {
            thread,
            commands: Some(Box::new(sender)),
        });
    }
    let meta = std::fs::metadata(what)
        .map_err(|e| anyhow::anyhow!("cannot watch {}: {e}", what.display()))?;
    if meta.file_type().is_socket() {
        watch_socket_sending(what, out, stop)
            .map(|(thread, sender)| Opened {
                thread,
                commands: Some(Box::new(sender) as CommandStream),
            })
            .map_err(|e| anyhow::anyhow!("nothing answers at {}: {e}", what.display()))
    } else if meta.is_file() {
        crate::record::live::follow_file(what, out, stop)
            .map(|thread| Opened {
                thread,
                commands: None,
            })
            .map_err(|e| anyhow::anyhow!("cannot follow {}: {e}", what.display()))
    } else {
        anyhow::bail!(
            "{} is neither a control endpoint (a socket) nor a session log (a file)",
            what.display()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_command_that_is_not_utf8_is_refused_and_the_watcher_stays() {
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let (read, write) = tokio::io::split(theirs);
        let served = tokio::spawn(serve_watcher(
            (read, write),
            Feed::new(),
            Arc::from(&b"{\"type\":\"hello\"}\n"[..]),
            false,
            1,
            None,
        ));
        let (out, mut into) = tokio::io::split(ours);
        into.write_all(b"{\"cmd\":\"\xff\xfe\"}\n{\"cmd\":\"break\"}\n")
            .await
            .unwrap();
        let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(out));
        let mut said = Vec::new();
        for _ in 0..3 {
            let line = lines.next_line().await.unwrap().unwrap();
            said.push(serde_json::from_str::<Value>(&line).unwrap());
        }
        assert_eq!(said[0]["type"], "hello");
        assert_eq!(said[1]["type"], "refused");
        assert!(
            said[1]["reason"].as_str().unwrap().contains("not UTF-8"),
            "{}",
            said[1]
        );
        // Still attached: the next command is read and answered.
        assert!(
            said[2]["reason"].as_str().unwrap().contains("no commands"),
            "{}",
            said[2]
        );
        // Both halves go: the watcher's end closes, and so does its service.
        drop((lines, into));
        tokio::time::timeout(Duration::from_secs(5), served)
            .await
            .expect("the watcher's service ends with its connection")
            .unwrap();
    }

    #[test]
    fn a_feed_line_past_the_limit_is_let_go_and_said() {
        let big = vec![b'x'; FEED_LINE_MAX + 10];
        let input = [&b"{\"a\":1}\n"[..], &big, b"\n{\"b\":2}\n"].concat();
        let (tx, rx) = std::sync::mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        read_lines(std::io::Cursor::new(input), "test".into(), tx, stop)
            .unwrap()
            .join()
            .unwrap();
        let got: Vec<String> = rx
            .iter()
            .map(|f| match f {
                Fed::Line(l) => String::from_utf8(l).unwrap(),
                Fed::Ended(e) => e,
            })
            .collect();
        assert_eq!(
            got.len(),
            4,
            "{:?}",
            got.iter().map(String::len).collect::<Vec<_>>()
        );
        assert_eq!(got[0], "{\"a\":1}");
        let note: Value = serde_json::from_str(&got[1]).unwrap();
        assert_eq!(note["type"], "skipped");
        assert_eq!(note["bytes"], FEED_LINE_MAX + 10);
        assert_eq!(got[2], "{\"b\":2}");
        assert_eq!(got[3], "test closed");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_watcher_gets_the_hello_the_backlog_then_live_lines_and_the_socket_is_private() {
        let dir = std::env::temp_dir().join(format!("structs-control-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let path = dir.join("t.sock");
        let feed = Feed::new();
        feed.publish(b"{\"before\":1}\n");
        let endpoint = Endpoint::serve(&path, feed.clone(), json!({"type": "hello"})).unwrap();
        let mode = std::fs::metadata(&path).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o600);
        // A second endpoint on a live one is refused.
        assert!(Endpoint::serve(&path, feed.clone(), json!({})).is_err());

        let (tx, rx) = std::sync::mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let reader = tokio::task::spawn_blocking({
            let path = path.clone();
            let stop = stop.clone();
            move || watch_socket(&path, tx, stop).unwrap().join()
        });
        let next = || match rx.recv_timeout(Duration::from_secs(5)).unwrap() {
            Fed::Line(l) => String::from_utf8(l).unwrap(),
            Fed::Ended(why) => panic!("ended: {why}"),
        };
        assert_eq!(next(), r#"{"type":"hello"}"#);
        assert_eq!(next(), r#"{"before":1}"#);
        feed.publish(b"{\"after\":2}\n");
        assert_eq!(next(), r#"{"after":2}"#);
        drop(endpoint);
        assert!(!path.exists(), "the socket is removed with its endpoint");
        stop.store(true, Ordering::Relaxed);
        let _ = reader.await;
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn only_this_users_sockets_are_found_without_a_name() {
        let dir = std::env::temp_dir().join(format!("structs-owner-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("proxy-1.sock");
        let endpoint = Endpoint::serve(&path, Feed::new(), json!({"type": "hello"})).unwrap();
        // SAFETY: as in endpoint_dirs.
        let me = unsafe { libc::getuid() };
        let dirs = [dir.clone()];
        assert_eq!(endpoints_of(&dirs, me), std::slice::from_ref(&path));
        // The same socket, as another user would look for theirs: not theirs.
        assert!(endpoints_of(&dirs, me.wrapping_add(1)).is_empty());
        // Root can give the socket to another user: then it is not this user's.
        if me == 0 {
            std::os::unix::fs::chown(&path, Some(65534), None).unwrap();
            assert!(endpoints_of(&dirs, me).is_empty());
            assert_eq!(endpoints_of(&dirs, 65534), std::slice::from_ref(&path));
        }
        drop(endpoint);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn only_a_stale_socket_is_replaced_never_a_file_a_link_or_a_folder() {
        let dir = std::env::temp_dir().join(format!("structs-clobber-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let hello = json!({"type": "hello"});
        let refused = |served: std::io::Result<Endpoint>| match served {
            Ok(endpoint) => panic!("served on {}", endpoint.path().display()),
            Err(e) => e,
        };
        // A session log given as the control path by mistake.
        let log = dir.join("agent.jsonl");
        std::fs::write(&log, "{\"v\":1}\n".repeat(414)).unwrap();
        let e = refused(Endpoint::serve(&log, Feed::new(), hello.clone()));
        assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists);
        assert!(
            e.to_string()
                .contains("agent.jsonl is a file, not a control socket"),
            "{e}"
        );
        assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 414);
        // A symlink, even one to nothing, and a folder.
        let link = dir.join("link.sock");
        std::os::unix::fs::symlink(&log, &link).unwrap();
        let e = refused(Endpoint::serve(&link, Feed::new(), hello.clone()));
        assert!(e.to_string().contains("is a symbolic link"), "{e}");
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        let dangling = dir.join("dangling.sock");
        std::os::unix::fs::symlink(dir.join("nothing"), &dangling).unwrap();
        let e = refused(Endpoint::serve(&dangling, Feed::new(), hello.clone()));
        assert!(e.to_string().contains("is a symbolic link"), "{e}");
        let folder = dir.join("folder");
        std::fs::create_dir(&folder).unwrap();
        let e = refused(Endpoint::serve(&folder, Feed::new(), hello.clone()));
        assert!(e.to_string().contains("is a folder"), "{e}");
        assert!(folder.is_dir());
        // A socket nobody answers on is replaced; a live one is refused.
        let stale = dir.join("stale.sock");
        drop(std::os::unix::net::UnixListener::bind(&stale).unwrap());
        let live = Endpoint::serve(&stale, Feed::new(), hello.clone()).unwrap();
        let e = refused(Endpoint::serve(&stale, Feed::new(), hello));
        assert_eq!(e.kind(), std::io::ErrorKind::AddrInUse, "{e}");
        drop(live);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_folder_others_can_open_is_refused() {
        let dir = std::env::temp_dir().join(format!("structs-open-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let err = private_dir(&dir).unwrap_err();
        assert!(err.to_string().contains("only this user"), "{err}");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        private_dir(&dir).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }
}
