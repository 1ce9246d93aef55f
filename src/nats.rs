//! Game events over NATS, both ways.
//!
//! - [`NatsFeed`] (`--events nats://HOST:PORT`) reads the chain's GRASS subjects
//!   (`structs.>` and the block clock on `consensus`) and turns each message into a
//!   [`GameEvent`] on its own bus, which the core then reads instead of the source's:
//!   the subscription tools, MCP resource updates and the console's event log. It
//!   subscribes with wildcards and filters per entity locally, as GRASS advises for more
//!   than a few entities, so one connection serves every subscription.
//! - [`NatsPublisher`] (`--publish-events nats://...`) publishes a source's own events
//!   (the sim's) in GRASS's shape, so several consoles and servers watch one world.
//!
//! GRASS payloads are flat JSON objects carrying their own `subject` and `category`;
//! planet activity puts its particulars under `detail`. The events published here add
//! `entity`, `changed`, `summary`, `seq` and `tx_hash`, which make a reader's event the
//! same as the writer's; a payload without them is read by looking for the ids it names.
//! Core NATS keeps nothing for a reader that is away: the client reconnects by itself
//! (re-subscribing), and a publisher's messages wait in the client while it does.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt as _;
use serde_json::{Map, Value, json};

use crate::context::trace;
use crate::entity::{EntityId, EntityKind};
use crate::error::{ErrorCode, ToolError};
use crate::events::{EventBus, EventFeed, FeedHealth, GameEvent, category};
use crate::json::chain_int;
use crate::source::GameSource;

/// The subjects a feed reads: every GRASS subject and the block clock.
pub const SUBJECTS: [&str; 2] = ["structs.>", "consensus"];

#[derive(Debug, Default)]
struct Counters {
    received: AtomicU64,
    events: AtomicU64,
    errors: AtomicU64,
    reconnects: AtomicU64,
    connected: std::sync::atomic::AtomicBool,
    /// A disconnection was seen since the last connection (the next `Connected` is a
    /// reconnection).
    lost: std::sync::atomic::AtomicBool,
    height: AtomicU64,
    last_error: Mutex<Option<String>>,
    latency_ms: Mutex<Option<f64>>,
}

impl Counters {
    fn error(&self, what: String) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        *self.last_error.lock().unwrap_or_else(|e| e.into_inner()) = Some(what);
    }
}

