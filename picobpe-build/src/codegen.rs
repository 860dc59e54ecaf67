//! Rust source for a [`TableData`]: flat `static` arrays, including the PtrHash indexes that
//! `picobpe-model` already computed (so baked and host-built tables are laid out identically).

use core::fmt::{self, Write};
use std::path::Path;

use picobpe_model::{
    IndexData, NormalizerKind, SpAlgorithm, SpTableData, TableData, TextNormalizer, WpTableData,
};

/// Generate the source for `data`. `model_name` goes into the header comment; the source
/// `include_bytes!`s `token_bytes` (an absolute path), which must hold `data.token_bytes`.
pub fn generate(data: &TableData, model_name: &str, token_bytes: &Path) -> String {
    let mut s = String::with_capacity(16 * data.token_offsets.len() + 32 * data.pairs.len());
    header(
        &mut s,
        model_name,
        &data.sizes().to_string(),
        data.token_bytes.len(),
        token_bytes,
    );
    array(&mut s, "PICOBPE_TOKEN_OFFSETS", "u32", &data.token_offsets);
    array(&mut s, "PICOBPE_BYTE_IDS", "u32", &data.byte_ids);
    array(&mut s, "PICOBPE_WORD_END_IDS", "u32", &data.word_end_ids);
    array(&mut s, "PICOBPE_EMPTY_IDS", "u32", &data.empty_ids);
    array(&mut s, "PICOBPE_RANKS", "u32", &data.ranks);

    array(&mut s, "PICOBPE_PAIR_ENTRIES", "u64", &data.pairs);
    index_arrays(&mut s, "PICOBPE_PAIR", &data.pair_index);
    array(&mut s, "PICOBPE_PIECE_IDS", "u32", &data.pieces);
    array(&mut s, "PICOBPE_PIECE_KEYS", "u64", &data.piece_keys);
    index_arrays(&mut s, "PICOBPE_PIECE", &data.piece_index);

    specials(&mut s, &data.specials, &data.strips);
    splits(&mut s, &data.splits);

    let pair_index = index_expr("PICOBPE_PAIR", &data.pair_index, data.pairs.len());
    let piece_index = index_expr("PICOBPE_PIECE", &data.piece_index, data.pieces.len());
    // The variant's name (a unit variant's `Debug` is its name).
    let pattern = format!("{:?}", data.pattern);
    let normalizer = text_normalizer_expr(data.steps.text_normalizer(data.normalizer));
    let prefix_space = data.prefix_space;
    let specials_normalized = data.steps.specials_normalized;
    let _ = writeln!(
        s,
        "\n/// The baked tables of `{model_name}`.\n\
         pub static TABLES: ::picobpe::Tables<'static> = ::picobpe::Tables {{\n    \
         pattern: ::picobpe::Pattern::{pattern},\n    \
         normalizer: {normalizer},\n    \
         prefix_space: {prefix_space},\n    \
         specials_normalized: {specials_normalized},\n    \
         token_bytes: &PICOBPE_TOKEN_BYTES,\n    \
         token_offsets: &PICOBPE_TOKEN_OFFSETS,\n    \
         byte_ids: &PICOBPE_BYTE_IDS,\n    \
         word_end_ids: &PICOBPE_WORD_END_IDS,\n    \
         empty_ids: &PICOBPE_EMPTY_IDS,\n    \
         pairs: ::picobpe::PairMap {{\n        \
         index: {pair_index},\n        \
         entries: &PICOBPE_PAIR_ENTRIES,\n    \
         }},\n    \
         ranks: &PICOBPE_RANKS,\n    \
         pieces: ::picobpe::PieceMap {{ index: {piece_index}, ids: &PICOBPE_PIECE_IDS, keys: &PICOBPE_PIECE_KEYS }},\n    \
         specials: &PICOBPE_SPECIALS,\n    \
         splits: &PICOBPE_SPLITS,\n    \
         byte_pairs: &[],\n    \
         trie: ::picobpe::TokenTrie::EMPTY,\n\
         }};"
    );
    s
}

