"""ui.plan_form: a step's arguments as form fields and back, without Streamlit."""
from __future__ import annotations

from ui.plan_form import args_from_form, form_from_args, parse_value, value_text


def test_between_and_in_values_are_typed_as_lists_and_shown_as_text():
    assert parse_value("2026-03-01, 2026-03-31", "between") == ["2026-03-01", "2026-03-31"]
    assert parse_value("3 .. 9", "between") == ["3", "9"]
    assert parse_value(" a, b ,, c", "in") == ["a", "b", "c"]
    assert parse_value(" 7 ", ">=") == "7"
    assert value_text(["2026-03-01", "2026-03-31"]) == "2026-03-01, 2026-03-31"
    assert value_text(86.0) == "86" and value_text(None) == ""


def test_a_compute_step_survives_the_form_round_trip():
    args = {"table": "t", "target_column_expression": "a / b", "operator": "max",
            "optional_column_filters": [{"column": "time", "op": "between", "value": ["2026-03-01", "2026-03-31"]},
                                        {"column": "kind", "op": "in", "value": ["x", "y"]}]}
    assert args_from_form("Compute", form_from_args("Compute", args)) == args


def test_lookup_keys_rank_budget_and_retrieval_scope_round_trip():
    look = {"table": "t", "key_values": {"name": "Ann", "kind": ["x", "y"]}, "result_budget": 3}
    assert args_from_form("Lookup", form_from_args("Lookup", look)) == look
    rank = {"table": "t", "target_column_expression": "score", "optional_column_filters": [], "order": "asc"}
    assert args_from_form("Rank", form_from_args("Rank", rank)) == rank  # budget 0 / None: left out
    sem = {"query_content": "the lake house", "retrieval_scope": "episode", "result_budget": 4}
    assert args_from_form("SemanticMatch", form_from_args("SemanticMatch", sem)) == sem
    # a filter whose column was cleared is dropped rather than sent empty
    form = form_from_args("Filter", {"table": "t", "column_filters": [{"column": "a", "op": "=", "value": 1}]})
    form["filters"].append(("", "=", "x"))
    assert args_from_form("Filter", form)["column_filters"] == [{"column": "a", "op": "=", "value": "1"}]
