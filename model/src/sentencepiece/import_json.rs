//! Import a SentencePiece-style model (BPE or Unigram over `▁` pieces) from a parsed Hugging
//! Face `tokenizer.json` (the form `transformers` gives Llama 2, TinyLlama and T5 tokenizers).

use std::collections::HashMap;

use picobpe::normalizer::UnicodeForm;
use picobpe::wordpiece::Spaces;

use crate::normalizer::CharSteps;

use super::import_proto::SpImportError;
use super::{byte_piece_value, SpKind, SpModel, SpPiece, SpSections};
use crate::tokenizer_json::{
    bad, bad_steps, by_id, known, Metaspace, ModelJson, Normalizer, Part, Pattern, PreTokenizer,
    Refused, TokenizerJson,
};

/// Build an [`SpModel`] from a `tokenizer.json` whose model is `BPE` or `Unigram` over `▁`
/// pieces, optional byte fallback, with one of these normalizer and pre-tokenizer shapes:
/// `Prepend("▁")` (optional) + `Replace(" ", "▁")` and no pre-tokenizer (`LlamaConverter`); or a
/// `Metaspace` pre-tokenizer (any `prepend_scheme`, splitting or not; or `WhitespaceSplit` and
/// a splitting one, as published T5 files have; or `Whitespace`, `Punctuation` and `Digits`,
/// with or without `WhitespaceSplit`, before a splitting one: [`SpModel::pre_split`]) after
/// no normalizer,
/// after `Strip(right)` + `Replace(Regex(" {2,}"), "▁")` (`transformers`' `SpmConverter`), or
/// (splitting only) after one of `NFC`, `NFD`, `NFKC`, `NFKD` (`SentencePieceBPETokenizer`), or
/// after a `Precompiled` character map with or without those two steps (`SpmConverter`'s T5,
/// mT5: see `picobpe::normalizer` for `tokenizers`' rule, which is not `sentencepiece`'s), or
/// (splitting only) after `Strip(left, right)` + an optional `Precompiled` +
/// `Replace(Regex(" {2,}"), " ")` (`DebertaV2Converter`: [`SpModel::strip_sections`]).
///
/// - **BPE**: merge priority follows the merge list: the piece the first merge makes scores
///   highest; pieces no merge makes are never merged into.
/// - **Unigram**: `vocab` as `[piece, score]` pairs in id order, `unk_id`, `byte_fallback`.
///   Encoded with `tokenizers`' arithmetic (`f64` sums, no score reset, every piece
///   matchable) and the file's `f64` scores (which need not be `f32` values).
///
/// Added tokens become user-defined symbols (matched whole in the text, as `tokenizers` does),
/// the unknown token an unknown piece matched in the text too ([`SpModel::unk_in_text`]);
/// each must be the vocabulary's piece of its id; those with `lstrip` or `rstrip` take the
/// whitespace beside them ([`SpModel::strips`]). A BPE model's `fuse_unk: false` (its
/// default) is [`SpModel::unk_per_char`]. Anything else in
/// the normalizer or pre-tokenizer is refused with an error that names it. The post-processor is
/// not part of the model ([`crate::TemplateData::from_tokenizer_json`] reads it): ids are those
/// of `encode(text, add_special_tokens=False)`.
pub fn import_tokenizer_json(file: &TokenizerJson) -> Result<SpModel, SpImportError> {
    let (pieces, scores, f64_scores, unk_id, byte_fallback, unk_per_char) = match &file.model {
        ModelJson::Bpe(m) => {
            m.check()?;
            let pieces = by_id(&m.vocab).map_err(|e| bad("model.vocab", e))?;
            let mut rank_of: HashMap<String, usize> = HashMap::new();
            let merges = m.merges().map_err(|e| bad("model.merges", e))?;
            for (n, left, right) in merges {
                rank_of.entry(format!("{left}{right}")).or_insert(n - 1);
            }
            let scores = pieces.iter().map(|p| rank_of.get(p).map(|&r| -(r as f32)));
            let unk_id = pieces.iter().position(|p| Some(p) == m.unk_token.as_ref());
            let scores: Vec<Option<f32>> = scores.collect();
            (
                pieces,
                scores,
                Vec::new(),
                unk_id,
                m.byte_fallback,
                !m.fuse_unk,
            )
        }
        ModelJson::Unigram(m) => {
            let unk_id = m
                .unk_id
                .ok_or_else(|| bad("model.unk_id", "missing (a Unigram model needs <unk>)"))?;
            let pieces = m.vocab.iter().map(|(p, _)| p.clone()).collect();
            let f64_scores: Vec<f64> = m.vocab.iter().map(|&(_, s)| s).collect();
            let scores = f64_scores.iter().map(|&s| Some(s as f32)).collect();
            // `tokenizers`' Unigram always makes a run of unknown characters one `<unk>`.
            (
                pieces,
                scores,
                f64_scores,
                Some(unk_id),
                m.byte_fallback,
                false,
            )
        }
        other => {
            let model_type = other.name().to_owned();
            return Err(SpImportError::NotBpe { model_type });
        }
    };
    if pieces.len() > picobpe::MAX_IDS {
        let what = format!("{} pieces is too many", pieces.len());
        return Err(bad("model.vocab", what).into());
    }
    let Shape {
        unicode,
        charsmap,
        add_dummy_prefix,
        remove_extra_whitespaces,
        collapse_spaces,
        strip_sections,
        sections,
        char_steps,
        pre_split,
    } = normalizer(file)?;
    let byte_texts = !byte_fallback && pieces.iter().any(|p| byte_piece_value(p).is_some());
    let joins_pieces = decoder_joins(file, add_dummy_prefix, byte_texts, byte_fallback)?;
    // Added tokens that take the whitespace beside them (`lstrip`, `rstrip`) keep it.
    let (added, strips) = file.added_tokens().map_err(|e| bad("added_tokens", e))?;
    for (content, id) in &added {
        if pieces.get(*id as usize) != Some(content) {
            let what = format!("{content:?} (id {id}) is not the vocabulary's piece of that id");
            return Err(bad("added_tokens", what).into());
        }
    }
    let added: HashMap<String, u32> = added.into_iter().collect();
    // An added `<unk>` is matched in the text as the others are.
    let unk_in_text = unk_id.is_some_and(|id| added.values().any(|&a| a as usize == id));
    // With byte fallback no character is unknown: the setting would be dead weight.
    let unk_per_char = unk_per_char && unk_id.is_some() && !byte_fallback;
    // `tokenizers` decodes `<unk>` as its piece (then the decoder), not as ` ⁇ `.
    let unk_surface = unk_id.map_or_else(String::new, |id| pieces[id].clone());
    let pieces = (pieces.into_iter().zip(scores).enumerate())
        .map(|(id, (piece, score))| {
            let kind = if Some(id) == unk_id {
                SpKind::Unknown
            } else if added.contains_key(&piece) {
                SpKind::UserDefined
            } else if byte_fallback && byte_piece_value(&piece).is_some() {
                SpKind::Byte
            } else {
                SpKind::Normal
            };
            SpPiece { piece, score, kind }
        })
        .collect();
    let model = SpModel {
        pieces,
        add_dummy_prefix,
        remove_extra_whitespaces,
        byte_fallback,
        unk_surface,
        sections,
        unigram: matches!(file.model, ModelJson::Unigram(_)),
        f64_scores,
        precompiled: !charsmap.is_empty(),
        charsmap,
        unk_in_text,
        unk_per_char,
        normalizer: unicode,
        collapse_spaces,
        strip_sections,
        strips,
        char_steps,
        pre_split,
        joins_pieces,
    };
    model.validate().map_err(SpImportError::Invalid)?;
    Ok(model)
}

