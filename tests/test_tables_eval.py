"""The stream-coverage check behind `python -m core.evaluation.tables` (fed hand-made tables)."""
from __future__ import annotations

import duckdb

from core.evaluation.tables import stream_coverage


def _memory() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("CREATE TABLE sleep_log(source VARCHAR, round_order INT, time TIMESTAMP, captions VARCHAR, "
                "sleep_duration DOUBLE, sleep_score DOUBLE, _obs VARCHAR)")
    con.execute("INSERT INTO sleep_log VALUES ('R1', 1, NULL, NULL, 420, 80, '{}'), ('R2', 2, NULL, NULL, 390, 71, '{}'),"
                " ('R3', 3, NULL, NULL, 999, 70, '{}')")
    con.execute("CREATE TABLE bill_log(source VARCHAR, round_order INT, time TIMESTAMP, captions VARCHAR, "
                "heating_bill DOUBLE, _obs VARCHAR)")
    con.execute("INSERT INTO bill_log VALUES ('R9', 9, NULL, NULL, 27, '{}')")
    con.execute("CREATE VIEW memory_tables AS SELECT 'sleep_log' AS table_name UNION ALL SELECT 'bill_log'")
    return con


def test_coverage_counts_right_rows_and_flags_distractor_tables():
    truth = {
        "streams": {"sleep": ["R1", "R2", "R3", "R4"]},
        "observations": [
            {"round": "R1", "quantity": "sleep_duration", "value": 7, "unit": "h"},  # 420 min: right
            {"round": "R1", "quantity": "sleep_score", "value": 80, "unit": "points"},
            {"round": "R2", "quantity": "sleep_duration", "value": 6.5, "unit": "h"},  # 390 min: right
            {"round": "R3", "quantity": "sleep_duration", "value": 6.0, "unit": "h"},  # stored 999: wrong
            {"round": "R4", "quantity": "sleep_duration", "value": 8.0, "unit": "h"},  # no row: missing
        ],
    }
    res = stream_coverage(_memory(), truth)
    s = res["streams"]["sleep"]
    assert (s["table"], s["rows_found"], s["rows_right"], s["coverage"]) == ("sleep_log", 3, 2, 0.5)
    assert res["distractor_tables"] == ["bill_log"]
