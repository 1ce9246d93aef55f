//! Shaping: fewer fields per record (verbosity, or an explicit field selection), long
//! text truncated, long arrays sampled.
//!
//! A *record* is an entity's JSON anywhere in a result: a queried entity, a list item, a
//! `references` entry. Its *fields* are its leaf paths with the chain's wrapper key left
//! out (`Player.guildId` is `guildId`; `gridAttributes.ore` stays as it is); an array
//! (a slot row, the balances) is one field. Verbosity keeps the most useful fields of
//! each kind first, in the kind's order of usefulness, then the rest in document order;
//! what survives keeps the record's own structure and order.

use serde_json::{Map, Value};

use crate::entity::EntityKind;
use crate::references::ENTRY_FIELDS;
use crate::references::extract::own_id;

/// How many fields of each record a response keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verbosity {
    /// At most 5 fields per record.
    Summary,
    /// At most 15 (the default for summaries).
    Compact,
    /// At most 50.
    Detailed,
    /// Every field.
    Raw,
}

impl Verbosity {
    pub const ALL: [Verbosity; 4] = [
        Verbosity::Summary,
        Verbosity::Compact,
        Verbosity::Detailed,
        Verbosity::Raw,
    ];

    pub fn parse(s: &str) -> Option<Verbosity> {
        Verbosity::ALL.into_iter().find(|v| v.as_str() == s)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Verbosity::Summary => "summary",
            Verbosity::Compact => "compact",
            Verbosity::Detailed => "detailed",
            Verbosity::Raw => "raw",
        }
    }

    /// Most fields per record; `None` for all.
    pub fn max_fields(self) -> Option<usize> {
        match self {
            Verbosity::Summary => Some(5),
            Verbosity::Compact => Some(15),
            Verbosity::Detailed => Some(50),
            Verbosity::Raw => None,
        }
    }

    /// The next smaller level (summary stays summary).
    pub fn smaller(self) -> Verbosity {
        match self {
            Verbosity::Raw => Verbosity::Detailed,
            Verbosity::Detailed => Verbosity::Compact,
            _ => Verbosity::Summary,
        }
    }
}

/// Each kind's fields, most useful first. Fields not named here follow in the
/// record's own order.
///
/// A declarative table: one row a kind.
fn priorities(kind: EntityKind) -> &'static [&'static str] {
    match kind {
        EntityKind::Guild => &[
            "id",
            "name",
            "owner",
            "primaryReactorId",
            "entrySubstationId",
            "joinInfusionMinimum",
            "entryRank",
            "endpoint",
        ],
        EntityKind::Player => &[
            "id",
            "name",
            "guildId",
            "planetId",
            "fleetId",
            "substationId",
            "guildRank",
            "gridAttributes.ore",
            "playerInventory.rocks.amount",
            "gridAttributes.capacity",
            "gridAttributes.load",
            "gridAttributes.structsLoad",
            "gridAttributes.power",
            "gridAttributes.lastAction",
        ],
        EntityKind::Planet => &[
            "id",
            "owner",
            "status",
            "maxOre",
            "gridAttributes.ore",
            "space",
            "air",
            "land",
            "water",
            "planetAttributes.planetaryShield",
            // Most planets and substations are never named: their names come last.
            "name",
        ],
        EntityKind::Reactor => &[
            "id",
            "owner",
            "guildId",
            "validator",
            "defaultCommission",
            "gridAttributes.power",
            "gridAttributes.capacity",
            "gridAttributes.load",
        ],
        EntityKind::Substation => &[
            "id",
            "owner",
            "gridAttributes.capacity",
            "gridAttributes.load",
            "gridAttributes.connectionCount",
            "gridAttributes.connectionCapacity",
            "name",
        ],
        EntityKind::Struct => &[
            "id",
            "type",
            "owner",
            "structAttributes.status",
            "locationId",
            "locationType",
            "operatingAmbit",
            "slot",
            "structAttributes.health",
            "structAttributes.isDestroyed",
            "structAttributes.isBuilt",
            "structAttributes.isOnline",
        ],
        EntityKind::Allocation => &[
            "id",
            "type",
            "sourceObjectId",
            "destinationId",
            "controller",
            "gridAttributes.power",
        ],
        EntityKind::Infusion => &[
            "playerId",
            "destinationId",
            "destinationType",
            "fuel",
            "power",
            "ratio",
            "commission",
        ],
        EntityKind::Address => &["address", "playerId", "permissions"],
        EntityKind::Fleet => &[
            "id",
            "owner",
            "status",
            "locationType",
            "locationId",
            "commandStruct",
            "space",
            "air",
            "land",
            "water",
        ],
        EntityKind::Provider => &[
            "id",
            "owner",
            "substationId",
            "rate",
            "accessPolicy",
            "capacityMinimum",
            "capacityMaximum",
            "durationMinimum",
            "durationMaximum",
        ],
        EntityKind::Agreement => &[
            "id",
            "providerId",
            "owner",
            "allocationId",
            "capacity",
            "startBlock",
            "endBlock",
        ],
    }
}

