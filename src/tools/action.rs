//! Action tools: `structs_action_submit_transaction` (any of the chain's messages the
//! source applies) and the high-level `structs_action_build_struct`,
//! `structs_action_mine_resources` and `structs_action_attack`, which build the right
//! message for the agent, submit it, and say what to do next.
//!
//! Every action goes through [`GameSource::submit`](crate::source::GameSource::submit):
//! the sim checks every requirement and applies the transaction whole or not at all; a
//! refusal is `VALIDATION_REQUIREMENTS_NOT_MET` with `details.missing_requirements`.

use serde_json::{Value, json};

use super::calculate::{difficulty_milestones, struct_type_schema};
use super::{Env, Hints, Registry, ToolSpec, output};
use super::{chain_str, chain_u64, fetch, id_arg, id_schema, merge, opt_str, parse_id};
use crate::chain::{self, Msg, Signed, Signer, WeaponChoice};
use crate::entity::{EntityId, EntityKind};
use crate::error::{ErrorCode, ToolError};
use crate::game::struct_type_arg;
use crate::handles::Shaping;
use crate::pow;
use crate::references::Support;
use crate::source::TxOutcome;

fn nonce_schema() -> Value {
    json!({"type": ["string", "integer"], "maxLength": 40, "minimum": 0,
        "description": "The nonce whose hash meets the current difficulty (from structs_calculate_proof_of_work)."})
}

fn proof_schema() -> Value {
    json!({"type": "string", "maxLength": 64,
        "description": "The proof (hex SHA-256 of the input); computed from the nonce when omitted."})
}

/// Registers the action tools.
///
/// A declarative table: one registration a tool.
pub fn register(registry: &mut Registry) {
    registry.add(
        ToolSpec {
            name: "structs_action_submit_transaction",
            description: "Submit a transaction of the chain's messages (e.g. \
                /structs.structs.MsgStructBuildInitiate, MsgStructBuildComplete, \
                MsgStructActivate, MsgStructOreMinerComplete, MsgStructOreRefineryComplete, \
                MsgStructAttack, MsgStructDefenseSet, MsgFleetMove, MsgPlanetRaidComplete, \
                MsgPlanetExplore). On the embedded world it is applied at once, all messages \
                or none: returns transaction_hash, status, each message's result and the \
                events. A refused message names every requirement that is missing. \
                Or give tx_bytes, an already-signed transaction (base64 TxRaw): it is \
                broadcast to the source's node and the answer is its transaction_hash, \
                status (accepted or rejected), code, codespace, raw_log and the node's \
                tx_response. A live chain takes only signed transactions.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "transaction": {"type": "object",
                        "description": "{\"body\": {\"messages\": [{\"@type\": ..., \"creator\": ..., ...}]}} or {\"messages\": [...]}."},
                    "tx_bytes": {"type": "string", "minLength": 1,
                        "description": "A signed transaction, base64 (standard alphabet), broadcast as is (BROADCAST_MODE_SYNC). Instead of transaction."},
                    "sign": {"type": "boolean",
                        "description": "Ignored by the embedded world, which needs no signature."}
                },
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Standard,
            title: "Submit a transaction",
            hints: Hints::TRANSACT,
            output_schema: output::game::submit_transaction(),
        },
        submit_transaction,
    );
    registry.add(
        ToolSpec {
            name: "structs_action_build_struct",
            description: "Build a struct. Without struct_id: initiates the build \
                (MsgStructBuildInitiate) in the player's planet or fleet, picking a free slot \
                of an allowed ambit unless given; returns the new struct_id and when the build \
                proof gets cheap. With struct_id and nonce: completes the build \
                (MsgStructBuildComplete), which activates the struct when the power is there.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "player_id": id_schema("The building player (1-N)."),
                    "struct_type": struct_type_schema("The struct type: id 1-22 or name (initiate)."),
                    "location_type": {"type": "string", "enum": ["planet", "fleet"]},
                    "location_id": id_schema("The player's planet (2-N) or fleet (9-N); checked against the type."),
                    "operating_ambit": {"type": "string", "enum": ["water", "land", "air", "space"]},
                    "slot": {"type": "integer", "minimum": 0, "maximum": 3},
                    "struct_id": id_schema("A struct being built (5-N): complete it."),
                    "nonce": nonce_schema(),
                    "proof": proof_schema()
                },
                "required": ["player_id"],
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Standard,
            title: "Build a struct",
            hints: Hints::TRANSACT,
            output_schema: output::game::build_struct(),
        },
        build_struct,
    );
    registry.add(
        ToolSpec {
            name: "structs_action_mine_resources",
            description: "Mine ore with an Ore Extractor. An offline extractor is activated \
                (MsgStructActivate), which starts the mining cycle; an online one without a \
                nonce reports the cycle's current difficulty and what to compute; with a nonce \
                the cycle is completed (MsgStructOreMinerComplete): one ore moves from the \
                planet to the player and the next cycle starts.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "extractor_id": id_schema("The Ore Extractor (5-N)."),
                    "planet_id": id_schema("The planet it mines (2-N); checked when given."),
                    "player_id": id_schema("The owning player (1-N); checked when given."),
                    "nonce": nonce_schema(),
                    "proof": proof_schema()
                },
                "required": ["extractor_id"],
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Standard,
            title: "Mine ore",
            hints: Hints::TRANSACT,
            output_schema: output::game::mine_resources(),
        },
        mine_resources,
    );
    registry.add(
        ToolSpec {
            name: "structs_action_attack",
            description: "Attack a struct with a struct's primary or secondary weapon \
                (MsgStructAttack). The attack is resolved by the chain's rules (shots, evasion, \
                blocking, counter-attacks, recoil, planetary cannons), with rolls drawn from the \
                block height and the player's nonce; returns the damage, both healths after \
                and the full breakdown.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "attacker_id": id_schema("The attacking struct (5-N)."),
                    "target_id": id_schema("The target struct (5-N)."),
                    "weapon_type": {"type": "string", "enum": ["primary", "secondary"],
                        "description": "Which weapon fires (default primary)."},
                    "player_id": id_schema("The attacking player (1-N); checked when given.")
                },
                "required": ["attacker_id", "target_id"],
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Standard,
            title: "Attack a struct",
            hints: Hints::TRANSACT,
            output_schema: output::game::attack(),
        },
        attack,
    );
}

