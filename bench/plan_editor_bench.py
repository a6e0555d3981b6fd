"""Plan debugger: seconds per interaction of "Debug this plan" (Ask page) and the saved cases (Evaluate page).

    OMP_NUM_THREADS=1 .venv/bin/python bench/plan_editor_bench.py [MEMORY.duckdb] [--runs 3]

On a copy of the memory (default: the demo, data/demo.duckdb) with the real MiniLM, streamlit.testing
AppTest runs the journey of issue 21 --runs times: ask a question of the memory's QA list whose plan
starts with a Compute step, add a filter, re-run, swap Compute for Rank and re-run, try an invalid edit,
save the edit as a case, and replay the cases on the Evaluate page. Each figure is the median wall time
of one interaction (the page's whole script run, what a person waits for after a click, without the
browser's drawing). The first ask pays for loading the model and is reported apart as "cold".
Target: every interaction ≤ 1 s on the demo memory.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _timed(times: dict, name: str, at) -> None:
    t0 = time.perf_counter()
    at.run()
    times.setdefault(name, []).append(time.perf_counter() - t0)
    if at.exception:
        raise RuntimeError(f"{name}: {at.exception[0].message}")


def _compute_question(path: Path) -> tuple[str, str]:
    """A question of the memory whose plan starts with Compute, and a numeric column of its table."""
    from core.config import DEFAULT
    from core.query import make_engine
    from core.store import Store
    from ui import resources

    with Store(path, read_only=True) as store:
        engine = make_engine(store, DEFAULT, text_encoder=resources.text_encoder(),
                             image_encoder=resources.image_encoder())
        for qa in store.qas():
            tr = engine.ask(qa.question)
            if tr.steps and tr.steps[0].tool == "Compute":
                table = engine.contexts.catalog()[tr.steps[0].args["table"]]
                numeric = [c.name for c in table.columns if c.dtype == "DOUBLE" and not c.base]
                if numeric:
                    return qa.question, numeric[0]
    raise SystemExit(f"{path}: no question of its QA list is answered with a Compute step")


def journey(path: Path, question: str, column: str, times: dict) -> None:
    from streamlit.testing.v1 import AppTest

    from ui import state

    at = AppTest.from_file(str(ROOT / "app_pages" / "ask.py"), default_timeout=600)
    at.session_state[state.STORE_PATH] = str(path)
    at.run()
    at.text_input(key="ask_q").input(question)
    _timed(times, "type the question", at)
    at.button(key="ask_finish").click()
    _timed(times, "ask (plan and answer)", at)
    at.button(key="pe_addf_0_0").click()
    _timed(times, "add a filter", at)
    at.selectbox(key="pe_fcol_0_0_0").select(column)
    at.selectbox(key="pe_fop_0_0_0").select(">=")
    at.text_input(key="pe_fval_0_0_0").input("0")
    at.button(key="pe_rerun").click()
    _timed(times, "re-run with the filter (+compare)", at)
    at.selectbox(key="pe_tool_0_0").select("Rank")
    _timed(times, "swap Compute for Rank", at)
    at.button(key="pe_rerun").click()
    _timed(times, "re-run the Rank step (+compare)", at)
    at.text_input(key="pe_target_0_0").input("no_such_column")
    at.button(key="pe_rerun").click()
    _timed(times, "invalid edit (refused)", at)
    at.button(key="pe_save").click()
    _timed(times, "save as a case", at)
    ev = AppTest.from_file(str(ROOT / "app_pages" / "evaluate.py"), default_timeout=600)
    ev.session_state[state.STORE_PATH] = str(path)
    _timed(times, "Evaluate page with the cases", ev)
    ev.button(key="cases_replay").click()
    _timed(times, "replay the cases", ev)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("memory", nargs="?", type=Path, default=ROOT / "data" / "demo.duckdb")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        question, column = _compute_question(a.memory)  # loads MiniLM: not an interaction's time
        cold = time.perf_counter() - t0
        times: dict[str, list[float]] = {}
        for k in range(a.runs):
            copy = Path(tmp) / f"m{k}.duckdb"
            shutil.copy(a.memory, copy)  # saving a case writes to the memory
            journey(copy, question, column, times)
    print(f"memory {a.memory.name} · question “{question}” · filter on {column} · {a.runs} run(s) · "
          f"cold model load and first answers {cold:.1f} s")
    worst = 0.0
    for name, v in times.items():
        med = statistics.median(v)
        worst = max(worst, med)
        print(f"  {name:38s} {med * 1000:7.0f} ms (max {max(v) * 1000:.0f})")
    print(f"plan_editor_worst_interaction_s={worst:.3f}")


if __name__ == "__main__":
    main()
