"""Each LLM step through the LLM protocol with fakes: the judge, the eval runner (judge field, fallback
counts, an LLM that only ever answers garbage), the planner's compact prompts, the answer-evidence cap."""
from __future__ import annotations

import json

import duckdb
import pytest

from conftest import QueuedLLM
from core import prompts
from core.build import BuildDeps
from core.config import DEFAULT
from core.errors import LLMError
from core.evaluation.judge import Judgement, LLMJudge, judge_summary, snap
from core.evaluation.runner import run_eval
from core.extract import RuleExtractor
from core.planning import QueryEngine
from core.planning.context import Candidate, PlanningContext
from core.planning.llm_planner import plan_context, table_line
from core.planning.metadata import load_catalog
from core.protocols import LLMResult
from history_factory import write_health_history
from test_planning_data import memory_path  # noqa: F401  (fixture)

# --------------------------------------------------------------------------- judge


def test_judge_returns_the_scale_score_and_reason():
    llm = QueuedLLM([{"reason": "same value", "score": 0.75}])
    j = LLMJudge(llm).judge("How far did I run?", "8 km", "about 8 km")
    assert (j.score, j.reason, j.error) == (0.75, "same value", None)
    call = llm.calls[0]
    assert call["task"] == prompts.JUDGE
    text = json.dumps(call["messages"])
    assert "8 km" in text and "about 8 km" in text
    assert call["schema"]["properties"]["score"]["enum"] == [0, 0.25, 0.5, 0.75, 1]


@pytest.mark.parametrize("reply", [LLMError("down"), {"reason": "x", "score": 0.6}, {"reason": "x"},
                                   {"reason": "x", "score": True}, ["not", "an", "object"]])
def test_judge_failure_or_off_scale_reply_is_unjudged_not_fatal(reply):
    j = LLMJudge(QueuedLLM([reply])).judge("q", "gold", "pred")
    assert j.score is None and j.error


def test_empty_prediction_scores_zero_without_a_call():
    llm = QueuedLLM([])
    assert LLMJudge(llm).judge("q", "gold", "  ").score == 0.0 and llm.calls == []


def test_snap_accepts_only_members_of_the_scale():
    assert [snap(v) for v in (0, 0.25, 1, 1.0)] == [0.0, 0.25, 1.0, 1.0]
    assert [snap(v) for v in (0.3, -1, "1", None, False)] == [None] * 5


def test_judge_summary_means_graded_and_counts_failures():
    s = judge_summary([Judgement(1.0, prompt_tokens=5, completion_tokens=2), Judgement(0.5),
                       Judgement(None, error="x"), None], "m")
    assert s == {"model": "m", "mean": 0.75, "n": 2, "failed": 1, "tokens": 7}
    assert judge_summary([], "m")["mean"] is None


# --------------------------------------------------------------------------- eval runner


def _history_with_qas(tmp_path, qas):
    path = write_health_history(tmp_path, n_sessions=3, rounds_per_session=4)
    doc = json.loads(path.read_text())
    doc["human-annotated QAs"] = qas
    path.write_text(json.dumps(doc))
    return path


QAS = [
    {"question": "Where did we go for dinner?", "answer": "the new Thai place", "clue": ["S1:R4"],
     "query_type": "single_fact"},
    {"question": "What is my cat's name?", "answer": "Not mentioned", "clue": [], "query_type": "refusal"},
]


class ScriptedJudgeLLM:
    """Answers only judge calls, from a list; anything else is a test failure."""

    model = "judge-model"
    vision = False

    def __init__(self, replies):
        self.replies = list(replies)
        self.tasks = []

    def complete_json(self, task, messages, schema, *, prompt_version="1", images=()):
        self.tasks.append(task)
        assert task == prompts.JUDGE
        r = self.replies.pop(0)
        if isinstance(r, Exception):
            raise r
        return LLMResult(r, self.model, 30, 8)


def _deps(embedder, image_encoder, fake_ocr, llm=None, extractor=None):
    return BuildDeps(text_encoder=embedder, image_encoder=image_encoder, ocr=fake_ocr,
                     extractor=extractor or RuleExtractor(DEFAULT), llm=llm)


