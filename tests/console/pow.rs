//! The PoW tab: proof-of-work jobs planned, waiting, run, cancelled and copied, and the
//! `w` key that starts the job of the struct in Entities.

use std::sync::Arc;

use crossterm::event::KeyCode;
use serde_json::json;
use structs_console::Core;
use structs_console::clock::WallClock;
use structs_console::source::sim::WorldConfig;
use structs_console::tui::{App, Tab, Theme};
use tokio::runtime::Runtime;

use crate::support::console::{draw, press, runtime, type_text, wall};
use crate::{Recorder, console, sim, snapshot};

/// A console on the paused demo world that plans proof-of-work at a fixed 20 MH/s,
/// with its core (to move the block clock) and a clipboard that records.
fn pow_console() -> (Runtime, App, Core, Recorder) {
    // The searches hash on the CPU, whatever GPU this machine has, so a frame names
    // the same engine (and no note on why not the GPU) on every machine.
    structs_console::pow::backend::configure(structs_console::pow::backend::Choice::Cpu);
    let runtime = runtime();
    let core =
        structs_console::assembly::build_with_clock(Arc::new(sim()), WallClock::Fixed(wall()));
    let copied = Recorder(Arc::default());
    let mut app = App::new(core.clone(), Theme::default(), runtime.handle().clone())
        .with_clipboard(Box::new(Recorder(copied.0.clone())))
        .with_pow_hashrate(20e6);
    app.settle();
    press(&mut app, KeyCode::Char('4'));
    (runtime, app, core, copied)
}

/// `example`, typed as a new job on the demo world, is planned: not refused, not
/// failed, and listed as job 1.
fn plans_a_job(example: &str) {
    let (_runtime, mut app, _core, _) = pow_console();
    new_job(&mut app, example);
    app.settle();
    let frame = draw(&mut app, 120, 30);
    let status = app.status_text().unwrap_or_default().to_string();
    assert!(
        !frame.contains("failed") && !status.contains("error") && !status.contains("refused"),
        "{example}: {status}\n{frame}"
    );
    let job = example.split_whitespace().next().unwrap();
    assert!(frame.contains(&format!("1 {job}")), "{example}: {frame}");
}

fn new_job(app: &mut App, text: &str) {
    press(app, KeyCode::Char('n'));
    type_text(app, text);
    press(app, KeyCode::Enter);
}

#[test]
fn pow_job_waits_runs_when_the_blocks_bring_the_difficulty_down_and_cancels() {
    let (runtime, mut app, core, _) = pow_console();
    snapshot(
        "pow_empty",
        "The PoW tab before any job: how to start one",
        &mut app,
        100,
        16,
    );
    let height = WorldConfig::DEFAULT_HEIGHT;
    new_job(
        &mut app,
        &format!("5-42 build block_start={} difficulty=700", height - 2),
    );
    assert_eq!(
        app.pending_requests(),
        0,
        "a job above difficulty 10 does not hash"
    );
    snapshot(
        "pow_waiting",
        "A build job two blocks old: difficulty 58, waiting for 10 (the web client's rule); the clock is paused, so no wait is promised; the coming steps at 20 MH/s",
        &mut app,
        110,
        30,
    );
    // The tab asks for the tasks MCP servers run (none here) when it is first ticked.
    app.tick(std::time::Instant::now());
    app.settle();
    // 300 blocks later the difficulty is 10 and the tick starts the search.
    runtime
        .block_on(core.call(
            "structs_clock_control",
            json!({"action": "step", "blocks": 300}),
        ))
        .unwrap();
    app.tick(std::time::Instant::now());
    assert_eq!(app.pending_requests(), 1, "the search is running");
    app.pin_pow_progress(
        0,
        json!({"iterations": 123_456_789u64, "hashrate": 19_800_000.0, "elapsed_ms": 6235,
               "best_achieved_difficulty": 7, "required_difficulty": 10, "threads": 2,
               "kernel": "avx2x8", "rates": [18_000_000u64, 19_500_000u64, 19_900_000u64, 19_800_000u64, 20_100_000u64, 19_800_000u64],
               "engine_note": "the CPU hashes, not the GPU: the only GPU is llvmpipe (Cpu, Vulkan), not a discrete one"}),
    );
    // `auto` says on screen why the GPU was not used.
    assert!(
        draw(&mut app, 110, 30)
            .contains("note: the CPU hashes, not the GPU: the only GPU is llvmpipe"),
        "{}",
        draw(&mut app, 110, 30)
    );
    snapshot(
        "pow_running",
        "The job hashing at difficulty 10: iterations, rate, why not the GPU, best so far, the expected time and the share of a proof's hashes tried, and the hash-rate sparkline (figures pinned)",
        &mut app,
        110,
        30,
    );
    press(&mut app, KeyCode::Char('x'));
    app.settle();
    let frame = draw(&mut app, 110, 30);
    assert!(
        frame.contains("cancelled"),
        "{:?} {frame}",
        app.status_text()
    );
    assert_eq!(
        app.status_text(),
        Some("job 1 cancelled"),
        "once the job shows cancelled, the status line no longer says cancelling"
    );
    assert_eq!(app.pending_requests(), 0);
}

