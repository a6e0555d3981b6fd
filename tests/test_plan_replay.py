"""Debugging a plan: edited steps re-run from a step, validated like planner output, compared, kept as cases.

Expected values come from the fixture's own rows (test_planning_data), never from the engine."""
from __future__ import annotations

import json
import statistics
import subprocess
import sys
from datetime import date

import duckdb
import pytest

from conftest import ROOT
from core.cases import list_cases, replay_cases, save_case, scorer
from core.config import DEFAULT
from core.errors import InputError
from core.planning import QueryEngine
from core.planning.replay import EditedPlan, StepEdit, check_plan, compare, replay
from test_planning_data import MARATHON_DAY, SLEEP, checksum, memory_path  # noqa: F401

AVG_MARCH = "How many hours did I sleep on average in March?"
MARATHON = "How many hours did I sleep on the day I ran the half marathon?"


@pytest.fixture
def engine(memory_path, embedder):
    con = duckdb.connect(str(memory_path))
    yield QueryEngine(con, embedder, DEFAULT)
    con.close()


def mean_hours(start: date, end: date) -> float:
    return statistics.mean(r["sleep_hours"] for r in SLEEP if start <= r["day"] <= end)


def between(a: str, b: str) -> list[dict]:
    return [{"column": "time", "op": "between", "value": [a, b]}]


def test_an_edited_filter_changes_the_answer_and_the_comparison_names_it(engine):
    original = engine.ask(AVG_MARCH)
    plan = EditedPlan.from_trace(original)
    assert [s.pinned for s in plan.steps] == [True]
    args = dict(plan.steps[0].args, optional_column_filters=between("2026-02-01", "2026-02-28"))
    edited = replay(engine, plan.edit(0, StepEdit("Compute", plan.steps[0].goal, args)))
    feb = mean_hours(date(2026, 2, 1), date(2026, 2, 28))
    assert edited.steps[0].value["value"] == pytest.approx(feb)
    assert edited.steps[0].planner == "user" and edited.planner == "edited"
    diff = compare(original, edited, gold=f"{feb:.2f} hours", scorer=scorer("number", 0.01))
    assert [c.name for c in diff.steps[0].changes] == ["optional_column_filters"]
    assert diff.answer_changed and diff.score_before == 0.0 and diff.score_after == 1.0
    assert "better" in diff.verdict()
    # the original run, re-run as it was, changes nothing
    same = replay(engine, plan)
    assert compare(original, same).steps[0].changes == () and not compare(original, same).answer_changed


def test_a_swapped_tool_re_runs_with_its_own_arguments(engine):
    plan = EditedPlan.from_trace(engine.ask(AVG_MARCH))
    ranked = plan.edit(0, StepEdit("Rank", "", {"table": "sleep_log", "target_column_expression": "sleep_hours",
                                                 "order": "desc", "result_budget": 2}))
    t = replay(engine, ranked)
    top = sorted((r["sleep_hours"] for r in SLEEP), reverse=True)[:2]
    assert t.steps[0].tool == "Rank" and t.steps[0].status == "ok"
    got = [row[t.steps[0].columns.index("sleep_hours")] for row in t.steps[0].rows]
    assert got == top
    assert f"{top[0]:g}" in t.answer.text


def test_later_steps_are_re_instantiated_from_the_edited_step_unless_pinned(engine):
    original = engine.ask(MARATHON)
    assert [s.tool for s in original.steps] == ["EventLocate", "Compute"]
    assert MARATHON_DAY.isoformat() in json.dumps(original.steps[1].args)
    plan = EditedPlan.from_trace(original)
    moved = plan.edit(0, StepEdit("EventLocate", "", {"query_content": "my sister's wedding at the lake house",
                                                      "result_budget": 3}))
    rerun = replay(engine, moved.rerun_from(0))
    # step 2 was instantiated again from the new step 1: the marathon's day is no longer its constraint
    assert rerun.steps[1].planner == "rules"
    assert MARATHON_DAY.isoformat() not in json.dumps(rerun.steps[1].args)
    # pinned, step 2 keeps the arguments it had
    kept = replay(engine, moved.rerun_from(0, keep_pinned=[1]))
    assert kept.steps[1].planner == "user" and kept.steps[1].args == original.steps[1].args
    assert kept.answer.text == original.answer.text


def test_invalid_edits_list_every_fault_by_step_and_change_nothing(engine, memory_path):
    plan = EditedPlan.from_trace(engine.ask(AVG_MARCH))
    bad = plan.edit(0, StepEdit("Compute", "", {"table": "sleep_log", "target_column_expression": "nope",
                                                "operator": "avg"}))
    bad = bad.insert(1, StepEdit("Frobnicate"))
    bad = bad.insert(2, StepEdit("Filter", "", {"table": "sleep_log'; DROP TABLE sleep_log; --",
                                                "column_filters": []}))
    bad = bad.insert(3, StepEdit("SemanticMatch", "", {"query_content": "x"}))
    faults = check_plan(engine, bad)
    assert any(f.startswith("step 1 (Compute)") and "nope" in f for f in faults)
    assert any(f.startswith("step 2 (Frobnicate)") and "unknown tool" in f for f in faults)
    assert any(f.startswith("step 3 (Filter)") and "not allowed in a name" in f for f in faults)
    assert any("4 steps; at most 3" in f for f in faults)
    before = checksum(engine.con)
    with pytest.raises(InputError, match="step 3"):
        replay(engine, bad)
    assert checksum(engine.con) == before


