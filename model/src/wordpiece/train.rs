//! Learning a WordPiece vocabulary from word counts: `tokenizers`' `WordPieceTrainer` (BPE
//! merges over characters, a continuation prefix on every character but a word's first, the
//! most frequent pair first), and the likelihood criterion described for Google's WordPiece.
//!
//! **Frequency** ([`WpScore::Frequency`]) follows `tokenizers` 0.22's `BpeTrainer` step by
//! step: the special tokens, then the alphabet (every character of the words, the rarest
//! dropped down to `limit_alphabet`, kept in code point order), then the continuation forms
//! of the characters (`##c`) as the words are read, then merges taken from a max-heap of
//! (count, pair) — ties to the smaller pair of ids — whose entries carry the words they were
//! counted in and are checked against the current count when they come out, as there. Its
//! quirks are kept because they decide the vocabulary: the count of a merged pair is not
//! cleared (only its neighbours' changes move it), and a heap entry merges only the words it
//! carries. `tokenizers` reads the words, and so gives the `##c` forms their ids, in hash
//! order, which differs from run to run (and breaks ties among pairs differently); here the
//! words are read in byte order, so the ids are the same on every run, and the vocabulary
//! *as a set* is `tokenizers`' wherever its own runs agree.
//!
//! **Likelihood** ([`WpScore::Likelihood`]): each step merges the adjacent pair (A, B) with
//! the greatest count(AB) / (count(A) · count(B)), counts being occurrences in the corpus
//! segmented by the merges so far (a pair that occurs less than `min_frequency` times is
//! not a candidate); ties go to the greater count(AB), then to the smaller pair of ids. It
//! prefers pairs whose parts are rarely seen apart, which is what raises the corpus
//! likelihood under a unigram model of the pieces.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap, HashSet};

use super::{InvalidWpModel, WpModel};

/// How the next merge is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WpScore {
    /// The most frequent pair (`tokenizers`' `WordPieceTrainer`).
    Frequency,
    /// The pair with the greatest count(AB) / (count(A) · count(B)).
    Likelihood,
}

/// A WordPiece trainer's settings, under `tokenizers`' names.
#[derive(Clone, Debug)]
pub struct WpTrainer {
    /// Stop when the vocabulary has this many entries.
    pub vocab_size: usize,
    /// A pair seen fewer times than this is never merged.
    pub min_frequency: u64,
    /// Keep at most this many characters in the alphabet (the most frequent).
    pub limit_alphabet: Option<usize>,
    /// The continuation prefix (`##`).
    pub prefix: String,
    /// Entries put first, in this order (`[PAD]`, `[UNK]`, `[CLS]`, ...).
    pub special_tokens: Vec<String>,
    /// How the next merge is chosen.
    pub score: WpScore,
}

impl Default for WpTrainer {
    /// `tokenizers`' `WordPieceTrainer` defaults: 30,000 entries, no frequency floor, no
    /// alphabet limit, `##`, no special tokens.
    fn default() -> Self {
        WpTrainer {
            vocab_size: 30_000,
            min_frequency: 0,
            limit_alphabet: None,
            prefix: "##".into(),
            special_tokens: Vec::new(),
            score: WpScore::Frequency,
        }
    }
}

/// Counts the words of a corpus as BERT's normalizer (`clean_text`, `handle_chinese_chars`,
/// and `lowercase`, `strip_accents` as given) and pre-tokenizer make them: the core
/// encoder's own walk ([`picobpe::WpTokenizer::pre_tokenize`]), so the words trained on are
/// the words encoded.
pub struct WordCounter {
    flags: super::WpTableData,
    /// Each word seen, with how many times.
    pub counts: HashMap<String, u64>,
}

impl WordCounter {
    /// A counter with BERT's normalizer flags (`strip_accents` as resolved: `tokenizers`'
    /// `null` is the value of `lowercase`).
    pub fn new(lowercase: bool, strip_accents: bool) -> Self {
        let model = WpModel::bert(
            vec!["[UNK]".into()],
            0,
            "##".into(),
            lowercase,
            strip_accents,
            Vec::new(),
        );
        WordCounter {
            // A one-entry vocabulary of BERT's settings is always valid.
            flags: super::WpTableData::new(&model).expect("valid tables"),
            counts: HashMap::new(),
        }
    }

    /// Count the words of `text`, UTF-8 (added tokens are not recognized: `tokenizers` trains
    /// on the text as it is; bytes that are not UTF-8 are read as the encoder reads them).
    pub fn add(&mut self, text: &[u8]) {
        let mut word = String::new();
        let counts = &mut self.counts;
        self.flags.with_tables(|tables| {
            picobpe::WpTokenizer::new(tables).pre_tokenize(text, |c| match c {
                Some(c) => word.push(c),
                None => match counts.get_mut(word.as_str()) {
                    Some(n) => {
                        *n += 1;
                        word.clear();
                    }
                    None => {
                        counts.insert(std::mem::take(&mut word), 1);
                    }
                },
            })
        });
    }
}

