//! A tiktoken rank file with a pre-tokenization regex none of the hand-rolled splitters
//! implements (`host-trainer import --tiktoken FILE --regex REGEX`): GPT-2's ranks and
//! `<|endoftext|>` with GPT-2's pattern taking one digit at a time. The regex is compiled
//! ([`picobpe_model::import::with_regex`]), written into a model file (format version 6) and
//! read back; every id of every text is tiktoken's own (`tests/scripts/gen_rank_regex_vectors.py`:
//! `tiktoken.Encoding` with that `pat_str`, `allowed_special="all"`), one shot, resumed through
//! small buffers, streamed in random chunks and counted.

use picobpe::{Specials, StreamEncoder, Tokenizer};
use picobpe_model::{AnyModel, LiveTables, TemplateData};
use picobpe_tests::check::{self, Rng};
use picobpe_tests::{paths, through_model_file};

/// The vectors' manifest.
fn manifest() -> serde_json::Value {
    let path = paths::fixtures().join("rank_regex/MANIFEST.json");
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The regex the vectors were made with.
fn pattern() -> String {
    manifest()["pattern"].as_str().unwrap().to_owned()
}

/// The model the vectors were made for, through a model file.
fn tokenizer() -> Tokenizer<'static> {
    let dir = paths::fixtures();
    let manifest = manifest();
    let ranks = std::fs::read(dir.join(manifest["rank_file"]["file"].as_str().unwrap())).unwrap();
    let specials: Vec<(String, u32)> = manifest["specials"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(text, id)| (text.clone(), id.as_u64().unwrap() as u32))
        .collect();
    let pattern = manifest["pattern"].as_str().unwrap();
    let model =
        picobpe_model::import::tiktoken(&ranks, picobpe_model::PatternKind::Gpt2, &specials)
            .unwrap();
    let model = picobpe_model::import::with_regex(model, pattern).unwrap();
    assert_eq!(
        model.splits,
        [picobpe_model::Split::isolated(pattern)],
        "the regex is compiled, not a hand-rolled one"
    );
    let model = AnyModel::BytePair(model);
    let live = through_model_file("rank-regex", |p| model.write(p, &TemplateData::default()));
    let LiveTables::BytePair(tables) = live else {
        panic!("not byte-level tables")
    };
    Tokenizer::new(tables)
}

/// The longest piece `fancy-regex` splits `input` into (tiktoken's engine).
fn longest_piece(regex: &fancy_regex::Regex, input: &[u8]) -> usize {
    let text = std::str::from_utf8(input).expect("the vectors hold text");
    regex
        .find_iter(text)
        .map(|m| m.expect("match").as_str().len())
        .max()
        .unwrap_or(0)
}

#[test]
fn ids_are_tiktokens() {
    let tok = tokenizer();
    let regex = fancy_regex::Regex::new(&pattern()).expect("the pattern");
    let mut rng = Rng::new("rank-regex", 1);
    let (mut checked, mut with_special) = (0, 0);
    let mut failed = Vec::new();
    for set in ["fixtures", "random"] {
        for case in picobpe_tests::sp::load("rank-regex-digits", set) {
            let input = &case.input;
            let mut stream: StreamEncoder<Tokenizer<'static>, 4096, 8192> =
                StreamEncoder::new(tok, Specials::All);
            let one_shot = check::encode(&tok, input, Specials::All).map_err(|e| e.to_string());
            let resumed = check::encode_resumed(&tok, input, Specials::All, &mut rng, &mut []);
            let mut got = vec![("one shot", one_shot), ("resumed", resumed)];
            // A stream needs each piece (with look-ahead) to fit its input buffer.
            if longest_piece(&regex, input) < 4_000 {
                let streamed = check::encode_streamed(&mut stream, input, &mut rng);
                got.push(("streamed", streamed.map_err(|e| e.to_string())));
            }
            for (how, ids) in got {
                if ids.as_ref() != Ok(&case.ids) && failed.len() < 8 {
                    failed.push(format!("{set} {} {how}: {ids:?}", case.name));
                }
            }
            let counted = check::count(&tok, input, Specials::All);
            if counted != Ok(case.ids.len()) && failed.len() < 8 {
                failed.push(format!("{set} {} count: {counted:?}", case.name));
            }
            with_special += usize::from(case.ids.contains(&50_256));
            checked += 1;
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    assert!(checked > 2_000, "{checked} records");
    assert!(with_special > 0, "no record holds the special token");
}
