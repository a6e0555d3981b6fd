"""Why each candidate pattern of the Schema induction page has its status: sentences built from a real induction
run (core.induction.reinduce) over small made-up streams, checked for the numbers that decided the status."""
from __future__ import annotations

import pytest

from core.config import DEFAULT
from core.induction import reinduce
from ui.induction_text import explain, schema_name, schemas_at, single_supports

TH = {"theta_s": 4, "theta_a": 0.6, "theta_e": 0.8}
CFG = DEFAULT.with_(**TH)


def run(stream):
    """(timeline rows, events) as plain dicts, the way the page reads them from the memory."""
    res = reinduce(stream, CFG)
    rows = [dict(r.__dict__) for r in res.timeline]
    events = [{"round_order": e.round_order, "kind": e.kind, "pattern": e.pattern, "schema_id": e.schema_id,
               "previous": e.previous, "numbers": dict(e.numbers)} for e in res.events]
    return rows, events


def row_at(rows, round_order, pattern):
    return next(r for r in rows if r["round_order"] == round_order and r["pattern"] == tuple(sorted(pattern)))


# {a, b} in rounds 1-4 (a schema at round 4), {d} alone in rounds 5-24, then {a, b, d} in rounds 25-40
# (d beside a different one-off field each time: d reported alone would be a's and b's record told with one
# field, set aside by rule 3c, and the extension would not be pending)
PENDING = ([(i, {"a", "b"}) for i in range(1, 5)] + [(i, {"d", f"x{i}"}) for i in range(5, 25)]
           + [(i, {"a", "b", "d"}) for i in range(25, 41)])


def test_below_support_says_how_many_rounds_are_missing():
    rows, events = run(PENDING)
    text = explain(row_at(rows, 2, "ab"), thresholds=TH, events=events, stream=PENDING, tables={})
    assert "support 2 < θ_s 4" in text and "2 more" in text


def test_extension_pending_below_theta_e_gives_the_extension_confidence_and_its_counts():
    rows, events = run(PENDING)
    r = row_at(rows, 34, "abd")  # 10 of the schema's 14 rounds had d
    assert r["status"] == "extension_pending"
    text = explain(r, thresholds=TH, events=events, stream=PENDING, tables={1: "ab_log"})
    assert "extension-confidence 0.71 < θ_e 0.80" in text and "10 of ab_log's 14 rounds" in text


def test_extension_pending_with_enough_extension_confidence_names_the_attribute_seen_without_the_schema():
    rows, events = run(PENDING)
    r = row_at(rows, 40, "abd")  # ext-conf 16/20 = 0.8 reaches θ_e, but d was seen in 36 rounds
    assert r["status"] == "extension_pending" and r["ext_conf"] >= TH["theta_e"]
    text = explain(r, thresholds=TH, events=events, stream=PENDING, tables={1: "ab_log"})
    assert "extension-confidence 0.80 ≥ θ_e 0.80" in text
    assert "`d` was seen in 36 rounds" in text and "0.44 < θ_a 0.60" in text


def test_admitted_with_low_all_confidence_now_gives_the_numbers_at_discovery_and_now():
    # {a, b} becomes a schema at round 4 with all-conf 1; then a is reported alone 7 times
    stream = [(i, {"a", "b"}) for i in range(1, 5)] + [(i, {"a"}) for i in range(5, 12)] + [(12, {"a", "b"})]
    rows, events = run(stream)
    r = row_at(rows, 12, "ab")
    assert r["status"] == "admitted" and r["all_conf"] < TH["theta_a"]
    text = explain(r, thresholds=TH, events=events, stream=stream, tables={1: "ab_log"})
    assert text.startswith("ab_log, discovered at round 4")
    assert "all-confidence 1.00 ≥ θ_a 0.60" in text  # at admission
    assert "0.42 < θ_a 0.60 now" in text and "`a` was seen in 12 rounds" in text  # 5 / 12 now
    assert "never withdrawn" in text


def test_admitted_after_growing_by_an_optional_field_says_so_and_why_all_confidence_does_not_apply():
    stream = ([(i, {"a", "b"}) for i in range(1, 5)] + [(i, {"a", "b", "c"}) for i in range(5, 9)]
              + [(i, {"c", "x"}) for i in range(9, 20)] + [(20, {"a", "b", "c"})])
    rows, events = run(stream)
    r = row_at(rows, 20, "abc")
    assert r["status"] == "admitted" and r["all_conf"] < TH["theta_a"]
    text = explain(r, thresholds=TH, events=events, stream=stream, tables={})
    grew = next(e for e in events if e["kind"] == "evolved")
    assert f"grew at round {grew['round_order']} from `a`, `b` by adding `c`" in text
    assert "optional field" in text and "not a condition for an extension" in text


def test_a_field_another_table_holds_grows_a_schema_by_the_rounds_that_table_does_not_explain():
    # {s, p, f} every solar report, {r, u} every meter reading, "p" also beside 12 of the 16 meter readings
    stream = [(k, x) for k, x in enumerate(
        [y for i in range(16) for y in ({"s", "p", "f"}, {"r", "u"} | ({"p"} if i % 4 else set()))], start=1)]
    rows, events = run(stream)
    grew = next(e for e in events if e["kind"] == "evolved" and "p" in e["pattern"] and "r" in e["pattern"])
    r = row_at(rows, len(stream), grew["pattern"])
    text = explain(r, thresholds=TH, events=events, stream=stream, tables={})
    n = grew["numbers"]
    assert f"of the {int(n['x_supp'] - n['explained'])} rounds with `p` that another table's records do not " \
           f"explain (of {int(n['x_supp'])})" in text, text


