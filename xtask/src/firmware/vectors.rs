//! The conformance subset the on-target tests embed: a few dozen records of the tiktoken
//! reference vectors in `tests/fixtures/vectors/` (made by `tests/scripts/gen_vectors.py` with
//! tiktoken — never by picobpe), of the sentencepiece reference vectors in
//! `tests/fixtures/sentencepiece/vectors/` (BPE, made by `tests/scripts/gen_sp_vectors.py` with
//! sentencepiece) and `tests/fixtures/unigram/vectors/` (Unigram, made by
//! `tests/scripts/gen_unigram_vectors.py` with sentencepiece, same record format), or of the
//! Hugging Face `tokenizers` reference vectors in
//! `tests/fixtures/hf_bpe/<model>/` and `tests/fixtures/wordpiece/<model>/` (made by
//! `tests/scripts/gen_hf_vectors.py` and `gen_wp_vectors.py` with tokenizers), re-encoded in a
//! flat binary form the firmware reads without allocating.
//!
//! Selection (deterministic), tiktoken: every `fixtures` record whose text is at most 4 KiB (the
//! CS336 fixtures, the special-token mix, the sanity string, empty, single characters, one
//! emoji, contractions), the first 48 `random` records and the first 32 `invalid_utf8` records.
//! sentencepiece: every `sp_edge` record, every `fixtures` record of at most 4 KiB, the first 32
//! `random` and the first 16 `invalid_utf8` records, each only if it fits the test's buffers on
//! the machine ([`sp_limits`]): its ids plus the work area of its longest word (an upper bound:
//! BPE's merge area, [`sp_encode_room`], or Unigram's lattice, [`unigram_encode_room`], over
//! the text as the model's character map normalizes it) in the encode buffer, its decoded text
//! in the decode buffer. A model with a character map (`tests/fixtures/sp_norm/`, made by
//! `tests/scripts/gen_sp_norm_vectors.py` with sentencepiece): every `sp_edge` and `nfkc_edge`
//! record, every `corpus` record of at most 4 KiB, the first 64 `random` and the first 32
//! `invalid_utf8` records, under the same condition.
//! tokenizers, byte-level BPE ([`prepare_hf_bpe`]): every `fixtures` and `corpus` record of at
//! most 4 KiB and the first 48 `random` records (the model's vectors have no `invalid_utf8`
//! set), each only if it fits the byte-level tests' buffers ([`HF_BPE_LIMITS`]); tokenizers
//! asserted that the ids decode to the input. Tekken ([`prepare_tekken`], `mistral-common`'s
//! ids made by `tests/scripts/gen_tekken_vectors.py`): the same selection, plus the `edge`
//! records whose text holds no special token's text (the Tekkenizer reads it as text, and the
//! on-target tests recognize it; MANIFEST.json lists them). WordPiece ([`prepare_wp`]): every record of
//! `tests/fixtures/wordpiece/probes.jsonl` (hand-picked edge cases, with the text tokenizers'
//! `decode(ids)` gives), every `fixtures` and `corpus` record of at most 4 KiB, the first 48
//! `random` and the first 32 `invalid_utf8` records, each only if it fits the WordPiece tests'
//! buffers ([`WP_LIMITS`]); the set files carry no decoded text.
//!
//! Format (little-endian), read by `firmware-example/src/vectors.rs`:
//! ```text
//! b"PBVEC1\0\0"  u32 record count
//! per record:    u16 name length, name bytes, u32 text length, text bytes,
//!                u32 n, n × u32 ids with specials recognized ("all"),
//!                u32 m, m × u32 ids of encode_ordinary ("ordinary", equal to "all" when the
//!                source omits it)
//! ```
//! `PBVEC2` (sentencepiece, tokenizers) adds the buffer sizes the records were selected for,
//! and the text the reference decodes the ids to (`DecodeIds`, `decode`); `0xFFFF_FFFF` as a
//! count means "the same as" (ordinary ids = all ids; decoded text = the input), `0xFFFF_FFFE`
//! as the decoded text's length "not given by the reference":
//! ```text
//! b"PBVEC2\0\0"  u32 record count, u32 encode buffer (u32s), u32 decode buffer (bytes)
//! per record:    as in PBVEC1, then u32 k, k bytes of decoded text
//! ```

use std::collections::HashMap;
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use base64::Engine;

use crate::firmware::Machine;

/// Largest `fixtures` text taken, in bytes.
const MAX_FIXTURE_TEXT: usize = 4096;
/// Records taken from the `random` set.
const RANDOM_RECORDS: usize = 48;
/// Records taken from the `invalid_utf8` set.
const INVALID_RECORDS: usize = 32;
/// Records taken from the sentencepiece `random` set.
const SP_RANDOM_RECORDS: usize = 32;
/// Records taken from the sentencepiece `invalid_utf8` set.
const SP_INVALID_RECORDS: usize = 16;
/// Records taken from the `random` set of a character-map model (strings of map keys).
const SP_NORM_RANDOM_RECORDS: usize = 64;
/// Records taken from the `invalid_utf8` set of a character-map model.
const SP_NORM_INVALID_RECORDS: usize = 32;
/// "The same as" in a PBVEC2 count.
const SAME: u32 = u32::MAX;
/// "Not given by the reference" as a PBVEC2 decoded text's length.
const NONE: u32 = u32::MAX - 1;
/// Records taken from the tokenizers `random` sets.
const HF_RANDOM_RECORDS: usize = 48;
/// Records taken from the tokenizers WordPiece `invalid_utf8` sets.
const WP_INVALID_RECORDS: usize = 32;

/// The buffers of the byte-level on-target tests (`MAX_IDS` ids, 8 KiB of decoded text in
/// `firmware-example/tests/on_target/byte_level.rs`), which a PBVEC2 file of byte-level vectors
/// names and the tests check.
pub const HF_BPE_LIMITS: (usize, usize) = (2048, 8192);

/// The input buffer of the byte-level on-target tests' streaming encoder (`encode_streaming`
/// in `firmware-example/tests/on_target/byte_level.rs`), which holds a whole piece.
const BYTE_LEVEL_STREAM_INPUT: usize = 256;

/// The buffers of the WordPiece on-target tests (`IDS` and `DECODE_BYTES` of
/// `firmware-example/src/wp_tables.rs`, the same on both machines): ids of a one-shot encode,
/// and bytes of a decode.
pub const WP_LIMITS: (usize, usize) = (4096, 12 * 1024);

