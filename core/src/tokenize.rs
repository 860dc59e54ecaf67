//! The one contract every tokenizer family keeps ([`Tokenize`]), and the facade over all of
//! them ([`AnyTokenizer`]).
//!
//! Each family's tokenizer ([`Tokenizer`], [`SpTokenizer`], [`WpTokenizer`]) implements
//! [`Tokenize`]; the streaming encoder and decoder ([`crate::StreamEncoder`],
//! [`crate::StreamDecoder`]), [`Tokenize::count`] and the C API are written once against it.
//! Generic code over one family compiles to that family's code only, which is what firmware
//! wants; [`AnyTokenizer`] matches on the family once per call, for code that loads a model
//! of any family at run time (the CLI, benches).
//!
//! The contract: encode the whole text from a [`Cursor`] into the caller's buffer; on
//! [`EncodeError::OutputFull`] the cursor stands at `consumed` and carries what the next
//! call needs (a Unigram model's running score), so draining the buffer and calling again
//! with the same text and cursor gives the ids of a one-shot call. Decoding resumes the
//! same way from an index into the same ids.

use crate::bytelevel::Tokenizer;
use crate::cache::CacheEntry;
use crate::error::{DecodeError, EncodeError};
use crate::sentencepiece::{PieceKind, SpDecodeState, SpTokenizer};
use crate::special::Specials;
use crate::wordpiece::WpTokenizer;

/// How far a non-final encode got (streaming): `input[..consumed]` became `out[..written]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Input bytes encoded.
    pub consumed: usize,
    /// Ids written.
    pub written: usize,
}

/// Where an encode of one text stands: the offset to go on from and, for a Unigram model, the
/// state a word start carries (the best path's `f32` score and whether it ends in `<unk>`).
/// Start each text with [`Cursor::START`]; [`Tokenize::encode_at`] moves it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cursor {
    /// Offset in the text of the next byte to encode.
    pub(crate) offset: usize,
    /// Best path score at `offset` (Unigram; an `f32` value for `sentencepiece`'s arithmetic).
    pub(crate) score: f64,
    /// The last id written is `<unk>`, which a following unknown symbol joins.
    pub(crate) after_unk: bool,
    /// `offset` is right after a special token: it starts a section of text, which a
    /// byte-level model with a prefix space puts a space before.
    pub(crate) after_special: bool,
}

impl Cursor {
    /// Offset in the text of the next byte to encode (to resume at another offset, use
    /// [`Tokenize::encode_from`], which rebuilds the state there).
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The start of a text.
    pub const START: Cursor = Cursor {
        offset: 0,
        score: 0.0,
        after_unk: false,
        after_special: false,
    };

    /// Move to `offset`, keeping the carried state.
    #[inline]
    pub(crate) fn set_offset(&mut self, offset: usize) {
        self.offset = offset;
    }
}

/// A tokenizer family, as [`Tokenize::family`] reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// Byte-level BPE: tiktoken's ids (gpt2, cl100k_base, o200k_base, Llama 3, Qwen2, models
    /// trained by `host-trainer`).
    ByteLevelBpe,
    /// SentencePiece BPE: `sentencepiece`'s `EncodeAsIds` (Llama 2, TinyLlama, Mistral).
    SentencePieceBpe,
    /// SentencePiece Unigram: `sentencepiece`'s `EncodeAsIds` (T5-style models).
    SentencePieceUnigram,
    /// WordPiece: `tokenizers`' BERT pipeline (BERT, MiniLM).
    WordPiece,
}

/// What every tokenizer family does, with one contract (the crate docs' "API themes").
///
/// Offsets in [`EncodeError`]s are offsets in the whole text; positions in [`DecodeError`]s
/// are indexes into the whole id sequence. `specials` chooses whether special-token text is
/// recognized ([`Specials::All`]) or is ordinary text; SentencePiece models have no
/// special-token text (their user-defined symbols are always matched, as in
/// `sentencepiece`) and ignore it. A cache is caller memory kept with the tables that filled
/// it (empty: none); the ids are the same with or without it.
pub trait Tokenize: Copy {
    /// What a streaming decoder keeps between ids besides its pending text.
    type DecodeState: Clone;