/// What to keep of each record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// The record's most useful fields, up to the level's count.
    Verbosity(Verbosity),
    /// Exactly these field paths (and everything under a path that names an object),
    /// in the records of every kind they fit. A path is unqualified (`owner`: any kind
    /// that has it) or qualified by a kind (`Planet.space`, `planet.space`: planets
    /// only). The records of a kind that no path fits, anywhere in the value, are
    /// shaped by `otherwise` instead of being cut to their ids.
    Fields {
        paths: Vec<String>,
        otherwise: Verbosity,
    },
}

impl Selection {
    /// Parses `fields` (`"id, owner,gridAttributes.ore"`): paths, dotted for nesting.
    /// Kinds none of them fit get `summary`.
    pub fn fields(text: &str) -> Selection {
        Selection::fields_or(text, Verbosity::Summary)
    }

    /// [`Selection::fields`], with the verbosity for kinds none of the paths fit.
    pub fn fields_or(text: &str, otherwise: Verbosity) -> Selection {
        Selection::Fields {
            paths: text
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect(),
            otherwise,
        }
    }
}

/// A record's leaf fields: (path without the wrapper key, path in the JSON).
pub(super) fn leaves(
    record: &Map<String, Value>,
    wrapper: Option<&str>,
) -> Vec<(String, Vec<String>)> {
    fn walk(
        v: &Value,
        json_path: &mut Vec<String>,
        skip: usize,
        out: &mut Vec<(String, Vec<String>)>,
    ) {
        match v {
            Value::Object(obj) if !obj.is_empty() => {
                for (k, child) in obj {
                    json_path.push(k.clone());
                    walk(child, json_path, skip, out);
                    json_path.pop();
                }
            }
            _ => {
                let name = json_path[skip.min(json_path.len())..].join(".");
                out.push((name, json_path.clone()));
            }
        }
    }
    let mut out = Vec::new();
    for (k, v) in record {
        let mut path = vec![k.clone()];
        // The wrapper's own key is not part of a field's name.
        let skip = usize::from(Some(k.as_str()) == wrapper);
        walk(v, &mut path, skip, &mut out);
    }
    out
}

/// Does `name` answer one of the selected paths (itself, or under it)? A path
/// qualified by this record's kind (`Player.guildId`, `player.guildId`) names the same
/// field as the unqualified one (`guildId`). `qualifier` is the kind's chain name
/// (`Player`), whether or not the record is wrapped in it: a list's bare records are
/// qualified by their kind too.
fn selected(name: &str, qualifier: Option<&str>, paths: &[String]) -> bool {
    paths.iter().any(|p| answers(name, qualifier, p))
}

/// Does the field `name` answer the path `p` (see [`selected`])?
pub(super) fn answers(name: &str, qualifier: Option<&str>, p: &str) -> bool {
    let p = match qualifier {
        Some(w) => unqualified(p, w).unwrap_or(p),
        None => p,
    };
    name == p || (name.starts_with(p) && name.as_bytes().get(p.len()) == Some(&b'.'))
}

/// `path` without its kind qualifier, when it is qualified by the kind whose wrapper
/// is `wrapper` (`Planet.space` or `planet.space` → `space`).
pub(super) fn unqualified<'a>(path: &'a str, wrapper: &str) -> Option<&'a str> {
    let (head, rest) = path.split_once('.')?;
    head.eq_ignore_ascii_case(wrapper).then_some(rest)
}

