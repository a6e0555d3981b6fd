"""Hierarchy: topic -> episode -> event as a sunburst, treemap or list; node details; semantic search in the tree."""
from __future__ import annotations


import streamlit as st

from core.hierarchy import SCOPES, Hierarchy
from ui import charts, resources, state
from ui.engine import config, memory_version
from ui.resources import open_store, page_store
from ui.views import round_view

path = state.store_path()
st.title("Hierarchy")
st.caption("The retrieval memory: every round is an event; neighbouring similar events form episodes; similar "
           "episodes form topics. Search runs SemanticMatch (fused text and visual similarity).")
store = page_store(path)
version = memory_version(store)


MAX_PICKABLE = 2000  # options of the node picker (search and "open a member" reach the others)
MAX_LISTED = 300  # topics of the list view (search and the node picker reach the others)
MAX_LISTED_MEMBERS = 200  # episodes of a topic, events of an episode in the list view
_MARKDOWN = str.maketrans({c: "\\" + c for c in "\\*_`[]#<>|~$"})  # names are plain text, not markdown


def _node_dict(n, weight: int | None = None) -> dict:
    d = {"node_id": n.node_id, "level": n.level, "parent_id": n.parent_id, "label": n.label,
         "n_members": n.n_members, "t_start": n.t_start, "t_end": n.t_end, "first_order": n.first_order}
    if weight is not None:
        d["weight"] = weight
    return d


@st.cache_data(show_spinner=False, max_entries=8)
def tree(path: str, version: str, with_events: bool) -> list[dict]:
    """The nodes without embeddings (plain dicts), topics first; without events, an episode weighs its events."""
    h = Hierarchy(open_store(path).con, None, None)
    levels = ("topic", "episode", "event") if with_events else ("topic", "episode")
    return [_node_dict(n, None if with_events or n.level != "episode" else n.n_members) for n in h.tree(levels)]


counts = Hierarchy(store.con, None, None).counts()
with_events = sum(counts.values()) <= charts.MAX_DRAWN  # else drawn without its events
nodes = tree(path, version, with_events)
if not nodes:
    st.info("The hierarchy is empty: no round has been processed yet.")
    st.stop()

by_id = {n["node_id"]: n for n in nodes}
c1, c2, c3 = st.columns(3)
c1.metric("Topics", counts["topic"])
c2.metric("Episodes", counts["episode"])
c3.metric("Events", counts["event"])


def _hierarchy(search: bool = False) -> Hierarchy:
    """The hierarchy's read API; the encoders (slow to load) only when a search needs them."""
    if search:
        return Hierarchy(store.con, resources.text_encoder(), resources.image_encoder(), config())
    return Hierarchy(store.con, None, None, config())


def _add_node(nid: str) -> None:
    """Load a node missing from a tree drawn without events (a hit, a picked member) under its episode."""
    if nid in by_id:
        return
    info_n = Hierarchy(store.con, None, None).node(nid)
    if info_n is None:
        return
    by_id[nid] = _node_dict(info_n)
    nodes.append(by_id[nid])
    parent = by_id.get(info_n.parent_id)
    if parent is not None and "weight" in parent:  # the event is drawn now: its episode weighs one less
        parent["weight"] = max(0, parent["weight"] - 1)


# ------------------------------------------------------------------ search
with st.form("hier_search_form"):
    q1, q2, q3 = st.columns([4, 1, 1])
    query = q1.text_input("Search the memory (SemanticMatch)", key="hier_query",
                          placeholder="e.g. card game with friends")
    scope = q2.selectbox("Scope", list(SCOPES), index=list(SCOPES).index("event") if "event" in SCOPES else 0,
                         key="hier_scope")
    k = q3.number_input("Hits", 1, 50, 5, key="hier_k")
    st.form_submit_button("Search")

hits: dict[str, float] = {}
if query.strip():
    enc_built = store.get_meta("text_encoder")
    try:
        found = _hierarchy(search=True).search(query.strip(), scope=scope, k=int(k))
    except Exception as e:  # an encoder that does not match the memory's embeddings, for instance
        st.error(f"Search failed: {type(e).__name__}: {e}"
                 + (f" (this memory was built with the text encoder `{enc_built}`)" if enc_built else ""))
        found = []
    hits = dict(found)
    for nid in hits:
        _add_node(nid)
    if found and st.session_state.get("_hier_last_query") != (query, scope, k):
        st.session_state[state.SELECTED_NODE] = found[0][0]  # a new search opens its best hit
    st.session_state["_hier_last_query"] = (query, scope, k)
    if found:
        st.markdown(f"**{len(found)} hit(s)** — highlighted in orange in the tree.")
        st.dataframe([{"node": nid, "level": by_id.get(nid, {}).get("level", ""), "score": round(s, 3),
                       "in": " › ".join(p for p in _hierarchy().path(nid)[:-1]),
                       "name": by_id.get(nid, {}).get("label") or ""} for nid, s in found],
                     hide_index=True, width="stretch")
    else:
        st.caption("No hit.")

