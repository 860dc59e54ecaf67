//! The fixed-seed random generator of the splitters' randomized tests.

/// A fixed-seed xorshift generator: each call gives a number below its argument.
pub(crate) fn random_below(mut state: u64) -> impl FnMut(usize) -> usize {
    move |n| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    }
}
