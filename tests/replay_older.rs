//! A session recorded before the console followed the chain's own shapes (log version
//! 2: `username`, a status word, a fleet's `planetId`, ids on infusions and addresses,
//! …) still replays: `replay --check` reads each answer in today's shapes, names the
//! change of shape once, and still reports what the game did differently.
//!
//! `tests/data/older-shapes.jsonl` is such a log: eleven calls written as the older
//! renderer wrote them (`tests/data/age_log.py` made it from a recording, following
//! that renderer's code).

mod support;

use std::path::Path;

fn replay(extra: &[&str]) -> (i32, String) {
    let log = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/older-shapes.jsonl");
    support::replay::check(&log, extra)
}

#[test]
fn an_older_log_replays_and_names_the_change_of_shape_once() {
    let (code, out) = replay(&["--paused"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("11 the same, 0 different"), "{out}");
    assert!(
        out.contains("recorded in older chain shapes (11 calls read in today's"),
        "{out}"
    );
    for change in [
        "Player.username is Player.name",
        "structAttributes.status is the chain's bitmask, not a word",
        "a fleet's planetId is locationType and locationId",
        "infusions and addresses carry no id",
        "Agreement.consumerId is Agreement.owner",
    ] {
        assert_eq!(out.matches(change).count(), 1, "{change} once: {out}");
    }
}

#[test]
fn an_older_log_still_shows_what_the_game_did_differently() {
    let (code, out) = replay(&["--paused", "--seed", "7"]);
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("0 the same, 11 different"), "{out}");
    // A difference of the game, in today's names.
    assert!(out.contains("~ /player/Player/name:"), "{out}");
    let differences = out
        .lines()
        .filter(|l| l.starts_with("  ~") || l.starts_with("  +") || l.starts_with("  -"));
    assert!(
        differences.clone().count() > 11,
        "every call shows its differences: {out}"
    );
    for line in differences {
        assert!(
            !line.contains("username"),
            "an older name in a difference: {line}"
        );
    }
}
