//! Writing the trained tokenizer: `tokenizer.model`, `vocab.json` and `merges.txt`.
//!
//! Id layout (rank == id): ids `0..=255` are the single bytes in byte order, `256 + i` is the
//! token made by merge `i`, and the special tokens follow in the order given.
//!
//! `vocab.json` and `merges.txt` use the GPT-2 / Hugging Face text format, byte for byte like
//! OpenAI's `encoder.json` / `vocab.bpe` as shipped with GPT-2: every byte is shown through
//! GPT-2's byte-to-unicode table; `vocab.json` is one line `{"token": id, ...}` in id order with
//! Python `json.dumps` escaping (`ensure_ascii`), special tokens under their own text;
//! `merges.txt` has one `left right` line per merge, no header.
//!
//! No two merges produce the same byte string (a merge applies to every adjacent occurrence of
//! its pair, so a pair never reappears, and the pieces of a byte string merge in one way), and
//! no merge produces a special token's bytes (the text is split on them), so ids map one to one
//! to byte strings as the model format requires; both are still checked when writing.
//!
//! The output directory appears atomically: everything is written into a temporary directory
//! next to `--out`, which is renamed into place at the end (see [`OutputDir`]).

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use picobpe_model::byte_unicode::byte_to_char;
use picobpe_model::{Model, PatternKind};
use rustc_hash::FxHashMap;

use super::error::TrainError;
use super::merge::Merge;

/// Names of the files a training run writes.
pub const FILES: [&str; 6] = [
    "tokenizer.model",
    "sentencepiece.model",
    "vocab.json",
    "merges.txt",
    "vocab.txt",
    "tokenizer.json",
];

/// A byte string in GPT-2 text form (`table` from [`byte_to_char`]).
fn bytes_to_text(bytes: &[u8], table: &[char; 256]) -> String {
    bytes.iter().map(|&b| table[b as usize]).collect()
}

/// Append `s` as a JSON string the way Python's `json.dumps(..., ensure_ascii=True)` does.
fn push_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
    }
    out.push('"');
}

/// The model of a training run: `merges` in order, then `specials` in the order given (id
/// layout in the module docs).
pub fn to_model(
    pattern: PatternKind,
    merges: &[Merge],
    specials: &[String],
) -> Result<Model, TrainError> {
    let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    let mut ids: FxHashMap<Vec<u8>, u32> = tokens.iter().cloned().zip(0u32..).collect();
    let mut pairs = Vec::with_capacity(merges.len());
    for (index, merge) in merges.iter().enumerate() {
        // Both halves exist: they are single bytes or products of earlier merges.
        pairs.push((ids[&merge.left], ids[&merge.right]));
        let merged = [merge.left.as_slice(), &merge.right].concat();
        if ids.insert(merged.clone(), tokens.len() as u32).is_some() {
            return Err(TrainError::DuplicateToken {
                merge: index,
                token: bytes_to_text(&merged, &byte_to_char()),
            });
        }
        tokens.push(merged);
    }
    let specials: Vec<(String, u32)> = specials
        .iter()
        .cloned()
        .zip(tokens.len() as u32..)
        .collect();
    tokens.extend(specials.iter().map(|(text, _)| text.as_bytes().to_vec()));
    Ok(Model {
        pattern,
        tokens,
        merges: pairs,
        specials,
        whole_piece: false,
        normalizer: None,
        strips: Vec::new(),
        splits: Vec::new(),
        prefix_space: false,
        end_of_word_suffix: Vec::new(),
        steps: Default::default(),
        empty_tokens: Vec::new(),
    })
}

/// `merges.txt`: one `left right` line per merge in GPT-2 text form.
fn merges_txt(model: &Model) -> String {
    let table = byte_to_char();
    let text = |id: u32| bytes_to_text(&model.tokens[id as usize], &table);
    let mut out = String::new();
    for &(left, right) in &model.merges {
        let _ = writeln!(out, "{} {}", text(left), text(right));
    }
    out
}

