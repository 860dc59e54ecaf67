//! [`TrieData`]: the arrays of [`picobpe::TokenTrie`], the host-only table for
//! backtracking encoding of long pieces (see `picobpe::bytelevel::TokenTrie`).
//!
//! Built in steps, one function each: the reachable tokens and their merges, the trie's
//! nodes, then from those the edge table, the prefix chains, the start table and the pair
//! filter.

use rustc_hash::{FxHashMap, FxHashSet};
use std::borrow::Cow;

use picobpe::bytelevel::{char3_code, PairFilter, TrieChar, TrieEdge, TrieStart};
use picobpe::PairMap;

use crate::bpe::{pair_bpe, Merge};
use crate::model::Model;

/// The trie arrays ([`TokenTrie`](picobpe::TokenTrie) field by field; owned, or borrowed from a
/// mapped model file); all empty when the model does not qualify (see [`TrieData::new`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TrieData<'a> {
    /// The edge hash table ([`TokenTrie::edges`](picobpe::TokenTrie::edges)).
    pub edges: Cow<'a, [u64]>,
    /// Longest reachable proper prefix per id ([`TokenTrie::next_prefix`](picobpe::TokenTrie::next_prefix)).
    pub next_prefix: Cow<'a, [u32]>,
    /// Merge split per id ([`TokenTrie::splits`](picobpe::TokenTrie::splits)).
    pub splits: Cow<'a, [u64]>,
    /// Bloom filter of the merges' pairs ([`TokenTrie::pair_filter`](picobpe::TokenTrie::pair_filter)).
    pub pair_filter: Cow<'a, [u64]>,
    /// Walk starts after 2 bytes or a 3-byte character ([`TokenTrie::starts`](picobpe::TokenTrie::starts)).
    pub starts: Cow<'a, [u64]>,
    /// Character edges ([`TokenTrie::chars`](picobpe::TokenTrie::chars)).
    pub chars: Cow<'a, [u64]>,
}

impl TrieData<'static> {
    /// Build the trie of `model`'s reachable tokens, or an empty one when merge priority does
    /// not follow id order (`merged_ids` not increasing), a single byte's id is above a merged
    /// id, or the trie would have more than [`TrieEdge::MAX_NODES`] nodes.
    ///
    /// `merged_ids[rank]` is the id merge `rank` makes; `merges` the same merges by pair.
    pub fn new(
        model: &Model,
        byte_ids: &[u32; 256],
        merged_ids: &[u32],
        merges: &FxHashMap<(u32, u32), Merge>,
    ) -> Self {
        let n = model.n_ids();
        let monotone = merged_ids.windows(2).all(|w| w[0] < w[1]);
        let max_byte = byte_ids.iter().copied().max().unwrap_or(0);
        let bytes_first = merged_ids.first().is_none_or(|&m| m > max_byte);
        if !monotone || !bytes_first || n >= TrieEdge::MAX_NODES {
            return TrieData::default();
        }
        let splits = reachable_splits(model, byte_ids, merged_ids, merges);
        let reachable = Reachable::new(model, byte_ids, merged_ids, &splits);
        let Some(nodes) = Nodes::new(&reachable.ids, n) else {
            return TrieData::default();
        };
        TrieData {
            edges: edge_table(&nodes).into(),
            next_prefix: next_prefixes(&reachable, n).into(),
            splits: splits.into(),
            pair_filter: pair_filter(&model.merges).into(),
            starts: start_table(&nodes, &reachable).into(),
            chars: char_table(&nodes).into(),
        }
    }
}

/// Per id, `left << 32 | right` of the merge that makes it when BPE of its own bytes makes it
/// (a reachable merged token), else `u64::MAX`.
fn reachable_splits(
    model: &Model,
    byte_ids: &[u32; 256],
    merged_ids: &[u32],
    merges: &FxHashMap<(u32, u32), Merge>,
) -> Vec<u64> {
    let mut splits = vec![u64::MAX; model.n_ids()];
    for (&(l, r), &m) in model.merges.iter().zip(merged_ids) {
        if pair_bpe(&model.tokens[m as usize], byte_ids, merges) == [m] {
            splits[m as usize] = u64::from(l) << 32 | u64::from(r);
        }
    }
    splits
}

/// The reachable tokens by their bytes: single bytes, and merged ids with a split.
struct Reachable<'m> {
    ids: FxHashMap<&'m [u8], u32>,
}

impl<'m> Reachable<'m> {
    fn new(model: &'m Model, byte_ids: &[u32; 256], merged_ids: &[u32], splits: &[u64]) -> Self {
        let merged = merged_ids
            .iter()
            .filter(|&&m| splits[m as usize] != u64::MAX);
        let ids = byte_ids
            .iter()
            .chain(merged)
            .map(|&id| (model.tokens[id as usize].as_slice(), id))
            .collect();
        Reachable { ids }
    }

    /// The longest reachable token among the first `1..=max_len` bytes of `bytes`, with its
    /// length.
    fn longest(&self, bytes: &[u8], max_len: usize) -> Option<(u32, usize)> {
        (1..=max_len.min(bytes.len()))
            .rev()
            .find_map(|len| self.ids.get(&bytes[..len]).map(|&id| (id, len)))
    }
}

/// The trie's nodes: every prefix of a reachable token, numbered (a reachable token's node is
/// its id; the other prefixes are numbered from `n_ids` up), and which have children.
struct Nodes<'m> {
    number: FxHashMap<&'m [u8], u32>,
    has_children: FxHashSet<&'m [u8]>,
    /// Prefixes `p` of tokens `p ++ x`, `x` one or two bytes starting with a 3-byte lead
    /// ([`TrieChar::PARTIAL`]).
    partial: FxHashSet<&'m [u8]>,
}

