//! The C API's `extern "C"` functions called from Rust as C calls them — raw pointers, lengths
//! at the edges of each buffer (exact, one short, zero with a null pointer), null and
//! misaligned arguments, cache memory at every alignment, stream states in caller storage
//! copied byte for byte mid-stream as the header allows — small enough for Miri
//! (`cargo xtask miri`), over the baked gpt2 tables (the default build).
//!
//! Every buffer is allocated at exactly the length passed, so a write past it is an error
//! under Miri. The expected ids are tiktoken's, copied from the committed reference vectors
//! (`tests/fixtures/vectors/gpt2/fixtures.jsonl.gz`, made by tiktoken 0.14.0); outside Miri,
//! `the_ids_are_tiktokens` checks the copies against the file.

use core::ffi::c_void;
use core::mem::{align_of, size_of};
use core::ptr;

use picobpe_capi::*;

/// (name in the reference vectors, text, ids with `<|endoftext|>` recognized, ids without).
type Case = (&'static str, &'static str, &'static [u32], &'static [u32]);

const CASES: &[Case] = &[
    ("empty", "", &[], &[]),
    (
        "sanity",
        "Hello, 🌍! 你好!",
        &[
            15496, 11, 12520, 234, 235, 0, 220, 19526, 254, 25001, 121, 0,
        ],
        &[
            15496, 11, 12520, 234, 235, 0, 220, 19526, 254, 25001, 121, 0,
        ],
    ),
    (
        "special-mix",
        "Héllò hôw <|endoftext|><|endoftext|> are ü? 🙃<|endoftext|>",
        &[
            39, 2634, 297, 127, 110, 289, 27083, 86, 220, 50256, 50256, 389, 6184, 120, 30, 12520,
            247, 225, 50256,
        ],
        &[
            39, 2634, 297, 127, 110, 289, 27083, 86, 1279, 91, 437, 1659, 5239, 91, 6927, 91, 437,
            1659, 5239, 91, 29, 389, 6184, 120, 30, 12520, 247, 225, 27, 91, 437, 1659, 5239, 91,
            29,
        ],
    ),
    (
        "only-special",
        "<|endoftext|>",
        &[50256],
        &[27, 91, 437, 1659, 5239, 91, 29],
    ),
    ("one-emoji", "🙃", &[8582, 247, 225], &[8582, 247, 225]),
];

/// The ids a case expects.
fn ids_of(case: &Case, allow_special: bool) -> &'static [u32] {
    if allow_special {
        case.2
    } else {
        case.3
    }
}

/// A progress record with every field set to a value no call reports.
fn fresh() -> PicobpeProgress {
    PicobpeProgress {
        consumed: usize::MAX,
        written: usize::MAX,
        needed: usize::MAX,
    }
}

/// `picobpe_encode_from` into a buffer of exactly `cap` ids (null when 0).
fn encode_from(
    text: &[u8],
    from: usize,
    special: bool,
    cap: usize,
) -> (PicobpeStatus, PicobpeProgress, Vec<u32>) {
    let mut out = vec![0u32; cap];
    let out_ptr = if cap == 0 {
        ptr::null_mut()
    } else {
        out.as_mut_ptr()
    };
    let text_ptr = if text.is_empty() {
        ptr::null()
    } else {
        text.as_ptr()
    };
    let mut p = fresh();
    // SAFETY: `text` and `out` are live buffers of the lengths passed; `p` is writable.
    let status =
        unsafe { picobpe_encode_from(text_ptr, text.len(), from, special, out_ptr, cap, &mut p) };
    (status, p, out)
}

