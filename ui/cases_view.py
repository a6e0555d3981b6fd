"""The Evaluate page's saved plan cases: list them, replay them, delete one.

Rendering only: the cases are read and removed through ui.data, replayed by core.cases.replay_cases
(the planner's own plan and the saved plan, both scored against the case's expected answer), exactly as
`python -m core eval --cases` does.
"""
from __future__ import annotations

from typing import Callable

import streamlit as st

from core.cases import replay_cases

from . import data

RESULTS = "_case_results"  # {"version": memory version, "rows": [CaseResult.to_dict()]}
ICONS = {"passes": "✅", "the planner's own plan fails": "🟠", "fails": "❌", "broken": "🛑"}


def _case_rows(cases, results: dict[int, dict]) -> list[dict]:
    rows = []
    for c in cases:
        r = results.get(c.case_id) or {}
        status = r.get("status")
        rows.append({"case": c.case_id, "question": c.question, "expected": c.expected,
                     "steps": " → ".join(s.tool for s in c.plan.steps),
                     "pinned": sum(s.args is not None for s in c.plan.steps),
                     "saved answer": c.saved_answer,
                     "planner's answer": r.get("planner_answer"), "planner score": r.get("planner_score"),
                     "saved plan's answer": r.get("pinned_error") or r.get("pinned_answer"),
                     "saved plan score": r.get("pinned_score"),
                     "status": f"{ICONS.get(status, '')} {status}" if status else "not replayed",
                     "note": c.note, "saved": str(c.created or "")})
    return rows


def cases_section(store, version: str, engine: Callable[[], object]) -> None:
    """The saved cases with their last replay; `engine()` gives the query engine when replaying."""
    st.subheader("Saved plan cases")
    cases = data.cases(store)
    if not cases:
        st.caption("No saved cases. On the Ask page, edit a step of a plan under **Debug this plan**, re-run it "
                   "and press **Save as a case**: the question, the edited plan and the expected answer are kept "
                   "here and replayed against later versions of the memory.")
        return
    st.caption("Each case is answered twice: by the planner's own plan and by the saved plan (its pinned steps "
               "as written, the others instantiated again), both scored against the expected answer. "
               "**broken**: the saved plan met the expectation when saved and no longer does — what "
               "`python -m core eval --cases` exits with 3 for.")
    res = st.session_state.get(RESULTS)
    results = {r["case_id"]: r for r in res["rows"]} if res and res["version"] == version else {}
    c1, c2, c3 = st.columns([1, 1, 2])
    if c1.button(f"Replay the {len(cases)} case(s)", key="cases_replay", type="primary"):
        bar = st.progress(0.0, text="Replaying...")
        done = replay_cases(engine(), cases, progress=lambda k, n: bar.progress(
            k / n, text=f"case {k}/{n} · {cases[k - 1].question[:60]}"))
        bar.empty()
        results = {r.case.case_id: r.to_dict() for r in done}
        st.session_state[RESULTS] = {"version": version, "rows": list(results.values())}
    st.dataframe(_case_rows(cases, results), hide_index=True, width="stretch")
    if results:
        counts: dict[str, int] = {}
        for r in results.values():
            counts[r["status"]] = counts.get(r["status"], 0) + 1
        line = " · ".join(f"{ICONS[s]} {s}: {counts[s]}" for s in ICONS if s in counts)
        (st.error if counts.get("broken") else st.success)(f"{len(results)} case(s) replayed: {line}")
    doomed = c2.selectbox("Delete a case", [c.case_id for c in cases], index=None, placeholder="case",
                          key="cases_pick_delete")
    if c3.button("Delete", key="cases_delete", disabled=doomed is None):
        try:
            data.delete_case(store, int(doomed))
        except data.ReadOnlyMemory as e:
            st.error(str(e))
        else:
            st.session_state.pop(RESULTS, None)
            st.rerun()
