//! `serve-rest` held to the node's own `openapi.yml` (`../shared/reference/structsd/`):
//! every route it serves, every record of every kind, read one by one and in lists,
//! checked against the answer's schema with its `$ref`s resolved. Every property the
//! schema has must be there with its JSON type, and nothing it lacks may appear. Then
//! the project's own record table against the same schemas, the node's error answers,
//! the height header, and `planet_by_player`'s way of counting.

mod support;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use structs_console::EntityKind;
use structs_console::entity::records::{self, Ty};
use structs_console::rest::server::RestServer;
use structs_console::source::GameSource;
use structs_console::source::rest::wire::{HEIGHT_HEADER, list_key};
use structs_console::source::sim::{BlockClock, SimSource, WorldConfig};
use support::reference::OpenApi;

async fn serve() -> (Arc<SimSource>, RestServer) {
    structs_console::source::rest::install_crypto();
    let config = WorldConfig::demo();
    let sim = Arc::new(SimSource::new(
        config,
        BlockClock::paused(config.genesis_height),
    ));
    let server = RestServer::start("127.0.0.1:0", sim.clone()).await.unwrap();
    (sim, server)
}

/// One answer: status, height header, body.
async fn get(base: &str, path: &str) -> (u16, Option<String>, Value) {
    let r = reqwest::get(format!("{base}{path}")).await.unwrap();
    let status = r.status().as_u16();
    let height = r
        .headers()
        .get(HEIGHT_HEADER)
        .map(|h| h.to_str().unwrap().to_string());
    (status, height, r.json().await.unwrap())
}

/// The list route and the single-read route template of each kind.
fn routes(kind: EntityKind) -> (&'static str, &'static str) {
    match kind {
        EntityKind::Guild => ("/structs/guild", "/structs/guild/{id}"),
        EntityKind::Player => ("/structs/player", "/structs/player/{id}"),
        EntityKind::Planet => ("/structs/planet", "/structs/planet/{id}"),
        EntityKind::Reactor => ("/structs/reactor", "/structs/reactor/{id}"),
        EntityKind::Substation => ("/structs/substation", "/structs/substation/{id}"),
        EntityKind::Struct => ("/structs/struct", "/structs/struct/{id}"),
        EntityKind::Allocation => ("/structs/allocation", "/structs/allocation/{id}"),
        EntityKind::Infusion => (
            "/structs/infusion",
            "/structs/infusion/{destinationId}/{address}",
        ),
        EntityKind::Address => ("/structs/address", "/structs/address/{address}"),
        EntityKind::Fleet => ("/structs/fleet", "/structs/fleet/{id}"),
        EntityKind::Provider => ("/structs/provider", "/structs/provider/{id}"),
        EntityKind::Agreement => ("/structs/agreement", "/structs/agreement/{id}"),
    }
}

/// Checks and their failures, by route template.
#[derive(Default)]
struct Tally {
    checks: usize,
    failures: BTreeMap<String, Vec<String>>,
    routes: std::collections::BTreeSet<String>,
}

impl Tally {
    fn check(&mut self, api: &OpenApi, template: &str, path: &str, body: &Value) {
        let mut problems = Vec::new();
        self.checks += api.check(body, api.answer_schema(template), "", &mut problems);
        self.routes.insert(template.to_string());
        if !problems.is_empty() {
            let list = self.failures.entry(template.to_string()).or_default();
            for p in problems {
                if list.len() < 12 {
                    list.push(format!("{path}{p}"));
                }
            }
        }
    }
}

