//! The tokenizers measured, behind one trait: picobpe, and the peer crates with the
//! vocabularies they embed (plus tiktoken-rs built from our rank file, the reference).

use picobpe::{CacheEntry, Specials, Tables, Tokenizer};
use picobpe_model::CacheMemory;

use crate::encodings::{self, Encoding, Vocabulary};

/// Which special-token handling every tokenizer runs with (the same for all columns).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Special-token text is ordinary text (tiktoken `encode_ordinary`). Every peer has it.
    Ordinary,
    /// Every registered special is recognized (tiktoken `allowed_special="all"`).
    All,
}

/// A tokenizer under test.
pub trait Subject {
    /// Column name.
    fn name(&self) -> &'static str;
    /// The ids for `text` (used for the exactness check; not timed).
    fn ids(&mut self, text: &str) -> Vec<u32>;
    /// Encode `text` once (timed); returns the number of ids so the work is not optimised out.
    fn run(&mut self, text: &str) -> usize;
    /// Drop any state kept between calls (piece caches) before a timed run in `--cold` mode.
    /// Rebuilding is not timed. Default: nothing to drop.
    fn forget(&mut self) {}
}

/// A column: a subject, or the reason there is none for this encoding / mode.
pub enum Column {
    /// Measured.
    Subject(Box<dyn Subject>),
    /// Not applicable: the crate lacks this vocabulary or mode (the reason).
    Absent(&'static str),
}

/// The peers' column names, in table order (after "picobpe", before picobpe's cache columns).
pub const PEER_COLUMNS: [&str; 6] = [
    "tiktoken-rs (rank file)",
    "tiktoken-rs (embedded)",
    "bpe-openai",
    "tiktoken",
    "toktok-rs",
    "kitoken",
];

/// Column names, in table order, for picobpe's cache columns `caches` (name, lines).
pub fn column_names(caches: &[(&'static str, usize)]) -> Vec<&'static str> {
    let mut v = vec!["picobpe"];
    v.extend(PEER_COLUMNS);
    v.extend(caches.iter().map(|c| c.0));
    v
}

/// Lines of the piece caches of the two "picobpe + cache" columns (64 bytes each). 16 MiB
/// (262,144 lines) is the budget toktok-rs takes for one thread's piece cache (2^19 slots of
/// 32 bytes); 64 MiB is less than fastokens' piece map takes for the 30 MB English corpus
/// (its process grows by about 90 MB there), and holds the distinct pieces of the large
/// corpora, which overflow 16 MiB (the 11 MB multilingual file has some 80,000 distinct wide
/// pieces, for 60,000 wide lines).
pub const CACHE_SIZES: [(&str, usize); 2] = [
    ("picobpe + 16 MiB cache", 262_144),
    ("picobpe + 64 MiB cache", 1_048_576),
];

/// picobpe over host-built tables, writing into a buffer allocated once per corpus (the
/// core's API takes the caller's buffer; the peers allocate their `Vec` inside the call).
pub struct Picobpe {
    tables: &'static Tables<'static>,
    tok: Tokenizer<'static>,
    specials: Specials,
    out: Vec<u32>,
}

impl Picobpe {
    fn encode(&mut self, text: &str) -> usize {
        self.encode_with(text, &mut [])
    }

    fn encode_with(&mut self, text: &str, cache: &mut [CacheEntry]) -> usize {
        // Every id covers at least one input byte, and no piece's work area is longer than
        // the one a single piece of the whole text would need.
        let room = picobpe::bytelevel::scratch_needed(text.len()) + 1;
        if self.out.len() < room {
            self.out.resize(room, 0);
        }
        self.tok
            .encode_cached(text.as_bytes(), &mut self.out, self.specials, cache)
            .expect("picobpe encode")
    }
}

impl Picobpe {
    /// Input bytes covered by `ids` (picobpe's ids for a prefix of the input).
    pub fn byte_len(&self, ids: &[u32]) -> usize {
        ids.iter()
            .map(|&id| self.tok.token_bytes(id).map_or(0, <[u8]>::len))
            .sum()
    }
}

impl Subject for Picobpe {
    fn name(&self) -> &'static str {
        "picobpe"
    }
    fn ids(&mut self, text: &str) -> Vec<u32> {
        let n = self.encode(text);
        self.out[..n].to_vec()
    }
    fn run(&mut self, text: &str) -> usize {
        self.encode(text)
    }
    fn forget(&mut self) {
        // A new tokenizer (it keeps nothing between calls; this is for symmetry with the
        // cache columns, which start each run as a fresh tokenizer with an empty cache).
        self.tok = Tokenizer::new(self.tables);
    }
}

/// picobpe with a piece cache of one of the [`CACHE_SIZES`] (or the CLI's size) that lives
/// across calls, like the peers' per-thread caches (emptied by `--cold`).
struct PicobpeCached {
    name: &'static str,
    inner: Picobpe,
    /// On huge pages, as fastokens keeps its own piece cache ([`picobpe_model::CacheMemory`]).
    cache: CacheMemory,
}

impl Subject for PicobpeCached {
    fn name(&self) -> &'static str {
        self.name
    }
    fn ids(&mut self, text: &str) -> Vec<u32> {
        let n = self.inner.encode_with(text, &mut self.cache);
        self.inner.out[..n].to_vec()
    }
    fn run(&mut self, text: &str) -> usize {
        self.inner.encode_with(text, &mut self.cache)
    }
    fn forget(&mut self) {
        self.cache.fill(CacheEntry::EMPTY);
        self.inner.forget();
    }
}

/// tiktoken-rs (either construction).
struct TiktokenRs {
    name: &'static str,
    bpe: tiktoken_rs::CoreBPE,
    mode: Mode,
    /// Builds a new instance for `forget` (`--first-use`: a fresh instance for every timed
    /// run, so its regex engines' lazy DFA caches start empty too); `None`: keep the instance.
    renew: Option<Box<dyn Fn() -> tiktoken_rs::CoreBPE>>,
}

impl Subject for TiktokenRs {
    fn name(&self) -> &'static str {
        self.name
    }
    fn ids(&mut self, text: &str) -> Vec<u32> {
        match self.mode {
            Mode::Ordinary => self.bpe.encode_ordinary(text),
            Mode::All => self.bpe.encode_with_special_tokens(text),
        }
    }
    fn run(&mut self, text: &str) -> usize {
        self.ids(text).len()
    }
    fn forget(&mut self) {
        if let Some(make) = &self.renew {
            self.bpe = make();
        }
    }
}

/// bpe-openai (GitHub's rust-gems `bpe`): ordinary encoding only. Its instance is a lazy static
/// (no piece cache, so `forget` has nothing to drop; its regex's lazy DFA stays warm).
struct BpeOpenai(&'static bpe_openai::Tokenizer);

impl Subject for BpeOpenai {
    fn name(&self) -> &'static str {
        "bpe-openai"
    }
    fn ids(&mut self, text: &str) -> Vec<u32> {
        self.0.encode(text)
    }
    fn run(&mut self, text: &str) -> usize {
        self.0.encode(text).len()
    }
}

/// The pure-Rust `tiktoken` crate. It memoises pieces in a thread-local cache keyed by
/// instance; a new instance starts cold.
struct TiktokenCrate {
    make: fn() -> tiktoken::CoreBpe,
    bpe: tiktoken::CoreBpe,
    mode: Mode,
}

impl Subject for TiktokenCrate {
    fn name(&self) -> &'static str {
        "tiktoken"
    }
    fn ids(&mut self, text: &str) -> Vec<u32> {
        match self.mode {
            Mode::Ordinary => self.bpe.encode(text),
            Mode::All => self.bpe.encode_with_special_tokens(text),
        }
    }
    fn run(&mut self, text: &str) -> usize {
        self.ids(text).len()
    }
    fn forget(&mut self) {
        self.bpe = (self.make)();
    }
}

