"""Materialization on a real DuckDB file with observations inserted directly."""
from __future__ import annotations

import json
from datetime import date, datetime, timedelta

import pytest

from core.errors import LLMError
from core.induction import InductionStore, attribute_stream, reinduce
from core.materialize import (
    Materializer,
    populated,
    populates,
    quote,
    reserved_names,
    rule_table_name,
    sanitize,
)
from core.store import Store

SLEEP = ("deep_sleep", "sleep_date", "sleep_duration", "sleep_score")
T0 = datetime(2025, 2, 3, 8, 0)


def add_round(con, order: int, obs: list[tuple], caption: str | None = None) -> str:
    """Insert round S1:R<order> with observations (attribute, raw, number, unit[, image_id])."""
    rid = f"S1:R{order}"
    con.execute(
        "INSERT INTO rounds (round_id, session_id, round_order, index_in_session, time, dialogue, text, "
        "content_hash) VALUES (?, 'S1', ?, ?, ?, '[]', '', 'h')", [rid, order, order, T0 + timedelta(days=order)])
    if caption is not None:
        con.execute("INSERT INTO images (image_id, round_id, position, caption) VALUES (?, ?, 0, ?)",
                    [f"{rid}:I1", rid, caption])
    for seq, o in enumerate(obs):
        attr, raw, num, unit = o[:4]
        image_id = o[4] if len(o) > 4 else None
        kind = "number" if num is not None else "text"
        con.execute(
            "INSERT INTO observations (round_id, seq, attribute, raw_value, number, unit, value_kind, source, "
            "image_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [rid, seq, attr, raw, num, unit, kind, "ocr" if image_id else "dialogue", image_id])
    return rid


def sleep_obs(i: int) -> list[tuple]:
    return [
        ("sleep_duration", f"{6 + i * 0.5} h", 6 + i * 0.5, "h"),
        ("deep_sleep", f"{60 + i} min", 60.0 + i, "min", f"S1:R{i}:I1"),
        ("sleep_score", str(70 + i), 70.0 + i, None),
        ("sleep_date", (date(2025, 2, 1) + timedelta(days=i)).isoformat(), None, None),
    ]


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "mem.duckdb") as s:
        yield s


def columns(con, table):
    return dict(con.execute(
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ? "
        "ORDER BY ordinal_position", [table]).fetchall())


def test_population_rule():
    schema = {"a", "b", "c", "d"}
    assert populates({"a", "b"}, schema)  # half of the schema
    assert populates({"a"}, schema)  # everything the round reports is in the schema
    assert not populates({"a", "x", "y"}, schema)  # one stray shared attribute
    assert populates({"a", "x"}, schema)  # half of the round
    assert not populates({"x"}, schema)
    assert not populates(set(), schema)
    # a date says when a record was made, not what it holds: alone it makes no row
    assert populates({"d"}, schema) and not populates({"d"}, schema, when={"d"})
    assert populates({"a", "d"}, schema, when={"d"})
    assert populated({"d"}, {1: schema, 2: {"d", "e"}}, when={"d"}) == set()


def test_a_round_populates_the_tables_that_take_most_of_what_it_reports():
    tutor, listening = {"cost", "duration", "tutor"}, {"duration", "episodes", "language"}
    assert populated({"duration", "episodes"}, {1: tutor, 2: listening}) == {2}
    assert populated({"duration", "cost"}, {1: tutor, 2: listening}) == {1}
    assert populated({"duration"}, {1: tutor, 2: listening}) == {1, 2}  # nothing tells them apart
    # two records in one round: each table takes its own
    assert populated({"duration", "cost", "episodes", "language"}, {1: tutor, 2: listening}) == {1, 2}
    # the same two fields of two tables: the one whose fields they cover the larger share of
    oven, dough = {"item", "flour", "duration", "temp"}, {"duration", "temp", "water"}
    assert populated({"duration", "temp"}, {1: oven, 2: dough}) == {2}
    assert populated({"duration", "temp", "item"}, {1: oven, 2: dough}) == {1}


def test_a_table_made_later_takes_the_rounds_it_describes_better_from_an_older_one(store):
    con = store.con
    for i in range(1, 4):  # tutor sessions: duration, cost
        add_round(con, i, [("duration", f"{50 + i} min", 50.0 + i, "min"), ("cost", f"{20 + i}", 20.0 + i, "$")])
    for i in range(4, 7):  # listening: duration, episodes
        add_round(con, i, [("duration", f"{30 + i} min", 30.0 + i, "min"), ("episodes", str(i), float(i), None)])
    m = Materializer(con)
    tutor = m.apply(1, ("cost", "duration"), 3).schema.table_name
    assert m.add_rounds([(i, f"S1:R{i}") for i in range(4, 7)]) == {f"S1:R{i}": (tutor,) for i in range(4, 7)}
    listening = m.apply(2, ("duration", "episodes"), 6).schema.table_name
    rows = {t: [r[0] for r in con.execute(f"SELECT source FROM {t} ORDER BY round_order").fetchall()]
            for t in (tutor, listening)}
    assert rows == {tutor: ["S1:R1", "S1:R2", "S1:R3"], listening: ["S1:R4", "S1:R5", "S1:R6"]}
    rid = add_round(con, 7, [("duration", "40 min", 40.0, "min"), ("episodes", "2", 2.0, None)])
    assert m.add_round(7, rid) == (listening,)


def test_table_created_typed_with_units_and_backfilled(store):
    con = store.con
    for i in range(1, 5):
        add_round(con, i, sleep_obs(i), caption=f"sleep app screenshot {i}")
    add_round(con, 5, [("calories", "300", 300.0, "kcal")])
    m = Materializer(con)
    ch = m.apply(1, SLEEP, 4)
    assert ch.action == "created" and ch.n_rows == 4
    name = ch.schema.table_name
    assert name == "sleep_log"
    cols = columns(con, name)
    assert list(cols)[:4] == ["source", "round_order", "time", "captions"]
    assert cols["sleep_duration"] == "DOUBLE" and cols["deep_sleep"] == "DOUBLE"
    assert cols["sleep_score"] == "DOUBLE" and cols["sleep_date"] == "DATE"
    assert cols["round_order"] == "INTEGER" and cols["time"] == "TIMESTAMP"
    meta = {c["name"]: c for c in json.loads(con.execute(
        "SELECT columns FROM schemas WHERE schema_id = 1").fetchone()[0])}
    assert meta["sleep_duration"]["unit"] == "h" and meta["deep_sleep"]["unit"] == "min"
    assert meta["sleep_date"]["unit"] is None
    rows = con.execute(f"SELECT source, round_order, time, captions, sleep_duration, sleep_date FROM {name} "
                       "ORDER BY round_order").fetchall()
    assert [r[0] for r in rows] == ["S1:R1", "S1:R2", "S1:R3", "S1:R4"]
    assert rows[1][2] == T0 + timedelta(days=2) and rows[1][3] == "sleep app screenshot 2"
    assert rows[1][4] == 7.0 and rows[1][5] == date(2025, 2, 3)
    view = con.execute("SELECT table_name, description, n_rows FROM memory_tables").fetchall()
    assert view[0][0] == name and view[0][2] == 4
    desc = view[0][1]
    assert "sleep duration (h)" in desc and "deep sleep (min)" in desc
    # plain language for people: what a row is and where its values were read, no internal terms
    assert desc.startswith("One row per sleep record:") and "images and text" in desc
    assert "round" not in desc and "schema" not in desc


