//! One pool of hashing threads for the whole process.
//!
//! Every search hashes on the same few threads, as many as the machine has cores, so a
//! server with many clients never has more hashing threads than cores however many
//! searches run or how many threads each asks for. A search is a [`Job`] cut into
//! pieces of a few milliseconds; each worker takes its next piece from the next search
//! in turn that has room (no search gets more workers than it asked for), so searches
//! share the cores fairly and a new one starts within a piece's time.
//!
//! Workers start when the first search does and then wait for work. A worker that
//! cannot be started (a process or memory limit) is not fatal: the pool runs on the
//! workers it has, and a search is refused only when it has none at all.

use std::io;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// A piece of work the pool runs: one search.
pub trait Job: Send + Sync + 'static {
    /// Runs one piece on lane `slot` (below [`Job::lanes`]; no two workers share a lane
    /// at once). False when the job has no more pieces to hand out; the pieces other
    /// workers are running still end as they would.
    fn run_piece(&self, slot: usize) -> bool;
    /// Whether the job has been stopped (found or cancelled): no more pieces.
    fn stopped(&self) -> bool;
    /// The most workers the job takes at once.
    fn lanes(&self) -> usize;
    /// Called once, when the job has ended and no worker is on it any more.
    fn finished(&self);
    /// Runs one piece on `gpu` (a pool made by [`Pool::with_gpu`]). False when there
    /// are no more pieces, as [`Job::run_piece`].
    #[cfg(feature = "gpu")]
    fn run_gpu_piece(&self, gpu: &crate::gpu::Gpu) -> bool {
        let _ = gpu;
        false
    }
}

/// Starts a thread; the pool's own uses `std::thread::Builder`, tests inject failures.
type Spawner = dyn Fn(String, Box<dyn FnOnce() + Send>) -> io::Result<()> + Send + Sync;

/// The process-wide hashing pool, or one made for a test.
pub struct Pool {
    inner: Arc<Inner>,
}

struct Inner {
    size: usize,
    state: Mutex<State>,
    work: Condvar,
    spawn: Box<Spawner>,
    /// The GPU every piece runs on, for a pool made by [`Pool::with_gpu`].
    #[cfg(feature = "gpu")]
    gpu: Option<Arc<crate::gpu::Gpu>>,
}

#[derive(Default)]
struct State {
    /// Workers running.
    workers: usize,
    /// Workers hashing now.
    busy: usize,
    /// Searches not yet finished, in the order they came.
    queue: Vec<Entry>,
    /// Where the next worker starts looking (round robin).
    turn: usize,
    /// Workers started over the pool's life (to show it never grows past its size).
    started: usize,
    /// Worker starts that failed.
    spawn_failures: usize,
    closing: bool,
}

struct Entry {
    job: Arc<dyn Job>,
    active: usize,
    free: Vec<usize>,
    /// A piece said there are no more.
    exhausted: bool,
}

impl Entry {
    fn ended(&self) -> bool {
        self.active == 0 && (self.exhausted || self.job.stopped())
    }
}

/// A look at the pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stats {
    /// The most workers it runs.
    pub size: usize,
    /// Workers running (waiting or hashing).
    pub workers: usize,
    /// Workers hashing now.
    pub busy: usize,
    /// Searches not finished.
    pub searches: usize,
    /// Worker starts that failed.
    pub spawn_failures: usize,
}

/// No worker could be started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoWorkers(pub String);

impl std::fmt::Display for NoWorkers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "no proof-of-work thread could be started: {}", self.0)
    }
}

impl std::error::Error for NoWorkers {}

/// The cores this process may use (at least 1).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

impl Pool {
    /// Whether this pool hashes on a GPU.
    pub fn on_gpu(&self) -> bool {
        #[cfg(feature = "gpu")]
        {
            self.inner.gpu.is_some()
        }
        #[cfg(not(feature = "gpu"))]
        {
            false
        }
    }

