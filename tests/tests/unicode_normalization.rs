//! The core's Unicode normalization forms against the reference library itself: Hugging Face
//! `tokenizers`' `NFC`, `NFD`, `NFKC` and `NFKD` normalizers (the Rust crate, the code the
//! Python package runs) on every Unicode scalar value in several contexts, on seeded random
//! strings built from the characters normalization acts on (marks of every class in any
//! order, composites, compatibility characters, Hangul jamo and syllables), and on long runs
//! of marks. Then the contract of a full buffer (drain and resume gives the one-shot bytes),
//! of input that arrives in pieces (`last == false`), of bytes that are not UTF-8, and of a
//! unit longer than the buffer. Zero differences allowed.

use picobpe::normalizer::{normalize, NormalizeError, UnicodeForm};
use picobpe_tests::check::Rng;

const FORMS: [UnicodeForm; 5] = [
    UnicodeForm::Nfc,
    UnicodeForm::Nfd,
    UnicodeForm::Nfkc,
    UnicodeForm::Nfkd,
    UnicodeForm::NmtNfkc,
];

fn reference(form: UnicodeForm, text: &str) -> String {
    picobpe_tests::reference::normalize_str(form, text)
}

/// One-shot normalization into a buffer large enough for any input.
fn ours(form: UnicodeForm, text: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; 18 * 4 * text.len() + 4];
    let p = normalize(form, text, true, &mut out).expect("normalize");
    assert_eq!(p.consumed, text.len());
    out.truncate(p.written);
    out
}

fn check(label: &str, texts: impl Iterator<Item = String>) {
    let (mut n, mut failed) = (0, Vec::new());
    for text in texts {
        for form in FORMS {
            n += 1;
            let want = reference(form, &text);
            let got = ours(form, text.as_bytes());
            if got != want.as_bytes() && failed.len() < 8 {
                failed.push(format!(
                    "{form:?} {text:?} ({}): want {want:?} ({}), got {:?}",
                    codes(&text),
                    codes(&want),
                    String::from_utf8_lossy(&got)
                ));
            }
        }
    }
    assert!(
        failed.is_empty(),
        "{label}: {} of {n} differ, first:\n{}",
        failed.len(),
        failed.join("\n")
    );
    eprintln!("{label}: {n} normalizations equal tokenizers'");
}

