"""Evaluate: answer the memory's QA set under chosen ablations; the engine's scorer beside the benchmark's own
metrics per question type, false refusals, evidence recall against the flat top-10 baseline; drill into traces."""
from __future__ import annotations

import time
from types import SimpleNamespace

import streamlit as st

from core.evaluation.baseline import flat_top_k
from core.evaluation.runner import CORRECT_AT, answer_all, qa_type, question_image_caption, summarize
from core.evaluation.sampling import sample_across_types
from core.model import QA
from core.planning import ABLATIONS
from ui import charts, data, state
from ui.cases_view import cases_section
from ui.sweep_view import sweep_section
from ui.engine import cost_text, memory_version, meter_of, model_name, query_engine
from ui.resources import page_store
from ui.views import evidence_view, step_view

RESULTS = "_eval_results"

path = state.store_path()
st.title("Evaluate")
st.caption("Answers every question of this memory's QA list and scores it exactly as `python -m core eval` does "
           "(core.evaluation.runner): LoCoMo questions by LoCoMo's F1 per category, the others by answer kind "
           f"(numbers, dates, up/down, yes/no with tolerance; refusals; free text by token F1); a question counts "
           f"as correct at score ≥ {CORRECT_AT}. Beside it, each benchmark's own metrics as its authors compute "
           "them (core.evaluation.benchmarks: Mem-Gallery F1 / EM / BLEU-1, LoCoMo F1 by category), refusals, "
           "and the evidence recall of a flat top-10 over the file's rounds (0.7·MiniLM + 0.3·BM25), the floor "
           "the engine's retrieval is compared with.")
store = page_store(path)
version = memory_version(store)
cases_section(store, version, lambda: query_engine(store, path))
sweep_section()
st.divider()
qas = store.qas()
if not qas:
    st.info("This memory has no questions. Upload a MemEye file with `human-annotated QAs` or a LoCoMo file with "
            "`qa` to evaluate it.")
    st.stop()


def qa_format(qa: QA) -> str:
    """The runner's scoring format of a stored QA: LoCoMo QAs carry a category, MemEye ones don't."""
    return "locomo" if qa.category is not None else "memeye"


def flat_baseline(engine, chosen: list[QA]) -> dict[str, list[str]]:
    """qa_id -> the flat top-10 rounds of the question's own file (baseline.flat_top_k with the engine's
    text encoder), as the CLI's runner computes them."""
    by_source = data.rounds_by_source(store)
    out: dict[str, list[str]] = {}
    for src in sorted({sources.get(q.qa_id, "") for q in chosen}):
        mine = [q for q in chosen if sources.get(q.qa_id, "") == src]
        caps = {q.qa_id: c for q in mine if (c := question_image_caption(q))}
        out.update(flat_top_k(by_source.get(src, []), mine, engine.encoder, caps))
    return out


def answer_one(engine, qa: QA, ablation: str, flat: dict[str, list[str]]) -> dict:
    """One prediction record exactly as the CLI's runner writes it (runner.answer_all on this one QA),
    plus the ablation; a question that raises scores 0 and keeps the error instead of ending the run."""
    one = SimpleNamespace(qas=(qa,), source=sources.get(qa.qa_id, ""))
    t0 = time.perf_counter()
    try:
        rec = answer_all(engine, one, ablation=ablation, limit=None, fmt=qa_format(qa), flat=flat)[0]
        rec["error"] = None
    except Exception as e:  # one failing question must not end the run; it scores 0 and says why
        rec = {"qa_id": qa.qa_id, "source": one.source, "type": qa_type(qa), "question": qa.question,
               "gold": qa.answer, "prediction": "", "score": 0.0, "correct": False, "evidence": [],
               "clues": list(qa.clues), "evidence_recall": None, "flat_top10": flat.get(qa.qa_id),
               "flat_top10_recall": None, "plan": None, "steps": None, "tokens": 0,
               "latency_ms": round((time.perf_counter() - t0) * 1000, 2), "fallbacks": [],
               "error": f"{type(e).__name__}: {e}"}
    rec["ablation"] = ablation
    return rec


