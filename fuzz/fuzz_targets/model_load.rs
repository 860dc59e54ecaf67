//! Model files from hostile bytes: the loader must return an error (never panic, never allocate
//! far beyond the input — run with `-malloc_limit_mb`), and whatever loads must bake.
//!
//! Input: `[mode][...]`:
//! - mode 0: the rest is a whole model file of any kind (`AnyModel::from_bytes`);
//! - mode 1: the rest is a version-1 payload (a byte-level BPE `Model`), wrapped in a correct
//!   header (magic, version 1, length, CRC), so postcard decoding and validation are reached;
//! - mode 2: the rest drives a *structured* byte-level model (256 byte tokens, tokens made by
//!   concatenation, merges, specials and their strip bits — each sometimes wrong on purpose),
//!   serialised with postcard without validation, wrapped in a correct version-1 header (which
//!   holds no strip bits); a further byte may flip one payload bit; the file `to_bytes` writes
//!   (version 5 with strip bits) loads back whole;
//! - mode 3: the rest is a version-2 payload (a model kind, then the model), wrapped in a
//!   correct header: the seeds are the payloads of valid SentencePiece models, so mutations of
//!   a real model reach its validation;
//! - mode 4: the rest drives a *structured* SentencePiece model (unknown, control, byte,
//!   normal and user-defined pieces with odd scores and texts, each sometimes wrong on
//!   purpose), serialised without validation behind a correct version-2 header; a further byte
//!   may flip one payload bit;
//! - mode 6: up to 7 edits (position, xor byte) to the `precompiled_charsmap` of the committed
//!   `nfkc-tsv` model (31 rules, `tests/fixtures/sp_norm`): a damaged map must be refused by
//!   validation; one that passes must encode like the naive reference (which reads the map on
//!   its own), and load back through a version-3 file;
//! - mode 5: a kind bit, up to 7 edits (position, xor byte), then a *structured* byte-level
//!   model as in mode 2 or SentencePiece model as in mode 4, written with its prebuilt tables
//!   (version 3, or 5 with strip bits: `to_bytes_with_tables`); the edits hit
//!   the payload and the checksum is recomputed, so the tables' decoding and layout checks see
//!   damage the checksum does not catch (a version-3 file is about 1 MB even for a tiny model,
//!   too large for a seed).
//!
//! Whatever loads must: read the same through the kind-specific reader (`Model::from_bytes` or
//! `SpModel::from_bytes`, the other one saying `WrongKind`), re-serialise to the same model,
//! lay out its tables and generate bake source. A SentencePiece model is also built into live
//! tables and encodes a few short texts (some made of its own pieces); with the `sentencepiece`
//! placement of user-defined symbols the ids must equal the naive reference's
//! (`picobpe_fuzz::sp`), and decoding them must equal the reference `DecodeIds`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use picobpe::SpTokenizer;
use picobpe_fuzz::sp::{borrow_tables, SpRef};
use picobpe_fuzz::{escape, Params};
use picobpe_model::format::{BPE_VERSION, HEADER_LEN, KIND_VERSION, MAGIC};
use picobpe_model::sentencepiece::{SpKind, SpPiece, SpSections};
use picobpe_model::{AnyModel, Model, ModelError, PatternKind, PieceTable, SpModel, WpModel};
use picobpe_model::{SpTableData, TableData};
use picobpe_tests::reference::crc32;

