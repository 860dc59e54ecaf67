//! The exported functions and types of the C API. The including crate provides
//! `crate::model` (`model.rs`), the type `crate::CApiModel` (the tokenizer of its family, a
//! [`picobpe::Tokenize`]) and `crate::c_api_model()`: `picobpe-capi` over its baked tables,
//! `panic-check/` over opaque ones (so the panic-freedom proof covers this file).

use core::ffi::c_void;
use core::mem::{align_of, size_of};
use core::ptr;

use picobpe::{
    CacheEntry, DecodeError, EncodeError, SpTokenizer, Specials, StreamDecoder, StreamEncoder,
    StreamError, Tokenize, Tokenizer, WpTokenizer,
};

pub use crate::model::PicobpeFamily;

// The tokenizer type of the model the library serves, and the model.
use crate::{c_api_model as model, CApiModel as Model};

/// What a call did.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PicobpeStatus {
    /// Done: all of the input was processed.
    Ok = 0,
    /// The output buffer is full: `progress.written` elements are valid and the input up to
    /// `progress.consumed` is done; drain and call again from there.
    OutputFull = 1,
    /// One piece (for decode: one token) needs more room than the whole output buffer (none
    /// of the call's output is to be used: `progress.written` is 0): call again from
    /// `progress.consumed` (encode: where the call started; decode: the token's index; count:
    /// 0) with an output buffer of at least `progress.needed` elements.
    PieceTooLong = 2,
    /// Decode: `ids[progress.consumed]` is not an id of the model; `progress.written` bytes of
    /// the ids before it are in the output.
    UnknownId = 3,
    /// A null pointer with a non-zero length, or a null `progress`; for the streaming
    /// functions also a state that is null, misaligned or zeroed (never initialized: static
    /// storage before its `_init`), and a push after `_finish`.
    InvalidArgument = 4,
    /// Stream encoder: the pending input cannot be split within
    /// `PICOBPE_STREAM_INPUT_CAPACITY` bytes (one piece, or a whitespace run with the character
    /// after it, is longer). The stream cannot go on: encode this text with `picobpe_encode`.
    InputTooSmall = 5,
}

/// How far a call got (see `PicobpeStatus` for what each field means with each status).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PicobpeProgress {
    /// Input elements done: bytes of text for encode and count, ids for decode.
    pub consumed: usize,
    /// Output elements written: ids for encode, bytes for decode; for count, the number of
    /// ids counted.
    pub written: usize,
    /// With `PICOBPE_STATUS_PIECE_TOO_LONG`: the output buffer length that is enough.
    pub needed: usize,
}

/// `len` elements at `ptr` as a slice (empty for a length of 0, whatever the pointer).
///
/// # Safety
/// A non-null `ptr` must point to `len` readable elements.
unsafe fn input<'a, T>(ptr: *const T, len: usize) -> Option<&'a [T]> {
    match len {
        0 => Some(&[]),
        // SAFETY: non-null and, by the caller's contract, `len` readable elements.
        _ => (!ptr.is_null()).then(|| unsafe { core::slice::from_raw_parts(ptr, len) }),
    }
}

/// `len` elements at `ptr` as a mutable slice (empty for a length of 0).
///
/// # Safety
/// A non-null `ptr` must point to `len` writable elements that nothing else accesses.
unsafe fn output<'a, T>(ptr: *mut T, len: usize) -> Option<&'a mut [T]> {
    match len {
        0 => Some(&mut []),
        // SAFETY: non-null and, by the caller's contract, `len` writable, unaliased elements.
        _ => (!ptr.is_null()).then(|| unsafe { core::slice::from_raw_parts_mut(ptr, len) }),
    }
}

/// Special tokens recognized (`true`) or encoded as text.
fn specials(allow_special: bool) -> Specials {
    if allow_special {
        Specials::All
    } else {
        Specials::None
    }
}

/// The status and progress of an encode result of a call on `len` bytes that started at byte
/// `from` with an output buffer of `cap` ids. A piece too long for the buffer is reported where
/// the call started: no id of the call is to be used, and a SentencePiece word's offset may lie
/// after text (spaces) that belongs to it, so the retry with a larger buffer starts there.
fn encode_result(
    r: Result<usize, EncodeError>,
    len: usize,
    from: usize,
    cap: usize,
) -> (PicobpeStatus, PicobpeProgress) {
    let start = from.min(len);
    match r {
        // No progress at all (an empty buffer, or one too small for a SentencePiece
        // user-defined symbol): draining cannot help, a larger buffer can.
        Err(EncodeError::OutputFull {
            consumed,
            written: 0,
        }) if consumed <= start => (
            PicobpeStatus::PieceTooLong,
            too_long(start, cap.saturating_add(1)),
        ),
        Ok(n) => (PicobpeStatus::Ok, moved(len, n)),
        Err(EncodeError::OutputFull { consumed, written }) => {
            (PicobpeStatus::OutputFull, moved(consumed, written))
        }
        Err(EncodeError::PieceTooLong { needed, .. }) => {
            (PicobpeStatus::PieceTooLong, too_long(start, needed))
        }
    }
}

