// The on-target tests of a byte-level BPE model (`picobpe::Tokenizer`), included by
// `on_target.rs` unless the baked model is a SentencePiece model.
//
// Every configuration runs the model-independent tests (round trips, streaming with small
// buffers, `OutputFull` resume, errors, special tokens, stack bounds). Builds that embed
// reference vectors (`cfg(picobpe_vectors)`) also compare ids with an independent
// implementation's: tiktoken's for GPT-2 and cl100k_base on mps2-an385, Hugging Face
// tokenizers' for the small model on lm3s6965evb and for llama3-8k (the Llama 3 pattern) on
// mps2-an385, mistral-common's for Tekken on mps2-an385. GPT-2, cl100k_base, llama3-8k and
// Tekken builds add tests with the reference's ids written out here (`cfg(picobpe_gpt2)`,
// `cfg(picobpe_cl100k)`, `cfg(picobpe_llama3)`, `cfg(picobpe_tekken)`).

#[cfg(any(picobpe_llama3, picobpe_tekken))]
use picobpe::Pattern;
use picobpe::{DecodeError, EncodeError, Specials, StreamDecoder, StreamEncoder, Tokenize, Tokenizer};
use picobpe_firmware::tables::{special_id, tokenizer, TABLES};

/// Peak stack an encode call may use (bytes), whatever the input: asserted by
/// `stack_bound_encode`. The core's fixed work area is 2 × 64 `u32` (512 B) plus frames.
pub const ENCODE_STACK_BOUND: usize = 2048;
/// Peak stack a decode call may use (bytes): asserted by `stack_bound_decode`.
pub const DECODE_STACK_BOUND: usize = 512;

/// Longest id sequence the helpers below hold.
const MAX_IDS: usize = 2048;

/// Ids in a fixed buffer.
struct IdBuf {
    ids: [u32; MAX_IDS],
    len: usize,
}

impl IdBuf {
    fn new() -> Self {
        IdBuf {
            ids: [0; MAX_IDS],
            len: 0,
        }
    }
    fn as_slice(&self) -> &[u32] {
        &self.ids[..self.len]
    }
    fn push(&mut self, ids: &[u32]) {
        assert!(self.len + ids.len() <= MAX_IDS, "IdBuf overflow");
        self.ids[self.len..self.len + ids.len()].copy_from_slice(ids);
        self.len += ids.len();
    }
}

/// One-shot encode.
fn encode(text: &[u8], specials: Specials) -> IdBuf {
    let mut b = IdBuf::new();
    match tokenizer().encode(text, &mut b.ids, specials) {
        Ok(n) => b.len = n,
        Err(e) => panic!("encode failed: {e}"),
    }
    b
}

/// Encode through an output buffer of `cap` ids, draining and resuming after `OutputFull`.
/// A piece that merges into more than `cap` ids gives `PieceTooLong { needed }`; as documented,
/// that step is retried with a buffer of `needed` ids.
fn encode_resuming(text: &[u8], specials: Specials, cap: usize) -> IdBuf {
    let tok = tokenizer();
    let mut buf = [0u32; MAX_IDS];
    let mut all = IdBuf::new();
    let mut rest = text;
    let mut room = cap;
    loop {
        let chunk = &mut buf[..room];
        match tok.encode(rest, chunk, specials) {
            Ok(n) => {
                all.push(&chunk[..n]);
                return all;
            }
            Err(EncodeError::OutputFull { consumed, written }) => {
                assert!(consumed > 0 && written > 0, "no progress with room {room}");
                all.push(&chunk[..written]);
                rest = &rest[consumed..];
                room = cap;
            }
            Err(EncodeError::PieceTooLong {
                offset: 0, needed, ..
            }) if needed > room && needed <= MAX_IDS => {
                room = needed;
            }
            Err(e) => panic!("encode with room {room} failed: {e}"),
        }
    }
}

