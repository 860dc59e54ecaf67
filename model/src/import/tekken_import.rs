//! Import Mistral's `tekken.json` (Mistral NeMo, Ministral, Pixtral, Devstral): a tiktoken
//! vocabulary in JSON, with its pattern and its special tokens, read as `mistral-common`'s
//! `Tekkenizer.from_file` reads it.
//!
//! - **Special tokens** take ids `0..num_special` (`config.default_num_special_tokens`). A file
//!   of version v7 or older without a `special_tokens` list gets `Tekkenizer`'s twenty
//!   `DEPRECATED_SPECIAL_TOKENS` (`<unk>`, `<s>`, `</s>`, `[INST]`, ...); a newer one must list
//!   its own. Ids after the listed ones are filled with `<SPECIAL_{id}>`.
//! - **Ordinary tokens**: the first `default_vocab_size - num_special` vocabulary entries (the
//!   rest are cut, as `Tekkenizer` cuts them); entry `rank` gets id `rank + num_special`, so BPE
//!   merge priority (rank order) is id order.
//! - **Pattern**: `config.pattern` must be one picobpe splits by hand (every published file
//!   has the Tekken pattern); another is refused, naming the pattern.
//! - **Template**: BOS (`<s>`) before the text, `Tekkenizer.encode(text, bos=True, eos=False)`,
//!   what `mistral-common`'s instruct and completion requests start with.
//!
//! `Tekkenizer.encode` never reads special-token text inside a text: encode with
//! [`picobpe::Specials::None`] (`host-trainer encode --ordinary`) for its ids.

use base64::Engine;
use serde::Deserialize;

use super::tiktoken_import::from_ranks;
use super::ImportError;
use crate::format::TemplateData;
use crate::model::Model;
use crate::pattern::PatternKind;

/// `Tekkenizer.DEPRECATED_SPECIAL_TOKENS` (`mistral-common` 1.13, `SpecialTokens`): ids 0–19
/// of a v7-or-older file that lists no special tokens.
const DEPRECATED_SPECIALS: [&str; 20] = [
    "<unk>",
    "<s>",
    "</s>",
    "[INST]",
    "[/INST]",
    "[AVAILABLE_TOOLS]",
    "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]",
    "[TOOL_CALLS]",
    "[IMG]",
    "<pad>",
    "[IMG_BREAK]",
    "[IMG_END]",
    "[PREFIX]",
    "[MIDDLE]",
    "[SUFFIX]",
    "[SYSTEM_PROMPT]",
    "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
];

/// The most special tokens a file may ask for (`default_num_special_tokens`).
const MAX_SPECIALS: usize = 1 << 20;

/// The versions `mistral-common` 1.13 knows (`TokenizerVersion`), in order.
const VERSIONS: [&str; 7] = ["v1", "v2", "v3", "v7", "v11", "v13", "v15"];

/// The parts of `tekken.json` that define the tokenizer (image and audio settings are ignored).
#[derive(Deserialize)]
struct TekkenFile {
    config: Config,
    vocab: Vec<VocabEntry>,
    #[serde(default)]
    special_tokens: Option<Vec<SpecialEntry>>,
}

#[derive(Deserialize)]
struct Config {
    pattern: String,
    default_vocab_size: usize,
    default_num_special_tokens: usize,
    #[serde(default)]
    version: Option<String>,
}

#[derive(Deserialize)]
struct VocabEntry {
    rank: u32,
    token_bytes: String,
}

#[derive(Deserialize)]
struct SpecialEntry {
    rank: u32,
    token_str: String,
}

/// An imported `tekken.json`: the model and the ids `encode --add-special-tokens` puts around a
/// text (BOS before it).
#[derive(Debug)]
pub struct TekkenImport {
    /// The model: specials at `0..num_special`, vocabulary entry `r` at `r + num_special`.
    pub model: Model,
    /// `<s>` before the text.
    pub template: TemplateData,
}

