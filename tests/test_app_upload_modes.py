"""The upload page's retrieval-memory setting reaches the build's Config."""
from __future__ import annotations

from test_app_pages import memeye_upload, page

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
