//! SentencePiece BPE, SentencePiece Unigram and WordPiece over small hand-built models, small
//! enough for Miri (`cargo xtask miri`), as `miri_smoke.rs` does for byte-level BPE.
//!
//! The tables borrow the model crate's table data (`sp::borrow_tables`,
//! `WpTableData::with_tables`) rather than leaking it, so Miri's leak check stays on.
//!
//! The models are written out here piece by piece and laid out by `picobpe-model` (its table
//! building is host code, run under Miri too). Every public entry point runs on them —
//! one-shot, resumed (`encode_from` at each `consumed`, `encode_at`), cached, counted and
//! streamed encode; one-shot, resumed and streamed decode — and the ids are compared with
//! naive references that share no code with the core: for SentencePiece the port of
//! `sentencepiece` 0.2.3 in `fuzz/src/sp.rs` (whole text, no words; checked against
//! `sentencepiece`'s own vectors, see `docs/hostile-inputs.md`), for WordPiece a greedy
//! longest-match over a BERT split written below for the few characters the texts use.

use picobpe::{
    CacheEntry, Cursor, DecodeError, EncodeError, SpTokenizer, Specials, StreamDecoder,
    StreamEncoder, StreamError, Tokenize, WpTables, WpTokenizer,
};
use picobpe_model::sentencepiece::{SpKind, SpModel, SpPiece, SpSections};
use picobpe_model::{SpTableData, WpModel, WpTableData};

#[allow(dead_code)]
#[path = "../../fuzz/src/sp.rs"]
mod sp;

use sp::SpRef;

/// A SentencePiece model: `<unk>`, `<s>`, `</s>`, the byte pieces when `byte_fallback`, then
/// `normal` (text, score) and the user-defined symbols.
fn sp_model(normal: &[(&str, f32)], user: &[&str], byte_fallback: bool, unigram: bool) -> SpModel {
    let piece = |piece: &str, score: Option<f32>, kind: SpKind| SpPiece {
        piece: piece.to_owned(),
        score,
        kind,
    };
    let mut pieces = vec![
        piece("<unk>", Some(0.0), SpKind::Unknown),
        piece("<s>", Some(0.0), SpKind::Control),
        piece("</s>", Some(0.0), SpKind::Control),
    ];
    if byte_fallback {
        for b in 0..=255u8 {
            pieces.push(piece(&format!("<0x{b:02X}>"), Some(0.0), SpKind::Byte));
        }
    }
    for &(text, score) in normal {
        pieces.push(piece(text, Some(score), SpKind::Normal));
    }
    for &text in user {
        pieces.push(piece(text, Some(0.0), SpKind::UserDefined));
    }
    SpModel {
        pieces,
        add_dummy_prefix: true,
        remove_extra_whitespaces: true,
        byte_fallback,
        unk_surface: " \u{2047} ".to_owned(),
        sections: SpSections::Inline,
        unigram,
        f64_scores: Vec::new(),
        charsmap: Vec::new(),
        unk_in_text: false,
        unk_per_char: false,
        normalizer: None,
        precompiled: false,
        collapse_spaces: false,
        strip_sections: false,
        strips: Vec::new(),
        char_steps: Default::default(),
        pre_split: None,
        joins_pieces: false,
    }
}

/// BPE pieces: single characters (scored low) and merges whose scores make the order matter
/// (`▁th` before `he`, `er` before `he`).
const BPE_PIECES: &[(&str, f32)] = &[
    ("\u{2581}", -10.0),
    ("t", -10.1),
    ("h", -10.2),
    ("e", -10.3),
    ("r", -10.4),
    ("a", -10.5),
    ("b", -10.6),
    ("o", -10.7),
    ("n", -10.8),
    ("s", -10.9),
    ("é", -11.0),
    ("th", -1.0),
    ("\u{2581}t", -0.5),
    ("\u{2581}th", -0.4),
    ("he", -2.0),
    ("er", -1.5),
    ("\u{2581}the", -0.1),
    ("\u{2581}there", -3.0),
    ("ther", -2.5),
    ("re", -2.2),
    ("ab", -1.2),
    ("aba", -1.3),
    ("on", -1.1),
    ("\u{2581}on", -1.05),
];

