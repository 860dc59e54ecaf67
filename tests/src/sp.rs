//! SentencePiece BPE conformance: the reference vectors in `fixtures/sentencepiece` (made by
//! `tests/scripts/gen_sp_vectors.py` with the `sentencepiece` and `tokenizers` packages; see
//! its PROVENANCE.md) and the checks run on them.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use base64::Engine;
use picobpe::{
    Cursor, DecodeError, EncodeError, SpTables, SpTokenizer, Specials, StreamDecoder,
    StreamEncoder, Tokenize,
};
use picobpe_model::sentencepiece::{import_model_proto, import_tokenizer_json};
use picobpe_model::{SpModel, SpTableData};
use serde::Deserialize;

/// `tests/fixtures/sentencepiece`.
pub fn dir() -> PathBuf {
    crate::paths::fixtures().join("sentencepiece")
}

/// The fixture folder of `model`: `tests/fixtures/unigram` for the Unigram models (`ug*`,
/// made by `tests/scripts/gen_unigram_vectors.py`, same record format),
/// `tests/fixtures/sp_norm` for the character-map normalizer models (`nfkc-*`, made by
/// `tests/scripts/gen_sp_norm_vectors.py`, same record format), `tests/fixtures/metaspace`
/// for the `tokenizer.json` files with a `Metaspace` pre-tokenizer (`ms-*`, made by
/// `tests/scripts/gen_metaspace_vectors.py`; their `ids` are `tokenizers`'), else [`dir`].
pub fn model_dir(model: &str) -> PathBuf {
    if model.starts_with("whisper-") {
        // Byte-level vectors in the same record format (`tests/scripts/gen_whisper_vectors.py`).
        crate::paths::fixtures().join("whisper")
    } else if model.starts_with("rank-regex") {
        // Likewise (`tests/scripts/gen_rank_regex_vectors.py`).
        crate::paths::fixtures().join("rank_regex")
    } else if model.starts_with("tekken") {
        // Likewise (`tests/scripts/gen_tekken_vectors.py`).
        crate::paths::fixtures().join("tekken")
    } else if model.starts_with("ms-") {
        crate::paths::fixtures().join("metaspace")
    } else if model.starts_with("ug") {
        crate::paths::fixtures().join("unigram")
    } else if model.starts_with("nfkc-") {
        crate::paths::fixtures().join("sp_norm")
    } else {
        dir()
    }
}

/// One input and what the references made of it.
pub struct SpCase {
    /// The record's name.
    pub name: String,
    /// The input bytes.
    pub input: Vec<u8>,
    /// `sentencepiece`'s `EncodeAsIds`.
    pub ids: Vec<u32>,
    /// `sentencepiece`'s `DecodeIds(ids)` as UTF-8.
    pub decoded: Vec<u8>,
    /// Hugging Face `tokenizers`' ids from the model's `tokenizer.json`, where they differ
    /// from `ids`.
    pub hf: Option<Vec<u32>>,
    /// `ids` and `decoded` are `tokenizers`' own (`encode(text, add_special_tokens=False)`
    /// and `decode(ids, skip_special_tokens=False)` of the `tokenizer.json`), not
    /// `sentencepiece`'s: every check applies to the `tokenizer.json` import.
    pub tokenizers_reference: bool,
}

#[derive(Deserialize)]
struct Header {
    inputs: String,
    count: usize,
    /// `"tokenizers"` when the records are `tokenizers`' (absent: `sentencepiece`'s).
    reference: Option<String>,
}

#[derive(Deserialize)]
struct Record {
    name: String,
    ids: Vec<u32>,
    /// Absent when the decoded text equals the input.
    decoded_b64: Option<String>,
    hf: Option<Vec<u32>>,
}

#[derive(Deserialize)]
struct InputRecord {
    name: String,
    text: Option<String>,
    text_b64: Option<String>,
    file: Option<String>,
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn b64(s: &str) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(s)
        .expect("base64")
}

/// The inputs file at `rel` (relative to `tests/fixtures`), records by name.
fn inputs(rel: &str) -> HashMap<String, Vec<u8>> {
    let path = crate::paths::fixtures().join(rel);
    let base = path.parent().unwrap_or(Path::new(".")).to_owned();
    // Files named in a vectors/inputs set are relative to `fixtures/vectors`.
    let file_base = if rel.starts_with("vectors/") {
        crate::paths::vectors()
    } else {
        base
    };
    let data = read(&path);
    data.split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|line| {
            let r: InputRecord = serde_json::from_slice(line).expect("input record");
            let bytes = match (r.text, r.text_b64, r.file) {
                (Some(t), None, None) => t.into_bytes(),
                (None, Some(b), None) => b64(&b),
                (None, None, Some(f)) => read(&file_base.join(f)),
                _ => panic!(
                    "{}: {}: need one of text, text_b64, file",
                    path.display(),
                    r.name
                ),
            };
            (r.name, bytes)
        })
        .collect()
}

