//! `structs-console serve-rest`: the embedded world over the chain's REST paths and JSON
//! shapes, so a client written for a node (and the REST source) runs against a local
//! world.
//!
//! Served like a node (`query.proto` of structsd): `GET /structs/{kind}/{id}` for every
//! kind, `GET /structs/{kind}` lists with `pagination.key|offset|limit|count_total|
//! reverse` (bare core objects, byte order of the ids, `next_key` the next record's
//! store key), the `_by_` lookups (`planet_by_player`, `address_by_player`,
//! `allocation_by_source`, `allocation_by_destination`, `agreement_by_provider`,
//! `infusion_by_destination`), `fleet_by_index`, `infusion/{destination}/{address}`,
//! `struct_type`, `GET /blockheight`, the latest block at
//! `/cosmos/base/tendermint/v1beta1/blocks/latest`, and `POST /cosmos/tx/v1beta1/txs`.
//! A missing object is HTTP 500 with the gateway's body (`code 2`, `object not found`),
//! an unknown route 501, bad parameters 400, as a node answers.
//!
//! Beyond a node: `/structs/infusion/{id}` and `/structs/address/{id}` also take the
//! sim's `7-N` and `8-N` ids (the chain has no ids for those two kinds), a broadcast
//! takes the transaction's JSON as its bytes, since the sim checks no signatures, and a
//! page holds at most [`MAX_LIMIT`] records. Lookups by address and infusion scan the
//! records (the sim keeps no index by address).
//!
//! Who may call it is [`crate::guard`]'s rule, the same as MCP over HTTP's: loopback
//! unless `--allow-remote` with a bearer token; with a token, `Authorization: Bearer` on
//! every request; bound to loopback, a `Host` on a loopback name; an `Origin`, when sent,
//! on this server's host; and a body only as `application/json`, so that a web page the
//! operator visits cannot post a transaction as a "simple request" (`text/plain`). Each
//! refusal is a node's error body: 401 with gRPC code 16 (and `WWW-Authenticate`), 403
//! with code 7 (`Host`, `Origin`), 415 with code 3 (`Content-Type`).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Path, Query, Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Map, Value, json};
use tokio::net::TcpListener;

use super::faults::{Faults, inject};
use crate::entity::struct_types::struct_types;
use crate::entity::{EntityId, EntityKind};
use crate::guard::{Access, Check, Exposure, Guard, Refusal};
use crate::source::GameSource;
use crate::source::rest::wire::{
    DEFAULT_LIMIT, NOT_FOUND_MESSAGE, error_body, id_of_key, key_of, lex_next, lex_seek, list_key,
};
use crate::source::sim::{SimSource, World};

/// How long [`RestServer::stop`] lets the requests being served finish.
pub const STOP_GRACE: Duration = Duration::from_secs(5);

/// The most records one page of this server holds.
pub const MAX_LIMIT: usize = 10_000;

#[derive(Clone)]
struct App {
    sim: Arc<SimSource>,
}

/// What a refusal to bind names: this face's flag, and what it would expose.
pub const EXPOSURE: Exposure = Exposure {
    flag: "--allow-remote",
    could: "read the served world and change it with a transaction",
};

/// The router over a sim, with a fault layer (latency and one-shot faults) behind the
/// guard (a refused request is not counted nor faulted).
pub fn router(sim: Arc<SimSource>, faults: Faults, guard: Guard) -> Router {
    Router::new()
        .route("/blockheight", get(block_height))
        .route(
            "/cosmos/base/tendermint/v1beta1/blocks/latest",
            get(latest_block),
        )
        .route("/cosmos/tx/v1beta1/txs", axum::routing::post(broadcast))
        .route("/structs/{a}", get(list_route))
        .route("/structs/{a}/{b}", get(one_route))
        .route("/structs/{a}/{b}/{c}", get(three_route))
        .fallback(not_implemented)
        .layer(axum::middleware::from_fn_with_state(faults, inject))
        .layer(axum::middleware::from_fn_with_state(guard, check_request))
        .with_state(App { sim })
}

/// Host, Origin, token, then the body's type: a refusal is a node's error body.
async fn check_request(State(guard): State<Guard>, request: Request, next: Next) -> Response {
    let checked = guard
        .check(request.uri(), request.headers())
        .and_then(|()| crate::guard::body_type(request.method(), request.headers()));
    match checked {
        Ok(()) => next.run(request).await,
        Err(refused) => refuse(&refused),
    }
}

