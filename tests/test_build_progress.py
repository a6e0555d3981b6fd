"""A build reports true progress: every image OCR'd and every chunk of rounds embedded, before the stage ends."""
from __future__ import annotations

from conftest import FakeImageEncoder, FakeOCR, HashEmbedder
from test_app_pages import health_history

import core.build as build_module
from core.build import BuildDeps, build
from core.config import DEFAULT
from core.extract import RuleExtractor
from core.store import Store


class RecordingOCR(FakeOCR):
    """FakeOCR that notes, at each read, the last progress event the build had reported."""

    def __init__(self, texts, events):
        super().__init__(texts)
        self.events = events
        self.seen_before_read: list[tuple] = []

    def read(self, image: bytes):
        self.seen_before_read.append(self.events[-1] if self.events else None)
        return super().read(image)


def _build(tmp_path, monkeypatch, chunk: int):
    monkeypatch.setattr(build_module, "EMBED_CHUNK", chunk)
    history, ocr_texts = health_history()
    events: list[tuple[str, int, int]] = []
    ocr = RecordingOCR(ocr_texts, events)
    deps = BuildDeps(text_encoder=HashEmbedder(), image_encoder=FakeImageEncoder(), ocr=ocr,
                     extractor=RuleExtractor(DEFAULT))
    with Store(tmp_path / "m.duckdb") as s:
        build(s, [history], deps, DEFAULT, progress=lambda *e: events.append(e))
    return events, ocr


def test_ocr_reports_the_stage_before_its_first_image_and_after_every_image(tmp_path, monkeypatch):
    events, ocr = _build(tmp_path, monkeypatch, chunk=256)
    ocr_events = [e for e in events if e[0] == "ocr"]
    assert ocr_events == [("ocr", 0, 2), ("ocr", 1, 2), ("ocr", 2, 2)]
    # the first image is read while the page already says "Images OCR'd: 0/2", not "Rounds stored"
    assert ocr.seen_before_read == [("ocr", 0, 2), ("ocr", 1, 2)]


def test_embedding_reports_each_chunk_of_rounds_and_keeps_their_order(tmp_path, monkeypatch):
    events, _ = _build(tmp_path, monkeypatch, chunk=5)
    embed = [e for e in events if e[0] == "embed"]
    assert embed == [("embed", 0, 13), ("embed", 5, 13), ("embed", 10, 13), ("embed", 13, 13)]
    # the chunked vectors are the ones a single call gives: same memory as without chunks
    chunked = Store(tmp_path / "m.duckdb")
    vec_chunked = chunked.con.execute("SELECT node_id, text_emb FROM nodes WHERE level = 'event' ORDER BY 1").fetchall()
    chunked.close()
    (tmp_path / "m.duckdb").unlink()
    _build(tmp_path, monkeypatch, chunk=256)
    with Store(tmp_path / "m.duckdb") as s:
        vec_once = s.con.execute("SELECT node_id, text_emb FROM nodes WHERE level = 'event' ORDER BY 1").fetchall()
    assert vec_chunked == vec_once and len(vec_once) == 13
