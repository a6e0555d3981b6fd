"""Open a memory file with the real models and return a QueryEngine over both memories."""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from .config import Config
from .protocols import ImageEncoder, TextEncoder


def make_engine(store, config: Config, *, text_encoder: TextEncoder, image_encoder: ImageEncoder, llm=None):
    """A QueryEngine whose retrieval memory is the store's hierarchy (same encoders as the build)."""
    from .hierarchy import Hierarchy
    from .planning import QueryEngine

    hierarchy = Hierarchy(store.con, text_encoder, image_encoder, config, llm=llm)
    engine = QueryEngine(store.con, text_encoder, config, retrieval=hierarchy, llm=llm)
    engine.store = store
    return engine


@contextmanager
def open_engine(store_path: str, config: Config, *, backend: str = "rules", model_path: str | None = None,
                clip_checkpoint: str | None = None, clip_model: str | None = None) -> Iterator[object]:
    """Yield a QueryEngine on `store_path` with MiniLM (embedding cache in the file) and the configured LLM.

    Raises MemoryBusyError when another process is writing the memory.
    """
    from .deps import make_llm
    from .encoders import CachedTextEncoder, MiniLMEncoder, image_encoder_from_config, load_minilm
    from .store import Store

    store = Store(store_path)
    try:
        llm = make_llm(backend, model_path, cache_con=store.con)
        text = CachedTextEncoder(MiniLMEncoder(load_minilm()), store.con)
        image = image_encoder_from_config(clip_checkpoint, clip_model)
        engine = make_engine(store, config, text_encoder=text, image_encoder=image, llm=llm)
        yield engine
    finally:
        store.close()
