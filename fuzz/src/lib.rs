//! Shared pieces of the fuzz targets.
//!
//! - [`Params`]: reads a target's parameters (vocabulary, flags, seed) from the front of the fuzz
//!   input; the rest is the text.
//! - [`Vocab`]: a committed tiktoken vocabulary (gpt2, cl100k_base, o200k_base with their standard
//!   specials) as live core tables *and* as the plain data the slow references need.
//! - The references, which share no code with picobpe: pre-tokenization by `fancy-regex` with
//!   tiktoken's pattern (invalid UTF-8 bytes stand in as U+E000, the documented rule), and a
//!   naive tiktoken-style BPE over byte strings whose ranks are looked up by the *concatenated
//!   bytes* (not by id pairs, as the core does).
//! - [`sp`]: a naive SentencePiece BPE encoder and decoder (`sentencepiece`'s algorithm over
//!   `String`s, the whole text at once).

pub mod sp;

use std::collections::HashMap;
use std::sync::OnceLock;

use base64::Engine;
use fancy_regex::Regex;
use picobpe::Tables;
use picobpe_tests::models::{self, Source};
use picobpe_tests::vectors::Encoding;

/// Parameters taken from the front of a fuzz input (zeros once it runs out).
pub struct Params<'a> {
    data: &'a [u8],
}

impl<'a> Params<'a> {
    /// Read parameters from `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Params { data }
    }

    /// The next byte (0 when the input is exhausted).
    pub fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    /// A number below `n` (`n > 0`) from the next byte.
    pub fn below(&mut self, n: usize) -> usize {
        usize::from(self.byte()) % n
    }

    /// A little-endian `u16` (a seed).
    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.byte(), self.byte()])
    }

    /// Everything not read yet.
    pub fn rest(self) -> &'a [u8] {
        self.data
    }
}

/// The vocabularies, in selector order.
pub const ENCODINGS: [Encoding; 3] = [Encoding::Gpt2, Encoding::Cl100kBase, Encoding::O200kBase];

/// A committed vocabulary: core tables plus reference data.
pub struct Vocab {
    /// Which one.
    pub encoding: Encoding,
    /// Core tables (`picobpe_model::import::tiktoken` + `TableData::to_tables`, full piece table).
    pub tables: &'static Tables<'static>,
    /// Token bytes → rank (= id), ordinary tokens only.
    pub ranks: HashMap<Vec<u8>, u32>,
    /// Id → bytes, ordinary and special; `None` for an id no token has.
    pub bytes_of: Vec<Option<Vec<u8>>>,
    /// Special tokens (text, id).
    pub specials: Vec<(Vec<u8>, u32)>,
    regex: Regex,
    whitespace: Regex,
}

/// Build every vocabulary now (from a target's `init`), so no input is reported slow for it.
pub fn load_all_vocabs() {
    for i in 0..ENCODINGS.len() {
        vocab(i);
    }
}

/// The vocabulary `ENCODINGS[i]`, built on first use (a few seconds for o200k_base).
pub fn vocab(i: usize) -> &'static Vocab {
    static CACHE: [OnceLock<Vocab>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let i = i % 3;
    CACHE[i].get_or_init(|| Vocab::load(ENCODINGS[i]))
}

impl Vocab {
    fn load(encoding: Encoding) -> Vocab {
        let tables = models::tables(encoding, Source::Tiktoken);
        let mut ranks = HashMap::new();
        let mut bytes_of: Vec<Option<Vec<u8>>> = Vec::new();
        let b64 = base64::engine::general_purpose::STANDARD;
        for line in encoding.rank_file().split(|&b| b == b'\n') {
            let line = std::str::from_utf8(line).expect("rank file is ASCII");
            let Some((token, rank)) = line.split_once(' ') else {
                continue;
            };
            let bytes = b64.decode(token).expect("rank file base64");
            let rank: u32 = rank.trim().parse().expect("rank file rank");
            let at = rank as usize;
            if bytes_of.len() <= at {
                bytes_of.resize(at + 1, None);
            }
            bytes_of[at] = Some(bytes.clone());
            ranks.insert(bytes, rank);
        }
        let specials: Vec<(Vec<u8>, u32)> = encoding
            .specials()
            .into_iter()
            .map(|(text, id)| (text.into_bytes(), id))
            .collect();
        for (text, id) in &specials {
            let at = *id as usize;
            if bytes_of.len() <= at {
                bytes_of.resize(at + 1, None);
            }
            bytes_of[at] = Some(text.clone());
        }
        let pattern = picobpe_tests::reference::pattern(encoding);
        let regex = Regex::new(&pattern).expect("tiktoken pattern compiles");
        let whitespace = Regex::new(r"\s+").expect("whitespace regex");
        Vocab {
            encoding,
            tables,
            ranks,
            bytes_of,
            specials,
            regex,
            whitespace,
        }
    }

