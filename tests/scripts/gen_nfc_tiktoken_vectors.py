#!/usr/bin/env python3
"""Generate picobpe's reference ids for a rank file imported with `--normalizer nfc`: what a
tokenizer that normalizes with Python's `unicodedata.normalize("NFC", text)` and then encodes
with tiktoken gives (the way Qwen's own tokenizer uses `qwen.tiktoken`), with the real
libraries, never with picobpe.

Usage (from the repository root):

    pip install tiktoken==0.14.0
    python3 tests/scripts/gen_nfc_tiktoken_vectors.py

It reads the committed cl100k_base rank file (tests/fixtures/models/cl100k_base.tiktoken.gz)
and writes tests/fixtures/normalizer/cl100k-nfc.json: the texts, and for each the ids of
`encode_ordinary(unicodedata.normalize("NFC", text))` and the NFC text itself.

Every character of the texts was assigned in Unicode 9.0 or earlier: picobpe's tables are
Unicode 9.0's (those of the crate Hugging Face `tokenizers` normalizes with), Python's
`unicodedata` is newer (3.11: 14.0), and Unicode's stability policy makes the NFC of text made
of characters assigned in both versions the same. The output is a pure function of the inputs
(a seeded generator).
"""

from __future__ import annotations

import gzip
import json
import random
import sys
import tempfile
import unicodedata
from pathlib import Path

import tiktoken
import tiktoken.load

ROOT = Path(__file__).resolve().parents[2]
RANKS = ROOT / "tests/fixtures/models/cl100k_base.tiktoken.gz"
OUT = ROOT / "tests/fixtures/normalizer/cl100k-nfc.json"
# tiktoken_ext's cl100k_base pattern (tests/scripts/patterns.py has the issues' copy).
sys.path.insert(0, str(Path(__file__).resolve().parent))
from patterns import ISSUE_PATTERNS  # noqa: E402

# Hand-written texts around what NFC changes.
EDGE = [
    "e\u0301", "cafe\u0301 au lait", "A\u030a and \u212b (Angstrom sign)", "\u2126 ohm",
    "K\u0301elvin \u212a", "a\u0301\u0316 order", "a\u0316\u0301 order", "\u1100\u1161\u11a8 jamo",
    "\uac00\u11a8", "\u1100\u1161 \u1100\u1161", "\u0958 and \u0915\u093c", "\u0928\u093f\u0930\u094d",
    "\u0b47\u0b3e \u0b4b", "\u0dd9\u0dcf", "\u304b\u3099 \u304c", "\u30cf\u309a",
    "\ufb2c hebrew", "\u2adc", "\u0344 \u0f73 \u0f75 \u0f81", "\u1e69 s\u0323\u0307 s\u0307\u0323",
    "\u01d6 u\u0308\u0304", "\u1ebf e\u0302\u0301", "\u0390 \u03ca\u0301", "\u1fee \u0385",
    "\uf900 \uf901 compatibility ideographs", "\u2000\u2001 spaces", "\u037e semicolon",
    "no change at all", "", " ", "\u0301 leading mark", "trailing mark e\u0301",
    "x\u0301\u0301\u0301\u0301\u0301\u0301\u0301\u0301", "Zalgo: H\u0338\u0321\u032a\u032f\u0368e\u0301\u0316",
]

ALPHABET = (
    list("aeiouAEOUnsckyz 123,.'\n\t")
    + ["\u0300", "\u0301", "\u0302", "\u0308", "\u030a", "\u030c", "\u0316", "\u0323", "\u0327",
       "\u0328", "\u0334", "\u0338", "\u0345", "\u035c", "\u093c", "\u094d", "\u05b0", "\u05bc",
       "\u0e38", "\u0f71", "\u0f72", "\u0f80", "\u0344", "\u0f73", "\u0b3e", "\u0b47", "\u0dcf",
       "\u0dd9", "\u1161", "\u11a8", "\u1100", "\u3099", "\u309a", "\u304b", "\u0915", "\u0928",
       "\u212b", "\u2126", "\u212a", "\u00e9", "\u01d6", "\u1e69", "\u1ebf", "\u0390", "\uac00",
       "\uf900", "\ufb2c", "\u0958", "\u2adc", "\u4e2d", "\u6587", "\ud55c"]
)


def main() -> None:
    with tempfile.NamedTemporaryFile(suffix=".tiktoken") as f:
        f.write(gzip.decompress(RANKS.read_bytes()))
        f.flush()
        ranks = tiktoken.load.load_tiktoken_bpe(f.name)
    enc = tiktoken.Encoding(
        name="cl100k_base",
        pat_str=ISSUE_PATTERNS["cl100k_base"],
        mergeable_ranks=ranks,
        special_tokens={},
    )
    rng = random.Random(20261205)
    texts = list(EDGE)
    for _ in range(400):
        texts.append("".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 40))))
    # Long runs of marks after a letter (pieces longer than the encoder's stack window).
    marks = ["\u0301", "\u0316", "\u0308", "\u0327", "\u0345", "\u093c"]
    for n in (100, 300, 1000):
        texts.append("word e" + "".join(rng.choice(marks) for _ in range(n)) + " and more")
    cases = []
    for t in texts:
        nfc = unicodedata.normalize("NFC", t)
        cases.append({"text": t, "nfc": nfc, "ids": enc.encode_ordinary(nfc)})
    OUT.parent.mkdir(parents=True, exist_ok=True)
    doc = {
        "generator": "tests/scripts/gen_nfc_tiktoken_vectors.py",
        "versions": {
            "tiktoken": tiktoken.__version__,
            "unicodedata": unicodedata.unidata_version,
            "python": sys.version.split()[0],
        },
        "encoding": "cl100k_base",
        "cases": cases,
    }
    OUT.write_text(json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}: {len(cases)} cases")


if __name__ == "__main__":
    main()
