//! whisper's `multilingual.tiktoken` (`fixtures/whisper`, MIT): a rank file whose last line,
//! `= 50256`, is an empty token. It imports as tiktoken reads it, and every id of every text is
//! tiktoken's (`tests/scripts/gen_whisper_vectors.py`, whisper's own construction of the
//! encoding); no text encodes to 50256, and it decodes to nothing, as in tiktoken.

use picobpe::{Specials, Tokenizer};
use picobpe_model::PatternKind;

fn tokenizer() -> Tokenizer<'static> {
    let path = picobpe_tests::paths::fixtures().join("whisper/multilingual.tiktoken");
    let bytes = std::fs::read(&path).unwrap();
    let model = picobpe_model::import::tiktoken(&bytes, PatternKind::Gpt2, &[]).unwrap();
    assert_eq!(model.n_ids(), 50_257);
    assert!(model.tokens[50_256].is_empty());
    assert_eq!(model.empty_tokens, [50_256]);
    // Through a model file: the empty token survives it (payload variant 11, tables kind 2).
    let model = picobpe_model::AnyModel::BytePair(model);
    let live = picobpe_tests::through_model_file("whisper", |p| {
        model.write(p, &picobpe_model::TemplateData::default())
    });
    let picobpe_model::LiveTables::BytePair(tables) = live else {
        panic!("not byte-level tables")
    };
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
    // MANIFEST.json), and so does picobpe (`Model::empty_tokens`, through the model file);
    // the id after it, outside the model, is still unknown.
    let manifest: serde_json::Value = serde_json::from_slice(
        &std::fs::read(picobpe_tests::paths::fixtures().join("whisper/MANIFEST.json")).unwrap(),
    )
    .unwrap();
    let empty = manifest["rank_file"]["empty_token_id"].as_u64().unwrap() as u32;
    assert_eq!(manifest["rank_file"]["empty_token_decodes_to_b64"], "");
    let mut text = [0u8; 16];
    assert_eq!(tok.decode(&[empty], &mut text), Ok(0));
    assert_eq!(tok.decoded_len(&[empty, empty]), Ok(0));
    assert!(matches!(
        tok.decode(&[empty, empty + 1], &mut text),
        Err(picobpe::DecodeError::UnknownId {
            position: 1,
            id: 50_257,
            written: 0
        })
    ));
}
