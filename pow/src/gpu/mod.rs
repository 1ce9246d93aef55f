//! The proof-of-work search on a GPU, through wgpu (Vulkan, Metal, DX12).
//!
//! [`Gpu::open`] takes the adapter wgpu prefers (a discrete GPU first) and builds the
//! general search kernel (`search.wgsl`). [`Gpu::scan`] hashes a range of nonces for
//! one input prefix: the host compresses the whole blocks before the digits once, a
//! kernel hashes the rest for every nonce and reports the best of each workgroup, and
//! the host checks the best on the CPU before it is believed, so a wrong kernel cannot
//! give a wrong answer. Batches of [`Tuning::fast_from`] nonces or more run on a kernel
//! written for their layout (`kernel.rs`), built at its first use and kept.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::sha::{IV, expand, rounds};

mod kernel;
mod quiet;

use kernel::{Input, Layout};

const SHADER: &str = include_str!("search.wgsl");

/// Invocations in a workgroup (the kernel's `@workgroup_size`).
const WORKGROUP: u64 = 64;

/// Nonces one invocation hashes in a row.
const PER_INVOCATION: u64 = 64;

/// The most workgroups along one dimension of a dispatch.
const MAX_GROUPS: u64 = 65_535;

/// The most nonces one dispatch of the general kernel hashes: short enough that a
/// dispatch never nears an operating system's GPU watchdog. The fast kernel's
/// dispatches are a piece long, which is sized to about 30 ms.
const DISPATCH: u64 = 1 << 22;

/// The most digits the kernel prints (the low part of a nonce, below 10^9).
const LOW_DIGITS: u32 = 9;

/// A GPU, its device and the search kernel built for it.
pub struct Gpu {
    device: wgpu::Device,
    queue: wgpu::Queue,
    pipeline: wgpu::ComputePipeline,
    info: wgpu::AdapterInfo,
    tuning: Tuning,
    /// Why the GPU failed, once it has: searches then hash on the CPU.
    failed: std::sync::OnceLock<String>,
    /// The fast kernels built so far, one per layout of the message.
    fast: Mutex<HashMap<Layout, Arc<wgpu::ComputePipeline>>>,
    /// Nonces a piece hashes: grown or shrunk so that a piece takes about
    /// [`PIECE_TIME`].
    piece: std::sync::atomic::AtomicU64,
}

/// The fewest nonces a piece hashes (and the first piece's size).
const MIN_PIECE: u64 = 16_000;

/// How long one piece should take: searches take turns and a cancel is heard at this
/// pace.
const PIECE_TIME: std::time::Duration = std::time::Duration::from_millis(30);

/// How the search uses the GPU: the fast kernel's shape, and from what size a batch
/// is worth building it for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tuning {
    /// Invocations in a workgroup of the fast kernel.
    pub workgroup: u32,
    /// Last digits the fast kernel counts in loops: an invocation hashes `10^inner`
    /// nonces (1 to 3).
    pub inner: u32,
    /// Batches of at least this many nonces run on a kernel built for their layout
    /// (built once, then kept); smaller ones run on the general kernel, which is built
    /// when the GPU is opened.
    pub fast_from: u64,
}

impl Default for Tuning {
    fn default() -> Self {
        // The fast kernel is many times the general one's speed (90x on lavapipe), so
        // every batch but the smallest (the nonces of up to four digits) is worth
        // building it for. Below the first piece's size (16,000 nonces), or a slow GPU
        // would never leave the general kernel.
        Tuning {
            workgroup: 64,
            inner: 2,
            fast_from: 10_000,
        }
    }
}

/// What a scan found: the best nonce of the range and its leading hex zeros.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Best {
    pub nonce: u64,
    pub achieved: u32,
}

/// Native wgpu futures are ready at once: one poll resolves them.
fn block_on<F: Future>(f: F) -> F::Output {
    let mut cx = Context::from_waker(Waker::noop());
    let mut f = pin!(f);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::yield_now();
    }
}

/// The adapter wgpu prefers, without opening it: what `--pow-backend auto` looks at
/// before it pays for a device and a kernel.
pub fn preferred_adapter() -> Result<wgpu::AdapterInfo, String> {
    Ok(preferred()?.get_info())
}

fn preferred() -> Result<wgpu::Adapter, String> {
    // The drivers' own lines on stderr are logged, not printed (`quiet.rs`).
    quiet::quietly(|| {
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
        desc.backends = wgpu::Backends::PRIMARY.with_env();
        desc.flags = wgpu::InstanceFlags::empty();
        let instance = wgpu::Instance::new(desc);
        block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            ..Default::default()
        }))
        .map_err(|e| format!("no GPU adapter: {e}"))
    })
}

