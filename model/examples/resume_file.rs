//! Encode a file through an output buffer of N ids, draining and resuming at each `OutputFull`
//! (`encode_from` the `consumed` offset), and print the time beside a one-shot encode: what a
//! device with a small id buffer pays for a long text. The ids must match the one-shot ids.
//!
//! `cargo run --release -p picobpe-model --example resume_file -- MODEL FILE N`
//! where MODEL is any picobpe model file (`host-trainer import … --out MODEL`).

use std::time::Instant;

use picobpe::{EncodeError, Specials, Tokenize};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [model, file, cap] = args.as_slice() else {
        eprintln!("usage: resume_file MODEL FILE N");
        std::process::exit(2);
    };
    let cap: usize = cap.parse().expect("N");
    let tables = picobpe_model::read_tables(model).expect("model");
    let tok = tables.tokenizer();
    let text = std::fs::read(file).expect("file");

    let t = Instant::now();
    let mut out = vec![0u32; 4 * text.len() + 64];
    let n = tok
        .encode_from(&text, 0, &mut out, Specials::All, &mut [])
        .expect("one-shot encode");
    out.truncate(n);
    let one_shot = t.elapsed();

    let t = Instant::now();
    let (mut got, mut from, mut calls) = (Vec::with_capacity(n), 0, 0usize);
    let mut buf = vec![0u32; cap];
    loop {
        calls += 1;
        match tok.encode_from(&text, from, &mut buf, Specials::All, &mut []) {
            Ok(w) => {
                got.extend_from_slice(&buf[..w]);
                break;
            }
            Err(EncodeError::OutputFull { consumed, written }) => {
                got.extend_from_slice(&buf[..written]);
                from = consumed;
            }
            Err(EncodeError::PieceTooLong { needed, .. }) => buf.resize(needed, 0),
        }
    }
    let resumed = t.elapsed();
    assert_eq!(got, out, "resumed ids differ from the one-shot ids");
    println!(
        "{} bytes, {n} ids: one shot {:.3} s; through {cap}-id buffers ({calls} calls) {:.3} s",
        text.len(),
        one_shot.as_secs_f64(),
        resumed.as_secs_f64()
    );
}
