"""The query engine and the language model for a memory, cached per session, and the memory's version.

`memory_version(store)` changes whenever a build adds or processes rounds or
changes a schema, so `st.cache_data` functions keyed by (path, version)
recompute exactly when the memory changed.
"""
from __future__ import annotations

import streamlit as st

from core.config import DEFAULT, Config
from core.store import Store

from . import resources, state

_ENGINES = "_query_engines"  # session key: {(path, version, backend, model, config): QueryEngine}


def memory_version(store: Store) -> str:
    """A short string that changes when the memory's content changes (rounds, processing, schemas, runs)."""
    row = store.con.execute(
        "SELECT (SELECT coalesce(max(round_order), 0) FROM rounds), "
        "(SELECT count(*) FROM rounds WHERE processed), "
        "(SELECT count(*) FROM runs), "
        "(SELECT coalesce(max(updated_order), 0) FROM schemas), "
        "(SELECT count(*) FROM schemas), (SELECT count(*) FROM qas)"
    ).fetchone()
    return "-".join(str(v) for v in row)


def config() -> Config:
    """The app's Config: defaults plus the session's overrides (state.CONFIG_OVERRIDES)."""
    over = state.get(state.CONFIG_OVERRIDES) or {}
    try:
        return DEFAULT.with_(**over)
    except TypeError:
        return DEFAULT


def llm_for(store: Store):
    """The language model the sidebar chose (None for rules); an error box and None when it cannot start."""
    backend = state.backend()
    if backend == "rules":
        return None
    key = ("_llm", backend, state.get(state.MODEL_PATH, ""))
    if key in st.session_state:
        return st.session_state[key]
    from core.deps import make_llm

    try:
        llm = make_llm(backend, state.get(state.MODEL_PATH) or None, cache_con=store.con)
    except Exception as e:  # missing settings or model file: say so, answer with rules
        st.warning(f"Language model `{backend}` unavailable ({e}); using the rule-based planner.")
        return None
    st.session_state[key] = llm
    return llm


def query_engine(store: Store, path: str):
    """This session's QueryEngine for the memory at `path` (rebuilt when the memory or the backend changes)."""
    from core.planning import QueryEngine

    cfg = config()
    key = (path, memory_version(store), state.backend(), state.get(state.MODEL_PATH, ""), repr(cfg))
    engines = st.session_state.setdefault(_ENGINES, {})
    if key not in engines:
        engines.clear()  # one engine per session: drop those of an older version of the memory
        engines[key] = QueryEngine(store.con, resources.text_encoder(), cfg, llm=llm_for(store))
    return engines[key]