/// The vector sets committed for `model` (file stems of `vectors/<model>/*.jsonl.gz`).
pub fn sets(model: &str) -> Vec<String> {
    let mut sets: Vec<String> = std::fs::read_dir(model_dir(model).join("vectors").join(model))
        .unwrap_or_else(|e| panic!("vectors of {model}: {e}"))
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            Some(name.strip_suffix(".jsonl.gz")?.to_owned())
        })
        .collect();
    sets.sort();
    sets
}

/// The cases of one model and set.
pub fn load(model: &str, set: &str) -> Vec<SpCase> {
    let path = model_dir(model).join(format!("vectors/{model}/{set}.jsonl.gz"));
    let mut data = Vec::new();
    flate2::read::GzDecoder::new(read(&path).as_slice())
        .read_to_end(&mut data)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = data.split(|&b| b == b'\n').filter(|l| !l.is_empty());
    let header: Header = serde_json::from_slice(lines.next().expect("header")).expect("header");
    let inputs = inputs(&header.inputs);
    let cases: Vec<SpCase> = lines
        .map(|line| {
            let r: Record = serde_json::from_slice(line).expect("record");
            let input = inputs
                .get(&r.name)
                .unwrap_or_else(|| panic!("{}: no input named {}", path.display(), r.name))
                .clone();
            let decoded = r
                .decoded_b64
                .map_or_else(|| replace_malformed(&input), |d| b64(&d));
            SpCase {
                name: r.name,
                input,
                ids: r.ids,
                decoded,
                hf: r.hf,
                tokenizers_reference: header.reference.as_deref() == Some("tokenizers"),
            }
        })
        .collect();
    assert_eq!(cases.len(), header.count, "{}", path.display());
    cases
}

/// `bytes` with each byte outside a well-formed UTF-8 sequence replaced by U+FFFD (one per
/// byte, as SentencePiece's normalizer reads them): what a record without `decoded_b64`
/// decodes to.
pub fn replace_malformed(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        out.extend_from_slice(chunk.valid().as_bytes());
        for _ in chunk.invalid() {
            out.extend_from_slice("\u{FFFD}".as_bytes());
        }
    }
    out
}

/// Where a model's tables come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SpSource {
    /// `models/<model>.model` through `import_model_proto`.
    ModelProto,
    /// `models/<model>.tokenizer.json` through `import_tokenizer_json`.
    TokenizerJson,
    /// As [`SpSource::ModelProto`], written with its prebuilt tables (`SpModel::write`,
    /// format version 3) and mapped back by `read_tables`: what the CLI loads.
    ModelFile,
    /// As [`SpSource::ModelProto`], with the character map in its compact form
    /// (`SpTableData::with_compact_charsmap`): what `picobpe-build` bakes.
    Compact,
}

/// The imported model (cached per process).
pub fn model(name: &str, source: SpSource) -> SpModel {
    static CACHE: OnceLock<Mutex<HashMap<(String, SpSource), SpModel>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = (name.to_owned(), source);
    if let Some(m) = cache.lock().unwrap().get(&key) {
        return m.clone();
    }
    let models = model_dir(name).join("models");
    let m = match source {
        SpSource::ModelProto | SpSource::ModelFile | SpSource::Compact => {
            import_model_proto(&read(&models.join(format!("{name}.model")))).expect("import")
        }
        SpSource::TokenizerJson => {
            let json = read(&models.join(format!("{name}.tokenizer.json")));
            let file = picobpe_model::TokenizerJson::parse(&json).expect("a tokenizer.json");
            import_tokenizer_json(&file).expect("import")
        }
    };
    cache.lock().unwrap().insert(key, m.clone());
    m
}