/// Streaming encode: push `chunk`-byte pieces, take ids `take` at a time.
fn encode_streaming(text: &[u8], specials: Specials, chunk: usize, take: usize) -> IdBuf {
    let mut s: StreamEncoder<Tokenizer<'_>, 256, 128> = StreamEncoder::new(tokenizer(), specials);
    let mut out = [0u32; 16];
    let out = &mut out[..take];
    let mut all = IdBuf::new();
    for part in text.chunks(chunk) {
        let mut part = part;
        while !part.is_empty() {
            let n = s.push(part).unwrap_or_else(|e| panic!("push: {e}"));
            part = &part[n..];
            loop {
                let k = s.take(out).unwrap_or_else(|e| panic!("take: {e}"));
                if k == 0 {
                    break;
                }
                all.push(&out[..k]);
            }
        }
    }
    s.finish();
    loop {
        let k = s
            .take(out)
            .unwrap_or_else(|e| panic!("take after finish: {e}"));
        if k == 0 {
            break;
        }
        all.push(&out[..k]);
    }
    assert!(s.is_done(), "stream not done after draining");
    all
}

/// Decode into a fixed buffer and compare with `expected`.
fn assert_decodes_to(ids: &[u32], expected: &[u8]) {
    let mut out = [0u8; 8192];
    let n = tokenizer()
        .decode(ids, &mut out)
        .unwrap_or_else(|e| panic!("decode failed: {e}"));
    assert!(
        &out[..n] == expected,
        "round trip differs ({n} bytes decoded, {} expected)",
        expected.len()
    );
}

/// Round trip with and without specials, and with an `OutputFull`-resuming encode.
fn check_round_trip(text: &[u8]) {
    for specials in [Specials::All, Specials::None] {
        let ids = encode(text, specials);
        assert_decodes_to(ids.as_slice(), text);
        let again = encode_resuming(text, specials, 3);
        assert!(
            again.as_slice() == ids.as_slice(),
            "resumed encode differs from one-shot"
        );
    }
}

/// The first 4000 bytes of the bench text (fits the fixed id buffers with any vocabulary).
fn bench_part() -> &'static [u8] {
    &picobpe_firmware::texts::BENCH[..4000]
}

/// The special token the model-independent tests use: `<|endoftext|>` when the model has it
/// (gpt2, cl100k_base, the small model, llama3-8k), else `</s>` (Tekken), else its first.
fn eot_text() -> &'static str {
    let specials = TABLES.specials;
    ["<|endoftext|>", "</s>"]
        .into_iter()
        .find_map(|t| specials.iter().find(|s| s.text == t))
        .or(specials.first())
        .map(|s| s.text)
        .expect("the model has no special token")
}

fn eot() -> u32 {
    special_id(eot_text()).expect("the special token has an id")
}

/// Text in a fixed buffer.
struct Text {
    bytes: [u8; 128],
    len: usize,
}

impl Text {
    fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// A part of a test text.
#[derive(Clone, Copy)]
enum Part {
    /// These bytes.
    Bytes(&'static [u8]),
    /// The special token's text ([`eot_text`]).
    Eot,
    /// Its text without the last byte.
    EotPrefix,
}

/// `parts` joined.
fn with_eot(parts: &[Part]) -> Text {
    let mut t = Text {
        bytes: [0; 128],
        len: 0,
    };
    let eot = eot_text().as_bytes();
    for part in parts {
        let bytes = match *part {
            Part::Bytes(b) => b,
            Part::Eot => eot,
            Part::EotPrefix => &eot[..eot.len() - 1],
        };
        t.bytes[t.len..t.len + bytes.len()].copy_from_slice(bytes);
        t.len += bytes.len();
    }
    t
}

#[embedded_test::tests]
mod tests {
    use super::*;
    use picobpe_firmware::{stack, texts};

    #[test]
    fn demo_text_round_trips() {
        check_round_trip(texts::DEMO.as_bytes());
    }

    #[test]
    fn multilingual_round_trips() {
        let text = "Ünïcödé: 日本語のテキスト, 한국어, Русский текст, ελληνικά, हिन्दी, العربية, \
                    emoji 🙃🇮🇸👩‍👩‍👧 and tabs\t\t, CRLF\r\n, NBSP\u{a0}, U+3000\u{3000}end";
        check_round_trip(text.as_bytes());
    }

    #[test]
    fn invalid_utf8_round_trips() {
        let text: &[u8] = b"ok \xff\xfe bad \xc3 lone lead, \x80 stray, \xed\xa0\x80 surrogate, \
                            \xf0\x9f\x99 truncated \xf4\x90\x80\x80 too big \xc0\xaf overlong \xf0";
        check_round_trip(text);
    }

