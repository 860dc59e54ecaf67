//! The committed reference data covers what the acceptance criteria name, and the committed
//! model copies are the shared originals (when `../shared/data` is present).

use picobpe_tests::paths;
use picobpe_tests::vectors::{self, Encoding, Set};

#[test]
fn sets_cover_the_acceptance_inputs() {
    let fixtures = vectors::inputs(Set::Fixtures);
    let text = |name: &str| {
        fixtures
            .iter()
            .find(|i| i.name == name)
            .unwrap_or_else(|| panic!("fixture {name} missing"))
            .bytes
            .clone()
    };
    for name in ["address.txt", "german.txt", "tinystories_sample.txt"] {
        assert!(!text(name).is_empty(), "{name} is empty");
    }
    assert_eq!(
        text("special-mix"),
        "Héllò hôw <|endoftext|><|endoftext|> are ü? 🙃<|endoftext|>".as_bytes()
    );
    assert_eq!(text("empty"), b"");
    assert_eq!(text("one-char"), b"a");
    assert_eq!(text("one-emoji"), "🙃".as_bytes());

    let corpus: usize = vectors::inputs(Set::Corpus)
        .iter()
        .map(|i| i.bytes.len())
        .sum();
    assert!(
        corpus >= 1 << 20,
        "corpus set is {corpus} bytes, want >= 1 MiB"
    );

    let random = vectors::inputs(Set::Random);
    assert!(random.len() >= 10_000, "{} random strings", random.len());

    let invalid = vectors::inputs(Set::InvalidUtf8);
    assert!(invalid.len() >= 2_000);
    assert!(invalid
        .iter()
        .all(|i| std::str::from_utf8(&i.bytes).is_err()));
}

#[test]
fn every_encoding_has_every_set_from_the_same_tiktoken() {
    for encoding in Encoding::ALL {
        for set in Set::ALL {
            let v = vectors::load(encoding, set);
            assert_eq!(v.tiktoken, "0.14.0", "{} {}", encoding.name(), set.name());
            let standard = encoding.specials();
            if set == Set::DoubleSpecial {
                let extra: Vec<_> = v
                    .specials
                    .iter()
                    .filter(|s| !standard.contains(s))
                    .collect();
                assert_eq!(extra.len(), 1);
                assert_eq!(extra[0].0, "<|endoftext|><|endoftext|>");
            } else {
                assert_eq!(v.specials, standard, "{} {}", encoding.name(), set.name());
            }
            // A set whose two modes never differ would not test special handling.
            assert!(
                v.cases.iter().any(|c| c.all != c.ordinary),
                "{} {}: no case where specials matter",
                encoding.name(),
                set.name()
            );
        }
    }
}

#[test]
fn committed_models_equal_the_shared_originals() {
    let Some(_) = paths::shared_data() else {
        return;
    };
    for encoding in Encoding::ALL {
        let name = encoding.name();
        if let Some(original) = paths::shared_file(&format!("tiktoken/{name}.tiktoken")) {
            assert!(
                encoding.rank_file() == std::fs::read(original).unwrap(),
                "{name} rank file differs from the shared one"
            );
        }
    }
    for file in ["gpt2_vocab.json", "gpt2_merges.txt"] {
        if let Some(original) = paths::shared_file(&format!("cs336/{file}")) {
            let ours = std::fs::read(paths::models().join(file)).unwrap();
            assert!(ours == std::fs::read(original).unwrap(), "{file} differs");
        }
    }
}
