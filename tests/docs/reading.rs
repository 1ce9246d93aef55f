//! Reading a docs root: front matter, types, relations, traversal, sync and the
//! warnings for files that are wrong or go away.

use super::*;

#[tokio::test]
async fn front_matter_present_absent_and_malformed() {
    let docs = world();
    docs.write(
        "broken.md",
        "---\ntitle: [never closed\ntags: x\n---\n# Broken but readable\n\nThe unicorn body text.\n",
    );
    docs.write("unclosed.md", "---\ntitle: no end\n\nThe zebra body.\n");
    let core = docs.core();
    let sync = ok(&core, "structs_docs_sync", json!({})).await;
    assert_eq!(sync["docs"], 9);
    let warnings = sync["warnings"].as_array().unwrap();
    let front: Vec<&Value> = warnings
        .iter()
        .filter(|w| w["kind"] == "front_matter")
        .collect();
    assert_eq!(front.len(), 2, "{warnings:#?}");
    assert!(
        front.iter().any(|w| w["file"] == "broken.md"
            && w["message"].as_str().unwrap().contains("not valid YAML"))
    );
    assert!(front.iter().any(|w| w["file"] == "unclosed.md"));

    // The malformed doc is still indexed, titled by its heading, and searchable.
    let doc = ok(&core, "structs_docs_get", json!({"doc_id": "broken"})).await;
    assert_eq!(doc["title"], "Broken but readable");
    assert!(doc["warnings"].as_array().unwrap().len() == 1);
    let hits = ok(&core, "structs_docs_search", json!({"query": "unicorn"})).await;
    assert_eq!(ids(&hits["hits"], "doc_id"), ["broken"]);
    let hits = ok(&core, "structs_docs_search", json!({"query": "zebra"})).await;
    assert_eq!(ids(&hits["hits"], "doc_id"), ["unclosed"]);

    // Present: the fields as written. Absent: heading for the title, first paragraph
    // for the summary.
    let mining = ok(
        &core,
        "structs_docs_get",
        json!({"doc_id": "knowledge/mechanics/mining"}),
    )
    .await;
    assert_eq!(mining["title"], "Mining ore");
    assert_eq!(mining["summary"], "How extractors pull ore from a planet.");
    assert_eq!(mining["tags"], json!(["ore", "mining"]));
    assert!(!mining["content"].as_str().unwrap().contains("depends_on"));
    let lore = ok(&core, "structs_docs_get", json!({"doc_id": "lore/origins"})).await;
    assert_eq!(lore["title"], "Where structs came from");
    assert_eq!(
        lore["summary"],
        "Long ago the machines woke up and mined the first ore."
    );
    assert!(lore.get("warnings").is_none());
}

#[tokio::test]
async fn types_come_from_front_matter_or_folder() {
    let docs = world();
    let core = docs.core();
    let get = |id: &'static str| {
        let core = core.clone();
        async move { ok(&core, "structs_docs_get", json!({"doc_id": id})).await }
    };
    for (id, ty, inferred) in [
        ("knowledge/mechanics/mining", "mechanics", true),
        ("schemas/player", "schema", true),
        ("lore/origins", "lore", true),
        ("api/queries", "reference", false),
    ] {
        let d = get(id).await;
        assert_eq!(d["type"], ty, "{id}");
        assert_eq!(d["type_inferred"], inferred, "{id}");
    }
    let index = ok(&core, "structs_docs_get_index", json!({})).await;
    let categories = ids(&index["categories"], "category");
    assert_eq!(categories, ["lore", "mechanics", "reference", "schema"]);
    let mechanics = ok(
        &core,
        "structs_docs_get_index",
        json!({"category": "Mechanics"}),
    )
    .await;
    assert_eq!(mechanics["count"], 4);
    let e = err(
        &core,
        "structs_docs_get_index",
        json!({"category": "poetry"}),
    )
    .await;
    assert_eq!(e["code"], "VALIDATION_INVALID_VALUE");
    assert!(e["message"].as_str().unwrap().contains("mechanics"));
}