/// Run `call` and write the progress it returns to `progress`, returning its status:
/// `PICOBPE_STATUS_INVALID_ARGUMENT` when `call` finds an argument invalid (`None`), and, without
/// running `call`, for a null `progress`.
///
/// # Safety
/// `progress` must be null or point to a writable `PicobpeProgress` that `call` does not access.
unsafe fn reported(
    progress: *mut PicobpeProgress,
    call: impl FnOnce() -> Option<(PicobpeStatus, PicobpeProgress)>,
) -> PicobpeStatus {
    // SAFETY: by the caller's contract, a non-null `progress` is writable.
    let Some(p) = (unsafe { progress.as_mut() }) else {
        return PicobpeStatus::InvalidArgument;
    };
    call().map_or(PicobpeStatus::InvalidArgument, |(status, value)| {
        *p = value;
        status
    })
}

/// Number of ids of the baked model, holes and special tokens included: every id the encoder
/// writes is below it (a model may leave ids unused, as cl100k_base does; decode reports
/// those with `PICOBPE_STATUS_UNKNOWN_ID`).
#[no_mangle]
pub extern "C" fn picobpe_vocab_size() -> usize {
    Tokenize::n_ids(&model())
}

/// The tokenizer family of the baked model (what `picobpe_encode` and `picobpe_decode`
/// follow: tiktoken's or sentencepiece's ids).
#[no_mangle]
pub extern "C" fn picobpe_model_family() -> PicobpeFamily {
    PicobpeFamily::from(Tokenize::family(&model()))
}

/// Encode `text[0..len]` into `out[0..cap]`: the ids of the model's reference library
/// (`picobpe_model_family`): tiktoken's for a byte-level model, with its special tokens
/// recognized when `allow_special` is true (tiktoken's `allowed_special="all"`) and encoded as
/// ordinary text otherwise; sentencepiece's `EncodeAsIds` for a SentencePiece model
/// (`allow_special` has no effect: no `<s>`/`</s>` is added, user-defined symbols are always
/// recognized); tokenizers' `encode(text, add_special_tokens=False)` for a WordPiece model,
/// its added tokens (`[CLS]`, `[SEP]`, ...) recognized in the text when `allow_special` is
/// true. Invalid UTF-8 is accepted.
///
/// `PICOBPE_STATUS_OUTPUT_FULL`: `out[0..progress.written]` holds the ids of
/// `text[0..progress.consumed]`; drain them and continue with
/// `picobpe_encode_from(text, len, progress.consumed, ...)` (for a byte-level model,
/// `picobpe_encode(text + progress.consumed, ...)` is the same).
/// `PICOBPE_STATUS_PIECE_TOO_LONG`: one piece (a SentencePiece word) needs an output buffer
/// of `progress.needed` ids, and none of the call's ids is to be used; call again from
/// `progress.consumed` (where this call started) with one that large.
///
/// # Safety
/// `text` must point to `len` readable bytes, `out` to `cap` writable `uint32_t`, `progress`
/// to a writable `PicobpeProgress` (pointers may be null only with a length of 0); the three
/// must not overlap.
#[no_mangle]
pub unsafe extern "C" fn picobpe_encode(
    text: *const u8,
    len: usize,
    allow_special: bool,
    out: *mut u32,
    cap: usize,
    progress: *mut PicobpeProgress,
) -> PicobpeStatus {
    // SAFETY: the caller's contract above.
    unsafe { picobpe_encode_from(text, len, 0, allow_special, out, cap, progress) }
}

/// `picobpe_encode` of `text[0..len]` from byte `from` on, where `from` is 0 or the
/// `progress.consumed` of an earlier call on the same text (a SentencePiece encode depends on
/// the text before it; a Unigram model re-reads the text before `from` to carry its score on,
/// so resume with buffers that are not tiny). `progress.consumed` is an offset in `text`. A
/// `from` past `len` encodes nothing.
///
/// # Safety
/// As `picobpe_encode`.
#[no_mangle]
pub unsafe extern "C" fn picobpe_encode_from(
    text: *const u8,
    len: usize,
    from: usize,
    allow_special: bool,
    out: *mut u32,
    cap: usize,
    progress: *mut PicobpeProgress,
) -> PicobpeStatus {
    // SAFETY: the caller's contract above.
    unsafe {
        reported(progress, || {
            let (text, out) = (input(text, len)?, output(out, cap)?);
            let r =
                Tokenize::encode_from(&model(), text, from, out, specials(allow_special), &mut []);
            Some(encode_result(r, len, from, cap))
        })
    }
}

