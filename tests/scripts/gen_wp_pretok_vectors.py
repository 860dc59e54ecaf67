#!/usr/bin/env python3
"""Generate picobpe's reference data for WordPiece `tokenizer.json` files whose pre-tokenizer is
not `BertPreTokenizer`, with the real Hugging Face `tokenizers` library (never with picobpe).

Usage (from the repository root; about 20 seconds):

    pip install tokenizers==0.22.2
    python3 tests/scripts/gen_wp_pretok_vectors.py

It (re)writes, under tests/fixtures/wordpiece/:

    <model>/tokenizer.json        bert-cased-8k's vocabulary, BertNormalizer and WordPiece
                                  decoder (no post-processor, padding or truncation) with one of
                                  these pre-tokenizers:
        wp-whitespace                   Whitespace (\\w+|[^\\w\\s]+)
        wp-whitespace-digits            Sequence[Whitespace, Digits(individual_digits)]
        wp-wsplit-punct-contig-digits   Sequence[WhitespaceSplit, Punctuation(contiguous),
                                        Digits]
        wp-wsplit-punct-removed         Sequence[WhitespaceSplit, Punctuation(removed)]
        wp-wsplit-punct                 Sequence[WhitespaceSplit, Punctuation] (the words of
                                        BertPreTokenizer)
        wp-punct-digits                 Sequence[Punctuation, Digits(individual_digits)] (no
                                        whitespace split: words keep their spaces)
    <model>/<set>.jsonl.gz        tokenizers' ids for the shared inputs of
                                  tests/fixtures/vectors/inputs (sets fixtures, corpus, random,
                                  invalid_utf8) and for pretok_edge; the record format of
                                  gen_wp_vectors.py ("all": added tokens recognized; "ordinary",
                                  when it differs: read as text)
    <model>/probes.jsonl          the pretok_edge records that are UTF-8 with their ids and
                                  tokenizers' decode of them (the shape of probes.jsonl)
    inputs/pretok_edge.jsonl      inputs this script makes (hand-written, then seeded mixes):
                                  letters, ASCII and other digits, connector punctuation,
                                  combining marks, joiners, symbols, punctuation runs, Unicode
                                  whitespace, CJK, added tokens and bytes that are not UTF-8 next
                                  to each other (records {"name", "text_b64"}); its ids are the
                                  set pretok_edge
    inputs/pretok_classes.json    the class of every Unicode scalar value under the pre-tokenizers
                                  Whitespace ("w" \\w, "s" removed, "o" other), Digits (numeric),
                                  Punctuation and WhitespaceSplit, found by pre-tokenizing
                                  "a" + c + "a"; run-length lists of [first code point, value]
                                  (surrogates skipped)
    wp-pretok-MANIFEST.json       versions, pre-tokenizers, counts, sha256, class counts

Bytes that are not UTF-8: the reference runs on Rust's `String::from_utf8_lossy` of the bytes
(each maximal invalid subsequence one U+FFFD), the WordPiece family's rule.
"""

from __future__ import annotations

import os

os.environ["RAYON_NUM_THREADS"] = "2"

import base64  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import random  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import tokenizers  # noqa: E402
from tokenizers import Tokenizer, pre_tokenizers  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_wp_norm_vectors import write_vectors  # noqa: E402
from gen_wp_vectors import load_set_bytes  # noqa: E402

SCRIPT = "tests/scripts/gen_wp_pretok_vectors.py"
ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests/fixtures"
OUT = FIXTURES / "wordpiece"
BASE = OUT / "bert-cased-8k/tokenizer.json"
SETS = ["fixtures", "corpus", "random", "invalid_utf8"]
P = pre_tokenizers
MODELS = {
    "wp-whitespace": lambda: P.Whitespace(),
    "wp-whitespace-digits": lambda: P.Sequence([P.Whitespace(), P.Digits(individual_digits=True)]),
    "wp-wsplit-punct-contig-digits": lambda: P.Sequence(
        [P.WhitespaceSplit(), P.Punctuation(behavior="contiguous"),
         P.Digits(individual_digits=False)]),
    "wp-wsplit-punct-removed": lambda: P.Sequence(
        [P.WhitespaceSplit(), P.Punctuation(behavior="removed")]),
    "wp-wsplit-punct": lambda: P.Sequence([P.WhitespaceSplit(), P.Punctuation()]),
    "wp-punct-digits": lambda: P.Sequence([P.Punctuation(), P.Digits(individual_digits=True)]),
}

