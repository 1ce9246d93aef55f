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

/// `objectType` (`keys.proto`): the kinds by their code.
pub const OBJECT_TYPE: &[&str] = &[
    "guild",
    "player",
    "planet",
    "reactor",
    "substation",
    "struct",
    "allocation",
    "infusion",
    "address",
    "fleet",
    "provider",
    "agreement",
];
/// `ambit`.
pub const AMBIT: &[&str] = &["none", "water", "land", "air", "space", "local"];
/// `fleetStatus`.
pub const FLEET_STATUS: &[&str] = &["onStation", "away"];
/// `planetStatus`.
pub const PLANET_STATUS: &[&str] = &["active", "complete"];
/// `allocationType`.
pub const ALLOCATION_TYPE: &[&str] = &["static", "dynamic", "automated", "providerAgreement"];
/// `guildJoinBypassLevel`.
pub const GUILD_JOIN_BYPASS_LEVEL: &[&str] = &["closed", "permissioned", "member"];
/// `providerAccessPolicy`.
pub const PROVIDER_ACCESS_POLICY: &[&str] = &["openMarket", "guildMarket", "closedMarket"];
const ACTIVE_WEAPONRY: &[&str] = &[
    "noActiveWeaponry",
    "guidedWeaponry",
    "unguidedWeaponry",
    "attackRun",
    "selfDestruct",
];
const WEAPON_CONTROL: &[&str] = &["noWeaponControl", "guided", "unguided"];

/// `cosmos.base.v1beta1.Coin`.
pub static COIN: Message = Message {
    name: "Coin",
    fields: &[f("denom", Ty::Str), f("amount", Ty::Int)],
};

/// `GridAttributes`: what the chain keeps of an object's power grid.
pub static GRID_ATTRIBUTES: Message = Message {
    name: "GridAttributes",
    fields: &[
        f("ore", Ty::U64),
        f("fuel", Ty::U64),
        f("capacity", Ty::U64),
        f("load", Ty::U64),
        f("structsLoad", Ty::U64),
        f("power", Ty::U64),
        f("connectionCapacity", Ty::U64),
        f("connectionCount", Ty::U64),
        f("allocationPointerStart", Ty::U64),
        f("allocationPointerEnd", Ty::U64),
        f("proxyNonce", Ty::U64),
        f("lastAction", Ty::U64),
        f("nonce", Ty::U64),
        f("ready", Ty::U64),
        f("checkpointBlock", Ty::U64),
    ],
};

pub static GUILD: Message = Message {
    name: "Guild",
    fields: &[
        f("id", Ty::Str),
        f("index", Ty::U64),
        f("endpoint", Ty::Str),
        f("creator", Ty::Str),
        f("owner", Ty::Str),
        f("joinInfusionMinimum", Ty::U64),
        f(
            "joinInfusionMinimumBypassByRequest",
            Ty::Enum(GUILD_JOIN_BYPASS_LEVEL),
        ),
        f(
            "joinInfusionMinimumBypassByInvite",
            Ty::Enum(GUILD_JOIN_BYPASS_LEVEL),
        ),
        f("primaryReactorId", Ty::Str),
        f("entrySubstationId", Ty::Str),
        f("entryRank", Ty::U64),
        f("name", Ty::Str),
        f("pfp", Ty::Str),
    ],
};

/// `Player`. `pfpClientRenderAttributes` came with chain v0.18, after the reference's
/// v0.16: a node of either release is read, and the sim writes the newer one.
pub static PLAYER: Message = Message {
    name: "Player",
    fields: &[
        f("id", Ty::Str),
        f("index", Ty::U64),
        f("guildId", Ty::Str),
        f("substationId", Ty::Str),
        f("creator", Ty::Str),
        f("primaryAddress", Ty::Str),
        f("planetId", Ty::Str),
        f("fleetId", Ty::Str),
        f("guildRank", Ty::U64),
        f("name", Ty::Str),
        f("pfp", Ty::Str),
        f("pfpClientRenderAttributes", Ty::Str),
    ],
};

/// Fields a later chain release added to a message, which the reference may lack: a
/// record may carry them or not ([`Message::check`]), and the contract tests allow them
/// beside the reference's fields.
pub const NEWER_FIELDS: &[(&str, &str)] = &[("Player", "pfpClientRenderAttributes")];

