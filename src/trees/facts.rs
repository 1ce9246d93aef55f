//! The fact engine: named facts computed from a state (`player_id`, `planet_id`,
//! `struct_type`, ...) by reading entities through the core's source, and requirement
//! facts, which are the sim rules' own verdicts (`GameSource::check`) on a candidate
//! message built from the state. A fact the state cannot provide is
//! [`Fact::Unknown`], naming the missing input; it is never guessed.
//!
//! The state's override fields (`charge`, `available_capacity_mw`, `player_online`,
//! `fleet_on_station`, `command_ship_online`, `block_height`) replace what the world
//! says, both in the facts and in the requirement checks (as an [`Assume`]).

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::catalog::{describe, requirement_needs};

use super::{Condition, TemplateRef};
use crate::chain::{self, Assume, Requirement};
use crate::entity::records::StructStatus;
use crate::entity::struct_types::{StructType, struct_type};
use crate::entity::{EntityId, EntityKind};
use crate::error::parse_id;
use crate::error::{ErrorCode, ToolError};
use crate::game::struct_type_arg;
use crate::json::{chain_str, chain_u64};
use crate::source::GameSource;

/// A fact's value, or why it is not known.
#[derive(Debug, Clone, PartialEq)]
pub enum Fact {
    Known {
        value: Value,
        /// What was found (a requirement's detail from the rules).
        detail: Option<String>,
    },
    Unknown {
        /// The state field that would make it known, if one would.
        missing_input: Option<String>,
        reason: String,
    },
}

fn known(value: impl Into<Value>) -> Fact {
    Fact::Known {
        value: value.into(),
        detail: None,
    }
}

fn known_because(value: impl Into<Value>, detail: impl Into<String>) -> Fact {
    Fact::Known {
        value: value.into(),
        detail: Some(detail.into()),
    }
}

fn unknown(reason: impl Into<String>) -> Fact {
    Fact::Unknown {
        missing_input: None,
        reason: reason.into(),
    }
}

fn n(v: &Value, path: &[&str]) -> u64 {
    chain_u64(v, path).unwrap_or(0)
}

fn s<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    chain_str(v, path).unwrap_or("")
}

/// A struct's type id.
pub fn type_of(st: &Value) -> u8 {
    n(st, &["Struct", "type"]) as u8
}

/// A struct's status bits (`structAttributes.status`, or the flags beside it).
pub fn status_of(st: &Value) -> StructStatus {
    StructStatus::of(&st["structAttributes"]).unwrap_or(StructStatus(0))
}

pub fn is_built(st: &Value) -> bool {
    status_of(st).has(StructStatus::BUILT)
}

pub fn is_online(st: &Value) -> bool {
    status_of(st).is_working()
}

pub fn is_destroyed(st: &Value) -> bool {
    status_of(st).has(StructStatus::DESTROYED)
}

/// Where a fleet is: its `locationId` (a planet, for the fleets the game moves).
pub fn fleet_location(fleet: &Value) -> &str {
    s(fleet, &["Fleet", "locationId"])
}

/// The slot ids of a planet or fleet (`key` is `Planet` or `Fleet`), row by row.
pub fn slot_ids(holder: &Value, key: &str) -> Vec<(&'static str, Vec<String>)> {
    ["space", "air", "land", "water"]
        .into_iter()
        .map(|row| {
            let ids = holder[key][row]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|v| v.as_str().unwrap_or("").to_string())
                        .collect()
                })
                .unwrap_or_default();
            (row, ids)
        })
        .collect()
}