# Fragments of the edge set, by what they test.
WORDS = ["a", "Z", "\u00e9", "\u00df", "\u03a9", "\u0434", "abc", "Hello"]
DIGITS = ["0", "7", "42", "\u0663", "\u0969", "\uff13", "\u00b2", "\u00bd", "\u216b", "\u2460"]
CONNECTORS = ["_", "\u203f", "\uff3f"]
MARKS = ["\u0301", "\u0903"]
JOINERS = ["\u200d", "\u200c"]
SYMBOLS = ["$", "+", "<", "=", ">", "^", "`", "|", "~", "\u20ac", "\u00a9", "\U0001f600"]
PUNCT = ["?!?", "...", "--", "\u00ab\u00bb", "\u3002\u3001", ",", ".", "'", "-", "(", ")"]
SPACES = [" ", "  ", "\u00a0", "\u3000", "\u2028", "\t", "\n"]
CJK = ["\u4e2d", "\u6587\u5b57", "\U00020000"]
SPECIALS = ["[CLS]", "[SEP]", "[MASK]", "[UNK]", "[PAD]"]
INVALID = [b"\xff", b"\xe2\x82", b"\x80", b"\xbf", b"\xc3", b"\xf0\x9f"]
FRAGMENTS = [f.encode() for f in WORDS + DIGITS + CONNECTORS + MARKS + JOINERS + SYMBOLS + PUNCT
             + SPACES + CJK + SPECIALS] + INVALID

HAND = [
    ("empty", b""),
    ("ws-space", b" "), ("ws-spaces", b"   "), ("ws-tab-nl", b"\t\n"),
    ("ws-nbsp", "\u00a0".encode()), ("ws-ideographic", "\u3000".encode()),
    ("ws-line-sep", "\u2028".encode()), ("ws-mixed", " \t\u00a0\n\u3000\u2028 ".encode()),
    ("run-letters-digits", b"abc123def"), ("run-alternating", b"x1y2z3"),
    ("run-arabic-indic", "a\u0661\u0662\u0663b".encode()),
    ("run-devanagari", "12\u09694".encode()), ("run-fullwidth", "\uff13\uff14\uff15".encode()),
    ("run-superscript", "x\u00b2+y\u00b2".encode()), ("run-fraction", "10\u00bd".encode()),
    ("run-roman", "Henry\u216b".encode()), ("run-circled", "\u2460\u2461\u2462".encode()),
    ("run-all-digits", "1\u0663\u0969\uff13\u00b2\u00bd\u216b\u2460".encode()),
    ("conn-snake", b"snake_case_42"), ("conn-dunder", b"__init__"), ("conn-digits", b"_1_2_"),
    ("conn-undertie", "a\u203fb".encode()), ("conn-fullwidth", "a\uff3fb1".encode()),
    ("mark-acute", "e\u0301".encode()), ("mark-after-digit", "1\u0301".encode()),
    ("mark-alone", "\u0301".encode()), ("mark-visarga", "a\u0903b".encode()),
    ("mark-after-underscore", "_\u0301".encode()), ("mark-after-space", " \u0301a".encode()),
    ("zwj-letters", "a\u200db".encode()), ("zwnj-digits", "1\u200c2".encode()),
    ("zwj-emoji", "\U0001f468\u200d\U0001f469".encode()), ("zwj-alone", "\u200d".encode()),
    ("sym-dollar", b"a$b"), ("sym-sum", b"1+2=3"), ("sym-angle", b"<a>"), ("sym-caret", b"x^2"),
    ("sym-backtick", b"`a`"), ("sym-bar", b"a|b"), ("sym-tilde", b"~1"),
    ("sym-euro", "5\u20ac".encode()), ("sym-copyright", "\u00a92024".encode()),
    ("sym-emoji", "\U0001f600a1".encode()),
    ("punct-qe", b"wait?!?"), ("punct-ellipsis", b"a...b"), ("punct-dashes", b"1--2"),
    ("punct-guillemets", "\u00aba\u00bb".encode()),
    ("punct-cjk", "\u4e2d\u3002\u3001\u6587".encode()), ("punct-decimal", b"1,000.50"),
    ("punct-apostrophe", b"don't"), ("punct-mixed-run", "?!-.,\u00ab\u3002$+".encode()),
    ("ws-nbsp-between", "a\u00a0b".encode()), ("ws-ideographic-digits", "1\u30002".encode()),
    ("ws-line-sep-between", "a\u2028b".encode()), ("ws-tab-nl-between", b"a\tb\nc"),
    ("cjk-digits", "\u4e2d\u6587123".encode()), ("cjk-underscore", "\u65e5\u672c\u8a9e_x".encode()),
    ("cjk-ext-b", "\U000200001".encode()),
    ("special-punct", b"[CLS]?"), ("punct-special", b"?[SEP]"), ("special-digits", b"[MASK]42"),
    ("digits-special", b"42[MASK]"), ("special-pair", b"[CLS][SEP]"),
    ("special-in-word", b"a[MASK]b"), ("special-underscore", b"[SEP]_1"),
    ("special-between-digits", b"1[CLS]2"), ("special-lower", b"[cls]"),
    ("special-spaced", b"[ MASK ]"), ("special-punct-run", b"...[UNK]?!?"),
    ("invalid-letters", b"a\xffb"), ("invalid-digits", b"1\xff2"),
    ("invalid-truncated", b"a\xe2\x823"), ("invalid-continuations", b"\x80\x80"),
    ("invalid-after-digit", b"1\xbf"), ("invalid-x-digit", b"x\xe2\x821"),
    ("invalid-other-digits", "\u0663".encode() + b"\xff" + "\u0969".encode()),
    ("invalid-underscores", b"_\xff_"), ("invalid-alone", b"\xff"),
    ("invalid-special", b"[CLS]\xff[SEP]"),
]


