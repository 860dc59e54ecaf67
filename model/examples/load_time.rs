//! Time loading a model file's live tables, and encoding with them:
//! `cargo run --release -p picobpe-model --example load_time -- MODEL [TEXT]` prints the
//! milliseconds of reading the file's bytes, of their CRC, and of `read_tables` (the first load
//! in this process, as a fresh CLI process sees it). With TEXT, it also encodes TEXT (ordinary,
//! no cache) with the loaded tables and with tables built from the model (`TableData::new`),
//! and prints MB/s for each: the mapped tables must not be slower.
use std::time::Instant;

use picobpe::{Specials, Tokenizer};
use picobpe_model::{AnyModel, LiveTables, PieceTable, TableData};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: load_time MODEL [TEXT]");
        std::process::exit(2);
    };
    let t = Instant::now();
    let bytes = std::fs::read(path).expect("read");
    let read = t.elapsed();
    let t = Instant::now();
    let crc = crc32fast::hash(&bytes);
    let crc_time = t.elapsed();
    let t = Instant::now();
    let loaded = picobpe_model::read_tables(path).expect("load");
    let load = t.elapsed();
    println!(
        "read {:.2} ms, crc {:.2} ms ({crc:08x}), read_tables {:.2} ms",
        read.as_secs_f64() * 1e3,
        crc_time.as_secs_f64() * 1e3,
        load.as_secs_f64() * 1e3,
    );
    let Some(text) = args.get(2) else { return };
    let LiveTables::BytePair(mapped) = loaded else {
        eprintln!("encode timing is for byte-level models");
        return;
    };
    let AnyModel::BytePair(model) = AnyModel::from_bytes(&bytes).expect("model") else {
        return;
    };
    let built = TableData::new(&model, PieceTable::Full)
        .expect("tables")
        .to_tables();
    let text = std::fs::read(text).expect("text");
    let mut ids = vec![0u32; text.len() + 16];
    for round in 0..3 {
        for (name, tables) in [("mapped", mapped), ("built", built)] {
            let tok = Tokenizer::new(tables);
            let t = Instant::now();
            let n = tok.encode(&text, &mut ids, Specials::None).expect("encode");
            let s = t.elapsed().as_secs_f64();
            println!(
                "round {round} {name:>6}: {n} ids, {:.1} MB/s",
                text.len() as f64 / s / 1e6
            );
        }
    }
}
