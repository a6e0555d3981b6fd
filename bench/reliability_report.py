"""Reliability figures: bad inputs handled, fuzz examples, kills survived, memory-unchanged checks.

    OMP_NUM_THREADS=1 .venv/bin/python bench/reliability_report.py [--kills N] [--fuzz N] [--tool-fuzz N] [--seed S]

Runs, outside the test suite and with bigger loops, what tests/test_reliability_*.py check:
- the bad-input corpus through the CLI's `build` (in-process, fake encoders) against a copy of a good
  memory, plus its subprocess subset: exit 2, one stderr line naming file and fault, memory unchanged;
- each input limit refused at its value - 1 and accepted at its value (`--set NAME=VALUE`);
- the whole-pipeline upload fuzz and the tool-call fuzz (bench/fuzz_formats.py);
- every hostile model script through the QueryEngine (QueuedLLM), memory checksum before/after;
- SIGKILL of builds at seeded random points (tests/test_reliability_crash.py kill_campaign).
Prints one block per part and ends with one summary line. Exit status 1 if anything failed.
"""
from __future__ import annotations

import argparse
import io
import os
import shutil
import sys
import tempfile
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))


def run_cli(argv: list[str]):
    from test_reliability_input import CliResult

    from core import __main__ as cli

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = cli.main(argv)
        except SystemExit as e:
            code = int(e.code)
    return CliResult(code, out.getvalue(), err.getvalue())


def corpus(folder: Path) -> dict:
    """Every bad-input case in-process, the subprocess subset, and the limits; counts and failures."""
    import core.deps
    from test_reliability_input import (
        CASES, SUBPROCESS_CASES, _limit_inputs, assert_one_clear_line, fake_deps, make_good_memory,
        memory_checksum, run_case, run_cli_subprocess,
    )

    core.deps.make_build_deps = lambda config, **kw: fake_deps(config)
    good, src = make_good_memory(folder / "good")
    good_sum = memory_checksum(good)
    r = {"tried": 0, "passed": 0, "unchanged_checks": 0, "failures": []}
    cases = [(n, "in-process", run_cli) for n in sorted(CASES)]
    cases += [(n, "subprocess", lambda argv: run_cli_subprocess(argv, folder)) for n in SUBPROCESS_CASES]
    for i, (name, how, runner) in enumerate(cases):
        store = folder / f"case{i}.duckdb"
        shutil.copyfile(good, store)
        r["tried"] += 1
        try:
            run_case(name, folder / f"in{i}", store, src, runner, before=good_sum)
            r["passed"] += 1
            r["unchanged_checks"] += 1
        except AssertionError as e:
            r["failures"].append(f"{name} ({how}): {str(e)[:300]}")
        store.unlink(missing_ok=True)
    r["limits_tried"] = r["limits_passed"] = 0
    for limit, (inputs, enough) in _limit_inputs(folder / "limits").items():
        store = folder / f"limit_{limit}.duckdb"
        shutil.copyfile(good, store)
        r["limits_tried"] += 1
        try:
            res = run_cli(["build", *inputs, "--store", str(store), "--quiet", "--set", f"{limit}={enough - 1}"])
            assert_one_clear_line(res, Path(inputs[0]).name, (limit,))
            assert memory_checksum(store) == good_sum
            r["unchanged_checks"] += 1
            res = run_cli(["build", *inputs, "--store", str(store), "--quiet", "--set", f"{limit}={enough}"])
            assert res.code == 0, res.err
            r["limits_passed"] += 1
        except AssertionError as e:
            r["failures"].append(f"limit {limit}: {str(e)[:300]}")
    return r


