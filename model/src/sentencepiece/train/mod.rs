//! Training a SentencePiece BPE or Unigram model as `spm_train --model_type bpe|unigram`
//! (`sentencepiece` 0.2.3) does, under its option names and defaults, to the same pieces in
//! the same order with the same scores.
//!
//! The steps, as `TrainerInterface::LoadSentences` and `bpe::Trainer::Train` take them (the
//! Unigram trainer shares 1 to 4; its step 5 is the `unigram` module's):
//! 1. **Sentences.** Each input line (a `\n` ends it; a `\r` stays) that is not empty, not
//!    longer than `max_sentence_length` bytes and free of `▅` is a sentence.
//! 2. **Normalization** by the core's own normalizer ([`picobpe::SpTokenizer::normalize`]):
//!    the rule's character map, spaces as `▁`, the whitespace rules, the dummy prefix. Then
//!    the text of every meta piece (`<unk>`, `<s>`, `</s>`, control and user-defined symbols,
//!    byte pieces), longest first, becomes U+001F, a boundary no piece crosses. Sentences
//!    left empty are removed by swapping the last one in, as there.
//! 3. **Alphabet.** Characters are counted (NUL excepted); the most frequent (ties: the smaller
//!    code point) are kept until their share reaches `character_coverage`, compared in `f32`;
//!    the boundary mark counts towards the share but is never kept. Every other character becomes `▅`.
//! 4. **Words.** With `split_by_whitespace`, each sentence is cut before every `▁` (runs of
//!    `▁` stay together with `allow_whitespace_only_pieces`) and equal words are counted;
//!    the words are sorted by count, then bytes. Otherwise each sentence is one word.
//! 5. **Merges** (the `bpe` module), then the alphabet's characters by count (then code point), each
//!    piece scored minus its rank; meta pieces take their ids, the rest fill the other ids in
//!    order.

mod bpe;
mod corpus;
mod piece_rule;
mod proto_out;
mod script_table;
mod unigram;

use rustc_hash::FxHashMap;

use super::{SpKind, SpModel, SpPiece, SpSections};
use piece_rule::{PieceRule, BOUNDARY, SPACE_MARK};

/// The normalization rule (`--normalization_rule_name`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SpNormalization {
    /// No character map: the text as it is, but for the whitespace rules.
    Identity,
    /// A named rule and its `precompiled_charsmap` as `sentencepiece` builds it in (the
    /// `host-trainer` binary carries `nmt_nfkc`'s and `nmt_nfkc_cf`'s).
    Rule {
        /// `nmt_nfkc` and the like.
        name: String,
        /// The character map, as a `ModelProto` stores it.
        charsmap: Vec<u8>,
    },
}

impl SpNormalization {
    /// The rule's name in `sentencepiece`.
    pub fn name(&self) -> &str {
        match self {
            SpNormalization::Identity => "identity",
            SpNormalization::Rule { name, .. } => name,
        }
    }

    /// The character map (empty for `identity`).
    fn charsmap(&self) -> Vec<u8> {
        match self {
            SpNormalization::Identity => Vec::new(),
            SpNormalization::Rule { charsmap, .. } => charsmap.clone(),
        }
    }
}

/// Which model `spm_train` trains (`--model_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpModelType {
    /// Merges, scored minus their rank.
    Bpe,
    /// A unigram language model pruned by EM (`spm_train`'s default).
    Unigram,
}

