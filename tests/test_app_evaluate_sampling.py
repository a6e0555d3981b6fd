"""The Evaluate page's limited run samples across question types (issue: the first 50 covered 8 of 16)."""
from __future__ import annotations

from dataclasses import replace

from conftest import FakeImageEncoder, FakeOCR, HashEmbedder
from test_app_pages import fake_models, health_history, page, texts  # noqa: F401  (autouse fixture)

from core.build import BuildDeps, build
from core.config import DEFAULT
from core.extract import RuleExtractor
from core.model import QA
from core.store import Store


def test_a_limited_run_answers_every_type_first(tmp_path):
    history, ocr = health_history()
    # four questions of one type first, then one of another: the first two would be one type only
    qas = tuple(QA(f"a{i}", f"What was my sleep score on March {1 + i}?", str(80 + i), (), "lookup",
                   answer_kind="number") for i in range(4))
    qas += (QA("e1", "What was my highest resting heart rate?", "54 bpm", (), "extreme", answer_kind="number"),)
    history = replace(history, qas=qas)
    path = tmp_path / "m.duckdb"
    with Store(path) as s:
        build(s, [history], BuildDeps(HashEmbedder(), FakeImageEncoder(), FakeOCR(ocr), RuleExtractor(DEFAULT)),
              DEFAULT)
    at = page("evaluate", str(path))
    at.run()
    assert not at.exception
    at.number_input(key="ev_limit").set_value(2).run()
    assert "2 of them sampled across all 2 type(s)" in texts(at)
    at.button(key="ev_run").click().run()
    assert not at.exception
    per_q = at.dataframe[2].value
    assert sorted(per_q["question"]) == ["What was my highest resting heart rate?",
                                         "What was my sleep score on March 1?"]