/// The answer for an applied transaction.
fn applied(out: &TxOutcome, status: &str, message: String) -> Value {
    json!({
        "transaction_hash": out.tx_hash,
        "status": status,
        "height": out.height,
        "message": message,
        "results": out.results,
        "events": out.events.iter().map(|e| json!({
            "seq": e.seq, "category": e.category, "entity": e.entity, "summary": e.summary,
        })).collect::<Vec<_>>(),
    })
}

async fn submit_transaction(env: Env, args: Value) -> Result<Value, ToolError> {
    match (args.get("transaction"), args.get("tx_bytes")) {
        (Some(_), Some(_)) => {
            return Err(ToolError::field(
                ErrorCode::ValidationError,
                "tx_bytes",
                "give either transaction (unsigned, applied by the sim) or tx_bytes (signed, broadcast), not both",
            ));
        }
        (None, None) => {
            return Err(ToolError::field(
                ErrorCode::ValidationMissingField,
                "transaction",
                "is required (or tx_bytes, a signed transaction in base64)",
            ));
        }
        (None, Some(bytes)) => return broadcast(&env, bytes.as_str().unwrap_or("")).await,
        (Some(_), None) => {}
    }
    let tx = args["transaction"].clone();
    let messages = chain::parse_transaction(&tx, "transaction")?;
    let count = messages.len();
    let out = env.source().submit(tx, messages).await?;
    let mut v = applied(
        &out,
        "success",
        format!(
            "{count} message{} applied at block {}",
            if count == 1 { "" } else { "s" },
            out.height
        ),
    );
    if args["sign"] == true {
        v["note"] = json!("the embedded world applies transactions without signatures");
    }
    Ok(v)
}