/// Keeps the chosen leaves of `record`, in place.
fn keep(record: &mut Map<String, Value>, chosen: &[Vec<String>]) {
    fn retain(v: &mut Value, depth: usize, chosen: &[&Vec<String>]) {
        let Value::Object(obj) = v else { return };
        let keys: Vec<String> = obj.keys().cloned().collect();
        for k in keys {
            let below: Vec<&Vec<String>> = chosen
                .iter()
                .filter(|p| p.get(depth) == Some(&k))
                .copied()
                .collect();
            if below.is_empty() {
                obj.remove(&k);
            } else if below.iter().all(|p| p.len() > depth + 1)
                && let Some(child) = obj.get_mut(&k)
            {
                retain(child, depth + 1, &below);
            }
        }
    }
    let refs: Vec<&Vec<String>> = chosen.iter().collect();
    let mut whole = Value::Object(std::mem::take(record));
    retain(&mut whole, 0, &refs);
    if let Value::Object(obj) = whole {
        *record = obj;
    }
}

/// A references entry's own field (its top-level `id`, `reference_type`, `status`, ...):
/// part of the reference, not of the entity, so shaping always keeps it.
fn is_meta(name: &str, json_path: &[String]) -> bool {
    json_path.len() == 1 && (ENTRY_FIELDS.contains(&name) || name == "id")
}

/// The kind of record `obj` is: by its own id, or, for the kinds with no id
/// (infusions, addresses), by its fields.
pub(super) fn kind_of_record(obj: &Map<String, Value>) -> Option<EntityKind> {
    own_id(obj)
        .map(|id| id.kind)
        .or_else(|| crate::entity::records::idless_kind(obj))
}

/// Shapes one record: which leaves survive.
fn shape_record(record: &mut Map<String, Value>, selection: &Selection) -> usize {
    let Some(kind) = kind_of_record(record) else {
        return 0;
    };
    let wrapper = kind.rest_key().filter(|k| record.contains_key(*k));
    let qualifier = kind.rest_key();
    // What the record is known by stays, so a shaped record still says which it is.
    let keys = crate::entity::records::key_fields(kind);
    let all = leaves(record, wrapper);
    let chosen: Vec<Vec<String>> = match selection {
        Selection::Verbosity(v) => {
            let Some(max) = v.max_fields() else {
                return all.len();
            };
            // Meta fields are kept outside the count; the rest in priority order, then
            // in the record's order, up to the level's count.
            let mut taken: Vec<bool> = all.iter().map(|(n, p)| is_meta(n, p)).collect();
            let mut keep: Vec<usize> = (0..all.len()).filter(|&i| taken[i]).collect();
            let ranked = priorities(kind)
                .iter()
                .filter_map(|p| all.iter().position(|(name, _)| name == p))
                .chain(0..all.len());
            let mut counted = 0;
            for i in ranked {
                if counted == max {
                    break;
                }
                if !taken[i] {
                    taken[i] = true;
                    keep.push(i);
                    counted += 1;
                }
            }
            keep.sort_unstable();
            keep.into_iter().map(|i| all[i].1.clone()).collect()
        }
        Selection::Fields { paths, .. } => all
            .iter()
            .filter(|(name, json_path)| {
                keys.contains(&name.as_str())
                    || is_meta(name, json_path)
                    || selected(name, qualifier, paths)
            })
            .map(|(_, p)| p.clone())
            .collect(),
    };
    let kept = chosen.len();
    keep(record, &chosen);
    kept
}

/// What shaping did, for the envelope's metadata.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Shaped {
    /// Records found and shaped.
    pub records: usize,
    /// The most fields any record kept.
    pub max_fields: usize,
}

