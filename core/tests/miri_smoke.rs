//! Core-level tests over hand-built tables, small enough for Miri
//! (`cargo +nightly miri test -p picobpe`).
//!
//! The tables are made here, without `picobpe-model`: a toy vocabulary (the 256 bytes plus a few
//! merges and two special tokens, one a prefix of the other), laid out with the same PtrHash
//! generator the model crate uses. Every public entry point runs on them — one-shot, resumed
//! and streaming encode, count, decode, streaming decode, the pre-tokenizers — and the ids are
//! compared with a plain pair-BPE written below (lowest rank first, leftmost on ties), so the
//! tests check results as well as memory safety. Variants cover an explicit rank table (merge
//! order not monotone in id), and whole-piece tables with and without their packed keys.

use std::collections::HashMap;

use picobpe::layout::{hash_bytes, hash_u64};
use picobpe::pretok::{self, Pattern, Step};
use picobpe::{
    DecodeError, EncodeError, PairMap, PieceMap, PtrIndex, SpecialToken, Specials, StreamDecoder,
    StreamEncoder, StreamError, Tables, Tokenize, Tokenizer,
};

/// A toy model: token bytes by id, merges `(left, right) -> merged` in rank order, specials.
struct Toy {
    tokens: Vec<Vec<u8>>,
    merges: Vec<(u32, u32, u32)>,
    specials: Vec<(&'static str, u32)>,
}

impl Toy {
    /// Bytes in byte order, then merges (given as byte strings) in the order listed, then the
    /// specials. With `shuffle_ranks`, the merges get ids in reverse order (rank != id).
    fn new(merges: &[(&str, &str)], shuffle_ranks: bool) -> Toy {
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        let id_of = |tokens: &[Vec<u8>], s: &[u8]| -> u32 {
            tokens
                .iter()
                .position(|t| t == s)
                .expect("merge part is a token") as u32
        };
        let n = merges.len() as u32;
        let mut made = Vec::new();
        tokens.resize(256 + merges.len(), Vec::new());
        for (rank, (l, r)) in merges.iter().enumerate() {
            let li = id_of(&tokens, l.as_bytes());
            let ri = id_of(&tokens, r.as_bytes());
            let id = if shuffle_ranks {
                256 + n - 1 - rank as u32
            } else {
                256 + rank as u32
            };
            tokens[id as usize] = [l.as_bytes(), r.as_bytes()].concat();
            made.push((li, ri, id));
        }
        let mut specials = Vec::new();
        for s in ["<|eot|>", "<|eot|><|eot|>"] {
            tokens.push(s.as_bytes().to_vec());
            specials.push((s, tokens.len() as u32 - 1));
        }
        Toy {
            tokens,
            merges: made,
            specials,
        }
    }

    /// Reference pair BPE of one piece.
    fn bpe(&self, piece: &[u8]) -> Vec<u32> {
        let rank: HashMap<(u32, u32), (usize, u32)> = self
            .merges
            .iter()
            .enumerate()
            .map(|(r, &(l, rt, m))| ((l, rt), (r, m)))
            .collect();
        let mut ids: Vec<u32> = piece.iter().map(|&b| u32::from(b)).collect();
        loop {
            let best = ids
                .windows(2)
                .enumerate()
                .filter_map(|(i, w)| rank.get(&(w[0], w[1])).map(|&(r, m)| (r, i, m)))
                .min();
            let Some((_, i, m)) = best else { return ids };
            ids[i] = m;
            ids.remove(i + 1);
        }
    }

