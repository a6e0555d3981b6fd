"""Real browser: `streamlit run app.py` serves the Home page of a memory."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from browser import chromium_page, streamlit_server
from test_store import _history

from core.store import Store

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def test_home_page_in_chromium(tmp_path):
    path = tmp_path / "mem.duckdb"
    with Store(path) as s:
        s.ingest(_history())
    with streamlit_server(str(path)) as url, chromium_page() as page:
        page.goto(url)
        page.get_by_text("AdaMM Explorer").first.wait_for()
        page.get_by_text("Browse rounds").wait_for()
        rounds_metric = page.get_by_test_id("stMetric").filter(has_text="Rounds").first
        rounds_metric.wait_for()
        # The page streams its elements; expect() polls until all ten metrics are there (a bare
        # count() right after the first one appears raced the rest: 6 of 10 in one CI run).
        expect(page.get_by_test_id("stMetric")).to_have_count(10, timeout=60_000)
        assert rounds_metric.inner_text().split() == ["Rounds", "3"]
        page.screenshot(path=str(tmp_path / "home.png"))