/// Live tables of the model (built once per process, leaked like the CLI's).
pub fn tables(name: &str, source: SpSource) -> &'static SpTables<'static> {
    static CACHE: OnceLock<Mutex<HashMap<(String, SpSource), &'static SpTables<'static>>>> =
        OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = (name.to_owned(), source);
    if let Some(t) = cache.lock().unwrap().get(&key) {
        return t;
    }
    let t = if source == SpSource::ModelFile {
        let model = model(name, source);
        match crate::through_model_file(name, |path| model.write(path)) {
            picobpe_model::LiveTables::SentencePiece(t) => t,
            other => panic!("{name}: loaded as another kind: {other:?}"),
        }
    } else if source == SpSource::Compact {
        SpTableData::new(&model(name, source))
            .and_then(SpTableData::with_compact_charsmap)
            .expect("valid model")
            .to_tables()
    } else {
        SpTableData::new(&model(name, source))
            .expect("valid model")
            .to_tables()
    };
    cache.lock().unwrap().insert(key, t);
    t
}

/// Ids of room enough to encode `len` input bytes at once: 16 per byte (a word's work area is
/// 10 ids per symbol plus its normalized bytes, at most 3 per input byte), 16 times that with
/// a character map (whose rules may expand a key 16-fold), 6 times with a Unicode normalizer.
pub fn room(tok: &SpTokenizer<'_>, len: usize) -> usize {
    // A Unicode normalizer normalizes a long word into the buffer's far end and asks for
    // room for up to four normalized bytes per input byte (`crate::normalizer`'s window).
    let expand = if !tok.tables().charsmap.is_empty() {
        16
    } else if tok.tables().normalizer.is_some() {
        6
    } else {
        1
    };
    16 * expand * len + 64
}

/// One-shot encode into a buffer big enough for any word of the input.
pub fn encode(tok: &SpTokenizer<'_>, input: &[u8]) -> Result<Vec<u32>, EncodeError> {
    let mut out = vec![0u32; room(tok, input.len())];
    let n = tok.encode(input, &mut out)?;
    out.truncate(n);
    Ok(out)
}

/// Encode through an output buffer of `cap` ids with an [`Cursor`], draining and resuming
/// on `OutputFull`.
pub fn encode_cursor_resumed(
    tok: &SpTokenizer<'_>,
    input: &[u8],
    cap: usize,
) -> Result<Vec<u32>, EncodeError> {
    let mut buf = vec![0u32; cap];
    let mut ids = Vec::new();
    let mut cursor = Cursor::START;
    loop {
        let from = cursor.offset();
        match tok.encode_at(input, &mut cursor, &mut buf, Specials::All, &mut []) {
            Ok(n) => {
                ids.extend_from_slice(&buf[..n]);
                assert_eq!(cursor.offset(), input.len());
                return Ok(ids);
            }
            Err(EncodeError::OutputFull { consumed, written }) => {
                assert!(consumed > from || written > 0, "no progress at {from}");
                assert_eq!(cursor.offset(), consumed);
                ids.extend_from_slice(&buf[..written]);
            }
            Err(e) => return Err(e),
        }
    }
}

/// Encode through an output buffer of `cap` ids, draining and resuming on `OutputFull`.
pub fn encode_resumed(
    tok: &SpTokenizer<'_>,
    input: &[u8],
    cap: usize,
) -> Result<Vec<u32>, EncodeError> {
    let mut buf = vec![0u32; cap];
    let mut ids = Vec::new();
    let mut from = 0;
    loop {
        match tok.encode_from(input, from, &mut buf, Specials::All, &mut []) {
            Ok(n) => {
                ids.extend_from_slice(&buf[..n]);
                return Ok(ids);
            }
            Err(EncodeError::OutputFull { consumed, written }) => {
                assert!(consumed > from || written > 0, "no progress at {from}");
                ids.extend_from_slice(&buf[..written]);
                from = consumed;
            }
            Err(e) => return Err(e),
        }
    }
}

/// Decode through an output buffer of `cap` bytes, draining and resuming on `OutputFull`.
pub fn decode_resumed(
    tok: &SpTokenizer<'_>,
    ids: &[u32],
    cap: usize,
) -> Result<Vec<u8>, DecodeError> {
    let mut buf = vec![0u8; cap];
    let mut text = Vec::new();
    let mut from = 0;
    loop {
        match tok.decode_from(ids, from, &mut buf) {
            Ok(n) => {
                text.extend_from_slice(&buf[..n]);
                return Ok(text);
            }
            Err(DecodeError::OutputFull { consumed, written }) => {
                assert!(consumed > from || written > 0, "no progress at {from}");
                text.extend_from_slice(&buf[..written]);
                from = consumed;
            }
            Err(e) => return Err(e),
        }
    }
}

