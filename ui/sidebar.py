"""The shared sidebar: which memory, which language-model backend."""
from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

from core.config import DEFAULT, LLM_STEPS
from core.llm import truthy

from . import state
from .engine import gguf_problem, probe_model
from .resources import WARMUP, memory_files


def _on_pick() -> None:
    state.put(state.STORE_PATH, st.session_state["sb_memory"])


def _on_create() -> None:
    target = state.new_memory_path(st.session_state.get("sb_new_name", ""))
    if target is None:
        return
    path = str(target)
    state.put(state.STORE_PATH, path)
    st.session_state["sb_memory"] = path
    st.session_state["sb_new_name"] = ""


LLM_MODES = ("guided", "free")
LLM_MODE_HELP = {"guided": "guided: the model gets the rule-based plan and answer as drafts to keep or correct; "
                           "an answer that contradicts a computed value is replaced by the draft",
                 "free": "free: the model plans and answers from the planning context on its own"}


def llm_mode() -> str:
    """The session's LLM mode (Config.llm_mode through state.CONFIG_OVERRIDES)."""
    mode = (state.get(state.CONFIG_OVERRIDES) or {}).get("llm_mode", DEFAULT.llm_mode)
    return mode if mode in LLM_MODES else DEFAULT.llm_mode


def _on_mode() -> None:
    over = dict(state.get(state.CONFIG_OVERRIDES) or {})
    mode = st.session_state.get("sb_llm_mode", DEFAULT.llm_mode)
    if mode == DEFAULT.llm_mode:
        over.pop("llm_mode", None)  # the default needs no override
    else:
        over["llm_mode"] = mode
    state.put(state.CONFIG_OVERRIDES, over)


LLM_STEP_HELP = {"extract": "extract: the model reads each round's attributes at build time (off by default: the "
                            "local 1.5B model found a tenth of the values the rules find)",
                 "metadata": "metadata: table names and descriptions (off by default: the local model's "
                             "descriptions invented what some tables hold)",
                 "describe": "describe: episode and topic descriptions",
                 "plan": "plan: query plans and step arguments", "answer": "answer: the answer's wording"}


def llm_steps() -> list[str]:
    """The steps the session's model takes (Config.llm_steps through state.CONFIG_OVERRIDES), in LLM_STEPS order."""
    raw = (state.get(state.CONFIG_OVERRIDES) or {}).get("llm_steps", DEFAULT.llm_steps)
    try:
        config = DEFAULT.with_(llm_steps=str(raw))
    except ValueError:  # an override no Config accepts: the default's steps
        config = DEFAULT
    return [x for x in LLM_STEPS if config.uses_model(x)]


def _on_steps() -> None:
    over = dict(state.get(state.CONFIG_OVERRIDES) or {})
    picked = set(st.session_state.get("sb_llm_steps") or ())
    value = "+".join(x for x in LLM_STEPS if x in picked)
    if value == DEFAULT.llm_steps:
        over.pop("llm_steps", None)  # the default needs no override
    else:
        over["llm_steps"] = value
    state.put(state.CONFIG_OVERRIDES, over)


def _endpoint_inputs() -> None:
    """Base URL, model, key and image support of an OpenAI-compatible endpoint (empty: the environment's)."""
    env = os.environ
    typed = dict(state.get(state.LLM_SETTINGS) or {})
    typed["OPENAI_BASE_URL"] = st.text_input(
        "Base URL", value=typed.get("OPENAI_BASE_URL", ""), key="sb_base_url",
        placeholder=env.get("OPENAI_BASE_URL") or "https://api.openai.com/v1",
        help="Any OpenAI-compatible server: vLLM (http://host:8000/v1), llama.cpp server (http://host:8080/v1), "
             "Ollama (http://localhost:11434/v1) or the OpenAI API (empty).").strip()
    typed["ADAMM_LLM_MODEL"] = st.text_input(
        "Model", value=typed.get("ADAMM_LLM_MODEL", ""), key="sb_model_name",
        placeholder=env.get("ADAMM_LLM_MODEL") or "e.g. gpt-4.1-nano, qwen2.5:7b").strip()
    typed["OPENAI_API_KEY"] = st.text_input(
        "API key", value=typed.get("OPENAI_API_KEY", ""), key="sb_api_key", type="password",
        placeholder="from OPENAI_API_KEY" if env.get("OPENAI_API_KEY") else "not needed for most local servers",
        help="Kept in this browser session only; never written to the memory file or logs.").strip()
    typed["ADAMM_LLM_VISION"] = "1" if st.checkbox(
        "The model takes images", value=truthy(typed.get("ADAMM_LLM_VISION", env.get("ADAMM_LLM_VISION"))),
        key="sb_vision", help="Evidence images are then sent to it (else captions and OCR text)") else "0"
    state.put(state.LLM_SETTINGS, typed)