/// What [`normalizer`] reads off the normalizer and pre-tokenizer.
struct Shape {
    /// A Unicode form first ([`SpModel::normalizer`]).
    unicode: Option<UnicodeForm>,
    /// A `Precompiled` character map first (decoded; empty without one).
    charsmap: Vec<u8>,
    add_dummy_prefix: bool,
    remove_extra_whitespaces: bool,
    /// [`SpModel::collapse_spaces`].
    collapse_spaces: bool,
    /// [`SpModel::strip_sections`].
    strip_sections: bool,
    sections: SpSections,
    /// [`SpModel::char_steps`].
    char_steps: CharSteps,
    /// [`SpModel::pre_split`].
    pre_split: Option<picobpe::wordpiece::WordSplit>,
}

/// How the normalizer and pre-tokenizer treat spaces. Two shapes are read:
///
/// - `Prepend("▁")` (optional) + `Replace(" ", "▁")`, no pre-tokenizer (`LlamaConverter`);
/// - a `Metaspace` pre-tokenizer (any `prepend_scheme`, `split` or not), after no normalizer or
///   after `Strip(right)` + `Replace(Regex(" {2,}"), "▁")` (`transformers`' `SpmConverter`, for
///   T5, ALBERT and the like: trailing whitespace dropped, runs of spaces made one, which is
///   the model's `remove_extra_whitespaces` in a `tokenizer.json`).
///
/// - `WhitespaceSplit` + a `Metaspace` that splits (prepend scheme `always` or `never`), after
///   no normalizer or `Replace(Regex(" {2,}"), " ")` (which changes nothing there): the
///   pre-tokenizer of the T5 and ALBERT `tokenizer.json` files published with those models
///   by older `transformers` converters ([`SpSections::WhitespaceWords`]).
///
/// Before any of them, with a `Metaspace` that splits: one Unicode form (alone), or a
/// `Precompiled` character map (`SpmConverter`'s, with or without the two steps). And
/// `Strip(left, right)` first, before a `Metaspace` that splits and an optional `Precompiled`
/// and `Replace(Regex(" {2,}"), " ")` (`DebertaV2Converter`): each piece of text loses its
/// leading and trailing whitespace before the map.
fn normalizer(file: &TokenizerJson) -> Result<Shape, Refused> {
    // `Strip(left, right)` first (`transformers`' DeBERTa-v2/v3 conversion): each section
    // loses its leading and trailing whitespace before the other steps see it.
    let (strip_sections, parts) = match file.normalizer.split_first() {
        Some((first, rest))
            if matches!(
                first.known,
                Some(Normalizer::Strip {
                    strip_left: true,
                    strip_right: true
                })
            ) =>
        {
            (true, rest)
        }
        _ => (false, &file.normalizer[..]),
    };
    let mut steps: Vec<&str> = parts.iter().map(normalizer_step).collect();
    let (unicode, precompiled, char_steps) = match char_chain(&steps) {
        // Character steps, with their form and `Precompiled`, read as one step.
        Some((char_steps, form, with_map, n)) => {
            if char_steps.normalizer(form, with_map).is_none() {
                return Err(bad_steps("normalizer", parts, STEPS_FORM));
            }
            let map = match parts.get(n.wrapping_sub(1)).map(|s| &s.known) {
                Some(Some(Normalizer::Precompiled {
                    precompiled_charsmap,
                })) if with_map => Some(precompiled_map(precompiled_charsmap)?),
                _ => None,
            };
            steps.drain(..n);
            (form, map, char_steps)
        }
        None => {
            // A Unicode form first (`tokenizers`' `SentencePieceBPETokenizer` has `NFKC`), or
            // `Nmt` then `NFKC` (its `SentencePieceUnigramTokenizer`), read as one step.
            let unicode = match steps[..] {
                ["nmt", "NFKC", ..] => {
                    steps.remove(0);
                    Some(UnicodeForm::NmtNfkc)
                }
                [first, ..] => crate::normalizer::parse(first),
                [] => None,
            };
            let precompiled = match parts.first().map(|s| &s.known) {
                Some(Some(Normalizer::Precompiled {
                    precompiled_charsmap,
                })) => Some(precompiled_map(precompiled_charsmap)?),
                _ => None,
            };
            if unicode.is_some() || precompiled.is_some() {
                steps.remove(0);
            }
            (unicode, precompiled, CharSteps::default())
        }
    };
    let shape = |unicode, add_dummy_prefix, remove_extra_whitespaces, sections| Shape {
        unicode,
        charsmap: precompiled.clone().unwrap_or_default(),
        add_dummy_prefix,
        remove_extra_whitespaces,
        collapse_spaces: false,
        strip_sections: false,
        sections,
        char_steps,
        pre_split: None,
    };
    let plain = unicode.is_none() && precompiled.is_none() && !char_steps.any();
    let pre = known(&file.pre_tokenizer);
    let read_pre = matches!(
        pre[..],
        [] | [Some(PreTokenizer::Metaspace(_))]
            | [
                Some(PreTokenizer::WhitespaceSplit),
                Some(PreTokenizer::Metaspace(_))
            ]
    );
    if strip_sections
        && !matches!(
            (&steps[..], &pre[..]),
            (["squeeze"], [Some(PreTokenizer::Metaspace(_))])
        )
    {
        return Err(bad("normalizer", STRIP_BOTH));
    }
    let splits = |p: &Option<&PreTokenizer>| {
        matches!(
            p,
            Some(
                PreTokenizer::WhitespaceSplit
                    | PreTokenizer::Whitespace
                    | PreTokenizer::Punctuation { .. }
                    | PreTokenizer::Digits { .. }
            )
        )
    };
    // No `Metaspace`: steps that remove whitespace, each pre-token a word as it is, and no
    // decoder (`tokenizers`' quick-tour BPE, `Whitespace`).
    if !pre.is_empty() && pre.iter().all(splits) {
        let split = crate::wordpiece::import::word_split(&file.pre_tokenizer)?;
        if split.parts().0 == Spaces::Kept {
            return Err(bad("pre_tokenizer", PRE_TOKENS_SPACES));
        }
        if !file.decoder.is_empty() {
            let raw = file.decoder.iter().map(|s| s.raw.to_string());
            let raw = raw.collect::<Vec<_>>().join(" + ");
            return Err(bad("decoder", format!("{raw}: {PRE_TOKENS_DECODER}")));
        }
        if !steps.is_empty() && steps != ["squeeze"] {
            return Err(bad("normalizer", PRE_SPLIT_STEPS));
        }
        return Ok(Shape {
            pre_split: Some(split),
            ..shape(unicode, false, false, SpSections::PreTokens)
        });
    }
    // Other pre-tokenizer steps before a `Metaspace`: `Whitespace`, `Punctuation`, `Digits`
    // (and `WhitespaceSplit` with them), as the WordPiece family reads them.
    if let Some((Some(PreTokenizer::Metaspace(m)), before)) = pre.split_last() {
        let wsplit_alone = matches!(before, [Some(PreTokenizer::WhitespaceSplit)]);
        if !before.is_empty() && !wsplit_alone && before.iter().all(splits) {
            let steps_part = &file.pre_tokenizer[..before.len()];
            let split = crate::wordpiece::import::word_split(steps_part)?;
            // Runs of spaces made one change nothing when every whitespace character is
            // removed.
            let squeeze_moot = steps == ["squeeze"] && split.parts().0 != Spaces::Kept;
            if !steps.is_empty() && !squeeze_moot {
                return Err(bad("normalizer", PRE_SPLIT_STEPS));
            }
            return match metaspace(m)? {
                (prefix @ true, SpSections::UnmarkedPiecesWords)
                | (prefix @ false, SpSections::FirstPieceWords) => Ok(Shape {
                    pre_split: Some(split),
                    ..shape(unicode, prefix, false, SpSections::WhitespaceWords)
                }),
                _ => Err(bad("pre_tokenizer", PRE_SPLIT_METASPACE)),
            };
        }
    }
    match (&steps[..], &pre[..]) {
        (["prepend", "replace"], []) if plain => {
            Ok(shape(None, true, false, SpSections::EveryPiecePrefixed))
        }
        (["replace"], []) if plain => Ok(shape(None, false, false, SpSections::FirstPiecePrefixed)),
        (
            [] | ["squeeze"],
            [Some(PreTokenizer::WhitespaceSplit), Some(PreTokenizer::Metaspace(m))],
        ) => {
            // Runs of spaces made one (`Replace(Regex(" {2,}"), " ")`) change nothing here:
            // every whitespace character ends a word and is dropped.
            match metaspace(m)? {
                // `always`, or `never` (no `▁` is ever put before a word).
                (prefix @ true, SpSections::UnmarkedPiecesWords)
                | (prefix @ false, SpSections::FirstPieceWords) => {
                    Ok(shape(unicode, prefix, false, SpSections::WhitespaceWords))
                }
                _ => Err(bad("pre_tokenizer", WHITESPACE_METASPACE)),
            }
        }
        (["squeeze"], [Some(PreTokenizer::Metaspace(m))]) => {
            // Runs of spaces made one, nothing stripped (`SentencePieceUnigramTokenizer`).
            let (prefix, sections) = metaspace(m)?;
            if strip_sections && !sections.splits_words() {
                return Err(bad("normalizer", STRIP_BOTH));
            }
            if !plain && !sections.splits_words() {
                return Err(bad("normalizer", SQUEEZE_SPLIT));
            }
            Ok(Shape {
                collapse_spaces: true,
                strip_sections,
                ..shape(unicode, prefix, false, sections)
            })
        }
        (steps @ ([] | ["strip", "collapse"]), [Some(PreTokenizer::Metaspace(m))]) => {
            let collapse = !steps.is_empty();
            let (prefix, sections) = metaspace(m)?;
            if unicode.is_some() && (collapse || !sections.splits_words()) {
                return Err(bad("normalizer", UNICODE_ALONE));
            }
            if precompiled.is_some() && !sections.splits_words() {
                return Err(bad("normalizer", PRECOMPILED_SPLIT));
            }
            if char_steps.any() && (collapse || !sections.splits_words()) {
                return Err(bad("normalizer", STEPS_SPLIT));
            }
            Ok(shape(unicode, prefix, collapse, sections))
        }
        _ if !read_pre => {
            let raw = file.pre_tokenizer.iter().map(|s| s.raw.to_string());
            let raw = raw.collect::<Vec<_>>().join(" + ");
            let what = format!(
                "{raw} is not supported (none, one Metaspace, or WhitespaceSplit, Whitespace, \
                 Punctuation and Digits with or without a Metaspace after them is)"
            );
            Err(bad("pre_tokenizer", what))
        }
        _ if unicode.is_some() => Err(bad("normalizer", UNICODE_ALONE)),
        _ if precompiled.is_some() => Err(bad("normalizer", PRECOMPILED_SPLIT)),
        _ => {
            let odd = parts.iter().find(|s| normalizer_step(s) == "?");
            Err(match odd {
                Some(s) => bad(
                    "normalizer",
                    format!("{} {} is not supported", s.kind(), s.raw),
                ),
                None => bad_steps(
                    "normalizer",
                    &file.normalizer,
                    "not supported in this order or with this pre-tokenizer (read: \
                     Prepend(\"▁\") + Replace(\" \", \"▁\") without one; with a Metaspace, \
                     none or Strip(right) + Replace(Regex(\" {2,}\"), \"▁\"); with \
                     WhitespaceSplit + Metaspace, none or Replace(Regex(\" {2,}\"), \" \"))",
                ),
            })
        }
    }
}

