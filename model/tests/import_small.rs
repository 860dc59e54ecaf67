//! Importers and table layout on small synthetic vocabularies: canonical splits, unreachable
//! tokens, id holes, rank tables, narrow/wide keys, and every import error.

use base64::Engine;
use picobpe_model::byte_unicode::byte_to_char;
use picobpe_model::import::{self, ImportError};
use picobpe_model::{InvalidModel, PatternKind, PieceTable, TableData};

/// A rank file: the 256 bytes in reverse order (ranks 0..=255), then `extra` tokens.
fn rank_file(extra: &[&[u8]]) -> Vec<u8> {
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut out = String::new();
    let tokens = (0..=255u8)
        .rev()
        .map(|b| vec![b])
        .chain(extra.iter().map(|t| t.to_vec()));
    for (rank, token) in tokens.enumerate() {
        out.push_str(&format!("{} {rank}\n", b64.encode(token)));
    }
    out.into_bytes()
}

fn byte_rank(b: u8) -> u32 {
    255 - u32::from(b)
}

#[test]
fn tiktoken_canonical_splits_and_unreachable_tokens() {
    // "bc" (256) ranks below "ab" (257), so "abc" (258) = "a" + "bc". "xyz" (259) is not
    // reachable: neither "xy" nor "yz" is a token.
    let file = rank_file(&[b"bc", b"ab", b"abc", b"xyz"]);
    let specials = vec![("<|end|>".to_owned(), 262)];
    let model = import::tiktoken(&file, PatternKind::Cl100k, &specials).unwrap();
    assert_eq!(model.pattern, PatternKind::Cl100k);
    assert!(model.whole_piece);
    assert_eq!(model.tokens.len(), 263);
    assert!(model.tokens[260].is_empty() && model.tokens[261].is_empty());
    assert_eq!(
        model.merges,
        vec![
            (byte_rank(b'b'), byte_rank(b'c')),
            (byte_rank(b'a'), byte_rank(b'b')),
            (byte_rank(b'a'), 256),
        ]
    );

    // Only the unreachable token needs a whole-piece entry for exactness.
    let minimal = TableData::new(&model, PieceTable::Minimal).unwrap();
    assert_eq!(minimal.pieces, vec![259]);
    let full = TableData::new(&model, PieceTable::Full).unwrap();
    assert_eq!(full.pieces.len(), 260);
    assert!(full.ranks.is_empty());

    let tables = full.to_tables();
    assert_eq!(tables.piece(b"xyz"), Some(259));
    assert_eq!(tables.piece(b"xy"), None);
    assert_eq!(tables.pairs.get(byte_rank(b'a'), 256), Some(258));
    assert_eq!(tables.pairs.get(256, byte_rank(b'a')), None);
    assert_eq!(tables.byte_ids[b'a' as usize], byte_rank(b'a'));
    assert_eq!(tables.token_bytes(262), Some(&b"<|end|>"[..]));
    assert_eq!(tables.token_bytes(260), None);
    assert_eq!(tables.specials.len(), 1);
}

