//! `host-trainer inspect`: what a model holds and how big its tables are.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;

use clap::Args;
use picobpe_model::sentencepiece::SpKind;
use picobpe_model::{AnyModel, Model, PieceTable, SpModel, SpTableData, TableData};

use crate::cli_import::describe;
use crate::input;

/// `println!` into the report (writing to a `String` cannot fail).
macro_rules! say {
    ($out:expr, $($arg:tt)*) => {
        let _ = writeln!($out, $($arg)*);
    };
}

/// Arguments of `inspect`.
#[derive(Args)]
pub struct InspectArgs {
    /// The model file.
    #[arg(long, value_name = "FILE")]
    model: PathBuf,
}

/// Run `inspect`.
pub fn run(args: InspectArgs) -> Result<(), String> {
    let path = &args.model;
    let (any, template) = AnyModel::read_with_template(path).map_err(input::model_error(path))?;
    let out = &mut String::new();
    match &any {
        AnyModel::BytePair(model) => inspect_byte_level(out, path, model)?,
        AnyModel::SentencePiece(model) => inspect_sentencepiece(out, path, model)?,
        AnyModel::WordPiece(model) => inspect_wordpiece(out, path, model)?,
    }
    if !template.is_empty() {
        say!(
            out,
            "with --add-special-tokens: {}",
            describe(&any, &template)
        );
    }
    // A reader that stops early (`inspect | head`) is not an error.
    match std::io::stdout().lock().write_all(out.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(format!("writing stdout: {e}")),
        _ => Ok(()),
    }
}

/// `inspect` of a byte-level BPE model.
fn inspect_byte_level(
    out: &mut String,
    path: &std::path::Path,
    model: &Model,
) -> Result<(), String> {
    let ordinary = model.n_ordinary();
    let unused = model.n_ids() - ordinary - model.specials.len();
    say!(out, "model:        {}", path.display());
    if model.splits.is_empty() {
        say!(out, "pattern:      {}", model.pattern);
    } else {
        // Compiled `Split`s take the place of the hand-rolled pattern.
        for (i, split) in model.splits.iter().enumerate() {
            let words = picobpe_model::compile_split(split).map_err(|e| e.to_string())?;
            let rule = match split.rule {
                picobpe::pretok::SplitRule::ISOLATED => String::new(),
                r => format!(
                    ", {:?}{}",
                    r.behavior,
                    if r.invert { ", inverted" } else { "" }
                ),
            };
            say!(
                out,
                "split {}:      {:?} (compiled: {} bytes{rule})",
                i + 1,
                split.regex,
                words.len() * 4
            );
        }
    }
    if let Some(form) = model.normalizer {
        let (major, minor, patch) = picobpe::normalizer::UNICODE_VERSION;
        say!(
            out,
            "normalizer:   {} (Unicode {major}.{minor}.{patch}, {})",
            picobpe_model::normalizer::name(form),
            match model.steps.specials_normalized {
                true => "then special tokens are found",
                false => "between special tokens",
            }
        );
    }
    let steps = model.steps;
    if steps.fold() || steps.specials_normalized {
        let named = [
            (steps.lowercase, "Lowercase"),
            (steps.collapse_whitespace, "whitespace runs made one space"),
            (
                steps.specials_normalized,
                "special tokens found in the normalized text",
            ),
        ];
        let named: Vec<&str> = named.iter().filter(|n| n.0).map(|n| n.1).collect();
        say!(out, "steps:        {}", named.join(", "));
    }
    if !model.end_of_word_suffix.is_empty() {
        say!(
            out,
            "word suffix:  {:?} on the last byte of each piece (end_of_word_suffix)",
            String::from_utf8_lossy(&model.end_of_word_suffix)
        );
    }
    if model.prefix_space {
        say!(
            out,
            "prefix space: a space before each text between special tokens (add_prefix_space)"
        );
    }
    say!(
        out,
        "semantics:    {}",
        if model.whole_piece {
            "whole-piece (tiktoken: a piece equal to a token is that token)"
        } else {
            "pair (merges applied by rank; no whole-piece rule)"
        }
    );
    say!(
        out,
        "ids:          {} ({ordinary} ordinary, {} special, {unused} unused)",
        model.n_ids(),
        model.specials.len()
    );
    say!(out, "merges:       {}", model.merges.len());
    let mut specials = model.specials.clone();
    specials.sort_by_key(|s| s.1);
    for (text, id) in &specials {
        say!(
            out,
            "special:      {id} {text:?}{}",
            strip_note(&model.strips, *id)
        );
    }
    for (name, choice) in [("full", PieceTable::Full), ("minimal", PieceTable::Minimal)] {
        let data = TableData::for_bake(model, choice).map_err(|e| e.to_string())?;
        if choice == PieceTable::Full {
            say!(
                out,
                "rank order:   {}",
                if data.ranks.is_empty() {
                    "merged ids increase with rank (no rank table)"
                } else {
                    "not monotone in ids (rank table stored)"
                }
            );
        }
        let keys = data.piece_keys.len() * 8;
        say!(
            out,
            "table bytes (32-bit target), {name} piece table, as baked by default:\n{}",
            data.without_piece_keys().sizes()
        );
        if keys > 0 {
            say!(
                out,
                "  + piece keys       {keys} B  (Bake::piece_keys; host-built tables have them)"
            );
        }
    }
    Ok(())
}

