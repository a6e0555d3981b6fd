"""Input-format readers (core/formats): MemEye and LoCoMo parsing, images, uploads, validation."""
from __future__ import annotations

import hashlib
import io
import json
import re
import struct
import zipfile
import zlib
from datetime import date, datetime
from pathlib import Path

import pytest
from PIL import Image

from core.config import DEFAULT
from core.errors import InputError
from core.formats import INTERNAL_FAULT, detect_format, read_file, read_upload
from core.store import Store


# ---------------------------------------------------------------------- helpers
def png_bytes(size=(8, 6), color=(200, 30, 30)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, "PNG")
    return buf.getvalue()


def jpeg_bytes(size=(64, 48), color=(10, 120, 200)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, "JPEG", quality=90)
    return buf.getvalue()


def png_with_header_size(width: int, height: int) -> bytes:
    """A small real PNG whose IHDR claims width x height (CRC fixed so the header is valid)."""
    data = bytearray(png_bytes((4, 4)))
    ihdr = 8  # after the signature: length(4) type(4) data(13) crc(4)
    struct.pack_into(">II", data, ihdr + 8, width, height)
    crc = zlib.crc32(bytes(data[ihdr + 4: ihdr + 8 + 13])) & 0xFFFFFFFF
    struct.pack_into(">I", data, ihdr + 8 + 13, crc)
    return bytes(data)


def memeye_doc(image_refs=("../image/h/D1_1.png",), **overrides) -> dict:
    doc = {
        "character_profile": {"name": "Alex", "traits": ["runner"]},
        "multi_session_dialogues": [
            {"session_id": "D1", "date": "2024-03-10", "dialogues": [
                {"round": "D1:1", "user": "Look at my run.", "assistant": "Nice pace.",
                 "image_id": [f"D1:1:I{k + 1}" for k in range(len(image_refs))],
                 "input_image": list(image_refs),
                 "image_caption": [f"caption {k + 1}" for k in range(len(image_refs))]},
                {"round": "D1:2", "time": "2024-03-10T18:30:00", "user": "Thanks!", "assistant": ""},
            ]},
            {"session_id": "D2", "date": "2024-03-12", "dialogues": [
                {"round": "D2:1", "time": "07:45", "user": "Morning run: 5.2 km", "assistant": "Logged."},
            ]},
        ],
        "human-annotated QAs": [
            {"question": "How far?", "answer": "5.2 km", "clue": ["D2:1"], "point": [["X1"], ["Y1"]],
             "session_id": ["D2"], "sample_id": "h_q1", "query_type": "number_lookup",
             "answer_kind": "number", "tolerance": 0.1},
            {"question": "Which colour?", "answer": "Not mentioned.", "clue": [], "question_type": "adversarial",
             "options": {"A": "red", "B": "blue"}},
        ],
    }
    doc.update(overrides)
    return doc


def write_memeye(root: Path, doc: dict | None = None, images: dict[str, bytes] | None = None) -> Path:
    """root/dialog/h.json and root/image/h/<name> files, the real MemEye layout."""
    (root / "dialog").mkdir(parents=True, exist_ok=True)
    path = root / "dialog" / "h.json"
    path.write_text(json.dumps(doc if doc is not None else memeye_doc()), encoding="utf-8")
    for name, data in (images if images is not None else {"D1_1.png": png_bytes()}).items():
        p = root / "image" / "h" / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    return path


