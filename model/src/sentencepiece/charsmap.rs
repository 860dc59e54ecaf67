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

use picobpe::layout::unit_offset as offset;
use picobpe::sentencepiece::{hangul_syllable, RUN_CHAR};

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
    /// Every key with its replacement (as the walk found them).
    pub pairs: Vec<(Vec<u8>, Vec<u8>)>,
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
        pairs: Vec::new(),
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
        // The node's children are in its block of 256 units (`node ^ b` keeps the high bits):
        // one array, so the 255 probes per node need no bounds checks (a 226,684-key map has
        // about 48,000 nodes).
        let block: &[u32; 256] = match units[node & !0xFF..=node | 0xFF].try_into() {
            Ok(block) => block,
            Err(_) => return bad(format!("unit block at {node:#x} is not 256 units")),
        };
        let low = node & 0xFF;
        for b in 1..=255u8 {
            let child = node ^ usize::from(b);
            let unit = block[usize::from(b) ^ low];
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
                parts.pairs.push((k.clone(), to.to_vec()));
            }
            stack.push((next, k, n));
        }
    }
    parts.units = units;
    parts.strings = strings.to_vec();
    Ok(parts)
}

/// The compact form of a character map (see the core's `CharsMap`): one-character keys as
/// runs, longer keys as the sequences of their characters' images, Hangul by rule.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Compact {
    /// Replacements and sequences' bytes.
    pub strings: Vec<u8>,
    /// Runs of one-character keys: `first << 11 | (length − 1)`.
    pub runs: Vec<u32>,
    /// Per run: [`RUN_CHAR`] with the first replacement's code point, or `offset << 8 |
    /// length` in `strings`.
    pub run_values: Vec<u32>,
    /// Sequences sorted by bytes: `offset << 8 | length` in `strings`.
    pub sequences: Vec<u32>,
    /// Per sequence: its replacement, `offset << 8 | length` in `strings`.
    pub sequence_values: Vec<u32>,
    /// Runs of the characters found after the first in a longer key.
    pub tails: Vec<u32>,
    /// The ASCII one-character keys, a bit each.
    pub ascii: [u64; 2],
    /// The bytes a key starts with, a bit each.
    pub lead: [u64; 4],
    /// 256 words: the pairs of ASCII characters that start a longer key.
    pub ascii_pairs: Vec<u64>,
    /// Per 128 code points below U+10000: its block in `bmp_blocks` (empty: no filter).
    pub bmp_index: Vec<u8>,
    /// Distinct blocks, four words each: two bits per code point (a key; a tail).
    pub bmp_blocks: Vec<u64>,
    /// Conjoining jamo L V and L V T are keys replaced by their syllable.
    pub hangul: bool,
}

impl Compact {
    /// Flash bytes of its arrays (the ASCII and lead-byte sets live in `SpTables` itself).
    pub fn bytes(&self) -> usize {
        self.strings.len()
            + 8 * self.ascii_pairs.len()
            + self.bmp_index.len()
            + 8 * self.bmp_blocks.len()
            + 4 * (self.tails.len()
                + self.runs.len()
                + self.run_values.len()
                + self.sequences.len()
                + self.sequence_values.len())
    }
}

