"""LLM faults from the local fault-injecting OpenAI-compatible server, through a whole build and a query.

The server (tests/llm_server.py) answers with timeouts, 429 with Retry-After, 500, dropped connections,
truncated and malformed JSON. The client retries with backoff (waits recorded through the injectable
sleep, so nothing really sleeps), then the step falls back to the rule-based component. The build and the
query complete, the BuildReport / Trace say what fell back, and when every call fails the memory equals a
rules-only build (so a dead model costs nothing but time).
"""
from __future__ import annotations

import json

import openai
import pytest

from conftest import FakeImageEncoder, FakeOCR, HashEmbedder
from history_factory import write_health_history
from llm_server import FaultServer, Reply
from test_build import snapshot
from test_reliability_input import fake_deps

from core.build import build
from core.config import DEFAULT, LLM_STEPS
from core.planning.engine import GUIDED_TABLE_PLAN
from core.deps import make_build_deps
from core.formats import read_file
from core.llm import OpenAICompatLLM
from core.planning import QueryEngine
from core.store import Store

KEY = "sk-faults-test-0123456789"


class Endless(list):
    """A reply script for FaultServer that never runs dry: after the scripted replies, `default` forever."""

    def __init__(self, script, default: Reply):
        super().__init__(script)
        self.default = default
        self.served = 0

    def __bool__(self) -> bool:
        return True

    def pop(self, index=0):
        self.served += 1
        return super().pop(0) if len(self) else self.default


def client_llm(server: FaultServer, sleeps: list, **kw) -> OpenAICompatLLM:
    client = openai.OpenAI(base_url=server.base_url, api_key=KEY, timeout=5, max_retries=0)
    kw.setdefault("timeout", 1.0)
    kw.setdefault("retries", 2)
    return OpenAICompatLLM(client, "fault-model", backoff=0.01, max_backoff=0.05, sleep=sleeps.append, **kw)


FAULTS = [
    Reply.status(429, "slow down", headers={"Retry-After": "3"}), Reply.status(500, "boom"), Reply.drop(),
    Reply.truncated('{"observations": [{"attribute": "sleep'), Reply.text('{"observations": [oops'),
    Reply.status(503, "unavailable"), Reply.text("Sure! Here is the JSON you asked for."),
    Reply.status(429, "again", headers={"Retry-After": "0"}), Reply.hang(),
]


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    return write_health_history(tmp_path_factory.mktemp("src"), n_sessions=4, rounds_per_session=4)


@pytest.fixture(scope="module")
def rules_memory(history, tmp_path_factory):
    path = tmp_path_factory.mktemp("rules") / "rules.duckdb"
    with Store(path) as s:
        build(s, read_file(history), fake_deps(), DEFAULT)
    return path


def build_with(server: FaultServer, history, path, sleeps: list):
    with Store(path) as s:
        llm = client_llm(server, sleeps)
        # every step with the model, extraction included (one call per round: the faults reach each round)
        config = DEFAULT.with_(llm_steps=",".join(LLM_STEPS), llm_parallel=1)
        deps = make_build_deps(config, cache_con=s.con, llm=llm, text_encoder=HashEmbedder(), ocr=FakeOCR(),
                               image_encoder=FakeImageEncoder())
        # one call at a time: the scripted faults reach the rounds in order (concurrent calls:
        # tests/test_build_parallel.py)
        return build(s, read_file(history), deps, config)


