//! The SentencePiece BPE and Unigram trainer (`picobpe_model::sentencepiece::SpTrainer`) on small
//! arbitrary corpora (any bytes, invalid UTF-8 included) with arbitrary options. Its reference
//! runs against `spm_train` are `tests/tests/train_sentencepiece.rs`; here the checks are the
//! ones that need no reference:
//!
//! - it returns a model or an error, never panics;
//! - the model does not depend on the number of threads (1 and 2 give the same pieces; a
//!   Unigram model depends on `num_threads`, which is fixed here, not on the threads run);
//! - the model has exactly `vocab_size` pieces, reads back from its `sentencepiece.model`, and
//!   builds tables;
//! - with byte fallback, every line of the corpus encodes and decodes back to the text the
//!   normalizer makes of it (spaces for `▁`, on both sides: a `▁` with no piece of its own
//!   decodes from its bytes as `▁`, as in `sentencepiece`; leading spaces aside).
#![no_main]

use libfuzzer_sys::fuzz_target;
use picobpe_fuzz::Params;
use picobpe_model::sentencepiece::{import_model_proto, SpModelType, SpTrainer};
use picobpe_model::SpTableData;

fuzz_target!(|data: &[u8]| {
    let mut p = Params::new(data);
    let v = p.byte();
    let vocab = 260 + usize::from(v) % 200;
    let unigram = v & 1 == 1;
    let flags = p.byte();
    let more = p.byte();
    let corpus = p.rest();
    let trainer = SpTrainer {
        vocab_size: vocab,
        character_coverage: if flags & 1 != 0 { 1.0 } else { 0.9995 },
        byte_fallback: flags & 2 != 0,
        split_digits: flags & 4 != 0,
        split_by_whitespace: flags & 8 == 0,
        split_by_unicode_script: flags & 16 == 0,
        split_by_number: flags & 32 == 0,
        allow_whitespace_only_pieces: flags & 64 != 0,
        add_dummy_prefix: flags & 128 == 0,
        remove_extra_whitespaces: more & 1 == 0,
        max_sentencepiece_length: 1 + usize::from(more >> 1 & 15),
        user_defined_symbols: if more & 32 != 0 {
            vec!["ab".into(), "<x>".into()]
        } else {
            Vec::new()
        },
        control_symbols: if more & 64 != 0 {
            vec!["<c>".into()]
        } else {
            Vec::new()
        },
        max_sentence_length: 10 + usize::from(more >> 7) * 200,
        model_type: if unigram {
            SpModelType::Unigram
        } else {
            SpModelType::Bpe
        },
        num_threads: 1 + usize::from(v >> 5),
        ..SpTrainer::default()
    };
    let one = trainer.train(&[corpus], 1, &[], |_| {});
    let two = trainer.train(&[corpus], 2, &[], |_| {});
    let (one, two) = match (one, two) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(a), Err(b)) => {
            assert_eq!(
                a.to_string(),
                b.to_string(),
                "errors differ by thread count"
            );
            return;
        }
        (a, b) => panic!("thread counts disagree: {:?} vs {:?}", a.is_ok(), b.is_ok()),
    };
    assert_eq!(one.model, two.model, "models differ by thread count");
    assert_eq!(one.model.pieces.len(), vocab);
    assert_eq!(
        import_model_proto(&one.model_proto).expect("proto reads back"),
        one.model
    );
    let data = SpTableData::new(&one.model).expect("tables");
    let tables = data.tables();
    let tok = picobpe::SpTokenizer::new(&tables);
    if !trainer.byte_fallback || !trainer.user_defined_symbols.is_empty() {
        return;
    }
    for line in corpus.split(|&b| b == b'\n') {
        // The encoder merges a word in the output buffer: grow it until the whole line fits.
        let mut ids = vec![0u32; 8 * line.len() + 16];
        let n = loop {
            match tok.encode(line, &mut ids) {
                Ok(n) => break n,
                Err(picobpe::EncodeError::PieceTooLong { needed, .. }) => {
                    ids.resize(needed.max(2 * ids.len()), 0)
                }
                Err(picobpe::EncodeError::OutputFull { .. }) => ids.resize(2 * ids.len(), 0),
            }
        };
        let mut norm = vec![0u8; 4 * line.len() + 16];
        let len = tok
            .normalize(line, &mut norm)
            .expect("a sentencepiece normalizer");
        let text = String::from_utf8(norm[..len].to_vec()).expect("normalized UTF-8");
        // Leading spaces are compared apart: the decoder drops the dummy prefix's `▁`, and
        // with remove_extra_whitespaces every leading `▁` of the first pieces (as
        // `sentencepiece`'s `Decode` does), which depends on the pieces. A `▁` that is no
        // piece of the vocabulary is encoded as byte pieces, and `sentencepiece` decodes byte
        // pieces to their bytes, `▁` included: so `▁` and ` ` count as one on both sides.
        let want = text.replace('\u{2581}', " ");
        let mut out = vec![0u8; 4 * want.len() + 64];
        let got = tok.decode(&ids[..n], &mut out).expect("decode");
        assert_eq!(
            String::from_utf8_lossy(&out[..got])
                .replace('\u{2581}', " ")
                .trim_start_matches(' '),
            want.trim_start_matches(' '),
            "decode(encode({:?}))",
            String::from_utf8_lossy(line)
        );
    }
});
