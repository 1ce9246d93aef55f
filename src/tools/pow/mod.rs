//! Proof-of-work tools: `structs_calculate_proof_of_work` (the search),
//! `structs_validate_proof` (the chain's check) and `structs_calculate_pow_schedule`
//! (when to start). The work's start block and difficulty range come from the entity
//! and its struct type (or planet) unless given.

use std::sync::OnceLock;
use std::time::Duration;

use serde_json::{Value, json};
use tracing::Instrument as _;
use tracing::field::Empty;

use super::{Env, Hints, Registry, ToolSpec, output};
use super::{merge, opt_str};
use crate::context::log::{Level, log};
use crate::context::{CallContext, ProgressUpdate, trace};
use crate::error::{ErrorCode, ToolError};
use crate::handles::Shaping;
use crate::json::whole_number;
use crate::pow::search::{Hit, Outcome, Progress, Search, SearchSpec};
use crate::pow::{self, Action, Kernel, Work, schedule};
use crate::references::Support;
use work::{Purpose, Resolved, action_arg, invalid, resolve, u64_arg};

mod work;

/// The logger name of the proof-of-work search's messages.
const POW_LOGGER: &str = "structs.pow";

/// Iterations tried when the caller does not say.
pub const DEFAULT_MAX_ITERATIONS: u64 = 1_000_000;
/// How often a running search reports progress (5 times a second).
pub const PROGRESS_EVERY: Duration = Duration::from_millis(200);

fn work_properties() -> Value {
    json!({
        "action_type": {
            "type": "string",
            "enum": ["struct_build_complete", "ore_miner_complete", "ore_refinery_complete", "planet_raid_complete"],
            "description": "Which work the proof completes."
        },
        "entity_id": {"type": "string", "maxLength": 64,
            "description": "The struct id (5-N); for planet_raid_complete the raiding fleet id (9-N)."},
        "planet_id": {"type": "string", "maxLength": 64,
            "description": "The raided planet (2-N); planet_raid_complete only."},
        "block_start": {"type": "integer", "minimum": 0,
            "description": "The block the work started at; read from the entity when omitted \
                (blockStartBuild, blockStartOreMine, blockStartOreRefine, the planet's blockStartRaid)."},
        "age": {"type": "integer", "minimum": 0,
            "description": "Blocks since block_start; computed from current_block when omitted."},
        "current_block": {"type": "integer", "minimum": 0,
            "description": "The block to compute the difficulty at; the source's height when omitted."},
        "difficulty": {"type": "integer", "minimum": 0,
            "description": "The difficulty range (the struct type's buildDifficulty, oreMiningDifficulty \
                or oreRefiningDifficulty, or the planet's planetaryShield); looked up when omitted."}
    })
}

