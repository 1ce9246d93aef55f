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
use crate::entity::records;
use crate::entity::struct_types::struct_types;
use crate::entity::{EntityId, EntityKind};
use crate::guard::{Access, Check, Exposure, Guard, Refusal};
use crate::source::GameSource;
use crate::source::rest::wire::{
    DEFAULT_LIMIT, HEIGHT_HEADER, NOT_FOUND_MESSAGE, error_body, id_of_key, key_of, lex_next,
    lex_seek, list_key,
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
        .layer(axum::middleware::from_fn_with_state(
            sim.clone(),
            height_header,
        ))
        .layer(axum::middleware::from_fn_with_state(guard, check_request))
        .with_state(App { sim })
}

/// The block height an answer was read at, in the header a node's gateway sets
/// ([`HEIGHT_HEADER`]); on every answer past the guard, errors too.
async fn height_header(
    State(sim): State<Arc<SimSource>>,
    request: Request,
    next: Next,
) -> Response {
    let height = sim.info().block_height;
    let mut response = next.run(request).await;
    response
        .headers_mut()
        .insert(HEIGHT_HEADER, axum::http::HeaderValue::from(height));
    response
}

/// Host, Origin, token, then the body's type: a refusal is a node's error body.
async fn check_request(State(guard): State<Guard>, request: Request, next: Next) -> Response {
    let checked = guard
        .check(request.uri(), request.headers())
        .and_then(|_| crate::guard::body_type(request.method(), request.headers()));
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
    let by = |kind: EntityKind, field: &'static str, counting: Counting| {
        let filter = Filter {
            field,
            value: b.as_str(),
            counting,
        };
        app.sim.with_world(|w| list(w, kind, Some(filter), &q))
    };
    use Counting::{Matches, Store};
    match a.as_str() {
        "planet_by_player" => return by(EntityKind::Planet, "owner", Store),
        "address_by_player" => return by(EntityKind::Address, "playerId", Store),
        "allocation_by_source" => return by(EntityKind::Allocation, "sourceObjectId", Matches),
        "allocation_by_destination" => {
            return by(EntityKind::Allocation, "destinationId", Matches);
        }
        "agreement_by_provider" => return by(EntityKind::Agreement, "providerId", Matches),
        "infusion_by_destination" => return by(EntityKind::Infusion, "destinationId", Matches),
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
    // The sim's own `7-N` and `8-N` (no node has them) read the record they name.
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
        found.unwrap_or_else(|| {
            records::ADDRESS.record([("address", json!(address)), ("playerId", json!("1-0"))])
        }),
    )
}

/// A struct type as the chain writes it: the `StructType` record, integers as strings,
/// the fields the embedded table lacks at their defaults.
fn struct_type_json(raw: &Value) -> Value {
    let Some(fields) = raw.as_object() else {
        return records::STRUCT_TYPE.defaults();
    };
    let set = records::STRUCT_TYPE.fields.iter().filter_map(|f| {
        let v = fields.get(f.name)?;
        Some((
            f.name,
            match v {
                Value::Number(n) => Value::String(n.to_string()),
                other => other.clone(),
            },
        ))
    });
    records::STRUCT_TYPE.record(set)
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

/// What cosmos-sdk's paginator says to a page asked for by key and offset at once.
const BOTH_KEY_AND_OFFSET: &str = "invalid request, either offset or key is expected, got both";

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
    // Go's strconv.ParseBool, as the gateway reads a flag.
    let flag = |name: &str| -> Result<bool, String> {
        match q.get(name).map(String::as_str) {
            None | Some("") => Ok(false),
            Some("1" | "t" | "T" | "TRUE" | "true" | "True") => Ok(true),
            Some("0" | "f" | "F" | "FALSE" | "false" | "False") => Ok(false),
            Some(t) => Err(format!(
                "type mismatch, parameter: {name}, error: strconv.ParseBool: parsing {t:?}: invalid syntax"
            )),
        }
    };
    let key = q.get("pagination.key").filter(|k| !k.is_empty()).cloned();
    let offset = num("pagination.offset")?;
    if key.is_some() && offset.is_some_and(|o| o > 0) {
        return Err(BOTH_KEY_AND_OFFSET.into());
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

/// How a `_by_` route reads its records, as the node's keeper does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Counting {
    /// An index of the matches (`allocation_by_source`, `infusion_by_destination`, …):
    /// the page, the offset and the total count matches only.
    Matches,
    /// The whole store, filtered as it is read (`planet_by_player`,
    /// `address_by_player`): every record read counts toward the page's limit and
    /// offset, only the matches are answered, and the total is the store's.
    Store,
}

/// A list's filter: the records whose `field` is `value`, counted as the route does.
struct Filter<'a> {
    field: &'static str,
    value: &'a str,
    counting: Counting,
}

