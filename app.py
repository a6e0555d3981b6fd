"""AdaMM Explorer: the thin router. Pages render; `core` computes.

The page scripts live in app_pages/, not pages/: Streamlit treats a folder named pages/ as an old-style
multipage app, and a deep link such as /tables then ran the page without this router (no sidebar).
"""
from __future__ import annotations

import streamlit as st

from ui.resources import start_warmup
from ui.sidebar import render_sidebar

st.set_page_config(page_title="AdaMM Explorer", layout="wide")

PAGES = [
    st.Page("app_pages/home.py", title="Home", default=True),
    st.Page("app_pages/upload.py", title="Upload & build"),
    st.Page("app_pages/schemas.py", title="Schema induction"),
    st.Page("app_pages/tables.py", title="Tables"),
    st.Page("app_pages/hierarchy.py", title="Hierarchy"),
    st.Page("app_pages/ask.py", title="Query planner"),
    st.Page("app_pages/evaluate.py", title="Evaluate"),
]

start_warmup()  # models load in the background from the first run of the process, not at the first question
page = st.navigation(PAGES)
render_sidebar()
page.run()
