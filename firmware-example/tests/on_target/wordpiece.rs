// The on-target tests of a WordPiece model (`picobpe::WpTokenizer`), included by
// `on_target.rs` when the baked model is one (`cfg(picobpe_wp)`).
//
// Every configuration runs the model-independent tests: one-shot against `encode_from` resume
// after `OutputFull` through small buffers, the stop at a word boundary, `PieceTooLong`, words
// over `max_chars_per_word`, added tokens (recognized with `Specials::All` only, skipped by
// decode), malformed UTF-8, empty input, unknown ids, `decode_after` resume after a decode's
// `OutputFull`, stack bounds and tables in flash. Builds that embed reference vectors
// (`cfg(picobpe_vectors)`, `PBVEC2`) compare ids with Hugging Face tokenizers' own for a subset
// of `tests/fixtures/wordpiece/<model>/` and of its hand-picked probes
// (`tests/fixtures/wordpiece/probes.jsonl`), one-shot and resumed, with and without added
// tokens, and decoded texts with tokenizers' `decode` where the vectors carry it (the probes;
// the set files do not, so their ids are only checked to decode, one-shot and resumed alike);
// the MiniLM build adds a test with its layout written out (`cfg(picobpe_minilm)`).
//
// WordPiece matches a word on the stack (at most `MAX_WORD_BYTES`), so the output buffers hold
// only ids; the reference vectors are encoded and decoded in static buffers (`work`,
// `text_buf`).

use core::ptr::addr_of_mut;
use core::sync::atomic::{AtomicBool, Ordering};

use picobpe::{DecodeError, EncodeError, Specials};
use picobpe_firmware::tables::{special_id, tokenizer, DECODE_BYTES, IDS, TABLES};

/// Peak stack an encode call may use (bytes), whatever the input: asserted by
/// `stack_bound_encode`. The encoder's fixed stack buffer is the normalized word
/// (`MAX_WORD_BYTES`, 512 B).
pub const ENCODE_STACK_BOUND: usize = 2048;
/// Peak stack a decode call may use (bytes): asserted by `stack_bound_decode`. The decoder
/// builds each token's text with the clean-up in two 256-byte buffers.
pub const DECODE_STACK_BOUND: usize = 1024;

/// Room, in ids, of the stack buffers for short texts.
const SHORT: usize = 512;

static mut WORK: [u32; IDS] = [0; IDS];
static mut TEXT: [u8; DECODE_BYTES] = [0; DECODE_BYTES];

/// The static ids buffer ([`IDS`] long), handed out once per test (each test runs in a boot of
/// its own).
fn work() -> &'static mut [u32; IDS] {
    static TAKEN: AtomicBool = AtomicBool::new(false);
    assert!(
        !TAKEN.swap(true, Ordering::Relaxed),
        "work buffer taken twice"
    );
    // SAFETY: handed out at most once (the flag above), and nothing else touches it.
    unsafe { &mut *addr_of_mut!(WORK) }
}

/// The static text buffer ([`DECODE_BYTES`] long), handed out once per test.
fn text_buf() -> &'static mut [u8; DECODE_BYTES] {
    static TAKEN: AtomicBool = AtomicBool::new(false);
    assert!(
        !TAKEN.swap(true, Ordering::Relaxed),
        "text buffer taken twice"
    );
    // SAFETY: as for `work`.
    unsafe { &mut *addr_of_mut!(TEXT) }
}

/// One-shot encode into `out`; panics on an error.
fn encode_into<'a>(text: &[u8], specials: Specials, out: &'a mut [u32]) -> &'a [u32] {
    match tokenizer().encode(text, out, specials) {
        Ok(n) => &out[..n],
        Err(e) => panic!("encode failed: {e}"),
    }
}

/// One-shot decode into `out`; panics on an error.
fn decode_into<'a>(ids: &[u32], out: &'a mut [u8]) -> &'a [u8] {
    match tokenizer().decode(ids, out) {
        Ok(n) => &out[..n],
        Err(e) => panic!("decode failed: {e}"),
    }
}

