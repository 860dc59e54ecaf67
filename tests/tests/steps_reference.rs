//! The core's normalizer `Sequence`s of character steps ([`Steps`]: ALBERT's and XLNet's
//! quote pairs, `NFKD`, `StripAccents`, `Lowercase`, then `Precompiled`; the guides' `NFD` +
//! `Lowercase` + `StripAccents`) against `tokenizers`' own normalizers (the Rust crate, the
//! code the Python package runs) in the same `Sequence`, with a real SentencePiece character
//! map (`nmt_nfkc_cf`). Every Unicode scalar value in the contexts where the steps and the
//! cluster rules act, seeded random strings from characters of every class, and the contract
//! of a full buffer and of input that may go on; then the Python wheel's `Lowercase` and
//! `StripAccents` (whose Rust may carry another Unicode version than ours) on every scalar
//! value, from `fixtures/metaspace/steps_scalars.json.gz`. Zero differences allowed.

use picobpe::normalizer::{steps_normalize, Decompose, NormalizeError, Steps};
use picobpe::sentencepiece::CharsMap;
use picobpe_tests::check::Rng;
use picobpe_tests::sp::{self, SpSource};
use picobpe_tests::steps::{fffd_per_byte, normalize as reference};
use tokenizers::normalizers::utils::Sequence;

/// The model whose character map `Precompiled` steps use (`nmt_nfkc_cf`).
const MAP_MODEL: &str = "nfkc-ug";

/// The sequences checked: a name, the steps.
fn configurations() -> Vec<(&'static str, Steps)> {
    let albert = Steps {
        quotes: true,
        decompose: Some(Decompose::Compatibility),
        strip_accents: true,
        lowercase: true,
        lowercase_first: false,
        precompiled: true,
        fffd_per_subpart: false,
    };
    vec![
        ("albert", albert),
        (
            "xlnet",
            Steps {
                lowercase: false,
                ..albert
            },
        ),
        (
            "albert-keep-accents",
            Steps {
                decompose: None,
                strip_accents: false,
                ..albert
            },
        ),
        (
            "nfd-lowercase-strip",
            Steps {
                quotes: false,
                decompose: Some(Decompose::Canonical),
                lowercase_first: true,
                precompiled: false,
                ..albert
            },
        ),
        (
            "nfkd-strip-lowercase",
            Steps {
                quotes: false,
                precompiled: false,
                ..albert
            },
        ),
        (
            "lowercase-strip",
            Steps {
                lowercase: true,
                strip_accents: true,
                lowercase_first: true,
                ..Steps::NONE
            },
        ),
        (
            "strip-lowercase",
            Steps {
                lowercase: true,
                strip_accents: true,
                ..Steps::NONE
            },
        ),
        (
            "lowercase",
            Steps {
                lowercase: true,
                ..Steps::NONE
            },
        ),
        (
            "strip-accents",
            Steps {
                strip_accents: true,
                ..Steps::NONE
            },
        ),
    ]
}

/// `tokenizers`' `Sequence` for `steps`, over the map of [`MAP_MODEL`].
fn reference_sequence(steps: Steps) -> Sequence {
    let blob = sp::model(MAP_MODEL, SpSource::ModelProto).charsmap;
    picobpe_tests::steps::sequence(steps, &blob)
}

fn ours(steps: Steps, map: CharsMap<'_>, text: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; 64 * text.len() + 16];
    let p = steps_normalize(steps, map, text, true, &mut out).expect("room enough");
    assert_eq!(p.consumed, text.len());
    out.truncate(p.written);
    out
}

fn check(label: &str, texts: &(dyn Fn() -> Box<dyn Iterator<Item = String>> + Sync)) {
    let map = sp::tables(MAP_MODEL, SpSource::Compact).charsmap;
    // One thread per configuration: the scalar-value sweep is the suite's longest test.
    std::thread::scope(|scope| {
        for (name, steps) in configurations() {
            scope.spawn(move || {
                assert!(steps.is_exact(), "{name}");
                let seq = reference_sequence(steps);
                let (mut n, mut failed) = (0usize, Vec::new());
                for text in texts() {
                    n += 1;
                    let want = reference(&seq, &text);
                    let got = ours(steps, map, text.as_bytes());
                    if got != want.as_bytes() && failed.len() < 10 {
                        let got = String::from_utf8_lossy(&got).into_owned();
                        failed.push(format!("{text:?} -> {want:?}, ours {got:?}"));
                    }
                }
                assert!(
                    failed.is_empty(),
                    "{label} {name}: {} of {n} differ: {failed:#?}",
                    failed.len()
                );
            });
        }
    });
}

