#!/usr/bin/env python3
"""Reference vocabularies of Hugging Face `tokenizers`' WordPieceTrainer, for picobpe's WordPiece
trainer (`host-trainer train --model-type wordpiece`); made with the real library, never with
picobpe.

Usage (from the repository root; about a minute):

    pip install tokenizers==0.22.2
    python3 tests/scripts/gen_wp_train_vectors.py

It (re)writes tests/fixtures/wp_train/<config>.json for each configuration below:

    {"config": {...the trainer's settings and the corpus files...},
     "tokenizers": "0.22.2", "runs": 5, "vocab": [entries in the first run's id order]}

`tokenizers` reads the words in hash order, which differs from process to process, so the ids
of the continuation forms (`##c`) and the ties among merges they break are not the same from run
to run. Each configuration is trained in RUNS separate processes. Without a continuation prefix
there are no such forms and the runs must agree in id order ("compare": "order"; picobpe must
give that order); with `##` they must agree as a set ("compare": "set"; the sizes are the
largest at which they do on these corpora), and picobpe must give that set. The script fails
when the runs disagree.

The corpora are the committed texts of tests/fixtures/vectors/texts (their licences are in that
directory's PROVENANCE.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEXTS = ROOT / "tests/fixtures/vectors/texts"
OUT = ROOT / "tests/fixtures/wp_train"
RUNS = 5
BERT_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
# The largest alphabet limit below 400 whose cut falls between two different counts (a tie at
# the cut is broken in hash order), and the largest size (in steps of 100 from the 2,442
# entries before any merge) at which 5 runs with `##` agree on a set.
LIMIT = 200
MULTI_SET = 2600
MULTI = ["corpus-de.txt", "corpus-el.txt", "corpus-ru.txt", "corpus-fr.txt", "corpus-zh.txt",
         "corpus-code-python.txt"]
CONFIGS = {
    # Without a continuation prefix `tokenizers`' trainer is deterministic (no `##c` forms get
    # ids in hash order): the vocabulary must match in id order.
    "en-noprefix-2k": {"files": ["corpus-english.txt"], "lowercase": True, "strip_accents": None,
                       "vocab_size": 2000, "min_frequency": 2, "limit_alphabet": 1000,
                       "prefix": "", "special_tokens": BERT_SPECIALS, "compare": "order"},
    "multi-noprefix-3k": {"files": MULTI, "lowercase": False, "strip_accents": False,
                          "vocab_size": 3000, "min_frequency": 0, "limit_alphabet": LIMIT,
                          "prefix": "", "special_tokens": BERT_SPECIALS, "compare": "order"},
    # With `##`: BertWordPieceTokenizer's settings, as far as the runs agree on a set.
    "en-uncased-200": {"files": ["corpus-english.txt"], "lowercase": True, "strip_accents": None,
                       "vocab_size": 200, "min_frequency": 2, "limit_alphabet": 1000,
                       "prefix": "##", "special_tokens": BERT_SPECIALS, "compare": "set"},
    "multi-cased-set": {"files": MULTI, "lowercase": False, "strip_accents": False,
                        "vocab_size": MULTI_SET, "min_frequency": 0, "limit_alphabet": None,
                        "prefix": "##", "special_tokens": BERT_SPECIALS, "compare": "set"},
}


def train_once(name: str) -> list[str]:
    """One training run in this process: the vocabulary in id order."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers
    c = CONFIGS[name]
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=c["lowercase"],
                                                strip_accents=c["strip_accents"])
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    limit = {} if c["limit_alphabet"] is None else {"limit_alphabet": c["limit_alphabet"]}
    trainer = trainers.WordPieceTrainer(vocab_size=c["vocab_size"],
                                        min_frequency=c["min_frequency"], **limit,
                                        special_tokens=c["special_tokens"],
                                        continuing_subword_prefix=c["prefix"],
                                        show_progress=False)
    tok.train([str(TEXTS / f) for f in c["files"]], trainer)
    vocab = tok.get_vocab()
    return sorted(vocab, key=vocab.get)


def main() -> None:
    import tokenizers
    assert tokenizers.__version__ == "0.22.2", tokenizers.__version__
    OUT.mkdir(exist_ok=True)
    for name, config in CONFIGS.items():
        runs = []
        for _ in range(RUNS):
            out = subprocess.run([sys.executable, __file__, "--one", name], check=True,
                                 capture_output=True, text=True, env=dict(os.environ))
            runs.append(json.loads(out.stdout))
        sets = {frozenset(r) for r in runs}
        orders = {tuple(r) for r in runs}
        if len(sets if config["compare"] == "set" else orders) != 1:
            sys.exit(f"{name}: tokenizers' {RUNS} runs gave {len(sets)} sets, {len(orders)} orders")
        record = {"config": config, "tokenizers": tokenizers.__version__, "runs": RUNS,
                  "orders_seen": len(orders), "vocab": runs[0]}
        (OUT / f"{name}.json").write_text(json.dumps(record, ensure_ascii=False, indent=0) + "\n",
                                          encoding="utf-8")
        print(f"{name}: {len(runs[0])} entries, {len(orders)} id orders in {RUNS} runs, one set")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--one":
        print(json.dumps(train_once(sys.argv[2]), ensure_ascii=False))
    else:
        main()
