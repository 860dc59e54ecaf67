//! A Unicode form, then `Lowercase`, with whitespace runs made one space
//! (`picobpe::normalizer::Folded`: CLIP's `Sequence[NFC, Replace(Regex("\s+"), " "),
//! Lowercase]` and its kin), against Hugging Face `tokenizers` itself running the same
//! `Sequence`, and CLIP's `tokenizer.json` (`tests/fixtures/clip`) against `tokenizers`.
//!
//! Input: `[variant][output capacity][chunk size][text...]`.
//!
//! Checks (any failure aborts with the input):
//! 1. `folded_normalize` of the text equals the reference's normalization of each valid UTF-8
//!    stretch, with the bytes that are not UTF-8 passed through between them;
//! 2. through an output buffer of 4 to 67 bytes (draining and resuming on `OutputFull`; a
//!    `UnitTooLong` must name more than the buffer) and with the input arriving in chunks of 1
//!    to 16 bytes (`last == false` until the end), the bytes are the same;
//! 3. for valid UTF-8, CLIP's file gives `tokenizers`' ids, one-shot and streamed.
#![no_main]

use libfuzzer_sys::fuzz_target;
use picobpe::normalizer::{folded_normalize, Folded, UnicodeForm};
use picobpe::{Specials, StreamEncoder, Tokenizer};
use picobpe_fuzz::{check_normalize_contract, escape, Params};
use std::sync::OnceLock;
use tokenizers::normalizers::{replace::Replace, unicode, utils::Lowercase, utils::Sequence};
use tokenizers::normalizers::NormalizerWrapper;
use tokenizers::{NormalizedString, Normalizer};

/// The variant byte `b` names: a form (none, NFC, NFD, NFKC, NFKD), `Lowercase` or not, the
/// whitespace runs or not (not after a compatibility form, which the core refuses).
fn folded_of(b: u8) -> Folded {
    let form = match b % 5 {
        1 => Some(UnicodeForm::Nfc),
        2 => Some(UnicodeForm::Nfd),
        3 => Some(UnicodeForm::Nfkc),
        4 => Some(UnicodeForm::Nfkd),
        _ => None,
    };
    let compat = matches!(form, Some(UnicodeForm::Nfkc | UnicodeForm::Nfkd));
    Folded {
        form,
        lowercase: b & 0x20 != 0,
        collapse_whitespace: b & 0x40 != 0 && !compat,
    }
}

/// `tokenizers`' `Sequence` for `f`.
fn sequence(f: Folded) -> Sequence {
    let mut list: Vec<NormalizerWrapper> = Vec::new();
    match f.form {
        Some(UnicodeForm::Nfc) => list.push(unicode::NFC.into()),
        Some(UnicodeForm::Nfd) => list.push(unicode::NFD.into()),
        Some(UnicodeForm::Nfkc) => list.push(unicode::NFKC.into()),
        Some(UnicodeForm::Nfkd) => list.push(unicode::NFKD.into()),
        _ => {}
    }
    if f.collapse_whitespace {
        let regex = tokenizers::normalizers::replace::ReplacePattern::Regex(r"\s+".into());
        list.push(Replace::new(regex, " ").expect("replace").into());
    }
    if f.lowercase {
        list.push(Lowercase.into());
    }
    Sequence::new(list)
}

/// The reference for any bytes: valid stretches normalized, the rest as it is.
fn reference_bytes(f: Folded, bytes: &[u8]) -> Vec<u8> {
    let seq = sequence(f);
    let mut out = Vec::new();
    for chunk in bytes.utf8_chunks() {
        let mut n = NormalizedString::from(chunk.valid());
        seq.normalize(&mut n).expect("normalize");
        out.extend_from_slice(n.get().as_bytes());
        out.extend_from_slice(chunk.invalid());
    }
    out
}

fn clip() -> &'static (Tokenizer<'static>, tokenizers::Tokenizer) {
    static CLIP: OnceLock<(Tokenizer<'static>, tokenizers::Tokenizer)> = OnceLock::new();
    CLIP.get_or_init(|| {
        let path = picobpe_tests::paths::fixtures().join("clip/tokenizer.json");
        let json = std::fs::read(&path).expect("tokenizer.json");
        let file = picobpe_model::TokenizerJson::parse(&json).expect("a tokenizer.json");
        let model = picobpe_model::import::tokenizer_json(&file)
            .expect("import")
            .model;
        let tables = picobpe_model::TableData::new(&model, picobpe_model::PieceTable::Full)
            .expect("tables")
            .to_tables();
        let mut reference = tokenizers::Tokenizer::from_bytes(&json).expect("tokenizers");
        reference.with_padding(None);
        reference.with_truncation(None).expect("no truncation");
        (Tokenizer::new(tables), reference)
    })
}

fuzz_target!(|data: &[u8]| {
    let mut p = Params::new(data);
    let folded = folded_of(p.byte());
    let cap = 4 + p.below(64);
    let chunk = 1 + p.below(16);
    let text = p.rest();
    let fail = |what: &str| panic!("{what}: {folded:?} {}", escape(text));

    // 1. One shot.
    let want = reference_bytes(folded, text);
    let mut big = vec![0u8; 18 * 4 * text.len() + 8];
    match folded_normalize(folded, text, true, &mut big) {
        Ok(p) if p.consumed == text.len() && big[..p.written] == want[..] => {}
        other => fail(&format!("one-shot {other:?}, want {:?}", String::from_utf8_lossy(&want))),
    }

    // 2. Small output buffers, resumed; input in chunks.
    let through = |t: &[u8], last: bool, out: &mut [u8]| folded_normalize(folded, t, last, out);
    if let Err(what) = check_normalize_contract(&through, text, &want, cap, chunk, big.len()) {
        fail(&what);
    }

    // 3. CLIP.
    let Ok(s) = std::str::from_utf8(text) else {
        return;
    };
    let (tok, reference) = clip();
    let want: Vec<u32> = reference
        .encode(s, false)
        .expect("reference encode")
        .get_ids()
        .to_vec();
    match picobpe_tests::check::encode(tok, text, Specials::All) {
        Ok(ids) if ids == want => {}
        other => fail(&format!("encode {other:?}, want {want:?}")),
    }
    let mut enc: Box<StreamEncoder<Tokenizer<'static>, 4096, 8192>> =
        Box::new(StreamEncoder::new(*tok, Specials::All));
    let mut rng = picobpe_tests::check::Rng::new("folded", u64::from(data.first().copied().unwrap_or(0)));
    match picobpe_tests::check::encode_streamed(&mut enc, text, &mut rng) {
        Ok(ids) if ids == want => {}
        other => fail(&format!("streamed {other:?}, want {want:?}")),
    }
});
