//! Import a byte-level BPE model from a Hugging Face `tokenizer.json`: the form Llama 3,
//! Qwen2 / Qwen2.5 and GPT-2-style models ship in.
//!
//! What is accepted is exactly what picobpe reproduces; everything else is refused with an
//! error that names the part ([`ImportError::TokenizerJson`]) or, where it does not change the
//! ids of `encode(text, add_special_tokens=False)`, reported in [`HfJsonImport::notes`]:
//!
//! - **model**: `BPE` over GPT-2 byte-level symbols, no dropout, no subword prefix, no byte
//!   fallback; an `end_of_word_suffix` (CLIP's `</w>`) on the last byte of each piece
//!   ([`Model::end_of_word_suffix`]), with every byte followed by it a token, so no symbol
//!   is unknown; `ignore_merges` (Llama 3) is tiktoken's whole-piece rule, and with it a
//!   merge list in the order of the products' ids is tiktoken's ranks (`products_ascend`).
//! - **pre-tokenizer**: `Sequence[Split(Regex(P), Isolated), ByteLevel(use_regex=false)]`
//!   with `P` one of the patterns picobpe splits by hand ([`PatternKind::from_regex`], compared
//!   character for character), or `ByteLevel` alone (GPT-2's pattern, or with
//!   `use_regex=false` the whole text between added tokens as one piece); other `Split` lists
//!   are compiled (`crate::compile_split`; each `Split` with any behaviour, inverted or
//!   not: `Removed` drops its bytes before they are merged), with `Digits` and
//!   `Punctuation` (any behaviour) among them as the `Split`s of their character classes (SmolLM's and
//!   StarCoder2's `Digits` before `ByteLevel`); `ByteLevel`'s `add_prefix_space` (a space
//!   before each text between added tokens that does not start with one) only on
//!   `ByteLevel` alone, without a normalizer.
//! - **normalizer**: none, or one of `NFC` (Qwen2), `NFD`, `NFKC`, `NFKD`, then (or alone)
//!   `Lowercase` and `Replace(Regex("\s+"), " ")` (CLIP's), applied by the core
//!   ([`picobpe::normalizer`]) to the text between special tokens, as `tokenizers` applies it
//!   after extracting added tokens; with every added token marked `normalized`, to the whole
//!   text, the tokens then found in the normalized text ([`TextSteps::specials_normalized`]).
//! - **added tokens**: matched whole in the text, as picobpe's special tokens (the rule of
//!   [`TokenizerJson`]); those not marked special are reported in a note.
//! - **post-processor**: not part of the model: [`crate::TemplateData::from_tokenizer_json`]
//!   reads it (Llama 3's `<|begin_of_text|> $A`), for encoding with special tokens.
//! - **decoder**: `ByteLevel` (a file with none is refused: `tokenizers` would decode its ids
//!   as the byte-level tokens joined by spaces).

use std::collections::HashMap;

use super::hf_import::{decode_vocab, from_parts};
use super::tiktoken_import::from_ranks;
use super::ImportError;
use crate::model::{Model, Split, TextSteps};
use crate::pattern::PatternKind;
use crate::tokenizer_json::{
    bad, bad_steps, Decoder, ModelJson, Normalizer, Part, Pattern, PreTokenizer, Refused,
    TokenizerJson,
};
use picobpe::normalizer::UnicodeForm;
use picobpe::pretok::{SplitBehavior, SplitRule};

/// A model imported from a `tokenizer.json`, with what the import chose not to apply.
#[derive(Debug)]
pub struct HfJsonImport {
    /// The validated model.
    pub model: Model,
    /// One line for each part of the file that picobpe does not apply and that does not
    /// change the ids of `encode(text, add_special_tokens=False)` (added tokens marked
    /// non-special).
    pub notes: Vec<String>,
}

