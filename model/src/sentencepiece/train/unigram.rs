//! `spm_train --model_type unigram`'s training as `sentencepiece` 0.2.3 runs it
//! (`unigram_model_trainer.cc`), to the same pieces and the same `f32` scores.
//!
//! 1. **Seeds** ([`seed_pieces`]): the characters, then the best repeated substrings of
//!    the sentences' bytes (LCP intervals of a suffix array) scored `count × characters`.
//!    Scores become log probabilities.
//! 2. **EM.** `num_sub_iterations` times: the expected count of every piece over the
//!    sentences (forward-backward on each sentence's lattice, sentences dealt to
//!    `num_threads` partitions as `spm_train` deals them to its threads, partitions summed in
//!    order), then pieces expected fewer than 0.5 times are dropped and the rest scored
//!    `digamma(count) - digamma(sum)`.
//! 3. **Pruning** after each EM round, until at most 1.1 × `vocab_size` pieces are left:
//!    each piece's loss of likelihood if its Viterbi occurrences were re-segmented by its
//!    second-best segmentation; the best `max(1.1 × vocab_size, 0.75 × pieces)` stay. Then
//!    pieces that never win against their own re-segmentation go.
//! 4. **Final pieces**: every required character (the model's lowest score plus 0.0001 per
//!    rank for one the model lost), then the best-scored pieces up to the vocabulary.
//!
//! The arithmetic is `sentencepiece`'s: `f32` sums in its order, `f64` where it casts, the
//! same `exp`/`log`, and its lattices' node order, so ties fall the same way. One quirk is
//! kept: a character the model lost is an unknown node whose expected count and Viterbi
//! count go to piece 0 (the trainer's model has no unknown piece, and id 0 is the default).

use rustc_hash::FxHashMap;

use super::piece_rule::{PieceRule, BOUNDARY, UNK_CHAR};
use super::SpTrainError;

/// The options the Unigram loop reads.
#[derive(Clone, Copy, Debug)]
pub(super) struct UnigramSpec {
    /// Pieces the model must end with, meta pieces excluded.
    pub slots: usize,
    /// `vocab_size` (meta pieces included): EM stops under 1.1 times it.
    pub vocab_size: usize,
    /// `shrinking_factor`.
    pub shrinking_factor: f32,
    /// `num_sub_iterations`.
    pub sub_iterations: usize,
    /// `num_threads`: how the sentences are dealt (the sums depend on it).
    pub partitions: usize,
    /// Worker threads (the result does not depend on them).
    pub threads: usize,
}

impl UnigramSpec {
    /// `desired_vocab_size_`: EM and pruning stop at this many pieces or fewer.
    fn desired(&self) -> usize {
        (self.vocab_size as f64 * 1.1) as usize
    }
}

/// A piece and its score.
pub(super) type Scored = (String, f32);

/// What the loop reports.
pub(super) enum Step {
    /// Seed pieces made.
    Seeds(usize),
    /// Pieces left after an EM round's pruning.
    Pieces(usize),
}