/// The records of `kind` in the order the node keeps them, each as its store key and
/// the sim's index. Kinds with ids walk the ids' byte order without rendering; an
/// infusion's key is `destinationId/address` (under one destination, the address),
/// an address record's the address.
fn store_order(
    w: &World,
    kind: EntityKind,
    within_destination: bool,
) -> Box<dyn Iterator<Item = (String, u64)> + '_> {
    if !records::has_id(kind) {
        return Box::new(w.keyed_order(kind, within_destination).into_iter());
    }
    let count = w.count(kind);
    Box::new(
        std::iter::successors((count > 0).then_some(1), move |&i| lex_next(i, count))
            .map(move |i| (EntityId::new(kind, i).to_string(), i)),
    )
}

/// The records of `kind` a page reads, in the store's order (or its reverse) from
/// `key` on, inclusive, each as its key and the sim's index.
fn walk_from<'a>(
    w: &'a World,
    kind: EntityKind,
    key: Option<&'a str>,
    reverse: bool,
    within_destination: bool,
) -> Box<dyn Iterator<Item = (String, u64)> + 'a> {
    if reverse {
        let mut order: Vec<(String, u64)> = store_order(w, kind, within_destination).collect();
        order.reverse();
        if let Some(k) = key {
            order.retain(|(key, _)| key.as_str() <= k);
        }
        return Box::new(order.into_iter());
    }
    match (key, kind) {
        (Some(k), EntityKind::Infusion | EntityKind::Address) => Box::new(
            store_order(w, kind, within_destination).skip_while(move |(key, _)| key.as_str() < k),
        ),
        (Some(k), _) => {
            let count = w.count(kind);
            Box::new(
                std::iter::successors(lex_seek(kind, k, count), move |&i| lex_next(i, count))
                    .map(move |i| (EntityId::new(kind, i).to_string(), i)),
            )
        }
        (None, _) => store_order(w, kind, within_destination),
    }
}

/// One page of `kind`, optionally only the records a filter keeps.
fn list(
    w: &World,
    kind: EntityKind,
    filter: Option<Filter<'_>>,
    q: &HashMap<String, String>,
) -> Response {
    let p = match page_request(q) {
        Ok(p) => p,
        // The keeper wraps what its paginator refuses as an internal error.
        Err(message) if message == BOTH_KEY_AND_OFFSET => {
            return json_response(StatusCode::INTERNAL_SERVER_ERROR, error_body(13, &message));
        }
        Err(message) => return bad_request(&message),
    };
    let key = match &p.key {
        None => None,
        Some(k) => match id_of_key(k) {
            Some(key) => Some(key),
            None => return bad_request("invalid request: pagination.key is not base64"),
        },
    };
    let lister = w.lister();
    let bare = |i: u64| -> Option<Value> {
        let v = lister.render(EntityId::new(kind, i))?;
        kind.core_object(&v).cloned()
    };
    let within_destination = filter
        .as_ref()
        .is_some_and(|f| kind == EntityKind::Infusion && f.field == "destinationId");
    // Whether the record at `i` passes the filter, read from the record's JSON.
    let matches = |i: u64, v: Option<&Value>| -> bool {
        let Some(f) = &filter else { return true };
        match v {
            Some(v) => v[f.field] == f.value,
            None => bare(i).is_some_and(|v| v[f.field] == f.value),
        }
    };
    let counts_all = filter
        .as_ref()
        .is_some_and(|f| f.counting == Counting::Store);
    let walk = walk_from(w, kind, key.as_deref(), p.reverse, within_destination);
    let mut items = Vec::new();
    let mut read = 0usize;
    let mut skipped = 0u64;
    let mut next_key = Value::Null;
    for (key, i) in walk {
        let v = if filter.is_some() { bare(i) } else { None };
        let hit = matches(i, v.as_ref());
        if !hit && !counts_all {
            continue;
        }
        if skipped < p.offset {
            skipped += 1;
            continue;
        }
        if read == p.limit {
            next_key = Value::String(key_of(&key));
            break;
        }
        read += 1;
        if hit && let Some(v) = v.or_else(|| bare(i)) {
            items.push(v);
        }
    }
    let total = if p.key.is_none() && p.count_total {
        match &filter {
            Some(f) if f.counting == Counting::Matches => {
                (1..=w.count(kind)).filter(|&i| matches(i, None)).count() as u64
            }
            _ => w.count(kind),
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
    if records::list_has_status(kind) {
        // The chain's answer has the field; the node never fills it.
        out.insert("status".into(), json!([]));
    }
    json_response(StatusCode::OK, Value::Object(out))
}
