//! Shared CLI plumbing: the input source and loading a model's tables.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use picobpe::Tables;
use picobpe_model::{Model, PieceTable, TableData};

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

/// Read and validate a model and build its live tables (with the full whole-piece table,
/// the fast configuration).
pub fn load(path: &Path) -> Result<(Model, &'static Tables<'static>), String> {
    let model = Model::read(path).map_err(|e| match e {
        picobpe_model::ModelError::Io { .. } => e.to_string(),
        _ => format!("{}: {e}", path.display()),
    })?;
    let tables = TableData::new(&model, PieceTable::Full)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .to_tables();
    Ok((model, tables))
}