/// Seed pieces from `sentences` (masked, in order; each counts once), under `rule`: the
/// characters by count (then code point), then the `seed_size` best substrings.
///
/// As 0.2.3's `MakeSeedSentencePiecesFromCorpus`: the sentences' bytes, each followed by
/// NUL, in chunks of at most 500 MB; in each chunk's byte suffix array, every LCP interval
/// (Abouelhoda et al.'s stack walk) of depth 2 bytes or more that starts and ends on
/// character boundaries gives its prefix, trailing NULs cut, if it holds no other NUL, has
/// 2 to `max_sentencepiece_length` characters and passes the piece rule. A substring reached
/// from several intervals (`ab` and `ab\0`) sums their sizes. Candidates are scored
/// `count × characters` (`f32`) and ranked by score, then longer in bytes, then bytes.
pub(super) fn seed_pieces(sentences: &[String], rule: &PieceRule, seed_size: usize) -> Vec<Scored> {
    let mut all_chars: FxHashMap<char, i64> = FxHashMap::default();
    for s in sentences {
        for c in s.chars() {
            if c != UNK_CHAR && c != BOUNDARY {
                *all_chars.entry(c).or_default() += 1;
            }
        }
    }
    let mut chars: Vec<(char, i64)> = all_chars.into_iter().collect();
    chars.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut seeds: Vec<Scored> = chars
        .iter()
        .map(|&(c, n)| (c.to_string(), n as f32))
        .collect();

    const MAX_CHUNK: usize = 500 * 1024 * 1024;
    let mut found: FxHashMap<Vec<u8>, u64> = FxHashMap::default();
    let mut next = 0;
    while next < sentences.len() {
        let mut chunk = Vec::new();
        while next < sentences.len() && chunk.len() < MAX_CHUNK {
            chunk.extend_from_slice(sentences[next].as_bytes());
            chunk.push(0);
            next += 1;
        }
        lcp_intervals(&chunk, |offset, depth, freq| {
            let starts_char = |b: u8| b & 0xC0 != 0x80;
            if depth <= 1
                || !starts_char(chunk[offset])
                || (offset + depth < chunk.len() && !starts_char(chunk[offset + depth]))
            {
                return;
            }
            let mut piece = &chunk[offset..offset + depth];
            while let [rest @ .., 0] = piece {
                piece = rest;
            }
            if piece.contains(&0) {
                return;
            }
            let n_chars = piece.iter().filter(|&&b| starts_char(b)).count();
            if n_chars <= 1 || n_chars > rule.max_chars {
                return;
            }
            if let Some(n) = found.get_mut(piece) {
                *n += freq;
                return;
            }
            let Ok(text) = std::str::from_utf8(piece) else {
                return;
            };
            if rule.allows_text(text, n_chars) {
                found.insert(piece.to_vec(), freq);
            }
        });
    }
    let mut candidates: Vec<(Vec<u8>, f32)> = found
        .into_iter()
        .filter(|&(_, n)| n >= 2)
        .map(|(p, n)| {
            let len = p.iter().filter(|&&b| b & 0xC0 != 0x80).count();
            let score = n as f32 * len as f32;
            (p, score)
        })
        .collect();
    candidates.sort_unstable_by(|a, b| {
        b.1.partial_cmp(&a.1)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(b.0.len().cmp(&a.0.len()))
            .then_with(|| a.0.cmp(&b.0))
    });
    candidates.truncate(seed_size);
    for (p, score) in candidates {
        // Whole characters of UTF-8 text: checked above.
        seeds.push((String::from_utf8(p).unwrap_or_default(), score));
    }
    to_log_prob(&mut seeds);
    seeds
}

/// `ToLogProb` (0.2.3): each score's log minus the log of their `f64` sum.
fn to_log_prob(pieces: &mut [Scored]) {
    let mut sum = 0f64;
    for p in pieces.iter() {
        sum += f64::from(p.1);
    }
    let log_sum = sum.ln();
    for p in pieces.iter_mut() {
        p.1 = (f64::from(p.1).ln() - log_sum) as f32;
    }
}

/// Calls `f(offset, depth, count)` for every LCP interval of `text`'s suffix array (an
/// internal node of its suffix tree: `count` suffixes share `depth` bytes, the first of them
/// in suffix order at `offset`), in the stack walk's post-order.
fn lcp_intervals(text: &[u8], mut f: impl FnMut(usize, usize, u64)) {
    let n = text.len();
    if n == 0 {
        return;
    }
    let mut sa = vec![0i32; n];
    divsufsort::sort_in_place(text, &mut sa);
    // Kasai et al.: the LCP of each suffix with the one before it in `sa`.
    let mut rank = vec![0u32; n];
    for (i, &s) in sa.iter().enumerate() {
        rank[s as usize] = i as u32;
    }
    let mut lcp = vec![0u32; n];
    let mut h = 0usize;
    for i in 0..n {
        let r = rank[i] as usize;
        if r > 0 {
            let j = sa[r - 1] as usize;
            while i + h < n && j + h < n && text[i + h] == text[j + h] {
                h += 1;
            }
            lcp[r] = h as u32;
            h = h.saturating_sub(1);
        } else {
            h = 0;
        }
    }
    drop(rank);
    // (left end in `sa`, depth)
    let mut stack: Vec<(usize, u32)> = vec![(0, 0)];
    for i in 1..=n {
        let value = lcp.get(i).copied().unwrap_or(0);
        let mut last_l = i - 1;
        while let Some(&(l, depth)) = stack.last() {
            if value >= depth {
                break;
            }
            stack.pop();
            last_l = l;
            f(sa[l] as usize, depth as usize, (i - l) as u64);
            if stack.last().is_some_and(|t| value > t.1) {
                stack.push((l, value));
            }
        }
        if stack.last().is_some_and(|t| value > t.1) {
            stack.push((last_l, value));
        }
    }
}

