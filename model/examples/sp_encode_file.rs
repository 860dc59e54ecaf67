//! Encode a file with a SentencePiece model a number of times (for profilers):
//! `cargo run --release -p picobpe-model --example sp_encode_file -- MODEL.model FILE [RUNS]
//! [--chunks]`, where MODEL.model is a SentencePiece `tokenizer.model`. Each line is one call,
//! or with `--chunks` each text of at most 64 KiB cut at line ends (as `picobpe-bench-sp` does).
//! Prints ids and MB/s per run.

use std::time::Instant;

use picobpe::{EncodeError, SpTokenizer, Specials, Tokenize};
use picobpe_model::sentencepiece::import_model_proto;
use picobpe_model::SpTableData;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [model, file, rest @ ..] = args.as_slice() else {
        eprintln!("usage: sp_encode_file MODEL.model FILE [RUNS]");
        std::process::exit(2);
    };
    let runs: usize = rest.first().and_then(|r| r.parse().ok()).unwrap_or(3);
    let chunks = rest.iter().any(|a| a == "--chunks");
    let model = import_model_proto(&std::fs::read(model).expect("model")).expect("import");
    let tables = SpTableData::new(&model).expect("valid").to_tables();
    let tok = SpTokenizer::new(tables);
    let text = std::fs::read(file).expect("file");
    let mut out = vec![0u32; 1 << 16];
    for _ in 0..runs {
        let start = Instant::now();
        let mut n = 0;
        for chunk in texts(&text, chunks) {
            let mut from = 0;
            loop {
                match tok.encode_from(chunk, from, &mut out, Specials::All, &mut []) {
                    Ok(k) => {
                        n += k;
                        break;
                    }
                    Err(EncodeError::OutputFull { consumed, written }) => {
                        n += written;
                        from = consumed;
                    }
                    Err(EncodeError::PieceTooLong { needed, .. }) => out.resize(needed, 0),
                }
            }
        }
        let s = start.elapsed().as_secs_f64();
        println!("{n} ids, {:.1} MB/s", text.len() as f64 / s / 1e6);
    }
}

/// The calls' texts: lines, or texts of at most 64 KiB cut after a line end.
fn texts(text: &[u8], chunks: bool) -> Vec<&[u8]> {
    let lines: Vec<&[u8]> = text.chunk_by(|_, &b| b != b'\n').collect();
    if !chunks {
        return lines;
    }
    let mut out = Vec::new();
    let mut start = 0;
    let mut len = 0;
    for line in lines {
        if len + line.len() > 64 * 1024 && len > 0 {
            out.push(&text[start..start + len]);
            start += len;
            len = 0;
        }
        len += line.len();
    }
    if len > 0 {
        out.push(&text[start..start + len]);
    }
    out
}
