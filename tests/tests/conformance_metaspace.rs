//! Conformance of picobpe's `tokenizer.json` import with Hugging Face `tokenizers` for
//! SentencePiece-style files whose pre-tokenizer is `Metaspace` (`fixtures/metaspace`, made by
//! `tests/scripts/gen_metaspace_vectors.py` with `tokenizers` and `transformers`' T5
//! converter): one-shot, resumed and streamed encode, count, one-shot, resumed and streamed
//! decode, against `tokenizers`' own ids and decodings, on every vector set.
//!
//! Heavy: run with `cargo test --release -p picobpe-tests --test conformance_metaspace`.

use picobpe_tests::sp::{check_all_sets, SpSource};

/// `Tokenizer(models.Unigram())` with `pre_tokenizers.Metaspace()` (prepend scheme `always`,
/// `split: true`), trained by `tokenizers`' `UnigramTrainer`: the library's usual Unigram.
#[test]
fn unigram_metaspace_split() {
    check_all_sets("ms-unigram", SpSource::TokenizerJson);
}

/// Unigram with `Metaspace(split=False)`, trained so: pieces that cross a `▁` (`▁of▁the`) are
/// matched, and a text starting with a space gets no second `▁`.
#[test]
fn unigram_metaspace_whole() {
    check_all_sets("ms-unigram-whole", SpSource::TokenizerJson);
}

/// The same vocabulary with `Metaspace()` (split): pieces that cross a `▁` never match, and
/// each word is a Viterbi of its own.
#[test]
fn unigram_metaspace_cut() {
    check_all_sets("ms-unigram-cut", SpSource::TokenizerJson);
}

/// BPE with `Metaspace(prepend_scheme="first")` (split), trained by `BpeTrainer`; no byte
/// fallback and `fuse_unk: false`: each character outside the vocabulary is an `<unk>`.
#[test]
fn bpe_metaspace_first() {
    check_all_sets("ms-bpe-first", SpSource::TokenizerJson);
}

/// `transformers`' `T5Converter` over a `sentencepiece` Unigram model: `Strip(right)` +
/// `Replace(Regex(" {2,}"), "▁")`, then `Metaspace` (always, split).
#[test]
fn t5_converter() {
    check_all_sets("ms-t5", SpSource::TokenizerJson);
}

/// `tokenizers`' own `SentencePieceBPETokenizer` (an `NFKC` normalizer before `Metaspace`),
/// trained by it: the Unicode form runs in the core between added tokens.
#[test]
fn sentencepiece_bpe_tokenizer_nfkc() {
    check_all_sets("ms-bpe-nfkc", SpSource::TokenizerJson);
}

/// `tokenizers`' own `SentencePieceUnigramTokenizer`, trained by it: `Nmt` + `NFKC` (one
/// pass in the core) + `Replace(Regex(" {2,}"), " ")` (runs of spaces made one, trailing ones
/// kept) before `Metaspace`.
#[test]
fn sentencepiece_unigram_tokenizer_nmt_nfkc() {
    check_all_sets("ms-unigram-nmt", SpSource::TokenizerJson);
}

/// Unigram with an `NFD` normalizer (marks decomposed and put in canonical order).
#[test]
fn unigram_nfd() {
    check_all_sets("ms-unigram-nfd", SpSource::TokenizerJson);
}

/// `transformers`' `T5Converter` over a `sentencepiece` BPE model trained with `nmt_nfkc`
/// (`spm_train`'s default): a `Precompiled` character map first, applied by `tokenizers`' rule
/// (a grapheme cluster at a time), then `Strip(right)` + `Replace(Regex(" {2,}"), "▁")` and
/// `Metaspace`.
#[test]
fn t5_converter_precompiled_nmt_nfkc() {
    check_all_sets("ms-t5-nfkc", SpSource::TokenizerJson);
}

