"""The six tools against a real DuckDB file: results vs pure Python, validation, budget, hostile input."""
from __future__ import annotations

import math
import statistics
from datetime import date

import duckdb
import pytest

from core.config import DEFAULT
from core.planning.context import ContextBuilder
from core.planning.retrieval import NodeTableRetrieval
from core.planning.tools import TOOL_ARGS, TOOL_NAMES, Toolbox
from core.planning.validate import ToolError, resolve_name
from test_planning_data import MARATHON_DAY, SLEEP, WORKOUTS, checksum, memory_path  # noqa: F401


@pytest.fixture
def con(memory_path):
    c = duckdb.connect(str(memory_path))
    yield c
    c.close()


@pytest.fixture
def box(con, embedder) -> Toolbox:
    ctx = ContextBuilder(con, embedder, DEFAULT)
    return Toolbox(con, ctx.catalog, NodeTableRetrieval(con, embedder), DEFAULT)


def in_month(rows, month):
    return [r for r in rows if r["day"].month == month]


def test_table4_argument_keys_are_exact():
    assert set(TOOL_NAMES) == {"Lookup", "Filter", "Compute", "Rank", "SemanticMatch", "EventLocate"}
    assert TOOL_ARGS["Compute"] == ("table", "target_column_expression", "operator", "optional_column_filters")
    assert TOOL_ARGS["Rank"] == ("table", "target_column_expression", "order", "optional_column_filters",
                                 "result_budget")
    assert TOOL_ARGS["SemanticMatch"] == ("query_content", "retrieval_scope", "result_budget")


MARCH = [{"column": "time", "op": "between", "value": ["2026-03-01", "2026-03-31"]}]


@pytest.mark.parametrize("op,expected", [
    ("avg", lambda xs: statistics.mean(xs)),
    ("sum", lambda xs: sum(xs)),
    ("min", lambda xs: min(xs)),
    ("max", lambda xs: max(xs)),
    ("count", lambda xs: len(xs)),
    ("first", lambda xs: xs[0]),
    ("latest", lambda xs: xs[-1]),
    ("change", lambda xs: xs[-1] - xs[0]),
])
def test_compute_matches_python(box, op, expected):
    march = in_month(SLEEP, 3)
    values = [r["sleep_hours"] for r in march]
    res = box.call("Compute", {"table": "sleep_log", "target_column_expression": "sleep_hours", "operator": op,
                               "optional_column_filters": MARCH}, 10)
    assert math.isclose(res.value["value"], expected(values), rel_tol=1e-9)
    assert res.value["n_rows"] == len(march)
    assert res.budget_used == 1 and res.units[0].kind == "computed"
    # the one computed unit carries every contributing round
    assert set(res.units[0].rounds) == {r["round_id"] for r in march}
    if op == "change":
        direction = "up" if values[-1] > values[0] else "down" if values[-1] < values[0] else "unchanged"
        assert res.value["direction"] == direction
    if op in ("min", "max"):
        at = (min if op == "min" else max)(march, key=lambda r: r["sleep_hours"])
        assert res.value["at_time"].startswith(at["day"].isoformat())


def test_compute_skips_nulls_and_counts_with_filters(box):
    with_deep = [r for r in SLEEP if r["deep_sleep"] is not None]
    res = box.call("Compute", {"table": "sleep_log", "target_column_expression": "deep_sleep", "operator": "avg"}, 10)
    assert math.isclose(res.value["value"], statistics.mean(r["deep_sleep"] for r in with_deep))
    assert res.value["n_rows"] == len(with_deep) < len(SLEEP)
    runs = [w for w in WORKOUTS if w["activity"] == "run" and w["distance_km"] > 8]
    res = box.call("Compute", {"table": "workout", "target_column_expression": "*", "operator": "count",
                               "optional_column_filters": [{"column": "activity", "op": "=", "value": "RUN"},
                                                           {"column": "distance_km", "op": ">", "value": "8 km"}]}, 10)
    assert res.value["value"] == len(runs) >= 1


