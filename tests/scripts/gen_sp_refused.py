#!/usr/bin/env python3
"""Generate the SentencePiece models picobpe must refuse to import, with the real
`sentencepiece` trainer and Hugging Face `tokenizers` (never with picobpe).

Usage (from the repository root; about 5 s):

    pip install sentencepiece==0.2.3 protobuf==7.36.2 tokenizers==0.22.2
    python3 tests/scripts/gen_sp_refused.py

It (re)writes tests/fixtures/sentencepiece/refused/:

    unigram.model         model_type=unigram (another model family)
    nfkc.model            model_type=bpe, normalization_rule_name=nmt_nfkc (a real
                          precompiled_charsmap)
    unused.model          the bpe model below with two normal pieces turned into UNUSED
                          (ModelProto edited with sentencepiece_model_pb2)
    suffix.model          model_type=bpe, treat_whitespace_as_suffix=true
    base.tokenizer.json   the accepted shape: BPE over the pieces of bpe.model with byte
                          fallback, normalizer Sequence[Prepend("▁"), Replace(" ", "▁")]
                          (written by `tokenizers`; the control for the three below)
    nfkc-normalizer.tokenizer.json      base with an NFKC normalizer in the sequence
    bytelevel-pretok.tokenizer.json     base with a ByteLevel pre-tokenizer
    wordpiece.tokenizer.json            a WordPiece model over the same vocabulary
    MANIFEST.json         versions, trainer options, sizes and sha256 of every file

Every model is trained on the first 40,000 bytes of tests/fixtures/train/english-1mb.txt
(Uncle Tom's Cabin, public domain; cut at a line end), one sentence per non-empty line,
single-threaded, no sampling or shuffling, from a sentence iterator (so the model stores no
file name): running the script twice gives byte-identical files (checked by the script).
bpe.model itself is not written; it only seeds unused.model and the tokenizer.json files.
"""

import hashlib
import io
import json
import sys
from pathlib import Path

import sentencepiece as spm
import tokenizers
from sentencepiece import sentencepiece_model_pb2 as pb
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests/fixtures/sentencepiece/refused"
CORPUS = ROOT / "tests/fixtures/train/english-1mb.txt"
SAMPLE_BYTES = 40_000

COMMON = dict(
    vocab_size=400,
    character_coverage=1.0,
    input_sentence_size=0,
    shuffle_input_sentence=False,
    num_threads=1,
    minloglevel=2,
)
MODELS = {
    "bpe": dict(model_type="bpe", byte_fallback=True, normalization_rule_name="identity"),
    "unigram": dict(model_type="unigram", normalization_rule_name="identity"),
    "nfkc": dict(model_type="bpe", normalization_rule_name="nmt_nfkc"),
    "suffix": dict(
        model_type="bpe", normalization_rule_name="identity", treat_whitespace_as_suffix=True
    ),
}
# Normal pieces of bpe.model turned into UNUSED (type 5) for unused.model.
UNUSED = ["▁the", "▁and"]


def sample_lines():
    text = CORPUS.read_bytes()[:SAMPLE_BYTES]
    text = text[: text.rindex(b"\n")].decode("utf-8")
    return [line for line in text.split("\n") if line.strip()]


def train(lines, options):
    w = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_writer=w, **COMMON, **options
    )
    return w.getvalue()


def unused_model(bpe):
    m = pb.ModelProto()
    m.ParseFromString(bpe)
    found = []
    for p in m.pieces:
        if p.piece in UNUSED:
            assert p.type == pb.ModelProto.SentencePiece.NORMAL, p
            p.type = pb.ModelProto.SentencePiece.UNUSED
            found.append(p.piece)
    assert sorted(found) == sorted(UNUSED), found
    return m.SerializeToString()