/// Unigram pieces: several segmentations of the same text, decided by the scores.
const UNIGRAM_PIECES: &[(&str, f32)] = &[
    ("\u{2581}", -3.0),
    ("t", -4.0),
    ("h", -4.5),
    ("e", -3.5),
    ("r", -4.2),
    ("a", -3.8),
    ("b", -4.8),
    ("o", -4.1),
    ("n", -4.4),
    ("th", -5.0),
    ("\u{2581}the", -4.0),
    ("\u{2581}th", -6.0),
    ("her", -5.5),
    ("here", -6.5),
    ("\u{2581}there", -9.5),
    ("ab", -6.0),
    ("ba", -5.0),
    ("aba", -8.0),
    ("\u{2581}on", -5.2),
    ("é", -7.0),
];

const SP_TEXTS: &[&[u8]] = &[
    b"",
    b"the",
    b"  the  there   other\tthe ",
    b"abababa aba bab",
    b"on the <sep>abab<sep><sep> on",
    // Characters that are no piece (byte fallback or `<unk>`), then invalid UTF-8.
    b"h\xc3\xa9ro \xe6\x97\xa5\xf0\x9f\x98\x80z \xff\xfethe \xc3 \xe2\x82 ok\x80",
];

/// Every SentencePiece entry point on `model`'s tables, against the reference.
fn check_sp(model: &SpModel) {
    let reference = SpRef::new(model);
    let data = SpTableData::new(model).expect("a valid model");
    let tables = &sp::borrow_tables(&data);
    let tok = SpTokenizer::new(tables);
    assert_eq!(tok.is_unigram(), model.unigram);
    let mut cache = vec![CacheEntry::EMPTY; 4];
    for &text in SP_TEXTS {
        let want = reference.encode(text);
        // One-shot.
        let mut out = vec![0u32; 16 * text.len() + 16];
        let n = tok.encode(text, &mut out).expect("encode");
        assert_eq!(&out[..n], want.as_slice(), "{text:?}");
        // Cached, twice (misses, then hits).
        for _ in 0..2 {
            let n = tok
                .encode_from(text, 0, &mut out, Specials::All, &mut cache)
                .expect("encode_from, cached");
            assert_eq!(&out[..n], want.as_slice(), "cached {text:?}");
        }
        // Count, with a scratch buffer grown to what `PieceTooLong` asks for.
        let mut scratch = vec![0u32; 1];
        let counted = loop {
            match tok.count(text, &mut scratch, Specials::All) {
                Err(EncodeError::PieceTooLong { needed, .. }) => {
                    assert!(needed > scratch.len());
                    scratch = vec![0u32; needed];
                }
                other => break other,
            }
        };
        assert_eq!(counted, Ok(want.len()), "count {text:?}");
        assert_eq!(
            resumed(text, |from, buf| tok.encode_from(
                text,
                from,
                buf,
                Specials::All,
                &mut []
            )),
            want
        );
        // `encode_at`, with and without a cache.
        for cached in [false, true] {
            let mut cursor = Cursor::START;
            let got = resumed(text, |from, buf| {
                assert_eq!(cursor.offset(), from);
                let cache: &mut [CacheEntry] = if cached { &mut cache } else { &mut [] };
                tok.encode_at(text, &mut cursor, buf, Specials::All, cache)
            });
            assert_eq!(got, want, "encode_at {text:?}");
        }
        // Streaming, 3-byte chunks, 2-id takes.
        let mut enc: StreamEncoder<SpTokenizer<'_>, 64, 512> =
            StreamEncoder::new(tok, Specials::All);
        let got = stream(&mut enc, text);
        assert_eq!(enc.push(b"x"), Err(StreamError::Finished));
        assert_eq!(got, want, "stream {text:?}");
        check_sp_decode(&tok, &reference, &want);
    }
    // Ids that are no piece, and a buffer too small.
    let unknown = model.n_ids() as u32;
    let the = [tables.piece_id("\u{2581}the".as_bytes()).expect("a piece"); 3];
    let mut b = [0u8; 5];
    assert_eq!(
        tok.decode(&[the[0], unknown], &mut b),
        Err(DecodeError::UnknownId {
            position: 1,
            id: unknown,
            written: 3
        })
    );
    assert_eq!(
        tok.decode(&the, &mut b),
        Err(DecodeError::OutputFull {
            consumed: 1,
            written: 3
        })
    );
    let mut dec: StreamDecoder<SpTokenizer<'_>, 64> = StreamDecoder::new(tok);
    assert!(matches!(
        dec.push(unknown),
        Err(DecodeError::UnknownId { id, .. }) if id == unknown
    ));
}