fuzz_target!(|data: &[u8]| {
    let mut p = Params::new(data);
    let mode = p.below(7);
    match mode {
        0 => {
            check(p.rest());
        }
        1 => {
            check(&wrap(BPE_VERSION, p.rest()));
        }
        2 => {
            let flip = p.byte();
            let flip_at = p.u16();
            let drawn = structured(p);
            // Version 1 has no room for a normalizer, a prefix space or strip bits: what it
            // holds is the model without them.
            let model = Model {
                normalizer: None,
                strips: Vec::new(),
                splits: Vec::new(),
                prefix_space: false,
                end_of_word_suffix: Vec::new(),
                steps: Default::default(),
                empty_tokens: Vec::new(),
                ..drawn.clone()
            };
            let Ok(payload) = postcard::to_stdvec(&model) else {
                return;
            };
            let file = wrap(BPE_VERSION, &payload);
            if flipped(&file, payload.len(), flip, flip_at) {
                return;
            }
            // Whatever passed validation is exactly what was serialised.
            match check(&file) {
                Some(AnyModel::BytePair(loaded)) => assert_eq!(loaded, model),
                Some(other) => panic!("a byte-level payload loaded as {other:?}"),
                None => assert!(model.validate().is_err(), "valid model rejected"),
            }
            // With a normalizer, a prefix space, strip bits or a suffix, the file `to_bytes`
            // writes (version 2, payload variant 6, 10 or 11; version 5) loads back whole.
            if drawn.normalizer.is_some()
                || drawn.prefix_space
                || !drawn.strips.is_empty()
                || !drawn.end_of_word_suffix.is_empty()
                || drawn.steps.bits() != 0
            {
                if let Ok(bytes) = drawn.to_bytes() {
                    assert_eq!(check(&bytes), Some(AnyModel::BytePair(drawn)));
                }
            }
        }
        3 => {
            check(&wrap(KIND_VERSION, p.rest()));
        }
        6 => {
            static BASE: std::sync::OnceLock<SpModel> = std::sync::OnceLock::new();
            let base = BASE.get_or_init(|| {
                picobpe_tests::sp::model("nfkc-tsv", picobpe_tests::sp::SpSource::ModelProto)
            });
            let mut model = base.clone();
            for _ in 0..p.below(8) {
                let at = usize::from(p.u16()) % model.charsmap.len();
                model.charsmap[at] ^= p.byte();
            }
            if model.validate().is_ok() {
                check_sp(&model);
                let file = model
                    .to_bytes_with_tables()
                    .expect("a valid model is written");
                match SpModel::from_bytes(&file) {
                    Ok(loaded) => assert_eq!(loaded, model),
                    Err(e) => panic!("a written version-3 file does not load: {e}"),
                }
            }
        }
        5 => {
            let sentencepiece = p.byte() & 1 == 1;
            let n_edits = p.below(8);
            let edits: Vec<(u32, u8)> = (0..n_edits)
                .map(|_| {
                    let at = u32::from(p.u16()) << 8 | u32::from(p.byte());
                    (at, p.byte())
                })
                .collect();
            let (model, file) = if sentencepiece {
                let model = structured_sp(p);
                let Ok(file) = model.to_bytes_with_tables() else {
                    assert!(model.validate().is_err(), "valid model not written");
                    return;
                };
                (AnyModel::SentencePiece(model), file)
            } else {
                let model = structured(p);
                let Ok(file) = model.to_bytes_with_tables() else {
                    assert!(model.validate().is_err(), "valid model not written");
                    return;
                };
                (AnyModel::BytePair(model), file)
            };
            let mut payload = file[HEADER_LEN..].to_vec();
            for &(at, xor) in &edits {
                let at = at as usize % payload.len();
                payload[at] ^= xor;
            }
            let edited = payload != file[HEADER_LEN..];
            // The version the writer chose (3, or 5 with a strips header), kept.
            let at = MAGIC.len();
            let version = u16::from_le_bytes([file[at], file[at + 1]]);
            match check(&wrap(version, &payload)) {
                Some(loaded) if !edited => assert_eq!(loaded, model),
                Some(_) => {}
                None => assert!(
                    edited,
                    "a written version-3 file does not load: {:?}; {model:?}",
                    AnyModel::from_bytes(&wrap(version, &payload)).err()
                ),
            }
        }
        _ => {
            let flip = p.byte();
            let flip_at = p.u16();
            let model = structured_sp(p);
            // Version 2: the kind (variant 1, SentencePiece BPE, or 3, Unigram), then the
            // model (whose `unigram` flag is not serialized: the kind carries it). With
            // `tokenizer.json` settings, kind 7: the model, the Unigram flag, no `f64` scores,
            // no character map, then the settings (a `u32` varint, as `SpModel::to_bytes`
            // writes it).
            let Ok(mut payload) = postcard::to_stdvec(&model) else {
                return;
            };
            let pre_split = model
                .pre_split
                .map_or(0, |s| 1 | u32::from(picobpe_model::wordpiece::split_code(s)) << 1);
            let settings = u32::from(model.unk_in_text)
                | u32::from(model.unk_per_char) << 1
                | u32::from(picobpe_model::normalizer::code(model.normalizer)) << 2
                | u32::from(model.precompiled) << 5
                | u32::from(model.collapse_spaces) << 6
                | u32::from(model.char_steps.bits()) << 7
                | u32::from(model.strip_sections) << 11
                | pre_split << 12
                | u32::from(model.joins_pieces) << 19;
            if settings != 0 {
                payload.insert(0, 7);
                payload.extend([u8::from(model.unigram), 0, 0]);
                // LEB128, as postcard writes a varint.
                let mut rest = settings;
                while rest >= 0x80 {
                    payload.push(rest as u8 | 0x80);
                    rest >>= 7;
                }
                payload.push(rest as u8);
            } else {
                payload.insert(0, if model.unigram { 3 } else { 1 });
                if model.unigram {
                    // Kind 3 carries the `f64` scores after the model: none here.
                    payload.push(0);
                }
            }
            let file = wrap(KIND_VERSION, &payload);
            if flipped(&file, payload.len(), flip, flip_at) {
                return;
            }
            match check(&file) {
                Some(AnyModel::SentencePiece(loaded)) => assert_eq!(loaded, model),
                Some(other) => panic!("a SentencePiece payload loaded as {other:?}"),
                None => assert!(
                    model.validate().is_err(),
                    "valid SentencePiece model rejected"
                ),
            }
        }
    }
});

