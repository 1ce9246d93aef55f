//! `structs-console replay LOG --check ARGS`, run as a user runs it.

use std::path::Path;

/// Its exit code and what it printed (standard output, then standard error).
pub fn check(log: &Path, extra: &[&str]) -> (i32, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_structs-console"))
        .arg("replay")
        .arg(log)
        .arg("--check")
        .args(extra)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}
