"""Analytic question handling: units, conditions, categories, comparisons, yes/no, directions.

Unit tests of intent.py / columns.py / validate.py / rule_planner.py helpers on hand-built metadata,
then end-to-end checks on the fixture memory of test_planning_data (expected values computed here
from the Python rows, independently of SQL).
"""
from __future__ import annotations

import math
import statistics
from datetime import date

import duckdb
import pytest

from core.config import DEFAULT
from core.planning import QueryEngine
from core.planning.columns import convert, match_categories, unit_dimension
from core.planning.intent import analyze, find_conditions, find_event_clause
from core.planning.metadata import ColumnMeta, TableMeta
from core.planning.rule_planner import _average_in_name, _converted, _order_for
from core.planning.tools import ANALYTIC_TOOLS
from core.planning.validate import compile_expression
from test_planning_data import SLEEP, WORKOUTS, memory_path  # noqa: F401

NOW = date(2026, 4, 12)
FIRST = date(2026, 1, 12)


# ---------------------------------------------------------------------- conditions and units
@pytest.mark.parametrize("question,op,number,unit", [
    ("How many nights did I get a sleep score of 78 or more?", ">=", 78, None),
    ("nights with a resting heart rate of 60 bpm or higher", ">=", 60, "bpm"),
    ("days with 5 km or less", "<=", 5, "km"),
    ("How long were my runs when my pace was under 5:30 per km?", "<", 5.5, "min/km"),
    ("runs faster than 4:45 min/km", "<", 4.75, "min/km"),  # a faster pace is fewer minutes per km
    ("On how many nights was my sleep under 7 hours?", "<", 7, "hours"),
    ("rides longer than 40 kilometres", ">", 40, "kilometres"),
])
def test_conditions_read_numbers_units_and_or_more(question, op, number, unit):
    cs = find_conditions(question)
    assert len(cs) == 1, cs
    assert (cs[0].op, cs[0].unit) == (op, unit)
    assert math.isclose(cs[0].number, number)


def test_condition_context_is_its_own_clause():
    c = find_conditions("On nights with a resting heart rate of 60 bpm or more, how much deep sleep did I get?")[0]
    assert "resting heart rate" in c.context and "deep" not in c.context
    # a leading "when ..." clause holds the condition's quantity, not what is asked
    a = analyze("When the tax was over 14.74 USD, what was my mean total?", NOW, FIRST)
    assert a.kind == "aggregate" and a.op == "avg" and "tax" not in a.target_text and "total" in a.target_text
    assert a.conditions[0].number == 14.74 and "tax" in a.conditions[0].context


@pytest.mark.parametrize("value,frm,to,expected", [
    (7, "hours", "min", 420), (7.5, "h", "min", 450), (90, "min", "h", 1.5), (5, "mi", "km", 8.04672),
    (5.5, "min/km", "min/km", 5.5), (2, "kilometres", "m", 2000),
    # a test kit's ppm is a milligram per litre of water
    (0.4, "ppm", "mg/L", 0.4), (25, "mg/L", "ppm", 25), (300, "ppb", "mg/L", 0.3), (2, "ppm", "g/L", 0.002),
])
def test_convert_between_units_of_one_dimension(value, frm, to, expected):
    assert math.isclose(convert(value, frm, to), expected, rel_tol=1e-6)


@pytest.mark.parametrize("frm,to", [("km", "min/km"), ("bpm", "%"), ("hours", "km"), ("parsecs", "km"),
                                     ("ppm", "mmol/L"), ("bubbles/s", "drops/s")])
def test_convert_refuses_other_dimensions(frm, to):
    assert convert(1.0, frm, to) is None


def test_unit_dimensions_separate_distance_from_pace():
    assert unit_dimension("km") == "distance" and unit_dimension("min/km") == "pace"
    assert unit_dimension("hours") == unit_dimension("min") == "duration"
    assert unit_dimension("percentage") == unit_dimension("%") == "percent"


def _table(name, cols, n=10):
    return TableMeta(name, f"{name} records", tuple(
        [ColumnMeta("source", "VARCHAR", base=True), ColumnMeta("round_order", "DOUBLE", base=True),
         ColumnMeta("time", "TIMESTAMP", base=True)] + list(cols)), n)


def test_expression_in_another_unit_reports_that_unit():
    t = _table("sleep_log", [ColumnMeta("sleep_duration", "DOUBLE", unit="min")])
    e = compile_expression("sleep_duration / 60", t, "Compute.target_column_expression")
    assert e.unit == "h"
    e = compile_expression("sleep_duration * 2", t, "x")
    assert e.unit is None  # no unit is twice a minute