/// Encode through 1-id buffers with `call(from, buf)` (an `encode_from`-like call), growing
/// the buffer to what `PieceTooLong` asks for; the ids of every call, joined.
fn resumed(
    text: &[u8],
    mut call: impl FnMut(usize, &mut [u32]) -> Result<usize, EncodeError>,
) -> Vec<u32> {
    let mut got = Vec::new();
    let mut from = 0;
    let mut buf = vec![0u32; 1];
    loop {
        match call(from, &mut buf) {
            Ok(n) => {
                got.extend_from_slice(&buf[..n]);
                return got;
            }
            Err(EncodeError::OutputFull { consumed, written }) => {
                assert!(consumed <= text.len());
                got.extend_from_slice(&buf[..written]);
                from = consumed;
                buf = vec![0u32; 1];
            }
            Err(EncodeError::PieceTooLong { needed, .. }) => {
                assert!(needed > buf.len());
                buf = vec![0u32; needed];
            }
        }
    }
}

/// Decode `ids` one-shot, resumed through a 4-byte buffer, and streamed, against the reference.
fn check_sp_decode(tok: &SpTokenizer<'_>, reference: &SpRef, ids: &[u32]) {
    let want = reference.decode(ids).expect("every id is a piece");
    let mut out = vec![0u8; want.len() + 8];
    let n = tok.decode(ids, &mut out).expect("decode");
    assert_eq!(&out[..n], want.as_slice(), "decode {ids:?}");
    // Resumed: `decode_from` each `consumed`, into 4 bytes (more when a piece needs them).
    let mut got = Vec::new();
    let mut from = 0;
    let mut room = 4;
    loop {
        let mut b = vec![0u8; room];
        match tok.decode_from(ids, from, &mut b) {
            Ok(k) => {
                got.extend_from_slice(&b[..k]);
                break;
            }
            Err(DecodeError::OutputFull { consumed, written }) => {
                if consumed == from && written == 0 {
                    // The next piece alone is longer than the buffer.
                    room += 4;
                    assert!(room <= 64, "no progress at {from}");
                    continue;
                }
                got.extend_from_slice(&b[..written]);
                from = consumed;
                room = 4;
            }
            Err(e) => panic!("{e:?}"),
        }
    }
    assert_eq!(got, want, "decode_from {ids:?}");
    // Streamed: whole characters only before `finish`.
    let mut dec: StreamDecoder<SpTokenizer<'_>, 64> = StreamDecoder::new(*tok);
    let mut got = Vec::new();
    let drain = |dec: &mut StreamDecoder<SpTokenizer<'_>, 64>, got: &mut Vec<u8>| loop {
        let mut b = [0u8; 4];
        let k = dec.take(&mut b);
        if k == 0 {
            break;
        }
        assert!(std::str::from_utf8(&b[..k]).is_ok(), "{:?}", &b[..k]);
        got.extend_from_slice(&b[..k]);
    };
    for &id in ids {
        dec.push(id).expect("push id");
        drain(&mut dec, &mut got);
    }
    dec.finish();
    drain(&mut dec, &mut got);
    assert_eq!(got, want, "stream decode {ids:?}");
}

