#!/usr/bin/env python3
"""Generate the reference vectors of a byte-level BPE `tokenizer.json` whose pre-tokenizer is
none of picobpe's hand-rolled patterns (it takes the compiled splitter), with the real Hugging
Face `tokenizers` library (never with picobpe).

Usage (from the repository root; a few seconds):

    pip install tokenizers==0.22.2
    python3 tests/scripts/gen_compiled_vectors.py [--fixtures tests/fixtures]

The model is tests/fixtures/hf_bpe/llama3-8k/tokenizer.json (trained by gen_hf_vectors.py) with
DeepSeek V3's pre-tokenizer in place of its own: three `Split`s (digits in runs of up to three,
CJK and kana runs, then DeepSeek's word pattern), then `ByteLevel` without its regex, as
deepseek-ai/DeepSeek-V3's published tokenizer.json spells it. It writes, under
tests/fixtures/hf_compiled/:

    deepseek-8k/tokenizer.json      that file
    deepseek-8k/<set>.jsonl.gz      tokenizers' ids for the inputs of
                                    tests/fixtures/vectors/inputs/<set>.jsonl (sets fixtures,
                                    corpus, random; the records of gen_hf_vectors.py's format:
                                    a header, then {"name", "all"[, "ordinary"]})
    MANIFEST.json                   versions, counts and the sha256 of every file

Inputs that are not valid UTF-8 are skipped (tokenizers takes text). The output is a pure
function of the inputs.
"""

from __future__ import annotations

import os

os.environ["RAYON_NUM_THREADS"] = "2"
os.environ["TOKENIZERS_PARALLELISM"] = "true"

import argparse  # noqa: E402
import base64  # noqa: E402
import gzip  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
from pathlib import Path  # noqa: E402

import tokenizers  # noqa: E402
from tokenizers import Tokenizer  # noqa: E402

TOKENIZERS_VERSION = "0.22.2"
SETS = ["fixtures", "corpus", "random"]


def split(regex: str) -> dict:
    return {"type": "Split", "pattern": {"Regex": regex}, "behavior": "Isolated", "invert": False}


# deepseek-ai/DeepSeek-V3 tokenizer.json, "pre_tokenizer", character for character.
DEEPSEEK_V3 = {
    "type": "Sequence",
    "pretokenizers": [
        split(r"\p{N}{1,3}"),
        split("[一-龥\u3040-ゟ゠-ヿ]+"),
        split(r"[!-/:-@\[-`{-~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"),
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
    ],
}


def load_set(fixtures: Path, name: str) -> tuple[list[tuple[str, str]], list[str]]:
    """(name, text) of each valid-UTF-8 record of vectors/inputs/<name>.jsonl, and the names
    of the others."""
    vectors = fixtures / "vectors"
    out, skipped = [], []
    for line in (vectors / "inputs" / f"{name}.jsonl").read_text("utf-8").split("\n"):
        if not line:
            continue
        r = json.loads(line)
        if "text" in r:
            data = r["text"].encode("utf-8", "surrogatepass")
        elif "file" in r:
            data = (vectors / r["file"]).read_bytes()
        else:
            data = base64.b64decode(r["text_b64"])
        try:
            out.append((r["name"], data.decode("utf-8")))
        except UnicodeDecodeError:
            skipped.append(r["name"])
    return out, skipped


def dumps(obj) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def write_gz(path: Path, lines: list[str]) -> None:
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    with path.open("wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0,
                                               compresslevel=9) as f:
        f.write(data)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--fixtures", type=Path, default=Path("tests/fixtures"))
    args = ap.parse_args()
    assert tokenizers.__version__ == TOKENIZERS_VERSION, tokenizers.__version__
    fixtures = args.fixtures
    source = json.loads((fixtures / "hf_bpe/llama3-8k/tokenizer.json").read_text("utf-8"))
    source["pre_tokenizer"] = DEEPSEEK_V3
    out_dir = fixtures / "hf_compiled" / "deepseek-8k"
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "tokenizer.json").write_text(json.dumps(source, ensure_ascii=False) + "\n",
                                            "utf-8")
    tok = Tokenizer.from_file(str(out_dir / "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    specials = {a["content"]: a["id"] for a in source["added_tokens"]}
    manifest = {"generator": "tests/scripts/gen_compiled_vectors.py",
                "versions": {"tokenizers": tokenizers.__version__},
                "model": {"name": "deepseek-8k", "from": "hf_bpe/llama3-8k/tokenizer.json",
                          "pre_tokenizer": DEEPSEEK_V3},
                "sets": {}, "files": {}}
    for set_name in SETS:
        records, skipped = load_set(fixtures, set_name)
        texts = [t for _, t in records]
        all_enc = [e.ids for e in tok.encode_batch(texts, add_special_tokens=False)]
        tok.encode_special_tokens = True
        ord_enc = [e.ids for e in tok.encode_batch(texts, add_special_tokens=False)]
        tok.encode_special_tokens = False
        header = {"encoding": "deepseek-8k", "set": set_name,
                  "inputs": f"vectors/inputs/{set_name}.jsonl", "count": len(records),
                  "specials": specials, "tokenizers": tokenizers.__version__,
                  "tokenizer_json": "hf_compiled/deepseek-8k/tokenizer.json"}
        rows = []
        for (name, text), all_ids, ordinary in zip(records, all_enc, ord_enc):
            assert tok.decode(all_ids, skip_special_tokens=False) == text, name
            row = {"name": name, "all": all_ids}
            if ordinary != all_ids:
                row["ordinary"] = ordinary
            rows.append(row)
        write_gz(out_dir / f"{set_name}.jsonl.gz", [dumps(header)] + [dumps(r) for r in rows])
        manifest["sets"][set_name] = {"records": len(rows), "skipped_not_utf8": skipped,
                                      "ids_all": sum(len(r["all"]) for r in rows)}
    root = fixtures / "hf_compiled"
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.name != "MANIFEST.json" and path.name != "PROVENANCE.md":
            manifest["files"][str(path.relative_to(root))] = {
                "bytes": path.stat().st_size,
                "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
    (root / "MANIFEST.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=1) + "\n",
                                        "utf-8")


if __name__ == "__main__":
    main()
