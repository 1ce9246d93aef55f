//! One client's subscriptions to entities. A client (an MCP session, or the console) has
//! one [`Subscriptions`]; the subscription tools and MCP `resources/subscribe` both add
//! to it, and whoever delivers updates asks it which entities are watched.
//!
//! At most [`MAX_PER_CLIENT`] at once. Ids are `sub_{n}`, never reused within the
//! client, so an unsubscribed id is told apart from one that never existed.

use std::collections::{BTreeMap, HashSet};
use std::sync::Mutex;

use serde::Serialize;
use serde_json::Value;

use crate::entity::{EntityId, entity_uri};
use crate::error::{ErrorCode, ToolError};

/// Subscriptions one client may hold at once.
pub const MAX_PER_CLIENT: usize = 100;

/// One subscription.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Subscription {
    pub subscription_id: String,
    pub entity_type: &'static str,
    pub entity_id: EntityId,
    pub resource_uri: String,
    pub created_at: String,
    /// `tool` (structs_subscription_subscribe) or `resource` (MCP resources/subscribe).
    pub via: &'static str,
}

#[derive(Debug, Default)]
struct Inner {
    next: u64,
    active: BTreeMap<u64, Subscription>,
    removed: HashSet<u64>,
}

/// A client's subscriptions.
#[derive(Debug, Default)]
pub struct Subscriptions {
    inner: Mutex<Inner>,
}

fn number(id: &str) -> Option<u64> {
    id.strip_prefix("sub_")?.parse().ok()
}

impl Subscriptions {
    pub fn new() -> Subscriptions {
        Subscriptions::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a subscription. A second one to the same entity through the same route is
    /// the first one again (idempotent), not a new one.
    pub fn subscribe(
        &self,
        entity: EntityId,
        created_at: String,
        via: &'static str,
    ) -> Result<Subscription, ToolError> {
        let mut inner = self.lock();
        if let Some(existing) = inner
            .active
            .values()
            .find(|s| s.entity_id == entity && s.via == via)
        {
            return Ok(existing.clone());
        }
        if inner.active.len() >= MAX_PER_CLIENT {
            return Err(ToolError::new(
                ErrorCode::RateLimitExceeded,
                format!(
                    "maximum subscriptions reached: {MAX_PER_CLIENT} per client; unsubscribe from one first"
                ),
            )
            .with_extra("limit", Value::from(MAX_PER_CLIENT)));
        }
        inner.next += 1;
        let n = inner.next;
        let sub = Subscription {
            subscription_id: format!("sub_{n}"),
            entity_type: entity.kind.name(),
            entity_id: entity,
            resource_uri: entity_uri(entity),
            created_at,
            via,
        };
        inner.active.insert(n, sub.clone());
        Ok(sub)
    }

    /// Removes a subscription by id.
    pub fn unsubscribe(&self, id: &str) -> Result<Subscription, ToolError> {
        let mut inner = self.lock();
        let n = number(id);
        if let Some(sub) = n.and_then(|n| inner.active.remove(&n)) {
            inner.removed.insert(n.expect("found by it"));
            return Ok(sub);
        }
        let already = n.is_some_and(|n| inner.removed.contains(&n));
        Err(ToolError::field(
            ErrorCode::ResourceNotFound,
            "subscription_id",
            if already {
                format!("{id} was already unsubscribed")
            } else {
                format!("no subscription {id}; structs_subscription_list shows the active ones")
            },
        ))
    }

    /// Removes the subscription to `entity` made through `via`, if any.
    pub fn unsubscribe_entity(&self, entity: EntityId, via: &'static str) -> bool {
        let mut inner = self.lock();
        let found = inner
            .active
            .iter()
            .find(|(_, s)| s.entity_id == entity && s.via == via)
            .map(|(n, _)| *n);
        match found {
            Some(n) => {
                inner.active.remove(&n);
                inner.removed.insert(n);
                true
            }
            None => false,
        }
    }

    /// The active subscriptions, oldest first.
    pub fn list(&self) -> Vec<Subscription> {
        self.lock().active.values().cloned().collect()
    }

    /// True when some subscription watches `entity`.
    pub fn watches(&self, entity: EntityId) -> bool {
        self.lock().active.values().any(|s| s.entity_id == entity)
    }

    pub fn len(&self) -> usize {
        self.lock().active.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entity::EntityKind;

    fn id(n: u64) -> EntityId {
        EntityId::new(EntityKind::Player, n)
    }

    #[test]
    fn subscribe_list_unsubscribe() {
        let s = Subscriptions::new();
        let a = s.subscribe(id(1), "t".into(), "tool").unwrap();
        assert_eq!(a.subscription_id, "sub_1");
        assert_eq!(a.resource_uri, "structs://entities/1-1");
        // Idempotent per route; a resource subscription is its own.
        assert_eq!(s.subscribe(id(1), "t".into(), "tool").unwrap(), a);
        s.subscribe(id(1), "t".into(), "resource").unwrap();
        assert_eq!(s.len(), 2);
        assert!(s.watches(id(1)) && !s.watches(id(2)));
        s.unsubscribe("sub_1").unwrap();
        let e = s.unsubscribe("sub_1").unwrap_err();
        assert!(e.to_string().contains("already unsubscribed"), "{e}");
        let e = s.unsubscribe("sub_99").unwrap_err();
        assert!(e.to_string().contains("no subscription"), "{e}");
        assert!(s.unsubscribe_entity(id(1), "resource"));
        assert!(s.is_empty());
    }

    #[test]
    fn at_most_a_hundred() {
        let s = Subscriptions::new();
        for n in 1..=MAX_PER_CLIENT as u64 {
            s.subscribe(id(n), String::new(), "tool").unwrap();
        }
        let e = s.subscribe(id(1000), String::new(), "tool").unwrap_err();
        assert_eq!(e.code, ErrorCode::RateLimitExceeded);
        s.unsubscribe("sub_5").unwrap();
        let again = s.subscribe(id(1000), String::new(), "tool").unwrap();
        assert_eq!(again.subscription_id, "sub_101", "ids are never reused");
    }
}