/// `digamma(x)` as `sentencepiece` computes it (recurrence up to 7, then the series).
fn digamma(mut x: f64) -> f64 {
    let mut result = 0.0;
    while x < 7.0 {
        result -= 1.0 / x;
        x += 1.0;
    }
    x -= 1.0 / 2.0;
    let xx = 1.0 / x;
    let xx2 = xx * xx;
    let xx4 = xx2 * xx2;
    result += x.ln() + (1.0 / 24.0) * xx2 - (7.0 / 960.0) * xx4 + (31.0 / 8064.0) * xx4 * xx2
        - (127.0 / 30720.0) * xx4 * xx4;
    result
}

/// `log(exp(x) + exp(y))` as `sentencepiece`'s `LogSumExp` (`init`: `y`).
fn log_sum_exp(x: f32, y: f32, init: bool) -> f32 {
    if init {
        return y;
    }
    let (vmin, vmax) = if y < x { (y, x) } else { (x, y) };
    if vmax > vmin + 50.0 {
        vmax
    } else {
        (f64::from(vmax) + f64::from(vmin - vmax).exp().ln_1p()) as f32
    }
}

/// The trainer's model: pieces, scores, and a byte trie of the pieces.
struct Model {
    pieces: Vec<Scored>,
    index: FxHashMap<String, u32>,
    /// Trie edges: `node << 8 | byte` to the child node (the root is node 0).
    edges: FxHashMap<u64, u32>,
    /// The piece id each trie node spells, or -1.
    ends: Vec<i32>,
    min_score: f32,
}

impl Model {
    fn new(pieces: Vec<Scored>) -> Model {
        let mut index = FxHashMap::default();
        let mut edges: FxHashMap<u64, u32> = FxHashMap::default();
        let mut ends = vec![-1i32];
        let mut min_score = f32::MAX;
        for (i, (p, s)) in pieces.iter().enumerate() {
            index.insert(p.clone(), i as u32);
            let mut node = 0u32;
            for &b in p.as_bytes() {
                let next = ends.len() as u32;
                node = *edges
                    .entry(u64::from(node) << 8 | u64::from(b))
                    .or_insert(next);
                if node == next {
                    ends.push(-1);
                }
            }
            ends[node as usize] = i as i32;
            min_score = min_score.min(*s);
        }
        Model {
            pieces,
            index,
            edges,
            ends,
            min_score,
        }
    }
}

/// A lattice node. Nodes 0 and 1 are the start and the end.
#[derive(Clone, Copy)]
struct Node {
    pos: u32,
    /// Piece id; -1 for the start and end; an unknown node takes id 0.
    id: i32,
    score: f32,
    backtrace: f32,
    prev: u32,
}

/// `sentencepiece`'s lattice: nodes by start and by end position in insertion order.
#[derive(Default)]
struct Lattice {
    nodes: Vec<Node>,
    begin: Vec<Vec<u32>>,
    end: Vec<Vec<u32>>,
    len: usize,
    /// The byte offset of each character of the text, and its length last (kept to reuse).
    offsets: Vec<usize>,
}

const NONE: u32 = u32::MAX;

impl Lattice {
    /// The lattice of `text` under `model` (`PopulateNodes`: at each position the pieces that
    /// start there, shortest first, then an unknown node when no piece is one character).
    fn build(&mut self, text: &str, model: &Model) {
        let mut offsets = std::mem::take(&mut self.offsets);
        offsets.clear();
        offsets.extend(text.char_indices().map(|(i, _)| i));
        offsets.push(text.len());
        let n = offsets.len() - 1;
        self.len = n;
        self.nodes.clear();
        for v in self.begin.iter_mut().chain(self.end.iter_mut()) {
            v.clear();
        }
        if self.begin.len() < n + 1 {
            self.begin.resize_with(n + 1, Vec::new);
            self.end.resize_with(n + 1, Vec::new);
        }
        let edge = Node {
            pos: 0,
            id: -1,
            score: 0.0,
            backtrace: 0.0,
            prev: NONE,
        };
        self.nodes.push(edge);
        self.nodes.push(Node {
            pos: n as u32,
            ..edge
        });
        self.end[0].push(0);
        self.begin[n].push(1);
        let unk_score = model.min_score - 10.0;
        let bytes = text.as_bytes();
        for pos in 0..n {
            let mut single = false;
            // Walk the trie along the text; each character end on a piece is a node, shortest
            // first (the order of `commonPrefixSearch`).
            let mut node = 0u32;
            let mut len = 0;
            for (b, &byte) in bytes.iter().enumerate().skip(offsets[pos]) {
                match model.edges.get(&(u64::from(node) << 8 | u64::from(byte))) {
                    Some(&next) => node = next,
                    None => break,
                }
                if offsets[pos + len + 1] == b + 1 {
                    len += 1;
                    let id = model.ends[node as usize];
                    if id >= 0 {
                        self.insert(pos, len, id, model.pieces[id as usize].1);
                        single |= len == 1;
                    }
                }
            }
            if !single {
                self.insert(pos, 1, 0, unk_score);
            }
        }
        self.offsets = offsets;
    }

