//! `cargo run --release -p picobpe-bench --bin picobpe-bench-hf -- ARGS`: encode throughput of
//! models imported from Hugging Face `tokenizer.json` files (byte-level BPE and WordPiece),
//! picobpe next to the Rust `tokenizers` crate and kitoken loading the same file, single
//! thread, same texts, same run.
//!
//! ```text
//! picobpe-bench-hf [--model llama3-8k|llama3-8k-compiled|deepseek-8k|qwen2-8k|qwen3|minilm-uncased|bert-cased-8k]...
//!                  [--tokenizer-json PATH]... [--corpus NAME]... [--runs N] [FILE...]
//! ```
//!
//! Models: `llama3-8k` and `qwen2-8k` (`tests/fixtures/hf_bpe/<name>/tokenizer.json`),
//! `tekken-8k` (`tests/fixtures/tekken/tekken-8k.tokenizer.json`: the Tekken pattern),
//! `qwen3` (`tests/fixtures/hf_real/qwen3.tokenizer.json.gz`), `clip-8k` (CLIP's file cut to
//! 8,000 merges, `tests/fixtures/clip/tokenizer.json`: `NFC` + `Lowercase` + whitespace
//! runs, a `Removed` split, the `</w>` suffix), and the WordPiece models
//! `minilm-uncased` and `bert-cased-8k` (`tests/fixtures/wordpiece/<name>/tokenizer.json`),
//! two models made from `llama3-8k` with another pre-tokenizer (`llama3-8k-compiled`, its own
//! regex as a compiled pattern, and `deepseek-8k`, DeepSeek V3's: see [`DERIVED`]),
//! and the SentencePiece Unigram model `ug4096-bytes`
//! (`tests/fixtures/unigram/models/ug4096-bytes.tokenizer.json`, encoded with `tokenizers`'
//! arithmetic by `SpTokenizer::encode_cursor`), all of them unless `--model` names some; each `--tokenizer-json PATH` adds a file (gzipped
//! when it ends in `.gz`), named by its file stem. A WordPiece model is encoded with
//! `WpTokenizer::encode` (it has no piece cache: both picobpe columns time the same call).
//!
//! Columns: picobpe (`picobpe_model::import::tokenizer_json`, tables with
//! `PieceTable::Full`, `Tokenizer::encode_cached` into a caller buffer, resumed on
//! `OutputFull`), timed twice: without a cache, and with a 1 MiB piece cache (16,384 lines)
//! kept across calls, runs and corpora of one model (what `host-trainer encode` does); and
//! `tokenizers` (`Tokenizer::from_str` on the same file, `encode_fast(text, false)`: no special
//! tokens added, no offsets computed, its fastest single-text call); kitoken
//! (`Kitoken::from_tokenizers_slice` on the same file, `encode(text, false)`). Special-token
//! text is ordinary text on every side (picobpe `Specials::None`, tokenizers
//! `set_encode_special_tokens(true)`, kitoken without specials); tokenizers still matches
//! added tokens that are not marked special (Qwen3's `<think>`...), so a text holding one would
//! show as a difference.
//!
//! Each corpus is cut at line ends into texts of at most 64 KiB, given as they are to both
//! sides (the Qwen files' NFC normalizer runs in both), and MB/s counts their bytes. Before
//! timing, tokenizers' ids are compared text by
//! text with picobpe's, and kitoken's; a peer that differs says where and is not timed. The
//! columns are timed `--runs` times, interleaved, and the median MB/s (10^6 input bytes per
//! second) is printed, with the ratio picobpe / the fastest exact peer. Load times are printed too:
//! picobpe = import + tables + `Tokenizer::new`, tokenizers = `from_str`, both from the file's
//! text already in memory (reading and un-gzipping the file is not counted).
//!
//! Corpora as in `picobpe-bench`: `../shared/data/corpus` when present, else the committed
//! fixtures (with a note).

#[path = "../corpus.rs"]
mod corpus;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use picobpe::{CacheEntry, EncodeError, Specials, Tokenize, Tokenizer};

/// Lines of picobpe's piece cache: 1 MiB, as `host-trainer encode` uses.
const CACHE_LINES: usize = 16_384;

/// Longest text handed to a tokenizer in one call.
const CHUNK: usize = 64 * 1024;

