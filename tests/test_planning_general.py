"""The planner on memories of other domains: questions matched to columns by meaning, not by any one
history's words.

Small hand-built memories (plants, invoices, chess) follow the materialization contract (schemas rows,
one table per schema, memory_tables, observations with their labels as written, field_aliases, a
retrieval hierarchy of events). Each test asks through the engine and checks the plan's tool call,
the computed value (from the Python rows) and the answer text.
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

T0 = datetime(2026, 3, 2, 9, 0)


def _rows(n, make):
    return [dict(make(i), time=T0 + timedelta(days=2 * i, hours=i % 5)) for i in range(n)]


# table -> (description, [(column, dtype, unit, description, labels as written, raw attribute)], rows)
PLANTS = _rows(14, lambda i: {"weight_g": 120.0 + 17 * i % 90, "moist_pct": 30.0 + (7 * i) % 25,
                              "plant": ("tomato", "basil", "chard")[i % 3]})
INVOICES = _rows(12, lambda i: {"amount": 40.0 + 13.5 * (i % 7), "qty": float(2 + i % 5),
                                "parcel_kg": 1.0 + 0.4 * (i % 6), "h_fee": 2.0 + 0.5 * (i % 3)})
GAMES = _rows(11, lambda i: {"moves": float(30 + (11 * i) % 45), "duration_min": 18.0 + (23 * i) % 50,
                             "rating": 1500.0 + 9 * i - (i % 3) * 14})
SHEETS = _rows(9, lambda i: {"hours_worked": 6.0 + (i % 4) * 0.5, "jobs": float(1 + i % 3)})
TABLES = {
    "harvest_log": ("One row per harvest record: weight (g), moisture (%), plant.", [
        ("weight_g", "DOUBLE", "g", "", ("Wt", "weight"), "wt"),
        ("moist_pct", "DOUBLE", "%", "", ("Moist.", "Soil moisture"), "moist"),
        ("plant", "VARCHAR", None, "", ("plant",), None)], PLANTS),
    "invoice_log": ("One row per invoice record: amount (€), qty, parcel (kg).", [
        ("amount", "DOUBLE", "€", "", ("Amount due", "Total €"), "amount_due"),
        ("qty", "DOUBLE", None, "", ("Qty", "Items"), "items"),
        ("parcel_kg", "DOUBLE", "kg", "", ("Parcel", "Shipping weight"), None),
        ("h_fee", "DOUBLE", "€", "", ("H-fee",), None)], INVOICES),
    "game_log": ("One row per game record: moves, duration (min), rating.", [
        ("moves", "DOUBLE", None, "", ("Moves",), None),
        ("duration_min", "DOUBLE", "min", "", ("Time", "Game time"), "game_time"),
        ("rating", "DOUBLE", None, "", ("Elo", "Rating"), "elo")], GAMES),
    "timesheet_log": ("One row per timesheet record: hours worked (h), jobs.", [
        ("hours_worked", "DOUBLE", "h", "", ("Hours", "Worked"), "hours"),
        ("jobs", "DOUBLE", None, "", ("Jobs",), None)], SHEETS),
}
# the field each table would be named after by its fields alone (the materializer's `main` flag)
MAIN = {"weight_g"}
# quantities that live only in a few one-off rounds (no table): a vet bill paid three times
ONE_OFF = [(datetime(2026, 3, 5, 18), "I paid the vet bill today, 84.50 dollars for the checkup.", 84.5),
           (datetime(2026, 3, 19, 18), "Another vet bill: 120 dollars, the cat needed a vaccine.", 120.0),
           (datetime(2026, 4, 9, 18), "Vet bill came to 45.25 dollars for the follow-up.", 45.25)]
# a thing said of once, its number read under a column name of a table it is no row of
MILL = (datetime(2026, 3, 12, 9), "Paid 150 euros for a new grain mill.", "amount", 150.0, "€")


def build_general_memory(path: Path, embedder, tables: dict | None = None) -> Path:
    """The memory of `tables` (TABLES by default; a table's spec may end with how its rounds begin, else
    "<name> note")."""
    tables = TABLES if tables is None else tables
    store = Store(path)
    con = store.con
    rounds = []  # (time, text, table, row)
    for name, (_, cols, rows, *intro) in tables.items():
        for r in rows:
            parts = [f"{cols[k][4][0]} {r[c]}" for k, c in enumerate(x[0] for x in cols)]
            if "extra" in r:  # a quantity said beside the record's fields in a few rounds, held by no table
                parts.append(f"{r['extra'][3]} {r['extra'][1]:g}")
            said = intro[0](r) if intro and callable(intro[0]) else intro[0] if intro else name.split('_')[0] + ' note'
            rounds.append((r["time"], f"user: {said}: "
                           + ", ".join(parts), name, r))
    for t, text, v in ONE_OFF:
        rounds.append((t, f"user: {text}", None, {"obs": ("vet_bill", v, "$", "vet bill")}))
    rounds.append((MILL[0], f"user: {MILL[1]}", None, {"obs": (MILL[2], MILL[3], MILL[4], "")}))
    rounds.append((datetime(2026, 3, 14, 9), "user: The courier came late again today.", None, {"obs": None}))
    rounds.sort(key=lambda x: x[0])
    con.execute("BEGIN TRANSACTION")
    days = {}
    for order, (t, text, table, row) in enumerate(rounds, start=1):
        sid = days.setdefault(t.date(), f"S{len(days) + 1}")
        rid = f"{sid}:R{order}"
        row["round_id"], row["round_order"] = rid, order
        if order == 1 or sid not in [d for d in list(days.values())[:-1]]:
            con.execute("INSERT INTO sessions VALUES (?, ?, 'fixture', NULL) ON CONFLICT DO NOTHING", [sid, t.date()])
        con.execute("INSERT INTO rounds (round_id, session_id, round_order, index_in_session, time, dialogue, text, "
                    "content_hash, source) VALUES (?, ?, ?, 0, ?, ?, ?, ?, 'fixture')",
                    [rid, sid, order, t, json.dumps([text.split(": ", 1)]), text,
                     hashlib.sha1(text.encode()).hexdigest()])
        seq = 0
        if table is None and row["obs"] is None:
            continue
        if table is None:
            attr, v, unit, label = row["obs"]
            con.execute("INSERT INTO observations (round_id, seq, attribute, raw_value, number, unit, value_kind, "
                        "source, label, extractor, raw_attribute) VALUES (?, 0, ?, ?, ?, ?, 'number', "
                        "'text', ?, 'rules', ?)", [rid, attr, str(v), v, unit, label, attr])
            continue
        for k, (c, dtype, unit, _, labels, raw) in enumerate(tables[table][1]):
            label = labels[order % len(labels)]
            con.execute("INSERT INTO observations (round_id, seq, attribute, raw_value, number, unit, value_kind, "
                        "source, label, extractor, text_value, raw_attribute) VALUES (?, ?, ?, ?, ?, ?, ?, 'text', ?, "
                        "'rules', ?, ?)",
                        [rid, seq, c, str(row[c]), row[c] if dtype == "DOUBLE" else None, unit,
                         "number" if dtype == "DOUBLE" else "text", label,
                         row[c] if dtype == "VARCHAR" else None, raw or c])
            seq += 1
        if "extra" in row:
            attr, v, unit, label = row["extra"]
            con.execute("INSERT INTO observations (round_id, seq, attribute, raw_value, number, unit, value_kind, "
                        "source, label, extractor, raw_attribute) VALUES (?, ?, ?, ?, ?, ?, 'number', 'text', ?, "
                        "'rules', ?)", [rid, seq, attr, f"{v:g}", v, unit, label, attr])
    for sid, (name, (desc, cols, rows, *_)) in enumerate(tables.items(), start=1):
        defs = ", ".join(f"{c} {d}" for c, d, *_ in cols)
        con.execute(f"CREATE TABLE {name}(source VARCHAR, round_order INTEGER, time TIMESTAMP, captions VARCHAR, {defs})")
        for r in rows:
            con.execute(f"INSERT INTO {name} VALUES (?, ?, ?, NULL{', ?' * len(cols)})",
                        [r["round_id"], r["round_order"], r["time"]] + [r[c] for c, *_ in cols])
        con.execute("INSERT INTO schemas VALUES (?, ?, ?, ?, ?, 1, 1)",
                    [sid, json.dumps([c for c, *_ in cols]), name, desc,
                     json.dumps([{"name": c, "dtype": d, "unit": u, "description": cd, "main": c in MAIN}
                                 for c, d, u, cd, *_ in cols])])
        for c, _, _, _, _, raw in cols:
            if raw and raw != c:
                con.execute("INSERT INTO field_aliases VALUES (?, ?, 1, 0.8, '{}', 'auto')", [raw, c])
    counts = " ".join(f"WHEN '{n}' THEN (SELECT count(*) FROM {n})" for n in tables)
    con.execute(f"CREATE VIEW memory_tables AS SELECT s.table_name, s.description, CASE s.table_name {counts} END "
                f"AS n_rows FROM schemas s")
    con.execute("INSERT INTO nodes (node_id, level, parent_id, description, text_emb, n_members) VALUES "
                "('T1', 'topic', NULL, 'notes', ?, 1)", [embedder.encode(["notes"])[0].tolist()])
    weeks: dict[int, list] = {}
    for order, (t, text, _, row) in enumerate(rounds, start=1):
        weeks.setdefault(t.isocalendar()[1], []).append((row["round_id"], t, text, order))
    for wk, evs in weeks.items():
        desc = " ".join(e[2] for e in evs)[:400]
        con.execute("INSERT INTO nodes (node_id, level, parent_id, description, text_emb, t_start, t_end, first_order, "
                    "last_order, n_members, closed) VALUES (?, 'episode', 'T1', ?, ?, ?, ?, ?, ?, ?, true)",
                    [f"E{wk}", desc, embedder.encode([desc])[0].tolist(), evs[0][1], evs[-1][1], evs[0][3],
                     evs[-1][3], len(evs)])
        for rid, t, text, order in evs:
            con.execute("INSERT INTO nodes (node_id, level, parent_id, description, text_emb, t_start, t_end, "
                        "first_order, last_order, n_members, closed, round_id) "
                        "VALUES (?, 'event', ?, ?, ?, ?, ?, ?, ?, 1, true, ?)",
                        [f"ev:{rid}", f"E{wk}", text, embedder.encode([text])[0].tolist(), t, t, order, order, rid])
    con.execute("COMMIT")
    store.close()
    return path


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    from conftest import HashEmbedder

    emb = HashEmbedder()
    path = build_general_memory(tmp_path_factory.mktemp("general") / "memory.duckdb", emb)
    con = duckdb.connect(str(path))
    yield QueryEngine(con, emb, DEFAULT)
    con.close()


def _step(trace):
    steps = [s for s in trace.steps if s.tool in ANALYTIC_TOOLS and s.status == "ok"]
    assert steps, (trace.plan.intent, trace.plan.notes, trace.answer.text)
    return steps[-1]


def _call(s):
    return (s.args.get("table"), s.args.get("target_column_expression"), s.args.get("operator"))


# ---------------------------------------------------------------------- count rows vs sum a column
def test_how_many_records_counts_rows(engine):
    t = engine.ask("How many harvests did I log in total?")
    s = _step(t)
    assert _call(s) == ("harvest_log", "*", "count") and s.value["n_rows"] == len(PLANTS)
    assert t.answer.text.startswith(f"{len(PLANTS)} harvests")


def test_how_many_units_sums_the_column_of_that_unit(engine):
    t = engine.ask("How many grams did I harvest in total?")
    s = _step(t)
    assert _call(s) == ("harvest_log", "weight_g", "sum")
    assert s.value["value"] == pytest.approx(sum(r["weight_g"] for r in PLANTS))
    # the answer a person can check: value, unit, records in their own noun, the period
    assert f"{len(PLANTS)} harvests" in t.answer.text and " g " in t.answer.text


def test_how_many_of_a_column_named_by_its_label_sums_it(engine):
    # "items" is a label as written for qty: the counted noun is the column, not the rows
    s = _step(engine.ask("How many items did I order in total?"))
    assert _call(s) == ("invoice_log", "qty", "sum")
    assert s.value["value"] == pytest.approx(sum(r["qty"] for r in INVOICES))


def test_how_many_records_with_a_condition_counts_them(engine):
    s = _step(engine.ask("How many games had more than 40 moves?"))
    assert _call(s)[0] == "game_log" and s.args["operator"] == "count"
    assert s.value["n_rows"] == sum(1 for r in GAMES if r["moves"] > 40)


# ---------------------------------------------------------------------- units and aliases
def test_unit_in_the_question_is_a_hard_constraint_and_converts(engine):
    s = _step(engine.ask("What was the total weight of my harvests in kg?"))
    assert s.args["table"] == "harvest_log" and s.args["target_column_expression"].startswith("weight_g")
    assert s.value["unit"] == "kg"
    assert s.value["value"] == pytest.approx(sum(r["weight_g"] for r in PLANTS) / 1000)


def test_unit_names_the_column_among_tables(engine):
    s = _step(engine.ask("What was the heaviest parcel in kilograms?"))
    assert (s.tool, s.args["table"], s.args["target_column_expression"]) == ("Rank", "invoice_log", "parcel_kg")
    assert s.value["values"][0] == max(r["parcel_kg"] for r in INVOICES)


def test_label_as_written_reaches_its_column(engine):
    s = _step(engine.ask("What was my average soil moisture?"))
    assert _call(s) == ("harvest_log", "moist_pct", "avg")
    assert s.value["value"] == pytest.approx(statistics.mean(r["moist_pct"] for r in PLANTS))


def test_abbreviated_alias_reaches_its_column(engine):
    # the column is "qty"; the question says "quantity"
    s = _step(engine.ask("What was the average quantity on my invoices?"))
    assert _call(s) == ("invoice_log", "qty", "avg")
    # the rating column is known by the label "Elo" too
    s = _step(engine.ask("What was my latest Elo?"))
    assert _call(s) == ("game_log", "rating", "latest")


def test_trace_shows_the_candidate_columns_and_their_scores(engine):
    s = _step(engine.ask("What was my average soil moisture?"))
    note = next(n for n in s.notes if n.startswith("columns by meaning"))
    assert "harvest_log.moist_pct h=" in note and "cos" in note and "bm25" in note


# ---------------------------------------------------------------------- general intents
def test_per_record_is_an_average_over_its_records(engine):
    s = _step(engine.ask("How many items per invoice did I order?"))
    assert _call(s) == ("invoice_log", "qty", "avg")
    assert s.value["value"] == pytest.approx(statistics.mean(r["qty"] for r in INVOICES))


def test_longest_is_a_duration_unless_a_distance_is_named(engine):
    s = _step(engine.ask("What was my longest game?"))
    assert (s.tool, s.args["target_column_expression"], s.args["order"]) == ("Rank", "duration_min", "desc")
    assert s.value["values"][0] == max(r["duration_min"] for r in GAMES)


@pytest.mark.parametrize("question,op,row", [("What was my latest rating?", "latest", -1),
                                             ("What was my first rating?", "first", 0)])
def test_latest_and_first_put_the_deciding_round_first(engine, question, op, row):
    t = engine.ask(question)
    s = _step(t)
    assert _call(s) == ("game_log", "rating", op)
    want = sorted(GAMES, key=lambda r: r["time"])[row]
    assert s.value["value"] == want["rating"]
    assert t.evidence_rounds[0] == want["round_id"]


def test_extreme_puts_its_row_first(engine):
    t = engine.ask("Which invoice had the highest amount?")
    top = max(INVOICES, key=lambda r: (r["amount"], -r["time"].timestamp()))
    assert t.evidence_rounds[0] == top["round_id"]


# ---------------------------------------------------------------------- rare quantities
def test_a_quantity_no_table_holds_is_computed_from_the_rounds_that_mention_it(engine):
    t = engine.ask("How much did I pay for vet bills in total?")
    assert t.plan.intent.endswith("->observations"), (t.plan.intent, t.plan.notes)
    assert any("no table holds vet_bill" in n for n in t.plan.notes)
    total = sum(v for _, _, v in ONE_OFF)
    assert f"{total:g}" in t.answer.text.replace(",", ""), t.answer.text
    assert "3 rounds" in t.answer.text


def test_a_thing_said_of_once_outside_the_table_is_read_from_its_round(engine):
    # "mill" names no table, column or value, and no invoice round says it: the round that does answers
    t = engine.ask("What was the amount for the mill?")
    assert t.plan.intent.endswith("->observations"), (t.plan.intent, t.plan.notes)
    note = next(n for n in t.plan.notes if "'mill' is said only in 1 round(s)" in n)
    assert t.answer.text.startswith("150 €") and "1 round that mentions mill" in t.answer.text, t.answer.text
    assert f"({t.answer.rounds[0]})" in note  # the deciding round first
    # a round that says the word but holds no amount is no answer: the table's decision stands
    t = engine.ask("What was the amount for the courier?")
    assert not t.plan.intent.endswith("->observations"), (t.plan.intent, t.plan.notes)
    # a word the table's own rows say is no one-off: the table answers
    t = engine.ask("What was my latest invoice amount?")
    assert _call(_step(t))[:2] == ("invoice_log", "amount") and not t.plan.intent.endswith("->observations")


# ---------------------------------------------------------------------- computed intents never answer with text
@pytest.mark.parametrize("question", ["What was my average tide height?", "What was my highest wave period?",
                                      "How many sunsets did I photograph?",
                                      "What tide height did I log on March 5, 2026?",
                                      "What wave period did my harvests show?"])
def test_a_computed_intent_without_a_column_refuses_instead_of_quoting_a_round(engine, question):
    t = engine.ask(question)
    assert not any(s.tool in ANALYTIC_TOOLS and s.status == "ok" for s in t.steps)
    assert t.answer.refused and t.answer.text.startswith("Not mentioned"), t.answer.text


def test_operator_words_are_not_entities_the_evidence_must_mention():
    from core.planning.span import frame

    for q, want in [("What was my average odometer?", ("odomet",)), ("What was my highest rating?", None),
                    ("What was my latest Elo?", None)]:
        ents = frame(q).entities
        assert all(not ({"averag", "highest", "latest"} & set(ch)) for ch in ents), ents
        if want:
            assert any(ch[-1].startswith(want[0][:5]) for ch in ents), ents


def test_a_capitalized_word_opening_a_second_sentence_is_not_a_name():
    from core.planning.span import frame

    assert "Give" not in frame("Which game had the fewest moves? Give the date.").names
    assert "Leo" in frame("Which game did I play with Leo?").names


def test_give_the_date_asks_for_a_date(engine):
    t = engine.ask("Which game had the fewest moves? Give the date.")
    s = _step(t)
    assert s.tool == "Rank" and s.args["order"] == "asc"
    low = min(GAMES, key=lambda r: (r["moves"], r["time"]))
    assert t.answer.text.startswith(low["time"].strftime("%B")), t.answer.text


def test_numbers_keep_the_precision_they_were_written_with():
    from core.planning.answer import fmt_num

    assert fmt_num(1.641) == "1.641" and fmt_num(0.29) == "0.29" and fmt_num(7.0) == "7"
    assert fmt_num(93402.22) == "93402.22" and fmt_num(64.333333) == "64.33"
    assert abs(float(fmt_num(1.7263)) - 1.7263) < 0.0005


def test_when_did_i_last_is_not_refused_for_want_of_a_column(engine):
    # the date of an event comes from the rounds; only a computed number needs a column
    t = engine.ask("When did I last visit the dentist?")
    assert not t.answer.text.startswith("Not mentioned: no records hold"), t.answer.text


def test_an_average_is_said_over_the_records_the_question_names(engine):
    # the rows are games; the question calls them matches: the answer counts them in its words
    t = engine.ask("Averaged over every match, what was the rating?")
    assert _call(_step(t))[:2] == ("game_log", "rating")
    assert f"over {len(GAMES)} matches" in t.answer.text, t.answer.text
    t = engine.ask("What was my average rating?")  # no records named: the table's own noun
    assert f"over {len(GAMES)} games" in t.answer.text, t.answer.text


def test_a_condition_only_another_tables_rows_can_meet_is_not_dropped_silently(engine):
    # the moisture is a harvest's, the rating a game's: no game has a moisture, so nothing is averaged
    t = engine.ask("When the moisture was over 40%, what was my mean rating?")
    assert not any(s.tool in ANALYTIC_TOOLS and s.status == "ok" for s in t.steps), (t.plan.notes, t.answer.text)
    assert t.answer.refused and any("the condition is on harvest_log" in n for n in t.plan.notes), t.plan.notes
    # the condition in the measured rows' own table is applied as before
    s = _step(engine.ask("When the moisture was over 40%, what was my mean weight?"))
    assert _call(s)[:2] == ("harvest_log", "weight_g") and s.args["optional_column_filters"]


def test_a_quantity_no_column_names_is_not_guessed_among_like_columns_of_the_rows(engine):
    # "sold" names no column of the harvests, and nothing tells weight from moisture: no guess
    t = engine.ask("What was my average sold across all my harvests?")
    assert not any(s.tool in ANALYTIC_TOOLS and s.status == "ok" for s in t.steps), (t.plan.notes, t.answer.text)
    assert t.answer.refused
    # "how much" asks an amount: the harvests' weight, the one amount among them
    s = _step(engine.ask("How much did my harvests come to in total?"))
    assert _call(s) == ("harvest_log", "weight_g", "sum")


def test_a_word_asked_of_a_named_day_is_answered_alone(engine):
    # the question names the day: the plant alone, not "basil on March 5, 2026" (a number keeps its day)
    row = PLANTS[4]
    day = f"{row['time']:%B} {row['time'].day}, {row['time'].year}"
    t = engine.ask(f"Which plant did my harvest on {day} have?")
    assert t.answer.text == row["plant"], (t.answer.text, t.plan.notes)
    t = engine.ask(f"What was my weight on {day}?")
    assert t.answer.text.startswith(f"{row['weight_g']:g} g") and day in t.answer.text, t.answer.text


def test_the_rows_named_without_a_column_read_the_tables_main_field(engine):
    """"my average harvest": no column is named, the rows are; the field the table would be named after by
    its fields alone (weight, not moisture) is what a harvest measures."""
    t = engine.ask("What was my average harvest?")
    assert _call(_step(t)) == ("harvest_log", "weight_g", "avg"), (t.plan.notes, t.answer.text)
    assert abs(_step(t).value["value"] - statistics.mean(r["weight_g"] for r in PLANTS)) < 1e-6


def test_how_many_times_names_no_table_by_the_prefix_of_its_name(engine):
    """"times" counts occasions: a thing never said in the memory is not counted over a timesheet table
    because "time" begins its name; the timesheets themselves are counted."""
    t = engine.ask("How many times did I log my gym memberships?")
    assert not [s for s in t.steps if s.tool in ANALYTIC_TOOLS], (t.plan.notes, t.answer.text)
    t = engine.ask("How many timesheets did I log?")
    assert _call(_step(t)) == ("timesheet_log", "*", "count") and _step(t).value["value"] == len(SHEETS)


@pytest.mark.parametrize("question", ["Considering all the rounds, what is my latest view on the courier?",
                                      "Currently, do I still use the courier?",
                                      "Has my opinion of the courier changed?"])
def test_a_latest_or_change_asked_in_words_is_read_from_the_rounds_not_refused_for_want_of_a_column(engine, question):
    """The asking clause may follow a circumstance, or the question may ask whether: the retrieved text
    answers either; "no table holds values to compute over" is for a quantity only."""
    t = engine.ask(question)
    assert any(s.tool == "SemanticMatch" and s.status == "ok" for s in t.steps), t.plan
    assert not any("no table holds values" in n for n in t.answer.notes), t.answer.notes


def test_a_name_of_a_letter_and_a_word_is_named_by_a_word_of_that_letter_before_the_word(engine):
    # "H-fee" on every invoice; the question writes the letter out ("handling"), which no round says
    t = engine.ask("What was my average handling fee?")
    s = _step(t)
    assert _call(s) == ("invoice_log", "h_fee", "avg"), t.plan.notes
    assert s.value["value"] == pytest.approx(statistics.mean(r["h_fee"] for r in INVOICES))
    # a word of another letter is still some other fee, which the memory never mentions
    t = engine.ask("What was my average kayak fee?")
    assert not any(s.tool in ANALYTIC_TOOLS and s.status == "ok" for s in t.steps), t.plan.notes


def test_lettered_names():
    from core.planning.columns import lettered_name, question_words

    assert lettered_name("b_rating", question_words("my lowest blitz rating"))
    assert lettered_name("h_fee", question_words("average handling fees"))
    # the letter must begin the word right before, a word of three letters or more
    assert not lettered_name("b_rating", question_words("my lowest puzzle rating"))
    assert not lettered_name("b_rating", question_words("by rating"))
    assert not lettered_name("rating", question_words("blitz rating"))


def _engine_of(tmp_path_factory, name: str, tables: dict):
    """A module fixture's engine over the memory of `tables` (hashed-word embedder), closed after."""
    from conftest import HashEmbedder

    emb = HashEmbedder()
    con = duckdb.connect(str(build_general_memory(tmp_path_factory.mktemp(name) / "memory.duckdb", emb, tables)))
    yield QueryEngine(con, emb, DEFAULT)
    con.close()


