//! Result handles through `Core::call`: shaping options on every tool, the 25 KB limit
//! and its envelope, fetching a stored result back page by page, and the handle list.

mod support;

use std::sync::Arc;

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use structs_console::Core;
use structs_console::handles::page::merge;
use structs_console::handles::{LIMIT, Shaping};
use structs_console::references::Support;
use structs_console::source::GameSource;
use structs_console::source::sim::WorldConfig;
use structs_console::store::{HandleMeta, HandleStore, MemoryStore};
use structs_console::tools::{Hints, Registry, ToolSpec};
use support::calls::ok;
use support::sim::{NOW, fixed_clock, paused};

/// A tool that returns its `data` argument: random results through the real pipeline.
fn echo_tool(r: &mut Registry) {
    r.add(
        ToolSpec {
            name: "structs_test_echo",
            description: "Returns its data argument, for testing.",
            input_schema: json!({"type": "object", "properties": {"data": {}},
                                 "additionalProperties": false}),
            references: Support::None,
            shaping: Shaping::Standard,
            title: "Echo",
            hints: Hints::LOCAL,
            output_schema: json!({"type": "object", "properties": {}}),
        },
        |_core, args| async move { Ok(args["data"].clone()) },
    );
}

fn core_with(players: usize, store: Arc<dyn HandleStore>) -> Core {
    structs_console::assembly::builder(Arc::new(paused(WorldConfig::with_players(players))))
        .clock(fixed_clock())
        .handle_store(store)
        .tools(echo_tool)
        .build()
        .unwrap()
}

fn core() -> Core {
    core_with(200, Arc::new(MemoryStore::default()))
}

fn size(v: &Value) -> usize {
    serde_json::to_vec(v).unwrap().len()
}

/// Leaf fields of a record, its wrapper key left out.
fn field_count(record: &Value) -> usize {
    fn leaves(v: &Value) -> usize {
        match v {
            Value::Object(o) if !o.is_empty() => o.values().map(leaves).sum(),
            _ => 1,
        }
    }
    record.as_object().unwrap().values().map(leaves).sum()
}

#[tokio::test]
async fn verbosity_caps_the_fields_of_every_record() {
    let core = core();
    for (verbosity, max) in [("summary", 5), ("compact", 15), ("detailed", 50)] {
        let v = ok(
            &core,
            "structs_list_players",
            json!({"page_size": 10, "verbosity": verbosity}),
        )
        .await;
        let players = v["players"].as_array().unwrap();
        assert_eq!(players.len(), 10);
        for p in players {
            let n = field_count(p);
            assert!(n <= max, "{verbosity}: {n} fields in {p}");
            assert!(p["Player"]["id"].is_string(), "the id always leads");
        }
        // The list's own fields are not records: untouched.
        assert_eq!(v["pagination"]["page_size"], 10);
    }
    let raw = ok(
        &core,
        "structs_list_players",
        json!({"page_size": 10, "verbosity": "raw"}),
    )
    .await;
    let plain = ok(&core, "structs_list_players", json!({"page_size": 10})).await;
    assert_eq!(raw, plain);
    // Summary keeps what matters about a player, not the first fields alphabetically.
    let v = ok(
        &core,
        "structs_query_player",
        json!({"player_id": "1-1", "verbosity": "summary"}),
    )
    .await;
    let p = &v["player"]["Player"];
    for f in ["id", "name", "guildId", "planetId", "fleetId"] {
        assert!(p.get(f).is_some(), "{f} in {v}");
    }
}

#[tokio::test]
async fn fields_select_nested_paths_on_any_tool() {
    let core = core();
    let v = ok(
        &core,
        "structs_query_planet",
        json!({"planet_id": "2-1", "fields": "owner,gridAttributes.ore,planetAttributes"}),
    )
    .await;
    let planet = &v["planet"];
    assert_eq!(planet["Planet"].as_object().unwrap().len(), 2, "{planet}");
    assert_eq!(planet["Planet"]["id"], "2-1");
    assert!(planet["Planet"]["owner"].is_string());
    assert_eq!(planet["gridAttributes"].as_object().unwrap().len(), 1);
    assert_eq!(planet["planetAttributes"].as_object().unwrap().len(), 11);
    // On a result without records, fields pick top-level fields.
    let v = ok(
        &core,
        "structs_query_block_height",
        json!({"fields": "height"}),
    )
    .await;
    assert_eq!(v, json!({"height": 120000}));
    // Fields override verbosity.
    let v = ok(
        &core,
        "structs_query_player",
        json!({"player_id": "1-1", "fields": "gridAttributes", "verbosity": "summary"}),
    )
    .await;
    assert_eq!(v["player"]["gridAttributes"].as_object().unwrap().len(), 15);
}

