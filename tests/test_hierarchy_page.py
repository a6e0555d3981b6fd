"""The Hierarchy page's names and its list view (AppTest on the memory of test_app_pages)."""
from __future__ import annotations

import re

from test_app_pages import fake_models, memory_path, page, texts  # noqa: F401  (fixtures)
from core.hierarchy import Hierarchy
from core.store import Store
from ui import state


def _tree(path: str):
    with Store(path) as s:
        return Hierarchy(s.con, None, None).tree()


def test_the_node_picker_names_nodes_by_their_content_not_by_a_cut_utterance(memory_path):  # noqa: F811
    at = page("hierarchy", memory_path)
    at.run()
    assert not at.exception
    options = at.selectbox(key="hier_node_pick").options
    assert options
    for o in options:
        name = o.split(" · ", 2)[2]
        assert not re.match(r"(user|assistant):", name), o
        if o.startswith("topic"):
            assert not re.search(r"\d", name) and 1 <= len(name.split(", ")) <= 4, o


def test_the_list_view_lists_topics_with_names_sizes_and_spans_and_a_click_selects(memory_path):  # noqa: F811
    tree = _tree(memory_path)
    topics = [n for n in tree if n.level == "topic"]
    at = page("hierarchy", memory_path)
    at.run()
    at.radio(key="hier_kind").set_value("list").run()
    assert not at.exception
    assert not at.get("plotly_chart")  # the list replaces the chart
    listed = [e for e in at.expander if e.label.lstrip("● ★").split(" · ")[0] in {t.label for t in topics}]
    assert len(listed) == len(topics)
    first = topics[0]
    entry = next(e.label for e in listed if first.label in e.label)
    n_events = sum(n.n_members for n in tree if n.parent_id == first.node_id)
    assert f"{n_events} event" in entry and f"{first.t_start:%Y-%m-%d}" in entry
    # the selected topic is open: its episodes are buttons; a click selects one like the node picker
    episode = next(n for n in tree if n.parent_id == first.node_id)
    at.button(key=f"hier_pick_{episode.node_id}").click().run()
    assert not at.exception
    assert at.session_state[state.SELECTED_NODE] == episode.node_id
    assert at.selectbox(key="hier_node_pick").value == episode.node_id
    assert any(episode.node_id in s.value for s in at.subheader)
    # the picked episode opens to its events; picking one opens its round
    event = next(n for n in tree if n.parent_id == episode.node_id)
    at.button(key=f"hier_pick_{event.node_id}").click().run()
    assert not at.exception
    assert at.session_state[state.SELECTED_NODE] == event.node_id
    assert any(event.node_id.removeprefix("ev:") in e.label for e in at.expander)  # the round, with its dialogue


def test_the_list_view_opens_the_topic_of_a_search_hit(memory_path):  # noqa: F811
    at = page("hierarchy", memory_path)
    at.run()
    at.radio(key="hier_kind").set_value("list").run()
    at.text_input(key="hier_query").input("played cards with Anna and Tom")
    at.selectbox(key="hier_scope").select("event")
    at.button[0].click().run()
    assert not at.exception
    top = at.dataframe[0].value["node"].iloc[0]
    assert at.session_state[state.SELECTED_NODE] == top
    # its event is listed (under its episode, under its opened topic), marked as the selection
    hit = at.button(key=f"hier_pick_{top}")
    assert hit.label.startswith("●") and "cards with Anna and Tom" in hit.label
    assert "Anna and Tom" in texts(at)
