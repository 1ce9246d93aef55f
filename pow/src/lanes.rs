//! Many nonces at once: one SHA-256 compression written once over a `Lanes` type and
//! instantiated for a portable scalar lane (`u32`), AVX2 (8 lanes) and AVX-512 (16
//! lanes). The kernel is chosen at run time by CPU feature detection; every kernel
//! gives the same digests as the scalar code in `sha.rs` (tested lane by lane).
//!
//! Only the digest's first word is tested in the vector code: a lane whose first word
//! has enough leading zero nibbles is handed back to the caller, which checks the nonce
//! exactly as the chain does before anything is reported.

use std::sync::atomic::{AtomicBool, Ordering};

use super::sha::{IV, K, Kilo};

/// A vector of `N` 32-bit lanes. Every method is `unsafe` because the SIMD types need
/// their CPU feature; the kernels only call them from functions compiled for it after
/// detecting it.
pub(crate) trait Lanes: Copy {
    const N: usize;
    unsafe fn splat(x: u32) -> Self;
    /// Reads `N` words.
    unsafe fn load(x: &[u32; 16]) -> Self;
    /// Writes `N` words.
    unsafe fn store(self, out: &mut [u32; 16]);
    unsafe fn add(self, b: Self) -> Self;
    unsafe fn xor(self, b: Self) -> Self;
    unsafe fn and(self, b: Self) -> Self;
    unsafe fn or(self, b: Self) -> Self;
    /// `!self & b`
    unsafe fn andnot(self, b: Self) -> Self;
    unsafe fn rotr(self, r: u32) -> Self;
    unsafe fn shr(self, s: u32) -> Self;

    #[inline(always)]
    unsafe fn xor3(self, b: Self, c: Self) -> Self {
        unsafe { self.xor(b).xor(c) }
    }
    /// `(e & f) ^ (!e & g)`
    #[inline(always)]
    unsafe fn ch(e: Self, f: Self, g: Self) -> Self {
        unsafe { e.and(f).xor(e.andnot(g)) }
    }
    /// `(a & b) ^ (a & c) ^ (b & c)`
    #[inline(always)]
    unsafe fn maj(a: Self, b: Self, c: Self) -> Self {
        unsafe { a.and(b).or(c.and(a.or(b))) }
    }
}

