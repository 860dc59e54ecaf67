//! Conformance of picobpe's SentencePiece Unigram encoder (and its decoder) with the
//! `sentencepiece` library on the committed reference vectors (`fixtures/unigram`, see its
//! PROVENANCE.md): one-shot, resumed (from an offset and with a cursor) and streamed encode,
//! count, one-shot, resumed and streamed decode, for both models and every vector set.
//!
//! Heavy: run with `cargo test --release -p picobpe-tests --test conformance_unigram`.

use picobpe_tests::sp::{check_all_sets, SpSource};

/// T5-like: no byte fallback (a run of unknown characters is one `<unk>`), spaces collapsed.
#[test]
fn ug8000() {
    check_all_sets("ug8000", SpSource::ModelProto);
}

/// Byte fallback, split digits, a user-defined symbol, spaces kept.
#[test]
fn ug4096_bytes() {
    check_all_sets("ug4096-bytes", SpSource::ModelProto);
}

/// The model files the CLI loads (format version 3, prebuilt tables mapped by `read_tables`).
#[test]
fn model_files_with_prebuilt_tables() {
    for model in ["ug8000", "ug4096-bytes"] {
        check_all_sets(model, SpSource::ModelFile);
    }
}

/// A word longer than the stack lattice is segmented in the far end of `out`: with too small a
/// buffer the error says how much room is enough, and that much is enough and gives the ids of
/// a one-shot encode with room to spare (checked against `sentencepiece` in the sets above:
/// `long-han`, 24 KB, and the Japanese corpus, 51 KB, are single words).
#[test]
fn long_word_needs_the_room_it_reports() {
    use picobpe::{EncodeError, SpTokenizer};
    let tok = SpTokenizer::new(picobpe_tests::sp::tables("ug8000", SpSource::ModelProto));
    let text = "あいう".repeat(700);
    let mut big = vec![0u32; 20 * text.len()];
    let n = tok.encode(text.as_bytes(), &mut big).unwrap();
    let mut small = vec![0u32; 100];
    let needed = match tok.encode(text.as_bytes(), &mut small) {
        Err(EncodeError::PieceTooLong {
            offset: 0,
            len,
            needed,
        }) => {
            assert_eq!(len, text.len());
            needed
        }
        other => panic!("{other:?}"),
    };
    let mut exact = vec![0u32; needed];
    assert_eq!(tok.encode(text.as_bytes(), &mut exact), Ok(n));
    assert_eq!(exact[..n], big[..n]);
    // `needed` counts one id per byte (the most a word can give): enough, not the least.
    assert!(needed >= n + 3 * (text.len() + 1));
}

/// The `tokenizer.json` of ug4096-bytes (transformers' `LlamaConverter`: `Prepend("▁")` and
/// `Replace(" ", "▁")`, added tokens cut first), against Hugging Face `tokenizers`' ids.
#[test]
fn ug4096_bytes_tokenizer_json() {
    check_all_sets("ug4096-bytes", SpSource::TokenizerJson);
}

/// A Unigram `tokenizer.json` import keeps its `f64` scores through a model file (format
/// version 3, prebuilt tables): the mapped tables give `tokenizers`' ids too.
#[test]
fn tokenizer_json_model_file_keeps_f64_scores() {
    use picobpe::SpTokenizer;
    let model = picobpe_tests::sp::model("ug4096-bytes", SpSource::TokenizerJson);
    assert!(model.unigram_tokenizers() && model.f64_scores.len() == model.n_ids());
    let tables =
        match picobpe_tests::through_model_file("ug4096-bytes-json", |path| model.write(path)) {
            picobpe_model::LiveTables::SentencePiece(t) => t,
            other => panic!("loaded as {other:?}"),
        };
    let tok = SpTokenizer::new(tables);
    let mut checked = 0;
    for set in ["corpus", "sp_edge"] {
        for case in picobpe_tests::sp::load("ug4096-bytes", set) {
            let want = case.hf.as_ref().unwrap_or(&case.ids);
            let got = picobpe_tests::sp::encode(&tok, &case.input).unwrap();
            assert_eq!(&got, want, "{set} {}", case.name);
            checked += 1;
        }
    }
    assert!(checked > 100);
}

/// A stream's final `encode_part` of a `tokenizer.json` Unigram model (all of its text at once:
/// sections restart the score) reports a `needed` that is enough, even when spaces (3
/// normalized bytes each) make one long word. (A `.model` one streams word by word.)
#[test]
fn encode_part_needed_is_enough() {
    use picobpe::{Cursor, EncodeError, SpTokenizer, Specials, Tokenize};
    let text = format!("a{}b", " ".repeat(200));
    let source = SpSource::TokenizerJson;
    let tok = SpTokenizer::new(picobpe_tests::sp::tables("ug4096-bytes", source));
    let part = |out: &mut [u32]| {
        let mut cursor = Cursor::START;
        tok.encode_part(
            text.as_bytes(),
            true,
            true,
            &mut cursor,
            out,
            Specials::All,
            &mut [],
        )
    };
    let needed = match part(&mut [0u32; 100]) {
        Err(EncodeError::PieceTooLong { needed, .. }) => needed,
        other => panic!("{other:?}"),
    };
    let mut out = vec![0u32; needed];
    let done = part(&mut out).unwrap();
    assert_eq!(done.consumed, text.len());
    let one_shot = picobpe_tests::sp::encode(&tok, text.as_bytes()).unwrap();
    assert_eq!(out[..done.written], one_shot[..]);
}
