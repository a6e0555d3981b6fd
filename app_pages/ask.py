"""Query planner: the planning context with its scores, the plan as a graph, step-by-step execution
under the evidence budget, the answer with its source rounds, and ablations side by side."""
from __future__ import annotations

import hashlib
import json
import time

import streamlit as st

from core.errors import InputError
from core.model import ImageRef
from core.planning import ABLATIONS
from ui import charts, resources, state
from ui.attribution_text import decisive_sentence
from ui.engine import config, cost_text, memory_version, query_engine, warm_in_background
from ui.plan_editor import editor_section, gold_qa, versus_full
from ui.resources import ocr_engine, page_store
from ui.views import evidence_view, round_view, step_view

ABLATION_HELP = {
    "full": "both memories, ranked planning context, progressive instantiation",
    "no-analytic": "without the analytic memory (retrieval tools only)",
    "no-retrieval": "without the retrieval memory (analytic tools only)",
    "no-context": "the planner sees every table and episode, unranked",
    "no-progressive": "every step's arguments fixed before any step runs",
    "rag": "baseline: top-10 fused retrieval straight to the answerer",
    "no-utility": "retrieval ranked by similarity alone, ignoring the learned utility of units",
}
ATTRIBUTIONS = "_ask_attr"  # session key: {trace fingerprint: {"result": AttributionResult, "rated": bool | None}}

path = state.store_path()
st.title("Query planner")
st.caption("A question is matched against table and episode metadata (h = λ·cosine + (1-λ)·BM25), planned as at most "
           "3 tool steps, and each step is instantiated from the results of the earlier ones under a shared "
           "evidence budget.")
store = page_store(path)
version = memory_version(store)


def _engine():
    """The session's engine, created on first use (it loads the text encoder)."""
    return query_engine(store, path)


if resources.WARMUP.is_ready("text encoder"):
    warm_in_background(_engine())  # this memory's metadata is indexed while the question is typed
elif resources.WARMUP.status().started is not None:
    st.info(f"{resources.WARMUP.status().text()}: a question asked now is answered as soon as it is loaded.")


# ------------------------------------------------------------------ question
qas = store.qas()
if qas:
    def _use_example() -> None:
        pick = st.session_state.get("ask_example")
        if pick:
            st.session_state["ask_q"] = pick
            own = next((q.image for q in qas if q.question == pick and q.image is not None), None)
            st.session_state["ask_image_caption"] = own.caption if own is not None else ""

    st.selectbox("Example questions from this memory's QA list", [q.question for q in qas], index=None,
                 placeholder=f"{len(qas)} questions", key="ask_example", on_change=_use_example)
question = st.text_input("Question", key="ask_q", placeholder="e.g. What was my average sleep score in March?")
with st.expander("Ask with a picture", expanded=bool(st.session_state.get("ask_image_caption"))):
    st.caption("A question may come with its own picture (\"what is shown in this photo?\"). The memory is "
               "searched for what the picture shows: its caption, or the text read from it when you give no caption.")
    picture = st.file_uploader("Picture", type=["png", "jpg", "jpeg", "webp"], key="ask_image_file")
    st.text_input("What the picture shows (caption)", key="ask_image_caption",
                  placeholder="e.g. a purple bell-shaped flower on a tall stem")
    if picture is not None:
        st.image(picture.getvalue(), width=240)
ablation = st.selectbox("Run as", list(ABLATIONS), format_func=lambda a: f"{a} — {ABLATION_HELP.get(a, '')}",
                        key="ask_ablation")
use_utility = st.toggle(
    "Rank retrieval by learned utility", value=True, key="ask_utility",
    help="On: retrieval ranks units by s = α·similarity + (1-α)·U, where U is learned from your right/wrong "
         "ratings (α = utility_alpha, 0.8). Off: α = 1, similarity alone.")
_over = dict(state.get(state.CONFIG_OVERRIDES) or {})
if use_utility:
    _over.pop("utility_alpha", None)
else:
    _over["utility_alpha"] = 1.0
if _over != (state.get(state.CONFIG_OVERRIDES) or {}):
    state.put(state.CONFIG_OVERRIDES, _over)

plan_state = state.get(state.PLAN_STATE)
if plan_state is not None and (plan_state.get("path"), plan_state.get("version")) != (path, version):
    plan_state = None  # the memory changed under the plan


