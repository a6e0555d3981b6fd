"""The query engine and the language model for a memory, cached per session, and the memory's version.

`memory_version(store)` changes whenever a build adds or processes rounds or
changes a schema, so `st.cache_data` functions keyed by (path, version)
recompute exactly when the memory changed.
"""
from __future__ import annotations

from pathlib import Path

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
        "(SELECT count(*) FROM schemas), (SELECT count(*) FROM qas), "
        "(SELECT count(*) FROM field_events)"  # an undo or a merge of fields rebuilds the tables
    ).fetchone()
    return "-".join(str(v) for v in row)


def config() -> Config:
    """The app's Config: defaults plus the session's overrides (state.CONFIG_OVERRIDES)."""
    over = state.get(state.CONFIG_OVERRIDES) or {}
    try:
        return DEFAULT.with_(**over)
    except (TypeError, ValueError):
        return DEFAULT


def gguf_problem(path: str) -> str | None:
    """Why `path` cannot be a local model ("no such file", "not a GGUF file", ...), or None when it can."""
    if not path:
        return "no GGUF model file given"
    p = Path(path)
    if not p.is_file():
        return f"no such file: {path}"
    try:
        with open(p, "rb") as fh:
            magic = fh.read(4)
    except OSError as e:
        return f"cannot read {path}: {e}"
    if magic != b"GGUF":
        return f"{p.name} is not a GGUF file (it does not start with the GGUF magic bytes)"
    return None


@st.cache_resource(show_spinner="Starting llama.cpp on the GGUF model...", max_entries=2)
def local_llm(path: str, stamp: tuple[int, int]):
    """The in-process llama.cpp server for a GGUF file, one per (path, size/mtime) for the whole app.

    Loading a model takes seconds and memory: every session and page shares it. Raises InputError
    for a missing or non-GGUF file and LLMError when llama.cpp cannot start.
    """
    from core.config import DEFAULT
    from core.llm import LocalLLM

    # as many slots as a build sends extraction calls at once
    return LocalLLM(path, parallel=DEFAULT.llm_parallel)


def _stamp(path: str) -> tuple[int, int]:
    st_ = Path(path).stat()
    return st_.st_size, int(st_.st_mtime)


def _local_for_store(path: str, store: Store):
    """This session's client of the shared local server, with the memory file's LLM cache and a meter."""
    from core.llm import DuckDBLLMCache, OpenAICompatLLM, TokenMeter

    local = local_llm(path, _stamp(path))
    inner = local.llm
    # same endpoint, model name and retry policy as LocalLLM, but the replies are cached in THIS memory
    # file and counted on THIS session's meter (the shared server must not mix sessions' caches)
    return OpenAICompatLLM(inner.client, inner.model, cache=DuckDBLLMCache(store.con), meter=TokenMeter(),
                           timeout=inner.timeout, retries=inner.retries, vision=inner.vision,
                           parallel=local.parallel)


def llm_for(store: Store):
    """The language model the sidebar chose (None for rules); an error box and None when it cannot start.

    The local backend shares one llama.cpp server per GGUF file (st.cache_resource); a missing or
    non-GGUF file is reported with st.error. Each returned model carries a core.llm.TokenMeter
    (see `meter_of`), so pages can total the tokens a build or a question spent.
    """
    backend = state.backend()
    if backend == "rules":
        return None
    model_path = state.get(state.MODEL_PATH, "") or ""
    stamp = _stamp(model_path) if backend == "local" and Path(model_path).is_file() else None
    settings = state.llm_settings() if backend == "openai" else {}
    # the settings (an API key among them) are part of the key only as a digest
    key = ("_llm", backend, model_path, stamp, _digest(settings), id(store.con))
    if key in st.session_state:
        return st.session_state[key]
    failed = st.session_state.get(("_llm_error",) + key[1:])
    if failed:  # don't try to start a model that failed on every rerun; say why again
        st.error(failed)
        return None
    try:
        if backend == "local":
            problem = gguf_problem(model_path)
            if problem is not None:
                st.error(f"Local language model unavailable: {problem}. Using the rule-based components.")
                return None
            llm = _local_for_store(model_path, store)
        else:
            from core.deps import make_llm

            llm = make_llm(backend, None, cache_con=store.con, settings=settings)
    except Exception as e:  # missing settings, llama.cpp failing to load: say so, answer with rules
        msg = (f"Language model `{backend}` unavailable ({type(e).__name__}: {e}); using the rule-based "
               "components.")
        st.session_state[("_llm_error",) + key[1:]] = msg
        st.error(msg)
        return None
    meter_of(llm)
    st.session_state[key] = llm
    return llm