def test_compute_expression_arithmetic(box):
    rows = [w for w in WORKOUTS if w["distance_km"] is not None]
    res = box.call("Compute", {"table": "workout", "operator": "avg",
                               "target_column_expression": "distance_km / (duration_min / 60)"}, 10)
    assert math.isclose(res.value["value"], statistics.mean(w["distance_km"] / (w["duration_min"] / 60) for w in rows))
    assert "?" in res.sql or "60" not in res.sql  # the number is a bound parameter


def test_filter_lookup_rank_match_python(box):
    want = [r for r in SLEEP if r["sleep_hours"] >= 8.0 and date(2026, 2, 1) <= r["day"] <= date(2026, 3, 31)]
    res = box.call("Filter", {"table": "sleep_log", "result_budget": 10, "column_filters": [
        {"column": "sleep_hours", "op": ">=", "value": 8},
        {"column": "time", "op": "between", "value": ["2026-02-01", "2026-03-31"]}]}, 10)
    assert [u.rounds[0] for u in res.units] == [r["round_id"] for r in want][:10]
    assert res.n_matched == len(want)
    poor = [r for r in SLEEP if r["quality"] == "poor"]
    res = box.call("Lookup", {"table": "sleep_log", "key_values": {"quality": "Poor"}, "result_budget": 100}, 10)
    assert res.n_matched == len(poor) and len(res.units) == min(10, len(poor))
    res = box.call("Lookup", {"table": "sleep_log", "key_values": {"time": MARATHON_DAY.isoformat()}}, 10)
    assert [u.rounds[0] for u in res.units] == [r["round_id"] for r in SLEEP if r["day"] == MARATHON_DAY]
    top = sorted(WORKOUTS, key=lambda w: (-w["avg_heart_rate"], w["day"]))[:3]
    res = box.call("Rank", {"table": "workout", "target_column_expression": "avg_heart_rate", "order": "desc",
                            "result_budget": 3}, 10)
    assert [u.rounds[0] for u in res.units] == [w["round_id"] for w in top]
    assert res.value["values"] == [w["avg_heart_rate"] for w in top]
    low = sorted((w for w in WORKOUTS if w["distance_km"] is not None), key=lambda w: (w["distance_km"], w["day"]))[0]
    res = box.call("Rank", {"table": "workout", "target_column_expression": "distance_km", "order": "ascending",
                            "result_budget": 1}, 10)
    assert res.units[0].rounds == (low["round_id"],)
    res = box.call("Filter", {"table": "workout", "column_filters": [
        {"column": "activity", "op": "in", "value": ["swim", "yoga"]}]}, 10)
    assert res.n_matched == sum(w["activity"] in ("swim", "yoga") for w in WORKOUTS)


def test_retrieval_tools(box):
    res = box.call("EventLocate", {"query_content": "ran the Riverside half marathon", "result_budget": 2}, 10)
    assert len(res.units) == 2
    top = res.units[0]
    assert top.time.startswith(MARATHON_DAY.isoformat()) and "marathon" in top.text
    assert len(top.rounds) >= 2  # the event plus its surrounding rounds
    assert res.units[0].score >= res.units[1].score
    res = box.call("SemanticMatch", {"query_content": "kitten named Miso", "retrieval_scope": "episodes",
                                     "result_budget": 3}, 10)
    assert res.args["retrieval_scope"] == "episode" and {u.kind for u in res.units} == {"episode"}
    assert "Miso" in res.units[0].text and len(res.units[0].rounds) > 1
    with pytest.raises(ToolError, match="retrieval_scope"):
        box.call("SemanticMatch", {"query_content": "x", "retrieval_scope": "everything; DROP"}, 10)