def test_converted_target_only_for_a_unit_the_question_asks():
    col = ColumnMeta("sleep_duration", "DOUBLE", unit="min")
    assert _converted("How many hours did I sleep on average?", col) == "sleep_duration / 60"
    assert _converted("How long did I sleep on average?", col) is None
    assert _converted("How many minutes did I sleep?", col) is None
    # the unit of a condition says nothing about the answer's unit
    assert _converted("average sleep score on nights over 7 hours", col, ["over 7 hours"]) is None


# ---------------------------------------------------------------------- categories
def _activity_table():
    return _table("activity_log", [
        ColumnMeta("activity", "VARCHAR", categories=("run", "Bike", "Ride", "bike"), category_counts=(17, 6, 4, 2)),
        ColumnMeta("distance", "DOUBLE", unit="km")])


def _cards_table():
    return _table("round_log", [
        ColumnMeta("my_color", "VARCHAR", categories=("red", "blue"), category_counts=(11, 9)),
        ColumnMeta("opponent_color", "VARCHAR", categories=("red", "blue"), category_counts=(8, 12)),
        ColumnMeta("opponent", "VARCHAR", categories=("Sam", "Leo"), category_counts=(20, 15)),
        ColumnMeta("winner", "VARCHAR", categories=("I", "Sam", "Leo"), category_counts=(19, 11, 5)),
        ColumnMeta("points", "DOUBLE", unit="points")])


@pytest.mark.parametrize("question", ["How many bike rides did I do?", "How far did I bike in total?",
                                      "How many minutes did I spend on bikes?"])
def test_category_spellings_and_inflections_match_one_canonical_value(question):
    # spellings of one value (case, plural, verb form) are one category; no synonyms between words
    ms = match_categories(question, [_activity_table()])
    assert len(ms) == 1 and ms[0].column == "activity"
    f = ms[0].filter()
    assert f["op"] == "in" and sorted(f["value"]) == ["Bike", "bike"]


def test_run_does_not_match_rides():
    f = match_categories("How many times did I go running?", [_activity_table()])[0].filter()
    assert f == {"column": "activity", "op": "=", "value": "run"}


@pytest.mark.parametrize("question,want", [
    ("What's my total points haul from all the card rounds I won?", {("winner", "I")}),
    ("How many rounds did I win against Leo?", {("winner", "I"), ("opponent", "Leo")}),
    ("How many points did Sam win in total?", {("winner", "Sam")}),
    ("When did I last play cards with Leo?", {("opponent", "Leo")}),
    ("How many points did I win in rounds where I played a red card?", {("winner", "I"), ("my_color", "red")}),
])
def test_people_and_the_user_filter_the_right_column(question, want):
    got = {(m.column, m.filter()["value"]) for m in match_categories(question, [_cards_table()])}
    assert got == want


# ---------------------------------------------------------------------- intents
@pytest.mark.parametrize("question,relation,text", [
    ("On the day I got my road bike, what was my resting heart rate?", "day", "I got my road bike"),
    ("What was my time in range on the day of my dentist appointment?", "day", "my dentist appointment"),
    ("What sleep score did I get the night of the concert?", "day", "the concert"),
    ("How many runs did I log after signing up for the 10K?", "after", "signing up for the 10K"),
])
def test_event_clauses(question, relation, text):
    ev = find_event_clause(question)
    assert ev is not None and (ev.relation, ev.text) == (relation, text)


def test_a_numeric_when_clause_is_a_condition_not_an_event():
    q = "What was my average sleep score on nights when I slept over 7.5 hours?"
    assert find_event_clause(q) is None
    a = analyze(q, NOW, FIRST)
    assert a.kind == "aggregate" and a.conditions[0].number == 7.5


@pytest.mark.parametrize("question", ["Did my time in range ever drop below 55%?", "Did I ever run more than 15 km?",
                                      "Has my resting heart rate ever gone below 50 bpm?"])
def test_ever_questions_with_a_condition_are_yes_no(question):
    assert analyze(question, NOW, FIRST).kind == "yesno"


@pytest.mark.parametrize("question,target,base", [
    ("Was my average sleep duration higher or lower in March than in January?", 3, 1),
    ("Compared with January, was my average resting heart rate higher or lower in March?", 3, 1),
    ("Was my glucose variability higher or lower in February compared with March?", 2, 3),
    ("Did my average sleep score go up or down from February to March?", 3, 2),
    ("Did my average workout heart rate go up or down between January and March?", 3, 1),
])
def test_two_periods_compared(question, target, base):
    a = analyze(question, NOW, FIRST)
    assert a.kind == "compare"
    assert (a.time_range.start.month, a.baseline.start.month) == (target, base)


