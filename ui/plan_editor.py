"""The Query planner's debugger: edit a step, re-run from there, compare with the original, save a case.

Rendering only; the engine does the work (core.planning.replay: check_plan, replay, compare;
core.cases: save_case). Widget keys carry a generation number: adding or removing a step starts a
new generation, so no widget keeps the value of the step that was at its place before.
"""
from __future__ import annotations

import streamlit as st

from core.cases import scorer
from core.errors import InputError
from core.planning import TOOL_NAMES, Trace
from core.planning.replay import EditedPlan, StepEdit, arg_changes, check_plan, compare, replay
from core.planning.tools import COMPUTE_OPS
from core.planning.validate import FILTER_OPS

from . import charts, data
from .plan_form import SCOPES, args_from_form, form_from_args, shown

EDIT = "_plan_edit"      # {"fp": trace fingerprint, "plan": EditedPlan being edited, "gen": int}
EDITED = "_plan_edited"  # {"fp": ..., "trace": dict of the edited run, "plan": EditedPlan it ran}
FAULTS = "_plan_faults"  # list[str]: why the last re-run was refused
SAVED = "_plan_saved"    # str: the last "saved as a case" message


def _k(name: str, gen: int, *parts) -> str:
    return "pe_" + "_".join([name, str(gen), *map(str, parts)])


def _seed(key: str, value) -> None:
    if key not in st.session_state:
        st.session_state[key] = value


def _seed_step(gen: int, k: int, step: StepEdit) -> None:
    form = form_from_args(step.tool, step.args)
    _seed(_k("tool", gen, k), step.tool)
    _seed(_k("goal", gen, k), step.goal)
    _seed(_k("pin", gen, k), False)
    for name in ("table", "target", "operator", "order", "query", "scope"):
        _seed(_k(name, gen, k), form[name])
    _seed(_k("budget", gen, k), int(form["budget"]) if form["budget"] else 0)
    _seed(_k("nf", gen, k), len(form["filters"]))
    for j, (col, op, text) in enumerate(form["filters"]):
        _seed(_k("fcol", gen, k, j), col)
        _seed(_k("fop", gen, k, j), op if op in FILTER_OPS else "=")
        _seed(_k("fval", gen, k, j), text)
        _seed(_k("fdel", gen, k, j), False)


def _form(gen: int, k: int) -> dict:
    ss = st.session_state
    filters = []
    for j in range(ss.get(_k("nf", gen, k), 0)):
        if not ss.get(_k("fdel", gen, k, j)):
            filters.append((ss.get(_k("fcol", gen, k, j)) or "", ss.get(_k("fop", gen, k, j)) or "=",
                            ss.get(_k("fval", gen, k, j)) or ""))
    return {"table": ss.get(_k("table", gen, k)), "target": ss.get(_k("target", gen, k)),
            "operator": ss.get(_k("operator", gen, k)), "order": ss.get(_k("order", gen, k)),
            "budget": ss.get(_k("budget", gen, k)), "query": ss.get(_k("query", gen, k)),
            "scope": ss.get(_k("scope", gen, k)), "filters": filters}


def _pick(label: str, options: list, key: str, **kw) -> None:
    """A selectbox whose current value is always among its options (a value typed elsewhere is kept)."""
    cur = st.session_state.get(key)
    opts = list(options) + ([cur] if cur not in (None, "") and cur not in options else [])
    st.selectbox(label, opts or [""], key=key, **kw)


