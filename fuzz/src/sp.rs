//! A naive SentencePiece BPE reference, for the `sp_encode` and `model_load` targets.
//!
//! A plain port of what `sentencepiece` 0.2.3 does (`normalizer.cc`, `bpe_model.cc`,
//! `SentencePieceProcessor::PopulateSentencePieceText` and `Decode`), sharing no code with
//! picobpe's core: it works on `String`s over the *whole* text (no split into words), so a
//! wrong word split in the core shows up as a difference.
//!
//! - Normalizer, identity rule: the input is read one unit at a time, a user-defined symbol
//!   (longest first) or one character, each byte outside well-formed UTF-8 being one U+FFFD;
//!   with `remove_extra_whitespaces` leading spaces are dropped first; an empty rest gives an
//!   empty text; with `add_dummy_prefix` a `▁` goes first; each space becomes `▁`, except that
//!   with `remove_extra_whitespaces` a space after a space is dropped; with
//!   `remove_extra_whitespaces` every trailing `▁` is dropped at the end.
//! - Symbols: the normalized text split into user-defined symbols (longest match, frozen: never
//!   merged) and single characters.
//! - Merging: while some adjacent pair of unfrozen symbols concatenates to a normal or
//!   user-defined piece with a score, merge the pair whose piece has the highest score, the
//!   leftmost on a tie. Scores are ordered as sentencepiece 0.2.3's `SymbolPairComparator`
//!   orders them (by their bit patterns: `-0.0` ranks below `+0.0`).
//! - Ids: each final symbol's id (`PieceToId`: any piece, else `<unk>`); an unknown symbol
//!   becomes its bytes' `<0xHH>` pieces with byte fallback, else `<unk>`, and a run of
//!   `<unk>` (not interrupted by any other id) is one `<unk>`.
//! - Decode of a `tokenizer.json` model whose `Metaspace` prepends: `tokenizers`' `Metaspace`
//!   decoder (the first id's piece loses every `▁`, other pieces turn each into a space), the
//!   rest as below.
//! - Decode (`DecodeIds`): control pieces are nothing, `<unk>` is the unknown surface, a run of
//!   byte pieces is its bytes with each byte outside a well-formed sequence as U+FFFD, other
//!   pieces are their text with `▁` as a space; while nothing has been written and no earlier
//!   piece gave up a leading `▁`, a piece loses one leading `▁` when the model has
//!   `add_dummy_prefix` or `remove_extra_whitespaces` (with `remove_extra_whitespaces`, giving
//!   it up does not end that window).

use std::collections::HashMap;

use picobpe::{PieceMap, PtrIndex, SpTables};
use picobpe_model::sentencepiece::{SpKind, SpModel, SpSections};
use picobpe_model::SpTableData;

const MARK: char = '\u{2581}';

/// The reference model: pieces by id and by text, and the normalizer's flags.
pub struct SpRef {
    pieces: Vec<String>,
    kinds: Vec<SpKind>,
    /// Unknown, control and byte pieces (sentencepiece's `reserved_id_map_`).
    reserved: HashMap<String, u32>,
    /// Normal and user-defined pieces (sentencepiece's `pieces_`), with their score when two
    /// symbols may merge into them.
    normal: HashMap<String, (u32, Option<f32>)>,
    /// User-defined symbols, longest first.
    user: Vec<String>,
    unk_id: u32,
    byte_fallback: bool,
    add_dummy_prefix: bool,
    remove_extra: bool,
    unk_surface: String,
    /// Sections other than `Inline` follow Hugging Face `tokenizers`, not this reference.
    pub inline: bool,
    /// Decode as `tokenizers`' `Metaspace` decoder does (a `tokenizer.json` whose `Metaspace`
    /// prepends: sections other than `Inline` and `EveryPiecePrefixed`, with the prefix on):
    /// the first id's piece loses every `▁`, no other piece loses one.
    metaspace: bool,
    /// Decode as `tokenizers` does without a decoder: the pieces as they are, joined by
    /// spaces.
    joins_pieces: bool,
    /// A Unigram model: the score of each matchable piece (normal: its own; user-defined:
    /// `0.1 × (bytes − 1)`) and the unknown score; `None` for BPE.
    unigram: Option<(PieceScores, f32)>,
    /// The character map's keys and replacements, read from the `precompiled_charsmap` by
    /// [`charsmap_keys`] (empty for the identity rule), and its longest key.
    charsmap: (HashMap<Vec<u8>, String>, usize),
}

