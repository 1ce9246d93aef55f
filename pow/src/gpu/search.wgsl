// One batch of a proof-of-work search: SHA-256 of `prefix || digits(nonce)` for
// `count` consecutive nonces, each invocation hashing `per_invocation` of them in a
// row, and the best (most leading zero hex digits, then the smallest nonce) of each
// workgroup written to `best`. No atomics: the host reduces the workgroups' bests.
//
// The host has already compressed every whole 64-byte block of the message before the
// digits (`midstate`), and gives the rest as big-endian words (`tail`, one or two
// blocks, padding and length included) with zero bytes where the digits go. The batch
// prints `digits` decimal digits of `lo` (leading zeros included) at byte `at` of the
// tail; every nonce of the batch shares the digits before them, which are in the tail.

struct Batch {
    midstate: array<vec4<u32>, 2>,
    tail: array<vec4<u32>, 8>,
    // blocks (1 or 2), at (byte offset of the first digit in the tail), digits, lo_start
    shape: vec4<u32>,
    // count, per_invocation, unused, unused
    size: vec4<u32>,
}

@group(0) @binding(0) var<uniform> batch: Batch;
@group(0) @binding(1) var<storage, read_write> best: array<vec2<u32>>;

const K = array<u32, 64>(
    0x428a2f98u, 0x71374491u, 0xb5c0fbcfu, 0xe9b5dba5u, 0x3956c25bu, 0x59f111f1u, 0x923f82a4u, 0xab1c5ed5u,
    0xd807aa98u, 0x12835b01u, 0x243185beu, 0x550c7dc3u, 0x72be5d74u, 0x80deb1feu, 0x9bdc06a7u, 0xc19bf174u,
    0xe49b69c1u, 0xefbe4786u, 0x0fc19dc6u, 0x240ca1ccu, 0x2de92c6fu, 0x4a7484aau, 0x5cb0a9dcu, 0x76f988dau,
    0x983e5152u, 0xa831c66du, 0xb00327c8u, 0xbf597fc7u, 0xc6e00bf3u, 0xd5a79147u, 0x06ca6351u, 0x14292967u,
    0x27b70a85u, 0x2e1b2138u, 0x4d2c6dfcu, 0x53380d13u, 0x650a7354u, 0x766a0abbu, 0x81c2c92eu, 0x92722c85u,
    0xa2bfe8a1u, 0xa81a664bu, 0xc24b8b70u, 0xc76c51a3u, 0xd192e819u, 0xd6990624u, 0xf40e3585u, 0x106aa070u,
    0x19a4c116u, 0x1e376c08u, 0x2748774cu, 0x34b0bcb5u, 0x391c0cb3u, 0x4ed8aa4au, 0x5b9cca4fu, 0x682e6ff3u,
    0x748f82eeu, 0x78a5636fu, 0x84c87814u, 0x8cc70208u, 0x90befffau, 0xa4506cebu, 0xbef9a3f7u, 0xc67178f2u,
);

const WORKGROUP: u32 = 64u;

var<workgroup> bests: array<vec2<u32>, 64>;

fn rotr(x: u32, n: u32) -> u32 {
    return (x >> n) | (x << (32u - n));
}

// One compression of `block` into `state`, with a rolling 16-word schedule.
fn compress(state: array<u32, 8>, block: array<u32, 16>) -> array<u32, 8> {
    var w = block;
    var a = state[0]; var b = state[1]; var c = state[2]; var d = state[3];
    var e = state[4]; var f = state[5]; var g = state[6]; var h = state[7];
    for (var t = 0u; t < 64u; t++) {
        var wt: u32;
        if t < 16u {
            wt = w[t];
        } else {
            let w15 = w[(t + 1u) & 15u];
            let w2 = w[(t + 14u) & 15u];
            let s0 = rotr(w15, 7u) ^ rotr(w15, 18u) ^ (w15 >> 3u);
            let s1 = rotr(w2, 17u) ^ rotr(w2, 19u) ^ (w2 >> 10u);
            wt = w[t & 15u] + s0 + w[(t + 9u) & 15u] + s1;
            w[t & 15u] = wt;
        }
        let S1 = rotr(e, 6u) ^ rotr(e, 11u) ^ rotr(e, 25u);
        let ch = (e & f) ^ (~e & g);
        let t1 = h + S1 + ch + K[t] + wt;
        let S0 = rotr(a, 2u) ^ rotr(a, 13u) ^ rotr(a, 22u);
        let maj = (a & b) ^ (a & c) ^ (b & c);
        let t2 = S0 + maj;
        h = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
    }
    return array<u32, 8>(state[0] + a, state[1] + b, state[2] + c, state[3] + d,
                         state[4] + e, state[5] + f, state[6] + g, state[7] + h);
}

fn tail_word(i: u32) -> u32 {
    return batch.tail[i >> 2u][i & 3u];
}

// Leading zero hex digits of a digest.
fn nibbles(h: array<u32, 8>) -> u32 {
    var n = 0u;
    for (var i = 0u; i < 8u; i++) {
        if h[i] != 0u {
            return n + countLeadingZeros(h[i]) / 4u;
        }
        n += 8u;
    }
    return n;
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>,
        @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
    let blocks = batch.shape.x;
    let at = batch.shape.y;
    let digits = batch.shape.z;
    let lo_start = batch.shape.w;
    let count = batch.size.x;
    let per = batch.size.y;
    let index = gid.x + gid.y * groups.x * WORKGROUP;
    let first = index * per;

    var midstate: array<u32, 8>;
    for (var i = 0u; i < 8u; i++) {
        midstate[i] = batch.midstate[i >> 2u][i & 3u];
    }

    // The digits of the first nonce, least significant first, divided out once; each
    // next nonce adds one with a carry.
    var digit: array<u32, 10>;
    var value = lo_start + first;
    for (var i = 0u; i < digits; i++) {
        digit[i] = value % 10u;
        value = value / 10u;
    }

    var best_n = 0u;
    var best_lo = 0xffffffffu;
    for (var j = 0u; j < per; j++) {
        let offset = first + j;
        if offset >= count {
            break;
        }
        var message: array<u32, 32>;
        for (var i = 0u; i < 32u; i++) {
            message[i] = tail_word(i);
        }
        // The digits, most significant first, into their bytes.
        for (var i = 0u; i < digits; i++) {
            let byte = at + i;
            let d = digit[digits - 1u - i];
            message[byte >> 2u] |= (0x30u + d) << ((3u - (byte & 3u)) * 8u);
        }
        var one: array<u32, 16>;
        for (var i = 0u; i < 16u; i++) {
            one[i] = message[i];
        }
        var h = compress(midstate, one);
        if blocks == 2u {
            var two: array<u32, 16>;
            for (var i = 0u; i < 16u; i++) {
                two[i] = message[16u + i];
            }
            h = compress(h, two);
        }
        let n = nibbles(h);
        if n > best_n || (n == best_n && best_lo == 0xffffffffu) {
            best_n = n;
            best_lo = lo_start + offset;
        }
        // The next nonce.
        var i = 0u;
        loop {
            if i >= digits {
                break;
            }
            digit[i] += 1u;
            if digit[i] < 10u {
                break;
            }
            digit[i] = 0u;
            i++;
        }
    }

    bests[lid.x] = vec2<u32>(best_n, best_lo);
    workgroupBarrier();
    if lid.x == 0u {
        var top = bests[0];
        for (var i = 1u; i < WORKGROUP; i++) {
            let b = bests[i];
            if b.x > top.x || (b.x == top.x && b.y < top.y) {
                top = b;
            }
        }
        best[wid.x + wid.y * groups.x] = top;
    }
}
