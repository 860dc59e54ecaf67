#![cfg_attr(not(any(feature = "std", test)), no_std)]
#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

pub mod backtrack;
pub mod bpe;
mod bpe_tree;
pub mod cache;
pub mod decode;
pub mod encode;
pub mod error;
pub mod hash;
mod long_cache;
mod post;
pub mod pretok;
pub mod sentencepiece;
mod slice_ops;
pub mod special;
pub mod stream;
pub mod tables;
mod tokenize;
mod utf8;
pub mod wordpiece;

pub use backtrack::TokenTrie;
pub use cache::CacheEntry;
pub use encode::{Progress, Tokenizer};
pub use error::{DecodeError, EncodeError};
pub use hash::PtrIndex;
pub use post::Template;
pub use pretok::Pattern;
pub use sentencepiece::{SpDecodeState, SpTables, SpTokenizer};
pub use special::Specials;
pub use stream::{StreamDecoder, StreamEncoder, StreamError};
pub use tables::{PairMap, PieceMap, SpecialToken, Tables};
pub use tokenize::{AnyDecodeState, AnyTokenizer, Cursor, Family, Tokenize};
pub use wordpiece::{WpTables, WpTokenizer};