BAKES = _rows(8, lambda i: {"bake_duration": 30.0 + (7 * i) % 25, "oven": 200.0 + 10 * (i % 4)})
DOUGHS = _rows(10, lambda i: {"bulk_duration": 90.0 + (37 * i) % 200, "dough_temp": 22.0 + (i % 5)})
BAKING = {
    "bake_log": ("One row per bake record: bake duration (min), oven (°C).", [
        ("bake_duration", "DOUBLE", "min", "", ("Bake time",), None),
        ("oven", "DOUBLE", "°C", "", ("Oven",), None)], BAKES, "Baked a loaf today"),
    "bulk_log": ("One row per bulk record: bulk duration (min), dough temp (°C).", [
        ("bulk_duration", "DOUBLE", "min", "", ("Bulk",), None),
        ("dough_temp", "DOUBLE", "°C", "", ("Dough temp",), None)], DOUGHS, "Proofing"),
}


@pytest.fixture(scope="module")
def baking(tmp_path_factory):
    yield from _engine_of(tmp_path_factory, "baking", BAKING)


def test_a_noun_before_time_asks_the_duration_of_the_records_it_names_not_any_duration(baking):
    # "proof" names no column; the rounds that say "Proofing" are the bulk log's: its duration, not the bakes'
    # (whose label "Bake time" shares only "time" with the question)
    t = baking.ask("When did I log my highest proof time?")
    s = _step(t)
    assert _call(s)[:2] == ("bulk_log", "bulk_duration"), t.plan.notes
    top = max(DOUGHS, key=lambda r: r["bulk_duration"])
    assert s.value["values"][0] == top["bulk_duration"]
    # "bake" names the bakes' own duration
    assert _call(_step(baking.ask("What was my latest bake time?")))[:2] == ("bake_log", "bake_duration")


