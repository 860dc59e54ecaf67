//! Link-time proof that no panic is reachable from picobpe's public API.
//!
//! Every public entry point of the core (encode, count, decode, streaming, error `Display`, the
//! lower-level public pieces they are built from, and the SentencePiece tokenizer's encode,
//! resume, cache, count, decode and streaming with its table lookups) is called below on *opaque* inputs: every
//! slice, length, flag, table reference and stream state goes through [`black_box`], so the
//! optimiser may assume nothing about them and must keep every check the code performs. The panic handler calls an
//! `extern "C"` function that is defined nowhere. If, after optimisation (fat LTO), any panic
//! path is still reachable from these calls, the handler is referenced and the link fails with
//! `undefined symbol: picobpe_panic_is_reachable`. A successful link is the proof.
//!
//! The tables are the baked tables of a tiny byte-level model and of a small SentencePiece model
//! (see `build.rs`), but they too pass through `black_box`: the proof covers any tables,
//! including corrupt ones.
//!
//! `cargo xtask panic-check` builds this for each optimisation profile and, on failure, rebuilds
//! with `--features diagnose` (which defines the symbol) to print the call chain to the panic.
#![no_std]
#![no_main]

use core::hint::black_box;

use picobpe::pretok::{self, Pattern};
use picobpe::sentencepiece::{score_priority, PieceKind};
use picobpe::special::{self, FirstBytes};
use picobpe::wordpiece::{CharRule, Spaces, WordSplit};
use picobpe::{
    bytelevel as bpe, AnyTokenizer, Specials, StreamDecoder, StreamEncoder, Tables, Tokenize,
    Tokenizer,
};
use picobpe::{PieceMap, SpTables, SpTokenizer, WpTables, WpTokenizer};

#[allow(clippy::all, missing_docs, dead_code, long_running_const_eval)]
mod baked {
    include!(concat!(env!("OUT_DIR"), "/picobpe_tables.rs"));
}

#[allow(clippy::all, missing_docs, dead_code, long_running_const_eval)]
mod baked_sp {
    include!(concat!(env!("OUT_DIR"), "/picobpe_sp_tables.rs"));
}

/// Input bytes; only ever seen through `black_box`, so their contents and length are unknown.
static TEXT: [u8; 73] =
    *b"the then <|endoftext|> 'll \xF0\x9F\x98\x80 123\r\n\xFF\xC3 tthe<|endoftext|><|endo  x\tgood\xE2\x82";
/// Input ids, likewise opaque.
static IDS: [u32; 8] = [116, 256, 257, 1, 99_999, 262, 263, u32::MAX];

#[inline(always)]
fn text() -> &'static [u8] {
    black_box(&TEXT[..])
}

#[inline(always)]
fn ids() -> &'static [u32] {
    black_box(&IDS[..])
}

#[inline(always)]
fn tables() -> &'static Tables<'static> {
    black_box(&baked::TABLES)
}

#[inline(always)]
fn tokenizer() -> Tokenizer<'static> {
    let mut tok = Tokenizer::new(tables());
    black_box(&mut tok);
    tok
}

#[inline(always)]
fn sp_tables() -> &'static SpTables<'static> {
    black_box(&baked_sp::TABLES)
}

#[inline(always)]
fn sp_tokenizer() -> SpTokenizer<'static> {
    let mut tok = SpTokenizer::new(sp_tables());
    black_box(&mut tok);
    tok
}

#[inline(always)]
fn specials() -> Specials {
    black_box(Specials::All)
}

/// `Tokenizer::encode` (specials recognized or not), `count`, `encode_cached`,
/// `encode_part_cached`.
#[no_mangle]
#[inline(never)]
pub fn panic_check_encode() {
    let tok = tokenizer();
    let mut out = [0u32; 64];
    let out = black_box(&mut out[..]);
    black_box(tok.encode(text(), out, specials()).ok());
    black_box(tok.encode(text(), out, Specials::None).ok());
    let mut scratch = [0u32; 32];
    let scratch = black_box(&mut scratch[..]);
    black_box(tok.count(text(), scratch, specials()).ok());
    black_box(tok.tables());
    let mut cache = [picobpe::CacheEntry::EMPTY; 7];
    let cache = black_box(&mut cache[..]);
    black_box(tok.encode_cached(text(), out, specials(), cache).ok());
    black_box(
        tok.encode_part_cached(text(), out, specials(), black_box(false), cache)
            .ok(),
    );
}

