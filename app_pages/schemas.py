"""Schema induction: the memory's fields (raw labels, why they were merged, undo and merge by hand); replay the
support / confidence timeline round by round; try other thresholds."""
from __future__ import annotations

import json
import math

import streamlit as st

from core.config import DEFAULT
from core.induction import STATUSES, attribute_stream, decode_pattern, reinduce
from ui import charts, engine, induction_text, state
from ui import data as memdata
from ui import fields as fieldview
from ui.engine import memory_version
from ui.resources import open_store, page_store

STATUS_LABEL = {
    "below_support": "below support", "below_all_conf": "below all-confidence", "admitted": "admitted",
    "subsumed": "subsumed", "extension_pending": "extension pending", "evolved": "evolved (admitted)",
}

path = state.store_path()
st.title("Schema induction")
st.caption("Each round's attribute set updates the support of every pattern; a pattern seen in at least θ_s rounds "
           "becomes a schema when its all-confidence reaches θ_a, and a schema grows when an extension's "
           "extension-confidence reaches θ_e.")
store = page_store(path)
version = memory_version(store)


@st.cache_data(show_spinner=False, max_entries=8)
def load_induction(path: str, version: str) -> dict:
    """Timeline, events, schemas, stream and round ids of the memory (plain data, cached per version)."""
    con = open_store(path).con
    timeline = [
        {"round_order": o, "pattern": decode_pattern(p), "support": n, "all_conf": ac, "ext_conf": ec,
         "schema_id": sid, "status": stt}
        for o, p, n, ac, ec, sid, stt in con.execute(
            "SELECT round_order, pattern, support, all_conf, ext_conf, schema_id, status FROM induction_timeline "
            "ORDER BY round_order, rowid").fetchall()
    ]
    events = [
        {"round_order": o, "kind": k, "pattern": decode_pattern(p), "schema_id": sid,
         "previous": decode_pattern(pr) if pr else (), "numbers": json.loads(n or "{}")}
        for o, k, p, sid, pr, n in con.execute(
            "SELECT round_order, kind, pattern, schema_id, previous, numbers FROM induction_events "
            "ORDER BY round_order, rowid").fetchall()
    ]
    schemas = [
        {"schema_id": sid, "attributes": tuple(json.loads(a or "[]")), "table": t, "discovered": d, "updated": u}
        for sid, a, t, d, u in con.execute(
            "SELECT schema_id, attributes, table_name, discovered_order, updated_order FROM schemas "
            "ORDER BY schema_id").fetchall()
    ]
    stream = [(o, tuple(sorted(a))) for o, a in attribute_stream(con)]
    round_ids = dict(con.execute("SELECT round_order, round_id FROM rounds").fetchall())
    # the thresholds the memory was induced with (InductionStore keeps them in its state)
    cfg_row = con.execute("SELECT value FROM meta WHERE key = 'induction.state'").fetchone()
    params = (json.loads(cfg_row[0]) or {}).get("params", {}) if cfg_row else {}
    return {"timeline": timeline, "events": events, "schemas": schemas, "stream": stream, "round_ids": round_ids,
            "params": params}


@st.cache_data(show_spinner="Re-running induction...", max_entries=16)
def what_if(path: str, version: str, theta_s: int, theta_a: float, theta_e: float) -> dict:
    """reinduce() over the stored observations with other thresholds (pure; nothing is written)."""
    stream = load_induction(path, version)["stream"]
    cfg = DEFAULT.with_(theta_s=theta_s, theta_a=theta_a, theta_e=theta_e)
    res = reinduce(((o, a) for o, a in stream), cfg)
    return {
        "schemas": [{"schema_id": s.schema_id, "attributes": s.attributes, "discovered": s.discovered_order,
                     "updated": s.updated_order} for s in res.schemas],
        "timeline": [{"round_order": r.round_order, "pattern": r.pattern, "support": r.support,
                      "all_conf": r.all_conf, "ext_conf": r.ext_conf, "schema_id": r.schema_id, "status": r.status}
                     for r in res.timeline],
        "events": [{"round_order": e.round_order, "kind": e.kind, "pattern": e.pattern, "schema_id": e.schema_id,
                    "previous": e.previous, "numbers": dict(e.numbers)} for e in res.events],
    }


