"""Plotly figures (and one graphviz DOT string) for the explorer pages.

Plain functions over plain data (lists of dicts / tuples): no Streamlit, no
store, so tests build and inspect the figures directly. Every figure draws
its thresholds as named horizontal lines (shapes with `name`) and its
induction events as marker traces named "discovered" / "evolved", so a test
or a person can find them.
"""
from __future__ import annotations

import html
from collections import defaultdict
from typing import Iterable, Mapping, Sequence

import plotly.graph_objects as go

from core.hierarchy.naming import trim_words

EVENT_STYLE = {
    "discovered": dict(symbol="star", size=14, color="#2ca02c"),
    "evolved": dict(symbol="diamond", size=12, color="#d62728"),
    "candidate": dict(symbol="circle-open", size=9, color="#7f7f7f"),
}
LEVEL_COLORS = {"topic": "#4c78a8", "episode": "#72b7b2", "event": "#bab0ac"}
HIT_COLOR = "#f58518"


def pattern_label(pattern: Sequence[str] | str) -> str:
    """A pattern as people read it: 'a + b + c' (the stored 'a|b|c' form is accepted)."""
    if isinstance(pattern, str):
        pattern = pattern.split("|") if pattern else ()
    return " + ".join(pattern) or "(empty)"


# Okabe–Ito colours: told apart by colour-blind readers too; the first four are for the highlighted patterns.
TIMELINE_COLORS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000", "#999999")
HIGHLIGHTED = 4  # patterns drawn by default on the induction timeline


def short_label(pattern: Sequence[str], limit: int = 32) -> str:
    """pattern_label cut to about `limit` characters: 'a + b + 3 more' (the full text belongs in the hover)."""
    full = pattern_label(pattern)
    if len(full) <= limit:
        return full
    kept: list[str] = []
    for a in pattern:
        if kept and len(" + ".join(kept + [a])) > limit - 9:
            break
        kept.append(a)
    return " + ".join(kept) + f" + {len(pattern) - len(kept)} more"


def legend_names(patterns: Iterable[Sequence[str]], tables: Mapping[tuple[str, ...], str] | None = None
                 ) -> dict[tuple[str, ...], str]:
    """pattern -> its short legend name: the table it became (`tables`), else short_label; a shortened name
    shared by two patterns gets a number, so every legend entry stays distinct."""
    tables = dict(tables or {})
    out: dict[tuple[str, ...], str] = {}
    used: dict[str, int] = {}
    for p in patterns:
        p = tuple(p)
        name = tables.get(p) or short_label(p)
        used[name] = used.get(name, 0) + 1
        out[p] = name if used[name] == 1 else f"{name} ({used[name]})"
    return out


def pattern_colors(patterns: Iterable[Sequence[str]]) -> dict[tuple[str, ...], str]:
    """pattern -> a line colour, TIMELINE_COLORS in the given order (cycling past eight)."""
    return {tuple(p): TIMELINE_COLORS[i % len(TIMELINE_COLORS)] for i, p in enumerate(patterns)}


def highlighted_patterns(timeline: Iterable[Mapping], events: Iterable[Mapping], k: int = HIGHLIGHTED
                         ) -> list[tuple[str, ...]]:
    """The `k` patterns the timeline draws by default: the ones that became schemas (discovered or evolved
    into, in event order) first, then the highest support reached, ties by pattern."""
    made: list[tuple[str, ...]] = []
    for e in events:
        p = tuple(e["pattern"])
        if e["kind"] in ("discovered", "evolved") and p not in made:
            made.append(p)
    best: dict[tuple[str, ...], int] = {}
    for r in timeline:
        p = tuple(r["pattern"])
        best[p] = max(best.get(p, 0), int(r["support"]))
    rest = sorted((p for p in best if p not in made), key=lambda p: (-best[p], p))
    return (made + rest)[:k]


