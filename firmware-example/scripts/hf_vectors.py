#!/usr/bin/env python3
"""Reference ids for a trained model from Hugging Face `tokenizers` (an independent BPE
implementation), written in the firmware's vector format (see xtask/src/firmware/vectors.rs).

Usage: hf_vectors.py VOCAB_JSON MERGES_TXT VECTORS_DIR OUT_BIN

The model is rebuilt from the trainer's GPT-2-style `vocab.json` / `merges.txt` as a byte-level
BPE with the GPT-2 pre-tokenizer (`ByteLevel(add_prefix_space=False, use_regex=True)`), the way
GPT-2 itself is loaded in `tokenizers`. "all" ids register `<|endoftext|>` as a special token;
"ordinary" ids come from a second tokenizer without it. Inputs (deterministic): the `fixtures`
records of VECTORS_DIR/inputs/fixtures.jsonl up to 4 KiB, then the first 48 `random` records.
Invalid UTF-8 inputs are skipped (the library takes `str`). Each record is checked to decode
back to its text, so a tokenizer that dropped bytes cannot produce a vector.
"""
import json
import os
import struct
import sys

from tokenizers import Tokenizer, decoders, models, pre_tokenizers

SPECIAL = "<|endoftext|>"


def make(vocab, merges, with_special):
    tok = Tokenizer(models.BPE.from_file(vocab, merges))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    if with_special:
        tok.add_special_tokens([SPECIAL])
    return tok


def inputs(vectors_dir):
    def load(name):
        with open(os.path.join(vectors_dir, "inputs", name), encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]

    for rec in load("fixtures.jsonl"):
        if "text" in rec:
            text = rec["text"]
        elif "file" in rec:
            with open(os.path.join(vectors_dir, rec["file"]), "rb") as f:
                raw = f.read()
            if len(raw) > 4096:
                continue
            text = raw.decode("utf-8")
        else:
            continue
        if len(text.encode("utf-8")) <= 4096:
            yield "fixtures/" + rec["name"], text
    for rec in load("random.jsonl")[:48]:
        if "text" in rec:
            yield "random/" + rec["name"], rec["text"]


def main():
    vocab, merges, vectors_dir, out = sys.argv[1:5]
    with open(vocab, encoding="utf-8") as f:
        special_id = json.load(f).get(SPECIAL)
    if special_id is None:
        sys.exit(f"{vocab}: no {SPECIAL} entry")
    tok_all = make(vocab, merges, True)
    tok_ord = make(vocab, merges, False)
    if tok_all.token_to_id(SPECIAL) != special_id:
        sys.exit("special token id mismatch")
    body = bytearray()
    count = 0
    for name, text in inputs(vectors_dir):
        ids_all = tok_all.encode(text).ids
        ids_ord = tok_ord.encode(text).ids
        for ids in (ids_all, ids_ord):
            if tok_all.decode(ids, skip_special_tokens=False) != text:
                sys.exit(f"{name}: reference ids do not decode to the text")
        nb = name.encode("utf-8")
        tb = text.encode("utf-8")
        body += struct.pack("<H", len(nb)) + nb + struct.pack("<I", len(tb)) + tb
        for ids in (ids_all, ids_ord):
            body += struct.pack("<I", len(ids)) + struct.pack(f"<{len(ids)}I", *ids)
        count += 1
    with open(out, "wb") as f:
        f.write(b"PBVEC1\0\0" + struct.pack("<I", count) + bytes(body))
    print(f"{count} records")


if __name__ == "__main__":
    main()