/// A refusal with the gRPC code a node gives for its status.
fn refuse(refused: &Refusal) -> Response {
    let code = match refused.check {
        Check::Token => 16,               // UNAUTHENTICATED
        Check::Host | Check::Origin => 7, // PERMISSION_DENIED
        Check::BodyType => 3,             // INVALID_ARGUMENT
    };
    refused.respond(axum::Json(error_body(code, &refused.message())))
}

/// A running server: its address, its faults, and a way to stop it.
pub struct RestServer {
    pub addr: SocketAddr,
    pub faults: Faults,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

impl RestServer {
    /// Binds `listen` (port 0 picks a free one) and serves `sim` on the current runtime
    /// until [`RestServer::stop`] or drop, to loopback callers with no token.
    pub async fn start(listen: &str, sim: Arc<SimSource>) -> anyhow::Result<RestServer> {
        RestServer::start_with(listen, sim, &Access::default()).await
    }

    /// [`RestServer::start`] with `access`: a non-loopback `listen` needs
    /// `allow_remote` and a token ([`crate::guard::check_bind`]), refused before binding.
    pub async fn start_with(
        listen: &str,
        sim: Arc<SimSource>,
        access: &Access,
    ) -> anyhow::Result<RestServer> {
        let addr = tokio::net::lookup_host(listen)
            .await
            .map_err(|e| anyhow::anyhow!("--listen {listen}: {e}"))?
            .next()
            .ok_or_else(|| anyhow::anyhow!("--listen {listen}: no address"))?;
        access.check_bind(addr, EXPOSURE)?;
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))?;
        RestServer::on_with(listener, sim, access).await
    }

    /// Serves on a listener already bound, to loopback callers with no token.
    pub async fn on(listener: TcpListener, sim: Arc<SimSource>) -> anyhow::Result<RestServer> {
        RestServer::on_with(listener, sim, &Access::default()).await
    }

    /// [`RestServer::on`] with `access`, checked against the listener's address.
    pub async fn on_with(
        listener: TcpListener,
        sim: Arc<SimSource>,
        access: &Access,
    ) -> anyhow::Result<RestServer> {
        let addr = listener.local_addr()?;
        access.check_bind(addr, EXPOSURE)?;
        let faults = Faults::new();
        let guard = Guard::new(addr, access.token.as_deref());
        let app = router(sim, faults.clone(), guard);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await;
        });
        Ok(RestServer {
            addr,
            faults,
            stop: Some(stop),
            task,
        })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops the server: no new connections, idle keep-alive connections closed, a
    /// request being served finishes (a node shutting down; a connection cut in the
    /// middle of an answer is [`super::faults::Fault::Drop`]).
    ///
    /// Returns once every connection is closed, so a client's next request finds the
    /// node gone. A request still running after [`STOP_GRACE`] is cut.
    pub async fn stop(mut self) {
        self.stop.take();
        if tokio::time::timeout(STOP_GRACE, &mut self.task)
            .await
            .is_err()
        {
            self.task.abort();
            let _ = (&mut self.task).await;
        }
    }

    /// Serves until the task ends (the command line's `serve-rest`).
    pub async fn wait(mut self) {
        let _ = (&mut self.task).await;
    }
}

impl Drop for RestServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn json_response(status: StatusCode, v: Value) -> Response {
    (status, axum::Json(v)).into_response()
}

fn not_found() -> Response {
    json_response(
        StatusCode::INTERNAL_SERVER_ERROR,
        error_body(2, NOT_FOUND_MESSAGE),
    )
}

fn bad_request(message: &str) -> Response {
    json_response(StatusCode::BAD_REQUEST, error_body(3, message))
}

async fn not_implemented() -> Response {
    json_response(
        StatusCode::NOT_IMPLEMENTED,
        error_body(12, "Not Implemented"),
    )
}

async fn block_height(State(app): State<App>) -> Response {
    let h = app.sim.info().block_height;
    json_response(StatusCode::OK, json!({"blockHeight": h.to_string()}))
}

async fn latest_block(State(app): State<App>) -> Response {
    let h = app.sim.info().block_height;
    json_response(
        StatusCode::OK,
        json!({"block": {"header": {"chain_id": "structs-sim", "height": h.to_string()}}}),
    )
}

async fn broadcast(State(app): State<App>, body: axum::body::Bytes) -> Response {
    let Ok(req) = serde_json::from_slice::<Value>(&body) else {
        return bad_request("invalid request body: expected JSON with tx_bytes");
    };
    let Some(tx_bytes) = req.get("tx_bytes").and_then(Value::as_str) else {
        return bad_request("invalid empty tx");
    };
    json_response(StatusCode::OK, app.sim.broadcast_now(tx_bytes))
}