def _threshold(fig: go.Figure, y: float, name: str, color: str, *, row_label: str | None = None) -> None:
    fig.add_hline(y=y, line_dash="dash", line_color=color, name=name,
                  annotation_text=row_label or f"{name} = {y:g}", annotation_position="top left")


def _cursor(fig: go.Figure, at_round: int | None) -> None:
    if at_round is not None:
        fig.add_vline(x=at_round, line_dash="dot", line_color="#444", name="selected round")


# The legend goes under the plot (pattern names are long); the figure grows with it so the plot keeps its height.
_LEGEND = dict(orientation="h", yanchor="top", y=-0.15, xanchor="left", x=0)


def _height(fig: go.Figure) -> int:
    return min(1000, 360 + 22 * len(fig.data))


def _series(rows: Iterable[Mapping], value: str, upto: int | None) -> dict[tuple[str, ...], list[tuple[int, float]]]:
    out: dict[tuple[str, ...], list[tuple[int, float]]] = defaultdict(list)
    for r in rows:
        if upto is not None and r["round_order"] > upto:
            continue
        v = r.get(value)
        if v is None:
            continue
        out[tuple(r["pattern"])].append((int(r["round_order"]), float(v)))
    for pts in out.values():
        pts.sort()
    return out


def _event_markers(fig: go.Figure, events: Iterable[Mapping], y_of, upto: int | None,
                   colors: Mapping[tuple[str, ...], str]) -> None:
    """One marker trace per event kind, for the events of the drawn patterns only (`colors`: drawn pattern ->
    its line colour, which the marker takes); y_of(event) gives the marker's height (None: skip)."""
    by_kind: dict[str, list[tuple[int, float, str, str]]] = defaultdict(list)
    for e in events:
        if e["kind"] not in ("discovered", "evolved") or (upto is not None and e["round_order"] > upto):
            continue
        color = colors.get(tuple(e["pattern"]))
        y = y_of(e)
        if y is None or color is None:  # a star on no line would point at nothing
            continue
        what = f"{e['kind']}: {pattern_label(e['pattern'])}"
        if e.get("previous"):
            what += f"<br>from {pattern_label(e['previous'])}"
        by_kind[e["kind"]].append((int(e["round_order"]), float(y), what, color))
    for kind, pts in by_kind.items():
        style = dict(EVENT_STYLE[kind], color=[p[3] for p in pts], line=dict(color="#222222", width=1))
        fig.add_trace(go.Scatter(
            x=[p[0] for p in pts], y=[p[1] for p in pts], mode="markers", name=kind,
            marker=style, text=[p[2] for p in pts], hovertemplate="round %{x}<br>%{text}<extra></extra>",
        ))


def _styles(patterns: Iterable[tuple[str, ...]], names, colors) -> tuple[dict, dict]:
    """(legend name, colour) of every pattern drawn: the caller's when given, else its label and the palette."""
    patterns = list(patterns)
    names = {**{p: pattern_label(p) for p in patterns}, **dict(names or {})}
    colors = {**pattern_colors(patterns), **dict(colors or {})}
    return names, colors