/// Count the ids `text[0..len]` encodes to, using `scratch[0..cap]` as the work area; the
/// count is `progress.written`. Any scratch length works as long as each piece fits: on
/// `PICOBPE_STATUS_PIECE_TOO_LONG` (`progress.consumed` is 0), count the whole text again
/// with a scratch of `progress.needed` ids.
///
/// # Safety
/// As `picobpe_encode`, with `scratch` in place of `out`.
#[no_mangle]
pub unsafe extern "C" fn picobpe_count(
    text: *const u8,
    len: usize,
    allow_special: bool,
    scratch: *mut u32,
    cap: usize,
    progress: *mut PicobpeProgress,
) -> PicobpeStatus {
    // SAFETY: the caller's contract above.
    unsafe {
        reported(progress, || {
            let (text, scratch) = (input(text, len)?, output(scratch, cap)?);
            let r = Tokenize::count(&model(), text, scratch, specials(allow_special));
            Some(encode_result(r, len, 0, cap))
        })
    }
}

/// Decode `ids[0..n]` into `out[0..cap]`: the bytes the ids stand for (not necessarily UTF-8)
/// for a byte-level model, sentencepiece's `DecodeIds` for a SentencePiece model, tokenizers'
/// `decode(ids)` (added tokens skipped, the decoder's clean-up) for a WordPiece model.
///
/// `PICOBPE_STATUS_OUTPUT_FULL`: `out[0..progress.written]` holds the text of the first
/// `progress.consumed` ids; drain it and continue with
/// `picobpe_decode_from(ids, n, progress.consumed, ...)`. `PICOBPE_STATUS_PIECE_TOO_LONG`: the
/// token `ids[progress.consumed]` needs up to `progress.needed` bytes, more than `cap`
/// (nothing was written); continue from there with a buffer of at least that.
/// `PICOBPE_STATUS_UNKNOWN_ID`: `ids[progress.consumed]` is not an id of the model, and
/// `progress.written` bytes of the ids before it are in `out`.
///
/// # Safety
/// `ids` must point to `n` readable `uint32_t`, `out` to `cap` writable bytes, `progress` to a
/// writable `PicobpeProgress` (pointers may be null only with a length of 0); the three must
/// not overlap.
#[no_mangle]
pub unsafe extern "C" fn picobpe_decode(
    ids: *const u32,
    n: usize,
    out: *mut u8,
    cap: usize,
    progress: *mut PicobpeProgress,
) -> PicobpeStatus {
    // SAFETY: the caller's contract above.
    unsafe { picobpe_decode_from(ids, n, 0, out, cap, progress) }
}

/// `picobpe_decode` of `ids[0..n]` from index `from` on, where `from` is 0 or the
/// `progress.consumed` of an earlier call on the same ids (a SentencePiece decode drops the
/// leading space of the first word only). `progress.consumed` is an index into `ids`. For a
/// byte-level model, `picobpe_decode(ids + from, n - from, ...)` is the same.
///
/// # Safety
/// As `picobpe_decode`.
#[no_mangle]
pub unsafe extern "C" fn picobpe_decode_from(
    ids: *const u32,
    n: usize,
    from: usize,
    out: *mut u8,
    cap: usize,
    progress: *mut PicobpeProgress,
) -> PicobpeStatus {
    // SAFETY: the caller's contract above.
    unsafe {
        reported(progress, || {
            let (ids, out) = (input(ids, n)?, output(out, cap)?);
            let m = model();
            Some(match Tokenize::decode_at(&m, ids, from, out) {
                Ok(written) => (PicobpeStatus::Ok, moved(n, written)),
                // Nothing fits an empty buffer: the next token alone is longer than it, and
                // draining cannot help.
                Err(DecodeError::OutputFull {
                    consumed,
                    written: 0,
                }) => {
                    let room = ids
                        .get(consumed)
                        .and_then(|&id| Tokenize::decode_room(&m, id));
                    let needed = room
                        .filter(|&room| room > cap)
                        .unwrap_or(cap.saturating_add(1));
                    (PicobpeStatus::PieceTooLong, too_long(consumed, needed))
                }
                Err(DecodeError::OutputFull { consumed, written }) => {
                    (PicobpeStatus::OutputFull, moved(consumed, written))
                }
                Err(DecodeError::UnknownId {
                    position, written, ..
                }) => (PicobpeStatus::UnknownId, moved(position, written)),
            })
        })
    }
}

/// Progress of a call that consumed `consumed` input elements and wrote `written`.
fn moved(consumed: usize, written: usize) -> PicobpeProgress {
    PicobpeProgress {
        consumed,
        written,
        needed: 0,
    }
}

