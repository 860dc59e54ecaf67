//! Bake a picobpe model into Rust source from `build.rs` (the `*-build` convention).
//!
//! ```no_run
//! // build.rs
//! fn main() {
//!     picobpe_build::bake("tokenizer.model").unwrap();
//! }
//! ```
//! ```ignore
//! // src/lib.rs (or main.rs)
//! mod baked {
//!     include!(concat!(env!("OUT_DIR"), "/picobpe_tables.rs"));
//! }
//! let tokenizer = picobpe::Tokenizer::new(&baked::TABLES);
//! ```
//!
//! The generated file defines `pub static TABLES: ::picobpe::Tables<'static>` for a
//! byte-level BPE model, or `pub static TABLES: ::picobpe::SpTables<'static>` for a
//! SentencePiece BPE model (use it with `picobpe::SpTokenizer`), plus private statics it
//! points at; it needs only the `picobpe` crate. Include it in a module of its own.
//! The perfect-hash indexes (merges, whole pieces) are PtrHash tables computed by
//! `picobpe-model` with `phf_generator` and printed as plain arrays (pilots, remap, keys, ids);
//! token bytes are written next to the source and pulled in with `include_bytes!` (fast to
//! compile); whole pieces are stored as ids and compared against those token bytes, so they
//! cost 4 bytes each ([`Bake::piece_keys`] adds 8 bytes each for a faster check: pieces of up
//! to 7 bytes without the token bytes, longer ones without the offsets). Every table is a `static` in read-only memory.
//!
//! Cost (measured here): the bake of cl100k_base takes 1.2 s in the firmware's build script, and
//! rebuilding the firmware around the new tables about 10 s (the arrays are plain integers; token
//! bytes are not parsed by rustc). Build scripts run unoptimised by default:
//! `[profile.release.build-override] opt-level = 3` makes the bake itself several times faster.
//!
//! Cargo integration: prints `cargo:rerun-if-changed=<model>` and
//! `cargo:rerun-if-env-changed=PICOBPE_BAKE_VERBOSE`; with `PICOBPE_BAKE_VERBOSE` set (non-empty)
//! the table sizes are shown as `cargo:warning=` lines.
#![deny(missing_docs)]
// The first doc example is a whole build.rs, `fn main` included.
#![allow(clippy::needless_doctest_main)]

mod codegen;

use core::fmt;
use std::path::{Path, PathBuf};

use picobpe_model::sentencepiece::SpTableSizes;
use picobpe_model::wordpiece::WpTableSizes;
use picobpe_model::{AnyModel, ModelError, SpTableData, TableData, TableSizes, WpTableData};

pub use codegen::{generate, generate_sp, generate_wp};
pub use picobpe_model::PieceTable;

/// Environment variable that makes the bake print table sizes as cargo warnings.
pub const VERBOSE_ENV: &str = "PICOBPE_BAKE_VERBOSE";

/// Bake `model` into `$OUT_DIR/picobpe_tables.rs` with the default options.
pub fn bake(model: impl AsRef<Path>) -> Result<Baked, BakeError> {
    Bake::new(model).run()
}

/// Bake options (builder). Defaults: full whole-piece table without keys, file
/// `picobpe_tables.rs`, directory `$OUT_DIR`.
#[derive(Clone, Debug)]
pub struct Bake {
    model: PathBuf,
    pieces: PieceTable,
    piece_keys: bool,
    module_name: String,
    out_dir: Option<PathBuf>,
    cargo: bool,
}

/// What a bake wrote.
#[derive(Clone, Debug)]
pub struct Baked {
    /// The generated Rust source.
    pub source: PathBuf,
    /// The token bytes file it includes.
    pub token_bytes: PathBuf,
    /// Flash bytes per table on a 32-bit target.
    pub sizes: BakedSizes,
}

/// Flash bytes per table of a bake, by model kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BakedSizes {
    /// A byte-level BPE model's tables.
    BytePair(TableSizes),
    /// A SentencePiece BPE model's tables.
    SentencePiece(SpTableSizes),
    /// A WordPiece model's tables.
    WordPiece(WpTableSizes),
}

impl BakedSizes {
    /// Sum of all tables.
    pub fn total(&self) -> usize {
        match self {
            BakedSizes::BytePair(s) => s.total(),
            BakedSizes::SentencePiece(s) => s.total(),
            BakedSizes::WordPiece(s) => s.total(),
        }
    }
}

impl fmt::Display for BakedSizes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BakedSizes::BytePair(s) => s.fmt(f),
            BakedSizes::SentencePiece(s) => s.fmt(f),
            BakedSizes::WordPiece(s) => s.fmt(f),
        }
    }
}

impl Bake {
    /// Bake the model file at `model`.
    pub fn new(model: impl AsRef<Path>) -> Self {
        Bake {
            model: model.as_ref().to_owned(),
            pieces: PieceTable::Full,
            piece_keys: false,
            module_name: "picobpe_tables".to_owned(),
            out_dir: None,
            cargo: true,
        }
    }

    /// Which whole-piece entries to bake: [`PieceTable::Full`] (fastest, default) or
    /// [`PieceTable::Minimal`] (smallest; only what exactness needs).
    pub fn pieces(mut self, pieces: PieceTable) -> Self {
        self.pieces = pieces;
        self
    }

    /// Whether to bake the whole-piece keys (default false): 8 more bytes of flash per
    /// whole-piece entry (+800 KB for cl100k_base's full table) for a check of pieces of 1–7
    /// bytes without reading the token bytes, and of longer ones without reading the offsets
    /// (about 10 % faster encoding on a host with caches; see `picobpe::PieceMap`). Off by
    /// default because flash is usually the scarcer resource; host-built tables
    /// (`TableData::to_tables`) have them.
    pub fn piece_keys(mut self, on: bool) -> Self {
        self.piece_keys = on;
        self
    }