def test_name_resolution():
    allowed = ["sleep_log", "workout"]
    assert resolve_name("sleep_log", allowed, "t") == "sleep_log"
    assert resolve_name("Sleep Log", allowed, "t") == "sleep_log"
    assert resolve_name("SLEEPLOG", allowed, "t") == "sleep_log"
    assert resolve_name("sleep_lgo", allowed, "t") == "sleep_log"  # fuzzy
    assert resolve_name("workouts", allowed, "t") == "workout"
    with pytest.raises(ToolError, match="allowed: sleep_log, workout"):
        resolve_name("weight_log", allowed, "table")
    with pytest.raises(ToolError, match="non-ASCII"):
        resolve_name("sleep_l\u043eg", allowed, "table")  # Cyrillic o


def test_column_names_resolve_in_tools(box):
    res = box.call("Compute", {"table": "Sleep Log", "target_column_expression": "Sleep Hours", "operator": "mean"}, 5)
    assert res.args["table"] == "sleep_log" and res.args["target_column_expression"] == "sleep_hours"
    assert res.args["operator"] == "avg"
    with pytest.raises(ToolError, match="allowed: .*sleep_hours"):
        box.call("Compute", {"table": "sleep_log", "target_column_expression": "weight", "operator": "avg"}, 5)


@pytest.mark.parametrize("args,match", [
    ({"table": "sleep_log", "target_column_expression": "quality", "operator": "avg"}, "numeric"),
    ({"table": "sleep_log", "target_column_expression": "sleep_hours", "operator": "median"}, "operator"),
    ({"table": "sleep_log", "target_column_expression": "sleep_hours", "operator": "avg",
      "optional_column_filters": [{"column": "quality", "op": ">", "value": "good"}]}, "numeric or date"),
    ({"table": "sleep_log", "target_column_expression": "sleep_hours", "operator": "avg",
      "optional_column_filters": [{"column": "sleep_hours", "op": "contains", "value": "7"}]}, "text column"),
    ({"table": "sleep_log", "target_column_expression": "sleep_hours", "operator": "avg",
      "optional_column_filters": [{"column": "sleep_hours", "op": ">", "value": "lots"}]}, "not a number"),
    ({"table": "sleep_log", "target_column_expression": "sleep_hours", "operator": "avg",
      "optional_column_filters": [{"column": "time", "op": ">", "value": "last Tuesday-ish"}]}, "not a date"),
    ({"table": "sleep_log", "target_column_expression": "sleep_hours", "operator": "avg",
      "optional_column_filters": [{"column": "time", "op": "between", "value": ["2026-03-01"]}]}, "two values"),
    ({"table": "sleep_log", "target_column_expression": "sleep_hours + quality", "operator": "avg"}, "numeric"),
])
def test_type_and_operator_checks(box, args, match):
    with pytest.raises(ToolError, match=match):
        box.call("Compute", args, 10)


def test_budget_enforced(box):
    res = box.call("Filter", {"table": "sleep_log", "column_filters": [{"column": "sleep_hours", "op": ">", "value": 0}],
                              "result_budget": 50}, 3)
    assert len(res.units) == 3 and res.n_matched == len(SLEEP)
    assert any("truncated" in n for n in res.notes)
    res = box.call("SemanticMatch", {"query_content": "sleep", "result_budget": 8}, 2)
    assert len(res.units) == 2
    with pytest.raises(ToolError, match="budget"):
        box.call("Compute", {"table": "sleep_log", "target_column_expression": "sleep_hours", "operator": "avg"}, 0)
    with pytest.raises(ToolError, match="result_budget"):
        box.call("Rank", {"table": "sleep_log", "target_column_expression": "sleep_hours", "order": "desc",
                          "result_budget": -1}, 5)


