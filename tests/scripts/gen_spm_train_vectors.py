#!/usr/bin/env python3
"""Reference models for `host-trainer train --model-type sentencepiece-bpe` and `unigram`,
trained by the real `spm_train` (the `sentencepiece` wheel, 0.2.3).

It (re)writes tests/fixtures/spm_train/<config>.json for each configuration below:

    {"sentencepiece": "0.2.3",
     "config": {"files": [...], "model_type": "bpe" | "unigram",
                "options": {...spm_train options...}},
     "pieces": [[piece, score, type], ...],          # in id order
     "held_out": {"text": "...", "ids": [...]}}       # the model's ids for a held-out text

and tests/fixtures/spm_train/error-*.json, {"sentencepiece", "config", "error"}, for the
configurations `spm_train` refuses, with its message.

The corpora are the committed texts of tests/fixtures/vectors/texts (licences in that
directory's PROVENANCE); the held-out text is the first 500 lines of another corpus file.
Usage: python3 tests/scripts/gen_spm_train_vectors.py [CONFIG ...]
"""
import json
import pathlib
import random
import sys
import tempfile

import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as model_pb2

ROOT = pathlib.Path(__file__).resolve().parents[2]
TEXTS = ROOT / "tests/fixtures/vectors/texts"
OUT = ROOT / "tests/fixtures/spm_train"

# llama2.c's `train_vocab.sh` settings (its custom 512/4096-piece tokenizers).
LLAMA2C = {"character_coverage": 1.0, "split_digits": True, "allow_whitespace_only_pieces": True,
           "byte_fallback": True, "normalization_rule_name": "identity"}
MULTI = ["corpus-de.txt", "corpus-el.txt", "corpus-ru.txt", "corpus-fr.txt", "corpus-zh.txt",
         "corpus-ja.txt", "corpus-ko.txt", "corpus-code-python.txt"]

