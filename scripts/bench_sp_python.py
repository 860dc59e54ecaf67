#!/usr/bin/env python3
"""The `sentencepiece` column of `picobpe-bench-sp`: time SentencePieceProcessor.encode.

Usage: bench_sp_python.py MODEL RUNS CHUNKS_FILE

CHUNKS_FILE holds the texts as records of a u32 little-endian byte length and the UTF-8 bytes
(the benchmark writes it). Each run encodes every chunk (`sp.encode(chunk)`, ids out); only the
encode calls are timed. Prints one JSON line: the number of ids, the CRC-32 of the ids as u32
little-endian (so the caller can check they equal its own), and the seconds of each run.
"""

import json
import struct
import sys
import time
import zlib

import sentencepiece as spm


def main() -> None:
    model, runs, chunks_file = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    data = open(chunks_file, "rb").read()
    chunks = []
    at = 0
    while at < len(data):
        (n,) = struct.unpack_from("<I", data, at)
        chunks.append(data[at + 4 : at + 4 + n].decode("utf-8"))
        at += 4 + n
    sp = spm.SentencePieceProcessor(model_file=model)
    crc = 0
    n_ids = 0
    for chunk in chunks:
        ids = sp.encode(chunk)
        n_ids += len(ids)
        crc = zlib.crc32(struct.pack(f"<{len(ids)}I", *ids), crc)
    seconds = []
    for _ in range(runs):
        start = time.perf_counter()
        for chunk in chunks:
            sp.encode(chunk)
        seconds.append(time.perf_counter() - start)
    print(json.dumps({"ids": n_ids, "crc32": crc, "seconds": seconds, "version": spm.__version__}))


if __name__ == "__main__":
    main()