sources = data.qa_sources(store)
types = sorted({qa_type(q) for q in qas})
c1, c2, c3 = st.columns([2, 2, 1])
ablations = c1.multiselect("Ablations", list(ABLATIONS), default=["full"], key="ev_ablations")
picked_types = c2.multiselect("Question types", types, default=types, key="ev_types")
pool = [q for q in qas if qa_type(q) in picked_types]
limit = c3.number_input("Questions", 1, max(1, len(pool)), min(len(pool), 50) or 1, key="ev_limit")
chosen = sample_across_types(pool, int(limit), qa_type)
st.caption(f"{len(qas)} questions in this memory; {len(pool)} of the chosen types"
           + (f"; {len(chosen)} of them sampled across all {len({qa_type(q) for q in chosen})} type(s) "
              "(round-robin over the types, in list order)" if len(chosen) < len(pool) else "")
           + f"; {len(chosen) * len(ablations)} runs to do.")

if st.button("Run the evaluation", type="primary", disabled=not ablations or not pool, key="ev_run"):
    engine = query_engine(store, path)
    total = len(chosen) * len(ablations)
    bar = st.progress(0.0, text="Starting...")
    flat = flat_baseline(engine, chosen)
    rows, spent = [], {}
    meter = meter_of(engine.llm)  # tokens per ablation, split into prompt / completion for the cost
    for a in ablations:
        mark = meter.mark() if meter is not None else 0
        for q in chosen:
            rows.append(answer_one(engine, q, a, flat))
            bar.progress(len(rows) / total, text=f"{len(rows)}/{total} · {a} · {q.question[:60]}")
        if meter is not None:
            u = meter.usage(mark)
            spent[a] = (u.prompt_tokens, u.completion_tokens)
    bar.empty()
    summaries = {a: summarize([r for r in rows if r["ablation"] == a], backend=engine.backend, ablation=a)
                 for a in ablations}
    st.session_state[RESULTS] = {"path": path, "version": version, "rows": rows, "summaries": summaries,
                                 "model": model_name(engine.llm), "spent": spent}

res = st.session_state.get(RESULTS)
if not res or (res["path"], res["version"]) != (path, version):
    st.caption("Choose ablations and press **Run the evaluation**.")
    st.stop()
rows = res["rows"]

# ------------------------------------------------------------------ summary
def bench_overall(sm: dict) -> dict:
    """The benchmark figures of a summary, one column each (F1 pooled over the benchmarks present,
    EM and BLEU-1 from Mem-Gallery's)."""
    b = sm.get("benchmark") or {}
    n = sum(v["n"] for v in b.values())
    f1 = round(sum(v["f1"] * v["n"] for v in b.values()) / n, 4) if n else None
    mg = b.get("mem-gallery") or {}
    return {"benchmark F1": f1, "EM": mg.get("em"), "BLEU-1": mg.get("bleu1")}


def bench_of_type(sm: dict, t: str) -> dict:
    """The benchmark figures of type `t` in a summary (from the benchmark that has the type)."""
    for v in (sm.get("benchmark") or {}).values():
        f = v["by_type"].get(t)
        if f is not None:
            return {"benchmark F1": f.get("f1"), "EM": f.get("em"), "BLEU-1": f.get("bleu1")}
    return {"benchmark F1": None, "EM": None, "BLEU-1": None}