#[tokio::test]
async fn relations_are_normalised_and_unknown_ones_refused() {
    let docs = world();
    let core = docs.core();
    // `see-also` in the file reads as see_also.
    let combat = ok(
        &core,
        "structs_docs_list_references",
        json!({"source_kind": "doc", "source_id": "knowledge/mechanics/combat"}),
    )
    .await;
    let power = &combat["references"].as_array().unwrap()[0];
    assert_eq!(power["target_doc_id"], "knowledge/mechanics/power");
    assert_eq!(power["relation"], "see_also");
    assert_eq!(power["origin"], "explicit");
    let up = ok(
        &core,
        "structs_docs_upsert_link",
        json!({"source_kind": "entityKind", "source_id": "Planets", "target_doc_id": "lore/origins", "relation": "historyOf"}),
    )
    .await;
    assert_eq!(up["link"]["relation"], "history_of");
    assert_eq!(up["source"]["id"], "planet");
    let e = err(
        &core,
        "structs_docs_upsert_link",
        json!({"source_kind": "entity", "source_id": "1-1", "target_doc_id": "lore/origins", "relation": "adores"}),
    )
    .await;
    assert_eq!(e["code"], "VALIDATION_INVALID_VALUE");
    assert_eq!(e["details"]["field"], "relation");
    assert!(
        e["details"]["reason"]
            .as_str()
            .unwrap()
            .contains("depends_on")
    );
    let e = err(
        &core,
        "structs_docs_upsert_link",
        json!({"source_kind": "scene", "source_id": "1", "target_doc_id": "lore/origins"}),
    )
    .await;
    assert_eq!(e["details"]["field"], "source_kind");
}

#[tokio::test]
async fn traversal_over_a_cycle_visits_each_doc_once() {
    let docs = world();
    let core = docs.core();
    // mining → power → combat → power (a cycle), mining ↔ refining (inferred both ways).
    let r = ok(
        &core,
        "structs_docs_get_related",
        json!({"doc_id": "knowledge/mechanics/mining", "depth": 3, "direction": "out"}),
    )
    .await;
    let got = ids(&r["related"], "doc_id");
    assert_eq!(
        got,
        [
            "knowledge/mechanics/power",
            "knowledge/mechanics/refining",
            "knowledge/mechanics/combat"
        ]
    );
    assert_eq!(r["related"][2]["depth"], 2);
    assert_eq!(r["related"][2]["via"], "knowledge/mechanics/power");
    assert_eq!(r["truncated"], false);
    // By resource URI, incoming links only.
    let r = ok(
        &core,
        "structs_docs_get_related",
        json!({"resource_uri": "structs://docs/knowledge/mechanics/power", "direction": "in"}),
    )
    .await;
    let mut got = ids(&r["related"], "doc_id");
    got.sort();
    assert_eq!(
        got,
        ["knowledge/mechanics/combat", "knowledge/mechanics/mining"]
    );
    // A bounded walk says it stopped.
    let r = ok(
        &core,
        "structs_docs_get_related",
        json!({"doc_id": "knowledge/mechanics/mining", "depth": 3, "limit": 1}),
    )
    .await;
    assert_eq!(r["count"], 1);
    assert_eq!(r["truncated"], true);
}

#[tokio::test]
async fn one_hop_expansion_has_no_loops() {
    let docs = world();
    let core = docs.core();
    let power = ok(
        &core,
        "structs_docs_get",
        json!({"doc_id": "knowledge/mechanics/power", "include_related": true}),
    )
    .await;
    // combat is linked both ways (power → combat, combat → power): listed once.
    let related = ids(&power["related"], "doc_id");
    assert_eq!(
        related,
        ["knowledge/mechanics/combat", "knowledge/mechanics/mining"]
    );
    assert!(!related.contains(&"knowledge/mechanics/power".to_string()));
    assert!(power["related"][0].get("content").is_none());
    assert_eq!(power["related"][0]["direction"], "out");
    assert_eq!(power["related"][1]["relation"], "depends_on");
    assert_eq!(power["related"][1]["direction"], "in");
    // Without include_related there is no expansion.
    let plain = ok(
        &core,
        "structs_docs_get",
        json!({"doc_id": "knowledge/mechanics/power"}),
    )
    .await;
    assert!(plain.get("related").is_none());
    assert_eq!(plain["links"]["in_total"], 2);
    assert_eq!(plain["informs"][0]["label"], "entity kind substation");
}

