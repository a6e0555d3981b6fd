"""The rule-based planner and the engine over the fixture memory: intents, progressive plans, ablations, traces."""
from __future__ import annotations

import json
import math
import statistics
from datetime import date, timedelta

import duckdb
import pytest

from core.config import DEFAULT
from core.errors import InputError
from core.planning import ABLATIONS, QueryEngine, Trace
from core.planning.tools import ANALYTIC_TOOLS, RETRIEVAL_TOOLS
from test_planning_data import MARATHON_DAY, SLEEP, WORKOUTS, memory_path  # noqa: F401

NOW = max(max(r["day"] for r in SLEEP), max(w["day"] for w in WORKOUTS))


@pytest.fixture
def engine(memory_path, embedder):
    con = duckdb.connect(str(memory_path))
    yield QueryEngine(con, embedder, DEFAULT)
    con.close()


def analytic_step(trace):
    steps = [s for s in trace.steps if s.tool in ANALYTIC_TOOLS and s.status == "ok"]
    assert steps, (trace.plan, [(s.tool, s.status, s.error, s.summary) for s in trace.steps])
    return steps[-1]


def rng(rows, start, end):
    return [r for r in rows if start <= r["day"] <= end]


def filters_of(step):
    return {(f["column"], f["op"]): f["value"] for f in
            (step.args.get("optional_column_filters") or step.args.get("column_filters") or [])}


MAR = (date(2026, 3, 1), date(2026, 3, 31))
FEB = (date(2026, 2, 1), date(2026, 2, 28))


@pytest.mark.parametrize("question,op,column,window,rows,extra", [
    ("How many hours did I sleep on average in March?", "avg", "sleep_hours", MAR, SLEEP, {}),
    ("On average, how long did I sleep during February?", "avg", "sleep_hours", FEB, SLEEP, {}),
    ("What's my typical heart rate?", "avg", "avg_heart_rate", None, WORKOUTS, {}),
    ("What was the total distance I covered in the first two weeks of February?", "sum", "distance_km",
     (date(2026, 2, 1), date(2026, 2, 14)), WORKOUTS, {}),
    ("How far did I run altogether last month?", "sum", "distance_km", MAR, WORKOUTS, {"activity": "run"}),
    ("What was my most recent heart rate?", "latest", "avg_heart_rate", None, WORKOUTS, {}),
    ("What were my first recorded sleep hours?", "first", "sleep_hours", None, SLEEP, {}),
    ("How has my sleep changed over time?", "change", "sleep_hours", None, SLEEP, {}),
    ("Is my heart rate trending up or down since February?", "change", "avg_heart_rate", (date(2026, 2, 1), NOW),
     WORKOUTS, {}),
])
def test_compute_intents(engine, question, op, column, window, rows, extra):
    t = engine.ask(question)
    s = analytic_step(t)
    assert (s.tool, s.args["operator"], s.args["target_column_expression"]) == ("Compute", op, column)
    scope = rng(rows, *window) if window else rows
    scope = [r for r in scope if all(r[k] == v for k, v in extra.items()) and r[column] is not None]
    vals = [r[column] for r in scope]
    expected = {"avg": statistics.mean, "sum": sum, "latest": lambda v: v[-1], "first": lambda v: v[0],
                "change": lambda v: v[-1] - v[0]}[op](vals)
    assert math.isclose(s.value["value"], expected, rel_tol=1e-9), (question, s.args)
    if window:
        assert filters_of(s)[("time", "between")] == [window[0].isoformat(), window[1].isoformat()]
    assert t.answer.kind == "computed" and not t.answer.refused
    shown = f"{expected:.2f}".rstrip("0").rstrip(".")
    assert shown.lstrip("-") in t.answer.text, t.answer.text


@pytest.mark.parametrize("question,column,order", [
    ("Which day did I sleep the most?", "sleep_hours", "desc"),
    ("On which date was my heart rate lowest?", "avg_heart_rate", "asc"),
    ("What was my longest workout?", "duration_min", "desc"),
])
def test_extremes_answer_with_the_date(engine, question, column, order):
    t = engine.ask(question)
    s = analytic_step(t)
    assert (s.tool, s.args["target_column_expression"], s.args["order"]) == ("Rank", column, order)
    rows = SLEEP if column == "sleep_hours" else WORKOUTS
    best = sorted(rows, key=lambda r: ((-1 if order == "desc" else 1) * r[column], r["day"]))[0]
    assert s.units[0].rounds == (best["round_id"],)
    assert f"{best['day']:%B} {best['day'].day}, {best['day'].year}" in t.answer.text