    fn insert(&mut self, pos: usize, len: usize, id: i32, score: f32) {
        let k = self.nodes.len() as u32;
        self.nodes.push(Node {
            pos: pos as u32,
            id,
            score,
            backtrace: 0.0,
            prev: NONE,
        });
        self.begin[pos].push(k);
        self.end[pos + len].push(k);
    }

    /// Adds `freq` × each piece's posterior to `expected` (`PopulateMarginal`).
    fn marginal(&self, freq: f32, expected: &mut [f32], alpha: &mut Vec<f32>, beta: &mut Vec<f32>) {
        let count = self.nodes.len();
        alpha.clear();
        alpha.resize(count, 0.0);
        beta.clear();
        beta.resize(count, 0.0);
        for pos in 0..=self.len {
            for &r in &self.begin[pos] {
                for (k, &l) in self.end[pos].iter().enumerate() {
                    let l = l as usize;
                    alpha[r as usize] = log_sum_exp(
                        alpha[r as usize],
                        1.0 * self.nodes[l].score + alpha[l],
                        k == 0,
                    );
                }
            }
        }
        for pos in (0..=self.len).rev() {
            for &l in &self.end[pos] {
                for (k, &r) in self.begin[pos].iter().enumerate() {
                    let r = r as usize;
                    beta[l as usize] =
                        log_sum_exp(beta[l as usize], self.nodes[r].score + beta[r], k == 0);
                }
            }
        }
        let z = alpha[1];
        for pos in 0..self.len {
            for &k in &self.begin[pos] {
                let node = &self.nodes[k as usize];
                if node.id >= 0 {
                    let k = k as usize;
                    let e = &mut expected[node.id as usize];
                    let p = f64::from(alpha[k] + node.score + beta[k] - z).exp();
                    *e = (f64::from(*e) + f64::from(freq) * p) as f32;
                }
            }
        }
    }

    /// Fills the Viterbi back pointers and scores (the first best left node wins a tie).
    fn viterbi_scores(&mut self) {
        for pos in 0..=self.len {
            for bi in 0..self.begin[pos].len() {
                let r = self.begin[pos][bi] as usize;
                let mut best = NONE;
                let mut best_score = 0f32;
                for &l in &self.end[pos] {
                    let score = self.nodes[l as usize].backtrace + self.nodes[r].score;
                    if best == NONE || score > best_score {
                        best = l;
                        best_score = score;
                    }
                }
                self.nodes[r].prev = best;
                self.nodes[r].backtrace = best_score;
            }
        }
    }

    /// The Viterbi path's nodes, start to end, and its score.
    fn viterbi(&mut self, out: &mut Vec<u32>) -> f32 {
        self.viterbi_scores();
        out.clear();
        let mut k = self.nodes[1].prev;
        while k != NONE && self.nodes[k as usize].prev != NONE {
            out.push(k);
            k = self.nodes[k as usize].prev;
        }
        out.reverse();
        self.nodes[1].backtrace
    }