    #[test]
    fn bench_text_round_trips_through_small_buffers() {
        let text = bench_part();
        let one = encode(text, Specials::All);
        assert_decodes_to(one.as_slice(), text);
        let resumed = encode_resuming(text, Specials::All, 7);
        assert!(
            resumed.as_slice() == one.as_slice(),
            "resumed encode differs"
        );
        assert!(
            one.len < text.len() / 2,
            "{} ids for {} bytes: not merging?",
            one.len,
            text.len()
        );
    }

    #[test]
    fn empty_input_gives_no_ids() {
        let mut out = [0u32; 4];
        assert_eq!(tokenizer().encode(b"", &mut out, Specials::All), Ok(0));
        assert_eq!(tokenizer().encode(b"", &mut [], Specials::All), Ok(0));
        let mut bytes = [0u8; 4];
        assert_eq!(tokenizer().decode(&[], &mut bytes), Ok(0));
    }

    #[test]
    fn every_byte_alone_is_its_byte_token() {
        let tok = tokenizer();
        for b in 0..=255u8 {
            let mut out = [0u32; 2];
            let n = tok.encode(&[b], &mut out, Specials::All).unwrap();
            assert!(
                n == 1 && out[0] == TABLES.byte_ids[b as usize],
                "byte {b:#04x} -> {:?}",
                &out[..n]
            );
            assert!(
                tok.token_bytes(out[0]) == Some(&[b][..]),
                "byte {b:#04x} token bytes"
            );
        }
    }

    #[test]
    fn count_equals_encode_length() {
        let mut scratch = [0u32; 32];
        for text in [texts::DEMO.as_bytes(), bench_part()] {
            let ids = encode(text, Specials::All);
            let n = tokenizer()
                .count(text, &mut scratch, Specials::All)
                .unwrap();
            assert_eq!(n, ids.len);
        }
    }

    #[test]
    fn special_token_is_recognized() {
        let text = with_eot(&[Part::Bytes(b"before"), Part::Eot, Part::Bytes(b"after"), Part::Eot]);
        let text = text.as_bytes();
        let ids = encode(text, Specials::All);
        let e = eot();
        let hits = ids.as_slice().iter().filter(|&&i| i == e).count();
        assert_eq!(hits, 2);
        assert_eq!(ids.as_slice().last(), Some(&e));
        assert_decodes_to(ids.as_slice(), text);
        assert!(tokenizer().token_bytes(e) == Some(eot_text().as_bytes()));
    }

    #[test]
    fn special_token_text_is_ordinary_without_specials() {
        let text = with_eot(&[Part::Bytes(b"before"), Part::Eot, Part::Bytes(b"after")]);
        let text = text.as_bytes();
        let ids = encode(text, Specials::None);
        assert!(
            !ids.as_slice().contains(&eot()),
            "special id in an ordinary encode"
        );
        assert!(ids.len > 3);
        assert_decodes_to(ids.as_slice(), text);
    }

    #[test]
    fn partial_special_token_is_ordinary_text() {
        // The special's text without its last byte, twice (`<|endoftext|<|endoftext|`).
        let text = with_eot(&[Part::EotPrefix, Part::EotPrefix]);
        let text = text.as_bytes();
        let ids = encode(text, Specials::All);
        assert!(!ids.as_slice().contains(&eot()));
        assert_decodes_to(ids.as_slice(), text);
    }

    #[test]
    fn output_full_resume_equals_one_shot() {
        let text = texts::DEMO.as_bytes();
        let one = encode(text, Specials::All);
        for cap in 1..=9 {
            let r = encode_resuming(text, Specials::All, cap);
            assert!(
                r.as_slice() == one.as_slice(),
                "cap {cap}: differs from one-shot"
            );
        }
    }

    #[test]
    fn output_full_reports_a_piece_boundary() {
        let text = b"Hello world, hello again and again, and again and again and again";
        let mut out = [0u32; 8];
        match tokenizer().encode(text, &mut out, Specials::All) {
            Err(EncodeError::OutputFull { consumed, written }) => {
                assert!(written > 0 && written <= 8 && consumed > 0 && consumed < text.len());
                // The ids written are exactly those of the consumed prefix.
                let prefix = encode(&text[..consumed], Specials::All);
                assert!(prefix.as_slice() == &out[..written], "prefix ids differ");
            }
            other => panic!("expected OutputFull, got {other:?}"),
        }
    }