impl<'m> Nodes<'m> {
    /// `None` when there would be more than [`TrieEdge::MAX_NODES`] nodes.
    fn new(reachable: &FxHashMap<&'m [u8], u32>, n_ids: usize) -> Option<Self> {
        let mut number = reachable.clone();
        let mut next = n_ids as u32;
        for bytes in reachable.keys() {
            for len in 1..bytes.len() {
                number.entry(&bytes[..len]).or_insert_with(|| {
                    next += 1;
                    next - 1
                });
            }
        }
        if next as usize > TrieEdge::MAX_NODES {
            return None;
        }
        let has_children = number
            .keys()
            .filter_map(|b| b.split_last().map(|(_, parent)| parent))
            .filter(|parent| !parent.is_empty())
            .collect();
        let partial = reachable
            .keys()
            .flat_map(|&b| (1..=2).filter_map(move |k| b.len().checked_sub(k).map(|at| (b, at))))
            .filter(|&(b, at)| at > 0 && (0xE0..=0xEF).contains(&b[at]))
            .map(|(b, at)| &b[..at])
            .collect();
        Some(Nodes {
            number,
            has_children,
            partial,
        })
    }

    fn is_leaf(&self, bytes: &[u8]) -> bool {
        !self.has_children.contains(bytes)
    }

    /// A token may end one or two bytes into a 3-byte character after `bytes`.
    fn is_partial(&self, bytes: &[u8]) -> bool {
        self.partial.contains(bytes)
    }
}

/// The open-addressing edge table ([`picobpe::TokenTrie::edges`]): one edge per node of two
/// or more bytes (a first byte's node is its byte id, where every walk starts), at most half
/// full.
fn edge_table(nodes: &Nodes<'_>) -> Vec<u64> {
    let edges = nodes
        .number
        .iter()
        .filter_map(|(&bytes, &child)| {
            let (&byte, parent) = bytes.split_last()?;
            if parent.is_empty() {
                return None;
            }
            let parent = nodes.number[parent];
            let entry = TrieEdge::entry(parent, byte, child, nodes.is_leaf(bytes));
            Some((TrieEdge::key(parent, byte), entry))
        })
        .collect();
    open_table(edges, TrieEdge::home)
}

/// An open-addressing table of `(key, entry)` pairs (no entry is 0), its length the power of
/// two at least twice their number: each entry at slot `home(key, len)` or the next free one.
fn open_table(entries: Vec<(u64, u64)>, home: impl Fn(u64, usize) -> usize) -> Vec<u64> {
    let len = (2 * entries.len()).next_power_of_two().max(2);
    let mut table = vec![0u64; len];
    for (key, entry) in entries {
        let mut slot = home(key, len);
        while table[slot] != 0 {
            slot = (slot + 1) & (len - 1);
        }
        table[slot] = entry;
    }
    table
}

/// Per id, the longest reachable proper prefix of a reachable token, else `u32::MAX`
/// ([`picobpe::TokenTrie::next_prefix`]).
fn next_prefixes(reachable: &Reachable<'_>, n_ids: usize) -> Vec<u32> {
    let mut next_prefix = vec![u32::MAX; n_ids];
    for (&bytes, &id) in &reachable.ids {
        if let Some((shorter, _)) = reachable.longest(bytes, bytes.len() - 1) {
            next_prefix[id as usize] = shorter;
        }
    }
    next_prefix
}

/// The walk's start entries ([`picobpe::TokenTrie::starts`]): the node after 2 bytes, or after
/// a 3-byte character, with the longest token among its prefixes.
fn start_table(nodes: &Nodes<'_>, reachable: &Reachable<'_>) -> Vec<u64> {
    let mut starts = vec![0u64; TrieStart::LEN];
    for (&bytes, &node) in &nodes.number {
        let index = match *bytes {
            [a, b] => usize::from(a) << 8 | usize::from(b),
            [a, b, c] => match TrieStart::char3(a, b, c) {
                Some(i) => i,
                None => continue,
            },
            _ => continue,
        };
        let (best, best_len) = reachable.longest(bytes, bytes.len()).unwrap_or((0, 0));
        starts[index] = TrieStart::entry(
            node,
            best,
            best_len,
            nodes.is_leaf(bytes),
            nodes.is_partial(bytes),
        );
    }
    starts
}

/// The character edge table ([`picobpe::TokenTrie::chars`]): one edge per node of four or
/// more bytes whose last three bytes are a 3-byte UTF-8 character, at most half full.
fn char_table(nodes: &Nodes<'_>) -> Vec<u64> {
    let edges = nodes
        .number
        .iter()
        .filter_map(|(&bytes, &child)| {
            let [.., a, b, c] = *bytes else { return None };
            let parent = bytes.get(..bytes.len().checked_sub(3).filter(|&n| n > 0)?)?;
            let code = char3_code(a, b, c)?;
            let parent = nodes.number[parent];
            let leaf = nodes.is_leaf(bytes);
            let entry = TrieChar::entry(parent, code, child, leaf, nodes.is_partial(bytes));
            Some((TrieChar::key(parent, code), entry))
        })
        .collect();
    open_table(edges, TrieChar::home)
}

/// The Bloom filter of the merges' pairs ([`picobpe::TokenTrie::pair_filter`]): 16 bits per
/// merge, about 1 % false positives with two bits per pair.
fn pair_filter(merges: &[(u32, u32)]) -> Vec<u64> {
    let words = (merges.len() / 4).next_power_of_two().max(1);
    let mut filter = vec![0u64; words];
    for &(l, r) in merges {
        if let Some(key) = PairMap::key(l, r) {
            let (word, mask) = PairFilter::slot(key, words);
            filter[word] |= mask;
        }
    }
    filter
}
