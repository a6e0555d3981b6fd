"""The LLM steps end to end against the real local model (the pinned 0.5B GGUF in-process, one thread).

Extraction on a handful of demo rounds, the planner over a real memory file, and a malformed reply
that is repaired or falls back. Needs requirements-test-llm.txt (skips otherwise); a few minutes on a
busy 2-core machine. What the model says is not pinned (a small model is not exact); the tests
assert what the engine guarantees around it: grounded provenance, plans that validate, visible
fallbacks, and an answer every time.
"""
from __future__ import annotations

import json

import duckdb
import pytest

from core.config import DEFAULT
from core.errors import LLMError
from core.extract import RuleExtractor
from core.extract.llm_extractor import LLMExtractor
from core.formats import read_file
from core.llm import DuckDBLLMCache, LocalLLM, TokenMeter
from core.planning import QueryEngine
from core.protocols import LLMResult
from core.store import Store
from conftest import ROOT
from llm_server import local_gguf  # noqa: F401  (fixture)
from test_planning_data import memory_path  # noqa: F401  (fixture)

pytestmark = [pytest.mark.llm, pytest.mark.slow]

DEMO = ROOT / "data" / "demo" / "demo.json"
# sleep figures said in words and a glucose screenshot whose OCR text stands in for the image (the test
# model reads no images); more rounds and kinds of record run in bench/llm_eval.py (each round is a
# model call of 15-30 s here)
ROUNDS = ("S4:R1", "S3:R3")

FREE = DEFAULT.with_(llm_mode="free")  # the planner tests below are about the model planning on its own


@pytest.fixture(scope="module")
def llm(local_gguf, tmp_path_factory):
    store = Store(tmp_path_factory.mktemp("e2e") / "cache.duckdb")
    m = LocalLLM(local_gguf, n_ctx=4096, n_threads=1, cache=DuckDBLLMCache(store.con), meter=TokenMeter(),
                 timeout=300, retries=1, max_tokens=384)
    yield m
    m.close()
    store.close()


@pytest.mark.timeout(900)
def test_extraction_on_demo_rounds_gives_observations_with_provenance(llm):
    (h,) = read_file(str(DEMO))
    rounds = {r.round_id: r for s in h.sessions for r in s.rounds}
    ext = LLMExtractor(llm, fallback=RuleExtractor(DEFAULT))
    from_llm = 0
    for rid in ROUNDS:
        r = rounds[rid]
        ocr = {im.image_id: "Average glucose 141 mg/dL\nVariability 28.1 %" for im in r.images}
        res = ext.run(r, ocr)
        assert res.tokens > 0  # the model was asked (and the tokens counted), fallback or not
        for o in res.observations:
            assert o.round_id == rid
            # provenance: the span indexes the cited text and holds the raw value
            if o.source == "dialogue":
                text = r.dialogue[o.utterance_index].text
            elif o.source == "ocr":
                text = ocr[o.image_id]
            else:
                text = next(im.caption for im in r.images if im.image_id == o.image_id)
            assert text[o.start:o.end] == o.raw_value, (rid, o)
        if res.fallback is None:
            assert all(o.extractor == "llm" for o in res.observations)
            from_llm += len(res.observations)
        else:
            assert ext.fallbacks and ext.fallbacks[-1][0] == rid  # recorded, and the rules answered
    assert from_llm >= 2, "the local model grounded almost nothing on two rounds full of numbers"
    usage = llm.meter.usage(task="extract")
    assert usage.calls >= len(ROUNDS) and usage.prompt_tokens > 0


@pytest.mark.timeout(1200)
def test_planner_returns_plans_that_validate_and_answers(llm, memory_path, embedder):
    con = duckdb.connect(str(memory_path))
    try:
        engine = QueryEngine(con, embedder, FREE, llm=llm)
        # one analytic question (a plan of several steps); retrieval questions through the model run in
        # bench/llm_eval.py
        traces = [engine.ask("What was my average sleep hours in March 2026?")]
        box = engine.toolbox()
        for t in traces:
            assert t.answer.text.strip()
            assert t.plan.steps and all(s.tool in box.allowed_tools for s in t.plan.steps)
            if t.planner == "rules":
                assert t.fallbacks, "an LLM plan was replaced without saying why"
            for s in t.steps:
                if s.planner == "llm" and s.status == "ok":
                    box.validate(s.tool, s.args, DEFAULT.evidence_budget)  # raises ToolError if invalid
            if any(s.status == "error" for s in t.steps):
                assert t.fallbacks
            json.loads(t.to_json())
        assert any(s.planner == "llm" and s.status == "ok" for t in traces for s in t.steps), \
            [t.to_dict()["steps"] for t in traces]
        assert sum(t.prompt_tokens for t in traces) > 0
    finally:
        con.close()