    #[test]
    fn piece_longer_than_the_buffer_is_an_error() {
        let text = [b'q'; 200]; // one 200-byte piece (letters), not a token
        let mut out = [0u32; 4];
        match tokenizer().encode(&text, &mut out, Specials::All) {
            Err(EncodeError::PieceTooLong {
                offset: 0,
                len: 200,
                needed,
            }) => {
                assert!(needed > 4 && needed <= 400, "needed {needed}");
                // With the room it asked for, the same input encodes.
                let mut big = [0u32; 400];
                let n = tokenizer()
                    .encode(&text, &mut big[..needed], Specials::All)
                    .unwrap();
                assert_decodes_to(&big[..n], &text);
            }
            other => panic!("expected PieceTooLong, got {other:?}"),
        }
    }

    #[test]
    fn long_runs_round_trip() {
        // 900 spaces: one piece, merged in the output buffer (2 ids per byte of room).
        let mut text = [b' '; 905];
        text[904] = b'a';
        text[..5].copy_from_slice(b"12345");
        check_round_trip(&text);
        let digits = [b'7'; 300];
        check_round_trip(&digits);
    }

    #[test]
    fn streaming_encode_equals_one_shot() {
        for text in [texts::DEMO.as_bytes(), &texts::BENCH[..1500]] {
            let one = encode(text, Specials::All);
            for (chunk, take) in [(1, 1), (2, 3), (3, 16), (7, 5), (64, 2)] {
                let s = encode_streaming(text, Specials::All, chunk, take);
                assert!(
                    s.as_slice() == one.as_slice(),
                    "chunk {chunk}, take {take}: differs"
                );
            }
        }
    }

    #[test]
    fn streaming_encode_finds_a_special_split_across_chunks() {
        let text = with_eot(&[Part::Bytes(b"abc"), Part::Eot, Part::Bytes(b"def")]);
        let text = text.as_bytes();
        let one = encode(text, Specials::All);
        assert!(one.as_slice().contains(&eot()));
        for chunk in 1..=text.len() {
            let s = encode_streaming(text, Specials::All, chunk, 1);
            assert!(s.as_slice() == one.as_slice(), "chunk {chunk}: differs");
        }
    }

    #[test]
    fn streaming_encode_errors() {
        let mut s: StreamEncoder<Tokenizer<'_>, 8, 16> =
            StreamEncoder::new(tokenizer(), Specials::All);
        // A 12-letter word does not fit an 8-byte input buffer.
        assert_eq!(s.push(b"abcdefghijkl"), Ok(8));
        let mut out = [0u32; 4];
        assert_eq!(
            s.take(&mut out),
            Err(picobpe::StreamError::InputTooSmall { capacity: 8 })
        );
        let mut s: StreamEncoder<Tokenizer<'_>, 8, 16> =
            StreamEncoder::new(tokenizer(), Specials::All);
        s.finish();
        assert_eq!(s.push(b"x"), Err(picobpe::StreamError::Finished));
    }

    #[test]
    fn streaming_decode_equals_one_shot_and_emits_whole_utf8() {
        let text = "Héllò hôw are ü? 🙃 日本語 👩‍👩‍👧 end".as_bytes();
        let ids = encode(text, Specials::All);
        for take in [4, 5, 7, 64] {
            let mut d: StreamDecoder<Tokenizer<'_>, 64> = StreamDecoder::new(tokenizer());
            let mut got = [0u8; 256];
            let mut len = 0;
            let mut buf = [0u8; 64];
            for &id in ids.as_slice() {
                d.push(id).unwrap();
                loop {
                    let k = d.take(&mut buf[..take]);
                    if k == 0 {
                        break;
                    }
                    got[len..len + k].copy_from_slice(&buf[..k]);
                    len += k;
                    // Whatever was handed out so far is complete UTF-8 (`take` buffers of at
                    // least 4 bytes always have room for a whole character).
                    assert!(
                        core::str::from_utf8(&got[..len]).is_ok(),
                        "take {take}: split UTF-8"
                    );
                }
            }
            d.finish();
            loop {
                let k = d.take(&mut buf[..take]);
                if k == 0 {
                    break;
                }
                got[len..len + k].copy_from_slice(&buf[..k]);
                len += k;
            }
            assert!(&got[..len] == text, "take {take}: differs");
        }
    }