/// Each matchable piece's bytes, with its id and Unigram score.
type PieceScores = HashMap<Vec<u8>, (u32, f32)>;

impl SpRef {
    /// The reference for `model`.
    pub fn new(model: &SpModel) -> SpRef {
        let mut reserved = HashMap::new();
        let mut normal = HashMap::new();
        let mut user = Vec::new();
        for (id, p) in model.pieces.iter().enumerate() {
            let id = id as u32;
            match p.kind {
                SpKind::Normal | SpKind::UserDefined => {
                    normal.insert(p.piece.clone(), (id, p.score));
                }
                SpKind::Unknown | SpKind::Control | SpKind::Byte => {
                    reserved.insert(p.piece.clone(), id);
                }
            }
            if p.kind == SpKind::UserDefined {
                user.push(p.piece.clone());
            }
        }
        user.sort_by_key(|u| std::cmp::Reverse(u.len()));
        SpRef {
            pieces: model.pieces.iter().map(|p| p.piece.clone()).collect(),
            kinds: model.pieces.iter().map(|p| p.kind).collect(),
            reserved,
            normal,
            user,
            unk_id: model
                .pieces
                .iter()
                .position(|p| p.kind == SpKind::Unknown)
                .expect("a valid model has an unknown piece") as u32,
            byte_fallback: model.byte_fallback,
            add_dummy_prefix: model.add_dummy_prefix,
            remove_extra: model.remove_extra_whitespaces,
            unk_surface: model.unk_surface.clone(),
            inline: model.sections == SpSections::Inline,
            metaspace: model.add_dummy_prefix
                && !matches!(
                    model.sections,
                    SpSections::Inline | SpSections::EveryPiecePrefixed
                ),
            joins_pieces: model.joins_pieces,
            charsmap: charsmap_keys(&model.charsmap),
            unigram: model.unigram.then(|| {
                let scores = (0..model.pieces.len())
                    .filter_map(|id| {
                        let s = model.unigram_score(id)?;
                        Some((model.pieces[id].piece.as_bytes().to_vec(), (id as u32, s)))
                    })
                    .collect();
                let unk = model
                    .unk_score()
                    .expect("a Unigram model has normal pieces");
                (scores, unk as f32)
            }),
        }
    }

