//! The chain's records, defined once: every message the node's REST API answers with,
//! its fields, their JSON types and the enums' values, as structsd's protos declare them
//! (`proto/structs/structs/*.proto`, `query.proto` for the answers).
//!
//! The node writes JSON with grpc-gateway's `OrigName` and `EmitDefaults`: field names
//! as declared, every field present even when it is zero, 64-bit integers as strings,
//! enums by name, bytes in base64. [`Message::record`] builds a record that way from the
//! fields one has (the rest at their defaults); [`Message::check`] says how a value
//! differs from the message. The sim renders through the first, and the tests hold
//! `serve-rest` and this table to the node's `openapi.yml` through the second.
//!
//! Two kinds have no id on the chain: an infusion is keyed by its destination and the
//! infusing address, and an address record by the address ([`key_of`]).

use serde_json::{Map, Value};

mod messages;
mod status;

pub use messages::*;
pub use status::StructStatus;

use super::EntityKind;

/// A field's JSON type as the node writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    /// A string (ids, addresses, decimals such as a commission).
    Str,
    /// A `uint64`, written as a decimal string.
    U64,
    /// A `bool`.
    Bool,
    /// `bytes`, written in standard base64.
    Bytes,
    /// A cosmos `Int` (a coin's amount): a decimal integer in a string, `"0"` when zero.
    Int,
    /// A cosmos `LegacyDec` (a commission, a penalty): a decimal with 18 places in a
    /// string, `"0.000000000000000000"` when zero.
    Dec,
    /// An enum, written by its value's name; the first name is the default (zero).
    Enum(&'static [&'static str]),
    /// A nested message.
    Msg(&'static Message),
    /// A repeated field of the inner type, an array.
    List(&'static Ty),
}

impl Ty {
    /// The value the node writes for a field never set.
    pub fn default_value(&self) -> Value {
        match self {
            Ty::Str | Ty::Bytes => Value::String(String::new()),
            Ty::U64 | Ty::Int => Value::String("0".into()),
            Ty::Dec => Value::String("0.000000000000000000".into()),
            Ty::Bool => Value::Bool(false),
            Ty::Enum(names) => Value::String(names[0].into()),
            Ty::Msg(m) => m.defaults(),
            Ty::List(_) => Value::Array(Vec::new()),
        }
    }

    /// Where `v` breaks this type, each problem with its dotted path under `at`.
    fn check(&self, v: &Value, at: &str, out: &mut Vec<String>) {
        let wrong = |out: &mut Vec<String>, want: &str| {
            out.push(format!("{at}: expected {want}, found {}", short(v)));
        };
        match (self, v) {
            (Ty::Str | Ty::Bytes, Value::String(_)) | (Ty::Bool, Value::Bool(_)) => {}
            (Ty::U64, Value::String(s)) if s.parse::<u64>().is_ok() => {}
            (Ty::U64, _) => wrong(out, "a uint64 as a decimal string"),
            (Ty::Int, Value::String(s))
                if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => {}
            (Ty::Int, _) => wrong(out, "an integer as a decimal string"),
            (Ty::Dec, Value::String(s)) if is_decimal(s) => {}
            (Ty::Dec, _) => wrong(out, "a decimal as a string"),
            (Ty::Enum(names), Value::String(s)) if names.contains(&s.as_str()) => {}
            (Ty::Enum(names), _) => wrong(out, &format!("one of {}", names.join("|"))),
            (Ty::Msg(m), Value::Object(_)) => m.check_at(v, at, out),
            (Ty::List(inner), Value::Array(items)) => {
                for (i, item) in items.iter().enumerate() {
                    inner.check(item, &format!("{at}[{i}]"), out);
                }
            }
            (Ty::Str | Ty::Bytes, _) => wrong(out, "a string"),
            (Ty::Bool, _) => wrong(out, "a boolean"),
            (Ty::Msg(_), _) => wrong(out, "an object"),
            (Ty::List(_), _) => wrong(out, "an array"),
        }
    }
}

/// `0.04`, `12`, `0.100000000000000000`: digits, at most one point between digits.
fn is_decimal(s: &str) -> bool {
    let (int, frac) = s.split_once('.').unwrap_or((s, "0"));
    !int.is_empty()
        && !frac.is_empty()
        && int.bytes().all(|b| b.is_ascii_digit())
        && frac.bytes().all(|b| b.is_ascii_digit())
}

fn short(v: &Value) -> String {
    let text = v.to_string();
    match text.char_indices().nth(40) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// One field of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    pub name: &'static str,
    pub ty: Ty,
}

/// A field: for the tables here and the transaction messages' (`chain::tx`).
pub const fn field(name: &'static str, ty: Ty) -> Field {
    Field { name, ty }
}

use field as f;

/// A message: its proto name and its fields in declaration order.
#[derive(Debug, PartialEq, Eq)]
pub struct Message {
    pub name: &'static str,
    pub fields: &'static [Field],
}

impl Message {
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// Every field at its default, as the node writes a record with nothing set.
    pub fn defaults(&self) -> Value {
        Value::Object(
            self.fields
                .iter()
                .map(|f| (f.name.to_string(), f.ty.default_value()))
                .collect(),
        )
    }

    /// A record of this message: `set` over the defaults, in declaration order. A name
    /// the message lacks is a bug in the caller, caught by the tests (and in debug
    /// builds here); in release it is dropped, so no field the chain lacks goes out.
    pub fn record<I>(&self, set: I) -> Value
    where
        I: IntoIterator<Item = (&'static str, Value)>,
    {
        let mut out: Map<String, Value> = self
            .fields
            .iter()
            .map(|f| (f.name.to_string(), f.ty.default_value()))
            .collect();
        for (name, value) in set {
            debug_assert!(
                self.field(name).is_some(),
                "{} has no field {name}",
                self.name
            );
            if let Some(slot) = out.get_mut(name) {
                *slot = value;
            }
        }
        Value::Object(out)
    }

    /// How `v` differs from this message: a field missing, a field the message lacks,
    /// or a value of the wrong JSON type. Empty when `v` is exactly such a record.
    pub fn check(&self, v: &Value) -> Vec<String> {
        let mut out = Vec::new();
        self.check_at(v, self.name, &mut out);
        out
    }

    fn check_at(&self, v: &Value, at: &str, out: &mut Vec<String>) {
        let Some(obj) = v.as_object() else {
            out.push(format!("{at}: expected an object, found {}", short(v)));
            return;
        };
        for field in self.fields {
            match obj.get(field.name) {
                Some(value) => field.ty.check(value, &format!("{at}.{}", field.name), out),
                // A node of the release before a field was added lacks it.
                None if NEWER_FIELDS.contains(&(self.name, field.name)) => {}
                None => out.push(format!("{at}.{}: missing", field.name)),
            }
        }
        for name in obj.keys() {
            if self.field(name).is_none() {
                out.push(format!("{at}.{name}: not a field of {}", self.name));
            }
        }
    }
}

/// The answer to one read of a kind (`QueryGet{Kind}Response`): the record under its
/// wrapper key and what the node puts beside it.
pub fn single_response(kind: EntityKind) -> &'static Message {
    static GUILD_R: Message = Message {
        name: "QueryGetGuildResponse",
        fields: &[f("Guild", Ty::Msg(&GUILD))],
    };
    static PLAYER_R: Message = Message {
        name: "QueryGetPlayerResponse",
        fields: &[
            f("Player", Ty::Msg(&PLAYER)),
            f("gridAttributes", Ty::Msg(&GRID_ATTRIBUTES)),
            f("playerInventory", Ty::Msg(&PLAYER_INVENTORY)),
        ],
    };
    static PLANET_R: Message = Message {
        name: "QueryGetPlanetResponse",
        fields: &[
            f("Planet", Ty::Msg(&PLANET)),
            f("gridAttributes", Ty::Msg(&GRID_ATTRIBUTES)),
            f("planetAttributes", Ty::Msg(&PLANET_ATTRIBUTES)),
        ],
    };
    static REACTOR_R: Message = Message {
        name: "QueryGetReactorResponse",
        fields: &[
            f("Reactor", Ty::Msg(&REACTOR)),
            f("gridAttributes", Ty::Msg(&GRID_ATTRIBUTES)),
        ],
    };
    static SUBSTATION_R: Message = Message {
        name: "QueryGetSubstationResponse",
        fields: &[
            f("Substation", Ty::Msg(&SUBSTATION)),
            f("gridAttributes", Ty::Msg(&GRID_ATTRIBUTES)),
        ],
    };
    static STRUCT_R: Message = Message {
        name: "QueryGetStructResponse",
        fields: &[
            f("Struct", Ty::Msg(&STRUCT)),
            f("structAttributes", Ty::Msg(&STRUCT_ATTRIBUTES)),
            f("gridAttributes", Ty::Msg(&GRID_ATTRIBUTES)),
            f("structDefenders", Ty::List(&Ty::Str)),
        ],
    };
    static ALLOCATION_R: Message = Message {
        name: "QueryGetAllocationResponse",
        fields: &[
            f("Allocation", Ty::Msg(&ALLOCATION)),
            f("gridAttributes", Ty::Msg(&GRID_ATTRIBUTES)),
        ],
    };
    static INFUSION_R: Message = Message {
        name: "QueryGetInfusionResponse",
        fields: &[f("Infusion", Ty::Msg(&INFUSION))],
    };
    static FLEET_R: Message = Message {
        name: "QueryGetFleetResponse",
        fields: &[f("Fleet", Ty::Msg(&FLEET))],
    };
    static PROVIDER_R: Message = Message {
        name: "QueryGetProviderResponse",
        fields: &[
            f("Provider", Ty::Msg(&PROVIDER)),
            f("gridAttributes", Ty::Msg(&GRID_ATTRIBUTES)),
        ],
    };
    static AGREEMENT_R: Message = Message {
        name: "QueryGetAgreementResponse",
        fields: &[f("Agreement", Ty::Msg(&AGREEMENT))],
    };
    match kind {
        EntityKind::Guild => &GUILD_R,
        EntityKind::Player => &PLAYER_R,
        EntityKind::Planet => &PLANET_R,
        EntityKind::Reactor => &REACTOR_R,
        EntityKind::Substation => &SUBSTATION_R,
        EntityKind::Struct => &STRUCT_R,
        EntityKind::Allocation => &ALLOCATION_R,
        EntityKind::Infusion => &INFUSION_R,
        EntityKind::Address => &ADDRESS,
        EntityKind::Fleet => &FLEET_R,
        EntityKind::Provider => &PROVIDER_R,
        EntityKind::Agreement => &AGREEMENT_R,
    }
}

/// A kind's record: the message under its wrapper key (an address record is not
/// wrapped).
pub fn record_of(kind: EntityKind) -> &'static Message {
    match kind {
        EntityKind::Guild => &GUILD,
        EntityKind::Player => &PLAYER,
        EntityKind::Planet => &PLANET,
        EntityKind::Reactor => &REACTOR,
        EntityKind::Substation => &SUBSTATION,
        EntityKind::Struct => &STRUCT,
        EntityKind::Allocation => &ALLOCATION,
        EntityKind::Infusion => &INFUSION,
        EntityKind::Address => &ADDRESS,
        EntityKind::Fleet => &FLEET,
        EntityKind::Provider => &PROVIDER,
        EntityKind::Agreement => &AGREEMENT,
    }
}