data = load_induction(path, version)
if not data["stream"]:
    st.info("No round has been processed yet, so there are no statistics to replay.")
    st.stop()

orders = [o for o, _ in data["stream"]]
first, last = orders[0], orders[-1]
stored = data["params"]
th = {"theta_s": int(stored.get("theta_s", DEFAULT.theta_s)), "theta_a": float(stored.get("theta_a", DEFAULT.theta_a)),
      "theta_e": float(stored.get("theta_e", DEFAULT.theta_e))}

# ------------------------------------------------------------------ stored schemas
st.subheader("Schemas in this memory")
if data["schemas"]:
    st.markdown("\n".join(
        f"- **{s['table'] or 'schema ' + str(s['schema_id'])}**: {', '.join(f'`{a}`' for a in s['attributes'])} — "
        f"discovered at round {s['discovered']}"
        + (f", last evolved at round {s['updated']}" if s["updated"] and s["updated"] != s["discovered"] else "")
        for s in data["schemas"]))
else:
    st.info(f"No schema yet: no attribute set has recurred in θ_s = {th['theta_s']} rounds with enough confidence.")
st.caption(f"Built with θ_s = {th['theta_s']}, θ_a = {th['theta_a']:.2f}, θ_e = {th['theta_e']:.2f} · "
           f"{len(orders)} rounds processed (rounds {first}–{last}).")

# ------------------------------------------------------------------ fields
st.subheader("Fields")
st.caption("Field alignment maps the labels the extractor read (\"Temp\", \"temperature\", \"TEMP.\") to the fields "
           "of this memory before induction, from evidence in the history: the name, the unit, the value's range, "
           "the fields it comes with and the round's text. Undo a merge, or merge a raw label into a field by hand: "
           "the analytic tables are then rebuilt from the stored observations.")


def _change(run, what: str) -> None:
    """Run an undo or a merge under a spinner, refresh every cached reader, show the outcome after a rerun."""
    with st.spinner("Rebuilding the analytic tables from the stored observations..."):
        kind, text = fieldview.apply_change(run, what)
    if kind == "success":
        st.cache_data.clear()  # the memory's tables changed, maybe without changing memory_version
        st.session_state.pop(engine._ENGINES, None)  # query engines hold the old table catalog
        for k in ("sch_also_stored", "sch_also_alt", "sch_use_alt"):
            st.session_state.pop(k, None)  # the patterns picked may no longer exist
    st.session_state["_fld_msg"] = (kind, text)
    st.rerun()


fld_msg = st.session_state.pop("_fld_msg", None)
if fld_msg:
    (st.success if fld_msg[0] == "success" else st.error)(fld_msg[1])
all_fields = memdata.fields(store)
if not all_fields:
    st.info("This memory has no aligned fields: it was built before field alignment, or no round had an "
            "observation.")
