//! While the console runs, fd 2 is its own: what anything writes there (a log line, a
//! native library writing to the descriptor directly) goes to the log file and to the
//! console's status line, never over the screen; and fd 2 is back when it ends.
//!
//! One test, in a process of its own: it takes this process's fd 2.

use std::io::Write;
use std::time::{Duration, Instant};

use structs_console::tui::stderr::Capture;

fn write_fd2(text: &str) {
    // SAFETY: writing a buffer we own to fd 2, as a C library would.
    unsafe {
        libc::write(2, text.as_ptr().cast(), text.len());
    }
}

#[test]
fn what_is_written_to_fd_2_goes_to_the_log_and_the_console_not_the_terminal() {
    let dir = std::env::temp_dir().join(format!("structs-stderr-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let terminal = dir.join("terminal");
    let log = dir.join("console.log");
    // A file stands in for the terminal on fd 2.
    let screen = std::fs::File::create(&terminal).unwrap();
    // SAFETY: descriptors this test owns; the real fd 2 is put back at the end.
    let real = unsafe { libc::dup(2) };
    unsafe {
        libc::dup2(std::os::fd::AsRawFd::as_raw_fd(&screen), 2);
    }

    let capture = Capture::start(Some(&log)).expect("fd 2 taken");
    let lines = capture.lines();
    write_fd2("error: XDG_RUNTIME_DIR is invalid or not set in the environment.\n");
    std::io::stderr()
        .write_all(b" INFO structs_pow::backend: proof-of-work runs on the CPU\n")
        .unwrap();
    let start = Instant::now();
    while lines.lock().unwrap().total < 2 && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(10));
    }
    capture.finish(Duration::from_secs(2));
    write_fd2("after the console\n");

    // SAFETY: as above.
    unsafe {
        libc::dup2(real, 2);
        libc::close(real);
    }
    let kept: Vec<String> = lines.lock().unwrap().kept.iter().cloned().collect();
    assert_eq!(
        kept,
        [
            "error: XDG_RUNTIME_DIR is invalid or not set in the environment.",
            " INFO structs_pow::backend: proof-of-work runs on the CPU"
        ]
    );
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(logged.contains("XDG_RUNTIME_DIR"), "{logged}");
    assert!(logged.contains("structs_pow::backend"), "{logged}");
    assert_eq!(
        std::fs::read_to_string(&terminal).unwrap(),
        "after the console\n",
        "the terminal saw nothing while the console ran, and fd 2 is back after"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
