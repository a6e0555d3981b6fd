"""The planner finds the records a question names in the rounds of a table's rows, not only in its name.

Tables are often named after a field ("fee_log", "rate_log") while the user calls the rows by their own
noun ("my loans", "my grocery runs"). A small hand-built memory (library loans, grocery runs) follows the
materialization contract; each test asks through the engine and checks the tool call and the value
computed from the Python rows.
"""
from __future__ import annotations

import hashlib
import json
import statistics
from datetime import datetime, timedelta
from pathlib import Path

import duckdb
import pytest

from core.config import DEFAULT
from core.planning import QueryEngine
from core.planning.tools import ANALYTIC_TOOLS
from core.store import Store

T0 = datetime(2025, 9, 1, 10, 0)

LOANS = [dict(fee=0.5 * (i % 4), pages=float(180 + 37 * i % 260), time=T0 + timedelta(days=3 * i, hours=1))
         for i in range(9)]
GROCERIES = [dict(price=12.0 + 3.5 * (i % 5), rate=1.2 + 0.45 * (i % 6), weight=2.0 + 0.7 * (i % 3),
                  delivery=2.0 + 0.5 * (i % 4), time=T0 + timedelta(days=2 * i, hours=6)) for i in range(13)]
REPAIRS = [dict(total=30.0 + 11.0 * (i % 5), parts=float(1 + i % 4), bike=("Bike A", "Bike B")[i % 2],
                kind=("brakes", "chain", "gears")[i % 3], job="Kind " + ("brakes", "chain", "gears")[i % 3],
                time=T0 + timedelta(days=5 * i, hours=3)) for i in range(7)]
CHANGES = [dict(changed=5.0 + 1.5 * (i % 5), time=T0 + timedelta(days=4 * i, hours=9)) for i in range(6)]
# table -> (description, [(column, dtype, unit, labels as written)], rows, what the user wrote)
TABLES = {
    "fee_log": ("One row per fee record: fee (€), pages.",
                [("fee", "DOUBLE", "€", ("Late fee", "Price")), ("pages", "DOUBLE", None, ("Pages",))], LOANS,
                lambda r: f"Returned my library loan today. Late fee {r['fee']} €, the book had {r['pages']:g} pages."),
    "rate_log": ("One row per rate record: delivery (€), price (€), rate (€/kg), weight (kg).",
                 [("delivery", "DOUBLE", "€", ("Delivery",)), ("price", "DOUBLE", "€", ("Price",)),
                  ("rate", "DOUBLE", "€/kg", ("Rate",)), ("weight", "DOUBLE", "kg", ("Weight",))], GROCERIES,
                 lambda r: f"Grocery run done at the shop: paid {r['price']} €, {r['rate']} €/kg, {r['weight']} kg in the bag, "
                           f"delivery {r['delivery']} €."),
    "total_log": ("One row per total record: total (€), parts.",
                  [("total", "DOUBLE", "€", ("Total",)), ("parts", "DOUBLE", None, ("Parts",)),
                   ("bike", "VARCHAR", None, ("Bike",)), ("kind", "VARCHAR", None, ("Kind",)),
                   ("job", "VARCHAR", None, ("Job",))], REPAIRS,
                  lambda r: f"Bike tune-up at the shop: {r['bike']}, {r['kind']}, total {r['total']} €, "
                            f"{r['parts']:g} parts replaced."),
    "change_log": ("One row per change record: changed (L).", [("changed", "DOUBLE", "L", ("Changed",))], CHANGES,
                   lambda r: f"Water change done in the tank: changed {r['changed']:g} L."),
}


def build_memory(path: Path, embedder) -> Path:
    store = Store(path)
    con = store.con
    rounds = sorted(((r["time"], name, r) for name, (_, _, rows, _) in TABLES.items() for r in rows),
                    key=lambda x: x[0])
    con.execute("BEGIN TRANSACTION")
    sessions: dict = {}
    for order, (t, name, r) in enumerate(rounds, start=1):
        sid = sessions.get(t.date())
        if sid is None:
            sid = sessions[t.date()] = f"S{len(sessions) + 1}"
            con.execute("INSERT INTO sessions VALUES (?, ?, 'fixture', NULL)", [sid, t.date()])
        rid = f"{sid}:R{order}"
        r["round_id"], r["round_order"] = rid, order
        text = f"user: {TABLES[name][3](r)}\nassistant: Noted."
        con.execute("INSERT INTO rounds (round_id, session_id, round_order, index_in_session, time, dialogue, text, "
                    "content_hash, source) VALUES (?, ?, ?, 0, ?, ?, ?, ?, 'fixture')",
                    [rid, sid, order, t, json.dumps([["user", text]]), text, hashlib.sha1(text.encode()).hexdigest()])
        for seq, (c, _, unit, labels) in enumerate(TABLES[name][1]):
            con.execute("INSERT INTO observations (round_id, seq, attribute, raw_value, number, unit, value_kind, "
                        "source, label, extractor, raw_attribute) VALUES (?, ?, ?, ?, ?, ?, 'number', 'text', ?, "
                        "'rules', ?)", [rid, seq, c, str(r[c]), r[c] if isinstance(r[c], float) else None, unit, labels[TABLES[name][2].index(r) % len(labels)], c])
        con.execute("INSERT INTO nodes (node_id, level, parent_id, description, text_emb, t_start, t_end, "
                    "first_order, last_order, n_members, closed, round_id) "
                    "VALUES (?, 'event', NULL, ?, ?, ?, ?, ?, ?, 1, true, ?)",
                    [f"ev:{rid}", text, embedder.encode([text])[0].tolist(), t, t, order, order, rid])
    for sid, (name, (desc, cols, rows, _)) in enumerate(TABLES.items(), start=1):
        defs = ", ".join(f"{c} {d}" for c, d, *_ in cols)
        con.execute(f"CREATE TABLE {name}(source VARCHAR, round_order INTEGER, time TIMESTAMP, captions VARCHAR, {defs})")
        for r in rows:
            con.execute(f"INSERT INTO {name} VALUES (?, ?, ?, NULL{', ?' * len(cols)})",
                        [r["round_id"], r["round_order"], r["time"]] + [r[c] for c, *_ in cols])
        con.execute("INSERT INTO schemas VALUES (?, ?, ?, ?, ?, 1, 1)",
                    [sid, json.dumps([c for c, *_ in cols]), name, desc,
                     json.dumps([{"name": c, "dtype": d, "unit": u, "description": ""} for c, d, u, _ in cols])])
    counts = " ".join(f"WHEN '{n}' THEN (SELECT count(*) FROM {n})" for n in TABLES)
    con.execute(f"CREATE VIEW memory_tables AS SELECT s.table_name, s.description, CASE s.table_name {counts} END "
                f"AS n_rows FROM schemas s")
    con.execute("COMMIT")
    store.close()
    return path


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    from conftest import HashEmbedder

    emb = HashEmbedder()
    path = build_memory(tmp_path_factory.mktemp("rows") / "memory.duckdb", emb)
    con = duckdb.connect(str(path))
    yield QueryEngine(con, emb, DEFAULT)
    con.close()