def hostile(folder: Path) -> dict:
    """Every hostile model script through the engine on the planning test memory."""
    import duckdb

    from conftest import HashEmbedder, QueuedLLM
    from test_planning_data import build_memory, checksum
    from test_reliability_hostile import HOSTILE_SCRIPTS, Q, assert_trace_within_bounds, catalog_names

    from core.config import DEFAULT
    from core.planning import QueryEngine

    emb = HashEmbedder()
    folder.mkdir(parents=True, exist_ok=True)
    path = build_memory(folder / "hostile.duckdb", emb)
    r = {"tried": 0, "passed": 0, "unchanged_checks": 0, "failures": []}
    for name, script in sorted(HOSTILE_SCRIPTS.items()):
        r["tried"] += 1
        con = duckdb.connect(str(path))
        try:
            before = checksum(con)
            trace = QueryEngine(con, emb, DEFAULT, llm=QueuedLLM(list(script))).ask(Q)
            assert_trace_within_bounds(trace, catalog_names(con))
            assert checksum(con) == before, "memory changed"
            r["passed"] += 1
            r["unchanged_checks"] += 1
        except Exception as e:
            r["failures"].append(f"{name}: {type(e).__name__}: {str(e)[:300]}")
        finally:
            con.close()
    return r


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kills", type=int, default=40, help="SIGKILLs of builds (default 40)")
    ap.add_argument("--fuzz", type=int, default=200, help="generated uploads through the pipeline (default 200)")
    ap.add_argument("--tool-fuzz", type=int, default=1000, help="generated tool calls (default 1000)")
    ap.add_argument("--seed", type=int, default=10)
    args = ap.parse_args(argv)

    from fuzz_formats import fuzz_pipeline, fuzz_tools
    from test_reliability_crash import kill_campaign

    t_all = time.perf_counter()
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        t0 = time.perf_counter()
        c = corpus(folder / "corpus")
        print(f"bad-input corpus: {c['passed']}/{c['tried']} cases ended in exit 2 with one clear stderr line "
              f"and an unchanged memory; limits enforced and changeable: {c['limits_passed']}/{c['limits_tried']} "
              f"({time.perf_counter() - t0:.1f} s)")
        t0 = time.perf_counter()
        h = hostile(folder / "hostile")
        print(f"hostile model plans: {h['passed']}/{h['tried']} stayed inside the tool schemas, step limit and "
              f"budget with the memory unchanged ({time.perf_counter() - t0:.1f} s)")
        t0 = time.perf_counter()
        p = fuzz_pipeline(args.fuzz, args.seed, folder / "fuzz")
        t = fuzz_tools(args.tool_fuzz, args.seed, folder / "fuzz")
        print(f"fuzz: {p['examples']} uploads ({p['rejected']} rejected at read, {p['refused']} refused at ingest, "
              f"{p['built']} built), {t['examples']} tool calls ({t['refused']} refused, {t['answered']} answered); "
              f"{len(p['failures']) + len(t['failures'])} failure(s) ({time.perf_counter() - t0:.1f} s)")
        t0 = time.perf_counter()
        k = kill_campaign(folder / "kills", args.kills, seed=args.seed)
        print(f"crash safety: {k.survived}/{k.kills} SIGKILLs survived (memory opened consistent), "
              f"{k.chains_equal_clean}/{k.chains} reruns equal to a clean build, kill points at progress lines "
              f"{min(k.lines_at_kill, default=0)}..{max(k.lines_at_kill, default=0)} "
              f"({len(set(k.lines_at_kill))} distinct) ({time.perf_counter() - t0:.1f} s)")
    unchanged_tried = c["tried"] + c["limits_tried"] + h["tried"] + p["refused"] + 1
    unchanged_ok = c["unchanged_checks"] + h["unchanged_checks"] + p["refused"] + int(t["memory_unchanged"])
    print(f"memory unchanged checks: {unchanged_ok}/{unchanged_tried} passed")
    failures = c["failures"] + h["failures"] + p["failures"] + t["failures"] + k.failures
    for f in failures[:15]:
        print("FAILURE:", f)
    ok = not failures and k.survived == k.kills and k.chains_equal_clean == k.chains
    print(f"SUMMARY: {'OK' if ok else 'FAILED'}: bad inputs {c['passed']}/{c['tried']}, limits "
          f"{c['limits_passed']}/{c['limits_tried']}, hostile plans {h['passed']}/{h['tried']}, fuzz examples "
          f"{p['examples'] + t['examples']} with {len(p['failures']) + len(t['failures'])} failures, kills survived "
          f"{k.survived}/{k.kills}, memory unchanged {unchanged_ok}/{unchanged_tried}, "
          f"{time.perf_counter() - t_all:.0f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