    #[test]
    fn streaming_decode_holds_a_partial_character() {
        // 🙃 = F0 9F 99 83, pushed one byte token at a time.
        let emoji = "🙃".as_bytes();
        let mut d: StreamDecoder<Tokenizer<'_>, 16> = StreamDecoder::new(tokenizer());
        let mut buf = [0u8; 8];
        for (i, &b) in emoji.iter().enumerate() {
            d.push(TABLES.byte_ids[b as usize]).unwrap();
            let k = d.take(&mut buf);
            if i < 3 {
                assert_eq!(k, 0, "handed out a partial character after byte {i}");
            } else {
                assert!(k == 4 && &buf[..4] == emoji);
            }
        }
    }

    #[test]
    fn unknown_ids_are_errors_naming_the_position() {
        let tok = tokenizer();
        let bad = TABLES.n_ids() as u32;
        let a = TABLES.byte_ids[b'a' as usize];
        let mut out = [0u8; 16];
        assert_eq!(
            tok.decode(&[a, a, bad, a], &mut out),
            Err(DecodeError::UnknownId {
                position: 2,
                id: bad,
                written: 2
            })
        );
        assert_eq!(
            tok.decode(&[u32::MAX], &mut out),
            Err(DecodeError::UnknownId {
                position: 0,
                id: u32::MAX,
                written: 0
            })
        );
        assert!(tok.token_bytes(bad).is_none());
        let mut d: StreamDecoder<Tokenizer<'_>, 16> = StreamDecoder::new(tok);
        d.push(a).unwrap();
        assert_eq!(
            d.push(bad),
            Err(DecodeError::UnknownId {
                position: 1,
                id: bad,
                written: 0
            })
        );
    }

    #[test]
    fn decode_output_full_stops_at_an_id_boundary() {
        let text = b"Hello world, hello again";
        let ids = encode(text, Specials::All);
        let tok = tokenizer();
        let mut out = [0u8; 9];
        match tok.decode(ids.as_slice(), &mut out) {
            Err(DecodeError::OutputFull { consumed, written }) => {
                assert_eq!(tok.decoded_len(&ids.as_slice()[..consumed]), Ok(written));
                assert!(out[..written] == text[..written]);
                assert!(written <= 9 && consumed < ids.len);
            }
            other => panic!("expected OutputFull, got {other:?}"),
        }
    }

    #[test]
    fn stack_bound_encode() {
        let ids = cortex_m::singleton!(: [u32; 4096] = [0; 4096]).unwrap();
        let tok = tokenizer();
        let inputs: [&[u8]; 3] = [texts::BENCH, texts::DEMO.as_bytes(), &[b'x'; 64]];
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
        let ids = encode(texts::DEMO.as_bytes(), Specials::All);
        let out = cortex_m::singleton!(: [u8; 1024] = [0; 1024]).unwrap();
        let tok = tokenizer();
        let (r, used) = stack::measure(|| tok.decode(ids.as_slice(), out));
        assert!(r.is_ok());
        semihosting::println!("decode peak stack: {used} B (bound {DECODE_STACK_BOUND} B)");
        assert!(used <= DECODE_STACK_BOUND, "decode used {used} B of stack");
    }

    #[test]
    fn tables_live_in_flash() {
        let b = picobpe_firmware::tables::table_bytes(&TABLES);
        assert_eq!(b.outside_flash, 0);
        assert!(b.total() > b.token_bytes && b.token_bytes > 256);
    }

    /// tiktoken's gpt2 ids for the sanity string of the reference vectors' generator.
    #[test]
    #[cfg(picobpe_gpt2)]
    fn gpt2_sanity_string() {
        let ids = encode("Hello, 🌍! 你好!".as_bytes(), Specials::All);
        let expected = [
            15496u32, 11, 12520, 234, 235, 0, 220, 19526, 254, 25001, 121, 0,
        ];
        assert!(ids.as_slice() == expected, "got {:?}", ids.as_slice());
    }

    /// tiktoken's cl100k_base ids for the same sanity string.
    #[test]
    #[cfg(picobpe_cl100k)]
    fn cl100k_sanity_string() {
        let ids = encode(cl100k::SANITY.as_bytes(), Specials::All);
        assert!(
            ids.as_slice() == cl100k::SANITY_IDS,
            "got {:?}",
            ids.as_slice()
        );
    }