#[tokio::test]
async fn a_result_over_the_limit_becomes_an_envelope_and_nothing_is_lost() {
    let core = core();
    let v = ok(&core, "structs_list_planets", json!({"page_size": 100})).await;
    assert!(size(&v) <= LIMIT, "{} bytes", size(&v));
    assert_eq!(v["status"], "partial");
    let handle = v["result_handle"].as_str().unwrap();
    let parts: Vec<&str> = handle.split(':').collect();
    assert_eq!(parts[0], "structs");
    assert_eq!(parts[1], "planet");
    assert_eq!(parts[2], "1795262400", "the wall clock's unix time");
    assert_eq!(parts[3].len(), 32, "128 random bits, in hex");
    assert!(parts[3].bytes().all(|b| b.is_ascii_hexdigit()));
    // The same call on another server, at the same second, is another handle: the
    // random part is neither the data's hash nor the time's.
    let again = ok(
        &crate::core(),
        "structs_list_planets",
        json!({"page_size": 100}),
    )
    .await;
    let other = again["result_handle"].as_str().unwrap();
    assert_ne!(other, handle);
    assert_eq!(other[..other.len() - 32], handle[..handle.len() - 32]);
    let meta = &v["metadata"];
    assert_eq!(meta["verbosity"], "compact");
    assert_eq!(meta["tool_name"], "structs_list_planets");
    assert_eq!(meta["expires_in_sec"], 900);
    assert_eq!(meta["timestamp"], NOW);
    let full_size = meta["size_bytes"].as_u64().unwrap() as usize;
    assert!(full_size > LIMIT);
    // The summary: the first rows at compact verbosity, the length stated.
    let planets = &v["summary"]["planets"];
    assert_eq!(planets["sampled"], true);
    assert_eq!(planets["total"], 100);
    assert_eq!(
        planets["sample"].as_array().unwrap().len(),
        meta["row_count"].as_u64().unwrap() as usize
    );
    assert!(field_count(&planets["sample"][0]) <= 15);
    let info = &v["page_info"];
    assert_eq!(info["has_more"], true);
    assert_eq!(info["current_page"], 1);
    // Rows: entity_type, 100 planets, pagination, timestamp.
    assert_eq!(info["total"], 103);
    assert_eq!(v["resource_uri"], format!("structs://handles/{handle}"));

    // Fetch every page: each under the limit, together exactly the full result.
    let total_pages = info["total_pages"].as_u64().unwrap();
    let mut back = Map::new();
    for page in 1..=total_pages {
        let p = ok(
            &core,
            "structs_handle_fetch",
            json!({"handle": handle, "page": page}),
        )
        .await;
        assert!(size(&p) <= LIMIT, "page {page}: {} bytes", size(&p));
        assert_eq!(p["page_info"]["current_page"], page);
        assert_eq!(p["page_info"]["has_more"], page < total_pages);
        assert_eq!(p["page_info"]["cut"], false);
        assert_eq!(p["metadata"]["size_bytes"], full_size);
        merge(&mut back, &p["data"]);
    }
    let back = Value::Object(back);
    assert_eq!(size(&back), full_size);
    let source = paused(WorldConfig::with_players(200));
    let planets = back["planets"].as_array().unwrap();
    assert_eq!(planets.len(), 100);
    // Each listed planet is its core record, as the chain's list gives it.
    for p in planets {
        let id =
            structs_console::entity::EntityId::parse(p["Planet"]["id"].as_str().unwrap()).unwrap();
        let whole = source.get(id).await.unwrap().unwrap();
        assert_eq!(*p, json!({"Planet": whole["Planet"]}));
    }
    assert_eq!(back["pagination"]["total"], 200);

    // A page past the end, an unknown handle: structured errors.
    let e = core
        .call_json(
            "structs_handle_fetch",
            json!({"handle": handle, "page": total_pages + 1}),
        )
        .await
        .unwrap_err();
    assert_eq!(e["error"]["code"], "VALIDATION_OUT_OF_RANGE");
    assert_eq!(e["error"]["details"]["field"], "page");
    let e = core
        .call_json(
            "structs_handle_fetch",
            json!({"handle": "structs:planet:1:0badc0de"}),
        )
        .await
        .unwrap_err();
    assert_eq!(e["error"]["code"], "RESOURCE_NOT_FOUND");
    let e = core
        .call_json("structs_handle_fetch", json!({"handle": "planet-1"}))
        .await
        .unwrap_err();
    assert_eq!(e["error"]["code"], "VALIDATION_INVALID_FORMAT");

    // The handle list shows it.
    let list = ok(&core, "structs_handle_list", json!({})).await;
    assert_eq!(list["total"], 1);
    let h = &list["handles"][0];
    assert_eq!(h["handle"], handle);
    assert_eq!(h["tool_name"], "structs_list_planets");
    assert_eq!(h["rows"], 103);
    // Every page read it, and so did the page past the end.
    assert_eq!(h["hits"], total_pages + 1);
    assert_eq!(h["expires_in_sec"], 900);
}