    /// A pool of at most `size` workers (at least 1).
    pub fn new(size: usize) -> Pool {
        Pool::with_spawner(size, |name, f| {
            std::thread::Builder::new().name(name).spawn(f).map(drop)
        })
    }

    /// A pool whose threads are started by `spawn` (a test makes it fail).
    pub fn with_spawner(
        size: usize,
        spawn: impl Fn(String, Box<dyn FnOnce() + Send>) -> io::Result<()> + Send + Sync + 'static,
    ) -> Pool {
        Pool {
            inner: Arc::new(Inner {
                size: size.max(1),
                state: Mutex::new(State::default()),
                work: Condvar::new(),
                spawn: Box::new(spawn),
                #[cfg(feature = "gpu")]
                gpu: None,
            }),
        }
    }

    /// A pool of one worker that runs every piece on `gpu`, searches taking turns.
    #[cfg(feature = "gpu")]
    pub fn with_gpu(gpu: Arc<crate::gpu::Gpu>) -> Pool {
        Pool {
            inner: Arc::new(Inner {
                size: 1,
                state: Mutex::new(State::default()),
                work: Condvar::new(),
                spawn: Box::new(|name, f| {
                    std::thread::Builder::new().name(name).spawn(f).map(drop)
                }),
                gpu: Some(gpu),
            }),
        }
    }

    /// The most workers this pool runs.
    pub fn size(&self) -> usize {
        self.inner.size
    }

    pub fn stats(&self) -> Stats {
        let st = self.inner.lock();
        Stats {
            size: self.inner.size,
            workers: st.workers,
            busy: st.busy,
            searches: st.queue.len(),
            spawn_failures: st.spawn_failures,
        }
    }

    /// Queues `job`, starting workers up to the pool's size if they are not running yet.
    /// Returns the workers running. Refused only when there is not a single one.
    pub fn submit(&self, job: Arc<dyn Job>) -> Result<usize, NoWorkers> {
        let mut st = self.inner.lock();
        let mut last_error = None;
        while st.workers < self.inner.size {
            let inner = self.inner.clone();
            let name = format!("pow-{}", st.started);
            match (self.inner.spawn)(name, Box::new(move || inner.work_loop())) {
                Ok(()) => {
                    st.workers += 1;
                    st.started += 1;
                }
                Err(e) => {
                    st.spawn_failures += 1;
                    last_error = Some(e);
                    break;
                }
            }
        }
        if st.workers == 0 {
            let why = last_error.map_or_else(|| "unknown".to_string(), |e| e.to_string());
            drop(st);
            job.finished();
            return Err(NoWorkers(why));
        }
        if job.stopped() {
            let workers = st.workers;
            drop(st);
            job.finished();
            return Ok(workers);
        }
        let lanes = job.lanes().max(1);
        st.queue.push(Entry {
            job,
            active: 0,
            // Popped from the end: lane 0 first.
            free: (0..lanes).rev().collect(),
            exhausted: false,
        });
        let workers = st.workers;
        drop(st);
        self.inner.work.notify_all();
        Ok(workers)
    }

    /// Ends what has stopped with no worker on it, and wakes the workers; called after a
    /// job is stopped from outside (a cancel).
    pub fn poke(&self) {
        self.inner.poke();
    }

    /// A handle that pokes this pool, for a job to hold.
    pub(crate) fn poker(&self) -> Poker {
        Poker(self.inner.clone())
    }
}

/// Pokes a pool (see [`Pool::poke`]) from a job's owner.
pub(crate) struct Poker(Arc<Inner>);

impl Poker {
    pub(crate) fn poke(&self) {
        self.0.poke();
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // Only test pools are dropped; their workers leave once idle.
        self.inner.lock().closing = true;
        self.inner.work.notify_all();
    }
}

impl State {
    /// Finishes the ended jobs no worker is on, and takes them out of the queue.
    fn sweep(&mut self) {
        let mut i = 0;
        while i < self.queue.len() {
            if self.queue[i].ended() {
                let e = self.queue.remove(i);
                if self.turn > i {
                    self.turn -= 1;
                }
                e.job.finished();
            } else {
                i += 1;
            }
        }
    }