/// Registers the proof-of-work tools.
///
/// A declarative table: one registration a tool.
pub fn register(registry: &mut Registry) {
    let mut calc = work_properties();
    let props = calc.as_object_mut().expect("object");
    props.insert(
        "max_iterations".into(),
        json!({"type": "integer", "minimum": 1, "maximum": 1_000_000_000_000u64,
            "description": "Nonces to try before giving up (default 1,000,000)."}),
    );
    props.insert(
        "threads".into(),
        json!({"type": "integer", "minimum": 1, "maximum": 256,
            "description": "Threads to hash on (default: every core). The server hashes on one \
                pool of threads, one per core, shared in turn by every search, so a larger \
                number is lowered to the cores; the answer's threads says how many were used."}),
    );
    props.insert(
        "wait_for_difficulty".into(),
        json!({"type": "integer", "minimum": 1, "maximum": 64,
            "description": "Wait (reporting progress, cancellable) until the work's required difficulty \
                has fallen to this many leading zeros before hashing; e.g. 8 starts when a proof takes \
                seconds. Without it the search starts at once."}),
    );
    props.insert(
        "start_nonce".into(),
        json!({"type": "integer", "minimum": 0,
            "description": "The first nonce (default 0); continue an exhausted search from its next_start_nonce."}),
    );
    registry.add(
        ToolSpec {
            name: "structs_calculate_proof_of_work",
            description: "Find the proof-of-work that completes a build, mining, refining or raid, \
                exactly as the chain checks it (SHA-256 of {struct}BUILD{start}NONCE{nonce} and \
                the like, with the required leading hex zeros for the work's age). Runs on every \
                core; the difficulty falls as blocks pass while it runs. Returns hash, nonce, \
                input, iterations, valid, difficulty_met, difficulty, achieved_difficulty, \
                computation_time_ms and hashrate. Running out of max_iterations is TOOL_TIMEOUT \
                with the best result and an estimate of what is left. Sends progress when the \
                call carries a progress token; cancelling the call stops the search.",
            input_schema: json!({
                "type": "object",
                "properties": calc,
                "required": ["action_type", "entity_id"],
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Own,
            title: "Compute a proof-of-work",
            hints: Hints::READ,
            output_schema: output::compute::proof_of_work(),
        },
        calculate_proof_of_work,
    );
    registry.long_running("structs_calculate_proof_of_work");

    let mut validate = work_properties();
    let props = validate.as_object_mut().expect("object");
    props.insert(
        "input".into(),
        json!({"type": "string", "maxLength": 512,
            "description": "The whole hashed input, e.g. 5-42BUILD1280144NONCE7; or give action_type, entity_id and nonce."}),
    );
    props.insert(
        "nonce".into(),
        json!({"type": ["integer", "string"], "description": "The nonce, when input is not given."}),
    );
    props.insert(
        "proof".into(),
        json!({"type": "string", "maxLength": 128, "description": "The hash submitted as proof (64 lowercase hex digits)."}),
    );
    props.insert(
        "required_difficulty".into(),
        json!({"type": "integer", "minimum": 0, "maximum": 64,
            "description": "Leading hex zeros required; computed from the work's age and difficulty range when omitted."}),
    );
    registry.add(
        ToolSpec {
            name: "structs_validate_proof",
            description: "Check a proof-of-work exactly as the chain does: the proof must be the \
                lowercase hex SHA-256 of the input and start with the required number of hex \
                zeros. Give the input (or action_type, entity_id and nonce) and the proof; the \
                required difficulty is computed from the work's age unless given. Reports \
                valid, the expected hash, and required and achieved difficulty.",
            input_schema: json!({
                "type": "object",
                "properties": validate,
                "required": ["proof"],
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Own,
            title: "Check a proof-of-work",
            hints: Hints::READ,
            output_schema: output::compute::validate_proof(),
        },
        validate_proof,
    );

    let mut plan = work_properties();
    let props = plan.as_object_mut().expect("object");
    props.insert(
        "hashrate".into(),
        json!({"type": "number", "exclusiveMinimum": 0,
            "description": "Hashes per second to plan with (default: measured on this server, every core)."}),
    );
    registry.add(
        ToolSpec {
            name: "structs_calculate_pow_schedule",
            description: "Plan a proof-of-work: for each coming block the required difficulty and \
                the expected time to find a proof (16^difficulty / hashrate), the block the web \
                client would start at (difficulty 10 or less) and the block to start at for \
                the soonest expected proof. Give action_type and entity_id (the rest is looked \
                up), or difficulty and block_start.",
            input_schema: json!({
                "type": "object",
                "properties": plan,
                "additionalProperties": false
            }),
            references: Support::None,
            shaping: Shaping::Own,
            title: "Plan a proof-of-work",
            hints: Hints::READ,
            output_schema: output::compute::pow_schedule(),
        },
        pow_schedule,
    );
}
/// Every thread of the hashing pool: one per core.
fn default_threads() -> usize {
    crate::pow::backend::global().size()
}

/// The progress report of a running search.
fn update(p: &Progress, max: u64, current_block: u64) -> ProgressUpdate {
    let best = p.best.as_ref();
    ProgressUpdate {
        progress: p.iterations as f64,
        total: Some(max as f64),
        message: format!(
            "{} of {} iterations, {:.2} MH/s, best {} of {} leading zeros",
            p.iterations,
            max,
            p.hashrate / 1e6,
            best.map_or(0, |b| b.achieved),
            p.required
        ),
        data: json!({
            "iterations": p.iterations,
            "max_iterations": max,
            "hashrate": p.hashrate.round(),
            "elapsed_ms": p.elapsed.as_millis() as u64,
            "best_achieved_difficulty": best.map_or(0, |b| b.achieved),
            "best_nonce": best.map(|b| b.nonce),
            "best_hash": best.map(|b| b.hash.clone()),
            "required_difficulty": p.required,
            "current_block": current_block,
            "threads": p.threads,
            "kernel": structs_pow::backend::kernel_name(p.kernel),
            // Why the search hashes where it does, when a person should know (auto
            // left the GPU, or the GPU is a CPU emulation).
            "engine_note": structs_pow::backend::note(),
        }),
    }
}

/// Waits until the work's required difficulty is at most `wanted`, following the
/// source's block height; reports progress while it waits.
async fn wait_for_difficulty(
    env: &Env,
    ctx: &CallContext,
    r: &mut Resolved,
    wanted: u32,
) -> Result<(), ToolError> {
    if r.age_fixed {
        return Ok(());
    }
    let ready_age = crate::game::difficulty::first_age_at_most(wanted, r.range);
    let Some(ready_age) = ready_age else {
        return Err(invalid(
            "wait_for_difficulty",
            format!("the difficulty of this work never falls to {wanted}"),
        ));
    };
    let ready_block = r.work.block_start.saturating_add(ready_age);
    loop {
        let height = env.status().block_height.max(r.current_block);
        r.current_block = height;
        r.age = height.saturating_sub(r.work.block_start);
        let now = pow::difficulty(r.age, r.range);
        if now <= wanted {
            return Ok(());
        }
        ctx.report(ProgressUpdate {
            progress: 0.0,
            total: None,
            message: format!(
                "waiting for block {ready_block} (difficulty {now} now at block {height}, \
                 hashing starts at {wanted} or less)"
            ),
            data: json!({
                "waiting": true,
                "current_block": height,
                "required_difficulty": now,
                "start_difficulty": wanted,
                "start_block": ready_block,
                "blocks_to_wait": ready_block.saturating_sub(height),
            }),
        });
        tokio::select! {
            _ = ctx.cancelled() => {
                return Err(ToolError::new(
                    ErrorCode::ToolCancelled,
                    format!("cancelled while waiting for block {ready_block}"),
                ));
            }
            _ = tokio::time::sleep(PROGRESS_EVERY) => {}
        }
    }
}

async fn calculate_proof_of_work(env: Env, args: Value) -> Result<Value, ToolError> {
    let ctx = CallContext::current();
    // Held until the call ends, waiting for the difficulty included.
    let _slot = env
        .client_work(&ctx)
        .start(crate::context::Work::ProofOfWork)?;
    let action = action_arg(&args)?.ok_or_else(|| {
        ToolError::field(
            ErrorCode::ValidationMissingField,
            "action_type",
            "is required",
        )
    })?;
    let r = resolve(&env, &args, action, Purpose::Find).await?;
    let max = u64_arg(&args, "max_iterations").unwrap_or(DEFAULT_MAX_ITERATIONS);
    let threads = u64_arg(&args, "threads").map_or_else(default_threads, |t| t as usize);
    let start_nonce = u64_arg(&args, "start_nonce").unwrap_or(0);
    let mut r = r;
    if let Some(wait) = u64_arg(&args, "wait_for_difficulty") {
        wait_for_difficulty(&env, &ctx, &mut r, wait as u32).await?;
    }
    let required = pow::difficulty(r.age, r.range);
    let span = tracing::info_span!(
        target: trace::TARGET, "pow search",
        structs.pow.action = r.work.action.name(), structs.entity.id = %r.work.entity_id,
        structs.pow.difficulty = i64::from(required),
        structs.pow.max_iterations = max as i64,
        structs.pow.backend = Empty, structs.pow.threads = Empty, structs.pow.hashes = Empty,
        structs.pow.hash_rate = Empty, structs.pow.outcome = Empty
    );
    let (current_block, outcome, progress) = async {
        let search = start_search(&r, required, start_nonce, max, threads).await?;
        let current_block = follow(&env, &ctx, &search, &r, required, max).await;
        let (outcome, progress) = search.wait();
        Ok::<_, ToolError>((current_block, outcome, progress))
    }
    .instrument(span.clone())
    .await?;
    trace_search(&span, &outcome, &progress);
    if ctx.wants_progress() {
        ctx.report(update(&progress, max, current_block));
    }
    let common = work_json(&r, current_block, &progress);
    log_outcome(&r, &outcome, &progress);
    match outcome {
        Outcome::Found(hit) => Ok(found_json(&hit, &progress, common)),
        Outcome::Cancelled => Err(ToolError::new(
            ErrorCode::ToolCancelled,
            format!(
                "the proof-of-work search was cancelled after {} iterations",
                progress.iterations
            ),
        )
        .with_extra("best", best_json(&progress))
        .with_extra("next_start_nonce", json!(start_nonce + progress.iterations))),
        Outcome::Exhausted => Err(exhausted(&r, &progress, current_block, start_nonce, common)),
    }
}

/// Puts how the search went on its span, and its rate in `structs.pow.hash_rate`.
fn trace_search(span: &tracing::Span, outcome: &Outcome, progress: &Progress) {
    if span.is_disabled() {
        return;
    }
    span.record(
        "structs.pow.backend",
        structs_pow::backend::kernel_name(progress.kernel),
    );
    span.record("structs.pow.threads", progress.threads as i64);
    span.record("structs.pow.hashes", progress.iterations as i64);
    span.record("structs.pow.hash_rate", progress.hashrate.round());
    span.record(
        "structs.pow.outcome",
        match outcome {
            Outcome::Found(_) => "found",
            Outcome::Cancelled => "cancelled",
            Outcome::Exhausted => "exhausted",
        },
    );
    if let Some(i) = trace::instruments() {
        let kernel = structs_pow::backend::kernel_name(progress.kernel);
        i.pow_hash_rate.record(
            progress.hashrate,
            &[opentelemetry::KeyValue::new("structs.pow.backend", kernel)],
        );
    }
}

/// Starts the search for `r`'s proof on the fastest kernel, and logs it.
async fn start_search(
    r: &Resolved,
    required: u32,
    start_nonce: u64,
    max: u64,
    threads: usize,
) -> Result<Search, ToolError> {
    // The first call times the kernels (a few milliseconds of hashing): off the
    // runtime's workers.
    let kernel = tokio::task::spawn_blocking(Kernel::best)
        .await
        .unwrap_or(Kernel::Scalar);
    let search = Search::start(SearchSpec {
        prefix: r.work.prefix(),
        required,
        start: start_nonce,
        max_iterations: max,
        threads,
        kernel,
    })
    .map_err(|e| {
        ToolError::new(
            ErrorCode::ResourceUnavailable,
            format!("{e}; try again when the server has room for a thread"),
        )
    })?;
    // What it asked for, within the hashing pool's threads.
    let threads = search.progress().threads;
    let action = r.work.action;
    log(
        Level::Info,
        POW_LOGGER,
        json!({"message": format!(
            "searching for the {} proof of {}: difficulty {required}, {threads} threads, at most {max} nonces",
            action.name(), r.work.entity_id),
            "entity_id": r.work.entity_id, "action_type": action.name(),
            "difficulty": required, "threads": threads, "max_iterations": max}),
    );
    Ok(search)
}

/// Follows the search until it finishes: cancels it when the call is cancelled, lowers
/// its required difficulty as blocks pass, logs milestones and reports progress.
/// Returns the block the search ended at.
async fn follow(
    env: &Env,
    ctx: &CallContext,
    search: &Search,
    r: &Resolved,
    required: u32,
    max: u64,
) -> u64 {
    let mut current_block = r.current_block;
    // Milestones: each tenfold of nonces tried from a million, and each fall of the
    // required difficulty.
    let mut next_milestone = 1_000_000u64;
    let mut required_now = required;
    loop {
        if ctx.is_cancelled() {
            search.cancel();
        }
        tokio::select! {
            _ = search.finished() => break,
            _ = ctx.cancelled(), if !ctx.is_cancelled() => continue,
            _ = tokio::time::sleep(PROGRESS_EVERY) => {}
        }
        if !r.age_fixed {
            // The chain checks against the block the proof lands in: as blocks pass,
            // the difficulty falls and the best result so far may already do.
            current_block = env.status().block_height.max(current_block);
            let age = current_block.saturating_sub(r.work.block_start);
            let now = pow::difficulty(age, r.range);
            search.set_required(now);
            if now < required_now {
                required_now = now;
                log(
                    Level::Info,
                    POW_LOGGER,
                    json!({"message": format!("block {current_block}: the difficulty fell to {now}"),
                        "entity_id": r.work.entity_id, "block": current_block, "difficulty": now}),
                );
            }
        }
        let p = search.progress();
        if p.iterations >= next_milestone {
            while next_milestone <= p.iterations {
                next_milestone = next_milestone.saturating_mul(10);
            }
            log(
                Level::Info,
                POW_LOGGER,
                json!({"message": format!(
                    "{} nonces tried at {:.2} MH/s; the best hash has {} leading zeros of {}",
                    p.iterations, p.hashrate / 1e6,
                    p.best.as_ref().map_or(0, |b| b.achieved), p.required),
                    "entity_id": r.work.entity_id, "iterations": p.iterations,
                    "hashrate": p.hashrate.round()}),
            );
        }
        ctx.report(update(&p, max, current_block));
        // A progress event on the search's span.
        if trace::on() {
            use opentelemetry::KeyValue;
            use tracing_opentelemetry::OpenTelemetrySpanExt as _;
            let best = p.best.as_ref().map_or(0, |b| b.achieved);
            tracing::Span::current().add_event(
                "progress",
                vec![
                    KeyValue::new("structs.pow.hashes", p.iterations as i64),
                    KeyValue::new("structs.pow.hash_rate", p.hashrate.round()),
                    KeyValue::new("structs.pow.difficulty", i64::from(p.required)),
                    KeyValue::new("structs.pow.best", i64::from(best)),
                ],
            );
        }
    }
    current_block
}

/// The work searched and how the search went, for the answer whatever the outcome.
fn work_json(r: &Resolved, current_block: u64, progress: &Progress) -> Value {
    let age = if r.age_fixed {
        r.age
    } else {
        current_block.saturating_sub(r.work.block_start)
    };
    json!({
        "action_type": r.work.action.name(),
        "entity_id": r.work.entity_id,
        "planet_id": r.work.planet_id,
        "block_start": r.work.block_start,
        "current_block": current_block,
        "age": age,
        "difficulty_range": r.range,
        "difficulty_range_source": r.range_source,
        "iterations": progress.iterations,
        "computation_time_ms": progress.elapsed.as_millis() as u64,
        "hashrate": progress.hashrate.round(),
        "threads": progress.threads,
        "kernel": structs_pow::backend::kernel_name(progress.kernel),
    })
}

/// Logs how the search ended.
fn log_outcome(r: &Resolved, outcome: &Outcome, progress: &Progress) {
    let (level, said) = match outcome {
        Outcome::Found(hit) => (Level::Info, format!("found nonce {}", hit.nonce)),
        Outcome::Cancelled => (Level::Notice, "cancelled".to_string()),
        Outcome::Exhausted => (Level::Warning, "gave up without a proof".to_string()),
    };
    log(
        level,
        POW_LOGGER,
        json!({"message": format!(
            "proof-of-work search of {}: {said} after {} nonces in {} ms",
            r.work.entity_id, progress.iterations, progress.elapsed.as_millis()),
            "entity_id": r.work.entity_id, "iterations": progress.iterations,
            "computation_time_ms": progress.elapsed.as_millis() as u64}),
    );
}

/// The answer for a proof found: it, as the chain checks it, with the work.
fn found_json(hit: &Hit, progress: &Progress, common: Value) -> Value {
    let check = pow::check(&hit.input, &hit.hash, progress.required);
    let mut out = json!({
        "hash": hit.hash,
        "nonce": hit.nonce,
        "input": hit.input,
        "valid": check.valid(),
        "difficulty_met": check.difficulty_met,
        "difficulty": progress.required,
        "achieved_difficulty": check.achieved,
    });
    merge(&mut out, common);
    out
}

/// The error for a search that gave up: the best it found, and when a proof can be
/// expected at this rate or from a later start.
fn exhausted(
    r: &Resolved,
    progress: &Progress,
    current_block: u64,
    start_nonce: u64,
    common: Value,
) -> ToolError {
    let expected = pow::expected_hashes(progress.required);
    let rate = progress.hashrate.max(1.0);
    let plan = schedule::plan(r.range, r.work.block_start, current_block, rate);
    let best = progress.best.as_ref().map_or(0, |b| b.achieved);
    ToolError::new(
        ErrorCode::ToolTimeout,
        format!(
            "no proof in {} iterations: the best hash has {best} leading zeros, {} are required; \
             at {:.2} MH/s the rest of the search takes {}, or start at block {} for a proof in {}",
            progress.iterations,
            progress.required,
            rate / 1e6,
            crate::text::duration_words(expected / rate),
            plan.recommended_start_block,
            crate::text::duration_words(plan.expected_seconds_to_proof),
        ),
    )
    .with_extra("best", best_json(progress))
    .with_extra("difficulty", json!(progress.required))
    .with_extra("work", common)
    .with_extra(
        "estimate",
        json!({
            "expected_hashes": expected,
            "expected_seconds": expected / rate,
            "next_start_nonce": start_nonce + progress.iterations,
            "recommended_start_block": plan.recommended_start_block,
            "web_client_start_block": plan.web_client_start_block,
            "expected_seconds_from_recommended_start": plan.expected_seconds_to_proof,
        }),
    )
}

fn best_json(p: &Progress) -> Value {
    match &p.best {
        Some(b) => json!({
            "nonce": b.nonce, "hash": b.hash, "input": b.input, "achieved_difficulty": b.achieved,
        }),
        None => Value::Null,
    }
}

/// Splits a proof input back into its work and nonce.
fn parse_input(input: &str) -> Option<(Work, u64)> {
    let (prefix, nonce) = input.rsplit_once("NONCE")?;
    let nonce: u64 = nonce.parse().ok()?;
    for action in Action::ALL {
        let Some(at) = prefix.rfind(action.keyword()) else {
            continue;
        };
        let (who, start) = (&prefix[..at], &prefix[at + action.keyword().len()..]);
        let Ok(block_start) = start.parse::<u64>() else {
            continue;
        };
        let (entity_id, planet_id) = match (action, who.split_once('@')) {
            (Action::PlanetRaid, Some((f, p))) => (f.to_string(), Some(p.to_string())),
            (Action::PlanetRaid, None) => continue,
            (_, _) => (who.to_string(), None),
        };
        return Some((
            Work {
                action,
                entity_id,
                planet_id,
                block_start,
            },
            nonce,
        ));
    }
    None
}

/// The work and nonce of a proof given in parts (`action_type`, `entity_id`,
/// `planet_id`, `block_start` (0 until read from the entity), `nonce`).
fn work_from_parts(args: &Value) -> Result<(Work, u64), ToolError> {
    let Some(action) = action_arg(args)? else {
        return Err(ToolError::field(
            ErrorCode::ValidationMissingField,
            "input",
            "give input, or action_type, entity_id and nonce",
        ));
    };
    let nonce = match args.get("nonce") {
        Some(Value::String(s)) => s.parse::<u64>().ok(),
        Some(v) => whole_number(v),
        None => None,
    }
    .ok_or_else(|| {
        ToolError::field(
            ErrorCode::ValidationMissingField,
            "nonce",
            "a whole number is required when input is not given",
        )
    })?;
    let work = Work {
        action,
        entity_id: opt_str(args, "entity_id").unwrap_or_default().to_string(),
        planet_id: opt_str(args, "planet_id").map(str::to_string),
        block_start: u64_arg(args, "block_start").unwrap_or(0),
    };
    Ok((work, nonce))
}

async fn validate_proof(env: Env, args: Value) -> Result<Value, ToolError> {
    let proof = opt_str(&args, "proof").unwrap_or_default().to_string();
    let given = opt_str(&args, "input").map(str::to_string);
    // The work and nonce: parsed back from the input, or built from the parts (with
    // the start block read from the entity when it is not given).
    let (parsed, start_known) = match &given {
        Some(input) => (parse_input(input), true),
        None => (
            Some(work_from_parts(&args)?),
            u64_arg(&args, "block_start").is_some(),
        ),
    };
    let required_given = u64_arg(&args, "required_difficulty").map(|d| d as u32);
    let resolved = if required_given.is_none() || !start_known {
        let (work, _) = parsed.clone().ok_or_else(|| {
            invalid(
                "input",
                "not a proof input ({id}BUILD|MINE|REFINE{start}NONCE{n} or {fleet}@{planet}RAID{start}NONCE{n}); \
                 pass required_difficulty to check it anyway",
            )
        })?;
        // The work's age and range: from the arguments, the input and the entities.
        let mut a = args.clone();
        let o = a.as_object_mut().expect("arguments are an object");
        o.insert("entity_id".into(), json!(work.entity_id));
        if let Some(p) = &work.planet_id {
            o.insert("planet_id".into(), json!(p));
        }
        if start_known {
            o.insert("block_start".into(), json!(work.block_start));
        }
        Some(resolve(&env, &a, work.action, Purpose::Check).await?)
    } else {
        None
    };
    let required = match (required_given, &resolved) {
        (Some(d), _) => d,
        (None, Some(r)) => pow::difficulty(r.age, r.range),
        (None, None) => unreachable!("resolved whenever no difficulty is given"),
    };
    let input = match given {
        Some(input) => input,
        None => {
            let (work, nonce) = parsed.expect("built from the parts");
            let block_start = resolved
                .as_ref()
                .map_or(work.block_start, |r| r.work.block_start);
            Work {
                block_start,
                ..work
            }
            .input(nonce)
        }
    };
    let check = pow::check(&input, &proof, required);
    let reason = if !check.hash_matches {
        format!("the proof is not the SHA-256 of {input:?}")
    } else if !check.difficulty_met {
        format!(
            "the hash has {} leading zeros; {required} are required",
            check.achieved
        )
    } else {
        "the chain would accept this proof".to_string()
    };
    let mut out = json!({
        "valid": check.valid(),
        "hash_matches": check.hash_matches,
        "difficulty_met": check.difficulty_met,
        "required_difficulty": required,
        "achieved_difficulty": check.achieved,
        "expected_hash": check.hash,
        "input": input,
        "reason": reason,
    });
    if let Some(r) = resolved {
        merge(
            &mut out,
            json!({
                "action_type": r.work.action.name(),
                "block_start": r.work.block_start,
                "current_block": r.current_block,
                "age": r.age,
                "difficulty_range": r.range,
                "difficulty_range_source": r.range_source,
            }),
        );
    }
    Ok(out)
}

/// This server's hash rate on every core, measured once (a quarter of a second).
async fn measured_hashrate() -> f64 {
    static RATE: OnceLock<f64> = OnceLock::new();
    if let Some(r) = RATE.get() {
        return *r;
    }
    let rate = tokio::task::spawn_blocking(|| {
        let search = Search::start(SearchSpec {
            prefix: "5-1BUILD1NONCE".into(),
            required: 64,
            start: 1_000_000,
            max_iterations: u64::MAX / 2,
            threads: default_threads(),
            kernel: Kernel::best(),
        })
        .ok()?;
        std::thread::sleep(Duration::from_millis(250));
        search.cancel();
        Some(search.wait().1.hashrate)
    })
    .await
    .ok()
    .flatten()
    .unwrap_or(1e6);
    *RATE.get_or_init(|| rate)
}

async fn pow_schedule(env: Env, args: Value) -> Result<Value, ToolError> {
    let (range, block_start, current_block, source) = match action_arg(&args)? {
        Some(action) => {
            let r = resolve(&env, &args, action, Purpose::Find).await?;
            (r.range, r.work.block_start, r.current_block, r.range_source)
        }
        None => {
            let range = u64_arg(&args, "difficulty").ok_or_else(|| {
                ToolError::field(
                    ErrorCode::ValidationMissingField,
                    "difficulty",
                    "give difficulty and block_start, or action_type and entity_id",
                )
            })?;
            let block_start = u64_arg(&args, "block_start").ok_or_else(|| {
                ToolError::field(
                    ErrorCode::ValidationMissingField,
                    "block_start",
                    "is required with difficulty",
                )
            })?;
            let current = match u64_arg(&args, "age") {
                Some(age) => block_start + age,
                None => {
                    u64_arg(&args, "current_block").unwrap_or_else(|| env.status().block_height)
                }
            };
            (
                range,
                block_start,
                current.max(block_start),
                "argument".to_string(),
            )
        }
    };
    let (hashrate, rate_source) = match args.get("hashrate").and_then(Value::as_f64) {
        Some(r) => (r, "argument"),
        None => (measured_hashrate().await, "measured on this server"),
    };
    let plan = schedule::plan(range, block_start, current_block, hashrate);
    let mut out = serde_json::to_value(&plan)
        .map_err(|e| ToolError::new(ErrorCode::ToolExecutionFailed, format!("schedule: {e}")))?;
    merge(
        &mut out,
        json!({
            "difficulty_now": plan.steps[0].difficulty,
            "difficulty_range_source": source,
            "hashrate_source": rate_source,
            "formula": "difficulty = max(1, 64 - trunc(log10(age) / log10(range) * 63)), 64 when age <= 1; expected seconds = 16^difficulty / hashrate",
        }),
    );
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_parse_back_into_their_work() {
        let (w, n) = parse_input("5-42BUILD1280144NONCE7").unwrap();
        assert_eq!(
            (w.action, w.entity_id.as_str(), w.block_start, n),
            (Action::StructBuild, "5-42", 1280144, 7)
        );
        let (w, n) = parse_input("9-3@2-8RAID5000NONCE42").unwrap();
        assert_eq!(w.planet_id.as_deref(), Some("2-8"));
        assert_eq!((w.action, n), (Action::PlanetRaid, 42));
        let (w, _) = parse_input("5-1REFINE9NONCE0").unwrap();
        assert_eq!(w.action, Action::OreRefine);
        assert!(parse_input("hello").is_none());
        assert!(parse_input("5-1BUILDxNONCE1").is_none());
        assert!(parse_input("5-1RAID1NONCE1").is_none());
    }
}