def zip_bytes(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def raises_input(fn, *args, **kwargs) -> InputError:
    with pytest.raises(InputError) as info:
        fn(*args, **kwargs)
    return info.value


def assert_names(err: InputError, file: str, place: str | None, *fault_words: str) -> None:
    """The error names the file, the place and the fault (and the message shows all three)."""
    assert err.file == file or err.file.endswith(file), err
    if place is not None:
        assert err.place == place, err
    msg = str(err)
    assert err.file in msg and err.place in msg and err.fault in msg
    for w in fault_words:
        assert w.lower() in err.fault.lower(), err


# ---------------------------------------------------------------------- LoCoMo (real data)
def test_locomo_26_counts(locomo_dir):
    [h] = read_file(locomo_dir / "26.json")
    raw = json.loads((locomo_dir / "26.json").read_text())
    assert h.format == "locomo" and h.source == "26.json"
    assert len(h.sessions) == 19
    assert len(h.rounds) == 419
    assert sum(any(i.caption for i in r.images) for r in h.rounds) == 116
    assert len(h.qas) == 199
    assert [s.session_id for s in h.sessions] == [f"D{n}" for n in range(1, 20)]
    assert len({r.round_id for r in h.rounds}) == 419
    # every round of session 1 carries the session's time; order is kept by index_in_session
    s1 = h.sessions[0]
    assert {r.time for r in s1.rounds} == {datetime(2023, 5, 8, 13, 56)}
    assert [r.index_in_session for r in s1.rounds] == list(range(len(s1.rounds)))
    assert s1.rounds[0].dialogue[0].speaker == raw["session_1"][0]["speaker"]
    assert s1.rounds[0].round_id == raw["session_1"][0]["dia_id"]
    # images: captions only, URLs kept as text, no bytes
    imgs = [i for r in h.rounds for i in r.images]
    assert all(i.data is None and i.sha256 is None for i in imgs)
    assert all(i.path is None or i.path.startswith("http") for i in imgs)


def test_locomo_26_qas(locomo_dir):
    [h] = read_file(locomo_dir / "26.json")
    raw = json.loads((locomo_dir / "26.json").read_text())["qa"]
    cat5 = [(q, r) for q, r in zip(h.qas, raw) if r["category"] == 5]
    assert len(cat5) == sum(r["category"] == 5 for r in raw) > 0
    for q, r in cat5:
        assert q.refusal and q.answer == "Not mentioned" and q.category == 5 and q.qtype == "locomo-cat5"
        assert r.get("adversarial_answer", "\0") not in q.answer
    others = [(q, r) for q, r in zip(h.qas, raw) if r["category"] != 5]
    assert all(q.answer == str(r["answer"]) and not q.refusal for q, r in others)
    assert any(isinstance(r["answer"], int) for _, r in others)  # numbers become text
    # "D8:6; D9:17" in one evidence string becomes two clues
    joined = [q for q, r in zip(h.qas, raw) if any(";" in e for e in r["evidence"])]
    assert joined and all(all(re.fullmatch(r"D\d+:\d+", c) for c in q.clues) for q in joined)
    assert len({q.qa_id for q in h.qas}) == 199


def test_locomo_list_of_nested_samples(locomo_dir, tmp_path):
    raw = json.loads((locomo_dir / "26.json").read_text())
    conv = {k: v for k, v in raw.items() if k != "qa"}
    samples = [{"sample_id": "conv-a", "conversation": conv, "qa": raw["qa"][:5]},
               {"sample_id": "conv-b", "conversation": conv, "qa": []}]
    p = tmp_path / "locomo10.json"
    p.write_text(json.dumps(samples))
    a, b = read_file(p)
    assert (a.source, b.source) == ("locomo10.json#conv-a", "locomo10.json#conv-b")
    assert len(a.rounds) == len(b.rounds) == 419 and len(a.qas) == 5 and not b.qas
    assert a.qas[0].qa_id == "conv-a:q1"


def test_locomo_upload_matches_read_file(locomo_dir):
    data = (locomo_dir / "26.json").read_bytes()
    report = read_upload([("26.json", data)])
    assert report.ok
    [fr] = report.files
    assert (fr.sessions, fr.rounds, fr.qas) == (19, 419, 199)
    assert fr.histories[0].rounds == read_file(locomo_dir / "26.json")[0].rounds


def test_real_memeye_samples_parse_without_their_images():
    folder = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "memeye-format"
    files = sorted(folder.glob("*.json")) if folder.is_dir() else []
    if not files:
        pytest.skip("MemEye format samples not available")
    for f in files:
        err = raises_input(read_file, f)
        assert_names(err, str(f), "multi_session_dialogues[0].dialogues[0].input_image[0]", "not found")
        [h] = read_file(f, allow_missing_images=True)
        raw = json.loads(f.read_text())
        assert len(h.rounds) == sum(len(s["dialogues"]) for s in raw["multi_session_dialogues"])
        assert len(h.qas) == len(raw["human-annotated QAs"])
        assert all(i.data is None and i.path for r in h.rounds for i in r.images)


# ---------------------------------------------------------------------- MemEye
def test_memeye_round_trip_with_real_pngs(tmp_path):
    img = png_bytes((8, 6))
    path = write_memeye(tmp_path, images={"D1_1.png": img})
    [h] = read_file(path)
    assert h.format == "memeye" and h.source == "h.json"
    assert json.loads(h.profile)["name"] == "Alex"
    assert [s.session_id for s in h.sessions] == ["D1", "D2"]
    assert h.sessions[0].date == date(2024, 3, 10)
    r1, r2, r3 = h.rounds
    assert r1.time == datetime(2024, 3, 10)  # no round time: the session date at 00:00
    assert r2.time == datetime(2024, 3, 10, 18, 30)
    assert r3.time == datetime(2024, 3, 12, 7, 45)  # a bare clock time takes the session date
    assert r2.dialogue == (r2.dialogue[0],) and r2.dialogue[0].speaker == "user"  # empty assistant skipped
    assert [u.speaker for u in r1.dialogue] == ["user", "assistant"]
    [im] = r1.images
    assert im.image_id == "D1:1:I1" and im.caption == "caption 1"
    assert im.data == img and im.sha256 == hashlib.sha256(img).hexdigest()
    assert (im.mime, im.width, im.height) == ("image/png", 8, 6)
    assert Path(im.path) == (tmp_path / "image" / "h" / "D1_1.png").resolve()
    q1, q2 = h.qas
    assert (q1.qa_id, q1.qtype, q1.clues, q1.answer_kind, q1.tolerance) == ("h_q1", "number_lookup", ("D2:1",), "number", 0.1)
    assert not q1.refusal
    assert (q2.qa_id, q2.qtype, q2.refusal) == ("h:q2", "adversarial", True)
    assert q2.options == (("A", "red"), ("B", "blue"))


def test_mem_gallery_fields_type_question_image_and_the_users_name(tmp_path):
    """Mem-Gallery names the type `point`, gives some questions their own picture (a path that may be
    absent, and its caption), and names the user only in the profile."""
    doc = memeye_doc()
    doc["human-annotated QAs"] = [
        {"point": "VS", "question": "Which picture shows the red thing?", "answer": "D1:1:I1", "clue": ["D1:1"]},
        {"point": [["X1"], ["Y2"]], "question": "What is shown in the picture?", "answer": "a cat",
         "question_image": "../image/h/QA_IMG_001.jpg", "image_caption": "A grey cat on a sofa."},
    ]
    [h] = read_file(write_memeye(tmp_path, doc))
    q1, q2 = h.qas
    assert (q1.qtype, q1.image) == ("VS", None)
    assert q2.qtype == "X1+Y2"
    assert q2.image is not None and q2.image.caption == "A grey cat on a sofa."
    assert q2.image.path == "../image/h/QA_IMG_001.jpg" and q2.image.data is None  # a query, never resolved
    assert h.people == ("Alex",)
    with Store(str(tmp_path / "m.duckdb")) as store:
        store.ingest(h)
        assert store.people() == ["Alex"]
        got = {q.qa_id: q for q in store.qas()}
        assert got[q2.qa_id].image.caption == "A grey cat on a sofa." and got[q1.qa_id].image is None
    doc["human-annotated QAs"][1]["image_caption"] = ["one", "two"]
    err = raises_input(read_file, write_memeye(tmp_path / "two", doc))
    assert_names(err, "h.json", '["human-annotated QAs"][1].image_caption', "at most one image")


def test_locomo_speakers_are_the_memorys_people(locomo_dir):
    [h] = read_file(locomo_dir / "26.json")
    assert len(h.people) == 2 and all(p and p[0].isupper() for p in h.people)


def test_memeye_images_from_folder_or_zip_by_name(tmp_path):
    img = jpeg_bytes()
    doc = memeye_doc(image_refs=("../image/h/photo.jpg",))
    json_path = tmp_path / "elsewhere" / "h.json"
    json_path.parent.mkdir()
    json_path.write_text(json.dumps(doc))
    folder = tmp_path / "pics" / "nested"
    folder.mkdir(parents=True)
    (folder / "photo.jpg").write_bytes(img)
    [h] = read_file(json_path, images=tmp_path / "pics")
    assert h.rounds[0].images[0].data == img and h.rounds[0].images[0].mime == "image/jpeg"
    zp = tmp_path / "pics.zip"
    zp.write_bytes(zip_bytes({"all/photo.jpg": img}))
    [hz] = read_file(json_path, images=zp)
    im = hz.rounds[0].images[0]
    assert im.data == img and im.path == f"zip:{zp}!all/photo.jpg"


def test_upload_zip_holding_json_and_images():
    img1, img2 = png_bytes((5, 5)), png_bytes((7, 3), (0, 0, 0))
    doc = memeye_doc(image_refs=("../image/h/D1_1.png", "../image/h/D1_2.png"))
    z = zip_bytes({"bundle/dialog/h.json": json.dumps(doc).encode(),
                   "bundle/image/h/D1_1.png": img1, "bundle/image/h/D1_2.png": img2,
                   "__MACOSX/bundle/._D1_1.png": b"junk"})
    report = read_upload([("bundle.zip", z)])
    assert report.ok, report.errors
    [fr] = report.files
    assert fr.name == "bundle.zip!bundle/dialog/h.json"
    assert (fr.sessions, fr.rounds, fr.images, fr.images_loaded, fr.qas) == (2, 3, 2, 2, 2)
    datas = [i.data for i in fr.histories[0].rounds[0].images]
    assert datas == [img1, img2]


def test_upload_loose_files_matched_by_name_and_shared_image_zip():
    img = png_bytes()
    doc = memeye_doc(image_refs=("../image/h/D1_1.png",))
    other = memeye_doc(image_refs=("D1_1.png",))
    report = read_upload([("a.json", json.dumps(doc).encode()), ("b.json", json.dumps(other).encode()),
                          ("imgs.zip", zip_bytes({"D1_1.png": img}))])
    assert report.ok, report.errors
    assert [f.images_loaded for f in report.files] == [1, 1]
    assert all(f.histories[0].rounds[0].images[0].data == img for f in report.files)


def test_one_bad_file_leaves_the_others_parsed(tmp_path):
    good = json.dumps(memeye_doc(image_refs=())).encode()
    bad = b'{"multi_session_dialogues": [\n  {"session_id": "S1",, }\n]}'
    missing = json.dumps(memeye_doc(image_refs=("nowhere.png",))).encode()
    report = read_upload([("good.json", good), ("bad.json", bad), ("missing.json", missing),
                          ("broken.zip", b"PK\x03\x04 not really a zip"), ("good2.json", good)])
    by_name = {f.name: f for f in report.files}
    assert by_name["good.json"].ok and by_name["good2.json"].ok
    assert by_name["good.json"].rounds == 3 and by_name["good2.json"].histories[0].source == "good2.json"
    assert_names(by_name["bad.json"].error, "bad.json", "line 2 column 23", "malformed JSON")
    assert_names(by_name["missing.json"].error, "missing.json",
                 "multi_session_dialogues[0].dialogues[0].input_image[0]", "not found")
    assert_names(by_name["broken.zip"].error, "broken.zip", None, "not a readable zip")
    assert not report.ok and len(report.errors) == 3


def test_upload_without_json_or_too_large():
    r = read_upload([("x.png", png_bytes())])
    assert r.error is not None and "no JSON file" in r.error.fault and r.files == ()
    r = read_upload([("a.json", b"{}" * 20)], config=DEFAULT.with_(max_upload_bytes=10))
    assert_names(r.error, "upload", "", "more than max_upload_bytes")


def test_detect_format():
    assert detect_format(memeye_doc()) == "memeye"
    assert detect_format({"speaker_a": "A", "session_1": []}) == "locomo"
    assert detect_format([{"conversation": {}, "qa": []}]) == "locomo"
    err = raises_input(detect_format, {"hello": 1}, file="x.json")
    assert_names(err, "x.json", "top level", "unknown format")


# ---------------------------------------------------------------------- validation errors
def _memeye_error(tmp_path, mutate, *, images=None, config=DEFAULT):
    doc = memeye_doc()
    mutate(doc)
    path = write_memeye(tmp_path, doc, images)
    return path, raises_input(read_file, path, config=config)


S0 = "multi_session_dialogues[0]"
R0 = f"{S0}.dialogues[0]"
R1 = f"{S0}.dialogues[1]"


@pytest.mark.parametrize("mutate, place, words", [
    (lambda d: d["multi_session_dialogues"][0].pop("dialogues"), f"{S0}.dialogues", ["missing required field"]),
    (lambda d: d["multi_session_dialogues"][0]["dialogues"][0].update(user=5), f"{R0}.user",
     ["expected a string", "number (5)"]),
    (lambda d: d.update(multi_session_dialogues={"a": 1}), "multi_session_dialogues", ["expected a list", "object"]),
    (lambda d: d["multi_session_dialogues"][0].update(date="yesterday"), f"{S0}.date", ["unreadable date", "yesterday"]),
    (lambda d: d["multi_session_dialogues"][0]["dialogues"][1].update(time="half past nine"), f"{R1}.time",
     ["unreadable time", "half past nine"]),
    (lambda d: (d["multi_session_dialogues"][0].pop("date"), d["multi_session_dialogues"][0]["dialogues"][0].pop("time", None)),
     f"{R0}.time", ["no time", "no date"]),
    (lambda d: d["multi_session_dialogues"][0]["dialogues"][0].update(image_caption=["a", "b"]), f"{R0}.image_id",
     ["1 entries", "image_caption has 2"]),
    (lambda d: d["human-annotated QAs"][1].pop("answer"), '["human-annotated QAs"][1].answer', ["missing required field"]),
    (lambda d: d["human-annotated QAs"][0].update(tolerance=-1), '["human-annotated QAs"][0].tolerance', ["tolerance"]),
    (lambda d: d["multi_session_dialogues"][0]["dialogues"].append({"round": "D9:9"}), f"{S0}.dialogues[2]",
     ["no user text"]),
])
def test_memeye_structure_errors(tmp_path, mutate, place, words):
    path, err = _memeye_error(tmp_path, mutate)
    assert_names(err, str(path), place, *words)


def test_duplicate_round_ids_name_both_places(tmp_path):
    def dup(d):
        d["multi_session_dialogues"][1]["dialogues"][0]["round"] = "D1:2"
    path, err = _memeye_error(tmp_path, dup)
    assert_names(err, str(path), "multi_session_dialogues[1].dialogues[0].round", "duplicate round id 'D1:2'")
    assert f"{R1}.round" in err.fault


def test_top_level_type_errors(tmp_path):
    p = tmp_path / "list.json"
    p.write_text("[1, 2]")
    assert_names(raises_input(read_file, p), str(p), "top level", "unknown format", "a list")
    assert_names(raises_input(read_file, p, fmt="memeye"), str(p), "top level", "expected an object", "a list")
    with pytest.raises(ValueError):
        read_file(p, fmt="csv")


def test_malformed_json_has_line_and_column(tmp_path):
    p = tmp_path / "m.json"
    p.write_text('{\n  "multi_session_dialogues": [\n    {"session_id": "S1" "date": 1}\n  ]\n}')
    assert_names(raises_input(read_file, p), str(p), "line 3 column 25", "malformed JSON", "delimiter")


def test_encodings(tmp_path):
    text = json.dumps(memeye_doc(image_refs=()), ensure_ascii=False).replace("Alex", "Zoë")
    bom = tmp_path / "bom.json"
    bom.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    assert json.loads(read_file(bom)[0].profile)["name"] == "Zoë"
    latin = tmp_path / "latin.json"
    latin.write_bytes(text.encode("latin-1"))
    err = raises_input(read_file, latin)
    offset = text.encode("latin-1").index("ë".encode("latin-1"))
    assert_names(err, str(latin), f"line 1 (byte {offset})", "not UTF-8", "0xeb")
    utf16 = tmp_path / "u16.json"
    utf16.write_bytes(text.encode("utf-16"))
    assert_names(raises_input(read_file, utf16), str(utf16), "byte 0", "UTF-16")


def test_deeply_nested_json(tmp_path):
    p = tmp_path / "deep.json"
    p.write_text("[" * 200_000 + "]" * 200_000)
    assert_names(raises_input(read_file, p), str(p), None, "nested too deeply")
    report = read_upload([("deep.json", p.read_bytes())])
    assert "nested too deeply" in report.files[0].error.fault


def test_too_many_rounds_and_too_large(tmp_path):
    path = write_memeye(tmp_path)
    err = raises_input(read_file, path, config=DEFAULT.with_(max_rounds_per_upload=2))
    assert_names(err, str(path), None, "3 rounds", "max_rounds_per_upload (2)")
    err = raises_input(read_file, path, config=DEFAULT.with_(max_upload_bytes=50))
    assert_names(err, str(path), None, "more than max_upload_bytes (50)")
    # across an upload: the file that crosses the limit fails, the one before it does not
    doc = json.dumps(memeye_doc(image_refs=())).encode()
    report = read_upload([("a.json", doc), ("b.json", doc)], config=DEFAULT.with_(max_rounds_per_upload=4))
    assert report.files[0].ok
    assert_names(report.files[1].error, "b.json", None, "3 rounds", "max_rounds_per_upload (1 left of the upload's 4)")


@pytest.mark.parametrize("name, data, config, words", [
    ("D1_1.png", b"hello, not a picture", DEFAULT, ["not an image"]),
    ("D1_1.png", jpeg_bytes(), DEFAULT, ["JPEG image", "'.png' says PNG"]),
    ("D1_1.png", png_bytes((20, 20)), DEFAULT.with_(max_image_pixels=100), ["400 pixels", "max_image_pixels (100)"]),
    ("D1_1.png", png_with_header_size(9000, 9000), DEFAULT, ["81000000 pixels", "max_image_pixels"]),
    ("D1_1.png", png_with_header_size(60000, 60000), DEFAULT, ["too many pixels"]),
    ("D1_1.jpg", jpeg_bytes((300, 300))[:-400], DEFAULT, ["truncated"]),
    ("D1_1.png", png_bytes((300, 300))[:-30], DEFAULT, ["corrupt"]),
    ("D1_1.png", (lambda b: b[:200] + bytes(x ^ 0xFF for x in b[200:260]) + b[260:])(png_bytes((300, 300))),
     DEFAULT, ["corrupt"]),
])
def test_bad_image_files(tmp_path, name, data, config, words):
    path = write_memeye(tmp_path, memeye_doc(image_refs=(f"../image/h/{name}",)), images={name: data})
    err = raises_input(read_file, path, config=config)
    assert_names(err, str(path), f"{R0}.input_image[0]", *words)
    assert name in err.fault


def test_missing_and_ambiguous_images(tmp_path):
    path = write_memeye(tmp_path, images={})
    err = raises_input(read_file, path)
    assert_names(err, str(path), f"{R0}.input_image[0]", "../image/h/D1_1.png", "not found")
    [h] = read_file(path, allow_missing_images=True)
    im = h.rounds[0].images[0]
    assert im.data is None and im.path == "../image/h/D1_1.png" and im.caption == "caption 1"
    doc = json.dumps(memeye_doc(image_refs=("pics/D1_1.png",))).encode()
    report = read_upload([("h.json", doc), ("a.zip", zip_bytes({"x/D1_1.png": png_bytes()})),
                          ("b.zip", zip_bytes({"y/D1_1.png": png_bytes((3, 3))}))])
    err = report.files[0].error
    assert_names(err, "h.json", f"{R0}.input_image[0]", "ambiguous", "zip:a.zip!x/D1_1.png", "zip:b.zip!y/D1_1.png")


def test_same_name_uploaded_twice_is_ambiguous():
    doc = json.dumps(memeye_doc(image_refs=("D1_1.png",))).encode()
    report = read_upload([("h.json", doc), ("D1_1.png", png_bytes()), ("D1_1.png", png_bytes((2, 2)))])
    assert_names(report.files[0].error, "h.json", f"{R0}.input_image[0]", "ambiguous",
                 "upload:D1_1.png", "upload:D1_1.png (#2)")
    same = read_upload([("h.json", doc), ("D1_1.png", png_bytes())])
    assert same.ok


def _symlink_zip() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        info = zipfile.ZipInfo("img/D1_1.png")
        info.external_attr = (0o120777 << 16)
        zf.writestr(info, "/etc/passwd")
    return buf.getvalue()


def _empty_name_zip() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(zipfile.ZipInfo("\x00_"), b"x")  # zipfile cuts the name at NUL
    return buf.getvalue()


@pytest.mark.parametrize("zdata, config, place, words", [
    (zip_bytes({"../D1_1.png": b"x"}), DEFAULT, "entry '../D1_1.png'", ["escapes"]),
    (zip_bytes({"ok/../../D1_1.png": b"x"}), DEFAULT, "entry 'ok/../../D1_1.png'", ["escapes"]),
    (zip_bytes({"/abs/D1_1.png": b"x"}), DEFAULT, "entry '/abs/D1_1.png'", ["absolute"]),
    (_symlink_zip(), DEFAULT, "entry 'img/D1_1.png'", ["symbolic link"]),
    (zip_bytes({f"{i}.png": b"x" for i in range(5)}), DEFAULT.with_(max_zip_entries=4), "", ["5 entries", "max_zip_entries (4)"]),
    (zip_bytes({"big.png": b"\0" * 5000}), DEFAULT.with_(max_upload_bytes=4000), "", ["expands to 5000 bytes"]),
    (_empty_name_zip(), DEFAULT, "entry ''", ["empty name"]),  # found by the fuzz tests
])
def test_unsafe_zips(tmp_path, zdata, config, place, words):
    doc = json.dumps(memeye_doc(image_refs=())).encode()
    report = read_upload([("h.json", doc), ("evil.zip", zdata)], config=config)
    by_name = {f.name: f for f in report.files}
    assert by_name["h.json"].ok  # the JSON beside the bad zip is still read
    assert_names(by_name["evil.zip"].error, "evil.zip", place, *words)
    # the same zip given to read_file as its image source is refused too
    p = tmp_path / "h.json"
    p.write_bytes(doc)
    zp = tmp_path / "evil.zip"
    zp.write_bytes(zdata)
    assert_names(raises_input(read_file, p, images=zp, config=config), str(zp), place, *words)


def test_locomo_errors(tmp_path):
    base = {"speaker_a": "A", "speaker_b": "B", "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"},
                          {"speaker": "B", "dia_id": "D1:2", "text": "hello", "blip_caption": "a dog",
                           "img_url": ["http://example.invalid/x.jpg"]}],
            "session_2_date_time": "9:00 am on 9 May, 2023", "session_2": [],
            "qa": [{"question": "q?", "answer": 7, "evidence": ["D1:1"], "category": 1},
                   {"question": "trap?", "adversarial_answer": "yes", "evidence": [], "category": 5}]}
    p = tmp_path / "c.json"
    p.write_text(json.dumps(base))
    [h] = read_file(p)
    assert len(h.sessions) == 1 and h.sessions[0].date == date(2023, 5, 8)
    assert h.rounds[1].images[0].caption == "a dog" and h.rounds[1].images[0].image_id == "D1:2:img1"
    assert h.rounds[1].images[0].path == "http://example.invalid/x.jpg"
    assert [(q.answer, q.refusal) for q in h.qas] == [("7", False), ("Not mentioned", True)]

    cases = [
        (lambda d: d.update(session_1_date_time="sometime in May"), "session_1_date_time", ["unreadable date/time"]),
        (lambda d: d.pop("session_1_date_time"), "session_1_date_time", ["missing required field"]),
        (lambda d: d["session_1"][1].update(dia_id="D1:1"), "session_1[1].dia_id", ["duplicate dia id", "session_1[0].dia_id"]),
        (lambda d: d["session_1"][0].update(text=None), "session_1[0].text", ["expected a string", "null"]),
        (lambda d: d.update(session_1={"x": 1}), "session_1", ["expected a list"]),
        (lambda d: d["qa"][0].pop("answer"), "qa[0].answer", ["missing required field"]),
        (lambda d: d["qa"][0].update(category="one"), "qa[0].category", ["expected a number"]),
    ]
    for mutate, place, words in cases:
        doc = json.loads(json.dumps(base))
        mutate(doc)
        p.write_text(json.dumps(doc))
        assert_names(raises_input(read_file, p), str(p), place, *words)