/// A pair of symbol ids.
type Pair = (u32, u32);

/// A heap entry of the frequency trainer: `tokenizers`' `Merge`, ordered by count, then by
/// the *smaller* pair.
#[derive(Debug)]
struct Merge {
    pair: Pair,
    count: u64,
    words: HashSet<usize>,
}

impl PartialEq for Merge {
    fn eq(&self, other: &Self) -> bool {
        self.count == other.count && self.pair == other.pair
    }
}

impl Eq for Merge {}

impl PartialOrd for Merge {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Merge {
    fn cmp(&self, other: &Self) -> Ordering {
        self.count
            .cmp(&other.count)
            .then_with(|| other.pair.cmp(&self.pair))
    }
}

/// The vocabulary being built: entries by id and ids by entry.
#[derive(Default)]
struct Vocab {
    entries: Vec<String>,
    ids: HashMap<String, u32>,
}

impl Vocab {
    /// The id of `entry`, added at the end when it is new.
    fn add(&mut self, entry: String) -> u32 {
        if let Some(&id) = self.ids.get(&entry) {
            return id;
        }
        let id = self.entries.len() as u32;
        self.ids.insert(entry.clone(), id);
        self.entries.push(entry);
        id
    }
}

impl WpTrainer {
    /// The vocabulary, in id order, learned from `words` (each word of the normalized,
    /// pre-tokenized corpus with its count).
    pub fn train(&self, words: &HashMap<String, u64>) -> Vec<String> {
        self.train_with_progress(words, |_| {})
    }

    /// [`WpTrainer::train`], calling `progress` with the vocabulary's size after each merge.
    pub fn train_with_progress(
        &self,
        words: &HashMap<String, u64>,
        progress: impl FnMut(usize),
    ) -> Vec<String> {
        let mut vocab = Vocab::default();
        for s in &self.special_tokens {
            vocab.add(s.clone());
        }
        self.add_alphabet(words, &mut vocab);
        // The words in byte order: the continuation forms get their ids in the order they
        // are first seen, the same on every run.
        let mut sorted: Vec<(&String, u64)> = words.iter().map(|(w, &c)| (w, c)).collect();
        sorted.sort_unstable();
        let counts: Vec<u64> = sorted.iter().map(|w| w.1).collect();
        let mut seen = HashMap::new();
        let symbols: Vec<Vec<u32>> = sorted
            .iter()
            .map(|(w, _)| self.first_symbols(w, &mut vocab, &mut seen))
            .collect();
        match self.score {
            WpScore::Frequency => self.merge_by_frequency(symbols, &counts, &mut vocab, progress),
            WpScore::Likelihood => self.merge_by_likelihood(symbols, &counts, &mut vocab, progress),
        }
        vocab.entries
    }

    /// A BERT model over `vocab`, which this trainer learned from words counted with
    /// `BertNormalizer`'s `lowercase` and `strip_accents` as given (and `clean_text`,
    /// `handle_chinese_chars` on): the special tokens as added tokens, `unk` (one of them)
    /// the unknown token, BERT's word limit (100 characters) and decoder clean-up.
    pub fn bert_model(
        &self,
        vocab: Vec<String>,
        unk: &str,
        lowercase: bool,
        strip_accents: bool,
    ) -> Result<WpModel, InvalidWpModel> {
        let id_of = |s: &str| vocab.iter().position(|v| v == s).map(|i| i as u32);
        let unk_id = self
            .special_tokens
            .iter()
            .any(|s| s == unk)
            .then(|| id_of(unk))
            .flatten()
            .ok_or_else(|| InvalidWpModel::NoUnknown {
                token: unk.to_owned(),
            })?;
        let specials = (self.special_tokens.iter())
            .filter_map(|s| Some((s.clone(), id_of(s)?)))
            .collect();
        let model = WpModel::bert(
            vocab,
            unk_id,
            self.prefix.clone(),
            lowercase,
            strip_accents,
            specials,
        );
        model.validate()?;
        Ok(model)
    }