/// A SentencePiece trainer's options, under `spm_train`'s names, with its defaults (but the
/// normalization rule, see [`SpNormalization`], and the model type, BPE).
#[derive(Clone, Debug)]
pub struct SpTrainer {
    /// BPE or Unigram.
    pub model_type: SpModelType,
    /// The number of pieces, meta pieces included (`hard_vocab_limit`: exactly this many).
    pub vocab_size: usize,
    /// The share of character occurrences the alphabet must cover.
    pub character_coverage: f32,
    /// 256 byte pieces `<0x00>`..`<0xFF>` after the other meta pieces.
    pub byte_fallback: bool,
    /// A digit is a piece of its own.
    pub split_digits: bool,
    /// The most characters a piece holds.
    pub max_sentencepiece_length: usize,
    /// Lines longer than this many bytes are skipped.
    pub max_sentence_length: usize,
    /// Pieces do not cross a `▁`.
    pub split_by_whitespace: bool,
    /// A piece holds one Unicode script.
    pub split_by_unicode_script: bool,
    /// Digits do not join other characters.
    pub split_by_number: bool,
    /// A piece may be a run of `▁`.
    pub allow_whitespace_only_pieces: bool,
    /// Pieces matched whole in the text, ids after the control symbols.
    pub user_defined_symbols: Vec<String>,
    /// Pieces never produced from text (`<2ja>` and the like).
    pub control_symbols: Vec<String>,
    /// Ids of the unknown, begin, end and padding pieces (negative: none). The unknown piece
    /// must have one: `spm_train` 0.2.3 accepts none with byte fallback, but picobpe's
    /// SentencePiece models need an unknown piece.
    pub unk_id: i32,
    /// See [`SpTrainer::unk_id`].
    pub bos_id: i32,
    /// See [`SpTrainer::unk_id`].
    pub eos_id: i32,
    /// See [`SpTrainer::unk_id`].
    pub pad_id: i32,
    /// Their texts.
    pub unk_piece: String,
    /// See [`SpTrainer::unk_piece`].
    pub bos_piece: String,
    /// See [`SpTrainer::unk_piece`].
    pub eos_piece: String,
    /// See [`SpTrainer::unk_piece`].
    pub pad_piece: String,
    /// What `<unk>` decodes to.
    pub unk_surface: String,
    /// The normalization rule.
    pub normalization: SpNormalization,
    /// A `▁` goes before each sentence.
    pub add_dummy_prefix: bool,
    /// Leading and trailing spaces are dropped and runs of spaces become one.
    pub remove_extra_whitespaces: bool,
    /// Train on this many sentences (0: all). Only the first ones are supported
    /// (`shuffle_input_sentence` false): `spm_train`'s random sample comes from Abseil's
    /// `BitGen`, which is not replayed here.
    pub input_sentence_size: u64,
    /// Sample `input_sentence_size` sentences at random rather than take the first ones.
    pub shuffle_input_sentence: bool,
    /// Unigram: the most substrings taken from the suffix array as seed pieces (0: eight
    /// times the vocabulary, at least 100,000, as 0.2.3 scales it).
    pub seed_sentencepiece_size: usize,
    /// Unigram: the share of pieces each pruning round keeps.
    pub shrinking_factor: f32,
    /// Unigram: EM steps between two prunings.
    pub num_sub_iterations: usize,
    /// Unigram: `spm_train`'s thread count, which the model depends on: its E step and
    /// pruning deal sentence `i` to thread `i mod num_threads` and sum the threads' `f32`
    /// counts in order. picobpe deals them the same way (on however many threads it runs),
    /// so the same value gives `spm_train`'s model.
    pub num_threads: usize,
}

impl Default for SpTrainer {
    /// `spm_train`'s defaults, with 8,000 pieces, but the `identity` rule (`nmt_nfkc`, its
    /// default, needs its character map: [`SpNormalization::Rule`]).
    fn default() -> Self {
        SpTrainer {
            vocab_size: 8000,
            character_coverage: 0.9995,
            byte_fallback: false,
            split_digits: false,
            max_sentencepiece_length: 16,
            max_sentence_length: 4192,
            split_by_whitespace: true,
            split_by_unicode_script: true,
            split_by_number: true,
            allow_whitespace_only_pieces: false,
            user_defined_symbols: Vec::new(),
            control_symbols: Vec::new(),
            unk_id: 0,
            bos_id: 1,
            eos_id: 2,
            pad_id: -1,
            unk_piece: "<unk>".into(),
            bos_piece: "<s>".into(),
            eos_piece: "</s>".into(),
            pad_piece: "<pad>".into(),
            unk_surface: " \u{2047} ".into(),
            normalization: SpNormalization::Identity,
            add_dummy_prefix: true,
            remove_extra_whitespaces: true,
            input_sentence_size: 0,
            shuffle_input_sentence: true,
            model_type: SpModelType::Bpe,
            seed_sentencepiece_size: 1_000_000,
            shrinking_factor: 0.75,
            num_sub_iterations: 2,
            num_threads: 16,
        }
    }
}

