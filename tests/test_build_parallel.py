"""A build with a model sends its extraction calls concurrently (Config.llm_parallel) and keeps round order.

Against a real HTTP server (tests/llm_server.py) through the real openai client: the server answers
extraction requests only when `llm_parallel` of them are in flight at once (a barrier, no timing),
and answers each from the round text in its prompt, so a reply stored under the wrong round shows.
"""
from __future__ import annotations

import json
import re

import openai
import pytest

from conftest import FakeImageEncoder, FakeOCR, HashEmbedder
from llm_server import FaultServer, Reply

from core.build import BuildDeps, build
from core.config import DEFAULT
from core.extract import RuleExtractor
from core.extract.llm_extractor import LLMExtractor
from core.formats import read_file
from core.llm import OpenAICompatLLM, TokenMeter
from core.store import Store

ROUNDS = 6


def _history(tmp_path):
    dialogues = [{"round": f"S1:R{k}", "time": f"2026-03-0{k}T08:00:00",
                  "user": f"Tank check: nitrate reading {10 + k} ppm this morning.",
                  "assistant": "Noted."} for k in range(1, ROUNDS + 1)]
    doc = {"character_profile": {"name": "t"},
           "multi_session_dialogues": [{"session_id": "S1", "date": "2026-03-01", "dialogues": dialogues}],
           "human-annotated QAs": []}
    path = tmp_path / "h.json"
    path.write_text(json.dumps(doc))
    return read_file(str(path))


def _answer(body: dict) -> Reply:
    """The extraction reply for the round in the prompt (other tasks: a refusal, so they fall back)."""
    task = (body.get("response_format") or {}).get("json_schema", {}).get("name")
    prompt = "\n".join(str(m.get("content")) for m in body.get("messages", []) if m.get("role") == "user")
    m = re.search(r"nitrate reading (\d+) ppm", prompt)
    if task != "extract" or m is None:
        return Reply.status(400, "not scripted")
    item = {"attribute": "nitrate", "value": m.group(1), "unit": "ppm", "source": "dialogue",
            "image_id": None, "quote": f"nitrate reading {m.group(1)} ppm"}
    return Reply(kind="content", content=json.dumps({"observations": [item]}), meet=True)


def _llm(server) -> OpenAICompatLLM:
    client = openai.OpenAI(base_url=server.base_url, api_key="k", timeout=30, max_retries=0)
    return OpenAICompatLLM(client, "parallel-model", retries=0, timeout=30, meter=TokenMeter())


def _build(tmp_path, server, parallel: int):
    llm = _llm(server)
    deps = BuildDeps(HashEmbedder(), FakeImageEncoder(), FakeOCR(), LLMExtractor(llm, fallback=RuleExtractor(DEFAULT)),
                     llm=llm)
    seen: list[tuple[str, int, int]] = []
    with Store(tmp_path / f"m{parallel}.duckdb") as store:
        report = build(store, _history(tmp_path), deps, DEFAULT.with_(llm_parallel=parallel),
                       lambda stage, done, total: seen.append((stage, done, total)))
        rows = store.con.execute(
            "SELECT round_id, raw_value, extractor FROM observations WHERE extractor = 'llm' ORDER BY round_id"
        ).fetchall()
    return report, rows, seen


@pytest.mark.timeout(120)
def test_extraction_calls_overlap_and_each_reply_stays_with_its_round(tmp_path):
    with FaultServer(respond=_answer, meet=3, hang_limit=30) as srv:
        report, rows, seen = _build(tmp_path, srv, parallel=3)
    assert not [f for f in report.fallbacks if f.startswith("extract")], report.fallbacks
    # every round's value came back from the model and was stored under that round
    assert rows == [(f"S1:R{k}", str(10 + k), "llm") for k in range(1, ROUNDS + 1)]
    # progress per round read by the model, ending at all of them
    extract = [(d, t) for s, d, t in seen if s == "extract"]
    assert [d for d, _ in extract] == list(range(1, ROUNDS + 1)) and {t for _, t in extract} == {ROUNDS}


@pytest.mark.timeout(120)
def test_one_call_at_a_time_never_overlaps(tmp_path):
    """The same server with llm_parallel=1: the barrier is never met, so every extraction falls back."""
    with FaultServer(respond=_answer, meet=2, hang_limit=2) as srv:
        report, rows, _ = _build(tmp_path, srv, parallel=1)
    assert rows == []
    assert len([f for f in report.fallbacks if f.startswith("extract")]) == ROUNDS
    assert all("did not overlap" in f for f in report.fallbacks if f.startswith("extract"))


def test_llm_parallel_is_a_bounded_setting():
    with pytest.raises(ValueError, match="llm_parallel"):
        DEFAULT.with_(llm_parallel=0)