HOSTILE_TABLES = [
    'sleep_log"; DROP TABLE workout; --', "sleep_log; DELETE FROM rounds", "sleep_log UNION SELECT * FROM rounds",
    "rounds", "schemas", "nodes", "sleep_l\u043eg", "sleep_log/*x*/", "", None, 123, ["sleep_log"],
    "information_schema.tables", "sleep_log' OR '1'='1",
]
HOSTILE_COLUMNS = [
    'sleep_hours"; DROP TABLE sleep_log; --', "sleep_hours) FROM rounds; --", "sleep_hours + (SELECT 1)",
    "sleep_hours || 'x'", "count(*)", "text", "s\u0406eep_hours", "sleep_hours -- comment", "1/0",
]
HOSTILE_VALUES = [float("nan"), float("inf"), 10 ** 400, "x" * 10_000, {"a": 1}, [1, 2], True]


def _attempt(box, tool, args):
    try:
        return box.call(tool, args, 10)
    except ToolError as e:
        return e


def test_hostile_arguments_are_rejected_or_bound_and_the_file_is_unchanged(memory_path, embedder):
    con = duckdb.connect(str(memory_path))
    before = checksum(con)
    ctx = ContextBuilder(con, embedder, DEFAULT)
    box = Toolbox(con, ctx.catalog, NodeTableRetrieval(con, embedder), DEFAULT)
    for t in HOSTILE_TABLES:
        for tool, extra in (("Filter", {"column_filters": [{"column": "sleep_hours", "op": ">", "value": 1}]}),
                            ("Compute", {"target_column_expression": "sleep_hours", "operator": "avg"})):
            assert isinstance(_attempt(box, tool, {"table": t, **extra}), ToolError), t
    for c in HOSTILE_COLUMNS:
        r = _attempt(box, "Compute", {"table": "sleep_log", "target_column_expression": c, "operator": "sum"})
        assert isinstance(r, ToolError), c
        r = _attempt(box, "Filter", {"table": "sleep_log", "column_filters": [{"column": c, "op": "=", "value": 1}]})
        assert isinstance(r, ToolError), c
    for v in HOSTILE_VALUES:
        r = _attempt(box, "Filter", {"table": "sleep_log", "column_filters": [
            {"column": "sleep_hours", "op": ">", "value": v}]})
        assert isinstance(r, ToolError), repr(v)[:40]
    # injection text as a *value* is bound: it matches nothing and runs nothing
    for v in ("poor'; DROP TABLE sleep_log; --", "x' OR '1'='1", "%' OR 1=1 --"):
        r = _attempt(box, "Filter", {"table": "sleep_log", "column_filters": [
            {"column": "quality", "op": "=", "value": v}]})
        assert not isinstance(r, ToolError) and r.n_matched == 0
        r = _attempt(box, "Filter", {"table": "sleep_log", "column_filters": [
            {"column": "quality", "op": "contains", "value": v}]})
        assert not isinstance(r, ToolError) and r.n_matched == 0
    for op in ("= 1 OR 1=1 --", "; DROP TABLE x", "LIKE"):
        r = _attempt(box, "Filter", {"table": "sleep_log", "column_filters": [
            {"column": "quality", "op": op, "value": "x"}]})
        assert isinstance(r, ToolError) or r.n_matched == 0, op
    for tool in ("DropTable", "Compute; --", "", None, "sql"):
        assert isinstance(_attempt(box, tool, {}), ToolError)
    assert isinstance(_attempt(box, "Compute", {"table": "sleep_log", "target_column_expression": "sleep_hours",
                                                "operator": "avg", "sql": "DROP TABLE rounds"}), ToolError)
    assert isinstance(_attempt(box, "Compute", "DROP TABLE rounds"), ToolError)
    r = _attempt(box, "Filter", {"table": "sleep_log", "column_filters": [
        {"column": "sleep_hours", "op": ">", "value": i} for i in range(50)]})
    assert isinstance(r, ToolError) and "at most" in str(r)
    assert checksum(con) == before
    con.close()
    con = duckdb.connect(str(memory_path), read_only=True)
    assert checksum(con) == before
    con.close()


