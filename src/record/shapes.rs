//! Answers recorded before the chain's own shapes were followed (`entity::records`),
//! read in today's: a log from an older console still replays, and a change of shape is
//! named once, as such, instead of as a difference in every field.
//!
//! [`upgrade`] rewrites the records of a recorded answer the way the shapes changed
//! (a player's `username` became `name`, a struct's status word became the chain's
//! bitmask, a fleet's `planetId` became `locationType`/`locationId`, …) and says which
//! changes it made. [`compare`] then diffs the upgraded answer with a fresh one, leaving
//! out the fields today's records add (every field is present now), since an older
//! answer could not have them.

use serde_json::{Map, Value, json};

use super::diff::{Change, ChangeKind, Ignore, diff};
use crate::entity::EntityKind;
use crate::entity::records::{self, StructStatus};

/// A change of shape an older recording shows, named as the replay report names it.
pub type ShapeChange = &'static str;

const USERNAME: ShapeChange = "Player.username is Player.name";
const INVENTORY: ShapeChange =
    "playerInventory is one ualpha coin (rocks), not ore and a balances list";
const STATUS: ShapeChange = "structAttributes.status is the chain's bitmask, not a word";
const MAX_HEALTH: ShapeChange = "structAttributes.maxHealth is the struct type's, not the struct's";
const FLEET_PLANET: ShapeChange = "a fleet's planetId is locationType and locationId";
const NO_ID: ShapeChange = "infusions and addresses carry no id";
const NO_INDEX: ShapeChange = "substations, reactors and agreements carry no index";
const CONSUMER: ShapeChange = "Agreement.consumerId is Agreement.owner";
const LOCKED: ShapeChange = "an allocation carries no locked";
const BYPASS_OPEN: ShapeChange =
    "joinInfusionMinimumBypassBy… is closed, permissioned or member (open is not the chain's)";
const ALLOCATION_TYPE: ShapeChange = "allocation type provider-agreement is providerAgreement";
const ADDED: ShapeChange =
    "every field of a record is present, and a struct's answer says its status in words";

/// Rewrites the records in `v` from the older shapes to the chain's, in place, and
/// returns the changes it made (none for an answer already in today's shapes).
pub fn upgrade(v: &mut Value) -> Vec<ShapeChange> {
    let mut found = Vec::new();
    walk(v, &mut found);
    found.sort_unstable();
    found.dedup();
    found
}

fn note(found: &mut Vec<ShapeChange>, change: ShapeChange) {
    found.push(change);
}

fn walk(v: &mut Value, found: &mut Vec<ShapeChange>) {
    match v {
        Value::Object(obj) => {
            upgrade_object(obj, found);
            for child in obj.values_mut() {
                walk(child, found);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|x| walk(x, found)),
        _ => {}
    }
}

fn rename(obj: &mut Map<String, Value>, from: &str, to: &str) -> bool {
    match obj.remove(from) {
        Some(value) => {
            obj.insert(to.to_string(), value);
            true
        }
        None => false,
    }
}

/// One object: a wrapped record's answer (`{"Player": {...}, "playerInventory": ...}`)
/// or a bare record of a list.
fn upgrade_object(obj: &mut Map<String, Value>, found: &mut Vec<ShapeChange>) {
    if let Some(Value::Object(player)) = obj.get_mut("Player")
        && rename(player, "username", "name")
    {
        note(found, USERNAME);
    }
    if let Some(Value::Object(inventory)) = obj.get_mut("playerInventory")
        && (inventory.contains_key("balances")
            || inventory
                .get("rocks")
                .is_some_and(|r| r.get("ore").is_some()))
    {
        let alpha = inventory
            .get("balances")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|c| c["denom"] == "ualpha")
            .and_then(|c| c["amount"].as_str())
            .unwrap_or("0")
            .to_string();
        *inventory = Map::new();
        inventory.insert("rocks".into(), json!({"denom": "ualpha", "amount": alpha}));
        note(found, INVENTORY);
    }
    if let Some(Value::Object(attributes)) = obj.get_mut("structAttributes") {
        if attributes.get("status").is_some_and(Value::is_string)
            && attributes["status"]
                .as_str()
                .is_some_and(|s| s.parse::<u64>().is_err())
            && let Some(status) = StructStatus::of(&Value::Object(attributes.clone()))
        {
            // The flags the record had stay as they were; those it lacked are today's
            // additions, which the comparison leaves out.
            attributes.insert("status".into(), json!(status.0.to_string()));
            note(found, STATUS);
        }
        if attributes.remove("maxHealth").is_some() {
            note(found, MAX_HEALTH);
        }
    }
    let fleet = match obj.get_mut("Fleet") {
        Some(Value::Object(f)) => Some(f),
        _ => None,
    };
    if let Some(fleet) = fleet
        && let Some(planet) = fleet.remove("planetId")
    {
        fleet.insert("locationType".into(), json!("planet"));
        fleet.insert("locationId".into(), planet);
        note(found, FLEET_PLANET);
    }
    for (key, kind) in [
        ("Substation", EntityKind::Substation),
        ("Reactor", EntityKind::Reactor),
        ("Agreement", EntityKind::Agreement),
        ("Infusion", EntityKind::Infusion),
        ("Allocation", EntityKind::Allocation),
        ("Guild", EntityKind::Guild),
    ] {
        if let Some(Value::Object(record)) = obj.get_mut(key) {
            upgrade_record(kind, record, found);
        }
    }
    // A bare address record (a list's item, or the answer to one address).
    if obj.contains_key("address")
        && obj
            .get("id")
            .and_then(Value::as_str)
            .is_some_and(|id| id.starts_with("8-"))
    {
        obj.remove("id");
        note(found, NO_ID);
    }
}