    /// The two best paths (`NBest(2)`: A* from the end, with `std::priority_queue`'s heap so
    /// that equal priorities pop in its order).
    fn two_best(&mut self) -> Vec<Vec<u32>> {
        self.viterbi_scores();
        #[derive(Clone, Copy)]
        struct Hyp {
            node: u32,
            next: u32,
            fx: f32,
            gx: f32,
        }
        let mut hyps = vec![Hyp {
            node: 1,
            next: NONE,
            fx: self.nodes[1].backtrace,
            gx: 0.0,
        }];
        let mut agenda = StdHeap::default();
        agenda.push(0, hyps[0].fx);
        let mut results = Vec::new();
        while let Some(top) = agenda.pop() {
            let h = hyps[top as usize];
            if h.node == 0 {
                let mut path = Vec::new();
                let mut n = h.next;
                while hyps[n as usize].next != NONE {
                    path.push(hyps[n as usize].node);
                    n = hyps[n as usize].next;
                }
                results.push(path);
                if results.len() == 2 {
                    break;
                }
                continue;
            }
            let pos = self.nodes[h.node as usize].pos as usize;
            for &l in &self.end[pos] {
                let node = &self.nodes[l as usize];
                let hyp = Hyp {
                    node: l,
                    next: top,
                    gx: node.score + h.gx,
                    fx: node.backtrace + h.gx,
                };
                hyps.push(hyp);
                agenda.push(hyps.len() as u32 - 1, hyp.fx);
            }
            if agenda.items.len() >= 10_000 {
                // Keep the best 20 (min(512, 2 × 10)), pushed in popping order.
                let mut kept = StdHeap::default();
                for _ in 0..20 {
                    if let Some(k) = agenda.pop() {
                        kept.push(k, hyps[k as usize].fx);
                    }
                }
                agenda = kept;
            }
        }
        results
    }
}

/// A max-heap on `f32` priorities with libstdc++'s `push_heap`/`pop_heap` moves, so that
/// equal priorities come out in `std::priority_queue`'s order.
#[derive(Default)]
struct StdHeap {
    items: Vec<(u32, f32)>,
}

impl StdHeap {
    fn push(&mut self, item: u32, key: f32) {
        self.items.push((item, key));
        let hole = self.items.len() - 1;
        self.sift_up(hole, 0, (item, key));
    }

    /// `__push_heap`: move `value` up from `hole` while its parent is smaller.
    fn sift_up(&mut self, mut hole: usize, top: usize, value: (u32, f32)) {
        while hole > top {
            let parent = (hole - 1) / 2;
            // Moves up while `parent < value`; equal or NaN keys stop, as libstdc++'s `comp`.
            if self.items[parent].1.partial_cmp(&value.1) != Some(std::cmp::Ordering::Less) {
                break;
            }
            self.items[hole] = self.items[parent];
            hole = parent;
        }
        self.items[hole] = value;
    }

    fn pop(&mut self) -> Option<u32> {
        let len = self.items.len();
        if len == 0 {
            return None;
        }
        let top = self.items[0].0;
        if len > 1 {
            // `__pop_heap` then `__adjust_heap` over the first len - 1 items.
            let last = len - 1;
            let value = self.items[last];
            self.items[last] = self.items[0];
            let mut hole = 0usize;
            let mut child = 0usize;
            while child < (last - 1) / 2 {
                child = 2 * (child + 1);
                if self.items[child].1 < self.items[child - 1].1 {
                    child -= 1;
                }
                self.items[hole] = self.items[child];
                hole = child;
            }
            if last & 1 == 0 && child == (last - 2) / 2 {
                child = 2 * (child + 1);
                self.items[hole] = self.items[child - 1];
                hole = child - 1;
            }
            self.sift_up(hole, 0, value);
        }
        self.items.pop();
        Some(top)
    }
}