def pretok_edge() -> list[tuple[str, bytes]]:
    """The hand-written cases, each fragment alone, between letters and between digits, then
    seeded random mixes of 1 to 12 fragments; also written to inputs/pretok_edge.jsonl."""
    out = list(HAND)
    for i, f in enumerate(FRAGMENTS):
        out += [(f"alone-{i}", f), (f"letters-{i}", b"a" + f + b"b"),
                (f"digits-{i}", b"1" + f + b"2")]
    rng = random.Random(39)
    for n in range(300):
        out.append((f"mix-{n}", b"".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 12)))))
    assert len({name for name, _ in out}) == len(out)
    path = OUT / "inputs" / "pretok_edge.jsonl"
    path.parent.mkdir(exist_ok=True)
    path.write_text("".join(json.dumps({"name": name, "text_b64": base64.b64encode(data).decode()})
                            + "\n" for name, data in out))
    return out


def scalar_values():
    return (cp for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF)


def classify(pre_tokenizer, outcomes: dict) -> list[list]:
    """Run-length list of the class of every scalar value c: `outcomes` maps a function of c to
    the pieces of "a" + c + "a" that give each class; any other result is an error."""
    runs: list[list] = []
    pre_tokenize = pre_tokenizer.pre_tokenize_str
    for cp in scalar_values():
        c = chr(cp)
        pieces = [p for p, _ in pre_tokenize("a" + c + "a")]
        value = next((v for v, expect in outcomes.items() if pieces == expect(c)), None)
        if value is None:
            raise SystemExit(f"{pre_tokenizer}: U+{cp:04X} gives {pieces!r}")
        if not runs or runs[-1][1] != value:
            runs.append([cp, value])
    return runs


def char_classes() -> dict:
    def whole(c):
        return ["a" + c + "a"]

    def isolated(c):
        return ["a", c, "a"]

    def removed(c):
        return ["a", "a"]

    return {
        "tokenizers": tokenizers.__version__,
        "script": SCRIPT,
        "format": "run-length lists [first code point, value]; a run ends where the next starts, "
                  "the last at U+10FFFF; surrogates D800-DFFF are not scalar values and continue "
                  "the previous run. whitespace: class under Whitespace of 'a'+c+'a' (w: one "
                  "piece, s: c removed, o: c isolated); numeric, punct: 1 if Digits("
                  "individual_digits) / Punctuation isolate c; wsplit: 1 if WhitespaceSplit "
                  "removes c",
        "whitespace": classify(P.Whitespace(), {"w": whole, "s": removed, "o": isolated}),
        "numeric": classify(P.Digits(individual_digits=True), {1: isolated, 0: whole}),
        "punct": classify(P.Punctuation(), {1: isolated, 0: whole}),
        "wsplit": classify(P.WhitespaceSplit(), {1: removed, 0: whole}),
    }