fn upgrade_record(kind: EntityKind, record: &mut Map<String, Value>, found: &mut Vec<ShapeChange>) {
    match kind {
        EntityKind::Substation | EntityKind::Reactor if record.remove("index").is_some() => {
            note(found, NO_INDEX);
        }
        EntityKind::Agreement => {
            if record.remove("index").is_some() {
                note(found, NO_INDEX);
            }
            if rename(record, "consumerId", "owner") {
                note(found, CONSUMER);
            }
        }
        EntityKind::Infusion if record.remove("id").is_some() => note(found, NO_ID),
        EntityKind::Allocation => {
            if record.remove("locked").is_some() {
                note(found, LOCKED);
            }
            if record.get("type").and_then(Value::as_str) == Some("provider-agreement") {
                record.insert("type".into(), json!("providerAgreement"));
                note(found, ALLOCATION_TYPE);
            }
        }
        EntityKind::Guild => {
            for field in [
                "joinInfusionMinimumBypassByRequest",
                "joinInfusionMinimumBypassByInvite",
            ] {
                if record.get(field).and_then(Value::as_str) == Some("open") {
                    record.insert(field.into(), json!("permissioned"));
                    note(found, BYPASS_OPEN);
                }
            }
        }
        _ => {}
    }
}

/// Whether a field named `name` is one today's records have: an answer recorded in the
/// older shapes lacks such a field because the shapes changed, not the game.
fn is_record_field(name: &str) -> bool {
    EntityKind::ALL.iter().any(|&kind| {
        let answer = records::single_response(kind);
        answer.field(name).is_some()
            || answer.fields.iter().any(|f| match f.ty {
                records::Ty::Msg(m) => m.field(name).is_some(),
                _ => false,
            })
    })
}

/// A recorded answer against a fresh one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Compared {
    /// The differences kept (at most the limit), and how many there were.
    pub changes: Vec<Change>,
    pub total: usize,
    /// The changes of shape the recorded answer was read through.
    pub shape: Vec<ShapeChange>,
}

