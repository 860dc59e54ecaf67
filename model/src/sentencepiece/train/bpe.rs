//! `spm_train --model_type bpe`'s merge loop as `sentencepiece` 0.2.3 runs it
//! (`bpe_model_trainer.cc`), step for step, so that the pieces come out in the same order.
//!
//! Every character and every pair of adjacent symbols is a *symbol* with its occurrences
//! (`positions`: word, left index, right index, in the order they arose) and an exact count
//! kept up to date: a merge adds the count of each pair it creates and takes away the count of
//! each neighbouring pair it destroys (marking it for a recount). A max-heap of (count,
//! symbol) entries, checked when they come out (stale or inactive entries are dropped, a
//! symbol marked for recount is pushed again), yields the best symbol: the greatest count,
//! then the fewest characters, then the smaller UTF-8 string. Its occurrences that are still
//! whole are merged in order, and it leaves the map. A string met a second time (`aaa` is
//! `aa`+`a` and `a`+`aa`) is dropped without becoming a piece.
//!
//! The one order this does not replay is between two heap entries with the same count and
//! the same string (the two paths to one string above): `sentencepiece` pops whichever its
//! heap holds on top, which depends on the hash order of its initial bigram maps; here the
//! symbol created first wins.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::rc::Rc;

use super::piece_rule::{PieceRule, BOUNDARY, UNK_CHAR};

/// No symbol (a merged-away slot of a word).
const NONE: u32 = u32::MAX;

/// One symbol: a character or a bigram of two symbols.
struct Symbol {
    /// The bigram's left and right symbols ([`NONE`] for a character).
    left: u32,
    right: u32,
    /// Its characters in UTF-8.
    piece: Rc<str>,
    /// Its number of characters.
    char_len: usize,
    /// The character `▅`: never part of a bigram.
    is_unk: bool,
    /// The occurrences' total count (wrapping, as `sentencepiece`'s `uint64_t`).
    freq: u64,
    /// Still in the map (not yet merged or dropped).
    active: bool,
    /// Waiting to be pushed on the heap after the current merge.
    pending: bool,
    /// Its count fell since it was last pushed.
    needs_recount: bool,
    /// Occurrences `(word, left, right)` in the order they arose.
    positions: Vec<Position>,
}

/// An occurrence of a bigram: word, and the left and right symbols' indices in the
/// concatenation of all words (`BpeLoop::symbols_of`).
type Position = (u32, u32, u32);

/// A heap entry: the count a symbol had when pushed. Ordered so that the best is greatest:
/// count, then fewer characters, then the smaller string, then the earlier symbol.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Entry {
    freq: u64,
    char_len: Reverse<usize>,
    piece: Reverse<Rc<str>>,
    id: Reverse<u32>,
}

/// Why the merge loop stopped early.
#[derive(Debug)]
pub(super) enum LoopError {
    /// Words of more than `u32::MAX - 1` characters in all.
    TooManyCharacters(usize),
}

/// The merge loop's state.
pub(super) struct BpeLoop<'r> {
    rule: &'r PieceRule,
    symbols: Vec<Symbol>,
    /// Character symbols in the map.
    chars: HashMap<char, u32>,
    /// Bigram symbols in the map, by their left and right symbols.
    pairs: HashMap<(u32, u32), u32>,
    heap: BinaryHeap<Entry>,
    /// Symbols whose count rose during the current merge.
    pending: Vec<u32>,
    /// Every word's symbols, one word after another ([`NONE`] where merged away).
    symbols_of: Vec<u32>,
    /// Where each word starts in `symbols_of`, and the end.
    starts: Vec<usize>,
    /// Each word's count.
    counts: Vec<u64>,
}

