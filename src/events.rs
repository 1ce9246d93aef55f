//! The in-process event bus: what changed in the game, as it changes. The sim source
//! publishes one [`GameEvent`] per state change of an applied action; subscription
//! tools, MCP resource updates and the console's event log read it.
//!
//! The bus is a bounded broadcast channel: a reader that falls more than
//! [`CAPACITY`] events behind loses the oldest and is told how many (never blocks the
//! game). Every event carries a sequence number so a reader can see gaps.

use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;
use serde_json::Value;
use tokio::sync::broadcast;

use crate::entity::EntityId;

/// Events kept for slow readers before the oldest are dropped.
pub const CAPACITY: usize = 4096;

/// One change in the game.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GameEvent {
    /// Increases by one per event on a bus, from 1.
    pub seq: u64,
    /// The block height it happened at.
    pub block: u64,
    /// What happened, in the chain's event vocabulary where it has one
    /// (`struct_status`, `struct_health`, `planet_raid`, `ore_mined`, ...).
    pub category: &'static str,
    /// The entity the event is about.
    pub entity: EntityId,
    /// Every entity whose state changed with it (the subject first); subscriptions on
    /// any of them are notified.
    pub changed: Vec<EntityId>,
    /// A one-line description for logs and the console.
    pub summary: String,
    /// The event's details (old and new values, damage, the proof used).
    pub detail: Value,
    /// The transaction it came from, when it came from one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tx_hash: Option<String>,
    /// The span of the call that caused it, as a `traceparent`, when traces are on
    /// ([`EventBus::publish`] fills it in): what it is published under to NATS.
    #[serde(skip)]
    pub trace: Option<String>,
}

/// A publisher of [`GameEvent`]s. Cloning shares the bus.
#[derive(Debug, Clone)]
pub struct EventBus {
    sender: broadcast::Sender<GameEvent>,
    seq: std::sync::Arc<AtomicU64>,
}

impl Default for EventBus {
    fn default() -> Self {
        EventBus::new()
    }
}

impl EventBus {
    pub fn new() -> EventBus {
        let (sender, _) = broadcast::channel(CAPACITY);
        EventBus {
            sender,
            seq: std::sync::Arc::new(AtomicU64::new(0)),
        }
    }

    /// Numbers and sends an event; with no reader it is simply dropped.
    pub fn publish(&self, mut event: GameEvent) -> u64 {
        let seq = self.seq.fetch_add(1, Ordering::Relaxed) + 1;
        event.seq = seq;
        if event.trace.is_none() {
            event.trace = crate::context::trace::current_traceparent();
        }
        let _ = self.sender.send(event);
        seq
    }

    /// A reader of every event published from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<GameEvent> {
        self.sender.subscribe()
    }

    /// Events published so far.
    pub fn published(&self) -> u64 {
        self.seq.load(Ordering::Relaxed)
    }
}

/// Event categories known by name: the sim's and the chain's GRASS vocabulary (planet
/// activity, grid attributes, players, guilds, inventory, providers). An event read from
/// outside with another category is filed as `other`, its own name kept in its details,
/// so a stream cannot grow this set.
pub const CATEGORIES: &[&str] = &[
    // the sim
    "struct_status",
    "struct_block_build_start",
    "struct_defense_add",
    "struct_defense_remove",
    "struct_attack",
    "block_raid_start",
    "fleet_move",
    "ore_mined",
    "ore_refined",
    "planet_explore",
    "planet_raid",
    // GRASS planet activity
    "raid_status",
    "fleet_arrive",
    "fleet_depart",
    "struct_health",
    "struct_move",
    "struct_defender_clear",
    "struct_block_ore_mine_start",
    "struct_block_ore_refine_start",
    "shield_change",
    // GRASS grid attributes
    "ore",
    "fuel",
    "capacity",
    "load",
    "structsLoad",
    "power",
    "connectionCapacity",
    "connectionCount",
    "allocationPointerStart",
    "allocationPointerEnd",
    "proxyNonce",
    "lastAction",
    "nonce",
    "ready",
    "checkpointBlock",
    // GRASS rows
    "player_consensus",
    "player_meta",
    "player_address",
    "player_address_pending",
    "guild_consensus",
    "guild_meta",
    "guild_membership",
    "provider",
    "agreement",
    // GRASS inventory (ledger actions)
    "mined",
    "refined",
    "seized",
    "infused",
    "defused",
    "sent",
    "received",
    "minted",
    "burned",
    "forfeited",
    "diverted",
    // the block clock
    "block",
];

/// The static name of a category, or `other`.
pub fn category(name: &str) -> &'static str {
    CATEGORIES
        .iter()
        .find(|c| **c == name)
        .copied()
        .unwrap_or("other")
}

/// How an event stream from outside the process is doing (the console's header).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FeedHealth {
    /// What it reads (`nats://127.0.0.1:4222`).
    pub url: String,
    pub connected: bool,
    /// Messages received, and those turned into events.
    pub received: u64,
    pub events: u64,
    /// Messages that could not be read, and connection errors.
    pub errors: u64,
    /// Times the connection came back after a loss.
    pub reconnects: u64,
    /// Time from a message's publication (its timestamp) to its arrival, in ms, when
    /// messages carry one.
    pub latency_ms: Option<f64>,
    pub last_error: Option<String>,
}

/// An event stream from outside the process (NATS): its own bus and its health.
pub trait EventFeed: Send + Sync {
    fn bus(&self) -> EventBus;
    fn health(&self) -> FeedHealth;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entity::EntityKind;

    fn event(n: u64) -> GameEvent {
        let id = EntityId::new(EntityKind::Struct, n);
        GameEvent {
            seq: 0,
            block: 10,
            category: "struct_status",
            entity: id,
            changed: vec![id],
            summary: format!("{id} online"),
            detail: Value::Null,
            tx_hash: None,
            trace: None,
        }
    }

    #[tokio::test]
    async fn readers_see_events_in_order_with_sequence_numbers() {
        let bus = EventBus::new();
        bus.publish(event(1)); // nobody listening: dropped, but numbered
        let mut rx = bus.subscribe();
        bus.publish(event(2));
        bus.publish(event(3));
        let a = rx.recv().await.unwrap();
        let b = rx.recv().await.unwrap();
        assert_eq!((a.seq, b.seq), (2, 3));
        assert_eq!(a.entity.to_string(), "5-2");
        assert_eq!(bus.published(), 3);
    }

    #[tokio::test]
    async fn a_slow_reader_is_told_what_it_missed() {
        let bus = EventBus::new();
        let mut rx = bus.subscribe();
        for n in 0..(CAPACITY as u64 + 5) {
            bus.publish(event(n + 1));
        }
        match rx.recv().await {
            Err(broadcast::error::RecvError::Lagged(missed)) => assert_eq!(missed, 5),
            other => panic!("expected a lag report, got {other:?}"),
        }
        assert_eq!(rx.recv().await.unwrap().seq, 6);
    }
}