def test_eval_with_a_model_adds_judge_per_prediction_and_llm_judge_in_summary(
        tmp_path, embedder, image_encoder, fake_ocr):
    path = _history_with_qas(tmp_path, QAS)
    judge_llm = ScriptedJudgeLLM([{"reason": "ok", "score": 1}, LLMError("judge server down")])
    summary = run_eval(str(path), str(tmp_path / "out"), deps=_deps(embedder, image_encoder, fake_ocr),
                       engine_factory=lambda store, config, llm: QueryEngine(store.con, embedder, config),
                       llm=judge_llm)
    recs = [json.loads(ln) for ln in (tmp_path / "out" / "predictions.jsonl").read_text().splitlines()]
    assert judge_llm.tasks == ["judge", "judge"]
    assert [r["judge"] for r in recs] == [1.0, None]
    assert "judge server down" in recs[1]["judge_reason"]
    assert summary["llm_judge"] == 1.0
    assert summary["llm_judge_detail"] == {"model": "judge-model", "mean": 1.0, "n": 1, "failed": 1, "tokens": 38}
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["llm_judge"] == 1.0


def test_eval_without_a_model_has_no_judge(tmp_path, embedder, image_encoder, fake_ocr):
    path = _history_with_qas(tmp_path, QAS)
    summary = run_eval(str(path), str(tmp_path / "out"), deps=_deps(embedder, image_encoder, fake_ocr),
                       engine_factory=lambda store, config, llm: QueryEngine(store.con, embedder, config))
    rec = json.loads((tmp_path / "out" / "predictions.jsonl").read_text().splitlines()[0])
    assert "judge" not in rec and "llm_judge" not in summary
    assert summary["n"] == 2 and summary["fallbacks"] == 0 and summary["build_fallbacks"] == 0


class GarbageLLM:
    """Every call fails or answers the wrong shape, in turn: what a broken model or server can do."""

    model = "garbage"
    vision = False

    def __init__(self):
        self.n = 0
        self.tasks = []

    def complete_json(self, task, messages, schema, *, prompt_version="1", images=()):
        self.n += 1
        self.tasks.append(task)
        kind = self.n % 4
        if kind == 0:
            raise LLMError(f"garbage model: call {self.n} failed")
        data = [{"bogus": True}, None, {"steps": "no", "args": 3, "observations": 5, "answer": None,
                                        "description": 7, "columns": "x", "name": 9, "score": "high"}][kind - 1]
        return LLMResult(data, self.model, 3, 2)


def test_build_and_eval_survive_a_model_that_only_answers_garbage(tmp_path, embedder, image_encoder, fake_ocr):
    from core.extract.llm_extractor import LLMExtractor

    path = _history_with_qas(tmp_path, QAS)
    llm = GarbageLLM()
    deps = _deps(embedder, image_encoder, fake_ocr, llm=llm,
                 extractor=LLMExtractor(llm, fallback=RuleExtractor(DEFAULT)))
    summary = run_eval(str(path), str(tmp_path / "out"), deps=deps, llm=llm,
                       engine_factory=lambda store, config, m: QueryEngine(store.con, embedder, config, llm=m))
    assert summary["n"] == 2
    tasks = set(llm.tasks)
    assert {"extract", "plan", "answer", "judge"} <= tasks
    assert summary["build_fallbacks"] > 0  # every extraction fell back to the rules, and the build says so
    recs = [json.loads(ln) for ln in (tmp_path / "out" / "predictions.jsonl").read_text().splitlines()]
    assert all(r["fallbacks"] for r in recs) and summary["questions_with_fallback"] == 2
    assert all(isinstance(r["prediction"], str) and r["prediction"] for r in recs)
    assert summary["llm_judge_detail"]["failed"] + summary["llm_judge_detail"]["n"] == 2


# --------------------------------------------------------------------------- planner prompts