/// Progress of a call stopped at `consumed` by a piece (or token) that needs an output buffer
/// of `needed` elements; nothing written.
fn too_long(consumed: usize, needed: usize) -> PicobpeProgress {
    PicobpeProgress {
        consumed,
        written: 0,
        needed,
    }
}

/// `picobpe_encode_from` (the same ids, statuses and resume contract; `from` 0 for a new
/// text) with a cache in `cache[0..cache_bytes]`: byte-level pieces, or SentencePiece words,
/// seen before, in this call or an earlier one with the same cache, are answered from it.
///
/// The cache is the `PICOBPE_CACHE_LINE_SIZE`-byte lines that lie at 64-byte-aligned
/// addresses in `cache[0..cache_bytes]` (a buffer that is not 64-byte aligned loses up to 63
/// bytes); more lines remember more of a text's distinct pieces (`host-trainer encode` uses
/// 1 MiB on the host). Before its first use, set every byte of it to zero (static storage is; or
/// `memset`): a zeroed cache is empty. Then keep it for this library's calls only: pass it
/// to `picobpe_encode_cached` and nothing else writes it. A null `cache` with
/// `cache_bytes` 0, or fewer than one line, encodes without a cache. (A SentencePiece BPE
/// model without byte fallback does not use it, nor a Unigram model imported from a
/// `tokenizer.json`.)
///
/// # Safety
/// As `picobpe_encode`; `cache` must point to `cache_bytes` readable and writable bytes that
/// nothing else accesses during the call and that are zero or as an earlier call left them.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn picobpe_encode_cached(
    text: *const u8,
    len: usize,
    from: usize,
    allow_special: bool,
    cache: *mut c_void,
    cache_bytes: usize,
    out: *mut u32,
    cap: usize,
    progress: *mut PicobpeProgress,
) -> PicobpeStatus {
    // SAFETY: the caller's contract above.
    unsafe {
        reported(progress, || {
            let (text, out) = (input(text, len)?, output(out, cap)?);
            let cache = cache_lines(cache.cast::<u8>(), cache_bytes)?;
            let r =
                Tokenize::encode_from(&model(), text, from, out, specials(allow_special), cache);
            Some(encode_result(r, len, from, cap))
        })
    }
}

/// The bytes of one line of `picobpe_encode_cached`'s cache (lines start at addresses that
/// are multiples of it).
pub const PICOBPE_CACHE_LINE_SIZE: usize = 64;

const _: () = assert!(size_of::<CacheEntry>() == PICOBPE_CACHE_LINE_SIZE);
const _: () = assert!(align_of::<CacheEntry>() == PICOBPE_CACHE_LINE_SIZE);

/// The aligned cache lines in `bytes` bytes at `mem` (none for a length of 0 or a buffer too
/// short to hold an aligned line; `None` for a null `mem` with a non-zero length).
///
/// # Safety
/// A non-null `mem` must point to `bytes` readable and writable, initialized bytes that
/// nothing else accesses.
unsafe fn cache_lines<'a>(mem: *mut u8, bytes: usize) -> Option<&'a mut [CacheEntry]> {
    // SAFETY: the caller's contract.
    let mem = unsafe { output(mem, bytes) }?;
    // SAFETY: a line is plain integers (keys and ids), so every initialized bit pattern is a
    // valid `CacheEntry`, and all zeros is `CacheEntry::EMPTY`. (`align_to_mut` may in
    // principle hand out fewer lines than fit: then the cache is only smaller.)
    Some(unsafe { mem.align_to_mut::<CacheEntry>() }.1)
}

/// Bytes of pending input a stream encoder holds (its `IN`). Byte-level models: enough for
/// every piece of up to `PICOBPE_STREAM_INPUT_CAPACITY - 64` bytes (the rest is room for what
/// decides where a piece ends: the character after it, or a partial special token); a longer
/// piece may give `PICOBPE_STATUS_INPUT_TOO_SMALL`, one of more than
/// `PICOBPE_STREAM_INPUT_CAPACITY` bytes does. SentencePiece models: likewise for a word and
/// the start of the next (a model whose words cannot be encoded apart holds all of its input
/// until `finish`, so it streams texts of up to this many bytes). WordPiece models: ids come
/// out up to the last ASCII whitespace, so a run of this many bytes without one (or a text of
/// this many bytes with a partial added token at its end) gives `PICOBPE_STATUS_INPUT_TOO_SMALL`.
pub const PICOBPE_STREAM_INPUT_CAPACITY: usize = 256;

/// Ids a stream encoder holds between `take`s (its `OUT`): for a byte-level model, the work
/// area that merging a piece of `PICOBPE_STREAM_INPUT_CAPACITY` bytes needs, so no piece that
/// fits the input is too long for it. A SentencePiece word may need more
/// (`PICOBPE_STATUS_PIECE_TOO_LONG`): BPE merges in 11 to 14 ids per character, so a word of
/// more than about 40 characters; a Unigram word of more than 64 normalized bytes on a
/// 32-bit target (512 on a 64-bit one) keeps its lattice there, 4 ids per byte.
pub const PICOBPE_STREAM_ID_CAPACITY: usize = 512;