fn codes(s: &str) -> String {
    s.chars()
        .map(|c| format!("{:04X}", c as u32))
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn every_scalar_value_in_context_equals_tokenizers() {
    // Alone; after a base letter and before marks of two classes; after a Hangul L jamo and
    // before a V and a T jamo; twice in a row.
    let texts = (0..0x11_0000u32)
        .filter_map(char::from_u32)
        .map(|c| format!("{c}|a{c}\u{0316}\u{0301}|\u{1100}{c}\u{1161}\u{11A8}|{c}{c}\u{0327}"));
    check("every scalar value", texts);
}

/// Characters normalization acts on, with a few that it leaves alone.
fn alphabet() -> Vec<char> {
    let mut v: Vec<char> = "aeiouAEOUnscgkzy ,.1".chars().collect();
    // Marks of many classes (220 below, 230 above, 202 attached below, 1 overlay, 7 nukta,
    // 9 virama, 240, 234 double above, 216, 226, 233, Hebrew points, Thai, Tibetan).
    v.extend(
        [
            0x0300, 0x0301, 0x0302, 0x0303, 0x0308, 0x030A, 0x030C, 0x0316, 0x0323, 0x0327, 0x0328,
            0x0334, 0x0338, 0x0345, 0x035C, 0x035D, 0x093C, 0x094D, 0x05B0, 0x05BC, 0x05C1, 0x0E38,
            0x0F71, 0x0F72, 0x0F74, 0x0F80, 0x031B, 0x0340, 0x0344, 0x0F73, 0x0F75, 0x0F81, 0x1DCE,
            0x302A, 0x302E, 0x3099, 0x309A, 0x0B3E, 0x0B47, 0x0B57, 0x0BBE, 0x0BC6, 0x0DD9, 0x0DCF,
            0x0DDF, 0x102E, 0x1025, 0x0CC6, 0x0CD5, 0x0CC2,
            // Arabic letters and harakat (classes 27 to 35, in and out of order; madda and
            // hamza compose with alef, waw and yeh), which diacritized text stacks.
            0x0627, 0x0644, 0x0648, 0x064A, 0x064B, 0x064E, 0x064F, 0x0650, 0x0651, 0x0652, 0x0653,
            0x0654, 0x0655, 0x0670,
        ]
        .into_iter()
        .filter_map(char::from_u32),
    );
    // Composites and compatibility characters.
    v.extend("éÅǖṩếỗǻΐﬁﬃ①²ₐ㎒ﷺ～ｶﾞ가각갂각ᆧ한햏ÅΩKǅ⑴ᾷ\u{FB2C}\u{1D15E}\u{2ADC}".chars());
    // What `Nmt` drops or makes a space.
    v.extend(
        "\u{1}\u{7F}\u{8F}\u{B}\t\n\r\u{1680}\u{200B}\u{200D}\u{2028}\u{2581}\u{FEFF}\u{FFFD}"
            .chars(),
    );
    v
}

#[test]
fn random_strings_equal_tokenizers() {
    let abc = alphabet();
    let mut rng = Rng::new("unicode-normalization", 1);
    let texts = (0..20_000).map(|_| {
        let len = rng.range(1, 24);
        (0..len)
            .map(|_| abc[rng.range(0, abc.len() - 1)])
            .collect::<String>()
    });
    check("random strings", texts);
}

#[test]
fn long_runs_of_marks_equal_tokenizers() {
    let marks: Vec<char> = alphabet()
        .into_iter()
        .filter(|c| !c.is_ascii() && (*c as u32) < 0x1000)
        .collect();
    let mut rng = Rng::new("unicode-normalization-runs", 2);
    let texts = (0..200).map(|i| {
        let len = if i == 0 { 5_000 } else { rng.range(30, 400) };
        let mut s = String::from("e");
        s.extend((0..len).map(|_| marks[rng.range(0, marks.len() - 1)]));
        s.push('o');
        s
    });
    check("long runs of marks", texts);
}

/// Normalizes with an output buffer of `cap` bytes, draining and resuming on a full one; `None`
/// when a unit needs more than `cap`.
fn drained(form: UnicodeForm, text: &[u8], cap: usize) -> Option<Vec<u8>> {
    let (mut got, mut buf, mut at) = (Vec::new(), vec![0u8; cap], 0);
    loop {
        match normalize(form, &text[at..], true, &mut buf) {
            Ok(p) => {
                got.extend_from_slice(&buf[..p.written]);
                assert_eq!(at + p.consumed, text.len());
                return Some(got);
            }
            Err(NormalizeError::OutputFull { consumed, written }) => {
                assert!(consumed > 0 || written > 0, "no progress");
                got.extend_from_slice(&buf[..written]);
                at += consumed;
            }
            Err(NormalizeError::UnitTooLong { needed, .. }) => {
                assert!(needed > cap);
                return None;
            }
        }
    }
}

/// Normalizes input that arrives in pieces of `chunk` bytes (`last == false` until the end).
fn streamed(form: UnicodeForm, text: &[u8], chunk: usize) -> Vec<u8> {
    let (mut got, mut pending, mut buf) = (Vec::new(), Vec::new(), vec![0u8; 4096]);
    let mut pieces = text.chunks(chunk).peekable();
    while let Some(piece) = pieces.next() {
        pending.extend_from_slice(piece);
        let last = pieces.peek().is_none();
        let p = normalize(form, &pending, last, &mut buf).expect("room");
        got.extend_from_slice(&buf[..p.written]);
        pending.drain(..p.consumed);
    }
    assert!(pending.is_empty());
    got
}

#[test]
fn a_full_buffer_or_a_split_input_gives_the_one_shot_bytes() {
    let abc = alphabet();
    let mut rng = Rng::new("unicode-normalization-resume", 3);
    for _ in 0..3_000 {
        let len = rng.range(1, 40);
        let text: String = (0..len).map(|_| abc[rng.range(0, abc.len() - 1)]).collect();
        for form in FORMS {
            let want = ours(form, text.as_bytes());
            let cap = rng.range(4, 64);
            if let Some(got) = drained(form, text.as_bytes(), cap) {
                assert_eq!(got, want, "{form:?} {text:?} cap {cap}");
            }
            let chunk = rng.range(1, 8);
            assert_eq!(
                streamed(form, text.as_bytes(), chunk),
                want,
                "{form:?} {text:?} chunk {chunk}"
            );
        }
    }
}

#[test]
fn bytes_that_are_not_utf8_pass_through_or_become_spaces() {
    let abc = alphabet();
    let junk: [&[u8]; 6] = [
        b"\xFF",
        b"\xC3",
        b"\xE2\x82",
        b"\xC0\xAF",
        b"\xED\xA0\x80",
        b"\xF4\x90",
    ];
    let mut rng = Rng::new("unicode-normalization-bytes", 4);
    for _ in 0..3_000 {
        // Valid segments between invalid bytes; a segment's normalization does not depend on
        // the bytes around it, because those are starters that never compose (with `Nmt`,
        // spaces).
        let (mut text, mut segments) = (Vec::new(), Vec::new());
        for _ in 0..rng.range(1, 5) {
            let seg: String = (0..rng.range(0, 8))
                .map(|_| abc[rng.range(0, abc.len() - 1)])
                .collect();
            text.extend_from_slice(seg.as_bytes());
            segments.push(Ok(seg));
            let j = junk[rng.range(0, junk.len() - 1)];
            text.extend_from_slice(j);
            segments.push(Err(j));
        }
        for form in FORMS {
            let want: Vec<u8> = segments
                .iter()
                .flat_map(|s| match s {
                    Ok(seg) => reference(form, seg).into_bytes(),
                    // With `Nmt`, each such byte is U+FFFD, which it makes a space.
                    Err(j) if form == UnicodeForm::NmtNfkc => vec![b' '; j.len()],
                    Err(j) => j.to_vec(),
                })
                .collect();
            assert_eq!(ours(form, &text), want, "{form:?} {text:?}");
            assert_eq!(streamed(form, &text, 3), want, "{form:?} {text:?} streamed");
        }
    }
}

#[test]
fn a_unit_longer_than_the_buffer_says_how_much_it_needs() {
    let text = format!("e{}", "\u{0301}\u{0316}".repeat(100));
    for form in FORMS {
        let want = ours(form, text.as_bytes());
        let err = normalize(form, text.as_bytes(), true, &mut [0u8; 64]).unwrap_err();
        assert_eq!(
            err,
            NormalizeError::UnitTooLong {
                offset: 0,
                len: text.len(),
                needed: want.len()
            },
            "{form:?}"
        );
        // Behind a drained prefix the same unit is a full buffer, not an error.
        let prefixed = format!("abc{text}");
        assert_eq!(
            normalize(form, prefixed.as_bytes(), true, &mut [0u8; 64]).unwrap_err(),
            NormalizeError::OutputFull {
                consumed: 3,
                written: 3
            }
        );
    }
}