/// `Tokenizer::decode`, `decoded_len`, `token_bytes`.
#[no_mangle]
#[inline(never)]
pub fn panic_check_decode() {
    let tok = tokenizer();
    let mut out = [0u8; 64];
    let out = black_box(&mut out[..]);
    black_box(tok.decode(ids(), out).ok());
    black_box(tok.decoded_len(ids()).ok());
    black_box(tok.token_bytes(black_box(7)));
}

/// `StreamEncoder` with capacities `IN`/`OUT`: `new`, `push`, `take`, `finish`, `is_done`.
#[inline(always)]
fn stream_encode<const IN: usize, const OUT: usize>() {
    let mut enc: StreamEncoder<Tokenizer<'static>, IN, OUT> =
        StreamEncoder::new(tokenizer(), specials());
    let mut out = [0u32; 16];
    let out = black_box(&mut out[..]);
    black_box(&mut enc);
    black_box(enc.push(text()).ok());
    black_box(&mut enc);
    black_box(enc.take(out).ok());
    black_box(&mut enc);
    enc.finish();
    black_box(&mut enc);
    black_box(enc.take(out).ok());
    black_box(enc.is_done());
}

/// The streaming encoder at a tiny, a medium and a large capacity (each is its own code).
#[no_mangle]
#[inline(never)]
pub fn panic_check_stream_encode() {
    stream_encode::<1, 1>();
    stream_encode::<64, 32>();
    stream_encode::<4096, 512>();
}

/// `StreamDecoder` with capacity `N`: `new`, `push`, `take`, `finish`.
#[inline(always)]
fn stream_decode<const N: usize>() {
    let mut dec: StreamDecoder<Tokenizer<'static>, N> = StreamDecoder::new(tokenizer());
    let mut out = [0u8; 16];
    let out = black_box(&mut out[..]);
    black_box(&mut dec);
    for &id in ids() {
        black_box(dec.push(id).ok());
    }
    black_box(&mut dec);
    black_box(dec.take(out));
    black_box(&mut dec);
    dec.finish();
    black_box(&mut dec);
    black_box(dec.take(out));
}

/// The streaming decoder at a tiny and a usual capacity.
#[no_mangle]
#[inline(never)]
pub fn panic_check_stream_decode() {
    stream_decode::<1>();
    stream_decode::<4>();
    stream_decode::<256>();
}

/// The lower-level public API: pre-tokenizer, pair merging, special-token search, table lookups.
#[no_mangle]
#[inline(never)]
pub fn panic_check_parts() {
    for pattern in [Pattern::Gpt2, Pattern::Cl100k, Pattern::O200k] {
        let pattern = black_box(pattern);
        black_box(pretok::next_piece(
            pattern,
            text(),
            black_box(0),
            black_box(false),
        ));
        for piece in pretok::pieces(pattern, text()) {
            black_box(piece);
        }
    }
    black_box(pretok::char_class(black_box('x')));

    let t = tables();
    let mut ids = [0u32; 64];
    let mut cand = [0u32; 64];
    black_box(bpe::merge_into(
        t,
        text(),
        black_box(&mut ids[..]),
        black_box(&mut cand[..]),
    ));

    let mask = FirstBytes::new(t.specials);
    black_box(special::find(
        t.specials,
        black_box(&mask),
        text(),
        black_box(3),
        black_box(true),
    ));

    black_box(t.n_ids());
    black_box(t.token_bytes(black_box(5)));
    black_box(t.rank(black_box(300)));
    black_box(t.special_by_id(black_box(12)));
    black_box(t.pairs.get(black_box(1), black_box(2)));
    black_box(t.pairs.len());
    black_box(t.piece(text()));
    black_box(t.pieces.len());
    black_box(t.pairs.index.slot(black_box(0x1234_5678_9abc_def0)));
    black_box(picobpe::layout::hash_bytes(text(), black_box(7)));
    black_box(picobpe::layout::hash_u64(black_box(7), black_box(9)));
}