def test_add_round_and_view_count_live(store):
    con = store.con
    for i in range(1, 5):
        add_round(con, i, sleep_obs(i))
    m = Materializer(con)
    m.apply(1, SLEEP, 4)
    rid = add_round(con, 5, sleep_obs(5)[:1])  # only the duration: all it reports is in the schema
    assert m.add_round(5, rid) == ("sleep_log",)
    assert m.add_round(5, rid) == ("sleep_log",)  # idempotent
    rid6 = add_round(con, 6, [("sleep_duration", "7 h", 7.0, "h"), ("calories", "1", 1.0, None),
                              ("workout_minutes", "30", 30.0, "min")])
    assert m.add_round(6, rid6) == ()  # a stray shared attribute does not pollute the table
    assert con.execute("SELECT n_rows FROM memory_tables WHERE table_name = 'sleep_log'").fetchone()[0] == 5
    row = con.execute("SELECT sleep_duration, deep_sleep FROM sleep_log WHERE source = ?", [rid]).fetchone()
    assert row == (8.5, None)


def test_every_cell_traces_to_its_observation(store):
    con = store.con
    for i in range(1, 5):
        add_round(con, i, sleep_obs(i))
    # a round observing one attribute twice: the first observation wins
    add_round(con, 5, sleep_obs(5) + [("sleep_score", "99", 99.0, None)])
    m = Materializer(con)
    m.apply(1, SLEEP, 5)
    rows = con.execute("SELECT source, deep_sleep, sleep_score, sleep_duration, _obs FROM sleep_log").fetchall()
    assert len(rows) == 5
    for source, deep, score, dur, prov in rows:
        prov = json.loads(prov)
        for col, val in (("deep_sleep", deep), ("sleep_score", score), ("sleep_duration", dur)):
            attr, number, image_id = con.execute(
                "SELECT attribute, number, image_id FROM observations WHERE round_id = ? AND seq = ?",
                [source, prov[col]]).fetchone()
            assert attr == col and number == val
            if col == "deep_sleep":
                assert image_id == f"{source}:I1"
    assert con.execute("SELECT sleep_score FROM sleep_log WHERE source = 'S1:R5'").fetchone()[0] == 75.0


def test_evolution_adds_columns_and_refills(store):
    con = store.con
    for i in range(1, 5):
        add_round(con, i, sleep_obs(i))
    m = Materializer(con)
    m.apply(1, SLEEP[:3], 4)  # deep_sleep, sleep_date, sleep_duration
    # rounds 5..8 report the schema plus resting heart rate; round 9 only heart rate + score
    for i in range(5, 9):
        add_round(con, i, sleep_obs(i) + [("resting_heart_rate", str(50 + i), 50.0 + i, "bpm")])
        m.add_round(i, f"S1:R{i}")
    add_round(con, 9, [("resting_heart_rate", "58", 58.0, "bpm"), ("sleep_score", "80", 80.0, None)])
    assert m.add_round(9, "S1:R9") == ()  # not yet: none of its attributes is in the schema
    before = con.execute("SELECT count(*) FROM sleep_log").fetchone()[0]
    ch = m.apply(1, SLEEP + ("resting_heart_rate",), 9)
    assert ch.action == "evolved" and set(ch.added_columns) == {"resting_heart_rate", "sleep_score"}
    cols = columns(con, "sleep_log")
    assert cols["resting_heart_rate"] == "DOUBLE" and cols["sleep_score"] == "DOUBLE"
    assert ch.schema.table_name == "sleep_log"  # the name survives evolution
    # rows refilled: old rows got the new values, round 9 now matches (2 of its 2 attributes)
    assert con.execute("SELECT count(*) FROM sleep_log").fetchone()[0] == before + 1
    assert con.execute("SELECT resting_heart_rate FROM sleep_log WHERE source = 'S1:R6'").fetchone()[0] == 56.0
    assert con.execute("SELECT sleep_score FROM sleep_log WHERE source = 'S1:R2'").fetchone()[0] == 72.0
    meta = {c["name"]: c for c in json.loads(con.execute(
        "SELECT columns FROM schemas WHERE schema_id = 1").fetchone()[0])}
    assert meta["resting_heart_rate"]["unit"] == "bpm"
    assert json.loads(con.execute("SELECT attributes FROM schemas WHERE schema_id = 1").fetchone()[0]) == sorted(
        SLEEP + ("resting_heart_rate",))
    assert m.apply(1, SLEEP + ("resting_heart_rate",), 9).action == "unchanged"


def test_names_sensible_unique_and_never_internal(store):
    assert rule_table_name(["sleep_duration", "deep_sleep", "sleep_score", "resting_heart_rate"]) == "sleep_log"
    assert rule_table_name(["workout_minutes", "workout_calories", "avg_heart_rate"]) == "workout_log"
    assert rule_table_name(["card_played", "card_rank", "play_count", "opponent"]) == "card_play_log"
    assert rule_table_name(["blood_pressure_systolic", "blood_pressure_diastolic", "pulse"]) == "blood_pressure_log"
    assert rule_table_name(["evening_drift", "time_range"]) == "evening_drift_log"
    assert sanitize("9 Lives!") == "t_9_lives"
    assert {"rounds", "images", "nodes", "observations", "schemas", "memory_tables"} <= reserved_names()
    con = store.con
    con.execute("CREATE TABLE sleep_log(x INTEGER)")  # somebody else's table
    for i in range(1, 5):
        add_round(con, i, sleep_obs(i))
    m = Materializer(con)
    assert m.apply(1, SLEEP, 4).schema.table_name == "sleep_log_2"
    # a metadata source proposing an internal table's name is refused
    m2 = Materializer(con, metadata_fn=lambda attrs, samples: {"name": "nodes", "description": "x", "columns": []})
    ch2 = m2.apply(2, ("rounds_a", "rounds_b"), 4)
    assert ch2.schema.table_name == "round_log" and any("nodes" in f for f in ch2.fallbacks)
    m = Materializer(con)  # a fresh materializer sees the tables created by the other one
    # attribute names that clash with the contract columns get their own column
    add_round(con, 5, [("time", "07:30", None, None), ("source", "watch", None, None)])
    ch = m.apply(3, ("source", "time"), 5)
    assert {c.name for c in ch.schema.columns} == {"source_value", "time_value"}
    assert con.execute(f"SELECT time_value FROM {quote(ch.schema.table_name)}").fetchall() == [("07:30",)]
    names = [r[0] for r in con.execute("SELECT table_name FROM memory_tables ORDER BY table_name").fetchall()]
    assert len(names) == 3 and "sleep_log" not in names


