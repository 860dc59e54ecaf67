//! A C API over picobpe's core for C firmware and kernels: encode, count and decode with the
//! tables baked into this library (`build.rs`: the model named by `PICOBPE_MODEL`, gpt2 by
//! default), into caller buffers, without allocation; encode with a piece cache in caller
//! memory (`picobpe_encode_cached`); and a streaming encoder and decoder whose state is caller
//! storage of a size fixed in the header (`PicobpeStreamEncoder`, `PicobpeStreamDecoder`: the
//! core's `StreamEncoder<256, 512>` and `StreamDecoder<256>`, set up by
//! `picobpe_stream_encoder_init` / `picobpe_stream_decoder_init`, then `_push`, `_take`,
//! `_finish`).
//!
//! Every function returns a `PicobpeStatus`; those that move text or ids report how far they
//! got through a `PicobpeProgress`, with the core's resume contract: on
//! `PICOBPE_STATUS_OUTPUT_FULL`, drain `out[..written]` and call again with the input from
//! `consumed` on (for a stream push: take, then push the rest of the chunk); on
//! `PICOBPE_STATUS_PIECE_TOO_LONG`, call again from `consumed` with an output buffer of
//! `needed` elements. Pointers may be null only when their length is 0, and buffers must not
//! overlap; a null pointer with a non-zero length, a null `progress`, or a stream state that is
//! null, misaligned or zeroed (never initialized), is `PICOBPE_STATUS_INVALID_ARGUMENT`. No function panics: `cargo xtask panic-check` compiles
//! `src/api.rs` into its proof with every other entry point.
//!
//! The header `include/picobpe.h` is generated from this file by cbindgen
//! (`tests/c_api.rs` checks it is current; `PICOBPE_UPDATE_HEADER=1` rewrites it).
#![cfg_attr(target_os = "none", no_std)]
#![allow(unsafe_code)]

use picobpe::{Tables, Tokenizer};

mod baked {
    include!(concat!(env!("OUT_DIR"), "/picobpe_tables.rs"));
}

mod api;

pub use api::*;

/// The baked tables.
fn c_api_tables() -> &'static Tables<'static> {
    &baked::TABLES
}

/// The tokenizer over the baked tables.
fn c_api_tokenizer() -> Tokenizer<'static> {
    Tokenizer::new(&baked::TABLES)
}

/// The panic handler of a bare-metal build: unreachable (the core has no reachable panic and
/// this layer none of its own; `cargo xtask panic-check` proves it for the core and
/// for `api.rs`).
#[cfg(target_os = "none")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    loop {}
}