/// toktok-rs. It memoises short pieces in a per-thread cache keyed by instance; a new
/// instance starts cold.
struct Toktok {
    encoding: &'static str,
    tok: toktok::Tokenizer,
    mode: Mode,
}

impl Subject for Toktok {
    fn name(&self) -> &'static str {
        "toktok-rs"
    }
    fn ids(&mut self, text: &str) -> Vec<u32> {
        match self.mode {
            Mode::Ordinary => self.tok.encode(text.as_bytes()),
            Mode::All => self.tok.encode_with_special(text),
        }
    }
    fn run(&mut self, text: &str) -> usize {
        self.ids(text).len()
    }
    fn forget(&mut self) {
        self.tok = toktok::Tokenizer::builtin(self.encoding).expect("toktok builtin");
    }
}

/// kitoken (the closest peer: a `Vec`-returning tokenizer that reads many formats), loading the
/// same rank file (it recognizes gpt2, cl100k_base and o200k_base by their size and adds their
/// pattern and specials) or the same `tekken.json`. It keeps no cache between calls.
struct Kitoken(kitoken::Kitoken, Mode);

impl Subject for Kitoken {
    fn name(&self) -> &'static str {
        "kitoken"
    }
    fn ids(&mut self, text: &str) -> Vec<u32> {
        self.0.encode(text, self.1 == Mode::All).unwrap_or_default()
    }
    fn run(&mut self, text: &str) -> usize {
        self.ids(text).len()
    }
}

/// The kitoken column for `vocab`, or why there is none.
fn kitoken(vocab: &Vocabulary, mode: Mode) -> Column {
    let loaded = match &vocab.tekken_json {
        Some(json) => kitoken::Kitoken::from_tekken_slice(json),
        None => kitoken::Kitoken::from_tiktoken_slice(&vocab.rank_file),
    };
    match loaded {
        Ok(kit) => Column::Subject(Box::new(Kitoken(kit, mode))),
        Err(e) => {
            eprintln!("note: kitoken cannot load {}: {e}", vocab.source.display());
            Column::Absent("does not load")
        }
    }
}

