//! The baked WordPiece model (builds of a WordPiece model, `cfg(picobpe_wp)`) and what its
//! tables occupy in flash.
//!
//! `TABLES` is generated at build time by `picobpe-build` from the model file named by
//! `PICOBPE_MODEL` (see `build.rs`): one `WpTables` over `static` arrays and two PtrHash
//! indexes (word-start and continuation pieces), so it lives in flash and costs no RAM. Same
//! interface as the byte-level `tables` module (`TABLES`, `MODEL_FILE`, `tokenizer`,
//! `special_id`, `table_bytes`), so the binary and the tests name it the same way.

use core::mem::{size_of, size_of_val};

use picobpe::{PieceMap, WpTables, WpTokenizer};

#[allow(clippy::all, missing_docs, dead_code, long_running_const_eval)]
mod baked {
    include!(concat!(env!("OUT_DIR"), "/picobpe_tables.rs"));
}

pub use baked::TABLES;

/// File name of the baked model.
pub const MODEL_FILE: &str = env!("PICOBPE_MODEL_FILE");

/// Length, in `u32`, of the buffer the on-target tests give a one-shot encode of a reference
/// vector (`cargo xtask firmware-test` embeds only the records whose ids fit, and writes this
/// figure into the vector file, which the tests check). WordPiece needs no work area beyond
/// the ids: the word being matched is on the stack. Room for the ids of the 8 KB bench text
/// too; the same on both machines (16 KiB).
pub const IDS: usize = 4096;

/// Length of the buffer the on-target tests decode a reference vector into (bytes): at least
/// the decoded length of every embedded record (the xtask bounds it by a space and the
/// vocabulary entry per id) and of the bench text's ids (8,424 bytes: decode puts a space
/// between words, punctuation included).
pub const DECODE_BYTES: usize = 12 * 1024;

/// A tokenizer over the baked tables.
pub fn tokenizer() -> WpTokenizer<'static> {
    WpTokenizer::new(&TABLES)
}

/// The id of the added token `text` (`[CLS]`, `[SEP]`, ...), if the model has it.
pub fn special_id(text: &str) -> Option<u32> {
    TABLES
        .specials
        .iter()
        .find(|s| s.text == text)
        .map(|s| s.id)
}

/// Number of continuation pieces (vocabulary entries with the `##` prefix).
pub fn n_continuations() -> usize {
    TABLES.continuations.len()
}

/// Bytes each table occupies, measured from the slices the baked `WpTables` value points at.
#[derive(Clone, Copy, Debug, Default)]
pub struct TableBytes {
    /// Concatenated vocabulary entries.
    pub token_bytes: usize,
    /// `u32` offsets into `token_bytes`.
    pub token_offsets: usize,
    /// Word-start piece map: index (pilots, remap) and ids (keys are the ids' bytes in
    /// `token_bytes`).
    pub starts: usize,
    /// Continuation piece map, likewise.
    pub continuations: usize,
    /// Added tokens (entries and texts) and the continuation prefix.
    pub other: usize,
    /// The `WpTables` struct itself.
    pub header: usize,
    /// Slices that do not lie in flash (expected: 0).
    pub outside_flash: usize,
}

impl TableBytes {
    /// Sum of all tables.
    pub fn total(&self) -> usize {
        self.token_bytes
            + self.token_offsets
            + self.starts
            + self.continuations
            + self.other
            + self.header
    }
}

/// Start of RAM on both machines; flash (code memory) lies below it.
const RAM_START: usize = 0x2000_0000;

fn in_flash<T>(s: &[T]) -> bool {
    s.is_empty() || (s.as_ptr() as usize) < RAM_START
}

fn map_bytes(m: &PieceMap<'_>) -> usize {
    size_of_val(m.ids)
        + size_of_val(m.keys)
        + size_of_val(m.index.pilots)
        + size_of_val(m.index.remap)
}

fn map_outside(m: &PieceMap<'_>) -> usize {
    [
        (in_flash(m.ids), size_of_val(m.ids)),
        (in_flash(m.keys), size_of_val(m.keys)),
        (in_flash(m.index.pilots), size_of_val(m.index.pilots)),
        (in_flash(m.index.remap), size_of_val(m.index.remap)),
    ]
    .iter()
    .filter(|(ok, _)| !ok)
    .map(|(_, n)| n)
    .sum()
}

/// Measures the flash taken by `t`'s tables.
pub fn table_bytes(t: &WpTables<'_>) -> TableBytes {
    let specials = size_of_val(t.specials) + t.specials.iter().map(|s| s.text.len()).sum::<usize>();
    let mut b = TableBytes {
        token_bytes: t.token_bytes.len(),
        token_offsets: size_of_val(t.token_offsets),
        starts: map_bytes(&t.starts),
        continuations: map_bytes(&t.continuations),
        other: specials + t.prefix.len(),
        header: size_of::<WpTables<'_>>(),
        ..TableBytes::default()
    };
    let mut outside = |ok: bool, n: usize| {
        if !ok {
            b.outside_flash += n
        }
    };
    outside(in_flash(t.token_bytes), t.token_bytes.len());
    outside(in_flash(t.token_offsets), size_of_val(t.token_offsets));
    outside(in_flash(t.specials), size_of_val(t.specials));
    outside(in_flash(t.prefix), t.prefix.len());
    for s in t.specials {
        outside(in_flash(s.text.as_bytes()), s.text.len());
    }
    b.outside_flash += map_outside(&t.starts) + map_outside(&t.continuations);
    b
}
