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

use std::sync::Arc;

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
