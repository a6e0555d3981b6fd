"""The long whole-pipeline fuzz: uploads through read_upload + ingest + build, and hostile tool calls.

    OMP_NUM_THREADS=1 .venv/bin/python bench/fuzz_formats.py [--examples N] [--tool-examples M] [--seed S]

The same targets as tests/test_reliability_input.py (pipeline_once) and tests/test_reliability_hostile.py
(call_tool), run for many more examples than the suite can afford. Prints how many examples ran, what
became of them (rejected at read, refused at ingest with the memory unchanged, built with every round
processed; tool calls refused or answered within budget), the failures found (none expected), and the
seconds taken. Exit status 1 when anything but InputError / ToolError escaped or a check failed.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def fuzz_pipeline(examples: int, seed: int, folder: Path) -> dict:
    """Run pipeline_once on `examples` generated uploads; outcome counts and failures."""
    from hypothesis import HealthCheck, given, seed as hseed, settings
    from hypothesis import strategies as st

    from test_reliability_input import DOCUMENTS, IMAGES, make_good_memory, pipeline_once

    pristine, _ = make_good_memory(folder / "good")
    out = {"examples": 0, "rejected": 0, "refused": 0, "built": 0, "failures": []}

    @hseed(seed)
    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(DOCUMENTS, IMAGES, st.booleans())
    def run(doc, image, as_zip):
        out["examples"] += 1
        try:
            out[pipeline_once(pristine, folder / "work.duckdb", doc, image, as_zip)] += 1
        except Exception as e:  # record and keep hunting: one report lists them all
            out["failures"].append(f"{type(e).__name__}: {str(e)[:300]}\n{traceback.format_exc(limit=3)}")

    run()
    return out


def fuzz_tools(examples: int, seed: int, folder: Path) -> dict:
    """Run call_tool on `examples` generated tool calls against the planning test memory."""
    import duckdb
    from hypothesis import HealthCheck, given, seed as hseed, settings
    from hypothesis import strategies as st

    from conftest import HashEmbedder
    from test_planning_data import build_memory, checksum
    from test_reliability_hostile import CALLS, call_tool

    from core.config import DEFAULT
    from core.planning.context import ContextBuilder
    from core.planning.retrieval import NodeTableRetrieval
    from core.planning.tools import Toolbox

    emb = HashEmbedder()
    folder.mkdir(parents=True, exist_ok=True)
    path = build_memory(folder / "tools.duckdb", emb)
    con = duckdb.connect(str(path))
    before = checksum(con)
    box = Toolbox(con, ContextBuilder(con, emb, DEFAULT).catalog, NodeTableRetrieval(con, emb), DEFAULT)
    out = {"examples": 0, "refused": 0, "answered": 0, "failures": []}

    @hseed(seed)
    @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(CALLS, st.integers(0, 12))
    def run(call, budget):
        out["examples"] += 1
        tool, args = call
        try:
            r = call_tool(box, tool, args, budget)
            out["answered" if not isinstance(r, Exception) else "refused"] += 1
        except Exception as e:
            out["failures"].append(f"{tool!r} {str(args)[:200]}: {type(e).__name__}: {str(e)[:200]}")

    run()
    out["memory_unchanged"] = checksum(con) == before
    if not out["memory_unchanged"]:
        out["failures"].append("the memory changed during the tool fuzz")
    con.close()
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=400, help="generated uploads (default 400)")
    ap.add_argument("--tool-examples", type=int, default=2000, help="generated tool calls (default 2000)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        p = fuzz_pipeline(args.examples, args.seed, Path(d))
        t1 = time.perf_counter()
        t = fuzz_tools(args.tool_examples, args.seed, Path(d))
        t2 = time.perf_counter()
    print(f"pipeline fuzz: {p['examples']} uploads: {p['rejected']} rejected at read, {p['refused']} refused at "
          f"ingest (memory unchanged), {p['built']} built; {len(p['failures'])} failure(s); {t1 - t0:.1f} s")
    print(f"tool fuzz: {t['examples']} calls: {t['refused']} refused, {t['answered']} answered within budget; "
          f"memory unchanged: {t['memory_unchanged']}; {len(t['failures'])} failure(s); {t2 - t1:.1f} s")
    for f in (p["failures"] + t["failures"])[:10]:
        print("FAILURE:", f)
    return 1 if p["failures"] or t["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