/// `PlayerInventory`: the player's alpha, one coin.
pub static PLAYER_INVENTORY: Message = Message {
    name: "PlayerInventory",
    fields: &[f("rocks", Ty::Msg(&COIN))],
};

pub static PLANET: Message = Message {
    name: "Planet",
    fields: &[
        f("id", Ty::Str),
        f("maxOre", Ty::U64),
        f("creator", Ty::Str),
        f("owner", Ty::Str),
        f("space", Ty::List(&Ty::Str)),
        f("air", Ty::List(&Ty::Str)),
        f("land", Ty::List(&Ty::Str)),
        f("water", Ty::List(&Ty::Str)),
        f("spaceSlots", Ty::U64),
        f("airSlots", Ty::U64),
        f("landSlots", Ty::U64),
        f("waterSlots", Ty::U64),
        f("status", Ty::Enum(PLANET_STATUS)),
        f("locationListStart", Ty::Str),
        f("locationListLast", Ty::Str),
        f("name", Ty::Str),
    ],
};

pub static PLANET_ATTRIBUTES: Message = Message {
    name: "PlanetAttributes",
    fields: &[
        f("planetaryShield", Ty::U64),
        f("repairNetworkQuantity", Ty::U64),
        f("defensiveCannonQuantity", Ty::U64),
        f("coordinatedGlobalShieldNetworkQuantity", Ty::U64),
        f("lowOrbitBallisticsInterceptorNetworkQuantity", Ty::U64),
        f(
            "advancedLowOrbitBallisticsInterceptorNetworkQuantity",
            Ty::U64,
        ),
        f(
            "lowOrbitBallisticsInterceptorNetworkSuccessRateNumerator",
            Ty::U64,
        ),
        f(
            "lowOrbitBallisticsInterceptorNetworkSuccessRateDenominator",
            Ty::U64,
        ),
        f("orbitalJammingStationQuantity", Ty::U64),
        f("advancedOrbitalJammingStationQuantity", Ty::U64),
        f("blockStartRaid", Ty::U64),
    ],
};

pub static REACTOR: Message = Message {
    name: "Reactor",
    fields: &[
        f("id", Ty::Str),
        f("validator", Ty::Str),
        f("guildId", Ty::Str),
        f("defaultCommission", Ty::Dec),
        f("rawAddress", Ty::Bytes),
        f("owner", Ty::Str),
    ],
};

pub static SUBSTATION: Message = Message {
    name: "Substation",
    fields: &[
        f("id", Ty::Str),
        f("owner", Ty::Str),
        f("creator", Ty::Str),
        f("name", Ty::Str),
        f("pfp", Ty::Str),
    ],
};

pub static STRUCT: Message = Message {
    name: "Struct",
    fields: &[
        f("id", Ty::Str),
        f("index", Ty::U64),
        f("type", Ty::U64),
        f("creator", Ty::Str),
        f("owner", Ty::Str),
        f("locationType", Ty::Enum(OBJECT_TYPE)),
        f("locationId", Ty::Str),
        f("operatingAmbit", Ty::Enum(AMBIT)),
        f("slot", Ty::U64),
    ],
};

/// `StructAttributes`: `status` is the bitmask of [`StructStatus`], the booleans its
/// bits spelt out. A struct's max health is its type's (`StructType.maxHealth`).
pub static STRUCT_ATTRIBUTES: Message = Message {
    name: "StructAttributes",
    fields: &[
        f("health", Ty::U64),
        f("status", Ty::U64),
        f("blockStartBuild", Ty::U64),
        f("blockStartOreMine", Ty::U64),
        f("blockStartOreRefine", Ty::U64),
        f("protectedStructIndex", Ty::U64),
        f("typeCount", Ty::U64),
        f("isMaterialized", Ty::Bool),
        f("isBuilt", Ty::Bool),
        f("isOnline", Ty::Bool),
        f("isHidden", Ty::Bool),
        f("isDestroyed", Ty::Bool),
        f("isLocked", Ty::Bool),
    ],
};