/// Writes `firmware-example/target/models/<encoding>-vectors.bin` (only when its bytes change)
/// and returns its path and its record count.
pub fn prepare(encoding: &str) -> Result<(PathBuf, usize), String> {
    let root = crate::firmware::repo_root();
    let dir = root.join("tests/fixtures/vectors");
    let mut out = Vec::new();
    let mut count = 0u32;
    for (set, take) in [
        ("fixtures", usize::MAX),
        ("random", RANDOM_RECORDS),
        ("invalid_utf8", INVALID_RECORDS),
    ] {
        let inputs = read_lines(&dir.join("inputs").join(format!("{set}.jsonl")), false)?;
        let ids = read_lines(&dir.join(encoding).join(format!("{set}.jsonl.gz")), true)?;
        // Line 1 of an id file is its header.
        let ids = ids.get(1..).unwrap_or(&[]);
        if ids.len() != inputs.len() {
            return Err(format!(
                "{encoding}/{set}: {} id records for {} inputs",
                ids.len(),
                inputs.len()
            ));
        }
        let mut taken = 0;
        for (input, rec) in inputs.iter().zip(ids) {
            if taken == take {
                break;
            }
            let name = input["name"].as_str().ok_or("input without a name")?;
            if rec["name"].as_str() != Some(name) {
                return Err(format!(
                    "{encoding}/{set}: record order differs at `{name}`"
                ));
            }
            let text = input_bytes(&dir, input)?;
            if set == "fixtures" && text.len() > MAX_FIXTURE_TEXT {
                continue;
            }
            let all = id_list(&rec["all"]).ok_or_else(|| format!("`{name}`: no `all` ids"))?;
            let ordinary = match rec.get("ordinary") {
                Some(v) => id_list(v).ok_or_else(|| format!("`{name}`: bad `ordinary` ids"))?,
                None => all.clone(),
            };
            let name = format!("{set}/{name}");
            out.extend_from_slice(&(name.len() as u16).to_le_bytes());
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(&(text.len() as u32).to_le_bytes());
            out.extend_from_slice(&text);
            for list in [&all, &ordinary] {
                out.extend_from_slice(&(list.len() as u32).to_le_bytes());
                for id in list.iter() {
                    out.extend_from_slice(&id.to_le_bytes());
                }
            }
            taken += 1;
            count += 1;
        }
    }
    let mut file = b"PBVEC1\0\0".to_vec();
    file.extend_from_slice(&count.to_le_bytes());
    file.extend_from_slice(&out);
    let dest_dir = crate::firmware::firmware_dir().join("target/models");
    fs::create_dir_all(&dest_dir).map_err(|e| format!("{}: {e}", dest_dir.display()))?;
    let dest = dest_dir.join(format!("{encoding}-vectors.bin"));
    if fs::read(&dest).ok().as_deref() != Some(&file[..]) {
        fs::write(&dest, &file).map_err(|e| format!("{}: {e}", dest.display()))?;
    }
    Ok((dest, count as usize))
}

/// The buffers the SentencePiece on-target tests encode (`u32`s: ids and the work area of a
/// word) and decode (bytes) a reference vector in, on `machine`: `WORK_IDS` and `DECODE_BYTES`
/// of `firmware-example/src/sp_tables.rs` (the tests check that the vector file says the same).
pub fn sp_limits(machine: Machine) -> (usize, usize) {
    match machine {
        Machine::Lm3s6965evb => (6 * 1024, 8 * 1024),
        Machine::Mps2An385 => (96 * 1024, 64 * 1024),
    }
}

/// The SentencePiece algorithm of a model: how much work area its encoder needs beside the
/// ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpEncoder {
    /// BPE: a word is merged in the output buffer ([`sp_encode_room`]).
    Bpe,
    /// Unigram: a long word's lattice is in the output buffer ([`unigram_encode_room`]).
    Unigram,
    /// Either, behind a Unicode normalizer (a `tokenizer.json` with `NFKC`): a bound that
    /// covers the core's windows (a text normalized into the far end of the buffer, up to four
    /// bytes per input byte, 20 ids of work area per normalized byte, as
    /// `picobpe::sentencepiece`'s `normalized_work`).
    Normalized,
}

/// A SentencePiece model with committed reference vectors made by sentencepiece: the model
/// `tests/fixtures/<dir>/models/<name>.model` and its vectors
/// `tests/fixtures/<dir>/vectors/<name>/<set>.jsonl.gz`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpFixture {
    /// The model's algorithm.
    pub encoder: SpEncoder,
    /// The folder under `tests/fixtures/`: `sentencepiece` (BPE, identity normalizer),
    /// `unigram`, or `sp_norm` (character-map normalizers such as `nmt_nfkc`).
    pub dir: &'static str,
    /// The model's file stem, also the folder of its vectors.
    pub name: &'static str,
}

impl SpFixture {
    /// True for a `tokenizer.json` model with `tokenizers`' vectors (`tests/fixtures/metaspace`,
    /// made by `tests/scripts/gen_metaspace_vectors.py`), not a sentencepiece `.model`.
    pub fn is_tokenizer_json(self) -> bool {
        self.dir == "metaspace"
    }

    /// True for the model `host-trainer train` makes (`dir` "trained"): its `.model` and
    /// vectors are under `firmware-example/target/models/` ([`prepare_sp_trained`]).
    pub fn is_trained(self) -> bool {
        self.dir == "trained"
    }

    /// The folder of the vector sets.
    fn vectors_dir(self) -> PathBuf {
        if self.is_trained() {
            return crate::firmware::firmware_dir()
                .join("target/models")
                .join(format!("{}-sets", self.name));
        }
        crate::firmware::repo_root()
            .join("tests/fixtures")
            .join(self.dir)
            .join("vectors")
            .join(self.name)
    }

    /// The model file: sentencepiece's `.model`, or the `tokenizer.json`.
    pub fn model_path(self) -> PathBuf {
        if self.is_trained() {
            return crate::firmware::firmware_dir()
                .join("target/models")
                .join(format!("{}.sentencepiece.model", self.name));
        }
        let file = if self.is_tokenizer_json() {
            format!("models/{}.tokenizer.json", self.name)
        } else {
            format!("models/{}.model", self.name)
        };
        crate::firmware::repo_root()
            .join("tests/fixtures")
            .join(self.dir)
            .join(file)
    }