@pytest.mark.parametrize("question,records", [
    ("Which car wash had the least price? Give the date.", "car wash"),
    ("Which invoice showed the highest amount?", "invoice"),
    ("Which day had the most steps?", None),  # a day is when, not which records
])
def test_which_record_had_the_most_names_the_records(question, records):
    a = analyze(question, NOW, FIRST)
    assert a.kind == "extreme" and a.records == records


@pytest.mark.parametrize("question,records", [
    ("Did my usage go up or down from my first meter reading to my last?", "meter reading"),
    ("From the first invoice to the latest, did the amount increase or decrease?", "invoice"),
    ("Has my weight risen or fallen since the first harvest?", "harvest"),
    ("Has my pace improved since the first week?", None),  # a span of time, not records
])
def test_a_change_between_the_first_and_last_record_names_the_records(question, records):
    a = analyze(question, NOW, FIRST)
    assert a.kind == "trend" and a.records == records
    if records:
        assert records not in a.target_text  # the records are not the measured quantity


@pytest.mark.parametrize("question,noun", [
    ("How many sleep logs do I have between February 10 and February 24?", "logs"),
    ("How many bike rides did I do?", "rides"), ("How many of my runs went beyond 8 km?", "runs"),
    ("How many hours did I sleep?", "hours"),
])
def test_how_many_counts_the_head_noun(question, noun):
    assert analyze(question, NOW, FIRST).how_many_noun == noun


@pytest.mark.parametrize("question,kind", [
    ("How many drives had an avg speed less than 68 km/h?", "how_many"),  # the average names the quantity
    ("How many sessions had a mean pulse above 150 bpm?", "how_many"),
    ("How many hours did I sleep on average when my steps were above 8000?", "aggregate"),
    ("What was my average speed on drives over 50 km?", "aggregate"),
])
def test_an_average_right_before_a_condition_names_its_quantity_in_a_count(question, kind):
    assert analyze(question, NOW, FIRST).kind == kind


@pytest.mark.parametrize("question", [
    "Which language did my listening session on April 18 have?",
    "What seed type did my feeder refill on March 3 have?",
])
def test_which_value_a_named_record_had_is_a_value_question(question):
    # the records phrase ("my listening session") is taken out of the target, not out of the grammar
    a = analyze(question, NOW, FIRST)
    assert a.kind == "value" and a.records and a.time_range is not None


def test_average_that_belongs_to_a_column_name():
    t = _table("dashboard_log", [ColumnMeta("average_glucose", "DOUBLE", unit="mg/dL")])
    assert _average_in_name("What was my average glucose on the latest dashboard?", [t]) is not None
    assert _average_in_name("What was my average glucose?", [t]) is None  # no other operator word


def test_fast_means_low_pace():
    pace = ColumnMeta("pace", "DOUBLE", unit="min/km")
    dist = ColumnMeta("distance", "DOUBLE", unit="km")
    assert _order_for(analyze("What was my fastest running pace?", NOW, FIRST), pace) == "asc"
    assert _order_for(analyze("What was my slowest pace?", NOW, FIRST), pace) == "desc"
    assert _order_for(analyze("What was my longest run?", NOW, FIRST), dist) == "desc"


# ---------------------------------------------------------------------- end to end on the fixture memory
@pytest.fixture
def engine(memory_path, embedder):
    con = duckdb.connect(str(memory_path))
    yield QueryEngine(con, embedder, DEFAULT)
    con.close()


def _analytic(trace):
    return [s for s in trace.steps if s.tool in ANALYTIC_TOOLS and s.status == "ok"]


def _filters(step):
    return {(f["column"], f["op"]): f["value"] for f in
            (step.args.get("optional_column_filters") or step.args.get("column_filters") or [])}


def test_condition_in_minutes_on_a_column_in_hours(engine):
    t = engine.ask("On how many nights did I sleep less than 390 minutes?")
    s = _analytic(t)[-1]
    assert s.args["operator"] == "count"
    assert _filters(s)[("sleep_hours", "<")] == pytest.approx(6.5)
    assert s.value["n_rows"] == sum(1 for r in SLEEP if r["sleep_hours"] < 6.5)


def test_answer_in_the_unit_asked(engine):
    t = engine.ask("How many metres did I cover in total?")
    s = _analytic(t)[-1]
    assert s.args["target_column_expression"] == "distance_km * 1000" and s.value["unit"] == "m"
    assert s.value["value"] == pytest.approx(sum(w["distance_km"] or 0 for w in WORKOUTS) * 1000)


def test_compare_two_months_answers_the_direction(engine):
    t = engine.ask("Was my average heart rate higher or lower in March than in February?")
    steps = _analytic(t)
    assert [s.args["operator"] for s in steps] == ["avg", "avg"]
    feb = statistics.mean(r["avg_heart_rate"] for r in WORKOUTS if r["day"].month == 2)
    mar = statistics.mean(r["avg_heart_rate"] for r in WORKOUTS if r["day"].month == 3)
    assert steps[0].value["value"] == pytest.approx(feb) and steps[1].value["value"] == pytest.approx(mar)
    assert t.answer.text.startswith("Higher" if mar > feb else "Lower"), t.answer.text


