#!/usr/bin/env python3
"""Generate picobpe's reference data for SentencePiece character-map normalizers
(`precompiled_charsmap`: nmt_nfkc, nmt_nfkc_cf, a custom normalization_rule_tsv) with the real
`sentencepiece` library (never with picobpe).

Usage (from the repository root):

    pip install sentencepiece==0.2.3 protobuf==7.36.2
    python3 tests/scripts/gen_sp_norm_vectors.py [--shared ../shared/data]

(About 20 s on 2 cores.)

It (re)writes, under tests/fixtures/sp_norm/:

    models/nfkc-bpe.model, nfkc-ug.model, nfkc-tsv.model, nfkc-tsv-raw.model, nfkc-bpe-user.model
                                  trained here with the sentencepiece trainer on a small
                                  deterministic sample of ../shared/data/corpus (never
                                  multi/ar.txt)
    models/nfkc-tsv.rules.tsv     the normalization_rule_tsv of the two nfkc-tsv* models
    inputs/nfkc_edge.jsonl        hand-written inputs around what NFKC and the rules change
    inputs/random.jsonl           seeded random strings of charsmap keys, partial keys,
                                  spaces, letters
    inputs/invalid_utf8.jsonl     seeded random bytes (text_b64) mixed with keys and cut keys
    inputs/corpus.jsonl           lines and chunks of the shared corpus files
    vectors/<stem>/<set>.jsonl.gz ids (+ decodings where they differ), in the record format of
                                  tests/fixtures/sentencepiece (see its PROVENANCE.md); the
                                  sp_edge set is tests/fixtures/sentencepiece/inputs/sp_edge.jsonl
    normalized/<stem>.jsonl.gz    sentencepiece's normalized text (`normalize(bytes)`) of every
                                  record of nfkc_edge, for tests of the normalizer alone
    MANIFEST.json                 versions, trainer options, counts, facts, sha256 of every file

It also carries a Python port of sentencepiece 0.2.3's `Normalizer::Normalize` (the charsmap
trie decoded from the model) and asserts that it gives sentencepiece's normalized text on every
record of every set and model.

The output is a pure function of the inputs: running the script twice gives byte-identical
files (checked). See tests/fixtures/sp_norm/PROVENANCE.md for the findings.
"""

from __future__ import annotations

import argparse
import base64
import collections
import hashlib
import io
import json
import os
import random
import shutil
import struct
import sys
from pathlib import Path

import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as sp_pb2

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_sp_vectors import fffd_text, load_set, sha256, spec_dict, write_jsonl  # noqa: E402

# --------------------------------------------------------------------------------------------
# Training data: a small deterministic sample of ../shared/data/corpus (never multi/ar.txt)
# --------------------------------------------------------------------------------------------

ENGLISH_BYTES = 1_500_000  # the first 1.5 MB of english.txt, cut at a line end
MULTI_BYTES = 150_000  # the first 150 KB of each multi/ file, cut at a line end
MULTI = ["de", "fr", "ru", "el", "zh", "ja", "ko", "indic", "code-python", "code-rust",
         "emoji-mixed", "whitespace-heavy"]


def head(data: bytes, limit: int) -> bytes:
    return data if len(data) <= limit else data[: data.rfind(b"\n", 0, limit) + 1]


def corpus_lines(shared: Path) -> tuple[list[str], list[dict]]:
    """Non-empty lines (split on "\\n" only) of the sample, in order."""
    corpus = shared / "corpus"
    lines: list[str] = []
    used = []
    sources = [("english.txt", ENGLISH_BYTES)] + [(f"multi/{m}.txt", MULTI_BYTES) for m in MULTI]
    for rel, limit in sources:
        assert "ar.txt" not in rel
        data = head((corpus / rel).read_bytes(), limit)
        ls = [line for line in data.decode("utf-8").split("\n") if line != ""]
        used.append({"file": rel, "bytes": len(data), "lines": len(ls),
                     "sha256": hashlib.sha256(data).hexdigest()})
        lines += ls
    return lines, used


# --------------------------------------------------------------------------------------------
# The custom rule file (sentencepiece's TSV: source code points in hex separated by spaces,
# TAB, target code points; a line with no TAB, or nothing after it, is a deletion rule)
# --------------------------------------------------------------------------------------------

TSV_RULES: list[tuple[str, str, str]] = [
    # Overlapping keys: a key that is a prefix of a longer one, and a gap ("zzz" is a path of
    # the trie but no key: the longest *key* wins, not the longest path).
    ("qx", "QX", "key that is a prefix of a longer key"),
    ("qxz", "*", "longer key"),
    ("zz", "Z", "key with a gap above it"),
    ("zzzz", "ZZ!", "zzz is no key"),
    # Keys holding U+0020.
    (" ,", ",", "key starting with a space: drops a space before a comma"),
    ("< >", "\u25c7", "key with a space inside"),
    ("-- ", "\u2014 ", "key ending with a space, output ending with a space"),
    ("   ", "_", "three spaces: a key made of spaces only"),
    # Outputs with spaces.
    ("\u2603", "x y", "output with a space in the middle"),
    ("\u00a7", " S", "output starting with a space"),
    ("\u00b6", "P ", "output ending with a space"),
    ("\u2020", "a  b", "output with two consecutive spaces inside"),
    ("\u2021", "  ", "output of two spaces only"),
    ("\u2022", " ", "output of exactly one space"),
    ("\u2023", "\u2581", "output U+2581"),
    ("\u2024", "x\u2581y", "output with U+2581 inside"),
    ("\u3000", " ", "ideographic space to space"),
    ("\u00a0", " ", "NBSP to space"),
    ("\t", "  ", "TAB to two spaces"),
    ("\r\n", "\n", "CRLF to LF"),
    # Deletions (empty output).
    ("\u00ad", "", "soft hyphen deleted (TAB, then nothing)"),
    ("\u200b", "", "ZWSP deleted (no TAB on the line)"),
    ("\u0301", "", "a lone combining acute deleted"),
    ("e\u0301", "\u00e9", "e + combining acute composed: a key whose last character is a key"),
    ("~", "", "tilde deleted"),
    ("~~", "\u2248", "a deletion key that is a prefix of a longer key"),
    # Others.
    ("\ufffd", "?", "a literal U+FFFD (malformed bytes are not looked up)"),
    ("\U0001f600", ":)", "a 4-byte key"),
    ("\u00e0", "a", "keys sharing their lead byte C3"),
    ("\u00e8", "e", "keys sharing their lead byte C3"),
    ("\u2460", "(1)", "circled one expanded"),
]
NO_TAB_RULES = {"\u200b"}  # written without a TAB (the other deletion keeps its TAB)


def tsv_text() -> str:
    lines = []
    for src, trg, _ in TSV_RULES:
        s = " ".join("%04X" % ord(c) for c in src)
        t = " ".join("%04X" % ord(c) for c in trg)
        lines.append(s if src in NO_TAB_RULES else f"{s}\t{t}")
    return "".join(line + "\n" for line in lines)


TSV_REL = "models/nfkc-tsv.rules.tsv"  # relative to the fixture folder (stored in the model)

