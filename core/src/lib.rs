#![no_std]
#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

pub mod pretok;
pub mod tables;

pub use pretok::Pattern;
pub use tables::{PairMap, SpecialToken, Tables};