def test_plan_context_is_compact_and_hides_bookkeeping_columns(memory_path):
    con = duckdb.connect(str(memory_path), read_only=True)
    try:
        cat = load_catalog(con.cursor())
    finally:
        con.close()
    line = table_line(cat["workout"])
    assert line.startswith("workout: ")
    assert "distance_km" in line and "time" in line
    assert "source" not in line.split("Columns:")[1] and "round_order" not in line
    # a small categorical column lists its values (what a filter may use)
    assert "[" in line and "run" in line and "yoga" in line
    cands = tuple(Candidate("table", n, cat[n].text(), 0.5, 1.0, 1.0, 0.6, True) for n in cat) + tuple(
        Candidate("episode", f"E{i}", "user: " + "word " * 200, 0.1, 0.0, 0.0, 0.1 - i / 100, True) for i in range(5))
    text = plan_context(PlanningContext("q", cands, True), cat)
    assert text.count("\n- ") == len(cat) + 3  # one line per table and the top three episodes
    assert len(text) < 400 * len(cat) + 3 * 160
    assert "Tools" not in text  # the plan prompt lists the tools itself


def test_instantiation_prompt_for_retrieval_carries_no_tables(memory_path, embedder):
    con = duckdb.connect(str(memory_path))
    try:
        llm = QueuedLLM([{"steps": [{"goal": "find the kitten story", "tool": "SemanticMatch"}]},
                         {"args": {"query_content": "adopted a kitten", "retrieval_scope": "event",
                                   "result_budget": 3}},
                         {"answer": "Miso"}])
        t = QueryEngine(con, embedder, DEFAULT.with_(llm_mode="free"), llm=llm).ask("What did I name my kitten?")
    finally:
        con.close()
    assert [c["task"] for c in llm.calls] == ["plan", "instantiate", "answer"]
    inst = json.dumps(llm.calls[1]["messages"])
    assert "sleep_log" not in inst and "Tables:" not in inst
    assert "sleep_log" in json.dumps(llm.calls[0]["messages"])
    assert t.answer.text == "Miso" and not t.fallbacks


def test_answer_evidence_is_capped_line_by_line_and_in_total():
    ev = "\n".join(f"- unit {i} " + "x" * 1000 for i in range(40))
    msgs, _ = prompts.answer("q?", ev)
    user = msgs[-1]["content"]
    assert len(user) < prompts.MAX_EVIDENCE_CHARS + 400
    assert "more lines left out" in user and "- unit 0 " in user and "- unit 39 " not in user
    short = "Step 1 [Compute] avg 7.2 h"
    assert short in prompts.answer("q?", short)[0][-1]["content"]


def test_prompt_versions_changed_with_the_prompts_and_key_the_cache():
    from core.llm import cache_key

    msgs, schema = prompts.plan("q", "ctx")
    k2 = cache_key("m", prompts.PLAN, prompts.PROMPT_VERSION[prompts.PLAN], msgs, schema)
    assert k2 != cache_key("m", prompts.PLAN, "1", msgs, schema)
    assert all(prompts.PROMPT_VERSION[t] for t in (prompts.EXTRACT, prompts.TABLE_METADATA, prompts.EPISODE_DESCRIPTION,
                                                    prompts.TOPIC_DESCRIPTION, prompts.PLAN, prompts.INSTANTIATE,
                                                    prompts.ANSWER, prompts.JUDGE))


def test_compute_operators_in_the_prompt_are_the_tools_operators():
    from core.planning.tools import COMPUTE_OPS

    schema = prompts.tool_args_schema("Compute")
    assert set(schema["properties"]["operator"]["enum"]) == set(COMPUTE_OPS)


def test_first_step_leaves_budget_for_later_steps_and_oversized_budget_is_cut(memory_path, embedder):
    con = duckdb.connect(str(memory_path))
    try:
        llm = QueuedLLM([
            {"steps": [{"goal": "find the half marathon", "tool": "EventLocate"},
                       {"goal": "sleep that day", "tool": "Lookup"}]},
            {"args": {"query_content": "ran the half marathon", "result_budget": 50}},
            {"args": {"table": "sleep_log", "key_values": [{"column": "time", "value": "2026-03-14"}],
                      "result_budget": 5}},
            {"answer": "7 hours"}])
        t = QueryEngine(con, embedder, DEFAULT.with_(llm_mode="free"), llm=llm).ask("How long did I sleep on the day of the half marathon?")
    finally:
        con.close()
    # step 1 may use all but one unit (one is kept for step 2); its schema says so too
    assert llm.calls[1]["schema"]["properties"]["args"]["properties"]["result_budget"]["maximum"] == \
        DEFAULT.evidence_budget - 1
    s1, s2 = t.steps
    assert s1.status == "ok" and s1.args["result_budget"] == DEFAULT.evidence_budget - 1
    assert any("cut to" in n for n in s1.notes)
    assert s2.status == "ok" and s2.planner == "llm" and s2.budget_before >= 1