#[tokio::test]
async fn fetch_shapes_pages_with_fields_and_verbosity() {
    let core = core();
    let v = ok(&core, "structs_list_players", json!({"page_size": 100})).await;
    let handle = v["result_handle"].as_str().unwrap();
    let p = ok(
        &core,
        "structs_handle_fetch",
        json!({"handle": handle, "fields": "name", "page_size": 100}),
    )
    .await;
    let players = p["data"]["players"].as_array().unwrap();
    // Rows are the top-level fields and each item: entity_type, then 99 players fill
    // the first page of 100 rows.
    assert_eq!(players.len(), 99);
    assert_eq!(p["data"]["entity_type"], "player");
    assert_eq!(
        players[0],
        json!({"Player": {"id": "1-1", "name": players[0]["Player"]["name"]}})
    );
    assert_eq!(p["metadata"]["verbosity"], "fields");
    let p = ok(
        &core,
        "structs_handle_fetch",
        json!({"handle": handle, "verbosity": "summary", "page": 2, "page_size": 10}),
    )
    .await;
    assert_eq!(p["page_info"]["rows"], json!([10, 20]));
    for player in p["data"]["players"].as_array().unwrap() {
        assert!(field_count(player) <= 5);
    }
}

#[tokio::test]
async fn fields_that_name_nothing_are_reported_with_the_kinds_fields() {
    let core = core();
    // Players have no owner: the answer says so, shows them at summary, and lists
    // what a player has.
    let v = ok(
        &core,
        "structs_list_players",
        json!({"fields": "id,owner", "page_size": 3}),
    )
    .await;
    let report = &v["fields_unmatched"]["player"];
    assert_eq!(report["unmatched"], json!(["owner"]), "{v}");
    assert_eq!(report["shown"], "summary");
    let fields: Vec<&str> = report["fields"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        fields.contains(&"name") && fields.contains(&"guildId"),
        "{fields:?}"
    );
    // A list's planets are the chain's core records: no gridAttributes.
    let v = ok(
        &core,
        "structs_list_planets",
        json!({"fields": "id,gridAttributes.ore", "page_size": 3}),
    )
    .await;
    assert_eq!(
        v["fields_unmatched"]["planet"]["unmatched"],
        json!(["gridAttributes.ore"]),
        "{v}"
    );
    // The same path on one queried planet matches, and nothing is reported.
    let v = ok(
        &core,
        "structs_query_planet",
        json!({"planet_id": "2-1", "fields": "gridAttributes.ore"}),
    )
    .await;
    assert!(v.get("fields_unmatched").is_none(), "{v}");
    assert!(v["planet"]["gridAttributes"]["ore"].is_string(), "{v}");
    // A kind's own qualifier fits the list's bare records.
    let v = ok(
        &core,
        "structs_list_planets",
        json!({"fields": "Planet.maxOre", "page_size": 2}),
    )
    .await;
    assert!(v.get("fields_unmatched").is_none(), "{v}");
    assert_eq!(
        v["planets"][0]["Planet"].as_object().unwrap().len(),
        2,
        "id and maxOre: {v}"
    );
    // A result over the limit names them in its envelope's metadata.
    let players: Vec<Value> = (1..=400)
        .map(|i| json!({"Player": {"id": format!("1-{i}"), "name": "x".repeat(60)}}))
        .collect();
    let v = ok(
        &core,
        "structs_test_echo",
        json!({"data": {"players": players}, "fields": "id,name,nosuch"}),
    )
    .await;
    assert!(
        v.get("result_handle").is_some(),
        "over the limit: {}",
        size(&v)
    );
    assert_eq!(
        v["metadata"]["fields_unmatched"]["player"]["unmatched"],
        json!(["nosuch"]),
        "{}",
        v["metadata"]
    );
}