/// The committed models: name, file under the repository root.
const MODELS: [(&str, &str); 8] = [
    (
        "llama3-8k",
        "tests/fixtures/hf_bpe/llama3-8k/tokenizer.json",
    ),
    ("qwen2-8k", "tests/fixtures/hf_bpe/qwen2-8k/tokenizer.json"),
    ("qwen3", "tests/fixtures/hf_real/qwen3.tokenizer.json.gz"),
    (
        "tekken-8k",
        "tests/fixtures/tekken/tekken-8k.tokenizer.json",
    ),
    (
        "minilm-uncased",
        "tests/fixtures/wordpiece/minilm-uncased/tokenizer.json",
    ),
    (
        "bert-cased-8k",
        "tests/fixtures/wordpiece/bert-cased-8k/tokenizer.json",
    ),
    (
        "ug4096-bytes",
        "tests/fixtures/unigram/models/ug4096-bytes.tokenizer.json",
    ),
    ("clip-8k", "tests/fixtures/clip/tokenizer.json"),
];

const USAGE: &str =
    "usage: picobpe-bench-hf [--model llama3-8k|llama3-8k-compiled|deepseek-8k|qwen2-8k|qwen3|tekken-8k|minilm-uncased|bert-cased-8k|ug4096-bytes|clip-8k]... \
     [--tokenizer-json PATH]... [--corpus NAME]... [--runs N] [FILE...]";

/// A tokenizer under test.
trait Subject {
    /// The ids of one text.
    fn ids(&mut self, text: &str) -> Vec<u32>;
    /// Encode all texts; returns the number of ids (so the work is not optimised away).
    fn run(&mut self, texts: &[&str]) -> usize;
}

