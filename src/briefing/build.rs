//! The briefings, one function each. Every fact in them comes from a tool call made
//! now (the same tools the agent has), so a briefing never says more than the server
//! knows.

use serde_json::{Map, Value, json};

use super::{Briefing, Link, Made, Part, Refused};
use crate::core::Core;
use crate::docs::Snapshot;
use crate::entity::{EntityId, EntityKind};

/// The most entities a briefing embeds whole; the rest are linked.
const EMBEDDED_REFERENCES: usize = 10;

/// Keys a reference adds to the entity it carries.
const REFERENCE_KEYS: [&str; 6] = [
    "reference_type",
    "id",
    "status",
    "referenced_from",
    "referenced_in",
    "depth",
];

/// The parts being put together: one instruction, then what it relies on.
struct Messages {
    out: Vec<Part>,
}

impl Messages {
    fn new(instruction: String) -> Messages {
        Messages {
            out: vec![Part::Text(instruction)],
        }
    }

    fn text(&mut self, text: String) {
        self.out.push(Part::Text(text));
    }

    /// An entity embedded as its resource, in the chain's JSON shape.
    fn entity(&mut self, id: &str, entity: &Value) {
        self.out.push(Part::Embedded {
            uri: format!("{}{id}", crate::entity::ENTITY_URI),
            mime_type: "application/json",
            text: entity.to_string(),
        });
    }

    fn link(&mut self, link: Link) {
        self.out.push(Part::Link(link));
    }

    /// A doc linked by its resource, when the docs have it.
    fn doc_link(&mut self, docs: &Snapshot, id: &str) {
        if let Some(doc) = docs.doc(id) {
            self.link(
                Link::new(doc.uri(), doc.title.clone())
                    .with_mime_type("text/markdown")
                    .with_description(doc.summary.clone())
                    .with_size(doc.bytes as u64),
            );
        }
    }

    /// The best docs for a search, linked (at most `n`, none when search fails).
    fn doc_search(&mut self, docs: &Snapshot, query: &str, n: usize) {
        let ids: Vec<String> = docs
            .search(query, None, None, n)
            .map(|hits| hits.into_iter().map(|h| h.doc.id.clone()).collect())
            .unwrap_or_default();
        for id in ids {
            self.doc_link(docs, &id);
        }
    }

    fn done(self, description: String) -> Briefing {
        Briefing {
            description,
            parts: self.out,
        }
    }
}

/// Calls a tool; its error becomes `-32602` when the arguments were at fault (an id
/// that does not exist, a struct type that is not one), else an internal error.
async fn call(core: &Core, tool: &str, args: Value) -> Result<Value, Refused> {
    core.call_json(tool, args).await.map_err(|error| {
        let code = error["error"]["code"].as_str().unwrap_or_default();
        let message = error["error"]["message"]
            .as_str()
            .unwrap_or("the call failed")
            .to_string();
        if code.starts_with("VALIDATION_") || code.starts_with("RESOURCE_NOT") {
            Refused::invalid_params(message, Some(error))
        } else {
            Refused::internal_error(message, Some(error))
        }
    })
}

fn arg<'a>(args: &'a Map<String, Value>, name: &str) -> Option<&'a str> {
    args.get(name).and_then(Value::as_str)
}

/// An id argument of the kind the prompt wants.
fn id_arg(args: &Map<String, Value>, name: &str, kind: EntityKind) -> Result<EntityId, Refused> {
    let text = arg(args, name).unwrap_or_default();
    let id = EntityId::parse(text)
        .map_err(|e| Refused::invalid_params(format!("{name} is not an id: {e}"), None))?;
    if id.kind != kind {
        return Err(Refused::invalid_params(
            format!(
                "{name}: {id} is a {}, not a {} ({}-N)",
                id.kind.name(),
                kind.name(),
                kind.code()
            ),
            None,
        ));
    }
    Ok(id)
}

/// One entity read now, in the chain's shape (`structs_query_entity`'s `entity`).
async fn entity(core: &Core, id: EntityId) -> Result<Value, Refused> {
    let v = call(core, "structs_query_entity", json!({"id": id.to_string()})).await?;
    Ok(v["entity"].clone())
}

