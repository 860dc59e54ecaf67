//! The baked SentencePiece model, BPE or Unigram (builds of a SentencePiece model,
//! `cfg(picobpe_sp)`), and what its tables occupy in flash.
//!
//! `TABLES` is generated at build time by `picobpe-build` from the model file named by
//! `PICOBPE_MODEL` (see `build.rs`): one `SpTables` over `static` arrays and a PtrHash index,
//! so it lives in flash and costs no RAM. Same interface as the byte-level `tables` module
//! (`TABLES`, `MODEL_FILE`, `tokenizer`, `table_bytes`), so the binary and the tests name it
//! the same way.

use core::mem::{size_of, size_of_val};

use picobpe::sentencepiece::{PieceKind, SpAlgorithm};
use picobpe::{SpTables, SpTokenizer};

#[allow(clippy::all, missing_docs, dead_code, long_running_const_eval)]
mod baked {
    include!(concat!(env!("OUT_DIR"), "/picobpe_tables.rs"));
}

pub use baked::TABLES;

/// File name of the baked model.
pub const MODEL_FILE: &str = env!("PICOBPE_MODEL_FILE");

/// Length, in `u32`, of the buffer the on-target tests give a one-shot encode of a reference
/// vector: its ids plus the work area of its longest word (`cargo xtask firmware-test` embeds
/// only the records that fit, and writes this figure into the vector file, which the tests
/// check). 24 KiB of the lm3s6965evb's 64 KiB of RAM; 384 KiB on the mps2-an385.
#[cfg(feature = "lm3s6965evb")]
pub const WORK_IDS: usize = 6 * 1024;
/// See above.
#[cfg(not(feature = "lm3s6965evb"))]
pub const WORK_IDS: usize = 96 * 1024;

/// Length of the buffer the on-target tests decode a reference vector into (bytes).
#[cfg(feature = "lm3s6965evb")]
pub const DECODE_BYTES: usize = 8 * 1024;
/// See above.
#[cfg(not(feature = "lm3s6965evb"))]
pub const DECODE_BYTES: usize = 64 * 1024;

/// Input capacity (bytes) of the streaming encoder (`StreamEncoder`) the on-target tests run
/// the reference vectors through. It holds a word until the next one starts: the longest word
/// and one byte more. 1 KiB on the lm3s6965evb; 16 KiB on the mps2-an385, for the 15,000-byte
/// words of `sp_edge/cjk-run-5000-*`. A record with a longer word, or one that needs more than
/// [`STREAM_OUT`], stops with the documented `StreamError`, which the test checks and counts.
#[cfg(feature = "lm3s6965evb")]
pub const STREAM_IN: usize = 1024;
/// See above.
#[cfg(not(feature = "lm3s6965evb"))]
pub const STREAM_IN: usize = 16 * 1024;

/// Id capacity of that streaming encoder: the ids and the merge work area of a word. The
/// encoder is built on the stack, where it takes twice its size while being built: 2,048 ids
/// on the lm3s6965evb (9 KiB with the input; the test peaks at 20 KiB of the 30 KiB of stack),
/// so the nine `sp_edge` records with a word of 220 characters or more stop there; on the
/// mps2-an385 [`WORK_IDS`], the room of the one-shot encode, which every embedded record fits.
#[cfg(feature = "lm3s6965evb")]
pub const STREAM_OUT: usize = 2048;
/// See above.
#[cfg(not(feature = "lm3s6965evb"))]
pub const STREAM_OUT: usize = WORK_IDS;

/// A tokenizer over the baked tables.
pub fn tokenizer() -> SpTokenizer<'static> {
    SpTokenizer::new(&TABLES)
}

/// The model's algorithm, as the demo and `FIG algorithm` name it: `BPE` or `Unigram`.
pub fn algorithm() -> &'static str {
    match TABLES.algorithm {
        SpAlgorithm::Bpe => "BPE",
        SpAlgorithm::Unigram { .. } => "Unigram",
    }
}

/// Whether decode(encode(text)) gives any text back (with one U+FFFD per malformed byte): with
/// byte fallback and extra whitespace kept (sp4096, Mistral). Without byte fallback a symbol
/// outside the vocabulary decodes as ` ⁇ `, and `remove_extra_whitespaces` collapses spaces
/// (ug8000).
pub fn round_trips() -> bool {
    TABLES.byte_fallback() && !TABLES.remove_extra_whitespaces
}

/// Number of ids of kind `kind`.
pub fn count_kind(kind: PieceKind) -> usize {
    (0..TABLES.n_ids() as u32)
        .filter(|&id| TABLES.kind(id) == Some(kind))
        .count()
}