#[tokio::test]
async fn sync_is_idempotent_and_sees_file_changes() {
    let docs = world();
    let core = docs.core();
    let first = ok(&core, "structs_docs_sync", json!({})).await;
    assert_eq!(first["added_total"], 7);
    let second = ok(&core, "structs_docs_sync", json!({})).await;
    for key in ["added_total", "removed_total", "changed_total"] {
        assert_eq!(second[key], 0, "{key}");
    }
    for key in ["docs", "explicit_links", "inferred_links", "warnings"] {
        assert_eq!(first[key], second[key], "{key}");
    }
    assert_eq!(
        second["links_before"],
        first["explicit_links"].as_u64().unwrap() + first["inferred_links"].as_u64().unwrap()
    );
    // Files changed outside the tools: one edited, one removed, one added.
    docs.write(
        "knowledge/mechanics/refining.md",
        "---\ntitle: Refining, revised\n---\nNew text.\n",
    );
    std::fs::remove_file(docs.path("schemas/player.md")).unwrap();
    docs.write(
        "guides/start.md",
        "# Start\n\nRead [mining](../knowledge/mechanics/mining.md).\n",
    );
    let third = ok(&core, "structs_docs_sync", json!({})).await;
    assert_eq!(third["added"], json!(["guides/start"]));
    assert_eq!(third["removed"], json!(["schemas/player"]));
    assert_eq!(third["changed"], json!(["knowledge/mechanics/refining"]));
    let r = ok(
        &core,
        "structs_docs_get",
        json!({"doc_id": "knowledge/mechanics/refining"}),
    )
    .await;
    assert_eq!(r["title"], "Refining, revised");
    let e = err(
        &core,
        "structs_docs_get",
        json!({"doc_id": "schemas/player"}),
    )
    .await;
    assert_eq!(e["code"], "RESOURCE_NOT_FOUND");
}

#[tokio::test]
async fn explicit_links_win_over_inferred_ones() {
    let docs = world();
    let core = docs.core();
    // combat's body links to power (inferred related); its front matter says see_also.
    let r = ok(
        &core,
        "structs_docs_list_references",
        json!({"source_kind": "doc", "source_id": "knowledge/mechanics/combat"}),
    )
    .await;
    assert_eq!(r["count"], 1);
    assert_eq!(r["references"][0]["origin"], "explicit");
    assert_eq!(r["references"][0]["relation"], "see_also");
    // refining → mining is only inferred; upserting it makes it explicit.
    let r = ok(
        &core,
        "structs_docs_list_references",
        json!({"source_kind": "doc", "source_id": "knowledge/mechanics/refining"}),
    )
    .await;
    assert_eq!(r["references"][0]["origin"], "inferred");
    let up = ok(
        &core,
        "structs_docs_upsert_link",
        json!({"source_kind": "doc", "source_id": "knowledge/mechanics/refining", "target_doc_id": "knowledge/mechanics/mining", "relation": "depends_on"}),
    )
    .await;
    assert_eq!(up["link"]["outcome"], "updated");
    assert_eq!(up["link"]["previous_origin"], "inferred");
    assert_eq!(up["link"]["previous_relation"], "related");
    // After any number of syncs the explicit relation holds, though the body link stays.
    for _ in 0..2 {
        ok(&core, "structs_docs_sync", json!({})).await;
        let r = ok(
            &core,
            "structs_docs_list_references",
            json!({"source_kind": "doc", "source_id": "knowledge/mechanics/refining"}),
        )
        .await;
        assert_eq!(r["count"], 1);
        assert_eq!(r["references"][0]["origin"], "explicit");
        assert_eq!(r["references"][0]["relation"], "depends_on");
    }
    assert!(
        docs.read("knowledge/mechanics/refining.md")
            .contains("Back to [mining](mining.md).")
    );
}

