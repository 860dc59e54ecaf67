//! Byte-level BPE: GPT-2, cl100k_base, o200k_base, Llama 3, Qwen2 and models trained by
//! `host-trainer train`.
//!
//! Special tokens are matched first ([`crate::special`]); the text between them is split by the
//! model's pattern ([`crate::pretok`]); each piece is one id when it is a whole token and is
//! merged pair by pair otherwise ([`merge_into`], tiktoken's rule: lowest rank, leftmost on
//! ties), by a merge tree for long pieces, or by backtracking over the token trie
//! ([`TokenTrie`], host-built tables). Ids decode to bytes by table lookup.

mod backtrack;
mod bpe;
mod bpe_tree;
mod decode;
mod encode;
mod tables;

pub use backtrack::{char3_code, PairFilter, TokenTrie, TrieChar, TrieEdge, TrieStart};
pub use bpe::{merge_into, scratch_needed, QUADRATIC_MAX, STACK_PIECE};
pub use encode::Tokenizer;
pub use tables::{PairMap, Tables, BYTE_PAIRS};