/// The same converter over a `sentencepiece` Unigram model trained with `nmt_nfkc_cf`.
#[test]
fn t5_converter_precompiled_nmt_nfkc_cf() {
    check_all_sets("ms-t5-cf", SpSource::TokenizerJson);
}

/// The same converter over a `sentencepiece` BPE model with custom TSV rules (a character
/// map in the double-array form only).
#[test]
fn t5_converter_precompiled_custom_rules() {
    check_all_sets("ms-t5-tsv", SpSource::TokenizerJson);
}

/// The shape of the T5 `tokenizer.json` files published with the models: `Precompiled` alone,
/// then `Sequence[WhitespaceSplit, Metaspace]` (the old `"add_prefix_space": true` form):
/// whitespace of every kind ends a word and is dropped, and a word starting with `▁` gets no
/// second one.
#[test]
fn t5_published_whitespace_split() {
    check_all_sets("ms-t5-ws", SpSource::TokenizerJson);
}

/// `Precompiled` + `Replace(Regex(" {2,}"), " ")` (a no-op before `WhitespaceSplit`) over an
/// `nmt_nfkc_cf` Unigram model, `Metaspace` in today's form.
#[test]
fn t5_whitespace_split_squeeze_unigram() {
    check_all_sets("ms-t5-ws-cf", SpSource::TokenizerJson);
}

/// `WhitespaceSplit` + `Metaspace` without a normalizer: the raw text's whitespace (tabs,
/// U+3000, …) splits, and a word that starts with `▁` (which a `Precompiled` map would have
/// made a space) gets no second one.
#[test]
fn whitespace_split_identity() {
    check_all_sets("ms-ws", SpSource::TokenizerJson);
}

/// The same with `prepend_scheme: "never"`: no `▁` is put anywhere.
#[test]
fn whitespace_split_never_identity() {
    check_all_sets("ms-ws-never", SpSource::TokenizerJson);
}

/// `transformers`' `AlbertConverter` over an `nmt_nfkc_cf` Unigram model (ALBERT's defaults:
/// accents stripped, lowercased): `Replace("``")` + `Replace("''")` + `NFKD` +
/// `StripAccents` + `Lowercase` + `Precompiled` + `Replace(Regex(" {2,}"), " ")`, then
/// `Metaspace`; the character steps and the map run in the core as one normalizer.
#[test]
fn albert_converter_steps() {
    check_all_sets("ms-albert", SpSource::TokenizerJson);
}

/// `XLNetConverter` over an `nmt_nfkc` BPE model: the same steps without `Lowercase`.
#[test]
fn xlnet_converter_steps() {
    check_all_sets("ms-xlnet", SpSource::TokenizerJson);
}

/// The ALBERT files published with the models: the same normalizer before
/// `Sequence[WhitespaceSplit, Metaspace]` (the old `add_prefix_space` form).
#[test]
fn albert_published_whitespace_split() {
    check_all_sets("ms-albert-ws", SpSource::TokenizerJson);
}

/// `DebertaV2Converter` (deberta-v3's settings) over an `nmt_nfkc_cf` Unigram model:
/// `Strip(left, right)` + `Precompiled` + `Replace(Regex(" {2,}"), " ")`, then
/// `Sequence[Metaspace]`: each text between added tokens loses its leading and trailing
/// whitespace before the map (the core's `strip_sections`).
#[test]
fn deberta_v2_converter() {
    check_all_sets("ms-deberta", SpSource::TokenizerJson);
}

/// `XLMRobertaConverter` over an `nmt_nfkc_cf` Unigram model, with `<mask>` registered as
/// `XLMRobertaTokenizerFast` registers it: an added token that takes the whitespace before it
/// (`lstrip`), cut out of the text with that whitespace.
#[test]
fn xlm_roberta_mask_lstrip() {
    check_all_sets("ms-xlmr", SpSource::TokenizerJson);
}

/// The same file with `<s>` taking the whitespace after it and `</s>` on both sides
/// (`rstrip`, made up), next to `<mask>`'s.
#[test]
fn added_tokens_lstrip_and_rstrip() {
    check_all_sets("ms-xlmr-strips", SpSource::TokenizerJson);
}