#[test]
fn sentencepiece_bpe() {
    let model = sp_model(BPE_PIECES, &["<sep>"], true, false);
    // The reference's merges are what the scores say (checked by hand): `▁t`, `▁th`, `▁the`,
    // then `re` and `▁there`; `ab` twice.
    let reference = SpRef::new(&model);
    assert_eq!(
        reference.merged(b"the there"),
        ["\u{2581}the", "\u{2581}there"]
    );
    assert_eq!(reference.merged(b"abab"), ["\u{2581}", "ab", "ab"]);
    check_sp(&model);
}

#[test]
fn sentencepiece_bpe_without_byte_fallback() {
    // Unknown characters are `<unk>`, a run of them one `<unk>`; no cache is used.
    let model = sp_model(BPE_PIECES, &["<sep>"], false, false);
    check_sp(&model);
}

/// Unigram without byte fallback (under Miri, laying out the 256 byte pieces' index takes
/// half a minute: the byte-fallback path is the BPE test's).
#[test]
fn sentencepiece_unigram() {
    let model = sp_model(UNIGRAM_PIECES, &["<sep>"], false, true);
    let reference = SpRef::new(&model);
    // Checked by hand: `▁there` (-9.5) beats `▁the` `r` `e` (-11.7) and `▁` `t` `here`
    // (-13.5).
    let ids = reference.encode(b"there");
    assert_eq!(
        ids,
        [model
            .pieces
            .iter()
            .position(|p| p.piece == "\u{2581}there")
            .unwrap() as u32]
    );
    check_sp(&model);
}

/// A WordPiece model: `[PAD]`, `[UNK]`, `[CLS]`, `[SEP]`, then `vocab`.
fn wp_model(vocab: &[&str]) -> WpModel {
    let mut all: Vec<String> = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    all.extend(vocab.iter().map(|s| s.to_string()));
    WpModel {
        vocab: all,
        unk_id: 1,
        prefix: "##".to_owned(),
        max_chars_per_word: 12,
        clean_text: true,
        handle_chinese_chars: true,
        strip_accents: true,
        lowercase: true,
        cleanup: true,
        specials: vec![("[CLS]".to_owned(), 2), ("[SEP]".to_owned(), 3)],
        normalizer: None,
        char_steps: Default::default(),
        split: Default::default(),
        strips: Vec::new(),
    }
}

const WP_VOCAB: &[&str] = &[
    "the", "there", "th", "##e", "##re", "##r", "un", "##aff", "##able", "aff", "##ord", "e", "a",
    "b", "##a", "##b", "##ab", ".", ",", "!", "'", "s", "##s", "中", "文", "t", "##t", "do", "not",
    "n", "##'", "cafe",
];

const WP_TEXTS: &[&[u8]] = &[
    b"",
    b"the",
    b"There unaffable, THE affordable!",
    b"  \t the\n\nthere  ",
    b"abababab ab a b",
    b"[CLS] the [SEP][SEP]there[CLS]",
    "caf\u{e9} Caf\u{c9} \u{4e2d}\u{6587}\u{4e2d} the's".as_bytes(),
    b"aaaaaaaaaaaaa aaaaaaaaaaaa do not unxyz",
    b"the\x00 \x07there\xff the",
];

