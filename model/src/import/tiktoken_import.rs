//! Import a tiktoken rank file (`<base64 token> <rank>` per line).

use base64::Engine;

use super::ImportError;
use crate::bpe::tiktoken_split;
use crate::model::Model;
use crate::pattern::PatternKind;

/// Build a model from a tiktoken rank file; ids are ranks, `specials` are `(text, id)`.
///
/// Merges are the tokens' *canonical splits*: running tiktoken BPE (ranks by concatenated
/// bytes) on a token's own bytes, the last merge joins `left ++ right`; the merge is
/// `(id(left), id(right))`. Merges are listed in the merged token's rank order, so merge rank
/// order equals id order. A token that tiktoken BPE does not reach from its own bytes
/// ("unreachable"; none in gpt2, cl100k_base or o200k_base) gets no merge; it is still encoded
/// exactly because the model has tiktoken's whole-piece semantics (`whole_piece = true`).
pub fn tiktoken(
    rank_file: &[u8],
    pattern: PatternKind,
    specials: &[(String, u32)],
) -> Result<Model, ImportError> {
    let engine = base64::engine::general_purpose::STANDARD;
    let mut entries: Vec<(u32, Vec<u8>, usize)> = Vec::new();
    for (index, raw) in rank_file.split(|&b| b == b'\n').enumerate() {
        let line = index + 1;
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        if raw.is_empty() {
            continue;
        }
        let bad = |reason| ImportError::BadRankLine { line, reason };
        let space = raw
            .iter()
            .position(|&b| b == b' ')
            .ok_or(bad("expected `<base64> <rank>`"))?;
        let field = &raw[..space];
        if field.is_empty() {
            return Err(bad("no token before the rank"));
        }
        // `=` alone is the empty token (whisper's `multilingual.tiktoken` ends with `= 50256`):
        // tiktoken's `base64.b64decode` reads it as `b""`. It is kept as an id no text encodes
        // to and that decodes to nothing, as tiktoken has it.
        let token = if field.iter().all(|&b| b == b'=') {
            Vec::new()
        } else {
            engine.decode(field).map_err(|e| bad(base64_cause(&e)))?
        };
        let rank: u32 = std::str::from_utf8(&raw[space + 1..])
            .ok()
            .and_then(|s| s.parse().ok())
            .filter(|&r| r < u32::MAX)
            .ok_or(bad("rank is not an integer below 2^32 - 1"))?;
        entries.push((rank, token, line));
    }
    from_ranks(entries, pattern, specials)
}

/// What is wrong with a token that is not base64, in words.
fn base64_cause(e: &base64::DecodeError) -> &'static str {
    match e {
        base64::DecodeError::InvalidByte(..) => {
            "token is not valid base64: a byte outside the base64 alphabet"
        }
        base64::DecodeError::InvalidLength(_) => {
            "token is not valid base64: its length is not a multiple of 4 (missing `=` padding?)"
        }
        base64::DecodeError::InvalidLastSymbol(..) => {
            "token is not valid base64: its last symbol has bits that no byte uses"
        }
        base64::DecodeError::InvalidPadding => "token is not valid base64: misplaced `=` padding",
    }
}

/// The number of ids that `ids` (`used` of them, tokens and specials) span; a mostly empty id
/// space is refused ([`ImportError::SparseIds`]).
pub(super) fn id_space(ids: impl Iterator<Item = u32>, used: usize) -> Result<usize, ImportError> {
    let n_ids = ids.max().map_or(0, |m| m as usize + 1);
    if n_ids > 2 * used + 1024 {
        return Err(ImportError::SparseIds { n_ids, used });
    }
    Ok(n_ids)
}

/// [`tiktoken`] from parsed entries `(rank, token bytes, line)`: ids are ranks, merges the
/// tokens' canonical splits (see [`tiktoken`]). `line` only names an entry in errors.
pub(super) fn from_ranks(
    entries: Vec<(u32, Vec<u8>, usize)>,
    pattern: PatternKind,
    specials: &[(String, u32)],
) -> Result<Model, ImportError> {
    // Ids index a dense vector; refuse id spaces that are mostly holes before allocating it.
    let ids = entries
        .iter()
        .map(|e| e.0)
        .chain(specials.iter().map(|s| s.1));
    let n_ids = id_space(ids, entries.len() + specials.len())?;
    let mut tokens: Vec<Vec<u8>> = vec![Vec::new(); n_ids];
    // Ids given so far (an empty token's slot stays empty but is taken).
    let mut taken = vec![false; n_ids];
    let mut empty_tokens = Vec::new();
    for (rank, token, line) in entries {
        if std::mem::replace(&mut taken[rank as usize], true) {
            return Err(ImportError::DuplicateRank { line, rank });
        }
        if token.is_empty() {
            empty_tokens.push(rank);
        }
        tokens[rank as usize] = token;
    }
    empty_tokens.sort_unstable();
    for (text, id) in specials {
        let slot = &mut tokens[*id as usize];
        if std::mem::replace(&mut taken[*id as usize], true) {
            return Err(ImportError::SpecialIdTaken {
                text: text.clone(),
                id: *id,
            });
        }
        *slot = text.as_bytes().to_vec();
    }

    let mut model = Model {
        pattern,
        tokens,
        merges: Vec::new(),
        specials: specials.to_vec(),
        whole_piece: true,
        normalizer: None,
        strips: Vec::new(),
        splits: Vec::new(),
        prefix_space: false,
        end_of_word_suffix: Vec::new(),
        steps: Default::default(),
        empty_tokens,
    };
    let ranks = model.ordinary_map();
    // Both halves of a split are tokens: BPE only forms parts that are tokens.
    let merges = model
        .ordinary()
        .filter_map(|(_, bytes)| {
            let split = tiktoken_split(bytes, &ranks)?;
            Some((*ranks.get(&bytes[..split])?, *ranks.get(&bytes[split..])?))
        })
        .collect();
    model.merges = merges;
    model.validate()?;
    Ok(model)
}