/// Encode `text` through output buffers of `cap` ids carved from `buf`, resuming after
/// `OutputFull { consumed, .. }` with `encode_from(text, consumed, ..)` on the whole text, and
/// compare the ids with `expected` as they come. A word that needs more ids than `cap` gives
/// `PieceTooLong { needed }`; as documented, that step is retried with a buffer of `needed`
/// ids. `Err(i)`: the ids differ from index `i` on.
fn encode_resumed(
    text: &[u8],
    specials: Specials,
    cap: usize,
    buf: &mut [u32],
    expected: &mut dyn Iterator<Item = u32>,
) -> Result<(), usize> {
    let tok = tokenizer();
    let mut index = 0usize;
    let mut from = 0usize;
    let mut room = cap;
    loop {
        assert!(
            room <= buf.len(),
            "a word at {from} needs {room} ids, the buffer has {}",
            buf.len()
        );
        let chunk = &mut buf[..room];
        match tok.encode_from(text, from, chunk, specials) {
            Ok(n) => {
                compare_ids(&chunk[..n], expected, &mut index)?;
                return match expected.next() {
                    None => Ok(()),
                    Some(_) => Err(index),
                };
            }
            Err(EncodeError::OutputFull { consumed, written }) => {
                assert!(
                    (consumed > from || written > 0) && consumed <= text.len(),
                    "no progress at {from} with room {room} (consumed {consumed})"
                );
                compare_ids(&chunk[..written], expected, &mut index)?;
                from = consumed;
                room = cap;
            }
            Err(EncodeError::PieceTooLong { offset, needed, .. }) => {
                assert!(
                    offset >= from && needed > room,
                    "PieceTooLong at {offset} (from {from}) needs {needed}, room {room}"
                );
                room = needed;
            }
        }
    }
}

/// Compare `ids` with the next ids of `expected`, counting them in `index`; `Err(i)`: the first
/// differing index.
fn compare_ids(
    ids: &[u32],
    expected: &mut dyn Iterator<Item = u32>,
    index: &mut usize,
) -> Result<(), usize> {
    for &id in ids {
        if expected.next() != Some(id) {
            return Err(*index);
        }
        *index += 1;
    }
    Ok(())
}

/// Decode `ids` through output buffers of `cap` bytes, resuming after `OutputFull
/// { consumed, .. }` with the ids from `consumed` on, and compare the bytes with `expected`.
/// The rest of a sequence goes to `decode_after` once something was written; while nothing
/// was (only added tokens, which decode skips, were consumed), the next token still starts the
/// text, so the rest goes to `decode` again. A token longer than the buffer makes no progress;
/// the buffer then grows (up to 256 bytes) for that step. `Err(i)`: the bytes differ from
/// offset `i` on.
fn decode_resumed(ids: &[u32], cap: usize, expected: &[u8]) -> Result<(), usize> {
    let tok = tokenizer();
    let mut buf = [0u8; 256];
    let mut from = 0usize;
    let mut at = 0usize;
    let mut room = cap;
    loop {
        let out = &mut buf[..room];
        let rest = &ids[from..];
        let r = if at == 0 {
            tok.decode(rest, out)
        } else {
            tok.decode_after(rest, out)
        };
        let (done, written) = match r {
            Ok(n) => (true, n),
            Err(DecodeError::OutputFull { consumed, written }) => {
                if consumed == 0 && written == 0 {
                    assert!(room < 256, "a token at {from} does not fit 256 bytes");
                    room = (2 * room).min(256);
                } else {
                    room = cap;
                }
                from += consumed;
                (false, written)
            }
            Err(e) => panic!("decode of the ids from {from} failed: {e}"),
        };
        if expected.get(at..at + written) != Some(&out[..written]) {
            return Err(at);
        }
        at += written;
        if done {
            return if at == expected.len() {
                Ok(())
            } else {
                Err(at)
            };
        }
    }
}

