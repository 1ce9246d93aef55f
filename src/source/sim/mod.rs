//! The embedded simulation source: a generated [`World`] and a [`BlockClock`].

pub mod clock;
pub mod json;
pub mod rules;
pub mod script;
pub mod world;

use std::fmt::Write as _;
use std::sync::RwLock;

use serde_json::Value;

pub use clock::BlockClock;
pub use world::{World, WorldConfig};

use super::{
    BoxFuture, ClockAction, GameSource, IdMatches, ListQuery, Page, SourceInfo, TxOutcome,
};
use crate::chain::{Assume, Requirement, Signed};
use crate::entity::order::lex_next;
use crate::entity::{EntityId, EntityKind};
use crate::error::{ErrorCode, ToolError};
use crate::events::{EventBus, GameEvent};

/// The sim source. Reads take a shared lock on the world; a transaction takes the write
/// lock, so each is applied whole, and publishes its events after the world changed.
pub struct SimSource {
    world: RwLock<World>,
    clock: BlockClock,
    bus: EventBus,
}

impl SimSource {
    pub fn new(config: WorldConfig, clock: BlockClock) -> SimSource {
        SimSource {
            world: RwLock::new(World::generate(config)),
            clock,
            bus: EventBus::new(),
        }
    }

    /// Applies a transaction's messages at the current height, all or none (a
    /// transaction of several messages is applied to a copy that replaces the world
    /// only when every message succeeded).
    pub fn apply(&self, tx: &Value, messages: &[Signed]) -> Result<TxOutcome, ToolError> {
        self.apply_as(tx, messages, None)
    }

    /// [`SimSource::apply`] under a given transaction hash (a broadcast's, the SHA-256 of
    /// its bytes, as a node names it) instead of one made from the JSON.
    pub fn apply_as(
        &self,
        tx: &Value,
        messages: &[Signed],
        hash: Option<String>,
    ) -> Result<TxOutcome, ToolError> {
        let height = self.clock.height();
        let mut world = self.world.write().unwrap_or_else(|e| e.into_inner());
        let mut results = Vec::with_capacity(messages.len());
        let mut changes = Vec::new();
        let outcome = if messages.len() == 1 {
            world
                .apply(&messages[0], height)
                .map(|a| vec![a])
                .map_err(|c| (0, c))
        } else {
            let mut copy = world.clone();
            let mut applied = Vec::new();
            let mut failed = None;
            for (i, m) in messages.iter().enumerate() {
                match copy.apply(m, height) {
                    Ok(a) => applied.push(a),
                    Err(c) => {
                        failed = Some((i, c));
                        break;
                    }
                }
            }
            match failed {
                None => {
                    *world = copy;
                    Ok(applied)
                }
                Some(f) => Err(f),
            }
        };
        drop(world);
        let applied = outcome.map_err(|(index, checked)| refusal(messages, &checked, index))?;
        let tx_hash = hash.unwrap_or_else(|| crate::chain::tx_hash(tx, height));
        for a in applied {
            results.push(a.result);
            changes.extend(a.events);
        }
        let events = changes
            .into_iter()
            .map(|c| {
                let mut e = GameEvent {
                    seq: 0,
                    block: height,
                    category: c.category,
                    entity: c.entity,
                    changed: c.changed,
                    summary: c.summary,
                    detail: c.detail,
                    tx_hash: Some(tx_hash.clone()),
                    trace: None,
                };
                e.seq = self.bus.publish(e.clone());
                e
            })
            .collect();
        Ok(TxOutcome {
            tx_hash,
            height,
            results,
            events,
        })
    }