/// Why training failed; nothing is written.
#[derive(Debug, thiserror::Error)]
pub enum SpTrainError {
    /// An option out of `spm_train`'s range or contradicting another.
    #[error("{0}")]
    Option(String),
    /// No sentence is left after the line rules and normalization.
    #[error("the corpus has no sentence to train on (empty lines, lines over --max-sentence-length bytes and lines holding U+2585 are skipped)")]
    EmptyCorpus,
    /// The alphabet and meta pieces alone exceed the vocabulary.
    #[error("--vocab-size {vocab_size} is smaller than the {needed} pieces the alphabet and meta pieces need; raise it or lower --character-coverage")]
    VocabTooSmall {
        /// Asked for.
        vocab_size: usize,
        /// Alphabet plus meta pieces.
        needed: usize,
    },
    /// The corpus ran out of pairs to merge before the vocabulary was full.
    #[error(
        "--vocab-size {vocab_size} is too high for this corpus: it gives at most {reached} pieces"
    )]
    VocabTooLarge {
        /// Asked for.
        vocab_size: usize,
        /// Pieces reached.
        reached: usize,
    },
    /// The distinct words (every sentence without `--split-by-whitespace`) hold more
    /// characters in all than the merge loop indexes (`u32`).
    #[error("the words to merge hold {0} characters in all, more than the trainer indexes (4,294,967,294); train on fewer sentences (--input-sentence-size)")]
    TooManyCharacters(usize),
    /// A Unigram EM or pruning step left no piece (`spm_train`: "no pieces are loaded."): the
    /// corpus is too small for the model, as when no piece is expected even half a time.
    #[error("the Unigram training left no piece (spm_train: \"no pieces are loaded.\"): the corpus is too small or too uniform for a Unigram model; add sentences or train a BPE model")]
    NoPiecesLeft,
}

impl From<bpe::LoopError> for SpTrainError {
    fn from(e: bpe::LoopError) -> Self {
        match e {
            bpe::LoopError::TooManyCharacters(n) => SpTrainError::TooManyCharacters(n),
        }
    }
}

/// A trained model: picobpe's [`SpModel`] and the `sentencepiece.model` bytes.
#[derive(Clone, Debug)]
pub struct SpTrained {
    /// The model.
    pub model: SpModel,
    /// The serialized `ModelProto`, which `sentencepiece` loads.
    pub model_proto: Vec<u8>,
}

/// What the trainer reports as it goes.
#[derive(Clone, Copy, Debug)]
pub enum SpProgress {
    /// Sentences read and normalized so far.
    Sentences(usize),
    /// Merges to make (sent once, before the first [`SpProgress::Merges`]).
    MergesTotal(usize),
    /// Pieces learned so far.
    Merges(usize),
    /// Unigram: the seed pieces, before the first EM round.
    Seeds(usize),
    /// Unigram: the pieces left after a pruning round.
    Pruned(usize),
}

impl SpTrainer {
    /// The meta pieces by id with their kinds (`InitMetaPieces`).
    fn meta_pieces(
        &self,
    ) -> Result<std::collections::BTreeMap<usize, (String, SpKind)>, SpTrainError> {
        let bad = |m: String| Err(SpTrainError::Option(m));
        let mut meta = std::collections::BTreeMap::new();
        let mut has_unk = false;
        for (id, piece, name) in [
            (self.unk_id, &self.unk_piece, "--unk-id"),
            (self.bos_id, &self.bos_piece, "--bos-id"),
            (self.eos_id, &self.eos_piece, "--eos-id"),
            (self.pad_id, &self.pad_piece, "--pad-id"),
        ] {
            if id < 0 {
                continue;
            }
            let id = id as usize;
            if id >= self.vocab_size
                || meta.contains_key(&id)
                || (has_unk && *piece == self.unk_piece)
            {
                return bad(format!("{name} {id} is taken or outside the vocabulary"));
            }
            let kind = if *piece == self.unk_piece {
                has_unk = true;
                SpKind::Unknown
            } else {
                SpKind::Control
            };
            meta.insert(id, (piece.clone(), kind));
        }
        if !has_unk {
            return bad(format!("{} must have an id (--unk-id)", self.unk_piece));
        }
        let mut seen = std::collections::HashSet::new();
        let mut next = 0usize;
        let bytes: Vec<String> = if self.byte_fallback {
            (0..=255u8).map(|b| format!("<0x{b:02X}>")).collect()
        } else {
            Vec::new()
        };
        let symbols = self
            .control_symbols
            .iter()
            .map(|s| (s, SpKind::Control))
            .chain(
                self.user_defined_symbols
                    .iter()
                    .map(|s| (s, SpKind::UserDefined)),
            )
            .chain(bytes.iter().map(|s| (s, SpKind::Byte)));
        for (w, kind) in symbols {
            if !seen.insert(w.clone()) {
                return bad(format!(
                    "{w} is already defined; duplicated symbols are not allowed"
                ));
            }
            if *w == self.unk_piece {
                return bad(format!(
                    "{w} must not be defined with --control-symbols and --user-defined-symbols"
                ));
            }
            let special = [
                (self.bos_id, &self.bos_piece),
                (self.eos_id, &self.eos_piece),
                (self.pad_id, &self.pad_piece),
            ]
            .into_iter()
            .find(|(id, p)| *id >= 0 && *p == w);
            if let Some((id, _)) = special {
                if let Some(entry) = meta.get_mut(&(id as usize)) {
                    entry.1 = kind;
                }
            } else {
                while meta.contains_key(&next) {
                    next += 1;
                }
                meta.insert(next, (w.clone(), kind));
            }
        }
        Ok(meta)
    }

