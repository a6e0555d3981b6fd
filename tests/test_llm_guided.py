"""Config.llm_mode with a (fake) model: guided drafts, the answer check, free mode, images for vision models."""
from __future__ import annotations

import hashlib
import io
import json
import statistics
from dataclasses import replace

import duckdb
import pytest
from PIL import Image

from core.config import DEFAULT
from core.errors import LLMError
from core.model import BuildReport, EvidenceUnit
from core.planning import QueryEngine, Trace
from core.planning.answer import check_answer, computed_values, text_values
from core.planning.engine import EVIDENCE_IMAGES, GUIDED_TABLE_PLAN, IMAGE_MAX_SIDE, downscale
from core.planning.trace import Answer, StepRecord
from conftest import QueuedLLM
from test_planning_data import SLEEP, WORKOUTS, memory_path  # noqa: F401

FREE = DEFAULT.with_(llm_mode="free")
Q_AVG = "How long did I sleep on average in March?"
MARCH_AVG = statistics.mean(r["sleep_hours"] for r in SLEEP if r["day"].month == 3)
KEEP_COMPUTE = {"steps": [{"goal": "average sleep in March", "tool": "Compute"}]}


@pytest.fixture
def con(memory_path):  # noqa: F811
    c = duckdb.connect(str(memory_path))
    yield c
    c.close()


def _rules(con, embedder, q=Q_AVG):
    return QueryEngine(con, embedder, DEFAULT).ask(q)


# ---------------------------------------------------------------------- guided: drafts
def test_guided_is_the_default_and_a_rule_plan_over_a_table_stands(con, embedder):
    assert DEFAULT.llm_mode == "guided"
    rules = _rules(con, embedder)
    assert rules.plan.steps[0].tool == "Compute"
    llm = QueuedLLM([{"answer": f"{MARCH_AVG:.1f} hours on average"}])
    t = QueryEngine(con, embedder, DEFAULT, llm=llm).ask(Q_AVG)
    # the rules computed over a table: the model is not asked to plan (a 1.5B model replaced such plans by
    # lookups with invented filters), the rules instantiate the step and the model writes the answer
    assert [c["task"] for c in llm.calls] == ["answer"]
    answer_prompt = llm.calls[0]["messages"][-1]["content"]
    assert "Draft answer computed from the evidence: " + rules.answer.text in answer_prompt
    assert t.mode == "guided" and t.to_dict()["mode"] == "guided"
    assert t.planner == "rules" and GUIDED_TABLE_PLAN in t.plan.notes
    assert t.steps[0].args == rules.steps[0].args
    assert t.answer.kind == "llm" and not t.fallbacks
    assert t.prompt_tokens == 10 and t.completion_tokens == 5  # the answer call alone


def test_guided_passes_a_search_plan_to_the_model_as_its_draft(con, embedder):
    q = "What did I name my kitten?"
    rules = _rules(con, embedder, q)
    assert all(s.tool == "SemanticMatch" for s in rules.plan.steps)
    llm = QueuedLLM([{"steps": [{"goal": "find the kitten", "tool": "SemanticMatch"}]}, {"answer": "Miso"}])
    t = QueryEngine(con, embedder, DEFAULT, llm=llm).ask(q)
    assert [c["task"] for c in llm.calls] == ["plan", "answer"]
    plan_prompt = llm.calls[0]["messages"][-1]["content"]
    assert "Suggested plan" in plan_prompt and rules.plan.steps[0].goal in plan_prompt
    assert t.planner == "rules" and "the LLM kept the rule-based plan" in t.plan.notes


def test_guided_unusable_plan_falls_back_to_the_draft_and_says_so(con, embedder):
    q = "What did I name my kitten?"
    rules = _rules(con, embedder, q)
    llm = QueuedLLM([LLMError("server down"), {"answer": "Miso"}])
    t = QueryEngine(con, embedder, DEFAULT, llm=llm).ask(q)
    assert t.mode == "guided" and t.plan.steps == rules.plan.steps
    assert any("LLM plan unusable" in f and "server down" in f for f in t.fallbacks)


