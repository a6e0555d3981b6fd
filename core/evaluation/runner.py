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

Beside the engine's scorer, every record and summary carries the benchmark's
own metrics (benchmarks.py: Mem-Gallery F1/EM/BLEU-1 per `point`, LoCoMo F1
per category), refusals (`false_refusals`, `right_refusals`) and the flat
top-10 retrieval baseline (baseline.py, `flat_top10_recall` beside
`evidence_recall`).

Several inputs (files, folders, globs) run one file at a time: OUT/<stem>/
gets that file's predictions.jsonl and summary.json, OUT/summary.json pools
all questions of the files done and lists every file with its status; a file
already done with the same input and settings is reused, a failing one is
reported and skipped. A single file keeps the flat layout OUT/predictions.jsonl
+ OUT/summary.json.
"""
from __future__ import annotations

import glob
import inspect
import json
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

from ..config import DEFAULT, Config
from ..model import QA, History
from ..errors import InputError
from ..fingerprint import fingerprint, same_fingerprint
from . import benchmarks
from .baseline import FLAT_K, flat_top_k
from .judge import LLMJudge, judge_summary
from .scoring import evidence_recall, is_refusal, locomo_f1, score_answer

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


def benchmark_scores(qa: QA, prediction: str, fmt: str) -> dict:
    """The benchmark's own figures for one prediction: {"benchmark": "locomo", "f1"} for a LoCoMo QA
    with a category (LoCoMo's per-category rule), else {"benchmark": "mem-gallery", "f1", "em", "bleu1"}
    against the gold as written."""
    if fmt == "locomo" and qa.category is not None:
        return {"benchmark": benchmarks.LOCOMO, "f1": benchmarks.locomo_score(prediction, qa.answer, qa.category)}
    return {"benchmark": benchmarks.MEM_GALLERY, **benchmarks.mem_gallery_scores(prediction, qa.answer)}


def is_refusal_question(qa: QA) -> bool:
    """True when the right answer is a refusal (a refusal QA, or LoCoMo category 5)."""
    return bool(qa.refusal) or qa.category == 5 or qa.answer_kind == "refusal"


def question_image_caption(qa: QA) -> str | None:
    """The caption of the question's own image (Mem-Gallery `question_image`), None without one."""
    return (qa.image.caption or None) if qa.image is not None else None


def _ask(engine, qa: QA, ablation: str):
    """engine.ask with the question's options and its own image (an engine without images gets none)."""
    kw = {"image": qa.image} if qa.image is not None else {}
    if kw and "image" not in inspect.signature(engine.ask).parameters:  # a test's or a plug-in's engine
        kw = {}
    return engine.ask(qa.question, ablation=ablation, options=qa.options, **kw)


def answer_all(engine, history: History, *, ablation: str, limit: int | None, fmt: str,
               progress: Callable[[str, int, int], None] = lambda *a: None,
               judge: LLMJudge | None = None, flat: dict[str, list[str]] | None = None) -> list[dict]:
    """Ask every QA of `history`; one prediction record per question (with `judge` when a judge is given).

    `flat`: qa_id -> the flat top-10 rounds (baseline.flat_top_k); each record then has `flat_top10`
    and `flat_top10_recall` (None without).
    """
    qas = list(history.qas)[: limit if limit is not None else None]
    out = []
    for i, qa in enumerate(qas, start=1):
        t0 = time.perf_counter()
        try:
            trace = _ask(engine, qa, ablation)
        except Exception as e:  # an engine fault on one question: reported with it, the others still answered
            out.append(_failed_record(qa, history, fmt, e, (time.perf_counter() - t0) * 1000))
            progress("answer", i, len(qas))
            continue
        latency = (time.perf_counter() - t0) * 1000
        pred = trace.answer.text
        sc = score_qa(qa, pred, fmt)
        d = trace.to_dict()
        ordered = [str(r) for r in trace.evidence_rounds]
        rounds = list(dict.fromkeys(ordered))
        top = (flat or {}).get(qa.qa_id)
        ret = benchmarks.retrieval_at_k(ordered, qa.clues, FLAT_K)
        out.append({
            "qa_id": qa.qa_id, "source": history.source, "type": qa_type(qa),
            "question": qa.question,
            "gold": qa.answer, "prediction": pred, "score": round(sc.score, 4), "correct": sc.correct,
            "benchmark": {k: (round(v, 4) if isinstance(v, float) else v)
                          for k, v in benchmark_scores(qa, pred, fmt).items()},
            "refusal_question": is_refusal_question(qa), "refused": is_refusal(pred),
            "evidence": [{"round": r} for r in rounds], "clues": list(qa.clues),
            "evidence_recall": evidence_recall(rounds, qa.clues),
            "recall_at_10": ret["recall_k"], "hitrate_at_10": ret["hitrate_k"],
            "flat_top10": top, "flat_top10_recall": evidence_recall(top, qa.clues) if top is not None else None,
            "plan": d.get("plan"), "steps": d.get("steps"),
            "tokens": trace.prompt_tokens + trace.completion_tokens, "latency_ms": round(latency, 2),
            "fallbacks": d.get("fallbacks", []),
        })
        cap = question_image_caption(qa)
        if cap:
            out[-1]["question_image_caption"] = cap
        if judge is not None:
            j = judge.judge(qa.question, "Not mentioned" if qa.refusal and not qa.answer else qa.answer, pred)
            out[-1]["judge"] = j.score
            out[-1]["judge_reason"] = j.reason or j.error or ""
            out[-1]["_judgement"] = j
        progress("answer", i, len(qas))
    return out


def _failed_record(qa: QA, history: History, fmt: str, error: Exception, latency: float) -> dict:
    """The prediction record of a question the engine failed on: no answer (scored as such), the error
    named, the record's other fields empty."""
    sc = score_qa(qa, "", fmt)
    return {
        "qa_id": qa.qa_id, "source": history.source, "type": qa_type(qa), "question": qa.question,
        "gold": qa.answer, "prediction": "", "score": round(sc.score, 4), "correct": sc.correct,
        "benchmark": {k: (round(v, 4) if isinstance(v, float) else v)
                      for k, v in benchmark_scores(qa, "", fmt).items()},
        "refusal_question": is_refusal_question(qa), "refused": False, "evidence": [], "clues": list(qa.clues),
        "evidence_recall": evidence_recall([], qa.clues), "recall_at_10": None, "hitrate_at_10": None,
        "flat_top10": None, "flat_top10_recall": None, "plan": None, "steps": [], "tokens": 0,
        "latency_ms": round(latency, 2), "fallbacks": [], "error": f"{type(error).__name__}: {error}",
    }


# ---------------------------------------------------------------- summary

def _mean(values) -> float | None:
    xs = [v for v in values if v is not None]
    return round(statistics.fmean(xs), 4) if xs else None


def refusal_figures(records: list[dict]) -> dict:
    """`false_refusals`: answerable questions answered with a refusal (n, share of the answerable,
    per type); `right_refusals`: refusal questions refused (n of them, refused, share). Shares are None
    when there is no such question."""
    def false_of(rs):
        ans = [r for r in rs if not r.get("refusal_question")]
        k = sum(1 for r in ans if r.get("refused"))
        return {"n": k, "of": len(ans), "share": round(k / len(ans), 4) if ans else None}

    types = sorted({r["type"] for r in records})
    ref = [r for r in records if r.get("refusal_question")]
    k = sum(1 for r in ref if r.get("refused"))
    return {
        "false_refusals": {**false_of(records), "by_type": {t: false_of([r for r in records if r["type"] == t])
                                                             for t in types}},
        "right_refusals": {"n": len(ref), "refused": k, "share": round(k / len(ref), 4) if ref else None},
    }


def benchmark_figures(records: list[dict]) -> dict:
    """summary["benchmark"]: per benchmark (mem-gallery, locomo) the mean of its own metrics overall and
    per type (benchmarks.aggregate); Mem-Gallery also gets recall@10 / hitrate@10 of the evidence by
    its rule (every question counts, one without clues scores 0)."""
    rows = []
    for r in records:
        b = r.get("benchmark")
        if not b:
            continue
        row = {**b, "type": r["type"]}
        if b["benchmark"] == benchmarks.MEM_GALLERY:
            row["recall_at_10"], row["hitrate_at_10"] = r.get("recall_at_10") or 0.0, r.get("hitrate_at_10") or 0.0
        rows.append(row)
    return benchmarks.aggregate(rows)


def summarize(records: list[dict], *, backend: str, ablation: str, judge_model: str | None = None,
              build_fallbacks: int = 0) -> dict:
    """summary.json: n, accuracy, by_type, evidence_recall, flat_top10_recall, tokens_per_question, latency
    percentiles, fallback counts, `benchmark` (benchmark_figures), `false_refusals`/`right_refusals`
    (refusal_figures), and `llm_judge` (+ `llm_judge_detail`) when `judge_model` is given."""
    n = len(records)
    by_type: dict[str, list[dict]] = {}
    for r in records:
        by_type.setdefault(r["type"], []).append(r)
    lat = [r["latency_ms"] for r in records]
    out = {
        "n": n,
        "accuracy": round(sum(r["correct"] for r in records) / n, 4) if n else None,
        "mean_score": round(sum(r["score"] for r in records) / n, 4) if n else None,
        "by_type": {k: {"n": len(v), "accuracy": round(sum(r["correct"] for r in v) / len(v), 4),
                        "mean_score": round(sum(r["score"] for r in v) / len(v), 4),
                        "evidence_recall": _mean(r["evidence_recall"] for r in v),
                        "flat_top10_recall": _mean(r.get("flat_top10_recall") for r in v)}
                    for k, v in sorted(by_type.items())},
        "evidence_recall": _mean(r["evidence_recall"] for r in records),
        "flat_top10_recall": _mean(r.get("flat_top10_recall") for r in records),
        "benchmark": benchmark_figures(records),
        **refusal_figures(records),
        "tokens_per_question": round(sum(r["tokens"] for r in records) / n, 1) if n else 0,
        "latency_ms_p50": _percentile(lat, 0.5),
        "latency_ms_p95": _percentile(lat, 0.95),
        "backend": backend,
        "ablation": ablation,
        "fallbacks": sum(len(r.get("fallbacks") or []) for r in records),
        "questions_with_fallback": sum(1 for r in records if r.get("fallbacks")),
        "build_fallbacks": int(build_fallbacks),
        "errors": sum(1 for r in records if r.get("error")),
        "error_questions": [{"qa_id": r["qa_id"], "question": r["question"], "error": r["error"]}
                            for r in records if r.get("error")][:20],
    }
    if judge_model is not None:
        detail = judge_summary([r.get("_judgement") for r in records if "_judgement" in r], judge_model)
        out["llm_judge"] = detail["mean"]
        out["llm_judge_detail"] = detail
    return out


# ---------------------------------------------------------------- inputs

def expand_inputs(items: Sequence[str]) -> tuple[list[Path], bool]:
    """The input files of `items` (a file as given, a folder's *.json sorted, a glob's matches sorted;
    duplicates once) and whether the run is multi-file (more than one item, or a folder or glob).
    Raises InputError when an item names nothing, or nothing is left."""
    files: list[Path] = []
    multi = len(items) > 1
    for item in items:
        p = Path(item)
        if p.is_dir():
            multi = True
            files += sorted(q for q in p.glob("*.json") if q.is_file())
        elif any(ch in str(item) for ch in "*?["):
            multi = True
            files += sorted(Path(q) for q in glob.glob(str(item)) if Path(q).is_file())
        elif p.is_file():
            files.append(p)
        else:
            raise InputError(str(item), "", "no such file, folder or glob match")
    files = list(dict.fromkeys(files))
    if not files:
        raise InputError(", ".join(map(str, items)), "", "no JSON file to evaluate")
    return files, multi


def input_fingerprint(path: Path, *, ablation: str, limit: int | None, backend: str,
                      config: Config = DEFAULT) -> dict:
    """What makes a file's result reusable (core/fingerprint.py): the file, and the run's ablation,
    limit, backend and the config parameters changed from the defaults."""
    return fingerprint(path, {"ablation": ablation, "limit": limit, "backend": backend, "config": config.changes()})


def image_counts(histories: Sequence[History]) -> dict:
    """`images`: images referenced by the rounds; `images_missing`: those whose file was not read
    (caption only: a missing file under --allow-missing-images, or LoCoMo's web links)."""
    imgs = [i for h in histories for r in h.rounds for i in r.images]
    return {"images": len(imgs), "images_missing": sum(1 for i in imgs if i.data is None)}


# ---------------------------------------------------------------- running

@dataclass
class _Run:
    config: Config
    fmt: str | None
    ablation: str
    limit: int | None
    backend: str
    progress: Callable[[str, int, int], None]
    deps: object
    engine_factory: object
    llm: object
    grader: LLMJudge | None
    store_path: str | None
    allow_missing_images: bool
    tmp: str = ""
    counter: list = field(default_factory=lambda: [0])
    models: dict = field(default_factory=dict)  # text_encoder/ocr/image_encoder, loaded once per run

    def fingerprint(self, path: Path) -> dict:
        return input_fingerprint(path, ablation=self.ablation, limit=self.limit, backend=self.backend,
                                 config=self.config)


def shared_models(run: _Run) -> dict:
    """The run's encoders and OCR (deps.load_models), loaded on first use and reused for every file."""
    if not run.models:
        from ..deps import load_models

        run.models.update(load_models(ocr_parallel=run.config.ocr_parallel))
    return run.models


def _answer_history(run: _Run, h: History, path: str) -> tuple[list[dict], int]:
    """Build one history into a fresh memory at `path` and answer its QAs; (records, build fallbacks)."""
    from ..build import build
    from ..deps import make_build_deps
    from ..query import make_engine
    from ..store import Store

    llm = run.llm
    with Store(path) as store:
        if llm is not None and hasattr(llm, "set_cache"):
            from ..llm import DuckDBLLMCache

            llm.set_cache(DuckDBLLMCache(store.con))
        d = run.deps or make_build_deps(run.config, cache_con=store.con, llm=llm, **shared_models(run))
        report = build(store, [h], d, run.config, progress=run.progress)
        if run.engine_factory is not None:
            engine = run.engine_factory(store, run.config, llm)
        else:
            engine = make_engine(store, run.config, text_encoder=d.text_encoder,
                                 image_encoder=d.image_encoder, llm=llm)
        qas = list(h.qas)[: run.limit if run.limit is not None else None]
        caps = {q.qa_id: question_image_caption(q) for q in qas}
        flat = flat_top_k(h.rounds, qas, d.text_encoder, {k: v for k, v in caps.items() if v})
        records = answer_all(engine, h, ablation=run.ablation, limit=run.limit,
                             fmt="locomo" if h.format == "locomo" else "memeye", progress=run.progress,
                             judge=run.grader, flat=flat)
        if llm is not None and hasattr(llm, "set_cache"):
            llm.set_cache(None)  # the store closes: no reply may go to a closed connection
    return records, len(getattr(report, "fallbacks", ()) or ())


def _write(out: Path, records: list[dict], summary: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "predictions.jsonl", "w") as f:
        for r in records:
            f.write(json.dumps({k: v for k, v in r.items() if not k.startswith("_")}, default=str) + "\n")
    (out / "summary.json").write_text(json.dumps(summary, indent=2))


def eval_file(run: _Run, path: Path, out: Path) -> tuple[dict, list[dict]]:
    """Evaluate one input file into `out` (predictions.jsonl, then summary.json last, so a summary
    means the file is done). Returns (summary, records). Raises InputError for bad input."""
    summary, records = evaluate_file(run, path)
    _write(out, records, summary)
    return summary, records


def evaluate_file(run: _Run, path: Path) -> tuple[dict, list[dict]]:
    """(summary, records) of one input file, written nowhere (the caller writes them: a Ray worker
    sends them back). Raises InputError for bad input, and whatever the engine raises outside a question."""
    from ..formats import read_file

    histories = read_file(path, fmt=run.fmt, config=run.config, allow_missing_images=run.allow_missing_images)
    records: list[dict] = []
    build_fallbacks = 0
    for h in histories:
        if run.store_path and len(histories) == 1:
            store = run.store_path
        else:
            base = Path(run.store_path).parent if run.store_path else Path(run.tmp)
            run.counter[0] += 1
            store = str(base / f"eval-{run.counter[0]}.duckdb")
        recs, fb = _answer_history(run, h, store)
        records += recs
        build_fallbacks += fb
    summary = summarize(records, backend=run.backend, ablation=run.ablation,
                        judge_model=run.grader.model if run.grader is not None else None,
                        build_fallbacks=build_fallbacks)
    summary.update(image_counts(histories))
    summary["input"] = run.fingerprint(path)
    return summary, records


TIMING_FIELDS = frozenset({"latency_ms", "latency_ms_p50", "latency_ms_p95", "ms"})


def untimed(x):
    """A record or summary without its timing fields, at any depth: what must be the same when the
    same files are evaluated again, serially or on other workers."""
    if isinstance(x, dict):
        return {k: untimed(v) for k, v in x.items() if k not in TIMING_FIELDS}
    if isinstance(x, list):
        return [untimed(v) for v in x]
    return x


def file_line(path: Path, summary: dict | None, status: str, error: str | None = None) -> dict:
    """One entry of the pooled summary's `files`: the file, its status (done, reused, failed), its
    error when it failed, and its headline figures when it has a summary."""
    line: dict = {"file": str(path), "name": path.stem, "status": status}
    if error is not None:
        line["error"] = error
    if summary:
        line.update({k: summary.get(k) for k in ("n", "accuracy", "mean_score", "evidence_recall",
                                                 "flat_top10_recall", "images", "images_missing")})
        line["benchmark"] = {name: {k: v for k, v in b.items() if k != "by_type"}
                             for name, b in (summary.get("benchmark") or {}).items()}
        line["false_refusal_share"] = (summary.get("false_refusals") or {}).get("share")
        line["right_refusal_share"] = (summary.get("right_refusals") or {}).get("share")
    return line


def _load_done(sub: Path, now: dict) -> tuple[dict, list[dict]] | None:
    """(summary, records) of a file already evaluated into `sub` with the same input and settings; None
    when there is none or it differs or cannot be read (then the file is evaluated again)."""
    try:
        summary = json.loads((sub / "summary.json").read_text())
        if not same_fingerprint(summary.get("input"), now):
            return None
        records = [json.loads(ln) for ln in (sub / "predictions.jsonl").read_text().splitlines() if ln.strip()]
    except (OSError, ValueError, AttributeError):
        return None
    return summary, records


def pooled_summary(run: _Run, records: list[dict], lines: list[dict]) -> dict:
    """OUT/summary.json of a multi-file run: summarize() over every question of the files done, the
    `files` list, counts of files by status, the images of the files done, and `llm_judge` as the mean
    of the graded predictions when any were graded."""
    out = summarize(records, backend=run.backend, ablation=run.ablation,
                    build_fallbacks=0)
    out["build_fallbacks"] = None  # per file, in the files' own summaries
    judged = [r["judge"] for r in records if r.get("judge") is not None]
    if judged:
        out["llm_judge"] = round(statistics.fmean(judged), 4)
    for k in ("images", "images_missing"):
        out[k] = sum(ln.get(k) or 0 for ln in lines if ln["status"] != "failed")
    out["files"] = lines
    out["files_done"] = sum(1 for ln in lines if ln["status"] != "failed")
    out["files_failed"] = sum(1 for ln in lines if ln["status"] == "failed")
    out["limit"] = run.limit
    return out


@dataclass(frozen=True)
class FileTask:
    """One input file of a multi-file run: its place in the run (1-based), where its results go
    (OUT/<stem>/, `stem-2` for a second file of the same stem) and its input fingerprint."""
    index: int
    path: Path
    out: Path
    fingerprint: dict


@dataclass(frozen=True)
class FileOutcome:
    """What became of one FileTask: status "done" (summary and records, not yet written), "reused"
    (read back from its folder) or "failed" (`error` says why; no summary)."""
    task: FileTask
    status: str
    summary: dict | None = None
    records: list = field(default_factory=list)
    error: str | None = None


def file_tasks(run: _Run, files: Sequence[Path], out: Path) -> list[FileTask]:
    """The tasks of `files` under `out`, in file order, each with its fingerprint under the run's settings."""
    tasks, stems = [], {}
    for k, path in enumerate(files, start=1):
        stems[path.stem] = stems.get(path.stem, 0) + 1
        sub = out / (path.stem if stems[path.stem] == 1 else f"{path.stem}-{stems[path.stem]}")
        tasks.append(FileTask(k, path, sub, run.fingerprint(path)))
    return tasks


def reused_outcome(task: FileTask) -> FileOutcome | None:
    """The outcome of a task whose folder already holds its results for the same input and settings."""
    done = _load_done(task.out, task.fingerprint)
    return FileOutcome(task, "reused", done[0], done[1]) if done is not None else None


def evaluate_task(run: _Run, task: FileTask) -> FileOutcome:
    """Evaluate one task (nothing written). Never raises: a failing file (bad input, or any error)
    is an outcome with status "failed" and the error named."""
    try:
        summary, records = evaluate_file(run, task.path)
    except Exception as e:  # one bad file must not end a benchmark run; it is reported
        return FileOutcome(task, "failed", error=f"{type(e).__name__}: {e}")
    return FileOutcome(task, "done", summary, records)


Executor = Callable[[Sequence[FileTask]], "Iterable[FileOutcome]"]


def run_files(run: _Run, files: Sequence[Path], out: Path,
              on_file: Callable[[int, int, str], None] = lambda *a: None, *,
              execute: Executor | None = None,
              on_outcome: Callable[[FileOutcome, int, int], None] = lambda *a: None) -> dict:
    """Evaluate each file into OUT/<stem>/ (reusing one already done), pool them into OUT/summary.json.
    A file that fails (bad input, or any error) gets status "failed" with its error and is skipped.

    `execute(tasks)` evaluates the tasks not reused and yields their outcomes as they finish, in any
    order (core/batch.py: on Ray workers); by default they run here, one after another, with
    `on_file(k, n, name)` before each file. Each file done is written as soon as it arrives;
    `on_outcome(outcome, finished, n)` follows. The pooled summary lists the files in file order."""
    tasks = file_tasks(run, files, out)
    n = len(tasks)
    outcomes: dict[int, FileOutcome] = {}

    def arrive(oc: FileOutcome) -> None:
        if oc.status == "done":
            _write(oc.task.out, oc.records, oc.summary)
        outcomes[oc.task.index] = oc
        on_outcome(oc, len(outcomes), n)

    if execute is None:
        for t in tasks:
            on_file(t.index, n, t.path.name)
            arrive(reused_outcome(t) or evaluate_task(run, t))
    else:
        pending = []
        for t in tasks:
            oc = reused_outcome(t)
            if oc is None:
                pending.append(t)
            else:
                arrive(oc)
        for oc in execute(pending):
            arrive(oc)
    records: list[dict] = []
    lines: list[dict] = []
    for t in tasks:
        oc = outcomes.get(t.index) or FileOutcome(t, "failed", error="no result came back")
        records += oc.records
        lines.append(file_line(t.path, oc.summary, oc.status, oc.error))
    pooled = pooled_summary(run, records, lines)
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(pooled, indent=2))
    return pooled