#[tokio::test]
async fn legacy_spellings_are_read_and_merged_on_write() {
    let docs = TempDocs::new(&[
        (
            "a.md",
            "---\ntitle: A   # the author's comment\nrelated: [b]\nseeAlso:\n  - c\nrelatedDocs: [b]\n---\nBody of a.\n",
        ),
        ("b.md", "# B\n"),
        ("c.md", "# C\n"),
        ("d.md", "# D\n"),
    ]);
    let core = docs.core();
    let r = ok(
        &core,
        "structs_docs_list_references",
        json!({"source_kind": "doc", "source_id": "a"}),
    )
    .await;
    let got: Vec<(String, String)> = r["references"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["target_doc_id"].as_str().unwrap().into(),
                l["relation"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("b".into(), "related".into()),
            ("c".into(), "see_also".into())
        ]
    );
    ok(
        &core,
        "structs_docs_upsert_link",
        json!({"source_kind": "doc", "source_id": "a", "target_doc_id": "d"}),
    )
    .await;
    let text = docs.read("a.md");
    assert_eq!(
        text,
        "---\ntitle: A   # the author's comment\nlinks:\n  - doc: b\n    relation: related\n  - doc: c\n    relation: see_also\n  - doc: d\n    relation: related\n---\nBody of a.\n"
    );
    let fresh = docs.core();
    let r = ok(
        &fresh,
        "structs_docs_list_references",
        json!({"source_kind": "doc", "source_id": "a"}),
    )
    .await;
    assert_eq!(ids(&r["references"], "target_doc_id"), ["b", "c", "d"]);
}

