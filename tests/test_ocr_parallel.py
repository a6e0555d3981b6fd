"""The build's OCR stage reading several images at once (core/build.py run_ocr with an OCR whose
`parallel` > 1, core/encoders/ocr.py RapidOcr's engine pool): the same stored text as one at a time,
progress per image in order, at most `parallel` engines. Fakes for the unit tests; the real rapidocr
on the demo's screenshots."""
from __future__ import annotations

import hashlib
import io
import threading
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from PIL import Image

from conftest import ROOT, FakeImageEncoder, FakeOCR, HashEmbedder
from core.build import BuildDeps, build
from core.config import DEFAULT
from core.extract import RuleExtractor
from core.model import History, ImageRef, Round, Session, Utterance
from core.store import Store


def _png(i: int) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (40, 30), (10 * i, 100, 200)).save(buf, format="PNG")
    return buf.getvalue()


def _history(n: int, repeat: int | None = None) -> tuple[History, dict[bytes, str]]:
    """n rounds with one screenshot each (round `repeat` shows the same picture as round 0)."""
    rounds, texts = [], {}
    for i in range(n):
        data = _png(0 if i == repeat else i)
        texts.setdefault(data, f"Reading {i}: {100 + i} units")
        img = ImageRef(f"S1:R{i + 1}:I1", data=data, sha256=hashlib.sha256(data).hexdigest(), mime="image/png",
                       width=40, height=30)
        rounds.append(Round(f"S1:R{i + 1}", "S1", datetime(2026, 1, 1) + timedelta(hours=i),
                            (Utterance("user", "here is today's screen"),), (img,), i))
    return History("h.json", "memeye", (Session("S1", datetime(2026, 1, 1).date(), tuple(rounds)),), ()), texts


class BarrierOCR(FakeOCR):
    """A fake OCR that proves its reads overlap: each read waits until `parallel` reads are in."""

    def __init__(self, texts, parallel: int):
        super().__init__(texts)
        self.parallel = parallel
        self.barrier = threading.Barrier(parallel, timeout=30)
        self.threads: set[str] = set()
        self.lock = threading.Lock()

    def read(self, image: bytes):
        with self.lock:
            self.threads.add(threading.current_thread().name)
        self.barrier.wait()  # BrokenBarrierError (the build fails) if reads do not run together
        with self.lock:
            return FakeOCR.read(self, image)  # counts the call


def _ocr_rows(path) -> list[tuple]:
    with Store(str(path)) as s:
        return s.con.execute("SELECT image_id, ocr_text, ocr_lines, ocr_engine FROM images ORDER BY image_id").fetchall()


def test_parallel_ocr_stores_what_serial_ocr_stores_with_progress_per_image(tmp_path):
    history, texts = _history(20, repeat=7)  # 19 distinct pictures: the last batch has an odd one out
    stages: list[tuple[int, int]] = []

    def built(name, ocr):
        with Store(str(tmp_path / name)) as s:
            deps = BuildDeps(HashEmbedder(), FakeImageEncoder(), ocr, RuleExtractor(DEFAULT))
            report = build(s, [history], deps, DEFAULT,
                           progress=lambda st, d, t: stages.append((d, t)) if st == "ocr" and name == "p" else None)
        return report

    serial = FakeOCR(texts)
    r1 = built("s", serial)
    par = BarrierOCR(texts, parallel=2)
    par.barrier = threading.Barrier(1)  # 19 reads cannot all meet in pairs: here the reads only run threaded
    r2 = built("p", par)
    assert r1.images_ocr == r2.images_ocr == 20 and serial.calls == par.calls == 19  # the repeat is read once
    rows = _ocr_rows(tmp_path / "s")
    text = {r[0]: r[1] for r in rows}
    assert rows == _ocr_rows(tmp_path / "p") and text["S1:R8:I1"] == text["S1:R1:I1"] == "Reading 0: 100 units"
    assert any(t.startswith("ocr") for t in par.threads)  # read on the stage's own threads
    assert stages == [(k, 20) for k in range(0, 21)]  # every image reported, in order


def test_parallel_ocr_reads_overlap(tmp_path):
    history, texts = _history(16)  # one batch of 16 distinct pictures: 8 pairs meet at the barrier
    ocr = BarrierOCR(texts, parallel=2)
    with Store(str(tmp_path / "m.duckdb")) as s:
        deps = BuildDeps(HashEmbedder(), FakeImageEncoder(), ocr, RuleExtractor(DEFAULT))
        report = build(s, [history], deps, DEFAULT)
    assert report.images_ocr == 16 and len(ocr.threads) == 2


def test_rapidocr_makes_at_most_parallel_engines_and_recovers_from_a_failed_load(monkeypatch):
    import core.encoders.ocr as ocr_mod

    made, fail = [], [True]
    gate = threading.Barrier(2, timeout=30)

    class Engine:
        def __call__(self, rgb):
            gate.wait()  # two calls at once: each needs its own engine
            return None

    def make():
        if fail[0]:
            fail[0] = False
            raise ImportError("no rapidocr")
        made.append(Engine())
        return made[-1]

    monkeypatch.setattr(ocr_mod, "make_rapidocr_engine", make)
    ocr = ocr_mod.RapidOcr(parallel=2)
    with pytest.raises(ImportError):
        ocr.read(_png(1))
    threads = [threading.Thread(target=ocr.read, args=(_png(i),)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads) and len(made) == 2
    assert ocr_mod.RapidOcr(Engine()).parallel == 1  # a given engine is the only one


@pytest.mark.slow
def test_two_real_rapidocr_engines_read_the_demo_screens_as_one_does():
    from core.encoders import RapidOcr

    shots = sorted((ROOT / "data" / "demo" / "images").glob("*.png"))[:6]
    if not shots:
        pytest.skip("no demo screenshots")
    data = [p.read_bytes() for p in shots]
    one = [RapidOcr().read(d) for d in data]
    from concurrent.futures import ThreadPoolExecutor

    two = RapidOcr(parallel=2)
    with ThreadPoolExecutor(2) as ex:
        both = list(ex.map(two.read, data))
    assert both == one and any(r.text for r in one)
