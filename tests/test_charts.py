"""The explorer's figures, built from plain data without Streamlit: traces, threshold lines, event markers."""
from __future__ import annotations

import pytest

from ui import charts

A, B = ("sleep_score", "sleep_duration"), ("resting_heart_rate", "sleep_duration", "sleep_score")
TIMELINE = [
    {"round_order": o, "pattern": A, "support": o, "all_conf": 1.0, "ext_conf": None} for o in range(1, 7)
] + [
    {"round_order": o, "pattern": B, "support": o - 2, "all_conf": (o - 2) / o, "ext_conf": (o - 2) / o}
    for o in range(3, 7)
]
EVENTS = [
    {"round_order": 4, "kind": "discovered", "pattern": A, "previous": (), "numbers": {"supp": 4, "all_conf": 1.0}},
    {"round_order": 6, "kind": "evolved", "pattern": B, "previous": A, "numbers": {"supp": 4, "ext_conf": 0.8}},
    {"round_order": 4, "kind": "candidate", "pattern": A, "previous": (), "numbers": {"supp": 4}},
]


def _hlines(fig):
    return {s.name: s.y0 for s in fig.layout.shapes if s.y0 == s.y1 and s.name}


def _trace(fig, name):
    return next(t for t in fig.data if t.name == name)


def test_support_figure_has_one_line_per_pattern_threshold_and_event_markers():
    fig = charts.support_figure(TIMELINE, EVENTS, theta_s=4)
    lines = [t for t in fig.data if t.mode == "lines+markers"]
    assert {t.name for t in lines} == {"sleep_score + sleep_duration", "resting_heart_rate + sleep_duration + sleep_score"}
    assert _hlines(fig) == {"θ_s": 4.0}
    disc = _trace(fig, "discovered")
    assert list(disc.x) == [4] and list(disc.y) == [4.0]
    evo = _trace(fig, "evolved")
    assert list(evo.x) == [6] and "from sleep_score + sleep_duration" in evo.text[0]
    assert "candidate" not in {t.name for t in fig.data}  # only schema changes are marked


def test_support_figure_replay_cuts_the_lines_and_markers_at_the_selected_round():
    fig = charts.support_figure(TIMELINE, EVENTS, theta_s=4, upto=5, at_round=5)
    a = _trace(fig, "sleep_score + sleep_duration")
    assert list(a.x) == [1, 2, 3, 4, 5]
    assert "evolved" not in {t.name for t in fig.data}  # it happens at round 6
    cursor = [s for s in fig.layout.shapes if s.name == "selected round"]
    assert len(cursor) == 1 and cursor[0].x0 == 5


def test_confidence_figure_draws_both_thresholds_and_marks_events_at_their_confidence():
    fig = charts.confidence_figure(TIMELINE, EVENTS, theta_a=0.6, theta_e=0.8)
    assert _hlines(fig) == {"θ_a": 0.6, "θ_e": 0.8}
    names = {t.name for t in fig.data}
    assert "all-conf: sleep_score + sleep_duration" in names
    assert "ext-conf: resting_heart_rate + sleep_duration + sleep_score" in names
    assert "ext-conf: sleep_score + sleep_duration" not in names  # no ext-conf values for it
    assert list(_trace(fig, "discovered").y) == [1.0]
    assert list(_trace(fig, "evolved").y) == [0.8]
    ext = _trace(fig, "ext-conf: resting_heart_rate + sleep_duration + sleep_score")
    assert ext.line.dash == "dash"


def test_highlighted_patterns_puts_the_schemas_first_then_the_highest_support():
    rows = [{"round_order": 9, "pattern": p, "support": n}
            for p, n in ((("x", "y"), 30), (("u", "v"), 20), (("p", "q"), 10), (("k", "l"), 5), (A, 6), (B, 4))]
    assert charts.highlighted_patterns(rows, EVENTS) == [A, B, ("x", "y"), ("u", "v")]
    assert len(charts.highlighted_patterns(rows, EVENTS, k=2)) == 2


def test_legend_names_are_table_names_or_short_and_distinct():
    long1 = ("my_value", "my_value_qualifier", "other", "other_value", "other_value_qualifier", "points")
    long2 = ("my_value", "my_value_qualifier", "other", "other_value", "winner")
    names = charts.legend_names([A, B, long1, long2], {B: "sleep_log"})
    assert names[B] == "sleep_log" and names[A] == charts.pattern_label(A)
    assert all(len(n) <= 40 for n in names.values()) and len(set(names.values())) == 4
    assert "more" in names[long1]


