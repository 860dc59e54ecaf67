//! The [`Model`]: vocabulary, merges, special tokens and pattern, plus its invariants.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::error::InvalidModel;
use crate::pattern::PatternKind;
use picobpe::normalizer::UnicodeForm;

/// A byte-level BPE model as stored in a `*.model` file (see [`crate::format`]).
///
/// Ids index `tokens`. An id is *special* when it appears in `specials`, *unused* (a hole) when
/// its bytes are empty and it is not special, and *ordinary* otherwise. A valid model (see
/// [`Model::validate`]) has exactly one ordinary single-byte token per byte value, unique
/// ordinary tokens, and merges whose concatenation is an ordinary token.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Model {
    /// The pre-tokenization pattern.
    pub pattern: PatternKind,
    /// Id → bytes for all ids, ordinary and special; empty bytes mark an unused id.
    pub tokens: Vec<Vec<u8>>,
    /// `(left id, right id)` in rank order (index = rank); the merged token is the ordinary id
    /// whose bytes are `tokens[left] ++ tokens[right]`.
    pub merges: Vec<(u32, u32)>,
    /// Special token text and id; `tokens[id]` equals the text's bytes.
    pub specials: Vec<(String, u32)>,
    /// tiktoken semantics: a pre-tokenized piece that equals an ordinary token encodes to that
    /// token without merging. False for pair-semantics (HF / CS336-trained) models.
    pub whole_piece: bool,
    /// The Unicode normalization applied before splitting (Qwen2's `NFC`), or none. Stored
    /// after the model in the file (payload variant 6, see [`crate::format`]), so files of
    /// models without one are unchanged.
    #[serde(skip)]
    pub normalizer: Option<UnicodeForm>,
    /// `(id, bits)` of the specials that take the whitespace beside them
    /// ([`picobpe::special::LSTRIP`], [`picobpe::special::RSTRIP`]: `tokenizers`' `lstrip` and
    /// `rstrip`), in id order. Stored in the file's header part (version 5, see
    /// [`crate::format`]), not as a field.
    #[serde(skip)]
    pub strips: Vec<(u32, u8)>,
    /// Empty, or the `Split` pre-tokenizers (outermost first) that take the place of
    /// `pattern`: each splits the pieces of the one before it, and the last one's pieces are
    /// merged ([`crate::compile_split`] compiles them for the core's
    /// [`picobpe::pretok::split_levels`]). Stored in the file's header part (versions 6 and 7,
    /// see [`crate::format`]), not as a field.
    #[serde(skip)]
    pub splits: Vec<Split>,
    /// `tokenizers`' `ByteLevel` `add_prefix_space`: a space before each text between special
    /// tokens that does not start with one ([`picobpe::Tables::prefix_space`]); not with a
    /// normalizer. Stored after the model in the file (payload variant 10, see
    /// [`crate::format`]), so files of models without it are unchanged.
    #[serde(skip)]
    pub prefix_space: bool,
    /// Empty, or `tokenizers`' BPE `end_of_word_suffix` as bytes (CLIP's `</w>`): the last byte
    /// of every piece starts as the token of that byte followed by the suffix
    /// ([`picobpe::Tables::word_end_ids`]), so tokens that end a word carry it. Stored after
    /// the model in the file (payload variant 11, see [`crate::format`]).
    #[serde(skip)]
    pub end_of_word_suffix: Vec<u8>,
    /// The normalizer's steps after its Unicode form, and where special tokens are matched
    /// (CLIP's `Lowercase` and whitespace runs, its `normalized` added tokens). Stored in
    /// payload variant 11's settings byte (see [`crate::format`]).
    #[serde(skip)]
    pub steps: TextSteps,
    /// Ids of tokens with no bytes, in increasing order: tiktoken's `= N` rank line
    /// (whisper's `multilingual.tiktoken` ends with `= 50256`). They decode to nothing, as in
    /// tiktoken, and no text encodes to them; every other id with no bytes is unused. Stored in
    /// payload variant 11 (see [`crate::format`]).
    #[serde(skip)]
    pub empty_tokens: Vec<u32>,
}