/// `inspect` of a SentencePiece model.
fn inspect_sentencepiece(
    out: &mut String,
    path: &std::path::Path,
    model: &SpModel,
) -> Result<(), String> {
    let count = |kind| model.pieces.iter().filter(|p| p.kind == kind).count();
    say!(out, "model:        {}", path.display());
    if model.unigram {
        say!(
            out,
            "kind:         SentencePiece Unigram (unknown score {})",
            model.unk_score().unwrap_or(f64::NAN)
        );
    } else {
        say!(out, "kind:         SentencePiece BPE");
    }
    say!(
        out,
        "ids:          {} ({} normal, {} byte, {} control, {} user-defined, 1 unknown)",
        model.n_ids(),
        count(SpKind::Normal),
        count(SpKind::Byte),
        count(SpKind::Control),
        count(SpKind::UserDefined)
    );
    say!(
        out,
        "normalizer:   add_dummy_prefix {}, remove_extra_whitespaces {}, sections {:?}",
        model.add_dummy_prefix,
        model.remove_extra_whitespaces,
        model.sections
    );
    if model.collapse_spaces {
        say!(
            out,
            "spaces:       runs of spaces become one, none stripped (Replace(\" {{2,}}\", \" \"))"
        );
    }
    if let Some(form) = model.normalizer {
        let (major, minor, patch) = picobpe::normalizer::UNICODE_VERSION;
        say!(
            out,
            "unicode:      {} (Unicode {major}.{minor}.{patch}, between user-defined symbols)",
            picobpe_model::normalizer::name(form),
        );
    }
    if model.char_steps.any() {
        let steps = model
            .char_steps
            .describe(model.normalizer, model.precompiled);
        say!(out, "steps:        {steps}");
    }
    if let Some(split) = model.pre_split {
        let (spaces, punctuation, digits) = split.parts();
        say!(
            out,
            "pretokenizer: whitespace {spaces:?}, punctuation {punctuation:?}, digits {digits:?}"
        );
    }
    if model.joins_pieces {
        say!(
            out,
            "decoder:      none (ids decode as their pieces joined by spaces, as tokenizers does)"
        );
    }
    if model.unk_in_text || model.unk_per_char {
        say!(
            out,
            "unknown:      matched in the text {}, one per unknown character {}",
            model.unk_in_text,
            model.unk_per_char
        );
    }
    if !model.charsmap.is_empty() {
        let map = picobpe_model::sentencepiece::charsmap::parse(&model.charsmap)
            .map_err(|e| e.to_string())?;
        let compact = picobpe_model::sentencepiece::charsmap::compact(&map.pairs);
        say!(
            out,
            "character map: {map}; baked {}; applied {}",
            match compact {
                Some(c) => format!("in its compact form ({} B)", c.bytes()),
                None => "as the double array".to_owned(),
            },
            if model.precompiled {
                "as tokenizers' Precompiled (a grapheme cluster at a time, between user-defined \
                 symbols)"
            } else {
                "as sentencepiece does (longest key)"
            }
        );
    }
    say!(
        out,
        "byte fallback: {}",
        if model.byte_fallback {
            "on"
        } else {
            "off (<unk>)"
        }
    );
    for (id, p) in model.pieces.iter().enumerate() {
        if matches!(
            p.kind,
            SpKind::Control | SpKind::Unknown | SpKind::UserDefined
        ) {
            say!(out, "symbol:       {id} {:?} ({:?})", p.piece, p.kind);
        }
    }
    let data = SpTableData::new(model)
        .and_then(SpTableData::with_compact_charsmap)
        .map_err(|e| e.to_string())?;
    say!(
        out,
        "words:        {}",
        if data.split_words {
            "encoded one at a time (no piece crosses a word start)"
        } else {
            "the whole text is one word"
        }
    );
    let keys = 8 * data.piece_keys.len();
    say!(
        out,
        "table bytes (32-bit target), as baked by default:\n{}",
        data.without_piece_keys().sizes()
    );
    say!(
        out,
        "  + piece keys       {keys} B  (Bake::piece_keys; host-built tables have them)"
    );
    Ok(())
}

