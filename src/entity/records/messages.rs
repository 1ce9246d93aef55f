//! The messages themselves: every record a read answers with, its fields in the protos'
//! order, and the enums' values.

use super::{Message, Ty, field as f};

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
