//! The console in a real pseudo-terminal: what is written to stderr while it runs (here
//! the proof-of-work engine's log line, which the first search writes) never reaches
//! the terminal as it came; the status line tells of it instead.

use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;

const BIN: &str = env!("CARGO_BIN_EXE_structs-console");

/// A session log of one proof-of-work call, quick on any machine.
fn pow_log(path: &std::path::Path) {
    let args = json!({"action_type": "struct_build_complete", "entity_id": "5-1",
        "block_start": 10, "age": 1, "difficulty": 1});
    let v = structs_console::record::VERSION;
    let request = json!({"v": v, "ts": "2026-11-21T10:00:00.000000Z", "session": "s-pty",
        "seq": 1, "type": "request", "call": 1, "tool": "structs_calculate_proof_of_work",
        "arguments": args, "source": "sim", "block_height": 120000});
    let response = json!({"v": v, "ts": "2026-11-21T10:00:01.000000Z", "session": "s-pty",
        "seq": 2, "type": "response", "call": 1, "tool": "structs_calculate_proof_of_work",
        "duration_ms": 1.0, "result": {"found": true}, "source": "sim", "block_height": 120000});
    std::fs::write(path, format!("{request}\n{response}\n")).unwrap();
}

#[test]
fn stderr_never_reaches_the_screen_while_the_console_runs() {
    let dir = std::env::temp_dir().join(format!("structs-pty-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("pow.jsonl");
    pow_log(&log);

    let (mut master, mut slave) = (-1, -1);
    let size = libc::winsize {
        ws_row: 30,
        ws_col: 120,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: openpty fills the two descriptors it is given.
    let made = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    assert_eq!(made, 0, "a pseudo-terminal");
    // SAFETY: the two descriptors are ours from here.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    let mut child = unsafe {
        Command::new(BIN)
            .args(["replay"])
            .arg(&log)
            .args(["--paused"])
            .env("TERM", "xterm-256color")
            .env_remove("XDG_RUNTIME_DIR")
            .stdin(Stdio::from(slave.try_clone().unwrap()))
            .stdout(Stdio::from(slave.try_clone().unwrap()))
            .stderr(Stdio::from(slave))
            // The pty as its controlling terminal, as a shell's would be.
            .pre_exec(|| {
                libc::setsid();
                libc::ioctl(0, libc::TIOCSCTTY as _, 0);
                Ok(())
            })
            .spawn()
            .unwrap()
    };
    let screen = Arc::new(Mutex::new(Vec::<u8>::new()));
    let mut reader = std::fs::File::from(master.try_clone().unwrap());
    let sink = screen.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock().unwrap().extend_from_slice(&buf[..n]);
        }
    });
    let mut keys = std::fs::File::from(master);
    let text =
        |screen: &Arc<Mutex<Vec<u8>>>| String::from_utf8_lossy(&screen.lock().unwrap()).to_string();
    let wait_for = |what: &str, secs: u64| {
        let start = Instant::now();
        while !text(&screen).contains(what) && start.elapsed() < Duration::from_secs(secs) {
            std::thread::sleep(Duration::from_millis(50));
        }
        text(&screen).contains(what)
    };
    assert!(
        wait_for("Replay", 30),
        "the console drew: {}",
        text(&screen)
    );
    // Every call again: the search runs, and the engine logs its line on stderr.
    keys.write_all(b"a").unwrap();
    let told = wait_for("kept off the screen", 30);
    keys.write_all(b"q").unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let out = screen.lock().unwrap().clone();
    let shown = String::from_utf8_lossy(&out).to_string();
    assert!(told, "the status line told of the line on stderr: {shown}");
    // The engine's line reached the screen only inside the status line: never as a
    // line of its own, ended by a newline before the console drew again.
    let needle = b"structs_pow::backend";
    let mut at = 0;
    let mut seen = 0;
    while let Some(i) = out[at..].windows(needle.len()).position(|w| w == needle) {
        let from = at + i;
        let rest = &out[from..(from + 400).min(out.len())];
        let upto_escape = rest.split(|b| *b == 0x1b).next().unwrap_or(&[]);
        assert!(
            !upto_escape.contains(&b'\n'),
            "a line written over the screen: {:?}",
            String::from_utf8_lossy(rest)
        );
        seen += 1;
        at = from + needle.len();
    }
    // (Whether the engine's line shows in the status line whole in the bytes depends
    // on how the terminal's cells were redrawn; `told` read it off the screen.)
    let _ = seen;
    let _ = std::fs::remove_dir_all(&dir);
}
