"""The benchmark runner behind `python -m core eval`.

Builds a fresh memory per conversation in INPUT (LoCoMo ids repeat across
conversations, so each gets its own file), answers every QA with the chosen
ablation, scores it and writes DIR/predictions.jsonl and DIR/summary.json as
DESIGN.md specifies.

Scoring: MemEye-format QAs by `score_answer` with their answer kind and
tolerance (a prediction counts as correct at score >= 0.5); LoCoMo QAs by
LoCoMo's own F1 by category (category 5: refusal), correct at F1 >= 0.5.
When a model is configured (backend openai/local, or `judge=True` with one),
each prediction also gets `judge` (the LLM-judge score on the MemEye scale
0/0.25/0.5/0.75/1, None when the judge could not grade) and summary.json
gets `llm_judge` (the mean over graded predictions) with `llm_judge_detail`.
A model's fault never ends an eval: the build and every question fall back
to their rule-based steps, which the records (`fallbacks`) and the summary
(`fallbacks`, `build_fallbacks`) count.
"""
from __future__ import annotations

import json
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from ..config import DEFAULT, Config
from ..model import QA, History
from .judge import LLMJudge, judge_summary
from .scoring import evidence_recall, locomo_f1, score_answer

CORRECT_AT = 0.5


@dataclass(frozen=True)
class Scored:
    score: float
    correct: bool


def score_qa(qa: QA, prediction: str, fmt: str) -> Scored:
    """Score one prediction: LoCoMo F1 by category for LoCoMo QAs, else by answer kind."""
    if fmt == "locomo" and qa.category is not None:
        s = locomo_f1(prediction, "Not mentioned" if qa.refusal else qa.answer, qa.category)
    else:
        kind = qa.answer_kind or ("refusal" if qa.refusal else None)
        s = score_answer(prediction, qa.answer, kind, qa.tolerance)
    return Scored(float(s), float(s) >= CORRECT_AT)


def qa_type(qa: QA) -> str:
    return qa.qtype or (f"locomo-cat{qa.category}" if qa.category is not None else "untyped")


def _percentile(values: Sequence[float], p: float) -> float | None:
    if not values:
        return None
    xs = sorted(values)
    k = (len(xs) - 1) * p
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def answer_all(engine, history: History, *, ablation: str, limit: int | None, fmt: str,
               progress: Callable[[str, int, int], None] = lambda *a: None,
               judge: LLMJudge | None = None) -> list[dict]:
    """Ask every QA of `history`; one prediction record per question (with `judge` when a judge is given)."""
    qas = list(history.qas)[: limit if limit is not None else None]
    out = []
    for i, qa in enumerate(qas, start=1):
        t0 = time.perf_counter()
        trace = engine.ask(qa.question, ablation=ablation, options=qa.options)
        latency = (time.perf_counter() - t0) * 1000
        pred = trace.answer.text
        sc = score_qa(qa, pred, fmt)
        d = trace.to_dict()
        rounds = list(dict.fromkeys(trace.evidence_rounds))
        out.append({
            "qa_id": qa.qa_id, "source": history.source, "type": qa_type(qa), "question": qa.question,
            "gold": qa.answer, "prediction": pred, "score": round(sc.score, 4), "correct": sc.correct,
            "evidence": [{"round": r} for r in rounds], "clues": list(qa.clues),
            "evidence_recall": evidence_recall(rounds, qa.clues),
            "plan": d.get("plan"), "steps": d.get("steps"),
            "tokens": trace.prompt_tokens + trace.completion_tokens, "latency_ms": round(latency, 2),
            "fallbacks": d.get("fallbacks", []),
        })
        if judge is not None:
            j = judge.judge(qa.question, "Not mentioned" if qa.refusal and not qa.answer else qa.answer, pred)
            out[-1]["judge"] = j.score
            out[-1]["judge_reason"] = j.reason or j.error or ""
            out[-1]["_judgement"] = j
        progress("answer", i, len(qas))
    return out