    /// The vector sets embedded, in order, and how many records of each are taken at most
    /// (`fixtures` and `corpus` records only up to [`MAX_FIXTURE_TEXT`] bytes).
    fn sets(self) -> &'static [(&'static str, usize)] {
        match self.dir {
            // A `Precompiled` T5 file: the metaspace sets and where `tokenizers`' grapheme rule
            // differs from `sentencepiece`'s.
            "metaspace" if self.name == "ms-t5-nfkc" => &[
                ("ms_edge", usize::MAX),
                ("nfkc_edge", usize::MAX),
                ("grapheme_edge", usize::MAX),
                ("sp_edge", usize::MAX),
                ("fixtures", usize::MAX),
                ("random", SP_NORM_RANDOM_RECORDS),
                ("invalid_utf8", SP_NORM_INVALID_RECORDS),
            ],
            // `tests/scripts/gen_sp_norm_vectors.py`: the shared `sp_edge` inputs, the
            // hand-written inputs around what the character map changes, the corpus lines,
            // random strings of map keys and cut keys, with and without malformed bytes.
            "sp_norm" => &[
                ("sp_edge", usize::MAX),
                ("nfkc_edge", usize::MAX),
                ("corpus", usize::MAX),
                ("random", SP_NORM_RANDOM_RECORDS),
                ("invalid_utf8", SP_NORM_INVALID_RECORDS),
            ],
            // `tests/scripts/gen_metaspace_vectors.py`: its whitespace and added-token edges,
            // the text NFKC changes, then the shared sets.
            "metaspace" => &[
                ("ms_edge", usize::MAX),
                ("nfkc_edge", usize::MAX),
                ("sp_edge", usize::MAX),
                ("fixtures", usize::MAX),
                ("random", SP_NORM_RANDOM_RECORDS),
                ("invalid_utf8", SP_NORM_INVALID_RECORDS),
            ],
            _ => &[
                ("sp_edge", usize::MAX),
                ("fixtures", usize::MAX),
                ("random", SP_RANDOM_RECORDS),
                ("invalid_utf8", SP_INVALID_RECORDS),
            ],
        }
    }

    /// The bound of the work area the model's encoder needs ([`SpRoom`]), with the model's
    /// character map read from its `.model` file.
    pub fn room(self) -> Result<SpRoom, String> {
        if self.is_tokenizer_json() {
            return Ok(SpRoom {
                encoder: SpEncoder::Normalized,
                map: HostCharsMap::default(),
            });
        }
        let path = self.model_path();
        let proto = fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let map = HostCharsMap::from_model_proto(&proto)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(SpRoom {
            encoder: self.encoder,
            map,
        })
    }
}

/// How much work area, beside the ids, a SentencePiece model's encoder needs for a text: the
/// algorithm's bound over the words of the text as the model normalizes it.
pub struct SpRoom {
    encoder: SpEncoder,
    map: HostCharsMap,
}

impl SpRoom {
    /// An upper bound of the `u32`s beyond the ids that encoding `text` in one call needs.
    pub fn of(&self, text: &[u8]) -> usize {
        match self.encoder {
            SpEncoder::Bpe => sp_encode_room(text, &self.map),
            SpEncoder::Unigram => unigram_encode_room(text, &self.map),
            SpEncoder::Normalized => 84 * text.len() + 64,
        }
    }
}

/// What was embedded for a SentencePiece model.
pub struct SpVectors {
    /// The vector file.
    pub path: PathBuf,
    /// Records embedded.
    pub count: usize,
    /// Names of the records left out because they do not fit the machine's test buffers.
    pub left_out: Vec<String>,
}

/// Writes `firmware-example/target/models/<model>-<machine>-vectors.bin` (PBVEC2; only when its
/// bytes change) from sentencepiece's vectors of `fixture` (BPE: `sp4096`, `mistral-v1`;
/// Unigram: `ug8000`; BPE with `nmt_nfkc`: `nfkc-bpe`).
pub fn prepare_sp(fixture: SpFixture, machine: Machine) -> Result<SpVectors, String> {
    let root = crate::firmware::repo_root();
    let fixtures = root.join("tests/fixtures");
    let (work, decode) = sp_limits(machine);
    let room = fixture.room()?;
    let model = fixture.name;
    let mut out = Vec::new();
    let mut count = 0u32;
    let mut left_out = Vec::new();
    for &(set, take) in fixture.sets() {
        let path = fixture.vectors_dir().join(format!("{set}.jsonl.gz"));
        let lines = read_lines(&path, true)?;
        let header = lines
            .first()
            .ok_or_else(|| format!("{}: empty", path.display()))?;
        let inputs_rel = header["inputs"]
            .as_str()
            .ok_or_else(|| format!("{}: header without `inputs`", path.display()))?;
        // Files named by an input record are relative to `tests/fixtures/vectors` for the
        // shared input sets, else to the inputs file's folder.
        let inputs_path = fixtures.join(inputs_rel);
        let file_base = if inputs_rel.starts_with("vectors/") {
            fixtures.join("vectors")
        } else {
            inputs_path.parent().unwrap_or(&fixtures).to_path_buf()
        };
        let mut inputs = HashMap::new();
        for input in read_lines(&inputs_path, false)? {
            let name = input["name"]
                .as_str()
                .ok_or("input without a name")?
                .to_string();
            inputs.insert(name, input_bytes(&file_base, &input)?);
        }
        let mut taken = 0;
        for rec in &lines[1..] {
            if taken == take {
                break;
            }
            let name = rec["name"].as_str().ok_or("record without a name")?;
            let text = inputs
                .get(name)
                .ok_or_else(|| format!("{}: no input named `{name}`", path.display()))?;
            if matches!(set, "fixtures" | "corpus") && text.len() > MAX_FIXTURE_TEXT {
                continue;
            }
            let ids = id_list(&rec["ids"]).ok_or_else(|| format!("`{name}`: no `ids`"))?;
            let decoded = match rec["decoded_b64"].as_str() {
                Some(b) => base64::engine::general_purpose::STANDARD
                    .decode(b)
                    .map_err(|e| format!("`{name}`: decoded_b64: {e}"))?,
                None => replace_malformed(text),
            };
            let name = format!("{set}/{name}");
            if ids.len() + room.of(text) > work || decoded.len() > decode {
                left_out.push(name);
                continue;
            }
            out.extend_from_slice(&(name.len() as u16).to_le_bytes());
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(&(text.len() as u32).to_le_bytes());
            out.extend_from_slice(text);
            out.extend_from_slice(&(ids.len() as u32).to_le_bytes());
            for id in &ids {
                out.extend_from_slice(&id.to_le_bytes());
            }
            out.extend_from_slice(&SAME.to_le_bytes()); // ordinary ids: the same
            if decoded == *text {
                out.extend_from_slice(&SAME.to_le_bytes());
            } else {
                out.extend_from_slice(&(decoded.len() as u32).to_le_bytes());
                out.extend_from_slice(&decoded);
            }
            taken += 1;
            count += 1;
        }
    }
    let mut file = b"PBVEC2\0\0".to_vec();
    for n in [count, work as u32, decode as u32] {
        file.extend_from_slice(&n.to_le_bytes());
    }
    file.extend_from_slice(&out);
    let dest_dir = crate::firmware::firmware_dir().join("target/models");
    fs::create_dir_all(&dest_dir).map_err(|e| format!("{}: {e}", dest_dir.display()))?;
    let dest = dest_dir.join(format!("{model}-{}-vectors.bin", machine.name()));
    if fs::read(&dest).ok().as_deref() != Some(&file[..]) {
        fs::write(&dest, &file).map_err(|e| format!("{}: {e}", dest.display()))?;
    }
    Ok(SpVectors {
        path: dest,
        count: count as usize,
        left_out,
    })
}

