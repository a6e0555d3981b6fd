"""Upload errors: non-JSON content by signature, every fault of a file, warnings, empty conversations."""
from __future__ import annotations

import gzip
import io
import json
import zipfile

import pytest
from PIL import Image

from core.errors import InputError
from core.formats import read_file, read_upload
from ui.views import validation_rows

S0 = "multi_session_dialogues[0]"


def image_bytes(fmt: str) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (6, 4), (1, 2, 3)).save(buf, fmt)
    return buf.getvalue()


def zip_of(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def rounds_doc(n: int = 3, **round_fields) -> dict:
    """A valid MemEye document of one session with n text rounds (fields of every round overridden)."""
    dialogues = [{"round": f"S1:{k}", "time": f"2024-03-10T08:{k % 60:02d}:00", "user": f"note {k}",
                  "assistant": "ok", **round_fields} for k in range(1, n + 1)]
    return {"multi_session_dialogues": [{"session_id": "S1", "date": "2024-03-10", "dialogues": dialogues}]}


def locomo_doc(turns: list[dict], **extra) -> dict:
    return {"speaker_a": "A", "speaker_b": "B", "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": turns, **extra}


def encode(doc) -> bytes:
    return json.dumps(doc).encode()


def only_file(files):
    report = read_upload(files)
    assert len(report.files) == 1, report
    return report.files[0]


# ---------------------------------------------------------------------- content recognised by its signature
CONTENT = {
    "a PNG image": image_bytes("PNG"),
    "a JPEG image": image_bytes("JPEG"),
    "a GIF image": image_bytes("GIF"),
    "a WEBP image": image_bytes("WEBP"),
    "a PDF document": b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n",
    "a zip archive": zip_of({"h.json": encode(rounds_doc())}),
    "a gzip archive": gzip.compress(encode(rounds_doc())),
    "binary data": b"\x07\x00\x01" + bytes(range(256)),
}


@pytest.mark.parametrize("what", sorted(CONTENT))
def test_non_json_content_named_json_is_named_for_what_it_is(what, tmp_path):
    f = only_file([("notes.json", CONTENT[what])])
    assert f.error is not None and f.error.file == "notes.json"
    assert f.error.fault.startswith(f"this is {what}") and "not a JSON file" in f.error.fault
    assert "UTF-8" not in str(f.error)
    p = tmp_path / "notes.json"
    p.write_bytes(CONTENT[what])
    with pytest.raises(InputError) as info:
        read_file(p)
    assert info.value.file == str(p) and f"this is {what}" in info.value.fault


def test_a_zip_given_as_json_says_how_to_upload_a_zip():
    f = only_file([("bundle.json", CONTENT["a zip archive"])])
    assert "zip archive" in f.error.fault and ".zip" in f.error.fault


def test_a_zip_inside_a_zip_in_place_of_its_json_names_the_member():
    inner = zip_of({"h.json": encode(rounds_doc())})
    f = only_file([("bundle.zip", zip_of({"dialog/h.json": inner}))])
    assert f.error.file == "bundle.zip!dialog/h.json" and "this is a zip archive" in f.error.fault


def test_utf16_without_a_byte_order_mark_is_told_to_save_as_utf8():
    f = only_file([("h.json", json.dumps(rounds_doc()).encode("utf-16-le"))])
    assert "UTF-16" in f.error.fault and "UTF-8" in f.error.fault and "binary" not in f.error.fault


# ---------------------------------------------------------------------- every fault of a file
def test_every_fault_of_a_memeye_file_is_listed_with_its_place():
    doc = rounds_doc(5)
    rounds = doc["multi_session_dialogues"][0]["dialogues"]
    rounds[1]["user"] = 5
    rounds[3]["time"] = "half past nine"
    doc["human-annotated QAs"] = [{"question": "q?"}]
    f = only_file([("h.json", encode(doc))])
    e = f.error
    assert [place for place, _ in e.faults] == [f"{S0}.dialogues[1].user", f"{S0}.dialogues[3].time",
                                                 '["human-annotated QAs"][0].answer']
    assert e.count == 3 and (e.place, e.fault) == e.faults[0]
    first, *others = str(e).splitlines()
    assert first == f"h.json: {S0}.dialogues[1].user: {e.fault}"  # the first line reads as a single fault does
    assert len(others) == 2 and "half past nine" in others[0] and "missing required field" in others[1]


def test_faults_in_several_sessions_and_a_duplicate_are_all_listed():
    doc = rounds_doc(2)
    doc["multi_session_dialogues"].append({"session_id": "S2", "date": "someday", "dialogues": []})
    doc["multi_session_dialogues"].append({"session_id": "S3", "date": "2024-03-11", "dialogues": [
        {"round": "S1:1", "user": "again", "assistant": ""}]})
    e = only_file([("h.json", encode(doc))]).error
    assert [p for p, _ in e.faults] == ["multi_session_dialogues[1].date",
                                        "multi_session_dialogues[2].dialogues[0].round"]
    assert "duplicate round id" in e.faults[1][1]


def test_more_than_twenty_faults_list_twenty_and_count_the_rest():
    doc = rounds_doc(25, time="not a time")
    e = only_file([("h.json", encode(doc))]).error
    assert len(e.faults) == 20 and e.unlisted == 5 and e.count == 25
    assert e.faults[19][0] == f"{S0}.dialogues[19].time"
    assert str(e).splitlines()[-1].strip() == "... and 5 more"


def test_every_fault_of_a_locomo_file_is_listed():
    turns = [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}, {"speaker": "B", "dia_id": "D1:2"},
             {"speaker": "A", "dia_id": "D1:1", "text": "again"}]
    e = only_file([("l.json", encode(locomo_doc(turns, qa=[{"answer": "x"}])))]).error
    assert [p for p, _ in e.faults] == ["session_1[1].text", "session_1[2].dia_id", "qa[0].question"]


