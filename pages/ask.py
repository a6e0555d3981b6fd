"""Query planner: the planning context with its scores, the plan as a graph, step-by-step execution
under the evidence budget, the answer with its source rounds, and ablations side by side."""
from __future__ import annotations

import time
from pathlib import Path

import streamlit as st

from core.errors import InputError
from core.planning import ABLATIONS
from ui import charts, state
from ui.engine import config, memory_version, query_engine
from ui.resources import store_or_none
from ui.views import evidence_view, step_view

ABLATION_HELP = {
    "full": "both memories, ranked planning context, progressive instantiation",
    "no-analytic": "without the analytic memory (retrieval tools only)",
    "no-retrieval": "without the retrieval memory (analytic tools only)",
    "no-context": "the planner sees every table and episode, unranked",
    "no-progressive": "every step's arguments fixed before any step runs",
    "rag": "baseline: top-10 fused retrieval straight to the answerer",
}

path = state.store_path()
st.title("Query planner")
st.caption("A question is matched against table and episode metadata (h = λ·cosine + (1-λ)·BM25), planned as at most "
           "3 tool steps, and each step is instantiated from the results of the earlier ones under a shared "
           "evidence budget.")
if not Path(path).exists():
    st.info("No memory yet: build one on the **Upload & build** page.")
    st.stop()
store = store_or_none(path)
if store is None:
    st.stop()
version = memory_version(store)


def _engine():
    """The session's engine, created on first use (it loads the text encoder)."""
    return query_engine(store, path)


# ------------------------------------------------------------------ question
qas = store.qas()
if qas:
    def _use_example() -> None:
        pick = st.session_state.get("ask_example")
        if pick:
            st.session_state["ask_q"] = pick

    st.selectbox("Example questions from this memory's QA list", [q.question for q in qas], index=None,
                 placeholder=f"{len(qas)} questions", key="ask_example", on_change=_use_example)
question = st.text_input("Question", key="ask_q", placeholder="e.g. What was my average sleep score in March?")
ablation = st.selectbox("Run as", list(ABLATIONS), format_func=lambda a: f"{a} — {ABLATION_HELP.get(a, '')}",
                        key="ask_ablation")

plan_state = state.get(state.PLAN_STATE)
if plan_state is not None and (plan_state.get("path"), plan_state.get("version")) != (path, version):
    plan_state = None  # the memory changed under the plan


def _start() -> None:
    q = st.session_state.get("ask_q", "")
    try:
        ps = _engine().start(q, st.session_state.get("ask_ablation", "full"))
    except InputError as e:
        st.session_state["_ask_error"] = str(e)
        return
    st.session_state.pop("_ask_error", None)
    state.put(state.PLAN_STATE, {"path": path, "version": version, "state": ps})
    state.put(state.LAST_TRACE, None)


def _step() -> None:
    ps = state.get(state.PLAN_STATE)
    if ps:
        ps["state"] = _engine().step(ps["state"])
        if ps["state"].done:
            state.put(state.LAST_TRACE, _engine().finish(ps["state"]).to_dict())


def _finish() -> None:
    if state.get(state.PLAN_STATE) is None or state.get(state.PLAN_STATE)["state"].question != \
            st.session_state.get("ask_q", "").strip():
        _start()
    ps = state.get(state.PLAN_STATE)
    if ps is None:
        return
    engine, s, guard = _engine(), ps["state"], 0
    while not s.done and guard < engine.config.max_steps + 3:
        s, guard = engine.step(s), guard + 1
    ps["state"] = s
    state.put(state.LAST_TRACE, engine.finish(s).to_dict())


b1, b2, b3 = st.columns(3)
b1.button("Plan", on_click=_start, disabled=not question.strip(), key="ask_plan", type="primary")
ps = plan_state["state"] if plan_state else None
b2.button("Step", on_click=_step, disabled=ps is None or ps.done, key="ask_step",
          help="Instantiate the next step from the question and the earlier results, and run it.")
b3.button("Run to the answer", on_click=_finish, disabled=not question.strip(), key="ask_finish")
if st.session_state.get("_ask_error"):
    st.error(st.session_state["_ask_error"])

if ps is None:
    st.caption("Press **Plan** to build the planning context and the plan, then **Step** through it.")
    st.stop()

plan_state = state.get(state.PLAN_STATE)
ps = plan_state["state"]
trace = state.get(state.LAST_TRACE)
st.divider()
st.markdown(f"**Question:** {ps.question} · ablation `{ps.ablation}` · planner `{ps.plan.planner}`"
            + (f" · intent `{ps.plan.intent}`" if ps.plan.intent else ""))