/// With the flip byte's top bit set, flip one bit of `file`'s payload (after the CRC was
/// computed): the file must be rejected as corrupt. Returns whether it flipped.
fn flipped(file: &[u8], payload_len: usize, flip: u8, flip_at: u16) -> bool {
    if flip & 0x80 == 0 || payload_len == 0 {
        return false;
    }
    let mut file = file.to_vec();
    let at = HEADER_LEN + usize::from(flip_at) % payload_len;
    file[at] ^= 1 << (flip & 7);
    match AnyModel::from_bytes(&file) {
        Err(ModelError::ChecksumMismatch { .. }) => {}
        other => panic!("bit flip not detected: {other:?}"),
    }
    true
}

/// Load `file` as any kind; the kind-specific readers must agree. On success, round-trip it and
/// bake it (and encode with a SentencePiece model). Returns the loaded model.
fn check(file: &[u8]) -> Option<AnyModel> {
    let any = AnyModel::from_bytes(file);
    let bpe = Model::from_bytes(file);
    let sp = SpModel::from_bytes(file);
    let wp = WpModel::from_bytes(file);
    match (&any, &bpe, &sp, &wp) {
        (Ok(AnyModel::BytePair(m)), Ok(b), _, _) if wrong_kind(&sp) && wrong_kind(&wp) => {
            assert_eq!(m, b);
        }
        (Ok(AnyModel::SentencePiece(m)), _, Ok(s), _) if wrong_kind(&bpe) && wrong_kind(&wp) => {
            assert_eq!(m, s);
        }
        (Ok(AnyModel::WordPiece(m)), _, _, Ok(w)) if wrong_kind(&bpe) && wrong_kind(&sp) => {
            assert_eq!(m, w);
        }
        (Err(e), Err(b), Err(s), Err(w)) => {
            // Every error has a message, and the four readers give the same one.
            let text = e.to_string();
            assert!(!text.is_empty());
            assert_eq!(text, b.to_string());
            assert_eq!(text, s.to_string());
            assert_eq!(text, w.to_string());
            return None;
        }
        _ => panic!("readers disagree: any {any:?}, Model {bpe:?}, SpModel {sp:?}, WpModel {wp:?}"),
    }
    let model = any.ok()?;
    match &model {
        AnyModel::BytePair(m) => check_bpe(m),
        AnyModel::SentencePiece(m) => check_sp(m),
        AnyModel::WordPiece(m) => check_wp(m),
    }
    Some(model)
}