def test_guided_answer_failure_uses_the_rule_answer(con, embedder):
    rules = _rules(con, embedder)
    llm = QueuedLLM([LLMError("timeout")])
    t = QueryEngine(con, embedder, DEFAULT, llm=llm).ask(Q_AVG)
    assert t.answer.text == rules.answer.text
    assert any("answer: LLM failed" in f for f in t.fallbacks)


# ---------------------------------------------------------------------- guided: the answer check
@pytest.mark.parametrize("reply", ["About 9.9 hours.", "Not mentioned", "You slept well in March."])
def test_guided_keeps_the_draft_when_the_model_drops_or_contradicts_the_computed_value(con, embedder, reply):
    rules = _rules(con, embedder)
    assert rules.answer.kind == "computed"
    llm = QueuedLLM([{"answer": reply}])
    t = QueryEngine(con, embedder, DEFAULT, llm=llm).ask(Q_AVG)
    assert t.answer.text == rules.answer.text and t.answer.kind == "computed"
    fb = [f for f in t.fallbacks if "LLM answer contradicted the computed value" in f]
    assert len(fb) == 1 and reply[:20] in fb[0]
    assert t.answer.prompt_tokens == 10  # the rejected call's tokens still count


@pytest.mark.parametrize("reply", [f"{MARCH_AVG:.1f} hours", f"{MARCH_AVG * 60:.0f} minutes on average",
                                   f"{round(MARCH_AVG, 2)} h"])
def test_guided_accepts_the_computed_value_rounded_or_in_another_unit(con, embedder, reply):
    llm = QueuedLLM([{"answer": reply}])
    t = QueryEngine(con, embedder, DEFAULT, llm=llm).ask(Q_AVG)
    assert t.answer.text == reply and t.answer.kind == "llm" and not t.fallbacks


def _step(index, tool, status="ok", value=None, units=(), planner="rules"):
    return StepRecord(index, "goal", tool, {}, status, planner, value=value, units=tuple(units))


def _unit(uid, text, time=None, data=(), kind="event"):
    return EvidenceUnit(unit_id=uid, kind=kind, text=text, rounds=(uid,), score=0.5, time=time, data=data)


def test_a_value_a_retrieved_memory_states_is_supported_even_against_an_analytic_draft():
    lookup = _step(1, "Lookup", units=[_unit("r1", "row", "2026-03-02T10:00:00", (("my_color", "blue"),),
                                             kind="row")])
    recall = _step(0, "SemanticMatch", units=[_unit("S1:R2", "user: Bought a road bike. Paid 1,450 dollars.",
                                                    "2026-02-10T09:00:00")])
    draft = Answer("March 2, 2026 (my color blue)", "rows", 1.0)
    steps = [recall, lookup]
    assert check_answer("$1450.00", draft, steps) is None
    assert check_answer("Blue", draft, steps) is None  # the draft's own value
    assert "no tool result supports" in check_answer("$2,000", draft, steps)
    assert check_answer("a road bike", draft, steps) is None  # words of the memory
    assert check_answer("Not mentioned", draft, steps) is not None
    # without an analytic value there is nothing to protect
    assert check_answer("anything", Answer("x", "extractive", 1.0), steps) is None
    assert check_answer("anything", Answer("Not mentioned", "refusal", refused=True), steps) is None


def test_values_from_the_models_own_analytic_call_are_not_protected():
    # the model planned a lookup of its own (an unrelated table): its rows are no computed value to keep
    lookup = _step(1, "Lookup", planner="llm",
                   units=[_unit("r1", "row", "2026-03-01T10:00:00", (("average_glucose", 137.0),), kind="row")])
    recall = _step(0, "SemanticMatch", units=[_unit("S1:R2", "user: Slept badly.", "2026-03-02T09:00:00")])
    draft = Answer("March 1, 2026 (average glucose 137)", "rows", 1.0)
    assert computed_values([recall, lookup]).numbers == ()
    assert check_answer("Not mentioned", draft, [recall, lookup]) is None
    assert check_answer("Not mentioned", draft, [recall, replace(lookup, planner="rules")]) is not None