/// Connects with the client's own reconnection (forever, backing off), recording
/// connection changes in `counters`.
async fn connect(url: &str, counters: Arc<Counters>) -> Result<async_nats::Client, ToolError> {
    let c = counters.clone();
    let options = async_nats::ConnectOptions::new()
        .name("structs-console")
        .connection_timeout(Duration::from_secs(5))
        .max_reconnects(None)
        .reconnect_delay_callback(|attempts| {
            Duration::from_millis((100u64 << attempts.min(6)).min(5000))
        })
        .event_callback(move |event| {
            let c = c.clone();
            async move {
                match event {
                    async_nats::Event::Connected => {
                        c.connected.store(true, Ordering::Relaxed);
                        if c.lost.swap(false, Ordering::Relaxed) {
                            c.reconnects.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    async_nats::Event::Disconnected => {
                        c.connected.store(false, Ordering::Relaxed);
                        c.lost.store(true, Ordering::Relaxed);
                        c.error("disconnected from the NATS server; reconnecting".into());
                    }
                    other => c.error(other.to_string()),
                }
            }
        });
    let client = options.connect(url).await.map_err(|e| {
        ToolError::new(
            ErrorCode::ApiUnavailable,
            format!("cannot connect to the NATS server at {url}: {e}"),
        )
    })?;
    counters.connected.store(true, Ordering::Relaxed);
    Ok(client)
}

/// What the feed tells its source besides the events (the REST source keeps its cache
/// true by it).
pub enum Heard<'a> {
    /// A new block height, from `consensus`.
    Height(u64),
    /// Entities a message says changed; told before the event is published, so that a
    /// reader told of the change reads it fresh.
    Changed(&'a [EntityId]),
}

/// A listener for [`Heard`].
pub type OnHeard = Box<dyn Fn(Heard<'_>) + Send + Sync>;

/// Events read from NATS.
pub struct NatsFeed {
    url: String,
    bus: EventBus,
    counters: Arc<Counters>,
    task: tokio::task::JoinHandle<()>,
    _client: async_nats::Client,
}

impl NatsFeed {
    /// Connects and subscribes; `on_heard` hears each new block height from
    /// `consensus` and the entities each event changed (the REST source uses them to
    /// drop what its cache holds on time).
    pub async fn connect(url: &str, on_heard: Option<OnHeard>) -> Result<Arc<NatsFeed>, ToolError> {
        let counters = Arc::new(Counters::default());
        let client = connect(url, counters.clone()).await?;
        let mut subs = Vec::new();
        for subject in SUBJECTS {
            subs.push(client.subscribe(subject).await.map_err(|e| {
                ToolError::new(
                    ErrorCode::ApiUnavailable,
                    format!("cannot subscribe to {subject} on {url}: {e}"),
                )
            })?);
        }
        // The subscriptions are in place once the server has them.
        client.flush().await.map_err(|e| {
            ToolError::new(ErrorCode::ApiUnavailable, format!("NATS flush failed: {e}"))
        })?;
        let bus = EventBus::new();
        let (b, c) = (bus.clone(), counters.clone());
        let task = tokio::spawn(async move {
            let mut messages = futures_util::stream::select_all(subs);
            while let Some(m) = messages.next().await {
                c.received.fetch_add(1, Ordering::Relaxed);
                let payload: Value = match serde_json::from_slice(&m.payload) {
                    Ok(v @ Value::Object(_)) => v,
                    _ => {
                        c.error(format!("a message on {} is not a JSON object", m.subject));
                        continue;
                    }
                };
                if let Some(ms) = latency_ms(&payload) {
                    *c.latency_ms.lock().unwrap_or_else(|e| e.into_inner()) = Some(ms);
                }
                let known = c.height.load(Ordering::Relaxed);
                if m.subject.as_str() == "consensus" {
                    if let Some(h) = payload.get("height").and_then(chain_int) {
                        c.height.fetch_max(h, Ordering::Relaxed);
                        if let Some(f) = &on_heard {
                            f(Heard::Height(h));
                        }
                    }
                    continue;
                }
                match from_grass(m.subject.as_str(), &payload, known) {
                    Some(event) => {
                        c.events.fetch_add(1, Ordering::Relaxed);
                        if let Some(f) = &on_heard {
                            f(Heard::Changed(&event.changed));
                        }
                        b.publish(event);
                    }
                    None => c.error(format!("no entity in a message on {}", m.subject)),
                }
            }
        });
        Ok(Arc::new(NatsFeed {
            url: url.to_string(),
            bus,
            counters,
            task,
            _client: client,
        }))
    }
}

impl Drop for NatsFeed {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl EventFeed for NatsFeed {
    fn bus(&self) -> EventBus {
        self.bus.clone()
    }

    fn health(&self) -> FeedHealth {
        let c = &self.counters;
        FeedHealth {
            url: self.url.clone(),
            connected: c.connected.load(Ordering::Relaxed),
            received: c.received.load(Ordering::Relaxed),
            events: c.events.load(Ordering::Relaxed),
            errors: c.errors.load(Ordering::Relaxed),
            reconnects: c.reconnects.load(Ordering::Relaxed),
            latency_ms: *c.latency_ms.lock().unwrap_or_else(|e| e.into_inner()),
            last_error: c
                .last_error
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        }
    }
}

/// A source's events published to NATS.
pub struct NatsPublisher {
    counters: Arc<Counters>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    client: async_nats::Client,
}

impl NatsPublisher {
    /// Connects and publishes every event of `source`'s bus from now on, and each new
    /// block height on `consensus`.
    pub async fn start(url: &str, source: Arc<dyn GameSource>) -> Result<NatsPublisher, ToolError> {
        let Some(bus) = source.events() else {
            return Err(ToolError::new(
                ErrorCode::ToolExecutionFailed,
                format!(
                    "the {} source has no events of its own to publish",
                    source.info().name
                ),
            ));
        };
        let counters = Arc::new(Counters::default());
        let client = connect(url, counters.clone()).await?;
        let mut rx = bus.subscribe();
        let (cl, c) = (client.clone(), counters.clone());
        let events = tokio::spawn(async move {
            loop {
                let event = match rx.recv().await {
                    Ok(e) => e,
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                        c.error(format!(
                            "{n} events not published: the publisher fell behind"
                        ));
                        continue;
                    }
                    Err(_) => return,
                };
                let (subject, payload) = to_grass(&event);
                match publish_traced(&cl, &event, subject, payload.to_string()).await {
                    Ok(()) => {
                        c.events.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => c.error(format!("publish failed: {e}")),
                }
            }
        });
        let (cl, c) = (client.clone(), counters.clone());
        let blocks = tokio::spawn(async move {
            let mut last = 0;
            loop {
                let h = source.info().block_height;
                if h != last {
                    last = h;
                    let payload = json!({"subject": "consensus", "category": "block",
                        "height": h, "updated_at": chrono::Utc::now().to_rfc3339()});
                    if let Err(e) = cl.publish("consensus", payload.to_string().into()).await {
                        c.error(format!("publish failed: {e}"));
                    }
                }
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        });
        Ok(NatsPublisher {
            counters,
            tasks: vec![events, blocks],
            client,
        })
    }

    /// Events handed to the client so far.
    pub fn published(&self) -> u64 {
        self.counters.events.load(Ordering::Relaxed)
    }

    /// Waits until the server has everything handed over so far.
    pub async fn flush(&self) -> Result<(), ToolError> {
        self.client
            .flush()
            .await
            .map_err(|e| ToolError::new(ErrorCode::ApiUnavailable, format!("NATS flush: {e}")))
    }
}

impl Drop for NatsPublisher {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

/// How long ago a payload's `time` or `updated_at` was, when it has one.
fn latency_ms(payload: &Value) -> Option<f64> {
    let text = payload
        .get("time")
        .or_else(|| payload.get("updated_at"))?
        .as_str()?;
    let at = chrono::DateTime::parse_from_rfc3339(text).ok()?;
    let ms =
        (chrono::Utc::now() - at.with_timezone(&chrono::Utc)).num_microseconds()? as f64 / 1000.0;
    (ms >= 0.0).then_some(ms)
}

/// The subject and payload GRASS would use for one of the sim's events: planet activity
/// on `structs.planet.{planet}.{player}` when a planet is involved, player and guild rows
/// on theirs, anything else on its grid subject.
pub fn to_grass(event: &GameEvent) -> (String, Value) {
    let planet = event
        .changed
        .iter()
        .chain(std::iter::once(&event.entity))
        .find(|id| id.kind == EntityKind::Planet)
        .copied();
    let player = event
        .changed
        .iter()
        .find(|id| id.kind == EntityKind::Player)
        .map_or_else(|| "noPlayer".to_string(), ToString::to_string);
    let subject = match (planet, event.entity.kind) {
        (Some(p), _) => format!("structs.planet.{p}.{player}"),
        (None, EntityKind::Player) => format!("structs.player.noGuild.{}", event.entity),
        (None, EntityKind::Guild) => format!("structs.guild.{}", event.entity),
        (None, kind) => format!("structs.grid.{}.{}", kind.name(), event.entity),
    };
    let mut p = Map::new();
    p.insert("subject".into(), json!(subject));
    p.insert("category".into(), json!(event.category));
    p.insert("time".into(), json!(chrono::Utc::now().to_rfc3339()));
    p.insert("seq".into(), json!(event.seq));
    if let Some(planet) = planet {
        p.insert("planet_id".into(), json!(planet));
    }
    p.insert("player_id".into(), json!(player));
    p.insert("block_height".into(), json!(event.block));
    p.insert("detail".into(), event.detail.clone());
    p.insert("entity".into(), json!(event.entity));
    p.insert("changed".into(), json!(event.changed));
    p.insert("summary".into(), json!(event.summary));
    if let Some(tx) = &event.tx_hash {
        p.insert("tx_hash".into(), json!(tx));
    }
    (subject, Value::Object(p))
}

/// The most entities one event read from NATS names as changed.
pub const MAX_CHANGED: usize = 64;

/// The entity ids a value names, in order of appearance, without repeats, up to
/// [`MAX_CHANGED`] in `out`.
fn ids_in(v: &Value, out: &mut Vec<EntityId>) {
    let mut seen: std::collections::HashSet<EntityId> = out.iter().copied().collect();
    walk_ids(v, out, &mut seen);
}

fn walk_ids(v: &Value, out: &mut Vec<EntityId>, seen: &mut std::collections::HashSet<EntityId>) {
    if out.len() >= MAX_CHANGED {
        return;
    }
    match v {
        Value::String(t) => {
            if let Ok(id) = EntityId::parse(t)
                && id.index > 0
                && seen.insert(id)
            {
                out.push(id);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| walk_ids(x, out, seen)),
        Value::Object(o) => o.values().for_each(|x| walk_ids(x, out, seen)),
        _ => {}
    }
}

/// The event a GRASS message stands for, or `None` when it names no entity. `height`
/// is the last block height seen, for payloads that carry none.
pub fn from_grass(subject: &str, payload: &Value, height: u64) -> Option<GameEvent> {
    let text = |k: &str| payload.get(k).and_then(Value::as_str);
    let grass_category = text("category").unwrap_or("");
    let detail = payload.get("detail");
    // The entity: our own field, then what planet activity is about, then the row's.
    let entity = text("entity")
        .and_then(|t| EntityId::parse(t).ok())
        .or_else(|| {
            let d = detail?;
            [
                "struct_id",
                "attackerStructId",
                "fleet_id",
                "defender_struct_id",
                "planet_id",
            ]
            .iter()
            .find_map(|k| d.get(*k).and_then(Value::as_str))
            .and_then(|t| EntityId::parse(t).ok())
        })
        .or_else(|| {
            [
                "object_id",
                "planet_id",
                "id",
                "player_id",
                "destination_id",
            ]
            .iter()
            .find_map(|k| text(k))
            .and_then(|t| EntityId::parse(t).ok())
        })
        .or_else(|| {
            subject
                .split('.')
                .rev()
                .find_map(|t| EntityId::parse(t).ok().filter(|id| id.index > 0))
        })?;
    let mut changed = vec![entity];
    match payload.get("changed") {
        Some(c @ Value::Array(_)) => ids_in(c, &mut changed),
        _ => {
            if let Some(d) = detail {
                ids_in(d, &mut changed);
            }
            ids_in(payload, &mut changed);
        }
    }
    let block = ["block_height", "height"]
        .iter()
        .find_map(|k| payload.get(*k).and_then(chain_int))
        .or_else(|| detail.and_then(|d| d.get("block")).and_then(chain_int))
        .unwrap_or(height);
    let cat = category(grass_category);
    let mut detail_out = match detail {
        Some(d) => d.clone(),
        None => {
            let mut row = payload.clone();
            if let Some(o) = row.as_object_mut() {
                o.remove("subject");
                o.remove("category");
            }
            row
        }
    };
    if cat == "other"
        && let Some(o) = detail_out.as_object_mut()
    {
        o.insert("grass_category".into(), json!(grass_category));
    }
    let summary = text("summary").map(str::to_string).unwrap_or_else(|| {
        match (grass_category, payload.get("value")) {
            (c, Some(v)) if !c.is_empty() => format!("{entity} {c} = {}", plain(v)),
            (c, _) if !c.is_empty() => format!("{c} {entity}"),
            _ => format!("{entity} on {subject}"),
        }
    });
    Some(GameEvent {
        seq: 0,
        block,
        category: cat,
        entity,
        changed,
        summary,
        detail: detail_out,
        tx_hash: text("tx_hash").map(str::to_string),
        trace: None,
    })
}

fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Publishes one event. An event a traced call caused is a PRODUCER span of that
/// call (`publish {subject}`, by the messaging conventions), and carries its trace
/// context in the message's headers, so a consumer can go on with the trace.
async fn publish_traced(
    client: &async_nats::Client,
    event: &GameEvent,
    subject: String,
    payload: String,
) -> Result<(), async_nats::PublishError> {
    let Some(parent) = event.trace.as_deref().filter(|_| trace::on()) else {
        return client.publish(subject, payload.into()).await;
    };
    use tracing::Instrument as _;
    let span = tracing::info_span!(
        target: trace::TARGET, "publish", otel.name = %format_args!("publish {subject}"),
        otel.kind = "producer", messaging.system = "nats",
        messaging.operation.type = "send", messaging.destination.name = %subject,
        messaging.message.body.size = payload.len() as i64
    );
    trace::set_parent(&span, parent);
    let mut headers = async_nats::HeaderMap::new();
    for (name, value) in trace::headers_of(&span) {
        headers.insert(name.as_str(), value.as_str());
    }
    client
        .publish_with_headers(subject, headers, payload.into())
        .instrument(span)
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_events_survive_the_round_trip() {
        let id = EntityId::parse("5-7").unwrap();
        let planet = EntityId::parse("2-3").unwrap();
        let event = GameEvent {
            seq: 12,
            block: 120_005,
            category: "struct_status",
            entity: id,
            changed: vec![id, planet, EntityId::parse("1-4").unwrap()],
            summary: "5-7 online".into(),
            detail: json!({"struct_id": "5-7", "status": "online", "status_old": "built"}),
            tx_hash: Some("AB".repeat(32)),
            trace: None,
        };
        let (subject, payload) = to_grass(&event);
        assert_eq!(subject, "structs.planet.2-3.1-4");
        let back = from_grass(&subject, &payload, 0).unwrap();
        assert_eq!(back, GameEvent { seq: 0, ..event });
    }

    #[test]
    fn a_message_naming_many_ids_is_cut_short_quickly() {
        let ids: Vec<String> = (1..200_000).map(|i| format!("5-{i}")).collect();
        let payload = json!({"subject": "structs.planet.2-1", "category": "struct_attack",
            "detail": {"struct_id": "5-1", "targets": ids}});
        let started = std::time::Instant::now();
        let e = from_grass("structs.planet.2-1", &payload, 1).unwrap();
        assert_eq!(e.changed.len(), MAX_CHANGED);
        assert_eq!(e.changed[0].to_string(), "5-1");
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
    }

    #[test]
    fn grass_planet_activity_and_grid_rows_are_read() {
        let payload = json!({"subject": "structs.planet.2-1.1-1", "category": "struct_health",
            "time": "2026-11-21T10:00:00Z", "seq": 4, "planet_id": "2-1", "player_id": "1-1",
            "detail": {"struct_id": "5-9", "health": 2, "health_old": 3}});
        let e = from_grass("structs.planet.2-1.1-1", &payload, 77).unwrap();
        assert_eq!(e.category, "struct_health");
        assert_eq!(e.entity.to_string(), "5-9");
        assert_eq!(
            e.changed
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
            ["5-9", "2-1", "1-1"]
        );
        assert_eq!(e.block, 77);
        assert_eq!(e.detail["health"], 2);

        let grid = json!({"subject": "structs.grid.player.1-3", "category": "ore",
            "object_id": "1-3", "object_type": "player", "attribute_type": "ore",
            "value": 40, "value_old": 35, "updated_at": "2026-11-21T10:00:00Z"});
        let e = from_grass("structs.grid.player.1-3", &grid, 5).unwrap();
        assert_eq!((e.category, e.entity.to_string()), ("ore", "1-3".into()));
        assert_eq!(e.summary, "1-3 ore = 40");

        let odd = json!({"subject": "structs.x.9-2", "category": "something_new"});
        let e = from_grass("structs.x.9-2", &odd, 5).unwrap();
        assert_eq!(e.category, "other");
        assert_eq!(e.detail["grass_category"], "something_new");
        assert!(from_grass("structs.x", &json!({"category": "ore"}), 5).is_none());
    }
}
