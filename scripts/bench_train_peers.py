#!/usr/bin/env python3
"""Train a peer BPE trainer once, for `cargo xtask bench-train` (which times this process and
reads its peak RSS from the kernel).

usage: bench_train_peers.py {hf,hf-wordpiece,hf-unigram,spm-bpe,spm-bpe-identity,spm-unigram,rustbpe}
       FILE VOCAB_SIZE OUT_DIR

- hf: Hugging Face `tokenizers` BpeTrainer with the ByteLevel pre-tokenizer (the GPT-2 regex),
  256-byte initial alphabet, special token <|endoftext|> (HF does not split the training text
  on it; it only reserves the id), vocab_size counting bytes + merges + special.
- hf-wordpiece: Hugging Face `tokenizers` WordPieceTrainer with BertWordPieceTokenizer's
  settings (uncased BertNormalizer, BertPreTokenizer, [PAD] [UNK] [CLS] [SEP] [MASK],
  min_frequency 2, limit_alphabet 1000), vocab_size counting every entry.
- spm-bpe: `sentencepiece`'s trainer (`spm_train`) with model_type bpe and its defaults
  (nmt_nfkc, character_coverage 0.9995, num_threads 16); spm-bpe-identity: the same with
  normalization_rule_name identity.
- spm-unigram: `spm_train` with model_type unigram and its defaults.
- hf-unigram: `tokenizers`' SentencePieceUnigramTokenizer (Nmt + NFKC, Metaspace) trained with
  its UnigramTrainer, unk_token <unk>.
- rustbpe: `rustbpe.Tokenizer().train_from_iterator` over the file's documents (split on
  <|endoftext|>, as a user would feed it), with the GPT-2 pattern; vocab_size counts bytes + merges.

Prints one JSON line: {"tool", "version", "train_s", "vocab_size"}; train_s is the time inside
the library's training call (for hf that includes reading the file; for rustbpe reading and
splitting the file happen before it).
"""

import json
import sys
import time
from importlib.metadata import version

GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
EOT = "<|endoftext|>"


def train_hf(path, vocab_size, out_dir):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[EOT],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    start = time.perf_counter()
    tok.train([path], trainer)
    elapsed = time.perf_counter() - start
    tok.save(f"{out_dir}/tokenizer.json")
    return elapsed, tok.get_vocab_size(), version("tokenizers")


def train_hf_wordpiece(path, vocab_size, out_dir):
    """BertWordPieceTokenizer's settings: uncased BertNormalizer, BertPreTokenizer, BERT's five
    special tokens, min_frequency 2, limit_alphabet 1000."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = trainers.WordPieceTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        limit_alphabet=1000,
        special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"],
        show_progress=False,
    )
    start = time.perf_counter()
    tok.train([path], trainer)
    elapsed = time.perf_counter() - start
    tok.save(f"{out_dir}/wordpiece.json")
    return elapsed, tok.get_vocab_size(), version("tokenizers")


def train_spm(path, vocab_size, out_dir, rule="nmt_nfkc", model_type="bpe"):
    import sentencepiece as spm

    start = time.perf_counter()
    spm.SentencePieceTrainer.train(input=path, model_prefix=f"{out_dir}/spm",
                                   model_type=model_type, vocab_size=vocab_size,
                                   normalization_rule_name=rule, minloglevel=2)
    elapsed = time.perf_counter() - start
    sp = spm.SentencePieceProcessor(model_file=f"{out_dir}/spm.model")
    return elapsed, sp.get_piece_size(), version("sentencepiece")


def train_spm_identity(path, vocab_size, out_dir):
    return train_spm(path, vocab_size, out_dir, "identity")


def train_spm_unigram(path, vocab_size, out_dir):
    return train_spm(path, vocab_size, out_dir, model_type="unigram")


def train_hf_unigram(path, vocab_size, out_dir):
    from tokenizers import SentencePieceUnigramTokenizer

    tok = SentencePieceUnigramTokenizer()
    start = time.perf_counter()
    tok.train([path], vocab_size=vocab_size, show_progress=False, unk_token="<unk>")
    elapsed = time.perf_counter() - start
    tok.save(f"{out_dir}/unigram.json")
    return elapsed, tok.get_vocab_size(), version("tokenizers")


def train_rustbpe(path, vocab_size, out_dir):
    import rustbpe

    with open(path, encoding="utf-8") as f:
        docs = f.read().split(EOT)
    tok = rustbpe.Tokenizer()
    start = time.perf_counter()
    tok.train_from_iterator(iter(docs), vocab_size=vocab_size, pattern=GPT2_PATTERN)
    elapsed = time.perf_counter() - start
    return elapsed, tok.vocab_size, version("rustbpe")


def main():
    tools = {"hf": train_hf, "hf-wordpiece": train_hf_wordpiece, "spm-bpe": train_spm,
             "spm-bpe-identity": train_spm_identity, "spm-unigram": train_spm_unigram,
             "hf-unigram": train_hf_unigram, "rustbpe": train_rustbpe}
    if len(sys.argv) != 5 or sys.argv[1] not in tools:
        sys.exit(__doc__)
    tool, path, vocab_size, out_dir = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    train = tools[tool]
    elapsed, size, ver = train(path, vocab_size, out_dir)
    print(json.dumps({"tool": tool, "version": ver, "train_s": elapsed, "vocab_size": size}))


if __name__ == "__main__":
    main()
