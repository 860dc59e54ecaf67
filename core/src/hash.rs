//! Perfect-hash lookups: PtrHash layout (as built by `phf_generator::ptrhash`) over a fast,
//! seeded hash of our own.
//!
//! `phf`'s default maps hash every key with SipHash-1-3 (128-bit); profiling the GPT-2 encoder
//! showed those hashes plus the key compares taking over a third of the time. `phf_generator`'s
//! PtrHash generator accepts any `Fn(&key, &seed) -> u64`, so the tables are built with the
//! hashes below instead, and looked up here with the same index computation as
//! `phf_shared::ptrhash::get_index` (a unit test checks they agree), written without panicking
//! indexing. Lookups cost one or two multiplies per 8 key bytes, one byte read from `pilots`,
//! and one entry read; the caller verifies the entry (a perfect hash maps *any* key to some slot).

/// The PtrHash index of a table: a per-table seed, one pilot byte per bucket, and the remap of
/// slots past the end.
#[derive(Clone, Copy, Debug)]
pub struct PtrIndex<'a> {
    /// The seed the generator settled on.
    pub seed: u64,
    /// One pilot per bucket.
    pub pilots: &'a [u8],
    /// For slots `>= len`, the slot they were moved to.
    pub remap: &'a [u32],
    /// Number of keys (= entries).
    pub len: usize,
}

impl PtrIndex<'_> {
    /// An index with no keys.
    pub const EMPTY: PtrIndex<'static> = PtrIndex {
        seed: 0,
        pilots: &[],
        remap: &[],
        len: 0,
    };

    /// The slot (`< len`) for a key with hash `hash`, or `None` for an empty table.
    #[inline]
    pub fn slot(&self, hash: u64) -> Option<usize> {
        let pilots_len = self.pilots.len() as u32;
        let slots_len = (self.len + self.remap.len()) as u32;
        let bucket = fast_reduce(hash as u32, pilots_len) as usize;
        let pilot = *self.pilots.get(bucket)?;
        let pilot_hash = PILOT_MUL.wrapping_mul(self.seed ^ u64::from(pilot));
        let index = fast_reduce(
            (hash >> 32) as u32 ^ (pilot_hash >> 32) as u32 ^ pilot_hash as u32,
            slots_len,
        ) as usize;
        if index < self.len {
            Some(index)
        } else {
            self.remap.get(index - self.len).map(|&i| i as usize)
        }
    }
}

/// `phf_shared::ptrhash::hash_pilot`'s multiplier.
const PILOT_MUL: u64 = 0x517c_c1b7_2722_0a95;

/// Lemire's multiply-shift reduction of `x` into `0..limit`.
#[inline]
fn fast_reduce(x: u32, limit: u32) -> u32 {
    ((x as u64 * limit as u64) >> 32) as u32
}

/// splitmix64's finaliser: every input bit affects every output bit.
#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Hash of an integer key (a packed id pair, a packed short piece) under `seed`: one
/// 64 × 64 → 128-bit multiply by the golden-ratio constant, high and low halves folded
/// together, so every key bit reaches both halves (the bucket uses the low half, the slot the
/// high half). The generator's seeds are random 64-bit values, so XOR-ing the seed in gives
/// each seed its own hash function. One multiply instead of `mix`'s two: 3–4 % fewer cycles on
/// CJK text (mostly pair lookups), and 2–5 % fewer guest instructions per byte on the
/// Cortex-M3 firmware.
#[inline]
pub fn hash_u64(key: u64, seed: u64) -> u64 {
    let p = u128::from(key ^ seed) * 0x9e37_79b9_7f4a_7c15u128;
    (p as u64) ^ (p >> 64) as u64
}

/// A string of 1–7 bytes packed into a `u64`: its bytes little-endian in the low 56 bits and
/// its length in the top 8, so no two such strings share a key; 0 for any other length.
#[inline]
pub fn short_key(bytes: &[u8]) -> u64 {
    let n = bytes.len();
    let packed = match bytes {
        [] => return 0,
        [a] => u64::from(*a),
        [a, b] => u64::from(*a) | u64::from(*b) << 8,
        [a, b, c] => u64::from(*a) | u64::from(*b) << 8 | u64::from(*c) << 16,
        [a, b, c, d, ..] if n <= 7 => {
            // Bytes 0..4, and bytes 4..n as the top n - 4 bytes of the 4-byte read ending at n
            // (32-bit shifts only: cheap on 32-bit cores too).
            let lo = u32::from_le_bytes([*a, *b, *c, *d]);
            let last = read_u32(bytes.get(n - 4..).unwrap_or(&[]));
            let hi = last.checked_shr(8 * (8 - n) as u32).unwrap_or(0);
            u64::from(lo) | u64::from(hi) << 32
        }
        _ => return 0,
    };
    packed | (n as u64) << 56
}

