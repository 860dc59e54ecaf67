//! Normalizer `Sequence`s of character steps (`picobpe::normalizer::Steps`: ALBERT's and
//! XLNet's quote pairs, `NFD`/`NFKD`, `StripAccents`, `Lowercase`, then `Precompiled`) against
//! `tokenizers` itself running the same `Sequence`, and inside the ALBERT `tokenizer.json`
//! model made by `transformers`' converter.
//!
//! Input: `[steps][output capacity][chunk size][text...]`; the map of the `Precompiled` step is
//! `nmt_nfkc_cf` (`sp_norm/models/nfkc-ug.model`, the compact form picobpe bakes).
//!
//! Checks (any failure aborts with the input):
//! 1. `steps_normalize` one-shot equals `tokenizers`' `Sequence` on the text with each byte
//!    that is not UTF-8 as U+FFFD of its own (the SentencePiece families' rule);
//! 2. through an output buffer of 4 to 67 bytes (draining and resuming on `OutputFull`; a
//!    `UnitTooLong` must name more than the buffer) and with the input arriving in chunks of 1
//!    to 16 bytes (`last == false` until the end), the bytes are the same;
//! 3. the ALBERT file (`metaspace/models/ms-albert-ws.tokenizer.json`) gives `tokenizers`'
//!    ids one-shot and streamed.
#![no_main]

use libfuzzer_sys::fuzz_target;
use picobpe::normalizer::{steps_normalize, Decompose, Steps};
use picobpe::sentencepiece::CharsMap;
use picobpe::{SpTokenizer, Specials};
use picobpe_fuzz::{check_normalize_contract, escape, Params};
use picobpe_tests::sp::{self, SpSource};
use std::sync::OnceLock;

/// The model whose character map `Precompiled` steps use.
const MAP_MODEL: &str = "nfkc-ug";

/// The steps that byte `b` names: every combination the core applies exactly.
fn steps_of(b: u8) -> Steps {
    let decompose = match b >> 4 & 3 {
        1 => Some(Decompose::Canonical),
        2 => Some(Decompose::Compatibility),
        _ => None,
    };
    let lowercase = b & 2 != 0;
    Steps {
        quotes: b & 1 != 0,
        decompose,
        // A decomposition needs StripAccents after it.
        strip_accents: b & 4 != 0 || decompose.is_some(),
        lowercase,
        lowercase_first: lowercase && b & 8 != 0,
        precompiled: b & 0x40 != 0,
        fffd_per_subpart: false,
    }
}

fn map() -> &'static (CharsMap<'static>, Vec<u8>) {
    static MAP: OnceLock<(CharsMap<'static>, Vec<u8>)> = OnceLock::new();
    MAP.get_or_init(|| {
        let blob = sp::model(MAP_MODEL, SpSource::ModelProto).charsmap;
        (sp::tables(MAP_MODEL, SpSource::Compact).charsmap, blob)
    })
}

/// `tokenizers`' `Sequence` for `steps` on `text`.
fn reference(steps: Steps, text: &str) -> String {
    picobpe_tests::steps::normalize(&picobpe_tests::steps::sequence(steps, &map().1), text)
}

fn albert() -> &'static (SpTokenizer<'static>, tokenizers::Tokenizer) {
    static ALBERT: OnceLock<(SpTokenizer<'static>, tokenizers::Tokenizer)> = OnceLock::new();
    ALBERT.get_or_init(|| {
        let name = "ms-albert-ws";
        let tok = SpTokenizer::new(sp::tables(name, SpSource::TokenizerJson));
        let path = sp::model_dir(name).join(format!("models/{name}.tokenizer.json"));
        let mut reference = tokenizers::Tokenizer::from_file(&path).expect("tokenizers");
        reference.with_padding(None);
        reference.with_truncation(None).expect("no truncation");
        (tok, reference)
    })
}

fuzz_target!(|data: &[u8]| {
    let mut p = Params::new(data);
    let steps = steps_of(p.byte());
    let cap = 4 + p.below(64);
    let chunk = 1 + p.below(16);
    let text = p.rest();
    let fail = |what: &str| panic!("{what}: {steps:?} {}", escape(text));
    let map = map().0;

    // 1. One shot, against tokenizers.
    let s = picobpe_tests::steps::fffd_per_byte(text);
    let want = reference(steps, &s).into_bytes();
    let mut big = vec![0u8; 64 * text.len() + 16];
    match steps_normalize(steps, map, text, true, &mut big) {
        Ok(p) if p.consumed == text.len() && big[..p.written] == want[..] => {}
        other => fail(&format!(
            "one-shot {other:?}, want {:?}",
            String::from_utf8_lossy(&want)
        )),
    }

    // 2. Small output buffers, resumed; input in chunks.
    let through = |t: &[u8], last: bool, out: &mut [u8]| steps_normalize(steps, map, t, last, out);
    if let Err(what) = check_normalize_contract(&through, text, &want, cap, chunk, big.len()) {
        fail(&what);
    }

    // 3. Through the ALBERT model.
    if !steps.precompiled {
        return;
    }
    let (tok, reference) = albert();
    let want: Vec<u32> = reference
        .encode(s.as_str(), false)
        .expect("reference encode")
        .get_ids()
        .to_vec();
    match sp::encode(tok, text) {
        Ok(ids) if ids == want => {}
        other => fail(&format!("encode {other:?}, want {want:?}")),
    }
    match sp::encode_streamed(*tok, Specials::All, text, chunk, 1 + cap % 16) {
        Ok(ids) if ids == want => {}
        other => fail(&format!("streamed encode {other:?}, want {want:?}")),
    }
});
