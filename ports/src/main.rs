//! picobpe on more targets: Cortex-M0 (`thumbv6m-none-eabi`: no compare-and-swap, no hardware
//! divide) and RISC-V (`riscv32imac-unknown-none-elf`), under QEMU.
//!
//! The run checks every embedded reference record (the vector sets of the Cortex-M3 on-target
//! tests) with the tokenizer of the baked model's family, a module of its own chosen by
//! `build.rs` from the model:
//! - byte-level BPE (`byte_level.rs`, `picobpe::Tokenizer`): tiktoken's ids for gpt2 and
//!   cl100k_base, Hugging Face tokenizers' for the small trained model and llama3-8k;
//! - SentencePiece BPE or Unigram (`sentencepiece.rs`, `cfg(picobpe_sp)`,
//!   `picobpe::SpTokenizer`): sentencepiece's ids and decoded texts for sp4096, mistral and
//!   ug8000;
//! - WordPiece (`wordpiece.rs`, `cfg(picobpe_wp)`, `picobpe::WpTokenizer`): tokenizers' ids
//!   (and decoded texts of the probes) for bert-cased-8k and minilm.
//!
//! Each checks the reference ids against encode (one-shot or through the largest buffer the
//! machine has), encode resumed through a 7-id buffer (`encode_from`, and SentencePiece's
//! cursor), `count` (where the tokenizer has one) and decode against the reference text (where
//! the record has one); the module docs list the checks. `check.rs` holds what they share.
//!
//! Then it prints `FIG <key> <value>` lines for `cargo xtask footprint`: the peak stack of
//! encode and decode and, under QEMU `-icount shift=0`, guest instructions to encode an 8 KB
//! English text. Exit status 0 only when every check passes.
#![no_std]
#![no_main]

#[path = "../../firmware-example/src/vectors.rs"]
#[allow(dead_code)]
mod vectors;

#[path = "../../firmware-example/src/stack.rs"]
#[allow(dead_code)]
mod stack;

#[path = "../../firmware-example/src/texts.rs"]
#[allow(dead_code)]
mod texts;

mod check;
mod instret;

/// The checks and figures of the baked model's family.
#[cfg(not(any(picobpe_sp, picobpe_wp)))]
#[path = "byte_level.rs"]
mod family;
/// The checks and figures of the baked model's family.
#[cfg(picobpe_sp)]
#[path = "sentencepiece.rs"]
mod family;
/// The checks and figures of the baked model's family.
#[cfg(picobpe_wp)]
#[path = "wordpiece.rs"]
mod family;

use semihosting::{println, process};

/// The QEMU machine this build is for.
const MACHINE: &str = env!("PICOBPE_MACHINE");
/// File name of the baked model.
const MODEL_FILE: &str = env!("PICOBPE_MODEL_FILE");

/// The family's encode buffer (`family::IDS` ids) and decode buffer (`family::BYTES`).
static mut IDS_BUF: [u32; family::IDS] = [0; family::IDS];
static mut BYTES_BUF: [u8; family::BYTES] = [0; family::BYTES];

#[cfg(target_arch = "arm")]
#[cortex_m_rt::entry]
fn main() -> ! {
    process::exit(if run() { 0 } else { 1 })
}

#[cfg(target_arch = "riscv32")]
#[riscv_rt::entry]
fn main() -> ! {
    process::exit(if run() { 0 } else { 1 })
}

/// The core has no reachable panic (`cargo xtask panic-check`); should this program's own
/// code panic, say so and fail the run.
#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    println!("panic: {info}");
    process::exit(101)
}

/// The target's name as rustc knows it.
fn target() -> &'static str {
    if cfg!(target_arch = "riscv32") {
        "riscv32imac-unknown-none-elf"
    } else {
        "thumbv6m-none-eabi"
    }
}

fn run() -> bool {
    // SAFETY: `run` is called once, from the entry point; nothing else touches the buffers.
    let (ids, bytes) = unsafe {
        (
            &mut *core::ptr::addr_of_mut!(IDS_BUF),
            &mut *core::ptr::addr_of_mut!(BYTES_BUF),
        )
    };
    let (kind, n_ids) = family::describe();
    println!(
        "picobpe on {MACHINE} ({}), model {MODEL_FILE} ({kind}): {n_ids} ids",
        target()
    );
    let ok = family::conformance(ids, bytes);
    family::figures(ids, bytes) && ok
}