/// The reference WordPiece encoder, for the characters `WP_TEXTS` holds: added tokens, then
/// `BertNormalizer` (control characters dropped, whitespace splits, CJK and ASCII
/// punctuation are words of their own, `é`/`É` become `e`, ASCII is lowercased; U+FFFD, as
/// each invalid byte is read, is dropped too), then greedy longest-match-first.
fn wp_reference(model: &WpModel, text: &[u8], specials: bool) -> Vec<u32> {
    let id = |s: &str| model.vocab.iter().position(|v| v == s).map(|i| i as u32);
    let mut out = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let flush = |word: &mut String, words: &mut Vec<String>| {
        if !word.is_empty() {
            words.push(std::mem::take(word));
        }
    };
    let encode_words = |words: &mut Vec<String>, out: &mut Vec<u32>| {
        for w in words.drain(..) {
            let chars: Vec<char> = w.chars().collect();
            if chars.len() > model.max_chars_per_word as usize {
                out.push(model.unk_id);
                continue;
            }
            let mut ids = Vec::new();
            let mut start = 0;
            while start < chars.len() {
                let found = (start + 1..=chars.len()).rev().find_map(|end| {
                    let piece: String = chars[start..end].iter().collect();
                    let key = if start == 0 {
                        piece
                    } else {
                        format!("##{piece}")
                    };
                    id(&key).map(|i| (end, i))
                });
                match found {
                    Some((end, i)) => {
                        ids.push(i);
                        start = end;
                    }
                    None => {
                        ids = vec![model.unk_id];
                        break;
                    }
                }
            }
            out.extend(ids);
        }
    };
    let text = String::from_utf8_lossy(text);
    let mut rest: &str = &text;
    while let Some(c) = rest.chars().next() {
        if specials {
            if let Some((s, sid)) = model
                .specials
                .iter()
                .find(|(s, _)| rest.starts_with(s.as_str()))
            {
                flush(&mut word, &mut words);
                encode_words(&mut words, &mut out);
                out.push(*sid);
                rest = &rest[s.len()..];
                continue;
            }
        }
        rest = &rest[c.len_utf8()..];
        let c = match c {
            '\u{e9}' | '\u{c9}' => 'e',
            c => c.to_ascii_lowercase(),
        };
        if c == '\u{FFFD}' || (c.is_control() && !c.is_whitespace()) {
            continue;
        }
        if c.is_whitespace() {
            flush(&mut word, &mut words);
        } else if c.is_ascii_punctuation() || ('\u{4e00}'..='\u{9fff}').contains(&c) {
            flush(&mut word, &mut words);
            words.push(c.to_string());
        } else {
            word.push(c);
        }
    }
    flush(&mut word, &mut words);
    encode_words(&mut words, &mut out);
    out
}

/// The reference WordPiece decoder (`tokenizers`' `decode(ids)`): added tokens skipped; every
/// token after the first loses `##` or gets a space before it; then each token's clean-up.
fn wp_decode_reference(model: &WpModel, ids: &[u32]) -> Vec<u8> {
    const CLEANUP: [(&str, &str); 11] = [
        (" .", "."),
        (" ?", "?"),
        (" !", "!"),
        (" ,", ","),
        (" ' ", "'"),
        (" n't", "n't"),
        (" 'm", "'m"),
        (" do not", " don't"),
        (" 's", "'s"),
        (" 've", "'ve"),
        (" 're", "'re"),
    ];
    let mut text = String::new();
    let kept = ids
        .iter()
        .filter(|&&i| !model.specials.iter().any(|s| s.1 == i));
    for (i, &id) in kept.enumerate() {
        let token = &model.vocab[id as usize];
        let mut piece = match token.strip_prefix("##") {
            Some(rest) if i > 0 => rest.to_owned(),
            _ if i > 0 => format!(" {token}"),
            _ => token.clone(),
        };
        for (from, to) in CLEANUP {
            piece = piece.replace(from, to);
        }
        text.push_str(&piece);
    }
    text.into_bytes()
}

/// Push `text` into `enc` in 3-byte chunks, taking ids 2 at a time after every push, then
/// finish and drain; the stream must be done. Returns the ids.
fn stream<T: Tokenize, const IN: usize, const OUT: usize>(
    enc: &mut StreamEncoder<T, IN, OUT>,
    text: &[u8],
) -> Vec<u32> {
    let mut got = Vec::new();
    let take = |enc: &mut StreamEncoder<T, IN, OUT>, got: &mut Vec<u32>| loop {
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
            take(enc, &mut got);
        }
    }
    enc.finish();
    take(enc, &mut got);
    assert!(enc.is_done());
    got
}