WRITINGS = _rows(12, lambda i: {"fixes": float(5 + (7 * i) % 20), "duration": 20.0 + (11 * i) % 40,
                                "word_count": float(150 + 41 * i)})
REVIEWS = _rows(9, lambda i: {"accuracy": 70.0 + (3 * i) % 25, "cards": 100.0 + (13 * i) % 90,
                              "duration": 15.0 + (5 * i) % 30, "new": float(3 + i % 7)})
LESSONS = _rows(10, lambda i: {"points": 40.0 + (17 * i) % 300, "lessons_done": float(1 + i % 6)})
STUDY = {
    # named after a field, its rows said "Writing practice" but for one screenshot of "my writing exercise"
    "fixe_log": ("One row per fixe record: fixes, duration (min).", [
        ("fixes", "DOUBLE", None, "", ("Fixes",), None),
        ("duration", "DOUBLE", "min", "", ("Time (mins)",), None),
        ("word_count", "DOUBLE", None, "", ("Words",), None)], WRITINGS,
        lambda r: "Screenshot of my writing exercise" if r is WRITINGS[3] else "Writing practice"),
    "review_log": ("One row per review record: accuracy (%), cards, duration (min).", [
        ("accuracy", "DOUBLE", "%", "", ("Accuracy (%)",), None),
        ("cards", "DOUBLE", None, "", ("Cards",), None),
        ("duration", "DOUBLE", "min", "", ("Duration (mins)",), None),
        ("new", "DOUBLE", None, "", ("New.",), None)], REVIEWS, "Vocabulary session"),
    "point_log": ("One row per point record: points, lessons done.", [
        ("points", "DOUBLE", None, "", ("Points",), None),
        ("lessons_done", "DOUBLE", None, "", ("Lessons",), None)], LESSONS, "Lessons today"),
}


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    yield from _engine_of(tmp_path_factory, "study", STUDY)