    /// A broadcast as a node answers it (`{"tx_response": {...}}`). The sim checks no
    /// signatures, so its transaction bytes are the transaction's JSON (base64); bytes
    /// that are not are refused as a node refuses bytes it cannot decode (`sdk` code 2).
    pub fn broadcast_now(&self, tx_bytes: &str) -> Value {
        use base64::Engine as _;
        let height = self.clock.height();
        let response = |hash: String, codespace: &str, code: u32, log: String, events: Value| {
            serde_json::json!({"tx_response": {
                "height": height.to_string(), "txhash": hash, "codespace": codespace,
                "code": code, "data": "", "raw_log": log, "logs": [], "info": "",
                "gas_wanted": "0", "gas_used": "0", "tx": null, "timestamp": "",
                "events": events,
            }})
        };
        let raw = base64::engine::general_purpose::STANDARD
            .decode(tx_bytes.trim())
            .unwrap_or_default();
        let hash = crate::chain::bytes_hash(&raw);
        let tx = match serde_json::from_slice::<Value>(&raw) {
            Ok(tx) if tx.is_object() => tx,
            _ => {
                return response(
                    hash,
                    "sdk",
                    2,
                    "tx parse error".into(),
                    Value::Array(vec![]),
                );
            }
        };
        let messages = match crate::chain::parse_transaction(&tx, "tx_bytes") {
            Ok(m) => m,
            Err(e) => {
                return response(
                    hash,
                    "sdk",
                    2,
                    format!("tx parse error: {}", e.message),
                    Value::Array(vec![]),
                );
            }
        };
        match self.apply_as(&tx, &messages, Some(hash.clone())) {
            Ok(out) => {
                let events = out
                    .events
                    .iter()
                    .map(|e| serde_json::json!({"type": e.category, "entity": e.entity.to_string(), "summary": e.summary}))
                    .collect();
                response(out.tx_hash, "", 0, String::new(), Value::Array(events))
            }
            Err(e) => response(hash, "structs", 1, e.message.clone(), Value::Array(vec![])),
        }
    }

    /// Runs `f` with the world read-locked (tests and benchmarks check invariants).
    pub fn with_world<T>(&self, f: impl FnOnce(&World) -> T) -> T {
        f(&self.read())
    }

    /// Runs `f` with the world write-locked, outside the rules: for tests and scripted
    /// scenarios that need a state the rules would take many actions to reach. Publishes
    /// nothing.
    pub fn with_world_mut<T>(&self, f: impl FnOnce(&mut World) -> T) -> T {
        f(&mut self.world.write().unwrap_or_else(|e| e.into_inner()))
    }

    /// The demo world with a running clock.
    pub fn demo() -> SimSource {
        let config = WorldConfig::demo();
        SimSource::new(config, BlockClock::running(config.genesis_height))
    }

