""""Test connection" (core.llm_probe, `python -m core llm-test`, the sidebar button) against real HTTP servers.

The scripted server (tests/llm_server.py) plays endpoints that work, refuse JSON schemas, read or do
not read images, or are not there; one test probes the real in-process llama.cpp server.
"""
from __future__ import annotations

import openai
import pytest

from llm_server import FaultServer, Reply, free_port, local_gguf  # noqa: F401  (fixture)

from core.__main__ import main
from core.llm import OpenAICompatLLM, TokenMeter
from core.llm_probe import check_connection

KEY = "sk-probe-canary-0123456789abcdef"


def _task(body: dict) -> str | None:
    return (body.get("response_format") or {}).get("json_schema", {}).get("name")


def _has_image(body: dict) -> bool:
    return any(isinstance(m.get("content"), list) and any(p.get("type") == "image_url" for p in m["content"])
               for m in body.get("messages", []))


def working(body: dict) -> Reply:
    if _has_image(body):
        return Reply.json({"colour": "Red"})
    return Reply.json({"greeting": "Hello there", "sum": 42})


def no_schemas(body: dict) -> Reply:
    """A server that rejects response_format json_schema (400) and answers plain JSON mode."""
    if (body.get("response_format") or {}).get("type") == "json_schema":
        return Reply.status(400, "response_format json_schema is not supported")
    return Reply.json({"greeting": "hi", "sum": 41})


def _llm(srv, **kw) -> OpenAICompatLLM:
    client = openai.OpenAI(base_url=srv.base_url, api_key=KEY, timeout=10, max_retries=0)
    return OpenAICompatLLM(client, "probe-model", meter=TokenMeter(), timeout=10, **kw)


def test_a_working_endpoint_reports_reply_latency_schema_and_images():
    with FaultServer(respond=working) as srv:
        llm = _llm(srv, vision=True)
        rep = check_connection(llm)
        sent = [r["body"] for r in srv.requests]
    assert rep.ok and rep.arithmetic_ok and rep.latency_ms > 0 and rep.tokens > 0
    assert "Hello there" in rep.reply and rep.json_schema == "yes"
    assert rep.vision.startswith("yes") and "Red" in rep.vision
    assert _has_image(sent[1]) and not _has_image(sent[0])  # the picture went with the second call only
    assert llm.meter.usage().calls == 0  # the probe's calls are not the memory's (no meter, no cache)
    text = "\n".join(rep.lines())
    assert text.startswith("connected to probe-model at " + srv.base_url) and KEY not in text


def test_a_server_without_schema_support_is_told_to_use_json_mode():
    with FaultServer(respond=no_schemas) as srv:
        rep = check_connection(_llm(srv))
        modes = [(r["body"].get("response_format") or {}).get("type") for r in srv.requests]
    assert modes == ["json_schema", "json_object"]
    assert rep.ok and rep.json_schema.startswith("no") and "json_object" in rep.json_schema
    assert not rep.arithmetic_ok and "(17 + 25 is 42)" in "\n".join(rep.lines())
    assert "not supported" in rep.error and KEY not in rep.error


def test_a_text_model_that_is_sent_a_picture_says_what_it_saw():
    def blind(body):
        return Reply.json({"colour": "blue"}) if _has_image(body) else working(body)

    with FaultServer(respond=blind) as srv:
        rep = check_connection(_llm(srv, vision=True))
    assert rep.ok and rep.vision.startswith("unclear") and "'blue'" in rep.vision


def test_no_server_is_a_report_not_an_exception():
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{free_port()}/v1", api_key=KEY, timeout=5, max_retries=0)
    rep = check_connection(OpenAICompatLLM(client, "gone", timeout=5))
    assert not rep.ok and "cannot connect" in rep.error and rep.lines()[0].startswith("no usable reply from gone")


def test_cli_llm_test_by_base_url_and_model(capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("PROBE_KEY", KEY)
    with FaultServer(respond=working) as srv:
        rc = main(["llm-test", "--base-url", srv.base_url, "--model", "served-name", "--api-key-env", "PROBE_KEY"])
        sent = srv.requests[0]
    out = capsys.readouterr().out
    assert rc == 0 and "connected to served-name" in out and "JSON-schema output: yes" in out
    assert sent["body"]["model"] == "served-name" and sent["headers"]["authorization"] == f"Bearer {KEY}"
    import os

    assert "OPENAI_BASE_URL" not in os.environ  # the flags last for the command only
    rc = main(["llm-test", "--base-url", f"http://127.0.0.1:{free_port()}/v1", "--model", "m"])
    assert rc == 1 and "no usable reply" in capsys.readouterr().out


def test_cli_endpoint_flags_are_refused_for_other_backends(capsys, tmp_path):
    rc = main(["ask", "q?", "--store", str(tmp_path / "m.duckdb"), "--model", "x", "--vision"])
    err = capsys.readouterr().err
    assert rc == 2 and "--model, --vision" in err and "only used with --backend openai" in err
    rc = main(["llm-test", "--api-key-env", "SURELY_NOT_SET_ANYWHERE"])
    assert rc == 2 and "SURELY_NOT_SET_ANYWHERE is not set" in capsys.readouterr().err


def _sidebar_app():
    from ui.sidebar import render_sidebar

    render_sidebar()


def test_sidebar_takes_an_endpoint_and_tests_the_connection(monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("ADAMM_LLM_MODEL", raising=False)
    with FaultServer(respond=working) as srv:
        at = AppTest.from_function(_sidebar_app, default_timeout=30)
        at.run()
        at.sidebar.radio(key="sb_backend").set_value("openai").run()
        at.sidebar.text_input(key="sb_base_url").set_value(srv.base_url).run()
        at.sidebar.text_input(key="sb_model_name").set_value("typed-model").run()
        at.sidebar.text_input(key="sb_api_key").set_value(KEY).run()
        at.sidebar.button(key="sb_probe").click().run()
        assert not at.exception
        sent = srv.requests[0]
    ok = [s.value for s in at.sidebar.success]
    assert ok and "connected to typed-model" in ok[0] and "JSON-schema output: yes" in ok[0]
    assert sent["body"]["model"] == "typed-model" and sent["headers"]["authorization"] == f"Bearer {KEY}"
    assert KEY not in ok[0]


@pytest.mark.llm
@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_real_local_server_passes_the_probe(local_gguf):
    from core.llm import LocalLLM

    with LocalLLM(local_gguf, n_ctx=1024, n_threads=1, max_tokens=64) as llm:
        rep = check_connection(llm)
    assert rep.ok and rep.json_schema == "yes" and rep.model.startswith("local/") and rep.vision == "not enabled"