@dataclass(frozen=True)
class EvalSettings:
    """The settings of an eval that every worker needs to reproduce it (plain values: a Ray worker
    gets a copy). `judge`: grade with the backend's model (None = whenever one is configured)."""
    config: Config = DEFAULT
    fmt: str | None = None
    ablation: str = "full"
    limit: int | None = None
    backend: str = "rules"
    model_path: str | None = None
    allow_missing_images: bool = False
    judge: bool | None = None


def new_run(settings: EvalSettings, *, tmp: str, llm=None, progress: Callable[[str, int, int], None] = lambda *a: None,
            deps=None, engine_factory=None, store_path: str | None = None, models: dict | None = None) -> _Run:
    """A run of `settings` with its memories under `tmp`: `llm` answers (and grades, unless
    settings.judge is False); `models` (deps.load_models) are reused instead of loading the encoders."""
    grader = LLMJudge(llm) if llm is not None and settings.judge is not False else None
    return _Run(settings.config, settings.fmt, settings.ablation, settings.limit, settings.backend, progress, deps,
                engine_factory, llm, grader, store_path, settings.allow_missing_images, tmp,
                models=models if models is not None else {})


def run_eval(input_path: str | Sequence[str], out_dir: str, *, config: Config = DEFAULT, fmt: str | None = None,
             ablation: str = "full", limit: int | None = None, backend: str = "rules",
             model_path: str | None = None, store_path: str | None = None,
             progress: Callable[[str, int, int], None] = lambda *a: None, deps=None, engine_factory=None,
             judge: bool | None = None, llm=None, allow_missing_images: bool = False,
             on_file: Callable[[int, int, str], None] = lambda *a: None, pool=None,
             on_outcome: Callable[[FileOutcome, int, int], None] = lambda *a: None) -> dict:
    """Build a memory per conversation of the input, answer its QAs, write predictions and summary.

    `input_path`: one file (flat layout: OUT/predictions.jsonl, OUT/summary.json; a bad file raises
    InputError, exit 2 in the CLI), or several files / folders / globs (run_files: one folder per
    file, a pooled OUT/summary.json; `on_file(k, n, name)` before each file; `store_path` unused).
    `deps` / `engine_factory(store, config, llm)` / `llm` let tests pass fakes; by default the real
    encoders are used and the model of `backend` is loaded once for the whole run (its reply
    cache moves to each conversation's memory file). `judge`: grade predictions with the model
    (None = whenever one is configured). `allow_missing_images`: a missing image file keeps its
    caption instead of failing the file (summary `images_missing` counts them).
    `pool` (core/batch.py's RayPool): the files are evaluated by its workers, each loading its own
    models, and the run always has the multi-file layout; `on_outcome(outcome, finished, n)` after
    each file of a multi-file run.
    """
    from ..deps import make_llm

    items = [str(input_path)] if isinstance(input_path, (str, Path)) else [str(x) for x in input_path]
    files, multi = expand_inputs(items)
    multi = multi or pool is not None
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    settings = EvalSettings(config, fmt, ablation, limit, backend, model_path, allow_missing_images, judge)
    own_llm = llm is None and pool is None
    if own_llm:
        llm = make_llm(backend, model_path, parallel=config.llm_parallel)
    tmp = tempfile.TemporaryDirectory(prefix="adamm-eval-")
    run = new_run(settings, tmp=tmp.name, llm=llm, progress=progress, deps=deps, engine_factory=engine_factory,
                  store_path=None if multi else store_path)
    try:
        if multi:
            execute = None if pool is None else (lambda tasks: pool.evaluate(settings, tasks))
            return run_files(run, files, out, on_file, execute=execute, on_outcome=on_outcome)
        return eval_file(run, files[0], out)[0]
    finally:
        tmp.cleanup()
        if own_llm and llm is not None and hasattr(llm, "close"):
            llm.close()
