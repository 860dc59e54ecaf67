#![cfg_attr(not(any(feature = "std", test)), no_std)]
#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

pub mod bytelevel;
mod cache;
mod error;
mod hash;
mod long_cache;
pub mod normalizer;
mod post;
pub mod pretok;
pub mod sentencepiece;
mod slice_ops;
pub mod special;
mod stream;
mod tables;
mod tokenize;
mod utf8;
pub mod wordpiece;

pub use bytelevel::{PairMap, Tables, TokenTrie, Tokenizer};
pub use cache::CacheEntry;
pub use error::{DecodeError, EncodeError};
pub use hash::PtrIndex;
pub use post::Template;
pub use pretok::Pattern;
pub use sentencepiece::{SpDecodeState, SpTables, SpTokenizer};
pub use special::Specials;
pub use stream::{StreamDecoder, StreamEncoder, StreamError};
pub use tables::{PieceMap, SpecialToken, MAX_IDS};
pub use tokenize::{AnyDecodeState, AnyTokenizer, Cursor, Family, Progress, Tokenize};
pub use wordpiece::{WpTables, WpTokenizer};

/// The hash functions and key encodings the lookups assume: what a table builder
/// (`picobpe-model`, `picobpe-build`) needs to lay tables out as the core reads them.
pub mod layout {
    pub use crate::hash::{hash_bytes, hash_u64};
    pub use crate::sentencepiece::charsmap::unit_offset;
    pub use crate::tables::{piece_key_entry, short_piece_key, ID_BITS};
}