def test_period_note_resolves_the_questions_period_or_asks_for_no_time_filter():
    from datetime import datetime

    from core.planning.llm_planner import period_note

    now, first = datetime(2026, 4, 12, 20, 0), datetime(2026, 1, 12, 8, 0)
    march = period_note("What was my average sleep in March?", now, first, for_args=True)
    assert "2026-03-01 to 2026-03-31" in march and "time >=" in march
    assert "no time filter" in period_note("How many hours did I sleep on average?", now, first, for_args=True)
    assert period_note("How many hours did I sleep on average?", now, first) == ""  # the plan needs no note
    assert period_note("anything", None) == ""


def test_instantiation_prompt_carries_the_resolved_period(memory_path, embedder):
    con = duckdb.connect(str(memory_path))
    try:
        llm = QueuedLLM([{"steps": [{"goal": "average sleep in March", "tool": "Compute"}]},
                         {"args": {"table": "sleep_log", "target_column_expression": "sleep_hours", "operator": "avg",
                                   "optional_column_filters": []}},
                         {"answer": "7 hours"}])
        QueryEngine(con, embedder, DEFAULT.with_(llm_mode="free"), llm=llm).ask("How long did I sleep on average in March?")
    finally:
        con.close()
    plan_msg, inst_msg = (json.dumps(c["messages"]) for c in llm.calls[:2])
    assert "2026-03-01 to 2026-03-31" in plan_msg and "2026-03-01 to 2026-03-31" in inst_msg


def test_answer_prompt_shows_a_draft_only_when_given():
    with_draft = prompts.answer("How long did I sleep?", "Step 1 [Compute] avg 426 min", draft="7.1 h on average")
    assert "Draft answer computed from the evidence: 7.1 h on average" in with_draft[0][-1]["content"]
    assert "Draft" not in prompts.answer("How long did I sleep?", "Step 1 [Compute] avg 426 min")[0][-1]["content"]


def _draft_plan():
    from core.planning.trace import Plan, PlanStep

    return Plan((PlanStep("compute avg of sleep_hours in sleep_log", "Compute"),), "rules", "aggregate",
                payload={"marker": 1})


def _planner(con, embedder, llm):
    from core.planning.llm_planner import LLMPlanner

    engine = QueryEngine(con, embedder, DEFAULT, llm=llm)
    ctx = engine.contexts.build("How long did I sleep on average?", use_tables=True, use_episodes=True)
    return LLMPlanner(llm, DEFAULT, engine.toolbox()), ctx


def test_a_draft_plan_kept_by_the_model_comes_back_as_the_rule_plan(memory_path, embedder):
    from datetime import datetime

    con = duckdb.connect(str(memory_path))
    try:
        llm = QueuedLLM([{"steps": [{"goal": "average sleep", "tool": "Compute"}]}])
        planner, ctx = _planner(con, embedder, llm)
        plan = planner.outline("How long did I sleep on average?", ctx, ("Compute", "SemanticMatch"),
                               datetime(2026, 4, 1), draft=_draft_plan())
    finally:
        con.close()
    assert "Suggested plan" in llm.calls[0]["messages"][-1]["content"]
    assert "compute avg of sleep_hours" in llm.calls[0]["messages"][-1]["content"]
    assert plan.planner == "rules" and plan.payload == {"marker": 1} and plan.prompt_tokens == 10
    assert "the LLM kept the rule-based plan" in plan.notes