#[tokio::test]
async fn every_route_answers_as_the_nodes_openapi_says() {
    let Some(api) = OpenApi::load() else { return };
    let (_sim, server) = serve().await;
    let base = server.url();
    let mut tally = Tally::default();
    let mut first_keys: BTreeMap<EntityKind, Vec<Value>> = BTreeMap::new();

    let (status, height, body) = get(&base, "/blockheight").await;
    assert_eq!(status, 200);
    assert!(height.is_some(), "/blockheight carries the height header");
    tally.check(&api, "/blockheight", "/blockheight", &body);

    for kind in EntityKind::ALL {
        let (list, one) = routes(kind);
        // The whole list in one page, then every record read alone.
        let path = format!("{list}?pagination.limit=10000");
        let (status, height, body) = get(&base, &path).await;
        assert_eq!(status, 200, "{path}: {body}");
        assert!(height.is_some(), "{path} carries the height header");
        tally.check(&api, list, &path, &body);
        let items = body[list_key(kind)].as_array().cloned().unwrap_or_default();
        assert!(!items.is_empty(), "{path} lists no {kind}");
        for item in &items {
            let key = records::key_of(kind, item).expect("every record has a key");
            let path = match kind {
                EntityKind::Infusion => format!("/structs/infusion/{key}"),
                _ => one.replace("{id}", &key).replace("{address}", &key),
            };
            let (status, _, body) = get(&base, &path).await;
            assert_eq!(status, 200, "{path}: {body}");
            tally.check(&api, one, &path, &body);
            // The project's table agrees with what was served.
            let problems = records::single_response(kind).check(&body);
            assert!(problems.is_empty(), "{path}: {problems:?}");
        }
        // A small page, and the page after it.
        let path = format!("{list}?pagination.limit=3");
        let (_, _, body) = get(&base, &path).await;
        tally.check(&api, list, &path, &body);
        match body["pagination"]["next_key"].as_str() {
            Some(next) => {
                let path = format!(
                    "{list}?pagination.limit=3&pagination.key={}",
                    urlencode(next)
                );
                let (status, _, body) = get(&base, &path).await;
                assert_eq!(status, 200, "{path}: {body}");
                tally.check(&api, list, &path, &body);
            }
            None => assert!(items.len() <= 3, "{path} has more than a page and no key"),
        }
        first_keys.insert(kind, items);
    }

    // The lookups, each with a key that has records.
    let first = |kind: EntityKind, field: &str| -> String {
        first_keys[&kind][0][field].as_str().unwrap().to_string()
    };
    let lookups = [
        (
            "/structs/planet_by_player/{playerId}",
            format!(
                "/structs/planet_by_player/{}",
                first(EntityKind::Planet, "owner")
            ),
        ),
        (
            "/structs/address_by_player/{playerId}",
            format!(
                "/structs/address_by_player/{}",
                first(EntityKind::Address, "playerId")
            ),
        ),
        (
            "/structs/allocation_by_source/{sourceId}",
            format!(
                "/structs/allocation_by_source/{}",
                first(EntityKind::Allocation, "sourceObjectId")
            ),
        ),
        (
            "/structs/allocation_by_destination/{destinationId}",
            format!(
                "/structs/allocation_by_destination/{}",
                first(EntityKind::Allocation, "destinationId")
            ),
        ),
        (
            "/structs/agreement_by_provider/{providerId}",
            format!(
                "/structs/agreement_by_provider/{}",
                first(EntityKind::Agreement, "providerId")
            ),
        ),
        (
            "/structs/infusion_by_destination/{destinationId}",
            format!(
                "/structs/infusion_by_destination/{}",
                first(EntityKind::Infusion, "destinationId")
            ),
        ),
        (
            "/structs/fleet_by_index/{index}",
            "/structs/fleet_by_index/1".to_string(),
        ),
        ("/structs/struct_type", "/structs/struct_type".to_string()),
    ];
    for (template, path) in lookups {
        let (status, _, body) = get(&base, &path).await;
        assert_eq!(status, 200, "{path}: {body}");
        tally.check(&api, template, &path, &body);
    }
    for t in 1..=22 {
        let path = format!("/structs/struct_type/{t}");
        let (status, _, body) = get(&base, &path).await;
        assert_eq!(status, 200, "{path}: {body}");
        tally.check(&api, "/structs/struct_type/{id}", &path, &body);
    }
    // An address no player holds: a record of player 1-0, as a node answers.
    let path = "/structs/address/structs1nobodyhere";
    let (status, _, body) = get(&base, path).await;
    assert_eq!(status, 200);
    assert_eq!(body["playerId"], "1-0");
    tally.check(&api, "/structs/address/{address}", path, &body);

    eprintln!(
        "{} checks over {} routes, {} routes with failures",
        tally.checks,
        tally.routes.len(),
        tally.failures.len()
    );
    assert_eq!(
        tally.routes.len(),
        34,
        "every route serve-rest serves is checked: {:?}",
        tally.routes
    );
    assert!(
        tally.failures.is_empty(),
        "answers that differ from openapi.yml:\n{:#?}",
        tally.failures
    );
}

fn urlencode(key: &str) -> String {
    key.replace('+', "%2B")
        .replace('/', "%2F")
        .replace('=', "%3D")
}