/// Every WordPiece entry point on `tables`, against the references.
fn check_wp(model: &WpModel, tables: &WpTables<'_>) {
    let tok = WpTokenizer::new(tables);
    for &text in WP_TEXTS {
        // Added tokens as text only where there are some (Miri is slow).
        let none = text.windows(5).any(|w| w == b"[CLS]" || w == b"[SEP]");
        let modes = [(Specials::All, true), (Specials::None, false)];
        for (specials, flag) in modes.into_iter().take(1 + usize::from(none)) {
            let want = wp_reference(model, text, flag);
            let mut out = vec![0u32; 2 * text.len() + 4];
            let n = tok.encode(text, &mut out, specials).expect("encode");
            assert_eq!(&out[..n], want.as_slice(), "{text:?} {specials:?}");
            let got = resumed(text, |from, buf| tok.encode_from(text, from, buf, specials));
            assert_eq!(got, want, "resumed {text:?} {specials:?}");
            // Decode one-shot, then resumed with `decode_after` through a 3-byte buffer.
            let want_text = wp_decode_reference(model, &want);
            let mut bytes = vec![0u8; want_text.len() + 4];
            let k = tok.decode(&want, &mut bytes).expect("decode");
            assert_eq!(&bytes[..k], want_text.as_slice(), "decode {want:?}");
            let mut got = Vec::new();
            let mut rest: &[u32] = &want;
            let mut first = true;
            let mut b = [0u8; 8];
            loop {
                let r = if first {
                    tok.decode(rest, &mut b)
                } else {
                    tok.decode_after(rest, &mut b)
                };
                match r {
                    Ok(k) => {
                        got.extend_from_slice(&b[..k]);
                        break;
                    }
                    Err(DecodeError::OutputFull { consumed, written }) => {
                        assert!(consumed > 0 || written > 0, "no progress");
                        got.extend_from_slice(&b[..written]);
                        if consumed > 0 {
                            first = false;
                        }
                        rest = &rest[consumed..];
                    }
                    Err(e) => panic!("{e:?}"),
                }
            }
            assert_eq!(got, want_text, "decode_after {want:?}");
            // The streams: 3-byte chunks in, 2-id takes; ids one at a time out, 4-byte takes.
            let mut enc: StreamEncoder<WpTokenizer<'_>, 64, 64> = StreamEncoder::new(tok, specials);
            let got = stream(&mut enc, text);
            assert_eq!(got, want, "stream {text:?} {specials:?}");
            let mut dec: StreamDecoder<WpTokenizer<'_>, 64> = StreamDecoder::new(tok);
            let mut got = Vec::new();
            for &id in &want {
                dec.push(id).expect("push id");
                let mut b = [0u8; 4];
                loop {
                    let k = dec.take(&mut b);
                    if k == 0 {
                        break;
                    }
                    got.extend_from_slice(&b[..k]);
                }
            }
            dec.finish();
            let mut b = [0u8; 64];
            let k = dec.take(&mut b);
            got.extend_from_slice(&b[..k]);
            assert_eq!(got, want_text, "stream decode {want:?}");
        }
    }
    let unknown = model.vocab.len() as u32;
    let mut b = [0u8; 16];
    assert_eq!(
        tok.decode(&[4, unknown], &mut b),
        Err(DecodeError::UnknownId {
            position: 1,
            id: unknown,
            written: 3
        })
    );
}

#[test]
fn wordpiece() {
    let model = wp_model(WP_VOCAB);
    // The reference is what BERT does (checked by hand): greedy longest match.
    let id = |s: &str| model.vocab.iter().position(|v| v == s).unwrap() as u32;
    assert_eq!(
        wp_reference(&model, b"Unaffable theres", true),
        [id("un"), id("##aff"), id("##able"), id("there"), id("##s")]
    );
    let data = WpTableData::new(&model).expect("a valid model");
    data.with_tables(|tables| check_wp(&model, tables));
}
