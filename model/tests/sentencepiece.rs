//! SentencePiece models as files and imports: the version-2 round trip, the kind check, a
//! distinct error for each kind of damage and for each broken invariant, and the import
//! refusals (with the messages `host-trainer` shows). The refused models are made by the real
//! `sentencepiece` trainer and `tokenizers` (`tests/scripts/gen_sp_refused.py`, in
//! `tests/fixtures/sentencepiece/refused`).

use std::path::PathBuf;

use picobpe_model::format::{HEADER_LEN, KIND_VERSION, MAGIC};
use picobpe_model::sentencepiece::{
    import_model_proto, InvalidSpModel, SpImportError, SpKind, SpPiece, SpSections,
};
use picobpe_model::tokenizer_json::Refused;
use picobpe_model::{
    AnyModel, Model, ModelError, PatternKind, SpModel, SpTableData, TokenizerJson,
};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/sentencepiece")
}

fn read(rel: &str) -> Vec<u8> {
    let path = fixtures().join(rel);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A `tokenizer.json`, parsed and imported.
fn import_tokenizer_json(bytes: &[u8]) -> Result<SpModel, SpImportError> {
    let file = TokenizerJson::parse(bytes).expect("a tokenizer.json");
    picobpe_model::sentencepiece::import_tokenizer_json(&file)
}

/// A committed reference model, imported from its `tokenizer.model`.
fn reference(name: &str) -> SpModel {
    import_model_proto(&read(&format!("models/{name}.model"))).unwrap()
}

fn piece(text: &str, score: f32, kind: SpKind) -> SpPiece {
    SpPiece {
        piece: text.to_owned(),
        score: Some(score),
        kind,
    }
}

/// `<unk>`, `<s>`, `</s>`, a user-defined `<tool>`, then `▁`, `a`, `b`, `▁a`, `ab`; no byte
/// fallback.
fn tiny() -> SpModel {
    let mut pieces = vec![
        piece("<unk>", 0.0, SpKind::Unknown),
        piece("<s>", 0.0, SpKind::Control),
        piece("</s>", 0.0, SpKind::Control),
        piece("<tool>", 0.0, SpKind::UserDefined),
    ];
    for (i, p) in ["\u{2581}", "a", "b", "\u{2581}a", "ab"].iter().enumerate() {
        pieces.push(piece(p, -(i as f32), SpKind::Normal));
    }
    SpModel {
        pieces,
        add_dummy_prefix: true,
        remove_extra_whitespaces: false,
        byte_fallback: false,
        unk_surface: " \u{2047} ".to_owned(),
        sections: SpSections::Inline,
        unigram: false,
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

/// [`tiny`] with the 256 byte pieces and byte fallback.
fn tiny_bytes() -> SpModel {
    let mut m = tiny();
    for b in 0..=255u8 {
        m.pieces
            .push(piece(&format!("<0x{b:02X}>"), 0.0, SpKind::Byte));
    }
    m.byte_fallback = true;
    m
}

/// A version-2 file around `model` with a correct header, bypassing validation.
fn file_without_validation(model: &SpModel) -> Vec<u8> {
    // The kind (variant 1: SentencePiece), then the model.
    let mut payload = vec![1u8];
    payload.extend_from_slice(&postcard::to_stdvec(model).unwrap());
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&KIND_VERSION.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    out.extend_from_slice(&payload);
    out
}

/// The invariant `model` breaks, as the file reader reports it (and `to_bytes` refuses it).
fn invalid(model: &SpModel) -> (InvalidSpModel, String) {
    let file = file_without_validation(model);
    assert!(matches!(
        model.to_bytes(),
        Err(ModelError::InvalidSentencePiece(_))
    ));
    assert!(matches!(
        SpTableData::new(model),
        Err(ref e) if Some(e) == model.validate().err().as_ref()
    ));
    match SpModel::from_bytes(&file) {
        Err(e @ ModelError::InvalidSentencePiece(_)) => {
            let text = e.to_string();
            let ModelError::InvalidSentencePiece(inner) = e else {
                unreachable!()
            };
            (inner, text)
        }
        other => panic!("expected InvalidSentencePiece, got {other:?}"),
    }
}

/// Bytes 0..=255 and one merge: the smallest byte-level model.
fn byte_level() -> Model {
    let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    tokens.push(b"ab".to_vec());
    Model {
        pattern: PatternKind::Gpt2,
        tokens,
        merges: vec![(u32::from(b'a'), u32::from(b'b'))],
        specials: Vec::new(),
        whole_piece: false,
        normalizer: None,
        strips: Vec::new(),
        splits: Vec::new(),
        prefix_space: false,
        end_of_word_suffix: Vec::new(),
        steps: Default::default(),
        empty_tokens: Vec::new(),
    }
}

#[test]
fn reference_models_round_trip_through_the_file_format() {
    for name in ["sp512", "sp4096", "sp4096-unk"] {
        let model = reference(name);
        let bytes = model.to_bytes().unwrap();
        assert_eq!(&bytes[..8], b"PICOBPE\0");
        assert_eq!(u16::from_le_bytes([bytes[8], bytes[9]]), 2, "{name}");
        assert_eq!(SpModel::from_bytes(&bytes).unwrap(), model, "{name}");
        assert_eq!(
            AnyModel::from_bytes(&bytes).unwrap(),
            AnyModel::SentencePiece(model.clone())
        );
        // The scores keep their bits (the first merge of a trained model scores -0.0).
        let back = SpModel::from_bytes(&bytes).unwrap();
        for (a, b) in model.pieces.iter().zip(&back.pieces) {
            assert_eq!(a.score.map(f32::to_bits), b.score.map(f32::to_bits));
        }
    }
    let model = tiny();
    let dir = std::env::temp_dir().join(format!("picobpe-sp-format-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("tiny.model");
    model.write(&path).unwrap();
    assert_eq!(SpModel::read(&path).unwrap(), model);
    assert_eq!(
        AnyModel::read(&path).unwrap(),
        AnyModel::SentencePiece(model)
    );
    // Only the model is left in the directory (the temporary file was renamed).
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn each_reader_refuses_the_other_kind() {
    let sp = tiny().to_bytes().unwrap();
    let err = Model::from_bytes(&sp).unwrap_err();
    assert!(matches!(
        err,
        ModelError::WrongKind {
            found: "SentencePiece BPE",
            expected: "byte-level BPE"
        }
    ));
    assert_eq!(
        err.to_string(),
        "the file holds a SentencePiece BPE model, not a byte-level BPE model"
    );

    let bpe = byte_level().to_bytes().unwrap();
    let err = SpModel::from_bytes(&bpe).unwrap_err();
    assert!(matches!(
        err,
        ModelError::WrongKind {
            found: "byte-level BPE",
            expected: "SentencePiece BPE"
        }
    ));
    assert_eq!(
        err.to_string(),
        "the file holds a byte-level BPE model, not a SentencePiece BPE model"
    );
    assert_eq!(
        AnyModel::from_bytes(&bpe).unwrap(),
        AnyModel::BytePair(byte_level())
    );
}

#[test]
fn every_truncation_is_truncated() {
    let bytes = tiny_bytes().to_bytes().unwrap();
    for len in 0..bytes.len() {
        match SpModel::from_bytes(&bytes[..len]) {
            Err(ModelError::Truncated { needed, have }) => {
                assert_eq!(have, len as u64);
                let full = if len < HEADER_LEN {
                    HEADER_LEN
                } else {
                    bytes.len()
                };
                assert_eq!(needed, full as u64, "cut at {len}");
            }
            other => panic!("cut at {len}: {other:?}"),
        }
    }
    let half = bytes.len() / 2;
    assert_eq!(
        SpModel::from_bytes(&bytes[..half]).unwrap_err().to_string(),
        format!(
            "model file is truncated: {half} bytes present, {} expected",
            bytes.len()
        )
    );
}

#[test]
fn every_payload_bit_flip_is_a_checksum_error() {
    let bytes = tiny_bytes().to_bytes().unwrap();
    for at in HEADER_LEN..bytes.len() {
        for bit in 0..8 {
            let mut bad = bytes.clone();
            bad[at] ^= 1 << bit;
            match SpModel::from_bytes(&bad) {
                Err(ModelError::ChecksumMismatch { expected, found }) => {
                    assert_ne!(expected, found)
                }
                other => panic!("bit {bit} of byte {at}: {other:?}"),
            }
        }
    }
    // A real model too, one bit per byte.
    let bytes = reference("sp512").to_bytes().unwrap();
    for at in HEADER_LEN..bytes.len() {
        let mut bad = bytes.clone();
        bad[at] ^= 1 << (at % 8);
        let err = SpModel::from_bytes(&bad).unwrap_err();
        assert!(
            matches!(err, ModelError::ChecksumMismatch { .. }),
            "{at}: {err:?}"
        );
        assert!(err
            .to_string()
            .starts_with("model file is corrupt: payload CRC-32 is 0x"));
    }
}

#[test]
fn each_broken_invariant_has_its_own_error_and_message() {
    type Case = (SpModel, InvalidSpModel, &'static str);
    let mut cases: Vec<Case> = Vec::new();
    let mut with = |edit: &dyn Fn(&mut SpModel), want: InvalidSpModel, text: &'static str| {
        let mut m = tiny();
        edit(&mut m);
        cases.push((m, want, text));
    };
    with(
        &|m| m.pieces.clear(),
        InvalidSpModel::IdCount { n: 0 },
        "0 pieces (a model has 1 to 2097152 pieces)",
    );
    with(
        &|m| m.pieces[5].piece.clear(),
        InvalidSpModel::EmptyPiece { id: 5 },
        "piece 5 is empty",
    );
    with(
        &|m| m.pieces.push(piece("ab", -9.0, SpKind::Normal)),
        InvalidSpModel::DuplicatePiece {
            first: 8,
            second: 9,
        },
        "pieces 8 and 9 have the same text",
    );
    with(
        &|m| m.pieces[0].kind = SpKind::Control,
        InvalidSpModel::UnknownCount { found: 0 },
        "0 unknown pieces (a model has exactly one)",
    );
    with(
        &|m| m.pieces.push(piece("<unk2>", 0.0, SpKind::Unknown)),
        InvalidSpModel::UnknownCount { found: 2 },
        "2 unknown pieces (a model has exactly one)",
    );
    with(
        &|m| m.pieces[6].score = Some(f32::NAN),
        InvalidSpModel::NanScore { id: 6 },
        "piece 6 has a NaN score",
    );
    with(
        &|m| m.pieces.push(piece("<0xzz>", 0.0, SpKind::Byte)),
        InvalidSpModel::BadBytePiece { id: 9 },
        "byte piece 9 is not <0xHH> with two upper-case hex digits, or repeats a byte",
    );
    with(
        &|m| m.pieces.push(piece("<0x4a>", 0.0, SpKind::Byte)),
        InvalidSpModel::BadBytePiece { id: 9 },
        "byte piece 9 is not <0xHH> with two upper-case hex digits, or repeats a byte",
    );
    with(
        &|m| m.byte_fallback = true,
        InvalidSpModel::MissingBytePiece { byte: 0 },
        "byte fallback is on but byte 0x00 has no <0x..> piece",
    );
    with(
        &|m| m.pieces[3].piece = "<to ol>".to_owned(),
        InvalidSpModel::UserSymbolText { id: 3 },
        "user-defined symbol 3 holds a space, '▁' or U+FFFD (not supported)",
    );
    with(
        &|m| m.pieces[3].piece = "<\u{2581}tool>".to_owned(),
        InvalidSpModel::UserSymbolText { id: 3 },
        "user-defined symbol 3 holds a space, '▁' or U+FFFD (not supported)",
    );
    with(
        &|m| m.pieces[3].piece = "<\u{FFFD}>".to_owned(),
        InvalidSpModel::UserSymbolText { id: 3 },
        "user-defined symbol 3 holds a space, '▁' or U+FFFD (not supported)",
    );
    let mut seen = std::collections::HashSet::new();
    for (model, want, text) in &cases {
        let (got, message) = invalid(model);
        assert_eq!(&got, want);
        assert_eq!(message, format!("invalid SentencePiece model: {text}"));
        seen.insert(std::mem::discriminant(&got));
    }
    // A mergeable piece one byte over the core's limit, normal or user-defined.
    let max = picobpe::sentencepiece::MAX_PIECE_BYTES;
    for kind in [SpKind::Normal, SpKind::UserDefined] {
        let mut m = tiny();
        m.pieces.push(piece(&"x".repeat(max + 1), -9.0, kind));
        let (got, message) = invalid(&m);
        assert_eq!(
            got,
            InvalidSpModel::PieceTooLong {
                id: 9,
                len: max + 1
            }
        );
        assert_eq!(
            message,
            format!(
                "invalid SentencePiece model: piece 9 is {} bytes long; merged and user-defined pieces may be at most {max}",
                max + 1
            )
        );
        seen.insert(std::mem::discriminant(&got));
    }
    // Every variant but an id count beyond the core's limit (2 097 152 pieces) is reached.
    assert_eq!(seen.len(), 9);

    // A long piece that never merges (a control symbol) is fine.
    let mut m = tiny();
    m.pieces
        .push(piece(&"c".repeat(4 * max), 0.0, SpKind::Control));
    assert!(m.validate().is_ok());
}

/// The import error of a refused fixture, and its message.
fn refused(file: &str) -> (SpImportError, String) {
    let bytes = read(&format!("refused/{file}"));
    let err = if file.ends_with(".json") {
        import_tokenizer_json(&bytes).unwrap_err()
    } else {
        import_model_proto(&bytes).unwrap_err()
    };
    let text = err.to_string();
    (err, text)
}

#[test]
fn model_proto_refusals_name_the_cause() {
    // A `ModelProto` whose `trainer_spec` (field 2) has `model_type` (field 3) WORD (3).
    let err = import_model_proto(&[0x12, 0x02, 0x18, 0x03]).unwrap_err();
    assert!(matches!(err, SpImportError::NotBpe { ref model_type } if model_type == "WORD"));
    assert_eq!(
        err.to_string(),
        "the model type is WORD; picobpe imports SentencePiece BPE and Unigram models only"
    );
    // A Unigram model with the identity normalizer is imported as one.
    let bytes = read("refused/unigram.model");
    assert!(import_model_proto(&bytes).unwrap().unigram);

    let (err, text) = refused("unused.model");
    assert!(matches!(err, SpImportError::PieceType { kind: 5, .. }));
    assert!(
        text.starts_with("piece ")
            && text.ends_with(" has type 5 (UNUSED or unknown); not supported"),
        "{text}"
    );

    let (err, text) = refused("suffix.model");
    assert!(matches!(err, SpImportError::Unsupported { .. }));
    assert_eq!(text, "treat_whitespace_as_suffix = true is not supported");

    // Not a protobuf message at all.
    for garbage in [
        &b"not a model at all"[..],
        b"\xFF\xFF\xFF\xFF",
        b"\x0A\x05ab",
    ] {
        let err = import_model_proto(garbage).unwrap_err();
        assert!(matches!(err, SpImportError::Protobuf(_)), "{err:?}");
        assert!(
            err.to_string()
                .starts_with("not a SentencePiece model (protobuf): "),
            "{err}"
        );
    }
}

#[test]
fn tokenizer_json_refusals_name_the_cause() {
    // The control: the same file without the unsupported part imports.
    let base = import_tokenizer_json(&read("refused/base.tokenizer.json")).unwrap();
    assert_eq!(base.n_ids(), 400);
    assert!(base.byte_fallback);

    let (err, text) = refused("nfkc-normalizer.tokenizer.json");
    assert!(matches!(
        err,
        SpImportError::TokenizerJson(Refused {
            at: "normalizer",
            ..
        })
    ));
    assert_eq!(
        text,
"tokenizer.json normalizer: NFC, NFD, NFKC or NFKD (or Nmt + NFKC) is supported first, before a Metaspace that splits (alone or with Replace(Regex(\" {2,}\"), \" \")) or WhitespaceSplit + Metaspace (not yet with other steps or pre-tokenizers)"
    );

    let (err, text) = refused("bytelevel-pretok.tokenizer.json");
    assert!(matches!(
        err,
        SpImportError::TokenizerJson(Refused {
            at: "pre_tokenizer",
            ..
        })
    ));
    assert!(
        text.starts_with("tokenizer.json pre_tokenizer: {")
            && text.contains("\"type\":\"ByteLevel\"")
            && text.ends_with(
                "is not supported (none, one Metaspace, or WhitespaceSplit, Whitespace, \
                 Punctuation and Digits with or without a Metaspace after them is)"
            ),
        "{text}"
    );

    let (err, text) = refused("wordpiece.tokenizer.json");
    assert!(matches!(err, SpImportError::NotBpe { ref model_type } if model_type == "WordPiece"));
    assert_eq!(
        text,
        "the model type is WordPiece; picobpe imports SentencePiece BPE and Unigram models only"
    );
    // A T5-style Unigram tokenizer.json: its normalizer strips and collapses whitespace
    // (`remove_extra_whitespaces` with sections), its `Metaspace` splits words.
    let bytes = std::fs::read(fixtures().join("../unigram/models/ug8000.tokenizer.json")).unwrap();
    let model = import_tokenizer_json(&bytes).unwrap();
    assert!(model.remove_extra_whitespaces && model.add_dummy_prefix);
    assert_eq!(model.sections, SpSections::UnmarkedPiecesWords);
    // The same normalizer steps in the other order are refused, by name.
    let swapped = String::from_utf8(bytes.clone()).unwrap().replacen(
        r#"[{"type":"Strip","strip_left":false,"strip_right":true},{"type":"Replace","pattern":{"Regex":" {2,}"},"content":"▁"}]"#,
        r#"[{"type":"Replace","pattern":{"Regex":" {2,}"},"content":"▁"},{"type":"Strip","strip_left":false,"strip_right":true}]"#,
        1,
    );
    assert_ne!(swapped.as_bytes(), &bytes[..]);
    let text = import_tokenizer_json(swapped.as_bytes())
        .unwrap_err()
        .to_string();
    assert!(
        text.starts_with(
            "tokenizer.json normalizer: \"Replace + Strip\": not supported in this order"
        ),
        "{text}"
    );
    // A Llama-style one imports, with tokenizers' f64 scores.
    let bytes =
        std::fs::read(fixtures().join("../unigram/models/ug4096-bytes.tokenizer.json")).unwrap();
    let model = import_tokenizer_json(&bytes).unwrap();
    assert!(model.unigram_tokenizers());
    assert_eq!(model.f64_scores.len(), 4096);
    // An added token that tokenizers matches after normalizing is refused.
    let text = String::from_utf8(bytes).unwrap().replacen(
        r#""content":"<tool>","single_word":false,"lstrip":false,"rstrip":false,"normalized":false"#,
        r#""content":"<tool>","single_word":false,"lstrip":false,"rstrip":false,"normalized":true"#,
        1,
    );
    let err = import_tokenizer_json(text.as_bytes())
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "tokenizer.json added_tokens: \"<tool>\": normalized is not supported"
    );

    assert!(TokenizerJson::parse(b"not json").is_err());
}

/// A piece scored `0.0` merges before one scored `-0.0`, as in `sentencepiece`: with pieces
/// `<unk> ▁ a b c ab bc`, `ab` scored `-0.0` and `bc` `+0.0`, no dummy prefix, sentencepiece
/// 0.2.3 encodes `abc` as `a bc` = [2, 6] (and as `ab c` = [5, 4] with the two scores
/// swapped): run with the library on this model built by `sentencepiece_model_pb2`.
#[test]
fn a_zero_score_merges_before_a_negative_zero() {
    let model = |ab: f32, bc: f32| SpModel {
        pieces: vec![
            piece("<unk>", 0.0, SpKind::Unknown),
            piece("\u{2581}", 0.0, SpKind::Normal),
            piece("a", -1.0, SpKind::Normal),
            piece("b", -2.0, SpKind::Normal),
            piece("c", -3.0, SpKind::Normal),
            piece("ab", ab, SpKind::Normal),
            piece("bc", bc, SpKind::Normal),
        ],
        add_dummy_prefix: false,
        remove_extra_whitespaces: false,
        byte_fallback: false,
        unk_surface: " \u{2047} ".to_owned(),
        sections: SpSections::Inline,
        unigram: false,
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
    };
    for ((ab, bc), want) in [((-0.0, 0.0), [2, 6]), ((0.0, -0.0), [5, 4])] {
        let tables = SpTableData::new(&model(ab, bc)).unwrap().to_tables();
        let mut out = [0u32; 64];
        let n = picobpe::SpTokenizer::new(tables)
            .encode(b"abc", &mut out)
            .unwrap();
        assert_eq!(out[..n], want, "ab {ab:?}, bc {bc:?}");
    }
}

/// A Unigram model needs a normal piece with a score (its unknown score is the lowest normal
/// score minus 10); its file round-trips as a Unigram model (kind 3), with its tables.
#[test]
fn unigram_models_validate_and_round_trip() {
    let mut model = tiny();
    model.unigram = true;
    model.validate().unwrap();
    assert_eq!(model.unk_score(), Some(-14.0));
    // `<tool>`, 6 bytes: 0.1 × 5 in f64, then f32, as sentencepiece computes it.
    assert_eq!(model.unigram_score(3), Some(0.5));
    assert_eq!(model.unigram_score(0), None);
    let back = SpModel::from_bytes(&model.to_bytes().unwrap()).unwrap();
    assert_eq!(back, model);
    let back = SpModel::from_bytes(&model.to_bytes_with_tables().unwrap()).unwrap();
    assert_eq!(back, model);

    let mut no_normal = model.clone();
    no_normal.pieces.retain(|p| p.kind != SpKind::Normal);
    let err = no_normal.validate().unwrap_err();
    assert_eq!(err, InvalidSpModel::UnigramScores);
    assert_eq!(
        err.to_string(),
        "a Unigram model needs at least one normal piece, and a score on every normal piece"
    );
    let mut unscored = model.clone();
    unscored.pieces[5].score = None;
    assert_eq!(unscored.validate(), Err(InvalidSpModel::UnigramScores));
}

/// A Darts-clone double array holding the one key `a`, whose replacement is `to` (two
/// 256-unit blocks: the root, whose children start at unit 256; `a` at 256 ^ 0x61; its leaf
/// at 0x160), as `sentencepiece` stores a `precompiled_charsmap`.
fn one_key_map(to: &[u8]) -> Vec<u8> {
    let mut units = vec![0u32; 512];
    units[0] = 256 << 10;
    units[0x161] = 1 << 10 | 1 << 8 | 0x61;
    units[0x160] = 1 << 31;
    let mut blob = ((units.len() * 4) as u32).to_le_bytes().to_vec();
    for u in units {
        blob.extend(u.to_le_bytes());
    }
    blob.extend(to);
    blob.push(0);
    blob
}

/// `nmt_nfkc` (the `sentencepiece` trainer's default) imports with its character map, and a
/// damaged map is refused naming the part, at import and when a model file is read.
#[test]
fn character_maps_import_and_damaged_ones_are_refused() {
    use picobpe_model::sentencepiece::charsmap::parse;
    let model = import_model_proto(&read("refused/nfkc.model")).unwrap();
    let parts = parse(&model.charsmap).unwrap();
    assert!(parts.keys > 200_000 && parts.max_key == 12, "{parts}");
    // nmt_nfkc's map has a compact form (what the bake uses): the same function in a quarter
    // of the flash.
    let data = picobpe_model::SpTableData::new(&model)
        .and_then(picobpe_model::SpTableData::with_compact_charsmap)
        .unwrap();
    assert!(data.charsmap_units.is_empty() && data.charsmap_hangul);
    let compact = data.sizes().charsmap;
    assert!(compact <= 64 * 1024, "{compact} B");
    eprintln!(
        "nmt_nfkc: compact form {compact} B, as stored {} B",
        model.charsmap.len()
    );
    // Through a model file and back.
    let back = picobpe_model::SpModel::from_bytes(&model.to_bytes().unwrap()).unwrap();
    assert_eq!(back.charsmap, model.charsmap);

    let good = one_key_map(b"xy");
    let p = parse(&good).unwrap();
    assert_eq!((p.keys, p.max_key), (1, 1));
    let map = picobpe::sentencepiece::CharsMap {
        units: &p.units,
        strings: &p.strings,
        max_key: p.max_key,
        ..Default::default()
    };
    use picobpe::sentencepiece::Replacement;
    assert_eq!(
        map.longest(b"ab"),
        Some((1, Replacement::Bytes(&b"xy"[..])))
    );
    assert_eq!(map.longest(b"ba"), None);

    let blob = &model.charsmap;
    let damaged: Vec<(Vec<u8>, &str)> = vec![
        (blob[..3].to_vec(), "shorter than its 4-byte trie size"),
        (blob[..blob.len() / 2].to_vec(), "within the"),
        (blob[..blob.len() - 1].to_vec(), "NUL-terminated"),
        (
            {
                let mut b = good.clone();
                b[..4].copy_from_slice(&4u32.to_le_bytes()); // a trie of one unit
                b
            },
            "not whole blocks of 256",
        ),
        (
            {
                let mut b = good.clone();
                b[4..8].copy_from_slice(&(1024u32 << 10).to_le_bytes());
                b
            },
            "past the 512 units",
        ),
        (one_key_map(&[b'x'; 17]), "more than 16 times its length"),
        (one_key_map(&[0xFF]), "not well-formed UTF-8"),
    ];
    for (bytes, want) in damaged {
        let err = parse(&bytes).unwrap_err().to_string();
        assert!(
            err.starts_with("precompiled_charsmap: ") && err.contains(want),
            "{err}"
        );
        let mut m = model.clone();
        m.charsmap = bytes;
        let err = m.validate().unwrap_err().to_string();
        assert!(err.contains(want), "{err}");
    }
}

/// The compact form of `nmt_nfkc` is the same function as the double array: the same longest match and replacement for every key
/// alone, for every key followed by other characters, for every proper prefix of a key, and
/// for seeded random strings of key characters, jamo and spaces.
#[test]
fn compact_character_map_equals_the_double_array() {
    use picobpe::sentencepiece::{CharsMap, Replacement};
    use picobpe_model::sentencepiece::charsmap::{compact, parse};
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
    let files = [
        fixtures.join("sentencepiece/refused/nfkc.model"),
        fixtures.join("sp_norm/models/nfkc-tsv.model"),
        fixtures.join("sp_norm/models/nfkc-ug.model"),
    ];
    let mut compacted = 0;
    for file in files {
        let model = import_model_proto(&std::fs::read(&file).unwrap()).unwrap();
        let p = parse(&model.charsmap).unwrap();
        let Some(c) = compact(&p.pairs) else {
            continue;
        };
        compacted += 1;
        let darts = CharsMap {
            units: &p.units,
            strings: &p.strings,
            max_key: p.max_key,
            ..Default::default()
        };
        let small = CharsMap {
            strings: &c.strings,
            runs: &c.runs,
            run_values: &c.run_values,
            sequences: &c.sequences,
            sequence_values: &c.sequence_values,
            tails: &c.tails,
            ascii: c.ascii,
            lead: c.lead,
            ascii_pairs: &c.ascii_pairs,
            bmp_index: &c.bmp_index,
            bmp_blocks: &c.bmp_blocks,
            hangul: c.hangul,
            max_key: p.max_key,
            ..Default::default()
        };
        let norm = |r: Option<(usize, Replacement<'_>)>| {
            r.map(|(n, r)| (n, r.bytes(&mut [0; 4]).to_vec()))
        };
        let same = |text: &[u8]| {
            assert_eq!(
                norm(small.longest(text)),
                norm(darts.longest(text)),
                "{}: {text:02X?}",
                file.display()
            );
        };
        let tails: [&[u8]; 6] = [
            b"",
            b"a",
            " ".as_bytes(),
            "\u{301}".as_bytes(),
            "\u{1161}".as_bytes(),
            b"\xFF",
        ];
        let mut chars: Vec<char> = Vec::new();
        for (key, _) in &p.pairs {
            for tail in tails {
                same(&[key.as_slice(), tail].concat());
            }
            for cut in 1..key.len() {
                same(&key[..cut]);
            }
            chars.extend(std::str::from_utf8(key).unwrap().chars());
        }
        chars.extend([
            'a', ' ', '\u{1100}', '\u{1161}', '\u{11A8}', '\u{3131}', '\u{314F}',
        ]);
        chars.sort_unstable();
        chars.dedup();
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..200_000 {
            let mut text = String::new();
            for _ in 0..5 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                text.push(chars[(seed % chars.len() as u64) as usize]);
            }
            same(text.as_bytes());
        }
    }
    // nmt_nfkc compacts; the TSV rules (overlapping keys, keys whose characters expand) and
    // nmt_nfkc_cf (case folding breaks the image rule) keep the double array.
    assert_eq!(compacted, 1);
}

/// A change made to tables.
type Damage = dyn Fn(&mut picobpe_model::SpTableData<'_>);

/// Damaged compact-form arrays (as a model file's tables could carry them) are refused by
/// the check `check_layout` runs, naming the part.
#[test]
fn damaged_compact_character_maps_are_refused() {
    use picobpe_model::sentencepiece::charsmap::check_compact;
    use std::borrow::Cow;
    let model = import_model_proto(&read("refused/nfkc.model")).unwrap();
    let good = picobpe_model::SpTableData::new(&model)
        .and_then(picobpe_model::SpTableData::with_compact_charsmap)
        .unwrap();
    assert!(check_compact(&good).is_ok());
    let damaged: Vec<(Box<Damage>, &str)> = vec![
        (
            Box::new(|d| d.charsmap_runs.to_mut().swap(0, 1)),
            "unsorted or not scalars",
        ),
        (
            Box::new(|d| d.charsmap_run_values.to_mut().pop().map(|_| ()).unwrap()),
            "without one value each",
        ),
        (
            Box::new(|d| d.charsmap_sequences.to_mut()[0] = u32::MAX),
            "outside the strings",
        ),
        (
            Box::new(|d| d.charsmap_sequences.to_mut().swap(0, 1)),
            "unsorted, not UTF-8",
        ),
        (
            Box::new(|d| d.charsmap_bmp_index = Cow::Owned(vec![0; 7])),
            "BMP filter",
        ),
        (
            Box::new(|d| d.charsmap_ascii_pairs = Cow::Owned(vec![0; 3])),
            "ASCII pair words",
        ),
        (
            Box::new(|d| d.charsmap_tails.to_mut().swap(0, 1)),
            "tail run",
        ),
    ];
    for (damage, want) in damaged {
        let mut d = good.clone();
        damage(&mut d);
        let err = check_compact(&d).unwrap_err().to_string();
        assert!(
            err.starts_with("precompiled_charsmap: compact form: ") && err.contains(want),
            "{err}"
        );
    }
}

/// `tokenizer.json` settings (the unknown piece matched in the text, one `<unk>` per unknown
/// character) round-trip through their own file kind (7), reach the tables and the encoder,
/// and a damaged settings byte or a misplaced setting is refused by name.
#[test]
fn tokenizer_json_settings_round_trip_and_damage_is_refused() {
    let mut m = tiny();
    m.sections = SpSections::UnmarkedPiecesWords;
    m.unk_in_text = true;
    m.unk_per_char = true;
    let bytes = m.to_bytes().unwrap();
    assert_eq!(SpModel::from_bytes(&bytes).unwrap(), m);
    assert_eq!(bytes[HEADER_LEN], 7, "kind");
    assert_eq!(*bytes.last().unwrap(), 3, "settings byte");
    // Each text between symbols stripped (bit 11: a two-byte varint), through the tables too.
    let stripped = SpModel {
        strip_sections: true,
        strips: Vec::new(),
        collapse_spaces: true,
        ..m.clone()
    };
    let stripped_bytes = stripped.to_bytes().unwrap();
    assert_eq!(SpModel::from_bytes(&stripped_bytes).unwrap(), stripped);
    let data = picobpe_model::SpTableData::new(&stripped).unwrap();
    assert!(data.strip_sections && data.to_tables().strip_sections);

    let data = picobpe_model::SpTableData::new(&m).unwrap();
    assert!(data.unk_per_char && data.user_defined.contains(&0));
    let tok = picobpe::SpTokenizer::new(data.to_tables());
    let mut out = [0u32; 16];
    let n = tok.encode(b"<unk>", &mut out).unwrap();
    assert_eq!(out[..n], [0]);
    // `x` is no piece: one `<unk>` each (after `▁`, id 4).
    let n = tok.encode(b"xx", &mut out).unwrap();
    assert_eq!(out[..n], [4, 0, 0]);
    let fused = SpModel {
        unk_per_char: false,
        normalizer: None,
        precompiled: false,
        collapse_spaces: false,
        strip_sections: false,
        strips: Vec::new(),
        ..m.clone()
    };
    let data = picobpe_model::SpTableData::new(&fused).unwrap();
    let n = picobpe::SpTokenizer::new(data.to_tables())
        .encode(b"xx", &mut out)
        .unwrap();
    assert_eq!(out[..n], [4, 0]);

    // 0, an unknown normalizer code (6), an unknown bit (12), `Lowercase` first without the
    // two steps (bit 10): the settings are a u16 varint.
    for bits in [&[0u8][..], &[6 << 2], &[0x80, 0x20], &[0x80, 0x08]] {
        let mut bad = bytes.clone();
        bad.pop();
        bad.extend_from_slice(bits);
        let len = (bad.len() - HEADER_LEN) as u32;
        bad[10..14].copy_from_slice(&len.to_le_bytes());
        let crc = crc32fast::hash(&bad[HEADER_LEN..]);
        bad[14..18].copy_from_slice(&crc.to_le_bytes());
        let err = SpModel::from_bytes(&bad).unwrap_err().to_string();
        assert!(err.contains("tokenizer.json settings"), "{bits:?}: {err}");
    }
    for misplaced in [
        SpModel {
            sections: SpSections::Inline,
            ..m.clone()
        },
        SpModel {
            unigram: true,
            ..m.clone()
        },
        // Runs of spaces made one twice over (`remove_extra_whitespaces` already does).
        SpModel {
            collapse_spaces: true,
            strip_sections: false,
            strips: Vec::new(),
            remove_extra_whitespaces: true,
            ..m.clone()
        },
        // Stripped texts between symbols on sections that do not split words.
        SpModel {
            strip_sections: true,
            strips: Vec::new(),
            sections: SpSections::UnmarkedPiecesPrefixed,
            ..m.clone()
        },
    ] {
        let err = misplaced.to_bytes().unwrap_err().to_string();
        assert!(err.contains("tokenizer.json settings"), "{err}");
    }
}

/// A `tokenizer.json` is written only where `tokenizers` can encode as `sentencepiece` does:
/// BPE without user-defined symbols (the ids themselves are checked against both libraries
/// in `host-trainer/tests/train_sentencepiece_cli.rs`).
#[test]
fn tokenizer_json_export_refuses_what_tokenizers_cannot_match() {
    use picobpe_model::sentencepiece::SpExportError;
    // sp4096 has user-defined symbols: tokenizers would put the dummy prefix after each.
    let sp4096 = reference("sp4096");
    assert!(sp4096.pieces.iter().any(|p| p.kind == SpKind::UserDefined));
    assert_eq!(sp4096.to_tokenizer_json(), Err(SpExportError::UserDefined));
    // The same pieces without them: written, with the model's byte fallback and every piece.
    let plain = SpModel {
        pieces: sp4096
            .pieces
            .iter()
            .map(|p| SpPiece {
                kind: if p.kind == SpKind::UserDefined {
                    SpKind::Control
                } else {
                    p.kind
                },
                ..p.clone()
            })
            .collect(),
        ..sp4096.clone()
    };
    let json: serde_json::Value =
        serde_json::from_str(&plain.to_tokenizer_json().unwrap()).unwrap();
    assert_eq!(json["model"]["byte_fallback"], plain.byte_fallback);
    assert_eq!(
        json["model"]["vocab"].as_object().unwrap().len(),
        plain.pieces.len()
    );
    assert!(!json["model"]["merges"].as_array().unwrap().is_empty());
    let ug = import_model_proto(
        &std::fs::read(fixtures().join("../unigram/models/ug8000.model")).unwrap(),
    )
    .unwrap();
    // A Unigram model: its pieces and scores in id order, no merges.
    let json: serde_json::Value = serde_json::from_str(&ug.to_tokenizer_json().unwrap()).unwrap();
    assert_eq!(json["model"]["type"], "Unigram");
    let vocab = json["model"]["vocab"].as_array().unwrap();
    assert_eq!(vocab.len(), ug.pieces.len());
    assert_eq!(vocab[100][0], ug.pieces[100].piece.as_str());
    assert_eq!(
        vocab[100][1].as_f64().unwrap() as f32,
        ug.pieces[100].score.unwrap()
    );
}

/// Added tokens that take whitespace in a SentencePiece-family `tokenizer.json`
/// (`ms-xlmr-strips`: `<mask>` lstrip, `<s>` rstrip, `</s>` both): imported as
/// [`SpModel::strips`], written in the model file's header (version 5) and read back with the
/// model or its tables alone; a damaged list is refused by the rule every family's follows.
#[test]
fn sentencepiece_strips_round_trip_and_damage_is_refused() {
    use picobpe::special::{LSTRIP, RSTRIP};
    let path = fixtures().join("../metaspace/models/ms-xlmr-strips.tokenizer.json");
    let file = TokenizerJson::parse(&std::fs::read(&path).unwrap()).unwrap();
    let model = picobpe_model::sentencepiece::import_tokenizer_json(&file).unwrap();
    let id = |piece: &str| model.pieces.iter().position(|p| p.piece == piece).unwrap() as u32;
    let mut want = vec![
        (id("<s>"), RSTRIP),
        (id("</s>"), LSTRIP | RSTRIP),
        (id("<mask>"), LSTRIP),
    ];
    want.sort();
    assert_eq!(model.strips, want);
    let bytes = model.to_bytes().unwrap();
    assert_eq!(
        u16::from_le_bytes([bytes[8], bytes[9]]),
        picobpe_model::format::STRIP_VERSION
    );
    assert_eq!(SpModel::from_bytes(&bytes).unwrap(), model);
    let dir = std::env::temp_dir().join(format!("picobpe-sp-strips-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("strips.model");
    model.write(&out).unwrap();
    let live = picobpe_model::read_tables(&out).unwrap();
    let picobpe_model::LiveTables::SentencePiece(tables) = live else {
        panic!("SentencePiece tables")
    };
    let mask = tables.user_defined.iter().position(|&u| u == id("<mask>"));
    assert_eq!(tables.user_strips[mask.unwrap()], LSTRIP);
    // `a <mask>` then `  b`: the whitespace before `<mask>` goes with it.
    let tok = picobpe::SpTokenizer::new(tables);
    let mut ids = [0u32; 16];
    let n = tok
        .encode("a \u{3000}<mask>b".as_bytes(), &mut ids)
        .unwrap();
    assert_eq!(ids[n - 2], id("<mask>"), "{:?}", &ids[..n]);

    // A strip on a piece that is not matched in the text, and misordered ids.
    let normal = model
        .pieces
        .iter()
        .position(|p| p.kind == SpKind::Normal)
        .unwrap() as u32;
    for (strips, says) in [
        (vec![(normal, LSTRIP)], "is not a special token"),
        (
            vec![(id("<mask>"), LSTRIP), (id("<s>"), RSTRIP)],
            "not strictly increasing",
        ),
        (vec![(id("<mask>"), 4)], "are not lstrip/rstrip"),
    ] {
        let bad = SpModel {
            strips,
            ..model.clone()
        };
        let err = bad.to_bytes().unwrap_err().to_string();
        assert!(
            err.contains("user-defined symbols that take whitespace") && err.contains(says),
            "{err}"
        );
    }
    // Strips on a model whose symbols are matched inside the normalized text (a
    // `tokenizer.model`'s): not a tokenizer.json model.
    let inline = SpModel {
        sections: SpSections::Inline,
        ..model.clone()
    };
    assert!(inline.validate().is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}