    /// The family of the tables.
    fn family(&self) -> Family;

    /// Number of ids, unused ones included.
    fn n_ids(&self) -> usize;

    /// Encode `text` from `cursor` on into `out`, moving `cursor` past what was encoded;
    /// returns the number of ids written. Start each text with [`Cursor::START`].
    ///
    /// On [`EncodeError::OutputFull`] `{ consumed, written }`, `out[..written]` holds the ids
    /// of the text up to `consumed` and `cursor` stands there: drain and call again with the
    /// same text and cursor. [`EncodeError::PieceTooLong`] `{ needed, .. }`: one piece or word
    /// needs a buffer of `needed` ids; call again with one.
    fn encode_at(
        &self,
        text: &[u8],
        cursor: &mut Cursor,
        out: &mut [u32],
        specials: Specials,
        cache: &mut [CacheEntry],
    ) -> Result<usize, EncodeError>;

    /// Encode `text` from byte `from` on, where `from` is 0 or the `consumed` offset of an
    /// earlier call on the same text; what the ids there depend on (a Unigram model's running
    /// score) is rebuilt from the text before `from`. Returns the number of ids written;
    /// errors as in [`Tokenize::encode_at`]. [`Tokenize::encode_at`] with the cursor an
    /// earlier call moved costs nothing extra.
    fn encode_from(
        &self,
        text: &[u8],
        from: usize,
        out: &mut [u32],
        specials: Specials,
        cache: &mut [CacheEntry],
    ) -> Result<usize, EncodeError> {
        let mut cursor = Cursor::START;
        cursor.set_offset(from);
        self.encode_at(text, &mut cursor, out, specials, cache)
    }

    /// Encode a prefix of a stream's pending input `text`: with `is_final` false, more input
    /// may follow, and the encoder stops before the first piece or word that more input could
    /// change. `at_start`: `text` starts the whole input (no id has been written for it yet).
    /// `cursor` carries a Unigram model's running score from one call to the next (its offset
    /// is not used). Returns how far it got; `OutputFull` as in [`Tokenize::encode_at`].
    #[allow(clippy::too_many_arguments)]
    fn encode_part(
        &self,
        text: &[u8],
        at_start: bool,
        is_final: bool,
        cursor: &mut Cursor,
        out: &mut [u32],
        specials: Specials,
        cache: &mut [CacheEntry],
    ) -> Result<Progress, EncodeError>;

    /// Decode `ids` from index `from` on (0, or the `consumed` of an earlier call on the same
    /// ids) into `out`; returns the number of bytes written.
    fn decode_at(&self, ids: &[u32], from: usize, out: &mut [u8]) -> Result<usize, DecodeError>;

    /// Bytes enough to decode from `id` on into an empty buffer, whatever came before it (an
    /// upper bound); `None` for an unknown id.
    fn decode_room(&self, id: u32) -> Option<usize>;

    /// Room a streaming decoder of this family needs after a full `take` to accept `id` (an
    /// upper bound); `None` for an unknown id.
    fn stream_room(&self, id: u32) -> Option<usize>;

    /// A streaming decoder's state at the start of a sequence.
    fn decode_start(&self) -> Self::DecodeState;

    /// Append the text of `id` to a streaming decoder's `pending` text. Errors:
    /// [`DecodeError::UnknownId`] or [`DecodeError::OutputFull`] with position 0 (the
    /// decoder adds its own), and nothing appended.
    fn decode_push<const N: usize>(
        &self,
        id: u32,
        state: &mut Self::DecodeState,
        pending: &mut heapless::Vec<u8, N>,
    ) -> Result<(), DecodeError>;