/// `SpTokenizer::encode`, `Tokenize::encode_from` (at an opaque offset, in range or not,
/// with and without a cache), `encode_at`, `encode_part`, `count`, `merge_normalized`,
/// `is_unigram`, `tables` (the tables are opaque, so the BPE and the Unigram paths are both
/// in).
#[no_mangle]
#[inline(never)]
pub fn panic_check_sp_encode() {
    let tok = sp_tokenizer();
    let mut out = [0u32; 64];
    let out = black_box(&mut out[..]);
    black_box(tok.encode(text(), out).ok());
    let all = Specials::All;
    black_box(
        tok.encode_from(text(), black_box(11), out, all, &mut [])
            .ok(),
    );
    black_box(
        tok.encode_from(text(), black_box(usize::MAX), out, all, &mut [])
            .ok(),
    );
    let mut cache = [picobpe::CacheEntry::EMPTY; 5];
    let cache = black_box(&mut cache[..]);
    black_box(tok.encode_from(text(), black_box(7), out, all, cache).ok());
    let mut cursor = black_box(picobpe::Cursor::START);
    black_box(
        tok.encode_part(
            text(),
            black_box(true),
            black_box(false),
            &mut cursor,
            out,
            all,
            cache,
        )
        .ok(),
    );
    let mut scratch = [0u32; 32];
    let scratch = black_box(&mut scratch[..]);
    black_box(tok.count(text(), scratch, Specials::All).ok());
    black_box(tok.merge_normalized(text(), out).ok());
    let mut cursor = black_box(picobpe::Cursor::START);
    black_box(tok.encode_at(text(), &mut cursor, out, all, cache).ok());
    black_box(tok.is_unigram());
    black_box(tok.tables());
}

/// `SpTokenizer::decode` and `decode_from` (at an opaque index, in range or not).
#[no_mangle]
#[inline(never)]
pub fn panic_check_sp_decode() {
    let tok = sp_tokenizer();
    let mut out = [0u8; 64];
    let out = black_box(&mut out[..]);
    black_box(tok.decode(ids(), out).ok());
    black_box(tok.decode_from(ids(), black_box(3), out).ok());
    black_box(tok.decode_from(ids(), black_box(usize::MAX), out).ok());
}

/// `StreamEncoder` with capacities `IN`/`OUT`: `new`, `push`, `take`, `finish`, `is_done`.
#[inline(always)]
fn sp_stream_encode<const IN: usize, const OUT: usize>() {
    let mut enc: StreamEncoder<SpTokenizer<'static>, IN, OUT> =
        StreamEncoder::new(sp_tokenizer(), Specials::All);
    let mut out = [0u32; 16];
    let out = black_box(&mut out[..]);
    black_box(&mut enc);
    black_box(enc.push(text()).ok());
    black_box(&mut enc);
    black_box(enc.take(out).ok());
    black_box(&mut enc);
    enc.finish();
    black_box(&mut enc);
    black_box(enc.take(out).ok());
    black_box(enc.is_done());
}

/// The SentencePiece streaming encoder at a tiny, a medium and a large capacity.
#[no_mangle]
#[inline(never)]
pub fn panic_check_sp_stream_encode() {
    sp_stream_encode::<1, 1>();
    sp_stream_encode::<64, 32>();
    sp_stream_encode::<4096, 512>();
}

/// `StreamDecoder` with capacity `N`: `new`, `push`, `take`, `finish`.
#[inline(always)]
fn sp_stream_decode<const N: usize>() {
    let mut dec: StreamDecoder<SpTokenizer<'static>, N> = StreamDecoder::new(sp_tokenizer());
    let mut out = [0u8; 16];
    let out = black_box(&mut out[..]);
    black_box(&mut dec);
    for &id in ids() {
        black_box(dec.push(id).ok());
    }
    black_box(&mut dec);
    black_box(dec.take(out));
    black_box(&mut dec);
    dec.finish();
    black_box(&mut dec);
    black_box(dec.take(out));
}

/// The SentencePiece streaming decoder at a tiny, a small and a usual capacity.
#[no_mangle]
#[inline(never)]
pub fn panic_check_sp_stream_decode() {
    sp_stream_decode::<1>();
    sp_stream_decode::<4>();
    sp_stream_decode::<256>();
}

