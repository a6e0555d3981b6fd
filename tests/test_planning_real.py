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


def _greenhouse_history() -> dict:
    """Two kinds of record: waterings (soil moisture %, water ml) and humidity checks printed as "RH"."""
    sessions = []
    for d in range(24):
        iso = f"2025-06-{d + 1:02d}"
        rounds = [{"round": f"S{d}:R1", "time": f"{iso}T08:00:00",
                   "user": f"Watering done: soil moisture {20 + d} %, water {300 + 10 * d} ml", "assistant": "Noted."}]
        if d % 2 == 0:
            rounds.append({"round": f"S{d}:R2", "time": f"{iso}T18:00:00",
                           "user": f"Humidity check: RH {50 + d} %, temp {21 + d % 3} C", "assistant": "Ok."})
        sessions.append({"session_id": f"S{d}", "date": iso, "dialogues": rounds})
    return {"character_profile": {"name": "Ada"}, "multi_session_dialogues": sessions, "human-annotated QAs": []}


@pytest.mark.slow
def test_a_word_the_rounds_of_one_table_say_beats_a_like_column_elsewhere(tmp_path, minilm):
    from conftest import FakeImageEncoder, built_memory
    from core.query import make_engine

    with built_memory(tmp_path, "greenhouse", _greenhouse_history()) as (store, _):
        eng = make_engine(store, DEFAULT, text_encoder=minilm, image_encoder=FakeImageEncoder())
        t = eng.ask("What was my highest humidity?")
        # "humidity" is said only in the checks' rounds; soil moisture (also in %) is close in meaning only
        assert t.answer.text.startswith(f"{50 + 22} %"), (t.answer.text, t.plan.notes)
        assert eng.ask("What was my lowest humidity?").answer.text.startswith("50 %")
        # "temp" starts "tempering" as written (its lemma "temper" is another word): the column is close in
        # meaning, and "chocolate", which nothing in the memory mentions, still says it is some other thing
        t = eng.ask("What was my average chocolate tempering?")
        assert t.answer.refused and any("chocolate" in n for n in t.plan.notes), (t.answer.text, t.plan.notes)
        assert eng.ask("What was my average temp?").answer.text.startswith("22 °C"), t.plan.notes


@pytest.mark.slow
def test_the_words_of_a_conditions_quantity_do_not_name_the_measured_one(tmp_path, minilm):
    # "puzzle rating" is the condition's; "Puzzles." (solved, joined from a second screen) shares its word and
    # MiniLM finds it closest to the whole question: the time the sessions took is what is averaged
    from test_planning_general import PUZZLE_RUNS, PUZZLE_SCREENS, build_general_memory

    con = duckdb.connect(str(build_general_memory(tmp_path / "memory.duckdb", minilm, PUZZLE_SCREENS)))
    eng = QueryEngine(con, minilm, DEFAULT)
    t = eng.ask("What was my average time on puzzle sessions with puzzle rating above 1800?")
    s = [x for x in t.steps if x.tool in ANALYTIC_TOOLS][-1]
    want = [r["duration"] for r in PUZZLE_RUNS if r["puzzle_rating"] > 1800]
    assert s.args["target_column_expression"] == "duration", (s.args, t.plan.notes)
    assert math.isclose(s.value["value"], sum(want) / len(want))
    con.close()
