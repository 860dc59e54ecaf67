//! Shared CLI plumbing: the input source and loading a model's tables.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use picobpe::{AnyTokenizer, Template};
use picobpe_model::{read_tables_with_template, ModelError};

/// `FILE` if given, else stdin; and its name for error messages.
pub fn open(file: Option<&Path>) -> Result<(Box<dyn Read>, String), String> {
    match file {
        Some(path) => File::open(path)
            .map(|f| (Box::new(f) as Box<dyn Read>, path.display().to_string()))
            .map_err(|e| format!("{}: {e}", path.display())),
        None => Ok((Box::new(io::stdin().lock()), "stdin".to_owned())),
    }
}

/// `reader.read(buf)`, again when interrupted; an error names the input (`name`).
pub fn read(reader: &mut dyn Read, buf: &mut [u8], name: &str) -> Result<usize, String> {
    loop {
        match reader.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            r => return r.map_err(|e| format!("reading {name}: {e}")),
        }
    }
}

/// A model-reading error, prefixed by the file's name (an I/O error already names it).
pub fn model_error(path: &Path) -> impl Fn(ModelError) -> String + '_ {
    move |e| match e {
        ModelError::Io { .. } => e.to_string(),
        _ => format!("{}: {e}", path.display()),
    }
}

/// Read a model of any family ([`read_tables_with_template`]: a current file's prebuilt
/// tables are mapped and checked; older files are built as before) and return its tokenizer
/// and the special tokens the model adds around a text's ids (its template).
pub fn load(path: &Path) -> Result<(AnyTokenizer<'static>, &'static Template<'static>), String> {
    read_tables_with_template(path)
        .map(|(t, template)| (t.tokenizer(), template))
        .map_err(model_error(path))
}