    /// No more ids: append whatever `state` still holds.
    fn decode_finish<const N: usize>(
        &self,
        _state: &mut Self::DecodeState,
        _pending: &mut heapless::Vec<u8, N>,
    ) {
    }

    /// Count the ids of `text`, with `scratch` as the work area (overwritten; any length works
    /// as long as each piece fits: see [`EncodeError::PieceTooLong`]).
    fn count(
        &self,
        text: &[u8],
        scratch: &mut [u32],
        specials: Specials,
    ) -> Result<usize, EncodeError> {
        let mut cursor = Cursor::START;
        let mut total = 0usize;
        loop {
            let at = cursor.offset();
            match self.encode_at(text, &mut cursor, scratch, specials, &mut []) {
                Ok(n) => return Ok(total.saturating_add(n)),
                Err(EncodeError::OutputFull { consumed, written })
                    if consumed > at || written > 0 =>
                {
                    total = total.saturating_add(written);
                }
                Err(e) => return Err(e),
            }
        }
    }
}

/// Move `cursor` to where an encode of `text` from it ended: the end on success, `consumed`
/// on a full buffer. For families whose resume state is the offset alone.
#[inline]
pub(crate) fn advance(
    cursor: &mut Cursor,
    text_len: usize,
    r: Result<usize, EncodeError>,
) -> Result<usize, EncodeError> {
    match r {
        Ok(_) => cursor.set_offset(text_len),
        Err(EncodeError::OutputFull { consumed, .. }) => cursor.set_offset(consumed),
        Err(EncodeError::PieceTooLong { .. }) => {}
    }
    r
}

/// Append `bytes` to `pending` whole, or fail with [`no_room`].
#[inline]
pub(crate) fn append<const N: usize>(
    pending: &mut heapless::Vec<u8, N>,
    bytes: &[u8],
) -> Result<(), DecodeError> {
    pending.extend_from_slice(bytes).map_err(|_| no_room())
}

/// A position-0 `OutputFull`: a streaming decoder's pending text has no room.
#[inline]
pub(crate) fn no_room() -> DecodeError {
    DecodeError::OutputFull {
        consumed: 0,
        written: 0,
    }
}

/// A position-0 `UnknownId`.
#[inline]
pub(crate) fn unknown(id: u32) -> DecodeError {
    DecodeError::UnknownId {
        position: 0,
        id,
        written: 0,
    }
}

impl Tokenize for Tokenizer<'_> {
    type DecodeState = ();

    #[inline]
    fn family(&self) -> Family {
        Family::ByteLevelBpe
    }

    #[inline]
    fn n_ids(&self) -> usize {
        self.tables().n_ids()
    }

    /// Byte-level pieces do not depend on the text before the cursor: encoding the rest of
    /// the text continues the ids. The cursor carries only whether its offset follows a
    /// special token (a model with a prefix space puts a space there).
    #[inline]
    fn encode_at(
        &self,
        text: &[u8],
        cursor: &mut Cursor,
        out: &mut [u32],
        specials: Specials,
        cache: &mut [CacheEntry],
    ) -> Result<usize, EncodeError> {
        let from = cursor.offset().min(text.len());
        let rest = text.get(from..).unwrap_or(&[]);
        let mut section = from == 0 || cursor.after_special;
        let r = self
            .encode_part_at(rest, out, specials, true, cache, &mut section)
            .map(|p| p.written)
            .map_err(|e| e.shifted(from));
        if let Err(EncodeError::OutputFull { .. }) = r {
            cursor.after_special = section;
        }
        advance(cursor, text.len(), r)
    }

    /// As the default, with whether `from` follows a special token found by searching the
    /// text before it (only for a model with a prefix space: the others do not read it).
    fn encode_from(
        &self,
        text: &[u8],
        from: usize,
        out: &mut [u32],
        specials: Specials,
        cache: &mut [CacheEntry],
    ) -> Result<usize, EncodeError> {
        let mut cursor = Cursor::START;
        cursor.set_offset(from);
        cursor.after_special = self.tables().prefix_space
            && specials == Specials::All
            && self.ends_special(text, from);
        self.encode_at(text, &mut cursor, out, specials, cache)
    }

    #[inline]
    fn encode_part(
        &self,
        text: &[u8],
        at_start: bool,
        is_final: bool,
        cursor: &mut Cursor,
        out: &mut [u32],
        specials: Specials,
        cache: &mut [CacheEntry],
    ) -> Result<Progress, EncodeError> {
        let mut section = at_start || cursor.after_special;
        let r = self.encode_part_at(text, out, specials, is_final, cache, &mut section);
        let consumed = match r {
            Ok(p) => p.consumed,
            Err(EncodeError::OutputFull { consumed, .. }) => consumed,
            Err(EncodeError::PieceTooLong { .. }) => return r,
        };
        // Where the stream stands after dropping the consumed input.
        if consumed > 0 {
            cursor.after_special = section;
        }
        r
    }

    /// Byte-level decoding is a concatenation: `ids[from..]` decode on their own.
    #[inline]
    fn decode_at(&self, ids: &[u32], from: usize, out: &mut [u8]) -> Result<usize, DecodeError> {
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

    #[inline]
    fn decode_start(&self) {}

    #[inline]
    fn decode_push<const N: usize>(
        &self,
        id: u32,
        _state: &mut (),
        pending: &mut heapless::Vec<u8, N>,
    ) -> Result<(), DecodeError> {
        append(pending, self.token_bytes(id).ok_or(unknown(id))?)
    }
}