def test_quote_rejects_bad_identifiers():
    assert quote("sleep_log") == '"sleep_log"'
    for bad in ('x"; DROP TABLE rounds; --', "Sleep", "1abc", "", "a" * 64, "_obs"):
        with pytest.raises(ValueError, match="invalid identifier"):
            quote(bad)


def test_llm_metadata_validated(store, queued_llm):
    con = store.con
    for i in range(1, 5):
        add_round(con, i, sleep_obs(i))
    queued_llm.replies.append({
        "name": "nightly_sleep",
        "description": "Nightly sleep records from the watch.",
        "columns": [
            {"name": "sleep_duration", "type": "DOUBLE", "unit": "hours"},
            {"name": "deep_sleep", "type": "DATE", "unit": None},  # not supported by its values
            {"name": "sleep_score", "type": "VARCHAR", "unit": "points"},  # numbers as text: refused
            {"name": "sleep_date", "type": "DATE", "unit": None},
        ],
    })
    m = Materializer(con, llm=queued_llm)
    ch = m.apply(1, SLEEP, 4)
    assert queued_llm.calls[0]["task"] == "table_metadata"
    assert ch.schema.table_name == "nightly_sleep"
    assert ch.schema.description == "Nightly sleep records from the watch."
    cols = columns(con, "nightly_sleep")
    assert cols["deep_sleep"] == "DOUBLE"  # the invalid LLM type fell back to the inferred one
    # a column of numbers stays one (as text its values could not be averaged), and its numbers are stored
    assert cols["sleep_score"] == "DOUBLE" and cols["sleep_date"] == "DATE"
    assert con.execute("SELECT avg(sleep_score) FROM nightly_sleep").fetchone()[0] == pytest.approx(72.5)
    units = {c.name: c.unit for c in ch.schema.columns}
    # the values' own unit stands (they are stored in it); the model's names one only where they had none
    assert units["sleep_duration"] == "h" and units["sleep_score"] == "points"
    assert any("deep_sleep" in f for f in ch.fallbacks) and any("sleep_score" in f for f in ch.fallbacks)


def test_llm_bad_name_and_failure_fall_back(store, queued_llm):
    con = store.con
    for i in range(1, 5):
        add_round(con, i, sleep_obs(i) + [("steps", str(1000 * i), 1000.0 * i, None),
                                          ("step_goal", "8000", 8000.0, None)])
    queued_llm.replies += [
        {"name": "rounds", "description": "", "columns": []},
        LLMError("endpoint down"),
    ]
    m = Materializer(con, llm=queued_llm)
    a = m.apply(1, SLEEP, 4)
    assert a.schema.table_name == "sleep_log" and "sleep duration" in a.schema.description
    assert any("rounds" in f for f in a.fallbacks)
    b = m.apply(2, ("step_goal", "steps"), 4)
    assert b.schema.table_name == "step_log"
    assert any("endpoint down" in f for f in b.fallbacks)


def test_reopen_continues(tmp_path):
    path = tmp_path / "m.duckdb"
    with Store(path) as s:
        for i in range(1, 5):
            add_round(s.con, i, sleep_obs(i))
        Materializer(s.con).apply(1, SLEEP, 4)
    with Store(path) as s:
        m = Materializer(s.con)
        assert [t.table_name for t in m.tables()] == ["sleep_log"]
        add_round(s.con, 5, sleep_obs(5))
        assert m.add_round(5, "S1:R5") == ("sleep_log",)
        assert s.con.execute("SELECT n_rows FROM memory_tables").fetchone()[0] == 5


def test_pipeline_with_induction(tmp_path):
    """Induction events drive the materializer, round by round, inside transactions;
    the final table holds exactly the rounds the population rule selects."""
    stream = []
    for i in range(1, 31):
        if i % 3 == 0:
            obs = [("workout_calories", "200", 200.0, "kcal"), ("workout_minutes", "30", 30.0, "min")]
        else:
            obs = sleep_obs(i)[:3]
            if i > 4:
                obs.append(("resting_heart_rate", "55", 55.0, "bpm"))
        stream.append((i, obs))
    with Store(tmp_path / "m.duckdb") as s:
        ind = InductionStore(s.con)
        m = Materializer(s.con)
        for order, obs in stream:
            with s.transaction():
                rid = add_round(s.con, order, obs)
                u = ind.update(order, {o[0] for o in obs})
                for ev in u.events:
                    if ev.kind in ("discovered", "evolved"):
                        m.apply(ev.schema_id, ev.pattern, order)
                m.add_round(order, rid)
        tables = {t.table_name: t for t in m.tables()}
        assert set(tables) == {"sleep_log", "workout_log"}
        assert "resting_heart_rate" in tables["sleep_log"].attributes
        for t in tables.values():
            expected = sorted(f"S1:R{o}" for o, obs in stream if populates({x[0] for x in obs}, t.attributes))
            got = sorted(r[0] for r in s.con.execute(f"SELECT source FROM {quote(t.table_name)}").fetchall())
            assert got == expected
        view = dict((r[0], r[2]) for r in s.con.execute("SELECT * FROM memory_tables").fetchall())
        assert view == {"sleep_log": 20, "workout_log": 10}
        # the stored observations replay to the same schemas (what the app's sliders use)
        assert reinduce(attribute_stream(s), ind.config).schema_map() == ind.inducer.schemas


# ---------------------------------------------------------------------- aliases, text values, names from words
def test_alias_of_names_one_column_with_a_word_more_or_less():
    from core.materialize import alias_of

    glucose = ["average_glucose", "date", "time_in_range", "variability"]
    assert alias_of("glucose_variability", glucose) == "variability"
    assert alias_of("score", ["deep_sleep", "sleep_duration", "sleep_score"]) == "sleep_score"
    assert alias_of("heart_rate", ["average_heart_rate", "resting_heart_rate"]) is None  # ambiguous
    assert alias_of("variability", glucose) is None  # a column itself
    assert alias_of("steps", glucose) is None


