#!/usr/bin/env python3
"""Reference ids for the SentencePiece BPE model `host-trainer train --model-type
sentencepiece-bpe` made for the firmware (`cargo xtask firmware-test --model sp-trained`): the
real `sentencepiece` library loads the `sentencepiece.model` the trainer wrote and encodes the
shared inputs, never picobpe.

Usage: sp_vectors.py SENTENCEPIECE_MODEL FIXTURES_DIR OUT_DIR

Writes OUT_DIR/<set>.jsonl.gz for the sets sp_edge, fixtures, random and invalid_utf8 in the
record format of tests/scripts/gen_sp_vectors.py (a header naming the inputs, then {"name",
"ids"} and "decoded_b64" where the library's decoding differs from the input with each byte
outside well-formed UTF-8 read as U+FFFD). Bytes go to the library as they are.
"""
import base64
import gzip
import json
import sys
from pathlib import Path

import sentencepiece as spm

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests/scripts"))
from gen_sp_vectors import fffd_text, load_set  # noqa: E402

SETS = {"sp_edge": "sentencepiece/inputs/sp_edge.jsonl", "fixtures": "vectors/inputs/fixtures.jsonl",
        "random": "vectors/inputs/random.jsonl", "invalid_utf8": "vectors/inputs/invalid_utf8.jsonl"}


def main() -> None:
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    model, fixtures, out = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    sp = spm.SentencePieceProcessor(model_file=str(model))
    out.mkdir(parents=True, exist_ok=True)
    for name, inputs in SETS.items():
        records = load_set(fixtures, inputs)
        header = {"model": "sp-trained", "set": name, "inputs": inputs, "count": len(records),
                  "sentencepiece": spm.__version__}
        lines = [json.dumps(header)]
        for rec, data, _ in records:
            ids = sp.encode(data)
            row = {"name": rec, "ids": ids}
            dec = sp.decode(ids).encode("utf-8")
            if dec != fffd_text(data).encode("utf-8"):
                row["decoded_b64"] = base64.b64encode(dec).decode("ascii")
            lines.append(json.dumps(row))
        with gzip.GzipFile(out / f"{name}.jsonl.gz", "wb", mtime=0) as f:
            f.write(("\n".join(lines) + "\n").encode("utf-8"))


if __name__ == "__main__":
    main()
