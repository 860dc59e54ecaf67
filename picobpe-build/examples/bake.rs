//! Bake a model outside a build script: `cargo run --release -p picobpe-build --example bake --
//! MODEL OUT_DIR [full|minimal]` writes `OUT_DIR/picobpe_tables.rs` (+ its token bytes) and
//! prints the table sizes and the time taken.

use std::process::ExitCode;
use std::time::Instant;

use picobpe_build::{Bake, PieceTable};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (model, out_dir, pieces) = match args.as_slice() {
        [m, o] => (m, o, PieceTable::Full),
        [m, o, p] if p == "full" => (m, o, PieceTable::Full),
        [m, o, p] if p == "minimal" => (m, o, PieceTable::Minimal),
        _ => {
            eprintln!("usage: bake MODEL OUT_DIR [full|minimal]");
            return ExitCode::FAILURE;
        }
    };
    let start = Instant::now();
    match Bake::new(model)
        .pieces(pieces)
        .out_dir(out_dir)
        .cargo_directives(false)
        .run()
    {
        Ok(baked) => {
            let source_len = std::fs::metadata(&baked.source).map_or(0, |m| m.len());
            println!(
                "baked {model} ({pieces:?} pieces) in {:.2?}: {} ({source_len} B of source)\n{}",
                start.elapsed(),
                baked.source.display(),
                baked.sizes
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
