//! whisper's `multilingual.tiktoken` (`fixtures/whisper`, MIT): a rank file whose last line,
//! `= 50256`, is an empty token. It imports as tiktoken reads it, and every id of every text is
//! tiktoken's (`tests/scripts/gen_whisper_vectors.py`, whisper's own construction of the
//! encoding); no text encodes to 50256. Decoding 50256 is the one deviation (see below).

use picobpe::{Specials, Tokenizer};
use picobpe_model::{PatternKind, PieceTable, TableData};

fn tokenizer() -> Tokenizer<'static> {
    let path = picobpe_tests::paths::fixtures().join("whisper/multilingual.tiktoken");
    let bytes = std::fs::read(&path).unwrap();
    let model = picobpe_model::import::tiktoken(&bytes, PatternKind::Gpt2, &[]).unwrap();
    assert_eq!(model.n_ids(), 50_257);
    assert!(model.tokens[50_256].is_empty());
    let tables = TableData::new(&model, PieceTable::Full)
        .unwrap()
        .to_tables();
    Tokenizer::new(tables)
}

#[test]
fn ids_are_tiktokens_and_the_empty_token_is_never_encoded() {
    let tok = tokenizer();
    let mut checked = 0;
    for set in ["fixtures", "random"] {
        for case in picobpe_tests::sp::load("whisper-multilingual", set) {
            let mut out = vec![0u32; 3 * case.input.len() + 64];
            let n = tok.encode(&case.input, &mut out, Specials::None).unwrap();
            assert_eq!(out[..n], case.ids[..], "{set} {}", case.name);
            let mut text = vec![0u8; case.input.len() + 16];
            let m = tok.decode(&case.ids, &mut text).unwrap();
            assert_eq!(text[..m], case.input[..], "{set} {}", case.name);
            checked += 1;
        }
    }
    assert!(checked > 2000);
    // The empty token. tiktoken decodes it to nothing (`decode_bytes([50256]) == b""`,
    // MANIFEST.json); picobpe keeps it as an id with no bytes, which its decoders refuse as
    // unknown (a model file cannot yet tell an empty token from an unused id): a known
    // deviation, on this one id, which no text encodes to.
    let manifest: serde_json::Value = serde_json::from_slice(
        &std::fs::read(picobpe_tests::paths::fixtures().join("whisper/MANIFEST.json")).unwrap(),
    )
    .unwrap();
    let empty = manifest["rank_file"]["empty_token_id"].as_u64().unwrap() as u32;
    assert_eq!(manifest["rank_file"]["empty_token_decodes_to_b64"], "");
    let mut text = [0u8; 16];
    assert!(matches!(
        tok.decode(&[empty], &mut text),
        Err(picobpe::DecodeError::UnknownId {
            position: 0,
            id: 50_256,
            written: 0
        })
    ));
}