def test_alias_fills_an_empty_cell_of_its_round_only(store):
    con = store.con
    attrs = ("average_glucose", "time_in_range", "variability")
    add_round(con, 1, [("average_glucose", "141", 141.0, "mg/dL"), ("time_in_range", "67%", 67.0, "%"),
                       ("variability", "28.1%", 28.1, "%")])
    add_round(con, 2, [("average_glucose", "143", 143.0, "mg/dL"), ("time_in_range", "70%", 70.0, "%"),
                       ("glucose_variability", "31.9%", 31.9, "%")])
    add_round(con, 3, [("average_glucose", "150", 150.0, "mg/dL"), ("variability", "30%", 30.0, "%"),
                       ("glucose_variability", "99%", 99.0, "%")])
    name = Materializer(con).apply(1, attrs, 3).schema.table_name
    got = dict(con.execute(f'SELECT source, variability FROM "{name}"').fetchall())
    assert got == {"S1:R1": 28.1, "S1:R2": 31.9, "S1:R3": 30.0}


def test_text_columns_store_the_normalized_value(store):
    con = store.con
    for i, act in enumerate(["Bike", "Ride", "run"], start=1):
        add_round(con, i, [("activity", act, None, None), ("distance", "10 km", 10.0, "km")])
        con.execute("UPDATE observations SET text_value = ? WHERE round_id = ? AND attribute = 'activity'",
                    [{"Bike": "ride", "Ride": "ride", "run": "run"}[act], f"S1:R{i}"])
    name = Materializer(con).apply(1, ("activity", "distance"), 3).schema.table_name
    assert sorted(v for (v,) in con.execute(f'SELECT activity FROM "{name}"').fetchall()) == ["ride", "ride", "run"]


def test_table_named_by_the_words_its_rounds_use():
    from core.materialize import RoundWords, name_from_words

    attrs = ["average_glucose", "time_in_range", "variability"]
    words = RoundWords((("glucose", 1.0, 2.2), ("dashboard", 0.93, 2.1), ("range", 0.7, 1.7)), ())
    # "glucose" is a word of a field that every round uses; "dashboard" says how it was recorded
    assert name_from_words(attrs, words) == "glucose_log"
    # a word the rounds use that no field carries never names the table ("before work")
    assert name_from_words(["water", "soil_moisture"], RoundWords((("work", 1.0, 3.0), ("before", 1.0, 3.0)), ())) \
        == rule_table_name(["water", "soil_moisture"])
    sleep = ["sleep_duration", "deep_sleep", "sleep_score"]
    assert name_from_words(sleep, RoundWords((("sleep", 1.0, 2.0), ("app", 0.9, 1.7)), ())) == "sleep_log"
    # no word most rounds use: the attribute-based name
    assert name_from_words(attrs, RoundWords((("band", 0.4, 1.2),), ())) == rule_table_name(attrs)
    assert name_from_words(attrs, None) == rule_table_name(attrs)


def test_add_rounds_in_a_batch_equals_round_by_round(tmp_path):
    """add_rounds(batch) writes the same rows as add_round per round, also when given the observations."""
    stream = []
    for i in range(1, 41):
        if i % 3 == 0:
            obs = [("workout_calories", "200", 200.0 + i, "kcal"), ("workout_minutes", "30", 30.0, "min")]
        elif i % 7 == 0:
            obs = []
        else:
            obs = sleep_obs(i)[:3]
        stream.append((i, obs))
    from core.model import Observation

    results = []
    for mode in ("one", "batch", "batch+observations"):
        with Store(tmp_path / f"{mode}.duckdb") as s:
            ids = [add_round(s.con, order, obs) for order, obs in stream]
            m = Materializer(s.con)
            m.apply(1, [o[0] for o in sleep_obs(1)[:3]], 10)
            m.apply(2, ["workout_calories", "workout_minutes"], 10)
            rest = [(o, rid) for (o, _), rid in zip(stream, ids) if o > 10]
            if mode == "one":
                written = {rid: m.add_round(o, rid) for o, rid in rest}
                written = {k: v for k, v in written.items() if v}
            elif mode == "batch":
                written = m.add_rounds(rest)
            else:  # the build passes the observations it just stored instead of reading them back
                given = {}
                for rid, attr, raw, num, unit, tv, src in s.con.execute(
                        "SELECT round_id, attribute, raw_value, number, unit, text_value, source FROM observations "
                        "ORDER BY round_id, seq").fetchall():
                    given.setdefault(rid, []).append(Observation(rid, attr, raw, num, unit, source=src,
                                                                 text_value=tv))
                s.con.execute("DELETE FROM observations")  # proves they are not read
                written = m.add_rounds(rest, observations=given)
            rows = {t.table_name: s.con.execute(f"SELECT * FROM {quote(t.table_name)} ORDER BY source").fetchall()
                    for t in m.tables()}
            results.append((written, rows))
    assert results[0] == results[1] == results[2]
    assert results[1][1]["sleep_log"] and results[1][1]["workout_log"]


def test_table_named_by_its_one_text_field():
    from core.materialize import RoundWords, name_from_words

    # no word recurs across the fields; the text field says what kind of record a row is
    attrs = ["variety", "height", "leaves"]
    assert name_from_words(attrs, RoundWords((("office", 1.0, 3.0),), ()), ["variety"]) == "variety_log"
    # two text fields: neither alone names the rows
    assert name_from_words(attrs, None, ["variety", "leaves"]) == rule_table_name(attrs)


def test_numbers_that_never_repeat_are_identifiers_not_measures(store):
    con = store.con
    for i in range(1, 6):
        add_round(con, i, [("order_number", f"{48213900 + 7 * i}", 48213900.0 + 7 * i, None),
                           ("total", f"{20 + i}.50", 20.5 + i, "$")])
    t = Materializer(con).apply(1, ("order_number", "total"), 5).schema
    types = {c.name: c.dtype for c in t.columns}
    assert types == {"order_number": "VARCHAR", "total": "DOUBLE"}
    assert con.execute(f'SELECT order_number FROM "{t.table_name}" ORDER BY round_order').fetchone()[0] == "48213907"
    # counts written without a unit stay measures: values that repeat, or of five digits
    from core.materialize import profile

    assert profile("steps", [("104320", 104320.0, None), ("104320", 104320.0, None), ("120000", 120000.0, None)]).dtype \
        == "DOUBLE"
    assert profile("steps", [("10432", 10432.0, None), ("11873", 11873.0, None), ("12000", 12000.0, None)]).dtype \
        == "DOUBLE"
    assert profile("ref", [("#4821", 4821.0, None), ("#5530", 5530.0, None), ("#6004", 6004.0, None)]).dtype \
        == "VARCHAR"