    /// Unigram `EncodeOptimized` over the whole normalized text, written from its description
    /// in `tests/fixtures/unigram/PROVENANCE.md` (no words, no filter, no stack limits): for
    /// each character start, every matchable piece that starts there (probing every length)
    /// and, when none covers exactly that character, one unknown node; `f32` sums, strictly
    /// greater wins, the ±100000 reset. Returns `(start, end, id)` of the best path.
    fn viterbi(&self, norm: &[u8]) -> Vec<(usize, usize, u32)> {
        let Some((scores, unk_score)) = &self.unigram else {
            return Vec::new();
        };
        let n = norm.len();
        let mut score = vec![0f32; n + 1];
        let mut start: Vec<Option<usize>> = vec![None; n + 1];
        let mut ids = vec![0u32; n + 1];
        let mut max_frontier = 0;
        let mut s = 0;
        while s < n {
            let mblen = match norm[s] {
                0..=0x7F => 1,
                0x80..=0xDF => 2,
                0xE0..=0xEF => 3,
                _ => 4,
            }
            .min(n - s);
            let mut till = score[s];
            if !(-100_000.0..=100_000.0).contains(&till) {
                for i in s..=max_frontier {
                    if i == s || start[i].is_some() {
                        score[i] -= till;
                    }
                }
                till = 0.0;
            }
            let mut offer = |e: usize, cand: f32, id: u32, start: &mut Vec<Option<usize>>| {
                if start[e].is_none() || cand > score[e] {
                    score[e] = cand;
                    start[e] = Some(s);
                    ids[e] = id;
                }
            };
            let mut has_single = false;
            for e in s + 1..=n {
                if let Some(&(id, sc)) = scores.get(&norm[s..e]) {
                    has_single |= e - s == mblen;
                    max_frontier = max_frontier.max(e);
                    offer(e, sc + till, id, &mut start);
                }
            }
            if !has_single {
                max_frontier = max_frontier.max(s + mblen);
                offer(s + mblen, unk_score + till, self.unk_id, &mut start);
            }
            s += mblen;
        }
        let mut path = Vec::new();
        let mut e = n;
        while e > 0 {
            let s = start[e].expect("every character start is reached");
            path.push((s, e, ids[e]));
            e = s;
        }
        path.reverse();
        path
    }

    /// Number of ids.
    pub fn n_ids(&self) -> usize {
        self.pieces.len()
    }

    /// Longest text one id decodes to (a piece, the unknown surface, or one character of a
    /// byte run), in bytes.
    pub fn max_surface(&self) -> usize {
        self.pieces
            .iter()
            .map(String::len)
            .chain([self.unk_surface.len(), 4])
            .max()
            .unwrap_or(4)
    }

    /// The longest user-defined symbol `s` starts with, if any.
    fn user_prefix(&self, s: &[u8]) -> Option<&str> {
        self.user
            .iter()
            .find(|u| s.starts_with(u.as_bytes()))
            .map(String::as_str)
    }

    /// `NormalizePrefix`: the unit at the start of `input` and the input bytes it takes.
    fn unit(&self, input: &[u8]) -> (String, usize) {
        if let Some(u) = self.user_prefix(input) {
            return (u.to_owned(), u.len());
        }
        let (map, longest) = &self.charsmap;
        for len in (1..=(*longest).min(input.len())).rev() {
            if let Some(to) = map.get(&input[..len]) {
                return (to.clone(), len);
            }
        }
        match first_char(input) {
            Some(c) => (c.to_string(), c.len_utf8()),
            None => ('\u{FFFD}'.to_string(), 1),
        }
    }

    /// The normalized text `sentencepiece` merges over (`Normalizer::Normalize`).
    pub fn normalize(&self, text: &[u8]) -> String {
        let mut input = text;
        if self.remove_extra {
            while !input.is_empty() {
                let (unit, len) = self.unit(input);
                if unit != " " {
                    break;
                }
                input = &input[len..];
            }
        }
        let mut out = String::new();
        if input.is_empty() {
            return out;
        }
        if self.add_dummy_prefix {
            out.push(MARK);
        }
        let mut is_prev_space = self.remove_extra;
        while !input.is_empty() {
            let (unit, len) = self.unit(input);
            let mut sp = unit.as_str();
            while is_prev_space && sp.starts_with(' ') {
                sp = &sp[1..];
            }
            if !sp.is_empty() {
                for c in sp.chars() {
                    out.push(if c == ' ' { MARK } else { c });
                }
                is_prev_space = sp.ends_with(' ');
            }
            input = &input[len..];
            if !self.remove_extra {
                is_prev_space = false;
            }
        }
        if self.remove_extra {
            while out.ends_with(MARK) {
                out.pop();
            }
        }
        out
    }

