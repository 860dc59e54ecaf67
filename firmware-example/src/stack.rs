//! Peak stack measurement by painting.
//!
//! [`measure`] fills the unused stack below the current stack pointer with a known word, runs the
//! closure, then scans up from the stack's lowest address for the first overwritten word.
//! Invariant: nothing but the closure (and the code of `measure` itself) runs between painting and
//! scanning — interrupts are not used by this firmware — so the highest overwritten address bounds
//! the closure's peak use from above (the count includes the call frames `measure` adds).

use core::ptr::{addr_of, read_volatile, write_volatile};

const PAINT: u32 = 0xC0DE_5A5A;
/// Bytes left untouched just below the stack pointer when painting (the painter's own frame).
const GUARD: usize = 64;

extern "C" {
    /// Lowest address of the stack: cortex-m-rt's `_stack_end` (end of .bss/.uninit), or
    /// riscv-rt's `__estack` (the start of its `.stack` region) on RISC-V (`ports/`).
    #[cfg_attr(target_arch = "riscv32", link_name = "__estack")]
    static _stack_end: u32;
}

#[inline(always)]
fn sp() -> usize {
    let sp: usize;
    // SAFETY: reading the stack pointer has no side effects.
    #[cfg(target_arch = "arm")]
    unsafe {
        core::arch::asm!("mov {}, sp", out(reg) sp, options(nomem, nostack, preserves_flags))
    };
    // SAFETY: as above.
    #[cfg(target_arch = "riscv32")]
    unsafe {
        core::arch::asm!("mv {}, sp", out(reg) sp, options(nomem, nostack, preserves_flags))
    };
    sp
}

fn stack_bottom() -> usize {
    addr_of!(_stack_end) as usize
}

#[inline(never)]
fn paint(top: usize) {
    let mut p = (stack_bottom() + 3) & !3;
    while p + 4 <= top {
        // SAFETY: [stack_bottom, top) is unused stack below the live frames.
        unsafe { write_volatile(p as *mut u32, PAINT) };
        p += 4;
    }
}

#[inline(never)]
fn lowest_touched(top: usize) -> usize {
    let mut p = (stack_bottom() + 3) & !3;
    // SAFETY: reads within the stack region, which is RAM.
    while p + 4 <= top && unsafe { read_volatile(p as *const u32) } == PAINT {
        p += 4;
    }
    p
}

/// Calls `f` in a frame of its own: were `f` inlined into [`measure`], its locals would live in
/// `measure`'s frame, above the painted region.
#[inline(never)]
fn call<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// Runs `f` and returns its result with its peak stack use in bytes (an upper bound: it includes
/// the frames of the call made here).
#[inline(never)]
pub fn measure<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let top = sp() - GUARD;
    paint(top);
    let r = core::hint::black_box(call(f));
    let low = lowest_touched(top);
    (r, top + GUARD - low)
}

/// Bytes of stack between the lowest stack address and the current stack pointer.
pub fn free() -> usize {
    sp() - stack_bottom()
}