/// The JSON type a table field has in the OpenAPI (`string/uint64`, `boolean`, ...).
fn openapi_type(api: &OpenApi, schema: &Value) -> String {
    let s = api.resolve(schema);
    match s.get("type").and_then(Value::as_str).unwrap_or("object") {
        "string" => match s.get("format").and_then(Value::as_str) {
            Some(f) => format!("string/{f}"),
            None if s.get("enum").is_some() => "enum".into(),
            None => "string".into(),
        },
        other => other.into(),
    }
}

fn table_type(ty: &Ty) -> String {
    match ty {
        Ty::Str | Ty::Int | Ty::Dec => "string".into(),
        Ty::U64 => "string/uint64".into(),
        Ty::Bool => "boolean".into(),
        Ty::Bytes => "string/byte".into(),
        Ty::Enum(_) => "enum".into(),
        Ty::Msg(_) => "object".into(),
        Ty::List(_) => "array".into(),
    }
}

/// The table's message against the OpenAPI's schema: the same fields in the same
/// order, the same JSON types, the same enum values.
fn compare(api: &OpenApi, message: &records::Message, schema: &Value, out: &mut Vec<String>) {
    let schema = api.resolve(schema);
    let props = schema["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let ours: Vec<&str> = message
        .fields
        .iter()
        .map(|f| f.name)
        .filter(|n| !records::NEWER_FIELDS.contains(&(message.name, *n)))
        .collect();
    let theirs: Vec<&str> = props.keys().map(String::as_str).collect();
    if ours != theirs {
        out.push(format!(
            "{}: fields {ours:?}, the node's {theirs:?}",
            message.name
        ));
    }
    for field in message.fields {
        let Some(sub) = props.get(field.name) else {
            continue;
        };
        let (want, have) = (openapi_type(api, sub), table_type(&field.ty));
        if want != have {
            out.push(format!(
                "{}.{}: {have}, the node's {want}",
                message.name, field.name
            ));
        }
        match field.ty {
            Ty::Enum(values) => {
                let node: Vec<String> = api.resolve(sub)["enum"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect();
                if node != values {
                    out.push(format!(
                        "{}.{}: {values:?}, the node's {node:?}",
                        message.name, field.name
                    ));
                }
            }
            Ty::Msg(inner) => compare(api, inner, sub, out),
            Ty::List(Ty::Msg(inner)) => compare(api, inner, &api.resolve(sub)["items"], out),
            _ => {}
        }
    }
}

#[test]
fn the_record_table_is_the_nodes_schemas() {
    let Some(api) = OpenApi::load() else { return };
    let mut problems = Vec::new();
    for kind in EntityKind::ALL {
        let (_, one) = routes(kind);
        compare(
            &api,
            records::single_response(kind),
            api.answer_schema(one),
            &mut problems,
        );
    }
    compare(
        &api,
        &records::STRUCT_TYPE,
        &api.answer_schema("/structs/struct_type/{id}")["properties"]["StructType"],
        &mut problems,
    );
    assert!(problems.is_empty(), "{problems:#?}");
}

#[tokio::test]
async fn errors_are_the_nodes() {
    let (sim, server) = serve().await;
    let base = server.url();
    let height = sim.info().block_height.to_string();
    for path in [
        "/structs/player/1-99999",
        "/structs/struct/5-99999",
        "/structs/infusion/3-1/structs1nobody",
    ] {
        let (status, h, body) = get(&base, path).await;
        assert_eq!(status, 500, "{path}");
        assert_eq!(
            body,
            serde_json::json!({"code": 2, "message": "codespace structs code 1050: object not found", "details": []}),
            "{path}"
        );
        assert_eq!(
            h.as_deref(),
            Some(height.as_str()),
            "{path} carries the height"
        );
    }
    // What the paginator refuses, the keeper answers as an internal error.
    let (status, _, body) = get(
        &base,
        "/structs/player?pagination.key=MS0x&pagination.offset=2",
    )
    .await;
    assert_eq!(
        (status, &body["code"]),
        (500, &serde_json::json!(13)),
        "{body}"
    );
    // Flags are read as Go reads them.
    let (status, _, body) = get(
        &base,
        "/structs/player?pagination.limit=1&pagination.count_total=1",
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["pagination"]["total"], "24");
    let (status, _, body) = get(&base, "/structs/no_such_route").await;
    assert_eq!(status, 501);
    assert_eq!(body["code"], 12);
    assert_eq!(body["details"], serde_json::json!([]));
}

#[tokio::test]
async fn planet_by_player_counts_the_store_as_the_keeper_does() {
    let (sim, server) = serve().await;
    let base = server.url();
    let planets = sim.with_world(|w| w.count(EntityKind::Planet));
    // A page of one reads one planet of the store: player 1-2's planet is not the
    // first in the store's order, so the first page holds none of its planets but
    // hands on a key, and the total is the store's.
    let (status, _, body) = get(
        &base,
        "/structs/planet_by_player/1-2?pagination.limit=1&pagination.count_total=true",
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(body["Planet"], serde_json::json!([]), "{body}");
    assert_eq!(body["pagination"]["total"], planets.to_string());
    assert!(body["pagination"]["next_key"].is_string());
    // Following the keys to the end finds the player's planets, and only them.
    let mut key: Option<String> = None;
    let mut found = Vec::new();
    for _ in 0..=planets {
        let path = match &key {
            None => "/structs/planet_by_player/1-2?pagination.limit=5".to_string(),
            Some(k) => format!(
                "/structs/planet_by_player/1-2?pagination.limit=5&pagination.key={}",
                urlencode(k)
            ),
        };
        let (_, _, body) = get(&base, &path).await;
        for p in body["Planet"].as_array().unwrap() {
            assert_eq!(p["owner"], "1-2");
            found.push(p["id"].as_str().unwrap().to_string());
        }
        match body["pagination"]["next_key"].as_str() {
            Some(k) => key = Some(k.to_string()),
            None => break,
        }
    }
    let owned = sim.with_world(|w| w.planets.iter().filter(|p| p.owner == 2).count());
    assert_eq!(found.len(), owned, "{found:?}");
    // An index of the matches counts matches only.
    let (_, _, body) = get(
        &base,
        "/structs/allocation_by_source/3-1?pagination.count_total=true",
    )
    .await;
    let n = body["Allocation"].as_array().unwrap().len();
    assert_eq!(body["pagination"]["total"], n.to_string());
    assert_eq!(body["status"], serde_json::json!([]));
}

/// A field of a `tx.proto` message: its proto type, its name, whether it is repeated.
type ProtoField = (String, String, bool);

/// The fields of each message of `tx.proto`, in order.
fn tx_proto() -> Option<Vec<(String, Vec<ProtoField>)>> {
    let dir = support::reference::structsd()?;
    let text = std::fs::read_to_string(dir.join("proto/structs/structs/tx.proto")).unwrap();
    // Comments out, then each `message Msg… { … }` block (none nests another).
    let text: String = text
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = Vec::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("message ") {
        rest = &rest[at + "message ".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let open = rest.find('{').unwrap();
        let close = rest.find('}').unwrap();
        let body = &rest[open + 1..close];
        rest = &rest[close + 1..];
        if !name.starts_with("Msg") || name.ends_with("Response") {
            continue;
        }
        let mut fields = Vec::new();
        for stmt in body.split(';') {
            let stmt = stmt.split('[').next().unwrap().trim();
            let Some((left, _number)) = stmt.split_once('=') else {
                continue;
            };
            let words: Vec<&str> = left.split_whitespace().collect();
            match words.as_slice() {
                ["repeated", ty, name] => fields.push((ty.to_string(), name.to_string(), true)),
                [ty, name] if *ty != "option" => {
                    fields.push((ty.to_string(), name.to_string(), false))
                }
                _ => {}
            }
        }
        out.push((name, fields));
    }
    Some(out)
}

#[test]
fn every_message_the_tools_build_or_take_is_tx_protos() {
    use structs_console::chain::tx;
    let Some(proto) = tx_proto() else { return };
    // The messages the service takes: each rpc's request (comments left out).
    let text = std::fs::read_to_string(
        support::reference::structsd()
            .unwrap()
            .join("proto/structs/structs/tx.proto"),
    )
    .unwrap();
    let served: Vec<String> = text
        .lines()
        .map(|l| l.split("//").next().unwrap_or("").trim())
        .filter_map(|l| l.strip_prefix("rpc "))
        .filter_map(|l| {
            let open = l.find('(')?;
            let close = l.find(')')?;
            Some(l[open + 1..close].trim().to_string())
        })
        .collect();
    assert_eq!(served, tx::CHAIN_MESSAGES, "the chain's message types");
    for name in &served {
        assert!(
            proto.iter().any(|(n, _)| n == name),
            "{name} has no message"
        );
    }
    for def in tx::DEFINED {
        let (_, fields) = proto
            .iter()
            .find(|(n, _)| n == def.name)
            .unwrap_or_else(|| panic!("{} is not in tx.proto", def.name));
        let theirs: Vec<(String, String)> = fields
            .iter()
            .map(|(ty, name, repeated)| {
                let ty = match (ty.as_str(), repeated) {
                    ("string", false) => "string",
                    ("string", true) => "array",
                    ("uint64", false) => "string/uint64",
                    ("bool", false) => "boolean",
                    ("ambit" | "objectType", false) => "enum",
                    ("cosmos.base.v1beta1.Coin", false) => "object",
                    (other, _) => panic!("{}.{name}: no JSON type for {other}", def.name),
                };
                (name.clone(), ty.to_string())
            })
            .collect();
        let ours: Vec<(String, String)> = def
            .fields
            .iter()
            .map(|f| (f.name.to_string(), table_type(&f.ty)))
            .collect();
        assert_eq!(ours, theirs, "{}", def.name);
    }
}

/// Where the docs show a chain record (a JSON example under its wrapper key), every
/// field it shows is one of the chain's: an agent that learns from the docs learns the
/// chain's names. Examples may leave fields out (a lean answer does).
#[test]
fn the_docs_examples_show_only_the_chains_fields() {
    fn check(v: &Value, at: &str, problems: &mut Vec<String>, records_seen: &mut usize) {
        match v {
            Value::Object(obj) => {
                for (key, value) in obj {
                    let Some(kind) = EntityKind::from_rest_key(key) else {
                        continue;
                    };
                    let Value::Object(record) = value else {
                        continue;
                    };
                    *records_seen += 1;
                    let answer = records::single_response(kind);
                    // `"...": "..."` marks fields left out.
                    let elided = |f: &str| f == "..." || f == "…";
                    for field in record.keys().filter(|f| !elided(f)) {
                        if records::record_of(kind).field(field).is_none() {
                            problems.push(format!("{at}: {key}.{field} is not the chain's"));
                        }
                    }
                    // The blocks beside the record: the answer's other messages.
                    for (section, block) in obj.iter().filter(|(k, _)| *k != key) {
                        let Some(Ty::Msg(message)) = answer.field(section).map(|f| f.ty) else {
                            continue;
                        };
                        let fields = block.as_object().into_iter().flatten().map(|(k, _)| k);
                        for field in fields.filter(|f| !elided(f)) {
                            if message.field(field).is_none() {
                                problems
                                    .push(format!("{at}: {section}.{field} is not the chain's"));
                            }
                        }
                    }
                }
                for value in obj.values() {
                    check(value, at, problems, records_seen);
                }
            }
            Value::Array(items) => items
                .iter()
                .for_each(|i| check(i, at, problems, records_seen)),
            _ => {}
        }
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md")];
    let mut dirs = vec![root.join("docs"), root.join("book/src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    let (mut problems, mut seen) = (Vec::new(), 0);
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for block in text.split("```json\n").skip(1) {
            let body = block.split("```").next().unwrap_or("");
            if let Ok(v) = serde_json::from_str::<Value>(body) {
                let at = file.strip_prefix(root).unwrap().display().to_string();
                check(&v, &at, &mut problems, &mut seen);
            }
        }
    }
    assert!(
        seen >= 10,
        "only {seen} records found in the docs' examples"
    );
    assert!(problems.is_empty(), "{problems:#?}");
}

/// The weapon names the attack writes are `keys.proto`'s `techWeaponSystem`, in its order.
#[test]
fn the_weapon_systems_are_keys_protos() {
    let Some(dir) = support::reference::structsd() else {
        return;
    };
    let text = std::fs::read_to_string(dir.join("proto/structs/structs/keys.proto")).unwrap();
    let at = text
        .find("enum techWeaponSystem")
        .expect("keys.proto declares techWeaponSystem");
    let body = &text[at..];
    let body = &body[body.find('{').unwrap() + 1..body.find('}').unwrap()];
    let mut values: Vec<(u32, &str)> = body
        .split(';')
        .filter_map(|stmt| {
            let (name, number) = stmt.split_once('=')?;
            Some((number.trim().parse().ok()?, name.trim()))
        })
        .collect();
    values.sort();
    let names: Vec<&str> = values.iter().map(|(_, n)| *n).collect();
    assert_eq!(names, structs_console::chain::tx::WEAPON_SYSTEM);
}
