//! Shared CLI plumbing: the input source and loading a model's tables.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use picobpe::{SpTables, Tables};
use picobpe_model::{AnyModel, PieceTable, SpTableData, TableData};

/// `FILE` if given, else stdin.
pub fn open(file: Option<&Path>) -> Result<Box<dyn Read>, String> {
    match file {
        Some(path) => File::open(path)
            .map(|f| Box::new(f) as Box<dyn Read>)
            .map_err(|e| format!("{}: {e}", path.display())),
        None => Ok(Box::new(io::stdin().lock())),
    }
}

/// Display name of the input for error messages.
pub fn name(file: Option<&PathBuf>) -> String {
    file.map_or_else(|| "stdin".to_owned(), |p| p.display().to_string())
}

/// A loaded model of either kind, with its live tables.
pub enum Loaded {
    /// Byte-level BPE.
    BytePair(&'static Tables<'static>),
    /// SentencePiece BPE.
    SentencePiece(&'static SpTables<'static>),
}

/// Read and validate a model of any kind and build its live tables (for byte-level models
/// with the full whole-piece table, the fast configuration).
pub fn load_any(path: &Path) -> Result<Loaded, String> {
    let named = |e: picobpe_model::ModelError| match e {
        picobpe_model::ModelError::Io { .. } => e.to_string(),
        _ => format!("{}: {e}", path.display()),
    };
    match AnyModel::read(path).map_err(named)? {
        AnyModel::BytePair(model) => {
            let tables = TableData::new(&model, PieceTable::Full)
                .map_err(|e| format!("{}: {e}", path.display()))?
                .to_tables();
            Ok(Loaded::BytePair(tables))
        }
        AnyModel::SentencePiece(model) => {
            let tables = SpTableData::new(&model)
                .map_err(|e| format!("{}: {e}", path.display()))?
                .to_tables();
            Ok(Loaded::SentencePiece(tables))
        }
    }
}
