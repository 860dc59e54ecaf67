//! WordPiece against the reference library itself: Hugging Face `tokenizers` (the Rust crate,
//! the code the Python package runs) loads the same `tokenizer.json` as picobpe's import, and
//! both encode every Unicode scalar value in a few contexts, seeded random strings mixing
//! scripts, accents, punctuation, whitespace and controls, and the committed corpus texts.
//! Zero differences allowed.

use picobpe::{Specials, WpTokenizer};
use picobpe_model::wordpiece::{import_tokenizer_json, WpTableData};
use picobpe_tests::check::Rng;
use picobpe_tests::paths;

struct Pair {
    name: &'static str,
    ours: WpTokenizer<'static>,
    reference: tokenizers::Tokenizer,
}

fn pair(name: &'static str) -> Pair {
    let path = paths::fixtures()
        .join("wordpiece")
        .join(name)
        .join("tokenizer.json");
    let json = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let file = picobpe_model::TokenizerJson::parse(&json).expect("a tokenizer.json");
    let model = import_tokenizer_json(&file).expect("import").model;
    let tables = WpTableData::new(&model).expect("tables").to_tables();
    let mut reference = tokenizers::Tokenizer::from_bytes(&json).expect("tokenizers loads it");
    reference.with_padding(None);
    reference.with_truncation(None).expect("no truncation");
    Pair {
        name,
        ours: WpTokenizer::new(tables),
        reference,
    }
}

impl Pair {
    fn ours(&self, text: &str) -> Vec<u32> {
        let mut out = vec![0u32; 4 * text.len() + 8];
        let n = self
            .ours
            .encode(text.as_bytes(), &mut out, Specials::All)
            .expect("encode");
        out.truncate(n);
        out
    }

    fn reference(&self, text: &str) -> Vec<u32> {
        self.reference
            .encode(text, false)
            .expect("tokenizers encodes")
            .get_ids()
            .to_vec()
    }

    /// Compare on every text; panic with the first few differences.
    fn check(&self, label: &str, texts: impl Iterator<Item = String>) {
        let (mut n, mut failed) = (0, Vec::new());
        for text in texts {
            n += 1;
            let (want, got) = (self.reference(&text), self.ours(&text));
            if want != got && failed.len() < 8 {
                failed.push(format!("{text:?}: want {want:?}, got {got:?}"));
            }
        }
        assert!(
            failed.is_empty(),
            "{} {label}: differences in {n} texts, first:\n{}",
            self.name,
            failed.join("\n")
        );
        eprintln!("{} {label}: {n} texts, 0 differences", self.name);
    }
}

/// Every scalar value alone, inside a word, between words, after a capital, doubled.
fn every_scalar(p: &Pair) {
    let texts = (0..0x11_0000u32)
        .filter_map(char::from_u32)
        .map(|c| format!("{c} a{c}b Xy{c}{c}z. É{c}"));
    p.check("every scalar value", texts);
}

/// Random strings from a pool of characters that exercise every rule.
fn random(p: &Pair, seed: u64, count: usize) {
    const POOL: &[&str] = &[
        "a",
        "b",
        "Z",
        "É",
        "é",
        "e\u{301}",
        "ß",
        "İ",
        "Σ",
        "ς",
        "ﬁ",
        "Å",
        "ǅ",
        "Ω",
        "ķ",
        "ø",
        "Ł",
        "中",
        "国",
        "語",
        "豈",
        "に",
        "ほ",
        "ン",
        "한",
        "국",
        "ㄱ",
        "ก",
        "ी",
        "क",
        "\u{94d}",
        "ا",
        "ل",
        "б",
        "Ж",
        "1",
        "٣",
        "½",
        ".",
        ",",
        "!",
        "?",
        "'",
        "\"",
        "-",
        "—",
        "«",
        "»",
        "(",
        ")",
        "#",
        "##",
        "@",
        "$",
        "€",
        "🙂",
        "👍🏽",
        " ",
        "  ",
        "\t",
        "\n",
        "\r\n",
        "\u{a0}",
        "\u{3000}",
        "\u{200b}",
        "\u{feff}",
        "\u{0}",
        "\u{fffd}",
        "\u{7f}",
        "\u{85}",
        "\u{e000}",
        "[CLS]",
        "[SEP]",
        "[MASK]",
        "[cls]",
        "un",
        "##able",
        "ing",
        "the",
        "hello",
        "world",
        "Straße",
        "naïve",
        "Ångström",
        "ǈubljana",
        "ﬀ",
        "ǰ",
        "\u{1d165}",
        "\u{344}",
        "ྵ",
    ];
    let mut rng = Rng::new("wordpiece", seed);
    let texts = (0..count).map(move |_| {
        let n = rng.range(1, 24);
        (0..n)
            .map(|_| POOL[rng.range(0, POOL.len() - 1)])
            .collect::<String>()
    });
    p.check("random strings", texts);
}

/// The committed corpus texts, in 4 KiB slices at character boundaries.
fn corpora(p: &Pair) {
    let dir = paths::vectors().join("texts");
    let mut texts = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("texts") {
        let text = std::fs::read_to_string(entry.expect("entry").path()).expect("UTF-8 text");
        let mut rest = text.as_str();
        while !rest.is_empty() {
            let mut cut = rest.len().min(4096);
            while !rest.is_char_boundary(cut) {
                cut -= 1;
            }
            texts.push(rest[..cut].to_owned());
            rest = &rest[cut..];
        }
    }
    p.check("corpus texts", texts.into_iter());
}

#[test]
fn minilm_uncased_every_scalar_value() {
    every_scalar(&pair("minilm-uncased"));
}

#[test]
fn minilm_uncased_random_strings() {
    random(&pair("minilm-uncased"), 1, 50_000);
}

#[test]
fn minilm_uncased_corpora() {
    corpora(&pair("minilm-uncased"));
}

#[test]
fn bert_cased_every_scalar_value() {
    every_scalar(&pair("bert-cased-8k"));
}

#[test]
fn bert_cased_random_strings() {
    random(&pair("bert-cased-8k"), 2, 50_000);
}
