#!/usr/bin/env python3
"""Reference ids for the WordPiece model `host-trainer train --model-type wordpiece` made for the
firmware (`cargo xtask firmware-test --model wp-trained`): Hugging Face `tokenizers` loads the
`tokenizer.json` the trainer wrote and encodes the shared inputs, never picobpe.

Usage: wp_vectors.py TOKENIZER_JSON FIXTURES_DIR OUT_DIR

Writes OUT_DIR/{fixtures,corpus,random,invalid_utf8}.jsonl.gz in the record format of
tests/scripts/gen_wp_vectors.py (a header naming the inputs, then {"name", "all"} and
"ordinary" where reading added tokens as text differs), and OUT_DIR/probes.jsonl in the format of
tests/fixtures/wordpiece/probes.jsonl (with `decode`, the library's `decode(ids,
skip_special_tokens=True)`) for the first PROBES `random` records that are UTF-8. Bytes that are not UTF-8 reach the
library as Rust's `String::from_utf8_lossy` makes them, the WordPiece family's rule.
"""
import gzip
import json
import sys
from pathlib import Path

from tokenizers import Tokenizer

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests/scripts"))
from gen_wp_vectors import load_set_bytes, rust_from_utf8_lossy  # noqa: E402

SETS = ["fixtures", "corpus", "random", "invalid_utf8"]
PROBES = 48


def main() -> None:
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    json_path, fixtures, out = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    tok = Tokenizer.from_file(str(json_path))
    tok.no_padding()
    tok.no_truncation()
    out.mkdir(parents=True, exist_ok=True)
    for name in SETS:
        records = load_set_bytes(fixtures, name)
        texts = [rust_from_utf8_lossy(data) for _, data in records]
        tok.encode_special_tokens = False
        everything = tok.encode_batch(texts, add_special_tokens=False)
        tok.encode_special_tokens = True
        ordinary = tok.encode_batch(texts, add_special_tokens=False)
        header = {"encoding": "wp-trained", "set": name, "count": len(records),
                  "inputs": f"vectors/inputs/{name}.jsonl"}
        lines = [json.dumps(header)]
        for (rec, _), a, o in zip(records, everything, ordinary):
            row = {"name": rec, "all": a.ids}
            if o.ids != a.ids:
                row["ordinary"] = o.ids
            lines.append(json.dumps(row))
        with gzip.GzipFile(out / f"{name}.jsonl.gz", "wb", mtime=0) as f:
            f.write(("\n".join(lines) + "\n").encode("utf-8"))
        if name == "random":
            probes = []
            for (rec, data), a, o in zip(records, everything, ordinary):
                if len(probes) == PROBES:
                    break
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError:
                    continue
                r = {"ids": a.ids, "decode": tok.decode(a.ids, skip_special_tokens=True)}
                if o.ids != a.ids:
                    r["ordinary"] = o.ids
                probes.append(json.dumps({"name": rec, "text": text, "wp-trained": r}))
            (out / "probes.jsonl").write_text("\n".join(probes) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