def _question_image():
    """The question's own picture (uploaded and/or captioned), None without one."""
    caption = (st.session_state.get("ask_image_caption") or "").strip()
    upload = st.session_state.get("ask_image_file")
    if upload is not None and not caption:
        caption = ocr_engine().read(upload.getvalue(), source=upload.name).text
    if not caption:
        return None
    return ImageRef(image_id="question:image", caption=caption, path=upload.name if upload is not None else None)


def _start() -> None:
    q = st.session_state.get("ask_q", "")
    try:
        ps = _engine().start(q, st.session_state.get("ask_ablation", "full"), _question_image())
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
if ps.image is not None:
    st.caption(f"With its own picture, searched as: “{ps.image.caption[:200]}”")
st.markdown(f"**Question:** {ps.question} · ablation `{ps.ablation}` · planner `{ps.plan.planner}`"
            + (f" · intent `{ps.plan.intent}`" if ps.plan.intent else "")
            + (f" · LLM mode `{_engine().mode}`" if _engine().mode != "rules" else ""))

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



def _utilities(records) -> dict[str, float] | None:
    """{unit id: learned U} for the retrieved units of the steps (one query); None when nothing is rated."""
    from core.utility import UtilityStore, unit_key

    keys = [k for r in records for u in r.units if (k := unit_key(u)) is not None]
    for r in records:  # retrieval hits beyond the budget are listed too
        if "node_id" in r.columns:
            keys += [str(row[r.columns.index("node_id")]) for row in r.rows]
    if not keys:
        return None
    us = UtilityStore(store.con, create=False)
    return None if us.is_empty() else us.utilities(keys)


_util = _utilities(ps.records)
for rec in ps.records:
    with st.container(border=True):
        step_view(rec.to_dict(), _util)
if not ps.done and ps.next_step is not None:
    st.info(f"Next: step {len(ps.records) + 1} · {ps.next_step.tool} — {ps.next_step.goal}. Press **Step** to "
            "instantiate and run it.")
for fb in ps.fallbacks:
    st.warning(fb)

# ------------------------------------------------------------------ answer


def _token_kw(tr: dict) -> dict:
    return {"prompt_tokens": tr["tokens"]["prompt"], "completion_tokens": tr["tokens"]["completion"]}


def usage_rows(tr: dict) -> list[dict]:
    """Tokens and milliseconds per stage of a trace (context, plan, each step, answer) and the total."""
    ms = dict(tr["ms"])
    plan = tr["plan"]
    rows = [{"stage": "planning context", "prompt tokens": 0, "completion tokens": 0, "ms": ms.get("context")},
            {"stage": f"plan ({plan['planner']})", "prompt tokens": plan.get("prompt_tokens", 0),
             "completion tokens": plan.get("completion_tokens", 0), "ms": ms.get("plan")}]
    for s_ in tr["steps"]:
        rows.append({"stage": f"step {s_['index'] + 1} · {s_['tool']}", "prompt tokens": s_.get("prompt_tokens") or 0,
                     "completion tokens": s_.get("completion_tokens") or 0, "ms": s_.get("ms")})
    a = tr["answer"]
    rows.append({"stage": f"answer ({a['kind']})", "prompt tokens": a.get("prompt_tokens", 0),
                 "completion tokens": a.get("completion_tokens", 0), "ms": ms.get("answer")})
    rows.append({"stage": "total", "prompt tokens": tr["tokens"]["prompt"],
                 "completion tokens": tr["tokens"]["completion"], "ms": ms.get("total")})
    for r in rows:
        r["ms"] = None if r["ms"] is None else round(float(r["ms"]), 1)
    return rows


def fingerprint(tr: dict) -> str:
    """Identifies one answered trace (question, ablation, answer, evidence) within this memory version."""
    core_ = {"q": tr["question"], "a": tr["ablation"], "ans": tr["answer"]["text"], "now": tr.get("now"),
             "units": [[u["unit_id"] for u in s_["units"]] for s_ in tr["steps"]], "path": path, "v": version}
    return hashlib.sha1(json.dumps(core_, sort_keys=True, default=str).encode()).hexdigest()