/// Diffs `recorded` with `fresh`. An answer recorded in `older` shapes (a log line
/// before version 3) is read in today's first ([`upgrade`]), and a field today's
/// records have and it lacks, or a struct's `derived` words, is no difference: the
/// shapes changed, not the game.
pub fn compare(
    recorded: &Value,
    fresh: &Value,
    ignore: &Ignore,
    limit: usize,
    older: bool,
) -> Compared {
    let mut upgraded = recorded.clone();
    let mut shape = if older {
        upgrade(&mut upgraded)
    } else {
        Vec::new()
    };
    if !older {
        let (changes, total) = diff(recorded, fresh, ignore, limit);
        return Compared {
            changes,
            total,
            shape,
        };
    }
    let (all, _) = diff(&upgraded, fresh, ignore, usize::MAX);
    let mut added = false;
    let kept: Vec<Change> = all
        .into_iter()
        .filter(|c| {
            let last = c.path.rsplit('/').next().unwrap_or("");
            let shaped =
                c.kind == ChangeKind::Added && (is_record_field(last) || last == "derived");
            added |= shaped;
            !shaped
        })
        .collect();
    if added {
        shape.push(ADDED);
    }
    let total = kept.len();
    Compared {
        changes: kept.into_iter().take(limit).collect(),
        total,
        shape,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn older_player() -> Value {
        json!({"player": {
            "Player": {"id": "1-1", "username": "nova", "guildId": "0-1"},
            "gridAttributes": {"ore": "2"},
            "playerInventory": {"rocks": {"ore": "1"}, "balances": [{"denom": "ualpha", "amount": "5"}]}
        }})
    }

    #[test]
    fn an_older_player_reads_as_todays() {
        let mut v = older_player();
        let shape = upgrade(&mut v);
        assert_eq!(v["player"]["Player"]["name"], "nova");
        assert!(v["player"]["Player"].get("username").is_none());
        assert_eq!(
            v["player"]["playerInventory"],
            json!({"rocks": {"denom": "ualpha", "amount": "5"}})
        );
        assert_eq!(shape.len(), 2, "{shape:?}");
        // Today's shapes need nothing.
        assert!(upgrade(&mut v).is_empty());
    }

    #[test]
    fn a_status_word_becomes_the_bits_and_a_fleet_its_location() {
        let mut v = json!({
            "struct": {"Struct": {"id": "5-1"}, "structAttributes": {"status": "destroyed", "maxHealth": "3", "health": "0"}},
            "fleet": {"Fleet": {"id": "9-1", "planetId": "2-4", "status": "away"}},
            "infusions": [{"Infusion": {"id": "7-3", "address": "structs1a", "destinationId": "3-1"}}],
            "addresses": [{"id": "8-2", "address": "structs1a", "playerId": "1-2", "permissions": "7"}]
        });
        let shape = upgrade(&mut v);
        assert_eq!(v["struct"]["structAttributes"]["status"], "35");
        assert!(v["struct"]["structAttributes"].get("maxHealth").is_none());
        assert_eq!(v["fleet"]["Fleet"]["locationId"], "2-4");
        assert_eq!(v["fleet"]["Fleet"]["locationType"], "planet");
        assert!(v["infusions"][0]["Infusion"].get("id").is_none());
        assert!(v["addresses"][0].get("id").is_none());
        assert!(shape.contains(&STATUS) && shape.contains(&FLEET_PLANET) && shape.contains(&NO_ID));
    }

    #[test]
    fn a_change_of_shape_is_named_once_and_the_game_still_compared() {
        let fresh = json!({"player": {
            "Player": {"id": "1-1", "guildId": "0-1", "name": "nova", "pfp": ""},
            "gridAttributes": {"ore": "2", "fuel": "0"},
            "playerInventory": {"rocks": {"denom": "ualpha", "amount": "5"}}
        }});
        let ignore = Ignore::default();
        let c = compare(&older_player(), &fresh, &ignore, 50, true);
        assert_eq!(c.total, 0, "{:?}", c.changes);
        assert_eq!(c.shape, [USERNAME, INVENTORY, ADDED]);
        // A real difference still shows.
        let mut moved = fresh.clone();
        moved["player"]["Player"]["guildId"] = json!("0-2");
        let c = compare(&older_player(), &moved, &ignore, 50, true);
        assert_eq!(c.total, 1, "{:?}", c.changes);
        assert_eq!(c.changes[0].path, "/player/Player/guildId");
        // A line of today's version is compared as it is: an added field is a
        // difference as ever.
        let mut lacking = fresh.clone();
        lacking["player"]["Player"]
            .as_object_mut()
            .unwrap()
            .remove("pfp");
        let c = compare(&lacking, &fresh, &ignore, 50, false);
        assert_eq!(c.total, 1);
        assert!(c.shape.is_empty());
    }
}
