//! The encodings: the three tiktoken ones (rank files and specials from
//! `tests/fixtures/models`) and Mistral's Tekken (`tests/fixtures/tekken/tekken_240718.json.gz`),
//! picobpe's tables for them, and the reference tiktoken-rs built from the same ranks.

use std::io::Read;
use std::path::{Path, PathBuf};

use picobpe_model::{PatternKind, PieceTable};

/// One tiktoken encoding picobpe runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// `gpt2` (r50k pattern).
    Gpt2,
    /// `cl100k_base`.
    Cl100k,
    /// `o200k_base`.
    O200k,
    /// Mistral's Tekken (Mistral NeMo's `tekken.json`).
    Tekken,
}

impl Encoding {
    /// The encodings a run measures unless `--encoding` names others, in table order (Tekken
    /// only when asked).
    pub const ALL: [Encoding; 3] = [Encoding::Gpt2, Encoding::Cl100k, Encoding::O200k];

    /// tiktoken's name (also the fixture file stem).
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Gpt2 => "gpt2",
            Encoding::Cl100k => "cl100k_base",
            Encoding::O200k => "o200k_base",
            Encoding::Tekken => "tekken",
        }
    }

    /// Parse `gpt2`, `cl100k`/`cl100k_base`, `o200k`/`o200k_base`, `tekken`.
    pub fn parse(s: &str) -> Option<Encoding> {
        match s {
            "gpt2" | "r50k" | "r50k_base" => Some(Encoding::Gpt2),
            "cl100k" | "cl100k_base" => Some(Encoding::Cl100k),
            "o200k" | "o200k_base" => Some(Encoding::O200k),
            "tekken" => Some(Encoding::Tekken),
            _ => None,
        }
    }

    /// picobpe's pattern kind (its `reference_regex` is the issues' pattern the peers run).
    pub fn pattern(self) -> PatternKind {
        match self {
            Encoding::Gpt2 => PatternKind::Gpt2,
            Encoding::Cl100k => PatternKind::Cl100k,
            Encoding::O200k => PatternKind::O200k,
            Encoding::Tekken => PatternKind::Tekken,
        }
    }
}

/// An encoding's inputs, read from `tests/fixtures/models`.
pub struct Vocabulary {
    /// The decompressed rank file.
    pub rank_file: Vec<u8>,
    /// The standard specials `(text, id)`, sorted by id.
    pub specials: Vec<(String, u32)>,
    /// Where the rank file came from (for the report).
    pub source: PathBuf,
    /// Tekken: the `tekken.json` itself (picobpe and kitoken read it).
    pub tekken_json: Option<Vec<u8>>,
}

/// Read `<name>.tiktoken` (or `.tiktoken.gz`) and `<name>.json` from `models`; for Tekken,
/// `../tekken/tekken_240718.json.gz`, whose ranks the rank file spells as the Tekkenizer's ids
/// (vocabulary entry `r` at `r + num_special`, cut to `default_vocab_size`).
pub fn vocabulary(models: &Path, enc: Encoding) -> Vocabulary {
    if enc == Encoding::Tekken {
        return tekken_vocabulary(&models.join("../tekken/tekken_240718.json.gz"));
    }
    let plain = models.join(format!("{}.tiktoken", enc.name()));
    let gz = models.join(format!("{}.tiktoken.gz", enc.name()));
    let (source, rank_file) = if plain.is_file() {
        let data = read(&plain);
        (plain, data)
    } else {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(read(&gz).as_slice())
            .read_to_end(&mut out)
            .unwrap_or_else(|e| panic!("{}: {e}", gz.display()));
        (gz, out)
    };
    Vocabulary {
        rank_file,
        specials: specials(models, enc),
        source,
        tekken_json: None,
    }
}

