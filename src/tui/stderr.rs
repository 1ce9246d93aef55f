//! The terminal is the console's alone: while it runs, file descriptor 2 is a pipe of
//! its own, so nothing else writes over the screen. That covers this process's logs and
//! what native libraries write straight to fd 2 (a Vulkan loader's
//! `XDG_RUNTIME_DIR is invalid`, a driver's warnings).
//!
//! A thread reads the pipe a line at a time. Each line goes to the log file when one
//! was given (`--log-file`), and the last [`KEEP`] are kept for the console to show;
//! longer lines are cut at [`MAX_LINE`]. Dropping the [`Capture`] (or
//! [`Capture::finish`]), or a panic (through [`restore_now`], which the console's panic
//! hook calls first), puts the saved fd 2 back, so the panic's message reaches the
//! terminal.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::{FromRawFd, RawFd};
use std::path::Path;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};

/// Lines kept for the console.
pub const KEEP: usize = 200;

/// The most bytes of one line kept; the rest of it is dropped.
pub const MAX_LINE: usize = 4096;

/// The saved fd 2 while a capture runs, -1 otherwise.
static SAVED: AtomicI32 = AtomicI32::new(-1);

/// What arrived on fd 2 while the console ran.
#[derive(Debug, Default)]
pub struct Lines {
    /// The latest lines, oldest first.
    pub kept: VecDeque<String>,
    /// Every line that arrived, kept or not.
    pub total: u64,
}

/// fd 2 taken over; put back on drop.
pub struct Capture {
    lines: Arc<Mutex<Lines>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Capture {
    /// Points fd 2 at a new pipe and starts reading it, appending each line to `file`
    /// when given.
    ///
    /// # Errors
    ///
    /// When the pipe, the saved copy of fd 2 or the file cannot be made; fd 2 is then
    /// as it was.
    pub fn start(file: Option<&Path>) -> std::io::Result<Capture> {
        let mut log = match file {
            Some(path) => Some(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)?,
            ),
            None => None,
        };
        let mut fds: [RawFd; 2] = [-1, -1];
        // SAFETY: pipe(2) fills the two descriptors it is given; dup and dup2 act on
        // descriptors this process owns, and every failure is checked.
        unsafe {
            // Neither end, nor the saved copy, goes to a program the console starts.
            if libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            let saved = libc::fcntl(2, libc::F_DUPFD_CLOEXEC, 0);
            if saved < 0 {
                let e = std::io::Error::last_os_error();
                libc::close(fds[0]);
                libc::close(fds[1]);
                return Err(e);
            }
            if libc::dup2(fds[1], 2) < 0 {
                let e = std::io::Error::last_os_error();
                libc::close(fds[0]);
                libc::close(fds[1]);
                libc::close(saved);
                return Err(e);
            }
            // fd 2 (which dup2 leaves inheritable, as stderr is) is now the pipe's
            // write end.
            libc::close(fds[1]);
            SAVED.store(saved, Ordering::SeqCst);
        }
        // SAFETY: the read end is ours alone from here.
        let read = unsafe { File::from_raw_fd(fds[0]) };
        let lines = Arc::new(Mutex::new(Lines::default()));
        let sink = lines.clone();
        let reader = std::thread::Builder::new()
            .name("stderr".into())
            .spawn(move || {
                let mut input = BufReader::new(read);
                let mut buf = Vec::new();
                loop {
                    buf.clear();
                    match input.read_until(b'\n', &mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(_) => {}
                    }
                    if let Some(file) = log.as_mut() {
                        let _ = file.write_all(&buf);
                    }
                    buf.truncate(MAX_LINE);
                    let line = String::from_utf8_lossy(&buf).trim_end().to_string();
                    let mut lines = sink.lock().unwrap_or_else(|e| e.into_inner());
                    lines.total += 1;
                    if lines.kept.len() == KEEP {
                        lines.kept.pop_front();
                    }
                    lines.kept.push_back(line);
                }
            })?;
        Ok(Capture {
            lines,
            reader: Some(reader),
        })
    }

    /// What has arrived so far.
    pub fn lines(&self) -> Arc<Mutex<Lines>> {
        self.lines.clone()
    }
}

/// Puts the saved fd 2 back, if a capture holds it; the pipe's reader then ends.
/// Safe to call more than once, and from a panic hook.
pub fn restore_now() {
    let saved = SAVED.swap(-1, Ordering::SeqCst);
    if saved >= 0 {
        // SAFETY: `saved` is the copy of fd 2 this module made and nothing else closes.
        unsafe {
            libc::dup2(saved, 2);
            libc::close(saved);
        }
    }
}

impl Capture {
    /// Puts fd 2 back and waits, at most `wait`, for the reader to take what was
    /// written before: it ends when the pipe's last write end closes, which a program
    /// the console started and that still runs may hold open.
    pub fn finish(mut self, wait: std::time::Duration) {
        restore_now();
        let Some(reader) = self.reader.take() else {
            return;
        };
        let deadline = std::time::Instant::now() + wait;
        while !reader.is_finished() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        restore_now();
    }
}