/// Encode `input` through a [`StreamEncoder`] of any family in chunks of `chunk` bytes,
/// taking ids `take` at a time.
pub fn encode_streamed<T: Tokenize>(
    tok: T,
    specials: Specials,
    input: &[u8],
    chunk: usize,
    take: usize,
) -> Result<Vec<u32>, picobpe::StreamError> {
    let mut enc = Box::new(StreamEncoder::<T, 16_384, 65_536>::new(tok, specials));
    let mut ids = Vec::new();
    let mut buf = vec![0u32; take];
    let mut rest = input;
    loop {
        if !rest.is_empty() {
            let n = enc.push(&rest[..chunk.min(rest.len())])?;
            rest = &rest[n..];
            if rest.is_empty() {
                enc.finish();
            }
        } else if input.is_empty() {
            enc.finish();
        }
        loop {
            let n = enc.take(&mut buf)?;
            ids.extend_from_slice(&buf[..n]);
            if n == 0 {
                break;
            }
        }
        if enc.is_done() {
            return Ok(ids);
        }
    }
}

/// Decode `ids` through a [`StreamDecoder`] of any family, taking `take` bytes at a time.
pub fn decode_streamed<T: Tokenize>(
    tok: T,
    ids: &[u32],
    take: usize,
) -> Result<Vec<u8>, DecodeError> {
    let mut dec = StreamDecoder::<T, 512>::new(tok);
    let mut text = Vec::new();
    let mut buf = vec![0u8; take];
    for &id in ids {
        loop {
            match dec.push(id) {
                Ok(()) => break,
                Err(DecodeError::OutputFull { .. }) => {
                    let n = dec.take(&mut buf);
                    assert!(n > 0, "no progress");
                    text.extend_from_slice(&buf[..n]);
                }
                Err(e) => return Err(e),
            }
        }
    }
    dec.finish();
    loop {
        let n = dec.take(&mut buf);
        if n == 0 {
            return Ok(text);
        }
        text.extend_from_slice(&buf[..n]);
    }
}

/// The longest word of `input` in bytes, a word being a run of spaces then other bytes (the
/// unit the encoder holds whole).
fn longest_word(input: &[u8]) -> usize {
    let (mut longest, mut start) = (0, 0);
    for i in 1..input.len() {
        if input[i] == b' ' && input[i - 1] != b' ' {
            longest = longest.max(i - start);
            start = i;
        }
    }
    longest.max(input.len() - start)
}

/// [`check`] every committed vector set of `model` (at least the five of the suites).
pub fn check_all_sets(model: &str, source: SpSource) {
    let sets = sets(model);
    assert!(sets.len() >= 5, "{model}: only {sets:?}");
    for set in sets {
        check(model, source, &set);
    }
}

