//! The tokenizer families the C API serves, behind one interface: byte-level BPE
//! (`picobpe::Tokenizer`: GPT-2, cl100k_base, Llama 3, trained models) and SentencePiece BPE or
//! Unigram (`picobpe::SpTokenizer`: Llama 2, TinyLlama, Mistral, T5-style). `api.rs` is written
//! against [`CModel`]; the including crate picks the implementation that matches its baked
//! tables.
//!
//! Every offset taken and returned here is into the whole text (or the whole id sequence), so
//! one resume contract serves both families: a SentencePiece encode depends on the text before
//! the resume point (the dummy prefix, whitespace rules), a decode on the ids before it (the
//! leading space of the first piece).

use picobpe::{
    CacheEntry, DecodeError, EncodeError, SpStreamDecoder, SpStreamEncoder, SpTokenizer, Specials,
    StreamDecoder, StreamEncoder, Tokenizer,
};

/// Bytes of pending input a stream encoder holds (its `IN`). See `api.rs`.
pub(crate) const STREAM_INPUT_CAPACITY: usize = 256;
/// Ids a stream encoder holds between `take`s (its `OUT`). See `api.rs`.
pub(crate) const STREAM_ID_CAPACITY: usize = 512;
/// Bytes a stream decoder holds (its `N`). See `api.rs`.
pub(crate) const STREAM_DECODER_CAPACITY: usize = 256;

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
}

/// What the C API needs of a tokenizer family.
pub trait CModel: Copy {
    /// The family's streaming encoder with the C API's capacities (`api.rs` calls its
    /// `push`, `finish`, `is_done` and `take`, which both families' streams have).
    type Encoder;
    /// The family's streaming decoder with the C API's capacity (`push`, `finish`, `take`).
    type Decoder;

    /// The family of this model.
    fn family(&self) -> PicobpeFamily;
    /// Number of ids, unused ones included.
    fn n_ids(&self) -> usize;
    /// Encode `text` from byte `from` (0 or an earlier call's `consumed`), with a cache
    /// (empty: none). Offsets in errors are offsets in `text`.
    fn encode_from(
        &self,
        text: &[u8],
        from: usize,
        specials: Specials,
        out: &mut [u32],
        cache: &mut [CacheEntry],
    ) -> Result<usize, EncodeError>;
    /// Count the ids of `text`, with `scratch` as the work area.
    fn count(
        &self,
        text: &[u8],
        specials: Specials,
        scratch: &mut [u32],
    ) -> Result<usize, EncodeError>;
    /// Decode `ids` from index `from` (0 or an earlier call's `consumed`). Positions in errors
    /// are indexes into `ids`.
    fn decode_from(&self, ids: &[u32], from: usize, out: &mut [u8]) -> Result<usize, DecodeError>;
    /// Bytes enough to decode from `id` on into an empty buffer, whatever came before it (an
    /// upper bound); `None` for an unknown id.
    fn decode_room(&self, id: u32) -> Option<usize>;
    /// Room a streaming decoder needs after a full `take` to accept `id` (an upper bound);
    /// `None` for an unknown id.
    fn stream_room(&self, id: u32) -> Option<usize>;
    /// A new streaming encoder (`specials`: byte-level models only; SentencePiece has none).
    fn encoder(self, specials: Specials) -> Self::Encoder;
    /// A new streaming decoder.
    fn decoder(self) -> Self::Decoder;
}