def _step(trace):
    steps = [s for s in trace.steps if s.tool in ANALYTIC_TOOLS and s.status == "ok"]
    assert steps, (trace.plan.intent, trace.plan.notes, trace.answer.text)
    return steps[-1]


def _call(s):
    return (s.args.get("table"), s.args.get("target_column_expression"), s.args.get("operator"))


@pytest.mark.parametrize("question,table,n", [
    ("How many loans did I log?", "fee_log", len(LOANS)),
    ("Number of grocery runs in my history?", "rate_log", len(GROCERIES)),
    ("How many times did I return a library loan?", "fee_log", len(LOANS)),
    ("How many tune-ups are there in total?", "total_log", len(REPAIRS)),
    # no round says "exercises" or "trips": the words before the head noun say which records
    ("How many grocery trips did I log?", "rate_log", len(GROCERIES)),
    ("Number of bike exercises in my history?", "total_log", len(REPAIRS)),
])
def test_records_named_only_in_their_rounds_are_counted(engine, question, table, n):
    _assert_counted(engine, question, table, n)


def _assert_counted(eng, question, table, n):
    t = eng.ask(question)
    s = _step(t)
    assert _call(s) == (table, "*", "count")
    assert s.value["n_rows"] == n and t.answer.text.startswith(str(n))
    if "how many times" in question.lower():
        # in the question's words: so many times, not so many rows named after the table's field
        assert t.answer.text.startswith(f"{n} times"), t.answer.text


@pytest.mark.parametrize("question", ["How many times did I fill up the boat?", "How many boat trips did I log?"])
def test_a_noun_the_rounds_do_not_name_counts_nothing(engine, question):
    t = engine.ask(question)
    assert not any(s.tool in ANALYTIC_TOOLS and s.status == "ok" for s in t.steps)
    assert t.answer.refused


def test_a_column_counted_over_named_records_is_summed(engine):
    s = _step(engine.ask("Adding up every loan, how many pages were there?"))
    assert _call(s) == ("fee_log", "pages", "sum")
    assert s.value["value"] == pytest.approx(sum(r["pages"] for r in LOANS))


def test_what_time_a_record_showed_asks_its_duration_not_a_date():
    from core.planning.intent import analyze

    now = datetime(2026, 1, 1)
    assert not analyze("On average, what time did my writing exercises show?", now).asks_date
    assert not analyze("What time did my last session show?", now).asks_date
    assert analyze("What time did I leave the office?", now).asks_date


def test_adding_up_records_asks_for_a_sum_even_when_what_is_counted_is_no_noun():
    from core.planning.intent import analyze

    # "sold" names no unit and no records: the sum is said by "adding up", which names the records
    a = analyze("Adding up every market day, how many sold were there?", datetime(2026, 1, 1))
    assert (a.kind, a.op, a.records) == ("aggregate", "sum", "market day")
    a = analyze("Summing all my harvests, what weight did I get?", datetime(2026, 1, 1))
    assert (a.op, a.records) == ("sum", "harvests")


def test_the_records_named_pick_the_table_among_like_columns(engine):
    # both tables have a column known as "price"; the grocery runs are the rows of rate_log
    s = _step(engine.ask("What was the average price over all my grocery runs?"))
    assert _call(s) == ("rate_log", "price", "avg")
    assert s.value["value"] == pytest.approx(statistics.mean(r["price"] for r in GROCERIES))
    s = _step(engine.ask("What was the average price over all my loans?"))
    assert _call(s) == ("fee_log", "fee", "avg")


def test_a_compound_quantity_asks_for_a_column_per_that_unit(engine):
    # "price/kg" is a price per kilogram: the €/kg column, not the € one named price
    s = _step(engine.ask("What was my highest price/kg?"))
    assert (s.tool, s.args["table"], s.args["target_column_expression"]) == ("Rank", "rate_log", "rate")
    assert s.value["values"][0] == pytest.approx(max(r["rate"] for r in GROCERIES))


def test_a_condition_in_a_compound_unit_keeps_the_whole_unit():
    from core.planning.intent import analyze

    a = analyze("On how many trips was the fuel use above 6.7 L/100km?", datetime(2026, 1, 1))
    assert [(c.op, c.number, c.unit.lower()) for c in a.conditions] == [(">", 6.7, "l/100km")]
    a = analyze("How many orders cost more than 20 €?", datetime(2026, 1, 1))
    assert [(c.op, c.number) for c in a.conditions] == [(">", 20.0)]


def test_a_generic_word_that_is_a_columns_whole_name_is_that_column(engine):
    # "total" is both an operator and, here, the name of what was paid
    s = _step(engine.ask("What's the total total over all my tune-ups?"))
    assert _call(s) == ("total_log", "total", "sum")
    assert s.value["value"] == pytest.approx(sum(r["total"] for r in REPAIRS))
    s = _step(engine.ask("On what date was my total highest?"))
    assert (s.tool, s.args["table"], s.args["target_column_expression"]) == ("Rank", "total_log", "total")
    s = _step(engine.ask("First total in my tune-ups?"))
    assert _call(s) == ("total_log", "total", "first")
    assert s.value["value"] == REPAIRS[0]["total"]


def test_a_text_value_with_a_short_word_filters_as_a_whole_phrase(engine):
    s = _step(engine.ask("What was my average total for Bike B?"))
    assert _call(s) == ("total_log", "total", "avg")
    assert {"column": "bike", "op": "=", "value": "Bike B"} in s.args["optional_column_filters"]
    assert s.value["value"] == pytest.approx(statistics.mean(r["total"] for r in REPAIRS if r["bike"] == "Bike B"))


def test_of_two_text_columns_sharing_a_value_word_the_named_column_filters(engine):
    s = _step(engine.ask("On tune-ups where the kind was chain, what was the mean total?"))
    filters = [f for f in s.args["optional_column_filters"] if f["column"] != "time"]
    assert filters == [{"column": "kind", "op": "=", "value": "chain"}]
    assert s.value["value"] == pytest.approx(statistics.mean(r["total"] for r in REPAIRS if r["kind"] == "chain"))


def test_how_many_records_is_not_a_sum_of_a_column_in_a_unit(engine):
    # "total" is in €: "how many tune-ups" counts rows even though a column's name could be read as the noun
    s = _step(engine.ask("How many tune-ups did I log?"))
    assert _call(s) == ("total_log", "*", "count") and s.value["n_rows"] == len(REPAIRS)