/// A field of an entity's core object, as text.
fn field(kind: EntityKind, entity: &Value, key: &str) -> Option<String> {
    let v = kind.core_object(entity)?.get(key)?;
    v.as_str()
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .or_else(|| v.as_u64().map(|n| n.to_string()))
}

/// The briefing `made` names, for these arguments (already checked as text).
pub async fn render(
    core: &Core,
    docs: &Snapshot,
    made: &Made,
    args: &Map<String, Value>,
) -> Result<Briefing, Refused> {
    match made {
        Made::Brief => brief(core, docs, args).await,
        Made::PlanBuild => plan_build(core, docs, args).await,
        Made::Pow => pow(core, docs, args).await,
        Made::Diagnose => diagnose(core, docs, args).await,
        Made::Next => next(core, docs, args).await,
        Made::RunWorkflow => run_workflow(core, docs, args).await,
        Made::Workflow(name) => workflow(core, docs, name, args).await,
        Made::Doc(id) => doc(core, docs, id, args).await,
    }
}

/// What a briefing on each kind should cover.
fn brief_focus(kind: EntityKind) -> &'static str {
    match kind {
        EntityKind::Player => {
            "whether it is online, its charge, power (capacity against load), ore and Alpha \
             Matter held, its planet, fleet and guild"
        }
        EntityKind::Planet => "its owner, ore left, slots used in each ambit, shield and any raid",
        EntityKind::Guild => "its owner, reactor, entry substation and joining rules",
        EntityKind::Fleet => "its owner, where it is, whether it is on station, and its structs",
        EntityKind::Struct => {
            "its type, owner, where it stands, whether it is built and online, and its health"
        }
        _ => "its fields and what they mean for its owner",
    }
}

async fn brief(
    core: &Core,
    docs: &Snapshot,
    args: &Map<String, Value>,
) -> Result<Briefing, Refused> {
    let text = arg(args, "entity_id").unwrap_or_default();
    let id = EntityId::parse(text)
        .map_err(|e| Refused::invalid_params(format!("entity_id is not an id: {e}"), None))?;
    let v = call(
        core,
        "structs_query_entity",
        json!({"id": id.to_string(), "include_references": true}),
    )
    .await?;
    let kind = id.kind;
    let name = field(kind, &v["entity"], "name")
        .map(|u| format!(" ({u})"))
        .unwrap_or_default();
    let refs = v["references"].as_object().cloned().unwrap_or_default();
    let failed: Vec<String> = refs
        .values()
        .filter(|r| r["status"] != "success")
        .map(|r| {
            format!(
                "{} ({}: {})",
                r["id"].as_str().unwrap_or("?"),
                r["referenced_from"].as_str().unwrap_or("?"),
                r["error"].as_str().unwrap_or("not read")
            )
        })
        .collect();
    let mut instruction = format!(
        "Brief me on {} {id}{name}.\n\nSay what it is and who controls it, then its state now: {}. \
         Explain how it connects to the entities it references, and end with what needs \
         attention. Cite entity ids. The {} and the {} entities it references are attached; \
         read any other with structs_query_entity or its structs://entities/ resource.",
        kind.name(),
        brief_focus(kind),
        kind.name(),
        refs.len() - failed.len()
    );
    if !failed.is_empty() {
        instruction.push_str(&format!(
            "\n\nThese references could not be read: {}.",
            failed.join(", ")
        ));
    }
    let mut m = Messages::new(instruction);
    m.entity(&id.to_string(), &v["entity"]);
    for (n, (rid, r)) in refs
        .iter()
        .filter(|(_, r)| r["status"] == "success")
        .enumerate()
    {
        if n < EMBEDDED_REFERENCES {
            let mut body = r.as_object().cloned().unwrap_or_default();
            for k in REFERENCE_KEYS {
                body.remove(k);
            }
            m.entity(rid, &Value::Object(body));
        } else {
            m.link(
                Link::new(format!("{}{rid}", crate::entity::ENTITY_URI), rid.clone())
                    .with_mime_type("application/json"),
            );
        }
    }
    m.doc_link(docs, &format!("knowledge/entities/{}", kind.name()));
    Ok(m.done(format!("A briefing on {} {id}", kind.name())))
}