impl Lanes for u32 {
    const N: usize = 1;
    #[inline(always)]
    unsafe fn splat(x: u32) -> u32 {
        x
    }
    #[inline(always)]
    unsafe fn load(x: &[u32; 16]) -> u32 {
        x[0]
    }
    #[inline(always)]
    unsafe fn store(self, out: &mut [u32; 16]) {
        out[0] = self;
    }
    #[inline(always)]
    unsafe fn add(self, b: u32) -> u32 {
        self.wrapping_add(b)
    }
    #[inline(always)]
    unsafe fn xor(self, b: u32) -> u32 {
        self ^ b
    }
    #[inline(always)]
    unsafe fn and(self, b: u32) -> u32 {
        self & b
    }
    #[inline(always)]
    unsafe fn or(self, b: u32) -> u32 {
        self | b
    }
    #[inline(always)]
    unsafe fn andnot(self, b: u32) -> u32 {
        !self & b
    }
    #[inline(always)]
    unsafe fn rotr(self, r: u32) -> u32 {
        self.rotate_right(r)
    }
    #[inline(always)]
    unsafe fn shr(self, s: u32) -> u32 {
        self >> s
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::Lanes;

    #[derive(Clone, Copy)]
    pub(crate) struct Avx2(__m256i);

    impl Lanes for Avx2 {
        const N: usize = 8;
        #[inline(always)]
        unsafe fn splat(x: u32) -> Avx2 {
            unsafe { Avx2(_mm256_set1_epi32(x as i32)) }
        }
        #[inline(always)]
        unsafe fn load(x: &[u32; 16]) -> Avx2 {
            unsafe { Avx2(_mm256_loadu_si256(x.as_ptr().cast())) }
        }
        #[inline(always)]
        unsafe fn store(self, out: &mut [u32; 16]) {
            unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), self.0) }
        }
        #[inline(always)]
        unsafe fn add(self, b: Avx2) -> Avx2 {
            unsafe { Avx2(_mm256_add_epi32(self.0, b.0)) }
        }
        #[inline(always)]
        unsafe fn xor(self, b: Avx2) -> Avx2 {
            unsafe { Avx2(_mm256_xor_si256(self.0, b.0)) }
        }
        #[inline(always)]
        unsafe fn and(self, b: Avx2) -> Avx2 {
            unsafe { Avx2(_mm256_and_si256(self.0, b.0)) }
        }
        #[inline(always)]
        unsafe fn or(self, b: Avx2) -> Avx2 {
            unsafe { Avx2(_mm256_or_si256(self.0, b.0)) }
        }
        #[inline(always)]
        unsafe fn andnot(self, b: Avx2) -> Avx2 {
            unsafe { Avx2(_mm256_andnot_si256(self.0, b.0)) }
        }
        #[inline(always)]
        unsafe fn rotr(self, r: u32) -> Avx2 {
            // Constant counts after inlining; LLVM emits the immediate shift forms.
            unsafe {
                let right = _mm_cvtsi32_si128(r as i32);
                let left = _mm_cvtsi32_si128(32 - r as i32);
                Avx2(_mm256_or_si256(
                    _mm256_srl_epi32(self.0, right),
                    _mm256_sll_epi32(self.0, left),
                ))
            }
        }
        #[inline(always)]
        unsafe fn shr(self, s: u32) -> Avx2 {
            unsafe { Avx2(_mm256_srl_epi32(self.0, _mm_cvtsi32_si128(s as i32))) }
        }
    }

    #[derive(Clone, Copy)]
    pub(crate) struct Avx512(__m512i);

    impl Lanes for Avx512 {
        const N: usize = 16;
        #[inline(always)]
        unsafe fn splat(x: u32) -> Avx512 {
            unsafe { Avx512(_mm512_set1_epi32(x as i32)) }
        }
        #[inline(always)]
        unsafe fn load(x: &[u32; 16]) -> Avx512 {
            unsafe { Avx512(_mm512_loadu_si512(x.as_ptr().cast())) }
        }
        #[inline(always)]
        unsafe fn store(self, out: &mut [u32; 16]) {
            unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), self.0) }
        }
        #[inline(always)]
        unsafe fn add(self, b: Avx512) -> Avx512 {
            unsafe { Avx512(_mm512_add_epi32(self.0, b.0)) }
        }
        #[inline(always)]
        unsafe fn xor(self, b: Avx512) -> Avx512 {
            unsafe { Avx512(_mm512_xor_si512(self.0, b.0)) }
        }
        #[inline(always)]
        unsafe fn and(self, b: Avx512) -> Avx512 {
            unsafe { Avx512(_mm512_and_si512(self.0, b.0)) }
        }
        #[inline(always)]
        unsafe fn or(self, b: Avx512) -> Avx512 {
            unsafe { Avx512(_mm512_or_si512(self.0, b.0)) }
        }
        #[inline(always)]
        unsafe fn andnot(self, b: Avx512) -> Avx512 {
            unsafe { Avx512(_mm512_andnot_si512(self.0, b.0)) }
        }
        #[inline(always)]
        unsafe fn rotr(self, r: u32) -> Avx512 {
            unsafe { Avx512(_mm512_rorv_epi32(self.0, _mm512_set1_epi32(r as i32))) }
        }
        #[inline(always)]
        unsafe fn shr(self, s: u32) -> Avx512 {
            unsafe { Avx512(_mm512_srl_epi32(self.0, _mm_cvtsi32_si128(s as i32))) }
        }
        // One ternary-logic instruction each instead of two or three.
        #[inline(always)]
        unsafe fn xor3(self, b: Avx512, c: Avx512) -> Avx512 {
            unsafe { Avx512(_mm512_ternarylogic_epi32::<0x96>(self.0, b.0, c.0)) }
        }
        #[inline(always)]
        unsafe fn ch(e: Avx512, f: Avx512, g: Avx512) -> Avx512 {
            unsafe { Avx512(_mm512_ternarylogic_epi32::<0xca>(e.0, f.0, g.0)) }
        }
        #[inline(always)]
        unsafe fn maj(a: Avx512, b: Avx512, c: Avx512) -> Avx512 {
            unsafe { Avx512(_mm512_ternarylogic_epi32::<0xe8>(a.0, b.0, c.0)) }
        }
    }

    use super::{IV, K, Kilo, ScanOut};
    use std::sync::atomic::AtomicBool;

    #[target_feature(enable = "avx2")]
    pub(crate) unsafe fn scan_avx2(
        k: &Kilo,
        from: u32,
        to: u32,
        want: u32,
        stop: &AtomicBool,
    ) -> ScanOut {
        unsafe { super::scan::<Avx2>(k, from, to, want, stop) }
    }

    #[target_feature(enable = "avx512f")]
    pub(crate) unsafe fn scan_avx512(
        k: &Kilo,
        from: u32,
        to: u32,
        want: u32,
        stop: &AtomicBool,
    ) -> ScanOut {
        unsafe { super::scan::<Avx512>(k, from, to, want, stop) }
    }

    /// Nonces hashed side by side with the SHA extensions: independent streams hide
    /// the latency of the round instruction.
    pub(crate) const SHANI_STREAMS: usize = 4;

    /// The message plus round constants of each pair of rounds, for `S` nonces.
    #[inline(always)]
    unsafe fn shani_schedule<const S: usize>(k: &Kilo, lo: &[u32]) -> [[__m128i; 32]; S] {
        unsafe {
            let mut wk = [[_mm_setzero_si128(); 32]; S];
            for (s, wk) in wk.iter_mut().enumerate() {
                let mut block = k.words;
                (block[k.first], block[k.first + 1]) = k.lane_words(lo[s]);
                let mut m = [_mm_setzero_si128(); 16];
                for (i, m) in m.iter_mut().enumerate().take(4) {
                    *m = _mm_loadu_si128(block.as_ptr().add(4 * i).cast());
                }
                for i in 4..16 {
                    // W[t-16] + s0(W[t-15]), + W[t-7], then s1(W[t-2]) within the group.
                    let partial = _mm_sha256msg1_epu32(m[i - 4], m[i - 3]);
                    let w7 = _mm_alignr_epi8::<4>(m[i - 1], m[i - 2]);
                    m[i] = _mm_sha256msg2_epu32(_mm_add_epi32(partial, w7), m[i - 1]);
                }
                for i in 0..16 {
                    let g = _mm_add_epi32(m[i], _mm_loadu_si128(K.as_ptr().add(4 * i).cast()));
                    wk[2 * i] = g;
                    wk[2 * i + 1] = _mm_shuffle_epi32::<0x0e>(g);
                }
            }
            wk
        }
    }

    /// The kilo's state after an even number of rounds, as `ABEF` and `CDGH`.
    #[inline(always)]
    unsafe fn shani_state(k: &Kilo) -> (__m128i, __m128i) {
        let st = &k.pair_state;
        unsafe {
            (
                _mm_set_epi32(st[0] as i32, st[1] as i32, st[4] as i32, st[5] as i32),
                _mm_set_epi32(st[2] as i32, st[3] as i32, st[6] as i32, st[7] as i32),
            )
        }
    }

    /// The full digests of `SHANI_STREAMS` nonces with the SHA extensions. The state is
    /// kept as the instructions want it (`ABEF`, `CDGH`), two rounds per instruction, so
    /// it starts from the kilo's state after an even number of rounds.
    #[inline(always)]
    unsafe fn shani_batch(k: &Kilo, lo: &[u32; 16]) -> [[u32; 8]; SHANI_STREAMS] {
        const S: usize = SHANI_STREAMS;
        unsafe {
            let wk = shani_schedule::<S>(k, lo);
            let (abef0, cdgh0) = shani_state(k);
            let mut abef = [abef0; S];
            let mut cdgh = [cdgh0; S];
            // Pair by pair, the streams side by side.
            for pair in (k.first / 2)..32 {
                for ((abef, cdgh), wk) in abef.iter_mut().zip(cdgh.iter_mut()).zip(&wk) {
                    let next = _mm_sha256rnds2_epu32(*cdgh, *abef, wk[pair]);
                    *cdgh = *abef;
                    *abef = next;
                }
            }
            let mut out = [[0u32; 8]; S];
            for s in 0..S {
                let mut x = [0u32; 4];
                let mut y = [0u32; 4];
                _mm_storeu_si128(x.as_mut_ptr().cast(), abef[s]);
                _mm_storeu_si128(y.as_mut_ptr().cast(), cdgh[s]);
                // x = [F, E, B, A], y = [H, G, D, C]
                let words = [x[3], x[2], y[3], y[2], x[1], x[0], y[1], y[0]];
                for (o, (w, iv)) in out[s].iter_mut().zip(words.into_iter().zip(IV)) {
                    *o = w.wrapping_add(iv);
                }
            }
            out
        }
    }

    #[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
    pub(crate) unsafe fn scan_shani(
        k: &Kilo,
        from: u32,
        to: u32,
        want: u32,
        stop: &AtomicBool,
    ) -> ScanOut {
        super::scan_batches(SHANI_STREAMS, from, to, want, stop, |lo, first| {
            // SAFETY: this function is compiled for, and only called with, the features.
            let d = unsafe { shani_batch(k, lo) };
            for (f, d) in first.iter_mut().zip(d) {
                *f = d[0];
            }
        })
    }

    #[cfg(test)]
    #[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
    pub(crate) unsafe fn digests_shani(k: &Kilo, from: u32) -> [[u32; 16]; 8] {
        let mut lo = [0u32; 16];
        for (i, l) in lo.iter_mut().enumerate().take(SHANI_STREAMS) {
            *l = (from + i as u32).min(999);
        }
        // SAFETY: as in `scan_shani`.
        let d = unsafe { shani_batch(k, &lo) };
        let mut out = [[0u32; 16]; 8];
        for (s, d) in d.iter().enumerate() {
            for w in 0..8 {
                out[w][s] = d[w];
            }
        }
        out
    }

    #[cfg(test)]
    #[target_feature(enable = "avx2")]
    pub(crate) unsafe fn digests_avx2(k: &Kilo, from: u32) -> [[u32; 16]; 8] {
        unsafe { super::digests::<Avx2>(k, from) }
    }

    #[cfg(test)]
    #[target_feature(enable = "avx512f")]
    pub(crate) unsafe fn digests_avx512(k: &Kilo, from: u32) -> [[u32; 16]; 8] {
        unsafe { super::digests::<Avx512>(k, from) }
    }
}

