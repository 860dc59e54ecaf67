//! The conformance subset the on-target tests embed: a few dozen records of the tiktoken
//! reference vectors in `tests/fixtures/vectors/` (made by `tests/scripts/gen_vectors.py` with
//! tiktoken — never by picobpe), or of the sentencepiece reference vectors in
//! `tests/fixtures/sentencepiece/vectors/` (made by `tests/scripts/gen_sp_vectors.py` with
//! sentencepiece), re-encoded in a flat binary form the firmware reads without allocating.
//!
//! Selection (deterministic), tiktoken: every `fixtures` record whose text is at most 4 KiB (the
//! CS336 fixtures, the special-token mix, the sanity string, empty, single characters, one
//! emoji, contractions), the first 48 `random` records and the first 32 `invalid_utf8` records.
//! sentencepiece: every `sp_edge` record, every `fixtures` record of at most 4 KiB, the first 32
//! `random` and the first 16 `invalid_utf8` records, each only if it fits the test's buffers on
//! the machine ([`sp_limits`]): its ids plus the merge work area of its longest word (an upper
//! bound, [`sp_encode_room`]) in the encode buffer, its decoded text in the decode buffer.
//!
//! Format (little-endian), read by `firmware-example/src/vectors.rs`:
//! ```text
//! b"PBVEC1\0\0"  u32 record count
//! per record:    u16 name length, name bytes, u32 text length, text bytes,
//!                u32 n, n × u32 ids with specials recognized ("all"),
//!                u32 m, m × u32 ids of encode_ordinary ("ordinary", equal to "all" when the
//!                source omits it)
//! ```
//! `PBVEC2` (sentencepiece) adds the buffer sizes the records were selected for, and the text
//! the reference decodes the ids to (`DecodeIds`); `0xFFFF_FFFF` as a count means "the same as"
//! (ordinary ids = all ids; decoded text = the input):
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
/// "The same as" in a PBVEC2 count.
const SAME: u32 = u32::MAX;

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
/// bytes change) from sentencepiece's vectors of `model` (`sp4096`, `mistral-v1`).
pub fn prepare_sp(model: &str, machine: Machine) -> Result<SpVectors, String> {
    let root = crate::firmware::repo_root();
    let fixtures = root.join("tests/fixtures");
    let (work, decode) = sp_limits(machine);
    let mut out = Vec::new();
    let mut count = 0u32;
    let mut left_out = Vec::new();
    for (set, take) in [
        ("sp_edge", usize::MAX),
        ("fixtures", usize::MAX),
        ("random", SP_RANDOM_RECORDS),
        ("invalid_utf8", SP_INVALID_RECORDS),
    ] {
        let path = fixtures.join(format!("sentencepiece/vectors/{model}/{set}.jsonl.gz"));
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
            if set == "fixtures" && text.len() > MAX_FIXTURE_TEXT {
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
            if ids.len() + sp_encode_room(text) > work || decoded.len() > decode {
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

/// An upper bound of the `u32`s the SentencePiece encoder needs, beyond the ids, to merge the
/// longest word of `text` in the output buffer (`core/src/sentencepiece/merge.rs`): for a word
/// of `b` normalized bytes and `c` characters, `b` ids (byte fallback), `10c + 1` of work area
/// and, for a word longer than the 256-byte stack buffer, `ceil(b / 4)` for its packed bytes.
/// Words as the encoder cuts them: a run of spaces (`▁`) and the other characters after it;
/// each space and each malformed byte is 3 normalized bytes (`▁`, U+FFFD). Every word is
/// counted with the dummy-prefix `▁`, and without `remove_extra_whitespaces` (which only
/// shortens words).
pub fn sp_encode_room(text: &[u8]) -> usize {
    // (normalized bytes, is a space) of each character, a malformed byte being one U+FFFD.
    let mut chars: Vec<(usize, bool)> = Vec::new();
    for chunk in text.utf8_chunks() {
        for c in chunk.valid().chars() {
            let mark = c == ' ' || c == '\u{2581}';
            chars.push((if mark { 3 } else { c.len_utf8() }, mark));
        }
        chars.extend(chunk.invalid().iter().map(|_| (3, false)));
    }
    let room = |bytes: usize, chars: usize| {
        let packed = if bytes > 256 { bytes.div_ceil(4) } else { 0 };
        bytes + 10 * chars + 1 + packed
    };
    // The current word, with its dummy-prefix `▁`.
    let (mut best, mut bytes, mut n, mut seen_other) = (0, 3, 1, false);
    for (len, mark) in chars {
        if mark && seen_other {
            best = best.max(room(bytes, n));
            (bytes, n, seen_other) = (3, 1, false);
        }
        seen_other |= !mark;
        bytes += len;
        n += 1;
    }
    best.max(room(bytes, n))
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