/// Encode, resume through `cap`-id buffers and compare with the one-shot ids; decode, resume
/// through small buffers and compare with the one-shot text.
fn check_resumes(text: &[u8], cap: usize) {
    let mut ids = [0u32; SHORT];
    let ids = encode_into(text, Specials::All, &mut ids);
    let mut buf = [0u32; SHORT];
    let r = encode_resumed(text, Specials::All, cap, &mut buf, &mut ids.iter().copied());
    assert!(r.is_ok(), "cap {cap}: resumed ids differ at {r:?}");
    let mut out = [0u8; 2048];
    let decoded = decode_into(ids, &mut out);
    for cap in [1, 3, 16] {
        let r = decode_resumed(ids, cap, decoded);
        assert!(r.is_ok(), "cap {cap}: resumed decode differs at byte {r:?}");
    }
}

/// The first 4000 bytes of the bench text.
fn bench_part() -> &'static [u8] {
    &picobpe_firmware::texts::BENCH[..4000]
}

/// The id of the first added token other than the unknown token (`[PAD]` in BERT's layout).
fn an_added_token() -> Option<(u32, &'static str)> {
    TABLES
        .specials
        .iter()
        .find(|s| s.id != TABLES.unk_id)
        .map(|s| (s.id, s.text))
}

#[embedded_test::tests]
mod tests {
    use super::*;
    use picobpe_firmware::{stack, texts};

    #[test]
    fn demo_text_resumes_through_small_buffers() {
        for cap in [1, 2, 3, 5, 9] {
            check_resumes(texts::DEMO.as_bytes(), cap);
        }
    }

    #[test]
    fn multilingual_resumes_through_small_buffers() {
        // CJK ideographs are words of their own; accents, Cyrillic, emoji and the rest are
        // pieces or the unknown token, by the vocabulary.
        let text = "Ünïcödé: 日本語のテキスト, 한국어, Русский текст, ελληνικά, हिन्दी, العربية, \
                    emoji 🙃🇮🇸👩‍👩‍👧 and tabs\t\t, CRLF\r\n, NBSP\u{a0}, U+3000\u{3000}end, \
                    don't 3.14 1,000 [CLS] x[SEP]y";
        check_resumes(text.as_bytes(), 3);
    }

    #[test]
    fn invalid_utf8_is_a_replacement_character() {
        // Each maximal invalid subpart is one U+FFFD, which `clean_text` removes: the text
        // around it joins up.
        let text: &[u8] = b"ok \xff\xfe bad \xc3 lone lead, \x80 stray, \xed\xa0\x80 surrogate, \
                            \xf0\x9f\x99 truncated \xf4\x90\x80\x80 too big \xc0\xaf overlong \xf0";
        check_resumes(text, 3);
        if TABLES.clean_text {
            let mut a = [0u32; 16];
            let mut b = [0u32; 16];
            assert!(
                encode_into(b"wo\xffrd", Specials::All, &mut a)
                    == encode_into(b"word", Specials::All, &mut b),
                "a removed U+FFFD splits the word"
            );
        }
    }

    #[test]
    fn bench_text_resumes_through_small_buffers() {
        let text = bench_part();
        let work = work();
        let (one, rest) = work.split_at_mut(IDS / 2);
        let one = encode_into(text, Specials::All, one);
        let r = encode_resumed(text, Specials::All, 7, rest, &mut one.iter().copied());
        assert!(r.is_ok(), "resumed ids differ at {r:?}");
        assert!(
            one.len() < text.len() / 3,
            "{} ids for {} bytes: not matching pieces?",
            one.len(),
            text.len()
        );
        let out = text_buf();
        let decoded = decode_into(one, &mut out[..]);
        for cap in [1, 4, 7, 16] {
            let r = decode_resumed(one, cap, decoded);
            assert!(r.is_ok(), "cap {cap}: resumed decode differs at byte {r:?}");
        }
    }