def summarize(records: list[dict], *, backend: str, ablation: str, judge_model: str | None = None,
              build_fallbacks: int = 0) -> dict:
    """summary.json: n, accuracy, by_type, evidence_recall, tokens_per_question, latency percentiles,
    fallback counts, and `llm_judge` (+ `llm_judge_detail`) when `judge_model` is given."""
    n = len(records)
    by_type: dict[str, dict] = {}
    for r in records:
        t = by_type.setdefault(r["type"], {"n": 0, "correct": 0, "score": 0.0})
        t["n"] += 1
        t["correct"] += int(r["correct"])
        t["score"] += r["score"]
    recalls = [r["evidence_recall"] for r in records if r["evidence_recall"] is not None]
    lat = [r["latency_ms"] for r in records]
    out = {
        "n": n,
        "accuracy": round(sum(r["correct"] for r in records) / n, 4) if n else None,
        "mean_score": round(sum(r["score"] for r in records) / n, 4) if n else None,
        "by_type": {k: {"n": v["n"], "accuracy": round(v["correct"] / v["n"], 4),
                        "mean_score": round(v["score"] / v["n"], 4)} for k, v in sorted(by_type.items())},
        "evidence_recall": round(statistics.mean(recalls), 4) if recalls else None,
        "tokens_per_question": round(sum(r["tokens"] for r in records) / n, 1) if n else 0,
        "latency_ms_p50": _percentile(lat, 0.5),
        "latency_ms_p95": _percentile(lat, 0.95),
        "backend": backend,
        "ablation": ablation,
        "fallbacks": sum(len(r.get("fallbacks") or []) for r in records),
        "questions_with_fallback": sum(1 for r in records if r.get("fallbacks")),
        "build_fallbacks": int(build_fallbacks),
    }
    if judge_model is not None:
        detail = judge_summary([r.get("_judgement") for r in records if "judge" in r], judge_model)
        out["llm_judge"] = detail["mean"]
        out["llm_judge_detail"] = detail
    return out


def run_eval(input_path: str, out_dir: str, *, config: Config = DEFAULT, fmt: str | None = None,
             ablation: str = "full", limit: int | None = None, backend: str = "rules",
             model_path: str | None = None, store_path: str | None = None,
             progress: Callable[[str, int, int], None] = lambda *a: None, deps=None, engine_factory=None,
             judge: bool | None = None, llm=None) -> dict:
    """Build a memory per conversation of `input_path`, answer its QAs, write predictions and summary.

    `deps` / `engine_factory(store, config, llm)` / `llm` let tests pass fakes; by default the real
    encoders are used and the model of `backend` is loaded once for the whole run (its reply
    cache moves to each conversation's memory file). `judge`: grade predictions with the model
    (None = whenever one is configured). Raises InputError for bad input (exit 2 in the CLI).
    """
    from ..build import build
    from ..deps import make_build_deps, make_llm
    from ..formats import read_file
    from ..query import make_engine
    from ..store import Store

    histories = read_file(input_path, fmt=fmt, config=config)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    records: list[dict] = []
    build_fallbacks = 0
    own_llm = llm is None
    if own_llm:
        llm = make_llm(backend, model_path)
    grader = LLMJudge(llm) if llm is not None and judge is not False else None
    tmp = tempfile.TemporaryDirectory(prefix="adamm-eval-")
    try:
        for k, h in enumerate(histories):
            if store_path and len(histories) == 1:
                path = store_path
            else:
                base = Path(store_path).parent if store_path else Path(tmp.name)
                path = str(base / f"eval-{k}.duckdb")
            with Store(path) as store:
                if llm is not None and hasattr(llm, "set_cache"):
                    from ..llm import DuckDBLLMCache

                    llm.set_cache(DuckDBLLMCache(store.con))
                d = deps or make_build_deps(config, cache_con=store.con, llm=llm)
                report = build(store, [h], d, config, progress=progress)
                build_fallbacks += len(getattr(report, "fallbacks", ()) or ())
                if engine_factory is not None:
                    engine = engine_factory(store, config, llm)
                else:
                    engine = make_engine(store, config, text_encoder=d.text_encoder,
                                         image_encoder=d.image_encoder, llm=llm)
                records += answer_all(engine, h, ablation=ablation, limit=limit,
                                      fmt="locomo" if h.format == "locomo" else "memeye", progress=progress,
                                      judge=grader)
                if llm is not None and hasattr(llm, "set_cache"):
                    llm.set_cache(None)  # the store closes: no reply may go to a closed connection
    finally:
        tmp.cleanup()
        if own_llm and llm is not None and hasattr(llm, "close"):
            llm.close()
    with open(out / "predictions.jsonl", "w") as f:
        for r in records:
            f.write(json.dumps({k: v for k, v in r.items() if not k.startswith("_")}, default=str) + "\n")
    summary = summarize(records, backend=backend, ablation=ablation,
                        judge_model=grader.model if grader is not None else None, build_fallbacks=build_fallbacks)
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    return summary
