"""Home: what is in the chosen memory, and a look at its rounds, images and OCR text."""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from ui import state
from ui.resources import store_or_none
from ui.views import round_view

path = state.store_path()
st.title("AdaMM Explorer")
st.caption("Analytic memory beside retrieval memory: recurring observations become tables you can compute over.")

if not Path(path).exists():
    st.info(f"No memory at `{path}` yet. Build one on the **Upload & build** page"
            + (" or run `make run`, which builds the bundled demo." if path == str(state.DEFAULT_STORE) else "."))
    st.stop()

store = store_or_none(path)
if store is None:
    st.stop()

s = store.summary()
st.subheader(Path(path).stem)
if s["first_time"]:
    st.write(f"From **{s['first_time']:%Y-%m-%d}** to **{s['last_time']:%Y-%m-%d}**")
cols = st.columns(5)
for col, (label, key) in zip(cols * 2, [
    ("Sessions", "sessions"), ("Rounds", "rounds"), ("Images", "images"), ("Images OCR'd", "images_ocr"),
    ("Observations", "observations"), ("Schemas", "schemas"), ("Episodes", "episodes"), ("Topics", "topics"),
    ("Questions", "qas"), ("Rounds processed", "rounds_processed"),
]):
    col.metric(label, s[key])
st.caption(f"Text encoder: `{store.get_meta('text_encoder', 'n/a')}` · image encoder: "
           f"`{store.get_meta('image_encoder', 'n/a')}`")
if s["rounds_processed"] < s["rounds"]:
    st.warning(f"{s['rounds'] - s['rounds_processed']} rounds are stored but not processed yet "
               "(an interrupted build?). Rebuild on the Upload & build page to complete it.")

tables = store.con.execute("SELECT table_name, description, n_rows FROM memory_tables ORDER BY table_name").fetchall() \
    if s["schemas"] else []
if tables:
    st.subheader("Analytic tables")
    st.dataframe([{"table": t, "rows": n, "description": d} for t, d, n in tables], hide_index=True,
                 width="stretch")

st.subheader("Browse rounds")
sessions = [r[0] for r in store.con.execute("SELECT session_id FROM sessions ORDER BY first_order").fetchall()]
if sessions:
    sid = st.selectbox("Session", sessions, key="home_session")
    rows = store.con.execute("SELECT round_id FROM rounds WHERE session_id = ? ORDER BY round_order", [sid]).fetchall()
    for (rid,) in rows:
        round_view(store, rid)