def support_figure(timeline: Sequence[Mapping], events: Sequence[Mapping], theta_s: int, *,
                   upto: int | None = None, at_round: int | None = None, title: str = "Support",
                   names: Mapping[tuple[str, ...], str] | None = None,
                   colors: Mapping[tuple[str, ...], str] | None = None) -> go.Figure:
    """Support of each pattern over rounds (step lines), θ_s drawn, schema events marked on their line.

    timeline: rows with round_order, pattern (tuple of attributes), support.
    events: rows with round_order, kind, pattern, previous, numbers (dict with supp).
    upto: draw nothing after this round (the replay position); at_round: a vertical cursor.
    names / colors: pattern -> legend name / line colour (default: the full label / TIMELINE_COLORS in
    order); the hover always shows the full attribute list.
    """
    fig = go.Figure()
    series = _series(timeline, "support", upto)
    names, colors = _styles(series, names, colors)
    for pattern, pts in series.items():
        fig.add_trace(go.Scatter(
            x=[p[0] for p in pts], y=[p[1] for p in pts], mode="lines+markers", line_shape="hv",
            name=names[pattern], marker=dict(size=4), line=dict(color=colors[pattern], width=2.5),
            hovertemplate="round %{x}<br>support %{y}<extra>" + html.escape(pattern_label(pattern)) + "</extra>",
        ))
    _threshold(fig, float(theta_s), "θ_s", "#d62728")
    _event_markers(fig, events, lambda e: dict(e.get("numbers") or {}).get("supp"), upto,
                   {p: colors[p] for p in series})
    _cursor(fig, at_round)
    fig.update_layout(title=title, xaxis_title="round", yaxis_title="support (rounds)", height=_height(fig),
                      legend=_LEGEND, margin=dict(l=40, r=20, t=50, b=40))
    return fig


def confidence_figure(timeline: Sequence[Mapping], events: Sequence[Mapping], theta_a: float, theta_e: float, *,
                      upto: int | None = None, at_round: int | None = None,
                      title: str = "All-confidence and extension-confidence",
                      names: Mapping[tuple[str, ...], str] | None = None,
                      colors: Mapping[tuple[str, ...], str] | None = None) -> go.Figure:
    """all-conf (solid) and ext-conf (dashed) per pattern over rounds, in the pattern's colour, θ_a and θ_e
    drawn, events marked on their pattern's line. names / colors as in support_figure."""
    fig = go.Figure()
    series = {value: _series(timeline, value, upto) for value in ("all_conf", "ext_conf")}
    drawn = list(dict.fromkeys([*series["all_conf"], *series["ext_conf"]]))
    names, colors = _styles(drawn, names, colors)
    for value, dash, prefix in (("all_conf", "solid", "all-conf"), ("ext_conf", "dash", "ext-conf")):
        for pattern, pts in series[value].items():
            fig.add_trace(go.Scatter(
                x=[p[0] for p in pts], y=[p[1] for p in pts], mode="lines+markers",
                line=dict(dash=dash, color=colors[pattern], width=2.5),
                name=f"{prefix}: {names[pattern]}", marker=dict(size=4), legendgroup=prefix,
                hovertemplate="round %{x}<br>" + prefix + " %{y:.2f}<extra>"
                + html.escape(pattern_label(pattern)) + "</extra>",
            ))
    _threshold(fig, float(theta_a), "θ_a", "#9467bd")
    _threshold(fig, float(theta_e), "θ_e", "#8c564b")

    def y_of(e):
        n = dict(e.get("numbers") or {})
        return n.get("all_conf") if e["kind"] == "discovered" else n.get("ext_conf")

    _event_markers(fig, events, y_of, upto, {p: colors[p] for p in drawn})
    _cursor(fig, at_round)
    fig.update_layout(title=title, xaxis_title="round", yaxis_title="confidence", yaxis_range=[0, 1.05],
                      height=_height(fig), legend=_LEGEND, margin=dict(l=40, r=20, t=50, b=40))
    return fig


def column_figure(times: Sequence, values: Sequence, *, column: str, unit: str | None = None,
                  rounds: Sequence[str] = ()) -> go.Figure:
    """A numeric column over time (NULLs skipped), hover shows the source round."""
    pts = [(t, v, r) for t, v, r in zip(times, values, list(rounds) or [""] * len(times)) if v is not None]
    label = f"{column} ({unit})" if unit else column
    fig = go.Figure(go.Scatter(
        x=[p[0] for p in pts], y=[p[1] for p in pts], mode="lines+markers", name=label,
        text=[p[2] for p in pts], hovertemplate="%{x}<br>%{y}<br>%{text}<extra></extra>",
    ))
    fig.update_layout(title=f"{label} over time", xaxis_title="time", yaxis_title=label, height=340,
                      margin=dict(l=40, r=20, t=50, b=40))
    return fig


