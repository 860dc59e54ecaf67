//! `host-trainer inspect`: what a model holds and how big its tables are.

use std::path::PathBuf;

use clap::Args;
use picobpe_model::sentencepiece::SpKind;
use picobpe_model::{AnyModel, Model, PieceTable, SpModel, SpTableData, TableData};

use crate::cli_import::describe;
use crate::input;

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
    match &any {
        AnyModel::BytePair(model) => inspect_byte_level(path, model)?,
        AnyModel::SentencePiece(model) => inspect_sentencepiece(path, model)?,
        AnyModel::WordPiece(model) => inspect_wordpiece(path, model)?,
    }
    if !template.is_empty() {
        println!("with --add-special-tokens: {}", describe(&any, &template));
    }
    Ok(())
}

/// `inspect` of a byte-level BPE model.
fn inspect_byte_level(path: &std::path::Path, model: &Model) -> Result<(), String> {
    let ordinary = model.n_ordinary();
    let unused = model.n_ids() - ordinary - model.specials.len();
    println!("model:        {}", path.display());
    println!("pattern:      {}", model.pattern);
    if let Some(form) = model.normalizer {
        let (major, minor, patch) = picobpe::normalizer::UNICODE_VERSION;
        println!(
            "normalizer:   {} (Unicode {major}.{minor}.{patch}, between special tokens)",
            picobpe_model::normalizer::name(form),
        );
    }
    println!(
        "semantics:    {}",
        if model.whole_piece {
            "whole-piece (tiktoken: a piece equal to a token is that token)"
        } else {
            "pair (merges applied by rank; no whole-piece rule)"
        }
    );
    println!(
        "ids:          {} ({ordinary} ordinary, {} special, {unused} unused)",
        model.n_ids(),
        model.specials.len()
    );
    println!("merges:       {}", model.merges.len());
    let mut specials = model.specials.clone();
    specials.sort_by_key(|s| s.1);
    for (text, id) in &specials {
        println!("special:      {id} {text:?}");
    }
    for (name, choice) in [("full", PieceTable::Full), ("minimal", PieceTable::Minimal)] {
        let data = TableData::for_bake(model, choice).map_err(|e| e.to_string())?;
        if choice == PieceTable::Full {
            println!(
                "rank order:   {}",
                if data.ranks.is_empty() {
                    "merged ids increase with rank (no rank table)"
                } else {
                    "not monotone in ids (rank table stored)"
                }
            );
        }
        let keys = data.piece_keys.len() * 8;
        println!(
            "table bytes (32-bit target), {name} piece table, as baked by default:\n{}",
            data.without_piece_keys().sizes()
        );
        if keys > 0 {
            println!(
                "  + piece keys       {keys} B  (Bake::piece_keys; host-built tables have them)"
            );
        }
    }
    Ok(())
}

/// `inspect` of a SentencePiece model.
fn inspect_sentencepiece(path: &std::path::Path, model: &SpModel) -> Result<(), String> {
    let count = |kind| model.pieces.iter().filter(|p| p.kind == kind).count();
    println!("model:        {}", path.display());
    if model.unigram {
        println!(
            "kind:         SentencePiece Unigram (unknown score {})",
            model.unk_score().unwrap_or(f64::NAN)
        );
    } else {
        println!("kind:         SentencePiece BPE");
    }
    println!(
        "ids:          {} ({} normal, {} byte, {} control, {} user-defined, 1 unknown)",
        model.n_ids(),
        count(SpKind::Normal),
        count(SpKind::Byte),
        count(SpKind::Control),
        count(SpKind::UserDefined)
    );
    println!(
        "normalizer:   add_dummy_prefix {}, remove_extra_whitespaces {}, sections {:?}",
        model.add_dummy_prefix, model.remove_extra_whitespaces, model.sections
    );
    if model.collapse_spaces {
        println!(
            "spaces:       runs of spaces become one, none stripped (Replace(\" {{2,}}\", \" \"))"
        );
    }
    if let Some(form) = model.normalizer {
        let (major, minor, patch) = picobpe::normalizer::UNICODE_VERSION;
        println!(
            "unicode:      {} (Unicode {major}.{minor}.{patch}, between user-defined symbols)",
            picobpe_model::normalizer::name(form),
        );
    }
    if model.unk_in_text || model.unk_per_char {
        println!(
            "unknown:      matched in the text {}, one per unknown character {}",
            model.unk_in_text, model.unk_per_char
        );
    }
    if !model.charsmap.is_empty() {
        let map = picobpe_model::sentencepiece::charsmap::parse(&model.charsmap)
            .map_err(|e| e.to_string())?;
        let compact = picobpe_model::sentencepiece::charsmap::compact(&map.pairs);
        println!(
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
    println!(
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
            println!("symbol:       {id} {:?} ({:?})", p.piece, p.kind);
        }
    }
    let data = SpTableData::new(model)
        .and_then(SpTableData::with_compact_charsmap)
        .map_err(|e| e.to_string())?;
    println!(
        "words:        {}",
        if data.split_words {
            "encoded one at a time (no piece crosses a word start)"
        } else {
            "the whole text is one word"
        }
    );
    let keys = 8 * data.piece_keys.len();
    println!(
        "table bytes (32-bit target), as baked by default:\n{}",
        data.without_piece_keys().sizes()
    );
    println!("  + piece keys       {keys} B  (Bake::piece_keys; host-built tables have them)");
    Ok(())
}

/// `inspect` of a WordPiece model.
fn inspect_wordpiece(path: &std::path::Path, model: &picobpe_model::WpModel) -> Result<(), String> {
    let data = picobpe_model::WpTableData::new(model).map_err(|e| e.to_string())?;
    let continued = model
        .vocab
        .iter()
        .filter(|v| v.len() > model.prefix.len() && v.starts_with(&model.prefix))
        .count();
    println!("model:        {}", path.display());
    println!("kind:         WordPiece");
    println!(
        "ids:          {} ({continued} continuation pieces, {} added tokens)",
        model.n_ids(),
        model.specials.len()
    );
    println!(
        "unknown:      {} {:?}; words over {} characters are unknown",
        model.unk_id, model.vocab[model.unk_id as usize], model.max_chars_per_word
    );
    println!(
        "normalizer:   clean_text {}, handle_chinese_chars {}, strip_accents {}, lowercase {}",
        model.clean_text, model.handle_chinese_chars, model.strip_accents, model.lowercase
    );
    for (text, id) in &model.specials {
        println!("special:      {id} {text:?}");
    }
    println!("tables as baked for a 32-bit target:\n{}", data.sizes());
    Ok(())
}
