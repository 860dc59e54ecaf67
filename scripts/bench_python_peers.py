#!/usr/bin/env python3
"""Encode throughput of the Python tokenizer packages `fastokens` and `tokie` (and `tiktoken`,
the reference) on the corpora `cargo xtask bench` measures, in the same table format.

usage (from the repository root; `pip install tiktoken fastokens tokie`):

    python3 scripts/bench_python_peers.py [--encoding gpt2|cl100k_base|o200k_base]...
        [--corpus NAME]... [--runs N] [--specials ordinary|all] [--cpu N] [--cold] [FILE...]

Single thread, enforced two ways before any tokenizer is imported: the process is pinned to one
CPU (`os.sched_setaffinity`; tokie splits long inputs over `available_parallelism()` threads,
which follows the affinity mask) and RAYON_NUM_THREADS=1 (fastokens uses rayon). Each timed call
also records CPU time: the `cpu/wall` column printed per row stays at ~1.0 only when one thread
did the work.

Vocabularies are built offline from `tests/fixtures/models` (the rank files and specials the Rust
benchmark uses) with the issues' patterns: tiktoken with `tiktoken.Encoding(...)` as in
`tests/scripts/gen_vectors.py`; fastokens with `Tokenizer.from_tiktoken(rank file, ...)`, with
its `encoding=` preset pattern for cl100k_base / o200k_base (its fast path) and the issue's
pattern for gpt2; tokie, which only reads Hugging Face `tokenizer.json`, from a tokenizer.json this
script writes to $TMPDIR/picobpe-bench/ (vocab = the ranks in GPT-2's byte-to-unicode form,
merges = each token's canonical split, i.e. the last merge of tiktoken's BPE on the token's own
bytes, in rank order; ByteLevel pre-tokenizer for gpt2, Split(pattern) + ByteLevel otherwise).
Its BPE (vocab + merges) is checked against tiktoken with Hugging Face `tokenizers` when that is
installed, so a tokie difference comes from tokie, not from the file.

For every encoding and corpus each package's ids are compared with tiktoken's; a package that
differs is reported as "ids differ at i" and not timed. Timing covers only the encode call
(its return value is not converted); median of --runs runs, interleaved; MB/s = 10^6 input
bytes per second. Every run encodes the same text again, so a package that remembers pieces
across calls (fastokens keeps every piece, of any length) times mostly cache hits from the
second run on; `--cold` builds a new instance (untimed) before every timed call, which is what
encoding text not seen before costs (`cargo xtask bench --cold` does the same for the Rust
columns). Corpora: ../shared/data/corpus (english, each multi/* by stem, `multi` =
all concatenated) when present ($PICOBPE_SHARED_DATA replaces ../shared/data), else the committed
tests/fixtures/train files of the same shape (1 MB English, 100 kB multi slices) with a note.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "tests" / "fixtures" / "models"
SHARED_CORPUS = Path(os.environ.get("PICOBPE_SHARED_DATA", ROOT.parent / "shared" / "data")) / "corpus"

# The reference patterns (issue 2 for gpt2, issue 5 for the others): tests/scripts/patterns.py.
sys.path.insert(0, str(ROOT / "tests" / "scripts"))
from patterns import ENCODINGS, ISSUE_PATTERNS as PATTERNS  # noqa: E402

ALIASES = {"gpt2": "gpt2", "r50k": "gpt2", "cl100k": "cl100k_base", "o200k": "o200k_base"}
COLUMNS = ["tiktoken (py)", "fastokens", "tokie"]


def single_thread(cpu: int | None) -> int:
    """Pin this process to one CPU and cap thread pools; returns the CPU. Must run before the
    tokenizer packages are imported (rayon reads its variable when its pool starts)."""
    os.environ["RAYON_NUM_THREADS"] = "1"
    os.environ["RAYON_RS_NUM_CPUS"] = "1"
    os.environ["OMP_NUM_THREADS"] = "1"
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    allowed = sorted(os.sched_getaffinity(0))
    chosen = allowed[-1] if cpu is None else cpu
    os.sched_setaffinity(0, {chosen})
    return chosen


# ---------------------------------------------------------------------------------------------
# Vocabularies
# ---------------------------------------------------------------------------------------------


def rank_file(name: str) -> bytes:
    plain = MODELS / f"{name}.tiktoken"
    if plain.is_file():
        return plain.read_bytes()
    return gzip.decompress((MODELS / f"{name}.tiktoken.gz").read_bytes())


def parse_ranks(data: bytes) -> dict[bytes, int]:
    ranks = {}
    for line in data.splitlines():
        if line:
            tok, rank = line.split()
            ranks[base64.b64decode(tok)] = int(rank)
    return ranks


def specials(name: str) -> dict[str, int]:
    return json.loads((MODELS / f"{name}.json").read_text())["special_tokens"]


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible byte -> printable character map (as in HF ByteLevel)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) + list(range(0xAE, 0xFF + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def canonical_split(token: bytes, ranks: dict[bytes, int]) -> tuple[bytes, bytes]:
    """tiktoken's BPE on the token's own bytes, stopped before the token itself: the two parts
    its last merge joins (lowest rank first, leftmost on ties)."""
    limit = ranks[token]
    parts = [token[i : i + 1] for i in range(len(token))]
    while len(parts) > 2:
        best = None
        for i in range(len(parts) - 1):
            r = ranks.get(parts[i] + parts[i + 1])
            if r is not None and r < limit and (best is None or r < best[0]):
                best = (r, i)
        if best is None:
            break
        i = best[1]
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
    if len(parts) != 2:
        raise ValueError(f"token {token!r} (rank {limit}) is not reachable by BPE from its bytes")
    return parts[0], parts[1]


def tokenizer_json(name: str, ranks: dict[bytes, int], special: dict[str, int], with_specials: bool) -> Path:
    """Write (once, cached by content) a Hugging Face tokenizer.json equivalent to the rank file."""
    key = hashlib.sha256(repr((sorted(ranks.items(), key=lambda kv: kv[1])[:64], len(ranks),
                               PATTERNS[name], sorted(special.items()), with_specials, 2)).encode()).hexdigest()[:16]
    out_dir = Path(tempfile.gettempdir()) / "picobpe-bench"
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"tokie-{name}-{key}.json"
    if path.is_file():
        return path
    by_rank = sorted(ranks.items(), key=lambda kv: kv[1])
    if [r for _, r in by_rank] != list(range(len(by_rank))):
        raise ValueError(f"{name}: ranks are not 0..n-1")
    if any(len(t) != 1 for t, _ in by_rank[:256]):
        raise ValueError(f"{name}: the first 256 ranks are not the single bytes")
    b2u = bytes_to_unicode()
    u = lambda b: "".join(b2u[x] for x in b)  # noqa: E731
    vocab = {u(t): r for t, r in by_rank}
    merges = []
    for t, _ in by_rank[256:]:
        left, right = canonical_split(t, ranks)
        merges.append(f"{u(left)} {u(right)}")
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True}
    if name == "gpt2":
        pre = {**byte_level, "use_regex": True}
    else:
        pre = {
            "type": "Sequence",
            "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": PATTERNS[name]}, "behavior": "Isolated", "invert": False},
                {**byte_level, "use_regex": False},
            ],
        }
    added = [
        {"id": i, "content": s, "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": True}
        for s, i in sorted(special.items(), key=lambda kv: kv[1])
    ] if with_specials else []
    doc = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": pre,
        "post_processor": None,
        "decoder": {**byte_level, "use_regex": True},
        "model": {
            "type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
            "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
            "ignore_merges": False, "vocab": vocab, "merges": merges,
        },
    }
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, ensure_ascii=False))
    tmp.replace(path)
    return path


# ---------------------------------------------------------------------------------------------
# Corpora
# ---------------------------------------------------------------------------------------------


def english_and_multi(english: Path, multi_dir: Path, wanted: list[str]) -> list[tuple[str, str]]:
    """`english`, each multi/*.txt by stem, and `multi` (those files concatenated), filtered."""
    keep = lambda n: not wanted or n in wanted  # noqa: E731
    read = lambda p: Path(p).read_bytes().decode("utf-8")  # noqa: E731 (bytes: keep CRLF as is)
    out = []
    if keep("english"):
        out.append(("english", read(english)))
    parts = []
    for p in sorted(multi_dir.glob("*.txt")):
        if keep("multi") or keep(p.stem):
            t = read(p)
            if keep("multi"):
                parts.append(t)
            if keep(p.stem):
                out.append((p.stem, t))
    if parts:
        out.append(("multi", "".join(parts)))
    return out


def corpora(files: list[str], wanted: list[str]) -> tuple[str, list[tuple[str, str]]]:
    if files:
        return "files from the command line", [(f, Path(f).read_bytes().decode("utf-8")) for f in files]
    if (SHARED_CORPUS / "english.txt").is_file():
        return f"corpora: {SHARED_CORPUS}", english_and_multi(
            SHARED_CORPUS / "english.txt", SHARED_CORPUS / "multi", wanted)
    fixtures = ROOT / "tests" / "fixtures" / "train"
    return (f"note: the shared corpus is absent; measuring the committed fixtures in {fixtures} "
            "(1 MB English, 100 kB multi slices)",
            english_and_multi(fixtures / "english-1mb.txt", fixtures / "multi", wanted))


# ---------------------------------------------------------------------------------------------
# Subjects
# ---------------------------------------------------------------------------------------------


class Subject:
    """name, ids(text) -> list[int] (checked), call(text) (timed; result not converted);
    forget() (untimed, --cold) drops whatever the package remembers between calls."""

    def __init__(self, name, ids, call, decode_bytes=None, forget=lambda: None):
        self.name, self.ids, self.call, self.decode_bytes = name, ids, call, decode_bytes
        self.forget = forget


class Fresh:
    """A tokenizer object that can be rebuilt: `make()` gives a new instance, with empty caches
    (fastokens keeps a per-instance cache of whole pieces, of any length, across calls)."""

    def __init__(self, make):
        self.make, self.obj = make, make()

    def renew(self) -> None:
        self.obj = None
        self.obj = self.make()


def subjects(name: str, mode: str) -> tuple[Subject, list]:
    """The reference (tiktoken) and the peer columns (a Subject or an 'n/a (...)' string)."""
    import tiktoken

    raw = rank_file(name)
    ranks = parse_ranks(raw)
    special = specials(name)
    enc = tiktoken.Encoding(name=f"{name}-local", pat_str=PATTERNS[name], mergeable_ranks=ranks,
                            special_tokens=special)
    if mode == "ordinary":
        ref = Subject(COLUMNS[0], enc.encode_ordinary, enc.encode_ordinary, enc.decode_bytes)
    else:
        f = lambda t: enc.encode(t, allowed_special="all")  # noqa: E731
        ref = Subject(COLUMNS[0], f, f, enc.decode_bytes)

    cols: list = []
    try:
        import fastokens

        tmp = Path(tempfile.gettempdir()) / "picobpe-bench"
        tmp.mkdir(parents=True, exist_ok=True)
        rank_path = tmp / f"{name}.tiktoken"
        if not rank_path.is_file() or rank_path.read_bytes() != raw:
            rank_path.write_bytes(raw)
        # cl100k_base / o200k_base: fastokens's own preset for the pattern (its fast splitter; with
        # the issue's pattern string it falls back to a regex engine, ~3x slower on cl100k). No
        # gpt2 preset: the issue's pattern. Ids are checked against tiktoken either way.
        if name == "gpt2":
            ft = Fresh(lambda: fastokens.Tokenizer.from_tiktoken(str(rank_path), pattern=PATTERNS[name],
                                                                 special_tokens=special))
        else:
            ft = Fresh(lambda: fastokens.Tokenizer.from_tiktoken(str(rank_path), encoding=name,
                                                                 special_tokens=special))
        if mode == "ordinary":
            call = lambda t: ft.obj.encode_ordinary(t)  # noqa: E731
        else:
            call = lambda t: ft.obj.encode(t, add_special_tokens=False)  # noqa: E731
        cols.append(Subject("fastokens", lambda t: list(call(t).ids), call, forget=ft.renew))
    except ImportError:
        cols.append("n/a (not installed)")
    try:
        import tokie

        path = tokenizer_json(name, ranks, special, mode == "all")
        check_tokenizer_json(path, name, enc)
        tk = Fresh(lambda: tokie.Tokenizer.from_json(str(path)))
        call = lambda t: tk.obj.encode(t, add_special_tokens=False)  # noqa: E731
        cols.append(Subject("tokie", lambda t: list(call(t).ids), call, forget=tk.renew))
    except ImportError:
        cols.append("n/a (not installed)")
    return ref, cols


_checked: set = set()


def check_tokenizer_json(path: Path, name: str, enc) -> None:
    """The generated vocab and merges must merge like tiktoken: Hugging Face `tokenizers` (if
    installed) runs the file's BPE, without its pre-tokenizer, on the pieces of tiktoken's own
    pattern split (the `regex` package) over a mixed sample, and must give tiktoken's ids. (The
    pre-tokenizer part is the package's own: tokie picks a hand-written splitter from the
    pattern, and HF's Oniguruma reads `$` as end of line, so it cannot stand in for it.)"""
    if path in _checked:
        return
    _checked.add(path)
    try:
        import regex
        from tokenizers import Tokenizer as HF
    except ImportError:
        print(f"note: `tokenizers` or `regex` not installed; {path.name} not cross-checked")
        return
    doc = json.loads(path.read_text())
    doc["added_tokens"] = []
    doc["pre_tokenizer"] = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                            "use_regex": False}
    hf = HF.from_str(json.dumps(doc))
    sample = ("Hello world's CamelCase 12345 \u00e9t\u00e9  \n\n  \u4f60\u597d\u4e16\u754c \U0001F643 "
              "x = f(y)/2;\r\n   tail  <|endoftext|> end   ")
    multi = SHARED_CORPUS / "multi"
    if not multi.is_dir():
        multi = ROOT / "tests" / "fixtures" / "train" / "multi"
    for p in sorted(multi.glob("*.txt")):
        sample += p.read_bytes().decode("utf-8")[:20000]
    pieces = regex.findall(PATTERNS[name], sample)
    got = [i for e in hf.encode_batch(pieces, add_special_tokens=False) for i in e.ids]
    want = enc.encode_ordinary(sample)
    if got != want:
        i = first_difference(got, want)
        sys.exit(f"FAILURE: the BPE of {path} disagrees with tiktoken at id index {i}")
    print(f"note: {path.name}: its BPE equals tiktoken's on {len(pieces)} pieces ({len(want)} ids), "
          "checked with HF tokenizers")


# ---------------------------------------------------------------------------------------------
# Measurement
# ---------------------------------------------------------------------------------------------


def first_difference(a: list[int], b: list[int]) -> int | None:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def timed(call, text: str) -> tuple[float, float]:
    """(wall seconds, process CPU seconds) of one call."""
    c0, t0 = time.process_time(), time.perf_counter()
    call(text)
    t1, c1 = time.perf_counter(), time.process_time()
    return t1 - t0, c1 - c0


def measure(enc_name, corpus, ref, cols, runs, ref_bytes, cold=False):
    name, text = corpus
    nbytes = len(text.encode("utf-8"))
    want = ref.ids(text)
    cells: list = []
    live = []
    for j, col in enumerate([ref] + cols):
        if isinstance(col, str):
            cells.append(col)
            continue
        got = want if col is ref else col.ids(text)
        at = first_difference(want, got)
        if at is None:
            cells.append(None)
            live.append(j)
        else:
            lo = max(0, at - 3)
            byte = len(ref_bytes(want[:at]))
            raw = text.encode("utf-8")
            near = raw[max(0, byte - 24):byte].decode("utf-8", "ignore") + "\u27e6" + \
                raw[byte:byte + 24].decode("utf-8", "ignore")
            print(f"note: {enc_name} / {name}: {col.name} ids differ from tiktoken's at index {at}, input byte "
                  f"{byte} ({len(got)} vs {len(want)} ids; {got[lo:at + 4]} vs tiktoken {want[lo:at + 4]}; "
                  f"text {near!r}); not timed", file=sys.stderr)
            cells.append(f"ids differ at {at}")
    del want
    walls = {j: [] for j in live}
    cpus = {j: 0.0 for j in live}
    subjects_ = [ref] + cols
    for _ in range(runs):
        for j in live:
            if cold:
                subjects_[j].forget()
            w, c = timed(subjects_[j].call, text)
            walls[j].append(w)
            cpus[j] += c
    ratios = []
    for j in live:
        ws = sorted(walls[j])
        cells[j] = nbytes / ws[len(ws) // 2] / 1e6
        ratios.append(f"{subjects_[j].name} {cpus[j] / sum(walls[j]):.2f}")
    return {"encoding": enc_name, "corpus": name, "bytes": nbytes, "cells": cells, "cpu": ratios}


def cell_text(c) -> str:
    return f"{c:.1f}" if isinstance(c, float) else str(c)


def best(row) -> str:
    timed_ = [(c, n) for c, n in zip(row["cells"], COLUMNS) if isinstance(c, float)]
    if not timed_:
        return "-"
    c, n = max(timed_)
    return f"{c:.1f} ({n})"


def loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--encoding", "-e", action="append", default=[])
    ap.add_argument("--corpus", "-c", action="append", default=[])
    ap.add_argument("--runs", "-n", type=int, default=5)
    ap.add_argument("--specials", choices=["ordinary", "all"], default="ordinary")
    ap.add_argument("--cpu", type=int, default=None, help="CPU to pin to (default: the last allowed)")
    ap.add_argument("--cold", action="store_true",
                    help="a new tokenizer instance (empty caches) before every timed call")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    cpu = single_thread(a.cpu)
    encs = []
    for e in ",".join(a.encoding).split(",") if a.encoding else ENCODINGS:
        e = ALIASES.get(e, e)
        if e not in ENCODINGS:
            ap.error(f"unknown encoding {e}")
        encs.append(e)
    wanted = [w for c in a.corpus for w in c.split(",")]
    where, texts = corpora(a.files, wanted)
    if not texts:
        ap.error(f"no corpus matches {wanted}")
    from importlib.metadata import version

    versions = []
    for pkg in ["tiktoken", "fastokens", "tokie"]:
        try:
            versions.append(f"{pkg} {version(pkg)}")
        except Exception:  # noqa: BLE001
            versions.append(f"{pkg} missing")
    print(where)
    print(f"{', '.join(versions)}; pinned to CPU {cpu}, RAYON_NUM_THREADS=1; median of {a.runs} runs, "
          f"MB/s (10^6 input bytes/s), mode {a.specials}{', cold caches' if a.cold else ''}; load average at start: {loadavg()}")
    rows = []
    for enc_name in encs:
        ref, cols = subjects(enc_name, a.specials)
        print(f"\n## {enc_name}")
        for corpus in texts:
            row = measure(enc_name, corpus, ref, cols, a.runs, ref.decode_bytes, a.cold)
            rows.append(row)
            cells = " | ".join(f"{n} {cell_text(c)}" for n, c in zip(COLUMNS, row["cells"]))
            print(f"{enc_name:<12} {row['corpus']:<18} {row['bytes']:>10} B | {cells} | cpu/wall: "
                  f"{', '.join(row['cpu'])}", flush=True)
    print(f"\nload average at end: {loadavg()}\n")
    mode = "ordinary (specials as text)" if a.specials == "ordinary" else "all specials recognized"
    print(f"MB/s, single thread (pinned to one CPU), median of {a.runs} runs, {mode} encoding, "
          f"{'a new instance (cold caches) per call, ' if a.cold else ''}encode call only:\n")
    head = ["encoding", "corpus", "MB"] + COLUMNS + ["best Python peer"]
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join("---" if i < 2 else "---:" for i in range(len(head))) + "|")
    for r in rows:
        cells = [r["encoding"], r["corpus"], f"{r['bytes'] / 1e6:.1f}"]
        cells += [cell_text(c) for c in r["cells"]] + [best(r)]
        print("| " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