/// Unigram with `Sequence[NFD, Lowercase, StripAccents]`, the normalizer `tokenizers`' guides
/// build (`Lowercase` before `StripAccents`, which differs on `İ`), trained by it.
#[test]
fn unigram_nfd_lowercase_strip_accents() {
    check_all_sets("ms-unigram-lower", SpSource::TokenizerJson);
}

/// `Lowercase` after `NFKC` (`Sequence[NFKC, Lowercase]`), which the core applies as its
/// `Folded` normalizer: a Unigram model trained with it by `tokenizers`, and
/// `SentencePieceBPETokenizer` with its `NFKC` made that `Sequence`.
#[test]
fn nfkc_then_lowercase() {
    for name in ["ms-unigram-nfkc-lower", "ms-bpe-nfkc-lower"] {
        let model = picobpe_tests::sp::model(name, SpSource::TokenizerJson);
        let kind = picobpe_model::normalizer::text_normalizer(
            model.normalizer,
            model.precompiled,
            model.char_steps,
        )
        .map(|n| n.kind());
        assert!(
            matches!(kind, Some(picobpe::normalizer::NormalizerKind::Folded(_))),
            "{name}: {kind:?}"
        );
        check_all_sets(name, SpSource::TokenizerJson);
    }
}

/// Pre-tokenizer steps before a `Metaspace` that splits, as `tokenizers` trains with them:
/// `Punctuation`, `Whitespace`, `Digits` (prepend scheme `never`), and `WhitespaceSplit` +
/// `Punctuation(contiguous)` + `Digits(individual)` after `NFKC` (BPE); and with no
/// `Metaspace` and no decoder: the BPE of `tokenizers`' quick tour (`Whitespace`, `[UNK]`;
/// decoded as tokens joined by spaces) and a Unigram with `WhitespaceSplit` + `Digits`. Every
/// set, including `split_edge` (digits, punctuation and `▁` side by side), one-shot, resumed,
/// streamed, cached and decoded; and through a model file with prebuilt tables.
#[test]
fn pre_tokenizer_steps() {
    use picobpe_model::sentencepiece::SpSections;
    for (name, sections) in [
        ("ms-unigram-punct", SpSections::WhitespaceWords),
        ("ms-unigram-words", SpSections::WhitespaceWords),
        ("ms-unigram-digits-never", SpSections::WhitespaceWords),
        ("ms-bpe-wsplit-punct-digits", SpSections::WhitespaceWords),
        ("ms-bpe-quicktour", SpSections::PreTokens),
        ("ms-unigram-wsplit-digits", SpSections::PreTokens),
    ] {
        let model = picobpe_tests::sp::model(name, SpSource::TokenizerJson);
        assert_eq!(model.sections, sections, "{name}");
        assert!(model.pre_split.is_some(), "{name}");
        check_all_sets(name, SpSource::TokenizerJson);
        let tables = match picobpe_tests::through_model_file(name, |path| model.write(path)) {
            picobpe_model::LiveTables::SentencePiece(t) => t,
            other => panic!("loaded as {other:?}"),
        };
        assert_eq!(
            tables.pre_split.map(|p| p.split()),
            model.pre_split,
            "{name}"
        );
    }
}

/// A file with no decoder: `tokenizers` decodes the pieces as they are, joined by spaces
/// (`▁` and `<0xHH>` byte pieces included). `ms-unigram`'s file (a `Metaspace`) and sp4096's
/// (`Prepend` + `Replace`, byte fallback) with their decoder removed.
#[test]
fn no_decoder_joins_pieces() {
    for name in ["ms-unigram-nodec", "ms-sp4096-nodec"] {
        let model = picobpe_tests::sp::model(name, SpSource::TokenizerJson);
        assert!(model.joins_pieces, "{name}");
        check_all_sets(name, SpSource::TokenizerJson);
        let tables = match picobpe_tests::through_model_file(name, |path| model.write(path)) {
            picobpe_model::LiveTables::SentencePiece(t) => t,
            other => panic!("loaded as {other:?}"),
        };
        assert!(tables.joins_pieces, "{name}");
    }
}

