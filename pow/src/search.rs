//! The search for a proof on the hashing pool's threads.
//!
//! The nonces `start .. start + max_iterations` are cut into chunks of whole kilos
//! (1,000 nonces that share all digits but the last three). A search is a
//! [`Job`](super::pool::Job) of the process-wide [`Pool`]: each piece a worker runs is
//! the next chunk from one atomic counter, so no nonce is hashed twice, and between
//! chunks the worker moves on to the next search in turn. A chunk is scanned with the
//! fastest kernel this CPU has, and every promising lane is checked exactly as the chain
//! does. The first worker to find a proof sets the search's stop flag, which every
//! worker reads after each batch of lanes, as does a cancel. The required difficulty
//! lives in an atomic so the caller can lower it as blocks pass; a best result that
//! already meets the lower difficulty wins at once.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::lanes::Kernel;
use super::pool::{Job, NoWorkers, Poker, Pool};
use super::sha::{Kilo, digest_one_block, hex, leading_zero_nibbles};

/// Nonces a worker claims at a time: whole kilos, a few milliseconds of work, so a new
/// search waits at most that long for its turn.
const CHUNK: u64 = 16_000;

/// What to search for.
#[derive(Debug, Clone)]
pub struct SearchSpec {
    /// The input without its nonce ([`super::Work::prefix`]).
    pub prefix: String,
    /// Leading hex zeros needed (1 to 64).
    pub required: u32,
    /// The first nonce.
    pub start: u64,
    /// Nonces to try at most.
    pub max_iterations: u64,
    /// Threads to hash on (at least 1, at most the pool's size).
    pub threads: usize,
    pub kernel: Kernel,
}

/// A nonce and what it achieved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    pub nonce: u64,
    pub input: String,
    /// Lowercase hex SHA-256 of `input`.
    pub hash: String,
    /// Leading hex zeros of `hash`.
    pub achieved: u32,
}

/// How a search ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// A proof that passed the chain's check for the required difficulty at the time.
    Found(Hit),
    /// Every nonce allowed was tried.
    Exhausted,
    Cancelled,
}

/// A look at a running (or finished) search.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    pub iterations: u64,
    pub elapsed: Duration,
    /// Hashes per second since the start.
    pub hashrate: f64,
    /// The best nonce so far (the most leading zeros, the first found on a tie).
    pub best: Option<Hit>,
    pub required: u32,
    pub threads: usize,
    pub kernel: Kernel,
}

struct Shared {
    spec: SearchSpec,
    required: AtomicU32,
    next_chunk: AtomicU64,
    stop: AtomicBool,
    cancelled: AtomicBool,
    /// Hashes done, per lane (each on its own cache line).
    hashed: Vec<Padded>,
    /// The best achieved difficulty so far, read without the lock.
    best_achieved: AtomicU32,
    best: Mutex<Option<Hit>>,
    found: Mutex<Option<Hit>>,
    /// Set once no worker is on the search any more and it has stopped.
    done: Mutex<bool>,
    done_cv: Condvar,
    finished: tokio::sync::Notify,
}

#[repr(align(128))]
struct Padded(AtomicU64);

/// A running search. Dropping it cancels it.
pub struct Search {
    shared: Arc<Shared>,
    pool: Poker,
    /// Workers it may have at once: what it asked for, within the pool's size and the
    /// workers the pool could start.
    threads: usize,
    started: Instant,
    ended: Mutex<Option<Instant>>,
}

impl Search {
    /// Starts the search on the process's hashing pool and returns at once. Refused only
    /// when not one hashing thread can be started.
    pub fn start(spec: SearchSpec) -> Result<Search, NoWorkers> {
        Search::start_in(crate::backend::global(), spec)
    }