/// [`prepare_sp`] for the SentencePiece BPE model `host-trainer train` made
/// (`Builtin::SpTrained`): the `sentencepiece` library loads the `sentencepiece.model` the trainer
/// wrote (`firmware-example/scripts/sp_vectors.py`) and encodes the shared inputs' sets, whose
/// ids are then selected for `machine`. `None` when python3 cannot import `sentencepiece`
/// (`cargo xtask test` installs 0.2.3, the version the trainer replays).
pub fn prepare_sp_trained(
    fixture: SpFixture,
    machine: Machine,
) -> Result<Option<SpVectors>, String> {
    let out = std::process::Command::new("python3")
        .arg(crate::firmware::firmware_dir().join("scripts/sp_vectors.py"))
        .arg(fixture.model_path())
        .arg(crate::firmware::repo_root().join("tests/fixtures"))
        .arg(fixture.vectors_dir())
        .output()
        .map_err(|e| format!("python3: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        if err.contains("No module named 'sentencepiece'") {
            println!(
                "   NOTE: python3 with `sentencepiece` not found: {}'s reference-vector tests \
                 are left out (`pip install sentencepiece==0.2.3` adds them)",
                fixture.name
            );
            return Ok(None);
        }
        return Err(format!("sp_vectors.py failed: {err}"));
    }
    prepare_sp(fixture, machine).map(Some)
}

/// What a reference decodes a record's ids to.
enum Decoded {
    /// The input text.
    Input,
    /// This text.
    Text(Vec<u8>),
    /// Not given by the reference.
    Unknown,
}

/// One record of a PBVEC2 file.
struct Vec2Record {
    name: String,
    text: Vec<u8>,
    all: Vec<u32>,
    /// `None`: the same as `all`.
    ordinary: Option<Vec<u32>>,
    decoded: Decoded,
}

/// Writes a PBVEC2 file to `firmware-example/target/models/<file>` (only when its bytes
/// change) and returns its path.
fn write_vec2(
    file: &str,
    limits: (usize, usize),
    records: &[Vec2Record],
) -> Result<PathBuf, String> {
    let mut out = b"PBVEC2\0\0".to_vec();
    for n in [records.len(), limits.0, limits.1] {
        out.extend_from_slice(&(n as u32).to_le_bytes());
    }
    let ids = |out: &mut Vec<u8>, list: &[u32]| {
        out.extend_from_slice(&(list.len() as u32).to_le_bytes());
        for id in list {
            out.extend_from_slice(&id.to_le_bytes());
        }
    };
    for r in records {
        out.extend_from_slice(&(r.name.len() as u16).to_le_bytes());
        out.extend_from_slice(r.name.as_bytes());
        out.extend_from_slice(&(r.text.len() as u32).to_le_bytes());
        out.extend_from_slice(&r.text);
        ids(&mut out, &r.all);
        match &r.ordinary {
            Some(o) if *o != r.all => ids(&mut out, o),
            _ => out.extend_from_slice(&SAME.to_le_bytes()),
        }
        match &r.decoded {
            Decoded::Text(t) if *t != r.text => {
                out.extend_from_slice(&(t.len() as u32).to_le_bytes());
                out.extend_from_slice(t);
            }
            Decoded::Input | Decoded::Text(_) => out.extend_from_slice(&SAME.to_le_bytes()),
            Decoded::Unknown => out.extend_from_slice(&NONE.to_le_bytes()),
        }
    }
    let dest_dir = crate::firmware::firmware_dir().join("target/models");
    fs::create_dir_all(&dest_dir).map_err(|e| format!("{}: {e}", dest_dir.display()))?;
    let dest = dest_dir.join(file);
    if fs::read(&dest).ok().as_deref() != Some(&out[..]) {
        fs::write(&dest, &out).map_err(|e| format!("{}: {e}", dest.display()))?;
    }
    Ok(dest)
}

/// The records of one tokenizers vector file (`tests/fixtures/<dir>/<set>.jsonl.gz`) with their
/// input bytes, in file order: `(name, text, all, ordinary)`.
type HfRecord = (String, Vec<u8>, Vec<u32>, Option<Vec<u32>>);

fn read_hf_set(dir: &str, set: &str) -> Result<Vec<HfRecord>, String> {
    let fixtures = crate::firmware::repo_root().join("tests/fixtures");
    let path = fixtures.join(format!("{dir}/{set}.jsonl.gz"));
    let lines = read_lines(&path, true)?;
    let header = lines
        .first()
        .ok_or_else(|| format!("{}: empty", path.display()))?;
    // `inputs` is relative to `tests/fixtures` (without one, as `gen_wp_norm_vectors.py` and
    // `gen_wp_pretok_vectors.py` write them: the shared set of the same name); the files an
    // input names, to `tests/fixtures/vectors`.
    let inputs_rel = match header["inputs"].as_str() {
        Some(rel) => rel.to_owned(),
        None => format!("vectors/inputs/{set}.jsonl"),
    };
    let inputs = read_lines(&fixtures.join(&inputs_rel), false)?;
    let recs = &lines[1..];
    // Records follow their inputs in order; a set may keep only some of them (Tekken's
    // `random`: every third), so each record is matched to the next input of its name.
    let mut inputs = inputs.iter();
    let mut out = Vec::with_capacity(recs.len());
    for rec in recs {
        let name = rec["name"].as_str().ok_or("record without a name")?;
        let input = inputs
            .find(|input| input["name"].as_str() == Some(name))
            .ok_or_else(|| {
                format!(
                    "{}: record `{name}` has no input after the previous record's",
                    path.display()
                )
            })?;
        let text = input_bytes(&fixtures.join("vectors"), input)?;
        // tokenizers' records say `all` (and `ordinary` where it differs); Tekken's, `ids`.
        let all = id_list(&rec["all"])
            .or_else(|| id_list(&rec["ids"]))
            .ok_or_else(|| format!("`{name}`: no `all` ids"))?;
        let ordinary = match rec.get("ordinary") {
            Some(v) => Some(id_list(v).ok_or_else(|| format!("`{name}`: bad `ordinary` ids"))?),
            None => None,
        };
        out.push((format!("{set}/{name}"), text, all, ordinary));
    }
    Ok(out)
}

