"""Evaluate: answer the memory's QA set under chosen ablations, accuracy per question type, drill into traces."""
from __future__ import annotations

import re
import statistics
import time
from pathlib import Path

import streamlit as st

from core.evaluation import evidence_recall, score_answer, token_f1
from core.model import QA
from core.planning import ABLATIONS
from ui import charts, state
from ui.engine import memory_version, query_engine
from ui.resources import store_or_none
from ui.views import evidence_view, step_view

RESULTS = "_eval_results"

path = state.store_path()
st.title("Evaluate")
st.caption("Answers every question of this memory's QA list and scores it (multiple choice: the letter; numbers, "
           "dates, up/down and yes/no: exact with tolerance; refusals; free text: token F1).")
if not Path(path).exists():
    st.info("No memory yet: build one on the **Upload & build** page.")
    st.stop()
store = store_or_none(path)
if store is None:
    st.stop()
version = memory_version(store)
qas = store.qas()
if not qas:
    st.info("This memory has no questions. Upload a MemEye file with `human-annotated QAs` or a LoCoMo file with "
            "`qa` to evaluate it.")
    st.stop()


def score(qa: QA, prediction: str) -> float:
    """The question's score in [0, 1]; a gold that does not fit its declared kind is scored by token F1."""
    if qa.options:
        m = re.match(r"\s*\(?([A-Za-z])\)?(?:[.:)\s]|$)", prediction or "")
        gold = qa.answer.strip().strip("()").upper()[:1]
        if m and m.group(1).upper() == gold:
            return 1.0
        text = dict(qa.options).get(gold, "")
        return 1.0 if text and text.lower() in (prediction or "").lower() else 0.0
    kind = "refusal" if qa.refusal else (qa.answer_kind or None)
    try:
        return score_answer(prediction, qa.answer, kind, qa.tolerance)
    except ValueError:
        return token_f1(prediction, qa.answer)


types = sorted({q.qtype or "(none)" for q in qas})
c1, c2, c3 = st.columns([2, 2, 1])
ablations = c1.multiselect("Ablations", list(ABLATIONS), default=["full"], key="ev_ablations")
picked_types = c2.multiselect("Question types", types, default=types, key="ev_types")
pool = [q for q in qas if (q.qtype or "(none)") in picked_types]
limit = c3.number_input("Questions", 1, max(1, len(pool)), min(len(pool), 50) or 1, key="ev_limit")
st.caption(f"{len(qas)} questions in this memory; {len(pool)} of the chosen types; "
           f"{int(limit) * len(ablations)} runs to do.")

if st.button("Run the evaluation", type="primary", disabled=not ablations or not pool, key="ev_run"):
    engine = query_engine(store, path)
    todo = [(a, q) for a in ablations for q in pool[: int(limit)]]
    bar = st.progress(0.0, text="Starting...")
    rows = []
    for i, (a, q) in enumerate(todo, start=1):
        t0 = time.perf_counter()
        try:
            tr = engine.ask(q.question, ablation=a, options=q.options).to_dict()
            pred, err = tr["answer"]["text"], None
        except Exception as e:  # one failing question must not end the run; it scores 0 and says why
            tr, pred, err = None, "", f"{type(e).__name__}: {e}"
        rows.append({
            "ablation": a, "qa_id": q.qa_id, "qtype": q.qtype or "(none)", "question": q.question, "gold": q.answer,
            "prediction": pred, "score": score(q, pred) if err is None else 0.0,
            "evidence_recall": evidence_recall(tr["evidence_rounds"], q.clues) if tr else None,
            "tokens": tr["tokens"]["prompt"] + tr["tokens"]["completion"] if tr else 0,
            "ms": (time.perf_counter() - t0) * 1000, "error": err, "trace": tr,
        })
        bar.progress(i / len(todo), text=f"{i}/{len(todo)} · {a} · {q.question[:60]}")
    bar.empty()
    st.session_state[RESULTS] = {"path": path, "version": version, "rows": rows}

res = st.session_state.get(RESULTS)
if not res or (res["path"], res["version"]) != (path, version):
    st.caption("Choose ablations and press **Run the evaluation**.")
    st.stop()
rows = res["rows"]

# ------------------------------------------------------------------ summary
st.subheader("Accuracy")
summary = []
for a in dict.fromkeys(r["ablation"] for r in rows):
    mine = [r for r in rows if r["ablation"] == a]
    rec = [r["evidence_recall"] for r in mine if r["evidence_recall"] is not None]
    summary.append({"ablation": a, "n": len(mine), "accuracy": round(sum(r["score"] for r in mine) / len(mine), 3),
                    "evidence recall": round(sum(rec) / len(rec), 3) if rec else None,
                    "tokens / question": round(sum(r["tokens"] for r in mine) / len(mine), 1),
                    "ms p50": round(statistics.median(r["ms"] for r in mine), 1),
                    "errors": sum(r["error"] is not None for r in mine)})
st.dataframe(summary, hide_index=True, width="stretch")
st.plotly_chart(charts.accuracy_figure(rows), width="stretch", key="ev_acc")

# ------------------------------------------------------------------ per question
st.subheader("Questions")
st.dataframe([{"#": i, "ablation": r["ablation"], "type": r["qtype"], "question": r["question"], "gold": r["gold"],
               "prediction": r["prediction"], "score": round(r["score"], 3), "ms": round(r["ms"])}
              for i, r in enumerate(rows)], hide_index=True, width="stretch")
pick = st.selectbox("Drill into a question's trace", list(range(len(rows))), index=None,
                    format_func=lambda i: f"#{i} · {rows[i]['ablation']} · {rows[i]['question'][:80]}",
                    placeholder="choose a question", key="ev_pick")
if pick is not None:
    r = rows[pick]
    st.markdown(f"**{r['question']}**  \ngold: `{r['gold']}` · prediction: `{r['prediction']}` · "
                f"score {r['score']:.2f}")
    if r["error"]:
        st.error(r["error"])
    tr = r["trace"]
    if tr:
        st.graphviz_chart(charts.plan_dot(tr["plan"]["steps"], len(tr["steps"]), question=tr["question"]))
        for s in tr["steps"]:
            with st.container(border=True):
                step_view(s)
        st.markdown("**Evidence**")
        evidence_view(store, tr["answer"].get("rounds") or tr.get("evidence_rounds") or [])
