//! The memory handle store's limit is the memory it really takes: thousands of results
//! of about 100 KB stored into a 16 MB store leave the process's resident memory within
//! one and a half times the limit of where it started.
//!
//! Alone in its test binary, so that no other test's memory is counted.

use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use serde_json::{Value, json};
use structs_console::store::{HandleMeta, HandleStore, MemoryStore};

/// This process's resident memory, in bytes.
fn rss() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let kb: usize = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS");
    kb * 1024
}

/// A result shaped like a page of the chain's structs, about 100 KB of JSON: many small
/// objects of short strings, as real results are.
fn result(n: usize) -> Value {
    let structs: Vec<Value> = (0..270)
        .map(|i| {
            json!({
                "id": format!("5-{}", n * 1000 + i),
                "index": (n * 1000 + i).to_string(),
                "type": ((i % 22) + 1).to_string(),
                "creator": format!("structs1{:038}", n + i),
                "owner": format!("1-{}", i % 24 + 1),
                "locationType": "planet",
                "locationId": format!("2-{}", i % 24 + 1),
                "operatingAmbit": "land",
                "slot": (i % 4).to_string(),
                "structAttributes": {
                    "health": "3", "status": "6", "blockStartBuild": "120000",
                    "blockStartOreMine": "0", "blockStartOreRefine": "0",
                    "protectedStructIndex": "0", "isMaterialized": true, "isBuilt": true
                }
            })
        })
        .collect();
    json!({"Struct": structs, "pagination": {"next_key": null, "total": "270"}})
}

#[tokio::test(flavor = "current_thread")]
async fn the_memory_store_takes_about_its_limit_of_memory() {
    const LIMIT: usize = 16 << 20;
    const RESULTS: usize = 2_500;
    let store = MemoryStore::with_limit(LIMIT);
    let t0: DateTime<Utc> = "2026-11-21T12:00:00Z".parse().unwrap();
    let size = serde_json::to_vec(&result(0)).unwrap().len();
    assert!(
        (80_000..130_000).contains(&size),
        "a result is {size} bytes"
    );
    // Warm the allocator with a result made and dropped.
    drop(result(0));
    let before = rss();
    for n in 0..RESULTS {
        let data = result(n);
        let meta = HandleMeta {
            handle: format!("structs:struct:1:{n:08x}"),
            tool: "structs_list_structs".into(),
            size_bytes: serde_json::to_vec(&data).unwrap().len(),
            rows: 270,
            created: t0 + Duration::seconds(n as i64),
            expires: t0 + Duration::seconds(3_600 + n as i64),
            hits: 0,
            owner: None,
        };
        store.put(meta, Arc::new(data)).await.expect("stored");
    }
    let held = store.bytes();
    assert!(
        held <= LIMIT && held > LIMIT - 2 * size,
        "{held} bytes held"
    );
    let grown = rss().saturating_sub(before);
    println!(
        "{RESULTS} results of {size} bytes into a {} MB store: {} MB of JSON held, resident \
         memory grew {:.1} MB ({:.2}x the limit)",
        LIMIT >> 20,
        held >> 20,
        grown as f64 / (1 << 20) as f64,
        grown as f64 / LIMIT as f64
    );
    assert!(
        grown <= LIMIT * 3 / 2,
        "resident memory grew {grown} bytes for a {LIMIT}-byte store"
    );
    // What is held still reads back whole.
    let last = format!("structs:struct:1:{:08x}", RESULTS - 1);
    let got = store
        .get(&last, t0 + Duration::seconds(RESULTS as i64))
        .await
        .unwrap()
        .expect("the newest is held");
    assert_eq!(*got.data, result(RESULTS - 1));
}