    /// Reference encode: specials (earliest, then longest), pre-tokenizer pieces, pair BPE.
    fn encode(&self, pattern: Pattern, text: &[u8], specials: bool) -> Vec<u32> {
        let mut out = Vec::new();
        let mut pos = 0;
        loop {
            let next = if specials {
                (pos..text.len()).find_map(|at| {
                    self.specials
                        .iter()
                        .filter(|(s, _)| text[at..].starts_with(s.as_bytes()))
                        .max_by_key(|(s, _)| s.len())
                        .map(|&(s, id)| (at, at + s.len(), id))
                })
            } else {
                None
            };
            let end = next.map_or(text.len(), |n| n.0);
            for piece in pretok::pieces(pattern, &text[pos..end]) {
                out.extend(self.bpe(piece));
            }
            match next {
                Some((_, e, id)) => {
                    out.push(id);
                    pos = e;
                }
                None => return out,
            }
        }
    }
}

/// Owned table storage; [`Layout::tables`] borrows it.
struct Layout {
    token_bytes: Vec<u8>,
    token_offsets: Vec<u32>,
    byte_ids: [u32; 256],
    pair_index: (u64, Vec<u8>, Vec<u32>),
    pair_entries: Vec<u64>,
    ranks: Vec<u32>,
    piece_index: (u64, Vec<u8>, Vec<u32>),
    piece_ids: Vec<u32>,
    piece_keys: Vec<u64>,
    specials: Vec<SpecialToken<'static>>,
    byte_pairs: Vec<u32>,
}

impl Layout {
    /// Lay out `toy`; `pieces` lists the whole-piece ids, `piece_keys` adds their packed keys.
    fn new(toy: &Toy, piece_keys: bool, pieces: &[u32]) -> Layout {
        let mut token_bytes = Vec::new();
        let mut token_offsets = vec![0u32];
        for t in &toy.tokens {
            token_bytes.extend_from_slice(t);
            token_offsets.push(token_bytes.len() as u32);
        }
        let mut byte_ids = [0u32; 256];
        for (b, id) in byte_ids.iter_mut().enumerate() {
            *id = b as u32;
        }
        // Pair keys, hashed exactly as `PairMap::get` hashes them.
        let keys: Vec<u64> = toy
            .merges
            .iter()
            .map(|&(l, r, _)| PairMap::key(l, r).unwrap())
            .collect();
        let state = phf_generator::ptrhash::generate_hash_with_hash_fn(&keys, |k, seed| {
            hash_u64(*k, *seed)
        });
        let pair_entries = state
            .map
            .iter()
            .map(|&i| {
                let (l, r, m) = toy.merges[i];
                PairMap::entry(l, r, m).unwrap()
            })
            .collect();
        let monotone = toy.merges.windows(2).all(|w| w[0].2 < w[1].2);
        let ranks = if monotone {
            Vec::new()
        } else {
            let mut ranks = vec![u32::MAX; toy.tokens.len()];
            for (r, m) in toy.merges.iter().enumerate() {
                ranks[m.2 as usize] = r as u32;
            }
            ranks
        };
        let piece_bytes: Vec<&[u8]> = pieces
            .iter()
            .map(|&id| toy.tokens[id as usize].as_slice())
            .collect();
        let pstate = phf_generator::ptrhash::generate_hash_with_hash_fn(&piece_bytes, |k, seed| {
            hash_bytes(k, *seed)
        });
        let piece_ids: Vec<u32> = pstate.map.iter().map(|&i| pieces[i]).collect();
        let piece_keys = if piece_keys {
            piece_ids
                .iter()
                .map(|&id| {
                    let i = id as usize;
                    picobpe::layout::piece_key_entry(&toy.tokens[i], token_offsets[i])
                })
                .collect()
        } else {
            Vec::new()
        };
        // The host-only lookup aids go with the keys: the byte-pair table too.
        let byte_pairs = if !piece_keys.is_empty() {
            let mut t = vec![u32::MAX; picobpe::bytelevel::BYTE_PAIRS];
            for &(l, r, m) in &toy.merges {
                if l < 256 && r < 256 {
                    t[(l as usize) << 8 | r as usize] = m;
                }
            }
            t
        } else {
            Vec::new()
        };
        let specials = toy
            .specials
            .iter()
            .map(|&(text, id)| SpecialToken { text, id, strip: 0 })
            .collect();
        Layout {
            token_bytes,
            token_offsets,
            byte_ids,
            pair_index: (state.seed, state.pilots, state.remap),
            pair_entries,
            ranks,
            piece_index: (pstate.seed, pstate.pilots, pstate.remap),
            piece_ids,
            piece_keys,
            specials,
            byte_pairs,
        }
    }

    fn tables(&self, pattern: Pattern) -> Tables<'_> {
        Tables {
            pattern,
            token_bytes: &self.token_bytes,
            token_offsets: &self.token_offsets,
            byte_ids: &self.byte_ids,
            pairs: PairMap {
                index: PtrIndex {
                    seed: self.pair_index.0,
                    pilots: &self.pair_index.1,
                    remap: &self.pair_index.2,
                    len: self.pair_entries.len(),
                },
                entries: &self.pair_entries,
            },
            ranks: &self.ranks,
            pieces: PieceMap {
                index: PtrIndex {
                    seed: self.piece_index.0,
                    pilots: &self.piece_index.1,
                    remap: &self.piece_index.2,
                    len: self.piece_ids.len(),
                },
                ids: &self.piece_ids,
                keys: &self.piece_keys,
            },
            specials: &self.specials,
            splits: &[],
            prefix_space: false,
            specials_normalized: false,
            word_end_ids: &[],
            empty_ids: &[],
            byte_pairs: &self.byte_pairs,
            trie: picobpe::TokenTrie::EMPTY,
            normalizer: None,
        }
    }
}

