"""The Hierarchy page on a memory too big to draw node by node (the bound lowered to a few nodes)."""
from __future__ import annotations

import pytest

from test_app_pages import fake_models, memory_path, page, texts  # noqa: F401  (fixtures)
from ui import charts, state


@pytest.fixture
def tiny_bound(monkeypatch):
    monkeypatch.setattr(charts, "MAX_DRAWN", 6)


def test_a_big_memory_is_drawn_without_events_and_a_hit_still_opens(memory_path, tiny_bound):  # noqa: F811
    at = page("hierarchy", memory_path)
    at.run()
    assert not at.exception
    metrics = {m.label: int(m.value) for m in at.metric}
    assert metrics["Events"] == 13  # the counts are the memory's, not the drawing's
    fig = at.get("plotly_chart")[0].proto.spec
    assert '"ev:' not in fig  # no event sector drawn
    assert "13 events are counted in their episodes" in texts(at)
    # a search hit (an event) is loaded on its own, drawn, selected and opened
    at.text_input(key="hier_query").input("played cards with Anna and Tom")
    at.selectbox(key="hier_scope").select("event")
    at.button[0].click().run()
    assert not at.exception
    top = at.dataframe[0].value["node"].iloc[0]
    assert top.startswith("ev:") and at.session_state[state.SELECTED_NODE] == top
    assert f'"{top}"' in at.get("plotly_chart")[0].proto.spec
    assert "Anna and Tom" in texts(at)