/// Shapes every record in `value`. A value with no records at all (the block height,
/// a validation result) gets a field selection applied to its own top level.
pub fn shape(value: &mut Value, selection: &Selection) -> Shaped {
    let mut shaped = Shaped::default();
    let fits = match selection {
        // `fields: "id"` asks for nothing but ids, of every kind.
        Selection::Fields { paths, .. } if paths.iter().all(|p| p == "id") => u16::MAX,
        Selection::Fields { paths, .. } => {
            let mut fits = 0u16;
            kinds_fitted(value, paths, &mut fits);
            fits
        }
        Selection::Verbosity(_) => 0,
    };
    visit(value, selection, fits, &mut shaped);
    if shaped.records == 0
        && let (Selection::Fields { paths, .. }, Value::Object(obj)) = (selection, value)
        && !holds_an_empty_list(obj)
    {
        let all = leaves(obj, None);
        let chosen: Vec<Vec<String>> = all
            .into_iter()
            .filter(|(name, _)| selected(name, None, paths))
            .map(|(_, p)| p)
            .collect();
        shaped.max_fields = chosen.len();
        keep(obj, &chosen);
    }
    shaped
}

/// True when `obj` has an empty list at its top level: a page of records that
/// happens to hold none, whose own fields (the kind, the pagination) a field
/// selection leaves alone, as it does on a page that holds some.
pub(super) fn holds_an_empty_list(obj: &Map<String, Value>) -> bool {
    obj.values()
        .any(|v| v.as_array().is_some_and(|items| items.is_empty()))
}

/// The entity `obj` is a record of, unless it only wraps that record: an answer
/// about an entity (`structs_query_entity`: `{"id", "type", "entity": {...}}`) names the
/// id beside the record, which is then the record to shape.
pub(super) fn record_id(obj: &Map<String, Value>) -> Option<EntityKind> {
    let kind = kind_of_record(obj)?;
    let wrapper = kind.rest_key();
    let id = own_id(obj);
    let wraps = obj.iter().any(|(k, v)| {
        Some(k.as_str()) != wrapper
            && v.as_object().is_some_and(|o| match id {
                Some(id) => {
                    own_id(o) == Some(id)
                        || (o.get("id").is_none() && kind_of_record(o) == Some(kind))
                }
                None => kind_of_record(o) == Some(kind),
            })
    });
    (!wraps).then_some(kind)
}

/// Sets the bit of each kind (by code) that `paths` fit: some record of that kind in
/// `value` has a selected field other than its id and the reference's own fields, or a
/// path names the kind's id itself (`Guild.id`).
fn kinds_fitted(value: &Value, paths: &[String], fits: &mut u16) {
    match value {
        Value::Object(obj) => {
            if let Some(kind) = record_id(obj) {
                let bit = 1u16 << kind.code();
                if *fits & bit == 0 {
                    let wrapper = kind.rest_key().filter(|k| obj.contains_key(*k));
                    let qualifier = kind.rest_key();
                    let names_id = qualifier
                        .is_some_and(|w| paths.iter().any(|p| unqualified(p, w) == Some("id")));
                    let fitted = names_id
                        || leaves(obj, wrapper).iter().any(|(name, json_path)| {
                            name != "id"
                                && !is_meta(name, json_path)
                                && selected(name, qualifier, paths)
                        });
                    if fitted {
                        *fits |= bit;
                    }
                }
            } else {
                obj.values().for_each(|v| kinds_fitted(v, paths, fits));
            }
        }
        Value::Array(items) => items.iter().for_each(|v| kinds_fitted(v, paths, fits)),
        _ => {}
    }
}