pub static ALLOCATION: Message = Message {
    name: "Allocation",
    fields: &[
        f("id", Ty::Str),
        f("type", Ty::Enum(ALLOCATION_TYPE)),
        f("sourceObjectId", Ty::Str),
        f("index", Ty::U64),
        f("destinationId", Ty::Str),
        f("creator", Ty::Str),
        f("controller", Ty::Str),
    ],
};

/// `Infusion`: no id; keyed by `destinationId` and `address`.
pub static INFUSION: Message = Message {
    name: "Infusion",
    fields: &[
        f("destinationType", Ty::Enum(OBJECT_TYPE)),
        f("destinationId", Ty::Str),
        f("fuel", Ty::U64),
        f("power", Ty::U64),
        f("commission", Ty::Dec),
        f("playerId", Ty::Str),
        f("address", Ty::Str),
        f("ratio", Ty::U64),
        f("defusing", Ty::U64),
    ],
};

/// `QueryAddressResponse`: an address, its player and its permissions; keyed by the
/// address.
pub static ADDRESS: Message = Message {
    name: "QueryAddressResponse",
    fields: &[
        f("address", Ty::Str),
        f("playerId", Ty::Str),
        f("permissions", Ty::U64),
    ],
};

pub static FLEET: Message = Message {
    name: "Fleet",
    fields: &[
        f("id", Ty::Str),
        f("owner", Ty::Str),
        f("locationType", Ty::Enum(OBJECT_TYPE)),
        f("locationId", Ty::Str),
        f("status", Ty::Enum(FLEET_STATUS)),
        f("locationListForward", Ty::Str),
        f("locationListBackward", Ty::Str),
        f("space", Ty::List(&Ty::Str)),
        f("air", Ty::List(&Ty::Str)),
        f("land", Ty::List(&Ty::Str)),
        f("water", Ty::List(&Ty::Str)),
        f("spaceSlots", Ty::U64),
        f("airSlots", Ty::U64),
        f("landSlots", Ty::U64),
        f("waterSlots", Ty::U64),
        f("commandStruct", Ty::Str),
    ],
};

pub static PROVIDER: Message = Message {
    name: "Provider",
    fields: &[
        f("id", Ty::Str),
        f("index", Ty::U64),
        f("substationId", Ty::Str),
        f("rate", Ty::Msg(&COIN)),
        f("accessPolicy", Ty::Enum(PROVIDER_ACCESS_POLICY)),
        f("capacityMinimum", Ty::U64),
        f("capacityMaximum", Ty::U64),
        f("durationMinimum", Ty::U64),
        f("durationMaximum", Ty::U64),
        f("providerCancellationPenalty", Ty::Dec),
        f("consumerCancellationPenalty", Ty::Dec),
        f("creator", Ty::Str),
        f("owner", Ty::Str),
    ],
};

/// `Agreement`: its consumer is its `owner`.
pub static AGREEMENT: Message = Message {
    name: "Agreement",
    fields: &[
        f("id", Ty::Str),
        f("providerId", Ty::Str),
        f("allocationId", Ty::Str),
        f("capacity", Ty::U64),
        f("startBlock", Ty::U64),
        f("endBlock", Ty::U64),
        f("creator", Ty::Str),
        f("owner", Ty::Str),
    ],
};

