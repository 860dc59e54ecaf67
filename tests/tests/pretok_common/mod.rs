//! Shared harness of the pre-tokenizer differential tests (`pretok_gpt2.rs`, `pretok_cl100k.rs`,
//! `pretok_o200k.rs`): picobpe's hand-rolled splitters against `fancy-regex` with the reference
//! patterns, on committed fixtures, the shared corpora when present, every Unicode scalar value,
//! seeded random strings, invalid UTF-8 and streamed prefixes.

#![allow(dead_code)]

use picobpe::pretok::{next_piece, CompiledPattern, Pattern, Step};
use picobpe_model::PatternKind;
use std::path::PathBuf;

/// A splitter under test and its reference regex.
pub struct Harness {
    pub pattern: Pattern,
    pub re: fancy_regex::Regex,
    /// When set, the splitter under test is this automaton, compiled from the pattern's
    /// reference regex, instead of the hand-rolled splitter.
    pub compiled: Option<CompiledPattern<'static>>,
}

impl Harness {
    pub fn new(pattern: Pattern) -> Harness {
        let src = PatternKind::from(pattern).reference_regex();
        Harness {
            pattern,
            re: fancy_regex::Regex::new(src).expect("reference pattern compiles"),
            compiled: None,
        }
    }

    /// The pattern's reference regex compiled by `picobpe_model::compile_pattern` and walked
    /// by `CompiledPattern`, against the same reference.
    pub fn compiled(pattern: Pattern) -> Harness {
        let src = PatternKind::from(pattern).reference_regex();
        let words = picobpe_model::compile_pattern(src).expect("pattern compiles");
        let words: &'static [u32] = Box::leak(words.into_boxed_slice());
        Harness {
            compiled: Some(CompiledPattern::new(words).expect("compiled pattern checks")),
            ..Harness::new(pattern)
        }
    }

    /// The splitter under test.
    pub fn next(&self, text: &[u8], pos: usize, is_final: bool) -> Step {
        match &self.compiled {
            Some(c) => c.next_piece(text, pos, is_final),
            None => next_piece(self.pattern, text, pos, is_final),
        }
    }

    /// Piece ends by fancy-regex `find_iter`; panics if the matches do not tile the text.
    pub fn reference(&self, s: &str) -> Vec<usize> {
        let mut ends = Vec::new();
        let mut pos = 0;
        for m in self.re.find_iter(s) {
            let m = m.expect("fancy-regex match");
            assert_eq!(m.start(), pos, "reference leaves a gap at {pos} in {s:?}");
            assert!(m.end() > m.start(), "reference empty match in {s:?}");
            pos = m.end();
            ends.push(pos);
        }
        assert_eq!(pos, s.len(), "reference does not cover {s:?}");
        ends
    }

    /// Piece ends by `next_piece` with `is_final == true`, cross-checked with `pieces`.
    pub fn ours(&self, text: &[u8]) -> Vec<usize> {
        let mut ends = Vec::new();
        let mut pos = 0;
        while pos < text.len() {
            match self.next(text, pos, true) {
                Step::Piece { end } => {
                    assert!(pos < end && end <= text.len(), "bad piece {pos}..{end}");
                    pos = end;
                    ends.push(end);
                }
                Step::NeedMore => panic!("NeedMore with is_final at {pos} in {:?}", lossy(text)),
                Step::Skip { .. } => unreachable!("the harness's patterns drop nothing"),
            }
        }
        if self.compiled.is_some() {
            return ends;
        }
        let mut it_pos = 0;
        let mut n = 0;
        for p in picobpe::pretok::pieces(self.pattern, text) {
            it_pos += p.len();
            assert_eq!(
                Some(&it_pos),
                ends.get(n),
                "pieces() disagrees with next_piece"
            );
            n += 1;
        }
        assert_eq!(n, ends.len(), "pieces() count");
        ends
    }

    /// Compares the two splits of `s`; the error shows the input and both splits.
    pub fn check(&self, s: &str) -> Result<(), String> {
        let want = self.reference(s);
        let got = self.ours(s.as_bytes());
        if want == got {
            return Ok(());
        }
        Err(describe(s.as_bytes(), &want, &got))
    }

