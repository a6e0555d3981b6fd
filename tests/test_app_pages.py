"""AppTest of every explorer page on a memory built with core.build and the conftest fakes.

The memory (13 rounds, 2 images with OCR text, 3 QAs) is built once per test session with the rule
extractor, so a sleep schema is discovered and materialized. The pages load the text encoder through
ui.resources; the tests swap in the same HashEmbedder the memory was built with.
"""
from __future__ import annotations

import hashlib
import io
from datetime import date, datetime, timedelta

import pytest
from PIL import Image
from streamlit.testing.v1 import AppTest

from conftest import ROOT, FakeImageEncoder, FakeOCR, HashEmbedder

from core.build import BuildDeps, build
from core.config import DEFAULT
from core.extract import RuleExtractor
from core.model import QA, History, ImageRef, Round, Session, Utterance
from core.store import Store
from ui import resources, state

PAGES = ROOT / "app_pages"


def _png(color) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (40, 30), color).save(buf, format="PNG")
    return buf.getvalue()


def health_history() -> tuple[History, dict[bytes, str]]:
    """12 sleep reports over two sessions (two with a screenshot whose OCR text repeats the values),
    then one unrelated chat round; QAs for an aggregate, an extreme and an event question."""
    rounds, ocr = [], {}
    for i in range(12):
        rid, sid = f"S{1 + i // 6}:R{i % 6 + 1}", f"S{1 + i // 6}"
        text = f"My sleep score was {80 + i}, I slept 7h {10 + i}m, resting heart rate {50 + i % 5} bpm"
        images = ()
        if i in (4, 9):
            data = _png((20 * i, 120, 200))
            images = (ImageRef(f"{rid}:I1", caption="sleep app screenshot", data=data,
                               sha256=hashlib.sha256(data).hexdigest(), mime="image/png", width=40, height=30),)
            ocr[data] = f"Sleep score: {80 + i}\nResting heart rate: {50 + i % 5} bpm"
        rounds.append(Round(rid, sid, datetime(2026, 3, 1, 7, 30) + timedelta(days=i),
                            (Utterance("user", text), Utterance("assistant", "Noted, logged it.")), images, i % 6))
    chat = Round("S3:R1", "S3", datetime(2026, 3, 14, 18, 0),
                 (Utterance("user", "We played cards with Anna and Tom tonight, I won twice."),
                  Utterance("assistant", "Fun!")), (), 0)
    sessions = (Session("S1", date(2026, 3, 1), tuple(rounds[:6])), Session("S2", date(2026, 3, 7), tuple(rounds[6:])),
                Session("S3", date(2026, 3, 14), (chat,)))
    qas = (QA("q1", "What was my average sleep score?", "85.5", tuple(r.round_id for r in rounds), "aggregate",
              answer_kind="number", tolerance=0.1),
           QA("q2", "What was my highest resting heart rate?", "54 bpm", (), "extreme", answer_kind="number"),
           QA("q3", "Who did I play cards with?", "Anna and Tom", ("S3:R1",), "event"))
    return History("health.json", "memeye", sessions, qas), ocr


