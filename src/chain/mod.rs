//! The chain's transaction messages, as agents write them (`{"@type":
//! "/structs.structs.MsgStructBuildInitiate", "creator": ..., ...}`), parsed into typed
//! [`Msg`]s. Parsing checks shape only (fields, types, id kinds); whether a message can
//! be applied is the game rules' business (`source::sim::rules`).
//!
//! A transaction is either the chain's `{"body": {"messages": [...]}}` or the shorter
//! `{"messages": [...]}`; a single message object is accepted too.

pub mod tx;

use serde_json::{Map, Value};

use crate::entity::struct_types::{Ambit, struct_type, struct_types};
use crate::entity::{EntityId, EntityKind};
use crate::error::{ErrorCode, ToolError};

/// The type URL prefix of the game's messages.
pub const TYPE_PREFIX: &str = "/structs.structs.";

/// Which weapon an attack fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WeaponChoice {
    Primary,
    Secondary,
}

impl WeaponChoice {
    pub fn name(self) -> &'static str {
        match self {
            WeaponChoice::Primary => "primary",
            WeaponChoice::Secondary => "secondary",
        }
    }

    /// The name the chain reads in `MsgStructAttack.weaponSystem` (`techWeaponSystem`).
    pub fn chain_name(self) -> &'static str {
        match self {
            WeaponChoice::Primary => tx::WEAPON_SYSTEM[0],
            WeaponChoice::Secondary => tx::WEAPON_SYSTEM[1],
        }
    }

    /// `primaryWeapon`, as the chain names it; `primary` and `1` (and the same for the
    /// secondary) are taken too.
    pub fn parse(text: &str) -> Option<WeaponChoice> {
        match text.to_ascii_lowercase().as_str() {
            "primary" | "primaryweapon" | "1" => Some(WeaponChoice::Primary),
            "secondary" | "secondaryweapon" | "2" => Some(WeaponChoice::Secondary),
            _ => None,
        }
    }
}

/// Who sends a message: an address (`creator`) and, when the message names one, the
/// player it acts for. The rules resolve the acting player from these.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Signer {
    pub creator: Option<String>,
    pub player: Option<u64>,
}

/// One message the sim can apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Msg {
    PlanetExplore {
        player: u64,
    },
    /// `MsgStructBuildInitiate` (and the older `MsgStructBuild`): a new struct in a slot;
    /// `ambit`/`slot` left out pick the first free slot the type may use.
    StructBuildInitiate {
        player: u64,
        struct_type: u8,
        ambit: Option<Ambit>,
        slot: Option<u8>,
        /// `MsgStructBuild`'s location, checked against the player's own.
        location: Option<EntityId>,
    },
    StructBuildComplete {
        strct: u64,
        nonce: String,
        proof: Option<String>,
    },
    StructActivate {
        strct: u64,
    },
    StructDeactivate {
        strct: u64,
    },
    StructOreMinerComplete {
        strct: u64,
        nonce: String,
        proof: Option<String>,
    },
    StructOreRefineryComplete {
        strct: u64,
        nonce: String,
        proof: Option<String>,
    },
    StructAttack {
        strct: u64,
        targets: Vec<u64>,
        weapon: WeaponChoice,
    },
    StructDefenseSet {
        defender: u64,
        protected: u64,
    },
    StructDefenseClear {
        defender: u64,
    },
    FleetMove {
        fleet: u64,
        destination: u64,
    },
    PlanetRaidComplete {
        fleet: u64,
        planet: Option<u64>,
        nonce: String,
        proof: Option<String>,
    },
}