    /// Like [`check`](Self::check) but for the bytes of arbitrary (possibly invalid) input
    /// against the given reference ends.
    pub fn check_ends(&self, text: &[u8], want: &[usize]) -> Result<(), String> {
        let got = self.ours(text);
        if want == got {
            return Ok(());
        }
        Err(describe(text, want, &got))
    }
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The pieces of `text` given their ends.
pub fn split<'a>(text: &'a [u8], ends: &[usize]) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    let mut s = 0;
    for &e in ends {
        out.push(&text[s..e]);
        s = e;
    }
    out
}

/// Mismatch report: whole input and splits when short, else a window around the first
/// differing piece.
pub fn describe(text: &[u8], want: &[usize], got: &[usize]) -> String {
    let show = |ends: &[usize], from: usize, to: usize| -> String {
        let mut s = String::new();
        let mut start = if from == 0 { 0 } else { ends[from - 1] };
        for &e in &ends[from..to.min(ends.len())] {
            s.push_str(&format!("{:?} ", lossy(&text[start..e])));
            start = e;
        }
        s
    };
    let first = want.iter().zip(got).take_while(|(a, b)| a == b).count();
    if text.len() <= 400 {
        return format!(
            "input {:?} (bytes {:02X?})\n  fancy-regex: {}\n  picobpe:     {}",
            lossy(text),
            text,
            show(want, 0, want.len()),
            show(got, 0, got.len())
        );
    }
    let from = first.saturating_sub(3);
    let at = if first == 0 { 0 } else { want[first - 1] };
    format!(
        "{} bytes; first difference at piece {first} (byte {at})\n  fancy-regex: {}\n  picobpe:     {}",
        text.len(),
        show(want, from, first + 4),
        show(got, from, first + 4)
    )
}

/// `tests/fixtures/pretok/*.txt`, sorted.
pub fn fixtures() -> Vec<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/pretok");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/fixtures/pretok")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    files.sort();
    assert!(files.len() >= 10, "fixtures missing in {}", dir.display());
    files
        .into_iter()
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect()
}

/// `../shared/data` (or `$PICOBPE_SHARED_DATA`) when present.
pub fn shared_data() -> Option<PathBuf> {
    let dir = std::env::var_os("PICOBPE_SHARED_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data"));
    dir.is_dir().then_some(dir)
}

/// The shared texts: CS336 fixtures (`*.txt`, `corpus.en`), every multilingual file, and the first `english_bytes` of
/// the English corpus (cut at a line end). Empty when `../shared/data` is absent.
pub fn shared_texts(english_bytes: usize) -> Vec<(String, String)> {
    let Some(dir) = shared_data() else {
        eprintln!("NOTE: ../shared/data absent: shared-corpus differential run skipped");
        return Vec::new();
    };
    let mut out = Vec::new();
    for sub in ["cs336", "corpus/multi"] {
        let mut files: Vec<_> = std::fs::read_dir(dir.join(sub))
            .map(|rd| rd.map(|e| e.unwrap().path()).collect())
            .unwrap_or_default();
        files.retain(|p: &PathBuf| p.extension().is_some_and(|x| x == "txt" || x == "en"));
        files.sort();
        for p in files {
            out.push((
                format!("{sub}/{}", p.file_name().unwrap().to_string_lossy()),
                std::fs::read_to_string(&p).unwrap(),
            ));
        }
    }
    if let Ok(eng) = std::fs::read(dir.join("corpus/english.txt")) {
        let cut = eng[..english_bytes.min(eng.len())]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        out.push((
            "corpus/english.txt (head)".into(),
            String::from_utf8(eng[..cut].to_vec()).unwrap(),
        ));
    }
    out
}

/// xorshift64* — a tiny seeded PRNG for reproducible random inputs.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (((self.next() >> 32) * n as u64) >> 32) as usize
    }
    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }
}

