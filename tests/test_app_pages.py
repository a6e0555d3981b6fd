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

PAGES = ROOT / "pages"


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


def test_ask_page_compares_ablations_and_rejects_empty_questions(memory_path):
    at = page("ask", memory_path)
    at.run()
    assert at.button(key="ask_plan").disabled  # nothing to plan yet
    at.text_input(key="ask_q").input("What was my average sleep score?").run()
    at.button(key="ask_finish").click().run()
    assert not at.exception
    assert any("85.5" in s.value for s in at.success)
    at.multiselect(key="ask_compare_with").set_value(["rag", "no-analytic"])
    at.button(key="ask_compare").click().run()
    assert not at.exception
    shown = texts(at)
    for name in ("**full**", "**rag**", "**no-analytic**"):
        assert name in shown
    assert "SemanticMatch" in shown  # the rag baseline retrieves instead of computing


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
    per_q = at.dataframe[1].value
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
