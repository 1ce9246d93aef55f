//! The entity schemas through `Core::call`: every entity the sim generates conforms to
//! its kind's schema, and broken entities fail at the right place.

use std::sync::Arc;

use serde_json::{Value, json};
use structs_console::Core;
use structs_console::clock::WallClock;
use structs_console::entity::{EntityId, EntityKind, records};
use structs_console::source::sim::{BlockClock, SimSource, WorldConfig};
use structs_console::source::{GameSource, ListQuery};

/// A core over a sim world, and the source itself for reading every entity.
struct World {
    core: Core,
    source: Arc<SimSource>,
}

fn world(players: usize) -> World {
    let config = WorldConfig::with_players(players);
    let source = Arc::new(SimSource::new(
        config,
        BlockClock::paused(config.genesis_height),
    ));
    let fixed = "2026-11-21T12:00:00Z".parse().unwrap();
    World {
        core: structs_console::assembly::build_with_clock(source.clone(), WallClock::Fixed(fixed)),
        source,
    }
}

fn uri(kind: &str) -> String {
    format!("structs://schemas/entities/{kind}.json")
}

async fn validate(core: &Core, data: &Value, schema: &str) -> Value {
    core.call_json(
        "structs_validate_schema",
        json!({"data": data, "schema_uri": schema}),
    )
    .await
    .unwrap_or_else(|e| panic!("the call failed: {e}"))
}

/// Every entity of `kind`, whole (a list gives each one's core record; its own
/// record, with the attribute blocks, is read by id), listed a page of 100 at a time.
async fn all_of(w: &World, kind: EntityKind) -> Vec<Value> {
    let mut out = Vec::new();
    let mut query = ListQuery::new(kind, 100);
    loop {
        let page = w.source.list(query.clone()).await.unwrap();
        for item in page.items {
            // Infusions and addresses have no id: their list item is their whole
            // record, as a read of one by its key answers it.
            if !records::has_id(kind) {
                out.push(item);
                continue;
            }
            let id = kind.core_object(&item).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_string();
            let id = EntityId::parse(&id).unwrap();
            out.push(w.source.get(id).await.unwrap().unwrap());
        }
        match page.next_after {
            Some(after) => query.after = Some(after),
            None => {
                assert_eq!(out.len() as u64, page.total, "{kind}: every page read");
                return out;
            }
        }
    }
}

async fn every_entity_conforms(players: usize) {
    let w = world(players);
    let core = &w.core;
    for kind in EntityKind::ALL {
        let entities = all_of(&w, kind).await;
        assert!(!entities.is_empty(), "the world has no {kind}");
        // By URI for even indices, by bare kind name for odd ones: both name the schema.
        for (i, entity) in entities.iter().enumerate() {
            let schema = if i % 2 == 0 {
                uri(kind.name())
            } else {
                kind.name().to_string()
            };
            let v = validate(core, entity, &schema).await;
            assert_eq!(
                v["valid"],
                true,
                "{kind} #{}: {}\n{entity}",
                i + 1,
                v["errors"]
            );
            assert_eq!(v["errors"], json!([]));
            assert_eq!(v["schema_uri"], uri(kind.name()));
        }
    }
}

#[tokio::test]
async fn every_entity_of_the_demo_world_conforms_to_its_schema() {
    every_entity_conforms(WorldConfig::DEMO_PLAYERS).await;
}

#[tokio::test]
async fn every_entity_of_a_200_player_world_conforms_to_its_schema() {
    every_entity_conforms(200).await;
}

#[tokio::test]
async fn entities_fetched_by_id_are_checked_against_their_kind() {
    let w = world(WorldConfig::DEMO_PLAYERS);
    let core = &w.core;
    for kind in EntityKind::ALL {
        let id = EntityId::new(kind, 1).to_string();
        let v = core
            .call_json("structs_validate_schema", json!({"entity_id": id}))
            .await
            .unwrap();
        assert_eq!(v["valid"], true, "{id}: {}", v["errors"]);
        assert_eq!(v["schema_uri"], uri(kind.name()));
        assert_eq!(v["entity_id"], id);
    }
    // An entity against another kind's schema is reported, not refused.
    let v = core
        .call_json(
            "structs_validate_schema",
            json!({"entity_id": "1-1", "schema_uri": "planet"}),
        )
        .await
        .unwrap();
    assert_eq!(v["valid"], false);
    assert_eq!(v["schema_uri"], uri("planet"));
    assert!(
        v["errors"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["instance_path"] == "" && e["keyword"] == "required"),
        "{v}"
    );

    let e = core
        .call_json("structs_validate_schema", json!({"entity_id": "1-9999"}))
        .await
        .unwrap_err();
    assert_eq!(e["error"]["code"], "RESOURCE_NOT_FOUND");
    assert_eq!(e["error"]["details"]["field"], "entity_id");
}

