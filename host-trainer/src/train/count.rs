//! Counting pre-tokens in parallel: `threads` workers pull chunks from a bounded queue filled by
//! the reader ([`super::input`]), split each chunk on the special tokens, pre-tokenize every
//! segment with the core's hand-rolled splitter and count the pieces' byte strings in a private
//! hash map. The maps are summed at the end, so the result does not depend on the number of
//! threads or on which worker got which chunk.
//!
//! Memory: the queue holds at most `2 × threads` chunks; each map grows with the number of
//! distinct pieces, never with the corpus size.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::Mutex;

use picobpe::pretok::{next_piece, Step};
use picobpe::Pattern;
use rustc_hash::FxHashMap;

use super::error::TrainError;
use super::input::{read_inputs, Splitter};

/// Pieces of at most this many bytes are counted under a packed integer key.
const SHORT: usize = 15;

/// Pack a piece of at most [`SHORT`] bytes into a `u128`: byte `i` at bits `8i..8i+8`, the
/// length in the top byte. Distinct pieces get distinct keys.
#[inline]
fn pack(piece: &[u8]) -> u128 {
    debug_assert!(piece.len() <= SHORT);
    let n = piece.len();
    let (lo, hi) = if n >= 8 {
        let lo = u64::from_le_bytes(piece[..8].try_into().expect("8 bytes"));
        (lo, load_le(&piece[8..]))
    } else {
        (load_le(piece), 0)
    };
    u128::from(lo) | (u128::from(hi) << 64) | ((n as u128) << 120)
}

/// Little-endian value of fewer than 8 bytes, with branch-light overlapping loads.
#[inline]
fn load_le(s: &[u8]) -> u64 {
    let n = s.len();
    if n >= 4 {
        let a = u32::from_le_bytes(s[..4].try_into().expect("4 bytes"));
        let b = u32::from_le_bytes(s[n - 4..].try_into().expect("4 bytes"));
        // The overlapping bytes are the same in `a` and in shifted `b`, so OR is exact.
        u64::from(a) | (u64::from(b) << (8 * (n - 4)))
    } else if n > 0 {
        u64::from(s[0])
            | (u64::from(s[n / 2]) << (8 * (n / 2)))
            | (u64::from(s[n - 1]) << (8 * (n - 1)))
    } else {
        0
    }
}

/// The bytes of a packed piece.
fn unpack(key: u128) -> Vec<u8> {
    let n = (key >> 120) as usize;
    key.to_le_bytes()[..n].to_vec()
}

/// The result of the counting pass.
#[derive(Default)]
pub struct Counts {
    /// Counts of pieces of at most [`SHORT`] bytes, by [`pack`]ed key.
    short: FxHashMap<u128, u64>,
    /// Counts of longer pieces.
    long: FxHashMap<Vec<u8>, u64>,
    /// Total number of pieces (with repetitions).
    pub n_pieces: u64,
}

impl Counts {
    /// Count one occurrence of `piece`.
    #[inline]
    fn add(&mut self, piece: &[u8]) {
        if piece.len() <= SHORT {
            *self.short.entry(pack(piece)).or_insert(0) += 1;
        } else if let Some(n) = self.long.get_mut(piece) {
            *n += 1;
        } else {
            self.long.insert(piece.to_vec(), 1);
        }
        self.n_pieces += 1;
    }

    /// The distinct pieces and their counts.
    pub fn into_pieces(self) -> impl Iterator<Item = (Vec<u8>, u64)> {
        let short = self.short.into_iter().map(|(k, n)| (unpack(k), n));
        short.chain(self.long)
    }

    /// Add `other` into `self`.
    fn absorb(&mut self, other: Counts) {
        merge_maps(&mut self.short, other.short);
        merge_maps(&mut self.long, other.long);
        self.n_pieces += other.n_pieces;
    }
}

/// Sum two count maps into `into`, iterating over the smaller one.
fn merge_maps<K: std::hash::Hash + Eq>(into: &mut FxHashMap<K, u64>, mut other: FxHashMap<K, u64>) {
    if other.len() > into.len() {
        std::mem::swap(into, &mut other);
    }
    for (k, n) in other {
        *into.entry(k).or_insert(0) += n;
    }
}