def test_a_column_typed_from_its_first_rounds_is_typed_again_from_all_its_values(store):
    # the count's first round printed a word where the number goes ("Played: Won"): three rounds in,
    # the column is text; twenty rounds on, nearly every value is a number and sums must see them
    con = store.con
    add_round(con, 1, [("played", "Won", None, None), ("score", "4", 4.0, None)])
    for i in range(2, 4):
        add_round(con, i, [("played", str(10 + i), 10.0 + i, None), ("score", str(i), float(i), None)])
    m = Materializer(con)
    name = m.apply(1, ("played", "score"), 3).schema.table_name
    assert columns(con, name)["played"] == "VARCHAR"
    for i in range(4, 21):
        add_round(con, i, [("played", str(10 + i), 10.0 + i, "games"), ("score", str(i), float(i), None)])
        m.add_round(i, f"S1:R{i}")
    assert m.settle_types(20) == (f"{name}.played",)
    assert columns(con, name)["played"] == "DOUBLE"
    values = dict(con.execute(f"SELECT source, played FROM {name}").fetchall())
    assert values["S1:R1"] is None and values["S1:R20"] == 30.0 and len(values) == 20
    assert con.execute(f"SELECT sum(played) FROM {name}").fetchone()[0] == sum(10.0 + i for i in range(2, 21))
    meta = {c["name"]: c for c in json.loads(con.execute(
        "SELECT columns FROM schemas WHERE schema_id = 1").fetchone()[0])}
    assert meta["played"]["dtype"] == "DOUBLE" and meta["played"]["unit"] == "games"
    # a reopened memory keeps the new type, and a second pass changes nothing
    assert Materializer(con).settle_types(20) == ()


def test_settling_keeps_the_values_type_where_the_llm_asked_for_text(store, queued_llm):
    # a small model typed a column of numbers as text: refused when made, and settling keeps it a number
    con = store.con
    for i in range(1, 5):
        add_round(con, i, sleep_obs(i))
    queued_llm.replies.append({"name": "nightly_sleep", "description": "Nightly sleep.", "columns": [
        {"name": "sleep_score", "type": "VARCHAR", "unit": None}]})
    m = Materializer(con, llm=queued_llm)
    m.apply(1, SLEEP, 4)
    assert m.settle_types(4) == ()
    assert columns(con, "nightly_sleep")["sleep_score"] == "DOUBLE"


def test_a_columns_other_names_are_those_of_its_field_not_of_a_field_named_like_the_column(store):
    from core.planning.metadata import load_catalog

    con = store.con
    # a second kind of record's temperature is the field temp~2 ("oven temp"); the field temp is a starter's
    for i in range(1, 4):
        add_round(con, i, [("temp~2", f"{220 + i} C", 220.0 + i, "°C"), ("flour", f"{400 + i} g", 400.0 + i, "g")])
    con.execute("INSERT INTO field_aliases VALUES ('oven_temp', 'temp~2', 1, 0.7, '{}', 'auto'), "
                "('temperature', 'temp', 1, 0.9, '{}', 'auto')")
    name = Materializer(con).apply(1, ("temp~2", "flour"), 3).schema.table_name
    cols = {c.name: c for c in load_catalog(con)[name].columns}
    assert "temp" in cols and "oven_temp" in cols["temp"].aliases and "temperature" not in cols["temp"].aliases


def test_a_value_read_in_another_unit_of_the_dimension_is_stored_in_the_columns_unit(store):
    con = store.con
    for i in range(1, 5):
        add_round(con, i, [("flour", f"{400 + i} g", 400.0 + i, "g"), ("oven", f"{220 + i} C", 220.0 + i, "°C")])
    add_round(con, 5, [("flour", "0.28 kg", 0.28, "kg"), ("oven", "241 C", 241.0, "°C")])
    add_round(con, 6, [("flour", "$3", 3.0, "$"), ("oven", "230 C", 230.0, "°C")])  # no factor: kept as read
    ch = Materializer(con).apply(1, ("flour", "oven"), 6)
    name = ch.schema.table_name
    flour = dict(con.execute(f"SELECT source, flour FROM {name}").fetchall())
    assert flour["S1:R5"] == pytest.approx(280.0) and flour["S1:R1"] == 401.0 and flour["S1:R6"] == 3.0
    desc = next(c.description for c in ch.schema.columns if c.name == "flour")
    assert "kg (converted)" in desc and "$ (not converted)" in desc


def test_m_beside_minutes_in_one_field_is_minutes_and_beside_kilometres_metres(store):
    from core.units import read_beside

    assert read_beside("m", ["min", "h"]) == "min" and read_beside("m", ["km"]) == "m"
    assert read_beside("m", ["min", "km"]) == "m" and read_beside("m", []) == "m"
    # a podcast log written "59 m" in texts and "83 mins" / "1 h 11 min" elsewhere: all minutes
    con = store.con
    for i in range(1, 5):
        add_round(con, i, [("listening", f"{50 + i} m", 50.0 + i, "m"), ("eps", str(i), float(i), None)])
    add_round(con, 5, [("listening", "83 mins", 83.0, "min"), ("eps", "2", 2.0, None)])
    add_round(con, 6, [("listening", "1 h 11 min", 71.0, "min"), ("eps", "3", 3.0, None)])
    ch = Materializer(con).apply(1, ("eps", "listening"), 6)
    col = next(c for c in ch.schema.columns if c.name == "listening")
    assert col.unit == "min"
    got = dict(con.execute(f"SELECT source, listening FROM {ch.schema.table_name}").fetchall())
    assert got["S1:R1"] == 51.0 and got["S1:R5"] == 83.0 and sum(got.values()) == 51 + 52 + 53 + 54 + 83 + 71


def test_a_column_named_in_m_from_its_first_rounds_is_minutes_once_its_values_also_come_in_minutes(store):
    # a garden count's texts say "34 m watched" (the table is made then, in "m"); a screen's "Count time 27 min"
    # joins the field later: at the end of the build the column is minutes, its values unchanged
    con = store.con
    for i in range(1, 5):
        add_round(con, i, [("watched", f"{30 + i} m", 30.0 + i, "m"), ("birds", str(40 + i), 40.0 + i, None)])
    m = Materializer(con)
    name = m.apply(1, ("watched", "birds"), 4).schema.table_name
    for i in range(5, 8):
        add_round(con, i, [("watched", f"{20 + i} min", 20.0 + i, "min"), ("birds", str(40 + i), 40.0 + i, None)])
        m.add_round(i, f"S1:R{i}")
    assert m.settle_types(7) == (f"{name}.watched",)
    meta = {c["name"]: c for c in json.loads(con.execute(
        "SELECT columns FROM schemas WHERE schema_id = 1").fetchone()[0])}
    assert meta["watched"]["unit"] == "min"
    got = dict(con.execute(f"SELECT source, watched FROM {name}").fetchall())
    assert got["S1:R1"] == 31.0 and got["S1:R7"] == 27.0
    # beside kilometres "m" stays metres: nothing changes
    for i in range(1, 4):
        add_round(con, 10 + i, [("swum", f"{800 + i} m", 800.0 + i, "m"), ("laps", str(i), float(i), None)])
    m2 = Materializer(con)
    swim = m2.apply(10, ("swum", "laps"), 13).schema.table_name
    add_round(con, 14, [("swum", "1.2 km", 1.2, "km"), ("laps", "24", 24.0, None)])
    m2.add_round(14, "S1:R14")
    assert f"{swim}.swum" not in m2.settle_types(14)