def test_a_column_of_other_records_than_those_named_is_not_computed(engine):
    # the loans are the rows of fee_log; a weight is held only by the grocery runs
    t = engine.ask("What was the average weight over all my loans?")
    assert t.answer.refused and not any(s.tool in ANALYTIC_TOOLS and s.status == "ok" for s in t.steps)
    assert any("fee_log holds the loans" in n for n in t.plan.notes)
    s = _step(engine.ask("What was the average weight over all my grocery runs?"))
    assert _call(s) == ("rate_log", "weight", "avg")


def test_rows_named_by_a_phrase_no_round_says_whole():
    from core.planning.columns import rows_about, rows_tables
    from core.planning.metadata import TableMeta

    tables = [TableMeta("change_log", "", (), 10), TableMeta("test_log", "", (), 10), TableMeta("study_log", "", (), 10)]
    rounds = {
        # a water change is told "26.5 litres changed, 41 percent change" (the head's lemma, never "water")
        "change_log": [frozenset({"litres", "changed", "percent", "change"})] * 10,
        # a water test's photo: "Latest water test, see picture"
        "test_log": [frozenset({"latest", "water", "test"})] * 5 + [frozenset({"acidity", "nitrate"})] * 5,
        "study_log": [frozenset({"writing", "session", "words"})] * 10,
    }

    def row_words(t):
        return rounds[t]
    # "changes" is said (as "changed") by one table's rounds, "water" by another's: neither is sure
    assert rows_tables(rows_about("water changes", tables, row_words)) == set()
    # the head said nowhere: the words before it name the rows
    assert rows_tables(rows_about("writing exercises", tables, row_words)) == {"study_log"}
    # a round or two that say the whole phrase do not outweigh the rest that say only its first word
    rounds["study_log"] = [frozenset({"writing", "exercise"})] + [frozenset({"writing", "practice"})] * 13
    assert rows_tables(rows_about("writing exercises", tables, row_words)) == {"study_log"}
    # the head said by a few rounds of one table, the words before it by most of another's: those are the rows
    # ("print jobs": "print" in most of the prints' rounds, "job" in a few of the resin jobs')
    rounds["study_log"] = [frozenset({"print", "done"})] * 8 + [frozenset({"filament"})] * 2
    rounds["test_log"] = [frozenset({"resin", "job"})] * 3 + [frozenset({"resin", "print"})] * 3 + [frozenset({"cure"})] * 4
    assert rows_tables(rows_about("print jobs", tables, row_words)) == {"study_log"}
    # the verb's forms name the noun's records: "changed" in every change
    assert rows_tables(rows_about("changes", tables, row_words)) == {"change_log"}


def test_rows_named_whole_by_a_few_rounds_of_one_table_not_by_the_modifier_of_another():
    from core.planning.columns import rows_about, rows_tables
    from core.planning.metadata import TableMeta

    tables = [TableMeta("change_log", "", (), 35), TableMeta("test_log", "", (), 26)]
    rounds = {
        # water changes: 4 of 35 photos say "Here's today's water change", the texts only "34.1l removed, 44% pct"
        "change_log": [frozenset({"today", "water", "change"})] * 4 + [frozenset({"removed", "pct"})] * 31,
        # water tests: "Water test result: pH 7.1" in most rounds, never "change"
        "test_log": [frozenset({"water", "test", "result"})] * 22 + [frozenset({"ph", "amm"})] * 4,
    }

    def row_words(t):
        return rounds[t]
    assert rows_tables(rows_about("water changes", tables, row_words)) == {"change_log"}
    assert rows_tables(rows_about("water tests", tables, row_words)) == {"test_log"}
    # a test's rounds that say "change" now and then ("no change in colour"): the modifier's table stays in doubt
    rounds["test_log"] = rounds["test_log"][:20] + [frozenset({"water", "change", "colour"})] * 2 + rounds["test_log"][22:]
    assert rows_tables(rows_about("water changes", tables, row_words)) != {"change_log"}


def test_rows_tables_by_share_or_by_a_distinct_table():
    from core.planning.columns import rows_tables

    assert rows_tables({"a": 0.6, "b": 0.55, "c": 0.0}) == {"a", "b"}  # most rows name them: each such table
    # a few of one table's rounds name them and no other table's: that table ("RH 42 %" beside "humidity")
    assert rows_tables({"a": 0.25, "b": 0.0}) == {"a"}
    assert rows_tables({"a": 0.3, "b": 0.1}) == set()  # not distinct enough
    # "Screenshot of my writing exercise" in 3 of 23 sessions, the text form only the numbers
    assert rows_tables({"a": 3 / 23, "b": 0.0}) == {"a"}
    assert rows_tables({"a": 0.1, "b": 0.0}) == set()  # too few
    assert rows_tables({}) == set()


def test_a_quantity_named_only_by_its_rows_is_the_tables_amount(engine):
    # no column is called "tune-up" or "grocery run": the rounds of the rows are, and "how much" asks an amount
    t = engine.ask("How much did I log for my tune-ups in total?")
    s = _step(t)
    assert _call(s) == ("total_log", "total", "sum")
    assert s.value["value"] == pytest.approx(sum(r["total"] for r in REPAIRS))
    assert any("name its rows" in n for n in t.plan.notes)
    s = _step(engine.ask("How much did my grocery runs come to in total?"))
    table, column, op = _call(s)
    assert (table, op) == ("rate_log", "sum") and column in ("price", "weight")  # an amount, never the rate
    assert s.value["value"] == pytest.approx(sum(r[column] for r in GROCERIES))
    # an adjective of measure picks the column of its dimension (not rate_log's namesake "rate")
    s = _step(engine.ask("How heavy were my grocery runs in total?"))
    assert _call(s) == ("rate_log", "weight", "sum")
    # "my average total" over records whose table names no column so: what they came to in money, the
    # largest of their sums of money (the delivery charge beside it is a part of it)
    s = _step(engine.ask("What was the mean total across all my grocery runs?"))
    assert _call(s) == ("rate_log", "price", "avg")
    # one record named by an ordinal has a total: its value, not a sum of records
    s = _step(engine.ask("What total did my last grocery run show?"))
    assert (s.args.get("table"), s.args.get("target_column_expression")) == ("rate_log", "price")
    assert s.value["value"] == pytest.approx(max(GROCERIES, key=lambda r: r["time"])["price"])
    # words no table's rounds use still name nothing: retrieval, and a refusal here
    t = engine.ask("How much did my boat trips come to in total?")
    assert not any(s.tool in ANALYTIC_TOOLS and s.status == "ok" for s in t.steps)
    # the rounds name the records, but nothing names the quantity asked: no column of theirs stands in for it
    t = engine.ask("What was the mean humidity across all my grocery runs?")
    assert not any(s.tool in ANALYTIC_TOOLS and s.status == "ok" for s in t.steps), t.plan.notes