def test_time_asked_of_named_records_is_their_duration_whatever_its_label(study):
    # "Time (mins)": the unit in brackets is no word of the name; the rows are the writing practice's,
    # though one round only says "writing exercise"
    s = _step(study.ask("Averaged over every writing exercise, what was the time?"))
    assert _call(s) == ("fixe_log", "duration", "avg")
    assert s.value["value"] == pytest.approx(statistics.mean(r["duration"] for r in WRITINGS))
    # "what time did my sessions show": the time they took, printed "Duration" there
    s = _step(study.ask("On average, what time did my vocabulary sessions show?"))
    assert _call(s) == ("review_log", "duration", "avg")
    assert s.value["value"] == pytest.approx(statistics.mean(r["duration"] for r in REVIEWS))


def test_a_quantity_called_by_the_rows_own_noun_is_that_column(study):
    from core.planning.intent import analyze

    # "lessons" is both what is asked (the "Lessons" column) and the rows: the first one is the quantity
    a = analyze("Mean lessons across all my lessons?", datetime(2026, 1, 1))
    assert a.records == "lessons" and "lessons" in a.target_text.split()
    s = _step(study.ask("Mean lessons across all my lessons?"))
    assert _call(s) == ("point_log", "lessons_done", "avg")
    assert s.value["value"] == pytest.approx(statistics.mean(r["lessons_done"] for r in LESSONS))


PRINTS = _rows(9, lambda i: {"cure_duration": 2.0 + (i % 4), "layers": float(200 + 37 * i), "volume": 10.0 + (23 * i) % 90})
HARVESTS = _rows(8, lambda i: {"frames": float(4 + i % 7), "yield_kg": 3.0 + (7 * i) % 15, "water": 16.0 + (i % 4)})
STUFF = {
    "cure_duration_log": ("One row per cure duration record: cure duration (min), layers, volume (ml).", [
        ("cure_duration", "DOUBLE", "min", "", ("Cure",), None),
        ("layers", "DOUBLE", None, "", ("Layers",), None),
        ("volume", "DOUBLE", "ml", "", ("Volume",), None)], PRINTS, "Resin print done"),
    "frames_log": ("One row per frames record: frames, yield (kg), water (%).", [
        ("frames", "DOUBLE", None, "", ("Frames",), None),
        ("yield_kg", "DOUBLE", "kg", "", ("Yield",), None),
        ("water", "DOUBLE", "%", "", ("Water content",), None)], HARVESTS, "Honey harvest"),
}


@pytest.fixture(scope="module")
def stuff(tmp_path_factory):
    yield from _engine_of(tmp_path_factory, "stuff", STUFF)


@pytest.mark.parametrize("question,table,column,want", [
    # "resin" names what the resin prints are of: its amount (a volume), not their cure time or layers
    ("Mean resin across all my resin prints?", "cure_duration_log", "volume",
     statistics.mean(r["volume"] for r in PRINTS)),
    # no records named: the rounds that say "honey" are the harvests'; "largest" is the operator
    ("What's the largest honey I ever logged?", "frames_log", "yield_kg", max(r["yield_kg"] for r in HARVESTS)),
])
def test_a_word_naming_what_the_records_are_of_asks_its_amount(stuff, question, table, column, want):
    t = stuff.ask(question)
    s = _step(t)
    assert _call(s)[:2] == (table, column), t.plan.notes
    got = s.value.get("value") if "value" in s.value else s.value["values"][0]
    assert got == pytest.approx(want)


PLAYED_GAMES = _rows(7, lambda i: {"length": float(30 + 9 * i), "rtg": float(1450 + 13 * i)})
BLITZ = _rows(11, lambda i: {"games": float(5 + i % 9), "b_rating": float(1300 + 17 * i)})
CHESS = {
    "game_log": ("One row per game record: length, rtg.", [
        ("length", "DOUBLE", None, "", ("Length",), None),
        ("rtg", "DOUBLE", None, "", ("Rtg",), None)], PLAYED_GAMES, "Played a game"),
    "rating_log": ("One row per rating record: games, b rating.", [
        ("games", "DOUBLE", None, "", ("games played",), None),
        ("b_rating", "DOUBLE", None, "", ("b-rating",), None)], BLITZ, "Blitz session"),
}


@pytest.fixture(scope="module")
def chess(tmp_path_factory):
    yield from _engine_of(tmp_path_factory, "chess", CHESS)


def test_how_many_of_a_tables_own_noun_counts_its_rows_not_a_column_of_another_table(chess):
    # "games" names game_log and a column of the blitz sessions ("games played"): the games are counted
    s = _step(chess.ask("How many games did I log?"))
    assert _call(s) == ("game_log", "*", "count") and s.value["value"] == len(PLAYED_GAMES)
    # the column's whole name is its sum
    s = _step(chess.ask("How many games played did I log in total?"))
    assert _call(s) == ("rating_log", "games", "sum") and s.value["value"] == sum(r["games"] for r in BLITZ)


GAMES_TABLE = {
    "game_log": ("One row per game record: length, rtg.", [
        ("length", "DOUBLE", None, "", ("Length",), None),
        ("rtg", "DOUBLE", None, "", ("Rtg",), None)], PLAYED_GAMES, "Played a game"),
    # a table named after its own column: the blitz sessions' "games" (games played in each)
    "games_log": ("One row per games record: games, b rating.", [
        ("games", "DOUBLE", None, "", ("games",), None),
        ("b_rating", "DOUBLE", None, "", ("b-rating",), None)], BLITZ, "Blitz session"),
}


