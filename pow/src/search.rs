//! The search for a proof on dedicated threads.
//!
//! The nonces `start .. start + max_iterations` are cut into chunks of whole kilos
//! (1,000 nonces that share all digits but the last three); each thread claims the next
//! chunk from one atomic counter, so no nonce is hashed twice and no thread idles while
//! another has work. A thread scans its kilo with the fastest kernel this CPU has and
//! checks every promising lane exactly as the chain does. The first thread to find a
//! proof sets the shared stop flag, which every thread reads after each batch of lanes,
//! as does a cancel. The required difficulty lives in an atomic so the caller can lower
//! it as blocks pass; a best result that already meets the lower difficulty wins at once.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::lanes::Kernel;
use super::sha::{Kilo, digest_one_block, hex, leading_zero_nibbles};

/// Nonces a thread claims at a time: whole kilos, a few milliseconds of work.
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
    /// Threads to hash on (at least 1).
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
    /// Hashes done, per thread (each on its own cache line).
    done: Vec<Padded>,
    /// The best achieved difficulty so far, read without the lock.
    best_achieved: AtomicU32,
    best: Mutex<Option<Hit>>,
    found: Mutex<Option<Hit>>,
    running: AtomicU64,
    finished: tokio::sync::Notify,
}

#[repr(align(128))]
struct Padded(AtomicU64);

/// A running search. Dropping it cancels it.
pub struct Search {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
    started: Instant,
    ended: Mutex<Option<Instant>>,
}

impl Search {
    /// Starts the threads and returns at once.
    pub fn start(spec: SearchSpec) -> Search {
        let threads = spec.threads.max(1);
        let shared = Arc::new(Shared {
            required: AtomicU32::new(spec.required.clamp(1, 64)),
            next_chunk: AtomicU64::new(0),
            stop: AtomicBool::new(spec.max_iterations == 0),
            cancelled: AtomicBool::new(false),
            done: (0..threads).map(|_| Padded(AtomicU64::new(0))).collect(),
            best_achieved: AtomicU32::new(0),
            best: Mutex::new(None),
            found: Mutex::new(None),
            running: AtomicU64::new(threads as u64),
            finished: tokio::sync::Notify::new(),
            spec: SearchSpec { threads, ..spec },
        });
        let started = Instant::now();
        let handles = (0..threads)
            .map(|i| {
                let shared = shared.clone();
                std::thread::Builder::new()
                    .name(format!("pow-{i}"))
                    .spawn(move || {
                        let _exit = ExitGuard(&shared);
                        worker(&shared, i);
                    })
                    .expect("spawn a proof-of-work thread")
            })
            .collect();
        Search {
            shared,
            threads: handles,
            started,
            ended: Mutex::new(None),
        }
    }

    /// Stops every thread soon (after its current batch of lanes).
    pub fn cancel(&self) {
        self.shared.cancelled.store(true, Ordering::Relaxed);
        self.shared.stop.store(true, Ordering::Relaxed);
    }

    /// Every thread has stopped.
    pub fn is_finished(&self) -> bool {
        self.shared.running.load(Ordering::Acquire) == 0
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
            .done
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
            threads: self.shared.spec.threads,
            kernel: self.shared.spec.kernel,
        }
    }

    /// Waits (without blocking a runtime thread) until every thread has stopped.
    pub async fn finished(&self) {
        loop {
            let notified = self.shared.finished.notified();
            if self.is_finished() {
                return;
            }
            notified.await;
        }
    }

    /// Joins the threads and says how the search ended, with the last progress.
    pub fn wait(mut self) -> (Outcome, Progress) {
        for t in self.threads.drain(..) {
            let _ = t.join();
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
        self.shared.stop.store(true, Ordering::Relaxed);
        if !self.threads.is_empty() {
            self.shared.cancelled.store(true, Ordering::Relaxed);
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

/// Counts a thread out, also when it panics, and wakes the waiter after the last.
struct ExitGuard<'a>(&'a Shared);

impl Drop for ExitGuard<'_> {
    fn drop(&mut self) {
        if self.0.running.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.finished.notify_waiters();
            self.0.finished.notify_one();
        }
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

fn worker(shared: &Shared, me: usize) {
    let spec = &shared.spec;
    let end = spec.start.saturating_add(spec.max_iterations);
    let prefix = spec.prefix.as_bytes();
    while !shared.stop.load(Ordering::Relaxed) {
        let chunk = shared.next_chunk.fetch_add(1, Ordering::Relaxed);
        let from = spec.start.saturating_add(chunk.saturating_mul(CHUNK));
        if from >= end {
            break;
        }
        let to = from.saturating_add(CHUNK).min(end);
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
                    shared.done[me].0.fetch_add(1, Ordering::Relaxed);
                    if shared.stop.load(Ordering::Relaxed) {
                        return;
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
                shared.done[me]
                    .0
                    .fetch_add(u64::from(out.next - lo), Ordering::Relaxed);
                for &hit in &out.hit_lo[..out.hits] {
                    consider(shared, hi * 1000 + u64::from(hit), kilo.digest(hit));
                }
                lo = out.next;
                if shared.stop.load(Ordering::Relaxed) {
                    return;
                }
            }
            nonce = hi * 1000 + u64::from(lo_to);
        }
    }
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
            let (outcome, progress) = Search::start(spec(prefix, 4, 10_000_000, 1)).wait();
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
            let (outcome, _) =
                Search::start(spec("5-1BUILD77NONCE", 4, 50_000_000, threads)).wait();
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
            let (outcome, progress) = Search::start(s).wait();
            assert_eq!(outcome, Outcome::Exhausted);
            assert_eq!(progress.iterations, max);
            let best = progress.best.unwrap();
            assert!((start..start + max).contains(&best.nonce));
        }
    }

    #[test]
    fn the_best_is_the_most_zeros_seen() {
        let prefix = "5-3REFINE9NONCE";
        let (_, progress) = Search::start(spec(prefix, 64, 20_000, 2)).wait();
        let most = (0..20_000u64)
            .map(|n| crate::achieved_difficulty(&crate::hash_hex(&format!("{prefix}{n}"))))
            .max()
            .unwrap();
        assert_eq!(progress.best.unwrap().achieved, most);
    }

    #[test]
    fn cancel_stops_all_threads_quickly() {
        let search = Search::start(spec("5-1BUILD77NONCE", 64, u64::MAX, 2));
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
        let search = Search::start(spec("5-1BUILD77NONCE", 64, u64::MAX, 2));
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
        let (outcome, _) = Search::start(spec(&prefix, 2, 100_000, 2)).wait();
        let Outcome::Found(hit) = outcome else {
            panic!("{outcome:?}")
        };
        assert!(hit.input.len() > 55);
        assert!(crate::check(&hit.input, &hit.hash, 2).valid());
    }
}
