//! A struct's status: the chain's bitmask, its bits by name, and one word for it.

use serde_json::Value;

/// The struct status bits (`types/struct.go`, `StructState`): `structAttributes.status`
/// is their sum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StructStatus(pub u64);

impl StructStatus {
    pub const MATERIALIZED: u64 = 1;
    pub const BUILT: u64 = 1 << 1;
    pub const ONLINE: u64 = 1 << 2;
    pub const STORED: u64 = 1 << 3;
    pub const HIDDEN: u64 = 1 << 4;
    pub const DESTROYED: u64 = 1 << 5;
    pub const LOCKED: u64 = 1 << 6;

    /// The bits by name, lowest first.
    pub const NAMES: [(u64, &'static str); 7] = [
        (StructStatus::MATERIALIZED, "materialized"),
        (StructStatus::BUILT, "built"),
        (StructStatus::ONLINE, "online"),
        (StructStatus::STORED, "stored"),
        (StructStatus::HIDDEN, "hidden"),
        (StructStatus::DESTROYED, "destroyed"),
        (StructStatus::LOCKED, "locked"),
    ];

    pub fn has(self, bit: u64) -> bool {
        self.0 & bit != 0
    }

    /// Online and not destroyed: the struct works.
    pub fn is_working(self) -> bool {
        self.has(StructStatus::ONLINE) && !self.has(StructStatus::DESTROYED)
    }

    /// The set bits' names, lowest first (`35` → materialized, built, destroyed).
    pub fn flags(self) -> Vec<&'static str> {
        StructStatus::NAMES
            .iter()
            .filter(|(bit, _)| self.has(*bit))
            .map(|(_, name)| *name)
            .collect()
    }

    /// One word for where the struct stands, the strongest state set: destroyed,
    /// online, built, materialized, or `stateless` when no bit is set.
    pub fn word(self) -> &'static str {
        if self.has(StructStatus::DESTROYED) {
            "destroyed"
        } else if self.has(StructStatus::ONLINE) {
            "online"
        } else if self.has(StructStatus::BUILT) {
            "built"
        } else if self.has(StructStatus::MATERIALIZED) {
            "materialized"
        } else {
            "stateless"
        }
    }

    /// The word and the number, as the console and answers show them beside the record:
    /// `destroyed (status 35: materialized, built, destroyed)`.
    pub fn describe(self) -> String {
        format!("{} (status {}: {})", self.word(), self.0, {
            let flags = self.flags();
            if flags.is_empty() {
                "no bits set".to_string()
            } else {
                flags.join(", ")
            }
        })
    }

    /// The status of a struct's record: the `status` number, or else the flags the
    /// record spells out (`isDestroyed`, `isOnline`, ...). A record written before the
    /// chain's shape was followed carries a word (`"online"`), read as that state.
    pub fn of(struct_attributes: &Value) -> Option<StructStatus> {
        let status = struct_attributes.get("status");
        if let Some(n) = status.and_then(crate::json::chain_int) {
            return Some(StructStatus(n));
        }
        if let Some(word) = status.and_then(Value::as_str) {
            let bits = match word {
                "destroyed" => Self::MATERIALIZED | Self::BUILT | Self::DESTROYED,
                "online" => Self::MATERIALIZED | Self::BUILT | Self::ONLINE,
                "built" | "offline" => Self::MATERIALIZED | Self::BUILT,
                "materialized" | "building" => Self::MATERIALIZED,
                _ => return None,
            };
            return Some(StructStatus(bits));
        }
        let flag = |name: &str| struct_attributes.get(name).and_then(Value::as_bool);
        let mut bits = 0;
        let mut any = false;
        for (name, bit) in [
            ("isMaterialized", Self::MATERIALIZED),
            ("isBuilt", Self::BUILT),
            ("isOnline", Self::ONLINE),
            ("isHidden", Self::HIDDEN),
            ("isDestroyed", Self::DESTROYED),
            ("isLocked", Self::LOCKED),
        ] {
            if let Some(set) = flag(name) {
                any = true;
                if set {
                    bits |= bit;
                }
            }
        }
        any.then_some(StructStatus(bits))
    }
}