def test_timeline_figures_colour_each_pattern_alike_and_mark_events_only_on_drawn_lines():
    colors = charts.pattern_colors([A, B])
    names = {A: "a_log", B: "b_log"}
    only_b = [r for r in TIMELINE if r["pattern"] == B]
    sup = charts.support_figure(only_b, EVENTS, theta_s=4, names=names, colors=colors)
    assert "discovered" not in {t.name for t in sup.data}  # A is discovered, and A is not drawn
    evo = _trace(sup, "evolved")
    assert list(evo.marker.color) == [colors[B]] and _trace(sup, "b_log").line.color == colors[B]
    assert "resting_heart_rate + sleep_duration + sleep_score" in _trace(sup, "b_log").hovertemplate
    conf = charts.confidence_figure(TIMELINE, EVENTS, 0.6, 0.8, names=names, colors=colors)
    assert _trace(conf, "all-conf: a_log").line.color == colors[A]
    assert _trace(conf, "ext-conf: b_log").line.color == _trace(conf, "all-conf: b_log").line.color == colors[B]
    assert list(_trace(conf, "discovered").marker.color) == [colors[A]]
    assert len(set(charts.pattern_colors([("a",), ("b",), ("c",), ("d",)]).values())) == 4


def test_column_figure_skips_missing_values():
    fig = charts.column_figure(["2026-03-01", "2026-03-02", "2026-03-03"], [7.0, None, 8.5], column="sleep",
                               unit="h", rounds=["S1:R1", "S1:R2", "S1:R3"])
    t = fig.data[0]
    assert list(t.y) == [7.0, 8.5] and list(t.text) == ["S1:R1", "S1:R3"]
    assert t.name == "sleep (h)"


NODES = [
    {"node_id": "tp1", "level": "topic", "parent_id": None, "label": "sleep", "n_members": 2},
    {"node_id": "ep1", "level": "episode", "parent_id": "tp1", "label": "week 1", "n_members": 2},
    {"node_id": "ep2", "level": "episode", "parent_id": "tp1", "label": "week 2", "n_members": 1},
    {"node_id": "ev1", "level": "event", "parent_id": "ep1", "label": "r1", "n_members": 0},
    {"node_id": "ev2", "level": "event", "parent_id": "ep1", "label": "r2", "n_members": 0},
    {"node_id": "ev3", "level": "event", "parent_id": "ep2", "label": "r3", "n_members": 0},
    {"node_id": "ev4", "level": "event", "parent_id": None, "label": "orphan", "n_members": 0},
]


@pytest.mark.parametrize("kind", ["sunburst", "treemap"])
def test_hierarchy_figure_nests_nodes_counts_events_and_colours_hits(kind):
    fig = charts.hierarchy_figure(NODES, hits={"ev3": 0.9}, kind=kind)
    t = fig.data[0]
    assert t.type == kind
    parent = dict(zip(t.ids, t.parents))
    assert parent["ev1"] == "ep1" and parent["ep1"] == "tp1" and parent["tp1"] == "memory"
    assert parent["ev4"] == "memory"  # a node whose parent is unknown hangs from the root
    value = dict(zip(t.ids, t.values))
    assert sum(value[i] for i in ("ev1", "ev2", "ev3", "ev4")) == 4 and value["tp1"] == 0
    assert t.branchvalues == "remainder"  # parents add up their events
    colour = dict(zip(t.ids, t.marker.colors))
    assert colour["ev3"] == charts.HIT_COLOR and colour["ev1"] != charts.HIT_COLOR


def _sized_tree(long_name: str) -> list[dict]:
    """A big topic (one episode of 60 events) and a small one (one episode of a single event)."""
    nodes = [{"node_id": "big", "level": "topic", "parent_id": None, "label": long_name, "n_members": 1},
             {"node_id": "big.ep", "level": "episode", "parent_id": "big", "label": "big episode", "n_members": 60},
             {"node_id": "small", "level": "topic", "parent_id": None, "label": "small topic name", "n_members": 1},
             {"node_id": "small.ep", "level": "episode", "parent_id": "small", "label": "tiny", "n_members": 1},
             {"node_id": "small.ev", "level": "event", "parent_id": "small.ep", "label": "the only event",
              "n_members": 1}]
    return nodes + [{"node_id": f"ev{k}", "level": "event", "parent_id": "big.ep", "label": f"event {k}",
                     "n_members": 1} for k in range(60)]


