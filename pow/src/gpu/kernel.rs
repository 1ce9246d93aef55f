//! The fast search kernel: WGSL written for one layout of the message.
//!
//! Within a batch every nonce has the same number of digits at the same place in the
//! message, so which message words change, and how often, is known before the kernel
//! is built. [`source`] writes straight-line code for that layout, the way the fastest
//! SHA-256 searches are written:
//!
//! - every round and schedule word unrolled, with the schedule in named values, so
//!   nothing is indexed at run time and everything stays in registers;
//! - each value computed where it last changes: the rounds before the first digit and
//!   every schedule word that no digit reaches once per search, on the host
//!   ([`Input::new`]); what the leading digits reach once per invocation; only what
//!   the last [`Layout::inner`] digits reach once per nonce;
//! - the last digits are the counters of nested loops, so a nonce's digits cost no
//!   division; the leading digits are divided out once per invocation;
//! - no atomics: each workgroup writes its best to its own slot.
//!
//! Block, word and round numbers are what the code is about, so its loops count them.
#![allow(clippy::needless_range_loop)]

use std::fmt::Write;

use crate::sha::{K, expand, rounds};

/// What the kernel is built for: where the digits are, how many the inner loops count,
/// and the workgroup's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Layout {
    /// Tail blocks hashed per nonce: 1 or 2.
    pub blocks: u32,
    /// The first digit's byte in the tail.
    pub at: u32,
    /// Digits printed (1 to 9).
    pub digits: u32,
    /// Last digits counted by the inner loops (1 to 3, at most `digits`): an invocation
    /// hashes `10^inner` nonces.
    pub inner: u32,
    /// Invocations in a workgroup.
    pub workgroup: u32,
}

/// How often a value changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Varies {
    /// Never in a batch: the host computes it.
    Never,
    /// Once per invocation: the leading digits.
    PerInvocation,
    /// Once per nonce: the last digits.
    PerNonce,
}

impl Layout {
    /// Nonces an invocation hashes.
    pub fn per_invocation(&self) -> u32 {
        10u32.pow(self.inner)
    }

    /// How often tail word `word` (0 to 31) changes.
    fn word(&self, word: u32) -> Varies {
        let mut v = Varies::Never;
        for byte in word * 4..word * 4 + 4 {
            if byte >= self.at && byte < self.at + self.digits {
                let place = byte - self.at;
                v = v.max(if place >= self.digits - self.inner {
                    Varies::PerNonce
                } else {
                    Varies::PerInvocation
                });
            }
        }
        v
    }

    /// How often each schedule word of tail block `block` changes.
    fn schedule(&self, block: u32) -> [Varies; 64] {
        let mut v = [Varies::Never; 64];
        for t in 0..16 {
            v[t] = self.word(block * 16 + t as u32);
        }
        for t in 16..64 {
            v[t] = v[t - 2].max(v[t - 7]).max(v[t - 15]).max(v[t - 16]);
        }
        v
    }

    /// The rounds of the first tail block that come before any digit: the host runs
    /// them.
    fn host_rounds(&self) -> usize {
        (self.at / 4) as usize
    }
}

/// The uniform the kernel reads, as words: the state entering the tail, the working
/// variables after the host's rounds, both tail blocks' schedules (digits zero; the
/// entries no digit reaches are exact), and the range.
pub(crate) struct Input {
    words: Vec<u32>,
}

impl Input {
    /// Bytes of the uniform.
    pub const BYTES: u64 = (8 + 8 + 128 + 4) * 4;