async fn plan_build(
    core: &Core,
    docs: &Snapshot,
    args: &Map<String, Value>,
) -> Result<Briefing, Refused> {
    let planet_id = id_arg(args, "planet_id", EntityKind::Planet)?;
    let st = crate::game::struct_type_arg(
        &Value::String(arg(args, "struct_type").unwrap_or_default().to_string()),
        "struct_type",
    )
    .map_err(|e| Refused::invalid_params(e.message.clone(), None))?;
    let planet = entity(core, planet_id).await?;
    let player_id = match arg(args, "player_id") {
        Some(_) => id_arg(args, "player_id", EntityKind::Player)?,
        None => {
            let owner = field(EntityKind::Planet, &planet, "owner").unwrap_or_default();
            EntityId::parse(&owner).map_err(|_| {
                Refused::invalid_params(
                    format!("planet {planet_id} has no owner; give player_id"),
                    None,
                )
            })?
        }
    };
    let player = entity(core, player_id).await?;
    let (location, place) = if st.is_fleet() {
        let fleet = field(EntityKind::Player, &player, "fleetId").unwrap_or_default();
        (
            json!({"type": "fleet", "id": fleet}),
            format!("in fleet {fleet} of player {player_id}"),
        )
    } else {
        (
            json!({"type": "planet", "id": planet_id.to_string()}),
            format!("on planet {planet_id}"),
        )
    };
    let req = call(
        core,
        "structs_decision_tree_get_build_requirements",
        json!({"struct_type": st.id, "location": location, "player_id": player_id.to_string()}),
    )
    .await?;
    let missing: Vec<String> = req["missing_requirements"]
        .as_array()
        .map(|a| a.iter().map(describe).collect())
        .unwrap_or_default();
    let verdict = if missing.is_empty() {
        "Every requirement is met now.".to_string()
    } else {
        format!("Not met now: {}.", missing.join("; "))
    };
    let instruction = format!(
        "Plan building {} {} (struct type {}, a {} struct) {place}, for player {player_id}.\n\n\
         The game's rules, evaluated now: {verdict}\n\n\
         Write a plan for structs_plan_execute: first whatever makes the missing requirements \
         hold (or say why they cannot now), then initiate the build (structs_action_build_struct), \
         compute its proof of work (structs_calculate_proof_of_work with action_type \
         struct_build_complete, taking the new struct's id from the build step with \
         ${{step[N].data…}}), and submit the completion. Check the plan with \
         structs_plan_validate before running it. The workflow build-mining-operation is a \
         worked example. The requirements, the planet and the player are attached.",
        crate::entity::struct_types::article(&st.name),
        st.name,
        st.id,
        st.category,
    );
    let mut m = Messages::new(instruction);
    m.text(requirement_words(&req));
    m.entity(&planet_id.to_string(), &planet);
    m.entity(&player_id.to_string(), &player);
    m.doc_search(docs, &format!("build {}", st.name), 2);
    Ok(m.done(format!("A plan to build {} {place}", st.name)))
}

/// `structs_decision_tree_get_build_requirements`' answer as a checklist a person
/// reads: each rule met or not in its own words, then the build's time in words.
fn requirement_words(req: &Value) -> String {
    let mut checks: Vec<&Value> = Vec::new();
    let r = &req["requirements"];
    for list in [
        &r["prerequisites"],
        &r["resources"]["checks"],
        &r["location"]["checks"],
    ] {
        checks.extend(list.as_array().into_iter().flatten());
    }
    let mut out = String::from("The build's requirements, checked now:");
    for c in checks {
        out.push_str(&format!(
            "\n- [{}] {}",
            if c["met"] == true { "x" } else { " " },
            describe(c)
        ));
    }
    let t = &req["estimated_build_time"];
    if let Some(secs) = t["total_seconds"]
        .as_f64()
        .or_else(|| t["seconds"].as_f64())
    {
        out.push_str(&format!(
            "\nTime: the build proof is almost free (difficulty {}) {} after the build starts",
            t["target_difficulty"],
            crate::text::duration_words(secs)
        ));
        if let Some(fast) = t["difficulty_8"]["seconds"].as_f64() {
            out.push_str(&format!(
                "; a fast machine can prove it at difficulty 8, {} after",
                crate::text::duration_words(fast)
            ));
        }
        out.push('.');
    }
    out.push_str(
        "\nstructs_decision_tree_get_build_requirements gives the same checks with their figures.",
    );
    out
}