def _step_form(gen: int, k: int, catalog: dict, n_steps: int) -> None:
    c1, c2, c3 = st.columns([1.2, 3, 1])
    c1.selectbox(f"Step {k + 1} tool", TOOL_NAMES, key=_k("tool", gen, k))
    c2.text_input("Goal", key=_k("goal", gen, k))
    c3.checkbox("Pin", key=_k("pin", gen, k),
                help="Run with these arguments even if unchanged. An unpinned, unedited step from the re-run step "
                     "on is instantiated again from the earlier steps' results.")
    tool = st.session_state[_k("tool", gen, k)]
    if tool in ("SemanticMatch", "EventLocate"):
        st.text_area("Query", key=_k("query", gen, k), height=68)
        a, b = st.columns(2)
        if tool == "SemanticMatch":
            with a:
                _pick("Scope", list(SCOPES), _k("scope", gen, k))
        b.number_input("Result budget (0: what is left)", min_value=0, max_value=50, key=_k("budget", gen, k))
    else:
        tables = sorted(catalog)
        a, b, c = st.columns([1.5, 2, 1])
        with a:
            _pick("Table", tables, _k("table", gen, k))
        meta = catalog.get(st.session_state.get(_k("table", gen, k)))
        cols = [c_.name for c_ in meta.columns] if meta is not None else []
        if tool in ("Compute", "Rank"):
            b.text_input("Target column or expression", key=_k("target", gen, k),
                         help="A column, `*` (count), or arithmetic over numeric columns. Columns: " + ", ".join(cols))
        if tool == "Compute":
            c.selectbox("Operator", COMPUTE_OPS, key=_k("operator", gen, k))
        elif tool == "Rank":
            c.selectbox("Order", ("desc", "asc"), key=_k("order", gen, k))
        if tool != "Compute":
            c.number_input("Result budget (0: what is left)", min_value=0, max_value=50, key=_k("budget", gen, k))
        nf = st.session_state.get(_k("nf", gen, k), 0)
        for j in range(nf):
            _seed(_k("fop", gen, k, j), "=")
            f1, f2, f3, f4 = st.columns([1.5, 1, 2, 0.7])
            with f1:
                _pick(f"Filter {j + 1} column", cols, _k("fcol", gen, k, j))
            f2.selectbox("op", FILTER_OPS, key=_k("fop", gen, k, j))
            f3.text_input("value (between: a, b · in: a, b, c)", key=_k("fval", gen, k, j))
            f4.checkbox("remove", key=_k("fdel", gen, k, j))
        st.button("Add a filter", key=_k("addf", gen, k), on_click=_add_filter, args=(gen, k))
    st.button(f"Remove step {k + 1}", key=_k("del", gen, k), on_click=_remove_step, args=(k,),
              disabled=n_steps <= 1)


def _add_filter(gen: int, k: int) -> None:
    key = _k("nf", gen, k)
    st.session_state[key] = st.session_state.get(key, 0) + 1


def _current_plan(trace: dict, gen: int, n: int) -> EditedPlan:
    """The plan as the form shows it now (every step pinned to its form's arguments)."""
    steps = []
    for k in range(n):
        tool = st.session_state.get(_k("tool", gen, k)) or "SemanticMatch"
        steps.append(StepEdit(tool, st.session_state.get(_k("goal", gen, k)) or "", args_from_form(tool, _form(gen, k))))
    return EditedPlan(trace["question"], tuple(steps), trace["ablation"], trace.get("image_caption") or "")


def _restart(plan: EditedPlan) -> None:
    ed = st.session_state[EDIT]
    ed["plan"], ed["gen"] = plan, ed["gen"] + 1
    for k, s in enumerate(plan.steps):
        _seed_step(ed["gen"], k, s)


def _remove_step(k: int) -> None:
    ed = st.session_state[EDIT]
    plan = _current_plan(st.session_state["_plan_trace"], ed["gen"], len(ed["plan"].steps))
    _restart(plan.remove(k))


def _add_step() -> None:
    ed = st.session_state[EDIT]
    tr = st.session_state["_plan_trace"]
    plan = _current_plan(tr, ed["gen"], len(ed["plan"].steps))
    _restart(plan.insert(len(plan.steps), StepEdit("SemanticMatch", "find the rounds about the question",
                                                   {"query_content": tr["question"], "retrieval_scope": "event"})))


def _rerun(engine, fp: str) -> None:
    """Button callback: steps before the chosen one keep their arguments; from it on, edited or pinned
    steps run as written and the others are instantiated again. Refused with every fault listed."""
    ed = st.session_state[EDIT]
    tr = st.session_state["_plan_trace"]
    gen, n = ed["gen"], len(ed["plan"].steps)
    start = int(st.session_state.get(_k("from", gen)) or 1) - 1
    original = EditedPlan.from_trace(tr)
    form = _current_plan(tr, gen, n)
    steps = []
    for k, s in enumerate(form.steps):
        old = original.steps[k] if k < len(original.steps) else None
        same = old is not None and old.tool == s.tool and old.args is not None \
            and not arg_changes(old.args, s.args)
        if k < start and old is not None and old.tool == s.tool:
            steps.append(old)
        elif same and not st.session_state.get(_k("pin", gen, k)):
            steps.append(StepEdit(s.tool, s.goal, None))  # unedited: instantiated again as it runs
        else:
            steps.append(s)
    plan = EditedPlan(form.question, tuple(steps), form.ablation, form.image_caption)
    faults = check_plan(engine, plan)
    st.session_state.pop(SAVED, None)
    if faults:
        st.session_state[FAULTS] = list(faults)
        return
    st.session_state.pop(FAULTS, None)
    try:
        edited = replay(engine, plan)
    except InputError as e:
        st.session_state[FAULTS] = [str(e)]
        return
    st.session_state[EDITED] = {"fp": fp, "trace": edited.to_dict(), "plan": plan}