impl Msg {
    /// The chain's message name (`MsgStructBuildInitiate`).
    pub fn type_name(&self) -> &'static str {
        match self {
            Msg::PlanetExplore { .. } => "MsgPlanetExplore",
            Msg::StructBuildInitiate { .. } => "MsgStructBuildInitiate",
            Msg::StructBuildComplete { .. } => "MsgStructBuildComplete",
            Msg::StructActivate { .. } => "MsgStructActivate",
            Msg::StructDeactivate { .. } => "MsgStructDeactivate",
            Msg::StructOreMinerComplete { .. } => "MsgStructOreMinerComplete",
            Msg::StructOreRefineryComplete { .. } => "MsgStructOreRefineryComplete",
            Msg::StructAttack { .. } => "MsgStructAttack",
            Msg::StructDefenseSet { .. } => "MsgStructDefenseSet",
            Msg::StructDefenseClear { .. } => "MsgStructDefenseClear",
            Msg::FleetMove { .. } => "MsgFleetMove",
            Msg::PlanetRaidComplete { .. } => "MsgPlanetRaidComplete",
        }
    }
}

/// The message types the sim applies, by chain name.
pub const APPLIED: &[&str] = &[
    "MsgPlanetExplore",
    "MsgStructBuild",
    "MsgStructBuildInitiate",
    "MsgStructBuildComplete",
    "MsgStructActivate",
    "MsgStructDeactivate",
    "MsgStructOreMinerComplete",
    "MsgStructOreRefineryComplete",
    "MsgStructAttack",
    "MsgStructDefenseSet",
    "MsgStructDefenseClear",
    "MsgFleetMove",
    "MsgPlanetRaidComplete",
];

/// One requirement of an action and whether it holds.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Requirement {
    /// The chain's name for it (`sufficientCharge`, `playerOnline`, `proofOfWork`, ...).
    pub requirement: &'static str,
    pub met: bool,
    /// What was found, in numbers where there are numbers.
    pub detail: String,
}

/// Facts a caller may assume instead of reading them from the world
/// (`structs_validate_action`'s `game_state`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Assume {
    pub block_height: Option<u64>,
    pub charge: Option<u64>,
    pub available_capacity: Option<i128>,
    pub player_online: Option<bool>,
    pub fleet_on_station: Option<bool>,
    pub command_ship_online: Option<bool>,
}

/// A parsed message with who sent it and where it sat in the transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signed {
    pub msg: Msg,
    pub signer: Signer,
}

/// The messages of a transaction object, each still raw, with its JSON path.
pub fn messages(tx: &Value, field: &str) -> Result<Vec<(String, Value)>, ToolError> {
    let (list, path) = if let Some(m) = tx.pointer("/body/messages") {
        (m, format!("{field}.body.messages"))
    } else if let Some(m) = tx.get("messages") {
        (m, format!("{field}.messages"))
    } else if tx.get("@type").is_some() {
        return Ok(vec![(field.to_string(), tx.clone())]);
    } else {
        return Err(ToolError::field(
            ErrorCode::ValidationMissingField,
            format!("{field}.body.messages"),
            "a transaction holds its messages in body.messages (or messages), each with an @type",
        ));
    };
    let Some(list) = list.as_array() else {
        return Err(ToolError::field(
            ErrorCode::ValidationWrongType,
            path,
            "must be an array of messages",
        ));
    };
    if list.is_empty() {
        return Err(ToolError::field(
            ErrorCode::ValidationInvalidValue,
            path,
            "a transaction needs at least one message",
        ));
    }
    Ok(list
        .iter()
        .enumerate()
        .map(|(i, m)| (format!("{path}[{i}]"), m.clone()))
        .collect())
}

/// The message's short type name (`MsgStructAttack`) from its `@type`.
pub fn type_name<'a>(msg: &'a Value, path: &str) -> Result<&'a str, ToolError> {
    let full = msg.get("@type").and_then(Value::as_str).ok_or_else(|| {
        ToolError::field(
            ErrorCode::ValidationMissingField,
            format!("{path}.@type"),
            "every message names its type, e.g. /structs.structs.MsgStructBuildInitiate",
        )
    })?;
    Ok(full.strip_prefix(TYPE_PREFIX).unwrap_or(full))
}

