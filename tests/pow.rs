//! The proof-of-work tools through `Core::call`: proofs the chain accepts, work read
//! from the sim's entities, the exhausted-search error, the chain's check, the
//! schedule, progress reports and cancellation; and over MCP for real: progress
//! notifications for a call with a progress token, and a cancelled request that stops
//! the search.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, ProgressNotificationParam, ProgressToken, RequestMetaObject,
};
use rmcp::service::{NotificationContext, PeerRequestOptions};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use structs_console::Core;
use structs_console::clock::WallClock;
use structs_console::context::{CallContext, ProgressUpdate};
use structs_console::pow;
use structs_console::source::sim::{BlockClock, SimSource, WorldConfig};

fn core() -> Core {
    let config = WorldConfig::demo();
    let source = SimSource::new(config, BlockClock::paused(config.genesis_height));
    let fixed = "2026-11-21T12:00:00Z".parse().unwrap();
    structs_console::assembly::build_with_clock(Arc::new(source), WallClock::Fixed(fixed))
}

/// The chain's hash, by an independent implementation (the `sha2` crate).
fn sha256_hex(input: &str) -> String {
    Sha256::digest(input.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn code(e: &Value) -> &str {
    e["error"]["code"].as_str().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_found_proof_is_what_the_chain_accepts() {
    let c = core();
    let v = c
        .call_json(
            "structs_calculate_proof_of_work",
            json!({"action_type": "struct_build_complete", "entity_id": "5-42",
                   "block_start": 1280144, "age": 600, "difficulty": 700}),
        )
        .await
        .unwrap();
    let required = pow::difficulty(600, 700);
    assert_eq!(required, 3);
    assert_eq!(v["difficulty"], required);
    let nonce = v["nonce"].as_u64().unwrap();
    assert_eq!(v["input"], format!("5-42BUILD1280144NONCE{nonce}"));
    let hash = sha256_hex(v["input"].as_str().unwrap());
    assert_eq!(v["hash"], hash);
    assert!(hash.starts_with(&"0".repeat(required as usize)));
    assert_eq!(
        v["achieved_difficulty"],
        hash.bytes().take_while(|&b| b == b'0').count()
    );
    assert_eq!(
        (v["valid"].as_bool(), v["difficulty_met"].as_bool()),
        (Some(true), Some(true))
    );
    assert!(v["iterations"].as_u64().unwrap() > 0);
    assert!(v["hashrate"].as_f64().unwrap() > 0.0);
    assert!(v["computation_time_ms"].is_u64());

    // The proof passes structs_validate_proof, given whole or in parts.
    let check = c
        .call_json(
            "structs_validate_proof",
            json!({"input": v["input"], "proof": v["hash"], "required_difficulty": required}),
        )
        .await
        .unwrap();
    assert_eq!(check["valid"], true, "{check}");
    let check = c
        .call_json(
            "structs_validate_proof",
            json!({"action_type": "struct_build_complete", "entity_id": "5-42", "block_start": 1280144,
                   "nonce": nonce, "proof": v["hash"], "age": 600, "difficulty": 700}),
        )
        .await
        .unwrap();
    assert_eq!(check["valid"], true, "{check}");
    assert_eq!(check["required_difficulty"], required);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_work_is_read_from_the_struct_and_its_type() {
    let c = core();
    // A struct already built has no build proof to find: the tool says so.
    let e = c
        .call_json(
            "structs_calculate_proof_of_work",
            json!({"action_type": "struct_build_complete", "entity_id": "5-3"}),
        )
        .await
        .unwrap_err();
    assert_eq!(e["error"]["details"]["field"], "entity_id");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("5-3 is already built"),
        "{e}"
    );
    // Builds started now, on three players' planets, made cheap by the blocks passing.
    let mut started = Vec::new();
    for player in ["1-2", "1-4", "1-6"] {
        let b = c
            .call_json(
                "structs_action_build_struct",
                json!({"player_id": player, "struct_type": 14, "location_type": "planet"}),
            )
            .await
            .unwrap();
        started.push(b["struct_id"].as_str().unwrap().to_string());
    }
    c.call_json(
        "structs_clock_control",
        json!({"action": "step", "blocks": 60_000}),
    )
    .await
    .unwrap();
    let height = c.status().block_height;
    let mut done = 0;
    for id in started {
        let Ok(s) = c.call_json("structs_query_entity", json!({"id": id})).await else {
            continue;
        };
        let attrs = &s["entity"]["structAttributes"];
        let start: u64 = attrs["blockStartBuild"].as_str().unwrap().parse().unwrap();
        let type_id: u8 = s["entity"]["Struct"]["type"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        let range = structs_console::entity::struct_types::struct_type(type_id)
            .unwrap()
            .build_difficulty;
        let required = pow::difficulty(height - start, range);
        if required > 4 {
            continue;
        }
        let v = c
            .call_json(
                "structs_calculate_proof_of_work",
                json!({"action_type": "struct_build_complete", "entity_id": id}),
            )
            .await
            .unwrap();
        assert_eq!(v["block_start"], start);
        assert_eq!(v["current_block"], height);
        assert_eq!(v["difficulty_range"], range);
        assert_eq!(v["difficulty"], required);
        assert!(
            v["difficulty_range_source"]
                .as_str()
                .unwrap()
                .contains("buildDifficulty")
        );
        assert_eq!(v["valid"], true);
        // The input's parts are found again from the input alone.
        let check = c
            .call_json(
                "structs_validate_proof",
                json!({"input": v["input"], "proof": v["hash"]}),
            )
            .await
            .unwrap();
        assert_eq!(check["valid"], true, "{check}");
        assert_eq!(check["required_difficulty"], required);
        done += 1;
        if done == 3 {
            return;
        }
    }
    panic!("only {done} cheap builds in the demo world");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn running_out_of_iterations_reports_the_best_and_what_is_left() {
    let c = core();
    let e = c
        .call_json(
            "structs_calculate_proof_of_work",
            json!({"action_type": "ore_miner_complete", "entity_id": "5-7", "block_start": 100,
                   "age": 2, "difficulty": 14000, "max_iterations": 20000, "threads": 2}),
        )
        .await
        .unwrap_err();
    assert_eq!(code(&e), "TOOL_TIMEOUT", "{e}");
    let d = &e["error"]["details"];
    let best = &d["best"];
    let input = best["input"].as_str().unwrap();
    assert!(input.starts_with("5-7MINE100NONCE"));
    assert_eq!(best["hash"], sha256_hex(input));
    assert_eq!(d["difficulty"], pow::difficulty(2, 14000));
    assert_eq!(d["work"]["iterations"], 20000);
    assert_eq!(d["estimate"]["next_start_nonce"], 20000);
    assert!(d["estimate"]["expected_seconds"].as_f64().unwrap() > 1e60);
    assert!(d["estimate"]["recommended_start_block"].as_u64().unwrap() > 102);
    let message = e["error"]["message"].as_str().unwrap();
    assert!(message.contains("20000 iterations"), "{message}");
    // A search that cannot succeed says so in words, not in 70 digits.
    assert!(
        message.contains("the rest of the search takes more than 10^"),
        "{message}"
    );
    assert!(message.contains(" years"), "{message}");
    let longest_number = message
        .split(|c: char| !c.is_ascii_digit())
        .map(str::len)
        .max()
        .unwrap_or(0);
    assert!(
        longest_number <= 9,
        "a number a person cannot read: {message}"
    );

    // The next call continues where this one stopped.
    let e = c
        .call_json(
            "structs_calculate_proof_of_work",
            json!({"action_type": "ore_miner_complete", "entity_id": "5-7", "block_start": 100,
                   "age": 2, "difficulty": 14000, "max_iterations": 5000, "start_nonce": 20000}),
        )
        .await
        .unwrap_err();
    let nonce = e["error"]["details"]["best"]["nonce"].as_u64().unwrap();
    assert!((20000..25000).contains(&nonce));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_work_is_a_clear_error() {
    let c = core();
    for (args, want, field) in [
        (
            json!({"action_type": "struct_build_complete", "entity_id": "1-1"}),
            "VALIDATION_WRONG_ENTITY_TYPE",
            "entity_id",
        ),
        (
            json!({"action_type": "planet_raid_complete", "entity_id": "9-1"}),
            "VALIDATION_MISSING_FIELD",
            "planet_id",
        ),
        (
            json!({"action_type": "planet_raid_complete", "entity_id": "5-1", "planet_id": "2-1"}),
            "VALIDATION_WRONG_ENTITY_TYPE",
            "entity_id",
        ),
        (
            json!({"action_type": "struct_build_complete", "entity_id": "5-99999"}),
            "RESOURCE_NOT_FOUND",
            "entity_id",
        ),
        (
            json!({"action_type": "finish_it", "entity_id": "5-1"}),
            "VALIDATION_INVALID_VALUE",
            "action_type",
        ),
        (
            json!({"action_type": "struct_build_complete", "entity_id": "5-1", "threads": 0}),
            "VALIDATION_OUT_OF_RANGE",
            "threads",
        ),
        (
            json!({"action_type": "struct_build_complete", "entity_id": "5-1", "block_start": 99999999999u64}),
            "VALIDATION_OUT_OF_RANGE",
            "block_start",
        ),
        // The sim's structs are not mining: no start block to read.
        (
            json!({"action_type": "ore_miner_complete", "entity_id": "5-1"}),
            "VALIDATION_INVALID_VALUE",
            "action_type",
        ),
    ] {
        let e = c
            .call_json("structs_calculate_proof_of_work", args.clone())
            .await
            .unwrap_err();
        assert_eq!(code(&e), want, "{args} -> {e}");
        assert_eq!(e["error"]["details"]["field"], field, "{args} -> {e}");
    }
    // Struct 5-1 is a command ship: it has no mining difficulty, and says so.
    let e = c
        .call_json(
            "structs_calculate_proof_of_work",
            json!({"action_type": "ore_miner_complete", "entity_id": "5-1"}),
        )
        .await
        .unwrap_err();
    assert!(
        e["error"]["details"]["reason"]
            .as_str()
            .unwrap()
            .contains("oreMiningDifficulty"),
        "{e}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn validate_proof_is_the_chains_check() {
    let c = core();
    let hash = "b52b7684fd06c590cdf191ef2599d1588fe0e02d2e4d084e89d4327cc2b1f9be";
    let v = c
        .call_json(
            "structs_validate_proof",
            json!({"input": "5-42MINE100NONCE7", "proof": hash, "required_difficulty": 0}),
        )
        .await
        .unwrap();
    assert_eq!(
        (v["valid"].as_bool(), v["achieved_difficulty"].as_u64()),
        (Some(true), Some(0))
    );
    let v = c
        .call_json(
            "structs_validate_proof",
            json!({"input": "5-42MINE100NONCE7", "proof": hash, "required_difficulty": 1}),
        )
        .await
        .unwrap();
    assert_eq!(v["valid"], false);
    assert_eq!(v["hash_matches"], true);
    assert!(
        v["reason"].as_str().unwrap().contains("1 are required"),
        "{v}"
    );
    let v = c
        .call_json(
            "structs_validate_proof",
            json!({"input": "5-42MINE100NONCE8", "proof": hash, "required_difficulty": 0}),
        )
        .await
        .unwrap();
    assert_eq!(
        (v["valid"].as_bool(), v["hash_matches"].as_bool()),
        (Some(false), Some(false))
    );
    assert_eq!(v["expected_hash"], sha256_hex("5-42MINE100NONCE8"));
    // The difficulty from the work itself: age 120 of a 200 range needs 8 zeros.
    let v = c
        .call_json(
            "structs_validate_proof",
            json!({"input": "5-1BUILD1000NONCE3", "proof": sha256_hex("5-1BUILD1000NONCE3"),
                   "current_block": 1120, "difficulty": 200}),
        )
        .await
        .unwrap();
    assert_eq!(v["required_difficulty"], 8);
    assert_eq!(v["valid"], false);
    // Something that is not a proof input needs the difficulty spelled out.
    let e = c
        .call_json(
            "structs_validate_proof",
            json!({"input": "hello", "proof": sha256_hex("hello")}),
        )
        .await
        .unwrap_err();
    assert_eq!(e["error"]["details"]["field"], "input");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_schedule_says_when_to_start() {
    let c = core();
    let v = c
        .call_json(
            "structs_calculate_pow_schedule",
            json!({"difficulty": 700, "block_start": 0, "current_block": 100, "hashrate": 30e6}),
        )
        .await
        .unwrap();
    assert_eq!(v["difficulty_now"], 20);
    assert_eq!(v["start_now"], false);
    let steps = v["steps"].as_array().unwrap();
    assert_eq!(steps[0]["difficulty"], 20);
    assert_eq!(steps.last().unwrap()["difficulty"], 1);
    let rec = v["recommended_start_block"].as_u64().unwrap();
    let step = steps.iter().find(|s| s["from_block"] == rec).unwrap();
    assert!(step["difficulty"].as_u64().unwrap() <= 10);
    assert_eq!(
        step["expected_seconds"].as_f64().unwrap(),
        16f64.powi(step["difficulty"].as_i64().unwrap() as i32) / 30e6
    );
    let web = v["web_client_start_block"].as_u64().unwrap();
    assert_eq!(pow::difficulty(web, 700), 10);
    assert!(pow::difficulty(web - 1, 700) > 10);
    // From an entity, with the hash rate measured here.
    let v = c
        .call_json(
            "structs_calculate_pow_schedule",
            json!({"action_type": "struct_build_complete", "entity_id": "5-22"}),
        )
        .await
        .unwrap();
    assert_eq!(v["hashrate_source"], "measured on this server");
    assert!(v["hashrate"].as_f64().unwrap() > 1000.0);
}

/// A search that cannot succeed (64 zeros) and would run for hours.
fn endless() -> Value {
    json!({"action_type": "struct_build_complete", "entity_id": "5-1", "block_start": 10,
           "age": 1, "difficulty": 700, "max_iterations": 1_000_000_000_000u64})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_arrives_at_least_four_times_a_second_and_cancel_stops_within_100_ms() {
    let c = core();
    let updates: Arc<Mutex<Vec<(Instant, ProgressUpdate)>>> = Arc::default();
    let sink = updates.clone();
    let ctx =
        CallContext::new().with_progress(move |u| sink.lock().unwrap().push((Instant::now(), u)));
    let call = tokio::spawn({
        let c = c.clone();
        let ctx = ctx.clone();
        async move {
            c.call_with("structs_calculate_proof_of_work", endless(), ctx)
                .await
        }
    });
    let started = Instant::now();
    tokio::time::sleep(Duration::from_millis(1600)).await;
    let cancelled_at = Instant::now();
    ctx.cancel();
    let result = call.await.unwrap();
    let stopped = cancelled_at.elapsed();
    let e = result.unwrap_err();
    assert_eq!(e.code.as_str(), "TOOL_CANCELLED");
    assert!(
        stopped < Duration::from_millis(100),
        "stopped {stopped:?} after cancel"
    );

    let updates = updates.lock().unwrap();
    let in_first = updates
        .iter()
        .filter(|(at, _)| at.duration_since(started) <= Duration::from_millis(1500))
        .count();
    assert!(in_first >= 6, "{in_first} reports in 1.5 s");
    let mut last = 0.0;
    for (_, u) in updates.iter() {
        assert!(u.progress >= last);
        last = u.progress;
        assert_eq!(u.data["required_difficulty"], 64);
        assert!(u.data["hashrate"].as_f64().unwrap() >= 0.0);
        assert!(u.data.get("best_achieved_difficulty").is_some());
    }
    assert!(last > 0.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_call_stops_its_search() {
    let c = core();
    let ctx = CallContext::new();
    let fut = c.call_with("structs_calculate_proof_of_work", endless(), ctx.clone());
    let _ = tokio::time::timeout(Duration::from_millis(300), fut).await;
    assert!(ctx.is_cancelled(), "dropping the call cancels its context");
}

/// An MCP client that keeps the progress notifications it receives.
#[derive(Clone, Default)]
struct Progress(Arc<Mutex<Vec<ProgressNotificationParam>>>);

impl ClientHandler for Progress {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.0.lock().unwrap().push(params);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_mcp_progress_is_notified_and_a_cancelled_request_stops_the_search() {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_structs-console"));
    cmd.args(["--headless", "--paused", "--log-level", "warn"]);
    let transport = TokioChildProcess::new(cmd).expect("spawn structs-console --headless");
    let progress = Progress::default();
    let client = progress.clone().serve(transport).await.expect("initialize");

    let mut meta = RequestMetaObject::new();
    meta.set_progress_token(ProgressToken(rmcp::model::NumberOrString::String(
        "pow-1".into(),
    )));
    let Value::Object(arguments) = endless() else {
        unreachable!()
    };
    let request = rmcp::model::ClientRequest::CallToolRequest(rmcp::model::Request::new(
        CallToolRequestParams::new("structs_calculate_proof_of_work").with_arguments(arguments),
    ));
    let handle = client
        .send_request_with_option(request, PeerRequestOptions::no_options().with_meta(meta))
        .await
        .expect("send tools/call");
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let seen = progress.0.lock().unwrap().len();
    assert!(seen >= 4, "{seen} progress notifications in 1.2 s");
    {
        let p = progress.0.lock().unwrap();
        // rmcp's client puts its own token on the request; every notification
        // carries the token of that one request.
        let tokens: Vec<_> = p.iter().map(|n| n.progress_token.clone()).collect();
        assert!(tokens.iter().all(|t| *t == tokens[0]), "{tokens:?}");
        assert!(
            p.last()
                .unwrap()
                .message
                .as_deref()
                .unwrap()
                .contains("leading zeros")
        );
    }
    handle
        .cancel(Some("enough".into()))
        .await
        .expect("notifications/cancelled");
    // The server stops hashing: its next answer is quick, and progress stops.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let after_cancel = progress.0.lock().unwrap().len();
    let t = Instant::now();
    let v = client
        .call_tool(CallToolRequestParams::new("structs_query_block_height"))
        .await
        .expect("the server still answers");
    assert_eq!(v.is_error, Some(false));
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(
        progress.0.lock().unwrap().len(),
        after_cancel,
        "no progress after the cancel"
    );
    assert!(t.elapsed() < Duration::from_secs(5));
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proof_in_parts_without_its_start_block_reads_it_from_the_struct() {
    let c = core();
    let s = c
        .call_json("structs_query_entity", json!({"id": "5-3"}))
        .await
        .unwrap();
    let start = s["entity"]["structAttributes"]["blockStartBuild"]
        .as_str()
        .unwrap()
        .to_string();
    let input = format!("5-3BUILD{start}NONCE9");
    let v = c
        .call_json(
            "structs_validate_proof",
            json!({"action_type": "struct_build_complete", "entity_id": "5-3", "nonce": 9,
                   "proof": sha256_hex(&input), "required_difficulty": 0}),
        )
        .await
        .unwrap();
    assert_eq!(v["input"], input);
    assert_eq!(v["valid"], true, "{v}");
}

/// `structs_list_pow_work` finds a raid under way (a fleet away at a planet whose raid
/// clock runs), and each piece of work it lists is one the search accepts: its
/// `arguments`, given to `structs_calculate_proof_of_work`, find a proof the chain's
/// check passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_work_listed_is_work_the_search_can_prove() {
    let config = WorldConfig::demo();
    let source = Arc::new(SimSource::new(
        config,
        BlockClock::paused(config.genesis_height),
    ));
    let height = config.genesis_height;
    source.with_world_mut(|w| {
        w.fleets[2].planet = None;
        w.fleets[2].away_at = Some(8);
        w.planets[7].block_start_raid = height - 400;
    });
    let fixed = "2026-11-21T12:00:00Z".parse().unwrap();
    let core = structs_console::assembly::build_with_clock(source, WallClock::Fixed(fixed));
    let raids = core
        .call(
            "structs_list_pow_work",
            json!({"action_type": "planet_raid_complete"}),
        )
        .await
        .unwrap();
    assert_eq!(raids["total"], 1, "{raids}");
    let raid = &raids["work"][0];
    assert_eq!(
        (&raid["entity_id"], &raid["planet_id"], &raid["type_name"]),
        (&json!("9-3"), &json!("2-8"), &json!("Fleet")),
        "{raid}"
    );
    assert_eq!(raid["block_start"], height - 400);
    assert_eq!(raid["age"], 400);

    let all = core
        .call("structs_list_pow_work", json!({"limit": 200}))
        .await
        .unwrap();
    let work = all["work"].as_array().unwrap();
    assert_eq!(all["total"].as_u64(), Some(work.len() as u64));
    let needs: Vec<u64> = work
        .iter()
        .map(|w| w["difficulty_now"].as_u64().unwrap())
        .collect();
    assert!(
        needs.windows(2).all(|p| p[0] <= p[1]),
        "easiest first: {needs:?}"
    );
    // Every kind is there, and the easiest of each proves.
    for kind in [
        "struct_build_complete",
        "ore_miner_complete",
        "ore_refinery_complete",
        "planet_raid_complete",
    ] {
        let first = work
            .iter()
            .find(|w| w["action_type"] == kind)
            .unwrap_or_else(|| panic!("no {kind} on the demo world"));
        if first["difficulty_now"].as_u64().unwrap() > 5 {
            continue;
        }
        let mut args = first["arguments"].clone();
        args["max_iterations"] = json!(50_000_000u64);
        let found = core
            .call("structs_calculate_proof_of_work", args)
            .await
            .unwrap_or_else(|e| panic!("{kind} {first}: {e:?}"));
        assert_eq!(found["valid"], true, "{found}");
    }
    let err = core
        .call("structs_list_pow_work", json!({"player_id": "2-1"}))
        .await
        .unwrap_err();
    assert_eq!(err.code.as_str(), "VALIDATION_WRONG_ENTITY_TYPE", "{err:?}");
}

/// A GPU driver's own lines on stderr (Mesa's `error: XDG_RUNTIME_DIR is invalid or not
/// set in the environment.` where no desktop session runs) are not printed by the
/// headless server, whose stderr is its log: they are logged at debug level. The proof
/// is found all the same.
#[test]
fn a_gpu_drivers_own_lines_are_logged_not_printed() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "structs_calculate_proof_of_work",
            "arguments": {"action_type": "struct_build_complete", "entity_id": "5-22"}}}),
    ];
    for level in ["info", "debug"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_structs-console"))
            .args([
                "--headless",
                "--paused",
                "--pow-backend",
                "gpu",
                "--log-level",
                level,
            ])
            .env_remove("XDG_RUNTIME_DIR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        for r in &requests {
            writeln!(stdin, "{r}").unwrap();
        }
        // The answer, then the end of input.
        let stdout = child.stdout.take().unwrap();
        let answer = std::io::BufRead::lines(std::io::BufReader::new(stdout))
            .map_while(Result::ok)
            .find(|l| l.contains("\"id\":2"))
            .expect("the search's answer");
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(answer.contains("\"valid\":true"), "{answer}");
        assert!(
            !stderr
                .lines()
                .any(|l| l.starts_with("error: XDG_RUNTIME_DIR")),
            "a driver's line printed as it came ({level}):\n{stderr}"
        );
        // Where a driver said something, debug logging keeps it.
        if level == "debug" && stderr.contains("XDG_RUNTIME_DIR") {
            assert!(
                stderr.contains("the GPU driver wrote on stderr: error: XDG_RUNTIME_DIR"),
                "{stderr}"
            );
        }
    }
}
