//! The baked model and what its tables occupy in flash.
//!
//! `TABLES` is generated at build time by `picobpe-build` from the model file named by
//! `PICOBPE_MODEL` (see `build.rs`): PtrHash indexes and flat arrays, all `static`, so they
//! live in flash and cost no RAM.

use core::mem::{size_of, size_of_val};

use picobpe::{PtrIndex, Tables, Tokenizer};

#[allow(clippy::all, missing_docs, dead_code, long_running_const_eval)]
mod baked {
    include!(concat!(env!("OUT_DIR"), "/picobpe_tables.rs"));
}

pub use baked::TABLES;

/// File name of the baked model.
pub const MODEL_FILE: &str = env!("PICOBPE_MODEL_FILE");

/// A tokenizer over the baked tables.
pub fn tokenizer() -> Tokenizer<'static> {
    Tokenizer::new(&TABLES)
}

/// The id of the special token `text`, if the model has it.
pub fn special_id(text: &str) -> Option<u32> {
    TABLES
        .specials
        .iter()
        .find(|s| s.text == text)
        .map(|s| s.id)
}

/// Bytes each table occupies, measured from the slices the baked `Tables` value points at.
#[derive(Clone, Copy, Debug, Default)]
pub struct TableBytes {
    /// Concatenated token bytes.
    pub token_bytes: usize,
    /// `u32` offsets into `token_bytes`.
    pub token_offsets: usize,
    /// Byte → id array.
    pub byte_ids: usize,
    /// Merge map: index (pilots, remap), keys and merged ids.
    pub pairs: usize,
    /// Rank array (empty when ranks follow ids).
    pub ranks: usize,
    /// Whole-piece map: index (pilots, remap) and ids (keys are the ids' bytes in
    /// `token_bytes`).
    pub pieces: usize,
    /// Special-token entries and texts.
    pub specials: usize,
    /// Compiled split patterns (a `tokenizer.json` pre-tokenizer none of the hand-rolled
    /// splitters implements): their automata's words and entries.
    pub splits: usize,
    /// The `Tables` struct itself.
    pub header: usize,
    /// Slices that do not lie in flash (expected: 0).
    pub outside_flash: usize,
}

impl TableBytes {
    /// Sum of all tables.
    pub fn total(&self) -> usize {
        self.token_bytes
            + self.token_offsets
            + self.byte_ids
            + self.pairs
            + self.ranks
            + self.pieces
            + self.specials
            + self.splits
            + self.header
    }
}

/// Start of RAM on both machines; flash (code memory) lies below it.
const RAM_START: usize = 0x2000_0000;

fn in_flash<T>(s: &[T]) -> bool {
    (s.as_ptr() as usize) < RAM_START
}

fn index_bytes(i: &PtrIndex<'_>) -> usize {
    size_of_val(i.pilots) + size_of_val(i.remap)
}

/// Measures the flash taken by `t`'s tables.
pub fn table_bytes(t: &Tables<'_>) -> TableBytes {
    let mut b = TableBytes {
        token_bytes: t.token_bytes.len(),
        token_offsets: size_of_val(t.token_offsets),
        byte_ids: size_of::<[u32; 256]>(),
        ranks: size_of_val(t.ranks),
        header: size_of::<Tables<'_>>(),
        ..TableBytes::default()
    };
    let mut outside = |ok: bool, n: usize| {
        if !ok {
            b.outside_flash += n
        }
    };
    outside(in_flash(t.token_bytes), t.token_bytes.len());
    outside(in_flash(t.token_offsets), b.token_offsets);
    outside(in_flash(t.ranks), b.ranks);
    outside(in_flash(t.pairs.entries), size_of_val(t.pairs.entries));
    outside(in_flash(t.pairs.index.pilots), t.pairs.index.pilots.len());
    b.pairs = size_of_val(t.pairs.entries) + index_bytes(&t.pairs.index);
    outside(in_flash(t.pieces.ids), size_of_val(t.pieces.ids));
    outside(in_flash(t.pieces.keys), size_of_val(t.pieces.keys));
    b.pieces =
        size_of_val(t.pieces.ids) + size_of_val(t.pieces.keys) + index_bytes(&t.pieces.index);
    b.specials = size_of_val(t.specials) + t.specials.iter().map(|s| s.text.len()).sum::<usize>();
    b.splits = size_of_val(t.splits);
    for split in t.splits {
        let p = split.parts();
        for words in [p.flags, p.classes, p.states, p.rows, p.transitions] {
            outside(in_flash(words), size_of_val(words));
            b.splits += size_of_val(words);
        }
    }
    b
}