def test_nothing_internal_escapes_a_hostile_upload():
    report = read_upload([("a.json", b'{"multi_session_dialogues": [{"session_id": [], "dialogues": 3}]}'),
                          ("b.json", b'[{"conversation": 5}]'), ("c.json", b"null")])
    assert len(report.files) == 3 and not any(f.ok for f in report.files)
    assert not any(INTERNAL_FAULT in f.error.fault for f in report.files)


# ---------------------------------------------------------------------- with the real store
def test_store_ingest_is_idempotent_and_reports_changed_rounds(tmp_path):
    img = png_bytes()
    [h] = read_file(write_memeye(tmp_path / "in", images={"D1_1.png": img}))
    with Store(tmp_path / "m.duckdb") as store:
        first = store.ingest(h)
        assert (first.rounds_added, first.sessions_added, first.images_added, first.qas_added) == (3, 2, 1, 2)
        again = store.ingest(h)
        assert (again.rounds_added, again.sessions_added, again.images_added, again.qas_added) == (0, 0, 0, 0)
        assert again.rounds_unchanged == 3 and again.changed_rounds == ()
        assert store.image_bytes("D1:1:I1") == img

        doc = memeye_doc()
        doc["multi_session_dialogues"][1]["dialogues"][0]["user"] = "Morning run: 9.9 km"
        [h2] = read_file(write_memeye(tmp_path / "in2", doc, {"D1_1.png": img}))
        changed = store.ingest(h2)
        assert changed.changed_rounds == ("D2:1",) and changed.rounds_added == 0
        _, stored = store.get_round("D2:1")
        assert stored.dialogue[0].text == "Morning run: 5.2 km"
        assert store.summary()["rounds"] == 3
        logged = store.con.execute("SELECT round_id FROM round_changes").fetchall()
        assert logged == [("D2:1",)]