/// Whether `path` names a field of the kind's answer, the way lean views and `fields`
/// name them: dotted, the record's own fields without its wrapper key (`guildId`,
/// `gridAttributes.ore`, `playerInventory.rocks.amount`).
pub fn has_path(kind: EntityKind, path: &str) -> bool {
    fn walk(message: &Message, mut parts: std::str::Split<'_, char>) -> bool {
        let Some(head) = parts.next() else {
            return true;
        };
        match message.field(head).map(|f| f.ty) {
            Some(Ty::Msg(inner)) => walk(inner, parts),
            Some(_) => parts.next().is_none(),
            None => false,
        }
    }
    walk(record_of(kind), path.split('.')) || walk(single_response(kind), path.split('.'))
}

/// Whether a list of the kind carries the chain's `status` array beside its records
/// (`QueryAllAllocationResponse`, `QueryAllInfusionResponse`; the node leaves it empty).
pub fn list_has_status(kind: EntityKind) -> bool {
    matches!(kind, EntityKind::Allocation | EntityKind::Infusion)
}

/// Whether records of the kind carry an `id` (all but infusions and addresses).
pub fn has_id(kind: EntityKind) -> bool {
    !matches!(kind, EntityKind::Infusion | EntityKind::Address)
}

/// The key a record is known by: its `id`, an infusion's `destinationId/address`, an
/// address record's address. The bare record or one under its wrapper key.
pub fn key_of(kind: EntityKind, record: &Value) -> Option<String> {
    let core = kind.core_object(record).filter(|c| c.is_object());
    let r = core.unwrap_or(record);
    let text = |name: &str| r.get(name).and_then(Value::as_str);
    match kind {
        EntityKind::Infusion => Some(format!("{}/{}", text("destinationId")?, text("address")?)),
        EntityKind::Address => text("address").map(str::to_string),
        _ => text("id").map(str::to_string),
    }
}

