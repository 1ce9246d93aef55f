//! Who makes a call, in a stateless world: the one notion of identity that ownership
//! (tasks, handles, confirmations), per-caller caps and fairness use.
//!
//! **A caller is the credential it presents.** Nothing of a 2026-07-28 request outlives
//! it, so a caller cannot be a session or a connection; it is what every request of
//! the same client carries alike, its bearer token:
//!
//! - A token from `--caller-tokens FILE` names its caller: `caller:NAME`. Every server
//!   given the same file knows the same callers, so ownership carries over a cluster.
//! - The server's own `--auth-token` is the **operator's**: it may list, read and cancel
//!   every caller's tasks and handles.
//! - A server with no token (loopback only) checks no token, but a client that sends one
//!   anyway is told apart by it: `key:` and the first 16 hex digits of its SHA-256. The
//!   token is a secret the client chose, held by it alone (a client-held capability).
//! - A request with no token on such a server is `anonymous`; anonymous callers share.
//! - The console in its own process, and a stdio connection, are `local`. The console
//!   itself gives no owner ([`super::CallContext::owner`] is `None`) and sees all.
//!
//! Over stdio and in a 2025-11-25 session the same rule holds: a session's caller is its
//! requests' credential, so its tasks stay its own when it reconnects.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

/// A caller as ownership and caps know it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Principal {
    id: Arc<str>,
    operator: bool,
}

/// The operator's id.
pub const OPERATOR: &str = "operator";

/// The id of a caller that presents no credential to a server that asks for none.
pub const ANONYMOUS: &str = "anonymous";

/// The id of the stdio connection's client.
pub const LOCAL: &str = "local";

/// How many hex digits of a key's digest name it.
const KEY_DIGITS: usize = 16;

impl Principal {
    /// The operator: sees and stops every caller's work.
    pub fn operator() -> Principal {
        Principal {
            id: OPERATOR.into(),
            operator: true,
        }
    }

    /// A caller named in the callers file.
    pub fn named(name: &str) -> Principal {
        Principal {
            id: format!("caller:{name}").into(),
            operator: false,
        }
    }

    /// A caller told apart by a token no server checks: a digest of it, never the token.
    pub fn keyed(token: &str) -> Principal {
        let digest = Sha256::digest(token.as_bytes());
        let hex: String = digest
            .iter()
            .take(KEY_DIGITS / 2)
            .map(|b| format!("{b:02x}"))
            .collect();
        Principal {
            id: format!("key:{hex}").into(),
            operator: false,
        }
    }

    /// A caller with no credential on a server that asks for none.
    pub fn anonymous() -> Principal {
        Principal {
            id: ANONYMOUS.into(),
            operator: false,
        }
    }

    /// The stdio connection's client.
    pub fn local() -> Principal {
        Principal {
            id: LOCAL.into(),
            operator: false,
        }
    }

    /// What records of its work name it by.
    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn is_operator(&self) -> bool {
        self.operator
    }

    /// Whether this caller may list, read or stop what `owner` made (`None`: made by no
    /// caller, the console, or a server older than ownership): its own, or anything for
    /// the operator.
    pub fn owns(&self, owner: Option<&str>) -> bool {
        self.operator || owner == Some(&*self.id)
    }
}

impl std::fmt::Display for Principal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.id)
    }
}

/// Places held at once, in all and by caller, each count capped: what keeps one
/// caller below the whole (the tasks a process runs, the listen streams it holds).
pub struct Places {
    limit: usize,
    per_caller: usize,
    held: Mutex<Held>,
}

#[derive(Default)]
struct Held {
    total: usize,
    by_caller: HashMap<String, usize>,
}

/// Which cap a place was refused by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Full {
    /// Every place is held.
    All,
    /// The caller holds its most.
    Caller,
}

/// One place held; given back when dropped, however what held it ends.
pub struct Place {
    places: Arc<Places>,
    caller: Option<String>,
}

impl Places {
    /// At most `limit` places in all, and `per_caller` for any one caller.
    pub fn new(limit: usize, per_caller: usize) -> Arc<Places> {
        Arc::new(Places {
            limit,
            per_caller,
            held: Mutex::default(),
        })
    }

    fn held(&self) -> std::sync::MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A place for `caller` (`None`: counted in all only), or the cap that refuses it.
    pub fn take(self: &Arc<Self>, caller: Option<&str>) -> Result<Place, Full> {
        let mut held = self.held();
        if held.total >= self.limit {
            return Err(Full::All);
        }
        if let Some(caller) = caller {
            let mine = held.by_caller.entry(caller.to_string()).or_default();
            if *mine >= self.per_caller {
                return Err(Full::Caller);
            }
            *mine += 1;
        }
        held.total += 1;
        Ok(Place {
            places: self.clone(),
            caller: caller.map(str::to_string),
        })
    }

    /// Places held now, in all.
    pub fn total(&self) -> usize {
        self.held().total
    }

    /// Places `caller` holds now.
    pub fn of(&self, caller: &str) -> usize {
        self.held().by_caller.get(caller).copied().unwrap_or(0)
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        let mut held = self.places.held();
        held.total = held.total.saturating_sub(1);
        if let Some(caller) = &self.caller
            && let Some(n) = held.by_caller.get_mut(caller)
        {
            *n = n.saturating_sub(1);
            if *n == 0 {
                held.by_caller.remove(caller);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caller_owns_its_own_and_the_operator_owns_all() {
        let alice = Principal::named("alice");
        assert!(alice.owns(Some("caller:alice")));
        assert!(!alice.owns(Some("caller:bob")));
        assert!(!alice.owns(None));
        assert!(Principal::operator().owns(Some("caller:bob")));
        assert!(Principal::operator().owns(None));
        assert!(!Principal::anonymous().owns(Some("caller:alice")));
    }

    #[test]
    fn places_are_capped_in_all_and_by_caller_and_given_back_when_dropped() {
        let places = Places::new(3, 2);
        let a1 = places.take(Some("a")).unwrap();
        let _a2 = places.take(Some("a")).unwrap();
        assert_eq!(places.take(Some("a")).err(), Some(Full::Caller));
        let _b = places.take(Some("b")).unwrap();
        assert_eq!(places.take(None).err(), Some(Full::All));
        assert_eq!((places.total(), places.of("a")), (3, 2));
        drop(a1);
        assert_eq!((places.total(), places.of("a")), (2, 1));
        let _none = places.take(None).unwrap();
        assert_eq!(places.of("b"), 1);
    }

    #[test]
    fn a_key_is_named_by_its_digest_never_by_itself() {
        let one = Principal::keyed("a-secret-only-this-client-knows");
        let other = Principal::keyed("another-secret-of-another-client");
        assert_ne!(one, other);
        assert_eq!(one, Principal::keyed("a-secret-only-this-client-knows"));
        assert!(one.id().starts_with("key:"));
        assert_eq!(one.id().len(), "key:".len() + KEY_DIGITS);
        assert!(!one.id().contains("secret"));
    }
}