#[tokio::test]
async fn a_scan_reads_large_pages_as_a_table_when_fields_keep_rows_small() {
    let core = core();
    let whole = ok(&core, "structs_list_structs", json!({"page_size": 100})).await;
    let total = whole["pagination"]["total"].as_u64().unwrap() as usize;
    assert!(
        total > 100,
        "a world with more than a page of structs: {total}"
    );
    // Without fields, a page is at most 100 whole entities.
    let e = core
        .call_json("structs_list_structs", json!({"page_size": 500}))
        .await
        .unwrap_err();
    assert_eq!(e["error"]["code"], "VALIDATION_OUT_OF_RANGE", "{e}");
    assert_eq!(e["error"]["details"]["field"], "page_size", "{e}");
    assert!(
        e["error"]["message"].as_str().unwrap().contains("fields"),
        "{e}"
    );
    // With fields and the table form, one page holds them all, each row its values.
    let v = ok(
        &core,
        "structs_list_structs",
        json!({"page_size": 5000, "fields": "id,type", "format": "table"}),
    )
    .await;
    assert!(v.get("result_handle").is_none(), "{}", size(&v));
    assert!(v.get("structs").is_none(), "the table replaces the records");
    let table = &v["table"];
    assert_eq!(table["of"], "structs");
    assert_eq!(table["columns"], json!(["id", "type"]));
    let rows = table["rows"].as_array().unwrap();
    assert_eq!(rows.len(), total, "{}", v["pagination"]);
    assert!(v["pagination"]["next_key"].is_null());
    // The same ids and types, in the same order, as the whole records.
    for (row, record) in rows.iter().zip(whole["structs"].as_array().unwrap()) {
        assert_eq!(row[0], record["Struct"]["id"]);
        assert_eq!(row[1], record["Struct"]["type"]);
    }
    // Rows that would not fit are cut at the response limit, and the next page goes
    // on from the last one sent: nothing is lost, nothing repeated, no handle.
    let mut seen = Vec::new();
    let mut key: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut args = json!({"page_size": 5000, "fields": "id,type,owner,creator,locationId"});
        if let Some(k) = &key {
            args["page_key"] = json!(k);
        }
        let v = ok(&core, "structs_list_structs", args).await;
        assert!(v.get("result_handle").is_none(), "a page became a handle");
        assert!(size(&v) <= LIMIT, "{}", size(&v));
        pages += 1;
        let items = v["structs"].as_array().unwrap();
        seen.extend(items.iter().map(|s| s["Struct"]["id"].clone()));
        match v["pagination"]["next_key"].as_str() {
            Some(k) => {
                // A page cut to fit says the size it was cut to.
                assert_eq!(v["pagination"]["page_size"], items.len(), "the size sent");
                key = Some(k.to_string());
            }
            None => break,
        }
    }
    assert!(pages > 1, "wide rows need more than one page");
    assert_eq!(seen.len(), total);
    let mut unique = seen.clone();
    unique.dedup();
    assert_eq!(unique.len(), total, "no entity twice");
    // An empty page is an empty table.
    let v = ok(
        &core,
        "structs_list_structs",
        json!({"owner": "1-99999", "fields": "id,type", "format": "table"}),
    )
    .await;
    assert_eq!(v["table"]["rows"], json!([]), "{v}");
}

