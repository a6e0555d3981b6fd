"""The LLM planner through the LLM protocol (QueuedLLM): valid plans, repairs, fallbacks, progressive prompts."""
from __future__ import annotations

import json
import math
import statistics
from datetime import date

import duckdb
import pytest

from core.config import DEFAULT
from core.errors import LLMError
from core.planning import QueryEngine, Trace
from conftest import QueuedLLM
from test_planning_data import MARATHON_DAY, SLEEP, memory_path  # noqa: F401

MARCH_AVG = statistics.mean(r["sleep_hours"] for r in SLEEP if r["day"].month == 3)

# these tests are about the model planning on its own (llm_mode "free"); guided mode: test_llm_guided.py
FREE = DEFAULT.with_(llm_mode="free")


@pytest.fixture
def con(memory_path):
    c = duckdb.connect(str(memory_path))
    yield c
    c.close()


def march_args(**over):
    args = {"table": "sleep_log", "target_column_expression": "sleep_hours", "operator": "avg",
            "optional_column_filters": [{"column": "time", "op": ">=", "value": "2026-03-01"},
                                        {"column": "time", "op": "<=", "value": "2026-03-31"}]}
    args.update(over)
    return args


def test_valid_llm_plan(con, embedder):
    llm = QueuedLLM([{"steps": [{"goal": "average sleep in March", "tool": "Compute"}]},
                     {"args": march_args()}, {"answer": "About 7.4 hours."}])
    t = QueryEngine(con, embedder, FREE, llm=llm).ask("How long did I sleep on average in March?")
    assert [c["task"] for c in llm.calls] == ["plan", "instantiate", "answer"]
    assert t.planner == "llm" and t.backend == "llm:fake-llm" and not t.fallbacks
    s = t.steps[0]
    assert s.status == "ok" and s.planner == "llm"
    assert math.isclose(s.value["value"], MARCH_AVG)
    assert t.answer.text == "About 7.4 hours." and t.answer.kind == "llm"
    assert (t.prompt_tokens, t.completion_tokens) == (30, 15)
    # the instantiation prompt shows the planning context; its schema enumerates the legal tables
    inst = llm.calls[1]
    assert "sleep_log" in json.dumps(inst["messages"])
    assert "sleep_log" in json.dumps(inst["schema"])
    # the answer prompt carries the computed evidence
    assert f"{MARCH_AVG:g}"[:4] in json.dumps(llm.calls[2]["messages"])
    assert Trace.from_dict(json.loads(t.to_json())) == t


def test_progressive_instantiation_sees_earlier_results(con, embedder):
    llm = QueuedLLM([
        {"steps": [{"goal": "find the half marathon day", "tool": "EventLocate"},
                   {"goal": "sleep hours that day", "tool": "Lookup"}]},
        {"args": {"query_content": "ran the half marathon", "result_budget": 1}},
        {"args": {"table": "sleep_log", "key_values": [{"column": "time", "value": MARATHON_DAY.isoformat()}],
                  "result_budget": 2}},
        {"answer": "6.2 hours"},
    ])
    t = QueryEngine(con, embedder, FREE, llm=llm).ask("How long did I sleep on the day of my half marathon?")
    step2_prompt = json.dumps(llm.calls[2]["messages"])
    assert MARATHON_DAY.isoformat() in step2_prompt  # step 1's result is in step 2's prompt (eq. 10)
    assert [s.status for s in t.steps] == ["ok", "ok"]
    assert t.steps[1].units[0].rounds[0] == next(r["round_id"] for r in SLEEP if r["day"] == MARATHON_DAY)
    assert t.budget_left == DEFAULT.evidence_budget - 2