def test_a_draft_plan_the_model_replaces_gives_the_models_plan(memory_path, embedder):
    from datetime import datetime

    con = duckdb.connect(str(memory_path))
    try:
        llm = QueuedLLM([{"steps": [{"goal": "find sleep talk", "tool": "SemanticMatch"}]}])
        planner, ctx = _planner(con, embedder, llm)
        plan = planner.outline("How long did I sleep on average?", ctx, ("Compute", "SemanticMatch"),
                               datetime(2026, 4, 1), draft=_draft_plan())
    finally:
        con.close()
    assert plan.planner == "llm" and [s.tool for s in plan.steps] == ["SemanticMatch"]


def test_answerer_draft_mode_puts_the_rule_answer_in_the_prompt(memory_path, embedder):  # noqa: F811
    from core.planning.answer import LLMAnswerer

    con = duckdb.connect(str(memory_path))
    try:
        q = "How much deep sleep did I get on average?"  # the fixture has no score column
        rules = QueryEngine(con, embedder, DEFAULT).ask(q)
        engine = QueryEngine(con, embedder, DEFAULT, llm=QueuedLLM([]))
        state = engine.start(q)  # rule plan: the queued LLM has no plan reply and falls back
        while not state.done:
            state = engine.step(state)
        for draft in (False, True):
            llm = QueuedLLM([{"answer": "an answer"}])
            LLMAnswerer(llm, engine.rule_answerer, draft=draft).answer(q, state.records)
            prompt = json.dumps(llm.calls[0]["messages"])
            assert (rules.answer.text[:20] in prompt) is draft
    finally:
        con.close()


# --------------------------------------------------------------------------- which steps call the model


class TaskRecorder:
    """Records every task it is called for and fails each call (the rules then take over), so a test
    sees which steps asked the model."""

    model = "recorder"
    vision = False

    def __init__(self):
        self.tasks: list[str] = []

    def complete_json(self, task, messages, schema, *, prompt_version="1", images=()):
        self.tasks.append(task)
        raise LLMError("recorder: no replies")


@pytest.mark.parametrize("steps, asked, not_asked", [
    ("extract,metadata,describe,plan,answer", {"extract", "plan", "answer"}, set()),
    ("extract", {"extract"}, {"plan", "answer", "table_metadata", "episode_description", "topic_description"}),
    ("answer", {"answer"}, {"extract", "plan", "table_metadata", "episode_description", "topic_description"}),
    ("plan", {"plan"}, {"extract", "answer", "table_metadata", "episode_description", "topic_description"}),
])
def test_llm_steps_chooses_the_steps_that_call_the_model(tmp_path, embedder, image_encoder, fake_ocr,
                                                         steps, asked, not_asked):
    from core.build import build
    from core.config import Config
    from core.deps import make_build_deps
    from core.formats import read_file
    from core.store import Store

    config = Config(llm_steps=steps)
    llm = TaskRecorder()
    path = write_health_history(tmp_path, n_sessions=3, rounds_per_session=4)
    with Store(tmp_path / "m.duckdb") as s:
        deps = make_build_deps(config, cache_con=s.con, llm=llm, text_encoder=embedder, ocr=fake_ocr,
                               image_encoder=image_encoder)
        build(s, read_file(path), deps, config)
        res = QueryEngine(s.con, embedder, config, llm=llm).ask("What did I do on my last run?")
    assert res.answer.text  # the rules answered where the model failed or was not asked
    assert asked <= set(llm.tasks) and not (not_asked & set(llm.tasks)), (steps, llm.tasks)


def test_llm_steps_names_only_known_steps():
    from core.config import Config

    with pytest.raises(ValueError, match="llm_steps"):
        Config(llm_steps="extract,summarize")
    assert Config(llm_steps="").uses_model("extract") is False
    # joined by "+" (a comma in `eval --set` would sweep), or by commas from Python
    plus = Config(llm_steps="extract+plan")
    assert plus.uses_model("plan") and plus.uses_model("extract") and not plus.uses_model("answer")
    assert Config(llm_steps="extract, plan").uses_model("plan")
    assert Config().uses_model("describe") is True
    # the rules extract unless a person asks the model to (measured: README "Language-model backends")
    assert Config().uses_model("extract") is False and Config().uses_model("metadata") is False