/// Generate the source for the SentencePiece tables `data`: `pub static TABLES:
/// ::picobpe::SpTables<'static>`. Arguments as in [`generate`].
pub fn generate_sp(data: &SpTableData, model_name: &str, token_bytes: &Path) -> String {
    let mut s = String::with_capacity(24 * data.token_offsets.len());
    header(
        &mut s,
        model_name,
        &data.sizes().to_string(),
        data.token_bytes.len(),
        token_bytes,
    );
    array(&mut s, "PICOBPE_TOKEN_OFFSETS", "u32", &data.token_offsets);
    array(&mut s, "PICOBPE_KINDS", "u8", &data.kinds);
    array(&mut s, "PICOBPE_PRIORITIES", "u32", &data.priorities);
    array(&mut s, "PICOBPE_PIECE_IDS", "u32", &data.pieces);
    array(&mut s, "PICOBPE_PIECE_KEYS", "u64", &data.piece_keys);
    index_arrays(&mut s, "PICOBPE_PIECE", &data.piece_index);
    array(&mut s, "PICOBPE_BYTE_IDS", "u32", &data.byte_ids);
    array(&mut s, "PICOBPE_UNK_SURFACE", "u8", &data.unk_surface);
    array(&mut s, "PICOBPE_USER_DEFINED", "u32", &data.user_defined);
    array(&mut s, "PICOBPE_USER_STRIPS", "u8", &data.user_strips);
    array(&mut s, "PICOBPE_PIECE_FILTER", "u64", &data.piece_filter);
    array(&mut s, "PICOBPE_F64_SCORES", "u64", &data.f64_scores);
    array(
        &mut s,
        "PICOBPE_CHARSMAP_UNITS",
        "u32",
        &data.charsmap_units,
    );
    array(
        &mut s,
        "PICOBPE_CHARSMAP_STRINGS",
        "u8",
        &data.charsmap_strings,
    );
    for (name, values) in [
        ("PICOBPE_CHARSMAP_RUNS", &data.charsmap_runs),
        ("PICOBPE_CHARSMAP_RUN_VALUES", &data.charsmap_run_values),
        ("PICOBPE_CHARSMAP_SEQUENCES", &data.charsmap_sequences),
        (
            "PICOBPE_CHARSMAP_SEQUENCE_VALUES",
            &data.charsmap_sequence_values,
        ),
        ("PICOBPE_CHARSMAP_TAILS", &data.charsmap_tails),
    ] {
        array(&mut s, name, "u32", values);
    }
    array(
        &mut s,
        "PICOBPE_CHARSMAP_ASCII_PAIRS",
        "u64",
        &data.charsmap_ascii_pairs,
    );
    array(
        &mut s,
        "PICOBPE_CHARSMAP_BMP_INDEX",
        "u8",
        &data.charsmap_bmp_index,
    );
    array(
        &mut s,
        "PICOBPE_CHARSMAP_BMP_BLOCKS",
        "u64",
        &data.charsmap_bmp_blocks,
    );
    let piece_index = index_expr("PICOBPE_PIECE", &data.piece_index, data.pieces.len());
    let sections = format!("{:?}", data.sections);
    let pre_split = match data.pre_split {
        Some(split) => format!(
            "Some(::picobpe::sentencepiece::PreSplit::new({}))",
            word_split_expr(split)
        ),
        None => "None".to_owned(),
    };
    let sp_normalizer = text_normalizer_expr(data.text_normalizer());
    let algorithm = match data.algorithm {
        SpAlgorithm::Bpe => "Bpe".to_owned(),
        SpAlgorithm::Unigram {
            unk_score,
            max_piece_bytes,
            tokenizers,
        } => format!(
            "Unigram {{ unk_score: f64::from_bits({:#x}), max_piece_bytes: {max_piece_bytes}, \
             tokenizers: {tokenizers} }}",
            unk_score.to_bits()
        ),
    };
    let _ = writeln!(
        s,
        "\n/// The baked SentencePiece tables of `{model_name}`.\n\
         pub static TABLES: ::picobpe::SpTables<'static> = ::picobpe::SpTables {{\n    \
         token_bytes: &PICOBPE_TOKEN_BYTES,\n    \
         token_offsets: &PICOBPE_TOKEN_OFFSETS,\n    \
         kinds: &PICOBPE_KINDS,\n    \
         priorities: &PICOBPE_PRIORITIES,\n    \
         pieces: ::picobpe::PieceMap {{ index: {piece_index}, ids: &PICOBPE_PIECE_IDS, keys: &PICOBPE_PIECE_KEYS }},\n    \
         byte_ids: &PICOBPE_BYTE_IDS,\n    \
         unk_id: {},\n    \
         unk_surface: &PICOBPE_UNK_SURFACE,\n    \
         unk_per_char: {},\n    \
         user_defined: &PICOBPE_USER_DEFINED,\n    \
         user_strips: &PICOBPE_USER_STRIPS,\n    \
         add_dummy_prefix: {},\n    \
         remove_extra_whitespaces: {},\n    \
         collapse_spaces: {},\n    \
         strip_sections: {},\n    \
         sections: ::picobpe::sentencepiece::Sections::{sections},\n    \
         pre_split: {pre_split},\n    \
         joins_pieces: {},\n    \
         split_words: {},\n    \
         cut_bytes: [{:#x}, {:#x}],\n    \
         algorithm: ::picobpe::sentencepiece::SpAlgorithm::{algorithm},\n    \
         piece_filter: &PICOBPE_PIECE_FILTER,\n    \
         f64_scores: &PICOBPE_F64_SCORES,\n    \
         charsmap: ::picobpe::sentencepiece::CharsMap {{ units: &PICOBPE_CHARSMAP_UNITS, \
         strings: &PICOBPE_CHARSMAP_STRINGS, runs: &PICOBPE_CHARSMAP_RUNS, \
         run_values: &PICOBPE_CHARSMAP_RUN_VALUES, sequences: &PICOBPE_CHARSMAP_SEQUENCES, \
         sequence_values: &PICOBPE_CHARSMAP_SEQUENCE_VALUES, tails: &PICOBPE_CHARSMAP_TAILS, \
         ascii: [{:#x}, {:#x}], lead: [{:#x}, {:#x}, {:#x}, {:#x}], ascii_pairs: &PICOBPE_CHARSMAP_ASCII_PAIRS, \
         bmp_index: &PICOBPE_CHARSMAP_BMP_INDEX, bmp_blocks: &PICOBPE_CHARSMAP_BMP_BLOCKS, hangul: {}, \
         max_key: {} }},\n    \
         normalizer: {sp_normalizer},\n\
         }};",
        data.unk_id,
        data.unk_per_char,
        data.add_dummy_prefix,
        data.remove_extra_whitespaces,
        data.collapse_spaces,
        data.strip_sections,
        data.joins_pieces,
        data.split_words,
        data.cut_bytes[0],
        data.cut_bytes[1],
        data.charsmap_ascii[0],
        data.charsmap_ascii[1],
        data.charsmap_lead[0],
        data.charsmap_lead[1],
        data.charsmap_lead[2],
        data.charsmap_lead[3],
        data.charsmap_hangul,
        data.charsmap_lookahead
    );
    s
}