/// The kind a route segment names.
fn kind_of(segment: &str) -> Option<EntityKind> {
    EntityKind::ALL.into_iter().find(|k| k.name() == segment)
}

async fn one_route(
    State(app): State<App>,
    Path((a, b)): Path<(String, String)>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let by = |kind: EntityKind, field: &'static str| {
        let value = b.clone();
        app.sim
            .with_world(|w| list(w, kind, Some((field, value.as_str())), &q))
    };
    match a.as_str() {
        "planet_by_player" => return by(EntityKind::Planet, "owner"),
        "address_by_player" => return by(EntityKind::Address, "playerId"),
        "allocation_by_source" => return by(EntityKind::Allocation, "sourceObjectId"),
        "allocation_by_destination" => return by(EntityKind::Allocation, "destinationId"),
        "agreement_by_provider" => return by(EntityKind::Agreement, "providerId"),
        "infusion_by_destination" => return by(EntityKind::Infusion, "destinationId"),
        "fleet_by_index" => {
            let Ok(index) = b.parse::<u64>() else {
                return bad_request(&format!(
                    "type mismatch, parameter: index, error: strconv.ParseUint: parsing {b:?}: invalid syntax"
                ));
            };
            return one(
                &app,
                EntityId::new(EntityKind::Fleet, index),
                EntityKind::Fleet,
            );
        }
        "struct_type" => return struct_type_one(&b),
        _ => {}
    }
    let Some(kind) = kind_of(&a) else {
        return not_implemented().await;
    };
    if kind == EntityKind::Address && !b.starts_with("8-") {
        return address_by_text(&app, &b);
    }
    match EntityId::parse(&b) {
        Ok(id) if id.kind == kind => one(&app, id, kind),
        _ => not_found(),
    }
}

async fn three_route(
    State(app): State<App>,
    Path((a, b, c)): Path<(String, String, String)>,
) -> Response {
    if a != "infusion" {
        return not_implemented().await;
    }
    // A scan of the records (no index), comparing fields without rendering them.
    let found = app.sim.with_world(|w| {
        let at = w
            .infusions
            .iter()
            .position(|f| f.address == c && f.destination.to_string() == b)?;
        w.render(EntityId::new(EntityKind::Infusion, at as u64 + 1))
    });
    match found {
        Some(v) => json_response(StatusCode::OK, v),
        None => not_found(),
    }
}

fn one(app: &App, id: EntityId, kind: EntityKind) -> Response {
    debug_assert_eq!(id.kind, kind);
    match app.sim.with_world(|w| w.render(id)) {
        Some(v) => json_response(StatusCode::OK, v),
        None => not_found(),
    }
}

/// `/structs/address/{address}`: like a node, an unknown address is no error but a
/// record of player `1-0` with no permissions.
fn address_by_text(app: &App, address: &str) -> Response {
    let found = app.sim.with_world(|w| {
        let at = w.addresses.iter().position(|a| a.address == address)?;
        w.render(EntityId::new(EntityKind::Address, at as u64 + 1))
    });
    json_response(
        StatusCode::OK,
        found.unwrap_or_else(|| json!({"address": address, "playerId": "1-0", "permissions": "0"})),
    )
}