def tokenizer_jsons(bpe):
    """base, and the three refused variants, as JSON text."""
    m = pb.ModelProto()
    m.ParseFromString(bpe)
    vocab = {p.piece: i for i, p in enumerate(m.pieces)}
    score = {p.piece: p.score for p in m.pieces if p.type == pb.ModelProto.SentencePiece.NORMAL}
    # Merges as LlamaConverter makes them: every split of a normal piece into two pieces,
    # ordered by the merged piece's score (best first), then by the left piece's id.
    merges = []
    for piece, s in score.items():
        for k in range(1, len(piece)):
            left, right = piece[:k], piece[k:]
            if left in vocab and right in vocab:
                merges.append((-s, vocab[left], left, right))
    merges.sort()
    tok = Tokenizer(
        models.BPE(
            vocab=vocab,
            merges=[(left, right) for _, _, left, right in merges],
            unk_token="<unk>",
            byte_fallback=True,
            fuse_unk=True,
        )
    )
    tok.normalizer = normalizers.Sequence(
        [normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")]
    )
    base = json.loads(tok.to_str())
    out = {"base": base}

    nfkc = json.loads(json.dumps(base))
    nfkc["normalizer"]["normalizers"].insert(0, {"type": "NFKC"})
    out["nfkc-normalizer"] = nfkc

    bytelevel = json.loads(json.dumps(base))
    bytelevel["pre_tokenizer"] = {
        "type": "ByteLevel",
        "add_prefix_space": False,
        "trim_offsets": True,
        "use_regex": True,
    }
    out["bytelevel-pretok"] = bytelevel

    wp = Tokenizer(models.WordPiece(vocab=vocab, unk_token="<unk>"))
    wp.normalizer = normalizers.Sequence(
        [normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")]
    )
    out["wordpiece"] = json.loads(wp.to_str())

    # Every variant must still load in `tokenizers` itself: they are real tokenizer.json
    # files, refused by picobpe only for what they are.
    texts = {}
    for name, j in out.items():
        text = json.dumps(j, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
        Tokenizer.from_str(text).encode("Hello there")
        texts[name] = text
    return texts


def generate():
    lines = sample_lines()
    files = {}
    trained = {name: train(lines, opts) for name, opts in MODELS.items()}
    for name in ["unigram", "nfkc", "suffix"]:
        files[f"{name}.model"] = trained[name]
    files["unused.model"] = unused_model(trained["bpe"])
    for name, text in tokenizer_jsons(trained["bpe"]).items():
        files[f"{name}.tokenizer.json"] = text.encode("utf-8")

    # Each refused model is what its name says.
    for name, want in [("unigram", 1), ("nfkc", 2), ("suffix", 2)]:
        m = pb.ModelProto()
        m.ParseFromString(files[f"{name}.model"])
        assert m.trainer_spec.model_type == want, name
    m = pb.ModelProto()
    m.ParseFromString(files["nfkc.model"])
    assert len(m.normalizer_spec.precompiled_charsmap) > 0
    assert m.normalizer_spec.name == "nmt_nfkc"
    m.ParseFromString(files["suffix.model"])
    assert m.trainer_spec.treat_whitespace_as_suffix

    manifest = {
        "generator": "tests/scripts/gen_sp_refused.py",
        "sentencepiece": spm.__version__,
        "tokenizers": tokenizers.__version__,
        "sample": {
            "file": "tests/fixtures/train/english-1mb.txt",
            "first_bytes": SAMPLE_BYTES,
            "sentences": len(lines),
        },
        "trainer_options": {
            name: {k: v for k, v in {**COMMON, **opts}.items() if k != "minloglevel"}
            for name, opts in MODELS.items()
        },
        "unused_pieces": UNUSED,
        "files": {
            name: {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
            for name, data in sorted(files.items())
        },
    }
    files["MANIFEST.json"] = (json.dumps(manifest, indent=1, sort_keys=True) + "\n").encode()
    return files


def main():
    first = generate()
    second = generate()
    if first != second:
        sys.exit("not deterministic: two runs differ")
    OUT.mkdir(parents=True, exist_ok=True)
    for name, data in sorted(first.items()):
        (OUT / name).write_bytes(data)
        print(f"{name:34} {len(data):>7} B")


if __name__ == "__main__":
    main()
