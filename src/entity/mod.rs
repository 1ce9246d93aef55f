//! Entity identifiers: the twelve entity kinds of the chain and the `{code}-{index}` ids
//! that name them. Pure data, no I/O.

pub mod order;
pub mod records;
pub mod struct_types;

use std::fmt;
use std::str::FromStr;

/// The twelve entity kinds, by their chain object-type code (0-11).
///
/// Struct *types* (Command Ship = 1, Ore Extractor = 14, ...) are plain integers and
/// are never represented by this enum or by [`EntityId`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EntityKind {
    Guild = 0,
    Player = 1,
    Planet = 2,
    Reactor = 3,
    Substation = 4,
    Struct = 5,
    Allocation = 6,
    Infusion = 7,
    Address = 8,
    Fleet = 9,
    Provider = 10,
    Agreement = 11,
}

impl EntityKind {
    /// Every kind, in code order.
    pub const ALL: [EntityKind; 12] = [
        EntityKind::Guild,
        EntityKind::Player,
        EntityKind::Planet,
        EntityKind::Reactor,
        EntityKind::Substation,
        EntityKind::Struct,
        EntityKind::Allocation,
        EntityKind::Infusion,
        EntityKind::Address,
        EntityKind::Fleet,
        EntityKind::Provider,
        EntityKind::Agreement,
    ];

    pub fn code(self) -> u8 {
        self as u8
    }

    pub fn from_code(code: u64) -> Option<EntityKind> {
        EntityKind::ALL.get(usize::try_from(code).ok()?).copied()
    }

    /// The lowercase name used in tool arguments (`player`, `struct`, ...).
    pub fn name(self) -> &'static str {
        match self {
            EntityKind::Guild => "guild",
            EntityKind::Player => "player",
            EntityKind::Planet => "planet",
            EntityKind::Reactor => "reactor",
            EntityKind::Substation => "substation",
            EntityKind::Struct => "struct",
            EntityKind::Allocation => "allocation",
            EntityKind::Infusion => "infusion",
            EntityKind::Address => "address",
            EntityKind::Fleet => "fleet",
            EntityKind::Provider => "provider",
            EntityKind::Agreement => "agreement",
        }
    }

    /// The plural used for list results (`players`, `structs`, ...).
    pub fn plural(self) -> &'static str {
        match self {
            EntityKind::Guild => "guilds",
            EntityKind::Player => "players",
            EntityKind::Planet => "planets",
            EntityKind::Reactor => "reactors",
            EntityKind::Substation => "substations",
            EntityKind::Struct => "structs",
            EntityKind::Allocation => "allocations",
            EntityKind::Infusion => "infusions",
            EntityKind::Address => "addresses",
            EntityKind::Fleet => "fleets",
            EntityKind::Provider => "providers",
            EntityKind::Agreement => "agreements",
        }
    }

    /// The key the chain's REST API wraps the entity's core object in
    /// (`{"Player": {...}, "gridAttributes": {...}}`). Addresses are not wrapped.
    pub fn rest_key(self) -> Option<&'static str> {
        Some(match self {
            EntityKind::Guild => "Guild",
            EntityKind::Player => "Player",
            EntityKind::Planet => "Planet",
            EntityKind::Reactor => "Reactor",
            EntityKind::Substation => "Substation",
            EntityKind::Struct => "Struct",
            EntityKind::Allocation => "Allocation",
            EntityKind::Infusion => "Infusion",
            EntityKind::Address => return None,
            EntityKind::Fleet => "Fleet",
            EntityKind::Provider => "Provider",
            EntityKind::Agreement => "Agreement",
        })
    }

    /// The kind whose chain wrapper key is `key` (`"Player"` → player).
    pub fn from_rest_key(key: &str) -> Option<EntityKind> {
        EntityKind::ALL
            .into_iter()
            .find(|k| k.rest_key() == Some(key))
    }

    /// Parses a kind given by name (case-insensitive) or by code (`"1"`).
    pub fn parse_name_or_code(text: &str) -> Option<EntityKind> {
        let t = text.trim();
        if let Ok(code) = t.parse::<u64>() {
            return EntityKind::from_code(code);
        }
        let lower = t.to_ascii_lowercase();
        EntityKind::ALL
            .into_iter()
            .find(|k| k.name() == lower || k.plural() == lower)
    }

    /// The core object of an entity's JSON: the value under [`Self::rest_key`], or the
    /// whole value for kinds the chain does not wrap.
    pub fn core_object(self, entity: &serde_json::Value) -> Option<&serde_json::Value> {
        match self.rest_key() {
            Some(key) => entity.get(key),
            None => Some(entity),
        }
    }
}

impl fmt::Display for EntityKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An entity id: `{code}-{index}` with a kind code 0-11 and a 1-based index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EntityId {
    pub kind: EntityKind,
    pub index: u64,
}