def test_how_many_of_the_rows_noun_counts_them_beside_a_table_named_after_a_like_column(tmp_path_factory):
    chess = next(_engine_of(tmp_path_factory, "games", GAMES_TABLE))
    s = _step(chess.ask("How many games are there in total?"))
    assert _call(s) == ("game_log", "*", "count") and s.value["value"] == len(PLAYED_GAMES)
    # the rows named apart: what they hold is summed
    s = _step(chess.ask("How many games did I log in total over all my blitz sessions?"))
    assert _call(s) == ("games_log", "games", "sum") and s.value["value"] == sum(r["games"] for r in BLITZ)
    # "was the games under 9": the quantity a condition is on follows the clause's verb, not the rows' words
    s = _step(chess.ask("On how many blitz sessions was the games under 9?"))
    assert s.value["value"] == sum(r["games"] < 9 for r in BLITZ), s.summary


JOBS = _rows(9, lambda i: {"print_min": 90.0 + (47 * i) % 300,
                           "material": "Print time" if i == 4 else ("PLA", "TPU", "PETG")[i % 3]})
PRINTS = {
    "print_log": ("One row per print record: print min (min), material.", [
        ("print_min", "DOUBLE", "min", "", ("Print time",), None),
        ("material", "VARCHAR", None, "", ("material",), None)], JOBS, "Print finished"),
}


def test_a_text_value_that_is_a_columns_own_label_filters_nothing(tmp_path_factory):
    # a sentence's order misled extraction once: "Print time" became a material; the question naming the
    # print time is about every print job, not about that one row
    prints = next(_engine_of(tmp_path_factory, "prints", PRINTS))
    s = _step(prints.ask("Mean print time across all my print jobs?"))
    assert s.value["value"] == pytest.approx(sum(r["print_min"] for r in JOBS) / len(JOBS)), s.summary
    # a real value still filters
    tpu = [r["print_min"] for r in JOBS if r["material"] == "TPU"]
    s = _step(prints.ask("What was my average print time for TPU?"))
    assert s.value["value"] == pytest.approx(sum(tpu) / len(tpu)), s.summary


OPENING_STUDY = _rows(12, lambda i: {"lines": float(5 + (7 * i) % 25), "duration": 20.0 + (13 * i) % 60, "k": i})
SESSIONS = {
    "gp_log": ("One row per gp record: gp, w.", [
        ("gp", "DOUBLE", None, "", ("GP",), None),
        ("w", "DOUBLE", None, "", ("W",), None)],
        _rows(10, lambda i: {"gp": float(4 + (5 * i) % 20), "w": float(1 + (3 * i) % 9), "k": i}),
        lambda r: "Blitz session tonight" if r["k"] == 3 else "Blitz tonight"),
    "tactic_log": ("One row per tactic record: tactics, score.", [
        ("tactics", "DOUBLE", None, "", ("Tactics",), None),
        ("score", "DOUBLE", None, "", ("Score",), None)],
        _rows(8, lambda i: {"tactics": float(20 + i), "score": 1500.0 + 11 * i}), "Puzzle session"),
    # the study sessions: "Worked on my repertoire" mostly, "Opening study" or "study session" now and then
    "line_log": ("One row per line record: lines, duration (min).", [
        ("lines", "DOUBLE", None, "", ("lines reviewed",), None),
        ("duration", "DOUBLE", "min", "", ("time",), None)], OPENING_STUDY,
        lambda r: "Latest study session" if r["k"] == 1 else "Opening study" if r["k"] % 6 == 0
        else "Worked on my repertoire"),
}


def test_records_whose_head_noun_several_kinds_share_are_named_by_the_words_before_it(tmp_path_factory):
    # "sessions" are puzzle sessions by all their rounds, blitz sessions by one; "study" is said only by the study
    # log's: a head the rounds of several tables say names no kind, the word before it does
    eng = next(_engine_of(tmp_path_factory, "sessions", SESSIONS))
    s = _step(eng.ask("How many study sessions are there in total?"))
    assert _call(s) == ("line_log", "*", "count") and s.value["value"] == len(OPENING_STUDY), s.summary
    s = _step(eng.ask("How many study sessions had a time below 46 min?"))
    assert s.value["value"] == sum(r["duration"] < 46 for r in OPENING_STUDY), s.summary
    # the head alone still names its kind when one table's rounds say it
    assert _call(_step(eng.ask("How many puzzle sessions are there?")))[:1] == ("tactic_log",)


PUZZLE_RUNS = _rows(10, lambda i: {"puzzle_rating": 1700.0 + 37 * i % 300, "solved": float(10 + (7 * i) % 20),
                                   "duration": 12.0 + (11 * i) % 40})
PUZZLE_SCREENS = {
    "puzzle_log": ("One row per puzzle record: puzzle rating, solved, duration (min).", [
        ("puzzle_rating", "DOUBLE", None, "", ("puzzle rating",), None),
        ("solved", "DOUBLE", None, "", ("solved", "Puzzles."), None),  # a second screen's name joined to it
        ("duration", "DOUBLE", "min", "", ("duration",), None)], PUZZLE_RUNS, "Puzzle session"),
}


FEEDS = _rows(6, lambda i: {"food": 4.0 + i, "item": ("pellets", "flakes", "brine shrimp")[i % 3], "fish": float(8 + i % 3)})
FEEDING = {
    "food_log": ("One row per food record: food (g), item, fish.", [
        ("food", "DOUBLE", "g", "", ("food",), None),
        ("item", "VARCHAR", None, "", ("",), None),
        ("fish", "DOUBLE", None, "", ("fish counted",), None)], FEEDS, "Fed the tank"),
}


@pytest.fixture(scope="module")
def feeding(tmp_path_factory):
    yield from _engine_of(tmp_path_factory, "feeding", FEEDING)


def test_a_kind_asked_is_the_text_column_of_the_rows_its_word_names(feeding):
    row = FEEDS[2]
    day = f"{row['time']:%B} {row['time'].day}, {row['time'].year}"
    # "food type": the kind of food (the unlabelled text beside the grams), not the grams of food
    t = feeding.ask(f"Which food type did my feeding on {day} have?")
    assert t.answer.text == row["item"], (t.answer.text, t.plan.notes)
    # "food" alone is the grams
    t = feeding.ask(f"What food did I log on {day}?")
    assert t.answer.text.startswith(f"{row['food']:g} g"), t.answer.text


def test_a_column_of_the_named_rows_sharing_a_word_of_the_phrase_before_a_column_elsewhere(tmp_path):
    from conftest import UnlikeEncoder

    # "new words" on vocabulary sessions: their "New." column (a word of the phrase, not its head), not the
    # writing log's "Words" (the head); no meaning helps either (an encoder that finds every text unlike)
    emb = UnlikeEncoder()
    con = duckdb.connect(str(build_general_memory(tmp_path / "memory.duckdb", emb, STUDY)))
    s = _step(QueryEngine(con, emb, DEFAULT).ask("What was my average new words on vocabulary sessions with cards above 120?"))
    assert _call(s)[:2] == ("review_log", "new")
    want = [r["new"] for r in REVIEWS if r["cards"] > 120]
    assert s.value["value"] == pytest.approx(statistics.mean(want))


RATED_GAMES = _rows(14, lambda i: {"rating": 1400.0 + (37 * i) % 200, "move_count": 20.0 + (13 * i) % 60})
PUZZLES = _rows(10, lambda i: {"tactics_rating": 1500.0 + (53 * i) % 450, "hits": 10.0 + (7 * i) % 20})
RATED_CHESS = {
    "move_log": ("One row per move record: rating, move count.", [
        ("rating", "DOUBLE", None, "", ("My rating",), None),
        ("move_count", "DOUBLE", None, "", ("move count",), None)], RATED_GAMES, "Played a game"),
    # named after a field; its rows say "puzzle session"
    "tactics_log": ("One row per tactics record: tactics rating, hits.", [
        ("tactics_rating", "DOUBLE", None, "", ("Tactics rating.",), None),
        ("hits", "DOUBLE", None, "", ("Hits.",), None)], PUZZLES, "Latest puzzle session, see picture"),
}


def test_the_words_before_the_asked_head_name_the_rows_whose_column_of_that_head_is_meant(tmp_path):
    from conftest import UnlikeEncoder

    # "puzzle rating" with no records named: "puzzle" is said by the rounds of the tactics log, whose own rating
    # is meant, not the games' rating (the column whose whole name is the head)
    emb = UnlikeEncoder()
    con = duckdb.connect(str(build_general_memory(tmp_path / "memory.duckdb", emb, RATED_CHESS)))
    engine = QueryEngine(con, emb, DEFAULT)
    t = engine.ask("What's the smallest puzzle rating I logged?")
    assert _call(_step(t))[:2] == ("tactics_log", "tactics_rating")
    assert t.answer.text.startswith(f"{min(r['tactics_rating'] for r in PUZZLES):g}"), t.answer.text
    # "my rating" names no rows: the games' rating
    assert _call(_step(engine.ask("What's the smallest rating I logged?")))[:2] == ("move_log", "rating")


