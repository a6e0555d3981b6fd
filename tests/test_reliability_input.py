"""Bad input through the whole pipeline: the CLI's `build` against a memory that already holds a good build.

Every case of the corpus (malformed, truncated, wrongly typed, deeply nested and huge JSON; wrong
encodings; duplicate, missing and clashing ids; images that are not images, truncated or decompression
bombs; zips with path traversal, symlinks, absolute names, bombs or thousands of entries) must end in
exit status 2 with exactly one line on stderr that names the file and the fault, and the memory must be
byte-for-byte the same table content as before (a checksum of every table). A handful of cases also run
as a real `python -m core build` subprocess to prove no traceback reaches the terminal.

The limits a person can see and change (max_upload_bytes, max_image_pixels, max_rounds_per_upload,
max_zip_entries) are each enforced with a message naming the limit, and `--set NAME=VALUE` lifts them.

The whole pipeline (read_upload + ingest + build) is also fuzzed with hypothesis: nothing but InputError
escapes, a failed build leaves the memory unchanged and a successful one leaves every round processed.
bench/fuzz_formats.py runs the same fuzz targets longer. Helpers here are shared with the other
reliability tests and bench/reliability_report.py.
"""
from __future__ import annotations

import io
import json
import os
import shutil
import stat
import struct
import subprocess
import sys
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from conftest import ROOT, FakeImageEncoder, FakeOCR, HashEmbedder
from history_factory import write_health_history
from test_planning_data import checksum

from core import __main__ as cli
from core.build import BuildDeps, build
from core.config import DEFAULT
from core.errors import InputError
from core.extract import RuleExtractor
from core.formats import read_file, read_upload
from core.store import Store

PY = sys.executable
FUZZ_EXAMPLES = int(os.environ.get("RELIABILITY_FUZZ_EXAMPLES", "25"))
pytestmark = pytest.mark.filterwarnings("ignore:Duplicate name")


# ---------------------------------------------------------------------- shared helpers
def fake_deps(config=DEFAULT, **_ignored) -> BuildDeps:
    """The deterministic build dependencies (no model loads); signature-compatible with make_build_deps."""
    return BuildDeps(text_encoder=HashEmbedder(), image_encoder=FakeImageEncoder(), ocr=FakeOCR(),
                     extractor=RuleExtractor(config))


def memory_checksum(path) -> dict:
    """Every table's row count and content hash (read-only, so checking changes nothing)."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        return checksum(con)
    finally:
        con.close()


def png_bytes(size=(40, 30), color=(10, 120, 200)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, "PNG")
    return buf.getvalue()


def jpeg_bytes(size=(40, 30)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, (200, 10, 10)).save(buf, "JPEG")
    return buf.getvalue()


def png_bomb(width: int = 100_000, height: int = 100_000) -> bytes:
    """A valid-looking PNG whose header claims width x height pixels, with a tiny body."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 64))
            + chunk(b"IEND", b""))


def memeye_doc(n_rounds: int = 3, *, image: str | None = None, prefix: str = "N") -> dict:
    """A small valid MemEye document with new round ids (so it would add rounds to the good memory)."""
    dialogues = [{"round": f"{prefix}1:R{k}", "time": f"2026-05-0{1 + k % 8}T08:0{k % 10}:00",
                  "user": f"My weight was {70 + k} kg this morning.", "assistant": "Noted."}
                 for k in range(1, n_rounds + 1)]
    if image:
        dialogues[0] |= {"image_id": [f"{prefix}1:R1:I1"], "input_image": [image], "image_caption": ["a scale"]}
    return {"character_profile": {"name": "T"},
            "multi_session_dialogues": [{"session_id": f"{prefix}1", "date": "2026-05-01", "dialogues": dialogues}]}


def zip_bytes(members: list[tuple[str, bytes]], *, symlink: str | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members:
            zf.writestr(name, data)
        if symlink:
            info = zipfile.ZipInfo(symlink)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, "/etc/passwd")
    return buf.getvalue()


