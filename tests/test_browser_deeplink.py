"""Real browser: a deep link to a page runs through the router (shared sidebar, titled navigation)."""
from __future__ import annotations

import pytest

from browser import chromium_page, streamlit_server
from test_store import _history

from core.store import Store

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def test_deep_link_to_tables_keeps_the_router_and_sidebar(tmp_path):
    path = tmp_path / "mem.duckdb"
    with Store(path) as s:
        s.ingest(_history())
    with streamlit_server(str(path)) as url, chromium_page() as page:
        page.goto(url + "/tables")
        page.get_by_role("heading", name="Tables").first.wait_for()
        nav = page.get_by_test_id("stSidebarNav")
        nav.get_by_text("Query planner").wait_for()  # titles from st.navigation, not file names
        assert nav.get_by_text("app", exact=True).count() == 0
        page.get_by_text("Memory file").wait_for()  # the shared sidebar rendered by app.py