/// Why a string is not an entity id. The message is meant for the person or agent that
/// wrote it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    #[error("expected format {{type}}-{{index}} (pattern ^[0-9]+-[0-9]+$), got {0}")]
    Format(String),
    #[error("type code {code} in {id} is not an entity kind (codes are 0-11)")]
    UnknownKind { id: String, code: String },
    #[error("index in {0} must be 1 or more (indices are 1-based)")]
    ZeroIndex(String),
    #[error("index in {0} is too large")]
    IndexOverflow(String),
}

/// The text an [`IdError`] quotes: the caller's text quoted, cut after 60 characters
/// with its whole length stated, so that a long argument never comes back whole.
fn quoted(text: &str) -> String {
    const SHOWN: usize = 60;
    let n = text.chars().count();
    if n <= SHOWN {
        return format!("{text:?}");
    }
    let head: String = text.chars().take(SHOWN).collect();
    format!("{:?}… ({n} characters)", head)
}

impl EntityId {
    pub const PATTERN: &'static str = "^[0-9]+-[0-9]+$";

    pub fn new(kind: EntityKind, index: u64) -> EntityId {
        EntityId { kind, index }
    }

    /// Parses `{code}-{index}` strictly: ASCII digits only, no sign, no spaces.
    pub fn parse(text: &str) -> Result<EntityId, IdError> {
        let (code, index) = text
            .split_once('-')
            .filter(|(c, i)| is_digits(c) && is_digits(i))
            .ok_or_else(|| IdError::Format(quoted(text)))?;
        let kind = code
            .parse::<u64>()
            .ok()
            .and_then(EntityKind::from_code)
            .ok_or_else(|| IdError::UnknownKind {
                id: quoted(text),
                code: if code.len() <= 20 {
                    code.to_string()
                } else {
                    quoted(code)
                },
            })?;
        let index: u64 = index
            .parse()
            .map_err(|_| IdError::IndexOverflow(quoted(text)))?;
        if index == 0 {
            return Err(IdError::ZeroIndex(quoted(text)));
        }
        Ok(EntityId { kind, index })
    }

    /// True when `text` would parse as an id; cheap enough to call on every string field.
    pub fn looks_like(text: &str) -> bool {
        EntityId::parse(text).is_ok()
    }
}

fn is_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// Serialised as its text (`"1-11"`), as ids appear in the chain's JSON.
impl serde::Serialize for EntityId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl fmt::Display for EntityId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.kind.code(), self.index)
    }
}

impl FromStr for EntityId {
    type Err = IdError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        EntityId::parse(s)
    }
}

/// Where entities live as MCP resources.
pub const ENTITY_URI: &str = "structs://entities/";

/// The resource URI of an entity, the one `notifications/resources/updated` names.
pub fn entity_uri(id: EntityId) -> String {
    format!("{ENTITY_URI}{id}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_kind_code() {
        for kind in EntityKind::ALL {
            let text = format!("{}-7", kind.code());
            let id = EntityId::parse(&text).unwrap();
            assert_eq!(id.kind, kind);
            assert_eq!(id.index, 7);
            assert_eq!(id.to_string(), text);
        }
    }

    #[test]
    fn rejects_bad_formats() {
        for bad in [
            "", "1", "1-", "-1", "a-1", "1-a", "1--1", "1-1-1", " 1-1", "1-1 ", "+1-1", "1-+1",
            "1_1", "１-1",
        ] {
            assert!(
                matches!(EntityId::parse(bad), Err(IdError::Format(_))),
                "{bad:?} should be a format error"
            );
        }
    }

    #[test]
    fn rejects_unknown_codes_zero_index_and_overflow() {
        assert!(matches!(
            EntityId::parse("12-1"),
            Err(IdError::UnknownKind { .. })
        ));
        assert!(matches!(
            EntityId::parse("99999999999999999999999-1"),
            Err(IdError::UnknownKind { .. })
        ));
        assert_eq!(
            EntityId::parse("1-0"),
            Err(IdError::ZeroIndex("\"1-0\"".into()))
        );
        // A long text is quoted in part, with its length.
        let long = format!("1-{}x", "9".repeat(1_000));
        let said = EntityId::parse(&long).unwrap_err().to_string();
        assert!(said.len() < 200, "{said}");
        assert!(said.contains("(1003 characters)"), "{said}");
        assert!(matches!(
            EntityId::parse("1-99999999999999999999999"),
            Err(IdError::IndexOverflow(_))
        ));
        // Leading zeros are digits and parse to the same id.
        assert_eq!(EntityId::parse("01-011").unwrap().to_string(), "1-11");
    }

    #[test]
    fn kinds_by_name_or_code() {
        assert_eq!(
            EntityKind::parse_name_or_code("player"),
            Some(EntityKind::Player)
        );
        assert_eq!(
            EntityKind::parse_name_or_code("Fleet"),
            Some(EntityKind::Fleet)
        );
        assert_eq!(
            EntityKind::parse_name_or_code("11"),
            Some(EntityKind::Agreement)
        );
        assert_eq!(
            EntityKind::parse_name_or_code("structs"),
            Some(EntityKind::Struct)
        );
        assert_eq!(EntityKind::parse_name_or_code("12"), None);
        assert_eq!(EntityKind::parse_name_or_code("ship"), None);
    }
}