/// The new sections survive a model file with prebuilt tables (format version 3), which the
/// CLI maps back: the same ids.
#[test]
fn model_files_keep_the_metaspace_rules() {
    use picobpe::SpTokenizer;
    for name in [
        "ms-t5",
        "ms-bpe-first",
        "ms-unigram-whole",
        "ms-bpe-nfkc",
        "ms-t5-cf",
        "ms-t5-ws",
        "ms-unigram-nmt",
        "ms-albert",
        "ms-unigram-lower",
        "ms-unigram-nfkc-lower",
        "ms-deberta",
        "ms-xlmr-strips",
    ] {
        let model = picobpe_tests::sp::model(name, SpSource::TokenizerJson);
        let tables = match picobpe_tests::through_model_file(name, |path| model.write(path)) {
            picobpe_model::LiveTables::SentencePiece(t) => t,
            other => panic!("loaded as {other:?}"),
        };
        assert_eq!(tables.sections, model.sections);
        let normalizer = picobpe_model::normalizer::text_normalizer(
            model.normalizer,
            model.precompiled,
            model.char_steps,
        );
        assert_eq!(tables.normalizer, normalizer, "{name}");
        assert_eq!(
            normalizer.is_some(),
            model.normalizer.is_some() || model.precompiled || model.char_steps.any()
        );
        assert_eq!(tables.unk_per_char, model.unk_per_char);
        assert_eq!(tables.collapse_spaces, model.collapse_spaces);
        assert_eq!(tables.strip_sections, model.strip_sections);
        assert_eq!(model.strip_sections, name == "ms-deberta");
        let tok = SpTokenizer::new(tables);
        let mut checked = 0;
        assert_eq!(
            tables.user_strips.is_empty(),
            model.strips.is_empty(),
            "{name}"
        );
        for set in ["ms_edge", "sp_edge", "added_edge"] {
            if !picobpe_tests::sp::sets(name).iter().any(|s| s == set) {
                continue;
            }
            for case in picobpe_tests::sp::load(name, set) {
                let got = picobpe_tests::sp::encode(&tok, &case.input).unwrap();
                assert_eq!(got, case.ids, "{name} {set} {}", case.name);
                checked += 1;
            }
        }
        assert!(checked > 150);
    }
}

/// A `Precompiled` map in the compact form `picobpe-build` bakes gives `tokenizers`' ids too.
#[test]
fn precompiled_compact_form_matches() {
    use picobpe::SpTokenizer;
    let model = picobpe_tests::sp::model("ms-t5-nfkc", SpSource::TokenizerJson);
    let data = picobpe_model::SpTableData::new(&model)
        .and_then(picobpe_model::SpTableData::with_compact_charsmap)
        .unwrap();
    assert!(data.charsmap_units.is_empty() && !data.charsmap_runs.is_empty());
    let tok = SpTokenizer::new(data.to_tables());
    let mut checked = 0;
    for set in [
        "grapheme_edge",
        "nfkc_edge",
        "ms_edge",
        "random",
        "invalid_utf8",
    ] {
        for case in picobpe_tests::sp::load("ms-t5-nfkc", set) {
            let got = picobpe_tests::sp::encode(&tok, &case.input).unwrap();
            assert_eq!(got, case.ids, "{set} {}", case.name);
            checked += 1;
        }
    }
    assert!(checked > 2500);
}