/// The Rust source of baked WordPiece tables: `static TABLES: picobpe::WpTables<'static>`.
pub fn generate_wp(data: &WpTableData, model_name: &str, token_bytes: &Path) -> String {
    let mut s = String::with_capacity(24 * data.token_offsets.len());
    header(
        &mut s,
        model_name,
        &data.sizes().to_string(),
        data.token_bytes.len(),
        token_bytes,
    );
    array(&mut s, "PICOBPE_TOKEN_OFFSETS", "u32", &data.token_offsets);
    array(&mut s, "PICOBPE_START_IDS", "u32", &data.starts);
    index_arrays(&mut s, "PICOBPE_START", &data.start_index);
    array(
        &mut s,
        "PICOBPE_CONTINUATION_IDS",
        "u32",
        &data.continuations,
    );
    index_arrays(&mut s, "PICOBPE_CONTINUATION", &data.continuation_index);
    array(&mut s, "PICOBPE_PREFIX", "u8", &data.prefix);
    specials(&mut s, &data.specials, &data.strips);
    let starts = index_expr("PICOBPE_START", &data.start_index, data.starts.len());
    let continuations = index_expr(
        "PICOBPE_CONTINUATION",
        &data.continuation_index,
        data.continuations.len(),
    );
    let [clean_text, handle_chinese_chars, strip_accents, lowercase, cleanup] = data.flags;
    let normalizer = text_normalizer_expr(data.text_normalizer());
    let split = word_split_expr(data.split);
    let _ = writeln!(
        s,
        "\n/// The baked WordPiece tables of `{model_name}`.\n\
         pub static TABLES: ::picobpe::WpTables<'static> = ::picobpe::WpTables {{\n    \
         token_bytes: &PICOBPE_TOKEN_BYTES,\n    \
         token_offsets: &PICOBPE_TOKEN_OFFSETS,\n    \
         starts: ::picobpe::PieceMap {{ index: {starts}, ids: &PICOBPE_START_IDS, keys: &[] }},\n    \
         continuations: ::picobpe::PieceMap {{ index: {continuations}, ids: &PICOBPE_CONTINUATION_IDS, keys: &[] }},\n    \
         longest: {},\n    \
         prefix: &PICOBPE_PREFIX,\n    \
         unk_id: {},\n    \
         max_chars_per_word: {},\n    \
         clean_text: {clean_text},\n    \
         handle_chinese_chars: {handle_chinese_chars},\n    \
         strip_accents: {strip_accents},\n    \
         lowercase: {lowercase},\n    \
         cleanup: {cleanup},\n    \
         specials: &PICOBPE_SPECIALS,\n    \
         normalizer: {normalizer},\n    \
         split: {split},\n\
         }};",
        data.longest, data.unk_id, data.max_chars_per_word
    );
    s
}

