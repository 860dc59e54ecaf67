//! The texts to measure: `../shared/data/corpus` when present (english.txt, each `multi/*` file,
//! and all `multi/*` files concatenated), otherwise the committed test fixtures (with a note).
//! Nothing here is ever written into the repository.

use std::path::{Path, PathBuf};

/// One text to measure.
pub struct Corpus {
    /// Short name used in the table and by `--corpus` (`english`, `zh`, `code-rust`, `multi`...).
    pub name: String,
    /// The text.
    pub text: String,
}

/// Where the corpora came from.
pub enum Source {
    /// `../shared/data/corpus` (path).
    Shared(PathBuf),
    /// The committed fixtures (path), because the shared corpus is absent.
    Fixtures(PathBuf),
    /// Files named on the command line.
    Files,
}

/// Load the corpora. `files` (command-line paths) replace the default set when non-empty.
/// `wanted` filters by name (empty = all); it is applied before reading, so `--corpus zh` does
/// not read the 30 MB English file.
pub fn load(root: &Path, files: &[String], wanted: &[String]) -> (Source, Vec<Corpus>) {
    let keep = |name: &str| wanted.is_empty() || wanted.iter().any(|w| w == name);
    if !files.is_empty() {
        let v = files
            .iter()
            .map(|f| Corpus {
                name: f.clone(),
                text: read(Path::new(f)),
            })
            .collect();
        return (Source::Files, v);
    }
    let shared = root.join("../shared/data/corpus");
    if shared.join("english.txt").is_file() {
        let mut v = Vec::new();
        if keep("english") {
            v.push(Corpus {
                name: "english".into(),
                text: read(&shared.join("english.txt")),
            });
        }
        let mut multi: Vec<PathBuf> = std::fs::read_dir(shared.join("multi"))
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        multi.retain(|p| p.extension().is_some_and(|e| e == "txt"));
        multi.sort();
        let want_all = keep("multi");
        let mut all = String::new();
        for p in &multi {
            let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
            if !(want_all || keep(&stem)) {
                continue;
            }
            let text = read(p);
            if want_all {
                all.push_str(&text);
            }
            if keep(&stem) {
                v.push(Corpus { name: stem, text });
            }
        }
        if want_all && !all.is_empty() {
            v.push(Corpus {
                name: "multi".into(),
                text: all,
            });
        }
        return (Source::Shared(shared), v);
    }
    let dir = root.join("tests/fixtures");
    let mut v = Vec::new();
    for p in walk(&dir) {
        if p.extension().is_some_and(|e| e == "txt") {
            if let Ok(text) = std::fs::read_to_string(&p) {
                let name = p.strip_prefix(&dir).unwrap_or(&p).display().to_string();
                if keep(&name) {
                    v.push(Corpus { name, text });
                }
            }
        }
    }
    (Source::Fixtures(dir), v)
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}