LESSONS_TAUGHT = _rows(10, lambda i: {"duration": 30.0 + (17 * i) % 60, "price": 20.0 + (7 * i) % 19,
                                      "item": ("Joao", "Haruka", "Beatriz")[i % 3]})
TUTORING = {
    "tutor_log": ("One row per tutor record: duration (min), price ($), item.", [
        ("duration", "DOUBLE", "min", "", ("Duration",), None),
        ("price", "DOUBLE", "$", "", ("Price",), None),
        ("item", "VARCHAR", None, "", ("",), None)], LESSONS_TAUGHT, "Tutor session with my teacher"),
}


def test_which_thing_the_rows_had_is_their_text_column_when_no_number_is_named_by_it(tmp_path):
    from conftest import UnlikeEncoder

    # "which tutor": one of the names the rows hold (an unlabelled text), not the price they cost
    emb = UnlikeEncoder()
    con = duckdb.connect(str(build_general_memory(tmp_path / "memory.duckdb", emb, TUTORING)))
    engine = QueryEngine(con, emb, DEFAULT)
    row = LESSONS_TAUGHT[4]
    day = f"{row['time']:%B} {row['time'].day}, {row['time'].year}"
    t = engine.ask(f"Which tutor did my tutor session on {day} have?")
    assert t.answer.text == row["item"], (t.answer.text, t.plan.notes)
    # a number the noun names is still the number ("which price" reads as its value)
    t = engine.ask(f"Which price did my tutor session on {day} have?")
    assert t.answer.text.startswith(f"{row['price']:g}"), t.answer.text


BLITZ_NIGHTS = _rows(12, lambda i: {"gp": float(4 + (5 * i) % 20), "w": float(1 + (3 * i) % 9)})
BLITZ_AND_GAMES = {
    "move_log": ("One row per move record: rating, move count.", [
        ("rating", "DOUBLE", None, "", ("My rating",), None),
        ("move_count", "DOUBLE", None, "", ("move count",), None)], RATED_GAMES, "Played a game"),
    "gp_log": ("One row per gp record: gp, w.", [
        ("gp", "DOUBLE", None, "", ("GP",), None),
        ("w", "DOUBLE", None, "", ("W",), None)], BLITZ_NIGHTS, "Blitz tonight"),
}


def test_the_records_named_are_the_rows_whatever_other_rows_the_quantitys_word_is_said_by(tmp_path):
    from conftest import UnlikeEncoder

    # "games" is said by the rounds of the games played; "across my blitz sessions" names the blitz log's rows,
    # and its column named after the table (GP, games played) is their quantity
    emb = UnlikeEncoder()
    con = duckdb.connect(str(build_general_memory(tmp_path / "memory.duckdb", emb, BLITZ_AND_GAMES)))
    engine = QueryEngine(con, emb, DEFAULT)
    t = engine.ask("Minimum games across my blitz sessions?")
    assert _call(_step(t))[:2] == ("gp_log", "gp"), t.plan.notes
    assert t.answer.text.startswith(f"{min(r['gp'] for r in BLITZ_NIGHTS):g}"), t.answer.text
    # with no records named, the games are the games played
    assert _call(_step(engine.ask("Minimum move count across my games?")))[:2] == ("move_log", "move_count")


LISTENS = _rows(12, lambda i: {"minutes": 20.0 + (11 * i) % 70, "tracks": float(3 + (5 * i) % 14)})
VOCAB = _rows(10, lambda i: {"audio_time": 10.0 + (7 * i) % 25, "cards": float(40 + (13 * i) % 90)})
LISTENING = {
    "listening_log": ("One row per listening record: minutes (min), tracks.", [
        ("minutes", "DOUBLE", "min", "", ("Minutes",), None),
        ("tracks", "DOUBLE", None, "", ("Tracks",), None)], LISTENS, "Listening session on the train"),
    "card_log": ("One row per card record: audio time (min), cards.", [
        ("audio_time", "DOUBLE", "min", "", ("Audio time",), None),
        ("cards", "DOUBLE", None, "", ("Cards",), None)], VOCAB, "Vocabulary session tonight"),
}


def test_the_activity_or_time_of_the_rows_is_how_long_they_took(tmp_path):
    from conftest import UnlikeEncoder

    emb = UnlikeEncoder()
    con = duckdb.connect(str(build_general_memory(tmp_path / "memory.duckdb", emb, LISTENING)))
    engine = QueryEngine(con, emb, DEFAULT)
    # "how much listening" of listening sessions: the minutes they went on, not the tracks
    t = engine.ask("How much listening did I do in total across my listening sessions?")
    assert _call(_step(t))[:2] == ("listening_log", "minutes"), t.plan.notes
    assert t.answer.text.startswith(f"{sum(r['minutes'] for r in LISTENS):g}"), t.answer.text
    # "time on vocabulary sessions": how long they took (the audio time), not the cards of the condition
    t = engine.ask("What was my mean time on vocabulary sessions with cards above 100?")
    assert _call(_step(t))[:2] == ("card_log", "audio_time"), t.plan.notes
    want = [r["audio_time"] for r in VOCAB if r["cards"] > 100]
    assert _step(t).value["value"] == pytest.approx(statistics.mean(want))
    # the tracks are still the tracks
    assert _call(_step(engine.ask("How many tracks did I log in total across my listening sessions?")))[:2] \
        == ("listening_log", "tracks")


BOTTLINGS = _rows(10, lambda i: {"gravity": 1.040 + (3 * i % 20) / 1000, "volume": 18.0 + (7 * i) % 6})
BOTTLED = {
    "gravity_log": ("One row per gravity record: gravity, volume (L).", [
        ("gravity", "DOUBLE", None, "", ("OG",), None),
        ("volume", "DOUBLE", "L", "", ("Volume",), None)], BOTTLINGS, "Bottled the batch"),
}


def test_a_participle_after_the_asked_word_closes_its_phrase(tmp_path):
    from conftest import UnlikeEncoder

    # "volume bottled": the volume, which "bottled" says of, not a modifier of a noun "bottled"
    emb = UnlikeEncoder()
    con = duckdb.connect(str(build_general_memory(tmp_path / "memory.duckdb", emb, BOTTLED)))
    t = QueryEngine(con, emb, DEFAULT).ask("What was the total volume bottled across my batches?")
    assert _call(_step(t))[:2] == ("gravity_log", "volume"), t.plan.notes
    assert t.answer.text.startswith(f"{sum(r['volume'] for r in BOTTLINGS):g}"), t.answer.text


def test_a_condition_no_word_names_is_read_by_the_size_of_its_number_or_nothing_is_computed(tmp_path):
    from conftest import UnlikeEncoder

    # "with solved above 20" where the screen prints "Hits.": of the puzzle sessions' columns only the hits lie
    # on both sides of 20 (the rating is near 1700)
    emb = UnlikeEncoder()
    con = duckdb.connect(str(build_general_memory(tmp_path / "memory.duckdb", emb, RATED_CHESS)))
    engine = QueryEngine(con, emb, DEFAULT)
    t = engine.ask("What was my average tactics rating on puzzle sessions with solved above 20?")
    s = _step(t)
    assert _call(s)[:2] == ("tactics_log", "tactics_rating"), t.plan.notes
    want = [r["tactics_rating"] for r in PUZZLES if r["hits"] > 20]
    assert 0 < len(want) < len(PUZZLES) and s.value["value"] == pytest.approx(statistics.mean(want))
    # a number no column holds values around: no answer over every row instead
    t = engine.ask("What was my average tactics rating on puzzle sessions with solved above 5000?")
    all_rows = f"{statistics.mean(r['tactics_rating'] for r in PUZZLES):g}"
    assert not t.answer.text.startswith(all_rows[:4]), (t.answer.text, t.plan.notes)
    assert not [x for x in t.steps if x.tool in ANALYTIC_TOOLS and x.status == "ok"], t.plan.notes


OUTLAYS = _rows(10, lambda i: {"spent": 40.0 + (29 * i) % 200, "sales_tax": 2.0 + (3 * i) % 20})
DRIVES = _rows(9, lambda i: {"dist": 20.0 + (37 * i) % 140, "parking_cost": 2.0 + (5 * i) % 22})
OUTLAYS_AND_DRIVES = {
    "spent_log": ("One row per spent record: spent ($), sales tax ($).", [
        ("spent", "DOUBLE", "$", "", ("Sum",), None),
        ("sales_tax", "DOUBLE", "$", "", ("sales tax",), None)], OUTLAYS, "Business expense"),
    "cost_log": ("One row per cost record: dist (km), parking cost ($).", [
        ("dist", "DOUBLE", "km", "", ("dist",), None),
        ("parking_cost", "DOUBLE", "$", "", ("parking cost",), None)], DRIVES, "Day out"),
}


