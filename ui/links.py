"""Links between the app's pages that keep the chosen memory in the address."""
from __future__ import annotations

import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError

from . import state


def page_link(page: str, label: str, icon: str | None = None, **params: str) -> None:
    """A link to `page` (its script path, e.g. "app_pages/tables.py") carrying ?memory= and `params`.

    A page script run without the router (`streamlit run app_pages/upload.py`, a page's own test) has no
    navigation to link into: the label is written as text instead, so the page still renders.
    """
    query = {state.MEMORY_PARAM: state.store_path(), **params}
    try:
        st.page_link(page, label=label, icon=icon, query_params=query)
    except StreamlitPageNotFoundError:
        st.markdown(f"{label} (open the {page.rsplit('/', 1)[-1].removesuffix('.py')} page)")