impl Tokenize for SpTokenizer<'_> {
    type DecodeState = SpDecodeState;

    #[inline]
    fn family(&self) -> Family {
        if self.is_unigram() {
            Family::SentencePieceUnigram
        } else {
            Family::SentencePieceBpe
        }
    }

    #[inline]
    fn n_ids(&self) -> usize {
        self.tables().n_ids()
    }

    #[inline]
    fn encode_at(
        &self,
        text: &[u8],
        cursor: &mut Cursor,
        out: &mut [u32],
        _specials: Specials,
        cache: &mut [CacheEntry],
    ) -> Result<usize, EncodeError> {
        self.encode_cursor(text, cursor, out, cache)
    }

    #[inline]
    fn encode_from(
        &self,
        text: &[u8],
        from: usize,
        out: &mut [u32],
        _specials: Specials,
        cache: &mut [CacheEntry],
    ) -> Result<usize, EncodeError> {
        self.encode_from_offset(text, from, out, cache)
    }

    #[inline]
    fn encode_part(
        &self,
        text: &[u8],
        at_start: bool,
        is_final: bool,
        cursor: &mut Cursor,
        out: &mut [u32],
        _specials: Specials,
        cache: &mut [CacheEntry],
    ) -> Result<Progress, EncodeError> {
        self.encode_stream_part(text, at_start, is_final, cursor, out, cache)
    }

    #[inline]
    fn decode_at(&self, ids: &[u32], from: usize, out: &mut [u8]) -> Result<usize, DecodeError> {
        self.decode_from(ids, from, out)
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

    /// The decoder's own test, after a full `take`: up to 3 bytes of an unfinished character
    /// stay held (9 bytes as U+FFFD); a byte piece needs room for four U+FFFD, any other
    /// piece for the longer of itself and `unk_surface`.
    #[inline]
    fn stream_room(&self, id: u32) -> Option<usize> {
        let t = self.tables();
        let kind = t.kind(id)?;
        let piece = t.piece_bytes(id)?.len();
        Some(if kind == PieceKind::Byte {
            12
        } else {
            piece.max(t.unk_surface.len()).saturating_add(9)
        })
    }

    #[inline]
    fn decode_start(&self) -> SpDecodeState {
        SpDecodeState::START
    }

    #[inline]
    fn decode_push<const N: usize>(
        &self,
        id: u32,
        state: &mut SpDecodeState,
        pending: &mut heapless::Vec<u8, N>,
    ) -> Result<(), DecodeError> {
        state.push(self.tables(), id, pending)
    }

    #[inline]
    fn decode_finish<const N: usize>(
        &self,
        state: &mut SpDecodeState,
        pending: &mut heapless::Vec<u8, N>,
    ) {
        state.drain_bytes(true, pending);
    }
}