st.subheader("Accuracy")
summaries = res["summaries"]
summary = []
for a, sm in summaries.items():
    mine = [r for r in rows if r["ablation"] == a]
    summary.append({"ablation": a, "n": sm["n"], "accuracy": sm["accuracy"], "mean score": sm["mean_score"],
                    "evidence recall": sm["evidence_recall"], "flat top-10 recall": sm["flat_top10_recall"],
                    **bench_overall(sm),
                    "false refusals": sm["false_refusals"]["share"], "right refusals": sm["right_refusals"]["share"],
                    "tokens / question": sm["tokens_per_question"],
                    "cost": cost_text(res.get("model"), *res.get("spent", {}).get(a, (0, 0))),
                    "ms p50": round(sm["latency_ms_p50"] or 0, 1), "ms p95": round(sm["latency_ms_p95"] or 0, 1),
                    "errors": sum(r["error"] is not None for r in mine)})
st.dataframe(summary, hide_index=True, width="stretch")
st.caption("The same numbers as `summary.json` of `python -m core eval` for these questions (accuracy: share "
           f"scoring ≥ {CORRECT_AT}; mean score: the average score).")
st.markdown("**Per question type: the engine's scorer, the benchmark's own metrics, refusals, evidence recall**")
by_type = [{"ablation": a, "type": t, "n": v["n"], "accuracy": v["accuracy"], "mean score": v["mean_score"],
            **bench_of_type(sm, t), "false refusals": sm["false_refusals"]["by_type"][t]["share"],
            "evidence recall": v["evidence_recall"], "flat top-10 recall": v["flat_top10_recall"]}
           for a, sm in summaries.items() for t, v in sm["by_type"].items()]
st.dataframe(by_type, hide_index=True, width="stretch")
st.caption("benchmark F1 / EM / BLEU-1: Mem-Gallery's normalize_answer_universal with Porter-stemmed F1, exact "
           "match and BLEU-1 (LoCoMo questions: LoCoMo's F1 by category; EM and BLEU-1 empty). False refusals: the "
           "share of answerable questions answered with a refusal; right refusals: the share of refusal questions "
           "refused. Flat top-10 recall: the gold clue rounds among the 10 best rounds of a flat 0.7·MiniLM + "
           "0.3·BM25 ranking.")
st.plotly_chart(charts.accuracy_figure([{"ablation": r["ablation"], "qtype": r["type"], "score": float(r["correct"])}
                                        for r in rows]), width="stretch", key="ev_acc")

# ------------------------------------------------------------------ per question
st.subheader("Questions")
st.dataframe([{"#": i, "ablation": r["ablation"], "type": r["type"], "question": r["question"], "gold": r["gold"],
               "prediction": r["prediction"], "score": round(r["score"], 3), "correct": r["correct"],
               "benchmark F1": (r.get("benchmark") or {}).get("f1"), "refused": r.get("refused"),
               "evidence recall": r["evidence_recall"], "flat top-10 recall": r.get("flat_top10_recall"),
               "tokens": r["tokens"], "ms": round(r["latency_ms"])}
              for i, r in enumerate(rows)], hide_index=True, width="stretch")
pick = st.selectbox("Drill into a question's trace", list(range(len(rows))), index=None,
                    format_func=lambda i: f"#{i} · {rows[i]['ablation']} · {rows[i]['question'][:80]}",
                    placeholder="choose a question", key="ev_pick")
if pick is not None:
    r = rows[pick]
    st.markdown(f"**{r['question']}**  \ngold: `{r['gold']}` · prediction: `{r['prediction']}` · "
                f"score {r['score']:.2f} ({'correct' if r['correct'] else 'wrong'})")
    if r["error"]:
        st.error(r["error"])
    if r.get("plan"):
        st.graphviz_chart(charts.plan_dot(r["plan"]["steps"], len(r["steps"] or []), question=r["question"]))
        for s_ in r["steps"] or []:
            with st.container(border=True):
                step_view(s_)
        for fb in r.get("fallbacks") or []:
            st.caption(f"fallback: {fb}")
        st.markdown("**Evidence**" + (f" (recall of the gold clues: {r['evidence_recall']:.2f})"
                                      if r["evidence_recall"] is not None else ""))
        evidence_view(store, [e["round"] for e in r["evidence"]])
