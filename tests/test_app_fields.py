"""The Fields section of the Schema induction page: fields with their raw labels, why they were merged, undo
and merge by hand (AppTest), and its plain helpers (ui.data, ui.fields) without Streamlit.

The memory is a greenhouse sensor log built with core.build, the rule extractor and the conftest fakes: the
temperature is written "Temp: 21.5 °C" in some rounds and "Temperature 22 °C" in others, the soil moisture
"Soil moisture: 30 %" and "Soil moist: 31 %", next to the humidity. Depending on the extractor's spelling
normalization the two temperature labels are one raw attribute or two aligned ones; the tests find out with
core.align.field_report which pair is two raw attributes of one field, and merge by hand when alignment did not.
"""
from __future__ import annotations

import shutil
from datetime import date, datetime, timedelta

import pytest
from streamlit.testing.v1 import AppTest

from conftest import ROOT, FakeImageEncoder, FakeOCR, HashEmbedder

from core.align import field_report, undo_alias
from core.build import BuildDeps, build
from core.config import DEFAULT
from core.extract import RuleExtractor
from core.model import History, Round, Session, Utterance
from core.store import Store
from ui import data, resources, state
from ui import fields as fieldview

PAGE = ROOT / "app_pages" / "schemas.py"
N = 12


def greenhouse_history() -> History:
    rounds = []
    for i in range(N):
        temp, hum, soil = f"{21.5 + 0.1 * i:.1f}", 60 + i, 30 + i
        if i % 2 == 0:
            text = f"Greenhouse reading. Temp: {temp} °C, Humidity: {hum} %, Soil moisture: {soil} %"
        else:
            text = f"Greenhouse reading. Temperature {temp} °C, Humidity: {hum} %, Soil moist: {soil} %"
        rid, sid = f"S{1 + i // 6}:R{i % 6 + 1}", f"S{1 + i // 6}"
        rounds.append(Round(rid, sid, datetime(2026, 4, 1, 8, 0) + timedelta(days=i),
                            (Utterance("user", text), Utterance("assistant", "Logged.")), (), i % 6))
    sessions = (Session("S1", date(2026, 4, 1), tuple(rounds[:6])), Session("S2", date(2026, 4, 7), tuple(rounds[6:])))
    return History("greenhouse.json", "memeye", sessions, ())


def _raw_of(report, label: str) -> str:
    return next(lab.raw_attribute for f in report for lab in f.labels if any(l == label for l, _ in lab.labels))


def _field_of(report, raw: str) -> str:
    return next(f.name for f in report for lab in f.labels if lab.raw_attribute == raw)


@pytest.fixture(scope="module")
def base_memory(tmp_path_factory) -> tuple[str, str, str]:
    """(path, field, raw attribute to undo): a closed memory whose `field` has two raw attributes."""
    path = tmp_path_factory.mktemp("fields") / "greenhouse.duckdb"
    deps = BuildDeps(HashEmbedder(), FakeImageEncoder(), FakeOCR(), RuleExtractor(DEFAULT))
    with Store(path) as s:
        build(s, [greenhouse_history()], deps, DEFAULT)
        report = field_report(s)
        for a, b in (("Temp", "Temperature"), ("Soil moist", "Soil moisture")):
            ra, rb = _raw_of(report, a), _raw_of(report, b)
            if ra != rb:  # two raw attributes: the pair the page can merge and undo
                break
        else:
            pytest.fail("the extractor folded every label pair into one raw attribute")
        if _field_of(report, ra) != _field_of(report, rb):  # alignment did not merge them: merge by hand
            from core.align import merge_fields

            merge_fields(s, ra, _field_of(report, rb), DEFAULT)
            report = field_report(s)
        target = _field_of(report, rb)
        assert _field_of(report, ra) == target
        joined = ra if ra != target else rb  # the raw attribute that joined a field named after the other
    return str(path), target, joined


@pytest.fixture
def memory(base_memory, tmp_path) -> tuple[str, str, str]:
    """A fresh copy of the memory per test (the tests change it)."""
    src, fld, raw = base_memory
    dst = tmp_path / "greenhouse.duckdb"
    shutil.copy(src, dst)
    return str(dst), fld, raw


from test_app_pages import fake_models  # noqa: E402,F401  (autouse: the pages' models are the fakes)


def page(path: str) -> AppTest:
    at = AppTest.from_file(str(PAGE), default_timeout=60)
    at.session_state[state.STORE_PATH] = path
    return at


