//! Links written through to the files, suggested links, and paths that would leave
//! the root.

use super::*;

#[tokio::test]
async fn written_links_survive_a_full_rebuild() {
    let docs = world();
    let core = docs.core();
    let up = ok(
        &core,
        "structs_docs_upsert_link",
        json!({"source_kind": "entity", "source_id": "1-11", "target_doc_id": "knowledge/mechanics/power"}),
    )
    .await;
    assert_eq!(up["link"]["outcome"], "created");
    assert_eq!(up["link"]["relation"], "informs");
    assert_eq!(up["written_to"], "_links/entity/1-11.meta.yaml");
    let sidecar = docs.read("_links/entity/1-11.meta.yaml");
    assert!(
        sidecar.contains("source_id: 1-11") && sidecar.contains("doc: knowledge/mechanics/power"),
        "{sidecar}"
    );
    let up = ok(
        &core,
        "structs_docs_upsert_link",
        json!({"source_kind": "doc", "source_id": "lore/origins", "target_doc_id": "knowledge/mechanics/mining", "relation": "depends_on"}),
    )
    .await;
    assert_eq!(up["written_to"], "lore/origins.md");
    // The doc had no front matter: it gains one, and its body is untouched.
    let text = docs.read("lore/origins.md");
    assert!(
        text.starts_with(
            "---\nlinks:\n  - doc: knowledge/mechanics/mining\n    relation: depends_on\n---\n"
        ),
        "{text}"
    );
    assert!(text.ends_with(
        "# Where structs came from\n\nLong ago the machines woke up and mined the first ore.\n"
    ));
    // Struct type links by name go to the type's sidecar.
    ok(
        &core,
        "structs_docs_upsert_link",
        json!({"source_kind": "struct_type", "source_id": 14, "target_doc_id": "knowledge/mechanics/refining", "relation": "see_also"}),
    )
    .await;

    // The same answers now, and from a brand-new index over the files.
    for core in [core.clone(), docs.core()] {
        let r = ok(
            &core,
            "structs_docs_list_references",
            json!({"source_kind": "entity", "source_id": "1-11"}),
        )
        .await;
        assert_eq!(
            ids(&r["references"], "target_doc_id"),
            ["knowledge/mechanics/power"]
        );
        assert_eq!(r["references"][0]["origin"], "explicit");
        let r = ok(
            &core,
            "structs_docs_list_references",
            json!({"source_kind": "doc", "source_id": "lore/origins"}),
        )
        .await;
        assert_eq!(r["references"][0]["relation"], "depends_on");
        let r = ok(
            &core,
            "structs_docs_list_references",
            json!({"source_kind": "struct_type", "source_id": "14"}),
        )
        .await;
        let targets = ids(&r["references"], "target_doc_id");
        assert_eq!(
            targets,
            ["knowledge/mechanics/refining", "knowledge/mechanics/mining"]
        );
    }
    // Writing the same link again changes nothing on disk.
    let before = docs.read("_links/entity/1-11.meta.yaml");
    let again = ok(
        &core,
        "structs_docs_upsert_link",
        json!({"source_kind": "entity", "source_id": "1-11", "target_doc_id": "knowledge/mechanics/power", "relation": "informs"}),
    )
    .await;
    assert_eq!(again["link"]["outcome"], "unchanged");
    assert_eq!(docs.read("_links/entity/1-11.meta.yaml"), before);
}

