"""The API key never leaks: not into the memory file, logs, stderr, traces, exception messages or the page.

OPENAI_API_KEY is set to a unique canary; a build and a query run with `--backend openai` (through the
CLI entry point, in-process, with the fake encoders) against the local fault-injecting server, which
echoes the key back in its error bodies and in a malformed reply. The Ask page then runs with the openai
backend too. The canary must appear nowhere: not in the DuckDB file's bytes (nor its WAL), not in any
value of any table, not in captured logs at DEBUG level, stdout or stderr, not in the trace JSON and not
in anything the page rendered. The server did receive it (so the test is not vacuous).
"""
from __future__ import annotations

import json
import logging
import uuid

import duckdb
import pytest
from streamlit.testing.v1 import AppTest

from conftest import ROOT, FakeImageEncoder, FakeOCR, HashEmbedder
from history_factory import write_health_history
from llm_server import FaultServer, Reply
from test_reliability_input import run_cli_inprocess
from test_reliability_llm_faults import Endless

from ui import resources, state

CANARY = f"sk-canary-{uuid.uuid4().hex}"
LOGGERS = ("", "openai", "httpx", "httpcore", "core", "urllib3")


def echoing_script(key: str) -> Endless:
    """Faults whose bodies repeat the key (as some proxies do), then 401 'incorrect key: <key>' forever."""
    return Endless([Reply.status(500, f"upstream said: bad key {key}"),
                    Reply.text(json.dumps({"observations": f"echo {key}"})),
                    Reply.status(429, f"rate limited for key {key}", headers={"Retry-After": "0"})],
                   Reply.status(401, f"Incorrect API key provided: {key}"))


@pytest.fixture
def openai_env(monkeypatch):
    with FaultServer() as srv:
        srv.replies = echoing_script(CANARY)
        monkeypatch.setenv("OPENAI_API_KEY", CANARY)
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        monkeypatch.setenv("ADAMM_LLM_MODEL", "canary-model")
        yield srv


@pytest.fixture
def fake_encoders(monkeypatch):
    """The CLI's real factories, with the fake encoders in place of MiniLM / rapidocr (the LLM stays real)."""
    import core.deps
    import core.encoders

    real = core.deps.make_build_deps
    monkeypatch.setattr(core.deps, "make_build_deps", lambda config, **kw: real(
        config, **kw, text_encoder=HashEmbedder(), ocr=FakeOCR(), image_encoder=FakeImageEncoder()))
    monkeypatch.setattr(core.encoders, "load_minilm", lambda *a, **k: None)
    monkeypatch.setattr(core.encoders, "MiniLMEncoder", lambda model: HashEmbedder())
    enc = HashEmbedder()
    monkeypatch.setattr(resources, "text_encoder", lambda: enc)
    monkeypatch.setattr(resources, "image_encoder", lambda *a, **k: FakeImageEncoder())
    monkeypatch.setattr(resources, "ocr_engine", lambda: FakeOCR())


def table_values(path) -> str:
    """Every value of every table and view, as text (DuckDB may compress strings on disk)."""
    con = duckdb.connect(str(path))  # same configuration as the app session still holding the file
    try:
        parts = []
        for (name,) in con.execute("SELECT table_name FROM information_schema.tables "
                                   "WHERE table_schema = 'main'").fetchall():
            ident = '"' + name.replace('"', '""') + '"'
            parts.append(repr(con.execute(f"SELECT * FROM {ident}").fetchall()))
        return "\n".join(parts)
    finally:
        con.close()


def rendered(at: AppTest) -> str:
    """Everything the page holds: every element's protobuf (text, values, labels, help)."""
    out = []

    def walk(node):
        proto = getattr(node, "proto", None)
        if proto is not None:
            out.append(str(proto))
        for child in getattr(node, "children", {}).values() if isinstance(getattr(node, "children", None), dict) \
                else getattr(node, "children", []) or []:
            walk(child)

    walk(at._tree)
    out += [str(e.value) for e in at.exception]
    return "\n".join(out)


@pytest.mark.timeout(300)
def test_the_api_key_appears_nowhere(tmp_path, openai_env, fake_encoders, capsys, caplog):
    for name in LOGGERS:
        caplog.set_level(logging.DEBUG, logger=name or None)
    src = write_health_history(tmp_path, n_sessions=4, rounds_per_session=4)
    store = tmp_path / "memory.duckdb"

    built = run_cli_inprocess(["build", str(src), "--store", str(store), "--backend", "openai", "--quiet"], capsys)
    assert built.code == 0, built.err
    assert "fell back" in built.err  # the model failed and the build said so
    asked = run_cli_inprocess(["ask", "What was my average sleep score?", "--store", str(store),
                               "--backend", "openai", "--json"], capsys)
    assert asked.code == 0, asked.err
    trace = json.loads(asked.out)
    assert trace["fallbacks"] and trace["answer"]

    at = AppTest.from_file(str(ROOT / "app_pages" / "ask.py"), default_timeout=60)
    at.session_state[state.STORE_PATH] = str(store)
    at.session_state[state.BACKEND] = "openai"
    at.run()
    at.text_input(key="ask_q").input("What was my average sleep score?").run()
    at.button(key="ask_finish").click().run()
    assert not at.exception
    page = rendered(at)
    assert "sleep" in page.lower()

    # the key was really in use (Authorization header) and really echoed back by the server
    auth = {r["headers"].get("authorization") for r in openai_env.requests}
    assert auth == {f"Bearer {CANARY}"} and len(openai_env.requests) >= 5

    places = {
        "memory file bytes": b"".join(p.read_bytes() for p in tmp_path.glob("memory.duckdb*")).decode("latin-1"),
        "memory values": table_values(store),
        "logs": "\n".join(f"{r.name} {r.getMessage()} {r.exc_text or ''}" for r in caplog.records),
        "build output": built.out + built.err,
        "ask output / trace JSON": asked.out + asked.err,
        "page": page,
    }
    assert caplog.records and "***" in places["logs"]  # the echoed key was logged, redacted
    for where, text in places.items():
        assert CANARY not in text, f"the API key leaked into the {where}"


def key_pieces(key: str, n: int = 12) -> list[str]:
    return [key[i:i + n] for i in range(len(key) - n + 1)]


@pytest.mark.timeout(120)
def test_a_truncated_echo_of_the_key_is_redacted_too(openai_env, caplog):
    """A model reply that echoes the key is quoted, cut at 40 characters, in the schema fault: the piece
    that survives the cut must not reach the log or the LLMError either."""
    import openai

    from core.errors import LLMError
    from core.llm import OpenAICompatLLM

    caplog.set_level(logging.DEBUG)
    openai_env.replies = Endless([Reply.text(json.dumps({"observations": f"echo {CANARY}"}))] * 3,
                                 Reply.status(500, "down"))
    client = openai.OpenAI(base_url=openai_env.base_url, api_key=CANARY, timeout=5, max_retries=0)
    llm = OpenAICompatLLM(client, "m", retries=2, sleep=lambda s: None)
    schema = {"type": "object", "required": ["observations"], "properties": {"observations": {"type": "array"}}}
    with pytest.raises(LLMError) as err:
        llm.complete_json("extract", [{"role": "user", "content": "hi"}], schema)
    text = str(err.value) + "\n".join(r.getMessage() for r in caplog.records)
    assert "echo" in text  # the fault was reported ...
    leaked = [p for p in key_pieces(CANARY) if p in text]
    assert not leaked, f"pieces of the API key leaked: {leaked[:3]}"  # ... without any piece of the key