impl<'r> BpeLoop<'r> {
    /// The loop over `words` (text and count) whose characters are those of `alphabet` (with
    /// their counts), `▅` and the boundary mark (`InitSymbolsAndBigrams`).
    pub(super) fn new(
        rule: &'r PieceRule,
        alphabet: &HashMap<char, u64>,
        words: &[(String, u64)],
    ) -> Result<Self, LoopError> {
        let mut me = BpeLoop {
            rule,
            symbols: Vec::new(),
            chars: HashMap::default(),
            pairs: HashMap::default(),
            heap: BinaryHeap::new(),
            pending: Vec::new(),
            symbols_of: Vec::new(),
            starts: Vec::with_capacity(words.len() + 1),
            counts: words.iter().map(|w| w.1).collect(),
        };
        let mut alpha: Vec<(&char, &u64)> = alphabet.iter().collect();
        alpha.sort();
        for (&c, &n) in alpha {
            me.char_symbol(c, n);
        }
        me.char_symbol(UNK_CHAR, 1);
        me.char_symbol(BOUNDARY, 1);
        // The ASCII characters' symbols by byte, for the scan below.
        let mut ascii = [NONE; 128];
        for (b, id) in ascii.iter_mut().enumerate() {
            if let Some(&s) = me.chars.get(&char::from(b as u8)) {
                *id = s;
            }
        }
        // Bigram counts and occurrences in word order, then one symbol per valid bigram.
        let mut stats: HashMap<(u32, u32), (u64, Vec<Position>)> = HashMap::default();
        let mut first_seen: Vec<(u32, u32)> = Vec::new();
        for (sid, (text, count)) in words.iter().enumerate() {
            let syms: Vec<u32> = text
                .chars()
                .map(|c| match ascii.get(c as usize) {
                    Some(&id) if id != NONE => id,
                    _ => me
                        .chars
                        .get(&c)
                        .copied()
                        .unwrap_or_else(|| me.char_symbol(c, 1)),
                })
                .collect();
            let base = me.symbols_of.len();
            if base + syms.len() >= u32::MAX as usize {
                return Err(LoopError::TooManyCharacters(base + syms.len()));
            }
            for i in 1..syms.len() {
                let (l, r) = (syms[i - 1], syms[i]);
                if me.symbols[l as usize].is_unk || me.symbols[r as usize].is_unk {
                    continue;
                }
                let entry = stats.entry((l, r)).or_insert_with(|| {
                    first_seen.push((l, r));
                    (0, Vec::new())
                });
                entry.0 += count;
                let at = (base + i) as u32;
                entry.1.push((sid as u32, at - 1, at));
            }
            me.starts.push(base);
            me.symbols_of.extend(syms);
        }
        me.starts.push(me.symbols_of.len());
        for key in first_seen {
            let Some((freq, positions)) = stats.remove(&key) else {
                continue;
            };
            if let Some(id) = me.pair_symbol(key.0, key.1) {
                let s = &mut me.symbols[id as usize];
                s.freq = s.freq.wrapping_add(freq);
                s.positions.extend(positions);
                me.mark_pending(id);
            }
        }
        me.push_pending();
        Ok(me)
    }

    /// `GetCharSymbol`: the symbol of `c`, made with count `freq` when missing.
    fn char_symbol(&mut self, c: char, freq: u64) -> u32 {
        if let Some(&id) = self.chars.get(&c) {
            return id;
        }
        let id = self.symbols.len() as u32;
        self.symbols.push(Symbol {
            left: NONE,
            right: NONE,
            piece: Rc::from(c.to_string()),
            char_len: 1,
            is_unk: c == UNK_CHAR,
            freq,
            active: true,
            pending: false,
            needs_recount: true,
            positions: Vec::new(),
        });
        self.chars.insert(c, id);
        id
    }

    /// `GetPairSymbol`: the bigram of `left` and `right`, made when missing; `None` when one
    /// is `▅` or the result may not be a piece.
    fn pair_symbol(&mut self, left: u32, right: u32) -> Option<u32> {
        if left == NONE || right == NONE {
            return None;
        }
        let (l, r) = (&self.symbols[left as usize], &self.symbols[right as usize]);
        if l.is_unk || r.is_unk {
            return None;
        }
        if let Some(&id) = self.pairs.get(&(left, right)) {
            return Some(id);
        }
        let char_len = l.char_len + r.char_len;
        if !self.rule.allows_pair(&l.piece, &r.piece, char_len) {
            return None;
        }
        let piece = format!("{}{}", l.piece, r.piece);
        let id = self.symbols.len() as u32;
        self.symbols.push(Symbol {
            left,
            right,
            piece: Rc::from(piece),
            char_len,
            is_unk: false,
            freq: 0,
            active: true,
            pending: false,
            needs_recount: true,
            positions: Vec::new(),
        });
        self.pairs.insert((left, right), id);
        Some(id)
    }

    /// Queue `id` to be pushed after the current merge.
    fn mark_pending(&mut self, id: u32) {
        let s = &mut self.symbols[id as usize];
        if !s.pending {
            s.pending = true;
            self.pending.push(id);
        }
    }

    /// `ComputeFreq`: clear the recount mark, and the occurrences of a symbol left with none.
    fn recount(&mut self, id: u32) {
        let s = &mut self.symbols[id as usize];
        if !s.needs_recount {
            return;
        }
        if s.freq == 0 {
            s.positions = Vec::new();
        }
        s.needs_recount = false;
    }