/// Fragments the random strings are built from: every class the patterns distinguish, the
/// characters they single out (`'`, ` `, `\r`, `\n`, `/`), case-folded contractions, and runs.
const FRAGMENTS: &[&str] = &[
    // ASCII words, numbers, punctuation
    "a",
    "b",
    "z",
    "A",
    "Z",
    "the",
    "The",
    "HELLO",
    "World",
    "x",
    "0",
    "1",
    "42",
    "12345",
    "3.14",
    ".",
    ",",
    "!",
    "?",
    "-",
    "(",
    ")",
    "\"",
    "/",
    "//",
    "\\",
    "@",
    "#",
    "$",
    "%",
    "&",
    "*",
    "_",
    "=",
    "+",
    "<",
    ">",
    "|",
    "~",
    "`",
    "^",
    "[",
    "]",
    "{",
    "}",
    ":",
    ";",
    "...",
    "--",
    // apostrophes and contractions (ASCII and case-folded, complete and partial)
    "'",
    "'",
    "''",
    "'s",
    "'t",
    "'re",
    "'ve",
    "'m",
    "'ll",
    "'d",
    "'S",
    "'T",
    "'RE",
    "'Ve",
    "'M",
    "'LL",
    "'lL",
    "'D",
    "'l",
    "'r",
    "'v",
    "'x",
    "'ſ",
    "'K",
    "'\u{212A}",
    "ſ",
    "n't",
    "'em",
    "\u{2019}",
    "\u{2019}s",
    "'e",
    "'1",
    "' ",
    // whitespace
    " ",
    " ",
    " ",
    "  ",
    "   ",
    "    ",
    "\t",
    "\t\t",
    "\n",
    "\n",
    "\n\n",
    "\r",
    "\r\n",
    "\r\n\r\n",
    " \n",
    "\n ",
    " \r\n ",
    "\u{0B}",
    "\u{0C}",
    "\u{85}",
    "\u{A0}",
    "\u{1680}",
    "\u{2000}",
    "\u{2009}",
    "\u{200A}",
    "\u{2028}",
    "\u{2029}",
    "\u{202F}",
    "\u{205F}",
    "\u{3000}",
    "\u{200B}",
    "\u{FEFF}",
    "\u{180E}",
    " \u{A0} ",
    "\u{3000}\u{3000}",
    // Latin with diacritics, other cases
    "é",
    "É",
    "ü",
    "ß",
    "ẞ",
    "Ç",
    "ñ",
    "Héllò",
    "hôw",
    "ǅ",
    "ǈ",
    "ǋ",
    "ᾈ",
    "ʰ",
    "ˆ",
    "ª",
    "º",
    "ı",
    "İ",
    "ﬁ",
    "e\u{301}",
    "E\u{301}",
    "a\u{308}\u{301}",
    // Greek, Cyrillic
    "α",
    "Ω",
    "λόγος",
    "ΛΌΓΟΣ",
    "ᾶ",
    "привет",
    "ПРИВЕТ",
    "Ёж",
    // CJK, kana, Hangul
    "中",
    "文字",
    "红楼梦",
    "あ",
    "ひらがな",
    "カタカナ",
    "ー",
    "々",
    "한국어",
    "ㄱ",
    // RTL, Indic, marks
    "ا",
    "مرحبا",
    "\u{64E}",
    "\u{650}",
    "٣",
    "क",
    "कि",
    "\u{94D}",
    "\u{903}",
    "०",
    "\u{301}",
    "\u{20DD}",
    "\u{E0100}",
    "\u{E0061}",
    // numbers of all kinds
    "²",
    "½",
    "Ⅻ",
    "ⅻ",
    "①",
    "０",
    "１２",
    "𝟘",
    "٠١٢",
    "〇",
    "𐍁",
    // emoji and symbols
    "🙃",
    "😀",
    "👍🏽",
    "👨\u{200D}👩\u{200D}👧",
    "❤\u{FE0F}",
    "🇮🇸",
    "1\u{FE0F}\u{20E3}",
    "€",
    "©",
    "→",
    "∑",
    "♀\u{FE0F}",
    // astral letters, private use, unassigned
    "𝐀",
    "𝐚",
    "𝔄",
    "𠀀",
    "\u{E000}",
    "\u{F0000}",
    "\u{378}",
    "\u{10FFFF}",
];