/// A requirement as one line: its own words when it has them, else its JSON.
fn describe(v: &Value) -> String {
    for key in ["detail", "reason", "message", "requirement", "name"] {
        if let Some(s) = v[key].as_str() {
            return s.to_string();
        }
    }
    v.as_str().map_or_else(|| v.to_string(), str::to_string)
}

async fn pow(core: &Core, docs: &Snapshot, args: &Map<String, Value>) -> Result<Briefing, Refused> {
    let struct_id = id_arg(args, "struct_id", EntityKind::Struct)?;
    let body = entity(core, struct_id).await?;
    // Unless told, the work is the build while it is not built, else what its type
    // does (mining or refining).
    let built = crate::entity::records::StructStatus::of(&body["structAttributes"])
        .is_some_and(|s| s.has(crate::entity::records::StructStatus::BUILT));
    let kind = crate::json::chain_u64(&body, &["Struct", "type"])
        .and_then(|t| u8::try_from(t).ok())
        .and_then(crate::entity::struct_types::struct_type);
    let does = |key: &str| kind.is_some_and(|t| t.raw[key].as_u64().unwrap_or(0) > 0);
    let candidates: Vec<&str> = match arg(args, "action_type") {
        Some(a) => vec![a],
        None if !built => vec!["struct_build_complete"],
        None if does("oreMiningDifficulty") => vec!["ore_miner_complete"],
        None if does("oreRefiningDifficulty") => vec!["ore_refinery_complete"],
        None => {
            return Err(Refused::invalid_params(
                format!(
                    "struct {struct_id} is a built {}: it has no proof of work to do (builds, \
                     mining and refining have one)",
                    kind.map_or("struct", |t| t.name.as_str())
                ),
                None,
            ));
        }
    };
    let mut found = None;
    let mut last_error = None;
    for action in &candidates {
        match call(
            core,
            "structs_calculate_pow_schedule",
            json!({"action_type": action, "entity_id": struct_id.to_string()}),
        )
        .await
        {
            Ok(schedule) => {
                found = Some((*action, schedule));
                break;
            }
            Err(e) => last_error = Some(e),
        }
    }
    let Some((action, schedule)) = found else {
        let e = last_error.expect("one candidate at least");
        return Err(Refused::invalid_params(
            format!(
                "struct {struct_id} has no proof of work to do: {}",
                e.message
            ),
            e.data,
        ));
    };
    let instruction = format!(
        "Get the proof of work for struct {struct_id} done ({action}).\n\n{}\n\n\
         Wait until the difficulty is low enough to find the proof quickly, then call \
         structs_calculate_proof_of_work with action_type {action} and entity_id {struct_id} \
         (send a progress token to watch it; cancelling stops it), check the answer with \
         structs_validate_proof, and submit the completion with the nonce it found. Say how \
         long it will take and what it costs. structs_calculate_pow_schedule gives the \
         schedule's exact figures.",
        schedule_words(&schedule)
    );
    let mut m = Messages::new(instruction);
    m.entity(&struct_id.to_string(), &body);
    m.doc_search(docs, "proof of work difficulty", 2);
    Ok(m.done(format!("The proof of work of struct {struct_id}")))
}

/// The most rows of a proof's schedule a prompt shows.
const SCHEDULE_ROWS: usize = 6;