#[test]
fn tiktoken_import_errors() {
    let none: &[(String, u32)] = &[];
    let err = |file: &[u8], specials: &[(String, u32)]| {
        import::tiktoken(file, PatternKind::Gpt2, specials).unwrap_err()
    };
    assert!(matches!(
        err(b"IQ==\n", none),
        ImportError::BadRankLine {
            line: 1,
            reason: "expected `<base64> <rank>`"
        }
    ));
    assert!(matches!(
        err(b"IQ== 0\n%% 1\n", none),
        ImportError::BadRankLine { line: 2, .. }
    ));
    assert!(matches!(
        err(b"IQ== -3\n", none),
        ImportError::BadRankLine { line: 1, .. }
    ));
    assert!(matches!(
        err(b" 0\n", none),
        ImportError::BadRankLine {
            line: 1,
            reason: "no token before the rank"
        }
    ));
    // Each way of not being base64 is named.
    for (line, cause) in [
        (&b"I!QA 0\n"[..], "a byte outside the base64 alphabet"),
        (b"IQ= 0\n", "misplaced `=` padding"),
        (b"IQABC 0\n", "its length is not a multiple of 4"),
        (b"IR== 0\n", "its last symbol has bits that no byte uses"),
    ] {
        match err(line, none) {
            ImportError::BadRankLine { line: 1, reason } => {
                assert!(reason.contains(cause), "{reason}")
            }
            other => panic!("{other:?}"),
        }
    }
    // `=` alone is the empty token, as tiktoken reads it (whisper's rank file ends with one):
    // an id that no text encodes to; its rank is taken like any other.
    let mut file = String::new();
    for b in 0..=255u8 {
        let token = base64::engine::general_purpose::STANDARD.encode([b]);
        file.push_str(&format!("{token} {b}\n"));
    }
    let model =
        import::tiktoken(format!("{file}= 256\n").as_bytes(), PatternKind::Gpt2, none).unwrap();
    assert_eq!(model.n_ids(), 257);
    assert!(model.tokens[256].is_empty());
    assert_eq!(model.empty_tokens, [256]);
    assert!(matches!(
        err(format!("{file}= 256\nIQ== 256\n").as_bytes(), none),
        ImportError::DuplicateRank {
            line: 258,
            rank: 256
        }
    ));
    assert!(matches!(
        err(b"IQ== 0\nIg== 0\n", none),
        ImportError::DuplicateRank { line: 2, rank: 0 }
    ));
    // A rank far beyond the number of tokens would need a huge id table.
    assert!(matches!(
        err(b"IQ== 4000000000\n", none),
        ImportError::SparseIds { .. }
    ));
    let file = rank_file(&[]);
    assert!(matches!(
        err(&file, &[("<|x|>".to_owned(), 3_000_000_000)]),
        ImportError::SparseIds { .. }
    ));
    let e = err(&file, &[("<|x|>".to_owned(), 7)]);
    assert_eq!(
        e.to_string(),
        "special token \"<|x|>\": id 7 is already taken"
    );
    // Missing bytes and duplicate tokens fail validation.
    assert!(matches!(
        err(b"IQ== 0\n", none),
        ImportError::Invalid(InvalidModel::MissingByte { byte: 0 })
    ));
    let mut dup = rank_file(&[]);
    dup.extend_from_slice(b"IQ== 256\n");
    assert!(matches!(
        err(&dup, none),
        ImportError::Invalid(InvalidModel::DuplicateToken { second: 256, .. })
    ));
    assert!(matches!(
        err(&file, &[("a".to_owned(), 256)]),
        ImportError::Invalid(InvalidModel::SpecialIsOrdinary { .. })
    ));
}

/// An HF vocab.json (GPT-2 byte spelling) for bytes in order plus `extra`, and `<|end|>`.
fn vocab_json(extra: &[&[u8]]) -> Vec<u8> {
    let chars = byte_to_char();
    let spell = |t: &[u8]| t.iter().map(|&b| chars[b as usize]).collect::<String>();
    let mut map = serde_json::Map::new();
    for b in 0..=255u8 {
        map.insert(spell(&[b]), u32::from(b).into());
    }
    for (i, t) in extra.iter().enumerate() {
        map.insert(spell(t), (256 + i as u32).into());
    }
    map.insert("<|end|>".to_owned(), (256 + extra.len() as u32).into());
    serde_json::to_vec(&map).unwrap()
}

#[test]
fn hf_import_keeps_file_order_and_builds_rank_tables() {
    // merges listed with "ġt" (id 257) before "he" (256): rank order is not id order.
    let vocab = vocab_json(&[b"he", b" t", b" the"]);
    let merges = "#version: 0.2\n\u{120} t\nh e\n\u{120}t he\n";
    let model = import::hf(
        &vocab,
        merges.as_bytes(),
        PatternKind::Gpt2,
        &["<|end|>".to_owned()],
    )
    .unwrap();
    assert!(!model.whole_piece);
    assert_eq!(model.merges, vec![(32, 116), (104, 101), (257, 256)]);
    assert_eq!(model.tokens[257], b" t");
    assert_eq!(model.specials, vec![("<|end|>".to_owned(), 259)]);

    let data = TableData::new(&model, PieceTable::Full).unwrap();
    let mut ranks = vec![u32::MAX; 260];
    ranks[257] = 0;
    ranks[256] = 1;
    ranks[258] = 2;
    assert_eq!(data.ranks, ranks);
    assert_eq!(data.pieces.len(), 259);
    let tables = data.to_tables();
    assert_eq!(tables.rank(257), 0);
    assert_eq!(tables.rank(100), u32::MAX);
    assert_eq!(tables.pairs.get(257, 256), Some(258));
    assert_eq!(tables.piece(b" the"), Some(258));
}

