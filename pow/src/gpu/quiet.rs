//! What a GPU driver writes straight to file descriptor 2 while it is opened (a Vulkan
//! loader's or Mesa's `error: XDG_RUNTIME_DIR is invalid or not set in the
//! environment.`, printed on every machine with no desktop session) is taken and
//! logged at debug level, instead of reaching a terminal or an agent's log as an error.
//!
//! fd 2 is the process's, so for the few milliseconds the driver is opened, what any
//! other thread writes there is taken too, and logged the same way.

#[cfg(target_os = "linux")]
use std::io::Read;
#[cfg(target_os = "linux")]
use std::os::fd::{FromRawFd, RawFd};

/// The most bytes kept of what was written; the rest is dropped (the pipe does not
/// block the writer: a write that finds it full fails).
#[cfg(target_os = "linux")]
const KEPT: usize = 64 * 1024;

/// Runs `f` with fd 2 pointed at a pipe, then puts fd 2 back and logs each line that
/// arrived. When fd 2 cannot be taken, `f` runs as it is.
#[cfg(target_os = "linux")]
pub(crate) fn quietly<T>(f: impl FnOnce() -> T) -> T {
    let mut fds: [RawFd; 2] = [-1, -1];
    // SAFETY: pipe2 fills the two descriptors it is given; dup and dup2 act on
    // descriptors this process owns, and every failure is checked.
    let saved = unsafe {
        if libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) != 0 {
            return f();
        }
        let saved = libc::fcntl(2, libc::F_DUPFD_CLOEXEC, 0);
        if saved < 0 || libc::dup2(fds[1], 2) < 0 {
            libc::close(fds[0]);
            libc::close(fds[1]);
            if saved >= 0 {
                libc::close(saved);
            }
            return f();
        }
        saved
    };
    let out = f();
    // SAFETY: `saved` is the copy made above; the pipe's ends are ours.
    let read = unsafe {
        libc::dup2(saved, 2);
        libc::close(saved);
        libc::close(fds[1]);
        std::fs::File::from_raw_fd(fds[0])
    };
    let mut said = Vec::new();
    let _ = read.take(KEPT as u64).read_to_end(&mut said);
    for line in String::from_utf8_lossy(&said).lines() {
        let line = line.trim();
        if !line.is_empty() {
            tracing::debug!("the GPU driver wrote on stderr: {line}");
        }
    }
    out
}

/// Elsewhere `f` runs as it is.
#[cfg(not(target_os = "linux"))]
pub(crate) fn quietly<T>(f: impl FnOnce() -> T) -> T {
    f()
}