/// Why a `WhitespaceSplit` + `Metaspace` pre-tokenizer is refused.
const WHITESPACE_METASPACE: &str = "WhitespaceSplit + Metaspace is supported with a Metaspace \
                                    that splits, prepend_scheme \"always\" or \"never\"";

/// Why a `Metaspace` after other pre-tokenizer steps is refused.
const PRE_SPLIT_METASPACE: &str = "Whitespace, Punctuation and Digits are supported before a \
                                   Metaspace that splits, prepend_scheme \"always\" or \"never\"";

/// Why pre-tokenizer steps without a `Metaspace` that keep whitespace are refused.
const PRE_TOKENS_SPACES: &str = "without a Metaspace, the steps must remove whitespace \
                                 (Whitespace or WhitespaceSplit among them)";

/// Why a decoder is refused with pre-tokenizer steps and no `Metaspace`.
const PRE_TOKENS_DECODER: &str = "with Whitespace, Punctuation or Digits and no Metaspace, no \
                                  decoder is supported (tokens joined by spaces)";

/// Why normalizer steps before those pre-tokenizer steps are refused.
const PRE_SPLIT_STEPS: &str = "with Whitespace, Punctuation or Digits before the Metaspace, \
                               the normalizer may be one Unicode form, Precompiled or \
                               StripAccents and Lowercase steps, and Replace(Regex(\" {2,}\"), \
                               \" \") with WhitespaceSplit or Whitespace, nothing else";

