//! Learning the merges: CS336 `train_bpe` semantics with incremental updates.
//!
//! **Semantics.** Every distinct piece (pre-token) is a *word* with a frequency. A word is a
//! sequence of symbols; a symbol is identified by its byte string (as in the reference, which
//! keeps words as tuples of `bytes`), starting from single bytes. The count of a pair is the sum,
//! over all adjacent positions in all words (overlapping ones included, so `aaa` counts `(a, a)`
//! twice), of the word's frequency. Each step picks the pair with the highest count, ties broken
//! by the greatest `(bytes(left), bytes(right))`, records it as a merge, and rewrites every word
//! by replacing non-overlapping occurrences left to right with the merged symbol. The loop stops
//! after `n_merges` merges or when no pair is left.
//!
//! **Algorithm.** Instead of recounting, the state keeps:
//! - `pairs`: pair → (exact current count, list of words that contained it when it was added).
//!   The word list may hold stale words (which no longer contain the pair) and repeats; each merge
//!   re-checks the words it visits, so only these words are touched.
//! - a max-heap of `(count, pair)` with lazy deletion: counts of existing pairs only change by
//!   merges, and every increase pushes a fresh entry, so every pair with a positive count has an
//!   entry whose count is ≥ its true count. A popped entry whose count differs from the true count
//!   is re-pushed with the true count (or dropped if zero); a popped entry whose count is exact is
//!   therefore the true maximum, because the order is a total order that depends only on counts
//!   and on immutable byte strings.
//!
//! When a word changes, the counts of exactly the adjacent pairs it lost are decremented and of
//! the pairs it gained are incremented (pairs away from the merge sites are untouched), which
//! keeps every count equal to a full recount.

use rustc_hash::FxHashMap;

use super::error::TrainError;
use super::heap::{pair_key, unpack, Entry, PairHeap, PairKey};

/// One learned merge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Merge {
    /// Left byte string.
    pub left: Vec<u8>,
    /// Right byte string.
    pub right: Vec<u8>,
}

/// Learn up to `n_merges` merges from `words` (distinct byte strings and their frequencies).
/// `progress` is called after each merge with the number of merges done.
pub fn learn_merges(
    words: impl IntoIterator<Item = (Vec<u8>, u64)>,
    n_merges: usize,
    mut progress: impl FnMut(usize),
) -> Result<Vec<Merge>, TrainError> {
    let mut state = State::new(words)?;
    let mut merges = Vec::with_capacity(n_merges);
    while merges.len() < n_merges {
        let Some(mut entry) = state.heap.pop(&state.symbols.bytes) else {
            break;
        };
        let current = state.pairs.get(&entry.pair).map_or(0, |p| p.count);
        if current != entry.count {
            if current > 0 {
                entry.count = current;
                state.heap.push(entry, &state.symbols.bytes);
            }
            continue;
        }
        let (left, right) = unpack(entry.pair);
        merges.push(Merge {
            left: state.symbols.bytes[left as usize].clone(),
            right: state.symbols.bytes[right as usize].clone(),
        });
        state.apply(entry.pair);
        progress(merges.len());
    }
    Ok(merges)
}

/// Symbols: id → bytes and bytes → id. Ids `0..256` are the single bytes.
struct Symbols {
    bytes: Vec<Vec<u8>>,
    ids: FxHashMap<Vec<u8>, u32>,
}

impl Symbols {
    fn new() -> Self {
        let bytes: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        let ids = bytes.iter().cloned().zip(0u32..).collect();
        Symbols { bytes, ids }
    }

    /// The symbol for `left ++ right`, creating it if new.
    fn concat(&mut self, left: u32, right: u32) -> u32 {
        let mut merged = self.bytes[left as usize].clone();
        merged.extend_from_slice(&self.bytes[right as usize]);
        if let Some(&id) = self.ids.get(&merged) {
            return id;
        }
        let id = u32::try_from(self.bytes.len()).expect("fewer than 2^32 symbols");
        self.bytes.push(merged.clone());
        self.ids.insert(merged, id);
        id
    }
}

/// A pair's exact count and the words that (may) contain it, by arena offset.
#[derive(Default)]
struct PairInfo {
    count: u64,
    words: Vec<u32>,
}

/// Count `count` more occurrences of `key`, in the word at arena offset `word`.
fn add_pair(pairs: &mut FxHashMap<PairKey, PairInfo>, key: PairKey, count: u64, word: u32) {
    let info = pairs.entry(key).or_default();
    info.count += count;
    if info.words.last() != Some(&word) {
        info.words.push(word);
    }
}

/// Words live in one `u32` arena so that visiting a word touches one place in memory (the merge
/// loop is bound by cache misses on the words it visits). A word is identified by its offset
/// `o`: `arena[o]` is its current length, `arena[o + 1]` the stamp of the last merge that
/// visited it, `arena[o + 2..o + 4]` its count (low, high half), and its symbols follow. Words
/// only shrink, in place.
const HEADER: usize = 4;