impl Tokenize for WpTokenizer<'_> {
    /// Whether no word has been written yet (the first gets no space before it).
    type DecodeState = bool;

    #[inline]
    fn family(&self) -> Family {
        Family::WordPiece
    }

    #[inline]
    fn n_ids(&self) -> usize {
        self.tables().n_ids()
    }

    #[inline]
    fn encode_at(
        &self,
        text: &[u8],
        cursor: &mut Cursor,
        out: &mut [u32],
        specials: Specials,
        _cache: &mut [CacheEntry],
    ) -> Result<usize, EncodeError> {
        let r = self.encode_from(text, cursor.offset(), out, specials);
        advance(cursor, text.len(), r)
    }

    #[inline]
    fn encode_part(
        &self,
        text: &[u8],
        _at_start: bool,
        is_final: bool,
        _cursor: &mut Cursor,
        out: &mut [u32],
        specials: Specials,
        _cache: &mut [CacheEntry],
    ) -> Result<Progress, EncodeError> {
        WpTokenizer::encode_part(self, text, is_final, out, specials)
    }

    /// Only whether a word came before `from` matters (the first word gets no space).
    #[inline]
    fn decode_at(&self, ids: &[u32], from: usize, out: &mut [u8]) -> Result<usize, DecodeError> {
        let (before, rest) = ids.split_at(from.min(ids.len()));
        let first = !before.iter().rev().any(|&id| !self.tables().is_special(id));
        self.decode_ids(rest, first, out)
            .map_err(|e| e.shifted(before.len()))
    }

    /// A space and the token (the clean-up only shortens).
    #[inline]
    fn decode_room(&self, id: u32) -> Option<usize> {
        self.tables()
            .token_bytes(id)
            .map(|b| b.len().saturating_add(1))
    }

    /// The pending text is whole characters, so a full `take` empties it.
    #[inline]
    fn stream_room(&self, id: u32) -> Option<usize> {
        self.decode_room(id)
    }

    #[inline]
    fn decode_start(&self) -> bool {
        true
    }

    #[inline]
    fn decode_push<const N: usize>(
        &self,
        id: u32,
        first: &mut bool,
        pending: &mut heapless::Vec<u8, N>,
    ) -> Result<(), DecodeError> {
        self.decode_one(id, first, pending)
    }
}

/// A tokenizer of any family: the facade for code that loads a model at run time. Each call
/// matches on the family once and runs that family's code.
#[derive(Clone, Copy)]
pub enum AnyTokenizer<'t> {
    /// Byte-level BPE.
    ByteLevel(Tokenizer<'t>),
    /// SentencePiece BPE or Unigram.
    SentencePiece(SpTokenizer<'t>),
    /// WordPiece.
    WordPiece(WpTokenizer<'t>),
}

impl<'t> From<Tokenizer<'t>> for AnyTokenizer<'t> {
    fn from(t: Tokenizer<'t>) -> Self {
        AnyTokenizer::ByteLevel(t)
    }
}

impl<'t> From<SpTokenizer<'t>> for AnyTokenizer<'t> {
    fn from(t: SpTokenizer<'t>) -> Self {
        AnyTokenizer::SentencePiece(t)
    }
}

impl<'t> From<WpTokenizer<'t>> for AnyTokenizer<'t> {
    fn from(t: WpTokenizer<'t>) -> Self {
        AnyTokenizer::WordPiece(t)
    }
}