/// picobpe on `tables` ([`encodings::picobpe_tables`]).
pub fn picobpe(tables: &'static Tables<'static>, mode: Mode) -> Picobpe {
    Picobpe {
        tables,
        tok: Tokenizer::new(tables),
        specials: match mode {
            Mode::Ordinary => Specials::None,
            Mode::All => Specials::All,
        },
        out: Vec::new(),
    }
}

/// The reference: tiktoken-rs from our rank file (always present). `fresh`: `forget` builds a
/// new instance (untimed).
pub fn reference(enc: Encoding, vocab: &Vocabulary, mode: Mode, fresh: bool) -> Box<dyn Subject> {
    let renew: Option<Box<dyn Fn() -> tiktoken_rs::CoreBPE>> = fresh.then(|| {
        let (ranks, specials) = (vocab.rank_file.clone(), vocab.specials.clone());
        Box::new(move || encodings::tiktoken_rs_from_ranks(enc, &ranks, &specials)) as Box<_>
    });
    Box::new(TiktokenRs {
        name: "tiktoken-rs (rank file)",
        bpe: encodings::tiktoken_rs_from_rank_file(enc, vocab),
        mode,
        renew,
    })
}

/// tiktoken-rs's embedded vocabulary for `enc` (a new instance each call); it has no Tekken.
pub fn tiktoken_rs_embedded(enc: Encoding) -> tiktoken_rs::CoreBPE {
    match enc {
        Encoding::Gpt2 => tiktoken_rs::r50k_base(),
        Encoding::Cl100k => tiktoken_rs::cl100k_base(),
        Encoding::O200k => tiktoken_rs::o200k_base(),
        Encoding::Tekken => panic!("tiktoken-rs embeds no tekken"),
    }
    .expect("tiktoken-rs embedded vocabulary")
}

/// The columns after picobpe and the reference, in [`column_names`] order: the peers, then
/// picobpe with each of `caches` (name, lines). `fresh`: tiktoken-rs's `forget` builds a new
/// instance (the other peers' `forget` always does, or has nothing to drop).
pub fn peers(
    enc: Encoding,
    vocab: &Vocabulary,
    ours: &Picobpe,
    mode: Mode,
    caches: &[(&'static str, usize)],
    fresh: bool,
) -> Vec<Column> {
    let mut v: Vec<Column> = if enc == Encoding::Tekken {
        // The peers with embedded vocabularies have no Tekken.
        ["no tekken"; 4].map(Column::Absent).into()
    } else {
        embedded_peers(enc, mode, fresh)
    };
    v.push(kitoken(vocab, mode));
    for &(name, lines) in caches {
        v.push(Column::Subject(Box::new(PicobpeCached {
            name,
            // The same tables as the "picobpe" column, built once.
            inner: Picobpe {
                tables: ours.tables,
                tok: ours.tok,
                specials: ours.specials,
                out: Vec::new(),
            },
            cache: CacheMemory::new(lines),
        })));
    }
    v
}

/// The columns of the peers that embed `enc`'s vocabulary: tiktoken-rs, bpe-openai, tiktoken,
/// toktok-rs.
fn embedded_peers(enc: Encoding, mode: Mode, fresh: bool) -> Vec<Column> {
    let renew: Option<Box<dyn Fn() -> tiktoken_rs::CoreBPE>> =
        fresh.then(|| Box::new(move || tiktoken_rs_embedded(enc)) as Box<_>);
    let mut v: Vec<Column> = vec![Column::Subject(Box::new(TiktokenRs {
        name: "tiktoken-rs (embedded)",
        bpe: tiktoken_rs_embedded(enc),
        mode,
        renew,
    }))];
    v.push(match (enc, mode) {
        (Encoding::Gpt2 | Encoding::Tekken, _) => Column::Absent("no gpt2"),
        (_, Mode::All) => Column::Absent("no specials"),
        (Encoding::Cl100k, Mode::Ordinary) => {
            Column::Subject(Box::new(BpeOpenai(bpe_openai::cl100k_base())))
        }
        (Encoding::O200k, Mode::Ordinary) => {
            Column::Subject(Box::new(BpeOpenai(bpe_openai::o200k_base())))
        }
    });
    let make: fn() -> tiktoken::CoreBpe = match enc {
        Encoding::Gpt2 => tiktoken::encoding::gpt2,
        Encoding::Cl100k => tiktoken::encoding::cl100k_base,
        Encoding::O200k => tiktoken::encoding::o200k_base,
        Encoding::Tekken => unreachable!("no tekken"),
    };
    v.push(Column::Subject(Box::new(TiktokenCrate {
        make,
        bpe: make(),
        mode,
    })));
    v.push(match enc {
        Encoding::Gpt2 | Encoding::Tekken => Column::Absent("no gpt2"),
        Encoding::Cl100k | Encoding::O200k => {
            let encoding = enc.name();
            Column::Subject(Box::new(Toktok {
                encoding,
                tok: toktok::Tokenizer::builtin(encoding).expect("toktok builtin"),
                mode,
            }))
        }
    });
    v
}
