//! The conformance subset the on-target tests embed: a few dozen records of the tiktoken
//! reference vectors in `tests/fixtures/vectors/` (made by `tests/scripts/gen_vectors.py` with
//! tiktoken — never by picobpe), re-encoded in a flat binary form the firmware reads without
//! allocating.
//!
//! Selection (deterministic): every `fixtures` record whose text is at most 4 KiB (the CS336
//! fixtures, the special-token mix, the sanity string, empty, single characters, one emoji,
//! contractions), the first 48 `random` records and the first 32 `invalid_utf8` records.
//!
//! Format (little-endian), read by `firmware-example/src/vectors.rs`:
//! ```text
//! b"PBVEC1\0\0"  u32 record count
//! per record:    u16 name length, name bytes, u32 text length, text bytes,
//!                u32 n, n × u32 ids with specials recognized ("all"),
//!                u32 m, m × u32 ids of encode_ordinary ("ordinary", equal to "all" when the
//!                source omits it)
//! ```

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use base64::Engine;

/// Largest `fixtures` text taken, in bytes.
const MAX_FIXTURE_TEXT: usize = 4096;
/// Records taken from the `random` set.
const RANDOM_RECORDS: usize = 48;
/// Records taken from the `invalid_utf8` set.
const INVALID_RECORDS: usize = 32;

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