/// A streaming decoder's state for an [`AnyTokenizer`]: its family's state.
#[derive(Clone, Debug)]
pub enum AnyDecodeState {
    /// Byte-level BPE keeps nothing.
    ByteLevel,
    /// SentencePiece's state.
    SentencePiece(SpDecodeState),
    /// WordPiece's state.
    WordPiece(bool),
}

/// Run `$body` with `$t` bound to the family tokenizer inside an [`AnyTokenizer`].
macro_rules! each {
    ($any:expr, $t:ident => $body:expr) => {
        match $any {
            AnyTokenizer::ByteLevel($t) => $body,
            AnyTokenizer::SentencePiece($t) => $body,
            AnyTokenizer::WordPiece($t) => $body,
        }
    };
}

impl Tokenize for AnyTokenizer<'_> {
    type DecodeState = AnyDecodeState;

    fn family(&self) -> Family {
        each!(self, t => t.family())
    }

    fn n_ids(&self) -> usize {
        each!(self, t => t.n_ids())
    }

    fn encode_at(
        &self,
        text: &[u8],
        cursor: &mut Cursor,
        out: &mut [u32],
        specials: Specials,
        cache: &mut [CacheEntry],
    ) -> Result<usize, EncodeError> {
        each!(self, t => t.encode_at(text, cursor, out, specials, cache))
    }

    fn encode_from(
        &self,
        text: &[u8],
        from: usize,
        out: &mut [u32],
        specials: Specials,
        cache: &mut [CacheEntry],
    ) -> Result<usize, EncodeError> {
        each!(self, t => Tokenize::encode_from(t, text, from, out, specials, cache))
    }

    fn encode_part(
        &self,
        text: &[u8],
        at_start: bool,
        is_final: bool,
        cursor: &mut Cursor,
        out: &mut [u32],
        specials: Specials,
        cache: &mut [CacheEntry],
    ) -> Result<Progress, EncodeError> {
        each!(self, t => Tokenize::encode_part(t, text, at_start, is_final, cursor, out, specials, cache))
    }

    fn decode_at(&self, ids: &[u32], from: usize, out: &mut [u8]) -> Result<usize, DecodeError> {
        each!(self, t => t.decode_at(ids, from, out))
    }

    fn decode_room(&self, id: u32) -> Option<usize> {
        each!(self, t => t.decode_room(id))
    }

    fn stream_room(&self, id: u32) -> Option<usize> {
        each!(self, t => t.stream_room(id))
    }

    fn decode_start(&self) -> AnyDecodeState {
        match self {
            AnyTokenizer::ByteLevel(_) => AnyDecodeState::ByteLevel,
            AnyTokenizer::SentencePiece(t) => AnyDecodeState::SentencePiece(t.decode_start()),
            AnyTokenizer::WordPiece(t) => AnyDecodeState::WordPiece(t.decode_start()),
        }
    }

    fn decode_push<const N: usize>(
        &self,
        id: u32,
        state: &mut AnyDecodeState,
        pending: &mut heapless::Vec<u8, N>,
    ) -> Result<(), DecodeError> {
        match (self, state) {
            (AnyTokenizer::ByteLevel(t), _) => t.decode_push(id, &mut (), pending),
            (AnyTokenizer::SentencePiece(t), AnyDecodeState::SentencePiece(s)) => {
                t.decode_push(id, s, pending)
            }
            (AnyTokenizer::WordPiece(t), AnyDecodeState::WordPiece(s)) => {
                t.decode_push(id, s, pending)
            }
            // A state of another family (not from this tokenizer's `decode_start`): start
            // over with this family's.
            (t, state) => {
                *state = t.decode_start();
                t.decode_push(id, state, pending)
            }
        }
    }

    fn decode_finish<const N: usize>(
        &self,
        state: &mut AnyDecodeState,
        pending: &mut heapless::Vec<u8, N>,
    ) {
        if let (AnyTokenizer::SentencePiece(t), AnyDecodeState::SentencePiece(s)) = (self, state) {
            t.decode_finish(s, pending);
        }
    }
}