def gold_qa(qas, question: str):
    """The memory's QA whose question is `question` (None: it has no gold answer)."""
    return next((q for q in qas if q.question.strip() == question.strip()), None)


def _save(store, qa) -> None:
    run = st.session_state.get(EDITED)
    if run is None:
        return
    expected = st.session_state.get("pe_expected") or ""
    try:
        case = data.save_case(store, run["plan"], expected, saved_answer=run["trace"]["answer"]["text"],
                         note=st.session_state.get("pe_note") or "",
                         answer_kind=(qa.answer_kind or None) if qa is not None else None,
                         tolerance=qa.tolerance if qa is not None else None)
    except (InputError, data.ReadOnlyMemory) as e:
        st.session_state[SAVED] = f"error: {e}"
        return
    st.session_state[SAVED] = (f"Saved as case {case.case_id}. Replay every case with `python -m core eval --cases "
                               f"--store {store.path}` or on the Evaluate page.")


def _args_lines(args: dict, changed: set[str]) -> str:
    lines = []
    for name, value in args.items():
        text = f"{name}: `{shown(value).replace('`', chr(39))}`"
        lines.append(f"- :orange-background[{text} (changed)]" if name in changed else f"- {text}")
    return "\n".join(lines) or "- (no arguments)"


def _run_column(title: str, tr: dict, diff, side: str, score) -> None:
    st.markdown(f"**{title}**")
    for s in tr["steps"]:
        d = diff.steps[s["index"]] if s["index"] < len(diff.steps) else None
        changed = {c.name for c in d.changes} if d is not None and side == "after" else set()
        swapped = d is not None and d.tool_before != d.tool_after
        head = f"Step {s['index'] + 1} · {s['tool']}" + (" (tool changed)" if swapped and side == "after" else "")
        st.markdown(f"{head} · {s['status']} · by {s['planner']}")
        st.markdown(_args_lines(s.get("args") or {}, changed))
        if s.get("summary") or s.get("error"):
            st.caption(s.get("error") or s.get("summary"))
        if s.get("rows"):
            n = s.get("n_matched") or len(s["rows"])
            with st.expander(f"{n} row(s)" + (" (changed)" if d is not None and d.rows_before != d.rows_after
                                                and side == "after" else "")):
                st.dataframe([dict(zip(s["columns"], r)) for r in s["rows"][:50]], hide_index=True,
                             key=f"pe_rows_{side}_{s['index']}")
    (st.warning if tr["answer"].get("refused") else st.success)(tr["answer"]["text"])
    rounds = tr.get("evidence_rounds") or []
    mark = set(diff.rounds_added) if side == "after" else set(diff.rounds_removed)
    sign = "+" if side == "after" else "−"
    st.caption("evidence rounds: " + (", ".join(f"{sign}{r}" if r in mark else r for r in rounds[:12]) or "none")
               + (" …" if len(rounds) > 12 else ""))
    tokens = tr["tokens"]["prompt"] + tr["tokens"]["completion"]
    st.caption(f"budget left {tr['budget_left']} · {tokens} token(s) · {dict(tr['ms']).get('total', 0):.0f} ms"
               + (f" · score {score:.2f}" if score is not None else ""))


def _comparison(before: dict, after: dict, qa):
    sc = scorer((qa.answer_kind or None) if qa is not None else None, qa.tolerance if qa is not None else None)
    return compare(Trace.from_dict(before), Trace.from_dict(after), gold=qa.answer if qa is not None else None,
                   scorer=sc)


def versus_full(full: dict, other: dict, qa) -> str:
    """One line on an ablation's run against the full system's (core.planning.replay.compare): the score
    against the gold answer where the question has one, the evidence rounds gained and lost, the tokens."""
    d = _comparison(full, other, qa)
    parts = []
    if d.score_after is not None and d.score_before is not None:
        how = "better" if d.score_after > d.score_before else "worse" if d.score_after < d.score_before else "same"
        parts.append(f"score {d.score_after:.2f} vs {d.score_before:.2f} ({how})")
    else:
        parts.append("answer " + ("differs" if d.answer_changed else "the same"))
    parts.append(f"evidence +{len(d.rounds_added)} / −{len(d.rounds_removed)} round(s)")
    parts.append(f"tokens {d.tokens_after - d.tokens_before:+d}")
    return "vs full: " + " · ".join(parts)