impl CModel for Tokenizer<'static> {
    type Encoder = StreamEncoder<'static, STREAM_INPUT_CAPACITY, STREAM_ID_CAPACITY>;
    type Decoder = StreamDecoder<'static, STREAM_DECODER_CAPACITY>;

    #[inline]
    fn family(&self) -> PicobpeFamily {
        PicobpeFamily::ByteLevelBpe
    }

    #[inline]
    fn n_ids(&self) -> usize {
        self.tables().n_ids()
    }

    /// Byte-level pieces do not depend on the text before `from`: encoding `text[from..]`
    /// continues the ids.
    #[inline]
    fn encode_from(
        &self,
        text: &[u8],
        from: usize,
        specials: Specials,
        out: &mut [u32],
        cache: &mut [CacheEntry],
    ) -> Result<usize, EncodeError> {
        let rest = text.get(from..).unwrap_or(&[]);
        let r = if cache.is_empty() {
            self.encode(rest, out, specials)
        } else {
            self.encode_cached(rest, out, specials, cache)
        };
        r.map_err(|e| e.shifted(from))
    }

    #[inline]
    fn count(
        &self,
        text: &[u8],
        specials: Specials,
        scratch: &mut [u32],
    ) -> Result<usize, EncodeError> {
        Tokenizer::count(self, text, specials, scratch)
    }

    /// Byte-level decode is a concatenation: `ids[from..]` decode on their own.
    #[inline]
    fn decode_from(&self, ids: &[u32], from: usize, out: &mut [u8]) -> Result<usize, DecodeError> {
        let rest = ids.get(from..).unwrap_or(&[]);
        self.decode(rest, out).map_err(|e| e.shifted(from))
    }

    /// A token decodes to exactly its bytes.
    #[inline]
    fn decode_room(&self, id: u32) -> Option<usize> {
        self.token_bytes(id).map(<[u8]>::len)
    }

    /// Its bytes, after up to 3 held bytes of an unfinished character.
    #[inline]
    fn stream_room(&self, id: u32) -> Option<usize> {
        self.token_bytes(id).map(|b| b.len().saturating_add(3))
    }

    #[inline(always)]
    fn encoder(self, specials: Specials) -> Self::Encoder {
        StreamEncoder::new(self, specials)
    }

    #[inline(always)]
    fn decoder(self) -> Self::Decoder {
        StreamDecoder::new(self)
    }
}

impl CModel for SpTokenizer<'static> {
    type Encoder = SpStreamEncoder<'static, STREAM_INPUT_CAPACITY, STREAM_ID_CAPACITY>;
    type Decoder = SpStreamDecoder<'static, STREAM_DECODER_CAPACITY>;

    #[inline]
    fn family(&self) -> PicobpeFamily {
        if self.is_unigram() {
            PicobpeFamily::SentencepieceUnigram
        } else {
            PicobpeFamily::SentencepieceBpe
        }
    }

    #[inline]
    fn n_ids(&self) -> usize {
        self.tables().n_ids()
    }

    /// `specials` is ignored: sentencepiece's `EncodeAsIds` reads control tokens as text and
    /// user-defined symbols always.
    #[inline]
    fn encode_from(
        &self,
        text: &[u8],
        from: usize,
        _specials: Specials,
        out: &mut [u32],
        cache: &mut [CacheEntry],
    ) -> Result<usize, EncodeError> {
        self.encode_from_cached(text, from, out, cache)
    }

    #[inline]
    fn count(
        &self,
        text: &[u8],
        _specials: Specials,
        scratch: &mut [u32],
    ) -> Result<usize, EncodeError> {
        SpTokenizer::count(self, text, scratch)
    }

    #[inline]
    fn decode_from(&self, ids: &[u32], from: usize, out: &mut [u8]) -> Result<usize, DecodeError> {
        SpTokenizer::decode_from(self, ids, from, out)
    }

    /// A piece decodes to at most its own bytes (`▁`, three bytes, becomes one space), the
    /// unknown piece to the model's `unk_surface`, and a run of byte pieces to at most a
    /// character's four bytes, or U+FFFD (three bytes) for each of them: the longer of the
    /// piece and `unk_surface`, and 12 bytes for the bytes held before it, bound all three.
    #[inline]
    fn decode_room(&self, id: u32) -> Option<usize> {
        let t = self.tables();
        t.kind(id)?;
        let piece = t.piece_bytes(id)?.len();
        Some(piece.max(t.unk_surface.len()).saturating_add(12))
    }

    /// `SpStreamDecoder::push`'s own test, with a full `take` before it: up to 3 bytes of an
    /// unfinished character stay held (9 bytes as U+FFFD); a byte piece needs room for four
    /// U+FFFD, any other piece for the longer of itself and `unk_surface`.
    #[inline]
    fn stream_room(&self, id: u32) -> Option<usize> {
        let t = self.tables();
        let kind = t.kind(id)?;
        let piece = t.piece_bytes(id)?.len();
        Some(if kind == picobpe::sentencepiece::PieceKind::Byte {
            12
        } else {
            piece.max(t.unk_surface.len()).saturating_add(9)
        })
    }

    /// `specials` is ignored (see `encode_from`).
    #[inline(always)]
    fn encoder(self, _specials: Specials) -> Self::Encoder {
        SpStreamEncoder::new(self)
    }

    #[inline(always)]
    fn decoder(self) -> Self::Decoder {
        SpStreamDecoder::new(self)
    }
}