def test_a_field_reported_alone_grows_a_schema_by_the_rounds_that_report_more():
    # a feeding told "flakes" alone on most days, "flakes, kind, seen" on every third
    stream = [(k, {"k", "s", "f"} if k % 3 == 1 else {"f"}) for k in range(1, 31)]
    rows, events = run(stream)
    grew = next(e for e in events if e["kind"] == "evolved" and "f" in e["pattern"])
    n = grew["numbers"]
    assert n["alone"] > 0 and not n["explained"]
    text = explain(row_at(rows, 28, grew["pattern"]), thresholds=TH, events=events, stream=stream,
                   tables={})  # (round 28: the last that reports all three)
    left = int(n["x_supp"] - n["alone"])
    assert f"of the {left} rounds with `f` that report more than it alone (of {int(n['x_supp'])})" in text, text


def test_evolved_by_extension_confidence_quotes_it_and_the_added_attributes_all_confidence():
    events = [
        {"round_order": 4, "kind": "discovered", "pattern": ("a", "b"), "schema_id": 3, "previous": (),
         "numbers": {"supp": 4.0, "max_attr_supp": 4.0, "all_conf": 1.0}},
        {"round_order": 9, "kind": "evolved", "pattern": ("a", "b", "c"), "schema_id": 3, "previous": ("a", "b"),
         "numbers": {"supp": 5.0, "schema_supp": 6.0, "ext_conf": 5 / 6, "delta_conf": 1.0}},
    ]
    r = {"round_order": 9, "pattern": ("a", "b", "c"), "support": 5, "all_conf": 5 / 6, "ext_conf": 5 / 6,
         "schema_id": 3, "status": "evolved"}
    text = explain(r, thresholds=TH, events=events, stream=[], tables={3: "abc_log"})
    assert text.startswith("abc_log, grew at round 9")
    assert "extension-confidence 0.83 ≥ θ_e 0.80" in text and "5 of the schema's 6 rounds" in text
    assert "all-confidence 1.00 ≥ θ_a 0.60" in text


def test_below_all_confidence_names_the_attribute_that_keeps_it_down():
    stream = [(i, {"c"}) for i in range(1, 8)] + [(i, {"c", "x"}) for i in range(8, 12)]
    rows, events = run(stream)
    r = row_at(rows, 11, "cx")
    assert r["status"] == "below_all_conf"
    text = explain(r, thresholds=TH, events=events, stream=stream, tables={})
    assert "all-confidence 0.36 < θ_a 0.60" in text and "`c` was seen in 11 rounds" in text


def test_subsumed_names_the_table_it_lies_in():
    stream = [(i, {"a", "b", "c"}) for i in range(1, 5)] + [(i, {"a", "b"}) for i in range(5, 7)]
    rows, events = run(stream)
    r = row_at(rows, 6, "ab")
    assert r["status"] == "subsumed"
    assert "inside abc_log" in explain(r, thresholds=TH, events=events, stream=stream, tables={1: "abc_log"})


def test_schema_names_schemas_at_and_single_supports():
    assert schema_name(2, {2: "sleep_log"}) == "sleep_log"
    assert schema_name(5, {5: None}) == "schema 5"
    assert schema_name(None, {}) == ""
    events = [{"round_order": 4, "kind": "discovered", "pattern": ("b", "a"), "schema_id": 1},
              {"round_order": 9, "kind": "evolved", "pattern": ("a", "b", "c"), "schema_id": 1}]
    assert schemas_at(events, 3) == {} and schemas_at(events, 8) == {1: ("a", "b")}
    assert schemas_at(events, 9) == {1: ("a", "b", "c")}
    assert single_supports([(1, {"a"}), (2, {"a", "b"}), (3, {"a"})], 2) == {"a": 2, "b": 1}


def test_an_unknown_status_is_rejected_with_its_round():
    r = {"round_order": 7, "pattern": ("a", "b"), "support": 1, "all_conf": 1.0, "ext_conf": None,
         "schema_id": None, "status": "mystery"}
    with pytest.raises(ValueError, match="round 7.*mystery"):
        explain(r, thresholds=TH, events=[], stream=[], tables={})


def test_a_pattern_of_fields_other_tables_share_says_so():
    oven, starter = {"item", "flour", "temp"}, {"growth", "peak", "temp"}
    stream = [(i, oven) for i in range(1, 5)] + [(i, starter) for i in range(5, 9)]
    stream += [(i, {"date", "temp"}) for i in range(9, 14)]
    rows, events = run(stream)
    r = row_at(rows, 13, {"date", "temp"})
    assert r["status"] == "subsumed"
    text = explain(r, thresholds=TH, events=events, stream=stream, tables={1: "oven_log", 2: "starter_log"})
    assert "`temp` is printed in the records of several tables" in text and "`date` alone" in text


def test_a_schemas_records_with_a_date_beside_are_no_table_and_the_page_says_why():
    # oven_log {item, flour, temp}; {date, temp} recurs only on oven records that miss a field
    events = [{"round_order": 4, "kind": "discovered", "pattern": ("flour", "item", "temp"), "schema_id": 1,
               "previous": (), "numbers": {"supp": 4.0, "max_attr_supp": 4.0, "all_conf": 1.0}}]
    stream = [(i, {"item", "flour", "temp"}) for i in range(1, 5)]
    stream += [(i, {"date", "temp", "item"}) for i in range(5, 10)]
    stream += [(10, {"date", "temp"})]
    r = {"round_order": 10, "pattern": ("date", "temp"), "support": 6, "all_conf": 1.0, "ext_conf": None,
         "schema_id": 1, "status": "subsumed"}
    text = explain(r, thresholds=TH, events=events, stream=stream, tables={1: "oven_log"})
    assert text.startswith("mostly oven_log's records") and "`item`, a field of oven_log, is in 5 of its 6 rounds" in text
