"""Real browser journey: `streamlit run app.py` with the real models (MiniLM, rapidocr) in Debian chromium.

Upload a small MemEye history with screenshots -> the schema page shows the discovered schema -> the tables
page shows its rows and, for a selected row, its provenance -> the query planner steps through the plan of
an analytic question to the right answer. Screenshots of every page go to /tmp/adamm-journey/.
"""
from __future__ import annotations

import io
import json
import re
from datetime import date, timedelta
from pathlib import Path

import pytest
from playwright.sync_api import expect
from PIL import Image, ImageDraw, ImageFont

from browser import chromium_page, streamlit_server

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(600)]

SHOTS = Path("/tmp/adamm-journey")
N_ROUNDS = 10
MEAN_SCORE = sum(80 + i for i in range(N_ROUNDS)) / N_ROUNDS  # 84.5


def _screenshot_png(lines: list[str]) -> bytes:
    """A small phone-style screenshot with readable text (what rapidocr reads)."""
    img = Image.new("RGB", (360, 60 + 44 * len(lines)), (250, 250, 252))
    draw = ImageDraw.Draw(img)
    font = ImageFont.load_default(size=26)
    for k, line in enumerate(lines):
        draw.text((20, 30 + 44 * k), line, fill=(20, 20, 20), font=font)
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def journey_files() -> list[dict]:
    """The upload: one MemEye JSON (10 sleep rounds over 5 sessions, 2 screenshots) and the image files."""
    files, sessions = [], []
    for s in range(N_ROUNDS // 2):
        sid, day = f"S{s + 1}", date(2026, 4, 1) + timedelta(days=2 * s)
        dialogues = []
        for j in range(2):
            i = 2 * s + j
            turn = {"round": f"{sid}:R{j + 1}", "time": f"{day.isoformat()}T0{7 + j}:30:00",
                    "user": f"My sleep score was {80 + i}, I slept 7h {10 + i}m, resting heart rate {50 + i % 5} bpm",
                    "assistant": "Noted."}
            if i in (0, 5):
                name = f"{sid}_R{j + 1}.png"
                files.append({"name": name, "mimeType": "image/png",
                              "buffer": _screenshot_png([f"Sleep score: {80 + i}", f"Resting HR: {50 + i % 5} bpm"])})
                turn.update({"image_id": [f"{sid}:R{j + 1}:I1"], "input_image": [f"images/{name}"],
                             "image_caption": ["sleep tracker screenshot"]})
            dialogues.append(turn)
        sessions.append({"session_id": sid, "date": day.isoformat(), "dialogues": dialogues})
    doc = {"character_profile": {"name": "Journey"}, "multi_session_dialogues": sessions,
           "human-annotated QAs": [{"question": "What was my average sleep score?", "answer": f"{MEAN_SCORE:g}",
                                    "clue": [], "query_type": "aggregate"}]}
    return [{"name": "journey.json", "mimeType": "application/json", "buffer": json.dumps(doc).encode()}] + files


def _nav(page, title: str) -> None:
    page.get_by_test_id("stSidebarNav").get_by_text(title, exact=True).click()


def test_upload_schema_tables_and_stepwise_answer_in_chromium(tmp_path):
    SHOTS.mkdir(exist_ok=True)
    store = tmp_path / "journey.duckdb"
    with streamlit_server(str(store)) as url, chromium_page() as page:
        page.set_default_timeout(120_000)
        page.goto(url)
        _nav(page, "Upload & build")
        page.get_by_text("Upload & build").first.wait_for()

        # ---- upload: validation report, then the build with its progress
        page.locator("input[type=file]").set_input_files(journey_files())
        build = page.get_by_role("button", name=re.compile(r"Build 1 history\(ies\), 10 round\(s\)"))
        build.wait_for()
        report = page.get_by_test_id("stDataFrame").first
        report.wait_for()
        page.screenshot(path=str(SHOTS / "1-validated.png"), full_page=True)
        build.click()
        page.get_by_text(re.compile(r"Built: 10 new round\(s\)")).wait_for(timeout=420_000)
        page.screenshot(path=str(SHOTS / "2-built.png"), full_page=True)
        schemas_metric = page.get_by_test_id("stMetric").filter(has_text="Schemas").first
        expect(schemas_metric).to_have_text(re.compile(r"Schemas\s*1$"))  # polls: the page streams in

        # ---- schema induction: the discovered schema and the replay charts
        _nav(page, "Schema induction")
        page.get_by_text("Schemas in this memory").wait_for()
        page.get_by_test_id("stPlotlyChart").first.wait_for()
        page.get_by_text(re.compile(r"sleep_log: .*sleep_score.* discovered at round \d+")).first.wait_for()
        page.screenshot(path=str(SHOTS / "3-schemas.png"), full_page=True)

        # ---- tables: the rows, then a selected row's provenance
        _nav(page, "Tables")
        page.get_by_text("10 row(s).", exact=False).wait_for()
        grid = page.get_by_test_id("stDataFrame").nth(2)
        grid.wait_for()
        grid.scroll_into_view_if_needed()
        box = grid.bounding_box()
        # the first data row's selection cell: left edge of the grid, one header row down
        page.mouse.click(box["x"] + 12, box["y"] + 35 + 17)
        page.get_by_text(re.compile(r"Provenance of row S1:R1")).wait_for()
        page.locator("mark").filter(has_text="80").first.wait_for()
        page.get_by_text("OCR text", exact=False).first.wait_for()
        page.screenshot(path=str(SHOTS / "4-tables.png"), full_page=True)

        # ---- query planner: plan, step, answer
        _nav(page, "Query planner")
        box_q = page.get_by_label("Question", exact=True)
        box_q.fill("What was my average sleep score?")
        box_q.press("Enter")
        page.get_by_role("button", name="Plan").click()
        page.get_by_text(re.compile(r"Next: step 1")).wait_for()
        page.screenshot(path=str(SHOTS / "5-planned.png"), full_page=True)
        step = page.get_by_role("button", name="Step", exact=True)
        for i in range(1, 4):
            if step.is_disabled():
                break
            step.click()
            page.get_by_text(re.compile(rf"Step {i} · ")).first.wait_for()  # the step's result is shown
        answer = page.get_by_test_id("stAlertContentSuccess").filter(has_text=f"{MEAN_SCORE:g}").first
        answer.wait_for()
        page.get_by_text(re.compile(r"Step 1 · Compute")).wait_for()
        page.screenshot(path=str(SHOTS / "6-answer.png"), full_page=True)
        assert f"{MEAN_SCORE:g}" in answer.inner_text()

        # ---- why this answer: one Shapley bar per evidence unit, with the exactness and the answerer calls
        page.get_by_role("button", name="Why this answer?").click()
        page.get_by_text(re.compile(r"exact Shapley values over all subsets · \d+ answerer call")).wait_for()
        chart = page.get_by_test_id("stPlotlyChart").last
        chart.wait_for()
        chart.scroll_into_view_if_needed()
        assert "Shapley value of each evidence unit" in chart.inner_text()
        page.screenshot(path=str(SHOTS / "7-attribution.png"), full_page=True)

        # ---- debug the plan: a filter added to the Compute step, re-run, both runs side by side, kept as a case
        page.get_by_role("heading", name="Debug this plan").scroll_into_view_if_needed()
        page.get_by_role("button", name="Add a filter").click()
        _choose(page, "Filter 1 column", "sleep_score")
        _choose(page, "op", ">=")
        value = page.get_by_label(re.compile(r"^value \(between"))
        value.fill("85")
        value.press("Enter")
        page.get_by_role("button", name="Re-run", exact=True).click()
        verdict = page.get_by_test_id("stAlertContentInfo").filter(has_text="The answer changed").first
        verdict.wait_for()
        filtered = sum(80 + i for i in range(N_ROUNDS) if 80 + i >= 85) / sum(80 + i >= 85 for i in range(N_ROUNDS))
        assert f"{filtered:g}" in verdict.inner_text() and "worse" in verdict.inner_text()
        page.get_by_text("Original", exact=True).wait_for()
        page.get_by_text("(changed)", exact=False).first.wait_for()  # the edited argument is highlighted
        page.screenshot(path=str(SHOTS / "8-plan-edited.png"), full_page=True)
        page.get_by_role("button", name="Save as a case").click()
        page.get_by_text(re.compile(r"Saved as case 1")).wait_for()

        # ---- evaluate: the saved case is listed and replayed
        _nav(page, "Evaluate")
        page.get_by_role("heading", name="Saved plan cases").wait_for()
        page.get_by_role("button", name=re.compile(r"Replay the 1 case")).click()
        page.get_by_text(re.compile(r"1 case\(s\) replayed: .*fails: 1")).wait_for()
        page.screenshot(path=str(SHOTS / "9-cases.png"), full_page=True)


def _choose(page, label: str, option: str) -> None:
    """Pick `option` in the selectbox labelled `label` (the last one with that label on the page)."""
    box = page.get_by_role("combobox", name=label, exact=True).last
    box.scroll_into_view_if_needed()
    box.click()
    page.get_by_role("option", name=option, exact=True).click()
    expect(box).to_have_value(option)
