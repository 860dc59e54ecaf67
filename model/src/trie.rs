//! [`TrieData`]: the owned form of [`picobpe::TokenTrie`], the host-only table for
//! backtracking encoding of long pieces (see `picobpe::backtrack`).

use rustc_hash::{FxHashMap, FxHashSet};

use picobpe::backtrack::{PairFilter, TrieEdge, TrieStart};
use picobpe::PairMap;
use picobpe::TokenTrie;

use crate::bpe::{pair_bpe, Merge};
use crate::model::Model;

/// The owned trie arrays ([`TokenTrie`] field by field); all empty when the model does not
/// qualify (see [`TrieData::new`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TrieData {
    /// The edge hash table ([`TokenTrie::edges`]).
    pub edges: Vec<u64>,
    /// Longest reachable proper prefix per id ([`TokenTrie::next_prefix`]).
    pub next_prefix: Vec<u32>,
    /// Merge split per id ([`TokenTrie::splits`]).
    pub splits: Vec<u64>,
    /// Bloom filter of the merges' pairs ([`TokenTrie::pair_filter`]).
    pub pair_filter: Vec<u64>,
    /// Walk starts after 2 bytes or a 3-byte character ([`TokenTrie::starts`]).
    pub starts: Vec<u64>,
}

impl TrieData {
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
    ) -> TrieData {
        let n = model.n_ids();
        let monotone = merged_ids.windows(2).all(|w| w[0] < w[1]);
        let max_byte = byte_ids.iter().copied().max().unwrap_or(0);
        let bytes_first = merged_ids.first().is_none_or(|&m| m > max_byte);
        if !monotone || !bytes_first || n >= TrieEdge::MAX_NODES {
            return TrieData::default();
        }

        // Reachable tokens: single bytes, and merged ids that BPE of their own bytes makes.
        let mut splits = vec![u64::MAX; n];
        for (&(l, r), &m) in model.merges.iter().zip(merged_ids) {
            if pair_bpe(&model.tokens[m as usize], byte_ids, merges) == [m] {
                splits[m as usize] = u64::from(l) << 32 | u64::from(r);
            }
        }
        let mut reachable: FxHashMap<&[u8], u32> = FxHashMap::default();
        for &id in byte_ids {
            reachable.insert(&model.tokens[id as usize], id);
        }
        for &m in merged_ids {
            if splits[m as usize] != u64::MAX {
                reachable.insert(&model.tokens[m as usize], m);
            }
        }

        // Nodes: every prefix of a reachable token. A reachable token's node is its id; the
        // other prefixes are numbered from `n` up.
        let mut nodes: FxHashMap<&[u8], u32> = reachable.clone();
        let mut next_node = n as u32;
        for bytes in reachable.keys() {
            for len in 1..bytes.len() {
                nodes.entry(&bytes[..len]).or_insert_with(|| {
                    next_node += 1;
                    next_node - 1
                });
            }
        }
        if next_node as usize > TrieEdge::MAX_NODES {
            return TrieData::default();
        }
        let has_children: FxHashSet<&[u8]> = nodes
            .keys()
            .filter(|b| b.len() > 1)
            .map(|b| &b[..b.len() - 1])
            .collect();
        let edge_count = nodes.keys().filter(|b| b.len() > 1).count();
        let len = (2 * edge_count).next_power_of_two().max(2);
        let mut edges = vec![0u64; len];
        for (&bytes, &child) in &nodes {
            let Some((&byte, parent)) = bytes.split_last() else {
                continue;
            };
            if parent.is_empty() {
                continue; // a first byte: the walk starts at its byte id
            }
            let parent = nodes[parent];
            let entry = TrieEdge::entry(parent, byte, child, !has_children.contains(bytes));
            let mut slot = TrieEdge::home(TrieEdge::key(parent, byte), len);
            while edges[slot] != 0 {
                slot = (slot + 1) & (len - 1);
            }
            edges[slot] = entry;
        }

        let mut next_prefix = vec![u32::MAX; n];
        for (&bytes, &id) in &reachable {
            next_prefix[id as usize] = (1..bytes.len())
                .rev()
                .find_map(|len| reachable.get(&bytes[..len]).copied())
                .unwrap_or(u32::MAX);
        }
        // 16 bits per merge: about 1 % false positives with two bits per pair.
        let words = (model.merges.len() / 4).next_power_of_two().max(1);
        let mut pair_filter = vec![0u64; words];
        for &(l, r) in &model.merges {
            if let Some(key) = PairMap::key(l, r) {
                let (word, mask) = PairFilter::slot(key, words);
                pair_filter[word] |= mask;
            }
        }
        // Starts: the node after 2 bytes, or after a 3-byte character, with the longest token
        // among its prefixes.
        let longest = |bytes: &[u8]| {
            (1..=bytes.len())
                .rev()
                .find_map(|len| reachable.get(&bytes[..len]).map(|&id| (id, len)))
        };
        let mut starts = vec![0u64; TrieStart::LEN];
        for (&bytes, &node) in &nodes {
            let index = match *bytes {
                [a, b] => usize::from(a) << 8 | usize::from(b),
                [a, b, c] => match TrieStart::char3(a, b, c) {
                    Some(i) => i,
                    None => continue,
                },
                _ => continue,
            };
            let (best, best_len) = longest(bytes).unwrap_or((0, 0));
            starts[index] = TrieStart::entry(node, best, best_len, !has_children.contains(bytes));
        }
        TrieData {
            edges,
            next_prefix,
            splits,
            pair_filter,
            starts,
        }
    }

    /// Bytes the trie takes in memory.
    pub fn bytes(&self) -> usize {
        8 * (self.edges.len() + self.splits.len() + self.pair_filter.len() + self.starts.len())
            + 4 * self.next_prefix.len()
    }

    /// Borrow as a [`TokenTrie`].
    pub fn as_trie(&self) -> TokenTrie<'_> {
        TokenTrie {
            edges: &self.edges,
            next_prefix: &self.next_prefix,
            splits: &self.splits,
            pair_filter: &self.pair_filter,
            starts: &self.starts,
        }
    }
}