/// picobpe's tokenizer of any kind.
#[derive(Clone, Copy)]
enum Tok {
    /// Byte-level BPE.
    Bpe(Tokenizer<'static>),
    /// WordPiece (no piece cache).
    Wp(picobpe::WpTokenizer<'static>),
    /// SentencePiece (a Unigram `tokenizer.json`: `tokenizers`' arithmetic, no word cache).
    Sp(picobpe::SpTokenizer<'static>),
}

struct Picobpe {
    tok: Tok,
    out: Vec<u32>,
    /// Empty, or a piece cache kept across calls and runs (as the CLI keeps one per input).
    cache: Vec<CacheEntry>,
}

impl Picobpe {
    /// A SentencePiece model's ids, resumed with its cursor (which carries a Unigram model's
    /// running score).
    fn encode_sp(&mut self, t: picobpe::SpTokenizer<'_>, text: &str, mut sink: impl FnMut(&[u32])) {
        let mut cursor = picobpe::Cursor::START;
        loop {
            match t.encode_at(
                text.as_bytes(),
                &mut cursor,
                &mut self.out,
                Specials::All,
                &mut [],
            ) {
                Ok(n) => return sink(&self.out[..n]),
                Err(EncodeError::OutputFull { written, .. }) => sink(&self.out[..written]),
                Err(EncodeError::PieceTooLong { needed, .. }) => {
                    let len = needed.max(2 * self.out.len());
                    self.out.resize(len, 0);
                }
            }
        }
    }

    fn encode(&mut self, text: &str, mut sink: impl FnMut(&[u32])) {
        let mut rest = text.as_bytes();
        loop {
            let r = match &self.tok {
                Tok::Bpe(t) => {
                    t.encode_cached(rest, &mut self.out, Specials::None, &mut self.cache)
                }
                Tok::Wp(t) => t.encode(rest, &mut self.out, Specials::None),
                Tok::Sp(t) => return self.encode_sp(*t, text, sink),
            };
            match r {
                Ok(n) => return sink(&self.out[..n]),
                Err(EncodeError::OutputFull { consumed, written }) => {
                    sink(&self.out[..written]);
                    rest = &rest[consumed..];
                }
                Err(EncodeError::PieceTooLong { needed, .. }) => {
                    let len = needed.max(2 * self.out.len());
                    self.out.resize(len, 0);
                }
            }
        }
    }
}

impl Subject for Picobpe {
    fn ids(&mut self, text: &str) -> Vec<u32> {
        let mut all = Vec::new();
        self.encode(text, |ids| all.extend_from_slice(ids));
        all
    }
    fn run(&mut self, texts: &[&str]) -> usize {
        let mut n = 0;
        for t in texts {
            self.encode(t, |ids| n += ids.len());
        }
        n
    }
}

struct HfTokenizers(tokenizers::Tokenizer);

impl Subject for HfTokenizers {
    fn ids(&mut self, text: &str) -> Vec<u32> {
        match self.0.encode_fast(text, false) {
            Ok(e) => e.get_ids().to_vec(),
            // An error is a difference.
            Err(_) => vec![u32::MAX],
        }
    }
    fn run(&mut self, texts: &[&str]) -> usize {
        texts
            .iter()
            .map(|t| self.0.encode_fast(*t, false).map_or(0, |e| e.len()))
            .sum()
    }
}

/// kitoken (the closest peer) over the same file.
struct Kitoken(kitoken::Kitoken);

impl Subject for Kitoken {
    fn ids(&mut self, text: &str) -> Vec<u32> {
        // An error is a difference.
        self.0
            .encode(text, false)
            .unwrap_or_else(|_| vec![u32::MAX])
    }
    fn run(&mut self, texts: &[&str]) -> usize {
        texts
            .iter()
            .map(|t| self.0.encode(*t, false).map_or(0, |ids| ids.len()))
            .sum()
    }
}

/// The peers' column names, in table order.
const PEERS: [&str; 2] = ["tokenizers (Rust)", "kitoken"];

/// Cut `text` at line ends into pieces of at most [`CHUNK`] bytes (a longer line is one
/// piece).
fn chunks(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let cut = if rest.len() <= CHUNK {
            rest.len()
        } else {
            let window = &rest.as_bytes()[..CHUNK];
            match window.iter().rposition(|&b| b == b'\n') {
                Some(i) => i + 1,
                None => rest.find('\n').map_or(rest.len(), |i| i + 1),
            }
        };
        let (head, tail) = rest.split_at(cut);
        out.push(head);
        rest = tail;
    }
    out
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Where two id lists first differ.
fn first_difference(a: &[u32], b: &[u32]) -> Option<usize> {
    if a == b {
        return None;
    }
    Some(a.iter().zip(b).take_while(|(x, y)| x == y).count())
}

/// A model to measure: name, file.
struct ModelFile {
    name: String,
    path: PathBuf,
    /// A `pre_tokenizer` that takes the place of the file's ([`DERIVED`]).
    pre_tokenizer: Option<serde_json::Value>,
}

/// Models made from a committed file with another pre-tokenizer, which every side reads:
/// name, base model (in [`MODELS`]), and the pre-tokenizer. `llama3-8k-compiled` is Llama 3's
/// own regex written so that no hand-rolled splitter claims it (`[\p{N}]` for `\p{N}`):
/// picobpe runs it as a compiled pattern, the same splits as `llama3-8k`'s hand-rolled ones.
/// `deepseek-8k` is DeepSeek V3's pre-tokenizer (three `Split`s, then `ByteLevel` without its
/// regex) over the same vocabulary.
const DERIVED: [(&str, &str, PreTokenizer); 2] = [
    ("llama3-8k-compiled", "llama3-8k", llama3_compiled),
    ("deepseek-8k", "llama3-8k", deepseek_v3),
];

/// Makes a `pre_tokenizer` value.
type PreTokenizer = fn() -> serde_json::Value;

/// A `Split` (`Isolated`) of `regex`.
fn split(regex: &str) -> serde_json::Value {
    serde_json::json!({"type": "Split", "pattern": {"Regex": regex}, "behavior": "Isolated", "invert": false})
}

/// `ByteLevel` without its regex.
fn byte_level() -> serde_json::Value {
    serde_json::json!({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false})
}

fn llama3_compiled() -> serde_json::Value {
    let regex = picobpe_model::PatternKind::Llama3
        .reference_regex()
        .replace(r"\p{N}{1,3}", r"[\p{N}]{1,3}");
    serde_json::json!({"type": "Sequence", "pretokenizers": [split(&regex), byte_level()]})
}

fn deepseek_v3() -> serde_json::Value {
    serde_json::json!({"type": "Sequence", "pretokenizers": [
        split(r"\p{N}{1,3}"),
        split("[一-龥\u{3040}-ゟ゠-ヿ]+"),
        split(r"[!-/:-@\[-`{-~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"),
        byte_level(),
    ]})
}

/// The text of a `tokenizer.json` (un-gzipped when the name ends in `.gz`).
fn read_json(path: &Path) -> Result<String, String> {
    let raw = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if path.extension().is_some_and(|e| e == "gz") {
        let mut s = String::new();
        flate2::read::GzDecoder::new(&raw[..])
            .read_to_string(&mut s)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(s)
    } else {
        String::from_utf8(raw).map_err(|e| format!("{}: {e}", path.display()))
    }
}

struct Options {
    models: Vec<String>,
    jsons: Vec<String>,
    corpora: Vec<String>,
    runs: usize,
    files: Vec<String>,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        models: Vec::new(),
        jsons: Vec::new(),
        corpora: Vec::new(),
        runs: 5,
        files: Vec::new(),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().cloned().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--model" | "-m" => o.models.extend(value()?.split(',').map(String::from)),
            "--tokenizer-json" | "-t" => o.jsons.push(value()?),
            "--corpus" | "-c" => o.corpora.extend(value()?.split(',').map(String::from)),
            "--runs" | "-n" => {
                o.runs = value()?
                    .parse()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or("--runs needs a positive integer")?
            }
            "--help" | "-h" => return Err(String::new()),
            s if s.starts_with('-') => return Err(format!("unknown option `{s}`")),
            f => o.files.push(f.to_string()),
        }
    }
    Ok(o)
}

/// The models the options select.
fn models(root: &Path, o: &Options) -> Result<Vec<ModelFile>, String> {
    let mut v = Vec::new();
    for m in &o.models {
        let known = |name: &&str| name == m;
        if !MODELS.iter().map(|m| &m.0).any(known) && !DERIVED.iter().map(|d| &d.0).any(known) {
            return Err(format!("unknown model `{m}`"));
        }
    }
    // Without --model, every committed model; with --tokenizer-json alone, too.
    for (name, file) in MODELS {
        if o.models.is_empty() || o.models.iter().any(|m| m == name) {
            v.push(ModelFile {
                name: name.to_owned(),
                path: root.join(file),
                pre_tokenizer: None,
            });
        }
    }
    for (name, base, pre_tokenizer) in DERIVED {
        if o.models.is_empty() || o.models.iter().any(|m| m == name) {
            let file = MODELS
                .iter()
                .find(|m| m.0 == base)
                .map(|m| m.1)
                .unwrap_or_default();
            v.push(ModelFile {
                name: name.to_owned(),
                path: root.join(file),
                pre_tokenizer: Some(pre_tokenizer()),
            });
        }
    }
    for j in &o.jsons {
        let path = PathBuf::from(j);
        let mut name = path
            .file_name()
            .map_or(j.clone(), |f| f.to_string_lossy().into_owned());
        for suffix in [".gz", ".json"] {
            if let Some(s) = name.strip_suffix(suffix) {
                name = s.to_owned();
            }
        }
        v.push(ModelFile {
            name,
            path,
            pre_tokenizer: None,
        });
    }
    Ok(v)
}

/// A model loaded by both sides.
struct Loaded {
    ours: Picobpe,
    ours_cached: Picobpe,
    /// In [`PEERS`] order; `Err`: why the column is absent.
    peers: Vec<Result<Box<dyn Subject>, String>>,
    n_ids: usize,
    load_ours: Duration,
    /// The peers' load times (`None`: it did not load).
    load_peers: Vec<Option<Duration>>,
    notes: Vec<String>,
}

fn load(m: &ModelFile) -> Result<Loaded, String> {
    use picobpe_model::tokenizer_json::Family;
    let mut json = read_json(&m.path)?;
    if let Some(pre) = &m.pre_tokenizer {
        let mut value: serde_json::Value =
            serde_json::from_str(&json).map_err(|e| format!("{}: {e}", m.path.display()))?;
        value["pre_tokenizer"] = pre.clone();
        json = value.to_string();
    }
    let start = Instant::now();
    let file = picobpe_model::TokenizerJson::parse(json.as_bytes())
        .map_err(|e| format!("{}: picobpe import: {e}", m.path.display()))?;
    match file.family() {
        Family::WordPiece => return load_wordpiece(m, &json, &file, start),
        Family::SentencePiece => return load_sentencepiece(m, &json, &file, start),
        Family::ByteLevel => {}
    }
    let import = picobpe_model::import::tokenizer_json(&file)
        .map_err(|e| format!("{}: picobpe import: {e}", m.path.display()))?;
    let tables = picobpe_model::TableData::new(&import.model, picobpe_model::PieceTable::Full)
        .map_err(|e| format!("{}: picobpe tables: {e}", m.path.display()))?
        .to_tables();
    let tok = Tok::Bpe(Tokenizer::new(tables));
    let load_ours = start.elapsed();
    let (peers, load_peers) = load_peers(m, &json);
    Ok(Loaded {
        ours: Picobpe {
            tok,
            out: vec![0; 1 << 16],
            cache: Vec::new(),
        },
        ours_cached: Picobpe {
            tok: Tok::Bpe(Tokenizer::new(tables)),
            out: vec![0; 1 << 16],
            cache: vec![CacheEntry::EMPTY; CACHE_LINES],
        },
        peers,
        n_ids: import.model.n_ids(),
        load_ours,
        load_peers,
        notes: import.notes,
    })
}

/// A WordPiece `tokenizer.json`: picobpe's `WpTokenizer` (it has no piece cache, so both
/// picobpe columns time the same call) next to `tokenizers`.
fn load_wordpiece(
    m: &ModelFile,
    json: &str,
    file: &picobpe_model::TokenizerJson,
    start: Instant,
) -> Result<Loaded, String> {
    let import = picobpe_model::wordpiece::import_tokenizer_json(file)
        .map_err(|e| format!("{}: picobpe import: {e}", m.path.display()))?;
    let tables = picobpe_model::WpTableData::new(&import.model)
        .map_err(|e| format!("{}: picobpe tables: {e}", m.path.display()))?
        .to_tables();
    let load_ours = start.elapsed();
    let tok = Tok::Wp(picobpe::WpTokenizer::new(tables));
    Ok(uncached(
        m,
        json,
        tok,
        import.model.n_ids(),
        load_ours,
        import.notes,
    ))
}

/// A SentencePiece `tokenizer.json` (the Unigram one): picobpe's `SpTokenizer` over tables
/// imported from the file (no word cache with `tokenizers`' arithmetic, so both picobpe
/// columns time the same call) next to `tokenizers`.
fn load_sentencepiece(
    m: &ModelFile,
    json: &str,
    file: &picobpe_model::TokenizerJson,
    start: Instant,
) -> Result<Loaded, String> {
    let model = picobpe_model::sentencepiece::import_tokenizer_json(file)
        .map_err(|e| format!("{}: picobpe import: {e}", m.path.display()))?;
    let tables = picobpe_model::SpTableData::new(&model)
        .map_err(|e| format!("{}: picobpe tables: {e}", m.path.display()))?
        .to_tables();
    let load_ours = start.elapsed();
    let tok = Tok::Sp(picobpe::SpTokenizer::new(tables));
    Ok(uncached(m, json, tok, model.n_ids(), load_ours, Vec::new()))
}

/// A model whose picobpe tokenizer has no piece cache (both picobpe columns time the same
/// call), with `tokenizers` loading the same file.
fn uncached(
    m: &ModelFile,
    json: &str,
    tok: Tok,
    n_ids: usize,
    load_ours: Duration,
    notes: Vec<String>,
) -> Loaded {
    let (peers, load_peers) = load_peers(m, json);
    let ours = || Picobpe {
        tok,
        out: vec![0; 1 << 16],
        cache: Vec::new(),
    };
    Loaded {
        ours: ours(),
        ours_cached: ours(),
        peers,
        n_ids,
        load_ours,
        load_peers,
        notes,
    }
}

/// The peers loading the same file ([`PEERS`] order), `tokenizers` with added tokens as
/// text, and their load times.
#[allow(clippy::type_complexity)]
fn load_peers(
    m: &ModelFile,
    json: &str,
) -> (Vec<Result<Box<dyn Subject>, String>>, Vec<Option<Duration>>) {
    let start = Instant::now();
    let hf = json
        .parse::<tokenizers::Tokenizer>()
        .map_err(|e| format!("tokenizers cannot load {}: {e}", m.path.display()));
    let load_hf = hf.is_ok().then(|| start.elapsed());
    let hf = hf.and_then(|mut t| {
        t.set_encode_special_tokens(true);
        // Only ids are compared: no truncation or padding (none of the committed files has
        // any).
        t.with_truncation(None).map_err(|e| e.to_string())?;
        t.with_padding(None);
        Ok(Box::new(HfTokenizers(t)) as Box<dyn Subject>)
    });
    // kitoken applies the file's truncation (all-MiniLM-L6-v2's: 128 ids) and padding; as for
    // tokenizers above, the file is given without them (the clearing is not timed).
    let kit_json = serde_json::from_str::<serde_json::Value>(json).map(|mut v| {
        v["truncation"] = serde_json::Value::Null;
        v["padding"] = serde_json::Value::Null;
        v.to_string()
    });
    let start = Instant::now();
    let kit = kit_json
        .map_err(|e| e.to_string())
        .and_then(|j| {
            kitoken::Kitoken::from_tokenizers_slice(j.as_bytes()).map_err(|e| e.to_string())
        })
        .map_err(|e| format!("kitoken cannot load {}: {e}", m.path.display()));
    let load_kit = kit.is_ok().then(|| start.elapsed());
    let kit = kit.map(|k| Box::new(Kitoken(k)) as Box<dyn Subject>);
    (vec![hf, kit], vec![load_hf, load_kit])
}

/// One corpus, cut and put in NFC.
struct Texts {
    name: String,
    texts: Vec<String>,
    bytes: usize,
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opts = match parse(&args) {
        Ok(o) => o,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("error: {e}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let model_files = match models(root, &opts) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };

    let (source, corpora) = corpus::load(root, &opts.files, &opts.corpora);
    match &source {
        corpus::Source::Shared(p) => println!("corpora: {}", p.display()),
        corpus::Source::Fixtures(p) => println!(
            "note: the shared corpus is absent; measuring the committed fixtures in {}",
            p.display()
        ),
        corpus::Source::Files => println!("corpora: files from the command line"),
    }
    // Cut each corpus into texts (as they are: both sides normalize, where the file says so).
    let mut all_texts = Vec::new();
    for c in corpora {
        let texts: Vec<String> = chunks(&c.text).iter().map(|t| t.to_string()).collect();
        let bytes = texts.iter().map(String::len).sum();
        println!("corpus {}: {} bytes, {} texts", c.name, bytes, texts.len());
        all_texts.push(Texts {
            name: c.name,
            texts,
            bytes,
        });
    }
    println!(
        "single thread, texts of at most {} KiB, median of {} runs, MB/s; \
         tokenizers {} (fancy-regex, encode_fast, add_special_tokens=false)",
        CHUNK / 1024,
        opts.runs,
        tokenizers_version(root)
    );

    let mut table = Vec::new();
    for m in &model_files {
        let mut l = match load(m) {
            Ok(l) => l,
            Err(e) => {
                eprintln!("FAILURE: {}: {e}", m.name);
                return ExitCode::FAILURE;
            }
        };
        let ms = |d: &Option<Duration>| {
            d.map_or("—".to_owned(), |d| {
                format!("{:.1} ms", d.as_secs_f64() * 1e3)
            })
        };
        println!(
            "\nmodel {} ({}, {} ids): load: picobpe (import + tables) {:.1} ms, tokenizers \
             (from_str) {}, kitoken (from_tokenizers_slice) {}",
            m.name,
            m.path.display(),
            l.n_ids,
            l.load_ours.as_secs_f64() * 1e3,
            ms(&l.load_peers[0]),
            ms(&l.load_peers[1]),
        );
        for n in &l.notes {
            println!("  import note: {n}");
        }
        for e in l.peers.iter().filter_map(|p| p.as_ref().err()) {
            println!("  note: {e}");
        }
        for c in &all_texts {
            let texts: Vec<&str> = c.texts.iter().map(String::as_str).collect();
            // Exactness first: picobpe with and without its cache, then the peer.
            let mut want = Vec::with_capacity(texts.len());
            for (i, t) in texts.iter().enumerate() {
                let ids = l.ours.ids(t);
                if l.ours_cached.ids(t) != ids {
                    eprintln!(
                        "FAILURE: {} / {}: text {i}: picobpe with a cache differs from picobpe",
                        m.name, c.name
                    );
                    return ExitCode::FAILURE;
                }
                want.push(ids);
            }
            let n_ids: usize = want.iter().map(Vec::len).sum();
            // Each peer: exact on every text (then timed), or where it first differs.
            let states: Vec<Result<(), String>> = l
                .peers
                .iter_mut()
                .zip(PEERS)
                .map(|(peer, peer_name)| {
                    let p = peer.as_mut().map_err(|_| "—".to_owned())?;
                    let mut differing = 0;
                    let mut first = None;
                    for (i, (t, w)) in texts.iter().zip(&want).enumerate() {
                        let got = p.ids(t);
                        if let Some(at) = first_difference(w, &got) {
                            differing += 1;
                            first.get_or_insert((i, at, got));
                        }
                    }
                    match first {
                        None => Ok(()),
                        Some((i, at, got)) => {
                            let w = &want[i];
                            let near =
                                |v: &[u32]| v[at.saturating_sub(2)..(at + 3).min(v.len())].to_vec();
                            println!(
                                "  {} / {}: {peer_name}'s ids differ in {differing} of {} \
                                 texts; first: text {i}, id {at}: picobpe {:?} vs {:?}",
                                m.name,
                                c.name,
                                texts.len(),
                                near(w),
                                near(&got)
                            );
                            Err(format!("ids differ ({differing} texts)"))
                        }
                    }
                })
                .collect();
            drop(want);
            // The columns, interleaved.
            let mut ours_s = Vec::new();
            let mut cached_s = Vec::new();
            let mut peer_s = vec![Vec::new(); PEERS.len()];
            for _ in 0..opts.runs {
                let t = Instant::now();
                std::hint::black_box(l.ours.run(&texts));
                ours_s.push(t.elapsed().as_secs_f64());
                let t = Instant::now();
                std::hint::black_box(l.ours_cached.run(&texts));
                cached_s.push(t.elapsed().as_secs_f64());
                for ((state, peer), times) in states.iter().zip(&mut l.peers).zip(&mut peer_s) {
                    if let (Ok(()), Ok(p)) = (state, peer) {
                        let t = Instant::now();
                        std::hint::black_box(p.run(&texts));
                        times.push(t.elapsed().as_secs_f64());
                    }
                }
            }
            let mb = c.bytes as f64 / 1e6;
            let ours_mbs = mb / median(ours_s);
            let cached_mbs = mb / median(cached_s);
            let mut cells = Vec::new();
            let mut best: Option<(f64, &str)> = None;
            for ((state, times), name) in states.into_iter().zip(peer_s).zip(PEERS) {
                match state {
                    Ok(()) => {
                        let s = mb / median(times);
                        cells.push(format!("{s:.1}"));
                        if best.is_none_or(|(b, _)| s > b) {
                            best = Some((s, name));
                        }
                    }
                    Err(e) => cells.push(e),
                }
            }
            let ratio_cell = best.map_or("—".to_owned(), |(s, name)| {
                format!("{:.2}× / {:.2}× ({name})", ours_mbs / s, cached_mbs / s)
            });
            let line = format!(
                "| {} | {} | {:.1} | {:.1} | {} | {ratio_cell} |",
                m.name,
                c.name,
                ours_mbs,
                cached_mbs,
                cells.join(" | ")
            );
            println!("{line}  ({n_ids} ids)");
            table.push(line);
        }
    }
    println!(
        "\n| model | corpus | picobpe | picobpe + 1 MiB cache | tokenizers (Rust) | kitoken | picobpe / fastest exact peer (no cache / cache) |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|");
    for line in &table {
        println!("{line}");
    }
    ExitCode::SUCCESS
}

/// The `tokenizers` crate version the workspace locks (the crate exports none).
fn tokenizers_version(root: &Path) -> String {
    let lock = std::fs::read_to_string(root.join("Cargo.lock")).unwrap_or_default();
    lock.split("[[package]]")
        .find(|p| p.contains("\nname = \"tokenizers\"\n"))
        .and_then(|p| p.lines().find_map(|l| l.strip_prefix("version = ")))
        .map_or("?".to_owned(), |v| v.trim_matches('"').to_owned())
}