/// The public lookups of `SpTables`, `PieceKind::from_u8` and `score_priority`.
#[no_mangle]
#[inline(never)]
pub fn panic_check_sp_tables() {
    let t = sp_tables();
    black_box(t.n_ids());
    black_box(t.piece_bytes(black_box(300)));
    black_box(t.piece_bytes(black_box(u32::MAX)));
    black_box(t.kind(black_box(7)));
    black_box(t.is_whole(black_box(9)));
    black_box(t.piece_id(text()));
    black_box(t.byte_fallback());
    black_box(PieceKind::from_u8(black_box(5)));
    black_box(score_priority(black_box(-1.5f32)));
}

/// A `fmt::Write` sink over a fixed buffer.
struct Sink([u8; 32], usize);

impl core::fmt::Write for Sink {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        for &b in s.as_bytes() {
            let Some(slot) = self.0.get_mut(self.1) else {
                return Err(core::fmt::Error);
            };
            *slot = b;
            self.1 += 1;
        }
        Ok(())
    }
}

/// The error types' `Display`.
#[no_mangle]
#[inline(never)]
pub fn panic_check_display() {
    use core::fmt::Write;
    let mut sink = Sink([0; 32], 0);
    let e = black_box(picobpe::EncodeError::OutputFull {
        consumed: 1,
        written: 2,
    });
    let _ = black_box(write!(sink, "{e}"));
    let d = black_box(picobpe::DecodeError::UnknownId {
        position: 1,
        id: 2,
        written: 3,
    });
    let _ = black_box(write!(sink, "{d}"));
    let s = black_box(picobpe::StreamError::Finished);
    let _ = black_box(write!(sink, "{s}"));
    let e = black_box(picobpe::EncodeError::PieceTooLong {
        offset: 1,
        len: 2,
        needed: 3,
    });
    let _ = black_box(write!(sink, "{e}"));
    let d = black_box(picobpe::DecodeError::OutputFull {
        consumed: 1,
        written: 2,
    });
    let _ = black_box(write!(sink, "{d}"));
    black_box(&sink);
}

/// The Unicode normalization forms: every form, an opaque text, output buffer and `last`, and
/// the error's `Display`.
#[no_mangle]
#[inline(never)]
pub fn panic_check_normalize() {
    use picobpe::normalizer::{normalize, UnicodeForm};
    let forms = [
        UnicodeForm::Nfc,
        UnicodeForm::Nfd,
        UnicodeForm::Nfkc,
        UnicodeForm::Nfkd,
    ];
    let mut out = [0u8; 48];
    let len = black_box(48usize);
    let form = forms[black_box(0usize) & 3];
    let r = normalize(form, text(), black_box(true), &mut out[..len.min(48)]);
    black_box(&r);
    if let Err(e) = r {
        use core::fmt::Write;
        let mut sink = Sink([0; 32], 0);
        let _ = black_box(write!(sink, "{e}"));
        black_box(&sink);
    }
    black_box(&out);
    // A byte-level model that normalizes: the baked tables with a normalizer (baked tables
    // without one do not link the normalizing encoder).
    let mut t = *tables();
    t.normalizer = black_box(Some(picobpe::normalizer::TextNormalizer::new(form)));
    let tok = Tokenizer::new(&t);
    let mut ids = [0u32; 24];
    let n = black_box(24usize);
    let _ = black_box(tok.encode(text(), &mut ids[..n.min(24)], specials()));
    black_box(&ids);
    // A SentencePiece model from a `tokenizer.json` with a Unicode normalizer (sections that
    // split words, as such tables always have).
    let mut t = *sp_tables();
    t.normalizer = black_box(Some(picobpe::normalizer::TextNormalizer::new(form)));
    t.sections = black_box(picobpe::sentencepiece::Sections::UnmarkedPiecesWords);
    let tok = SpTokenizer::new(&t);
    let mut sp_ids = [0u32; 24];
    let _ = black_box(tok.encode(text(), &mut sp_ids));
    black_box(&sp_ids);
    // The same with a `Precompiled` normalizer over an opaque character map, and the map
    // applied by that rule alone (and the grapheme clusters it walks).
    let mut t = *sp_tables();
    t.normalizer = black_box(Some(picobpe::normalizer::TextNormalizer::precompiled()));
    t.charsmap = black_box(t.charsmap);
    t.sections = black_box(picobpe::sentencepiece::Sections::UnmarkedPiecesWords);
    let tok = SpTokenizer::new(&t);
    let _ = black_box(tok.encode(text(), &mut sp_ids));
    black_box(&sp_ids);
    let r = picobpe::normalizer::precompiled_normalize(
        black_box(t.charsmap),
        text(),
        black_box(false),
        black_box(&mut out),
    );
    black_box(&r);
    black_box(picobpe::normalizer::grapheme_end(
        text(),
        black_box(3),
        black_box(true),
    ));
    black_box(&out);
}