@pytest.mark.timeout(300)
def test_build_against_a_failing_model_completes_reports_fallbacks_and_equals_rules(history, rules_memory, tmp_path):
    sleeps: list[float] = []
    with FaultServer(hang_limit=3) as srv:
        srv.replies = Endless(FAULTS, Reply.status(500, "still down"))
        report = build_with(srv, history, tmp_path / "m.duckdb", sleeps)
        served = srv.replies.served
    assert report.rounds == 16 and report.rounds_added == 16
    extract_fb = [f for f in report.fallbacks if f.startswith("extract ")]
    assert len(extract_fb) == 16, report.fallbacks  # every round fell back to the rules
    # every kind of fault was met and retried: 3 attempts per call
    assert served >= len(FAULTS) and served % 3 == 0
    # the waits: Retry-After honoured, otherwise exponential backoff from 0.01 s (capped at 0.05 s)
    assert 3.0 in sleeps and 0.0 in sleeps
    pairs = set(zip(sleeps, sleeps[1:]))
    assert (0.01, 0.02) in pairs and max(sleeps) == 3.0
    # the other LLM steps (table metadata, episode and topic descriptions) are reported too
    others = [f for f in report.fallbacks if not f.startswith("extract ")]
    assert any("table metadata" in f for f in others), report.fallbacks
    # the report is stored with the run, fallbacks included
    with Store(tmp_path / "m.duckdb") as s:
        stored = json.loads(s.con.execute("SELECT report FROM runs ORDER BY run_id DESC LIMIT 1").fetchone()[0])
    assert stored["fallbacks"] == list(report.fallbacks)
    # a dead model costs nothing but time: the memory equals the rules-only build
    assert snapshot(tmp_path / "m.duckdb") == snapshot(rules_memory)


@pytest.mark.timeout(300)
def test_a_call_that_succeeds_after_retries_is_not_a_fallback(history, tmp_path):
    sleeps: list[float] = []
    with FaultServer() as srv:
        srv.replies = Endless([Reply.status(429, "busy", headers={"Retry-After": "2"}), Reply.drop(),
                               Reply.json({"observations": []})], Reply.status(500, "down"))
        report = build_with(srv, history, tmp_path / "m.duckdb", sleeps)
    first = report.fallbacks[0] if report.fallbacks else ""
    assert not any(f.startswith("extract S1:R1:") for f in report.fallbacks), first
    assert any(f.startswith("extract S1:R2:") for f in report.fallbacks)
    assert sleeps[:2] == [2.0, 0.02]
    with Store(tmp_path / "m.duckdb") as s:  # the model's answer (nothing) was used for that round
        assert s.con.execute("SELECT count(*) FROM observations WHERE round_id = 'S1:R1'").fetchone()[0] == 0
        assert s.con.execute("SELECT count(*) FROM observations WHERE round_id = 'S2:R1'").fetchone()[0] > 0


@pytest.mark.timeout(300)
def test_query_with_a_failing_model_falls_back_and_answers_like_the_rules(rules_memory, tmp_path):
    import duckdb

    question = "What was my average sleep score?"
    con = duckdb.connect(str(rules_memory), read_only=True)
    try:
        rules = QueryEngine(con, HashEmbedder(), DEFAULT).ask(question)
        sleeps: list[float] = []
        with FaultServer(hang_limit=3) as srv:
            srv.replies = Endless([Reply.hang(), Reply.status(500, "boom"), Reply.drop(),
                                   Reply.truncated('{"answer": "7'), Reply.text("{'answer': 7}"),
                                   Reply.status(429, "x", headers={"Retry-After": "1"})],
                                  Reply.status(502, "bad gateway"))
            trace = QueryEngine(con, HashEmbedder(), DEFAULT, llm=client_llm(srv, sleeps)).ask(question)
    finally:
        con.close()
    # a rule plan over a table is not put to the model (guided); the answer call met the faults
    assert GUIDED_TABLE_PLAN in trace.plan.notes and not any(f.startswith("plan:") for f in trace.fallbacks)
    assert any(f.startswith("answer:") for f in trace.fallbacks), trace.fallbacks
    assert "3 attempt(s)" in " ".join(trace.fallbacks)  # retried (hang, 500, drop), then fell back
    assert trace.plan.planner == "rules"
    assert trace.answer.text == rules.answer.text
    assert [s.value for s in trace.steps] == [s.value for s in rules.steps]
    assert json.loads(trace.to_json())["fallbacks"] == list(trace.fallbacks)
