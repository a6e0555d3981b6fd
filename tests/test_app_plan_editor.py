"""AppTest of the Ask page's plan debugger and the Evaluate page's saved cases (issue 21).

The memory is test_app_pages' 13-round health history (a sleep_log table of 12 scores 80..91), built
per test because saving a case writes to it.
"""
from __future__ import annotations

import json

import pytest

from conftest import FakeImageEncoder, FakeOCR, HashEmbedder
from test_app_pages import fake_models, health_history, page, texts  # noqa: F401  (autouse fixture)

from core.build import BuildDeps, build
from core.config import DEFAULT
from core.extract import RuleExtractor
from core.store import Store

QUESTION = "What was my average sleep score?"  # gold 85.5, the mean of 80..91




@pytest.fixture()
def memory(tmp_path) -> str:
    path = tmp_path / "health.duckdb"
    history, ocr = health_history()
    with Store(path) as s:
        build(s, [history], BuildDeps(HashEmbedder(), FakeImageEncoder(), FakeOCR(ocr), RuleExtractor(DEFAULT)),
              DEFAULT)
    return str(path)


def asked(path: str):
    at = page("ask", path)
    at.run()
    at.text_input(key="ask_q").input(QUESTION).run()
    at.button(key="ask_finish").click().run()
    assert not at.exception
    return at


def test_a_filter_added_to_the_compute_step_changes_the_answer_and_is_highlighted(memory):
    at = asked(memory)
    assert at.selectbox(key="pe_tool_0_0").value == "Compute"
    assert at.text_input(key="pe_target_0_0").value == "sleep_score"
    at.button(key="pe_addf_0_0").click().run()
    at.selectbox(key="pe_fcol_0_0_0").select("sleep_score")
    at.selectbox(key="pe_fop_0_0_0").select(">=")
    at.text_input(key="pe_fval_0_0_0").input("86")
    at.button(key="pe_rerun").click().run()
    assert not at.exception and not at.error
    verdict = " ".join(i.value for i in at.info)
    # 86..91 average 88.5; against the gold 85.5 that is worse
    assert "88.5" in verdict and "worse" in verdict
    assert any("88.5" in s.value for s in at.success)
    changed = [m.value for m in at.markdown if "(changed)" in m.value]
    assert changed and all("optional_column_filters" in m and "sleep_score" in m for m in changed)
    # the attribution is recomputed for the edited run: one bar per evidence unit it used
    at.button(key="pe_why").click().run()
    assert not at.exception and not at.error
    chart = at.get("plotly_chart")[-1]
    bars = [t for t in json.loads(chart.proto.spec)["data"] if t.get("name") == "Shapley value"]
    assert bars and len(bars[0]["x"]) >= 1


def test_swapping_compute_for_rank_reruns_with_the_other_tool(memory):
    at = asked(memory)
    at.selectbox(key="pe_tool_0_0").select("Rank").run()
    assert at.selectbox(key="pe_order_0_0").value == "desc"
    at.button(key="pe_rerun").click().run()
    assert not at.exception and not at.error
    shown = texts(at)
    assert "Step 1 · Rank (tool changed)" in shown
    assert any(s.value.startswith("March 12, 2026 (91)") for s in at.success)  # the best score first


def test_an_invalid_edit_lists_the_validator_fault_and_runs_nothing(memory):
    at = asked(memory)
    at.text_input(key="pe_target_0_0").input("no_such_column")
    at.button(key="pe_addf_0_0").click().run()
    at.selectbox(key="pe_fcol_0_0_0").select("sleep_score")
    at.selectbox(key="pe_fop_0_0_0").select("between")
    at.text_input(key="pe_fval_0_0_0").input("80")  # between needs two values
    at.button(key="pe_rerun").click().run()
    assert not at.exception
    faults = [e.value for e in at.error]
    assert len(faults) >= 2, faults  # every fault, not the first
    assert any("no_such_column" in f and "unknown" in f for f in faults)
    assert all(f.startswith("step 1 (Compute)") for f in faults)
    assert not at.info  # no comparison: nothing was run
    assert "_plan_edited" not in at.session_state


def test_a_hostile_value_is_rejected_with_the_reason_and_the_table_survives(memory):
    at = asked(memory)
    at.text_input(key="pe_target_0_0").input('sleep_score); DROP TABLE sleep_log; --')
    at.button(key="pe_rerun").click().run()
    assert not at.exception
    faults = [e.value for e in at.error]
    assert faults and all(f.startswith("step 1 (Compute)") for f in faults)
    at.text_input(key="pe_target_0_0").input("sleep_score")
    at.button(key="pe_rerun").click().run()
    assert not at.error
    # the table is still there, whole: the re-run answers as the original did
    assert any("did not change the answer" in i.value for i in at.info)


def test_a_saved_case_is_listed_and_replayed_on_the_evaluate_page(memory):
    at = asked(memory)
    at.text_input(key="pe_target_0_0").input("resting_heart_rate")
    at.button(key="pe_rerun").click().run()
    assert at.text_input(key="pe_expected").value == "85.5"  # the memory's gold answer
    at.text_input(key="pe_note").input("heart rate instead")
    at.button(key="pe_save").click().run()
    assert any("Saved as case 1" in s.value for s in at.success)

    ev = page("evaluate", memory)
    ev.run()
    assert not ev.exception
    listed = ev.dataframe[0].value
    assert list(listed["case"]) == [1] and listed.iloc[0]["note"] == "heart rate instead"
    assert listed.iloc[0]["status"] == "not replayed"
    ev.button(key="cases_replay").click().run()
    assert not ev.exception
    row = ev.dataframe[0].value.iloc[0]
    # the planner's own plan answers 85.5; the saved plan averages heart rates (52), which fails
    assert row["planner score"] == 1.0 and row["saved plan score"] == 0.0
    assert "fails" in row["status"] and "broken" not in row["status"]
    ev.selectbox(key="cases_pick_delete").select(1).run()
    ev.button(key="cases_delete").click().run()
    assert not ev.exception
    assert "No saved cases" in texts(ev)


def test_each_ablation_column_says_how_it_compares_with_the_full_system(memory):
    at = asked(memory)
    at.multiselect(key="ask_compare_with").set_value(["rag"])
    at.button(key="ask_compare").click().run()
    assert not at.exception
    lines = [c.value for c in at.caption if c.value.startswith("vs full:")]
    assert len(lines) == 1
    # rag retrieves snippets instead of computing: it cannot give the mean of all twelve
    assert "vs 1.00 (worse)" in lines[0] and "evidence +" in lines[0]


def test_a_step_whose_widgets_streamlit_dropped_shows_the_plan_again_not_the_first_tool(memory):
    # Streamlit forgets a widget's value after a run that did not draw it (a run cut short by the next click);
    # the step's tool then read as the first of the list ("Lookup") and a re-run changed the plan unasked
    from ui import state

    at = asked(memory)
    trace = at.session_state[state.LAST_TRACE]
    at.session_state[state.LAST_TRACE] = None  # a run that draws no editor: its widgets' values are dropped
    at.run()
    at.session_state[state.LAST_TRACE] = trace
    at.run()
    assert not at.exception
    assert at.selectbox(key="pe_tool_0_0").value == "Compute"
    assert at.text_input(key="pe_target_0_0").value == "sleep_score"
    assert at.selectbox(key="pe_table_0_0").value == "sleep_log"