@pytest.mark.parametrize("kind", ["sunburst", "treemap"])
def test_hierarchy_figure_labels_only_the_sectors_wide_enough_and_hovers_every_full_name(kind):
    long_name = "a rather long topic name that would never fit in its sector"
    fig = charts.hierarchy_figure(_sized_tree(long_name), kind=kind)
    t = fig.data[0]
    text, label = dict(zip(t.ids, t.text)), dict(zip(t.ids, t.labels))
    assert text["small"] == ""  # 1 event of 61: a sliver of the memory draws no text
    assert text["ev3"] == ""  # 1 event of its episode's 60
    # the big topic draws its name, shortened at a word boundary
    assert text["big"] and text["big"].endswith("…") and long_name.startswith(text["big"][:-1])
    assert long_name[len(text["big"]) - 1] == " "
    # a node wide in the view opened on its parent draws its text, even when small in the whole memory
    assert text["small.ep"] == "tiny" and text["small.ev"] == "the only event"
    # the hover names every node whole
    assert label["big"] == long_name and label["small"] == "small topic name" and label["ev3"] == "event 3"
    assert "%{label}" in t.hovertemplate and t.textinfo == "text"
    assert fig.layout.uniformtext.mode == "hide"  # what still does not fit in the browser is hidden


def test_hierarchy_figure_escapes_names_as_text():
    nodes = [{"node_id": "t", "level": "topic", "parent_id": None, "label": "<b>bold</b> & co", "n_members": 0}]
    t = charts.hierarchy_figure(nodes).data[0]
    assert dict(zip(t.ids, t.labels))["t"] == "&lt;b&gt;bold&lt;/b&gt; &amp; co"


def test_hierarchy_figure_rejects_unknown_kind():
    with pytest.raises(ValueError, match="sunburst or treemap"):
        charts.hierarchy_figure(NODES, kind="pie")


def test_accuracy_figure_groups_by_ablation_and_type():
    rows = [{"ablation": "full", "qtype": "agg", "score": 1.0}, {"ablation": "full", "qtype": "agg", "score": 0.0},
            {"ablation": "full", "qtype": "event", "score": 1.0}, {"ablation": "rag", "qtype": "agg", "score": 0.0}]
    fig = charts.accuracy_figure(rows)
    full, rag = _trace(fig, "full"), _trace(fig, "rag")
    assert list(full.x) == ["agg", "event"] and list(full.y) == [0.5, 1.0]
    assert list(rag.y) == [0.0, None]  # no rag question of type event: no bar, not a zero


def test_scores_figure_has_the_three_scores_per_candidate():
    cands = [{"kind": "table", "name": "sleep_log", "cos": 0.8, "bm25_norm": 1.0, "score": 0.86},
             {"kind": "episode", "name": "ep1", "cos": 0.2, "bm25_norm": 0.0, "score": 0.14}]
    fig = charts.scores_figure(cands)
    assert [t.name for t in fig.data] == ["cosine", "BM25 (normalized)", "combined h"]
    assert list(_trace(fig, "combined h").x) == [0.86, 0.14]


def test_plan_dot_marks_done_and_next_steps_and_escapes_text():
    dot = charts.plan_dot([{"goal": 'find "the" day', "tool": "EventLocate"}, {"goal": "avg", "tool": "Compute"}],
                          done=1, question="How much did I sleep?")
    assert dot.startswith("digraph plan {") and dot.rstrip().endswith("}")
    assert 's0 [label="1. EventLocate\\nfind \\"the\\" day", fillcolor="#b7e1cd"]' in dot
    assert 'fillcolor="#fff2cc"' in dot.split("s1 [", 1)[1].split("\n", 1)[0]  # the next step
    assert "q -> s0;" in dot and "s0 -> s1;" in dot and "s1 -> a;" in dot


ATTR = [  # AttributionResult.to_list() rows, in evidence order
    {"unit": "sleep_log:S1:R1", "round": "S1:R1", "value": 0.5, "rounds": ["S1:R1"], "kind": "row", "step": 0},
    {"unit": "ev7", "round": "S3:R1", "value": -0.25, "rounds": ["S3:R1"], "kind": "event", "step": 1},
    {"unit": "ev9", "round": None, "value": 0.0, "rounds": [], "kind": "event", "step": 1},
]


def test_attribution_figure_has_one_signed_bar_per_unit_in_evidence_order():
    fig = charts.attribution_figure(ATTR, v_full=1.0, v_empty=0.0)
    assert len(fig.data) == 1
    bars = fig.data[0]
    assert bars.orientation == "h"
    assert list(bars.y) == ["row · sleep_log:S1:R1", "event · ev7", "event · ev9"]
    assert list(bars.x) == [0.5, -0.25, 0.0]
    # the sign is visible: positive, negative and null values get three different colours
    assert len(set(bars.marker.color)) == 3 and bars.marker.color[0] == charts.POSITIVE
    assert bars.marker.color[1] == charts.NEGATIVE
    assert fig.layout.yaxis.autorange == "reversed"  # the first unit is drawn on top
    assert "S3:R1" in bars.customdata[1] and "step 2" in bars.customdata[1]
    assert [s.name for s in fig.layout.shapes] == ["zero"]
    assert "v(all) = 1" in fig.layout.title.text and "sum of values = +0.250" in fig.layout.title.text