    /// The score of the piece `a + b` when two symbols may merge into it.
    fn pair_score(&self, a: &(String, bool), b: &(String, bool)) -> Option<f32> {
        if a.1 || b.1 {
            return None;
        }
        let joined = format!("{}{}", a.0, b.0);
        self.normal.get(&joined).and_then(|&(_, score)| score)
    }

    /// `PieceToId`.
    fn piece_to_id(&self, piece: &str) -> u32 {
        if let Some(&id) = self.reserved.get(piece) {
            return id;
        }
        self.normal.get(piece).map_or(self.unk_id, |&(id, _)| id)
    }

    /// The symbols after merging, for `text`.
    pub fn merged(&self, text: &[u8]) -> Vec<String> {
        let normalized = self.normalize(text);
        // (symbol, frozen)
        let mut syms: Vec<(String, bool)> = Vec::new();
        let mut rest = normalized.as_str();
        while !rest.is_empty() {
            if let Some(u) = self.user_prefix(rest.as_bytes()) {
                syms.push((u.to_owned(), true));
                rest = &rest[u.len()..];
            } else {
                let c = rest.chars().next().unwrap_or(MARK);
                syms.push((c.to_string(), false));
                rest = &rest[c.len_utf8()..];
            }
        }
        // pairs[i]: the score of merging syms[i] and syms[i + 1].
        let mut pairs: Vec<Option<f32>> = syms
            .windows(2)
            .map(|w| self.pair_score(&w[0], &w[1]))
            .collect();
        loop {
            let mut best: Option<(f32, usize)> = None;
            for (i, score) in pairs.iter().enumerate() {
                if let Some(s) = *score {
                    if best.is_none_or(|(b, _)| ranks_below(b, s)) {
                        best = Some((s, i));
                    }
                }
            }
            let Some((_, i)) = best else { break };
            let right = syms.remove(i + 1);
            syms[i].0.push_str(&right.0);
            pairs.remove(i);
            if i > 0 {
                pairs[i - 1] = self.pair_score(&syms[i - 1], &syms[i]);
            }
            if i + 1 < syms.len() {
                pairs[i] = self.pair_score(&syms[i], &syms[i + 1]);
            }
        }
        syms.into_iter().map(|s| s.0).collect()
    }

    /// `EncodeAsIds`.
    pub fn encode(&self, text: &[u8]) -> Vec<u32> {
        let mut ids = Vec::new();
        let mut prev_unk = false;
        if self.unigram.is_some() {
            let norm = self.normalize(text);
            for (s, e, id) in self.viterbi(norm.as_bytes()) {
                let is_unk = id == self.unk_id;
                if is_unk && self.byte_fallback {
                    for b in &norm.as_bytes()[s..e] {
                        ids.push(self.piece_to_id(&format!("<0x{b:02X}>")));
                    }
                } else if !(is_unk && prev_unk) {
                    ids.push(id);
                }
                prev_unk = is_unk;
            }
            return ids;
        }
        for sym in self.merged(text) {
            let id = self.piece_to_id(&sym);
            let is_unk = id == self.unk_id;
            if is_unk && self.byte_fallback {
                for b in sym.bytes() {
                    ids.push(self.piece_to_id(&format!("<0x{b:02X}>")));
                }
            } else if !(is_unk && prev_unk) {
                ids.push(id);
            }
            prev_unk = is_unk;
        }
        ids
    }