/// Everything the merge loop updates. See the module docs for the invariants.
struct State {
    arena: Vec<u32>,
    pairs: FxHashMap<PairKey, PairInfo>,
    heap: PairHeap,
    symbols: Symbols,
    /// Number of the current merge; a word whose stamp equals it was already rewritten.
    stamp: u32,
    /// Scratch buffers reused across words.
    scratch: Scratch,
}

#[derive(Default)]
struct Scratch {
    out: Vec<u32>,
    is_new: Vec<bool>,
    covered: Vec<bool>,
    new_pairs: Vec<PairKey>,
}

impl State {
    /// The state for `input`; [`TrainError::TooManySymbols`] when the arena would need offsets
    /// beyond `u32` (more than 4 G bytes of distinct pieces).
    fn new(input: impl IntoIterator<Item = (Vec<u8>, u64)>) -> Result<Self, TrainError> {
        let mut arena: Vec<u32> = Vec::new();
        let mut pairs: FxHashMap<PairKey, PairInfo> = FxHashMap::default();
        for (bytes, count) in input {
            if arena.len() + HEADER + bytes.len() > u32::MAX as usize {
                return Err(TrainError::TooManySymbols);
            }
            let o = arena.len() as u32;
            arena.extend([bytes.len() as u32, 0, count as u32, (count >> 32) as u32]);
            arena.extend(bytes.iter().map(|&b| u32::from(b)));
            for pair in bytes.windows(2) {
                let key = pair_key(pair[0].into(), pair[1].into());
                add_pair(&mut pairs, key, count, o);
            }
        }
        let symbols = Symbols::new();
        let entries = pairs
            .iter()
            .map(|(&pair, &PairInfo { count, .. })| Entry { count, pair })
            .collect();
        let heap = PairHeap::from_vec(entries, &symbols.bytes);
        Ok(State {
            arena,
            pairs,
            heap,
            symbols,
            stamp: 0,
            scratch: Scratch::default(),
        })
    }

    /// Merge `pair` in every word that contains it and update counts, index and heap.
    fn apply(&mut self, pair: PairKey) {
        let (left, right) = unpack(pair);
        let merged = self.symbols.concat(left, right);
        let info = self.pairs.remove(&pair).unwrap_or_default();
        self.stamp += 1;
        self.scratch.new_pairs.clear();
        for (i, &o) in info.words.iter().enumerate() {
            // The loop waits on memory for each word it visits; ask for a later one early.
            if let Some(&ahead) = info.words.get(i + PREFETCH_AHEAD) {
                prefetch(&self.arena, ahead as usize);
            }
            let o = o as usize;
            if self.arena[o + 1] == self.stamp {
                continue;
            }
            self.arena[o + 1] = self.stamp;
            rewrite_word(
                o,
                (left, right, merged),
                &mut self.arena,
                &mut self.pairs,
                &mut self.scratch,
            );
        }
        let new_pairs = &mut self.scratch.new_pairs;
        new_pairs.sort_unstable();
        new_pairs.dedup();
        for &pair in new_pairs.iter() {
            let info = self.pairs.get(&pair).filter(|info| info.count > 0);
            if let Some(&PairInfo { count, .. }) = info {
                self.heap.push(Entry { count, pair }, &self.symbols.bytes);
            }
        }
    }
}

/// How many words ahead [`State::apply`] prefetches.
const PREFETCH_AHEAD: usize = 8;

/// Hint the CPU to load `arena[o]` into cache (no effect on other architectures).
#[inline(always)]
fn prefetch(arena: &[u32], o: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = arena.as_ptr().wrapping_add(o) as *const i8;
        // SAFETY: SSE is part of the x86_64 baseline, and a prefetch is only a hint: it never
        // faults or reads memory visibly, whatever the address.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (arena, o);
}

