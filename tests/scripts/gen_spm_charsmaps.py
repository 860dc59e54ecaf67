#!/usr/bin/env python3
"""Write host-trainer/data/<rule>.charsmap.gz: the `precompiled_charsmap` that `sentencepiece`
0.2.3 builds in for each normalization rule the trainer offers (`nmt_nfkc`, `nmt_nfkc_cf`),
taken from a model the real library trains (its builtin rules are compiled into the wheel).
The blobs are sentencepiece's data (Apache-2.0); gzip keeps them at about 140 KB each.

    python3 tests/scripts/gen_spm_charsmaps.py
"""
import gzip
import io
import pathlib

import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as model_pb2

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "host-trainer/data"

assert spm.__version__ == "0.2.3", spm.__version__
OUT.mkdir(parents=True, exist_ok=True)
for rule in ["nmt_nfkc", "nmt_nfkc_cf"]:
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(["hello world"] * 20), model_writer=model,
                                   vocab_size=20, model_type="bpe", normalization_rule_name=rule,
                                   minloglevel=2)
    proto = model_pb2.ModelProto()
    proto.ParseFromString(model.getvalue())
    assert proto.normalizer_spec.name == rule
    blob = proto.normalizer_spec.precompiled_charsmap
    # mtime=0: the same bytes on every run.
    (OUT / f"{rule}.charsmap.gz").write_bytes(gzip.compress(blob, 9, mtime=0))
    print(f"{rule}: {len(blob)} bytes")