def test_a_condition_is_read_in_the_measured_rows_table(engine):
    # "cost" names no column; of the € columns, the grocery runs' own is the one their weight is filtered on, and
    # of theirs the price, some of whose values are over 20 € (no delivery charge is)
    t = engine.ask("When the cost was over 20 €, what was my average weight?")
    s = _step(t)
    assert _call(s) == ("rate_log", "weight", "avg")
    want = [r["weight"] for r in GROCERIES if r["price"] > 20]
    assert s.value["n_rows"] == len(want) and s.value["value"] == pytest.approx(statistics.mean(want))
    assert not any("ignored" in n for n in t.plan.notes)


def test_a_column_named_by_the_initials_of_the_question_words():
    import numpy as np

    from conftest import HashEmbedder
    from core.planning.columns import initials, match_columns
    from core.planning.metadata import ColumnMeta, TableMeta

    assert initials("my resting heart rate") == {"rh": False, "hr": True, "rhr": True}
    emb = HashEmbedder()
    tables = [TableMeta("pulse_log", "One row per pulse record: rhr, steps.",
                        (ColumnMeta("rhr", "DOUBLE"), ColumnMeta("steps", "DOUBLE")), 9),
              TableMeta("walk_log", "One row per walk record: distance (km).", (ColumnMeta("distance", "DOUBLE", "km"),), 5)]
    ranked = match_columns("average resting heart rate", tables, lambda xs: np.asarray(emb.encode(xs)),
                           lambda q: np.asarray(emb.encode([q])[0]), DEFAULT.lambda_meta)
    assert (ranked[0].table, ranked[0].column) == ("pulse_log", "rhr") and ranked[0].supported
    # an alias printed in capitals ("LH" on a screen) is the initials all the same
    tables = [TableMeta("layer_log", "One row per layer record: layer (mm).",
                        (ColumnMeta("layer", "DOUBLE", "mm", aliases=("LH",)), ColumnMeta("resin", "DOUBLE", "mL")), 9)]
    ranked = match_columns("average layer height", tables, lambda xs: np.asarray(emb.encode(xs)),
                           lambda q: np.asarray(emb.encode([q])[0]), DEFAULT.lambda_meta)
    assert (ranked[0].table, ranked[0].column) == ("layer_log", "layer") and ranked[0].supported


def test_a_noun_of_measure_says_the_dimension_of_the_quantity():
    import numpy as np

    from core.planning.columns import match_columns
    from core.planning.metadata import ColumnMeta, TableMeta

    # an encoder that finds the count of layers a little closer to the words than the layer in mm
    def embed(texts):
        return np.asarray([[1.0, 0.0] if "layers" in t else [0.95, 0.312] for t in texts])
    enc = (embed, lambda q: np.asarray([1.0, 0.0]), DEFAULT.lambda_meta)
    # "layers" counts a resin print's layers; "layer" is a print's layer in mm: a height is a length
    tables = [TableMeta("layers_log", "One row per layers record: layers, resin (mL).",
                        (ColumnMeta("layers", "DOUBLE"), ColumnMeta("resin", "DOUBLE", "mL")), 9),
              TableMeta("filament_log", "One row per filament record: layer (mm), filament (g).",
                        (ColumnMeta("layer", "DOUBLE", "mm"), ColumnMeta("filament", "DOUBLE", "g")), 9)]
    for q in ("maximum layer height", "my most recent layer height"):
        top = match_columns(q, tables, *enc)[0]
        assert (top.table, top.column) == ("filament_log", "layer"), q
    # the count is still what "how many layers" names
    top = match_columns("how many layers", tables, *enc)[0]
    assert (top.table, top.column) == ("layers_log", "layers")


def _encoder_near(word: str, near: list[float], far: list[float]):
    """A fake encoder for match_columns: texts with `word` get the vector `near`, others `far`; every
    query is (1, 0), so their first coordinates are the cosines."""
    import numpy as np

    def embed(texts):
        return np.asarray([near if word in t else far for t in texts])
    return embed, lambda q: np.asarray([1.0, 0.0]), DEFAULT.lambda_meta


def test_a_two_letter_name_that_begins_the_asked_word_names_it():
    from core.planning.columns import match_columns
    from core.planning.metadata import ColumnMeta, TableMeta

    # a tyre gauge prints "FR" and "rear tyres"; the encoder finds "rear tyres" closer to "front" (not close)
    enc = _encoder_near("rear", [0.4, 0.9165], [0.2, 0.98])
    tables = [TableMeta("tyre_log", "One row per tyre record: fr (bar), rear tyres (bar), tread (mm).",
                        (ColumnMeta("fr", "DOUBLE", "bar"), ColumnMeta("rear_tyres", "DOUBLE", "bar"),
                         ColumnMeta("tread", "DOUBLE", "mm")), 9)]
    ranked = match_columns("front across all my", tables, *enc, records="tyre checks")  # (the rows named apart)
    assert [ch.column for ch in ranked if ch.supported] == ["fr"]
    # as a condition's quantity too, before a column only the unit names
    ranked = match_columns("front", tables, *enc, dimension="pressure")
    assert max(ranked, key=lambda ch: ch.overlap).column == "fr"
    # two letters are no abbreviation of a word that is not what is asked
    ranked = match_columns("mean tread on my free days", tables, *enc)
    assert [ch.column for ch in ranked if ch.supported] == ["tread"]


def test_a_name_of_the_initials_or_the_head_of_a_compound_names_the_asked_quantity():
    import numpy as np

    from core.planning.columns import compound_head, match_columns
    from core.planning.metadata import ColumnMeta, TableMeta

    assert compound_head("photoperiod", "period") and compound_head("headcount", "count")
    assert not compound_head("periods", "period") and not compound_head("separate", "rat")
    # an encoder that finds neither short name near the words asked (as MiniLM does not)
    def embed(texts):
        return np.asarray([[0.2, 0.98] if "ph" in t else [0.1, 0.995] for t in texts])
    enc = (embed, lambda q: np.asarray([1.0, 0.0]), DEFAULT.lambda_meta)
    tables = [TableMeta("hop_log", "One row per hop record: aa (%), price (EUR).",
                        (ColumnMeta("aa", "DOUBLE", "%"), ColumnMeta("price", "DOUBLE", "EUR")), 9),
              TableMeta("tank_log", "One row per tank record: ph, period (h).",
                        (ColumnMeta("ph", "DOUBLE"), ColumnMeta("period", "DOUBLE", "h")), 9),
              TableMeta("feed_log", "One row per feed record: food (g), fish.",
                        (ColumnMeta("food", "DOUBLE", "g"), ColumnMeta("fish", "DOUBLE")), 9)]
    # "AA" printed for alpha acid: the initials of the words that end what is asked, wherever the rows are named
    for q in ("Latest alpha acid I logged?", "Maximum alpha acid over all my hop purchases?"):
        ranked = match_columns(q, tables, *enc)
        assert (ranked[0].table, ranked[0].column) == ("hop_log", "aa") and ranked[0].supported, q
    # ... but not initials of words that modify something else ("alpha acid price")
    ranked = match_columns("my average alpha acid price", tables, *enc)
    assert ranked[0].column == "price"
    # "photoperiod" is a period: the compound's head names the column, over the two letters "pH" that begin it
    ranked = match_columns("What was my highest photoperiod?", tables, *enc)
    assert (ranked[0].column, ranked[0].supported) == ("period", True)
    assert [ch.column for ch in ranked if ch.supported] == ["period"]