/// A proof-of-work schedule (`structs_calculate_pow_schedule`'s answer) as a person
/// reads it: the difficulty now, the coming drops with when each starts and how long a
/// proof then takes, and the best start, every time in words.
fn schedule_words(schedule: &Value) -> String {
    use crate::text::duration_words as words;
    let rate = schedule["hashrate"].as_f64().unwrap_or(0.0);
    let mut out = format!(
        "The work started at block {} and the chain is at block {}; this server hashes at \
         about {:.1} MH/s.",
        schedule["block_start"],
        schedule["current_block"],
        rate / 1e6
    );
    let steps = schedule["steps"].as_array().cloned().unwrap_or_default();
    for (i, step) in steps.iter().take(SCHEDULE_ROWS).enumerate() {
        let when = if i == 0 {
            "- now".to_string()
        } else {
            format!(
                "- from block {} (in {})",
                step["from_block"],
                words(step["starts_in_seconds"].as_f64().unwrap_or(0.0))
            )
        };
        out.push_str(&format!(
            "\n{when}: difficulty {}, a proof in {}",
            step["difficulty"],
            words(step["expected_seconds"].as_f64().unwrap_or(f64::INFINITY))
        ));
    }
    if steps.len() > SCHEDULE_ROWS {
        out.push_str(&format!(
            "\n- and {} lower steps after",
            steps.len() - SCHEDULE_ROWS
        ));
    }
    out.push_str(&format!(
        "\nBest start: block {}, for a proof {} from now.",
        schedule["recommended_start_block"],
        words(
            schedule["expected_seconds_to_proof"]
                .as_f64()
                .unwrap_or(f64::INFINITY)
        )
    ));
    out
}

/// Every `{"error": {code, message}}` in a value, with where it is.
fn errors_in(v: &Value, path: &str, out: &mut Vec<(String, Value)>) {
    if out.len() >= 20 {
        return;
    }
    match v {
        Value::Object(map) => {
            if let Some(e) = map.get("error")
                && e.get("code").is_some()
            {
                out.push((
                    if path.is_empty() {
                        "/".into()
                    } else {
                        path.to_string()
                    },
                    e.clone(),
                ));
                return;
            }
            for (k, child) in map {
                errors_in(child, &format!("{path}/{k}"), out);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                errors_in(child, &format!("{path}/{i}"), out);
            }
        }
        _ => {}
    }
}

async fn diagnose(
    core: &Core,
    docs: &Snapshot,
    args: &Map<String, Value>,
) -> Result<Briefing, Refused> {
    let mut tool = arg(args, "tool").map(str::to_string);
    let mut arguments = None;
    let (subject, answer) = match (arg(args, "handle"), arg(args, "answer")) {
        (Some(h), _) => {
            let page = call(core, "structs_handle_fetch", json!({"handle": h})).await?;
            if tool.is_none() {
                tool = page["metadata"]["tool_name"].as_str().map(str::to_string);
            }
            (format!("the result stored under handle {h}"), page)
        }
        (None, Some(text)) => {
            let v: Value = serde_json::from_str(text)
                .map_err(|e| Refused::invalid_params(format!("answer is not JSON: {e}"), None))?;
            // A response line of a session log carries the tool and the answer.
            let answer = if v["type"] == "response" {
                if tool.is_none() {
                    tool = v["tool"].as_str().map(str::to_string);
                }
                v.get("error")
                    .or(v.get("result"))
                    .cloned()
                    .unwrap_or(Value::Null)
            } else if v["type"] == "request" {
                return Err(Refused::invalid_params(
                    "answer is a request line of a session log; give its response line",
                    None,
                ));
            } else {
                v
            };
            if let Some(a) = answer.get("arguments") {
                arguments = Some(a.clone());
            }
            ("the answer given".to_string(), answer)
        }
        (None, None) => {
            return Err(Refused::invalid_params(
                "diagnose needs a handle or an answer",
                None,
            ));
        }
    };
    let found = errors_found(&answer);
    let about = match &tool {
        Some(t) => format!(" from {t}"),
        None => String::new(),
    };
    let instruction = format!(
        "Diagnose {subject}{about}.\n\n{found}\n\nFor each error say what went wrong, \
         whether trying again could succeed (and when), and give the corrected call or plan \
         step. The errors reference (attached) says what each code means and what its details \
         carry."
    );
    let mut m = Messages::new(instruction);
    m.text(format!(
        "The answer:\n```json\n{}\n```",
        shown_whole(&answer)
    ));
    if let Some(a) = arguments {
        m.text(format!("The arguments sent:\n```json\n{a}\n```"));
    }
    if let Some(t) = tool.as_deref()
        && let Some(spec) = core.tool_spec(t)
    {
        m.text(format!(
            "{t} takes these arguments (JSON Schema):\n```json\n{}\n```",
            spec.input_schema
        ));
    }
    if let Some(h) = arg(args, "handle") {
        m.link(
            Link::new(format!("{}{h}", crate::handles::HANDLE_URI), h.to_string())
                .with_mime_type("application/json"),
        );
    }
    m.doc_link(docs, "api/errors");
    Ok(m.done(format!("A diagnosis of {subject}")))
}