    /// Push `id` with its current count.
    fn push(&mut self, id: u32) {
        let s = &self.symbols[id as usize];
        self.heap.push(Entry {
            freq: s.freq,
            char_len: Reverse(s.char_len),
            piece: Reverse(Rc::clone(&s.piece)),
            id: Reverse(id),
        });
    }

    /// Push the pending symbols that are still active.
    fn push_pending(&mut self) {
        for id in std::mem::take(&mut self.pending) {
            self.symbols[id as usize].pending = false;
            if self.symbols[id as usize].active {
                self.recount(id);
                self.push(id);
            }
        }
    }

    /// `AddNewPair`: record the bigram at `left`, `right` of word `sid`.
    fn add_pair(&mut self, sid: usize, left: Option<usize>, right: Option<usize>) {
        let (Some(left), Some(right)) = (left, right) else {
            return;
        };
        let w = &self.symbols_of;
        if let Some(id) = self.pair_symbol(w[left], w[right]) {
            let count = self.counts[sid];
            let s = &mut self.symbols[id as usize];
            s.positions.push((sid as u32, left as u32, right as u32));
            s.freq = s.freq.wrapping_add(count);
            self.mark_pending(id);
        }
    }

    /// `ResetFreq`: take the bigram at `left`, `right` away from its count, unless it is
    /// `best`.
    fn drop_pair(&mut self, sid: usize, left: Option<usize>, right: Option<usize>, best: u32) {
        let (Some(left), Some(right)) = (left, right) else {
            return;
        };
        let w = &self.symbols_of;
        if let Some(id) = self.pair_symbol(w[left], w[right]) {
            if id != best {
                let count = self.counts[sid];
                let s = &mut self.symbols[id as usize];
                s.freq = s.freq.wrapping_sub(count);
                s.needs_recount = true;
            }
        }
    }

    /// The best active symbol, off the heap.
    fn pop_best(&mut self) -> Option<u32> {
        while let Some(top) = self.heap.pop() {
            let id = top.id.0;
            let s = &self.symbols[id as usize];
            if !s.active {
                continue;
            }
            if s.needs_recount {
                self.recount(id);
                self.push(id);
                continue;
            }
            if top.freq != s.freq {
                continue;
            }
            return Some(id);
        }
        None
    }

    /// Remove `id` from the map.
    fn retire(&mut self, id: u32) {
        let s = &mut self.symbols[id as usize];
        s.active = false;
        s.positions = Vec::new();
        if s.left != NONE {
            self.pairs.remove(&(s.left, s.right));
        }
    }

    /// `AcceptSymbol`: merge every occurrence of `best` that is still whole, in order.
    fn accept(&mut self, best: u32) {
        let positions = std::mem::take(&mut self.symbols[best as usize].positions);
        let (bl, br) = {
            let s = &self.symbols[best as usize];
            (s.left, s.right)
        };
        for &(sid, left, right) in &positions {
            let (sid, left, right) = (sid as usize, left as usize, right as usize);
            if self.symbols_of[left] != bl || self.symbols_of[right] != br {
                continue;
            }
            let next = self.next_index(sid, right);
            let prev = self.prev_index(sid, left);
            self.drop_pair(sid, prev, Some(left), best);
            self.drop_pair(sid, Some(right), next, best);
            self.symbols_of[left] = best;
            self.symbols_of[right] = NONE;
            self.add_pair(sid, prev, Some(left));
            self.add_pair(sid, Some(left), next);
        }
        self.retire(best);
    }

    /// Learn up to `n` pieces; returns them in order (fewer when no bigram is left).
    pub(super) fn run(&mut self, n: usize, mut progress: impl FnMut(usize)) -> Vec<String> {
        let mut pieces: Vec<String> = Vec::with_capacity(n);
        let mut seen: HashSet<Rc<str>> = HashSet::default();
        while pieces.len() < n {
            let Some(best) = self.pop_best() else {
                break;
            };
            let piece = Rc::clone(&self.symbols[best as usize].piece);
            if !seen.insert(Rc::clone(&piece)) {
                self.retire(best);
                continue;
            }
            pieces.push(piece.to_string());
            progress(pieces.len());
            self.accept(best);
            self.push_pending();
        }
        pieces
    }

    /// The next live index after `index` in word `sid`.
    fn next_index(&self, sid: usize, index: usize) -> Option<usize> {
        let w = &self.symbols_of;
        (index + 1..self.starts[sid + 1]).find(|&i| w[i] != NONE)
    }

    /// The live index before `index` in word `sid`.
    fn prev_index(&self, sid: usize, index: usize) -> Option<usize> {
        let w = &self.symbols_of;
        (self.starts[sid]..index).rev().find(|&i| w[i] != NONE)
    }
}