def test_a_noun_of_measure_leaves_out_columns_of_another_dimension():
    from core.planning.columns import match_columns
    from core.planning.metadata import ColumnMeta, TableMeta

    # a water change printed "Changed: 12 l" and "change %: 31": "the share changed" is the percentage
    enc = _encoder_near("changed", [0.3, 0.954], [0.15, 0.989])
    tables = [TableMeta("change_log", "One row per change record: changed (L), change (%), cond (mL).",
                        (ColumnMeta("changed", "DOUBLE", "L"), ColumnMeta("change", "DOUBLE", "%"),
                         ColumnMeta("cond", "DOUBLE", "mL")), 9)]
    for q in ("First share changed in my water changes?", "what was my mean share changed"):
        assert match_columns(q, tables, *enc)[0].column == "change", q
    # without the noun, the volume changed
    assert match_columns("what was my mean volume changed", tables, *enc)[0].column == "changed"


def test_a_name_written_short_for_the_asked_word_names_it_over_a_closer_meaning():
    import numpy as np

    from core.planning.columns import abbreviates, match_columns
    from core.planning.metadata import ColumnMeta, TableMeta

    assert abbreviates("gs", "geese") and abbreviates("wt", "weight") and abbreviates("pts", "points")
    assert not abbreviates("gs", "ducks") and not abbreviates("gt", "geese")
    # a survey sheet prints "Ducks" and "GS"; the encoder finds ducks closer to geese than "gs" is
    def embed(texts):
        return np.asarray([[0.9, 0.436] if "duck" in t else [0.1, 0.995] for t in texts])
    enc = (embed, lambda q: np.asarray([1.0, 0.0]), DEFAULT.lambda_meta)
    tables = [TableMeta("survey_log", "One row per survey record: ducks, gs, temp (°C).",
                        (ColumnMeta("ducks", "DOUBLE", None), ColumnMeta("gs", "DOUBLE", None),
                         ColumnMeta("temp", "DOUBLE", "°C")), 9)]
    assert match_columns("geese in total over all my", tables, *enc, records="lake surveys")[0].column == "gs"
    assert match_columns("ducks in total over all my", tables, *enc, records="lake surveys")[0].column == "ducks"
    tables = [TableMeta("lesson_log", "One row per lesson record: pts, units.",
                        (ColumnMeta("pts", "DOUBLE", None), ColumnMeta("units", "DOUBLE", None)), 9)]
    ranked = match_columns("latest points", tables, lambda t: np.asarray([[0.5, 0.866] if "pts" in x else [0.6, 0.8]
                                                                          for x in t]),
                           lambda q: np.asarray([1.0, 0.0]), DEFAULT.lambda_meta)
    assert ranked[0].column == "pts" and ranked[0].supported


def test_a_column_naming_every_word_of_the_phrase_before_one_naming_its_head():
    import numpy as np

    from conftest import HashEmbedder
    from core.planning.columns import match_columns
    from core.planning.metadata import ColumnMeta, TableMeta

    emb = HashEmbedder()
    tables = [TableMeta("game_log", "One row per game record: rating, moves.",
                        (ColumnMeta("rating", "DOUBLE"), ColumnMeta("moves", "DOUBLE")), 9),
              TableMeta("solve_log", "One row per solve record: pr, solved.",
                        (ColumnMeta("pr", "DOUBLE"), ColumnMeta("solved", "DOUBLE")), 9)]
    enc = (lambda xs: np.asarray(emb.encode(xs)), lambda q: np.asarray(emb.encode([q])[0]), DEFAULT.lambda_meta)
    # "pr" is the initials of both words; "rating" names only the head
    top = match_columns("average puzzle rating", tables, *enc)[0]
    assert (top.table, top.column) == ("solve_log", "pr")
    # the head alone still asks for the rating
    top = match_columns("average rating", tables, *enc)[0]
    assert (top.table, top.column) == ("game_log", "rating")


def test_a_modifier_the_memory_never_mentions_is_not_computed(engine):
    # "kayak" is in no round, table or column: the fee column is some other fee
    t = engine.ask("What was my average kayak fee?")
    assert not any(s.tool in ANALYTIC_TOOLS and s.status == "ok" for s in t.steps)
    assert any("kayak" in n for n in t.plan.notes)
    # the name of what the column's unit measures is no unknown thing: litres are a volume
    t = engine.ask("What's the smallest volume changed I logged?")
    assert t.answer.text.startswith(f"{min(r['changed'] for r in CHANGES):g} L"), (t.answer.text, t.plan.notes)
    # in a condition, as asked (capital letter and all), the words are the condition's: the count is made
    t = engine.ask("On how many runs was the parcel weight above 3 kg?")
    assert t.answer.text.startswith(f"{sum(r['weight'] > 3 for r in GROCERIES)} "), (t.answer.text, t.plan.notes)
    # a modifier the rounds use is computed as before ("Late fee" is written in every loan round)
    s = _step(engine.ask("What was my average late fee?"))
    assert _call(s) == ("fee_log", "fee", "avg")
    # the only weight the memory holds, written "Weight" alone: an unknown word before it specifies nothing else
    t = engine.ask("What was my average parcel weight?")
    assert _call(_step(t)) == ("rate_log", "weight", "avg")
    assert any("nothing in the memory mentions 'parcel'" in n and "only weight" in n for n in t.plan.notes), t.plan.notes
    # ... but not when the question asks when the phrase was said: "parcel weight" never was
    t = engine.ask("When did I last mention my parcel weight?")
    assert not any(s.tool in ANALYTIC_TOOLS and s.status == "ok" for s in t.steps), t.plan.notes
    # a count of times the user did something to a thing nothing in the memory holds counts nothing, though a
    # word before it names a table ("fee")
    t = engine.ask("How many times did I log my fee gizmo?")
    assert not any(s.tool in ANALYTIC_TOOLS and s.status == "ok" for s in t.steps), t.plan.notes
    assert any("'gizmo'" in n for n in t.plan.notes), t.plan.notes
    assert _call(_step(engine.ask("How many times did I log my late fee?"))) == ("fee_log", "*", "count")
    # ... also when the question writes it short ("air temp" for the only "Temperature")
    t = engine.ask("What was my average parcel wgt?")
    assert _call(_step(t)) == ("rate_log", "weight", "avg"), t.plan.notes
    # ... but a price is also what the loans' fee is called ("Price"): no single kind, not computed
    t = engine.ask("What was my average tram price?")
    assert not any(s.tool in ANALYTIC_TOOLS and s.status == "ok" for s in t.steps), t.plan
    # an operator word written short ("max", "min", "avg") is how the question asks, never a missing thing
    for q, op in (("What was my latest max fee?", "latest"), ("What was my avg fee?", "avg")):
        t = engine.ask(q)
        assert not any("nothing in the memory mentions" in n for n in t.plan.notes), (q, t.plan.notes)
        assert _call(_step(t))[:2] == ("fee_log", "fee"), q


