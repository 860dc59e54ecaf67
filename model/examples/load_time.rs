//! Time loading a model file's live tables: `cargo run --release -p picobpe-model --example
//! load_time -- FILE [RUNS]` prints the milliseconds of `read_tables` (first run in this process:
//! the figure a fresh process sees) and of reading the file's bytes alone.
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).expect("usage: load_time FILE");
    let t = Instant::now();
    let bytes = std::fs::read(path).expect("read");
    let read = t.elapsed();
    let t = Instant::now();
    let crc = crc32fast::hash(&bytes);
    let crc_time = t.elapsed();
    drop(bytes);
    let t = Instant::now();
    let tables = picobpe_model::read_tables(path).expect("load");
    let load = t.elapsed();
    println!(
        "read {:.2} ms, crc {:.2} ms ({crc:08x}), read_tables {:.2} ms ({})",
        read.as_secs_f64() * 1e3,
        crc_time.as_secs_f64() * 1e3,
        load.as_secs_f64() * 1e3,
        matches!(tables, picobpe_model::LiveTables::BytePair(_))
    );
}