/// The error objects in an answer, listed with where each is, or a word on what to
/// look for when there are none.
fn errors_found(answer: &Value) -> String {
    let mut errors = Vec::new();
    errors_in(answer, "", &mut errors);
    if errors.is_empty() {
        return "No error object is in it; look for a status other than success, a step that \
                did not run, or a result that is not what was wanted."
            .to_string();
    }
    let lines: Vec<String> = errors
        .iter()
        .map(|(path, e)| {
            format!(
                "- at {path}: {} — {}",
                e["code"].as_str().unwrap_or("?"),
                e["message"].as_str().unwrap_or("")
            )
        })
        .collect();
    format!("The errors in it:\n{}", lines.join("\n"))
}

/// An answer as pretty JSON, cut at the response limit (on a character boundary).
fn shown_whole(answer: &Value) -> String {
    let mut shown = serde_json::to_string_pretty(answer).unwrap_or_default();
    if shown.len() > crate::error::RESPONSE_LIMIT {
        let mut cut = crate::error::RESPONSE_LIMIT;
        while !shown.is_char_boundary(cut) {
            cut -= 1;
        }
        shown.truncate(cut);
        shown.push_str("\n… (cut; fetch the rest by its handle)");
    }
    shown
}

/// The most moves the `next` prompt lists.
const NEXT_MOVES: usize = 6;

/// One move the decision trees recommend, with what it waits on.
struct Move {
    title: String,
    action: String,
    goals: Vec<String>,
    priority: u64,
    /// 0: can be done now; 1: its requirements are met but its proof is not cheap yet;
    /// 2: its requirements are unknown; 3: blocked.
    readiness: u8,
    /// Seconds until it can be done cheaply (a proof's difficulty falling).
    wait_secs: f64,
    note: String,
}

impl Move {
    fn of(goal: &str, a: &Value) -> Move {
        let proof = &a["proof"];
        // A proof whose difficulty never falls to the target here waits for ever.
        let wait_secs = match (proof.is_object(), proof["seconds_until_target"].as_f64()) {
            (false, _) => 0.0,
            (true, Some(secs)) => secs,
            (true, None) => f64::INFINITY,
        };
        let met = a["requirements_met"].as_bool();
        let readiness = match met {
            Some(true) if proof["started"] == false => 3,
            Some(true) if wait_secs > 0.0 => 1,
            Some(true) => 0,
            None => 2,
            Some(false) => 3,
        };
        let note = match readiness {
            0 => "ready now".to_string(),
            1 if wait_secs.is_infinite() => format!(
                "ready, but its proof is at difficulty {} now and never gets cheap at {} here",
                proof["difficulty_now"], proof["target_difficulty"]
            ),
            1 => format!(
                "ready, but its proof is at difficulty {} now and cheap at {} in {}",
                proof["difficulty_now"],
                proof["target_difficulty"],
                crate::text::duration_words(wait_secs)
            ),
            2 => "its requirements could not be checked".to_string(),
            _ => {
                let missing: Vec<String> = a["missing_requirements"]
                    .as_array()
                    .map(|m| m.iter().take(2).map(describe).collect())
                    .unwrap_or_default();
                if proof["started"] == false {
                    "blocked: its work has not started".to_string()
                } else if missing.is_empty() {
                    "blocked".to_string()
                } else {
                    format!("blocked: {}", missing.join("; "))
                }
            }
        };
        Move {
            title: a["title"].as_str().unwrap_or("?").to_string(),
            action: a["action"].as_str().unwrap_or("?").to_string(),
            goals: vec![goal.to_string()],
            priority: a["priority"].as_u64().unwrap_or(5),
            readiness,
            wait_secs,
            note,
        }
    }
}