const MERGES: &[(&str, &str)] = &[
    ("t", "h"),
    ("th", "e"),
    (" ", "t"),
    ("h", "e"),
    (" t", "he"),
    ("a", "a"),
    ("aa", "aa"),
    ("e", "r"),
    ("h", "er"),
    ("e", "e"),
];

const TEXTS: &[&[u8]] = &[
    b"",
    b"the",
    b"the other theme there",
    b"aaaaaaa aaaa a",
    b"  the\n\n  there  \t",
    b"<|eot|>the<|eot|><|eot|> <|eot|",
    b"I'll say 'the' 123456 times",
    "h\u{e9}t\u{e9}rog\u{e8}ne \u{65e5}\u{672c} \u{1f600}".as_bytes(),
    b"\xff\xfethe \xc3 \xe2\x82 ok",
];

/// All checks for one layout and pattern.
fn check(toy: &Toy, layout: &Layout, pattern: Pattern) {
    let tables = layout.tables(pattern);
    let tok = Tokenizer::new(&tables);
    for &text in TEXTS {
        // Under Miri (slow) specials as text only where the text has some: elsewhere both
        // modes run the same code on the same pieces.
        let modes = if cfg!(miri) && !text.windows(2).any(|w| w == b"<|") {
            1
        } else {
            2
        };
        for (specials, flag) in [(Specials::All, true), (Specials::None, false)]
            .into_iter()
            .take(modes)
        {
            let want = toy.encode(pattern, text, flag);
            // One-shot.
            let mut out = vec![0u32; 2 * text.len() + 8];
            let n = tok.encode(text, &mut out, specials).expect("encode");
            assert_eq!(&out[..n], want.as_slice(), "{pattern:?} {text:?}");
            // Count, with a scratch buffer grown to what `PieceTooLong` asks for.
            let mut scratch = vec![0u32; 2];
            let counted = loop {
                match tok.count(text, &mut scratch, specials) {
                    Err(EncodeError::PieceTooLong { needed, .. }) => {
                        assert!(needed > scratch.len());
                        scratch = vec![0u32; needed];
                    }
                    other => break other,
                }
            };
            assert_eq!(counted, Ok(want.len()));
            // Resumed through 1-id buffers.
            let mut got = Vec::new();
            let mut rest = text;
            let mut buf = vec![0u32; 1];
            loop {
                match tok.encode(rest, &mut buf, specials) {
                    Ok(n) => {
                        got.extend_from_slice(&buf[..n]);
                        break;
                    }
                    Err(EncodeError::OutputFull { consumed, written }) => {
                        got.extend_from_slice(&buf[..written]);
                        rest = &rest[consumed..];
                        buf = vec![0u32; 1];
                    }
                    Err(EncodeError::PieceTooLong { needed, .. }) => buf = vec![0u32; needed],
                }
            }
            assert_eq!(got, want, "resumed {pattern:?} {text:?}");
            // Streaming, 3-byte chunks, 2-id takes.
            let mut enc: StreamEncoder<Tokenizer<'_>, 64, 32> = StreamEncoder::new(tok, specials);
            let mut got = Vec::new();
            let take = |enc: &mut StreamEncoder<Tokenizer<'_>, 64, 32>, got: &mut Vec<u32>| loop {
                let mut b = [0u32; 2];
                let k = enc.take(&mut b).expect("take");
                if k == 0 {
                    break;
                }
                got.extend_from_slice(&b[..k]);
            };
            for chunk in text.chunks(3) {
                let mut c = chunk;
                while !c.is_empty() {
                    let k = enc.push(c).expect("push");
                    c = &c[k..];
                    take(&mut enc, &mut got);
                }
            }
            enc.finish();
            take(&mut enc, &mut got);
            assert!(enc.is_done());
            assert_eq!(enc.push(b"x"), Err(StreamError::Finished));
            assert_eq!(got, want, "stream {pattern:?} {text:?}");
            // Decode, one-shot and streaming.
            assert_eq!(tok.decoded_len(&want), Ok(text.len()));
            let mut bytes = vec![0u8; text.len()];
            assert_eq!(tok.decode(&want, &mut bytes), Ok(text.len()));
            assert_eq!(bytes, text);
            let mut dec: StreamDecoder<Tokenizer<'_>, 32> = StreamDecoder::new(tok);
            let mut back = Vec::new();
            for &id in &want {
                dec.push(id).expect("push id");
                let mut b = [0u8; 4];
                loop {
                    let k = dec.take(&mut b);
                    if k == 0 {
                        break;
                    }
                    assert!(
                        std::str::from_utf8(&b[..k]).is_ok() || std::str::from_utf8(text).is_err()
                    );
                    back.extend_from_slice(&b[..k]);
                }
            }
            dec.finish();
            let mut b = [0u8; 64];
            let k = dec.take(&mut b);
            back.extend_from_slice(&b[..k]);
            assert_eq!(back, text, "stream decode {pattern:?}");
        }
    }
    // Unknown ids and a too-small buffer.
    let unknown = toy.tokens.len() as u32 + 5;
    let mut b = [0u8; 8];
    assert_eq!(
        tok.decode(&[116, unknown], &mut b),
        Err(DecodeError::UnknownId {
            position: 1,
            id: unknown,
            written: 1
        })
    );
    assert_eq!(
        tok.decode(&[116; 9], &mut b),
        Err(DecodeError::OutputFull {
            consumed: 8,
            written: 8
        })
    );
    assert_eq!(tok.token_bytes(u32::MAX), None);
}