def test_a_question_word_that_is_a_columns_whole_name_names_it_when_said_of_the_rows():
    import numpy as np

    from conftest import HashEmbedder
    from core.planning.columns import match_columns
    from core.planning.metadata import ColumnMeta, TableMeta

    emb = HashEmbedder()
    # a screen printed "Time 69 min": the duration column's alias is the question word "time"
    tables = [TableMeta("length_log", "One row per length record: length, duration (min).",
                        (ColumnMeta("length", "DOUBLE"), ColumnMeta("duration", "DOUBLE", "min", aliases=("Time",))), 9),
              TableMeta("walk_log", "One row per walk record: distance (km).", (ColumnMeta("distance", "DOUBLE", "km"),), 5)]
    enc = (lambda xs: np.asarray(emb.encode(xs)), lambda q: np.asarray(emb.encode([q])[0]), DEFAULT.lambda_meta)
    for phrase, named in [("sum of time", set()), ("my time", set()), ("time", {"length_log"})]:
        top = match_columns(phrase, tables, *enc, named=named)[0]
        assert (top.table, top.column, top.supported) == ("length_log", "duration", True), phrase
    # "time" as a question word alone ("the first time I ...") names nothing
    assert not any(c.supported for c in match_columns("the time", tables, *enc))


def test_the_questions_verb_of_logging_names_no_column():
    import numpy as np

    from conftest import HashEmbedder
    from core.planning.columns import match_columns
    from core.planning.metadata import ColumnMeta, TableMeta

    emb = HashEmbedder()
    # "logged" is scaffolding: not the "log" of a column alias, nor the "l" of initials with "front"
    tables = [TableMeta("price_log", "One row per price record: total (€), vol (L).",
                        (ColumnMeta("total", "DOUBLE", "€", aliases=("log_amount",)), ColumnMeta("vol", "DOUBLE", "L")), 9),
              TableMeta("tyre_log", "One row per tyre record: fl, rear (bar).",
                        (ColumnMeta("fl", "DOUBLE", "bar"), ColumnMeta("rear", "DOUBLE", "bar")), 9)]
    enc = (lambda xs: np.asarray(emb.encode(xs)), lambda q: np.asarray(emb.encode([q])[0]), DEFAULT.lambda_meta)
    ranked = match_columns("What's the largest volume I ever logged?", tables, *enc)
    assert (ranked[0].table, ranked[0].column) == ("price_log", "vol")
    assert not any(c.supported for c in match_columns("the smallest front I logged", tables, *enc))


def test_a_column_printed_sum_is_the_total_a_question_asks_for():
    import numpy as np

    from conftest import HashEmbedder
    from core.planning.columns import match_columns
    from core.planning.metadata import ColumnMeta, TableMeta

    emb = HashEmbedder()
    # a receipt printed "sum" for its total, beside the tax and the pieces bought
    tables = [TableMeta("piece_log", "One row per piece record: pieces, sum ($), tax ($).",
                        (ColumnMeta("pieces", "DOUBLE"), ColumnMeta("sum", "DOUBLE", "$"), ColumnMeta("tax", "DOUBLE", "$")),
                        29)]
    enc = (lambda xs: np.asarray(emb.encode(xs)), lambda q: np.asarray(emb.encode([q])[0]), DEFAULT.lambda_meta)
    top = match_columns("mean total across all my expenses", tables, *enc, records="expenses")[0]
    assert (top.column, top.supported) == ("sum", True)
    assert match_columns("mean tax across all my expenses", tables, *enc, records="expenses")[0].column == "tax"


def test_records_named_by_a_few_rounds_of_one_table_and_none_of_another_are_its_rows():
    from core.planning.columns import rows_tables

    # a receipt's photo says "hop purchase", its text form only numbers: 4 of 25 rows, no other table
    assert rows_tables({"weight_log": 0.16, "ferm_log": 0.0, "item_log": 0.0}) == {"weight_log"}
    # the same share beside another table that names them too is no evidence
    assert rows_tables({"weight_log": 0.16, "ferm_log": 0.04}) == set()
    assert rows_tables({"weight_log": 0.1, "ferm_log": 0.0}) == set()  # too few to say


def test_records_two_tables_rounds_name_are_counted_in_the_one_holding_the_conditions_quantity(engine):
    # both the grocery runs and the tune-ups are done "at the shop": a weight in kg is only the runs'
    t = engine.ask("How many shop visits had a total over 3 kg?")
    s = _step(t)
    assert _call(s) == ("rate_log", "*", "count")
    assert any("only rate_log holds the condition's quantity" in n for n in t.plan.notes), t.plan.notes
    assert s.value["value"] == sum(1 for r in GROCERIES if r["weight"] > 3)
    s = _step(engine.ask("How many shop visits had more than 2 parts?"))
    assert _call(s) == ("total_log", "*", "count")
    assert s.value["value"] == sum(1 for r in REPAIRS if r["parts"] > 2)


def test_a_word_that_names_a_unit_dimension_is_read_as_that_dimension():
    from core.planning.columns import named_dimension

    assert named_dimension("average flow temp") == "temperature"
    assert named_dimension("total charge duration") == "duration"
    assert named_dimension("mean flow") is None
    assert named_dimension("my water used") is None


@pytest.fixture(scope="module")
def real_engine(tmp_path_factory):
    import torch

    torch.set_num_threads(1)
    from core.encoders.text import MiniLMEncoder, load_minilm

    minilm = MiniLMEncoder(load_minilm())
    path = build_memory(tmp_path_factory.mktemp("rows_real") / "memory.duckdb", minilm)
    con = duckdb.connect(str(path))
    yield QueryEngine(con, minilm, DEFAULT)
    con.close()


@pytest.mark.slow
@pytest.mark.parametrize("question,table,n", [
    # no round says "borrow": the rounds read like the records, and they say "book"
    ("How many times did I borrow books?", "fee_log", len(LOANS)),
])
def test_records_the_rounds_read_like_are_counted_in_their_table(real_engine, question, table, n):
    _assert_counted(real_engine, question, table, n)