/// Builds the state from the tool's `state` argument: ids checked (kind, existence),
/// the struct type normalized to its id, the planet consistent with the player.
pub async fn read_state(
    source: &dyn GameSource,
    state: &Value,
) -> Result<Map<String, Value>, ToolError> {
    let mut out = state.as_object().cloned().unwrap_or_default();
    for (field, kind) in [
        ("player_id", EntityKind::Player),
        ("planet_id", EntityKind::Planet),
        ("target_planet_id", EntityKind::Planet),
    ] {
        if let Some(text) = out.get(field).and_then(Value::as_str) {
            let path = format!("state.{field}");
            let id = parse_id(text, &path, Some(kind))?;
            if source.get(id).await?.is_none() {
                return Err(ToolError::not_found(id, Some(&path)));
            }
        }
    }
    if let Some(resources) = out.remove("resources") {
        for (name, value) in catalog_resources(&resources)? {
            match out.get(name) {
                Some(given) if given != &value => {
                    return Err(ToolError::field(
                        ErrorCode::ValidationInvalidValue,
                        "state.resources",
                        format!("says {name} {value}, but state.{name} says {given}; give one"),
                    ));
                }
                _ => {
                    out.insert(name.to_string(), value);
                }
            }
        }
    }
    if let Some(t) = out.get("struct_type").cloned() {
        let t = struct_type_arg(&t, "state.struct_type")?;
        out.insert("struct_type".into(), json!(t.id));
    }
    if let (Some(player), Some(planet)) = (
        out.get("player_id").and_then(Value::as_str),
        out.get("planet_id").and_then(Value::as_str),
    ) {
        let id = parse_id(player, "state.player_id", Some(EntityKind::Player))?;
        let p = source.get(id).await?.unwrap_or_default();
        let home = s(&p, &["Player", "planetId"]);
        if home != planet {
            return Err(ToolError::field(
                ErrorCode::ValidationInvalidValue,
                "state.planet_id",
                format!(
                    "{planet} is not {player}'s planet ({home}): builds, mining and defense happen on the player's own planet; name another player's planet as target_planet_id"
                ),
            ));
        }
    }
    Ok(out)
}

/// The tool catalog's `state.resources` (`alpha_matter` in grams, `watts` of free
/// capacity) as the overrides they stand for: `alpha_ualpha` and
/// `available_capacity_mw`. A fraction of a ualpha or a mW is refused, not rounded away.
fn catalog_resources(resources: &Value) -> Result<Vec<(&'static str, Value)>, ToolError> {
    // (catalog field, override, its unit per catalog unit, the override's unit)
    const FIELDS: [(&str, &str, f64, &str); 2] = [
        ("alpha_matter", "alpha_ualpha", 1_000_000.0, "ualpha"),
        ("watts", "available_capacity_mw", 1_000.0, "mW"),
    ];
    let mut out = Vec::new();
    for (field, name, scale, unit) in FIELDS {
        let Some(given) = resources.get(field).filter(|v| !v.is_null()) else {
            continue;
        };
        let scaled = given.as_f64().map(|g| g * scale).unwrap_or(f64::NAN);
        let whole = scaled.round();
        // Decimal fractions (1.1 g) are not exact in binary; allow their rounding error.
        if !(whole.abs() < 9.0e15 && (scaled - whole).abs() <= 1e-6 * whole.abs().max(1.0)) {
            return Err(ToolError::field(
                ErrorCode::ValidationInvalidValue,
                format!("state.resources.{field}"),
                format!("must come to a whole number of {unit} (× {scale}), got {given}"),
            ));
        }
        out.push((name, json!(whole as i64)));
    }
    Ok(out)
}

/// Computes facts for one state, caching entities, facts and requirement checks.
pub struct Engine {
    source: Arc<dyn GameSource>,
    state: Map<String, Value>,
    height: u64,
    assume: Assume,
    entities: HashMap<EntityId, Value>,
    facts: HashMap<String, Fact>,
    checks: HashMap<String, Vec<Requirement>>,
}

impl Engine {
    /// `state` as [`read_state`] returns it.
    pub fn new(source: Arc<dyn GameSource>, state: Map<String, Value>) -> Engine {
        let height = state
            .get("block_height")
            .and_then(Value::as_u64)
            .unwrap_or_else(|| source.info().block_height);
        let assume = Assume {
            block_height: state.get("block_height").and_then(Value::as_u64),
            charge: state.get("charge").and_then(Value::as_u64),
            available_capacity: state
                .get("available_capacity_mw")
                .and_then(Value::as_i64)
                .map(i128::from),
            player_online: state.get("player_online").and_then(Value::as_bool),
            fleet_on_station: state.get("fleet_on_station").and_then(Value::as_bool),
            command_ship_online: state.get("command_ship_online").and_then(Value::as_bool),
        };
        Engine {
            source,
            state,
            height,
            assume,
            entities: HashMap::new(),
            facts: HashMap::new(),
            checks: HashMap::new(),
        }
    }

    /// The game the facts are read from.
    pub fn source(&self) -> &dyn GameSource {
        self.source.as_ref()
    }

    pub fn state(&self) -> &Map<String, Value> {
        &self.state
    }

    pub fn height(&self) -> u64 {
        self.height
    }