/// Encode `text` through buffers of `cap` ids, resuming at each `consumed` (a buffer grown to
/// what `PIECE_TOO_LONG` asks for).
fn encode_resumed(text: &[u8], special: bool, mut cap: usize) -> Vec<u32> {
    let mut got = Vec::new();
    let mut from = 0;
    loop {
        let (status, p, out) = encode_from(text, from, special, cap);
        match status {
            PicobpeStatus::Ok => {
                assert_eq!(p.consumed, text.len());
                got.extend_from_slice(&out[..p.written]);
                return got;
            }
            PicobpeStatus::OutputFull => {
                assert!(p.consumed > from && p.written > 0 && p.written <= cap);
                got.extend_from_slice(&out[..p.written]);
                from = p.consumed;
            }
            PicobpeStatus::PieceTooLong => {
                assert_eq!((p.consumed, p.written), (from, 0));
                assert!(p.needed > cap);
                cap = p.needed;
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn model_and_family() {
    assert_eq!(picobpe_vocab_size(), 50257);
    assert_eq!(picobpe_model_family(), PicobpeFamily::ByteLevelBpe);
}

#[test]
fn encode_count_and_decode_at_the_edges() {
    for case in CASES {
        let text = case.1.as_bytes();
        for special in [true, false] {
            let want = ids_of(case, special);
            // Exactly as many ids as the text has.
            let (status, p, out) = encode_from(text, 0, special, want.len());
            assert_eq!(status, PicobpeStatus::Ok, "{}", case.0);
            assert_eq!(
                (p.consumed, p.written, p.needed),
                (text.len(), want.len(), 0)
            );
            assert_eq!(out, want, "{}", case.0);
            // One short: the ids before the last piece, resumable.
            if !want.is_empty() {
                let (status, p, out) = encode_from(text, 0, special, want.len() - 1);
                if status == PicobpeStatus::OutputFull {
                    assert_eq!(out[..p.written], want[..p.written]);
                    assert!(p.consumed < text.len());
                } else {
                    // A single piece of several ids does not fit at all.
                    assert_eq!(status, PicobpeStatus::PieceTooLong, "{}", case.0);
                    assert_eq!((p.consumed, p.written), (0, 0));
                }
            }
            // Resumed through tiny buffers.
            for cap in [0, 1, 2] {
                assert_eq!(
                    encode_resumed(text, special, cap),
                    want,
                    "{} cap {cap}",
                    case.0
                );
            }
            // `picobpe_encode` is `from` 0.
            let mut out = vec![0u32; want.len() + 1];
            let mut p = fresh();
            // SAFETY: live buffers of the lengths passed.
            let status = unsafe {
                picobpe_encode(
                    text.as_ptr(),
                    text.len(),
                    special,
                    out.as_mut_ptr(),
                    out.len(),
                    &mut p,
                )
            };
            assert_eq!((status, &out[..p.written]), (PicobpeStatus::Ok, want));
            // Count, with scratch buffers of every small size.
            for cap in [0usize, 1, 3, want.len() + 4] {
                let mut scratch = vec![0u32; cap];
                let scratch_ptr = if cap == 0 {
                    ptr::null_mut()
                } else {
                    scratch.as_mut_ptr()
                };
                let mut p = fresh();
                // SAFETY: live buffers of the lengths passed.
                let status = unsafe {
                    picobpe_count(text.as_ptr(), text.len(), special, scratch_ptr, cap, &mut p)
                };
                match status {
                    PicobpeStatus::Ok => assert_eq!(p.written, want.len(), "count {}", case.0),
                    PicobpeStatus::PieceTooLong => assert!(p.needed > cap && p.consumed == 0),
                    other => panic!("count: {other:?}"),
                }
            }
            check_decode(case.1.as_bytes(), want);
        }
    }
}

/// `picobpe_decode` and `picobpe_decode_from` of `ids` into buffers at their edges.
fn check_decode(text: &[u8], ids: &[u32]) {
    let decode = |from: usize, cap: usize| {
        let mut out = vec![0u8; cap];
        let out_ptr = if cap == 0 {
            ptr::null_mut()
        } else {
            out.as_mut_ptr()
        };
        let ids_ptr = if ids.is_empty() {
            ptr::null()
        } else {
            ids.as_ptr()
        };
        let mut p = fresh();
        // SAFETY: live buffers of the lengths passed.
        let status = unsafe { picobpe_decode_from(ids_ptr, ids.len(), from, out_ptr, cap, &mut p) };
        (status, p, out)
    };
    // Exactly the text's length.
    let (status, p, out) = decode(0, text.len());
    assert_eq!(
        (status, p.consumed, p.written),
        (PicobpeStatus::Ok, ids.len(), text.len())
    );
    assert_eq!(out, text);
    // One byte short: every id but the last's bytes, or (one id) the piece is too long.
    if !text.is_empty() {
        let (status, p, out) = decode(0, text.len() - 1);
        match status {
            PicobpeStatus::OutputFull => {
                assert!(p.consumed < ids.len());
                assert_eq!(out[..p.written], text[..p.written]);
            }
            PicobpeStatus::PieceTooLong => {
                assert_eq!(p.written, 0);
                assert!(p.needed > text.len() - 1);
            }
            other => panic!("{other:?}"),
        }
    }
    // Resumed through buffers of 0 (growing on PIECE_TOO_LONG), 1 and 3 bytes.
    for start_cap in [0usize, 1, 3] {
        let mut got = Vec::new();
        let (mut from, mut cap) = (0, start_cap);
        loop {
            let (status, p, out) = decode(from, cap);
            match status {
                PicobpeStatus::Ok => {
                    got.extend_from_slice(&out[..p.written]);
                    break;
                }
                PicobpeStatus::OutputFull => {
                    got.extend_from_slice(&out[..p.written]);
                    from = p.consumed;
                }
                PicobpeStatus::PieceTooLong => {
                    assert_eq!(p.consumed, from);
                    cap = p.needed;
                }
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(got, text, "decode_from, buffers of {start_cap}");
    }
    // `picobpe_decode` is `from` 0.
    let mut out = vec![0u8; text.len()];
    let mut p = fresh();
    // SAFETY: live buffers of the lengths passed (a dangling, non-null pointer for length 0).
    let status =
        unsafe { picobpe_decode(ids.as_ptr(), ids.len(), out.as_mut_ptr(), out.len(), &mut p) };
    assert_eq!((status, out.as_slice()), (PicobpeStatus::Ok, text));
}

#[test]
fn unknown_ids_and_invalid_arguments() {
    let ids = [15496u32, 50257, 11];
    let mut out = [0u8; 16];
    let mut p = fresh();
    // SAFETY: live buffers of the lengths passed.
    let status = unsafe { picobpe_decode(ids.as_ptr(), 3, out.as_mut_ptr(), 16, &mut p) };
    assert_eq!(
        (status, p.consumed, p.written),
        (PicobpeStatus::UnknownId, 1, 5)
    );
    assert_eq!(&out[..5], b"Hello");
    let text = b"Hello";
    let mut ids = [0u32; 4];
    let inv = PicobpeStatus::InvalidArgument;
    // SAFETY: null pointers go with non-zero lengths or a null progress: each call must refuse
    // before touching memory; the other pointers are live buffers of the lengths passed.
    unsafe {
        let mut p = fresh();
        assert_eq!(
            picobpe_encode(ptr::null(), 5, true, ids.as_mut_ptr(), 4, &mut p),
            inv
        );
        assert_eq!(
            picobpe_encode(text.as_ptr(), 5, true, ptr::null_mut(), 4, &mut p),
            inv
        );
        assert_eq!(
            picobpe_encode(text.as_ptr(), 5, true, ids.as_mut_ptr(), 4, ptr::null_mut()),
            inv
        );
        assert_eq!(
            picobpe_count(ptr::null(), 5, true, ids.as_mut_ptr(), 4, &mut p),
            inv
        );
        assert_eq!(
            picobpe_count(text.as_ptr(), 5, true, ptr::null_mut(), 4, &mut p),
            inv
        );
        assert_eq!(
            picobpe_decode(ptr::null(), 2, out.as_mut_ptr(), 16, &mut p),
            inv
        );
        assert_eq!(
            picobpe_decode(ids.as_ptr(), 1, ptr::null_mut(), 16, &mut p),
            inv
        );
        assert_eq!(
            picobpe_decode(ids.as_ptr(), 1, out.as_mut_ptr(), 16, ptr::null_mut()),
            inv
        );
        assert_eq!(p, fresh(), "a refused call writes no progress");
        // Null with length 0 is an empty buffer; `from` past the end encodes nothing.
        assert_eq!(
            picobpe_encode(ptr::null(), 0, true, ptr::null_mut(), 0, &mut p),
            PicobpeStatus::Ok
        );
        assert_eq!((p.consumed, p.written), (0, 0));
        let status = picobpe_encode_from(text.as_ptr(), 5, 9, true, ids.as_mut_ptr(), 4, &mut p);
        assert_eq!((status, p.written), (PicobpeStatus::Ok, 0));
    }
}

#[test]
fn cache_memory_at_every_alignment() {
    let case = &CASES[2];
    let text = case.1.as_bytes();
    let want = ids_of(case, true);
    // Buffers of bytes at offsets 0..64 from a 64-byte boundary, of sizes that hold no line,
    // exactly one line when aligned, and a few lines.
    let mut backing = vec![0u64; 8 * 7];
    let base = backing.as_mut_ptr().cast::<u8>();
    let to_line = base.align_offset(PICOBPE_CACHE_LINE_SIZE);
    for offset in [0usize, 1, 8, 63] {
        for bytes in [0usize, 63, 64, 64 + 63, 3 * 64 + 5] {
            // SAFETY: `to_line + offset + bytes` (at most 56 + 63 + 197) is within `backing`
            // (7 × 64 bytes), which nothing else uses during the calls.
            let cache = unsafe { base.add(to_line + offset) };
            // SAFETY: `cache` and `bytes` stay within `backing`.
            unsafe { ptr::write_bytes(cache, 0, bytes) };
            for _ in 0..2 {
                let mut out = vec![0u32; want.len()];
                let mut p = fresh();
                // SAFETY: live buffers of the lengths passed, the cache zeroed then reused.
                let status = unsafe {
                    picobpe_encode_cached(
                        text.as_ptr(),
                        text.len(),
                        0,
                        true,
                        cache.cast::<c_void>(),
                        bytes,
                        out.as_mut_ptr(),
                        out.len(),
                        &mut p,
                    )
                };
                assert_eq!(status, PicobpeStatus::Ok, "offset {offset}, {bytes} bytes");
                assert_eq!(out, want);
            }
        }
    }
    let mut out = [0u32; 4];
    let mut p = fresh();
    // SAFETY: a null cache with a non-zero length must be refused before any access.
    let status = unsafe {
        picobpe_encode_cached(
            b"hi".as_ptr(),
            2,
            0,
            true,
            ptr::null_mut(),
            64,
            out.as_mut_ptr(),
            4,
            &mut p,
        )
    };
    assert_eq!(status, PicobpeStatus::InvalidArgument);
}

/// Caller storage for a stream state: zeroed `u64` words, as C's static storage.
fn zeroed_words(words: usize) -> Vec<u64> {
    vec![0u64; words]
}

/// Take every id the encoder has, `cap` at a time.
///
/// # Safety
/// `state` points to an initialized encoder state nothing else uses.
unsafe fn take_ids(state: *mut PicobpeStreamEncoder, cap: usize, got: &mut Vec<u32>) {
    loop {
        let mut out = vec![0u32; cap];
        let mut p = fresh();
        // SAFETY: the caller's contract; `out` holds `cap` ids.
        let status = unsafe { picobpe_stream_encoder_take(state, out.as_mut_ptr(), cap, &mut p) };
        assert_eq!(status, PicobpeStatus::Ok);
        got.extend_from_slice(&out[..p.written]);
        if p.written < cap {
            return;
        }
    }
}

#[test]
fn stream_encoder_in_caller_storage_copied_mid_stream() {
    assert_eq!(
        size_of::<PicobpeStreamEncoder>(),
        8 * PICOBPE_STREAM_ENCODER_WORDS
    );
    assert_eq!(align_of::<PicobpeStreamEncoder>(), 8);
    for case in &CASES[1..] {
        let text = case.1.as_bytes();
        for special in [true, false] {
            let want = ids_of(case, special);
            let mut a = zeroed_words(PICOBPE_STREAM_ENCODER_WORDS);
            let mut b = zeroed_words(PICOBPE_STREAM_ENCODER_WORDS);
            let sa = a.as_mut_ptr().cast::<PicobpeStreamEncoder>();
            let sb = b.as_mut_ptr().cast::<PicobpeStreamEncoder>();
            let mut got_a = Vec::new();
            let mut got_b;
            // SAFETY: `sa` and `sb` are zeroed, aligned storage of the header's size; the
            // chunks and outputs are live buffers of the lengths passed.
            unsafe {
                let mut p = fresh();
                assert_eq!(
                    picobpe_stream_encoder_push(sa, text.as_ptr(), text.len(), &mut p),
                    PicobpeStatus::InvalidArgument,
                    "a zeroed state is refused"
                );
                assert_eq!(picobpe_stream_encoder_init(sa, special), PicobpeStatus::Ok);
                let half = text.len() / 2;
                for chunk in text[..half].chunks(5) {
                    push_all(sa, chunk, &mut got_a);
                }
                // Copy the state byte for byte; both streams go on alone.
                ptr::copy_nonoverlapping(
                    sa.cast::<u8>(),
                    sb.cast::<u8>(),
                    size_of::<PicobpeStreamEncoder>(),
                );
                got_b = got_a.clone();
                for s in [(sa, &mut got_a), (sb, &mut got_b)] {
                    for chunk in text[half..].chunks(3) {
                        push_all(s.0, chunk, s.1);
                    }
                    assert_eq!(picobpe_stream_encoder_finish(s.0), PicobpeStatus::Ok);
                    take_ids(s.0, 2, s.1);
                    assert!(picobpe_stream_encoder_is_done(s.0));
                    let mut p = fresh();
                    assert_eq!(
                        picobpe_stream_encoder_push(s.0, b"x".as_ptr(), 1, &mut p),
                        PicobpeStatus::InvalidArgument,
                        "a push after finish"
                    );
                }
            }
            assert_eq!(got_a, want, "{}", case.0);
            assert_eq!(got_b, want, "copy of {}", case.0);
        }
    }
    // Null and misaligned states are refused before any access.
    let mut words = zeroed_words(PICOBPE_STREAM_ENCODER_WORDS + 1);
    // SAFETY: the misaligned pointer stays within `words`; nothing is read or written through
    // it (the calls check the alignment first).
    unsafe {
        let skewed = words
            .as_mut_ptr()
            .cast::<u8>()
            .add(4)
            .cast::<PicobpeStreamEncoder>();
        assert_eq!(
            picobpe_stream_encoder_init(skewed, true),
            PicobpeStatus::InvalidArgument
        );
        assert_eq!(
            picobpe_stream_encoder_init(ptr::null_mut(), true),
            PicobpeStatus::InvalidArgument
        );
        assert_eq!(
            picobpe_stream_encoder_finish(skewed),
            PicobpeStatus::InvalidArgument
        );
        assert!(!picobpe_stream_encoder_is_done(ptr::null()));
        let mut p = fresh();
        let mut out = [0u32; 2];
        assert_eq!(
            picobpe_stream_encoder_take(ptr::null_mut(), out.as_mut_ptr(), 2, &mut p),
            PicobpeStatus::InvalidArgument
        );
    }
    assert!(words.iter().all(|&w| w == 0), "nothing written");
}

/// Push all of `chunk`, taking ids (3 at a time) whenever the pending input is full.
///
/// # Safety
/// `state` points to an initialized encoder state nothing else uses.
unsafe fn push_all(state: *mut PicobpeStreamEncoder, mut chunk: &[u8], got: &mut Vec<u32>) {
    while !chunk.is_empty() {
        let mut p = fresh();
        // SAFETY: the caller's contract; `chunk` is live.
        let status =
            unsafe { picobpe_stream_encoder_push(state, chunk.as_ptr(), chunk.len(), &mut p) };
        assert!(
            matches!(status, PicobpeStatus::Ok | PicobpeStatus::OutputFull),
            "{status:?}"
        );
        chunk = &chunk[p.consumed..];
        // SAFETY: as above.
        unsafe { take_ids(state, 3, got) };
    }
}

#[test]
fn stream_decoder_in_caller_storage_copied_mid_stream() {
    assert_eq!(
        size_of::<PicobpeStreamDecoder>(),
        8 * PICOBPE_STREAM_DECODER_WORDS
    );
    // Taken 4 or 7 bytes at a time (a character is never split between takes, so a take of
    // fewer than 4 bytes may never get a 4-byte one), whole characters only.
    let drain = |state: *mut PicobpeStreamDecoder, cap: usize, got: &mut Vec<u8>| loop {
        let mut out = vec![0u8; cap];
        let mut p = fresh();
        // SAFETY: an initialized state nothing else uses; `out` holds `cap` bytes.
        let status = unsafe { picobpe_stream_decoder_take(state, out.as_mut_ptr(), cap, &mut p) };
        assert_eq!(status, PicobpeStatus::Ok);
        if p.written == 0 {
            return;
        }
        got.extend_from_slice(&out[..p.written]);
    };
    for case in &CASES[1..] {
        let ids = ids_of(case, true);
        let text = case.1.as_bytes();
        for cap in [4usize, 7] {
            let mut a = zeroed_words(PICOBPE_STREAM_DECODER_WORDS);
            let mut b = zeroed_words(PICOBPE_STREAM_DECODER_WORDS);
            let sa = a.as_mut_ptr().cast::<PicobpeStreamDecoder>();
            let sb = b.as_mut_ptr().cast::<PicobpeStreamDecoder>();
            let mut got_a = Vec::new();
            let mut got_b;
            // SAFETY: zeroed, aligned storage of the header's size.
            unsafe {
                assert_eq!(
                    picobpe_stream_decoder_push(sa, ids[0]),
                    PicobpeStatus::InvalidArgument
                );
                assert_eq!(picobpe_stream_decoder_init(sa), PicobpeStatus::Ok);
                assert_eq!(
                    picobpe_stream_decoder_push(sa, 50257),
                    PicobpeStatus::UnknownId
                );
                let half = ids.len() / 2;
                for &id in &ids[..half] {
                    assert_eq!(picobpe_stream_decoder_push(sa, id), PicobpeStatus::Ok);
                    drain(sa, cap, &mut got_a);
                }
                ptr::copy_nonoverlapping(
                    sa.cast::<u8>(),
                    sb.cast::<u8>(),
                    size_of::<PicobpeStreamDecoder>(),
                );
                got_b = got_a.clone();
                for (s, got) in [(sa, &mut got_a), (sb, &mut got_b)] {
                    for &id in &ids[half..] {
                        assert_eq!(picobpe_stream_decoder_push(s, id), PicobpeStatus::Ok);
                        drain(s, cap, got);
                    }
                    assert_eq!(picobpe_stream_decoder_finish(s), PicobpeStatus::Ok);
                    drain(s, cap, got);
                }
            }
            assert_eq!(got_a, text, "{} cap {cap}", case.0);
            assert_eq!(got_b, text, "copy of {} cap {cap}", case.0);
        }
    }
    // SAFETY: null states are refused before any access.
    unsafe {
        assert_eq!(
            picobpe_stream_decoder_init(ptr::null_mut()),
            PicobpeStatus::InvalidArgument
        );
        assert_eq!(
            picobpe_stream_decoder_finish(ptr::null_mut()),
            PicobpeStatus::InvalidArgument
        );
        let mut p = fresh();
        let mut out = [0u8; 4];
        assert_eq!(
            picobpe_stream_decoder_take(ptr::null_mut(), out.as_mut_ptr(), 4, &mut p),
            PicobpeStatus::InvalidArgument
        );
    }
}

/// The ids above are tiktoken's: equal to the committed reference vectors (not under Miri:
/// reading and unpacking the vector files there would take minutes).
#[cfg(not(miri))]
#[test]
fn the_ids_are_tiktokens() {
    use picobpe_tests::vectors::{self, Encoding, Set};
    let fixtures = vectors::load(Encoding::Gpt2, Set::Fixtures);
    for case in CASES {
        let found = fixtures
            .cases
            .iter()
            .find(|c| c.name == case.0)
            .unwrap_or_else(|| panic!("{} is in the fixtures", case.0));
        assert_eq!(found.input, case.1.as_bytes(), "{}", case.0);
        assert_eq!(found.all, case.2, "{}", case.0);
        assert_eq!(found.ordinary, case.3, "{}", case.0);
    }
}
