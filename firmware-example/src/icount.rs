//! Deterministic guest instruction counts under QEMU `-icount shift=0`.
//!
//! With `-icount shift=0` QEMU advances its virtual clock by exactly 1 ns per guest instruction,
//! and SysTick counts that virtual clock at the machine's CPU frequency. The ratio between SysTick
//! ticks and instructions is measured once ([`Counter::calibrate`]) with a loop of a known
//! instruction count, so the result does not depend on either machine's clock setting.
//! Without `-icount` the virtual clock follows host time and the figures are meaningless; the
//! `cargo xtask footprint` command always passes the option.
//!
//! Invariant: a measured span must stay below 2^24 SysTick ticks (the counter is 24 bits wide and
//! no interrupt counts wraps); [`Counter::ticks`] reports a wrap as `None`.

use cortex_m::peripheral::syst::SystClkSource;
use cortex_m::peripheral::SYST;

const RELOAD: u32 = 0x00FF_FFFF;
/// Iterations of the calibration loop (2 instructions each).
const CAL_ITERS: u32 = 1_000_000;

/// A free-running SysTick used as a stopwatch.
pub struct Counter {
    syst: SYST,
    /// SysTick ticks taken by `2 * CAL_ITERS` instructions.
    cal_ticks: u32,
}

impl Counter {
    /// Starts SysTick on the processor clock, counting down from 2^24 - 1, and calibrates it.
    pub fn calibrate(mut syst: SYST) -> Self {
        syst.set_clock_source(SystClkSource::Core);
        syst.set_reload(RELOAD);
        syst.disable_interrupt();
        let mut c = Counter { syst, cal_ticks: 0 };
        // `subs` + `bne` per iteration: 2 * CAL_ITERS instructions (the loop's set-up and the
        // stopwatch reads add a handful, below the tick resolution).
        c.cal_ticks = c
            .ticks(|| {
                let mut n = CAL_ITERS;
                // SAFETY: a register-only countdown loop.
                unsafe {
                    core::arch::asm!("2:", "subs {n}, {n}, #1", "bne 2b", n = inout(reg) n,
                                     options(nomem, nostack));
                }
                n
            })
            .map(|(_, t)| t)
            .unwrap_or(0);
        c
    }

    /// Runs `f` and returns its result with the SysTick ticks it took, or `None` on a wrap.
    pub fn ticks<R>(&mut self, f: impl FnOnce() -> R) -> Option<(R, u32)> {
        self.syst.disable_counter();
        self.syst.clear_current();
        let _ = self.syst.has_wrapped(); // reading CSR clears COUNTFLAG
        self.syst.enable_counter();
        let start = SYST::get_current();
        let r = core::hint::black_box(f());
        let end = SYST::get_current();
        let wrapped = self.syst.has_wrapped();
        self.syst.disable_counter();
        if wrapped {
            None
        } else {
            // Counting down modulo 2^24: right after `clear_current` the counter reads 0 and the
            // first tick reloads it, so `start` may be 0 and `end` above it.
            Some((r, start.wrapping_sub(end) & RELOAD))
        }
    }

    /// Runs `f` and returns its result with the guest instructions it took (scaled from SysTick
    /// ticks by the calibration), or `None` on a wrap or a failed calibration.
    pub fn instructions<R>(&mut self, f: impl FnOnce() -> R) -> Option<(R, u64)> {
        let (r, t) = self.ticks(f)?;
        if self.cal_ticks == 0 {
            return None;
        }
        let instr =
            (t as u64 * 2 * CAL_ITERS as u64 + self.cal_ticks as u64 / 2) / self.cal_ticks as u64;
        Some((r, instr))
    }

    /// SysTick ticks of the calibration loop (2 000 000 instructions).
    pub fn calibration_ticks(&self) -> u32 {
        self.cal_ticks
    }
}
