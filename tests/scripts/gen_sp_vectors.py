#!/usr/bin/env python3
"""Generate picobpe's SentencePiece-BPE reference data with the real `sentencepiece` and
Hugging Face `tokenizers` libraries (never with picobpe).

Usage (from the repository root):

    pip install sentencepiece==0.2.3 protobuf==7.36.2 tokenizers==0.22.2
    pip install --no-deps transformers==4.57.6      # only for convert_slow_tokenizer.LlamaConverter
    pip install "huggingface-hub>=0.34,<1.0" numpy pyyaml safetensors regex  # checked at its import
    pip download --no-deps -d /tmp/mc mistral-common==1.13.1      # optional, see --mistral-wheel
    python3 tests/scripts/gen_sp_vectors.py [--shared ../shared/data] [--mistral-wheel WHL]

(transformers 4.57.6 refuses to import next to tokenizers > 0.23.0 or huggingface-hub >= 1.0;
the LlamaConverter of transformers 5.x is broken. About 40 s on 2 cores.)

It (re)writes, under tests/fixtures/sentencepiece/:

    models/sp512.model, sp4096.model, sp32000.model, sp4096-unk.model
                                  trained here with the sentencepiece trainer (model_type=bpe)
    models/mistral-v1.model       a published tokenizer (+ models/mistral-v1.LICENSE, the
                                  package's Apache-2.0 text): `tokenizer.model.v1` from the PyPI
                                  package mistral-common 1.13.1 (Apache-2.0); copied from the
                                  wheel given with --mistral-wheel, else the committed copy is
                                  kept; its sha256 is checked either way
    models/<stem>.tokenizer.json  HF tokenizers files made by transformers' LlamaConverter
                                  (sp4096, sp32000; mistral-v1 is converted and compared in
                                  memory only, to keep the folder small)
    inputs/sp_edge.jsonl          the SentencePiece-specific input set
    vectors/<stem>/<set>.jsonl.gz ids (+ decodings, + HF ids where they differ)
    MANIFEST.json                 versions, trainer options, counts, sha256 of every file

The output is a pure function of the inputs: running the script twice gives byte-identical
files. See tests/fixtures/sentencepiece/PROVENANCE.md for the format and the findings.
"""

from __future__ import annotations

import argparse
import base64
import collections
import gzip
import hashlib
import io
import json
import random
import shutil
import sys
import zipfile
from pathlib import Path

import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as sp_pb2

# --------------------------------------------------------------------------------------------
# Training data: a deterministic sample of ../shared/data/corpus (never multi/ar.txt)
# --------------------------------------------------------------------------------------------

ENGLISH_BYTES = 6_000_000  # the first 6 MB of english.txt, cut at a line end
MULTI_ALL = ["de", "fr", "ru", "el", "zh", "ja", "ko", "indic", "code-python", "code-rust",
             "emoji-mixed", "whitespace-heavy"]
# sp512 cannot hold the required characters of the CJK/Hangul/Devanagari/Greek files (the
# trainer refuses character_coverage < 0.98, and 0.98 of the full sample already needs ~700
# characters), so it is trained on the Latin/Cyrillic/code part with the default coverage.
MULTI_SMALL = ["de", "fr", "ru", "code-python", "code-rust", "whitespace-heavy"]


def corpus_lines(shared: Path, multi: list[str]) -> tuple[list[str], list[dict]]:
    """Non-empty lines (split on "\\n" only; "\\r" stays in the line) of the sample, in order."""
    corpus = shared / "corpus"
    lines: list[str] = []
    used = []
    sources = [("english.txt", ENGLISH_BYTES)] + [(f"multi/{m}.txt", None) for m in multi]
    for rel, limit in sources:
        assert "ar.txt" not in rel
        data = (corpus / rel).read_bytes()
        if limit is not None and len(data) > limit:
            data = data[: data.rfind(b"\n", 0, limit) + 1]
        ls = [line for line in data.decode("utf-8").split("\n") if line != ""]
        used.append({"file": rel, "bytes": len(data), "lines": len(ls),
                     "sha256": hashlib.sha256(data).hexdigest()})
        lines += ls
    return lines, used


COMMON = dict(
    model_type="bpe",
    normalization_rule_name="identity",
    input_sentence_size=0,  # use every sentence (no sampling)
    shuffle_input_sentence=False,
    max_sentence_length=131072,  # longer than the longest line of the sample (74,399 bytes)
    num_threads=2,
    minloglevel=2,
)