def test_computed_values_read_what_the_rule_answer_states():
    mx = _step(0, "Compute", value={"operator": "max", "value": 12.2, "at_time": "2026-03-03T13:36:00",
                                    "n_rows": 17})
    key = computed_values([mx])
    assert 12.2 in key.numbers and (3, 3) in key.days and 17.0 not in key.numbers
    cnt = _step(0, "Compute", value={"operator": "count", "value": 5, "n_rows": 5})
    assert computed_values([cnt]).numbers == (5.0,)
    assert check_answer("6 times", Answer("5 times", "computed", 1.0), [cnt]) is not None
    assert check_answer("five times? no: 5", Answer("5 times", "computed", 1.0), [cnt]) is None
    rank = _step(0, "Rank", value={"column": "time", "values": ["2026-03-09"]},
                 units=[_unit("r", "row", "2026-03-09T07:00:00", kind="row")])
    assert check_answer("2026-03-09", Answer("March 9, 2026", "ranked", 1.0), [rank]) is None
    assert check_answer("March 9th", Answer("March 9, 2026", "ranked", 1.0), [rank]) is None
    assert check_answer("March 25, 2026", Answer("March 9, 2026", "ranked", 1.0), [rank]) is not None


def test_text_values_read_dates_before_numbers():
    v = text_values("March 25, 2026 (480 min), 2026-03-09T13:36:00 and 1,450 dollars at 13:36")
    assert v.numbers == (480.0, 1450.0) and v.days == ((3, 25), (3, 9))


def test_guided_model_plan_searches_with_the_question_and_drafts_from_the_rule_steps(con, embedder):
    q = "What did I name my kitten?"
    plan = {"steps": [{"goal": "find the kitten", "tool": "SemanticMatch"},
                      {"goal": "look up sleep", "tool": "Lookup"}]}
    lookup = {"args": {"table": "sleep_log", "key_values": {"quality": "good"}, "result_budget": 1}}
    llm = QueuedLLM([plan, lookup, {"answer": "Miso"}])
    t = QueryEngine(con, embedder, DEFAULT, llm=llm).ask(q)
    # no instantiation call for the search: the question itself, event scope, one unit left for the lookup
    assert [c["task"] for c in llm.calls] == ["plan", "instantiate", "answer"]
    s0, s1 = t.steps
    assert s0.planner == "rules" and s0.args["query_content"] == q and s0.args["retrieval_scope"] == "event"
    assert s0.args["result_budget"] == DEFAULT.evidence_budget - 1
    assert s1.planner == "llm" and s1.status == "ok" and s1.units  # the model's own (irrelevant) lookup
    # the draft is read from the rule-instantiated search, not from the model's sleep rows; a name the
    # rules picked from a round is a phrase to check, not a computed value to keep
    prompt = llm.calls[-1]["messages"][-1]["content"]
    assert "A phrase the search picked from the best matching line (it may not answer the question): Miso" in prompt
    assert "Draft answer computed" not in prompt
    assert t.answer.text == "Miso" and not t.fallbacks
    # free mode: the model instantiates the search too
    llm2 = QueuedLLM([plan, {"args": {"query_content": "kitten", "retrieval_scope": "topic", "result_budget": 3}},
                      lookup, {"answer": "Miso"}])
    t2 = QueryEngine(con, embedder, FREE, llm=llm2).ask(q)
    assert t2.steps[0].planner == "llm" and t2.steps[0].args["query_content"] == "kitten"


