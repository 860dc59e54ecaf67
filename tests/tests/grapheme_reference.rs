//! The core's extended grapheme clusters and its `Precompiled` normalizer against the code
//! `tokenizers` 0.22.2 runs: `unicode-segmentation` 1.12.0 (pinned in the workspace, the
//! version the Python wheel is built with) and `tokenizers`' own `Precompiled` normalizer
//! (the Rust crate), with real SentencePiece character maps (`nmt_nfkc_cf`, a custom TSV rule;
//! the double-array form and the compact form picobpe bakes). Every Unicode scalar value in
//! the contexts where the segmentation rules act, seeded random strings from characters of
//! every class, and the contract of a full buffer and of input that may go on. Zero
//! differences allowed.

use picobpe::normalizer::{grapheme_end, precompiled_normalize, NormalizeError};
use picobpe::sentencepiece::CharsMap;
use picobpe_tests::check::Rng;
use picobpe_tests::sp::{self, SpSource};
use tokenizers::normalizers::precompiled::Precompiled;
use tokenizers::{NormalizedString, Normalizer};
use unicode_segmentation::UnicodeSegmentation;

/// Boundaries by the reference (cluster ends).
fn reference_ends(text: &str) -> Vec<usize> {
    let mut at = 0;
    text.graphemes(true)
        .map(|g| {
            at += g.len();
            at
        })
        .collect()
}

fn our_ends(text: &[u8]) -> Vec<usize> {
    let (mut at, mut ends) = (0, Vec::new());
    while at < text.len() {
        at = grapheme_end(text, at, true).expect("a final text always ends its cluster");
        ends.push(at);
    }
    ends
}

/// Characters of every class and property the rules name, for contexts and random strings.
const ALPHABET: &[char] = &[
    'a',
    ' ',
    '\r',
    '\n',
    '\t',
    '\u{AD}',
    '\u{300}',
    '\u{308}',
    '\u{200D}',
    '\u{200C}',
    '\u{903}',
    '\u{600}',
    '\u{110BD}',
    '\u{1F1E6}',
    '\u{1F1EF}',
    '\u{1100}',
    '\u{1161}',
    '\u{11A8}',
    '\u{AC00}',
    '\u{AC01}',
    '\u{1F44D}',
    '\u{A9}',
    '\u{2764}',
    '\u{FE0F}',
    '\u{1F3FB}',
    '\u{915}',
    '\u{937}',
    '\u{94D}',
    '\u{93C}',
    '\u{9CD}',
    '\u{995}',
    '\u{D4D}',
    '\u{E0020}',
    '\u{E0100}',
    '\u{FF21}',
    '\u{FF9E}',
    '\u{FF76}',
    '\u{2460}',
    '\u{3000}',
    '\u{E01}',
    '\u{E33}',
    '\u{1160}',
    '\u{D7B0}',
    '\u{FFFD}',
];

/// Contexts around one character `c` where each rule can act.
fn contexts(c: char) -> Vec<String> {
    let ctx: [&[&str]; 14] = [
        &["", ""],
        &["a", ""],
        &["", "a\u{308}"],
        &["\u{600}", ""],
        &["\r", "\n"],
        &["\u{1100}", "\u{1161}"],
        &["\u{1161}", "\u{11A8}"],
        &["\u{11A8}", "\u{11A8}"],
        &["\u{915}\u{94D}", "\u{915}"],
        &["\u{915}", "\u{915}"],
        &["\u{1F44D}\u{200D}", "\u{200D}\u{1F44D}"],
        &["\u{1F44D}", "\u{200D}\u{1F44D}"],
        &["\u{1F1E6}", "\u{1F1E6}"],
        &["\u{1F1E6}\u{1F1E6}", ""],
    ];
    ctx.iter()
        .map(|p| format!("{}{c}{c}{}", p[0], p[1]))
        .chain(ctx.iter().map(|p| format!("{}{c}{}", p[0], p[1])))
        .collect()
}