/// Check every case of `model` × `set` from `source`: one-shot and resumed encode, count,
/// one-shot and resumed decode. Collects failures and panics with the first few.
pub fn check(model: &str, source: SpSource, set: &str) {
    let tok = SpTokenizer::new(tables(model, source));
    let mut failures = Vec::new();
    let cases = load(model, set);
    for case in &cases {
        let want = match source {
            SpSource::ModelProto | SpSource::ModelFile | SpSource::Compact => &case.ids,
            SpSource::TokenizerJson => case.hf.as_ref().unwrap_or(&case.ids),
        };
        let got = encode(&tok, &case.input);
        if got.as_ref() != Ok(want) {
            failures.push(format!(
                "{}: encode {}\n  want {:?}\n  got  {:?}",
                case.name,
                crate::check::escape(&case.input[..case.input.len().min(120)]),
                &want[..want.len().min(40)],
                got.as_ref().map(|g| &g[..g.len().min(40)])
            ));
            continue;
        }
        if source == SpSource::TokenizerJson && !case.tokenizers_reference {
            // Only the ids are `tokenizers`' (`hf`): the rest is `sentencepiece`'s.
            continue;
        }
        // A small word cache, twice (the second time with hits).
        let mut cache = vec![picobpe::CacheEntry::EMPTY; 61];
        for pass in 0..2 {
            let mut out = vec![0u32; room(&tok, case.input.len())];
            match tok.encode_from(&case.input, 0, &mut out, Specials::All, &mut cache) {
                Ok(n) if out[..n] == want[..] => {}
                other => failures.push(format!(
                    "{}: encode_cached (pass {pass}) differs: {:?}",
                    case.name, other
                )),
            }
        }
        // The cursor with a word cache, twice (the second time with hits): a Unigram model
        // caches only words whose segmentation the carried score cannot change.
        let mut cache = vec![picobpe::CacheEntry::EMPTY; 1024];
        for pass in 0..2 {
            let mut out = vec![0u32; room(&tok, case.input.len())];
            let mut cursor = Cursor::START;
            match tok.encode_at(
                &case.input,
                &mut cursor,
                &mut out,
                Specials::All,
                &mut cache,
            ) {
                Ok(n) if out[..n] == want[..] => {}
                other => failures.push(format!(
                    "{}: encode_cursor_cached (pass {pass}) differs: {:?}",
                    case.name, other
                )),
            }
        }
        for cap in [200usize, 1000] {
            // A Unigram `encode_from` re-reads the text before `from`: quadratic on the
            // longest inputs, which the cursor covers.
            if !tok.is_unigram() || case.input.len() < 20_000 {
                match encode_resumed(&tok, &case.input, cap) {
                    Ok(ids) if &ids == want => {}
                    Err(EncodeError::PieceTooLong { needed, .. }) if needed > cap => {}
                    other => failures.push(format!(
                        "{}: resumed encode (cap {cap}) differs: {:?}",
                        case.name,
                        other.map(|v| v.len())
                    )),
                }
            }
            match encode_cursor_resumed(&tok, &case.input, cap) {
                Ok(ids) if &ids == want => {}
                Err(EncodeError::PieceTooLong { needed, .. }) if needed > cap => {}
                other => failures.push(format!(
                    "{}: cursor-resumed encode (cap {cap}) differs: {:?}",
                    case.name,
                    other.map(|v| v.len())
                )),
            }
        }
        let mut scratch = vec![0u32; 4096];
        match tok.count(&case.input, &mut scratch, Specials::All) {
            Ok(n) if n == want.len() => {}
            Err(EncodeError::PieceTooLong { needed, .. }) if needed > 4096 => {}
            other => failures.push(format!(
                "{}: count {other:?}, want {}",
                case.name,
                want.len()
            )),
        }
        let mut out = vec![0u8; 4 * case.decoded.len() + 64];
        match tok.decode(want, &mut out) {
            Ok(n) if out[..n] == case.decoded[..] => {}
            other => failures.push(format!(
                "{}: decode {:?}\n  want {}\n  got  {}",
                case.name,
                other,
                crate::check::escape(&case.decoded[..case.decoded.len().min(120)]),
                crate::check::escape(&out[..other.unwrap_or(0).min(120)])
            )),
        }
        // Streaming: random chunk and take sizes; a capacity error only where a word is longer
        // than the stream's buffers (or the tables hold the whole text).
        let seed = case.input.len() + case.name.len();
        let (chunk, take) = (1 + seed * 7 % 97, 1 + seed * 13 % 31);
        let t = tok.tables();
        let apart = t.split_words
            && (t.sections == picobpe::sentencepiece::Sections::Inline
                || t.user_defined.is_empty());
        match encode_streamed(tok, Specials::All, &case.input, chunk, take) {
            Ok(ids) if ids == *want => {}
            Err(
                picobpe::StreamError::InputTooSmall { .. }
                | picobpe::StreamError::PieceTooLong { .. },
            ) if longest_word(&case.input) > 2048 || (!apart && case.input.len() > 2048) => {}
            other => failures.push(format!(
                "{}: streamed encode (chunk {chunk}, take {take}) differs: {:?}",
                case.name,
                other.map(|v| v.len())
            )),
        }
        match decode_streamed(tok, want, 4 + seed % 9) {
            Ok(text) if text == case.decoded => {}
            other => failures.push(format!(
                "{}: streamed decode differs: {:?}",
                case.name,
                other.map(|t| t.len())
            )),
        }
        // Any piece's text fits in MAX_PIECE_BYTES.
        match decode_resumed(&tok, want, picobpe::sentencepiece::MAX_PIECE_BYTES) {
            Ok(text) if text == case.decoded => {}
            other => failures.push(format!(
                "{}: resumed decode (cap 128) differs: {:?}",
                case.name,
                other.map(|t| t.len())
            )),
        }
    }
    if !failures.is_empty() {
        panic!(
            "{model} ({source:?}) {set}: {} of {} cases fail:\n{}",
            failures.len(),
            cases.len(),
            failures
                .iter()
                .take(8)
                .cloned()
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}