/// [`vocabulary`] of a gzipped `tekken.json`: the rank file built from its JSON directly, the
/// specials as picobpe's import names them.
fn tekken_vocabulary(gz: &Path) -> Vocabulary {
    let mut json = Vec::new();
    flate2::read::GzDecoder::new(read(gz).as_slice())
        .read_to_end(&mut json)
        .unwrap_or_else(|e| panic!("{}: {e}", gz.display()));
    let file: serde_json::Value =
        serde_json::from_slice(&json).unwrap_or_else(|e| panic!("{}: {e}", gz.display()));
    let config = &file["config"];
    let n_special = config["default_num_special_tokens"]
        .as_u64()
        .expect("specials");
    let n_vocab = config["default_vocab_size"].as_u64().expect("vocab size") - n_special;
    let mut rank_file = Vec::new();
    for entry in file["vocab"]
        .as_array()
        .expect("vocab")
        .iter()
        .take(n_vocab as usize)
    {
        // `token_bytes` is the rank file's base64 already.
        let token = entry["token_bytes"].as_str().expect("token_bytes");
        let rank = entry["rank"].as_u64().expect("rank") + n_special;
        rank_file.extend_from_slice(format!("{token} {rank}\n").as_bytes());
    }
    let specials = picobpe_model::import::tekken(&json)
        .unwrap_or_else(|e| panic!("{}: {e}", gz.display()))
        .model
        .specials;
    Vocabulary {
        rank_file,
        specials,
        source: gz.to_owned(),
        tekken_json: Some(json),
    }
}

/// The standard specials `(text, id)` of `enc`, sorted by id, from `<name>.json` in `models`.
pub fn specials(models: &Path, enc: Encoding) -> Vec<(String, u32)> {
    let json = models.join(format!("{}.json", enc.name()));
    let meta: serde_json::Value =
        serde_json::from_slice(&read(&json)).unwrap_or_else(|e| panic!("{}: {e}", json.display()));
    let mut specials: Vec<(String, u32)> = meta["special_tokens"]
        .as_object()
        .unwrap_or_else(|| panic!("{}: no special_tokens object", json.display()))
        .iter()
        .map(|(k, v)| (k.clone(), v.as_u64().expect("special id") as u32))
        .collect();
    specials.sort_by_key(|s| s.1);
    specials
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// picobpe's tables for a model from [`picobpe_model()`]: `PieceTable::Full`, the same path as
/// `host-trainer import` and the tests.
pub fn picobpe_tables(model: &picobpe_model::Model) -> &'static picobpe::Tables<'static> {
    picobpe_model::TableData::new(model, PieceTable::Full)
        .unwrap_or_else(|e| panic!("tables: {e}"))
        .to_tables()
}

/// picobpe's model of `enc` (`picobpe_model::import::tiktoken` of the rank file and specials;
/// `import::tekken` of the `tekken.json`).
pub fn picobpe_model(enc: Encoding, vocab: &Vocabulary) -> picobpe_model::Model {
    if let Some(json) = &vocab.tekken_json {
        return picobpe_model::import::tekken(json)
            .unwrap_or_else(|e| panic!("import {}: {e}", enc.name()))
            .model;
    }
    picobpe_model::import::tiktoken(&vocab.rank_file, enc.pattern(), &vocab.specials)
        .unwrap_or_else(|e| panic!("import {}: {e}", enc.name()))
}

/// tiktoken-rs's `CoreBPE` from the same rank file, the issue's pattern and the same specials.
pub fn tiktoken_rs_from_rank_file(enc: Encoding, vocab: &Vocabulary) -> tiktoken_rs::CoreBPE {
    tiktoken_rs_from_ranks(enc, &vocab.rank_file, &vocab.specials)
}

/// tiktoken-rs's `CoreBPE` from a rank file's bytes (base64 token, space, rank per line), the
/// issue's pattern and `specials`: the same construction a program that reads the rank file
/// does (base64 decode, then `CoreBPE::new`).
pub fn tiktoken_rs_from_ranks(
    enc: Encoding,
    rank_file: &[u8],
    specials: &[(String, u32)],
) -> tiktoken_rs::CoreBPE {
    use base64::Engine;
    let mut encoder: rustc_hash::FxHashMap<Vec<u8>, u32> = Default::default();
    for line in rank_file.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            continue;
        }
        let mut it = line.split(|&b| b == b' ');
        let (Some(tok), Some(rank)) = (it.next(), it.next()) else {
            panic!("{}: bad rank line", enc.name());
        };
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(tok)
            .expect("base64 token");
        let rank: u32 = std::str::from_utf8(rank)
            .ok()
            .and_then(|r| r.trim().parse().ok())
            .expect("integer rank");
        encoder.insert(bytes, rank);
    }
    let specials: rustc_hash::FxHashMap<String, u32> = specials.iter().cloned().collect();
    tiktoken_rs::CoreBPE::new(encoder, specials, enc.pattern().reference_regex())
        .expect("tiktoken-rs CoreBPE")
}