    /// Length of the longest special token (0 without specials).
    pub fn max_special_len(&self) -> usize {
        self.specials.iter().map(|s| s.0.len()).max().unwrap_or(0)
    }

    /// Reference pre-tokenization of ordinary text: `(start, end)` byte ranges, or `None` when
    /// fancy-regex gives up (backtrack limit).
    pub fn ref_pieces(&self, text: &[u8]) -> Option<Vec<(usize, usize)>> {
        ref_pieces(&self.regex, text)
    }

    /// Reference BPE of one piece (tiktoken's algorithm, ranks by concatenated bytes).
    pub fn ref_bpe(&self, piece: &[u8]) -> Vec<u32> {
        ref_bpe(&self.ranks, piece)
    }

    /// Next special token at or after `from`: the earliest, and the longest at that position.
    pub fn next_special(&self, text: &[u8], from: usize) -> Option<(usize, usize, u32)> {
        (from..text.len()).find_map(|at| {
            self.specials
                .iter()
                .filter(|(s, _)| text[at..].starts_with(s))
                .max_by_key(|(s, _)| s.len())
                .map(|(s, id)| (at, at + s.len(), *id))
        })
    }

    /// The ordinary segments of `text` (between specials when `specials`), and the special
    /// tokens between them: `(segment, special after it)`.
    pub fn segments<'t>(&self, text: &'t [u8], specials: bool) -> Vec<(&'t [u8], Option<u32>)> {
        let mut out = Vec::new();
        let mut pos = 0;
        if specials {
            while let Some((start, end, id)) = self.next_special(text, pos) {
                out.push((&text[pos..start], Some(id)));
                pos = end;
            }
        }
        out.push((&text[pos..], None));
        out
    }

    /// Reference encode, or `None` when the reference pre-tokenizer gave up.
    pub fn ref_encode(&self, text: &[u8], specials: bool) -> Option<Vec<u32>> {
        let mut ids = Vec::new();
        for (segment, special) in self.segments(text, specials) {
            for (a, b) in self.ref_pieces(segment)? {
                ids.extend(self.ref_bpe(&segment[a..b]));
            }
            ids.extend(special);
        }
        Some(ids)
    }

    /// Length of the longest reference piece of `text` (segments split at specials when
    /// `specials`), or `None` when the reference gave up.
    pub fn longest_piece(&self, text: &[u8], specials: bool) -> Option<usize> {
        let mut longest = 0;
        for (segment, _) in self.segments(text, specials) {
            for (a, b) in self.ref_pieces(segment)? {
                longest = longest.max(b - a);
            }
        }
        Some(longest)
    }

    /// Length of the longest run of whitespace in `text` (segments split at specials when
    /// `specials`), or `None` when the reference gave up. A whitespace piece is decided only
    /// where its run ends (`\s+(?!\S)`, cl100k's `\s*[\r\n]`), so a streaming encoder must
    /// see the whole run even when the piece is shorter.
    pub fn longest_whitespace_run(&self, text: &[u8], specials: bool) -> Option<usize> {
        let mut longest = 0;
        for (segment, _) in self.segments(text, specials) {
            for (a, b) in ref_pieces(&self.whitespace, segment)? {
                longest = longest.max(b - a);
            }
        }
        Some(longest)
    }

    /// Reference decode: the bytes, or the first unknown id as `(position, id, bytes before)`.
    pub fn ref_decode(&self, ids: &[u32]) -> Result<Vec<u8>, (usize, u32, usize)> {
        let mut out = Vec::new();
        for (position, &id) in ids.iter().enumerate() {
            match self.bytes_of.get(id as usize) {
                Some(Some(bytes)) => out.extend_from_slice(bytes),
                _ => return Err((position, id, out.len())),
            }
        }
        Ok(out)
    }
}