    /// `midstate` enters `tail` (big-endian words, zero where the digits go); the batch
    /// hashes the low parts `lo_start .. lo_end`.
    pub fn new(layout: &Layout, midstate: [u32; 8], tail: &[u32; 32], lo: (u32, u32)) -> Input {
        let first: [u32; 16] = std::array::from_fn(|i| tail[i]);
        let second: [u32; 16] = std::array::from_fn(|i| tail[16 + i]);
        let (w0, w1) = (expand(&first), expand(&second));
        let mut start = midstate;
        rounds(&mut start, &w0, 0, layout.host_rounds());
        let per = layout.per_invocation();
        let base = lo.0 - lo.0 % per;
        let mut words = Vec::with_capacity(Self::BYTES as usize / 4);
        words.extend_from_slice(&midstate);
        words.extend_from_slice(&start);
        words.extend_from_slice(&w0);
        words.extend_from_slice(&w1);
        words.extend_from_slice(&[lo.0, lo.1, base, 0]);
        Input { words }
    }

    /// Invocations the batch needs.
    pub fn invocations(&self, layout: &Layout) -> u64 {
        let (end, base) = (self.words[145], self.words[146]);
        u64::from(end - base).div_ceil(u64::from(layout.per_invocation()))
    }

    pub fn bytes(&self) -> Vec<u8> {
        self.words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }
}

const LANE: [char; 4] = ['x', 'y', 'z', 'w'];

/// Uniform word `i` of a `array<vec4<u32>, N>` field.
fn at(field: &str, i: usize) -> String {
    format!("u.{field}[{}].{}", i / 4, LANE[i % 4])
}

/// The names of the working variables.
const NAMES: [&str; 8] = ["a", "b", "c", "d", "e", "f", "g", "h"];

/// The kernel's WGSL for `layout`.
pub(crate) fn source(layout: &Layout) -> String {
    let mut code = Code::new(layout);
    code.leading_digits();
    code.digit_words();
    code.invocation_schedule();
    code.rounds();
    let mut wgsl = header(layout);
    wgsl.push_str(&code.entry());
    wgsl
}

/// The kernel's statements, written in two places: before the loops (once per
/// invocation) and inside them (once per nonce).
struct Code<'a> {
    layout: &'a Layout,
    /// How often each schedule word of each tail block changes.
    sched: Vec<[Varies; 64]>,
    /// The leading digits: those divided out once per invocation.
    lead: u32,
    /// The statements before the loops.
    pre: String,
    /// The statements inside the loops.
    body: String,
}

