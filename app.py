"""AdaMM Explorer: the thin router. Pages render; `core` computes."""
from __future__ import annotations

import streamlit as st

from ui.sidebar import render_sidebar

st.set_page_config(page_title="AdaMM Explorer", layout="wide")

PAGES = [
    st.Page("pages/home.py", title="Home", default=True),
    st.Page("pages/upload.py", title="Upload & build"),
    st.Page("pages/schemas.py", title="Schema induction"),
    st.Page("pages/tables.py", title="Tables"),
    st.Page("pages/hierarchy.py", title="Hierarchy"),
    st.Page("pages/ask.py", title="Query planner"),
    st.Page("pages/evaluate.py", title="Evaluate"),
]

page = st.navigation(PAGES)
render_sidebar()
page.run()