/// WordPiece tables: no bake exists yet, and none is needed: they reach the code only through
/// `black_box`, so the proof covers any tables.
static WP_TABLES: WpTables<'static> = WpTables {
    token_bytes: b"[UNK]hello##s.",
    token_offsets: &[0, 5, 10, 13, 14],
    starts: PieceMap::EMPTY,
    continuations: PieceMap::EMPTY,
    longest: 5,
    prefix: b"##",
    unk_id: 0,
    max_chars_per_word: 100,
    clean_text: true,
    handle_chinese_chars: true,
    strip_accents: true,
    lowercase: true,
    cleanup: true,
    specials: &[],
    normalizer: None,
    // Not BERT's: names the tables of the other pre-tokenizers, so their code is checked too.
    split: WordSplit::new(Spaces::Words, CharRule::Isolated, CharRule::Contiguous),
};

/// `WpTokenizer::encode`, `encode_from` (at an opaque offset, in range or not), `decode`,
/// `decode_after`, `pre_tokenize` (with an opaque callback), `WpTables::piece_id`,
/// `char_flags`.
#[no_mangle]
#[inline(never)]
pub fn panic_check_wordpiece() {
    let tables = black_box(&WP_TABLES);
    let mut tok = WpTokenizer::new(tables);
    black_box(&mut tok);
    let mut out = [0u32; 64];
    let out = black_box(&mut out[..]);
    black_box(tok.encode(text(), out, specials()).ok());
    black_box(tok.encode_from(text(), black_box(9), out, specials()).ok());
    black_box(
        tok.encode_from(text(), black_box(usize::MAX), out, specials())
            .ok(),
    );
    let mut bytes = [0u8; 64];
    let bytes = black_box(&mut bytes[..]);
    black_box(tok.decode(ids(), bytes).ok());
    black_box(tok.decode_after(ids(), bytes).ok());
    let mut chars = 0u32;
    black_box(tok.pre_tokenize(text(), |c| {
        chars = black_box(chars.wrapping_add(c.map_or(0, u32::from)))
    }));
    black_box(tables.piece_id(text(), black_box(true)));
    black_box(picobpe::wordpiece::char_flags(black_box('\u{e9}')));
}

/// The C API's exported functions and types (`capi/src/api.rs`, compiled here over the
/// opaque tables).
#[path = "../../capi/src/api.rs"]
mod capi;

/// The C API's family enum (`capi/src/model.rs`).
#[path = "../../capi/src/model.rs"]
mod model;

/// What `capi` asks of the crate including it: the family it serves.
type CApiModel = Tokenizer<'static>;

/// What `capi` asks of the crate including it: the tokenizer.
#[inline(always)]
fn c_api_model() -> CApiModel {
    Tokenizer::new(tables())
}

/// Every method of the one contract ([`Tokenize`]) and the generic streams over it, with
/// opaque offsets in range or not.
#[inline(always)]
fn contract<T: Tokenize>(m: T) {
    let mut out = [0u32; 64];
    let mut bytes = [0u8; 64];
    let mut cache = [picobpe::CacheEntry::EMPTY; 4];
    let text = text();
    let ids = ids();
    black_box(m.family());
    black_box(m.n_ids());
    for cache in [&mut cache[..], &mut []] {
        let from = black_box(text.len() / 2);
        black_box(m.encode_from(text, from, &mut out, specials(), cache));
        let mut cursor = picobpe::Cursor::START;
        black_box(m.encode_at(text, &mut cursor, &mut out, specials(), cache));
        black_box(m.encode_at(text, &mut cursor, &mut out, specials(), cache));
        black_box(Tokenize::encode_part(
            &m,
            text,
            black_box(true),
            black_box(false),
            &mut cursor,
            &mut out,
            specials(),
            cache,
        ));
    }
    black_box(Tokenize::count(&m, text, &mut out, specials()));
    black_box(m.decode_at(ids, black_box(1), &mut bytes));
    for &id in ids {
        black_box(m.decode_room(id));
        black_box(m.stream_room(id));
    }
    let mut enc: StreamEncoder<T, 64, 32> = StreamEncoder::new(m, specials());
    black_box(enc.push(text));
    enc.finish();
    black_box(enc.take(&mut out));
    black_box(enc.is_done());
    let mut dec: StreamDecoder<T, 32> = StreamDecoder::new(m);
    for &id in ids {
        black_box(dec.push(id));
    }
    dec.finish();
    black_box(dec.take(&mut bytes));
}