else:
    cfg = engine.config()
    n_merged = sum(f.merged for f in all_fields)
    query = st.text_input("Filter fields", key="fld_filter", placeholder="a field, a label, a raw attribute or a table")
    shown = fieldview.filter_fields(all_fields, query)
    st.markdown(f"**{len(all_fields)} field(s)**, {n_merged} merged from several raw labels"
                + (f" · {len(shown)} match \"{query.strip()}\"" if query.strip() else ""))
    if shown:
        st.dataframe(fieldview.field_rows(shown), hide_index=True, width="stretch", key="fld_table")
    else:
        st.caption("No field matches the filter.")
    for f in (f for f in shown if f.merged):
        with st.expander(f"**{f.name}** · {fieldview.labels_text(f.labels)}", expanded=True):
            st.markdown(f"Kind {f.kind or '?'} · unit {f.unit or 'none'} · {f.observations} observation(s) · "
                        f"in tables: {fieldview.columns_text(f) or 'none yet'}")
            for r in f.raws:
                c_text, c_btn = st.columns([6, 1], vertical_alignment="center")
                c_text.markdown(f"`{r.raw_attribute}`: {fieldview.labels_text(r.labels)} · {r.observations} "
                                f"observation(s)  \n{fieldview.reason_text(r, cfg.align_threshold)}")
                if r.joined and c_btn.button("Undo", key=f"fld_undo_{r.raw_attribute}",
                                             help=f"Make {r.raw_attribute} a field of its own again"):
                    _change(lambda raw=r.raw_attribute: memdata.undo_merge(store, raw, cfg, engine.llm_for(store)),
                            f"`{r.raw_attribute}` is a field of its own again")
    with st.expander("Merge into…"):
        field_of = {r.raw_attribute: f.name for f in all_fields for r in f.raws}
        kind_of = {f.name: f.kind for f in all_fields}
        raw_names = sorted(field_of)
        m1, m2 = st.columns(2)
        pick = m1.selectbox("Raw attribute", raw_names, format_func=lambda r: f"{r} (now in {field_of.get(r, '?')})",
                            key="fld_merge_raw")
        targets = [f.name for f in all_fields if pick is None or f.name != field_of.get(pick)]
        into = m2.selectbox("Into the field", sorted(targets), key="fld_merge_into")
        if pick and into:
            if kind_of.get(into) != kind_of.get(field_of.get(pick)):
                st.warning(f"{pick} holds {kind_of.get(field_of.get(pick)) or '?'} values and {into} holds "
                           f"{kind_of.get(into) or '?'} values.")
            both = memdata.shared_rounds(store, pick, into)
            if both:
                st.warning(f"{pick} and {into} were both observed in {both} round(s): after the merge such a round "
                           "has two values for one field and its table row keeps the first.")
        if st.button("Merge", key="fld_merge_go", disabled=not (pick and into)):
            _change(lambda: memdata.merge_into(store, pick, into, cfg, engine.llm_for(store)),
                    f"`{pick}` is now part of the field `{into}`")

# ------------------------------------------------------------------ what-if thresholds
with st.expander("Try other thresholds (re-runs induction on the stored observations; nothing is saved)"):
    c1, c2, c3 = st.columns(3)
    ws = c1.slider("θ_s (support, rounds)", 1, 30, th["theta_s"], key="sch_ws")
    wa = c2.slider("θ_a (all-confidence)", 0.05, 1.0, th["theta_a"], 0.05, key="sch_wa")
    we = c3.slider("θ_e (extension-confidence)", 0.05, 1.0, th["theta_e"], 0.05, key="sch_we")
    changed = (ws, round(wa, 4), round(we, 4)) != (th["theta_s"], round(th["theta_a"], 4), round(th["theta_e"], 4))
    alt = what_if(path, version, ws, wa, we) if changed else None
    if alt is None:
        st.caption("Move a slider to see what other settings would have found.")
    else:
        stored_sets = {frozenset(s["attributes"]) for s in data["schemas"]}
        alt_sets = {frozenset(s["attributes"]) for s in alt["schemas"]}
        rows = [{"attributes": ", ".join(s["attributes"]), "discovered at round": str(s["discovered"]),
                 "evolved at round": str(s["updated"]) if s["updated"] != s["discovered"] else "",
                 "compared with stored": "same" if frozenset(s["attributes"]) in stored_sets else "new"}
                for s in alt["schemas"]]
        rows += [{"attributes": ", ".join(s["attributes"]), "discovered at round": "", "evolved at round": "",
                  "compared with stored": "only in stored"}
                 for s in data["schemas"] if frozenset(s["attributes"]) not in alt_sets]
        st.markdown(f"With θ_s = {ws}, θ_a = {wa:.2f}, θ_e = {we:.2f}: **{len(alt['schemas'])} schema(s)** "
                    f"(stored: {len(data['schemas'])}).")
        if rows:
            st.dataframe(rows, hide_index=True, width="stretch")
        st.checkbox("Replay these statistics below instead of the stored ones", key="sch_use_alt")