    /// Every fact computed so far that is known, by name (requirements by
    /// `requirement:{action}:{name}`).
    pub fn known_facts(&self) -> Map<String, Value> {
        let mut out = Map::new();
        let mut keys: Vec<&String> = self.facts.keys().collect();
        keys.sort();
        for k in keys {
            if let Fact::Known { value, .. } = &self.facts[k] {
                out.insert(k.clone(), value.clone());
            }
        }
        out
    }

    /// One entity (cached for the engine's life); a missing one is `RESOURCE_NOT_FOUND`.
    pub async fn entity(&mut self, id: EntityId) -> Result<Value, ToolError> {
        if let Some(v) = self.entities.get(&id) {
            return Ok(v.clone());
        }
        let v = self
            .source
            .get(id)
            .await?
            .ok_or_else(|| ToolError::not_found(id, None))?;
        self.entities.insert(id, v.clone());
        Ok(v)
    }

    async fn entity_str(&mut self, text: &str) -> Result<Option<Value>, ToolError> {
        match EntityId::parse(text) {
            Ok(id) => self.entity(id).await.map(Some),
            Err(_) => Ok(None),
        }
    }

    fn state_str(&self, field: &str) -> Option<&str> {
        self.state.get(field).and_then(Value::as_str)
    }

    /// The first alternative's first missing field, when no alternative is complete.
    fn missing(&self, needs: &[Vec<&'static str>]) -> Option<&'static str> {
        if needs
            .iter()
            .any(|alt| alt.iter().all(|f| self.state.contains_key(*f)))
        {
            return None;
        }
        needs
            .first()
            .and_then(|alt| alt.iter().find(|f| !self.state.contains_key(**f)).copied())
    }

    /// The requirements the sim's rules report for a message (parsed as the chain's JSON).
    pub fn check(&mut self, message: &Value) -> Result<Vec<Requirement>, ToolError> {
        let key = message.to_string();
        if let Some(r) = self.checks.get(&key) {
            return Ok(r.clone());
        }
        let signed = chain::parse(message, "message")?;
        let r = self.source.check(&signed, &self.assume)?;
        self.checks.insert(key, r.clone());
        Ok(r)
    }

    /// A fact by name; `cond` carries a requirement's or a count's parameters.
    pub async fn fact(&mut self, name: &str, cond: Option<&Condition>) -> Result<Fact, ToolError> {
        let key = match cond {
            Some(c) if name == "requirement" => format!(
                "requirement:{}:{}{}{}",
                c.action.as_deref().unwrap_or(""),
                c.name.as_deref().unwrap_or(""),
                c.struct_type
                    .as_ref()
                    .map(|t| format!(":{t}"))
                    .unwrap_or_default(),
                c.if_absent
                    .map(|b| format!(":if_absent={b}"))
                    .unwrap_or_default()
            ),
            Some(c) if c.struct_type.is_some() => format!(
                "{name}:{}{}",
                c.struct_type
                    .as_ref()
                    .map(Value::to_string)
                    .unwrap_or_default(),
                if c.online == Some(true) {
                    ":online"
                } else {
                    ""
                }
            ),
            _ => name.to_string(),
        };
        if let Some(f) = self.facts.get(&key) {
            return Ok(f.clone());
        }
        let needs = if name == "requirement" {
            let c = cond.ok_or_else(|| internal("a requirement fact without its condition"))?;
            requirement_needs(
                c.action.as_deref().unwrap_or(""),
                !c.struct_types().is_empty(),
            )
        } else {
            describe(name)
                .ok_or_else(|| internal(&format!("unknown fact {name}")))?
                .1
        };
        let fact = match self.missing(&needs) {
            Some(field) => Fact::Unknown {
                missing_input: Some(field.to_string()),
                reason: format!("{name} needs state.{field}, which was not given"),
            },
            None if name == "requirement" => self.requirement(cond.expect("checked")).await?,
            None => self.compute(name, cond).await?,
        };
        self.facts.insert(key, fact.clone());
        Ok(fact)
    }

    /// A template reference's value: `None` when it cannot be filled (unknown fact,
    /// absent id, `result.*`), unless it has a default.
    pub async fn resolve(&mut self, r: &TemplateRef) -> Result<Option<Value>, ToolError> {
        let found = match r.scope.as_str() {
            "state" => self.state.get(&r.path).cloned(),
            "fact" => match self.fact(&r.path, None).await? {
                Fact::Known { value, .. } if !value.is_null() => Some(value),
                _ => None,
            },
            _ => None,
        };
        Ok(found.or_else(|| {
            r.default.as_ref().map(|d| {
                d.parse::<u64>()
                    .map(Value::from)
                    .or_else(|_| d.parse::<f64>().map(Value::from))
                    .unwrap_or_else(|_| Value::String(d.clone()))
            })
        }))
    }

    async fn player(&mut self) -> Result<Value, ToolError> {
        let id = self
            .state_str("player_id")
            .ok_or_else(|| internal("player facts without player_id"))?
            .to_string();
        Ok(self.entity_str(&id).await?.unwrap_or_default())
    }

    async fn fleet(&mut self) -> Result<Value, ToolError> {
        let p = self.player().await?;
        let id = s(&p, &["Player", "fleetId"]).to_string();
        Ok(self.entity_str(&id).await?.unwrap_or_default())
    }

    async fn command_ship(&mut self) -> Result<Option<(String, Value)>, ToolError> {
        let f = self.fleet().await?;
        let id = s(&f, &["Fleet", "commandStruct"]).to_string();
        Ok(self.entity_str(&id).await?.map(|v| (id, v)))
    }

    async fn planet(&mut self) -> Result<(String, Value), ToolError> {
        let id = match self.state_str("planet_id") {
            Some(p) => p.to_string(),
            None => {
                let p = self.player().await?;
                s(&p, &["Player", "planetId"]).to_string()
            }
        };
        let v = self.entity_str(&id).await?.unwrap_or_default();
        Ok((id, v))
    }

    /// The live (not destroyed) structs in a planet's or fleet's slots.
    async fn structs_at(
        &mut self,
        holder: &Value,
        key: &str,
    ) -> Result<Vec<(String, Value)>, ToolError> {
        let mut out = Vec::new();
        for (_, ids) in slot_ids(holder, key) {
            for id in ids.into_iter().filter(|i| !i.is_empty()) {
                if let Some(v) = self.entity_str(&id).await?
                    && !is_destroyed(&v)
                {
                    out.push((id, v));
                }
            }
        }
        Ok(out)
    }

    /// The live structs of the player's planet (`fleet` false) or fleet.
    pub async fn home_structs(&mut self, fleet: bool) -> Result<Vec<(String, Value)>, ToolError> {
        if fleet {
            let f = self.fleet().await?;
            self.structs_at(&f, "Fleet").await
        } else {
            let p = self.player().await?;
            let (_, planet) = self.planet_of_player(&p).await?;
            self.structs_at(&planet, "Planet").await
        }
    }

    async fn planet_struct(&mut self, type_id: u8) -> Result<Option<(String, Value)>, ToolError> {
        let (_, planet) = self.planet().await?;
        let all = self.structs_at(&planet, "Planet").await?;
        Ok(all.into_iter().find(|(_, v)| type_of(v) == type_id))
    }

    fn charge_now(&self, p: &Value) -> u64 {
        self.assume.charge.unwrap_or_else(|| {
            self.height
                .saturating_sub(n(p, &["gridAttributes", "lastAction"]))
        })
    }

    fn available_now(&self, p: &Value) -> i128 {
        self.assume.available_capacity.unwrap_or_else(|| {
            let g = &p["gridAttributes"];
            i128::from(n(g, &["capacity"]))
                - i128::from(n(g, &["load"]))
                - i128::from(n(g, &["structsLoad"]))
        })
    }

    /// Whether a planet's shields are down: its owner away from it, its fleet away, or
    /// its command ship missing or offline. The state's overrides apply to the state's
    /// own player.
    async fn shields_vulnerable(
        &mut self,
        planet_id: &str,
        planet: &Value,
    ) -> Result<bool, ToolError> {
        let owner_id = s(planet, &["Planet", "owner"]).to_string();
        let Some(owner) = self.entity_str(&owner_id).await? else {
            return Ok(true);
        };
        if s(&owner, &["Player", "planetId"]) != planet_id {
            return Ok(true);
        }
        let mine = self.state_str("player_id") == Some(owner_id.as_str());
        let fleet_id = s(&owner, &["Player", "fleetId"]).to_string();
        let fleet = self.entity_str(&fleet_id).await?.unwrap_or_default();
        let home = match (mine, self.assume.fleet_on_station) {
            (true, Some(b)) => b,
            _ => {
                s(&fleet, &["Fleet", "status"]) == "onStation"
                    && fleet_location(&fleet) == planet_id
            }
        };
        if !home {
            return Ok(true);
        }
        if let (true, Some(b)) = (mine, self.assume.command_ship_online) {
            return Ok(!b);
        }
        let cmd_id = s(&fleet, &["Fleet", "commandStruct"]).to_string();
        Ok(match self.entity_str(&cmd_id).await? {
            Some(cmd) => !is_online(&cmd),
            None => true,
        })
    }

    fn state_type(&self) -> Option<&'static StructType> {
        self.state
            .get("struct_type")
            .and_then(Value::as_u64)
            .and_then(|t| struct_type(t as u8))
    }

    async fn compute(&mut self, name: &str, cond: Option<&Condition>) -> Result<Fact, ToolError> {
        if let Some(field) = name.strip_prefix("state.") {
            return Ok(known(self.state.get(field).cloned().unwrap_or(Value::Null)));
        }
        let (group, _) = name.split_once('.').unwrap_or((name, ""));
        match group {
            "player" => self.player_fact(name).await,
            "fleet" => self.fleet_fact(name).await,
            "planet" => self.planet_fact(name, cond).await,
            "struct_type" | "build" => self.type_fact(name).await,
            "target" => self.target_fact(name).await,
            _ => Err(internal(&format!("no rule computes {name}"))),
        }
    }

    async fn player_fact(&mut self, name: &str) -> Result<Fact, ToolError> {
        let p = self.player().await?;
        let g = &p["gridAttributes"];
        let capacity = n(g, &["capacity"]);
        let available = self.available_now(&p);
        Ok(match name {
            "player.online" => match self.assume.player_online {
                Some(b) => known_because(b, "as the state says"),
                None if self.assume.available_capacity.is_some() => known_because(
                    available >= 0,
                    format!("{available} mW available, as the state says"),
                ),
                None => known_because(
                    available >= 0,
                    format!(
                        "capacity {capacity} mW, load {} + structs load {} mW: {available} mW available",
                        n(g, &["load"]),
                        n(g, &["structsLoad"])
                    ),
                ),
            },
            "player.charge" => known(self.charge_now(&p)),
            "player.available_capacity_mw" => known(json!(available as i64)),
            "player.capacity_mw" => known(capacity),
            "player.available_ratio" => {
                let r = if capacity == 0 {
                    0.0
                } else {
                    available as f64 / capacity as f64
                };
                let assumed = if self.assume.available_capacity.is_some() {
                    " (free as the state says)"
                } else {
                    ""
                };
                known_because(
                    (r * 10_000.0).round() / 10_000.0,
                    format!("{available} of {capacity} mW free{assumed}"),
                )
            }
            "player.capacity_shortfall_mw" => known((-available).max(0) as u64),
            "player.reserve_shortfall_mw" => {
                let reserve = i128::from(capacity.div_ceil(5));
                known((reserve - available).max(0) as u64)
            }
            "player.stored_ore" => known(n(g, &["ore"])),
            "player.alpha_ualpha" => {
                if let Some(alpha) = self.state.get("alpha_ualpha").and_then(Value::as_u64) {
                    return Ok(known_because(alpha, "as the state says"));
                }
                // `playerInventory.rocks` is one coin, the player's alpha.
                let rocks = &p["playerInventory"]["rocks"];
                let alpha = if rocks["denom"] == "ualpha" {
                    chain_u64(rocks, &["amount"]).unwrap_or(0)
                } else {
                    0
                };
                known(alpha)
            }
            "player.address" => known(s(&p, &["Player", "primaryAddress"])),
            "player.planet_id" => known(s(&p, &["Player", "planetId"])),
            "player.deactivation_candidate" => {
                let fleet = self.fleet().await?;
                let cmd = s(&fleet, &["Fleet", "commandStruct"]).to_string();
                let (_, planet) = self.planet_of_player(&p).await?;
                let mut all = self.structs_at(&planet, "Planet").await?;
                all.extend(self.structs_at(&fleet, "Fleet").await?);
                let best = all
                    .into_iter()
                    .filter(|(id, v)| *id != cmd && is_online(v))
                    .max_by_key(|(_, v)| struct_type(type_of(v)).map_or(0, |t| t.passive_draw));
                match best {
                    Some((id, v)) => known_because(
                        id,
                        format!(
                            "a {} drawing {} mW",
                            struct_type(type_of(&v)).map_or("?", |t| t.name.as_str()),
                            struct_type(type_of(&v)).map_or(0, |t| t.passive_draw)
                        ),
                    ),
                    None => known_because(Value::Null, "no online struct besides the command ship"),
                }
            }
            "player.reactor_validator" => {
                let guild = s(&p, &["Player", "guildId"]).to_string();
                let Some(g) = self.entity_str(&guild).await? else {
                    return Ok(known_because(Value::Null, "the player is in no guild"));
                };
                let reactor = s(&g, &["Guild", "primaryReactorId"]).to_string();
                match self.entity_str(&reactor).await? {
                    Some(r) => known_because(
                        s(&r, &["Reactor", "validator"]),
                        format!("{guild}'s primary reactor {reactor}"),
                    ),
                    None => known_because(Value::Null, format!("{guild} has no primary reactor")),
                }
            }
            _ => return Err(internal(&format!("no rule computes {name}"))),
        })
    }

    async fn planet_of_player(&mut self, p: &Value) -> Result<(String, Value), ToolError> {
        let id = s(p, &["Player", "planetId"]).to_string();
        let v = self.entity_str(&id).await?.unwrap_or_default();
        Ok((id, v))
    }

    async fn fleet_fact(&mut self, name: &str) -> Result<Fact, ToolError> {
        let p = self.player().await?;
        let fleet = self.fleet().await?;
        let fleet_id = s(&fleet, &["Fleet", "id"]).to_string();
        let cmd = self.command_ship().await?;
        Ok(match name {
            "fleet.id" => known(fleet_id),
            "fleet.on_station" => match self.assume.fleet_on_station {
                Some(b) => known_because(b, "as the state says"),
                None => {
                    let status = s(&fleet, &["Fleet", "status"]);
                    let at = fleet_location(&fleet);
                    let home = s(&p, &["Player", "planetId"]);
                    known_because(
                        status == "onStation" && at == home,
                        format!(
                            "{fleet_id} is {status} at {}",
                            if at.is_empty() { "no planet" } else { at }
                        ),
                    )
                }
            },
            "fleet.has_command_ship" => known(cmd.is_some()),
            "fleet.command_ship_id" => known(cmd.map_or(Value::Null, |(id, _)| Value::String(id))),
            "fleet.command_ship_built" => known(cmd.is_some_and(|(_, v)| is_built(&v))),
            "fleet.command_ship_online" => match self.assume.command_ship_online {
                Some(b) => known_because(b, "as the state says"),
                None => match cmd {
                    Some((id, v)) => {
                        known_because(is_online(&v), format!("{id} is {}", status_of(&v).word()))
                    }
                    None => known_because(false, format!("{fleet_id} has no command ship")),
                },
            },
            "fleet.combat_structs" | "fleet.attacker_id" => {
                let cmd_id = cmd.map(|(id, _)| id).unwrap_or_default();
                let combat: Vec<String> = self
                    .structs_at(&fleet, "Fleet")
                    .await?
                    .into_iter()
                    .filter(|(id, v)| *id != cmd_id && is_online(v))
                    .map(|(id, _)| id)
                    .collect();
                if name == "fleet.combat_structs" {
                    known(combat.len())
                } else {
                    known(combat.first().cloned().map_or(Value::Null, Value::String))
                }
            }
            "fleet.at_target" => {
                let target = self.state_str("target_planet_id").unwrap_or("").to_string();
                let status = s(&fleet, &["Fleet", "status"]);
                let at = fleet_location(&fleet);
                known_because(
                    status == "away" && at == target,
                    format!(
                        "{fleet_id} is {status} at {}",
                        if at.is_empty() { "no planet" } else { at }
                    ),
                )
            }
            _ => return Err(internal(&format!("no rule computes {name}"))),
        })
    }

    async fn planet_fact(
        &mut self,
        name: &str,
        cond: Option<&Condition>,
    ) -> Result<Fact, ToolError> {
        let (planet_id, planet) = self.planet().await?;
        Ok(match name {
            "planet.id" => known(planet_id),
            "planet.ore" => known(n(&planet, &["gridAttributes", "ore"])),
            "planet.shield" => known(n(&planet, &["planetAttributes", "planetaryShield"])),
            "planet.raid_clock_running" => {
                let start = n(&planet, &["planetAttributes", "blockStartRaid"]);
                known_because(start != 0, format!("blockStartRaid {start}"))
            }
            "planet.shields_vulnerable" => {
                known(self.shields_vulnerable(&planet_id, &planet).await?)
            }
            "planet.free_slots" => known(
                slot_ids(&planet, "Planet")
                    .iter()
                    .map(|(_, ids)| ids.iter().filter(|i| i.is_empty()).count())
                    .sum::<usize>(),
            ),
            "planet.extractor_id"
            | "planet.extractor_built"
            | "planet.extractor_online"
            | "planet.extractor_mining"
            | "planet.refinery_id"
            | "planet.refinery_built"
            | "planet.refinery_online"
            | "planet.refinery_refining" => {
                let (type_id, start_field) = if name.starts_with("planet.extractor") {
                    (14, "blockStartOreMine")
                } else {
                    (15, "blockStartOreRefine")
                };
                let found = self.planet_struct(type_id).await?;
                let field = name.rsplit('_').next().unwrap_or("");
                match (field, found) {
                    ("id", f) => known(f.map_or(Value::Null, |(id, _)| Value::String(id))),
                    ("built", f) => known(f.is_some_and(|(_, v)| is_built(&v))),
                    ("online", f) => known(f.is_some_and(|(_, v)| is_online(&v))),
                    (_, Some((_, v))) => {
                        let start = n(&v, &["structAttributes", start_field]);
                        known_because(
                            start != 0 && is_online(&v),
                            format!("{start_field} {start}"),
                        )
                    }
                    (_, None) => known(false),
                }
            }
            "planet.generator_id" => {
                let all = self.structs_at(&planet, "Planet").await?;
                known(
                    all.into_iter()
                        .find(|(_, v)| matches!(type_of(v), 20..=22) && is_online(v))
                        .map_or(Value::Null, |(id, _)| Value::String(id)),
                )
            }
            "planet.struct_count" => {
                let c = cond.ok_or_else(|| internal("a count without its condition"))?;
                let types = c.struct_types();
                let online_only = c.online == Some(true);
                let all = self.structs_at(&planet, "Planet").await?;
                let count = all
                    .iter()
                    .filter(|(_, v)| types.contains(&type_of(v)) && (!online_only || is_online(v)))
                    .count();
                known_because(
                    count,
                    format!(
                        "{count} of type {} on {planet_id}{}",
                        types
                            .iter()
                            .map(u8::to_string)
                            .collect::<Vec<_>>()
                            .join("/"),
                        if online_only { " online" } else { "" }
                    ),
                )
            }
            _ => return Err(internal(&format!("no rule computes {name}"))),
        })
    }

    async fn type_fact(&mut self, name: &str) -> Result<Fact, ToolError> {
        let t = self
            .state_type()
            .ok_or_else(|| internal("struct type facts without struct_type"))?;
        let raw = |k: &str| t.raw.get(k).and_then(Value::as_u64).unwrap_or(0);
        Ok(match name {
            "struct_type.id" => known(t.id),
            "struct_type.name" => known(t.name.as_str()),
            "struct_type.buildCharge" => known(raw("buildCharge")),
            "struct_type.buildDraw" => known(t.build_draw),
            "struct_type.passiveDraw" => known(t.passive_draw),
            "struct_type.buildDifficulty" => known(t.build_difficulty),
            "struct_type.buildLimit" => known(t.build_limit),
            "struct_type.is_fleet" => known(t.is_fleet()),
            "build.location_type" => known(if t.is_fleet() { "fleet" } else { "planet" }),
            "build.location_id" => {
                let p = self.player().await?;
                known(s(
                    &p,
                    &["Player", if t.is_fleet() { "fleetId" } else { "planetId" }],
                ))
            }
            _ => return Err(internal(&format!("no rule computes {name}"))),
        })
    }

    async fn target_fact(&mut self, name: &str) -> Result<Fact, ToolError> {
        let id = self.state_str("target_planet_id").unwrap_or("").to_string();
        let planet = self.entity_str(&id).await?.unwrap_or_default();
        Ok(match name {
            "target.planet_id" => known(id),
            "target.owner" => known(s(&planet, &["Planet", "owner"])),
            "target.shield" => known(n(&planet, &["planetAttributes", "planetaryShield"])),
            "target.raid_clock_running" => {
                let start = n(&planet, &["planetAttributes", "blockStartRaid"]);
                known_because(start != 0, format!("blockStartRaid {start}"))
            }
            "target.shields_vulnerable" => known(self.shields_vulnerable(&id, &planet).await?),
            "target.command_ship_id" => {
                let owner = s(&planet, &["Planet", "owner"]).to_string();
                let owner = self.entity_str(&owner).await?.unwrap_or_default();
                let fleet = s(&owner, &["Player", "fleetId"]).to_string();
                let fleet = self.entity_str(&fleet).await?.unwrap_or_default();
                let cmd = s(&fleet, &["Fleet", "commandStruct"]);
                known(if cmd.is_empty() {
                    Value::Null
                } else {
                    Value::String(cmd.to_string())
                })
            }
            _ => return Err(internal(&format!("no rule computes {name}"))),
        })
    }

    /// A candidate message (one of [`super::REQUIREMENT_ACTIONS`]) built from the
    /// state, or why it cannot be built. `build` takes `struct_type`, else the state's.
    pub async fn candidate(
        &mut self,
        action: &str,
        struct_type_id: Option<u8>,
    ) -> Result<Result<Value, Fact>, ToolError> {
        let p = self.player().await?;
        let creator = s(&p, &["Player", "primaryAddress"]).to_string();
        let player = s(&p, &["Player", "id"]).to_string();
        let msg = |ty: &str, mut fields: Value| {
            fields["@type"] = json!(format!("{}{ty}", chain::TYPE_PREFIX));
            fields["creator"] = json!(creator);
            fields
        };
        let struct_id = |found: Option<(String, Value)>, what: &str| match found {
            Some((id, _)) => Ok(id),
            None => Err(unknown(format!("there is no {what} to act on"))),
        };
        Ok(Ok(match action {
            "build" => {
                let t = struct_type_id
                    .or_else(|| self.state_type().map(|t| t.id))
                    .ok_or_else(|| internal("a build requirement without a struct type"))?;
                msg(
                    "MsgStructBuildInitiate",
                    json!({"playerId": player, "structTypeId": t.to_string()}),
                )
            }
            "explore" => msg("MsgPlanetExplore", json!({"playerId": player})),
            "activate_command_ship" => {
                match struct_id(self.command_ship().await?, "command ship") {
                    Ok(id) => msg("MsgStructActivate", json!({"structId": id})),
                    Err(f) => return Ok(Err(f)),
                }
            }
            "mine" | "refine" => {
                let (t, what, ty) = if action == "mine" {
                    (14, "Ore Extractor", "MsgStructOreMinerComplete")
                } else {
                    (15, "Ore Refinery", "MsgStructOreRefineryComplete")
                };
                match struct_id(self.planet_struct(t).await?, what) {
                    Ok(id) => msg(ty, json!({"structId": id, "nonce": "0"})),
                    Err(f) => return Ok(Err(f)),
                }
            }
            "move_home" | "move_to_target" => {
                let to = if action == "move_home" {
                    s(&p, &["Player", "planetId"]).to_string()
                } else {
                    self.state_str("target_planet_id").unwrap_or("").to_string()
                };
                msg(
                    "MsgFleetMove",
                    json!({"fleetId": s(&p, &["Player", "fleetId"]), "destinationLocationId": to}),
                )
            }
            other => return Err(internal(&format!("no candidate message {other}"))),
        }))
    }

    async fn requirement(&mut self, c: &Condition) -> Result<Fact, ToolError> {
        let name = c.name.as_deref().unwrap_or("");
        let action = c.action.as_deref().unwrap_or("");
        let msg = match self
            .candidate(action, c.struct_types().first().copied())
            .await?
        {
            Ok(m) => m,
            Err(f) => return Ok(f),
        };
        let reqs = self.check(&msg)?;
        let ty = chain::type_name(&msg, "message").unwrap_or("?").to_string();
        Ok(match reqs.iter().find(|r| r.requirement == name) {
            Some(r) => known_because(r.met, r.detail.clone()),
            None => match c.if_absent {
                Some(b) => known_because(b, format!("the rules do not impose {name} on this {ty}")),
                None => unknown(format!(
                    "the rules did not evaluate {name} for this {ty} (they evaluated {})",
                    reqs.iter()
                        .map(|r| r.requirement)
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            },
        })
    }
}

fn internal(what: &str) -> ToolError {
    ToolError::new(
        ErrorCode::ToolExecutionFailed,
        format!("decision tree fact engine: {what}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fact_is_described_once() {
        let mut names: Vec<&str> = crate::trees::catalog::FACTS
            .iter()
            .map(|f| f.name)
            .collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len(), "a fact is listed twice");
        assert!(describe("state.player_id").is_some());
        assert!(describe("state.nope").is_none());
        assert!(
            describe("requirement").is_none(),
            "requirements are not template facts"
        );
    }
}
