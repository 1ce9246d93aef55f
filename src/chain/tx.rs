//! The chain's transaction messages as structsd's `tx.proto` declares them: their type
//! URLs, fields, JSON types and enum values. [`super::parse`] takes nothing else, bar
//! the documented [`ALIASES`], and [`super::to_json`] writes exactly these fields.
//!
//! The node reads a message's JSON as protojson does: field names as declared (the
//! `snake_case` of `MsgReactorInfuse` too), `uint64` as a decimal string, enums by name,
//! `repeated` as an array.

use serde_json::Value;

use crate::entity::records::{AMBIT, Message, Ty, field as f};

/// `techWeaponSystem` (`keys.proto`), which `MsgStructAttack.weaponSystem` names as a
/// string.
pub const WEAPON_SYSTEM: &[&str] = &["primaryWeapon", "secondaryWeapon"];

macro_rules! msg {
    ($id:ident, $name:literal, [$($field:expr),* $(,)?]) => {
        pub static $id: Message = Message { name: $name, fields: &[$($field),*] };
    };
}

msg!(
    PLANET_EXPLORE,
    "MsgPlanetExplore",
    [f("creator", Ty::Str), f("playerId", Ty::Str)]
);
msg!(
    STRUCT_BUILD_INITIATE,
    "MsgStructBuildInitiate",
    [
        f("creator", Ty::Str),
        f("playerId", Ty::Str),
        f("structTypeId", Ty::U64),
        f("operatingAmbit", Ty::Enum(AMBIT)),
        f("slot", Ty::U64),
    ]
);
msg!(
    STRUCT_BUILD_COMPLETE,
    "MsgStructBuildComplete",
    [
        f("creator", Ty::Str),
        f("structId", Ty::Str),
        f("proof", Ty::Str),
        f("nonce", Ty::Str),
    ]
);
msg!(
    STRUCT_ACTIVATE,
    "MsgStructActivate",
    [f("creator", Ty::Str), f("structId", Ty::Str)]
);
msg!(
    STRUCT_DEACTIVATE,
    "MsgStructDeactivate",
    [f("creator", Ty::Str), f("structId", Ty::Str)]
);
msg!(
    STRUCT_ORE_MINER_COMPLETE,
    "MsgStructOreMinerComplete",
    [
        f("creator", Ty::Str),
        f("structId", Ty::Str),
        f("proof", Ty::Str),
        f("nonce", Ty::Str),
    ]
);
msg!(
    STRUCT_ORE_REFINERY_COMPLETE,
    "MsgStructOreRefineryComplete",
    [
        f("creator", Ty::Str),
        f("structId", Ty::Str),
        f("proof", Ty::Str),
        f("nonce", Ty::Str),
    ]
);
msg!(
    STRUCT_ATTACK,
    "MsgStructAttack",
    [
        f("creator", Ty::Str),
        f("operatingStructId", Ty::Str),
        f("targetStructId", Ty::List(&Ty::Str)),
        f("weaponSystem", Ty::Str),
    ]
);
msg!(
    STRUCT_DEFENSE_SET,
    "MsgStructDefenseSet",
    [
        f("creator", Ty::Str),
        f("defenderStructId", Ty::Str),
        f("protectedStructId", Ty::Str),
    ]
);
msg!(
    STRUCT_DEFENSE_CLEAR,
    "MsgStructDefenseClear",
    [f("creator", Ty::Str), f("defenderStructId", Ty::Str),]
);
msg!(
    FLEET_MOVE,
    "MsgFleetMove",
    [
        f("creator", Ty::Str),
        f("fleetId", Ty::Str),
        f("destinationLocationId", Ty::Str),
    ]
);
msg!(
    PLANET_RAID_COMPLETE,
    "MsgPlanetRaidComplete",
    [
        f("creator", Ty::Str),
        f("fleetId", Ty::Str),
        f("proof", Ty::Str),
        f("nonce", Ty::Str),
    ]
);
msg!(
    REACTOR_INFUSE,
    "MsgReactorInfuse",
    [
        f("creator", Ty::Str),
        f("delegator_address", Ty::Str),
        f("validator_address", Ty::Str),
        f("amount", Ty::Msg(&crate::entity::records::COIN)),
    ]
);
msg!(
    STRUCT_GENERATOR_INFUSE,
    "MsgStructGeneratorInfuse",
    [
        f("creator", Ty::Str),
        f("structId", Ty::Str),
        f("infuseAmount", Ty::Str),
    ]
);

