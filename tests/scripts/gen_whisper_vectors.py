#!/usr/bin/env python3
"""Generate picobpe's reference vectors for whisper's `multilingual.tiktoken` with tiktoken, the
way whisper's own `get_encoding` builds its encoding (never with picobpe).

Usage (from the repository root; `pip install tiktoken`; about 5 s):

    python3 tests/scripts/gen_whisper_vectors.py

Reads tests/fixtures/whisper/multilingual.tiktoken (whisper's rank file, MIT; see PROVENANCE.md)
and the shared input sets tests/fixtures/vectors/inputs/{fixtures,random}.jsonl, and (re)writes
tests/fixtures/whisper/vectors/whisper-multilingual/<set>.jsonl.gz in the record format of
tests/fixtures/sentencepiece (`ids`: tiktoken's `encode_ordinary`; a record whose input is not
UTF-8 is skipped: tiktoken takes `str`), plus MANIFEST.json.

whisper reads the file with `base64.b64decode(token): int(rank)` per line, so its last line,
`= 50256`, is the empty token, id 50256: no text encodes to it and it decodes to nothing
(`decode_bytes([50256]) == b""`, recorded in the manifest). The pattern is the one whisper passes
(r50k's). Special tokens are left out (whisper adds them in code, after the file's ranks).
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
OUT = FIXTURES / "whisper"
STEM = "whisper-multilingual"
# whisper/tokenizer.py `get_encoding`'s pattern.
PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
SETS = {"fixtures": "vectors/inputs/fixtures.jsonl", "random": "vectors/inputs/random.jsonl"}
SUBSET = {"random": 6}


def main() -> None:
    path = OUT / "multilingual.tiktoken"
    # As whisper reads it.
    ranks = {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in path.read_text().splitlines() if line)
    }
    empty = ranks[b""]
    enc = tiktoken.Encoding(name="multilingual", pat_str=PATTERN, mergeable_ranks=ranks,
                            special_tokens={})
    assert enc.decode_bytes([empty]) == b""
    manifest = {
        "made_by": {"tiktoken": tiktoken.__version__,
                    "script": "tests/scripts/gen_whisper_vectors.py"},
        "rank_file": {"file": "multilingual.tiktoken", "sha256": sha256(path), "ranks": len(ranks),
                      "empty_token_id": empty,
                      "empty_token_decodes_to_b64": base64.b64encode(enc.decode_bytes([empty])).decode()},
        "sets": {},
    }
    for set_name, rel in SETS.items():
        records = []
        k = SUBSET.get(set_name, 1)
        for i, (name, data, is_text) in enumerate(load_set(FIXTURES, rel)):
            if i % k or not is_text:
                continue
            ids = enc.encode_ordinary(data.decode("utf-8"))
            assert empty not in ids
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