#[tokio::test]
async fn missing_targets_are_warnings() {
    let docs = world();
    docs.write(
        "_links/entity/1-5.meta.yaml",
        "source_kind: entity\nsource_id: 1-5\nlinks:\n  - doc: gone/away\n",
    );
    docs.write("guide.md", "---\nlinks: [ghost]\n---\nSee [nothing](nothing.md) and [mining](knowledge/mechanics/mining.md).\n");
    let core = docs.core();
    let sync = ok(&core, "structs_docs_sync", json!({})).await;
    let missing: Vec<&str> = sync["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["kind"] == "missing_target")
        .map(|w| w["message"].as_str().unwrap())
        .collect();
    assert_eq!(missing.len(), 3, "{missing:?}");
    assert!(missing.iter().any(|m| m.contains("\"gone/away\"")));
    assert!(missing.iter().any(|m| m.contains("\"ghost\"")));
    assert!(missing.iter().any(|m| m.contains("\"nothing\"")));
    let r = ok(
        &core,
        "structs_docs_list_references",
        json!({"source_kind": "doc", "source_id": "guide"}),
    )
    .await;
    assert_eq!(r["count"], 3);
    let exists: Vec<bool> = r["references"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["target_exists"].as_bool().unwrap())
        .collect();
    assert_eq!(exists, [false, false, true]);
    // Walks do not follow them.
    let rel = ok(
        &core,
        "structs_docs_get_related",
        json!({"doc_id": "guide", "direction": "out"}),
    )
    .await;
    assert_eq!(
        ids(&rel["related"], "doc_id"),
        ["knowledge/mechanics/mining"]
    );
    let doc = ok(&core, "structs_docs_get", json!({"doc_id": "guide"})).await;
    assert_eq!(doc["warnings"].as_array().unwrap().len(), 2);
    // A tool never writes a link to a doc that does not exist.
    let e = err(
        &core,
        "structs_docs_upsert_link",
        json!({"source_kind": "entity", "source_id": "1-1", "target_doc_id": "ghost"}),
    )
    .await;
    assert_eq!(e["code"], "RESOURCE_NOT_FOUND");
}

#[tokio::test]
async fn two_files_with_one_doc_id_are_a_warning() {
    let docs = TempDocs::new(&[("a.md", "# First\n"), ("a.md.md", "# Second\n")]);
    let core = docs.core();
    let sync = ok(&core, "structs_docs_sync", json!({})).await;
    assert_eq!(sync["docs"], 1);
    let w = &sync["warnings"][0];
    assert_eq!(w["kind"], "duplicate_doc");
    assert_eq!(w["file"], "a.md.md");
    let doc = ok(&core, "structs_docs_get", json!({"doc_id": "a"})).await;
    assert_eq!(doc["title"], "First");
}

#[tokio::test]
async fn files_that_cannot_be_read_during_sync_are_warnings_and_the_rest_is_served() {
    let docs = world();
    let core = docs.core();
    let first = ok(&core, "structs_docs_sync", json!({})).await;
    let served = first["docs"].as_u64().unwrap();
    // Between two syncs: a file that is not UTF-8, a named pipe (reading it would block
    // for ever), a directory named like a doc, and a link out of the root.
    std::fs::write(docs.path("knowledge/binary.md"), [0xff, 0xfe, 0x00, 0xc3]).unwrap();
    let fifo = docs.path("knowledge/pipe.md");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");
    std::fs::create_dir_all(docs.path("knowledge/folder.md")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", docs.path("knowledge/escape.md")).unwrap();
    let synced = tokio::time::timeout(
        std::time::Duration::from_secs(20),
        ok(&core, "structs_docs_sync", json!({})),
    )
    .await
    .expect("sync does not block on a named pipe");
    assert_eq!(synced["docs"].as_u64().unwrap(), served, "{synced:#}");
    let warnings = synced["warnings"].to_string();
    assert!(warnings.contains("binary.md"), "{warnings}");
    // Nothing outside the root became a doc.
    let e = err(
        &core,
        "structs_docs_get",
        json!({"doc_id": "knowledge/escape"}),
    )
    .await;
    assert_eq!(e["code"], "RESOURCE_NOT_FOUND", "{e}");
    let e = err(
        &core,
        "structs_docs_get",
        json!({"doc_id": "../../etc/passwd"}),
    )
    .await;
    assert!(
        e["code"].as_str().unwrap().starts_with("VALIDATION_"),
        "{e}"
    );
    // The docs already read are still served.
    let r = ok(
        &core,
        "structs_docs_get",
        json!({"doc_id": "knowledge/mechanics/refining"}),
    )
    .await;
    assert!(r["title"].is_string());
}

/// Files deleted and written again while syncs run: a file listed by a sync may be gone
/// by the time it is read. No sync fails, the files nobody touched are always served,
/// and once the churn stops the next sync has every doc back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_deleted_while_syncs_run_never_break_a_sync_or_the_other_docs() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let steady: Vec<(String, String)> = (0..150)
        .map(|i| {
            (
                format!("steady/s{i:03}.md"),
                format!("---\ntitle: Steady {i}\n---\nUntouched text {i}.\n"),
            )
        })
        .collect();
    let churn: Vec<(String, String)> = (0..50)
        .map(|i| {
            (
                format!("churn/c{i:03}.md"),
                format!("---\ntitle: Churn {i}\n---\nComes and goes {i}.\n"),
            )
        })
        .collect();
    let files: Vec<(&str, &str)> = steady
        .iter()
        .chain(&churn)
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let docs = TempDocs::new(&files);
    let core = docs.core();
    assert_eq!(ok(&core, "structs_docs_sync", json!({})).await["docs"], 200);

    let stop = Arc::new(AtomicBool::new(false));
    let rounds = Arc::new(AtomicUsize::new(0));
    let churner = {
        let (stop, rounds) = (stop.clone(), rounds.clone());
        let paths: Vec<_> = churn
            .iter()
            .map(|(p, t)| (docs.path(p), t.clone()))
            .collect();
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                for (path, text) in &paths {
                    std::fs::remove_file(path).unwrap();
                    std::thread::yield_now();
                    std::fs::write(path, text).unwrap();
                }
                rounds.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    let started = std::time::Instant::now();
    let (mut syncs, mut missed_reads) = (0, 0);
    while syncs < 20 || started.elapsed() < std::time::Duration::from_secs(2) {
        let synced = ok(&core, "structs_docs_sync", json!({})).await;
        let n = synced["docs"].as_u64().unwrap();
        assert!((150..=200).contains(&n), "{n} docs: {synced:#}");
        if synced["warnings"].to_string().contains("cannot read") {
            missed_reads += 1;
        }
        let i = syncs % 150;
        let doc = ok(
            &core,
            "structs_docs_get",
            json!({"doc_id": format!("steady/s{i:03}")}),
        )
        .await;
        assert_eq!(doc["title"], format!("Steady {i}"));
        syncs += 1;
    }
    stop.store(true, Ordering::Relaxed);
    churner.join().unwrap();
    eprintln!(
        "{syncs} syncs during {} rounds of deleting and rewriting 50 files; \
         {missed_reads} found a listed file gone when they read it",
        rounds.load(Ordering::Relaxed)
    );
    let last = ok(&core, "structs_docs_sync", json!({})).await;
    assert_eq!(last["docs"], 200, "{last:#}");
    let doc = ok(&core, "structs_docs_get", json!({"doc_id": "churn/c049"})).await;
    assert_eq!(doc["title"], "Churn 49");
}