@pytest.mark.timeout(900)
def test_guided_answer_states_the_computed_value_or_keeps_the_rule_answer(llm, memory_path, embedder):
    from core.planning.answer import check_answer
    from core.planning.engine import GUIDED_TABLE_PLAN

    q = "What was my average sleep hours in March 2026?"
    con = duckdb.connect(str(memory_path))
    try:
        rules = QueryEngine(con, embedder, DEFAULT).ask(q)
        t = QueryEngine(con, embedder, DEFAULT, llm=llm).ask(q)
    finally:
        con.close()
    assert t.mode == "guided" and rules.answer.kind == "computed"
    # a rule plan over a table stands without a plan call; the model writes the answer from its draft
    assert t.plan.prompt_tokens == 0 and GUIDED_TABLE_PLAN in t.plan.notes and t.answer.prompt_tokens > 0
    assert [(s.tool, s.args) for s in t.steps] == [(s.tool, s.args) for s in rules.steps]  # checked against its value
    kept = t.answer.text == rules.answer.text
    assert kept or check_answer(t.answer.text, rules.answer, t.steps) is None, t.to_dict()
    if any("contradicted the computed value" in f for f in t.fallbacks):
        assert t.answer.text == rules.answer.text  # the draft replaced the model's answer


class CorruptFirst:
    """The real model, except that the first reply for `task` is replaced by `bad` (or `bad` is raised)."""

    def __init__(self, llm, task, bad):
        self.llm, self.task, self.bad = llm, task, bad
        self.model, self.vision = llm.model, False
        self.done = False

    def complete_json(self, task, messages, schema, *, prompt_version="1", images=()):
        if task == self.task and not self.done:
            self.done = True
            if isinstance(self.bad, Exception):
                raise self.bad
            return LLMResult(self.bad, self.model, 1, 1)
        return self.llm.complete_json(task, messages, schema, prompt_version=prompt_version, images=images)


@pytest.mark.timeout(900)
def test_malformed_reply_is_repaired_or_falls_back(llm, memory_path, embedder):
    q = "What was my average sleep hours in March 2026?"
    con = duckdb.connect(str(memory_path))
    try:
        # repairable: names in the wrong spelling, an operator alias, an unknown key
        plan = {"steps": [{"goal": "average sleep in March", "tool": "compute"}]}
        messy = CorruptFirst(CorruptFirst(llm, "plan", plan), "instantiate", {"args": {
            "table": "Sleep Log", "target_column_expression": "sleep hours", "operator": "average",
            "optional_column_filters": [{"column": "time", "op": ">=", "value": "2026-03-01"},
                                        {"column": "time", "op": "<=", "value": "2026-03-31"}],
            "explanation": "because"}})
        t = QueryEngine(con, embedder, FREE, llm=messy).ask(q)
        s = t.steps[0]
        assert s.planner == "llm" and s.status == "ok" and s.value["operator"] == "avg"
        assert any("repaired table" in n for n in s.notes) and any("explanation" in n for n in s.notes)
        assert t.answer.text.strip()
        # unrepairable: the plan call fails and an instantiation is nonsense -> rule-based, visibly
        broken = CorruptFirst(llm, "plan", LLMError("model crashed"))
        t2 = QueryEngine(con, embedder, FREE, llm=broken).ask(q)
        assert t2.planner == "rules" and any("rule-based plan used" in f for f in t2.fallbacks)
        assert t2.steps and t2.steps[0].status == "ok"
        nonsense = CorruptFirst(CorruptFirst(llm, "plan", plan), "instantiate", {"args": {"table": 42}})
        t3 = QueryEngine(con, embedder, FREE, llm=nonsense).ask(q)
        assert t3.steps[0].status == "error" and t3.steps[0].planner == "llm"
        assert any("invalid arguments" in f for f in t3.fallbacks) and t3.planner == "llm+rules"
        assert any(s.status == "ok" and s.planner == "rules" for s in t3.steps)
    finally:
        con.close()