    #[test]
    fn empty_input_gives_no_ids() {
        let tok = tokenizer();
        let mut out = [0u32; 4];
        assert_eq!(tok.encode(b"", &mut out, Specials::All), Ok(0));
        assert_eq!(tok.encode(b"", &mut [], Specials::All), Ok(0));
        assert_eq!(tok.encode(b" \t\r\n ", &mut [], Specials::All), Ok(0));
        assert_eq!(tok.encode_from(b"abc", 3, &mut out, Specials::All), Ok(0));
        let mut bytes = [0u8; 4];
        assert_eq!(tok.decode(&[], &mut bytes), Ok(0));
        assert_eq!(tok.decode_after(&[], &mut []), Ok(0));
    }

    #[test]
    fn added_tokens_are_recognized_and_skipped_by_decode() {
        let Some((id, text)) = an_added_token() else {
            semihosting::println!("no added tokens: nothing to check");
            return;
        };
        let mut buf = [0u8; 96];
        let n = text.len() + 10;
        buf[..5].copy_from_slice(b"word ");
        buf[5..5 + text.len()].copy_from_slice(text.as_bytes());
        buf[5 + text.len()..n].copy_from_slice(b" word");
        let text_ids = &buf[..n];
        let mut ids = [0u32; 64];
        let ids = encode_into(text_ids, Specials::All, &mut ids);
        assert_eq!(ids.iter().filter(|&&i| i == id).count(), 1, "{ids:?}");
        let mut ordinary = [0u32; 64];
        let ordinary = encode_into(text_ids, Specials::None, &mut ordinary);
        assert!(!ordinary.contains(&id), "{text} in an ordinary encode");
        // Decode skips it: the words on its sides as if it were not there.
        let mut words = [0u32; 64];
        let words = encode_into(b"word word", Specials::All, &mut words);
        let (mut a, mut b) = ([0u8; 64], [0u8; 64]);
        assert!(decode_into(ids, &mut a) == decode_into(words, &mut b));
        // Only added tokens decode to nothing; after them, the next token starts the text.
        let mut out = [0u8; 64];
        assert_eq!(tokenizer().decode(&[id, id], &mut out), Ok(0));
        let w = words[0];
        let first = decode_into(&[w], &mut a).len();
        assert_eq!(tokenizer().decode(&[id, w], &mut out), Ok(first));
        assert_eq!(special_id(text), Some(id));
    }

    #[test]
    fn output_full_stops_at_a_word_boundary() {
        let mut text = [0u8; 24 + 100 * 10];
        text[..24].copy_from_slice(b"Hello world, hello again");
        for k in 0..100 {
            text[24 + 10 * k..34 + 10 * k].copy_from_slice(b" and again");
        }
        let mut one = [0u32; SHORT];
        let one = encode_into(&text, Specials::All, &mut one);
        let mut out = [0u32; 128];
        match tokenizer().encode(&text, &mut out, Specials::All) {
            Err(EncodeError::OutputFull { consumed, written }) => {
                assert!(written > 0 && written <= 128 && consumed > 0 && consumed < text.len());
                // The next word starts there (after a space, or a punctuation word).
                assert!(
                    text[consumed] != b' ' && (text[consumed - 1] == b' ' || consumed == 11),
                    "consumed {consumed} is not at a word"
                );
                assert!(
                    out[..written] == one[..written],
                    "ids before the stop differ"
                );
                let mut rest = [0u32; SHORT];
                let n = tokenizer()
                    .encode_from(&text, consumed, &mut rest, Specials::All)
                    .unwrap();
                assert!(rest[..n] == one[written..], "ids after the stop differ");
            }
            other => panic!("expected OutputFull, got {other:?}"),
        }
    }