/// A `<unk>` among the added tokens is matched in the text, as `tokenizers` does: the text
/// `<unk>` is the unknown id alone (in every set above too; here on its own).
#[test]
fn literal_unk_is_the_unknown_id() {
    use picobpe::SpTokenizer;
    for name in [
        "ms-unigram",
        "ms-unigram-whole",
        "ms-unigram-cut",
        "ms-bpe-first",
    ] {
        let tok = SpTokenizer::new(picobpe_tests::sp::tables(name, SpSource::TokenizerJson));
        let unk = tok.tables().unk_id;
        let got = picobpe_tests::sp::encode(&tok, b"x <unk> <unk>").unwrap();
        assert_eq!(
            got.iter().filter(|&&id| id == unk).count(),
            2,
            "{name}: {got:?}"
        );
    }
}

/// What is refused, by name: a `Metaspace` that contradicts itself or replaces spaces with
/// something else.
#[test]
fn refusals_name_the_setting() {
    let dir = picobpe_tests::paths::fixtures().join("metaspace/models");
    let import = |name: &str, from: &str, to: &str| {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        assert!(text.contains(from), "{name}: {from}");
        let text = text.replacen(from, to, 1);
        let file = picobpe_model::TokenizerJson::parse(text.as_bytes()).unwrap();
        picobpe_model::sentencepiece::import_tokenizer_json(&file)
            .unwrap_err()
            .to_string()
    };
    let t5 = "ms-t5.tokenizer.json";
    let pre = r#""pre_tokenizer":{"type":"Metaspace","replacement":"▁","prepend_scheme":"always","split":true}"#;
    assert_eq!(
        import(
            t5,
            pre,
            &pre.replace(r#""split""#, r#""add_prefix_space":false,"split""#)
        ),
        "tokenizer.json pre_tokenizer: Metaspace prepend_scheme Some(\"always\") with \
         add_prefix_space Some(false)"
    );
    assert_eq!(
        import(t5, pre, &pre.replace('▁', "_")),
        "tokenizer.json pre_tokenizer: Metaspace replacement \"_\" is not \"▁\""
    );
    // A `Precompiled` map that is not base64, empty, damaged, or before a `Metaspace` that
    // does not split.
    let tsv = "ms-t5-tsv.tokenizer.json";
    let text = std::fs::read_to_string(dir.join(tsv)).unwrap();
    let key = r#""precompiled_charsmap":""#;
    let at = text.find(key).unwrap() + key.len();
    let map = &text[at..at + text[at..].find('"').unwrap()];
    let with_map = |m: &str| import(tsv, map, m);
    assert!(
        with_map("!!").starts_with(
            "tokenizer.json normalizer: Precompiled precompiled_charsmap: Invalid symbol"
        ),
        "{}",
        with_map("!!")
    );
    assert_eq!(
        with_map(""),
        "tokenizer.json normalizer: Precompiled with an empty precompiled_charsmap"
    );
    assert_eq!(
        with_map("AAAA"),
        "invalid SentencePiece model: precompiled_charsmap: 3 bytes, shorter than its 4-byte \
         trie size"
    );
    assert!(import(tsv, r#""split":true"#, r#""split":false"#)
        .starts_with("tokenizer.json normalizer: Precompiled is supported first, before a Metaspace that splits"));
    // `WhitespaceSplit` with a `Metaspace` that does not split or prepends to the first word
    // only (whose rule follows offsets in the original text). (With other steps after it the
    // file imports: `pre_tokenizer_steps_before_metaspace`.)
    let ws = "ms-t5-ws-cf.tokenizer.json";
    let refused = "tokenizer.json pre_tokenizer: WhitespaceSplit + Metaspace is supported with a \
                   Metaspace that splits, prepend_scheme \"always\" or \"never\"";
    assert_eq!(import(ws, r#""split":true"#, r#""split":false"#), refused);
    assert_eq!(
        import(
            ws,
            r#""prepend_scheme":"always""#,
            r#""prepend_scheme":"first""#
        ),
        refused
    );
    assert!(import(ws, r#""content":" ""#, r#""content":"_""#)
        .starts_with("tokenizer.json normalizer: "));
    // Runs of spaces made one after `Nmt` + `NFKC`, before a `Metaspace` that does not split.
    let nmt = "ms-unigram-nmt.tokenizer.json";
    assert_eq!(
        import(
            nmt,
            r#""prepend_scheme":"always","split":true},"post"#,
            r#""prepend_scheme":"always","split":false},"post"#
        ),
        "tokenizer.json normalizer: Replace(Regex(\" {2,}\"), \" \") after a Unicode form or \
         Precompiled is supported before a Metaspace that splits"
    );
    // StripAccents after a composition (it would have to see the decomposed marks), or
    // steps before a Metaspace that does not split. (`NFD` + `Lowercase` alone imports: the
    // core's `Folded`, as `nfkc_then_lowercase` checks for `NFKC`.)
    let lower = "ms-unigram-lower.tokenizer.json";
    for (from, to) in [
        (r#"{"type":"NFD"}"#, r#"{"type":"NFC"}"#),
        (r#"{"type":"NFD"}"#, r#"{"type":"NFKC"}"#),
    ] {
        let refused = import(lower, from, to);
        assert!(
            refused.starts_with("tokenizer.json normalizer: ")
                && refused.contains("StripAccents and Lowercase Sequence is supported with no"),
            "{refused}"
        );
    }
    // Pre-tokenizer steps before a `Metaspace` with prepend scheme `first`, after a
    // normalizer step that reads spaces, or with a `Punctuation` merged with a neighbour.
    let punct = "ms-unigram-punct.tokenizer.json";
    let split = r#""prepend_scheme":"always","split":true}]}"#;
    assert_eq!(
        import(punct, split, &split.replace("always", "first")),
        "tokenizer.json pre_tokenizer: Whitespace, Punctuation and Digits are supported before \
         a Metaspace that splits, prepend_scheme \"always\" or \"never\""
    );
    let squeeze = r#""normalizer":{"type":"Replace","pattern":{"Regex":" {2,}"},"content":" "}"#;
    assert!(import(punct, r#""normalizer":null"#, squeeze)
        .starts_with("tokenizer.json normalizer: with Whitespace, Punctuation or Digits"));
    assert!(import(
        punct,
        r#""behavior":"Isolated""#,
        r#""behavior":"MergedWithPrevious""#
    )
    .contains("Punctuation (isolated, contiguous or removed) and Digits, each at most once"));
    // A decoder that renders the ids otherwise than the model's shape decodes them.
    assert!(import(
        "ms-unigram.tokenizer.json",
        r#""decoder":{"type":"Metaspace""#,
        r#""decoder":{"type":"ByteLevel"},"x":{"type":"Metaspace""#
    )
    .starts_with("tokenizer.json decoder: {\"type\":\"ByteLevel\"}: not supported"));
    // The same steps with no `Metaspace`: only with no decoder, and only steps that remove
    // whitespace (a space left in a pre-token would need a rule of its own).
    let quicktour = "ms-bpe-quicktour.tokenizer.json";
    assert_eq!(
        import(
            quicktour,
            r#""decoder":null"#,
            r#""decoder":{"type":"Fuse"}"#
        ),
        "tokenizer.json decoder: {\"type\":\"Fuse\"}: with Whitespace, Punctuation or Digits \
         and no Metaspace, no decoder is supported (tokens joined by spaces)"
    );
    assert_eq!(
        import(
            quicktour,
            r#"{"type":"Whitespace"}"#,
            r#"{"type":"Punctuation","behavior":"Isolated"}"#
        ),
        "tokenizer.json pre_tokenizer: without a Metaspace, the steps must remove whitespace \
         (Whitespace or WhitespaceSplit among them)"
    );
    assert!(import(
        "ms-albert.tokenizer.json",
        r#""split":true"#,
        r#""split":false"#
    )
    .starts_with("tokenizer.json normalizer: "));
    // `Strip(left, right)` first before a `Metaspace` that does not split, or without the
    // runs of spaces made one after it.
    let deberta = "ms-deberta.tokenizer.json";
    let strip = "tokenizer.json normalizer: Strip(left, right) first is supported before an \
                 optional Precompiled and Replace(Regex(\" {2,}\"), \" \"), with a Metaspace that \
                 splits (transformers' DeBERTa-v2/v3 conversion)";
    assert_eq!(
        import(deberta, r#""split":true}]}"#, r#""split":false}]}"#),
        strip
    );
    assert_eq!(
        import(
            deberta,
            r#",{"type":"Replace","pattern":{"Regex":" {2,}"},"content":" "}"#,
            ""
        ),
        strip
    );
}

/// Without added tokens a stream encodes a `Metaspace` model's words as they come (the other
/// files hold added tokens, whose sections a stream encodes at the end): streamed and
/// resumed encodes equal the one-shot encode (checked against `tokenizers` above), with a
/// Unicode form (`ms-bpe-nfkc`), with `Strip` + collapse (`ms-t5`), with both and a
/// `Precompiled` map (`ms-t5-nfkc`, `ms-t5-cf`, `ms-t5-tsv`) and with neither.
#[test]
fn streams_without_added_tokens_equal_one_shot() {
    use picobpe::{SpTokenizer, Specials};
    let dir = picobpe_tests::paths::fixtures().join("metaspace/models");
    for name in [
        "ms-bpe-nfkc",
        "ms-t5",
        "ms-unigram",
        "ms-t5-nfkc",
        "ms-t5-cf",
        "ms-t5-tsv",
        "ms-t5-ws",
        "ms-t5-ws-cf",
        "ms-ws",
        "ms-ws-never",
        "ms-unigram-nmt",
        "ms-deberta",
    ] {
        let text = std::fs::read_to_string(dir.join(format!("{name}.tokenizer.json"))).unwrap();
        let at = text.find(r#""added_tokens":["#).unwrap() + r#""added_tokens":["#.len();
        let end = at + text[at..].find(']').unwrap();
        let text = format!("{}{}", &text[..at], &text[end..]);
        let file = picobpe_model::TokenizerJson::parse(text.as_bytes()).unwrap();
        let model = picobpe_model::sentencepiece::import_tokenizer_json(&file).unwrap();
        assert!(model
            .pieces
            .iter()
            .all(|p| p.kind != picobpe_model::sentencepiece::SpKind::UserDefined));
        let tables = picobpe_model::SpTableData::new(&model).unwrap().to_tables();
        let tok = SpTokenizer::new(tables);
        let mut checked = 0;
        for set in [
            "ms_edge",
            "nfkc_edge",
            "grapheme_edge",
            "ws_edge",
            "strip_edge",
            "sp_edge",
            "fixtures",
        ] {
            if !picobpe_tests::sp::sets(name).iter().any(|s| s == set) {
                continue;
            }
            for case in picobpe_tests::sp::load(name, set) {
                if case.input.len() > 4096 {
                    continue;
                }
                let want = picobpe_tests::sp::encode(&tok, &case.input).unwrap();
                for (chunk, take) in [(1, 1), (7, 3), (64, 100)] {
                    let got = picobpe_tests::sp::encode_streamed(
                        tok,
                        Specials::All,
                        &case.input,
                        chunk,
                        take,
                    )
                    .unwrap();
                    assert_eq!(
                        got, want,
                        "{name} {set} {} streamed ({chunk}, {take})",
                        case.name
                    );
                }
                // A word longer than the window may need more than 64 ids: then it says so.
                match picobpe_tests::sp::encode_cursor_resumed(&tok, &case.input, 64) {
                    Ok(got) => assert_eq!(got, want, "{name} {set} {} resumed", case.name),
                    Err(picobpe::EncodeError::PieceTooLong { needed, .. }) => {
                        assert!(needed > 64, "{name} {set} {}", case.name)
                    }
                    Err(e) => panic!("{name} {set} {}: {e:?}", case.name),
                }
                checked += 1;
            }
        }
        assert!(checked > 100, "{name}: {checked}");
    }
}