    /// The characters of the words, the rarest dropped past `limit_alphabet` (among equal
    /// counts, the greater character first), added in code point order.
    fn add_alphabet(&self, words: &HashMap<String, u64>, vocab: &mut Vocab) {
        let mut alphabet: HashMap<char, u64> = HashMap::new();
        for (w, &count) in words {
            for c in w.chars() {
                *alphabet.entry(c).or_default() += count;
            }
        }
        let mut kept: Vec<(char, u64)> = alphabet.into_iter().collect();
        let remove = self
            .limit_alphabet
            .map_or(0, |limit| kept.len().saturating_sub(limit));
        if remove > 0 {
            kept.sort_unstable_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)));
            kept.drain(..remove);
        }
        kept.sort_unstable_by_key(|k| k.0);
        for (c, _) in kept {
            vocab.add(c.to_string());
        }
    }

    /// A word as symbols: each character in the alphabet, with the prefix when it is not the
    /// word's first character (characters outside the alphabet are left out, but still
    /// count as the first).
    /// `seen` remembers each (character, first) asked about: what it maps to cannot change,
    /// since the entries added here are never a single character not there before.
    fn first_symbols(
        &self,
        word: &str,
        vocab: &mut Vocab,
        seen: &mut HashMap<(char, bool), Option<u32>>,
    ) -> Vec<u32> {
        let mut out = Vec::with_capacity(word.len());
        for (i, c) in word.chars().enumerate() {
            let id = *seen.entry((c, i == 0)).or_insert_with(|| {
                let s = c.to_string();
                if !vocab.ids.contains_key(&s) {
                    return None;
                }
                Some(vocab.add(if i == 0 {
                    s
                } else {
                    format!("{}{s}", self.prefix)
                }))
            });
            out.extend(id);
        }
        out
    }

    /// The entry the merge of `pair` makes: the first part, then the second without its
    /// prefix.
    fn merged(&self, vocab: &Vocab, pair: Pair) -> String {
        let a = &vocab.entries[pair.0 as usize];
        let b = &vocab.entries[pair.1 as usize];
        let b = b.strip_prefix(self.prefix.as_str()).unwrap_or(b);
        format!("{a}{b}")
    }

    /// `tokenizers`' merge loop (see the module docs).
    fn merge_by_frequency(
        &self,
        mut words: Vec<Vec<u32>>,
        counts: &[u64],
        vocab: &mut Vocab,
        mut progress: impl FnMut(usize),
    ) {
        let mut pair_counts: HashMap<Pair, i64> = HashMap::new();
        let mut where_seen: HashMap<Pair, HashSet<usize>> = HashMap::new();
        for (i, w) in words.iter().enumerate() {
            for p in w.windows(2) {
                let pair = (p[0], p[1]);
                *pair_counts.entry(pair).or_default() += counts[i] as i64;
                where_seen.entry(pair).or_default().insert(i);
            }
        }
        let mut heap = BinaryHeap::with_capacity(pair_counts.len());
        push_seen(&mut heap, &mut where_seen, &pair_counts);
        while vocab.entries.len() < self.vocab_size {
            let Some(mut top) = heap.pop() else { break };
            let current = pair_counts[&top.pair];
            if top.count as i64 != current {
                top.count = current.max(0) as u64;
                heap.push(top);
                continue;
            }
            if top.count < 1 || self.min_frequency > top.count {
                break;
            }
            let new_id = vocab.add(self.merged(vocab, top.pair));
            for &i in &top.words {
                merge_word(&mut words[i], top.pair, new_id, |pair, change| {
                    *pair_counts.entry(pair).or_default() += change * counts[i] as i64;
                    if change > 0 {
                        where_seen.entry(pair).or_default().insert(i);
                    }
                });
            }
            push_seen(&mut heap, &mut where_seen, &pair_counts);
            progress(vocab.entries.len());
        }
    }

    /// The likelihood criterion's merge loop (see the module docs): exact pair and symbol
    /// counts, kept up to date word by word.
    fn merge_by_likelihood(
        &self,
        mut words: Vec<Vec<u32>>,
        counts: &[u64],
        vocab: &mut Vocab,
        mut progress: impl FnMut(usize),
    ) {
        let mut pairs: HashMap<Pair, u64> = HashMap::new();
        let mut symbols: HashMap<u32, u64> = HashMap::new();
        let mut where_seen: HashMap<Pair, HashSet<usize>> = HashMap::new();
        let tally = |w: &[u32],
                     count: u64,
                     sign: bool,
                     pairs: &mut HashMap<Pair, u64>,
                     symbols: &mut HashMap<u32, u64>| {
            let add = |v: &mut u64| *v = if sign { *v + count } else { *v - count };
            for &s in w {
                add(symbols.entry(s).or_default());
            }
            for p in w.windows(2) {
                add(pairs.entry((p[0], p[1])).or_default());
            }
        };
        for (i, w) in words.iter().enumerate() {
            tally(w, counts[i], true, &mut pairs, &mut symbols);
            for p in w.windows(2) {
                where_seen.entry((p[0], p[1])).or_default().insert(i);
            }
        }
        let floor = self.min_frequency.max(1);
        while vocab.entries.len() < self.vocab_size {
            let score =
                |(&(a, b), &n): (&Pair, &u64)| n as f64 / (symbols[&a] as f64 * symbols[&b] as f64);
            let best = pairs
                .iter()
                .filter(|(_, &n)| n >= floor)
                .max_by(|x, y| {
                    score(*x)
                        .total_cmp(&score(*y))
                        .then(x.1.cmp(y.1))
                        .then(y.0.cmp(x.0))
                })
                .map(|(&p, _)| p);
            let Some(pair) = best else { break };
            let new_id = vocab.add(self.merged(vocab, pair));
            let seen: Vec<usize> = where_seen.remove(&pair).into_iter().flatten().collect();
            for i in seen {
                tally(&words[i], counts[i], false, &mut pairs, &mut symbols);
                merge_word(&mut words[i], pair, new_id, |_, _| {});
                tally(&words[i], counts[i], true, &mut pairs, &mut symbols);
                for p in words[i].windows(2) {
                    where_seen.entry((p[0], p[1])).or_default().insert(i);
                }
            }
            pairs.retain(|_, n| *n > 0);
            progress(vocab.entries.len());
        }
    }
}

