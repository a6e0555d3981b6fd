"""Tables: the analytic tables with typed columns and units; each row leads back to its round and image."""
from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from ui import charts, state
from ui.engine import memory_version
from ui.formatting import column_format
from ui.table_text import people_description
from ui.resources import open_store, page_store
from ui.views import observation_rows, provenance_view

CONTRACT = ("source", "round_order", "time", "captions")
PROVENANCE = "_obs"

path = state.store_path()
st.title("Tables")
st.caption("Every induced schema is a DuckDB table: one row per round that reports it, one typed column per "
           "attribute. Select a row to see the dialogue span or the image it came from.")
store = page_store(path)
version = memory_version(store)


@st.cache_data(show_spinner=False, max_entries=8)
def catalog(path: str, version: str) -> list[dict]:
    """The analytic tables (memory_tables view) with their schema's columns (name, type, unit, attribute)."""
    con = open_store(path).con
    views = {r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
    if "memory_tables" not in views:
        return []
    listed = con.execute("SELECT table_name, description, n_rows FROM memory_tables ORDER BY table_name").fetchall()
    cols = {t: (sid, json.loads(c or "[]"), json.loads(a or "[]")) for sid, t, c, a in con.execute(
        "SELECT schema_id, table_name, columns, attributes FROM schemas WHERE table_name IS NOT NULL").fetchall()}
    out = []
    for name, desc, n in listed:
        sid, columns, attrs = cols.get(name, (None, [], []))
        out.append({"table": name, "description": desc or "", "rows": int(n or 0), "schema_id": sid,
                    "columns": columns, "attributes": attrs})
    return out


@st.cache_data(show_spinner=False, max_entries=16)
def table_rows(path: str, version: str, table: str) -> pd.DataFrame:
    """All rows of one analytic table in round order. `table` must come from catalog() (validated there)."""
    names = {t["table"] for t in catalog(path, version)}
    if table not in names:
        raise ValueError(f"unknown analytic table {table!r}")
    con = open_store(path).con
    ident = '"' + table.replace('"', '""') + '"'
    return con.execute(f"SELECT * FROM {ident} ORDER BY round_order").df()


tables = catalog(path, version)
if not tables:
    st.info("No analytic table yet: no recurring attribute set has become a schema. The **Schema induction** page "
            "shows how close the candidates are.")
    st.stop()



@st.cache_data(show_spinner=False, max_entries=16)
def table_summary(path: str, version: str, table: str) -> tuple:
    """(rows, first time, last time, rows read from an image) of one analytic table from catalog()."""
    if table not in {t["table"] for t in catalog(path, version)}:
        raise ValueError(f"unknown analytic table {table!r}")
    ident = '"' + table.replace('"', '""') + '"'
    return open_store(path).con.execute(
        f"SELECT count(*), min(time), max(time), count(*) FILTER (WHERE modality LIKE '%image%') FROM {ident}").fetchone()


def for_people(t: dict) -> str:
    n, first, last, images = table_summary(path, version, t["table"])
    return people_description(int(n), first, last, int(images or 0), t["columns"])


def is_empty(column: pd.Series) -> bool:
    """Every value null or blank text: nothing to show."""
    return bool(column.map(lambda v: not str(v).strip() if isinstance(v, str) else v is None or
                           (pd.api.types.is_scalar(v) and bool(pd.isna(v)))).all())


st.dataframe([{"table": t["table"], "rows": t["rows"], "columns": len(t["columns"]), "description": for_people(t)}
              for t in tables], hide_index=True, width="stretch")

names = [t["table"] for t in tables]
linked = st.query_params.get("table")  # a link from a finished build: ?table=NAME opens that table once
if linked in names and st.session_state.get("_tbl_linked") != linked:
    st.session_state["tbl_name"] = st.session_state["_tbl_linked"] = linked
if st.session_state.get("tbl_name") not in names:
    st.session_state["tbl_name"] = names[0]
name = st.selectbox("Table", names, key="tbl_name")
meta = next(t for t in tables if t["table"] == name)
st.subheader(name)
st.write(for_people(meta))
with st.expander("How the planner sees this table"):
    st.write(meta["description"] or "(no stored description)")
listing = pd.DataFrame([{"column": c["name"], "type": c["dtype"], "unit": c.get("unit") or "",
                         "attribute": c.get("attribute", ""), "note": c.get("description") or ""}
                        for c in meta["columns"]], columns=["column", "type", "unit", "attribute", "note"])
st.dataframe(listing.drop(columns=[c for c in ("note",) if is_empty(listing[c])]), hide_index=True,
             width="stretch", placeholder="")

df = table_rows(path, version, name)
shown = df.drop(columns=[PROVENANCE], errors="ignore")
hidden = [c for c in shown.columns if len(shown) and is_empty(shown[c])]
shown = shown.drop(columns=hidden)
unit_of = {c["name"]: c.get("unit") for c in meta["columns"]}
# display only: clock columns become times of day of the same length (they sort by length), numbers
# stay numbers with a printf format (they sort numerically); the stored values are unchanged
config = {}
for c in [*unit_of, "time"]:
    if c not in shown.columns:
        continue
    fmt = column_format(unit_of.get(c), shown[c])
    label = f"{c} ({unit_of[c]})" if unit_of.get(c) else c
    if fmt.kind == "clock":
        shown[c] = fmt.values(shown[c])
        config[c] = st.column_config.TimeColumn(label, format=fmt.pattern)
    elif fmt.kind == "number":
        config[c] = st.column_config.NumberColumn(label, format=fmt.pattern)
    elif fmt.kind == "date":
        config[c] = st.column_config.DatetimeColumn(label, format=fmt.pattern)
st.markdown(f"**{len(df)} row(s).** Select a row to see where its values came from.")
event = st.dataframe(shown, hide_index=True, width="stretch", on_select="rerun", selection_mode="single-row",
                     column_config=config, key=f"tbl_rows_{name}", placeholder="")
if hidden:
    st.caption("; ".join(f"{c}: empty in every row, hidden" for c in hidden))
picked = list(getattr(getattr(event, "selection", None), "rows", []) or [])
if picked:
    st.session_state[state.SELECTED_ROUND] = str(df.iloc[picked[0]]["source"])

sel_round = state.get(state.SELECTED_ROUND)
if sel_round in set(df["source"]):
    row = df[df["source"] == sel_round].iloc[0]
    st.subheader(f"Provenance of row {sel_round}")
    prov = {}
    try:
        prov = json.loads(row[PROVENANCE]) if PROVENANCE in df.columns and row[PROVENANCE] else {}
    except (TypeError, ValueError):
        prov = {}
    seqs = set(prov.values())
    obs = observation_rows(store, sel_round)
    cells = [o for o in obs if o["seq"] in seqs] if seqs else [o for o in obs if o["attribute"] in meta["attributes"]]
    provenance_view(store, sel_round, cells)
else:
    st.caption("No row selected.")

numeric = [c["name"] for c in meta["columns"] if c["dtype"] == "DOUBLE" and c["name"] in df.columns]
if numeric:
    st.subheader("Over time")
    col = st.selectbox("Numeric column", numeric, key=f"tbl_plot_{name}")
    st.plotly_chart(charts.column_figure(list(df["time"]), [None if pd.isna(v) else float(v) for v in df[col]],
                                         column=col, unit=unit_of.get(col), rounds=list(df["source"])),
                    width="stretch", key="tbl_plot")