def _digest(settings: dict) -> str:
    import hashlib
    import json

    return hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:16] if settings else ""


def probe_model() -> list[str]:
    """"Test connection" for the sidebar's model: the report's lines (core.llm_probe), never raising.

    The local backend probes the shared llama.cpp server (starting it when needed); openai builds a
    client from the typed settings and the environment, without the memory's cache.
    """
    from core.llm_probe import check_connection

    backend = state.backend()
    try:
        if backend == "local":
            path = state.get(state.MODEL_PATH, "") or ""
            problem = gguf_problem(path)
            if problem is not None:
                return [f"no model to test: {problem}"]
            llm = local_llm(path, _stamp(path))
        elif backend == "openai":
            from core.deps import make_llm

            llm = make_llm("openai", None, settings=state.llm_settings())
        else:
            return ["the rules backend uses no model"]
        return check_connection(llm).lines()
    except Exception as e:  # settings missing, llama.cpp failing to load: say so
        return [f"cannot test: {type(e).__name__}: {e}"]


def meter_of(llm):
    """The TokenMeter counting `llm`'s calls (attached when it had none); None for rules or an unmetered model."""
    if llm is None:
        return None
    from core.llm import TokenMeter

    target = getattr(llm, "llm", llm)  # LocalLLM wraps an OpenAICompatLLM
    if not hasattr(target, "meter"):
        return None
    if target.meter is None:
        target.meter = TokenMeter()
    return target.meter


def model_name(llm) -> str | None:
    """The priced model name of `llm` (None for rules)."""
    return None if llm is None else str(getattr(llm, "model", "") or "") or None


def cost_text(model: str | None, prompt_tokens: int, completion_tokens: int) -> str:
    """Estimated cost as people read it: "$0.0012", "free (local model)", "unknown price (model)"."""
    if model is None:
        return "free (no language model)"
    from core.llm import estimate_cost_usd

    usd = estimate_cost_usd(model, int(prompt_tokens), int(completion_tokens))
    if usd is None:
        return f"unknown price ({model})"
    if usd == 0.0 and (model.startswith("local/") or model.endswith(".gguf")):
        return "free (local model)"
    return f"${usd:.4f}" if usd < 1 else f"${usd:.2f}"


def query_engine(store: Store, path: str):
    """This session's QueryEngine for the memory at `path` (rebuilt when the memory or the backend changes)."""
    from core.query import make_engine

    cfg = config()
    key = (path, memory_version(store), state.backend(), state.get(state.MODEL_PATH, ""), repr(cfg))
    engines = st.session_state.setdefault(_ENGINES, {})
    if key not in engines:
        engines.clear()  # one engine per session: drop those of an older version of the memory
        # the same retrieval memory as the CLI: the stored hierarchy with the build's encoders
        engines[key] = make_engine(store, cfg, text_encoder=resources.text_encoder(),
                                   image_encoder=resources.image_encoder(), llm=llm_for(store))
    elif engines[key].llm is None and state.backend() != "rules":
        llm_for(store)  # the chosen model could not start: say why on every run, not only the first
    return engines[key]


def warm_in_background(engine) -> None:
    """Index the engine's planning metadata (tables, episodes) in a daemon thread, once per engine, so a
    question asked a few seconds after the page opened does not wait for it (an uploaded memory's
    episodes are embedded here, not at its first question)."""
    import threading

    if getattr(engine, "_warming", None) is not None:
        return
    engine._warming = threading.Thread(target=engine.contexts.warm, name="adamm-warm-engine", daemon=True)
    engine._warming.start()