def hierarchy_figure(nodes: Sequence[Mapping], *, hits: Mapping[str, float] | None = None,
                     kind: str = "sunburst", selected: str | None = None) -> go.Figure:
    """topic -> episode -> event as a sunburst or treemap; each node sized by its events.

    nodes: rows with node_id, level, parent_id, label, n_members. hits: node id ->
    search score; hit nodes (and their ancestors' paths) are coloured HIT_COLOR.
    A synthetic root "memory" holds the topics (and any orphan episodes/events).
    A sector draws its name (shortened at a word boundary) only when it is at least
    MIN_LABEL_SHARE of its view (see _sector_texts); every name is whole in the hover.
    Raises ValueError for an unknown kind.
    """
    if kind not in ("sunburst", "treemap"):
        raise ValueError(f"kind must be sunburst or treemap, got {kind!r}")
    hits = dict(hits or {})
    ids = {n["node_id"] for n in nodes}
    ids_out, names, parents, values, colors, custom = ["memory"], ["memory"], [""], [0], ["#ffffff"], [""]
    for n in nodes:
        parent = n.get("parent_id") if n.get("parent_id") in ids else "memory"
        ids_out.append(n["node_id"])
        names.append(n.get("label") or n["node_id"])
        parents.append(parent)
        # leaves carry the count; branchvalues="remainder" lets parents add up their children. A node may
        # carry its own "weight": the events it stands for that are not drawn (see bound_tree)
        values.append(n.get("weight", 1 if n["level"] == "event" else 0))
        if n["node_id"] in hits:
            colors.append(HIT_COLOR)
        elif n["node_id"] == selected:
            colors.append("#e45756")
        else:
            colors.append(LEVEL_COLORS.get(n["level"], "#cccccc"))
        members = f" · {n.get('n_members', 0)} members" if n["level"] != "event" else ""
        custom.append(f"{n['level']} {n['node_id']}{members}"
                      + (f" · hit {hits[n['node_id']]:.2f}" if n["node_id"] in hits else ""))
    trace_cls = go.Sunburst if kind == "sunburst" else go.Treemap
    shape = dict(insidetextorientation="auto") if kind == "sunburst" else {}
    fig = go.Figure(trace_cls(
        ids=ids_out, labels=[html.escape(x, quote=False) for x in names], parents=parents, values=values,
        branchvalues="remainder", textinfo="text",
        text=[html.escape(x, quote=False) for x in _sector_texts(ids_out, parents, values, names)],
        marker=dict(colors=colors), customdata=custom, hovertemplate="%{customdata}<br>%{label}<extra></extra>",
        maxdepth=3, **shape,
    ))
    # the browser hides what still does not fit at a readable size (a sector narrowed by zooming out)
    fig.update_layout(height=560, margin=dict(l=0, r=0, t=30, b=0), uniformtext=dict(minsize=10, mode="hide"))
    return fig


MIN_LABEL_SHARE = 0.02  # a sector narrower than this share of its view draws no text (its name is in the hover)
SECTOR_CHARS = 24  # longest text drawn in a sector


def _sector_texts(ids: Sequence[str], parents: Sequence[str], values: Sequence[float],
                  names: Sequence[str]) -> list[str]:
    """The text drawn in each sector of hierarchy_figure: its name shortened at a word boundary, or "" when
    the sector is a sliver even where it is seen widest (a topic in the whole memory, any other node in its
    parent opened by a click). The root (no parent among `ids`) always keeps its name."""
    total = dict(zip(ids, (float(v or 0) for v in values)))
    parent_of = {i: p for i, p in zip(ids, parents) if p in total and p != i}

    def depth(i: str) -> int:
        d, seen = 0, {i}
        while parent_of.get(i) is not None and parent_of[i] not in seen:
            i = parent_of[i]
            seen.add(i)
            d += 1
        return d

    for i in sorted(total, key=depth, reverse=True):  # the deepest first: each node adds into its parent
        if i in parent_of:
            total[parent_of[i]] += total[i]
    out = []
    for i, name in zip(ids, names):
        whole = total[parent_of[i]] if i in parent_of else 0.0
        wide = i not in parent_of or (whole > 0 and total[i] / whole >= MIN_LABEL_SHARE)
        out.append(trim_words(name, SECTOR_CHARS) if wide else "")
    return out