/// The contract over SentencePiece (what a SentencePiece build of `capi` calls).
#[no_mangle]
#[inline(never)]
pub fn panic_check_contract_sp() {
    contract(sp_tokenizer());
}

/// The contract over WordPiece (what a WordPiece build of `capi` calls), streams included.
#[no_mangle]
#[inline(never)]
pub fn panic_check_contract_wp() {
    contract(WpTokenizer::new(black_box(&WP_TABLES)));
}

/// The contract over the facade, whichever family it holds.
#[no_mangle]
#[inline(never)]
pub fn panic_check_contract_any() {
    let any: AnyTokenizer<'static> = match black_box(0u8) {
        0 => tokenizer().into(),
        1 => sp_tokenizer().into(),
        _ => WpTokenizer::new(black_box(&WP_TABLES)).into(),
    };
    contract(any);
}

/// The C API's exported functions, with opaque pointers and lengths, null ones included.
#[no_mangle]
#[inline(never)]
pub fn panic_check_capi() {
    use capi::{
        picobpe_count, picobpe_decode, picobpe_decode_from, picobpe_encode, picobpe_encode_cached,
        picobpe_encode_from, picobpe_model_family, picobpe_stream_decoder_finish,
        picobpe_stream_decoder_init, picobpe_stream_decoder_push, picobpe_stream_decoder_take,
        picobpe_stream_encoder_finish, picobpe_stream_encoder_init, picobpe_stream_encoder_is_done,
        picobpe_stream_encoder_push, picobpe_stream_encoder_take, picobpe_vocab_size,
        PicobpeProgress, PicobpeStreamDecoder, PicobpeStreamEncoder,
    };
    use core::mem::MaybeUninit;
    let mut out = [0u32; 64];
    let mut bytes = [0u8; 64];
    let mut progress = PicobpeProgress::default();
    let text = text();
    let ids = ids();
    let out_ptr = black_box(out.as_mut_ptr());
    let bytes_ptr = black_box(bytes.as_mut_ptr());
    let progress_ptr = black_box(&mut progress as *mut PicobpeProgress);
    let null = black_box(core::ptr::null_mut::<PicobpeProgress>());
    // SAFETY: every pointer is valid for the length passed with it (or null with length 0,
    // or a null `progress`, which the API refuses); the stream states are zeroed storage of
    // their types (the API refuses an uninitialized one).
    unsafe {
        black_box(picobpe_encode(
            text.as_ptr(),
            text.len(),
            black_box(true),
            out_ptr,
            black_box(64),
            progress_ptr,
        ));
        black_box(picobpe_encode(
            text.as_ptr(),
            text.len(),
            black_box(false),
            out_ptr,
            black_box(64),
            null,
        ));
        black_box(picobpe_encode_from(
            text.as_ptr(),
            text.len(),
            black_box(text.len() / 2),
            black_box(true),
            out_ptr,
            black_box(64),
            progress_ptr,
        ));
        black_box(picobpe_decode_from(
            ids.as_ptr(),
            ids.len(),
            black_box(1),
            bytes_ptr,
            black_box(64),
            progress_ptr,
        ));
        black_box(picobpe_count(
            text.as_ptr(),
            text.len(),
            black_box(true),
            out_ptr,
            black_box(64),
            progress_ptr,
        ));
        black_box(picobpe_decode(
            ids.as_ptr(),
            ids.len(),
            bytes_ptr,
            black_box(64),
            progress_ptr,
        ));
        black_box(picobpe_decode(
            core::ptr::null(),
            black_box(0),
            bytes_ptr,
            black_box(0),
            progress_ptr,
        ));
        // The piece cache: opaque memory of an opaque length (null with 0 included).
        let mut cache = [0u64; 8 * 24];
        let cache_ptr = black_box(cache.as_mut_ptr().cast::<core::ffi::c_void>());
        black_box(picobpe_encode_cached(
            text.as_ptr(),
            text.len(),
            black_box(0),
            black_box(true),
            cache_ptr,
            black_box(8 * 8 * 24),
            out_ptr,
            black_box(64),
            progress_ptr,
        ));
        black_box(picobpe_encode_cached(
            text.as_ptr(),
            text.len(),
            black_box(text.len() / 2),
            black_box(false),
            black_box(core::ptr::null_mut()),
            black_box(0),
            out_ptr,
            black_box(64),
            progress_ptr,
        ));
        // The streams: state storage the optimiser knows nothing about (it may be
        // uninitialized, or the other kind's), every call on it.
        let mut enc = MaybeUninit::<PicobpeStreamEncoder>::zeroed();
        let enc_ptr = black_box(enc.as_mut_ptr());
        black_box(picobpe_stream_encoder_init(enc_ptr, black_box(true)));
        let enc_ptr = black_box(enc_ptr);
        black_box(picobpe_stream_encoder_push(
            enc_ptr,
            text.as_ptr(),
            text.len(),
            progress_ptr,
        ));
        black_box(picobpe_stream_encoder_take(
            enc_ptr,
            out_ptr,
            black_box(64),
            progress_ptr,
        ));
        black_box(picobpe_stream_encoder_finish(enc_ptr));
        black_box(picobpe_stream_encoder_take(
            enc_ptr,
            out_ptr,
            black_box(64),
            progress_ptr,
        ));
        black_box(picobpe_stream_encoder_is_done(enc_ptr));
        let mut dec = MaybeUninit::<PicobpeStreamDecoder>::zeroed();
        let dec_ptr = black_box(dec.as_mut_ptr());
        black_box(picobpe_stream_decoder_init(dec_ptr));
        let dec_ptr = black_box(dec_ptr);
        for &id in ids {
            black_box(picobpe_stream_decoder_push(dec_ptr, id));
        }
        black_box(picobpe_stream_decoder_take(
            dec_ptr,
            bytes_ptr,
            black_box(64),
            progress_ptr,
        ));
        black_box(picobpe_stream_decoder_finish(dec_ptr));
        black_box(picobpe_stream_decoder_take(
            dec_ptr,
            bytes_ptr,
            black_box(64),
            progress_ptr,
        ));
    }
    black_box(picobpe_vocab_size());
    black_box(picobpe_model_family());
    black_box(progress);
}

