#!/usr/bin/env python3
"""tiktoken's cl100k_base ids for the cl100k-specific on-target tests (`tests/on_target.rs`,
`cfg(picobpe_cl100k)`), printed as the Rust constants the tests carry.

Usage: python3 firmware-example/scripts/cl100k_ids.py   (from the repository root)

The encoding is built offline from the committed rank file
`tests/fixtures/models/cl100k_base.tiktoken.gz`, the special tokens of
`tests/fixtures/models/cl100k_base.json` and the pattern in tiktoken's own `tiktoken_ext`
source (as `tests/scripts/gen_vectors.py` does), so no picobpe code is involved. The sanity
string's ids are also checked against the committed reference vectors
(`tests/fixtures/vectors/cl100k_base/fixtures.jsonl.gz`, record `sanity`).
"""
import base64
import gzip
import inspect
import json
import re
from pathlib import Path

import regex
import tiktoken
from tiktoken_ext import openai_public

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "tests" / "fixtures" / "models"
VECTORS = ROOT / "tests" / "fixtures" / "vectors"

SANITY = "Hello, 🌍! 你好!"
# What distinguishes cl100k's pattern from GPT-2's: case-insensitive contractions, digits in
# groups of at most three, one non-letter glued to the letters after it (`.field`), punctuation
# runs that keep their trailing newlines, and whitespace that ends at a newline.
PATTERN_TEXT = "HE'S WE'LL THEY'RE I'M DON'T obj.field=1234567 #tag\n\n...\r\n  \n\tx"


def pattern() -> str:
    src = inspect.getsource(openai_public.cl100k_base)
    m = re.search(r'"pat_str": (r""".*?"""),', src, re.S)
    return eval(m.group(1), {})  # noqa: S307 - a string literal from tiktoken's own source


def encoding() -> tuple[tiktoken.Encoding, dict[str, int]]:
    ranks = {}
    for line in gzip.decompress((MODELS / "cl100k_base.tiktoken.gz").read_bytes()).splitlines():
        token, rank = line.split()
        ranks[base64.b64decode(token)] = int(rank)
    specials = json.loads((MODELS / "cl100k_base.json").read_text())["special_tokens"]
    enc = tiktoken.Encoding(
        name="cl100k_base", pat_str=pattern(), mergeable_ranks=ranks, special_tokens=specials
    )
    return enc, specials


def committed_sanity_ids() -> list[int]:
    inputs = [json.loads(l) for l in (VECTORS / "inputs" / "fixtures.jsonl").open() if l.strip()]
    with gzip.open(VECTORS / "cl100k_base" / "fixtures.jsonl.gz", "rt") as f:
        records = [json.loads(l) for l in f if l.strip()][1:]  # line 1 is the header
    for inp, rec in zip(inputs, records):
        if inp["name"] == "sanity":
            assert inp["text"] == SANITY and rec["name"] == "sanity"
            return rec["all"]
    raise SystemExit("no `sanity` record in the committed vectors")


def rust(name: str, ids: list[int]) -> str:
    return f"const {name}: [u32; {len(ids)}] = {ids};"


def main() -> None:
    enc, specials = encoding()
    sanity = enc.encode(SANITY)
    assert sanity == committed_sanity_ids(), (sanity, committed_sanity_ids())
    text = PATTERN_TEXT
    ids = enc.encode(text)
    assert enc.decode_bytes(ids) == text.encode()
    print(f"// tiktoken {tiktoken.__version__}, cl100k_base; made by firmware-example/scripts/cl100k_ids.py")
    print(rust("SANITY_IDS", sanity))
    # Informational: the pieces under both patterns (the `regex` module, as in gen_vectors.py).
    cl100k_pieces = regex.findall(pattern(), text)
    gpt2_pieces = regex.findall(openai_public.r50k_pat_str, text)
    assert cl100k_pieces != gpt2_pieces
    print(f"// {text!r}")
    print(f"// cl100k pieces: {cl100k_pieces}")
    print(f"// gpt2 pieces:   {gpt2_pieces}")
    print(f"// tokens: {[enc.decode_single_token_bytes(i) for i in ids]}")
    print(rust("PATTERN_IDS", ids))
    pairs = ", ".join(f"({json.dumps(t)}, {i})" for t, i in sorted(specials.items(), key=lambda s: s[1]))
    print(f"const SPECIALS: [(&str, u32); {len(specials)}] = [{pairs}];")
    n_ranks = len(enc._mergeable_ranks)
    used = set(range(n_ranks)) | set(specials.values())
    holes = [i for i in range(enc.n_vocab) if i not in used]
    print(f"// ids below n_vocab = {enc.n_vocab} that are neither a rank nor a special token")
    print(rust("HOLES", holes))


if __name__ == "__main__":
    main()
