"""Run every benchmark and end with one summary line.

    OMP_NUM_THREADS=1 .venv/bin/python bench/run.py --quick     # reduced sizes, under five minutes
    OMP_NUM_THREADS=1 .venv/bin/python bench/run.py             # the full sizes (about an hour)

Each part runs as its own process (its output is shown as it comes) and prints
a key=value line that this script collects:
  build   bench/build_bench.py     build time / unavoidable floor (MiniLM, synthetic text-only history;
                                   both hierarchy_compare modes, the default one reported)
  induct  bench/induction_bench.py FP-growth recount time / incremental induction time per round
  growth  bench/growth_bench.py    +100 rounds on the large memory / on the small one
  query   bench/query_bench.py     p95 latency of `ask` (rule backend), worst question type
  pages   bench/page_bench.py      slowest page render (AppTest) on the memory the build part made
The last line is
  bench quick: build_floor_ratio=X induction_speedup=Y growth_ratio=Z query_p95_ms=W page_max_s=V
(`bench full:` without --quick). A part that fails prints its error and reports nan.
"""
from __future__ import annotations

import argparse
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
PY = sys.executable

QUICK = {
    "build": ["build_bench.py", "--rounds", "400", "--runs", "1"],
    "induct": ["induction_bench.py", "--rounds", "5000", "--checkpoints", "1000,5000", "--window", "300"],
    "growth": ["growth_bench.py", "--sizes", "400", "1600", "--add", "100", "--reps", "3"],
    "query": ["query_bench.py", "--rows", "10000", "--reps", "1"],
}
FULL = {
    "build": ["build_bench.py", "--rounds", "1000", "10000", "--runs", "3"],
    "build_images": ["build_bench.py", "--rounds", "1000", "--images", "--runs", "1"],
    "induct": ["induction_bench.py"],
    "growth": ["growth_bench.py", "--sizes", "1000", "10000", "--add", "100", "--reps", "3"],
    "query": ["query_bench.py", "--reps", "3"],
}


def run_part(name: str, args: list[str], log: list[str]) -> str:
    """Run one benchmark script, echo its output, return it ('' when it failed)."""
    print(f"\n### {name}: {' '.join(args)}", flush=True)
    t0 = time.perf_counter()
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"),
               HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    proc = subprocess.run([PY, str(BENCH / args[0])] + args[1:], capture_output=True, text=True, env=env)
    out = "\n".join(line for line in proc.stdout.splitlines() if "Loading weights" not in line)
    print(out, flush=True)
    if proc.returncode != 0:
        print(f"{name} FAILED (exit {proc.returncode}):\n{proc.stderr[-3000:]}", flush=True)
        return ""
    log.append(f"{name}: {time.perf_counter() - t0:.0f} s")
    return out


def value(out: str, key: str) -> float:
    m = re.findall(rf"^{key}=([0-9.]+|nan)\s*$", out, re.M)
    return float(m[-1]) if m else math.nan


def induction_speedup(out: str) -> float:
    """recount/incr of the last checkpoint row of induction_bench's table."""
    rows = [line.split() for line in out.splitlines() if re.match(r"^\s*\d+\s+[\d.]+\s+[\d.]+\s+[\d.]+", line)]
    return float(rows[-1][-1]) if rows else math.nan


def query_p95(out: str) -> float:
    """The worst p95 over the question-type rows of query_bench's (last) table."""
    worst = math.nan
    for line in out.splitlines():
        m = re.match(r"^([a-z+]+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s", line)
        if m:
            p95 = float(m.group(4))
            worst = p95 if math.isnan(worst) else max(worst, p95)
    return worst


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args(argv)
    parts = QUICK if a.quick else FULL
    log: list[str] = []
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        keep = Path(tmp)
        out = {name: run_part(name, args + (["--keep", str(keep)] if name == "build" else []), log)
               for name, args in parts.items()}
        memories = sorted(str(p) for p in keep.glob("build_*.duckdb"))
        pages = run_part("pages", ["page_bench.py", *memories, "--runs", "1" if a.quick else "3"], log) \
            if memories else ""
    summary = {
        "build_floor_ratio": value(out["build"], "build_floor_ratio"),
        "induction_speedup": induction_speedup(out["induct"]),
        "growth_ratio": value(out["growth"], "growth_ratio"),
        "query_p95_ms": query_p95(out["query"]),
        "page_max_s": value(pages, "page_max_s"),
    }
    print(f"\n(parts: {', '.join(log)}; total {time.perf_counter() - t0:.0f} s)")
    fmt = {"build_floor_ratio": "{:.2f}", "induction_speedup": "{:.0f}", "growth_ratio": "{:.2f}",
           "query_p95_ms": "{:.0f}", "page_max_s": "{:.2f}"}
    print(f"bench {'quick' if a.quick else 'full'}: "
          + " ".join(f"{k}={fmt[k].format(v)}" for k, v in summary.items()))


if __name__ == "__main__":
    main()
