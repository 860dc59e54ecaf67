//! The texts to measure: `../shared/data/corpus` when present (english.txt, each `multi/*` file,
//! and all `multi/*` files concatenated), otherwise the committed training fixtures of the same
//! shape (`tests/fixtures/train`: 1 MB of English, 100 kB multi slices), with a note.
//! Nothing here is ever written into the repository.

use std::path::{Path, PathBuf};

/// One text to measure.
pub struct Corpus {
    /// Short name used in the table and by `--corpus` (`english`, `zh`, `code-rust`, `multi`...).
    pub name: String,
    /// The text.
    pub text: String,
    /// The file it was read from; `None` for `multi`, which is several files concatenated.
    /// (Read by `picobpe-bench --first-use`, which runs the CLI on it; not by
    /// `picobpe-bench-sp`.)
    #[allow(dead_code)]
    pub path: Option<PathBuf>,
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
/// not read the 30 MB English file. The shared data folder is `$PICOBPE_SHARED_DATA` when set,
/// else `../shared/data` beside the repository.
pub fn load(root: &Path, files: &[String], wanted: &[String]) -> (Source, Vec<Corpus>) {
    if !files.is_empty() {
        let v = files
            .iter()
            .map(|f| Corpus {
                name: f.clone(),
                text: read(Path::new(f)),
                path: Some(PathBuf::from(f)),
            })
            .collect();
        return (Source::Files, v);
    }
    let shared = std::env::var_os("PICOBPE_SHARED_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("../shared/data"))
        .join("corpus");
    if shared.join("english.txt").is_file() {
        let v = english_and_multi(&shared.join("english.txt"), &shared.join("multi"), wanted);
        return (Source::Shared(shared), v);
    }
    // The committed training fixtures have the same shape: 1 MB of the English corpus and
    // 100 kB slices of some multi files.
    let dir = root.join("tests/fixtures/train");
    let v = english_and_multi(&dir.join("english-1mb.txt"), &dir.join("multi"), wanted);
    (Source::Fixtures(dir), v)
}

/// `english`, each `multi/*.txt` by stem, and `multi` (those files concatenated), filtered.
fn english_and_multi(english: &Path, multi_dir: &Path, wanted: &[String]) -> Vec<Corpus> {
    let keep = |name: &str| wanted.is_empty() || wanted.iter().any(|w| w == name);
    let mut v = Vec::new();
    if keep("english") {
        v.push(Corpus {
            name: "english".into(),
            text: read(english),
            path: Some(english.to_path_buf()),
        });
    }
    let mut multi: Vec<PathBuf> = std::fs::read_dir(multi_dir)
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
            v.push(Corpus {
                name: stem,
                text,
                path: Some(p.clone()),
            });
        }
    }
    if want_all && !all.is_empty() {
        v.push(Corpus {
            name: "multi".into(),
            text: all,
            path: None,
        });
    }
    v
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}