def _attribution(tr: dict) -> dict | None:
    """The cached attribution of `tr` (computed now when missing); None (the fault kept for display) on failure."""
    from core.attribution import attribute
    from core.planning import Trace

    cache = st.session_state.setdefault(ATTRIBUTIONS, {})
    fp = fingerprint(tr)
    st.session_state.pop("_ask_attr_error", None)
    if fp not in cache:
        try:
            result = attribute(_engine(), Trace.from_dict(tr))
        except InputError as e:
            st.session_state["_ask_attr_error"] = str(e)
            return None
        if len(cache) >= 20:  # keep the session small: drop the oldest
            cache.pop(next(iter(cache)))
        cache[fp] = {"result": result, "rated": None, "rewards": {}}
    return cache[fp]


def _rate(tr: dict, correct: bool) -> None:
    """Button callback: attribute the answer (if not yet) and add the rewards to the memory's unit utility."""
    from core.utility import UtilityStore

    entry = _attribution(tr)
    if entry is None:
        return
    try:
        # keyed by the trace: rating the same answer again replaces the earlier verdict
        rewards = UtilityStore(_engine().con).rate(entry["result"], correct, rating_id=fingerprint(tr))
    except InputError as e:
        st.session_state["_ask_attr_error"] = str(e)
        return
    entry["rated"], entry["rewards"] = correct, rewards


def _pick_bar() -> None:
    """A click on a bar of the attribution chart opens that unit's round (the selectbox follows)."""
    sel = st.session_state.get("ask_attr_chart")
    points = (sel or {}).get("selection", {}).get("points") or []
    if points and points[0].get("point_index") is not None:
        st.session_state["ask_attr_unit"] = int(points[0]["point_index"])


def attribution_section(tr: dict) -> None:
    """"Why this answer?": Shapley values of the evidence units, each linked to its round; right/wrong rating."""
    st.markdown("**Evidence attribution and your verdict**")
    n_units = len({u["unit_id"] for s_ in tr["steps"] for u in s_["units"]})
    fp = fingerprint(tr)
    entry = st.session_state.get(ATTRIBUTIONS, {}).get(fp)
    rated = entry["rated"] if entry else None
    c1, c2, c3, _ = st.columns([1.3, 0.8, 0.8, 3])
    c1.button("Why this answer?", key="ask_why", disabled=n_units == 0, on_click=_attribution, args=(tr,),
              help="Shapley value of each evidence unit: how much it moves the answerer to this answer "
                   "(the answerer is re-run on subsets of the evidence; no tool is re-run).")
    c2.button("Right", key="ask_rate_right", icon=":material/thumb_up:", on_click=_rate, args=(tr, True),
              disabled=rated is not None or not n_units,
              help="The answer is right: the units that led to it gain utility.")
    c3.button("Wrong", key="ask_rate_wrong", icon=":material/thumb_down:", on_click=_rate, args=(tr, False),
              disabled=rated is not None or not n_units,
              help="The answer is wrong: the units that led to it lose utility.")
    if st.session_state.get("_ask_attr_error"):
        st.error(st.session_state["_ask_attr_error"])
    if n_units == 0:
        st.caption("No evidence units: nothing to attribute or rate.")
        return
    if entry is None:
        return
    res = entry["result"]
    if entry["rated"] is not None:
        st.success(f"Rated {'right' if entry['rated'] else 'wrong'}: the utility of {len(entry['rewards'])} unit(s) "
                   "was updated" + (" (computed results carry no utility)." if len(entry["rewards"]) < n_units else "."))
    how = ("exact Shapley values over all subsets" if res.exact
           else f"sampled estimate (KernelSHAP on {res.budget} subsets)")
    st.caption(f"{how} · {res.calls} answerer call(s) ({res.answerer}) · v(all evidence) = {res.v_full:g}, "
               f"v(no evidence) = {res.v_empty:g} · value = agreement with the {res.reference} shown"
               + (f" · {res.fallbacks} answerer fallback(s)" if res.fallbacks else ""))
    rows = [dict(r, text=u.text) for r, u in zip(res.to_list(), res.values)]
    st.plotly_chart(charts.attribution_figure(rows, v_full=res.v_full, v_empty=res.v_empty), width="stretch",
                    key="ask_attr_chart", on_select=_pick_bar, selection_mode="points")
    decided = decisive_sentence(res, tr["answer"]["text"],
                                next((charts.attribution_label(r) for r in rows if r["unit"] == res.decisive), None))
    if decided:
        st.info(decided)
    if len(res.answers) > 1:
        st.caption("Answers from subsets: " + "; ".join(f"“{a[:60]}” ×{n}" for a, n in res.answers[:5]))
    linked = [i for i, r in enumerate(rows) if r["rounds"]]
    if not linked:
        return
    if st.session_state.get("ask_attr_unit") not in (None, *linked):
        st.session_state["ask_attr_unit"] = None
    pick = st.selectbox("Open the round behind a unit (or click its bar)", linked, index=None, key="ask_attr_unit",
                        format_func=lambda i: f"{charts.attribution_label(rows[i])} ({rows[i]['value']:+.3f}) → "
                                              f"{', '.join(rows[i]['rounds'][:3])}"
                                              + (" …" if len(rows[i]["rounds"]) > 3 else ""),
                        placeholder=f"{len(linked)} unit(s) with source rounds")
    if pick is not None:
        rounds = rows[pick]["rounds"]
        for rid in rounds[:5]:
            round_view(store, rid, expanded=True)
        if len(rounds) > 5:
            st.caption(f"{len(rounds) - 5} more round(s) behind this unit.")