/// What one [`Kernel::scan`] did: the nonces (last three digits) it hashed end before
/// `next`; `hits` lanes of the last batch looked promising.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ScanOut {
    pub next: u32,
    pub hits: usize,
    pub hit_lo: [u32; 16],
}

/// The compression of `L::N` nonces of `k` whose last three digits are given, from the
/// kilo's saved state to the final digest words.
#[inline(always)]
unsafe fn compress<L: Lanes>(k: &Kilo, base: &[L; 16], lo: &[u32; 16]) -> [L; 8] {
    unsafe {
        let mut wa = [0u32; 16];
        let mut wb = [0u32; 16];
        for i in 0..L::N {
            (wa[i], wb[i]) = k.lane_words(lo[i]);
        }
        let mut w = [L::splat(0); 64];
        w[..16].copy_from_slice(base);
        w[k.first] = L::load(&wa);
        w[k.first + 1] = L::load(&wb);
        for t in 16..64 {
            let x = w[t - 15];
            let s0 = x.rotr(7).xor3(x.rotr(18), x.shr(3));
            let y = w[t - 2];
            let s1 = y.rotr(17).xor3(y.rotr(19), y.shr(10));
            w[t] = w[t - 16].add(s0).add(w[t - 7]).add(s1);
        }
        let s = &k.state;
        let (mut a, mut b, mut c, mut d) = (
            L::splat(s[0]),
            L::splat(s[1]),
            L::splat(s[2]),
            L::splat(s[3]),
        );
        let (mut e, mut f, mut g, mut h) = (
            L::splat(s[4]),
            L::splat(s[5]),
            L::splat(s[6]),
            L::splat(s[7]),
        );
        for t in k.first..64 {
            let s1 = e.rotr(6).xor3(e.rotr(11), e.rotr(25));
            let t1 = h.add(s1).add(L::ch(e, f, g)).add(L::splat(K[t]).add(w[t]));
            let s0 = a.rotr(2).xor3(a.rotr(13), a.rotr(22));
            let t2 = s0.add(L::maj(a, b, c));
            h = g;
            g = f;
            f = e;
            e = d.add(t1);
            d = c;
            c = b;
            b = a;
            a = t1.add(t2);
        }
        [
            a.add(L::splat(IV[0])),
            b.add(L::splat(IV[1])),
            c.add(L::splat(IV[2])),
            d.add(L::splat(IV[3])),
            e.add(L::splat(IV[4])),
            f.add(L::splat(IV[5])),
            g.add(L::splat(IV[6])),
            h.add(L::splat(IV[7])),
        ]
    }
}