    pub fn clock(&self) -> &BlockClock {
        &self.clock
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, World> {
        self.world.read().unwrap_or_else(|e| e.into_inner())
    }

    fn list_now(&self, q: &ListQuery) -> Result<Page, ToolError> {
        // The index of the last entity shown; the page starts after it.
        let after = match q.after.as_deref() {
            None => None,
            Some(text) => Some(text.parse::<u64>().map_err(|_| {
                ToolError::field(
                    ErrorCode::ValidationInvalidFormat,
                    "page_key",
                    "is not a key this source issued; pass pagination.next_key unchanged",
                )
            })?),
        };
        let world = self.read();
        let lister = world.lister();
        let count = world.count(q.kind);
        // Infusions and addresses come in the order of their keys, as a node keeps
        // them; every other kind in its ids' order.
        let keyed = world.keyed_order(q.kind, false);
        let keys: std::collections::HashMap<u64, String> =
            keyed.iter().map(|(k, i)| (*i, k.clone())).collect();
        let matches = |index: u64, buf: &mut String| -> bool {
            let eid = EntityId::new(q.kind, index);
            if let Some(owner) = q.owner
                && (owner.kind != EntityKind::Player || world.owner_of(eid) != Some(owner.index))
            {
                return false;
            }
            if let Some(guild) = q.guild
                && (guild.kind != EntityKind::Guild || world.guild_of(eid) != Some(guild.index))
            {
                return false;
            }
            if let Some(prefix) = &q.id_prefix {
                buf.clear();
                match keys.get(&index) {
                    // A kind without ids is known by its key.
                    Some(key) => buf.push_str(key),
                    None => {
                        let _ = write!(buf, "{eid}");
                    }
                }
                if !buf.starts_with(prefix.as_str()) {
                    return false;
                }
            }
            true
        };
        // One pass in the chain's order of ids: count every match for `total`, and
        // render the page's matches after `after`. Unfiltered, every index matches, so
        // the walk starts after `after` and stops at the page's end.
        let unfiltered = q.owner.is_none() && q.guild.is_none() && q.id_prefix.is_none();
        let by_key = !keyed.is_empty();
        let first = match (unfiltered && !by_key, after) {
            (true, Some(a)) => lex_next(a, count),
            _ => (count > 0).then_some(1),
        };
        let order: Box<dyn Iterator<Item = u64>> = if by_key {
            Box::new(keyed.iter().map(|(_, i)| *i))
        } else {
            Box::new(std::iter::successors(first, |&i| lex_next(i, count)))
        };
        let mut passed = (unfiltered && !by_key) || after.is_none();
        let mut buf = String::new();
        let mut total = 0;
        let mut items = Vec::with_capacity(q.page_size.min(100));
        let mut last_returned = None;
        let mut next_after = None;
        for index in order {
            if !matches(index, &mut buf) {
                continue;
            }
            total += 1;
            if !passed {
                passed = after == Some(index);
                continue;
            }
            if items.len() < q.page_size {
                if let Some(v) = lister.render(EntityId::new(q.kind, index)) {
                    items.push(v);
                    last_returned = Some(index);
                }
            } else if next_after.is_none() {
                // Another match exists: the next page starts after the last one shown.
                next_after = last_returned;
                if unfiltered && !by_key {
                    break;
                }
            }
        }
        if unfiltered {
            total = count;
        }
        Ok(Page {
            items,
            next_after: next_after.map(|a: u64| a.to_string()),
            total,
        })
    }
}

/// The ids of `kind` (indices 1..=`count`) whose text starts with `prefix`, without
/// visiting them: the indices that start with the digits `d` are, for each width from
/// `d`'s up to `count`'s, one run `d·10^k ..= (d+1)·10^k - 1`. Narrow runs come first,
/// so `1-12` lists `1-12`, then `1-120`…`1-129`, then `1-1200`….
fn ids_with_prefix(kind: EntityKind, count: u64, prefix: &str, limit: usize) -> IdMatches {
    let none = IdMatches::default();
    let head = format!("{}-", kind.code());
    // A prefix shorter than the kind's `N-` matches every id when it is its start.
    let digits = match prefix.strip_prefix(&head) {
        Some(d) => d,
        None if head.starts_with(prefix) => "",
        None => return none,
    };
    if !digits.bytes().all(|b| b.is_ascii_digit()) || digits.starts_with('0') {
        return none;
    }
    if digits.is_empty() {
        let ids = (1..=count.min(limit as u64))
            .map(|i| EntityId::new(kind, i))
            .collect();
        return IdMatches { ids, total: count };
    }
    let Ok(d) = digits.parse::<u64>() else {
        return none;
    };
    let mut ids = Vec::new();
    let mut total = 0u64;
    let (mut lo, mut hi) = (d, d);
    while lo <= count {
        let last = hi.min(count);
        total += last - lo + 1;
        let mut i = lo;
        while i <= last && ids.len() < limit {
            ids.push(EntityId::new(kind, i));
            i += 1;
        }
        let (Some(l), Some(h)) = (
            lo.checked_mul(10),
            hi.checked_mul(10).and_then(|h| h.checked_add(9)),
        ) else {
            break;
        };
        (lo, hi) = (l, h);
    }
    IdMatches { ids, total }
}

impl GameSource for SimSource {
    fn info(&self) -> SourceInfo {
        let world = self.read();
        SourceInfo {
            name: "sim",
            description: format!(
                "seed {}, {} players",
                world.config.seed,
                world.players.len()
            ),
            block_height: self.clock.height(),
            paused: self.clock.is_paused(),
        }
    }

    fn get(&self, id: EntityId) -> BoxFuture<'_, Result<Option<Value>, ToolError>> {
        let v = self.read().render(id);
        Box::pin(async move { Ok(v) })
    }