/// The expression of a WordPiece pre-tokenizer: `WordSplit::BERT`, or `WordSplit::new` of its
/// parts (only then are the tables of the other pre-tokenizers linked).
fn word_split_expr(split: picobpe_model::wordpiece::WordSplit) -> String {
    if split.is_bert() {
        return "::picobpe::wordpiece::WordSplit::BERT".to_owned();
    }
    let (spaces, punctuation, digits) = split.parts();
    format!(
        "::picobpe::wordpiece::WordSplit::new(::picobpe::wordpiece::Spaces::{spaces:?}, \
         ::picobpe::wordpiece::CharRule::{punctuation:?}, \
         ::picobpe::wordpiece::CharRule::{digits:?})"
    )
}

/// The generated file's header comment (model, table sizes) and its token-bytes static.
fn header(s: &mut String, model_name: &str, sizes: &str, n_bytes: usize, token_bytes: &Path) {
    // Writing to a String cannot fail; `let _ =` keeps that explicit.
    let _ = writeln!(
        s,
        "// @generated by picobpe-build from {model_name}. Do not edit."
    );
    let _ = writeln!(s, "// Flash bytes on a 32-bit target:");
    for line in sizes.lines() {
        let _ = writeln!(s, "// {line}");
    }
    let _ = writeln!(
        s,
        "\nstatic PICOBPE_TOKEN_BYTES: [u8; {n_bytes}] = *include_bytes!({:?});",
        token_bytes.display().to_string()
    );
}

/// `static NAME: [ty; N] = [...];` with 16 values per line.
/// `PICOBPE_SPECIALS`: the specials `(text, id)` in the order given (the tables' sorted order),
/// each with its strip bits from `strips`.
fn specials(s: &mut String, specials: &[(String, u32)], strips: &[(u32, u8)]) {
    let _ = write!(
        s,
        "\nstatic PICOBPE_SPECIALS: [::picobpe::SpecialToken<'static>; {}] = [",
        specials.len()
    );
    for (text, id) in specials {
        let strip = picobpe_model::strip_bits(strips, *id);
        let _ = write!(
            s,
            "\n    ::picobpe::SpecialToken {{ text: {text:?}, id: {id}, strip: {strip} }},"
        );
    }
    s.push_str("\n];\n");
}