/// What a byte-level model's normalizer does after its Unicode form ([`Model::normalizer`],
/// applied by the core's [`picobpe::normalizer::Folded`]), and whether special tokens are
/// matched in the normalized text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TextSteps {
    /// `Lowercase`: `char::to_lowercase` of each character the form writes.
    pub lowercase: bool,
    /// `Replace(Regex("\s+"), " ")`: each run of `White_Space` characters becomes one space
    /// (not after a compatibility form: [`picobpe::normalizer::Folded::is_exact`]).
    pub collapse_whitespace: bool,
    /// Special tokens are matched in the normalized text (`tokenizers`' added tokens marked
    /// `normalized` behind a normalizer); needs a normalizer.
    pub specials_normalized: bool,
}

impl TextSteps {
    /// True when the normalizer has steps after (or instead of) its form.
    pub fn fold(&self) -> bool {
        self.lowercase || self.collapse_whitespace
    }

    /// The settings bits of payload variant 11 and table kind 2: bit 1 `Lowercase`, bit 2 the
    /// whitespace runs, bit 3 special tokens matched in the normalized text (bit 0 is the
    /// prefix space, kept by the model).
    pub fn bits(&self) -> u8 {
        u8::from(self.lowercase) << 1
            | u8::from(self.collapse_whitespace) << 2
            | u8::from(self.specials_normalized) << 3
    }

    /// [`TextSteps::bits`] read back (bit 0 and bits above 3 ignored: the caller checks them).
    pub fn from_bits(bits: u8) -> TextSteps {
        TextSteps {
            lowercase: bits & 2 != 0,
            collapse_whitespace: bits & 4 != 0,
            specials_normalized: bits & 8 != 0,
        }
    }

    /// The core's normalizer for a model with `form` and these steps, if it has one.
    pub fn text_normalizer(
        &self,
        form: Option<UnicodeForm>,
    ) -> Option<picobpe::normalizer::TextNormalizer> {
        use picobpe::normalizer::{Folded, TextNormalizer};
        if self.fold() {
            return Some(TextNormalizer::folded(Folded {
                form,
                lowercase: self.lowercase,
                collapse_whitespace: self.collapse_whitespace,
            }));
        }
        form.map(TextNormalizer::new)
    }

    /// Why these steps cannot go with `form` and `prefix_space`, if they cannot.
    pub(crate) fn check(
        &self,
        form: Option<UnicodeForm>,
        prefix_space: bool,
    ) -> Result<(), String> {
        let folded = picobpe::normalizer::Folded {
            form,
            lowercase: self.lowercase,
            collapse_whitespace: self.collapse_whitespace,
        };
        if self.fold() && !folded.is_exact() {
            return Err(format!(
                "whitespace runs after {form:?}: a compatibility form can make spaces, so \
                 runs of the normalized text are not those of the input"
            ));
        }
        if self.specials_normalized && form.is_none() && !self.fold() {
            return Err("special tokens matched in the normalized text, with no normalizer".into());
        }
        if prefix_space && self.fold() {
            return Err("a prefix space (add_prefix_space) with a normalizer".into());
        }
        Ok(())
    }
}

/// A `Split` pre-tokenizer: its regex (as `fancy-regex` reads it) and how its matches make
/// pieces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Split {
    /// The regex.
    pub regex: String,
    /// Its behaviour and whether it is inverted.
    pub rule: picobpe::pretok::SplitRule,
}

impl Split {
    /// `regex` with `tokenizers`' default: `Isolated`, not inverted.
    pub fn isolated(regex: impl Into<String>) -> Split {
        Split {
            regex: regex.into(),
            rule: picobpe::pretok::SplitRule::ISOLATED,
        }
    }
}