/// `inspect` of a WordPiece model.
fn inspect_wordpiece(
    out: &mut String,
    path: &std::path::Path,
    model: &picobpe_model::WpModel,
) -> Result<(), String> {
    let data = picobpe_model::WpTableData::new(model).map_err(|e| e.to_string())?;
    let continued = model
        .vocab
        .iter()
        .filter(|v| v.len() > model.prefix.len() && v.starts_with(&model.prefix))
        .count();
    say!(out, "model:        {}", path.display());
    say!(out, "kind:         WordPiece");
    say!(
        out,
        "ids:          {} ({continued} continuation pieces, {} added tokens)",
        model.n_ids(),
        model.specials.len()
    );
    say!(
        out,
        "unknown:      {} {:?}; words over {} characters are unknown",
        model.unk_id,
        model.vocab[model.unk_id as usize],
        model.max_chars_per_word
    );
    say!(
        out,
        "normalizer:   clean_text {}, handle_chinese_chars {}, strip_accents {}, lowercase {}",
        model.clean_text,
        model.handle_chinese_chars,
        model.strip_accents,
        model.lowercase
    );
    if model.normalizer.is_some() || model.char_steps.any() {
        say!(
            out,
            "steps:        {} (in place of BertNormalizer, between added tokens)",
            model.char_steps.describe(model.normalizer, false)
        );
    }
    let (spaces, punctuation, digits) = model.split.parts();
    say!(
        out,
        "pretokenizer: {}",
        if model.split.is_bert() {
            "BertPreTokenizer".to_owned()
        } else {
            format!("whitespace {spaces:?}, punctuation {punctuation:?}, digits {digits:?}")
        }
    );
    for (text, id) in &model.specials {
        say!(
            out,
            "special:      {id} {text:?}{}",
            strip_note(&model.strips, *id)
        );
    }
    say!(
        out,
        "tables as baked for a 32-bit target:\n{}",
        data.sizes()
    );
    Ok(())
}

/// `" (takes the whitespace before it)"` and the like for a special with strip bits (see
/// `picobpe_model::Model::strips`), else nothing.
fn strip_note(strips: &[(u32, u8)], id: u32) -> &'static str {
    use picobpe::special::{LSTRIP, RSTRIP};
    match picobpe_model::strip_bits(strips, id) {
        b if b == LSTRIP | RSTRIP => " (takes the whitespace around it: lstrip, rstrip)",
        LSTRIP => " (takes the whitespace before it: lstrip)",
        RSTRIP => " (takes the whitespace after it: rstrip)",
        _ => "",
    }
}