/// Read all inputs and count their pieces with `threads` workers, in chunks of about
/// `chunk_size` bytes; `progress` receives the number of bytes read as they are read.
pub fn count_inputs(
    inputs: &[PathBuf],
    splitter: &Splitter,
    threads: usize,
    chunk_size: usize,
    progress: impl FnMut(u64),
) -> Result<Counts, TrainError> {
    let (threads, chunk_size) = (threads.max(1), chunk_size.max(1));
    let (tx, rx) = mpsc::sync_channel::<Vec<u8>>(2 * threads);
    let rx = Mutex::new(rx);
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| scope.spawn(|| worker(&rx, &stop, splitter)))
            .collect();
        let split = |buf: &[u8]| splitter.split_point(buf);
        let read = read_inputs(inputs, split, chunk_size, progress, |chunk| {
            tx.send(chunk).is_ok()
        });
        if read.is_err() {
            stop.store(true, Ordering::Relaxed);
        }
        drop(tx);
        let mut total = Counts::default();
        let mut panicked = None;
        for handle in workers {
            match handle.join() {
                Ok(counts) => total.absorb(counts),
                Err(payload) => panicked = Some(panic_message(payload)),
            }
        }
        read?;
        match panicked {
            Some(msg) => Err(TrainError::WorkerPanicked(msg)),
            None => Ok(total),
        }
    })
}

/// One counting thread: take chunks until the queue is closed, split each on the special
/// tokens and count the pieces of every segment.
fn worker(rx: &Mutex<Receiver<Vec<u8>>>, stop: &AtomicBool, splitter: &Splitter) -> Counts {
    let mut counts = Counts::default();
    loop {
        let next = rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
        let Ok(chunk) = next else { break };
        if stop.load(Ordering::Relaxed) {
            continue; // drain without work so the reader is never blocked
        }
        let mut start = 0;
        for m in splitter.specials.iter().flat_map(|ac| ac.find_iter(&chunk)) {
            count_segment(&chunk[start..m.start()], splitter.pattern, &mut counts);
            start = m.end();
        }
        count_segment(&chunk[start..], splitter.pattern, &mut counts);
    }
    counts
}

/// Pre-tokenize one complete segment (text between special tokens) and count its pieces.
fn count_segment(segment: &[u8], pattern: Pattern, counts: &mut Counts) {
    let mut pos = 0;
    while pos < segment.len() {
        // With `is_final` the splitter always returns a piece; a `NeedMore` (a contract
        // violation) is treated as "the rest is one piece" so this loop always advances.
        let end = match next_piece(pattern, segment, pos, true) {
            Step::Piece { end } => end.clamp(pos + 1, segment.len()),
            // The hand-rolled patterns never drop bytes.
            Step::NeedMore | Step::Skip { .. } => segment.len(),
        };
        counts.add(&segment[pos..end]);
        pos = end;
    }
}

/// The panic message, when the payload is a string.
fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    let text = payload.downcast_ref::<&str>().copied();
    let text = text.or_else(|| payload.downcast_ref::<String>().map(String::as_str));
    text.unwrap_or("(no message)").to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_is_injective_and_reversible() {
        let mut seen = std::collections::HashSet::new();
        let pieces: Vec<Vec<u8>> = (0..=SHORT)
            .flat_map(|n| {
                [
                    vec![0u8; n],
                    vec![0xFF; n],
                    (0..n as u8).collect(),
                    (0..n as u8).rev().collect(),
                ]
            })
            .collect();
        for p in &pieces {
            let key = pack(p);
            assert_eq!(&unpack(key), p);
            seen.insert((key, p.clone()));
        }
        let keys: std::collections::HashSet<u128> = seen.iter().map(|(k, _)| *k).collect();
        let distinct: std::collections::HashSet<&Vec<u8>> = pieces.iter().collect();
        assert_eq!(keys.len(), distinct.len());
    }
}
