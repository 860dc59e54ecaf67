//! Guest instruction counts under QEMU `-icount shift=0` (1 ns of virtual time per instruction).
//!
//! On Arm, SysTick counts that virtual clock and is calibrated against a loop of known length
//! (the Cortex-M3 firmware's `icount.rs`). On RISC-V, the `minstret` counter is read directly:
//! with `-icount`, QEMU derives it from the instruction count. Without `-icount` neither figure
//! means anything; `cargo xtask ports-test` always passes the option.

#[cfg(target_arch = "arm")]
#[path = "../../firmware-example/src/icount.rs"]
#[allow(dead_code)]
mod icount;

/// Runs `f` and returns its result with the guest instructions it took, or `None` when no
/// counter is available (the SysTick was taken, or the span wrapped it).
#[cfg(target_arch = "arm")]
pub fn count<R>(f: impl FnOnce() -> R) -> Option<(R, u64)> {
    let p = cortex_m::Peripherals::take()?;
    icount::Counter::calibrate(p.SYST).instructions(f)
}

/// Runs `f` and returns its result with the guest instructions it took.
#[cfg(target_arch = "riscv32")]
pub fn count<R>(f: impl FnOnce() -> R) -> Option<(R, u64)> {
    let start = riscv::register::minstret::read64();
    let r = core::hint::black_box(f());
    let end = riscv::register::minstret::read64();
    Some((r, end.wrapping_sub(start)))
}