/// Bytes a stream decoder holds (its `N`): a token of up to this minus 3 bytes (every token of
/// gpt2, cl100k_base and o200k_base; every SentencePiece piece of up to 64 bytes) always fits
/// after a `take`.
pub const PICOBPE_STREAM_DECODER_CAPACITY: usize = 256;

/// The size of `PicobpeStreamEncoder` in 8-byte words: 2432 bytes, for a state of at most
/// 2392 bytes (checked at compile time for both families), with room to spare.
pub const PICOBPE_STREAM_ENCODER_WORDS: usize = 304;

/// The size of `PicobpeStreamDecoder` in 8-byte words: 336 bytes (its state's size is checked
/// at compile time for both families).
pub const PICOBPE_STREAM_DECODER_WORDS: usize = 42;

/// Storage for a streaming encoder, owned by the caller (static, stack or heap): opaque, of a
/// fixed size and `uint64_t`'s alignment, set up by `picobpe_stream_encoder_init`. Before that
/// it must be zeroed (static storage is; or `memset`), never left uninitialized: the other
/// calls refuse a zeroed state. It holds no pointer into itself, so it may be copied byte for
/// byte within the running program (it points at the library's tables, so not across a
/// firmware update).
#[repr(C)]
pub struct PicobpeStreamEncoder {
    /// Opaque: written by `picobpe_stream_encoder_init` and the calls that use the stream.
    opaque: [u64; PICOBPE_STREAM_ENCODER_WORDS],
}

/// Storage for a streaming decoder, owned by the caller: as `PicobpeStreamEncoder` (zeroed or
/// set up by `picobpe_stream_decoder_init`).
#[repr(C)]
pub struct PicobpeStreamDecoder {
    /// Opaque: written by `picobpe_stream_decoder_init` and the calls that use the stream.
    opaque: [u64; PICOBPE_STREAM_DECODER_WORDS],
}

/// The model's streaming encoder (with the capacities above), or that of tokenizer `T`.
type Encoder<T = Model> =
    StreamEncoder<T, PICOBPE_STREAM_INPUT_CAPACITY, PICOBPE_STREAM_ID_CAPACITY>;

/// The model's streaming decoder (with the capacity above), or that of tokenizer `T`.
type Decoder<T = Model> = StreamDecoder<T, PICOBPE_STREAM_DECODER_CAPACITY>;

// `model.rs` builds the streams with the capacities the header names.

/// What a `PicobpeStreamEncoder` (`T` = `Encoder`) or `PicobpeStreamDecoder` (`Decoder`)
/// holds: a tag that says its `_init` function wrote it, and the stream.
#[repr(C)]
struct State<T> {
    tag: u32,
    stream: T,
}

/// The tag of an initialized encoder state ("pbEN"): a zeroed state (static storage before its
/// `_init`), or a decoder's, is refused rather than read as a stream.
const ENCODER_TAG: u32 = 0x7062_454e;
/// The tag of an initialized decoder state ("pbDE").
const DECODER_TAG: u32 = 0x7062_4445;

/// Whether the header's encoder and decoder storage holds the states of tokenizer `T`'s
/// streams.
const fn fits<T: Tokenize>() -> bool {
    size_of::<State<Encoder<T>>>() <= size_of::<PicobpeStreamEncoder>()
        && align_of::<State<Encoder<T>>>() <= align_of::<PicobpeStreamEncoder>()
        && size_of::<State<Decoder<T>>>() <= size_of::<PicobpeStreamDecoder>()
        && align_of::<State<Decoder<T>>>() <= align_of::<PicobpeStreamDecoder>()
}

// The header's sizes and alignments hold the states of every family on every target (so the
// header does not depend on the model baked), and no byte-level piece that fits the input
// capacity is too long for the id capacity.
const _: () = assert!(
    fits::<Model>()
        && fits::<Tokenizer<'static>>()
        && fits::<SpTokenizer<'static>>()
        && fits::<WpTokenizer<'static>>()
);
const _: () = assert!(
    picobpe::bytelevel::scratch_needed(PICOBPE_STREAM_INPUT_CAPACITY) <= PICOBPE_STREAM_ID_CAPACITY
);

/// The caller's storage `state` as a `State<T>`, when it is non-null and aligned for it.
fn state_ptr<S, T>(state: *const S) -> Option<*mut State<T>> {
    let p = state.cast_mut().cast::<State<T>>();
    (!p.is_null() && p.is_aligned()).then_some(p)
}