use_alt = bool(st.session_state.get("sch_use_alt")) and alt is not None
src = alt if use_alt else data
thr = {"theta_s": ws, "theta_a": wa, "theta_e": we} if use_alt else th

# ------------------------------------------------------------------ replay
st.subheader("Replay" + (" (what-if thresholds)" if use_alt else ""))
timeline, events = src["timeline"], src["events"]
# what-if schemas have no tables: their ids are not the stored ones
tables = {} if use_alt else {int(s["schema_id"]): s["table"] for s in data["schemas"]}
final = {int(s["schema_id"]): tuple(sorted(s["attributes"])) for s in src["schemas"]}
table_of: dict[tuple, str] = {}  # pattern -> the name of the schema it is (or was, before it grew)
for e in events:
    if e["kind"] in ("discovered", "evolved"):
        p, sid = tuple(e["pattern"]), int(e["schema_id"])
        name = induction_text.schema_name(sid, tables)
        table_of[p] = name if tuple(sorted(p)) == final.get(sid) else f"{name} (until it grew)"

highlighted = charts.highlighted_patterns(timeline, events)
best: dict[tuple, int] = {}
for r in timeline:
    best[r["pattern"]] = max(best.get(r["pattern"], 0), r["support"])
others = sorted((p for p in best if p not in highlighted), key=lambda p: (-best[p], p))[:60]


def _option_label(p: tuple) -> str:
    full = charts.pattern_label(p)
    return f"{table_of[p]} — {full}" if p in table_of else full


also = st.multiselect("Show also", others, default=[], format_func=_option_label,
                      key=f"sch_also_{'alt' if use_alt else 'stored'}")
drawn = list(highlighted) + [p for p in also if p not in highlighted]
colors = charts.pattern_colors(drawn)
names = charts.legend_names(drawn, table_of)
st.caption(f"The charts draw the {len(highlighted)} pattern(s) that became schemas first, then the most frequent "
           f"({', '.join(names[p] for p in highlighted) or 'none yet'}); hover a line for its attributes"
           + (f", and add any of {len(others)} more above." if others else "."))

if "sch_round" not in st.session_state or not first <= st.session_state["sch_round"] <= last:
    st.session_state["sch_round"] = last
playing = bool(st.session_state.get("sch_playing"))

TICK_S = 0.5  # seconds between two replay frames
TICKS = {"slow": 60, "normal": 40, "fast": 20}  # frames for the whole replay, whatever its length


def replay_step(n_rounds: int, speed: str) -> int:
    """Rounds one frame advances so that the whole replay takes TICKS[speed] frames (at least 1 round)."""
    return max(1, math.ceil(n_rounds / TICKS[speed]))


def _toggle_play() -> None:
    now = not st.session_state.get("sch_playing", False)
    st.session_state["sch_playing"] = now
    if now and st.session_state.get("sch_round", last) >= last:
        st.session_state["sch_round"] = first  # play from the start when at the end


c_play, c_speed, c_note = st.columns([1, 2, 3], vertical_alignment="center")
c_play.button("Pause" if playing else "Play", icon=":material/pause:" if playing else ":material/play_arrow:",
              on_click=_toggle_play, key="sch_play")
speed = c_speed.segmented_control("Speed", list(TICKS), default="normal", key="sch_speed") or "normal"
step_size = replay_step(last - first, speed)
frames = math.ceil((last - first) / step_size) if last > first else 0
c_note.caption(f"Play moves {step_size} round(s) every {TICK_S:g} s: about {frames * TICK_S:.0f} s from round "
               f"{first} to round {last}. Pick any round with the slider.")