    #[test]
    fn word_of_more_ids_than_the_buffer_is_an_error() {
        // A word of unusual letters: several pieces (or the unknown token, one id).
        let text = b"ok Zqxjkvbwzqxjkvbw";
        let mut ok = [0u32; 8];
        let ok = encode_into(&text[..2], Specials::All, &mut ok).len();
        let mut all = [0u32; 64];
        let pieces = encode_into(text, Specials::All, &mut all).len() - ok;
        if pieces < 2 {
            semihosting::println!("the word is {pieces} id: nothing to check");
            return;
        }
        let mut out = [0u32; 64];
        match tokenizer().encode(&text[3..], &mut out[..pieces - 1], Specials::All) {
            Err(EncodeError::PieceTooLong {
                offset: 0,
                len: 16,
                needed,
            }) => assert_eq!(needed, pieces),
            other => panic!("expected PieceTooLong, got {other:?}"),
        }
        // After "ok", the word's ids do not fit: `OutputFull` at the word.
        match tokenizer().encode(text, &mut out[..ok + pieces - 1], Specials::All) {
            Err(EncodeError::OutputFull {
                consumed: 3,
                written,
            }) => assert_eq!(written, ok),
            other => panic!("expected OutputFull after `ok`, got {other:?}"),
        }
    }

    #[test]
    fn words_over_the_character_limit_are_unknown() {
        let limit = TABLES.max_chars_per_word as usize;
        let long = [b'a'; 130];
        assert!(limit < long.len(), "max_chars_per_word {limit}");
        let mut out = [0u32; 256];
        assert!(encode_into(&long[..limit + 1], Specials::All, &mut out) == [TABLES.unk_id]);
        // At the limit, the word is matched piece by piece (BERT vocabularies have `a`, `##a`).
        let at_limit = encode_into(&long[..limit], Specials::All, &mut out);
        assert!(
            !at_limit.contains(&TABLES.unk_id),
            "{limit} letters gave the unknown token"
        );
    }

    #[test]
    fn unknown_ids_are_errors_naming_the_position() {
        let tok = tokenizer();
        let bad = TABLES.n_ids() as u32;
        let mut ids = [0u32; 8];
        let a = encode_into(b"a", Specials::All, &mut ids)[0];
        let mut out = [0u8; 64];
        let two = decode_into(&[a, a], &mut out).len();
        assert_eq!(
            tok.decode(&[a, a, bad, a], &mut out),
            Err(DecodeError::UnknownId {
                position: 2,
                id: bad,
                written: two
            })
        );
        assert_eq!(
            tok.decode_after(&[u32::MAX], &mut out),
            Err(DecodeError::UnknownId {
                position: 0,
                id: u32::MAX,
                written: 0
            })
        );
        assert!(TABLES.token_bytes(bad).is_none());
        assert!(TABLES.token_bytes(bad - 1).is_some());
    }

    #[test]
    fn decode_output_full_stops_at_an_id_boundary() {
        let text = b"Hello world, hello again";
        let mut ids = [0u32; SHORT];
        let ids = encode_into(text, Specials::All, &mut ids);
        let tok = tokenizer();
        let mut full = [0u8; 64];
        let whole = decode_into(ids, &mut full);
        let mut out = [0u8; 9];
        match tok.decode(ids, &mut out) {
            Err(DecodeError::OutputFull { consumed, written }) => {
                assert!(written <= 9 && consumed > 0 && consumed < ids.len());
                let mut prefix = [0u8; 64];
                let prefix = decode_into(&ids[..consumed], &mut prefix);
                assert!(prefix == &out[..written], "bytes before the stop differ");
                // The rest, after the stop, with `decode_after`.
                let mut rest = [0u8; 64];
                let n = tok.decode_after(&ids[consumed..], &mut rest).unwrap();
                assert!(
                    whole[..written] == out[..written] && whole[written..] == rest[..n],
                    "decode_after differs from the one-shot decode"
                );
            }
            other => panic!("expected OutputFull, got {other:?}"),
        }
    }