/// The message words every nonce of `k` shares, broadcast.
#[inline(always)]
unsafe fn shared_words<L: Lanes>(k: &Kilo) -> [L; 16] {
    unsafe {
        let mut base = [L::splat(0); 16];
        for (b, w) in base.iter_mut().zip(k.words) {
            *b = L::splat(w);
        }
        base
    }
}

/// Hashes nonces `from..to` (last three digits) of `k`, `L::N` at a time, until a batch
/// holds a lane whose first digest word has at least `want` (1 to 8) leading zero
/// nibbles, `stop` is set, or the range is done.
#[inline(always)]
unsafe fn scan<L: Lanes>(k: &Kilo, from: u32, to: u32, want: u32, stop: &AtomicBool) -> ScanOut {
    unsafe {
        let base = shared_words::<L>(k);
        scan_batches(L::N, from, to, want, stop, |lo, first| {
            compress::<L>(k, &base, lo)[0].store(first)
        })
    }
}

/// The scanning loop around a batch hasher that writes the first digest word of each
/// of its `lanes` nonces.
#[inline(always)]
fn scan_batches(
    lanes: usize,
    from: u32,
    to: u32,
    want: u32,
    stop: &AtomicBool,
    mut batch: impl FnMut(&[u32; 16], &mut [u32; 16]),
) -> ScanOut {
    let below = 1u64 << (32 - 4 * want.clamp(1, 8));
    let mut out = ScanOut {
        next: from,
        hits: 0,
        hit_lo: [0; 16],
    };
    let mut lo = [0u32; 16];
    let mut first = [0u32; 16];
    while out.next < to {
        for (i, l) in lo.iter_mut().enumerate().take(lanes) {
            *l = (out.next + i as u32).min(999);
        }
        batch(&lo, &mut first);
        let n = (lanes as u32).min(to - out.next) as usize;
        for i in 0..n {
            if u64::from(first[i]) < below {
                out.hit_lo[out.hits] = lo[i];
                out.hits += 1;
            }
        }
        out.next += n as u32;
        if out.hits > 0 || stop.load(Ordering::Relaxed) {
            break;
        }
    }
    out
}

