//! A scripted agent doing realistic Structs tasks through `Core::call`, in three styles,
//! counting its tool calls and the bytes it read.
//!
//! Each task is written once, the way an agent works: it makes its main call, then
//! looks up each entity it needs by id. A lookup uses what the agent already holds (a
//! reference it was given, or an entity it queried earlier) and otherwise costs a
//! `structs_query_entity` call. [`Style::Plain`]: no references, so every lookup is a
//! call. [`Style::References`]: the main call asks for references (mode and depth), which
//! usually answer the lookups. [`Style::Lean`]: the same, plus the `fields`, kinds and
//! mode an agent would pick for that task, so it reads only what it needs.
//!
//! Shared by `benches/references.rs` (which prints the figures) and
//! `tests/references.rs` (which checks every style reaches the same answers).

use std::collections::{HashMap, HashSet};

use serde_json::{Value, json};
use structs_console::Core;
use structs_console::entity::EntityKind;
use structs_console::references::extract::own_id;

/// How a task asks for references when the agent uses them.
#[derive(Debug, Clone, Copy)]
pub struct Ask {
    pub mode: &'static str,
    pub depth: u8,
}

const D1: Ask = Ask {
    mode: "all",
    depth: 1,
};
const D2: Ask = Ask {
    mode: "all",
    depth: 2,
};
const PRIMARY: Ask = Ask {
    mode: "primary",
    depth: 1,
};

/// How the agent calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// No references: every entity is a call.
    Plain,
    /// References as each task asks ([`Ask`]), every field of every record.
    References,
    /// References, and only the fields, kinds and mode the task needs.
    Lean,
}

impl Style {
    pub const ALL: [Style; 3] = [Style::Plain, Style::References, Style::Lean];

    pub fn name(self) -> &'static str {
        match self {
            Style::Plain => "plain",
            Style::References => "references",
            Style::Lean => "lean",
        }
    }
}

pub struct Agent {
    core: Core,
    pub style: Style,
    /// Tool calls made for tasks (setup lookups are not counted).
    pub calls: u32,
    /// Serialized bytes of every counted response.
    pub bytes: usize,
    /// Entries of `references` maps received.
    pub received: usize,
    /// Of those, the ones a lookup used.
    pub used: usize,
    known: HashMap<String, Value>,
    /// Ids the agent holds because a `references` map carried them.
    from_references: HashSet<String>,
}

impl Agent {
    pub fn new(core: Core, style: Style) -> Agent {
        Agent {
            core,
            style,
            calls: 0,
            bytes: 0,
            received: 0,
            used: 0,
            known: HashMap::new(),
            from_references: HashSet::new(),
        }
    }

    /// Forgets what it learned (between tasks, so each task is measured alone).
    pub fn forget(&mut self) {
        self.known.clear();
        self.from_references.clear();
        self.core.reference_cache().clear();
    }

    /// One counted call. `lean`: the arguments the lean style adds (or overrides).
    async fn call(&mut self, tool: &str, mut args: Value, ask: Ask, lean: Value) -> Value {
        if self.style != Style::Plain {
            args["include_references"] = json!(ask.mode);
            args["reference_depth"] = json!(ask.depth);
        }
        if self.style == Style::Lean
            && let Some(extra) = lean.as_object()
        {
            for (k, v) in extra {
                args[k] = v.clone();
            }
        }
        let v = self
            .core
            .call_json(tool, args)
            .await
            .unwrap_or_else(|e| panic!("{tool}: {e}"));
        self.calls += 1;
        self.bytes += serde_json::to_vec(&v).map_or(0, |b| b.len());
        if let Some(refs) = v.get("references").and_then(Value::as_object) {
            self.received += refs.len();
            for (id, r) in refs {
                // A lean entry has no status: it is there because it resolved.
                if r.get("status").is_none_or(|s| s == "success") {
                    self.known.insert(id.clone(), r.clone());
                    self.from_references.insert(id.clone());
                }
            }
        }
        // Like any agent, it remembers the entities a response carried (the queried one,
        // a list's items), with or without references.
        if let Some(fields) = v.as_object() {
            for (k, field) in fields {
                if k != "references" {
                    self.learn(field);
                }
            }
        }
        v
    }

    fn learn(&mut self, v: &Value) {
        match v {
            Value::Object(obj) => {
                if let Some(id) = own_id(obj) {
                    self.known
                        .entry(id.to_string())
                        .or_insert_with(|| v.clone());
                } else {
                    obj.values().for_each(|x| self.learn(x));
                }
            }
            Value::Array(items) => items.iter().for_each(|x| self.learn(x)),
            _ => {}
        }
    }