/// Initialize the caller's storage `state` with `tag` and the stream `make` returns;
/// `PICOBPE_STATUS_INVALID_ARGUMENT` (and nothing written) when `state` is null or misaligned. The stream is made after the
/// check and written field by field; `make` returns it by value, so the optimiser builds it in
/// a stack temporary first (about 2.4 KiB for the encoder at `opt-level = 3`).
///
/// # Safety
/// A non-null `state` must point to storage at least as large as `State<T>` (the assertions
/// above) that is writable and that nothing else accesses.
unsafe fn init<S, T>(state: *mut S, tag: u32, make: impl FnOnce() -> T) -> PicobpeStatus {
    // SAFETY: non-null, aligned, large enough and, by the caller's contract, writable and
    // unaliased; nothing of the old contents is read.
    status(state_ptr::<S, T>(state).map(|s| unsafe {
        ptr::addr_of_mut!((*s).stream).write(make());
        ptr::addr_of_mut!((*s).tag).write(tag);
    }))
}

/// The stream in the caller's storage `state`, when `state` is non-null, aligned and carries
/// `tag` (so its `_init` function wrote a `State<T>` there).
///
/// # Safety
/// A non-null `state` must point to readable storage at least as large as `State<T>`.
unsafe fn stream_ptr<S, T>(state: *const S, tag: u32) -> Option<*mut T> {
    let s = state_ptr::<S, T>(state)?;
    // SAFETY: `s` is non-null, aligned and points into the caller's storage, whose first word
    // is readable; the stream is pointed to only when the tag says `_init` wrote it.
    unsafe {
        if ptr::addr_of!((*s).tag).read() != tag {
            return None;
        }
        Some(ptr::addr_of_mut!((*s).stream))
    }
}

/// The encoder in `state`, when `state` is non-null, aligned and initialized.
///
/// # Safety
/// A non-null `state` must point to a `PicobpeStreamEncoder` that nothing else accesses.
unsafe fn encoder<'a>(state: *mut PicobpeStreamEncoder) -> Option<&'a mut Encoder> {
    // SAFETY: the caller's contract; the tag says the storage holds an initialized encoder.
    unsafe { stream_ptr::<_, Encoder>(state, ENCODER_TAG).map(|p| &mut *p) }
}

/// The decoder in `state` (see `encoder`).
///
/// # Safety
/// A non-null `state` must point to a `PicobpeStreamDecoder` that nothing else accesses.
unsafe fn decoder<'a>(state: *mut PicobpeStreamDecoder) -> Option<&'a mut Decoder> {
    // SAFETY: as in `encoder`.
    unsafe { stream_ptr::<_, Decoder>(state, DECODER_TAG).map(|p| &mut *p) }
}

/// `PICOBPE_STATUS_OK` for a call made on a stream (`Some`), `PICOBPE_STATUS_INVALID_ARGUMENT`
/// when there was no initialized stream to make it on.
fn status(call: Option<()>) -> PicobpeStatus {
    call.map_or(PicobpeStatus::InvalidArgument, |()| PicobpeStatus::Ok)
}

/// The status and progress of a streaming encoder's error.
fn stream_error(e: StreamError) -> (PicobpeStatus, PicobpeProgress) {
    match e {
        StreamError::InputTooSmall { .. } => (PicobpeStatus::InputTooSmall, moved(0, 0)),
        StreamError::PieceTooLong { needed, .. } => {
            (PicobpeStatus::PieceTooLong, too_long(0, needed))
        }
        StreamError::Finished => (PicobpeStatus::InvalidArgument, moved(0, 0)),
    }
}

/// Set up a streaming encoder in `state` (any previous contents are overwritten, nothing is
/// freed), with the model's special tokens recognized when `allow_special` is true (a
/// SentencePiece model has no such switch). Its ids equal `picobpe_encode`'s of all the text
/// pushed, however it is cut into chunks.
///
/// The calls, in this order: `picobpe_stream_encoder_push` text, taking ids with
/// `picobpe_stream_encoder_take` whenever a push returns `PICOBPE_STATUS_OUTPUT_FULL` (and
/// whenever you want ids early); then `picobpe_stream_encoder_finish`, and `take` until it
/// writes fewer than `cap` (> 0) ids (`picobpe_stream_encoder_is_done` is then true).
///
/// The call itself needs stack for one copy of the state while it builds it (about 2.4 KiB
/// on Cortex-M).
///
/// # Safety
/// `state` must be null or point to a writable `PicobpeStreamEncoder` that nothing else
/// accesses during the call. Null or misaligned: `PICOBPE_STATUS_INVALID_ARGUMENT`.
#[no_mangle]
pub unsafe extern "C" fn picobpe_stream_encoder_init(
    state: *mut PicobpeStreamEncoder,
    allow_special: bool,
) -> PicobpeStatus {
    let specials = specials(allow_special);
    // SAFETY: the caller's contract above.
    unsafe { init(state, ENCODER_TAG, || Encoder::new(model(), specials)) }
}