CONFIGS = {
    # The llama2.c recipe, on English and on everything.
    "llama2c-en-512": {"files": ["corpus-english.txt"], "held_out": "corpus-fr.txt",
                       "options": {"vocab_size": 512, **LLAMA2C}},
    "llama2c-multi-4096": {"files": MULTI, "held_out": "corpus-english.txt",
                           "options": {"vocab_size": 4096, **LLAMA2C}},
    # spm_train's defaults but the rule: coverage 0.9995 (rare characters become <unk>).
    "identity-multi-5000": {"files": MULTI, "held_out": "corpus-emoji-mixed.txt",
                            "options": {"vocab_size": 5000, "normalization_rule_name": "identity"}},
    # Large vocabulary on little text: the tail of ties at low counts.
    "identity-en-8000": {"files": ["corpus-english.txt"], "held_out": "corpus-de.txt",
                         "options": {"vocab_size": 8000, "normalization_rule_name": "identity"}},
    # The other options: symbols, ids, splitting rules, whitespace handling.
    "options-mixed-1500": {
        "files": ["corpus-whitespace-heavy.txt", "corpus-code-rust.txt", "corpus-emoji-mixed.txt"],
        "held_out": "corpus-code-python.txt",
        "options": {"vocab_size": 1500, "normalization_rule_name": "identity",
                    "user_defined_symbols": ["<sep>", "fn"], "control_symbols": ["<cls>"],
                    "unk_id": 3, "bos_id": 0, "eos_id": -1, "pad_id": 1,
                    "split_by_number": False, "split_by_unicode_script": False,
                    "max_sentencepiece_length": 8, "character_coverage": 0.999,
                    "add_dummy_prefix": False, "remove_extra_whitespaces": False}},
    # spm_train's defaults (nmt_nfkc, coverage 0.9995), and its case-folding rule.
    "default-multi-6000": {"files": MULTI + ["corpus-emoji-mixed.txt", "corpus-hi.txt"],
                           "held_out": "corpus-whitespace-heavy.txt",
                           "options": {"vocab_size": 6000}},
    "nfkc-cf-en-2000": {"files": ["corpus-english.txt", "corpus-whitespace-heavy.txt"],
                        "held_out": "corpus-fr.txt",
                        "options": {"vocab_size": 2000, "normalization_rule_name": "nmt_nfkc_cf",
                                    "split_digits": True, "byte_fallback": True}},
    # Bytes that are not UTF-8: one U+FFFD per byte, as the library's normalizer makes them.
    "invalid-de-1000": {"files": ["spm_train/invalid-de.txt"], "held_out": "corpus-fr.txt",
                        "options": {"vocab_size": 1000}},
    # Lines so long that `▁` is outside the coverage: it becomes `▅` before words are cut.
    "letters-long-500": {"files": ["spm_train/letters-long.txt"], "held_out": "corpus-english.txt",
                         "options": {"vocab_size": 500, "max_sentence_length": 20000}},
    # The first 700 sentences only (spm_train's --input_sentence_size without shuffling).
    "first-700-1000": {"files": MULTI, "held_out": "corpus-el.txt",
                       "options": {"vocab_size": 1000, "input_sentence_size": 700,
                                   "shuffle_input_sentence": False}},
    "nosplit-ws-1000": {
        "files": ["corpus-whitespace-heavy.txt"], "held_out": "corpus-english.txt",
        "options": {"vocab_size": 1000, "normalization_rule_name": "identity",
                    "split_by_whitespace": False, "allow_whitespace_only_pieces": True,
                    "character_coverage": 1.0}},
    # Unigram (spm_train's default model type). Its EM sums per-thread f32 counts, so the
    # model depends on num_threads: 1 unless the options say (16 is spm_train's default).
    "unigram-en-1000": {"model_type": "unigram", "files": ["corpus-english.txt"],
                        "held_out": "corpus-fr.txt",
                        "options": {"vocab_size": 1000, "normalization_rule_name": "identity"}},
    "unigram-default-multi-4000": {"model_type": "unigram", "files": MULTI,
                                   "held_out": "corpus-emoji-mixed.txt",
                                   "options": {"vocab_size": 4000, "num_threads": 16}},
    "unigram-llama2c-1024": {"model_type": "unigram",
                             "files": ["corpus-english.txt", "corpus-de.txt",
                                       "corpus-code-python.txt"],
                             "held_out": "corpus-fr.txt",
                             "options": {"vocab_size": 1024, "num_threads": 4, **LLAMA2C}},
    "unigram-options-1500": {
        "model_type": "unigram",
        "files": ["corpus-whitespace-heavy.txt", "corpus-code-rust.txt", "corpus-emoji-mixed.txt"],
        "held_out": "corpus-code-python.txt",
        "options": {"vocab_size": 1500, "normalization_rule_name": "identity",
                    "control_symbols": ["<cls>"], "unk_id": 3, "bos_id": 0, "eos_id": -1,
                    "pad_id": 1, "split_by_number": False, "split_by_unicode_script": False,
                    "max_sentencepiece_length": 8, "character_coverage": 0.999,
                    "add_dummy_prefix": False, "remove_extra_whitespaces": False,
                    "shrinking_factor": 0.6, "num_sub_iterations": 3,
                    "seed_sentencepiece_size": 5000}},
    "unigram-nfkc-cf-invalid-800": {"model_type": "unigram",
                                    "files": ["spm_train/invalid-de.txt", "corpus-el.txt"],
                                    "held_out": "corpus-de.txt",
                                    "options": {"vocab_size": 800,
                                                "normalization_rule_name": "nmt_nfkc_cf",
                                                "split_digits": True}},
    "unigram-nosplit-ws-1000": {
        "model_type": "unigram", "files": ["corpus-whitespace-heavy.txt"],
        "held_out": "corpus-english.txt",
        "options": {"vocab_size": 1000, "normalization_rule_name": "identity",
                    "split_by_whitespace": False, "allow_whitespace_only_pieces": True,
                    "character_coverage": 1.0}},
}

# Corpora and options `spm_train` refuses: its error message is the reference. They are written
# by the script (a few bytes each).
ERROR_CORPORA = {"ten-a.txt": b"aaaaaaaaaa\n", "hello.txt": b"hello\n"}
ERRORS = {
    # One sentence, one word, no dummy prefix: the first M step expects no piece half a time.
    "error-unigram-no-pieces": {"model_type": "unigram", "files": ["spm_train/ten-a.txt"],
                                "options": {"vocab_size": 100, "add_dummy_prefix": False}},
    # Five letters give at most eight pieces.
    "error-unigram-vocab-too-high": {"model_type": "unigram", "files": ["spm_train/hello.txt"],
                                     "options": {"vocab_size": 100}},
    "error-bpe-vocab-too-high": {"model_type": "bpe", "files": ["spm_train/hello.txt"],
                                 "options": {"vocab_size": 100}},
}