def make_good_memory(folder: Path) -> tuple[Path, Path]:
    """(memory path, its source JSON): a 16-round health history built with the fakes."""
    folder.mkdir(parents=True, exist_ok=True)
    src = write_health_history(folder, n_sessions=4, rounds_per_session=4)
    path = folder / "good.duckdb"
    with Store(path) as s:
        report = build(s, read_file(src), fake_deps(), DEFAULT)
    assert report.rounds == 16 and report.schemas >= 1
    return path, src


@dataclass(frozen=True)
class CliResult:
    code: int
    out: str
    err: str


def run_cli_inprocess(argv: list[str], capsys) -> CliResult:
    capsys.readouterr()
    try:
        code = cli.main(argv)
    except SystemExit as e:  # argparse errors
        code = int(e.code)
    out, err = capsys.readouterr()
    return CliResult(code, out, err)


def run_cli_subprocess(argv: list[str], cwd: Path) -> CliResult:
    env = os.environ | {"OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                        "PYTHONPATH": str(ROOT)}
    env.pop("ADAMM_DEBUG", None)
    p = subprocess.run([PY, "-m", "core", *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    return CliResult(p.returncode, p.stdout, p.stderr)


def assert_one_clear_line(res: CliResult, file_hint: str, words: tuple[str, ...]) -> str:
    """Exit 2, nothing on stdout, exactly one stderr line naming the file and the fault, no traceback."""
    assert res.code == 2, (res.code, res.err[-500:])
    lines = res.err.splitlines()
    assert len(lines) == 1, res.err[-1000:]
    line = lines[0]
    assert line.startswith("error: ") and "Traceback" not in res.err and "internal error" not in line, line
    assert file_hint in line, line
    for w in words:
        assert w.lower() in line.lower(), (w, line)
    assert res.out == ""
    return line


# ---------------------------------------------------------------------- the corpus
# Each case writes its input files into a folder and returns (argv inputs + options, file hint, words).
Case = Callable[[Path, Path], tuple[list[str], str, tuple[str, ...]]]


def _write(folder: Path, name: str, data: bytes) -> str:
    p = folder / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data)
    return str(p)


def _doc_bytes(doc) -> bytes:
    return json.dumps(doc).encode()


def _with_image(folder: Path, image_name: str, data: bytes, ref: str | None = None):
    _write(folder, image_name, data)
    return [_write(folder, "h.json", _doc_bytes(memeye_doc(image=ref or image_name)))], "h.json"


def _mutate_doc(fn) -> Case:
    def case(folder, good_src):
        doc = memeye_doc()
        fn(doc)
        return [_write(folder, "h.json", _doc_bytes(doc))], "h.json"
    return case


def _dialogues(doc) -> list:
    return doc["multi_session_dialogues"][0]["dialogues"]


CASES: dict[str, tuple[Case, tuple[str, ...]]] = {
    "malformed json": (lambda f, g: ([_write(f, "h.json", b'{"multi_session_dialogues": [{"session_id": ')],
                                     "h.json"), ("malformed JSON", "line 1")),
    "truncated good file": (lambda f, g: ([_write(f, "h.json", g.read_bytes()[: len(g.read_bytes()) // 2])],
                                          "h.json"), ("malformed JSON", "line")),
    "empty file": (lambda f, g: ([_write(f, "h.json", b"")], "h.json"), ("malformed JSON",)),
    "binary garbage": (lambda f, g: ([_write(f, "h.json", bytes(range(256)) * 4)], "h.json"),
                       ("binary data", "not a JSON file")),
    "png named json": (lambda f, g: ([_write(f, "h.json", png_bytes())], "h.json"), ("PNG image", "not a JSON file")),
    "empty conversation": (lambda f, g: ([_write(f, "h.json", _doc_bytes(memeye_doc() | {"multi_session_dialogues": []}))],
                                         "h.json"), ("no rounds", "nothing to build")),
    "top level is a list of numbers": (lambda f, g: ([_write(f, "h.json", b"[1, 2, 3]")], "h.json"),
                                       ("unknown format",)),
    "dialogues is a string": (_mutate_doc(lambda d: d["multi_session_dialogues"][0].update(dialogues="hello")),
                              ("multi_session_dialogues[0].dialogues",)),
    "user text is a number": (_mutate_doc(lambda d: _dialogues(d)[0].update(user=42)),
                              ("dialogues[0].user", "string")),
    "round is null": (_mutate_doc(lambda d: _dialogues(d).__setitem__(1, None)), ("dialogues[1]",)),
    "deeply nested": (lambda f, g: ([_write(f, "h.json", b"[" * 200_000 + b"]" * 200_000)], "h.json"),
                      ("nested too deeply",)),
    "huge integer literal": (lambda f, g: ([_write(f, "h.json", b'{"multi_session_dialogues": ' + b"9" * 50_000
                                                   + b"}")], "h.json"), ("malformed JSON",)),
    "huge file over the limit": (lambda f, g: ([_write(f, "h.json", _doc_bytes(
        memeye_doc() | {"character_profile": {"bio": "x" * 3_000_000}})), "--set", "max_upload_bytes=1000000"],
        "h.json"), ("max_upload_bytes",)),
    "utf-16": (lambda f, g: ([_write(f, "h.json", json.dumps(memeye_doc()).encode("utf-16"))], "h.json"),
               ("UTF-16", "UTF-8")),
    "latin-1": (lambda f, g: ([_write(f, "h.json", json.dumps(memeye_doc() | {"character_profile": "Zoë"},
                                                               ensure_ascii=False).encode("latin-1"))],
                              "h.json"), ("not UTF-8", "line 1")),
    "duplicate round ids": (_mutate_doc(lambda d: _dialogues(d)[2].update(round=_dialogues(d)[0]["round"])),
                            ("duplicate round id",)),
    "missing round id": (_mutate_doc(lambda d: _dialogues(d)[1].pop("round")), ("dialogues[1]", "round")),
    "duplicate session ids": (_mutate_doc(lambda d: d["multi_session_dialogues"].append(
        dict(d["multi_session_dialogues"][0], dialogues=[dict(_dialogues(d)[0], round="Z:1")]))),
        ("duplicate session id",)),
    "unreadable time": (_mutate_doc(lambda d: _dialogues(d)[0].update(time="yesterday-ish")), ("dialogues[0].time",)),
    "image lists of different lengths": (_mutate_doc(lambda d: _dialogues(d)[0].update(
        image_id=["a", "b"], image_caption=["one"])), ("has 1 entries",)),
    "round ids clash with another file in the memory": (
        lambda f, g: ([_write(f, "other.json", g.read_bytes().replace(b"Thai", b"Greek"))], "other.json"),
        ("already belongs",)),
    "second input clashes with the first": (
        lambda f, g: ([_write(f, "a.json", _doc_bytes(memeye_doc(prefix="Q"))),
                       _write(f, "b.json", _doc_bytes(memeye_doc(prefix="Q")).replace(b"Noted", b"Fine"))],
                      "b.json"), ("already belongs",)),
    "image is not an image": (lambda f, g: _with_image(f, "img/a.png", b"this is text, not pixels"),
                              ("img/a.png", "not an image")),
    "truncated image": (lambda f, g: _with_image(f, "img/a.png", png_bytes()[:60]), ("corrupt",)),
    "decompression bomb": (lambda f, g: _with_image(f, "img/a.png", png_bomb()), ("max_image_pixels",)),
    "jpeg named png": (lambda f, g: _with_image(f, "img/a.png", jpeg_bytes()), ("extension",)),
    "missing image": (lambda f, g: ([_write(f, "h.json", _doc_bytes(memeye_doc(image="img/none.png")))], "h.json"),
                      ("not found",)),
    "zip path traversal": (lambda f, g: ([_write(f, "u.zip", zip_bytes([("h.json", _doc_bytes(memeye_doc())),
                                                                         ("../../evil.png", png_bytes())]))],
                                         "u.zip"), ("escapes",)),
    "zip absolute entry": (lambda f, g: ([_write(f, "u.zip", zip_bytes([("h.json", _doc_bytes(memeye_doc())),
                                                                        ("/tmp/evil.png", png_bytes())]))],
                                         "u.zip"), ("absolute",)),
    "zip symlink": (lambda f, g: ([_write(f, "u.zip", zip_bytes([("h.json", _doc_bytes(memeye_doc()))],
                                                                symlink="img/a.png"))], "u.zip"),
                    ("symbolic link",)),
    "zip with thousands of entries": (lambda f, g: ([_write(f, "u.zip", zip_bytes(
        [("h.json", _doc_bytes(memeye_doc()))] + [(f"junk/{i}.txt", b"") for i in range(DEFAULT.max_zip_entries)]))],
        "u.zip"), ("max_zip_entries",)),
    "zip bomb": (lambda f, g: ([_write(f, "u.zip", zip_bytes([("h.json", _doc_bytes(memeye_doc())),
                                                              ("big.png", b"\0" * 3_000_000)])),
                                "--set", "max_upload_bytes=1000000"], "u.zip"), ("expands to", "max_upload_bytes")),
    "zip is not a zip": (lambda f, g: ([_write(f, "u.zip", b"PK\x03\x04 not really")], "u.zip"),
                         ("not a readable zip",)),
    "zip without json": (lambda f, g: ([_write(f, "u.zip", zip_bytes([("a.png", png_bytes())]))], "u.zip"),
                         ("no JSON file",)),
    "zip with a bad image inside": (lambda f, g: ([_write(f, "u.zip", zip_bytes([
        ("h.json", _doc_bytes(memeye_doc(image="img/a.png"))), ("img/a.png", b"GIF89a broken")]))], "u.zip"),
        ("img/a.png",)),
    "no such file": (lambda f, g: ([str(f / "missing.json")], "missing.json"), ("no such file",)),
    "locomo format forced on memeye": (lambda f, g: ([_write(f, "h.json", _doc_bytes(memeye_doc())),
                                                      "--format", "locomo"], "h.json"), ()),
    "unknown --set parameter": (lambda f, g: ([str(g), "--set", "max_bananas=3"], "--set"), ("unknown parameter",)),
    "badly typed --set value": (lambda f, g: ([str(g), "--set", "max_zip_entries=lots"], "--set"), ("int",)),
}
SUBPROCESS_CASES = ("malformed json", "utf-16", "decompression bomb", "zip path traversal", "deeply nested",
                    "round ids clash with another file in the memory")


@pytest.fixture(scope="module")
def good_memory(tmp_path_factory) -> tuple[Path, Path]:
    return make_good_memory(tmp_path_factory.mktemp("good"))


@pytest.fixture(scope="module")
def good_checksum(good_memory) -> dict:
    return memory_checksum(good_memory[0])


@pytest.fixture
def memory_copy(good_memory, tmp_path) -> Path:
    dst = tmp_path / "memory.duckdb"
    shutil.copyfile(good_memory[0], dst)
    return dst


@pytest.fixture
def fake_models(monkeypatch):
    """The CLI's build gets the fakes instead of MiniLM / rapidocr (errors under test come before models)."""
    import core.deps

    monkeypatch.setattr(core.deps, "make_build_deps", lambda config, **kw: fake_deps(config))


def run_case(name: str, folder: Path, store: Path, good_src: Path, runner, before: dict | None = None) -> str:
    """Run one corpus case against `store` (whose checksum is `before`, computed when not given)."""
    case, words = CASES[name]
    args, hint = case(folder, good_src)
    before = memory_checksum(store) if before is None else before
    res = runner(["build", *args, "--store", str(store), "--quiet"])
    line = assert_one_clear_line(res, hint, words)
    assert memory_checksum(store) == before, f"{name}: the memory changed"
    return line


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input_gives_one_clear_line_and_leaves_the_memory_unchanged(name, tmp_path, memory_copy, good_memory,
                                                                        good_checksum, capsys, fake_models):
    run_case(name, tmp_path / "in", memory_copy, good_memory[1], lambda argv: run_cli_inprocess(argv, capsys),
             before=good_checksum)


@pytest.mark.timeout(300)
def test_bad_input_through_a_real_cli_process_has_no_traceback(tmp_path, good_memory):
    store = tmp_path / "memory.duckdb"
    shutil.copyfile(good_memory[0], store)
    for name in SUBPROCESS_CASES:
        run_case(name, tmp_path / name.replace(" ", "_"), store, good_memory[1],
                 lambda argv: run_cli_subprocess(argv, tmp_path))


def test_every_fault_of_a_file_is_printed_the_first_on_the_usual_line(tmp_path, memory_copy, capsys, fake_models):
    doc = memeye_doc(n_rounds=4)
    rounds = doc["multi_session_dialogues"][0]["dialogues"]
    rounds[0]["user"] = 5
    rounds[2]["time"] = "half past nine"
    src = _write(tmp_path, "h.json", _doc_bytes(doc))
    before = memory_checksum(memory_copy)
    res = run_cli_inprocess(["build", src, "--store", str(memory_copy), "--quiet"], capsys)
    assert res.code == 2 and res.out == "" and "Traceback" not in res.err
    first, second, *rest = res.err.splitlines()
    assert first.startswith("error: ") and "h.json" in first and "dialogues[0].user" in first
    assert "dialogues[2].time" in second and "half past nine" in second and not rest
    assert memory_checksum(memory_copy) == before


def test_a_good_input_after_the_bad_ones_still_builds(tmp_path, memory_copy, capsys, fake_models):
    """The corpus did not poison anything: the same memory accepts a good file and processes it."""
    src = _write(tmp_path, "more.json", _doc_bytes(memeye_doc(n_rounds=5)))
    res = run_cli_inprocess(["build", src, "--store", str(memory_copy), "--quiet"], capsys)
    assert res.code == 0, res.err
    with Store(memory_copy) as s:
        summary = s.summary()
    assert summary["rounds"] == 21 and summary["rounds_processed"] == 21


def test_dates_out_of_order_are_stored_chronologically(tmp_path, capsys, fake_models):
    doc = memeye_doc(n_rounds=4)
    times = ["2026-05-04T09:00:00", "2026-05-01T09:00:00", "2026-05-03T09:00:00", "2026-05-02T09:00:00"]
    for d, t in zip(_dialogues(doc), times):
        d["time"] = t
    src = _write(tmp_path, "h.json", _doc_bytes(doc))
    store = tmp_path / "m.duckdb"
    res = run_cli_inprocess(["build", src, "--store", str(store), "--quiet"], capsys)
    assert res.code == 0, res.err
    with Store(store) as s:
        rows = s.con.execute("SELECT round_id, time FROM rounds ORDER BY round_order").fetchall()
    assert [t for _, t in rows] == sorted(t for _, t in rows)
    assert [r for r, _ in rows] == ["N1:R2", "N1:R4", "N1:R3", "N1:R1"]


# ---------------------------------------------------------------------- limits a person can change
def _limit_inputs(folder: Path) -> dict[str, tuple[list[str], int]]:
    """limit name -> (inputs, the smallest value of the limit that lets them through)."""
    doc = memeye_doc(n_rounds=6, image="img/a.png")
    src = _write(folder, "h.json", _doc_bytes(doc))
    _write(folder, "img/a.png", png_bytes((40, 30)))
    z = _write(folder, "u.zip", zip_bytes([("z.json", _doc_bytes(memeye_doc(n_rounds=2, prefix="Z")))]
                                          + [(f"extra/{i}.txt", b"x") for i in range(4)]))
    return {
        "max_upload_bytes": ([src], max(Path(src).stat().st_size, (folder / "img/a.png").stat().st_size)),
        "max_image_pixels": ([src], 40 * 30),
        "max_rounds_per_upload": ([src], 6),
        "max_zip_entries": ([z], 5),
    }


@pytest.mark.parametrize("limit", ["max_upload_bytes", "max_image_pixels", "max_rounds_per_upload",
                                   "max_zip_entries"])
def test_each_limit_is_enforced_with_its_name_and_can_be_changed(limit, tmp_path, memory_copy, capsys,
                                                                 fake_models):
    inputs, enough = _limit_inputs(tmp_path)[limit]
    assert getattr(DEFAULT, limit) >= enough  # the default lets a normal file through
    before = memory_checksum(memory_copy)
    res = run_cli_inprocess(["build", *inputs, "--store", str(memory_copy), "--quiet", "--set",
                             f"{limit}={enough - 1}"], capsys)
    line = assert_one_clear_line(res, Path(inputs[0]).name, (limit, str(enough - 1)))
    assert memory_checksum(memory_copy) == before, line
    res = run_cli_inprocess(["build", *inputs, "--store", str(memory_copy), "--quiet", "--set",
                             f"{limit}={enough}"], capsys)
    assert res.code == 0, res.err
    assert memory_checksum(memory_copy) != before


def test_limits_apply_to_uploads_too():
    data = _doc_bytes(memeye_doc(n_rounds=6))
    small = DEFAULT.with_(max_upload_bytes=len(data) - 1)
    report = read_upload([("h.json", data)], config=small)
    assert report.error is not None and "max_upload_bytes" in str(report.error)
    assert read_upload([("h.json", data)], config=DEFAULT.with_(max_upload_bytes=len(data))).ok
    report = read_upload([("h.json", data)], config=DEFAULT.with_(max_rounds_per_upload=5))
    assert not report.ok and "max_rounds_per_upload" in str(report.errors[0])


# ---------------------------------------------------------------------- whole-pipeline fuzz
def _fuzz_strategies():
    from test_formats_fuzz import JSONISH, _mutate, _mutations, _replace_subtree

    base = _doc_bytes(memeye_doc(n_rounds=4, image="img/a.png"))

    @st.composite
    def documents(draw):
        how = draw(st.sampled_from(["bytes", "tree", "keep", "clash"]))
        if how == "clash":  # round ids the good memory already holds from another file: refused at ingest
            doc = memeye_doc(n_rounds=draw(st.integers(1, 5)), prefix="S")
            return _mutate(_doc_bytes(doc), draw(_mutations(base))) if draw(st.booleans()) else _doc_bytes(doc)
        if how == "bytes":
            return _mutate(base, draw(_mutations(base)))
        if how == "tree":
            path = draw(st.lists(st.integers(0, 50), max_size=6))
            return _doc_bytes(_replace_subtree(json.loads(base), path, draw(JSONISH)))
        return base

    images = st.one_of(st.just(png_bytes()), st.builds(lambda ops: _mutate(png_bytes(), ops), _mutations(png_bytes())),
                       st.just(png_bomb(5000, 5000)), st.binary(max_size=64))
    return documents(), images


DOCUMENTS, IMAGES = _fuzz_strategies()
FUZZ_CONFIG = DEFAULT.with_(max_image_pixels=1_000_000, max_zip_entries=50, max_rounds_per_upload=500)


def pipeline_once(pristine: Path, work: Path, doc: bytes, image: bytes, as_zip: bool) -> str:
    """Read an upload and build it into a copy of a good memory; returns "built", "refused" or "rejected".

    Raises AssertionError when anything but InputError escapes, when a refused ingest changed the
    memory, or when a finished build left rounds unprocessed.
    """
    files = ([("u.zip", zip_bytes([("h.json", doc), ("img/a.png", image)]))] if as_zip
             else [("h.json", doc), ("img/a.png", image)])
    report = read_upload(files, config=FUZZ_CONFIG)
    for e in report.errors:
        assert isinstance(e, InputError) and e.fault and "internal error" not in e.fault, e
    if not report.histories:
        return "rejected"
    shutil.copyfile(pristine, work)
    before = memory_checksum(work)
    try:
        with Store(work) as s:
            build(s, report.histories, fake_deps(FUZZ_CONFIG), FUZZ_CONFIG)
    except InputError:
        assert memory_checksum(work) == before
        return "refused"
    with Store(work, read_only=True) as s:
        summary = s.summary()
    assert summary["rounds"] == summary["rounds_processed"] >= 16
    return "built"


@pytest.mark.timeout(300)
def test_fuzzed_uploads_through_read_ingest_and_build(good_memory, tmp_path):
    outcomes: dict[str, int] = {}

    @settings(max_examples=FUZZ_EXAMPLES, deadline=None, database=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(DOCUMENTS, IMAGES, st.booleans())
    def run(doc, image, as_zip):
        out = pipeline_once(good_memory[0], tmp_path / "work.duckdb", doc, image, as_zip)
        outcomes[out] = outcomes.get(out, 0) + 1

    run()
    assert sum(outcomes.values()) >= 1
