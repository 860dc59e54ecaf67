//! Shared CLI plumbing: the input source and loading a model's tables.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use picobpe::{AnyTokenizer, Template};
use picobpe_model::read_tables_with_template;

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

/// Read a model of any family and return its tokenizer ([`read_tables`]: a version-3 file's
/// prebuilt tables are mapped and checked; older files are built as before), with errors
/// prefixed by the file's name.
pub fn load_any(path: &Path) -> Result<AnyTokenizer<'static>, String> {
    Ok(load_with_template(path)?.0)
}

/// [`load_any`], and the special tokens the model adds around a text's ids (its template).
pub fn load_with_template(
    path: &Path,
) -> Result<(AnyTokenizer<'static>, &'static Template<'static>), String> {
    read_tables_with_template(path)
        .map(|(t, template)| (t.tokenizer(), template))
        .map_err(|e| match e {
            picobpe_model::ModelError::Io { .. } => e.to_string(),
            _ => format!("{}: {e}", path.display()),
        })
}
