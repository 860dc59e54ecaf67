//! The exported functions and types of the C API. The including crate provides
//! `crate::c_api_tables()` and `crate::c_api_tokenizer()`: `picobpe-capi` over its baked
//! tables, `panic-check/` over opaque ones (so the panic-freedom proof covers this file).

use picobpe::{DecodeError, EncodeError, Specials};

/// What a call did.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PicobpeStatus {
    /// Done: all of the input was processed.
    Ok = 0,
    /// The output buffer is full: `progress.written` elements are valid and the input up to
    /// `progress.consumed` is done; drain and call again from there.
    OutputFull = 1,
    /// One piece needs more room than the whole output buffer: call again with an output
    /// buffer of at least `progress.needed` elements (`progress.consumed` is its offset).
    PieceTooLong = 2,
    /// Decode: `ids[progress.consumed]` is not an id of the model; `progress.written` bytes of
    /// the ids before it are in the output.
    UnknownId = 3,
    /// A null pointer with a non-zero length, or a null `progress`.
    InvalidArgument = 4,
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
    if len == 0 {
        return Some(&[]);
    }
    if ptr.is_null() {
        return None;
    }
    // SAFETY: non-null and, by the caller's contract, `len` readable elements.
    Some(unsafe { core::slice::from_raw_parts(ptr, len) })
}

/// `len` elements at `ptr` as a mutable slice (empty for a length of 0).
///
/// # Safety
/// A non-null `ptr` must point to `len` writable elements that nothing else accesses.
unsafe fn output<'a, T>(ptr: *mut T, len: usize) -> Option<&'a mut [T]> {
    if len == 0 {
        return Some(&mut []);
    }
    if ptr.is_null() {
        return None;
    }
    // SAFETY: non-null and, by the caller's contract, `len` writable, unaliased elements.
    Some(unsafe { core::slice::from_raw_parts_mut(ptr, len) })
}

/// Special tokens recognized (`true`) or encoded as text.
fn specials(allow_special: bool) -> Specials {
    if allow_special {
        Specials::All
    } else {
        Specials::None
    }
}

/// The status and progress of an encode result.
fn encode_result(r: Result<usize, EncodeError>, len: usize) -> (PicobpeStatus, PicobpeProgress) {
    match r {
        Ok(n) => (
            PicobpeStatus::Ok,
            PicobpeProgress {
                consumed: len,
                written: n,
                needed: 0,
            },
        ),
        Err(EncodeError::OutputFull { consumed, written }) => (
            PicobpeStatus::OutputFull,
            PicobpeProgress {
                consumed,
                written,
                needed: 0,
            },
        ),
        Err(EncodeError::PieceTooLong { offset, needed, .. }) => (
            PicobpeStatus::PieceTooLong,
            PicobpeProgress {
                consumed: offset,
                written: 0,
                needed,
            },
        ),
    }
}

/// Write `value` to `progress` (non-null) and return `status`.
///
/// # Safety
/// `progress` must be null or point to a writable `PicobpeProgress`.
unsafe fn report(
    progress: *mut PicobpeProgress,
    status: PicobpeStatus,
    value: PicobpeProgress,
) -> PicobpeStatus {
    // SAFETY: by the caller's contract, a non-null `progress` is writable.
    match unsafe { progress.as_mut() } {
        Some(p) => {
            *p = value;
            status
        }
        None => PicobpeStatus::InvalidArgument,
    }
}

/// Number of ids of the baked model (valid ids are `0..picobpe_vocab_size()`).
#[no_mangle]
pub extern "C" fn picobpe_vocab_size() -> usize {
    crate::c_api_tables().n_ids()
}

/// Encode `text[0..len]` into `out[0..cap]`: tiktoken's ids, with the model's special tokens
/// recognized when `allow_special` is true (tiktoken's `allowed_special="all"`) and encoded
/// as ordinary text otherwise. Invalid UTF-8 is accepted.
///
/// # Safety
/// `text` must point to `len` readable bytes, `out` to `cap` writable `uint32_t`, `progress`
/// to a writable `PicobpeProgress` (pointers may be null only with a length of 0).
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
    let (Some(text), Some(out)) = (unsafe { input(text, len) }, unsafe { output(out, cap) }) else {
        return PicobpeStatus::InvalidArgument;
    };
    let (status, value) = encode_result(
        crate::c_api_tokenizer().encode(text, out, specials(allow_special)),
        len,
    );
    // SAFETY: the caller's contract above.
    unsafe { report(progress, status, value) }
}

/// Count the ids `text[0..len]` encodes to, using `scratch[0..cap]` as the work area; the
/// count is `progress.written`. Any scratch length works as long as each piece fits
/// (`PICOBPE_STATUS_PIECE_TOO_LONG` says how much it needs).
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
    let (Some(text), Some(scratch)) =
        (unsafe { input(text, len) }, unsafe { output(scratch, cap) })
    else {
        return PicobpeStatus::InvalidArgument;
    };
    let (status, value) =
        match crate::c_api_tokenizer().count(text, specials(allow_special), scratch) {
            Ok(n) => (
                PicobpeStatus::Ok,
                PicobpeProgress {
                    consumed: len,
                    written: n,
                    needed: 0,
                },
            ),
            Err(e) => encode_result(Err(e), len),
        };
    // SAFETY: the caller's contract above.
    unsafe { report(progress, status, value) }
}

/// Decode `ids[0..n]` into `out[0..cap]` (the bytes the ids stand for, not necessarily UTF-8).
///
/// # Safety
/// `ids` must point to `n` readable `uint32_t`, `out` to `cap` writable bytes, `progress` to a
/// writable `PicobpeProgress` (pointers may be null only with a length of 0).
#[no_mangle]
pub unsafe extern "C" fn picobpe_decode(
    ids: *const u32,
    n: usize,
    out: *mut u8,
    cap: usize,
    progress: *mut PicobpeProgress,
) -> PicobpeStatus {
    // SAFETY: the caller's contract above.
    let (Some(ids), Some(out)) = (unsafe { input(ids, n) }, unsafe { output(out, cap) }) else {
        return PicobpeStatus::InvalidArgument;
    };
    let (status, value) = match crate::c_api_tokenizer().decode(ids, out) {
        Ok(written) => (
            PicobpeStatus::Ok,
            PicobpeProgress {
                consumed: n,
                written,
                needed: 0,
            },
        ),
        Err(DecodeError::OutputFull { consumed, written }) => (
            PicobpeStatus::OutputFull,
            PicobpeProgress {
                consumed,
                written,
                needed: 0,
            },
        ),
        Err(DecodeError::UnknownId {
            position, written, ..
        }) => (
            PicobpeStatus::UnknownId,
            PicobpeProgress {
                consumed: position,
                written,
                needed: 0,
            },
        ),
    };
    // SAFETY: the caller's contract above.
    unsafe { report(progress, status, value) }
}