    /// tiktoken's cl100k_base ids for a text where cl100k's pattern splits differently from
    /// GPT-2's (case-insensitive contractions, 3-digit groups, a non-letter glued to the letters
    /// after it, punctuation keeping its newlines, whitespace ending at a newline).
    #[test]
    #[cfg(picobpe_cl100k)]
    fn cl100k_pattern_string() {
        for specials in [Specials::All, Specials::None] {
            let ids = encode(cl100k::PATTERN_TEXT.as_bytes(), specials);
            assert!(
                ids.as_slice() == cl100k::PATTERN_IDS,
                "got {:?}",
                ids.as_slice()
            );
        }
        assert_decodes_to(&cl100k::PATTERN_IDS, cl100k::PATTERN_TEXT.as_bytes());
    }

    /// The five special tokens have tiktoken's ids, are recognized between ordinary text (and
    /// only with `Specials::All`), and decode to their text.
    #[test]
    #[cfg(picobpe_cl100k)]
    fn cl100k_special_tokens_have_tiktoken_ids() {
        assert_eq!(TABLES.specials.len(), cl100k::SPECIALS.len());
        let tok = tokenizer();
        for (text, id) in cl100k::SPECIALS {
            assert_eq!(special_id(text), Some(id), "{text}");
            assert!(tok.token_bytes(id) == Some(text.as_bytes()), "{text} bytes");
            let mut buf = [0u8; 64];
            let n = text.len() + 2;
            buf[0] = b'x';
            buf[1..n - 1].copy_from_slice(text.as_bytes());
            buf[n - 1] = b'y';
            let (x, y) = (
                TABLES.byte_ids[b'x' as usize],
                TABLES.byte_ids[b'y' as usize],
            );
            let ids = encode(&buf[..n], Specials::All);
            assert!(ids.as_slice() == [x, id, y], "{text}: {:?}", ids.as_slice());
            let ordinary = encode(&buf[..n], Specials::None);
            assert!(
                !ordinary.as_slice().contains(&id),
                "{text} in an ordinary encode"
            );
            assert_decodes_to(ordinary.as_slice(), &buf[..n]);
        }
    }

    /// Ids below the vocabulary size that tiktoken leaves unused are unknown ids, and their
    /// neighbours are not.
    #[test]
    #[cfg(picobpe_cl100k)]
    fn cl100k_unused_ids_are_unknown() {
        assert_eq!(TABLES.n_ids(), cl100k::N_VOCAB);
        let tok = tokenizer();
        let a = TABLES.byte_ids[b'a' as usize];
        let mut out = [0u8; 64];
        for id in cl100k::HOLES {
            assert!(tok.token_bytes(id).is_none(), "id {id} has bytes");
            assert_eq!(
                tok.decode(&[a, id], &mut out),
                Err(DecodeError::UnknownId {
                    position: 1,
                    id,
                    written: 1
                })
            );
        }
        for id in [100_255, 100_257, 100_260, 100_276] {
            assert!(tok.token_bytes(id).is_some(), "id {id} has no bytes");
        }
    }

    /// llama3-8k's four special tokens (after its 8,192 ordinary ids, as in Llama 3) have the
    /// ids of its `tokenizer.json` (the header of the committed reference vectors,
    /// `tests/fixtures/hf_bpe/llama3-8k/`), are recognized between ordinary text (and only with
    /// `Specials::All`), and decode to their text; the pattern is Llama 3's.
    #[test]
    #[cfg(picobpe_llama3)]
    fn llama3_special_tokens_have_tokenizers_ids() {
        assert_eq!(TABLES.pattern, Pattern::Llama3);
        assert_eq!(TABLES.n_ids(), 8196);
        assert_eq!(TABLES.specials.len(), 4);
        let tok = tokenizer();
        for (text, id) in [
            ("<|begin_of_text|>", 8192u32),
            ("<|end_of_text|>", 8193),
            ("<|eot_id|>", 8194),
            ("<|endoftext|>", 8195),
        ] {
            assert_eq!(special_id(text), Some(id), "{text}");
            assert!(tok.token_bytes(id) == Some(text.as_bytes()), "{text} bytes");
            let mut buf = [0u8; 64];
            let n = text.len() + 2;
            buf[0] = b'x';
            buf[1..n - 1].copy_from_slice(text.as_bytes());
            buf[n - 1] = b'y';
            let (x, y) = (
                TABLES.byte_ids[b'x' as usize],
                TABLES.byte_ids[b'y' as usize],
            );
            let ids = encode(&buf[..n], Specials::All);
            assert!(ids.as_slice() == [x, id, y], "{text}: {:?}", ids.as_slice());
            let ordinary = encode(&buf[..n], Specials::None);
            assert!(
                !ordinary.as_slice().contains(&id),
                "{text} in an ordinary encode"
            );
            assert_decodes_to(ordinary.as_slice(), &buf[..n]);
        }
    }