/// A struct type with the chain's string integers.
fn struct_type_json(raw: &Value) -> Value {
    match raw {
        Value::Number(n) => Value::String(n.to_string()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| (k.clone(), struct_type_json(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(struct_type_json).collect()),
        other => other.clone(),
    }
}

fn struct_type_one(id: &str) -> Response {
    let Ok(n) = id.parse::<u64>() else {
        return bad_request(&format!(
            "type mismatch, parameter: id, error: strconv.ParseUint: parsing {id:?}: invalid syntax"
        ));
    };
    match struct_types().iter().find(|t| t.raw["id"] == n) {
        Some(t) => json_response(
            StatusCode::OK,
            json!({"StructType": struct_type_json(&t.raw)}),
        ),
        None => not_found(),
    }
}

async fn list_route(
    State(app): State<App>,
    Path(a): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    if a == "struct_type" {
        let items: Vec<Value> = struct_types()
            .iter()
            .map(|t| struct_type_json(&t.raw))
            .collect();
        let total = items.len();
        return json_response(
            StatusCode::OK,
            json!({"StructType": items, "pagination": {"next_key": null, "total": total.to_string()}}),
        );
    }
    let Some(kind) = kind_of(&a) else {
        return not_implemented().await;
    };
    app.sim.with_world(|w| list(w, kind, None, &q))
}

/// The pagination parameters of a request.
struct PageRequest {
    key: Option<String>,
    offset: u64,
    limit: usize,
    count_total: bool,
    reverse: bool,
}

fn page_request(q: &HashMap<String, String>) -> Result<PageRequest, String> {
    let num = |name: &str| -> Result<Option<u64>, String> {
        match q.get(name) {
            None => Ok(None),
            Some(t) if t.is_empty() => Ok(None),
            Some(t) => t.parse::<u64>().map(Some).map_err(|_| {
                format!("type mismatch, parameter: {name}, error: strconv.ParseUint: parsing {t:?}: invalid syntax")
            }),
        }
    };
    let flag = |name: &str| -> Result<bool, String> {
        match q.get(name).map(String::as_str) {
            None | Some("") | Some("false") => Ok(false),
            Some("true") => Ok(true),
            Some(t) => Err(format!(
                "type mismatch, parameter: {name}, error: strconv.ParseBool: parsing {t:?}: invalid syntax"
            )),
        }
    };
    let key = q.get("pagination.key").filter(|k| !k.is_empty()).cloned();
    let offset = num("pagination.offset")?;
    if key.is_some() && offset.is_some_and(|o| o > 0) {
        return Err("invalid request, either offset or key is expected, got both".into());
    }
    let limit = num("pagination.limit")?.unwrap_or(0);
    let mut count_total = flag("pagination.count_total")?;
    let limit = if limit == 0 {
        count_total = true;
        DEFAULT_LIMIT
    } else {
        // A node takes any limit; this server answers at most MAX_LIMIT records a page
        // (and a next_key for the rest), so one request cannot render a whole large world.
        usize::try_from(limit).unwrap_or(usize::MAX).min(MAX_LIMIT)
    };
    Ok(PageRequest {
        key,
        offset: offset.unwrap_or(0),
        limit,
        count_total,
        reverse: flag("pagination.reverse")?,
    })
}

/// One page of `kind`, optionally only the records whose `field` is `value`.
fn list(
    w: &World,
    kind: EntityKind,
    filter: Option<(&str, &str)>,
    q: &HashMap<String, String>,
) -> Response {
    let p = match page_request(q) {
        Ok(p) => p,
        Err(message) => return bad_request(&message),
    };
    let count = w.count(kind);
    let bare = |i: u64| -> Option<Value> {
        let v = w.render(EntityId::new(kind, i))?;
        kind.core_object(&v).cloned()
    };
    let matches = |v: &Value| filter.is_none_or(|(field, value)| v[field] == value);
    // The start of the walk: at the key (inclusive), else the first record.
    let start = match &p.key {
        None => (count > 0).then_some(1),
        Some(k) => match id_of_key(k) {
            Some(id) => lex_seek(kind, &id, count),
            None => return bad_request("invalid request: pagination.key is not base64"),
        },
    };
    let mut order: Box<dyn Iterator<Item = u64>> =
        Box::new(std::iter::successors(start, |&i| lex_next(i, count)));
    if p.reverse {
        let mut all: Vec<u64> =
            std::iter::successors((count > 0).then_some(1), |&i| lex_next(i, count)).collect();
        all.reverse();
        if let Some(k) = &p.key {
            let id = id_of_key(k).unwrap_or_default();
            all.retain(|&i| EntityId::new(kind, i).to_string() <= id);
        }
        order = Box::new(all.into_iter());
    }
    let mut items = Vec::new();
    let mut skipped = 0u64;
    let mut next_key = Value::Null;
    for i in order {
        let Some(v) = bare(i) else { continue };
        if !matches(&v) {
            continue;
        }
        if skipped < p.offset {
            skipped += 1;
            continue;
        }
        if items.len() == p.limit {
            next_key = Value::String(key_of(&EntityId::new(kind, i).to_string()));
            break;
        }
        items.push(v);
    }
    let total = if p.key.is_none() && p.count_total {
        match filter {
            None => count,
            Some(_) => (1..=count)
                .filter(|&i| bare(i).is_some_and(|v| matches(&v)))
                .count() as u64,
        }
    } else {
        0
    };
    let mut out = Map::new();
    out.insert(list_key(kind).into(), Value::Array(items));
    out.insert(
        "pagination".into(),
        json!({"next_key": next_key, "total": total.to_string()}),
    );
    json_response(StatusCode::OK, Value::Object(out))
}