MODELS = {
    "sp512": dict(sample="small", vocab_size=512, byte_fallback=True),
    "sp4096": dict(sample="all", vocab_size=4096, byte_fallback=True, add_dummy_prefix=True,
                   remove_extra_whitespaces=False, split_digits=True,
                   allow_whitespace_only_pieces=True,
                   user_defined_symbols=["<tool>", "<|im_end|>"], control_symbols=["<ctrl>"],
                   character_coverage=0.995),
    "sp32000": dict(sample="all", vocab_size=32000, byte_fallback=True, add_dummy_prefix=True,
                    remove_extra_whitespaces=False, split_digits=True,
                    allow_whitespace_only_pieces=True, character_coverage=0.99995),
    "sp4096-unk": dict(sample="all", vocab_size=4096, byte_fallback=False, add_dummy_prefix=False,
                       remove_extra_whitespaces=True, character_coverage=0.995),
}
# Models that get a committed HF tokenizer.json (and so an "hf" field in their vectors).
HF_MODELS = ["sp4096", "sp32000"]
# Compared with HF tokenizers in memory only (counts in MANIFEST.json): its tokenizer.json would
# add 1.36 MB and shows nothing sp32000's does not.
HF_MEMORY_ONLY = ["mistral-v1"]

MISTRAL = {
    "stem": "mistral-v1",
    "package": "mistral-common",
    "version": "1.13.1",
    "wheel": "mistral_common-1.13.1-py3-none-any.whl",
    "member": "mistral_common/data/tokenizer.model.v1",
    "sha256": "dadfd56d766715c61d2ef780a525ab43b8e6da4de6865bda3d95fdef5e134055",
    "license_member": "mistral_common-1.13.1.dist-info/licenses/LICENSE",
    "license_sha256": "5ed6f79e77734b5a60740dd821af5ecac9a6f33709c860eea4e20fcb6cca7fcc",
}

# --------------------------------------------------------------------------------------------
# Output helpers (same conventions as gen_vectors.py)
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


def spec_dict(msg) -> dict:
    """Every field of a proto2 message, defaults included (what the library will use)."""
    d = {}
    for f in msg.DESCRIPTOR.fields:
        v = getattr(msg, f.name)
        repeated = f.is_repeated if hasattr(f, "is_repeated") else f.label == f.LABEL_REPEATED
        if repeated:
            v = list(v)
        elif f.enum_type is not None:
            v = f.enum_type.values_by_number[v].name
        elif isinstance(v, bytes):
            v = len(v)
        d[f.name] = v
    return d


# --------------------------------------------------------------------------------------------
# The SentencePiece-specific input set
# --------------------------------------------------------------------------------------------