MAX_DRAWN = 4000  # sectors of a hierarchy figure a browser draws quickly


def bound_tree(nodes: Sequence[Mapping], max_nodes: int = 4000, keep: Sequence[str] = (), hidden_events: int = 0
               ) -> tuple[list[dict], str | None]:
    """At most about `max_nodes` of a hierarchy's nodes to draw, and a note saying what was left out.

    A browser cannot draw a sunburst of 100k sectors. Over the bound, events are
    left out (each episode then weighs its event count; events listed in `keep`,
    e.g. search hits, stay); if topics and episodes alone are still over it, the
    topics holding a `keep` node (always, even past the bound) and then the
    largest ones are drawn with their episodes, and the rest become one "smaller
    topics" sector weighing their events.
    Sizes stay true: every sector still weighs the events under it.
    hidden_events: events the caller already left out (its episodes carry a
    "weight"), for the note. Returns the nodes unchanged, and None or the note
    on hidden events, when they fit. Raises ValueError for max_nodes < 1.
    """
    if max_nodes < 1:
        raise ValueError(f"max_nodes must be >= 1, got {max_nodes}")
    if len(nodes) <= max_nodes:
        note = f"{hidden_events:,} events are counted in their episodes, not drawn one by one." if hidden_events else None
        return [dict(n) for n in nodes], note
    keep = set(keep)
    by_id = {n["node_id"]: n for n in nodes}
    kept_events = [dict(n) for n in nodes if n["level"] == "event" and n["node_id"] in keep]
    shown_under: dict[str, int] = {}
    for e in kept_events:
        shown_under[e.get("parent_id")] = shown_under.get(e.get("parent_id"), 0) + 1
    episodes = [dict(n) if "weight" in n else
                dict(n, weight=max(0, int(n.get("n_members") or 0) - shown_under.get(n["node_id"], 0)))
                for n in nodes if n["level"] == "episode"]
    topics = [dict(n) for n in nodes if n["level"] == "topic"]
    n_events = hidden_events + sum(n["level"] == "event" and n["node_id"] not in keep for n in nodes)
    note = f"{n_events:,} events are counted in their episodes, not drawn one by one"
    if len(topics) + len(episodes) + len(kept_events) <= max_nodes:
        return topics + episodes + kept_events, note + "."
    under: dict[str, list[dict]] = {}
    for e in episodes:
        under.setdefault(e.get("parent_id"), []).append(e)
    wanted = {n["node_id"] for n in topics} & ({by_id.get(k, {}).get("parent_id") for k in keep} | keep)
    for k in keep:  # a kept event's topic is its episode's parent
        ep = by_id.get(by_id.get(k, {}).get("parent_id") or "")
        if ep is not None and ep.get("parent_id"):
            wanted.add(ep["parent_id"])

    def events_of(t: dict) -> int:
        return sum(e["weight"] for e in under.get(t["node_id"], []))

    order = sorted(topics, key=lambda t: (t["node_id"] not in wanted, -events_of(t), t.get("first_order") or 0))
    budget = max_nodes - 1 - len(kept_events) - len(under.get(None, []))
    drawn, rest = [], []
    for t in order:
        cost = 1 + len(under.get(t["node_id"], []))
        if t["node_id"] in wanted or cost <= budget:  # a hit's topic is always drawn
            drawn.append(t)
            budget -= cost
        else:
            rest.append(t)
    ids = {t["node_id"] for t in drawn}
    out = drawn + [e for e in episodes if e.get("parent_id") in ids or e.get("parent_id") is None]
    drawn_eps = {e["node_id"] for e in out}
    out += [e for e in kept_events if e.get("parent_id") in drawn_eps]
    if rest:
        out.append({"node_id": "other-topics", "level": "topic", "parent_id": None, "n_members": len(rest),
                    "label": f"{len(rest):,} smaller topics", "weight": sum(events_of(t) for t in rest)})
    return out, note + f"; the {len(drawn):,} largest of {len(topics):,} topics are drawn with their episodes."