#[test]
fn clusters_match_the_reference_on_every_scalar_value() {
    let (mut n, mut failed) = (0usize, Vec::new());
    for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
        for text in contexts(c) {
            n += 1;
            if our_ends(text.as_bytes()) != reference_ends(&text) && failed.len() < 10 {
                failed.push(format!("{:04X}: {text:?}", u32::from(c)));
            }
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {n} differ: {failed:#?}",
        failed.len()
    );
}

#[test]
fn clusters_match_the_reference_on_random_strings() {
    let mut rng = Rng::new("grapheme", 1);
    let mut failed = Vec::new();
    for _ in 0..200_000 {
        let len = rng.range(1, 12);
        let text: String = (0..len)
            .map(|_| ALPHABET[rng.range(0, ALPHABET.len() - 1)])
            .collect();
        if our_ends(text.as_bytes()) != reference_ends(&text) && failed.len() < 10 {
            failed.push(text);
        }
    }
    assert!(failed.is_empty(), "differ: {failed:#?}");
}

#[test]
fn a_cluster_that_may_go_on_is_held() {
    // Without `last`, the cluster reaching the end (or a character cut short) is not ended.
    for text in ["a", "a\u{308}", "\r", "\u{1F1E6}"] {
        assert_eq!(grapheme_end(text.as_bytes(), 0, false), None, "{text:?}");
    }
    assert_eq!(grapheme_end(b"a\xCC", 0, false), None);
    assert_eq!(grapheme_end(b"ab", 0, false), Some(1));
    // Bytes that are not UTF-8 are U+FFFD each: a boundary on both sides, marks join them.
    assert_eq!(our_ends(b"a\xFFb"), vec![1, 2, 3]);
    assert_eq!(our_ends(b"\xFF\xCC\x88b"), vec![3, 4]);
}

/// The character maps: (model, source) whose `charsmap` both sides read: `nmt_nfkc_cf` and a
/// custom rule as double arrays, `nmt_nfkc` in the compact form.
const MAPS: [(&str, SpSource); 3] = [
    ("nfkc-ug", SpSource::ModelProto),
    ("nfkc-bpe", SpSource::Compact),
    ("nfkc-tsv", SpSource::ModelProto),
];

fn reference_normalizer(model: &str) -> Precompiled {
    let blob = sp::model(model, SpSource::ModelProto).charsmap;
    Precompiled::from(&blob).expect("tokenizers reads the map")
}

fn reference(p: &Precompiled, text: &str) -> String {
    let mut n = NormalizedString::from(text);
    p.normalize(&mut n).expect("normalize");
    n.get().to_owned()
}

fn ours(map: CharsMap<'_>, text: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; 64 * text.len() + 16];
    let p = precompiled_normalize(map, text, true, &mut out).expect("room enough");
    assert_eq!(p.consumed, text.len());
    out.truncate(p.written);
    out
}

fn check_map(model: &str, source: SpSource, texts: &mut dyn Iterator<Item = String>) {
    let reference_map = reference_normalizer(model);
    let map = sp::tables(model, source).charsmap;
    assert_eq!(
        map.units.is_empty(),
        source == SpSource::Compact,
        "{model} {source:?}"
    );
    let (mut n, mut failed) = (0usize, Vec::new());
    for text in texts {
        n += 1;
        let want = reference(&reference_map, &text);
        if ours(map, text.as_bytes()) != want.as_bytes() && failed.len() < 10 {
            failed.push(format!("{text:?} -> {want:?}"));
        }
    }
    assert!(
        failed.is_empty(),
        "{model} {source:?}: {} of {n} differ: {failed:#?}",
        failed.len()
    );
}

#[test]
fn precompiled_matches_tokenizers_on_every_scalar_value() {
    for (model, source) in MAPS {
        let mut texts = (0..=0x10FFFFu32).filter_map(char::from_u32).flat_map(|c| {
            [
                format!("{c}"),
                format!("{c}\u{301}"),
                format!("{c}\u{301}\u{301}"),
                format!("\u{FF21}{c}"),
                format!("{c}\r\n"),
            ]
        });
        check_map(model, source, &mut texts);
    }
}

#[test]
fn precompiled_matches_tokenizers_on_random_strings() {
    for (model, source) in MAPS {
        let mut rng = Rng::new("precompiled", 2);
        let mut texts = (0..50_000).map(|_| {
            let len = rng.range(1, 14);
            (0..len)
                .map(|_| ALPHABET[rng.range(0, ALPHABET.len() - 1)])
                .collect::<String>()
        });
        check_map(model, source, &mut texts);
    }
}

#[test]
fn precompiled_resumes_after_a_full_buffer_and_holds_a_cluster_that_may_go_on() {
    let map = sp::tables("nfkc-bpe", SpSource::Compact).charsmap;
    let text = "Ａ\u{301}ｶﾞ①\r\n\u{3000}x\u{308}\u{308}\u{308}ﬁ".as_bytes();
    let whole = ours(map, text);
    for size in 1..whole.len() + 2 {
        let (mut at, mut got) = (0usize, Vec::new());
        let mut buf = vec![0u8; size];
        loop {
            match precompiled_normalize(map, &text[at..], true, &mut buf) {
                Ok(p) => {
                    got.extend_from_slice(&buf[..p.written]);
                    assert_eq!(at + p.consumed, text.len());
                    break;
                }
                Err(NormalizeError::OutputFull { consumed, written }) => {
                    got.extend_from_slice(&buf[..written]);
                    at += consumed;
                }
                Err(NormalizeError::UnitTooLong { needed, .. }) => {
                    assert!(needed > size);
                    buf = vec![0u8; needed];
                }
            }
        }
        assert_eq!(got, whole, "buffer of {size}");
    }
    // Input that may go on stops before its last cluster.
    let mut out = [0u8; 64];
    let p = precompiled_normalize(map, "aＡ".as_bytes(), false, &mut out).unwrap();
    assert_eq!((p.consumed, &out[..p.written]), (1, &b"a"[..]));
}