/// A random scalar value from the whole range.
pub fn random_char(rng: &mut Rng) -> char {
    loop {
        let cp = match rng.below(4) {
            0 => rng.below(0x80) as u32,
            1 => rng.below(0x800) as u32,
            2 => rng.below(0x10000) as u32,
            _ => rng.below(0x11_0000) as u32,
        };
        if let Some(c) = char::from_u32(cp) {
            return c;
        }
    }
}

/// A random string of up to `max_frags` fragments.
pub fn random_string(rng: &mut Rng, max_frags: usize) -> String {
    let n = 1 + rng.below(max_frags);
    let mut s = String::new();
    for _ in 0..n {
        if rng.below(25) == 0 {
            s.push(random_char(rng));
        } else {
            s.push_str(rng.pick(FRAGMENTS));
        }
    }
    s
}

/// Byte-level mutations that make `s` invalid UTF-8 in every way Table 3-7 forbids.
const BAD: &[&[u8]] = &[
    b"\x80",
    b"\xBF",
    b"\xC0",
    b"\xC1",
    b"\xC0\xAF",
    b"\xC1\x81",
    b"\xC2",
    b"\xDF",
    b"\xE0",
    b"\xE0\x80",
    b"\xE0\x9F\xBF",
    b"\xE0\x83\x80",
    b"\xE0\xA0",
    b"\xE3\x80",
    b"\xED\xA0\x80",
    b"\xED\xBF\xBF",
    b"\xED\x9F",
    b"\xEF\xBF",
    b"\xF0",
    b"\xF0\x8F\xBF\xBF",
    b"\xF0\x90",
    b"\xF0\x9F\x99",
    b"\xF4\x90\x80\x80",
    b"\xF4\x8F\xBF",
    b"\xF5",
    b"\xF8\x88\x80\x80\x80",
    b"\xFE",
    b"\xFF",
    b"\x80\x80\x80",
    b"\xC5",
    b"\xE2\x80", // truncated `ſ`, truncated U+2028 / U+3000
];

/// Random bytes: valid fragments mixed with invalid sequences.
pub fn random_bytes(rng: &mut Rng, max_frags: usize) -> Vec<u8> {
    let n = 1 + rng.below(max_frags);
    let mut v = Vec::new();
    for _ in 0..n {
        match rng.below(6) {
            0 => v.extend_from_slice(rng.pick(BAD)),
            1 => v.push(rng.next() as u8),
            _ => {
                let f: &str = rng.pick(FRAGMENTS);
                if f.contains('\u{E000}') {
                    continue;
                }
                v.extend_from_slice(f.as_bytes());
            }
        }
    }
    v
}

/// Reference split of arbitrary bytes: each byte that `utf8_chunks` reports invalid becomes
/// U+E000 (a private-use "other" character), fancy-regex splits the result, and the offsets are
/// mapped back. Requires that `text` contains no U+E000 itself.
pub fn reference_bytes(h: &Harness, text: &[u8]) -> Vec<usize> {
    assert!(!String::from_utf8_lossy(text).contains('\u{E000}'));
    let mut s = String::new();
    // back[i] = original offset of byte offset i of `s` (at char boundaries).
    let mut back = Vec::new();
    let mut orig = 0;
    for chunk in text.utf8_chunks() {
        for c in chunk.valid().chars() {
            back.push(orig);
            back.extend(std::iter::repeat_n(usize::MAX, c.len_utf8() - 1));
            s.push(c);
            orig += c.len_utf8();
        }
        for _ in chunk.invalid() {
            back.push(orig);
            back.extend([usize::MAX; 2]);
            s.push('\u{E000}');
            orig += 1;
        }
    }
    back.push(orig);
    h.reference(&s).into_iter().map(|e| back[e]).collect()
}