/// Build a [`Model`] from a byte-level BPE `tokenizer.json` (see the module docs for what is
/// accepted).
pub fn tokenizer_json(file: &TokenizerJson) -> Result<HfJsonImport, ImportError> {
    let ModelJson::Bpe(model) = &file.model else {
        let name = file.model.name();
        let what = format!("{name:?}: only BPE is imported as byte-level BPE");
        return Err(bad("model.type", what).into());
    };
    model.check_but_suffix()?;
    let suffix = match model.end_of_word_suffix() {
        None => Vec::new(),
        Some(text) => crate::byte_unicode::ByteDecoder::new()
            .decode(text)
            .ok_or_else(|| {
                let what = format!("{text:?}: a character outside GPT-2's byte-level alphabet");
                bad("model.end_of_word_suffix", what)
            })?,
    };
    if model.byte_fallback {
        let what = "true; not supported for byte-level BPE";
        return Err(bad("model.byte_fallback", what).into());
    }
    let mut notes = Vec::new();
    let (normalizer, mut steps) = normalizer(&file.normalizer)?;
    steps.specials_normalized = file.added_tokens_all_normalized();
    let (pattern, splits, prefix_space) = pre_tokenizer(&file.pre_tokenizer)?;
    if prefix_space && (normalizer.is_some() || steps.fold()) {
        let what = "ByteLevel add_prefix_space after a normalizer: not supported";
        return Err(bad("pre_tokenizer", what.to_owned()).into());
    }
    if file.decoder.is_empty() {
        let what = "none: tokenizers decodes the ids as their byte-level tokens (Ġ for a space) \
                    joined by spaces; not supported (a ByteLevel decoder is)";
        return Err(bad("decoder", what.to_owned()).into());
    }
    if let Some(d) = (file.decoder.iter()).find(|d| !matches!(d.known, Some(Decoder::ByteLevel))) {
        return Err(bad("decoder", format!("{:?}: not supported", d.kind())).into());
    }
    let merges = model.merges().map_err(|e| bad("model.merges", e))?;
    let (specials, strips) = (file.added_tokens_matched(steps.specials_normalized))
        .map_err(|e| bad("added_tokens", e))?;
    let plain = file.plain_added_tokens();
    if !plain.is_empty() {
        notes.push(format!(
            "added tokens not marked special ({}) are matched as special tokens: tokenizers \
             matches them even when special tokens are encoded as text",
            plain.join(", ")
        ));
    }
    let (vocab, whole_piece) = (&model.vocab, model.ignore_merges);
    let mut model = if whole_piece && products_ascend(vocab, &merges) {
        from_ranks(decode_vocab(vocab, &specials)?, pattern, &specials)?
    } else {
        from_parts(vocab, &merges, pattern, specials, whole_piece)?
    };
    model.normalizer = normalizer;
    model.steps = steps;
    model.end_of_word_suffix = suffix;
    model.splits = splits;
    model.prefix_space = prefix_space;
    crate::tables::check_strips(&strips, &model.specials).map_err(|r| bad("added_tokens", r))?;
    model.strips = strips;
    model.validate()?;
    Ok(HfJsonImport { model, notes })
}

/// True when every merge's product is in the vocabulary and the products' ids never go down
/// along the merge list: then merge priority is the product's id, tiktoken's rule.
///
/// Llama 3's file is converted from tiktoken ranks and lists *every* split of each token
/// (280,147 merges for 128,000 tokens, several making the same token), which a merge list
/// of one merge per token cannot hold; its order is the products' ids, so with
/// `ignore_merges` it encodes exactly like tiktoken with ranks = ids.
fn products_ascend(vocab: &HashMap<String, u32>, merges: &[(usize, &str, &str)]) -> bool {
    let mut last = 0;
    merges
        .iter()
        .all(|(_, l, r)| match vocab.get(&format!("{l}{r}")) {
            Some(&id) if id >= last => {
                last = id;
                true
            }
            _ => false,
        })
}

/// The normalizer's Unicode form, if any, and its steps after it: one form (`NFC`, `NFD`,
/// `NFKC`, `NFKD`) first or none, then `Lowercase` and CLIP's `Replace(Regex("\s+"), " ")`,
/// each at most once, in either order (they commute: `Lowercase` neither makes nor unmakes
/// whitespace). The runs of whitespace after a compatibility form are refused by
/// [`Model::validate`](crate::Model::validate).
fn normalizer(steps: &[Part<Normalizer>]) -> Result<(Option<UnicodeForm>, TextSteps), Refused> {
    let refuse = || {
        let why = "supported: NFC, NFD, NFKC or NFKD first or none, then Lowercase and \
                   Replace(Regex(\"\\s+\"), \" \"), each at most once";
        bad_steps("normalizer", steps, why)
    };
    let form = |n: &Part<Normalizer>| match n.known {
        Some(Normalizer::Nfc) => Some(UnicodeForm::Nfc),
        Some(Normalizer::Nfd) => Some(UnicodeForm::Nfd),
        Some(Normalizer::Nfkc) => Some(UnicodeForm::Nfkc),
        Some(Normalizer::Nfkd) => Some(UnicodeForm::Nfkd),
        _ => None,
    };
    let (first, rest) = match steps.split_first() {
        Some((n, rest)) if form(n).is_some() => (form(n), rest),
        _ => (None, steps),
    };
    let mut text_steps = TextSteps::default();
    for n in rest {
        let flag = match &n.known {
            Some(Normalizer::Lowercase) => &mut text_steps.lowercase,
            Some(Normalizer::Replace {
                pattern: Pattern::Regex(regex),
                content,
            }) if regex == r"\s+" && content == " " => &mut text_steps.collapse_whitespace,
            _ => return Err(refuse()),
        };
        if *flag {
            return Err(refuse());
        }
        *flag = true;
    }
    Ok((first, text_steps))
}

