//! The family of the baked model, as the C API reports it. Everything else the C API needs of
//! a model is the core's one contract, [`picobpe::Tokenize`], which every family implements:
//! `api.rs` is written against it, and the including crate picks the family's tokenizer.

use picobpe::Family;

/// The tokenizer family of the baked model, as the C API reports it.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PicobpeFamily {
    /// Byte-level BPE (tiktoken's ids: gpt2, cl100k_base, o200k_base; Llama 3 / Qwen2
    /// patterns; models trained by `host-trainer`).
    ByteLevelBpe = 0,
    /// SentencePiece BPE (sentencepiece's `EncodeAsIds`: Llama 2, TinyLlama, Mistral).
    SentencepieceBpe = 1,
    /// SentencePiece Unigram (sentencepiece's `EncodeAsIds`: T5-style models).
    SentencepieceUnigram = 2,
    /// WordPiece (`tokenizers`' BERT pipeline: BERT, MiniLM).
    Wordpiece = 3,
}

impl From<Family> for PicobpeFamily {
    #[inline]
    fn from(f: Family) -> Self {
        match f {
            Family::ByteLevelBpe => PicobpeFamily::ByteLevelBpe,
            Family::SentencePieceBpe => PicobpeFamily::SentencepieceBpe,
            Family::SentencePieceUnigram => PicobpeFamily::SentencepieceUnigram,
            Family::WordPiece => PicobpeFamily::Wordpiece,
        }
    }
}