/// True for a reader's "the file holds another kind" error.
fn wrong_kind<T>(r: &Result<T, ModelError>) -> bool {
    matches!(r, Err(ModelError::WrongKind { .. }))
}

/// A loaded WordPiece model re-serialises, lays out, bakes, and encodes and decodes short
/// texts without an error other than a full buffer (resumed to the same ids).
fn check_wp(model: &WpModel) {
    let again = model.to_bytes().expect("a loaded model re-serialises");
    assert_eq!(&WpModel::from_bytes(&again).expect("round trip"), model);
    let data = picobpe_model::WpTableData::new(model).expect("a loaded model lays out");
    let source = picobpe_build::generate_wp(&data, "fuzz", std::path::Path::new("/dev/null"));
    assert!(source.contains("pub static TABLES"));
    data.with_tables(|tables| {
        let tok = picobpe::WpTokenizer::new(tables);
        for text in TEXTS {
            let mut out = vec![0u32; 4 * text.len() + 8];
            let n = tok
                .encode(text, &mut out, picobpe::Specials::All)
                .expect("a big enough buffer");
            let longest = model.vocab.iter().map(String::len).max().unwrap_or(0);
            let mut bytes = vec![0u8; (longest + 1) * n + 64];
            tok.decode(&out[..n], &mut bytes)
                .expect("decode into a big enough buffer");
        }
    });
}

/// A loaded byte-level model re-serialises, lays out and bakes.
fn check_bpe(model: &Model) {
    let again = model.to_bytes().expect("a loaded model re-serialises");
    assert_eq!(&Model::from_bytes(&again).expect("round trip"), model);
    for pieces in [PieceTable::Full, PieceTable::Minimal] {
        let data = TableData::new(model, pieces).expect("a loaded model lays out");
        assert_eq!(data.n_ids(), model.n_ids());
        let source = picobpe_build::generate(&data, "fuzz", std::path::Path::new("/dev/null"));
        assert!(source.contains("pub static TABLES"));
    }
}

/// Short texts every loaded SentencePiece model encodes: spaces at both ends and in runs, `▁`
/// typed in the text, malformed UTF-8, a user-defined symbol of the committed models, CJK and
/// an emoji (byte fallback or `<unk>`).
const TEXTS: [&[u8]; 6] = [
    b"",
    b"  ab  ba\tc  ",
    "a\u{2581}b \u{2581} \u{2581}".as_bytes(),
    b"a\xFFb \xE4\xB8 \xF0\x9F\x98 \xC0\x80",
    "<tool>x<tool> \u{4E2D}\u{6587} \u{1F600}\u{1F600} <s>".as_bytes(),
    "\u{FFFD} a \u{FFFD}\u{FFFD}".as_bytes(),
];