/// `vocab.json`: `{"token": id, ...}` in id order on one line. Fails if a special token's
/// text equals another entry's key (JSON keys must be unique).
fn vocab_json(model: &Model) -> Result<String, TrainError> {
    let table = byte_to_char();
    let n = model.tokens.len() - model.specials.len();
    let keys: Vec<String> = model.tokens[..n]
        .iter()
        .map(|t| bytes_to_text(t, &table))
        .collect();
    let ordinary: std::collections::HashSet<&String> = keys.iter().collect();
    let specials = model.specials.iter().map(|(text, _)| text);
    let mut out = String::from("{");
    for (id, key) in keys.iter().chain(specials).enumerate() {
        if id >= n && ordinary.contains(key) {
            return Err(TrainError::SpecialKeyCollision { text: key.clone() });
        }
        if id > 0 {
            out.push_str(", ");
        }
        push_json_string(&mut out, key);
        let _ = write!(out, ": {id}");
    }
    out.push('}');
    Ok(out)
}

/// The `--out` directory, prepared before training and committed at the end.
///
/// A temporary sibling directory `.NAME.tmp-PID` is created up front (so an unwritable location
/// fails before the expensive work) and removed again if the run fails. `commit` renames it to
/// `--out`. An existing `--out` is replaced only if it is empty or holds nothing but the files a
/// previous run wrote; otherwise the run is refused before training.
pub struct OutputDir {
    target: PathBuf,
    tmp: PathBuf,
    committed: bool,
}

impl OutputDir {
    /// Check `target` and create the temporary directory.
    pub fn prepare(target: &Path) -> Result<Self, TrainError> {
        check_replaceable(target)?;
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "out".to_owned());
        let tmp = target.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
        if tmp.exists() {
            fs::remove_dir_all(&tmp).map_err(TrainError::write(&tmp))?;
        }
        fs::create_dir_all(&tmp).map_err(TrainError::write(&tmp))?;
        Ok(OutputDir {
            target: target.to_owned(),
            tmp,
            committed: false,
        })
    }

    /// Write all output files of a byte-level `model` and move the directory into place.
    pub fn commit(self, model: &Model) -> Result<(), TrainError> {
        self.commit_with(|tmp| {
            let write = |name: &str, text: String| {
                let path = tmp.join(name);
                fs::write(&path, text).map_err(TrainError::write(&path))
            };
            write("vocab.json", vocab_json(model)?)?;
            write("merges.txt", merges_txt(model))?;
            model
                .write(tmp.join("tokenizer.model"))
                .map_err(TrainError::Model)
        })
    }

    /// Write the output files (`write` puts them into the directory it is given, with names
    /// from [`FILES`]) and move the directory into place.
    pub fn commit_with(
        mut self,
        write: impl FnOnce(&Path) -> Result<(), TrainError>,
    ) -> Result<(), TrainError> {
        write(&self.tmp)?;
        check_replaceable(&self.target)?;
        let rename_err = TrainError::write(&self.target);
        if self.target.exists() {
            // Replace a previous run's output: move it aside, move ours in, delete the old one.
            let old = self.tmp.with_extension("old");
            fs::rename(&self.target, &old).map_err(&rename_err)?;
            if let Err(source) = fs::rename(&self.tmp, &self.target) {
                let _ = fs::rename(&old, &self.target);
                return Err(rename_err(source));
            }
            let _ = fs::remove_dir_all(&old);
        } else {
            fs::rename(&self.tmp, &self.target).map_err(rename_err)?;
        }
        self.committed = true;
        Ok(())
    }
}

impl Drop for OutputDir {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_dir_all(&self.tmp);
        }
    }
}

/// `Ok` when `target` does not exist, or is a directory holding only [`FILES`].
fn check_replaceable(target: &Path) -> Result<(), TrainError> {
    let refuse = |reason: String| TrainError::OutputNotReplaceable {
        path: target.to_owned(),
        reason,
    };
    let meta = match fs::symlink_metadata(target) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(refuse(e.to_string())),
    };
    if !meta.is_dir() {
        return Err(refuse("it exists and is not a directory".to_owned()));
    }
    let entries = fs::read_dir(target).map_err(|e| refuse(e.to_string()))?;
    for entry in entries {
        let entry = entry.map_err(|e| refuse(e.to_string()))?;
        let name = entry.file_name();
        if !FILES.iter().any(|f| name == *f) {
            return Err(refuse(format!(
                "it contains {:?}, which is not output of a previous training run \
                 (only {} are replaced)",
                name,
                FILES.join(", ")
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_escaping_is_pythons() {
        let mut s = String::new();
        push_json_string(&mut s, "a\"\\\n\u{7f}Ġ🙃<|endoftext|>");
        assert_eq!(s, r#""a\"\\\n\u007f\u0120\ud83d\ude43<|endoftext|>""#);
    }
}