    /// Starts the search on `pool`.
    pub fn start_in(pool: &Pool, spec: SearchSpec) -> Result<Search, NoWorkers> {
        let threads = spec.threads.clamp(1, pool.size());
        let shared = Arc::new(Shared {
            required: AtomicU32::new(spec.required.clamp(1, 64)),
            next_chunk: AtomicU64::new(0),
            stop: AtomicBool::new(spec.max_iterations == 0),
            cancelled: AtomicBool::new(false),
            hashed: (0..threads).map(|_| Padded(AtomicU64::new(0))).collect(),
            best_achieved: AtomicU32::new(0),
            best: Mutex::new(None),
            found: Mutex::new(None),
            done: Mutex::new(false),
            done_cv: Condvar::new(),
            finished: tokio::sync::Notify::new(),
            spec: SearchSpec { threads, ..spec },
        });
        let started = Instant::now();
        let workers = pool.submit(shared.clone())?;
        Ok(Search {
            shared,
            pool: pool.poker(),
            threads: threads.min(workers),
            started,
            ended: Mutex::new(None),
        })
    }

    /// Stops every worker on it soon (after its current batch of lanes).
    pub fn cancel(&self) {
        self.shared.cancelled.store(true, Ordering::Relaxed);
        self.shared.stop.store(true, Ordering::Relaxed);
        self.pool.poke();
    }

    /// The search has stopped and no worker is on it any more.
    pub fn is_finished(&self) -> bool {
        *lock(&self.shared.done)
    }

    /// Lowers (or raises) the required difficulty while the search runs. When the best
    /// result so far already meets it, that result is the proof.
    pub fn set_required(&self, required: u32) {
        let required = required.clamp(1, 64);
        self.shared.required.store(required, Ordering::Relaxed);
        let best = lock(&self.shared.best).clone();
        if let Some(hit) = best
            && hit.achieved >= required
        {
            offer_found(&self.shared, hit);
        }
    }

    pub fn required(&self) -> u32 {
        self.shared.required.load(Ordering::Relaxed)
    }

    /// Iterations, rate and best result now.
    pub fn progress(&self) -> Progress {
        let iterations = self
            .shared
            .hashed
            .iter()
            .map(|d| d.0.load(Ordering::Relaxed))
            .sum::<u64>();
        let end = lock(&self.ended).unwrap_or_else(Instant::now);
        let elapsed = end.duration_since(self.started);
        Progress {
            iterations,
            elapsed,
            hashrate: rate(iterations, elapsed),
            best: lock(&self.shared.best).clone(),
            required: self.required(),
            threads: self.threads,
            kernel: self.shared.spec.kernel,
        }
    }

    /// Waits (without blocking a runtime thread) until no worker is on it any more.
    pub async fn finished(&self) {
        loop {
            let notified = self.shared.finished.notified();
            if self.is_finished() {
                return;
            }
            notified.await;
        }
    }

    /// Blocks until the search ends and says how, with the last progress.
    pub fn wait(self) -> (Outcome, Progress) {
        {
            let done = lock(&self.shared.done);
            drop(
                self.shared
                    .done_cv
                    .wait_while(done, |d| !*d)
                    .unwrap_or_else(|e| e.into_inner()),
            );
        }
        *lock(&self.ended) = Some(Instant::now());
        let progress = self.progress();
        let outcome = if let Some(hit) = lock(&self.shared.found).clone() {
            Outcome::Found(hit)
        } else if self.shared.cancelled.load(Ordering::Relaxed) {
            Outcome::Cancelled
        } else {
            Outcome::Exhausted
        };
        (outcome, progress)
    }
}

impl Drop for Search {
    fn drop(&mut self) {
        if !self.is_finished() {
            self.cancel();
        }
    }
}

