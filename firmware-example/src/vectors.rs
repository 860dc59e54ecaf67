//! Reader for the embedded conformance vectors (tiktoken's ids for a subset of
//! `tests/fixtures/vectors`, sentencepiece's ids and decoded texts for a subset of
//! `tests/fixtures/sentencepiece/vectors`, or Hugging Face tokenizers' ids (and, where given,
//! decoded texts) for a subset of `tests/fixtures/hf_bpe/<model>` or
//! `tests/fixtures/wordpiece`, prepared by `cargo xtask firmware-test`; formats `PBVEC1` and
//! `PBVEC2` in `xtask/src/firmware/vectors.rs`). Reads in place from flash, no allocation.

/// The vectors baked into this build (only when `PICOBPE_VECTORS` named a file at build time).
#[cfg(picobpe_vectors)]
pub static VECTORS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/vectors.bin"));

const MAGIC: &[u8; 8] = b"PBVEC1\0\0";
/// Version 2: limits in the header, a decoded text per record.
const MAGIC2: &[u8; 8] = b"PBVEC2\0\0";
/// A count that stands for "the same as": ordinary ids equal to the `all` ids, or a decoded
/// text equal to the input (version 2).
const SAME: u32 = u32::MAX;
/// A decoded text's length that stands for "not given by the reference" (version 2).
const NONE: u32 = u32::MAX - 1;

/// One record: a text and its reference ids.
#[derive(Clone, Copy)]
pub struct Record<'a> {
    /// `set/name` of the record in the reference vectors.
    pub name: &'a str,
    /// The input bytes.
    pub text: &'a [u8],
    all: &'a [u8],
    ordinary: &'a [u8],
    decoded: Option<&'a [u8]>,
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
    /// What the reference decodes the `all` ids to (version 2; the input in version 1), or
    /// `None` when the reference vectors do not say.
    pub fn decoded(&self) -> Option<&'a [u8]> {
        self.decoded
    }
}

/// Iterator over the records of a vector file.
pub struct Records<'a> {
    rest: &'a [u8],
    left: u32,
    version2: bool,
    limits: Option<(u32, u32)>,
    /// Set when a record could not be parsed (truncated or corrupt data).
    pub malformed: bool,
}

/// Opens a vector file; `None` if the magic is wrong.
pub fn records(data: &[u8]) -> Option<Records<'_>> {
    let (version2, rest) = match data.strip_prefix(MAGIC) {
        Some(rest) => (false, rest),
        None => (true, data.strip_prefix(MAGIC2)?),
    };
    let (n, mut rest) = take_u32(rest)?;
    let mut limits = None;
    if version2 {
        let (work, r) = take_u32(rest)?;
        let (decode, r) = take_u32(r)?;
        limits = Some((work, decode));
        rest = r;
    }
    Some(Records {
        rest,
        left: n,
        version2,
        limits,
        malformed: false,
    })
}

impl Records<'_> {
    /// Records not yet read.
    pub fn remaining(&self) -> u32 {
        self.left
    }
    /// Version 2: the encode buffer (`u32`) and decode buffer (bytes) every record was
    /// selected to fit.
    pub fn limits(&self) -> Option<(u32, u32)> {
        self.limits
    }
}

fn take(b: &[u8], n: usize) -> Option<(&[u8], &[u8])> {
    (b.len() >= n).then(|| b.split_at(n))
}

fn take_u32(b: &[u8]) -> Option<(u32, &[u8])> {
    let (h, t) = take(b, 4)?;
    Some((u32::from_le_bytes([h[0], h[1], h[2], h[3]]), t))
}

fn parse(b: &[u8], version2: bool) -> Option<(Record<'_>, &[u8])> {
    let (h, b) = take(b, 2)?;
    let (name, b) = take(b, u16::from_le_bytes([h[0], h[1]]) as usize)?;
    let (n, b) = take_u32(b)?;
    let (text, b) = take(b, n as usize)?;
    let (n, b) = take_u32(b)?;
    let (all, b) = take(b, 4 * n as usize)?;
    let (n, b) = take_u32(b)?;
    let (ordinary, b) = match n {
        SAME if version2 => (all, b),
        n => take(b, 4 * n as usize)?,
    };
    let (decoded, b) = if version2 {
        match take_u32(b)? {
            (SAME, b) => (Some(text), b),
            (NONE, b) => (None, b),
            (n, b) => {
                let (d, b) = take(b, n as usize)?;
                (Some(d), b)
            }
        }
    } else {
        (Some(text), b)
    };
    let name = core::str::from_utf8(name).ok()?;
    Some((
        Record {
            name,
            text,
            all,
            ordinary,
            decoded,
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
        match parse(self.rest, self.version2) {
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
