//! `tokenizers`' `Precompiled` normalizer (a SentencePiece character map applied a grapheme
//! cluster at a time) against a naive one written here, against `tokenizers` itself, and
//! inside a T5 `tokenizer.json` model.
//!
//! Input: `[map][output capacity][chunk size][text...]`; the maps are `nmt_nfkc` in the
//! compact form picobpe bakes (`sp_norm/models/nfkc-bpe.model`) and custom TSV rules as the
//! double array (`nfkc-tsv.model`).
//!
//! The naive normalizer: bytes that are not UTF-8 become U+FFFD one each (the SentencePiece
//! families' rule); the text is cut into clusters by `unicode-segmentation` 1.12.0 (the crate
//! `tokenizers` 0.22.2 uses); a cluster under 6 bytes whose prefix (at a character end) is a
//! key of the map — the map's pairs in a `HashMap` — is that shortest key's replacement; else
//! each character is its replacement or itself.
//!
//! Checks (any failure aborts with the input):
//! 1. `precompiled_normalize` one-shot equals the naive normalizer and `tokenizers`'
//!    `Precompiled` (on the same U+FFFD text);
//! 2. through an output buffer of 4 to 67 bytes (draining and resuming on `OutputFull`; a
//!    `UnitTooLong` must name more than the buffer) and with the input arriving in chunks of 1
//!    to 16 bytes (`last == false` until the end), the bytes are the same;
//! 3. the T5 file over the same `nmt_nfkc` map (`metaspace/models/ms-t5-nfkc.tokenizer.json`)
//!    gives `tokenizers`' ids one-shot, resumed through a small buffer and streamed.
#![no_main]

use libfuzzer_sys::fuzz_target;
use picobpe::normalizer::precompiled_normalize;
use picobpe::sentencepiece::CharsMap;
use picobpe::{EncodeError, SpTokenizer, Specials, Tokenize};
use picobpe_fuzz::{check_normalize_contract, escape, Params};
use picobpe_tests::sp::{self, SpSource};
use std::collections::HashMap;
use std::sync::OnceLock;
use tokenizers::normalizers::precompiled::Precompiled;
use tokenizers::{NormalizedString, Normalizer};
use unicode_segmentation::UnicodeSegmentation;

/// The maps: (model, source whose tables picobpe reads).
const MAPS: [(&str, SpSource); 2] = [
    ("nfkc-bpe", SpSource::Compact),
    ("nfkc-tsv", SpSource::ModelProto),
];

struct Map {
    map: CharsMap<'static>,
    pairs: HashMap<Vec<u8>, Vec<u8>>,
    reference: Precompiled,
}

fn map(i: usize) -> &'static Map {
    static CACHE: [OnceLock<Map>; 2] = [const { OnceLock::new() }; 2];
    CACHE[i].get_or_init(|| {
        let (name, source) = MAPS[i];
        let blob = sp::model(name, SpSource::ModelProto).charsmap;
        let parts = picobpe_model::sentencepiece::charsmap::parse(&blob).expect("a valid map");
        Map {
            map: sp::tables(name, source).charsmap,
            pairs: parts.pairs.into_iter().collect(),
            reference: Precompiled::from(&blob).expect("tokenizers reads the map"),
        }
    })
}

fn naive(pairs: &HashMap<Vec<u8>, Vec<u8>>, text: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for g in text.graphemes(true) {
        if g.len() < 6 {
            let shortest = g
                .char_indices()
                .map(|(i, c)| &g.as_bytes()[..i + c.len_utf8()])
                .find_map(|prefix| pairs.get(prefix));
            if let Some(r) = shortest {
                out.extend_from_slice(r);
                continue;
            }
        }
        for c in g.chars() {
            let mut buf = [0u8; 4];
            let own = c.encode_utf8(&mut buf).as_bytes();
            out.extend_from_slice(pairs.get(own).map_or(own, Vec::as_slice));
        }
    }
    out
}

fn t5() -> &'static (SpTokenizer<'static>, tokenizers::Tokenizer) {
    static T5: OnceLock<(SpTokenizer<'static>, tokenizers::Tokenizer)> = OnceLock::new();
    T5.get_or_init(|| {
        let tok = SpTokenizer::new(sp::tables("ms-t5-nfkc", SpSource::TokenizerJson));
        let path = sp::model_dir("ms-t5-nfkc").join("models/ms-t5-nfkc.tokenizer.json");
        let mut reference = tokenizers::Tokenizer::from_file(&path).expect("tokenizers");
        reference.with_padding(None);
        reference.with_truncation(None).expect("no truncation");
        (tok, reference)
    })
}

fuzz_target!(|data: &[u8]| {
    let mut p = Params::new(data);
    let which = p.below(MAPS.len());
    let cap = 4 + p.below(64);
    let chunk = 1 + p.below(16);
    let text = p.rest();
    let m = map(which);
    let fail = |what: &str| panic!("{what}: {} {}", MAPS[which].0, escape(text));

    // 1. One shot, against the naive normalizer and tokenizers.
    let s = picobpe_tests::steps::fffd_per_byte(text);
    let want = naive(&m.pairs, &s);
    let mut n = NormalizedString::from(s.as_str());
    m.reference
        .normalize(&mut n)
        .expect("tokenizers normalizes");
    if n.get().as_bytes() != want {
        fail(&format!(
            "naive {:?} != tokenizers {:?}",
            escape(&want),
            n.get()
        ));
    }
    let mut big = vec![0u8; 64 * text.len() + 16];
    match precompiled_normalize(m.map, text, true, &mut big) {
        Ok(p) if p.consumed == text.len() && big[..p.written] == want[..] => {}
        other => fail(&format!("one-shot {other:?}")),
    }

    // 2. Small output buffers, resumed; input in chunks.
    let through = |t: &[u8], last: bool, out: &mut [u8]| precompiled_normalize(m.map, t, last, out);
    if let Err(what) = check_normalize_contract(&through, text, &want, cap, chunk, big.len()) {
        fail(&what);
    }

    // 3. Through the T5 model.
    if which != 0 {
        return;
    }
    let (tok, reference) = t5();
    let want: Vec<u32> = reference
        .encode(s.as_str(), false)
        .expect("reference encode")
        .get_ids()
        .to_vec();
    match sp::encode(tok, text) {
        Ok(ids) if ids == want => {}
        other => fail(&format!("encode {other:?}, want {want:?}")),
    }
    // Through a small buffer: drained and resumed on `OutputFull`, grown to `needed` on
    // `PieceTooLong` (which must name more than the buffer).
    let (mut got, mut from, mut out) = (Vec::new(), 0usize, vec![0u32; 1 + cap % 16]);
    loop {
        match tok.encode_from(text, from, &mut out, Specials::All, &mut []) {
            Ok(n) => {
                got.extend_from_slice(&out[..n]);
                break;
            }
            Err(EncodeError::OutputFull { consumed, written }) => {
                if consumed <= from && written == 0 {
                    fail("encode: OutputFull without progress");
                }
                got.extend_from_slice(&out[..written]);
                from = consumed;
            }
            Err(EncodeError::PieceTooLong { needed, .. }) => {
                if needed <= out.len() {
                    fail("PieceTooLong that fits");
                }
                out.resize(needed, 0);
            }
        }
    }
    if got != want {
        fail(&format!("resumed encode {got:?}, want {want:?}"));
    }
    match sp::encode_streamed(*tok, Specials::All, text, chunk, 1 + cap % 16) {
        Ok(ids) if ids == want => {}
        other => fail(&format!("streamed encode {other:?}, want {want:?}")),
    }
});