def class_counts(runs: list[list]) -> dict:
    """How many scalar values have each value."""
    counts: dict = {}
    ends = [start for start, _ in runs[1:]] + [0x110000]
    for (start, value), end in zip(runs, ends):
        n = end - start - max(0, min(end, 0xE000) - max(start, 0xD800))
        counts[str(value)] = counts.get(str(value), 0) + n
    return dict(sorted(counts.items()))


def write_classes(classes: dict) -> Path:
    path = OUT / "inputs" / "pretok_classes.json"
    lines = [json.dumps(k) + ":" + json.dumps(v, separators=(",", ":")) for k, v in classes.items()]
    path.write_text("{\n" + ",\n".join(lines) + "\n}\n")
    return path


def build_model(name: str, pre_tokenizer) -> tuple[Tokenizer, Path]:
    tok = Tokenizer.from_file(str(BASE))
    tok.pre_tokenizer = pre_tokenizer
    tok.post_processor = None
    tok.no_padding()
    tok.no_truncation()
    (OUT / name).mkdir(exist_ok=True)
    path = OUT / name / "tokenizer.json"
    path.write_text(tok.to_str() + "\n", encoding="utf-8")
    return Tokenizer.from_file(str(path)), path


def write_probes(tok: Tokenizer, name: str, records: list[tuple[str, bytes]]) -> int:
    """`<model>/probes.jsonl`: the edge records that are UTF-8, in the shape of
    `wordpiece/probes.jsonl` (`{"name", "text", <model>: {"ids", "ordinary"?, "decode",
    "decode_skip_special"?}}`: "ordinary" the ids with added tokens read as text, where they
    differ), with tokenizers' decoded text of the ids (added tokens kept, and skipped where that
    differs): the reference for decoding."""
    lines = []
    for rec, data in records:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        ids = tok.encode(text, add_special_tokens=False).ids
        tok.encode_special_tokens = True
        ordinary = tok.encode(text, add_special_tokens=False).ids
        tok.encode_special_tokens = False
        r = {"ids": ids, "decode": tok.decode(ids, skip_special_tokens=False)}
        if ordinary != ids:
            r["ordinary"] = ordinary
        skipped = tok.decode(ids, skip_special_tokens=True)
        if skipped != r["decode"]:
            r["decode_skip_special"] = skipped
        lines.append(json.dumps({"name": rec, "text": text, name: r}, ensure_ascii=False,
                                separators=(",", ":")))
    (OUT / name / "probes.jsonl").write_text("".join(line + "\n" for line in lines), "utf-8")
    return len(lines)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main() -> None:
    assert tokenizers.__version__ == "0.22.2", tokenizers.__version__
    sets = {name: load_set_bytes(FIXTURES, name) for name in SETS}
    sets["pretok_edge"] = pretok_edge()
    manifest = {"made_by": {"tokenizers": tokenizers.__version__, "script": SCRIPT},
                "base": "wordpiece/bert-cased-8k/tokenizer.json",
                "pretok_edge_sha256": sha256(OUT / "inputs" / "pretok_edge.jsonl"),
                "models": {}}
    for name, make in MODELS.items():
        tok, path = build_model(name, make())
        counts = {set_name: write_vectors(tok, name, set_name, records)
                  for set_name, records in sets.items()}
        counts["probes"] = write_probes(tok, name, sets["pretok_edge"])
        manifest["models"][name] = {
            "pre_tokenizer": json.loads(tok.to_str())["pre_tokenizer"], "sets": counts,
            "tokenizer_json_sha256": sha256(path)}
    classes = char_classes()
    kinds = ("whitespace", "numeric", "punct", "wsplit")
    manifest["classes"] = {
        "file": "wordpiece/inputs/pretok_classes.json", "sha256": sha256(write_classes(classes)),
        "runs": {k: len(classes[k]) for k in kinds},
        "counts": {k: class_counts(classes[k]) for k in kinds}}
    (OUT / "wp-pretok-MANIFEST.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(json.dumps({k: v["sets"] for k, v in manifest["models"].items()}))
    print(json.dumps(manifest["classes"]["counts"]))


if __name__ == "__main__":
    main()