/// Takes, from `set`, up to `take` records (the `fixtures` and `corpus` ones only if their text
/// is at most [`MAX_FIXTURE_TEXT`]) for which `fits` holds; the names of those that do not fit
/// go to `left_out`.
fn take_hf_set(
    dir: &str,
    set: &str,
    take: usize,
    fits: &dyn Fn(&HfRecord) -> bool,
    left_out: &mut Vec<String>,
) -> Result<Vec<HfRecord>, String> {
    let mut taken = Vec::new();
    for rec in read_hf_set(dir, set)? {
        if taken.len() == take {
            break;
        }
        if matches!(set, "fixtures" | "corpus") && rec.1.len() > MAX_FIXTURE_TEXT {
            continue;
        }
        if fits(&rec) {
            taken.push(rec);
        } else {
            left_out.push(rec.0);
        }
    }
    Ok(taken)
}

/// What was embedded for a model with Hugging Face `tokenizers` reference vectors.
pub struct HfVectors {
    /// The vector file.
    pub path: PathBuf,
    /// Records embedded.
    pub count: usize,
    /// Names of the records left out because they do not fit the test buffers.
    pub left_out: Vec<String>,
}

/// Writes `firmware-example/target/models/<model>-vectors.bin` (PBVEC2) from tokenizers'
/// vectors of the byte-level BPE model `tests/fixtures/<folder>/<model>/` (`hf_bpe/llama3-8k`,
/// `hf_compiled/deepseek-8k`). Their
/// generator asserted that the ids decode to the input, so the decoded text is the input.
pub fn prepare_hf_bpe(folder: &str, model: &str) -> Result<HfVectors, String> {
    let (ids, bytes) = HF_BPE_LIMITS;
    let fits = |r: &HfRecord| {
        r.2.len() <= ids && r.3.as_ref().is_none_or(|o| o.len() <= ids) && r.1.len() <= bytes
    };
    let sets = [
        ("fixtures", usize::MAX),
        ("corpus", usize::MAX),
        ("random", HF_RANDOM_RECORDS),
    ];
    byte_level_vectors(
        &format!("{folder}/{model}"),
        &format!("{model}-vectors.bin"),
        &sets,
        &fits,
        &|_, _| true,
    )
}

/// Writes `firmware-example/target/models/tekken-vectors.bin` (PBVEC2) from `mistral-common`'s
/// vectors of Mistral NeMo's Tekken (`tests/fixtures/tekken/vectors/tekken/`), selected as for
/// [`prepare_hf_bpe`], with the `edge` set's records whose text holds no special token's text.
/// The generator asserted that the ids decode to the input.
pub fn prepare_tekken() -> Result<HfVectors, String> {
    let root = crate::firmware::repo_root().join("tests/fixtures/tekken");
    let manifest_path = root.join("MANIFEST.json");
    let manifest: serde_json::Value = serde_json::from_slice(
        &fs::read(&manifest_path).map_err(|e| format!("{}: {e}", manifest_path.display()))?,
    )
    .map_err(|e| format!("{}: {e}", manifest_path.display()))?;
    let (ids, bytes) = HF_BPE_LIMITS;
    // A piece is part of a run of whitespace or of non-whitespace bytes, with at most one
    // byte of the run before it (` word`): a text whose runs are shorter than the streaming
    // test's input buffer fits it (the edge set's 500-letter word does not).
    let longest_run = |text: &[u8]| {
        text.chunk_by(|a, b| a.is_ascii_whitespace() == b.is_ascii_whitespace())
            .map(|run| run.len() + 1)
            .max()
            .unwrap_or(0)
    };
    let fits = |r: &HfRecord| {
        r.2.len() <= ids && r.1.len() <= bytes && longest_run(&r.1) < BYTE_LEVEL_STREAM_INPUT
    };
    let sets = [
        ("fixtures", usize::MAX),
        ("corpus", usize::MAX),
        ("edge", usize::MAX),
        ("random", HF_RANDOM_RECORDS),
    ];
    for (set, _) in sets {
        if !manifest["sets"]["tekken"][set]["special_text"].is_array() {
            return Err(format!(
                "{}: no special_text for {set}",
                manifest_path.display()
            ));
        }
    }
    let no_special_text = |set: &str, name: &str| {
        let listed = manifest["sets"]["tekken"][set]["special_text"].as_array();
        !listed.is_some_and(|l| l.iter().any(|n| n.as_str() == Some(name)))
    };
    byte_level_vectors(
        "tekken/vectors/tekken",
        "tekken-vectors.bin",
        &sets,
        &fits,
        &no_special_text,
    )
}

/// Writes `firmware-example/target/models/<file>` (PBVEC2, byte-level limits) from the vector
/// sets in `tests/fixtures/<dir>`: of each `(set, take)`, up to `take` records (see
/// [`take_hf_set`]) for which `fits` holds and `keep(set, name)` too. Their generators asserted
/// that the ids decode to the input.
fn byte_level_vectors(
    dir: &str,
    file: &str,
    sets: &[(&str, usize)],
    fits: &dyn Fn(&HfRecord) -> bool,
    keep: &dyn Fn(&str, &str) -> bool,
) -> Result<HfVectors, String> {
    let mut left_out = Vec::new();
    let mut records = Vec::new();
    for &(set, take) in sets {
        for (name, text, all, ordinary) in take_hf_set(dir, set, take, fits, &mut left_out)? {
            let plain = name.strip_prefix(&format!("{set}/")).unwrap_or(&name);
            if !keep(set, plain) {
                continue;
            }
            records.push(Vec2Record {
                name,
                text,
                all,
                ordinary,
                decoded: Decoded::Input,
            });
        }
    }
    let path = write_vec2(file, HF_BPE_LIMITS, &records)?;
    Ok(HfVectors {
        path,
        count: records.len(),
        left_out,
    })
}