# ---------------------------------------------------------------------- free mode: unchanged
def test_free_mode_plans_and_answers_without_drafts_or_answer_check(con, embedder):
    args = {"table": "sleep_log", "target_column_expression": "sleep_hours", "operator": "avg",
            "optional_column_filters": [{"column": "time", "op": "between", "value": ["2026-03-01", "2026-03-31"]}]}
    llm = QueuedLLM([KEEP_COMPUTE, {"args": args}, {"answer": "About 9.9 hours."}])
    t = QueryEngine(con, embedder, FREE, llm=llm).ask(Q_AVG)
    assert [c["task"] for c in llm.calls] == ["plan", "instantiate", "answer"]
    assert "Suggested plan" not in llm.calls[0]["messages"][-1]["content"]
    assert "Draft answer" not in llm.calls[2]["messages"][-1]["content"]
    assert t.mode == "free" and t.planner == "llm"
    assert t.answer.text == "About 9.9 hours." and not t.fallbacks  # the model's answer stands


def test_rules_mode_and_the_trace_round_trip(con, embedder):
    t = _rules(con, embedder)
    assert t.mode == "rules"
    d = json.loads(t.to_json())
    assert d["mode"] == "rules"
    g = QueryEngine(con, embedder, DEFAULT, llm=QueuedLLM([{"answer": "x"}])).ask(Q_AVG)
    assert Trace.from_dict(g.to_dict()) == g and Trace.from_dict(g.to_dict()).mode == "guided"
    old = g.to_dict()
    old.pop("mode")
    assert Trace.from_dict(old).mode == "rules"  # traces saved before the field existed


# ---------------------------------------------------------------------- a condition the model dropped
def test_a_category_the_question_names_is_added_to_the_models_call(con, embedder):
    q = "How far was my longest swim, in km?"
    plan = {"steps": [{"goal": "rank workouts by distance", "tool": "Rank"}]}
    args = {"table": "workout", "target_column_expression": "distance_km", "order": "desc",
            "optional_column_filters": [], "result_budget": 1}
    llm = QueuedLLM([plan, {"args": args}, {"answer": "x"}])
    t = QueryEngine(con, embedder, FREE, llm=llm).ask(q)
    s = t.steps[0]
    assert {"column": "activity", "op": "=", "value": "swim"} in s.args["optional_column_filters"]
    assert any("added filter activity = swim" in n for n in s.notes)
    longest_swim = max(r["distance_km"] for r in WORKOUTS if r["activity"] == "swim")
    assert longest_swim < max(r["distance_km"] or 0 for r in WORKOUTS)  # the fixture tells them apart
    assert s.value["values"][0] == longest_swim
    # a call that already filters the column is left alone
    args2 = dict(args, optional_column_filters=[{"column": "activity", "op": "in", "value": ["swim", "cycle"]}])
    llm2 = QueuedLLM([plan, {"args": args2}, {"answer": "x"}])
    s2 = QueryEngine(con, embedder, FREE, llm=llm2).ask(q).steps[0]
    assert s2.args["optional_column_filters"] == args2["optional_column_filters"]
    assert not any("added filter" in n for n in s2.notes)


# ---------------------------------------------------------------------- images
def _png(w: int, h: int, colour=(200, 30, 30)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (w, h), colour).save(buf, format="PNG")
    return buf.getvalue()


def _add_images(con, round_id: str, images: list[bytes]) -> None:
    for pos, data in enumerate(images):
        sha = hashlib.sha256(data).hexdigest()
        con.execute("INSERT INTO blobs VALUES (?, ?) ON CONFLICT DO NOTHING", [sha, data])
        con.execute("INSERT INTO images (image_id, round_id, position, caption, sha256, mime) "
                    "VALUES (?, ?, ?, ?, ?, 'image/png')", [f"{round_id}:img{pos}", round_id, pos, "a kitten", sha])


def _kitten_round(con) -> str:
    return con.execute("SELECT round_id FROM rounds WHERE text LIKE '%kitten%'").fetchone()[0]


