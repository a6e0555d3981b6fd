"""AppTest of the Home page and the router on a seeded memory (absolute paths, no exceptions)."""
from __future__ import annotations

from streamlit.testing.v1 import AppTest

from conftest import ROOT
from test_store import _history

from core.store import Store
from ui import state


def test_home_shows_memory_summary_and_rounds(tmp_path):
    path = tmp_path / "mem.duckdb"
    with Store(path) as s:
        s.ingest(_history())
    at = AppTest.from_file(str(ROOT / "app_pages" / "home.py"), default_timeout=30)
    at.session_state[state.STORE_PATH] = str(path)
    at.run()
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Rounds"] == "3"
    assert metrics["Images"] == "1"
    assert at.selectbox(key="home_session").value == "S1"
    assert any("S1:R1" in e.label for e in at.expander)
    # nothing processed yet: the page says so instead of pretending
    assert any("not processed" in w.value for w in at.warning)


def test_home_on_missing_memory_explains_what_to_do(tmp_path):
    at = AppTest.from_file(str(ROOT / "app_pages" / "home.py"), default_timeout=30)
    at.session_state[state.STORE_PATH] = str(tmp_path / "none.duckdb")
    at.run()
    assert not at.exception
    assert any("No memory" in i.value for i in at.info)