/// How a person reads an adapter: its name, kind and backend.
pub fn describe_adapter(info: &wgpu::AdapterInfo) -> String {
    format!("{} ({:?}, {:?})", info.name, info.device_type, info.backend)
}

impl Gpu {
    /// The adapter wgpu prefers, with the kernel built; why not, when there is none or
    /// its driver fails.
    pub fn open() -> Result<Gpu, String> {
        Gpu::open_tuned(Tuning::default())
    }

    /// [`Gpu::open`] with the search shaped by `tuning`.
    pub fn open_tuned(tuning: Tuning) -> Result<Gpu, String> {
        let tuning = Tuning {
            workgroup: tuning.workgroup.clamp(1, 256),
            inner: tuning.inner.clamp(1, 3),
            ..tuning
        };
        let adapter = preferred()?;
        let info = adapter.get_info();
        let (device, queue) = quiet::quietly(|| {
            block_on(adapter.request_device(&wgpu::DeviceDescriptor {
                label: Some("proof-of-work"),
                required_limits: wgpu::Limits::downlevel_defaults(),
                memory_hints: wgpu::MemoryHints::Performance,
                ..Default::default()
            }))
        })
        .map_err(|e| format!("the GPU {} would not open: {e}", info.name))?;
        // wgpu's default for an error no scope catches is a panic; scans catch their
        // own errors, and anything else is logged.
        device.on_uncaptured_error(Arc::new(|e| {
            tracing::warn!("the proof-of-work GPU reported an error: {e}");
        }));
        let pipeline = build(&device, "search", SHADER.into())
            .map_err(|e| format!("the search kernel does not build on {}: {e}", info.name))?;
        Ok(Gpu {
            device,
            queue,
            pipeline,
            info,
            tuning,
            failed: std::sync::OnceLock::new(),
            fast: Mutex::new(HashMap::new()),
            piece: std::sync::atomic::AtomicU64::new(MIN_PIECE),
        })
    }

    /// Why the GPU failed, once a scan has failed on it.
    pub fn failed(&self) -> Option<&str> {
        self.failed.get().map(String::as_str)
    }

    /// Records that the GPU failed and why. True the first time (the caller logs it).
    pub fn fail(&self, why: &str) -> bool {
        self.failed.set(why.to_string()).is_ok()
    }

    /// Destroys the device, as a driver reset or an unplugged GPU would: every scan
    /// after it fails.
    #[cfg(test)]
    pub(crate) fn lose(&self) {
        self.device.destroy();
    }