    #[test]
    fn stack_bound_encode() {
        let ids = work();
        let tok = tokenizer();
        let word = [b'q'; 200];
        let inputs: [&[u8]; 4] = [texts::BENCH, texts::DEMO.as_bytes(), &[b'x'; 64], &word];
        let mut peak = 0;
        for text in inputs {
            let (r, used) = stack::measure(|| tok.encode(text, ids, Specials::All));
            assert!(r.is_ok());
            peak = peak.max(used);
        }
        semihosting::println!("encode peak stack: {peak} B (bound {ENCODE_STACK_BOUND} B)");
        assert!(peak <= ENCODE_STACK_BOUND, "encode used {peak} B of stack");
        assert!(peak >= 64, "implausible stack figure {peak}");
    }

    #[test]
    fn stack_bound_decode() {
        let work = work();
        let ids = encode_into(texts::BENCH, Specials::All, &mut work[..]);
        let out = text_buf();
        let tok = tokenizer();
        let (r, used) = stack::measure(|| tok.decode(ids, out));
        assert!(r.is_ok());
        semihosting::println!("decode peak stack: {used} B (bound {DECODE_STACK_BOUND} B)");
        assert!(used <= DECODE_STACK_BOUND, "decode used {used} B of stack");
    }

    #[test]
    fn tables_live_in_flash() {
        let b = picobpe_firmware::tables::table_bytes(&TABLES);
        assert_eq!(b.outside_flash, 0);
        assert!(b.total() > b.token_bytes && b.token_bytes > 256);
        assert!(TABLES.prefix == b"##");
    }

    /// all-MiniLM-L6-v2's tokenizer (bert-base-uncased's vocabulary): its layout as its
    /// `tokenizer.json` gives it (`tests/fixtures/wordpiece/PROVENANCE.md`).
    #[test]
    #[cfg(picobpe_minilm)]
    fn minilm_layout() {
        assert_eq!(TABLES.n_ids(), 30_522);
        assert_eq!(TABLES.unk_id, 100);
        for (text, id) in [
            ("[PAD]", 0u32),
            ("[UNK]", 100),
            ("[CLS]", 101),
            ("[SEP]", 102),
            ("[MASK]", 103),
        ] {
            assert_eq!(special_id(text), Some(id), "{text}");
            assert!(TABLES.token_bytes(id) == Some(text.as_bytes()), "{text}");
        }
        assert_eq!(TABLES.specials.len(), 5);
        assert!(TABLES.lowercase && TABLES.strip_accents);
        assert!(TABLES.clean_text && TABLES.handle_chinese_chars && TABLES.cleanup);
        assert_eq!(TABLES.max_chars_per_word, 100);
    }

    #[cfg(picobpe_vectors)]
    use crate::vectors::{copy_ids, Miss};

    #[test]
    #[cfg(picobpe_vectors)]
    fn vectors_with_added_tokens() {
        let work = work();
        vectors::check(|r| {
            let n = tokenizer()
                .encode(r.text, &mut work[..], Specials::All)
                .map_err(|_| Miss::Other("encode failed"))?;
            r.all()
                .first_difference(&work[..n])
                .map_or(Ok(()), |i| Err(i.into()))
        });
    }

    #[test]
    #[cfg(picobpe_vectors)]
    fn vectors_ordinary() {
        let work = work();
        vectors::check(|r| {
            let n = tokenizer()
                .encode(r.text, &mut work[..], Specials::None)
                .map_err(|_| Miss::Other("encode failed"))?;
            r.ordinary()
                .first_difference(&work[..n])
                .map_or(Ok(()), |i| Err(i.into()))
        });
    }

    #[test]
    #[cfg(picobpe_vectors)]
    fn vectors_resumed_through_three_id_buffers() {
        let work = work();
        vectors::check(|r| {
            encode_resumed(r.text, Specials::All, 3, &mut work[..], &mut r.all().iter())
                .map_err(Miss::At)
        });
    }