/// The compact form of the map whose keys and replacements are `pairs`, when it is exactly
/// the same function (else `None`: the double array stays). The check: every key of two or
/// more characters has characters whose images (one-character replacement, or the character
/// itself when it is no key) are single characters, and every key with the same images has
/// the same replacement; and the keys those image sequences generate (every choice of a
/// character per image) are as many as the map's longer keys, so none is missing or extra.
pub fn compact(pairs: &[(Vec<u8>, Vec<u8>)]) -> Option<Compact> {
    use std::collections::{BTreeMap, HashMap};
    let mut single: BTreeMap<u32, &[u8]> = BTreeMap::new();
    let mut longer = Vec::new();
    for (k, v) in pairs {
        let key = std::str::from_utf8(k).ok()?;
        let mut chars = key.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) => {
                single.insert(c as u32, v);
            }
            _ => longer.push((key, v)),
        }
    }
    let image = |c: char| -> Option<char> {
        match single.get(&(c as u32)) {
            None => Some(c),
            Some(v) => {
                let s = std::str::from_utf8(v).ok()?;
                let mut it = s.chars();
                match (it.next(), it.next()) {
                    (Some(d), None) => Some(d),
                    _ => None,
                }
            }
        }
    };
    // Sequences of images and their replacements.
    let mut seqs: BTreeMap<Vec<char>, &[u8]> = BTreeMap::new();
    for (key, v) in &longer {
        let imgs: Option<Vec<char>> = key.chars().map(image).collect();
        let imgs = imgs?;
        if imgs.len() > picobpe::sentencepiece::MAX_SEQUENCE_CHARS {
            return None;
        }
        match seqs.get(&imgs) {
            Some(&w) if w != &v[..] => return None,
            _ => {
                seqs.insert(imgs, v);
            }
        }
    }
    // Hangul by rule when every L V and L V T sequence is there with its syllable.
    let is_hangul = |s: &[char], v: &[u8]| {
        let jamo: Vec<u32> = s.iter().map(|&c| c as u32).collect();
        hangul_syllable(&jamo).is_some_and(|h| h.to_string().as_bytes() == v)
    };
    let hangul_count = seqs.iter().filter(|(s, v)| is_hangul(s, v)).count();
    let hangul = hangul_count == 19 * 21 * 28;
    if hangul {
        seqs.retain(|s, v| !is_hangul(s, v));
    }
    // How many keys the sequences generate: the product of each image's preimages.
    let mut preimages: HashMap<char, u64> = HashMap::new();
    for (&c, v) in &single {
        if let Some(d) = char::from_u32(c).and_then(&image) {
            if std::str::from_utf8(v).ok()?.chars().count() == 1 {
                *preimages.entry(d).or_default() += 1;
            }
        }
    }
    let pre = |d: char| -> u64 {
        preimages.get(&d).copied().unwrap_or(0) + u64::from(!single.contains_key(&(d as u32)))
    };
    let mut generated: u64 = seqs
        .keys()
        .map(|s| s.iter().map(|&d| pre(d)).product::<u64>())
        .sum();
    if hangul {
        let jamo = |from: u32, n: u32| -> u64 {
            (from..from + n)
                .map(|c| char::from_u32(c).map_or(0, pre))
                .sum()
        };
        let (l, v, t) = (jamo(0x1100, 19), jamo(0x1161, 21), jamo(0x11A8, 27));
        generated += l * v + l * v * t;
    }
    if generated != longer.len() as u64 {
        return None;
    }
    // Lay out: a pool of distinct strings, runs, sequences.
    let mut c = Compact {
        hangul,
        ..Compact::default()
    };
    let mut pool: HashMap<Vec<u8>, u32> = HashMap::new();
    let mut name = |c: &mut Compact, b: &[u8]| -> Option<u32> {
        if b.len() > 0xFF {
            return None;
        }
        let at = *pool.entry(b.to_vec()).or_insert_with(|| {
            c.strings.extend_from_slice(b);
            (c.strings.len() - b.len()) as u32
        });
        (at < 1 << 23).then_some(at << 8 | b.len() as u32)
    };
    let one_char = |v: &[u8]| -> Option<u32> {
        let s = std::str::from_utf8(v).ok()?;
        let mut it = s.chars();
        match (it.next(), it.next()) {
            (Some(d), None) => Some(d as u32),
            _ => None,
        }
    };
    let mut tails = std::collections::BTreeSet::new();
    let entries: Vec<(u32, &[u8])> = single.iter().map(|(&c, &v)| (c, v)).collect();
    let mut i = 0;
    while i < entries.len() {
        let (first, v) = entries[i];
        let mut j = i + 1;
        if let Some(d) = one_char(v) {
            while j < entries.len()
                && j - i < 2048
                && entries[j].0 == first + (j - i) as u32
                && one_char(entries[j].1) == Some(d + (j - i) as u32)
            {
                j += 1;
            }
            c.runs.push(first << 11 | (j - i - 1) as u32);
            c.run_values.push(RUN_CHAR | d);
        } else {
            c.runs.push(first << 11);
            let at = name(&mut c, v)?;
            c.run_values.push(at);
        }
        i = j;
    }
    for (k, _) in pairs {
        if let Some(&b) = k.first() {
            c.lead[usize::from(b / 64)] |= 1 << (b % 64);
        }
    }
    c.ascii_pairs = vec![0; 256];
    for (key, _) in &longer {
        for t in key.chars().skip(1) {
            tails.insert(t as u32);
        }
        if let [a, b, ..] = key.as_bytes() {
            if *a < 0x80 && *b < 0x80 {
                c.ascii_pairs[2 * usize::from(*a) + usize::from(*b / 64)] |= 1 << (b % 64);
            }
        }
    }
    let mut last: Option<u32> = None;
    for &t in &tails {
        match (last, c.tails.last_mut()) {
            (Some(l), Some(run)) if t == l + 1 && *run & 0x7FF < 0x7FF => *run += 1,
            _ => c.tails.push(t << 11),
        }
        last = Some(t);
    }
    for &k in single.keys().filter(|&&k| k < 0x80) {
        c.ascii[(k / 64) as usize] |= 1 << (k % 64);
    }
    // The BMP filter: two bits a code point, blocks of 128 shared when equal.
    let mut blocks: Vec<[u64; 4]> = vec![[0; 4]; 512];
    let mut mark = |cp: u32, bit: u64| {
        if cp <= 0xFFFF {
            blocks[(cp >> 7) as usize][((cp & 127) >> 5) as usize] |= bit << (2 * (cp & 31));
        }
    };
    for &k in single.keys() {
        mark(k, 1);
    }
    for &t in &tails {
        mark(t, 2);
    }
    let mut distinct: Vec<[u64; 4]> = Vec::new();
    let mut index = Vec::with_capacity(512);
    for b in &blocks {
        let at = match distinct.iter().position(|d| d == b) {
            Some(at) => at,
            None => {
                distinct.push(*b);
                distinct.len() - 1
            }
        };
        index.push(at);
    }
    if distinct.len() <= 256 {
        c.bmp_index = index.iter().map(|&i| i as u8).collect();
        c.bmp_blocks = distinct.concat();
    }
    let mut sorted: Vec<(Vec<u8>, &[u8])> = seqs
        .iter()
        .map(|(s, &v)| (s.iter().collect::<String>().into_bytes(), v))
        .collect();
    sorted.sort();
    for (s, v) in sorted {
        let at = name(&mut c, &s)?;
        c.sequences.push(at);
        let at = name(&mut c, v)?;
        c.sequence_values.push(at);
    }
    Some(c)
}