KITTEN = "What did I name my kitten?"
KEEP_SEARCH = {"steps": [{"goal": "retrieve memories relevant to the question", "tool": "SemanticMatch"}]}


def test_a_vision_model_gets_at_most_three_downscaled_evidence_images(con, embedder):
    rid = _kitten_round(con)
    _add_images(con, rid, [_png(1600, 1200, (i * 50, 10, 10)) for i in range(4)])
    llm = QueuedLLM([KEEP_SEARCH, {"answer": "Miso"}], vision=True)
    t = QueryEngine(con, embedder, DEFAULT, llm=llm).ask(KITTEN)
    assert rid in t.evidence_rounds
    sent = llm.calls[-1]["images"]
    assert llm.calls[-1]["task"] == "answer" and len(sent) == EVIDENCE_IMAGES == 3
    for data in sent:
        with Image.open(io.BytesIO(data)) as im:
            assert max(im.size) == IMAGE_MAX_SIDE and im.format == "JPEG"
    assert t.answer.text == "Miso"


def test_a_text_model_gets_no_images_but_the_evidence_text(con, embedder):
    rid = _kitten_round(con)
    _add_images(con, rid, [_png(1600, 1200)])
    llm = QueuedLLM([KEEP_SEARCH, {"answer": "Miso"}], vision=False)
    QueryEngine(con, embedder, DEFAULT, llm=llm).ask(KITTEN)
    assert all(c["images"] == [] for c in llm.calls)
    assert "named her Miso" in llm.calls[-1]["messages"][-1]["content"]


def test_evidence_images_skip_undecodable_bytes_and_keep_small_images(con, embedder):
    rid = _kitten_round(con)
    small = _png(40, 30)
    _add_images(con, rid, [b"not an image at all", small])
    eng = QueryEngine(con, embedder, DEFAULT)
    assert eng.evidence_images([rid]) == [small]
    assert eng.evidence_images([]) == [] and eng.evidence_images(["no-such-round"]) == []
    assert downscale(b"\x89PNG broken") is None


# ---------------------------------------------------------------------- build report, sidebar
def test_build_report_has_llm_totals_with_defaults():
    r = BuildReport(1, 2, 2, 0, 0, 3, 1, 1, 1, "img", "txt", 0.5)
    assert r.llm_tokens == 0 and r.llm_calls == 0


def _sidebar_app():
    from ui.sidebar import render_sidebar

    render_sidebar()


def test_sidebar_mode_select_box_appears_with_a_model_and_sets_the_config():
    from streamlit.testing.v1 import AppTest

    from ui import state

    at = AppTest.from_function(_sidebar_app, default_timeout=30)
    at.run()
    assert not at.exception
    assert not [s for s in at.sidebar.selectbox if s.key == "sb_llm_mode"]  # rules: no model, no mode
    at.sidebar.radio(key="sb_backend").set_value("openai").run()
    assert at.session_state[state.BACKEND] == "openai"
    box = at.sidebar.selectbox(key="sb_llm_mode")
    assert box.value == "guided" and list(box.options) == ["guided", "free"]
    box.set_value("free").run()
    assert not at.exception
    assert at.session_state[state.CONFIG_OVERRIDES]["llm_mode"] == "free"
    at.sidebar.selectbox(key="sb_llm_mode").set_value("guided").run()
    assert "llm_mode" not in (at.session_state[state.CONFIG_OVERRIDES] or {})
    # which steps the model takes: extraction stays with the rules until a person adds it
    steps = at.sidebar.multiselect(key="sb_llm_steps")
    assert "extract" not in steps.value and "answer" in steps.value
    steps.select("extract").run()
    assert not at.exception
    assert at.session_state[state.CONFIG_OVERRIDES]["llm_steps"] == "extract+describe+plan+answer"
    at.sidebar.multiselect(key="sb_llm_steps").unselect("extract").run()
    assert "llm_steps" not in (at.session_state[state.CONFIG_OVERRIDES] or {})