/// Push a heap entry for every pair whose words changed, with its current count, and forget
/// those words (`tokenizers`' `where_to_update.drain()`).
fn push_seen(
    heap: &mut BinaryHeap<Merge>,
    where_seen: &mut HashMap<Pair, HashSet<usize>>,
    pair_counts: &HashMap<Pair, i64>,
) {
    for (pair, words) in where_seen.drain() {
        let count = pair_counts[&pair];
        if count > 0 {
            heap.push(Merge {
                pair,
                count: count as u64,
                words,
            });
        }
    }
}

/// Merge every occurrence of `pair` in `word`, left to right, into `new_id`, calling `change`
/// with each change to the counts of the pairs around a merge (`tokenizers`' `Word::merge`:
/// the pair merged is not among them, except where an occurrence overlaps its neighbour).
fn merge_word(word: &mut Vec<u32>, pair: Pair, new_id: u32, mut change: impl FnMut(Pair, i64)) {
    // Compacted in place: `word[..w]` is the merged word so far, `word[r..]` what is left
    // (linear in the word's length, however many occurrences it holds).
    let (mut r, mut w) = (0, 0);
    while r < word.len() {
        if word[r] == pair.0 && word.get(r + 1) == Some(&pair.1) {
            if w > 0 {
                change((word[w - 1], pair.0), -1);
                change((word[w - 1], new_id), 1);
            }
            if let Some(&next) = word.get(r + 2) {
                change((pair.1, next), -1);
                change((new_id, next), 1);
            }
            word[w] = new_id;
            r += 2;
        } else {
            word[w] = word[r];
            r += 1;
        }
        w += 1;
    }
    word.truncate(w);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(words: &[(&str, u64)]) -> HashMap<String, u64> {
        words.iter().map(|&(w, c)| (w.to_owned(), c)).collect()
    }

    #[test]
    fn specials_alphabet_continuations_then_merges() {
        let t = WpTrainer {
            vocab_size: 12,
            special_tokens: vec!["[UNK]".into()],
            ..WpTrainer::default()
        };
        let v = t.train(&counts(&[("ab", 3), ("abc", 2), ("b", 1)]));
        assert_eq!(
            v,
            ["[UNK]", "a", "b", "c", "##b", "##c", "ab", "abc"].map(String::from)
        );
    }

    #[test]
    fn limit_alphabet_drops_the_rarest() {
        let t = WpTrainer {
            vocab_size: 10,
            limit_alphabet: Some(2),
            ..WpTrainer::default()
        };
        // `c` (1) goes; `x` is dropped from `xa`, whose `a` still counts as continuing.
        let v = t.train(&counts(&[("ab", 5), ("xa", 2), ("c", 1), ("x", 1)]));
        assert_eq!(&v[..2], ["a", "b"].map(String::from));
        assert!(v.contains(&"##a".to_owned()) && !v.contains(&"x".to_owned()));
    }

    #[test]
    fn likelihood_prefers_parts_seen_together() {
        // `ab` is the most frequent pair, but `x` and `y` are never apart.
        let words = counts(&[("ab", 10), ("a", 30), ("b", 30), ("xy", 3)]);
        let base = WpTrainer {
            vocab_size: 7,
            ..WpTrainer::default()
        };
        let freq = base.train(&words);
        let like = WpTrainer {
            score: WpScore::Likelihood,
            ..base
        }
        .train(&words);
        assert_eq!(freq.last().map(String::as_str), Some("ab"));
        assert_eq!(like.last().map(String::as_str), Some("xy"));
    }
}