/// Add `chunk[0..len]` to the stream's pending input: as much as fits in its
/// `PICOBPE_STREAM_INPUT_CAPACITY` bytes. `progress.consumed` is the number of bytes
/// accepted.
///
/// `PICOBPE_STATUS_OK`: all of it was accepted. `PICOBPE_STATUS_OUTPUT_FULL`: the pending input
/// is full; `take` ids (which encodes pending input and frees room), then push
/// `chunk + progress.consumed` again. `PICOBPE_STATUS_INVALID_ARGUMENT`: a null or zeroed
/// (never initialized) state, a null `chunk` with a non-zero `len`, a null `progress`, or a
/// push after `finish`; nothing was accepted.
///
/// # Safety
/// `state` must point to a `PicobpeStreamEncoder` that nothing else accesses during the call
/// (null or zeroed: refused, see above), `chunk` to `len` readable bytes, `progress` to a
/// writable `PicobpeProgress`.
#[no_mangle]
pub unsafe extern "C" fn picobpe_stream_encoder_push(
    state: *mut PicobpeStreamEncoder,
    chunk: *const u8,
    len: usize,
    progress: *mut PicobpeProgress,
) -> PicobpeStatus {
    // SAFETY: the caller's contract above.
    unsafe {
        reported(progress, || {
            Some(match encoder(state)?.push(input(chunk, len)?) {
                Ok(n) if n < len => (PicobpeStatus::OutputFull, moved(n, 0)),
                Ok(n) => (PicobpeStatus::Ok, moved(n, 0)),
                Err(e) => stream_error(e),
            })
        })
    }
}

/// Mark the end of the input: `take` then encodes and hands out everything left.
///
/// # Safety
/// `state` must point to a `PicobpeStreamEncoder` that nothing else accesses during the call
/// (null or zeroed: `PICOBPE_STATUS_INVALID_ARGUMENT`).
#[no_mangle]
pub unsafe extern "C" fn picobpe_stream_encoder_finish(
    state: *mut PicobpeStreamEncoder,
) -> PicobpeStatus {
    // SAFETY: the caller's contract above.
    status(unsafe { encoder(state) }.map(|stream| stream.finish()))
}

/// Move final ids into `out[0..cap]`; `progress.written` is their number. Ids are final once
/// no later input can change them (before `finish`, the last piece and a possible start of a
/// special token wait for more input).
///
/// `PICOBPE_STATUS_OK`: `progress.written` ids are in `out`. Fewer than `cap` (0 included):
/// that is all for now, and a further call writes 0 (or reports what stopped it) until more
/// input is pushed (after `finish`: the stream is done). `PICOBPE_STATUS_INPUT_TOO_SMALL`: the pending input is one
/// run of `PICOBPE_STREAM_INPUT_CAPACITY` bytes that cannot be split; the stream cannot go on
/// (encode the text with `picobpe_encode`, and init the state again for the next stream).
/// `PICOBPE_STATUS_PIECE_TOO_LONG`: a piece needs a work area of `progress.needed` ids, more
/// than the stream has (a byte-level model's capacities rule it out; a long SentencePiece
/// word, see `PICOBPE_STREAM_ID_CAPACITY`); as `INPUT_TOO_SMALL`, the stream cannot go on.
/// An error comes only from a call that wrote no ids: the ids before it are handed out
/// first, so everything taken before the error is final and right.
///
/// # Safety
/// `state` must point to a `PicobpeStreamEncoder` that nothing else accesses during the call,
/// `out` to `cap` writable `uint32_t`, `progress` to a writable `PicobpeProgress` (null or
/// zeroed state, or null pointers: `PICOBPE_STATUS_INVALID_ARGUMENT`).
#[no_mangle]
pub unsafe extern "C" fn picobpe_stream_encoder_take(
    state: *mut PicobpeStreamEncoder,
    out: *mut u32,
    cap: usize,
    progress: *mut PicobpeProgress,
) -> PicobpeStatus {
    // SAFETY: the caller's contract above.
    unsafe {
        reported(progress, || {
            Some(match encoder(state)?.take(output(out, cap)?) {
                Ok(n) => (PicobpeStatus::Ok, moved(0, n)),
                Err(e) => stream_error(e),
            })
        })
    }
}

/// True when the stream was finished and every id taken; false otherwise, and for a null or
/// zeroed state.
///
/// # Safety
/// `state` must be null or point to a `PicobpeStreamEncoder` that nothing writes during the
/// call.
#[no_mangle]
pub unsafe extern "C" fn picobpe_stream_encoder_is_done(
    state: *const PicobpeStreamEncoder,
) -> bool {
    // SAFETY: the caller's contract above; the stream is only read.
    unsafe { stream_ptr::<_, Encoder>(state, ENCODER_TAG).is_some_and(|p| (*p).is_done()) }
}

