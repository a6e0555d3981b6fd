"""App: time for each page to render (streamlit.testing AppTest) on given memory files.

    OMP_NUM_THREADS=1 .venv/bin/python bench/page_bench.py MEMORY.duckdb [MORE.duckdb ...] [--runs 3]

Each page of app_pages/ is rendered with AppTest.from_file, the memory selected in
the session state, --runs times; the first render of the first page pays for
loading the models (reported apart as "cold"), the figure per page is the
median of the renders. A memory built with the benchmarks' hashing encoder
(meta text_encoder = bench-hash-384) gets that encoder instead of MiniLM.
Prints one row per memory and the process's peak resident memory. Target:
every page under 2 s.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))

PAGES = ["home", "upload", "schemas", "tables", "hierarchy", "ask", "evaluate"]


def _encoder_name(path: Path) -> str:
    import duckdb

    con = duckdb.connect(str(path), read_only=True)
    try:
        row = con.execute("SELECT value FROM meta WHERE key = 'text_encoder'").fetchone()
        return str(row[0]) if row else ""
    finally:
        con.close()


def render_times(path: Path, runs: int) -> tuple[dict[str, float], float, list[str]]:
    """(page -> median seconds, seconds of the very first render, pages that raised)."""
    from streamlit.testing.v1 import AppTest

    from ui import resources, state

    if "bench-hash" in _encoder_name(path):
        from synthetic import HashTextEncoder

        enc = HashTextEncoder()
        resources.text_encoder = lambda: enc
    times: dict[str, list[float]] = {p: [] for p in PAGES}
    failed: list[str] = []

    def render(name: str) -> float:
        at = AppTest.from_file(str(ROOT / "app_pages" / f"{name}.py"), default_timeout=600)
        at.session_state[state.STORE_PATH] = str(path)
        t0 = time.perf_counter()
        at.run()
        if at.exception and name not in failed:
            failed.append(name)
        return time.perf_counter() - t0

    cold = render("ask")  # loads the text encoder and opens the memory: not a page's own time
    for _ in range(runs):
        for name in PAGES:
            times[name].append(render(name))
    return {p: statistics.median(v) for p, v in times.items() if v}, cold, failed


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("memories", nargs="+", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    print(f"{'memory':28s} {'cold s':>6s} " + " ".join(f"{p:>9s}" for p in PAGES) + f" {'max s':>6s}")
    worst = 0.0
    for mem in a.memories:
        with tempfile.TemporaryDirectory() as tmp:
            # a copy: pages may write (utility, eval runs) and the file must not be held by another process
            path = Path(tmp) / mem.name
            shutil.copy(mem, path)
            med, cold, failed = render_times(path, a.runs)
        worst = max(worst, max(med.values()))
        print(f"{mem.name[:28]:28s} {cold:>6.1f} " + " ".join(f"{med.get(p, float('nan')):>9.2f}" for p in PAGES)
              + f" {max(med.values()):>6.2f}" + (f"  raised: {', '.join(failed)}" if failed else ""))
    print(f"page_max_s={worst:.2f}")
    print(f"peak resident memory of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