/// A loaded SentencePiece model re-serialises, lays out, bakes, and encodes like the
/// reference.
fn check_sp(model: &SpModel) {
    let again = model.to_bytes().expect("a loaded model re-serialises");
    assert_eq!(&SpModel::from_bytes(&again).expect("round trip"), model);
    let data = SpTableData::new(model).expect("a loaded model lays out");
    assert_eq!(data.n_ids(), model.n_ids());
    let source = picobpe_build::generate_sp(&data, "fuzz", std::path::Path::new("/dev/null"));
    assert!(source.contains("pub static TABLES"));
    let tables = borrow_tables(&data);
    let tok = SpTokenizer::new(&tables);
    let reference = SpRef::new(model);
    let compare_ids = reference.inline;

    // The model's own pieces, spelled with spaces, then the fixed texts.
    let mut own = Vec::new();
    for (i, p) in model.pieces.iter().enumerate().take(48) {
        if matches!(p.kind, SpKind::Normal | SpKind::UserDefined) {
            own.extend_from_slice(p.piece.replace('\u{2581}', " ").as_bytes());
            if i % 3 == 0 {
                own.push(b' ');
            }
        }
    }
    for text in std::iter::once(&own[..]).chain(TEXTS) {
        // A word's work area: 10 ids per symbol plus its normalized bytes (see sp_encode).
        let mut out = vec![0u32; 16 * text.len() + 64];
        let n = tok
            .encode(text, &mut out)
            .unwrap_or_else(|e| panic!("encode: {e:?} on \"{}\" with {model:?}", escape(text)));
        let ids = &out[..n];
        if compare_ids {
            let want = reference.encode(text);
            assert!(
                ids == want,
                "encode != reference on \"{}\"\n  want {want:?}\n  got  {ids:?}\n  reference pieces {:?}\n  model {model:?}",
                escape(text),
                reference.merged(text)
            );
        }
        let want = reference.decode(ids).expect("encoded ids are in range");
        let mut buf = vec![0u8; want.len() + 16];
        let k = tok
            .decode(ids, &mut buf)
            .unwrap_or_else(|e| panic!("decode {ids:?}: {e:?} with {model:?}"));
        assert!(
            buf[..k] == want[..],
            "decode {ids:?} != reference\n  want \"{}\"\n  got  \"{}\"\n  model {model:?}",
            escape(&want),
            escape(&buf[..k])
        );
    }
}

/// `payload` behind a correct header of format `version`.
fn wrap(version: u16, payload: &[u8]) -> Vec<u8> {
    let mut file = Vec::with_capacity(HEADER_LEN + payload.len());
    file.extend_from_slice(&MAGIC);
    file.extend_from_slice(&version.to_le_bytes());
    file.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    file.extend_from_slice(&crc32(payload).to_le_bytes());
    file.extend_from_slice(payload);
    file
}

/// A model driven by fuzz bytes: mostly valid, with occasional deliberate faults (missing or
/// duplicate bytes, merges of unknown ids or to non-tokens, duplicate merges, specials that
/// collide with ordinary tokens or with each other, empty holes).
fn structured(mut p: Params<'_>) -> Model {
    let pattern = PatternKind::ALL[p.below(3)];
    let whole_piece = p.byte() & 1 == 1;
    let faults = p.byte();
    let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    if faults & 1 != 0 {
        // A rotated byte order (still valid) or a missing byte (invalid).
        let k = p.below(256);
        tokens.rotate_left(k);
        if faults & 2 != 0 {
            tokens[k] = vec![tokens[k][0], 0];
        }
    }
    let mut merges = Vec::new();
    let n_merges = p.below(48);
    for _ in 0..n_merges {
        let n = tokens.len() as u32;
        let op = p.byte();
        let l = u32::from(p.u16()) % n;
        let r = u32::from(p.u16()) % n;
        match op % 16 {
            // A hole (unused id).
            0 => tokens.push(Vec::new()),
            // A merge whose result is not added (invalid: not a token).
            1 => merges.push((l, r)),
            // A merge referencing an id past the end (invalid).
            2 => merges.push((l, n + u32::from(op))),
            // Usual case: add the concatenation as a new token and its merge.
            _ => {
                let bytes = [tokens[l as usize].clone(), tokens[r as usize].clone()].concat();
                tokens.push(bytes);
                merges.push((l, r));
            }
        }
    }
    let mut specials = Vec::new();
    for _ in 0..p.below(4) {
        let kind = p.byte();
        let text = match kind % 4 {
            0 => "<|endoftext|>".to_owned(),
            1 => "<|endoftext|><|endoftext|>".to_owned(),
            // Possibly equal to an ordinary token (invalid) or empty (invalid).
            2 => String::from_utf8_lossy(&tokens[usize::from(p.u16()) % tokens.len()]).into_owned(),
            _ => format!("<|s{}|>", p.byte()),
        };
        let id = if kind & 0x40 != 0 {
            // An id that already belongs to a token (invalid unless it is a hole).
            u32::from(p.u16()) % tokens.len() as u32
        } else {
            tokens.push(text.clone().into_bytes());
            tokens.len() as u32 - 1
        };
        specials.push((text, id));
    }
    // Strip bits (`lstrip`, `rstrip`) on some specials, now and then on another id or with
    // bits 0: invalid lists the writer must refuse.
    let mut strips = Vec::new();
    for &(_, id) in &specials {
        let b = p.byte();
        if b & 0x80 != 0 {
            let id = if b & 0x40 != 0 { u32::from(b) } else { id };
            strips.push((id, b & 3));
        }
    }
    // Now and then CLIP's end-of-word suffix, with its 256 suffixed bytes appended (or, one
    // time in two, without them: a model the writer must refuse).
    let suffix = p.byte();
    let end_of_word_suffix = if suffix & 0xC0 == 0xC0 {
        if suffix & 1 == 1 {
            tokens.extend((0..=255u8).map(|b| [&[b][..], b"</w>"].concat()));
        }
        b"</w>".to_vec()
    } else {
        Vec::new()
    };
    Model {
        pattern,
        tokens,
        merges,
        specials,
        whole_piece,
        normalizer: picobpe_model::normalizer::from_code(p.byte() % 5).flatten(),
        strips,
        splits: Vec::new(),
        // Now and then beside a normalizer: a model the writer must refuse.
        prefix_space: p.byte() & 1 == 1,
        end_of_word_suffix,
        // Lowercase, whitespace runs, special tokens in the normalized text, now and then
        // without a normalizer or after a compatibility form: models the writer must refuse.
        steps: picobpe_model::TextSteps::from_bits(p.byte() & 0x0E),
        empty_tokens: Vec::new(),
    }
}