    /// `VerifySpec`'s ranges and what picobpe does not implement.
    fn check(&self) -> Result<(), SpTrainError> {
        let bad = |m: &str| Err(SpTrainError::Option(m.into()));
        if self.vocab_size == 0 || self.vocab_size > i32::MAX as usize {
            return bad(
                "--vocab-size must be between 1 and 2147483647 (an int32, as in spm_train)",
            );
        }
        if !(0.98..=1.0).contains(&self.character_coverage) {
            return bad("--character-coverage must be between 0.98 and 1.0 (as in spm_train)");
        }
        if !(1..=512).contains(&self.max_sentencepiece_length) {
            return bad("--max-sentencepiece-length must be between 1 and 512");
        }
        if (1..=100).contains(&self.input_sentence_size) {
            return bad("--input-sentence-size must be 0 (all) or over 100 (as in spm_train)");
        }
        if self.input_sentence_size > 0 && self.shuffle_input_sentence {
            return bad(
                "--input-sentence-size samples at random unless --shuffle-input-sentence false, \
                 and spm_train's sampler (Abseil's BitGen) is not replayed: pass \
                 --shuffle-input-sentence false to train on the first sentences",
            );
        }
        if self.model_type == SpModelType::Unigram {
            if !(0.5..=0.95).contains(&self.shrinking_factor) {
                return bad("--shrinking-factor must be between 0.5 and 0.95 (as in spm_train)");
            }
            if self.num_sub_iterations == 0 || self.num_sub_iterations > 10 {
                return bad("--num-sub-iterations must be between 1 and 10 (as in spm_train)");
            }
            if self.seed_sentencepiece_size > i32::MAX as usize {
                return bad("--seed-sentencepiece-size must be between 0 and 2147483647");
            }
            if !(1..=1024).contains(&self.num_threads) {
                return bad("--num-threads must be between 1 and 1024 (as in spm_train)");
            }
        }
        if !(10..=1 << 30).contains(&self.max_sentence_length) {
            return bad("--max-sentence-length must be between 10 and 1073741824");
        }
        for name in [
            &self.unk_piece,
            &self.bos_piece,
            &self.eos_piece,
            &self.pad_piece,
        ] {
            if name.is_empty() {
                return bad("meta piece texts must not be empty");
            }
        }
        if self
            .user_defined_symbols
            .iter()
            .chain(&self.control_symbols)
            .any(String::is_empty)
        {
            return bad("control and user-defined symbols must not be empty");
        }
        Ok(())
    }