/// Parses one raw message into a typed one. `path` names it in errors
/// (`transaction.body.messages[0]`).
pub fn parse(msg: &Value, path: &str) -> Result<Signed, ToolError> {
    let name = type_name(msg, path)?;
    let obj = msg.as_object().ok_or_else(|| {
        ToolError::field(ErrorCode::ValidationWrongType, path, "must be an object")
    })?;
    let f = Fields { obj, path };
    check_field_names(name, &f)?;
    let signer = Signer {
        creator: f.opt_str("creator")?.map(str::to_string),
        player: f.opt_id("playerId", EntityKind::Player)?,
    };
    let msg = message(name, &f, &signer)?;
    Ok(Signed { msg, signer })
}

/// Refuses a field that is none of the message's in tx.proto, nor a documented alias.
/// Messages the sim does not apply are not checked here.
fn check_field_names(name: &str, f: &Fields) -> Result<(), ToolError> {
    let defined = if name == "MsgStructBuild" {
        tx::definition("MsgStructBuildInitiate")
    } else {
        tx::definition(name)
    };
    let Some(def) = defined.filter(|_| APPLIED.contains(&name)) else {
        return Ok(());
    };
    for key in f.obj.keys() {
        // The older build message names the type `structType` (its alias).
        let own = def.field(key).is_some() && !(name == "MsgStructBuild" && key == "structTypeId");
        if key == "@type" || own || tx::alias(name, key).is_some() {
            continue;
        }
        let fields: Vec<&str> = def.fields.iter().map(|f| f.name).collect();
        return Err(f.err(
            ErrorCode::ValidationInvalidValue,
            key,
            format!(
                "is not a field of {name}: the chain's message has {}",
                fields.join(", ")
            ),
        ));
    }
    Ok(())
}

/// The typed message of type `name`, read from its fields; `signer` as already read.
fn message(name: &str, f: &Fields, signer: &Signer) -> Result<Msg, ToolError> {
    Ok(match name {
        "MsgPlanetExplore" => Msg::PlanetExplore {
            player: f.id("playerId", EntityKind::Player)?,
        },
        "MsgStructBuildInitiate" => Msg::StructBuildInitiate {
            player: f.id("playerId", EntityKind::Player)?,
            struct_type: f.struct_type("structTypeId")?,
            ambit: f.ambit("operatingAmbit")?,
            slot: f.slot("slot")?,
            location: None,
        },
        "MsgStructBuild" => struct_build(f, signer)?,
        "MsgStructBuildComplete" => Msg::StructBuildComplete {
            strct: f.id("structId", EntityKind::Struct)?,
            nonce: f.nonce()?,
            proof: f.proof()?,
        },
        "MsgStructActivate" => Msg::StructActivate {
            strct: f.id("structId", EntityKind::Struct)?,
        },
        "MsgStructDeactivate" => Msg::StructDeactivate {
            strct: f.id("structId", EntityKind::Struct)?,
        },
        "MsgStructOreMinerComplete" => Msg::StructOreMinerComplete {
            strct: f.id("structId", EntityKind::Struct)?,
            nonce: f.nonce()?,
            proof: f.proof()?,
        },
        "MsgStructOreRefineryComplete" => Msg::StructOreRefineryComplete {
            strct: f.id("structId", EntityKind::Struct)?,
            nonce: f.nonce()?,
            proof: f.proof()?,
        },
        "MsgStructAttack" => struct_attack(f)?,
        "MsgStructDefenseSet" => Msg::StructDefenseSet {
            defender: f.id("defenderStructId", EntityKind::Struct)?,
            protected: f.id("protectedStructId", EntityKind::Struct)?,
        },
        "MsgStructDefenseClear" => Msg::StructDefenseClear {
            defender: f.id("defenderStructId", EntityKind::Struct)?,
        },
        "MsgFleetMove" => Msg::FleetMove {
            fleet: f.id("fleetId", EntityKind::Fleet)?,
            destination: f.id("destinationLocationId", EntityKind::Planet)?,
        },
        "MsgPlanetRaidComplete" => Msg::PlanetRaidComplete {
            fleet: f.id("fleetId", EntityKind::Fleet)?,
            planet: f.opt_id("planetId", EntityKind::Planet)?,
            nonce: f.nonce()?,
            proof: f.proof()?,
        },
        other => return Err(not_applied(other, f.path)),
    })
}

