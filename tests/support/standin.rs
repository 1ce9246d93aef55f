//! A stand-in chain node written from the node's `openapi.yml`, not from the sim: each
//! GET route answers with a value made from that route's response schema, field by
//! field, so the REST source and the console are tested against the chain's shapes
//! rather than against this project's own picture of them.
//!
//! Three records of each kind (`K-1` … `K-3`); values chosen by field name where a
//! reader cares (ids that point at each other, a destroyed struct, a named player, an
//! alpha balance), the type's zero elsewhere. Every answer carries the block height in
//! the gateway's header; an index past 3 is the node's `object not found`, a route the
//! document lacks its 501.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};
use structs_console::EntityKind;
use structs_console::source::rest::wire::HEIGHT_HEADER;

use super::reference::OpenApi;

/// The height every answer names.
pub const HEIGHT: u64 = 424_242;

/// Records of each kind.
pub const RECORDS: u64 = 3;

/// The address of the stand-in's player `i`.
pub fn address(i: u64) -> String {
    format!("structs1node{i}")
}

pub struct StandIn {
    pub url: String,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for StandIn {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl StandIn {
    /// Serves on a free loopback port, on the current runtime.
    pub async fn start(api: OpenApi) -> StandIn {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let app = Router::new().fallback(answer).with_state(Arc::new(api));
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        StandIn { url, task }
    }
}

fn with_height(status: StatusCode, body: Value) -> Response {
    let mut r = (status, axum::Json(body)).into_response();
    r.headers_mut()
        .insert(HEIGHT_HEADER, axum::http::HeaderValue::from(HEIGHT));
    r
}

fn not_found() -> Response {
    with_height(
        StatusCode::INTERNAL_SERVER_ERROR,
        json!({"code": 2, "message": "codespace structs code 1050: object not found", "details": []}),
    )
}

/// The template of the document's paths that `path` fills, and its parameters.
fn route(api: &OpenApi, path: &str) -> Option<(String, Vec<(String, String)>)> {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let mut best: Option<(String, Vec<(String, String)>)> = None;
    for template in api.query_paths() {
        let parts: Vec<&str> = template.trim_matches('/').split('/').collect();
        if parts.len() != segments.len() {
            continue;
        }
        let mut params = Vec::new();
        let fits = parts.iter().zip(&segments).all(|(p, s)| {
            match p.strip_prefix('{').and_then(|p| p.strip_suffix('}')) {
                Some(name) => {
                    params.push((name.to_string(), s.to_string()));
                    true
                }
                None => p == s,
            }
        });
        // The most literal template wins (`fleet_by_index/{index}` over `{id}`).
        if fits && best.as_ref().is_none_or(|(_, p)| params.len() < p.len()) {
            best = Some((template, params));
        }
    }
    best
}

async fn answer(State(api): State<Arc<OpenApi>>, request: Request) -> Response {
    let path = request.uri().path().to_string();
    let Some((template, params)) = route(&api, &path) else {
        return with_height(
            StatusCode::NOT_IMPLEMENTED,
            json!({"code": 12, "message": "Not Implemented", "details": []}),
        );
    };
    let segment = template.trim_start_matches("/structs/");
    let segment = segment.split('/').next().unwrap_or("");
    let kind = EntityKind::ALL
        .into_iter()
        .find(|k| segment == k.name() || segment.starts_with(&format!("{}_", k.name())));
    // One record asked for: its index, which must be one the stand-in has.
    let mut index = 1;
    for (name, value) in &params {
        let n = match name.as_str() {
            "id" => value.rsplit('-').next().and_then(|i| i.parse::<u64>().ok()),
            "index" => value.parse::<u64>().ok(),
            "address" => value
                .strip_prefix("structs1node")
                .and_then(|i| i.parse::<u64>().ok()),
            _ => Some(1),
        };
        match n {
            Some(n) if (1..=RECORDS).contains(&n) => index = n,
            _ if name == "address" && template == "/structs/address/{address}" => {
                // A node answers an address no player holds with player 1-0.
                return with_height(
                    StatusCode::OK,
                    json!({"address": value, "playerId": "1-0", "permissions": "0"}),
                );
            }
            _ => return not_found(),
        }
    }
    let ctx = Ctx { kind, index };
    let schema = api.answer_schema(&template);
    with_height(StatusCode::OK, make(&api, schema, "", &ctx))
}

/// What a value is made for: the kind of the route, the record's index.
#[derive(Clone, Copy)]
struct Ctx {
    kind: Option<EntityKind>,
    index: u64,
}

fn id(kind: EntityKind, index: u64) -> Value {
    Value::String(format!("{}-{index}", kind.code()))
}

/// A value for the schema of the field `name`.
fn make(api: &OpenApi, schema: &Value, name: &str, ctx: &Ctx) -> Value {
    let schema = api.resolve(schema);
    let ty = schema
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("object");
    match ty {
        "object" => {
            let mut out = Map::new();
            for (field, sub) in schema["properties"].as_object().into_iter().flatten() {
                out.insert(field.clone(), make(api, sub, field, ctx));
            }
            Value::Object(out)
        }
        "array" => {
            let items = &schema["items"];
            let item = api.resolve(items);
            let records = item.get("type").and_then(Value::as_str) == Some("object")
                || item.get("properties").is_some();
            if records {
                // A list: every record of the kind.
                return Value::Array(
                    (1..=RECORDS)
                        .map(|i| make(api, items, name, &Ctx { index: i, ..*ctx }))
                        .collect(),
                );
            }
            match name {
                // A slot row: one struct in its first slot.
                "space" | "air" | "land" | "water" => {
                    json!([id(EntityKind::Struct, ctx.index), "", "", ""])
                }
                "structDefenders" => json!([id(EntityKind::Struct, 2)]),
                _ => json!([]),
            }
        }
        "boolean" => Value::Bool(matches!(
            name,
            "isMaterialized" | "isBuilt" | "isDestroyed" | "movable" | "slotBound"
        )),
        "string" => string(schema, name, ctx),
        _ => Value::Null,
    }
}

fn string(schema: &Value, name: &str, ctx: &Ctx) -> Value {
    let i = ctx.index;
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let want = match name {
            "locationType" | "destinationType" | "category" => "planet",
            "operatingAmbit" => "land",
            "joinInfusionMinimumBypassByRequest" | "joinInfusionMinimumBypassByInvite" => {
                "permissioned"
            }
            "status" => "onStation",
            _ => "",
        };
        return values
            .iter()
            .find(|v| *v == want)
            .or_else(|| values.first())
            .cloned()
            .unwrap_or(Value::Null);
    }
    match schema.get("format").and_then(Value::as_str) {
        Some("uint64") => {
            let n: u64 = match name {
                "index" => i,
                // Materialized, built, destroyed: a struct that was lost.
                "status" => 35,
                "blockHeight" => HEIGHT,
                "total" => RECORDS,
                "type" | "id" => 14,
                "maxHealth" => 3,
                "spaceSlots" | "airSlots" | "landSlots" | "waterSlots" => 4,
                "capacity" => 90_000_000,
                "load" => 1_000_000,
                "ore" => 4,
                "lastAction" => HEIGHT - 30,
                _ => 0,
            };
            return Value::String(n.to_string());
        }
        // The next page's key: none, every record is on the first.
        Some("byte") if name == "next_key" => return Value::Null,
        Some("byte") => return Value::String("c3RhbmRpbi1ub2Rl".into()),
        _ => {}
    }
    let kind = ctx.kind.unwrap_or(EntityKind::Player);
    Value::String(match name {
        "id" => format!("{}-{i}", kind.code()),
        "guildId" => format!("0-{i}"),
        "primaryReactorId" => format!("3-{i}"),
        "substationId" | "entrySubstationId" => format!("4-{i}"),
        "planetId" | "locationId" => format!("2-{i}"),
        "fleetId" => format!("9-{i}"),
        "owner" | "playerId" | "controller" | "destinationId" => format!("1-{i}"),
        "commandStruct" | "protectedStructId" | "defendingStructId" => format!("5-{i}"),
        "providerId" => format!("10-{i}"),
        "allocationId" => format!("6-{i}"),
        "sourceObjectId" => format!("3-{i}"),
        "creator" | "primaryAddress" | "address" => address(i),
        "validator" => format!("structsvaloper1standin{i}"),
        "name" => format!("Vega {i}"),
        "denom" => "ualpha".into(),
        "amount" => format!("{}", 12_000_000 * i),
        "commission" | "defaultCommission" => "0.050000000000000000".into(),
        "providerCancellationPenalty" | "consumerCancellationPenalty" => {
            "0.100000000000000000".into()
        }
        "endpoint" => "https://standin.example/guild".into(),
        "class" | "type" => "Ore Extractor".into(),
        _ => String::new(),
    })
}