# ------------------------------------------------------------------ tree
kind = st.radio("View", ["sunburst", "treemap", "list"], horizontal=True, key="hier_kind",
                help="list: the topics with their names, sizes and time spans; open one to see its episodes, "
                     "pick an episode to see its events")
selectable = [n["node_id"] for n in nodes if n["level"] in ("topic", "episode")]
if len(selectable) > MAX_PICKABLE:  # topics first (tree order), then as many episodes as fit
    selectable = selectable[:MAX_PICKABLE]
selectable = list(dict.fromkeys(list(hits) + selectable))
if st.session_state.get(state.SELECTED_NODE):
    _add_node(st.session_state[state.SELECTED_NODE])
if st.session_state.get(state.SELECTED_NODE) not in by_id:
    st.session_state[state.SELECTED_NODE] = next(iter(hits), selectable[0] if selectable else nodes[0]["node_id"])
selected = st.session_state[state.SELECTED_NODE]
# highlight each hit and the path down to it, so hits deep in the tree are visible from the top
shown_hits = dict(hits)
for nid in hits:
    p = by_id.get(nid, {}).get("parent_id")
    while p and p in by_id and p not in shown_hits:
        shown_hits[p] = hits[nid]
        p = by_id[p].get("parent_id")


def _select(nid: str) -> None:
    st.session_state[state.SELECTED_NODE] = nid


def _span(n: dict) -> str:
    """A node's time span by day: '2026-03-01' or '2026-03-01 → 2026-03-12' ('' without times)."""
    a, b = n.get("t_start"), n.get("t_end")
    if not a:
        return ""
    return f"{a:%Y-%m-%d}" + (f" → {b:%Y-%m-%d}" if b and f"{b:%Y-%m-%d}" != f"{a:%Y-%m-%d}" else "")


def _count(k: int, word: str) -> str:
    return f"{k:,} {word}" + ("" if k == 1 else "s")


def _entry(n: dict, size: str) -> str:
    """One line of the list view: a mark for the selection and the hits, the name, its size and time span."""
    mark = "● " if n["node_id"] == selected else ("★ " if n["node_id"] in hits else "")
    span = _span(n)
    return f"{mark}{(n['label'] or n['node_id']).translate(_MARKDOWN)} · {size}" + (f" · {span}" if span else "")


def _tree_list() -> None:
    """Topics as expanders (their content runs only when open), episodes as buttons, the picked episode's
    events under it; a click selects the node like the picker does."""
    topics = [n for n in nodes if n["level"] == "topic"]
    episodes: dict[str | None, list[dict]] = {}
    for n in nodes:
        if n["level"] == "episode":
            episodes.setdefault(n["parent_id"], []).append(n)
    on_path = set(_hierarchy().path(selected))
    listed = topics[:MAX_LISTED] + [t for t in topics[MAX_LISTED:] if t["node_id"] in on_path]
    if len(listed) < len(topics):
        st.caption(f"Listed: {len(listed):,} of {len(topics):,} topics, in round order. Search or pick a node "
                   "to open the others.")
    if st.session_state.get("_hier_list_opened_for") != selected:  # a new selection opens its topic
        st.session_state["_hier_list_opened_for"] = selected
        for tid in on_path & {t["node_id"] for t in listed}:
            st.session_state[f"hier_tree_{tid}"] = True
    for t in listed:
        eps = episodes.get(t["node_id"], [])
        size = f"{_count(len(eps), 'episode')} · {_count(sum(e['n_members'] for e in eps), 'event')}"
        with st.expander(_entry(t, size), key=f"hier_tree_{t['node_id']}", on_change="rerun") as box:
            if not box.open:
                continue
            st.button("select this topic", key=f"hier_pick_{t['node_id']}", on_click=_select, args=(t["node_id"],),
                      type="tertiary", icon=":material/ads_click:")
            for e in eps[:MAX_LISTED_MEMBERS]:
                st.button(_entry(e, _count(e["n_members"], "event")), key=f"hier_pick_{e['node_id']}", on_click=_select,
                          args=(e["node_id"],), type="tertiary",
                          icon=":material/expand_more:" if e["node_id"] in on_path else ":material/chevron_right:")
                if e["node_id"] in on_path:
                    _event_list(e["node_id"])
            if len(eps) > MAX_LISTED_MEMBERS:
                st.caption(f"… and {len(eps) - MAX_LISTED_MEMBERS:,} more episodes: select the topic and open "
                           "them from its members.")