/// The errors of one check, as (instance_path, keyword) pairs.
fn problems(v: &Value) -> Vec<(String, String)> {
    v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            for key in ["instance_path", "schema_path", "keyword", "message"] {
                assert!(e[key].is_string(), "{key} in {e}");
            }
            (
                e["instance_path"].as_str().unwrap().to_string(),
                e["keyword"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn has(v: &Value, path: &str, keyword: &str) -> bool {
    problems(v).iter().any(|(p, k)| p == path && k == keyword)
}

async fn entity(w: &World, id: &str) -> Value {
    w.source
        .get(EntityId::parse(id).unwrap())
        .await
        .unwrap()
        .unwrap()
}

#[tokio::test]
async fn broken_entities_fail_where_they_are_broken() {
    let w = world(WorldConfig::DEMO_PLAYERS);
    let core = &w.core;
    let player = entity(&w, "1-1").await;
    let structure = entity(&w, "5-1").await;
    let guild = entity(&w, "0-1").await;

    // An id of the wrong kind.
    let mut p = player.clone();
    p["Player"]["planetId"] = json!("5-1");
    let v = validate(core, &p, &uri("player")).await;
    assert_eq!(v["valid"], false);
    assert_eq!(
        problems(&v),
        [("/Player/planetId".to_string(), "pattern".to_string())]
    );
    let e = &v["errors"][0];
    assert!(
        e["schema_path"]
            .as_str()
            .unwrap()
            .starts_with("/properties/Player/properties/planetId/"),
        "{e}"
    );
    assert_eq!(
        e["absolute_keyword_location"],
        "structs://schemas/formats.json#/definitions/planetIdOrEmpty/pattern"
    );

    // A struct type out of range, either way.
    for bad in ["23", "0", "5-1"] {
        let mut s = structure.clone();
        s["Struct"]["type"] = json!(bad);
        let v = validate(core, &s, "struct").await;
        assert!(has(&v, "/Struct/type", "pattern"), "{bad}: {v}");
    }

    // A missing required field: in the record, and a whole block.
    let mut p = player.clone();
    p["Player"].as_object_mut().unwrap().remove("fleetId");
    let v = validate(core, &p, "player").await;
    assert_eq!(
        problems(&v),
        [("/Player".to_string(), "required".to_string())]
    );
    assert!(
        v["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("fleetId")
    );
    let mut p = player.clone();
    p.as_object_mut().unwrap().remove("gridAttributes");
    let v = validate(core, &p, "player").await;
    assert_eq!(problems(&v), [(String::new(), "required".to_string())]);

    // An integer as a JSON number where the chain writes a string.
    let mut p = player.clone();
    p["Player"]["guildRank"] = json!(101);
    p["gridAttributes"]["capacity"] = json!(5000);
    let v = validate(core, &p, "player").await;
    assert_eq!(
        problems(&v),
        [
            ("/Player/guildRank".to_string(), "type".to_string()),
            ("/gridAttributes/capacity".to_string(), "type".to_string()),
        ]
    );

    // A misspelt field where the record is closed: the unknown key and the missing one.
    let mut s = structure.clone();
    let ambit = s["Struct"]
        .as_object_mut()
        .unwrap()
        .remove("operatingAmbit")
        .unwrap();
    s["Struct"]["operatingAmbt"] = ambit;
    let v = validate(core, &s, "struct").await;
    assert!(has(&v, "/Struct", "additionalProperties"), "{v}");
    assert!(has(&v, "/Struct", "required"), "{v}");
    let mut g = guild.clone();
    g["Guild"]["endpont"] = json!("https://example.com");
    let v = validate(core, &g, "guild").await;
    assert_eq!(
        problems(&v),
        [("/Guild".to_string(), "additionalProperties".to_string())]
    );
    assert!(
        v["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("endpont")
    );

    // In an open record a misspelling still shows, as the field it should have been.
    let mut p = player.clone();
    let planet = p["Player"]
        .as_object_mut()
        .unwrap()
        .remove("planetId")
        .unwrap();
    p["Player"]["planetID"] = planet;
    let v = validate(core, &p, "player").await;
    assert_eq!(
        problems(&v),
        [("/Player".to_string(), "required".to_string())]
    );

    // Enums and cross-field rules.
    let mut s = structure.clone();
    s["Struct"]["operatingAmbit"] = json!("sky");
    s["Struct"]["locationType"] = json!("planet");
    s["Struct"]["locationId"] = json!("9-1");
    s["structAttributes"]["status"] = json!("flying");
    let v = validate(core, &s, "struct").await;
    assert!(has(&v, "/Struct/operatingAmbit", "enum"), "{v}");
    assert!(has(&v, "/Struct/locationId", "pattern"), "{v}");
    assert!(has(&v, "/structAttributes/status", "pattern"), "{v}");
    let enum_message = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["keyword"] == "enum")
        .unwrap()["message"]
        .as_str()
        .unwrap();
    assert!(
        enum_message.contains("space"),
        "every choice is named: {enum_message}"
    );

    // The flat address record is closed too.
    let mut a = entity(&w, "8-1").await;
    a["playerID"] = json!("1-1");
    let v = validate(core, &a, "address").await;
    assert!(has(&v, "", "additionalProperties"), "{v}");
}

/// Fields the chain (or a richer sim) adds where records are open are accepted, typed.
#[tokio::test]
async fn open_records_accept_fields_the_chain_adds() {
    let w = world(WorldConfig::DEMO_PLAYERS);
    let core = &w.core;

    let mut s = entity(&w, "5-1").await;
    // The status is the chain's bitmask, a number in a string: a word is not what a
    // node sends.
    for status in ["1", "3", "7", "35"] {
        s["structAttributes"]["status"] = json!(status);
        s["structAttributes"]["blockStartOreMine"] = json!("119950");
        s["structAttributes"]["blockStartOreRefine"] = json!("119960");
        s["structAttributes"]["isDestroyed"] = json!(status == "35");
        let v = validate(core, &s, "struct").await;
        assert_eq!(v["valid"], true, "{status}: {v}");
    }
    s["structAttributes"]["status"] = json!("online");
    let v = validate(core, &s, "struct").await;
    assert!(has(&v, "/structAttributes/status", "pattern"), "{v}");
    s["structAttributes"]["status"] = json!("7");
    // A node writes every attribute, zero or not: one left out is missing.
    let mut missing = s.clone();
    missing["structAttributes"]
        .as_object_mut()
        .unwrap()
        .remove("typeCount");
    let v = validate(core, &missing, "struct").await;
    assert_eq!(v["valid"], false, "{v}");
    // A new attribute is still typed: no JSON numbers.
    s["structAttributes"]["blockStartRaid"] = json!(5);
    let v = validate(core, &s, "struct").await;
    assert!(has(&v, "/structAttributes/blockStartRaid", "type"), "{v}");

    let mut f = entity(&w, "9-1").await;
    f["Fleet"]["status"] = json!("away");
    f["Fleet"]["locationId"] = json!("2-3");
    f["Fleet"]["blockStartRaid"] = json!("120000");
    assert_eq!(validate(core, &f, "fleet").await["valid"], true);
    f["Fleet"]["status"] = json!("raiding");
    assert!(has(
        &validate(core, &f, "fleet").await,
        "/Fleet/status",
        "enum"
    ));

    let mut p = entity(&w, "1-1").await;
    p["Player"]["lastActionBlock"] = json!("119990");
    p["chargeAttributes"] = json!({"charge": "12"});
    assert_eq!(validate(core, &p, "player").await["valid"], true);

    let mut planet = entity(&w, "2-1").await;
    planet["planetAttributes"]["blockStartRaid"] = json!("119000");
    planet["Planet"]["name"] = json!("Nova Prime");
    assert_eq!(validate(core, &planet, "planet").await["valid"], true);
}

#[tokio::test]
async fn unknown_schemas_and_bad_arguments_are_refused() {
    let w = world(WorldConfig::DEMO_PLAYERS);
    let core = &w.core;
    let player = entity(&w, "1-1").await;

    for bad in [
        "structs://schemas/entities/ship.json",
        "ship",
        "1",
        "structs://schemas/formats.json",
    ] {
        let e = core
            .call_json(
                "structs_validate_schema",
                json!({"data": player, "schema_uri": bad}),
            )
            .await
            .unwrap_err();
        assert_eq!(e["error"]["code"], "RESOURCE_NOT_FOUND", "{bad}: {e}");
        assert_eq!(e["error"]["details"]["field"], "schema_uri");
        let available = e["error"]["details"]["available"].as_array().unwrap();
        assert_eq!(available.len(), 12, "{e}");
        assert!(available.contains(&json!(uri("player"))));
        assert!(
            e["error"]["message"]
                .as_str()
                .unwrap()
                .contains("structs://schemas/entities/agreement.json"),
            "{e}"
        );
    }

    for (args, code, field) in [
        (json!({}), "VALIDATION_MISSING_FIELD", "data"),
        (
            json!({"data": player}),
            "VALIDATION_MISSING_FIELD",
            "schema_uri",
        ),
        (
            json!({"data": player, "entity_id": "1-1"}),
            "VALIDATION_INVALID_VALUE",
            "entity_id",
        ),
        (
            json!({"entity_id": "player-1"}),
            "VALIDATION_INVALID_FORMAT",
            "entity_id",
        ),
        (
            json!({"data": player, "schema_uri": "player", "schema": "x"}),
            "VALIDATION_UNKNOWN_FIELD",
            "schema",
        ),
    ] {
        let e = core
            .call_json("structs_validate_schema", args.clone())
            .await
            .unwrap_err();
        assert_eq!(e["error"]["code"], code, "{args}: {e}");
        assert_eq!(e["error"]["details"]["field"], field, "{args}: {e}");
    }

    // Any JSON is data; what is not an entity is simply invalid.
    for data in [json!(null), json!(7), json!("1-1"), json!([player])] {
        let v = validate(core, &data, "player").await;
        assert_eq!(v["valid"], false, "{data}");
        assert!(has(&v, "", "type"), "{v}");
    }
}
