//! On-target tests, one QEMU boot per test (`cargo xtask firmware-test`).
//!
//! The tests follow the kind of the baked model: `on_target/byte_level.rs` for a byte-level
//! BPE model (`picobpe::Tokenizer`), `on_target/sentencepiece.rs` for a SentencePiece BPE model
//! (`picobpe::SpTokenizer`, `cfg(picobpe_sp)`, set by build.rs), `on_target/wordpiece.rs` for a
//! WordPiece model (`picobpe::WpTokenizer`, `cfg(picobpe_wp)`). Each is included here, so the
//! test names are `tests::<name>` either way.
#![no_std]
#![no_main]

/// Prints the panic message over semihosting, then exits with 134 (abort), which the runner
/// reads as a failed test.
#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    semihosting::eprintln!("panic: {info}");
    semihosting::process::abort()
}

#[cfg(not(any(picobpe_sp, picobpe_wp)))]
include!("on_target/byte_level.rs");

#[cfg(picobpe_sp)]
include!("on_target/sentencepiece.rs");

#[cfg(picobpe_wp)]
include!("on_target/wordpiece.rs");