def test_attribution_figure_without_units_is_empty_but_valid():
    fig = charts.attribution_figure([])
    assert list(fig.data[0].x) == [] and fig.layout.height >= 200


def _big_tree(topics: int, episodes_per_topic: int, events_per_episode: int) -> list[dict]:
    nodes = []
    for t in range(topics):
        tid = f"tp{t}"
        size = episodes_per_topic + (t % 3)  # topics of different sizes
        nodes.append({"node_id": tid, "level": "topic", "parent_id": None, "label": tid, "n_members": size,
                      "first_order": t})
        for e in range(size):
            eid = f"ep{t}.{e}"
            nodes.append({"node_id": eid, "level": "episode", "parent_id": tid, "label": eid,
                          "n_members": events_per_episode, "first_order": t})
            nodes += [{"node_id": f"ev{t}.{e}.{k}", "level": "event", "parent_id": eid, "label": "x", "n_members": 1}
                      for k in range(events_per_episode)]
    return nodes


def _weights(nodes: list[dict]) -> int:
    return sum(n.get("weight", 1 if n["level"] == "event" else 0) for n in nodes)


def test_bound_tree_leaves_a_small_tree_alone():
    nodes = _big_tree(2, 2, 2)
    drawn, note = charts.bound_tree(nodes, max_nodes=len(nodes))
    assert drawn == nodes and note is None


def test_bound_tree_counts_events_in_their_episodes_and_keeps_hits():
    nodes = _big_tree(5, 3, 10)  # 5 topics, 19 episodes, 190 events
    n_events = sum(n["level"] == "event" for n in nodes)
    drawn, note = charts.bound_tree(nodes, max_nodes=100, keep=["ev1.0.3"])
    assert len(drawn) <= 100 and _weights(drawn) == n_events  # sizes stay true
    assert {n["node_id"] for n in drawn if n["level"] == "event"} == {"ev1.0.3"}
    assert next(n for n in drawn if n["node_id"] == "ep1.0")["weight"] == 9  # its kept event is drawn
    assert f"{n_events - 1} events are counted in their episodes" in note


def test_bound_tree_draws_the_largest_topics_and_groups_the_rest():
    nodes = _big_tree(300, 4, 3)
    n_events = sum(n["level"] == "event" for n in nodes)
    drawn, note = charts.bound_tree(nodes, max_nodes=200, keep=["ev7.0.0"])
    assert len(drawn) <= 200 and _weights(drawn) == n_events
    ids = {n["node_id"] for n in drawn}
    assert "tp7" in ids and "ev7.0.0" in ids  # the topic holding a search hit is drawn although small
    other = next(n for n in drawn if n["node_id"] == "other-topics")
    topics_drawn = [n for n in drawn if n["level"] == "topic" and n["node_id"] != "other-topics"]
    assert other["n_members"] == 300 - len(topics_drawn)
    sizes = {n["node_id"]: n["n_members"] for n in nodes if n["level"] == "topic"}
    smallest_drawn = min(sizes[t["node_id"]] for t in topics_drawn if t["node_id"] != "tp7")
    assert smallest_drawn >= max(sizes.values()) - 1  # the largest topics come first
    assert f"the {len(topics_drawn)} largest of 300 topics" in note
    fig = charts.hierarchy_figure(drawn, kind="treemap")  # and the bounded tree still draws
    assert len(fig.data[0].ids) == len(drawn) + 1


def test_bound_tree_notes_events_the_caller_left_out_and_rejects_a_zero_bound():
    nodes = [dict(n, weight=n["n_members"]) if n["level"] == "episode" else n
             for n in _big_tree(2, 2, 5) if n["level"] != "event"]
    drawn, note = charts.bound_tree(nodes, max_nodes=100, hidden_events=25)
    assert _weights(drawn) == 25 and note.startswith("25 events are counted")
    with pytest.raises(ValueError, match="max_nodes"):
        charts.bound_tree(nodes, max_nodes=0)


def test_sweep_figure_is_a_file_by_variant_grid_with_the_values_written():
    fig = charts.sweep_figure(["(all)", "a", "b"], ["full", "rag"], [[0.5, 0.25], [1.0, None], [0.0, 0.5]],
                              metric="accuracy")
    (hm,) = fig.data
    assert list(hm.x) == ["full", "rag"] and list(hm.y) == ["(all)", "a", "b"]
    assert [list(r) for r in hm.z] == [[0.5, 0.25], [1.0, None], [0.0, 0.5]]
    assert [list(r) for r in hm.text] == [["0.5", "0.25"], ["1", ""], ["0", "0.5"]]  # a failed file: no figure
    assert fig.layout.title.text == "accuracy" and fig.layout.yaxis.autorange == "reversed"
