//! A live feed of a session log's lines: what a [`Recorder`](super::Recorder) writes,
//! handed as it is written to whoever watches (the control endpoint's watchers), with
//! the newest lines kept so that a watcher who attaches late sees the calls before it.
//!
//! Publishing never waits for a watcher. A watcher that falls more than
//! [`FEED_BUFFER`] lines behind misses the oldest of them and is told how many.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::sync::broadcast;

/// The lines a watcher may fall behind before it misses some.
pub const FEED_BUFFER: usize = 4_096;

/// The newest lines kept for a watcher who attaches later.
pub const FEED_BACKLOG: usize = 2_000;

/// One line of the log, its newline included.
pub type Line = Arc<[u8]>;

/// The feed: clone it to publish from several places; every clone is the same feed.
#[derive(Clone)]
pub struct Feed {
    inner: Arc<Inner>,
}

struct Inner {
    tx: broadcast::Sender<Line>,
    backlog: Mutex<VecDeque<Line>>,
}

impl Default for Feed {
    fn default() -> Self {
        Feed::new()
    }
}

impl Feed {
    pub fn new() -> Feed {
        let (tx, _) = broadcast::channel(FEED_BUFFER);
        Feed {
            inner: Arc::new(Inner {
                tx,
                backlog: Mutex::new(VecDeque::with_capacity(64)),
            }),
        }
    }

    /// Hands `line` (a whole line, its newline included) to every watcher and keeps it
    /// in the backlog.
    pub fn publish(&self, line: &[u8]) {
        let line: Line = Arc::from(line);
        // Under the backlog's lock, so that a watcher attaching now sees each line
        // once: either in the backlog or from the channel.
        let mut backlog = self.lock();
        if backlog.len() == FEED_BACKLOG {
            backlog.pop_front();
        }
        backlog.push_back(line.clone());
        let _ = self.inner.tx.send(line);
    }

    /// The lines kept so far, and a receiver of every line published after them.
    pub fn watch(&self) -> (Vec<Line>, broadcast::Receiver<Line>) {
        let backlog = self.lock();
        let rx = self.inner.tx.subscribe();
        (backlog.iter().cloned().collect(), rx)
    }

    /// How many watch now.
    pub fn watchers(&self) -> usize {
        self.inner.tx.receiver_count()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Line>> {
        self.inner.backlog.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_late_watcher_sees_the_backlog_then_each_new_line_once() {
        let feed = Feed::new();
        feed.publish(b"one\n");
        feed.publish(b"two\n");
        let (backlog, mut rx) = feed.watch();
        assert_eq!(backlog.len(), 2);
        assert_eq!(&*backlog[0], b"one\n");
        feed.publish(b"three\n");
        assert_eq!(&*rx.recv().await.unwrap(), b"three\n");
        assert!(rx.try_recv().is_err());
        assert_eq!(feed.watchers(), 1);
    }

    #[tokio::test]
    async fn the_backlog_keeps_the_newest_lines() {
        let feed = Feed::new();
        for i in 0..FEED_BACKLOG + 5 {
            feed.publish(format!("{i}\n").as_bytes());
        }
        let (backlog, _rx) = feed.watch();
        assert_eq!(backlog.len(), FEED_BACKLOG);
        assert_eq!(&*backlog[0], b"5\n");
    }

    #[tokio::test]
    async fn a_watcher_far_behind_is_told_how_many_it_missed() {
        let feed = Feed::new();
        let (_, mut rx) = feed.watch();
        for i in 0..FEED_BUFFER + 10 {
            feed.publish(format!("{i}\n").as_bytes());
        }
        match rx.recv().await {
            Err(broadcast::error::RecvError::Lagged(n)) => assert_eq!(n, 10),
            other => panic!("expected a lag, got {other:?}"),
        }
    }
}
