//! Differential tests of the Tekken pre-tokenizer (the o200k splitter without contractions and
//! with one number character a piece, see `picobpe::Pattern::Tekken`) against `fancy-regex`
//! with the `config.pattern` of Mistral's `tekken.json`: zero differences on corpora, every
//! Unicode scalar value, random strings, invalid UTF-8 (U+E000 substitution reference) and
//! streamed prefixes. Harness: `pretok_common`.

mod pretok_common;

use picobpe::pretok::Pattern;
use pretok_common::*;

const SEED: u64 = 6;

fn harness() -> Harness {
    Harness::new(Pattern::Tekken)
}

/// Committed fixtures (~400 KB), plus the CS336 texts, every multilingual file and the first
/// 4 MB of the English corpus when `../shared/data` is present.
#[test]
fn corpora_match_fancy_regex() {
    corpora(&harness(), 4 << 20);
}

/// Every scalar value alone and in ten contexts.
#[test]
fn every_scalar_value_matches_fancy_regex() {
    every_scalar(&harness());
}

/// 30,000 seeded random strings mixing scripts, emoji, numbers, whitespace runs, apostrophes.
#[test]
fn random_strings_match_fancy_regex() {
    random_strings(&harness(), 0x5EED_0000 + SEED, 30_000);
}

/// Invalid UTF-8: each invalid byte splits like one U+E000.
#[test]
fn invalid_utf8_splits_like_private_use() {
    invalid_utf8(&harness(), 0xBAD_0000 + SEED, 20_000);
}

/// Runs of CJK ideographs next to the characters and bytes that end them.
#[test]
fn cjk_runs_match_fancy_regex() {
    cjk_runs(&harness(), 0xC1C_0000 + SEED, 20_000);
}

/// Pieces returned for a non-final prefix are always the one-shot pieces.
#[test]
fn streaming_prefixes_agree_with_one_shot() {
    streaming(&harness(), 0x57E_0000 + SEED, 20_000);
}

/// Hand-derived splits (also checked against fancy-regex): the two rules that set this pattern
/// apart from o200k_base's, an apostrophe being punctuation and numbers one at a time.
#[test]
fn hand_written_examples() {
    expect_splits(
        &harness(),
        &[
            ("12345", &["1", "2", "3", "4", "5"]),
            ("x１２", &["x", "１", "２"]),
            ("I'M DON'T", &["I", "'M", " DON", "'T"]),
            ("don't we'll", &["don", "'t", " we", "'ll"]),
            ("HelloWorld", &["Hello", "World"]),
            ("a\n\n  b/\n", &["a", "\n\n", " ", " b", "/\n"]),
        ],
    );
}

/// Hand-derived streaming answers (`None` = NeedMore).
#[test]
fn streaming_examples() {
    expect_steps(
        &harness(),
        &[
            (b"1", Some(1)),
            (b"12", Some(1)),
            (b"ab'", Some(2)),
            (b"ab", None),
            (b"\n ", None),
            (b"\n x", Some(1)),
        ],
    );
}

/// A `NeedMore` for a non-final prefix is always necessary (some continuation changes the piece).
#[test]
fn streaming_need_more_is_necessary() {
    streaming_precision(&harness(), 0x9EC_0000 + SEED, 5_000);
}