/// The sentences dealt to `parts` partitions as `spm_train` deals them to threads (sentence
/// `i` to partition `i mod parts`), each partition folded by `f` over its sentences in order,
/// on up to `threads` threads.
fn by_partition<T: Send>(
    sentences: &[(String, u64)],
    parts: usize,
    threads: usize,
    f: impl Fn(&mut dyn Iterator<Item = (usize, &(String, u64))>) -> T + Sync,
) -> Vec<T> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut out: Vec<(usize, T)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.clamp(1, parts))
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let p = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if p >= parts {
                            return done;
                        }
                        let mut it = sentences.iter().enumerate().skip(p).step_by(parts);
                        done.push((p, f(&mut it)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    out.sort_by_key(|p| p.0);
    out.into_iter().map(|p| p.1).collect()
}

/// The E step: each piece's expected count.
fn e_step(model: &Model, sentences: &[(String, u64)], spec: &UnigramSpec) -> Vec<f32> {
    let parts = by_partition(sentences, spec.partitions, spec.threads, |it| {
        let mut expected = vec![0f32; model.pieces.len()];
        let mut lattice = Lattice::default();
        let (mut alpha, mut beta) = (Vec::new(), Vec::new());
        for (_, (text, freq)) in it {
            lattice.build(text, model);
            lattice.marginal(*freq as f32, &mut expected, &mut alpha, &mut beta);
        }
        expected
    });
    let mut parts = parts.into_iter();
    let mut expected = parts.next().unwrap_or_default();
    for part in parts {
        for (e, p) in expected.iter_mut().zip(part) {
            *e += p;
        }
    }
    expected
}

/// The M step: pieces expected at least 0.5 times, scored by the Dirichlet-process update.
fn m_step(model: &Model, expected: &[f32]) -> Vec<Scored> {
    let mut kept = Vec::new();
    let mut sum = 0f32;
    for (p, &freq) in model.pieces.iter().zip(expected) {
        if freq < 0.5 {
            continue;
        }
        kept.push((p.0.clone(), freq));
        sum += freq;
    }
    let log_sum = digamma(f64::from(sum)) as f32;
    for p in &mut kept {
        p.1 = (digamma(f64::from(p.1)) - f64::from(log_sum)) as f32;
    }
    kept
}

/// `PruneSentencePieces`.
fn prune(model: &Model, sentences: &[(String, u64)], spec: &UnigramSpec) -> Vec<Scored> {
    let size = model.pieces.len();
    let mut always_keep = vec![true; size];
    let mut alternatives: Vec<Vec<u32>> = vec![Vec::new(); size];
    let mut lattice = Lattice::default();
    for (i, (piece, _)) in model.pieces.iter().enumerate() {
        lattice.build(piece, model);
        let best = lattice.two_best();
        if best.len() == 1 {
            always_keep[i] = true;
        } else if best[0].len() >= 2 {
            always_keep[i] = false;
        } else if best[0].len() == 1 {
            always_keep[i] = true;
            alternatives[i] = best[1]
                .iter()
                .map(|&k| lattice.nodes[k as usize].id as u32)
                .collect();
        }
    }

    let parts: Vec<Vec<f32>> = by_partition(sentences, spec.partitions, spec.threads, |it| {
        let mut freq = vec![0f32; size];
        let mut lattice = Lattice::default();
        let mut path = Vec::new();
        for (_, (text, n)) in it {
            lattice.build(text, model);
            lattice.viterbi(&mut path);
            for &k in &path {
                let id = lattice.nodes[k as usize].id;
                if id >= 0 {
                    freq[id as usize] += *n as f32;
                }
            }
        }
        freq
    });
    let mut freq = vec![0f32; size];
    for part in parts {
        for (f, p) in freq.iter_mut().zip(part) {
            *f += p;
        }
    }

    let sum = freq.iter().fold(0f64, |s, &f| s + f64::from(f)) as f32;
    let log_sum = f64::from(sum).ln() as f32;
    let mut candidates: Vec<(usize, f32)> = Vec::new();
    let mut kept: Vec<Scored> = Vec::new();
    for i in 0..size {
        if freq[i] == 0.0 || !always_keep[i] {
            continue;
        } else if alternatives[i].is_empty() {
            kept.push(model.pieces[i].clone());
        } else {
            let logprob_sp = (f64::from(freq[i]).ln() - f64::from(log_sum)) as f32;
            let extra = freq[i] * (alternatives[i].len() - 1) as f32;
            let log_sum_alt = f64::from(sum + extra).ln() as f32;
            let mut logprob_alt = 0f32;
            for &n in &alternatives[i] {
                logprob_alt = (f64::from(logprob_alt)
                    + (f64::from(freq[n as usize] + freq[i]).ln() - f64::from(log_sum_alt)))
                    as f32;
            }
            let f = freq[i] / sum;
            candidates.push((i, f * (logprob_sp - logprob_alt)));
        }
    }
    let desired = spec.desired();
    let shrunk = (spec.shrinking_factor * size as f32) as i32;
    let pruned_size = (desired as i32).max(shrunk);
    candidates.sort_by(|a, b| {
        b.1.partial_cmp(&a.1)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.0.cmp(&b.0))
    });
    for (i, _) in candidates {
        if kept.len() as i64 == i64::from(pruned_size) {
            break;
        }
        kept.push(model.pieces[i].clone());
    }
    kept
}

