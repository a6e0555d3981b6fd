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


def test_the_list_view_of_a_big_memory_still_opens_an_episode_to_its_events(memory_path, tiny_bound):  # noqa: F811
    at = page("hierarchy", memory_path)
    at.run()
    at.radio(key="hier_kind").set_value("list").run()
    assert not at.exception
    episode = next(b for b in at.button if (b.key or "").startswith("hier_pick_ep:"))
    assert not any((b.key or "").startswith("hier_pick_ev:") for b in at.button)  # closed until picked
    episode.click().run()
    assert not at.exception
    events = [b for b in at.button if (b.key or "").startswith("hier_pick_ev:")]
    assert events  # loaded from the memory, though the tree was read without its events
    events[0].click().run()
    assert not at.exception
    assert at.session_state[state.SELECTED_NODE] == events[0].key.removeprefix("hier_pick_")
