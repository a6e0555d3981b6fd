"""AppTest of the Tables page on a copy of the bundled demo memory: values shown by unit (still
sortable), empty columns hidden and said so, and a description for people next to the planner's."""
from __future__ import annotations

import shutil
from pathlib import Path
from datetime import date, datetime

import duckdb
import pytest
from streamlit.testing.v1 import AppTest

from conftest import ROOT
from test_app_pages import fake_models  # noqa: F401  (autouse fixture: the pages' fake models)

from ui import state
from ui.table_text import people_description, span_words


@pytest.fixture(scope="module")
def demo_path(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("tables") / "demo.duckdb"
    shutil.copy(ROOT / "data" / "demo.duckdb", path)
    return str(path)




def stored(path: str, sql: str):
    """The stored truth, read from a second copy (the page keeps its own connection to `path`)."""
    truth = path + ".truth.duckdb"
    if not Path(truth).exists():
        shutil.copy(path, truth)
    con = duckdb.connect(truth, read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def run(path: str, table: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app_pages" / "tables.py"), default_timeout=60)
    at.session_state[state.STORE_PATH] = path
    at.session_state["tbl_name"] = table
    at.run()
    assert not at.exception
    return at


def column_config(frame) -> dict:
    import json

    return json.loads(frame.proto.columns)


# ---------------------------------------------------------------------- values by unit
def test_a_pace_column_reads_as_minutes_and_seconds_per_km_and_sorts_by_pace(demo_path):
    at = run(demo_path, "activity_log")
    rows = at.dataframe[2]
    cfg = column_config(rows)["pace"]
    assert cfg["type_config"]["type"] == "time" and cfg["type_config"]["format"] == "m:ss [/km]"
    paces = [p for (p,) in stored(demo_path, "SELECT pace FROM activity_log ORDER BY round_order")]
    shown = list(rows.value["pace"])
    # each shown time is the stored pace to the second (5.8667 min/km is 5:52); a missing one stays missing
    assert [None if t is None else t.minute * 60 + t.second for t in shown] == \
        [None if p is None else round(p * 60) for p in paces]
    # sorting the column orders rows as the stored numbers do
    known = [i for i, p in enumerate(paces) if p is not None]
    assert len(known) > 10
    assert sorted(known, key=lambda i: shown[i]) == sorted(known, key=lambda i: paces[i])


def test_numbers_stay_numeric_rounded_with_their_unit_after_them(demo_path):
    at = run(demo_path, "activity_log")
    rows = at.dataframe[2]
    cfg = column_config(rows)
    assert cfg["distance"]["type_config"]["format"].endswith(" km")
    assert cfg["average_heart_rate"]["type_config"]["format"].endswith(" bpm")
    assert str(rows.value["distance"].dtype).startswith("float")  # sorting stays numeric
    assert cfg["time"]["type_config"]["type"] == "datetime" and "MMM" in cfg["time"]["type_config"]["format"]


# ---------------------------------------------------------------------- empty columns and cells
def test_a_column_empty_in_every_row_is_hidden_and_said_so(demo_path):
    assert stored(demo_path, "SELECT count(captions) FROM round_log") == [(0,)]
    at = run(demo_path, "round_log")
    assert "captions" not in at.dataframe[2].value.columns
    assert any(c.value == "captions: empty in every row, hidden" for c in at.caption)


def test_a_column_with_some_values_stays_and_null_cells_show_empty(demo_path):
    assert stored(demo_path, "SELECT count(captions) > 0, count(*) > count(captions) FROM sleep_log") == [(True, True)]
    at = run(demo_path, "sleep_log")
    rows = at.dataframe[2]
    assert "captions" in rows.value.columns
    assert not any("hidden" in c.value for c in at.caption)
    assert rows.proto.HasField("placeholder") and rows.proto.placeholder == ""  # not the text "None"


# ---------------------------------------------------------------------- a description for people
def test_the_listing_describes_each_table_for_people(demo_path):
    at = run(demo_path, "glucose_log")
    listing = at.dataframe[0].value
    text = dict(zip(listing["table"], listing["description"]))["glucose_log"]
    n, first, last, images = stored(demo_path, "SELECT count(*), min(time), max(time), count(*) FILTER "
                                                "(WHERE modality LIKE '%image%') FROM glucose_log")[0]
    assert text.startswith(f"{n} records from {first.day} {first:%b} to {last.day} {last:%b %Y}")
    assert "average glucose (mg/dL)" in text and "variability (%)" in text and "_" not in text
    assert f"{images} of them were read from images." in text
    # the page's own description of the selected table is the same, the planner's stays in an expander
    assert text in [m.value for m in at.markdown]
    planner = stored(demo_path, "SELECT description FROM memory_tables WHERE table_name = 'glucose_log'")[0][0]
    expander = next(e for e in at.expander if e.label == "How the planner sees this table")
    assert planner in [m.value for m in expander.markdown]


def test_people_description_reads_well_for_a_table_of_anything():
    cols = [{"name": "weight_total", "unit": "kg"}, {"name": "label", "unit": None}]
    text = people_description(30, datetime(2025, 3, 3, 9), datetime(2025, 4, 28, 18), 12, cols)
    assert text == ("30 records from 3 Mar to 28 Apr 2025, one per round that reports them; "
                    "columns: weight total (kg), label. 12 of them were read from images.")
    assert people_description(1, date(2025, 1, 2), date(2025, 1, 2), 1, cols).startswith("1 record on 2 Jan 2025")
    assert people_description(0, None, None, 0, []) == "No records yet."
    with pytest.raises(ValueError, match="negative"):
        people_description(-1, None, None, 0, cols)


def test_time_spans_name_each_year_and_month_once():
    assert span_words(date(2025, 3, 3), date(2025, 3, 28)) == "from 3 to 28 Mar 2025"
    assert span_words(date(2024, 12, 28), date(2025, 1, 3)) == "from 28 Dec 2024 to 3 Jan 2025"
    assert span_words(None, date(2025, 1, 3)) == ""