    /// The normalizer, as the core runs it for a model with these settings and `rule`.
    fn normalizer(
        &self,
        rule: &SpNormalization,
    ) -> Result<super::SpTableData<'static>, SpTrainError> {
        let model = SpModel {
            pieces: vec![SpPiece {
                piece: self.unk_piece.clone(),
                score: Some(0.0),
                kind: SpKind::Unknown,
            }],
            byte_fallback: false,
            charsmap: rule.charsmap(),
            // The normalizer does not depend on the model type.
            unigram: false,
            ..tables_model(self)
        };
        super::SpTableData::new(&model)
            .map_err(|e| SpTrainError::Option(format!("normalizer settings: {e}")))
    }

    /// Train on `corpus` (the input files' bytes, in order; each `\n`-ended line one
    /// sentence) with `threads` threads for reading (1 to 1024), reporting to `progress`. `inputs` names
    /// the files in the written `trainer_spec`. The model does not depend on `threads`.
    pub fn train(
        &self,
        corpus: &[&[u8]],
        threads: usize,
        inputs: &[String],
        mut progress: impl FnMut(SpProgress),
    ) -> Result<SpTrained, SpTrainError> {
        self.check()?;
        // `spm_train` takes 1 to 1024 threads.
        let threads = threads.clamp(1, 1024);
        let meta = self.meta_pieces()?;
        let mapped_data = self.normalizer(&self.normalization)?;
        let mapped_tables = mapped_data.tables();
        let mapped = picobpe::SpTokenizer::new(&mapped_tables);
        // A line of ASCII bytes none of which starts an all-ASCII key of the map matches no
        // key anywhere: the identity rule's normalizer gives its text, without the map's walk.
        let plain_data = self.normalizer(&SpNormalization::Identity)?;
        let plain_tables = plain_data.tables();
        let plain = picobpe::SpTokenizer::new(&plain_tables);
        let ascii_starts = corpus::ascii_key_starts(
            mapped_tables.charsmap.units,
            mapped_tables.charsmap.max_key as usize,
        );
        let normalize = move |line: &[u8], buf: &mut Vec<u8>| {
            let tokenizer = if line
                .iter()
                .all(|&b| b < 0x80 && !ascii_starts[usize::from(b)])
            {
                plain
            } else {
                mapped
            };
            buf.clear();
            buf.resize(4 * line.len() + 16, 0);
            let mut n = tokenizer.normalize(line, buf).unwrap_or(0);
            if n > buf.len() {
                buf.resize(n, 0);
                n = tokenizer.normalize(line, buf).unwrap_or(0);
            }
            buf.truncate(n);
        };
        let matcher = corpus::MetaMatcher::new(meta.values().map(|(p, _)| p.as_str()));
        let rule = corpus::LineRule {
            max_len: self.max_sentence_length,
        };
        let split = self
            .split_by_whitespace
            .then_some(self.allow_whitespace_only_pieces);

        // 1-2 (and 4's counting): sentences, normalized, meta pieces replaced.
        let corpus = if self.input_sentence_size > 0 {
            corpus::first_sentences(corpus, &rule, self.input_sentence_size)
        } else {
            corpus.to_vec()
        };
        let chunks: Vec<&[u8]> = corpus
            .iter()
            .flat_map(|text| corpus::line_chunks(text, threads * 4))
            .collect();
        // Read every chunk on `threads` threads: words counted (`Some(allow_ws_only)`) or
        // sentences in order (`None`; empty ones removed by swapping the last one in, as
        // `sentencepiece` removes them).
        let gather_all = |split: Option<bool>| -> corpus::Gathered {
            let next = std::sync::atomic::AtomicUsize::new(0);
            // Each worker counts into its own map (words) and keeps its chunks' sentences by
            // chunk index (their order matters without `split_by_whitespace`).
            type Part = (corpus::Gathered, Vec<(usize, Vec<String>)>);
            let parts: Vec<Part> = std::thread::scope(|scope| {
                let workers: Vec<_> = (0..threads)
                    .map(|_| {
                        scope.spawn(|| {
                            let mut acc = corpus::Gathered::default();
                            let mut sentences = Vec::new();
                            loop {
                                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                                let Some(chunk) = chunks.get(i) else {
                                    return (acc, sentences);
                                };
                                corpus::gather(chunk, &rule, &normalize, &matcher, split, &mut acc);
                                sentences.push((i, std::mem::take(&mut acc.sentences)));
                            }
                        })
                    })
                    .collect();
                workers
                    .into_iter()
                    .map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                    .collect()
            });
            let mut gathered = corpus::Gathered::default();
            let mut chunk_sentences = Vec::new();
            for (g, sentences) in parts {
                gathered.n_sentences += g.n_sentences;
                chunk_sentences.extend(sentences);
                let (mut big, small) = if g.words.len() > gathered.words.len() {
                    (g.words, std::mem::take(&mut gathered.words))
                } else {
                    (std::mem::take(&mut gathered.words), g.words)
                };
                for (w, n) in small {
                    *big.entry(w).or_default() += n;
                }
                gathered.words = big;
            }
            chunk_sentences.sort_by_key(|c| c.0);
            gathered.sentences = chunk_sentences.into_iter().flat_map(|c| c.1).collect();
            let mut i = 0;
            while i < gathered.sentences.len() {
                if gathered.sentences[i].is_empty() {
                    gathered.sentences.swap_remove(i);
                } else {
                    i += 1;
                }
            }
            gathered
        };
        let mut gathered = gather_all(split);
        progress(SpProgress::Sentences(gathered.n_sentences));
        if gathered.n_sentences == 0 {
            return Err(SpTrainError::EmptyCorpus);
        }
        let sentences = std::mem::take(&mut gathered.sentences);

        // 3: the alphabet.
        // The normalizer writes well-formed UTF-8 (U+FFFD for what is not).
        let word_text: Vec<(String, u64)> = gathered
            .words
            .drain()
            .map(|(w, n)| {
                let text = String::from_utf8(w.into_vec())
                    .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
                (text, n)
            })
            .collect();
        let (counts, all) = if split.is_some() {
            corpus::char_counts(word_text.iter().map(|(w, n)| (w.as_str(), *n)))
        } else {
            corpus::char_counts(sentences.iter().map(|s| (s.as_str(), 1)))
        };
        if all == 0 {
            return Err(SpTrainError::EmptyCorpus);
        }
        let mut by_count: Vec<(char, u64)> = counts.into_iter().collect();
        by_count.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut alphabet: FxHashMap<char, u64> = FxHashMap::default();
        let mut covered = 0u64;
        for &(c, n) in &by_count {
            let coverage = (covered as f64 / all as f64) as f32;
            if coverage >= self.character_coverage {
                break;
            }
            covered += n;
            if c != BOUNDARY {
                alphabet.insert(c, n);
            }
        }
        let needed = alphabet.len() + meta.len();
        if needed > self.vocab_size {
            return Err(SpTrainError::VocabTooSmall {
                vocab_size: self.vocab_size,
                needed,
            });
        }

        // Unigram seeds come from the whole sentences, masked, in order (before splitting).
        let unigram = self.model_type == SpModelType::Unigram;
        let seed_sentences: Vec<String> = if unigram {
            let ascii = corpus::ascii_kept(&alphabet);
            let whole = if split.is_some() {
                gather_all(None).sentences
            } else {
                sentences.clone()
            };
            whole
                .into_iter()
                .map(|s| corpus::mask_rare(&s, &alphabet, &ascii).unwrap_or(s))
                .collect()
        } else {
            Vec::new()
        };

        // 4: words, rare characters masked.
        let words: Vec<(String, u64)> = if split.is_some() {
            let dropped_mark = by_count.iter().any(|&(c, _)| c == SPACE_MARK)
                && !alphabet.contains_key(&SPACE_MARK);
            let ascii = corpus::ascii_kept(&alphabet);
            if dropped_mark {
                // `▁` is `▅` before the cut, so the words are not the counted ones: read the
                // sentences again and cut them after masking, as `sentencepiece` does.
                let mut words: FxHashMap<String, u64> = FxHashMap::default();
                for s in gather_all(None).sentences {
                    let s = corpus::mask_rare(&s, &alphabet, &ascii).unwrap_or(s);
                    corpus::split_into_words(
                        s.as_bytes(),
                        self.allow_whitespace_only_pieces,
                        |w| {
                            let w = String::from_utf8_lossy(w).into_owned();
                            *words.entry(w).or_default() += 1;
                        },
                    );
                }
                let mut words: Vec<(String, u64)> = words.into_iter().collect();
                words.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
                words
            } else {
                let mut masked: FxHashMap<String, u64> = FxHashMap::default();
                let mut words: Vec<(String, u64)> = Vec::with_capacity(word_text.len());
                for (w, n) in word_text {
                    match corpus::mask_rare(&w, &alphabet, &ascii) {
                        Some(m) => *masked.entry(m).or_default() += n,
                        None => words.push((w, n)),
                    }
                }
                if !masked.is_empty() {
                    let mut all: FxHashMap<String, u64> = words.into_iter().collect();
                    for (w, n) in masked {
                        *all.entry(w).or_default() += n;
                    }
                    words = all.into_iter().collect();
                }
                words.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
                words
            }
        } else {
            let ascii = corpus::ascii_kept(&alphabet);
            sentences
                .into_iter()
                .map(|s| (corpus::mask_rare(&s, &alphabet, &ascii).unwrap_or(s), 1))
                .collect()
        };

        // 5: merges, then the alphabet; or the Unigram loop.
        let rule = PieceRule {
            max_chars: self.max_sentencepiece_length,
            split_by_whitespace: self.split_by_whitespace,
            split_by_unicode_script: self.split_by_unicode_script,
            split_by_number: self.split_by_number,
            split_digits: self.split_digits,
            treat_whitespace_as_suffix: false,
            allow_whitespace_only_pieces: self.allow_whitespace_only_pieces,
        };
        let mut chars: Vec<(char, u64)> = alphabet.iter().map(|(&c, &n)| (c, n)).collect();
        chars.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let pieces: Vec<(String, f32)> = if unigram {
            let seed_size = match self.seed_sentencepiece_size {
                0 => (self.vocab_size * 8).max(100_000),
                n => n,
            };
            let seeds = unigram::seed_pieces(&seed_sentences, &rule, seed_size);
            drop(seed_sentences);
            let spec = unigram::UnigramSpec {
                slots: self.vocab_size - meta.len(),
                vocab_size: self.vocab_size,
                shrinking_factor: self.shrinking_factor,
                sub_iterations: self.num_sub_iterations,
                partitions: self.num_threads,
                threads,
            };
            unigram::train(seeds, &words, &chars, &spec, |step| match step {
                unigram::Step::Seeds(n) => progress(SpProgress::Seeds(n)),
                unigram::Step::Pieces(n) => progress(SpProgress::Pruned(n)),
            })?
        } else {
            let n_merges = self.vocab_size - needed;
            progress(SpProgress::MergesTotal(n_merges));
            let mut merges = bpe::BpeLoop::new(&rule, &alphabet, &words)?;
            drop(words);
            let mut pieces = merges.run(n_merges, |n| progress(SpProgress::Merges(n)));
            drop(merges);
            pieces.extend(chars.iter().map(|(c, _)| c.to_string()));
            pieces
                .into_iter()
                .enumerate()
                .map(|(rank, p)| (p, -(rank as f32)))
                .collect()
        };
        if pieces.len() + meta.len() != self.vocab_size {
            return Err(SpTrainError::VocabTooLarge {
                vocab_size: self.vocab_size,
                reached: pieces.len() + meta.len(),
            });
        }
        let mut model_pieces = Vec::with_capacity(self.vocab_size);
        let mut rest = pieces.into_iter();
        for id in 0..self.vocab_size {
            if let Some((piece, kind)) = meta.get(&id) {
                model_pieces.push(SpPiece {
                    piece: piece.clone(),
                    score: Some(0.0),
                    kind: *kind,
                });
            } else if let Some((piece, score)) = rest.next() {
                model_pieces.push(SpPiece {
                    piece,
                    score: Some(score),
                    kind: SpKind::Normal,
                });
            }
        }
        let model = SpModel {
            pieces: model_pieces,
            ..tables_model(self)
        };
        // The pieces' invariants (a learned piece spelled like a meta piece is refused, as
        // `spm_train` refuses it); the character map was checked with the normalizer's tables.
        SpModel {
            charsmap: Vec::new(),
            ..model.clone()
        }
        .validate()
        .map_err(|e| SpTrainError::Option(format!("the trained model is invalid: {e}")))?;
        let model_proto = proto_out::model_proto(self, &model, inputs);
        Ok(SpTrained { model, model_proto })
    }
}

/// An [`SpModel`] with `spec`'s normalizer settings and no pieces.
fn tables_model(spec: &SpTrainer) -> SpModel {
    SpModel {
        pieces: Vec::new(),
        add_dummy_prefix: spec.add_dummy_prefix,
        remove_extra_whitespaces: spec.remove_extra_whitespaces,
        byte_fallback: spec.byte_fallback,
        unk_surface: spec.unk_surface.clone(),
        sections: SpSections::Inline,
        unigram: spec.model_type == SpModelType::Unigram,
        f64_scores: Vec::new(),
        charsmap: spec.normalization.charsmap(),
        unk_in_text: false,
        unk_per_char: false,
        normalizer: None,
        precompiled: false,
        collapse_spaces: false,
        strip_sections: false,
        strips: Vec::new(),
        char_steps: Default::default(),
        pre_split: None,
        joins_pieces: false,
    }
}