    /// Name of the generated file, `<name>.rs` (default `picobpe_tables`). Use distinct names to
    /// bake several models into one crate, each included in its own module.
    pub fn module_name(mut self, name: &str) -> Self {
        self.module_name = name.to_owned();
        self
    }

    /// Write into `dir` instead of `$OUT_DIR` (for use outside build scripts).
    pub fn out_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.out_dir = Some(dir.as_ref().to_owned());
        self
    }

    /// Whether to print `cargo:` directives (default true; turn off outside build scripts).
    pub fn cargo_directives(mut self, on: bool) -> Self {
        self.cargo = on;
        self
    }

    /// Read, validate and bake the model.
    pub fn run(self) -> Result<Baked, BakeError> {
        if self.cargo {
            println!("cargo:rerun-if-changed={}", self.model.display());
            println!("cargo:rerun-if-env-changed={VERBOSE_ENV}");
        }
        if self.module_name.is_empty()
            || !self
                .module_name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.')
        {
            return Err(BakeError::BadModuleName(self.module_name));
        }
        let out_dir = match self.out_dir {
            Some(dir) => dir,
            None => std::env::var_os("OUT_DIR")
                .map(PathBuf::from)
                .ok_or(BakeError::NoOutDir)?,
        };
        let model = AnyModel::read(&self.model).map_err(|e| BakeError::Model {
            path: self.model.clone(),
            source: e,
        })?;
        let token_bytes = out_dir.join(format!("{}.token_bytes.bin", self.module_name));
        let source_path = out_dir.join(format!("{}.rs", self.module_name));
        let write = |path: &Path, bytes: &[u8]| {
            std::fs::write(path, bytes).map_err(|source| BakeError::Io {
                path: path.to_owned(),
                source,
            })
        };
        let name = self.model.display().to_string();
        let invalid = |source| BakeError::Model {
            path: self.model.clone(),
            source,
        };
        // The token bytes, the generated source and the table sizes of either kind.
        let (bytes, source, sizes) = match model {
            AnyModel::BytePair(model) => {
                let mut data = TableData::for_bake(&model, self.pieces)
                    .map_err(|e| invalid(ModelError::Invalid(e)))?;
                if !self.piece_keys {
                    data = data.without_piece_keys();
                }
                let (source, sizes) = (generate(&data, &name, &token_bytes), data.sizes());
                (
                    data.token_bytes.into_owned(),
                    source,
                    BakedSizes::BytePair(sizes),
                )
            }
            AnyModel::SentencePiece(model) => {
                // The character map in its compact form (a quarter of the flash).
                let mut data = SpTableData::new(&model)
                    .and_then(SpTableData::with_compact_charsmap)
                    .map_err(|e| invalid(ModelError::InvalidSentencePiece(e)))?;
                if !self.piece_keys {
                    data = data.without_piece_keys();
                }
                let (source, sizes) = (generate_sp(&data, &name, &token_bytes), data.sizes());
                (
                    data.token_bytes.into_owned(),
                    source,
                    BakedSizes::SentencePiece(sizes),
                )
            }
            AnyModel::WordPiece(model) => {
                let data = WpTableData::new(&model)
                    .map_err(|e| invalid(ModelError::InvalidWordPiece(e)))?;
                let (source, sizes) = (generate_wp(&data, &name, &token_bytes), data.sizes());
                (data.token_bytes, source, BakedSizes::WordPiece(sizes))
            }
        };
        write(&token_bytes, &bytes)?;
        write(&source_path, source.as_bytes())?;
        let verbose = std::env::var_os(VERBOSE_ENV).is_some_and(|v| !v.is_empty());
        if self.cargo && verbose {
            println!(
                "cargo:warning=picobpe: baked {} ({:?} piece table) into {}",
                self.model.display(),
                self.pieces,
                source_path.display()
            );
            for line in sizes.to_string().lines() {
                println!("cargo:warning=picobpe: {}", line.trim());
            }
        }
        Ok(Baked {
            source: source_path,
            token_bytes,
            sizes,
        })
    }
}

/// Why a bake failed.
#[derive(Debug)]
pub enum BakeError {
    /// The model file could not be read, or is corrupt or invalid.
    Model {
        /// The model file.
        path: PathBuf,
        /// What is wrong.
        source: ModelError,
    },
    /// Writing generated output failed.
    Io {
        /// The file being written.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// `OUT_DIR` is not set (not running in a build script) and no `out_dir` was given.
    NoOutDir,
    /// The module name is empty or has characters unfit for a file name.
    BadModuleName(String),
}

impl fmt::Display for BakeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // Io errors from Model::read already name the path.
            BakeError::Model {
                source: source @ ModelError::Io { .. },
                ..
            } => write!(f, "{source}"),
            BakeError::Model { path, source } => write!(f, "{}: {source}", path.display()),
            BakeError::Io { path, source } => write!(f, "writing {}: {source}", path.display()),
            BakeError::NoOutDir => f.write_str(
                "OUT_DIR is not set: call picobpe_build from build.rs, or give Bake::out_dir",
            ),
            BakeError::BadModuleName(name) => write!(
                f,
                "module name {name:?} must be non-empty ASCII letters, digits, '_', '-' or '.'"
            ),
        }
    }
}

impl std::error::Error for BakeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BakeError::Model { source, .. } => Some(source),
            BakeError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}
