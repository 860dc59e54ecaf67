//! The Unicode normalization forms, alone and inside a byte-level model, against the reference
//! library: Hugging Face `tokenizers` (the crate itself: its `NFC`, `NFD`, `NFKC`, `NFKD`
//! normalizers, `Nmt` then `NFKC`, and the Qwen2-style `tokenizer.json` fixture with its NFC normalizer).
//!
//! Input: `[form][output capacity][chunk size][text...]`.
//!
//! Checks (any failure aborts with the input):
//! 1. `normalize` of the text equals the reference's normalization of each valid UTF-8 stretch,
//!    with the bytes that are not UTF-8 passed through between them (`Nmt` + `NFKC`: made
//!    spaces);
//! 2. through an output buffer of 4 to 67 bytes (draining and resuming on `OutputFull`; a
//!    `UnitTooLong` must name more than the buffer) and with the input arriving in chunks of 1
//!    to 16 bytes (`last == false` until the end), the bytes are the same;
//! 3. for valid UTF-8, the Qwen2-style model (its NFC, or the selected form in its place) gives
//!    `tokenizers`' ids one-shot, through small buffers (1 to 16 ids, resuming at `consumed`,
//!    growing to `needed`), and streamed.
#![no_main]

use libfuzzer_sys::fuzz_target;
use picobpe::normalizer::{normalize, UnicodeForm};
use picobpe::{EncodeError, Specials, StreamEncoder, Tokenizer};
use picobpe_fuzz::{check_normalize_contract, escape, Params};
use std::sync::OnceLock;

/// The forms, with the `tokenizer.json` normalizer that names each alone (the last,
/// `Nmt` + `NFKC`, is two steps: no model is made with it).
const FORMS: [(UnicodeForm, &str); 5] = [
    (UnicodeForm::Nfc, "NFC"),
    (UnicodeForm::Nfd, "NFD"),
    (UnicodeForm::Nfkc, "NFKC"),
    (UnicodeForm::Nfkd, "NFKD"),
    (UnicodeForm::NmtNfkc, ""),
];

fn reference(form: UnicodeForm, text: &str) -> String {
    picobpe_tests::reference::normalize_str(form, text)
}

/// The reference for any bytes: valid stretches normalized, the rest as it is (with `Nmt`,
/// each such byte is U+FFFD, which it makes a space).
fn reference_bytes(form: UnicodeForm, bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for chunk in bytes.utf8_chunks() {
        out.extend_from_slice(reference(form, chunk.valid()).as_bytes());
        if form == UnicodeForm::NmtNfkc {
            out.extend(chunk.invalid().iter().map(|_| b' '));
        } else {
            out.extend_from_slice(chunk.invalid());
        }
    }
    out
}

struct Model {
    tok: Tokenizer<'static>,
    reference: tokenizers::Tokenizer,
}

fn model(i: usize) -> &'static Model {
    static CACHE: [OnceLock<Model>; 4] = [const { OnceLock::new() }; 4];
    CACHE[i].get_or_init(|| {
        let path = picobpe_tests::paths::fixtures().join("hf_bpe/qwen2-8k/tokenizer.json");
        let json = std::fs::read(&path).expect("tokenizer.json");
        let mut value: serde_json::Value = serde_json::from_slice(&json).expect("JSON");
        value["normalizer"] = serde_json::json!({ "type": FORMS[i].1 });
        let json = serde_json::to_vec(&value).expect("JSON");
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
        Model {
            tok: Tokenizer::new(tables),
            reference,
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let mut p = Params::new(data);
    let which = p.below(FORMS.len());
    let form = FORMS[which].0;
    let cap = 4 + p.below(64);
    let chunk = 1 + p.below(16);
    let text = p.rest();
    let fail = |what: &str| panic!("{what}: {form:?} {}", escape(text));

    // 1. One shot.
    let want = reference_bytes(form, text);
    let mut big = vec![0u8; 18 * 4 * text.len() + 8];
    match normalize(form, text, true, &mut big) {
        Ok(p) if p.consumed == text.len() && big[..p.written] == want[..] => {}
        other => fail(&format!("one-shot {other:?}")),
    }

    // 2. Small output buffers, resumed; input in chunks.
    let through = |t: &[u8], last: bool, out: &mut [u8]| normalize(form, t, last, out);
    if let Err(what) = check_normalize_contract(&through, text, &want, cap, chunk, big.len()) {
        fail(&what);
    }

    // 3. Through a model.
    let Ok(s) = std::str::from_utf8(text) else {
        return;
    };
    if FORMS[which].1.is_empty() {
        return;
    }
    let m = model(which);
    let want: Vec<u32> = m
        .reference
        .encode(s, false)
        .expect("reference encode")
        .get_ids()
        .to_vec();
    match picobpe_tests::check::encode(&m.tok, text, Specials::All) {
        Ok(ids) if ids == want => {}
        other => fail(&format!("encode {other:?}, want {want:?}")),
    }
    let (mut got, mut from, mut out) = (Vec::new(), 0usize, vec![0u32; 1 + cap % 16]);
    loop {
        match m.tok.encode(&text[from..], &mut out, Specials::All) {
            Ok(n) => {
                got.extend_from_slice(&out[..n]);
                break;
            }
            Err(EncodeError::OutputFull { consumed, written }) => {
                if consumed == 0 && written == 0 {
                    fail("encode: OutputFull without progress");
                }
                got.extend_from_slice(&out[..written]);
                from += consumed;
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
    let mut enc: Box<StreamEncoder<Tokenizer<'static>, 4096, 16384>> =
        Box::new(StreamEncoder::new(m.tok, Specials::All));
    let (mut got, mut ids) = (Vec::new(), [0u32; 7]);
    for piece in text.chunks(chunk) {
        let mut rest = piece;
        while !rest.is_empty() {
            let n = enc.push(rest).expect("push");
            rest = &rest[n..];
            loop {
                match enc.take(&mut ids) {
                    Ok(0) => break,
                    Ok(n) => got.extend_from_slice(&ids[..n]),
                    Err(e) => fail(&format!("stream take {e:?}")),
                }
            }
        }
    }
    enc.finish();
    loop {
        match enc.take(&mut ids) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&ids[..n]),
            Err(e) => fail(&format!("stream finish {e:?}")),
        }
    }
    if got != want {
        fail(&format!("streamed encode {got:?}, want {want:?}"));
    }
});