def test_records_named_only_by_a_word_before_an_unsaid_head_do_not_veto_a_column_the_question_names(tmp_path):
    from conftest import UnlikeEncoder

    # "business trips": no round says "trip"; "business" is said by the expenses' rounds, which hold no distance.
    # The column the question names by its own word ("distance", printed "dist") is meant, not a refusal
    emb = UnlikeEncoder()
    con = duckdb.connect(str(build_general_memory(tmp_path / "memory.duckdb", emb, OUTLAYS_AND_DRIVES)))
    engine = QueryEngine(con, emb, DEFAULT)
    t = engine.ask("Maximum distance over all my business trips?")
    assert _call(_step(t))[:2] == ("cost_log", "dist"), t.plan.notes
    assert t.answer.text.startswith(f"{max(r['dist'] for r in DRIVES):g}"), t.answer.text
    # a head the rounds do say keeps its rows: the expenses hold no distance, so nothing is computed
    t = engine.ask("Maximum distance over all my business expenses?")
    assert not [x for x in t.steps if x.tool in ANALYTIC_TOOLS and x.status == "ok"], (t.answer.text, t.plan.notes)


SHEET_DAYS = _rows(12, lambda i: {"logged": 3.0 + (7 * i) % 60 / 10, "k": i})
ROAD_DAYS = _rows(8, lambda i: {"road_time": 0.2 + (3 * i) % 20 / 10, "km": 20.0 + (37 * i) % 140})
SHEETS_AND_ROADS = {
    "logged_log": ("One row per logged record: logged (h).", [
        ("logged", "DOUBLE", "h", "", ("logged hours",), None)], SHEET_DAYS,
        lambda r: "Timesheet for today" if r["k"] % 3 == 0 else "Day done"),
    "road_log": ("One row per road record: time on road (h), km (km).", [
        ("road_time", "DOUBLE", "h", "", ("time on road",), None),
        ("km", "DOUBLE", "km", "", ("dist",), None)], ROAD_DAYS, "Day out"),
}


def test_a_word_the_rounds_say_is_not_read_in_another_tables_prefix_of_it(tmp_path):
    from conftest import UnlikeEncoder

    # "timesheets": a third of the timesheet rounds say it; "time" of every trip's "time on road" is a prefix of
    # it, not its abbreviation
    emb = UnlikeEncoder()
    con = duckdb.connect(str(build_general_memory(tmp_path / "memory.duckdb", emb, SHEETS_AND_ROADS)))
    s = _step(QueryEngine(con, emb, DEFAULT).ask("How many timesheets are there in total?"))
    assert _call(s) == ("logged_log", "*", "count") and s.value["value"] == len(SHEET_DAYS), s.summary


BILLED = _rows(8, lambda i: {"due": 300.0 + (97 * i) % 900, "bill": ("Harbor Cafe", "Pine & Co")[i % 2]})
BILLED_CLIENTS = {
    "due_log": ("One row per due record: due ($), bill.", [
        ("due", "DOUBLE", "$", "", ("total due",), None),
        ("bill", "VARCHAR", None, "", ("Bill to",), "bill")], BILLED, "Invoice sent"),
}


def test_how_much_asks_an_amount_never_a_text_column_its_word_names(tmp_path):
    from conftest import UnlikeEncoder

    # "Bill to: Harbor Cafe" named a text column "bill"; "how much was the vet bill" asks the amount the one-off
    # rounds give, not the latest client
    emb = UnlikeEncoder()
    con = duckdb.connect(str(build_general_memory(tmp_path / "memory.duckdb", emb, BILLED_CLIENTS)))
    t = QueryEngine(con, emb, DEFAULT).ask("How much was the vet bill?")
    assert not any(c in t.answer.text for c in ("Harbor Cafe", "Pine & Co")), (t.answer.text, t.plan.notes)
    bills = [v for _, _, v in ONE_OFF]
    assert any(f"{v:g}" in t.answer.text for v in bills + [sum(bills)]), t.answer.text


BOARDS = _rows(10, lambda i: {"vm": float(5 + (13 * i) % 50), "period": float(1 + i % 6), "rate": 0.5 + (7 * i) % 40 / 10})
STICKY_BOARDS = {
    "board_log": ("One row per board record: vm, period, rate.", [
        ("vm", "DOUBLE", None, "", ("VM",), None),
        ("period", "DOUBLE", None, "", ("Period",), None),
        ("rate", "DOUBLE", None, "", ("Rate",), None)], BOARDS, "Board check"),
}


def test_a_quantity_per_unit_of_time_is_the_rate_column(tmp_path):
    from conftest import UnlikeEncoder

    # "mites/day": no column says mites; the one that is a rate is meant, not the first column of the rows
    emb = UnlikeEncoder()
    con = duckdb.connect(str(build_general_memory(tmp_path / "memory.duckdb", emb, STICKY_BOARDS)))
    engine = QueryEngine(con, emb, DEFAULT)
    for q in ("Mean mites/day across all my board checks?", "What was my average mites/day?"):
        s = _step(engine.ask(q))
        assert _call(s)[:2] == ("board_log", "rate"), q
        assert s.value["value"] == pytest.approx(statistics.mean(r["rate"] for r in BOARDS))


BLITZ_EVENINGS = _rows(9, lambda i: {"games_n": float(4 + (5 * i) % 15), "wins_n": float(1 + (3 * i) % 7),
                                     "blitz": 1250.0 + (41 * i) % 280})
RATED_AND_BLITZ = {
    "move_log": ("One row per move record: rating, move count.", [
        ("rating", "DOUBLE", None, "", ("My rating",), None),
        ("move_count", "DOUBLE", None, "", ("move count",), None)], RATED_GAMES, "Played a game"),
    "win_log": ("One row per win record: games, wins, blitz.", [
        ("games_n", "DOUBLE", None, "", ("Games",), None),
        ("wins_n", "DOUBLE", None, "", ("Wins",), None),
        ("blitz", "DOUBLE", None, "", ("Blitz",), None)], BLITZ_EVENINGS, "Blitz tonight"),
}


def test_the_words_before_the_head_name_the_rows_whose_column_they_alone_name(tmp_path):
    from conftest import UnlikeEncoder

    # "blitz rating": the blitz evenings' "Blitz: 1391" is their rating; the games' "rating" is another one
    emb = UnlikeEncoder()
    con = duckdb.connect(str(build_general_memory(tmp_path / "memory.duckdb", emb, RATED_AND_BLITZ)))
    engine = QueryEngine(con, emb, DEFAULT)
    t = engine.ask("What was my highest blitz rating?")
    assert _call(_step(t))[:2] == ("win_log", "blitz"), t.plan.notes
    assert t.answer.text.startswith(f"{max(r['blitz'] for r in BLITZ_EVENINGS):g}"), t.answer.text
    # the head alone is the games' rating
    assert _call(_step(engine.ask("What was my highest rating?")))[:2] == ("move_log", "rating")


def test_the_verb_of_a_did_i_clause_is_no_unknown_modifier_of_the_rows(tmp_path):
    from conftest import UnlikeEncoder

    # "play" is said by no round ("Blitz tonight: Games 12 ..."), but it is the clause's verb, not a kind of blitz
    emb = UnlikeEncoder()
    blitz_only = {"win_log": RATED_AND_BLITZ["win_log"]}
    con = duckdb.connect(str(build_general_memory(tmp_path / "memory.duckdb", emb, blitz_only)))
    engine = QueryEngine(con, emb, DEFAULT)
    s = _step(engine.ask("How many times did I play blitz?"))
    assert _call(s) == ("win_log", "*", "count") and s.value["value"] == len(BLITZ_EVENINGS), s.summary


LINE_STUDY = _rows(9, lambda i: {"lines": float(3 + (5 * i) % 14),
                                 "variation": ("Caro-Kann", "Najdorf", "LINE Caro-Kann")[i % 3]})
VARIATIONS = {
    "line_log": ("One row per line record: lines, variation.", [
        ("lines", "DOUBLE", None, "", ("lines",), None),
        ("variation", "VARCHAR", None, "", ("Variation",), None)], LINE_STUDY, "Opening study"),
}


def test_a_label_word_read_into_a_text_value_makes_no_other_value(tmp_path):
    from conftest import UnlikeEncoder

    # "LINE Caro-Kann" (OCR read the caption into the value) is Caro-Kann: "for Caro-Kann" filters on both
    emb = UnlikeEncoder()
    con = duckdb.connect(str(build_general_memory(tmp_path / "memory.duckdb", emb, VARIATIONS)))
    s = _step(QueryEngine(con, emb, DEFAULT).ask("What was my average lines for Caro-Kann?"))
    want = [r["lines"] for r in LINE_STUDY if r["variation"].endswith("Caro-Kann")]
    assert s.value["value"] == pytest.approx(statistics.mean(want)), s.summary


