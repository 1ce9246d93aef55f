//! The fuzz targets' checks (`fuzz/checks.rs`), run in `cargo test` on every seed in
//! `fuzz/seeds/TARGET/` and every input that once failed, kept in
//! `fuzz/regressions/TARGET/`. A crash `fuzz/run` finds is copied there with the fix,
//! so it stays fixed.

#[path = "../fuzz/checks.rs"]
mod checks;

use std::path::Path;

/// Runs `check` on every file under `fuzz/seeds/TARGET` and `fuzz/regressions/TARGET`,
/// and returns how many there were.
fn replay(target: &str, check: fn(&[u8])) -> usize {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut n = 0;
    for dir in ["seeds", "regressions"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir).join(target)) else {
            continue;
        };
        let mut files: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
        files.sort();
        for file in files {
            let data = std::fs::read(&file).expect("read an input");
            let outcome = std::panic::catch_unwind(|| check(&data));
            assert!(outcome.is_ok(), "{} fails its check", file.display());
            n += 1;
        }
    }
    n
}

#[test]
fn entity_id() {
    assert!(replay("entity_id", checks::entity_id) >= 3);
}

#[test]
fn step_reference() {
    assert!(replay("step_reference", checks::step_reference) >= 2);
}

#[test]
fn front_matter() {
    assert!(replay("front_matter", checks::front_matter) >= 2);
}

#[test]
fn jsonrpc_stdin() {
    assert!(replay("jsonrpc_stdin", checks::jsonrpc_stdin) >= 2);
}

#[test]
fn response_limit() {
    assert!(replay("response_limit", checks::response_limit) >= 2);
}

/// Inputs at the edges of what the checks guard: a result far over the limit goes
/// through the builder, and parameter strings whose references do not parse.
#[test]
fn the_checks_hold_at_their_edges() {
    let oversized = serde_json::json!({"value": {"rows": (0..400)
        .map(|i| serde_json::json!({"id": format!("5-{i}"), "blob": "z".repeat(200)}))
        .collect::<Vec<_>>()}});
    // Whole, this is far over the limit; through the builder it must come out under it.
    let bytes = serde_json::to_vec(&oversized).unwrap();
    assert!(bytes.len() > 25_600 * 3);
    checks::response_limit(&bytes);
    // A syntax error's offset is inside the parameter string.
    checks::step_reference(b"${step[0].data\n");
    checks::step_reference(b"a ${step[x]} b\n");
}