@pytest.mark.slow
@pytest.mark.parametrize("question", ["How many dentist visits did I log?", "How many boat trips did I log?",
                                      # a word no round says narrows one they do: other records ("books" are said)
                                      "How many audio books did I borrow?",
                                      # alike in kind, but no row says a word of it: never logged
                                      "How many times did I log my audiobook rentals?"])
def test_records_no_tables_rounds_read_like_count_nothing(real_engine, question):
    t = real_engine.ask(question)
    assert not any(s.tool in ANALYTIC_TOOLS and s.status == "ok" for s in t.steps), t.plan.notes
    assert t.answer.refused


def test_like_table_needs_a_clear_lead():
    from core.planning.columns import like_table

    assert like_table({"a": 0.48, "b": 0.10}) == "a"
    assert like_table({"a": 0.48, "b": 0.46}) is None  # two tables read alike: neither is named
    assert like_table({"a": 0.2, "b": 0.0}) is None  # nothing reads like the phrase
    assert like_table({}) is None


@pytest.mark.parametrize("day,table,column,rows", [
    # "price" names a column of the loans (its alias "Price") and one of the grocery runs: the record of that day
    ("September 3, 2025", "rate_log", "price", GROCERIES),
    ("September 4, 2025", "fee_log", "fee", LOANS),
])
def test_a_value_on_a_day_is_read_from_the_named_column_with_a_record_that_day(engine, day, table, column, rows):
    t = engine.ask(f"What was my price on {day}?")
    s = _step(t)
    assert (s.args["table"], s.args["target_column_expression"]) == (table, column), t.plan.notes
    want = next(r[column] for r in rows if r["time"].strftime("%B %-d, %Y") == day)
    assert s.value["value"] == pytest.approx(want)
    # one record's value is the value, not "on average over 1"
    assert "average" not in t.answer.text and t.answer.text.startswith(f"{want:g}")


def test_a_total_is_the_largest_sum_of_money_whatever_the_table_is_named_after(tmp_path, monkeypatch):
    from conftest import HashEmbedder
    import test_planning_rows as mod

    buys = [dict(vat=1.0 + (i % 3), paid=80.0 + 9.0 * i, time=T0 + timedelta(days=4 * i, hours=2)) for i in range(6)]
    # the table is named after its smaller sum of money (the tax), as a rule-named table may be
    monkeypatch.setattr(mod, "TABLES", {"vat_log": (
        "One row per vat record: vat (€), paid (€).", [("vat", "DOUBLE", "€", ("VAT",)), ("paid", "DOUBLE", "€", ("Paid",))],
        buys, lambda r: f"Bought office supplies. Paid {r['paid']} €, VAT {r['vat']} €.")})
    emb = HashEmbedder()
    con = duckdb.connect(str(build_memory(tmp_path / "memory.duckdb", emb)))
    try:
        eng = QueryEngine(con, emb, DEFAULT)
        s = _step(eng.ask("What was the mean total across all my office supplies?"))
        assert _call(s) == ("vat_log", "paid", "avg")
        assert s.value["value"] == pytest.approx(statistics.mean(r["paid"] for r in buys))
        s = _step(eng.ask("Minimum total across my office supplies?"))
        assert s.value.get("values", [s.value.get("value")])[0] == pytest.approx(min(r["paid"] for r in buys))
    finally:
        con.close()


def _chess_memory(tmp_path, monkeypatch):
    from conftest import HashEmbedder
    import test_planning_rows as mod

    blitz = [dict(gp=6.0 + i % 5, won=float(i % 4), rating=1400.0 + 9 * i, time=T0 + timedelta(days=2 * i, hours=1))
             for i in range(8)]
    games = [dict(length=30.0 + 5 * i, result=("win", "loss", "draw")[i % 3], time=T0 + timedelta(days=2 * i + 1, hours=4))
             for i in range(9)]
    monkeypatch.setattr(mod, "TABLES", {
        "gp_log": ("One row per gp record: gp, won, rating.",
                   [("gp", "DOUBLE", None, ("GP",)), ("won", "DOUBLE", None, ("Won",)), ("rating", "DOUBLE", None, ("Rating",))],
                   blitz, lambda r: f"Blitz session tonight. GP: {r['gp']:g}, Won: {r['won']:g}, rating {r['rating']:g}."),
        "length_log": ("One row per length record: length, result.",
                       [("length", "DOUBLE", None, ("Length",)), ("result", "VARCHAR", None, ("Result",))],
                       games, lambda r: f"Club game: {r['result']}, {r['length']:g} length."),
    })
    emb = HashEmbedder()
    con = duckdb.connect(str(build_memory(tmp_path / "memory.duckdb", emb)))
    return con, QueryEngine(con, emb, DEFAULT), blitz, games


def test_a_word_naming_a_count_column_and_a_category_value_is_read_by_the_records_named(tmp_path, monkeypatch):
    con, eng, blitz, games = _chess_memory(tmp_path, monkeypatch)
    try:
        # "wins" of the blitz sessions: their count printed "Won" (a verb form's lemma names it), not the games
        # whose result is "win"
        s = _step(eng.ask("Maximum wins over all my blitz sessions?"))
        assert (s.args["table"], s.args["target_column_expression"]) == ("gp_log", "won")
        assert s.value["values"][0] == max(r["won"] for r in blitz)
        # the word is all the question asks about, and a number column is named by it: that column
        s = _step(eng.ask("What's the smallest wins I logged?"))
        assert (s.args["table"], s.args["target_column_expression"]) == ("gp_log", "won")
        # a value that filters rows still does when something else is asked of them
        s = _step(eng.ask("What was my average length for win?"))
        assert (s.args["table"], s.args["target_column_expression"]) == ("length_log", "length")
        assert s.value["value"] == pytest.approx(statistics.mean(r["length"] for r in games if r["result"] == "win"))
    finally:
        con.close()


def test_a_compound_label_written_as_printed_names_its_column():
    import numpy as np

    from core.planning.columns import match_columns
    from core.planning.metadata import ColumnMeta, TableMeta

    # a mite board prints "Mites" and "Mites/day"; the encoder finds "mites" closest to the words
    def embed(texts):
        return np.asarray([[1.0, 0.0] if "day" not in t else [0.7, 0.714] for t in texts])
    enc = (embed, lambda q: np.asarray([1.0, 0.0]), DEFAULT.lambda_meta)
    tables = [TableMeta("mite_log", "One row per mite record: mites, mites day, period.",
                        (ColumnMeta("mites", "DOUBLE"), ColumnMeta("mites_day", "DOUBLE", aliases=("Mites/day",)),
                         ColumnMeta("period", "DOUBLE")), 9)]
    for q in ("What was my highest mites/day?", "Latest Mites / day I logged?"):
        assert match_columns(q, tables, *enc)[0].column == "mites_day", q
    # the words alone ask for the mites
    assert match_columns("What was my highest mite count?", tables, *enc)[0].column == "mites"


