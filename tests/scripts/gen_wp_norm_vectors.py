#!/usr/bin/env python3
"""Generate picobpe's reference data for WordPiece `tokenizer.json` files whose normalizer is not
`BertNormalizer`, with the real Hugging Face `tokenizers` library (never with picobpe).

Usage (from the repository root; a few seconds):

    pip install tokenizers==0.22.2
    python3 tests/scripts/gen_wp_norm_vectors.py

It (re)writes, under tests/fixtures/wordpiece/:

    wp-nfd-lower-strip/tokenizer.json   bert-cased-8k's vocabulary with the normalizer
                                  `tokenizers`' guides build for WordPiece,
                                  Sequence[NFD, Lowercase, StripAccents] (StripAccents drops
                                  every combining mark, not only Mn), BertPreTokenizer and the
                                  WordPiece decoder
    wp-nfkc/tokenizer.json        the same vocabulary with an NFKC normalizer alone
    wp-nfkc-lower/tokenizer.json  ... with Sequence[NFKC, Lowercase]
    wp-nfd-lower/tokenizer.json   ... with Sequence[NFD, Lowercase] (no StripAccents)
    <model>/<set>.jsonl.gz        tokenizers' ids for the shared inputs of
                                  tests/fixtures/vectors/inputs (sets fixtures, corpus, random,
                                  invalid_utf8) and tests/fixtures/metaspace/inputs/nfkc_edge and
                                  steps_edge; the record format of gen_wp_vectors.py ("all": added
                                  tokens recognized; "ordinary", when it differs: read as text)
    inputs/marks_invalid.jsonl    inputs this script makes (seeded): bytes that are not UTF-8
                                  around combining marks, which StripAccents drops, so that a
                                  normalizer that passed the bytes through would join them
                                  (records {"name", "text_b64"}); its ids are the set
                                  marks_invalid
    wp-norm-MANIFEST.json         versions, settings, counts

Bytes that are not UTF-8: the reference runs on Rust's `String::from_utf8_lossy` of the bytes
(each maximal invalid subsequence one U+FFFD), the WordPiece family's rule.
"""

from __future__ import annotations

import os

os.environ["RAYON_NUM_THREADS"] = "2"

import base64  # noqa: E402
import gzip  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import tokenizers  # noqa: E402
from tokenizers import Tokenizer, normalizers  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_wp_vectors import load_set_bytes, rust_from_utf8_lossy  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests/fixtures"
OUT = FIXTURES / "wordpiece"
BASE = OUT / "bert-cased-8k/tokenizer.json"
SETS = ["fixtures", "corpus", "random", "invalid_utf8"]
EDGE = {"nfkc_edge": "metaspace/inputs/nfkc_edge.jsonl",
        "steps_edge": "metaspace/inputs/steps_edge.jsonl"}
MODELS = {
    "wp-nfd-lower-strip": normalizers.Sequence(
        [normalizers.NFD(), normalizers.Lowercase(), normalizers.StripAccents()]),
    "wp-nfkc": normalizers.NFKC(),
    "wp-nfkc-lower": normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()]),
    "wp-nfd-lower": normalizers.Sequence([normalizers.NFD(), normalizers.Lowercase()]),
}


def edge_set(rel: str) -> list[tuple[str, bytes]]:
    out = []
    for line in (FIXTURES / rel).read_text("utf-8").split("\n"):
        if line and not line.startswith('{"set"'):
            r = json.loads(line)
            if "name" in r:
                out.append((r["name"], r["text"].encode("utf-8")))
    return out


FRAGMENTS = [b"\xce", b"\xae", b"\xc3", b"\xa9", b"\xe2\x82", b"\xac", b"\xf0\x9f",
             b"\x98\x80", b"\xff", b"\xe4", b"\xb8\xad"]
MARKS = ["\u0301", "\u064c", "\u0308", "\u20dd", "\u0327\u0301", "\u0903", "\u1ab0"]
FILLER = ["a", "E", " ", "!", "\u00e9", "\u0130", "[CLS]", "\u4e2d"]