    /// An entity's data by id: from what the agent holds, or one query.
    async fn entity(&mut self, id: &str) -> Value {
        if let Some(v) = self.known.get(id) {
            if self.from_references.remove(id) {
                self.used += 1;
            }
            return v.clone();
        }
        // A lean lookup asks for the one entity it needs, without references.
        let v = self
            .call(
                "structs_query_entity",
                json!({ "id": id }),
                D1,
                json!({"include_references": false}),
            )
            .await;
        let e = v["entity"].clone();
        self.known.insert(id.to_string(), e.clone());
        e
    }

    /// The first id of a kind (setup: not counted).
    async fn first(&self, kind: &str, skip: usize) -> String {
        let v = self
            .core
            .call_json(
                "structs_list_entities",
                json!({"entity_type": kind, "page_size": 100, "fields": "id"}),
            )
            .await
            .unwrap();
        let items = v
            .as_object()
            .unwrap()
            .values()
            .find_map(Value::as_array)
            .unwrap();
        let item = &items[skip.min(items.len() - 1)];
        own_id(item.as_object().unwrap()).unwrap().to_string()
    }
}

impl Agent {
    /// The planet with the most structs among the first 100 (setup: not counted).
    async fn busiest_planet(&self) -> String {
        let v = self
            .core
            .call_json(
                "structs_list_planets",
                json!({"page_size": 100, "fields": "space,air,land,water"}),
            )
            .await
            .unwrap();
        let planets = v["planets"].as_array().unwrap();
        let best = planets
            .iter()
            .max_by_key(|p| slot_ids(&p["Planet"]).len())
            .unwrap();
        s(&best["Planet"]["id"])
    }
}

/// The tasks, by name.
pub const TASKS: [&str; 12] = [
    "what player 1-3 owns, and who owns their guild",
    "which structs sit on the busiest planet, and their types",
    "where fleet 9-2 is stationed, whose planet that is, its command ship's health",
    "guild 0-1: owner's name, reactor's guild, entry substation's connections",
    "the first 10 planets and each owner's name",
    "a struct's location and the owner of that location",
    "player 1-5's substation: owner and capacity",
    "an agreement's provider substation and consumer's guild",
    "an allocation's source, destination and controller",
    "player 1-2's structs and the status of where each sits",
    "guild 0-1's members and the ore on their planets",
    "player 1-4's planet and the health of the structs on it",
];