@pytest.mark.slow
def test_a_column_clearly_nearest_the_words_by_meaning_before_the_one_the_table_is_named_after(tmp_path, monkeypatch):
    import torch

    import test_planning_rows as mod
    from core.encoders.text import MiniLMEncoder, load_minilm

    torch.set_num_threads(1)
    gas = [dict(consumption=3.0 + 0.4 * (i % 6), flow_temp=55.0 + 2 * (i % 5), time=T0 + timedelta(days=3 * i, hours=2))
           for i in range(8)]
    # a table named after a temperature (as rules may name it) whose rounds are gas readings
    monkeypatch.setattr(mod, "TABLES", {"temp_log": (
        "One row per temp record: consumption (m³), flow temp (°C).",
        [("consumption", "DOUBLE", "m³", ("Consumption",)), ("flow_temp", "DOUBLE", "°C", ("Flow temp",))],
        gas, lambda r: f"Gas reading: consumption {r['consumption']} m³, flow temp {r['flow_temp']:g} °C.")})
    minilm = MiniLMEncoder(load_minilm())
    con = duckdb.connect(str(build_memory(tmp_path / "memory.duckdb", minilm)))
    try:
        s = _step(QueryEngine(con, minilm, DEFAULT).ask("What was my average gas used?"))
        assert _call(s) == ("temp_log", "consumption", "avg")
        assert s.value["value"] == pytest.approx(statistics.mean(r["consumption"] for r in gas))
    finally:
        con.close()


def test_the_words_of_the_description_template_name_nothing():
    from core.planning.columns import description_words

    # "Its rounds also mention ..." is the template: a question "when did I last mention X" shares no word with
    # every table, only with the words the rounds do mention
    words = description_words("One row per usage record: meter (kWh), produced (kWh). Its rounds also mention "
                              "solar, panel. First recorded 12 Nov 2025. Read from images and text.")
    assert not {"mention", "round", "rounds", "its"} & set(words)
    assert {"solar", "panel", "meter", "produc"} <= set(words)  # (tokens are stems)


def test_a_noun_before_time_asks_the_duration_of_the_records_it_names_not_their_text():
    import numpy as np

    from conftest import HashEmbedder
    from core.planning.columns import match_columns
    from core.planning.metadata import ColumnMeta, TableMeta

    emb = HashEmbedder()
    # an oven log: "Bake: scones, FLR 287 g, Duration 59 m"; "bake time" is the duration of the bakes
    tables = [TableMeta("bake_log", "One row per bake record: duration (min), baked, flr (g).",
                        (ColumnMeta("duration", "DOUBLE", "min"), ColumnMeta("flr", "DOUBLE", "g"),
                         ColumnMeta("baked", "VARCHAR", samples=("scones", "rye loaf"), aliases=("bake", "Bake"))), 9),
              TableMeta("sale_log", "One row per sale record: sales (€), units.",
                        (ColumnMeta("sales", "DOUBLE", "€"), ColumnMeta("units", "DOUBLE")), 9)]
    enc = (lambda xs: np.asarray(emb.encode(xs)), lambda q: np.asarray(emb.encode([q])[0]), DEFAULT.lambda_meta)
    ranked = match_columns("latest bake time i logged?", tables, *enc, dtypes=("DOUBLE", "VARCHAR"))
    best = next(c for c in ranked if c.supported)
    assert (best.table, best.column) == ("bake_log", "duration")
    # what was baked is still the text column
    best = next(c for c in match_columns("which bake", tables, *enc, dtypes=("DOUBLE", "VARCHAR")) if c.supported)
    assert best.column == "baked"


def test_a_category_value_names_the_table_whose_measure_is_meant(engine):
    # "chain" is a kind of repair: the repairs' own amount (total €), not the groceries' price, with the filter kept
    t = engine.ask("What was my average price for chain?")
    s = _step(t)
    assert _call(s) == ("total_log", "total", "avg"), t.plan.notes
    want = [r["total"] for r in REPAIRS if r["kind"] == "chain"]
    assert s.value["n_rows"] == len(want) and s.value["value"] == pytest.approx(statistics.mean(want))
    assert not any("ignored" in n for n in t.plan.notes)
    # without a category the price is the groceries'
    assert _call(_step(engine.ask("What was my average price?")))[:2] == ("rate_log", "price")


def test_a_condition_in_a_unit_is_not_counted_on_rows_the_question_does_not_name(engine):
    # (a guard for the rule that counts "print jobs over 0.18 mm" in the print table that has millimetres,
    # not the resin prints' one the rounds' words chose: the rows counted must still be the ones named)
    # "grocery runs" are rows of rate_log, and only it has a weight in kg: counted there
    t = engine.ask("How many grocery runs had a weight above 2.5 kg?")
    s = _step(t)
    assert _call(s) == ("rate_log", "*", "count")
    assert s.value["n_rows"] == sum(r["weight"] > 2.5 for r in GROCERIES)
    # loans have no weight: their rows are not counted by the groceries' weight
    t = engine.ask("How many library loans had a weight above 2.5 kg?")
    assert not any(s.tool in ANALYTIC_TOOLS and s.status == "ok" and s.args.get("table") == "rate_log"
                   and s.args.get("operator") == "count" for s in t.steps) or "loan" in t.answer.text.lower(), \
        (t.answer.text, t.plan.notes)


def test_rows_without_a_quantity_of_the_kind_asked_hold_no_answer(engine):
    # the loans hold a fee in € and pages, the water changes litres: no time of theirs to take the minimum of
    for q in ("Minimum time across my library loans?", "What's the total time over all my library loans?",
              "Minimum time across my water changes?"):
        t = engine.ask(q)
        assert not any(s.tool in ANALYTIC_TOOLS and s.status == "ok" for s in t.steps), (q, t.answer.text)
        assert "€" not in t.answer.text and " L" not in t.answer.text, (q, t.answer.text)
    # a quantity of the rows the question names in the kind asked is still taken
    s = _step(engine.ask("What was my average weight across my grocery runs?"))
    assert _call(s) == ("rate_log", "weight", "avg")


def test_a_stem_abbreviates_a_name_only_as_the_word_said_does():
    from core.planning.columns import query_tokens

    # "milling" stems to "mill", which begins "millimetre" (a column's unit): the word said does not shorten it
    assert "millimetre" not in query_tokens("CNC milling", ["lh", "millimetre", "mm"])
    # the words said, or said with a plural "s", still shorten names ("temp", "temps" for temperature)
    assert "temperature" in query_tokens("average temp", ["temperature"])
    assert "temperature" in query_tokens("average temps", ["temperature"])