def marks_invalid() -> list[tuple[str, bytes]]:
    """Every ordered pair of fragments around every mark, then seeded random mixes."""
    import random
    out = []
    for i, a in enumerate(FRAGMENTS):
        for j, b in enumerate(FRAGMENTS):
            for k, m in enumerate(MARKS):
                out.append((f"pair-{i}-{j}-{k}", a + m.encode() + b))
    rng = random.Random(38)
    parts = FRAGMENTS + [m.encode() for m in MARKS] + [f.encode() for f in FILLER]
    for n in range(300):
        out.append((f"mix-{n}", b"".join(rng.choice(parts) for _ in range(rng.randint(1, 12)))))
    path = OUT / "inputs" / "marks_invalid.jsonl"
    path.parent.mkdir(exist_ok=True)
    path.write_text("".join(json.dumps({"name": name, "text_b64": base64.b64encode(data).decode()})
                            + "\n" for name, data in out))
    return out


def write_set(path: Path, header: dict, rows: list[dict]) -> None:
    lines = [json.dumps(header, ensure_ascii=False, separators=(",", ":"))]
    lines += [json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in rows]
    with gzip.GzipFile(path, "wb", mtime=0) as f:
        f.write(("\n".join(lines) + "\n").encode("utf-8"))


def write_vectors(tok: Tokenizer, name: str, set_name: str,
                  records: list[tuple[str, bytes]]) -> dict:
    """`<name>/<set_name>.jsonl.gz`: tokenizers' ids for `records`, with added tokens
    recognized ("all") and read as text ("ordinary", where it differs); returns the counts."""
    texts = [rust_from_utf8_lossy(data) for _, data in records]
    tok.encode_special_tokens = False
    all_enc = tok.encode_batch(texts, add_special_tokens=False)
    tok.encode_special_tokens = True
    ord_enc = tok.encode_batch(texts, add_special_tokens=False)
    tok.encode_special_tokens = False
    rows = []
    for (rec, _), ea, eo in zip(records, all_enc, ord_enc):
        row = {"name": rec, "all": ea.ids}
        if eo.ids != ea.ids:
            row["ordinary"] = eo.ids
        rows.append(row)
    header = {"encoding": name, "set": set_name, "count": len(rows),
              "tokenizers": tokenizers.__version__,
              "tokenizer_json": f"wordpiece/{name}/tokenizer.json"}
    write_set(OUT / name / f"{set_name}.jsonl.gz", header, rows)
    return {"records": len(rows), "ids": sum(len(r["all"]) for r in rows)}


def main() -> None:
    assert tokenizers.__version__ == "0.22.2", tokenizers.__version__
    manifest = {"made_by": {"tokenizers": tokenizers.__version__,
                            "script": "tests/scripts/gen_wp_norm_vectors.py"},
                "base": "wordpiece/bert-cased-8k/tokenizer.json", "models": {}}
    sets = {name: load_set_bytes(FIXTURES, name) for name in SETS}
    sets.update({name: edge_set(rel) for name, rel in EDGE.items()})
    sets["marks_invalid"] = marks_invalid()
    for name, normalizer in MODELS.items():
        tok = Tokenizer.from_file(str(BASE))
        tok.normalizer = normalizer
        tok.post_processor = None
        tok.no_padding()
        tok.no_truncation()
        (OUT / name).mkdir(exist_ok=True)
        path = OUT / name / "tokenizer.json"
        path.write_text(tok.to_str() + "\n", encoding="utf-8")
        tok = Tokenizer.from_file(str(path))
        counts = {set_name: write_vectors(tok, name, set_name, records)
                  for set_name, records in sets.items()}
        manifest["models"][name] = {
            "normalizer": json.loads(tok.to_str())["normalizer"], "sets": counts,
            "tokenizer_json_sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
    (OUT / "wp-norm-MANIFEST.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(json.dumps({k: v["sets"] for k, v in manifest["models"].items()}))


if __name__ == "__main__":
    main()
