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


def store_path() -> str:
    return str(st.session_state.get(STORE_PATH) or DEFAULT_STORE)


def backend() -> str:
    return st.session_state.get(BACKEND, "rules")


def llm_settings() -> dict:
    """The endpoint settings typed in the sidebar (empty values dropped: the environment decides)."""
    return {k: v for k, v in (st.session_state.get(LLM_SETTINGS) or {}).items() if v}
