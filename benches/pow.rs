//! The proof-of-work figures, in one run:
//!
//! - baselines: the chain CLI's loop shape (the `sha2` crate, one input string at a
//!   time, hex-encoded and compared as a string) and plain `sha2` digests of the same
//!   inputs (the scalar SHA-256 rate);
//! - the search on one thread with each kernel this CPU runs (scalar lanes, AVX2,
//!   AVX-512), and its ratio to the scalar SHA-256 rate (goal: at least 2x);
//! - the search with the best kernel on 1 and on all threads, and the scaling ratio
//!   (goal: at least 1.8x from 1 to 2 threads).
//!
//! - the GPU search (built with the default `gpu` feature), through the same pool as
//!   the tools use: the adapter's name, M hashes/s and the ratio to the CPU pool of
//!   this machine, measured in the same run.
//!
//! Run with `cargo bench --bench pow`. `POW_BENCH_SECONDS` sets how long each figure
//! hashes (default 3). `POW_BENCH_GPU_TUNINGS=1` also measures the GPU kernel in each
//! shape (workgroup size, digits counted per nonce), to tune the defaults.

use std::hint::black_box;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use structs_console::pow::Kernel;
use structs_console::pow::search::{Outcome, Search, SearchSpec};
use structs_console::pow::sha::digest_one_block;

/// A real build input: struct 5-42, built from block 1280144.
const PREFIX: &str = "5-42BUILD1280144NONCE";
/// Nonces start here so every input has the same length (9 digits), as in a long search.
const START: u64 = 100_000_000;

fn seconds() -> f64 {
    std::env::var("POW_BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3.0)
}

/// Runs `f` on growing batches until `seconds()` have passed; hashes per second.
fn measure(mut f: impl FnMut(u64, u64) -> u64) -> f64 {
    let budget = Duration::from_secs_f64(seconds());
    let mut n = 10_000u64;
    let mut nonce = START;
    let mut done = 0u64;
    let start = Instant::now();
    while start.elapsed() < budget {
        done += f(nonce, n);
        nonce += n;
        n = (n * 2).min(50_000_000);
    }
    done as f64 / start.elapsed().as_secs_f64()
}

/// The chain CLI's loop: build the string, hash, hex-encode, compare the prefix.
fn cli_loop(from: u64, n: u64) -> u64 {
    let zeros = "0".repeat(12);
    let mut found = 0u64;
    for nonce in from..from + n {
        let input = format!("{PREFIX}{nonce}");
        let hash = hex(&Sha256::digest(input.as_bytes()));
        if hash.starts_with(&zeros) {
            found += 1;
        }
    }
    black_box(found);
    n
}

fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(64);
    for b in bytes {
        s.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
        s.push(char::from(b"0123456789abcdef"[usize::from(b & 15)]));
    }
    s
}

fn sha_extensions() -> bool {
    #[cfg(target_arch = "x86_64")]
    return std::is_x86_feature_detected!("sha");
    #[cfg(not(target_arch = "x86_64"))]
    false
}

fn search(kernel: Kernel, threads: usize, from: u64, n: u64) -> u64 {
    let (outcome, progress) = Search::start(SearchSpec {
        prefix: PREFIX.into(),
        required: 64,
        start: from,
        max_iterations: n,
        threads,
        kernel,
    })
    .expect("a hashing thread")
    .wait();
    assert_eq!(outcome, Outcome::Exhausted);
    progress.iterations
}

fn main() {
    // The CPU figures are the CPU pool's, whatever GPU this machine has; the GPU is
    // measured in a pool of its own.
    structs_console::pow::backend::configure(structs_console::pow::backend::Choice::Cpu);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "proof-of-work figures ({cores} cores, {} s per figure, input {PREFIX}<9 digits>)",
        seconds()
    );
    let cli = measure(cli_loop);
    println!(
        "  baseline  chain CLI loop shape (sha2 + hex + string compare): {:>7.2} M hashes/s",
        cli / 1e6
    );
    // The digest baselines hash prepared inputs; only the hashing is timed.
    let inputs: Vec<String> = (START..START + 1_000_000)
        .map(|i| format!("{PREFIX}{i}"))
        .collect();
    let timed = |hash: &dyn Fn(&[u8]) -> u8| {
        let budget = Duration::from_secs_f64(seconds());
        let (mut done, start, mut acc) = (0u64, Instant::now(), 0u8);
        while start.elapsed() < budget {
            for input in &inputs {
                acc ^= hash(input.as_bytes());
            }
            done += inputs.len() as u64;
        }
        black_box(acc);
        done as f64 / start.elapsed().as_secs_f64()
    };
    let soft = timed(&|b| digest_one_block(b).map_or(0, |d| d[0] as u8));
    println!(
        "  baseline  plain scalar SHA-256 in software (one block each):  {:>7.2} M hashes/s",
        soft / 1e6
    );
    let sha2 = timed(&|b| Sha256::digest(b)[0]);
    println!(
        "  baseline  sha2 crate digests{}: {:>7.2} M hashes/s",
        if sha_extensions() {
            " (uses this CPU's SHA extensions)"
        } else {
            " (software on this CPU)      "
        },
        sha2 / 1e6
    );
    let mut best_one = 0.0f64;
    for kernel in Kernel::ALL {
        if !kernel.available() {
            println!(
                "  search    1 thread, {:<10} not on this CPU",
                kernel.name()
            );
            continue;
        }
        let rate = measure(|from, n| search(kernel, 1, from, n));
        best_one = best_one.max(rate);
        println!(
            "  search    1 thread, {:<10} {:>7.2} M hashes/s = {:5.2}x software SHA-256, {:5.2}x sha2, {:5.2}x CLI loop",
            kernel.name(),
            rate / 1e6,
            rate / soft,
            rate / sha2,
            rate / cli
        );
    }
    let kernel = Kernel::best();
    let one = measure(|from, n| search(kernel, 1, from, n));
    let all = measure(|from, n| search(kernel, cores, from, n));
    println!(
        "  scaling   {}: 1 thread {:.2} M/s, {cores} threads {:.2} M/s = {:.2}x (goal >= 1.8x from 1 to 2)",
        kernel.name(),
        one / 1e6,
        all / 1e6,
        all / one
    );
    println!(
        "  goal      >= 2x scalar SHA-256 per core: {:.2}x software SHA-256 ({}), {:.2}x the sha2 crate ({})",
        best_one / soft,
        if best_one >= 2.0 * soft {
            "met"
        } else {
            "NOT met"
        },
        best_one / sha2,
        if best_one >= 2.0 * sha2 {
            "met"
        } else {
            "not met"
        },
    );
    println!("  chosen    Kernel::best() = {}", Kernel::best().name());
    gpu(all);
}