#[cfg(test)]
/// The full digests of `L::N` consecutive nonces from `from`, word by word (for tests).
#[inline(always)]
unsafe fn digests<L: Lanes>(k: &Kilo, from: u32) -> [[u32; 16]; 8] {
    unsafe {
        let base = shared_words::<L>(k);
        let mut lo = [0u32; 16];
        for (i, l) in lo.iter_mut().enumerate().take(L::N) {
            *l = (from + i as u32).min(999);
        }
        let words = compress::<L>(k, &base, &lo);
        let mut out = [[0u32; 16]; 8];
        for (o, w) in out.iter_mut().zip(words) {
            w.store(o);
        }
        out
    }
}

/// A hashing kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// One nonce at a time, portable.
    Scalar,
    /// Eight nonces at a time in AVX2 registers.
    Avx2,
    /// Sixteen nonces at a time in AVX-512 registers.
    Avx512,
    /// Four nonces side by side with the x86 SHA extensions.
    ShaNi,
}

impl Kernel {
    pub const ALL: [Kernel; 4] = [Kernel::Scalar, Kernel::Avx2, Kernel::Avx512, Kernel::ShaNi];

    /// The fastest kernel on this CPU: each kernel it has the features for hashes for a
    /// few milliseconds, once per process, and the one with the highest rate wins
    /// (the SHA extensions beat AVX2 on some CPUs and not on others).
    pub fn best() -> Kernel {
        static BEST: std::sync::OnceLock<Kernel> = std::sync::OnceLock::new();
        *BEST.get_or_init(|| {
            let kilo = Kilo::new(b"5-1BUILD1NONCE", 123_456).expect("fits one block");
            let stop = AtomicBool::new(false);
            let rate = |kernel: Kernel| {
                let start = std::time::Instant::now();
                let mut n = 0u64;
                while start.elapsed() < std::time::Duration::from_millis(4) {
                    n += u64::from(kernel.scan(&kilo, 0, 1000, 8, &stop).next);
                }
                n as f64 / start.elapsed().as_secs_f64()
            };
            Kernel::ALL
                .into_iter()
                .filter(|k| k.available())
                .map(|k| (k, rate(k)))
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .map_or(Kernel::Scalar, |(k, _)| k)
        })
    }