/// Broadcasts signed transaction bytes through the source and reports the node's
/// answer: accepted (code 0) or rejected with the node's code and log.
async fn broadcast(env: &Env, tx_bytes: &str) -> Result<Value, ToolError> {
    use base64::Engine as _;
    let trimmed = tx_bytes.trim();
    if trimmed.is_empty()
        || base64::engine::general_purpose::STANDARD
            .decode(trimmed)
            .is_err()
    {
        return Err(ToolError::field(
            ErrorCode::ValidationInvalidFormat,
            "tx_bytes",
            "is not base64 (standard alphabet, with padding)",
        ));
    }
    let r = env.source().broadcast(trimmed.to_string()).await?;
    let Some(code) = r.get("code").and_then(Value::as_u64) else {
        return Err(ToolError::new(
            ErrorCode::ApiError,
            format!("the node's answer to the broadcast has no result code: {r}"),
        ));
    };
    let accepted = code == 0;
    Ok(json!({
        "transaction_hash": r["txhash"],
        "status": if accepted { "accepted" } else { "rejected" },
        "code": code,
        "codespace": r["codespace"],
        "raw_log": r["raw_log"],
        "height": r["height"],
        "message": if accepted {
            "the node accepted the transaction (it passed CheckTx); its inclusion in a block shows at /cosmos/tx/v1beta1/txs/{transaction_hash}".to_string()
        } else {
            format!("the node rejected the transaction: {} code {code}: {}", r["codespace"].as_str().unwrap_or(""), r["raw_log"].as_str().unwrap_or(""))
        },
        "node_result": r,
    }))
}

/// That a `planet_id` given names where the struct `strct` is (`location`).
fn check_location(args: &Value, strct: EntityId, location: &str) -> Result<(), ToolError> {
    check_given(args, "planet_id", EntityKind::Planet, location, |p| {
        format!("wrong location: {strct} is on {location}, not {p}")
    })
}

/// The owner of the struct `strct` (its record `record`), after checking that a
/// `player_id` given names that owner.
fn checked_owner(args: &Value, strct: EntityId, record: &Value) -> Result<EntityId, ToolError> {
    let owner = chain_str(record, &["Struct", "owner"]).unwrap_or("");
    check_given(args, "player_id", EntityKind::Player, owner, |p| {
        format!("{strct} belongs to {owner}, not {p}")
    })?;
    EntityId::parse(owner)
        .map_err(|_| ToolError::new(ErrorCode::ApiError, format!("{strct} has no owner")))
}

/// That the id of `kind` in `field`, when given, is `expected`; `wrong` says why not.
fn check_given(
    args: &Value,
    field: &str,
    kind: EntityKind,
    expected: &str,
    wrong: impl FnOnce(EntityId) -> String,
) -> Result<(), ToolError> {
    if let Some(given) = opt_str(args, field) {
        let given = parse_id(given, field, Some(kind))?;
        if given.to_string() != expected {
            return Err(ToolError::field(
                ErrorCode::ValidationInvalidValue,
                field,
                wrong(given),
            ));
        }
    }
    Ok(())
}

/// The player's address, the `creator` of its messages.
async fn creator_of(env: &Env, player: EntityId, field: &str) -> Result<String, ToolError> {
    let p = fetch(env, player, field).await?;
    Ok(chain_str(&p, &["Player", "primaryAddress"])
        .unwrap_or("")
        .to_string())
}

/// Submits one message as `creator` and returns the outcome.
async fn send(env: &Env, msg: Msg, creator: String) -> Result<TxOutcome, ToolError> {
    let tx = json!({"body": {"messages": [chain::to_json(&msg, &creator)]}});
    let signed = Signed {
        msg,
        signer: Signer {
            creator: Some(creator),
            player: None,
        },
    };
    env.source().submit(tx, vec![signed]).await
}