impl Model {
    /// Number of ids (ordinary, special and unused).
    pub fn n_ids(&self) -> usize {
        self.tokens.len()
    }

    /// Ids of the special tokens, in a set.
    pub fn special_ids(&self) -> HashSet<u32> {
        self.specials.iter().map(|&(_, id)| id).collect()
    }

    /// The ordinary (non-special, non-empty) tokens as `(id, bytes)`, in id order.
    pub(crate) fn ordinary(&self) -> impl Iterator<Item = (u32, &[u8])> {
        let specials = self.special_ids();
        (0..).zip(&self.tokens).filter_map(move |(id, bytes)| {
            (!bytes.is_empty() && !specials.contains(&id)).then_some((id, bytes.as_slice()))
        })
    }

    /// Number of ordinary (non-special, non-empty) tokens.
    pub fn n_ordinary(&self) -> usize {
        self.ordinary().count()
    }

    /// Map from bytes to id over the ordinary tokens. On a valid model this is a bijection.
    pub fn ordinary_map(&self) -> HashMap<&[u8], u32> {
        self.ordinary().map(|(id, bytes)| (bytes, id)).collect()
    }

    /// The merged id of every merge, in merge order. Assumes a valid model (a merge whose
    /// concatenation is not a token yields `u32::MAX`).
    pub fn merged_ids(&self) -> Vec<u32> {
        let map = self.ordinary_map();
        let mut buf = Vec::new();
        self.merges
            .iter()
            .map(|&(l, r)| {
                buf.clear();
                buf.extend_from_slice(&self.tokens[l as usize]);
                buf.extend_from_slice(&self.tokens[r as usize]);
                map.get(buf.as_slice()).copied().unwrap_or(u32::MAX)
            })
            .collect()
    }

    /// The id of each byte followed by [`Model::end_of_word_suffix`], by byte value (empty
    /// without a suffix), looked up in the model's ordinary tokens.
    pub fn word_end_ids(&self) -> Result<Vec<u32>, InvalidModel> {
        self.word_end_ids_in(&self.ordinary_map())
    }

    /// [`Model::word_end_ids`] in an `ordinary` bytes → id map.
    fn word_end_ids_in(&self, ordinary: &HashMap<&[u8], u32>) -> Result<Vec<u32>, InvalidModel> {
        let suffix = &self.end_of_word_suffix;
        if suffix.is_empty() {
            return Ok(Vec::new());
        }
        let bad = |reason: String| InvalidModel::BadWordEnd {
            suffix: String::from_utf8_lossy(suffix).into_owned(),
            reason,
        };
        if self.whole_piece {
            let why = "not with tiktoken's whole-piece rule (ignore_merges)";
            return Err(bad(why.to_owned()));
        }
        let mut key = Vec::with_capacity(1 + suffix.len());
        (0..=255u8)
            .map(|b| {
                key.clear();
                key.push(b);
                key.extend_from_slice(suffix);
                ordinary.get(key.as_slice()).copied().ok_or_else(|| {
                    bad(format!(
                        "byte {b:#04x} followed by it is not an ordinary token"
                    ))
                })
            })
            .collect()
    }