    /// `DecodeIds`, as UTF-8 bytes; an id out of range is `Err((its position, bytes of the
    /// ids before it))`.
    pub fn decode(&self, ids: &[u32]) -> Result<Vec<u8>, (usize, usize)> {
        if self.joins_pieces {
            let mut text = String::new();
            for (i, &id) in ids.iter().enumerate() {
                let Some(piece) = self.pieces.get(id as usize) else {
                    return Err((i, text.len()));
                };
                if i > 0 {
                    text.push(' ');
                }
                text.push_str(piece);
            }
            return Ok(text.into_bytes());
        }
        let mut text = String::new();
        let mut run: Vec<u8> = Vec::new();
        let mut is_bos_ws = true;
        let mut bos_ws_seen = false;
        for (i, &id) in ids.iter().enumerate() {
            let Some(piece) = self.pieces.get(id as usize) else {
                flush_bytes(&mut run, &mut text);
                return Err((i, text.len()));
            };
            let kind = self.kinds[id as usize];
            if kind == SpKind::Byte {
                run.push(byte_value(piece).expect("a valid model's byte piece"));
                continue;
            }
            flush_bytes(&mut run, &mut text);
            if bos_ws_seen || !text.is_empty() {
                is_bos_ws = false;
            }
            bos_ws_seen = match kind {
                SpKind::Control => false,
                SpKind::Unknown => {
                    text.push_str(&self.unk_surface);
                    false
                }
                _ if self.metaspace => {
                    let space = if i == 0 { "" } else { " " };
                    text.push_str(&piece.replace(MARK, space));
                    false
                }
                _ => {
                    let mut rest = piece.as_str();
                    let mut has_bos_ws = false;
                    if is_bos_ws && (self.add_dummy_prefix || self.remove_extra) {
                        if let Some(r) = rest.strip_prefix(MARK) {
                            rest = r;
                            has_bos_ws = !self.remove_extra;
                        }
                    }
                    text.push_str(&rest.replace(MARK, " "));
                    has_bos_ws
                }
            };
        }
        flush_bytes(&mut run, &mut text);
        Ok(text.into_bytes())
    }
}

/// The bytes of a byte run as text: well-formed characters as they are, each other byte as
/// U+FFFD.
fn flush_bytes(run: &mut Vec<u8>, text: &mut String) {
    let mut rest = &run[..];
    while !rest.is_empty() {
        match first_char(rest) {
            Some(c) => {
                text.push(c);
                rest = &rest[c.len_utf8()..];
            }
            None => {
                text.push('\u{FFFD}');
                rest = &rest[1..];
            }
        }
    }
    run.clear();
}

/// The well-formed character at the start of `s`, or `None` when its first byte does not start
/// one.
fn first_char(s: &[u8]) -> Option<char> {
    let window = &s[..s.len().min(4)];
    let valid = match std::str::from_utf8(window) {
        Ok(v) => v,
        Err(e) => std::str::from_utf8(&window[..e.valid_up_to()]).unwrap_or(""),
    };
    valid.chars().next()
}

/// `<0xHH>` → the byte.
fn byte_value(piece: &str) -> Option<u8> {
    let hex = piece.strip_prefix("<0x")?.strip_suffix('>')?;
    if hex.len() != 2 {
        return None;
    }
    u8::from_str_radix(hex, 16).ok()
}

/// `a` ranks strictly below `b` as sentencepiece 0.2.3's `SymbolPairComparator` compares
/// scores: by the IEEE bit patterns as signed integers (both negative: reversed), so `-0.0`
/// ranks below `+0.0`.
pub fn ranks_below(a: f32, b: f32) -> bool {
    let (i1, i2) = (a.to_bits() as i32, b.to_bits() as i32);
    if (i1 & i2) < 0 {
        return i1 > i2;
    }
    if (i1 ^ i2) < 0 {
        return i1 < 0;
    }
    i1 < i2
}