# --------------------------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------------------------

COMMON = dict(
    input_sentence_size=0,  # use every sentence (no sampling)
    shuffle_input_sentence=False,
    max_sentence_length=131072,
    num_threads=2,  # deterministic (two runs give byte-identical models; checked)
    minloglevel=2,
)

USER_SYMBOLS = ["\ufb01", "\u2460", "\uff21", "\u337b", "x\u00b2"]  # ﬁ ① Ａ ㍻ x²

MODELS = {
    # spm_train's defaults: nmt_nfkc, remove_extra_whitespaces, add_dummy_prefix.
    "nfkc-bpe": dict(model_type="bpe", vocab_size=3000, normalization_rule_name="nmt_nfkc",
                     byte_fallback=True, character_coverage=0.995),
    "nfkc-ug": dict(model_type="unigram", vocab_size=3000, normalization_rule_name="nmt_nfkc_cf",
                    byte_fallback=False, character_coverage=0.995),
    "nfkc-tsv": dict(model_type="bpe", vocab_size=2000, normalization_rule_tsv=TSV_REL,
                     byte_fallback=True, character_coverage=0.98),
    "nfkc-tsv-raw": dict(model_type="bpe", vocab_size=2000, normalization_rule_tsv=TSV_REL,
                         byte_fallback=True, character_coverage=0.98,
                         remove_extra_whitespaces=False),
    "nfkc-bpe-user": dict(model_type="bpe", vocab_size=2000, normalization_rule_name="nmt_nfkc",
                          byte_fallback=True, character_coverage=0.98,
                          remove_extra_whitespaces=False, user_defined_symbols=USER_SYMBOLS),
}

# --------------------------------------------------------------------------------------------
# The precompiled charsmap: decoding, and a port of sentencepiece's Normalizer
# --------------------------------------------------------------------------------------------