pub static STRUCT_TYPE: Message = Message {
    name: "StructType",
    fields: &[
        f("id", Ty::U64),
        f("type", Ty::Str),
        f("class", Ty::Str),
        f("classAbbreviation", Ty::Str),
        f("defaultCosmeticModelNumber", Ty::Str),
        f("defaultCosmeticName", Ty::Str),
        f("category", Ty::Enum(OBJECT_TYPE)),
        f("buildLimit", Ty::U64),
        f("buildDifficulty", Ty::U64),
        f("buildDraw", Ty::U64),
        f("maxHealth", Ty::U64),
        f("passiveDraw", Ty::U64),
        f("possibleAmbit", Ty::U64),
        f("movable", Ty::Bool),
        f("slotBound", Ty::Bool),
        f("primaryWeapon", Ty::Enum(ACTIVE_WEAPONRY)),
        f("primaryWeaponControl", Ty::Enum(WEAPON_CONTROL)),
        f("primaryWeaponCharge", Ty::U64),
        f("primaryWeaponAmbits", Ty::U64),
        f("primaryWeaponTargets", Ty::U64),
        f("primaryWeaponShots", Ty::U64),
        f("primaryWeaponDamage", Ty::U64),
        f("primaryWeaponBlockable", Ty::Bool),
        f("primaryWeaponCounterable", Ty::Bool),
        f("primaryWeaponRecoilDamage", Ty::U64),
        f("primaryWeaponShotSuccessRateNumerator", Ty::U64),
        f("primaryWeaponShotSuccessRateDenominator", Ty::U64),
        f("secondaryWeapon", Ty::Enum(ACTIVE_WEAPONRY)),
        f("secondaryWeaponControl", Ty::Enum(WEAPON_CONTROL)),
        f("secondaryWeaponCharge", Ty::U64),
        f("secondaryWeaponAmbits", Ty::U64),
        f("secondaryWeaponTargets", Ty::U64),
        f("secondaryWeaponShots", Ty::U64),
        f("secondaryWeaponDamage", Ty::U64),
        f("secondaryWeaponBlockable", Ty::Bool),
        f("secondaryWeaponCounterable", Ty::Bool),
        f("secondaryWeaponRecoilDamage", Ty::U64),
        f("secondaryWeaponShotSuccessRateNumerator", Ty::U64),
        f("secondaryWeaponShotSuccessRateDenominator", Ty::U64),
        f(
            "passiveWeaponry",
            Ty::Enum(&[
                "noPassiveWeaponry",
                "counterAttack",
                "strongCounterAttack",
                "advancedCounterAttack",
                "lastResort",
            ]),
        ),
        f(
            "unitDefenses",
            Ty::Enum(&[
                "noUnitDefenses",
                "defensiveManeuver",
                "signalJamming",
                "armour",
                "indirectCombatModule",
                "stealthMode",
                "perimeterFencing",
                "reinforcedWalls",
            ]),
        ),
        f(
            "oreReserveDefenses",
            Ty::Enum(&[
                "noOreReserveDefenses",
                "coordinatedReserveResponseTracker",
                "rapidResponsePackage",
                "activeScanning",
                "monitoringStation",
                "oreBunker",
            ]),
        ),
        f(
            "planetaryDefenses",
            Ty::Enum(&[
                "noPlanetaryDefense",
                "defensiveCannon",
                "lowOrbitBallisticInterceptorNetwork",
            ]),
        ),
        f(
            "planetaryMining",
            Ty::Enum(&["noPlanetaryMining", "oreMiningRig"]),
        ),
        f(
            "planetaryRefinery",
            Ty::Enum(&["noPlanetaryRefinery", "oreRefinery"]),
        ),
        f(
            "powerGeneration",
            Ty::Enum(&[
                "noPowerGeneration",
                "smallGenerator",
                "mediumGenerator",
                "largeGenerator",
            ]),
        ),
        f("activateCharge", Ty::U64),
        f("buildCharge", Ty::U64),
        f("defendChangeCharge", Ty::U64),
        f("moveCharge", Ty::U64),
        f("stealthActivateCharge", Ty::U64),
        f("attackReduction", Ty::U64),
        f("attackCounterable", Ty::Bool),
        f("stealthSystems", Ty::Bool),
        f("counterAttack", Ty::U64),
        f("counterAttackSameAmbit", Ty::U64),
        f("postDestructionDamage", Ty::U64),
        f("generatingRate", Ty::U64),
        f("planetaryShieldContribution", Ty::U64),
        f("oreMiningDifficulty", Ty::U64),
        f("oreRefiningDifficulty", Ty::U64),
        f("unguidedDefensiveSuccessRateNumerator", Ty::U64),
        f("unguidedDefensiveSuccessRateDenominator", Ty::U64),
        f("guidedDefensiveSuccessRateNumerator", Ty::U64),
        f("guidedDefensiveSuccessRateDenominator", Ty::U64),
        f("triggerRaidDefeatByDestruction", Ty::Bool),
        f("primaryWeaponGuaranteedShots", Ty::U64),
        f("secondaryWeaponGuaranteedShots", Ty::U64),
    ],
};

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