/// Writes `firmware-example/target/models/<model>-vectors.bin` (PBVEC2) from tokenizers'
/// vectors of the WordPiece model `tests/fixtures/wordpiece/<model>/` (`bert-cased-8k`,
/// `minilm-uncased`, `wp-whitespace-digits`): first the probes of `tests/fixtures/wordpiece/probes.jsonl` (or of the
/// model's folder) with the text
/// tokenizers' `decode(ids)` gives (`skip_special_tokens=True`, as picobpe decodes), then the
/// sets, whose records carry no decoded text. A record is taken if its ids fit the tests' id
/// buffer and an upper bound of its decoded length (each id not an added token as a space and
/// its vocabulary entry, read from the model's `tokenizer.json`) their decode buffer.
pub fn prepare_wp(model: &str) -> Result<HfVectors, String> {
    let fixtures = crate::firmware::repo_root().join("tests/fixtures/wordpiece");
    let json_path = fixtures.join(model).join("tokenizer.json");
    // The shared probes carry bert-cased-8k's and minilm-uncased's ids; the other models'
    // are in their own folder (`gen_wp_pretok_vectors.py`).
    let own = fixtures.join(model).join("probes.jsonl");
    let shared = fixtures.join("probes.jsonl");
    let probes = read_lines(if own.is_file() { &own } else { &shared }, false)?;
    wp_vectors(model, &json_path, &probes, &format!("wordpiece/{model}"))
}

/// Writes `firmware-example/target/models/wp-trained-vectors.bin` (PBVEC2) for the WordPiece
/// model `host-trainer train` made (`Builtin::WpTrained`): its `tokenizer.json` is loaded by
/// Hugging Face `tokenizers` (`firmware-example/scripts/wp_vectors.py`), whose ids for the
/// shared inputs' sets are written next to it with probes (the library's decoded text for
/// some of them), then selected as for [`prepare_wp`]. `None` without python3 and
/// `tokenizers`.
pub fn prepare_wp_trained() -> Result<Option<HfVectors>, String> {
    let models = crate::firmware::firmware_dir().join("target/models");
    let json = models.join("wp-trained.tokenizer.json");
    let sets = models.join("wp-trained-sets");
    let out = std::process::Command::new("python3")
        .arg(crate::firmware::firmware_dir().join("scripts/wp_vectors.py"))
        .arg(&json)
        .arg(crate::firmware::repo_root().join("tests/fixtures"))
        .arg(&sets)
        .output()
        .map_err(|e| format!("python3: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        if err.contains("No module named 'tokenizers'") {
            println!(
                "   NOTE: python3 with `tokenizers` not found: wp-trained's reference-vector \
                 tests are left out (`pip install tokenizers` adds them)"
            );
            return Ok(None);
        }
        return Err(format!("wp_vectors.py failed: {err}"));
    }
    let probes = read_lines(&sets.join("probes.jsonl"), false)?;
    let dir = sets.to_string_lossy().into_owned();
    wp_vectors("wp-trained", &json, &probes, &dir).map(Some)
}

/// [`prepare_wp`] of the model `model` whose `tokenizer.json` is `json_path`, with `probes`
/// (records of `tests/fixtures/wordpiece/probes.jsonl`) and the sets in `dir` (under
/// `tests/fixtures`, or absolute).
fn wp_vectors(
    model: &str,
    json_path: &Path,
    probes: &[serde_json::Value],
    dir: &str,
) -> Result<HfVectors, String> {
    let json: serde_json::Value = serde_json::from_slice(
        &fs::read(json_path).map_err(|e| format!("{}: {e}", json_path.display()))?,
    )
    .map_err(|e| format!("{}: {e}", json_path.display()))?;
    let vocab = json["model"]["vocab"]
        .as_object()
        .ok_or_else(|| format!("{}: no model.vocab", json_path.display()))?;
    // Bytes each id adds to a decode at most: a space and its entry (0 for an added token).
    let mut piece_len = vec![0usize; vocab.len()];
    for (token, id) in vocab {
        let id = id.as_u64().unwrap_or(u64::MAX) as usize;
        *piece_len
            .get_mut(id)
            .ok_or_else(|| format!("{}: id {id} out of range", json_path.display()))? =
            1 + token.len();
    }
    for added in json["added_tokens"].as_array().into_iter().flatten() {
        if let Some(slot) = added["id"]
            .as_u64()
            .and_then(|id| piece_len.get_mut(id as usize))
        {
            *slot = 0;
        }
    }
    let (ids_cap, bytes_cap) = WP_LIMITS;
    let decode_bound = |ids: &[u32]| -> usize {
        ids.iter()
            .map(|&id| {
                piece_len
                    .get(id as usize)
                    .copied()
                    .unwrap_or(usize::MAX / 2)
            })
            .sum()
    };
    let fits = |r: &HfRecord| {
        let lists = [Some(&r.2), r.3.as_ref()];
        lists
            .into_iter()
            .flatten()
            .all(|l| l.len() <= ids_cap && decode_bound(l) <= bytes_cap)
    };
    let mut left_out = Vec::new();
    let mut records = Vec::new();
    for probe in probes {
        let name = probe["name"].as_str().ok_or("probe without a name")?;
        let text = probe["text"]
            .as_str()
            .ok_or_else(|| format!("probe `{name}`: no text"))?;
        let r = &probe[model];
        let all = id_list(&r["ids"]).ok_or_else(|| format!("probe `{name}`: no {model} ids"))?;
        let ordinary = match r.get("ordinary") {
            Some(v) => Some(id_list(v).ok_or_else(|| format!("probe `{name}`: bad ordinary"))?),
            None => None,
        };
        // `decode_skip_special` is given when it differs from `decode`.
        let decoded = r
            .get("decode_skip_special")
            .or_else(|| r.get("decode"))
            .and_then(|d| d.as_str())
            .ok_or_else(|| format!("probe `{name}`: no decode"))?;
        let rec: HfRecord = (format!("probes/{name}"), text.into(), all, ordinary);
        if !fits(&rec) {
            left_out.push(rec.0);
            continue;
        }
        records.push(Vec2Record {
            name: rec.0,
            text: rec.1,
            all: rec.2,
            ordinary: rec.3,
            decoded: Decoded::Text(decoded.into()),
        });
    }
    for (set, take) in [
        ("fixtures", usize::MAX),
        ("corpus", usize::MAX),
        ("random", HF_RANDOM_RECORDS),
        ("invalid_utf8", WP_INVALID_RECORDS),
    ] {
        for (name, text, all, ordinary) in take_hf_set(dir, set, take, &fits, &mut left_out)? {
            records.push(Vec2Record {
                name,
                text,
                all,
                ordinary,
                decoded: Decoded::Unknown,
            });
        }
    }
    let path = write_vec2(&format!("{model}-vectors.bin"), WP_LIMITS, &records)?;
    Ok(HfVectors {
        path,
        count: records.len(),
        left_out,
    })
}