/// `MsgStructBuild`, the older build message: its type is `structType`, it names a
/// location, and the player is the signer's.
fn struct_build(f: &Fields, signer: &Signer) -> Result<Msg, ToolError> {
    let location = f.opt_raw_id("locationId")?;
    // 0: the rules resolve the player from the creator.
    let player = signer.player.unwrap_or_default();
    Ok(Msg::StructBuildInitiate {
        player,
        struct_type: f.struct_type("structType")?,
        ambit: f.ambit("operatingAmbit")?,
        slot: f.slot("slot")?,
        location,
    })
}

/// `MsgStructAttack`: the attacker under either of its names, the targets under any of
/// theirs, and the weapon (primary when not given).
fn struct_attack(f: &Fields) -> Result<Msg, ToolError> {
    let strct = if f.obj.contains_key("operatingStructId") {
        f.id("operatingStructId", EntityKind::Struct)?
    } else {
        f.id("structId", EntityKind::Struct)?
    };
    let target_field = ["targetStructId", "targetId", "targetStructIds"]
        .into_iter()
        .find(|k| f.obj.contains_key(*k))
        .unwrap_or("targetStructId");
    let weapon = match f.opt_str("weaponSystem")? {
        None => WeaponChoice::Primary,
        Some(w) => WeaponChoice::parse(w).ok_or_else(|| {
            f.err(
                ErrorCode::ValidationInvalidValue,
                "weaponSystem",
                format!("{w:?} is not a weapon system; use primary or secondary"),
            )
        })?,
    };
    Ok(Msg::StructAttack {
        strct,
        targets: f.id_list(target_field, EntityKind::Struct)?,
        weapon,
    })
}

/// The error for a message type the sim does not apply: a chain message it does not
/// simulate, or no Structs message at all.
fn not_applied(name: &str, path: &str) -> ToolError {
    let reason = if tx::CHAIN_MESSAGES.contains(&name) {
        format!(
            "{name} is a chain message the embedded world does not simulate; it applies {}",
            APPLIED.join(", ")
        )
    } else {
        format!(
            "{name} is not a Structs message type; the sim applies {}",
            APPLIED.join(", ")
        )
    };
    ToolError::field(
        ErrorCode::ValidationInvalidValue,
        format!("{path}.@type"),
        reason,
    )
}

/// The message as the chain's JSON, for tools that build messages for agents.
pub fn to_json(msg: &Msg, creator: &str) -> Value {
    use serde_json::json;
    let sid = |i: &u64| format!("5-{i}");
    let mut v = match msg {
        Msg::PlanetExplore { player } => json!({"playerId": format!("1-{player}")}),
        Msg::StructBuildInitiate {
            player,
            struct_type,
            ambit,
            slot,
            ..
        } => {
            let mut m =
                json!({"playerId": format!("1-{player}"), "structTypeId": struct_type.to_string()});
            if let Some(a) = ambit {
                m["operatingAmbit"] = json!(a.name());
            }
            if let Some(s) = slot {
                // A uint64, so a string.
                m["slot"] = json!(s.to_string());
            }
            m
        }
        Msg::StructBuildComplete {
            strct,
            nonce,
            proof,
        }
        | Msg::StructOreMinerComplete {
            strct,
            nonce,
            proof,
        }
        | Msg::StructOreRefineryComplete {
            strct,
            nonce,
            proof,
        } => {
            let mut m = json!({"structId": sid(strct), "nonce": nonce});
            if let Some(p) = proof {
                m["proof"] = json!(p);
            }
            m
        }
        Msg::StructActivate { strct } | Msg::StructDeactivate { strct } => {
            json!({"structId": sid(strct)})
        }
        Msg::StructAttack {
            strct,
            targets,
            weapon,
        } => json!({
            "operatingStructId": sid(strct),
            // A repeated field: one id a target.
            "targetStructId": targets.iter().map(sid).collect::<Vec<_>>(),
            "weaponSystem": weapon.chain_name(),
        }),
        Msg::StructDefenseSet {
            defender,
            protected,
        } => json!({"defenderStructId": sid(defender), "protectedStructId": sid(protected)}),
        Msg::StructDefenseClear { defender } => json!({"defenderStructId": sid(defender)}),
        Msg::FleetMove { fleet, destination } => {
            json!({"fleetId": format!("9-{fleet}"), "destinationLocationId": format!("2-{destination}")})
        }
        Msg::PlanetRaidComplete {
            fleet,
            nonce,
            proof,
            ..
        } => {
            // The chain raids the planet the fleet is at: the message names no planet.
            let mut m = json!({"fleetId": format!("9-{fleet}"), "nonce": nonce});
            if let Some(p) = proof {
                m["proof"] = json!(p);
            }
            m
        }
    };
    let obj = v.as_object_mut().expect("messages are objects");
    let mut out = Map::new();
    out.insert(
        "@type".into(),
        Value::String(format!("{TYPE_PREFIX}{}", msg.type_name())),
    );
    out.insert("creator".into(), Value::String(creator.into()));
    out.extend(std::mem::take(obj));
    Value::Object(out)
}

