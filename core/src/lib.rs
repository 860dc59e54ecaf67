#![cfg_attr(not(feature = "std"), no_std)]
#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

pub mod bpe;
pub mod decode;
pub mod encode;
pub mod error;
pub mod pretok;
pub mod special;
pub mod stream;
pub mod tables;

pub use encode::{Progress, Tokenizer};
pub use error::{DecodeError, EncodeError};
pub use pretok::Pattern;
pub use special::Specials;
pub use stream::{StreamDecoder, StreamEncoder, StreamError};
pub use tables::{PairMap, SpecialToken, Tables};

/// Re-exported so baked tables (`picobpe-build` output) need no direct `phf` dependency.
pub use phf;