/// Check the compact form in `data` (the layout the core's lookups rely on): as many values as
/// runs and sequences, runs sorted without overlap and inside Unicode, every name inside the
/// strings, at most 255 bytes, sequences sorted and distinct, of two to
/// [`picobpe::sentencepiece::MAX_SEQUENCE_CHARS`] characters of UTF-8, replacements UTF-8.
/// Returns the longest key in bytes.
pub fn check_compact(data: &super::SpTableData<'_>) -> Result<u32, InvalidCharsMap> {
    let bad = |what: String| Err(InvalidCharsMap(what));
    let strings = &data.charsmap_strings;
    let named = |at: u32| -> Option<&[u8]> {
        let (start, len) = ((at >> 8) as usize, (at & 0xFF) as usize);
        strings.get(start..start + len)
    };
    if data.charsmap_runs.len() != data.charsmap_run_values.len()
        || data.charsmap_sequences.len() != data.charsmap_sequence_values.len()
    {
        return bad("compact form: runs or sequences without one value each".to_owned());
    }
    let mut max_key = 0u32;
    let mut next = 0u32;
    for (&run, &value) in data
        .charsmap_runs
        .iter()
        .zip(data.charsmap_run_values.iter())
    {
        let (first, len) = (run >> 11, (run & 0x7FF) + 1);
        let last = first + len - 1;
        if first < next || char::from_u32(first).is_none() || char::from_u32(last).is_none() {
            return bad(format!(
                "compact form: run {first:#x}+{len} unsorted or not scalars"
            ));
        }
        next = last + 1;
        max_key = max_key.max(char::from_u32(last).map_or(4, |c| c.len_utf8() as u32));
        let ok = if value & RUN_CHAR != 0 {
            let d = value & 0x1F_FFFF;
            value & 0x7FE0_0000 == 0 && (d..d + len).all(|c| char::from_u32(c).is_some())
        } else {
            len == 1 && named(value).is_some_and(|b| std::str::from_utf8(b).is_ok())
        };
        if !ok {
            return bad(format!(
                "compact form: run {first:#x}+{len} has a bad value {value:#x}"
            ));
        }
    }
    if !matches!(data.charsmap_ascii_pairs.len(), 0 | 256) {
        return bad(format!(
            "compact form: {} ASCII pair words, not 0 or 256",
            data.charsmap_ascii_pairs.len()
        ));
    }
    let blocks = data.charsmap_bmp_blocks.len();
    let index_ok = data.charsmap_bmp_index.is_empty()
        || (data.charsmap_bmp_index.len() == 512
            && blocks % 4 == 0
            && data
                .charsmap_bmp_index
                .iter()
                .all(|&b| 4 * usize::from(b) + 3 < blocks));
    if !index_ok {
        return bad("compact form: the BMP filter's index and blocks do not fit".to_owned());
    }
    let mut next_tail = 0u32;
    for &run in data.charsmap_tails.iter() {
        let (first, len) = (run >> 11, (run & 0x7FF) + 1);
        if first < next_tail || first + len - 1 > 0x10_FFFF {
            return bad(format!(
                "compact form: tail run {first:#x}+{len} unsorted or past Unicode"
            ));
        }
        next_tail = first + len;
    }
    let mut prev: Option<&[u8]> = None;
    for (&seq, &value) in data
        .charsmap_sequences
        .iter()
        .zip(data.charsmap_sequence_values.iter())
    {
        let (Some(s), Some(v)) = (named(seq), named(value)) else {
            return bad(format!(
                "compact form: sequence {seq:#x} or its value outside the strings"
            ));
        };
        let chars = std::str::from_utf8(s)
            .map(|t| t.chars().count())
            .unwrap_or(0);
        if !(2..=picobpe::sentencepiece::MAX_SEQUENCE_CHARS).contains(&chars)
            || std::str::from_utf8(v).is_err()
            || prev.is_some_and(|p| p >= s)
        {
            return bad(format!(
                "compact form: sequence {s:02X?} unsorted, not UTF-8, or of {chars} characters"
            ));
        }
        prev = Some(s);
        // A key spells each image with up to four bytes.
        max_key = max_key.max(4 * chars as u32);
    }
    if data.charsmap_hangul {
        max_key = max_key.max(9);
    }
    Ok(max_key)
}