#[tokio::test]
async fn expired_handles_say_so_and_are_cleaned_up() {
    let store = Arc::new(MemoryStore::default());
    let core = core_with(24, store.clone());
    let now: chrono::DateTime<chrono::Utc> = NOW.parse().unwrap();
    let meta = |handle: &str, expires| HandleMeta {
        handle: handle.into(),
        tool: "structs_list_players".into(),
        size_bytes: 2,
        rows: 1,
        created: now - chrono::Duration::seconds(1000),
        expires,
        hits: 0,
        owner: None,
    };
    let old = "structs:player:1:00000001";
    let live = "structs:player:2:00000002";
    store
        .put(
            meta(old, now - chrono::Duration::seconds(10)),
            Arc::new(json!({})),
        )
        .await
        .unwrap();
    store
        .put(
            meta(live, now + chrono::Duration::seconds(10)),
            Arc::new(json!({"a": 1})),
        )
        .await
        .unwrap();
    let e = core
        .call_json("structs_handle_fetch", json!({"handle": old}))
        .await
        .unwrap_err();
    assert_eq!(e["error"]["code"], "RESOURCE_EXPIRED");
    assert!(e["error"]["message"].as_str().unwrap().contains("expired"));
    // The fetch ran the periodic cleanup: the expired result is gone from the store
    // (nothing left to clean), yet a fetch still hears "expired", not "unknown".
    assert_eq!(store.cleanup(now).await.unwrap(), 0);
    let e = core
        .call_json("structs_handle_fetch", json!({"handle": old}))
        .await
        .unwrap_err();
    assert_eq!(e["error"]["code"], "RESOURCE_EXPIRED");
    let list = ok(&core, "structs_handle_list", json!({})).await;
    assert_eq!(list["total"], 1);
    assert_eq!(list["handles"][0]["handle"], live);
    assert_eq!(list["handles"][0]["expires_in_sec"], 10);
    assert_eq!(list["handles"][0]["age_sec"], 1000);
}

/// Random JSON: nested objects and arrays, long strings, entity-looking records.
fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        "[a-z0-9 é-]{0,40}".prop_map(Value::String),
        (0usize..20_000).prop_map(|n| Value::String("x".repeat(n))),
        (1u64..50).prop_map(
            |i| json!({"Player": {"id": format!("1-{i}"), "name": "u".repeat(i as usize * 40)}})
        ),
    ];
    leaf.prop_recursive(4, 400, 40, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..60).prop_map(Value::Array),
            prop::collection::btree_map("[a-zA-Z_]{1,12}", inner, 0..30)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn arb_options() -> impl Strategy<Value = Value> {
    (
        prop::option::of(prop_oneof![
            Just("summary"),
            Just("compact"),
            Just("detailed"),
            Just("raw")
        ]),
        prop::option::of("[a-zA-Z_.,]{0,30}"),
    )
        .prop_map(|(v, f)| {
            let mut o = Map::new();
            if let Some(v) = v {
                o.insert("verbosity".into(), json!(v));
            }
            if let Some(f) = f {
                o.insert("fields".into(), json!(f));
            }
            Value::Object(o)
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Whatever the data and the options, no response is over 25,600 bytes, and an
    /// envelope's data comes back whole through its pages.
    #[test]
    fn no_response_exceeds_the_limit(data in arb_json(), options in arb_options()) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let core = core_with(4, Arc::new(MemoryStore::default()));
            let mut args = options.clone();
            args["data"] = data.clone();
            let v = core.call_json("structs_test_echo", args).await.unwrap();
            prop_assert!(size(&v) <= LIMIT, "{} bytes", size(&v));
            if v.get("status") == Some(&json!("partial")) && v.get("result_handle").is_some() {
                let handle = v["result_handle"].as_str().unwrap();
                let mut page = 1;
                loop {
                    let p = core
                        .call_json("structs_handle_fetch", json!({"handle": handle, "page": page}))
                        .await
                        .unwrap();
                    prop_assert!(size(&p) <= LIMIT, "page {page}: {} bytes", size(&p));
                    if p["page_info"]["has_more"] != json!(true) {
                        break;
                    }
                    page += 1;
                }
            }
            Ok(())
        })?;
    }
}