def test_a_model_answer_names_the_evidence_it_rests_on_and_unknown_ids_are_dropped(embedder):
    """The answer schema enumerates the evidence ids; what comes back is validated, not trusted."""
    from core import prompts
    from core.planning.answer import LLMAnswerer, RuleAnswerer

    units = (EvidenceUnit("ev:S1:R2", "event", "I repotted the fern on March 3.", rounds=("S1:R2",)),
             EvidenceUnit("ev:S2:R1", "event", "The fern got 200 ml of water.", rounds=("S2:R1",)))
    step = StepRecord(0, "find the repotting", "EventLocate", {}, "ok", "rules", "2 events", units=units)
    llm = QueuedLLM([{"answer": "On March 3", "used": ["ev:S1:R2", "ev:S9:R9", "ev:S1:R2"]}])
    ans, note = LLMAnswerer(llm, RuleAnswerer(embedder)).answer("When did I repot the fern?", [step])
    assert note is None and ans.text == "On March 3"
    assert ans.cited == ("ev:S1:R2",)  # the invented id and the repeat are gone
    assert ans.unit_ids == ("ev:S1:R2", "ev:S2:R1")  # provenance still lists all the evidence shown
    schema = llm.calls[0]["schema"]
    assert schema["properties"]["used"]["items"]["enum"] == ["ev:S1:R2", "ev:S2:R1"]
    assert schema["properties"]["used"]["maxItems"] == prompts.MAX_CITED
    assert Answer.from_dict(ans.to_dict()) == ans


def test_guided_drafts_say_what_the_rules_found(con, embedder):
    """A computed value is a draft to keep; a rule refusal is not shown; an ISO date answer is spoken."""
    from core.planning.answer import LLMAnswerer, RuleAnswerer

    units = (EvidenceUnit("ev:S1:R2", "event", "We adopted a kitten.", rounds=("S1:R2",)),)
    step = StepRecord(0, "find it", "EventLocate", {}, "ok", "rules", "1 event", units=units)
    computed = Answer("7.5 hours", "computed", 1.0, ("ev:S1:R2",), ("S1:R2",))
    refused = Answer("Not mentioned.", "refusal", 0.0, ("ev:S1:R2",), ("S1:R2",), refused=True)
    prompts_seen, answers = [], []
    for draft in (computed, refused):
        llm = QueuedLLM([{"answer": "2022-11-04T15:56:00", "used": []}])
        ans, _ = LLMAnswerer(llm, RuleAnswerer(embedder), draft=False).answer("When?", [step], draft=draft)
        answers.append(ans.text)
        llm = QueuedLLM([{"answer": "7.5 hours", "used": []}])
        LLMAnswerer(llm, RuleAnswerer(embedder), draft=True).answer("q?", [step], draft=draft)
        prompts_seen.append(llm.calls[0]["messages"][-1]["content"])
    assert "Draft answer computed from the evidence: 7.5 hours" in prompts_seen[0]
    assert "Draft answer" not in prompts_seen[1] and "Not mentioned." not in prompts_seen[1].split("Question:")[1]
    assert answers == ["November 4, 2022", "November 4, 2022"]


def test_a_date_worked_out_from_the_rounds_day_is_a_draft_a_picked_name_a_hint(embedder):
    from datetime import datetime

    from core.planning.answer import RuleAnswerer

    units = (EvidenceUnit("ev:S1:R2", "event", "We adopted a kitten named Miso yesterday.", rounds=("S1:R2",),
                          time="2026-03-04T10:00:00"),)
    step = StepRecord(0, "find it", "EventLocate", {}, "ok", "rules", "1 event", units=units)
    when = RuleAnswerer(embedder).answer("When did I adopt the kitten?", [step], datetime(2026, 4, 1))
    name = RuleAnswerer(embedder).answer("What did I name my kitten?", [step], datetime(2026, 4, 1))
    assert when.text == "March 3, 2026" and not when.span
    assert name.text == "Miso" and name.span