/// The messages the tools build or take, with their fields.
pub static DEFINED: [&Message; 14] = [
    &PLANET_EXPLORE,
    &STRUCT_BUILD_INITIATE,
    &STRUCT_BUILD_COMPLETE,
    &STRUCT_ACTIVATE,
    &STRUCT_DEACTIVATE,
    &STRUCT_ORE_MINER_COMPLETE,
    &STRUCT_ORE_REFINERY_COMPLETE,
    &STRUCT_ATTACK,
    &STRUCT_DEFENSE_SET,
    &STRUCT_DEFENSE_CLEAR,
    &FLEET_MOVE,
    &PLANET_RAID_COMPLETE,
    &REACTOR_INFUSE,
    &STRUCT_GENERATOR_INFUSE,
];

/// The message `name` (`MsgFleetMove`), where the tools know its fields.
pub fn definition(name: &str) -> Option<&'static Message> {
    DEFINED.iter().copied().find(|m| m.name == name)
}

/// What the project takes that the chain does not have, and what it becomes. An alias
/// is read and then written in the chain's form, never passed on as it came.
pub struct Alias {
    /// The message it is taken in (`*` for every message).
    pub message: &'static str,
    /// The field (or, with `field` empty, the message type) taken.
    pub field: &'static str,
    /// What it is written as; empty when it is checked and then dropped.
    pub becomes: &'static str,
    pub why: &'static str,
}

/// Every field alias the parser takes. It also takes a message's name alone as its
/// `@type`, a JSON number for a `uint64`, an ambit's enum number, and the attack's
/// targets as one comma-separated string; the user guide's table of the chain's shapes lists
/// them all.
pub const ALIASES: &[Alias] = &[
    Alias {
        message: "MsgStructBuild",
        field: "",
        becomes: "MsgStructBuildInitiate",
        why: "an older name of the build message",
    },
    Alias {
        message: "MsgStructBuild",
        field: "structType",
        becomes: "structTypeId",
        why: "the older message's name for the type",
    },
    Alias {
        message: "MsgStructBuild",
        field: "locationId",
        becomes: "",
        why: "checked against the player's own planet or fleet; the chain builds there",
    },
    Alias {
        message: "MsgStructBuild",
        field: "locationType",
        becomes: "",
        why: "the type's category decides it on the chain",
    },
    Alias {
        message: "*",
        field: "playerId",
        becomes: "",
        why: "the player the creator acts for; the chain finds it from the creator",
    },
    Alias {
        message: "MsgStructAttack",
        field: "structId",
        becomes: "operatingStructId",
        why: "the attacker, by the name other struct messages use",
    },
    Alias {
        message: "MsgStructAttack",
        field: "targetId",
        becomes: "targetStructId",
        why: "a shorter name for the targets",
    },
    Alias {
        message: "MsgStructAttack",
        field: "targetStructIds",
        becomes: "targetStructId",
        why: "the plural; the chain's field is repeated under the singular",
    },
    Alias {
        message: "MsgPlanetRaidComplete",
        field: "planetId",
        becomes: "",
        why: "checked against where the fleet is; the chain raids the planet the fleet is at",
    },
];

/// Whether `field` of `message` is an alias, and which.
pub fn alias(message: &str, field: &str) -> Option<&'static Alias> {
    ALIASES.iter().find(|a| {
        (a.message == message || a.message == "*") && a.field == field && !field.is_empty()
    })
}

/// How a message's JSON differs from its `tx.proto` definition, strictly (no alias, no
/// JSON number for a `uint64`): each problem `field: what`. A field left out is no
/// problem (the node reads it as its zero). `None` for a message the tools do not
/// define.
pub fn check(message: &Value) -> Option<Vec<String>> {
    let name = message
        .get("@type")?
        .as_str()?
        .strip_prefix(super::TYPE_PREFIX)?;
    let def = definition(name)?;
    let mut body = message.clone();
    body.as_object_mut()?.remove("@type");
    Some(
        def.check(&body)
            .into_iter()
            .filter(|p| !p.ends_with(": missing"))
            .collect(),
    )
}