/// Live tables borrowing `data`: what `SpTableData::to_tables` builds, without leaking it (a
/// fuzz target builds tables for every model it loads; leaked ones would grow without bound
/// and make libFuzzer's leak check scan the heap after every input). Field for field as
/// `to_tables`: when `SpTables` changes, keep the two in step.
pub fn borrow_tables<'a>(data: &'a SpTableData<'_>) -> SpTables<'a> {
    SpTables {
        token_bytes: &data.token_bytes,
        token_offsets: &data.token_offsets,
        kinds: &data.kinds,
        priorities: &data.priorities,
        pieces: PieceMap {
            index: PtrIndex {
                seed: data.piece_index.seed,
                pilots: &data.piece_index.pilots,
                remap: &data.piece_index.remap,
                len: data.pieces.len(),
            },
            ids: &data.pieces,
            keys: &data.piece_keys,
        },
        byte_ids: &data.byte_ids,
        unk_id: data.unk_id,
        unk_surface: &data.unk_surface,
        unk_per_char: data.unk_per_char,
        user_defined: &data.user_defined,
        user_strips: &data.user_strips,
        add_dummy_prefix: data.add_dummy_prefix,
        remove_extra_whitespaces: data.remove_extra_whitespaces,
        collapse_spaces: data.collapse_spaces,
        strip_sections: data.strip_sections,
        sections: data.sections,
        pre_split: data.pre_split.map(picobpe::sentencepiece::PreSplit::new),
        joins_pieces: data.joins_pieces,
        split_words: data.split_words,
        cut_bytes: data.cut_bytes,
        algorithm: data.algorithm,
        piece_filter: &data.piece_filter,
        f64_scores: &data.f64_scores,
        charsmap: picobpe::sentencepiece::CharsMap {
            units: &data.charsmap_units,
            strings: &data.charsmap_strings,
            runs: &data.charsmap_runs,
            run_values: &data.charsmap_run_values,
            sequences: &data.charsmap_sequences,
            sequence_values: &data.charsmap_sequence_values,
            tails: &data.charsmap_tails,
            ascii: data.charsmap_ascii,
            lead: data.charsmap_lead,
            ascii_pairs: &data.charsmap_ascii_pairs,
            bmp_index: &data.charsmap_bmp_index,
            bmp_blocks: &data.charsmap_bmp_blocks,
            hangul: data.charsmap_hangul,
            max_key: data.charsmap_lookahead,
        },
        normalizer: data.text_normalizer(),
    }
}

/// Every key of a `precompiled_charsmap` (`sentencepiece`'s layout: a u32 LE trie size, a
/// Darts-clone double array, NUL-terminated replacements) with its replacement, and the
/// longest key's length: a plain depth-first walk over all 255 labels at each node, written
/// from Darts-clone's unit layout (label in bits 0–7 with bit 31 clear, "has leaf" bit 8,
/// offset `bits 10–31 << (bit 9 ? 8 : 0)`, a leaf's value in bits 0–30). The map must be one
/// `picobpe-model` accepted.
pub fn charsmap_keys(blob: &[u8]) -> (HashMap<Vec<u8>, String>, usize) {
    let mut keys = HashMap::new();
    if blob.is_empty() {
        return (keys, 0);
    }
    let size = u32::from_le_bytes(blob[..4].try_into().unwrap()) as usize;
    let unit = |i: usize| u32::from_le_bytes(blob[4 + 4 * i..8 + 4 * i].try_into().unwrap());
    let strings = &blob[4 + size..];
    let offset = |u: u32| ((u >> 10) << ((u & (1 << 9)) >> 6)) as usize;
    let mut stack = vec![(offset(unit(0)), Vec::new())];
    while let Some((node, key)) = stack.pop() {
        for b in 1..=255u8 {
            let child = node ^ usize::from(b);
            let u = unit(child);
            if u & ((1 << 31) | 0xFF) != u32::from(b) {
                continue;
            }
            let mut k: Vec<u8> = key.clone();
            k.push(b);
            let next = child ^ offset(u);
            if u >> 8 & 1 == 1 {
                let value = (unit(next) & !(1 << 31)) as usize;
                let end = value + strings[value..].iter().position(|&c| c == 0).unwrap();
                let to = String::from_utf8(strings[value..end].to_vec()).unwrap();
                keys.insert(k.clone(), to);
            }
            stack.push((next, k));
        }
    }
    let longest = keys.keys().map(Vec::len).max().unwrap_or(0);
    (keys, longest)
}
