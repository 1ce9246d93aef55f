//! List tools: pages of one kind's entities with simple filters.
//!
//! Pagination: `page_size` (default 20, 1-100; with `fields` up to 5000, cut to what
//! fits in the response) and `page_key`, the opaque `next_key` a
//! previous page returned. Every page states the `total` of matching entities.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Map, Value, json};

use super::{Env, Hints, Registry, ToolSpec, output};
use super::{id_schema, kind_arg, opt_str, parse_id};
use crate::entity::{EntityId, EntityKind};
use crate::error::{ErrorCode, ToolError};
use crate::handles::Shaping;
use crate::json::whole_number;
use crate::references::Support;
use crate::source::ListQuery;

pub const DEFAULT_PAGE_SIZE: u64 = 20;
/// The most entities a page holds, whole.
pub const MAX_PAGE_SIZE: u64 = 100;
/// The most a page may ask for when `fields` keeps each entity small. The page is then
/// cut to what fits in the response limit, and `next_key` goes on from its last entity,
/// so a scan of thousands takes a few calls and never becomes a handle.
pub const MAX_LEAN_PAGE_SIZE: u64 = 5000;

/// Bytes a lean page's entities may take: the response limit less room for the page's
/// own fields, a references summary and a fields report.
const LEAN_ROWS_BUDGET: usize = crate::error::RESPONSE_LIMIT - 4096;

/// Which filters a list accepts.
#[derive(Clone, Copy)]
struct Filters {
    owner: bool,
    guild: bool,
}

/// The typed list tools: (tool, title, kind, filters, description).
const TYPED: [(&str, &str, EntityKind, Filters, &str); 5] = [
    (
        "structs_list_players",
        "List players",
        EntityKind::Player,
        Filters {
            owner: false,
            guild: true,
        },
        "List players, a page at a time, optionally only the members of one guild.",
    ),
    (
        "structs_list_planets",
        "List planets",
        EntityKind::Planet,
        Filters {
            owner: true,
            guild: true,
        },
        "List planets, a page at a time, optionally only one player's or one guild's.",
    ),
    (
        "structs_list_structs",
        "List structs",
        EntityKind::Struct,
        Filters {
            owner: true,
            guild: true,
        },
        "List structs, a page at a time, optionally only one player's or one guild's.",
    ),
    (
        "structs_list_guilds",
        "List guilds",
        EntityKind::Guild,
        Filters {
            owner: true,
            guild: false,
        },
        "List guilds, a page at a time, optionally only those a given player owns.",
    ),
    (
        "structs_list_fleets",
        "List fleets",
        EntityKind::Fleet,
        Filters {
            owner: true,
            guild: true,
        },
        "List fleets, a page at a time, optionally only one player's or one guild's.",
    ),
];

fn paging_properties(filters: Filters) -> Map<String, Value> {
    let mut props = Map::new();
    props.insert(
        "page_size".into(),
        json!({"type": "integer", "minimum": 1, "maximum": MAX_LEAN_PAGE_SIZE,
               "default": DEFAULT_PAGE_SIZE,
               "description": "Entities per page (1-100, default 20). With fields, up to 5000, cut to what fits in the 25 KB response; next_key goes on from the last entity sent."}),
    );
    props.insert("format".into(), crate::handles::format_schema());
    props.insert(
        "page_key".into(),
        json!({"type": "string", "maxLength": 256,
               "description": "The pagination.next_key of the previous page; omit for the first page."}),
    );
    if filters.owner {
        props.insert(
            "owner".into(),
            id_schema("Only entities owned by this player (1-N)."),
        );
    }
    if filters.guild {
        props.insert(
            "guild_id".into(),
            id_schema("Only entities of this guild (0-N), directly or through their owner."),
        );
    }
    props
}

pub fn register(registry: &mut Registry) {
    for (name, title, kind, filters, description) in TYPED {
        registry.add(
            ToolSpec {
                name,
                description,
                input_schema: json!({
                    "type": "object",
                    "properties": paging_properties(filters),
                    "additionalProperties": false
                }),
                references: Support::List,
                shaping: Shaping::Standard,
                title,
                hints: Hints::READ,
                output_schema: output::game::list_typed(kind),
            },
            move |env, args| list(env, args, Some(kind)),
        );
    }
    let mut props = paging_properties(Filters {
        owner: true,
        guild: true,
    });
    props.insert(
        "entity_type".into(),
        json!({"type": ["string", "integer"],
               "description": "The kind to list: a name (guild, player, planet, reactor, substation, struct, allocation, infusion, address, fleet, provider, agreement) or a code 0-11."}),
    );
    props.insert(
        "id_prefix".into(),
        json!({"type": "string", "maxLength": 48,
               "description": "Only entities whose id starts with this text, e.g. \"1-1\"; infusions and addresses, which have no id on the chain, by their key (\"3-1/structs1…\", an address)."}),
    );
    registry.add(
        ToolSpec {
            name: "structs_list_entities",
            description: "List the entities of any kind, a page at a time, with the owner, \
                guild and id-prefix filters.",
            input_schema: json!({
                "type": "object",
                "properties": props,
                "required": ["entity_type"],
                "additionalProperties": false
            }),
            references: Support::List,
            shaping: Shaping::Standard,
            title: "List entities of any kind",
            hints: Hints::READ,
            output_schema: output::game::list_entities(),
        },
        |env, args| list(env, args, None),
    );
}