/// Bytes each table occupies, measured from the slices the baked `SpTables` value points at.
#[derive(Clone, Copy, Debug, Default)]
pub struct TableBytes {
    /// Concatenated piece bytes.
    pub token_bytes: usize,
    /// `u32` offsets into `token_bytes`.
    pub token_offsets: usize,
    /// One kind byte per id.
    pub kinds: usize,
    /// One `u32` merge priority per id.
    pub priorities: usize,
    /// Piece map: index (pilots, remap) and ids (keys are the ids' bytes in `token_bytes`).
    pub pieces: usize,
    /// Unigram's piece filter (pieces and their prefixes; empty for BPE).
    pub filter: usize,
    /// Byte-piece ids, the unknown surface and the user-defined ids.
    pub other: usize,
    /// The normalizer's character map (`precompiled_charsmap`: double-array units and
    /// replacement strings, or the compact form's arrays; empty for the `identity` rule).
    pub charsmap: usize,
    /// The `SpTables` struct itself.
    pub header: usize,
    /// Slices that do not lie in flash (expected: 0).
    pub outside_flash: usize,
}

impl TableBytes {
    /// Sum of all tables.
    pub fn total(&self) -> usize {
        self.token_bytes
            + self.token_offsets
            + self.kinds
            + self.priorities
            + self.pieces
            + self.filter
            + self.other
            + self.charsmap
            + self.header
    }
}

/// Start of RAM on both machines; flash (code memory) lies below it.
const RAM_START: usize = 0x2000_0000;

fn in_flash<T>(s: &[T]) -> bool {
    s.is_empty() || (s.as_ptr() as usize) < RAM_START
}

/// Measures the flash taken by `t`'s tables.
pub fn table_bytes(t: &SpTables<'_>) -> TableBytes {
    let index = &t.pieces.index;
    let mut b = TableBytes {
        token_bytes: t.token_bytes.len(),
        token_offsets: size_of_val(t.token_offsets),
        kinds: t.kinds.len(),
        priorities: size_of_val(t.priorities),
        pieces: size_of_val(t.pieces.ids)
            + size_of_val(t.pieces.keys)
            + size_of_val(index.pilots)
            + size_of_val(index.remap),
        filter: size_of_val(t.piece_filter),
        other: size_of_val(t.byte_ids) + t.unk_surface.len() + size_of_val(t.user_defined),
        charsmap: size_of_val(t.charsmap.units)
            + t.charsmap.strings.len()
            + size_of_val(t.charsmap.runs)
            + size_of_val(t.charsmap.run_values)
            + size_of_val(t.charsmap.sequences)
            + size_of_val(t.charsmap.sequence_values)
            + size_of_val(t.charsmap.tails)
            + size_of_val(t.charsmap.ascii_pairs)
            + t.charsmap.bmp_index.len()
            + size_of_val(t.charsmap.bmp_blocks),
        header: size_of::<SpTables<'_>>(),
        ..TableBytes::default()
    };
    let mut outside = |ok: bool, n: usize| {
        if !ok {
            b.outside_flash += n
        }
    };
    outside(in_flash(t.token_bytes), t.token_bytes.len());
    outside(in_flash(t.token_offsets), size_of_val(t.token_offsets));
    outside(in_flash(t.kinds), t.kinds.len());
    outside(in_flash(t.priorities), size_of_val(t.priorities));
    outside(in_flash(t.pieces.ids), size_of_val(t.pieces.ids));
    outside(in_flash(t.pieces.keys), size_of_val(t.pieces.keys));
    outside(in_flash(index.pilots), size_of_val(index.pilots));
    outside(in_flash(index.remap), size_of_val(index.remap));
    outside(in_flash(t.byte_ids), size_of_val(t.byte_ids));
    outside(in_flash(t.unk_surface), t.unk_surface.len());
    outside(in_flash(t.user_defined), size_of_val(t.user_defined));
    outside(in_flash(t.piece_filter), size_of_val(t.piece_filter));
    outside(in_flash(t.charsmap.units), size_of_val(t.charsmap.units));
    outside(in_flash(t.charsmap.strings), t.charsmap.strings.len());
    for part in [
        t.charsmap.runs,
        t.charsmap.run_values,
        t.charsmap.sequences,
        t.charsmap.sequence_values,
        t.charsmap.tails,
    ] {
        outside(in_flash(part), size_of_val(part));
    }
    outside(in_flash(t.charsmap.bmp_index), t.charsmap.bmp_index.len());
    for part in [t.charsmap.ascii_pairs, t.charsmap.bmp_blocks] {
        outside(in_flash(part), size_of_val(part));
    }
    b
}