async fn next(
    core: &Core,
    docs: &Snapshot,
    args: &Map<String, Value>,
) -> Result<Briefing, Refused> {
    let player_id = id_arg(args, "player_id", EntityKind::Player)?;
    let player = entity(core, player_id).await?;
    let goals: Vec<String> = match arg(args, "goal") {
        Some(g) => vec![g.to_string()],
        None => goal_names(core),
    };
    // The trees of every goal, their moves merged: one move recommended by several
    // goals is one line that names them all.
    let mut moves: Vec<Move> = Vec::new();
    let mut keys: Vec<String> = Vec::new();
    for goal in &goals {
        let answer = call(
            core,
            "structs_decision_tree_get_next_actions",
            json!({"goal": goal, "state": {"player_id": player_id.to_string()}}),
        )
        .await?;
        for a in answer["actions"].as_array().into_iter().flatten() {
            let key = format!("{}|{}", a["action"], a["parameters"]);
            match keys.iter().position(|k| *k == key) {
                Some(at) => moves[at].goals.push(goal.clone()),
                None => {
                    keys.push(key);
                    moves.push(Move::of(goal, a));
                }
            }
        }
    }
    // What can be done now first, then what waits (soonest first), then the unknown
    // and the blocked; the trees' priority after that.
    moves.sort_by(|a, b| {
        a.readiness
            .cmp(&b.readiness)
            .then(a.wait_secs.total_cmp(&b.wait_secs))
            .then(a.priority.cmp(&b.priority))
    });
    let shown: Vec<String> = moves
        .iter()
        .take(NEXT_MOVES)
        .enumerate()
        .map(|(i, m)| {
            format!(
                "{}. {} ({}; {}): {}",
                i + 1,
                m.title,
                m.action,
                m.goals.join(", "),
                m.note
            )
        })
        .collect();
    let more = moves.len().saturating_sub(NEXT_MOVES);
    let list = if shown.is_empty() {
        "The trees recommend nothing for these goals now.".to_string()
    } else {
        let mut list = shown.join("\n");
        if more > 0 {
            list.push_str(&format!("\n(and {more} more)"));
        }
        list
    };
    let goal_word = match goals.as_slice() {
        [one] => format!("the {one} goal"),
        _ => format!("{} goals", goals.len()),
    };
    let instruction = format!(
        "What should player {player_id} do next?\n\nThe decision trees, walked against the \
         game now for {goal_word}, rank these moves, what can be done now first:\n{list}\n\n\
         Choose one and say why, check it with structs_validate_action, then carry it out with \
         the tools. If it is blocked, do what unblocks it first. \
         structs_decision_tree_get_next_actions (goal, state.player_id) gives a goal's full \
         answer; the player is attached."
    );
    let mut m = Messages::new(instruction);
    m.link(
        Link::new(
            format!("{}{player_id}", crate::entity::ENTITY_URI),
            field(EntityKind::Player, &player, "name").unwrap_or_else(|| player_id.to_string()),
        )
        .with_mime_type("application/json"),
    );
    m.doc_search(docs, "strategy next move", 1);
    Ok(m.done(format!("The next moves for player {player_id}")))
}

/// The goals the decision tool knows, from its own input schema.
pub fn goal_names(core: &Core) -> Vec<String> {
    core.tool_spec("structs_decision_tree_get_next_actions")
        .and_then(|s| {
            s.input_schema["properties"]["goal"]["enum"]
                .as_array()
                .cloned()
        })
        .unwrap_or_default()
        .iter()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect()
}