/// Why `Strip(left, right)` is refused where it is.
const STRIP_BOTH: &str = "Strip(left, right) first is supported before an optional Precompiled \
                          and Replace(Regex(\" {2,}\"), \" \"), with a Metaspace that splits \
                          (transformers' DeBERTa-v2/v3 conversion)";

/// Why `Replace(Regex(" {2,}"), " ")` after a normalizer is refused where it is.
const SQUEEZE_SPLIT: &str = "Replace(Regex(\" {2,}\"), \" \") after a Unicode form or Precompiled \
                             is supported before a Metaspace that splits";

/// Why character steps are refused after the form they follow.
const STEPS_FORM: &str =
    "a Replace(\"``\", \"\\\"\") + Replace(\"''\", \"\\\"\"), StripAccents and \
                          Lowercase Sequence is supported with no Unicode form before it or with \
                          NFD or NFKD followed by StripAccents; Lowercase alone after any form \
                          but Nmt (not yet StripAccents after NFC or NFKC, or a quote pair \
                          before a form other than NFD or NFKD)";

/// Why character steps are refused where they are.
const STEPS_SPLIT: &str = "StripAccents, Lowercase and ALBERT's quote Replaces are supported \
                           before a Metaspace that splits (alone or with \
                           Replace(Regex(\" {2,}\"), \" \")) or WhitespaceSplit + Metaspace";