    #[test]
    #[cfg(picobpe_vectors)]
    fn vectors_decode_to_the_reference_text() {
        let work = work();
        let out = text_buf();
        let (mut compared, mut decoded) = (0usize, 0usize);
        vectors::check(|r| {
            let ids = copy_ids(r, &mut work[..])?;
            let n = tokenizer()
                .decode(ids, &mut out[..])
                .map_err(|_| Miss::Other("decode failed"))?;
            match r.decoded() {
                Some(expected) if expected != &out[..n] => Err(Miss::Other(
                    "decoded text differs from tokenizers' decode",
                )),
                Some(_) => {
                    compared += 1;
                    Ok(())
                }
                None => {
                    decoded += 1;
                    Ok(())
                }
            }
        });
        semihosting::println!(
            "{compared} compared with tokenizers' decode, {decoded} without a reference text \
             (decoded without an error)"
        );
        assert!(compared >= 20, "only {compared} decoded texts compared");
    }

    #[test]
    #[cfg(picobpe_vectors)]
    fn vectors_decode_resumed_through_16_byte_buffers() {
        let work = work();
        let out = text_buf();
        vectors::check(|r| {
            let ids = copy_ids(r, &mut work[..])?;
            let expected = match r.decoded() {
                Some(text) => text,
                // No reference text: the one-shot decode.
                None => {
                    let n = tokenizer()
                        .decode(ids, &mut out[..])
                        .map_err(|_| Miss::Other("decode failed"))?;
                    &out[..n]
                }
            };
            decode_resumed(ids, 16, expected)
                .map_err(|_| Miss::Other("resumed decode differs from the reference text"))
        });
    }
}

/// Conformance vectors (builds given `PICOBPE_VECTORS`, format `PBVEC2`).
#[cfg(picobpe_vectors)]
mod vectors {
    use super::*;
    use picobpe_firmware::vectors::{records, Record, VECTORS};

    /// Model and reference of the embedded vectors, e.g. `minilm-uncased/hf-tokenizers`.
    const REFERENCE: &str = env!("PICOBPE_VECTORS_REF");

    /// How a record failed: the first differing id index, or another problem.
    pub enum Miss {
        /// Ids differ from the reference's from this index on.
        At(usize),
        /// Something else went wrong (described).
        Other(&'static str),
    }

    impl From<usize> for Miss {
        fn from(i: usize) -> Self {
            Miss::At(i)
        }
    }

    /// The record's reference ids, copied into `buf` (they are stored unaligned).
    pub fn copy_ids<'a>(r: &Record<'_>, buf: &'a mut [u32]) -> Result<&'a [u32], Miss> {
        let ids = buf
            .get_mut(..r.all().len())
            .ok_or(Miss::Other("more reference ids than the buffer holds"))?;
        for (slot, id) in ids.iter_mut().zip(r.all().iter()) {
            *slot = id;
        }
        Ok(ids)
    }

    /// Runs `f` on every record. Panics with the record's name on the first failure, if the
    /// vector file is malformed or nearly empty, or if its records were selected for other
    /// buffer sizes than this build's.
    pub fn check(mut f: impl FnMut(&Record<'_>) -> Result<(), Miss>) {
        let mut rs = records(VECTORS).expect("vector file has a bad magic");
        assert!(
            rs.limits() == Some((IDS as u32, DECODE_BYTES as u32)),
            "vectors selected for buffers {:?}, this build has ({IDS}, {DECODE_BYTES})",
            rs.limits()
        );
        let total = rs.remaining();
        assert!(total >= 50, "only {total} vectors embedded");
        let mut n = 0;
        for r in rs.by_ref() {
            match f(&r) {
                Ok(()) => {}
                Err(Miss::At(i)) => {
                    panic!("vector {}: differs from {REFERENCE} at index {i}", r.name)
                }
                Err(Miss::Other(why)) => panic!("vector {}: {why}", r.name),
            }
            n += 1;
        }
        assert!(
            !rs.malformed && n == total,
            "vector file malformed after {n} of {total} records"
        );
        semihosting::println!("{n} vectors match ({REFERENCE})");
    }
}