/// A node's hash of broadcast transaction bytes: SHA-256, upper-case hex.
pub fn bytes_hash(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect()
}

/// A transaction's hash: the upper-case hex SHA-256 of its canonical JSON and the height
/// it was applied at, as the chain's hashes look (64 hex digits).
pub fn tx_hash(tx: &Value, height: u64) -> String {
    let text = format!("{height}:{tx}");
    structs_pow::hash_hex(&text).to_ascii_uppercase()
}

struct Fields<'a> {
    obj: &'a Map<String, Value>,
    path: &'a str,
}

impl Fields<'_> {
    fn err(&self, code: ErrorCode, field: &str, reason: impl Into<String>) -> ToolError {
        ToolError::field(code, format!("{}.{field}", self.path), reason)
    }

    fn opt_str(&self, field: &str) -> Result<Option<&str>, ToolError> {
        match self.obj.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(self.err(ErrorCode::ValidationWrongType, field, "must be a string")),
        }
    }

    fn opt_raw_id(&self, field: &str) -> Result<Option<EntityId>, ToolError> {
        let Some(text) = self.opt_str(field)? else {
            return Ok(None);
        };
        EntityId::parse(text)
            .map(Some)
            .map_err(|e| self.err(ErrorCode::ValidationInvalidFormat, field, e.to_string()))
    }

    fn opt_id(&self, field: &str, kind: EntityKind) -> Result<Option<u64>, ToolError> {
        let Some(id) = self.opt_raw_id(field)? else {
            return Ok(None);
        };
        if id.kind != kind {
            return Err(self.err(
                ErrorCode::ValidationWrongEntityType,
                field,
                format!(
                    "expected a {kind} id ({}-N), got {id}, which is a {}",
                    kind.code(),
                    id.kind
                ),
            ));
        }
        Ok(Some(id.index))
    }

    fn id(&self, field: &str, kind: EntityKind) -> Result<u64, ToolError> {
        self.opt_id(field, kind)?.ok_or_else(|| {
            self.err(
                ErrorCode::ValidationMissingField,
                field,
                format!("is required (a {kind} id, {}-N)", kind.code()),
            )
        })
    }

    fn id_list(&self, field: &str, kind: EntityKind) -> Result<Vec<u64>, ToolError> {
        let texts: Vec<String> = match self.obj.get(field) {
            Some(Value::String(s)) => s.split(',').map(|t| t.trim().to_string()).collect(),
            Some(Value::Array(a)) => a
                .iter()
                .map(|v| {
                    v.as_str().map(str::to_string).ok_or_else(|| {
                        self.err(
                            ErrorCode::ValidationWrongType,
                            field,
                            "must hold id strings",
                        )
                    })
                })
                .collect::<Result<_, _>>()?,
            None | Some(Value::Null) => {
                return Err(self.err(
                    ErrorCode::ValidationMissingField,
                    field,
                    "is required (the target struct ids, comma separated)",
                ));
            }
            Some(_) => {
                return Err(self.err(
                    ErrorCode::ValidationWrongType,
                    field,
                    "must be a comma-separated string of struct ids",
                ));
            }
        };
        let mut out = Vec::new();
        for t in texts.iter().filter(|t| !t.is_empty()) {
            let id = EntityId::parse(t)
                .map_err(|e| self.err(ErrorCode::ValidationInvalidFormat, field, e.to_string()))?;
            if id.kind != kind {
                return Err(self.err(
                    ErrorCode::ValidationWrongEntityType,
                    field,
                    format!("{id} is a {}, not a {kind}", id.kind),
                ));
            }
            out.push(id.index);
        }
        if out.is_empty() {
            return Err(self.err(ErrorCode::ValidationMissingField, field, "names no target"));
        }
        Ok(out)
    }

    fn uint(&self, field: &str) -> Result<Option<u64>, ToolError> {
        match self.obj.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => n.as_u64().map(Some).ok_or_else(|| {
                self.err(
                    ErrorCode::ValidationWrongType,
                    field,
                    "must be a whole number",
                )
            }),
            Some(Value::String(s)) => s.parse().map(Some).map_err(|_| {
                self.err(
                    ErrorCode::ValidationWrongType,
                    field,
                    format!("{s:?} is not a whole number"),
                )
            }),
            Some(_) => Err(self.err(
                ErrorCode::ValidationWrongType,
                field,
                "must be a whole number",
            )),
        }
    }

    fn struct_type(&self, field: &str) -> Result<u8, ToolError> {
        let n = self.uint(field)?.ok_or_else(|| {
            self.err(
                ErrorCode::ValidationMissingField,
                field,
                "is required (a struct type id, 1-22)",
            )
        })?;
        u8::try_from(n)
            .ok()
            .filter(|id| struct_type(*id).is_some())
            .ok_or_else(|| {
                self.err(
                    ErrorCode::ValidationOutOfRange,
                    field,
                    format!(
                        "{n} is not a struct type; the chain has types 1-{}",
                        struct_types().len()
                    ),
                )
            })
    }

    fn ambit(&self, field: &str) -> Result<Option<Ambit>, ToolError> {
        let bad = |shown: String| {
            self.err(
                ErrorCode::ValidationInvalidValue,
                field,
                format!(
                    "{shown} is not an operating ambit; use water, land, air or space (or the enum 1-4)"
                ),
            )
        };
        match self.obj.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => match s.parse::<u64>() {
                Ok(n) => ambit_from_enum(n).map(Some).ok_or_else(|| bad(s.clone())),
                Err(_) => parse_ambit(s)
                    .map(Some)
                    .ok_or_else(|| bad(format!("{s:?}"))),
            },
            Some(Value::Number(n)) => n
                .as_u64()
                .and_then(ambit_from_enum)
                .map(Some)
                .ok_or_else(|| bad(n.to_string())),
            Some(other) => Err(bad(other.to_string())),
        }
    }

    fn slot(&self, field: &str) -> Result<Option<u8>, ToolError> {
        match self.uint(field)? {
            None => Ok(None),
            Some(n) if n < 4 => Ok(Some(n as u8)),
            Some(n) => Err(self.err(
                ErrorCode::ValidationOutOfRange,
                field,
                format!("slot {n} does not exist; each ambit has slots 0-3"),
            )),
        }
    }

    fn nonce(&self) -> Result<String, ToolError> {
        let text = match self.obj.get("nonce") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            None | Some(Value::Null) => {
                return Err(self.err(
                    ErrorCode::ValidationMissingField,
                    "nonce",
                    "is required: the nonce whose hash meets the difficulty (see structs_calculate_proof_of_work)",
                ));
            }
            Some(_) => {
                return Err(self.err(ErrorCode::ValidationWrongType, "nonce", "must be a string"));
            }
        };
        if text.is_empty() || text.len() > 40 {
            return Err(self.err(
                ErrorCode::ValidationInvalidFormat,
                "nonce",
                "must be 1-40 characters",
            ));
        }
        Ok(text)
    }

    fn proof(&self) -> Result<Option<String>, ToolError> {
        Ok(self.opt_str("proof")?.map(str::to_string))
    }
}