    /// Check every invariant; the error names the first offending id, merge or special.
    ///
    /// - ids and the total of token bytes fit in `u32`;
    /// - specials: non-empty, unique texts and ids, `id < n_ids`, `tokens[id]` == text bytes,
    ///   text not equal to an ordinary token;
    /// - ordinary tokens are unique, and every byte 0..=255 is one of them (and, with an
    ///   end-of-word suffix, every byte followed by it, without the whole-piece rule);
    /// - merges reference ordinary ids, their concatenation is an ordinary token, and no token
    ///   is produced by two merges.
    pub fn validate(&self) -> Result<(), InvalidModel> {
        let n = self.tokens.len();
        if n > picobpe::MAX_IDS {
            return Err(InvalidModel::TooManyIds { n_ids: n as u64 });
        }
        let total: u64 = self.tokens.iter().map(|t| t.len() as u64).sum();
        if total > u64::from(u32::MAX) {
            return Err(InvalidModel::TooManyBytes { total });
        }

        let mut special_texts = HashSet::new();
        let mut special_ids = HashSet::new();
        for (text, id) in &self.specials {
            let id = *id;
            if text.is_empty() {
                return Err(InvalidModel::SpecialEmpty { id });
            }
            if id as usize >= n {
                return Err(InvalidModel::SpecialIdOutOfRange {
                    text: text.clone(),
                    id,
                    n_ids: n as u64,
                });
            }
            if !special_texts.insert(text.as_str()) {
                return Err(InvalidModel::SpecialDuplicateText { text: text.clone() });
            }
            if !special_ids.insert(id) {
                return Err(InvalidModel::SpecialDuplicateId { id });
            }
            if self.tokens[id as usize] != text.as_bytes() {
                return Err(InvalidModel::SpecialBytesMismatch {
                    text: text.clone(),
                    id,
                });
            }
        }

        crate::tables::check_strips(&self.strips, &self.specials)
            .map_err(|reason| InvalidModel::BadStrips { reason })?;
        crate::tables::compile_splits(&self.splits)
            .map_err(|reason| InvalidModel::BadSplit { reason })?;
        if self.prefix_space && self.normalizer.is_some() {
            return Err(InvalidModel::PrefixWithNormalizer);
        }
        (self.steps)
            .check(self.normalizer, self.prefix_space)
            .map_err(|reason| InvalidModel::BadSteps { reason })?;
        let unused = |id: &u32| {
            self.tokens.get(*id as usize).is_some_and(Vec::is_empty) && !special_ids.contains(id)
        };
        if let Some(&id) = self.empty_tokens.iter().find(|id| !unused(id)) {
            return Err(InvalidModel::BadEmptyToken { id });
        }
        if !self.empty_tokens.windows(2).all(|w| w[0] < w[1]) {
            return Err(InvalidModel::BadEmptyToken { id: u32::MAX });
        }

        let mut ordinary: HashMap<&[u8], u32> = HashMap::with_capacity(n);
        for (id, bytes) in self.ordinary() {
            if let Some(first) = ordinary.insert(bytes, id) {
                return Err(InvalidModel::DuplicateToken { first, second: id });
            }
        }
        for byte in 0..=255u8 {
            if !ordinary.contains_key([byte].as_slice()) {
                return Err(InvalidModel::MissingByte { byte });
            }
        }
        self.word_end_ids_in(&ordinary)?;
        for (text, _) in &self.specials {
            if let Some(&id) = ordinary.get(text.as_bytes()) {
                return Err(InvalidModel::SpecialIsOrdinary {
                    text: text.clone(),
                    ordinary: id,
                });
            }
        }

        let is_ordinary = |id: u32| {
            self.tokens.get(id as usize).is_some_and(|t| !t.is_empty())
                && !special_ids.contains(&id)
        };
        // produced_by[merged id] = merge index + 1 (0 = not produced yet).
        let mut produced_by = vec![0usize; n];
        let mut buf = Vec::new();
        for (index, &(left, right)) in self.merges.iter().enumerate() {
            for id in [left, right] {
                if !is_ordinary(id) {
                    return Err(InvalidModel::MergeUnknownId { index, id });
                }
            }
            buf.clear();
            buf.extend_from_slice(&self.tokens[left as usize]);
            buf.extend_from_slice(&self.tokens[right as usize]);
            let Some(&merged) = ordinary.get(buf.as_slice()) else {
                return Err(InvalidModel::MergeNotAToken { index, left, right });
            };
            let slot = &mut produced_by[merged as usize];
            if *slot != 0 {
                return Err(InvalidModel::MergeDuplicate {
                    index,
                    earlier: *slot - 1,
                    merged,
                });
            }
            *slot = index + 1;
        }
        Ok(())
    }
}
