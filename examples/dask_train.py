#!/usr/bin/env python3
"""Train a picobpe tokenizer on a corpus too large for one machine, with Dask distributed.

The expensive half of training, pre-tokenizing and counting, runs as one
`host-trainer count-pieces` per shard on the cluster's workers; the count files are summed
with `host-trainer merge-counts` in a tree on the workers; the merges are learned by
`host-trainer train --counts` here, on the driver. The model is byte-identical to
`host-trainer train --input` on the whole corpus, because shards end at document boundaries:
each input file is a document, and `--split` cuts files only right after a special token.

    pip install "dask[distributed]"
    # every input file is a shard (the usual case: a corpus already stored as many files)
    python3 examples/dask_train.py --vocab-size 32000 --special-token '<|endoftext|>' \\
        --out model-dir data/part-*.txt
    # one big file cut into 8 shards, on an existing cluster
    python3 examples/dask_train.py --scheduler tcp://10.0.0.1:8786 --split 8 \\
        --vocab-size 32000 --special-token '<|endoftext|>' --out model-dir corpus.txt

Without `--scheduler` a LocalCluster of `--local-workers` worker processes is started. On a
real cluster, the input files (and `--work`, when `--split` writes shards) must be readable by
the workers at the same paths, and `host-trainer` must be installed on every worker; count
files travel between workers as task results, so they need no shared storage.

Why Dask distributed: it is what many Python data pipelines already use for map/reduce over
files, it installs with pip, its LocalCluster runs real worker processes with no services to
set up (what the test uses: host-trainer/tests/train_dask.rs), and the same script then runs
on a real cluster (`dask scheduler` / `dask worker`, Kubernetes, or HPC queues through
dask-jobqueue). Any engine that can run a command per shard and pass bytes along would do:
the work is three host-trainer commands.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time


def run(cmd):
    """Run a host-trainer command; raise with its stderr if it fails."""
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {done.stderr.decode(errors='replace')}")
    return done.stderr.decode(errors="replace")


def count_shard(exe, files, settings, threads):
    """Worker task: the count file of one shard, as bytes."""
    with tempfile.TemporaryDirectory(prefix="picobpe-count-") as tmp:
        out = os.path.join(tmp, "shard.counts")
        cmd = [exe, "count-pieces", "--quiet", "--out", out] + settings
        if threads:
            cmd += ["--threads", str(threads)]
        for f in files:
            cmd += ["--input", f]
        run(cmd)
        with open(out, "rb") as f:
            return f.read()


def merge_counts(exe, *parts):
    """Worker task: the sum of count files (given as bytes), as bytes."""
    with tempfile.TemporaryDirectory(prefix="picobpe-merge-") as tmp:
        paths = []
        for i, part in enumerate(parts):
            paths.append(os.path.join(tmp, f"{i}.counts"))
            with open(paths[-1], "wb") as f:
                f.write(part)
        out = os.path.join(tmp, "sum.counts")
        run([exe, "merge-counts", "--out", out] + paths)
        with open(out, "rb") as f:
            return f.read()


def find_after(src, offset, separator):
    """The offset just past the first `separator` starting at or after `offset`, or None."""
    src.seek(offset)
    carry, carry_at = b"", offset
    while True:
        block = src.read(1 << 20)
        if not block:
            return None
        buf = carry + block
        hit = buf.find(separator)
        if hit >= 0:
            return carry_at + hit + len(separator)
        keep = min(len(buf), len(separator) - 1)
        carry_at += len(buf) - keep
        carry = buf[len(buf) - keep:]


def split_file(path, n, separator, work, tag):
    """Cut `path` into at most `n` shards of similar size, each ending right after a
    `separator` (a document boundary), streaming. Returns the shard paths.

    The separator must be a special token that overlaps neither itself nor another special
    token (as `<|endoftext|>`), so each occurrence is one the trainer splits on."""
    size = os.path.getsize(path)
    cuts = [0]
    with open(path, "rb") as src:
        for i in range(1, n):
            end = find_after(src, max(cuts[-1], size * i // n), separator)
            if end is None or end >= size:
                break
            cuts.append(end)
        cuts.append(size)
        shards = []
        for start, end in zip(cuts, cuts[1:]):
            shard = os.path.join(work, f"{tag}.shard-{len(shards)}")
            src.seek(start)
            with open(shard, "wb") as dst:
                left = end - start
                while left:
                    block = src.read(min(left, 1 << 24))
                    dst.write(block)
                    left -= len(block)
            shards.append(shard)
    return shards


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("inputs", nargs="+", help="text files; each is one shard unless --split")
    p.add_argument("--vocab-size", type=int, required=True)
    p.add_argument("--out", required=True, help="output directory (as for host-trainer train)")
    p.add_argument("--pattern", default="gpt2", choices=["gpt2", "cl100k", "o200k"])
    p.add_argument("--special-token", action="append", default=[], dest="specials")
    p.add_argument("--split", type=int, default=0, metavar="N",
                   help="cut each input into N shards after a special token (--split-on)")
    p.add_argument("--split-on", help="document separator for --split [default: the first "
                   "--special-token]")
    p.add_argument("--scheduler", help="address of a running Dask scheduler")
    p.add_argument("--local-workers", type=int, default=2,
                   help="worker processes of the LocalCluster started without --scheduler")
    p.add_argument("--count-threads", type=int, default=0,
                   help="--threads for each count-pieces [default: all cores of the worker]")
    p.add_argument("--fan-in", type=int, default=4, help="count files summed per merge task")
    p.add_argument("--host-trainer", default="host-trainer", help="path of the binary")
    p.add_argument("--work", help="directory for shards and the summed count file "
                   "[default: a temporary directory]")
    args = p.parse_args()

    from dask.distributed import Client, LocalCluster, wait

    exe = os.path.abspath(args.host_trainer) if os.sep in args.host_trainer else args.host_trainer
    settings = ["--pattern", args.pattern]
    for s in args.specials:
        settings += ["--special-token", s]
    started = time.monotonic()
    work_tmp = None if args.work else tempfile.TemporaryDirectory(prefix="picobpe-dask-")
    work = args.work or work_tmp.name
    os.makedirs(work, exist_ok=True)

    inputs = [os.path.abspath(f) for f in args.inputs]
    if args.split > 1:
        separator = args.split_on or (args.specials[0] if args.specials else None)
        if not separator:
            sys.exit("--split needs --split-on or a --special-token to cut at")
        if separator not in args.specials:
            sys.exit(f"--split-on {separator!r} must be one of the special tokens")
        shards = []
        for i, f in enumerate(inputs):
            tag = f"{i}-{os.path.basename(f)}"
            shards += [[s] for s in split_file(f, args.split, separator.encode(), work, tag)]
    else:
        shards = [[f] for f in inputs]

    if args.scheduler:
        cluster, client = None, Client(args.scheduler)
    else:
        cluster = LocalCluster(n_workers=args.local_workers, threads_per_worker=1,
                               processes=True, dashboard_address=None)
        client = Client(cluster)
    try:
        n_workers = len(client.scheduler_info()["workers"])
        futures = client.map(count_shard, [exe] * len(shards), shards, [settings] * len(shards),
                             [args.count_threads] * len(shards), pure=False)
        # The reduce tree: merge tasks start as soon as their inputs are counted.
        parts, fan_in = futures, max(2, args.fan_in)
        while len(parts) > 1:
            groups = [parts[i:i + fan_in] for i in range(0, len(parts), fan_in)]
            parts = [g[0] if len(g) == 1 else client.submit(merge_counts, exe, *g, pure=False)
                     for g in groups]
        total = client.gather(parts[0])
        # Which worker processes ran the count tasks (their results are still held there).
        wait(futures)
        ran = {w for ws in client.who_has(futures).values() for w in ws}
        pids = {pid for w, pid in client.run(os.getpid).items() if w in ran}
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    counted = time.monotonic()
    all_counts = os.path.join(work, "all.counts")
    with open(all_counts, "wb") as f:
        f.write(total)
    summary = run([exe, "train", "--quiet",
                   "--counts", all_counts, "--vocab-size", str(args.vocab_size),
                   "--out", args.out])
    print(f"dask: {len(shards)} shards counted and summed on a cluster of {n_workers} workers "
          f"({len(pids)} worker processes ran count tasks, pids {sorted(pids)}) in "
          f"{counted - started:.2f} s, count file {len(total)} bytes; then {summary.strip()}",
          file=sys.stderr)
    if work_tmp is not None:
        work_tmp.cleanup()


if __name__ == "__main__":
    main()