/// `PruneUnreachableSentencePieces`: drops each piece whose own lattice has a path
/// without it that scores higher than the piece (Viterbi could never choose it).
fn reachable(model: &Model) -> Vec<Scored> {
    let mut kept = Vec::new();
    let mut lattice = Lattice::default();
    let mut path = Vec::new();
    for (i, piece) in model.pieces.iter().enumerate() {
        lattice.build(&piece.0, model);
        let whole = lattice.begin[0].iter().copied().find(|&k| {
            let node = &lattice.nodes[k as usize];
            node.id == i as i32 && lattice.end[lattice.len].contains(&k)
        });
        let Some(whole) = whole else {
            continue;
        };
        let own = lattice.nodes[whole as usize].score;
        lattice.nodes[whole as usize].score = f32::NEG_INFINITY;
        let alt = lattice.viterbi(&mut path);
        if !path.is_empty() && alt > own {
            continue;
        }
        kept.push(piece.clone());
    }
    kept
}

/// `Sorted`: by score, highest first, then by bytes.
fn sorted(mut pieces: Vec<Scored>) -> Vec<Scored> {
    pieces.sort_by(|a, b| {
        b.1.partial_cmp(&a.1)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| a.0.cmp(&b.0))
    });
    pieces
}

/// Train from `seeds` on `sentences` (the EM's: words by count, or whole sentences);
/// `required` are the alphabet's characters by count (then code point).
pub(super) fn train(
    seeds: Vec<Scored>,
    sentences: &[(String, u64)],
    required: &[(char, u64)],
    spec: &UnigramSpec,
    mut progress: impl FnMut(Step),
) -> Result<Vec<Scored>, SpTrainError> {
    progress(Step::Seeds(seeds.len()));
    // `spm_train` stops with "no pieces are loaded." when a step leaves no piece (an M step
    // on a corpus so small that no piece is expected half a time, say); so does this.
    let non_empty = |pieces: Vec<Scored>| match pieces.is_empty() {
        true => Err(SpTrainError::NoPiecesLeft),
        false => Ok(Model::new(pieces)),
    };
    let mut model = non_empty(seeds)?;
    let desired = spec.desired();
    loop {
        for _ in 0..spec.sub_iterations {
            let expected = e_step(&model, sentences, spec);
            model = non_empty(m_step(&model, &expected))?;
        }
        model = non_empty(prune(&model, sentences, spec))?;
        progress(Step::Pieces(model.pieces.len()));
        if model.pieces.len() <= desired {
            break;
        }
    }
    model = non_empty(reachable(&model))?;
    // FinalizeSentencePieces.
    let mut fin: FxHashMap<String, f32> = FxHashMap::default();
    let mut penalty = 0f32;
    for &(c, _) in required {
        let s = c.to_string();
        match model.index.get(&s) {
            Some(&id) => {
                fin.insert(s, model.pieces[id as usize].1);
            }
            None => {
                fin.insert(s, model.min_score + penalty);
                penalty += 0.0001;
            }
        }
    }
    for (piece, score) in sorted(model.pieces) {
        if fin.contains_key(&piece) {
            continue;
        }
        if fin.len() == spec.slots {
            break;
        }
        fin.insert(piece, score);
    }
    Ok(sorted(fin.into_iter().collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lcp_intervals_are_the_repeated_right_branching_substrings() {
        let text = b"abab\0abc\0";
        let mut found = Vec::new();
        lcp_intervals(text, |o, d, n| found.push((text[o..o + d].to_vec(), n)));
        found.sort();
        // "ab" thrice (followed by a, \0 and c), "b" thrice, "\0" twice.
        assert_eq!(
            found,
            [(b"\0".to_vec(), 2), (b"ab".to_vec(), 3), (b"b".to_vec(), 3)]
        );
    }

    #[test]
    fn heap_pops_by_priority() {
        let mut h = StdHeap::default();
        for (i, k) in [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0].iter().enumerate() {
            h.push(i as u32, *k);
        }
        let keys: Vec<u32> = std::iter::from_fn(|| h.pop()).collect();
        assert_eq!(keys[..3], [5, 7, 4]);
        assert_eq!(keys.len(), 8);
    }
}