@pytest.mark.parametrize("question,expected", [
    ("How many times did I go swimming?", lambda: sum(w["activity"] == "swim" for w in WORKOUTS)),
    ("How often did I do yoga in March?",
     lambda: sum(w["activity"] == "yoga" for w in rng(WORKOUTS, *MAR))),
    ("How many days did I sleep less than 6 hours?", lambda: sum(r["sleep_hours"] < 6 for r in SLEEP)),
    ("How many workouts did I log in February?", lambda: len(rng(WORKOUTS, *FEB))),
])
def test_counts(engine, question, expected):
    t = engine.ask(question)
    s = analytic_step(t)
    assert s.args["operator"] == "count"
    assert s.value["value"] == expected()
    assert t.answer.text.startswith(str(expected()))


def test_conditions_on_another_column(engine):
    t = engine.ask("What was my average heart rate on runs longer than 8 km?")
    s = analytic_step(t)
    f = filters_of(s)
    assert f[("distance_km", ">")] == 8.0 and f[("activity", "=")] == "run"
    want = [w["avg_heart_rate"] for w in WORKOUTS if w["activity"] == "run" and w["distance_km"] > 8]
    assert math.isclose(s.value["value"], statistics.mean(want))
    t = engine.ask("Which days did I sleep more than 9 hours?")
    s = analytic_step(t)
    assert s.tool == "Filter" and s.n_matched == sum(r["sleep_hours"] > 9 for r in SLEEP)
    assert {u.rounds[0] for u in s.units} <= {r["round_id"] for r in SLEEP if r["sleep_hours"] > 9}


def test_on_the_day_i_is_progressive(engine):
    t = engine.ask("How many hours did I sleep on the day I ran the half marathon?")
    assert [s.tool for s in t.steps] == ["EventLocate", "Compute"]
    loc, comp = t.steps
    assert loc.units[0].time.startswith(MARATHON_DAY.isoformat())
    # step 2's time filter is the date step 1 found
    assert filters_of(comp)[("time", "between")] == [MARATHON_DAY.isoformat()] * 2
    want = next(r["sleep_hours"] for r in SLEEP if r["day"] == MARATHON_DAY)
    assert comp.value["value"] == want
    assert f"{want:g}" in t.answer.text
    assert t.budget_left == DEFAULT.evidence_budget - len(loc.units) - 1  # the candidate events + 1 result
    # the day after / since phrasings shift the window
    t = engine.ask("What was my average sleep since I started my new job at the bakery?")
    comp = analytic_step(t)
    lo, hi = filters_of(comp)[("time", "between")]
    assert lo == "2026-04-06" and hi == NOW.isoformat()
    t = engine.ask("How long did I sleep the day after my sister's wedding?")
    assert filters_of(analytic_step(t))[("time", "between")] == ["2026-02-22", "2026-02-22"]


def test_no_progressive_loses_the_event_constraint(engine):
    t = engine.ask("How many hours did I sleep on the day I ran the half marathon?", ablation="no-progressive")
    comp = analytic_step(t)
    assert ("time", "between") not in filters_of(comp)
    assert any("no-progressive" in n for n in comp.notes)


@pytest.mark.parametrize("question", [
    "What was my blood pressure in March?",
    "Who won the football match last week?",
    "How much did I sleep on the day I climbed Mount Everest?",
])
def test_refusal_when_nothing_supports_an_answer(engine, question):
    t = engine.ask(question)
    assert t.answer.refused and t.answer.text.startswith("Not mentioned"), (t.answer, t.plan.notes)


def test_no_rows_in_scope_is_a_refusal(engine):
    t = engine.ask("What was my average sleep hours in June?")
    assert analytic_step(t).value["n_rows"] == 0
    assert t.answer.refused


def test_plain_retrieval(engine):
    t = engine.ask("What is the name of my kitten?")
    assert [s.tool for s in t.steps] == ["SemanticMatch"]
    assert "Miso" in t.answer.text and t.answer.kind == "extractive"
    assert t.answer.rounds and t.answer.rounds[0] in t.evidence_rounds
    t = engine.ask("When did my sister get married?")
    assert "February 21, 2026" in t.answer.text


def test_trace_json_round_trip(engine):
    for q in ("How many hours did I sleep on the day I ran the half marathon?", "What is the name of my kitten?",
              "What was my blood pressure?", "Which days did I sleep more than 9 hours?"):
        t = engine.ask(q)
        d = json.loads(t.to_json())
        assert Trace.from_dict(d) == t
        assert d["context"] and {"cos", "bm25", "score"} <= set(d["context"][0])
        assert all("budget_after" in s and "units" in s for s in d["steps"])