/// The split of a pre-tokenizer that does not split (`ByteLevel` with `use_regex: false` and
/// no `Split` before it): the whole text between added tokens is one piece.
const WHOLE_TEXT: &str = r"[\s\S]+";

/// The regex of a split on the characters `pred` holds for: each one a piece (`isolated`), or
/// each run of them. The class lists the characters themselves (`\x{..}` ranges), so it is
/// the predicate `tokenizers` calls, whatever Unicode version a property would have.
fn char_split(pred: impl Fn(char) -> bool, isolated: bool) -> String {
    let mut class = String::from("[");
    let mut run: Option<(u32, u32)> = None;
    let close = |class: &mut String, (lo, hi): (u32, u32)| {
        class.push_str(&format!("\\x{{{lo:X}}}"));
        if hi > lo {
            class.push_str(&format!("-\\x{{{hi:X}}}"));
        }
    };
    for c in (0..=char::MAX as u32).filter_map(char::from_u32) {
        let cp = c as u32;
        run = match (run, pred(c)) {
            (Some((lo, hi)), true) if hi + 1 == cp => Some((lo, cp)),
            (Some(r), true) => {
                close(&mut class, r);
                Some((cp, cp))
            }
            (None, true) => Some((cp, cp)),
            (Some(r), false) => {
                close(&mut class, r);
                None
            }
            (None, false) => None,
        };
    }
    if let Some(r) = run {
        close(&mut class, r);
    }
    class.push(']');
    if !isolated {
        class.push('+');
    }
    class
}

/// CLIP's `Split` regex (transformers' `CLIPConverter`; kept, `Removed`, inverted).
const CLIP_WORDS: &str = r"'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+";

/// True when the last split is CLIP's: then `ByteLevel`'s own GPT-2 regex after it splits
/// none of its pieces, and is left out (one automaton walk instead of two). Its pieces are a
/// contraction (`'s` … `'d`: GPT-2's first alternative takes it whole), a run of letters
/// (` ?\p{L}+` whole), one digit (` ?\p{N}+`), or a run of characters that are neither
/// whitespace, letters nor digits (GPT-2's contraction needs a letter, so
/// ` ?[^\s\p{L}\p{N}]+` takes the run whole).
fn ends_in_clip_words(splits: &[Split]) -> bool {
    let kept = SplitRule {
        behavior: SplitBehavior::Removed,
        invert: true,
    };
    splits
        .last()
        .is_some_and(|s| s.regex == CLIP_WORDS && s.rule == kept)
}