/// Checks many strings, collecting up to 20 failures into one panic message.
pub fn check_all<I: IntoIterator<Item = String>>(h: &Harness, what: &str, inputs: I) -> usize {
    let mut n = 0;
    let mut failures = Vec::new();
    for s in inputs {
        n += 1;
        if let Err(e) = h.check(&s) {
            if failures.len() < 20 {
                failures.push(e);
            } else {
                break;
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{:?} {what}: {} failure(s) (first 20):\n{}",
        h.pattern,
        failures.len(),
        failures.join("\n")
    );
    n
}

/// Every scalar value alone and in contexts that exercise each alternative's boundaries.
pub fn every_scalar(h: &Harness) {
    const CONTEXTS: &[(&str, &str)] = &[
        ("", ""),
        ("a", "b"),
        (" ", "1"), // " {c}{c}1" via the doubling below
        ("'", ""),
        ("'", "e"),
        ("'l", ""),
        ("A", "'s"),
        ("  ", "x"),
        ("", "\n\n"),
        (" ", " "),
    ];
    let chars = (0..=0x10_FFFFu32).filter_map(char::from_u32);
    for (i, (pre, post)) in CONTEXTS.iter().enumerate() {
        let doubled = i == 2;
        let n = check_all(
            h,
            &format!("every scalar value in context {pre:?}..{post:?}"),
            chars.clone().map(|c| {
                if doubled {
                    format!("{pre}{c}{c}{post}")
                } else {
                    format!("{pre}{c}{post}")
                }
            }),
        );
        assert_eq!(n, 0x10_FFFF + 1 - 0x800);
    }
}

/// Random valid strings.
pub fn random_strings(h: &Harness, seed: u64, count: usize) {
    let mut rng = Rng::new(seed);
    let n = check_all(
        h,
        "random strings",
        (0..count).map(|_| random_string(&mut rng, 40)),
    );
    assert_eq!(n, count);
}

/// Fixtures (and the shared corpora when present), each file whole.
pub fn corpora(h: &Harness, english_bytes: usize) {
    let mut texts = fixtures();
    texts.extend(shared_texts(english_bytes));
    let mut total = 0;
    for (name, text) in &texts {
        total += text.len();
        if let Err(e) = h.check(text) {
            panic!("{:?} on {name}: {e}", h.pattern);
        }
    }
    eprintln!(
        "{:?}: {} texts, {total} bytes, zero differences",
        h.pattern,
        texts.len()
    );
}

/// Random invalid UTF-8 against the U+E000 substitution reference.
pub fn invalid_utf8(h: &Harness, seed: u64, count: usize) {
    let mut rng = Rng::new(seed);
    let mut texts = Vec::new();
    let mut invalid_seen = 0;
    for _ in 0..count {
        let text = random_bytes(&mut rng, 30);
        if String::from_utf8_lossy(&text).contains('\u{E000}') {
            continue; // random bytes happened to spell the substitute
        }
        if std::str::from_utf8(&text).is_err() {
            invalid_seen += 1;
        }
        texts.push(text);
    }
    check_all_bytes(h, "invalid UTF-8", texts);
    assert!(
        invalid_seen > count / 2,
        "generator made too few invalid inputs"
    );
}

/// Pieces of CJK runs: the characters and bytes around the ideograph block (U+4E00–U+9FFF,
/// which the splitters take 15 bytes at a time on x86_64): its edges, the Yijing symbols and
/// extension A just before it, Yi after it, kana, fullwidth punctuation, ASCII, spaces, and
/// the bytes of ideographs cut short or made ill-formed. Runs are long enough (up to 60 pieces)
/// for every alignment of a 16-byte step against the run's end.
const CJK_PIECES: &[&[u8]] = &[
    "中".as_bytes(),
    "文".as_bytes(),
    "\u{4E00}".as_bytes(),
    "\u{4E0A}".as_bytes(),
    "\u{4FFF}".as_bytes(),
    "\u{5000}".as_bytes(),
    "\u{8FFF}".as_bytes(),
    "\u{9000}".as_bytes(),
    "\u{9FFF}".as_bytes(),
    "\u{A000}".as_bytes(),
    "\u{4DFF}".as_bytes(),
    "\u{4DC0}".as_bytes(),
    "\u{4DBF}".as_bytes(),
    "\u{3400}".as_bytes(),
    "あ".as_bytes(),
    "ー".as_bytes(),
    "\u{3099}".as_bytes(),
    "，".as_bytes(),
    "。".as_bytes(),
    "\u{3000}".as_bytes(),
    "a".as_bytes(),
    "1".as_bytes(),
    " ".as_bytes(),
    "\n".as_bytes(),
    "'".as_bytes(),
    "é".as_bytes(),
    "🙃".as_bytes(),
    b"\xE4\xB8",
    b"\xE5",
    b"\xE9\xBF",
    b"\xE4\xB7\xBF",
    b"\xE5\xC0\x80",
    b"\xE5\x80\xC0",
    b"\xE5\x80\x80\x80",
    b"\xED\xA0\x80",
    b"\xBF",
];

/// Random CJK runs (see [`CJK_PIECES`]), mostly ideographs, valid and invalid, against the
/// reference (invalid bytes by the U+E000 substitution).
pub fn cjk_runs(h: &Harness, seed: u64, count: usize) {
    let mut rng = Rng::new(seed);
    let texts = (0..count).map(|_| {
        let n = 1 + rng.below(60);
        let mut text = Vec::new();
        for _ in 0..n {
            let piece = if rng.below(4) == 0 {
                rng.pick(CJK_PIECES)
            } else {
                rng.pick(&CJK_PIECES[..9])
            };
            text.extend_from_slice(piece);
        }
        text
    });
    check_all_bytes(h, "CJK runs", texts);
}

/// Checks many byte strings against [`reference_bytes`], collecting up to 20 failures into one
/// panic message (the byte-level [`check_all`]).
pub fn check_all_bytes<I: IntoIterator<Item = Vec<u8>>>(h: &Harness, what: &str, texts: I) {
    let mut failures = Vec::new();
    for text in texts {
        let want = reference_bytes(h, &text);
        if let Err(e) = h.check_ends(&text, &want) {
            failures.push(e);
            if failures.len() >= 20 {
                break;
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{:?} {what}:\n{}",
        h.pattern,
        failures.join("\n")
    );
}

/// Streaming: feed growing prefixes with `is_final == false` (then the whole text with `true`);
/// every piece returned must be the one-shot piece at that position.
pub fn streaming(h: &Harness, seed: u64, count: usize) {
    let mut rng = Rng::new(seed);
    let mut need_more = 0usize;
    for k in 0..count {
        let text = if k % 2 == 0 {
            random_string(&mut rng, 30).into_bytes()
        } else {
            random_bytes(&mut rng, 30)
        };
        let want = h.ours(&text);
        let mut got = Vec::new();
        let mut pos = 0;
        let mut avail = 0;
        while pos < text.len() {
            let is_final = avail == text.len() && rng.below(2) == 0;
            match h.next(&text[..avail], pos, is_final) {
                Step::Piece { end } => {
                    if want.get(got.len()) != Some(&end) {
                        panic!(
                            "{:?} streaming: prefix of {avail} bytes (final: {is_final}) gave piece {pos}..{end}\n{}",
                            h.pattern,
                            describe(&text, &want, &{
                                let mut g = got.clone();
                                g.push(end);
                                g
                            })
                        );
                    }
                    got.push(end);
                    pos = end;
                }
                Step::Skip { .. } => unreachable!("the harness's patterns drop nothing"),
                Step::NeedMore => {
                    assert!(!is_final, "NeedMore with is_final");
                    need_more += 1;
                    let step = if rng.below(4) == 0 { 16 } else { 3 };
                    avail = (avail + 1 + rng.below(step)).min(text.len());
                }
            }
        }
        assert_eq!(got, want);
    }
    assert!(
        need_more > count,
        "streaming test never starved the splitter"
    );
}

/// Continuations tried by [`streaming_precision`]: one of every class and of every character
/// the patterns single out.
const CONTINUATIONS: &[&str] = &[
    "a",
    "z",
    "A",
    "Z",
    "s",
    "S",
    "l",
    "L",
    "e",
    "E",
    "t",
    "r",
    "v",
    "m",
    "d",
    "ſ",
    "é",
    "É",
    "ǅ",
    "ʰ",
    "中",
    "α",
    "Ω",
    "я",
    "Я",
    "1",
    "٣",
    "½",
    " ",
    "  ",
    "\t",
    "\n",
    "\r",
    "\r\n",
    "\u{A0}",
    "\u{3000}",
    "\u{85}",
    "'",
    "''",
    ".",
    "/",
    "\u{301}",
    "\u{E0100}",
    "🙃",
    "\u{200D}",
    "x",
];

/// The streaming rule's other half: a `NeedMore` must be necessary. Whenever a non-final
/// prefix yields `NeedMore` at `pos`, some continuation (or the end of the input) must give a
/// different piece at `pos` than another one does. Exempt by the documented rule: prefixes that
/// end inside a truncated but so far well-formed UTF-8 sequence (a decision that reaches it is
/// always NeedMore, even when every completion would split alike).
pub fn streaming_precision(h: &Harness, seed: u64, count: usize) {
    let mut rng = Rng::new(seed);
    let mut checked = 0usize;
    let mut failures = Vec::new();
    for k in 0..count {
        let text = if k % 2 == 0 {
            random_string(&mut rng, 20).into_bytes()
        } else {
            random_bytes(&mut rng, 20)
        };
        for _ in 0..3 {
            let avail = rng.below(text.len() + 1);
            let prefix = &text[..avail];
            let mut pos = 0;
            while pos < prefix.len() {
                match h.next(prefix, pos, false) {
                    Step::Piece { end } => pos = end,
                    Step::NeedMore => break,
                    Step::Skip { .. } => unreachable!("the harness's patterns drop nothing"),
                }
            }
            let truncated_tail = prefix.utf8_chunks().last().is_some_and(|c| {
                !c.invalid().is_empty()
                    && std::str::from_utf8(c.invalid()).is_err_and(|e| e.error_len().is_none())
            });
            if pos >= prefix.len() || truncated_tail {
                continue;
            }
            checked += 1;
            let end_of = |t: &[u8]| match h.next(t, pos, true) {
                Step::Piece { end } => end,
                Step::NeedMore => usize::MAX,
                Step::Skip { .. } => unreachable!("the harness's patterns drop nothing"),
            };
            let e0 = end_of(prefix);
            let suffixes: Vec<Vec<u8>> = CONTINUATIONS
                .iter()
                .map(|c| c.as_bytes().to_vec())
                .collect();
            let mut justified = false;
            'outer: for x in &suffixes {
                for y in [&b""[..], b"a", b" ", b"e", b"l", b"\n"] {
                    let mut t = prefix.to_vec();
                    t.extend_from_slice(x);
                    t.extend_from_slice(y);
                    if end_of(&t) != e0 {
                        justified = true;
                        break 'outer;
                    }
                }
            }
            if !justified && failures.len() < 20 {
                failures.push(format!(
                    "NeedMore at {pos} in non-final {:?} ({:02X?}), but every continuation gives the piece {pos}..{e0}",
                    lossy(prefix),
                    prefix
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{:?} unnecessary NeedMore:\n{}",
        h.pattern,
        failures.join("\n")
    );
    assert!(
        checked > count / 2,
        "too few NeedMore cases checked: {checked}"
    );
}

/// Hand-derived expectations: each input's split (checked against fancy-regex too, so a wrong
/// expectation fails loudly rather than blessing the implementation).
pub fn expect_splits(h: &Harness, cases: &[(&str, &[&str])]) {
    for (input, want) in cases {
        let reference: Vec<&str> = split(input.as_bytes(), &h.reference(input))
            .into_iter()
            .map(|p| std::str::from_utf8(p).unwrap())
            .collect();
        assert_eq!(
            &reference, want,
            "{:?}: expectation disagrees with fancy-regex on {input:?}",
            h.pattern
        );
        let ours: Vec<&str> = split(input.as_bytes(), &h.ours(input.as_bytes()))
            .into_iter()
            .map(|p| std::str::from_utf8(p).unwrap())
            .collect();
        assert_eq!(&ours, want, "{:?} on {input:?}", h.pattern);
    }
}

/// Hand-derived streaming answers at position 0 of non-final texts: `Some(end)` = Piece.
pub fn expect_steps(h: &Harness, cases: &[(&[u8], Option<usize>)]) {
    for (text, want) in cases {
        let got = match h.next(text, 0, false) {
            Step::Piece { end } => Some(end),
            Step::NeedMore => None,
            Step::Skip { .. } => unreachable!("the harness's patterns drop nothing"),
        };
        assert_eq!(got, *want, "{:?} non-final {:?}", h.pattern, lossy(text));
    }
}