def test_ablations(engine):
    q = "How many hours did I sleep on average in March?"
    assert {s.tool for s in engine.ask(q, ablation="no-analytic").steps} <= set(RETRIEVAL_TOOLS)
    t = engine.ask(q, ablation="no-retrieval")
    assert {s.tool for s in t.steps} <= set(ANALYTIC_TOOLS)
    assert all(c.kind == "table" for c in t.context)
    t = engine.ask("How many hours did I sleep on the day I ran the half marathon?", ablation="no-retrieval")
    assert "EventLocate" not in [s.tool for s in t.steps]
    t = engine.ask(q, ablation="rag")
    assert [s.tool for s in t.steps] == ["SemanticMatch"] and len(t.steps[0].units) == 10
    t = engine.ask(q, ablation="no-context")
    assert all(c.selected for c in t.context) and not any(c.selected for c in engine.ask(q).context
                                                          if c.kind == "episode" and c.score < -1)
    n_ep = sum(c.kind == "episode" for c in t.context)
    assert n_ep > DEFAULT.k_epi
    for a in ABLATIONS:
        assert engine.ask(q, ablation=a).ablation == a
    with pytest.raises(InputError, match="ablation"):
        engine.ask(q, ablation="no-planning")
    with pytest.raises(InputError, match="empty"):
        engine.ask("   ")


def test_step_api_matches_ask(engine):
    q = "How many hours did I sleep on the day I ran the half marathon?"
    st = engine.start(q)
    assert st.records == () and len(st.plan.steps) == 2
    st1 = engine.step(st)
    assert len(st1.records) == 1 and st1.records[0].tool == "EventLocate" and st.records == ()
    st2 = engine.step(st1)
    assert st2.done and engine.step(st2) is st2
    t = engine.finish(st2)
    assert t.answer == engine.ask(q).answer


def test_planning_context_scores_and_cache(memory_path, embedder):
    con = duckdb.connect(str(memory_path))
    cfg = DEFAULT.with_(k_epi=2)
    eng = QueryEngine(con, embedder, cfg)
    t = eng.ask("average sleep hours in March")
    tables = [c for c in t.context if c.kind == "table"]
    eps = [c for c in t.context if c.kind == "episode"]
    assert tables[0].name == "sleep_log" and tables[0].score >= tables[1].score
    assert sum(c.selected for c in eps) == 2
    for c in t.context:
        assert math.isclose(c.score, 0.7 * c.cos + 0.3 * c.bm25_norm, abs_tol=1e-9)
    assert max(c.bm25_norm for c in t.context) == 1.0
    # metadata texts are embedded once; a changed table is re-read
    calls = len(embedder.calls)
    eng.ask("average sleep hours in April")
    new_texts = [x for call in embedder.calls[calls:] for x in call]
    assert not any(x.startswith("table sleep_log") for x in new_texts)
    con.execute("INSERT INTO sleep_log VALUES ('S999:R1', 999, TIMESTAMP '2026-04-30 07:00', NULL, 12.0, 60, 'good')")
    t = eng.ask("What was the maximum sleep hours?")
    assert analytic_step(t).value["values"][0] == 12.0
    con.close()


def test_budget_and_step_limits(memory_path, embedder):
    con = duckdb.connect(str(memory_path))
    eng = QueryEngine(con, embedder, DEFAULT.with_(evidence_budget=2, max_steps=1))
    t = eng.ask("What is the name of my kitten?")
    assert len(t.evidence) == 2 and t.budget_left == 0
    t = eng.ask("How many hours did I sleep on the day I ran the half marathon?")
    assert len(t.steps) == 1 and any("cut" in n for n in t.plan.notes)
    con.close()


def test_events_use_rounds_when_no_hierarchy(memory_path, embedder):
    con = duckdb.connect(str(memory_path))
    con.execute("DELETE FROM nodes")
    t = QueryEngine(con, embedder, DEFAULT).ask("What is the name of my kitten?")
    assert "Miso" in t.answer.text
    assert t.steps[0].units[0].unit_id.startswith("round:")
    con.close()


def test_history_now_is_latest_round(engine):
    t = engine.ask("What was my average heart rate last week?")
    monday = NOW - timedelta(days=NOW.weekday())
    # "now" is the latest round; on a Sunday the week it ends is complete and is "last week"
    want = [monday.isoformat(), NOW.isoformat()] if NOW.weekday() == 6 else [
        (monday - timedelta(days=7)).isoformat(), (monday - timedelta(days=1)).isoformat()]
    assert filters_of(analytic_step(t))[("time", "between")] == want