/// Hashes per second.
pub fn rate(iterations: u64, elapsed: Duration) -> f64 {
    let secs = elapsed.as_secs_f64();
    if secs > 0.0 {
        iterations as f64 / secs
    } else {
        0.0
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Job for Shared {
    fn run_piece(&self, lane: usize) -> bool {
        piece(self, lane)
    }

    #[cfg(feature = "gpu")]
    fn run_gpu_piece(&self, gpu: &crate::gpu::Gpu) -> bool {
        gpu_piece(self, gpu)
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    fn lanes(&self) -> usize {
        self.spec.threads
    }

    fn finished(&self) {
        *lock(&self.done) = true;
        self.done_cv.notify_all();
        self.finished.notify_waiters();
        self.finished.notify_one();
    }
}

/// Records a verified proof; the first one wins and stops everyone.
fn offer_found(shared: &Shared, hit: Hit) {
    // The chain's check, on the string, before anything is reported.
    let check = super::check(
        &hit.input,
        &hit.hash,
        shared.required.load(Ordering::Relaxed),
    );
    if !check.valid() {
        return;
    }
    let mut found = lock(&shared.found);
    if found.is_none() {
        *found = Some(hit);
    }
    shared.stop.store(true, Ordering::Relaxed);
}

/// Looks at one promising nonce exactly: updates the best and may end the search.
fn consider(shared: &Shared, nonce: u64, digest: [u32; 8]) {
    let achieved = leading_zero_nibbles(&digest);
    let required = shared.required.load(Ordering::Relaxed);
    if achieved <= shared.best_achieved.load(Ordering::Relaxed) && achieved < required {
        return;
    }
    let hit = Hit {
        nonce,
        input: format!("{}{nonce}", shared.spec.prefix),
        hash: hex(&digest),
        achieved,
    };
    {
        let mut best = lock(&shared.best);
        if best.as_ref().is_none_or(|b| achieved > b.achieved) {
            *best = Some(hit.clone());
            shared.best_achieved.fetch_max(achieved, Ordering::Relaxed);
        }
    }
    if achieved >= required {
        offer_found(shared, hit);
    }
}

/// How many leading zero nibbles make a lane worth a closer look.
fn want(shared: &Shared) -> u32 {
    let required = shared.required.load(Ordering::Relaxed);
    let better = shared.best_achieved.load(Ordering::Relaxed) + 1;
    required.min(better).clamp(1, 8)
}

/// Hashes the next chunk on `lane`. False when the search has nothing more to do.
fn piece(shared: &Shared, lane: usize) -> bool {
    let spec = &shared.spec;
    let end = spec.start.saturating_add(spec.max_iterations);
    if shared.stop.load(Ordering::Relaxed) {
        return false;
    }
    let chunk = shared.next_chunk.fetch_add(1, Ordering::Relaxed);
    let from = spec.start.saturating_add(chunk.saturating_mul(CHUNK));
    if from >= end {
        return false;
    }
    let to = from.saturating_add(CHUNK).min(end);
    hash_range(shared, lane, from, to) && to < end
}

/// Hashes `from .. to` on this thread, counting on `lane`. False when the search was
/// stopped on the way.
fn hash_range(shared: &Shared, lane: usize, from: u64, to: u64) -> bool {
    let spec = &shared.spec;
    let prefix = spec.prefix.as_bytes();
    let mut nonce = from;
    while nonce < to && !shared.stop.load(Ordering::Relaxed) {
        let hi = nonce / 1000;
        let lo_from = (nonce % 1000) as u32;
        let lo_to = if to / 1000 > hi {
            1000
        } else {
            (to % 1000) as u32
        };
        let kilo = if hi == 0 { None } else { Kilo::new(prefix, hi) };
        let Some(kilo) = kilo else {
            // Nonces below 1,000 (their digit count varies) and inputs longer than
            // one block: one at a time through the plain hasher.
            for lo in lo_from..lo_to {
                let n = hi * 1000 + u64::from(lo);
                let input = format!("{}{n}", spec.prefix);
                let digest = digest_one_block(input.as_bytes())
                    .unwrap_or_else(|| super::digest_words(input.as_bytes()));
                consider(shared, n, digest);
                shared.hashed[lane].0.fetch_add(1, Ordering::Relaxed);
                if shared.stop.load(Ordering::Relaxed) {
                    return false;
                }
            }
            nonce = hi * 1000 + u64::from(lo_to);
            continue;
        };
        let mut lo = lo_from;
        while lo < lo_to {
            let out = spec
                .kernel
                .scan(&kilo, lo, lo_to, want(shared), &shared.stop);
            shared.hashed[lane]
                .0
                .fetch_add(u64::from(out.next - lo), Ordering::Relaxed);
            for &hit in &out.hit_lo[..out.hits] {
                consider(shared, hi * 1000 + u64::from(hit), kilo.digest(hit));
            }
            lo = out.next;
            if shared.stop.load(Ordering::Relaxed) {
                return false;
            }
        }
        nonce = hi * 1000 + u64::from(lo_to);
    }
    !shared.stop.load(Ordering::Relaxed)
}

/// Hashes `from .. to` on every core, each thread a part; the calling thread does the
/// part a thread could not be started for.
#[cfg(feature = "gpu")]
fn hash_range_on_cores(shared: &Shared, from: u64, to: u64) {
    let parts = crate::pool::cores()
        .min((to - from).div_ceil(CHUNK) as usize)
        .max(1);
    let step = (to - from).div_ceil(parts as u64);
    std::thread::scope(|scope| {
        for i in 0..parts as u64 {
            let (a, b) = (from + i * step, (from + (i + 1) * step).min(to));
            if a >= b {
                continue;
            }
            let lane = i as usize % shared.hashed.len();
            let spawned = std::thread::Builder::new()
                .name("pow-fallback".into())
                .spawn_scoped(scope, move || hash_range(shared, lane, a, b));
            if spawned.is_err() {
                hash_range(shared, lane, a, b);
            }
        }
    });
}

/// Hashes the next run of chunks on the GPU: as many as the GPU does in a piece's time
/// ([`crate::gpu::Gpu::piece_nonces`]), so that searches still take turns and a cancel
/// is heard between pieces. The best nonce of the run is looked at exactly, on the CPU.
///
/// When the GPU fails, the run is hashed on the CPU's cores instead, and so is every
/// later piece of every search: the failure is logged once, and the search goes on.
/// False when the search has nothing more to do.
#[cfg(feature = "gpu")]
fn gpu_piece(shared: &Shared, gpu: &crate::gpu::Gpu) -> bool {
    let spec = &shared.spec;
    let end = spec.start.saturating_add(spec.max_iterations);
    if shared.stop.load(Ordering::Relaxed) {
        return false;
    }
    let chunks = if gpu.failed().is_some() {
        // A few chunks a core: a piece of a few milliseconds, as on the CPU pool.
        4 * crate::pool::cores() as u64
    } else {
        gpu.piece_nonces().div_ceil(CHUNK).max(1)
    };
    let first = shared.next_chunk.fetch_add(chunks, Ordering::Relaxed);
    let from = spec.start.saturating_add(first.saturating_mul(CHUNK));
    if from >= end {
        return false;
    }
    let to = from.saturating_add(chunks.saturating_mul(CHUNK)).min(end);
    if gpu.failed().is_none() {
        let scanned = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            gpu.scan(spec.prefix.as_bytes(), from, to - from)
        }))
        .unwrap_or_else(|_| Err("the GPU backend panicked".to_string()));
        match scanned {
            Ok(best) => {
                shared.hashed[0].0.fetch_add(to - from, Ordering::Relaxed);
                if let Some(b) = best {
                    let input = format!("{}{}", spec.prefix, b.nonce);
                    let digest = digest_one_block(input.as_bytes())
                        .unwrap_or_else(|| super::digest_words(input.as_bytes()));
                    consider(shared, b.nonce, digest);
                }
                return to < end && !shared.stop.load(Ordering::Relaxed);
            }
            Err(why) => {
                if gpu.fail(&why) {
                    tracing::warn!(
                        "proof-of-work goes on on the CPU: the GPU {} failed: {why}",
                        gpu.describe()
                    );
                }
            }
        }
    }
    hash_range_on_cores(shared, from, to);
    to < end && !shared.stop.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(prefix: &str, required: u32, max: u64, threads: usize) -> SearchSpec {
        SearchSpec {
            prefix: prefix.into(),
            required,
            start: 0,
            max_iterations: max,
            threads,
            kernel: Kernel::best(),
        }
    }

    /// The first nonce meeting `required`, by brute force with the plain hasher.
    fn first_valid(prefix: &str, required: u32) -> u64 {
        (0..)
            .find(|n| {
                crate::achieved_difficulty(&crate::hash_hex(&format!("{prefix}{n}"))) >= required
            })
            .unwrap()
    }

    #[test]
    fn one_thread_finds_the_first_valid_nonce_and_it_passes_the_chain_check() {
        for prefix in [
            "5-42BUILD1280144NONCE",
            "9-3@2-8RAID5000NONCE",
            "5-7MINE12NONCE",
        ] {
            let (outcome, progress) = Search::start(spec(prefix, 4, 10_000_000, 1))
                .unwrap()
                .wait();
            let Outcome::Found(hit) = outcome else {
                panic!("{outcome:?}")
            };
            assert_eq!(hit.nonce, first_valid(prefix, 4), "{prefix}");
            assert!(crate::check(&hit.input, &hit.hash, 4).valid());
            assert_eq!(progress.best.as_ref().map(|b| b.nonce), Some(hit.nonce));
        }
    }

    #[test]
    fn many_threads_find_a_valid_proof() {
        for threads in [2, 3, 8] {
            let (outcome, _) = Search::start(spec("5-1BUILD77NONCE", 4, 50_000_000, threads))
                .unwrap()
                .wait();
            let Outcome::Found(hit) = outcome else {
                panic!("{outcome:?}")
            };
            assert!(crate::check(&hit.input, &hit.hash, 4).valid());
            assert_eq!(hit.input, format!("5-1BUILD77NONCE{}", hit.nonce));
        }
    }

    #[test]
    fn every_nonce_is_hashed_once_when_nothing_is_found() {
        for (start, max, threads) in [(0, 12_345, 3), (999, 40_001, 2), (1_234_567, 100_000, 4)] {
            let s = SearchSpec {
                start,
                ..spec("5-1BUILD77NONCE", 64, max, threads)
            };
            let (outcome, progress) = Search::start(s).unwrap().wait();
            assert_eq!(outcome, Outcome::Exhausted);
            assert_eq!(progress.iterations, max);
            let best = progress.best.unwrap();
            assert!((start..start + max).contains(&best.nonce));
        }
    }

    #[test]
    fn the_best_is_the_most_zeros_seen() {
        let prefix = "5-3REFINE9NONCE";
        let (_, progress) = Search::start(spec(prefix, 64, 20_000, 2)).unwrap().wait();
        let most = (0..20_000u64)
            .map(|n| crate::achieved_difficulty(&crate::hash_hex(&format!("{prefix}{n}"))))
            .max()
            .unwrap();
        assert_eq!(progress.best.unwrap().achieved, most);
    }

    #[test]
    fn cancel_stops_all_threads_quickly() {
        let search = Search::start(spec("5-1BUILD77NONCE", 64, u64::MAX, 2)).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        let at = Instant::now();
        search.cancel();
        let (outcome, progress) = search.wait();
        assert!(
            at.elapsed() < Duration::from_millis(100),
            "{:?}",
            at.elapsed()
        );
        assert_eq!(outcome, Outcome::Cancelled);
        assert!(progress.iterations > 0);
    }

    #[test]
    fn lowering_the_requirement_ends_with_the_best_so_far() {
        let search = Search::start(spec("5-1BUILD77NONCE", 64, u64::MAX, 2)).unwrap();
        std::thread::sleep(Duration::from_millis(30));
        let best = search.progress().best.unwrap();
        search.set_required(best.achieved);
        let (outcome, _) = search.wait();
        let Outcome::Found(hit) = outcome else {
            panic!("{outcome:?}")
        };
        assert!(hit.achieved >= best.achieved);
    }

    #[test]
    fn long_inputs_fall_back_to_the_plain_hasher() {
        let prefix = format!("{}NONCE", "5-1".repeat(18));
        let (outcome, _) = Search::start(spec(&prefix, 2, 100_000, 2)).unwrap().wait();
        let Outcome::Found(hit) = outcome else {
            panic!("{outcome:?}")
        };
        assert!(hit.input.len() > 55);
        assert!(crate::check(&hit.input, &hit.hash, 2).valid());
    }

    /// A search of `pool` at difficulty 3 finds a proof the chain accepts.
    #[cfg(feature = "gpu")]
    fn finds_a_valid_proof(pool: &Pool, prefix: &str) {
        let (found, _) = Search::start_in(pool, spec(prefix, 3, 1_000_000, 1))
            .unwrap()
            .wait();
        let Outcome::Found(hit) = found else {
            panic!("{found:?}")
        };
        assert!(crate::check(&hit.input, &hit.hash, 3).valid(), "{hit:?}");
    }

    /// A search on the GPU gives what one CPU thread gives over the same range: the
    /// best nonce (the smallest on a tie) when nothing meets the difficulty, and a
    /// proof that passes the chain's check when one does.
    #[cfg(feature = "gpu")]
    #[test]
    fn the_gpu_pool_searches_as_the_cpu_does() {
        let Some(gpu) = crate::gpu::for_test() else {
            return;
        };
        let pool = Pool::with_gpu(gpu);
        for prefix in ["5-42BUILD1280144NONCE", "9-3@2-8RAID5000NONCE"] {
            // Unreachable: both run the whole range and keep the best.
            let (cpu, cpu_progress) = Search::start(spec(prefix, 64, 60_000, 1)).unwrap().wait();
            let (gpu, gpu_progress) = Search::start_in(&pool, spec(prefix, 64, 60_000, 1))
                .unwrap()
                .wait();
            assert_eq!((cpu, gpu), (Outcome::Exhausted, Outcome::Exhausted));
            assert_eq!(gpu_progress.iterations, 60_000);
            assert_eq!(gpu_progress.best, cpu_progress.best, "{prefix}");
            // Reachable: a proof the chain accepts.
            finds_a_valid_proof(&pool, prefix);
        }
    }

    /// On the GPU, a search cancelled mid-way stops within a few pieces; two searches
    /// share the device, each getting pieces while the other runs, and both end.
    #[cfg(feature = "gpu")]
    #[test]
    fn gpu_searches_cancel_and_share_the_device() {
        let Some(gpu) = crate::gpu::for_test() else {
            return;
        };
        let pool = Pool::with_gpu(gpu);
        let long = Search::start_in(&pool, spec("5-1BUILD1NONCE", 64, u64::MAX / 4, 1)).unwrap();
        let short = Search::start_in(&pool, spec("5-2BUILD1NONCE", 64, 200_000, 1)).unwrap();
        // The short one ends while the long one runs: they took turns.
        let (outcome, progress) = short.wait();
        assert_eq!(outcome, Outcome::Exhausted);
        assert_eq!(progress.iterations, 200_000);
        let before = long.progress().iterations;
        assert!(before > 0, "the long search got pieces too");
        assert!(!long.is_finished());
        let asked = Instant::now();
        long.cancel();
        let (outcome, progress) = long.wait();
        assert_eq!(outcome, Outcome::Cancelled);
        assert!(
            asked.elapsed() < Duration::from_secs(5),
            "{:?}",
            asked.elapsed()
        );
        assert!(progress.iterations >= before);
    }

    /// A GPU that is lost mid-search (its device destroyed, as a driver reset does):
    /// the piece it was on and every later one are hashed on the CPU, and the search
    /// ends as one on the CPU does, with the same best.
    #[cfg(feature = "gpu")]
    #[test]
    fn a_search_goes_on_on_the_cpu_when_the_gpu_is_lost() {
        let Some(gpu) = crate::gpu::for_test() else {
            return;
        };
        let pool = Pool::with_gpu(gpu.clone());
        let prefix = "5-42BUILD1280144NONCE";
        let (_, cpu_progress) = Search::start(spec(prefix, 64, 2_000_000, 1))
            .unwrap()
            .wait();
        // Some pieces on the GPU first, then the device goes.
        let search = Search::start_in(&pool, spec(prefix, 64, 2_000_000, 1)).unwrap();
        while search.progress().iterations == 0 && !search.is_finished() {
            std::thread::sleep(Duration::from_millis(1));
        }
        gpu.lose();
        let (outcome, progress) = search.wait();
        assert_eq!(outcome, Outcome::Exhausted);
        assert_eq!(progress.iterations, 2_000_000);
        assert_eq!(progress.best, cpu_progress.best);
        let why = gpu.failed().expect("the loss was noticed");
        assert!(!why.is_empty());
        // Later searches run on the CPU from the start.
        finds_a_valid_proof(&pool, prefix);
    }
}