#[test]
fn pow_job_finds_a_proof_the_chain_accepts_and_copies_it() {
    let (_runtime, mut app, _core, copied) = pow_console();
    new_job(
        &mut app,
        "5-42 build block_start=1280144 age=600 difficulty=700 threads=1",
    );
    app.settle();
    app.pin_pow_progress(
        0,
        json!({"iterations": 4096, "hashrate": 18_500_000.0, "elapsed_ms": 1,
               "achieved_difficulty": 3, "difficulty": 3, "threads": 1, "kernel": "avx2x8"}),
    );
    snapshot(
        "pow_done",
        "A job whose difficulty is 3: found at once; the proof's nonce, input and hash (timing pinned)",
        &mut app,
        110,
        24,
    );
    press(&mut app, KeyCode::Char('c'));
    let proof: serde_json::Value = serde_json::from_str(&copied.last().expect("copied")).unwrap();
    let input = proof["input"].as_str().unwrap();
    assert_eq!(input, format!("5-42BUILD1280144NONCE{}", proof["nonce"]));
    let check = structs_console::pow::check(input, proof["hash"].as_str().unwrap(), 3);
    assert!(check.valid(), "{check:?}");
}

/// A server that hashes on a GPU names the adapter in its answers; the job shows it
/// where a CPU search shows its threads and kernel.
#[test]
fn a_job_on_a_gpu_shows_the_adapter() {
    let (_runtime, mut app, _core, _) = pow_console();
    new_job(
        &mut app,
        "5-42 build block_start=1280144 age=600 difficulty=700 threads=1",
    );
    app.settle();
    app.pin_pow_progress(
        0,
        json!({"iterations": 16_000, "hashrate": 8_000_000.0, "elapsed_ms": 2,
               "achieved_difficulty": 3, "difficulty": 3, "threads": 16,
               "kernel": "gpu: NVIDIA H200 (DiscreteGpu, Vulkan)"}),
    );
    let frame = draw(&mut app, 110, 24);
    assert!(
        frame.contains("engine        GPU NVIDIA H200 (DiscreteGpu, Vulkan)"),
        "{frame}"
    );
    assert!(!frame.contains("threads       16"), "{frame}");
    snapshot(
        "pow_done_gpu",
        "A job found by a server hashing on a GPU: the engine row names the adapter instead of threads × kernel (figures pinned)",
        &mut app,
        110,
        24,
    );
}

#[test]
fn w_on_a_struct_in_entities_starts_its_build_job() {
    let (_runtime, mut app, _core, _) = pow_console();
    press(&mut app, KeyCode::Char('1'));
    // The id filter opens a whole id as a tree; w starts a job for it.
    press(&mut app, KeyCode::Char('/'));
    // 5-22 is being built: its job is its build.
    type_text(&mut app, "5-22");
    press(&mut app, KeyCode::Enter);
    let first = "5-22";
    assert!(
        draw(&mut app, 110, 30).contains("w  pow job"),
        "the hint bar offers the job"
    );
    press(&mut app, KeyCode::Char('w'));
    app.settle();
    assert_eq!(
        app.tab(),
        structs_console::tui::app::Tab::Pow,
        "{}",
        draw(&mut app, 110, 30)
    );
    let frame = draw(&mut app, 110, 30);
    assert!(frame.contains(&format!("1 {first} build")), "{frame}");
    assert!(frame.contains("struct_build_complete"), "{frame}");
}

#[test]
fn a_bad_job_is_explained_and_the_prompt_stays() {
    let (_runtime, mut app, _core, _) = pow_console();
    new_job(&mut app, "1-1 build");
    assert!(
        app.status_text().unwrap().contains("player"),
        "{:?}",
        app.status_text()
    );
    let frame = draw(&mut app, 100, 16);
    assert!(
        frame.contains("1-1 build"),
        "the prompt keeps the text: {frame}"
    );
    press(&mut app, KeyCode::Esc);
    new_job(&mut app, "5-1 mine");
    let frame = draw(&mut app, 120, 20);
    assert!(frame.contains("failed"), "{frame}");
}

