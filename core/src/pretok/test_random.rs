//! Helpers of the splitters' tests: the fixed-seed random generator of the randomized ones,
//! and a walk over a text's pieces.

/// A fixed-seed xorshift generator: each call gives a number below its argument.
pub(crate) fn random_below(mut state: u64) -> impl FnMut(usize) -> usize {
    move |n| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    }
}

/// Calls `check` at every piece start of `text` (as the full splitter splits it, final) and
/// sums its answers (the block splitters' tests: the bytes each block decided).
pub(crate) fn sum_over_piece_starts(
    pattern: super::Pattern,
    text: &[u8],
    mut check: impl FnMut(usize) -> usize,
) -> usize {
    let mut sum = 0;
    let mut at = 0;
    while at < text.len() {
        sum += check(at);
        let super::Step::Piece { end } = super::next_piece(pattern, text, at, true) else {
            panic!("no piece at {at}");
        };
        at = end;
    }
    sum
}
