"""Hierarchy: topic -> episode -> event as a sunburst or treemap; node details; semantic search in the tree."""
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
                       "text": (by_id.get(nid, {}).get("label") or "")[:120]} for nid, s in found],
                     hide_index=True, width="stretch")
    else:
        st.caption("No hit.")

# ------------------------------------------------------------------ tree
kind = st.radio("View", ["sunburst", "treemap"], horizontal=True, key="hier_kind")
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
hidden = 0 if with_events else counts["event"] - sum(n["level"] == "event" for n in nodes)
drawn, note = charts.bound_tree(nodes, charts.MAX_DRAWN, keep=[*shown_hits, selected], hidden_events=hidden)
if note:
    st.caption(f"Drawn: {len(drawn):,} of {sum(counts.values()):,} nodes. {note} Search or pick a node to open "
               "any of them.")
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
                   "start": m.t_start, "text": m.label[:120]} for m in members],
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
