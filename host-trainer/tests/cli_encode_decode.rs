//! `host-trainer encode` and `decode`: exact output format, specials, streaming across chunk
//! boundaries, and error exits with nothing on stdout.

mod cli_common;

use cli_common::{fails, gpt2_hf, gpt2_tiktoken, ok, scratch};
use picobpe::{Specials, Tokenizer};
use picobpe_model::{Model, PieceTable, TableData};

/// `tiktoken` 0.14 `gpt2` ids (computed with tiktoken from the same rank file, not by us).
const HELLO: &str = "Hello, 🌍! 你好!";
const HELLO_IDS: &str = "15496 11 12520 234 235 0 220 19526 254 25001 121 0\n";

#[test]
fn encode_matches_tiktoken_with_both_imports() {
    for model in [gpt2_tiktoken(), gpt2_hf()] {
        let out = ok(&["encode", "--model", model], HELLO.as_bytes());
        assert_eq!(String::from_utf8(out).unwrap(), HELLO_IDS);
    }
}

#[test]
fn specials_are_recognized_unless_ordinary() {
    let m = gpt2_tiktoken();
    // tiktoken: encode(s, allowed_special="all") and encode_ordinary(s).
    assert_eq!(
        ok(&["encode", "--model", m], b"a<|endoftext|>b"),
        b"64 50256 65\n"
    );
    assert_eq!(
        ok(&["encode", "--model", m, "--ordinary"], b"a<|endoftext|>b"),
        b"64 27 91 437 1659 5239 91 29 65\n"
    );
    assert_eq!(
        ok(
            &["encode", "--model", m],
            " \u{e9}t\u{e9} <|endoftext|><|endoftext|>".as_bytes()
        ),
        b"220 25125 2634 220 50256 50256\n"
    );
}

/// The same tiktoken ids as little-endian `u16`/`u32`, and `count` prints only their number;
/// the cache size does not change the ids.
#[test]
fn binary_formats_count_and_cache_sizes() {
    let m = gpt2_tiktoken();
    let ids: Vec<u32> = HELLO_IDS
        .split_whitespace()
        .map(|t| t.parse().unwrap())
        .collect();
    let u16le: Vec<u8> = ids.iter().flat_map(|&i| (i as u16).to_le_bytes()).collect();
    let u32le: Vec<u8> = ids.iter().flat_map(|&i| i.to_le_bytes()).collect();
    let hello = HELLO.as_bytes();
    assert_eq!(
        ok(&["encode", "--model", m, "--format", "u16le"], hello),
        u16le
    );
    assert_eq!(
        ok(&["encode", "--model", m, "--format", "u32le"], hello),
        u32le
    );
    assert_eq!(ok(&["encode", "--model", m, "--format", "u32le"], b""), b"");
    for mib in ["0", "1", "16"] {
        let args = ["encode", "--model", m, "--cache-mib", mib];
        assert_eq!(ok(&args, hello), HELLO_IDS.as_bytes());
    }
    assert_eq!(ok(&["count", "--model", m], hello), b"12\n");
    assert_eq!(ok(&["count", "--model", m], b""), b"0\n");
    assert_eq!(
        ok(&["count", "--model", m, "--ordinary"], b"a<|endoftext|>b"),
        b"9\n"
    );
}

/// `--format u16le` is refused, before any output, for a model with ids above 65,535.
#[test]
fn u16le_is_refused_when_ids_do_not_fit() {
    let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    tokens.resize(70_000, Vec::new());
    tokens.push(b"ab".to_vec());
    let model = Model {
        pattern: picobpe_model::PatternKind::Gpt2,
        tokens,
        merges: vec![(u32::from(b'a'), u32::from(b'b'))],
        specials: Vec::new(),
        whole_piece: true,
        normalizer: None,
        strips: Vec::new(),
        splits: Vec::new(),
        prefix_space: false,
        end_of_word_suffix: Vec::new(),
        steps: Default::default(),
        empty_tokens: Vec::new(),
    };
    let path = scratch().join("wide-ids.model");
    model.write(&path).unwrap();
    let path = path.to_str().unwrap();
    assert_eq!(
        ok(&["encode", "--model", path, "--format", "u32le"], b"ab"),
        70_000u32.to_le_bytes()
    );
    let err = fails(&["encode", "--model", path, "--format", "u16le"], b"ab");
    assert!(
        err.contains("ids go up to 70000, which does not fit --format u16le; use u32le"),
        "{err}"
    );
}