@pytest.fixture(scope="session")
def memory_path(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("mem") / "health.duckdb"
    history, ocr = health_history()
    deps = BuildDeps(HashEmbedder(), FakeImageEncoder(), FakeOCR(ocr), RuleExtractor(DEFAULT))
    with Store(path) as s:
        build(s, [history], deps, DEFAULT)
    return str(path)


@pytest.fixture(autouse=True)
def fake_models(monkeypatch):
    """The pages' models: the encoders the memory was built with (no MiniLM, no rapidocr)."""
    enc, img = HashEmbedder(), FakeImageEncoder()
    monkeypatch.setattr(resources, "text_encoder", lambda: enc)
    monkeypatch.setattr(resources, "image_encoder", lambda *a, **k: img)
    monkeypatch.setattr(resources, "ocr_engine", lambda: FakeOCR())
    monkeypatch.setattr(resources, "start_warmup", lambda: None)  # no real model loading in page tests


def page(name: str, path: str) -> AppTest:
    at = AppTest.from_file(str(PAGES / f"{name}.py"), default_timeout=60)
    at.session_state[state.STORE_PATH] = path
    return at


def texts(at: AppTest) -> str:
    """Everything the page wrote as markdown, captions, alerts and titles, in one string."""
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [t.value for t in at.title]
    parts += [x.value for kind in (at.info, at.success, at.warning, at.error) for x in kind]
    parts += [s.value for s in at.subheader]
    return "\n".join(str(p) for p in parts)


# ---------------------------------------------------------------------- schema induction
def test_schemas_page_replays_discovery_and_lists_candidates(memory_path):
    at = page("schemas", memory_path)
    at.run()
    assert not at.exception
    import re

    listed = [m.value for m in at.markdown if m.value.startswith("- **")]
    assert len(listed) == 1 and listed[0].startswith("- **sleep_log**") and "`sleep_score`" in listed[0]
    discovered_at = int(re.search(r"discovered at round (\d+)", listed[0]).group(1))
    # move the replay to the discovery round: the page announces it and the candidate is admitted
    at.slider(key="sch_round").set_value(discovered_at).run()
    assert not at.exception
    assert any("discovered" in s.value and "sleep_score" in s.value for s in at.success)
    cands = at.dataframe[-1].value
    admitted = cands[cands["status"] == "admitted"]
    assert len(admitted) == 1 and "sleep_score" in admitted["pattern"].iloc[0]
    # the rounds behind the admitted pattern are the rounds that reported it, up to that round
    assert admitted["rounds behind it"].iloc[0].split(", ")[0] == "S1:R1"
    assert int(admitted["support"].iloc[0]) == discovered_at
    # before the discovery round nothing is admitted
    at.slider(key="sch_round").set_value(discovered_at - 1).run()
    cands = at.dataframe[-1].value
    assert "admitted" not in set(cands["status"])


def test_schemas_page_what_if_thresholds_rerun_induction(memory_path):
    at = page("schemas", memory_path)
    at.run()
    # a support threshold above the number of rounds finds nothing
    at.slider(key="sch_ws").set_value(20).run()
    assert not at.exception
    assert "0 schema(s)" in texts(at)
    # a lower one finds the sleep schema again, earlier than the stored discovery
    at.slider(key="sch_ws").set_value(2).run()
    assert "1 schema(s)" in texts(at)
    at.checkbox(key="sch_use_alt").check().run()
    assert not at.exception
    assert "what-if" in texts(at)


# ---------------------------------------------------------------------- tables
def test_tables_page_shows_typed_columns_rows_and_provenance(memory_path):
    at = page("tables", memory_path)
    at.session_state[state.SELECTED_ROUND] = "S1:R5"  # a row whose round has an OCR'd screenshot
    at.run()
    assert not at.exception
    assert at.selectbox(key="tbl_name").value == "sleep_log"
    columns = at.dataframe[1].value
    units = dict(zip(columns["column"], columns["unit"]))
    assert units["resting_heart_rate"] == "bpm" and units["sleep_duration"] == "min"
    assert set(columns["type"]) == {"DOUBLE"}
    rows = at.dataframe[2].value
    assert len(rows) == 12 and "_obs" not in rows.columns
    assert list(rows["sleep_score"])[:3] == [80.0, 81.0, 82.0]
    # provenance: the round's dialogue with the extracted values marked, and the image's OCR text
    shown = texts(at)
    assert "Provenance of row S1:R5" in shown
    assert "<mark>84</mark>" in shown
    assert "Resting heart rate" in shown  # the OCR text of the screenshot
    assert len(at.get("image")) == 1
    assert at.selectbox(key="tbl_plot_sleep_log").options  # numeric columns offered for the plot


def test_tables_page_without_selection_says_so(memory_path):
    at = page("tables", memory_path)
    at.run()
    assert not at.exception
    assert "No row selected." in texts(at)


# ---------------------------------------------------------------------- hierarchy
def test_hierarchy_page_tree_node_details_and_search(memory_path):
    at = page("hierarchy", memory_path)
    at.run()
    assert not at.exception
    metrics = {m.label: int(m.value) for m in at.metric}
    assert metrics["Events"] == 13 and metrics["Episodes"] >= 1 and metrics["Topics"] >= 1
    assert len(at.get("plotly_chart")) == 1
    # the first topic is selected: its members and time span are shown
    assert at.session_state[state.SELECTED_NODE].startswith("topic") or "topic" in at.subheader[0].value.lower()
    assert "Time span:" in texts(at)
    # a search lands on the card-game round, lists it and opens it
    at.text_input(key="hier_query").input("played cards with Anna and Tom")
    at.selectbox(key="hier_scope").select("event")
    at.button[0].click().run()  # the form's submit button
    assert not at.exception
    hits = at.dataframe[0].value
    assert hits["level"].iloc[0] == "event"
    top = hits["node"].iloc[0]
    assert at.session_state[state.SELECTED_NODE] == top
    assert any("S3:R1" in e.label for e in at.expander)  # the event's round, with its dialogue
    assert "Anna and Tom" in texts(at)


def test_hierarchy_page_picking_a_member_opens_it(memory_path):
    at = page("hierarchy", memory_path)
    at.run()
    topic = at.session_state[state.SELECTED_NODE]
    member = at.selectbox(key=f"hier_member_{topic}")
    assert member.value is None
    member.select_index(0).run()
    assert not at.exception
    opened = at.session_state[state.SELECTED_NODE]
    assert opened != topic and at.selectbox(key="hier_node_pick").value == opened
    assert opened in at.subheader[-1].value or any(opened in s.value for s in at.subheader)


# ---------------------------------------------------------------------- query planner
def test_ask_page_steps_through_the_plan_to_the_answer(memory_path):
    at = page("ask", memory_path)
    at.run()
    assert not at.exception
    example = at.selectbox(key="ask_example")
    assert "What was my average sleep score?" in example.options
    example.select("What was my average sleep score?").run()
    assert at.text_input(key="ask_q").value == "What was my average sleep score?"
    at.button(key="ask_plan").click().run()
    assert not at.exception
    # the planning context lists the sleep table with its three scores
    ctx = at.dataframe[0].value
    row = ctx[ctx["name"] == "sleep_log"].iloc[0]
    assert row["selected"] and 0 <= row["cosine"] <= 1 and row["combined h"] > 0
    assert len(at.get("graphviz_chart")) == 1
    assert "Next: step 1" in texts(at)
    budget0 = at.metric[0].value
    while not at.button(key="ask_step").disabled:
        at.button(key="ask_step").click().run()
        assert not at.exception
    assert "Step 1 · Compute" in texts(at)
    assert at.metric[0].value != budget0  # the computed result used budget
    # the answer is the mean of 80..91, linked to its source rounds
    assert any("85.5" in s.value for s in at.success)
    assert any("S1:R1" in e.label for e in at.expander)


def test_ask_page_asks_with_a_picture_by_its_caption(memory_path):
    at = page("ask", memory_path)
    at.run()
    at.text_input(key="ask_q").input("What is shown in the picture?").run()
    at.text_input(key="ask_image_caption").input("a sleep tracker screen with a score").run()
    at.button(key="ask_finish").click().run()
    assert not at.exception
    shown = texts(at)
    assert "With its own picture, searched as: “a sleep tracker screen with a score”" in shown
    trace = at.session_state[state.LAST_TRACE]
    assert trace["image_caption"] == "a sleep tracker screen with a score"
    assert any("question's image" in st_["summary"] for st_ in trace["steps"])  # searched for what it shows


def test_ask_page_compares_ablations_and_rejects_empty_questions(memory_path):
    at = page("ask", memory_path)
    at.run()
    assert at.button(key="ask_plan").disabled  # nothing to plan yet
    at.text_input(key="ask_q").input("What was my average sleep score?").run()
    at.button(key="ask_finish").click().run()
    assert not at.exception
    assert any("85.5" in s.value for s in at.success)
    assert any(o.startswith("no-utility (") for o in at.multiselect(key="ask_compare_with").options)
    at.multiselect(key="ask_compare_with").set_value(["rag", "no-analytic"])
    at.button(key="ask_compare").click().run()
    assert not at.exception
    shown = texts(at)
    for name in ("**full**", "**rag**", "**no-analytic**"):
        assert name in shown
    assert "SemanticMatch" in shown  # the rag baseline retrieves instead of computing


@pytest.fixture()
def fresh_memory(tmp_path) -> str:
    """A memory of its own (ratings write to it, so the shared one stays unrated)."""
    path = tmp_path / "rated.duckdb"
    history, ocr = health_history()
    with Store(path) as s:
        build(s, [history], BuildDeps(HashEmbedder(), FakeImageEncoder(), FakeOCR(ocr), RuleExtractor(DEFAULT)),
              DEFAULT)
    return str(path)


def _ask(at: AppTest, question: str) -> None:
    at.run()
    at.text_input(key="ask_q").input(question).run()
    at.button(key="ask_finish").click().run()
    assert not at.exception


def _attribution_bars(at: AppTest):
    import json

    for chart in at.get("plotly_chart"):
        for t in json.loads(chart.proto.spec)["data"]:
            if t.get("name") == "Shapley value":
                return t
    return None


def _frame_with(at: AppTest, column: str):
    return next(d.value for d in at.dataframe if column in d.value.columns)


def test_ask_page_explains_the_answer_with_one_bar_per_evidence_unit(memory_path):
    at = page("ask", memory_path)
    _ask(at, "Who did I play cards with?")
    assert any("Anna" in s.value for s in at.success)
    assert _attribution_bars(at) is None  # nothing computed before the button
    at.button(key="ask_why").click().run()
    assert not at.exception
    bars = _attribution_bars(at)
    trace = at.session_state[state.LAST_TRACE]
    units = list(dict.fromkeys((u["kind"], u["unit_id"]) for s in trace["steps"] for u in s["units"]))
    assert len(units) >= 2
    assert bars["y"] == [f"{k} · {u}" for k, u in units]  # one bar per unit, in evidence order
    values = dict(zip(bars["y"], bars["x"]))
    # only the card-game round says who played: its event carries the answer, the sleep reports nothing
    cards = next(label for label in values if "S3:R1" in label)
    assert values[cards] == pytest.approx(1.0)
    assert sum(values.values()) == pytest.approx(1.0)  # v(all) - v(none): the answer vs "Not mentioned"
    shown = texts(at)
    assert "exact Shapley values" in shown and "answerer call(s)" in shown
    assert "v(all evidence) = 1, v(no evidence) = 0" in shown
    # every bar links to its round: open one that is not among the answer's evidence rounds
    other = next(i for i, (k, u) in enumerate(units) if "S3:R1" not in u)
    pick = at.selectbox(key="ask_attr_unit")
    assert len(pick.options) == len(units)  # every unit here has a source round
    assert pick.options[other].startswith(f"{units[other][0]} · {units[other][1]} (")
    before = {e.label.split(" · ")[0] for e in at.expander}
    pick.select_index(other).run()
    assert not at.exception
    opened = {e.label.split(" · ")[0] for e in at.expander} - before
    unit = next(u for s in trace["steps"] for u in s["units"] if u["unit_id"] == units[other][1])
    assert opened == {unit["rounds"][0]}
    # the result is cached for this trace: a rerun shows the same bars without the button
    at.run()
    assert _attribution_bars(at)["x"] == bars["x"]


def test_ask_page_rating_an_answer_updates_unit_utility(fresh_memory):
    at = page("ask", fresh_memory)
    _ask(at, "Who did I play cards with?")
    at.button(key="ask_rate_right").click().run()  # rating attributes the answer first
    assert not at.exception
    assert any(s.value.startswith("Rated right") for s in at.success)
    assert at.button(key="ask_rate_right").disabled and at.button(key="ask_rate_wrong").disabled
    assert _attribution_bars(at) is not None
    with Store(fresh_memory) as s:
        rows = dict(s.con.execute("SELECT unit_key, sum FROM unit_utility WHERE count = 1").fetchall())
    cards = [k for k in rows if "S3:R1" in k]
    assert len(cards) == 1 and rows[cards[0]] == pytest.approx(1.0)  # +Δ for the unit behind a right answer
    # the retrieved units now show their learned utility
    at.run()
    units = _frame_with(at, "U (learned)")
    u = dict(zip(units["node_id" if "node_id" in units.columns else "unit"], units["U (learned)"]))
    assert u[cards[0]] == pytest.approx(1.0)


def test_ask_page_shows_why_a_rating_was_refused(memory_path, monkeypatch):
    from core.errors import InputError
    from core.utility import UtilityStore

    def refuse(self, attribution, correct, rating_id=None):
        raise InputError("utility", "", "the memory is open read-only; utilities cannot be updated")

    monkeypatch.setattr(UtilityStore, "rate", refuse)
    at = page("ask", memory_path)
    _ask(at, "Who did I play cards with?")
    at.button(key="ask_rate_wrong").click().run()
    assert not at.exception
    assert any("read-only" in e.value for e in at.error)
    assert not any(s.value.startswith("Rated") for s in at.success)
    assert not at.button(key="ask_rate_wrong").disabled  # nothing was recorded: it can be tried again


def test_ask_page_tokens_and_time_per_step_and_the_utility_toggle(memory_path):
    at = page("ask", memory_path)
    _ask(at, "What was my average sleep score?")
    usage = _frame_with(at, "completion tokens").set_index("stage")
    trace = at.session_state[state.LAST_TRACE]
    assert [i for i in usage.index if i.startswith("step ")] == \
        [f"step {s['index'] + 1} · {s['tool']}" for s in trace["steps"]]
    assert usage.loc["total", "ms"] == pytest.approx(dict(trace["ms"])["total"], abs=0.1)
    assert usage.loc["total", "prompt tokens"] == 0  # rules: no language model, no tokens
    assert any("free (no language model)" in e.label for e in at.expander)
    # the toggle: off ranks by similarity alone (α = 1), on restores the learned utility
    assert at.toggle(key="ask_utility").value is True
    at.toggle(key="ask_utility").set_value(False).run()
    assert not at.exception
    assert at.session_state[state.CONFIG_OVERRIDES]["utility_alpha"] == 1.0
    at.toggle(key="ask_utility").set_value(True).run()
    assert "utility_alpha" not in at.session_state[state.CONFIG_OVERRIDES]
    assert any(o.startswith("no-utility — ") for o in at.selectbox(key="ask_ablation").options)


# ---------------------------------------------------------------------- local language model
def _sidebar_app():
    from ui.sidebar import render_sidebar

    render_sidebar()


def test_sidebar_rejects_a_file_that_is_not_gguf(tmp_path):
    fake = tmp_path / "model.gguf"
    fake.write_bytes(b"NOTGGUF" + bytes(64))
    at = AppTest.from_function(_sidebar_app, default_timeout=30)
    at.session_state[state.BACKEND] = "local"
    at.run()
    assert not at.exception
    at.text_input(key="sb_gguf").input(str(fake)).run()
    assert not at.exception
    assert at.session_state[state.MODEL_PATH] == str(fake)
    assert any("model.gguf is not a GGUF file" in e.value for e in at.sidebar.error)
    at.text_input(key="sb_gguf").input(str(tmp_path / "missing.gguf")).run()
    assert any("no such file" in e.value for e in at.sidebar.error)


def test_ask_page_with_a_bad_local_model_says_so_and_answers_with_rules(memory_path, tmp_path):
    fake = tmp_path / "model.gguf"
    fake.write_bytes(b"PK\x03\x04 not a model")
    at = page("ask", memory_path)
    at.session_state[state.BACKEND] = "local"
    at.session_state[state.MODEL_PATH] = str(fake)
    _ask(at, "What was my average sleep score?")
    assert any("not a GGUF file" in e.value for e in at.error), [e.value for e in at.error]
    assert any("85.5" in s.value for s in at.success), ([s.value for s in at.success], [e.value for e in at.error])
    assert at.session_state[state.LAST_TRACE]["backend"] == "rules"


@pytest.mark.slow
@pytest.mark.llm
@pytest.mark.timeout(900)
def test_ask_page_answers_with_the_real_local_gguf_model(memory_path):
    """The sidebar's GGUF path drives the engine: llama.cpp in-process, tokens per step, free cost."""
    from fetch_test_model import ModelPartsMissing, ensure_model
    from ui import engine

    try:
        gguf = str(ensure_model())
    except ModelPartsMissing as e:
        pytest.skip(f"local GGUF test model unavailable: {e}")
    at = page("ask", memory_path)
    at.session_state[state.BACKEND] = "local"
    at.session_state[state.MODEL_PATH] = gguf
    at.default_timeout = 900
    try:
        _ask(at, "What was my average sleep score?")
        trace = at.session_state[state.LAST_TRACE]
        assert trace["backend"].startswith("llm:local/")
        assert trace["tokens"]["prompt"] > 0 and trace["tokens"]["completion"] > 0
        usage = _frame_with(at, "completion tokens").set_index("stage")
        assert usage.loc["total", "prompt tokens"] == trace["tokens"]["prompt"]
        assert any("free (local model)" in e.label for e in at.expander)
        assert not at.error  # the model started
    finally:
        engine.local_llm.clear()  # stop the server


# ---------------------------------------------------------------------- evaluate
def test_evaluate_page_runs_the_qa_set_and_drills_into_a_trace(memory_path):
    at = page("evaluate", memory_path)
    at.run()
    assert not at.exception
    at.multiselect(key="ev_ablations").set_value(["full", "rag"])
    at.button(key="ev_run").click().run()
    assert not at.exception
    summary = at.dataframe[0].value
    assert list(summary["ablation"]) == ["full", "rag"] and list(summary["n"]) == [3, 3]
    per_q = at.dataframe[2].value
    full = per_q[per_q["ablation"] == "full"].set_index("question")
    assert full.loc["What was my average sleep score?", "score"] == 1.0  # 85.5 computed over the table
    assert full.loc["What was my highest resting heart rate?", "score"] == 1.0
    # accuracy of the full system is at least the retrieval-only baseline's on this analytic memory
    acc = dict(zip(summary["ablation"], summary["accuracy"]))
    assert acc["full"] >= acc["rag"]
    assert len(at.get("plotly_chart")) == 1
    at.selectbox(key="ev_pick").select(0).run()
    assert not at.exception
    assert "gold: `85.5`" in texts(at)
    assert len(at.get("graphviz_chart")) == 1


def test_evaluate_page_opens_a_sweep_table_by_its_folder(memory_path, tmp_path):
    import json

    from core.evaluation.sweep import Variant, write_table

    variants = [Variant("full__theta_s-3", "full", (("theta_s", 3),), DEFAULT.with_(theta_s=3)),
                Variant("rag__theta_s-3", "rag", (("theta_s", 3),), DEFAULT.with_(theta_s=3))]
    write_table(tmp_path, variants, [
        {"files": [{"name": "trip", "status": "done", "n": 4, "accuracy": 0.75}], "n": 4, "accuracy": 0.75},
        {"files": [{"name": "trip", "status": "done", "n": 4, "accuracy": 0.25}], "n": 4, "accuracy": 0.25}])
    at = page("evaluate", memory_path)
    at.run()
    at.text_input(key="sw_path").input(str(tmp_path)).run()
    assert not at.exception
    (hm,) = json.loads(at.get("plotly_chart")[0].proto.spec)["data"]
    assert hm["x"] == ["full__theta_s-3", "rag__theta_s-3"] and hm["y"] == ["(all)", "trip"]
    assert hm["z"] == [[0.75, 0.25], [0.75, 0.25]]
    at.selectbox(key="sw_metric").select("n").run()
    assert json.loads(at.get("plotly_chart")[0].proto.spec)["data"][0]["z"] == [[4, 4], [4, 4]]
    at.text_input(key="sw_path").input(str(tmp_path / "nothing.csv")).run()
    assert "nothing.csv: cannot read it" in texts(at)


def test_evaluate_page_scores_like_the_cli_runner_per_question_type(memory_path):
    """The page's per-type accuracy is what core.evaluation.runner's score_qa says about its predictions."""
    from core.evaluation.runner import score_qa

    at = page("evaluate", memory_path)
    at.run()
    at.button(key="ev_run").click().run()  # the default: the full system on all 3 questions
    assert not at.exception
    by_type = at.dataframe[1].value.set_index("type")
    assert set(by_type.index) == {"aggregate", "extreme", "event"}
    assert list(by_type["n"]) == [1, 1, 1]
    per_q = at.dataframe[2].value.set_index("question")
    history, _ = health_history()
    for qa in history.qas:
        pred = per_q.loc[qa.question, "prediction"]
        verdict = score_qa(qa, pred, "memeye")
        assert per_q.loc[qa.question, "score"] == pytest.approx(round(verdict.score, 3))
        assert by_type.loc[qa.qtype, "accuracy"] == (1.0 if verdict.correct else 0.0)
    # the two analytic questions have one right answer each (the mean of 80..91, the max of 50..54)
    assert by_type.loc["aggregate", "accuracy"] == 1.0 and by_type.loc["extreme", "accuracy"] == 1.0
    overall = at.dataframe[0].value.iloc[0]
    assert overall["accuracy"] == pytest.approx(by_type["accuracy"].mean(), abs=1e-4)
    assert overall["cost"].startswith("free")  # the rule-based backend spends no tokens


def test_evaluate_page_shows_benchmark_metrics_refusals_and_the_flat_baseline(memory_path):
    """Beside the engine's scorer: Mem-Gallery F1/EM/BLEU-1 per type (as core.evaluation.benchmarks
    computes them), false refusals per type, and evidence recall against the flat top-10 baseline."""
    from core.evaluation.benchmarks import mem_gallery_scores

    at = page("evaluate", memory_path)
    at.run()
    at.button(key="ev_run").click().run()
    assert not at.exception
    overall = at.dataframe[0].value.iloc[0]
    for col in ("benchmark F1", "EM", "BLEU-1", "false refusals", "right refusals", "evidence recall",
                "flat top-10 recall"):
        assert col in overall.index
    assert overall["flat top-10 recall"] is not None and 0.0 <= overall["flat top-10 recall"] <= 1.0
    by_type = at.dataframe[1].value.set_index("type")
    for col in ("benchmark F1", "EM", "BLEU-1", "false refusals", "flat top-10 recall"):
        assert col in by_type.columns
    per_q = at.dataframe[2].value.set_index("question")
    history, _ = health_history()
    for qa in history.qas:
        want = mem_gallery_scores(per_q.loc[qa.question, "prediction"], qa.answer)
        assert by_type.loc[qa.qtype, "benchmark F1"] == pytest.approx(want["f1"], abs=1e-4)
        assert by_type.loc[qa.qtype, "EM"] == pytest.approx(want["em"], abs=1e-4)
        assert by_type.loc[qa.qtype, "BLEU-1"] == pytest.approx(want["bleu1"], abs=1e-4)
    assert "Flat top-10 recall" in texts(at)


# ---------------------------------------------------------------------- upload & build
def memeye_upload(n: int = 10, images: int = 2, start_session: int = 1) -> tuple[bytes, dict[str, bytes]]:
    """A MemEye JSON of n sleep-report rounds (two per session) and its image files by relative path.

    Round i says "My sleep score was 80+i, ..."; the first `images` rounds attach a screenshot."""
    import json

    files: dict[str, bytes] = {}
    sessions = []
    for s in range(n // 2):
        sid = f"S{start_session + s}"
        day = date(2026, 4, 1) + timedelta(days=2 * (start_session - 1) + 2 * s)
        dialogues = []
        for j in range(2):
            i = 2 * s + j
            turn = {"round": f"{sid}:R{j + 1}", "time": f"{day.isoformat()}T0{7 + j}:30:00",
                    "user": f"My sleep score was {80 + i}, I slept 7h {10 + i}m, resting heart rate {50 + i % 5} bpm",
                    "assistant": "Noted."}
            if i < images:
                name = f"images/{sid}_R{j + 1}.png"
                files[name] = _png((30 * i + 20, 90, 160))
                turn.update({"image_id": [f"{sid}:R{j + 1}:I1"], "input_image": [name],
                             "image_caption": ["sleep tracker screenshot"]})
            dialogues.append(turn)
        sessions.append({"session_id": sid, "date": day.isoformat(), "dialogues": dialogues})
    doc = {"character_profile": {"name": "Test"}, "multi_session_dialogues": sessions,
           "human-annotated QAs": [{"question": "What was my average sleep score?",
                                    "answer": f"{80 + (n - 1) / 2:g}", "clue": [], "query_type": "aggregate"}]}
    return json.dumps(doc).encode(), files


def test_upload_page_validates_then_builds_and_continues_incrementally(tmp_path):
    path = str(tmp_path / "up.duckdb")
    doc, images = memeye_upload(8, images=2)
    at = page("upload", path)
    at.run()
    assert not at.exception
    at.file_uploader[0].set_value([("health.json", doc, "application/json")]
                                  + [(name, data, "image/png") for name, data in images.items()]).run()
    assert not at.exception
    report = at.dataframe[0].value
    assert report.loc[0, "file"] == "health.json" and report.loc[0, "format"] == "memeye"
    assert (report.loc[0, "rounds"], report.loc[0, "images"], report.loc[0, "QAs"]) == (8, "2/2", 1)
    assert report.loc[0, "status"] == "ok"
    at.button(key="upl_build").click().run()
    assert not at.exception
    assert any("Built: 8 new round(s)" in s.value for s in at.success)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Schemas"] == "1" and metrics["Images"] == "2"
    with Store(path) as s:
        assert s.summary()["images_ocr"] == 2
    # a second upload with new sessions continues the memory
    more, _ = memeye_upload(4, images=0, start_session=5)
    at.file_uploader[0].set_value([("more.json", more, "application/json")]).run()
    at.button(key="upl_build").click().run()
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert (metrics["New rounds"], metrics["Rounds"]) == ("4", "12")


class MeteredLLM:
    """A language model that answers every call with no observations and meters 100 + 20 tokens a call."""

    def __init__(self, model: str = "gpt-4o-mini"):
        from core.llm import TokenMeter

        self.model, self.vision, self.meter = model, False, TokenMeter()

    def complete_json(self, task, messages, schema, *, prompt_version="1", images=()):
        from core.llm import CallRecord
        from core.protocols import LLMResult

        self.meter.record(CallRecord(task, self.model, 100, 20))
        return LLMResult(data={"observations": []}, model=self.model, prompt_tokens=100, completion_tokens=20)


def test_upload_page_totals_the_tokens_and_cost_of_a_build(tmp_path, monkeypatch):
    import re

    from core.llm import estimate_cost_usd
    from ui import engine

    llm = MeteredLLM()
    monkeypatch.setattr(engine, "llm_for", lambda store: llm)
    doc, _ = memeye_upload(4, images=0)
    at = page("upload", str(tmp_path / "metered.duckdb"))
    at.run()
    at.file_uploader[0].set_value([("h.json", doc, "application/json")]).run()
    at.button(key="upl_build").click().run()
    assert not at.exception
    calls = len(llm.meter.records)
    # by default the model describes episodes and topics at build time (the rules extract: Config.llm_steps)
    assert calls >= 1 and {r.task for r in llm.meter.records} <= {"episode_description", "topic_description"}
    line = next(c.value for c in at.caption if c.value.startswith("Language model `gpt-4o-mini`"))
    assert f"{calls} call(s)" in line
    assert f"{100 * calls} prompt + {20 * calls} completion token(s)" in line
    assert re.search(r"estimated cost \$([0-9.]+)", line).group(1) == \
        f"{estimate_cost_usd('gpt-4o-mini', 100 * calls, 20 * calls):.4f}"


def test_upload_page_says_a_rules_build_spends_no_tokens(tmp_path):
    doc, _ = memeye_upload(2, images=0)
    at = page("upload", str(tmp_path / "rules.duckdb"))
    at.run()
    at.file_uploader[0].set_value([("h.json", doc, "application/json")]).run()
    at.button(key="upl_build").click().run()
    assert not at.exception
    assert any(c.value.startswith("No language model (rules): 0 tokens") for c in at.caption)


def test_upload_page_shows_validation_errors_instead_of_a_traceback(tmp_path):
    doc, images = memeye_upload(4, images=1)
    broken = doc.replace(b'"2026-04-01T07:30:00"', b'"not a time"')
    at = page("upload", str(tmp_path / "bad.duckdb"))
    at.run()
    at.file_uploader[0].set_value([("good.json", doc, "application/json"), ("broken.json", broken, "application/json"),
                                   ("junk.json", b"{not json", "application/json")]
                                  + [(n, d, "image/png") for n, d in images.items()]).run()
    assert not at.exception
    report = at.dataframe[0].value.set_index("file")
    assert report.loc["good.json", "status"] == "ok"
    assert report.loc["broken.json", "status"] == "error"
    assert "multi_session_dialogues[0].dialogues[0].time" in report.loc["broken.json", "error"]
    errors = [e.value for e in at.error]
    assert any("broken.json" in e and "time" in e for e in errors)
    assert any("junk.json" in e for e in errors)
    assert "Only the files without errors will be built." in texts(at)
    assert "4 round(s)" in at.button(key="upl_build").label  # only the good file is offered


def test_upload_page_limits_are_visible_and_change_the_config(tmp_path):
    at = page("upload", str(tmp_path / "x.duckdb"))
    at.run()
    at.number_input(key="upl_max_rounds").set_value(3).run()
    assert not at.exception
    assert at.session_state[state.CONFIG_OVERRIDES]["max_rounds_per_upload"] == 3
    doc, _ = memeye_upload(4, images=0)
    at.file_uploader[0].set_value([("h.json", doc, "application/json")]).run()
    assert not at.exception
    assert any("max_rounds_per_upload" in e.value for e in at.error)


def test_upload_page_processes_pending_rounds(tmp_path):
    path = tmp_path / "pending.duckdb"
    history, _ = health_history()
    with Store(path) as s:
        s.ingest(history)  # stored, not processed
    at = page("upload", str(path))
    at.run()
    assert not at.exception
    at.button(key="upl_pending").click().run()
    assert not at.exception
    assert any("13 rounds" in s.value for s in at.success)
    with Store(path) as s:
        assert s.summary()["rounds_processed"] == 13