/// Hash of a byte string under `seed`.
///
/// Strings of 1–7 bytes (most pieces of natural text) hash as their [`short_piece_key`](crate::layout::short_piece_key)
/// ([`hash_u64`]), so a caller that already holds the packed key, such as the encoder's ASCII
/// word fast path, skips the byte reads. Longer strings go 8 bytes at a time (little-endian),
/// the last 1–8 bytes read as two overlapping words (no per-byte loop), each word folded in
/// with a multiply, finished with a splitmix64 finaliser; the length is mixed in first, so
/// strings whose words coincide after overlapping or padding still differ.
#[inline]
pub fn hash_bytes(bytes: &[u8], seed: u64) -> u64 {
    match short_key(bytes) {
        0 => hash_long(bytes, seed),
        key => hash_u64(key, seed),
    }
}

/// [`hash_bytes`] of a string whose [`short_key`] is 0 (empty, or 8 bytes and longer).
#[inline]
pub(crate) fn hash_long(bytes: &[u8], seed: u64) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    #[inline]
    fn fold(h: u64, w: u64) -> u64 {
        (h ^ w).wrapping_mul(K).rotate_left(29)
    }
    let len = bytes.len();
    let mut h = seed ^ (len as u64).wrapping_mul(K);
    let mut rest = bytes;
    while rest.len() > 8 {
        let (word, tail) = rest.split_at(8);
        h = fold(h, read_u64(word));
        rest = tail;
    }
    // 0–8 bytes left.
    let w = match rest.len() {
        0 => 0,
        1..=3 => {
            let (a, b, c) = (rest[0], rest[rest.len() / 2], rest[rest.len() - 1]);
            u64::from(a) | u64::from(b) << 8 | u64::from(c) << 16
        }
        n => {
            let lo = read_u32(rest.get(..4).unwrap_or(&[]));
            let hi = read_u32(rest.get(n - 4..).unwrap_or(&[]));
            u64::from(lo) | u64::from(hi) << 32
        }
    };
    mix(fold(h, w))
}

/// Little-endian `u64` from the first 8 bytes (zero if shorter).
#[inline]
fn read_u64(b: &[u8]) -> u64 {
    match b.get(..8) {
        Some(&[a0, a1, a2, a3, a4, a5, a6, a7]) => {
            u64::from_le_bytes([a0, a1, a2, a3, a4, a5, a6, a7])
        }
        _ => 0,
    }
}

/// Little-endian `u32` from the first 4 bytes (zero if shorter).
#[inline]
fn read_u32(b: &[u8]) -> u32 {
    match b.get(..4) {
        Some(&[a0, a1, a2, a3]) => u32::from_le_bytes([a0, a1, a2, a3]),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Our lookup must land on the slot the generator assigned, for every key, and agree with
    /// `phf_shared::ptrhash::get_index`.
    #[test]
    fn lookup_matches_the_generator() {
        // Under Miri (slow) up to 200 keys: the lookup's code paths are the same.
        let sizes: &[usize] = if cfg!(miri) {
            &[1, 2, 3, 10, 200]
        } else {
            &[1, 2, 3, 10, 1000, 5000]
        };
        for &n in sizes {
            let keys: Vec<u64> = (0..n as u64)
                .map(|i| i.wrapping_mul(0x1234_5678_9abc_def1) ^ 77)
                .collect();
            let state = phf_generator::ptrhash::generate_hash_with_hash_fn(&keys, |k, seed| {
                hash_u64(*k, *seed)
            });
            let index = PtrIndex {
                seed: state.seed,
                pilots: &state.pilots,
                remap: &state.remap,
                len: n,
            };
            for (i, &k) in keys.iter().enumerate() {
                let h = hash_u64(k, state.seed);
                let slot = index.slot(h).unwrap();
                assert_eq!(state.map[slot], i, "key {i} of {n}");
                let theirs =
                    phf_shared::ptrhash::get_index(state.seed, h, &state.pilots, &state.remap, n);
                assert_eq!(slot, theirs as usize);
            }
        }
    }

    #[test]
    fn byte_keys_index_perfectly() {
        let n = if cfg!(miri) { 100 } else { 3000u32 };
        let keys: Vec<Vec<u8>> = (0..n)
            .map(|i| std::format!("tok{i}-{}", i * 7).into_bytes())
            .collect();
        let state = phf_generator::ptrhash::generate_hash_with_hash_fn(&keys, |k, seed| {
            hash_bytes(k, *seed)
        });
        let index = PtrIndex {
            seed: state.seed,
            pilots: &state.pilots,
            remap: &state.remap,
            len: keys.len(),
        };
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(state.map[index.slot(hash_bytes(k, state.seed)).unwrap()], i);
        }
    }

    #[test]
    fn empty_index_finds_nothing() {
        assert_eq!(PtrIndex::EMPTY.slot(12345), None);
    }

    #[test]
    fn byte_hash_depends_on_length_and_content() {
        assert_ne!(hash_bytes(b"a", 1), hash_bytes(b"a\0", 1));
        assert_ne!(hash_bytes(b"abcdefgh", 1), hash_bytes(b"abcdefgi", 1));
        assert_ne!(hash_bytes(b"abcdefghX", 1), hash_bytes(b"abcdefghY", 1));
        assert_ne!(hash_bytes(b"x", 1), hash_bytes(b"x", 2));
    }
}