    /// Whether this CPU has the kernel's features.
    pub fn available(self) -> bool {
        match self {
            Kernel::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => std::is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => std::is_x86_feature_detected!("avx512f"),
            #[cfg(target_arch = "x86_64")]
            Kernel::ShaNi => {
                std::is_x86_feature_detected!("sha")
                    && std::is_x86_feature_detected!("sse4.1")
                    && std::is_x86_feature_detected!("ssse3")
            }
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// Nonces hashed per step.
    pub fn lanes(self) -> usize {
        match self {
            Kernel::Scalar => 1,
            Kernel::Avx2 => 8,
            Kernel::Avx512 => 16,
            Kernel::ShaNi => 4,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kernel::Scalar => "scalar",
            Kernel::Avx2 => "avx2x8",
            Kernel::Avx512 => "avx512x16",
            Kernel::ShaNi => "sha-ni x4",
        }
    }

    /// This kernel if the CPU runs it, the scalar one otherwise.
    fn checked(self) -> Kernel {
        if self.available() {
            self
        } else {
            Kernel::Scalar
        }
    }

    /// See [`scan`]; `from..to` lies within `0..1000`.
    pub(crate) fn scan(
        self,
        k: &Kilo,
        from: u32,
        to: u32,
        want: u32,
        stop: &AtomicBool,
    ) -> ScanOut {
        debug_assert!(from <= to && to <= 1000);
        match self.checked() {
            // SAFETY: `checked` returned the kernel only after detecting its feature.
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => unsafe { x86::scan_avx2(k, from, to, want, stop) },
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => unsafe { x86::scan_avx512(k, from, to, want, stop) },
            #[cfg(target_arch = "x86_64")]
            Kernel::ShaNi => unsafe { x86::scan_shani(k, from, to, want, stop) },
            // SAFETY: the scalar lanes need no CPU feature.
            _ => unsafe { scan::<u32>(k, from, to, want, stop) },
        }
    }

    #[cfg(test)]
    /// The digests of `lanes()` consecutive nonces from `from` (last three digits), by
    /// lane: `out[i]` is the digest of nonce `from + i`.
    pub(crate) fn digests(self, k: &Kilo, from: u32) -> Vec<[u32; 8]> {
        let kernel = self.checked();
        let words = match kernel {
            // SAFETY: as in `scan`.
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => unsafe { x86::digests_avx2(k, from) },
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => unsafe { x86::digests_avx512(k, from) },
            #[cfg(target_arch = "x86_64")]
            Kernel::ShaNi => unsafe { x86::digests_shani(k, from) },
            _ => unsafe { digests::<u32>(k, from) },
        };
        (0..kernel.lanes())
            .map(|lane| std::array::from_fn(|w| words[w][lane]))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kilos() -> Vec<Kilo> {
        let mut out = Vec::new();
        for prefix in [
            "5-42BUILD1280144NONCE",
            "9-3@2-8RAID5000NONCE",
            "5-1MINE7NONCE",
            "p",
        ] {
            for hi in [1u64, 42, 7_777, 31_415_926, 4_000_000_000_000] {
                out.push(Kilo::new(prefix.as_bytes(), hi).unwrap());
            }
        }
        out
    }

    #[test]
    fn every_available_kernel_agrees_with_the_scalar_code_on_every_lane() {
        let mut checked = 0;
        for kernel in Kernel::ALL.into_iter().filter(|k| k.available()) {
            for k in kilos() {
                let mut from = 0;
                while from < 1000 {
                    let got = kernel.digests(&k, from);
                    for (i, d) in got.iter().enumerate() {
                        let lo = (from + i as u32).min(999);
                        assert_eq!(*d, k.digest(lo), "{kernel:?} lane {i} lo {lo}");
                        checked += 1;
                    }
                    from += kernel.lanes() as u32;
                }
            }
        }
        assert!(checked >= 20_000, "{checked}");
        if !Kernel::Avx512.available() {
            eprintln!("note: this CPU has no AVX-512; that kernel was not run here");
        }
    }

    #[test]
    fn scan_hands_back_exactly_the_lanes_with_enough_zero_nibbles() {
        for kernel in Kernel::ALL.into_iter().filter(|k| k.available()) {
            for k in kilos().into_iter().take(6) {
                let want = 2;
                let expected: Vec<u32> =
                    (0..1000).filter(|&lo| k.digest(lo)[0] >> 24 == 0).collect();
                let mut got = Vec::new();
                let stop = AtomicBool::new(false);
                let mut from = 0;
                while from < 1000 {
                    let out = kernel.scan(&k, from, 1000, want, &stop);
                    assert!(out.next > from);
                    got.extend_from_slice(&out.hit_lo[..out.hits]);
                    from = out.next;
                }
                assert_eq!(got, expected, "{kernel:?}");
            }
        }
    }

    #[test]
    fn scan_stops_at_the_end_of_its_range_and_when_told() {
        let k = kilos().remove(0);
        for kernel in Kernel::ALL.into_iter().filter(|k| k.available()) {
            let stop = AtomicBool::new(false);
            // Nothing has 8 zero nibbles here, so only the range ends the scan.
            let out = kernel.scan(&k, 3, 997, 8, &stop);
            assert_eq!(out.next, 997);
            stop.store(true, Ordering::Relaxed);
            let out = kernel.scan(&k, 0, 1000, 8, &stop);
            assert_eq!(
                out.next as usize,
                kernel.lanes(),
                "one batch, then the stop"
            );
        }
    }
}