/// The kind of record a JSON object is, for the kinds with no id, which nothing else
/// names: an infusion under its wrapper key or bare, a bare address record. Kinds with
/// ids are known by them (`references::extract::own_id`).
pub fn idless_kind(obj: &serde_json::Map<String, Value>) -> Option<EntityKind> {
    if obj.get("Infusion").is_some_and(Value::is_object) {
        return Some(EntityKind::Infusion);
    }
    let has = |k: &str| obj.contains_key(k);
    if obj.contains_key("id") {
        return None;
    }
    if has("destinationId") && has("address") && has("playerId") && has("fuel") {
        return Some(EntityKind::Infusion);
    }
    (has("address") && has("playerId") && obj.keys().all(|k| ADDRESS.field(k).is_some()))
        .then_some(EntityKind::Address)
}

/// The fields a record is known by, which shaping always keeps: its `id`, an
/// infusion's destination and address, an address record's address.
pub fn key_fields(kind: EntityKind) -> &'static [&'static str] {
    match kind {
        EntityKind::Infusion => &["destinationId", "address"],
        EntityKind::Address => &["address"],
        _ => &["id"],
    }
}

/// The player a record belongs to: the owner, a player itself, an allocation's
/// controller, the player of an infusion or address.
pub fn owner_field(kind: EntityKind) -> &'static str {
    match kind {
        EntityKind::Player => "id",
        EntityKind::Allocation => "controller",
        EntityKind::Infusion | EntityKind::Address => "playerId",
        _ => "owner",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_are_what_the_node_writes_for_nothing_set() {
        let v = single_response(EntityKind::Player).defaults();
        assert_eq!(v["Player"]["index"], "0");
        assert_eq!(v["Player"]["name"], "");
        assert_eq!(
            v["playerInventory"]["rocks"],
            json!({"denom": "", "amount": "0"})
        );
        assert_eq!(v["gridAttributes"]["ready"], "0");
        let s = single_response(EntityKind::Struct).defaults();
        assert_eq!(s["Struct"]["locationType"], "guild");
        assert_eq!(s["structAttributes"]["isOnline"], false);
        assert_eq!(s["structDefenders"], json!([]));
        assert!(single_response(EntityKind::Player).check(&v).is_empty());
    }

    #[test]
    fn check_names_each_difference() {
        let mut v = FLEET.defaults();
        v["planetId"] = json!("2-1");
        v["status"] = json!("parked");
        v["spaceSlots"] = json!(4);
        v.as_object_mut().unwrap().remove("locationId");
        let problems = FLEET.check(&v);
        assert!(
            problems
                .iter()
                .any(|p| p == "Fleet.planetId: not a field of Fleet"),
            "{problems:?}"
        );
        assert!(
            problems
                .iter()
                .any(|p| p.starts_with("Fleet.status: expected one of onStation|away")),
            "{problems:?}"
        );
        assert!(
            problems
                .iter()
                .any(|p| p.starts_with("Fleet.spaceSlots: expected a uint64")),
            "{problems:?}"
        );
        assert!(
            problems.iter().any(|p| p == "Fleet.locationId: missing"),
            "{problems:?}"
        );
        assert_eq!(problems.len(), 4, "{problems:?}");
    }

    #[test]
    fn record_sets_over_the_defaults_in_declaration_order() {
        let v = SUBSTATION.record([("name", json!("North")), ("id", json!("4-1"))]);
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["id", "owner", "creator", "name", "pfp"]);
        assert_eq!(v["name"], "North");
        assert_eq!(v["pfp"], "");
    }

    #[test]
    fn status_bits_read_as_the_chain_writes_them() {
        let s = StructStatus(35);
        assert_eq!(s.flags(), ["materialized", "built", "destroyed"]);
        assert_eq!(s.word(), "destroyed");
        assert_eq!(StructStatus(7).word(), "online");
        assert_eq!(StructStatus(0).word(), "stateless");
        assert_eq!(
            StructStatus::of(&json!({"status": "35"})),
            Some(StructStatus(35))
        );
        assert_eq!(
            StructStatus::of(&json!({"isMaterialized": true, "isBuilt": true})),
            Some(StructStatus(3))
        );
        assert_eq!(
            StructStatus::of(&json!({"status": "online"})),
            Some(StructStatus(7))
        );
        assert_eq!(StructStatus::of(&json!({})), None);
    }

    #[test]
    fn kinds_without_ids_are_keyed_by_their_fields() {
        let inf = json!({"Infusion": {"destinationId": "3-1", "address": "structs1abc"}});
        assert_eq!(
            key_of(EntityKind::Infusion, &inf).as_deref(),
            Some("3-1/structs1abc")
        );
        let addr = json!({"address": "structs1abc", "playerId": "1-2"});
        assert_eq!(
            key_of(EntityKind::Address, &addr).as_deref(),
            Some("structs1abc")
        );
        assert_eq!(
            key_of(EntityKind::Player, &json!({"Player": {"id": "1-4"}})).as_deref(),
            Some("1-4")
        );
    }
}