    /// Nonces the next piece should hash.
    pub fn piece_nonces(&self) -> u64 {
        self.piece.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The adapter's name, its kind and its backend, as a person reads them.
    pub fn describe(&self) -> String {
        describe_adapter(&self.info)
    }

    /// Whether the device is the CPU itself under a GPU's interface (a software driver
    /// such as Mesa's lavapipe): it hashes, but seldom faster than the CPU kernel.
    pub fn is_emulated(&self) -> bool {
        self.info.device_type == wgpu::DeviceType::Cpu
    }

    /// The best nonce of `start .. start + count` for `prefix` (the most leading hex
    /// zeros, the smallest nonce on a tie), checked on the CPU. None for an empty range.
    pub fn scan(&self, prefix: &[u8], start: u64, count: u64) -> Result<Option<Best>, String> {
        let began = std::time::Instant::now();
        let end = start.saturating_add(count);
        let mut best: Option<Best> = None;
        let mut n = start;
        while n < end {
            let (batch, len) = Batch::new(prefix, n, end);
            let len = if len >= self.tuning.fast_from {
                len
            } else {
                len.min(DISPATCH)
            };
            let found = self.run(&batch, len)?;
            if let Some(f) = found
                && best.is_none_or(|b| f.achieved > b.achieved)
            {
                best = Some(f);
            }
            n += len;
        }
        self.tune(count, began.elapsed());
        if let Some(b) = best {
            let input = [prefix, b.nonce.to_string().as_bytes()].concat();
            let digest =
                crate::sha::digest_one_block(&input).unwrap_or_else(|| crate::digest_words(&input));
            let achieved = crate::sha::leading_zero_nibbles(&digest);
            if achieved != b.achieved {
                return Err(format!(
                    "the GPU said nonce {} has {} leading zeros; the CPU finds {achieved}",
                    b.nonce, b.achieved
                ));
            }
        }
        Ok(best)
    }

    /// Grows or shrinks the piece towards [`PIECE_TIME`] from how long `count` nonces
    /// took.
    fn tune(&self, count: u64, took: std::time::Duration) {
        use std::sync::atomic::Ordering;
        let now = self.piece.load(Ordering::Relaxed);
        if count < now {
            return;
        }
        let next = if took < PIECE_TIME / 2 {
            now.saturating_mul(2)
        } else if took > PIECE_TIME * 2 {
            now / 2
        } else {
            now
        };
        self.piece
            .store(next.clamp(MIN_PIECE, 1 << 34), Ordering::Relaxed);
    }

    /// The kernel built for `layout`, built now if it was not yet.
    fn fast_kernel(&self, layout: &Layout) -> Result<Arc<wgpu::ComputePipeline>, String> {
        let mut fast = self.fast.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = fast.get(layout) {
            return Ok(p.clone());
        }
        let pipeline =
            build(&self.device, "search (fast)", kernel::source(layout)).map_err(|e| {
                format!(
                    "the fast search kernel for {layout:?} does not build on {}: {e}",
                    self.info.name
                )
            })?;
        let pipeline = Arc::new(pipeline);
        fast.insert(*layout, pipeline.clone());
        Ok(pipeline)
    }

    /// The best of the batch's `len` nonces: on the kernel built for the batch's layout
    /// when the batch is large enough to be worth it, else on the general one.
    fn run(&self, batch: &Batch, len: u64) -> Result<Option<Best>, String> {
        if len >= self.tuning.fast_from {
            let layout = Layout {
                blocks: batch.blocks,
                at: batch.at,
                digits: batch.digits,
                inner: self.tuning.inner.min(batch.digits),
                workgroup: self.tuning.workgroup,
            };
            let pipeline = self.fast_kernel(&layout)?;
            let lo = (batch.lo_start, batch.lo_start + len as u32);
            let input = Input::new(&layout, batch.midstate, &batch.tail, lo);
            let groups = input
                .invocations(&layout)
                .div_ceil(u64::from(layout.workgroup));
            let uniform = input.bytes();
            self.dispatch(&Work {
                pipeline: &pipeline,
                uniform: &uniform,
                groups,
                batch,
            })
        } else {
            let groups = len.div_ceil(PER_INVOCATION).div_ceil(WORKGROUP);
            let bytes = batch.bytes(len, PER_INVOCATION);
            self.dispatch(&Work {
                pipeline: &self.pipeline,
                uniform: &bytes,
                groups,
                batch,
            })
        }
    }

    /// One dispatch; the best of the workgroups' bests, or why the GPU refused it.
    fn dispatch(&self, work: &Work<'_>) -> Result<Option<Best>, String> {
        let memory = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let found = self.dispatch_in_scope(work);
        let errors = [block_on(validation.pop()), block_on(memory.pop())];
        if let Some(e) = errors.into_iter().flatten().next() {
            return Err(format!("the GPU refused the search: {e}"));
        }
        found
    }

    fn dispatch_in_scope(&self, work: &Work<'_>) -> Result<Option<Best>, String> {
        let Work {
            pipeline,
            uniform,
            groups,
            batch,
        } = *work;
        let (gx, gy) = (groups.min(MAX_GROUPS), groups.div_ceil(MAX_GROUPS));
        let slots = gx * gy;
        let buffer = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("batch"),
            size: uniform.len() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        self.queue.write_buffer(&buffer, 0, uniform);
        let out_size = slots * 8;
        let out = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("best"),
            size: out_size,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let readback = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("readback"),
            size: out_size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let bind = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: buffer.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: out.as_entire_binding(),
                },
            ],
        });
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: None,
                timestamp_writes: None,
            });
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, &bind, &[]);
            pass.dispatch_workgroups(gx as u32, gy as u32, 1);
        }
        encoder.copy_buffer_to_buffer(&out, 0, &readback, 0, out_size);
        let submitted = self.queue.submit([encoder.finish()]);
        let (tx, rx) = std::sync::mpsc::channel();
        readback.map_async(wgpu::MapMode::Read, .., move |r| {
            let _ = tx.send(r);
        });
        self.device
            .poll(wgpu::PollType::Wait {
                submission_index: Some(submitted),
                timeout: None,
            })
            .map_err(|e| format!("the GPU did not finish: {e}"))?;
        rx.recv()
            .map_err(|e| format!("the GPU's answer was lost: {e}"))?
            .map_err(|e| format!("the GPU's answer could not be read: {e}"))?;
        let mut best: Option<Best> = None;
        {
            let view = readback
                .get_mapped_range(..)
                .map_err(|e| format!("the GPU's answer could not be read: {e}"))?;
            for pair in view.chunks_exact(8) {
                let achieved = u32::from_le_bytes([pair[0], pair[1], pair[2], pair[3]]);
                let lo = u32::from_le_bytes([pair[4], pair[5], pair[6], pair[7]]);
                if lo == u32::MAX {
                    continue;
                }
                let nonce = batch.nonce(lo);
                let better = best.is_none_or(|b| {
                    achieved > b.achieved || (achieved == b.achieved && nonce < b.nonce)
                });
                if better {
                    best = Some(Best { nonce, achieved });
                }
            }
        }
        readback.unmap();
        Ok(best)
    }
}