/// Every message the chain takes: the request of each `rpc` of `tx.proto`'s `Msg`
/// service, in its order (messages whose `rpc` is commented out there are not taken).
pub const CHAIN_MESSAGES: &[&str] = &[
    "MsgUpdateParams",
    "MsgAddressRegister",
    "MsgAddressRevoke",
    "MsgAgreementOpen",
    "MsgAgreementClose",
    "MsgAgreementCapacityIncrease",
    "MsgAgreementCapacityDecrease",
    "MsgAgreementDurationIncrease",
    "MsgAllocationCreate",
    "MsgAllocationDelete",
    "MsgAllocationUpdate",
    "MsgAllocationTransfer",
    "MsgFleetMove",
    "MsgGuildCreate",
    "MsgGuildBankMint",
    "MsgGuildBankRedeem",
    "MsgGuildBankConfiscateAndBurn",
    "MsgGuildUpdateOwnerId",
    "MsgGuildUpdateEntrySubstationId",
    "MsgGuildUpdateEndpoint",
    "MsgGuildUpdateJoinInfusionMinimum",
    "MsgGuildUpdateJoinInfusionMinimumBypassByInvite",
    "MsgGuildUpdateJoinInfusionMinimumBypassByRequest",
    "MsgGuildUpdateEntryRank",
    "MsgGuildUpdateName",
    "MsgGuildUpdatePfp",
    "MsgGuildMembershipInvite",
    "MsgGuildMembershipInviteApprove",
    "MsgGuildMembershipInviteDeny",
    "MsgGuildMembershipInviteRevoke",
    "MsgGuildMembershipJoin",
    "MsgGuildMembershipJoinProxy",
    "MsgGuildMembershipKick",
    "MsgGuildMembershipRequest",
    "MsgGuildMembershipRequestApprove",
    "MsgGuildMembershipRequestDeny",
    "MsgGuildMembershipRequestRevoke",
    "MsgPermissionGrantOnAddress",
    "MsgPermissionGrantOnObject",
    "MsgPermissionRevokeOnAddress",
    "MsgPermissionRevokeOnObject",
    "MsgPermissionSetOnAddress",
    "MsgPermissionSetOnObject",
    "MsgPermissionGuildRankSet",
    "MsgPermissionGuildRankRevoke",
    "MsgPlanetUpdateName",
    "MsgPlanetExplore",
    "MsgPlanetRaidComplete",
    "MsgPlayerUpdatePrimaryAddress",
    "MsgPlayerUpdateGuildRank",
    "MsgPlayerUpdateName",
    "MsgPlayerUpdatePfp",
    "MsgPlayerSend",
    "MsgProviderCreate",
    "MsgProviderWithdrawBalance",
    "MsgProviderUpdateCapacityMinimum",
    "MsgProviderUpdateCapacityMaximum",
    "MsgProviderUpdateDurationMinimum",
    "MsgProviderUpdateDurationMaximum",
    "MsgProviderUpdateAccessPolicy",
    "MsgProviderDelete",
    "MsgReactorInfuse",
    "MsgReactorDefuse",
    "MsgReactorBeginMigration",
    "MsgReactorCancelDefusion",
    "MsgStructActivate",
    "MsgStructDeactivate",
    "MsgStructBuildInitiate",
    "MsgStructBuildComplete",
    "MsgStructBuildCancel",
    "MsgStructDefenseSet",
    "MsgStructDefenseClear",
    "MsgStructMove",
    "MsgStructAttack",
    "MsgStructStealthActivate",
    "MsgStructStealthDeactivate",
    "MsgStructGeneratorInfuse",
    "MsgStructOreMinerComplete",
    "MsgStructOreRefineryComplete",
    "MsgSubstationUpdateName",
    "MsgSubstationUpdatePfp",
    "MsgSubstationCreate",
    "MsgSubstationDelete",
    "MsgSubstationAllocationConnect",
    "MsgSubstationAllocationDisconnect",
    "MsgSubstationPlayerConnect",
    "MsgSubstationPlayerDisconnect",
    "MsgSubstationPlayerMigrate",
];