def _ties_memory(tmp_path):
    """A 250-row table with repeated extremes, rows out of time order, NULL times and microseconds."""
    from core.store import Store

    path = tmp_path / "ties.duckdb"
    with Store(path) as s:
        s.con.execute("""
            CREATE TABLE step_log AS SELECT 'R' || i AS source, (250 - i) AS round_order,
                CASE WHEN i % 50 = 7 THEN NULL
                     ELSE TIMESTAMP '2026-01-01 08:00' + to_microseconds(CAST((i * 7919) % 250 AS BIGINT) * 3600000001)
                END AS time, NULL::VARCHAR AS captions,
                CAST(CASE WHEN i % 9 = 0 THEN 900 WHEN i % 11 = 0 THEN 10 ELSE 100 + i % 37 END AS DOUBLE) AS steps,
                TIMESTAMP '2025-06-01' + to_days(CAST(i % 17 AS INTEGER)) AS went_on,
                '{}'::JSON AS _obs
            FROM range(250) t(i)""")
        s.con.execute("INSERT INTO schemas (schema_id, attributes, table_name, description, columns, "
                      "discovered_order, updated_order) VALUES (1, '[\"steps\", \"went_on\"]', 'step_log', "
                      "'steps', '[{\"name\": \"steps\", \"attribute\": \"steps\", \"dtype\": \"DOUBLE\", "
                      "\"unit\": \"steps\"}, {\"name\": \"went_on\", \"attribute\": \"went_on\", "
                      "\"dtype\": \"TIMESTAMP\", \"unit\": null}]', 1, 1)")
        s.con.execute("CREATE OR REPLACE VIEW memory_tables AS SELECT 'step_log' AS table_name, "
                      "'steps' AS description, (SELECT count(*) FROM step_log) AS n_rows")
    return path


@pytest.mark.parametrize("op,column", [("avg", "steps"), ("max", "steps"), ("min", "steps"), ("count", "*"),
                                       ("latest", "steps"), ("max", "went_on"), ("min", "went_on"),
                                       ("mode", "steps")])
def test_compute_contributing_rows_equal_the_ordered_query(tmp_path, embedder, op, column):
    """The one-scan Compute returns exactly the rows of the reference query it replaced:
    ORDER BY (v = extreme) DESC (min/max/mode), time NULLS LAST, round_order, LIMIT 100."""
    from core.planning.tools import MAX_ROUNDS_PER_UNIT, jsonable

    con = duckdb.connect(str(_ties_memory(tmp_path)))
    try:
        ctx = ContextBuilder(con, embedder, DEFAULT)
        box = Toolbox(con, ctx.catalog, NodeTableRetrieval(con, embedder), DEFAULT)
        res = box.call("Compute", {"table": "step_log", "target_column_expression": column, "operator": op}, 5)
        v = "NULL" if column == "*" else column
        cond = "" if column == "*" else f" WHERE {v} IS NOT NULL"
        value = con.execute({"avg": f"SELECT avg({v}) FROM step_log", "max": f"SELECT max({v}) FROM step_log",
                             "min": f"SELECT min({v}) FROM step_log", "count": "SELECT count(*) FROM step_log",
                             "latest": f"SELECT last({v} ORDER BY time, round_order) FROM step_log{cond}",
                             "mode": f"SELECT {v} FROM step_log{cond} GROUP BY {v} "
                                     f"ORDER BY count(*) DESC, min(time), {v} LIMIT 1"}[op]).fetchone()[0]
        extreme = op in ("min", "max", "mode")
        ref = con.execute(
            f"SELECT source, time, {v} FROM step_log{cond} "
            + (f"ORDER BY ({v} = ?) DESC, time, round_order " if extreme else "ORDER BY time, round_order ")
            + f"LIMIT {MAX_ROUNDS_PER_UNIT}", [value] if extreme else []).fetchall()
        assert res.value["value"] == jsonable(value)
        assert res.rows == tuple(tuple(jsonable(x) for x in r) for r in ref)
        assert res.units[0].rounds == tuple(dict.fromkeys(r[0] for r in ref))
        if op in ("min", "max"):
            assert (res.value["at_source"], res.value["at_time"]) == (ref[0][0], jsonable(ref[0][1]))
        n_days = con.execute(f"SELECT count(DISTINCT CAST(time AS DATE)) FROM step_log{cond}").fetchone()[0]
        assert res.value["n_days"] == n_days and res.value["n_rows"] == len(
            con.execute(f"SELECT 1 FROM step_log{cond}").fetchall())
    finally:
        con.close()