def test_a_column_whose_usual_unit_gives_values_below_one_is_stored_in_a_unit_the_history_also_used(store):
    # most receipts print "0.28 kg", some "410 g": grams keep every value readable and exact
    con = store.con
    for i in range(1, 6):
        add_round(con, i, [("hops", f"0.{20 + i} kg", 0.20 + i / 100, "kg"), ("cost", f"{10 + i} EUR", 10.0 + i, "€")])
    for i in range(6, 9):
        add_round(con, i, [("hops", f"{400 + i} g", 400.0 + i, "g"), ("cost", f"{10 + i} EUR", 10.0 + i, "€")])
    ch = Materializer(con).apply(1, ("hops", "cost"), 8)
    hops = next(c for c in ch.schema.columns if c.name == "hops")
    assert hops.unit == "g"
    got = dict(con.execute(f"SELECT source, hops FROM {ch.schema.table_name}").fetchall())
    assert got["S1:R1"] == pytest.approx(210.0) and got["S1:R6"] == 406.0


def test_topic_words_say_what_the_rounds_are_about():
    from core.materialize import topic_words

    texts = {f"A{i}": f"Lake survey: {10 + i} mallards, {i} geese. Photo of the Birdly screen." for i in range(6)}
    texts |= {f"B{i}": f"Refilled the feeder with {200 + i} g before work." for i in range(6)}
    texts |= {f"C{i}": "Nothing much today, saw a film." for i in range(6)}
    lake = topic_words(texts, [f"A{i}" for i in range(6)], {"mallard", "geese"})
    # two words said together in every round name it; the app (a proper noun) and the medium do not
    assert lake[0] == ("lake_survey", 1.0)
    assert not {"birdly", "photo", "screen"} & {w for w, _ in lake}
    feeder = [w for w, _ in topic_words(texts, [f"B{i}" for i in range(6)], {"g"})]
    # "refilled" is a verb form, "work" follows a preposition of circumstance: only the object remains
    assert feeder == ["feeder"]
    # a word as common outside the rounds as inside says nothing about them
    mixed = {f"D{i}": f"Garden update: {i} cm." for i in range(4)} | \
            {f"E{i}": f"The garden looks dry, {i} mm of rain." for i in range(4)}
    assert topic_words(mixed, [f"D{i}" for i in range(4)], set()) == ()
    # under half of the rounds: no topic
    half = {f"F{i}": ("Drove to the depot, " if i < 2 else "") + f"{i} km" for i in range(6)} | \
           {f"G{i}": "Slept badly." for i in range(6)}
    assert topic_words(half, [f"F{i}" for i in range(6)], set()) == ()


def test_a_table_is_named_by_the_topic_its_rounds_share(store):
    con = store.con
    for i in range(1, 7):
        rid = add_round(con, i, [("mallards", str(10 + i), 10.0 + i, None), ("geese", str(i), float(i), None)])
        con.execute("UPDATE rounds SET text = ? WHERE round_id = ?",
                    [f"user: Lake survey this morning: {10 + i} mallards and {i} geese.\nassistant: Noted.", rid])
    for i in range(7, 13):
        rid = add_round(con, i, [("water", f"{100 + i} ml", 100.0 + i, "ml"),
                                 ("soil_moisture", f"{30 + i} %", 30.0 + i, "%")])
        con.execute("UPDATE rounds SET text = ? WHERE round_id = ?",
                    [f"user: Did the pots before work, {100 + i} ml, soil at {30 + i} %.\nassistant: Saved.", rid])
    m = Materializer(con)
    lake = m.apply(1, ("mallards", "geese"), 12).schema
    assert lake.table_name == "lake_survey_log"
    assert "lake survey" in lake.description
    # "pots" is the topic of the watering rounds; "work" (after "before") never is
    assert m.apply(2, ("water", "soil_moisture"), 12).schema.table_name == "pot_log"


def test_a_table_made_from_few_rounds_is_named_again_from_all_of_them_at_the_end(store):
    con = store.con

    def feeder(i):
        rid = add_round(con, i, [("seed", f"{200 + i} g", 200.0 + i, "g"), ("gap", f"{i} days", float(i), "days")])
        con.execute("UPDATE rounds SET text = ? WHERE round_id = ?",
                    [f"user: Topped up the feeder: {200 + i} g of seed, {i} days since the last.\\nassistant: Ok.", rid])
        return rid

    for i in range(1, 5):
        feeder(i)
    m = Materializer(con)
    first = m.apply(1, ("seed", "gap"), 4).schema.table_name
    assert first != "feeder_log"  # four rounds are too few to name a topic
    for i in range(5, 11):
        m.add_round(i, feeder(i))
    # a table of an earlier build keeps its name
    assert m.settle_names(since_order=5) == {}
    assert m.settle_names(since_order=1) == {first: "feeder_log"}
    assert [t.table_name for t in m.tables()] == ["feeder_log"]
    assert con.execute("SELECT count(*) FROM feeder_log").fetchone()[0] == 10
    assert con.execute("SELECT table_name FROM memory_tables").fetchall() == [("feeder_log",)]
    assert con.execute("SELECT table_name FROM schemas WHERE schema_id = 1").fetchone()[0] == "feeder_log"
    assert "feeder record" in con.execute("SELECT description FROM memory_tables").fetchone()[0]
    assert m.settle_names(since_order=1) == {}  # settled: nothing moves again


def test_a_table_named_by_its_topic_keeps_its_main_field_for_planners(store):
    """The field the table would be named after by its fields alone stays marked (`main`): a question
    that names the rows ("my average hops" over hop purchases) but no column reads that quantity."""
    con = store.con
    for i in range(1, 7):
        rid = add_round(con, i, [("net_wt", f"{300 + i} g", 300.0 + i, "g"), ("aa", f"{10 + i} %", 10.0 + i, "%"),
                                 ("paid", f"{20 + i} EUR", 20.0 + i, "EUR")])
        con.execute("UPDATE rounds SET text = ? WHERE round_id = ?",
                    [f"user: Hop purchase: net wt {300 + i} g, AA {10 + i} %, paid {20 + i} EUR.\nassistant: Ok.", rid])
    t = Materializer(con).apply(1, ("net_wt", "aa", "paid"), 6).schema
    assert t.table_name == "hop_purchase_log"
    cols = json.loads(con.execute("SELECT columns FROM schemas WHERE schema_id = 1").fetchone()[0])
    assert [c["attribute"] for c in cols if c.get("main")] == ["net_wt"]
    from core.planning.metadata import load_catalog

    meta = load_catalog(con)["hop_purchase_log"]
    assert [c.name for c in meta.columns if c.main] == ["net_wt"]