/// `bytes` with each byte outside a well-formed UTF-8 sequence replaced by U+FFFD (one per
/// byte, as SentencePiece's normalizer reads them): what a record without `decoded_b64`
/// decodes to (see `tests/fixtures/sentencepiece/PROVENANCE.md`).
fn replace_malformed(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        out.extend_from_slice(chunk.valid().as_bytes());
        for _ in chunk.invalid() {
            out.extend_from_slice("\u{FFFD}".as_bytes());
        }
    }
    out
}

/// An upper bound of the `u32`s the SentencePiece BPE encoder needs, beyond the ids, to merge
/// the longest word of `text` in the output buffer (`core/src/sentencepiece/merge.rs`): for a
/// word of `b` normalized bytes and `c` characters, `b` ids (byte fallback), `10c + 1` of work
/// area and, for a word longer than the 256-byte stack buffer, `ceil(b / 4)` for its packed
/// bytes. Words as [`sp_words`] cuts them, normalized with `map`.
pub fn sp_encode_room(text: &[u8], map: &HostCharsMap) -> usize {
    let room = |(bytes, chars): (usize, usize)| {
        let packed = if bytes > 256 { bytes.div_ceil(4) } else { 0 };
        bytes + 10 * chars + 1 + packed
    };
    sp_words(text, map).into_iter().map(room).max().unwrap_or(0)
}

/// Longest word (normalized bytes) whose Unigram lattice the encoder keeps on the stack on a
/// 32-bit target (`picobpe::sentencepiece::UNIGRAM_STACK_BYTES` there).
const UNIGRAM_STACK_BYTES: usize = 64;

/// `u32`s per position of a Unigram lattice, at most (`CELL` in
/// `core/src/sentencepiece/unigram.rs`: the best score, the start and the id of the last piece).
const UNIGRAM_CELL: usize = 4;

/// An upper bound of the `u32`s the SentencePiece Unigram encoder needs, beyond the ids, on
/// the target (`core/src/sentencepiece/unigram.rs`): a word of `b` normalized bytes longer than
/// [`UNIGRAM_STACK_BYTES`] has its packed bytes (`ceil(b / 4)`) and its lattice
/// ([`UNIGRAM_CELL`]` × (b + 1)`) at the far end of the output buffer; a shorter one needs
/// nothing there. Words as [`sp_words`] cuts them, normalized with `map`.
pub fn unigram_encode_room(text: &[u8], map: &HostCharsMap) -> usize {
    let room = |(bytes, _): (usize, usize)| {
        if bytes > UNIGRAM_STACK_BYTES {
            bytes.div_ceil(4) + UNIGRAM_CELL * (bytes + 1)
        } else {
            0
        }
    };
    sp_words(text, map).into_iter().map(room).max().unwrap_or(0)
}

/// U+FFFD, what a malformed byte becomes.
const FFFD: &[u8] = "\u{FFFD}".as_bytes();

/// True for a space or a `▁` (what the normalizer writes as `▁`).
fn is_mark(c: char) -> bool {
    c == ' ' || c == '\u{2581}'
}

/// The words of `text` as the SentencePiece encoders cut them, as (normalized bytes,
/// characters), the text normalized unit by unit as the model does: the longest key of the
/// character map `map` at each position becomes its replacement, else a character stays
/// itself and a malformed byte becomes U+FFFD; each space is 3 normalized bytes (`▁`). A word
/// is a run of spaces and the other characters after it: a unit that becomes one space (or a
/// `▁`) after other characters starts the next word. A unit whose replacement holds a space
/// elsewhere stays in the current word, whole (the core cuts between units only, and maybe
/// before such a unit: that only shortens words). Every word is counted with the dummy-prefix
/// `▁`, and without `remove_extra_whitespaces` (which only shortens words), so the figures
/// are upper bounds. With the identity rule (an empty map), a unit is a character.
fn sp_words(text: &[u8], map: &HostCharsMap) -> Vec<(usize, usize)> {
    let mut words = Vec::new();
    // The current word, with its dummy-prefix `▁`; whether the last character written was a
    // space or a `▁` (the normalizer drops the leading spaces of the next unit then).
    let (mut bytes, mut n, mut seen_other, mut last_mark) = (3, 1, false, false);
    let mut pos = 0;
    while pos < text.len() {
        let rest = &text[pos..];
        let (len, out) = match map.longest(rest) {
            Some(unit) => unit,
            None => match rest[..rest.len().min(4)].utf8_chunks().next() {
                Some(chunk) if !chunk.valid().is_empty() => {
                    let len = chunk.valid().chars().next().map_or(1, char::len_utf8);
                    (len, &rest[..len])
                }
                _ => (1, FFFD),
            },
        };
        pos += len;
        // Replacements are well-formed UTF-8 (checked by the importer); anything else counts
        // as U+FFFDs.
        let out = String::from_utf8_lossy(out);
        let mut chars = out.chars();
        let one_mark = matches!((chars.next(), chars.next()), (Some(c), None) if is_mark(c));
        if one_mark && seen_other && !last_mark {
            words.push((bytes, n));
            (bytes, n, seen_other) = (3, 1, false);
        }
        for c in out.chars() {
            bytes += if is_mark(c) { 3 } else { c.len_utf8() };
            n += 1;
            seen_other |= !is_mark(c);
        }
        if let Some(c) = out.chars().last() {
            last_mark = is_mark(c);
        }
    }
    words.push((bytes, n));
    words
}

/// A SentencePiece model's character map (`precompiled_charsmap`) as `sentencepiece` stores it,
/// read on the host for the work-area bounds ([`sp_words`]): a Darts-clone double array and
/// the NUL-terminated replacements. Empty (no key matches) for the `identity` rule.
#[derive(Default)]
pub struct HostCharsMap {
    units: Vec<u32>,
    strings: Vec<u8>,
}