/// Set up a streaming decoder in `state` (previous contents are overwritten). It turns ids
/// into the same bytes as `picobpe_decode`, but hands out only whole UTF-8 characters until
/// `finish` (a character split across tokens waits for its last byte; bytes that can never be
/// valid UTF-8 pass through as they are, or, for a SentencePiece model, become U+FFFD as
/// `DecodeIds` has them).
///
/// The calls: `picobpe_stream_decoder_push` one id at a time, `picobpe_stream_decoder_take`
/// whenever a push returns `PICOBPE_STATUS_OUTPUT_FULL` (and whenever you want bytes), then
/// `picobpe_stream_decoder_finish` and `take` until it writes 0 bytes.
///
/// # Safety
/// As `picobpe_stream_encoder_init`, for a `PicobpeStreamDecoder`.
#[no_mangle]
pub unsafe extern "C" fn picobpe_stream_decoder_init(
    state: *mut PicobpeStreamDecoder,
) -> PicobpeStatus {
    // SAFETY: the caller's contract above.
    unsafe { init(state, DECODER_TAG, || Decoder::new(model())) }
}

/// Append the bytes of `id` to the stream.
///
/// `PICOBPE_STATUS_OK`: done. `PICOBPE_STATUS_OUTPUT_FULL`: no room for its bytes; `take`
/// until it writes 0 bytes, then push the same id again (it then fits).
/// `PICOBPE_STATUS_UNKNOWN_ID`: `id` is not an id of the model; nothing changed. `PICOBPE_STATUS_PIECE_TOO_LONG`: no room,
/// and the token is longer than `PICOBPE_STREAM_DECODER_CAPACITY - 3` bytes, so a `take` may
/// not make enough (no token of gpt2, cl100k_base or o200k_base is): `finish` and `take` the
/// pending bytes, decode this id with `picobpe_decode`, and init the state again for the ids
/// after it.
///
/// # Safety
/// `state` must point to a `PicobpeStreamDecoder` that nothing else accesses during the call
/// (null or zeroed: `PICOBPE_STATUS_INVALID_ARGUMENT`).
#[no_mangle]
pub unsafe extern "C" fn picobpe_stream_decoder_push(
    state: *mut PicobpeStreamDecoder,
    id: u32,
) -> PicobpeStatus {
    // SAFETY: the caller's contract above.
    match unsafe { decoder(state) }.map(|stream| stream.push(id)) {
        None => PicobpeStatus::InvalidArgument,
        Some(Ok(())) => PicobpeStatus::Ok,
        Some(Err(DecodeError::UnknownId { .. })) => PicobpeStatus::UnknownId,
        Some(Err(DecodeError::OutputFull { .. })) => {
            let room = Tokenize::stream_room(&model(), id).unwrap_or(0);
            if room > PICOBPE_STREAM_DECODER_CAPACITY {
                PicobpeStatus::PieceTooLong
            } else {
                PicobpeStatus::OutputFull
            }
        }
    }
}

/// Mark the end of the ids: `take` then hands out a trailing incomplete UTF-8 sequence too.
///
/// # Safety
/// As `picobpe_stream_decoder_push`.
#[no_mangle]
pub unsafe extern "C" fn picobpe_stream_decoder_finish(
    state: *mut PicobpeStreamDecoder,
) -> PicobpeStatus {
    // SAFETY: the caller's contract above.
    status(unsafe { decoder(state) }.map(|stream| stream.finish()))
}

/// Move pending bytes that form whole UTF-8 characters (after `finish`: all of them) into
/// `out[0..cap]`; `progress.written` is their number. A character is never split between two
/// takes, so give `cap` of at least 4 to be sure of progress. Returns `PICOBPE_STATUS_OK`;
/// `progress.written` 0 means nothing more until more ids are pushed (after `finish`: done).
///
/// # Safety
/// `state` must point to a `PicobpeStreamDecoder` that nothing else accesses during the call,
/// `out` to `cap` writable bytes, `progress` to a writable `PicobpeProgress` (null or
/// zeroed state, or null pointers: `PICOBPE_STATUS_INVALID_ARGUMENT`).
#[no_mangle]
pub unsafe extern "C" fn picobpe_stream_decoder_take(
    state: *mut PicobpeStreamDecoder,
    out: *mut u8,
    cap: usize,
    progress: *mut PicobpeProgress,
) -> PicobpeStatus {
    // SAFETY: the caller's contract above.
    unsafe {
        reported(progress, || {
            let n = decoder(state)?.take(output(out, cap)?);
            Some((PicobpeStatus::Ok, moved(0, n)))
        })
    }
}