/// An ambit by name (`space`, case-insensitive).
pub fn parse_ambit(text: &str) -> Option<Ambit> {
    Ambit::ALL
        .into_iter()
        .find(|a| a.name().eq_ignore_ascii_case(text.trim()))
}

/// An ambit from the chain's message enum (water 1, land 2, air 3, space 4).
pub fn ambit_from_enum(n: u64) -> Option<Ambit> {
    match n {
        1 => Some(Ambit::Water),
        2 => Some(Ambit::Land),
        3 => Some(Ambit::Air),
        4 => Some(Ambit::Space),
        _ => None,
    }
}

/// Parses a transaction object into its messages.
pub fn parse_transaction(tx: &Value, field: &str) -> Result<Vec<Signed>, ToolError> {
    messages(tx, field)?
        .iter()
        .map(|(path, m)| parse(m, path))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_the_chain_shapes() {
        let tx = json!({"body": {"messages": [
            {"@type": "/structs.structs.MsgStructBuildInitiate", "creator": "structs1x",
             "playerId": "1-3", "structTypeId": "14", "operatingAmbit": 2, "slot": 1},
            {"@type": "/structs.structs.MsgStructAttack", "creator": "structs1x",
             "operatingStructId": "5-1", "targetStructId": "5-7,5-8", "weaponSystem": "secondary"}
        ]}});
        let msgs = messages(&tx, "transaction").unwrap();
        assert_eq!(msgs[1].0, "transaction.body.messages[1]");
        let first = parse(&msgs[0].1, &msgs[0].0).unwrap();
        assert_eq!(
            first.msg,
            Msg::StructBuildInitiate {
                player: 3,
                struct_type: 14,
                ambit: Some(Ambit::Land),
                slot: Some(1),
                location: None
            }
        );
        assert_eq!(first.signer.creator.as_deref(), Some("structs1x"));
        let second = parse(&msgs[1].1, &msgs[1].0).unwrap();
        assert_eq!(
            second.msg,
            Msg::StructAttack {
                strct: 1,
                targets: vec![7, 8],
                weapon: WeaponChoice::Secondary
            }
        );
        // What to_json writes, parse reads back.
        let back = parse(&to_json(&second.msg, "structs1x"), "m").unwrap();
        assert_eq!(back.msg, second.msg);
    }

    /// One message of each kind the sim applies.
    fn every_kind() -> Vec<Msg> {
        vec![
            Msg::PlanetExplore { player: 2 },
            Msg::StructBuildInitiate {
                player: 1,
                struct_type: 14,
                ambit: Some(Ambit::Land),
                slot: Some(2),
                location: None,
            },
            Msg::StructBuildComplete {
                strct: 4,
                nonce: "77".into(),
                proof: Some("00ab".into()),
            },
            Msg::StructActivate { strct: 4 },
            Msg::StructDeactivate { strct: 4 },
            Msg::StructOreMinerComplete {
                strct: 4,
                nonce: "1".into(),
                proof: None,
            },
            Msg::StructOreRefineryComplete {
                strct: 4,
                nonce: "1".into(),
                proof: None,
            },
            Msg::StructAttack {
                strct: 1,
                targets: vec![7, 8],
                weapon: WeaponChoice::Primary,
            },
            Msg::StructDefenseSet {
                defender: 3,
                protected: 1,
            },
            Msg::StructDefenseClear { defender: 3 },
            Msg::FleetMove {
                fleet: 1,
                destination: 9,
            },
            Msg::PlanetRaidComplete {
                fleet: 1,
                planet: Some(9),
                nonce: "5".into(),
                proof: None,
            },
        ]
    }

    #[test]
    fn every_message_built_is_the_chains_to_the_field() {
        for msg in every_kind() {
            let v = to_json(&msg, "structs1x");
            let problems = tx::check(&v).expect("a defined message");
            assert!(problems.is_empty(), "{v}: {problems:?}");
            let back = parse(&v, "m").unwrap();
            assert_eq!(back.msg.type_name(), msg.type_name(), "{v}");
        }
        let attack = to_json(&every_kind()[7], "structs1x");
        assert_eq!(attack["targetStructId"], json!(["5-7", "5-8"]));
        assert_eq!(attack["weaponSystem"], "primaryWeapon");
        let build = to_json(&every_kind()[1], "structs1x");
        assert_eq!(
            (&build["structTypeId"], &build["slot"]),
            (&json!("14"), &json!("2"))
        );
        let raid = to_json(&every_kind()[11], "structs1x");
        assert!(
            raid.get("planetId").is_none(),
            "the chain's raid names no planet: {raid}"
        );
    }

    #[test]
    fn a_field_the_chain_lacks_is_refused_and_an_alias_is_taken() {
        let e = parse(
            &json!({"@type": "/structs.structs.MsgFleetMove", "creator": "structs1x",
                    "fleetId": "9-1", "destinationLocationId": "2-3", "destinationId": "2-3"}),
            "m",
        )
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::ValidationInvalidValue);
        assert!(e.message.contains("m.destinationId"), "{}", e.message);
        assert!(
            e.message
                .contains("creator, fleetId, destinationLocationId"),
            "{}",
            e.message
        );
        // The older build message's structTypeId is not its field (structType is).
        let e = parse(
            &json!({"@type": "/structs.structs.MsgStructBuild", "creator": "structs1x",
                    "structTypeId": "14"}),
            "m",
        )
        .unwrap_err();
        assert!(e.message.contains("m.structTypeId"), "{}", e.message);
        // Aliases are read, and written back in the chain's form.
        let m = parse(
            &json!({"@type": "/structs.structs.MsgStructAttack", "creator": "structs1x",
                    "structId": "5-1", "targetStructIds": ["5-2"], "weaponSystem": "primaryWeapon",
                    "playerId": "1-1"}),
            "m",
        )
        .unwrap();
        let out = to_json(&m.msg, "structs1x");
        assert_eq!(out["operatingStructId"], "5-1");
        assert_eq!(out["targetStructId"], json!(["5-2"]));
        assert!(
            out.get("structId").is_none() && out.get("playerId").is_none(),
            "{out}"
        );
        // Every alias names a message the chain or this project knows.
        for a in tx::ALIASES {
            assert!(
                a.message == "*"
                    || tx::CHAIN_MESSAGES.contains(&a.message)
                    || APPLIED.contains(&a.message),
                "{}",
                a.message
            );
        }
    }

    #[test]
    fn errors_name_the_field() {
        let bad = json!({"@type": "/structs.structs.MsgStructBuildComplete", "structId": "1-3", "nonce": "5"});
        let e = parse(&bad, "tx.messages[0]").unwrap_err();
        assert_eq!(e.code.as_str(), "VALIDATION_WRONG_ENTITY_TYPE");
        assert_eq!(e.field.as_deref(), Some("tx.messages[0].structId"));

        let e = parse(&json!({"@type": "MsgReactorInfuse"}), "m").unwrap_err();
        assert!(e.to_string().contains("does not simulate"), "{e}");
        let e = parse(&json!({"@type": "MsgWhatever"}), "m").unwrap_err();
        assert!(e.to_string().contains("not a Structs message"), "{e}");
        let e = parse(
            &json!({"@type": "MsgStructBuildInitiate", "playerId": "1-1", "structTypeId": 23}),
            "m",
        )
        .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("m.structTypeId"));
        assert!(messages(&json!({"body": {"messages": []}}), "t").is_err());
        assert!(messages(&json!({"x": 1}), "t").is_err());
    }
}
