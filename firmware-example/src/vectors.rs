//! Reader for the embedded conformance vectors (tiktoken's ids for a subset of
//! `tests/fixtures/vectors`, prepared by `cargo xtask firmware-test`; format in
//! `xtask/src/firmware/vectors.rs`). Reads in place from flash, no allocation.

/// The vectors baked into this build (only when `PICOBPE_VECTORS` named a file at build time).
#[cfg(picobpe_vectors)]
pub static VECTORS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/vectors.bin"));

const MAGIC: &[u8; 8] = b"PBVEC1\0\0";

/// One record: a text and its reference ids.
#[derive(Clone, Copy)]
pub struct Record<'a> {
    /// `set/name` of the record in the reference vectors.
    pub name: &'a str,
    /// The input bytes.
    pub text: &'a [u8],
    all: &'a [u8],
    ordinary: &'a [u8],
}

/// Little-endian `u32`s stored unaligned.
#[derive(Clone, Copy)]
pub struct Ids<'a>(&'a [u8]);

impl<'a> Ids<'a> {
    /// Number of ids.
    pub fn len(&self) -> usize {
        self.0.len() / 4
    }
    /// True when there are no ids.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// The ids in order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + 'a {
        self.0
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
    }
    /// True when `ids` equals these ids.
    pub fn eq_slice(&self, ids: &[u32]) -> bool {
        ids.len() == self.len() && self.iter().zip(ids).all(|(a, &b)| a == b)
    }
    /// Index of the first difference with `ids` (`None` when equal).
    pub fn first_difference(&self, ids: &[u32]) -> Option<usize> {
        if self.eq_slice(ids) {
            return None;
        }
        Some(self.iter().zip(ids).take_while(|(a, b)| a == *b).count())
    }
}

impl<'a> Record<'a> {
    /// Ids with every special token recognized (tiktoken `allowed_special="all"`).
    pub fn all(&self) -> Ids<'a> {
        Ids(self.all)
    }
    /// Ids of `encode_ordinary`.
    pub fn ordinary(&self) -> Ids<'a> {
        Ids(self.ordinary)
    }
}

/// Iterator over the records of a vector file.
pub struct Records<'a> {
    rest: &'a [u8],
    left: u32,
    /// Set when a record could not be parsed (truncated or corrupt data).
    pub malformed: bool,
}

/// Opens a vector file; `None` if the magic is wrong.
pub fn records(data: &[u8]) -> Option<Records<'_>> {
    let rest = data.strip_prefix(MAGIC)?;
    let (n, rest) = take_u32(rest)?;
    Some(Records {
        rest,
        left: n,
        malformed: false,
    })
}

impl Records<'_> {
    /// Records not yet read.
    pub fn remaining(&self) -> u32 {
        self.left
    }
}

fn take(b: &[u8], n: usize) -> Option<(&[u8], &[u8])> {
    (b.len() >= n).then(|| b.split_at(n))
}

fn take_u32(b: &[u8]) -> Option<(u32, &[u8])> {
    let (h, t) = take(b, 4)?;
    Some((u32::from_le_bytes([h[0], h[1], h[2], h[3]]), t))
}

fn parse(b: &[u8]) -> Option<(Record<'_>, &[u8])> {
    let (h, b) = take(b, 2)?;
    let (name, b) = take(b, u16::from_le_bytes([h[0], h[1]]) as usize)?;
    let (n, b) = take_u32(b)?;
    let (text, b) = take(b, n as usize)?;
    let (n, b) = take_u32(b)?;
    let (all, b) = take(b, 4 * n as usize)?;
    let (n, b) = take_u32(b)?;
    let (ordinary, b) = take(b, 4 * n as usize)?;
    let name = core::str::from_utf8(name).ok()?;
    Some((
        Record {
            name,
            text,
            all,
            ordinary,
        },
        b,
    ))
}

impl<'a> Iterator for Records<'a> {
    type Item = Record<'a>;
    fn next(&mut self) -> Option<Record<'a>> {
        if self.left == 0 || self.malformed {
            return None;
        }
        match parse(self.rest) {
            Some((r, rest)) => {
                self.rest = rest;
                self.left -= 1;
                Some(r)
            }
            None => {
                self.malformed = true;
                None
            }
        }
    }
}