    /// The next job in turn with room for one more worker, and the lane it gets.
    fn pick(&mut self) -> Option<(Arc<dyn Job>, usize)> {
        self.sweep();
        let n = self.queue.len();
        for k in 0..n {
            let i = (self.turn + k) % n;
            let e = &mut self.queue[i];
            if e.exhausted || e.job.stopped() || e.active >= e.job.lanes().max(1) {
                continue;
            }
            let Some(slot) = e.free.pop() else { continue };
            e.active += 1;
            self.turn = (i + 1) % n;
            self.busy += 1;
            return Some((e.job.clone(), slot));
        }
        None
    }

    /// A worker is done with a piece of `job`.
    fn release(&mut self, job: &Arc<dyn Job>, slot: usize, more: bool) {
        self.busy -= 1;
        if let Some(i) = self.queue.iter().position(|e| Arc::ptr_eq(&e.job, job)) {
            let e = &mut self.queue[i];
            e.active -= 1;
            e.free.push(slot);
            e.exhausted |= !more;
            if e.ended() {
                let e = self.queue.remove(i);
                if self.turn > i {
                    self.turn -= 1;
                }
                e.job.finished();
            }
        }
    }
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn poke(&self) {
        let mut st = self.lock();
        st.sweep();
        drop(st);
        self.work.notify_all();
    }

