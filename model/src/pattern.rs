//! [`PatternKind`]: the serde mirror of [`picobpe::Pattern`] stored in model files.

use core::fmt;
use core::str::FromStr;

use serde::{Deserialize, Serialize};

/// Which pre-tokenization pattern a model uses, as stored in a model file.
///
/// This mirrors [`picobpe::Pattern`] (the core crate has no serde dependency). The variant order
/// is part of the file format: postcard encodes the variant index, so new patterns are only
/// ever appended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PatternKind {
    /// GPT-2 / r50k.
    Gpt2,
    /// cl100k_base (GPT-4).
    Cl100k,
    /// o200k_base (GPT-4o).
    O200k,
    /// Llama 3.
    Llama3,
    /// Qwen2 and Qwen2.5.
    Qwen2,
    /// Mistral's Tekken (`tekken.json`).
    Tekken,
}

impl PatternKind {
    /// Every pattern, in file-format order.
    pub const ALL: [PatternKind; 6] = [
        PatternKind::Gpt2,
        PatternKind::Cl100k,
        PatternKind::O200k,
        PatternKind::Llama3,
        PatternKind::Qwen2,
        PatternKind::Tekken,
    ];

    /// The command-line name: `gpt2`, `cl100k`, `o200k`, `llama3`, `qwen2` or `tekken`.
    pub fn name(self) -> &'static str {
        match self {
            PatternKind::Gpt2 => "gpt2",
            PatternKind::Cl100k => "cl100k",
            PatternKind::O200k => "o200k",
            PatternKind::Llama3 => "llama3",
            PatternKind::Qwen2 => "qwen2",
            PatternKind::Tekken => "tekken",
        }
    }

    /// The reference regex this pattern's hand-rolled splitter must agree with, verbatim from
    /// tiktoken 0.14 (`tiktoken_ext/openai_public.py`: `r50k_pat_str`, cl100k_base's `pat_str`,
    /// o200k_base's alternatives joined by `|`), and from the `Split` pre-tokenizer of Llama 3's
    /// and Qwen2's `tokenizer.json` (the same text as Meta's `tokenizer.py` `pat_str`), and from
    /// the `config.pattern` of Mistral's `tekken.json` (`mistral-common` 1.13's files). Used by the differential tests, the trainer's
    /// reference and the benchmark's peers; the core itself never runs a regex.
    pub fn reference_regex(self) -> &'static str {
        match self {
            PatternKind::Gpt2 => GPT2_REGEX,
            PatternKind::Cl100k => CL100K_REGEX,
            PatternKind::O200k => O200K_REGEX,
            PatternKind::Llama3 => LLAMA3_REGEX,
            PatternKind::Qwen2 => QWEN2_REGEX,
            PatternKind::Tekken => TEKKEN_REGEX,
        }
    }

    /// The pattern whose [`PatternKind::reference_regex`] is `regex`, character for character.
    pub fn from_regex(regex: &str) -> Option<PatternKind> {
        PatternKind::ALL
            .into_iter()
            .find(|kind| kind.reference_regex() == regex)
    }
}

const GPT2_REGEX: &str = r"'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";
const CL100K_REGEX: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";
const LLAMA3_REGEX: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
const QWEN2_REGEX: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
const TEKKEN_REGEX: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+",
    "|",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*",
    "|",
    r"\p{N}",
    "|",
    r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
    "|",
    r"\s*[\r\n]+",
    "|",
    r"\s+(?!\S)",
    "|",
    r"\s+",
);
const O200K_REGEX: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    "|",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    "|",
    r"\p{N}{1,3}",
    "|",
    r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
    "|",
    r"\s*[\r\n]+",
    "|",
    r"\s+(?!\S)",
    "|",
    r"\s+",
);

impl From<PatternKind> for picobpe::Pattern {
    fn from(kind: PatternKind) -> Self {
        match kind {
            PatternKind::Gpt2 => picobpe::Pattern::Gpt2,
            PatternKind::Cl100k => picobpe::Pattern::Cl100k,
            PatternKind::O200k => picobpe::Pattern::O200k,
            PatternKind::Llama3 => picobpe::Pattern::Llama3,
            PatternKind::Qwen2 => picobpe::Pattern::Qwen2,
            PatternKind::Tekken => picobpe::Pattern::Tekken,
        }
    }
}

impl From<picobpe::Pattern> for PatternKind {
    fn from(pattern: picobpe::Pattern) -> Self {
        match pattern {
            picobpe::Pattern::Gpt2 => PatternKind::Gpt2,
            picobpe::Pattern::Cl100k => PatternKind::Cl100k,
            picobpe::Pattern::O200k => PatternKind::O200k,
            picobpe::Pattern::Llama3 => PatternKind::Llama3,
            picobpe::Pattern::Qwen2 => PatternKind::Qwen2,
            picobpe::Pattern::Tekken => PatternKind::Tekken,
        }
    }
}

impl fmt::Display for PatternKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown pattern name given to [`PatternKind::from_str`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown pattern {0:?} (expected gpt2, cl100k, o200k, llama3, qwen2 or tekken)")]
pub struct UnknownPattern(pub String);

impl FromStr for PatternKind {
    type Err = UnknownPattern;

    /// Accepts `gpt2` (alias `r50k`), `cl100k` (alias `cl100k_base`), `o200k` (alias `o200k_base`),
    /// `llama3`, `qwen2`, `tekken`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "gpt2" | "r50k" | "r50k_base" => Ok(PatternKind::Gpt2),
            "cl100k" | "cl100k_base" => Ok(PatternKind::Cl100k),
            "o200k" | "o200k_base" => Ok(PatternKind::O200k),
            "llama3" => Ok(PatternKind::Llama3),
            "qwen2" => Ok(PatternKind::Qwen2),
            "tekken" => Ok(PatternKind::Tekken),
            _ => Err(UnknownPattern(s.to_owned())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for kind in PatternKind::ALL {
            assert_eq!(kind.name().parse::<PatternKind>(), Ok(kind));
            assert_eq!(PatternKind::from(picobpe::Pattern::from(kind)), kind);
        }
        assert_eq!(
            "cl100k_base".parse::<PatternKind>(),
            Ok(PatternKind::Cl100k)
        );
        assert!("gpt4".parse::<PatternKind>().is_err());
    }
}
