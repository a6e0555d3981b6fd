"""The app's st.session_state keys, in one place, with typed accessors."""
from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_STORE = Path(os.environ.get("ADAMM_STORE", ROOT / "data" / "demo.duckdb"))
MEMORY_DIR = Path(os.environ.get("ADAMM_MEMORY_DIR", ROOT / "memories"))

STORE_PATH = "store_path"          # str: the memory file in use
BACKEND = "backend"                # "rules" | "openai" | "local"
MODEL_PATH = "model_path"          # GGUF file for the local backend
LLM_SETTINGS = "llm_settings"      # dict: the openai backend's endpoint as typed (core.llm.from_env names)
LLM_PROBE = "llm_probe"            # list[str]: the last "Test connection" report
LAST_TRACE = "last_trace"          # dict: the last query trace (JSON form)
PLAN_STATE = "plan_state"          # the step-by-step plan being executed
SELECTED_NODE = "selected_node"    # hierarchy node id
SELECTED_ROUND = "selected_round"  # round id whose provenance is shown
CONFIG_OVERRIDES = "config_overrides"  # dict of Config changes made in the sidebar


def get(key: str, default=None):
    return st.session_state.get(key, default)


def put(key: str, value) -> None:
    st.session_state[key] = value


MEMORY_PARAM = "memory"  # the URL's ?memory=PATH: a reload or a shared link keeps the chosen memory


def url_memory_problem(path: str) -> str | None:
    """Why the memory named in the URL is not opened (None: it can be). A link may name a .duckdb file
    that exists, or a not-yet-built one in an existing folder (a memory created but not built before the
    reload); the file is only created when something is built into it."""
    p = Path(path).expanduser()
    if p.suffix != ".duckdb":
        return f"{path} is not a .duckdb memory file"
    if not p.exists() and not (p.parent.is_dir() or p.parent.resolve() == MEMORY_DIR.resolve()):
        return f"{path} does not exist and neither does its folder"
    return None


def store_path() -> str:
    """The memory file in use: the session's choice, else the URL's ?memory= (when usable), else the demo."""
    chosen = st.session_state.get(STORE_PATH)
    if not chosen:
        from_url = st.query_params.get(MEMORY_PARAM)
        if from_url and url_memory_problem(from_url) is None:
            chosen = str(Path(from_url).expanduser())
            st.session_state[STORE_PATH] = chosen
    return str(chosen or DEFAULT_STORE)


def new_memory_path(text: str) -> Path | None:
    """Where "Create new memory" puts the memory typed as `text`: a bare name goes to the memories folder
    as NAME.duckdb (unsafe characters dropped); a path (with a / or ending in .duckdb) is used as given,
    relative paths under the memories folder. None when nothing usable was typed."""
    text = text.strip()
    if not text:
        return None
    if "/" in text or text.endswith(".duckdb"):
        p = Path(text).expanduser()
        p = p if p.is_absolute() else MEMORY_DIR / p
        return p if p.suffix == ".duckdb" else p.with_name(p.name + ".duckdb")
    safe = "".join(c for c in text if c.isalnum() or c in "-_")
    return MEMORY_DIR / f"{safe}.duckdb" if safe else None


def backend() -> str:
    return st.session_state.get(BACKEND, "rules")


def llm_settings() -> dict:
    """The endpoint settings typed in the sidebar (empty values dropped: the environment decides)."""
    return {k: v for k, v in (st.session_state.get(LLM_SETTINGS) or {}).items() if v}