/// The character steps at the start of a normalizer: ALBERT's and XLNet's quote pairs, then
/// `NFD` or `NFKD`, then `StripAccents` and `Lowercase` in either order, then `Precompiled`:
/// the steps, the form, whether `Precompiled` ends them, and how many steps they are. `None`
/// without a quote pair, `StripAccents` or `Lowercase`.
pub(crate) fn char_chain(steps: &[&str]) -> Option<(CharSteps, Option<UnicodeForm>, bool, usize)> {
    let mut chain = CharSteps::default();
    let mut i = 0;
    if steps.starts_with(&["quote``", "quote''"]) {
        chain.quotes = true;
        i = 2;
    }
    let form = match steps.get(i) {
        Some(&"NFD") => Some(UnicodeForm::Nfd),
        Some(&"NFKD") => Some(UnicodeForm::Nfkd),
        Some(&("NFC" | "NFKC")) => crate::normalizer::parse(steps[i]),
        _ => None,
    };
    if form.is_some() {
        i += 1;
    }
    loop {
        match steps.get(i) {
            Some(&"lowercase") if !chain.lowercase => chain.lowercase = true,
            Some(&"strip-accents") if !chain.strip_accents => {
                chain.strip_accents = true;
                chain.lowercase_first = chain.lowercase;
            }
            _ => break,
        }
        i += 1;
    }
    if !chain.any() {
        return None;
    }
    let precompiled = steps.get(i) == Some(&"precompiled");
    Some((chain, form, precompiled, i + usize::from(precompiled)))
}

