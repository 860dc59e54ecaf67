//! `host-trainer`: train, import, encode, decode and inspect picobpe models.
//!
//! Encode and decode run the core `picobpe` crate on tables built at run time by
//! `picobpe-model` (`TableData::to_tables`, perfect hashes from `phf_generator`) — the same
//! lookups, on the same layout, as tables baked into firmware by `picobpe-build`.

mod cli_decode;
mod cli_encode;
mod cli_import;
mod cli_inspect;
mod input;
mod train;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// picobpe host tool.
#[derive(Parser)]
#[command(name = "host-trainer", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Train a byte-level BPE model on a corpus (CS336 semantics).
    Train(Box<train::TrainArgs>),
    /// Count the pieces of one shard of a corpus into a count file (for `train --counts`).
    CountPieces(train::CountPiecesArgs),
    /// Sum count files into one (a reduce step for sharded training).
    MergeCounts(train::MergeCountsArgs),
    /// Convert a tiktoken rank file or an HF vocab.json + merges.txt into a .model file.
    Import(cli_import::ImportArgs),
    /// Encode raw bytes (FILE or stdin) to ids on stdout (decimal text or binary).
    Encode(cli_encode::EncodeArgs),
    /// Encode raw bytes (FILE or stdin) and print only the number of ids.
    Count(cli_encode::Input),
    /// Decode whitespace-separated ids (FILE or stdin) to raw bytes on stdout.
    Decode(cli_decode::DecodeArgs),
    /// Describe a model: vocabulary, merges, specials, pattern, table sizes.
    Inspect(cli_inspect::InspectArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Train(args) => train::train(*args).map_err(|e| e.to_string()),
        Command::CountPieces(args) => train::count_pieces(args).map_err(|e| e.to_string()),
        Command::MergeCounts(args) => train::merge_counts(args).map_err(|e| e.to_string()),
        Command::Import(args) => cli_import::run(args),
        Command::Encode(args) => cli_encode::run(args),
        Command::Count(args) => cli_encode::run_count(args),
        Command::Decode(args) => cli_decode::run(args),
        Command::Inspect(args) => cli_inspect::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}