def test_a_ranked_context_keeps_only_the_best_episode_candidates(memory_path, embedder, monkeypatch):
    from core.planning import context as context_mod

    con = duckdb.connect(str(memory_path))
    q = "when did I run the half marathon"
    full = ContextBuilder(con, embedder, DEFAULT).build(q)
    episodes = [c for c in full.candidates if c.kind == "episode"]
    assert len(episodes) > 3
    monkeypatch.setattr(context_mod, "MAX_EPISODE_CANDIDATES", 3)
    capped = ContextBuilder(con, embedder, DEFAULT).build(q)
    kept = [c for c in capped.candidates if c.kind == "episode"]
    best = sorted(episodes, key=lambda c: -c.score)[:3]
    assert [c.name for c in kept] == [c.name for c in best]  # the best three by h, in rank order
    assert [c.name for c in capped.candidates if c.kind == "table"] == [c.name for c in full.candidates
                                                                       if c.kind == "table"]
    chosen = [[c.name for c in ctx.candidates if c.selected and c.kind == "episode"] for ctx in (full, capped)]
    assert chosen[1] == chosen[0][:3]  # the planner still gets the best episodes
    con.close()


def test_capped_context_ranks_tied_episodes_as_a_full_stable_sort_would(memory_path, embedder, monkeypatch):
    from core.planning import context as context_mod

    con = duckdb.connect(str(memory_path))
    # twelve episodes with one description score alike: the cap falls inside the tie
    con.execute("INSERT INTO nodes (node_id, level, description, first_order, last_order, n_members, closed) "
                "SELECT 'ep:tie' || i, 'episode', 'half marathon race day with friends', 1000 + i, 1000 + i, 1, true "
                "FROM range(12) t(i)")
    q = "half marathon race day"
    full = ContextBuilder(con, embedder, DEFAULT).build(q)
    monkeypatch.setattr(context_mod, "MAX_EPISODE_CANDIDATES", 5)
    capped = ContextBuilder(con, embedder, DEFAULT).build(q)
    full_eps = [c for c in full.candidates if c.kind == "episode"]
    tied = [c.name for c in full_eps if c.name.startswith("ep:tie")]
    scores = [c.score for c in full_eps if c.name in tied]
    assert len(tied) == 12 and max(scores) - min(scores) < 1e-6  # equal up to the matrix product's rounding
    # the same five, in the same order (ties by position), the same tables and the same selection
    assert [(c.kind, c.name, c.selected) for c in capped.candidates] == \
        [(c.kind, c.name, c.selected) for c in full.candidates if c.kind == "table" or c in full_eps[:5]]
    con.close()