    fn list(&self, query: ListQuery) -> BoxFuture<'_, Result<Page, ToolError>> {
        let page = self.list_now(&query);
        Box::pin(async move { page })
    }

    fn ids_with_prefix(
        &self,
        kind: EntityKind,
        prefix: String,
        limit: usize,
    ) -> BoxFuture<'_, Result<IdMatches, ToolError>> {
        let count = self.read().count(kind);
        let found = ids_with_prefix(kind, count, &prefix, limit);
        Box::pin(async move { Ok(found) })
    }

    fn submit(
        &self,
        tx: Value,
        messages: Vec<Signed>,
    ) -> BoxFuture<'_, Result<TxOutcome, ToolError>> {
        let out = self.apply(&tx, &messages);
        Box::pin(async move { out })
    }

    fn broadcast(&self, tx_bytes: String) -> BoxFuture<'_, Result<Value, ToolError>> {
        let out = self.broadcast_now(&tx_bytes);
        Box::pin(async move { Ok(out["tx_response"].clone()) })
    }

    fn check(&self, message: &Signed, assume: &Assume) -> Result<Vec<Requirement>, ToolError> {
        let height = self.clock.height();
        Ok(self.read().check(message, height, assume).requirements)
    }

    fn events(&self) -> Option<EventBus> {
        Some(self.bus.clone())
    }

    fn control_clock(&self, action: ClockAction) -> Result<SourceInfo, ToolError> {
        match action {
            ClockAction::Pause => self.clock.pause(),
            ClockAction::Resume => self.clock.resume(),
            ClockAction::Step(blocks) => {
                self.clock.step(blocks);
            }
        }
        Ok(self.info())
    }
}