impl<'a> Code<'a> {
    fn new(layout: &'a Layout) -> Code<'a> {
        Code {
            layout,
            sched: (0..layout.blocks).map(|b| layout.schedule(b)).collect(),
            lead: layout.digits - layout.inner,
            pre: String::new(),
            body: String::new(),
        }
    }

    /// Schedule word `t` of block `b`: the uniform's when no digit reaches it, else its
    /// named value.
    fn word(&self, b: usize, t: usize) -> String {
        if self.sched[b][t] == Varies::Never {
            at("w", b * 64 + t)
        } else {
            format!("w{b}_{t}")
        }
    }

    /// Schedule word `t` (16 to 63) of block `b`, from the words before it.
    fn expand_word(&self, b: usize, t: usize) -> String {
        format!(
            "ssig1({}) + {} + ssig0({}) + {}",
            self.word(b, t - 2),
            self.word(b, t - 7),
            self.word(b, t - 15),
            self.word(b, t - 16)
        )
    }

    /// Where a statement goes, with its indent: inside the loops or before them.
    fn out(&mut self, in_body: bool) -> (&mut String, usize) {
        if in_body {
            (&mut self.body, 16)
        } else {
            (&mut self.pre, 8)
        }
    }

    /// The leading digits, once per invocation.
    fn leading_digits(&mut self) {
        for i in (0..self.lead).rev() {
            let _ = writeln!(self.pre, "        let o{i} = q % 10u; q = q / 10u;");
        }
    }

    /// Tail words that hold digits: the leading digits' bytes once, the last digits'
    /// bytes per nonce.
    fn digit_words(&mut self) {
        for b in 0..self.layout.blocks as usize {
            for t in 0..16 {
                let v = self.sched[b][t];
                if v == Varies::Never {
                    continue;
                }
                let (outer, inner) = self.digit_bytes(b, t);
                if v == Varies::PerInvocation {
                    let _ = writeln!(self.pre, "        let w{b}_{t} = {outer};");
                } else {
                    let _ = writeln!(self.pre, "        let p{b}_{t} = {outer};");
                    let _ = writeln!(self.body, "                let w{b}_{t} = p{b}_{t}{inner};");
                }
            }
        }
    }

    /// Tail word `t` of block `b` with its digits' bytes: the uniform's word with the
    /// leading digits' bytes or-ed in, and what the last digits' bytes add to that.
    fn digit_bytes(&self, b: usize, t: usize) -> (String, String) {
        let layout = self.layout;
        let mut outer = at("w", b * 64 + t);
        let mut inner = String::new();
        for byte in 0..4u32 {
            let pos = (b as u32 * 16 + t as u32) * 4 + byte;
            if pos < layout.at || pos >= layout.at + layout.digits {
                continue;
            }
            let place = pos - layout.at;
            let shift = (3 - byte) * 8;
            if place < self.lead {
                let _ = write!(outer, " | ((0x30u + o{place}) << {shift}u)");
            } else {
                let j = place - self.lead;
                let _ = write!(inner, " | ((0x30u + n{j}) << {shift}u)");
            }
        }
        (outer, inner)
    }

    /// Schedule words the leading digits reach, once per invocation; those the last
    /// digits reach are written just before their round ([`Code::round`]), to keep few
    /// values live.
    fn invocation_schedule(&mut self) {
        for b in 0..self.layout.blocks as usize {
            for t in 16..64 {
                if self.sched[b][t] == Varies::PerInvocation {
                    let w = self.expand_word(b, t);
                    let _ = writeln!(self.pre, "        let w{b}_{t} = {w};");
                }
            }
        }
    }

    /// Rounds in order: the state changes as often as the most often changing word it
    /// has taken in, so each round goes before the loops or inside them.
    fn rounds(&mut self) {
        let mut state = Varies::Never;
        let mut in_body = false;
        for b in 0..self.layout.blocks as usize {
            if b == 1 {
                self.next_block(state == Varies::PerNonce);
            }
            let from = if b == 0 { self.layout.host_rounds() } else { 0 };
            for t in from..64 {
                state = state.max(self.sched[b][t]);
                if state == Varies::PerNonce && !in_body {
                    self.enter_loops();
                    in_body = true;
                }
                self.round(b, t, in_body);
            }
        }
    }

    /// Between the blocks: the first block's output is the second's input.
    fn next_block(&mut self, in_body: bool) {
        let (out, indent) = self.out(in_body);
        for (i, n) in NAMES.iter().enumerate() {
            let _ = writeln!(out, "{:indent$}let m{i} = {} + {n};", "", at("state", i));
        }
        for (i, n) in NAMES.iter().enumerate() {
            let _ = writeln!(out, "{:indent$}{n} = m{i};", "");
        }
    }

    /// Entering the loops: each nonce starts from the state so far.
    fn enter_loops(&mut self) {
        for n in NAMES {
            let _ = writeln!(self.pre, "        let s_{n} = {n};");
            let _ = writeln!(self.body, "                {n} = s_{n};");
        }
    }

    /// Round `t` of block `b`, after its schedule word when the last digits reach it.
    fn round(&mut self, b: usize, t: usize, in_body: bool) {
        let expanded =
            (t >= 16 && self.sched[b][t] == Varies::PerNonce).then(|| self.expand_word(b, t));
        let word = self.word(b, t);
        let (out, indent) = self.out(in_body);
        if let Some(w) = expanded {
            let _ = writeln!(out, "{:indent$}let w{b}_{t} = {w};", "");
        }
        let _ = writeln!(
            out,
            "{:indent$}{{ let t1 = h + bsig1(e) + ch(e, f, g) + {:#010x}u + {}; \
             let t2 = bsig0(a) + maj(a, b, c); \
             h = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2; }}",
            "", K[t], word
        );
    }

    /// The entry point: the statements in the loops over the last digits, each nonce's
    /// digest compared with the best so far, then the workgroup's best to its slot.
    fn entry(&self) -> String {
        let layout = self.layout;
        let feed = feed(layout);
        let loops = Loops::new(layout);
        let per = layout.per_invocation();
        let wg = layout.workgroup;
        format!(
            r#"@compute @workgroup_size({wg})
fn main(@builtin(global_invocation_id) gid: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>,
        @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {{
    let lo_start = u.range.x;
    let lo_end = u.range.y;
    let index = gid.x + gid.y * groups.x * {wg}u;
    let lo0 = u.range.z + index * {per}u;
    var best_n = 0u;
    var best_lo = 0xffffffffu;
    if lo0 < lo_end && index < 0xffffffffu / {per}u {{
        var q = lo0 / {per}u;
        var a = u.start[0].x; var b = u.start[0].y; var c = u.start[0].z; var d = u.start[0].w;
        var e = u.start[1].x; var f = u.start[1].y; var g = u.start[1].z; var h = u.start[1].w;
{pre}{loops_open}{indent}let lo = {lo};
{indent}if lo >= lo_start && lo < lo_end {{
{body}                let h0 = {f0} + a;
                var n = countLeadingZeros(h0) / 4u;
                if h0 == 0u {{
                    n = more_zeros(array<u32, 7>({f1} + b, {f2} + c, {f3} + d, {f4} + e,
                                                 {f5} + f, {f6} + g, {f7} + h));
                }}
                if n > best_n || (n == best_n && best_lo == 0xffffffffu) {{
                    best_n = n;
                    best_lo = lo;
                }}
{indent}}}
{loops_close}
    }}
    bests[lid.x] = vec2<u32>(best_n, best_lo);
    workgroupBarrier();
    if lid.x == 0u {{
        var top = bests[0];
        for (var i = 1u; i < {wg}u; i++) {{
            let x = bests[i];
            if x.x > top.x || (x.x == top.x && x.y < top.y) {{
                top = x;
            }}
        }}
        best[wid.x + wid.y * groups.x] = top;
    }}
}}
"#,
            pre = self.pre,
            body = self.body,
            loops_open = loops.open,
            loops_close = loops.close,
            lo = loops.lo,
            indent = " ".repeat(8 + 4 * layout.inner as usize),
            f0 = feed[0],
            f1 = feed[1],
            f2 = feed[2],
            f3 = feed[3],
            f4 = feed[4],
            f5 = feed[5],
            f6 = feed[6],
            f7 = feed[7],
        )
    }
}

/// What the digest adds the last block's working variables to: the state entering
/// the tail, or with two blocks the first block's output.
fn feed(layout: &Layout) -> Vec<String> {
    if layout.blocks == 2 {
        (0..8).map(|i| format!("m{i}")).collect()
    } else {
        (0..8).map(|i| at("state", i)).collect()
    }
}

/// The loops that count the last digits, one a digit, and the low part of the nonce
/// they make.
struct Loops {
    open: String,
    close: String,
    lo: String,
}

impl Loops {
    fn new(layout: &Layout) -> Loops {
        let mut open = String::new();
        let mut close = String::new();
        let mut lo = String::from("lo0");
        for j in 0..layout.inner {
            let indent = 8 + 4 * j as usize;
            let _ = writeln!(
                open,
                "{:indent$}for (var n{j} = 0u; n{j} < 10u; n{j}++) {{",
                ""
            );
            let _ = writeln!(close, "{:indent$}}}", "");
            let place = 10u32.pow(layout.inner - 1 - j);
            let _ = write!(lo, " + n{j} * {place}u");
        }
        let close: String = close.lines().rev().collect::<Vec<_>>().join("\n");
        Loops { open, close, lo }
    }
}

/// The kernel's declarations: the uniform, the output, the workgroup's bests and the
/// SHA-256 functions.
fn header(layout: &Layout) -> String {
    let per = layout.per_invocation();
    let wg = layout.workgroup;
    format!(
        r#"// Written by structs-pow for blocks={blocks} at={at} digits={digits} inner={inner}.
struct Input {{
    state: array<vec4<u32>, 2>,
    start: array<vec4<u32>, 2>,
    w: array<vec4<u32>, 32>,
    // lo_start, lo_end, base (lo_start rounded down to a multiple of {per}), unused
    range: vec4<u32>,
}}

@group(0) @binding(0) var<uniform> u: Input;
@group(0) @binding(1) var<storage, read_write> best: array<vec2<u32>>;

var<workgroup> bests: array<vec2<u32>, {wg}>;

fn rotr(x: u32, n: u32) -> u32 {{
    return (x >> n) | (x << (32u - n));
}}

fn ssig0(x: u32) -> u32 {{ return rotr(x, 7u) ^ rotr(x, 18u) ^ (x >> 3u); }}
fn ssig1(x: u32) -> u32 {{ return rotr(x, 17u) ^ rotr(x, 19u) ^ (x >> 10u); }}

fn bsig0(x: u32) -> u32 {{ return rotr(x, 2u) ^ rotr(x, 13u) ^ rotr(x, 22u); }}
fn bsig1(x: u32) -> u32 {{ return rotr(x, 6u) ^ rotr(x, 11u) ^ rotr(x, 25u); }}
fn ch(e: u32, f: u32, g: u32) -> u32 {{ return (e & f) ^ (~e & g); }}
fn maj(a: u32, b: u32, c: u32) -> u32 {{ return (a & b) ^ (a & c) ^ (b & c); }}

// Leading zero hex digits of a digest whose first word is zero.
fn more_zeros(h: array<u32, 7>) -> u32 {{
    var n = 8u;
    for (var i = 0u; i < 7u; i++) {{
        if h[i] != 0u {{
            return n + countLeadingZeros(h[i]) / 4u;
        }}
        n += 8u;
    }}
    return n;
}}

"#,
        blocks = layout.blocks,
        at = layout.at,
        digits = layout.digits,
        inner = layout.inner,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(at: u32, digits: u32, inner: u32, blocks: u32) -> Layout {
        Layout {
            blocks,
            at,
            digits,
            inner,
            workgroup: 64,
        }
    }

    #[test]
    fn only_what_the_digits_reach_changes() {
        // "5-42BUILD1280144NONCE" + 9 digits: the digits are bytes 21..30 (words 5 to 7);
        // the last two (bytes 28, 29) are counted per nonce.
        let l = layout(21, 9, 2, 1);
        let s = l.schedule(0);
        assert_eq!(l.host_rounds(), 5);
        assert_eq!(&s[..5], &[Varies::Never; 5]);
        assert_eq!(
            &s[5..8],
            &[
                Varies::PerInvocation,
                Varies::PerInvocation,
                Varies::PerNonce
            ]
        );
        assert_eq!(&s[8..16], &[Varies::Never; 8]);
        // W16..W19 reach back only to words 0..4, 9..15: the host's.
        assert_eq!(&s[16..20], &[Varies::Never; 4]);
        assert_eq!(s[20], Varies::PerInvocation, "W20 takes in W5");
        assert_eq!(s[22], Varies::PerNonce, "W22 takes in W7");
    }

    #[test]
    fn the_source_counts_the_last_digits_in_loops_and_divides_the_rest_out_once() {
        let src = source(&layout(21, 9, 2, 1));
        assert_eq!(src.matches("for (var n").count(), 2, "{src}");
        assert_eq!(src.matches("q % 10u").count(), 7, "{src}");
        // Rounds 0..4 are the host's; 59 are left, each written once.
        assert_eq!(src.matches("let t1 = ").count(), 59, "{src}");
        assert!(
            !src.contains("let w0_3 "),
            "a word before the digits is the host's"
        );
    }
}