fn nonce_arg(args: &Value) -> Option<String> {
    match &args["nonce"] {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The work's current difficulty and when it gets cheap.
fn work_schedule(range: u64, block_start: u64, height: u64) -> Value {
    let age = height.saturating_sub(block_start);
    let now = pow::difficulty(age, range);
    json!({
        "difficulty_range": range,
        "block_start": block_start,
        "age_blocks": age,
        "difficulty_now": now,
        "expected_hashes_now": pow::expected_hashes(now),
        "milestones": difficulty_milestones(range, Some(age)),
    })
}

/// `structs_action_build_struct` with a `struct_id`: completes that build with the
/// nonce of its proof.
async fn complete_build(
    env: &Env,
    args: &Value,
    text: &str,
    creator: String,
) -> Result<Value, ToolError> {
    let strct = parse_id(text, "struct_id", Some(EntityKind::Struct))?;
    let nonce = nonce_arg(args).ok_or_else(|| {
        ToolError::field(
            ErrorCode::ValidationMissingField,
            "nonce",
            "completing a build needs the nonce of its proof; compute it with \
             structs_calculate_proof_of_work (action_type struct_build_complete)",
        )
    })?;
    let msg = Msg::StructBuildComplete {
        strct: strct.index,
        nonce,
        proof: opt_str(args, "proof").map(str::to_string),
    };
    let out = send(env, msg, creator).await?;
    let result = &out.results[0];
    let online = result["online"] == true;
    let mut v = applied(
        &out,
        "completed",
        format!(
            "{strct} is built{}",
            if online {
                " and online"
            } else {
                ", not yet online"
            }
        ),
    );
    v["struct_id"] = json!(strct);
    v["online"] = json!(online);
    v["next_step"] = if online {
        json!("none: the struct is working")
    } else {
        json!({"description": result["note"], "tool": "structs_action_submit_transaction",
            "message": "MsgStructActivate once the player has the power"})
    };
    Ok(v)
}

async fn build_struct(env: Env, args: Value) -> Result<Value, ToolError> {
    let player = id_arg(&args, "player_id", Some(EntityKind::Player))?;
    let creator = creator_of(&env, player, "player_id").await?;
    if let Some(text) = opt_str(&args, "struct_id") {
        return complete_build(&env, &args, text, creator).await;
    }
    let Some(type_arg) = args.get("struct_type") else {
        return Err(ToolError::field(
            ErrorCode::ValidationMissingField,
            "struct_type",
            "initiating a build needs the struct type (or give struct_id and nonce to complete one)",
        ));
    };
    let t = struct_type_arg(type_arg, "struct_type")?;
    if let Some(lt) = opt_str(&args, "location_type")
        && lt != t.category
    {
        return Err(ToolError::field(
            ErrorCode::ValidationInvalidValue,
            "location_type",
            format!(
                "wrong location: {} {} (type {}) is built in a {}, not a {lt}",
                crate::entity::struct_types::article(&t.name),
                t.name,
                t.id,
                t.category
            ),
        ));
    }
    let location = opt_str(&args, "location_id")
        .map(|l| parse_id(l, "location_id", None))
        .transpose()?;
    let ambit = opt_str(&args, "operating_ambit").and_then(chain::parse_ambit);
    let slot = args["slot"].as_u64().map(|s| s as u8);
    let msg = Msg::StructBuildInitiate {
        player: player.index,
        struct_type: t.id,
        ambit,
        slot,
        location,
    };
    let out = send(&env, msg, creator).await?;
    let r = &out.results[0];
    let sid = r["struct_id"].as_str().unwrap_or_default().to_string();
    let schedule = work_schedule(t.build_difficulty, out.height, out.height);
    let mut v = applied(
        &out,
        "initiated",
        format!(
            "building {} {} as {sid} at {} ({} slot {})",
            crate::entity::struct_types::article(&t.name),
            t.name,
            r["location_id"].as_str().unwrap_or_default(),
            r["operating_ambit"].as_str().unwrap_or_default(),
            r["slot"]
        ),
    );
    v["struct_id"] = json!(sid);
    v["struct_type"] = json!({"id": t.id, "name": t.name});
    v["location_id"] = r["location_id"].clone();
    v["operating_ambit"] = r["operating_ambit"].clone();
    v["slot"] = r["slot"].clone();
    v["block_start_build"] = json!(out.height);
    v["next_step"] = json!({
        "step": "complete_build",
        "description": "compute the build proof once its difficulty has dropped, then call \
            structs_action_build_struct with struct_id and nonce",
        "tool": "structs_calculate_proof_of_work",
        "arguments": {"action_type": "struct_build_complete", "entity_id": sid},
    });
    v["estimated_completion"] = schedule;
    Ok(v)
}

async fn mine_resources(env: Env, args: Value) -> Result<Value, ToolError> {
    let ex = id_arg(&args, "extractor_id", Some(EntityKind::Struct))?;
    let e = fetch(&env, ex, "extractor_id").await?;
    let type_id = chain_u64(&e, &["Struct", "type"]).unwrap_or(0);
    let t = u8::try_from(type_id)
        .ok()
        .and_then(crate::entity::struct_types::struct_type)
        .ok_or_else(|| {
            ToolError::new(
                ErrorCode::ApiError,
                format!("{ex} has an unknown struct type {type_id}"),
            )
        })?;
    let range = t.raw["oreMiningDifficulty"].as_u64().unwrap_or(0);
    if range == 0 {
        return Err(ToolError::field(
            ErrorCode::ValidationInvalidValue,
            "extractor_id",
            format!(
                "{ex} is {} {} (type {}), not an Ore Extractor (type 14)",
                crate::entity::struct_types::article(&t.name),
                t.name,
                t.id
            ),
        ));
    }
    let owner = checked_owner(&args, ex, &e)?;
    let location = chain_str(&e, &["Struct", "locationId"])
        .unwrap_or("")
        .to_string();
    check_location(&args, ex, &location)?;
    let creator = creator_of(&env, owner, "extractor_id").await?;
    let planet = fetch(
        &env,
        EntityId::parse(&location)
            .map_err(|_| ToolError::new(ErrorCode::ApiError, format!("{ex} has no location")))?,
        "extractor_id",
    )
    .await?;
    let planet_ore = chain_u64(&planet, &["gridAttributes", "ore"]).unwrap_or(0);
    let online = crate::entity::records::StructStatus::of(&e["structAttributes"])
        .is_some_and(crate::entity::records::StructStatus::is_working);
    let start = chain_u64(&e, &["structAttributes", "blockStartOreMine"]).unwrap_or(0);
    let height = env.status().block_height;
    let base = json!({
        "extractor_id": ex, "planet_id": location, "player_id": owner,
        "mining_rate": 1.0, "mining_rate_unit": "ore per completed cycle",
        "estimated_yield": planet_ore.min(1),
        "planet_ore_remaining": planet_ore,
    });
    if !online {
        return start_mining(&env, ex, creator, base, range).await;
    }
    let Some(nonce) = nonce_arg(&args) else {
        let mut v = base;
        merge(
            &mut v,
            json!({
                "transaction_hash": null,
                "status": "mining",
                "message": format!("{ex} has been mining since block {start}; submit a nonce to complete the cycle"),
                "next_step": {"step": "complete_mining",
                    "tool": "structs_calculate_proof_of_work",
                    "arguments": {"action_type": "ore_miner_complete", "entity_id": ex}},
                "estimated_completion": work_schedule(range, start, height),
            }),
        );
        return Ok(v);
    };
    let msg = Msg::StructOreMinerComplete {
        strct: ex.index,
        nonce,
        proof: opt_str(&args, "proof").map(str::to_string),
    };
    let out = send(&env, msg, creator).await?;
    let r = out.results[0].clone();
    let mut v = applied(
        &out,
        "completed",
        format!(
            "{ex} mined 1 ore ({} left on {location}); the next cycle started",
            r["planet_ore_left"]
        ),
    );
    merge(&mut v, base);
    merge(
        &mut v,
        json!({
            "ore_mined": r["ore_mined"], "planet_ore_remaining": r["planet_ore_left"],
            "player_stored_ore": r["player_stored_ore"],
            "next_step": {"step": "refine",
                "description": "refine stored ore into alpha matter with an Ore Refinery (MsgStructOreRefineryComplete), before a raid takes it"},
        }),
    );
    Ok(v)
}

/// An extractor that is not online is brought online, which starts its mining cycle;
/// the answer says when its proof gets cheap.
async fn start_mining(
    env: &Env,
    ex: EntityId,
    creator: String,
    base: Value,
    range: u64,
) -> Result<Value, ToolError> {
    let out = send(env, Msg::StructActivate { strct: ex.index }, creator).await?;
    let mut v = applied(
        &out,
        "initiated",
        format!(
            "{ex} is online: its mining cycle started at block {}",
            out.height
        ),
    );
    merge(&mut v, base);
    merge(
        &mut v,
        json!({
            "next_step": {"step": "complete_mining",
                "description": "compute the mining proof once its difficulty has dropped, then call structs_action_mine_resources with the nonce",
                "tool": "structs_calculate_proof_of_work",
                "arguments": {"action_type": "ore_miner_complete", "entity_id": ex}},
            "estimated_completion": work_schedule(range, out.height, out.height),
        }),
    );
    Ok(v)
}

async fn attack(env: Env, args: Value) -> Result<Value, ToolError> {
    let attacker = id_arg(&args, "attacker_id", Some(EntityKind::Struct))?;
    let target = id_arg(&args, "target_id", Some(EntityKind::Struct))?;
    let weapon = opt_str(&args, "weapon_type")
        .and_then(WeaponChoice::parse)
        .unwrap_or(WeaponChoice::Primary);
    let a = fetch(&env, attacker, "attacker_id").await?;
    let owner = checked_owner(&args, attacker, &a)?;
    let creator = creator_of(&env, owner, "attacker_id").await?;
    let msg = Msg::StructAttack {
        strct: attacker.index,
        targets: vec![target.index],
        weapon,
    };
    let out = send(&env, msg, creator).await?;
    let r = out.results[0].clone();
    let mut v = applied(
        &out,
        "completed",
        format!(
            "{attacker} dealt {} damage to {target} ({} health left){}",
            r["damage_to_target"],
            r["target_health_after"],
            if r["target_destroyed"] == true {
                ", destroying it"
            } else {
                ""
            }
        ),
    );
    for k in [
        "estimated_damage",
        "damage_to_target",
        "damage_to_attacker",
        "target_health_after",
        "target_destroyed",
        "attacker_health_after",
        "attacker_destroyed",
        "breakdown",
    ] {
        v[k] = r[k].clone();
    }
    v["weapon_type"] = json!(weapon.name());
    Ok(v)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_given_owner_or_planet_must_be_the_structs() {
        let strct = EntityId::parse("5-1").unwrap();
        let record = json!({"Struct": {"owner": "1-1"}});
        let owner = checked_owner(&json!({}), strct, &record).unwrap();
        assert_eq!(owner.to_string(), "1-1");
        assert!(checked_owner(&json!({"player_id": "1-1"}), strct, &record).is_ok());

        let e = checked_owner(&json!({"player_id": "1-2"}), strct, &record).unwrap_err();
        assert_eq!(e.code, ErrorCode::ValidationInvalidValue);
        assert_eq!(e.field.as_deref(), Some("player_id"));
        assert_eq!(e.reason.as_deref(), Some("5-1 belongs to 1-1, not 1-2"));
        let e = checked_owner(&json!({"player_id": "2-1"}), strct, &record).unwrap_err();
        assert_eq!(
            e.field.as_deref(),
            Some("player_id"),
            "not a player id: {e:?}"
        );

        assert!(check_location(&json!({"planet_id": "2-3"}), strct, "2-3").is_ok());
        let e = check_location(&json!({"planet_id": "2-4"}), strct, "2-3").unwrap_err();
        assert_eq!(e.field.as_deref(), Some("planet_id"));
        assert_eq!(
            e.reason.as_deref(),
            Some("wrong location: 5-1 is on 2-3, not 2-4")
        );
    }
}