/// A `Metaspace`'s prepend scheme as `tokenizers` reads it (an old file's
/// `add_prefix_space: true` is `always`; one that contradicts `prepend_scheme` is an error),
/// refused at `at` unless its replacement is `▁`.
fn prepend_scheme<'m>(m: &'m Metaspace, at: &'static str) -> Result<&'m str, Refused> {
    if m.replacement != "\u{2581}" {
        let what = format!("Metaspace replacement {:?} is not \"▁\"", m.replacement);
        return Err(bad(at, what));
    }
    match (m.prepend_scheme.as_deref(), m.add_prefix_space) {
        (None, None | Some(true)) => Ok("always"),
        (Some(s), None) => Ok(s),
        (Some("never"), Some(false)) => Ok("never"),
        (Some(s @ ("always" | "first")), Some(true)) => Ok(s),
        (s, a) => Err(bad(
            at,
            format!("Metaspace prepend_scheme {s:?} with add_prefix_space {a:?}"),
        )),
    }
}

/// True when the file has no decoder (`tokenizers` then joins the pieces with spaces:
/// [`SpModel::joins_pieces`]); false for the decoder the model's shape decodes by: a
/// `Metaspace` with the pre-tokenizer's prepend scheme after a `Metaspace` pre-tokenizer, or
/// `LlamaConverter`'s `Sequence[Replace("▁", " "), ByteFallback, Fuse, Strip(" ", 1, 0)]`
/// after its `Prepend("▁")` (without the `Strip` when there is no `Prepend`). Any other
/// decoder is refused: the ids would decode to other text. `byte_texts`: some piece that is
/// not a byte piece reads `<0xHH>` (which `ByteFallback` would turn into its byte);
/// `byte_fallback`: the model has byte pieces (which a `Metaspace` decoder leaves as text).
fn decoder_joins(
    file: &TokenizerJson,
    add_dummy_prefix: bool,
    byte_texts: bool,
    byte_fallback: bool,
) -> Result<bool, Refused> {
    let steps = &file.decoder;
    if steps.is_empty() {
        return Ok(true);
    }
    let refuse = |why: &str| {
        let raw = steps.iter().map(|s| s.raw.to_string());
        let raw = raw.collect::<Vec<_>>().join(" + ");
        Err(bad("decoder", format!("{raw}: {why}")))
    };
    let pre = known(&file.pre_tokenizer);
    if let Some(Some(PreTokenizer::Metaspace(m))) = pre.last() {
        let want = prepend_scheme(m, "pre_tokenizer")?;
        let decoder = match &steps[..] {
            [step] if step.kind() == "Metaspace" => {
                serde_json::from_value::<Metaspace>(step.raw.clone()).ok()
            }
            _ => None,
        };
        if byte_fallback {
            return refuse("a Metaspace decoder leaves byte pieces as <0xHH> text: not supported");
        }
        return match decoder {
            Some(d) if prepend_scheme(&d, "decoder")? == want => Ok(false),
            _ => refuse(
                "not supported (after a Metaspace pre-tokenizer: a Metaspace decoder with \
                 its prepend scheme, or none)",
            ),
        };
    }
    let kinds: Vec<&str> = steps.iter().map(|s| s.kind()).collect();
    let field = |i: usize, name: &str| steps.get(i).and_then(|s| s.raw.get(name)).cloned();
    let replace = field(0, "pattern") == Some(serde_json::json!({"String": "\u{2581}"}))
        && field(0, "content") == Some(serde_json::json!(" "));
    let strip = field(3, "content") == Some(serde_json::json!(" "))
        && field(3, "start") == Some(serde_json::json!(1))
        && field(3, "stop") == Some(serde_json::json!(0));
    let shape = match kinds[..] {
        ["Replace", "ByteFallback", "Fuse", "Strip"] => add_dummy_prefix && strip,
        ["Replace", "ByteFallback", "Fuse"] => !add_dummy_prefix,
        _ => false,
    };
    if !(replace && shape) {
        return refuse(
            "not supported (after Prepend(\"▁\") + Replace(\" \", \"▁\"): \
             Sequence[Replace(\"▁\", \" \"), ByteFallback, Fuse, Strip(\" \", 1, 0)], without \
             the Strip after Replace alone; or none)",
        );
    }
    if byte_texts {
        return refuse("ByteFallback would turn a piece that is not a byte piece into a byte");
    }
    Ok(false)
}