/// `w` on a struct starts the work it is doing, or says there is none.
#[test]
fn w_starts_the_proof_of_the_work_a_struct_is_doing() {
    let (_rt, mut app) = console();
    let job_for = |app: &mut App, id: &str| {
        press(app, KeyCode::Char('1'));
        press(app, KeyCode::Char('/'));
        type_text(app, id);
        press(app, KeyCode::Enter);
        press(app, KeyCode::Char('w'));
        app.settle();
        (
            app.tab(),
            app.status_text().unwrap_or_default().to_string(),
            draw(app, 120, 30),
        )
    };
    // 5-4, an online Ore Refinery refining: a refine job.
    let (tab, status, frame) = job_for(&mut app, "5-4");
    assert_eq!(tab, Tab::Pow);
    assert_eq!(status, "5-4: a refine job, the work it is doing");
    assert!(frame.contains("5-4 refine"), "{frame}");
    // 5-56, an Ore Extractor mining: a mine job.
    let (_, _, frame) = job_for(&mut app, "5-56");
    assert!(frame.contains("5-56 mine"), "{frame}");
    // 5-22, still being built: its build.
    let (_, _, frame) = job_for(&mut app, "5-22");
    assert!(frame.contains("5-22 build"), "{frame}");
    // 5-12, built and doing no proof work: nothing started, and the status says why.
    let (_, status, frame) = job_for(&mut app, "5-12");
    assert!(status.contains("no proof to find"), "{status}");
    assert!(!frame.contains("5-12 build"), "{frame}");
}

/// While the clock is paused, a waiting job says so instead of a time that will not
/// come.
#[test]
fn a_waiting_job_says_the_clock_is_paused() {
    let (_runtime, mut app, _core, _) = pow_console();
    let height = WorldConfig::DEFAULT_HEIGHT;
    new_job(
        &mut app,
        &format!("5-42 build block_start={} difficulty=700", height - 2),
    );
    app.tick(std::time::Instant::now());
    let frame = draw(&mut app, 140, 30);
    assert!(frame.contains("at block 120273 (clock paused)"), "{frame}");
    assert!(
        frame.contains("(difficulty 8); the clock is paused"),
        "{frame}"
    );
    assert!(!frame.contains("(in "), "{frame}");
}

/// The job examples the console guide gives for the PoW tab each plan a real job on
/// the demo world: none is refused or fails.
#[test]
fn the_guides_pow_job_examples_plan_on_the_demo_world() {
    let guide = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/guides/console.md"
    ))
    .unwrap();
    let section = guide
        .split("## 4 PoW")
        .nth(1)
        .and_then(|s| s.split("## 5").next())
        .expect("the PoW section");
    let examples_text = section
        .split("e.g.")
        .nth(1)
        .and_then(|s| s.split(". Each").next())
        .expect("the examples");
    let examples: Vec<String> = examples_text
        .replace('\n', " ")
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    assert!(examples.len() >= 3, "{examples:?}");
    for example in &examples {
        plans_a_job(example);
    }
}

/// The tab lists the work the demo world has to prove, by type name and state, easiest
/// first, read with `structs_list_pow_work`. The prompt's examples are the first of
/// each kind, and each plans a job; `↓` fills the prompt in from the list.
#[test]
fn the_tab_offers_the_work_the_world_has_to_prove() {
    let (runtime, mut app, core, _) = pow_console();
    app.tick(std::time::Instant::now());
    app.settle();
    let frame = draw(&mut app, 120, 30);
    assert!(frame.contains("Work to prove now"), "{frame}");
    assert!(frame.contains("being built"), "{frame}");
    snapshot(
        "pow_offers",
        "The PoW tab with no job: the work the demo world has to prove, easiest first, by type name and state",
        &mut app,
        120,
        30,
    );
    let listed = runtime
        .block_on(core.call("structs_list_pow_work", json!({"limit": 50})))
        .unwrap();
    let mut examples: Vec<String> = Vec::new();
    let mut kinds = Vec::new();
    for w in listed["work"].as_array().unwrap() {
        let kind = w["action_type"].as_str().unwrap().to_string();
        if kinds.contains(&kind) {
            continue;
        }
        let entity = w["entity_id"].as_str().unwrap();
        examples.push(match kind.as_str() {
            "struct_build_complete" => entity.to_string(),
            "ore_miner_complete" => format!("{entity} mine"),
            "ore_refinery_complete" => format!("{entity} refine"),
            _ => format!("{entity}@{} raid", w["planet_id"].as_str().unwrap()),
        });
        kinds.push(kind);
    }
    assert!(
        kinds.len() >= 2,
        "the demo world has builds and mining to prove: {kinds:?}"
    );
    press(&mut app, KeyCode::Char('n'));
    let frame = draw(&mut app, 120, 30);
    for example in &examples {
        assert!(
            frame.contains(&format!("· {example} ")),
            "{example}: {frame}"
        );
    }
    press(&mut app, KeyCode::Down);
    snapshot(
        "pow_offer_chosen",
        "n then ↓: the prompt filled in with the easiest work on the list, marked there",
        &mut app,
        120,
        30,
    );
    press(&mut app, KeyCode::Esc);
    for example in &examples {
        plans_a_job(example);
    }
}