def test_a_number_printed_without_its_unit_is_read_in_the_unit_its_size_fits(store):
    """Most rounds write millilitres, some photos litres; OCR drops or misreads a unit ("3.6 l" as "3.6"):
    a bare 3.6 among thousands of mL is 3.6 L, a bare 2500 is 2500 mL."""
    con = store.con
    for i in range(1, 6):
        add_round(con, i, [("rinse", f"{1800 + 100 * i} ml", 1800.0 + 100 * i, "mL"), ("tank", f"{i}", float(i), None)])
    for i in range(6, 9):
        add_round(con, i, [("rinse", f"2.{i} L", 2.0 + i / 10, "L"), ("tank", f"{i}", float(i), None)])
    add_round(con, 9, [("rinse", "3.6", 3.6, None), ("tank", "9", 9.0, None)])
    add_round(con, 10, [("rinse", "2500", 2500.0, None), ("tank", "10", 10.0, None)])
    ch = Materializer(con).apply(1, ("rinse", "tank"), 10)
    got = dict(con.execute(f"SELECT source, rinse FROM {ch.schema.table_name}").fetchall())
    assert next(c.unit for c in ch.schema.columns if c.name == "rinse") == "mL"
    assert got["S1:R9"] == pytest.approx(3600.0) and got["S1:R10"] == 2500.0 and got["S1:R6"] == pytest.approx(2600.0)
    # a column of one unit: a bare number is its unit's, whatever its size
    assert dict(con.execute(f"SELECT source, tank FROM {ch.schema.table_name}").fetchall())["S1:R9"] == 9.0


def test_a_table_named_by_a_stem_is_named_by_a_word_people_write():
    from core.materialize import RoundWords, name_from_words

    fields = ["volume_changed", "share_changed", "cond"]
    # the stem of "changed" is "chang": the rounds' "change" names the table, else the field's own word
    assert name_from_words(fields, RoundWords((("change", 0.6, 1.0), ("water", 0.5, 1.0)), ())) == "change_log"
    assert name_from_words(fields, None) == "changed_log"
    assert name_from_words(["bottle_filled", "fill_count"], None) == "fill_log"  # the shorter form
    assert name_from_words(["plants", "plant_height"], None) == "plant_log"  # a plural's singular


def test_a_description_says_what_the_rounds_mention_beyond_the_fields():
    from core.materialize import Column, RoundWords, mentions, rule_description

    words = RoundWords((("rest", 0.97, 1.0), ("temp", 0.83, 1.0), ("dough", 0.3, 0.9), ("proofing", 0.23, 0.8),
                        ("screenshot", 0.4, 0.8), ("proofbox", 0.3, 0.8), ("measured", 0.3, 0.5),
                        ("come", 0.3, 0.4), ("crumb", 0.1, 0.9)), (), (), frozenset({"proofbox"}))
    said = mentions(words, ["rest_duration", "temperature", "hydration"], "rest_log")
    # not its fields (nor "temp" for temperature), an app's name, the medium, a past form, a light verb, a rare word
    assert said == ("dough", "proofing")
    d = rule_description("rest_log", [Column("rest_duration", "DOUBLE", "min")], 30, None, None, said)
    assert d == "One row per rest record: rest duration (min). Its rounds also mention dough, proofing."


def test_a_field_two_tables_hold_is_named_in_each_by_the_labels_of_its_own_rows(store):
    from core.planning.metadata import load_catalog

    con = store.con
    for i in range(1, 5):  # an oven log prints "Temp"; a dough log prints "dough temp" for the same field
        add_round(con, i, [("temp", f"{220 + i} C", 220.0 + i, "°C"), ("flour", f"{400 + i} g", 400.0 + i, "g")])
        add_round(con, 10 + i, [("temp", f"{24 + i} C", 24.0 + i, "°C"), ("water", f"{70 + i} %", 70.0 + i, "%")])
    con.execute("UPDATE observations SET label = CASE WHEN round_id IN ('S1:R1', 'S1:R2', 'S1:R3', 'S1:R4') "
                "THEN 'Temp' ELSE 'dough temp' END WHERE attribute = 'temp'")
    mat = Materializer(con)
    oven = mat.apply(1, ("temp", "flour"), 14).schema.table_name
    dough = mat.apply(2, ("temp", "water"), 14).schema.table_name
    cat = load_catalog(con)
    aliases = {t: {c.name: c.aliases for c in cat[t].columns} for t in (oven, dough)}
    assert "dough temp" in aliases[dough]["temp"] and "dough temp" not in aliases[oven]["temp"]


def test_a_one_off_that_shares_one_field_with_a_log_of_text_is_no_record_of_it(store):
    con = store.con

    def said(i, text, obs, caption=None):
        rid = add_round(con, i, obs, caption)
        con.execute("UPDATE rounds SET text = ? WHERE round_id = ?", [f"user: {text}\nassistant: Noted.", rid])
        return rid

    def tutor(i):
        return said(i, f"Class with my tutor. class time {30 + i} min, paid {15 + i} USD, tutor Ana",
                    [("class_time", f"{30 + i} min", 30.0 + i, "min"), ("paid", f"{15 + i} USD", 15.0 + i, "USD"),
                     ("tutor", "Ana", None, None)])

    def paid_only(i, text, caption=None):
        return said(i, text, [("paid", f"{100 + i} USD", 100.0 + i, "USD", f"S1:R{i}:I1" if caption else None)],
                    caption)

    for i in range(1, 4):
        tutor(i)
    m = Materializer(con)
    m.apply(1, ("class_time", "paid", "tutor"), 3)
    # young: three rows of text are too few to say what its records say, so a one-off still gets in ...
    early = paid_only(4, "Paid 104 USD for concert tickets.")
    m.add_round(4, early)
    for i in range(5, 10):
        m.add_round(i, tutor(i))
    # ... and, once its records say "tutor", a new one-off does not, a partial record that says it does, and
    # a screenshot that showed only the price (a reading of an image is not judged by its words) does too
    one_off = paid_only(10, "Paid 110 USD for the exam registration.")
    partial_record = paid_only(11, "Tutor was ill, paid 111 USD anyway")
    bare = said(16, "paid: 116 USD", [("paid", "116 USD", 116.0, "USD")])
    screen = paid_only(12, "Logging this one.", caption="A screenshot")
    for i, rid in ((10, one_off), (11, partial_record), (12, screen), (16, bare)):
        m.add_round(i, rid)
    table = m.tables()[0].table_name
    rows = {r for (r,) in con.execute(f"SELECT source FROM {table}").fetchall()}
    assert one_off not in rows and {partial_record, screen, early, bare} <= rows
    # at the end of the build the early one-off goes too, judged by all the rows
    assert m.settle_strays() == {table: (early,)}
    rows = {r for (r,) in con.execute(f"SELECT source FROM {table}").fetchall()}
    assert rows == {f"S1:R{i}" for i in (1, 2, 3, 5, 6, 7, 8, 9)} | {partial_record, screen, bare}
    # a refill (the schema evolves) keeps them out
    for i in range(13, 16):
        said(i, f"Class with my tutor. class time {30 + i} min, paid {15 + i} USD, tutor Ana, level B{i % 3}",
             [("class_time", f"{30 + i} min", 30.0 + i, "min"), ("paid", f"{15 + i} USD", 15.0 + i, "USD"),
              ("tutor", "Ana", None, None), ("level", f"B{i % 3}", None, None)])
    m.apply(1, ("class_time", "paid", "tutor", "level"), 16)
    rows = {r for (r,) in con.execute(f"SELECT source FROM {table}").fetchall()}
    assert early not in rows and one_off not in rows and partial_record in rows and screen in rows
    assert con.execute(f"SELECT sum(paid) FROM {table}").fetchone()[0] == pytest.approx(
        sum(15 + i for i in (1, 2, 3, 5, 6, 7, 8, 9, 13, 14, 15)) + 111 + 112 + 116)