/// Split `text` with `regex`, each byte that is not part of well-formed UTF-8 standing in as one
/// U+E000 (a private-use, "other" character): the core's documented invalid-UTF-8 rule.
pub fn ref_pieces(regex: &Regex, text: &[u8]) -> Option<Vec<(usize, usize)>> {
    let mut s = String::with_capacity(text.len());
    // orig[j] = offset in `text` of the character that starts at byte j of `s`.
    let mut orig = Vec::with_capacity(text.len() + 1);
    let mut at = 0;
    for chunk in text.utf8_chunks() {
        for c in chunk.valid().chars() {
            orig.resize(s.len(), usize::MAX);
            orig.push(at);
            s.push(c);
            at += c.len_utf8();
        }
        for _ in chunk.invalid() {
            orig.resize(s.len(), usize::MAX);
            orig.push(at);
            s.push('\u{E000}');
            at += 1;
        }
    }
    orig.resize(s.len(), usize::MAX);
    orig.push(text.len());
    let mut pieces = Vec::new();
    for m in regex.find_iter(&s) {
        let m = m.ok()?;
        pieces.push((orig[m.start()], orig[m.end()]));
    }
    Some(pieces)
}

/// tiktoken's `byte_pair_merge` + lookup, written plainly: start from single bytes; while some
/// adjacent pair of parts concatenates to a token, merge the pair with the lowest rank (leftmost
/// on ties). A piece that is itself a token is that token (tiktoken checks the encoder first).
/// O(n²) lookups for an n-byte piece.
pub fn ref_bpe(ranks: &HashMap<Vec<u8>, u32>, piece: &[u8]) -> Vec<u32> {
    if let Some(&r) = ranks.get(piece) {
        return vec![r];
    }
    // bounds[i]..bounds[i + 1] is part i.
    let mut bounds: Vec<usize> = (0..=piece.len()).collect();
    let rank_of = |bounds: &[usize], i: usize| -> Option<u32> {
        let end = *bounds.get(i + 2)?;
        ranks.get(&piece[bounds[i]..end]).copied()
    };
    loop {
        let best = (0..bounds.len().saturating_sub(2))
            .filter_map(|i| rank_of(&bounds, i).map(|r| (r, i)))
            .min();
        match best {
            Some((_, i)) => {
                bounds.remove(i + 1);
            }
            None => break,
        }
    }
    bounds
        .windows(2)
        .map(|w| {
            *ranks.get(&piece[w[0]..w[1]]).unwrap_or_else(|| {
                panic!("reference: part {:?} is not a token", &piece[w[0]..w[1]])
            })
        })
        .collect()
}

/// `bytes` with non-printable and non-ASCII bytes escaped, for failure messages.
pub fn escape(bytes: &[u8]) -> String {
    picobpe_tests::check::escape(bytes)
}

/// A normalizer with [`picobpe::normalizer::normalize`]'s contract: `(text, last, out)`.
pub type NormalizeFn<'a> = dyn Fn(&[u8], bool, &mut [u8]) -> Result<picobpe::Progress, picobpe::normalizer::NormalizeError>
    + 'a;

/// The contract checks the normalizer targets share. `want` is the one-shot output of
/// `text`: through an output buffer of `cap` bytes (drained and resumed on `OutputFull`,
/// which must make progress; a `UnitTooLong` must name more than `cap`, and ends this check),
/// and with the text arriving in chunks of `chunk` bytes (`last` false until the end, into a
/// buffer of `big` bytes), the bytes must be `want`. `Err` says which check failed.
pub fn check_normalize_contract(
    normalize: &NormalizeFn<'_>,
    text: &[u8],
    want: &[u8],
    cap: usize,
    chunk: usize,
    big: usize,
) -> Result<(), String> {
    use picobpe::normalizer::NormalizeError;
    let (mut got, mut at, mut buf) = (Vec::new(), 0, vec![0u8; cap]);
    let drained = loop {
        match normalize(&text[at..], true, &mut buf) {
            Ok(p) => {
                got.extend_from_slice(&buf[..p.written]);
                break true;
            }
            Err(NormalizeError::OutputFull { consumed, written }) => {
                if consumed == 0 && written == 0 {
                    return Err("OutputFull without progress".into());
                }
                got.extend_from_slice(&buf[..written]);
                at += consumed;
            }
            Err(NormalizeError::UnitTooLong { needed, .. }) => {
                if needed <= cap {
                    return Err("UnitTooLong that fits".into());
                }
                break false;
            }
        }
    };
    if drained && got != want {
        return Err("resumed".into());
    }
    let (mut got, mut pending, mut out) = (Vec::new(), Vec::new(), vec![0u8; big]);
    let mut pieces = text.chunks(chunk).peekable();
    while let Some(piece) = pieces.next() {
        pending.extend_from_slice(piece);
        let last = pieces.peek().is_none();
        match normalize(&pending, last, &mut out) {
            Ok(p) => {
                got.extend_from_slice(&out[..p.written]);
                pending.drain(..p.consumed);
            }
            Err(e) => return Err(format!("streamed {e:?}")),
        }
    }
    if !pending.is_empty() || got != want {
        return Err("streamed".into());
    }
    Ok(())
}