def _status_rows(t: int) -> list[dict]:
    """The candidates as of round t (each pattern's latest statistics at or before t), with why."""
    latest: dict[tuple, dict] = {}
    for r in timeline:
        if r["round_order"] <= t:
            latest[r["pattern"]] = r
    rank = {s: i for i, s in enumerate(("evolved", "admitted", "extension_pending", "below_all_conf",
                                         "below_support", "subsumed"))}
    rows = sorted(latest.values(), key=lambda r: (rank.get(r["status"], 9), -r["support"], r["pattern"]))[:40]
    stream_upto = [(o, set(a)) for o, a in data["stream"] if o <= t]
    params = {} if use_alt else data["params"]
    table = []
    for r in rows:
        behind = [data["round_ids"].get(o, str(o)) for o, a in stream_upto if set(r["pattern"]) <= a]
        table.append({
            "pattern": charts.pattern_label(r["pattern"]), "status": STATUS_LABEL.get(r["status"], r["status"]),
            "why": induction_text.explain(r, thresholds=thr, events=events, stream=data["stream"], tables=tables,
                                          params=params),
            "support": r["support"],
            "all-conf": f"{r['all_conf']:.3f}" if r["all_conf"] is not None else "",
            "ext-conf": f"{r['ext_conf']:.3f}" if r["ext_conf"] is not None else "",
            "schema": induction_text.schema_name(r["schema_id"], tables), "as of round": r["round_order"],
            "rounds behind it": ", ".join(behind[-12:]) + (f" (+{len(behind) - 12} earlier)" if len(behind) > 12 else ""),
        })
    return table


@st.fragment(run_every=TICK_S if playing else None)
def replay() -> None:
    if st.session_state.get("sch_playing"):
        nxt = min(last, st.session_state.get("sch_round", first) + step_size)
        st.session_state["sch_round"] = nxt
        if nxt >= last:
            st.session_state["sch_playing"] = False
            st.rerun(scope="app")  # stop the timer
    if last > first:
        t = st.slider("Round", first, last, key="sch_round")
    else:
        t = last
        st.caption(f"Round {t}")
    rid = data["round_ids"].get(t) or ""
    attrs = dict(data["stream"]).get(t, ())
    st.markdown(f"**Round {t}** " + (f"`{rid}` " if rid else "") + "· attributes: "
                + (", ".join(f"`{a}`" for a in attrs) or "none"))
    for e in (e for e in events if e["round_order"] == t):
        what = charts.pattern_label(e["pattern"])
        if e["kind"] in ("discovered", "evolved"):
            what = f"{induction_text.schema_name(e['schema_id'], tables)} = {what}"
        msg = f"{e['kind']}: {what}"
        if e["previous"]:
            msg += f" (from {charts.pattern_label(e['previous'])})"
        (st.success if e["kind"] != "candidate" else st.info)(msg)
    sel = set(drawn)
    tl = [r for r in timeline if r["pattern"] in sel]
    st.plotly_chart(charts.support_figure(tl, events, thr["theta_s"], upto=t, at_round=t, names=names,
                                          colors=colors), key="sch_supp", width="stretch")
    st.plotly_chart(charts.confidence_figure(tl, events, thr["theta_a"], thr["theta_e"], upto=t, at_round=t,
                                             names=names, colors=colors), key="sch_conf", width="stretch")
    table = _status_rows(t)
    st.markdown(f"**Candidates at round {t}** (statuses: {', '.join(STATUS_LABEL[s] for s in STATUSES)}); "
                "*why* gives the numbers that decided each status at the round it was last computed.")
    if table:
        st.dataframe(table, hide_index=True, width="stretch", key="sch_cands",
                     column_config={"why": st.column_config.TextColumn(width="large")})
    else:
        st.caption("No pattern of at least two attributes has been seen yet.")


replay()
