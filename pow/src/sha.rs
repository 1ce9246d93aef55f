//! SHA-256 for proof-of-work inputs: the round constants, a scalar compression that the
//! lane kernels are checked against, and the message layout of one nonce block.
//!
//! A proof input is `prefix` followed by the nonce in decimal. When it is at most 55
//! bytes it fits in one 64-byte block with its padding, so hashing it is a single
//! compression. Within a run of 1,000 consecutive nonces (a "kilo") only the last three
//! digits change, so every message word but the one or two that hold those digits is
//! the same for the whole kilo, and so are the rounds before the first changing word.

/// The SHA-256 initial hash value.
pub(crate) const IV: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/// The SHA-256 round constants.
pub(crate) const K: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

/// The longest input that fits in one block with its padding.
pub const ONE_BLOCK_MAX: usize = 55;

/// Runs rounds `from..to` of the compression on `state` with the (already expanded)
/// schedule `w`.
pub(crate) fn rounds(state: &mut [u32; 8], w: &[u32; 64], from: usize, to: usize) {
    let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = *state;
    for t in from..to {
        let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
        let ch = (e & f) ^ (!e & g);
        let t1 = h
            .wrapping_add(s1)
            .wrapping_add(ch)
            .wrapping_add(K[t])
            .wrapping_add(w[t]);
        let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
        let maj = (a & b) ^ (a & c) ^ (b & c);
        let t2 = s0.wrapping_add(maj);
        h = g;
        g = f;
        f = e;
        e = d.wrapping_add(t1);
        d = c;
        c = b;
        b = a;
        a = t1.wrapping_add(t2);
    }
    *state = [a, b, c, d, e, f, g, h];
}

/// Expands the 16 message words into the 64-word schedule.
pub(crate) fn expand(block: &[u32; 16]) -> [u32; 64] {
    let mut w = [0u32; 64];
    w[..16].copy_from_slice(block);
    for t in 16..64 {
        let s0 = w[t - 15].rotate_right(7) ^ w[t - 15].rotate_right(18) ^ (w[t - 15] >> 3);
        let s1 = w[t - 2].rotate_right(17) ^ w[t - 2].rotate_right(19) ^ (w[t - 2] >> 10);
        w[t] = w[t - 16]
            .wrapping_add(s0)
            .wrapping_add(w[t - 7])
            .wrapping_add(s1);
    }
    w
}

/// The padded single block of `input` as big-endian words, or `None` when the input
/// does not fit in one block.
pub(crate) fn one_block(input: &[u8]) -> Option<[u32; 16]> {
    if input.len() > ONE_BLOCK_MAX {
        return None;
    }
    let mut bytes = [0u8; 64];
    bytes[..input.len()].copy_from_slice(input);
    bytes[input.len()] = 0x80;
    bytes[56..].copy_from_slice(&((input.len() as u64) * 8).to_be_bytes());
    let mut words = [0u32; 16];
    for (i, w) in words.iter_mut().enumerate() {
        *w = u32::from_be_bytes([
            bytes[4 * i],
            bytes[4 * i + 1],
            bytes[4 * i + 2],
            bytes[4 * i + 3],
        ]);
    }
    Some(words)
}

/// SHA-256 of an input that fits in one block, by the plain scalar code here (no
/// shortcuts: the reference the kernels are tested against).
pub fn digest_one_block(input: &[u8]) -> Option<[u32; 8]> {
    let w = expand(&one_block(input)?);
    let mut state = IV;
    rounds(&mut state, &w, 0, 64);
    Some(std::array::from_fn(|i| state[i].wrapping_add(IV[i])))
}

/// Leading zero hex digits of a digest given as words.
pub fn leading_zero_nibbles(digest: &[u32; 8]) -> u32 {
    let mut n = 0;
    for w in digest {
        if *w == 0 {
            n += 8;
        } else {
            return n + w.leading_zeros() / 4;
        }
    }
    n
}

/// Three ASCII digits (`000` to `999`) as the low 24 bits of a word, most significant
/// digit first.
pub(crate) const fn three_digits(n: u32) -> u32 {
    let (a, b, c) = (n / 100 % 10, n / 10 % 10, n % 10);
    ((b'0' as u32 + a) << 16) | ((b'0' as u32 + b) << 8) | (b'0' as u32 + c)
}

/// [`three_digits`] for every value below 1,000.
pub(crate) static THREE_DIGITS: [u32; 1000] = {
    let mut t = [0u32; 1000];
    let mut i = 0;
    while i < 1000 {
        t[i] = three_digits(i as u32);
        i += 1;
    }
    t
};

/// Nonces `hi * 1000 ..= hi * 1000 + 999` of one prefix: the block words they share and
/// the compression state after the rounds that only read shared words.
#[derive(Debug, Clone)]
pub(crate) struct Kilo {
    /// The message block with the last three nonce digits set to zero bytes.
    pub words: [u32; 16],
    /// The first word holding one of the three changing bytes; the rounds before it
    /// are already in `state`.
    pub first: usize,
    /// Where the three digits sit in the 64-bit big-endian pair `words[first..first+2]`.
    pub shift: u32,
    /// The compression state after `first` rounds.
    pub state: [u32; 8],
    /// The compression state after `first & !1` rounds (for kernels that run two
    /// rounds per instruction).
    pub pair_state: [u32; 8],
}