    /// Mistral NeMo's Tekken (`tests/fixtures/tekken`): its pattern, its 1,000 special tokens
    /// before the vocabulary, and `mistral-common`'s `Tekkenizer` ids (written out here, from
    /// `Tekkenizer.encode(text, bos=False, eos=False)`) for a text where the Tekken pattern
    /// splits differently from o200k_base's: `'t` is punctuation, numbers go one at a time.
    #[test]
    #[cfg(picobpe_tekken)]
    fn tekken_pattern_specials_and_ids() {
        assert_eq!(TABLES.pattern, Pattern::Tekken);
        assert_eq!(TABLES.n_ids(), 131_072);
        assert_eq!(TABLES.specials.len(), 1000);
        for (text, id) in [("<unk>", 0u32), ("<s>", 1), ("[INST]", 3), ("<SPECIAL_999>", 999)] {
            assert_eq!(special_id(text), Some(id), "{text}");
        }
        let text = "Hello world, don't 12345 HTTPServer naïve/\n\n  x".as_bytes();
        let expected = [
            22177u32, 4304, 1044, 2607, 2405, 1032, 1049, 1050, 1051, 1052, 1053, 23733, 11473,
            98355, 22004, 1032, 2460,
        ];
        for specials in [Specials::All, Specials::None] {
            let ids = encode(text, specials);
            assert!(ids.as_slice() == expected, "got {:?}", ids.as_slice());
        }
        assert_decodes_to(&expected, text);
    }

    #[cfg(picobpe_vectors)]
    use crate::vectors::Miss;

    #[test]
    #[cfg(picobpe_vectors)]
    fn vectors_with_specials() {
        vectors::check(|r, tok| {
            let mut out = [0u32; MAX_IDS];
            let n = tok
                .encode(r.text, &mut out, Specials::All)
                .map_err(|_| Miss::Other("encode failed"))?;
            r.all()
                .first_difference(&out[..n])
                .map_or(Ok(()), |i| Err(i.into()))
        });
    }

    #[test]
    #[cfg(picobpe_vectors)]
    fn vectors_ordinary() {
        vectors::check(|r, tok| {
            let mut out = [0u32; MAX_IDS];
            let n = tok
                .encode(r.text, &mut out, Specials::None)
                .map_err(|_| Miss::Other("encode failed"))?;
            r.ordinary()
                .first_difference(&out[..n])
                .map_or(Ok(()), |i| Err(i.into()))
        });
    }

    #[test]
    #[cfg(picobpe_vectors)]
    fn vectors_count() {
        vectors::check(|r, tok| {
            let mut scratch = [0u32; MAX_IDS];
            match tok.count(r.text, &mut scratch, Specials::All) {
                Ok(n) if n == r.all().len() => Ok(()),
                Ok(_) => Err(Miss::Other(
                    "count differs from the number of reference ids",
                )),
                Err(_) => Err(Miss::Other("count failed")),
            }
        });
    }

    #[test]
    #[cfg(picobpe_vectors)]
    fn vectors_resumed_through_three_id_buffers() {
        vectors::check(|r, _| {
            let ids = encode_resuming(r.text, Specials::All, 3);
            r.all()
                .first_difference(ids.as_slice())
                .map_or(Ok(()), |i| Err(i.into()))
        });
    }

    #[test]
    #[cfg(picobpe_vectors)]
    fn vectors_streamed_in_small_chunks() {
        vectors::check(|r, _| {
            let ids = encode_streaming(r.text, Specials::All, 5, 3);
            r.all()
                .first_difference(ids.as_slice())
                .map_or(Ok(()), |i| Err(i.into()))
        });
    }