def comparison_view(before: dict, after: dict, qa) -> None:
    """The original and the edited run side by side, differing arguments highlighted."""
    diff = _comparison(before, after, qa)
    st.info(diff.verdict())
    left, right = st.columns(2)
    with left:
        _run_column("Original", before, diff, "before", diff.score_before)
    with right:
        _run_column("Edited", after, diff, "after", diff.score_after)


def _attribute(engine, run: dict) -> None:
    from core.attribution import attribute

    try:
        run["attr"] = attribute(engine, Trace.from_dict(run["trace"]))
    except InputError as e:
        run["attr"] = str(e)


def attribution_view(engine, run: dict) -> None:
    """Shapley values of the edited run's evidence units (core.attribution), computed on request."""
    n_units = len({u["unit_id"] for s_ in run["trace"]["steps"] for u in s_["units"]})
    st.button("Why the edited answer?", key="pe_why", disabled=n_units == 0, on_click=_attribute,
              args=(engine, run), help="The Shapley value of each evidence unit of the edited run, as "
                                       "“Why this answer?” computes it for the original.")
    res = run.get("attr")
    if isinstance(res, str):
        st.error(res)
    elif res is not None:
        st.caption(f"{res.calls} answerer call(s) ({res.answerer}) · v(all evidence) = {res.v_full:g}, "
                   f"v(no evidence) = {res.v_empty:g}")
        rows = [dict(r, text=u.text) for r, u in zip(res.to_list(), res.values)]
        st.plotly_chart(charts.attribution_figure(rows, v_full=res.v_full, v_empty=res.v_empty), width="stretch",
                        key="pe_attr_chart")


def editor_section(store, engine, trace: dict, fp: str, qas) -> None:
    """Edit the trace's plan, re-run it from a step, compare the runs, and save the edit as a case."""
    st.subheader("Debug this plan")
    st.caption("Change a step's arguments or tool, add or remove a step (at most "
               f"{engine.config.max_steps}), and re-run from a step: the steps before it keep their arguments, "
               "edited or pinned steps run as written (checked by the validator the planner's own output goes "
               "through), and the others are instantiated again from the earlier results.")
    st.session_state["_plan_trace"] = trace
    ed = st.session_state.get(EDIT)
    if ed is None or ed["fp"] != fp:
        plan = EditedPlan.from_trace(trace)
        gen = (ed["gen"] + 1) if ed else 0
        st.session_state[EDIT] = {"fp": fp, "plan": plan, "gen": gen}
        for k, s in enumerate(plan.steps):
            _seed_step(gen, k, s)
        st.session_state.pop(FAULTS, None)
    ed = st.session_state[EDIT]
    gen, n = ed["gen"], len(ed["plan"].steps)
    catalog = engine.contexts.catalog()
    for k in range(n):
        # Streamlit drops a widget's value after a run that did not draw it (a run cut short by the next click):
        # the plan's own value comes back, not the first option (a step's tool had turned into "Lookup")
        _seed_step(gen, k, ed["plan"].steps[k])
        with st.container(border=True):
            _step_form(gen, k, catalog, n)
    c1, c2, c3 = st.columns([1, 1, 1])
    c1.button("Add a step", key=_k("add", gen), on_click=_add_step, disabled=n >= engine.config.max_steps)
    c2.selectbox("Re-run from step", list(range(1, n + 1)), key=_k("from", gen))
    c3.button("Re-run", key="pe_rerun", type="primary", on_click=_rerun, args=(engine, fp))
    faults = st.session_state.get(FAULTS) or []
    for f in faults:
        st.error(f)
    run = st.session_state.get(EDITED)
    if run is None or run["fp"] != fp:
        return
    if faults:
        st.caption("The edit above was not run; below is the last re-run that was.")
    qa = gold_qa(qas, trace["question"])
    comparison_view(trace, run["trace"], qa)
    attribution_view(engine, run)
    st.download_button("Download the edited plan (for `python -m core ask --plan FILE`)", run["plan"].to_json(indent=1),
                       file_name="plan.json", mime="application/json", key="pe_download")
    _seed("pe_expected", qa.answer if qa is not None else run["trace"]["answer"]["text"])
    s1, s2 = st.columns([2, 2])
    s1.text_input("Expected answer", key="pe_expected",
                  help="What this question should be answered with; `eval --cases` scores both plans against it.")
    s2.text_input("Note (optional)", key="pe_note")
    st.button("Save as a case", key="pe_save", on_click=_save, args=(store, qa))
    msg = st.session_state.get(SAVED)
    if msg:
        (st.error if msg.startswith("error:") else st.success)(msg)