/// `run-workflow`: the workflow named, with its inputs given as one JSON object and
/// checked as `structs_workflow_execute` checks them.
async fn run_workflow(
    core: &Core,
    docs: &Snapshot,
    args: &Map<String, Value>,
) -> Result<Briefing, Refused> {
    let name = arg(args, "workflow").unwrap_or_default();
    let catalog = crate::plan::workflow::catalog();
    let Some(wf) = catalog.get(name) else {
        let names: Vec<&str> = catalog.keys().map(String::as_str).collect();
        return Err(Refused::invalid_params(
            format!(
                "no workflow {}; the workflows are {}",
                crate::error::quote(name),
                names.join(", ")
            ),
            None,
        ));
    };
    let inputs = match arg(args, "inputs") {
        None => Map::new(),
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => map,
            Ok(_) | Err(_) => {
                return Err(Refused::invalid_params(
                    format!(
                        "inputs must be a JSON object, not {}",
                        crate::error::quote(text)
                    ),
                    None,
                ));
            }
        },
    };
    wf.plan_json(&inputs)
        .map_err(|e| Refused::invalid_params(format!("inputs: {}", e.message), None))?;
    workflow(core, docs, name, &inputs).await
}

async fn workflow(
    core: &Core,
    docs: &Snapshot,
    name: &str,
    args: &Map<String, Value>,
) -> Result<Briefing, Refused> {
    let wf = crate::plan::workflow::catalog()
        .get(name)
        .ok_or_else(|| Refused::internal_error(format!("workflow {name} is gone"), None))?;
    let steps: Vec<String> = wf.source["steps"]
        .as_array()
        .map(|steps| {
            steps
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    format!(
                        "{}. {} — {}{}",
                        i + 1,
                        s["id"].as_str().unwrap_or("?"),
                        s["tool"].as_str().unwrap_or("?"),
                        s["description"]
                            .as_str()
                            .map(|d| format!(": {d}"))
                            .unwrap_or_default()
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let inputs = Value::Object(args.clone());
    let instruction = format!(
        "Run the workflow {name}: {}\n\nIts steps:\n{}\n\nCall structs_workflow_execute with \
         {{\"workflow\": \"{name}\", \"inputs\": {inputs}}}, follow it with \
         structs_workflow_monitor until it ends, and report what each step did. If a step \
         fails, diagnose it (the diagnose prompt) before running it again.",
        wf.description,
        steps.join("\n")
    );
    let mut m = Messages::new(instruction);
    for (k, v) in args {
        if let Some(text) = v.as_str()
            && let Ok(id) = EntityId::parse(text)
        {
            let body = entity(core, id)
                .await
                .map_err(|e| Refused::invalid_params(format!("{k}: {}", e.message), e.data))?;
            m.entity(&id.to_string(), &body);
        }
    }
    m.doc_link(docs, "guides/plans-and-workflows");
    Ok(m.done(format!("The {name} workflow")))
}

async fn doc(
    core: &Core,
    docs: &Snapshot,
    id: &str,
    args: &Map<String, Value>,
) -> Result<Briefing, Refused> {
    let d = docs
        .doc(id)
        .ok_or_else(|| Refused::invalid_params(format!("the doc {id} is gone"), None))?;
    let whom = match arg(args, "player_id") {
        Some(_) => {
            let p = id_arg(args, "player_id", EntityKind::Player)?;
            Some((p, entity(core, p).await?))
        }
        None => None,
    };
    let instruction = format!(
        "Follow the {} \"{}\" (attached){}. Use the server's tools for every read and action it \
         describes, and say at each step what you found.",
        d.doc_type,
        d.title,
        whom.as_ref()
            .map(|(p, _)| format!(" for player {p}, whose state is attached"))
            .unwrap_or_default()
    );
    let mut m = Messages::new(instruction);
    m.out.push(Part::Embedded {
        uri: d.uri(),
        mime_type: "text/markdown",
        text: d.body.clone(),
    });
    if let Some((p, body)) = whom {
        m.entity(&p.to_string(), &body);
    }
    Ok(m.done(d.title.clone()))
}
