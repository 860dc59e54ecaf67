//! Panic-free slice copies.
//!
//! `copy_from_slice` and `copy_within` assert their preconditions. At `opt-level = "s"`/`"z"` the
//! optimiser often does not inline them, so their panic paths stay in the binary even where the
//! caller's arithmetic rules the panic out (`cargo xtask panic-check` rejects that). These
//! versions copy what fits and cannot panic at any optimisation level.

/// Copy `src` into the front of `dst`, as many elements as fit; returns how many were copied.
#[inline]
pub(crate) fn copy<T: Copy>(dst: &mut [T], src: &[T]) -> usize {
    let mut n = 0;
    for (d, s) in dst.iter_mut().zip(src) {
        *d = *s;
        n += 1;
    }
    n
}

/// Drop `s[0]` by moving `s[1..]` one slot left; the last slot keeps its old value.
#[inline]
pub(crate) fn shift_left<T: Copy>(s: &mut [T]) {
    let mut it = s.iter_mut();
    if let Some(mut prev) = it.next() {
        for cur in it {
            *prev = *cur;
            prev = cur;
        }
    }
}

/// Move `buf[from..]` to the front of `buf` (like `buf.copy_within(from.., 0)`); returns its
/// length, 0 when `from >= buf.len()`.
#[inline]
pub(crate) fn move_to_front<T: Copy>(buf: &mut [T], from: usize) -> usize {
    let n = buf.len().saturating_sub(from);
    for i in 0..n {
        if let Some(&v) = buf.get(i + from) {
            if let Some(d) = buf.get_mut(i) {
                *d = v;
            }
        }
    }
    n
}
