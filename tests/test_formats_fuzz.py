"""Fuzzing the readers: whatever the bytes, nothing but InputError comes out.

read_file may only raise InputError; read_upload never raises and never
records an internal error (INTERNAL_FAULT marks a reader bug caught as a
last resort, which these tests must not see).
"""
from __future__ import annotations

import io
import json
import os
import zipfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from core.config import DEFAULT
from core.errors import InputError
from core.formats import INTERNAL_FAULT, read_file, read_upload

# FORMATS_FUZZ_EXAMPLES raises the budget for a longer hunt outside the normal suite.
FUZZ = settings(max_examples=int(os.environ.get("FORMATS_FUZZ_EXAMPLES", "100")), deadline=None, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])
pytestmark = pytest.mark.filterwarnings("ignore:Duplicate name")
SMALL = DEFAULT.with_(max_zip_entries=50, max_rounds_per_upload=500, max_image_pixels=1_000_000)

KEYS = ["multi_session_dialogues", "session_id", "date", "dialogues", "round", "time", "user", "assistant",
        "image_id", "input_image", "image_caption", "human-annotated QAs", "question", "answer", "clue",
        "options", "sample_id", "query_type", "tolerance", "answer_kind", "character_profile", "speaker_a",
        "speaker_b", "session_1", "session_1_date_time", "session_2", "speaker", "text", "dia_id",
        "blip_caption", "img_url", "qa", "evidence", "category", "conversation", "refusal"]
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-10**6, 10**6), st.floats(allow_nan=True),
    st.sampled_from(["", "D1:1", "2024-03-10", "08:15", "1:56 pm on 8 May, 2023", "x.png", "../x.png",
                     "Not mentioned", "number", "A"]),
    st.text(max_size=12),
)
JSONISH = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.one_of(st.sampled_from(KEYS), st.text(max_size=6)), children, max_size=6),
    ),
    max_leaves=40,
)


def _png() -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (6, 4), (1, 2, 3)).save(buf, "PNG")
    return buf.getvalue()


PNG = _png()
VALID_MEMEYE = json.dumps({
    "character_profile": {"name": "A"},
    "multi_session_dialogues": [{"session_id": "S1", "date": "2024-03-10", "dialogues": [
        {"round": "S1:1", "time": "2024-03-10T08:00:00", "user": "Weight: 70 kg", "assistant": "ok",
         "image_id": ["S1:1:I1"], "input_image": ["img/a.png"], "image_caption": ["scale"]},
        {"round": "S1:2", "user": "hi", "assistant": "hello"}]}],
    "human-annotated QAs": [{"question": "w?", "answer": "70 kg", "clue": ["S1:1"], "options": {"A": "70"}}],
}).encode()
VALID_LOCOMO = json.dumps({
    "speaker_a": "A", "speaker_b": "B", "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi", "blip_caption": "a dog", "img_url": ["u"]},
                  {"speaker": "B", "dia_id": "D1:2", "text": "yo"}],
    "qa": [{"question": "q", "answer": "a", "evidence": ["D1:1"], "category": 1},
           {"question": "t", "adversarial_answer": "x", "evidence": [], "category": 5}],
}).encode()


def check_upload(files) -> None:
    report = read_upload(files, config=SMALL)
    for f in report.files:
        if f.error is not None:
            assert isinstance(f.error, InputError)
            assert INTERNAL_FAULT not in f.error.fault, f.error
            assert f.error.file and f.error.fault
        else:
            assert f.histories and f.rounds == sum(len(h.rounds) for h in f.histories)


def check_file(tmp, data: bytes) -> None:
    p = tmp / "fuzz.json"
    p.write_bytes(data)
    try:
        read_file(p, config=SMALL)
    except InputError as e:
        assert e.fault


@pytest.fixture(scope="module")
def tmp(tmp_path_factory):
    d = tmp_path_factory.mktemp("fuzz")
    (d / "img").mkdir()
    (d / "img" / "a.png").write_bytes(PNG)
    return d


@FUZZ
@given(st.binary(max_size=400))
def test_random_bytes(tmp, data):
    check_file(tmp, data)
    check_upload([("x.json", data), ("x.zip", data), ("img/a.png", data)])


@FUZZ
@given(JSONISH)
def test_random_json_values(tmp, value):
    data = json.dumps(value).encode()
    check_file(tmp, data)
    check_upload([("x.json", data), ("img/a.png", PNG)])


def _mutations(base: bytes):
    return st.lists(
        st.tuples(st.sampled_from(["flip", "delete", "insert"]), st.integers(0, len(base) - 1),
                  st.binary(min_size=1, max_size=3)),
        min_size=1, max_size=6,
    )


def _mutate(base: bytes, ops) -> bytes:
    data = bytearray(base)
    for op, pos, chunk in ops:
        pos = min(pos, max(len(data) - 1, 0))
        if op == "flip" and data:
            data[pos] ^= chunk[0] or 1
        elif op == "delete":
            del data[pos: pos + len(chunk)]
        else:
            data[pos:pos] = chunk
    return bytes(data)


@FUZZ
@given(st.sampled_from([VALID_MEMEYE, VALID_LOCOMO]), st.data())
def test_mutated_valid_files(tmp, base, data):
    mutated = _mutate(base, data.draw(_mutations(base)))
    check_file(tmp, mutated)
    check_upload([("x.json", mutated), ("img/a.png", PNG)])


def _replace_subtree(doc, path, value):
    """doc with the node reached by following `path` (indices into containers) replaced by value."""
    if not path or not isinstance(doc, (dict, list)) or not doc:
        return value
    keys = list(doc.keys()) if isinstance(doc, dict) else list(range(len(doc)))
    k = keys[path[0] % len(keys)]
    out = dict(doc) if isinstance(doc, dict) else list(doc)
    out[k] = _replace_subtree(doc[k], path[1:], value)
    return out


@FUZZ
@given(st.sampled_from([VALID_MEMEYE, VALID_LOCOMO]), st.lists(st.integers(0, 50), max_size=6), JSONISH)
def test_structurally_mutated_valid_files(tmp, base, path, value):
    doc = _replace_subtree(json.loads(base), path, value)
    data = json.dumps(doc).encode()
    check_file(tmp, data)
    check_upload([("x.json", data), ("img/a.png", PNG)])


NAMES = st.one_of(st.sampled_from(["img/a.png", "a.png", "../a.png", "/a.png", "x/../../a.png", "C:/a.png",
                                   "h.json", "d/h.json", "img\\a.png", "__MACOSX/._a.png", "dir/"]),
                  st.text(min_size=1, max_size=10))


@FUZZ
@given(st.lists(st.tuples(NAMES, st.sampled_from([PNG, VALID_MEMEYE, VALID_LOCOMO, b"", b"\x89PNG\r\n"])),
                max_size=5),
       st.integers(0, 0o177777))
def test_random_zips(files, mode):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for i, (name, content) in enumerate(files):
            info = zipfile.ZipInfo(name if i else name + "_")
            info.external_attr = (mode << 16) if i == 0 else 0
            zf.writestr(info, content)
    check_upload([("bundle.zip", buf.getvalue()), ("h.json", VALID_MEMEYE)])


@FUZZ
@given(st.data())
def test_mutated_images(data):
    image = _mutate(PNG, data.draw(_mutations(PNG)))
    check_upload([("h.json", VALID_MEMEYE), ("img/a.png", image)])
