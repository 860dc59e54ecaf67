#!/usr/bin/env python3
"""picobpe next to every peer, Rust and Python, row by row: for each encoding and corpus, the
Rust benchmark's row (`cargo xtask bench`'s binary) and the Python packages' row
(`scripts/bench_python_peers.py`) one right after the other, then one side-by-side table.

usage (from the repository root; `pip install tiktoken fastokens tokie`):

    python3 scripts/bench_side_by_side.py [--encoding gpt2|cl100k_base|o200k_base]...
        [--corpus NAME]... [--runs N] [--cold] [--cpu N] [--tsv PATH] [--no-chart]

Why: the two benchmarks are separate processes, and run one after the other as whole tables
they time the same row some ten minutes apart. On a shared machine whose speed drifts by a
third within half an hour, that gap, not the tokenizers, decided several rows. Here the two
rows of one (encoding, corpus) run back to back (which one goes first alternates from row to
row), both processes pinned to the same CPU (`--cpu`, default the last allowed, which is also
what `bench_python_peers.py` picks), so that every column of a row sees the machine in the
same minute. Nothing else changes: each benchmark checks every peer's ids against the reference
and times as it does alone (median of `--runs` interleaved runs; `--cold`: empty caches before
every timed call).

Output: each benchmark's own row as it comes, then the table (picobpe's three columns, the
fastest Rust peer, fastokens, tokie, picobpe's best over the best peer) and the number of rows
where picobpe is the fastest column. Then every exact cell (a peer whose ids differ from
tiktoken's on a file is left out) goes to a TSV file, one `encoding, corpus, tokenizer, MB/s`
line each, and `cargo xtask chart` draws it as an SVG bar chart next to it: `--tsv PATH`, by
default docs/figures/speed.tsv (`--cold`: speed-cold.tsv) when the run covers every encoding
and corpus, none otherwise; `--no-chart` skips both.

Corpora: english, each `multi/*.txt` by stem and `multi` from ../shared/data/corpus
($PICOBPE_SHARED_DATA replaces ../shared/data), else the committed tests/fixtures/train files
of the same names (as both benchmarks do).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENCODINGS = ["gpt2", "cl100k_base", "o200k_base"]
OURS = ["picobpe", "picobpe + 16 MiB cache", "picobpe + 64 MiB cache"]
PYTHON_PEERS = ["fastokens", "tokie"]


def corpus_names() -> list[str]:
    """english, the multilingual files by stem, and multi (their concatenation)."""
    shared = Path(os.environ.get("PICOBPE_SHARED_DATA", ROOT.parent / "shared" / "data"))
    multi = shared / "corpus" / "multi"
    if not multi.is_dir():
        multi = ROOT / "tests" / "fixtures" / "train" / "multi"
    stems = sorted(p.stem for p in multi.glob("*.txt"))
    return ["english"] + stems + ["multi"]


def table_rows(output: str) -> dict[tuple[str, str], dict[str, str]]:
    """The data rows of a benchmark's markdown table, by (encoding, corpus), each cell by its
    column's name in the table's header."""
    rows = {}
    header: list[str] = []
    for line in output.splitlines():
        if not line.startswith("| "):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] == "encoding":
            header = cells
        elif header:
            rows[(cells[0], cells[1])] = dict(zip(header, cells))
    return rows


def number(cell: str) -> float | None:
    try:
        return float(cell)
    except ValueError:
        return None


def exact_cells(rust_rows: dict, py_rows: dict) -> list[tuple[str, str, str, float]]:
    """Every timed cell of both benchmarks as (encoding, corpus, tokenizer, MB/s): picobpe's
    columns first; tiktoken-rs as the faster of its two builds; the pure-Rust `tiktoken` crate
    named `tiktoken (Rust)`. Cells that are not a number ("ids differ", "n/a") are left out."""
    out = []
    for key, c in rust_rows.items():
        cells: dict[str, float] = {}
        p = py_rows.get(key, {})
        # Between the size and the ratio: the tokenizers' columns.
        for name, text in list(c.items())[3:-1] + list(p.items())[3:-1]:
            x = number(text)
            if x is None:
                continue
            if name.startswith("tiktoken-rs"):
                name = "tiktoken-rs"
            elif name == "tiktoken":
                name = "tiktoken (Rust)"
            cells[name] = max(cells.get(name, 0.0), x)
        for name in OURS + [n for n in cells if n not in OURS]:
            if name in cells:
                out.append((key[0], key[1], name, cells[name]))
    return out


def write_chart(tsv: Path, cells: list, runs: int, cold: bool) -> None:
    """Write the TSV of exact cells and draw it (`cargo xtask chart`) as the SVG beside it."""
    mode = ("a new cache or tokenizer instance before every timed call" if cold
            else "the same text again (caches kept across runs)")
    tsv.parent.mkdir(parents=True, exist_ok=True)
    with open(tsv, "w", encoding="utf-8") as f:
        f.write(f"# python3 scripts/bench_side_by_side.py --runs {runs}{' --cold' if cold else ''}: "
                f"MB/s (10^6 input bytes/s), one thread, median of {runs} runs,\n"
                f"# {mode}. Exact tokenizers only: a peer whose ids differ from\n"
                "# tiktoken's on a file has no line for it. tiktoken-rs: the faster of its two builds.\n")
        f.write("encoding\tcorpus\ttokenizer\tMB/s\n")
        for enc, corpus, name, x in cells:
            f.write(f"{enc}\t{corpus}\t{name}\t{x:.1f}\n")
    title = ("Encode speed on text not seen before (--cold), MB/s on one thread: picobpe and "
             "its exact peers" if cold else
             "Encode speed, MB/s on one thread (higher is better): picobpe and its exact peers")
    chart = ["cargo", "xtask", "chart", "--title", title, str(tsv), str(tsv.with_suffix(".svg"))]
    if subprocess.run(chart, cwd=ROOT).returncode != 0:
        sys.exit("cargo xtask chart failed")


def run(cmd: list[str]) -> str:
    """Run one benchmark; its stderr (notes, build output) passes through."""
    done = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed with exit code {done.returncode}")
    return done.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--encoding", "-e", action="append", default=[])
    ap.add_argument("--corpus", "-c", action="append", default=[])
    ap.add_argument("--runs", "-n", type=int, default=5)
    ap.add_argument("--cold", action="store_true")
    ap.add_argument("--cpu", type=int, default=None)
    ap.add_argument("--tsv", type=Path, default=None)
    ap.add_argument("--no-chart", action="store_true")
    a = ap.parse_args()
    encodings = a.encoding or ENCODINGS
    corpora = a.corpus or corpus_names()
    allowed = sorted(os.sched_getaffinity(0))
    cpu = a.cpu if a.cpu is not None else allowed[-1]
    os.sched_setaffinity(0, {cpu})  # inherited by both benchmarks
    build = ["cargo", "build", "--release", "-q", "-p", "picobpe-bench"]
    if subprocess.run(build, cwd=ROOT).returncode != 0:
        sys.exit("cargo build -p picobpe-bench failed")
    common = ["--runs", str(a.runs)] + (["--cold"] if a.cold else [])
    rust_rows: dict = {}
    py_rows: dict = {}
    k = 0
    for enc in encodings:
        for corpus in corpora:
            rust = [str(ROOT / "target" / "release" / "picobpe-bench"), "-e", enc, "-c", corpus]
            py = [sys.executable, "scripts/bench_python_peers.py", "-e", enc, "-c", corpus,
                  "--cpu", str(cpu)]
            order = [(rust, rust_rows), (py, py_rows)]
            for cmd, into in order if k % 2 == 0 else order[::-1]:
                got = table_rows(run(cmd + common))
                into.update(got)
                for cells in got.values():
                    print("| " + " | ".join(cells.values()) + " |", flush=True)
            k += 1
    print()
    print(f"MB/s, single thread (pinned to CPU {cpu}), median of {a.runs} runs, "
          f"{'a new cache per call' if a.cold else 'same text again'}; each row's Rust and "
          "Python columns measured back to back:\n")
    print("| encoding, corpus | picobpe | + 16 MiB cache | + 64 MiB cache | best Rust peer "
          "| fastokens | tokie | picobpe / best peer |")
    print("|---|---:|---:|---:|---|---:|---:|---:|")
    wins = wins16 = rust_wins = 0
    for key, c in rust_rows.items():
        ours = [number(c[name]) for name in OURS]
        # Every other column between the size and the ratio is a Rust peer's.
        rust_peers = [n for n in list(c)[3:-1] if n not in OURS]
        peers = [(number(c[n]) or 0.0, n) for n in rust_peers]
        best_rust = max(peers)
        p = py_rows.get(key)
        fa, to = (number(p[n]) if p else None for n in PYTHON_PEERS)
        python = [(x, n) for x, n in zip((fa, to), PYTHON_PEERS) if x is not None]
        best = max([best_rust] + python)
        top = max(x or 0.0 for x in ours)
        win = top >= best[0]
        wins += win
        wins16 += max(ours[0] or 0.0, ours[1] or 0.0) >= best[0]
        rust_wins += top >= best_rust[0]

        def show(x: float | None) -> str:
            text = "—" if x is None else f"{x:.1f}"
            return f"**{text}**" if win and x == top else text

        def py_cell(x: float | None) -> str:
            return "—" if not p else ("ids differ" if x is None else f"{x:.1f}")

        print(f"| {key[0]}, {key[1]} | {' | '.join(show(x) for x in ours)} | "
              f"{best_rust[1]} {best_rust[0]:.1f} | {py_cell(fa)} | {py_cell(to)} | "
              f"{top / best[0]:.2f}× ({best[1]}) |")
    n = len(rust_rows)
    print(f"\npicobpe is the fastest column on {wins} of {n} rows ({wins16} with the 16 MiB cache "
          f"alone); ahead of every Rust peer on {rust_wins} of {n}.")
    tsv = a.tsv
    if tsv is None and not a.encoding and not a.corpus:
        tsv = ROOT / "docs" / "figures" / ("speed-cold.tsv" if a.cold else "speed.tsv")
    if tsv is not None and not a.no_chart:
        write_chart(tsv, exact_cells(rust_rows, py_rows), a.runs, a.cold)
    return 0


if __name__ == "__main__":
    sys.exit(main())