/// One dispatch: `groups` workgroups of `pipeline` on `uniform`, for `batch`.
struct Work<'a> {
    pipeline: &'a wgpu::ComputePipeline,
    uniform: &'a [u8],
    groups: u64,
    batch: &'a Batch,
}

/// Builds the compute pipeline of WGSL `source`; the validation error when it does not
/// build.
fn build(
    device: &wgpu::Device,
    label: &str,
    source: String,
) -> Result<wgpu::ComputePipeline, wgpu::Error> {
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(label),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(label),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: wgpu::PipelineCompilationOptions::default(),
        cache: None,
    });
    match block_on(scope.pop()) {
        Some(e) => Err(e),
        None => Ok(pipeline),
    }
}

/// One dispatch's input: the nonces from `first` that share their digits but the last
/// `digits`, as the kernel reads them.
struct Batch {
    midstate: [u32; 8],
    /// The message's last one or two blocks, big-endian words, zero where digits go.
    tail: [u32; 32],
    blocks: u32,
    at: u32,
    digits: u32,
    lo_start: u32,
    /// What the digits printed stand beside: the nonce is `high + lo`.
    high: u64,
}

impl Batch {
    const BYTES: usize = 192;

    /// The batch from nonce `n`, and how many nonces (up to `end`) it covers: within
    /// one count of digits and one high part.
    fn new(prefix: &[u8], n: u64, end: u64) -> (Batch, u64) {
        let width = decimal_width(n);
        let (digits, high, stop) = if width <= LOW_DIGITS {
            (width, 0, 10u64.pow(width))
        } else {
            let unit = 10u64.pow(LOW_DIGITS);
            (LOW_DIGITS, n / unit * unit, (n / unit + 1) * unit)
        };
        let stop = stop.min(10u64.saturating_pow(width)).min(end);
        let mut fixed = prefix.to_vec();
        if high > 0 {
            fixed.extend_from_slice((high / 10u64.pow(LOW_DIGITS)).to_string().as_bytes());
        }
        let whole = fixed.len() / 64;
        let mut state = IV;
        for block in fixed[..whole * 64].chunks_exact(64) {
            let words: [u32; 16] = std::array::from_fn(|i| {
                u32::from_be_bytes(block[i * 4..i * 4 + 4].try_into().unwrap_or([0; 4]))
            });
            let w = expand(&words);
            let mut s = state;
            rounds(&mut s, &w, 0, 64);
            for i in 0..8 {
                state[i] = state[i].wrapping_add(s[i]);
            }
        }
        let rest = &fixed[whole * 64..];
        let total_len = (fixed.len() + digits as usize) as u64;
        let used = rest.len() + digits as usize;
        let blocks = if used + 9 <= 64 { 1 } else { 2 };
        let mut bytes = vec![0u8; blocks * 64];
        bytes[..rest.len()].copy_from_slice(rest);
        bytes[used] = 0x80;
        let bits = total_len * 8;
        bytes[blocks * 64 - 8..].copy_from_slice(&bits.to_be_bytes());
        let mut tail = [0u32; 32];
        for (i, word) in bytes.chunks_exact(4).enumerate() {
            tail[i] = u32::from_be_bytes(word.try_into().unwrap_or([0; 4]));
        }
        let batch = Batch {
            midstate: state,
            tail,
            blocks: blocks as u32,
            at: rest.len() as u32,
            digits,
            lo_start: (n - high) as u32,
            high,
        };
        (batch, stop - n)
    }

    fn nonce(&self, lo: u32) -> u64 {
        self.high + u64::from(lo)
    }

    fn bytes(&self, count: u64, per: u64) -> Vec<u8> {
        let mut words = Vec::with_capacity(Self::BYTES / 4);
        words.extend_from_slice(&self.midstate);
        words.extend_from_slice(&self.tail);
        words.extend_from_slice(&[self.blocks, self.at, self.digits, self.lo_start]);
        words.extend_from_slice(&[count as u32, per as u32, 0, 0]);
        words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }
}