/// What the pieces of a structured SentencePiece model are spelled with: `▁` (alone, it splits
/// words; after another character it makes the whole text one word), letters, a 2-, 3- and
/// 4-byte character, U+FFFD (what malformed bytes become), `<`/`>` and a space (only valid
/// outside user-defined symbols).
const UNITS: [&str; 12] = [
    "\u{2581}",
    "a",
    "b",
    "c",
    "t",
    "\u{E9}",
    "\u{4E2D}",
    "\u{1F600}",
    "\u{FFFD}",
    "<",
    ">",
    " ",
];

/// Scores, some of them odd (signed zeros, infinities, huge and tiny values; NaN only as a
/// fault).
fn score(p: &mut Params<'_>, i: usize, faults: u8) -> Option<f32> {
    Some(match p.byte() % 16 {
        0 => return None,
        1 => 0.0,
        2 => -0.0,
        3 => f32::INFINITY,
        4 => f32::NEG_INFINITY,
        5 => 1e30,
        6 => -f32::MIN_POSITIVE,
        7 => 2.5,
        8 if faults & 0x40 != 0 => f32::NAN,
        // Equal scores: ties, broken leftmost.
        9 | 10 => -1.0,
        _ => -(i as f32),
    })
}

/// A SentencePiece model driven by fuzz bytes: `<unk>` (sometimes moved, repeated or missing),
/// `<s>`/`</s>`, the 256 byte pieces with byte fallback (sometimes one bad or missing), then
/// normal and user-defined pieces spelled from [`UNITS`] with odd scores, and deliberate
/// faults (a duplicate, an empty piece, a NaN score, a user-defined symbol holding a space or
/// `▁`, a piece longer than the core's limit).
fn structured_sp(mut p: Params<'_>) -> SpModel {
    let flags = p.byte();
    let faults = p.byte();
    let byte_fallback = flags & 1 != 0;
    let piece = |text: &str, score: Option<f32>, kind: SpKind| SpPiece {
        piece: text.to_owned(),
        score,
        kind,
    };
    let mut pieces = vec![
        piece("<unk>", Some(0.0), SpKind::Unknown),
        piece("<s>", Some(0.0), SpKind::Control),
        piece("</s>", Some(0.0), SpKind::Control),
    ];
    if byte_fallback || faults & 1 != 0 {
        for b in 0..=255u8 {
            pieces.push(piece(&format!("<0x{b:02X}>"), Some(0.0), SpKind::Byte));
        }
        if faults & 2 != 0 {
            // A byte piece spelled wrong, or one missing.
            let at = 3 + p.below(256);
            if faults & 4 != 0 {
                pieces[at].piece = format!("<0x{:02x}>", at - 3);
            } else {
                pieces.remove(at);
            }
        }
    }
    let n = p.below(40);
    for i in 0..n {
        let op = p.byte();
        let len = 1 + usize::from(op >> 6);
        let mut text = String::new();
        for _ in 0..len {
            text.push_str(UNITS[p.below(UNITS.len())]);
        }
        let kind = if op & 7 == 0 {
            SpKind::UserDefined
        } else {
            SpKind::Normal
        };
        if kind == SpKind::UserDefined && faults & 8 == 0 {
            // Valid user-defined symbols hold no space, `▁` or U+FFFD.
            text.retain(|c| !matches!(c, ' ' | '\u{2581}' | '\u{FFFD}'));
            if text.is_empty() {
                text.push('u');
            }
        }
        if kind == SpKind::Normal && faults & 8 == 0 {
            text = text.replace(' ', "\u{2581}");
        }
        let s = score(&mut p, i, faults);
        if faults & 0x10 == 0 && pieces.iter().any(|q| q.piece == text) {
            continue;
        }
        pieces.push(piece(&text, s, kind));
    }
    if faults & 0x20 != 0 {
        match p.byte() % 5 {
            0 => pieces.push(piece("", Some(-1.0), SpKind::Normal)),
            1 => pieces.push(piece("<unk2>", Some(0.0), SpKind::Unknown)),
            2 => {
                pieces.remove(0);
            }
            3 => pieces.push(piece(&"ab".repeat(65), Some(-3.0), SpKind::Normal)),
            _ => {
                // The unknown piece elsewhere (valid).
                let to = p.below(pieces.len());
                let unk = pieces.remove(0);
                pieces.insert(to, unk);
            }
        }
    }
    // `tokenizer.json` settings on the sections that can hold them (a faulty draw puts them
    // anywhere: refused by `validate`).
    let settings = p.byte();
    let tokenizers = (flags >> 4) % 8 >= 3 || faults & 0x40 != 0;
    SpModel {
        pieces,
        add_dummy_prefix: flags & 2 != 0,
        remove_extra_whitespaces: flags & 4 != 0,
        byte_fallback,
        unk_surface: if flags & 8 != 0 {
            String::new()
        } else {
            " \u{2047} ".to_owned()
        },
        sections: match (flags >> 4) % 8 {
            3 => SpSections::UnmarkedPiecesPrefixed,
            4 => SpSections::FirstPieceWords,
            5 => SpSections::UnmarkedPiecesWords,
            6 => SpSections::EveryPiecePrefixed,
            7 => SpSections::FirstPiecePrefixed,
            _ => SpSections::Inline,
        },
        unigram: flags >> 7 & 1 == 1 && (flags >> 4) % 8 < 3,
        f64_scores: Vec::new(),
        charsmap: Vec::new(),
        unk_in_text: tokenizers && settings & 1 != 0,
        unk_per_char: tokenizers && settings & 2 != 0 && flags >> 7 & 1 == 0,
        normalizer: picobpe_model::normalizer::from_code(settings >> 2 & 7)
            .flatten()
            .filter(|_| tokenizers),
        // Without a character map: refused by `validate`.
        precompiled: tokenizers && settings & 32 != 0,
        collapse_spaces: tokenizers && settings & 64 != 0,
        // On sections that do not split words: refused.
        strip_sections: tokenizers && settings & 128 != 0,
        strips: Vec::new(),
        // Steps after a form other than NFD or NFKD, or on the wrong sections: refused.
        char_steps: picobpe_model::normalizer::CharSteps::from_bits(p.byte() & 15)
            .filter(|_| tokenizers)
            .unwrap_or_default(),
        // Never on the sections drawn here: refused.
        pre_split: picobpe_model::wordpiece::split_from_code(p.byte())
            .filter(|_| tokenizers && settings & 16 != 0),
        joins_pieces: tokenizers && flags & 1 != 0,
    }
}
