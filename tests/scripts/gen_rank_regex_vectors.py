#!/usr/bin/env python3
"""Generate picobpe's reference vectors for a tiktoken rank file with a pre-tokenization regex
that none of picobpe's hand-rolled splitters implements, with tiktoken itself (never with
picobpe).

Usage (from the repository root; `pip install tiktoken`; about 5 s):

    python3 tests/scripts/gen_rank_regex_vectors.py

The encoding is GPT-2's ranks (tests/fixtures/models/gpt2.tiktoken, MIT) and `<|endoftext|>`
with a pattern whose number alternative takes one digit at a time (`\\p{N}` for ` ?\\p{N}+`), as
Llama-style and StarCoder-style tokenizers split digits. It reads the shared input sets
tests/fixtures/vectors/inputs/{fixtures,random}.jsonl and (re)writes
tests/fixtures/rank_regex/vectors/rank-regex-digits/<set>.jsonl.gz in the record format of
tests/fixtures/sentencepiece (`ids`: tiktoken's `encode(text, allowed_special="all")`; a record
whose input is not UTF-8 is skipped: tiktoken takes `str`), plus MANIFEST.json, which records
the pattern and the special tokens the test imports the rank file with.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import tiktoken

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_sp_vectors import load_set, sha256, write_jsonl  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests/fixtures"
OUT = FIXTURES / "rank_regex"
STEM = "rank-regex-digits"
RANKS = FIXTURES / "models/gpt2.tiktoken"
# GPT-2's pattern with single digits.
PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
SPECIALS = {"<|endoftext|>": 50256}
SETS = {"fixtures": "vectors/inputs/fixtures.jsonl", "random": "vectors/inputs/random.jsonl"}
SUBSET = {"random": 6}


def main() -> None:
    ranks = {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in RANKS.read_text().splitlines() if line)
    }
    enc = tiktoken.Encoding(name=STEM, pat_str=PATTERN, mergeable_ranks=ranks,
                            special_tokens=SPECIALS)
    manifest = {
        "made_by": {"tiktoken": tiktoken.__version__,
                    "script": "tests/scripts/gen_rank_regex_vectors.py"},
        "rank_file": {"file": "models/gpt2.tiktoken", "sha256": sha256(RANKS),
                      "ranks": len(ranks)},
        "pattern": PATTERN,
        "specials": SPECIALS,
        "sets": {},
    }
    for set_name, rel in SETS.items():
        records = []
        k = SUBSET.get(set_name, 1)
        for i, (name, data, is_text) in enumerate(load_set(FIXTURES, rel)):
            if i % k or not is_text:
                continue
            ids = enc.encode(data.decode("utf-8"), allowed_special="all")
            assert enc.decode_bytes(ids) == data
            records.append({"name": name, "ids": ids})
        out = OUT / "vectors" / STEM / f"{set_name}.jsonl.gz"
        out.parent.mkdir(parents=True, exist_ok=True)
        write_jsonl(out, {"model": STEM, "set": set_name, "inputs": rel, "count": len(records)},
                    records)
        manifest["sets"][set_name] = {"records": len(records), "sha256": sha256(out)}
    (OUT / "MANIFEST.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(json.dumps(manifest["sets"]))


if __name__ == "__main__":
    main()
