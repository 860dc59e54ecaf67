//! Model files from hostile bytes: the loader must return an error (never panic, never allocate
//! far beyond the input — run with `-malloc_limit_mb`), and whatever loads must bake.
//!
//! Input: `[mode][...]`:
//! - mode 0: the rest is a whole model file (`Model::from_bytes`);
//! - mode 1: the rest is a payload, wrapped in a correct header (magic, version, length, CRC),
//!   so postcard decoding and validation are reached;
//! - mode 2: the rest drives a *structured* model (256 byte tokens, tokens made by concatenation,
//!   merges, specials — each sometimes wrong on purpose), serialised with postcard without
//!   validation, wrapped in a correct header; a further byte may flip one payload bit.
//!
//! A model that loads must: re-serialise to the same bytes' meaning (`to_bytes` → `from_bytes`
//! round trip), lay out as `TableData` with both piece tables, and generate bake source.
#![no_main]

use libfuzzer_sys::fuzz_target;
use picobpe_fuzz::Params;
use picobpe_model::format::{HEADER_LEN, MAGIC, VERSION};
use picobpe_model::{Model, ModelError, PatternKind, PieceTable, TableData};
use picobpe_tests::reference::crc32;

fuzz_target!(|data: &[u8]| {
    let mut p = Params::new(data);
    let mode = p.below(3);
    match mode {
        0 => {
            check(p.rest());
        }
        1 => {
            check(&wrap(p.rest()));
        }
        _ => {
            let flip = p.byte();
            let flip_at = p.u16();
            let model = structured(p);
            let Ok(payload) = postcard::to_stdvec(&model) else {
                return;
            };
            let mut file = wrap(&payload);
            if flip & 0x80 != 0 && !payload.is_empty() {
                // Flip one bit of the payload after the CRC was computed: must be rejected.
                let at = HEADER_LEN + usize::from(flip_at) % payload.len();
                file[at] ^= 1 << (flip & 7);
                match Model::from_bytes(&file) {
                    Err(ModelError::ChecksumMismatch { .. }) => {}
                    other => panic!("bit flip not detected: {other:?}"),
                }
                return;
            }
            let loaded = check(&file);
            // Whatever passed validation is exactly what was serialised.
            if let Some(loaded) = loaded {
                assert_eq!(loaded, model);
            } else {
                assert!(model.validate().is_err(), "valid model rejected");
            }
        }
    }
});

/// Load `file`; on success, round-trip it and bake it. Returns the loaded model.
fn check(file: &[u8]) -> Option<Model> {
    let model = match Model::from_bytes(file) {
        Ok(m) => m,
        Err(e) => {
            // Every error has a message.
            assert!(!e.to_string().is_empty());
            return None;
        }
    };
    let again = model.to_bytes().expect("a loaded model re-serialises");
    assert_eq!(Model::from_bytes(&again).expect("round trip"), model);
    for pieces in [PieceTable::Full, PieceTable::Minimal] {
        let data = TableData::new(&model, pieces).expect("a loaded model lays out");
        assert_eq!(data.n_ids(), model.n_ids());
        let source = picobpe_build::generate(&data, "fuzz", std::path::Path::new("/dev/null"));
        assert!(source.contains("pub static TABLES"));
    }
    Some(model)
}

/// `payload` behind a correct header.
fn wrap(payload: &[u8]) -> Vec<u8> {
    let mut file = Vec::with_capacity(HEADER_LEN + payload.len());
    file.extend_from_slice(&MAGIC);
    file.extend_from_slice(&VERSION.to_le_bytes());
    file.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    file.extend_from_slice(&crc32(payload).to_le_bytes());
    file.extend_from_slice(payload);
    file
}

/// A model driven by fuzz bytes: mostly valid, with occasional deliberate faults (missing or
/// duplicate bytes, merges of unknown ids or to non-tokens, duplicate merges, specials that
/// collide with ordinary tokens or with each other, empty holes).
fn structured(mut p: Params<'_>) -> Model {
    let pattern = PatternKind::ALL[p.below(3)];
    let whole_piece = p.byte() & 1 == 1;
    let faults = p.byte();
    let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    if faults & 1 != 0 {
        // A rotated byte order (still valid) or a missing byte (invalid).
        let k = p.below(256);
        tokens.rotate_left(k);
        if faults & 2 != 0 {
            tokens[k] = vec![tokens[k][0], 0];
        }
    }
    let mut merges = Vec::new();
    let n_merges = p.below(48);
    for _ in 0..n_merges {
        let n = tokens.len() as u32;
        let op = p.byte();
        let l = u32::from(p.u16()) % n;
        let r = u32::from(p.u16()) % n;
        match op % 16 {
            // A hole (unused id).
            0 => tokens.push(Vec::new()),
            // A merge whose result is not added (invalid: not a token).
            1 => merges.push((l, r)),
            // A merge referencing an id past the end (invalid).
            2 => merges.push((l, n + u32::from(op))),
            // Usual case: add the concatenation as a new token and its merge.
            _ => {
                let bytes = [tokens[l as usize].clone(), tokens[r as usize].clone()].concat();
                tokens.push(bytes);
                merges.push((l, r));
            }
        }
    }
    let mut specials = Vec::new();
    for _ in 0..p.below(4) {
        let kind = p.byte();
        let text = match kind % 4 {
            0 => "<|endoftext|>".to_owned(),
            1 => "<|endoftext|><|endoftext|>".to_owned(),
            // Possibly equal to an ordinary token (invalid) or empty (invalid).
            2 => String::from_utf8_lossy(&tokens[usize::from(p.u16()) % tokens.len()]).into_owned(),
            _ => format!("<|s{}|>", p.byte()),
        };
        let id = if kind & 0x40 != 0 {
            // An id that already belongs to a token (invalid unless it is a hole).
            u32::from(p.u16()) % tokens.len() as u32
        } else {
            tokens.push(text.clone().into_bytes());
            tokens.len() as u32 - 1
        };
        specials.push((text, id));
    }
    Model {
        pattern,
        tokens,
        merges,
        specials,
        whole_piece,
    }
}