impl Kilo {
    /// The kilo of `hi` (at least 1, so every nonce in it has the same number of
    /// digits) after `prefix`; `None` when its inputs do not fit in one block.
    pub fn new(prefix: &[u8], hi: u64) -> Option<Kilo> {
        debug_assert!(hi >= 1);
        let mut input = Vec::with_capacity(prefix.len() + 24);
        input.extend_from_slice(prefix);
        input.extend_from_slice(hi.to_string().as_bytes());
        let at = input.len();
        input.extend_from_slice(&[0, 0, 0]);
        let words = one_block(&input)?;
        let first = at / 4;
        let offset = (at % 4) as u32;
        // The placeholder bytes are zero, so the digits can be or-ed in later.
        let shift = (5 - offset) * 8;
        let w = expand(&words);
        let mut pair_state = IV;
        rounds(&mut pair_state, &w, 0, first & !1);
        let mut state = pair_state;
        rounds(&mut state, &w, first & !1, first);
        Some(Kilo {
            words,
            first,
            shift,
            state,
            pair_state,
        })
    }

    /// The two message words `first` and `first + 1` for the nonce ending in `lo`.
    #[inline(always)]
    pub fn lane_words(&self, lo: u32) -> (u32, u32) {
        let v = u64::from(THREE_DIGITS[lo as usize]) << self.shift;
        (
            self.words[self.first] | (v >> 32) as u32,
            self.words[self.first + 1] | v as u32,
        )
    }

    /// The digest of the nonce ending in `lo`, by the scalar code (the reference the
    /// lane kernels are tested against).
    pub fn digest(&self, lo: u32) -> [u32; 8] {
        let mut block = self.words;
        let (a, b) = self.lane_words(lo);
        block[self.first] = a;
        block[self.first + 1] = b;
        let w = expand(&block);
        let mut state = self.state;
        rounds(&mut state, &w, self.first, 64);
        std::array::from_fn(|i| state[i].wrapping_add(IV[i]))
    }
}

/// Lowercase hex of a digest given as words.
pub fn hex(digest: &[u32; 8]) -> String {
    let mut s = String::with_capacity(64);
    for w in digest {
        s.push_str(&format!("{w:08x}"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_match_the_vectors() {
        for (input, want) in [
            (
                "5-42BUILD1280144NONCE0",
                "ca79e8091e4fe468fbf4c5921cd15ad09f3fb4265b0a82cd2efa3782a4f03c10",
            ),
            (
                "5-42MINE100NONCE7",
                "b52b7684fd06c590cdf191ef2599d1588fe0e02d2e4d084e89d4327cc2b1f9be",
            ),
            (
                "9-3@2-8RAID5000NONCE42",
                "d31f7701ab13ae747be14e437f2d05c777a2d0dd6744b45e55cb8ef7ed708e65",
            ),
            (
                "",
                "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            ),
        ] {
            assert_eq!(hex(&digest_one_block(input.as_bytes()).unwrap()), want);
        }
    }

    #[test]
    fn a_kilo_gives_the_same_digest_as_the_whole_input() {
        for prefix in [
            "5-42BUILD1280144NONCE",
            "9-3@2-8RAID5000NONCE",
            "x",
            "abcdefgh",
        ] {
            for hi in [1u64, 7, 12, 999, 123_456, 98_765_432_101] {
                let kilo = Kilo::new(prefix.as_bytes(), hi).unwrap();
                for lo in [0u32, 1, 9, 10, 99, 100, 500, 999] {
                    let input = format!("{prefix}{}", hi * 1000 + u64::from(lo));
                    assert_eq!(
                        kilo.digest(lo),
                        digest_one_block(input.as_bytes()).unwrap(),
                        "{input}"
                    );
                }
            }
        }
    }

    #[test]
    fn inputs_longer_than_one_block_are_refused() {
        assert!(one_block(&[b'a'; 55]).is_some());
        assert!(one_block(&[b'a'; 56]).is_none());
        assert!(Kilo::new(&[b'a'; 51], 12).is_none());
    }

    #[test]
    fn leading_zero_nibbles_counts_across_words() {
        assert_eq!(leading_zero_nibbles(&[0x0fff_ffff, 0, 0, 0, 0, 0, 0, 0]), 1);
        assert_eq!(
            leading_zero_nibbles(&[0, 0x00ff_0000, 0, 0, 0, 0, 0, 0]),
            10
        );
        assert_eq!(leading_zero_nibbles(&[0; 8]), 64);
        assert_eq!(leading_zero_nibbles(&[0x1000_0000, 0, 0, 0, 0, 0, 0, 0]), 0);
    }
}
