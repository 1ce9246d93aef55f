//! What the Live tab watches, apart from how it shows it: the thread reading a
//! control endpoint or a followed log, the socket commands go out on, and the look for
//! the newest endpoint when watching whichever is newest.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::Instant;

use serde_json::Value;

use crate::mcp::control::LOOK_EVERY;
use crate::record::live::Fed;

/// What is being watched, and the thread reading it.
pub(super) struct Feeding {
    pub what: PathBuf,
    rx: Receiver<Fed>,
    stop: Arc<AtomicBool>,
    /// Where commands go: a control endpoint takes them, a log does not.
    pub commands: Option<crate::mcp::control::CommandStream>,
    /// Why the feed ended, once it has.
    pub ended: Option<String>,
}

impl Drop for Feeding {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The watch: what is fed, and the wait for the next endpoint when watching the newest.
#[derive(Default)]
pub(super) struct Watch {
    pub feed: Option<Feeding>,
    /// Watching whichever endpoint is newest, and the next when it ends.
    pub newest: bool,
    /// Waiting for a live endpoint to appear: when it was last looked for.
    pub waiting: Option<Instant>,
}

impl Watch {
    /// Watches `what` (a control endpoint or a session log).
    pub fn open(what: &Path) -> anyhow::Result<Watch> {
        Ok(Watch {
            feed: Some(feed(what)?),
            ..Watch::default()
        })
    }

    /// Waits for an endpoint to answer in the default folder (looked for at most every
    /// [`LOOK_EVERY`]), and the next when it ends.
    pub fn newest() -> Watch {
        Watch {
            newest: true,
            waiting: Some(Instant::now() - LOOK_EVERY),
            ..Watch::default()
        }
    }

    /// Sends a command to the proxy behind the endpoint; its answer comes on the feed.
    pub fn send(&mut self, command: &Value) -> Result<(), String> {
        use std::io::Write;
        let Some(feed) = &mut self.feed else {
            return Err("watching nothing: w watches an endpoint".into());
        };
        let Some(stream) = &mut feed.commands else {
            return Err(
                "a session log takes no commands: watch a proxy's endpoint to hold calls".into(),
            );
        };
        if feed.ended.is_some() {
            return Err("the endpoint has closed".into());
        }
        writeln!(stream, "{command}").map_err(|e| format!("cannot reach the endpoint: {e}"))
    }

    /// Looks for a live endpoint when waiting for one, and watches it when found.
    fn look_for_endpoint(&mut self) -> bool {
        let Some(last) = self.waiting else {
            return false;
        };
        if last.elapsed() < LOOK_EVERY {
            return false;
        }
        self.waiting = Some(Instant::now());
        let Some(found) = crate::mcp::control::live_endpoints().into_iter().next() else {
            return false;
        };
        // An endpoint that closes between the look and the connect is looked for again.
        match feed(&found) {
            Ok(feeding) => {
                self.feed = Some(feeding);
                self.waiting = None;
                true
            }
            Err(_) => false,
        }
    }

    /// Takes what the feed sent, up to `max` lines, handing each line to `line`. True
    /// when anything came (a line, or the feed's end), or an endpoint was found.
    pub fn drain(&mut self, max: usize, mut line: impl FnMut(&[u8])) -> bool {
        let found = self.look_for_endpoint();
        let Some(feed) = &mut self.feed else {
            return found;
        };
        let mut any = false;
        for _ in 0..max {
            match feed.rx.try_recv() {
                Ok(Fed::Line(text)) => {
                    line(&text);
                    any = true;
                }
                Ok(Fed::Ended(why)) => {
                    feed.ended = Some(why);
                    if self.newest {
                        self.waiting = Some(Instant::now());
                    }
                    any = true;
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    if feed.ended.is_none() {
                        feed.ended = Some("the feed stopped".into());
                        if self.newest {
                            self.waiting = Some(Instant::now());
                        }
                        any = true;
                    }
                    break;
                }
            }
        }
        any
    }
}

/// Starts the thread reading `what`.
fn feed(what: &Path) -> anyhow::Result<Feeding> {
    let (tx, rx) = std::sync::mpsc::channel();
    let stop = Arc::new(AtomicBool::new(false));
    let opened = crate::mcp::control::open_feed(what, tx, stop.clone())?;
    Ok(Feeding {
        what: what.to_path_buf(),
        rx,
        stop,
        commands: opened.commands,
        ended: None,
    })
}