#[test]
fn rank_is_id() {
    let toy = Toy::new(MERGES, false);
    let layout = Layout::new(&toy, false, &[]);
    // Under Miri (slow) not cl100k's pattern: its splitter runs in
    // `pretokenizers_cover_the_input` and in the core's unit tests.
    let patterns = if cfg!(miri) {
        &[Pattern::Gpt2, Pattern::O200k][..]
    } else {
        &[Pattern::Gpt2, Pattern::Cl100k, Pattern::O200k]
    };
    for &pattern in patterns {
        check(&toy, &layout, pattern);
    }
}

#[test]
fn rank_table() {
    let toy = Toy::new(MERGES, true);
    let layout = Layout::new(&toy, false, &[]);
    assert!(!layout.ranks.is_empty(), "reversed ids need a rank table");
    check(&toy, &layout, Pattern::Gpt2);
}

#[test]
fn whole_piece_table() {
    // Pieces that BPE reaches from their own bytes may be listed: the result must not change.
    let toy = Toy::new(MERGES, false);
    let reachable: Vec<u32> = (256..256 + toy.merges.len() as u32)
        .filter(|&id| toy.bpe(&toy.tokens[id as usize]) == [id])
        .collect();
    assert!(reachable.len() >= 5);
    for piece_keys in [false, true] {
        let layout = Layout::new(&toy, piece_keys, &reachable);
        for &id in &reachable {
            let tables = layout.tables(Pattern::Gpt2);
            assert_eq!(tables.piece(&toy.tokens[id as usize]), Some(id));
        }
        check(&toy, &layout, Pattern::O200k);
    }
}

#[test]
fn pretokenizers_cover_the_input() {
    for pattern in [Pattern::Gpt2, Pattern::Cl100k, Pattern::O200k] {
        for &text in TEXTS {
            let joined: Vec<u8> = pretok::pieces(pattern, text).flatten().copied().collect();
            assert_eq!(joined, text);
            // Streaming rule: a piece returned before the end is final.
            let mut pos = 0;
            while pos < text.len() {
                match pretok::next_piece(pattern, text, pos, false) {
                    Step::Piece { end } => {
                        assert_eq!(
                            pretok::next_piece(pattern, text, pos, true),
                            Step::Piece { end }
                        );
                        pos = end;
                    }
                    Step::NeedMore => break,
                    Step::Skip { .. } => unreachable!("hand-rolled patterns drop nothing"),
                }
            }
        }
    }
}