if trace is not None:
    st.subheader("Answer")
    ans = trace["answer"]
    (st.warning if ans.get("refused") else st.success)(ans["text"])
    for why in ans.get("notes") or []:  # a short answer's reason ("D3:4 (May 2) came before D7:1 (June 9)")
        st.caption(f"Why: {why}")
    ms = dict(trace["ms"])
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Answer kind", ans["kind"])
    m2.metric("Support", f"{ans.get('support', 0):.2f}")
    m3.metric("Tokens", trace["tokens"]["prompt"] + trace["tokens"]["completion"])
    m4.metric("Total ms", f"{ms.get('total', 0):.0f}")
    # the model that answered THIS trace (the sidebar may have changed since): "llm:<model>" or "rules"
    _model = trace["backend"][4:] if trace["backend"].startswith("llm:") else None
    with st.expander(f"Tokens and time: {trace['tokens']['prompt'] + trace['tokens']['completion']} token(s), "
                     f"{ms.get('total', 0):.0f} ms, {cost_text(_model, **_token_kw(trace))}"):
        st.dataframe(usage_rows(trace), hide_index=True, width="stretch")
        st.caption(f"Model: `{_model or 'none (rule-based planner and answerer)'}`"
                   + (f" · mode `{trace.get('mode')}`" if _model and trace.get("mode") else "")
                   + f" · estimated cost {cost_text(_model, **_token_kw(trace))} "
                     "(list prices in core.llm.PRICES_PER_1M)")
    for fb in trace.get("fallbacks") or []:
        st.caption(f"fallback: {fb}")
    st.markdown("**Evidence**")
    if ans.get("cited"):  # a model's answer names the evidence lines it rests on
        st.caption("The model says its answer rests on: " + ", ".join(f"`{c}`" for c in ans["cited"]))
    evidence_view(store, ans.get("rounds") or trace.get("evidence_rounds") or [])
    attribution_section(trace)
    st.divider()
    editor_section(store, _engine(), trace, fingerprint(trace), qas)

# ------------------------------------------------------------------ ablations side by side
st.divider()
st.subheader("Ablations side by side")
others = [a for a in ABLATIONS if a != "full"]
chosen = st.multiselect("Compare the full system with", others, default=["rag"], key="ask_compare_with",
                        format_func=lambda a: f"{a} ({ABLATION_HELP.get(a, '')})")
if st.button("Compare", key="ask_compare", disabled=not chosen):
    out = {}
    for a in ["full"] + chosen:
        t0 = time.perf_counter()
        try:
            tr = _engine().ask(ps.question, ablation=a, image=ps.image).to_dict()
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
                       f" · {dict(tr['ms']).get('total', tr['_wall_ms']):.0f} ms · "
                       + cost_text(tr["backend"][4:] if tr["backend"].startswith("llm:") else None, **_token_kw(tr)))
            st.caption("evidence rounds: " + (", ".join(tr["evidence_rounds"][:8]) or "none")
                       + (" …" if len(tr["evidence_rounds"]) > 8 else ""))
            full = cmp_["runs"].get("full")
            if a != "full" and full is not None and "error" not in full:
                st.caption(versus_full(full, tr, gold_qa(qas, ps.question)))
