"""Real browser: the sidebar says the models are loading and then ready (loaded from app start), and a
reload keeps the memory chosen in the address."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from browser import chromium_page, streamlit_server
from test_store import _history

from core.store import Store

pytestmark = [pytest.mark.browser, pytest.mark.timeout(400)]


def test_models_load_in_the_background_and_a_reload_keeps_the_memory(tmp_path):
    default, other = tmp_path / "default.duckdb", tmp_path / "other.duckdb"
    for p in (default, other):
        with Store(p) as s:
            s.ingest(_history())
    with streamlit_server(str(default)) as url, chromium_page() as page:
        page.goto(url)
        sidebar = page.get_by_test_id("stSidebar")
        # the status is visible without any question asked, and turns to ready by itself (a fragment)
        expect(sidebar.get_by_text("Models ready")).to_be_visible(timeout=240_000)
        expect(sidebar.get_by_text("text encoder")).to_be_visible()
        page.goto(url + "/tables?memory=" + str(other))
        page.get_by_role("heading", name="Tables").first.wait_for()
        expect(sidebar.get_by_text(str(other))).to_be_visible()
        page.reload()
        page.get_by_role("heading", name="Tables").first.wait_for()
        expect(sidebar.get_by_text(str(other))).to_be_visible()
        assert "memory=" in page.url