/// Encodes a source's cursor in `kind`'s list as an opaque page key.
pub fn encode_page_key(kind: EntityKind, cursor: &str) -> String {
    URL_SAFE_NO_PAD.encode(format!("{}:{cursor}", kind.code()))
}

fn decode_page_key(key: &str, kind: EntityKind) -> Result<String, ToolError> {
    let bad = |why: &str| ToolError::field(ErrorCode::ValidationInvalidFormat, "page_key", why);
    let bytes = URL_SAFE_NO_PAD
        .decode(key)
        .map_err(|_| bad("is not a key this server issued; pass pagination.next_key unchanged"))?;
    let text = String::from_utf8(bytes).map_err(|_| bad("is not a key this server issued"))?;
    let (code, cursor) = text
        .split_once(':')
        .ok_or_else(|| bad("is not a key this server issued"))?;
    if code != kind.code().to_string() {
        return Err(bad(&format!(
            "belongs to another list than {}; start again without page_key",
            kind.plural()
        )));
    }
    if cursor.is_empty() {
        return Err(bad("is not a key this server issued"));
    }
    Ok(cursor.to_string())
}

async fn list(env: Env, args: Value, kind: Option<EntityKind>) -> Result<Value, ToolError> {
    let kind = match kind {
        Some(k) => k,
        // The schema makes entity_type required here.
        None => kind_arg(&args, "entity_type")?.ok_or_else(|| {
            ToolError::field(
                ErrorCode::ValidationMissingField,
                "entity_type",
                "is required",
            )
        })?,
    };
    let mut page_size = args
        .get("page_size")
        .and_then(whole_number)
        .unwrap_or(DEFAULT_PAGE_SIZE);
    if page_size > MAX_PAGE_SIZE && !env.shaping.has_fields() {
        return Err(ToolError::field(
            ErrorCode::ValidationOutOfRange,
            "page_size",
            format!(
                "{page_size} is over {MAX_PAGE_SIZE} for whole entities; name the fields each \
                 row needs (fields: \"id,type\") for pages of up to {MAX_LEAN_PAGE_SIZE}, or \
                 page with page_key"
            ),
        ));
    }
    let mut query = ListQuery::new(kind, page_size as usize);
    if let Some(key) = opt_str(&args, "page_key") {
        query.after = Some(decode_page_key(key, kind)?);
    }
    if let Some(owner) = opt_str(&args, "owner") {
        query.owner = Some(parse_id(owner, "owner", Some(EntityKind::Player))?);
    }
    if let Some(guild) = opt_str(&args, "guild_id") {
        query.guild = Some(parse_id(guild, "guild_id", Some(EntityKind::Guild))?);
    }
    query.id_prefix = opt_str(&args, "id_prefix").map(str::to_string);
    let mut page = env.source().list(query.clone()).await?;
    // A lean page grows up to the response limit: when the entities asked for would
    // not fit once shaped, the page is asked again at the size that fits, so the
    // source's own cursor goes on from the last entity sent.
    if env.shaping.has_fields() {
        let fit = crate::handles::table::rows_that_fit(&page.items, &env.shaping, LEAN_ROWS_BUDGET);
        if fit < page.items.len() {
            query.page_size = fit;
            page_size = fit as u64;
            page = env.source().list(query).await?;
        }
    }
    let mut out = Map::new();
    out.insert("entity_type".into(), json!(kind.name()));
    out.insert(kind.plural().into(), Value::Array(page.items));
    out.insert(
        "pagination".into(),
        json!({
            "next_key": page.next_after.map(|a| encode_page_key(kind, &a)),
            "total": page.total,
            "page_size": page_size,
        }),
    );
    out.insert("timestamp".into(), json!(env.timestamp()));
    Ok(Value::Object(out))
}

/// The ids on a list page, in order (for the console and tests).
pub fn page_ids(page: &Value) -> Vec<EntityId> {
    let Some(kind) = page
        .get("entity_type")
        .and_then(Value::as_str)
        .and_then(EntityKind::parse_name_or_code)
    else {
        return Vec::new();
    };
    page.get(kind.plural())
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|v| kind.core_object(v)?.get("id")?.as_str())
                .filter_map(|s| EntityId::parse(s).ok())
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_keys_round_trip_and_reject_foreign_keys() {
        let key = encode_page_key(EntityKind::Player, "40");
        assert_eq!(decode_page_key(&key, EntityKind::Player).unwrap(), "40");
        // A chain cursor (base64 with padding) survives the round trip unchanged.
        let key = encode_page_key(EntityKind::Player, "MS0xMQ==");
        assert_eq!(
            decode_page_key(&key, EntityKind::Player).unwrap(),
            "MS0xMQ=="
        );
        let e = decode_page_key(&key, EntityKind::Planet).unwrap_err();
        assert_eq!(e.code, ErrorCode::ValidationInvalidFormat);
        assert!(decode_page_key("!!!", EntityKind::Player).is_err());
        assert!(decode_page_key(&URL_SAFE_NO_PAD.encode("1:"), EntityKind::Player).is_err());
    }
}