/// The error of a refused transaction: which message, what it needed, what is missing.
fn refusal(messages: &[Signed], checked: &rules::Checked, index: usize) -> ToolError {
    let name = messages[index].msg.type_name();
    let missing: Vec<&Requirement> = checked.missing();
    let reasons: Vec<String> = missing.iter().map(|r| r.detail.clone()).collect();
    ToolError::new(
        ErrorCode::ValidationRequirementsNotMet,
        format!("{name} refused: {}", reasons.join("; ")),
    )
    .with_extra("message_index", Value::from(index))
    .with_extra("message_type", Value::from(name))
    .with_extra(
        "missing_requirements",
        serde_json::to_value(&missing).unwrap_or_default(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(page: &Page, kind: EntityKind) -> Vec<String> {
        page.items
            .iter()
            .map(|v| {
                kind.core_object(v).unwrap()["id"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect()
    }

    fn sim(players: usize) -> SimSource {
        SimSource::new(WorldConfig::with_players(players), BlockClock::paused(10))
    }

    #[test]
    fn pages_cover_every_entity_once() {
        let src = sim(57);
        let mut q = ListQuery::new(EntityKind::Player, 10);
        let mut seen = Vec::new();
        loop {
            let page = src.list_now(&q).unwrap();
            assert_eq!(page.total, 57);
            seen.extend(ids(&page, EntityKind::Player));
            match page.next_after {
                Some(after) => q.after = Some(after),
                None => break,
            }
        }
        // Every player once, in the chain's order: the ids' bytes.
        let mut expected: Vec<String> = (1..=57).map(|i| format!("1-{i}")).collect();
        expected.sort();
        assert_eq!(seen, expected);
        assert_eq!(&seen[..4], ["1-1", "1-10", "1-11", "1-12"]);
    }

    #[test]
    fn filtered_pages_keep_the_chains_order_and_a_list_item_is_the_core_record() {
        let src = sim(57);
        let mut q = ListQuery::new(EntityKind::Player, 4);
        q.id_prefix = Some("1-1".into());
        let mut seen = Vec::new();
        loop {
            let page = src.list_now(&q).unwrap();
            assert_eq!(page.total, 11);
            for item in &page.items {
                let keys: Vec<&String> = item.as_object().unwrap().keys().collect();
                assert_eq!(keys, ["Player"], "only the core record");
            }
            seen.extend(ids(&page, EntityKind::Player));
            match page.next_after {
                Some(after) => q.after = Some(after),
                None => break,
            }
        }
        let mut expected: Vec<String> = (1..=57)
            .map(|i| format!("1-{i}"))
            .filter(|id| id.starts_with("1-1"))
            .collect();
        expected.sort();
        assert_eq!(seen, expected);
    }

    #[test]
    fn exact_multiple_of_page_size_has_no_empty_last_page() {
        let src = sim(20);
        let page = src
            .list_now(&ListQuery::new(EntityKind::Player, 20))
            .unwrap();
        assert_eq!(page.items.len(), 20);
        assert_eq!(page.next_after, None);
    }

    #[test]
    fn filters_by_owner_guild_and_prefix() {
        let src = sim(80);
        let world = src.read();
        let mut q = ListQuery::new(EntityKind::Struct, 100);
        q.owner = Some(EntityId::new(EntityKind::Player, 3));
        let page = src.list_now(&q).unwrap();
        assert!(!page.items.is_empty());
        for v in &page.items {
            assert_eq!(v["Struct"]["owner"], "1-3");
        }
        assert_eq!(
            page.total,
            world.structs.iter().filter(|s| s.owner == 3).count() as u64
        );

        let mut q = ListQuery::new(EntityKind::Player, 100);
        q.guild = Some(EntityId::new(EntityKind::Guild, 2));
        let page = src.list_now(&q).unwrap();
        assert!(page.items.iter().all(|v| v["Player"]["guildId"] == "0-2"));
        assert_eq!(
            page.total,
            world.players.iter().filter(|p| p.guild == Some(2)).count() as u64
        );

        let mut q = ListQuery::new(EntityKind::Player, 100);
        q.id_prefix = Some("1-7".into());
        let page = src.list_now(&q).unwrap();
        assert_eq!(
            ids(&page, EntityKind::Player),
            vec![
                "1-7", "1-70", "1-71", "1-72", "1-73", "1-74", "1-75", "1-76", "1-77", "1-78",
                "1-79"
            ]
        );
    }

    #[test]
    fn filtered_pages_continue_past_gaps() {
        let src = sim(80);
        let mut q = ListQuery::new(EntityKind::Player, 3);
        q.guild = Some(EntityId::new(EntityKind::Guild, 1));
        let mut all = Vec::new();
        loop {
            let page = src.list_now(&q).unwrap();
            all.extend(ids(&page, EntityKind::Player));
            match page.next_after {
                Some(a) => q.after = Some(a),
                None => break,
            }
        }
        assert_eq!(all.len() as u64, src.list_now(&q).unwrap().total);
    }

    /// The arithmetic prefix walk agrees with formatting every id and filtering, in
    /// order (fewest digits first), in total and under the limit.
    #[test]
    fn ids_with_prefix_match_every_id_that_starts_so() {
        for count in [0u64, 1, 9, 10, 12, 99, 100, 101, 1234, 10_000] {
            for prefix in [
                "",
                "1",
                "1-",
                "1-1",
                "1-12",
                "1-9",
                "1-0",
                "1-01",
                "1-123",
                "1-1x",
                "2-1",
                "1-10000",
                "1-99999999999999999999",
            ] {
                for limit in [0usize, 1, 5, 100] {
                    let got = ids_with_prefix(EntityKind::Player, count, prefix, limit);
                    let mut want: Vec<EntityId> = (1..=count)
                        .map(|i| EntityId::new(EntityKind::Player, i))
                        .filter(|id| id.to_string().starts_with(prefix))
                        .collect();
                    want.sort_by_key(|id| (id.index.to_string().len(), id.index));
                    let total = want.len() as u64;
                    want.truncate(limit);
                    assert_eq!(got.total, total, "count {count}, prefix {prefix:?}");
                    assert_eq!(
                        got.ids, want,
                        "count {count}, prefix {prefix:?}, limit {limit}"
                    );
                }
            }
        }
    }
}