fn s(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

fn slot_ids(planet: &Value) -> Vec<String> {
    ["space", "air", "land", "water"]
        .iter()
        .flat_map(|row| planet[row].as_array().cloned().unwrap_or_default())
        .filter_map(|x| x.as_str().filter(|x| !x.is_empty()).map(str::to_string))
        .collect()
}

/// The core object of any entity JSON (`{"Player": {...}}` → `{...}`, flat → itself).
fn core_of(e: &Value) -> Value {
    EntityKind::ALL
        .iter()
        .find_map(|k| e.get(k.rest_key()?))
        .unwrap_or(e)
        .clone()
}

/// Runs task `i` and returns its answer.
pub async fn run(i: usize, a: &mut Agent) -> Value {
    match i {
        0 => {
            let p = a
                .call(
                    "structs_query_player",
                    json!({"player_id": "1-3"}),
                    D2,
                    json!({"reference_types": ["planet", "fleet", "guild", "player"],
                        "fields": "planetId,fleetId,guildId,Planet.maxOre,Fleet.status,Guild.owner,Player.name"}),
                )
                .await;
            let p = &p["player"]["Player"];
            let planet = core_of(&a.entity(&s(&p["planetId"])).await);
            let fleet = core_of(&a.entity(&s(&p["fleetId"])).await);
            let guild = core_of(&a.entity(&s(&p["guildId"])).await);
            let owner = core_of(&a.entity(&s(&guild["owner"])).await);
            json!([planet["maxOre"], fleet["status"], owner["name"]])
        }
        1 => {
            let planet_id = a.busiest_planet().await;
            let v = a
                .call(
                    "structs_query_planet",
                    json!({"planet_id": planet_id}),
                    D1,
                    json!({"reference_types": ["struct"],
                        "fields": "space,air,land,water,Struct.type"}),
                )
                .await;
            let mut types = Vec::new();
            for sid in slot_ids(&v["planet"]["Planet"]) {
                let st = core_of(&a.entity(&sid).await);
                types.push(json!([sid, st["type"]]));
            }
            json!(types)
        }
        2 => {
            let v = a
                .call(
                    "structs_query_fleet",
                    json!({"fleet_id": "9-2"}),
                    D2,
                    json!({"reference_types": ["planet", "player", "struct"],
                        "fields": "Fleet.status,Fleet.locationId,commandStruct,Planet.owner,Player.name,structAttributes.health"}),
                )
                .await;
            let f = &v["fleet"]["Fleet"];
            let mut out = vec![f["status"].clone()];
            if let Some(pid) = f["locationId"].as_str().filter(|x| !x.is_empty()) {
                let planet = core_of(&a.entity(pid).await);
                let owner = core_of(&a.entity(&s(&planet["owner"])).await);
                out.push(owner["name"].clone());
            }
            let ship = a.entity(&s(&f["commandStruct"])).await;
            out.push(ship["structAttributes"]["health"].clone());
            json!(out)
        }
        3 => {
            let v = a
                .call(
                    "structs_query_guild",
                    json!({"guild_id": "0-1"}),
                    D1,
                    json!({"fields": "Guild.owner,primaryReactorId,entrySubstationId,Player.name,Reactor.guildId,Substation.gridAttributes.connectionCount"}),
                )
                .await;
            let g = &v["guild"]["Guild"];
            let owner = core_of(&a.entity(&s(&g["owner"])).await);
            let reactor = core_of(&a.entity(&s(&g["primaryReactorId"])).await);
            let sub = a.entity(&s(&g["entrySubstationId"])).await;
            json!([
                owner["name"],
                reactor["guildId"],
                sub["gridAttributes"]["connectionCount"]
            ])
        }
        4 => {
            let v = a
                .call(
                    "structs_list_planets",
                    json!({"page_size": 10}),
                    PRIMARY,
                    json!({"fields": "Planet.owner,Player.name"}),
                )
                .await;
            let mut names = Vec::new();
            for p in v["planets"].as_array().unwrap() {
                let owner = core_of(&a.entity(&s(&p["Planet"]["owner"])).await);
                names.push(owner["name"].clone());
            }
            json!(names)
        }
        5 => {
            let sid = a.first("struct", 7).await;
            let v = a
                .call(
                    "structs_query_struct",
                    json!({"struct_id": sid}),
                    D2,
                    json!({"reference_types": ["planet", "fleet", "player"],
                        "fields": "Struct.locationType,Struct.locationId,Planet.owner,Fleet.owner,Player.name"}),
                )
                .await;
            let st = &v["struct"]["Struct"];
            let location = core_of(&a.entity(&s(&st["locationId"])).await);
            let owner = core_of(&a.entity(&s(&location["owner"])).await);
            json!([st["locationType"], owner["name"]])
        }
        6 => {
            let v = a
                .call(
                    "structs_query_player",
                    json!({"player_id": "1-5"}),
                    D2,
                    json!({"reference_types": ["substation", "player"],
                        "fields": "substationId,Substation.owner,Substation.gridAttributes.capacity,Player.name"}),
                )
                .await;
            let sub_id = s(&v["player"]["Player"]["substationId"]);
            if sub_id.is_empty() {
                return json!(null);
            }
            let sub = a.entity(&sub_id).await;
            let owner = core_of(&a.entity(&s(&sub["Substation"]["owner"])).await);
            json!([owner["name"], sub["gridAttributes"]["capacity"]])
        }
        7 => {
            let id = a.first("agreement", 0).await;
            let v = a
                .call(
                    "structs_query_entity",
                    json!({"id": id}),
                    D2,
                    json!({"reference_types": ["provider", "player"],
                        "fields": "providerId,Agreement.owner,Provider.substationId,Player.guildId"}),
                )
                .await;
            let ag = core_of(&v["entity"]);
            let provider = core_of(&a.entity(&s(&ag["providerId"])).await);
            let consumer = core_of(&a.entity(&s(&ag["owner"])).await);
            json!([provider["substationId"], consumer["guildId"]])
        }
        8 => {
            let id = a.first("allocation", 0).await;
            let v = a
                .call(
                    "structs_query_entity",
                    json!({"id": id}),
                    D1,
                    json!({"fields": "sourceObjectId,destinationId,controller,Player.name"}),
                )
                .await;
            let al = core_of(&v["entity"]);
            let source = a.entity(&s(&al["sourceObjectId"])).await;
            let dest = a.entity(&s(&al["destinationId"])).await;
            let controller = core_of(&a.entity(&s(&al["controller"])).await);
            json!([
                core_of(&source)["id"],
                core_of(&dest)["id"],
                controller["name"]
            ])
        }
        9 => {
            let v = a
                .call(
                    "structs_list_structs",
                    json!({"owner": "1-2", "page_size": 10}),
                    PRIMARY,
                    json!({"reference_types": ["planet", "fleet"],
                        "fields": "Struct.id,locationId,Planet.status,Fleet.status"}),
                )
                .await;
            let mut out = Vec::new();
            for st in v["structs"].as_array().unwrap() {
                let loc = core_of(&a.entity(&s(&st["Struct"]["locationId"])).await);
                out.push(json!([st["Struct"]["id"], loc["status"]]));
            }
            json!(out)
        }
        10 => {
            let v = a
                .call(
                    "structs_list_players",
                    json!({"guild_id": "0-1", "page_size": 10}),
                    PRIMARY,
                    json!({"reference_types": ["planet"], "fields": "planetId,Planet.maxOre"}),
                )
                .await;
            let mut out = Vec::new();
            for p in v["players"].as_array().unwrap() {
                let planet = core_of(&a.entity(&s(&p["Player"]["planetId"])).await);
                out.push(planet["maxOre"].clone());
            }
            json!(out)
        }
        11 => {
            let v = a
                .call(
                    "structs_query_player",
                    json!({"player_id": "1-4"}),
                    D2,
                    json!({"include_references": "primary", "reference_types": ["planet", "struct"],
                        "fields": "planetId,Planet.space,Planet.air,Planet.land,Planet.water,structAttributes.health"}),
                )
                .await;
            let planet = core_of(&a.entity(&s(&v["player"]["Player"]["planetId"])).await);
            let mut out = Vec::new();
            for sid in slot_ids(&planet) {
                let st = a.entity(&sid).await;
                out.push(st["structAttributes"]["health"].clone());
            }
            json!(out)
        }
        _ => unreachable!("there are {} tasks", TASKS.len()),
    }
}

/// The players the briefings task briefs on.
pub const BRIEFED: [&str; 12] = [
    "1-1", "1-2", "1-3", "1-4", "1-5", "1-6", "1-7", "1-8", "1-9", "1-10", "1-11", "1-12",
];

/// A player briefing, the way an agent prepares one: the player's guild (its owner),
/// planet (its ore), fleet (its status), and the type of every struct on the planet.
pub async fn briefing(a: &mut Agent, player: &str) -> Value {
    let v = a
        .call(
            "structs_query_player",
            json!({ "player_id": player }),
            D2,
            json!({"reference_types": ["guild", "planet", "fleet", "struct"],
                "fields": "guildId,planetId,fleetId,Guild.owner,Planet.maxOre,Planet.space,Planet.air,Planet.land,Planet.water,Fleet.status,Struct.type"}),
        )
        .await;
    let p = &v["player"]["Player"];
    let guild_id = s(&p["guildId"]);
    let guild_owner = if guild_id.is_empty() {
        Value::Null
    } else {
        core_of(&a.entity(&guild_id).await)["owner"].clone()
    };
    let planet_id = s(&p["planetId"]);
    let mut types = Vec::new();
    let mut ore = Value::Null;
    if !planet_id.is_empty() {
        let planet = core_of(&a.entity(&planet_id).await);
        ore = planet["maxOre"].clone();
        for sid in slot_ids(&planet) {
            let st = core_of(&a.entity(&sid).await);
            types.push(st["type"].clone());
        }
    }
    let fleet_id = s(&p["fleetId"]);
    let status = if fleet_id.is_empty() {
        Value::Null
    } else {
        core_of(&a.entity(&fleet_id).await)["status"].clone()
    };
    json!([guild_owner, ore, status, types])
}

/// Every struct's id and type, page after page: plain pages of 100 whole entities, or
/// (lean) the two fields, as a table, in pages as large as the response limit allows.
/// Answers the ids and types in order.
pub async fn scan_structs(a: &mut Agent) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut key: Option<String> = None;
    loop {
        let mut args = json!({"page_size": 100});
        if let Some(k) = &key {
            args["page_key"] = json!(k);
        }
        let lean = json!({"include_references": false, "fields": "id,type",
                          "format": "table", "page_size": 5000});
        let v = a.call("structs_list_structs", args, D1, lean).await;
        let v = if v.get("result_handle").is_some() {
            panic!("a scan page became a handle: {v}")
        } else {
            v
        };
        match v.get("table") {
            Some(table) => {
                let columns = table["columns"].as_array().unwrap();
                let at = |name: &str| columns.iter().position(|c| c == name).unwrap();
                let (id, ty) = (at("id"), at("type"));
                for row in table["rows"].as_array().unwrap() {
                    out.push((s(&row[id]), s(&row[ty])));
                }
            }
            None => {
                for st in v["structs"].as_array().unwrap() {
                    let c = core_of(st);
                    out.push((s(&c["id"]), s(&c["type"])));
                }
            }
        }
        match v["pagination"]["next_key"].as_str() {
            Some(k) => key = Some(k.to_string()),
            None => break,
        }
    }
    out
}