/// Why a `Precompiled` normalizer is refused where it is.
const PRECOMPILED_SPLIT: &str = "Precompiled is supported first, before a Metaspace that splits \
                                 (alone, or with Strip(right) + Replace(Regex(\" {2,}\"), \"▁\")) \
                                 or before WhitespaceSplit + Metaspace";

/// A `Precompiled` normalizer's character map, decoded from base64 (checked with the model).
fn precompiled_map(b64: &str) -> Result<Vec<u8>, Refused> {
    use base64::Engine as _;
    let map = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .map_err(|e| {
            bad(
                "normalizer",
                format!("Precompiled precompiled_charsmap: {e}"),
            )
        })?;
    if map.is_empty() {
        return Err(bad(
            "normalizer",
            "Precompiled with an empty precompiled_charsmap",
        ));
    }
    Ok(map)
}

/// Why a Unicode normalizer is refused where it is.
const UNICODE_ALONE: &str = "NFC, NFD, NFKC or NFKD (or Nmt + NFKC) is supported first, before a \
                             Metaspace that splits (alone or with Replace(Regex(\" {2,}\"), \" \")) \
                             or WhitespaceSplit + Metaspace (not yet with other steps or \
                             pre-tokenizers)";

/// What one normalizer step is, for [`normalizer`]'s shapes (`"?"`: none of them).
pub(crate) fn normalizer_step(step: &Part<Normalizer>) -> &'static str {
    match &step.known {
        Some(Normalizer::Prepend { prepend }) if prepend == "\u{2581}" => "prepend",
        Some(Normalizer::Replace {
            pattern: Pattern::String(s),
            content,
        }) if s == " " && content == "\u{2581}" => "replace",
        Some(Normalizer::Replace {
            pattern: Pattern::Regex(r),
            content,
        }) if r == " {2,}" && content == "\u{2581}" => "collapse",
        Some(Normalizer::Replace {
            pattern: Pattern::Regex(r),
            content,
        }) if r == " {2,}" && content == " " => "squeeze",
        Some(Normalizer::Strip {
            strip_left: false,
            strip_right: true,
        }) => "strip",
        Some(Normalizer::Nfc) => "NFC",
        Some(Normalizer::Nfd) => "NFD",
        Some(Normalizer::Nfkc) => "NFKC",
        Some(Normalizer::Nfkd) => "NFKD",
        Some(Normalizer::Nmt) => "nmt",
        Some(Normalizer::Lowercase) => "lowercase",
        Some(Normalizer::StripAccents) => "strip-accents",
        Some(Normalizer::Replace {
            pattern: Pattern::String(s),
            content,
        }) if s == "``" && content == "\"" => "quote``",
        Some(Normalizer::Replace {
            pattern: Pattern::String(s),
            content,
        }) if s == "''" && content == "\"" => "quote''",
        Some(Normalizer::Precompiled { .. }) => "precompiled",
        _ => "?",
    }
}

/// A `Metaspace` pre-tokenizer as `(add_dummy_prefix, sections)`.
fn metaspace(m: &Metaspace) -> Result<(bool, SpSections), Refused> {
    let scheme = prepend_scheme(m, "pre_tokenizer")?;
    let bad = |what: String| bad("pre_tokenizer", what);
    let split = m.split.unwrap_or(true);
    match (scheme, split) {
        ("always", false) => Ok((true, SpSections::UnmarkedPiecesPrefixed)),
        ("always", true) => Ok((true, SpSections::UnmarkedPiecesWords)),
        ("first", false) => Ok((true, SpSections::FirstPiecePrefixed)),
        ("first", true) => Ok((true, SpSections::FirstPieceWords)),
        ("never", false) => Ok((false, SpSections::FirstPiecePrefixed)),
        ("never", true) => Ok((false, SpSections::FirstPieceWords)),
        (s, _) => Err(bad(format!(
            "Metaspace prepend_scheme {s:?} is not supported"
        ))),
    }
}