def sp_edge_records(shared: Path) -> list[dict]:
    rng = random.Random(20240601)
    recs: list[tuple[str, str]] = []
    add = lambda name, text: recs.append((name, text))  # noqa: E731

    # Empty and space-only input, dummy prefix and extra-whitespace handling.
    for name, t in [("empty", ""), ("space", " "), ("two-spaces", "  "), ("three-spaces", "   "),
                    ("a", "a"), ("space-a", " a"), ("two-spaces-a", "  a"), ("a-space", "a "),
                    ("a-two-spaces", "a  "), ("a-space-b", "a b"), ("a-three-spaces-b", "a   b"),
                    ("spaces-around", "   a  b   "), ("hello-world", "Hello world"),
                    ("hello-two-spaces-world", "Hello  world"), ("space-hello", " Hello"),
                    ("tab-hello", "\tHello"), ("newline-hello", "\nHello")]:
        add(name, t)
    # Other whitespace mixed with spaces (only U+0020 is whitespace to sentencepiece).
    for name, t in [("tab", "\t"), ("a-tab-b", "a\tb"), ("tab-spaces", " \t a \t "),
                    ("newline", "\n"), ("a-newline-b", "a\nb"), ("a-space-newline-space-b", "a \n b"),
                    ("newlines", "\n\n\n"), ("space-newline-space", " \n "), ("cr", "\r"),
                    ("crlf", "\r\n"), ("a-crlf-b", "a\r\nb"), ("nbsp", "\u00a0"),
                    ("a-nbsp-b", "a\u00a0b"), ("space-nbsp-space", " \u00a0 "),
                    ("ideographic-space", "\u3000"), ("a-ideographic-space-b", "a\u3000 b"),
                    ("tabs-and-spaces", "\t\t  \t"), ("line-separator", "a\u2028b"),
                    ("nel", "a\u0085b"), ("vt-ff", "a\x0b\x0cb"), ("thin-space", "a\u2009b"),
                    ("zwsp", "a\u200bb"), ("bom", "\ufeffa"), ("mixed-ws-run", " \t\n\r\u00a0\u3000 x \u3000\u00a0\r\n\t ")]:
        add(name, t)
    # The meta symbol itself.
    for name, t in [("meta", "▁"), ("meta-a", "▁a"), ("a-meta-b", "a▁b"), ("meta-meta", "▁▁"),
                    ("space-meta-space", " ▁ "), ("metas-space-a", "▁▁▁ a"), ("a-meta", "a▁")]:
        add(name, t)
    # Special-looking text: user-defined, control, meta and byte pieces' spellings.
    for name, t in [("tool", "<tool>"), ("a-tool-b", "a<tool>b"), ("space-tool-space", " <tool> "),
                    ("tool-tool", "<tool><tool>"), ("tool-partial", "<tool"), ("im-end", "<|im_end|>"),
                    ("x-im-end-y", "x<|im_end|>y"), ("im-end-tool", "<|im_end|><tool>"),
                    ("hello-tool-world", "Hello <tool>world<|im_end|>\n"), ("ctrl", "<ctrl>"),
                    ("a-ctrl-b", "a<ctrl>b"), ("bos", "<s>"), ("eos", "</s>"),
                    ("bos-hello-eos", "<s>hello</s>"), ("unk", "<unk>"), ("byte-piece-41", "<0x41>"),
                    ("byte-piece-0a", "<0x0A>"), ("pad", "<pad>"), ("inst", "[INST] hi [/INST]")]:
        add(name, t)
    # Digits.
    for name, t in [("digits", "0123456789"), ("pi", "3.14159"), ("digits-20", "12345678901234567890"),
                    ("letters-digits", "a1b22c333"), ("date", "2024-05-01"), ("space-42-space", " 42 "),
                    ("arabic-indic-digits", "\u0661\u0662\u0663"), ("superscripts", "x\u00b2\u00b3"),
                    ("circled", "\u2460\u2461"), ("digits-1000", "".join(str(i % 10) for i in range(1000)))]:
        add(name, t)
    # CJK, emoji, combining marks, other scalars.
    for name, t in [("zh", "中文"), ("ja", "日本語のテキスト"), ("ko", "한국어 텍스트"),
                    ("latin-cjk", "abc中文def"), ("emoji", "🙃"), ("emoji-skin", "👍🏽"),
                    ("flag", "🇩🇪"), ("zwj-family", "👩\u200d👩\u200d👧\u200d👦"),
                    ("zwj-rainbow-flag", "🏳\ufe0f\u200d🌈"), ("heart-vs16", "❤\ufe0f"),
                    ("keycap", "1\ufe0f\u20e3"), ("emoji-run", "😀😁😂🤣😃😄😅😆😉😊"),
                    ("e-acute-nfc", "\u00e9"), ("e-acute-nfd", "e\u0301"),
                    ("stacked-marks", "a\u0300\u0301\u0302\u0303\u0304"),
                    ("zalgo", "Z\u0335\u0321\u0322\u0347\u0317\u0319\u033e\u0346a\u035bl\u0317g\u0322o"),
                    ("hangul-jamo", "\u1112\u1161\u11ab"), ("fraktur", "\U0001d518\U0001d52b\U0001d526"),
                    ("max-scalar", "\U0010ffff"), ("private-use", "\ue000"), ("noncharacter", "\uffff"),
                    ("replacement-char", "\ufffd"), ("nul", "a\x00b"), ("c0-controls", "\x01\x02\x1b[0m"),
                    ("del", "\x7f")]:
        add(name, t)
    # Long words without spaces, long space runs.
    letters = "abcdefghijklmnopqrstuvwxyz"
    add("long-word-a-250", "a" * 250)
    add("long-word-random-300", "".join(rng.choice(letters) for _ in range(300)))
    add("long-word-repeat-240", "supercalifragilistic" * 12)
    add("long-word-url", "https://example.com/" + "/".join("seg" + str(i) for i in range(60)))
    add("long-word-mixed-400", "".join(rng.choice(letters + "0123456789_-.") for _ in range(400)))
    add("long-word-cyrillic-220", "".join(rng.choice("абвгдежзийклмнопрстуфхцчшщыэюя") for _ in range(220)))
    add("spaces-100", " " * 100)
    add("spaces-1000", " " * 1000)
    add("a-spaces-500-b", "a" + " " * 500 + "b")
    add("tabs-300", "\t" * 300)
    add("space-tab-200", " \t" * 200)
    add("newlines-500", "\n" * 500)
    add("meta-run-300", "▁" * 300)
    # 5,000-character CJK runs: seeded random ideographs, and real text (紅樓夢, public domain)
    # with everything that is not a Han character removed.
    add("cjk-run-5000-random", "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(5000)))
    zh = (shared / "corpus" / "multi" / "zh.txt").read_text("utf-8")
    han = "".join(c for c in zh if 0x4E00 <= ord(c) <= 0x9FFF)
    add("cjk-run-5000-text", han[:5000])
    add("cjk-run-with-spaces", " ".join(han[i:i + 7] for i in range(0, 700, 7)))
    names = [n for n, _ in recs]
    assert len(names) == len(set(names)), "duplicate record names"
    return [{"name": n, "text": t} for n, t in recs]


# --------------------------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------------------------


def load_set(fixtures: Path, inputs_rel: str) -> list[tuple[str, bytes, bool]]:
    """(name, input bytes, is_text) of every record of an input file."""
    path = fixtures / inputs_rel
    base = path.parent.parent  # files are relative to the folder holding inputs/
    out = []
    for line in path.read_text("utf-8").split("\n"):
        if not line:
            continue
        r = json.loads(line)
        if "text" in r:
            out.append((r["name"], r["text"].encode("utf-8"), True))
        elif "text_b64" in r:
            out.append((r["name"], base64.b64decode(r["text_b64"]), False))
        else:
            out.append((r["name"], (base / r["file"]).read_bytes(), True))
    return out


def fffd_text(data: bytes) -> str:
    """The text sentencepiece's normalizer sees for possibly invalid UTF-8 (the rule found by
    experiment, see PROVENANCE.md): every byte that is not part of a well-formed UTF-8 sequence
    becomes one U+FFFD, one per byte (Python's surrogateescape marks exactly those bytes)."""
    s = data.decode("utf-8", "surrogateescape")
    return "".join("\ufffd" if 0xDC80 <= ord(c) <= 0xDCFF else c for c in s)


# --------------------------------------------------------------------------------------------
# HF tokenizer.json via transformers' LlamaConverter
# --------------------------------------------------------------------------------------------


class _SlowShim:
    """What LlamaConverter reads from a slow LlamaTokenizer (legacy=True, add_prefix_space)."""

    def __init__(self, model_file: Path):
        self.vocab_file = str(model_file)
        self._sp = spm.SentencePieceProcessor(model_file=str(model_file))
        self.legacy = True
        self.add_prefix_space = True

    def convert_ids_to_tokens(self, i: int) -> str:
        return self._sp.IdToPiece(i)


def tokenizer_json(model_file: Path) -> str:
    from transformers.convert_slow_tokenizer import LlamaConverter

    tok = LlamaConverter(_SlowShim(model_file)).converted()
    return tok.to_str(pretty=False) + "\n"


# --------------------------------------------------------------------------------------------
# Facts checked by experiment (asserted here, described in PROVENANCE.md)
# --------------------------------------------------------------------------------------------


def pieces(sp, ids):
    return [sp.IdToPiece(i) for i in ids]


def check_facts(sps: dict, protos: dict) -> dict:
    s512, s4096, s32k, unk = sps["sp512"], sps["sp4096"], sps["sp32000"], sps["sp4096-unk"]
    P = pieces
    facts: dict = {}

    # (a) Only U+0020 is whitespace: tab, newline, NBSP, U+3000 are ordinary characters.
    for ch in ["\t", "\n", "\u00a0", "\u3000"]:
        # remove_extra_whitespaces neither strips nor collapses them ...
        assert s512.DecodeIds(s512.EncodeAsIds(f"{ch}a{ch}{ch}b{ch}")) == f"{ch}a{ch}{ch}b{ch}", repr(ch)
        # ... and they never become the meta symbol.
        assert "▁" not in "".join(P(s32k, s32k.EncodeAsIds(f"a{ch}b"))).replace("▁a", "a")
    assert P(s512, s512.EncodeAsIds(" \t a \t ")) == P(s512, s512.EncodeAsIds("\t a \t")), "spaces around tabs"
    facts["a_whitespace"] = {
        "a\\tb (sp32000)": P(s32k, s32k.EncodeAsIds("a\tb")),
        "a\\u00a0b (sp32000)": P(s32k, s32k.EncodeAsIds("a\u00a0b")),
        "' \\t a \\t ' (sp4096-unk, remove_extra_whitespaces)": P(unk, unk.EncodeAsIds(" \t a \t ")),
    }
    # (b) remove_extra_whitespaces: leading/trailing spaces removed, runs collapsed.
    assert s512.EncodeAsIds("   a   b   ") == s512.EncodeAsIds("a b")
    assert s512.EncodeAsIds("   ") == [] and s512.EncodeAsIds(" ") == []
    assert unk.EncodeAsIds("  a  ") == unk.EncodeAsIds("a")
    # The input's own U+2581 is the meta symbol: it is not stripped or collapsed at the start or
    # inside (only U+0020 is), but trailing ones are, since the trailing strip runs on the
    # escaped text; an input made only of them (and spaces) gives no tokens.
    assert P(s512, s512.EncodeAsIds("▁a")) == ["▁", "▁a"] and s512.EncodeAsIds("▁") == []
    assert s512.EncodeAsIds("a▁▁ ") == s512.EncodeAsIds("a") and s512.EncodeAsIds(" ▁ ") == []
    assert P(s512, s512.EncodeAsIds("a  ▁  b")) == ["▁a", "▁", "▁", "▁b"]
    assert P(unk, unk.EncodeAsIds("▁a")) == ["▁a"] and unk.EncodeAsIds("a▁") == unk.EncodeAsIds("a")
    # Without remove_extra_whitespaces U+2581 and U+0020 are the same symbol.
    for t in ["▁a", "a▁b", "a ▁ b", "▁▁", "a▁"]:
        assert s32k.EncodeAsIds(t) == s32k.EncodeAsIds(t.replace("▁", " "))
    facts["b_remove_extra_whitespaces"] = {
        "'▁a' (sp512)": P(s512, s512.EncodeAsIds("▁a")),
        "'▁' (sp512)": P(s512, s512.EncodeAsIds("▁")),
        "'a▁▁ ' (sp512)": P(s512, s512.EncodeAsIds("a▁▁ ")),
        "'a  ▁  b' (sp512)": P(s512, s512.EncodeAsIds("a  ▁  b")),
        "'   a   b   ' (sp512)": P(s512, s512.EncodeAsIds("   a   b   ")),
        "'   ' (sp512)": P(s512, s512.EncodeAsIds("   ")),
    }
    # (c) Dummy prefix for space-only input (remove_extra_whitespaces=False) and empty input.
    assert P(s4096, s4096.EncodeAsIds(" ")) == ["▁▁"]
    assert P(s32k, s32k.EncodeAsIds("   ")) == ["▁▁▁▁"]
    for sp in sps.values():
        assert sp.EncodeAsIds("") == []
    facts["c_dummy_prefix"] = {
        "' ' (sp4096)": P(s4096, s4096.EncodeAsIds(" ")),
        "'   ' (sp32000)": P(s32k, s32k.EncodeAsIds("   ")),
        "'' (every model)": [],
        "' ' (sp512, remove_extra_whitespaces)": P(s512, s512.EncodeAsIds(" ")),
    }
    # (d) DecodeIds.
    B = lambda sp, b: sp.PieceToId("<0x%02X>" % b)  # noqa: E731
    assert s32k.DecodeIds([0]) == " ⁇ " and unk.DecodeIds([0, 0]) == " ⁇  ⁇ "
    assert s32k.DecodeIds([1, 2]) == "" and s32k.DecodeIds([1] + s32k.EncodeAsIds("hi") + [2]) == "hi"
    assert s32k.DecodeIds([B(s32k, 0xE4), B(s32k, 0xB8)]) == "\ufffd\ufffd"
    assert s32k.DecodeIds([B(s32k, 0xF0), B(s32k, 0x9F), B(s32k, 0x98)]) == "\ufffd" * 3
    assert s32k.DecodeIds([B(s32k, 0xE4), B(s32k, 0xB8), B(s32k, 0xAD)]) == "中"
    assert s32k.DecodeIds([B(s32k, 0xC3), B(s32k, 0xA9), B(s32k, 0xC3)]) == "é\ufffd"
    assert s32k.DecodeIds([B(s32k, 0x20), B(s32k, 0x41)]) == " A"
    assert s32k.DecodeIds([s32k.PieceToId("▁a")]) == "a"
    assert s32k.DecodeIds([s32k.PieceToId("▁▁"), s32k.PieceToId("▁a")]) == "  a"
    assert s32k.DecodeIds([s32k.PieceToId("▁"), s32k.PieceToId("▁a")]) == " a"
    assert s32k.DecodeIds([s32k.PieceToId("a"), s32k.PieceToId("▁a")]) == "a a"
    assert s32k.DecodeIds([0, s32k.PieceToId("▁a")]) == " ⁇  a"
    assert s32k.DecodeIds([1, s32k.PieceToId("▁a")]) == "a"
    assert s32k.DecodeIds([B(s32k, 0xE4), s32k.PieceToId("▁a")]) == "\ufffd a"
    assert s4096.DecodeIds([3]) == "" and s4096.DecodeIds([s4096.PieceToId("▁"), 4]) == "<tool>"
    for sp in sps.values():
        assert sp.PieceToId("\n") == sp.unk_id()  # "\n" is never a piece
    # remove_extra_whitespaces models strip every leading "▁" of the leading pieces ...
    assert unk.DecodeIds([unk.PieceToId("▁"), unk.PieceToId("▁"), unk.PieceToId("▁a")]) == "a"
    # ... and a model without dummy prefix but with remove_extra_whitespaces strips one too.
    assert unk.DecodeIds([unk.PieceToId("▁a")]) == "a"
    # Byte pieces: one U+FFFD per byte outside a well-formed UTF-8 sequence (same rule as the
    # encoder's input), checked on seeded random byte strings biased to UTF-8 fragments.
    rng = random.Random(7)
    frag = [b"\xe4\xb8\xad", b"\xe4\xb8", b"\xf0\x9f\x98\x80", b"\xf0\x9f", b"\xc3\xa9", b"\xc3",
            b"\x80", b"\xbf", b"\xc0\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xff", b"a", b" "]
    for _ in range(3000):
        data = b"".join(rng.choice(frag) if rng.random() < 0.7 else bytes([rng.randrange(256)])
                        for _ in range(rng.randint(1, 8)))
        assert s32k.DecodeIds([B(s32k, b) for b in data]) == fffd_text(data), data
    # byte_fallback=False: a run of characters outside the vocabulary is ONE <unk> (id 0).
    assert unk.EncodeAsIds("a\n\nb") == [unk.PieceToId("a"), 0, unk.PieceToId("b")]
    assert unk.EncodeAsIds("\U0001F600\U0001F601") == [0]
    assert unk.DecodeIds(unk.EncodeAsIds("a\n\nb")) == "a ⁇ b"
    facts["d_decode"] = {
        "a\\n\\nb (sp4096-unk) ids": unk.EncodeAsIds("a\n\nb"),
        "a\\n\\nb (sp4096-unk) decoded": unk.DecodeIds(unk.EncodeAsIds("a\n\nb")),
        "<unk>": s32k.DecodeIds([0]), "<s> </s>": s32k.DecodeIds([1, 2]),
        "<0xE4><0xB8>": s32k.DecodeIds([B(s32k, 0xE4), B(s32k, 0xB8)]),
        "▁▁ ▁a": s32k.DecodeIds([s32k.PieceToId("▁▁"), s32k.PieceToId("▁a")]),
        "<unk> ▁a": s32k.DecodeIds([0, s32k.PieceToId("▁a")]),
        "<s> ▁a": s32k.DecodeIds([1, s32k.PieceToId("▁a")]),
        "▁ ▁ ▁a (sp4096-unk)": unk.DecodeIds([unk.PieceToId("▁"), unk.PieceToId("▁"), unk.PieceToId("▁a")]),
    }
    # (e) User-defined symbols match anywhere in the raw text, control symbols never.
    assert P(s4096, s4096.EncodeAsIds("a<tool>b")) == ["▁a", "<tool>", "b"]
    assert "<|im_end|>" in P(s4096, s4096.EncodeAsIds("x<|im_end|>y"))
    assert "<ctrl>" not in P(s4096, s4096.EncodeAsIds("a<ctrl>b"))
    assert s4096.PieceToId("<ctrl>") not in s4096.EncodeAsIds("<ctrl>")
    facts["e_user_defined"] = {
        "a<tool>b": P(s4096, s4096.EncodeAsIds("a<tool>b")),
        "<tool>": P(s4096, s4096.EncodeAsIds("<tool>")),
        "a<ctrl>b": P(s4096, s4096.EncodeAsIds("a<ctrl>b")),
        "<s>": P(s4096, s4096.EncodeAsIds("<s>")),
    }
    # (f), (g) Piece inventory of every model.
    inv = {}
    for stem, m in protos.items():
        types = collections.Counter(sp_pb2.ModelProto.SentencePiece.Type.Name(p.type) for p in m.pieces)
        inner = [p.piece for p in m.pieces if p.type in (1, 4)
                 and any(a != "▁" and b == "▁" for a, b in zip(p.piece, p.piece[1:]))]
        ws_only = [p.piece for p in m.pieces if p.type == 1 and set(p.piece) == {"▁"}]
        normal = [p.piece for p in m.pieces if p.type in (1, 4)]
        longest = max(normal, key=lambda x: (len(x.encode()), x))
        longest_text = max(normal, key=lambda x: (len(x.replace("▁", " ").encode()), x))
        multi_meta = [x for x in normal if x.startswith("▁▁") and set(x) != {"▁"}]
        inv[stem] = {
            "types": dict(sorted(types.items())),
            "pieces_with_non_meta_then_meta": len(inner),
            "examples_non_meta_then_meta": inner[:10],
            "whitespace_only_pieces": len(ws_only),
            "pieces_two_metas_then_other": len(multi_meta),
            "longest_piece_chars": max(len(x) for x in normal),
            "longest_whitespace_only": max(ws_only, key=len) if ws_only else None,
            "longest_piece": longest, "longest_piece_bytes": len(longest.encode()),
            "longest_piece_as_text": longest_text,
            "longest_piece_as_text_bytes": len(longest_text.replace("▁", " ").encode()),
            "unused": types.get("UNUSED", 0),
        }
    facts["f_g_pieces"] = inv
    return facts


# --------------------------------------------------------------------------------------------


def main() -> int:
    repo = Path(__file__).resolve().parents[2]
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", type=Path, default=repo.parent / "shared" / "data")
    ap.add_argument("--fixtures", type=Path, default=repo / "tests" / "fixtures")
    ap.add_argument("--mistral-wheel", type=Path, default=None,
                    help=f"{MISTRAL['wheel']} (pip download --no-deps mistral-common==1.13.1)")
    args = ap.parse_args()
    shared: Path = args.shared
    fixtures: Path = args.fixtures
    out = fixtures / "sentencepiece"
    models_dir = out / "models"
    import tokenizers
    import transformers

    versions = {"python": sys.version.split()[0], "sentencepiece": spm.__version__,
                "tokenizers": tokenizers.__version__, "transformers": transformers.__version__,
                "protobuf": __import__("google.protobuf").protobuf.__version__}
    # The committed bytes were made with exactly these (other versions may well agree).
    assert spm.__version__ == "0.2.3", spm.__version__
    assert tokenizers.__version__ == "0.22.2", tokenizers.__version__
    assert transformers.__version__ == "4.57.6", transformers.__version__

    # The published model: from the wheel, or keep the committed copy.
    mistral_path = models_dir / f"{MISTRAL['stem']}.model"
    mistral_license = models_dir / f"{MISTRAL['stem']}.LICENSE"
    if args.mistral_wheel is not None:
        with zipfile.ZipFile(args.mistral_wheel) as z:
            mistral_bytes = z.read(MISTRAL["member"])
            license_bytes = z.read(MISTRAL["license_member"])
    else:
        mistral_bytes = mistral_path.read_bytes()
        license_bytes = mistral_license.read_bytes()
    assert hashlib.sha256(mistral_bytes).hexdigest() == MISTRAL["sha256"], "unexpected mistral-v1 model"
    assert hashlib.sha256(license_bytes).hexdigest() == MISTRAL["license_sha256"], "unexpected licence"

    # Fresh output.
    for d in [models_dir, out / "inputs", out / "vectors"]:
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
    mistral_path.write_bytes(mistral_bytes)
    mistral_license.write_bytes(license_bytes)  # the package's Apache-2.0 LICENSE, unchanged

    # 1. Train.
    samples = {"all": corpus_lines(shared, MULTI_ALL), "small": corpus_lines(shared, MULTI_SMALL)}
    manifest_models: dict = {}
    protos: dict = {}
    for stem, cfg in MODELS.items():
        cfg = dict(cfg)
        sample = cfg.pop("sample")
        lines, used = samples[sample]
        opts = {**COMMON, **cfg}
        w = io.BytesIO()
        spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=w, **opts)
        (models_dir / f"{stem}.model").write_bytes(w.getvalue())
        m = sp_pb2.ModelProto()
        m.ParseFromString(w.getvalue())
        assert len(m.pieces) == cfg["vocab_size"]
        protos[stem] = m
        manifest_models[stem] = {
            "source": "trained here: sentencepiece.SentencePieceTrainer.train(sentence_iterator=<sample lines>, **trainer_options)",
            "trainer_options": {k: v for k, v in opts.items() if k != "minloglevel"},
            "sample": {"name": sample, "sentences": len(lines),
                       "bytes": sum(len(x.encode()) + 1 for x in lines), "files": used},
        }
    m = sp_pb2.ModelProto()
    m.ParseFromString(mistral_bytes)
    protos[MISTRAL["stem"]] = m
    manifest_models[MISTRAL["stem"]] = {
        "source": f"PyPI {MISTRAL['package']} {MISTRAL['version']} ({MISTRAL['wheel']}), file "
                  f"{MISTRAL['member']}, Apache-2.0 (Mistral AI); copied unchanged",
        "sha256": MISTRAL["sha256"],
    }
    stems = list(MODELS) + [MISTRAL["stem"]]
    sps = {s: spm.SentencePieceProcessor(model_file=str(models_dir / f"{s}.model")) for s in stems}
    for stem in stems:
        p = protos[stem]
        manifest_models[stem].update({
            "trainer_spec_in_file": spec_dict(p.trainer_spec),
            "file": f"models/{stem}.model",
            "vocab_size": len(p.pieces),
            "normalizer_spec": {"name": p.normalizer_spec.name,
                                "add_dummy_prefix": p.normalizer_spec.add_dummy_prefix,
                                "remove_extra_whitespaces": p.normalizer_spec.remove_extra_whitespaces,
                                "escape_whitespaces": p.normalizer_spec.escape_whitespaces,
                                "precompiled_charsmap_bytes": len(p.normalizer_spec.precompiled_charsmap)},
            "byte_fallback": p.trainer_spec.byte_fallback,
            "unk_surface": p.trainer_spec.unk_surface,
        })

    # 2. HF tokenizer.json files.
    from tokenizers import Tokenizer

    hfs = {}
    for stem in HF_MODELS + HF_MEMORY_ONLY:
        js = tokenizer_json(models_dir / f"{stem}.model")
        if stem in HF_MODELS:
            path = models_dir / f"{stem}.tokenizer.json"
            path.write_text(js, encoding="utf-8")
            hfs[stem] = Tokenizer.from_file(str(path))
            manifest_models[stem]["tokenizer_json"] = f"models/{stem}.tokenizer.json"
        else:
            hfs[stem] = Tokenizer.from_str(js)
            manifest_models[stem]["tokenizer_json"] = None
            manifest_models[stem]["tokenizer_json_sha256_not_committed"] = hashlib.sha256(js.encode()).hexdigest()
        manifest_models[stem]["tokenizer_json_made_by"] = (
            f"transformers {transformers.__version__} convert_slow_tokenizer.LlamaConverter "
            f"(legacy=True, add_prefix_space=True), tokenizers {tokenizers.__version__}")

    # 3. Facts.
    facts = check_facts(sps, protos)

    # 4. Inputs.
    write_jsonl(out / "inputs" / "sp_edge.jsonl", None, sp_edge_records(shared))
    sets = {s: f"vectors/inputs/{s}.jsonl" for s in
            ["fixtures", "corpus", "random", "double_special", "invalid_utf8"]}
    sets["sp_edge"] = "sentencepiece/inputs/sp_edge.jsonl"

    # 5. Vectors.
    counts: dict = {}
    invalid_checked = 0
    for set_name, inputs_rel in sets.items():
        records = load_set(fixtures, inputs_rel)
        for stem in stems:
            sp, hf = sps[stem], hfs.get(stem)
            lines = []
            n_ids = n_hf = n_dec = 0
            hf_diff_names = []
            for name, data, is_text in records:
                if is_text:
                    text = data.decode("utf-8")
                    ids = sp.EncodeAsIds(text)
                    assert sp.encode(data) == ids  # bytes in, same ids
                else:
                    ids = sp.encode(data)  # raw bytes straight to the C++ normalizer
                    # The invalid-UTF-8 rule: one U+FFFD per byte outside a well-formed sequence.
                    assert ids == sp.EncodeAsIds(fffd_text(data)), (stem, name)
                    invalid_checked += 1
                dec = sp.DecodeIds(ids).encode("utf-8")
                rec = {"name": name, "ids": ids}
                # Omitted when the decoding is the input itself (after the U+FFFD rule, which
                # changes nothing in valid UTF-8).
                if dec != fffd_text(data).encode("utf-8"):
                    rec["decoded_b64"] = base64.b64encode(dec).decode("ascii")
                    n_dec += 1
                if hf is not None and is_text:
                    hids = hf.encode(text, add_special_tokens=False).ids
                    if hids != ids:
                        if stem in HF_MODELS:
                            rec["hf"] = hids
                        n_hf += 1
                        hf_diff_names.append(name)
                n_ids += len(ids)
                lines.append(rec)
            header = {"model": stem, "set": set_name, "inputs": inputs_rel, "count": len(records),
                      "sentencepiece": spm.__version__}
            if stem in HF_MODELS:
                header["tokenizers"] = tokenizers.__version__
                header["tokenizer_json"] = f"sentencepiece/models/{stem}.tokenizer.json"
            (out / "vectors" / stem).mkdir(exist_ok=True)
            write_jsonl(out / "vectors" / stem / f"{set_name}.jsonl.gz", header, lines)
            c = {"records": len(records), "ids": n_ids, "decoded_differs": n_dec}
            if hf is not None:
                c["hf_differs"] = n_hf
                if set_name == "invalid_utf8":
                    c["hf_differs"] = None
                    c["hf_note"] = "not compared: HF tokenizers takes only valid UTF-8 (str)"
                else:
                    c["hf_differs_names"] = hf_diff_names[:40]
                if stem in HF_MEMORY_ONLY:
                    c["hf_note"] = "compared in memory; no hf field (tokenizer.json not committed)"
            counts.setdefault(set_name, {})[stem] = c

    # 6. Manifest.
    files = {}
    for p in sorted(out.rglob("*")):
        # Generated files only (PROVENANCE.md and .gitattributes are written by hand).
        if p.is_file() and p.name not in ("MANIFEST.json", "PROVENANCE.md", ".gitattributes"):
            files[str(p.relative_to(out))] = {"bytes": p.stat().st_size, "sha256": sha256(p)}
    manifest = {
        "generator": "tests/scripts/gen_sp_vectors.py",
        "versions": versions,
        "models": manifest_models,
        "sets": {s: {"inputs": r, "counts": counts[s]} for s, r in sets.items()},
        "invalid_utf8_rule_checked_records": invalid_checked,
        "facts": facts,
        "files": files,
    }
    (out / "MANIFEST.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=1) + "\n")
    total = sum(f["bytes"] for f in files.values())
    print(f"wrote {len(files)} files, {total} bytes")
    for s in sets:
        print(s, {k: (v["ids"], v["decoded_differs"], v.get("hf_differs")) for k, v in counts[s].items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