@pytest.mark.parametrize("hours", [4.0, 9.0])
def test_ever_questions_answer_yes_or_no(engine, hours):
    t = engine.ask(f"Did I ever sleep less than {hours:g} hours?")
    n = sum(1 for r in SLEEP if r["sleep_hours"] < hours)
    assert t.answer.text.startswith("Yes" if n else "No"), t.answer.text
    assert not t.answer.refused


# ---------------------------------------------------------------------- most frequent value, me versus another
def test_most_common_text_value_is_a_mode(engine):
    from collections import Counter

    t = engine.ask("What was my most common activity?")
    s = _analytic(t)[-1]
    assert (s.args["operator"], s.args["target_column_expression"]) == ("mode", "activity")
    counts = Counter(w["activity"] for w in WORKOUTS)
    top = max(counts.values())
    first_top = next(w["activity"] for w in WORKOUTS if counts[w["activity"]] == top)  # ties: the earliest
    assert s.value["value"] == first_top and first_top in t.answer.text


@pytest.mark.parametrize("question,other,more", [
    ("On January 26, did I score more points at cards than Leo?", "Leo", True),
    ("Did I run fewer km than Sam last week?", "Sam", False),
])
def test_versus_questions(question, other, more):
    a = analyze(question, NOW, FIRST)
    assert (a.kind, a.other, a.more) == ("versus", other, more)


def test_versus_sides_use_the_column_holding_both_parties():
    from core.planning.rule_planner import _sides

    me, leo = _sides([_cards_table()], "round_log", "Leo")
    assert me == {"column": "winner", "op": "=", "value": "I"}
    assert leo == {"column": "winner", "op": "=", "value": "Leo"}
    assert _sides([_cards_table()], "round_log", "Zoe") is None


def test_least_after_a_verb_asks_for_an_amount(engine):
    s = _analytic(engine.ask("Which night did I sleep the least?"))[-1]
    assert (s.tool, s.args["target_column_expression"], s.args["order"]) == ("Rank", "sleep_hours", "asc")
    assert s.value["values"][0] == min(r["sleep_hours"] for r in SLEEP)


def test_a_value_over_rows_matching_a_condition_is_averaged(engine):
    s = _analytic(engine.ask("How much deep sleep did I get on nights with more than 8 hours of sleep?"))[-1]
    assert (s.args["operator"], s.args["target_column_expression"]) == ("avg", "deep_sleep")
    want = statistics.mean(r["deep_sleep"] for r in SLEEP if r["sleep_hours"] > 8 and r["deep_sleep"] is not None)
    assert s.value["value"] == pytest.approx(want)


def test_possessive_names_the_category():
    got = match_categories("What was my first ride's distance?", [_activity_table()])
    assert [m.column for m in got] == ["activity"]


def test_volumes_convert_between_cubic_metres_and_litres_without_squaring_prefixes():
    assert convert(0.473, "m³", "L") == pytest.approx(473)
    assert convert(473, "L", "m³") == pytest.approx(0.473)
    assert convert(5, "cm³", "mL") == pytest.approx(5) and convert(1, "cm³", "L") == pytest.approx(0.001)
    assert convert(2, "m²", "cm²") == pytest.approx(20000) and convert(5, "km", "m") == pytest.approx(5000)


@pytest.mark.parametrize("question,records,target", [
    ("What chicks did my last nest box check show?", "nest box check", "chicks"),
    ("Which nest box check had the least eggs? Give the date.", "nest box check", "eggs"),
    ("What individuals did my last garden count show?", "garden count", "individuals"),
])
def test_a_record_noun_of_three_words_is_the_records_not_the_target(question, records, target):
    a = analyze(question, NOW, FIRST)
    assert a.records == records
    assert target in a.target_text and "box" not in a.target_text and "count" not in a.target_text


def test_a_pronoun_ends_the_record_noun():
    a = analyze("What's my total points haul from all the card rounds I won?", NOW, FIRST)
    assert a.records == "card rounds" and "i won" in a.target_text  # the condition stays the question's


@pytest.mark.parametrize("question,kind", [
    ("Latest order total I logged?", "latest"), ("First order total in my orders?", "first"),
    ("What was my latest total?", "latest"),
    # "in total" adds, whatever names the rows
    ("What was my order total in total?", "aggregate"), ("Last 3 orders total?", "aggregate"),
])
def test_an_ordinal_opening_the_question_names_one_record_whose_total_is_asked(question, kind):
    assert analyze(question, NOW, FIRST).kind == kind