def test_no_progressive_instantiates_upfront(con, embedder):
    llm = QueuedLLM([
        {"steps": [{"goal": "find the half marathon day", "tool": "EventLocate"},
                   {"goal": "sleep that day", "tool": "Compute"}]},
        {"args": {"query_content": "half marathon", "result_budget": 1}},
        {"args": march_args()},
        {"answer": "x"},
    ])
    QueryEngine(con, embedder, FREE, llm=llm).ask("How long did I sleep on the day of my half marathon?",
                                                     ablation="no-progressive")
    assert [c["task"] for c in llm.calls] == ["plan", "instantiate", "instantiate", "answer"]
    assert MARATHON_DAY.isoformat() not in json.dumps(llm.calls[2]["messages"])


def test_repairs_are_recorded(con, embedder):
    args = march_args(table="Sleep Log", target_column_expression="Sleep Hours", operator="diff")
    args["note"] = "extra key"
    llm = QueuedLLM([{"steps": [{"goal": "g", "tool": "compute"}]}, {"args": args}, {"answer": "a"}])
    t = QueryEngine(con, embedder, FREE, llm=llm).ask("How did my sleep change in March?")
    s = t.steps[0]
    assert s.status == "ok" and s.args["table"] == "sleep_log" and s.args["operator"] == "change"
    notes = " ".join(s.notes + t.plan.notes)
    assert "dropped unknown argument 'note'" in notes and "repaired table" in notes
    assert "repaired target_column_expression" in notes


def test_invalid_step_falls_back_to_rules(con, embedder):
    llm = QueuedLLM([{"steps": [{"goal": "g", "tool": "Compute"}]},
                     {"args": march_args(target_column_expression="blood_pressure")}, {"answer": "7.4 hours"}])
    t = QueryEngine(con, embedder, FREE, llm=llm).ask("How long did I sleep on average in March?")
    assert t.steps[0].status == "error" and "blood_pressure" in t.steps[0].error
    assert any("rule-based plan" in f for f in t.fallbacks)
    assert t.planner == "llm+rules"
    ok = [s for s in t.steps if s.status == "ok"]
    assert ok and ok[0].planner == "rules" and math.isclose(ok[0].value["value"], MARCH_AVG)
    assert len(t.steps) <= DEFAULT.max_steps


@pytest.mark.parametrize("plan_reply", [
    LLMError("server down"),
    {"steps": []},
    {"steps": [{"goal": "g", "tool": "DropTables"}]},
    {"nonsense": True},
])
def test_unusable_plan_falls_back_to_rules(con, embedder, plan_reply):
    llm = QueuedLLM([plan_reply, {"answer": "7.4 hours"}])
    t = QueryEngine(con, embedder, FREE, llm=llm).ask("How long did I sleep on average in March?")
    assert t.plan.planner == "rules" and any(f.startswith("plan:") for f in t.fallbacks)
    assert math.isclose(t.steps[0].value["value"], MARCH_AVG)


def test_plan_over_the_step_limit_is_cut(con, embedder):
    steps = [{"goal": f"g{i}", "tool": "SemanticMatch"} for i in range(5)]
    replies = [{"steps": steps}] + [{"args": {"query_content": "sleep", "retrieval_scope": "event",
                                               "result_budget": 6}}] * 3 + [{"answer": "a"}]
    t = QueryEngine(con, embedder, FREE, llm=QueuedLLM(replies)).ask("Tell me about my sleep")
    assert len(t.plan.steps) == DEFAULT.max_steps and any("cut" in n for n in t.plan.notes)
    # the shared budget: 6 + 4 units, then the third call is refused
    assert [len(s.units) for s in t.steps] == [6, 3, 1]
    assert len(t.evidence) == DEFAULT.evidence_budget and t.budget_left == 0


def test_answer_failure_falls_back_to_rule_answer(con, embedder):
    llm = QueuedLLM([{"steps": [{"goal": "g", "tool": "Compute"}]}, {"args": march_args()}, LLMError("timeout")])
    t = QueryEngine(con, embedder, FREE, llm=llm).ask("How long did I sleep on average in March?")
    assert t.answer.kind == "computed" and any(f.startswith("answer:") for f in t.fallbacks)
    assert date(2026, 3, 1).strftime("%B") in t.answer.text