    #[test]
    #[cfg(picobpe_vectors)]
    fn vectors_decode_to_their_text() {
        vectors::check(|r, tok| {
            let mut ids = [0u32; MAX_IDS];
            for (slot, id) in ids.iter_mut().zip(r.all().iter()) {
                *slot = id;
            }
            let mut out = [0u8; 8192];
            let n = tok
                .decode(&ids[..r.all().len()], &mut out)
                .map_err(|_| Miss::Other("decode failed"))?;
            if &out[..n] == r.text {
                Ok(())
            } else {
                Err(Miss::Other("reference ids do not decode to the text"))
            }
        });
    }
}

/// Conformance vectors (builds given `PICOBPE_VECTORS`).
#[cfg(picobpe_vectors)]
mod vectors {
    use super::*;
    use picobpe::Tokenizer;
    use picobpe_firmware::vectors::{records, Record, VECTORS};

    /// Model and reference of the embedded vectors, e.g. `gpt2/tiktoken`.
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

    /// Runs `f` on every record. Panics with the record's name on the first failure, if the
    /// vector file is malformed or nearly empty, or if it names buffers (`PBVEC2`) other than
    /// these tests' ([`MAX_IDS`] ids, 8 KiB of decoded text).
    pub fn check(f: impl Fn(&Record<'_>, Tokenizer<'static>) -> Result<(), Miss>) {
        let mut rs = records(VECTORS).expect("vector file has a bad magic");
        if let Some(limits) = rs.limits() {
            assert!(
                limits == (MAX_IDS as u32, 8192),
                "vectors selected for buffers {limits:?}, these tests have ({MAX_IDS}, 8192)"
            );
        }
        let total = rs.remaining();
        assert!(total >= 50, "only {total} vectors embedded");
        let tok = tokenizer();
        let mut n = 0;
        for r in rs.by_ref() {
            assert!(
                r.all().len() <= MAX_IDS,
                "{}: too many ids for the test buffers",
                r.name
            );
            match f(&r, tok) {
                Ok(()) => {}
                Err(Miss::At(i)) => {
                    panic!(
                        "vector {}: ids differ from {REFERENCE} at index {i}",
                        r.name
                    )
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

/// tiktoken's cl100k_base figures for the cl100k tests, printed by `scripts/cl100k_ids.py`
/// (tiktoken 0.14 built offline from `tests/fixtures/models/cl100k_base.tiktoken.gz` and
/// `cl100k_base.json`; the sanity ids are also checked there against the committed vectors).
#[cfg(picobpe_cl100k)]
mod cl100k {
    /// The reference vectors generator's sanity string.
    pub const SANITY: &str = "Hello, 🌍! 你好!";
    /// Its ids.
    pub const SANITY_IDS: [u32; 10] = [9906, 11, 11410, 234, 235, 0, 220, 57668, 53901, 0];
    /// cl100k pieces: `HE|'S| WE|'LL| THEY|'RE| I|'M| DON|'T| obj|.field|=|123|456|7| #|tag|\n\n|...\r\n|  \n|\tx`
    /// (GPT-2's pattern: `HE|'|S| WE|'|LL|…| obj|.|field|=|1234567| #|tag|\n|\n|...|\r\n  \n|\t|x`).
    pub const PATTERN_TEXT: &str =
        "HE'S WE'LL THEY'RE I'M DON'T obj.field=1234567 #tag\n\n...\r\n  \n\tx";
    /// Its ids (the piece `'LL` is no token, so it merges to `'` + `LL`).
    pub const PATTERN_IDS: [u32; 23] = [
        1837, 13575, 20255, 6, 4178, 63593, 95253, 358, 28703, 45373, 17773, 2909, 16859, 28, 4513,
        10961, 22, 674, 4681, 271, 35929, 2355, 10436,
    ];
    /// tiktoken's special tokens of cl100k_base.
    pub const SPECIALS: [(&str, u32); 5] = [
        ("<|endoftext|>", 100257),
        ("<|fim_prefix|>", 100258),
        ("<|fim_middle|>", 100259),
        ("<|fim_suffix|>", 100260),
        ("<|endofprompt|>", 100276),
    ];
    /// tiktoken's `n_vocab`.
    pub const N_VOCAB: usize = 100_277;
    /// Ids below `N_VOCAB` that are neither a rank nor a special token.
    pub const HOLES: [u32; 16] = [
        100256, 100261, 100262, 100263, 100264, 100265, 100266, 100267, 100268, 100269, 100270,
        100271, 100272, 100273, 100274, 100275,
    ];
}