def test_every_missing_image_of_a_file_is_listed():
    doc = rounds_doc(3)
    for k, r in enumerate(doc["multi_session_dialogues"][0]["dialogues"][:2]):
        r |= {"image_id": [f"I{k}"], "input_image": [f"img/{k}.png"]}
    e = only_file([("h.json", encode(doc))]).error
    assert [p for p, _ in e.faults] == [f"{S0}.dialogues[0].input_image[0]", f"{S0}.dialogues[1].input_image[0]"]
    assert all("not found" in fault for _, fault in e.faults)


def test_read_file_raises_one_error_carrying_every_fault(tmp_path):
    p = tmp_path / "h.json"
    p.write_text(json.dumps(rounds_doc(3, user=7)))
    with pytest.raises(InputError) as info:
        read_file(p)
    assert info.value.file == str(p) and [pl for pl, _ in info.value.faults] == [
        f"{S0}.dialogues[{k}].user" for k in range(3)]


# ---------------------------------------------------------------------- warnings
def test_a_round_without_user_text_is_accepted_with_a_warning():
    doc = rounds_doc(4)
    rounds = doc["multi_session_dialogues"][0]["dialogues"]
    del rounds[1]["user"]
    rounds[2]["user"] = "   "
    rounds[3] |= {"user": "", "image_id": ["I1"], "image_caption": ["a chart"]}  # the picture is the message
    f = only_file([("h.json", encode(doc))])
    assert f.ok and f.rounds == 4
    assert f.warnings == (f"round {S0}.dialogues[1] has no user text", f"round {S0}.dialogues[2] has no user text")


def test_a_file_of_good_rounds_has_no_warning():
    assert only_file([("h.json", encode(rounds_doc(3)))]).warnings == ()


def test_more_than_twenty_warnings_list_twenty_and_count_the_rest():
    f = only_file([("h.json", encode(rounds_doc(23, user="")))])
    assert f.ok and len(f.warnings) == 21
    assert f.warnings[19] == f"round {S0}.dialogues[19] has no user text" and "3 more" in f.warnings[20]


def test_a_locomo_turn_without_text_is_a_warning():
    turns = [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}, {"speaker": "B", "dia_id": "D1:2", "text": ""}]
    f = only_file([("l.json", encode(locomo_doc(turns)))])
    assert f.ok and f.warnings == ("round session_1[1] has no text",)


# ---------------------------------------------------------------------- nothing to build
@pytest.mark.parametrize("doc", [
    {"multi_session_dialogues": []},
    {"multi_session_dialogues": [{"session_id": "S1", "date": "2024-03-10", "dialogues": []}]},
    locomo_doc([]),
], ids=["no sessions", "empty session", "locomo empty session"])
def test_a_file_without_rounds_is_a_fault_not_an_empty_build(doc, tmp_path):
    f = only_file([("empty.json", encode(doc))])
    assert not f.ok and f.histories == () and "no rounds: nothing to build" in f.error.fault
    p = tmp_path / "empty.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="nothing to build"):
        read_file(p)


# ---------------------------------------------------------------------- the Upload page's report
def test_validation_rows_count_the_further_faults_and_the_warnings():
    report = read_upload([("bad.json", encode(rounds_doc(3, time="soon"))), ("warn.json", encode(rounds_doc(2, user="")))])
    bad, warn = validation_rows(report)
    assert bad["status"] == "error" and bad["error"].startswith(f"{S0}.dialogues[0].time: ") and "(+2 more)" in bad["error"]
    assert warn["status"] == "ok" and warn["warnings"] == 2


def test_upload_page_lists_every_fault_and_every_warning(tmp_path):
    from test_app_pages import page

    at = page("upload", str(tmp_path / "m.duckdb"))
    at.run()
    bad = rounds_doc(3)
    bad["multi_session_dialogues"][0]["dialogues"][0]["user"] = 5
    bad["multi_session_dialogues"][0]["dialogues"][2]["time"] = "half past nine"
    warn = rounds_doc(2)
    warn["multi_session_dialogues"][0]["dialogues"][1]["user"] = ""
    at.file_uploader[0].set_value([("bad.json", encode(bad), "application/json"),
                                   ("warn.json", encode(warn), "application/json")]).run()
    assert not at.exception
    errors = "\n".join(e.value for e in at.error)
    assert f"{S0}.dialogues[0].user" in errors and f"{S0}.dialogues[2].time" in errors and "bad.json" in errors
    warnings = "\n".join(w.value for w in at.warning)
    assert "warn.json" in warnings and f"round {S0}.dialogues[1] has no user text" in warnings