def scores_figure(candidates: Sequence[Mapping]) -> go.Figure:
    """Planning-context candidates: cosine, normalized BM25 and combined score per candidate."""
    names = [f"{c['kind']}: {c['name']}" for c in candidates]
    fig = go.Figure()
    for key, label in (("cos", "cosine"), ("bm25_norm", "BM25 (normalized)"), ("score", "combined h")):
        fig.add_trace(go.Bar(y=names, x=[c.get(key) or 0.0 for c in candidates], name=label, orientation="h"))
    fig.update_layout(barmode="group", height=max(240, 28 * len(names) + 100), yaxis=dict(autorange="reversed"),
                      margin=dict(l=10, r=10, t=30, b=30), legend=dict(orientation="h"))
    return fig


def accuracy_figure(rows: Sequence[Mapping]) -> go.Figure:
    """Accuracy per question type, one bar group per ablation.

    rows: one per scored question with ablation, qtype, score (0..1).
    """
    acc: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        acc[r["ablation"]][r.get("qtype") or "(none)"].append(float(r["score"]))
    types = sorted({t for by in acc.values() for t in by})
    fig = go.Figure()
    for ablation, by in acc.items():
        fig.add_trace(go.Bar(
            x=types, y=[(sum(by[t]) / len(by[t])) if by.get(t) else None for t in types], name=ablation,
            text=[f"n={len(by[t])}" if by.get(t) else "" for t in types], textposition="outside",
        ))
    fig.update_layout(barmode="group", yaxis_range=[0, 1.1], yaxis_title="accuracy", xaxis_title="question type",
                      height=380, margin=dict(l=40, r=20, t=30, b=40))
    return fig


def _dot_escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")


def wrap_label(text: str, width: int = 26, max_lines: int = 5) -> list[str]:
    """`text` in lines of about `width` characters, broken at spaces only (a table or column name is never
    cut), at most `max_lines` lines, the last ending in "…" when words were left out."""
    import textwrap

    lines = textwrap.wrap(" ".join(text.split()), width, break_long_words=False, break_on_hyphens=False)
    if len(lines) > max_lines:
        lines = lines[:max_lines]
        lines[-1] += " …"
    return lines


def _dot_lines(text: str, width: int = 26, max_lines: int = 5) -> str:
    return "\\n".join(_dot_escape(line) for line in wrap_label(text, width, max_lines))


def plan_dot(steps: Sequence[Mapping], done: int = 0, *, question: str = "") -> str:
    """The plan as a graphviz DOT graph: question -> step 1 -> ... -> answer.

    steps: rows with goal and tool; the first `done` are drawn as executed (filled). Texts are wrapped
    at spaces, never cut inside a word.
    """
    lines = ["digraph plan {", "rankdir=LR;", 'node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=11];']
    q = _dot_lines(question, 30, 4) or "question"
    lines.append(f'q [label="{q}", shape=ellipse, fillcolor="#e8e8e8"];')
    prev = "q"
    for i, s in enumerate(steps):
        fill = "#b7e1cd" if i < done else ("#fff2cc" if i == done else "#ffffff")
        lines.append(f's{i} [label="{i + 1}. {_dot_escape(s["tool"])}\\n{_dot_lines(s["goal"])}", fillcolor="{fill}"];')
        lines.append(f"{prev} -> s{i};")
        prev = f"s{i}"
    lines.append('a [label="answer", shape=ellipse, fillcolor="%s"];' % ("#b7e1cd" if done >= len(steps) else "#ffffff"))
    lines.append(f"{prev} -> a;")
    lines.append("}")
    return "\n".join(lines)