def test_every_faulty_argument_of_one_step_is_named(engine):
    plan = EditedPlan.from_trace(engine.ask(AVG_MARCH))
    bad = plan.edit(0, StepEdit("Compute", "", {
        "table": "sleep_log", "target_column_expression": "nope", "operator": "median",
        "optional_column_filters": [{"column": "time", "op": "between", "value": ["2026-03-01"]},
                                    {"column": "sleep_hours", "op": ">=", "value": 7},
                                    {"column": "colour", "op": "=", "value": "red"}]}))
    faults = check_plan(engine, bad)
    assert all(f.startswith("step 1 (Compute): ") for f in faults)
    assert len(faults) == 4, faults
    assert any("optional_column_filters[0]" in f and "two values" in f for f in faults)
    assert any("optional_column_filters[2]" in f and "colour" in f for f in faults)
    assert not any("[1]" in f for f in faults)  # the valid filter is not blamed
    assert any("operator 'median'" in f for f in faults) and any("'nope'" in f for f in faults)


def test_a_plan_file_reads_a_trace_and_reports_all_its_faults():
    with pytest.raises(InputError) as e:
        EditedPlan.from_dict({"question": "", "steps": [{"tool": "Zap"}, 5], "ablation": "nope"}, file="p.json")
    msg = str(e.value)
    assert msg.startswith("p.json") and "question" in msg and "'Zap' is not a tool" in msg \
        and "steps[1]" in msg and "ablation" in msg
    d = {"question": "q?", "steps": [{"tool": "Compute", "goal": "g", "args": {}, "status": "skipped"}]}
    assert EditedPlan.from_dict(d).steps[0].args is None  # a step that did not run is instantiated again


def test_cases_replay_and_a_broken_case_is_reported(engine):
    march = mean_hours(date(2026, 3, 1), date(2026, 3, 31))
    original = engine.ask(AVG_MARCH)
    plan = EditedPlan.from_trace(original)
    ok = save_case(engine.con, plan, f"{march:.2f}", saved_answer=original.answer.text, answer_kind="number",
                   tolerance=0.01)
    # a case whose saved plan averaged February: right when saved (its expectation), then the data changes
    feb_plan = plan.edit(0, StepEdit("Compute", "", dict(plan.steps[0].args,
                                                        optional_column_filters=between("2026-02-01", "2026-02-28"))))
    feb = mean_hours(date(2026, 2, 1), date(2026, 2, 28))
    feb_case = save_case(engine.con, feb_plan, f"{feb:.2f}", saved_answer=replay(engine, feb_plan).answer.text,
                         answer_kind="number", tolerance=0.01, note="February")
    assert [c.case_id for c in list_cases(engine.con)] == [ok.case_id, feb_case.case_id]
    results = {r.case.case_id: r for r in replay_cases(engine, list_cases(engine.con))}
    assert results[ok.case_id].status() == "passes"
    assert results[feb_case.case_id].status() == "the planner's own plan fails"  # the planner averages March
    assert not any(r.broke for r in results.values())
    engine.con.execute("UPDATE sleep_log SET sleep_hours = sleep_hours + 3 "
                       "WHERE time BETWEEN '2026-02-01' AND '2026-02-28 23:59'")
    results = {r.case.case_id: r for r in replay_cases(engine, list_cases(engine.con))}
    assert results[feb_case.case_id].broke and not results[ok.case_id].broke
    with pytest.raises(InputError, match="empty"):
        save_case(engine.con, plan, "  ")


def _cli(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "core", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600)


@pytest.mark.slow
def test_cli_runs_a_plan_from_ask_json_and_replays_cases(memory_path, tmp_path, embedder):
    """The real CLI (MiniLM) on the fixture memory: `ask --json` output run again with `ask --plan`, an
    edited file run, a bad file refused with every fault, and `eval --cases` exiting 3 on a broken case."""
    r = _cli("ask", AVG_MARCH, "--store", str(memory_path), "--json")
    assert r.returncode == 0, r.stderr
    trace = json.loads(r.stdout)
    (tmp_path / "t.json").write_text(r.stdout)
    again = _cli("ask", "--plan", str(tmp_path / "t.json"), "--store", str(memory_path), "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["answer"]["text"] == trace["answer"]["text"]
    plan = EditedPlan.from_dict(trace)
    feb = plan.edit(0, StepEdit("Compute", "", dict(plan.steps[0].args,
                                                   optional_column_filters=between("2026-02-01", "2026-02-28"))))
    (tmp_path / "feb.json").write_text(feb.to_json())
    out = _cli("ask", "--plan", str(tmp_path / "feb.json"), "--store", str(memory_path), "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["steps"][0]["value"]["value"] == pytest.approx(
        mean_hours(date(2026, 2, 1), date(2026, 2, 28)))
    (tmp_path / "bad.json").write_text(json.dumps({"question": "q", "steps": [{"tool": "Zap"}, 3]}))
    bad = _cli("ask", "--plan", str(tmp_path / "bad.json"), "--store", str(memory_path))
    assert bad.returncode == 2 and "bad.json" in bad.stderr and "Zap" in bad.stderr and "steps[1]" in bad.stderr
    con = duckdb.connect(str(memory_path))
    try:
        save_case(con, feb, "12 hours", saved_answer="12 hours", answer_kind="number")  # passed when saved
    finally:
        con.close()
    rep = _cli("eval", "--cases", "--store", str(memory_path), "--quiet", "--out", str(tmp_path / "o"))
    assert rep.returncode == 3, rep.stderr
    assert "[broken]" in rep.stdout and json.loads((tmp_path / "o" / "cases.json").read_text())[0]["broke"]