/// A piece over 512 bytes goes through the block-min tree merge; the piece cache gives the
/// same ids as no cache, on misses and on hits.
#[test]
fn long_piece_and_piece_cache() {
    let toy = Toy::new(MERGES, false);
    let layout = Layout::new(&toy, false, &[]);
    let tables = layout.tables(Pattern::Gpt2);
    let tok = Tokenizer::new(&tables);
    // Under Miri (slow, and the reference BPE is quadratic) mostly letters that never merge.
    let (the, ab, x) = if cfg!(miri) {
        (4, 4, 520)
    } else {
        (150, 200, 0)
    };
    let mut text = b"the".repeat(the);
    text.extend_from_slice(b"ab".repeat(ab).as_slice());
    text.extend_from_slice(b"x".repeat(x).as_slice());
    let long = text.len();
    text.extend_from_slice(b" theme other the");
    let want = toy.encode(Pattern::Gpt2, &text, false);
    let mut small = vec![0u32; long];
    assert_eq!(
        tok.encode(&text, &mut small, Specials::None),
        Err(EncodeError::PieceTooLong {
            offset: 0,
            len: long,
            needed: picobpe::bytelevel::scratch_needed(long),
        })
    );
    let mut out = vec![0u32; picobpe::bytelevel::scratch_needed(text.len())];
    let n = tok.encode(&text, &mut out, Specials::None).expect("encode");
    assert_eq!(&out[..n], want.as_slice());
    let mut cache = [picobpe::CacheEntry::EMPTY; 3];
    for _ in 0..2 {
        let n = tok
            .encode_cached(&text, &mut out, Specials::None, &mut cache)
            .expect("encode_cached");
        assert_eq!(&out[..n], want.as_slice());
    }
}

#[test]
fn unicode_normalizer_windows() {
    // A normalizing model: text NFD changes (precomposed letters, a Hangul syllable), around
    // special tokens, and a piece longer than the stack window (a letter with 150 marks:
    // normalized into the free end of the output buffer, the `bytemuck` view). The expected
    // ids are the toy's BPE of the normalized text (the normalizer itself is checked against
    // `tokenizers` in tests/tests/unicode_normalization.rs).
    use picobpe::normalizer::{normalize, UnicodeForm};
    let toy = Toy::new(MERGES, false);
    let layout = Layout::new(&toy, false, &[]);
    let mut tables = layout.tables(Pattern::Gpt2);
    tables.normalizer = Some(picobpe::normalizer::TextNormalizer::new(UnicodeForm::Nfd));
    let tok = Tokenizer::new(&tables);
    let mut long = String::from("the ");
    long.push('e');
    long.extend(std::iter::repeat_n(
        '\u{301}',
        if cfg!(miri) { 150 } else { 400 },
    ));
    long.push_str(" other");
    let texts = [
        "the caf\u{e9} th\u{e9}me<|eot|>\u{c5} \u{ac00}".to_owned(),
        long,
    ];
    for text in &texts {
        let mut nfd = vec![0u8; 4 * text.len() + 8];
        let p = normalize(UnicodeForm::Nfd, text.as_bytes(), true, &mut nfd).unwrap();
        nfd.truncate(p.written);
        // Special tokens are found in the raw text: normalize between them.
        let want: Vec<u32> = {
            let parts: Vec<&str> = text.split("<|eot|>").collect();
            let mut ids = Vec::new();
            for (i, part) in parts.iter().enumerate() {
                let mut buf = vec![0u8; 4 * part.len() + 8];
                let p = normalize(UnicodeForm::Nfd, part.as_bytes(), true, &mut buf).unwrap();
                ids.extend(toy.encode(Pattern::Gpt2, &buf[..p.written], false));
                if i + 1 < parts.len() {
                    ids.extend(toy.encode(Pattern::Gpt2, b"<|eot|>", true));
                }
            }
            ids
        };
        let mut out = vec![0u32; 3 * nfd.len() + 64];
        let n = tok
            .encode(text.as_bytes(), &mut out, Specials::All)
            .expect("encode");
        assert_eq!(&out[..n], want.as_slice(), "{text:?}");
        // Resumed through small buffers, grown on `PieceTooLong`.
        let (mut got, mut rest, mut buf) = (Vec::new(), text.as_bytes(), vec![0u32; 3]);
        loop {
            match tok.encode(rest, &mut buf, Specials::All) {
                Ok(n) => {
                    got.extend_from_slice(&buf[..n]);
                    break;
                }
                Err(EncodeError::OutputFull { consumed, written }) => {
                    got.extend_from_slice(&buf[..written]);
                    rest = &rest[consumed..];
                }
                Err(EncodeError::PieceTooLong { needed, .. }) => {
                    assert!(needed > buf.len());
                    buf = vec![0u32; needed];
                }
            }
        }
        assert_eq!(got, want, "resumed {text:?}");
    }
}