#[test]
fn wide_pair_keys_beyond_65536_ids() {
    // 676 two-letter tokens, then 17,576 three-letter ones, then " abc", "_abc", "-abc" forms:
    // over 65,536 ids, so pair keys must be wide.
    let letters = b'a'..=b'z';
    let mut extra: Vec<Vec<u8>> = Vec::new();
    for a in letters.clone() {
        for b in letters.clone() {
            extra.push(vec![a, b]);
        }
    }
    for prefix in [&b""[..], b" ", b"_", b"-"] {
        for a in letters.clone() {
            for b in letters.clone() {
                for c in letters.clone() {
                    extra.push([prefix, &[a, b, c]].concat());
                }
            }
        }
    }
    let extra: Vec<&[u8]> = extra.iter().map(Vec::as_slice).collect();
    let id = |t: &[u8]| 256 + extra.iter().position(|x| *x == t).unwrap() as u32;
    let special = 256 + extra.len() as u32 + 10;
    let model = import::tiktoken(
        &rank_file(&extra),
        PatternKind::Gpt2,
        &[("<|end|>".to_owned(), special)],
    )
    .unwrap();
    // Every multi-byte token is reachable: "ab"+"c" (or "a"+"bc"), then " "+"abc".
    assert_eq!(model.merges.len(), extra.len());
    let data = TableData::new(&model, PieceTable::Minimal).unwrap();
    assert!(data.pieces.is_empty());
    let tables = data.to_tables();
    assert_eq!(tables.n_ids(), special as usize + 1);
    let (dash, zzz, dash_zzz) = (byte_rank(b'-'), id(b"zzz"), id(b"-zzz"));
    assert!(dash_zzz > 65_536);
    assert_eq!(tables.pairs.get(dash, zzz), Some(dash_zzz));
    assert_eq!(tables.pairs.get(zzz, dash), None);
    let sizes = tables_sizes(&model);
    assert!(sizes.contains("pieces"), "{sizes}");
}

fn tables_sizes(model: &picobpe_model::Model) -> String {
    TableData::new(model, PieceTable::Full)
        .unwrap()
        .sizes()
        .to_string()
}

#[test]
fn hf_import_errors() {
    let vocab = vocab_json(&[b"he"]);
    let end = ["<|end|>".to_owned()];
    let err = |vocab: &[u8], merges: &str, specials: &[String]| {
        import::hf(vocab, merges.as_bytes(), PatternKind::Gpt2, specials).unwrap_err()
    };
    assert!(matches!(err(b"[1, 2]", "", &end), ImportError::Json(_)));
    assert!(matches!(
        err(&vocab, "h e x\n", &end),
        ImportError::BadMergeLine { line: 1, .. }
    ));
    let e = err(&vocab, "#version: 0.2\nh q\n", &end);
    assert_eq!(
        e.to_string(),
        "merges.txt line 2: token \"hq\" is not in the vocabulary"
    );
    assert!(matches!(
        err(&vocab, "h e\n", &["<|nope|>".to_owned()]),
        ImportError::UnknownSpecial { .. }
    ));
    // "<|end|>" not declared special: '<' '|' ... are byte-level characters, so it imports as
    // an ordinary token; a key with a raw space is not byte-level text.
    let spaced = br#"{"a b": 0}"#;
    assert!(matches!(err(spaced, "", &[]), ImportError::VocabKey { .. }));
    let dup = br#"{"a": 0, "b": 0}"#;
    assert!(matches!(
        err(dup, "", &[]),
        ImportError::DuplicateVocabId { id: 0 }
    ));
    assert!(matches!(
        err(&vocab, "h e\nh e\n", &end),
        ImportError::Invalid(InvalidModel::MergeDuplicate { index: 1, .. })
    ));
}