/// Characters every step and cluster rule acts on.
const ALPHABET: &[char] = &[
    'a',
    'A',
    ' ',
    '`',
    '\'',
    '"',
    '\r',
    '\n',
    '\t',
    '\u{300}',
    '\u{301}',
    '\u{308}',
    '\u{345}',
    '\u{903}',
    '\u{20DD}',
    '\u{200D}',
    '\u{600}',
    '\u{130}',
    '\u{131}',
    'Σ',
    'ς',
    'ß',
    '\u{1E9E}',
    'K',
    '\u{212A}',
    'Å',
    '\u{2126}',
    '\u{1F1E6}',
    '\u{1100}',
    '\u{1161}',
    '\u{11A8}',
    '\u{AC00}',
    '\u{1F44D}',
    '\u{1F3FB}',
    '\u{915}',
    '\u{94D}',
    '\u{FF21}',
    '\u{FF9E}',
    '\u{FF76}',
    '\u{2460}',
    '\u{3000}',
    '\u{FB01}',
    '\u{2075}',
    '\u{3392}',
    '\u{1FEF}',
    '\u{1FFD}',
    '\u{FFFD}',
    'é',
    'É',
    '\u{0344}',
    '\u{0F73}',
    '\u{23A}',
    '\u{10400}',
];

/// Contexts around one character where the steps and the cluster rules act.
fn contexts(c: char) -> Vec<String> {
    let ctx: [[&str; 2]; 9] = [
        ["", ""],
        ["a", ""],
        ["", "a\u{301}"],
        ["`", "`"],
        ["'", ""],
        ["\u{600}", ""],
        ["\u{1100}", "\u{1161}"],
        ["\u{1F1E6}", "\u{1F1E6}"],
        ["\u{FF21}", "\u{301}"],
    ];
    let mut v: Vec<String> = ctx.iter().map(|p| format!("{}{c}{}", p[0], p[1])).collect();
    v.push(format!("{c}{c}"));
    v.push(format!("{c}\u{301}\u{301}"));
    v
}

#[test]
fn steps_match_tokenizers_on_every_scalar_value() {
    // Every scalar value alone and inside a cluster; every 17th in every context.
    let step = if cfg!(debug_assertions) { 7 } else { 1 };
    check("every scalar", &|| {
        Box::new(
            (0..=0x10FFFFu32)
                .step_by(step)
                .filter_map(char::from_u32)
                .flat_map(|c| {
                    let some = [
                        format!("{c}"),
                        format!("a{c}\u{301}"),
                        format!("\u{FF21}{c}\u{301}"),
                    ];
                    let all = if u32::from(c) % 17 == 0 {
                        contexts(c)
                    } else {
                        Vec::new()
                    };
                    some.into_iter().chain(all)
                }),
        )
    });
}

#[test]
fn steps_match_tokenizers_on_random_strings() {
    check("random", &|| {
        let mut rng = Rng::new("steps", 3);
        Box::new((0..30_000).map(move |_| {
            let len = rng.range(1, 16);
            (0..len)
                .map(|_| ALPHABET[rng.range(0, ALPHABET.len() - 1)])
                .collect::<String>()
        }))
    });
}

#[test]
fn long_clusters_need_no_buffer() {
    check("long", &|| {
        Box::new(
            [
                format!("a{}", "\u{301}".repeat(500)),
                "\u{1100}".repeat(400),
                format!("x{}y", "\u{200D}".repeat(300)),
                "\u{1F1E6}".repeat(301),
                format!("\u{FF21}{}", "\u{20DD}".repeat(200)),
                "`".repeat(501),
                "'`".repeat(100),
            ]
            .into_iter(),
        )
    });
}