/// `PICOBPE_SPLITS`: the compiled `Split` patterns ([`TableData::splits`]), each as its
/// arrays and a `CompiledPattern::from_parts` (the words were checked when compiled).
fn splits(s: &mut String, splits: &[Vec<u32>]) {
    let mut exprs = Vec::new();
    for (i, words) in splits.iter().enumerate() {
        // `TableData` checked every compiled pattern when it was made.
        let c = picobpe::pretok::CompiledPattern::new(words).expect("checked compiled pattern");
        let p = c.parts();
        let mut fields = Vec::new();
        for (field, values) in [
            ("flags", p.flags),
            ("classes", p.classes),
            ("states", p.states),
            ("rows", p.rows),
            ("transitions", p.transitions),
        ] {
            let name = format!("PICOBPE_SPLIT{i}_{}", field.to_uppercase());
            array(s, &name, "u32", values);
            fields.push(format!("{field}: &{name}"));
        }
        exprs.push(format!(
            "::picobpe::pretok::CompiledPattern::from_parts(::picobpe::pretok::CompiledParts {{ \
             {}, start: {}, row_words: {}, rule: ::picobpe::pretok::SplitRule {{ behavior: \
             ::picobpe::pretok::SplitBehavior::{:?}, invert: {} }} }})",
            fields.join(", "),
            p.start,
            p.row_words,
            p.rule.behavior,
            p.rule.invert
        ));
    }
    let _ = writeln!(
        s,
        "\nstatic PICOBPE_SPLITS: [::picobpe::pretok::CompiledPattern<'static>; {}] = [{}];",
        exprs.len(),
        exprs.join(", ")
    );
}

fn array<T: fmt::Display>(s: &mut String, name: &str, ty: &str, values: &[T]) {
    let _ = write!(s, "\nstatic {name}: [{ty}; {}] = [", values.len());
    for (i, v) in values.iter().enumerate() {
        if i % 16 == 0 {
            s.push_str("\n    ");
        }
        let _ = write!(s, "{v},");
    }
    s.push_str("\n];\n");
}

/// The `PILOTS` and `REMAP` statics of one PtrHash index, named `{prefix}_PILOTS` etc.
fn index_arrays(s: &mut String, prefix: &str, index: &IndexData) {
    array(s, &format!("{prefix}_PILOTS"), "u8", &index.pilots);
    array(s, &format!("{prefix}_REMAP"), "u32", &index.remap);
}

/// A `::picobpe::PtrIndex` expression over the statics written by [`index_arrays`].
fn index_expr(prefix: &str, index: &IndexData, len: usize) -> String {
    format!(
        "::picobpe::PtrIndex {{ seed: {:#x}, pilots: &{prefix}_PILOTS, remap: &{prefix}_REMAP, len: {len} }}",
        index.seed
    )
}

/// The expression of a baked `Option<TextNormalizer>`: a Unicode form, `Precompiled`,
/// character steps, or a form folded by `Lowercase` and whitespace runs.
fn text_normalizer_expr(normalizer: Option<TextNormalizer>) -> String {
    const N: &str = "::picobpe::normalizer";
    match normalizer.map(|n| n.kind()) {
        None => "None".to_owned(),
        Some(NormalizerKind::Unicode(form)) => normalizer_expr(Some(form)),
        Some(NormalizerKind::Precompiled) => format!("Some({N}::TextNormalizer::precompiled())"),
        Some(NormalizerKind::Folded(f)) => {
            let form = match f.form {
                None => "None".to_owned(),
                Some(form) => format!("Some({N}::UnicodeForm::{form:?})"),
            };
            format!(
                "Some({N}::TextNormalizer::folded({N}::Folded {{ form: {form}, lowercase: {}, \
                 collapse_whitespace: {} }}))",
                f.lowercase, f.collapse_whitespace
            )
        }
        Some(NormalizerKind::Steps(s)) => {
            let decompose = match s.decompose {
                None => "None".to_owned(),
                Some(d) => format!("Some({N}::Decompose::{d:?})"),
            };
            format!(
                "Some({N}::TextNormalizer::steps({N}::Steps {{ quotes: {}, decompose: {decompose}, \
                 strip_accents: {}, lowercase: {}, lowercase_first: {}, precompiled: {}, \
                 fffd_per_subpart: {} }}))",
                s.quotes,
                s.strip_accents,
                s.lowercase,
                s.lowercase_first,
                s.precompiled,
                s.fffd_per_subpart
            )
        }
    }
}

/// The expression of a baked `Option<TextNormalizer>` for `form`.
fn normalizer_expr(form: Option<impl fmt::Debug>) -> String {
    match form {
        None => "None".to_owned(),
        Some(form) => format!(
            "Some(::picobpe::normalizer::TextNormalizer::new(::picobpe::normalizer::UnicodeForm::{form:?}))"
        ),
    }
}