/// The pattern of the pre-tokenizer, the `Split` regexes that take its place when it is
/// none of the hand-rolled patterns (see [`Model::splits`](crate::Model::splits)), and
/// `ByteLevel`'s `add_prefix_space` ([`Model::prefix_space`](crate::Model::prefix_space)).
///
/// Accepted: `ByteLevel` alone (GPT-2's pattern, or with `use_regex: false` no split at all:
/// [`WHOLE_TEXT`]; `add_prefix_space` on or off), or `Split`s (a `String` pattern is its
/// literal text; any behaviour, inverted or not), `Digits` and `Punctuation`
/// (any behaviour: [`char_split`]) followed by `ByteLevel`. One `Split` whose regex is
/// a hand-rolled pattern's, before `ByteLevel` with `use_regex: false`, takes that splitter;
/// any other list is compiled, with `ByteLevel`'s own GPT-2 regex as the last split when its
/// `use_regex` is on.
fn pre_tokenizer(steps: &[Part<PreTokenizer>]) -> Result<(PatternKind, Vec<Split>, bool), Refused> {
    let bad = |what: String| bad("pre_tokenizer", what);
    let Some((b, splits)) = steps.split_last() else {
        return Err(bad("missing: byte-level BPE needs one".into()));
    };
    let mut regexes = Vec::new();
    for split in splits {
        let split = match &split.known {
            Some(PreTokenizer::Split {
                pattern,
                behavior,
                invert,
            }) => {
                let behavior = match behavior.as_str() {
                    "Isolated" => SplitBehavior::Isolated,
                    "MergedWithPrevious" => SplitBehavior::MergedWithPrevious,
                    "MergedWithNext" => SplitBehavior::MergedWithNext,
                    "Contiguous" => SplitBehavior::Contiguous,
                    "Removed" => SplitBehavior::Removed,
                    other => {
                        return Err(bad(format!(
                            "Split behavior {other:?}: not supported (Isolated, \
                             MergedWithPrevious, MergedWithNext, Contiguous and Removed are)"
                        )))
                    }
                };
                let regex = match pattern {
                    Pattern::Regex(regex) => regex.clone(),
                    Pattern::String(text) => regex_syntax::escape(text),
                };
                let invert = invert.unwrap_or(false);
                Split {
                    regex,
                    rule: SplitRule { behavior, invert },
                }
            }
            // `Digits` and `Punctuation` split on a character predicate: each character a
            // piece (`Isolated`), or each run (`Contiguous`), which is the `Split` of the
            // class, or of its runs.
            Some(PreTokenizer::Digits { individual_digits }) => Split::isolated(char_split(
                char::is_numeric,
                individual_digits.unwrap_or(false),
            )),
            Some(PreTokenizer::Punctuation { behavior }) => {
                let punctuation = |c| {
                    picobpe::wordpiece::char_flags(c) & picobpe::wordpiece::PUNCTUATION_FLAG != 0
                };
                // Each punctuation character is a match of its own (a character predicate's
                // matches), joined or dropped by the behaviour.
                let behavior = match behavior.as_deref().unwrap_or("Isolated") {
                    "Isolated" => SplitBehavior::Isolated,
                    "Contiguous" => SplitBehavior::Contiguous,
                    "MergedWithPrevious" => SplitBehavior::MergedWithPrevious,
                    "MergedWithNext" => SplitBehavior::MergedWithNext,
                    "Removed" => SplitBehavior::Removed,
                    other => return Err(bad(format!("Punctuation behavior {other:?}: unknown"))),
                };
                match behavior {
                    // The runs, `Isolated`: the same pieces, and the common form.
                    SplitBehavior::Contiguous => Split::isolated(char_split(punctuation, false)),
                    _ => Split {
                        regex: char_split(punctuation, true),
                        rule: SplitRule {
                            behavior,
                            invert: false,
                        },
                    },
                }
            }
            _ => {
                let why =
                    "expected Sequence[Split, Digits or Punctuation…, ByteLevel] or ByteLevel";
                return Err(bad_steps("pre_tokenizer", steps, why));
            }
        };
        regexes.push(split);
    }
    let Some(PreTokenizer::ByteLevel {
        add_prefix_space,
        use_regex,
    }) = b.known
    else {
        return Err(bad(format!("{:?}: not supported", b.kind())));
    };
    // The space goes before every piece the steps before `ByteLevel` made: picobpe puts it
    // before each text between added tokens, which is that only when nothing splits before.
    let prefix_space = add_prefix_space.unwrap_or(true);
    if prefix_space && !regexes.is_empty() {
        return Err(bad(
            "ByteLevel add_prefix_space after a Split: not supported".into(),
        ));
    }
    let use_regex = use_regex.unwrap_or(true);
    if regexes.is_empty() && !use_regex {
        // Nothing splits: each text between added tokens is one piece, as `tokenizers`
        // hands it to the model.
        return Ok((
            PatternKind::Gpt2,
            vec![Split::isolated(WHOLE_TEXT)],
            prefix_space,
        ));
    }
    if !use_regex {
        if let [split] = regexes.as_slice() {
            let hand_rolled = PatternKind::from_regex(&split.regex);
            if let Some(pattern) = hand_rolled.filter(|_| split.rule == SplitRule::ISOLATED) {
                return Ok((pattern, Vec::new(), false));
            }
        }
    }
    if regexes.is_empty() {
        return Ok((PatternKind::Gpt2, Vec::new(), prefix_space));
    }
    if use_regex && !ends_in_clip_words(&regexes) {
        regexes.push(Split::isolated(PatternKind::Gpt2.reference_regex()));
    }
    for split in &regexes {
        crate::compile_split(split).map_err(|e| bad(format!("Split: {e}")))?;
    }
    // `pattern` is not used beside splits; GPT-2's is the file's neutral value.
    Ok((PatternKind::Gpt2, regexes, false))
}