/// Normalizes `text` through a buffer of `size` bytes, draining it and resuming after each
/// full one, and feeding the input `chunk` bytes at a time (`last` false until the end).
fn drained(steps: Steps, map: CharsMap<'_>, text: &[u8], size: usize, chunk: usize) -> Vec<u8> {
    let (mut at, mut got) = (0usize, Vec::new());
    let mut buf = vec![0u8; size];
    let mut avail = chunk.min(text.len());
    loop {
        let last = avail == text.len();
        match steps_normalize(steps, map, &text[at..avail], last, &mut buf) {
            Ok(p) => {
                got.extend_from_slice(&buf[..p.written]);
                at += p.consumed;
                if last {
                    assert_eq!(at, text.len());
                    return got;
                }
                avail = (avail + chunk).min(text.len());
            }
            Err(NormalizeError::OutputFull { consumed, written }) => {
                got.extend_from_slice(&buf[..written]);
                at += consumed;
            }
            Err(NormalizeError::UnitTooLong { needed, .. }) => {
                assert!(needed > buf.len());
                buf = vec![0u8; needed];
            }
        }
    }
}

#[test]
fn a_full_buffer_or_input_that_may_go_on_gives_the_one_shot_bytes() {
    let map = sp::tables(MAP_MODEL, SpSource::Compact).charsmap;
    let text = "``Ｈｅｌｌｏ'' ＩＳＴＡＮＢＵＬ İ é\u{301}ｶﾞ①\r\n\u{3000}x\u{308}\u{308}ﬁ 🇯🇵 ``a`"
        .as_bytes();
    for (name, steps) in configurations() {
        let whole = ours(steps, map, text);
        for size in [1, 2, 3, 5, 8, 13, whole.len() + 1] {
            for chunk in [1, 2, 3, 7, text.len()] {
                let got = drained(steps, map, text, size, chunk);
                assert_eq!(got, whole, "{name}: buffer {size}, chunks of {chunk}");
            }
        }
    }
}

#[test]
fn bytes_that_are_not_utf8_are_each_one_replacement_character() {
    let map = sp::tables(MAP_MODEL, SpSource::Compact).charsmap;
    for (name, steps) in configurations() {
        let seq = reference_sequence(steps);
        for bytes in [
            &b"a\xffb"[..],
            b"\xe2\x82",
            b"`\x80`",
            b"\xc3\xa9\xcc",
            b"\xf0\x9f\x91",
        ] {
            // One U+FFFD per byte outside a well-formed sequence.
            let per_byte = fffd_per_byte(bytes);
            let want = reference(&seq, &per_byte);
            assert_eq!(ours(steps, map, bytes), want.as_bytes(), "{name} {bytes:?}");
        }
    }
}

/// What the Python wheel's `Lowercase` and `StripAccents` make of every scalar value alone
/// (`tests/scripts/gen_metaspace_vectors.py`), against the core's steps.
#[test]
fn lowercase_and_strip_accents_match_the_python_wheel_on_every_scalar_value() {
    use std::io::Read as _;
    let path = picobpe_tests::paths::fixtures().join("metaspace/steps_scalars.json.gz");
    let mut json = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&path).expect("fixture"))
        .read_to_string(&mut json)
        .expect("gzip");
    let v: serde_json::Value = serde_json::from_str(&json).expect("json");
    let lowered = v["lowercase"].as_object().expect("lowercase");
    let stripped: std::collections::HashSet<u32> = v["strip_accents"]
        .as_array()
        .expect("strip_accents")
        .iter()
        .map(|n| n.as_u64().expect("code point") as u32)
        .collect();
    assert!(lowered.len() > 1000 && stripped.len() > 1000);
    let map = sp::tables(MAP_MODEL, SpSource::Compact).charsmap;
    let lower = Steps {
        lowercase: true,
        ..Steps::NONE
    };
    let strip = Steps {
        strip_accents: true,
        ..Steps::NONE
    };
    let mut failed = Vec::new();
    for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
        let alone = c.to_string();
        let want = match lowered.get(&format!("{:X}", u32::from(c))) {
            Some(s) => s.as_str().expect("string").to_owned(),
            None => alone.clone(),
        };
        if ours(lower, map, alone.as_bytes()) != want.as_bytes() {
            failed.push(format!("Lowercase U+{:04X}", u32::from(c)));
        }
        let want: &[u8] = if stripped.contains(&u32::from(c)) {
            b""
        } else {
            alone.as_bytes()
        };
        if ours(strip, map, alone.as_bytes()) != want {
            failed.push(format!("StripAccents U+{:04X}", u32::from(c)));
        }
    }
    assert!(
        failed.is_empty(),
        "{} differ: {:?}",
        failed.len(),
        &failed[..failed.len().min(20)]
    );
}