fn visit(value: &mut Value, selection: &Selection, fits: u16, shaped: &mut Shaped) {
    match value {
        Value::Object(obj) => {
            if let Some(kind) = record_id(obj) {
                let kept = match selection {
                    // A reference of a kind the paths name nothing of is the id and the
                    // reference's own fields (its kind, status, where it came from): the
                    // references are what would make a lean answer heavy.
                    Selection::Fields { otherwise, .. }
                        if fits & (1 << kind.code()) == 0 && obj.contains_key("reference_type") =>
                    {
                        shape_record(
                            obj,
                            &Selection::Fields {
                                paths: vec!["id".into()],
                                otherwise: *otherwise,
                            },
                        )
                    }
                    Selection::Fields { otherwise, .. } if fits & (1 << kind.code()) == 0 => {
                        shape_record(obj, &Selection::Verbosity(*otherwise))
                    }
                    _ => shape_record(obj, selection),
                };
                shaped.records += 1;
                shaped.max_fields = shaped.max_fields.max(kept);
            } else {
                for child in obj.values_mut() {
                    visit(child, selection, fits, shaped);
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                visit(item, selection, fits, shaped);
            }
        }
        _ => {}
    }
}

/// The marker that ends a truncated string.
pub const TRUNCATED: &str = "…[truncated]";

/// Cuts strings longer than `max_chars` (at a character boundary) and marks them.
pub fn truncate_strings(value: &mut Value, max_chars: usize) {
    match value {
        Value::String(s) if s.chars().count() > max_chars => {
            let cut = s.char_indices().nth(max_chars).map_or(s.len(), |(i, _)| i);
            s.truncate(cut);
            s.push_str(TRUNCATED);
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|v| truncate_strings(v, max_chars)),
        Value::Object(obj) => obj
            .values_mut()
            .for_each(|v| truncate_strings(v, max_chars)),
        _ => {}
    }
}

/// Keeps the first `keep` items of every array longer than that, and states what was
/// there: `{"sample": [...first items...], "total": 120, "sampled": true}`.
pub fn sample_arrays(value: &mut Value, keep: usize) {
    match value {
        Value::Array(items) => {
            items.iter_mut().for_each(|v| sample_arrays(v, keep));
            if items.len() > keep {
                let total = items.len();
                items.truncate(keep);
                let sample = std::mem::take(items);
                *value = serde_json::json!({"sample": sample, "total": total, "sampled": true});
            }
        }
        Value::Object(obj) => obj.values_mut().for_each(|v| sample_arrays(v, keep)),
        _ => {}
    }
}

/// Keeps the first `keep` entries of every object that maps ids to records (the
/// `references` map), stating how many there were.
pub fn sample_record_maps(value: &mut Value, keep: usize) {
    let Value::Object(obj) = value else { return };
    for (_, child) in obj.iter_mut() {
        if let Value::Object(map) = child
            && map.len() > keep
            && is_record_map(map)
        {
            let total = map.len();
            let first: Map<String, Value> = map
                .iter()
                .take(keep)
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            *child = serde_json::json!({"sample": first, "total": total, "sampled": true});
        }
    }
}

/// A non-empty map whose every value is an entity record (the `references` map).
pub fn is_record_map(map: &Map<String, Value>) -> bool {
    !map.is_empty()
        && map
            .values()
            .all(|v| v.as_object().is_some_and(|o| kind_of_record(o).is_some()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn player() -> Value {
        json!({
            "Player": {"id": "1-1", "index": "1", "guildId": "0-1", "substationId": "4-1",
                       "creator": "structs1x", "primaryAddress": "structs1x", "planetId": "2-1",
                       "fleetId": "9-1", "guildRank": "1", "name": "nova", "pfp": ""},
            "gridAttributes": {"ore": "3", "fuel": "0", "capacity": "7", "load": "0",
                               "structsLoad": "6", "power": "0", "lastAction": "9", "nonce": "1"},
            "playerInventory": {"rocks": {"denom": "ualpha", "amount": "5"}}
        })
    }

    #[test]
    fn every_kinds_useful_fields_are_the_chains() {
        for kind in EntityKind::ALL {
            for path in priorities(kind) {
                assert!(
                    crate::entity::records::has_path(kind, path),
                    "{kind}'s lean view names {path}, which the chain's {kind} lacks"
                );
            }
        }
    }

    fn count(v: &Value) -> usize {
        leaves(v.as_object().unwrap(), Some("Player")).len()
    }

    #[test]
    fn verbosity_keeps_the_kinds_most_useful_fields_in_the_records_order() {
        let mut v = player();
        let s = shape(&mut v, &Selection::Verbosity(Verbosity::Summary));
        assert_eq!(s.records, 1);
        assert_eq!(count(&v), 5);
        assert_eq!(
            v,
            json!({"Player": {"id": "1-1", "guildId": "0-1", "planetId": "2-1", "fleetId": "9-1", "name": "nova"}})
        );
        let mut v = player();
        shape(&mut v, &Selection::Verbosity(Verbosity::Compact));
        assert_eq!(count(&v), 15);
        assert_eq!(v["gridAttributes"]["ore"], "3");
        assert_eq!(
            v["playerInventory"]["rocks"]["amount"], "5",
            "the player's alpha is among its most useful fields"
        );
        let mut v = player();
        shape(&mut v, &Selection::Verbosity(Verbosity::Raw));
        assert_eq!(v, player());
    }

    #[test]
    fn field_selection_takes_paths_with_or_without_the_wrapper_and_whole_objects() {
        let mut v = player();
        shape(
            &mut v,
            &Selection::fields("name, Player.planetId,gridAttributes.ore,playerInventory"),
        );
        assert_eq!(
            v,
            json!({
                "Player": {"id": "1-1", "planetId": "2-1", "name": "nova"},
                "gridAttributes": {"ore": "3"},
                "playerInventory": {"rocks": {"denom": "ualpha", "amount": "5"}}
            })
        );
        // A prefix of a name is not a path: `grid` selects nothing of a player, so the
        // player is shaped at summary rather than cut to its id.
        let mut v = player();
        shape(&mut v, &Selection::fields("grid"));
        let mut summary = player();
        shape(&mut summary, &Selection::Verbosity(Verbosity::Summary));
        assert_eq!(v, summary);
        // `id` alone asks for ids only, of every kind.
        let mut v = player();
        shape(&mut v, &Selection::fields("id"));
        assert_eq!(v, json!({"Player": {"id": "1-1"}}));
    }

    #[test]
    fn a_field_list_shapes_each_kind_it_fits_and_leaves_the_others_at_summary() {
        let guild = json!({"Guild": {"id": "0-1", "owner": "1-1", "endpoint": "x", "entryRank": "2",
                                     "creator": "c", "primaryReactorId": "3-1"}});
        let planet = json!({"Planet": {"id": "2-1", "owner": "1-1", "maxOre": "5", "status": "active",
                                       "space": ["5-1"], "creator": "c"}});
        let mut v =
            json!({"player": player(), "references": {"0-1": guild.clone(), "2-1": planet}});
        // `planet.maxOre` (any case) is for planets only; `name` fits players; nothing
        // fits the guild, which keeps its summary fields instead of only its id.
        shape(&mut v, &Selection::fields("name,planet.maxOre"));
        assert_eq!(
            v["player"],
            json!({"Player": {"id": "1-1", "name": "nova"}})
        );
        assert_eq!(
            v["references"]["2-1"],
            json!({"Planet": {"id": "2-1", "maxOre": "5"}})
        );
        let mut g = guild.clone();
        shape(&mut g, &Selection::Verbosity(Verbosity::Summary));
        assert_eq!(v["references"]["0-1"], g);
        assert_ne!(g, json!({"Guild": {"id": "0-1"}}));
        // Naming the kind's id is asking for that kind's id only.
        let mut v = json!({"references": {"0-1": guild}});
        shape(&mut v, &Selection::fields("name,Guild.id"));
        assert_eq!(v["references"]["0-1"], json!({"Guild": {"id": "0-1"}}));
    }

    #[test]
    fn a_reference_of_a_kind_the_fields_name_nothing_of_is_its_id_and_kind() {
        let entry = json!({"reference_type": "guild", "Guild": {"id": "0-1", "owner": "1-1",
                           "endpoint": "x", "entryRank": "2"}});
        let guilds = json!([{"Guild": {"id": "0-2", "owner": "1-2", "endpoint": "y"}}]);
        let mut v = json!({"player": player(), "guilds": guilds,
                           "references": {"0-1": entry}});
        shape(&mut v, &Selection::fields("name,planetId"));
        assert_eq!(
            v["references"]["0-1"],
            json!({"reference_type": "guild", "Guild": {"id": "0-1"}})
        );
        // The answer's own records of such a kind keep their summary.
        assert_eq!(v["guilds"][0]["Guild"]["owner"], "1-2", "{v}");
        assert_eq!(v["player"]["Player"]["planetId"], "2-1");
    }

    #[test]
    fn records_without_ids_are_shaped_and_keep_their_keys() {
        let infusion = json!({"Infusion": {"destinationType": "reactor", "destinationId": "3-1",
            "fuel": "5", "power": "5", "commission": "0.04", "playerId": "1-1",
            "address": "structs1a", "ratio": "1", "defusing": "0"}});
        let address = json!({"address": "structs1a", "playerId": "1-1", "permissions": "7"});
        let mut v = json!({"infusions": [infusion.clone()], "addresses": [address.clone()]});
        let s = shape(&mut v, &Selection::fields("fuel,permissions"));
        assert_eq!(s.records, 2);
        assert_eq!(
            v["infusions"][0],
            json!({"Infusion": {"destinationId": "3-1", "fuel": "5", "address": "structs1a"}})
        );
        assert_eq!(
            v["addresses"][0],
            json!({"address": "structs1a", "permissions": "7"})
        );
        let mut v = json!({"infusions": [infusion]});
        shape(&mut v, &Selection::Verbosity(Verbosity::Summary));
        assert_eq!(
            v["infusions"][0]["Infusion"].as_object().unwrap().len(),
            5,
            "{v}"
        );
        // The query of one names its id beside the record: the record is shaped.
        let mut v = json!({"id": "7-1", "type": "infusion", "entity": {"Infusion": {
            "destinationId": "3-1", "address": "structs1a", "fuel": "5", "playerId": "1-1"}}});
        shape(&mut v, &Selection::fields("fuel"));
        assert_eq!(v["type"], "infusion");
        assert!(v["entity"]["Infusion"].get("playerId").is_none(), "{v}");
    }

    #[test]
    fn an_answer_that_names_its_entity_beside_the_record_shapes_the_record() {
        // structs_query_entity's shape: the id, the kind and the record.
        let mut v = json!({"id": "1-1", "type": "player", "entity": player()});
        shape(&mut v, &Selection::fields("name"));
        assert_eq!(
            v["entity"],
            json!({"Player": {"id": "1-1", "name": "nova"}})
        );
        assert_eq!(v["type"], "player");
    }

    #[test]
    fn records_are_shaped_wherever_they_are_and_reference_fields_stay() {
        let mut v = json!({
            "players": [player(), player()],
            "references": {"0-1": {"reference_type": "guild", "id": "0-1", "status": "success",
                                   "referenced_from": "guildId", "referenced_in": "1-1", "depth": 1,
                                   "Guild": {"id": "0-1", "owner": "1-1", "endpoint": "x", "entryRank": "2",
                                             "creator": "c", "primaryReactorId": "3-1"}}},
            "timestamp": "t"
        });
        let s = shape(&mut v, &Selection::Verbosity(Verbosity::Summary));
        assert_eq!(s.records, 3);
        assert_eq!(v["timestamp"], "t");
        let r = &v["references"]["0-1"];
        assert_eq!(r["referenced_from"], "guildId");
        assert_eq!(r["depth"], 1);
        assert_eq!(
            r["Guild"],
            json!({"id": "0-1", "owner": "1-1", "endpoint": "x", "entryRank": "2", "primaryReactorId": "3-1"})
        );
    }

    #[test]
    fn fields_on_a_result_without_records_select_its_top_level() {
        let mut v = json!({"height": 5, "paused": true, "source": "sim"});
        shape(&mut v, &Selection::fields("height,source"));
        assert_eq!(v, json!({"height": 5, "source": "sim"}));
        // An empty page keeps its kind and pagination, as a full one does.
        let page = json!({"entity_type": "struct", "structs": [], "pagination": {"total": 0}});
        let mut v = page.clone();
        shape(&mut v, &Selection::fields("id,type"));
        assert_eq!(v, page);
    }

    #[test]
    fn truncation_and_sampling_are_marked() {
        let mut v =
            json!({"text": "é".repeat(300), "short": "ok", "rows": (0..30).collect::<Vec<_>>()});
        truncate_strings(&mut v, 100);
        sample_arrays(&mut v, 5);
        let text = v["text"].as_str().unwrap();
        assert!(text.ends_with(TRUNCATED));
        assert_eq!(text.chars().count(), 100 + TRUNCATED.chars().count());
        assert_eq!(v["short"], "ok");
        assert_eq!(
            v["rows"],
            json!({"sample": [0, 1, 2, 3, 4], "total": 30, "sampled": true})
        );
    }
}