#[test]
fn empty_input_and_file_argument() {
    let m = gpt2_tiktoken();
    assert_eq!(ok(&["encode", "--model", m], b""), b"\n");
    let file = scratch().join("hello.txt");
    std::fs::write(&file, HELLO).unwrap();
    assert_eq!(
        ok(
            &["encode", "--model", m, file.to_str().unwrap()],
            b"ignored"
        ),
        HELLO_IDS.as_bytes()
    );
    let err = fails(&["encode", "--model", m, "/nonexistent/input.txt"], b"");
    assert!(err.contains("/nonexistent/input.txt"), "{err}");
}

/// One-shot library encode over host-built tables, formatted like the CLI.
fn one_shot(model: &str, text: &[u8], specials: Specials) -> String {
    let model = Model::read(model).unwrap();
    let tables = TableData::new(&model, PieceTable::Minimal)
        .unwrap()
        .to_tables();
    let mut out = vec![0u32; text.len() + 1];
    let n = Tokenizer::new(tables)
        .encode(text, &mut out, specials)
        .unwrap();
    let ids: Vec<String> = out[..n].iter().map(u32::to_string).collect();
    ids.join(" ") + "\n"
}

#[test]
fn streaming_across_chunk_boundaries_equals_one_shot() {
    // The CLI reads 1 MiB chunks. Put a special token, a multi-byte character, a space run and
    // a long word across each of the first boundaries, over real text.
    const CHUNK: usize = 1 << 20;
    let corpus = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/cs336/corpus.en"),
    )
    .unwrap();
    let mut text = Vec::new();
    for straddler in [
        &b"<|endoftext|>"[..],
        "\u{1F30D}\u{4F60}".as_bytes(),
        b"                 ",
        b"Pneumonoultramicroscopicsilicovolcanoconiosis",
    ] {
        while text.len() < (text.len() / CHUNK + 1) * CHUNK - 5 {
            let room = (text.len() / CHUNK + 1) * CHUNK - 5 - text.len();
            text.extend_from_slice(&corpus[..room.min(corpus.len())]);
        }
        text.extend_from_slice(straddler);
    }
    text.extend_from_slice(&corpus[..1000]);
    assert!(text.len() > 4 * CHUNK);

    let m = gpt2_tiktoken();
    let expected = one_shot(m, &text, Specials::All);
    assert!(expected.contains(" 50256 "));
    // From a file, reads end exactly at the 1 MiB boundaries; from a pipe, wherever the pipe
    // buffer ends.
    let file = scratch().join("straddle.txt");
    std::fs::write(&file, &text).unwrap();
    let cli =
        String::from_utf8(ok(&["encode", "--model", m, file.to_str().unwrap()], b"")).unwrap();
    assert_eq!(cli, expected);
    let cli = String::from_utf8(ok(&["encode", "--model", m], &text)).unwrap();
    assert_eq!(cli, expected);
    let cli = String::from_utf8(ok(&["encode", "--model", m, "--ordinary"], &text)).unwrap();
    assert_eq!(cli, one_shot(m, &text, Specials::None));
}

#[test]
fn decode_round_trips_bytes_including_invalid_utf8() {
    let m = gpt2_tiktoken();
    let text = b"caf\xc3\xa9 \xff\xfe <|endoftext|> \xe4\xbd";
    let ids = ok(&["encode", "--model", m], text);
    assert_eq!(ok(&["decode", "--model", m], &ids), text);
    // Any whitespace separates ids.
    assert_eq!(
        ok(
            &["decode", "--model", m],
            b"\n15496\t11 \r\n 12520  234 235 0\n"
        ),
        "Hello, 🌍!".as_bytes()
    );
    assert_eq!(ok(&["decode", "--model", m], b""), b"");
}

#[test]
fn decode_errors_name_the_position_and_write_nothing() {
    let m = gpt2_tiktoken();
    let err = fails(&["decode", "--model", m], b"15496 11 50257 0");
    assert!(
        err.contains("unknown token id 50257 at position 2"),
        "{err}"
    );
    let err = fails(&["decode", "--model", m], b"15496 eleven");
    assert!(err.contains("invalid id \"eleven\" at position 1"), "{err}");
    let err = fails(&["decode", "--model", m], b"4294967296");
    assert!(err.contains("at position 0"), "{err}");
    let err = fails(&["decode", "--model", m], b"-1");
    assert!(err.contains("invalid id \"-1\""), "{err}");
}