def test_a_partial_round_is_judged_by_what_it_speaks_of_beyond_its_own_labels():
    from core.materialize import partial, record_words, speaks_of_other_things, user_text

    assert user_text("user: Tutor session: 5 min\nassistant: Noted.\nuser: paid 3") == " Tutor session: 5 min  paid 3"
    vocabulary = record_words([{"tutor", "class", "ana"}, {"tutor", "session", "ana"}], excluded={"ana"})
    assert vocabulary == {"tutor", "class", "session"}
    assert speaks_of_other_things({"pay", "concert", "ticket"}, {"pay"}, vocabulary)
    assert not speaks_of_other_things({"pay", "tutor", "ill"}, {"pay"}, vocabulary)
    # nothing beyond its own labels ("Day 5: grav. 1.020, ferm temp 16 C"): no evidence against it
    assert not speaks_of_other_things({"grav", "ferm", "temp"}, {"grav", "ferm", "temp"}, vocabulary)
    # fewer than half of the fields, dates not counted
    assert partial({"paid"}, {"paid", "class_time", "tutor"}) and not partial({"paid", "tutor"}, {"paid", "class_time", "tutor"})
    assert not partial({"paid"}, {"paid", "class_time", "date"}, when={"date"})


def test_a_sign_ocr_glued_to_every_number_as_a_one_is_read_as_the_sign(store):
    from core.materialize import glued_sign

    con = store.con
    # a feeding app prints "Volume 4.9 l"; OCR reads "4.91" (once "3.7 1", which the extractor took as litres)
    raws = ["4.91", "2.41", "4.81", "1.61", "5.31", "3.61"]
    for i, raw in enumerate(raws, start=1):
        add_round(con, i, [("volume", raw, float(raw), None, f"S1:R{i}:I1"), ("sugar", "4.1KG", 4.1, "kg")])
    add_round(con, 7, [("volume", "3.7 1", 3.7, "L", "S1:R7:I1"), ("sugar", "2.2KG", 2.2, "kg")])
    m = Materializer(con)
    t = m.apply(1, ("volume", "sugar"), 7).schema
    col = next(c for c in t.columns if c.name == "volume")
    assert col.unit == "L"
    vals = sorted(v for (v,) in con.execute(f"SELECT volume FROM {t.table_name}").fetchall())
    assert vals == pytest.approx(sorted([4.9, 2.4, 4.8, 1.6, 5.3, 3.6, 3.7]))
    # a table made before the one value read whole came ("3.7 1" in the twelfth round) is in litres at the end
    for i, raw in enumerate(raws, start=11):
        add_round(con, i, [("vol", raw, float(raw), None, f"S1:R{i}:I1"), ("sugar_b", "4.1KG", 4.1, "kg")])
    late = Materializer(con)
    early = late.apply(11, ("vol", "sugar_b"), 16).schema
    assert next(c for c in early.columns if c.name == "vol").unit is None
    add_round(con, 17, [("vol", "3.7 1", 3.7, "L", "S1:R17:I1"), ("sugar_b", "2.2KG", 2.2, "kg")])
    late.add_round(17, "S1:R17")
    assert late.settle_types(17) == (f"{early.table_name}.vol",)
    meta = {c["name"]: c for c in json.loads(con.execute(
        "SELECT columns FROM schemas WHERE table_name = ?", [early.table_name]).fetchone()[0])}
    assert meta["vol"]["unit"] == "L"
    assert sorted(v for (v,) in con.execute(f"SELECT vol FROM {early.table_name}").fetchall()) == pytest.approx(
        sorted([4.9, 2.4, 4.8, 1.6, 5.3, 3.6, 3.7]))
    # numbers whose last digits vary are numbers
    assert not glued_sign([(r, float(r), None) for r in ("4.91", "3.22", "5.17", "2.41", "6.05")])
    assert not glued_sign([(r, float(r), None) for r in ("4.91", "2.41", "1.61")])  # too few to tell
    assert glued_sign([(r, float(r), None) for r in ("0.021", "0.081", "0.101", "0.041", "0.061")])


def test_one_number_far_beyond_its_columns_values_ending_in_a_one_is_read_with_its_sign(store):
    from core.materialize import glued_outlier

    con = store.con
    # the text says "502 ltr", "463 ltr"; one screen prints "475l", which OCR reads "4751"; another screen prints
    # bare litres ("287"): only the number ten times beyond every value with the unit is read again
    rows = [("502 ltr", 502.0, "L"), ("463 ltr", 463.0, "L"), ("136 ltr", 136.0, "L"), ("4751", 4751.0, None),
            ("287", 287.0, None), ("320 ltr", 320.0, "L")]
    for i, (raw, x, unit) in enumerate(rows, start=1):
        add_round(con, i, [("consumption", raw, x, unit), ("meter", f"{350 + i} m3", 350.0 + i, "m³")])
    m = Materializer(con)
    t = m.apply(1, ("consumption", "meter"), 6).schema
    m.settle_types(6)
    vals = sorted(v for (v,) in con.execute(f"SELECT consumption FROM {t.table_name}").fetchall())
    assert vals == pytest.approx(sorted([502, 463, 136, 475, 287, 320]))
    # within reach of the values, or not ending in a 1, or too few values with the unit to tell: a number
    assert glued_outlier("2001", (136, 502)) is None and glued_outlier("4750", (136, 502)) is None
    assert glued_outlier("4751", None) is None and glued_outlier("3.1", (0.2, 0.5)) is None