# ------------------------------------------------------------------ planning context
with st.expander(f"Planning context: {len(ps.context.candidates)} candidate(s), "
                 f"{sum(c.selected for c in ps.context.candidates)} selected", expanded=False):
    cands = [c.to_dict() for c in ps.context.candidates]
    st.dataframe([{"kind": c["kind"], "name": c["name"], "cosine": round(c["cos"], 3), "BM25": round(c["bm25"], 3),
                   "BM25 (norm.)": round(c["bm25_norm"], 3), "combined h": round(c["score"], 3),
                   "selected": c["selected"], "metadata": c["text"][:160]} for c in cands],
                 hide_index=True, width="stretch")
    if cands:
        st.plotly_chart(charts.scores_figure(cands[:20]), width="stretch", key="ask_scores")

# ------------------------------------------------------------------ plan and steps
c_plan, c_budget = st.columns([3, 1])
with c_plan:
    st.markdown("**Plan**")
    st.graphviz_chart(charts.plan_dot([{"goal": s.goal, "tool": s.tool} for s in ps.plan.steps], len(ps.records),
                                      question=ps.question))
    for n in ps.plan.notes:
        st.caption(n)
with c_budget:
    st.metric("Evidence budget left", f"{ps.budget_left} / {config().evidence_budget}")
    st.metric("Steps run", f"{len(ps.records)} / {len(ps.plan.steps)}")

for rec in ps.records:
    with st.container(border=True):
        step_view(rec.to_dict())
if not ps.done and ps.next_step is not None:
    st.info(f"Next: step {len(ps.records) + 1} · {ps.next_step.tool} — {ps.next_step.goal}. Press **Step** to "
            "instantiate and run it.")
for fb in ps.fallbacks:
    st.warning(fb)

# ------------------------------------------------------------------ answer
if trace is not None:
    st.subheader("Answer")
    ans = trace["answer"]
    (st.warning if ans.get("refused") else st.success)(ans["text"])
    ms = dict(trace["ms"])
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Answer kind", ans["kind"])
    m2.metric("Support", f"{ans.get('support', 0):.2f}")
    m3.metric("Tokens", trace["tokens"]["prompt"] + trace["tokens"]["completion"])
    m4.metric("Total ms", f"{ms.get('total', 0):.0f}")
    st.caption("Time per stage: " + ", ".join(f"{k} {v:.0f} ms" for k, v in trace["ms"]))
    for fb in trace.get("fallbacks") or []:
        st.caption(f"fallback: {fb}")
    st.markdown("**Evidence**")
    evidence_view(store, ans.get("rounds") or trace.get("evidence_rounds") or [])

# ------------------------------------------------------------------ ablations side by side
st.divider()
st.subheader("Ablations side by side")
others = [a for a in ABLATIONS if a != "full"]
chosen = st.multiselect("Compare the full system with", others, default=["rag"], key="ask_compare_with",
                        format_func=lambda a: f"{a} ({ABLATION_HELP[a]})")
if st.button("Compare", key="ask_compare", disabled=not chosen):
    out = {}
    for a in ["full"] + chosen:
        t0 = time.perf_counter()
        try:
            tr = _engine().ask(ps.question, ablation=a).to_dict()
        except InputError as e:
            tr = {"error": str(e)}
        tr["_wall_ms"] = (time.perf_counter() - t0) * 1000
        out[a] = tr
    st.session_state["_ask_compare"] = {"question": ps.question, "path": path, "version": version, "runs": out}
cmp_ = st.session_state.get("_ask_compare")
if cmp_ and cmp_["question"] == ps.question and (cmp_["path"], cmp_["version"]) == (path, version):
    cols = st.columns(len(cmp_["runs"]))
    for col, (a, tr) in zip(cols, cmp_["runs"].items()):
        with col:
            st.markdown(f"**{a}**")
            if "error" in tr:
                st.error(tr["error"])
                continue
            st.write(tr["answer"]["text"])
            st.caption(f"{len(tr['steps'])} step(s): " + " → ".join(s["tool"] for s in tr["steps"]))
            st.caption(f"budget left {tr['budget_left']} · tokens {tr['tokens']['prompt'] + tr['tokens']['completion']}"
                       f" · {dict(tr['ms']).get('total', tr['_wall_ms']):.0f} ms")
            st.caption("evidence rounds: " + (", ".join(tr["evidence_rounds"][:8]) or "none")
                       + (" …" if len(tr["evidence_rounds"]) > 8 else ""))
