"""The first hour in a real browser: server start to "Models ready", the first question, page switches.

    OMP_NUM_THREADS=1 .venv/bin/python bench/first_hour_bench.py [--memory data/demo.duckdb] [--switches 2]

Starts `streamlit run app.py` on a copy of the memory (cold: a new process), opens it in Debian chromium
and prints, in seconds:
  server_start_s       process start to the health endpoint answering
  models_ready_s       process start to the sidebar saying "Models ready" (loaded in the background)
  first_question_s     "Run to the answer" to the answer shown, in the first browser session, after ready
  warm_question_s      the same in a second browser session on the same (warm) server
  page_switch_s        median over the pages (and --switches rounds) of nav click to the page's heading
Targets (issue 20): first question <= 3 s after ready, page switch <= 1.5 s on the demo memory.
"""
from __future__ import annotations

import argparse
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

PAGES = ["Upload & build", "Schema induction", "Tables", "Hierarchy", "Query planner", "Evaluate", "Home"]
HEADINGS = {"Home": "AdaMM Explorer"}
QUESTION = "How many hours did I sleep on average?"


def _ask(page) -> float:
    box = page.get_by_label("Question", exact=True)
    box.fill(QUESTION)
    box.press("Enter")
    t0 = time.monotonic()
    page.get_by_role("button", name="Run to the answer").click()
    page.get_by_role("heading", name="Answer").wait_for(timeout=300_000)
    return time.monotonic() - t0


def _nav(page, title: str) -> float:
    t0 = time.monotonic()
    page.get_by_test_id("stSidebarNav").get_by_text(title, exact=True).click()
    page.get_by_role("heading", name=HEADINGS.get(title, title)).first.wait_for(timeout=120_000)
    page.get_by_test_id("stStatusWidget").wait_for(state="hidden", timeout=120_000)  # the run has finished
    return time.monotonic() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--memory", default=str(ROOT / "data" / "demo.duckdb"))
    ap.add_argument("--switches", type=int, default=2)
    args = ap.parse_args()
    from browser import chromium_page, streamlit_server

    tmp = Path(tempfile.mkdtemp(prefix="first-hour-"))
    mem = tmp / "memory.duckdb"
    shutil.copy(args.memory, mem)
    t_start = time.monotonic()
    with streamlit_server(str(mem)) as url:
        server_start = time.monotonic() - t_start
        with chromium_page() as page:
            page.goto(url)
            page.get_by_test_id("stSidebar").get_by_text(re.compile("Models ready")).wait_for(timeout=600_000)
            ready = time.monotonic() - t_start
            status = page.get_by_test_id("stSidebar").get_by_text(re.compile("Models ready")).inner_text()
            _nav(page, "Query planner")
            first = _ask(page)
            order = [p for _ in range(args.switches) for p in PAGES]
            switches = [_nav(page, p) for p in order]
        with chromium_page() as page:  # a second browser session: the process is warm
            page.goto(url)
            page.get_by_test_id("stSidebarNav").wait_for()
            _nav(page, "Query planner")
            warm = _ask(page)
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"sidebar: {status}")
    print(f"server_start_s={server_start:.1f} models_ready_s={ready:.1f} first_question_s={first:.2f} "
          f"warm_question_s={warm:.2f} page_switch_s={statistics.median(switches):.2f} "
          f"page_switch_max_s={max(switches):.2f} ({order[switches.index(max(switches))]})")
    for p in PAGES:
        print(f"  {p}: " + " ".join(f"{t:.2f}" for q, t in zip(order, switches) if q == p))


if __name__ == "__main__":
    main()