    fn work_loop(self: Arc<Self>) {
        loop {
            let (job, slot) = {
                let mut st = self.lock();
                loop {
                    if st.closing {
                        st.workers -= 1;
                        return;
                    }
                    if let Some(pick) = st.pick() {
                        break pick;
                    }
                    st = self.work.wait(st).unwrap_or_else(|e| e.into_inner());
                }
            };
            // A piece that panics ends its job, not the worker.
            let more = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                #[cfg(feature = "gpu")]
                if let Some(gpu) = &self.gpu {
                    return job.run_gpu_piece(gpu);
                }
                job.run_piece(slot)
            }))
            .unwrap_or(false);
            self.lock().release(&job, slot, more);
            if !more {
                // Room has opened (and a finished job may be waited on): wake the rest.
                self.work.notify_all();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    /// A job of `pieces` pieces of about a millisecond each.
    struct Counted {
        pieces: u64,
        lanes: usize,
        taken: AtomicU64,
        on_lane: Vec<AtomicUsize>,
        most_at_once: AtomicUsize,
        now: AtomicUsize,
        stop: AtomicBool,
        done: Mutex<bool>,
        cv: Condvar,
    }

    impl Counted {
        fn stop(&self) {
            self.stop.store(true, Ordering::SeqCst);
        }

        fn new(pieces: u64, lanes: usize) -> Arc<Counted> {
            Arc::new(Counted {
                pieces,
                lanes,
                taken: AtomicU64::new(0),
                on_lane: (0..lanes).map(|_| AtomicUsize::new(0)).collect(),
                most_at_once: AtomicUsize::new(0),
                now: AtomicUsize::new(0),
                stop: AtomicBool::new(false),
                done: Mutex::new(false),
                cv: Condvar::new(),
            })
        }

        fn wait(&self, within: Duration) -> bool {
            let done = self.done.lock().unwrap();
            let (done, _) = self.cv.wait_timeout_while(done, within, |d| !*d).unwrap();
            *done
        }
    }

    impl Job for Counted {
        fn run_piece(&self, slot: usize) -> bool {
            assert_eq!(
                self.on_lane[slot].fetch_add(1, Ordering::SeqCst),
                0,
                "two workers on lane {slot}"
            );
            let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
            self.most_at_once.fetch_max(now, Ordering::SeqCst);
            let n = self.taken.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(1));
            self.now.fetch_sub(1, Ordering::SeqCst);
            self.on_lane[slot].fetch_sub(1, Ordering::SeqCst);
            n + 1 < self.pieces
        }
        fn stopped(&self) -> bool {
            self.stop.load(Ordering::SeqCst)
        }
        fn lanes(&self) -> usize {
            self.lanes
        }
        fn finished(&self) {
            *self.done.lock().unwrap() = true;
            self.cv.notify_all();
        }
    }

    #[test]
    fn a_job_never_gets_more_workers_than_it_asked_for_nor_the_pool_more_than_its_size() {
        let pool = Pool::new(4);
        let one = Counted::new(60, 1);
        let many = Counted::new(200, 64);
        pool.submit(one.clone()).unwrap();
        pool.submit(many.clone()).unwrap();
        assert!(one.wait(Duration::from_secs(10)));
        assert!(many.wait(Duration::from_secs(10)));
        assert_eq!(one.most_at_once.load(Ordering::SeqCst), 1);
        assert!(many.most_at_once.load(Ordering::SeqCst) <= 4);
        let stats = pool.stats();
        assert_eq!((stats.workers, stats.busy, stats.searches), (4, 0, 0));
    }

    #[test]
    fn searches_share_the_workers_in_turn() {
        // One worker, a long job first: a second job still runs before the first ends.
        let pool = Pool::new(1);
        let long = Counted::new(u64::MAX, 8);
        let short = Counted::new(20, 8);
        pool.submit(long.clone()).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        let before = long.taken.load(Ordering::SeqCst);
        pool.submit(short.clone()).unwrap();
        assert!(
            short.wait(Duration::from_secs(5)),
            "the second job waited for the first"
        );
        let during = long.taken.load(Ordering::SeqCst) - before;
        assert!(
            during >= 10,
            "the long job went on in turn: {during} pieces"
        );
        long.stop();
        pool.poke();
        assert!(long.wait(Duration::from_secs(5)));
    }

    #[test]
    fn a_job_stopped_from_outside_finishes_even_with_no_worker_on_it() {
        let pool = Pool::new(1);
        let busy = Counted::new(u64::MAX, 1);
        pool.submit(busy.clone()).unwrap();
        let waiting = Counted::new(u64::MAX, 1);
        pool.submit(waiting.clone()).unwrap();
        waiting.stop();
        pool.poke();
        assert!(waiting.wait(Duration::from_secs(5)));
        busy.stop();
        pool.poke();
        assert!(busy.wait(Duration::from_secs(5)));
        assert_eq!(pool.stats().searches, 0);
    }

    #[test]
    fn a_pool_that_cannot_start_a_thread_refuses_without_panicking() {
        let pool = Pool::with_spawner(4, |_, _| {
            Err(io::Error::new(
                io::ErrorKind::WouldBlock,
                "Resource temporarily unavailable",
            ))
        });
        let job = Counted::new(10, 4);
        let e = pool.submit(job.clone()).unwrap_err();
        assert!(
            e.to_string().contains("Resource temporarily unavailable"),
            "{e}"
        );
        assert!(job.wait(Duration::ZERO), "the refused job is finished");
        let stats = pool.stats();
        assert_eq!((stats.workers, stats.searches), (0, 0));
        assert!(stats.spawn_failures >= 1);
    }

    #[test]
    fn a_pool_runs_on_the_threads_it_could_start() {
        let allowed = Arc::new(AtomicUsize::new(1));
        let pool = Pool::with_spawner(4, move |name, f| {
            if allowed
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_err()
            {
                return Err(io::Error::new(io::ErrorKind::WouldBlock, "limit"));
            }
            std::thread::Builder::new().name(name).spawn(f).map(drop)
        });
        let job = Counted::new(30, 4);
        assert_eq!(pool.submit(job.clone()).unwrap(), 1);
        let at = Instant::now();
        assert!(
            job.wait(Duration::from_secs(10)),
            "after {:?}",
            at.elapsed()
        );
        assert_eq!(job.most_at_once.load(Ordering::SeqCst), 1);
        assert_eq!(pool.stats().workers, 1);
    }
}