def decode_charsmap(blob: bytes) -> dict[bytes, bytes]:
    """Every key of a `precompiled_charsmap` and its replacement: a 4-byte LE trie size, the
    Darts-clone double array (uint32 LE units), then NUL-terminated replacement strings."""
    if not blob:
        return {}
    (size,) = struct.unpack_from("<I", blob, 0)
    units = struct.unpack_from("<%dI" % (size // 4), blob, 4)
    strings = blob[4 + size:]

    def offset(u):
        return (u >> 10) << ((u & (1 << 9)) >> 6)

    def label(u):
        return u & ((1 << 31) | 0xFF)

    # The unit at `child` is the transition by byte c from the node whose children start at
    # `pos` iff label(units[child]) == c and child == pos ^ c: index every unit by pos once
    # (the array shares suffixes, so walking it as a tree reaches units many times).
    children = collections.defaultdict(list)
    for child, u in enumerate(units):
        c = label(u)
        if 1 <= c <= 255:
            children[child ^ c].append((c, child))
    out: dict[bytes, bytes] = {}
    stack = [(0 ^ offset(units[0]), b"")]
    while stack:
        pos, key = stack.pop()
        for c, child in children.get(pos, ()):
            node = child ^ offset(units[child])
            k = key + bytes([c])
            if (units[child] >> 8) & 1:
                v = units[node] & ((1 << 31) - 1)
                out[k] = strings[v: strings.index(b"\0", v)]
            stack.append((node, k))
    return dict(sorted(out.items()))


def utf8_len(data: bytes) -> int:
    """Length of the well-formed UTF-8 character at the start of `data`, 0 if malformed."""
    for n in (1, 2, 3, 4):
        try:
            data[:n].decode("utf-8")
            return n
        except UnicodeDecodeError:
            continue
    return 0


class PyNormalizer:
    """A port of sentencepiece 0.2.3's `Normalizer::Normalize` / `NormalizePrefix`
    (escape_whitespaces=True, treat_whitespace_as_suffix=False)."""

    def __init__(self, proto, charsmap: dict[bytes, bytes]):
        self.map = charsmap
        self.max_key = max((len(k) for k in charsmap), default=0)
        self.user = sorted({p.piece.encode() for p in proto.pieces if p.type == 4}, key=len,
                           reverse=True)
        self.dummy = proto.normalizer_spec.add_dummy_prefix
        self.rews = proto.normalizer_spec.remove_extra_whitespaces

    def prefix(self, data: bytes) -> tuple[bytes, int]:
        for u in self.user:  # the PrefixMatcher of user-defined symbols comes first
            if data.startswith(u):
                return u, len(u)
        for n in range(min(self.max_key, len(data)), 0, -1):  # the longest key
            if data[:n] in self.map:
                return self.map[data[:n]], n
        n = utf8_len(data)
        return (data[:n], n) if n else ("\ufffd".encode(), 1)

    def __call__(self, data: bytes) -> bytes:
        if not data:
            return b""
        if self.rews:
            while data:
                out, n = self.prefix(data)
                if out != b" ":
                    break
                data = data[n:]
            if not data:
                return b""
        meta = "\u2581".encode()
        res = bytearray(meta if self.dummy else b"")
        prev_space = self.rews
        while data:
            out, n = self.prefix(data)
            if prev_space:
                out = out.lstrip(b" ")
            if out:
                res += out.replace(b" ", meta)
                prev_space = out.endswith(b" ")
            data = data[n:]
            if not self.rews:
                prev_space = False
        if self.rews:
            while res.endswith(meta):
                del res[-3:]
        return bytes(res)


# --------------------------------------------------------------------------------------------
# Input sets
# --------------------------------------------------------------------------------------------

SPACES = [" ", "  ", "   ", "    ", "\t", "\n", "\r", "\r\n", "\x0b", "\x0c", "\u00a0",
          "\u1680", "\u2000", "\u2002", "\u2003", "\u2009", "\u200a", "\u200b", "\u200c",
          "\u200d", "\u200e", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\ufeff",
          "\u2581", "\u2581\u2581", " \u2581", "\u2581 ", "\x01", "\x1f", "\x7f", "\x85", "\x8f",
          "\x9f", "\u00ad", "\u061c", "\ufffd"]


def nfkc_edge_records() -> list[dict]:
    recs: list[tuple[str, str]] = []
    add = lambda name, text: recs.append((name, text))  # noqa: E731

    # Full-width and half-width forms.
    for name, t in [("fullwidth-latin", "ＡＢＣ１２３ａｂｃ"), ("fullwidth-sentence", "Ｈｅｌｌｏ，ｗｏｒｌｄ！"),
                    ("fullwidth-punct", "！＂＃＄％＆＇（）＊＋，－．／：；＜＝＞？＠［＼］＾＿｀｛｜｝"),
                    ("fullwidth-mixed-spaces", "ＡＢＣ　１２３　ａｂｃ"),
                    ("halfwidth-katakana", "ｶﾀｶﾅ"), ("halfwidth-katakana-voiced", "ｶﾞｷﾞｸﾞﾊﾟﾋﾟ"),
                    ("halfwidth-katakana-sentence", "ﾃｽﾄ ﾃﾞｰﾀ｡"), ("halfwidth-dakuten-alone", "ﾞﾟ"),
                    ("halfwidth-hangul", "\uffa1\uffc2\uffa4\uffc7"), ("halfwidth-forms", "￠￡￢￣￤￥￦"),
                    ("halfwidth-arrows", "￩￪￫￬￭￮"), ("katakana-voiced-decomposed", "カ\u3099ハ\u309a"),
                    ("fullwidth-tilde", "～"), ("wave-dash", "〜"), ("a-fullwidth-tilde-b", "a～b"),
                    ("tildes", "~～〜∼")]:
        add(name, t)
    # Ligatures, super/subscripts, circled, letterlike, fractions, other compatibility forms.
    for name, t in [("ligatures", "ﬁ ﬂ ﬀ ﬃ ﬄ ﬅ ﬆ"), ("ligature-words", "ﬁnal ﬂow oﬀer eﬃcient"),
                    ("superscripts", "x² y³ z¹ n⁰ e⁻¹ aⁿ"), ("subscripts", "H₂O CO₂ x₁₀"),
                    ("circled", "①②③⑩⑳"), ("circled-letters", "ⓐⓑⓩⒶ"), ("parenthesized", "⑴⒜㈠"),
                    ("squared", "㍻㍼㍽㍾㎏㎞㏄"), ("celsius", "20℃"), ("trademark", "Foo™ Bar℠"),
                    ("fractions", "¼ ½ ¾ ⅓ ⅞"), ("roman-numerals", "Ⅰ Ⅱ Ⅻ ⅻ"), ("ohm-kelvin-angstrom", "Ω K Å"),
                    ("math-letters", "𝐀𝐁𝐂 𝔸𝔹 𝒜"), ("long-s", "ſ"), ("micro", "µ"), ("ellipsis", "…"),
                    ("two-dot-leader", "‥"), ("primes", "′″‴"), ("cjk-compat-ideographs", "\uf900\uf901\uf902\ufa0e"),
                    ("cjk-radicals", "⺟⼀⼆"), ("kangxi", "⼈⼤"), ("arabic-ligature-fdfa", "\ufdfa"),
                    ("arabic-ligature-fdfb", "\ufdfb"), ("a-fdfa-b", "a\ufdfab"), ("space-fdfa-space", " \ufdfa "),
                    ("arabic-presentation", "ﻻ ﺍﻟ"), ("diaeresis", "\u00a8"), ("a-diaeresis-b", "a\u00a8b"),
                    ("a-space-diaeresis-b", "a \u00a8b"), ("diaeresis-end", "a\u00a8"),
                    ("spacing-marks", "\u00b4\u02d8\u02d9\u02da\u02db\u02dc\u02dd\u00b8\u00af"),
                    ("spacing-marks-between", "a\u00b4b\u02dcc\u00afd"), ("fullwidth-macron", "\uffe3"),
                    ("overline-forms", "\ufe49\ufe4a"), ("arabic-tatweel-forms", "\ufe70\ufe72\ufe76"),
                    ("small-forms", "﹐﹑﹒﹔"), ("vertical-forms", "︐︑︒"), ("enclosed-alnum-sup", "🄐🄑"),
                    ("ij-dz", "Ĳ ǆ ǅ"), ("ordinal", "ª º"), ("degree", "°F ℉")]:
        add(name, t)
    # Case (nmt_nfkc_cf folds case).
    for name, t in [("sharp-s", "ß Straße"), ("capital-sharp-s", "ẞ"), ("dotted-capital-i", "İstanbul"),
                    ("dotless-i", "ı"), ("sigma", "ΣΑΣ σας"), ("final-sigma", "ς"), ("greek-upper", "ΑΒΓΔ ΌΎ"),
                    ("cyrillic-upper", "ПРИВЕТ Ёж"), ("mixed-case", "HeLLo WoRLD"),
                    ("fullwidth-upper", "ＡＢＣ"), ("turkish", "IıİiĞğ"), ("cherokee", "ᏣᎳᎩ ꭰ"),
                    ("armenian-ligature", "ﬓ"), ("kelvin-sign", "\u212a"), ("angstrom-sign", "\u212b"),
                    ("titlecase-dz", "ǅungla")]:
        add(name, t)
    # Decomposed sequences and jamo.
    for name, t in [("e-acute-nfd", "e\u0301"), ("cafe-nfd", "cafe\u0301"), ("a-ring-nfd", "A\u030a"),
                    ("o-diaeresis-macron-nfd", "o\u0308\u0304"), ("stacked-marks", "a\u0300\u0301\u0302\u0303"),
                    ("mark-order", "a\u0323\u0307 a\u0307\u0323"), ("lone-acute", "\u0301"),
                    ("space-acute", " \u0301"), ("acute-space", "\u0301 "), ("hangul-precomposed", "한국어"),
                    ("hangul-lv-t-conjoining", "\u1100\u1161\u11a8"), ("hangul-lv-conjoining", "\u1100\u1161"),
                    ("hangul-lvt-words", "\u1112\u1161\u11ab\u1100\u1173\u11af"),
                    ("hangul-syllable-plus-t", "\uac00\u11a8"), ("hangul-lvtt", "\u1100\u1161\u11a8\u11a8"),
                    ("hangul-old-jamo", "\u1140\u1161"), ("compat-jamo", "ㄱㅏ"), ("compat-jamo-lvt", "ㄱㅏㄱ"),
                    ("compat-jamo-run", "ㅎㅏㄴㄱㅡㄹ"), ("compat-jamo-alone", "ㄱ ㅏ ㅎ"),
                    ("jamo-mixed-word", "가ㄱㅏ\u1100\u1161")]:
        add(name, t)
    lead = {"conj": "\u1100", "compat": "\u3131", "half": "\uffa1"}
    vowel = {"conj": "\u1161", "compat": "\u314f", "half": "\uffc2"}
    tail = {"none": "", "conj": "\u11a8", "compat": "\u3131", "half": "\uffa1"}
    for ln, lc in lead.items():
        for vn, vc in vowel.items():
            for tn, tc in tail.items():
                add(f"jamo-{ln}-{vn}-{tn}", lc + vc + tc)
    add("jamo-all-in-context", " ".join(lc + vc + tc for lc in lead.values() for vc in vowel.values()
                                        for tc in tail.values()))
    # Spaces and controls, alone, in the middle, at both ends, in runs.
    named = {"nbsp": "\u00a0", "ideographic-space": "\u3000", "zwsp": "\u200b", "zwnj": "\u200c",
             "zwj": "\u200d", "lrm": "\u200e", "rlm": "\u200f", "bom": "\ufeff", "en-quad": "\u2000",
             "em-space": "\u2003", "thin-space": "\u2009", "hair-space": "\u200a",
             "narrow-nbsp": "\u202f", "math-space": "\u205f", "ogham-space": "\u1680",
             "line-separator": "\u2028", "paragraph-separator": "\u2029", "tab": "\t",
             "newline": "\n", "cr": "\r", "crlf": "\r\n", "vt": "\x0b", "ff": "\x0c", "nul": "\x00",
             "soh": "\x01", "esc": "\x1b", "us": "\x1f", "del": "\x7f", "pad-c1": "\x80",
             "nel": "\x85", "ss3": "\x8f", "apc": "\x9f", "soft-hyphen": "\u00ad",
             "arabic-letter-mark": "\u061c", "meta": "\u2581", "replacement": "\ufffd",
             "word-joiner": "\u2060", "mongolian-vs": "\u180e", "figure-space": "\u2007"}
    for n, c in named.items():
        add(f"{n}-alone", c)
        add(f"a-{n}-b", f"a{c}b")
        add(f"{n}-a-{n}", f"{c}a{c}")
        add(f"space-{n}-space", f" {c} ")
        add(f"a-space-{n}-space-b", f"a {c} b")
        add(f"{n}-x3-a", f"{c}{c}{c}a")
    add("all-spaces-2000-200a", "".join(chr(c) for c in range(0x2000, 0x200B)))
    add("words-2000-200a", "".join(f"w{chr(c)}" for c in range(0x2000, 0x200B)) + "w")
    add("c0-all", "".join(chr(c) for c in range(0x00, 0x20)))
    add("c0-between", "".join(f"{chr(c)}x" for c in range(0x01, 0x20)))
    add("c1-all", "".join(chr(c) for c in range(0x80, 0xA0)))
    add("c1-between", "".join(f"{chr(c)}x" for c in range(0x80, 0xA0)))
    add("del-between", "a\x7fb\x7f\x7fc")
    add("controls-only", "\x01\x02\x03")
    add("controls-then-space-a", "\x01 \x02 a")
    add("space-controls-space", " \x01\x02 ")
    add("a-controls-end", "a\x01\x02")
    add("a-space-control-space-b", "a \x01 b")
    add("mixed-space-run-start", "\u3000 \u00a0\t\u2003a")
    add("mixed-space-run-middle", "a \u3000\u00a0\t\u2003\u200b\ufeff b")
    add("mixed-space-run-end", "a\u3000 \u00a0\t\u2003")
    add("mixed-space-run-all", "\u3000 \u00a0\t\u2003\u200b\ufeff\u2581 \n\r\n")
    add("mixed-space-runs-everywhere", "\u3000\u3000a \u00a0 b\t\t\u2003c\u2581\u2581\u200b")
    add("tabs-newlines", "line one\n\tline two\r\n\t\tline three\n")
    add("meta-in-text", "a\u2581b \u2581c\u2581 \u2581\u2581d\u2581")
    add("meta-run", "\u2581" * 20)
    add("meta-space-alternating", "\u2581 " * 10 + "x")
    add("zwj-emoji", "👩\u200d👩\u200d👧")
    add("zwnj-persian", "می\u200cخواهم")
    add("bom-text", "\ufeffHello\ufeff world\ufeff")
    add("replacement-chars", "a\ufffdb \ufffd\ufffd c\ufffd")
    add("nbsp-french", "« Bonjour »\u00a0! Il est 10\u00a0h\u202f30.")
    # Rewritten characters at the very start/end and next to spaces.
    for n, c in [("fi", "\ufb01"), ("circled-1", "①"), ("fullwidth-a", "Ａ"), ("reiwa", "㍻"),
                 ("diaeresis", "\u00a8"), ("fdfa", "\ufdfa"), ("ideographic-space", "\u3000"),
                 ("compat-jamo", "ㄱㅏ"), ("e-acute-nfd", "e\u0301"), ("halfwidth-ga", "ｶﾞ"),
                 ("x-superscript-2", "x²"), ("macron-fullwidth", "\uffe3")]:
        add(f"edge-{n}-start", f"{c}abc")
        add(f"edge-{n}-end", f"abc{c}")
        add(f"edge-{n}-spaces", f" {c} ")
        add(f"edge-{n}-twice-spaced", f"{c}  {c}")
        add(f"edge-{n}-glued", f"a{c}{c}b")
    # User-defined symbols of nfkc-bpe-user in context (matched before the charsmap there).
    add("user-symbols", "ﬁ ① Ａ ㍻ x²")
    add("user-symbols-glued", "ﬁ①Ａ㍻x²ﬁ")
    add("user-symbols-words", "ﬁnal x²³ ①② ＡＢＣ ㍻年")
    add("user-symbols-normalized-forms", "fi 1 A 平成 x2")
    # The rules of models/nfkc-tsv.rules.tsv, each in context.
    for i, (src, _, _) in enumerate(TSV_RULES):
        add(f"rule-{i:02d}-alone", src)
        add(f"rule-{i:02d}-in-word", f"ab{src}cd")
        add(f"rule-{i:02d}-spaced", f"ab {src} cd")
        add(f"rule-{i:02d}-start", f"{src}ab")
        add(f"rule-{i:02d}-end", f"ab{src}")
        add(f"rule-{i:02d}-space-start-end", f" {src}ab{src} ")
        add(f"rule-{i:02d}-twice", f"{src}{src}")
    for name, t in [("tsv-qx-chain", "qxzqxqxzz qx qxz qxzz q x z"), ("tsv-z-runs", "z zz zzz zzzz zzzzz zzzzzz zzzzzzz"),
                    ("tsv-space-comma", "a , b ,c  ,d   ,e ,"), ("tsv-space-comma-start", " ,a"),
                    ("tsv-two-spaces-comma-start", "  ,a"), ("tsv-three-spaces", "a   b    c     d      e"),
                    ("tsv-three-spaces-start", "   a"), ("tsv-four-spaces-start", "    a"),
                    ("tsv-three-spaces-end", "a   "), ("tsv-two-spaces-end", "a  "),
                    ("tsv-angle-space", "< > <  > << >> < >< >"), ("tsv-dash-space", "a -- b --c -- "),
                    ("tsv-dash-space-start", "-- a"), ("tsv-tilde", "~ ~~ ~~~ ~~~~ a~b"),
                    ("tsv-acute", "e\u0301 a\u0301 \u0301e e\u0301\u0301"),
                    ("tsv-double-dagger-mix", "a\u2021b a \u2021b a\u2021 b a\u2021\u2021b \u2021a a\u2021"),
                    ("tsv-dagger-mix", "\u2020 a\u2020b \u2020\u2020"),
                    ("tsv-bullet-mix", "\u2022a a\u2022b a \u2022 b a\u2022\u2022b \u2022"),
                    ("tsv-section-mix", "\u00a7 \u00a7a a\u00a7b a \u00a7b \u00a7\u00a7"),
                    ("tsv-pilcrow-mix", "\u00b6 a\u00b6 a\u00b6 b \u00b6\u00b6 a\u00b6"),
                    ("tsv-meta-rules", "\u2023a a\u2023b a\u2023 \u2023 \u2024 a\u2024b \u2023\u2581 \u2581\u2023"),
                    ("tsv-deletions-between-spaces", "a \u00ad b a \u200b\u200b b a\u00ad\u200bb \u00ad"),
                    ("tsv-deletion-only", "\u00ad\u200b~"), ("tsv-deletion-space-only", " \u00ad \u200b "),
                    ("tsv-snowman-mix", "\u2603 a\u2603b \u2603\u2603"),
                    ("tsv-tab-crlf", "a\tb\t\tc\r\nd\re\n\r\n"), ("tsv-emoji", "😀😀 a😀b"),
                    ("tsv-lead-byte-c3", "àèéêëâ")]:
        add(name, t)
    names = [n for n, _ in recs]
    assert len(names) == len(set(names)), "duplicate record names"
    return [{"name": n, "text": t} for n, t in recs]


def key_pools(charsmaps: list[dict[bytes, bytes]]) -> dict[str, list[str]]:
    """Key pools for the random sets: single- and multi-character keys of the union of the
    models' charsmaps, and proper prefixes of multi-character keys that are no keys."""
    keys = sorted({k.decode("utf-8") for cm in charsmaps for k in cm})
    keyset = set(keys)
    by_len = collections.defaultdict(list)
    for k in keys:
        by_len[min(len(k), 4)].append(k)
    partial = sorted({k[:i] for k in keys for i in range(1, len(k)) if k[:i] not in keyset})
    return {"k1": by_len[1], "k2": by_len[2], "k3": by_len[3], "k4": by_len[4], "partial": partial,
            "tsv": sorted({s for s, _, _ in TSV_RULES} | {s[:i] for s, _, _ in TSV_RULES
                                                        for i in range(1, len(s))})}


LETTERS = (list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,;:!?'\"()-_/")
           + list("éèàüößçñøåÉÜ") + list("αβγδεζηθικλμνξοπρστυφχψωΑΒΓΣ") + list("абвгдежзийклмнопАБВЁ")
           + list("的一是不了人我在有他这中大来上国个到说们为子和你") + list("あいうえおかきくけこアイウエオカキ")
           + list("한국어가나다라마바사아자차카타파하") + list("नमस्तेभारत") + ["😀", "👍🏽", "🇩🇪", "\U0010ffff", "\ue000"])


def random_records(pools: dict[str, list[str]], n: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    kinds = ["k1", "k2", "k3", "k4", "partial", "tsv", "space", "letter", "user"]
    weights = [22, 8, 6, 3, 10, 10, 22, 16, 3]
    recs = []
    for i in range(n):
        parts = []
        for _ in range(rng.randint(1, 20)):
            kind = rng.choices(kinds, weights)[0]
            if kind == "space":
                parts.append(rng.choice(SPACES))
            elif kind == "letter":
                parts.append(rng.choice(LETTERS))
            elif kind == "user":
                parts.append(rng.choice(USER_SYMBOLS))
            else:
                parts.append(rng.choice(pools[kind]))
        recs.append({"name": f"random-{i:05d}", "text": "".join(parts)})
    return recs


FRAGMENTS = [b"\xe4\xb8\xad", b"\xe4\xb8", b"\xf0\x9f\x98\x80", b"\xf0\x9f", b"\xc3\xa9", b"\xc3",
             b"\x80", b"\xbf", b"\xc0\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xff", b"\xfe",
             b"\xef\xbf\xbd", b"\xef\xbf", b"\xe2\x96\x81", b"\xe2\x96", b"a", b" ", b"  "]


def invalid_records(pools: dict[str, list[str]], n: int, seed: int) -> list[dict]:
    """Random bytes biased to UTF-8 fragments, mixed with keys, keys cut inside a character,
    spaces; every record has at least one malformed byte."""
    rng = random.Random(seed)
    keys = pools["k1"] + pools["k2"] + pools["k3"] + pools["k4"]
    recs = []
    i = 0
    while len(recs) < n:
        parts = []
        for _ in range(rng.randint(1, 12)):
            r = rng.random()
            if r < 0.25:
                parts.append(rng.choice(FRAGMENTS))
            elif r < 0.40:
                parts.append(bytes([rng.randrange(256)]))
            elif r < 0.60:
                parts.append(rng.choice(keys + pools["tsv"]).encode())
            elif r < 0.80:  # a key cut inside its last character, or after a lead byte
                k = rng.choice(keys + pools["partial"]).encode()
                parts.append(k[: rng.randint(1, len(k) - 1)] if len(k) > 1 else k)
            else:
                parts.append(rng.choice(SPACES + LETTERS).encode())
        data = b"".join(parts)
        i += 1
        try:
            data.decode("utf-8")
            continue  # valid: not for this set
        except UnicodeDecodeError:
            pass
        recs.append({"name": f"invalid-{len(recs):05d}", "text_b64": base64.b64encode(data).decode("ascii")})
    return recs


def corpus_records(shared: Path, seed: int) -> tuple[list[dict], list[dict]]:
    """Per file (english and every multi/ file but ar.txt): 4 seeded random lines (at most 300
    characters each) and one 500-character chunk from a seeded random place."""
    rng = random.Random(seed)
    recs, used = [], []
    for rel in ["english.txt"] + [f"multi/{m}.txt" for m in MULTI]:
        assert "ar.txt" not in rel
        data = (shared / "corpus" / rel).read_bytes()
        text = data.decode("utf-8")
        lines = [line for line in text.split("\n") if line.strip()]
        stem = rel.split("/")[-1].removesuffix(".txt")
        for j in range(4):
            recs.append({"name": f"{stem}-line-{j:02d}", "text": rng.choice(lines)[:300]})
        at = rng.randrange(0, len(text) - 500)
        recs.append({"name": f"{stem}-chunk", "text": text[at: at + 500]})
        used.append({"file": rel, "sha256": hashlib.sha256(data).hexdigest()})
    return recs, used


# --------------------------------------------------------------------------------------------
# Facts checked by experiment (asserted here, described in PROVENANCE.md)
# --------------------------------------------------------------------------------------------


def check_facts(sps: dict, protos: dict, charsmaps: dict) -> dict:
    facts: dict = {}
    bpe, ug, tsv, raw, user = (sps[s] for s in ["nfkc-bpe", "nfkc-ug", "nfkc-tsv", "nfkc-tsv-raw",
                                                 "nfkc-bpe-user"])
    N = lambda sp, t: sp.normalize(t)  # noqa: E731
    P = lambda sp, t: [sp.IdToPiece(i) for i in sp.encode(t)]  # noqa: E731
    nfkc = charsmaps["nfkc-bpe"]
    cf = charsmaps["nfkc-ug"]

    # (a) What the nmt_nfkc map does to whitespace and controls (map entries).
    look = lambda cm, c: cm.get(c.encode()).decode() if c.encode() in cm else None  # noqa: E731
    to_space = sorted(k.decode() for k, v in nfkc.items() if v == b" ")
    deleted = sorted(k.decode() for k, v in nfkc.items() if v == b"")
    assert [hex(ord(c)) for c in to_space] == [
        "0x9", "0xa", "0xc", "0xd", "0xa0", "0x61c", "0x1680", "0x2000", "0x2001", "0x2002",
        "0x2003", "0x2004", "0x2005", "0x2006", "0x2007", "0x2008", "0x2009", "0x200a",
        "0x200b", "0x200c", "0x200e", "0x200f", "0x2028", "0x2029", "0x202f", "0x205f",
        "0x2581", "0x3000", "0xfeff", "0xfffd"], to_space
    assert deleted == [chr(c) for c in [*range(1, 9), 0x0B, *range(0x0E, 0x20), 0x7F, 0x8F, 0x9F]]
    for c in ["\u200d", "\x85", "\x80", "\u00ad", "\uff5e", "\u301c", " ", "\u2060", "\u180e", "\x00"]:
        assert look(nfkc, c) is None, repr(c)
    assert look(nfkc, "\u00a8") == " \u0308" and look(nfkc, "\ufdfa").count(" ") == 3
    assert look(nfkc, "\u2460") == "1" and look(nfkc, "\ufb01") == "fi" and look(nfkc, "\u337b") == "平成"
    with_space = sorted(k.decode() for k, v in nfkc.items() if v != b" " and b" " in v)
    assert all(nfkc[k.encode()].startswith(b" ") for k in with_space if k not in "\ufdfa\ufdfb")
    facts["a_nmt_nfkc_map"] = {
        "keys": len(nfkc),
        "keys_by_chars": dict(sorted(collections.Counter(len(k.decode()) for k in nfkc).items())),
        "longest_key_bytes": max(len(k) for k in nfkc),
        "longest_output_bytes": max(len(v) for v in nfkc.values()),
        "mapped_to_space": ["U+%04X" % ord(c) for c in to_space],
        "deleted": ["U+%04X" % ord(c) for c in deleted],
        "not_keys": ["U+200D", "U+0085", "U+0080", "U+00AD", "U+FF5E", "U+301C", "U+0020", "U+2060",
                     "U+180E", "U+0000"],
        "outputs_with_a_space_other_than_single_space": len(with_space),
        "outputs_with_an_inner_space": ["U+%04X" % ord(k.decode()) for k, v in nfkc.items()
                                        if b" " in v.strip(b" ")],
        "keys_with_a_shorter_key_as_prefix": sum(
            1 for k in nfkc if any(k[:i] in nfkc for i in range(1, len(k)))),
    }
    facts["a_nmt_nfkc_examples"] = {c: look(nfkc, c) for c in
                                   ["\u3000", "\u200b", "\ufeff", "\t", "\n", "\x01", "\x7f", "\u00a0",
                                    "\ufffd", "\u2581", "\u00a8", "\ufdfa", "ｶﾞ", "ㄱㅏ", "\u1100\u1161\u11a8",
                                    "e\u0301", "\uf900", "㍻", "℃", "™", "¼", "ß", "ς"]}
    # nmt_nfkc_cf = nmt_nfkc plus case folding.
    assert all(k in cf for k in nfkc)
    # Simple case folding (CaseFolding.txt status C+S), not full: ß stays, ẞ -> ß, İ is no key.
    assert look(cf, "A") == "a" and look(cf, "ß") is None and look(cf, "Σ") == "σ" and look(cf, "ς") == "σ"
    assert look(cf, "Ａ") == "a" and look(cf, "İ") is None and look(cf, "ẞ") == "ß"
    assert look(cf, "Ⅻ") == "xii" and look(cf, "ǅ") == "dž" and look(cf, "\u212a") == "k"
    assert N(ug, "ΣΑΣ σας") == "▁σασ▁σασ" and N(ug, "Straße ẞ") == "▁straße▁ß"
    assert N(ug, "İstanbul") == "▁İstanbul"
    facts["a_nmt_nfkc_cf_map"] = {
        "keys": len(cf), "keys_not_in_nmt_nfkc": len(set(cf) - set(nfkc)),
        "same_output_as_nmt_nfkc": sum(1 for k in nfkc if cf[k] == nfkc[k]),
        "examples": {c: look(cf, c) for c in ["A", "Ａ", "ß", "ẞ", "Σ", "ς", "İ", "ﬁ", "Ⅻ", "ǅ", "\u212a"]},
    }

    # (b) Normalized text with nmt_nfkc (remove_extra_whitespaces=True).
    ex_b = {"\u3000a\u3000\u3000b\u3000": "▁a▁b", "a\u200bb": "▁a▁b", "\ufeffa": "▁a",
            "a\x01b": "▁ab", "a \x01 b": "▁a▁b", "\x01": "", "a\tb\nc": "▁a▁b▁c", "ＡＢＣ１２３": "▁ABC123",
            "ｶﾞ": "▁ガ", "ㄱㅏ": "▁가", "x²": "▁x2", "①": "▁1", "a\u00a8b": "▁a▁\u0308b",
            "\u00a8": "▁\u0308", "a\u00a8": "▁a▁\u0308", "～": "▁～", "a▁b": "▁a▁b", "a ▁ b": "▁a▁b",
            "\ufdfa": "▁صلى▁الله▁عليه▁وسلم", "a\u200db": "▁a\u200db", "a\x85b": "▁a\x85b"}
    for t, want in ex_b.items():
        assert N(bpe, t) == want, (t, N(bpe, t), want)
    facts["b_nmt_nfkc_normalized"] = ex_b
    # (c) Malformed bytes become U+FFFD *after* the lookup: a byte that is not part of a
    # well-formed sequence gives a U+FFFD that is not looked up in the map, while a literal
    # U+FFFD in the input is a key (-> " " in nmt_nfkc, "?" in the TSV rules).
    assert bpe.normalize(b"a\xffb") == "▁a\ufffdb".encode() and N(bpe, "a\ufffdb") == "▁a▁b"
    assert bpe.encode(b"a\xffb") != bpe.EncodeAsIds(fffd_text(b"a\xffb"))
    assert tsv.normalize(b"a\xffb") == "▁a\ufffdb".encode() and N(tsv, "a\ufffdb") == "▁a?b"
    # A key cut inside a character: the trie walk fails, the text is read one malformed byte
    # at a time ("ｶﾞ" is EF BD B6 EF BE 9E).
    assert bpe.normalize("ｶﾞ".encode()[:5]) == "▁カ\ufffd\ufffd".encode()
    assert bpe.normalize("ｶ".encode() + b"\xef\xbe") == "▁カ\ufffd\ufffd".encode()
    facts["c_malformed"] = {
        "a FF b (nfkc-bpe)": bpe.normalize(b"a\xffb").decode(),
        "a U+FFFD b (nfkc-bpe)": N(bpe, "a\ufffdb"),
        "a FF b (nfkc-tsv)": tsv.normalize(b"a\xffb").decode(),
        "a U+FFFD b (nfkc-tsv)": N(tsv, "a\ufffdb"),
        "ｶﾞ cut after 5 bytes (nfkc-bpe)": bpe.normalize("ｶﾞ".encode()[:5]).decode(),
        "python_api": "SentencePieceProcessor.encode/normalize accept bytes and pass them unchanged",
    }

    # (d) Whitespace produced by the rules, remove_extra_whitespaces=True (nfkc-tsv) and False
    # (nfkc-tsv-raw). Only the *leading* spaces of a rule's output are dropped after a space
    # (from the input or the end of an earlier output); spaces inside one output are never
    # collapsed; trailing U+2581 of the whole text are dropped whatever made them.
    ex_d = {
        "a\u2021b": ("▁a▁▁b", "▁a▁▁b"),       # "  " from ONE rule: kept (not squeezed)
        "a \u2021b": ("▁a▁b", "▁a▁▁▁b"),      # after a space: the output's leading spaces go
        "a\u2021 b": ("▁a▁▁b", "▁a▁▁▁b"),     # a space after it: dropped
        "a\u2021\u2021b": ("▁a▁▁b", "▁a▁▁▁▁b"),
        "\u2021a": ("▁a", "▁▁▁a"), "a\u2021": ("▁a", "▁a▁▁"), "\u2021": ("", "▁▁▁"),
        "a  b": ("▁a▁b", "▁a▁▁b"),            # two input spaces: squeezed
        "a\u2020b": ("▁aa▁▁bb", "▁aa▁▁bb"),   # "a  b" from one rule: kept
        "a\u00b6": ("▁aP", "▁aP▁"), "a\u00b6 ": ("▁aP", "▁aP▁▁"), "\u00b6": ("▁P", "▁P▁"),
        "a\u00a7b": ("▁a▁Sb", "▁a▁Sb"), "a \u00a7b": ("▁a▁Sb", "▁a▁▁Sb"), "\u00a7": ("▁S", "▁▁S"),
        "a\u2603b": ("▁ax▁yb", "▁ax▁yb"),
        "\u2022": ("", "▁▁"), "a\u2022b": ("▁a▁b", "▁a▁b"), "a \u2022 b": ("▁a▁b", "▁a▁▁▁b"),
        "a\u2023b": ("▁a▁b", "▁a▁b"), "\u2023a": ("▁▁a", "▁▁a"), "a\u2023": ("▁a", "▁a▁"),
        "\u2023": ("", "▁▁"), "a \u2023b": ("▁a▁▁b", "▁a▁▁b"), "a\u2023 b": ("▁a▁▁b", "▁a▁▁b"),
        "a\u00adb": ("▁ab", "▁ab"), "\u00ad": ("", "▁"), "\u00ad a": ("▁a", "▁▁a"),
        "a \u00ad b": ("▁a▁b", "▁a▁▁b"), "a \u200b\u200b b": ("▁a▁b", "▁a▁▁b"),
        "a ,b": ("▁a,b", "▁a,b"), " ,a": ("▁,a", "▁,a"), "  ,a": ("▁,a", "▁▁,a"),
        "a  ,b": ("▁a▁,b", "▁a▁,b"),
        "a   b": ("▁a_b", "▁a_b"), "   a": ("▁_a", "▁_a"), "  a": ("▁a", "▁▁▁a"),
        "    a": ("▁_▁a", "▁_▁a"), "a    b": ("▁a_▁b", "▁a_▁b"), "a   ": ("▁a_", "▁a_"),
        "qxzqxqxzz": ("▁*QX*z", "▁*QX*z"), "zzz": ("▁Zz", "▁Zz"), "zzzz": ("▁ZZ!", "▁ZZ!"),
        "e\u0301\u0301": ("▁é", "▁é"), "~~~": ("▁≈", "▁≈"), "a -- b": ("▁a▁—▁b", "▁a▁—▁b"),
        "a --": ("▁a▁--", "▁a▁--"), "a -- ": ("▁a▁—", "▁a▁—▁"),
    }
    for t, (want, want_raw) in ex_d.items():
        assert N(tsv, t) == want, (t, N(tsv, t), want)
        assert N(raw, t) == want_raw, (t, N(raw, t), want_raw)
    facts["d_rule_whitespace"] = {t: {"nfkc-tsv": a, "nfkc-tsv-raw": b} for t, (a, b) in ex_d.items()}
    # nmt_nfkc without remove_extra_whitespaces (nfkc-bpe-user).
    ex_d2 = {"\x01": "▁", " \x01": "▁▁", "": "", "  ": "▁▁▁", "a\t\tb": "▁a▁▁b", "a\u3000b ": "▁a▁b▁",
             "a\u00a8b": "▁a▁\u0308b", "a \u00a8b": "▁a▁▁\u0308b"}
    for t, want in ex_d2.items():
        assert N(user, t) == want, (t, N(user, t))
    facts["d_nmt_nfkc_keep_whitespace"] = ex_d2
    assert P(user, "\x01") == ["▁"] and user.encode("") == [] and bpe.encode("\x01") == []

    # (e) User-defined symbols are matched on the raw text before the charsmap.
    ex_e = {t: P(user, t) for t in ["\ufb01", "\ufb01x", "fi", "①②", "ＡＢ", "x²³", "㍻年"]}
    assert ex_e["\ufb01"] == ["▁", "\ufb01"] and ex_e["①②"][:2] == ["▁", "①"]
    assert ex_e["ＡＢ"][:2] == ["▁", "Ａ"] and "x²" in ex_e["x²³"] and "\ufb01" not in ex_e["fi"]
    assert N(user, "ﬁ ﬂ") == "▁ﬁ▁fl"
    facts["e_user_defined_before_charsmap"] = ex_e

    # (f) Decoding gives the normalized text back, never the input.
    ex_f = {t: bpe.DecodeIds(bpe.encode(t)) for t in ["ＡＢＣ", "ﬁ", "a\u3000\u3000b", "\u00a8", "①"]}
    assert ex_f == {"ＡＢＣ": "ABC", "ﬁ": "fi", "a\u3000\u3000b": "a b", "\u00a8": "\u0308", "①": "1"}
    ex_f2 = {t: tsv.DecodeIds(tsv.encode(t)) for t in ["\u2023a", "a\u2021b", "\u00a7"]}
    # remove_extra_whitespaces: every leading U+2581 is dropped when decoding.
    assert ex_f2 == {"\u2023a": "a", "a\u2021b": "a  b", "\u00a7": "S"}, ex_f2
    facts["f_decode"] = {"nfkc-bpe": ex_f, "nfkc-tsv": ex_f2}

    # (g) Every model's normalizer spec.
    facts["g_normalizer_specs"] = {
        s: {"name": p.normalizer_spec.name, "add_dummy_prefix": p.normalizer_spec.add_dummy_prefix,
            "remove_extra_whitespaces": p.normalizer_spec.remove_extra_whitespaces,
            "escape_whitespaces": p.normalizer_spec.escape_whitespaces,
            "normalization_rule_tsv": p.normalizer_spec.normalization_rule_tsv,
            "precompiled_charsmap_bytes": len(p.normalizer_spec.precompiled_charsmap),
            "charsmap_keys": len(charsmaps[s]),
            "denormalizer_spec_charsmap_bytes": len(p.denormalizer_spec.precompiled_charsmap)}
        for s, p in protos.items()}
    return facts


# --------------------------------------------------------------------------------------------


def main() -> int:
    repo = Path(__file__).resolve().parents[2]
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", type=Path, default=repo.parent / "shared" / "data")
    ap.add_argument("--fixtures", type=Path, default=repo / "tests" / "fixtures")
    args = ap.parse_args()
    shared: Path = args.shared.resolve()
    fixtures: Path = args.fixtures.resolve()
    out = fixtures / "sp_norm"
    versions = {"python": sys.version.split()[0], "sentencepiece": spm.__version__,
                "protobuf": __import__("google.protobuf").protobuf.__version__}
    assert spm.__version__ == "0.2.3", spm.__version__

    for d in [out / "models", out / "inputs", out / "vectors", out / "normalized"]:
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
    (out / TSV_REL).write_text(tsv_text(), encoding="utf-8")

    # 1. Train. The working directory is the fixture folder, so that the rule file's path
    # stored in the model (normalizer_spec.normalization_rule_tsv) is the relative TSV_REL.
    lines, used = corpus_lines(shared)
    manifest_models: dict = {}
    protos: dict = {}
    cwd = os.getcwd()
    os.chdir(out)
    try:
        for stem, cfg in MODELS.items():
            opts = {**COMMON, **cfg}
            w = io.BytesIO()
            spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=w, **opts)
            (out / "models" / f"{stem}.model").write_bytes(w.getvalue())
            m = sp_pb2.ModelProto()
            m.ParseFromString(w.getvalue())
            assert len(m.pieces) == cfg["vocab_size"]
            protos[stem] = m
            manifest_models[stem] = {
                "source": "trained here: sentencepiece.SentencePieceTrainer.train(sentence_iterator=<sample lines>, **trainer_options)",
                "trainer_options": {k: v for k, v in opts.items() if k != "minloglevel"},
            }
    finally:
        os.chdir(cwd)
    stems = list(MODELS)
    sps = {s: spm.SentencePieceProcessor(model_file=str(out / "models" / f"{s}.model")) for s in stems}
    charsmaps = {}
    for stem in stems:
        p = protos[stem]
        cm = decode_charsmap(p.normalizer_spec.precompiled_charsmap)
        # The decoder agrees with sentencepiece's own decompiler.
        dec = spm.SentencePieceNormalizer(model_file=str(out / "models" / f"{stem}.model")).Decompile()
        assert {k.encode(): v.encode() for k, v in dec} == cm, stem
        charsmaps[stem] = cm
        types = collections.Counter(sp_pb2.ModelProto.SentencePiece.Type.Name(x.type) for x in p.pieces)
        manifest_models[stem].update({
            "trainer_spec_in_file": spec_dict(p.trainer_spec),
            "normalizer_spec_in_file": spec_dict(p.normalizer_spec),
            "file": f"models/{stem}.model",
            "vocab_size": len(p.pieces),
            "piece_types": dict(sorted(types.items())),
            "charsmap_keys": len(cm),
        })

    # 2. Facts.
    facts = check_facts(sps, protos, charsmaps)

    # 3. Inputs.
    pools = key_pools([charsmaps["nfkc-ug"], charsmaps["nfkc-bpe"]])
    corpus, corpus_used = corpus_records(shared, 20240702)
    write_jsonl(out / "inputs" / "nfkc_edge.jsonl", None, nfkc_edge_records())
    write_jsonl(out / "inputs" / "random.jsonl", None, random_records(pools, 700, 20240703))
    write_jsonl(out / "inputs" / "invalid_utf8.jsonl", None, invalid_records(pools, 500, 20240704))
    write_jsonl(out / "inputs" / "corpus.jsonl", None, corpus)
    sets = {"sp_edge": "sentencepiece/inputs/sp_edge.jsonl"}
    for s in ["nfkc_edge", "random", "invalid_utf8", "corpus"]:
        sets[s] = f"sp_norm/inputs/{s}.jsonl"

    # 4. Vectors, and the normalized text checked against the Python port.
    pynorms = {s: PyNormalizer(protos[s], charsmaps[s]) for s in stems}
    counts: dict = {}
    normalized: dict = {s: [] for s in stems}
    port_checked = 0
    for set_name, inputs_rel in sets.items():
        records = load_set(fixtures, inputs_rel)
        for stem in stems:
            sp = sps[stem]
            recs = []
            n_ids = n_dec = n_fffd_differs = 0
            for name, data, is_text in records:
                ids = sp.encode(data)  # raw bytes straight to the C++ normalizer
                if is_text:
                    assert sp.EncodeAsIds(data.decode("utf-8")) == ids, (stem, name)
                elif ids != sp.EncodeAsIds(fffd_text(data)):
                    n_fffd_differs += 1
                norm = sp.normalize(data)
                assert pynorms[stem](data) == norm, (stem, name, pynorms[stem](data), norm)
                port_checked += 1
                if set_name == "nfkc_edge":
                    normalized[stem].append({"set": set_name, "name": name,
                                             "normalized_b64": base64.b64encode(norm).decode("ascii")})
                dec = sp.DecodeIds(ids).encode("utf-8")
                rec = {"name": name, "ids": ids}
                # Omitted when the decoding is the input itself (after the one-U+FFFD-per-
                # malformed-byte rule, which changes nothing in valid UTF-8).
                if dec != fffd_text(data).encode("utf-8"):
                    rec["decoded_b64"] = base64.b64encode(dec).decode("ascii")
                    n_dec += 1
                n_ids += len(ids)
                recs.append(rec)
            header = {"model": stem, "set": set_name, "inputs": inputs_rel, "count": len(records),
                      "sentencepiece": spm.__version__}
            (out / "vectors" / stem).mkdir(exist_ok=True)
            write_jsonl(out / "vectors" / stem / f"{set_name}.jsonl.gz", header, recs)
            c = {"records": len(records), "ids": n_ids, "decoded_differs": n_dec}
            if set_name == "invalid_utf8":
                c["ids_differ_from_fffd_substitution"] = n_fffd_differs
            counts.setdefault(set_name, {})[stem] = c
    for stem in stems:
        write_jsonl(out / "normalized" / f"{stem}.jsonl.gz",
                    {"model": stem, "sets": ["nfkc_edge"], "count": len(normalized[stem]),
                     "what": "sentencepiece normalize(input bytes), base64"}, normalized[stem])

    # 5. Manifest.
    files = {}
    for p in sorted(out.rglob("*")):
        if p.is_file() and p.name not in ("MANIFEST.json", "PROVENANCE.md", ".gitattributes"):
            files[str(p.relative_to(out))] = {"bytes": p.stat().st_size, "sha256": sha256(p)}
    manifest = {
        "generator": "tests/scripts/gen_sp_norm_vectors.py",
        "versions": versions,
        "training_sample": {"sentences": len(lines), "bytes": sum(len(x.encode()) + 1 for x in lines),
                            "files": used},
        "tsv_rules": [{"source": s, "target": t, "why": why,
                       "line": tsv_text().split("\n")[i]} for i, (s, t, why) in enumerate(TSV_RULES)],
        "models": manifest_models,
        "sets": {s: {"inputs": r, "counts": counts[s]} for s, r in sets.items()},
        "corpus_set_files": corpus_used,
        "python_port_checked_records": port_checked,
        "facts": facts,
        "files": files,
    }
    (out / "MANIFEST.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=1) + "\n")
    total = sum(f["bytes"] for f in files.values())
    print(f"wrote {len(files)} files, {total} bytes")
    for s in sets:
        print(s, {k: (v["ids"], v["decoded_differs"]) for k, v in counts[s].items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
