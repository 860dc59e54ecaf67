//! Import an HF GPT-2 style byte-level BPE: `vocab.json` + `merges.txt`.

use std::collections::HashMap;

use super::tiktoken_import::id_space;
use super::ImportError;
use crate::byte_unicode::ByteDecoder;
use crate::model::Model;
use crate::pattern::PatternKind;

/// Build a model from `vocab.json` (`{"token": id, ...}`, tokens spelled with GPT-2's
/// byte-to-Unicode mapping) and `merges.txt` (`left right` per line, in rank order; a leading
/// `#version` line is skipped). `specials` are looked up in `vocab.json` by their literal text.
///
/// The result has pair semantics (`whole_piece = false`): HF applies merges to pairs of parts
/// and never short-cuts a piece that happens to be a token.
pub fn hf(
    vocab_json: &[u8],
    merges_txt: &[u8],
    pattern: PatternKind,
    specials: &[String],
) -> Result<Model, ImportError> {
    let vocab: HashMap<String, u32> =
        serde_json::from_slice(vocab_json).map_err(ImportError::Json)?;
    let special_pairs = specials.iter().map(|text| match vocab.get(text) {
        Some(&id) => Ok((text.clone(), id)),
        None => Err(ImportError::UnknownSpecial { text: text.clone() }),
    });
    let special_pairs = special_pairs.collect::<Result<Vec<_>, _>>()?;

    let mut merges = Vec::new();
    for (index, raw) in merges_txt.split(|&b| b == b'\n').enumerate() {
        let line = index + 1;
        let bad = |reason: &str| ImportError::BadMergeLine {
            line,
            reason: reason.to_owned(),
        };
        let raw = std::str::from_utf8(raw).map_err(|_| bad("not valid UTF-8"))?;
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        if raw.is_empty() || (line == 1 && raw.starts_with("#version")) {
            continue;
        }
        let mut parts = raw.split(' ');
        let (Some(left), Some(right), None) = (parts.next(), parts.next(), parts.next()) else {
            return Err(bad("expected two tokens separated by one space"));
        };
        merges.push((line, left, right));
    }
    from_parts(&vocab, &merges, pattern, special_pairs, false)
}

/// Build a model from a byte-level vocabulary (token spelled with GPT-2's byte-to-Unicode
/// mapping → id), merges as `(line, left, right)` in rank order, and specials (text, id),
/// which keep their literal text whether or not the vocabulary lists them.
pub(super) fn from_parts(
    vocab: &HashMap<String, u32>,
    merges: &[(usize, &str, &str)],
    pattern: PatternKind,
    specials: Vec<(String, u32)>,
    whole_piece: bool,
) -> Result<Model, ImportError> {
    let ids = vocab.values().chain(specials.iter().map(|(_, id)| id));
    let n_ids = id_space(ids.copied(), vocab.len() + specials.len())?;
    let ordinary = decode_vocab(vocab, &specials)?
        .into_iter()
        .map(|(id, bytes, _)| (id, bytes));
    let specials_bytes = specials
        .iter()
        .map(|(text, id)| (*id, text.as_bytes().to_vec()));
    let mut tokens: Vec<Option<Vec<u8>>> = vec![None; n_ids];
    for (id, bytes) in specials_bytes.chain(ordinary) {
        let slot = &mut tokens[id as usize];
        if slot.is_some() {
            return Err(ImportError::DuplicateVocabId { id });
        }
        *slot = Some(bytes);
    }

    let mut pairs = Vec::with_capacity(merges.len());
    for &(line, left, right) in merges {
        let bad = |reason: String| ImportError::BadMergeLine { line, reason };
        let id = |token: &str| match vocab.get(token) {
            Some(&id) => Ok(id),
            None => Err(bad(format!("token {token:?} is not in the vocabulary"))),
        };
        let (l, r) = (id(left)?, id(right)?);
        id(&format!("{left}{right}"))?;
        pairs.push((l, r));
    }

    let model = Model {
        pattern,
        tokens: tokens.into_iter().map(Option::unwrap_or_default).collect(),
        merges: pairs,
        specials,
        whole_piece,
        normalizer: None,
        strips: Vec::new(),
        splits: Vec::new(),
        prefix_space: false,
        end_of_word_suffix: Vec::new(),
        steps: Default::default(),
        empty_tokens: Vec::new(),
    };
    model.validate()?;
    Ok(model)
}

/// The ordinary entries of a `vocab.json` map as `(id, bytes, number)`: every key but the
/// specials', decoded from GPT-2's byte-to-Unicode spelling.
pub(super) fn decode_vocab(
    vocab: &HashMap<String, u32>,
    specials: &[(String, u32)],
) -> Result<Vec<(u32, Vec<u8>, usize)>, ImportError> {
    let decoder = ByteDecoder::new();
    let mut entries = Vec::with_capacity(vocab.len());
    for (n, (key, &id)) in vocab.iter().enumerate() {
        if specials.iter().any(|(text, sid)| *sid == id && text == key) {
            continue;
        }
        let bytes = decoder
            .decode(key)
            .filter(|b| !b.is_empty())
            .ok_or_else(|| ImportError::VocabKey { key: key.clone() })?;
        entries.push((id, bytes, n + 1));
    }
    Ok(entries)
}