/// Hashes one long search in `pool`: a third of `seconds()` to let the GPU's pieces
/// grow to their size (and the kernel for the layout be built), then `seconds()`
/// measured. Hashes per second.
#[cfg(feature = "gpu")]
fn steady(pool: &structs_console::pow::pool::Pool) -> f64 {
    let search = Search::start_in(
        pool,
        SearchSpec {
            prefix: PREFIX.into(),
            required: 64,
            // Ten digits and more, as a long search reaches: one layout for 9 G nonces.
            start: 1_000_000_000,
            max_iterations: 1_000_000_000_000,
            threads: 1,
            kernel: Kernel::best(),
        },
    )
    .expect("the GPU pool");
    std::thread::sleep(Duration::from_secs_f64(seconds() / 3.0));
    let began = Instant::now();
    let before = search.progress().iterations;
    while began.elapsed() < Duration::from_secs_f64(seconds()) && !search.is_finished() {
        std::thread::sleep(Duration::from_millis(20));
    }
    let done = search.progress().iterations - before;
    let took = began.elapsed();
    search.cancel();
    done as f64 / took.as_secs_f64()
}

#[cfg(feature = "gpu")]
fn gpu(cpu_pool: f64) {
    use std::sync::Arc;
    use structs_console::pow::gpu::{Gpu, Tuning};
    use structs_console::pow::pool::Pool;
    let gpu = match Gpu::open() {
        Ok(g) => Arc::new(g),
        Err(why) => {
            println!("  gpu       none: {why}");
            return;
        }
    };
    let name = gpu.describe();
    // The first scan of a layout builds its kernel; the second finds it built.
    let timed = |start: u64| {
        let began = Instant::now();
        gpu.scan(PREFIX.as_bytes(), start, 1 << 16).expect("a scan");
        began.elapsed()
    };
    let (first, again) = (timed(START), timed(START + (1 << 16)));
    let rate = steady(&Pool::with_gpu(gpu.clone()));
    drop(gpu);
    println!(
        "  gpu       {name}: {:>9.2} M hashes/s = {:.2}x the CPU pool ({:.2} M/s)",
        rate / 1e6,
        rate / cpu_pool,
        cpu_pool / 1e6
    );
    println!(
        "  gpu       building the kernel for a layout: {:.0} ms (a first scan {:.1} ms, the next {:.1} ms)",
        first.saturating_sub(again).as_secs_f64() * 1e3,
        first.as_secs_f64() * 1e3,
        again.as_secs_f64() * 1e3
    );
    if std::env::var_os("POW_BENCH_GPU_TUNINGS").is_none() {
        return;
    }
    let general = Tuning {
        fast_from: u64::MAX,
        ..Tuning::default()
    };
    let mut shapes = vec![("general kernel".to_string(), general)];
    for inner in [1, 2, 3] {
        for workgroup in [64, 128, 256] {
            let t = Tuning {
                workgroup,
                inner,
                fast_from: 0,
            };
            shapes.push((format!("fast, workgroup {workgroup:>3}, inner {inner}"), t));
        }
    }
    for (label, tuning) in shapes {
        match Gpu::open_tuned(tuning) {
            Ok(g) => {
                let rate = steady(&Pool::with_gpu(Arc::new(g)));
                println!("  tuning    {label:<32} {:>9.2} M hashes/s", rate / 1e6);
            }
            Err(why) => println!("  tuning    {label:<32} failed: {why}"),
        }
    }
}

#[cfg(not(feature = "gpu"))]
fn gpu(_: f64) {
    println!("  gpu       this build has no GPU backend (built without the `gpu` feature)");
}
