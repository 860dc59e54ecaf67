//! Support code shared by the firmware binary and the on-target tests.
#![no_std]

pub mod icount;
pub mod stack;
// The baked model: byte-level BPE (`Tables`, `Tokenizer`), SentencePiece BPE (`SpTables`,
// `SpTokenizer`) or WordPiece (`WpTables`, `WpTokenizer`), by the kind of the model build.rs
// baked.
#[cfg(not(any(picobpe_sp, picobpe_wp)))]
pub mod tables;
#[cfg(picobpe_sp)]
#[path = "sp_tables.rs"]
pub mod tables;
#[cfg(picobpe_wp)]
#[path = "wp_tables.rs"]
pub mod tables;
pub mod texts;
pub mod vectors;

/// The QEMU machine this build is for (`lm3s6965evb` or `mps2-an385`), chosen by cargo feature.
pub const MACHINE: &str = env!("PICOBPE_MACHINE");

// Linked for their side effects: the vector table and reset handler (cortex-m-rt) and the
// single-core critical-section implementation (cortex-m), which the test binary needs too.
use cortex_m as _;
use cortex_m_rt as _;