def texts(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [t.value for t in at.title]
    parts += [x.value for kind in (at.info, at.success, at.warning, at.error) for x in kind]
    parts += [s.value for s in at.subheader] + [e.label for e in at.expander]
    return "\n".join(str(p) for p in parts)


def fields_table(at: AppTest):
    return next(d.value for d in at.dataframe if "labels as written" in d.value.columns)


def report_of(path: str) -> dict[str, tuple[str, ...]]:
    """field -> its raw attributes, read from a fresh connection."""
    with Store(path) as s:
        return {f.name: tuple(lab.raw_attribute for lab in f.labels) for f in field_report(s)}


# ---------------------------------------------------------------------- the page
def test_fields_page_shows_labels_counts_tables_and_why_merged(memory):
    path, fld, raw = memory
    at = page(path)
    at.run()
    assert not at.exception
    shown = texts(at)
    assert "Fields" in [s.value for s in at.subheader]
    # the temperature's labels as written, with their counts, whether one raw attribute or two
    table = fields_table(at)
    temp = table[table["labels as written"].str.contains('"Temp" ×')].iloc[0]
    assert f'"Temp" ×{N // 2}' in temp["labels as written"]
    assert f'"Temperature" ×{N // 2}' in temp["labels as written"]
    assert temp["unit"] == "°C" and int(temp["observations"]) == N
    # merged fields first; the merged field lists both raw attributes and the table column holding it
    merged = list(table["merged"])
    assert merged[0] == "yes" and merged == sorted(merged, reverse=True)
    row = table[table["field"] == fld].iloc[0]
    assert row["merged"] == "yes" and raw in row["raw attributes"]
    with Store(path) as s:
        cols = data.field_columns(s).get(fld, ())
    assert cols, "the merged field should be a column of an analytic table"
    assert str(cols[0]) in row["in tables"]
    # why it was merged, in plain words with the score
    assert f"Merged into **{fld}**" in shown and "score" in shown
    assert at.button(key=f"fld_undo_{raw}") is not None


def test_fields_page_filter_box(memory):
    path, fld, raw = memory
    at = page(path)
    at.run()
    at.text_input(key="fld_filter").input("humid").run()
    assert not at.exception
    table = fields_table(at)
    assert list(table["field"]) == ["humidity"]
    at.text_input(key="fld_filter").input("no such thing").run()
    assert "No field matches the filter." in texts(at)


def test_fields_page_undo_splits_the_field_and_rebuilds(memory):
    path, fld, raw = memory
    assert raw in report_of(path)[fld]
    at = page(path)
    at.run()
    at.button(key=f"fld_undo_{raw}").click().run()
    assert not at.exception
    assert at.success, texts(at)
    msg = at.success[0].value
    assert "rebuilt" in msg and "tables now in the memory" in msg
    with Store(path) as s:
        tables = [t for (t,) in s.con.execute("SELECT table_name FROM schemas WHERE table_name IS NOT NULL").fetchall()]
    assert tables and all(f"`{t}`" in msg for t in tables)
    after = report_of(path)
    assert after[raw] == (raw,) and raw not in after[fld]  # two fields now
    # the page shows them apart, and the undone one as kept apart by the user
    table = fields_table(at)
    assert raw in set(table["field"]) and fld in set(table["field"])
    assert table[table["field"] == fld].iloc[0]["merged"] == ""
    assert table[table["field"] == raw].iloc[0]["decided by"] == "you"


def test_fields_page_merge_into_by_hand(memory):
    path, fld, raw = memory
    with Store(path) as s:
        undo_alias(s, raw, DEFAULT)
    at = page(path)
    at.run()
    at.selectbox(key="fld_merge_raw").set_value(raw).run()
    at.selectbox(key="fld_merge_into").set_value(fld).run()
    at.button(key="fld_merge_go").click().run()
    assert not at.exception
    assert at.success and f"part of the field `{fld}`" in at.success[0].value
    assert raw in report_of(path)[fld]
    assert f"Merged into **{fld}** by you" in texts(at)


def test_fields_page_read_only_memory_shows_a_message(memory, monkeypatch):
    path, fld, raw = memory
    ro = Store(path, read_only=True)
    monkeypatch.setattr(resources, "open_store", lambda p: ro)
    try:
        at = page(path)
        at.run()
        assert not at.exception
        at.button(key=f"fld_undo_{raw}").click().run()
        assert not at.exception
        assert at.error and "read-only" in at.error[0].value and "Nothing was changed" in at.error[0].value
        assert not at.success
    finally:
        ro.close()
    assert raw in report_of(path)[fld]  # unchanged


# ---------------------------------------------------------------------- plain helpers
def test_data_fields_and_errors(memory):
    path, fld, raw = memory
    with Store(path) as s:
        views = {f.name: f for f in data.fields(s)}
        assert views[fld].merged and views[fld].raws[0].raw_attribute == fld
        joined = next(r for r in views[fld].raws if r.raw_attribute == raw)
        assert joined.joined and joined.field == fld
        kind, msg = fieldview.apply_change(lambda: data.undo_merge(s, "no_such_attribute", DEFAULT), "x")
        assert kind == "error" and "no_such_attribute" in msg and "Nothing was changed" in msg
        kind, msg = fieldview.apply_change(lambda: data.merge_into(s, raw, "no_such_field", DEFAULT), "x")
        assert kind == "error" and "no_such_field" in msg
        assert raw in report_of_con(s)[fld]  # a failed change leaves the memory as it was


def report_of_con(s) -> dict[str, tuple[str, ...]]:
    return {f.name: tuple(lab.raw_attribute for lab in f.labels) for f in field_report(s)}


def test_reason_text_in_plain_words():
    auto = data.RawLabel("soil_moist", "soil_moisture", (("Soil moist", 5),), 5, 0.944,
                         "abbreviation (soil_moisture)", "auto", 2,
                         {"reason": "abbreviation (soil_moisture)", "name": 0.9, "unit": 1.0, "range": 0.983,
                          "companions": 1.0, "text": 0.959})
    text = fieldview.reason_text(auto, 0.6)
    assert "automatically at round 2 with score 0.94 (a merge needs 0.60)" in text
    assert "its name is an abbreviation of soil_moisture (name 0.90 × 0.5)" in text
    assert "its unit is the field's (unit 1.00 × 0.15)" in text
    assert "just outside the field's range" in text and "usually come with it" in text
    longer = data.RawLabel("temperature", "temp", (("Temperature", 5),), 5, 0.95, "abbreviation (temp)", "auto", 2,
                           {"reason": "abbreviation (temp)", "name": 0.9})
    assert "temp is an abbreviation of its name (name 0.90 × 0.5)" in fieldview.reason_text(longer)
    user = data.RawLabel("rh", "humidity", (("RH", 2),), 2, 1.0, "merged by the user", "user", 9,
                         {"reason": "merged by the user"})
    assert "by you" in fieldview.reason_text(user)
    own = data.RawLabel("humidity", "humidity", (("Humidity", 3),), 3, 0.0, "", "auto", 1, {})
    assert "Names the field" in fieldview.reason_text(own)
    assert fieldview.labels_text((("Temp.", 12), ("temperature", 9))) == '"Temp." ×12, "temperature" ×9'
    placed = data.RawLabel("precipitation", "rainfall", (("Precipitation", 4),), 4, 0.77,
                           "fills the place of rainfall in a record beside air_temp", "auto", 6,
                           {"reason": "fills the place of rainfall in a record beside air_temp", "name": 0.55})
    assert "no name links them, but it fills the place of rainfall in a record beside air_temp" \
        in fieldview.reason_text(placed)


def test_filter_fields_puts_merged_first():
    one = data.FieldView("humidity", "number", "%", 3, (data.RawLabel("humidity", "humidity", (("Humidity", 3),), 3,
                                                                      0, "", "auto", 1),))
    two = data.FieldView("soil_moisture", "number", "%", 4, (
        data.RawLabel("soil_moisture", "soil_moisture", (("Soil moisture", 2),), 2, 0, "", "auto", 1),
        data.RawLabel("soil_moist", "soil_moisture", (("Soil moist", 2),), 2, 0.9, "", "auto", 2)),
        (data.FieldColumn("greenhouse_log", "soil_moisture"),))
    assert [f.name for f in fieldview.filter_fields([one, two], "")] == ["soil_moisture", "humidity"]
    assert [f.name for f in fieldview.filter_fields([one, two], "MOIST")] == ["soil_moisture"]
    assert [f.name for f in fieldview.filter_fields([one, two], "greenhouse_log")] == ["soil_moisture"]
    assert [f.name for f in fieldview.filter_fields([one, two], "greenhouse")] == []  # a table by its full name
    assert two.labels == (("Soil moist", 2), ("Soil moisture", 2))