/// Build a model from the bytes of a `tekken.json` (see the module docs for the rules).
pub fn tekken(json: &[u8]) -> Result<TekkenImport, ImportError> {
    let bad = |what: String| ImportError::Tekken(what);
    let file: TekkenFile = serde_json::from_slice(json).map_err(ImportError::Json)?;
    let config = &file.config;
    let version = config.version.as_deref().unwrap_or("(none)");
    let Some(version_index) = VERSIONS.iter().position(|v| *v == version) else {
        return Err(bad(format!(
            "config.version {version:?} is not one mistral-common knows ({})",
            VERSIONS.join(", ")
        )));
    };
    let pattern = PatternKind::from_regex(&config.pattern).ok_or_else(|| {
        bad(format!(
            "config.pattern {:?} is not one picobpe splits (the Tekken pattern, or gpt2, cl100k, \
             o200k, llama3, qwen2)",
            config.pattern
        ))
    })?;
    let n_special = config.default_num_special_tokens;
    // Each filler is a string picobpe builds: bound them before building any (real files
    // have 1,000).
    if n_special > MAX_SPECIALS {
        return Err(bad(format!(
            "default_num_special_tokens {n_special} is more than picobpe reads ({MAX_SPECIALS})"
        )));
    }
    let listed: Vec<String> = match &file.special_tokens {
        Some(list) => {
            for (i, s) in list.iter().enumerate() {
                if s.rank as usize != i {
                    return Err(bad(format!(
                        "special_tokens[{i}] ({:?}) has rank {}; ranks must be 0, 1, 2, ... in order",
                        s.token_str, s.rank
                    )));
                }
            }
            list.iter().map(|s| s.token_str.clone()).collect()
        }
        // mistral-common: "Tokenizer > v7 should find special tokens in the tokenizer file".
        None if version_index > 3 => {
            return Err(bad(format!(
                "no special_tokens list, which a {version} file must have"
            )))
        }
        None => DEPRECATED_SPECIALS
            .iter()
            .map(|s| (*s).to_owned())
            .collect(),
    };
    if listed.len() > n_special {
        return Err(bad(format!(
            "{} special tokens listed, more than default_num_special_tokens = {n_special}",
            listed.len()
        )));
    }
    let first_filler = listed.len();
    let texts = listed
        .into_iter()
        .chain((first_filler..n_special).map(|i| format!("<SPECIAL_{i}>")));
    let inner = config
        .default_vocab_size
        .checked_sub(n_special)
        .filter(|&n| n <= file.vocab.len())
        .ok_or_else(|| {
            bad(format!(
                "default_vocab_size {} is not between default_num_special_tokens {n_special} and \
                 that plus the {} vocabulary entries",
                config.default_vocab_size,
                file.vocab.len()
            ))
        })?;
    let engine = base64::engine::general_purpose::STANDARD;
    let mut entries = Vec::with_capacity(inner);
    for (i, entry) in file.vocab.iter().take(inner).enumerate() {
        if entry.rank as usize != i {
            return Err(bad(format!(
                "vocab[{i}] has rank {}; ranks must be 0, 1, 2, ... in order",
                entry.rank
            )));
        }
        let token = engine.decode(&entry.token_bytes).map_err(|e| {
            bad(format!(
                "vocab[{i}].token_bytes {:?} is not base64: {e}",
                entry.token_bytes
            ))
        })?;
        let id = u32::try_from(n_special + i).map_err(|_| bad("too many ids".to_owned()))?;
        entries.push((id, token, i + 1));
    }
    let specials: Vec<(String, u32)> = texts.zip(0u32..).collect();
    let bos = specials.iter().find(|(t, _)| t == "<s>").map(|s| s.1);
    let model = from_ranks(entries, pattern, &specials)?;
    let template = TemplateData {
        prefix: Vec::from_iter(bos),
        suffix: Vec::new(),
    };
    Ok(TekkenImport { model, template })
}
