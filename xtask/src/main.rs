//! Repository automation (matklad's xtask pattern): `cargo xtask <command>`.
//!
//! Each command lives in its own module; `main` only dispatches.

mod bench;
mod bench_train;
mod c_firmware;
mod capi_models;
mod chart;
mod firmware;
mod firmware_test;
mod footprint;
mod fuzz;
mod grapheme;
mod miri;
mod panic_check;
mod ports;
mod test_all;
mod unicode;
mod unicode_norm;
mod wasm_test;
mod wordpiece_tables;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (cmd, rest) = match args.split_first() {
        Some((c, r)) => (c.as_str(), r),
        None => ("help", &[][..]),
    };
    let result: Result<(), String> = match cmd {
        // COMMANDS: one arm per module, added by the module's author.
        "bench" => bench::run(rest),
        "bench-train" => bench_train::run(rest),
        "c-firmware-test" => c_firmware::run(rest),
        "capi-models-test" => capi_models::run(rest),
        "chart" => chart::run(rest),
        "firmware-run" => firmware::run(rest),
        "firmware-test" => firmware_test::run(rest),
        "footprint" => footprint::run(rest),
        "fuzz" => fuzz::run(rest),
        "miri" => miri::run(rest),
        "panic-check" => panic_check::run(rest),
        "ports-test" => ports::run(rest),
        "gen-unicode" => unicode::run(rest),
        "gen-wordpiece" => wordpiece_tables::run(rest),
        "test" => test_all::run(rest),
        "wasm-test" => wasm_test::run(rest),
        _ => {
            eprintln!(
                "usage: cargo xtask <command>\ncommands: test [--skip-firmware] [--free-disk], \
                 firmware-run, firmware-test, ports-test, c-firmware-test, capi-models-test, \
                 wasm-test, footprint, bench, bench-train, chart, fuzz, miri, panic-check, \
                 gen-unicode, gen-wordpiece"
            );
            Err(format!("unknown command `{cmd}`"))
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask {cmd}: {e}");
            ExitCode::FAILURE
        }
    }
}