METER_DAYS = _rows(10, lambda i: {"used": 6.0 + (7 * i) % 30, "peak": 0.7 + (3 * i) % 40 / 10})
KETTLE_DAYS = _rows(8, lambda i: {"consumption": 1.0 + (5 * i) % 9, "temp": 60.0 + (7 * i) % 35})
METERS_AND_KETTLES = {
    "meter_log": ("One row per meter record: used (kWh), peak (kW).", [
        ("used", "DOUBLE", "kWh", "", ("used",), None),
        ("peak", "DOUBLE", "kW", "", ("peak power",), None)], METER_DAYS, "Electricity reading"),
    "kettle_log": ("One row per kettle record: consumption (L), temp (°C).", [
        ("consumption", "DOUBLE", "L", "", ("consumption",), None),
        ("temp", "DOUBLE", "°C", "", ("temp",), None)], KETTLE_DAYS, "Kettle check"),
}


def test_a_verb_names_the_column_named_by_its_noun_and_the_reverse(tmp_path):
    from conftest import UnlikeEncoder

    # "usage" of a meter printed "used", "consumed" of a kettle printed "consumption"
    emb = UnlikeEncoder()
    con = duckdb.connect(str(build_general_memory(tmp_path / "memory.duckdb", emb, METERS_AND_KETTLES)))
    engine = QueryEngine(con, emb, DEFAULT)
    s = _step(engine.ask("What was my average usage?"))
    assert _call(s)[:2] == ("meter_log", "used") and s.value["value"] == pytest.approx(
        statistics.mean(r["used"] for r in METER_DAYS)), s.summary
    assert _call(_step(engine.ask("How much water was consumed in total?")))[:2] == ("kettle_log", "consumption")


def test_derived_words_are_a_verb_and_its_noun_not_any_shared_beginning():
    from core.planning.columns import derived

    assert derived("used", "usage") and derived("consum", "consumption") and derived("stor", "storage")
    assert not derived("feed", "fee") and not derived("station", "stat") and not derived("pay", "payload")


LIGHT_DAYS = _rows(10, lambda i: {"dl": 6.0 + (7 * i) % 80 / 10, "illum": 1500.0 + (977 * i) % 20000})
FEED_DAYS = _rows(8, lambda i: {"feed": 2.0 + (3 * i) % 18, "k": i})
LIGHT_AND_FEEDS = {
    "light_log": ("One row per light record: dl (h), illum (lx).", [
        ("dl", "DOUBLE", "h", "", ("DL",), None),
        ("illum", "DOUBLE", "lx", "", ("Illum",), None)], LIGHT_DAYS, "Checked the light"),
    "feed_log": ("One row per feed record: feed (mL).", [
        ("feed", "DOUBLE", "mL", "", ("feed",), None)], FEED_DAYS, lambda r: f"Day {r['k'] + 1}"),
}


def test_a_word_written_as_two_is_named_by_their_initials_not_by_rounds_saying_its_first(tmp_path):
    from conftest import UnlikeEncoder

    # "daylight": "light" is a word of the memory, so "DL" is its initials; the feeds' "Day 3" rounds say "day",
    # the first of the two words, not an abbreviation of "daylight"
    emb = UnlikeEncoder()
    con = duckdb.connect(str(build_general_memory(tmp_path / "memory.duckdb", emb, LIGHT_AND_FEEDS)))
    s = _step(QueryEngine(con, emb, DEFAULT).ask("What was my average daylight?"))
    assert _call(s)[:2] == ("light_log", "dl"), s.summary
    assert s.value["value"] == pytest.approx(statistics.mean(r["dl"] for r in LIGHT_DAYS))


DRIVE_DAYS = _rows(9, lambda i: {"dist": 20.0 + (31 * i) % 150, "l_100": 4.9 + (7 * i) % 38 / 10})
DRIVE_COMPUTER = {
    "dist_log": ("One row per dist record: dist (km), l 100 (L/100km).", [
        ("dist", "DOUBLE", "km", "", ("Dist.",), None),
        ("l_100", "DOUBLE", "L/100km", "", ("L/100",), None)], DRIVE_DAYS, "Drive home"),
}


def test_fuel_per_distance_is_a_consumption_whatever_its_label(tmp_path):
    from conftest import UnlikeEncoder

    # the trip computer prints "L/100" as the label: the unit says the column is a consumption
    emb = UnlikeEncoder()
    con = duckdb.connect(str(build_general_memory(tmp_path / "memory.duckdb", emb, DRIVE_COMPUTER)))
    t = QueryEngine(con, emb, DEFAULT).ask("What's the largest consumption I ever logged?")
    assert _call(_step(t))[:2] == ("dist_log", "l_100"), t.plan.notes
    assert t.answer.text.startswith(f"{max(r['l_100'] for r in DRIVE_DAYS):g}"), t.answer.text


FED_FISH = _rows(9, lambda i: {"fd": 2.0 + (3 * i) % 9, "k": i,
                               **({"extra": ("count", 10.0 + 4 * i, None, "Fish counted")} if i % 3 == 0 else
                                  {"extra": ("pay_amount", 581.0, "$", "Pay amount")} if i == 1 else {})})
FISH_FEEDS = {
    "feeding_log": ("One row per feeding record: fd (g).", [
        ("fd", "DOUBLE", "g", "", ("Fd",), None)], FED_FISH, "Feeding from the tank app"),
}


def test_a_quantity_a_few_records_print_beside_their_table_is_read_from_those_rounds(tmp_path):
    # nine feedings ("Fd 3 g"), three of which also print "Fish counted 22": too few for a column, named by a
    # whole word of the question; the feedings' own column is not what is asked
    from conftest import HashEmbedder

    emb = HashEmbedder()
    con = duckdb.connect(str(build_general_memory(tmp_path / "memory.duckdb", emb, FISH_FEEDS)))
    engine = QueryEngine(con, emb, DEFAULT)
    counted = [r["extra"][1] for r in FED_FISH if r.get("extra", ("",))[0] == "count"]
    t = engine.ask("Adding up every feeding, how many fish counted were there?")
    assert any("no table holds count" in n for n in t.plan.notes), t.plan.notes
    assert f"{sum(counted):g}" in t.answer.text and "3 rounds" in t.answer.text, t.answer.text
    # the feedings' column is still theirs when the question names nothing else, or only a word that names no
    # quantity ("amount", which a one-off "Pay amount" beside one feeding also says)
    assert _call(_step(engine.ask("Adding up every feeding, how much was there?")))[:2] == ("feeding_log", "fd")
    assert _call(_step(engine.ask("Mean amount across all my feedings?")))[:2] == ("feeding_log", "fd")
    con.close()


def test_a_rates_unit_does_not_name_its_first_dimension_word():
    from core.planning.columns import unit_tokens

    # "fish counted" names no "bubbles/s" column (a count rate is no count), nor "mass" a g/L one
    assert "count" not in unit_tokens("bubbles/s") and "mass" not in unit_tokens("g/L")
    assert "duration" in unit_tokens("min") and "bubbl" in " ".join(unit_tokens("bubbles/s"))


LATE_PAYMENTS = _rows(10, lambda i: {"payment": 300.0 + 250 * (i % 7), "delay": float((7 * i) % 25), "k": i})
LATE_PAID = {
    "payment_log": ("One row per payment record: payment ($), delay.", [
        ("payment", "DOUBLE", "$", "", ("Payment.",), None),
        ("delay", "DOUBLE", None, "", ("Delay.",), None)], LATE_PAYMENTS, "Payment received"),
}


def test_a_count_whose_condition_names_no_column_reads_it_by_its_number_in_the_records_table(tmp_path):
    # "days late" is printed "Delay." on the bank's screen: among the payments' columns one bare count's values
    # lie on both sides of 13, so the condition is read there
    from conftest import HashEmbedder

    emb = HashEmbedder()
    con = duckdb.connect(str(build_general_memory(tmp_path / "memory.duckdb", emb, LATE_PAID)))
    engine = QueryEngine(con, emb, DEFAULT)
    t = engine.ask("How many payments had a days late above 13 days?")
    s = _step(t)
    assert _call(s) == ("payment_log", "*", "count"), t.plan.notes
    assert s.value["value"] == sum(1 for r in LATE_PAYMENTS if r["delay"] > 13)
    # a number no column's values straddle counts nothing
    tip = engine.ask("How many payments had a tip above 90?")
    assert any("nothing to count" in n for n in tip.plan.notes) and tip.answer.text.startswith("Not mentioned")
    con.close()