def test_a_questions_own_image_joins_every_search_by_its_caption(tmp_path, embedder):
    """Asked "what is shown in this picture?", the memory is searched for what the picture's caption
    describes: the round about it is found, and the trace says the image was part of the query."""
    from datetime import datetime

    from core.model import History, ImageRef, Round, Session, Utterance
    from core.planning import QueryEngine, Trace
    from core.store import Store

    texts = ["We repotted the fern into a clay pot.", "The invoice from the printer arrived today.",
             "My opponent opened with the queen's gambit.", "Bought a violet orchid at the market."]
    rounds = tuple(Round(f"D1:{i + 1}", "D1", datetime(2026, 1, 1 + i), (Utterance("user", t),), index_in_session=i)
                   for i, t in enumerate(texts))
    with Store(str(tmp_path / "m.duckdb")) as store:
        store.ingest(History("h.json", "memeye", (Session("D1", None, rounds),)))
        engine = QueryEngine(store.con, embedder, DEFAULT)
        image = ImageRef("q1:image", caption="a violet orchid flower in a pot at a market stall")
        plain = engine.ask("What is shown in the picture?")
        seen = engine.ask("What is shown in the picture?", image=image)
    assert seen.image_caption == image.caption and not plain.image_caption
    assert seen.evidence_rounds[0] == "D1:4", seen.evidence_rounds
    assert any("question's image" in s.summary for s in seen.steps if s.tool in ("SemanticMatch", "EventLocate"))
    assert Trace.from_dict(seen.to_dict()).image_caption == image.caption


def test_a_search_about_a_named_time_reads_that_time_first(tmp_path, embedder):
    """"Which city did I visit in May?": the May rounds lead the evidence even when rounds of other
    months match the words as well or better; without a named time the order is the scores'."""
    from datetime import datetime

    from core.model import History, Round, Session, Utterance
    from core.planning import QueryEngine
    from core.store import Store

    days = [datetime(2024, 4, 20), datetime(2024, 5, 3), datetime(2024, 5, 21), datetime(2024, 7, 2),
            datetime(2024, 7, 9)]
    texts = ["Which city to visit: I visit the city of Porto.", "Arrived in Lisbon today.",
             "Lisbon trams are lovely.", "I visit the city of Rome next.", "Which city did Rome beat? none, visit it."]
    sessions = tuple(Session(f"D{i + 1}", d.date(), (Round(f"D{i + 1}:1", f"D{i + 1}", d, (Utterance("user", t),)),))
                     for i, (d, t) in enumerate(zip(days, texts)))
    with Store(str(tmp_path / "m.duckdb")) as store:
        store.ingest(History("h.json", "memeye", sessions))
        engine = QueryEngine(store.con, embedder, DEFAULT)
        named = engine.ask("Which city did I visit in May 2024?")
        plain = engine.ask("Which city did I visit?")
    search = next(s for s in named.steps if s.tool in ("SemanticMatch", "EventLocate"))
    led = [u.rounds[0] for u in search.units]
    assert set(led[:2]) == {"D2:1", "D3:1"}, led
    assert "in May 2024 first" in search.summary
    plain_search = next(s for s in plain.steps if s.tool in ("SemanticMatch", "EventLocate"))
    assert {u.rounds[0] for u in plain_search.units[:2]} != {"D2:1", "D3:1"}  # the words alone prefer others


def test_a_second_engine_over_the_memory_does_not_embed_its_metadata_again(con):
    from conftest import HashEmbedder

    enc = HashEmbedder()
    ContextBuilder(con, enc, DEFAULT).build("How long did I sleep in March?")
    first = sum(len(c) for c in enc.calls)
    assert first > 1  # the tables' and episodes' texts, then the question
    enc.calls.clear()
    ContextBuilder(con, enc, DEFAULT).build("How long did I sleep in March?")
    assert enc.calls == [["How long did I sleep in March?"]]  # only the question
    other = HashEmbedder()  # another encoder object never reuses those vectors
    ContextBuilder(con, other, DEFAULT).build("How long did I sleep in March?")
    assert sum(len(c) for c in other.calls) == first


def test_warming_a_builder_leaves_only_the_question_to_embed(con):
    from conftest import HashEmbedder

    enc = HashEmbedder()
    builder = ContextBuilder(con, enc, DEFAULT)
    n = builder.warm()
    assert n >= 1 and sum(len(c) for c in enc.calls) == n  # every table's and episode's text, once
    enc.calls.clear()
    builder.build("How long did I sleep in March?")
    assert enc.calls == [["How long did I sleep in March?"]]