/// The worked example of suggestion scoring. Player 1-1 of the demo world references
/// guild 0-1, substation 4-1, planet 2-1 and fleet 9-1. With these links:
///
/// | link                          | counts for            |
/// |-------------------------------|-----------------------|
/// | entity 2-1 → power            | planet 2-1            |
/// | entity kind fleet → power     | fleet 9-1             |
/// | entity kind substation → power (front matter) | substation 4-1 |
/// | entity kind guild → economy   | guild 0-1             |
/// | entity 0-1 → economy          | guild 0-1 (again: once) |
/// | entity kind player → players  | nobody (the player itself is not related to itself) |
/// | entity 2-1 → linked; entity 1-1 → linked | excluded: already linked |
///
/// power scores 3, economy 1, and nothing else is suggested.
#[tokio::test]
async fn suggestions_score_by_related_entities_worked_example() {
    let docs = TempDocs::new(&[
        (
            "power.md",
            "---\ntitle: Power\nentity_kinds: [substation]\n---\nPower.\n",
        ),
        ("economy.md", "# Economy\n"),
        ("players.md", "# Players\n"),
        ("linked.md", "# Already linked\n"),
    ]);
    let core = docs.core();
    for (kind, id, doc) in [
        ("entity", "2-1", "power"),
        ("entity_kind", "fleet", "power"),
        ("entity_kind", "guild", "economy"),
        ("entity", "0-1", "economy"),
        ("entity_kind", "player", "players"),
        ("entity", "2-1", "linked"),
        ("entity", "1-1", "linked"),
    ] {
        ok(
            &core,
            "structs_docs_upsert_link",
            json!({"source_kind": kind, "source_id": id, "target_doc_id": doc}),
        )
        .await;
    }
    let preview = ok(
        &core,
        "structs_docs_suggest_references",
        json!({"source_kind": "entity", "source_id": "1-1"}),
    )
    .await;
    assert_eq!(
        preview["related"],
        json!(["guild 0-1", "substation 4-1", "planet 2-1", "fleet 9-1"])
    );
    let c = preview["candidates"].as_array().unwrap();
    let scored: Vec<(&str, u64)> = c
        .iter()
        .map(|c| (c["doc_id"].as_str().unwrap(), c["score"].as_u64().unwrap()))
        .collect();
    assert_eq!(scored, [("power", 3), ("economy", 1)]);
    let power: Vec<(&str, &str)> = c[0]["attribution"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["related"].as_str().unwrap(),
                a["through"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        power,
        [
            ("substation 4-1", "entity kind substation"),
            ("planet 2-1", "planet 2-1"),
            ("fleet 9-1", "entity kind fleet")
        ]
    );
    assert_eq!(c[1]["attribution"][0]["through"], "guild 0-1");
    // Previews are deterministic.
    let again = ok(
        &core,
        "structs_docs_suggest_references",
        json!({"source_kind": "entity", "source_id": "1-1"}),
    )
    .await;
    assert_eq!(again, preview);
    // min_score filters.
    let high = ok(
        &core,
        "structs_docs_suggest_references",
        json!({"source_kind": "entity", "source_id": "1-1", "min_score": 2}),
    )
    .await;
    assert_eq!(ids(&high["candidates"], "doc_id"), ["power"]);

    // Apply: selected ids that are not candidates are reported, max_apply caps.
    let applied = ok(
        &core,
        "structs_docs_suggest_references",
        json!({"source_kind": "entity", "source_id": "1-1", "mode": "apply",
               "selected_doc_ids": ["economy", "power", "power", "players"], "max_apply": 1}),
    )
    .await;
    assert_eq!(ids(&applied["applied"], "target_doc_id"), ["power"]);
    assert_eq!(applied["applied"][0]["outcome"], "created");
    assert_eq!(applied["applied"][0]["relation"], "informs");
    let not: Vec<String> = ids(&applied["not_applied"], "doc_id");
    assert_eq!(not, ["players", "economy"]);
    // Applied links are explicit, written through, and no longer suggested.
    let r = ok(
        &docs.core(),
        "structs_docs_list_references",
        json!({"source_kind": "entity", "source_id": "1-1"}),
    )
    .await;
    assert_eq!(ids(&r["references"], "target_doc_id"), ["linked", "power"]);
    let after = ok(
        &core,
        "structs_docs_suggest_references",
        json!({"source_kind": "entity", "source_id": "1-1", "mode": "apply"}),
    )
    .await;
    assert_eq!(ids(&after["applied"], "target_doc_id"), ["economy"]);
    let none = ok(
        &core,
        "structs_docs_suggest_references",
        json!({"source_kind": "entity", "source_id": "1-1"}),
    )
    .await;
    assert_eq!(none["candidate_count"], 0);
}

#[tokio::test]
async fn suggestions_follow_a_structs_type_and_a_docs_neighbours() {
    let docs = world();
    let core = docs.core();
    // Planet 2-1 holds struct 5-2; struct type links reach it through the struct.
    let s = ok(&core, "structs_query_entity", json!({"id": "5-2"})).await;
    let ty = s["entity"]["Struct"]["type"].as_str().unwrap().to_string();
    ok(
        &core,
        "structs_docs_upsert_link",
        json!({"source_kind": "struct_type", "source_id": ty, "target_doc_id": "lore/origins"}),
    )
    .await;
    let p = ok(
        &core,
        "structs_docs_suggest_references",
        json!({"source_kind": "entity", "source_id": "2-1"}),
    )
    .await;
    let c = &p["candidates"][0];
    assert_eq!(c["doc_id"], "lore/origins");
    assert_eq!(c["attribution"][0]["related"], "struct 5-2");
    assert!(
        c["attribution"][0]["through"]
            .as_str()
            .unwrap()
            .starts_with(&format!("struct type {ty}"))
    );
    // A doc's neighbours: refining links (inferred) to mining, mining to power; power is
    // suggested for refining, scored by mining's link.
    let p = ok(
        &core,
        "structs_docs_suggest_references",
        json!({"source_kind": "doc", "source_id": "knowledge/mechanics/refining"}),
    )
    .await;
    let got = ids(&p["candidates"], "doc_id");
    assert!(
        got.contains(&"knowledge/mechanics/power".to_string()),
        "{got:?}"
    );
    assert!(!got.contains(&"knowledge/mechanics/refining".to_string()));
    let e = err(
        &core,
        "structs_docs_suggest_references",
        json!({"source_kind": "struct_type", "source_id": "14"}),
    )
    .await;
    assert_eq!(e["details"]["field"], "source_kind");
    let e = err(
        &core,
        "structs_docs_suggest_references",
        json!({"source_kind": "entity", "source_id": "2-999"}),
    )
    .await;
    assert_eq!(e["code"], "RESOURCE_NOT_FOUND");
}

#[tokio::test]
async fn doc_ids_that_escape_the_root_are_refused() {
    let docs = world();
    // A secret beside the root, and a symbolic link inside it pointing out.
    let secret_dir = docs.root().parent().unwrap().join(format!(
        "{}-secret",
        docs.root().file_name().unwrap().to_str().unwrap()
    ));
    std::fs::create_dir_all(&secret_dir).unwrap();
    std::fs::write(
        secret_dir.join("secret.md"),
        "# Secret\n\npassword hunter2\n",
    )
    .unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&secret_dir, docs.path("outside")).unwrap();
    let core = docs.core();
    let escape = format!(
        "../{}/secret",
        secret_dir.file_name().unwrap().to_str().unwrap()
    );
    for bad in [
        escape.as_str(),
        "/etc/passwd",
        "knowledge/../../x",
        "..\\x",
        "C:/x",
        "a/.hidden/b",
    ] {
        let e = err(&core, "structs_docs_get", json!({"doc_id": bad})).await;
        assert_eq!(e["code"], "VALIDATION_INVALID_FORMAT", "{bad}");
        let e = err(
            &core,
            "structs_docs_upsert_link",
            json!({"source_kind": "doc", "source_id": "lore/origins", "target_doc_id": bad}),
        )
        .await;
        assert_eq!(e["code"], "VALIDATION_INVALID_FORMAT", "{bad}");
        let e = err(
            &core,
            "structs_docs_upsert_link",
            json!({"source_kind": "doc", "source_id": bad, "target_doc_id": "lore/origins"}),
        )
        .await;
        assert_eq!(e["code"], "VALIDATION_INVALID_FORMAT", "{bad}");
    }
    // The symbolic link is never followed: nothing of the secret is indexed.
    let hits = ok(
        &core,
        "structs_docs_search",
        json!({"query": "password hunter2"}),
    )
    .await;
    assert_eq!(hits["count"], 0);
    let e = err(
        &core,
        "structs_docs_get",
        json!({"doc_id": "outside/secret"}),
    )
    .await;
    assert_eq!(e["code"], "RESOURCE_NOT_FOUND");
    // A front matter link that climbs out is a warning, not a link.
    docs.write(
        "x.md",
        "---\nlinks: [\"../../etc/passwd\"]\n---\n[up](../../../etc/passwd.md)\n",
    );
    let sync = ok(&core, "structs_docs_sync", json!({})).await;
    let warnings: Vec<&str> = sync["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["file"] == "x.md")
        .map(|w| w["message"].as_str().unwrap())
        .collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    let r = ok(
        &core,
        "structs_docs_list_references",
        json!({"source_kind": "doc", "source_id": "x"}),
    )
    .await;
    assert_eq!(r["count"], 0);
    std::fs::remove_dir_all(&secret_dir).unwrap();
}

#[tokio::test]
async fn writes_never_leave_the_root_or_lose_what_an_author_wrote() {
    let docs = world();
    let core = docs.core();
    // A `_links` folder that is a symbolic link to somewhere else is refused.
    let outside = docs.root().with_extension("outside");
    std::fs::create_dir_all(&outside).unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&outside, docs.path("_links")).unwrap();
        let e = err(
            &core,
            "structs_docs_upsert_link",
            json!({"source_kind": "entity", "source_id": "1-11", "target_doc_id": "lore/origins"}),
        )
        .await;
        assert!(
            e["message"].as_str().unwrap().contains("symbolic link"),
            "{e}"
        );
        assert_eq!(
            std::fs::read_dir(&outside).unwrap().count(),
            0,
            "nothing written outside"
        );
        std::fs::remove_file(docs.path("_links")).unwrap();
    }
    std::fs::remove_dir_all(&outside).unwrap();

    // A sidecar at the conventional path that holds another source's links.
    docs.write(
        "_links/entity/1-12.meta.yaml",
        "source_kind: entity\nsource_id: 1-13\nlinks: [lore/origins]\n",
    );
    let e = err(
        &core,
        "structs_docs_upsert_link",
        json!({"source_kind": "entity", "source_id": "1-12", "target_doc_id": "lore/origins"}),
    )
    .await;
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("holds the links of player 1-13"),
        "{e}"
    );

    // Entries a rewrite would drop or change: the file stays as it is.
    let text = "---\ntitle: Odd\nlinks:\n  - doc: lore/origins\n    relation: contradicts\n  - doc: knowledge/mechanics/power\n    note: keep this\n---\nBody.\n";
    docs.write("odd.md", text);
    ok(&core, "structs_docs_sync", json!({})).await;
    let e = err(
        &core,
        "structs_docs_upsert_link",
        json!({"source_kind": "doc", "source_id": "odd", "target_doc_id": "lore/origins"}),
    )
    .await;
    assert_eq!(e["code"], "VALIDATION_ERROR");
    assert_eq!(e["details"]["problems"].as_array().unwrap().len(), 2, "{e}");
    assert_eq!(docs.read("odd.md"), text);

    // A pair named by two legacy fields keeps the relation the index shows.
    docs.write(
        "twice.md",
        "---\nsee_also: [lore/origins]\nrelated: [lore/origins]\n---\nBody.\n",
    );
    ok(&core, "structs_docs_sync", json!({})).await;
    let before = ok(
        &core,
        "structs_docs_list_references",
        json!({"source_kind": "doc", "source_id": "twice"}),
    )
    .await;
    let shown = before["references"][0]["relation"]
        .as_str()
        .unwrap()
        .to_string();
    ok(
        &core,
        "structs_docs_upsert_link",
        json!({"source_kind": "doc", "source_id": "twice", "target_doc_id": "schemas/player"}),
    )
    .await;
    let after = ok(
        &docs.core(),
        "structs_docs_list_references",
        json!({"source_kind": "doc", "source_id": "twice"}),
    )
    .await;
    assert_eq!(after["references"][0]["target_doc_id"], "lore/origins");
    assert_eq!(after["references"][0]["relation"], shown.as_str());
    assert!(!docs.read("twice.md").contains("see_also:") || shown == "see_also");
}