/// Entry point: calls every check, so the linker keeps them (and everything they reach).
#[no_mangle]
pub extern "C" fn _start() -> ! {
    panic_check_capi();
    panic_check_contract_sp();
    panic_check_contract_wp();
    panic_check_contract_any();
    panic_check_encode();
    panic_check_decode();
    panic_check_stream_encode();
    panic_check_stream_decode();
    panic_check_parts();
    panic_check_sp_encode();
    panic_check_sp_decode();
    panic_check_sp_stream_encode();
    panic_check_sp_stream_decode();
    panic_check_sp_tables();
    panic_check_wordpiece();
    panic_check_normalize();
    panic_check_display();
    loop {
        black_box(());
    }
}

#[cfg(not(feature = "diagnose"))]
extern "C" {
    /// Defined nowhere: a reference to it (from the panic handler) fails the link.
    fn picobpe_panic_is_reachable() -> !;
}

/// With `diagnose`, the symbol exists so the binary links and can be inspected.
#[cfg(feature = "diagnose")]
#[no_mangle]
#[inline(never)]
pub unsafe extern "C" fn picobpe_panic_is_reachable() -> ! {
    loop {
        black_box(());
    }
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: never runs when the link succeeds without `diagnose` (the symbol does not exist);
    // with `diagnose` it is the infinite loop above.
    unsafe { picobpe_panic_is_reachable() }
}