/// Replace the non-overlapping occurrences of `(left, right)` in the word at offset `o` by
/// `merged`, left to right, and move the word's contribution from the pairs it lost to the pairs
/// it gained. New pairs are appended to `scratch.new_pairs`. A word without an occurrence is
/// left alone.
fn rewrite_word(
    o: usize,
    (left, right, merged): (u32, u32, u32),
    arena: &mut [u32],
    pairs: &mut FxHashMap<PairKey, PairInfo>,
    scratch: &mut Scratch,
) {
    let (header, rest) = arena[o..].split_at_mut(HEADER);
    let n = header[0] as usize;
    let count = u64::from(header[2]) | (u64::from(header[3]) << 32);
    let old = &mut rest[..n];
    let Scratch {
        out,
        is_new,
        covered,
        new_pairs,
    } = scratch;
    out.clear();
    is_new.clear();
    covered.clear();
    covered.resize(n, false);
    let mut found = false;
    let mut i = 0;
    while i < n {
        if i + 1 < n && old[i] == left && old[i + 1] == right {
            out.push(merged);
            is_new.push(true);
            covered[i] = true;
            covered[i + 1] = true;
            found = true;
            i += 2;
        } else {
            out.push(old[i]);
            is_new.push(false);
            i += 1;
        }
    }
    if !found {
        return;
    }
    // Pairs lost: every old adjacent pair with an element inside a merge site.
    for i in 0..n - 1 {
        if covered[i] || covered[i + 1] {
            let key = pair_key(old[i], old[i + 1]);
            if let Some(info) = pairs.get_mut(&key) {
                info.count -= count;
                if info.count == 0 {
                    pairs.remove(&key);
                }
            }
        }
    }
    // Pairs gained: every new adjacent pair with a merged symbol in it.
    let w = o as u32;
    for j in 0..out.len().saturating_sub(1) {
        if is_new[j] || is_new[j + 1] {
            let key = pair_key(out[j], out[j + 1]);
            add_pair(pairs, key, count, w);
            new_pairs.push(key);
        }
    }
    old[..out.len()].copy_from_slice(out);
    header[0] = out.len() as u32;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Obviously-correct reference: recount every pair from scratch before each merge.
    fn naive(words: &[(Vec<u8>, u64)], n_merges: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut ws: Vec<(Vec<Vec<u8>>, u64)> = words
            .iter()
            .map(|(b, c)| (b.iter().map(|&x| vec![x]).collect(), *c))
            .collect();
        let mut merges = Vec::new();
        while merges.len() < n_merges {
            let mut counts: std::collections::BTreeMap<(Vec<u8>, Vec<u8>), u64> =
                Default::default();
            for (w, c) in &ws {
                for p in w.windows(2) {
                    *counts.entry((p[0].clone(), p[1].clone())).or_default() += c;
                }
            }
            let Some(best) = counts
                .iter()
                .max_by(|a, b| a.1.cmp(b.1).then(a.0.cmp(b.0)))
                .map(|(p, _)| p.clone())
            else {
                break;
            };
            for (w, _) in &mut ws {
                let mut out = Vec::new();
                let mut i = 0;
                while i < w.len() {
                    if i + 1 < w.len() && w[i] == best.0 && w[i + 1] == best.1 {
                        out.push([best.0.clone(), best.1.clone()].concat());
                        i += 2;
                    } else {
                        out.push(w[i].clone());
                        i += 1;
                    }
                }
                *w = out;
            }
            merges.push(best);
        }
        merges
    }

    fn fast(words: &[(Vec<u8>, u64)], n: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
        learn_merges(words.iter().cloned(), n, |_| {})
            .unwrap()
            .into_iter()
            .map(|m| (m.left, m.right))
            .collect()
    }

    #[test]
    fn small_examples_match_naive() {
        let cases: Vec<Vec<(&[u8], u64)>> = vec![
            vec![(b"low", 5), (b"lower", 2), (b"widest", 3), (b"newest", 6)],
            vec![(b"aaaa", 3), (b"aaa", 2), (b"aaaaaaa", 1), (b"ba", 4)],
            vec![(b"abab", 2), (b"baba", 2), (b"abba", 1), (b"a", 9)],
            vec![(b"xyzxyzxyz", 1), (b"zyx", 2), (b"xx", 2)],
        ];
        for case in cases {
            let words: Vec<(Vec<u8>, u64)> = case.iter().map(|(b, c)| (b.to_vec(), *c)).collect();
            assert_eq!(fast(&words, 50), naive(&words, 50));
        }
    }

    #[test]
    fn pseudo_random_words_match_naive() {
        // xorshift: deterministic, no dependency.
        let mut s: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut rand = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        for round in 0..30 {
            let alphabet = 2 + (round % 4) as u64;
            let words: Vec<(Vec<u8>, u64)> = (0..40)
                .map(|_| {
                    let len = 1 + rand() % 9;
                    let w = (0..len).map(|_| b'a' + (rand() % alphabet) as u8).collect();
                    (w, 1 + rand() % 5)
                })
                .collect();
            // Distinct words, like the counter produces.
            let mut map: std::collections::BTreeMap<Vec<u8>, u64> = Default::default();
            for (w, c) in words {
                *map.entry(w).or_default() += c;
            }
            let words: Vec<_> = map.into_iter().collect();
            assert_eq!(fast(&words, 40), naive(&words, 40), "round {round}");
        }
    }

    #[test]
    fn duplicate_byte_strings_share_one_symbol() {
        // "aaa" can be made as (aa, a) and (a, aa): both merges are learned, and later pairs
        // count the two as one symbol, as with the reference's tuples of bytes.
        let words: Vec<(Vec<u8>, u64)> = vec![
            (b"aaa".to_vec(), 10),
            (b"baaa".to_vec(), 3),
            (b"ba".to_vec(), 20),
            (b"aaab".to_vec(), 4),
        ];
        assert_eq!(fast(&words, 20), naive(&words, 20));
    }
}