def _event_list(episode_id: str) -> None:
    """The events of an opened episode, indented under it, each a button that selects it."""
    events = _hierarchy().members(episode_id)
    for ev in events[:MAX_LISTED_MEMBERS]:
        n = {"node_id": ev.node_id, "label": ev.label, "t_start": ev.t_start, "t_end": ev.t_end}
        _, col = st.columns([1, 24])
        col.button(_entry(n, f"round {ev.first_order}"), key=f"hier_pick_{ev.node_id}", on_click=_select,
                   args=(ev.node_id,), type="tertiary")
    if len(events) > MAX_LISTED_MEMBERS:
        st.caption(f"… and {len(events) - MAX_LISTED_MEMBERS:,} more events: select the episode and open them "
                   "from its members.")


if kind == "list":
    _tree_list()
else:
    hidden = 0 if with_events else counts["event"] - sum(n["level"] == "event" for n in nodes)
    drawn, note = charts.bound_tree(nodes, charts.MAX_DRAWN, keep=[*shown_hits, selected], hidden_events=hidden)
    if note:
        st.caption(f"Drawn: {len(drawn):,} of {sum(counts.values()):,} nodes. {note} Search or pick a node to "
                   "open any of them.")
    st.plotly_chart(charts.hierarchy_figure(drawn, hits=shown_hits, kind=kind, selected=selected), width="stretch",
                    key="hier_fig")

# ------------------------------------------------------------------ node details
if selected not in selectable:
    selectable = [selected] + selectable


def _fmt(nid: str) -> str:
    n = by_id.get(nid)
    if n is None:
        return nid
    mark = "★ " if nid in hits else ""
    return f"{mark}{n['level']} · {nid} · {(n['label'] or '')[:60]}"


st.session_state["hier_node_pick"] = selected  # the widget follows the selection made anywhere on the page
st.selectbox("Node", selectable, format_func=_fmt, key="hier_node_pick",
             on_change=lambda: st.session_state.update({state.SELECTED_NODE: st.session_state["hier_node_pick"]}))

h = _hierarchy()
info = h.node(selected)
if info is None:
    st.warning(f"Node {selected} is not in this memory.")
    st.stop()
st.subheader(f"{info.level.capitalize()} {info.node_id}")
st.markdown(f"**{(info.label or info.node_id).translate(_MARKDOWN)}**")
span = ""
if info.t_start:
    span = f"{info.t_start:%Y-%m-%d %H:%M}" + (f" → {info.t_end:%Y-%m-%d %H:%M}" if info.t_end and info.t_end != info.t_start else "")
st.markdown(f"**Time span:** {span or 'n/a'} · **rounds** {info.first_order}–{info.last_order} · "
            f"**members:** {info.n_members}" + ("" if info.closed else " · *open*"))
path_ids = h.path(selected)
if len(path_ids) > 1:
    st.caption("Path: " + " › ".join(path_ids))
st.markdown("**Description**")
st.write(info.description or "(none)")

if info.level == "event":
    if info.round_id:
        round_view(store, info.round_id, expanded=True)
else:
    members = h.members(selected)
    st.markdown(f"**Members ({len(members)})**")
    st.dataframe([{"node": m.node_id, "level": m.level, "members": m.n_members,
                   "start": m.t_start, "name": m.label} for m in members],
                 hide_index=True, width="stretch")
    member_ids = [m.node_id for m in members]
    if member_ids:
        st.selectbox("Open a member", member_ids, index=None, placeholder="choose a member to open it",
                     format_func=_fmt, key=f"hier_member_{selected}",
                     on_change=lambda: st.session_state.update(
                         {state.SELECTED_NODE: st.session_state[f"hier_member_{selected}"]}))
    images = h.images(selected)
    if images:
        st.markdown(f"**Images ({len(images)})**")
        cols = st.columns(4)
        for i, iid in enumerate(images[:24]):
            data = store.image_bytes(iid)
            with cols[i % 4]:
                if data:
                    try:
                        st.image(data, caption=iid, width="stretch")
                    except Exception:
                        st.caption(f"{iid} (cannot display)")
                else:
                    info_i = store.image_info(iid) or {}
                    st.caption(f"{iid}: {info_i.get('caption') or '(no bytes)'}")
