//! A SentencePiece `precompiled_charsmap` as the `sentencepiece` library stores it (a u32
//! little-endian trie size, a Darts-clone double array of that many bytes, then the
//! NUL-terminated replacement strings), checked once so that the core's walk
//! ([`picobpe::sentencepiece::CharsMap`]) reads what `sentencepiece` reads.
//!
//! The check enumerates every key the double array holds (depth-first from the root, as a
//! lookup walks) and refuses, naming the part: a blob too short for its trie size, a trie
//! that is not whole 256-unit blocks or whose walk would leave the array, a value outside the
//! strings or a string without its NUL, keys or replacements that are not well-formed UTF-8,
//! keys longer than [`MAX_KEY_BYTES`], a replacement more than [`MAX_EXPANSION`] times its
//! key, more than [`MAX_KEYS`] keys (or four times as many nodes), and a key with more than 32 keys as prefixes (where
//! `sentencepiece`'s own lookup overruns its result array).

use std::fmt;

/// Longest key accepted, in bytes (`nmt_nfkc`'s longest is 12).
pub const MAX_KEY_BYTES: usize = 64;
/// Most keys accepted (`nmt_nfkc` has 225,276): bounds the check's time on a hostile trie,
/// whose units may point back at their own ancestors.
pub const MAX_KEYS: usize = 1 << 21;
/// A replacement may be at most this many times as long as its key (`nmt_nfkc`'s largest
/// ratio is 11, U+FDFA), so a text's normalized length stays within a known bound of its own.
pub const MAX_EXPANSION: usize = 16;

/// Why a character map was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("precompiled_charsmap: {0}")]
pub struct InvalidCharsMap(pub String);

/// A checked character map: the parts the core walks, and its longest key.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CharsMapParts {
    /// The double array.
    pub units: Vec<u32>,
    /// The replacement strings, NUL-terminated.
    pub strings: Vec<u8>,
    /// The longest key, in bytes.
    pub max_key: u32,
    /// Number of keys.
    pub keys: usize,
}

impl fmt::Display for CharsMapParts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} keys (longest {} bytes), {} trie units, {} bytes of replacements",
            self.keys,
            self.max_key,
            self.units.len(),
            self.strings.len()
        )
    }
}

/// The offset stored in a unit (Darts-clone's layout; see the core's `CharsMap`).
fn offset(unit: u32) -> usize {
    ((unit >> 10) << ((unit & (1 << 9)) >> 6)) as usize
}

/// Split and check `blob` (see the module docs). An empty blob is the identity: no parts.
pub fn parse(blob: &[u8]) -> Result<CharsMapParts, InvalidCharsMap> {
    let bad = |what: String| Err(InvalidCharsMap(what));
    if blob.is_empty() {
        return Ok(CharsMapParts::default());
    }
    let Some((size, rest)) = blob.split_first_chunk::<4>() else {
        return bad(format!(
            "{} bytes, shorter than its 4-byte trie size",
            blob.len()
        ));
    };
    let size = u32::from_le_bytes(*size) as usize;
    if size > rest.len() || size % 4 != 0 || size == 0 {
        return bad(format!(
            "trie size {size} is not a positive multiple of 4 within the {} bytes that follow",
            rest.len()
        ));
    }
    let (trie, strings) = rest.split_at(size);
    let units: Vec<u32> = trie
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    check_parts(units, strings)
}

/// Check a character map already split into its double array and its replacements (as a
/// table file stores it); see the module docs.
pub fn check_parts(units: Vec<u32>, strings: &[u8]) -> Result<CharsMapParts, InvalidCharsMap> {
    let bad = |what: String| Err(InvalidCharsMap(what));
    if units.is_empty() || units.len() % 256 != 0 {
        return bad(format!(
            "the trie has {} units, not whole blocks of 256",
            units.len()
        ));
    }
    let string_at = |value: usize, key: &[u8]| -> Result<&[u8], InvalidCharsMap> {
        let tail = strings.get(value..).unwrap_or(&[]);
        let Some(end) = tail.iter().position(|&b| b == 0) else {
            return Err(InvalidCharsMap(format!(
                "key {key:02X?}: its value {value} is not the start of a NUL-terminated string \
                 within the {} bytes of replacements",
                strings.len()
            )));
        };
        Ok(&tail[..end])
    };
    let mut parts = CharsMapParts {
        units: Vec::new(),
        strings: Vec::new(),
        max_key: 0,
        keys: 0,
    };
    // Depth-first over the nodes: (node position after its offset, key so far, keys among
    // the key's prefixes).
    let root = offset(units[0]);
    let mut stack = vec![(root, Vec::<u8>::new(), 0usize)];
    let mut visited = 0usize;
    while let Some((node, key, prefixes)) = stack.pop() {
        visited += 1;
        if visited > 4 * MAX_KEYS {
            return bad(format!("more than {} trie nodes", 4 * MAX_KEYS));
        }
        if node | 0xFF >= units.len() {
            return bad(format!(
                "after key {key:02X?} the walk would read unit {node:#x}, past the {} units",
                units.len()
            ));
        }
        for b in 1..=255u8 {
            let child = node ^ usize::from(b);
            let unit = units[child];
            if unit & ((1 << 31) | 0xFF) != u32::from(b) {
                continue;
            }
            let mut k = key.clone();
            k.push(b);
            if k.len() > MAX_KEY_BYTES {
                return bad(format!(
                    "a key longer than {MAX_KEY_BYTES} bytes (or a trie that loops) after {key:02X?}"
                ));
            }
            let next = child ^ offset(unit);
            let mut n = prefixes;
            if unit >> 8 & 1 != 0 {
                n += 1;
                parts.keys += 1;
                if parts.keys > MAX_KEYS {
                    return bad(format!("more than {MAX_KEYS} keys"));
                }
                if n > 32 {
                    return bad(format!(
                        "key {k:02X?} has more than 32 keys as prefixes (sentencepiece's lookup \
                         overruns there)"
                    ));
                }
                let Some(&leaf) = units.get(next) else {
                    return bad(format!(
                        "key {k:02X?}: its leaf unit {next:#x} is past the {} units",
                        units.len()
                    ));
                };
                let to = string_at((leaf & !(1 << 31)) as usize, &k)?;
                if std::str::from_utf8(&k).is_err() {
                    return bad(format!("key {k:02X?} is not well-formed UTF-8"));
                }
                if std::str::from_utf8(to).is_err() {
                    return bad(format!(
                        "the replacement of key {k:02X?} is not well-formed UTF-8"
                    ));
                }
                if to.len() > MAX_EXPANSION * k.len() {
                    return bad(format!(
                        "key {k:02X?} expands to {} bytes, more than {MAX_EXPANSION} times its \
                         length",
                        to.len()
                    ));
                }
                parts.max_key = parts.max_key.max(k.len() as u32);
            }
            stack.push((next, k, n));
        }
    }
    parts.units = units;
    parts.strings = strings.to_vec();
    Ok(parts)
}