def corpus_path(f):
    """A corpus file: under tests/fixtures when it names a folder, else a committed text."""
    return ROOT / "tests/fixtures" / f if "/" in f else TEXTS / f


def write_invalid_corpus():
    """tests/fixtures/spm_train/invalid-de.txt: corpus-de.txt with a byte that is not UTF-8
    (0x80, 0xFF, a lead byte without its continuation, ...) put into 30 % of the lines, seeded."""
    rng = random.Random(1)
    out = []
    for line in (TEXTS / "corpus-de.txt").read_bytes().split(b"\n"):
        if rng.random() < 0.3 and len(line) > 4:
            i = rng.randrange(len(line))
            line = line[:i] + bytes([rng.choice([0x80, 0xFF, 0xC3, 0xE2, 0xFE])]) + line[i:]
        out.append(line)
    (OUT / "invalid-de.txt").write_bytes(b"\n".join(out))


def write_long_lines_corpus():
    """tests/fixtures/spm_train/letters-long.txt: the lowercase ASCII letters of
    corpus-english.txt (nothing else), in lines of 10,000, so that `▁` (one per line, the dummy
    prefix) is the rarest character and falls outside a coverage of 0.9995: it becomes `▅`
    before words are cut, and each line is one word."""
    text = (TEXTS / "corpus-english.txt").read_text(encoding="utf-8").lower()
    letters = "".join(c for c in text if "a" <= c <= "z")
    lines = [letters[i:i + 10000] for i in range(0, len(letters), 10000)]
    (OUT / "letters-long.txt").write_text("\n".join(lines), encoding="ascii")


def train(name, cfg):
    files = [str(corpus_path(f)) for f in cfg["files"]]
    with tempfile.TemporaryDirectory() as tmp:
        prefix = f"{tmp}/m"
        options = {"num_threads": 1, **cfg["options"]}
        spm.SentencePieceTrainer.train(input=",".join(files), model_prefix=prefix,
                                       model_type=cfg.get("model_type", "bpe"), minloglevel=2,
                                       **options)
        sp = spm.SentencePieceProcessor(model_file=prefix + ".model")
        proto = model_pb2.ModelProto()
        proto.ParseFromString(pathlib.Path(prefix + ".model").read_bytes())
    types = {1: "normal", 2: "unknown", 3: "control", 4: "user_defined", 5: "unused", 6: "byte"}
    pieces = [[p.piece, p.score, types[p.type]] for p in proto.pieces]
    if name == "letters-long-500":
        assert not any("\u2581" in p[0] for p in pieces), "the space mark should be out"
    held = "\n".join(corpus_path(cfg["held_out"]).read_text().splitlines()[:500])
    ids = sp.encode(held)
    return {"sentencepiece": spm.__version__, "config": cfg, "pieces": pieces,
            "held_out": {"file": cfg["held_out"], "lines": 500, "ids": ids}}


def train_error(cfg):
    """The message `spm_train` fails with on `cfg` (it must fail)."""
    files = [str(corpus_path(f)) for f in cfg["files"]]
    with tempfile.TemporaryDirectory() as tmp:
        try:
            spm.SentencePieceTrainer.train(input=",".join(files), model_prefix=f"{tmp}/m",
                                           model_type=cfg["model_type"], minloglevel=2,
                                           num_threads=1, **cfg["options"])
        except RuntimeError as e:
            return {"sentencepiece": spm.__version__, "config": cfg, "error": str(e)}
    raise SystemExit(f"spm_train accepted {cfg}")


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    write_invalid_corpus()
    write_long_lines_corpus()
    for file, text in ERROR_CORPORA.items():
        (OUT / file).write_bytes(text)
    names = sys.argv[1:] or list(CONFIGS) + list(ERRORS)
    for name in names:
        if name in ERRORS:
            data = train_error(ERRORS[name])
            (OUT / f"{name}.json").write_text(json.dumps(data, ensure_ascii=False) + "\n")
            print(f"{name}: {data['error']}")
            continue
        data = train(name, CONFIGS[name])
        (OUT / f"{name}.json").write_text(json.dumps(data, ensure_ascii=False) + "\n")
        print(f"{name}: {len(data['pieces'])} pieces, {len(data['held_out']['ids'])} held-out ids")


if __name__ == "__main__":
    main()
