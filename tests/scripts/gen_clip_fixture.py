#!/usr/bin/env python3
"""Write tests/fixtures/clip/: CLIP's tokenizer.json, as transformers converts it, from the
real CLIP merges that open_clip ships (MIT), cut to the first N merges.

CLIP's byte-level BPE has an end-of-word suffix (`</w>`), a normalizer
Sequence[NFC, Replace(\\s+, " "), Lowercase] and a pre-tokenizer
Sequence[Split(Regex, Removed, invert), ByteLevel]. The vocabulary is built the way
open_clip's (and OpenAI's) SimpleTokenizer builds it from `bpe_simple_vocab_16e6.txt.gz`:
the 256 byte characters, the same with `</w>`, one token per merge, then
`<|startoftext|>` and `<|endoftext|>`. transformers' CLIPTokenizerFast converts that
vocab.json + merges.txt into the tokenizer.json that openai/clip-vit-* publish.

Usage (from the repository root; needs network access to PyPI once):

    pip install tokenizers==0.22.2 protobuf
    pip install --no-deps transformers==4.57.6 'huggingface-hub<1.0'
    python3 tests/scripts/gen_clip_fixture.py [--merges 8000]

Deterministic: the wheel is pinned (open_clip_torch 3.3.0); MANIFEST.json records the merges
file's sha256.
"""
import argparse
import gzip
import hashlib
import io
import json
import pathlib
import subprocess
import sys
import tempfile
import zipfile

WHEEL = "open_clip_torch==3.3.0"
MEMBER = "open_clip/bpe_simple_vocab_16e6.txt.gz"
LICENSE = "open_clip_torch-3.3.0.dist-info/licenses/LICENSE"


def fetch(tmp):
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", tmp, WHEEL],
                   check=True)
    wheel = next(pathlib.Path(tmp).glob("open_clip_torch-*.whl"))
    with zipfile.ZipFile(wheel) as z:
        return z.read(MEMBER), z.read(LICENSE)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--merges", type=int, default=8000)
    ap.add_argument("--out", default="tests/fixtures/clip")
    args = ap.parse_args()
    import tokenizers
    import transformers
    assert tokenizers.__version__ == "0.22.2", tokenizers.__version__
    from transformers import CLIPTokenizerFast
    from transformers.models.gpt2.tokenization_gpt2 import bytes_to_unicode

    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        packed, license_text = fetch(tmp)
        sha = hashlib.sha256(packed).hexdigest()
        lines = gzip.decompress(packed).decode("utf-8").split("\n")
        # SimpleTokenizer: the header line, then 49152 - 256 - 2 merges.
        merges = [tuple(m.split()) for m in lines[1:49152 - 256 - 2 + 1]][:args.merges]
        vocab = list(bytes_to_unicode().values())
        vocab = vocab + [v + "</w>" for v in vocab]
        vocab += ["".join(m) for m in merges]
        vocab += ["<|startoftext|>", "<|endoftext|>"]
        assert len(set(vocab)) == len(vocab)
        vocab_json = pathlib.Path(tmp) / "vocab.json"
        merges_txt = pathlib.Path(tmp) / "merges.txt"
        vocab_json.write_text(json.dumps({v: i for i, v in enumerate(vocab)}), "utf-8")
        merges_txt.write_text("#version: 0.2\n" + "\n".join(" ".join(m) for m in merges) + "\n",
                              "utf-8")
        fast = CLIPTokenizerFast(vocab_file=str(vocab_json), merges_file=str(merges_txt))
        fast.backend_tokenizer.save(str(out / "tokenizer.json"), pretty=False)
    (out / "LICENSE-open_clip").write_bytes(license_text)
    manifest = {
        "generator": "tests/scripts/gen_clip_fixture.py",
        "source": {"wheel": WHEEL, "member": MEMBER, "sha256": sha},
        "versions": {"tokenizers": tokenizers.__version__, "transformers": transformers.__version__},
        "merges": len(merges),
        "vocab": len(vocab),
    }
    (out / "MANIFEST.json").write_text(json.dumps(manifest, indent=1) + "\n", "utf-8")
    print(json.dumps(manifest))


if __name__ == "__main__":
    main()