def test_zips_share_the_upload_budget_once_expanded():
    doc = json.dumps(memeye_doc(image_refs=())).encode()
    z = zip_bytes({"pad.bin": b"\0" * 3000})
    report = read_upload([("h.json", doc), ("a.zip", z), ("b.zip", z)], config=DEFAULT.with_(max_upload_bytes=5000))
    by_name = {f.name: f for f in report.files}
    assert by_name["h.json"].ok and "a.zip" not in by_name  # a zip of images only yields no FileResult
    assert_names(by_name["b.zip"].error, "b.zip", None, "expands to 3000 bytes", "left of max_upload_bytes (5000)")


def test_locomo_into_a_real_store(locomo_dir, tmp_path):
    [h] = read_file(locomo_dir / "26.json")
    with Store(tmp_path / "m.duckdb") as store:
        res = store.ingest(h)
        assert (res.sessions_added, res.rounds_added, res.qas_added) == (19, 419, 199)
        summary = store.summary()
        assert summary["rounds_with_images"] == 116 and summary["images_with_bytes"] == 0
        orders = [o for o, _ in store.rounds()]
        ids = [r.round_id for _, r in store.rounds()]
        assert orders == sorted(orders) and ids == [r.round_id for r in h.rounds]  # sessions are chronological
        assert store.ingest(h).rounds_added == 0
        refusals = [q for q in store.qas(source="26.json") if q.refusal]
        assert refusals and all(q.answer == "Not mentioned" for q in refusals)


def test_store_refuses_an_image_id_owned_by_another_round(tmp_path):
    doc_b = memeye_doc(image_refs=())
    doc_b["multi_session_dialogues"] = [{"session_id": "E1", "date": "2024-04-01", "dialogues": [
        {"round": "E1:1", "user": "again", "image_id": ["D1:1:I1"], "image_caption": ["another picture"]}]}]
    doc_a = memeye_doc(image_refs=())
    doc_a["multi_session_dialogues"][0]["dialogues"][0].update(image_id=["D1:1:I1"], image_caption=["first"])
    report = read_upload([("a.json", json.dumps(doc_a).encode()), ("b.json", json.dumps(doc_b).encode())])
    ha, hb = report.histories  # both files parse: image ids are only unique per file
    with Store(tmp_path / "m.duckdb") as store:
        store.ingest(ha)
        try:
            store.ingest(hb)
        except InputError:
            return
        _, stored = store.get_round("E1:1")
        assert stored.images, "round E1:1 lost its image"