POSITIVE, NEGATIVE, NEUTRAL = "#2ca02c", "#d62728", "#9e9e9e"


def attribution_label(row: Mapping) -> str:
    """How a unit is named on the attribution chart: 'kind · unit id'."""
    return f"{row.get('kind') or 'unit'} · {row['unit']}"


def attribution_figure(values: Sequence[Mapping], *, v_full: float | None = None, v_empty: float | None = None,
                       title: str = "Shapley value of each evidence unit") -> go.Figure:
    """One horizontal bar per evidence unit: its signed Shapley value, in evidence order (first on top).

    values: rows as AttributionResult.to_list() gives them (unit, value, kind, round, rounds, step).
    Bars are green when the unit pushed towards the answer, red when against, grey at 0; the
    hover names the unit's round. A vertical line at 0 (named "zero") separates the signs.
    """
    labels = [attribution_label(r) for r in values]
    xs = [float(r["value"]) for r in values]
    colors = [POSITIVE if x > 1e-9 else NEGATIVE if x < -1e-9 else NEUTRAL for x in xs]
    hover = [f"round {r.get('round') or '—'}" + (f" · step {r['step'] + 1}" if r.get("step") is not None else "")
             + (f"<br>{html.escape(str(r.get('text'))[:120])}" if r.get("text") else "") for r in values]
    fig = go.Figure(go.Bar(
        y=labels, x=xs, orientation="h", marker_color=colors, name="Shapley value", customdata=hover,
        text=[f"{x:+.3f}" for x in xs], textposition="outside", cliponaxis=False,
        hovertemplate="%{y}<br>value %{x:+.3f}<br>%{customdata}<extra></extra>",
    ))
    fig.add_vline(x=0, line_color="#444", line_width=1, name="zero")
    sub = []
    if v_full is not None and v_empty is not None:
        sub.append(f"v(all) = {v_full:g}, v(none) = {v_empty:g}, sum of values = {sum(xs):+.3f}")
    span = max([abs(x) for x in xs] + [0.1])
    fig.update_layout(
        title=title + (f"<br><sup>{sub[0]}</sup>" if sub else ""), xaxis_title="Shapley value (signed)",
        xaxis_range=[-1.25 * span, 1.25 * span], yaxis=dict(autorange="reversed", type="category"),
        height=max(220, 34 * len(labels) + 120), margin=dict(l=10, r=30, t=60, b=40), showlegend=False)
    return fig


def sweep_figure(files: Sequence[str], variants: Sequence[str], values: Sequence[Sequence[float | None]], *,
                 metric: str) -> go.Figure:
    """A sweep (core.evaluation.sweep.pivot): one row per file, one column per variant, the metric's
    value written in each cell and its colour on one scale; the pooled row comes first."""
    text = [["" if v is None else f"{v:.3g}" for v in row] for row in values]
    fig = go.Figure(go.Heatmap(z=[[v for v in row] for row in values], x=list(variants), y=list(files),
                               text=text, texttemplate="%{text}", colorscale="Viridis", colorbar=dict(title=metric),
                               hovertemplate="file %{y}<br>variant %{x}<br>" + metric + " %{z}<extra></extra>"))
    fig.update_layout(height=max(260, 34 * len(files) + 140), margin=dict(l=10, r=10, t=30, b=40),
                      yaxis=dict(autorange="reversed", title="file"), xaxis=dict(title="variant", side="top"),
                      title=dict(text=metric, x=0.0))
    return fig
