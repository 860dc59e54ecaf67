//! A C API over picobpe's core for C firmware and kernels: encode, count and decode with the
//! tables baked into this library (`build.rs`: the model named by `PICOBPE_MODEL`, gpt2 by
//! default; a byte-level BPE model, tiktoken's ids, a SentencePiece BPE or Unigram model,
//! sentencepiece's ids, or a WordPiece model, tokenizers' ids: `picobpe_model_family` says
//! which), into caller buffers, without
//! allocation; encode with a cache in caller memory (`picobpe_encode_cached`); and a streaming
//! encoder and decoder whose state is caller storage of a size fixed in the header
//! (`PicobpeStreamEncoder`, `PicobpeStreamDecoder`: the core's `StreamEncoder<256, 512>` and
//! `StreamDecoder<256>` over the model's family, set up by
//! `picobpe_stream_encoder_init` / `picobpe_stream_decoder_init`, then `_push`, `_take`,
//! `_finish`). The header is the same whatever the model (`src/model.rs` holds what differs).
//!
//! Every function returns a `PicobpeStatus`; those that move text or ids report how far they
//! got through a `PicobpeProgress`, with the core's resume contract: on
//! `PICOBPE_STATUS_OUTPUT_FULL`, drain `out[..written]` and continue from `consumed`
//! (`picobpe_encode_from`, `picobpe_decode_from`; for a stream push: take, then push the rest
//! of the chunk); on `PICOBPE_STATUS_PIECE_TOO_LONG`, continue from `consumed` with an output
//! buffer of `needed` elements. Pointers may be null only when their length is 0, and buffers
//! must not overlap; a null pointer with a non-zero length, a null `progress`, or a stream
//! state that is null, misaligned or zeroed (never initialized), is
//! `PICOBPE_STATUS_INVALID_ARGUMENT`. No function panics: `cargo xtask panic-check` compiles
//! `src/api.rs` and `src/model.rs` into its proof with every other entry point.
//!
//! The header `include/picobpe.h` is generated from this file by cbindgen
//! (`tests/c_api.rs` checks it is current; `PICOBPE_UPDATE_HEADER=1` rewrites it).
#![cfg_attr(target_os = "none", no_std)]
#![allow(unsafe_code)]

mod baked {
    include!(concat!(env!("OUT_DIR"), "/picobpe_tables.rs"));
}

mod api;
mod model;

pub use api::*;

/// The tokenizer of the baked model's family (`build.rs` sets `cfg(picobpe_capi_sp)` for a
/// SentencePiece model, `cfg(picobpe_capi_wp)` for a WordPiece model).
#[cfg(not(any(picobpe_capi_sp, picobpe_capi_wp)))]
type CApiModel = picobpe::Tokenizer<'static>;
/// The tokenizer of the baked model's family (see above).
#[cfg(picobpe_capi_sp)]
type CApiModel = picobpe::SpTokenizer<'static>;
/// The tokenizer of the baked model's family (see above).
#[cfg(picobpe_capi_wp)]
type CApiModel = picobpe::WpTokenizer<'static>;

/// The tokenizer over the baked tables.
#[inline(always)]
fn c_api_model() -> CApiModel {
    CApiModel::new(&baked::TABLES)
}

/// The panic handler of a bare-metal build: unreachable (the core has no reachable panic and
/// this layer none of its own; `cargo xtask panic-check` proves it for the core and
/// for `api.rs`).
#[cfg(target_os = "none")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    loop {}
}