def _model_status() -> None:
    """What the background loading is doing; redrawn every second while something still loads."""
    status = WARMUP.status()
    box = st.caption if status.ready or status.started is None else st.info
    box(status.text())


def render_sidebar() -> None:
    with st.sidebar:
        loading = not WARMUP.status().ready
        st.fragment(_model_status, run_every=1.0 if loading else None)()
        st.subheader("Memory")
        current = state.store_path()
        options = list(dict.fromkeys([current, str(state.DEFAULT_STORE), *memory_files(state.MEMORY_DIR)]))
        if st.session_state.get("sb_memory") not in options:
            st.session_state["sb_memory"] = current
        st.selectbox("Memory file", options, key="sb_memory", on_change=_on_pick,
                     format_func=lambda p: Path(p).name,
                     help=f"A DuckDB file holding one memory. New memories are created in {state.MEMORY_DIR}.")
        st.text_input("New memory name", key="sb_new_name", placeholder="e.g. my-log, or /data/my-log.duckdb",
                      help="A name creates NAME.duckdb in the memories folder; a path (with / or .duckdb) "
                           "creates the file there.")
        st.button("Create new memory", key="sb_create", on_click=_on_create,
                  disabled=state.new_memory_path(st.session_state.get("sb_new_name", "")) is None)
        current = state.store_path()
        st.caption(f"`{current}`" + ("" if Path(current).exists() else " (not built yet: build it on Upload & build)"))
        st.caption(f"New memories go to `{state.MEMORY_DIR}` (set ADAMM_MEMORY_DIR before `make run` to change "
                   "it, or type a path). The address bar keeps the memory: reload or share the link.")
        from_url = st.query_params.get(state.MEMORY_PARAM)
        if from_url and from_url != current and state.url_memory_problem(from_url):
            st.warning(f"The link's memory is not opened: {state.url_memory_problem(from_url)}.")
        st.query_params[state.MEMORY_PARAM] = current  # a reload comes back to this memory

        st.subheader("Language model")
        backends = ["rules", "openai", "local"]
        backend = st.radio("Backend", backends, key="sb_backend", index=backends.index(state.backend()),
                           horizontal=True,
                           help="rules: no model (default). openai: any OpenAI-compatible endpoint (vLLM, llama.cpp "
                                "server, Ollama, the OpenAI API) by the base URL and model below, else "
                                "OPENAI_BASE_URL / OPENAI_API_KEY / ADAMM_LLM_MODEL. local: a GGUF file served "
                                "in-process by llama.cpp.")
        state.put(state.BACKEND, backend)
        if backend == "local":
            path = st.text_input("GGUF model file", value=state.get(state.MODEL_PATH, ""), key="sb_gguf")
            state.put(state.MODEL_PATH, path.strip())
            problem = gguf_problem(path.strip())
            if problem is not None:
                st.error(f"Local model: {problem}. The rule-based components answer until a GGUF file is given.")
            else:
                st.caption(f"`{Path(path).name}` ({Path(path).stat().st_size / 1e6:.0f} MB) is served in-process by "
                           "llama.cpp, loaded once and shared by every page.")
        elif backend == "openai":
            _endpoint_inputs()
        if backend != "rules":
            if st.button("Test connection", key="sb_probe",
                         help="One small call: the reply, its latency, whether JSON-schema output works and, "
                              "for a model that takes images, whether it reads one"):
                with st.spinner("Asking the model..."):
                    state.put(state.LLM_PROBE, probe_model())
            report = state.get(state.LLM_PROBE)
            if report:
                box = st.success if report[0].startswith("connected") else st.error
                box("  \n".join(report))
            # the widget follows the overrides (another page may reset them), like the memory picker
            if st.session_state.get("sb_llm_mode") != llm_mode():
                st.session_state["sb_llm_mode"] = llm_mode()
            st.selectbox("LLM mode", LLM_MODES, key="sb_llm_mode", on_change=_on_mode,
                         help=" ".join(LLM_MODE_HELP[m] + "." for m in LLM_MODES))
            if st.session_state.get("sb_llm_steps") != llm_steps():
                st.session_state["sb_llm_steps"] = llm_steps()
            st.multiselect("Steps the model takes", LLM_STEPS, key="sb_llm_steps", on_change=_on_steps,
                           help="The other steps run the rules. " + " ".join(LLM_STEP_HELP[x] + "." for x in LLM_STEPS))