impl HostCharsMap {
    /// The map of a serialized `ModelProto` (a sentencepiece `.model` file):
    /// `normalizer_spec` (field 3), its `precompiled_charsmap` (field 2).
    pub fn from_model_proto(proto: &[u8]) -> Result<Self, String> {
        let spec = proto_field(proto, 3)?.unwrap_or(&[]);
        let blob = proto_field(spec, 2)?.unwrap_or(&[]);
        if blob.is_empty() {
            return Ok(HostCharsMap::default());
        }
        let (size, rest) = blob
            .split_first_chunk::<4>()
            .ok_or("precompiled_charsmap shorter than its trie size")?;
        let size = u32::from_le_bytes(*size) as usize;
        if !size.is_multiple_of(4) || size > rest.len() {
            return Err(format!("precompiled_charsmap: bad trie size {size}"));
        }
        let (trie, strings) = rest.split_at(size);
        Ok(HostCharsMap {
            units: trie
                .chunks_exact(4)
                .map(|u| u32::from_le_bytes([u[0], u[1], u[2], u[3]]))
                .collect(),
            strings: strings.to_vec(),
        })
    }

    /// The longest key `text` starts with: its length and its replacement, as
    /// `Darts::DoubleArray::commonPrefixSearch` walks (the layout of
    /// `core/src/sentencepiece/charsmap.rs`). `None` when none matches.
    fn longest<'a>(&'a self, text: &[u8]) -> Option<(usize, &'a [u8])> {
        let offset = |unit: u32| ((unit >> 10) << ((unit & (1 << 9)) >> 6)) as usize;
        let mut node = offset(*self.units.first()?);
        let mut best = None;
        for (i, &b) in text.iter().enumerate() {
            node ^= usize::from(b);
            match self.units.get(node) {
                Some(&unit) if unit & ((1 << 31) | 0xFF) == u32::from(b) => {
                    node ^= offset(unit);
                    if unit >> 8 & 1 != 0 {
                        if let Some(&leaf) = self.units.get(node) {
                            best = Some((i + 1, (leaf & !(1 << 31)) as usize));
                        }
                    }
                }
                _ => break,
            }
        }
        let (len, value) = best?;
        let rest = self.strings.get(value..)?;
        let end = rest.iter().position(|&b| b == 0)?;
        Some((len, &rest[..end]))
    }
}

/// The last length-delimited field `number` of the protobuf message `msg`, if any.
fn proto_field(msg: &[u8], number: u64) -> Result<Option<&[u8]>, String> {
    fn varint(b: &[u8], at: &mut usize) -> Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = *b.get(*at).ok_or("protobuf: truncated varint")?;
            *at += 1;
            v |= u64::from(byte & 0x7F) << shift;
            if byte & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("protobuf: varint too long".into())
    }
    let (mut at, mut found) = (0, None);
    while at < msg.len() {
        let key = varint(msg, &mut at)?;
        let len = match key & 7 {
            0 => {
                varint(msg, &mut at)?;
                0
            }
            1 => 8,
            2 => varint(msg, &mut at)? as usize,
            5 => 4,
            w => return Err(format!("protobuf: wire type {w}")),
        };
        let body = msg
            .get(at..at.saturating_add(len))
            .ok_or("protobuf: truncated field")?;
        if key >> 3 == number && key & 7 == 2 {
            found = Some(body);
        }
        at += len;
    }
    Ok(found)
}

/// Reference vectors for the small trained model, made by `firmware-example/scripts/hf_vectors.py`
/// with Hugging Face `tokenizers` from the trainer's `vocab.json` / `merges.txt` (an independent
/// BPE implementation). Returns `None`, after saying so, when `python3` with `tokenizers` is
/// not available (`pip install tokenizers` enables them).
pub fn prepare_small() -> Result<Option<(PathBuf, usize)>, String> {
    let fw = crate::firmware::firmware_dir();
    let models = fw.join("target/models");
    let has_tokenizers = std::process::Command::new("python3")
        .args(["-c", "import tokenizers"])
        .stderr(std::process::Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !has_tokenizers {
        println!(
            "   NOTE: python3 with `tokenizers` not found: the small model's reference-vector tests \
             are left out (`pip install tokenizers` adds them)"
        );
        return Ok(None);
    }
    let dest = models.join("small-vectors.bin");
    let tmp = models.join("small-vectors.bin.tmp");
    let out = std::process::Command::new("python3")
        .arg(fw.join("scripts/hf_vectors.py"))
        .arg(models.join("small.vocab.json"))
        .arg(models.join("small.merges.txt"))
        .arg(crate::firmware::repo_root().join("tests/fixtures/vectors"))
        .arg(&tmp)
        .output()
        .map_err(|e| format!("python3: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "hf_vectors.py failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let bytes = fs::read(&tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
    let count = bytes
        .get(8..12)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
        .unwrap_or(0);
    if fs::read(&dest).ok().as_deref() != Some(&bytes[..]) {
        fs::rename(&tmp, &dest).map_err(|e| format!("{}: {e}", dest.display()))?;
    } else {
        let _ = fs::remove_file(&tmp);
    }
    Ok(Some((dest, count)))
}

/// JSON lines of a (possibly gzip-compressed) file.
fn read_lines(path: &Path, gz: bool) -> Result<Vec<serde_json::Value>, String> {
    let f = fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let reader: Box<dyn BufRead> = if gz {
        Box::new(BufReader::new(flate2::read::GzDecoder::new(f)))
    } else {
        Box::new(BufReader::new(f))
    };
    let mut v = Vec::new();
    for (i, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| format!("{}: {e}", path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        v.push(
            serde_json::from_str(&line)
                .map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))?,
        );
    }
    Ok(v)
}

/// The input bytes of a record: `text`, `text_b64` or `file` (relative to the vectors folder).
fn input_bytes(dir: &Path, input: &serde_json::Value) -> Result<Vec<u8>, String> {
    if let Some(t) = input["text"].as_str() {
        Ok(t.as_bytes().to_vec())
    } else if let Some(b) = input["text_b64"].as_str() {
        base64::engine::general_purpose::STANDARD
            .decode(b)
            .map_err(|e| format!("text_b64: {e}"))
    } else if let Some(f) = input["file"].as_str() {
        let p = dir.join(f);
        fs::read(&p).map_err(|e| format!("{}: {e}", p.display()))
    } else {
        Err(format!("input record without text: {input}"))
    }
}

fn id_list(v: &serde_json::Value) -> Option<Vec<u32>> {
    v.as_array()?
        .iter()
        .map(|x| x.as_u64().and_then(|n| u32::try_from(n).ok()))
        .collect()
}