/// Decimal digits of `n` (1 for 0).
fn decimal_width(n: u64) -> u32 {
    n.checked_ilog10().map_or(1, |l| l + 1)
}

/// The GPU for a test: None (with a note) where there is none, except under CI, which
/// installs lavapipe and so must have one.
#[cfg(test)]
pub(crate) fn for_test() -> Option<std::sync::Arc<Gpu>> {
    match Gpu::open() {
        Ok(g) => Some(std::sync::Arc::new(g)),
        Err(why) => {
            let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
            assert!(
                !ci,
                "CI needs a GPU for these tests (.ci/run installs lavapipe): {why}"
            );
            eprintln!("note: no GPU here ({why}); skipping");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The best of a range as the CPU finds it, one nonce at a time.
    fn cpu_best(prefix: &[u8], start: u64, count: u64) -> Best {
        let mut best = Best {
            nonce: start,
            achieved: 0,
        };
        let mut first = true;
        for nonce in start..start + count {
            let input = [prefix, nonce.to_string().as_bytes()].concat();
            let achieved = crate::sha::leading_zero_nibbles(&crate::digest_words(&input));
            if first || achieved > best.achieved {
                best = Best { nonce, achieved };
                first = false;
            }
        }
        best
    }

    /// Ranges that put the digits in each place the kernels handle.
    fn layouts() -> Vec<(String, u64, u64)> {
        let long = "5-1".repeat(25) + "BUILD120000NONCE";
        [
            ("5-1BUILD1NONCE", 0u64, 3_000u64),       // 1..4 digits, one block
            ("5-1BUILD1NONCE", 99_990, 30),           // across 10^5
            ("5-1BUILD120000NONCE", 999_999_990, 30), // across 10^9: a high part appears
            ("5-1BUILD120000NONCE", 123_456_789_000, 2_000), // 12 digits
            (long.as_str(), 0, 2_000),                // the digits in a second block
            ("5-1234567890BUILD120000NONCE12345678", 500, 2_000), // padding into a second block
            ("5-1234567890BUILD120000NONCE1234567890", 1_234_567, 2_345), // digits across blocks
            ("5-42BUILD1280144NONCE", 100_000_123, 4_321), // the benchmark's input
        ]
        .into_iter()
        .map(|(p, s, c)| (p.to_string(), s, c))
        .collect()
    }

    fn finds_the_cpus_best(gpu: &Gpu) {
        for (prefix, start, count) in layouts() {
            let got = gpu.scan(prefix.as_bytes(), start, count).unwrap().unwrap();
            let want = cpu_best(prefix.as_bytes(), start, count);
            assert_eq!(
                got, want,
                "{prefix} from {start}, {count} nonces, {:?}",
                gpu.tuning
            );
        }
    }

    /// Pieces grow only when they are quick, and the general kernel is too slow for a
    /// software GPU's pieces ever to grow: the fast kernel must start within the
    /// smallest piece.
    #[test]
    fn the_fast_kernel_starts_within_the_smallest_piece() {
        assert!(Tuning::default().fast_from < MIN_PIECE);
    }

    #[test]
    fn the_general_kernel_finds_the_cpus_best_for_each_layout() {
        let Some(gpu) = for_test() else { return };
        eprintln!("GPU: {}", gpu.describe());
        finds_the_cpus_best(&gpu);
    }

    /// The kernels built for each layout, with one, two and three digits counted per
    /// nonce and two workgroup sizes.
    #[test]
    fn the_fast_kernels_find_the_cpus_best_for_each_layout() {
        if for_test().is_none() {
            return;
        }
        for (inner, workgroup) in [(1, 64), (2, 128), (3, 32)] {
            let gpu = Gpu::open_tuned(Tuning {
                workgroup,
                inner,
                fast_from: 0,
            })
            .unwrap();
            finds_the_cpus_best(&gpu);
        }
    }

    /// With the Vulkan loader given no driver (as on a machine with no GPU driver at
    /// all), opening says why instead of failing any other way. Run in a child process
    /// of this test binary, so that the setting touches no other test.
    #[test]
    fn with_no_driver_opening_says_why() {
        if std::env::var_os("POW_GPU_CHILD").is_some() {
            let why = Gpu::open().err().expect("no adapter without a driver");
            assert!(why.starts_with("no GPU adapter"), "{why}");
            return;
        }
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "gpu::tests::with_no_driver_opening_says_why",
                "--nocapture",
            ])
            .env("POW_GPU_CHILD", "1")
            .env("VK_ICD_FILENAMES", "/nonexistent.json")
            .env("VK_DRIVER_FILES", "/nonexistent.json")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{text}");
        assert!(text.contains("1 passed"), "{text}");
    }
}
