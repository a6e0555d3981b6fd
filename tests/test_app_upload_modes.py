"""The upload page's retrieval-memory setting reaches the build's Config."""
from __future__ import annotations

from test_app_pages import fake_models, memeye_upload, page  # noqa: F401  (fixture)

from core.config import DEFAULT
from ui import state


def test_upload_page_chooses_the_hierarchy_comparison_mode_for_the_build(tmp_path):
    path = str(tmp_path / "modes.duckdb")
    at = page("upload", path)
    at.run()
    assert not at.exception
    radio = at.radio(key="upl_hier_compare")
    assert radio.value == DEFAULT.hierarchy_compare == "description"
    radio.set_value("centroid").run()
    assert not at.exception
    assert at.session_state[state.CONFIG_OVERRIDES]["hierarchy_compare"] == "centroid"
    doc, _ = memeye_upload(6, images=0)
    at.file_uploader[0].set_value([("h.json", doc, "application/json")]).run()
    at.button(key="upl_build").click().run()
    assert not at.exception
    assert any("Built: 6 new round(s)" in s.value for s in at.success)


def test_a_build_report_totals_the_calls_and_tokens_of_its_model(tmp_path):
    from conftest import FakeImageEncoder, FakeOCR, HashEmbedder
    from test_app_pages import MeteredLLM, health_history

    from core.build import BuildDeps, build
    from core.extract import LLMExtractor, RuleExtractor
    from core.store import Store

    llm = MeteredLLM()
    history, ocr = health_history()
    with Store(tmp_path / "m.duckdb") as store:
        deps = BuildDeps(HashEmbedder(), FakeImageEncoder(), FakeOCR(ocr),
                         LLMExtractor(llm, RuleExtractor(DEFAULT)), llm=llm)
        first = build(store, [history], deps, DEFAULT)
        assert first.llm_calls == len(llm.meter.records) >= first.rounds_added
        assert first.llm_tokens == 120 * first.llm_calls  # MeteredLLM spends 100 + 20 per call
        again = build(store, [history], deps, DEFAULT)  # nothing new: no call, and only this build's calls count
        assert (again.llm_calls, again.llm_tokens) == (0, 0)
