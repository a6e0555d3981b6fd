"""The query engine with the real MiniLM encoder and the real core.hierarchy retrieval memory."""
from __future__ import annotations

import math
import statistics

import duckdb
import pytest

from core.config import DEFAULT
from core.planning import QueryEngine
from core.planning.tools import ANALYTIC_TOOLS
from test_planning_data import MARATHON_DAY, SLEEP, WORKOUTS, build_memory


@pytest.fixture(scope="module")
def minilm():
    import torch

    torch.set_num_threads(1)
    from core.encoders.text import MiniLMEncoder, load_minilm

    return MiniLMEncoder(load_minilm())


@pytest.fixture(scope="module")
def real_memory(tmp_path_factory, minilm):
    return build_memory(tmp_path_factory.mktemp("real") / "memory.duckdb", minilm)


@pytest.mark.slow
def test_real_encoder_picks_the_right_columns(real_memory, minilm):
    con = duckdb.connect(str(real_memory))
    from core.hierarchy import Hierarchy

    eng = QueryEngine(con, minilm, DEFAULT, retrieval=Hierarchy(con, minilm, None, DEFAULT))
    cases = [
        ("How much did I sleep on average in March?", "sleep_hours", "avg"),
        ("What was the total distance I covered in February?", "distance_km", "sum"),
        ("How fast was my pulse on average during workouts?", "avg_heart_rate", "avg"),
        ("How long were my workouts on average?", "duration_min", "avg"),
    ]
    for q, col, op in cases:
        t = eng.ask(q)
        s = [x for x in t.steps if x.tool in ANALYTIC_TOOLS][-1]
        assert (s.args["target_column_expression"], s.args["operator"]) == (col, op), (q, s.args, t.plan.notes)
    march = statistics.mean(r["sleep_hours"] for r in SLEEP if r["day"].month == 3)
    assert math.isclose(eng.ask(cases[0][0]).steps[-1].value["value"], march)
    # progressive plan through the real hierarchy's search
    t = eng.ask("How many hours did I sleep on the day I ran the half marathon?")
    assert t.steps[0].units[0].time.startswith(MARATHON_DAY.isoformat())
    assert t.steps[-1].value["value"] == next(r["sleep_hours"] for r in SLEEP if r["day"] == MARATHON_DAY)
    t = eng.ask("What did I name my kitten?")
    assert "Miso" in t.answer.text
    assert eng.ask("What was my cholesterol level in March?").answer.refused
    assert sum(w["activity"] == "swim" for w in WORKOUTS) == eng.ask(
        "How many times did I go swimming?").steps[-1].value["value"]
    con.close()
